//! The `none` level on the GPU: `kernels/matfree.cu` with `NONE=1`, geometry and `D` recomputed
//! per point inside the kernel.
use crate::backend::cuda::CudaBackend;
use crate::operator::level::partial::{cuda::DeviceMatFree, Pointwise};
use crate::operator::level::LevelInput;
use crate::Result;

pub fn build(be: &CudaBackend, input: &LevelInput) -> Result<DeviceMatFree> {
    DeviceMatFree::build(be, input, Pointwise::Recomputed)
}
