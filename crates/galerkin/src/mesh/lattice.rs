//! Recognising the uniform lattice of [`super::generate::box_mesh`] in a mesh: vertices numbered
//! x fastest on an evenly spaced grid, blocks of cells in the same order, each block the same
//! template of cells. On such a mesh every cell is a translate of one of the template's cells, so
//! an operator with coefficients constant per cell needs one element matrix per (template cell,
//! material) and no connectivity at all (`operator::level::none::grid`).
use super::generate::block_template;
use super::{CellType, Mesh};
use rayon::prelude::*;

/// A mesh recognised as a uniform lattice of `n` blocks per axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Lattice {
    /// Blocks per axis.
    pub n: [usize; 3],
    /// Cells of one block as lists of block corners; corner `c` sits at `(c & 1, (c>>1) & 1, c>>2)`.
    pub template: Vec<Vec<usize>>,
}

impl Lattice {
    /// Cells per block.
    pub fn per_block(&self) -> usize {
        self.template.len()
    }

    /// Vertices per axis.
    pub fn points(&self) -> [usize; 3] {
        self.n.map(|k| k + 1)
    }

    /// The vertex of corner `c` of the block whose corner 0 is vertex `base`.
    pub fn corner_vertex(&self, base: usize, c: usize) -> usize {
        let [px, py, _] = self.points();
        base + (c & 1) + px * (((c >> 1) & 1) + py * (c >> 2))
    }

    /// The lattice of `mesh`, or `None` when its vertices or cells are numbered otherwise (a
    /// reordered or read mesh), its spacing is not uniform, or it is not 3D tetrahedra or
    /// hexahedra. Checks every vertex and cell (O(size), once per operator).
    pub fn recognize(mesh: &Mesh) -> Option<Lattice> {
        if mesh.dim != 3 || !matches!(mesh.cell_type, CellType::Tetrahedron | CellType::Hexahedron) {
            return None;
        }
        let template = block_template(mesh.cell_type, 3).ok()?;
        let c = &mesh.coords;
        let first = *c.first()?;
        // Points per axis from where x (then y) stops increasing.
        let px = c.iter().position(|p| p[1] != first[1] || p[2] != first[2])?;
        let py = (0..c.len() / px).position(|j| c[j * px][2] != first[2])?;
        if px < 2 || py < 2 || c.len() % (px * py) != 0 {
            return None;
        }
        let pz = c.len() / (px * py);
        if pz < 2 {
            return None;
        }
        let axis = |d: usize, stride: usize, m: usize| -> Option<Vec<f64>> {
            let v: Vec<f64> = (0..m).map(|i| c[i * stride][d]).collect();
            let h = (v[m - 1] - v[0]) / (m - 1) as f64;
            let uniform = h > 0.0 && v.iter().enumerate().all(|(i, &x)| (x - (v[0] + i as f64 * h)).abs() <= 1e-10 * h * m as f64);
            uniform.then_some(v)
        };
        let (xs, ys, zs) = (axis(0, 1, px)?, axis(1, px, py)?, axis(2, px * py, pz)?);
        let ok_coords = c.par_iter().enumerate().all(|(v, p)| *p == [xs[v % px], ys[(v / px) % py], zs[v / (px * py)]]);
        let lattice = Lattice { n: [px - 1, py - 1, pz - 1], template };
        let (per, nv) = (lattice.per_block(), mesh.cell_type.num_vertices());
        let nblocks = lattice.n.iter().product::<usize>();
        if !ok_coords || mesh.num_cells() != nblocks * per {
            return None;
        }
        let [nx, ny, _] = lattice.n;
        let ok_cells = mesh.cells.par_chunks(per * nv).enumerate().all(|(b, cells)| {
            let base = b % nx + px * ((b / nx) % ny + py * (b / (nx * ny)));
            lattice.template.iter().flatten().zip(cells).all(|(&corner, &v)| lattice.corner_vertex(base, corner) == v)
        });
        ok_cells.then_some(lattice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate;

    #[test]
    fn box_meshes_are_recognised_and_reordered_ones_are_not() {
        for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
            let m = generate::box_mesh(3, 4, 2, [0.0; 3], [1.0, 2.0, 0.5], cell).unwrap();
            let l = Lattice::recognize(&m).expect("box mesh is a lattice");
            assert_eq!(l.n, [3, 4, 2]);
            assert_eq!(l.per_block(), if cell == CellType::Tetrahedron { 6 } else { 1 });
            let r = crate::mesh::ordering::reorder_for_locality(&m).unwrap();
            if r.cells != m.cells {
                assert!(Lattice::recognize(&r).is_none(), "a renumbered mesh is not taken for the lattice");
            }
            let mut bent = m.clone();
            bent.coords[5][0] += 1e-3;
            assert!(Lattice::recognize(&bent).is_none(), "a moved vertex breaks the lattice");
        }
        let m = generate::rectangle(2, 2, [0.0; 2], [1.0; 2], CellType::Triangle).unwrap();
        assert!(Lattice::recognize(&m).is_none());
    }
}
