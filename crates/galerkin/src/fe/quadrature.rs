//! Quadrature rules on reference cells and their facets.
//!
//! Tensor cells use tensor Gauss–Legendre rules. Simplices use Witherden–Vincent symmetric rules
//! where they have fewer points, and otherwise collapsed (Duffy) conical products of Gauss–Jacobi
//! rules, which exist for every degree and have positive weights with all points inside. Points of
//! all product rules are ordered with the first axis fastest.
use super::entity::Frame;
pub use super::gauss::{gauss_jacobi, gauss_legendre, gauss_lobatto};
use crate::mesh::CellType;
use crate::{Error, Result};

/// Highest degree accepted: guards against sizes that would exhaust memory (a hexahedron rule of
/// degree `p` has `(p/2 + 1)³` points).
pub const MAX_QUADRATURE_DEGREE: usize = 100;

/// Which family of volume rule an operator integrates with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuadratureKind {
    /// Gauss–Legendre products on tensor cells, symmetric or collapsed rules on simplices.
    #[default]
    Gauss,
    /// Gauss–Lobatto products (tensor cells): with `p + 1` points per axis collocated with the
    /// nodes of a Gauss–Lobatto element, CEED's BP5/BP6 (a diagonal mass matrix, fewer points).
    GaussLobatto,
    /// Gauss products with `n = max(2, ⌈(3p − 2)/2⌉)` points per axis for degree-p elements: the
    /// rule of the hierarchical-hexahedra seed ("Forming matrices of finite element systems in
    /// GPGPU", n_G ≥ ((3p − 2)/2)^d). Fewer points than exact Gauss at p = 2, more at p ≥ 5.
    Seed,
}

impl std::str::FromStr for QuadratureKind {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self> {
        super::parse_name(s)
    }
}

impl QuadratureKind {
    /// Points per axis of the [`QuadratureKind::Seed`] rule for elements of degree `p`.
    pub fn seed_points(p: usize) -> usize {
        (3 * p).saturating_sub(2).div_ceil(2).max(2)
    }

    /// The rule of this kind exact to `degree` on `cell` (Gauss–Lobatto: `n` points per axis with
    /// `2n - 3 ≥ degree`).
    pub fn rule(self, cell: CellType, degree: usize) -> Result<QuadratureRule> {
        match self {
            QuadratureKind::Gauss | QuadratureKind::Seed => QuadratureRule::new(cell, degree),
            QuadratureKind::GaussLobatto => QuadratureRule::gauss_lobatto(cell, (degree + 4) / 2),
        }
    }
}

/// Points on the reference cell and their weights (weights sum to the reference volume).
#[derive(Clone, Debug)]
pub struct QuadratureRule {
    pub points: Vec<[f64; 3]>,
    pub weights: Vec<f64>,
}

impl QuadratureRule {
    /// A rule exact for polynomials of degree `degree` on `cell` (total degree on simplices,
    /// per-axis degree on tensor cells).
    pub fn new(cell: CellType, degree: usize) -> Result<QuadratureRule> {
        if degree > MAX_QUADRATURE_DEGREE {
            return Err(Error::invalid(format!(
                "quadrature degree {degree} on a {cell} exceeds the maximum {MAX_QUADRATURE_DEGREE}"
            )));
        }
        // n Gauss points per axis are exact to degree 2n - 1 (also in the collapsed variables:
        // a total-degree-p monomial stays degree ≤ p in each of them).
        let n = degree / 2 + 1;
        let product = n.pow(cell.dim() as u32);
        match symmetric_simplex_rule(cell, degree) {
            Some(rule) if rule.len() < product => Ok(rule),
            _ => Ok(product_rule(cell.dim(), n, cell.is_simplex())),
        }
    }
    /// The `n`-point Gauss–Lobatto product rule on a tensor cell (interval, quadrilateral,
    /// hexahedron), first axis fastest: exact to degree `2n - 3` per axis; with `n = p + 1` its
    /// points are the nodes of a Gauss–Lobatto `Q_p` element (collocated quadrature).
    pub fn gauss_lobatto(cell: CellType, n: usize) -> Result<QuadratureRule> {
        if cell.is_simplex() && cell.dim() > 1 {
            return Err(Error::Unsupported(format!("Gauss–Lobatto quadrature on a {cell} (tensor cells only)")));
        }
        if !(2..=MAX_QUADRATURE_DEGREE / 2).contains(&n) {
            return Err(Error::invalid(format!("Gauss–Lobatto rule of {n} points per axis (2 to {})", MAX_QUADRATURE_DEGREE / 2)));
        }
        let (t, w) = gauss_lobatto(n);
        let dim = cell.dim();
        let total = n.pow(dim as u32);
        let (mut points, mut weights) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for flat in 0..total {
            let idx = [flat % n, flat / n % n, flat / (n * n)];
            points.push(std::array::from_fn(|a| if a < dim { t[idx[a]] } else { 0.0 }));
            weights.push((0..dim).map(|a| w[idx[a]]).product());
        }
        Ok(QuadratureRule { points, weights })
    }
    pub fn len(&self) -> usize {
        self.weights.len()
    }
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }
}

/// The Witherden–Vincent symmetric rule of at least `degree` on a triangle or tetrahedron (positive
/// weights, points inside; what MFEM uses, and far fewer points than a collapsed product: 14
/// instead of 27 at degree 4 on a tetrahedron), mapped from polyquad's [-1, 1] simplex onto the
/// unit simplex. None for other cells, beyond the tabulated degrees (20 and 10) and where a point
/// lies on the boundary.
fn symmetric_simplex_rule(cell: CellType, degree: usize) -> Option<QuadratureRule> {
    use fenris_quadrature::polyquad;
    let (weights, points): (Vec<f64>, Vec<[f64; 3]>) = match cell {
        CellType::Triangle => {
            let (w, p) = polyquad::triangle(degree).ok()?;
            (w.iter().map(|w| w / 4.0).collect(), p.iter().map(|x| [(x[0] + 1.0) / 2.0, (x[1] + 1.0) / 2.0, 0.0]).collect())
        }
        CellType::Tetrahedron => {
            let (w, p) = polyquad::tetrahedron(degree).ok()?;
            (w.iter().map(|w| w / 8.0).collect(), p.iter().map(|x| x.map(|c| (c + 1.0) / 2.0)).collect())
        }
        _ => return None,
    };
    // A few tabulated rules put points on the boundary: keep the collapsed rule there, so that
    // every simplex rule samples the open cell.
    let dim = cell.dim();
    let inside = |x: &[f64; 3]| x[..dim].iter().all(|&c| c > 1e-12) && x.iter().sum::<f64>() < 1.0 - 1e-12;
    (points.iter().all(inside) && weights.iter().all(|&w| w > 0.0)).then_some(QuadratureRule { points, weights })
}

/// Product of `n`-point rules in `dim` variables `s`. Tensor: `ξ = s`. Collapsed: axis `j` carries the
/// Jacobi weight `(1-s_j)^j` and `ξ_m = s_m ∏_{j>m} (1 - s_j)`, which maps the cube onto the unit
/// simplex with Jacobian `∏_j (1-s_j)^j` — exactly the weights, so the rule needs no extra factor.
fn product_rule(dim: usize, n: usize, collapsed: bool) -> QuadratureRule {
    let axes: Vec<(Vec<f64>, Vec<f64>)> = (0..dim)
        .map(|j| gauss_jacobi(n, if collapsed { j } else { 0 }))
        .collect();
    let total = n.pow(dim as u32);
    let mut points = Vec::with_capacity(total);
    let mut weights = Vec::with_capacity(total);
    for flat in 0..total {
        let mut s = [0.0; 3];
        let mut w = 1.0;
        let mut rest = flat;
        for (j, (t, wt)) in axes.iter().enumerate() {
            s[j] = t[rest % n];
            w *= wt[rest % n];
            rest /= n;
        }
        if collapsed {
            let mut scale = 1.0;
            for j in (0..dim).rev() {
                let sj = s[j];
                s[j] = sj * scale;
                scale *= 1.0 - sj;
            }
        }
        points.push(s);
        weights.push(w);
    }
    QuadratureRule { points, weights }
}

/// A rule on local facet `facet` of `cell` (numbered as in `CellType::facets()`), exact for `degree`
/// on the facet, with its points mapped into the cell's reference coordinates.
///
/// Also returns the facet's tangents: the `dim - 1` columns of the affine map from the reference facet
/// (unit simplex or unit square; a point for intervals) into the cell, constant over the facet. The
/// weights sum to the reference facet's measure (1/2 for a triangle, 1 for a segment, square or
/// point), so `∫_F f ds ≈ Σ_q w_q f(x_q) · facet_measure(J(ξ_q), &tangents)`.
pub fn facet_rule(
    cell: CellType,
    facet: usize,
    degree: usize,
) -> Result<(QuadratureRule, Vec<[f64; 3]>)> {
    let facets = cell.facets();
    let vertices = facets.get(facet).ok_or_else(|| {
        Error::invalid(format!(
            "facet {facet} does not exist: a {cell} has {} facets",
            facets.len()
        ))
    })?;
    let frame = Frame::of(cell, vertices);
    let reference = match cell.facet_type() {
        Some(facet_cell) => QuadratureRule::new(facet_cell, degree)?,
        None => QuadratureRule {
            points: vec![[0.0; 3]],
            weights: vec![1.0],
        },
    };
    let points = reference.points.iter().map(|u| frame.map(u)).collect();
    Ok((
        QuadratureRule {
            points,
            weights: reference.weights,
        },
        frame.axes,
    ))
}

/// Physical measure factor of a facet at a point: `|J t₁ × J t₂|` (3D), `|J t₁|` (2D), 1 (1D), where
/// `jac[i][j] = ∂x_i/∂ξ_j` (as from `Mesh::map_point`) and `tangents` come from [`facet_rule`].
pub fn facet_measure(jac: &[[f64; 3]; 3], tangents: &[[f64; 3]]) -> f64 {
    let push = |t: &[f64; 3]| -> [f64; 3] {
        std::array::from_fn(|i| (0..3).map(|j| jac[i][j] * t[j]).sum())
    };
    let norm = |v: [f64; 3]| v.iter().map(|c| c * c).sum::<f64>().sqrt();
    match tangents {
        [] => 1.0,
        [t] => norm(push(t)),
        [t1, t2, ..] => {
            let (a, b) = (push(t1), push(t2));
            norm([
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fe::polynomial::exponents;

    const CELLS: [CellType; 5] = CellType::ALL;

    fn factorial(n: usize) -> f64 {
        (1..=n).map(|i| i as f64).product()
    }

    /// `∫ x^a y^b z^c` over the reference `dim`-simplex (`a!b!c!/(a+b+c+dim)!`) or unit cube.
    fn exact_monomial(dim: usize, simplex: bool, e: [usize; 3]) -> f64 {
        if simplex {
            e.iter().map(|&a| factorial(a)).product::<f64>()
                / factorial(e.iter().sum::<usize>() + dim)
        } else {
            e.iter().map(|&a| 1.0 / (a + 1) as f64).product()
        }
    }

    fn integrate(rule: &QuadratureRule, e: [usize; 3]) -> f64 {
        let p = |x: &[f64; 3]| (0..3).map(|i| x[i].powi(e[i] as i32)).product::<f64>();
        rule.points
            .iter()
            .zip(&rule.weights)
            .map(|(x, w)| w * p(x))
            .sum()
    }

    #[test]
    fn cell_rules_integrate_every_monomial_of_their_degree() {
        for cell in CELLS {
            let max = if cell.dim() == 3 { 14 } else { 24 };
            for degree in 0..=max {
                let rule = QuadratureRule::new(cell, degree).unwrap();
                for e in exponents(cell.dim(), degree, cell.is_simplex()) {
                    let exact = exact_monomial(cell.dim(), cell.is_simplex(), e);
                    let got = integrate(&rule, e);
                    assert!(
                        (got - exact).abs() < 1e-14 * exact.max(1e-2),
                        "{cell} p={degree} {e:?}"
                    );
                }
                if cell.is_simplex() {
                    assert!(rule.weights.iter().all(|&w| w > 0.0), "{cell} p={degree}");
                    for x in &rule.points {
                        let inside =
                            x[..cell.dim()].iter().all(|&c| c > 0.0) && x.iter().sum::<f64>() < 1.0;
                        assert!(inside, "{cell} p={degree} point {x:?} outside");
                    }
                }
            }
        }
    }

    /// Simplex rules take the symmetric rule where it is smaller than the collapsed product
    /// (n³ or n² points, n = degree/2 + 1).
    #[test]
    fn simplex_rules_use_the_fewest_points() {
        let count = |cell, degree| QuadratureRule::new(cell, degree).unwrap().len();
        let tet: Vec<usize> = (1..=8).map(|p| count(CellType::Tetrahedron, p)).collect();
        assert_eq!(tet, vec![1, 4, 8, 14, 14, 24, 35, 46]);
        let tri: Vec<usize> = (1..=8).map(|p| count(CellType::Triangle, p)).collect();
        assert_eq!(tri, vec![1, 3, 4, 6, 7, 12, 15, 16]);
    }

    #[test]
    fn rules_are_not_exact_beyond_their_degree() {
        // Degree 3 uses 2 points per axis: x^4 must be missed on every cell (the test can fail).
        for cell in CELLS {
            let rule = QuadratureRule::new(cell, 3).unwrap();
            let exact = exact_monomial(cell.dim(), cell.is_simplex(), [4, 0, 0]);
            assert!((integrate(&rule, [4, 0, 0]) - exact).abs() > 1e-6, "{cell}");
        }
    }

    #[test]
    fn high_degree_interval_and_limits() {
        let rule = QuadratureRule::new(CellType::Interval, MAX_QUADRATURE_DEGREE).unwrap();
        assert_eq!(rule.len(), MAX_QUADRATURE_DEGREE / 2 + 1);
        for m in [0, 37, 99, 100] {
            assert!(
                (integrate(&rule, [m, 0, 0]) - 1.0 / (m + 1) as f64).abs() < 1e-14,
                "x^{m}"
            );
        }
        assert!(matches!(
            QuadratureRule::new(CellType::Hexahedron, 101),
            Err(Error::Invalid(_))
        ));
    }

    /// Exact `∫_F x^e ds` (reference measure) over facet `vertices` of the unit simplex or cube: a
    /// facet on a plane `x_k = c` reduces to the lower-dimensional integral times `c^{e_k}`; the
    /// slanted simplex facet `Σx = 1` has surface factor `√dim` and the Dirichlet integral `∏e_i!/(Σe+dim-1)!`.
    fn exact_facet_monomial(cell: CellType, vertices: &[usize], e: [usize; 3]) -> f64 {
        let d = cell.dim();
        let rv = cell.reference_vertices();
        let fixed = (0..d).find(|&k| vertices.iter().all(|&v| rv[v][k] == rv[vertices[0]][k]));
        match fixed {
            Some(k) => {
                let c = rv[vertices[0]][k];
                let mut rest = [0; 3];
                let others: Vec<usize> = (0..d).filter(|&i| i != k).collect();
                for (slot, &i) in others.iter().enumerate() {
                    rest[slot] = e[i];
                }
                c.powi(e[k] as i32) * exact_monomial(d - 1, cell.is_simplex(), rest)
            }
            None => {
                let dirichlet = e[..d].iter().map(|&a| factorial(a)).product::<f64>()
                    / factorial(e[..d].iter().sum::<usize>() + d - 1);
                (d as f64).sqrt() * dirichlet
            }
        }
    }

    #[test]
    fn facet_rules_integrate_monomials_on_every_facet() {
        let identity = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        for cell in CELLS {
            for (f, vertices) in cell.facets().iter().enumerate() {
                for degree in 0..=6 {
                    let (rule, tangents) = facet_rule(cell, f, degree).unwrap();
                    assert_eq!(tangents.len(), cell.dim() - 1);
                    let ds = facet_measure(&identity, &tangents);
                    // Monomials in the cell's variables of total degree ≤ degree are degree ≤ degree on
                    // the (affinely mapped) facet, for both facet shapes.
                    for e in exponents(cell.dim(), degree, true) {
                        let exact = exact_facet_monomial(cell, vertices, e);
                        let got = ds * integrate(&rule, e);
                        assert!(
                            (got - exact).abs() < 1e-14,
                            "{cell} facet {f} p={degree} {e:?}"
                        );
                    }
                }
            }
        }
        let (rule, t) = facet_rule(CellType::Tetrahedron, 0, 2).unwrap();
        let area = facet_measure(&identity, &t) * rule.weights.iter().sum::<f64>();
        assert!((area - 3f64.sqrt() / 2.0).abs() < 1e-15);
    }

    #[test]
    fn facet_measure_scales_with_the_cell_map() {
        let jac = [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 4.0]];
        let area = |cell, f| {
            let (rule, t) = facet_rule(cell, f, 1).unwrap();
            facet_measure(&jac, &t) * rule.weights.iter().sum::<f64>()
        };
        // Hex face 0 (z = 0) becomes a 2×3 rectangle; the slanted tet face has corners (2,0,0),
        // (0,3,0), (0,0,4): area ½|(-2,3,0)×(-2,0,4)| = ½√244.
        assert!((area(CellType::Hexahedron, 0) - 6.0).abs() < 1e-14);
        assert!((area(CellType::Tetrahedron, 0) - 0.5 * 244f64.sqrt()).abs() < 1e-14);
        // Quad edge 1 (x = 1) becomes length 3; the triangle's hypotenuse √(4 + 9).
        assert!((area(CellType::Quadrilateral, 1) - 3.0).abs() < 1e-14);
        assert!((area(CellType::Triangle, 0) - 13f64.sqrt()).abs() < 1e-14);
        assert_eq!(area(CellType::Interval, 1), 1.0);
        assert!(matches!(
            facet_rule(CellType::Triangle, 3, 1),
            Err(Error::Invalid(_))
        ));
    }
}
