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
//! - **affine cells with coefficients constant per cell** (simplices, and parallelograms and
//!   parallelepipeds among quadrilaterals and hexahedra up to [`MOMENTS_MAX_NLOC`] basis functions
//!   and one component, checked cell by cell): `D̂` is one matrix per cell and `Σ_q E_q[r][i] E_q[r'][j]` are reference
//!   moments computed once, so the element matrix is a contraction of reference tensors with the
//!   cell's geometric factors (FFC's tensor representation; no quadrature loop, no physical
//!   gradients);
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

/// Reference moments on cells that are not simplices (used where a cell turns out affine) up to
/// this many basis functions: Q2 hexahedra, 27² · 9 numbers (52 KB); beyond, the tables outgrow
/// the caches and sum factorization is cheaper.
pub const MOMENTS_MAX_NLOC: usize = 27;

/// Relative tolerance of [`affine_jacobian`]: a vertex this close to the affine map's image moves
/// the element matrix by round-off only.
const AFFINE_TOL: f64 = 1e-13;

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
    /// Affine cells with per-cell coefficients: `mom[(r·R + r')·nloc² + i·nloc + j]` (the pair of
    /// rows outermost, so the contraction is an axpy over contiguous entries).
    moments: Option<Vec<f64>>,
    /// Whether every cell is affine (simplices); else [`affine_jacobian`] decides per cell whether
    /// the moments apply.
    all_affine: bool,
    /// One component and a symmetric `D̂`: the moments of a pair r < r' hold `M_rr' + M_r'r`, and
    /// the contraction reads the pairs r ≤ r' only (6 instead of 9 in 3D).
    symmetric_scalar: bool,
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
        let all_affine = integ.geo.affine;
        let symmetric_scalar = ncomp == 1 && integ.qf.is_symmetric();
        // Tensor cells take the moments for one component only: vector (elasticity) matrices there keep
        // sum factorization, whose round-off the examples' CG iteration counts were recorded with.
        let moments = (integ.passive.per_cell() && (all_affine || (ncomp == 1 && nloc <= MOMENTS_MAX_NLOC))).then(|| {
            let nn = nloc * nloc;
            let mut mom = vec![0.0; nn * nrows * nrows];
            for (q, &w) in integ.quad.weights.iter().enumerate() {
                let e = &rows[q * nrows * nloc..(q + 1) * nrows * nloc];
                for r in 0..nrows {
                    for r2 in 0..nrows {
                        let out = &mut mom[(r * nrows + r2) * nn..(r * nrows + r2 + 1) * nn];
                        for i in 0..nloc {
                            let wi = w * e[r * nloc + i];
                            for (o, &ej) in out[i * nloc..(i + 1) * nloc].iter_mut().zip(&e[r2 * nloc..(r2 + 1) * nloc]) {
                                *o += wi * ej;
                            }
                        }
                    }
                }
            }
            if symmetric_scalar {
                // K = Σ_r D̂_rr M_rr + Σ_{r<r'} D̂_rr' (M_rr' + M_r'r): fold the pairs once.
                for r in 0..nrows {
                    for r2 in r + 1..nrows {
                        let (lo, hi) = mom.split_at_mut((r2 * nrows + r) * nn);
                        for (a, b) in lo[(r * nrows + r2) * nn..(r * nrows + r2 + 1) * nn].iter_mut().zip(&hi[..nn]) {
                            *a += b;
                        }
                    }
                }
            }
            mom
        });
        // Tensor-product cells keep sum factorization for the cells that are not affine.
        let tensor = if moments.is_none() || !all_affine { TensorMatrix::new(integ, has_value, modes.grad, SUMFACT_MIN_P1D) } else { None };
        LocalMatrices { integ, nloc, ncomp, dim, nrows, has_value, m: modes.size(ncomp, dim), moments, all_affine, symmetric_scalar, tensor, rows }
    }

    /// Which scheme this integrator gets (for reports and tests).
    pub fn scheme(&self) -> &'static str {
        if self.moments.is_some() && self.all_affine {
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
            let jac = if self.all_affine {
                Some(integ.geo.jacobian(mesh, c, 0))
            } else {
                integ.geo.cell_coords(mesh, c, &mut s.xv);
                affine_jacobian(&integ.geo, mesh.cell_type, &s.xv, self.dim)
            };
            if let Some(jac) = jac {
                let (inv, det) = inverse_jacobian(&jac, self.dim)?;
                self.pulled_back(c, 0, &inv, det.abs(), s);
                self.contract_moments(mom, s, ke);
                if integ.qf.is_symmetric() {
                    // The contraction rounds (i, a; j, b) and (j, b; i, a) differently: keep the
                    // matrix exactly symmetric, as the other schemes do (CG sees it).
                    mirror_upper(ke, self.ncomp, self.nloc);
                }
                return Ok(());
            }
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

impl LocalMatrices<'_> {
    /// Per component pair, `K_ab[i][j] = Σ_t D̂_ab[t] mom[t][i][j]` over the (r, r') pairs `t`:
    /// one axpy of the whole reference tensor per pair, into `ke` (zeroed by the caller).
    fn contract_moments(&self, mom: &[f64], s: &LocalScratch, ke: &mut [f64]) {
        let (n, nloc, nr) = (self.ncomp, self.nloc, self.nrows);
        let (width, nn) = (n * nr, nloc * nloc);
        for a in 0..n {
            for b in 0..n {
                // Rows (i, a) and columns (j, b): with one component the block is all of ke.
                for r in 0..nr {
                    for r2 in if self.symmetric_scalar { r..nr } else { 0..nr } {
                        let d = s.dref[(a * nr + r) * width + b * nr + r2];
                        if d == 0.0 {
                            continue;
                        }
                        let m = &mom[(r * nr + r2) * nn..(r * nr + r2 + 1) * nn];
                        if n == 1 {
                            for (o, &x) in ke[..nn].iter_mut().zip(m) {
                                *o += d * x;
                            }
                        } else {
                            for i in 0..nloc {
                                let out = &mut ke[((i * n + a) * n + b) * nloc..((i * n + a) * n + b + 1) * nloc];
                                for (o, &x) in out.iter_mut().zip(&m[i * nloc..(i + 1) * nloc]) {
                                    *o += d * x;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Copies the upper triangle of an element matrix (rows (i, a), columns (j, b), layout
/// `ke[((i·n + a)·n + b)·nloc + j]`) onto the lower one.
fn mirror_upper(ke: &mut [f64], n: usize, nloc: usize) {
    let at = |i: usize, a: usize, j: usize, b: usize| ((i * n + a) * n + b) * nloc + j;
    for i in 0..nloc {
        for a in 0..n {
            for j in 0..nloc {
                for b in 0..n {
                    if (j, b) < (i, a) {
                        ke[at(i, a, j, b)] = ke[at(j, b, i, a)];
                    }
                }
            }
        }
    }
}

/// The constant Jacobian of a cell whose geometry map is affine (a parallelogram or a
/// parallelepiped among quadrilaterals and hexahedra; any simplex), or `None`: the Jacobian at the
/// first point, accepted when it maps the reference vertices onto the cell's vertices `xv` to
/// [`AFFINE_TOL`] of the cell's size (a multilinear map that is affine at the vertices is affine).
pub fn affine_jacobian(geo: &super::geometry::GeometryTab, cell: crate::mesh::CellType, xv: &[[f64; 3]], dim: usize) -> Option<[[f64; 3]; 3]> {
    let j = geo.jacobian_at(xv, 0);
    let refv = cell.reference_vertices();
    let size: f64 = j.iter().flatten().map(|v| v.abs()).sum();
    let (x0, r0) = (xv[0], refv[0]);
    for (x, r) in xv.iter().zip(refv).skip(1) {
        for i in 0..dim {
            let image = x0[i] + (0..dim).map(|k| j[i][k] * (r[k] - r0[k])).sum::<f64>();
            if (x[i] - image).abs() > AFFINE_TOL * size {
                return None;
            }
        }
    }
    Some(j)
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
