//! One-dimensional factor tables of a tensor-product basis on a tensor-product quadrature, for the
//! tiled element scheme's staging (`element_schemes.cu`, TENSOR): every hierarchical (and Lagrange)
//! hexahedral function is `c · f(x) g(y) h(z)` and a Gauss rule's points are a grid, so a
//! reference gradient at a point is three products of 1D values and derivatives read from a few
//! kilobytes of shared memory instead of three doubles of a table of NQ · NLOC · 3 (383 KB at
//! p = 5) that does not fit L1 and is read from L2 for every (point, function) of every round.
//!
//! The factors are found from the tabulation itself (a rank-one split of each function's values on
//! the grid, checked against every value and gradient), so nothing about the element is assumed;
//! where the split does not reproduce the tabulation the scheme stages from the table as before.

/// The factor tables: per axis at most `nf` distinct normalised 1D factors on at most `n1` points.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorTables {
    pub n1: usize,
    pub nf: usize,
    /// `val[axis][f][i]` | `der[axis][f][i]` (each `3 · nf · n1`) | `scale[a]` (`nloc`).
    pub reals: Vec<f64>,
    /// `qid[q] = ix | iy << 8 | iz << 16` (`nq`) | `fid[a] = fx | fy << 8 | fz << 16` (`nloc`).
    pub ints: Vec<u32>,
}

/// Relative tolerance of the reproduced values and gradients (round-off of three products).
const TOL: f64 = 1e-12;

/// The distinct coordinates of `points` along `axis` and each point's index among them.
fn axis_grid(points: &[[f64; 3]], axis: usize) -> (Vec<f64>, Vec<usize>) {
    let mut xs: Vec<f64> = points.iter().map(|p| p[axis]).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() <= 1e-14);
    let idx = points.iter().map(|p| xs.iter().position(|x| (x - p[axis]).abs() <= 1e-14).unwrap_or(0)).collect();
    (xs, idx)
}

/// The factor tables of a basis tabulated as `values[q·nloc + a]`, `grads[q·nloc + a]` on
/// `points` (3D), or None where the points are not a full grid or a function is not a product of
/// 1D factors (to `TOL`), or the grid or the factor count exceeds 255 per axis.
pub fn tensor_tables(points: &[[f64; 3]], nloc: usize, values: &[f64], grads: &[[f64; 3]]) -> Option<TensorTables> {
    let nq = points.len();
    if nq == 0 || nloc == 0 || values.len() != nq * nloc || grads.len() != nq * nloc {
        return None;
    }
    let grids: Vec<(Vec<f64>, Vec<usize>)> = (0..3).map(|d| axis_grid(points, d)).collect();
    let n = [grids[0].0.len(), grids[1].0.len(), grids[2].0.len()];
    if n[0] * n[1] * n[2] != nq || n.iter().any(|&m| m > 255) {
        return None;
    }
    // The grid position of each point, and the point at each grid position.
    let mut at = vec![usize::MAX; nq];
    for q in 0..nq {
        let (i, j, k) = (grids[0].1[q], grids[1].1[q], grids[2].1[q]);
        let slot = i + n[0] * (j + n[1] * k);
        if at[slot] != usize::MAX {
            return None;
        }
        at[slot] = q;
    }
    let pt = |i: usize, j: usize, k: usize| at[i + n[0] * (j + n[1] * k)];
    // Distinct normalised factors per axis: (values, derivatives) on the axis's points.
    let mut factors: [Vec<Vec<f64>>; 3] = Default::default();
    let mut fid = vec![0u32; nloc];
    let mut scale = vec![0.0; nloc];
    for a in 0..nloc {
        let v = |q: usize| values[q * nloc + a];
        let (q0, vmax) = (0..nq).map(|q| (q, v(q).abs())).fold((0, 0.0), |m, x| if x.1 > m.1 { x } else { m });
        if vmax == 0.0 {
            return None;
        }
        let (i0, j0, k0) = (grids[0].1[q0], grids[1].1[q0], grids[2].1[q0]);
        let v0 = v(q0);
        // Rank-one split through the pivot: f̃(x) = φ(x, y0, z0), g̃(y) = φ(x0, y, z0)/φ0, h̃ likewise,
        // with derivatives from the gradient's own component along the same lines.
        let line = |axis: usize| -> Vec<f64> {
            let mut r = Vec::with_capacity(2 * n[axis]);
            let q_of = |m: usize| match axis {
                0 => pt(m, j0, k0),
                1 => pt(i0, m, k0),
                _ => pt(i0, j0, m),
            };
            let div = if axis == 0 { 1.0 } else { v0 };
            r.extend((0..n[axis]).map(|m| v(q_of(m)) / div));
            r.extend((0..n[axis]).map(|m| grads[q_of(m) * nloc + a][axis] / div));
            r
        };
        let mut ids = [0u32; 3];
        let mut c = 1.0;
        for axis in 0..3 {
            let mut f = line(axis);
            // Normalise: the value of largest magnitude becomes +1.
            let piv = f[..n[axis]].iter().copied().fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
            if piv == 0.0 {
                return None;
            }
            f.iter_mut().for_each(|x| *x /= piv);
            c *= piv;
            let list = &mut factors[axis];
            let id = match list.iter().position(|g| g.iter().zip(&f).all(|(x, y)| (x - y).abs() <= TOL)) {
                Some(id) => id,
                None => {
                    list.push(f);
                    list.len() - 1
                }
            };
            if id > 255 {
                return None;
            }
            ids[axis] = id as u32;
        }
        fid[a] = ids[0] | ids[1] << 8 | ids[2] << 16;
        scale[a] = c;
    }
    let nf = factors.iter().map(Vec::len).max().unwrap_or(1);
    let n1 = n.iter().copied().max().unwrap_or(1);
    let mut reals = vec![0.0; 2 * 3 * nf * n1 + nloc];
    for (axis, list) in factors.iter().enumerate() {
        for (f, fac) in list.iter().enumerate() {
            for m in 0..n[axis] {
                reals[(axis * nf + f) * n1 + m] = fac[m];
                reals[3 * nf * n1 + (axis * nf + f) * n1 + m] = fac[n[axis] + m];
            }
        }
    }
    reals[6 * nf * n1..].copy_from_slice(&scale);
    let qid: Vec<u32> = (0..nq).map(|q| (grids[0].1[q] | grids[1].1[q] << 8 | grids[2].1[q] << 16) as u32).collect();
    let t = TensorTables { n1, nf, reals, ints: qid.into_iter().chain(fid).collect() };
    // Every value and gradient reproduced, or no tables.
    let (vmax, gmax) = (values.iter().fold(0.0f64, |m, x| m.max(x.abs())), grads.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs())));
    for q in 0..nq {
        for a in 0..nloc {
            let (val, grad) = t.reference(q, a, nq);
            if (val - values[q * nloc + a]).abs() > TOL * vmax || (0..3).any(|d| (grad[d] - grads[q * nloc + a][d]).abs() > TOL * gmax) {
                return None;
            }
        }
    }
    Some(t)
}

impl TensorTables {
    /// Value and reference gradient of function `a` at point `q` from the tables (as the kernel
    /// forms them).
    pub fn reference(&self, q: usize, a: usize, nq: usize) -> (f64, [f64; 3]) {
        let (n1, nf) = (self.n1, self.nf);
        let (qi, fi) = (self.ints[q], self.ints[nq + a]);
        let field = |word: u32, axis: usize| ((word >> (8 * axis)) & 255) as usize;
        let (mut v, mut d) = ([0.0; 3], [0.0; 3]);
        for axis in 0..3 {
            let o = (axis * nf + field(fi, axis)) * n1 + field(qi, axis);
            v[axis] = self.reals[o];
            d[axis] = self.reals[3 * nf * n1 + o];
        }
        let s = self.reals[6 * nf * n1 + a];
        (s * v[0] * v[1] * v[2], [s * d[0] * v[1] * v[2], s * v[0] * d[1] * v[2], s * v[0] * v[1] * d[2]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fe::hierarchical::HierarchicalHex;
    use crate::fe::{FiniteElement, ModeSet, QuadratureRule};
    use crate::mesh::CellType;

    /// The hierarchical trunk and full hexahedra on Gauss rules split into few 1D factors that
    /// reproduce every value and gradient; a rule that is not a grid gives no tables.
    #[test]
    fn hierarchical_bases_split_into_factors() {
        for (p, modes) in [(1, ModeSet::Trunk), (3, ModeSet::Trunk), (5, ModeSet::Trunk), (8, ModeSet::Trunk), (3, ModeSet::Full)] {
            let e = HierarchicalHex::new(p, modes).unwrap();
            let quad = QuadratureRule::new(CellType::Hexahedron, 2 * p + 1).unwrap();
            let tab = e.tabulate(&quad.points);
            let t = tensor_tables(&quad.points, e.ndofs(), &tab.values, &tab.grads).unwrap_or_else(|| panic!("p = {p} {modes:?}: no factor tables"));
            assert_eq!(t.n1, p + 1, "Gauss points per axis");
            // Linears (2) and bubbles k = 2..p, each possibly flipped: at most 2p factors.
            assert!(t.nf <= 2 * p, "p = {p}: {} factors", t.nf);
            let (q, a) = (quad.points.len() / 3, e.ndofs() - 1);
            let (v, g) = t.reference(q, a, quad.points.len());
            assert!((v - tab.values[q * e.ndofs() + a]).abs() < 1e-13 && (g[0] - tab.grads[q * e.ndofs() + a][0]).abs() < 1e-12);
        }
        let e = HierarchicalHex::new(2, ModeSet::Trunk).unwrap();
        let mut quad = QuadratureRule::new(CellType::Hexahedron, 5).unwrap();
        quad.points[0][0] += 1e-3;
        let tab = e.tabulate(&quad.points);
        assert!(tensor_tables(&quad.points, e.ndofs(), &tab.values, &tab.grads).is_none(), "a perturbed grid is not a grid");
        // A sum of two products is not one product.
        let quad = QuadratureRule::new(CellType::Hexahedron, 5).unwrap();
        let tab = e.tabulate(&quad.points);
        let n = e.ndofs();
        let mut values = tab.values.clone();
        for q in 0..quad.points.len() {
            values[q * n] += tab.values[q * n + 1];
        }
        assert!(tensor_tables(&quad.points, n, &values, &tab.grads).is_none(), "a sum of products has no split");
    }
}
