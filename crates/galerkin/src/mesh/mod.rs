//! Meshes: generated (interval, rectangle, box) or read from Gmsh `.msh` 4.1, always validated.
//!
//! A mesh holds one cell shape, linear geometry (vertices only), a region tag per cell and a list of
//! tagged boundary facets. Tag names (Gmsh physical names, or the generators' `xmin`, `xmax`, …)
//! map to integer tags so problem files can say `boundary = "xmin"`.
mod cell;
pub mod box_cuda;
pub mod generate;
pub mod hilbert;
pub mod gmsh;
pub mod gmsh_data;
pub mod lattice;
pub mod ordering;
mod sort;
pub mod validate;

pub use cell::CellType;

use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// A tagged boundary facet: its vertices (global ids, in the facet's own local order) and tag.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryFacet {
    pub vertices: Vec<usize>,
    pub tag: i32,
}

/// An unstructured mesh of one cell type.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Geometric dimension (equal to the cell's topological dimension).
    pub dim: usize,
    /// Vertex coordinates; components beyond `dim` are zero.
    pub coords: Vec<[f64; 3]>,
    pub cell_type: CellType,
    /// Flat connectivity: `cell_type.num_vertices()` vertex ids per cell.
    pub cells: Vec<usize>,
    /// Region (physical group) tag per cell; 0 when the mesh has none.
    pub cell_tags: Vec<i32>,
    /// Tagged boundary facets (may be only part of the boundary, as in a Gmsh file).
    pub boundary: Vec<BoundaryFacet>,
    /// Named tags: name -> (entity dimension, tag). Cell regions have dimension `dim`.
    pub tag_names: BTreeMap<String, (usize, i32)>,
}

impl Mesh {
    /// Build a mesh from raw parts and validate it (see [`validate::validate`]).
    pub fn new(
        cell_type: CellType,
        coords: Vec<[f64; 3]>,
        cells: Vec<usize>,
        cell_tags: Option<Vec<i32>>,
        boundary: Vec<BoundaryFacet>,
        tag_names: BTreeMap<String, (usize, i32)>,
    ) -> Result<Mesh> {
        let nv = cell_type.num_vertices();
        if !cells.len().is_multiple_of(nv) {
            return Err(Error::mesh(
                "connectivity",
                format!(
                    "{} vertex ids is not a multiple of {} ({}s)",
                    cells.len(),
                    nv,
                    cell_type
                ),
            ));
        }
        let ncells = cells.len() / nv;
        let cell_tags = cell_tags.unwrap_or_else(|| vec![0; ncells]);
        if cell_tags.len() != ncells {
            return Err(Error::mesh(
                "cell tags",
                format!("{} tags for {} cells", cell_tags.len(), ncells),
            ));
        }
        let mesh = Mesh {
            dim: cell_type.dim(),
            coords,
            cell_type,
            cells,
            cell_tags,
            boundary,
            tag_names,
        };
        validate::validate(&mesh)?;
        Ok(mesh)
    }

    pub fn num_cells(&self) -> usize {
        self.cells.len() / self.cell_type.num_vertices()
    }

    pub fn num_vertices(&self) -> usize {
        self.coords.len()
    }

    /// Vertex ids of cell `c`.
    pub fn cell(&self, c: usize) -> &[usize] {
        let nv = self.cell_type.num_vertices();
        &self.cells[c * nv..(c + 1) * nv]
    }

    /// Resolve a boundary or region name to its tag; `expected_dim` guards against using a region
    /// name where a boundary is meant.
    pub fn tag(&self, name: &str, expected_dim: usize) -> Result<i32> {
        match self.tag_names.get(name) {
            Some(&(d, t)) if d == expected_dim => Ok(t),
            Some(&(d, _)) => Err(Error::invalid(format!(
                "tag `{name}` has dimension {d}, but a dimension-{expected_dim} tag is needed here"
            ))),
            None => {
                let known: Vec<&str> = self
                    .tag_names
                    .iter()
                    .filter(|(_, (d, _))| *d == expected_dim)
                    .map(|(n, _)| n.as_str())
                    .collect();
                Err(Error::invalid(format!(
                    "unknown tag name `{name}`; this mesh has {known:?}"
                )))
            }
        }
    }

    /// For every boundary facet, the (cell, local facet index) it belongs to. The same facet may be
    /// listed several times (one entry per tag, as Gmsh writes a curve in two physical groups);
    /// each entry gets its own answer. Fails naming the facet when it is not a facet of any cell.
    pub fn boundary_facet_cells(&self) -> Result<Vec<(usize, usize)>> {
        let local = self.cell_type.facets();
        let mut want: HashMap<FacetKey, Vec<usize>> = HashMap::with_capacity(self.boundary.len());
        for (i, f) in self.boundary.iter().enumerate() {
            if f.vertices.len() > MAX_FACET_VERTICES {
                return Err(Error::mesh(
                    format!("boundary facet {i}"),
                    format!(
                        "{} vertices; a facet has at most {MAX_FACET_VERTICES}",
                        f.vertices.len()
                    ),
                ));
            }
            want.entry(facet_key(f.vertices.iter().copied()))
                .or_default()
                .push(i);
        }
        // Every cell's facets are candidates: hash only those whose vertices all lie on listed
        // facets, in parallel (large meshes have millions of cells and few boundary ones).
        let mut on_boundary = vec![false; self.num_vertices()];
        for f in &self.boundary {
            for &v in &f.vertices {
                if let Some(b) = on_boundary.get_mut(v) {
                    *b = true;
                }
            }
        }
        let (want, on_boundary) = (&want, &on_boundary);
        let found: Vec<(usize, usize, usize)> = (0..self.num_cells())
            .into_par_iter()
            .flat_map_iter(|c| {
                let cv = self.cell(c);
                local.iter().enumerate().filter(move |(_, fv)| fv.iter().all(|&v| on_boundary[cv[v]])).flat_map(move |(lf, fv)| {
                    want.get(&facet_key(fv.iter().map(|&v| cv[v]))).into_iter().flatten().map(move |&i| (i, c, lf))
                })
            })
            .collect();
        let mut out = vec![(usize::MAX, 0); self.boundary.len()];
        for (i, c, lf) in found {
            out[i] = (c, lf);
        }
        if let Some(i) = out.iter().position(|&(c, _)| c == usize::MAX) {
            return Err(Error::mesh(
                format!("boundary facet {i}"),
                format!(
                    "vertices {:?} are not a facet of any cell",
                    self.boundary[i].vertices
                ),
            ));
        }
        Ok(out)
    }

    /// Facets that belong to exactly one cell, as (cell, local facet) pairs: the geometric boundary.
    pub fn exterior_facets(&self) -> Vec<(usize, usize)> {
        let local = self.cell_type.facets();
        let mut count: HashMap<FacetKey, (usize, usize, u32)> = HashMap::new();
        for c in 0..self.num_cells() {
            let cv = self.cell(c);
            for (lf, fv) in local.iter().enumerate() {
                count
                    .entry(facet_key(fv.iter().map(|&v| cv[v])))
                    .and_modify(|e| e.2 += 1)
                    .or_insert((c, lf, 1));
            }
        }
        let mut out: Vec<(usize, usize)> = count
            .into_values()
            .filter(|e| e.2 == 1)
            .map(|e| (e.0, e.1))
            .collect();
        out.sort_unstable();
        out
    }

    /// Axis-aligned bounding box (min, max).
    pub fn bounding_box(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &self.coords {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        (lo, hi)
    }

    /// Map a reference point of cell `c` to physical space and return the Jacobian
    /// `J[i][j] = ∂x_i/∂ξ_j` (only the leading `dim`×`dim` block is meaningful).
    pub fn map_point(&self, c: usize, xi: [f64; 3]) -> ([f64; 3], [[f64; 3]; 3]) {
        let nv = self.cell_type.num_vertices();
        let mut vals = [0.0; 8];
        let mut grads = [[0.0; 3]; 8];
        self.cell_type
            .geometry_basis(xi, &mut vals[..nv], &mut grads[..nv]);
        let mut x = [0.0; 3];
        let mut jac = [[0.0; 3]; 3];
        for (a, &v) in self.cell(c).iter().enumerate() {
            let p = self.coords[v];
            for i in 0..3 {
                x[i] += vals[a] * p[i];
                for j in 0..3 {
                    jac[i][j] += p[i] * grads[a][j];
                }
            }
        }
        (x, jac)
    }
}

/// Facets have at most 4 vertices (hexahedron faces).
const MAX_FACET_VERTICES: usize = 4;

/// A facet's vertex set, sorted and padded with `usize::MAX`: an allocation-free hash key that is
/// the same for every cell sharing the facet, whatever the local vertex order.
type FacetKey = [usize; MAX_FACET_VERTICES];

fn facet_key(vertices: impl Iterator<Item = usize>) -> FacetKey {
    let mut k = [usize::MAX; MAX_FACET_VERTICES];
    for (slot, v) in k.iter_mut().zip(vertices) {
        *slot = v;
    }
    k.sort_unstable();
    k
}
