//! Element matrices for CPU assembly, computed in reference coordinates with the QFunction's
//! pointwise operator pulled back once per point (or once per cell):
//!
//! `K[(i,a),(j,b)] = Σ_q Σ_{r,r'} E_q[r][i] D̂_q[(a,r),(b,r')] E_q[r'][j]`
//!
//! where `E_q` holds the reference basis rows (value, then ∂/∂ξ_l) at point q and
//! `D̂_q = w_q |det J| Tᵀ D T` is the QFunction's linearised operator `D` (read column by column
//! from [`Composite::apply`]) with `T` mapping reference to physical field vectors (identity on
//! values, `J⁻ᵀ` on gradients). This is the same form as [`ElementIntegrator::element_matrix`],
//! arranged for speed:
//! - **affine cells with coefficients constant per cell** (simplices): `D̂` is one matrix per cell
//!   and `Σ_q E_q[r][i] E_q[r'][j]` are reference moments computed once, so the element matrix is a
//!   contraction of reference tensors with the cell's geometric factors (FFC's tensor
//!   representation; no quadrature loop, no physical gradients);
//! - **tensor-product cells** (quadrilaterals, hexahedra) on their Gauss product rule: sum
//!   factorization ([`super::sumfact`]), one 1D contraction per axis instead of a sum over all
//!   points for every pair of basis functions;
//! - otherwise a quadrature loop whose inner loops run over contiguous basis indices.
//!
//! The matrix is written in the layout `ke[((i·n + a)·n + b)·nloc + j]` (column node fastest), which
//! the scatter reads through [`super::assemble::Slots`].
use super::geometry::inverse_jacobian;
use super::integrate::ElementIntegrator;
use super::sumfact::TensorMatrix;
use crate::Result;

/// Sum factorization from this many basis functions per axis (Q2); Q1 takes the quadrature loop.
pub const SUMFACT_MIN_P1D: usize = 3;

/// Precomputed tables for one integrator.
pub struct LocalMatrices<'a> {
    integ: &'a ElementIntegrator<'a>,
    pub nloc: usize,
    pub ncomp: usize,
    dim: usize,
    /// Reference rows per component: value (when the physics reads it), then `dim` gradients.
    nrows: usize,
    has_value: bool,
    /// Field vector length of the QFunction (union layout of [`Composite`]).
    m: usize,
    /// Affine cells with per-cell coefficients: `mom[(i·nloc + j)·R² + r·R + r']`.
    moments: Option<Vec<f64>>,
    /// Tensor-product cells on the Gauss product rule.
    tensor: Option<TensorMatrix>,
    /// `e[(q·R + r)·nloc + j]`: the reference rows at every point (quadrature path).
    rows: Vec<f64>,
}

/// Per-thread scratch.
#[derive(Default)]
pub struct LocalScratch {
    p: Vec<f64>,
    unit: Vec<f64>,
    d: Vec<f64>,
    dref: Vec<f64>,
    /// D̂ at every point (tensor path), `[q][(a·R + r)·(n·R) + b·R + r']`.
    dq: Vec<f64>,
    h: Vec<f64>,
    col: Vec<f64>,
    last_p: Vec<f64>,
    xv: Vec<[f64; 3]>,
    /// Sum-factorization work arrays.
    pub(crate) sf: super::sumfact::SfScratch,
}

impl<'a> LocalMatrices<'a> {
    pub fn new(integ: &'a ElementIntegrator<'a>) -> LocalMatrices<'a> {
        let space = integ.space;
        let (nloc, ncomp, dim) = (integ.tab.ndofs, space.ncomp, space.mesh.dim);
        let modes = integ.qf.modes();
        let has_value = modes.value;
        let nrows = usize::from(modes.value) + if modes.grad { dim } else { 0 };
        let nq = integ.quad.len();
        let mut rows = vec![0.0; nq * nrows * nloc];
        for q in 0..nq {
            for j in 0..nloc {
                let mut r = 0;
                if has_value {
                    rows[(q * nrows) * nloc + j] = integ.tab.values[q * nloc + j];
                    r = 1;
                }
                if modes.grad {
                    for l in 0..dim {
                        rows[(q * nrows + r + l) * nloc + j] = integ.tab.grads[q * nloc + j][l];
                    }
                }
            }
        }
        let moments = (integ.geo.affine && integ.passive.per_cell()).then(|| {
            let rr = nrows * nrows;
            let mut mom = vec![0.0; nloc * nloc * rr];
            for (q, &w) in integ.quad.weights.iter().enumerate() {
                let e = &rows[q * nrows * nloc..(q + 1) * nrows * nloc];
                for i in 0..nloc {
                    for j in 0..nloc {
                        let out = &mut mom[(i * nloc + j) * rr..(i * nloc + j + 1) * rr];
                        for r in 0..nrows {
                            let wi = w * e[r * nloc + i];
                            for r2 in 0..nrows {
                                out[r * nrows + r2] += wi * e[r2 * nloc + j];
                            }
                        }
                    }
                }
            }
            mom
        });
        let tensor = if moments.is_none() { TensorMatrix::new(integ, has_value, modes.grad, SUMFACT_MIN_P1D) } else { None };
        LocalMatrices { integ, nloc, ncomp, dim, nrows, has_value, m: modes.size(ncomp, dim), moments, tensor, rows }
    }

    /// Which scheme this integrator gets (for reports and tests).
    pub fn scheme(&self) -> &'static str {
        if self.moments.is_some() {
            "reference tensor"
        } else if self.tensor.is_some() {
            "sum factorization"
        } else {
            "quadrature"
        }
    }

    /// Entries of one element matrix.
    pub fn len(&self) -> usize {
        let nd = self.nloc * self.ncomp;
        nd * nd
    }

    /// `D̂ = scale · Tᵀ D T` at point q of cell c into `s.dref` (`[(a·R + r)·(n·R) + b·R + r']`), with
    /// `inv` = J⁻¹. `D` is read from the QFunction only when the passive values change (cells of
    /// one region, constant coefficients: once).
    fn pulled_back(&self, c: usize, q: usize, inv: &[[f64; 3]; 3], scale: f64, s: &mut LocalScratch) {
        let (n, dim, nr, m) = (self.ncomp, self.dim, self.nrows, self.m);
        let qf = &self.integ.qf;
        let np = qf.npassive();
        s.p.resize(np, 0.0);
        self.integ.passive.point(c, q, &mut s.p);
        if s.d.len() != m * m || s.last_p.len() != np || s.last_p != s.p {
            s.last_p.clone_from(&s.p);
            s.unit.resize(m, 0.0);
            s.d.resize(m * m, 0.0);
            s.col.resize(m, 0.0);
            // D column by column: D e_t.
            for t in 0..m {
                s.unit.fill(0.0);
                s.unit[t] = 1.0;
                s.col.fill(0.0);
                qf.apply(&s.p, &s.unit, &mut s.col);
                for (r, v) in s.col.iter().enumerate() {
                    s.d[r * m + t] = *v;
                }
            }
        }
        let nv = if self.has_value { n } else { 0 };
        let v0 = usize::from(self.has_value);
        let width = n * nr;
        s.dref.resize(width * width, 0.0);
        let d = &s.d;
        let out = &mut s.dref;
        for a in 0..n {
            for b in 0..n {
                let row = |ra: usize| (a * nr + ra) * width + b * nr;
                if v0 == 1 {
                    // value–value, value–gradient and gradient–value blocks
                    out[row(0)] = scale * d[a * m + b];
                    for l in 0..nr - 1 {
                        let (mut vg, mut gv) = (0.0, 0.0);
                        for k in 0..dim {
                            vg += d[a * m + nv + b * dim + k] * inv[l][k];
                            gv += inv[l][k] * d[(nv + a * dim + k) * m + b];
                        }
                        out[row(0) + 1 + l] = scale * vg;
                        out[row(1 + l)] = scale * gv;
                    }
                }
                if nr > v0 {
                    // gradient–gradient: J⁻¹ D_ab J⁻ᵀ
                    let mut t = [[0.0; 3]; 3];
                    for l in 0..dim {
                        for k2 in 0..dim {
                            t[l][k2] = (0..dim).map(|k| inv[l][k] * d[(nv + a * dim + k) * m + nv + b * dim + k2]).sum();
                        }
                    }
                    for l in 0..dim {
                        for l2 in 0..dim {
                            let v: f64 = (0..dim).map(|k2| t[l][k2] * inv[l2][k2]).sum();
                            out[row(v0 + l) + v0 + l2] = scale * v;
                        }
                    }
                }
            }
        }
    }

    /// `D̂` at point q of cell c (vertices in `s.xv`) into `s.dref`; `inv_det` keeps an affine
    /// cell's `(J⁻¹, det J)` from its first point.
    fn point(&self, c: usize, q: usize, inv_det: &mut Option<([[f64; 3]; 3], f64)>, s: &mut LocalScratch) -> Result<()> {
        let integ = self.integ;
        let (inv, det) = match *inv_det {
            Some(id) if integ.geo.affine => id,
            _ => {
                let id = inverse_jacobian(&integ.geo.jacobian_at(&s.xv, q), self.dim)?;
                *inv_det = Some(id);
                id
            }
        };
        self.pulled_back(c, q, &inv, integ.quad.weights[q] * det.abs(), s);
        Ok(())
    }

    /// The element matrix of cell `c` (volume terms only) into `ke` (layout in the module docs).
    pub fn element_matrix(&self, c: usize, s: &mut LocalScratch, ke: &mut [f64]) -> Result<()> {
        let integ = self.integ;
        let mesh = &*integ.space.mesh;
        let (n, nloc, nr) = (self.ncomp, self.nloc, self.nrows);
        let width = n * nr;
        ke[..self.len()].fill(0.0);
        if let Some(mom) = &self.moments {
            let (inv, det) = inverse_jacobian(&integ.geo.jacobian(mesh, c, 0), self.dim)?;
            self.pulled_back(c, 0, &inv, det.abs(), s);
            // Per component pair, K_ab[i][j] = Σ_t D̂_ab[t] mom[i][j][t]: a dense matrix-vector
            // product over the (r, r') pairs.
            let rr = nr * nr;
            s.col.resize(rr, 0.0);
            for a in 0..n {
                for b in 0..n {
                    for r in 0..nr {
                        for r2 in 0..nr {
                            s.col[r * nr + r2] = s.dref[(a * nr + r) * width + b * nr + r2];
                        }
                    }
                    let dab = &s.col[..rr];
                    for i in 0..nloc {
                        let out = &mut ke[((i * n + a) * n + b) * nloc..((i * n + a) * n + b + 1) * nloc];
                        for (j, o) in out.iter_mut().enumerate() {
                            let m = &mom[(i * nloc + j) * rr..(i * nloc + j + 1) * rr];
                            *o = m.iter().zip(dab).map(|(x, y)| x * y).sum();
                        }
                    }
                }
            }
            return Ok(());
        }
        let nq = integ.quad.len();
        let mut inv_det = None;
        integ.geo.cell_coords(mesh, c, &mut s.xv);
        if let Some(t) = &self.tensor {
            s.dq.resize(nq * width * width, 0.0);
            for q in 0..nq {
                self.point(c, q, &mut inv_det, s)?;
                s.dq[q * width * width..(q + 1) * width * width].copy_from_slice(&s.dref);
            }
            t.element_matrix(n, nr, integ.qf.is_symmetric(), &s.dq, &mut s.sf, ke);
            return Ok(());
        }
        s.h.resize(width * n * nloc, 0.0);
        let symmetric = integ.qf.is_symmetric();
        for q in 0..nq {
            self.point(c, q, &mut inv_det, s)?;
            let e = &self.rows[q * nr * nloc..(q + 1) * nr * nloc];
            // H[(a, r), b][j] = Σ_r' D̂[(a,r),(b,r')] E[r'][j]
            for ar in 0..width {
                for b in 0..n {
                    let h = &mut s.h[(ar * n + b) * nloc..(ar * n + b + 1) * nloc];
                    h.fill(0.0);
                    for r2 in 0..nr {
                        let d = s.dref[ar * width + b * nr + r2];
                        if d != 0.0 {
                            for (hj, &ej) in h.iter_mut().zip(&e[r2 * nloc..(r2 + 1) * nloc]) {
                                *hj += d * ej;
                            }
                        }
                    }
                }
            }
            // K[(i,a),b][j] += Σ_r E[r][i] H[(a,r),b][j]; a symmetric scalar form needs j ≥ i only.
            let half = n == 1 && symmetric;
            for i in 0..nloc {
                let j0 = if half { i } else { 0 };
                for a in 0..n {
                    for r in 0..nr {
                        let ei = e[r * nloc + i];
                        if ei == 0.0 {
                            continue;
                        }
                        for b in 0..n {
                            let h = &s.h[((a * nr + r) * n + b) * nloc + j0..((a * nr + r) * n + b + 1) * nloc];
                            let out = &mut ke[((i * n + a) * n + b) * nloc + j0..((i * n + a) * n + b + 1) * nloc];
                            for (o, &x) in out.iter_mut().zip(h) {
                                *o += ei * x;
                            }
                        }
                    }
                }
            }
        }
        if n == 1 && symmetric {
            for i in 0..nloc {
                for j in 0..i {
                    ke[i * nloc + j] = ke[j * nloc + i];
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, CellType};
    use crate::physics::{Coefficient, Diffusion, Elasticity, Mass, PointwisePhysics, Sum};
    use crate::space::FunctionSpace;
    use std::sync::Arc;

    /// Every scheme gives the element matrices of the reference quadrature loop
    /// ([`ElementIntegrator::element_matrix`]) to round-off, on distorted meshes, for scalar and
    /// vector physics with constant and point-wise coefficients.
    #[test]
    fn schemes_match_the_quadrature_loop() {
        let mut seen = std::collections::BTreeSet::new();
        for cell in [CellType::Triangle, CellType::Quadrilateral, CellType::Tetrahedron, CellType::Hexahedron] {
            let dim = cell.dim();
            let mut mesh = if dim == 2 { generate::rectangle(2, 2, [0.0; 2], [1.0; 2], cell).unwrap() } else { generate::box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], cell).unwrap() };
            for (v, x) in mesh.coords.iter_mut().enumerate() {
                let s = (v as f64 * 0.7).sin() * 0.08;
                x[0] += s;
                x[1] -= 0.5 * s;
                if dim == 3 {
                    x[2] += 0.3 * s;
                }
            }
            let mesh = Arc::new(mesh);
            for degree in 1..=3 {
                let f = || Coefficient::function(|x| 1.0 + x[0] * x[1]);
                let cases: Vec<(usize, Box<dyn PointwisePhysics>)> = vec![
                    (1, Box::new(Diffusion::new(1.3))),
                    (1, Box::new(Sum(vec![Box::new(Diffusion::new(f())), Box::new(Mass::new(0.7, 1))]))),
                    (dim, Box::new(Sum(vec![Box::new(Elasticity::lame(1.1, 0.6, dim)), Box::new(Mass::new(0.4, dim))]))),
                    (dim, Box::new(Elasticity::lame(f(), 0.9, dim))),
                    (1, Box::new(Mass::new(f(), 1))),
                    (dim, Box::new(Mass::new(2.0, dim))),
                ];
                for (ncomp, physics) in cases {
                    let space = FunctionSpace::lagrange(mesh.clone(), degree, ncomp).unwrap();
                    let integ = ElementIntegrator::new(&space, physics.as_ref(), None).unwrap();
                    let mut local = LocalMatrices::new(&integ);
                    seen.insert(local.scheme());
                    if degree == 1 && local.tensor.is_none() && local.moments.is_none() {
                        // Q1 by sum factorization too, though assembly takes the quadrature loop.
                        let modes = integ.qf.modes();
                        local.tensor = TensorMatrix::new(&integ, modes.value, modes.grad, 2);
                    }
                    let nd = integ.elem_size();
                    let (nloc, n) = (local.nloc, ncomp);
                    let (mut want, mut got) = (vec![0.0; nd * nd], vec![0.0; nd * nd]);
                    let (mut s, mut ls) = (Default::default(), LocalScratch::default());
                    for c in 0..mesh.num_cells() {
                        integ.element_matrix(c, &mut s, &mut want).unwrap();
                        local.element_matrix(c, &mut ls, &mut got).unwrap();
                        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                        for i in 0..nloc {
                            for a in 0..n {
                                for j in 0..nloc {
                                    for b in 0..n {
                                        let w = want[(i * n + a) * nd + j * n + b];
                                        let g = got[((i * n + a) * n + b) * nloc + j];
                                        assert!((w - g).abs() <= 1e-12 * scale, "{cell:?} k={degree} n={n} {}: cell {c} ({i},{a},{j},{b}) {g} vs {w}", local.scheme());
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(seen.len(), 3, "all three schemes exercised: {seen:?}");
    }
}
