//! Loads of the hyperelastic problem, all scaled by the load factor λ of the load step:
//! - dead loads (body force per reference volume, traction per reference area): one vector,
//!   integrated once in the reference configuration;
//! - follower pressure p on a boundary: the force −p n da on the *deformed* surface, with its
//!   consistent tangent. With reference tangents T_α = J₀ t_α of the facet parametrisation and
//!   deformed ones a_α = T_α + Σ_l u_l (∇_ξ φ_l · t_α), n da = ±(a₁ × a₂) dξ, so the residual gets
//!   `+λ p φ_j (a₁ × a₂)` and the Jacobian `λ p φ_j (d¹_l e_k × a₂ + a₁ × d²_l e_k)`, d^α_l = ∇_ξ φ_l·t_α
//!   (not symmetric: the linear solver must be GMRES or BiCGStab, or the direct one).
//!   In plane strain the facet is an edge with one tangent and unit thickness: T₂ = a₂ = e_z and
//!   d²_l = 0, so the same formulas give n ds = ±(a₁ × e_z) = ±(a₁_y, −a₁_x) and its tangent.
//!   In plane stress the edge's thickness is the current one: a₂ = F₃₃ e_z, with F₃₃ from the cell
//!   beside the edge and its own tangent ([`super::thickness`]).
//!
//! The facet geometry and the CSR positions of the Jacobian entries are found once on the host; the
//! state-dependent terms are integrated on the backend that holds the state ([`FollowerPressure::add`]
//! on the CPU, [`FollowerPressure::flat`] uploaded for the GPU's kernels), so a Newton iteration's
//! state never leaves the device.
use super::element::HyperElement;
use super::thickness::EdgeThickness;
use crate::expr::Expr;
use crate::fe::quadrature::facet_rule;
use crate::linalg::CsrMatrix;
use crate::operator::geometry::facet_measure_normal;
use crate::operator::integrate::cell_centroid;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// A vector field given by three expressions of x, y, z.
pub type VectorExpr = [Expr; 3];

fn eval3(e: &VectorExpr, x: [f64; 3]) -> [f64; 3] {
    [e[0].eval(x, 0.0), e[1].eval(x, 0.0), e[2].eval(x, 0.0)]
}

/// The boundary facets (cell, local facet) whose tag is in `tags`.
pub fn tagged_facets(space: &FunctionSpace, tags: &[i32]) -> Result<Vec<(usize, usize)>> {
    let mesh = &space.mesh;
    let fc = mesh.boundary_facet_cells()?;
    Ok(mesh.boundary.iter().zip(fc).filter(|(f, _)| tags.contains(&f.tag)).map(|(_, c)| c).collect())
}

/// Quadrature degree on facets: the volume one plus two (the pressure term is a polynomial of
/// degree about 3k on affine facets).
fn facet_degree(space: &FunctionSpace) -> usize {
    super::element::quadrature_degree(space) + 2
}

/// `f += ∫ b·v dV` (body force per reference volume) over every cell.
pub fn add_body_force(el: &HyperElement, b: &VectorExpr, f: &mut [f64]) -> Result<()> {
    let space = &el.space;
    let mesh = &*space.mesh;
    let nloc = el.nloc();
    let d = el.dim;
    for c in 0..mesh.num_cells() {
        let nodes = space.dofmap.cell(c);
        for (q, &wq) in el.quad.weights.iter().enumerate() {
            let (_, det) = crate::operator::geometry::inverse_jacobian(&el.geo.jacobian(mesh, c, q), d)?;
            let bx = eval3(b, el.geo.point(mesh, c, q));
            for (j, &n) in nodes.iter().enumerate() {
                let phi = el.tab.values[q * nloc + j] * wq * det.abs();
                for a in 0..d {
                    f[n * d + a] += phi * bx[a];
                }
            }
        }
    }
    Ok(())
}

/// `f += ∫ t·v dA` (traction per reference area) over the given facets (in 2D per unit length of
/// the boundary curve; the first `dim` components of `t`).
pub fn add_traction(space: &FunctionSpace, facets: &[(usize, usize)], t: &VectorExpr, f: &mut [f64]) -> Result<()> {
    let mesh = &*space.mesh;
    let cell = mesh.cell_type;
    let d = mesh.dim;
    for &(c, lf) in facets {
        let (rule, tangents) = facet_rule(cell, lf, facet_degree(space))?;
        let tab = space.element.tabulate(&rule.points);
        let nloc = tab.ndofs;
        let centroid = cell_centroid(mesh, c);
        let nodes = space.dofmap.cell(c);
        for (q, (&xi, &wq)) in rule.points.iter().zip(&rule.weights).enumerate() {
            let (x, jac) = mesh.map_point(c, xi);
            let inward = [0, 1, 2].map(|k| centroid[k] - x[k]);
            let (meas, _) = facet_measure_normal(&jac, &tangents, d, inward);
            let tx = eval3(t, x);
            for (j, &n) in nodes.iter().enumerate() {
                let phi = tab.values[q * nloc + j] * wq * meas;
                for a in 0..d {
                    f[n * d + a] += phi * tx[a];
                }
            }
        }
    }
    Ok(())
}

/// One facet quadrature point of a pressure boundary, everything but the state precomputed.
#[derive(Clone)]
struct PressurePoint {
    /// p × weight × orientation (+1 where T₁ × T₂ points out of the body).
    pw: f64,
    /// T₁, T₂ (in plane strain T₂ = e_z).
    t: [[f64; 3]; 2],
    phi: Vec<f64>,
    d: [Vec<f64>; 2],
}

#[derive(Clone)]
struct PressureFacet {
    /// Displacement components per node: 3, or 2 in plane strain.
    dim: usize,
    /// Global nodes of the facet's closure.
    nodes: Vec<usize>,
    points: Vec<PressurePoint>,
    /// CSR positions of the (dim·nodes)² entries, row-major.
    pos: Vec<usize>,
    /// Plane stress: the cell beside the edge, for its current thickness.
    thick: Option<EdgeThickness>,
}

/// [`FollowerPressure::flat`]'s layout.
pub struct FlatPressure {
    /// Displacement components per node (3, or 2 in plane strain).
    pub dim: usize,
    pub m: usize,
    pub np: usize,
    pub nodes: Vec<u32>,
    pub points: Vec<f64>,
    /// The (dim·m)² entries' positions per facet (the thickness block's are in `thick`).
    pub positions: Vec<u64>,
    /// Plane stress: the thickness stretch's data ([`FlatThickness`]).
    pub thick: Option<FlatThickness>,
}

/// Plane stress's part of [`FlatPressure`]: per facet its cell's `nloc` nodes [nf][nloc], frame R
/// [nf][9] and in-frame gradients at the facet's points [nf][np][nloc][2], and the positions of
/// the (2m) × (2 nloc) thickness entries [nf][4 m nloc].
pub struct FlatThickness {
    pub nloc: usize,
    pub nodes: Vec<u32>,
    pub frames: Vec<f64>,
    pub grads: Vec<f64>,
    pub positions: Vec<u64>,
}

/// Follower pressure on a set of facets (see the module documentation).
#[derive(Clone)]
pub struct FollowerPressure {
    facets: Vec<PressureFacet>,
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

impl FollowerPressure {
    /// Precomputes the facet geometry and the CSR positions in `pattern` (the Jacobian's sparsity).
    pub fn new(space: &FunctionSpace, facets: &[(usize, usize)], p: &Expr, pattern: &CsrMatrix) -> Result<FollowerPressure> {
        FollowerPressure::build(space, facets, p, pattern, None)
    }

    /// As [`Self::new`] for the element's model: in plane stress the edges carry their current
    /// thickness F₃₃ ([`super::thickness`]).
    pub fn for_element(el: &HyperElement, facets: &[(usize, usize)], p: &Expr, pattern: &CsrMatrix) -> Result<FollowerPressure> {
        FollowerPressure::build(&el.space, facets, p, pattern, el.plane_stress.then_some(el))
    }

    fn build(space: &FunctionSpace, facets: &[(usize, usize)], p: &Expr, pattern: &CsrMatrix, stress: Option<&HyperElement>) -> Result<FollowerPressure> {
        let mesh = &*space.mesh;
        let cell = mesh.cell_type;
        let closure = space.facet_closure_dofs();
        let dim = mesh.dim;
        let mut out = Vec::with_capacity(facets.len());
        for &(c, lf) in facets {
            let (rule, tangents) = facet_rule(cell, lf, facet_degree(space))?;
            if tangents.len() + 1 != dim || !(2..=3).contains(&dim) {
                return Err(Error::Unsupported(format!("follower pressure on a {dim}D mesh with {}-dimensional facets", tangents.len())));
            }
            let tab = space.element.tabulate(&rule.points);
            let nloc = tab.ndofs;
            let local = &closure[lf];
            let cn = space.dofmap.cell(c);
            let nodes: Vec<usize> = local.iter().map(|&i| cn[i]).collect();
            let centroid = cell_centroid(mesh, c);
            let mut points = Vec::with_capacity(rule.weights.len());
            for (q, (&xi, &wq)) in rule.points.iter().zip(&rule.weights).enumerate() {
                let (x, jac) = mesh.map_point(c, xi);
                // T_α = J t_α; in plane strain T₂ = e_z (unit thickness) with no displacement part.
                let tt = [0, 1].map(|a| match tangents.get(a) {
                    Some(t) => [0, 1, 2].map(|i| if i < dim { (0..3).map(|k| jac[i][k] * t[k]).sum::<f64>() } else { 0.0 }),
                    None => [0.0, 0.0, 1.0],
                });
                let outward = [0, 1, 2].map(|k| x[k] - centroid[k]);
                let n = cross(tt[0], tt[1]);
                let sgn = if n[0] * outward[0] + n[1] * outward[1] + n[2] * outward[2] >= 0.0 { 1.0 } else { -1.0 };
                let phi = local.iter().map(|&i| tab.values[q * nloc + i]).collect();
                let d = [0, 1].map(|a| match tangents.get(a) {
                    Some(t) => local.iter().map(|&i| (0..3).map(|k| tab.grads[q * nloc + i][k] * t[k]).sum()).collect(),
                    None => vec![0.0; local.len()],
                });
                points.push(PressurePoint { pw: p.eval(x, 0.0) * wq * sgn, t: tt, phi, d });
            }
            let mut pos = Vec::with_capacity(dim * dim * nodes.len() * nodes.len());
            for &ni in &nodes {
                for a in 0..dim {
                    for &nj in &nodes {
                        for b in 0..dim {
                            let (r, col) = (ni * dim + a, nj * dim + b);
                            pos.push(pattern.position(r, col).ok_or_else(|| Error::invalid(format!("pressure entry ({r}, {col}) missing from the sparsity")))?);
                        }
                    }
                }
            }
            let thick = match stress {
                Some(el) => Some(EdgeThickness::new(el, c, &rule.points, &nodes, pattern)?),
                None => None,
            };
            out.push(PressureFacet { dim, nodes, points, pos, thick });
        }
        Ok(FollowerPressure { facets: out })
    }

    /// No pressure anywhere.
    pub fn none() -> FollowerPressure {
        FollowerPressure { facets: Vec::new() }
    }

    /// The union of two pressure loads.
    pub fn merge(mut self, other: FollowerPressure) -> FollowerPressure {
        self.facets.extend(other.facets);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.facets.is_empty()
    }

    /// Every CSR position the Jacobian entries go to, in the order of [`Self::add`]'s values (per
    /// facet its (dim·m)² entries, then in plane stress its thickness block's).
    pub fn positions(&self) -> Vec<u64> {
        let thick = |f: &PressureFacet| f.thick.iter().flat_map(|t| t.pos.iter()).map(|&p| p as u64).collect::<Vec<_>>();
        self.facets.iter().flat_map(|f| f.pos.iter().map(|&p| p as u64).chain(thick(f))).collect()
    }

    /// Every facet in one layout for the device: (components dim, nodes per facet m, points per
    /// facet, the facets' nodes [nf][m], point records [nf][points][7 + 3m] = [p·w·sign, T₁, T₂, φ,
    /// ∇φ·t₁, ∇φ·t₂], CSR positions [nf][(dim·m)²]); an error where facets differ in dim, m or points
    /// (mixed cell types).
    pub fn flat(&self) -> Result<FlatPressure> {
        let Some(first) = self.facets.first() else { return Err(Error::invalid("no pressure facets")) };
        let (dim, m, np) = (first.dim, first.nodes.len(), first.points.len());
        let positions = self.facets.iter().flat_map(|f| f.pos.iter().map(|&p| p as u64)).collect();
        let thick = first.thick.as_ref().map(|t| FlatThickness { nloc: t.nodes.len(), nodes: Vec::new(), frames: Vec::new(), grads: Vec::new(), positions: Vec::new() });
        let mut out = FlatPressure { dim, m, np, nodes: Vec::new(), points: Vec::new(), positions, thick };
        for f in &self.facets {
            match (&mut out.thick, &f.thick) {
                (Some(o), Some(t)) if t.nodes.len() == o.nloc => t.flatten(o)?,
                (None, None) => {}
                _ => return Err(Error::Unsupported("pressure facets of plane stress and of plane strain, or of cells of different node counts, together".into())),
            }
            if f.dim != dim || f.nodes.len() != m || f.points.len() != np {
                return Err(Error::Unsupported(format!(
                    "pressure facets of {} and {dim} components, {} and {m} nodes, {} and {np} points",
                    f.dim,
                    f.nodes.len(),
                    f.points.len()
                )));
            }
            for &n in &f.nodes {
                out.nodes.push(u32::try_from(n).map_err(|_| Error::Unsupported(format!("node {n} exceeds 32 bits")))?);
            }
            for p in &f.points {
                out.points.push(p.pw);
                out.points.extend(p.t.iter().flatten());
                out.points.extend(&p.phi);
                out.points.extend(&p.d[0]);
                out.points.extend(&p.d[1]);
            }
        }
        Ok(out)
    }

    /// `r += λ ∫ p φ_j (a₁ × a₂)` at state `u`, and the Jacobian entries (one per
    /// [`Self::positions`]) written into `kv` when given.
    pub fn add(&self, u: &[f64], lf: f64, r: &mut [f64], mut kv: Option<&mut Vec<f64>>) {
        if let Some(kv) = kv.as_deref_mut() {
            kv.clear();
        }
        for f in &self.facets {
            let (m, dim) = (f.nodes.len(), f.dim);
            let mut ke = vec![0.0; dim * dim * m * m];
            let mut kt = vec![0.0; f.thick.as_ref().map_or(0, |t| t.pos.len())];
            for (q, pt) in f.points.iter().enumerate() {
                let mut a = pt.t;
                for (l, &n) in f.nodes.iter().enumerate() {
                    for (aa, d) in a.iter_mut().zip(&pt.d) {
                        for i in 0..dim {
                            aa[i] += u[n * dim + i] * d[l];
                        }
                    }
                }
                let thick = f.thick.as_ref().map(|t| (t, t.at(u, q)));
                if let Some((_, (l3, _))) = thick {
                    a[1][2] *= l3; // a₂ = F₃₃ e_z: the current thickness
                }
                let nda = cross(a[0], a[1]);
                let s = lf * pt.pw;
                for (j, &n) in f.nodes.iter().enumerate() {
                    for i in 0..dim {
                        r[n * dim + i] += s * pt.phi[j] * nda[i];
                    }
                }
                if let (Some((t, (_, d))), true) = (thick, kv.is_some()) {
                    // λ p w φ_j (a₁ × e_z)_i times ∂F₃₃/∂u_(L,k)
                    let coef: Vec<[f64; 2]> = pt.phi.iter().map(|&ph| [s * ph * a[0][1], -s * ph * a[0][0]]).collect();
                    t.add_jacobian(q, &d, &coef, &mut kt);
                }
                if kv.is_some() {
                    for l in 0..m {
                        for k in 0..dim {
                            let mut ek = [0.0; 3];
                            ek[k] = 1.0;
                            let x1 = cross(ek, a[1]);
                            let x2 = cross(a[0], ek);
                            let dn = [0, 1, 2].map(|i| pt.d[0][l] * x1[i] + pt.d[1][l] * x2[i]);
                            for j in 0..m {
                                for i in 0..dim {
                                    ke[(j * dim + i) * dim * m + l * dim + k] += s * pt.phi[j] * dn[i];
                                }
                            }
                        }
                    }
                }
            }
            if let Some(kv) = kv.as_deref_mut() {
                kv.extend_from_slice(&ke);
                kv.extend_from_slice(&kt);
            }
        }
    }
}
