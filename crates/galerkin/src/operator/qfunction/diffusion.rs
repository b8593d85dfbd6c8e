//! Diffusion κ ∇u·∇v for every component. CUDA twin: `kernels/qf/diffusion.cuh`.
use super::{Pair, QFunction};
use crate::physics::EvalModes;

pub struct DiffusionQf;

impl QFunction for DiffusionQf {
    fn cuda_name(&self) -> &'static str {
        "Diffusion"
    }
    fn modes(&self) -> EvalModes {
        EvalModes { value: false, grad: true }
    }
    fn passive(&self) -> &'static [&'static str] {
        &["kappa"]
    }
    fn full_gradient(&self) -> bool {
        false
    }
    fn apply(&self, dim: usize, ncomp: usize, p: &[f64], input: &[f64], out: &mut [f64]) {
        for (o, i) in out[..ncomp * dim].iter_mut().zip(input) {
            *o += p[0] * i;
        }
    }
    fn block(&self, _dim: usize, ncomp: usize, p: &[f64], pair: &Pair, e: &mut [f64]) {
        let s = p[0] * pair.dot();
        for a in 0..ncomp {
            e[a * ncomp + a] += s;
        }
    }
}
