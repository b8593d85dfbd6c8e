//! Preconditioned conjugate gradients for symmetric positive definite `A` and `M`.
//!
//! The recursively updated residual drives the iteration (one SpMV per step); when it meets the
//! tolerance, `b − A x` is recomputed and must meet it too, otherwise CG restarts from the true
//! residual. This guards against the drift between recursive and true residual in long solves.
use super::monitor::{prepare, residual, zero_rhs_stats, Monitor};
use super::{KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator, PcgWork};
use super::precond::Jacobi;
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

/// Iterations per batch of the device-resident loop between reads of its residual norms: fewer
/// host round trips against at most `PCG_BATCH − 1` iterations past convergence.
pub const PCG_BATCH: usize = 4;

/// Jacobi-preconditioned CG: on a backend with a device-resident path
/// ([`Backend::pcg_iterations`]) the scalars stay on the device and the residual norms are read
/// once per [`PCG_BATCH`] iterations (every iteration is still recorded and judged, and
/// convergence is confirmed on the true residual, as in [`cg`]); elsewhere [`cg`] itself.
pub fn jacobi_cg<B: Backend>(
    backend: &B,
    a: &dyn LinearOperator<B>,
    m: &Jacobi<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    opts: &KrylovOptions,
) -> Result<SolveStats> {
    let n = a.nrows();
    if !backend.has_resident_pcg() || n == 0 {
        return cg(backend, a, m, b, x, opts);
    }
    let Some(mut mon) = prepare(METHOD, backend, a, m, b, x, opts)? else {
        return Ok(zero_rhs_stats(METHOD));
    };
    let mut w = PcgWork {
        p: backend.zeros(n)?,
        q: backend.zeros(n)?,
        r: backend.zeros(n)?,
        dinv: m.inverse_diagonal(),
        state: backend.zeros(4 + PCG_BATCH)?,
        // Partials of one reduction per block of any launch grid: 3 per block, blocks ≤ n.
        partials: backend.zeros(3 * n.clamp(1, 1 << 16))?,
        iteration: 0,
        fused: Default::default(),
    };
    if mon.check(residual(backend, a, b, x, &mut w.r)?)? {
        return Ok(mon.finish());
    }
    // z = D⁻¹ r, ρ = r·z, p = z; ρ into the even slot.
    let restart = |w: &mut PcgWork<'_, B>, mon: &Monitor| -> Result<()> {
        m.apply(backend, &w.r, &mut w.p)?;
        let rho = backend.dot(&w.r, &w.p)?;
        if !(rho > 0.0) {
            return Err(mon.error(format!("preconditioner is not positive definite (rᵀMr = {rho:.3e})")));
        }
        w.iteration = 0;
        w.state = backend.from_host(&[rho, 0.0, 0.0].into_iter().chain(std::iter::repeat_n(0.0, PCG_BATCH + 1)).collect::<Vec<_>>())?;
        Ok(())
    };
    restart(&mut w, &mon)?;
    loop {
        backend.pcg_iterations(a, x, &mut w, PCG_BATCH).unwrap_or_else(|| Err(crate::Error::invalid("resident PCG vanished")))?;
        let state = backend.to_host(&w.state)?;
        match state[2] {
            f if f == 1.0 => return Err(mon.error("operator is not positive definite (pᵀAp ≤ 0)")),
            f if f == 2.0 => return Err(mon.error("preconditioner is not positive definite (rᵀMr ≤ 0)")),
            _ => {}
        }
        let mut converged = false;
        for rr in &state[3..3 + PCG_BATCH] {
            if converged {
                let _ = mon.record(rr.sqrt());
            } else if mon.check(rr.sqrt())? {
                converged = true;
            }
        }
        if converged {
            if w.fused.pending {
                a.pcg_fused(backend, x, &mut w, 0, None)?;
            }
            if mon.confirm(residual(backend, a, b, x, &mut w.r)?)? {
                return Ok(mon.finish());
            }
            restart(&mut w, &mon)?;
        }
    }
}
