//! Mass (reaction) term ρ u·v for every component.
use super::{Coefficient, PointwisePhysics};
use crate::operator::qfunction::{MassQf, Term};
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
    fn terms(&self) -> Vec<Term> {
        vec![Term { qf: &MassQf, fields: vec![self.rho.clone()] }]
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        self.rho.check(mesh, "rho")
    }
    fn name(&self) -> String {
        "mass".into()
    }
}
