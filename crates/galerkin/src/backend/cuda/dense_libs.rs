//! cuBLAS and cuSOLVER handles bound to a backend's stream, with the few dense calls the
//! multifrontal solver needs for its large fronts (LU of a panel, triangular solves, products).
//! Both libraries are loaded at run time on first use; a missing library is an error naming it.
//! All matrices are column-major device pointers (`u64`), as the libraries take them.
use super::{cuda_error, guard};
use crate::Result;
use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as lapack;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// A device pointer, as libraries and kernels take it.
pub(crate) type DevPtr = u64;

/// cuBLAS + cuSOLVER dense handles on one stream.
pub(crate) struct DenseLibs {
    blas: blas::cublasHandle_t,
    lapack: lapack::cusolverDnHandle_t,
}

// SAFETY: the handles are used from one thread at a time (the multifrontal solver holds a lock
// around every call sequence) and only with work queued on their one stream.
unsafe impl Send for DenseLibs {}
unsafe impl Sync for DenseLibs {}

impl Drop for DenseLibs {
    fn drop(&mut self) {
        // SAFETY: created below, destroyed once; a failure only leaks the handle.
        let _ = guard("cublasDestroy", || unsafe { blas::cublasDestroy_v2(self.blas) });
        let _ = guard("cusolverDnDestroy", || unsafe { lapack::cusolverDnDestroy(self.lapack) });
    }
}

fn blas_check(what: &str, s: std::result::Result<blas::cublasStatus_t, String>) -> Result<()> {
    match s.map_err(cuda_error)? {
        blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
        other => Err(cuda_error(format!("cuBLAS {what} failed: {other:?}"))),
    }
}

fn lapack_check(what: &str, s: std::result::Result<lapack::cusolverStatus_t, String>) -> Result<()> {
    match s.map_err(cuda_error)? {
        lapack::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => Ok(()),
        other => Err(cuda_error(format!("cuSOLVER {what} failed: {other:?}"))),
    }
}

fn int(what: &str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| cuda_error(format!("{what} = {v} exceeds the 32-bit sizes of cuBLAS/cuSOLVER")))
}

impl DenseLibs {
    /// Loads cuBLAS and cuSOLVER and creates handles on `stream`.
    pub fn new(stream: &Arc<CudaStream>) -> Result<DenseLibs> {
        // SAFETY: only try to open the shared libraries.
        if !guard("loading cuBLAS", || unsafe { blas::is_culib_present() }).map_err(cuda_error)? {
            return Err(cuda_error("cuBLAS (libcublas.so.13) not found on the library path"));
        }
        if !guard("loading cuSOLVER", || unsafe { lapack::is_culib_present() }).map_err(cuda_error)? {
            return Err(cuda_error("cuSOLVER (libcusolver.so) not found on the library path"));
        }
        let mut bh: blas::cublasHandle_t = std::ptr::null_mut();
        // SAFETY: out-pointer valid for the call.
        blas_check("create", guard("cublasCreate", || unsafe { blas::cublasCreate_v2(&mut bh) }))?;
        let mut lh: lapack::cusolverDnHandle_t = std::ptr::null_mut();
        // SAFETY: as above.
        if let Err(e) = lapack_check("create", guard("cusolverDnCreate", || unsafe { lapack::cusolverDnCreate(&mut lh) })) {
            // SAFETY: bh was created above.
            let _ = guard("cublasDestroy", || unsafe { blas::cublasDestroy_v2(bh) });
            return Err(e);
        }
        let libs = DenseLibs { blas: bh, lapack: lh };
        let s = stream.cu_stream();
        // SAFETY: live handles and stream; the stream outlives the handles (the solver owns both).
        blas_check("SetStream", guard("cublasSetStream", || unsafe { blas::cublasSetStream_v2(libs.blas, s as blas::cudaStream_t) }))?;
        lapack_check("SetStream", guard("cusolverDnSetStream", || unsafe { lapack::cusolverDnSetStream(libs.lapack, s as lapack::cudaStream_t) }))?;
        Ok(libs)
    }

    /// Doubles of workspace `getrf` needs for an `rows × cols` panel with leading dimension `ld`.
    pub fn getrf_work(&self, rows: usize, cols: usize, ld: usize, a: DevPtr) -> Result<usize> {
        let (r, c, l) = (int("rows", rows)?, int("cols", cols)?, int("ld", ld)?);
        let mut lwork = 0i32;
        // SAFETY: a query only; `a` is a live device pointer of at least ld·cols doubles.
        lapack_check("getrf_bufferSize", guard("cusolverDnDgetrf_bufferSize", || unsafe {
            lapack::cusolverDnDgetrf_bufferSize(self.lapack, r, c, a as *mut f64, l, &mut lwork)
        }))?;
        Ok(lwork.max(0) as usize)
    }

    /// LU with partial pivoting of the `rows × cols` panel at `a` (`P A = L U`, `rows ≤ cols`);
    /// 1-based pivots to `ipiv`, singularity to `info` (all on the device).
    #[allow(clippy::too_many_arguments)]
    pub fn getrf(&self, rows: usize, cols: usize, a: DevPtr, ld: usize, work: DevPtr, ipiv: DevPtr, info: DevPtr) -> Result<()> {
        let (r, c, l) = (int("rows", rows)?, int("cols", cols)?, int("ld", ld)?);
        // SAFETY: the caller passes live device buffers of the sizes the call reads and writes.
        lapack_check("getrf", guard("cusolverDnDgetrf", || unsafe {
            lapack::cusolverDnDgetrf(self.lapack, r, c, a as *mut f64, l, work as *mut f64, ipiv as *mut i32, info as *mut i32)
        }))
    }

    /// `B ← α B op(A)⁻¹` (`side` right) or `α op(A)⁻¹ B` (left), `A` triangular.
    #[allow(clippy::too_many_arguments)]
    pub fn trsm(&self, right: bool, upper: bool, trans: bool, unit: bool, m: usize, n: usize, a: DevPtr, lda: usize, b: DevPtr, ldb: usize) -> Result<()> {
        if m == 0 || n == 0 {
            return Ok(());
        }
        let side = if right { blas::cublasSideMode_t::CUBLAS_SIDE_RIGHT } else { blas::cublasSideMode_t::CUBLAS_SIDE_LEFT };
        let uplo = if upper { blas::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER } else { blas::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER };
        let op = if trans { blas::cublasOperation_t::CUBLAS_OP_T } else { blas::cublasOperation_t::CUBLAS_OP_N };
        let diag = if unit { blas::cublasDiagType_t::CUBLAS_DIAG_UNIT } else { blas::cublasDiagType_t::CUBLAS_DIAG_NON_UNIT };
        let (mi, ni, la, lb) = (int("m", m)?, int("n", n)?, int("lda", lda)?, int("ldb", ldb)?);
        let one = 1.0f64;
        // SAFETY: as in `getrf`; alpha is a host scalar (default pointer mode).
        blas_check("trsm", guard("cublasDtrsm", || unsafe {
            blas::cublasDtrsm_v2(self.blas, side, uplo, op, diag, mi, ni, &one, a as *const f64, la, b as *mut f64, lb)
        }))
    }

    /// `C ← α op(A) op(B) + β C` with `op(A)` `m × k`, `op(B)` `k × n`.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm(&self, ta: bool, tb: bool, m: usize, n: usize, k: usize, alpha: f64, a: DevPtr, lda: usize, b: DevPtr, ldb: usize, beta: f64, c: DevPtr, ldc: usize) -> Result<()> {
        if m == 0 || n == 0 || k == 0 {
            return Ok(());
        }
        let op = |t: bool| if t { blas::cublasOperation_t::CUBLAS_OP_T } else { blas::cublasOperation_t::CUBLAS_OP_N };
        let (mi, ni, ki) = (int("m", m)?, int("n", n)?, int("k", k)?);
        let (la, lb, lc) = (int("lda", lda)?, int("ldb", ldb)?, int("ldc", ldc)?);
        // SAFETY: as in `getrf`.
        blas_check("gemm", guard("cublasDgemm", || unsafe {
            blas::cublasDgemm_v2(self.blas, op(ta), op(tb), mi, ni, ki, &alpha, a as *const f64, la, b as *const f64, lb, &beta, c as *mut f64, lc)
        }))
    }
}
