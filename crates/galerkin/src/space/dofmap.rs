//! H1 dof maps: number every vertex, edge, face and interior dof once, shared between the cells
//! around it, with an orientation all those cells agree on.
//!
//! Nodes are numbered vertices first (node `v` is mesh vertex `v`), then edges, faces and cell
//! interiors, so vertex values for output are the first `num_vertices` nodes. Orientation is decided
//! once for every element family from the element's node coordinates: each shared entity's dofs are
//! ranked by their weights with respect to the entity's vertices sorted by *global* id, which every
//! cell sees identically whatever its local orientation (this covers Q3 hexahedron faces, whose 2×2
//! dofs have eight possible orientations, without a table per case).
use crate::fe::FiniteElement;
use crate::mesh::{CellType, Mesh};
use crate::{Error, Result};
use rayon::prelude::*;

/// Map from cells to global scalar nodes. Vector-valued spaces interleave components:
/// global dof = `node * ncomp + component`.
#[derive(Clone, Debug)]
pub struct DofMap {
    /// Scalar nodes per cell.
    pub nodes_per_cell: usize,
    /// `cell_nodes[c * nodes_per_cell + i]` = global node of local dof `i` of cell `c`.
    pub cell_nodes: Vec<usize>,
    pub num_nodes: usize,
    /// Physical coordinates of every node (for interpolation and output).
    pub node_coords: Vec<[f64; 3]>,
    /// ±1 per local dof (cell-major) for modal elements whose edge and face modes flip sign
    /// between neighbours (see [`FiniteElement::orient`]); `None` for nodal elements.
    pub signs: Option<Vec<f64>>,
    /// Nodes `0..owned` are owned by this process (all of them until meshes are partitioned).
    pub owned: usize,
    /// `cell_nodes` is the mesh's `cells`, entry for entry (degree-1 nodal maps in the vertices'
    /// order), known by construction: the GPU then shares the cells' buffer without comparing
    /// 2·10^8 entries.
    pub nodes_are_cells: bool,
}

/// Rank of each dof inside its entity, for one local entity seen with one global vertex order.
struct EntityDofs {
    /// Local vertices of the entity (cell numbering), in the entity's own order.
    vertices: Vec<usize>,
    /// Local dofs on the entity.
    dofs: Vec<usize>,
    /// For each dof, its weights w.r.t. `vertices` (barycentric or bilinear).
    weights: Vec<Vec<f64>>,
}

impl EntityDofs {
    /// Rank of each dof when the entity's vertices have global ids `gids` (same order as `vertices`).
    fn ranks(&self, gids: &[usize], out: &mut Vec<usize>) {
        if self.weights.len() <= 1 {
            out.clear();
            out.resize(self.dofs.len(), 0);
            return;
        }
        let mut order: Vec<usize> = (0..gids.len()).collect();
        order.sort_unstable_by_key(|&k| gids[k]);
        let mut idx: Vec<usize> = (0..self.dofs.len()).collect();
        idx.sort_by(|&a, &b| {
            for &k in &order {
                let (wa, wb) = (self.weights[a][k], self.weights[b][k]);
                if (wa - wb).abs() > 1e-9 {
                    return wb.partial_cmp(&wa).unwrap_or(std::cmp::Ordering::Equal);
                }
            }
            std::cmp::Ordering::Equal
        });
        out.clear();
        out.resize(idx.len(), 0);
        for (rank, &d) in idx.iter().enumerate() {
            out[d] = rank;
        }
    }
}

/// Weights of reference point `p` w.r.t. the entity with reference vertices `verts`: barycentric
/// for simplices (2 or 3 vertices), bilinear for a quadrilateral face (4 vertices, cyclic order).
fn entity_weights(verts: &[[f64; 3]], p: [f64; 3]) -> Vec<f64> {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let d = sub(p, verts[0]);
    match verts.len() {
        1 => vec![1.0],
        2 => {
            let e = sub(verts[1], verts[0]);
            let t = dot(d, e) / dot(e, e);
            vec![1.0 - t, t]
        }
        3 => {
            let (e1, e2) = (sub(verts[1], verts[0]), sub(verts[2], verts[0]));
            let (a, b, c) = (dot(e1, e1), dot(e1, e2), dot(e2, e2));
            let (r1, r2) = (dot(d, e1), dot(d, e2));
            let det = a * c - b * b;
            let l1 = (r1 * c - r2 * b) / det;
            let l2 = (a * r2 - b * r1) / det;
            vec![1.0 - l1 - l2, l1, l2]
        }
        _ => {
            // Axis-aligned reference quad face: p0→p1 and p0→p3 are its two parameter directions.
            let (e1, e3) = (sub(verts[1], verts[0]), sub(verts[3], verts[0]));
            let s = dot(d, e1) / dot(e1, e1);
            let t = dot(d, e3) / dot(e3, e3);
            vec![(1.0 - s) * (1.0 - t), s * (1.0 - t), s * t, (1.0 - s) * t]
        }
    }
}

/// Local entities of dimension `d` as lists of local vertices.
pub(crate) fn local_entities(cell: CellType, d: usize) -> Vec<Vec<usize>> {
    if d == 0 {
        (0..cell.num_vertices()).map(|v| vec![v]).collect()
    } else if d == cell.dim() {
        vec![(0..cell.num_vertices()).collect()]
    } else if d == 1 {
        cell.edges().iter().map(|e| e.to_vec()).collect()
    } else {
        cell.faces().iter().map(|f| f.to_vec()).collect()
    }
}

impl DofMap {
    /// Build the dof map of `element` on `mesh`.
    pub fn new(mesh: &Mesh, element: &dyn FiniteElement) -> Result<DofMap> {
        let cell = mesh.cell_type;
        if element.cell_type() != cell {
            return Err(Error::invalid(format!(
                "element is defined on {}s but the mesh has {}s",
                element.cell_type(),
                cell
            )));
        }
        let tdim = cell.dim();
        let ent_dofs = element.entity_dofs();
        let nloc = element.ndofs();
        let ncells = mesh.num_cells();
        let nverts = mesh.num_vertices();
        let ref_verts = cell.reference_vertices();
        let nodes = element.nodes();
        let modal = nodes.is_none();
        let mut signs = if modal { Some(vec![1.0; ncells * nloc]) } else { None };

        // Vertex dofs: node = vertex id.
        if ent_dofs[0].iter().any(|dofs| dofs.len() != 1) {
            return Err(Error::Unsupported("elements with more than one dof per vertex".into()));
        }
        let vertex_dofs: Vec<usize> = ent_dofs[0].iter().map(|d| d[0]).collect();
        if nloc == cell.num_vertices() && nodes.is_some_and(|n| vertex_dofs.iter().enumerate().all(|(v, &ld)| n[ld] == ref_verts[v])) {
            // Degree 1, nodal: the cells' vertices in the element's order and the mesh's
            // coordinates, two parallel passes side by side (this map is 2 GB at 10^7 cells).
            let nodes_are_cells = vertex_dofs.iter().enumerate().all(|(v, &ld)| v == ld);
            let (cell_nodes, node_coords) = rayon::join(
                || {
                    if nodes_are_cells {
                        // A copy in slices (memcpy), not entry by entry.
                        let mut out = vec![0usize; ncells * nloc];
                        out.par_chunks_mut(1 << 16).zip(mesh.cells.par_chunks(1 << 16)).for_each(|(o, c)| o.copy_from_slice(c));
                        return out;
                    }
                    let mut out = vec![0usize; ncells * nloc];
                    out.par_chunks_mut(nloc).enumerate().for_each(|(c, out)| {
                        for (v, &ld) in vertex_dofs.iter().enumerate() {
                            out[ld] = mesh.cell(c)[v];
                        }
                    });
                    out
                },
                || mesh.coords.par_iter().copied().collect(),
            );
            return Ok(DofMap { nodes_per_cell: nloc, cell_nodes, num_nodes: nverts, node_coords, signs, owned: nverts, nodes_are_cells });
        }
        // Filled in parallel: at 10^7 cells a serial fill of the map is a good part of the phase.
        let mut cell_nodes: Vec<usize> = (0..ncells * nloc).into_par_iter().map(|_| usize::MAX).collect();
        cell_nodes.par_chunks_mut(nloc.max(1)).enumerate().for_each(|(c, nodes)| {
            for (v, &ld) in vertex_dofs.iter().enumerate() {
                nodes[ld] = mesh.cell(c)[v];
            }
        });
        let mut next = nverts;
        for d in 1..=tdim {
            let ents = local_entities(cell, d);
            let per_entity: Vec<EntityDofs> = ents
                .iter()
                .enumerate()
                .map(|(e, verts)| {
                    let dofs = ent_dofs[d].get(e).cloned().unwrap_or_default();
                    let rv: Vec<[f64; 3]> = verts.iter().map(|&v| ref_verts[v]).collect();
                    let weights = nodes.map_or_else(Vec::new, |nodes| dofs.iter().map(|&i| entity_weights(&rv, nodes[i])).collect());
                    EntityDofs { vertices: verts.clone(), dofs, weights }
                })
                .collect();
            let per = per_entity.iter().map(|e| e.dofs.len()).max().unwrap_or(0);
            if per == 0 {
                continue;
            }
            // Number entities: interiors are never shared; edges/faces by their sorted vertex ids.
            let ids: Vec<usize> = if d == tdim {
                (0..ncells).collect()
            } else {
                number_shared_entities(mesh, &ents)
            };
            let nents = ids.iter().copied().max().map_or(0, |m| m + 1);
            let mut ranks = Vec::new();
            let mut gids = Vec::new();
            for c in 0..ncells {
                let cv = mesh.cell(c);
                for (e, ed) in per_entity.iter().enumerate() {
                    gids.clear();
                    gids.extend(ed.vertices.iter().map(|&v| cv[v]));
                    let oriented = if d == tdim { None } else { element.orient(d, e, &gids) };
                    if let Some(o) = &oriented {
                        ranks.clear();
                        ranks.extend(o.iter().map(|&(r, _)| r));
                    } else if d == tdim || modal {
                        // Cell interiors are never shared: keep the element's own order.
                        ranks.clear();
                        ranks.extend(0..ed.dofs.len());
                    } else {
                        ed.ranks(&gids, &mut ranks);
                    }
                    let base = next + ids[c * ents.len() + e] * per;
                    for (k, &ld) in ed.dofs.iter().enumerate() {
                        cell_nodes[c * nloc + ld] = base + ranks[k];
                        if let (Some(o), Some(s)) = (&oriented, signs.as_mut()) {
                            s[c * nloc + ld] = o[k].1;
                        }
                    }
                }
            }
            next += nents * per;
        }
        if let Some(i) = cell_nodes.par_iter().position_first(|&n| n == usize::MAX) {
            return Err(Error::invalid(format!(
                "element leaves local dof {} of cell {} unnumbered (entity_dofs incomplete)",
                i % nloc,
                i / nloc
            )));
        }
        let num_nodes = next;
        let mut node_coords = vec![[0.0; 3]; num_nodes];
        // Modal dofs sit, for output and probing, at the centre of their entity.
        let tab_nodes: Vec<[f64; 3]> = match nodes {
            Some(n) => n.to_vec(),
            None => modal_dof_points(cell, ent_dofs, nloc),
        };
        // Vertex nodes sit at the mesh's vertices (bit for bit what the map gives at a reference
        // vertex); every other node is mapped from the last cell that holds it, in parallel.
        let at_vertices = vertex_dofs.iter().enumerate().all(|(v, &ld)| tab_nodes[ld] == ref_verts[v]);
        // Owners are tracked only for nodes that are not such vertices (none for P1).
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let base = if at_vertices { nverts } else { 0 };
        let owner: Vec<AtomicUsize> = (base..num_nodes).into_par_iter().map(|_| AtomicUsize::new(0)).collect();
        if !owner.is_empty() {
            cell_nodes.par_iter().enumerate().for_each(|(k, &node)| {
                if node >= base {
                    owner[node - base].fetch_max(k + 1, Relaxed);
                }
            });
        }
        node_coords.par_iter_mut().enumerate().for_each(|(node, x)| {
            if node < base {
                *x = mesh.coords[node];
            } else if let k @ 1.. = owner[node - base].load(Relaxed) {
                *x = mesh.map_point((k - 1) / nloc, tab_nodes[(k - 1) % nloc]).0;
            }
        });
        Ok(DofMap { nodes_per_cell: nloc, cell_nodes, num_nodes, node_coords, signs, owned: num_nodes, nodes_are_cells: false })
    }

    /// Sign of local dof `i` of cell `c` (±1 for modal elements, 1 otherwise).
    #[inline]
    pub fn sign(&self, c: usize, i: usize) -> f64 {
        self.signs.as_ref().map_or(1.0, |s| s[c * self.nodes_per_cell + i])
    }

    /// Global nodes of cell `c`.
    pub fn cell(&self, c: usize) -> &[usize] {
        &self.cell_nodes[c * self.nodes_per_cell..(c + 1) * self.nodes_per_cell]
    }

    pub fn num_cells(&self) -> usize {
        self.cell_nodes.len() / self.nodes_per_cell.max(1)
    }
}

/// Reference points of modal dofs: the centroid of the entity each dof belongs to.
fn modal_dof_points(cell: CellType, ent_dofs: &[Vec<Vec<usize>>], nloc: usize) -> Vec<[f64; 3]> {
    let rv = cell.reference_vertices();
    let mut pts = vec![[0.0; 3]; nloc];
    for (d, ents) in ent_dofs.iter().enumerate() {
        let verts = local_entities(cell, d);
        for (e, dofs) in ents.iter().enumerate() {
            let vs = &verts[e];
            let mut c = [0.0; 3];
            for &v in vs {
                for k in 0..3 {
                    c[k] += rv[v][k] / vs.len() as f64;
                }
            }
            for &i in dofs {
                pts[i] = c;
            }
        }
    }
    pts
}

/// Give every shared local entity (edge or face, as lists of local vertices) a global id, by
/// sorting (sorted-vertex-key, cell, local entity) triples: deterministic and parallel.
/// Returns ids indexed by `cell * ents.len() + local_entity`.
fn number_shared_entities(mesh: &Mesh, ents: &[Vec<usize>]) -> Vec<usize> {
    let ncells = mesh.num_cells();
    let ne = ents.len();
    let mut keys: Vec<([usize; 4], usize)> = (0..ncells * ne)
        .into_par_iter()
        .map(|i| {
            let (c, e) = (i / ne, i % ne);
            let cv = mesh.cell(c);
            let mut k = [usize::MAX; 4];
            for (j, &v) in ents[e].iter().enumerate() {
                k[j] = cv[v];
            }
            k[..ents[e].len()].sort_unstable();
            (k, i)
        })
        .collect();
    keys.par_sort_unstable();
    let mut ids = vec![0usize; ncells * ne];
    let mut id = 0usize;
    for j in 0..keys.len() {
        if j > 0 && keys[j].0 != keys[j - 1].0 {
            id += 1;
        }
        ids[keys[j].1] = id;
    }
    ids
}
