//! What the three Krylov methods share: argument validation, the stopping test, the residual
//! history, failure detection (iteration limit, stagnation, NaN), error building and the progress
//! bar. Keeping it here means every method stops and fails by exactly the same rules.
//!
//! Stagnation rules:
//! - the solve fails when the best residual seen has not dropped by at least a factor `1 − 1e-3`
//!   during the last `max(200, ⌈4√n⌉)` iterations (n unknowns): a window proportional to the
//!   problem, not to the iteration cap, since CG on an elliptic problem needs O(√κ) ≤ O(√n)
//!   iterations per digit once past 1D;
//! - that window is exact for GMRES, whose residual never grows. CG and BiCGStab minimise other
//!   norms, and their residual can rise far above ‖r₀‖ and stay there for a large part of a solve
//!   that converges (Jacobi-CG on P3 plane elasticity: 9× ‖r₀‖, back below it only after a third
//!   of the iterations). For them a plateau must also last as long as the way to the best residual
//!   did, and none is judged before the residual first falls below ‖r₀‖: until then only the
//!   iteration cap stops the solve;
//! - attainable accuracy: when the recursively updated residual claims the tolerance but the true
//!   residual `b − A x` misses it three times running without halving, the tolerance is below what
//!   f64 arithmetic reaches for this system; the error says which accuracy was reached.
use super::{KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};

/// Fraction by which the best residual must fall to count as progress.
const STAGNATION_FACTOR: f64 = 1.0 - 1e-3;
/// Shortest stagnation window, so short solves are not judged on a handful of iterations.
const STAGNATION_MIN_WINDOW: usize = 200;
/// Stagnation window per √n.
const STAGNATION_SQRT_FACTOR: f64 = 4.0;
/// Consecutive false convergences (recursive residual met, true residual not) that, without the
/// true residual halving, mean the tolerance is out of reach.
const FALSE_CONVERGENCES: usize = 3;

/// Stagnation window for a system of `n` unknowns.
pub(crate) fn stagnation_window(n: usize) -> usize {
    STAGNATION_MIN_WINDOW.max((STAGNATION_SQRT_FACTOR * (n as f64).sqrt()).ceil() as usize)
}

/// Outcome of judging the latest residual.
pub(crate) enum Verdict {
    Continue,
    Converged,
    Failed(String),
}

/// Tracks one solve's residuals and decides when it stops.
pub(crate) struct Monitor {
    method: &'static str,
    bnorm: f64,
    tol: f64,
    max_iter: usize,
    window: usize,
    /// Whether the method's residual never grows (GMRES), so a plateau is judged from the start.
    monotone: bool,
    history: Vec<f64>,
    /// Best residual that counted as progress, and the iteration where it was reached.
    anchor: (f64, usize),
    /// True residuals found when the recursive residual had claimed convergence, in order.
    false_convergences: Vec<f64>,
    bar: Option<ProgressBar>,
}

/// Checks sizes and options, and handles `b = 0` (sets `x = 0`, returns `None`). Otherwise returns
/// the monitor for the solve.
pub(crate) fn prepare<B: Backend>(
    method: &'static str,
    backend: &B,
    a: &dyn LinearOperator<B>,
    m: &dyn LinearOperator<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    opts: &KrylovOptions,
) -> Result<Option<Monitor>> {
    let n = a.nrows();
    let ctx = |what: &str| format!("{method}: {what}");
    if a.ncols() != n {
        return Err(Error::dim(
            ctx("operator columns (must be square)"),
            n,
            a.ncols(),
        ));
    }
    if m.nrows() != n || m.ncols() != n {
        let got = if m.nrows() != n { m.nrows() } else { m.ncols() };
        return Err(Error::dim(ctx("preconditioner size"), n, got));
    }
    if backend.len(b) != n {
        return Err(Error::dim(ctx("right-hand side length"), n, backend.len(b)));
    }
    if backend.len(x) != n {
        return Err(Error::dim(ctx("initial guess length"), n, backend.len(x)));
    }
    for (name, v) in [("rtol", opts.rtol), ("atol", opts.atol)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Error::invalid(format!(
                "{method}: {name} must be finite and non-negative, got {v}"
            )));
        }
    }
    let bnorm = backend.norm2(b)?;
    if !bnorm.is_finite() {
        return Err(Error::invalid(format!(
            "{method}: right-hand side contains NaN or infinite entries"
        )));
    }
    if bnorm == 0.0 {
        backend.fill(x, 0.0)?;
        return Ok(None);
    }
    Ok(Some(Monitor::new(method, bnorm, n, opts)))
}

/// Statistics of the trivial solve `b = 0 → x = 0`.
pub(crate) fn zero_rhs_stats(method: &str) -> SolveStats {
    SolveStats {
        method: method.to_string(),
        residual_history: vec![0.0],
        ..SolveStats::default()
    }
}

/// `r = b − A x`; returns `‖r‖`.
pub(crate) fn residual<B: Backend>(
    backend: &B,
    a: &dyn LinearOperator<B>,
    b: &B::Vector,
    x: &B::Vector,
    r: &mut B::Vector,
) -> Result<f64> {
    a.apply(backend, x, r)?;
    backend.axpby(1.0, b, -1.0, r)?;
    backend.norm2(r)
}

impl Monitor {
    fn new(method: &'static str, bnorm: f64, n: usize, opts: &KrylovOptions) -> Self {
        let bar = opts.progress.then(|| {
            let bar = ProgressBar::new(opts.max_iter as u64);
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} it  ‖r‖ = {msg}")
            {
                bar.set_style(style);
            }
            bar.set_prefix(method);
            bar
        });
        Monitor {
            method,
            bnorm,
            tol: (opts.rtol * bnorm).max(opts.atol),
            max_iter: opts.max_iter,
            window: stagnation_window(n),
            monotone: method == "GMRES",
            history: Vec::new(),
            anchor: (f64::INFINITY, 0),
            false_convergences: Vec::new(),
            bar,
        }
    }

    /// Whether residual `r` meets `‖r‖ ≤ max(rtol‖b‖, atol)`.
    pub fn is_converged(&self, r: f64) -> bool {
        r <= self.tol
    }

    /// Iterations done so far (the history also holds the initial residual).
    pub fn iterations(&self) -> usize {
        self.history.len().saturating_sub(1)
    }

    /// Records the residual of the next iteration (the first call records `‖r₀‖`) and judges it.
    pub fn record(&mut self, r: f64) -> Verdict {
        self.history.push(r);
        self.judge()
    }

    /// Replaces the latest residual (an estimate or recursively updated value) by the true one and
    /// judges it again.
    pub fn correct_last(&mut self, r: f64) -> Verdict {
        let claimed = match self.history.last_mut() {
            Some(last) => {
                let claimed = self.tol >= *last;
                *last = r;
                claimed
            }
            None => {
                self.history.push(r);
                false
            }
        };
        if claimed && r.is_finite() && !self.is_converged(r) {
            self.false_convergences.push(r);
            let k = self.false_convergences.len();
            if k >= FALSE_CONVERGENCES && r > 0.5 * self.false_convergences[k - FALSE_CONVERGENCES] {
                let best = self.false_convergences.iter().copied().fold(f64::INFINITY, f64::min);
                let rel = best / self.bnorm;
                let reachable = 10f64.powf((2.0 * rel).log10().ceil());
                return Verdict::Failed(format!(
                    "the tolerance is below the attainable accuracy: the recursively updated residual met it {k} times, \
                     but the true residual ‖b − A x‖ stays at {best:.3e} (relative {rel:.2e}); f64 arithmetic reaches \
                     no better on this system: use rtol ≥ {reachable:.0e}"
                ));
            }
        } else if !claimed {
            self.false_convergences.clear();
        }
        self.judge()
    }

    /// [`Self::record`] with failure turned into the error: `Ok(true)` once converged.
    pub fn check(&mut self, r: f64) -> Result<bool> {
        let verdict = self.record(r);
        self.settle(verdict)
    }

    /// [`Self::correct_last`] with failure turned into the error: `Ok(true)` once converged.
    pub fn confirm(&mut self, r: f64) -> Result<bool> {
        let verdict = self.correct_last(r);
        self.settle(verdict)
    }

    fn settle(&self, verdict: Verdict) -> Result<bool> {
        match verdict {
            Verdict::Continue => Ok(false),
            Verdict::Converged => Ok(true),
            Verdict::Failed(reason) => Err(self.error(reason)),
        }
    }

    fn judge(&mut self) -> Verdict {
        let k = self.iterations();
        let r = self.history.last().copied().unwrap_or(f64::NAN);
        if let Some(bar) = &self.bar {
            bar.set_position(k as u64);
            bar.set_message(format!("{r:.3e}"));
        }
        if !r.is_finite() {
            return Verdict::Failed("residual became NaN or infinite".into());
        }
        if self.is_converged(r) {
            return Verdict::Converged;
        }
        if r < self.anchor.0 * STAGNATION_FACTOR {
            self.anchor = (r, k);
        }
        if k >= self.max_iter {
            return Verdict::Failed(format!("iteration limit {} reached", self.max_iter));
        }
        let (best_at, plateau) = (self.anchor.1, k - self.anchor.1);
        let judged = self.monotone || best_at > 0;
        let window = if self.monotone { self.window } else { self.window.max(best_at) };
        if judged && plateau >= window {
            // The attainable accuracy: the best true residual measured, else the best seen.
            let true_best = self.false_convergences.iter().copied().fold(f64::INFINITY, f64::min);
            let attained = if true_best.is_finite() { true_best } else { self.anchor.0 };
            let rel = attained / self.bnorm;
            return Verdict::Failed(format!(
                "stagnation: the best residual was not reduced by 0.1% in {window} iterations (a window of max(200, 4√n){}); \
                 the attainable accuracy on this system is about {attained:.3e} (relative {rel:.2e}): use rtol ≥ {:.0e}",
                if self.monotone { "" } else { " or the iterations to the best residual" },
                10f64.powf((2.0 * rel).log10().ceil())
            ));
        }
        Verdict::Continue
    }

    /// `NotConverged` carrying the history so far.
    pub fn error(&self, reason: impl Into<String>) -> Error {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
        let last = self.history.last().copied().unwrap_or(f64::NAN);
        Error::NotConverged {
            method: self.method.to_string(),
            reason: reason.into(),
            iterations: self.iterations(),
            relative_residual: last / self.bnorm,
            history: self.history.clone(),
        }
    }

    /// Statistics of a converged solve.
    pub fn finish(self) -> SolveStats {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
        let initial = self.history.first().copied().unwrap_or(0.0);
        let last = self.history.last().copied().unwrap_or(0.0);
        SolveStats {
            method: self.method.to_string(),
            iterations: self.iterations(),
            initial_residual: initial,
            final_residual: last,
            relative_residual: last / self.bnorm,
            residual_history: self.history,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(max_iter: usize) -> Monitor {
        monitor_for("GMRES", max_iter)
    }

    fn monitor_for(method: &'static str, max_iter: usize) -> Monitor {
        let opts = KrylovOptions {
            rtol: 1e-6,
            atol: 0.0,
            max_iter,
            ..KrylovOptions::default()
        };
        Monitor::new(method, 2.0, 10_000, &opts)
    }

    #[test]
    fn converges_on_relative_tolerance() {
        let mut m = monitor(100);
        assert!(!m.check(1.0).unwrap());
        assert!(!m.check(2.1e-6).unwrap());
        assert!(m.check(2.0e-6).unwrap());
        let s = m.finish();
        assert_eq!((s.iterations, s.residual_history.len()), (2, 3));
        assert!((s.relative_residual - 1e-6).abs() < 1e-20);
    }

    /// Runs `residual(k)` through a monitor until it stops; returns the stopping iteration and reason.
    fn run_until_failure(max_iter: usize, residual: impl Fn(usize) -> f64) -> (usize, String) {
        run_method_until_failure("GMRES", max_iter, residual)
    }

    fn run_method_until_failure(method: &'static str, max_iter: usize, residual: impl Fn(usize) -> f64) -> (usize, String) {
        let mut m = monitor_for(method, max_iter);
        for k in 0.. {
            if let Verdict::Failed(reason) = m.record(residual(k)) {
                return (m.iterations(), reason);
            }
        }
        unreachable!()
    }

    #[test]
    fn stagnation_detected_after_window() {
        // A flat residual fails exactly when the window max(200, 4√n) has elapsed (n = 10⁴ here),
        // whatever the iteration cap.
        let (k, reason) = run_until_failure(1_000_000, |_| 1.0);
        assert_eq!(k, 400);
        assert!(reason.contains("stagnation"), "{reason}");
        let (k, _) = run_until_failure(1000, |_| 1.0);
        assert_eq!(k, 400);
        assert_eq!(stagnation_window(100), 200);
        assert_eq!(stagnation_window(1_000_000), 4000);
        // A slow but steady decrease (0.06% per iteration) is progress: it runs into the limit.
        let (k, reason) = run_until_failure(600, |k| (1.0 - 0.6e-3f64).powi(k as i32));
        assert_eq!(k, 600);
        assert!(reason.contains("iteration limit 600"), "{reason}");
    }

    #[test]
    fn a_residual_hump_is_not_stagnation_for_cg() {
        // Jacobi-CG on P3 plane elasticity: the residual climbs to 9‖r₀‖ and comes back below ‖r₀‖
        // only after 1500 iterations, far beyond the 400-iteration window; then it converges.
        let hump = |k: usize| if k < 1500 { 1.0 + 8.0 * (std::f64::consts::PI * k as f64 / 1500.0).sin() + 1e-3 } else { 0.99f64.powi((k - 1500) as i32) };
        let mut m = monitor_for("CG", 1_000_000);
        let stop = (0..).map(|k| (k, m.record(if k == 0 { 1.0 } else { hump(k) }))).find(|(_, v)| !matches!(v, Verdict::Continue));
        match stop {
            Some((k, Verdict::Converged)) => assert!((2700..2900).contains(&k), "{k}"),
            Some((k, Verdict::Failed(r))) => panic!("failed at {k}: {r}"),
            _ => unreachable!(),
        }
        // The same history under GMRES rules is a plateau (GMRES's residual cannot do this).
        let (k, reason) = run_method_until_failure("GMRES", 1_000_000, |k| if k == 0 { 1.0 } else { hump(k) });
        assert_eq!(k, 400);
        assert!(reason.contains("stagnation"), "{reason}");
    }

    #[test]
    fn a_cg_plateau_must_outlast_the_way_to_the_best_residual() {
        // Best residual reached at iteration 1000 (below ‖r₀‖), then flat: the window is
        // max(400, 1000) = 1000, so the solve fails at 2000, not at 1400.
        let r = |k: usize| if k <= 1000 { 0.999f64.powi(k as i32) } else { 0.999f64.powi(1000) };
        let (k, reason) = run_method_until_failure("CG", 1_000_000, r);
        assert_eq!(k, 2000);
        assert!(reason.contains("or the iterations to the best residual"), "{reason}");
        // Best reached early (iteration 100): the 4√n window rules.
        let r = |k: usize| 0.99f64.powi(k.min(100) as i32);
        let (k, _) = run_method_until_failure("BiCGStab", 1_000_000, r);
        assert_eq!(k, 100 + 400);
    }

    #[test]
    fn unattainable_tolerance_fails_after_three_false_convergences() {
        // The recursive residual dives below 2e-6 (tol = rtol·‖b‖) but the true one sits at 8e-6.
        let mut m = monitor(1_000_000);
        m.record(1.0);
        let mut verdicts = Vec::new();
        for _ in 0..5 {
            for r in [1e-3, 1e-5, 1e-6] {
                if !matches!(m.record(r), Verdict::Continue | Verdict::Converged) {
                    panic!("failed early");
                }
            }
            verdicts.push(m.correct_last(8e-6));
            if matches!(verdicts.last(), Some(Verdict::Failed(_))) {
                break;
            }
        }
        assert_eq!(verdicts.len(), 3);
        match verdicts.pop() {
            Some(Verdict::Failed(r)) => assert!(r.contains("attainable accuracy") && r.contains("8.000e-6") && r.contains("rtol ≥ 1e-5"), "{r}"),
            _ => panic!("expected a failure"),
        }
        // A true residual that keeps halving is progress, not a plateau.
        let mut m = monitor(1_000_000);
        m.record(1.0);
        for t in [1e-4, 4e-5, 1.5e-5, 5e-6] {
            m.record(1e-7);
            assert!(matches!(m.correct_last(t), Verdict::Continue));
        }
    }

    #[test]
    fn nan_residual_fails() {
        let mut m = monitor(10);
        m.record(1.0);
        assert!(matches!(m.record(f64::NAN), Verdict::Failed(r) if r.contains("NaN")));
    }
}
