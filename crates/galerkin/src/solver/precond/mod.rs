//! Preconditioners, each a [`LinearOperator`] applying `y ≈ A⁻¹ x`, and the one factory that builds
//! them from what an operator offers on its backend ([`Preconditionable`]): a diagonal (Jacobi,
//! Chebyshev), node blocks (block Jacobi) — on every backend and assembly level — or a CSR matrix
//! (SSOR, ILU(0), direct), whose sequential sweeps run on the CPU only. [`cpu_only`] is the one
//! place that says what needs the CPU.
pub mod block_jacobi;
pub mod chebyshev;
pub mod ilu0;
pub mod jacobi;
pub mod multigrid;
pub mod ssor;

pub use block_jacobi::BlockJacobi;
pub use chebyshev::Chebyshev;
pub use ilu0::Ilu0;
pub use jacobi::Jacobi;
pub use ssor::Ssor;

use super::method::SolverMethod;
use super::{DirectSolver, Factorization};
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, Cpu, Identity, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which preconditioner to build (problem-file names in parentheses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionerKind {
    /// `"none"`
    None,
    /// `"jacobi"`
    Jacobi,
    /// `"block-jacobi"` (blocks of the operator's components per node)
    BlockJacobi,
    /// `"ssor"` (ω from [`PrecondParams::omega`])
    Ssor,
    /// `"ilu0"`
    Ilu0,
    /// `"chebyshev"`: degree-4 Chebyshev polynomial in D⁻¹A (any backend, SPD operators)
    Chebyshev,
}

/// Parameters of the preconditioners that take any.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrecondParams {
    /// Dofs per node for block Jacobi of a bare matrix (components of a vector field).
    pub block_size: usize,
    /// SSOR relaxation factor in (0, 2).
    pub omega: f64,
}

impl Default for PrecondParams {
    fn default() -> Self {
        PrecondParams { block_size: 1, omega: 1.0 }
    }
}

/// What an operator offers its preconditioners, all on its backend.
pub trait Preconditionable<B: Backend>: LinearOperator<B> {
    fn diagonal(&self, be: &B) -> Result<B::Vector>;
    /// (block size, `b×b` node blocks).
    fn node_blocks(&self, be: &B) -> Result<(usize, B::Vector)>;
    /// The assembled matrix, where there is one.
    fn matrix(&self) -> Option<&B::Matrix>;
}

/// Why `method` with `pc` cannot run on a GPU, if it cannot: the sequential sweeps of SSOR and
/// ILU(0) and the direct factorizations run on the CPU. The one place these rules live (the `auto`
/// backend choice and the GPU's refusals both ask it).
pub fn cpu_only(method: SolverMethod, pc: PreconditionerKind) -> std::result::Result<(), String> {
    if method == SolverMethod::Direct {
        return Err("the direct solver runs on the CPU".into());
    }
    if matches!(pc, PreconditionerKind::Ssor | PreconditionerKind::Ilu0) {
        return Err(format!("preconditioner {pc:?} is CPU-only (sequential sweeps)"));
    }
    Ok(())
}

/// The preconditioners and factorizations that need a backend's own code: the CPU runs them, a GPU
/// refuses with [`cpu_only`]'s reason.
pub trait SolverBackend: Backend {
    /// SSOR or ILU(0) of an assembled matrix.
    fn sweeps<'a>(&self, kind: PreconditionerKind, a: &'a Self::Matrix, omega: f64) -> Result<Box<dyn LinearOperator<Self> + 'a>>;
    /// A direct factorization: Cholesky when `symmetric`, else LU.
    fn factorize(&self, a: &Self::Matrix, symmetric: bool) -> Result<Box<dyn Factorization<Self>>>;
    /// `‖b − A x‖` of a direct solve, an error when its backward error is far above round-off (a
    /// singular or nearly singular matrix): see [`crate::solver::direct::checked_residual`].
    fn checked_residual(&self, a: &Self::Matrix, x: &Self::Vector, b: &Self::Vector) -> Result<f64>;
}

impl SolverBackend for Cpu {
    fn sweeps<'a>(&self, kind: PreconditionerKind, a: &'a CsrMatrix, omega: f64) -> Result<Box<dyn LinearOperator<Cpu> + 'a>> {
        Ok(match kind {
            PreconditionerKind::Ssor => Box::new(Ssor::new(a, omega)?),
            PreconditionerKind::Ilu0 => Box::new(Ilu0::new(a)?),
            k => return Err(Error::invalid(format!("{k:?} is not a sweep preconditioner"))),
        })
    }
    fn factorize(&self, a: &CsrMatrix, symmetric: bool) -> Result<Box<dyn Factorization<Cpu>>> {
        Ok(Box::new(if symmetric { DirectSolver::cholesky(a)? } else { DirectSolver::lu(a)? }))
    }
    fn checked_residual(&self, a: &CsrMatrix, x: &Vec<f64>, b: &Vec<f64>) -> Result<f64> {
        super::direct::checked_residual(a, x, b)
    }
}

impl SolverBackend for CudaBackend {
    fn sweeps<'a>(&self, kind: PreconditionerKind, _a: &'a crate::backend::cuda::DeviceCsr, _omega: f64) -> Result<Box<dyn LinearOperator<CudaBackend> + 'a>> {
        let why = cpu_only(SolverMethod::Cg, kind).err().unwrap_or_else(|| format!("{kind:?} is not a sweep preconditioner"));
        Err(Error::invalid(format!("{why}: use jacobi, block-jacobi or chebyshev on the GPU, or --backend cpu")))
    }
    fn factorize(&self, _a: &crate::backend::cuda::DeviceCsr, _symmetric: bool) -> Result<Box<dyn Factorization<CudaBackend>>> {
        let why = cpu_only(SolverMethod::Direct, PreconditionerKind::None).err().unwrap_or_default();
        Err(Error::invalid(format!("{why}: use --backend cpu")))
    }
    fn checked_residual(&self, a: &crate::backend::cuda::DeviceCsr, x: &crate::backend::cuda::CudaVector, b: &crate::backend::cuda::CudaVector) -> Result<f64> {
        super::direct::checked_residual(&self.matrix_to_host(a)?, &self.to_host(x)?, &self.to_host(b)?)
    }
}

impl PreconditionerKind {
    /// Builds this preconditioner for `op` on `be` from what `op` offers.
    pub fn build_for<'a, B: SolverBackend>(self, be: &B, op: &'a dyn Preconditionable<B>, params: &PrecondParams) -> Result<Box<dyn LinearOperator<B> + 'a>> {
        Ok(match self {
            PreconditionerKind::None => Box::new(Identity(op.nrows())),
            PreconditionerKind::Jacobi => Box::new(Jacobi::new(be, &op.diagonal(be)?)?),
            PreconditionerKind::BlockJacobi => {
                let (b, blocks) = op.node_blocks(be)?;
                Box::new(BlockJacobi::new(be, b, blocks)?)
            }
            PreconditionerKind::Chebyshev => Box::new(Chebyshev::new(be, op, &op.diagonal(be)?, 4, 30.0)?),
            PreconditionerKind::Ssor | PreconditionerKind::Ilu0 => {
                let a = op.matrix().ok_or_else(|| {
                    Error::invalid(format!("preconditioner `{self:?}` needs an assembled matrix: use assembly level `full`"))
                })?;
                be.sweeps(self, a, params.omega)?
            }
        })
    }

    /// Builds this preconditioner for an assembled CPU matrix (node blocks of `params.block_size`).
    pub fn build<'a>(self, a: &'a CsrMatrix, params: &PrecondParams) -> Result<Box<dyn LinearOperator<Cpu> + 'a>> {
        match self {
            PreconditionerKind::BlockJacobi => Ok(Box::new(BlockJacobi::from_csr(a, params.block_size)?)),
            _ => self.build_for(&Cpu, a, params),
        }
    }
}

/// A bare CPU matrix offers its diagonal, its 1×1 blocks and itself.
impl Preconditionable<Cpu> for CsrMatrix {
    fn diagonal(&self, _be: &Cpu) -> Result<Vec<f64>> {
        Ok(CsrMatrix::diagonal(self))
    }
    fn node_blocks(&self, _be: &Cpu) -> Result<(usize, Vec<f64>)> {
        Ok((1, CsrMatrix::diagonal(self)))
    }
    fn matrix(&self) -> Option<&CsrMatrix> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names() {
        let all = [
            (PreconditionerKind::None, "none"),
            (PreconditionerKind::Jacobi, "jacobi"),
            (PreconditionerKind::BlockJacobi, "block-jacobi"),
            (PreconditionerKind::Ssor, "ssor"),
            (PreconditionerKind::Ilu0, "ilu0"),
            (PreconditionerKind::Chebyshev, "chebyshev"),
        ];
        for (kind, name) in all {
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{name}\""));
            let back: PreconditionerKind = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(back, kind);
        }
        assert!(serde_json::from_str::<PreconditionerKind>("\"ilu\"").is_err());
    }
}
