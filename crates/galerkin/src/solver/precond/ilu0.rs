//! ILU(0) (CPU): incomplete LU factorization restricted to the sparsity pattern of `A`, so the
//! factors cost no more memory than `A` itself. `L` (unit diagonal) and `U` share one CSR array.
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};

/// `y = (L U)⁻¹ x` with `L U ≈ A` on the pattern of `A`.
pub struct Ilu0 {
    /// Strictly lower part holds `L` (unit diagonal implied), the rest holds `U`.
    lu: CsrMatrix,
    diag_pos: Vec<usize>,
}

impl Ilu0 {
    /// Factorizes (IKJ variant). A zero or non-finite pivot is an error naming its row; it needs
    /// the diagonal to be in the pattern.
    pub fn new(a: &CsrMatrix) -> Result<Self> {
        let diag_pos = a.diagonal_positions()?;
        let mut lu = a.clone();
        for i in 0..lu.nrows {
            let end_i = lu.row_ptr[i + 1];
            for kk in lu.row_ptr[i]..diag_pos[i] {
                let k = lu.col_idx[kk] as usize;
                let l_ik = lu.values[kk] / lu.values[diag_pos[k]];
                lu.values[kk] = l_ik;
                // Row i -= l_ik · (row k of U), only where row i has an entry: merge the two
                // sorted column lists.
                let (mut p, mut q, end_k) = (kk + 1, diag_pos[k] + 1, lu.row_ptr[k + 1]);
                while p < end_i && q < end_k {
                    match lu.col_idx[p].cmp(&lu.col_idx[q]) {
                        std::cmp::Ordering::Less => p += 1,
                        std::cmp::Ordering::Greater => q += 1,
                        std::cmp::Ordering::Equal => {
                            lu.values[p] -= l_ik * lu.values[q];
                            p += 1;
                            q += 1;
                        }
                    }
                }
            }
            let pivot = lu.values[diag_pos[i]];
            if !(pivot != 0.0 && pivot.is_finite()) {
                return Err(Error::invalid(format!(
                    "ILU(0): pivot of row {i} is {pivot}"
                )));
            }
        }
        Ok(Ilu0 { lu, diag_pos })
    }
}

impl LinearOperator<Cpu> for Ilu0 {
    fn nrows(&self) -> usize {
        self.lu.nrows
    }
    fn ncols(&self) -> usize {
        self.lu.nrows
    }
    fn apply(&self, _: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        let (lu, n) = (&self.lu, self.lu.nrows);
        if x.len() != n || y.len() != n {
            return Err(Error::dim(
                "ILU(0) apply",
                n,
                if x.len() != n { x.len() } else { y.len() },
            ));
        }
        for i in 0..n {
            let lower: f64 = (lu.row_ptr[i]..self.diag_pos[i])
                .map(|k| lu.values[k] * y[lu.col_idx[k] as usize])
                .sum();
            y[i] = x[i] - lower;
        }
        for i in (0..n).rev() {
            let d = self.diag_pos[i];
            let upper: f64 = (d + 1..lu.row_ptr[i + 1])
                .map(|k| lu.values[k] * y[lu.col_idx[k] as usize])
                .sum();
            y[i] = (y[i] - upper) / lu.values[d];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::testing::convection_diffusion_2d;

    #[test]
    fn exact_on_tridiagonal_and_matches_pattern_on_2d() {
        // No fill-in for a tridiagonal matrix: ILU(0) is the exact LU, so M⁻¹ A x = x.
        let n = 30;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 4.0 + i as f64 * 0.1));
            if i + 1 < n {
                t.push((i, i + 1, -1.5));
                t.push((i + 1, i, -0.5));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        let ilu = Ilu0::new(&a).unwrap();
        let x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let (mut ax, mut y) = (vec![0.0; n], vec![0.0; n]);
        a.spmv(&x, &mut ax);
        ilu.apply(&Cpu, &ax, &mut y).unwrap();
        assert!(y.iter().zip(&x).all(|(a, b)| (a - b).abs() < 1e-12));

        // On a 2D stencil (L U)_ij = A_ij on the pattern of A, by construction of ILU(0).
        let a = convection_diffusion_2d(7, 20.0);
        let ilu = Ilu0::new(&a).unwrap();
        let n = a.nrows;
        let f = ilu.lu.to_dense();
        for i in 0..n {
            let (cols, vals) = a.row(i);
            for (&j, &aij) in cols.iter().zip(vals) {
                let j = j as usize;
                let prod: f64 = (0..=i.min(j))
                    .map(|k| {
                        let l = if k == i { 1.0 } else { f[i * n + k] };
                        l * f[k * n + j]
                    })
                    .sum();
                assert!((prod - aij).abs() < 1e-12, "({i},{j}): {prod} vs {aij}");
            }
        }
    }

    #[test]
    fn zero_pivot_names_the_row() {
        // Row 1 pivot becomes 1 − 1·1 = 0 after eliminating row 0.
        let a = CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 0, 1.0),
                (0, 1, 1.0),
                (1, 0, 1.0),
                (1, 1, 1.0),
                (2, 2, 1.0),
            ],
        )
        .unwrap();
        let err = Ilu0::new(&a).err().unwrap();
        assert!(err.to_string().contains("row 1"), "{err}");
    }
}
