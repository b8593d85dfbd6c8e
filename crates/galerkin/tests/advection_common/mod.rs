//! Manufactured DG advection problems shared by the CPU and GPU tests.
#![allow(dead_code)]
use galerkin::advection::{AdvectionProblem, Formula, Method, Precond, SolverConfig, Velocity};
use galerkin::mesh::{generate, CellType};
use galerkin::solver::KrylovOptions;
use std::sync::Arc;

pub fn formula(s: &str) -> Formula {
    Formula::parse(s, "test").unwrap()
}

fn add(a: Formula, b: Formula) -> Formula {
    Formula::Add(Box::new(a), Box::new(b))
}
fn mul(a: Formula, b: Formula) -> Formula {
    Formula::Mul(Box::new(a), Box::new(b))
}

/// The smooth exact solution of the convergence tests.
pub const EXACT: &str = "sin(pi*x)*cos(2*y) + x*y";
/// A non-constant velocity without stagnation (components > 0 on the unit square), ∇·β = 0.2.
pub const BETA: [&str; 2] = ["1 + 0.5*y + 0.2*x", "0.5 + 0.25*x^2"];

/// β·∇u + c u = f with u = [`EXACT`], c = 1 + x, inflow data u on every boundary edge.
pub fn manufactured(n: usize, cell: CellType, degree: usize) -> (AdvectionProblem, Formula) {
    let u = formula(EXACT);
    let (bx, by) = (formula(BETA[0]), formula(BETA[1]));
    let c = formula("1 + x");
    let f = add(add(mul(bx.clone(), u.derivative(0).unwrap()), mul(by.clone(), u.derivative(1).unwrap())), mul(c.clone(), u.clone()));
    let mesh = generate::rectangle(n, n, [0.0, 0.0], [1.0, 1.0], cell).unwrap();
    let p = AdvectionProblem::new(Arc::new(mesh), degree, Velocity::field(bx, by).unwrap(), c, f, vec![], Some(u.clone())).unwrap();
    (p, u)
}

/// A rotating flow around (0.5, 0.5) with a source, inflow data 1 where the flow enters.
pub fn rotating(n: usize, cell: CellType, degree: usize) -> AdvectionProblem {
    let mesh = generate::rectangle(n, n, [0.0, 0.0], [1.0, 1.0], cell).unwrap();
    let v = Velocity::field(formula("-(y - 0.5) + 0.1"), formula("x - 0.5")).unwrap();
    AdvectionProblem::new(Arc::new(mesh), degree, v, formula("0.5"), formula("exp(-20*((x-0.3)^2 + (y-0.6)^2))"), vec![], Some(formula("1"))).unwrap()
}

/// One velocity per cell (varying from cell to cell, all entering through xmin/ymin).
pub fn per_cell(n: usize, cell: CellType, degree: usize) -> AdvectionProblem {
    let mesh = generate::rectangle(n, n, [0.0, 0.0], [1.0, 1.0], cell).unwrap();
    let v: Vec<[f64; 2]> = (0..mesh.num_cells()).map(|c| [1.0 + 0.3 * ((c * 7) % 5) as f64 / 5.0, 0.6 + 0.2 * ((c * 3) % 4) as f64 / 4.0]).collect();
    AdvectionProblem::new(Arc::new(mesh), degree, Velocity::PerCell(v), formula("1"), formula("x + y"), vec![], Some(formula("sin(x) + y"))).unwrap()
}

pub fn config(method: Method, preconditioner: Precond) -> SolverConfig {
    SolverConfig { method, preconditioner, options: KrylovOptions { rtol: 1e-12, atol: 1e-50, max_iter: 5000, restart: 60, progress: false } }
}

pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}
