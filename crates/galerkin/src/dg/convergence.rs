//! Convergence tables: the same problem on nested refinements (every element halved), errors in
//! L2 and the broken H1 seminorm, and the observed rates log(e_{i−1}/e_i)/log(h_{i−1}/h_i).
use super::norms::{errors, Exact};
use super::problem::DgProblem;
use super::solve::{solve_cpu, solve_cuda, DgSolver};
use crate::backend::cuda::CudaBackend;
use crate::io::{fitted_slope, plot_convergence};
use crate::Result;
use serde::Serialize;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct Level {
    pub elements: usize,
    pub h: f64,
    pub l2: f64,
    pub h1: f64,
    /// Rates against the previous level (absent on the first).
    pub rate_l2: Option<f64>,
    pub rate_h1: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ConvergenceTable {
    pub method: String,
    pub degree: usize,
    pub basis: String,
    pub levels: Vec<Level>,
    /// Least-squares slopes over all levels.
    pub slope_l2: Option<f64>,
    pub slope_h1: Option<f64>,
}

impl ConvergenceTable {
    /// The last observed rates (the asymptotic ones).
    pub fn last_rates(&self) -> (f64, f64) {
        let l = self.levels.last();
        (l.and_then(|l| l.rate_l2).unwrap_or(f64::NAN), l.and_then(|l| l.rate_h1).unwrap_or(f64::NAN))
    }

    pub fn write(&self, dir: &Path) -> Result<Vec<std::path::PathBuf>> {
        let json = dir.join("convergence.json");
        crate::io::write_json(&json, self)?;
        let png = dir.join("convergence.png");
        let h: Vec<f64> = self.levels.iter().map(|l| l.h).collect();
        let l2: Vec<f64> = self.levels.iter().map(|l| l.l2).collect();
        let h1: Vec<f64> = self.levels.iter().map(|l| l.h1).collect();
        let title = format!("{} k = {} ({})", self.method.to_uppercase(), self.degree, self.basis);
        plot_convergence(&png, &title, &[("L2", &h, &l2), ("broken H1", &h, &h1)])?;
        Ok(vec![json, png])
    }
}

/// Solves `p` and `refinements` refinements of it with `solver` (on the GPU when `gpu` is given).
pub fn study(p: &DgProblem, exact: &Exact, refinements: usize, solver: &DgSolver, gpu: Option<&CudaBackend>) -> Result<ConvergenceTable> {
    let mut levels: Vec<Level> = Vec::new();
    let mut problem = p.clone();
    for i in 0..=refinements {
        if i > 0 {
            problem.mesh = problem.mesh.refined();
        }
        let sol = match gpu {
            Some(be) => solve_cuda(be, &problem, solver)?,
            None => solve_cpu(&problem, solver)?,
        };
        let e = errors(&problem, &sol.coefficients, exact)?;
        let h = problem.mesh.h_max();
        let rate = |prev: f64, cur: f64, hp: f64| (prev / cur).ln() / (hp / h).ln();
        let (rate_l2, rate_h1) = match levels.last() {
            Some(l) => (Some(rate(l.l2, e.l2, l.h)), Some(rate(l.h1, e.h1, l.h))),
            None => (None, None),
        };
        levels.push(Level { elements: problem.mesh.len(), h, l2: e.l2, h1: e.h1, rate_l2, rate_h1 });
    }
    let col = |f: fn(&Level) -> f64| levels.iter().map(f).collect::<Vec<f64>>();
    let (h, l2, h1) = (col(|l| l.h), col(|l| l.l2), col(|l| l.h1));
    Ok(ConvergenceTable {
        method: p.method.name().into(),
        degree: p.degree,
        basis: p.basis.name().into(),
        slope_l2: fitted_slope(&h, &l2),
        slope_h1: fitted_slope(&h, &h1),
        levels,
    })
}
