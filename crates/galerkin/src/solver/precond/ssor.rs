//! SSOR (CPU): one forward and one backward SOR sweep,
//! `M = (D + ωL) D⁻¹ (D + ωU) / (ω(2 − ω))`. For symmetric `A` with positive diagonal and
//! `ω ∈ (0, 2)`, `M` is symmetric positive definite, so SSOR may precondition CG; `ω = 1` is
//! symmetric Gauss–Seidel. The sweeps are sequential by nature.
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::{Error, Result};

/// `y = M⁻¹ x` for the SSOR splitting of a square CSR matrix.
pub struct Ssor {
    a: CsrMatrix,
    diag_pos: Vec<usize>,
    omega: f64,
}

impl Ssor {
    /// Keeps a copy of `a`; `omega` must lie in (0, 2) and every diagonal entry must be nonzero.
    pub fn new(a: &CsrMatrix, omega: f64) -> Result<Self> {
        if !(omega > 0.0 && omega < 2.0) {
            return Err(Error::invalid(format!(
                "SSOR: relaxation factor ω = {omega} is outside (0, 2)"
            )));
        }
        let diag_pos = a.diagonal_positions()?;
        if let Some(row) = diag_pos
            .iter()
            .position(|&k| !(a.values[k] != 0.0 && a.values[k].is_finite()))
        {
            return Err(Error::invalid(format!(
                "SSOR: diagonal entry of row {row} is {}",
                a.values[diag_pos[row]]
            )));
        }
        Ok(Ssor {
            a: a.clone(),
            diag_pos,
            omega,
        })
    }
}

impl LinearOperator<Cpu> for Ssor {
    fn nrows(&self) -> usize {
        self.a.nrows
    }
    fn ncols(&self) -> usize {
        self.a.nrows
    }
    fn apply(&self, _: &Cpu, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        let n = self.a.nrows;
        if x.len() != n || y.len() != n {
            return Err(Error::dim(
                "SSOR apply",
                n,
                if x.len() != n { x.len() } else { y.len() },
            ));
        }
        let (a, w) = (&self.a, self.omega);
        // Forward: (D + ωL) u = x.
        for i in 0..n {
            let (s, d) = (a.row_ptr[i], self.diag_pos[i]);
            let lower: f64 = (s..d).map(|k| a.values[k] * y[a.col_idx[k] as usize]).sum();
            y[i] = (x[i] - w * lower) / a.values[d];
        }
        // Backward: (D + ωU) v = D u, in place: v_i = u_i − ω/d_i Σ_{j>i} a_ij v_j.
        for i in (0..n).rev() {
            let (d, e) = (self.diag_pos[i], a.row_ptr[i + 1]);
            let upper: f64 = (d + 1..e)
                .map(|k| a.values[k] * y[a.col_idx[k] as usize])
                .sum();
            y[i] -= w * upper / a.values[d];
        }
        let scale = w * (2.0 - w);
        y.iter_mut().for_each(|v| *v *= scale);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::testing::laplacian_2d;

    #[test]
    fn ssor_is_symmetric_and_inverts_its_splitting() {
        let a = laplacian_2d(6);
        let n = a.nrows;
        let m = Ssor::new(&a, 1.3).unwrap();
        let u: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let v: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
        let (mut mu, mut mv) = (vec![0.0; n], vec![0.0; n]);
        m.apply(&Cpu, &u, &mut mu).unwrap();
        m.apply(&Cpu, &v, &mut mv).unwrap();
        let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();
        assert!((dot(&v, &mu) - dot(&u, &mv)).abs() < 1e-13 * dot(&u, &mu).abs());
        assert!(dot(&u, &mu) > 0.0);
        // M (M⁻¹ u) = u with M = (D + ωL) D⁻¹ (D + ωU) / (ω(2−ω)) built densely.
        let d = a.to_dense();
        let w = 1.3;
        let mut mm = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                // Σ_k (D+ωL)_ik D⁻¹_kk (D+ωU)_kj over k ≤ min(i, j).
                let lo = |i: usize, k: usize| {
                    if i == k {
                        d[i * n + i]
                    } else {
                        w * d[i * n + k]
                    }
                };
                mm[i * n + j] = (0..=i.min(j))
                    .map(|k| lo(i, k) * lo(j, k) / d[k * n + k])
                    .sum::<f64>()
                    / (w * (2.0 - w));
            }
        }
        for i in 0..n {
            let back: f64 = (0..n).map(|j| mm[i * n + j] * mu[j]).sum();
            assert!((back - u[i]).abs() < 1e-12, "row {i}: {back} vs {}", u[i]);
        }
    }

    #[test]
    fn rejects_bad_omega_and_zero_diagonal() {
        let a = laplacian_2d(3);
        assert!(Ssor::new(&a, 2.0).is_err());
        assert!(Ssor::new(&a, 0.0).is_err());
        let z = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, 0.0), (0, 1, 1.0)]).unwrap();
        assert!(Ssor::new(&z, 1.0)
            .err()
            .unwrap()
            .to_string()
            .contains("row 1"));
    }
}
