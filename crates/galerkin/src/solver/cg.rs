//! (stub, filled in by its owner)
use super::{KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::Result;

/// Solve `A x = b` from the initial guess in `x`, preconditioned by `m` (≈ A⁻¹).
pub fn cg<B: Backend>(
    backend: &B,
    a: &dyn LinearOperator<B>,
    m: &dyn LinearOperator<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    opts: &KrylovOptions,
) -> Result<SolveStats> {
    let _ = (backend, a, m, b, x, opts);
    todo!()
}
