//! [`CudaVector`] and the [`Backend`] implementation: every operation is one kernel launch (two for
//! reductions) over whole vectors, so a Krylov iteration streams each vector the minimum number of
//! times; only reductions return a value to the host (8 bytes).
use super::context::CudaBackend;
use super::cuda_error;
use super::jit::BLOCK_SIZE;
use super::csr::DeviceCsr;
use super::kernels::launch;
use crate::backend::{Backend, LinearOperator, PcgWork};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// A vector of f64 in device memory, owned by the [`CudaBackend`] that created it.
pub struct CudaVector {
    pub(crate) data: CudaSlice<f64>,
}

impl CudaVector {
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// The device buffer, for custom kernels or libraries working on the same stream.
    pub fn as_slice(&self) -> &CudaSlice<f64> {
        &self.data
    }
}

impl CudaBackend {
    /// Checks that every vector belongs to this backend and has length `n`.
    pub(crate) fn check(&self, op: &str, n: usize, vectors: &[&CudaVector]) -> Result<()> {
        for v in vectors {
            if !self.owns(&v.data) {
                return Err(Error::invalid(format!(
                    "{op}: a vector of another CUDA backend was passed; vectors are tied to their backend"
                )));
            }
            if v.len() != n {
                return Err(Error::dim(format!("cuda {op}"), n, v.len()));
            }
        }
        Ok(())
    }

    /// Second stage of a reduction whose first stage wrote one partial per block (`blocks` of them)
    /// to the scratch buffer; returns the sum on the host.
    fn finish_reduction(&self, scratch: &mut CudaSlice<f64>, blocks: u32) -> Result<f64> {
        let slot = self.resident_blocks as usize;
        let (partials, mut result) = scratch.split_at_mut(slot);
        let partials = partials.as_view();
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (BLOCK_SIZE, 1, 1),
            shared_mem_bytes: 0,
        };
        launch!(self, &self.kernels.sum_partials, cfg; &partials, &blocks, &mut result)?;
        let mut host = [0.0f64; 1];
        self.stream
            .memcpy_dtoh(&result.as_view(), &mut host)
            .map_err(|e| cuda_error(format!("reading a reduction result failed: {e}")))?;
        self.synchronize()?;
        Ok(host[0])
    }

    /// Launch shape for a kernel over an n-vector processed in double2 pairs.
    fn vector_grid(&self, n: usize) -> LaunchConfig {
        self.grid((n as u64).div_ceil(2))
    }

    /// Runs `run` with the grid and length of an n-vector; an empty vector launches nothing
    /// (a zero-block grid is a launch error).
    fn elementwise(
        &self,
        n: usize,
        run: impl FnOnce(LaunchConfig, &u64) -> Result<()>,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        run(self.vector_grid(n), &(n as u64))
    }
}

/// The kernel variant of a node-block operation: blocks of 1, 2 or 3 unknowns on the GPU.
fn block_variant(b: usize) -> Result<usize> {
    if (1..=3).contains(&b) {
        Ok(b - 1)
    } else {
        Err(Error::Unsupported(format!("node blocks of {b} unknowns on the GPU (1 to 3)")))
    }
}

impl Backend for CudaBackend {
    type Vector = CudaVector;
    type Matrix = DeviceCsr;

    fn upload_matrix(&self, a: &CsrMatrix) -> Result<DeviceCsr> {
        DeviceCsr::from_host(self, a)
    }
    fn matrix_to_host(&self, a: &DeviceCsr) -> Result<CsrMatrix> {
        a.to_host(self)
    }
    fn matrix_nnz(&self, a: &DeviceCsr) -> usize {
        a.nnz()
    }
    fn matrix_diagonal(&self, a: &DeviceCsr) -> Result<CudaVector> {
        let n = a.nrows();
        let mut d = self.zeros(n)?;
        if n > 0 {
            let nr = n as u64;
            launch!(self, &self.kernels.csr_diagonal, self.grid(nr); &nr, &a.row_ptr, &a.col_idx, &a.values, &mut d.data)?;
        }
        Ok(d)
    }
    fn matrix_node_blocks(&self, a: &DeviceCsr, b: usize) -> Result<CudaVector> {
        let k = &self.kernels.csr_node_blocks[block_variant(b)?];
        let n = a.nrows();
        if n % b != 0 {
            return Err(Error::invalid(format!("{n} rows are not whole blocks of {b}")));
        }
        let mut blocks = self.zeros(n * b)?;
        if n > 0 {
            let nr = n as u64;
            launch!(self, k, self.grid(nr); &nr, &a.row_ptr, &a.col_idx, &a.values, &mut blocks.data)?;
        }
        Ok(blocks)
    }
    fn eliminate(&self, a: &mut DeviceCsr, rhs: &mut CudaVector, free_mask: &CudaVector, lift: &CudaVector) -> Result<()> {
        let n = a.nrows();
        self.check("Dirichlet elimination", n, &[rhs, free_mask, lift])?;
        if n == 0 {
            return Ok(());
        }
        let nr = n as u64;
        launch!(self, &self.kernels.csr_eliminate, self.grid(nr);
            &nr, &a.row_ptr, &a.col_idx, &mut a.values, &free_mask.data, &lift.data, &mut rhs.data)
    }
    fn invert_blocks(&self, b: usize, blocks: &mut CudaVector) -> Result<Option<usize>> {
        let k = &self.kernels.block_invert[block_variant(b)?];
        if blocks.len() % (b * b) != 0 {
            return Err(Error::invalid(format!("{} block entries are not whole {b}×{b} blocks", blocks.len())));
        }
        let nb = (blocks.len() / (b * b)) as u64;
        if nb == 0 {
            return Ok(None);
        }
        let mut bad = self.upload(&[u32::MAX])?;
        launch!(self, k, self.grid(nb); &nb, &mut blocks.data, &mut bad)?;
        let bad = self.download(&bad)?[0];
        Ok((bad != u32::MAX).then_some(bad as usize))
    }
    fn apply_blocks(&self, b: usize, blocks: &CudaVector, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        let k = &self.kernels.block_jacobi[block_variant(b)?];
        let n = blocks.len() / b;
        self.check("apply_blocks", n, &[x, y])?;
        if n == 0 {
            return Ok(());
        }
        let nn = n as u64;
        launch!(self, k, self.grid(nn); &nn, &blocks.data, &x.data, &mut y.data)
    }
    fn blocks_diagonal(&self, b: usize, blocks: &CudaVector) -> Result<CudaVector> {
        let k = &self.kernels.block_diagonal[block_variant(b)?];
        let n = blocks.len() / b;
        let mut d = self.zeros(n)?;
        if n > 0 {
            let nn = n as u64;
            launch!(self, k, self.grid(nn); &nn, &blocks.data, &mut d.data)?;
        }
        Ok(d)
    }

    fn name(&self) -> &str {
        "cuda"
    }

    fn zeros(&self, n: usize) -> Result<CudaVector> {
        let mut v = CudaVector {
            data: self.alloc(n)?,
        };
        self.fill(&mut v, 0.0)?;
        Ok(v)
    }

    fn from_host(&self, x: &[f64]) -> Result<CudaVector> {
        Ok(CudaVector {
            data: self.upload(x)?,
        })
    }

    fn to_host(&self, x: &CudaVector) -> Result<Vec<f64>> {
        self.check("to_host", x.len(), &[x])?;
        self.download(&x.data)
    }

    fn len(&self, x: &CudaVector) -> usize {
        x.len()
    }

    fn copy(&self, src: &CudaVector, dst: &mut CudaVector) -> Result<()> {
        self.check("copy", dst.len(), &[src, dst])?;
        if src.is_empty() {
            return Ok(());
        }
        self.stream
            .memcpy_dtod(&src.data, &mut dst.data)
            .map_err(|e| {
                cuda_error(format!(
                    "device-to-device copy of {} bytes failed: {e}",
                    src.data.num_bytes()
                ))
            })
    }

    fn fill(&self, x: &mut CudaVector, value: f64) -> Result<()> {
        self.check("fill", x.len(), &[x])?;
        let k = &self.kernels.fill;
        self.elementwise(
            x.len(),
            |cfg, n| launch!(self, k, cfg; &mut x.data, &value, n),
        )
    }

    fn dot(&self, x: &CudaVector, y: &CudaVector) -> Result<f64> {
        self.check("dot", x.len(), &[x, y])?;
        if x.is_empty() {
            return Ok(0.0);
        }
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let cfg = self.vector_grid(x.len());
        let n = x.len() as u64;
        launch!(self, &self.kernels.dot_partials, cfg; &x.data, &y.data, &n, &mut *scratch)?;
        self.finish_reduction(&mut scratch, cfg.grid_dim.0)
    }

    fn dots(&self, x: &CudaVector, vs: &[CudaVector]) -> Result<Vec<f64>> {
        self.dots_shaped(x, vs, self.multi_shape)
    }

    fn add_combination(&self, c: &[f64], vs: &[CudaVector], y: &mut CudaVector) -> Result<()> {
        self.add_combination_shaped(c, vs, y, self.multi_shape)
    }

    fn axpy(&self, a: f64, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        self.check("axpy", y.len(), &[x, y])?;
        let k = &self.kernels.axpy;
        self.elementwise(
            y.len(),
            |cfg, n| launch!(self, k, cfg; &a, &x.data, &mut y.data, n),
        )
    }

    fn axpby(&self, a: f64, x: &CudaVector, b: f64, y: &mut CudaVector) -> Result<()> {
        self.check("axpby", y.len(), &[x, y])?;
        let k = &self.kernels.axpby;
        self.elementwise(
            y.len(),
            |cfg, n| launch!(self, k, cfg; &a, &x.data, &b, &mut y.data, n),
        )
    }

    fn scale(&self, a: f64, x: &mut CudaVector) -> Result<()> {
        self.check("scale", x.len(), &[x])?;
        let k = &self.kernels.scale;
        self.elementwise(x.len(), |cfg, n| launch!(self, k, cfg; &mut x.data, &a, n))
    }

    fn pointwise_mult(&self, d: &CudaVector, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        self.check("pointwise_mult", y.len(), &[d, x, y])?;
        let k = &self.kernels.pointwise_mult;
        self.elementwise(
            y.len(),
            |cfg, n| launch!(self, k, cfg; &d.data, &x.data, &mut y.data, n),
        )
    }

    fn has_resident_pcg(&self) -> bool {
        true
    }
    fn pcg_iterations(&self, a: &dyn LinearOperator<Self>, x: &mut CudaVector, w: &mut PcgWork<'_, Self>, k: usize) -> Option<Result<()>> {
        Some(self.pcg_batch(a, x, w, k))
    }

    fn cg_update(
        &self,
        alpha: f64,
        p: &CudaVector,
        q: &CudaVector,
        x: &mut CudaVector,
        r: &mut CudaVector,
    ) -> Result<f64> {
        self.check("cg_update", r.len(), &[p, q, x, r])?;
        if r.is_empty() {
            return Ok(0.0);
        }
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let cfg = self.vector_grid(r.len());
        let n = r.len() as u64;
        launch!(self, &self.kernels.cg_update_partials, cfg;
            &alpha, &p.data, &q.data, &mut x.data, &mut r.data, &n, &mut *scratch)?;
        self.finish_reduction(&mut scratch, cfg.grid_dim.0)
    }
}
