//! Diffusion −∇·(κ∇u): `D = κ(x) I` on the gradient.
use super::{Coefficient, EvalModes, PointwisePhysics};
use crate::mesh::Mesh;
use crate::Result;

#[derive(Clone, Debug)]
pub struct Diffusion {
    pub kappa: Coefficient,
}

impl Diffusion {
    pub fn new(kappa: impl Into<Coefficient>) -> Self {
        Diffusion { kappa: kappa.into() }
    }
}

impl PointwisePhysics for Diffusion {
    fn ncomp(&self) -> usize {
        1
    }
    fn modes(&self) -> EvalModes {
        EvalModes { value: false, grad: true }
    }
    fn dmatrix(&self, x: [f64; 3], region: i32, dim: usize, d: &mut [f64]) {
        let k = self.kappa.eval(x, region);
        d[..dim * dim].fill(0.0);
        for i in 0..dim {
            d[i * dim + i] = k;
        }
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        self.kappa.check(mesh, "kappa")
    }
    fn device_terms(&self) -> Option<Vec<super::DeviceTerm<'_>>> {
        Some(vec![super::DeviceTerm::Diffusion(&self.kappa)])
    }
    fn name(&self) -> String {
        "diffusion".into()
    }
}
