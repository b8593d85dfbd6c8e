//! Isotropic linear elasticity, σ = λ tr(ε) I + 2μ ε, with `ncomp = dim` (3D, or 2D plane
//! strain). CUDA twin: `kernels/qf/elasticity.cuh`.
use super::{Pair, QFunction};
use crate::physics::EvalModes;

pub struct ElasticityQf;

impl QFunction for ElasticityQf {
    fn cuda_name(&self) -> &'static str {
        "Elasticity"
    }
    fn modes(&self) -> EvalModes {
        EvalModes { value: false, grad: true }
    }
    fn passive(&self) -> &'static [&'static str] {
        &["lambda", "mu"]
    }
    fn full_gradient(&self) -> bool {
        true
    }
    /// `in[c·d + k] = ∂_k u_c`; `out[c·d + k] += σ_ck`.
    fn apply(&self, dim: usize, _ncomp: usize, p: &[f64], input: &[f64], out: &mut [f64]) {
        let tr: f64 = (0..dim).map(|c| input[c * dim + c]).sum();
        for c in 0..dim {
            for k in 0..dim {
                out[c * dim + k] += p[1] * (input[c * dim + k] + input[k * dim + c]) + if c == k { p[0] * tr } else { 0.0 };
            }
        }
    }
    /// `e[a][b] += λ ∂_a φ_i ∂_b φ_j + μ (δ_ab ∇φ_i·∇φ_j + ∂_b φ_i ∂_a φ_j)`.
    fn block(&self, _dim: usize, ncomp: usize, p: &[f64], pair: &Pair, e: &mut [f64]) {
        let dot = pair.dot();
        for a in 0..ncomp {
            for b in 0..ncomp {
                e[a * ncomp + b] += p[0] * pair.gg(a, b) + p[1] * (pair.gg(b, a) + if a == b { dot } else { 0.0 });
            }
        }
    }
}
