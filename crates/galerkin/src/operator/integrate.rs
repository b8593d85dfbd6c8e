//! Element integration: the `Bᵀ D B` part of the operator for one cell, generic over the element
//! (through its tabulated basis) and the physics (through the linearised form of its QFunctions,
//! [`Composite::block`]), plus element load vectors and the facet terms of Neumann and Robin
//! conditions.
use super::basis::Basis;
use super::geometry::{facet_measure_normal, inverse_jacobian, jacobian_det, physical_gradient, GeometryTab};
use super::passive::PassiveData;
use super::qfunction::{Composite, Pair};
use crate::fe::quadrature::facet_rule;
use crate::fe::{QuadratureKind, QuadratureRule, Tabulation};
use crate::physics::{Coefficient, PointwisePhysics};
use crate::space::FunctionSpace;
use crate::Result;
use std::sync::Arc;

/// A vector-valued function of position: writes `ncomp` values.
pub type VectorFn = Arc<dyn Fn([f64; 3], &mut [f64]) + Send + Sync>;
/// A vector-valued function of position and outward unit normal (boundary fluxes, tractions).
pub type FluxFn = Arc<dyn Fn([f64; 3], [f64; 3], &mut [f64]) + Send + Sync>;

/// A quadrature rule on one local facet with the basis tabulated there.
pub struct FacetQuad {
    pub rule: QuadratureRule,
    pub tangents: Vec<[f64; 3]>,
    pub tab: Tabulation,
}

/// Quadrature degree for a term whose integrand has polynomial degree `order` on affine simplices
/// (exact there). Tensor cells always get at least k+1 Gauss points per axis (degree 2k+1): fewer
/// under-integrates multilinear geometry and leaves hourglass modes in elasticity.
pub fn default_degree(space: &FunctionSpace, order: usize) -> usize {
    if space.mesh.cell_type.is_simplex() {
        order
    } else {
        (order + 1).max(2 * space.element.degree() + 1)
    }
}

/// A volume quadrature with the element basis and the geometry tabulated on it.
pub struct SourceQuad {
    pub rule: QuadratureRule,
    pub tab: Tabulation,
    pub geo: GeometryTab,
}

/// Scratch space reused across cells by one thread.
#[derive(Default)]
pub struct Scratch {
    grads: Vec<[f64; 3]>,
    p: Vec<f64>,
    e: Vec<f64>,
    f: Vec<f64>,
    xv: Vec<[f64; 3]>,
    /// Physical points of a group of cells and their weights × |det J| (load vectors).
    points: Vec<[f64; 3]>,
    weights: Vec<f64>,
}

/// Integrates element matrices and vectors of one physics on one space.
pub struct ElementIntegrator<'a> {
    pub space: &'a FunctionSpace,
    pub physics: &'a dyn PointwisePhysics,
    /// The physics' terms as one pointwise kernel.
    pub qf: Composite,
    /// The element basis on the volume quadrature.
    pub basis: Basis,
    pub quad: QuadratureRule,
    pub tab: Tabulation,
    pub geo: GeometryTab,
    /// The coefficient fields sampled on the volume quadrature.
    pub passive: PassiveData,
    facets: Vec<FacetQuad>,
    /// Robin terms (α u v on a facet), indexed by cell: (local facet, α).
    robin: Vec<Vec<(usize, Coefficient)>>,
}

impl<'a> ElementIntegrator<'a> {
    /// `degree`: quadrature degree for the volume terms (None: exact for constant coefficients).
    pub fn new(space: &'a FunctionSpace, physics: &'a dyn PointwisePhysics, degree: Option<usize>) -> Result<Self> {
        Self::with_quadrature(space, physics, degree, QuadratureKind::Gauss)
    }

    /// As [`Self::new`] with the volume rule's family; Gauss–Lobatto without a degree takes `k + 1`
    /// points per axis, collocated with Gauss–Lobatto nodes.
    pub fn with_quadrature(space: &'a FunctionSpace, physics: &'a dyn PointwisePhysics, degree: Option<usize>, kind: QuadratureKind) -> Result<Self> {
        let k = space.element.degree();
        let qf = Composite::new(physics.terms(), space.ncomp, space.mesh.dim);
        let modes = qf.modes();
        let order = if modes.value { 2 * k } else { 2 * k - 2 };
        let quad = match (kind, degree) {
            (QuadratureKind::GaussLobatto, None) => QuadratureRule::gauss_lobatto(space.mesh.cell_type, k + 1)?,
            (QuadratureKind::Seed, None) => QuadratureRule::new(space.mesh.cell_type, 2 * QuadratureKind::seed_points(k) - 1)?,
            _ => kind.rule(space.mesh.cell_type, degree.unwrap_or_else(|| default_degree(space, order)))?,
        };
        let basis = Basis::new(space, quad.clone());
        let tab = basis.tab.clone();
        let geo = GeometryTab::new(space.mesh.cell_type, &quad.points);
        let facets = facet_quadratures(space, default_degree(space, 2 * k + 2))?;
        physics.check(&space.mesh)?;
        let passive = PassiveData::sample(&qf, &space.mesh, &geo, quad.len())?;
        Ok(ElementIntegrator { space, physics, qf, basis, quad, tab, geo, passive, facets, robin: Vec::new() })
    }

    /// Add a Robin term α u·v on the given (cell, local facet) pairs.
    pub fn add_robin(&mut self, facets: &[(usize, usize)], alpha: &Coefficient) {
        if self.robin.is_empty() && !facets.is_empty() {
            self.robin = vec![Vec::new(); self.space.mesh.num_cells()];
        }
        for &(c, lf) in facets {
            self.robin[c].push((lf, alpha.clone()));
        }
    }

    /// Local dofs per cell.
    pub fn elem_size(&self) -> usize {
        self.space.dofmap.nodes_per_cell * self.space.ncomp
    }

    /// The element matrix of cell `c` (row-major, `elem_size()²`), overwriting `ke`: per point and
    /// pair of basis functions, the QFunctions' linearised block.
    pub fn element_matrix(&self, c: usize, s: &mut Scratch, ke: &mut [f64]) -> Result<()> {
        self.volume_matrix(c, s, ke)?;
        self.add_robin_matrix(c, ke)
    }

    /// The volume part of [`Self::element_matrix`] (no Robin facet terms).
    pub fn volume_matrix(&self, c: usize, s: &mut Scratch, ke: &mut [f64]) -> Result<()> {
        let mesh = &*self.space.mesh;
        let dim = mesh.dim;
        let n = self.space.ncomp;
        let nloc = self.tab.ndofs;
        let nd = nloc * n;
        s.grads.resize(nloc, [0.0; 3]);
        s.p.resize(self.qf.npassive(), 0.0);
        s.e.resize(n * n, 0.0);
        ke[..nd * nd].fill(0.0);
        let mut inv_det = if self.geo.affine { Some(inverse_jacobian(&self.geo.jacobian(mesh, c, 0), dim)?) } else { None };
        for (q, &wq) in self.quad.weights.iter().enumerate() {
            let (inv, det) = match inv_det {
                Some(id) if self.geo.affine => id,
                _ => {
                    let id = inverse_jacobian(&self.geo.jacobian(mesh, c, q), dim)?;
                    inv_det = Some(id);
                    id
                }
            };
            let w = wq * det.abs();
            let vals = &self.tab.values[q * nloc..(q + 1) * nloc];
            for (i, g) in s.grads.iter_mut().enumerate() {
                *g = physical_gradient(&inv, self.tab.grads[q * nloc + i], dim);
            }
            self.passive.point(c, q, &mut s.p);
            for i in 0..nloc {
                for j in 0..nloc {
                    let pair = Pair { w, vi: vals[i], vj: vals[j], gi: s.grads[i], gj: s.grads[j], dim };
                    s.e.fill(0.0);
                    self.qf.block(&s.p, &pair, &mut s.e);
                    for a in 0..n {
                        let row = &mut ke[(i * n + a) * nd + j * n..(i * n + a) * nd + (j + 1) * n];
                        for (k, v) in row.iter_mut().enumerate() {
                            *v += s.e[a * n + k];
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Cells that carry Robin facet terms (the GPU assembles volumes and adds these from the host).
    pub fn robin_cells(&self) -> Vec<usize> {
        (0..self.robin.len()).filter(|&c| !self.robin[c].is_empty()).collect()
    }

    /// `ke += ∫ α u·v` over the Robin facets of cell `c` (nothing for cells without them).
    pub fn add_robin_matrix(&self, c: usize, ke: &mut [f64]) -> Result<()> {
        let n = self.space.ncomp;
        let nd = self.elem_size();
        let region = self.space.mesh.cell_tags[c];
        for (lf, alpha) in self.robin.get(c).into_iter().flatten() {
            let fq = &self.facets[*lf];
            let nloc = fq.tab.ndofs;
            self.for_facet_points(c, fq, |x, _nrm, w, vals| {
                let a = alpha.eval(x, region) * w;
                for i in 0..nloc {
                    for j in 0..nloc {
                        for b in 0..n {
                            ke[(i * n + b) * nd + j * n + b] += a * vals[i] * vals[j];
                        }
                    }
                }
            })?;
        }
        Ok(())
    }

    /// Quadrature for load vectors, as MFEM and deal.II take it: degree 2k on simplices, and the
    /// k+1-point Gauss product rule (degree 2k+1) on tensor cells. The source is evaluated at
    /// every point, so this is what the load vector costs; both are exact for `f·v` with `f` in
    /// the space and keep the rates optimal (the convergence tests check it).
    pub fn source_quadrature(&self) -> Result<SourceQuad> {
        let space = self.space;
        let k = space.element.degree();
        let degree = if space.mesh.cell_type.is_simplex() { 2 * k } else { 2 * k + 1 };
        let rule = QuadratureRule::new(space.mesh.cell_type, degree)?;
        let tab = space.element.tabulate(&rule.points);
        let geo = GeometryTab::new(space.mesh.cell_type, &rule.points);
        Ok(SourceQuad { rule, tab, geo })
    }

    /// `out[k·nd ..][(i·n + a)] += ∫_cell f_a φ_i` for the k-th cell of `cells` (nd = nloc·n), with
    /// the source's `n` components evaluated once for all the cells' points: `eval(points, values)`
    /// writes component a at point p into `values[a·points.len() + p]` (a compiled expression
    /// evaluates a whole batch through its tape; see [`Expr::eval_batch`]). Affine cells —
    /// simplices, and parallelograms and parallelepipeds found by [`affine_jacobian`] — take their
    /// Jacobian's determinant once.
    ///
    /// [`Expr::eval_batch`]: crate::expr::Expr::eval_batch
    /// [`affine_jacobian`]: super::local_matrix::affine_jacobian
    pub fn add_sources(&self, cells: std::ops::Range<usize>, eval: &(dyn Fn(&[[f64; 3]], &mut [f64]) + Sync), quad: &SourceQuad, s: &mut Scratch, out: &mut [f64]) -> Result<()> {
        let mesh = &*self.space.mesh;
        let (n, dim) = (self.space.ncomp, mesh.dim);
        let (nloc, nq) = (quad.tab.ndofs, quad.rule.weights.len());
        let nd = nloc * n;
        s.points.clear();
        s.weights.clear();
        for c in cells.clone() {
            quad.geo.cell_coords(mesh, c, &mut s.xv);
            let fixed = if quad.geo.affine { Some(quad.geo.jacobian_at(&s.xv, 0)) } else { super::local_matrix::affine_jacobian(&quad.geo, mesh.cell_type, &s.xv, dim) };
            let fixed_det = fixed.map(|j| jacobian_det(&j, dim)).transpose()?;
            for (q, &wq) in quad.rule.weights.iter().enumerate() {
                let det = match fixed_det {
                    Some(d) => d,
                    None => jacobian_det(&quad.geo.jacobian_at(&s.xv, q), dim)?,
                };
                s.points.push(quad.geo.point_at(&s.xv, q));
                s.weights.push(wq * det.abs());
            }
        }
        let np = s.points.len();
        s.f.resize(np * n, 0.0);
        eval(&s.points, &mut s.f);
        for k in 0..cells.len() {
            let be = &mut out[k * nd..(k + 1) * nd];
            for q in 0..nq {
                let p = k * nq + q;
                let w = s.weights[p];
                for (i, &v) in quad.tab.values[q * nloc..(q + 1) * nloc].iter().enumerate() {
                    let phi = v * w;
                    for a in 0..n {
                        be[i * n + a] += phi * s.f[a * np + p];
                    }
                }
            }
        }
        Ok(())
    }

    /// `be += ∫_facet g(x, n)·v` on local facet `lf` of cell `c`.
    pub fn add_flux(&self, c: usize, lf: usize, g: &FluxFn, s: &mut Scratch, be: &mut [f64]) -> Result<()> {
        let n = self.space.ncomp;
        s.f.resize(n, 0.0);
        let fq = &self.facets[lf];
        let nloc = fq.tab.ndofs;
        let mut gv = std::mem::take(&mut s.f);
        self.for_facet_points(c, fq, |x, nrm, w, vals| {
            g(x, nrm, &mut gv);
            for i in 0..nloc {
                for a in 0..n {
                    be[i * n + a] += w * vals[i] * gv[a];
                }
            }
        })?;
        s.f = gv;
        Ok(())
    }

    /// Visit the quadrature points of a facet: physical point, outward normal, weight × surface
    /// measure, basis values.
    fn for_facet_points(&self, c: usize, fq: &FacetQuad, mut visit: impl FnMut([f64; 3], [f64; 3], f64, &[f64])) -> Result<()> {
        let mesh = &*self.space.mesh;
        let nloc = fq.tab.ndofs;
        let centroid = cell_centroid(mesh, c);
        for (q, (&xi, &wq)) in fq.rule.points.iter().zip(&fq.rule.weights).enumerate() {
            let (x, jac) = mesh.map_point(c, xi);
            let inward = [centroid[0] - x[0], centroid[1] - x[1], centroid[2] - x[2]];
            let (meas, nrm) = facet_measure_normal(&jac, &fq.tangents, mesh.dim, inward);
            visit(x, nrm, wq * meas, &fq.tab.values[q * nloc..(q + 1) * nloc]);
        }
        Ok(())
    }
}

/// Facet quadrature rules (with the basis tabulated on them) for every local facet of the cell.
pub fn facet_quadratures(space: &FunctionSpace, degree: usize) -> Result<Vec<FacetQuad>> {
    let cell = space.mesh.cell_type;
    (0..cell.facets().len())
        .map(|lf| {
            let (rule, tangents) = facet_rule(cell, lf, degree)?;
            let tab = space.element.tabulate(&rule.points);
            Ok(FacetQuad { rule, tangents, tab })
        })
        .collect()
}

/// Physical centroid of a cell (mean of its vertices).
pub fn cell_centroid(mesh: &crate::mesh::Mesh, c: usize) -> [f64; 3] {
    let v = mesh.cell(c);
    let mut x = [0.0; 3];
    for &i in v {
        for k in 0..3 {
            x[k] += mesh.coords[i][k] / v.len() as f64;
        }
    }
    x
}
