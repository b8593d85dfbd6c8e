//! Choosing a Krylov method by name (problem files, CLI) and dispatching to it.
use super::{bicgstab, cg, gmres, KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::Result;
use serde::{Deserialize, Serialize};

/// A Krylov method; serde names `"cg"`, `"gmres"`, `"bicgstab"`.
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
