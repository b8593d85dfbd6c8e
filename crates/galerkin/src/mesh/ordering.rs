//! Cell orderings along a space-filling curve.
//!
//! Why: a kernel that gives a block of consecutive cells one shared-memory patch (GPU patch
//! assembly) shares the most entries, and adds the fewest to values other patches also touch, when
//! those cells form a compact blob rather than a strip of a lexicographically numbered grid.
//! Sorting cells by the Hilbert index of their centroid gives blobs at every scale.
use super::Mesh;
use hilbert_index::ToHilbertIndex;
use rayon::prelude::*;

/// The cells of `mesh` in Hilbert-curve order of their centroids (a permutation of
/// `0..num_cells`; ties keep the mesh order).
pub fn hilbert_cell_order(mesh: &Mesh) -> Vec<u32> {
    let (lo, hi) = mesh.bounding_box();
    let nv = mesh.cell_type.num_vertices();
    let dim = mesh.dim;
    // Bits per axis so the index fits in 63 bits.
    let level = 63 / dim.max(1);
    let cells = 1u64 << level;
    // Grid position of cell c's centroid (its vertices read once).
    let grid = |c: usize| -> [usize; 3] {
        let mut x = [0.0; 3];
        for &v in mesh.cell(c) {
            for (xk, pk) in x.iter_mut().zip(mesh.coords[v]) {
                *xk += pk;
            }
        }
        std::array::from_fn(|k| {
            let (xk, span) = (x[k] / nv as f64, hi[k] - lo[k]);
            let t = if span > 0.0 { ((xk - lo[k]) / span).clamp(0.0, 1.0) } else { 0.0 };
            ((t * (cells - 1) as f64).round() as u64).min(cells - 1) as usize
        })
    };
    let mut keyed: Vec<(usize, u32)> = (0..mesh.num_cells())
        .into_par_iter()
        .map(|c| {
            let g = grid(c);
            let h = match dim {
                1 => g[0],
                2 => [g[0], g[1]].to_hilbert_index(level),
                _ => g.to_hilbert_index(level),
            };
            (h, c as u32)
        })
        .collect();
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, CellType};

    /// On a 16³ grid of hexahedra, every aligned run of 8^k cells of the order is a 2^k cube of
    /// cells (the Hilbert curve fills octants one after the other), and the order is a permutation.
    #[test]
    fn hilbert_runs_are_cubes_of_cells() {
        let mesh = generate::box_mesh(16, 16, 16, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap();
        let order = hilbert_cell_order(&mesh);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().enumerate().all(|(k, &c)| k == c as usize));
        // Grid position of a cell from its centroid.
        let ijk = |c: u32, k: usize| {
            let x: f64 = mesh.cell(c as usize).iter().map(|&v| mesh.coords[v][k]).sum::<f64>() / 8.0;
            (x * 16.0) as usize
        };
        for side in [2, 4, 8] {
            for run in order.chunks(side * side * side) {
                for k in 0..3 {
                    let (a, b) = run.iter().map(|&c| ijk(c, k)).fold((usize::MAX, 0), |(a, b), x| (a.min(x), b.max(x)));
                    assert_eq!(b - a + 1, side, "a run of {} cells spans {} cells along axis {k}", run.len(), b - a + 1);
                }
            }
        }
    }
}
