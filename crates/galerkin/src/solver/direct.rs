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
use faer::sparse::linalg::{LltError, LuError};
use faer::sparse::FaerError;
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
        let m = a.to_faer();
        let fill = factor_entries(&m)?;
        check_factor_memory("Cholesky", a.nrows, fill as f64)?;
        let llt = m.sp_cholesky(Side::Lower).map_err(|e| match e {
            LltError::Numeric(e) => Error::Factorization(format!(
                "Cholesky: matrix is not positive definite ({e:?}): is the problem singular (no Dirichlet condition) or a coefficient negative?"
            )),
            LltError::Generic(e) => faer_error("Cholesky", a.nrows, fill as f64, e),
        })?;
        Ok(DirectSolver {
            n: a.nrows,
            factor: Factor::Llt(llt),
        })
    }

    /// Sparse LU with partial pivoting of a general square matrix.
    pub fn lu(a: &CsrMatrix) -> Result<DirectSolver> {
        check_input(a)?;
        let m = a.to_faer();
        // LU's fill depends on pivoting; both factors of the symmetrized pattern are the guide.
        let fill = 2.0 * factor_entries(&m)? as f64;
        check_factor_memory("LU", a.nrows, fill)?;
        let lu = m.sp_lu().map_err(|e| match e {
            LuError::SymbolicSingular { index } => Error::Factorization(format!(
                "LU: the matrix is structurally singular (no pivot for column {index})"
            )),
            LuError::Generic(e) => faer_error("LU", a.nrows, fill, e),
        })?;
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

/// Largest backward error `‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)` accepted from a direct solve. A
/// stable factorization gives round-off (about 1e-16); a singular or nearly singular matrix gives
/// far more, while its factorization may still "succeed".
pub const BACKWARD_ERROR_TOL: f64 = 1e-9;

/// Residual check of a direct solve of `A x = b`: returns `‖b − A x‖₂`, or an error giving the
/// residual when the solve is not accurate to round-off (see [`BACKWARD_ERROR_TOL`]).
pub fn checked_residual(a: &CsrMatrix, x: &[f64], b: &[f64]) -> Result<f64> {
    let mut ax = vec![0.0; b.len()];
    a.spmv(x, &mut ax);
    let r: Vec<f64> = b.iter().zip(&ax).map(|(p, q)| p - q).collect();
    let two = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let a_inf = (0..a.nrows)
        .map(|i| a.values[a.row_ptr[i]..a.row_ptr[i + 1]].iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0f64, f64::max);
    let (rn, bn) = (two(&r), two(b));
    let denom = a_inf * inf(x) + inf(b);
    let backward = if denom > 0.0 { inf(&r) / denom } else { 0.0 };
    if !(backward <= BACKWARD_ERROR_TOL) || !rn.is_finite() {
        return Err(Error::Factorization(format!(
            "the direct solve is inaccurate: ‖b − A x‖ = {rn:.3e}, relative residual {:.3e}, backward error {backward:.3e} \
             (round-off would be about 1e-16): the matrix is singular or nearly so. A problem with only Neumann \
             conditions needs a Dirichlet condition, a reaction term or `[solver] nullspace = \"constant\"`",
            if bn > 0.0 { rn / bn } else { rn }
        )));
    }
    Ok(rn)
}

/// Entries of the Cholesky factor of `m`'s pattern with faer's fill-reducing ordering (a symbolic
/// analysis: linear in the nonzeros, no values).
fn factor_entries(m: &faer::sparse::SparseColMat<usize, f64>) -> Result<usize> {
    use faer::sparse::linalg::cholesky::factorize_symbolic_cholesky;
    let sym = factorize_symbolic_cholesky(m.symbolic(), Side::Lower, Default::default(), Default::default())
        .map_err(|e| faer_error("symbolic analysis", m.nrows(), 0.0, e))?;
    Ok(sym.len_val())
}

/// Refuse a factorization whose factor (`entries` values) cannot fit in the memory left.
fn check_factor_memory(what: &str, n: usize, entries: f64) -> Result<()> {
    let mut est = crate::memory::Estimate::default();
    est.add("factor values", 8.0 * entries);
    est.add("factor indices and workspace", 8.0 * entries.max(n as f64) * 0.5);
    crate::memory::check(&format!("host ({what} of {n} unknowns)"), &est, crate::memory::host_available().as_ref())
}

/// A faer allocation or index failure, named as what it is.
fn faer_error(what: &str, n: usize, entries: f64, e: FaerError) -> Error {
    match e {
        FaerError::OutOfMemory => Error::OutOfMemory(format!(
            "{what} of {n} unknowns: an allocation failed (the factor holds about {} of values; {} available)",
            crate::memory::human(8.0 * entries),
            crate::memory::host_available().map_or("unknown".into(), |a| crate::memory::human(a.bytes))
        )),
        other => Error::Factorization(format!("{what} of {n} unknowns: {other:?}")),
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
    fn singular_solves_are_errors_with_their_residual() {
        // The Neumann Laplacian (rows sum to zero) is singular; a right-hand side with non-zero
        // mean has no solution, whatever LU returns.
        let n = 6;
        let mut t = Vec::new();
        for i in 0..n {
            let deg = (i > 0) as usize + (i + 1 < n) as usize;
            t.push((i, i, deg as f64));
            if i > 0 {
                t.push((i, i - 1, -1.0));
            }
            if i + 1 < n {
                t.push((i, i + 1, -1.0));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        let b = vec![1.0; n];
        let msg = match DirectSolver::lu(&a).and_then(|s| s.solve(&b)).and_then(|x| checked_residual(&a, &x, &b)) {
            Ok(r) => panic!("a singular solve passed with residual {r}"),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains("singular"), "{msg}");
        // An accurate solve passes and returns its residual.
        let l = laplacian_2d(6);
        let b = rhs(l.nrows);
        let x = DirectSolver::cholesky(&l).unwrap().solve(&b).unwrap();
        assert!(checked_residual(&l, &x, &b).unwrap() < 1e-12);
        // A perturbed solution is caught.
        let mut y = x.clone();
        y[3] += 1e-3;
        let msg = checked_residual(&l, &y, &b).unwrap_err().to_string();
        assert!(msg.contains("inaccurate") && msg.contains("relative residual"), "{msg}");
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
