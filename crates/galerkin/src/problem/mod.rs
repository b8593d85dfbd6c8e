//! Problems: the Rust API ([`linear::LinearProblem`]) and problem files in TOML ([`config`]),
//! which [`run`] turns into the same library calls.
pub mod config;
pub mod estimate;
pub mod linear;
pub mod gpu;
pub mod nullspace;
pub mod run;
pub mod validate;

pub use linear::{flux, scalar, vector, Boundary, BoundaryCondition, LinearProblem, LinearSystem, Solution, SolverConfig, SolverMethod};
pub use run::{run_file, Report, RunOptions};
