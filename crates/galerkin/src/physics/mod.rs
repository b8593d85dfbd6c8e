//! Physics (the `D` of `A = Rᵀ Bᵀ D B R`) as users write it: diffusion, mass, elasticity and sums,
//! each binding coefficient fields to the pointwise kernels of
//! [`crate::operator::qfunction`] (written once, with a CUDA twin).
mod coefficient;
mod diffusion;
mod elasticity;
mod mass;

pub use coefficient::Coefficient;
pub use diffusion::Diffusion;
pub use elasticity::Elasticity;
pub use mass::Mass;

use crate::mesh::Mesh;
use crate::operator::qfunction::Term;
use crate::Result;

/// Which parts of the field a physics term reads and tests against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalModes {
    pub value: bool,
    pub grad: bool,
}

impl EvalModes {
    /// Length of the field vector for `ncomp` components in `dim` dimensions.
    pub fn size(self, ncomp: usize, dim: usize) -> usize {
        ncomp * (self.value as usize) + ncomp * dim * (self.grad as usize)
    }
}

/// A physics: its pointwise terms, each a [`QFunction`](crate::operator::qfunction::QFunction)
/// bound to its coefficient fields. The operator evaluates the terms' sum at every quadrature point
/// on either backend; the physics itself only binds coefficients and checks them.
pub trait PointwisePhysics: Send + Sync {
    /// Number of solution components (1 for Poisson, dim for elasticity).
    fn ncomp(&self) -> usize;
    /// The terms, with their coefficients (cheap clones).
    fn terms(&self) -> Vec<Term>;
    /// Which parts of the field the terms read (the union).
    fn modes(&self) -> EvalModes {
        let mut m = EvalModes { value: false, grad: false };
        for t in self.terms() {
            m.value |= t.qf.modes().value;
            m.grad |= t.qf.modes().grad;
        }
        m
    }
    /// Whether the bilinear form is symmetric (so CG and Cholesky apply).
    fn is_symmetric(&self) -> bool {
        self.terms().iter().all(|t| t.qf.is_symmetric())
    }
    /// Check coefficients against the mesh (regions present, values finite) before assembling.
    fn check(&self, mesh: &Mesh) -> Result<()>;
    /// Human-readable name for reports.
    fn name(&self) -> String;
}

/// The sum of several physics terms with the same number of components (e.g. diffusion plus a
/// reaction/mass term).
pub struct Sum(pub Vec<Box<dyn PointwisePhysics>>);

impl PointwisePhysics for Sum {
    fn ncomp(&self) -> usize {
        self.0.first().map_or(1, |p| p.ncomp())
    }
    fn terms(&self) -> Vec<Term> {
        self.0.iter().flat_map(|p| p.terms()).collect()
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        self.0.iter().try_for_each(|p| p.check(mesh))
    }
    fn name(&self) -> String {
        self.0.iter().map(|p| p.name()).collect::<Vec<_>>().join(" + ")
    }
}
