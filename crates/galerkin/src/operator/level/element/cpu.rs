//! The `element` level on the CPU: element matrices stored, applied cell by cell
//! (`y = Σ_c R_cᵀ K_c R_c x`), diagonal and per-node blocks available without a global matrix.
use crate::operator::coloring::{Coloring, SharedMut};
use crate::operator::integrate::Scratch;
use crate::operator::level::element::packed::{self, Storage};
use crate::operator::level::{LevelInput, LevelOperator};
use crate::operator::restriction::ElementRestriction;
use crate::backend::{Cpu, LinearOperator};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// Stored element matrices of one operator.
pub struct ElementMatrices {
    pub restriction: ElementRestriction,
    /// Per cell `elem_size²` values, row-major, or the packed upper triangle (`storage`).
    pub matrices: Vec<f64>,
    pub storage: Storage,
    pub coloring: Arc<Coloring>,
    ndofs: usize,
}

impl ElementMatrices {
    pub fn assemble(input: &LevelInput) -> Result<Self> {
        let (integ, coloring) = (input.integ, input.coloring.clone());
        let restriction = ElementRestriction::new(integ.space);
        let nd = restriction.elem_size();
        // The CPU twin of the GPU's packed triangles, where asked for (`packed = true`) and the
        // physics is symmetric.
        let storage = if input.tuning.packed == Some(true) && integ.qf.is_symmetric() { Storage::Packed } else { Storage::Full };
        let mut matrices = vec![0.0; restriction.ncells * storage.doubles(nd)];
        match storage {
            Storage::Full => matrices.par_chunks_mut(nd * nd).enumerate().try_for_each_init(Scratch::default, |s, (c, ke)| integ.element_matrix(c, s, ke))?,
            Storage::Packed => matrices.par_chunks_mut(storage.doubles(nd)).enumerate().try_for_each_init(
                || (Scratch::default(), vec![0.0; nd * nd]),
                |(s, ke), (c, kp)| {
                    integ.element_matrix(c, s, ke)?;
                    packed::pack_cell(nd, ke, kp);
                    Ok::<(), Error>(())
                },
            )?,
        }
        Ok(ElementMatrices { restriction, matrices, storage, coloring, ndofs: integ.space.ndofs() })
    }

    /// Cell c's stored matrix.
    fn cell(&self, c: usize) -> &[f64] {
        let n = self.storage.doubles(self.elem_size());
        &self.matrices[c * n..(c + 1) * n]
    }

    pub fn elem_size(&self) -> usize {
        self.restriction.elem_size()
    }

    /// Diagonal of the global operator (sum of element diagonals).
    pub fn diagonal(&self) -> Vec<f64> {
        let nd = self.elem_size();
        let mut d = vec![0.0; self.ndofs];
        for c in 0..self.restriction.ncells {
            for i in 0..nd {
                d[self.restriction.global_dof(c, i)] += self.cell(c)[self.storage.index(nd, i, i)];
            }
        }
        d
    }

    /// Per-node `ncomp × ncomp` diagonal blocks of the global operator (for block Jacobi).
    pub fn node_blocks(&self) -> Vec<f64> {
        let r = &self.restriction;
        let (n, nd) = (r.ncomp, r.elem_size());
        let mut blocks = vec![0.0; self.ndofs * n];
        for c in 0..r.ncells {
            for a in 0..r.nodes_per_cell {
                let node = r.offsets[c * r.nodes_per_cell + a];
                for i in 0..n {
                    for j in 0..n {
                        blocks[node * n * n + i * n + j] += self.cell(c)[self.storage.index(nd, a * n + i, a * n + j)];
                    }
                }
            }
        }
        blocks
    }
}

impl LevelOperator<Cpu> for ElementMatrices {
    fn apply(&self, be: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        LinearOperator::apply(self, be, x, y)
    }
    fn node_blocks(&self, _be: &Cpu) -> Result<Vec<f64>> {
        Ok(ElementMatrices::node_blocks(self))
    }
    fn storage_bytes(&self) -> usize {
        self.matrices.len() * 8
    }
    fn includes_boundary(&self) -> bool {
        true
    }
    fn update(&mut self, _be: &Cpu, input: &LevelInput) -> Result<()> {
        *self = ElementMatrices::assemble(input)?;
        Ok(())
    }
}

impl LinearOperator<Cpu> for ElementMatrices {
    fn nrows(&self) -> usize {
        self.ndofs
    }
    fn ncols(&self) -> usize {
        self.ndofs
    }
    fn apply(&self, _b: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        if x.len() != self.ndofs || y.len() != self.ndofs {
            return Err(Error::dim("element operator apply", self.ndofs, x.len().min(y.len())));
        }
        y.fill(0.0);
        let nd = self.elem_size();
        let yp = SharedMut(y.as_mut_ptr());
        let len = y.len();
        for color in &self.coloring.blocks {
            color.par_iter().for_each_init(
                || (vec![0.0; nd], vec![0.0; nd]),
                |(xe, ye), cells| {
                    let yp = yp;
                    for c in cells.clone() {
                        self.restriction.gather(c, x, xe);
                        packed::apply_cell(self.storage, nd, self.cell(c), xe, ye);
                        // SAFETY: blocks of one color share no dof.
                        let global = unsafe { std::slice::from_raw_parts_mut(yp.0, len) };
                        self.restriction.scatter_add(c, ye, global);
                    }
                },
            );
        }
        Ok(())
    }
}
