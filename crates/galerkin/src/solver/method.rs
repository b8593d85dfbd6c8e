//! Choosing a solver by name (problem files, CLI): [`SolverMethod`] is the user's choice, a Krylov
//! method or a direct factorization; [`KrylovMethod`] is the iterative layer it maps to.
use super::{bicgstab, cg, gmres, KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::Result;
use serde::{Deserialize, Serialize};

/// How to solve; serde names `"cg"`, `"gmres"`, `"bicgstab"`, `"direct"` (Cholesky if symmetric,
/// else LU). The first three are [`KrylovMethod`]s ([`SolverMethod::krylov`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverMethod {
    Cg,
    Gmres,
    Bicgstab,
    Direct,
}

impl SolverMethod {
    /// The Krylov method this names (`None` for the direct solver).
    pub fn krylov(self) -> Option<KrylovMethod> {
        match self {
            SolverMethod::Cg => Some(KrylovMethod::Cg),
            SolverMethod::Gmres => Some(KrylovMethod::Gmres),
            SolverMethod::Bicgstab => Some(KrylovMethod::BiCgStab),
            SolverMethod::Direct => None,
        }
    }
}

/// A Krylov method (the iterative layer of [`SolverMethod`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KrylovMethod {
    /// Conjugate gradients: SPD operator and SPD preconditioner.
    Cg,
    /// Restarted GMRES(m), right preconditioned: any nonsingular operator.
    Gmres,
    /// BiCGStab, right preconditioned: any nonsingular operator, short recurrences.
    BiCgStab,
}

impl KrylovMethod {
    /// Solve `A x = b` from the initial guess in `x` with this method.
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
            KrylovMethod::Cg => cg(backend, a, m, b, x, opts),
            KrylovMethod::Gmres => gmres(backend, a, m, b, x, opts),
            KrylovMethod::BiCgStab => bicgstab(backend, a, m, b, x, opts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names() {
        for (m, name) in [
            (KrylovMethod::Cg, "cg"),
            (KrylovMethod::Gmres, "gmres"),
            (KrylovMethod::BiCgStab, "bicgstab"),
        ] {
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{name}\""));
            assert_eq!(
                serde_json::from_str::<KrylovMethod>(&format!("\"{name}\"")).unwrap(),
                m
            );
        }
    }
}
