//! 2D problems on a rectangle with tensor B-splines: Poisson `−∇·(κ∇u) = f` with `u = g` on the
//! whole boundary, and the L2 projection `∫ u v = ∫ f v` (no boundary condition).
//!
//! **Boundary data.** With open knot vectors only the functions of the outer ring of control points
//! are non-zero on the boundary, and their traces on an edge are the 1D B-splines of that edge. The
//! boundary coefficients are therefore fixed by projecting `g` edge by edge: the corner
//! coefficients interpolate `g` at the corners (the only function non-zero at a corner is the
//! corner one, with value 1), then each edge's remaining coefficients are the L2 projection of `g`
//! onto that edge's spline space with the corner values held. This keeps the optimal rates (p + 1
//! in L2, p in H1) for smooth `g`. The values are imposed on the element matrices by symmetric
//! elimination ([`ElementSystem::apply_dirichlet`]).
use super::field::Field;
use super::space::{gauss_rule, Space1d, Space2d};
use super::system::ElementSystem;
use crate::solver::DirectSolver;
use crate::Result;
use rayon::prelude::*;

/// What is solved on the rectangle.
#[derive(Clone, Debug)]
pub enum Physics2d {
    /// `−∇·(κ∇u) = f`, `u = g` on the boundary.
    Poisson { kappa: Field, dirichlet: Field },
    /// `u = f` in the L2 sense (the mass matrix).
    Projection,
}

/// A 2D problem: the physics and the source `f`.
#[derive(Clone, Debug)]
pub struct Problem2d {
    pub physics: Physics2d,
    pub f: Field,
}

impl Problem2d {
    /// Element matrices and load vector with `nq × nq` Gauss points per element, boundary values
    /// imposed (Poisson).
    pub fn assemble(&self, space: &Space2d, nq: usize) -> Result<ElementSystem> {
        let rule = gauss_rule(nq)?;
        let (ex, ey) = space.grid();
        let (bx, by) = (space.x.degree() + 1, space.y.degree() + 1);
        let k = bx * by;
        let mut matrices = vec![0.0; ex * ey * k * k];
        let mut local_rhs = vec![0.0; ex * ey * k];
        let kappa = match &self.physics {
            Physics2d::Poisson { kappa, .. } => Some(kappa),
            Physics2d::Projection => None,
        };
        matrices
            .par_chunks_mut(ex * k * k)
            .zip(local_rhs.par_chunks_mut(ex * k))
            .enumerate()
            .try_for_each_init(
                || (space.x.table(nq), space.y.table(nq), vec![0.0; k], vec![0.0; k], vec![0.0; k]),
                |(tx, ty, n, gx, gy), (j, (mrow, rrow))| -> Result<()> {
                    space.y.tabulate(j, &rule, ty);
                    for i in 0..ex {
                        space.x.tabulate(i, &rule, tx);
                        let m = &mut mrow[i * k * k..(i + 1) * k * k];
                        let r = &mut rrow[i * k..(i + 1) * k];
                        for qy in 0..nq {
                            for qx in 0..nq {
                                let p = [tx.x[qx], ty.x[qy]];
                                let w = tx.w[qx] * ty.w[qy];
                                for b in 0..by {
                                    for a in 0..bx {
                                        let (vx, dx) = (tx.val[qx * bx + a], tx.der[qx * bx + a]);
                                        let (vy, dy) = (ty.val[qy * by + b], ty.der[qy * by + b]);
                                        n[a + bx * b] = vx * vy;
                                        gx[a + bx * b] = dx * vy;
                                        gy[a + bx * b] = vx * dy;
                                    }
                                }
                                let f = self.f.eval(p, 2)?;
                                match kappa {
                                    Some(kf) => {
                                        let wk = w * kf.eval(p, 2)?;
                                        for jj in 0..k {
                                            for ii in 0..k {
                                                m[ii + jj * k] += wk * (gx[jj] * gx[ii] + gy[jj] * gy[ii]);
                                            }
                                        }
                                    }
                                    None => {
                                        for jj in 0..k {
                                            for ii in 0..k {
                                                m[ii + jj * k] += w * n[jj] * n[ii];
                                            }
                                        }
                                    }
                                }
                                for ii in 0..k {
                                    r[ii] += w * f * n[ii];
                                }
                            }
                        }
                    }
                    Ok(())
                },
            )?;
        let element_dofs = space.element_dofs();
        let mut rhs = vec![0.0; space.num_basis()];
        for (dofs, r) in element_dofs.chunks(k).zip(local_rhs.chunks(k)) {
            for (d, v) in dofs.iter().zip(r) {
                rhs[*d as usize] += v;
            }
        }
        let mut sys = ElementSystem { ndofs: space.num_basis(), k, element_dofs, matrices, rhs, dirichlet: 0 };
        if let Physics2d::Poisson { dirichlet, .. } = &self.physics {
            sys.apply_dirichlet(&boundary_values(space, dirichlet, nq)?)?;
        }
        Ok(sys)
    }
}

/// The boundary control values of `g` (see the module docs): corners interpolated, each edge's
/// other coefficients the L2 projection of `g` on the edge with the corners held.
pub fn boundary_values(space: &Space2d, g: &Field, nq: usize) -> Result<Vec<(usize, f64)>> {
    let (nx, ny) = (space.x.num_basis(), space.y.num_basis());
    let (x0, x1) = space.x.knots().domain();
    let (y0, y1) = space.y.knots().domain();
    let mut out = Vec::new();
    // (edge space, point on the edge from the edge coordinate, global dof of edge function i)
    let edges: [(&Space1d, Box<dyn Fn(f64) -> [f64; 2]>, Box<dyn Fn(usize) -> usize>); 4] = [
        (&space.x, Box::new(move |t| [t, y0]), Box::new(|i| i)),
        (&space.x, Box::new(move |t| [t, y1]), Box::new(move |i| i + nx * (ny - 1))),
        (&space.y, Box::new(move |t| [x0, t]), Box::new(move |j| nx * j)),
        (&space.y, Box::new(move |t| [x1, t]), Box::new(move |j| nx - 1 + nx * j)),
    ];
    for (s, point, dof) in &edges {
        let values = project_edge(s, &|t| g.eval(point(t), 2), nq)?;
        out.extend(values.into_iter().enumerate().map(|(i, v)| (dof(i), v)));
    }
    // Corners appear on two edges with the same interpolated value; keep one of each.
    out.sort_by_key(|&(d, _)| d);
    out.dedup_by_key(|&mut (d, _)| d);
    Ok(out)
}

/// Coefficients of the L2 projection of `g` onto a 1D spline space with both end coefficients
/// interpolating `g`.
fn project_edge(s: &Space1d, g: &dyn Fn(f64) -> Result<f64>, nq: usize) -> Result<Vec<f64>> {
    let rule = gauss_rule(nq)?;
    let k = s.degree() + 1;
    let n = s.num_basis();
    let mut tab = s.table(nq);
    let mut matrices = vec![0.0; s.num_elements() * k * k];
    let mut rhs = vec![0.0; n];
    for e in 0..s.num_elements() {
        s.tabulate(e, &rule, &mut tab);
        let m = &mut matrices[e * k * k..(e + 1) * k * k];
        for q in 0..nq {
            let gq = g(tab.x[q])?;
            let (w, v) = (tab.w[q], &tab.val[q * k..(q + 1) * k]);
            for j in 0..k {
                for i in 0..k {
                    m[i + j * k] += w * v[j] * v[i];
                }
                rhs[s.first_dof(e) + j] += w * gq * v[j];
            }
        }
    }
    let (a, b) = s.knots().domain();
    let mut sys = ElementSystem { ndofs: n, k, element_dofs: s.element_dofs(), matrices, rhs, dirichlet: 0 };
    sys.apply_dirichlet(&[(0, g(a)?), (n - 1, g(b)?)])?;
    DirectSolver::cholesky(&sys.to_csr()?)?.solve(&sys.rhs)
}
