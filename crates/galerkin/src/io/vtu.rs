//! VTK XML unstructured grids (`.vtu`) for ParaView.
//!
//! Geometry is the linear mesh (`mesh.coords`, `mesh.cells`, `CellType::vtk_id`); fields of
//! higher-degree spaces are given by the caller at the mesh vertices. Four encodings
//! ([`VtuEncoding`]), all exact: inline base64 (the default of [`VtuWriter::new`]: an 8-byte
//! little-endian byte count precedes the data in one base64 block), raw appended binary (one
//! `<AppendedData encoding="raw">` section, no base64: the fastest to write and read, what large
//! runs use), zlib-compressed appended binary (VTK's `vtkZLibDataCompressor` with independent
//! blocks, so blocks are compressed in parallel), and ASCII for reading files by eye. Arrays are
//! encoded in parallel (rayon), then written at their offsets by several threads.
use super::atomic::write_atomic_parts;
use super::outdir::{parts_record, OutputFile};
use super::{base64, xml::escape_attr};
use crate::mesh::Mesh;
use crate::{Error, Result};
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

/// Name under which the mesh's region tags are always written.
pub const REGION_FIELD: &str = "region";

/// A number type VTK can store in a `DataArray`.
trait VtkNumber: Copy {
    const VTK_TYPE: &'static str;
    /// Write the little-endian bytes into `out` (exactly `size_of::<Self>()` long).
    fn put_le(self, out: &mut [u8]);
    fn put_ascii(self, out: &mut String);
}

macro_rules! vtk_number {
    ($t:ty, $name:literal, $fmt:literal) => {
        impl VtkNumber for $t {
            const VTK_TYPE: &'static str = $name;
            fn put_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn put_ascii(self, out: &mut String) {
                use std::fmt::Write as _;
                let _ = write!(out, $fmt, self);
            }
        }
    };
}
// `{:e}` is Rust's shortest round-trip form in scientific notation: exact, and never 300 zeros.
vtk_number!(f64, "Float64", "{:e}");
vtk_number!(i32, "Int32", "{}");
vtk_number!(i64, "Int64", "{}");
vtk_number!(u8, "UInt8", "{}");

/// How `<DataArray>`s are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VtuEncoding {
    Ascii,
    /// Base64 inside each `<DataArray>`.
    #[default]
    Inline,
    /// Raw little-endian bytes in one `<AppendedData>` section.
    Appended,
    /// zlib-compressed blocks in one `<AppendedData>` section.
    Compressed,
}

/// Uncompressed bytes per zlib block (each block compresses independently, in parallel).
const ZLIB_BLOCK: usize = 1 << 18;

/// The little-endian bytes of `f(0..len)`, converted in parallel straight into the output, after
/// VTK's 8-byte (UInt64) byte count when `counted` (uncompressed arrays). One pass, no
/// intermediate array: the connectivity of 10^7 cells is a gigabyte.
fn le_bytes<T: VtkNumber>(len: usize, f: impl Fn(usize) -> T + Sync, counted: bool) -> Vec<u8> {
    use rayon::prelude::*;
    let size = std::mem::size_of::<T>();
    let head = if counted { 8 } else { 0 };
    let mut out = vec![0u8; head + len * size];
    let (h, body) = out.split_at_mut(head);
    if counted {
        h.copy_from_slice(&((len * size) as u64).to_le_bytes());
    }
    let per = ((1 << 16) / size).max(1);
    body.par_chunks_mut(per * size).enumerate().for_each(|(k, o)| {
        for (i, b) in o.chunks_exact_mut(size).enumerate() {
            f(k * per + i).put_le(b);
        }
    });
    out
}

/// VTK's compressed layout: UInt64 header `[blocks, block size, last block size, compressed sizes…]`
/// followed by the zlib streams.
fn zlib_blocks(raw: &[u8]) -> io::Result<Vec<u8>> {
    use rayon::prelude::*;
    let blocks: Vec<Vec<u8>> = raw
        .par_chunks(ZLIB_BLOCK)
        .map(|b| {
            let mut z = flate2::write::ZlibEncoder::new(Vec::with_capacity(b.len() / 2), flate2::Compression::fast());
            z.write_all(b)?;
            z.finish()
        })
        .collect::<io::Result<_>>()?;
    let last = if raw.is_empty() { 0 } else { raw.len() - (blocks.len() - 1) * ZLIB_BLOCK };
    let mut out = Vec::with_capacity(8 * (3 + blocks.len()) + blocks.iter().map(Vec::len).sum::<usize>());
    for h in [blocks.len(), ZLIB_BLOCK, last].into_iter().chain(blocks.iter().map(Vec::len)) {
        out.extend_from_slice(&(h as u64).to_le_bytes());
    }
    for b in &blocks {
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// One `<DataArray>` encoded: its opening tag's attributes, and either inline text or the bytes of
/// its block in the appended section.
struct Encoded {
    head: String,
    inline: Option<String>,
    block: Vec<u8>,
}

/// Encode one `<DataArray>` (type, name, components, and its `len` values `f(0..len)`).
fn encode<T: VtkNumber>(name: Option<&str>, ncomp: usize, len: usize, f: impl Fn(usize) -> T + Sync, enc: VtuEncoding) -> io::Result<Encoded> {
    let head = array_head(T::VTK_TYPE, name, ncomp, enc);
    Ok(match enc {
        VtuEncoding::Ascii => {
            let data: Vec<T> = (0..len).map(&f).collect();
            let mut text = String::new();
            for tuple in data.chunks(ncomp.max(1)) {
                text.push_str("          ");
                for (k, &v) in tuple.iter().enumerate() {
                    if k > 0 {
                        text.push(' ');
                    }
                    v.put_ascii(&mut text);
                }
                text.push('\n');
            }
            Encoded { head, inline: Some(text), block: Vec::new() }
        }
        VtuEncoding::Inline => {
            let mut text = String::from("          ");
            base64::encode_into(&le_bytes(len, f, true), &mut text);
            text.push('\n');
            Encoded { head, inline: Some(text), block: Vec::new() }
        }
        VtuEncoding::Appended => Encoded { head, inline: None, block: le_bytes(len, f, true) },
        VtuEncoding::Compressed => Encoded { head, inline: None, block: zlib_blocks(&le_bytes(len, f, false))? },
    })
}

#[derive(Debug)]
enum Values<'a> {
    Real(Cow<'a, [f64]>),
    Int(&'a [i32]),
}

#[derive(Debug)]
struct Field<'a> {
    name: String,
    ncomp: usize,
    values: Values<'a>,
}

impl Field<'_> {
    fn encode(&self, enc: VtuEncoding) -> io::Result<Encoded> {
        match &self.values {
            Values::Real(v) => encode(Some(&self.name), self.ncomp, v.len(), |i| v[i], enc),
            Values::Int(v) => encode(Some(&self.name), self.ncomp, v.len(), |i| v[i], enc),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Location {
    Point,
    Cell,
}

/// Collects point and cell fields on a mesh and writes them as one `.vtu` file.
///
/// Field data is borrowed, not copied (except 2-component vectors, padded to 3 so ParaView treats
/// them as vectors). Region tags are always written as the cell field `"region"`.
///
/// ```no_run
/// # fn f(mesh: &galerkin::mesh::Mesh, u: &[f64], flux: &[f64]) -> galerkin::Result<()> {
/// use galerkin::io::VtuWriter;
/// VtuWriter::new(mesh).point_scalar("u", u)?.point_vector("flux", 2, flux)?.write("out/u.vtu")
/// # }
/// ```
#[derive(Debug)]
pub struct VtuWriter<'a> {
    mesh: &'a Mesh,
    encoding: VtuEncoding,
    /// Whether the region tags are written (cell data).
    regions: bool,
    point_fields: Vec<Field<'a>>,
    cell_fields: Vec<Field<'a>>,
}

impl<'a> VtuWriter<'a> {
    pub fn new(mesh: &'a Mesh) -> Self {
        VtuWriter {
            mesh,
            encoding: VtuEncoding::Inline,
            regions: true,
            point_fields: Vec::new(),
            cell_fields: Vec::new(),
        }
    }

    /// Write ASCII instead of base64 binary arrays.
    pub fn ascii(&mut self, on: bool) -> &mut Self {
        self.encoding = if on { VtuEncoding::Ascii } else { VtuEncoding::Inline };
        self
    }

    /// How arrays are stored (see [`VtuEncoding`]).
    pub fn encoding(&mut self, e: VtuEncoding) -> &mut Self {
        self.encoding = e;
        self
    }

    /// Whether the mesh's region tags are written as the cell field `region` (default true; off
    /// writes point data only).
    pub fn regions(&mut self, on: bool) -> &mut Self {
        self.regions = on;
        self
    }

    /// A scalar per mesh vertex.
    pub fn point_scalar(&mut self, name: &str, values: &'a [f64]) -> Result<&mut Self> {
        self.add(
            Location::Point,
            name,
            1,
            Values::Real(Cow::Borrowed(values)),
        )
    }

    /// An `ncomp`-component vector per mesh vertex, interleaved (`[v0x, v0y, v1x, v1y, …]`).
    /// Two-component vectors are padded with a zero z so ParaView can glyph and warp by them.
    pub fn point_vector(
        &mut self,
        name: &str,
        ncomp: usize,
        values: &'a [f64],
    ) -> Result<&mut Self> {
        if ncomp == 0 {
            return Err(Error::invalid(format!(
                "point field `{name}`: a vector needs at least one component"
            )));
        }
        self.check_len(Location::Point, name, ncomp, values.len())?;
        let values = if ncomp == 2 {
            Cow::Owned(
                values
                    .chunks_exact(2)
                    .flat_map(|v| [v[0], v[1], 0.0])
                    .collect(),
            )
        } else {
            Cow::Borrowed(values)
        };
        self.add(
            Location::Point,
            name,
            if ncomp == 2 { 3 } else { ncomp },
            Values::Real(values),
        )
    }

    /// A scalar per cell (e.g. an error indicator or a material coefficient).
    pub fn cell_scalar(&mut self, name: &str, values: &'a [f64]) -> Result<&mut Self> {
        self.add(Location::Cell, name, 1, Values::Real(Cow::Borrowed(values)))
    }

    /// An integer per cell (e.g. a partition or refinement level).
    pub fn cell_int(&mut self, name: &str, values: &'a [i32]) -> Result<&mut Self> {
        self.add(Location::Cell, name, 1, Values::Int(values))
    }

    fn count(&self, at: Location) -> usize {
        match at {
            Location::Point => self.mesh.num_vertices(),
            Location::Cell => self.mesh.num_cells(),
        }
    }

    fn check_len(&self, at: Location, name: &str, ncomp: usize, got: usize) -> Result<()> {
        let expected = self.count(at) * ncomp;
        if got != expected {
            let kind = if at == Location::Point {
                "point"
            } else {
                "cell"
            };
            return Err(Error::dim(
                format!("{kind} field `{name}` ({ncomp} per {kind})"),
                expected,
                got,
            ));
        }
        Ok(())
    }

    fn add(
        &mut self,
        at: Location,
        name: &str,
        ncomp: usize,
        values: Values<'a>,
    ) -> Result<&mut Self> {
        let len = match &values {
            Values::Real(v) => v.len(),
            Values::Int(v) => v.len(),
        };
        self.check_len(at, name, ncomp, len)?;
        let fields = match at {
            Location::Point => &mut self.point_fields,
            Location::Cell => &mut self.cell_fields,
        };
        if name.is_empty() {
            return Err(Error::invalid("VTU field names must not be empty"));
        }
        if fields.iter().any(|f| f.name == name) || (at == Location::Cell && name == REGION_FIELD) {
            return Err(Error::invalid(format!(
                "VTU field `{name}` is given twice (`region` is reserved for cell tags)"
            )));
        }
        fields.push(Field {
            name: name.to_string(),
            ncomp,
            values,
        });
        Ok(self)
    }

    /// Write the file atomically (see [`write_atomic_parts`]).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        self.write_recorded(path).map(|_| ())
    }

    /// Write the file atomically and return its record (size, SHA-256) with the time of each
    /// step. The arrays are encoded in parallel into blocks; the blocks are written at their
    /// offsets by several threads while one more hashes them from memory, so the file is neither
    /// funnelled through one `write` loop nor read back for its digest.
    pub fn write_recorded(&self, path: impl AsRef<Path>) -> Result<(OutputFile, VtuTimes)> {
        let path = path.as_ref();
        let mesh = self.mesh;
        let nv = mesh.cell_type.num_vertices();
        if !mesh.cells.len().is_multiple_of(nv) {
            return Err(Error::dim(
                format!("mesh connectivity ({} vertices per {})", nv, mesh.cell_type),
                mesh.num_cells() * nv,
                mesh.cells.len(),
            ));
        }
        let region = Field {
            name: REGION_FIELD.into(),
            ncomp: 1,
            values: Values::Int(&mesh.cell_tags),
        };
        self.check_len(Location::Cell, REGION_FIELD, 1, mesh.cell_tags.len())?;
        let t = Instant::now();
        let (head, blocks, tail) = self.render(&region).map_err(|e| Error::io(path, e))?;
        let encode = t.elapsed().as_secs_f64();
        let parts: Vec<&[u8]> = std::iter::once(head.as_bytes()).chain(blocks.iter().map(Vec::as_slice)).chain(std::iter::once(tail.as_bytes())).collect();
        let (written, (record, hash)) = rayon::join(
            || write_atomic_parts(path, &parts),
            || {
                let t = Instant::now();
                (parts_record(path, &parts), t.elapsed().as_secs_f64())
            },
        );
        let w = written?;
        Ok((record, VtuTimes { encode, write: w.write, sync: w.sync, hash }))
    }

    /// The file as (XML up to the appended data, the appended blocks in order, the rest).
    fn render(&self, region: &Field) -> io::Result<(String, Vec<Vec<u8>>, &'static str)> {
        use rayon::prelude::*;
        let mesh = self.mesh;
        let enc = self.encoding;
        let nv = mesh.cell_type.num_vertices();
        let nc = mesh.num_cells();
        // Every array of the file, in file order, encoded in parallel.
        let flat = mesh.coords.as_flattened();
        let points = || encode(Some("Points"), 3, flat.len(), |i| flat[i], enc);
        // Int32 indices where they fit (ParaView reads either), half the bytes of Int64.
        let small = small_indices(mesh);
        let cells = &mesh.cells;
        let connectivity = || {
            if small {
                encode(Some("connectivity"), 1, cells.len(), |i| cells[i] as i32, enc)
            } else {
                encode(Some("connectivity"), 1, cells.len(), |i| cells[i] as i64, enc)
            }
        };
        let offsets = || {
            if small {
                encode(Some("offsets"), 1, nc, |c| ((c + 1) * nv) as i32, enc)
            } else {
                encode(Some("offsets"), 1, nc, |c| ((c + 1) * nv) as i64, enc)
            }
        };
        let id = mesh.cell_type.vtk_id();
        let types = || encode(Some("types"), 1, nc, |_| id, enc);
        let cell_fields: Vec<&Field> = self.regions.then_some(region).into_iter().chain(&self.cell_fields).collect();
        let ((pf, cf), (geo, cells)) = rayon::join(
            || {
                rayon::join(
                    || self.point_fields.par_iter().map(|f| f.encode(enc)).collect::<io::Result<Vec<_>>>(),
                    || cell_fields.par_iter().map(|f| f.encode(enc)).collect::<io::Result<Vec<_>>>(),
                )
            },
            || rayon::join(points, || rayon::join(connectivity, || rayon::join(offsets, types))),
        );
        let (pf, cf, geo) = (pf?, cf?, geo?);
        let (conn, (offs, types)) = cells;
        let cells = [conn?, offs?, types?];
        fn entries(a: &[Encoded]) -> Vec<Entry<'_>> {
            a.iter().map(Encoded::entry).collect()
        }
        let w = xml_head(mesh, enc, &entries(&pf), &entries(&cf), &geo.entry(), &entries(&cells), false);
        if !matches!(enc, VtuEncoding::Appended | VtuEncoding::Compressed) {
            return Ok((w, Vec::new(), ""));
        }
        let blocks = pf.into_iter().chain(cf).chain(std::iter::once(geo)).chain(cells).map(|a| a.block).collect();
        Ok((w, blocks, APPENDED_TAIL))
    }
}

/// What follows the appended section's last block.
const APPENDED_TAIL: &str = "\n  </AppendedData>\n</VTKFile>\n";

/// Whether cell indices are written as Int32 (they fit; ParaView reads either): half the bytes.
fn small_indices(mesh: &Mesh) -> bool {
    mesh.cells.len() < i32::MAX as usize && mesh.num_vertices() < i32::MAX as usize
}

/// A `<DataArray>`'s attributes (type, name, components, format).
fn array_head(vtk_type: &str, name: Option<&str>, ncomp: usize, enc: VtuEncoding) -> String {
    let name_attr = name.map(|n| format!(r#" Name="{}""#, escape_attr(n))).unwrap_or_default();
    let format = match enc {
        VtuEncoding::Ascii => "ascii",
        VtuEncoding::Inline => "binary",
        _ => "appended",
    };
    format!(r#"type="{vtk_type}"{name_attr} NumberOfComponents="{ncomp}" format="{format}""#)
}

/// One `<DataArray>` as the XML needs it: its attributes, and either its inline text or the size
/// of its block in the appended section.
struct Entry<'e> {
    head: &'e str,
    inline: Option<&'e str>,
    size: usize,
}

impl Encoded {
    fn entry(&self) -> Entry<'_> {
        Entry { head: &self.head, inline: self.inline.as_deref(), size: self.block.len() }
    }
}

/// The XML of the file: whole for inline encodings, up to the start of the appended data
/// (`_`) otherwise, the blocks' offsets counted from their sizes in the section's order: point
/// data, cell data, points, cells — or, `fields_last`, the point data's blocks after the rest.
fn xml_head(mesh: &Mesh, enc: VtuEncoding, pf: &[Entry], cf: &[Entry], geo: &Entry, cells: &[Entry], fields_last: bool) -> String {
    use std::fmt::Write as _;
    fn put(w: &mut String, offset: &mut usize, a: &Entry) {
        match a.inline {
            Some(text) => {
                let _ = writeln!(w, "        <DataArray {}>", a.head);
                w.push_str(text);
                let _ = writeln!(w, "        </DataArray>");
            }
            None => {
                let _ = writeln!(w, r#"        <DataArray {} offset="{}"/>"#, a.head, offset);
                *offset += a.size;
            }
        }
    }
    let sizes = |a: &[Entry]| a.iter().map(|e| e.size).sum::<usize>();
    let mut offset = if fields_last { sizes(cf) + geo.size + sizes(cells) } else { 0 };
    let mut w = String::new();
    let _ = writeln!(w, r#"<?xml version="1.0"?>"#);
    let compressor = if enc == VtuEncoding::Compressed { r#" compressor="vtkZLibDataCompressor""# } else { "" };
    let _ = writeln!(w, r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64"{compressor}>"#);
    let _ = writeln!(w, "  <UnstructuredGrid>");
    let _ = writeln!(w, r#"    <Piece NumberOfPoints="{}" NumberOfCells="{}">"#, mesh.num_vertices(), mesh.num_cells());
    let sections: [(&str, &[Entry]); 4] = [("PointData", pf), ("CellData", cf), ("Points", std::slice::from_ref(geo)), ("Cells", cells)];
    for (k, (name, arrays)) in sections.into_iter().enumerate() {
        if k == 1 && fields_last {
            // The mesh's blocks start the section.
            offset = 0;
        }
        let _ = writeln!(w, "      <{name}>");
        for a in arrays {
            put(&mut w, &mut offset, a);
        }
        let _ = writeln!(w, "      </{name}>");
    }
    let _ = writeln!(w, "    </Piece>");
    let _ = writeln!(w, "  </UnstructuredGrid>");
    if matches!(enc, VtuEncoding::Appended | VtuEncoding::Compressed) {
        w.push_str("  <AppendedData encoding=\"raw\">\n   _");
    } else {
        let _ = writeln!(w, "</VTKFile>");
    }
    w
}

mod prepared;
pub use prepared::{VtuPrepared, VtuPreparing};

/// Seconds per step of [`VtuWriter::write_recorded`]: encoding the arrays, writing the bytes,
/// fsync and rename, and the SHA-256 of the file (computed while it is written).
#[derive(Clone, Copy, Debug, Default)]
pub struct VtuTimes {
    pub encode: f64,
    pub write: f64,
    pub sync: f64,
    pub hash: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::xml::{parse, Element};
    use crate::mesh::CellType;
    use std::collections::BTreeMap;

    /// Two triangles on the unit square, regions 1 and 2; built directly so the test does not
    /// depend on the generators.
    fn square() -> Mesh {
        Mesh {
            dim: 2,
            coords: vec![[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]],
            cell_type: CellType::Triangle,
            cells: vec![0, 1, 2, 0, 2, 3],
            cell_tags: vec![1, 2],
            boundary: vec![],
            tag_names: BTreeMap::new(),
        }
    }

    /// Decode a DataArray's numbers as f64, whatever its type and encoding.
    fn numbers(el: &Element) -> Vec<f64> {
        if el.attr("format") == Some("ascii") {
            return el
                .text
                .split_whitespace()
                .map(|s| s.parse::<f64>().unwrap())
                .collect();
        }
        assert_eq!(el.attr("format"), Some("binary"));
        let bytes = base64::decode(&el.text).unwrap();
        let nbytes = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let data = &bytes[8..];
        assert_eq!(
            nbytes,
            data.len(),
            "UInt64 header must count the payload bytes"
        );
        typed(el.attr("type").unwrap(), data)
    }

    /// Little-endian numbers of a VTK type, as f64.
    fn typed(ty: &str, data: &[u8]) -> Vec<f64> {
        match ty {
            "Float64" => data
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                .collect(),
            "Int64" => data
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap()) as f64)
                .collect(),
            "Int32" => data
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes(b.try_into().unwrap()) as f64)
                .collect(),
            "UInt8" => data.iter().map(|&b| b as f64).collect(),
            t => panic!("unexpected type {t}"),
        }
    }

    /// Array name -> (enclosing section, decoded numbers).
    type Arrays = BTreeMap<String, (String, Vec<f64>)>;

    /// An appended array's payload: after the count (raw) or inflated from VTK's zlib blocks.
    fn appended_payload(data: &[u8], compressed: bool) -> Vec<u8> {
        let word = |k: usize| u64::from_le_bytes(data[8 * k..8 * k + 8].try_into().unwrap()) as usize;
        if !compressed {
            return data[8..8 + word(0)].to_vec();
        }
        let (nblocks, block, last) = (word(0), word(1), word(2));
        let mut out = Vec::new();
        let mut at = 8 * (3 + nblocks);
        for k in 0..nblocks {
            let size = word(3 + k);
            let mut z = flate2::read::ZlibDecoder::new(&data[at..at + size]);
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut z, &mut b).unwrap();
            assert_eq!(b.len(), if k + 1 == nblocks { last } else { block }, "block {k}");
            out.extend(b);
            at += size;
        }
        out
    }

    fn read_arrays(path: &Path) -> (Vec<Element>, Arrays) {
        let bytes = std::fs::read(path).unwrap();
        // Raw appended data is not XML: parse the header, read the arrays at their offsets.
        let marker = b"<AppendedData encoding=\"raw\">";
        let (xml, appended) = match bytes.windows(marker.len()).position(|w| w == marker) {
            Some(i) => {
                let start = i + bytes[i..].iter().position(|&b| b == b'_').unwrap() + 1;
                (format!("{}</VTKFile>", String::from_utf8(bytes[..i].to_vec()).unwrap()), Some(&bytes[start..]))
            }
            None => (String::from_utf8(bytes.clone()).unwrap(), None),
        };
        let els = parse(&xml).unwrap();
        let compressed = els[0].attr("compressor") == Some("vtkZLibDataCompressor");
        let arrays = els
            .iter()
            .filter(|e| e.name == "DataArray")
            .map(|e| {
                let section = e.path.last().unwrap().clone();
                let values = if e.attr("format") == Some("appended") {
                    let off: usize = e.attr("offset").unwrap().parse().unwrap();
                    let raw = appended_payload(&appended.unwrap()[off..], compressed);
                    typed(e.attr("type").unwrap(), &raw)
                } else {
                    numbers(e)
                };
                (e.attr("Name").unwrap().to_string(), (section, values))
            })
            .collect();
        (els, arrays)
    }

    fn check_round_trip(enc: VtuEncoding) {
        let mesh = square();
        let u = [0.1, -2.5e-300, 3.0, f64::MAX];
        let grad = [1., 2., 3., 4., 5., 6., 7., 8.];
        let h = [0.5, 0.25];
        let part = [7, -3];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/sol.vtu");
        VtuWriter::new(&mesh)
            .encoding(enc)
            .point_scalar("u", &u)
            .unwrap()
            .point_vector("grad u", 2, &grad)
            .unwrap()
            .cell_scalar("h", &h)
            .unwrap()
            .cell_int("part", &part)
            .unwrap()
            .write(&path)
            .unwrap();
        let (els, a) = read_arrays(&path);
        let root = &els[0];
        assert_eq!(root.attr("type"), Some("UnstructuredGrid"));
        assert_eq!(root.attr("header_type"), Some("UInt64"));
        let piece = els.iter().find(|e| e.name == "Piece").unwrap();
        assert_eq!(piece.attr("NumberOfPoints"), Some("4"));
        assert_eq!(piece.attr("NumberOfCells"), Some("2"));
        assert_eq!(a["u"], ("PointData".into(), u.to_vec()));
        assert_eq!(
            a["grad u"],
            (
                "PointData".into(),
                vec![1., 2., 0., 3., 4., 0., 5., 6., 0., 7., 8., 0.]
            )
        );
        assert_eq!(a["h"], ("CellData".into(), h.to_vec()));
        assert_eq!(a["part"], ("CellData".into(), vec![7., -3.]));
        assert_eq!(a["region"], ("CellData".into(), vec![1., 2.]));
        let pts: Vec<f64> = mesh.coords.iter().flatten().copied().collect();
        assert_eq!(a["Points"], ("Points".into(), pts));
        assert_eq!(a["connectivity"].1, vec![0., 1., 2., 0., 2., 3.]);
        assert_eq!(a["offsets"].1, vec![3., 6.]);
        assert_eq!(a["types"].1, vec![5., 5.]);
        let grad_el = els
            .iter()
            .find(|e| e.attr("Name") == Some("grad u"))
            .unwrap();
        assert_eq!(grad_el.attr("NumberOfComponents"), Some("3"));
    }

    /// The prepared file (mesh part first, fields added later) holds the same arrays as the
    /// writer's, and its record is the file's.
    #[test]
    fn prepared_file_has_the_writers_arrays() {
        let dir = tempfile::tempdir().unwrap();
        let m = square();
        let u: Vec<f64> = (0..m.num_vertices()).map(|i| i as f64 * 0.25 - 1.0).collect();
        let v2: Vec<f64> = (0..2 * m.num_vertices()).map(|i| (i as f64).sin()).collect();
        let (a, b) = (dir.path().join("a.vtu"), dir.path().join("b.vtu"));
        let mut w = VtuWriter::new(&m);
        w.encoding(VtuEncoding::Appended);
        w.point_scalar("u", &u).unwrap().point_vector("v", 2, &v2).unwrap();
        w.write(&a).unwrap();
        let p = VtuPrepared::new(&m, &b, true, &[("u", 1), ("v", 2)]).unwrap();
        assert!(!b.exists(), "published before it was finished");
        assert!(p.finish(&[&u[..1]]).is_err());
        let p = VtuPrepared::new(&m, &b, true, &[("u", 1), ("v", 2)]).unwrap();
        let (record, _) = p.finish(&[&u, &v2]).unwrap();
        assert_eq!(record, crate::io::file_record(&b).unwrap());
        assert_eq!(read_arrays(&a).1, read_arrays(&b).1);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "a temporary was left behind");
    }

    /// The mesh part streamed through windows far smaller than its arrays (a window ending inside
    /// every array, the head longer than a window) writes the writer's arrays, with or without
    /// region tags, and its record (size, SHA-256) is the file's as read back.
    #[test]
    fn prepared_file_streamed_in_small_windows_has_the_writers_arrays() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = crate::mesh::generate::rectangle(23, 17, [0.0, 0.0], [1.0, 2.0], CellType::Triangle).unwrap();
        m.cell_tags.iter_mut().enumerate().for_each(|(c, t)| *t = (c % 5) as i32 - 2);
        let u: Vec<f64> = (0..m.num_vertices()).map(|i| (i as f64 * 0.7).cos()).collect();
        let v2: Vec<f64> = (0..2 * m.num_vertices()).map(|i| i as f64 / 3.0).collect();
        for (regions, window) in [(true, 100), (false, 777), (true, 1 << 20)] {
            let (a, b) = (dir.path().join(format!("w{window}.vtu")), dir.path().join(format!("p{window}.vtu")));
            let mut w = VtuWriter::new(&m);
            w.encoding(VtuEncoding::Appended).regions(regions);
            w.point_scalar("u", &u).unwrap().point_vector("v", 2, &v2).unwrap();
            w.write(&a).unwrap();
            let p = VtuPrepared::windowed(&m, &b, regions, &[("u", 1), ("v", 2)], window).unwrap();
            let (record, _) = p.finish(&[&u, &v2]).unwrap();
            assert_eq!(record, crate::io::file_record(&b).unwrap(), "window {window}");
            assert!(record.bytes as usize > 20 * window || window > 1000);
            let (arrays, expected) = (read_arrays(&b).1, read_arrays(&a).1);
            assert_eq!(arrays, expected, "window {window}");
            assert_eq!(arrays.contains_key("region"), regions);
        }
        let bad = VtuPrepared::new(&m, &dir.path().join("bad.vtu"), true, &[("u", 1), ("u", 2)]);
        assert!(matches!(bad, Err(Error::Invalid(_))));
    }

    /// A preparation dropped before it is finished (a run failing after it started) leaves
    /// neither the file nor its temporary.
    #[test]
    fn dropped_preparation_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.vtu");
        drop(VtuPreparing::spawn(std::sync::Arc::new(square()), path.clone(), true, vec![("u", 1)], true));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "something was left behind");
        let p = VtuPreparing::spawn(std::sync::Arc::new(square()), path.clone(), true, vec![("u", 1)], true).join().unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the temporary should exist before finish");
        drop(p);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "an unfinished file was left behind");
    }

    /// The preparation in its own pool and on the global pool write the same file, byte for byte.
    #[test]
    fn own_pool_and_global_pool_write_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let m = std::sync::Arc::new(square());
        let u: Vec<f64> = (0..m.num_vertices()).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let records: Vec<_> = [true, false]
            .into_iter()
            .map(|own| {
                let path = dir.path().join(format!("{own}.vtu"));
                let p = VtuPreparing::spawn(m.clone(), path, true, vec![("u", 1)], own).join().unwrap();
                p.finish(&[&u]).unwrap().0
            })
            .collect();
        assert_eq!((records[0].bytes, &records[0].sha256), (records[1].bytes, &records[1].sha256));
    }

    #[test]
    fn binary_round_trip_is_bit_exact() {
        for enc in [VtuEncoding::Inline, VtuEncoding::Appended, VtuEncoding::Compressed] {
            check_round_trip(enc);
        }
    }

    #[test]
    fn ascii_round_trip_is_exact() {
        check_round_trip(VtuEncoding::Ascii);
    }

    /// Arrays of many zlib blocks (a short last one) and raw arrays larger than one conversion
    /// chunk come back bit for bit; point data only leaves out the region tags.
    #[test]
    fn large_appended_arrays_round_trip() {
        let mesh = crate::mesh::generate::rectangle(300, 300, [0.0, 0.0], [1.0, 2.0], CellType::Triangle).unwrap();
        let u: Vec<f64> = (0..mesh.num_vertices()).map(|i| (i as f64 * 0.37).sin() * 1e3 + i as f64).collect();
        let dir = tempfile::tempdir().unwrap();
        let mut sizes = Vec::new();
        for enc in [VtuEncoding::Appended, VtuEncoding::Compressed] {
            let path = dir.path().join(format!("{enc:?}.vtu"));
            VtuWriter::new(&mesh).encoding(enc).regions(false).point_scalar("u", &u).unwrap().write(&path).unwrap();
            let (_, a) = read_arrays(&path);
            assert!(u.len() * 8 > 2 * ZLIB_BLOCK);
            assert_eq!(a["u"].1, u, "{enc:?}");
            assert_eq!(a["connectivity"].1, mesh.cells.iter().map(|&v| v as f64).collect::<Vec<_>>());
            assert!(!a.contains_key("region"));
            sizes.push(std::fs::metadata(&path).unwrap().len());
        }
        assert!(sizes[1] < sizes[0], "compressed {} vs raw {}", sizes[1], sizes[0]);
    }

    #[test]
    fn wrong_lengths_name_the_field() {
        let mesh = square();
        let mut w = VtuWriter::new(&mesh);
        let e = w.point_scalar("u", &[1.0; 3]).unwrap_err();
        assert!(
            matches!(&e, Error::Dimension { context, expected: 4, got: 3 } if context.contains("`u`")),
            "{e}"
        );
        let e = w.point_vector("v", 3, &[1.0; 8]).unwrap_err();
        assert!(
            matches!(&e, Error::Dimension { context, expected: 12, got: 8 } if context.contains("`v`")),
            "{e}"
        );
        let e = w.cell_scalar("h", &[1.0; 4]).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Dimension {
                    expected: 2,
                    got: 4,
                    ..
                }
            ),
            "{e}"
        );
        let e = w.cell_int("p", &[]).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Dimension {
                    expected: 2,
                    got: 0,
                    ..
                }
            ),
            "{e}"
        );
        assert!(matches!(
            w.point_vector("v", 0, &[]),
            Err(Error::Invalid(_))
        ));
        assert!(matches!(
            w.cell_int("region", &[0, 0]),
            Err(Error::Invalid(_))
        ));
        w.point_scalar("u", &[0.0; 4]).unwrap();
        assert!(matches!(
            w.point_scalar("u", &[0.0; 4]),
            Err(Error::Invalid(_))
        ));
    }

    #[test]
    fn inconsistent_mesh_tags_fail_without_a_file() {
        let mut mesh = square();
        mesh.cell_tags.pop();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.vtu");
        let e = VtuWriter::new(&mesh).write(&path).unwrap_err();
        assert!(
            matches!(&e, Error::Dimension { context, .. } if context.contains("region")),
            "{e}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn hexahedra_use_vtk_type_12() {
        let coords: Vec<[f64; 3]> = CellType::Hexahedron.reference_vertices().to_vec();
        let mesh = Mesh {
            dim: 3,
            coords,
            cell_type: CellType::Hexahedron,
            cells: (0..8).collect(),
            cell_tags: vec![0],
            boundary: vec![],
            tag_names: BTreeMap::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hex.vtu");
        VtuWriter::new(&mesh).write(&path).unwrap();
        let (_, a) = read_arrays(&path);
        assert_eq!(a["types"].1, vec![12.]);
        assert_eq!(a["offsets"].1, vec![8.]);
    }
}
