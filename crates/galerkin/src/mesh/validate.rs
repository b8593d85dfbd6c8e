//! Mesh validation, run by [`Mesh::new`] so every mesh in the pipeline is usable: later stages
//! (Jacobians, dof maps, boundary conditions) then never need to re-check and can index freely.
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use super::{CellType, Mesh};
use crate::{Error, Result};
use rayon::prelude::*;

/// `|det J| <= DEGENERATE_RTOL · h^dim` (h = the cell's bounding-box diagonal) marks a cell as
/// degenerate: it has no volume at the scale of its own size, so its Jacobian cannot be inverted.
pub const DEGENERATE_RTOL: f64 = 1e-12;

/// How errors name cells and vertices: by index for generated meshes, by the file's own element
/// and node tags (with the line) for meshes read from a file.
pub trait Names: Sync {
    /// Error location of cell `c` ("cell 12"; "part.msh, line 40, $Elements, element 2164").
    fn cell(&self, c: usize) -> String;
    /// Vertex `v` in a message ("node 7"; a file's node tag).
    fn node(&self, v: usize) -> String;
    /// Error location of vertex `v`.
    fn node_location(&self, v: usize) -> String {
        self.node(v)
    }
    /// Error location of anything else ("mesh", "boundary facet 3").
    fn other(&self, what: &str) -> String {
        what.to_string()
    }
}

/// Cells and vertices by their 0-based index in the mesh.
pub struct Indices;

impl Names for Indices {
    fn cell(&self, c: usize) -> String {
        format!("cell {c}")
    }
    fn node(&self, v: usize) -> String {
        format!("node {v}")
    }
}

/// Check coordinates, connectivity, orientation, vertex usage and boundary facets; the first problem
/// found is returned naming the node, cell or facet at fault.
pub fn validate(mesh: &Mesh) -> Result<()> {
    validate_named(mesh, &Indices)
}

/// [`validate`] with errors naming cells and vertices through `names`.
pub fn validate_named(mesh: &Mesh, names: &dyn Names) -> Result<()> {
    let nverts = mesh.num_vertices();
    if mesh.num_cells() == 0 || nverts == 0 {
        return Err(Error::mesh(
            names.other("mesh"),
            format!(
                "empty mesh: {} cells, {} vertices",
                mesh.num_cells(),
                nverts
            ),
        ));
    }
    check_coordinates(mesh, names)?;
    check_connectivity(mesh, names)?;
    check_jacobians(mesh, names)?;
    check_boundary(mesh, names)
}

/// Finite coordinates, and zero components beyond the mesh dimension (a 2D mesh lives in z = 0).
fn check_coordinates(mesh: &Mesh, names: &dyn Names) -> Result<()> {
    let dim = mesh.dim;
    let bad = mesh.coords.par_iter().enumerate().find_map_first(|(v, p)| {
        if p.iter().any(|x| !x.is_finite()) {
            return Some(Error::mesh(
                names.node_location(v),
                format!("non-finite coordinate {p:?}"),
            ));
        }
        (dim..3).find(|&k| p[k] != 0.0).map(|k| {
            Error::mesh(
                names.node_location(v),
                format!(
                    "coordinate {} = {} is non-zero in a {dim}D mesh (coordinates {p:?})",
                    ["x", "y", "z"][k],
                    p[k]
                ),
            )
        })
    });
    bad.map_or(Ok(()), Err)
}

/// Vertex ids in range, distinct within each cell, and every vertex used by some cell.
fn check_connectivity(mesh: &Mesh, names: &dyn Names) -> Result<()> {
    let nverts = mesh.num_vertices();
    let nv = mesh.cell_type.num_vertices();
    let bad = mesh
        .cells
        .par_chunks_exact(nv)
        .enumerate()
        .find_map_first(|(c, cell)| {
            for (a, &v) in cell.iter().enumerate() {
                if v >= nverts {
                    return Some(Error::mesh(
                        names.cell(c),
                        format!("vertex id {v} out of range (mesh has {nverts} vertices)"),
                    ));
                }
                if cell[..a].contains(&v) {
                    let list: Vec<String> = cell.iter().map(|&w| names.node(w)).collect();
                    return Some(Error::mesh(
                        names.cell(c),
                        format!("{} repeated in [{}]", names.node(v), list.join(", ")),
                    ));
                }
            }
            None
        });
    if let Some(e) = bad {
        return Err(e);
    }
    // In parallel: 10^8 incidences at 10^7 unknowns (every id is in range, checked above).
    let used: Vec<AtomicBool> = (0..nverts).into_par_iter().map(|_| AtomicBool::new(false)).collect();
    mesh.cells.par_iter().for_each(|&v| used[v].store(true, Relaxed));
    match used.par_iter().position_first(|u| !u.load(Relaxed)) {
        Some(v) => Err(Error::mesh(
            names.node_location(v),
            format!("dangling {}: it is a vertex of no cell", names.node(v)),
        )),
        None => Ok(()),
    }
}

/// det J > 0 everywhere in every cell. Simplices have constant J; for quadrilaterals and hexahedra
/// det J is checked at every vertex, which for multilinear maps catches folded (non-convex) cells.
fn check_jacobians(mesh: &Mesh, names: &dyn Names) -> Result<()> {
    let ct = mesh.cell_type;
    let corners = corner_frames(ct);
    let bad = (0..mesh.num_cells()).into_par_iter().find_map_first(|c| {
        let cell = mesh.cell(c);
        let scale = cell_diameter(mesh, c).powi(ct.dim() as i32);
        corners.iter().find_map(|(a, edges)| {
            let det = det_jacobian(ct, &vertex_jacobian(&mesh.coords, cell, *a, edges));
            let problem = if det.abs() <= DEGENERATE_RTOL * scale || !det.is_finite() {
                "degenerate cell"
            } else if det < 0.0 {
                "inverted cell"
            } else {
                return None;
            };
            // Built only on failure: the check runs at every vertex of every cell.
            let at = if ct.is_simplex() {
                String::new()
            } else {
                format!(" at local vertex {a}")
            };
            let what = if problem == "inverted cell" && !ct.is_simplex() {
                "tangled (folded) cell: det J changes sign inside it"
            } else {
                problem
            };
            Some(Error::mesh(
                names.cell(c),
                format!("{what}: det J = {det:e}{at} (cell size^dim = {scale:e})"),
            ))
        })
    });
    bad.map_or(Ok(()), Err)
}

/// Reverse the orientation of every cell whose Jacobian is negative at all its checked corners
/// (as meshio and scikit-fem write simplices, and as DOLFINx and MFEM accept them): swap local
/// vertices 1 and 2 of a simplex, mirror a quadrilateral or hexahedron across its ξ₀ = ξ₁ plane.
/// Degenerate cells and tangled ones (det J of both signs) are left for [`validate`] to reject.
/// Returns how many cells were reoriented.
pub fn reorient_inverted(ct: CellType, coords: &[[f64; 3]], cells: &mut [usize]) -> usize {
    let nv = ct.num_vertices();
    let perm: &[usize] = match ct {
        CellType::Interval => &[1, 0],
        CellType::Triangle => &[0, 2, 1],
        CellType::Tetrahedron => &[0, 2, 1, 3],
        CellType::Quadrilateral => &[0, 3, 2, 1],
        CellType::Hexahedron => &[0, 3, 2, 1, 4, 7, 6, 5],
    };
    let corners = corner_frames(ct);
    if cells.iter().any(|&v| v >= coords.len()) || !cells.len().is_multiple_of(nv) {
        return 0; // validation reports the connectivity
    }
    cells
        .par_chunks_mut(nv)
        .map(|cell| {
            let mut lo = [f64::INFINITY; 3];
            let mut hi = [f64::NEG_INFINITY; 3];
            for &v in cell.iter() {
                for k in 0..3 {
                    lo[k] = lo[k].min(coords[v][k]);
                    hi[k] = hi[k].max(coords[v][k]);
                }
            }
            let scale = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt().powi(ct.dim() as i32);
            let inverted = corners.iter().all(|(a, edges)| {
                let det = det_jacobian(ct, &vertex_jacobian(coords, cell, *a, edges));
                det.is_finite() && det < -DEGENERATE_RTOL * scale
            });
            if inverted {
                let old: Vec<usize> = cell.to_vec();
                for (slot, &p) in cell.iter_mut().zip(perm) {
                    *slot = old[p];
                }
            }
            inverted as usize
        })
        .sum()
}

/// Reference edges along each axis from a vertex: `(b, s)` for axis `d` means the reference vertex
/// `b` differs from `a` only in coordinate `d`, by `s = ±1`.
type Frame = (usize, [(usize, f64); 3]);

/// The vertices where det J is checked (vertex 0 of simplices, every vertex of tensor cells), each
/// with its reference frame. At a vertex the derivative of the linear/multilinear map along axis
/// `d` is exactly the edge difference, so J costs a few subtractions instead of a basis evaluation.
fn corner_frames(ct: CellType) -> Vec<Frame> {
    let rv = ct.reference_vertices();
    let points = if ct.is_simplex() { 1 } else { rv.len() };
    (0..points)
        .map(|a| {
            let mut frame = [(a, 0.0); 3];
            for (d, slot) in frame.iter_mut().enumerate().take(ct.dim()) {
                let other =
                    (0..rv.len()).find(|&b| (0..3).all(|k| (k == d) != (rv[b][k] == rv[a][k])));
                if let Some(b) = other {
                    *slot = (b, rv[b][d] - rv[a][d]);
                }
            }
            (a, frame)
        })
        .collect()
}

/// `J[i][d] = ∂x_i/∂ξ_d` at local vertex `a` of `cell`.
fn vertex_jacobian(
    coords: &[[f64; 3]],
    cell: &[usize],
    a: usize,
    frame: &[(usize, f64); 3],
) -> [[f64; 3]; 3] {
    let xa = coords[cell[a]];
    let mut j = [[0.0; 3]; 3];
    for (d, &(b, s)) in frame.iter().enumerate() {
        let xb = coords[cell[b]];
        for i in 0..3 {
            j[i][d] = s * (xb[i] - xa[i]);
        }
    }
    j
}

/// Determinant of the leading `dim`×`dim` block of a Jacobian.
pub fn det_jacobian(cell: CellType, j: &[[f64; 3]; 3]) -> f64 {
    match cell.dim() {
        1 => j[0][0],
        2 => j[0][0] * j[1][1] - j[0][1] * j[1][0],
        _ => {
            j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1])
                - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
                + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0])
        }
    }
}

/// Length of the diagonal of the cell's bounding box: the size that det J is compared against.
fn cell_diameter(mesh: &Mesh, c: usize) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for &v in mesh.cell(c) {
        for k in 0..3 {
            lo[k] = lo[k].min(mesh.coords[v][k]);
            hi[k] = hi[k].max(mesh.coords[v][k]);
        }
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt()
}

/// Boundary facets have the vertex count of the cell's facets and in-range vertex ids.
fn check_boundary(mesh: &Mesh, names: &dyn Names) -> Result<()> {
    let want = mesh
        .cell_type
        .facet_type()
        .map_or(1, CellType::num_vertices);
    for (i, f) in mesh.boundary.iter().enumerate() {
        if f.vertices.len() != want {
            return Err(Error::mesh(
                names.other(&format!("boundary facet {i}")),
                format!(
                    "{} vertices {:?}, but facets of {}s have {want}",
                    f.vertices.len(),
                    f.vertices,
                    mesh.cell_type
                ),
            ));
        }
        if let Some(&v) = f.vertices.iter().find(|&&v| v >= mesh.num_vertices()) {
            return Err(Error::mesh(
                names.other(&format!("boundary facet {i}")),
                format!(
                    "vertex id {v} out of range (mesh has {} vertices)",
                    mesh.num_vertices()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::BoundaryFacet;
    use std::collections::BTreeMap;

    fn unit_square(coords: Vec<[f64; 3]>, cells: Vec<usize>) -> Result<Mesh> {
        Mesh::new(
            CellType::Triangle,
            coords,
            cells,
            None,
            vec![],
            BTreeMap::new(),
        )
    }

    fn square_coords() -> Vec<[f64; 3]> {
        vec![[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]]
    }

    fn err(r: Result<Mesh>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_valid_mesh() {
        assert!(unit_square(square_coords(), vec![0, 1, 2, 0, 2, 3]).is_ok());
    }

    #[test]
    fn rejects_each_defect_naming_it() {
        let mut nan = square_coords();
        nan[2][1] = f64::NAN;
        assert!(err(unit_square(nan, vec![0, 1, 2, 0, 2, 3])).contains("node 2"));
        let mut lifted = square_coords();
        lifted[3][2] = 0.5;
        let e = err(unit_square(lifted, vec![0, 1, 2, 0, 2, 3]));
        assert!(e.contains("node 3") && e.contains("z = 0.5"), "{e}");
        let e = err(unit_square(square_coords(), vec![0, 1, 2, 0, 2, 7]));
        assert!(e.contains("cell 1") && e.contains("out of range"), "{e}");
        let e = err(unit_square(square_coords(), vec![0, 1, 2, 0, 2, 2]));
        assert!(e.contains("cell 1") && e.contains("repeated"), "{e}");
        let e = err(unit_square(square_coords(), vec![0, 1, 2, 0, 3, 2]));
        assert!(
            e.contains("cell 1") && e.contains("inverted") && e.contains("det J = -1e0"),
            "{e}"
        );
        let e = err(unit_square(square_coords(), vec![0, 1, 2]));
        assert!(e.contains("dangling node 3"), "{e}");
        let e = err(unit_square(vec![], vec![]));
        assert!(e.contains("empty mesh"), "{e}");
        let mut flat = square_coords();
        flat[3] = [2., 2., 0.];
        let e = err(unit_square(flat, vec![0, 1, 2, 0, 2, 3]));
        assert!(e.contains("cell 1") && e.contains("degenerate"), "{e}");
    }

    #[test]
    fn vertex_jacobians_match_the_geometric_map() {
        // A distorted cell of each shape: J from edge differences equals J from the basis gradients.
        for ct in [
            CellType::Interval,
            CellType::Triangle,
            CellType::Quadrilateral,
            CellType::Tetrahedron,
            CellType::Hexahedron,
        ] {
            let d = ct.dim();
            let coords: Vec<[f64; 3]> = ct
                .reference_vertices()
                .iter()
                .enumerate()
                .map(|(v, r)| {
                    let mut p = [0.0; 3];
                    for k in 0..d {
                        p[k] = 2.0 * r[k] + 0.1 * ((v * 7 + k * 3) % 5) as f64;
                    }
                    p
                })
                .collect();
            let cells: Vec<usize> = (0..coords.len()).collect();
            let m = Mesh::new(ct, coords, cells, None, vec![], BTreeMap::new()).unwrap();
            let frames = corner_frames(ct);
            assert_eq!(
                frames.len(),
                if ct.is_simplex() {
                    1
                } else {
                    ct.num_vertices()
                }
            );
            for (a, frame) in &frames {
                let fast = vertex_jacobian(&m.coords, m.cell(0), *a, frame);
                let slow = m.map_point(0, ct.reference_vertices()[*a]).1;
                for i in 0..d {
                    for k in 0..d {
                        assert!((fast[i][k] - slow[i][k]).abs() < 1e-14, "{ct} vertex {a}");
                    }
                }
            }
        }
    }

    #[test]
    fn inverted_cells_are_reoriented_and_tangled_ones_kept() {
        for ct in [CellType::Interval, CellType::Triangle, CellType::Quadrilateral, CellType::Tetrahedron, CellType::Hexahedron] {
            let coords: Vec<[f64; 3]> = ct.reference_vertices().iter().map(|r| [2.0 * r[0], 3.0 * r[1], 0.5 * r[2]]).collect();
            let good: Vec<usize> = (0..coords.len()).collect();
            let mut cells = good.clone();
            assert_eq!(reorient_inverted(ct, &coords, &mut cells), 0);
            // Mirror image: the same cell listed the other way round.
            let perm = match ct {
                CellType::Interval => vec![1, 0],
                CellType::Triangle => vec![0, 2, 1],
                CellType::Tetrahedron => vec![0, 2, 1, 3],
                CellType::Quadrilateral => vec![0, 3, 2, 1],
                CellType::Hexahedron => vec![0, 3, 2, 1, 4, 7, 6, 5],
            };
            let mut cells: Vec<usize> = perm.clone();
            assert!(Mesh::new(ct, coords.clone(), cells.clone(), None, vec![], BTreeMap::new()).is_err(), "{ct}");
            assert_eq!(reorient_inverted(ct, &coords, &mut cells), 1, "{ct}");
            assert!(Mesh::new(ct, coords.clone(), cells, None, vec![], BTreeMap::new()).is_ok(), "{ct}");
        }
        // A folded quad (det J of both signs) stays as it is and is rejected.
        let coords = vec![[0., 0., 0.], [1., 0., 0.], [0.2, 0.2, 0.], [0., 1., 0.]];
        let mut cells = vec![0, 1, 2, 3];
        assert_eq!(reorient_inverted(CellType::Quadrilateral, &coords, &mut cells), 0);
        let e = err(Mesh::new(CellType::Quadrilateral, coords, cells, None, vec![], BTreeMap::new()));
        assert!(e.contains("tangled"), "{e}");
    }

    #[test]
    fn folded_quad_is_caught_at_its_vertex() {
        // Vertex 2 pulled inside: the bilinear map folds near local vertex 2 only, which a check
        // at the cell centre would miss (there det J = 0.2 > 0).
        let coords = vec![[0., 0., 0.], [1., 0., 0.], [0.2, 0.2, 0.], [0., 1., 0.]];
        let m = Mesh::new(
            CellType::Quadrilateral,
            coords,
            vec![0, 1, 2, 3],
            None,
            vec![],
            BTreeMap::new(),
        );
        let e = err(m);
        assert!(
            e.contains("cell 0") && e.contains("tangled") && e.contains("local vertex 2"),
            "{e}"
        );
    }

    #[test]
    fn rejects_bad_boundary_facets() {
        let cells = vec![0, 1, 2, 0, 2, 3];
        let f = |vertices: Vec<usize>| vec![BoundaryFacet { vertices, tag: 1 }];
        let m = Mesh::new(
            CellType::Triangle,
            square_coords(),
            cells.clone(),
            None,
            f(vec![0]),
            BTreeMap::new(),
        );
        let e = err(m);
        assert!(
            e.contains("boundary facet 0") && e.contains("1 vertices"),
            "{e}"
        );
        let m = Mesh::new(
            CellType::Triangle,
            square_coords(),
            cells,
            None,
            f(vec![0, 9]),
            BTreeMap::new(),
        );
        assert!(err(m).contains("vertex id 9 out of range"));
    }
}
