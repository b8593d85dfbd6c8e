//! The `full` level of a variable-degree hierarchical space integrated by degree groups: where the
//! space carries its cells' degrees ([`crate::operator::degree_groups::CellDegrees`], which problem
//! files with `[space] region_degrees` set), each group of cells is integrated with its own
//! degree's element and quadrature and summed into the one matrix of the space's pattern, so a
//! cell costs its own degree rather than the highest. On the CPU by
//! [`crate::operator::degree_groups::add_parts_cpu`], on the GPU by a [`PartsAssembler`] (scheme
//! III where the physics allows, else the default kernel; the stored element matrices are released
//! once summed).
//!
//! The functions a cell drops (above its degree) are frozen at zero in the space, so on the free
//! dofs the matrix equals the highest degree's wherever both quadratures are exact (affine cells,
//! constant coefficients); frozen rows get no entries here and become identity rows on elimination.
use super::cpu::CpuFull;
use super::parts::PartsAssembler;
use crate::backend::cuda::{CudaBackend, CudaVector, DeviceCsr};
use crate::backend::{Backend, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::operator::assemble::sparsity;
use crate::operator::degree_groups::{add_parts_cpu, degree_groups, DegreeGroup};
use crate::operator::level::{Integration, LevelInput, LevelOperator, Scatter};
use crate::{Error, Result};

/// The groups of the space of `input`, where it asks to be integrated by degree groups.
fn groups_of(input: &LevelInput) -> Result<Option<(Vec<DegreeGroup>, crate::fe::QuadratureKind)>> {
    let space = input.integ.space;
    let Some(cd) = &space.cell_degrees else { return Ok(None) };
    Ok(Some((degree_groups(space, &cd.degrees, cd.modes)?, cd.quadrature)))
}

pub(super) fn no_update() -> Error {
    Error::Unsupported("updating the coefficients of a matrix integrated by degree groups: rebuild the system".into())
}

/// Adds the Robin facet matrices (global dofs, global orientation) into `a`.
fn add_boundary(input: &LevelInput, a: &mut CsrMatrix) -> Result<()> {
    for (_, dofs, ke) in input.boundary.iter() {
        let nd = dofs.len();
        for (r, &row) in dofs.iter().enumerate() {
            let (lo, hi) = (a.row_ptr[row], a.row_ptr[row + 1]);
            for (s, &col) in dofs.iter().enumerate() {
                let k = a.col_idx[lo..hi].binary_search(&(col as u32)).map_err(|_| Error::invalid(format!("the pattern lacks the coupling ({row}, {col})")))?;
                a.values[lo + k] += ke[r * nd + s];
            }
        }
    }
    Ok(())
}

/// The grouped matrix on the CPU: a [`CpuFull`] that refuses coefficient updates.
pub struct CpuGrouped;

impl CpuGrouped {
    /// `None` where the space of `input` is not to be integrated by degree groups.
    pub fn try_build(input: &LevelInput) -> Result<Option<CpuFull>> {
        let Some((groups, kind)) = groups_of(input)? else { return Ok(None) };
        let space = input.integ.space;
        let mut a = sparsity(space)?;
        let parts: Vec<_> = groups.iter().map(|g| &g.space).collect();
        add_parts_cpu(&parts, input.integ.physics, kind, &mut a)?;
        add_boundary(input, &mut a)?;
        Ok(Some(CpuFull::grouped(a, space.ncomp)))
    }
}

/// The grouped matrix on the GPU (the few Robin facet matrices added on the host).
pub struct GpuGrouped {
    parts: PartsAssembler,
    ncomp: usize,
}

impl GpuGrouped {
    /// `None` where the space of `input` is not to be integrated by degree groups. Sums colour by
    /// colour unless the tuning asks for atomics.
    pub fn try_build(be: &CudaBackend, input: &LevelInput) -> Result<Option<GpuGrouped>> {
        let Some((groups, kind)) = groups_of(input)? else { return Ok(None) };
        let space = input.integ.space;
        let pattern = sparsity(space)?;
        let scatter = if input.tuning.scatter == Scatter::Atomic { Scatter::Atomic } else { Scatter::Colored };
        let spaces: Vec<_> = groups.iter().map(|g| &g.space).collect();
        let mut parts = PartsAssembler::new(be, &spaces, input.integ.physics, kind, &pattern, scatter)?;
        let scheme = if parts.unsupported(Integration::Tiled).is_none() { Integration::Tiled } else { Integration::Default };
        parts.assemble(be, scheme)?;
        parts.release_matrices(be)?;
        if !input.boundary.is_empty() {
            let mut host = pattern;
            host.values = be.download(&parts.matrix().values)?;
            add_boundary(input, &mut host)?;
            // Into the values' own buffer (same length): no second device copy of them alive at once.
            be.copy_into(&host.values, &mut parts.matrix_mut().values)?;
        }
        Ok(Some(GpuGrouped { parts, ncomp: space.ncomp }))
    }
}

impl LevelOperator<CudaBackend> for GpuGrouped {
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        self.parts.matrix().apply(be, x, y)
    }
    fn node_blocks(&self, be: &CudaBackend) -> Result<CudaVector> {
        be.matrix_node_blocks(self.parts.matrix(), self.ncomp)
    }
    fn matrix(&self) -> Option<&DeviceCsr> {
        Some(self.parts.matrix())
    }
    fn matrix_mut(&mut self) -> Option<&mut DeviceCsr> {
        Some(self.parts.matrix_mut())
    }
    fn storage_bytes(&self) -> usize {
        let m = self.parts.matrix();
        m.nnz() * 12 + (m.nrows() + 1) * 4
    }
    fn includes_boundary(&self) -> bool {
        true
    }
    fn update(&mut self, _be: &CudaBackend, _input: &LevelInput) -> Result<()> {
        Err(no_update())
    }
}
