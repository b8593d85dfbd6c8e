//! The basis B of `A = Rᵀ Bᵀ D B R`: element basis values and reference gradients tabulated at the
//! operator's quadrature points, and, on quadrilaterals and hexahedra, the 1D tables that let the
//! matrix-free levels apply B by sum factorization (`(p+1)^d` work per point instead of `(p+1)^d`
//! per point and basis function).
use crate::fe::{gauss_legendre, gauss_lobatto, QuadratureRule, Tabulation};
use crate::space::FunctionSpace;

/// 1D tables of a tensor-product basis on a tensor-product rule.
#[derive(Clone, Debug)]
pub struct TensorBasis {
    /// Basis functions and quadrature points per axis.
    pub p1d: usize,
    pub q1d: usize,
    /// `b[q·p1d + i]` = φ_i(x_q), `g[q·p1d + i]` = φ_i'(x_q) on `[0, 1]`.
    pub b: Vec<f64>,
    pub g: Vec<f64>,
    /// Local dof of lexicographic index `i_0 + p1d·i_1 + p1d²·i_2` (first axis fastest).
    pub lex_to_dof: Vec<usize>,
}

/// The element basis on one quadrature rule.
#[derive(Clone, Debug)]
pub struct Basis {
    pub dim: usize,
    /// Scalar basis functions per cell.
    pub nloc: usize,
    pub rule: QuadratureRule,
    pub tab: Tabulation,
    /// Present on tensor-product cells whose rule is a Gauss or Gauss–Lobatto product rule.
    pub tensor: Option<TensorBasis>,
}

impl Basis {
    pub fn new(space: &FunctionSpace, rule: QuadratureRule) -> Basis {
        let tab = space.element.tabulate(&rule.points);
        let dim = space.mesh.dim;
        let tensor = tensor_tables(space, &rule);
        Basis { dim, nloc: tab.ndofs, rule, tab, tensor }
    }

    pub fn nq(&self) -> usize {
        self.rule.len()
    }

    /// Local dof order the matrix-free kernels work in: lexicographic on tensor cells (so the 1D
    /// tables apply axis by axis), the element's own order elsewhere. `order[k]` is a local dof.
    pub fn kernel_order(&self) -> Vec<usize> {
        match &self.tensor {
            Some(t) => t.lex_to_dof.clone(),
            None => (0..self.nloc).collect(),
        }
    }
}

/// The 1D tables when `rule` is the n-point Gauss (or Gauss–Lobatto) product rule on a tensor cell
/// (points ordered first axis fastest, as `QuadratureRule` builds them) and the element has a
/// tensor basis.
fn tensor_tables(space: &FunctionSpace, rule: &QuadratureRule) -> Option<TensorBasis> {
    let x = product_points_1d(space.mesh.cell_type, rule)?;
    let q1d = x.len();
    let (b, g, lex_to_dof) = space.element.tensor_1d(&x)?;
    Some(TensorBasis { p1d: b.len() / q1d, q1d, b, g, lex_to_dof })
}

/// The 1D points of `rule` when it is the n-point Gauss (or Gauss–Lobatto) product rule on a
/// tensor cell, points ordered first axis fastest (as `QuadratureRule` builds them).
pub fn product_points_1d(cell: crate::mesh::CellType, rule: &QuadratureRule) -> Option<Vec<f64>> {
    if cell.is_simplex() && cell.dim() > 1 {
        return None;
    }
    let dim = cell.dim();
    let q1d = (rule.len() as f64).powf(1.0 / dim as f64).round() as usize;
    if q1d.pow(dim as u32) != rule.len() {
        return None;
    }
    // The rule must be exactly the product of one of these 1D rules.
    let is_product_of = |(x, w): &(Vec<f64>, Vec<f64>)| {
        rule.points.iter().zip(&rule.weights).enumerate().all(|(q, (p, wq))| {
            let idx = [q % q1d, q / q1d % q1d, q / (q1d * q1d)];
            let wt: f64 = (0..dim).map(|a| w[idx[a]]).product();
            (0..dim).all(|a| (p[a] - x[idx[a]]).abs() <= 1e-14) && (wt - wq).abs() <= 1e-14
        })
    };
    let mut rules = vec![gauss_legendre(q1d)];
    if q1d >= 2 {
        rules.push(gauss_lobatto(q1d));
    }
    rules.into_iter().find(is_product_of).map(|(x, _)| x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, CellType};
    use std::sync::Arc;

    /// The products of the 1D tables are the full tabulation, on quadrilaterals and hexahedra.
    #[test]
    fn tensor_tables_reproduce_the_tabulation() {
        for (cell, degree) in [(CellType::Quadrilateral, 3), (CellType::Hexahedron, 2), (CellType::Interval, 3)] {
            let mesh = Arc::new(match cell.dim() {
                1 => generate::interval(1, 0.0, 1.0).unwrap(),
                2 => generate::rectangle(1, 1, [0.0; 2], [1.0; 2], cell).unwrap(),
                _ => generate::box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], cell).unwrap(),
            });
            let space = FunctionSpace::lagrange(mesh, degree, 1).unwrap();
            let basis = Basis::new(&space, QuadratureRule::new(cell, 2 * degree + 1).unwrap());
            let t = basis.tensor.as_ref().expect("tensor tables");
            let dim = cell.dim();
            for q in 0..basis.nq() {
                let qi = [q % t.q1d, q / t.q1d % t.q1d, q / (t.q1d * t.q1d)];
                for (lex, &dof) in t.lex_to_dof.iter().enumerate() {
                    let pi = [lex % t.p1d, lex / t.p1d % t.p1d, lex / (t.p1d * t.p1d)];
                    let f = |a: usize, d: bool| if a >= dim { 1.0 } else if d { t.g[qi[a] * t.p1d + pi[a]] } else { t.b[qi[a] * t.p1d + pi[a]] };
                    let v: f64 = (0..3).map(|a| f(a, false)).product();
                    assert!((v - basis.tab.values[q * basis.nloc + dof]).abs() < 1e-13);
                    for k in 0..dim {
                        let g: f64 = (0..3).map(|a| f(a, a == k)).product();
                        assert!((g - basis.tab.grads[q * basis.nloc + dof][k]).abs() < 1e-12);
                    }
                }
            }
        }
    }
}
