//! Mass (reaction) term ρ u v for every component: `D = ρ(x) I` on the values.
use super::{Coefficient, EvalModes, PointwisePhysics};
use crate::mesh::Mesh;
use crate::Result;

#[derive(Clone, Debug)]
pub struct Mass {
    pub rho: Coefficient,
    pub ncomp: usize,
}

impl Mass {
    pub fn new(rho: impl Into<Coefficient>, ncomp: usize) -> Self {
        Mass { rho: rho.into(), ncomp }
    }
}

impl PointwisePhysics for Mass {
    fn ncomp(&self) -> usize {
        self.ncomp
    }
    fn modes(&self) -> EvalModes {
        EvalModes { value: true, grad: false }
    }
    fn dmatrix(&self, x: [f64; 3], region: i32, _dim: usize, d: &mut [f64]) {
        let r = self.rho.eval(x, region);
        let n = self.ncomp;
        d[..n * n].fill(0.0);
        for i in 0..n {
            d[i * n + i] = r;
        }
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        self.rho.check(mesh, "rho")
    }
    fn device_terms(&self) -> Option<Vec<super::DeviceTerm<'_>>> {
        Some(vec![super::DeviceTerm::Mass(&self.rho)])
    }
    fn name(&self) -> String {
        "mass".into()
    }
}
