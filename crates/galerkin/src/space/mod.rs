//! Function spaces: a mesh, a reference element and a number of components, tied together by a
//! dof map. Vector-valued spaces (elasticity) interleave components: dof = `node * ncomp + c`, so
//! the per-node blocks that block Jacobi inverts are contiguous.
pub mod dofmap;
pub mod probe;
mod projection;

pub use dofmap::DofMap;

use crate::fe::{FiniteElement, LagrangeElement};
use crate::mesh::Mesh;
use crate::{Error, Result};
use std::collections::BTreeSet;
use std::sync::Arc;

/// A finite element space on a mesh.
#[derive(Clone, Debug)]
pub struct FunctionSpace {
    pub mesh: Arc<Mesh>,
    pub element: Arc<dyn FiniteElement>,
    pub ncomp: usize,
    pub dofmap: DofMap,
    /// Nodes held at zero: the modes a variable-degree hierarchical space drops (above the degree
    /// of their entity by the minimum rule). Empty for every other space.
    pub frozen: Vec<usize>,
    /// Each cell's own degree, where the `full` level should integrate a variable-degree
    /// hierarchical space group by group ([`crate::operator::degree_groups::CellDegrees`]); `None`
    /// integrates every cell with the space's element.
    pub cell_degrees: Option<Arc<crate::operator::degree_groups::CellDegrees>>,
    /// Unique per constructed space (clones share it): with the node list's address it tells the
    /// GPU backend's device copy of this dof map from another's ([`Self::uid`]).
    uid: u64,
}

impl FunctionSpace {
    pub fn new(mesh: Arc<Mesh>, element: Arc<dyn FiniteElement>, ncomp: usize) -> Result<Self> {
        if ncomp == 0 {
            return Err(Error::invalid("a function space needs at least one component"));
        }
        let dofmap = DofMap::new(&mesh, element.as_ref())?;
        Ok(FunctionSpace::from_parts(mesh, element, ncomp, dofmap))
    }

    /// A space over a dof map built elsewhere (e.g. a sub-mesh's, renumbered), with its own [`Self::uid`].
    pub fn from_parts(mesh: Arc<Mesh>, element: Arc<dyn FiniteElement>, ncomp: usize, dofmap: DofMap) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let uid = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        FunctionSpace { mesh, element, ncomp, dofmap, frozen: Vec::new(), cell_degrees: None, uid }
    }

    /// This space's identity (unique per constructed space; clones share it).
    pub fn uid(&self) -> u64 {
        self.uid
    }

    /// H1 Lagrange space of `degree` (P_k on simplices, Q_k on quads/hexes) with `ncomp` components.
    pub fn lagrange(mesh: Arc<Mesh>, degree: usize, ncomp: usize) -> Result<Self> {
        let element = Arc::new(LagrangeElement::new(mesh.cell_type, degree)?);
        FunctionSpace::new(mesh, element, ncomp)
    }

    /// As [`Self::lagrange`] with the nodes of tensor cells chosen (simplices: equispaced only).
    pub fn lagrange_with_nodes(mesh: Arc<Mesh>, degree: usize, ncomp: usize, nodes: crate::fe::NodeFamily) -> Result<Self> {
        let element = Arc::new(LagrangeElement::with_nodes(mesh.cell_type, degree, nodes)?);
        FunctionSpace::new(mesh, element, ncomp)
    }

    /// Total number of (scalar) unknowns.
    pub fn ndofs(&self) -> usize {
        self.dofmap.num_nodes * self.ncomp
    }

    /// Hierarchical (integrated Legendre) space on hexahedra of `degree`, trunk or full modes.
    pub fn hierarchical(mesh: Arc<Mesh>, degree: usize, modes: crate::fe::ModeSet, ncomp: usize) -> Result<Self> {
        Self::hierarchical_with(mesh, crate::fe::HierarchicalHex::new(degree, modes)?, ncomp)
    }

    fn hierarchical_with(mesh: Arc<Mesh>, element: crate::fe::HierarchicalHex, ncomp: usize) -> Result<Self> {
        if mesh.cell_type != crate::mesh::CellType::Hexahedron {
            return Err(Error::Unsupported(format!("hierarchical elements on {}s (hexahedra only)", mesh.cell_type)));
        }
        FunctionSpace::new(mesh, Arc::new(element), ncomp)
    }

    /// Hierarchical space with a degree per cell (`degrees[c]`, 1 to 8): every cell carries the
    /// element of the highest degree, and by the minimum rule a shared edge or face has the lowest
    /// degree of the cells around it; the modes above their entity's degree are frozen at zero
    /// (constrained like Dirichlet dofs). Conforming, with the accuracy of the variable-p space;
    /// the cost per cell is that of the highest degree.
    pub fn hierarchical_variable(mesh: Arc<Mesh>, degrees: &[usize], modes: crate::fe::ModeSet, ncomp: usize) -> Result<Self> {
        if degrees.len() != mesh.num_cells() {
            return Err(Error::dim("degrees per cell", mesh.num_cells(), degrees.len()));
        }
        let pmax = degrees.iter().copied().max().unwrap_or(1);
        let el = crate::fe::HierarchicalHex::new(pmax, modes)?;
        let fdeg = el.function_degrees();
        let mut space = Self::hierarchical_with(mesh, el, ncomp)?;
        let nloc = space.dofmap.nodes_per_cell;
        // A node's degree: the lowest of the cells that share it (one cell for interiors).
        let mut order = vec![usize::MAX; space.dofmap.num_nodes];
        for (c, &p) in degrees.iter().enumerate() {
            for &n in space.dofmap.cell(c) {
                order[n] = order[n].min(p);
            }
        }
        let mut frozen = std::collections::BTreeSet::new();
        for c in 0..degrees.len() {
            for (i, &n) in space.dofmap.cell_nodes[c * nloc..(c + 1) * nloc].iter().enumerate() {
                if fdeg[i] > order[n] {
                    frozen.insert(n);
                }
            }
        }
        space.frozen = frozen.into_iter().collect();
        Ok(space)
    }

    /// Interpolation of `f` (returning `ncomp` values at a point): nodal for Lagrange spaces,
    /// projection-based for modal (hierarchical) ones.
    pub fn interpolate(&self, f: impl Fn([f64; 3], &mut [f64]) + Sync) -> Vec<f64> {
        if self.element.nodes().is_none() {
            return self.project_modal(&f, &(0..self.mesh.num_cells()).collect::<Vec<_>>());
        }
        let n = self.ncomp;
        let mut u = vec![0.0; self.ndofs()];
        for (node, x) in self.dofmap.node_coords.iter().enumerate() {
            f(*x, &mut u[node * n..(node + 1) * n]);
        }
        u
    }

    /// Nodes on the boundary facets whose tag is in `tags` (sorted, unique). These are the nodes a
    /// Dirichlet condition on those tags constrains: the closure of each facet (its vertices,
    /// edges and face interiors).
    pub fn boundary_nodes(&self, tags: &[i32]) -> Result<Vec<usize>> {
        if self.nodes_are_vertices() {
            // A facet's closure is its vertices, whose nodes are their ids: no search of the
            // cells for the facets (a pass over every cell; most of this at 10^7 cells).
            use rayon::prelude::*;
            let mut out: Vec<usize> = self.mesh.boundary.par_iter().filter(|f| tags.contains(&f.tag)).flat_map_iter(|f| f.vertices.iter().copied()).collect();
            out.par_sort_unstable();
            out.dedup();
            return Ok(out);
        }
        self.boundary_nodes_by_cells(tags)
    }

    /// [`Self::boundary_nodes`] through the cells that hold the facets (any space).
    fn boundary_nodes_by_cells(&self, tags: &[i32]) -> Result<Vec<usize>> {
        let closure = self.facet_closure_dofs();
        let mut out = BTreeSet::new();
        for (c, lf) in self.tagged_facets(tags)? {
            let cn = self.dofmap.cell(c);
            out.extend(closure[lf].iter().map(|&i| cn[i]));
        }
        Ok(out.into_iter().collect())
    }

    /// Whether every node is a mesh vertex, numbered by its vertex id (degree-1 spaces: the dof
    /// map numbers vertex dofs first, node = vertex).
    fn nodes_are_vertices(&self) -> bool {
        let nv = self.mesh.cell_type.num_vertices();
        self.element.ndofs() == nv && self.element.entity_dofs()[0].len() == nv && self.dofmap.num_nodes == self.mesh.num_vertices()
    }

    /// The boundary facets (cell, local facet) whose tag is in `tags`.
    fn tagged_facets(&self, tags: &[i32]) -> Result<Vec<(usize, usize)>> {
        let mesh = &self.mesh;
        let facet_cells = mesh.boundary_facet_cells()?;
        Ok(mesh.boundary.iter().zip(facet_cells).filter(|(f, _)| tags.contains(&f.tag)).map(|(_, fc)| fc).collect())
    }

    /// Dirichlet data `f` on the facets tagged `tags`: [`Self::boundary_nodes`] and their `ncomp`
    /// values each, node after node — `f` at the node for a Lagrange space; for a modal space the
    /// coefficients of the projection-based interpolant, computed on the cells that touch those
    /// facets only (a boundary dof depends only on the data on its boundary entity).
    pub fn boundary_data(&self, tags: &[i32], f: impl Fn([f64; 3], &mut [f64]) + Sync) -> Result<(Vec<usize>, Vec<f64>)> {
        let n = self.ncomp;
        let nodes = self.boundary_nodes(tags)?;
        let mut values = vec![0.0; nodes.len() * n];
        if self.element.nodes().is_some() {
            for (&node, v) in nodes.iter().zip(values.chunks_mut(n)) {
                f(self.dofmap.node_coords[node], v);
            }
        } else {
            let mut cells: Vec<usize> = self.tagged_facets(tags)?.into_iter().map(|(c, _)| c).collect();
            cells.sort_unstable();
            cells.dedup();
            let g = self.project_modal(&f, &cells);
            for (&node, v) in nodes.iter().zip(values.chunks_mut(n)) {
                v.copy_from_slice(&g[node * n..(node + 1) * n]);
            }
        }
        Ok((nodes, values))
    }

    /// For each local facet of the reference cell, the local dofs on its closure.
    pub fn facet_closure_dofs(&self) -> Vec<Vec<usize>> {
        let cell = self.mesh.cell_type;
        let ent = self.element.entity_dofs();
        cell.facets()
            .iter()
            .map(|fv| {
                let mut dofs = Vec::new();
                for d in 0..cell.dim() {
                    for (e, verts) in dofmap::local_entities(cell, d).iter().enumerate() {
                        if verts.iter().all(|v| fv.contains(v)) {
                            if let Some(ld) = ent[d].get(e) {
                                dofs.extend_from_slice(ld);
                            }
                        }
                    }
                }
                dofs
            })
            .collect()
    }

    /// Values at mesh vertices (the first `num_vertices` nodes), `ncomp` per vertex: what VTU output
    /// shows for any degree.
    pub fn vertex_values<'a>(&self, u: &'a [f64]) -> &'a [f64] {
        &u[..self.mesh.num_vertices() * self.ncomp]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, CellType};

    /// The boundary nodes of degree-1 spaces from the facets' vertices are those found through
    /// the cells (P1 and Q1, 2D and 3D, one side and several).
    #[test]
    fn degree_one_boundary_nodes_are_the_facets_vertices() {
        let meshes = [
            generate::box_mesh(4, 3, 5, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap(),
            generate::box_mesh(3, 4, 2, [0.0; 3], [1.0; 3], CellType::Hexahedron).unwrap(),
            generate::rectangle(5, 4, [0.0; 2], [1.0; 2], CellType::Triangle).unwrap(),
        ];
        for mesh in meshes {
            let space = FunctionSpace::lagrange(Arc::new(mesh), 1, 1).unwrap();
            assert!(space.nodes_are_vertices());
            for tags in [vec![1], vec![2, 3], vec![1, 2, 3, 4, 5, 6]] {
                let fast = space.boundary_nodes(&tags).unwrap();
                assert!(!fast.is_empty());
                assert_eq!(fast, space.boundary_nodes_by_cells(&tags).unwrap(), "tags {tags:?}");
            }
        }
        let p2 = FunctionSpace::lagrange(Arc::new(generate::box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap()), 2, 1).unwrap();
        assert!(!p2.nodes_are_vertices());
    }

    /// Degree-1 maps (built in one pass) give each vertex dof its vertex's id and coordinates,
    /// whatever the element's local order (Q1's is not the mesh's), and the map of a P2 space
    /// still numbers edges after the vertices.
    #[test]
    fn degree_one_maps_number_nodes_by_vertex() {
        for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
            let mesh = Arc::new(generate::box_mesh(3, 2, 2, [0.0; 3], [1.0, 2.0, 3.0], cell).unwrap());
            let space = FunctionSpace::lagrange(mesh.clone(), 1, 1).unwrap();
            let dm = &space.dofmap;
            // The flag the GPU trusts instead of comparing the map with the cells.
            assert_eq!(dm.nodes_are_cells, dm.cell_nodes == mesh.cells, "{cell:?}");
            assert!(dm.nodes_are_cells || cell != CellType::Tetrahedron, "P1 on tetrahedra numbers its nodes as the cells' vertices");
            assert_eq!((dm.num_nodes, dm.owned, dm.nodes_per_cell), (mesh.num_vertices(), mesh.num_vertices(), cell.num_vertices()));
            assert!(dm.node_coords == mesh.coords && dm.signs.is_none());
            let nodes = space.element.nodes().unwrap();
            for c in 0..mesh.num_cells() {
                for (ld, &node) in dm.cell(c).iter().enumerate() {
                    let x = mesh.map_point(c, nodes[ld]).0;
                    assert!((0..3).all(|k| (x[k] - mesh.coords[node][k]).abs() < 1e-14), "cell {c}, dof {ld}");
                }
            }
        }
        let mesh = Arc::new(generate::box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], CellType::Tetrahedron).unwrap());
        let p2 = FunctionSpace::lagrange(mesh.clone(), 2, 1).unwrap();
        assert_eq!(p2.dofmap.num_nodes, 5 * 5 * 5);
        assert!(!p2.dofmap.nodes_are_cells);
        assert!(p2.dofmap.node_coords[..mesh.num_vertices()] == mesh.coords[..]);
    }
}
