//! Error norms against an exact solution: ‖u − u_h‖_L2 and |u − u_h|_H1, by quadrature of high
//! degree. The exact solution gives its values and gradients ([`ExactFn`]): problem files' compiled
//! expressions differentiate exactly in the same pass; any other closure is differentiated by
//! central differences (error O(1e-10) relative, [`error_norms`]).
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

/// An exact solution with its gradient: `f(x, values, gradients)` fills every component's value
/// and gradient in (x, y, z).
pub type ExactFn = std::sync::Arc<dyn Fn([f64; 3], &mut [f64], &mut [[f64; 3]]) + Send + Sync>;

/// Compute the errors of `u` (a vector of `space`) against `exact`, differentiated by central
/// differences.
pub fn error_norms(space: &FunctionSpace, u: &[f64], exact: &VectorFn) -> Result<ErrorNorms> {
    let (lo, hi) = space.mesh.bounding_box();
    let h = 1e-5 * (0..space.mesh.dim).map(|i| hi[i] - lo[i]).fold(0.0, f64::max).max(1e-300);
    let (f, n, dim) = (exact.clone(), space.ncomp, space.mesh.dim);
    let with_grad: ExactFn = std::sync::Arc::new(move |x, v: &mut [f64], g: &mut [[f64; 3]]| {
        f(x, v);
        let (mut up, mut um) = (vec![0.0; n], vec![0.0; n]);
        for k in 0..dim {
            let (mut xp, mut xm) = (x, x);
            xp[k] += h;
            xm[k] -= h;
            f(xp, &mut up);
            f(xm, &mut um);
            for a in 0..n {
                g[a][k] = (up[a] - um[a]) / (2.0 * h);
            }
        }
    });
    error_norms_exact(space, u, &with_grad)
}

/// Compute the errors of `u` (a vector of `space`) against `exact` and its gradient.
pub fn error_norms_exact(space: &FunctionSpace, u: &[f64], exact: &ExactFn) -> Result<ErrorNorms> {
    if u.len() != space.ndofs() {
        return Err(Error::dim("solution vector", space.ndofs(), u.len()));
    }
    let mesh = &*space.mesh;
    let k = space.element.degree();
    let rule = QuadratureRule::new(mesh.cell_type, 2 * k + 4)?;
    let tab = space.element.tabulate(&rule.points);
    let (n, dim, nloc) = (space.ncomp, mesh.dim, tab.ndofs);
    let sums = (0..mesh.num_cells())
        .into_par_iter()
        .map(|c| -> Result<[f64; 3]> {
            let nodes = space.dofmap.cell(c);
            let mut acc = [0.0; 3];
            let (mut ue, mut ge) = (vec![0.0; n], vec![[0.0; 3]; n]);
            let mut g = vec![[0.0; 3]; nloc];
            for (q, (&xi, &wq)) in rule.points.iter().zip(&rule.weights).enumerate() {
                let (x, jac) = mesh.map_point(c, xi);
                let (inv, det) = inverse_jacobian(&jac, dim)?;
                let w = wq * det.abs();
                exact(x, &mut ue, &mut ge);
                for (i, gi) in g.iter_mut().enumerate() {
                    *gi = physical_gradient(&inv, tab.grads[q * nloc + i], dim);
                }
                for a in 0..n {
                    let mut uh = 0.0;
                    let mut gh = [0.0; 3];
                    for i in 0..nloc {
                        let coef = u[nodes[i] * n + a] * space.dofmap.sign(c, i);
                        uh += coef * tab.values[q * nloc + i];
                        for kk in 0..dim {
                            gh[kk] += coef * g[i][kk];
                        }
                    }
                    acc[0] += w * (ue[a] - uh).powi(2);
                    acc[2] += w * ue[a].powi(2);
                    for kk in 0..dim {
                        acc[1] += w * (ge[a][kk] - gh[kk]).powi(2);
                    }
                }
            }
            Ok(acc)
        })
        .try_reduce(|| [0.0; 3], |a, b| Ok([a[0] + b[0], a[1] + b[1], a[2] + b[2]]))?;
    Ok(ErrorNorms { l2: sums[0].sqrt(), h1_semi: sums[1].sqrt(), l2_exact: sums[2].sqrt() })
}
