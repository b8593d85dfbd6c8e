//! Discontinuous Galerkin for −(a u′)′ + c u = f on an interval: interior penalty methods (SIPG,
//! NIPG, IIPG) of degree 1 to 6 in a Legendre or monomial basis, Dirichlet ends imposed weakly
//! (Nitsche) or Neumann ends, assembled into a block-tridiagonal matrix and solved directly (block
//! Thomas, block cyclic reduction on CPU and GPU) or by the generic Krylov solvers, on both
//! backends.
//!
//! The operator is built from the four pieces of the design (DESIGN.md), so it can join the
//! generic finite element operator later: the element and interior-face restrictions
//! ([`restriction`]), the tabulated basis ([`basis`]), the pointwise volume physics and face terms
//! ([`physics`], with their CUDA twin in `kernels/dg.cu`), and one assembly level, `full`, whose
//! storage is the block-tridiagonal matrix ([`block_tridiag`]).
pub mod assemble;
pub mod basis;
pub mod bench;
pub mod block_tridiag;
pub mod config;
pub mod convergence;
pub mod cuda;
pub mod cyclic;
pub mod dense;
pub mod mesh;
pub mod method;
pub mod norms;
pub mod output;
pub mod physics;
pub mod problem;
pub mod restriction;
pub mod run;
pub mod solve;
pub mod thomas;

pub use basis::{BasisKind, Tabulation};
pub use block_tridiag::BlockTridiag;
pub use cyclic::CyclicReduction;
pub use mesh::IntervalMesh;
pub use method::{DegreeScaling, HScaling, Method, Penalty};
pub use norms::{errors, DgErrors, Exact};
pub use problem::{BoundaryCondition, DgProblem, Field};
pub use solve::{solve_cpu, solve_cuda, DgPreconditioner, DgSolution, DgSolver, DirectKind};
pub use thomas::BlockThomas;
