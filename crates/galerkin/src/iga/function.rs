//! A discrete solution as a function: B-spline coefficients on a space, evaluated (with
//! derivatives) anywhere in the domain, and its errors against an exact solution in L2 and H1,
//! integrated with a Gauss rule of the caller's choosing (the tests use one point more than the
//! solver, as the seed does).
use super::basis::ders_basis_funs;
use super::space::{gauss_rule, Space1d, Space2d};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;

/// `u_h(x) = Σ_i c_i N_i(x)`.
#[derive(Clone, Debug)]
pub struct Spline1d {
    pub space: Space1d,
    pub coeffs: Vec<f64>,
}

/// `u_h(x, y) = Σ_ij c_ij N_i(x) M_j(y)`.
#[derive(Clone, Debug)]
pub struct Spline2d {
    pub space: Space2d,
    pub coeffs: Vec<f64>,
}

/// Errors `‖u − u_h‖` and norms `‖u‖` in L2 and the H1 seminorm.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ErrorNorms {
    pub l2: f64,
    pub h1_semi: f64,
    pub exact_l2: f64,
    pub exact_h1_semi: f64,
}

impl ErrorNorms {
    /// `‖u − u_h‖_H1 / ‖u‖_H1` with the full H1 norm (L2 plus seminorm).
    pub fn relative_h1(&self) -> f64 {
        self.l2.hypot(self.h1_semi) / self.exact_l2.hypot(self.exact_h1_semi).max(f64::MIN_POSITIVE)
    }
    pub fn relative_l2(&self) -> f64 {
        self.l2 / self.exact_l2.max(f64::MIN_POSITIVE)
    }
    fn add(self, o: ErrorNorms) -> ErrorNorms {
        ErrorNorms { l2: self.l2 + o.l2, h1_semi: self.h1_semi + o.h1_semi, exact_l2: self.exact_l2 + o.exact_l2, exact_h1_semi: self.exact_h1_semi + o.exact_h1_semi }
    }
    fn sqrt(self) -> ErrorNorms {
        ErrorNorms { l2: self.l2.sqrt(), h1_semi: self.h1_semi.sqrt(), exact_l2: self.exact_l2.sqrt(), exact_h1_semi: self.exact_h1_semi.sqrt() }
    }
}

fn check_len(what: &str, n: usize, coeffs: &[f64]) -> Result<()> {
    if coeffs.len() == n {
        Ok(())
    } else {
        Err(Error::dim(format!("{what} coefficients"), n, coeffs.len()))
    }
}

impl Spline1d {
    pub fn new(space: Space1d, coeffs: Vec<f64>) -> Result<Spline1d> {
        check_len("1D spline", space.num_basis(), &coeffs)?;
        Ok(Spline1d { space, coeffs })
    }

    /// `(u_h(x), u_h′(x))`; points outside the domain use the nearest element's polynomial.
    pub fn eval(&self, x: f64) -> (f64, f64) {
        let kv = self.space.knots();
        let span = kv.find_span(x);
        let p = kv.degree();
        let d = ders_basis_funs(kv, span, x, 1);
        let c = &self.coeffs[span - p..=span];
        (0..=p).fold((0.0, 0.0), |(u, du), i| (u + c[i] * d.ders[0][i], du + c[i] * d.ders[1][i]))
    }

    /// Errors against `u` and `u′` with `nq` Gauss points per element.
    pub fn errors(&self, u: &(dyn Fn(f64) -> f64 + Sync), du: &(dyn Fn(f64) -> f64 + Sync), nq: usize) -> Result<ErrorNorms> {
        let rule = gauss_rule(nq)?;
        let s = &self.space;
        let k = s.degree() + 1;
        let parts: Vec<ErrorNorms> = (0..s.num_elements())
            .into_par_iter()
            .map_init(
                || s.table(nq),
                |tab, e| {
                    s.tabulate(e, &rule, tab);
                    let c = &self.coeffs[s.first_dof(e)..s.first_dof(e) + k];
                    let mut acc = ErrorNorms::default();
                    for q in 0..nq {
                        let (uh, duh) = (0..k).fold((0.0, 0.0), |(a, b), i| (a + c[i] * tab.val[q * k + i], b + c[i] * tab.der[q * k + i]));
                        let (ue, due) = (u(tab.x[q]), du(tab.x[q]));
                        let w = tab.w[q];
                        acc.l2 += w * (ue - uh).powi(2);
                        acc.h1_semi += w * (due - duh).powi(2);
                        acc.exact_l2 += w * ue * ue;
                        acc.exact_h1_semi += w * due * due;
                    }
                    acc
                },
            )
            .collect();
        Ok(parts.into_iter().fold(ErrorNorms::default(), ErrorNorms::add).sqrt())
    }
}

impl Spline2d {
    pub fn new(space: Space2d, coeffs: Vec<f64>) -> Result<Spline2d> {
        check_len("2D spline", space.num_basis(), &coeffs)?;
        Ok(Spline2d { space, coeffs })
    }

    /// `(u_h, ∂u_h/∂x, ∂u_h/∂y)` at `(x, y)`.
    pub fn eval(&self, x: f64, y: f64) -> (f64, f64, f64) {
        let (kx, ky) = (self.space.x.knots(), self.space.y.knots());
        let (sx, sy) = (kx.find_span(x), ky.find_span(y));
        let (px, py) = (kx.degree(), ky.degree());
        let (dx, dy) = (ders_basis_funs(kx, sx, x, 1), ders_basis_funs(ky, sy, y, 1));
        let nx = self.space.x.num_basis();
        let mut out = (0.0, 0.0, 0.0);
        for b in 0..=py {
            for a in 0..=px {
                let c = self.coeffs[(sx - px + a) + nx * (sy - py + b)];
                out.0 += c * dx.ders[0][a] * dy.ders[0][b];
                out.1 += c * dx.ders[1][a] * dy.ders[0][b];
                out.2 += c * dx.ders[0][a] * dy.ders[1][b];
            }
        }
        out
    }

    /// Errors against `u` and `∇u` with `nq × nq` Gauss points per element.
    pub fn errors(&self, u: &(dyn Fn([f64; 2]) -> f64 + Sync), grad: &(dyn Fn([f64; 2]) -> [f64; 2] + Sync), nq: usize) -> Result<ErrorNorms> {
        let rule = gauss_rule(nq)?;
        let s = &self.space;
        let (ex, ey) = s.grid();
        let (bx, by) = (s.x.degree() + 1, s.y.degree() + 1);
        let nx = s.x.num_basis();
        let parts: Vec<ErrorNorms> = (0..ey)
            .into_par_iter()
            .map_init(
                || (s.x.table(nq), s.y.table(nq)),
                |(tx, ty), j| {
                    s.y.tabulate(j, &rule, ty);
                    let mut acc = ErrorNorms::default();
                    for i in 0..ex {
                        s.x.tabulate(i, &rule, tx);
                        let (fx, fy) = (s.x.first_dof(i), s.y.first_dof(j));
                        for qy in 0..nq {
                            for qx in 0..nq {
                                let mut uh = [0.0; 3];
                                for b in 0..by {
                                    for a in 0..bx {
                                        let c = self.coeffs[(fx + a) + nx * (fy + b)];
                                        let (vx, dx) = (tx.val[qx * bx + a], tx.der[qx * bx + a]);
                                        let (vy, dy) = (ty.val[qy * by + b], ty.der[qy * by + b]);
                                        uh[0] += c * vx * vy;
                                        uh[1] += c * dx * vy;
                                        uh[2] += c * vx * dy;
                                    }
                                }
                                let p = [tx.x[qx], ty.x[qy]];
                                let (ue, ge) = (u(p), grad(p));
                                let w = tx.w[qx] * ty.w[qy];
                                acc.l2 += w * (ue - uh[0]).powi(2);
                                acc.h1_semi += w * ((ge[0] - uh[1]).powi(2) + (ge[1] - uh[2]).powi(2));
                                acc.exact_l2 += w * ue * ue;
                                acc.exact_h1_semi += w * (ge[0] * ge[0] + ge[1] * ge[1]);
                            }
                        }
                    }
                    acc
                },
            )
            .collect();
        Ok(parts.into_iter().fold(ErrorNorms::default(), ErrorNorms::add).sqrt())
    }
}
