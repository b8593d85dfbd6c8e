//! Linear solvers written once over [`crate::backend::Backend`]: Krylov methods (CG, GMRES(m),
//! BiCGStab), preconditioners (Jacobi, block Jacobi, SSOR, ILU(0)) and sparse direct factorizations
//! through `faer`.
//!
//! Convergence is always judged on the true (unpreconditioned) residual: stop when
//! `‖b − A x‖ ≤ max(rtol·‖b‖, atol)`. Breakdown, stagnation and hitting the iteration limit are
//! [`crate::Error::NotConverged`] errors carrying the residual history (rules in `monitor`).
pub mod bicgstab;
pub mod cg;
pub mod direct;
pub mod factorization;
pub mod gmres;
pub mod method;
mod monitor;
pub mod multifrontal;
pub mod precond;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

pub use bicgstab::bicgstab;
pub use cg::{cg, jacobi_cg};
pub use direct::DirectSolver;
pub use factorization::Factorization;
pub use gmres::gmres;
pub use method::SolverMethod;
pub use precond::{BlockJacobi, Ilu0, Jacobi, PrecondParams, Preconditionable, PreconditionerKind, SolverBackend, Ssor};

use serde::{Deserialize, Serialize};

/// Stopping criteria and method parameters shared by the Krylov methods.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KrylovOptions {
    /// Relative tolerance on ‖r‖/‖b‖.
    pub rtol: f64,
    /// Absolute tolerance on ‖r‖.
    pub atol: f64,
    pub max_iter: usize,
    /// GMRES restart length m.
    pub restart: usize,
    /// Show a progress bar (indicatif) while iterating.
    pub progress: bool,
}

impl Default for KrylovOptions {
    fn default() -> Self {
        KrylovOptions {
            rtol: 1e-10,
            atol: 1e-50,
            max_iter: 10_000,
            restart: 50,
            progress: false,
        }
    }
}

/// What a solve did: iterations and the residual norm after each one.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SolveStats {
    pub method: String,
    pub iterations: usize,
    /// ‖r_k‖ for k = 0..=iterations (true residual for CG/BiCGStab, GMRES's estimate otherwise).
    pub residual_history: Vec<f64>,
    pub initial_residual: f64,
    pub final_residual: f64,
    /// final_residual / ‖b‖
    pub relative_residual: f64,
}
