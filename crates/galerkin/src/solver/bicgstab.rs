//! BiCGStab (van der Vorst) with right preconditioning, for general nonsymmetric `A`.
//!
//! Right preconditioning (`A M u = b`, `x = M u`) keeps the iterated residual equal to the true
//! residual `b − A x`, so the stopping test needs no rescaling. One iteration costs two SpMVs and
//! two preconditioner applications; the half-step residual `s` is tested too, so a solve can stop
//! mid-iteration. As in CG, convergence of the recursive residual is confirmed against `b − A x`.
//!
//! Breakdown: the method fails when `ρ = r̂·r`, `r̂·v` or `ω = (t·s)/(t·t)` vanish relative to the
//! norms involved (`|u·w| ≤ ε‖u‖‖w‖`), as the next step would divide by (nearly) zero.
use super::monitor::{prepare, residual, zero_rhs_stats, Monitor};
use super::{KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::Result;

const METHOD: &str = "BiCGStab";

/// Solve `A x = b` from the initial guess in `x`, preconditioned by `m` (≈ A⁻¹).
pub fn bicgstab<B: Backend>(
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
    let mut r_hat = backend.zeros(n)?;
    let mut p = backend.zeros(n)?;
    let mut v = backend.zeros(n)?;
    let mut p_hat = backend.zeros(n)?;
    let mut s_hat = backend.zeros(n)?;
    let mut t = backend.zeros(n)?;

    let mut rnorm = residual(backend, a, b, x, &mut r)?;
    if mon.check(rnorm)? {
        return Ok(mon.finish());
    }
    // The shadow residual is fixed at (re)start: r̂ = r.
    backend.copy(&r, &mut r_hat)?;
    let mut r_hat_norm = rnorm;
    let (mut rho_old, mut alpha, mut omega) = (1.0, 1.0, 1.0);
    let mut fresh = true;
    loop {
        let rho = backend.dot(&r_hat, &r)?;
        breakdown_check(&mon, "ρ = r̂·r", rho, r_hat_norm * rnorm)?;
        if fresh {
            backend.copy(&r, &mut p)?;
            fresh = false;
        } else {
            // p = r + β (p − ω v)
            let beta = (rho / rho_old) * (alpha / omega);
            backend.axpy(-omega, &v, &mut p)?;
            backend.axpby(1.0, &r, beta, &mut p)?;
        }
        m.apply(backend, &p, &mut p_hat)?;
        a.apply(backend, &p_hat, &mut v)?;
        let rv = backend.dot(&r_hat, &v)?;
        breakdown_check(&mon, "r̂·v", rv, r_hat_norm * backend.norm2(&v)?)?;
        alpha = rho / rv;
        // x += α p̂, s = r − α v (s overwrites r); test the half step before spending two more
        // operator applications.
        let ss = backend.cg_update(alpha, &p_hat, &v, x, &mut r)?;
        let snorm = ss.sqrt();
        let converged = if mon.is_converged(snorm) {
            mon.check(snorm)?
        } else {
            m.apply(backend, &r, &mut s_hat)?;
            a.apply(backend, &s_hat, &mut t)?;
            let tt = backend.dot(&t, &t)?;
            let ts = backend.dot(&t, &r)?;
            breakdown_check(&mon, "ω = t·s/t·t", ts, tt.sqrt() * snorm)?;
            omega = ts / tt;
            rnorm = backend.cg_update(omega, &s_hat, &t, x, &mut r)?.sqrt();
            mon.check(rnorm)?
        };
        if converged {
            rnorm = residual(backend, a, b, x, &mut r)?;
            if mon.confirm(rnorm)? {
                return Ok(mon.finish());
            }
            // Restart from the true residual with a new shadow vector.
            backend.copy(&r, &mut r_hat)?;
            r_hat_norm = rnorm;
            fresh = true;
        }
        rho_old = rho;
    }
}

/// Fails when `value` is negligible against `scale` (`|value| ≤ ε·scale`) or not finite.
fn breakdown_check(mon: &Monitor, what: &str, value: f64, scale: f64) -> Result<()> {
    if value.is_finite() && value.abs() > f64::EPSILON * scale {
        Ok(())
    } else {
        Err(mon.error(format!("breakdown, {what} ≈ 0 ({value:.3e})")))
    }
}
