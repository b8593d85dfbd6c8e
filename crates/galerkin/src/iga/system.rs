//! A linear system kept as element matrices (what the multifrontal solver consumes: its leaves are
//! the element frontal matrices) plus a global right-hand side; Dirichlet conditions are imposed on
//! the element matrices themselves, and the same system can be assembled into CSR for faer.
use crate::linalg::CsrMatrix;
use crate::{Error, Result};
use rayon::prelude::*;

/// `A = Σ_e R_eᵀ K_e R_e`, `b`: `k × k` element matrices (column-major, local order of
/// `element_dofs`, entry `(i, j)` = form(trial j, test i)) and the assembled right-hand side.
#[derive(Clone, Debug)]
pub struct ElementSystem {
    pub ndofs: usize,
    /// Dofs per element.
    pub k: usize,
    /// `k` global dofs per element.
    pub element_dofs: Vec<u32>,
    /// `k²` values per element.
    pub matrices: Vec<f64>,
    pub rhs: Vec<f64>,
    /// Dofs fixed by [`ElementSystem::apply_dirichlet`].
    pub dirichlet: usize,
}

impl ElementSystem {
    pub fn num_elements(&self) -> usize {
        self.element_dofs.len() / self.k.max(1)
    }

    /// Imposes `u[d] = g` for each `(d, g)` by symmetric elimination on the element matrices: the
    /// column of `d` times `g` moves to the right-hand side, its row and column are zeroed, and one
    /// element holding `d` gets a 1 on the diagonal (the right-hand side entry becomes `g`). The
    /// assembled matrix then has identity rows and columns at constrained dofs, and stays
    /// symmetric if it was.
    pub fn apply_dirichlet(&mut self, constraints: &[(usize, f64)]) -> Result<()> {
        let mut value = vec![f64::NAN; self.ndofs];
        for &(d, g) in constraints {
            if d >= self.ndofs {
                return Err(Error::invalid(format!("Dirichlet dof {d} out of range (n = {})", self.ndofs)));
            }
            if !g.is_finite() {
                return Err(Error::invalid(format!("Dirichlet value of dof {d} is not finite ({g})")));
            }
            value[d] = g;
        }
        let k = self.k;
        // Lifting: b_i −= Σ_e K_e(i, c) g_c over constrained local columns c, unconstrained rows i.
        let mut owner = vec![usize::MAX; self.ndofs];
        for (e, dofs) in self.element_dofs.chunks(k).enumerate() {
            let m = &mut self.matrices[e * k * k..(e + 1) * k * k];
            for c in 0..k {
                let dc = dofs[c] as usize;
                let g = value[dc];
                if g.is_nan() {
                    continue;
                }
                for (i, &di) in dofs.iter().enumerate() {
                    if value[di as usize].is_nan() {
                        self.rhs[di as usize] -= m[i + c * k] * g;
                    }
                }
                for i in 0..k {
                    m[i + c * k] = 0.0;
                    m[c + i * k] = 0.0;
                }
                if owner[dc] == usize::MAX {
                    owner[dc] = e;
                    m[c + c * k] = 1.0;
                }
            }
        }
        for &(d, g) in constraints {
            self.rhs[d] = g;
        }
        self.dirichlet += constraints.len();
        Ok(())
    }

    /// The assembled matrix in CSR (duplicates summed), for faer and for checks.
    pub fn to_csr(&self) -> Result<CsrMatrix> {
        let k = self.k;
        let triplets: Vec<(usize, usize, f64)> = self
            .element_dofs
            .par_chunks(k)
            .zip(self.matrices.par_chunks(k * k))
            .flat_map_iter(|(dofs, m)| {
                (0..k * k).map(move |idx| (dofs[idx % k] as usize, dofs[idx / k] as usize, m[idx]))
            })
            .collect();
        CsrMatrix::from_triplets(self.ndofs, self.ndofs, &triplets)
    }

    /// `y = A x`, element by element (for residual checks without assembling).
    pub fn apply(&self, x: &[f64], y: &mut [f64]) {
        let k = self.k;
        y.iter_mut().for_each(|v| *v = 0.0);
        for (dofs, m) in self.element_dofs.chunks(k).zip(self.matrices.chunks(k * k)) {
            for j in 0..k {
                let xj = x[dofs[j] as usize];
                for i in 0..k {
                    y[dofs[i] as usize] += m[i + j * k] * xj;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two linear elements on three dofs: 1D Laplacian [1 -1; -1 1] each.
    fn laplace() -> ElementSystem {
        let e = [1.0, -1.0, -1.0, 1.0];
        ElementSystem { ndofs: 3, k: 2, element_dofs: vec![0, 1, 1, 2], matrices: [e, e].concat(), rhs: vec![0.0, 1.0, 0.0], dirichlet: 0 }
    }

    #[test]
    fn dirichlet_elimination_is_symmetric_and_exact() {
        let mut s = laplace();
        s.apply_dirichlet(&[(0, 2.0), (2, -1.0)]).unwrap();
        let a = s.to_csr().unwrap();
        assert_eq!(a.to_dense(), vec![1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0]);
        // b_1 = 1 + 1·2 + 1·(−1) = 2 → u_1 = 1, and the constrained values come through.
        assert_eq!(s.rhs, vec![2.0, 2.0, -1.0]);
        let mut y = vec![0.0; 3];
        s.apply(&[2.0, 1.0, -1.0], &mut y);
        assert_eq!(y, s.rhs);
        assert!(laplace().apply_dirichlet(&[(3, 0.0)]).is_err());
        assert!(laplace().apply_dirichlet(&[(1, f64::NAN)]).is_err());
    }
}
