//! Shared helpers for the integration tests: manufactured-solution convergence studies.
#![allow(dead_code)]
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::norms::{error_norms, ErrorNorms};
use galerkin::operator::{AssemblyLevel, VectorFn};
use galerkin::problem::{LinearProblem, SolverConfig, SolverMethod};
use galerkin::solver::precond::PreconditionerKind;
use galerkin::solver::KrylovOptions;
use galerkin::space::FunctionSpace;
use std::sync::Arc;

/// Structured mesh of the unit interval/square/cube with `n` divisions per axis.
pub fn unit_mesh(cell: CellType, n: usize) -> Arc<Mesh> {
    Arc::new(match cell.dim() {
        1 => generate::interval(n, 0.0, 1.0),
        2 => generate::rectangle(n, n, [0.0; 2], [1.0; 2], cell),
        _ => generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], cell),
    }
    .expect("mesh"))
}

/// Observed convergence rates between successive (h, error) pairs.
pub fn rates(h: &[f64], e: &[f64]) -> Vec<f64> {
    (1..h.len()).map(|i| (e[i - 1] / e[i]).ln() / (h[i - 1] / h[i]).ln()).collect()
}

/// A direct solve (exact up to round-off) so the measured error is the discretization error.
pub fn direct() -> SolverConfig {
    SolverConfig { method: SolverMethod::Direct, preconditioner: PreconditionerKind::None, options: KrylovOptions::default() }
}

pub fn cg(rtol: f64) -> SolverConfig {
    SolverConfig {
        method: SolverMethod::Cg,
        preconditioner: PreconditionerKind::Jacobi,
        options: KrylovOptions { rtol, max_iter: 20_000, ..Default::default() },
    }
}

/// Solve `build(space)` on each mesh size and return (h, errors).
pub fn study(
    cell: CellType,
    degree: usize,
    ncomp: usize,
    sizes: &[usize],
    build: impl Fn(Arc<FunctionSpace>) -> LinearProblem,
    exact: &VectorFn,
) -> (Vec<f64>, Vec<ErrorNorms>) {
    let mut hs = Vec::new();
    let mut errs = Vec::new();
    for &n in sizes {
        let space = Arc::new(FunctionSpace::lagrange(unit_mesh(cell, n), degree, ncomp).expect("space"));
        let sol = build(space.clone()).solve(AssemblyLevel::Full, &direct()).expect("solve");
        errs.push(error_norms(&space, &sol.u, exact).expect("norms"));
        hs.push(1.0 / n as f64);
    }
    (hs, errs)
}

/// Assert the last observed L2 and H1 rates are within `tol` of k+1 and k.
pub fn assert_rates(label: &str, degree: usize, h: &[f64], errs: &[ErrorNorms], tol: f64) {
    let l2v: Vec<f64> = errs.iter().map(|e| e.l2).collect();
    let h1v: Vec<f64> = errs.iter().map(|e| e.h1_semi).collect();
    let (rl2, rh1) = (rates(h, &l2v), rates(h, &h1v));
    let (l2, h1) = (Sci(&l2v), Sci(&h1v));
    eprintln!("{label}: L2 {l2:.3e} rates {rl2:.3?}; H1 {h1:.3e} rates {rh1:.3?}");
    let (a, b) = (*rl2.last().unwrap(), *rh1.last().unwrap());
    assert!((a - (degree as f64 + 1.0)).abs() < tol, "{label}: L2 rate {a:.3}, expected {}", degree + 1);
    assert!((b - degree as f64).abs() < tol, "{label}: H1 rate {b:.3}, expected {degree}");
}

/// Prints a slice of numbers in scientific notation.
pub struct Sci<'a>(pub &'a [f64]);

impl std::fmt::LowerExp for Sci<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|v| format!("{v:.3e}")).collect();
        write!(f, "[{}]", parts.join(", "))
    }
}
