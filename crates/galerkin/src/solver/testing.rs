//! Model matrices shared by the solver tests (finite differences on the unit square, `m×m`
//! interior points, rows scaled by h² so entries are O(1)).
use crate::linalg::CsrMatrix;

/// Five-point stencil with per-direction couplings `[west, east, south, north]` and diagonal `d`.
fn five_point(m: usize, d: f64, off: [f64; 4]) -> CsrMatrix {
    let mut t = Vec::with_capacity(5 * m * m);
    for j in 0..m {
        for i in 0..m {
            let row = j * m + i;
            t.push((row, row, d));
            let nbrs = [
                (i > 0, row.wrapping_sub(1)),
                (i + 1 < m, row + 1),
                (j > 0, row.wrapping_sub(m)),
                (j + 1 < m, row + m),
            ];
            for ((inside, col), v) in nbrs.into_iter().zip(off) {
                if inside {
                    t.push((row, col, v));
                }
            }
        }
    }
    CsrMatrix::from_triplets(m * m, m * m, &t).expect("model matrix indices are in range")
}

/// −Δ with homogeneous Dirichlet conditions: SPD, eigenvalues in (0, 8).
pub fn laplacian_2d(m: usize) -> CsrMatrix {
    five_point(m, 4.0, [-1.0; 4])
}

/// −Δu + c·∇u with velocity `(c, c/2)`, first-order upwind: a nonsymmetric M-matrix.
pub fn convection_diffusion_2d(m: usize, c: f64) -> CsrMatrix {
    let h = 1.0 / (m as f64 + 1.0);
    let (cx, cy) = (c * h, 0.5 * c * h);
    five_point(m, 4.0 + cx + cy, [-1.0 - cx, -1.0, -1.0 - cy, -1.0])
}

/// A smooth, non-trivial right-hand side.
pub fn rhs(n: usize) -> Vec<f64> {
    (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect()
}
