//! Diffusion −∇·(κ∇u): the diffusion QFunction with coefficient κ.
use super::{Coefficient, PointwisePhysics};
use crate::operator::qfunction::{DiffusionQf, Term};
use crate::mesh::Mesh;
use crate::Result;

#[derive(Clone, Debug)]
pub struct Diffusion {
    pub kappa: Coefficient,
    /// Components, each diffusing on its own (CEED's BP4/BP6 use 3).
    pub ncomp: usize,
}

impl Diffusion {
    pub fn new(kappa: impl Into<Coefficient>) -> Self {
        Diffusion { kappa: kappa.into(), ncomp: 1 }
    }

    /// The same diffusion on each of `ncomp` uncoupled components.
    pub fn vector(kappa: impl Into<Coefficient>, ncomp: usize) -> Self {
        Diffusion { kappa: kappa.into(), ncomp }
    }
}

impl PointwisePhysics for Diffusion {
    fn ncomp(&self) -> usize {
        self.ncomp
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
