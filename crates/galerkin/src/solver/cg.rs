//! Preconditioned conjugate gradients for symmetric positive definite `A` and `M`.
//!
//! The recursively updated residual drives the iteration (one SpMV per step); when it meets the
//! tolerance, `b − A x` is recomputed and must meet it too, otherwise CG restarts from the true
//! residual. This guards against the drift between recursive and true residual in long solves.
use super::monitor::{prepare, residual, zero_rhs_stats, Monitor};
use super::{KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::Result;

const METHOD: &str = "CG";

/// Solve `A x = b` from the initial guess in `x`, preconditioned by `m` (≈ A⁻¹).
pub fn cg<B: Backend>(
    backend: &B,
    a: &dyn LinearOperator<B>,
    m: &dyn LinearOperator<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    opts: &KrylovOptions,
) -> Result<SolveStats> {
    let Some(mut mon) = prepare(METHOD, backend, a, m, b, x, opts)? else {
        return Ok(zero_rhs_stats(METHOD));
    };
    let n = a.nrows();
    let mut r = backend.zeros(n)?;
    let mut z = backend.zeros(n)?;
    let mut p = backend.zeros(n)?;
    let mut q = backend.zeros(n)?;

    if mon.check(residual(backend, a, b, x, &mut r)?)? {
        return Ok(mon.finish());
    }
    let mut rho = precondition(backend, m, &mon, &r, &mut z)?;
    backend.copy(&z, &mut p)?;
    loop {
        a.apply(backend, &p, &mut q)?;
        let pq = backend.dot(&p, &q)?;
        if !(pq > 0.0) {
            return Err(mon.error(format!(
                "operator is not positive definite (pᵀAp = {pq:.3e})"
            )));
        }
        let alpha = rho / pq;
        let rr = backend.cg_update(alpha, &p, &q, x, &mut r)?;
        if mon.check(rr.sqrt())? {
            if mon.confirm(residual(backend, a, b, x, &mut r)?)? {
                return Ok(mon.finish());
            }
            // Restart from the true residual.
            rho = precondition(backend, m, &mon, &r, &mut z)?;
            backend.copy(&z, &mut p)?;
            continue;
        }
        let rho_new = precondition(backend, m, &mon, &r, &mut z)?;
        backend.axpby(1.0, &z, rho_new / rho, &mut p)?;
        rho = rho_new;
    }
}

/// `z = M r`; returns `ρ = r·z`, which must be positive for CG's inner product to exist.
fn precondition<B: Backend>(
    backend: &B,
    m: &dyn LinearOperator<B>,
    mon: &Monitor,
    r: &B::Vector,
    z: &mut B::Vector,
) -> Result<f64> {
    m.apply(backend, r, z)?;
    let rho = backend.dot(r, z)?;
    if rho > 0.0 {
        Ok(rho)
    } else {
        Err(mon.error(format!(
            "preconditioner is not positive definite (rᵀMr = {rho:.3e})"
        )))
    }
}
