//! Sparse direct solvers through faer: supernodal/simplicial Cholesky for SPD matrices and LU with
//! partial pivoting for general ones, both with fill-reducing orderings chosen by faer.
//!
//! A factorization is also a CPU [`LinearOperator`] applying `A⁻¹`, so it can serve as the exact
//! preconditioner of a Krylov method (e.g. of a nearby matrix, or inside a block scheme).
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, Lu};
use faer::Side;

/// Largest relative asymmetry accepted by [`DirectSolver::cholesky`], which reads one triangle only.
const SYMMETRY_TOL: f64 = 1e-12;

pub(super) enum Factor {
    Llt(Llt<usize, f64>),
    Lu(Lu<usize, f64>),
}

/// A factorized sparse matrix: Cholesky (SPD) or LU (general).
pub struct DirectSolver {
    pub(super) n: usize,
    pub(super) factor: Factor,
}

impl DirectSolver {
    /// Sparse Cholesky (LLᵀ) of a symmetric positive definite matrix. A matrix that is not
    /// symmetric (faer would silently use its lower triangle) or not positive definite is an
    /// [`Error::Factorization`].
    pub fn cholesky(a: &CsrMatrix) -> Result<DirectSolver> {
        check_input(a)?;
        let asym = a.asymmetry();
        if asym > SYMMETRY_TOL {
            return Err(Error::Factorization(format!(
                "Cholesky needs a symmetric matrix (relative asymmetry {asym:.3e})"
            )));
        }
        let llt = a.to_faer().sp_cholesky(Side::Lower).map_err(|e| {
            Error::Factorization(format!("Cholesky: matrix is not positive definite ({e:?})"))
        })?;
        Ok(DirectSolver {
            n: a.nrows,
            factor: Factor::Llt(llt),
        })
    }

    /// Sparse LU with partial pivoting of a general square matrix.
    pub fn lu(a: &CsrMatrix) -> Result<DirectSolver> {
        check_input(a)?;
        let lu = a
            .to_faer()
            .sp_lu()
            .map_err(|e| Error::Factorization(format!("LU: {e:?}")))?;
        Ok(DirectSolver {
            n: a.nrows,
            factor: Factor::Lu(lu),
        })
    }

    /// Solve `A x = b`. A non-finite solution means the matrix was numerically singular.
    pub fn solve(&self, b: &[f64]) -> Result<Vec<f64>> {
        let mut x = b.to_vec();
        self.solve_in_place(&mut x)?;
        Ok(x)
    }

    /// Overwrites `x` (holding `b`) with `A⁻¹ b`.
    pub fn solve_in_place(&self, x: &mut [f64]) -> Result<()> {
        if x.len() != self.n {
            return Err(Error::dim("direct solve right-hand side", self.n, x.len()));
        }
        let rhs = faer::ColMut::from_slice_mut(x);
        match &self.factor {
            Factor::Llt(f) => f.solve_in_place(rhs),
            Factor::Lu(f) => f.solve_in_place(rhs),
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::Factorization(format!(
                "matrix is numerically singular (solution entry {i} is not finite)"
            )));
        }
        Ok(())
    }
}

fn check_input(a: &CsrMatrix) -> Result<()> {
    if a.nrows != a.ncols {
        return Err(Error::dim(
            "direct solver: square matrix (columns)",
            a.nrows,
            a.ncols,
        ));
    }
    if let Some(k) = a.values.iter().position(|v| !v.is_finite()) {
        return Err(Error::Factorization(format!(
            "matrix entry {k} (in CSR order) is not finite"
        )));
    }
    Ok(())
}

impl LinearOperator<Cpu> for DirectSolver {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, _: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        if y.len() != x.len() {
            return Err(Error::dim("direct solver apply (output)", x.len(), y.len()));
        }
        y.copy_from_slice(x);
        self.solve_in_place(y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::testing::{convection_diffusion_2d, laplacian_2d, rhs};

    fn residual_norm(a: &CsrMatrix, x: &[f64], b: &[f64]) -> f64 {
        let mut ax = vec![0.0; b.len()];
        a.spmv(x, &mut ax);
        ax.iter()
            .zip(b)
            .map(|(p, q)| (p - q).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    #[test]
    fn cholesky_and_lu_solve_to_machine_precision() {
        let a = laplacian_2d(20);
        let b = rhs(a.nrows);
        let bn = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        let x = DirectSolver::cholesky(&a).unwrap().solve(&b).unwrap();
        assert!(residual_norm(&a, &x, &b) < 1e-12 * bn);
        let x2 = DirectSolver::lu(&a).unwrap().solve(&b).unwrap();
        assert!(x
            .iter()
            .zip(&x2)
            .all(|(p, q)| (p - q).abs() < 1e-11 * p.abs().max(1.0)));
        let c = convection_diffusion_2d(20, 30.0);
        let x3 = DirectSolver::lu(&c).unwrap().solve(&b).unwrap();
        assert!(residual_norm(&c, &x3, &b) < 1e-12 * bn);
    }

    #[test]
    fn cholesky_rejects_indefinite_and_nonsymmetric() {
        // Laplacian shifted by 6: symmetric with eigenvalues of both signs.
        let mut a = laplacian_2d(10);
        for k in a.diagonal_positions().unwrap() {
            a.values[k] -= 6.0;
        }
        let err = DirectSolver::cholesky(&a).err().unwrap();
        assert!(
            matches!(err, Error::Factorization(ref m) if m.contains("positive definite")),
            "{err}"
        );
        let c = convection_diffusion_2d(5, 10.0);
        assert!(matches!(
            DirectSolver::cholesky(&c),
            Err(Error::Factorization(_))
        ));
    }

    #[test]
    fn sizes_are_checked_and_apply_solves() {
        let a = laplacian_2d(4);
        let s = DirectSolver::lu(&a).unwrap();
        assert!(matches!(s.solve(&[1.0; 3]), Err(Error::Dimension { .. })));
        let mut y = vec![0.0; 16];
        s.apply(&Cpu, &vec![1.0; 16], &mut y).unwrap();
        assert!(residual_norm(&a, &y, &[1.0; 16]) < 1e-13);
        let rect = CsrMatrix::from_triplets(2, 3, &[(0, 0, 1.0)]).unwrap();
        assert!(matches!(
            DirectSolver::lu(&rect),
            Err(Error::Dimension { .. })
        ));
    }
}
