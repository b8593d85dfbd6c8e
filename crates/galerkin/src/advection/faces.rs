//! Facet connectivity of a 2D mesh for DG: for every cell and local edge, the cell across it (and
//! its local edge, and whether the two walk the edge in opposite directions) or, on the boundary,
//! the edge's boundary tag. Found by sorting edge keys in parallel (no hash map), so meshes of
//! millions of cells connect in a fraction of a second.
use crate::mesh::{CellType, Mesh};
use crate::{Error, Result};
use rayon::prelude::*;

/// Marks a boundary edge in [`Faces::neighbour`].
pub const BOUNDARY: u32 = u32::MAX;

/// Per (cell, local edge), `F = 3` (triangles) or 4 (quadrilaterals) entries per cell.
#[derive(Clone, Debug)]
pub struct Faces {
    pub cell_type: CellType,
    /// Local edges per cell.
    pub per_cell: usize,
    /// The neighbouring cell, or [`BOUNDARY`].
    pub neighbour: Vec<u32>,
    /// Interior: the neighbour's local edge and (bit 2) 1 when its vertex order is the reverse of
    /// this cell's: `info = local_edge | flip << 2`. Boundary: the boundary tag (0 when untagged).
    pub info: Vec<i32>,
}

impl Faces {
    pub fn new(mesh: &Mesh) -> Result<Faces> {
        let ct = mesh.cell_type;
        if !matches!(ct, CellType::Triangle | CellType::Quadrilateral) {
            return Err(Error::Unsupported(format!("DG advection on {ct}s (triangles and quadrilaterals only)")));
        }
        let edges = ct.edges();
        let f = edges.len();
        let n = mesh.num_cells();
        if n * f >= u32::MAX as usize {
            return Err(Error::Unsupported(format!("{n} cells: DG advection numbers cells with 32 bits")));
        }
        // (min vertex, max vertex, cell·F + local edge), sorted: an interior edge is two neighbours.
        let mut keys: Vec<(usize, usize, usize)> = (0..n * f)
            .into_par_iter()
            .map(|k| {
                let cv = mesh.cell(k / f);
                let [a, b] = edges[k % f];
                let (a, b) = (cv[a], cv[b]);
                (a.min(b), a.max(b), k)
            })
            .collect();
        keys.par_sort_unstable();
        let mut neighbour = vec![BOUNDARY; n * f];
        let mut info = vec![0i32; n * f];
        let mut i = 0;
        while i < keys.len() {
            let (a, b, k) = keys[i];
            if i + 1 < keys.len() && keys[i + 1].0 == a && keys[i + 1].1 == b {
                if i + 2 < keys.len() && keys[i + 2].0 == a && keys[i + 2].1 == b {
                    return Err(Error::mesh(format!("edge ({a}, {b})"), "shared by more than two cells"));
                }
                let m = keys[i + 1].2;
                let first = |k: usize| mesh.cell(k / f)[edges[k % f][0]];
                let flip = i32::from(first(k) != first(m));
                neighbour[k] = (m / f) as u32;
                neighbour[m] = (k / f) as u32;
                info[k] = (m % f) as i32 | flip << 2;
                info[m] = (k % f) as i32 | flip << 2;
                i += 2;
            } else {
                i += 1;
            }
        }
        // The pattern gives every neighbour one block: two cells may share one edge only.
        if let Some(c) = (0..n).find(|&c| {
            let nb = &neighbour[c * f..(c + 1) * f];
            nb.iter().enumerate().any(|(i, &m)| m != BOUNDARY && nb[..i].contains(&m))
        }) {
            return Err(Error::mesh(format!("cell {c}"), "shares more than one edge with a neighbour"));
        }
        // Boundary tags from the mesh's tagged facets (the last tag wins where a facet has several).
        for ((c, lf), facet) in mesh.boundary_facet_cells()?.into_iter().zip(&mesh.boundary) {
            if neighbour[c * f + lf] == BOUNDARY {
                info[c * f + lf] = facet.tag;
            }
        }
        Ok(Faces { cell_type: ct, per_cell: f, neighbour, info })
    }

    /// Cells across the edges of cell `c`, boundary edges left out.
    pub fn neighbours(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        self.neighbour[c * self.per_cell..(c + 1) * self.per_cell].iter().filter(|&&m| m != BOUNDARY).map(|&m| m as usize)
    }

    pub fn num_cells(&self) -> usize {
        self.neighbour.len() / self.per_cell
    }
}
