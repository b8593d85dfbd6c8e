//! H1 Lagrange elements P1–P3 on simplices and Q1–Q8 on intervals, quadrilaterals and hexahedra.
//!
//! Nodes are equispaced, or on tensor cells Gauss–Lobatto points ([`NodeFamily`]; the default above
//! degree 3, where equispaced nodes grow ill-conditioned). Local dofs come vertex by vertex (dof `v` = vertex `v`), then edge by edge in
//! `CellType::edges()` order (each from `edge[0]` towards `edge[1]`), then face by face
//! (`CellType::faces()`, 3D), then interior. Within a face or the interior, nodes follow the lattice
//! `v0 + Σ (i_a/k)·axis_a` with the first axis fastest; a face `[v0, v1, v2]` has axes `v1 - v0`,
//! `v2 - v0`, a face `[v0, v1, v2, v3]` has `v1 - v0`, `v3 - v0`, the cell interior the unit vectors.
use super::entity::Frame;
use super::gauss::gauss_lobatto;
use super::polynomial::{exponents, invert, lagrange_1d, monomial};
use super::{FiniteElement, Tabulation};
use crate::mesh::CellType;
use crate::{Error, Result};

/// Highest degree of the tensor-product elements (CEED's bake-off problems run Q1–Q8).
pub const MAX_TENSOR_DEGREE: usize = 8;

/// Where the nodes of a tensor-product element sit along each axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeFamily {
    /// `i / k`.
    Equispaced,
    /// The `k + 1` Gauss–Lobatto–Legendre points: the spectral-element choice, well conditioned at
    /// every degree, and collocated with the Gauss–Lobatto quadrature of BP5/BP6.
    GaussLobatto,
}

impl NodeFamily {
    /// Equispaced up to degree 3 (where the two coincide for k ≤ 2), Gauss–Lobatto above.
    pub fn default_for(degree: usize) -> NodeFamily {
        if degree <= 3 {
            NodeFamily::Equispaced
        } else {
            NodeFamily::GaussLobatto
        }
    }

    /// The 1D node parameters on `[0, 1]`, ascending.
    pub fn points(self, k: usize) -> Vec<f64> {
        match self {
            NodeFamily::Equispaced => (0..=k).map(|i| i as f64 / k as f64).collect(),
            NodeFamily::GaussLobatto => gauss_lobatto(k + 1).0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct LagrangeElement {
    cell: CellType,
    degree: usize,
    nodes: Vec<[f64; 3]>,
    entity_dofs: Vec<Vec<Vec<usize>>>,
    basis: Basis,
}

/// How basis functions are evaluated; both forms are exact polynomial evaluations.
#[derive(Clone, Debug)]
enum Basis {
    /// `Q_k` (and the interval): `φ(ξ) = ∏_axis L_{lex[axis]}(ξ_axis)` with 1D Lagrange polynomials
    /// `L` on `nodes_1d`. `lex[dof]` is the dof's per-axis node index (0 on unused axes).
    Tensor {
        nodes_1d: Vec<f64>,
        lex: Vec<[usize; 3]>,
        lex_to_dof: Vec<usize>,
    },
    /// `P_k` on triangles/tetrahedra: `φ_i = Σ_m coeffs[m·ndofs + i] ξ^{exponents[m]}`, the inverse
    /// Vandermonde matrix of the monomials at the nodes (well conditioned for k ≤ 3).
    Monomial {
        exponents: Vec<[usize; 3]>,
        coeffs: Vec<f64>,
    },
}

impl LagrangeElement {
    /// Lagrange element of `degree` on `cell` (1..=3 on simplices, 1..=8 on tensor cells) with
    /// the default nodes ([`NodeFamily::default_for`]).
    pub fn new(cell: CellType, degree: usize) -> Result<LagrangeElement> {
        LagrangeElement::with_nodes(cell, degree, NodeFamily::default_for(degree))
    }

    /// Lagrange element with the given node family (simplices: equispaced only).
    pub fn with_nodes(cell: CellType, degree: usize, family: NodeFamily) -> Result<LagrangeElement> {
        let simplex = cell.is_simplex() && cell.dim() > 1;
        let max = if simplex { 3 } else { MAX_TENSOR_DEGREE };
        if !(1..=max).contains(&degree) {
            return Err(Error::Unsupported(format!(
                "Lagrange element of degree {degree} on a {cell} (degrees 1 to {max} are implemented)"
            )));
        }
        if simplex && family != NodeFamily::Equispaced {
            return Err(Error::Unsupported(format!("{family:?} nodes on a {cell} (tensor cells only)")));
        }
        let t = family.points(degree);
        let (nodes, entity_dofs) = lattice_nodes(cell, degree, family, &t);
        let basis = if simplex {
            monomial_basis(cell, degree, &nodes)?
        } else {
            tensor_basis(cell.dim(), &t, &nodes)
        };
        Ok(LagrangeElement {
            cell,
            degree,
            nodes,
            entity_dofs,
            basis,
        })
    }

    /// For tensor-product elements (interval, quadrilateral, hexahedron), the 1D nodes (ascending on
    /// `[0,1]`) and the map from lexicographic index `i + (k+1)·j + (k+1)²·l` (first axis fastest) to
    /// local dof, for sum factorization. `None` on triangles and tetrahedra.
    pub fn tensor_1d_nodes(&self) -> Option<(Vec<f64>, Vec<usize>)> {
        match &self.basis {
            Basis::Tensor {
                nodes_1d,
                lex_to_dof,
                ..
            } => Some((nodes_1d.clone(), lex_to_dof.clone())),
            Basis::Monomial { .. } => None,
        }
    }
}

/// Nodes entity by entity (vertices, edges, faces, interior) and the matching `entity_dofs`.
/// The interior lattice points `u = idx/k` (equispaced; `u_a = t[idx_a]` otherwise) of an entity
/// have every `idx_a ≥ 1`, and, on simplices, `Σ idx_a ≤ k - 1`; a vertex contributes its point.
fn lattice_nodes(cell: CellType, k: usize, family: NodeFamily, t: &[f64]) -> (Vec<[f64; 3]>, Vec<Vec<Vec<usize>>>) {
    let dim = cell.dim();
    let mut nodes = Vec::new();
    let mut entity_dofs = Vec::with_capacity(dim + 1);
    for d in 0..=dim {
        let frames: Vec<Frame> = match d {
            _ if d == dim => vec![Frame::cell(cell)],
            0 => (0..cell.num_vertices())
                .map(|v| Frame::of(cell, &[v]))
                .collect(),
            1 => cell.edges().iter().map(|e| Frame::of(cell, e)).collect(),
            _ => cell.faces().iter().map(|f| Frame::of(cell, f)).collect(),
        };
        let mut per_entity = Vec::with_capacity(frames.len());
        for frame in &frames {
            let mut dofs = Vec::new();
            let inner = k - 1;
            for flat in 0..inner.pow(d as u32) {
                let idx: Vec<usize> = (0..d)
                    .map(|a| flat / inner.pow(a as u32) % inner + 1)
                    .collect();
                if cell.is_simplex() && idx.iter().sum::<usize>() > inner {
                    continue;
                }
                dofs.push(nodes.len());
                nodes.push(match family {
                    NodeFamily::Equispaced => frame.lattice_point(&idx, k),
                    NodeFamily::GaussLobatto => frame.map(&idx.iter().map(|&i| t[i]).collect::<Vec<_>>()),
                });
            }
            per_entity.push(dofs);
        }
        entity_dofs.push(per_entity);
    }
    (nodes, entity_dofs)
}

fn tensor_basis(dim: usize, t: &[f64], nodes: &[[f64; 3]]) -> Basis {
    let nodes_1d = t.to_vec();
    let n1 = t.len();
    // The 1D node nearest to a coordinate (entity maps may differ from t by rounding).
    let nearest = |x: f64| (0..n1).min_by(|&i, &j| (t[i] - x).abs().total_cmp(&(t[j] - x).abs())).unwrap_or(0);
    let mut lex_to_dof = vec![0; n1.pow(dim as u32)];
    let lex: Vec<[usize; 3]> = nodes
        .iter()
        .enumerate()
        .map(|(dof, x)| {
            let idx: [usize; 3] = std::array::from_fn(|a| {
                if a < dim {
                    nearest(x[a])
                } else {
                    0
                }
            });
            lex_to_dof[idx[0] + n1 * idx[1] + n1 * n1 * idx[2]] = dof;
            idx
        })
        .collect();
    Basis::Tensor {
        nodes_1d,
        lex,
        lex_to_dof,
    }
}

fn monomial_basis(cell: CellType, k: usize, nodes: &[[f64; 3]]) -> Result<Basis> {
    let exponents = exponents(cell.dim(), k, true);
    let n = exponents.len();
    if n != nodes.len() {
        return Err(Error::dim(
            format!("P{k} nodes on a {cell}"),
            n,
            nodes.len(),
        ));
    }
    // V[j][m] = ξ_j^{e_m}; the coefficients of φ_i are column i of V⁻¹ since V·C = I is φ_i(ξ_j) = δ_ij.
    let vandermonde: Vec<f64> = nodes
        .iter()
        .flat_map(|&x| exponents.iter().map(move |&e| monomial(e, x).0))
        .collect();
    let coeffs = invert(n, &vandermonde).ok_or_else(|| {
        Error::Factorization(format!("P{k} Vandermonde matrix on a {cell} is singular"))
    })?;
    Ok(Basis::Monomial { exponents, coeffs })
}

impl FiniteElement for LagrangeElement {
    fn cell_type(&self) -> CellType {
        self.cell
    }
    fn degree(&self) -> usize {
        self.degree
    }
    fn ndofs(&self) -> usize {
        self.nodes.len()
    }
    fn entity_dofs(&self) -> &[Vec<Vec<usize>>] {
        &self.entity_dofs
    }
    fn nodes(&self) -> Option<&[[f64; 3]]> {
        Some(&self.nodes)
    }
    fn tensor_1d(&self, x: &[f64]) -> Option<(Vec<f64>, Vec<f64>, Vec<usize>)> {
        let (nodes_1d, lex_to_dof) = self.tensor_1d_nodes()?;
        let n1 = nodes_1d.len();
        let (mut b, mut g) = (vec![0.0; x.len() * n1], vec![0.0; x.len() * n1]);
        for (q, &xq) in x.iter().enumerate() {
            lagrange_1d(&nodes_1d, xq, &mut b[q * n1..(q + 1) * n1], &mut g[q * n1..(q + 1) * n1]);
        }
        Some((b, g, lex_to_dof))
    }
    fn tabulate(&self, points: &[[f64; 3]]) -> Tabulation {
        let ndofs = self.nodes.len();
        let mut values = vec![0.0; points.len() * ndofs];
        let mut grads = vec![[0.0; 3]; points.len() * ndofs];
        let rows = values
            .chunks_mut(ndofs.max(1))
            .zip(grads.chunks_mut(ndofs.max(1)));
        match &self.basis {
            Basis::Tensor { nodes_1d, lex, .. } => {
                let n1 = nodes_1d.len();
                let dim = self.cell.dim();
                // Per axis: 1D values and derivatives; unused axes act as the constant 1.
                let mut v = vec![[1.0; 3]; n1];
                let mut dv = vec![[0.0; 3]; n1];
                let (mut v1, mut d1) = (vec![0.0; n1], vec![0.0; n1]);
                for (x, (val, grad)) in points.iter().zip(rows) {
                    for a in 0..dim {
                        lagrange_1d(nodes_1d, x[a], &mut v1, &mut d1);
                        for i in 0..n1 {
                            v[i][a] = v1[i];
                            dv[i][a] = d1[i];
                        }
                    }
                    for (dof, [i, j, l]) in lex.iter().enumerate() {
                        let (a, b, c) = (v[*i][0], v[*j][1], v[*l][2]);
                        val[dof] = a * b * c;
                        grad[dof] = [dv[*i][0] * b * c, a * dv[*j][1] * c, a * b * dv[*l][2]];
                    }
                }
            }
            Basis::Monomial { exponents, coeffs } => {
                for (x, (val, grad)) in points.iter().zip(rows) {
                    for (e, row) in exponents.iter().zip(coeffs.chunks(ndofs)) {
                        let (m, dm) = monomial(*e, *x);
                        for i in 0..ndofs {
                            val[i] += row[i] * m;
                            for c in 0..3 {
                                grad[i][c] += row[i] * dm[c];
                            }
                        }
                    }
                }
            }
        }
        Tabulation {
            npoints: points.len(),
            ndofs,
            values,
            grads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CELLS: [CellType; 5] = CellType::ALL;

    /// P1–P3 / Q1–Q3 equispaced, and on tensor cells Q2–Q8 on Gauss–Lobatto nodes.
    fn all_elements() -> Vec<LagrangeElement> {
        let mut all: Vec<LagrangeElement> = CELLS
            .iter()
            .flat_map(|&c| (1..=3).map(move |k| LagrangeElement::new(c, k).unwrap()))
            .collect();
        for c in [CellType::Interval, CellType::Quadrilateral, CellType::Hexahedron] {
            let top = if c == CellType::Hexahedron { 6 } else { MAX_TENSOR_DEGREE };
            all.extend((2..=top).map(|k| LagrangeElement::with_nodes(c, k, NodeFamily::GaussLobatto).unwrap()));
        }
        all
    }

    /// Deterministic pseudo-random points inside the reference cell (xorshift, rejection on simplices).
    fn random_points(cell: CellType, n: usize) -> Vec<[f64; 3]> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut out = Vec::new();
        while out.len() < n {
            let x: [f64; 3] = std::array::from_fn(|a| if a < cell.dim() { uniform() } else { 0.0 });
            if !cell.is_simplex() || x.iter().sum::<f64>() < 1.0 {
                out.push(x);
            }
        }
        out
    }

    #[test]
    fn dof_counts() {
        let count = |c, k| LagrangeElement::new(c, k).unwrap().ndofs();
        assert_eq!(count(CellType::Tetrahedron, 3), 20);
        assert_eq!(count(CellType::Hexahedron, 3), 64);
        assert_eq!(count(CellType::Quadrilateral, 2), 9);
        assert_eq!(count(CellType::Triangle, 2), 6);
        assert_eq!(count(CellType::Triangle, 3), 10);
        assert_eq!(count(CellType::Tetrahedron, 2), 10);
        assert_eq!(count(CellType::Interval, 3), 4);
        for e in all_elements() {
            let (d, k) = (e.cell.dim(), e.degree);
            let expected = if e.cell.is_simplex() {
                (1..=d)
                    .map(|i| (k + i) as f64 / i as f64)
                    .product::<f64>()
                    .round() as usize
            } else {
                (k + 1).pow(d as u32)
            };
            assert_eq!(e.ndofs(), expected, "{} degree {k}", e.cell);
        }
        assert!(matches!(
            LagrangeElement::new(CellType::Triangle, 0),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            LagrangeElement::new(CellType::Hexahedron, 9),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            LagrangeElement::new(CellType::Tetrahedron, 4),
            Err(Error::Unsupported(_))
        ));
    }

    #[test]
    fn basis_is_cardinal_at_nodes() {
        for e in all_elements() {
            let t = e.tabulate(&e.nodes);
            for j in 0..e.ndofs() {
                for i in 0..e.ndofs() {
                    let want = if i == j { 1.0 } else { 0.0 };
                    let got = t.values[j * t.ndofs + i];
                    assert!(
                        (got - want).abs() < 1e-12,
                        "{} P{} φ_{i}(x_{j}) = {got}",
                        e.cell,
                        e.degree
                    );
                }
            }
        }
    }

    #[test]
    fn partition_of_unity_and_finite_difference_gradients() {
        let h = 1e-6;
        for e in all_elements() {
            let pts = random_points(e.cell, 10);
            let t = e.tabulate(&pts);
            for (q, x) in pts.iter().enumerate() {
                let row = q * t.ndofs..(q + 1) * t.ndofs;
                assert!((t.values[row.clone()].iter().sum::<f64>() - 1.0).abs() < 1e-12);
                for c in 0..3 {
                    let s: f64 = t.grads[row.clone()].iter().map(|g| g[c]).sum();
                    assert!(s.abs() < 1e-10, "{} P{} Σ∂φ = {s}", e.cell, e.degree);
                }
                for c in 0..e.cell.dim() {
                    let (mut xp, mut xm) = (*x, *x);
                    xp[c] += h;
                    xm[c] -= h;
                    let (tp, tm) = (e.tabulate(&[xp]), e.tabulate(&[xm]));
                    for i in 0..t.ndofs {
                        let fd = (tp.values[i] - tm.values[i]) / (2.0 * h);
                        let g = t.grads[q * t.ndofs + i][c];
                        assert!(
                            (fd - g).abs() < 1e-7,
                            "{} P{} ∂_{c}φ_{i}: {g} vs {fd}",
                            e.cell,
                            e.degree
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn interpolation_reproduces_the_full_polynomial_space() {
        for e in all_elements() {
            let (dim, k) = (e.cell.dim(), e.degree);
            let pts = random_points(e.cell, 8);
            let t = e.tabulate(&pts);
            let error = |ex: [usize; 3]| -> f64 {
                let coef: Vec<f64> = e.nodes.iter().map(|&x| monomial(ex, x).0).collect();
                let mut worst = 0.0f64;
                for (q, &x) in pts.iter().enumerate() {
                    let (p, dp) = monomial(ex, x);
                    let row = q * t.ndofs..(q + 1) * t.ndofs;
                    let u: f64 = coef
                        .iter()
                        .zip(&t.values[row.clone()])
                        .map(|(c, v)| c * v)
                        .sum();
                    worst = worst.max((u - p).abs());
                    for c in 0..3 {
                        let du: f64 = coef
                            .iter()
                            .zip(&t.grads[row.clone()])
                            .map(|(a, g)| a * g[c])
                            .sum();
                        worst = worst.max((du - dp[c]).abs());
                    }
                }
                worst
            };
            for ex in exponents(dim, k, e.cell.is_simplex()) {
                assert!(error(ex) < 1e-12, "{} P{k} misses {ex:?}", e.cell);
            }
            // One degree higher is out of the space: the check itself can fail.
            assert!(
                error([k + 1, 0, 0]) > 1e-4,
                "{} P{k} reproduces x^{}",
                e.cell,
                k + 1
            );
        }
    }

    #[test]
    fn entity_dofs_partition_the_dofs_in_the_documented_order() {
        for e in all_elements() {
            let ed = e.entity_dofs();
            let dim = e.cell.dim();
            assert_eq!(ed.len(), dim + 1);
            assert_eq!(ed[0].len(), e.cell.num_vertices());
            assert_eq!(ed[dim].len(), 1);
            if dim >= 2 {
                assert_eq!(ed[1].len(), e.cell.edges().len());
            }
            if dim == 3 {
                assert_eq!(ed[2].len(), e.cell.faces().len());
            }
            // Concatenated in (dimension, entity) order they are 0, 1, …, ndofs-1: each dof exactly
            // once, vertex v is dof v, edges before faces before interior.
            let flat: Vec<usize> = ed.iter().flatten().flatten().copied().collect();
            assert_eq!(
                flat,
                (0..e.ndofs()).collect::<Vec<_>>(),
                "{} P{}",
                e.cell,
                e.degree
            );
        }
    }

    #[test]
    fn every_node_lies_inside_its_entity() {
        // With P1/Q1 geometry functions λ_v, a point lies in the relative interior of the entity with
        // vertex set S iff λ_v > 0 exactly for v ∈ S (barycentric on simplices, multilinear on cubes).
        for e in all_elements() {
            let dim = e.cell.dim();
            let nv = e.cell.num_vertices();
            for (d, entities) in e.entity_dofs().iter().enumerate() {
                for (ent, dofs) in entities.iter().enumerate() {
                    let verts: Vec<usize> = match d {
                        0 => vec![ent],
                        _ if d == dim => (0..nv).collect(),
                        1 => e.cell.edges()[ent].to_vec(),
                        _ => e.cell.faces()[ent].to_vec(),
                    };
                    let mut last_t = 0.0;
                    for &dof in dofs {
                        let (mut lam, mut g) = (vec![0.0; nv], vec![[0.0; 3]; nv]);
                        e.cell.geometry_basis(e.nodes[dof], &mut lam, &mut g);
                        for (v, &l) in lam.iter().enumerate() {
                            let inside = verts.contains(&v);
                            assert!(
                                if inside { l > 1e-12 } else { l.abs() < 1e-14 },
                                "{} P{} dof {dof}",
                                e.cell,
                                e.degree
                            );
                        }
                        if d == 1 {
                            // Along an edge, λ of its end vertex is the edge parameter: strictly increasing.
                            let t = lam[verts[1]];
                            assert!(
                                t > last_t,
                                "{} P{} edge {ent} dofs out of order",
                                e.cell,
                                e.degree
                            );
                            last_t = t;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tensor_1d_describes_the_nodes() {
        for e in all_elements() {
            match e.tensor_1d_nodes() {
                None => assert!(e.cell.is_simplex() && e.cell.dim() > 1),
                Some((n1d, lex_to_dof)) => {
                    let n = n1d.len();
                    assert_eq!(n, e.degree + 1);
                    assert_eq!(lex_to_dof.len(), e.ndofs());
                    for (flat, &dof) in lex_to_dof.iter().enumerate() {
                        let idx = [flat % n, flat / n % n, flat / (n * n)];
                        for a in 0..3 {
                            let want = if a < e.cell.dim() { n1d[idx[a]] } else { 0.0 };
                            assert_eq!(
                                e.nodes[dof][a], want,
                                "{} Q{} lex {flat}",
                                e.cell, e.degree
                            );
                        }
                    }
                }
            }
        }
    }
}
