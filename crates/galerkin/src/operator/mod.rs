//! Finite element operators, `A = Rᵀ Bᵀ D B R`, from four pieces (as in libCEED and MFEM):
//! - R, the element restriction ([`restriction`]): global dofs to element-local ones and back;
//! - B, the basis ([`basis`]): tabulated at the quadrature, with 1D tables on tensor cells;
//! - D, the pointwise physics ([`qfunction`]): written once, with a CUDA twin, reading the
//!   coefficient fields sampled in [`passive`];
//! - the assembly level ([`level`]): `full`, `element`, `partial` or `none`, each a strategy with a
//!   CPU and a GPU implementation.
//!
//! [`FeOperator`] puts them together on any backend, with Dirichlet conditions ([`dirichlet`]);
//! [`integrate`] holds the element integration the assembled levels and the load vectors share.
pub mod assemble;
pub mod basis;
pub mod coloring;
pub mod degree_groups;
pub mod dirichlet;
pub mod fe_operator;
pub mod geometry;
pub mod integrate;
pub mod level;
pub mod load_cuda;
pub mod local_matrix;
pub mod norms;
pub mod norms_cuda;
pub mod passive;
pub mod qfunction;
pub mod restriction;
pub mod sumfact;

pub use coloring::Coloring;
pub use dirichlet::{Constrained, Constraints};
pub use fe_operator::FeOperator;
pub use integrate::{ElementIntegrator, FluxFn, VectorFn};
pub use level::{AssemblyLevel, CellMaterials, FeBackend, LevelInput, LevelOperator, Scatter, Tuning};
pub use passive::{PassiveData, PassiveField};
pub use restriction::ElementRestriction;
