//! Preconditioners, each a [`LinearOperator`] applying `y ≈ A⁻¹ x`.
//!
//! [`Jacobi`] works on any backend; [`BlockJacobi`], [`Ssor`] and [`Ilu0`] work on assembled CSR
//! matrices on the CPU (their triangular sweeps are sequential). A [`crate::solver::DirectSolver`]
//! is also a CPU `LinearOperator`, i.e. an exact preconditioner.
pub mod block_jacobi;
pub mod chebyshev;
pub mod ilu0;
pub mod jacobi;
pub mod ssor;

pub use block_jacobi::BlockJacobi;
pub use chebyshev::Chebyshev;
pub use ilu0::Ilu0;
pub use jacobi::Jacobi;
pub use ssor::Ssor;

use crate::backend::{Cpu, Identity, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::Result;
use serde::{Deserialize, Serialize};

/// Which preconditioner to build (problem-file names in parentheses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionerKind {
    /// `"none"`
    None,
    /// `"jacobi"`
    Jacobi,
    /// `"block-jacobi"` (block size from [`PrecondParams::block_size`])
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
    /// Dofs per node for block Jacobi (components of a vector field).
    pub block_size: usize,
    /// SSOR relaxation factor in (0, 2).
    pub omega: f64,
}

impl Default for PrecondParams {
    fn default() -> Self {
        PrecondParams {
            block_size: 1,
            omega: 1.0,
        }
    }
}

impl PreconditionerKind {
    /// Builds this preconditioner for the assembled matrix `a` on the CPU.
    pub fn build<'a>(self, a: &'a CsrMatrix, params: &PrecondParams) -> Result<Box<dyn LinearOperator<Cpu> + 'a>> {
        Ok(match self {
            PreconditionerKind::None => Box::new(Identity(a.nrows)),
            PreconditionerKind::Jacobi => Box::new(Jacobi::new(&Cpu, &a.diagonal())?),
            PreconditionerKind::BlockJacobi => {
                Box::new(BlockJacobi::from_csr(a, params.block_size)?)
            }
            PreconditionerKind::Ssor => Box::new(Ssor::new(a, params.omega)?),
            PreconditionerKind::Ilu0 => Box::new(Ilu0::new(a)?),
            PreconditionerKind::Chebyshev => Box::new(Chebyshev::new(&Cpu, a, &a.diagonal(), 4, 30.0)?),
        })
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
