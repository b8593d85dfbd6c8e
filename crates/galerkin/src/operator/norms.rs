//! Error norms against an exact solution: ‖u − u_h‖_L2 and |u − u_h|_H1, by quadrature of high
//! degree. The exact solution gives its values and gradients ([`ExactFn`]): problem files' compiled
//! expressions differentiate exactly in the same pass; any other closure is differentiated by
//! central differences (error O(1e-10) relative, [`error_norms`]).
use super::geometry::{inverse_jacobian, physical_gradient, GeometryTab};
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

/// An exact solution with its gradient, at many points at once: `f(xs, values, gradients)` fills,
/// for point `p` of `xs` and component `a`, `values[p * ncomp + a]` and `gradients[p * ncomp + a]`
/// (in x, y, z). Batches let compiled expressions run as a tape over all quadrature points of a
/// cell (the per-point call was two thirds of the CPU error norms).
pub type ExactFn = std::sync::Arc<dyn Fn(&[[f64; 3]], &mut [f64], &mut [[f64; 3]]) + Send + Sync>;

/// Compute the errors of `u` (a vector of `space`) against `exact`, differentiated by central
/// differences.
pub fn error_norms(space: &FunctionSpace, u: &[f64], exact: &VectorFn) -> Result<ErrorNorms> {
    let (lo, hi) = space.mesh.bounding_box();
    let h = 1e-5 * (0..space.mesh.dim).map(|i| hi[i] - lo[i]).fold(0.0, f64::max).max(1e-300);
    let (f, n, dim) = (exact.clone(), space.ncomp, space.mesh.dim);
    let with_grad: ExactFn = std::sync::Arc::new(move |xs, v: &mut [f64], g: &mut [[f64; 3]]| {
        let mut pm = vec![0.0; 2 * n];
        for (p, &x) in xs.iter().enumerate() {
            f(x, &mut v[p * n..(p + 1) * n]);
            for k in 0..dim {
                let (mut xp, mut xm) = (x, x);
                xp[k] += h;
                xm[k] -= h;
                let (up, um) = pm.split_at_mut(n);
                f(xp, up);
                f(xm, um);
                for a in 0..n {
                    g[p * n + a][k] = (up[a] - um[a]) / (2.0 * h);
                }
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
    let geo = GeometryTab::new(mesh.cell_type, &rule.points);
    let (n, dim, nloc, nq) = (space.ncomp, mesh.dim, tab.ndofs, rule.points.len());
    // Per-thread buffers: cell vertices, quadrature points, exact values and gradients, the cell's
    // coefficients of u_h per component.
    type Buffers = (Vec<[f64; 3]>, Vec<[f64; 3]>, Vec<f64>, Vec<[f64; 3]>, Vec<f64>);
    let init = || -> Buffers { (Vec::new(), vec![[0.0; 3]; nq], vec![0.0; nq * n], vec![[0.0; 3]; nq * n], vec![0.0; n * nloc]) };
    let sums = (0..mesh.num_cells())
        .into_par_iter()
        .map_init(init, |(xv, xq, ue, ge, coef), c| -> Result<[f64; 3]> {
            let nodes = space.dofmap.cell(c);
            geo.cell_coords(mesh, c, xv);
            let mut inv_aff = None;
            if geo.affine {
                inv_aff = Some(inverse_jacobian(&geo.jacobian_at(xv, 0), dim)?);
            }
            for q in 0..nq {
                xq[q] = geo.point_at(xv, q);
            }
            exact(xq, ue, ge);
            // The cell's coefficients once; per point, u_h's reference gradient is mapped once per
            // component (the map is linear) instead of every basis function's.
            for a in 0..n {
                for i in 0..nloc {
                    coef[a * nloc + i] = u[nodes[i] * n + a] * space.dofmap.sign(c, i);
                }
            }
            let mut acc = [0.0; 3];
            for (q, &w_ref) in rule.weights.iter().enumerate() {
                let (inv, det) = match inv_aff {
                    Some(a) => a,
                    None => inverse_jacobian(&geo.jacobian_at(xv, q), dim)?,
                };
                let w = w_ref * det.abs();
                let (vals, grads) = (&tab.values[q * nloc..(q + 1) * nloc], &tab.grads[q * nloc..(q + 1) * nloc]);
                for a in 0..n {
                    let (mut uh, mut gref) = (0.0, [0.0; 3]);
                    for ((&cf, &v), gr) in coef[a * nloc..(a + 1) * nloc].iter().zip(vals).zip(grads) {
                        uh += cf * v;
                        for kk in 0..3 {
                            gref[kk] += cf * gr[kk];
                        }
                    }
                    let gh = physical_gradient(&inv, gref, dim);
                    let (uex, gex) = (ue[q * n + a], ge[q * n + a]);
                    acc[0] += w * (uex - uh).powi(2);
                    acc[2] += w * uex.powi(2);
                    for kk in 0..dim {
                        acc[1] += w * (gex[kk] - gh[kk]).powi(2);
                    }
                }
            }
            Ok(acc)
        })
        .try_reduce(|| [0.0; 3], |a, b| Ok([a[0] + b[0], a[1] + b[1], a[2] + b[2]]))?;
    Ok(ErrorNorms { l2: sums[0].sqrt(), h1_semi: sums[1].sqrt(), l2_exact: sums[2].sqrt() })
}
