//! DG on the GPU: the block-tridiagonal matrix in device memory (entry-major), its assembly by one
//! thread per element, block Jacobi, and block cyclic reduction behind `Factorization`. Kernels are
//! `kernels/dg.cu`, one template per operation and block size, compiled once by NVRTC.
mod assemble;
mod cyclic;
mod matrix;
mod solve;

pub use assemble::DeviceDg;
pub use cyclic::DeviceCyclicReduction;
pub use matrix::{DeviceBlockJacobi, DeviceBlockTridiag};
pub use solve::{assemble_and_solve, refine_solution, RefineScratch};

use crate::backend::cuda::jit;
use crate::backend::cuda::kernels::Kernel;
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};

macro_rules! per_block {
    ($op:literal) => {
        [concat!($op, "_b2"), concat!($op, "_b3"), concat!($op, "_b4"), concat!($op, "_b5"), concat!($op, "_b6"), concat!($op, "_b7")]
    };
}

/// The entry points of `dg.cu` for one block size.
#[derive(Clone)]
pub(crate) struct DgKernels {
    pub b: usize,
    pub assemble: Kernel,
    pub residual: Kernel,
    pub apply: Kernel,
    pub invert: Kernel,
    pub reduce: Kernel,
    pub forward: Kernel,
    pub back: Kernel,
    pub block_diag: Kernel,
}

impl DgKernels {
    /// Loads (once per process: the module is cached) the kernels for blocks of `b`.
    pub fn get(be: &CudaBackend, b: usize) -> Result<DgKernels> {
        if !(2..=7).contains(&b) {
            return Err(Error::invalid(format!("DG block size {b} is not supported on the GPU (2 to 7)")));
        }
        let m = be.variant_module(&jit::DG, &[])?;
        let i = b - 2;
        let get = |names: [&'static str; 6]| Kernel::from_module(&m, names[i]);
        Ok(DgKernels {
            b,
            assemble: get(per_block!("dg_assemble"))?,
            residual: get(per_block!("dg_residual"))?,
            apply: get(per_block!("dg_apply"))?,
            invert: get(per_block!("dg_cr_invert"))?,
            reduce: get(per_block!("dg_cr_reduce"))?,
            forward: get(per_block!("dg_cr_forward"))?,
            back: get(per_block!("dg_cr_back"))?,
            block_diag: get(per_block!("dg_block_diag"))?,
        })
    }
}

/// Every entry point name of `dg.cu` (the NVRTC test checks the PTX has them all).
pub fn entry_points() -> Vec<&'static str> {
    [
        per_block!("dg_assemble"),
        per_block!("dg_residual"),
        per_block!("dg_apply"),
        per_block!("dg_cr_invert"),
        per_block!("dg_cr_reduce"),
        per_block!("dg_cr_forward"),
        per_block!("dg_cr_back"),
        per_block!("dg_block_diag"),
    ]
    .into_iter()
    .flatten()
    .collect()
}
