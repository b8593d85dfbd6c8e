//! Structured mesh generators: intervals, rectangles and boxes, tagged so problem files can name
//! their sides.
//!
//! All generators share one tensor-product lattice: vertex `(i, j, k)` has id
//! `i + (nx+1)·(j + (ny+1)·k)`, and each lattice block is cut into cells by a fixed template of its
//! corners, so neighbouring blocks agree on shared facets. Tags: every cell has region tag 1
//! (`"domain"`); boundary facets carry `xmin=1, xmax=2, ymin=3, ymax=4, zmin=5, zmax=6` (only the
//! axes of the mesh dimension), each boundary facet listed once.
use super::{BoundaryFacet, CellType, Mesh};
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Uniform mesh of `[a, b]` with `n` cells.
pub fn interval(n: usize, a: f64, b: f64) -> Result<Mesh> {
    check_divisions(&[("n", n)])?;
    lattice_sizes(&[n], 1)?;
    check_extent("[a, b]", a, b)?;
    structured(&[uniform_nodes(n, a, b)], CellType::Interval)
}

/// Mesh of `[a, b]` with `n` cells whose widths grow geometrically: each cell is `ratio` times the
/// previous one (`ratio < 1` refines towards `b`), to resolve boundary layers.
pub fn interval_graded(n: usize, a: f64, b: f64, ratio: f64) -> Result<Mesh> {
    check_divisions(&[("n", n)])?;
    lattice_sizes(&[n], 1)?;
    check_extent("[a, b]", a, b)?;
    if !(ratio > 0.0 && ratio.is_finite()) {
        return Err(Error::invalid(format!(
            "grading ratio must be positive and finite, got {ratio}"
        )));
    }
    // Widths relative to the widest cell (ratio^(i - i_widest) <= 1) cannot overflow for large n;
    // widths that underflow to zero are reported by validation as degenerate cells.
    let widest = if ratio > 1.0 { n - 1 } else { 0 };
    let widths: Vec<f64> = (0..n)
        .map(|i| ((i as f64 - widest as f64) * ratio.ln()).exp())
        .collect();
    let total: f64 = widths.iter().sum();
    let mut nodes = Vec::with_capacity(n + 1);
    let mut acc = 0.0;
    nodes.push(a);
    for w in &widths[..n - 1] {
        acc += w;
        nodes.push(lerp(a, b, acc / total));
    }
    nodes.push(b);
    structured(&[nodes], CellType::Interval)
}

/// Uniform mesh of the rectangle `[lo, hi]` with `nx × ny` squares, each a
/// [`CellType::Quadrilateral`] or split into two counter-clockwise [`CellType::Triangle`]s along
/// its (lo, lo)–(hi, hi) diagonal. The mesh is 2D: z = 0.
pub fn rectangle(nx: usize, ny: usize, lo: [f64; 2], hi: [f64; 2], cell: CellType) -> Result<Mesh> {
    check_divisions(&[("nx", nx), ("ny", ny)])?;
    lattice_sizes(&[nx, ny], 2)?;
    check_extent("x range [lo[0], hi[0]]", lo[0], hi[0])?;
    check_extent("y range [lo[1], hi[1]]", lo[1], hi[1])?;
    structured(
        &[
            uniform_nodes(nx, lo[0], hi[0]),
            uniform_nodes(ny, lo[1], hi[1]),
        ],
        cell,
    )
}

/// Uniform mesh of the box `[lo, hi]` with `nx × ny × nz` cubes, each a
/// [`CellType::Hexahedron`] or six [`CellType::Tetrahedron`]s (Kuhn/Freudenthal split around the
/// lo–hi main diagonal, so faces conform between neighbouring cubes).
pub fn box_mesh(
    nx: usize,
    ny: usize,
    nz: usize,
    lo: [f64; 3],
    hi: [f64; 3],
    cell: CellType,
) -> Result<Mesh> {
    check_divisions(&[("nx", nx), ("ny", ny), ("nz", nz)])?;
    lattice_sizes(&[nx, ny, nz], 6)?;
    check_extent("x range [lo[0], hi[0]]", lo[0], hi[0])?;
    check_extent("y range [lo[1], hi[1]]", lo[1], hi[1])?;
    check_extent("z range [lo[2], hi[2]]", lo[2], hi[2])?;
    let axes = [
        uniform_nodes(nx, lo[0], hi[0]),
        uniform_nodes(ny, lo[1], hi[1]),
        uniform_nodes(nz, lo[2], hi[2]),
    ];
    structured(&axes, cell)
}

const SIDE_NAMES: [&str; 6] = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];

fn check_divisions(counts: &[(&str, usize)]) -> Result<()> {
    match counts.iter().find(|(_, n)| *n == 0) {
        Some((name, _)) => Err(Error::invalid(format!(
            "number of divisions `{name}` must be positive, got 0"
        ))),
        None => Ok(()),
    }
}

fn check_extent(what: &str, lo: f64, hi: f64) -> Result<()> {
    if lo.is_finite() && hi.is_finite() && lo < hi {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{what} = [{lo}, {hi}] is empty, inverted or not finite"
        )))
    }
}

/// `lo + t (hi - lo)` written so that t = 0 and t = 1 give `lo` and `hi` exactly.
fn lerp(lo: f64, hi: f64, t: f64) -> f64 {
    (1.0 - t) * lo + t * hi
}

fn uniform_nodes(n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..=n).map(|i| lerp(lo, hi, i as f64 / n as f64)).collect()
}

/// Vertices and cells of a lattice of `n` blocks per axis with `per_block` cells each, computed with
/// checked arithmetic: sizes from a problem file can be anything, and a product that overflows (or
/// a mesh too large to index) is an error, never a wrapped count or a capacity panic.
fn lattice_sizes(n: &[usize], per_block: usize) -> Result<(usize, usize)> {
    let too_big = || Error::OutOfMemory(format!("a structured mesh of {n:?} divisions has more vertices or cells than this machine can index"));
    let vertices = n.iter().try_fold(1usize, |acc, &k| k.checked_add(1).and_then(|k1| acc.checked_mul(k1))).ok_or_else(too_big)?;
    let cells = n.iter().try_fold(per_block, |acc, &k| acc.checked_mul(k)).ok_or_else(too_big)?;
    // Every vertex and connectivity entry is at least 24 bytes and 8 bytes: beyond isize::MAX
    // bytes no allocation can hold them.
    let limit = isize::MAX as usize / 32;
    if vertices > limit || cells > limit / 8 {
        return Err(too_big());
    }
    Ok((vertices, cells))
}

/// Cells of one lattice block as lists of block corners; corner `c` sits at offset
/// `(c & 1, (c >> 1) & 1, (c >> 2) & 1)`.
pub(crate) fn block_template(cell: CellType, dim: usize) -> Result<Vec<Vec<usize>>> {
    let t = match (cell, dim) {
        (CellType::Interval, 1) => vec![vec![0, 1]],
        (CellType::Quadrilateral, 2) => vec![vec![0, 1, 3, 2]],
        (CellType::Triangle, 2) => vec![vec![0, 1, 3], vec![0, 3, 2]],
        (CellType::Hexahedron, 3) => vec![vec![0, 1, 3, 2, 4, 5, 7, 6]],
        (CellType::Tetrahedron, 3) => kuhn_tetrahedra(),
        _ => {
            return Err(Error::Unsupported(format!(
                "a structured {dim}D mesh cannot be made of {cell} cells"
            )))
        }
    };
    Ok(t)
}

/// The six Kuhn tetrahedra of the unit cube: one per axis order (p, q, r), walking 0 → e_p →
/// e_p + e_q → 7. Odd permutations get two vertices swapped so that every tet is positively
/// oriented with respect to the reference tetrahedron.
fn kuhn_tetrahedra() -> Vec<Vec<usize>> {
    const ORDERS: [([usize; 3], bool); 6] = [
        ([0, 1, 2], false),
        ([1, 2, 0], false),
        ([2, 0, 1], false),
        ([0, 2, 1], true),
        ([1, 0, 2], true),
        ([2, 1, 0], true),
    ];
    ORDERS
        .iter()
        .map(|&([p, q, _], odd)| {
            let a = 1 << p;
            let b = a | (1 << q);
            if odd {
                vec![0, b, a, 7]
            } else {
                vec![0, a, b, 7]
            }
        })
        .collect()
}

/// Build the tensor-product mesh whose vertex coordinates along axis `d` are `axes[d]`.
fn structured(axes: &[Vec<f64>], cell: CellType) -> Result<Mesh> {
    let dim = axes.len();
    let template = block_template(cell, dim)?;
    // Cells and nodes per axis; absent axes have one cell layer of one node so products stay valid.
    let mut n = [1usize; 3];
    let mut np = [1usize; 3];
    let mut stride = [0usize; 3];
    let mut s = 1;
    for d in 0..3 {
        stride[d] = s;
        if d < dim {
            np[d] = axes[d].len();
            n[d] = np[d] - 1;
        }
        s *= np[d];
    }
    let nblocks = n[0] * n[1] * n[2];

    let axis = |d: usize, i: usize| if d < dim { axes[d][i] } else { 0.0 };
    let coords: Vec<[f64; 3]> = (0..s).into_par_iter().map(|v| [axis(0, v % np[0]), axis(1, (v / np[0]) % np[1]), axis(2, v / (np[0] * np[1]))]).collect();

    let corner_offsets: Vec<usize> = (0..1 << dim)
        .map(|c| (0..dim).map(|d| ((c >> d) & 1) * stride[d]).sum())
        .collect();
    let nv = cell.num_vertices();
    // Cells block by block in parallel; then the boundary facets of the boundary blocks, in order.
    let per_block = template.len() * nv;
    let base_of = |i: usize, j: usize, k: usize| i * stride[0] + j * stride[1] + k * stride[2];
    let mut cells = vec![0usize; nblocks * per_block];
    cells.par_chunks_mut(per_block.max(1)).enumerate().for_each(|(b, out)| {
        let base = base_of(b % n[0], (b / n[0]) % n[1], b / (n[0] * n[1]));
        for (t, verts) in template.iter().zip(out.chunks_mut(nv)) {
            for (o, &c) in verts.iter_mut().zip(t) {
                *o = base + corner_offsets[c];
            }
        }
    });
    let boundary = lattice_boundary(&n, &stride, dim, &template, cell);
    let tag_names = lattice_tag_names(dim);
    let ncells = cells.len() / nv;
    Mesh::new(
        cell,
        coords,
        cells,
        Some(vec![1; ncells]),
        boundary,
        tag_names,
    )
}

/// The boundary facets of a lattice of `n` blocks cut by `template`, in the lattice's numbering
/// (vertex `(i, j, k)` at `i·stride[0] + j·stride[1] + k·stride[2]`): the boundary blocks in
/// lattice order, each cell's facets on a side of the box (all its vertices on it; the first side
/// in the order xmin, xmax, ymin, … wins, so no facet is listed twice) with that side's tag.
pub(crate) fn lattice_boundary(n: &[usize; 3], stride: &[usize; 3], dim: usize, template: &[Vec<usize>], cell: CellType) -> Vec<BoundaryFacet> {
    lattice_boundary_mapped(n, stride, dim, template, cell, |v| v)
}

/// [`lattice_boundary`] with each vertex replaced by `map(vertex)` (a renumbering), built in
/// parallel over the rows of blocks, in the same order; a row inside the box visits only its two
/// end blocks (at 215³ the serial scan of every block was half a second).
pub(crate) fn lattice_boundary_mapped(
    n: &[usize; 3],
    stride: &[usize; 3],
    dim: usize,
    template: &[Vec<usize>],
    cell: CellType,
    map: impl Fn(usize) -> usize + Sync,
) -> Vec<BoundaryFacet> {
    let corner_offsets: Vec<usize> = (0..1 << dim).map(|c| (0..dim).map(|d| ((c >> d) & 1) * stride[d]).sum()).collect();
    let facets = cell.facets();
    let base_of = |i: usize, j: usize, k: usize| i * stride[0] + j * stride[1] + k * stride[2];
    let on_side = |x: usize, d: usize| x == 0 || x + 1 == n[d];
    // Per template cell and facet: its corners and the AND and OR of their corner bits. A facet
    // of block b lies on side "low d" when b[d] = 0 and every corner has bit d clear, on "high d"
    // when b[d] = n[d] - 1 and every corner has it set (the lattice index of a corner along d is
    // b[d] + its bit): the vertex-index test without a division per vertex.
    let shapes: Vec<Vec<(Vec<usize>, usize, usize)>> = template
        .iter()
        .map(|t| {
            facets
                .iter()
                .map(|f| {
                    let cs: Vec<usize> = f.iter().map(|&l| t[l]).collect();
                    let (and, or) = cs.iter().fold((usize::MAX, 0), |(a, o), &c| (a & c, o | c));
                    (cs, and, or)
                })
                .collect()
        })
        .collect();
    let side = |b: [usize; 3], and: usize, or: usize| {
        (0..dim).find_map(|d| {
            if b[d] == 0 && (or >> d) & 1 == 0 {
                Some(2 * d as i32 + 1)
            } else if b[d] + 1 == n[d] && (and >> d) & 1 == 1 {
                Some(2 * d as i32 + 2)
            } else {
                None
            }
        })
    };
    let row = |r: usize| {
        let (j, k) = (r % n[1], r / n[1]);
        let outer = (1..dim).any(|d| on_side([0, j, k][d], d));
        // Interior rows: their first and last block only (one block where n[0] = 1).
        let is: Vec<usize> = if outer { (0..n[0]).collect() } else if n[0] > 1 { vec![0, n[0] - 1] } else { vec![0] };
        let mut out = Vec::new();
        for i in is {
            let base = base_of(i, j, k);
            for cell_facets in &shapes {
                for (cs, and, or) in cell_facets {
                    if let Some(tag) = side([i, j, k], *and, *or) {
                        out.push(BoundaryFacet { vertices: cs.iter().map(|&c| map(base + corner_offsets[c])).collect(), tag });
                    }
                }
            }
        }
        out
    };
    let rows: Vec<Vec<BoundaryFacet>> = (0..n[1] * n[2]).into_par_iter().map(row).collect();
    rows.into_iter().flatten().collect()
}

/// The names of a lattice mesh's tags: its cells' region and the sides of the box.
pub(crate) fn lattice_tag_names(dim: usize) -> BTreeMap<String, (usize, i32)> {
    let mut tag_names = BTreeMap::from([("domain".to_string(), (dim, 1))]);
    for (t, name) in SIDE_NAMES.iter().enumerate().take(2 * dim) {
        tag_names.insert(name.to_string(), (dim - 1, t as i32 + 1));
    }
    tag_names
}

/// The same hexahedral mesh with each cell's vertex list turned by one of the 24 rotations of the
/// cube (chosen per cell from `seed`): neighbours then see their shared edges and faces in
/// different local orientations, which is what tests of hierarchical (signed) bases need.
pub fn rotate_hexahedra(mesh: &Mesh, seed: u64) -> Result<Mesh> {
    if mesh.cell_type != CellType::Hexahedron {
        return Err(Error::invalid("rotate_hexahedra needs a hexahedral mesh"));
    }
    let rv = CellType::Hexahedron.reference_vertices();
    // Every signed permutation matrix of determinant +1, as vertex permutations.
    let mut rotations = Vec::new();
    for perm in [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]] {
        let even = matches!(perm, [0, 1, 2] | [1, 2, 0] | [2, 0, 1]);
        for flips in 0..8u32 {
            let odd_flips = flips.count_ones() % 2 == 1;
            if even == odd_flips {
                continue;
            }
            let map: Vec<usize> = (0..8)
                .map(|k| {
                    let mut p = [0.0; 3];
                    for a in 0..3 {
                        let x = rv[k][perm[a]];
                        p[a] = if flips >> a & 1 == 1 { 1.0 - x } else { x };
                    }
                    rv.iter().position(|r| *r == p).unwrap_or(k)
                })
                .collect();
            rotations.push(map);
        }
    }
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut cells = Vec::with_capacity(mesh.cells.len());
    for c in 0..mesh.num_cells() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = &rotations[(state >> 33) as usize % rotations.len()];
        let cv = mesh.cell(c);
        cells.extend(r.iter().map(|&k| cv[k]));
    }
    Mesh::new(CellType::Hexahedron, mesh.coords.clone(), cells, Some(mesh.cell_tags.clone()), mesh.boundary.clone(), mesh.tag_names.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::validate::det_jacobian;
    use std::collections::HashMap;

    #[test]
    fn absurd_sizes_are_errors_not_panics() {
        let e = box_mesh(usize::MAX, 1, 1, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap_err().to_string();
        assert!(e.contains("out of memory") && e.contains("can index"), "{e}");
        assert!(box_mesh(1 << 40, 1 << 40, 1 << 40, [0.0; 3], [1.0; 3], CellType::Hexahedron).is_err());
        assert!(rectangle(9223372036854775807, 1, [0.0; 2], [1.0; 2], CellType::Triangle).is_err());
        assert!(interval(usize::MAX, 0.0, 1.0).is_err());
        assert!(interval_graded(usize::MAX - 1, 0.0, 1.0, 0.9).is_err());
    }

    /// Sum over cells of ∫ |det J| over the reference cell (2-point Gauss per axis on tensor cells,
    /// exact for multilinear maps; one point on simplices, whose J is constant).
    fn measure(mesh: &Mesh) -> f64 {
        let ct = mesh.cell_type;
        let (pts, w): (Vec<[f64; 3]>, f64) = if ct.is_simplex() {
            let fact = (1..=ct.dim()).product::<usize>() as f64;
            (vec![[0.0; 3]], 1.0 / fact)
        } else {
            let g = [0.5 - 0.5 / 3f64.sqrt(), 0.5 + 0.5 / 3f64.sqrt()];
            let pts = (0..1 << ct.dim())
                .map(|c| {
                    let mut p = [0.0; 3];
                    for (d, pd) in p.iter_mut().enumerate().take(ct.dim()) {
                        *pd = g[(c >> d) & 1];
                    }
                    p
                })
                .collect::<Vec<_>>();
            let w = 1.0 / pts.len() as f64;
            (pts, w)
        };
        (0..mesh.num_cells())
            .map(|c| {
                pts.iter()
                    .map(|&p| w * det_jacobian(ct, &mesh.map_point(c, p).1).abs())
                    .sum::<f64>()
            })
            .sum()
    }

    fn assert_close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol * b.abs().max(1.0), "{a} != {b}");
    }

    /// Tagged boundary = geometric boundary, each facet once; and each facet sits on its side.
    fn check_boundary(mesh: &Mesh, lo: [f64; 3], hi: [f64; 3]) {
        let tagged = mesh.boundary_facet_cells().unwrap();
        let mut sorted = tagged.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            tagged.len(),
            "a boundary facet is listed twice"
        );
        assert_eq!(sorted, mesh.exterior_facets());
        for f in &mesh.boundary {
            let d = (f.tag as usize - 1) / 2;
            let side = if f.tag % 2 == 1 { lo[d] } else { hi[d] };
            assert!(
                f.vertices.iter().all(|&v| mesh.coords[v][d] == side),
                "facet {f:?}"
            );
        }
    }

    #[test]
    fn intervals_have_exact_nodes_length_and_end_tags() {
        let m = interval(10, -1.0, 3.0).unwrap();
        assert_eq!((m.num_cells(), m.num_vertices()), (10, 11));
        assert_close(measure(&m), 4.0, 1e-14);
        assert_eq!(m.coords[10][0], 3.0);
        assert_eq!(
            m.boundary,
            vec![
                BoundaryFacet {
                    vertices: vec![0],
                    tag: 1
                },
                BoundaryFacet {
                    vertices: vec![10],
                    tag: 2
                }
            ]
        );
        check_boundary(&m, [-1.0, 0., 0.], [3.0, 0., 0.]);

        let g = interval_graded(5, 0.0, 31.0, 2.0).unwrap();
        let x: Vec<f64> = g.coords.iter().map(|p| p[0]).collect();
        let expect = [0.0, 1.0, 3.0, 7.0, 15.0, 31.0];
        for (a, b) in x.iter().zip(expect) {
            assert_close(*a, b, 1e-14);
        }
        let h = interval_graded(4, 0.0, 1.0, 0.5).unwrap();
        let w: Vec<f64> = h.coords.windows(2).map(|p| p[1][0] - p[0][0]).collect();
        for k in 1..4 {
            assert_close(w[k] / w[k - 1], 0.5, 1e-12);
        }
        assert!(interval_graded(1000, 0.0, 1.0, 1.01).is_ok());
    }

    #[test]
    fn rectangles_and_boxes_measure_their_domain() {
        let (lo, hi) = ([-1.0, 0.5], [2.0, 1.75]);
        for cell in [CellType::Triangle, CellType::Quadrilateral] {
            let m = rectangle(7, 5, lo, hi, cell).unwrap();
            let per = if cell == CellType::Triangle { 2 } else { 1 };
            assert_eq!((m.num_cells(), m.num_vertices()), (35 * per, 48));
            assert_eq!(m.boundary.len(), 2 * (7 + 5));
            assert_close(measure(&m), 3.0 * 1.25, 1e-13);
            check_boundary(&m, [lo[0], lo[1], 0.], [hi[0], hi[1], 0.]);
            assert_eq!(m.tag("ymax", 1).unwrap(), 4);
            assert_eq!(m.tag("domain", 2).unwrap(), 1);
            assert!(m.cell_tags.iter().all(|&t| t == 1));
        }
        let (lo, hi) = ([0.0, -1.0, 2.0], [1.0, 1.0, 2.5]);
        for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
            let m = box_mesh(3, 4, 2, lo, hi, cell).unwrap();
            let (per, fper) = if cell == CellType::Tetrahedron {
                (6, 2)
            } else {
                (1, 1)
            };
            assert_eq!((m.num_cells(), m.num_vertices()), (24 * per, 60));
            assert_eq!(m.boundary.len(), fper * 2 * (12 + 6 + 8));
            assert_close(measure(&m), 1.0, 1e-13);
            check_boundary(&m, lo, hi);
            assert_eq!(m.tag("zmin", 2).unwrap(), 5);
        }
    }

    #[test]
    fn kuhn_split_conforms_and_is_positive() {
        let m = box_mesh(3, 3, 3, [0.; 3], [1.; 3], CellType::Tetrahedron).unwrap();
        let mut count: HashMap<Vec<usize>, usize> = HashMap::new();
        for c in 0..m.num_cells() {
            assert_close(
                det_jacobian(m.cell_type, &m.map_point(c, [0.; 3]).1),
                1.0 / 27.0,
                1e-12,
            );
            for f in m.cell_type.facets() {
                let mut k: Vec<usize> = f.iter().map(|&l| m.cell(c)[l]).collect();
                k.sort_unstable();
                *count.entry(k).or_default() += 1;
            }
        }
        // Euler-type count: 4 faces per tet = 2 × interior + 1 × boundary.
        let boundary = count.values().filter(|&&n| n == 1).count();
        assert!(count.values().all(|&n| n == 1 || n == 2));
        assert_eq!(boundary, 6 * 2 * 9);
        assert_eq!(2 * (count.len() - boundary) + boundary, 4 * m.num_cells());
    }

    #[test]
    fn rejects_bad_arguments_naming_them() {
        let msg = |r: Result<Mesh>| r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg(interval(0, 0., 1.)).contains("`n`"));
        assert!(msg(interval(3, 1., 1.)).contains("[a, b] = [1, 1]"));
        assert!(msg(interval_graded(3, 0., 1., -2.)).contains("ratio"));
        assert!(msg(rectangle(2, 0, [0.; 2], [1.; 2], CellType::Triangle)).contains("`ny`"));
        assert!(
            msg(rectangle(2, 2, [0.; 2], [1., -1.], CellType::Quadrilateral)).contains("y range")
        );
        assert!(msg(box_mesh(1, 1, 0, [0.; 3], [1.; 3], CellType::Hexahedron)).contains("`nz`"));
        assert!(msg(box_mesh(
            1,
            1,
            1,
            [0.; 3],
            [1., 1., f64::NAN],
            CellType::Hexahedron
        ))
        .contains("z range"));
        assert!(msg(rectangle(1, 1, [0.; 2], [1.; 2], CellType::Hexahedron)).contains("hexahedron"));
    }

    /// Timing check for the "10^6 cells well under a second" goal; run with
    /// `cargo test --release -p galerkin --lib generate -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn million_cells_are_fast() {
        for cell in [CellType::Hexahedron, CellType::Tetrahedron] {
            let n = if cell == CellType::Hexahedron {
                100
            } else {
                55
            };
            let t = std::time::Instant::now();
            let m = box_mesh(n, n, n, [0.; 3], [1.; 3], cell).unwrap();
            println!("{} {cell} cells in {:?}", m.num_cells(), t.elapsed());
        }
        let t = std::time::Instant::now();
        let m = rectangle(1000, 500, [0.; 2], [1.; 2], CellType::Triangle).unwrap();
        println!("{} triangles in {:?}", m.num_cells(), t.elapsed());
    }
}
