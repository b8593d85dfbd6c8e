//! Shared helpers for the integration tests: running a test body on every backend, distorted
//! meshes, the physics cases, relative differences and manufactured-solution convergence studies.
#![allow(dead_code)]
use galerkin::physics::{Coefficient, Diffusion, Elasticity, Mass, PointwisePhysics, Sum};
use std::collections::BTreeMap;
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

/// Runs `$body` with `$be` bound to the CPU backend, then to the first GPU where one is found (the
/// GPU part prints `SKIPPED: no CUDA GPU` without one, and fails when `GALERKIN_REQUIRE_GPU=1`).
/// The body is written once and compiled for both backends.
#[macro_export]
macro_rules! on_backends {
    (|$be:ident| $body:block) => {{
        {
            let $be = &galerkin::backend::Cpu;
            $body
        }
        if let Some(gpu) = galerkin::backend::cuda::test_gpu() {
            let $be = &gpu;
            $body
        }
    }};
}

/// A mesh of `cell` with interior vertices moved off the grid, so tensor cells are not
/// parallelograms and the non-affine Jacobian path is exercised.
pub fn distorted(cell: CellType, n: usize) -> Arc<Mesh> {
    let mut m: Mesh = match cell.dim() {
        1 => generate::interval(n, 0.0, 1.0),
        2 => generate::rectangle(n, n, [0.0; 2], [1.0; 2], cell),
        _ => generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], cell),
    }
    .unwrap();
    let h = 1.0 / n as f64;
    for (i, x) in m.coords.iter_mut().enumerate() {
        let interior = (0..m.dim).all(|k| x[k] > 1e-9 && x[k] < 1.0 - 1e-9);
        if interior {
            for (k, xk) in x.iter_mut().enumerate().take(m.dim) {
                *xk += 0.2 * h * (((i * 7 + k * 3) % 5) as f64 / 4.0 - 0.5);
            }
        }
    }
    Arc::new(m)
}

/// max |a − b| / max |a| (NaN anywhere counts as infinitely different).
pub fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    if a.iter().chain(b).any(|v| v.is_nan()) {
        return f64::INFINITY;
    }
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale
}

/// The physics cases for a space of `ncomp` components in `dim` dimensions: constant, per-region
/// and function coefficients, sums with a reaction/mass term.
pub fn physics_cases(dim: usize, ncomp: usize) -> Vec<(&'static str, Box<dyn PointwisePhysics>)> {
    let kappa_fn = Coefficient::function(|x| 1.0 + x[0] * x[0] + 0.5 * x[1]);
    let region: Coefficient = Coefficient::PerRegion(BTreeMap::from([(1, 2.5)]));
    if ncomp == 1 {
        vec![
            ("diffusion κ=const", Box::new(Diffusion::new(1.7))),
            ("diffusion κ(region)", Box::new(Diffusion::new(region))),
            ("diffusion κ(x) + mass", Box::new(Sum(vec![Box::new(Diffusion::new(kappa_fn.clone())), Box::new(Mass::new(0.3, 1))]))),
            ("mass ρ(x)", Box::new(Mass::new(kappa_fn, 1))),
        ]
    } else {
        vec![
            ("elasticity", Box::new(Elasticity::lame(1.3, 0.8, dim))),
            (
                "elasticity μ(x) + mass",
                Box::new(Sum(vec![
                    Box::new(Elasticity::lame(1.3, Coefficient::function(|x| 1.0 + x[1]), dim)),
                    Box::new(Mass::new(0.5, dim)),
                ])),
            ),
        ]
    }
}

/// A deterministic vector in [-1, 1).
pub fn test_vector(n: usize) -> Vec<f64> {
    (0..n).map(|i| ((i * 37 % 101) as f64 / 50.0) - 1.0).collect()
}

/// SplitMix64: reproducible inputs without a dependency.
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.uniform()).collect()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}


pub mod npy;
#[allow(unused_imports)]
pub use npy::write_npy;

/// Timoshenko tip deflection of a cantilever with an end load P: PL³/(3EI) + PL/(κGA).
pub fn timoshenko(p: f64, l: f64, h: f64, w: f64, e: f64, nu: f64) -> f64 {
    let i = w * h.powi(3) / 12.0;
    let g = e / (2.0 * (1.0 + nu));
    p * l.powi(3) / (3.0 * e * i) + p * l / (5.0 / 6.0 * g * w * h)
}
