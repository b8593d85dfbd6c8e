//! cuSPARSE generic SpMV as a reference path for [`DeviceCsr`](super::DeviceCsr): the vendor
//! kernel to validate and benchmark our own against. cudarc has no safe cuSPARSE layer, so the few
//! calls needed are wrapped here with RAII handles and checked statuses.
use super::context::CudaBackend;
use super::{cuda_error, guard};
use crate::Result;
use cudarc::cusparse::sys as sp;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::ffi::c_void;

/// Algorithm of the reference path: CSR_ALG2 is deterministic (same bits every run), which keeps
/// comparisons against it reproducible.
const ALG: sp::cusparseSpMVAlg_t = sp::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2;

fn check(what: &str, status: std::result::Result<sp::cusparseStatus_t, String>) -> Result<()> {
    let status = status.map_err(cuda_error)?;
    status
        .result()
        .map_err(|e| cuda_error(format!("cuSPARSE {what} failed: {:?}", e.0)))
}

/// A cuSPARSE library handle bound to a backend's stream.
pub(super) struct Handle(sp::cusparseHandle_t);

// SAFETY: the handle is only used while holding the backend's `cusparse` lock.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreate and destroyed once; failure only leaks it.
        let _ = guard("cusparseDestroy", || unsafe { sp::cusparseDestroy(self.0) });
    }
}

impl CudaBackend {
    /// Runs `f` with this backend's cuSPARSE handle, creating it on first use (so programs that
    /// never ask for cuSPARSE never load it).
    fn with_cusparse<T>(&self, f: impl FnOnce(&Handle) -> Result<T>) -> Result<T> {
        let mut slot = self.cusparse.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            // SAFETY: only tries to open the shared library.
            if !guard("loading cuSPARSE", || unsafe { sp::is_culib_present() })
                .map_err(cuda_error)?
            {
                return Err(cuda_error(
                    "cuSPARSE (libcusparse.so.13) not found on the library path",
                ));
            }
            let raw = guard("cusparseCreate", cudarc::cusparse::result::create)
                .map_err(cuda_error)?
                .map_err(|e| cuda_error(format!("cusparseCreate failed: {:?}", e.0)))?;
            let handle = Handle(raw);
            let stream = self.stream.cu_stream() as sp::cudaStream_t;
            // SAFETY: both handle and stream are live; the stream outlives the handle (field order).
            check(
                "SetStream",
                guard("cusparseSetStream", || unsafe {
                    sp::cusparseSetStream(handle.0, stream)
                }),
            )?;
            *slot = Some(handle);
        }
        match slot.as_ref() {
            Some(handle) => f(handle),
            None => Err(cuda_error(
                "internal: cuSPARSE handle missing after creation",
            )),
        }
    }
}

/// A cuSPARSE CSR descriptor over a [`DeviceCsr`](super::DeviceCsr)'s buffers, plus the work
/// buffer SpMV asked for. Must be dropped before those buffers (it is declared first there).
pub(super) struct CsrDescriptor {
    mat: sp::cusparseSpMatDescr_t,
    work: Option<CudaSlice<u8>>,
}

// SAFETY: used only under the owning DeviceCsr's lock.
unsafe impl Send for CsrDescriptor {}
unsafe impl Sync for CsrDescriptor {}

impl Drop for CsrDescriptor {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreateCsr and destroyed once.
        let _ = guard("cusparseDestroySpMat", || unsafe {
            sp::cusparseDestroySpMat(self.mat)
        });
    }
}

/// The parts of a device CSR matrix cuSPARSE needs (32-bit indices; sizes checked by the caller).
pub(super) struct CsrParts<'a> {
    pub nrows: usize,
    pub ncols: usize,
    pub row_ptr: &'a CudaSlice<u32>,
    pub col_idx: &'a CudaSlice<u32>,
    pub values: &'a CudaSlice<f64>,
}

/// A dense-vector descriptor, destroyed on drop.
struct DnVec(sp::cusparseDnVecDescr_t);

impl DnVec {
    fn new(len: usize, ptr: u64) -> Result<DnVec> {
        let mut raw: sp::cusparseDnVecDescr_t = std::ptr::null_mut();
        // SAFETY: `ptr` is a live device buffer of `len` f64 owned by the caller for this call.
        check(
            "CreateDnVec",
            guard("cusparseCreateDnVec", || unsafe {
                sp::cusparseCreateDnVec(
                    &mut raw,
                    len as i64,
                    ptr as *mut c_void,
                    sp::cudaDataType::CUDA_R_64F,
                )
            }),
        )?;
        Ok(DnVec(raw))
    }
}

impl Drop for DnVec {
    fn drop(&mut self) {
        // SAFETY: created above and destroyed once.
        let _ = guard("cusparseDestroyDnVec", || unsafe {
            sp::cusparseDestroyDnVec(self.0)
        });
    }
}

/// `y = A x` through cuSPARSE, creating the matrix descriptor and work buffer in `slot` on first use.
pub(super) fn spmv(
    backend: &CudaBackend,
    slot: &mut Option<CsrDescriptor>,
    a: &CsrParts<'_>,
    x: &CudaSlice<f64>,
    y: &mut CudaSlice<f64>,
) -> Result<()> {
    let stream = &backend.stream;
    backend.with_cusparse(|handle| {
        if slot.is_none() {
            *slot = Some(describe(a, stream)?);
        }
        let Some(desc) = slot.as_mut() else {
            return Err(cuda_error(
                "internal: cuSPARSE descriptor missing after creation",
            ));
        };
        let (xp, _x_rec) = x.device_ptr(stream);
        let (yp, _y_rec) = y.device_ptr_mut(stream);
        let (dx, dy) = (DnVec::new(a.ncols, xp)?, DnVec::new(a.nrows, yp)?);
        let (alpha, beta) = (1.0f64, 0.0f64);
        let op = sp::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
        let f64_t = sp::cudaDataType::CUDA_R_64F;
        let alpha_p = &alpha as *const f64 as *const c_void;
        let beta_p = &beta as *const f64 as *const c_void;
        if desc.work.is_none() {
            let mut size = 0usize;
            // SAFETY: all descriptors are live; `size` is a valid out-pointer.
            check(
                "SpMV_bufferSize",
                guard("cusparseSpMV_bufferSize", || unsafe {
                    sp::cusparseSpMV_bufferSize(
                        handle.0, op, alpha_p, desc.mat, dx.0, beta_p, dy.0, f64_t, ALG, &mut size,
                    )
                }),
            )?;
            desc.work = Some(backend.alloc::<u8>(size.max(1))?);
        }
        let Some(work) = desc.work.as_mut() else {
            return Err(cuda_error(
                "internal: cuSPARSE work buffer missing after allocation",
            ));
        };
        let (wp, _w_rec) = work.device_ptr_mut(stream);
        // SAFETY: descriptors point at live buffers of the sizes they declare; alpha/beta are host
        // scalars (the handle's default pointer mode); the work buffer has the size cuSPARSE asked.
        check(
            "SpMV",
            guard("cusparseSpMV", || unsafe {
                sp::cusparseSpMV(
                    handle.0,
                    op,
                    alpha_p,
                    desc.mat,
                    dx.0,
                    beta_p,
                    dy.0,
                    f64_t,
                    ALG,
                    wp as *mut c_void,
                )
            }),
        )
    })
}

fn describe(a: &CsrParts<'_>, stream: &cudarc::driver::CudaStream) -> Result<CsrDescriptor> {
    let (rp, _r) = a.row_ptr.device_ptr(stream);
    let (cp, _c) = a.col_idx.device_ptr(stream);
    let (vp, _v) = a.values.device_ptr(stream);
    let i32_t = sp::cusparseIndexType_t::CUSPARSE_INDEX_32I;
    let mut mat: sp::cusparseSpMatDescr_t = std::ptr::null_mut();
    // SAFETY: the buffers are live for as long as the descriptor (both owned by the DeviceCsr);
    // indices below 2^31 make the u32 data valid as cuSPARSE's 32-bit signed indices.
    check(
        "CreateCsr",
        guard("cusparseCreateCsr", || unsafe {
            sp::cusparseCreateCsr(
                &mut mat,
                a.nrows as i64,
                a.ncols as i64,
                a.values.len() as i64,
                rp as *mut c_void,
                cp as *mut c_void,
                vp as *mut c_void,
                i32_t,
                i32_t,
                sp::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                sp::cudaDataType::CUDA_R_64F,
            )
        }),
    )?;
    Ok(CsrDescriptor { mat, work: None })
}
