//! Choosing a solver by name (problem files, CLI, the Rust API): [`SolverMethod`], one enum for the
//! Krylov methods and the direct factorization.
use super::{bicgstab, cg, gmres, KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// How to solve; serde names `"cg"`, `"gmres"`, `"bicgstab"`, `"direct"` (Cholesky if symmetric,
/// else LU, through [`super::Factorization`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverMethod {
    /// Conjugate gradients: SPD operator and SPD preconditioner.
    Cg,
    /// Restarted GMRES(m), right preconditioned: any nonsingular operator.
    Gmres,
    /// BiCGStab, right preconditioned: any nonsingular operator, short recurrences.
    Bicgstab,
    /// A sparse direct factorization of the assembled matrix.
    Direct,
}

impl SolverMethod {
    /// Whether this is an iterative (Krylov) method, which [`SolverMethod::solve`] runs.
    pub fn is_krylov(self) -> bool {
        self != SolverMethod::Direct
    }

    /// The method's name as problem files spell it.
    pub fn name(self) -> &'static str {
        match self {
            SolverMethod::Cg => "cg",
            SolverMethod::Gmres => "gmres",
            SolverMethod::Bicgstab => "bicgstab",
            SolverMethod::Direct => "direct",
        }
    }

    /// Solve `A x = b` from the initial guess in `x` with this Krylov method; the direct method
    /// needs a matrix and a factorization, so it is an error here.
    pub fn solve<B: Backend>(
        self,
        backend: &B,
        a: &dyn LinearOperator<B>,
        m: &dyn LinearOperator<B>,
        b: &B::Vector,
        x: &mut B::Vector,
        opts: &KrylovOptions,
    ) -> Result<SolveStats> {
        match self {
            SolverMethod::Cg => cg(backend, a, m, b, x, opts),
            SolverMethod::Gmres => gmres(backend, a, m, b, x, opts),
            SolverMethod::Bicgstab => bicgstab(backend, a, m, b, x, opts),
            SolverMethod::Direct => Err(Error::invalid("the direct method is not a Krylov method: factorize the matrix (solver::Factorization)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names() {
        for m in [SolverMethod::Cg, SolverMethod::Gmres, SolverMethod::Bicgstab, SolverMethod::Direct] {
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<SolverMethod>(&format!("\"{}\"", m.name())).unwrap(), m);
        }
    }
}
