//! A CSR matrix in device memory and its SpMV: our own CSR-vector kernel (default) or cuSPARSE
//! (reference, for validation and benchmarks).
use rayon::prelude::*;
use super::context::CudaBackend;
use super::cusparse::{self, CsrDescriptor, CsrParts};
use super::kernels::{launch, SPMV_GROUPS};
use super::vector::CudaVector;
use crate::backend::LinearOperator;
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;
use std::sync::Mutex;

/// Which SpMV implementation [`DeviceCsr::apply`](LinearOperator::apply) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpmvPath {
    /// galerkin's CSR-vector kernel with a group of threads per row sized to the rows.
    Own,
    /// cuSPARSE's generic SpMV (`CUSPARSE_SPMV_CSR_ALG2`).
    CuSparse,
}

/// Largest index the device format holds: cuSPARSE's 32-bit indices are signed.
const MAX_INDEX: usize = i32::MAX as usize;

/// Threads per row for a mean row length: the smallest group (4, 8, 16, 32) whose lanes get about
/// two nonzeros each, and the whole warp for long rows. Measured on the H100 at 10⁷ rows (see
/// BENCHMARKS.md): P1 rows (15 nonzeros) run at 2.79 TB/s with 8 lanes against 2.07 with 16, and
/// P2 rows (28) at 2.02 TB/s with 16 against 1.97 with 32; fewer lanes also means fewer shuffles.
pub fn threads_per_row_for(mean_row_len: f64) -> u32 {
    SPMV_GROUPS
        .into_iter()
        .find(|&g| mean_row_len <= 2.0 * f64::from(g))
        .unwrap_or(32)
}

/// A CSR matrix on the GPU: `u32` row pointers and column indices (the matrix must have fewer than
/// 2^31 rows, columns and nonzeros) and `f64` values.
pub struct DeviceCsr {
    /// cuSPARSE's descriptor of the buffers below, created on first cuSPARSE apply; declared first
    /// so it is destroyed before them.
    cusparse: Mutex<Option<CsrDescriptor>>,
    nrows: usize,
    ncols: usize,
    pub(crate) row_ptr: CudaSlice<u32>,
    pub(crate) col_idx: CudaSlice<u32>,
    pub(crate) values: CudaSlice<f64>,
    threads_per_row: u32,
    path: SpmvPath,
    /// The compressible memory `values` lives in (`from_host_compressible`), given its view back on drop.
    comp: Option<super::compressible::CompressibleBuffer<f64>>,
}

/// Compressible values unless `GALERKIN_COMPRESSIBLE=0`.
fn compressible_wanted() -> bool {
    std::env::var("GALERKIN_COMPRESSIBLE").map_or(true, |v| v != "0")
}

impl Drop for DeviceCsr {
    fn drop(&mut self) {
        if let Some(c) = self.comp.as_mut() {
            c.uninstall(&mut self.values);
        }
    }
}

impl DeviceCsr {
    /// Uploads `a`, checking everything a kernel would otherwise read out of bounds on: sizes,
    /// monotone row pointers, column indices below `ncols`, and the 2^31 limits of the format.
    pub fn from_host(backend: &CudaBackend, a: &CsrMatrix) -> Result<DeviceCsr> {
        Self::upload(backend, a, true, false)
    }

    /// As [`Self::from_host`] with the values in compressible memory where the device has it
    /// ([`CudaBackend::alloc_compressible`]; ordinary memory otherwise or with
    /// `GALERKIN_COMPRESSIBLE=0`): for matrices an atomic scatter zeroes and assembles again and again.
    pub fn from_host_compressible(backend: &CudaBackend, a: &CsrMatrix) -> Result<DeviceCsr> {
        Self::upload(backend, a, true, compressible_wanted())
    }

    /// [`Self::pattern_from_host`] with the values in compressible memory, as
    /// [`Self::from_host_compressible`].
    pub fn pattern_from_host_compressible(backend: &CudaBackend, a: &CsrMatrix) -> Result<DeviceCsr> {
        Self::upload(backend, a, false, compressible_wanted())
    }

    /// Whether the values live in compressible memory.
    pub fn is_compressible(&self) -> bool {
        self.comp.is_some()
    }

    /// Puts `values` in place of the matrix's values (same length, or a placeholder where only the
    /// pattern is kept). Compressible values are handed back to their buffer and unmapped first:
    /// assigning over the field would free them with cudarc's call, the wrong one for that memory.
    /// A cuSPARSE descriptor of the old values is dropped with them.
    pub(crate) fn replace_values(&mut self, values: CudaSlice<f64>) {
        *self.cusparse.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        if let Some(mut c) = self.comp.take() {
            c.uninstall(&mut self.values);
        }
        self.values = values;
    }

    /// As [`Self::from_host`] for `a`'s pattern only: the values are zeroed on the device instead
    /// of uploaded (an assembly overwrites them; at 10^7 unknowns they are a gigabyte of zeros).
    pub fn pattern_from_host(backend: &CudaBackend, a: &CsrMatrix) -> Result<DeviceCsr> {
        Self::upload(backend, a, false, false)
    }

    fn upload(backend: &CudaBackend, a: &CsrMatrix, with_values: bool, compressible: bool) -> Result<DeviceCsr> {
        let nnz = a.values.len();
        if a.row_ptr.len() != a.nrows + 1 {
            return Err(Error::dim(
                "device CSR row_ptr length",
                a.nrows + 1,
                a.row_ptr.len(),
            ));
        }
        if a.col_idx.len() != nnz || a.row_ptr[a.nrows] != nnz {
            return Err(Error::dim(
                "device CSR nonzeros (col_idx, row_ptr[nrows])",
                nnz,
                a.col_idx.len().max(a.row_ptr[a.nrows]),
            ));
        }
        for (what, n) in [("rows", a.nrows), ("columns", a.ncols), ("nonzeros", nnz)] {
            if n > MAX_INDEX {
                return Err(Error::Unsupported(format!(
                    "device CSR with {n} {what}: the GPU format uses 32-bit indices (at most {MAX_INDEX})"
                )));
            }
        }
        if let Some(r) = (0..a.nrows).find(|&r| a.row_ptr[r] > a.row_ptr[r + 1]) {
            return Err(Error::invalid(format!("CSR row_ptr decreases at row {r}")));
        }
        if let Some(k) = a.col_idx.par_iter().position_first(|&c| c as usize >= a.ncols) {
            return Err(Error::invalid(format!(
                "CSR column index {} at nonzero {k} is out of range for {} columns",
                a.col_idx[k], a.ncols
            )));
        }
        // Fits: every entry is at most nnz ≤ 2^31 − 1.
        let row_ptr: Vec<u32> = a.row_ptr.par_iter().map(|&p| p as u32).collect();
        let mean = if a.nrows == 0 {
            0.0
        } else {
            nnz as f64 / a.nrows as f64
        };
        let (row_ptr, col_idx) = (backend.upload(&row_ptr)?, backend.upload(&a.col_idx)?);
        let mut comp = match compressible {
            true => backend.alloc_compressible::<f64>(nnz)?,
            false => None,
        };
        // Compressible: the buffer's view in place of a one-element placeholder, which the buffer
        // keeps until the matrix is dropped; a failed fill hands the view back.
        let mut values = match comp.as_mut() {
            Some(c) => {
                let mut v = backend.alloc::<f64>(1)?;
                c.install(&mut v);
                v
            }
            None => backend.alloc::<f64>(nnz)?,
        };
        let filled = if with_values { backend.copy_into(&a.values, &mut values) } else { backend.zero_slice(&mut values) };
        if let Err(e) = filled {
            if let Some(c) = comp.as_mut() {
                c.uninstall(&mut values);
            }
            return Err(e);
        }
        Ok(DeviceCsr {
            cusparse: Mutex::new(None),
            nrows: a.nrows,
            ncols: a.ncols,
            row_ptr,
            col_idx,
            values,
            threads_per_row: threads_per_row_for(mean),
            path: SpmvPath::Own,
            comp,
        })
    }

    /// A matrix whose buffers were filled on the device (a kernel wrote the pattern and values,
    /// as DG advection's assembly does); the caller guarantees a valid CSR of `nrows × ncols`.
    pub(crate) fn from_device_parts(nrows: usize, ncols: usize, row_ptr: CudaSlice<u32>, col_idx: CudaSlice<u32>, values: CudaSlice<f64>) -> Result<DeviceCsr> {
        if row_ptr.len() != nrows + 1 || col_idx.len() != values.len() || [nrows, ncols, values.len()].iter().any(|&n| n > MAX_INDEX) {
            return Err(Error::dim("device CSR parts (row_ptr length)", nrows + 1, row_ptr.len()));
        }
        let mean = if nrows == 0 { 0.0 } else { values.len() as f64 / nrows as f64 };
        Ok(DeviceCsr { cusparse: Mutex::new(None), nrows, ncols, row_ptr, col_idx, values, threads_per_row: threads_per_row_for(mean), path: SpmvPath::Own, comp: None })
    }

    /// The whole matrix on the host.
    pub fn to_host(&self, backend: &CudaBackend) -> Result<CsrMatrix> {
        let row_ptr = backend.download(&self.row_ptr)?.into_iter().map(|p| p as usize).collect();
        Ok(CsrMatrix {
            nrows: self.nrows,
            ncols: self.ncols,
            row_ptr,
            col_idx: backend.download(&self.col_idx)?,
            values: backend.download(&self.values)?,
        })
    }

    /// The values on the host, in the order of the pattern it was uploaded from.
    pub fn values_to_host(&self, backend: &CudaBackend) -> Result<Vec<f64>> {
        backend.download(&self.values)
    }

    /// Selects the SpMV implementation used by `apply`.
    pub fn with_path(mut self, path: SpmvPath) -> DeviceCsr {
        self.path = path;
        self
    }

    pub fn path(&self) -> SpmvPath {
        self.path
    }

    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Threads cooperating on one row in the own kernel (chosen from the mean row length).
    pub fn threads_per_row(&self) -> u32 {
        self.threads_per_row
    }

    /// Overrides the group size (4, 8, 16 or 32), for tuning and for testing every variant.
    pub fn set_threads_per_row(&mut self, threads: u32) -> Result<()> {
        if !SPMV_GROUPS.contains(&threads) {
            return Err(Error::invalid(format!(
                "threads per row must be one of {SPMV_GROUPS:?}, got {threads}"
            )));
        }
        self.threads_per_row = threads;
        Ok(())
    }

    /// `y = A x` with an explicit implementation, whatever `path()` is (benchmarks compare both).
    pub fn spmv_with(
        &self,
        backend: &CudaBackend,
        path: SpmvPath,
        x: &CudaVector,
        y: &mut CudaVector,
    ) -> Result<()> {
        backend.check("DeviceCsr apply (x)", self.ncols, &[x])?;
        backend.check("DeviceCsr apply (y)", self.nrows, &[y])?;
        if !backend.owns(&self.values) {
            return Err(Error::invalid(
                "DeviceCsr used with a CUDA backend other than the one that uploaded it",
            ));
        }
        if self.nrows == 0 {
            return Ok(());
        }
        match path {
            SpmvPath::Own => self.spmv_own(backend, x, y),
            // cuSPARSE gains nothing on an empty pattern and zero-length buffers are an edge case
            // best kept away from it.
            SpmvPath::CuSparse if self.nnz() == 0 => crate::backend::Backend::fill(backend, y, 0.0),
            SpmvPath::CuSparse => {
                let parts = CsrParts {
                    nrows: self.nrows,
                    ncols: self.ncols,
                    row_ptr: &self.row_ptr,
                    col_idx: &self.col_idx,
                    values: &self.values,
                };
                let mut slot = self.cusparse.lock().unwrap_or_else(|p| p.into_inner());
                cusparse::spmv(backend, &mut slot, &parts, &x.data, &mut y.data)
            }
        }
    }

    fn spmv_own(&self, backend: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        let variant = SPMV_GROUPS
            .iter()
            .position(|&g| g == self.threads_per_row)
            .unwrap_or(SPMV_GROUPS.len() - 1);
        let cfg = backend.grid(self.nrows as u64 * u64::from(self.threads_per_row));
        let nrows = self.nrows as u32;
        launch!(backend, &backend.kernels.spmv[variant], cfg;
            &nrows, &self.row_ptr, &self.col_idx, &self.values, &x.data, &mut y.data)
    }
}

impl LinearOperator<CudaBackend> for DeviceCsr {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn apply(&self, backend: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        self.spmv_with(backend, self.path, x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_size_covers_the_mean_row_in_one_pass() {
        assert_eq!(threads_per_row_for(0.0), 4);
        assert_eq!(threads_per_row_for(7.0), 4); // 3D 7-point
        assert_eq!(threads_per_row_for(8.5), 8);
        assert_eq!(threads_per_row_for(15.0), 8); // P1 tetrahedra
        assert_eq!(threads_per_row_for(16.5), 16);
        assert_eq!(threads_per_row_for(27.0), 16); // 27-point / Q1 hexahedra, P2 tetrahedra
        assert_eq!(threads_per_row_for(81.0), 32); // Q1 elasticity
        assert_eq!(threads_per_row_for(250.0), 32); // 3D Q2 elasticity
    }
}
