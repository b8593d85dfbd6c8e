//! Errors of a DG solution against an exact one: L2, the broken H1 seminorm (Σ_E ‖u′ − u_h′‖²_E)^½
//! and the largest jump of u_h, by Gauss quadrature with k + 5 points per element.
use super::basis::Tabulation;
use super::problem::{BoundaryCondition, DgProblem, Field};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;

/// The exact solution, and its derivative when known (otherwise a fourth-order central
/// difference of `u` with step 10⁻⁴·max(1, |x|): error about 10⁻¹² relative for smooth u).
#[derive(Clone, Debug)]
pub struct Exact {
    pub u: Field,
    pub du: Option<Field>,
}

impl Exact {
    pub fn derivative(&self, x: f64) -> f64 {
        match &self.du {
            Some(d) => d.eval(x),
            None => {
                let h = 1e-4 * x.abs().max(1.0);
                let u = |t: f64| self.u.eval(t);
                (8.0 * (u(x + h) - u(x - h)) - (u(x + 2.0 * h) - u(x - 2.0 * h))) / (12.0 * h)
            }
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DgErrors {
    pub l2: f64,
    /// Broken H1 seminorm of the error.
    pub h1: f64,
    /// ‖u‖_L2, for relative errors.
    pub l2_exact: f64,
    /// Largest |u_h(x_f⁻) − u_h(x_f⁺)| over interior faces.
    pub max_jump: f64,
}

/// u_h and u_h′ at `x` (the left element wins at a vertex).
pub fn evaluate(p: &DgProblem, tab: &Tabulation, coef: &[f64], x: f64) -> (f64, f64) {
    let nodes = p.mesh.nodes();
    let e = nodes.partition_point(|&v| v < x).saturating_sub(1).min(p.mesh.len() - 1);
    let b = p.block();
    let h = p.mesh.h(e);
    let xi = (2.0 * (x - nodes[e]) / h - 1.0).clamp(-1.0, 1.0);
    let (u, du) = tab.evaluate(&coef[e * b..(e + 1) * b], xi);
    (u, du * 2.0 / h)
}

/// Errors of the coefficients `coef` of problem `p` against `exact`.
pub fn errors(p: &DgProblem, coef: &[f64], exact: &Exact) -> Result<DgErrors> {
    if coef.len() != p.ndofs() {
        return Err(Error::dim("DG solution", p.ndofs(), coef.len()));
    }
    let tab = Tabulation::new(p.basis, p.degree, p.degree + 5)?;
    let b = p.block();
    let mesh = &p.mesh;
    let sums = (0..mesh.len())
        .into_par_iter()
        .map(|e| {
            let (x0, h) = (mesh.nodes()[e], mesh.h(e));
            let c = &coef[e * b..(e + 1) * b];
            let mut acc = [0.0; 3];
            for q in 0..tab.npoints() {
                let x = x0 + 0.5 * h * (tab.points[q] + 1.0);
                let w = 0.5 * h * tab.weights[q];
                let (mut u, mut du) = (0.0, 0.0);
                for j in 0..b {
                    u += c[j] * tab.phi[q * b + j];
                    du += c[j] * tab.dphi[q * b + j];
                }
                let ue = exact.u.eval(x);
                acc[0] += w * (ue - u).powi(2);
                acc[1] += w * (exact.derivative(x) - du * 2.0 / h).powi(2);
                acc[2] += w * ue * ue;
            }
            acc
        })
        .reduce(|| [0.0; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
    Ok(DgErrors { l2: sums[0].sqrt(), h1: sums[1].sqrt(), l2_exact: sums[2].sqrt(), max_jump: max_jump(p, coef)? })
}

/// Largest jump of u_h across interior faces, and at Dirichlet ends the largest |u_h − g|.
pub fn max_jump(p: &DgProblem, coef: &[f64]) -> Result<f64> {
    let tab = p.tabulation()?;
    let b = p.block();
    let trace = |e: usize, right: bool| -> f64 {
        let v = if right { &tab.phi_right } else { &tab.phi_left };
        coef[e * b..(e + 1) * b].iter().zip(v).map(|(c, v)| c * v).sum()
    };
    let n = p.mesh.len();
    let interior = (1..n).into_par_iter().map(|f| (trace(f - 1, true) - trace(f, false)).abs()).reduce(|| 0.0, f64::max);
    let mut worst = interior;
    if let BoundaryCondition::Dirichlet(g) = p.left {
        worst = worst.max((trace(0, false) - g).abs());
    }
    if let BoundaryCondition::Dirichlet(g) = p.right {
        worst = worst.max((trace(n - 1, true) - g).abs());
    }
    Ok(worst)
}
