//! Restarted GMRES(m) with right preconditioning, classical Gram–Schmidt applied twice (CGS2) and
//! Givens rotations.
//!
//! CGS2 is as stable as modified Gram–Schmidt (the second pass removes what rounding left of the
//! first; Giraud, Langou, Rozložník 2005) and takes all projections of a pass in one reduction
//! ([`Backend::dots`], [`Backend::add_combination`]): on a GPU an Arnoldi step waits for the host
//! four times instead of 2j + 2 times at step j — the difference between a launch-bound and a
//! bandwidth-bound GMRES(300) on small systems.
//!
//! Right preconditioning (`A M u = b`, `x = M u`) makes the least-squares residual GMRES minimizes
//! the true residual `b − A x`, so its per-iteration estimate `|gⱼ₊₁|` is what the stopping test
//! sees inside a cycle. At the end of every cycle (restart, convergence, or failure) `x` is updated
//! and `b − A x` is recomputed; it replaces the estimate in the history and decides convergence.
use super::monitor::{prepare, residual, zero_rhs_stats, Verdict};
use super::{KrylovOptions, SolveStats};
use crate::backend::{Backend, LinearOperator};
use crate::{Error, Result};

const METHOD: &str = "GMRES";

/// Solve `A x = b` from the initial guess in `x`, preconditioned by `m` (≈ A⁻¹).
pub fn gmres<B: Backend>(
    backend: &B,
    a: &dyn LinearOperator<B>,
    m: &dyn LinearOperator<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    opts: &KrylovOptions,
) -> Result<SolveStats> {
    if opts.restart == 0 {
        return Err(Error::invalid("GMRES: restart length must be at least 1"));
    }
    let Some(mut mon) = prepare(METHOD, backend, a, m, b, x, opts)? else {
        return Ok(zero_rhs_stats(METHOD));
    };
    let n = a.nrows();
    // A Krylov space never exceeds dimension n, so longer cycles only waste memory.
    let len = opts.restart.min(n);
    // The basis (on the backend) and the Hessenberg matrix (on the host) grow with the restart
    // length: refuse at once what cannot fit rather than abort on a failed allocation.
    let mut need = crate::memory::Estimate::default();
    need.add("GMRES Hessenberg matrix", 8.0 * (len as f64 + 1.0) * len as f64);
    if backend.name() == "cpu" {
        need.add("GMRES basis", 8.0 * (len as f64 + 4.0) * n as f64);
    }
    crate::memory::check(&format!("host (GMRES({len}) on {n} unknowns)"), &need, crate::memory::host_available().as_ref())?;
    let mut r = backend.zeros(n)?;
    let mut w = backend.zeros(n)?;
    let mut z = backend.zeros(n)?;
    let mut basis = (0..=len)
        .map(|_| backend.zeros(n))
        .collect::<Result<Vec<_>>>()?;
    let mut hess = Hessenberg::new(len);

    let mut beta = residual(backend, a, b, x, &mut r)?;
    if mon.check(beta)? {
        return Ok(mon.finish());
    }
    loop {
        backend.copy(&r, &mut basis[0])?;
        backend.scale(1.0 / beta, &mut basis[0])?;
        hess.reset(beta);
        for j in 0..len {
            m.apply(backend, &basis[j], &mut z)?;
            a.apply(backend, &z, &mut w)?;
            let wnorm = backend.norm2(&w)?;
            let vs = &basis[..=j];
            let mut h = vec![0.0; j + 1];
            for _pass in 0..2 {
                let hp = backend.dots(&w, vs)?;
                backend.add_combination(&hp.iter().map(|v| -v).collect::<Vec<_>>(), vs, &mut w)?;
                h.iter_mut().zip(&hp).for_each(|(a, b)| *a += b);
            }
            for (i, &hi) in h.iter().enumerate() {
                hess.set(i, j, hi);
            }
            let hnext = backend.norm2(&w)?;
            hess.set(j + 1, j, hnext);
            let estimate = hess.rotate_column(j);
            // Happy breakdown: A M v_j lies in the current Krylov space, the solution is in reach.
            let exhausted = !(hnext > f64::EPSILON * wnorm);
            if !matches!(mon.record(estimate), Verdict::Continue) || exhausted {
                break;
            }
            backend.copy(&w, &mut basis[j + 1])?;
            backend.scale(1.0 / hnext, &mut basis[j + 1])?;
        }
        // x += M (V y), with the combination V y accumulated in w.
        let y = hess.solve();
        backend.fill(&mut w, 0.0)?;
        backend.add_combination(&y, &basis[..y.len()], &mut w)?;
        m.apply(backend, &w, &mut z)?;
        backend.axpy(1.0, &z, x)?;
        beta = residual(backend, a, b, x, &mut r)?;
        if mon.confirm(beta)? {
            return Ok(mon.finish());
        }
    }
}

/// The `(m+1)×m` Hessenberg matrix of one cycle, reduced to upper triangular form by Givens
/// rotations as columns arrive, with the rotated right-hand side `g = Qᵀ β e₁`.
struct Hessenberg {
    m: usize,
    /// Column-major, leading dimension `m + 1`.
    h: Vec<f64>,
    cs: Vec<f64>,
    sn: Vec<f64>,
    g: Vec<f64>,
    /// Columns reduced so far.
    cols: usize,
}

impl Hessenberg {
    fn new(m: usize) -> Self {
        Hessenberg {
            m,
            h: vec![0.0; (m + 1) * m],
            cs: vec![0.0; m],
            sn: vec![0.0; m],
            g: vec![0.0; m + 1],
            cols: 0,
        }
    }

    fn reset(&mut self, beta: f64) {
        self.g.fill(0.0);
        self.g[0] = beta;
        self.cols = 0;
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.h[i + j * (self.m + 1)]
    }

    fn set(&mut self, i: usize, j: usize, v: f64) {
        self.h[i + j * (self.m + 1)] = v;
    }

    /// Applies the previous rotations to column `j`, creates the one zeroing `h[j+1][j]`, updates
    /// `g`, and returns the residual estimate `|g[j+1]|`.
    fn rotate_column(&mut self, j: usize) -> f64 {
        for i in 0..j {
            let (a, b) = (self.at(i, j), self.at(i + 1, j));
            self.set(i, j, self.cs[i] * a + self.sn[i] * b);
            self.set(i + 1, j, -self.sn[i] * a + self.cs[i] * b);
        }
        let (a, b) = (self.at(j, j), self.at(j + 1, j));
        let rad = a.hypot(b);
        let (c, s) = if rad == 0.0 {
            (1.0, 0.0)
        } else {
            (a / rad, b / rad)
        };
        self.cs[j] = c;
        self.sn[j] = s;
        self.set(j, j, rad);
        self.set(j + 1, j, 0.0);
        self.g[j + 1] = -s * self.g[j];
        self.g[j] *= c;
        self.cols = j + 1;
        self.g[j + 1].abs()
    }

    /// Back substitution `R y = g` on the reduced columns.
    fn solve(&self) -> Vec<f64> {
        let k = self.cols;
        let mut y = self.g[..k].to_vec();
        for i in (0..k).rev() {
            let s: f64 = (i + 1..k).map(|j| self.at(i, j) * y[j]).sum();
            y[i] = (y[i] - s) / self.at(i, i);
        }
        y
    }
}
