//! Reader for Gmsh MSH 4.1 files, ASCII and binary, and legacy MSH 2.2 files (ASCII).
//!
//! What becomes of the file:
//! - cells are the elements of the highest dimension present (one shape only); each gets the first
//!   physical tag of its entity, 0 if it has none;
//! - elements one dimension lower on entities with physical tags become [`BoundaryFacet`]s, one per
//!   physical tag (a curve in two physical groups gives each of its facets twice);
//! - second-order elements keep only their corner vertices: galerkin's geometry is linear, so the
//!   curved edges of a high-order mesh are flattened and mid-edge/face nodes are dropped;
//! - nodes are renumbered compactly in increasing Gmsh tag order; nodes used only by point (or
//!   other lower-dimensional) elements are dropped, and a node no element uses is an error;
//! - physical names become `tag_names` with their dimension;
//! - MSH 2.2 (ASCII): an element's first tag is its physical group and its second its elementary
//!   entity; each (dimension, physical, elementary) triple becomes an entity of that one physical
//!   tag, so the rules above apply unchanged.
//!
//! Errors name the file, the section and the line (ASCII) or byte offset (binary).
use super::{BoundaryFacet, CellType, Mesh};
use crate::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Read a `.msh` file (MSH 4.1, ASCII or binary).
pub fn read_msh(path: &Path) -> Result<Mesh> {
    read_msh_with_notes(path).map(|(m, _)| m)
}

/// [`read_msh`], with remarks for the run's report (cells reoriented, ...). Only a regular file is
/// read, and no further than its size.
pub fn read_msh_with_notes(path: &Path) -> Result<(Mesh, Vec<String>)> {
    let data = crate::io::input::read_regular_file(path, "mesh file")?;
    parse_msh_with_notes(&data, &path.display().to_string())
}

/// Parse MSH 4.1 data; `source` names it in error messages (usually the file path).
pub fn parse_msh(data: &[u8], source: &str) -> Result<Mesh> {
    parse_msh_with_notes(data, source).map(|(m, _)| m)
}

/// [`parse_msh`], with remarks for the run's report.
pub fn parse_msh_with_notes(data: &[u8], source: &str) -> Result<(Mesh, Vec<String>)> {
    parse_msh_with_cell_elements(data, source).map(|(m, n, _)| (m, n))
}

/// [`parse_msh_with_notes`], with the Gmsh element tag of each cell (what the file's cell data,
/// `$ElementData`, is keyed by: see [`super::gmsh_data`]).
pub fn parse_msh_with_cell_elements(data: &[u8], source: &str) -> Result<(Mesh, Vec<String>, Vec<usize>)> {
    let mut r = Reader::new(data, source);
    let mut file = MshFile::default();
    walk_sections(&mut r, |r, header| {
        match header {
            "PhysicalNames" => {
                r.section = "$PhysicalNames";
                read_physical_names(r, &mut file)?;
            }
            "Entities" => {
                r.section = "$Entities";
                read_entities(r, &mut file)?;
            }
            "Nodes" => {
                r.section = "$Nodes";
                if r.legacy {
                    read_nodes_22(r, &mut file)?;
                } else {
                    read_nodes(r, &mut file)?;
                }
            }
            "Elements" => {
                r.section = "$Elements";
                if r.legacy {
                    read_elements_22(r, &mut file)?;
                } else {
                    read_elements(r, &mut file)?;
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    file.into_mesh(source, data, r.binary.is_some())
}

/// A Gmsh element type as galerkin sees it: its linear shape (`None` for points) and node count.
fn element_type(code: i32) -> Option<(Option<CellType>, usize)> {
    use CellType::*;
    Some(match code {
        1 => (Some(Interval), 2),
        2 => (Some(Triangle), 3),
        3 => (Some(Quadrilateral), 4),
        4 => (Some(Tetrahedron), 4),
        5 => (Some(Hexahedron), 8),
        8 => (Some(Interval), 3),
        9 => (Some(Triangle), 6),
        10 => (Some(Quadrilateral), 9),
        11 => (Some(Tetrahedron), 10),
        12 => (Some(Hexahedron), 27),
        15 => (None, 1),
        16 => (Some(Quadrilateral), 8),
        17 => (Some(Hexahedron), 20),
        _ => return None,
    })
}

/// Elements of one shape read from the file, corners only, as indices into [`MshFile::nodes`].
/// Point elements (`shape: None`, one corner) matter only as the facets of 1D meshes.
struct Block {
    shape: Option<CellType>,
    entity: (usize, i32),
    corners: Vec<usize>,
    /// (Gmsh element tag, byte offset of the element in the file), so errors name the file's own
    /// element and its line.
    elements: Vec<(usize, usize)>,
}

impl Block {
    fn dim(&self) -> usize {
        self.entity.0
    }

    fn corners_per_element(&self) -> usize {
        self.shape.map_or(1, CellType::num_vertices)
    }
}

#[derive(Default)]
struct MshFile {
    /// (dimension, physical tag, name, line)
    names: Vec<(usize, i32, String, usize)>,
    /// Physical tags of each (dimension, entity tag).
    entity_physicals: HashMap<(usize, i32), Vec<i32>>,
    /// (Gmsh node tag, coordinates) in file order.
    nodes: Vec<(usize, [f64; 3])>,
    index: Option<NodeIndex>,
    /// `used[i]`: node `i` appears in some element (any node of it, high-order ones included).
    used: Vec<bool>,
    blocks: Vec<Block>,
}

/// Gmsh node tag -> position in the node list: a dense offset when the tags are contiguous (what
/// Gmsh writes), a hash map when they are sparse.
enum NodeIndex {
    Contiguous { first: usize },
    Sparse(HashMap<usize, usize>),
}

impl MshFile {
    fn node(&self, tag: usize) -> Option<usize> {
        match self.index.as_ref()? {
            NodeIndex::Contiguous { first } => {
                tag.checked_sub(*first).filter(|&i| i < self.nodes.len())
            }
            NodeIndex::Sparse(map) => map.get(&tag).copied(),
        }
    }

    /// Select cells and tagged facets, renumber the nodes they use and build the validated mesh.
    fn into_mesh(self, source: &str, data: &[u8], binary: bool) -> Result<(Mesh, Vec<String>, Vec<usize>)> {
        let here = |what: &str| format!("{source}, {what}");
        if self.index.is_none() {
            return Err(Error::mesh(
                here("$Nodes"),
                "the file has no $Nodes section",
            ));
        }
        let mut shapes = self.blocks.iter().filter_map(|b| b.shape);
        let first = shapes.next().ok_or_else(|| {
            Error::mesh(
                here("$Elements"),
                "the file has no elements of dimension 1 or more",
            )
        })?;
        let shape = shapes.fold(first, |a, b| if b.dim() > a.dim() { b } else { a });
        let dim = shape.dim();
        if let Some(other) = self
            .blocks
            .iter()
            .filter_map(|b| b.shape)
            .find(|b| b.dim() == dim && *b != shape)
        {
            return Err(Error::Unsupported(format!(
                "{source}: mixed cell types at dimension {dim} ({shape} and {other}); a galerkin mesh holds one cell shape"
            )));
        }
        if let Some(i) = self.used.iter().position(|&u| !u) {
            return Err(Error::mesh(
                here("$Nodes"),
                format!("dangling node {}: no element uses it", self.nodes[i].0),
            ));
        }

        // Compact numbering of the cell corners, in increasing Gmsh tag order.
        let mut is_corner = vec![false; self.nodes.len()];
        for b in self.blocks.iter().filter(|b| b.dim() == dim) {
            for &v in &b.corners {
                is_corner[v] = true;
            }
        }
        let mut order: Vec<usize> = (0..self.nodes.len()).filter(|&i| is_corner[i]).collect();
        order.sort_unstable_by_key(|&i| self.nodes[i].0);
        let mut new_id = vec![usize::MAX; self.nodes.len()];
        for (k, &i) in order.iter().enumerate() {
            new_id[i] = k;
        }
        let coords: Vec<[f64; 3]> = order.iter().map(|&i| self.nodes[i].1).collect();

        let first_physical = |e: &(usize, i32)| {
            self.entity_physicals
                .get(e)
                .and_then(|p| p.first().copied())
                .unwrap_or(0)
        };
        let mut cells = Vec::new();
        let mut cell_tags = Vec::new();
        let mut boundary = Vec::new();
        let mut cell_elements = Vec::new();
        let mut facet_elements = Vec::new();
        for b in &self.blocks {
            let nv = b.corners_per_element();
            if b.dim() == dim {
                cell_elements.extend_from_slice(&b.elements);
                cells.extend(b.corners.iter().map(|&v| new_id[v]));
                cell_tags.extend(std::iter::repeat_n(
                    first_physical(&b.entity),
                    b.corners.len() / nv,
                ));
            } else if b.dim() + 1 == dim {
                let physicals = self
                    .entity_physicals
                    .get(&b.entity)
                    .map_or(&[][..], |p| p.as_slice());
                for (facet, &element) in b.corners.chunks_exact(nv).zip(&b.elements) {
                    if let Some(&v) = facet.iter().find(|&&v| new_id[v] == usize::MAX) {
                        let at = if binary { format!("byte offset {}", element.1) } else { format!("line {}", line_of(data, element.1)) };
                        return Err(Error::mesh(
                            format!("{source}, {at}, $Elements, element {}", element.0),
                            format!(
                                "node {} of boundary element {} is a vertex of no cell",
                                self.nodes[v].0, element.0
                            ),
                        ));
                    }
                    for &tag in physicals {
                        facet_elements.push(element);
                        boundary.push(BoundaryFacet {
                            vertices: facet.iter().map(|&v| new_id[v]).collect(),
                            tag,
                        });
                    }
                }
            }
        }
        let tag_names: BTreeMap<_, _> = self
            .names
            .into_iter()
            .map(|(d, t, name, _)| (name, (d, t)))
            .collect();
        let names = FileNames {
            source,
            data,
            binary,
            cells: cell_elements,
            node_tags: order.iter().map(|&i| self.nodes[i].0).collect(),
        };
        let mut notes = Vec::new();
        let flipped = super::validate::reorient_inverted(shape, &coords, &mut cells);
        if flipped > 0 {
            notes.push(format!(
                "{source}: {flipped} of {} cells were negatively oriented and have been reoriented (vertex order reversed, as DOLFINx and MFEM do)",
                cell_tags.len()
            ));
        }
        // The reader's parts are consistent by construction (corners per element, one tag per
        // cell); validation names what it finds by the file's own tags.
        let mesh = Mesh { dim: shape.dim(), coords, cell_type: shape, cells, cell_tags, boundary, tag_names };
        super::validate::validate_named(&mesh, &names)?;
        // A boundary element that is not a facet of any cell is named now, by its element tag.
        if let Err(e) = mesh.boundary_facet_cells() {
            let msg = e.to_string();
            let facet = msg.split("boundary facet ").nth(1).and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next()).and_then(|t| t.parse::<usize>().ok());
            return Err(match facet.and_then(|i| facet_elements.get(i)) {
                Some(&(tag, pos)) => Error::mesh(
                    names.place(pos, tag),
                    format!("boundary element {tag} (nodes {}) is not a facet of any cell", {
                        let f = &mesh.boundary[facet.unwrap_or(0)];
                        f.vertices.iter().map(|&v| names.node_tags[v].to_string()).collect::<Vec<_>>().join(", ")
                    }),
                ),
                None => e,
            });
        }
        let elements = names.cells.iter().map(|&(tag, _)| tag).collect();
        Ok((mesh, notes, elements))
    }
}

/// How validation names a Gmsh file's cells and vertices: by the file's own element and node tags,
/// with the line (ASCII) or byte offset (binary) of the element.
struct FileNames<'a> {
    source: &'a str,
    data: &'a [u8],
    binary: bool,
    /// (element tag, byte offset) of each cell.
    cells: Vec<(usize, usize)>,
    /// Gmsh node tag of each vertex.
    node_tags: Vec<usize>,
}

impl FileNames<'_> {
    fn place(&self, pos: usize, tag: usize) -> String {
        let at = if self.binary { format!("byte offset {pos}") } else { format!("line {}", line_of(self.data, pos)) };
        format!("{}, {at}, $Elements, element {tag}", self.source)
    }
}

impl super::validate::Names for FileNames<'_> {
    fn cell(&self, c: usize) -> String {
        match self.cells.get(c) {
            Some(&(tag, pos)) => self.place(pos, tag),
            None => format!("{}, cell {c}", self.source),
        }
    }
    fn node(&self, v: usize) -> String {
        self.node_tags.get(v).map_or_else(|| format!("vertex {v}"), |t| format!("node {t}"))
    }
    fn node_location(&self, v: usize) -> String {
        format!("{}, $Nodes, {}", self.source, self.node(v))
    }
    fn other(&self, what: &str) -> String {
        format!("{}, {what}", self.source)
    }
}

/// Walk a file's sections: `$MeshFormat` first (read here, so the numbers of a binary file are
/// known), then each other section through `read`, which says whether it read it (its `$End…` is
/// then checked) or leaves it to be skipped. The mesh reader and the `$ElementData` views share it.
pub(super) fn walk_sections<'a>(r: &mut Reader<'a>, mut read: impl FnMut(&mut Reader<'a>, &'a str) -> Result<bool>) -> Result<()> {
    let mut seen_format = false;
    while let Some(header) = r.section_header()? {
        let done = if header == "MeshFormat" {
            r.section = "$MeshFormat";
            read_format(r)?;
            seen_format = true;
            true
        } else if !seen_format {
            return Err(r.error("the file must start with $MeshFormat"));
        } else {
            read(r, header)?
        };
        if done {
            r.expect_end(header)?;
        } else {
            r.skip_section(header)?;
        }
    }
    Ok(())
}

fn read_format(r: &mut Reader) -> Result<()> {
    let version = r.ascii_token("format version")?;
    if version != "4.1" && version != "2.2" {
        return Err(r.error(format!(
            "MSH version {version} is not supported; 4.1 is, and 2.2 in ASCII (in Gmsh: Mesh.MshFileVersion = 4.1)"
        )));
    }
    let file_type = r.ascii_token("file type")?;
    let data_size: usize = r.ascii_parse("data size")?;
    if version == "2.2" {
        if file_type != "0" {
            return Err(r.error("binary MSH 2.2 is not supported: save as MSH 4.1 or as ASCII"));
        }
        r.legacy = true;
        return Ok(());
    }
    match file_type {
        "0" => Ok(()),
        "1" => {
            if data_size != 4 && data_size != 8 {
                return Err(r.error(format!(
                    "data size {data_size} (sizeof size_t) must be 4 or 8"
                )));
            }
            r.skip_line()?;
            let one = r.take(4, "endianness marker")?;
            let bytes = [one[0], one[1], one[2], one[3]];
            let big_endian = if i32::from_le_bytes(bytes) == 1 {
                false
            } else if i32::from_be_bytes(bytes) == 1 {
                true
            } else {
                return Err(r.error(format!("endianness marker {bytes:?} is not the integer 1")));
            };
            r.binary = Some(Binary {
                size_t: data_size,
                big_endian,
                marker: bytes,
            });
            Ok(())
        }
        other => Err(r.error(format!(
            "file type `{other}` must be 0 (ASCII) or 1 (binary)"
        ))),
    }
}

/// Physical names are ASCII even in binary files.
fn read_physical_names(r: &mut Reader, file: &mut MshFile) -> Result<()> {
    let count: usize = r.ascii_parse("number of physical names")?;
    r.plausible(count, "number of physical names", r.line_or_offset())?;
    for _ in 0..count {
        let dim: usize = r.ascii_parse("physical dimension")?;
        let tag: i32 = r.ascii_parse("physical tag")?;
        let line = r.line();
        let rest = r.rest_of_line()?;
        let name = rest.trim().trim_matches('"').to_string();
        if let Some((_, _, _, first)) = file.names.iter().find(|n| n.2 == name) {
            return Err(r.error(format!(
                "physical name `{name}` is defined twice (lines {first} and {line})"
            )));
        }
        file.names.push((dim, tag, name, line));
    }
    Ok(())
}

fn read_entities(r: &mut Reader, file: &mut MshFile) -> Result<()> {
    let counts = [
        r.count("number of points")?,
        r.count("number of curves")?,
        r.count("number of surfaces")?,
        r.count("number of volumes")?,
    ];
    for (dim, &count) in counts.iter().enumerate() {
        for _ in 0..count {
            let tag = r.int("entity tag")?;
            let nbox = if dim == 0 { 3 } else { 6 };
            for _ in 0..nbox {
                r.float("entity bounding box")?;
            }
            let nphys = r.count("number of physical tags")?;
            let mut physicals = Vec::with_capacity(nphys.min(r.remaining()));
            for _ in 0..nphys {
                physicals.push(r.int("physical tag")?);
            }
            if dim > 0 {
                let nbound = r.count("number of bounding entities")?;
                for _ in 0..nbound {
                    r.int("bounding entity tag")?;
                }
            }
            file.entity_physicals.insert((dim, tag), physicals);
        }
    }
    Ok(())
}

fn read_nodes(r: &mut Reader, file: &mut MshFile) -> Result<()> {
    if file.index.is_some() {
        return Err(r.error("a second $Nodes section"));
    }
    let nblocks = r.count("number of node blocks")?;
    let total = r.count("number of nodes")?;
    let _min_tag = r.size("minimum node tag")?;
    let _max_tag = r.size("maximum node tag")?;
    let mut nodes = Vec::with_capacity(total.min(r.remaining()));
    for _ in 0..nblocks {
        let entity_dim = r.int("entity dimension")?;
        let _entity = r.int("entity tag")?;
        let parametric = r.int("parametric flag")?;
        let count = r.count("number of nodes in block")?;
        let first = nodes.len();
        for _ in 0..count {
            nodes.push((r.size("node tag")?, [0.0; 3]));
        }
        let extra = if parametric == 1 {
            entity_dim.clamp(0, 3) as usize
        } else {
            0
        };
        for node in &mut nodes[first..] {
            let at = r.line_or_offset();
            for x in node.1.iter_mut() {
                *x = r.float("node coordinate")?;
            }
            if node.1.iter().any(|x| !x.is_finite()) {
                return Err(r.error_at(
                    at,
                    format!("node {} has a non-finite coordinate {:?}", node.0, node.1),
                ));
            }
            for _ in 0..extra {
                r.float("parametric coordinate")?;
            }
        }
    }
    if nodes.len() != total {
        return Err(r.error(format!(
            "the header announces {total} nodes but the blocks hold {}",
            nodes.len()
        )));
    }
    let first = nodes.first().map_or(0, |n| n.0);
    let index = if nodes.iter().enumerate().all(|(i, n)| n.0 == first + i) {
        NodeIndex::Contiguous { first }
    } else {
        let mut map = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            if map.insert(n.0, i).is_some() {
                return Err(r.error(format!("node tag {} appears twice", n.0)));
            }
        }
        NodeIndex::Sparse(map)
    };
    file.used = vec![false; nodes.len()];
    file.nodes = nodes;
    file.index = Some(index);
    Ok(())
}

fn read_elements(r: &mut Reader, file: &mut MshFile) -> Result<()> {
    if file.index.is_none() {
        return Err(r.error("$Elements must come after $Nodes"));
    }
    let nblocks = r.count("number of element blocks")?;
    let total = r.count("number of elements")?;
    let _min_tag = r.size("minimum element tag")?;
    let _max_tag = r.size("maximum element tag")?;
    let mut read = 0usize;
    for _ in 0..nblocks {
        let entity_dim = r.int("entity dimension")?;
        let entity_tag = r.int("entity tag")?;
        let at = r.line_or_offset();
        let code = r.int("element type")?;
        let count = r.count("number of elements in block")?;
        let (shape, nn) = element_type(code).ok_or_else(|| {
            r.error_at(
                at,
                format!("unknown or unsupported element type {code} (supported: 1-5, 8-12, 15-17)"),
            )
        })?;
        if entity_dim < 0 || shape.map_or(0, CellType::dim) != entity_dim as usize {
            return Err(r.error_at(
                at,
                format!("element type {code} does not have dimension {entity_dim}"),
            ));
        }
        let corners_per = shape.map_or(1, CellType::num_vertices);
        let mut corners = Vec::with_capacity(count.saturating_mul(corners_per).min(r.remaining()));
        let mut elements = Vec::with_capacity(count.min(r.remaining()));
        for _ in 0..count {
            let pos = r.line_or_offset();
            let element = r.size("element tag")?;
            elements.push((element, pos.0));
            for k in 0..nn {
                let at = r.line_or_offset();
                let tag = r.size("element node tag")?;
                let v = file.node(tag).ok_or_else(|| {
                    r.error_at(
                        at,
                        format!("element {element} refers to node {tag}, which is not in $Nodes"),
                    )
                })?;
                file.used[v] = true;
                if k < corners_per {
                    corners.push(v);
                }
            }
        }
        read += count;
        file.blocks.push(Block {
            shape,
            entity: (entity_dim as usize, entity_tag),
            corners,
            elements,
        });
    }
    if read != total {
        return Err(r.error(format!(
            "the header announces {total} elements but the blocks hold {read}"
        )));
    }
    Ok(())
}

/// MSH 2.2 `$Nodes`: the count, then `tag x y z` per node.
fn read_nodes_22(r: &mut Reader, file: &mut MshFile) -> Result<()> {
    if file.index.is_some() {
        return Err(r.error("a second $Nodes section"));
    }
    let total = r.count("number of nodes")?;
    let mut nodes = Vec::with_capacity(total.min(r.remaining()));
    let mut map = HashMap::with_capacity(total.min(r.remaining()));
    for i in 0..total {
        let at = r.line_or_offset();
        let tag = r.size("node tag")?;
        let x = [r.float("node coordinate")?, r.float("node coordinate")?, r.float("node coordinate")?];
        if x.iter().any(|v| !v.is_finite()) {
            return Err(r.error_at(at, format!("node {tag} has a non-finite coordinate {x:?}")));
        }
        if map.insert(tag, i).is_some() {
            return Err(r.error_at(at, format!("node tag {tag} appears twice")));
        }
        nodes.push((tag, x));
    }
    file.used = vec![false; nodes.len()];
    file.nodes = nodes;
    file.index = Some(NodeIndex::Sparse(map));
    Ok(())
}

/// MSH 2.2 `$Elements`: the count, then `tag type ntags tags… nodes…` per element; runs of one
/// (type, physical, elementary) become blocks of a synthetic entity holding that physical tag.
fn read_elements_22(r: &mut Reader, file: &mut MshFile) -> Result<()> {
    if file.index.is_none() {
        return Err(r.error("$Elements must come after $Nodes"));
    }
    let total = r.count("number of elements")?;
    let mut entities: HashMap<(usize, i32, i32), i32> = HashMap::new();
    let mut current: Option<(i32, (usize, i32))> = None;
    for _ in 0..total {
        let pos = r.line_or_offset();
        let element = r.size("element tag")?;
        let code = r.int("element type")?;
        let (shape, nn) = element_type(code).ok_or_else(|| r.error_at(pos, format!("element {element}: unknown or unsupported element type {code} (supported: 1-5, 8-12, 15-17)")))?;
        let ntags = r.count("number of element tags")?;
        let mut tags = Vec::with_capacity(ntags.min(8));
        for _ in 0..ntags {
            tags.push(r.int("element tag")?);
        }
        let (physical, elementary) = (tags.first().copied().unwrap_or(0), tags.get(1).copied().unwrap_or(0));
        let dim = shape.map_or(0, CellType::dim);
        let next = entities.len() as i32 + 1;
        let id = *entities.entry((dim, physical, elementary)).or_insert(next);
        file.entity_physicals.entry((dim, id)).or_insert_with(|| if physical != 0 { vec![physical] } else { Vec::new() });
        if current != Some((code, (dim, id))) {
            file.blocks.push(Block { shape, entity: (dim, id), corners: Vec::new(), elements: Vec::new() });
            current = Some((code, (dim, id)));
        }
        let corners_per = shape.map_or(1, CellType::num_vertices);
        let mut vs = Vec::with_capacity(nn);
        for _ in 0..nn {
            let at = r.line_or_offset();
            let tag = r.size("element node tag")?;
            let v = file.node(tag).ok_or_else(|| r.error_at(at, format!("element {element} refers to node {tag}, which is not in $Nodes")))?;
            file.used[v] = true;
            vs.push(v);
        }
        let b = file.blocks.last_mut().ok_or_else(|| r.error("no element block"))?;
        b.corners.extend_from_slice(&vs[..corners_per]);
        b.elements.push((element, pos.0));
    }
    Ok(())
}

#[derive(Clone, Copy)]
struct Binary {
    size_t: usize,
    big_endian: bool,
    /// The four bytes of the endianness marker, quoted when the data does not fit it.
    marker: [u8; 4],
}

/// A cursor over the file that reads numbers as ASCII tokens or, after a binary $MeshFormat, as
/// raw bytes; section parsers are written once against it.
pub(super) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    source: &'a str,
    pub(super) section: &'static str,
    binary: Option<Binary>,
    /// MSH 2.2 (ASCII): `$Nodes` and `$Elements` in the legacy layout.
    legacy: bool,
}

/// A position to report: byte offset, turned into a line number for ASCII files.
#[derive(Clone, Copy)]
pub(super) struct At(usize);

impl<'a> Reader<'a> {
    /// A reader at the start of `data`, ASCII until a binary `$MeshFormat` is read.
    pub(super) fn new(data: &'a [u8], source: &'a str) -> Self {
        Reader { data, pos: 0, source, section: "", binary: None, legacy: false }
    }

    /// Whether a binary `$MeshFormat` has been read.
    pub(super) fn is_binary(&self) -> bool {
        self.binary.is_some()
    }

    fn line(&self) -> usize {
        line_of(self.data, self.pos)
    }

    pub(super) fn line_or_offset(&self) -> At {
        let mut p = self.pos;
        if self.binary.is_none() {
            while p < self.data.len() && self.data[p].is_ascii_whitespace() {
                p += 1;
            }
        }
        At(p)
    }

    pub(super) fn error_at(&self, at: At, message: impl Into<String>) -> Error {
        let place = match self.binary {
            Some(_) => format!("byte offset {}", at.0),
            None => format!("line {}", line_of(self.data, at.0)),
        };
        let section = if self.section.is_empty() {
            String::new()
        } else {
            format!(", {}", self.section)
        };
        Error::mesh(format!("{}, {place}{section}", self.source), message)
    }

    pub(super) fn error(&self, message: impl Into<String>) -> Error {
        self.error_at(self.line_or_offset(), message)
    }

    pub(super) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(super) fn skip_whitespace(&mut self) {
        while self.pos < self.data.len() && self.data[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.remaining() < n {
            let hint = match self.binary {
                Some(b) => format!(
                    "file truncated, or its numbers not in the {}-endian order its endianness marker {:?} says?",
                    if b.big_endian { "big" } else { "little" },
                    b.marker
                ),
                None => "file truncated?".into(),
            };
            return Err(self.error(format!("unexpected end of file reading {what} ({hint})")));
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn ascii_token(&mut self, what: &str) -> Result<&'a str> {
        self.skip_whitespace();
        let start = self.pos;
        while self.pos < self.data.len() && !self.data[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.error(format!(
                "unexpected end of file reading {what} (file truncated?)"
            )));
        }
        std::str::from_utf8(&self.data[start..self.pos])
            .map_err(|_| self.error_at(At(start), format!("{what} is not valid text")))
    }

    pub(super) fn ascii_parse<T: std::str::FromStr>(&mut self, what: &str) -> Result<T> {
        let at = self.line_or_offset();
        let token = self.ascii_token(what)?;
        token
            .parse()
            .map_err(|_| self.error_at(at, format!("expected {what}, found `{token}`")))
    }

    /// Read `N` bytes in file byte order as a little-endian array.
    fn binary_bytes<const N: usize>(&mut self, what: &str, big_endian: bool) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        b.copy_from_slice(self.take(N, what)?);
        if big_endian {
            b.reverse();
        }
        Ok(b)
    }

    pub(super) fn int(&mut self, what: &str) -> Result<i32> {
        match self.binary {
            Some(b) => Ok(i32::from_le_bytes(self.binary_bytes(what, b.big_endian)?)),
            None => self.ascii_parse(what),
        }
    }

    /// A count of items that follow: each takes at least one byte, so a count larger than the
    /// bytes left is a corrupt or truncated file, or (binary) data in the other byte order than
    /// the endianness marker says; said so here rather than as a later "unexpected end of file".
    fn count(&mut self, what: &str) -> Result<usize> {
        let at = self.line_or_offset();
        let v = self.size(what)?;
        self.plausible(v, what, at)?;
        Ok(v)
    }

    pub(super) fn plausible(&self, v: usize, what: &str, at: At) -> Result<()> {
        if v <= self.remaining() {
            return Ok(());
        }
        let why = match self.binary {
            Some(b) => format!(
                "the file is truncated, or its numbers are not in the byte order its endianness marker {:?} says ({}-endian)",
                b.marker,
                if b.big_endian { "big" } else { "little" }
            ),
            None => "the file is truncated or the count is wrong".into(),
        };
        Err(self.error_at(at, format!("{what} {v} cannot fit in the {} bytes left: {why}", self.remaining())))
    }

    fn size(&mut self, what: &str) -> Result<usize> {
        match self.binary {
            Some(b) if b.size_t == 4 => {
                Ok(u32::from_le_bytes(self.binary_bytes(what, b.big_endian)?) as usize)
            }
            Some(b) => {
                let at = self.line_or_offset();
                let v = u64::from_le_bytes(self.binary_bytes(what, b.big_endian)?);
                usize::try_from(v)
                    .map_err(|_| self.error_at(at, format!("{what} {v} is too large")))
            }
            None => self.ascii_parse(what),
        }
    }

    pub(super) fn float(&mut self, what: &str) -> Result<f64> {
        match self.binary {
            Some(b) => Ok(f64::from_le_bytes(self.binary_bytes(what, b.big_endian)?)),
            None => self.ascii_parse(what),
        }
    }

    fn skip_line(&mut self) -> Result<()> {
        self.rest_of_line().map(|_| ())
    }

    pub(super) fn rest_of_line(&mut self) -> Result<&'a str> {
        let start = self.pos;
        while self.pos < self.data.len() && self.data[self.pos] != b'\n' {
            self.pos += 1;
        }
        let line = &self.data[start..self.pos];
        self.pos = (self.pos + 1).min(self.data.len());
        std::str::from_utf8(line).map_err(|_| self.error_at(At(start), "line is not valid text"))
    }

    /// The next `$Name` header, or `None` at the end of the file.
    pub(super) fn section_header(&mut self) -> Result<Option<&'a str>> {
        self.section = "";
        self.skip_whitespace();
        if self.pos == self.data.len() {
            return Ok(None);
        }
        let at = self.line_or_offset();
        let line = self.rest_of_line()?.trim();
        match line.strip_prefix('$') {
            Some(name) if !name.is_empty() && !name.starts_with("End") => Ok(Some(name)),
            _ => Err(self.error_at(
                at,
                format!("expected a section header like $Nodes, found `{line}`"),
            )),
        }
    }

    pub(super) fn expect_end(&mut self, name: &str) -> Result<()> {
        let at = self.line_or_offset();
        let token = self.ascii_token(&format!("$End{name}"))?;
        if token.strip_prefix("$End") == Some(name) {
            Ok(())
        } else {
            Err(self.error_at(
                at,
                format!("expected $End{name}, found `{token}` (wrong counts in the section?)"),
            ))
        }
    }

    /// Skip a section galerkin does not use ($Periodic, $NodeData, …) up to its `$End` line.
    pub(super) fn skip_section(&mut self, name: &str) -> Result<()> {
        let end = format!("\n$End{name}");
        let rest = &self.data[self.pos.saturating_sub(1)..];
        match rest.windows(end.len()).position(|w| w == end.as_bytes()) {
            Some(p) => {
                self.pos = self.pos.saturating_sub(1) + p + end.len();
                Ok(())
            }
            None => Err(self.error(format!("section ${name} has no $End{name}"))),
        }
    }
}

fn line_of(data: &[u8], pos: usize) -> usize {
    1 + data[..pos.min(data.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::validate::det_jacobian;
    use std::path::PathBuf;

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name)
    }

    /// Sum of cell measures (simplex meshes: constant J).
    fn measure(m: &Mesh) -> f64 {
        let fact = (1..=m.dim).product::<usize>() as f64;
        (0..m.num_cells())
            .map(|c| det_jacobian(m.cell_type, &m.map_point(c, [0.; 3]).1) / fact)
            .sum()
    }

    /// The tagged facets, deduplicated, are exactly the geometric boundary.
    fn assert_boundary_complete(m: &Mesh) {
        let mut tagged = m.boundary_facet_cells().unwrap();
        tagged.sort_unstable();
        tagged.dedup();
        assert_eq!(tagged, m.exterior_facets());
    }

    fn err(r: Result<Mesh>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn ascii_and_binary_fixtures_agree() {
        let a = read_msh(&data("square_tri_ascii.msh")).unwrap();
        let b = read_msh(&data("square_tri_binary.msh")).unwrap();
        // Gmsh prints 16 significant digits in ASCII, so coordinates agree to an ulp, the rest exactly.
        assert_eq!(a.coords.len(), b.coords.len());
        for (p, q) in a.coords.iter().zip(&b.coords) {
            assert!(
                (0..3).all(|k| (p[k] - q[k]).abs() <= 2.0 * f64::EPSILON),
                "{p:?} vs {q:?}"
            );
        }
        assert_eq!(
            Mesh {
                coords: b.coords.clone(),
                ..a.clone()
            },
            b
        );
        assert_eq!((a.cell_type, a.num_cells()), (CellType::Triangle, 162));
        assert!((measure(&a) - 1.0).abs() < 1e-13);
        assert!(a.cell_tags.iter().all(|&t| t == 10));
        assert_eq!(a.tag("walls", 1).unwrap(), 5);
        assert_eq!(a.tag("domain", 2).unwrap(), 10);
        // 4 sides of 8 edges, bottom and top edges listed again under "walls".
        let count = |t: i32| a.boundary.iter().filter(|f| f.tag == t).count();
        assert_eq!(
            [count(1), count(2), count(3), count(4), count(5)],
            [8, 8, 8, 8, 16]
        );
        let cells = a.boundary_facet_cells().unwrap();
        for (f, &(c, lf)) in a.boundary.iter().zip(&cells) {
            let mut want: Vec<usize> = a.cell_type.facets()[lf]
                .iter()
                .map(|&l| a.cell(c)[l])
                .collect();
            let mut got = f.vertices.clone();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(want, got);
            let y = if f.tag == 1 {
                Some(0.0)
            } else if f.tag == 3 {
                Some(1.0)
            } else {
                None
            };
            if let Some(y) = y {
                assert!(f.vertices.iter().all(|&v| a.coords[v][1] == y));
            }
        }
        assert_boundary_complete(&a);
    }

    #[test]
    fn second_order_mesh_reduces_to_its_corners() {
        let linear = read_msh(&data("square_tri_ascii.msh")).unwrap();
        let quadratic = read_msh(&data("square_tri6.msh")).unwrap();
        assert_eq!(quadratic, linear);
    }

    #[test]
    fn tet_fixture_fills_the_cube() {
        let m = read_msh(&data("cube_tet.msh")).unwrap();
        assert_eq!(m.cell_type, CellType::Tetrahedron);
        assert!((measure(&m) - 1.0).abs() < 1e-13, "{}", measure(&m));
        assert!(m.cell_tags.iter().all(|&t| t == 7));
        assert_eq!(m.tag("xmax", 2).unwrap(), 2);
        for f in &m.boundary {
            let x = if f.tag == 1 { 0.0 } else { 1.0 };
            assert!(f.vertices.iter().all(|&v| m.coords[v][0] == x));
        }
        m.boundary_facet_cells().unwrap();
    }

    #[test]
    fn plate_with_hole_example_has_its_groups() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/meshes/plate-with-hole.msh");
        let m = read_msh(&path).unwrap();
        assert!(
            (1900..2200).contains(&m.num_cells()),
            "{} cells",
            m.num_cells()
        );
        let hole = m.tag("hole", 1).unwrap();
        let mut perimeter = 0.0;
        for f in m.boundary.iter().filter(|f| f.tag == hole) {
            for &v in &f.vertices {
                let r = (m.coords[v][0] - 0.5).hypot(m.coords[v][1] - 0.5);
                assert!((r - 0.2).abs() < 1e-12, "hole vertex at radius {r}");
            }
            let (p, q) = (m.coords[f.vertices[0]], m.coords[f.vertices[1]]);
            perimeter += (p[0] - q[0]).hypot(p[1] - q[1]);
        }
        // The hole is a polygon inscribed in the circle: area and perimeter just below the disk's.
        let disk = std::f64::consts::PI * 0.04;
        assert!(
            perimeter < 0.4 * std::f64::consts::PI && perimeter > 0.99 * 0.4 * std::f64::consts::PI
        );
        let area = measure(&m);
        assert!(area > 2.0 - disk && area < 2.0 - 0.98 * disk, "area {area}");
        for (name, x) in [("left", 0.0), ("right", 2.0)] {
            let t = m.tag(name, 1).unwrap();
            assert!(m
                .boundary
                .iter()
                .filter(|f| f.tag == t)
                .all(|f| f.vertices.iter().all(|&v| m.coords[v][0] == x)));
        }
        assert_eq!(m.tag("plate", 2).unwrap(), 10);
        assert_boundary_complete(&m);
    }

    /// Two triangles on the unit square with node tags `t`; curve 1 ("left", x = 0) is tagged 1
    /// and surface 1 ("plate") 2.
    fn square(t: [usize; 4]) -> String {
        format!(
            "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n1 1 \"left\"\n2 2 \"plate\"\n$EndPhysicalNames\n\
             $Entities\n0 1 1 0\n1 0 0 0 0 1 0 1 1 0\n1 0 0 0 1 1 0 1 2 0\n$EndEntities\n\
             $Nodes\n2 4 1 4\n1 1 0 2\n{a}\n{d}\n0 0 0\n0 1 0\n2 1 0 2\n{b}\n{c}\n1 0 0\n1 1 0\n$EndNodes\n\
             $Elements\n2 3 1 3\n1 1 1 1\n1 {a} {d}\n2 1 2 2\n2 {a} {b} {c}\n3 {a} {c} {d}\n$EndElements\n",
            a = t[0], b = t[1], c = t[2], d = t[3]
        )
    }

    fn parse(text: &str) -> Result<Mesh> {
        parse_msh(text.as_bytes(), "test.msh")
    }

    #[test]
    fn inline_square_and_its_variants() {
        let m = parse(&square([1, 2, 3, 4])).unwrap();
        assert_eq!(
            m.coords,
            vec![[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]]
        );
        assert_eq!(m.cells, vec![0, 1, 2, 0, 2, 3]);
        assert_eq!(
            m.boundary,
            vec![BoundaryFacet {
                vertices: vec![0, 3],
                tag: 1
            }]
        );
        // Sparse tags renumber to the same mesh; unknown sections are skipped.
        assert_eq!(parse(&square([10, 200, 3000, 40000])).unwrap(), m);
        let periodic = square([1, 2, 3, 4]).replace(
            "$Nodes",
            "$Periodic\n1\n1 1 1\n$EndPeriodic\n$Comments\n$EndComments\n$Nodes",
        );
        assert_eq!(parse(&periodic).unwrap(), m);
        // A node used only by a point element is dropped.
        let point = square([1, 2, 3, 4])
            .replace("$Nodes\n2 4 1 4", "$Nodes\n3 5 1 5")
            .replace("$EndNodes", "0 9 0 1\n5\n7 7 0\n$EndNodes")
            .replace("$Elements\n2 3 1 3", "$Elements\n3 4 1 4\n0 9 15 1\n4 5");
        assert_eq!(parse(&point).unwrap(), m);
    }

    #[test]
    fn negatively_oriented_cells_are_reoriented_with_a_note() {
        let (m, notes) = parse_msh_with_notes(square([1, 2, 3, 4]).replace("2 1 2 3", "2 1 3 2").as_bytes(), "test.msh").unwrap();
        let (reference, none) = parse_msh_with_notes(square([1, 2, 3, 4]).as_bytes(), "test.msh").unwrap();
        assert!(none.is_empty());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("1 of 2 cells") && notes[0].contains("reoriented"), "{notes:?}");
        assert_eq!(m.cell(0), reference.cell(0));
        assert!((measure(&m) - 1.0).abs() < 1e-14);
    }

    #[test]
    fn wrong_endianness_marker_is_named() {
        // Little-endian data under a big-endian marker: the first count is absurd, and the error
        // says what the marker said.
        let mut bin = binary_square(false, 8);
        let at = bin.windows(4).position(|w| w == 1i32.to_le_bytes()).unwrap();
        bin[at..at + 4].copy_from_slice(&1i32.to_be_bytes());
        let e = err(parse_msh(&bin, "bin.msh"));
        assert!(e.contains("endianness marker [0, 0, 0, 1] says (big-endian)") && e.contains("byte offset"), "{e}");
        let mut bad = binary_square(false, 8);
        bad[at..at + 4].copy_from_slice(&[7, 0, 0, 0]);
        let e = err(parse_msh(&bad, "bin.msh"));
        assert!(e.contains("endianness marker [7, 0, 0, 0] is not the integer 1"), "{e}");
    }

    #[test]
    fn one_dimensional_mesh_takes_point_elements_as_facets() {
        let text = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n0 1 \"left\"\n1 2 \"rod\"\n\
                    $EndPhysicalNames\n$Entities\n2 1 0 0\n1 0 0 0 1 1\n2 1 0 0 0\n1 0 0 0 1 0 0 1 2 2 1 -2\n\
                    $EndEntities\n$Nodes\n3 3 1 3\n0 1 0 1\n1\n0 0 0\n0 2 0 1\n2\n1 0 0\n1 1 0 1\n3\n0.5 0 0\n\
                    $EndNodes\n$Elements\n3 4 1 4\n0 1 15 1\n1 1\n0 2 15 1\n2 2\n1 1 1 2\n3 1 3\n4 3 2\n$EndElements\n";
        let m = parse(text).unwrap();
        assert_eq!(m.cell_type, CellType::Interval);
        assert_eq!(m.coords, vec![[0., 0., 0.], [1., 0., 0.], [0.5, 0., 0.]]);
        assert_eq!(m.cells, vec![0, 2, 2, 1]);
        assert_eq!(m.cell_tags, vec![2, 2]);
        assert_eq!(
            m.boundary,
            vec![BoundaryFacet {
                vertices: vec![0],
                tag: 1
            }]
        );
        assert_eq!(m.tag("left", 0).unwrap(), 1);
    }

    /// Minimal binary writer for the inline square, to test both byte orders and 4-byte size_t.
    fn binary_square(big_endian: bool, size_t: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let int = |o: &mut Vec<u8>, v: i32| {
            o.extend(if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        let size = |o: &mut Vec<u8>, v: usize| match (size_t, big_endian) {
            (4, true) => o.extend((v as u32).to_be_bytes()),
            (4, false) => o.extend((v as u32).to_le_bytes()),
            (_, true) => o.extend((v as u64).to_be_bytes()),
            (_, false) => o.extend((v as u64).to_le_bytes()),
        };
        let float = |o: &mut Vec<u8>, v: f64| {
            o.extend(if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        out.extend(format!("$MeshFormat\n4.1 1 {size_t}\n").bytes());
        int(&mut out, 1);
        out.extend(b"\n$EndMeshFormat\n$PhysicalNames\n2\n1 1 \"left\"\n2 2 \"plate\"\n$EndPhysicalNames\n$Entities\n");
        for n in [0, 1, 1, 0] {
            size(&mut out, n);
        }
        for (bbox, phys) in [([0., 0., 0., 0., 1., 0.], 1), ([0., 0., 0., 1., 1., 0.], 2)] {
            int(&mut out, 1);
            bbox.iter().for_each(|&x| float(&mut out, x));
            size(&mut out, 1);
            int(&mut out, phys);
            size(&mut out, 0);
        }
        out.extend(b"\n$EndEntities\n$Nodes\n");
        [2, 4, 1, 4].iter().for_each(|&n| size(&mut out, n));
        for (dim, tags, xy) in [
            (1, [1, 4], [[0., 0.], [0., 1.]]),
            (2, [2, 3], [[1., 0.], [1., 1.]]),
        ] {
            [dim, 1, 0].iter().for_each(|&n| int(&mut out, n));
            size(&mut out, 2);
            tags.iter().for_each(|&t| size(&mut out, t));
            xy.iter()
                .for_each(|p| [p[0], p[1], 0.0].iter().for_each(|&x| float(&mut out, x)));
        }
        out.extend(b"\n$EndNodes\n$Elements\n");
        [2, 3, 1, 3].iter().for_each(|&n| size(&mut out, n));
        for (dim, code, elements) in [
            (1, 1, vec![vec![1, 1, 4]]),
            (2, 2, vec![vec![2, 1, 2, 3], vec![3, 1, 3, 4]]),
        ] {
            [dim, 1, code].iter().for_each(|&n| int(&mut out, n));
            size(&mut out, elements.len());
            elements.iter().flatten().for_each(|&t| size(&mut out, t));
        }
        out.extend(b"\n$EndElements\n");
        out
    }

    #[test]
    fn binary_byte_orders_and_size_t_widths_agree_with_ascii() {
        let ascii = parse(&square([1, 2, 3, 4])).unwrap();
        for (be, st) in [(false, 8), (true, 8), (false, 4), (true, 4)] {
            assert_eq!(
                parse_msh(&binary_square(be, st), "bin.msh").unwrap(),
                ascii,
                "big endian {be}, size_t {st}"
            );
        }
    }

    #[test]
    fn bad_inputs_are_named() {
        let ok = square([1, 2, 3, 4]);
        let cases: Vec<(String, Vec<&str>)> = vec![
            (
                ok.replace("4.1 0 8", "3.0 0 8"),
                vec!["MSH version 3.0", "line 2", "$MeshFormat"],
            ),
            (
                ok.replace("1 0 0\n1 1 0", "1 nan 0\n1 1 0"),
                vec!["node 2 has a non-finite", "line 24", "$Nodes"],
            ),
            // Three collinear nodes: a degenerate cell, named by its element tag and line.
            (
                ok.replace("1 1 0\n$EndNodes", "0.5 0 0\n$EndNodes"),
                vec!["element 2", "line 32", "degenerate cell"],
            ),
            // A repeated node: named by the file's node tag.
            (ok.replace("3 1 3 4", "3 1 4 4"), vec!["element 3", "node 4 repeated"]),
            // A boundary element that is not a facet of any cell.
            (
                ok.replace("1 1 1 1\n1 1 4", "1 1 1 1\n1 2 4"),
                vec!["boundary element 1", "not a facet of any cell", "line 30"],
            ),
            (
                ok.replace("3 1 3 4", "3 1 3 9"),
                vec!["refers to node 9", "line 33", "$Elements"],
            ),
            (
                ok.replace("2 1 2 2", "2 1 42 2"),
                vec!["element type 42", "line 31"],
            ),
            (
                ok.replace("2 3 1 3", "3 3 1 3")
                    .replace("2 1 2 2\n2 1 2 3\n", "2 1 3 1\n2 1 2 3 4\n2 1 2 1\n"),
                vec![
                    "mixed cell types at dimension 2",
                    "quadrilateral and triangle",
                ],
            ),
            (
                ok.replace("2 4 1 4", "2 5 1 5").replace(
                    "1 1 0 2\n1\n4\n0 0 0\n0 1 0",
                    "1 1 0 3\n1\n4\n5\n0 0 0\n0 1 0\n3 3 0",
                ),
                vec!["dangling node 5"],
            ),
            (
                ok[..ok.find("1 1 0\n$EndNodes").unwrap_or(0)].to_string(),
                vec!["unexpected end of file", "$Nodes"],
            ),
            (
                ok.replace("2 3 1 3", "2 4 1 4"),
                vec!["announces 4 elements"],
            ),
            (
                ok.replace("$EndElements", "$EndNodes"),
                vec!["expected $EndElements"],
            ),
            (
                ok.replace("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n", ""),
                vec!["must start with $MeshFormat"],
            ),
        ];
        for (text, needles) in cases {
            let e = match parse(&text) {
                Ok(_) => panic!("no error for the case expecting {needles:?}"),
                Err(e) => e.to_string(),
            };
            for n in needles {
                assert!(e.contains(n), "`{n}` not in `{e}`");
            }
            assert!(e.contains("test.msh"), "{e}");
        }
        let bin = std::fs::read(data("square_tri_binary.msh")).unwrap();
        let e = err(parse_msh(&bin[..bin.len() / 2], "half.msh"));
        assert!(e.contains("truncated") && e.contains("byte offset"), "{e}");
        let e = err(read_msh(Path::new("/nonexistent/mesh.msh")));
        assert!(e.contains("/nonexistent/mesh.msh"), "{e}");
    }
}
