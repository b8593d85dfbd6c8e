//! Element restriction R: global dofs -> element-local dofs (gather) and its transpose
//! (scatter-add). Local ordering inside a cell is `node * ncomp + component`.
use crate::space::FunctionSpace;

/// Gather/scatter between a global vector and element-local blocks.
#[derive(Clone, Debug)]
pub struct ElementRestriction {
    pub ncells: usize,
    pub nodes_per_cell: usize,
    pub ncomp: usize,
    /// Global scalar node of each local node, cell-major.
    pub offsets: Vec<usize>,
}

impl ElementRestriction {
    pub fn new(space: &FunctionSpace) -> Self {
        ElementRestriction {
            ncells: space.dofmap.num_cells(),
            nodes_per_cell: space.dofmap.nodes_per_cell,
            ncomp: space.ncomp,
            offsets: space.dofmap.cell_nodes.clone(),
        }
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
            local[a * n..(a + 1) * n].copy_from_slice(&global[node * n..(node + 1) * n]);
        }
    }

    /// `global += R_cᵀ local` for one cell.
    #[inline]
    pub fn scatter_add(&self, c: usize, local: &[f64], global: &mut [f64]) {
        let n = self.ncomp;
        for (a, &node) in self.offsets[c * self.nodes_per_cell..(c + 1) * self.nodes_per_cell].iter().enumerate() {
            for k in 0..n {
                global[node * n + k] += local[a * n + k];
            }
        }
    }
}
