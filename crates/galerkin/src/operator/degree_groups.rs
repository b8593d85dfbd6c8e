//! Cells as spaces of their own: a subset of a space's cells with its own element, mapped onto the
//! parent's global nodes and signs. Two uses:
//! - **mixed degrees**: a variable-degree hierarchical space ([`FunctionSpace::hierarchical_variable`])
//!   carries the highest degree's element in every cell; grouping the cells by their own degree and
//!   integrating each group with that degree's element (and quadrature) makes a cell cost its own
//!   degree. The degree-q element's functions are some of the degree-p element's (the basis is
//!   hierarchical), and every function above a cell's degree is frozen at zero in the parent, so the
//!   grouped matrix equals the parent's on the free dofs (exactly where the quadratures agree:
//!   affine cells);
//! - **splitting cells between devices** (several GPUs, CPU + GPU): each part is a space over its
//!   cells with the parent's element, assembled into its own partial matrix of the parent's pattern.
//!
//! A sub-space's mesh holds the part's cells and their vertices (renumbered) and no boundary
//! facets: it only integrates volume terms; the parent's Dirichlet and load handling is unchanged.
use crate::fe::{FiniteElement, HierarchicalHex, ModeSet, QuadratureKind};
use crate::linalg::CsrMatrix;
use crate::mesh::Mesh;
use crate::operator::ElementIntegrator;
use crate::physics::PointwisePhysics;
use crate::space::{DofMap, FunctionSpace};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// Cells of `parent` as a space with `element`, whose function `i` is the parent's local function
/// `embedding[i]` (identity when `None`: the parent's element).
pub fn cell_subspace(parent: &FunctionSpace, cells: &[usize], element: Option<(Arc<dyn FiniteElement>, Vec<usize>)>) -> Result<FunctionSpace> {
    let mesh = &*parent.mesh;
    let ncells = mesh.num_cells();
    if let Some(&c) = cells.iter().find(|&&c| c >= ncells) {
        return Err(Error::invalid(format!("cell {c} of a sub-space of a mesh of {ncells} cells")));
    }
    let nv = mesh.cell_type.num_vertices();
    let (element, embedding) = match element {
        Some(e) => e,
        None => (parent.element.clone(), (0..parent.dofmap.nodes_per_cell).collect()),
    };
    let npc = parent.dofmap.nodes_per_cell;
    if embedding.len() != element.ndofs() || embedding.iter().any(|&i| i >= npc) {
        return Err(Error::dim("functions of a sub-space's element", element.ndofs(), embedding.len()));
    }
    // The part's vertices, renumbered compactly (a mesh has no vertex outside its cells).
    let mut local = vec![usize::MAX; mesh.coords.len()];
    let mut coords = Vec::new();
    let mut sub_cells = Vec::with_capacity(cells.len() * nv);
    for &c in cells {
        for &v in &mesh.cells[c * nv..(c + 1) * nv] {
            if local[v] == usize::MAX {
                local[v] = coords.len();
                coords.push(mesh.coords[v]);
            }
            sub_cells.push(local[v]);
        }
    }
    let tags = cells.iter().map(|&c| mesh.cell_tags.get(c).copied().unwrap_or(0)).collect();
    let sub = Mesh::new(mesh.cell_type, coords, sub_cells, Some(tags), Vec::new(), mesh.tag_names.clone())?;
    let n = embedding.len();
    let mut cell_nodes = Vec::with_capacity(cells.len() * n);
    let mut signs = parent.dofmap.signs.as_ref().map(|_| Vec::with_capacity(cells.len() * n));
    for &c in cells {
        let nodes = parent.dofmap.cell(c);
        for &i in &embedding {
            cell_nodes.push(nodes[i]);
            if let Some(s) = signs.as_mut() {
                s.push(parent.dofmap.sign(c, i));
            }
        }
    }
    let dofmap = DofMap {
        nodes_per_cell: n,
        cell_nodes,
        num_nodes: parent.dofmap.num_nodes,
        node_coords: parent.dofmap.node_coords.clone(),
        signs,
        owned: parent.dofmap.owned,
        nodes_are_cells: false,
    };
    Ok(FunctionSpace::from_parts(Arc::new(sub), element, parent.ncomp, dofmap))
}

/// What the `full` level needs to integrate a variable-degree space by degree groups (set on the
/// space by [`CellDegrees::attach`]): each cell's degree, the mode set, and the quadrature family
/// every group takes at its own degree.
#[derive(Clone, Debug)]
pub struct CellDegrees {
    pub degrees: Vec<usize>,
    pub modes: ModeSet,
    pub quadrature: QuadratureKind,
}

impl CellDegrees {
    /// Marks `space` (built by [`FunctionSpace::hierarchical_variable`] from `degrees`) to be
    /// integrated by degree groups at the `full` level; checks the degrees against its element.
    pub fn attach(space: &mut FunctionSpace, degrees: &[usize], modes: ModeSet, quadrature: QuadratureKind) -> Result<()> {
        let pmax = degrees.iter().copied().max().unwrap_or(1);
        let top = HierarchicalHex::new(pmax, modes)?;
        if degrees.len() != space.mesh.num_cells() || top.ndofs() != space.dofmap.nodes_per_cell {
            return Err(Error::invalid(format!(
                "degree groups: {} degrees for {} cells, and a degree-{pmax} {modes:?} element of {} functions for a space of {}",
                degrees.len(),
                space.mesh.num_cells(),
                top.ndofs(),
                space.dofmap.nodes_per_cell
            )));
        }
        space.cell_degrees = Some(Arc::new(CellDegrees { degrees: degrees.to_vec(), modes, quadrature }));
        Ok(())
    }

    /// (degree, cells, element matrix size) per group, lowest degree first, for `ncomp` components.
    pub fn summary(&self, ncomp: usize) -> Result<Vec<(usize, usize, usize)>> {
        let mut by_degree: std::collections::BTreeMap<usize, usize> = Default::default();
        for &p in &self.degrees {
            *by_degree.entry(p).or_default() += 1;
        }
        by_degree.into_iter().map(|(p, n)| Ok((p, n, HierarchicalHex::new(p, self.modes)?.ndofs() * ncomp))).collect()
    }
}

/// The cells of one degree of a variable-degree space, as a space with that degree's element.
pub struct DegreeGroup {
    pub degree: usize,
    /// The parent's cells, in order; the group's cell `k` is `cells[k]`.
    pub cells: Vec<usize>,
    pub space: FunctionSpace,
}

/// Groups the cells of `space` (a hierarchical space whose element has the highest of `degrees`
/// and mode set `modes`, as [`FunctionSpace::hierarchical_variable`] builds it) by `degrees[c]`,
/// lowest degree first.
pub fn degree_groups(space: &FunctionSpace, degrees: &[usize], modes: ModeSet) -> Result<Vec<DegreeGroup>> {
    let ncells = space.mesh.num_cells();
    if degrees.len() != ncells {
        return Err(Error::dim("degrees per cell", ncells, degrees.len()));
    }
    let pmax = degrees.iter().copied().max().unwrap_or(1);
    let top = HierarchicalHex::new(pmax, modes)?;
    if top.ndofs() != space.dofmap.nodes_per_cell {
        return Err(Error::invalid(format!(
            "degree groups: the space has {} functions per cell, the {modes:?} hierarchical hexahedron of degree {pmax} has {}",
            space.dofmap.nodes_per_cell,
            top.ndofs()
        )));
    }
    let mut by_degree: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (c, &p) in degrees.iter().enumerate() {
        by_degree.entry(p).or_default().push(c);
    }
    by_degree
        .into_iter()
        .map(|(degree, cells)| {
            let el = HierarchicalHex::new(degree, modes)?;
            let emb = top.embedding(&el)?;
            let space = cell_subspace(space, &cells, Some((Arc::new(el), emb)))?;
            Ok(DegreeGroup { degree, cells, space })
        })
        .collect()
}

/// Adds the element matrices (global orientation) of every cell of each space in `parts` into the
/// values of `a` (the parent's pattern, from [`crate::operator::assemble::sparsity`]): the CPU's
/// grouped assembly, the reference the GPU's is checked against. Element matrices are computed in
/// parallel, summed in cell order.
pub fn add_parts_cpu(parts: &[&FunctionSpace], physics: &dyn PointwisePhysics, kind: QuadratureKind, a: &mut CsrMatrix) -> Result<()> {
    for space in parts {
        if space.ndofs() != a.nrows {
            return Err(Error::dim("grouped assembly: rows of the matrix", space.ndofs(), a.nrows));
        }
        let integ = ElementIntegrator::with_quadrature(space, physics, None, kind)?;
        let nd = integ.elem_size();
        let n = space.ncomp;
        let ncells = space.mesh.num_cells();
        let chunk = 256;
        for start in (0..ncells).step_by(chunk) {
            let end = (start + chunk).min(ncells);
            let mats: Vec<Vec<f64>> = (start..end)
                .into_par_iter()
                .map_init(Default::default, |s, c| {
                    let mut ke = vec![0.0; nd * nd];
                    integ.element_matrix(c, s, &mut ke)?;
                    Ok(ke)
                })
                .collect::<Result<_>>()?;
            for (c, ke) in (start..end).zip(mats) {
                let nodes = space.dofmap.cell(c);
                let dof = |r: usize| nodes[r / n] * n + r % n;
                let sign = |r: usize| space.dofmap.sign(c, r / n);
                for r in 0..nd {
                    let row = dof(r);
                    let (lo, hi) = (a.row_ptr[row], a.row_ptr[row + 1]);
                    for s in 0..nd {
                        let col = dof(s) as u32;
                        let k = a.col_idx[lo..hi].binary_search(&col).map_err(|_| Error::invalid(format!("the pattern lacks the coupling ({row}, {col})")))?;
                        a.values[lo + k] += sign(r) * sign(s) * ke[r * nd + s];
                    }
                }
            }
        }
    }
    Ok(())
}
