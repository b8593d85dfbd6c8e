//! The CUDA twin of a QFunction evaluated on given inputs (`kernels/qf_parity.cu`): the GPU half of
//! the parity test that keeps each physics' Rust body and CUDA twin equal.
use super::Composite;
use crate::backend::cuda::jit::QF_PARITY;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};
use cudarc::driver::LaunchConfig;

/// (`apply` on `input`, `block` on the pair `[w, vi, vj, gi[3], gj[3]]`) by the CUDA twin of `qf`,
/// with passive fields `p`.
pub fn cuda_eval(be: &CudaBackend, qf: &Composite, p: &[f64], input: &[f64], pair: &[f64; 9]) -> Result<(Vec<f64>, Vec<f64>)> {
    let mf = qf.field_size();
    if input.len() != mf || p.len() != qf.npassive() {
        return Err(Error::dim("QFunction parity input", mf, input.len()));
    }
    let defines = [format!("QF={}", qf.cuda_type()), format!("DIM={}", qf.dim), format!("NCOMP={}", qf.ncomp)];
    let module = be.variant_module(&QF_PARITY, &defines)?;
    let k = Kernel::from_module(&module, "qf_parity")?;
    let pd = be.upload(if p.is_empty() { &[0.0] } else { p })?;
    let (xin, xpair) = (be.upload(input)?, be.upload(pair)?);
    let mut out_apply = be.alloc::<f64>(mf)?;
    let mut out_block = be.alloc::<f64>(qf.ncomp * qf.ncomp)?;
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    launch!(be, &k, cfg; &pd, &xin, &xpair, &mut out_apply, &mut out_block)?;
    Ok((be.download(&out_apply)?, be.download(&out_block)?))
}
