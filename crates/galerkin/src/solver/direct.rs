//! Sparse direct solvers through faer (stub).
use crate::linalg::CsrMatrix;
use crate::Result;

/// A factorized sparse matrix: Cholesky (SPD) or LU (general).
pub struct DirectSolver {}

impl DirectSolver {
    /// Sparse Cholesky (LLᵀ) of a symmetric positive definite matrix.
    pub fn cholesky(a: &CsrMatrix) -> Result<DirectSolver> {
        let _ = a;
        todo!()
    }
    /// Sparse LU with partial pivoting of a general square matrix.
    pub fn lu(a: &CsrMatrix) -> Result<DirectSolver> {
        let _ = a;
        todo!()
    }
    /// Solve `A x = b`.
    pub fn solve(&self, b: &[f64]) -> Result<Vec<f64>> {
        let _ = b;
        todo!()
    }
}
