//! Element restriction R: global dofs -> element-local dofs (gather) and its transpose
//! (scatter-add). Local ordering inside a cell is `node * ncomp + component`.
//!
//! Conforming H1 spaces need only the node offsets (the dof map already agrees on shared edge and
//! face orientations); `signs` carries the ±1 of hierarchical edge and face modes whose orientation
//! flips between cells, and [`ElementRestriction::discontinuous`] is the identity layout of DG
//! spaces. Face restrictions (DG fluxes) will be a second kind beside this one.
use crate::space::FunctionSpace;

/// Gather/scatter between a global vector and element-local blocks.
#[derive(Clone, Debug)]
pub struct ElementRestriction {
    pub ncells: usize,
    pub nodes_per_cell: usize,
    pub ncomp: usize,
    /// Global scalar node of each local node, cell-major.
    pub offsets: Vec<usize>,
    /// ±1 per local node (cell-major), where orientation flips a basis function's sign.
    pub signs: Option<Vec<f64>>,
}

impl ElementRestriction {
    pub fn new(space: &FunctionSpace) -> Self {
        ElementRestriction {
            ncells: space.dofmap.num_cells(),
            nodes_per_cell: space.dofmap.nodes_per_cell,
            ncomp: space.ncomp,
            offsets: space.dofmap.cell_nodes.clone(),
            signs: space.dofmap.signs.clone(),
        }
    }

    /// The restriction of a discontinuous space: every cell owns its nodes, numbered cell by cell.
    pub fn discontinuous(ncells: usize, nodes_per_cell: usize, ncomp: usize) -> Self {
        ElementRestriction { ncells, nodes_per_cell, ncomp, offsets: (0..ncells * nodes_per_cell).collect(), signs: None }
    }

    #[inline]
    fn sign(&self, c: usize, a: usize) -> f64 {
        self.signs.as_ref().map_or(1.0, |s| s[c * self.nodes_per_cell + a])
    }

    /// Local dofs per cell.
    pub fn elem_size(&self) -> usize {
        self.nodes_per_cell * self.ncomp
    }

    /// Global dof of local dof `i` of cell `c`.
    #[inline]
    pub fn global_dof(&self, c: usize, i: usize) -> usize {
        let n = self.ncomp;
        self.offsets[c * self.nodes_per_cell + i / n] * n + i % n
    }

    /// `local = R_c global` for one cell.
    #[inline]
    pub fn gather(&self, c: usize, global: &[f64], local: &mut [f64]) {
        let n = self.ncomp;
        for (a, &node) in self.offsets[c * self.nodes_per_cell..(c + 1) * self.nodes_per_cell].iter().enumerate() {
            let s = self.sign(c, a);
            for k in 0..n {
                local[a * n + k] = s * global[node * n + k];
            }
        }
    }

    /// `global += R_cᵀ local` for one cell.
    #[inline]
    pub fn scatter_add(&self, c: usize, local: &[f64], global: &mut [f64]) {
        let n = self.ncomp;
        for (a, &node) in self.offsets[c * self.nodes_per_cell..(c + 1) * self.nodes_per_cell].iter().enumerate() {
            let s = self.sign(c, a);
            for k in 0..n {
                global[node * n + k] += s * local[a * n + k];
            }
        }
    }
}
