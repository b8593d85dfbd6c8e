//! The `none` level on the GPU: the lattice operator ([`super::grid_cuda`]) where the mesh is a
//! uniform lattice with coefficients per cell; else, on hexahedra with mass or diffusion, the
//! bake-off kernel with geometry recomputed; else `kernels/matfree.cu` with `NONE=1`, geometry and
//! `D` recomputed per point inside the kernel.
use super::grid_cuda::DeviceGrid;
use crate::backend::cuda::CudaBackend;
use crate::operator::level::partial::{cuda::DeviceMatFree, hex_cuda, Pointwise};
use crate::operator::level::{LevelInput, LevelOperator};
use crate::Result;

pub fn build(be: &CudaBackend, input: &LevelInput) -> Result<Box<dyn LevelOperator<CudaBackend>>> {
    if let Some(g) = DeviceGrid::try_build(be, input)? {
        return Ok(Box::new(g));
    }
    Ok(match hex_cuda::try_build(be, input, Pointwise::Recomputed)? {
        Some(hex) => Box::new(hex),
        None => Box::new(DeviceMatFree::build(be, input, Pointwise::Recomputed)?),
    })
}
