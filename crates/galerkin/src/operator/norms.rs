//! Error norms against an exact solution: ‖u − u_h‖_L2 and |u − u_h|_H1, by quadrature of high
//! degree. The exact gradient is taken by central differences of the exact solution (error
//! O(1e-10) relative), so any closure or expression works as an exact solution.
use super::geometry::{inverse_jacobian, physical_gradient};
use super::integrate::VectorFn;
use crate::fe::QuadratureRule;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use rayon::prelude::*;

/// L2 and H1-seminorm errors.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct ErrorNorms {
    pub l2: f64,
    pub h1_semi: f64,
    /// ‖u‖_L2 of the exact solution, for relative errors.
    pub l2_exact: f64,
}

/// Compute the errors of `u` (a vector of `space`) against `exact`.
pub fn error_norms(space: &FunctionSpace, u: &[f64], exact: &VectorFn) -> Result<ErrorNorms> {
    if u.len() != space.ndofs() {
        return Err(Error::dim("solution vector", space.ndofs(), u.len()));
    }
    let mesh = &*space.mesh;
    let k = space.element.degree();
    let rule = QuadratureRule::new(mesh.cell_type, 2 * k + 4)?;
    let tab = space.element.tabulate(&rule.points);
    let (n, dim, nloc) = (space.ncomp, mesh.dim, tab.ndofs);
    let (lo, hi) = mesh.bounding_box();
    let h = 1e-5 * (0..dim).map(|i| hi[i] - lo[i]).fold(0.0, f64::max).max(1e-300);
    let sums = (0..mesh.num_cells())
        .into_par_iter()
        .map(|c| -> Result<[f64; 3]> {
            let nodes = space.dofmap.cell(c);
            let mut acc = [0.0; 3];
            let (mut ue, mut up, mut um) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            for (q, (&xi, &wq)) in rule.points.iter().zip(&rule.weights).enumerate() {
                let (x, jac) = mesh.map_point(c, xi);
                let (inv, det) = inverse_jacobian(&jac, dim)?;
                let w = wq * det.abs();
                exact(x, &mut ue);
                for a in 0..n {
                    let mut uh = 0.0;
                    let mut gh = [0.0; 3];
                    for i in 0..nloc {
                        let coef = u[nodes[i] * n + a] * space.dofmap.sign(c, i);
                        uh += coef * tab.values[q * nloc + i];
                        let g = physical_gradient(&inv, tab.grads[q * nloc + i], dim);
                        for kk in 0..dim {
                            gh[kk] += coef * g[kk];
                        }
                    }
                    acc[0] += w * (ue[a] - uh).powi(2);
                    acc[2] += w * ue[a].powi(2);
                    for (kk, ghk) in gh.iter().enumerate().take(dim) {
                        let (mut xp, mut xm) = (x, x);
                        xp[kk] += h;
                        xm[kk] -= h;
                        exact(xp, &mut up);
                        exact(xm, &mut um);
                        let ge = (up[a] - um[a]) / (2.0 * h);
                        acc[1] += w * (ge - ghk).powi(2);
                    }
                }
            }
            Ok(acc)
        })
        .try_reduce(|| [0.0; 3], |a, b| Ok([a[0] + b[0], a[1] + b[1], a[2] + b[2]]))?;
    Ok(ErrorNorms { l2: sums[0].sqrt(), h1_semi: sums[1].sqrt(), l2_exact: sums[2].sqrt() })
}
