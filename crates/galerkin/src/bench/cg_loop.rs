//! The preconditioned CG iteration as a resident loop, for timing: vectors allocated once on the
//! backend, then any number of iterations of exactly the operations of [`crate::solver::cg`]'s loop
//! (one operator apply, one fused update, one preconditioner apply, two dot products and an axpby),
//! without convergence tests. A clock around `iterate(k)` measures k iterations and nothing else:
//! no uploads, no allocation, no set-up. A test checks it computes what `cg` computes.
use super::timing::{measure, Clock, Timing};
use crate::backend::{Backend, LinearOperator};
use crate::Result;

/// CG state on backend `B`.
pub struct CgLoop<'a, B: Backend> {
    be: &'a B,
    a: &'a dyn LinearOperator<B>,
    m: &'a dyn LinearOperator<B>,
    b: &'a B::Vector,
    pub x: B::Vector,
    r: B::Vector,
    z: B::Vector,
    p: B::Vector,
    q: B::Vector,
    rho: f64,
}

impl<'a, B: Backend> CgLoop<'a, B> {
    /// Start from `x = 0`: `r = b`, `z = M r`, `p = z`.
    pub fn new(be: &'a B, a: &'a dyn LinearOperator<B>, m: &'a dyn LinearOperator<B>, b: &'a B::Vector) -> Result<Self> {
        let n = a.nrows();
        let mut s = CgLoop { be, a, m, b, x: be.zeros(n)?, r: be.zeros(n)?, z: be.zeros(n)?, p: be.zeros(n)?, q: be.zeros(n)?, rho: 0.0 };
        s.restart()?;
        Ok(s)
    }

    fn restart(&mut self) -> Result<()> {
        let be = self.be;
        be.fill(&mut self.x, 0.0)?;
        be.copy(self.b, &mut self.r)?;
        self.m.apply(be, &self.r, &mut self.z)?;
        self.rho = be.dot(&self.r, &self.z)?;
        be.copy(&self.z, &mut self.p)
    }

    /// `k` CG iterations. A breakdown (converged to round-off) restarts from `x = 0`, so a long
    /// timing run keeps doing the same work.
    pub fn iterate(&mut self, k: usize) -> Result<()> {
        let be = self.be;
        for _ in 0..k {
            self.a.apply(be, &self.p, &mut self.q)?;
            let pq = be.dot(&self.p, &self.q)?;
            let alpha = self.rho / pq;
            be.cg_update(alpha, &self.p, &self.q, &mut self.x, &mut self.r)?;
            self.m.apply(be, &self.r, &mut self.z)?;
            let rho_new = be.dot(&self.r, &self.z)?;
            if !(pq > 0.0 && rho_new > f64::MIN_POSITIVE && rho_new.is_finite()) {
                self.restart()?;
                continue;
            }
            be.axpby(1.0, &self.z, rho_new / self.rho, &mut self.p)?;
            self.rho = rho_new;
        }
        Ok(())
    }
}

/// Seconds per CG iteration: `runs` timed runs of `k` iterations each (after one untimed run),
/// divided by `k`.
pub fn time_cg<B: Backend>(clock: &mut dyn Clock, be: &B, a: &dyn LinearOperator<B>, m: &dyn LinearOperator<B>, b: &B::Vector, k: usize, runs: usize) -> Result<Timing> {
    let mut cg = CgLoop::new(be, a, m, b)?;
    Ok(measure(clock, 1, runs, || cg.iterate(k))?.per(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Cpu;
    use crate::solver::testing::{laplacian_2d, rhs};
    use crate::solver::{cg, Jacobi, KrylovOptions};

    /// After k iterations the loop holds exactly the iterate of `solver::cg` capped at k.
    #[test]
    fn loop_computes_what_cg_computes() {
        let a = laplacian_2d(12);
        let b = rhs(a.nrows);
        let m = Jacobi::new(&Cpu, &a.diagonal()).unwrap();
        for k in [1, 7, 30] {
            let mut x = vec![0.0; a.nrows];
            let opts = KrylovOptions { rtol: 1e-300, atol: 0.0, max_iter: k, ..Default::default() };
            assert!(cg(&Cpu, &a, &m, &b, &mut x, &opts).is_err(), "capped solve should stop at the limit");
            let mut l = CgLoop::new(&Cpu, &a, &m, &b).unwrap();
            l.iterate(k).unwrap();
            assert_eq!(l.x, x, "k = {k}");
        }
        // Far past convergence the loop keeps running (restarting on breakdown) without NaN.
        let mut l = CgLoop::new(&Cpu, &a, &m, &b).unwrap();
        l.iterate(2000).unwrap();
        assert!(l.x.iter().all(|v| v.is_finite()));
        let t = time_cg(&mut super::super::timing::HostClock::default(), &Cpu, &a, &m, &b, 5, 3).unwrap();
        assert!(t.median > 0.0 && t.runs == 3);
    }
}
