//! Problems: the Rust API ([`linear::LinearProblem`], solved through one [`linear::System`] on any
//! backend) and problem files in TOML ([`config`]), which [`run`] turns into the same library
//! calls.
pub mod config;
pub mod estimate;
pub mod linear;
pub mod nullspace;
pub mod run;
pub mod validate;

pub use linear::{flux, scalar, vector, Boundary, BoundaryCondition, LinearProblem, LinearSystem, Solution, SolverConfig, SolverMethod, System};
pub use run::{run_file, Report, RunOptions};
