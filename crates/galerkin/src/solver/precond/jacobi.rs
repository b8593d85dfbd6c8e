//! Jacobi (diagonal) preconditioning, on any backend: `M⁻¹ = D⁻¹`, applied as one elementwise
//! product with the inverted diagonal kept in backend memory.
use crate::backend::{Backend, LinearOperator};
use crate::{Error, Result};

/// `y = D⁻¹ x` with `D` the diagonal of the operator.
pub struct Jacobi<B: Backend> {
    inv_diag: B::Vector,
    n: usize,
}

impl<B: Backend> Jacobi<B> {
    /// Inverts `diagonal` (a vector on the backend: no host round trip) once. A zero or
    /// non-finite entry is an error naming its row (it usually means an unconstrained or
    /// unassembled dof).
    pub fn new(backend: &B, diagonal: &B::Vector) -> Result<Self> {
        let n = backend.len(diagonal);
        let mut inv_diag = backend.zeros(n)?;
        backend.copy(diagonal, &mut inv_diag)?;
        if let Some(row) = backend.invert_blocks(1, &mut inv_diag)? {
            let d = backend.to_host(diagonal)?[row];
            return Err(Error::invalid(format!("Jacobi preconditioner: diagonal entry of row {row} is {d}")));
        }
        Ok(Jacobi { inv_diag, n })
    }

    /// D⁻¹ on the backend.
    pub fn inverse_diagonal(&self) -> &B::Vector {
        &self.inv_diag
    }
}

impl<B: Backend> LinearOperator<B> for Jacobi<B> {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        backend.pointwise_mult(&self.inv_diag, x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Cpu;

    #[test]
    fn applies_inverse_diagonal_and_rejects_zero_rows() {
        let j = Jacobi::new(&Cpu, &vec![2.0, -4.0, 0.5]).unwrap();
        let mut y = vec![0.0; 3];
        j.apply(&Cpu, &vec![1.0, 1.0, 1.0], &mut y).unwrap();
        assert_eq!(y, vec![0.5, -0.25, 2.0]);
        let err = Jacobi::new(&Cpu, &vec![1.0, 2.0, 0.0, 3.0]).err().unwrap();
        assert!(err.to_string().contains("row 2"), "{err}");
        assert!(Jacobi::new(&Cpu, &vec![1.0, f64::NAN]).is_err());
    }
}
