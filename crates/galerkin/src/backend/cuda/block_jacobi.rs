//! Point-block Jacobi on the GPU: applies precomputed inverses of the b×b diagonal blocks (one per
//! mesh node, b ≤ 3 unknowns per node, e.g. elasticity) in one kernel. Inverting on the host keeps
//! the pivoting decisions (and singular-block errors) in one place, the CPU preconditioner.
use super::context::CudaBackend;
use super::kernels::launch;
use super::vector::CudaVector;
use crate::backend::LinearOperator;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;

/// `y = blockdiag(D₁⁻¹, …, D_m⁻¹) x` with node-interleaved unknowns (node k owns entries
/// `k·b .. k·b + b`).
pub struct DeviceBlockJacobi {
    n: usize,
    block_size: usize,
    blocks: CudaSlice<f64>,
}

impl DeviceBlockJacobi {
    /// `inverted_blocks` holds m blocks of b×b entries, row-major, block after block:
    /// `(D_k⁻¹)_{ij} = inverted_blocks[k·b² + i·b + j]`. The operator has size m·b.
    pub fn new(
        backend: &CudaBackend,
        block_size: usize,
        inverted_blocks: &[f64],
    ) -> Result<DeviceBlockJacobi> {
        if !(1..=3).contains(&block_size) {
            return Err(Error::invalid(format!(
                "block Jacobi block size must be 1, 2 or 3, got {block_size}"
            )));
        }
        let b2 = block_size * block_size;
        if !inverted_blocks.len().is_multiple_of(b2) {
            return Err(Error::dim(
                format!("block Jacobi inverse blocks (a multiple of {block_size}×{block_size})"),
                inverted_blocks.len().next_multiple_of(b2),
                inverted_blocks.len(),
            ));
        }
        if let Some(i) = inverted_blocks.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(format!(
                "block Jacobi inverse block {} has a non-finite entry (singular diagonal block?)",
                i / b2
            )));
        }
        Ok(DeviceBlockJacobi {
            n: inverted_blocks.len() / block_size,
            block_size,
            blocks: backend.upload(inverted_blocks)?,
        })
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }
}

impl LinearOperator<CudaBackend> for DeviceBlockJacobi {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        backend.check("block Jacobi apply", self.n, &[x, y])?;
        if !backend.owns(&self.blocks) {
            return Err(Error::invalid(
                "DeviceBlockJacobi used with a CUDA backend other than the one that built it",
            ));
        }
        if self.n == 0 {
            return Ok(());
        }
        let n = self.n as u64;
        launch!(backend, &backend.kernels.block_jacobi[self.block_size - 1], backend.grid(n);
            &n, &self.blocks, &x.data, &mut y.data)
    }
}
