//! Isogeometric analysis with B-splines: open knot vectors (uniform, non-uniform, repeated knots
//! for lower continuity), degree 1…8, Cox–de Boor evaluation, Gauss quadrature with p + 1 points
//! per element, 1D and 2D tensor-product spaces; the seed's 1D advection–diffusion–reaction problem
//! and 2D Poisson / L2 projection on a rectangle; solved by the multifrontal solver
//! ([`crate::solver::multifrontal`]) on the CPU or the GPU.
//!
//! The pieces follow the operator's shape `A = Rᵀ Bᵀ D B R`: [`space`] holds the element
//! restriction `R` and the tabulated basis `B`; [`adr1d`] and [`poisson2d`] the pointwise physics
//! `D`; the assembly level is `element` ([`system::ElementSystem`]: element matrices, which are the
//! multifrontal solver's leaves).
pub mod adr1d;
pub mod basis;
pub mod config;
pub mod field;
pub mod function;
pub mod knots;
pub mod output;
pub mod poisson2d;
pub mod run;
pub mod seed;
pub mod space;
pub mod system;

pub use adr1d::{Adr1d, EndCondition};
pub use field::Field;
pub use function::{ErrorNorms, Spline1d, Spline2d};
pub use knots::{KnotVector, MAX_DEGREE};
pub use poisson2d::{Physics2d, Problem2d};
pub use space::{Space1d, Space2d};
pub use system::ElementSystem;

use crate::solver::multifrontal::{EliminationTree, Symbolic};
use crate::Result;

/// The multifrontal structure of a 1D space: a binary elimination tree over its elements.
pub fn symbolic_1d(space: &Space1d) -> Result<Symbolic> {
    Symbolic::new(space.num_basis(), space.degree() + 1, &space.element_dofs(), &EliminationTree::bisection_1d(space.num_elements())?)
}

/// The multifrontal structure of a 2D tensor space: nested dissection of its element grid.
pub fn symbolic_2d(space: &Space2d) -> Result<Symbolic> {
    let (ex, ey) = space.grid();
    Symbolic::new(space.num_basis(), space.element_size(), &space.element_dofs(), &EliminationTree::nested_dissection_2d(ex, ey)?)
}
