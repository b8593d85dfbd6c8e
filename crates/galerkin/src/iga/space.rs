//! B-spline spaces as the operator's pieces: the element restriction `R` (an element's `p + 1`
//! basis functions per direction are consecutive global ones, starting at `span − p`) and the basis
//! `B` tabulated at Gauss points by direct Cox–de Boor evaluation (no Bézier extraction needed:
//! evaluation per element costs O(p²) per point, the same as applying an extraction operator).
//! 2D spaces are tensor products of two 1D spaces on a rectangle, numbered `i + nx·j`.
use super::basis::ders_basis_funs;
use super::knots::KnotVector;
use crate::fe::gauss_legendre;
use crate::{Error, Result};

/// A 1D B-spline space: a knot vector and its elements (non-empty knot spans).
#[derive(Clone, Debug)]
pub struct Space1d {
    kv: KnotVector,
    spans: Vec<usize>,
}

/// Basis values and derivatives at the Gauss points of one element (reused across elements to
/// avoid allocation): `val[q·nb + i]`, `der[q·nb + i]` for local function `i`, and the physical
/// points `x[q]` and weights `w[q]` (Gauss weight × element length).
#[derive(Clone, Debug, Default)]
pub struct Tab1d {
    pub nq: usize,
    pub nb: usize,
    pub x: Vec<f64>,
    pub w: Vec<f64>,
    pub val: Vec<f64>,
    pub der: Vec<f64>,
}

impl Space1d {
    pub fn new(kv: KnotVector) -> Space1d {
        let spans = kv.element_spans();
        Space1d { kv, spans }
    }

    /// Uniform elements on `[a, b]` with maximal continuity C^(p−1).
    pub fn uniform(degree: usize, elements: usize, a: f64, b: f64) -> Result<Space1d> {
        let continuity = degree.saturating_sub(1);
        Ok(Space1d::new(KnotVector::uniform(degree, elements, continuity, a, b)?))
    }

    pub fn knots(&self) -> &KnotVector {
        &self.kv
    }
    pub fn degree(&self) -> usize {
        self.kv.degree()
    }
    pub fn num_basis(&self) -> usize {
        self.kv.num_basis()
    }
    pub fn num_elements(&self) -> usize {
        self.spans.len()
    }
    /// `[x_a, x_b]` of element `e`.
    pub fn element_interval(&self, e: usize) -> (f64, f64) {
        let t = self.kv.knots();
        (t[self.spans[e]], t[self.spans[e] + 1])
    }
    /// The first of the `p + 1` consecutive global functions non-zero on element `e`.
    pub fn first_dof(&self, e: usize) -> usize {
        self.spans[e] - self.kv.degree()
    }
    /// The element containing `x` (clamped to the domain).
    pub fn element_of(&self, x: f64) -> usize {
        let span = self.kv.find_span(x);
        self.spans.partition_point(|&s| s < span).min(self.spans.len() - 1)
    }
    /// Largest element length (the mesh size h).
    pub fn max_element_length(&self) -> f64 {
        (0..self.num_elements()).map(|e| { let (a, b) = self.element_interval(e); b - a }).fold(0.0, f64::max)
    }

    /// An empty table for `nq` Gauss points per element.
    pub fn table(&self, nq: usize) -> Tab1d {
        let nb = self.degree() + 1;
        Tab1d { nq, nb, x: vec![0.0; nq], w: vec![0.0; nq], val: vec![0.0; nq * nb], der: vec![0.0; nq * nb] }
    }

    /// Fills `tab` with the basis on element `e` at the `tab.nq`-point Gauss rule (`rule` from
    /// [`gauss_legendre`], passed in so it is computed once).
    pub fn tabulate(&self, e: usize, rule: &(Vec<f64>, Vec<f64>), tab: &mut Tab1d) {
        let (a, b) = self.element_interval(e);
        let span = self.spans[e];
        let nb = tab.nb;
        for (q, (&t, &w)) in rule.0.iter().zip(&rule.1).enumerate() {
            let x = a + (b - a) * t;
            tab.x[q] = x;
            tab.w[q] = w * (b - a);
            let d = ders_basis_funs(&self.kv, span, x, 1);
            tab.val[q * nb..(q + 1) * nb].copy_from_slice(&d.ders[0][..nb]);
            tab.der[q * nb..(q + 1) * nb].copy_from_slice(&d.ders[1][..nb]);
        }
    }

    /// Element restriction: the global dofs of every element, `p + 1` per element.
    pub fn element_dofs(&self) -> Vec<u32> {
        let nb = self.degree() + 1;
        (0..self.num_elements()).flat_map(|e| (0..nb).map(move |i| (self.first_dof(e) + i) as u32)).collect()
    }
}

/// Gauss–Legendre rule on [0, 1] with `n` points; `n ≥ 1`.
pub fn gauss_rule(n: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    if n == 0 || n > 64 {
        return Err(Error::invalid(format!("Gauss points per element must be 1 to 64, got {n}")));
    }
    Ok(gauss_legendre(n))
}

/// A tensor-product B-spline space on a rectangle: dof `(i, j)` is `i + nx·j`, element
/// `(ex, ey)` is `ex + Ex·ey`, local function `(a, b)` of an element is `a + (px + 1)·b`.
#[derive(Clone, Debug)]
pub struct Space2d {
    pub x: Space1d,
    pub y: Space1d,
}

impl Space2d {
    pub fn new(x: Space1d, y: Space1d) -> Space2d {
        Space2d { x, y }
    }
    pub fn num_basis(&self) -> usize {
        self.x.num_basis() * self.y.num_basis()
    }
    pub fn num_elements(&self) -> usize {
        self.x.num_elements() * self.y.num_elements()
    }
    /// Elements per direction.
    pub fn grid(&self) -> (usize, usize) {
        (self.x.num_elements(), self.y.num_elements())
    }
    /// Basis functions per element.
    pub fn element_size(&self) -> usize {
        (self.x.degree() + 1) * (self.y.degree() + 1)
    }
    /// Element restriction: the global dofs of every element in local tensor order.
    pub fn element_dofs(&self) -> Vec<u32> {
        let (ex, ey) = self.grid();
        let (bx, by) = (self.x.degree() + 1, self.y.degree() + 1);
        let nx = self.x.num_basis();
        let mut out = Vec::with_capacity(ex * ey * bx * by);
        for j in 0..ey {
            for i in 0..ex {
                let (fx, fy) = (self.x.first_dof(i), self.y.first_dof(j));
                for b in 0..by {
                    for a in 0..bx {
                        out.push(((fx + a) + nx * (fy + b)) as u32);
                    }
                }
            }
        }
        out
    }
    /// The dofs on the boundary (`i = 0`, `i = nx − 1`, `j = 0` or `j = ny − 1`): with open knot
    /// vectors only these functions are non-zero on the boundary.
    pub fn boundary_dofs(&self) -> Vec<usize> {
        let (nx, ny) = (self.x.num_basis(), self.y.num_basis());
        (0..nx * ny).filter(|&d| { let (i, j) = (d % nx, d / nx); i == 0 || j == 0 || i == nx - 1 || j == ny - 1 }).collect()
    }
    /// Largest element diameter.
    pub fn mesh_size(&self) -> f64 {
        self.x.max_element_length().hypot(self.y.max_element_length())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restriction_and_tables_of_a_nonuniform_space() {
        let kv = KnotVector::new(2, vec![0.0, 0.0, 0.0, 0.3, 0.3, 0.5, 1.0, 1.0, 1.0]).unwrap();
        let s = Space1d::new(kv);
        assert_eq!(s.num_elements(), 3);
        assert_eq!(s.element_dofs(), vec![0, 1, 2, 2, 3, 4, 3, 4, 5]);
        assert_eq!(s.element_of(0.31), 1);
        assert_eq!(s.element_of(1.0), 2);
        assert_eq!(s.element_of(0.0), 0);
        let rule = gauss_rule(3).unwrap();
        let mut tab = s.table(3);
        let mut length = 0.0;
        for e in 0..3 {
            s.tabulate(e, &rule, &mut tab);
            length += tab.w.iter().sum::<f64>();
            for q in 0..3 {
                let sum: f64 = tab.val[q * 3..q * 3 + 3].iter().sum();
                assert!((sum - 1.0).abs() < 1e-14);
            }
        }
        assert!((length - 1.0).abs() < 1e-14);
        assert!(gauss_rule(0).is_err());
    }

    #[test]
    fn tensor_space_numbers_dofs_and_boundary() {
        let s = Space2d::new(Space1d::uniform(2, 3, 0.0, 1.0).unwrap(), Space1d::uniform(1, 2, 0.0, 2.0).unwrap());
        assert_eq!(s.num_basis(), 5 * 3);
        assert_eq!(s.element_size(), 6);
        let dofs = s.element_dofs();
        assert_eq!(dofs.len(), 6 * 6);
        // Element (1, 1): x functions 1..=3, y functions 1..=2.
        assert_eq!(&dofs[4 * 6..5 * 6], &[6, 7, 8, 11, 12, 13]);
        assert_eq!(s.boundary_dofs().len(), 15 - 3);
    }
}
