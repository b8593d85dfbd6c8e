//! Isotropic linear elasticity, σ = λ tr(ε) I + 2μ ε, in 3D or 2D plane strain.
//! The elasticity QFunction with Lamé coefficients (λ, μ), from (E, ν) or given directly.
use super::{Coefficient, PointwisePhysics};
use crate::operator::qfunction::{ElasticityQf, Term};
use crate::mesh::Mesh;
use crate::{Error, Result};

#[derive(Clone, Debug)]
pub struct Elasticity {
    pub lambda: Coefficient,
    pub mu: Coefficient,
    pub dim: usize,
}

impl Elasticity {
    /// From Lamé parameters.
    pub fn lame(lambda: impl Into<Coefficient>, mu: impl Into<Coefficient>, dim: usize) -> Self {
        Elasticity { lambda: lambda.into(), mu: mu.into(), dim }
    }

    /// From Young's modulus and Poisson's ratio (constants): λ = Eν/((1+ν)(1−2ν)), μ = E/(2(1+ν)).
    pub fn young_poisson(e: f64, nu: f64, dim: usize) -> Result<Self> {
        if !(e > 0.0 && e.is_finite()) {
            return Err(Error::invalid(format!("Young's modulus E must be positive, got {e}")));
        }
        if !(nu > -1.0 && nu < 0.5) {
            return Err(Error::invalid(format!("Poisson's ratio nu must lie in (-1, 0.5), got {nu}")));
        }
        let (l, m) = lame_from_young_poisson(e, nu);
        Ok(Elasticity::lame(l, m, dim))
    }
}

/// (λ, μ) from (E, ν).
pub fn lame_from_young_poisson(e: f64, nu: f64) -> (f64, f64) {
    (e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), e / (2.0 * (1.0 + nu)))
}

impl PointwisePhysics for Elasticity {
    fn ncomp(&self) -> usize {
        self.dim
    }
    fn terms(&self) -> Vec<Term> {
        vec![Term { qf: &ElasticityQf, fields: vec![self.lambda.clone(), self.mu.clone()] }]
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        if mesh.dim != self.dim {
            return Err(Error::invalid(format!(
                "elasticity is set up for dimension {} but the mesh is {}D",
                self.dim, mesh.dim
            )));
        }
        self.lambda.check(mesh, "lambda")?;
        self.mu.check(mesh, "mu")
    }
    fn name(&self) -> String {
        format!("linear elasticity ({}D{})", self.dim, if self.dim == 2 { ", plane strain" } else { "" })
    }
}
