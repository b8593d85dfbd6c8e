//! Backends: where vectors live and vector operations run. Solvers are written once against
//! [`Backend`] and [`LinearOperator`]; the CPU backend (rayon) is always present, the CUDA backend
//! slots in by implementing the same two traits.
pub mod cpu;
pub mod cuda;

pub use cpu::Cpu;

use crate::Result;

/// Vector storage and the vector operations Krylov methods need. Every method may fail (a GPU launch
/// can), so all return `Result`. Fused operations (`cg_update`) exist so a device backend can stream
/// each vector once per iteration.
pub trait Backend: Send + Sync {
    /// A vector living in this backend's memory.
    type Vector: Send + Sync;

    fn name(&self) -> &str;
    fn zeros(&self, n: usize) -> Result<Self::Vector>;
    fn from_host(&self, x: &[f64]) -> Result<Self::Vector>;
    fn to_host(&self, x: &Self::Vector) -> Result<Vec<f64>>;
    fn len(&self, x: &Self::Vector) -> usize;

    /// `dst = src`
    fn copy(&self, src: &Self::Vector, dst: &mut Self::Vector) -> Result<()>;
    /// `x[i] = value`
    fn fill(&self, x: &mut Self::Vector, value: f64) -> Result<()>;
    /// `x · y`
    fn dot(&self, x: &Self::Vector, y: &Self::Vector) -> Result<f64>;
    /// `‖x‖₂`
    fn norm2(&self, x: &Self::Vector) -> Result<f64> {
        Ok(self.dot(x, x)?.sqrt())
    }
    /// `y = a·x + y`
    fn axpy(&self, a: f64, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// `y = a·x + b·y`
    fn axpby(&self, a: f64, x: &Self::Vector, b: f64, y: &mut Self::Vector) -> Result<()>;
    /// `x = a·x`
    fn scale(&self, a: f64, x: &mut Self::Vector) -> Result<()>;
    /// `y = d ⊙ x` (elementwise product; Jacobi preconditioning)
    fn pointwise_mult(&self, d: &Self::Vector, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// Fused CG update: `x += α·p; r -= α·q;` returns `r·r`.
    fn cg_update(
        &self,
        alpha: f64,
        p: &Self::Vector,
        q: &Self::Vector,
        x: &mut Self::Vector,
        r: &mut Self::Vector,
    ) -> Result<f64> {
        self.axpy(alpha, p, x)?;
        self.axpy(-alpha, q, r)?;
        self.dot(r, r)
    }
}

/// A linear map `y = A x` applied on backend `B`. Assembled matrices, element-by-element operators,
/// constrained operators and preconditioners all implement it.
pub trait LinearOperator<B: Backend>: Send + Sync {
    fn nrows(&self) -> usize;
    fn ncols(&self) -> usize;
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()>;
}

/// The identity operator (no preconditioning).
pub struct Identity(pub usize);

impl<B: Backend> LinearOperator<B> for Identity {
    fn nrows(&self) -> usize {
        self.0
    }
    fn ncols(&self) -> usize {
        self.0
    }
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        backend.copy(x, y)
    }
}
