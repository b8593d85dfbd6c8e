//! Shared problems of the DG tests (CPU and GPU).
#![allow(dead_code)]
use galerkin::dg::{BoundaryCondition, DgProblem, Exact, Field, IntervalMesh, Method, Penalty};
use std::path::PathBuf;

/// The seed's example: −u″ = f on (0, 1), u = (1 − x) e^{−x²}, u(0) = 1, u(1) = 0, SIPG,
/// σ/h penalty, `n` elements of degree `k` in the seed's monomial basis.
pub fn seed(n: usize, k: usize, sigma: f64) -> (DgProblem, Exact) {
    let mut p = DgProblem::new(IntervalMesh::uniform(n, 0.0, 1.0).unwrap(), k);
    p.basis = galerkin::dg::BasisKind::Monomial;
    p.penalty = Penalty::seed(sigma);
    p.f = Field::func(|x| (-x * x).exp() * (2.0 - 6.0 * x - 4.0 * x * x + 4.0 * x * x * x));
    p.left = BoundaryCondition::Dirichlet(1.0);
    p.right = BoundaryCondition::Dirichlet(0.0);
    let exact = Exact {
        u: Field::func(|x| (1.0 - x) * (-x * x).exp()),
        du: Some(Field::func(|x| (-x * x).exp() * (-1.0 - 2.0 * x + 2.0 * x * x))),
    };
    (p, exact)
}

/// The independent reference of the seed's coefficients (tests/data/dg_seed_reference.py).
pub fn seed_reference() -> Vec<f64> {
    let path = data_dir().join("dg_seed_reference.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["coefficients"].as_array().unwrap().iter().map(|c| c.as_f64().unwrap()).collect()
}

/// tests/data, from the crate (cargo test) or from the repository root (the GPU bundle).
pub fn data_dir() -> PathBuf {
    let local = PathBuf::from("crates/galerkin/tests/data");
    if local.exists() {
        local
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
    }
}

/// examples/, from the repository root or the crate.
pub fn examples_dir() -> PathBuf {
    let local = PathBuf::from("examples");
    if local.join("dg-seed.toml").exists() {
        local
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    }
}

/// A manufactured problem with variable coefficients, a Dirichlet left end and a Neumann right
/// end on a randomly perturbed mesh: u = eˣ sin 3x, a = 1 + x², c = 1 + x.
pub fn manufactured(n: usize, k: usize, method: Method) -> (DgProblem, Exact) {
    let u = |x: f64| x.exp() * (3.0 * x).sin();
    let du = |x: f64| x.exp() * ((3.0 * x).sin() + 3.0 * (3.0 * x).cos());
    let d2u = |x: f64| x.exp() * (6.0 * (3.0 * x).cos() - 8.0 * (3.0 * x).sin());
    let mut p = DgProblem::new(IntervalMesh::random(n, 0.0, 1.0, 0.4, 11).unwrap(), k);
    p.method = method;
    p.a = Field::func(|x| 1.0 + x * x);
    p.c = Field::func(|x| 1.0 + x);
    p.f = Field::func(move |x| -(2.0 * x * du(x) + (1.0 + x * x) * d2u(x)) + (1.0 + x) * u(x));
    p.left = BoundaryCondition::Dirichlet(u(0.0));
    p.right = BoundaryCondition::Neumann(2.0 * du(1.0));
    (p, Exact { u: Field::func(u), du: Some(Field::func(du)) })
}

pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}
