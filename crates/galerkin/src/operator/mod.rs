//! Finite element operators, `A = Rᵀ Bᵀ D B R`: element restriction ([`restriction`]), basis
//! (tabulated in [`integrate`]), pointwise physics ([`crate::physics`]) and an assembly level:
//! `full` (a global CSR matrix, [`assemble`]) or `element` (stored element matrices applied cell by
//! cell, [`element`]). Dirichlet conditions are eliminated symmetrically ([`dirichlet`]).
pub mod assemble;
pub mod coloring;
pub mod dirichlet;
pub mod element;
pub mod geometry;
pub mod integrate;
pub mod norms;
pub mod restriction;

pub use coloring::Coloring;
pub use dirichlet::{Constrained, Constraints};
pub use element::ElementMatrices;
pub use integrate::{ElementIntegrator, FluxFn, VectorFn};
pub use restriction::ElementRestriction;

use serde::{Deserialize, Serialize};

/// How much of the operator is precomputed (MFEM's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AssemblyLevel {
    /// A global CSR matrix.
    #[default]
    Full,
    /// Element matrices stored and applied element by element.
    Element,
}
