//! The `full` level on the CPU: element matrices summed into the CSR values in parallel, one color
//! of cell blocks at a time (blocks of one color share no dof, so no locks).
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::operator::assemble::sparsity;
use crate::operator::coloring::{Coloring, SharedMut};
use crate::operator::integrate::{ElementIntegrator, Scratch};
use crate::operator::level::{LevelInput, LevelOperator};
use crate::operator::restriction::ElementRestriction;
use crate::{Error, Result};
use rayon::prelude::*;

/// The assembled CSR matrix.
pub struct CpuFull {
    pub a: CsrMatrix,
    ncomp: usize,
}

impl CpuFull {
    pub fn build(input: &LevelInput) -> Result<CpuFull> {
        let mut a = sparsity(input.integ.space)?;
        assemble_matrix(input.integ, input.coloring, &mut a)?;
        Ok(CpuFull { a, ncomp: input.integ.space.ncomp })
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
        self.a.values.fill(0.0);
        assemble_matrix(input.integ, input.coloring, &mut self.a)
    }
}

/// Sum every cell's element matrix into `a` (which must have `space`'s sparsity).
pub fn assemble_matrix(integ: &ElementIntegrator, coloring: &Coloring, a: &mut CsrMatrix) -> Result<()> {
    let r = ElementRestriction::new(integ.space);
    let nd = integ.elem_size();
    let vp = SharedMut(a.values.as_mut_ptr());
    let a_ro = &*a;
    for color in &coloring.blocks {
        color.par_iter().try_for_each_init(
            || (Scratch::default(), vec![0.0; nd * nd], vec![0usize; nd]),
            |(s, ke, dofs), cells| -> Result<()> {
                let vp = vp;
                for c in cells.clone() {
                    integ.element_matrix(c, s, ke)?;
                    for (i, d) in dofs.iter_mut().enumerate() {
                        *d = r.global_dof(c, i);
                    }
                    for i in 0..nd {
                        let row = dofs[i];
                        let (rs, re) = (a_ro.row_ptr[row], a_ro.row_ptr[row + 1]);
                        let cols = &a_ro.col_idx[rs..re];
                        for j in 0..nd {
                            let k = cols.binary_search(&(dofs[j] as u32)).map_err(|_| {
                                Error::invalid(format!("entry ({row}, {}) missing from the sparsity pattern", dofs[j]))
                            })?;
                            // SAFETY: blocks of one color share no dof, so no two threads touch the same row.
                            unsafe { *vp.0.add(rs + k) += ke[i * nd + j] };
                        }
                    }
                }
                Ok(())
            },
        )?;
    }
    Ok(())
}

