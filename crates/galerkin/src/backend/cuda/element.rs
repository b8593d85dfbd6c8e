//! The `element` assembly level on the GPU: element matrices stored on the device (computed there
//! by [`DeviceAssembler::element_matrices`]) and applied cell by cell, `y = Σ_c R_cᵀ K_c R_c x`,
//! with no global matrix. Dirichlet conditions wrap it in the generic
//! [`Constrained`](crate::operator::Constrained) operator, as on the CPU.
use super::assembly::{AssemblyKernels, DeviceAssembler};
use super::context::CudaBackend;
use super::kernels::launch;
use super::vector::CudaVector;
use crate::backend::LinearOperator;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;

/// Stored element matrices of one operator on the device.
pub struct DeviceElementMatrices {
    kernels: AssemblyKernels,
    ncells: usize,
    ndofs: usize,
    elem_size: usize,
    cell_nodes: CudaSlice<u32>,
    /// `elem_size²` values per cell, row-major.
    matrices: CudaSlice<f64>,
}

impl DeviceElementMatrices {
    pub(super) fn new(be: &CudaBackend, asm: &DeviceAssembler, matrices: CudaSlice<f64>) -> Result<Self> {
        let mut cell_nodes = be.alloc::<u32>(asm.cell_nodes.len())?;
        be.stream
            .memcpy_dtod(&asm.cell_nodes, &mut cell_nodes)
            .map_err(|e| super::cuda_error(format!("copying the dof map on the device failed: {e}")))?;
        Ok(DeviceElementMatrices {
            kernels: asm.kernels.clone(),
            ncells: asm.ncells,
            ndofs: asm.ndofs,
            elem_size: asm.variant.elem_size(),
            cell_nodes,
            matrices,
        })
    }

    /// Stored entries (`cells × elem_size²`).
    pub fn storage_entries(&self) -> usize {
        self.matrices.len()
    }

    /// The element matrices on the host (tests compare them with the CPU's).
    pub fn to_host(&self, be: &CudaBackend) -> Result<Vec<f64>> {
        be.download(&self.matrices)
    }

    /// Diagonal of the global operator (sum of element diagonals), on the host.
    pub fn diagonal(&self, be: &CudaBackend) -> Result<Vec<f64>> {
        let mut d = be.alloc::<f64>(self.ndofs)?;
        be.zero_slice(&mut d)?;
        let work = (self.ncells * self.elem_size) as u64;
        let nc = self.ncells as u64;
        if work > 0 {
            launch!(be, &self.kernels.diagonal, be.grid(work); &nc, &self.cell_nodes, &self.matrices, &mut d)?;
        }
        be.download(&d)
    }
}

impl LinearOperator<CudaBackend> for DeviceElementMatrices {
    fn nrows(&self) -> usize {
        self.ndofs
    }
    fn ncols(&self) -> usize {
        self.ndofs
    }
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("element operator apply", self.ndofs, &[x, y])?;
        if !be.owns(&self.matrices) {
            return Err(Error::invalid("element matrices used with a CUDA backend other than the one that built them"));
        }
        be.zero_slice(&mut y.data)?;
        let work = (self.ncells * self.elem_size) as u64;
        let nc = self.ncells as u64;
        if work == 0 {
            return Ok(());
        }
        launch!(be, &self.kernels.apply, be.grid(work); &nc, &self.cell_nodes, &self.matrices, &x.data, &mut y.data)
    }
}
