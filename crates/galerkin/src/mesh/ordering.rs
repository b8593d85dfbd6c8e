//! Cell orderings along a space-filling curve.
//!
//! Why: a kernel that gives a block of consecutive cells one shared-memory patch (GPU patch
//! assembly) shares the most entries, and adds the fewest to values other patches also touch, when
//! those cells form a compact blob rather than a strip of a lexicographically numbered grid.
//! Sorting cells by the Hilbert index of their centroid gives blobs at every scale.
use super::{BoundaryFacet, Mesh};
use crate::Result;
use super::hilbert::HilbertTable;
use crate::operator::coloring::SharedMut;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// The cells of `mesh` in Hilbert-curve order of their centroids (a permutation of
/// `0..num_cells`; ties keep the mesh order).
pub fn hilbert_cell_order(mesh: &Mesh) -> Vec<u32> {
    hilbert_cell_order_timed(mesh).0
}

/// [`hilbert_cell_order`] with the seconds spent keying and sorting.
fn hilbert_cell_order_timed(mesh: &Mesh) -> (Vec<u32>, [(&'static str, f64); 2]) {
    let t = std::time::Instant::now();
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
    let (t2, t3) = (HilbertTable::<2>::new(), HilbertTable::<3>::new());
    let keyed: Vec<(usize, u32)> = (0..mesh.num_cells())
        .into_par_iter()
        .map(|c| {
            let g = grid(c);
            let h = match dim {
                1 => g[0],
                2 => t2.index([g[0], g[1]], level),
                _ => t3.index(g, level),
            };
            (h, c as u32)
        })
        .collect();
    let keys = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let keyed = super::sort::par_sort_by_key_bits(keyed, |p| p.0 as u64);
    let order = keyed.into_par_iter().map(|(_, c)| c).collect();
    (order, [("hilbert_keys", keys), ("sort", t.elapsed().as_secs_f64())])
}

/// `mesh` renumbered for memory locality: cells in Hilbert order, vertices in order of first
/// appearance in those cells (vertices of no cell last, in their old order), tags and boundary
/// facets carried along. Dof maps number vertices first and edges/faces by their vertices, so a
/// run of consecutive cells then touches a few short runs of matrix rows instead of rows spread
/// over the whole matrix: what GPU patch assembly writes (and an SpMV gathers) stays in cache.
/// DOLFINx and MFEM reorder meshes the same way.
pub fn reorder_for_locality(mesh: &Mesh) -> Result<Mesh> {
    Ok(reorder_for_locality_timed(mesh)?.0)
}

/// [`reorder_for_locality`] with the seconds of its steps (Hilbert keys, sort, renumbering).
pub fn reorder_for_locality_timed(mesh: &Mesh) -> Result<(Mesh, [(&'static str, f64); 3])> {
    let (order, [keys, sort]) = hilbert_cell_order_timed(mesh);
    let t = std::time::Instant::now();
    let nv = mesh.num_vertices();
    let npc = mesh.cell_type.num_vertices();
    // First appearance in parallel: a vertex's new number is the rank of the first position
    // (cell in the new order, local vertex) where it occurs, so the minimum position per vertex,
    // sorted, gives the serial first-appearance numbering exactly.
    let first: Vec<AtomicU64> = (0..nv).into_par_iter().map(|_| AtomicU64::new(u64::MAX)).collect();
    order.par_iter().enumerate().for_each(|(k, &c)| {
        for (i, &v) in mesh.cell(c as usize).iter().enumerate() {
            first[v].fetch_min((k * npc + i) as u64, Ordering::Relaxed);
        }
    });
    let seen: Vec<(u64, usize)> = first.par_iter().enumerate().map(|(v, f)| (f.load(Ordering::Relaxed), v)).collect();
    drop(first);
    // Vertices of no cell keep u64::MAX and their old order (v breaks the tie) and go last.
    // Keys capped at the number of positions (vertices of no cell hold u64::MAX), so the buckets
    // split the used range.
    let positions = (order.len() * npc) as u64;
    let seen = super::sort::par_sort_by_key_bits(seen, |p| p.0.min(positions));
    let old_of: Vec<usize> = seen.into_par_iter().map(|(_, v)| v).collect();
    let mut new_id = vec![0usize; nv];
    let ip = SharedMut(new_id.as_mut_ptr());
    old_of.par_iter().enumerate().for_each(|(k, &v)| {
        let ip = ip;
        // SAFETY: old_of is a permutation, so each v is written once.
        unsafe { *ip.0.add(v) = k };
    });
    // Filled in place by cell (an unindexed flat_map collect would gather per-thread pieces and
    // concatenate them on one thread: most of this step at 6·10^7 cells).
    let mut cells = vec![0usize; mesh.cells.len()];
    cells.par_chunks_mut(npc.max(1)).zip(order.par_iter()).for_each(|(out, &c)| {
        for (o, &v) in out.iter_mut().zip(mesh.cell(c as usize)) {
            *o = new_id[v];
        }
    });
    let tags = order.par_iter().map(|&c| mesh.cell_tags[c as usize]).collect();
    let boundary = mesh
        .boundary
        .par_iter()
        .map(|f| BoundaryFacet { vertices: f.vertices.iter().map(|&v| new_id[v]).collect(), tag: f.tag })
        .collect();
    let coords = old_of.par_iter().map(|&v| mesh.coords[v]).collect();
    // A renumbering of a valid mesh is valid: no second validation pass.
    let m = Mesh { dim: mesh.dim, coords, cell_type: mesh.cell_type, cells, cell_tags: tags, boundary, tag_names: mesh.tag_names.clone() };
    Ok((m, [keys, sort, ("renumber", t.elapsed().as_secs_f64())]))
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

    /// The parallel renumbering is the serial first-appearance numbering exactly (a vertex of no
    /// cell included, which goes last).
    #[test]
    fn parallel_renumbering_is_first_appearance() {
        let mut mesh = generate::box_mesh(9, 7, 5, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap();
        mesh.coords.push([0.5, 0.5, 2.0]);
        let order = hilbert_cell_order(&mesh);
        let mut old_of = Vec::new();
        let mut seen = vec![false; mesh.num_vertices()];
        for &c in &order {
            for &v in mesh.cell(c as usize) {
                if !seen[v] {
                    seen[v] = true;
                    old_of.push(v);
                }
            }
        }
        old_of.extend((0..mesh.num_vertices()).filter(|&v| !seen[v]));
        let r = reorder_for_locality(&mesh).unwrap();
        let expected: Vec<[f64; 3]> = old_of.iter().map(|&v| mesh.coords[v]).collect();
        assert!(r.coords == expected, "vertex order differs from first appearance");
        assert_eq!(r.coords.last(), Some(&[0.5, 0.5, 2.0]));
    }

    /// Renumbering keeps the mesh (the same cells, coordinates, region and boundary tags) and makes
    /// runs of consecutive cells touch short runs of vertex ids.
    #[test]
    fn reordered_meshes_are_the_same_mesh_with_local_numbers() {
        let mut mesh = generate::box_mesh(12, 12, 12, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap();
        mesh.cell_tags = (0..mesh.num_cells()).map(|c| (c % 5) as i32).collect();
        let r = reorder_for_locality(&mesh).unwrap();
        assert_eq!((r.num_cells(), r.num_vertices(), r.boundary.len()), (mesh.num_cells(), mesh.num_vertices(), mesh.boundary.len()));
        // Cells as sorted vertex coordinates with their tag; facets likewise.
        let key = |m: &Mesh, vs: &[usize]| {
            let mut k: Vec<[u64; 3]> = vs.iter().map(|&v| m.coords[v].map(f64::to_bits)).collect();
            k.sort_unstable();
            k
        };
        let cells = |m: &Mesh| {
            let mut k: Vec<_> = (0..m.num_cells()).map(|c| (key(m, m.cell(c)), m.cell_tags[c])).collect();
            k.sort_unstable();
            k
        };
        let facets = |m: &Mesh| {
            let mut k: Vec<_> = m.boundary.iter().map(|f| (key(m, &f.vertices), f.tag)).collect();
            k.sort_unstable();
            k
        };
        assert!(cells(&r) == cells(&mesh), "the cells or their tags changed");
        assert!(facets(&r) == facets(&mesh), "the boundary facets or their tags changed");
        // Blocks of 8 consecutive vertex ids that a run of 48 cells along the Hilbert curve (8
        // hexahedra's worth, a GPU patch) touches, on average: what reading or writing those
        // vertices' rows pulls into cache. The reordered mesh is in Hilbert order already.
        let blocks = |m: &Mesh, order: &[u32]| {
            let runs = order.len() / 48;
            (0..runs)
                .map(|k| {
                    let mut b: Vec<usize> = order[48 * k..48 * (k + 1)].iter().flat_map(|&c| m.cell(c as usize).iter().map(|&v| v / 8).collect::<Vec<_>>()).collect();
                    b.sort_unstable();
                    b.dedup();
                    b.len()
                })
                .sum::<usize>() as f64
                / runs as f64
        };
        let identity: Vec<u32> = (0..r.num_cells() as u32).collect();
        let (before, after) = (blocks(&mesh, &hilbert_cell_order(&mesh)), blocks(&r, &identity));
        eprintln!("vertex blocks per 48-cell run: {before} before, {after} after");
        assert!(after < 0.75 * before, "vertex blocks per 48-cell run: {before} before, {after} after");
    }
}
