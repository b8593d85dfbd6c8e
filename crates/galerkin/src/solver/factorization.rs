//! The one door for direct solvers: factor once, then solve any number of right-hand sides on the
//! backend where the factors live. faer's sparse Cholesky/LU ([`super::DirectSolver`]), the
//! block-tridiagonal solvers of DG and the multifrontal solver of IGA all implement it, so
//! `problem/` and the CLI pick a direct solver without knowing which one it is.
use crate::backend::{Backend, Cpu};
use crate::{Error, Result};

/// A factorized square operator `A` of size `n`.
pub trait Factorization<B: Backend>: Send + Sync {
    /// Rows (= columns) of `A`.
    fn n(&self) -> usize;
    /// Short name for reports ("cholesky", "lu", "block-thomas", "multifrontal", ...).
    fn name(&self) -> String;
    /// `X = A⁻¹ B` for `nrhs` right-hand sides stored one after another (column-major `n × nrhs`):
    /// `b` and `x` both hold `n · nrhs` values. Solving many at once is the point of a
    /// factorization, so implementations should do it in one pass, not `nrhs` passes.
    fn solve_many(&self, backend: &B, nrhs: usize, b: &B::Vector, x: &mut B::Vector) -> Result<()>;
    /// `x = A⁻¹ b` for one right-hand side.
    fn solve(&self, backend: &B, b: &B::Vector, x: &mut B::Vector) -> Result<()> {
        self.solve_many(backend, 1, b, x)
    }
}

/// Checks the lengths of a `solve_many` call: `n · nrhs` values in and out.
pub fn check_rhs_len<B: Backend>(backend: &B, what: &str, n: usize, nrhs: usize, b: &B::Vector, x: &B::Vector) -> Result<()> {
    let want = n
        .checked_mul(nrhs)
        .ok_or_else(|| Error::invalid(format!("{what}: {nrhs} right-hand sides of length {n} overflow")))?;
    if backend.len(b) != want {
        return Err(Error::dim(format!("{what} right-hand sides"), want, backend.len(b)));
    }
    if backend.len(x) != want {
        return Err(Error::dim(format!("{what} solution"), want, backend.len(x)));
    }
    Ok(())
}

impl Factorization<Cpu> for super::DirectSolver {
    fn n(&self) -> usize {
        self.n
    }
    fn name(&self) -> String {
        match self.factor {
            super::direct::Factor::Llt(_) => "cholesky".into(),
            super::direct::Factor::Lu(_) => "lu".into(),
        }
    }
    fn solve_many(&self, backend: &Cpu, nrhs: usize, b: &Vec<f64>, x: &mut Vec<f64>) -> Result<()> {
        let n = self.n;
        check_rhs_len(backend, "direct solve", n, nrhs, b, x)?;
        x.copy_from_slice(b);
        if n == 0 {
            return Ok(());
        }
        x.chunks_mut(n).try_for_each(|col| self.solve_in_place(col))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::testing::{laplacian_2d, rhs};
    use crate::solver::DirectSolver;

    #[test]
    fn many_right_hand_sides_solve_column_by_column() {
        let a = laplacian_2d(6);
        let n = a.nrows;
        let f: Box<dyn Factorization<Cpu>> = Box::new(DirectSolver::lu(&a).unwrap());
        assert_eq!(f.name(), "lu");
        let b1 = rhs(n);
        let b2: Vec<f64> = b1.iter().map(|v| 3.0 * v - 1.0).collect();
        let b = [b1.clone(), b2.clone()].concat();
        let mut x = vec![0.0; 2 * n];
        f.solve_many(&Cpu, 2, &b, &mut x).unwrap();
        for (k, bk) in [b1, b2].iter().enumerate() {
            let mut ax = vec![0.0; n];
            a.spmv(&x[k * n..(k + 1) * n], &mut ax);
            let r = ax.iter().zip(bk).map(|(p, q)| (p - q).powi(2)).sum::<f64>().sqrt();
            assert!(r < 1e-12, "column {k}: residual {r}");
        }
        assert!(matches!(f.solve_many(&Cpu, 3, &b, &mut x), Err(Error::Dimension { .. })));
    }
}
