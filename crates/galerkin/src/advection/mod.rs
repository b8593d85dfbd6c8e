//! Upwind discontinuous Galerkin for steady advection–reaction in 2D, β·∇u + c u = f with inflow
//! data, on triangles (P0–P3) and quadrilaterals (Q0–Q3), assembled and solved whole on either
//! backend: the CPU (rayon over cells) or the GPU (the problem's functions compiled into the
//! assembly kernel, the CSR pattern and values written on the device), then GMRES or BiCGStab
//! from `crate::solver` with element block Jacobi, point Jacobi or no preconditioner.
//!
//! Pieces: [`formula`] (expressions the CPU evaluates and the GPU compiles), [`faces`] (edge
//! connectivity), [`problem`] (the problem, the discontinuous space's tables and pattern),
//! [`assemble`] (CPU) and [`cuda`] (GPU, `kernels/advection*.cu`), [`solve`], [`config`] and
//! [`run`] (problem files), [`output`] (L2 error, VTU), [`bench`].
pub mod assemble;
pub mod bench;
pub mod config;
pub mod cuda;
pub mod faces;
pub mod formula;
pub mod output;
pub mod problem;
pub mod run;
pub mod solve;
pub mod velocity_grid;

pub use formula::Formula;
pub use problem::{AdvectionProblem, Velocity};
pub use solve::{AdvectionBackend, Method, Precond, SolverConfig};
