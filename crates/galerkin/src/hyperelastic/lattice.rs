//! Point location and P1 interpolation in the box generator's Kuhn (Freudenthal) mesh, for the
//! multigrid transfers: every cube of the lattice is split into the six tetrahedra
//! (0, e_p, e_p + e_q, 1) along the main diagonal, so a point's cube is ⌊x·n⌋ and its
//! tetrahedron follows from the order of its fractional coordinates f_p ≥ f_q ≥ f_r; the P1
//! interpolant there is (1 − f_p) v₀ + (f_p − f_q) v_{e_p} + (f_q − f_r) v_{e_p+e_q} + f_r v₁.
//! The lattice maps lattice points to the nodes of a space (any numbering: the generated meshes
//! are renumbered for locality), so one routine gives both prolongations (a coarse P1 field at the
//! fine nodes) and the state's transfer to a coarse level (a fine field at the coarse vertices;
//! at a point that is a lattice point, a copy: injection for nested levels and for P2 → P1).
use crate::linalg::CsrMatrix;
use crate::{Error, Result};

/// The lattice points of a box of `n` cells per axis and the node at each (if any).
pub struct Lattice {
    pub n: [usize; 3],
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    /// Node at lattice point (i, j, k), `u32::MAX` where none.
    node: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Lattice {
    /// The lattice of `n` cells per axis in [lo, hi] with `coords[node]` on it: every node must
    /// sit on a lattice point (within 10⁻⁶ of a lattice spacing), each point holding one node.
    pub fn from_nodes(n: [usize; 3], lo: [f64; 3], hi: [f64; 3], coords: &[[f64; 3]]) -> Result<Lattice> {
        if n.contains(&0) || (0..3).any(|d| !(hi[d] > lo[d])) {
            return Err(Error::invalid(format!("lattice of {n:?} cells in {lo:?}..{hi:?}")));
        }
        let size = (n[0] + 1) * (n[1] + 1) * (n[2] + 1);
        let mut node = vec![NONE; size];
        for (v, x) in coords.iter().enumerate() {
            let mut idx = [0usize; 3];
            for d in 0..3 {
                let s = (x[d] - lo[d]) / (hi[d] - lo[d]) * n[d] as f64;
                let r = s.round();
                if !((s - r).abs() <= 1e-6 && r >= 0.0 && r <= n[d] as f64) {
                    return Err(Error::invalid(format!("node {v} at {x:?} is not a point of the {n:?} lattice of the box")));
                }
                idx[d] = r as usize;
            }
            let at = idx[0] + (n[0] + 1) * (idx[1] + (n[1] + 1) * idx[2]);
            if node[at] != NONE {
                return Err(Error::invalid(format!("nodes {} and {v} share the lattice point {idx:?}", node[at])));
            }
            node[at] = v as u32;
        }
        Ok(Lattice { n, lo, hi, node })
    }

    pub fn num_nodes(&self) -> usize {
        self.node.iter().filter(|&&v| v != NONE).count()
    }

    fn at(&self, i: [usize; 3]) -> u32 {
        self.node[i[0] + (self.n[0] + 1) * (i[1] + (self.n[1] + 1) * i[2])]
    }

    /// The P1 interpolation weights of the point `x` (clamped into the box): (node, weight).
    pub fn weights(&self, x: [f64; 3]) -> Result<Vec<(u32, f64)>> {
        let (mut cube, mut f) = ([0usize; 3], [0.0f64; 3]);
        for d in 0..3 {
            let s = ((x[d] - self.lo[d]) / (self.hi[d] - self.lo[d]) * self.n[d] as f64).clamp(0.0, self.n[d] as f64);
            let i = (s.floor() as usize).min(self.n[d] - 1);
            let mut fd = s - i as f64;
            // Round-off of points on a lattice plane: snap to it.
            if fd < 1e-12 {
                fd = 0.0;
            } else if fd > 1.0 - 1e-12 {
                fd = 1.0;
            }
            cube[d] = i;
            f[d] = fd;
        }
        let mut order = [0usize, 1, 2];
        order.sort_by(|&a, &b| f[b].total_cmp(&f[a]));
        let [p, q, r] = order;
        let mut corner = cube;
        let mut out = Vec::with_capacity(4);
        let ws = [1.0 - f[p], f[p] - f[q], f[q] - f[r], f[r]];
        for (k, w) in ws.into_iter().enumerate() {
            if k > 0 {
                corner[order[k - 1]] += 1;
            }
            if w == 0.0 {
                continue;
            }
            let v = self.at(corner);
            if v == NONE {
                return Err(Error::invalid(format!("interpolation at {x:?} needs lattice point {corner:?}, which holds no node")));
            }
            out.push((v, w));
        }
        Ok(out)
    }

    /// The (points × nodes) matrix of P1 interpolation at `points` (scalar, node numbering).
    pub fn interpolation(&self, points: &[[f64; 3]], nodes: usize) -> Result<CsrMatrix> {
        let mut row_ptr = Vec::with_capacity(points.len() + 1);
        let (mut col_idx, mut values) = (Vec::new(), Vec::new());
        row_ptr.push(0);
        for &x in points {
            let mut w = self.weights(x)?;
            w.sort_by_key(|e| e.0);
            for (c, v) in w {
                col_idx.push(c);
                values.push(v);
            }
            row_ptr.push(col_idx.len());
        }
        Ok(CsrMatrix { nrows: points.len(), ncols: nodes, row_ptr, col_idx, values })
    }
}

/// `m ⊗ I_b` with node-interleaved dofs (dof = node·b + component), rows `r` with `row_mask[r] = 0`
/// and columns `c` with `col_mask[c] = 0` dropped (Dirichlet dofs: their corrections are zero).
pub fn expand(m: &CsrMatrix, b: usize, row_mask: Option<&[f64]>, col_mask: Option<&[f64]>) -> CsrMatrix {
    let mut row_ptr = Vec::with_capacity(m.nrows * b + 1);
    let (mut col_idx, mut values) = (Vec::with_capacity(m.nnz() * b), Vec::with_capacity(m.nnz() * b));
    row_ptr.push(0);
    for r in 0..m.nrows {
        let (cols, vals) = m.row(r);
        for c in 0..b {
            let row = r * b + c;
            if row_mask.is_none_or(|mk| mk[row] != 0.0) {
                for (&j, &v) in cols.iter().zip(vals) {
                    let col = j as usize * b + c;
                    if col_mask.is_none_or(|mk| mk[col] != 0.0) {
                        col_idx.push(col as u32);
                        values.push(v);
                    }
                }
            }
            row_ptr.push(col_idx.len());
        }
    }
    CsrMatrix { nrows: m.nrows * b, ncols: m.ncols * b, row_ptr, col_idx, values }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate::box_mesh, CellType};

    /// The interpolant of a linear field is the field, at any point, on the generator's mesh
    /// (renumbered), and at a lattice point it is a copy.
    #[test]
    fn reproduces_linear_fields_and_copies_at_lattice_points() {
        let (lo, hi) = ([0.0, -1.0, 0.5], [2.0, 1.0, 1.5]);
        let mesh = crate::mesh::ordering::reorder_for_locality(&box_mesh(3, 4, 5, lo, hi, CellType::Tetrahedron).unwrap()).unwrap();
        let lat = Lattice::from_nodes([3, 4, 5], lo, hi, &mesh.coords).unwrap();
        let lin = |x: [f64; 3]| 0.3 + 1.7 * x[0] - 0.4 * x[1] + 2.2 * x[2];
        let vals: Vec<f64> = mesh.coords.iter().map(|&x| lin(x)).collect();
        let pts: Vec<[f64; 3]> = (0..200).map(|i| {
            let t = i as f64;
            [lo[0] + 2.0 * ((t * 0.377).fract()), lo[1] + 2.0 * ((t * 0.591).fract()), lo[2] + (t * 0.713).fract()]
        }).chain(mesh.coords.iter().copied()).collect();
        let p = lat.interpolation(&pts, mesh.coords.len()).unwrap();
        let mut y = vec![0.0; pts.len()];
        p.spmv(&vals, &mut y);
        for (x, v) in pts.iter().zip(&y) {
            assert!((v - lin(*x)).abs() < 1e-12, "{x:?}: {v} vs {}", lin(*x));
        }
        for r in 200..pts.len() {
            assert_eq!(p.row(r).0, &[(r - 200) as u32][..], "lattice point {r}");
        }
        // A non-linear field is not reproduced (the test can fail).
        let sq: Vec<f64> = mesh.coords.iter().map(|x| x[0] * x[1]).collect();
        p.spmv(&sq, &mut y);
        assert!(pts[..200].iter().zip(&y).any(|(x, v)| (v - x[0] * x[1]).abs() > 1e-3));
    }

    #[test]
    fn expand_interleaves_and_masks() {
        let m = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 2.0), (1, 1, 3.0)]).unwrap();
        let e = expand(&m, 3, Some(&[1.0, 1.0, 0.0, 1.0, 1.0, 1.0]), Some(&[1.0, 0.0, 1.0, 1.0, 1.0, 1.0]));
        assert_eq!((e.nrows, e.ncols), (6, 6));
        assert_eq!(e.get(0, 0), 1.0);
        assert_eq!(e.get(0, 3), 2.0);
        assert_eq!(e.get(1, 1), 0.0); // column 1 masked
        assert_eq!(e.get(1, 4), 2.0);
        assert_eq!(e.get(2, 2), 0.0); // row 2 masked
        assert_eq!(e.get(5, 5), 3.0);
    }
}
