//! The `full` level on the CPU: element matrices summed into the CSR values in parallel, one color
//! of cell blocks at a time (blocks of one color share no dof, so no locks).
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::operator::assemble::{pattern_compact, CompactSlots, Rank};
use crate::operator::coloring::{Coloring, SharedMut};
use crate::operator::integrate::ElementIntegrator;
use crate::operator::local_matrix::{LocalMatrices, LocalScratch};
use crate::operator::level::{LevelInput, LevelOperator};
use crate::operator::restriction::ElementRestriction;
use crate::{Error, Result};
use rayon::prelude::*;

/// The assembled CSR matrix.
pub struct CpuFull {
    pub a: CsrMatrix,
    ncomp: usize,
    /// Integrated by degree groups ([`super::grouped`]): its coefficients cannot be updated in place.
    grouped: bool,
}

impl CpuFull {
    pub fn build(input: &LevelInput) -> Result<CpuFull> {
        let (mut a, slots) = pattern_compact(input.integ.space)?;
        assemble_matrix(input.integ, input.coloring, &mut a, Some(&slots))?;
        Ok(CpuFull { a, ncomp: input.integ.space.ncomp, grouped: false })
    }

    /// A matrix integrated by degree groups (its own element per degree), kept as it was built.
    pub(super) fn grouped(a: CsrMatrix, ncomp: usize) -> CpuFull {
        CpuFull { a, ncomp, grouped: true }
    }
}

impl LevelOperator<Cpu> for CpuFull {
    fn apply(&self, be: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        self.a.apply(be, x, y)
    }
    fn node_blocks(&self, _be: &Cpu) -> Result<Vec<f64>> {
        Ok(self.a.node_blocks(self.ncomp))
    }
    fn matrix(&self) -> Option<&CsrMatrix> {
        Some(&self.a)
    }
    fn matrix_mut(&mut self) -> Option<&mut CsrMatrix> {
        Some(&mut self.a)
    }
    fn storage_bytes(&self) -> usize {
        self.a.nnz() * 12 + (self.a.nrows + 1) * 8
    }
    fn includes_boundary(&self) -> bool {
        true
    }
    fn update(&mut self, _be: &Cpu, input: &LevelInput) -> Result<()> {
        if self.grouped {
            return Err(super::grouped::no_update());
        }
        self.a.values.fill(0.0);
        assemble_matrix(input.integ, input.coloring, &mut self.a, None)
    }
}

/// Sum every cell's element matrix into `a` (which must have `space`'s sparsity): the volume terms
/// by [`LocalMatrices`] (reference tensors, sum factorization or a quadrature loop), placed through
/// the slots found with the pattern ([`pattern_compact`]; without them, found again), one color of
/// cell blocks at a time; the few Robin facet matrices afterwards.
pub fn assemble_matrix(integ: &ElementIntegrator, coloring: &Coloring, a: &mut CsrMatrix, slots: Option<&CompactSlots>) -> Result<()> {
    let space = integ.space;
    let npc = space.dofmap.nodes_per_cell;
    let found;
    let slots = match slots {
        Some(s) => s,
        None => {
            found = pattern_compact(space)?.1;
            &found
        }
    };
    if slots.len() != space.dofmap.cell_nodes.len() * npc {
        return Err(Error::invalid("slots do not match the space"));
    }
    match slots {
        CompactSlots::Narrow(s) => sum_elements(integ, coloring, a, &s.rank)?,
        CompactSlots::Wide(s) => sum_elements(integ, coloring, a, &s.rank)?,
    }
    add_robin(integ, a)
}

/// The colored element loop of [`assemble_matrix`] with ranks of type `R`.
fn sum_elements<R: Rank>(integ: &ElementIntegrator, coloring: &Coloring, a: &mut CsrMatrix, ranks_all: &[R]) -> Result<()> {
    let space = integ.space;
    let (n, npc) = (space.ncomp, space.dofmap.nodes_per_cell);
    let local = LocalMatrices::new(integ);
    let vp = SharedMut(a.values.as_mut_ptr());
    let (row_ptr, dm) = (&a.row_ptr, &space.dofmap);
    for color in &coloring.blocks {
        color.par_iter().try_for_each_init(
            || (LocalScratch::default(), vec![0.0; local.len()]),
            |(s, ke), cells| -> Result<()> {
                let vp = vp;
                for c in cells.clone() {
                    local.element_matrix(c, s, ke)?;
                    let nodes = dm.cell(c);
                    let rank = &ranks_all[c * npc * npc..(c + 1) * npc * npc];
                    for (i, &ni) in nodes.iter().enumerate() {
                        let ranks = &rank[i * npc..(i + 1) * npc];
                        let si = dm.sign(c, i);
                        for ia in 0..n {
                            let base = row_ptr[ni * n + ia];
                            for b in 0..n {
                                let k = &ke[((i * n + ia) * n + b) * npc..((i * n + ia) * n + b + 1) * npc];
                                // SAFETY (both loops): blocks of one color share no node, so no
                                // two threads touch the same row.
                                if dm.signs.is_some() {
                                    for (j, (&r, &v)) in ranks.iter().zip(k).enumerate() {
                                        unsafe { *vp.0.add(base + r.index() * n + b) += si * dm.sign(c, j) * v };
                                    }
                                } else {
                                    for (&r, &v) in ranks.iter().zip(k) {
                                        unsafe { *vp.0.add(base + r.index() * n + b) += v };
                                    }
                                }
                            }
                        }
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok(())
}

/// Adds the Robin facet matrices of the (few) cells that carry them, searching their rows.
fn add_robin(integ: &ElementIntegrator, a: &mut CsrMatrix) -> Result<()> {
    let cells = integ.robin_cells();
    if cells.is_empty() {
        // No copy of the dof map for nothing: `ElementRestriction::new` clones it (41 MB of fresh
        // pages at 1.3·10⁶ P1 tetrahedra, 15 % of the assembly's page faults).
        return Ok(());
    }
    let r = ElementRestriction::new(integ.space);
    let nd = integ.elem_size();
    let mut ke = vec![0.0; nd * nd];
    for c in cells {
        ke.fill(0.0);
        integ.add_robin_matrix(c, &mut ke)?;
        let dofs: Vec<usize> = (0..nd).map(|i| r.global_dof(c, i)).collect();
        for i in 0..nd {
            let row = dofs[i];
            let (rs, re) = (a.row_ptr[row], a.row_ptr[row + 1]);
            for j in 0..nd {
                let k = a.col_idx[rs..re].binary_search(&(dofs[j] as u32)).map_err(|_| Error::invalid(format!("entry ({row}, {}) missing from the sparsity pattern", dofs[j])))?;
                let s = integ.space.dofmap.sign(c, i / r.ncomp) * integ.space.dofmap.sign(c, j / r.ncomp);
                a.values[rs + k] += s * ke[i * nd + j];
            }
        }
    }
    Ok(())
}
