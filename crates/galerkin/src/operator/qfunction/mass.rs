//! Mass (reaction) ρ u·v for every component. CUDA twin: `kernels/qf/mass.cuh`.
use super::{Pair, QFunction};
use crate::physics::EvalModes;

pub struct MassQf;

impl QFunction for MassQf {
    fn cuda_name(&self) -> &'static str {
        "Mass"
    }
    fn modes(&self) -> EvalModes {
        EvalModes { value: true, grad: false }
    }
    fn passive(&self) -> &'static [&'static str] {
        &["rho"]
    }
    fn full_gradient(&self) -> bool {
        false
    }
    fn apply(&self, _dim: usize, ncomp: usize, p: &[f64], input: &[f64], out: &mut [f64]) {
        for (o, i) in out[..ncomp].iter_mut().zip(input) {
            *o += p[0] * i;
        }
    }
    fn block(&self, _dim: usize, ncomp: usize, p: &[f64], pair: &Pair, e: &mut [f64]) {
        let s = p[0] * pair.vv();
        for a in 0..ncomp {
            e[a * ncomp + a] += s;
        }
    }
}
