//! Multifrontal direct solver over an elimination tree of elements (the seed's graph-grammar
//! solver, generalised): element frontal matrices at the leaves; at each node the children's
//! Schur complements are merged (extend-add) and the fully assembled rows eliminated with partial
//! pivoting among them; the root is solved and the solution recovered by backward substitution
//! down the tree. The nodes of one tree level are independent: the CPU runs them on rayon threads,
//! the GPU in one batched launch per level ([`cuda`]), so the number
//! of steps grows like the tree depth, `log N`.
//!
//! Both numeric phases implement [`crate::solver::Factorization`]: factor once, then solve any
//! number of right-hand sides in one pass over the tree.
pub mod cpu;
pub mod cuda;
pub mod dense;
pub mod in_place;
pub mod maps;
pub mod separators;
pub mod solve_bytes;
pub mod subtrees;
pub mod symbolic;
pub mod tree;

pub use cpu::CpuMultifrontal;
pub use cuda::CudaMultifrontal;
pub use symbolic::Symbolic;
pub use tree::EliminationTree;

use serde::Serialize;

/// Size of a multifrontal factorization, for reports.
#[derive(Clone, Debug, Serialize)]
pub struct MultifrontalStats {
    pub unknowns: usize,
    pub elements: usize,
    /// Tree nodes after contraction (leaves included).
    pub nodes: usize,
    /// Parallel steps of the factorization: the owning leaves, then one per level.
    pub levels: usize,
    pub max_front: usize,
    /// Values in the factor storage (every front in full).
    pub factor_entries: u64,
    pub factor_flops: f64,
    pub solve_flops_per_rhs: f64,
}

impl Symbolic {
    pub fn stats(&self) -> MultifrontalStats {
        MultifrontalStats {
            unknowns: self.n,
            elements: self.nelem,
            nodes: self.num_nodes(),
            levels: self.levels.len() + usize::from(!self.factor_leaves.is_empty()),
            max_front: self.max_front(),
            factor_entries: self.storage_len,
            factor_flops: self.factor_flops(),
            solve_flops_per_rhs: self.solve_flops(),
        }
    }
}
