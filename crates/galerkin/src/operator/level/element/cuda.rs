//! The `element` level on the GPU: element matrices computed and stored on the device by the
//! assembly kernel, applied cell by cell, `y = Σ_c R_cᵀ K_c R_c x`, with no global matrix.
use crate::backend::cuda::kernels::launch;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::Backend;
use crate::operator::level::full::cuda::{AssemblyKernels, DeviceAssembler};
use crate::operator::level::element::packed::Storage;
use crate::operator::level::{LevelInput, LevelOperator};
use crate::{Error, Result};
use cudarc::driver::CudaSlice;

/// Stored element matrices of one operator on the device.
pub struct DeviceElementMatrices {
    asm: DeviceAssembler,
    kernels: AssemblyKernels,
    /// Per cell `elem_size²` values, row-major, or the packed upper triangle (`storage`).
    matrices: CudaSlice<f64>,
    storage: Storage,
}

impl DeviceElementMatrices {
    pub fn build(be: &CudaBackend, input: &LevelInput) -> Result<Self> {
        let asm = DeviceAssembler::new(be, input.integ, input.boundary, input.tuning)?;
        let (matrices, storage) = asm.element_matrices(be)?;
        Ok(DeviceElementMatrices { kernels: asm.kernels.clone(), asm, matrices, storage })
    }

    /// The element matrices on the host (tests compare them with the CPU's).
    pub fn to_host(&self, be: &CudaBackend) -> Result<Vec<f64>> {
        crate::operator::level::full::schemes::full_on_host(be, &self.matrices, self.storage, self.asm.variant.elem_size())
    }

    /// The kernels' `packed` flag.
    fn packed(&self) -> i32 {
        i32::from(self.storage == Storage::Packed)
    }

    fn work(&self) -> (u64, u64) {
        (self.asm.ncells as u64, (self.asm.ncells * self.asm.variant.elem_size()) as u64)
    }
}

impl LevelOperator<CudaBackend> for DeviceElementMatrices {
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("element operator apply", self.asm.ndofs, &[x, y])?;
        if !be.owns(&self.matrices) {
            return Err(Error::invalid("element matrices used with a CUDA backend other than the one that built them"));
        }
        be.zero_slice(&mut y.data)?;
        let (nc, work) = self.work();
        if work == 0 {
            return Ok(());
        }
        let packed = self.packed();
        launch!(be, &self.kernels.apply, be.grid(work); &nc, &self.asm.cell_nodes, &self.matrices, &packed, &x.data, &mut y.data)
    }
    fn node_blocks(&self, be: &CudaBackend) -> Result<CudaVector> {
        let n = self.asm.variant.ncomp;
        let mut blocks = be.zeros(self.asm.ndofs * n)?;
        let nc = self.asm.ncells as u64;
        if nc > 0 {
            let packed = self.packed();
            launch!(be, &self.kernels.node_blocks, be.grid(nc * self.asm.variant.nloc as u64);
                &nc, &self.asm.cell_nodes, &self.matrices, &packed, &mut blocks.data)?;
        }
        Ok(blocks)
    }
    fn storage_bytes(&self) -> usize {
        self.matrices.len() * 8
    }
    fn includes_boundary(&self) -> bool {
        true
    }
    fn update(&mut self, be: &CudaBackend, input: &LevelInput) -> Result<()> {
        self.asm.update_passive(be, input.integ)?;
        (self.matrices, self.storage) = self.asm.element_matrices(be)?;
        Ok(())
    }
}
