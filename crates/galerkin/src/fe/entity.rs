//! Affine parametrisations of a reference cell's sub-entities (vertices, edges, faces, the cell).
//!
//! Every sub-entity of the reference cells is a simplex or a parallelogram/box, so one affine map
//! `u ↦ origin + Σ_k u_k axes[k]` from the entity's own reference domain (unit simplex or unit cube)
//! places both Lagrange nodes and facet quadrature points; its columns are the facet tangents.
use crate::mesh::CellType;

/// The affine map of one entity: `origin` is its first vertex, `axes` run to its neighbours.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub origin: [f64; 3],
    pub axes: Vec<[f64; 3]>,
}

impl Frame {
    /// The entity spanned by local `vertices` of `cell`, in the cell's own vertex order: for a
    /// simplex entity the axes are `v_i - v_0`; for a quadrilateral `[a, b, c, d]` (ordered around)
    /// they are `b - a` and `d - a`; for the whole hexahedron `v1 - v0`, `v3 - v0`, `v4 - v0`.
    pub fn of(cell: CellType, vertices: &[usize]) -> Frame {
        let rv = cell.reference_vertices();
        let ends: Vec<usize> = match (cell.is_simplex(), vertices.len()) {
            (true, _) | (false, 1 | 2) => vertices[1..].to_vec(),
            (false, 4) => vec![vertices[1], vertices[3]],
            (false, _) => vec![vertices[1], vertices[3], vertices[4]],
        };
        let origin = rv[vertices[0]];
        let axes = ends
            .iter()
            .map(|&v| std::array::from_fn(|i| rv[v][i] - origin[i]))
            .collect();
        Frame { origin, axes }
    }

    /// The whole cell as an entity (its axes are the unit vectors).
    pub fn cell(cell: CellType) -> Frame {
        let all: Vec<usize> = (0..cell.num_vertices()).collect();
        Frame::of(cell, &all)
    }

    /// The point with entity coordinates `u`.
    pub fn map(&self, u: &[f64]) -> [f64; 3] {
        let mut x = self.origin;
        for (a, &uk) in self.axes.iter().zip(u) {
            for i in 0..3 {
                x[i] += uk * a[i];
            }
        }
        x
    }

    /// The lattice point `u = idx / k`, computed as `(k·origin + Σ idx_a·axes_a) / k`: origin and axes
    /// are integer vectors, so nodes come out as correctly rounded fractions identical on every entity
    /// that shares them.
    pub fn lattice_point(&self, idx: &[usize], k: usize) -> [f64; 3] {
        let k = k as f64;
        std::array::from_fn(|i| {
            let sum: f64 = self
                .axes
                .iter()
                .zip(idx)
                .map(|(a, &n)| n as f64 * a[i])
                .sum();
            (k * self.origin[i] + sum) / k
        })
    }
}
