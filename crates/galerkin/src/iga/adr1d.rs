//! The seed's 1D problem: `−(a u′)′ + b u′ + c u = f` on `[x_0, x_1]` with, at each end, a
//! Dirichlet value or a Robin condition `a ∂u/∂n + β u = γ` (outward normal; Neumann is β = 0).
//!
//! Weak form (Galerkin with the B-spline space): `∫ a u′v′ + b u′ v + c u v + Σ_ends β u v =
//! ∫ f v + Σ_ends γ v`, integrated with `nq` Gauss points per element (p + 1 by default). Dirichlet
//! ends are imposed exactly: with an open knot vector only the end basis function is non-zero at an
//! end, so its coefficient is the boundary value.
use super::field::Field;
use super::space::{gauss_rule, Space1d};
use super::system::ElementSystem;
use crate::Result;
use rayon::prelude::*;

/// A condition at one end of the interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EndCondition {
    /// `u = value`.
    Dirichlet(f64),
    /// `a ∂u/∂n + β u = γ` with the outward normal (`∂u/∂n = −u′` at the left end).
    Robin { beta: f64, gamma: f64 },
}

/// `−(a u′)′ + b u′ + c u = f` with end conditions.
#[derive(Clone, Debug)]
pub struct Adr1d {
    pub a: Field,
    pub b: Field,
    pub c: Field,
    pub f: Field,
    pub left: EndCondition,
    pub right: EndCondition,
}

impl Adr1d {
    /// Element matrices and load vector on `space` with `nq` Gauss points per element, end
    /// conditions applied. Any coefficient that is not finite at a quadrature point is an error
    /// naming its key and the point.
    pub fn assemble(&self, space: &Space1d, nq: usize) -> Result<ElementSystem> {
        let rule = gauss_rule(nq)?;
        let k = space.degree() + 1;
        let ne = space.num_elements();
        let mut matrices = vec![0.0; ne * k * k];
        let mut local_rhs = vec![0.0; ne * k];
        matrices
            .par_chunks_mut(k * k)
            .zip(local_rhs.par_chunks_mut(k))
            .enumerate()
            .try_for_each_init(
                || space.table(nq),
                |tab, (e, (m, r))| -> Result<()> {
                    space.tabulate(e, &rule, tab);
                    for q in 0..nq {
                        let x = [tab.x[q], 0.0];
                        let (a, b, c) = (self.a.eval(x, 1)?, self.b.eval(x, 1)?, self.c.eval(x, 1)?);
                        let f = self.f.eval(x, 1)?;
                        let w = tab.w[q];
                        let (n, d) = (&tab.val[q * k..(q + 1) * k], &tab.der[q * k..(q + 1) * k]);
                        for j in 0..k {
                            let (wnj, wdj) = (w * n[j], w * d[j]);
                            for i in 0..k {
                                m[i + j * k] += a * wdj * d[i] + b * wdj * n[i] + c * wnj * n[i];
                            }
                        }
                        for i in 0..k {
                            r[i] += w * f * n[i];
                        }
                    }
                    Ok(())
                },
            )?;
        let n = space.num_basis();
        let mut rhs = vec![0.0; n];
        for e in 0..ne {
            let first = space.first_dof(e);
            for i in 0..k {
                rhs[first + i] += local_rhs[e * k + i];
            }
        }
        let mut sys = ElementSystem { ndofs: n, k, element_dofs: space.element_dofs(), matrices, rhs, dirichlet: 0 };
        let mut dirichlet = Vec::new();
        for (cond, elem, local, dof) in [(self.left, 0, 0, 0), (self.right, ne - 1, k - 1, n - 1)] {
            match cond {
                EndCondition::Dirichlet(g) => dirichlet.push((dof, g)),
                EndCondition::Robin { beta, gamma } => {
                    sys.matrices[elem * k * k + local * (k + 1)] += beta;
                    sys.rhs[dof] += gamma;
                }
            }
        }
        sys.apply_dirichlet(&dirichlet)?;
        Ok(sys)
    }
}
