//! Pointwise physics (the `D` of `A = Rᵀ Bᵀ D B R`): what a bilinear form does at one quadrature
//! point, expressed as a small dense matrix acting on the field's values and physical gradients.
//!
//! The field vector at a point is `[u_0..u_{n-1}]` (if values are used) followed by
//! `[∂_0 u_0, ∂_1 u_0, …, ∂_{d-1} u_{n-1}]` (if gradients are used): index `n + c*d + k` is ∂_k u_c.
//! The operator multiplies `D` by the quadrature weight and |det J|; physics sees physical points.
mod coefficient;
mod diffusion;
mod elasticity;
mod mass;

pub use coefficient::Coefficient;
pub use diffusion::Diffusion;
pub use elasticity::Elasticity;
pub use mass::Mass;

use crate::mesh::Mesh;
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

/// A linear pointwise operator: the symmetric or not matrix `D(x)` at one quadrature point.
pub trait PointwisePhysics: Send + Sync {
    /// Number of solution components (1 for Poisson, dim for elasticity).
    fn ncomp(&self) -> usize;
    fn modes(&self) -> EvalModes;
    /// Write `D(x)` (row-major, `m × m` with `m = modes().size(ncomp, dim)`) for the point `x` in a
    /// cell of region `region`.
    fn dmatrix(&self, x: [f64; 3], region: i32, dim: usize, d: &mut [f64]);
    /// Whether `D` is symmetric (so CG and Cholesky apply).
    fn is_symmetric(&self) -> bool {
        true
    }
    /// Check coefficients against the mesh (regions present, values finite) before assembling.
    fn check(&self, mesh: &Mesh) -> Result<()>;
    /// Human-readable name for reports.
    fn name(&self) -> String;
    /// The terms as the GPU assembly kernels know them, or `None` when this physics has no GPU
    /// form (it then assembles on the CPU only).
    fn device_terms(&self) -> Option<Vec<DeviceTerm<'_>>> {
        None
    }
}

/// A pointwise term with a closed form on the GPU: the kernels evaluate `D` from the coefficient
/// values sampled at the quadrature points, so only these scalars (not `D`) cross to the device.
#[derive(Clone, Copy, Debug)]
pub enum DeviceTerm<'a> {
    /// κ ∇u·∇v for every component.
    Diffusion(&'a Coefficient),
    /// ρ u·v for every component.
    Mass(&'a Coefficient),
    /// λ div u div v + 2μ ε(u):ε(v).
    Elasticity { lambda: &'a Coefficient, mu: &'a Coefficient },
}

/// The sum of several physics terms with the same number of components (e.g. diffusion plus a
/// reaction/mass term). Modes are the union; each term writes into its own part of `D`.
pub struct Sum(pub Vec<Box<dyn PointwisePhysics>>);

impl PointwisePhysics for Sum {
    fn ncomp(&self) -> usize {
        self.0.first().map_or(1, |p| p.ncomp())
    }
    fn modes(&self) -> EvalModes {
        let mut m = EvalModes { value: false, grad: false };
        for p in &self.0 {
            m.value |= p.modes().value;
            m.grad |= p.modes().grad;
        }
        m
    }
    fn dmatrix(&self, x: [f64; 3], region: i32, dim: usize, d: &mut [f64]) {
        let n = self.ncomp();
        let all = self.modes();
        let m = all.size(n, dim);
        d[..m * m].fill(0.0);
        // Largest term: 3 components, values and 3D gradients (12 × 12); no allocation per point.
        let mut tmp = [0.0; 144];
        for p in &self.0 {
            let pm = p.modes();
            let k = pm.size(n, dim);
            p.dmatrix(x, region, dim, &mut tmp[..k * k]);
            // Position of the term's field entries inside the full field vector.
            let map = |i: usize| if pm.value || !all.value { i } else { i + n };
            for i in 0..k {
                for j in 0..k {
                    d[map(i) * m + map(j)] += tmp[i * k + j];
                }
            }
        }
    }
    fn is_symmetric(&self) -> bool {
        self.0.iter().all(|p| p.is_symmetric())
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        self.0.iter().try_for_each(|p| p.check(mesh))
    }
    fn name(&self) -> String {
        self.0.iter().map(|p| p.name()).collect::<Vec<_>>().join(" + ")
    }
    fn device_terms(&self) -> Option<Vec<DeviceTerm<'_>>> {
        let mut all = Vec::new();
        for p in &self.0 {
            all.extend(p.device_terms()?);
        }
        Some(all)
    }
}
