//! Diffusion −∇·(κ∇u): the diffusion QFunction with coefficient κ.
use super::{Coefficient, PointwisePhysics};
use crate::operator::qfunction::{DiffusionQf, Term};
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
    fn terms(&self) -> Vec<Term> {
        vec![Term { qf: &DiffusionQf, fields: vec![self.kappa.clone()] }]
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        self.kappa.check(mesh, "kappa")
    }
    fn name(&self) -> String {
        "diffusion".into()
    }
}
