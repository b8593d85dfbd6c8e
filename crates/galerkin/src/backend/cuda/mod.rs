//! CUDA backend, the device runtime: context, memory, NVRTC JIT, launches, device vectors, vector
//! kernels, CSR SpMV (own kernel and cuSPARSE) and node-block kernels on NVIDIA GPUs, implementing
//! the same [`Backend`](super::Backend) and [`LinearOperator`](super::LinearOperator) traits as the
//! CPU backend. The toolkit (`alloc`, `upload`, `launch!`, [`kernels::Kernel`]) is `pub(crate)` so
//! the GPU finite element operators in [`crate::operator::level`] launch their own kernels.
//!
//! Nothing here needs CUDA at build time: the driver, NVRTC and cuSPARSE are loaded at run time, so
//! a machine without a GPU builds the crate and [`probe`] answers with a reason instead of a panic.
//! Kernels are CUDA C++ sources in `crates/galerkin/kernels/`, compiled by NVRTC for the device's
//! architecture on first use and cached as PTX on disk.
//!
//! Conventions: every vector and matrix belongs to the [`CudaBackend`] that created it (using it
//! with another backend is an error); all work runs in order on that backend's one stream; results
//! reach the host only through `to_host`, `dot`, `norm2` and `cg_update`, which synchronize.
pub mod bench;
pub mod compressible;
pub mod context;
pub mod csr;
pub(crate) mod dense_libs;
mod cusparse;
pub mod jit;
mod pcg;
pub(crate) mod kernels;
mod memory;
pub mod multi;
pub mod resident;
pub mod vector;

pub use context::{probe, release_unused_contexts, require_gpu, test_gpu, CudaBackend, DeviceInfo};
pub use csr::{DeviceCsr, SpmvPath};
pub use vector::CudaVector;
pub use resident::{ResidentSpace, Shared};

use crate::Error;

/// Name used in every [`Error::Backend`] this module returns.
const BACKEND: &str = "cuda";

/// A CUDA backend error with a message naming what failed.
pub(crate) fn cuda_error(message: impl Into<String>) -> Error {
    Error::Backend {
        backend: BACKEND.to_string(),
        message: message.into(),
    }
}

/// Runs `f`, turning a panic into an error: cudarc's dynamic loader panics when a library or one of
/// its symbols is missing, and a missing GPU stack must never bring the caller down.
fn guard<T>(what: &str, f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let reason = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        format!("{what} failed: {reason}")
    })
}
