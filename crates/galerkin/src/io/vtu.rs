//! VTK XML unstructured grids (`.vtu`) for ParaView.
//!
//! Geometry is the linear mesh (`mesh.coords`, `mesh.cells`, `CellType::vtk_id`); fields of
//! higher-degree spaces are given by the caller at the mesh vertices. Arrays are inline base64
//! binary by default (`format="binary"`, `header_type="UInt64"`: an 8-byte little-endian byte count
//! precedes the data in one base64 block, uncompressed), which is exact and about 3× smaller than
//! ASCII; ASCII (`ascii(true)`) is for reading files by eye and diffing.
use super::atomic::write_atomic;
use super::{base64, xml::escape_attr};
use crate::mesh::Mesh;
use crate::{Error, Result};
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// Name under which the mesh's region tags are always written.
pub const REGION_FIELD: &str = "region";

/// A number type VTK can store in a `DataArray`.
trait VtkNumber: Copy {
    const VTK_TYPE: &'static str;
    fn put_le(self, out: &mut Vec<u8>);
    fn put_ascii(self, out: &mut String);
}

macro_rules! vtk_number {
    ($t:ty, $name:literal, $fmt:literal) => {
        impl VtkNumber for $t {
            const VTK_TYPE: &'static str = $name;
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
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

/// Write one `<DataArray>` element.
fn data_array<T: VtkNumber>(
    w: &mut dyn Write,
    name: Option<&str>,
    ncomp: usize,
    data: &[T],
    ascii: bool,
) -> io::Result<()> {
    let name_attr = name
        .map(|n| format!(r#" Name="{}""#, escape_attr(n)))
        .unwrap_or_default();
    let format = if ascii { "ascii" } else { "binary" };
    writeln!(
        w,
        r#"        <DataArray type="{}"{name_attr} NumberOfComponents="{ncomp}" format="{format}">"#,
        T::VTK_TYPE
    )?;
    let mut text = String::new();
    if ascii {
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
    } else {
        let nbytes = std::mem::size_of_val(data);
        let mut bytes = Vec::with_capacity(8 + nbytes);
        bytes.extend_from_slice(&(nbytes as u64).to_le_bytes());
        for &v in data {
            v.put_le(&mut bytes);
        }
        text.push_str("          ");
        base64::encode_into(&bytes, &mut text);
        text.push('\n');
    }
    w.write_all(text.as_bytes())?;
    writeln!(w, "        </DataArray>")
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
    fn write(&self, w: &mut dyn Write, ascii: bool) -> io::Result<()> {
        match &self.values {
            Values::Real(v) => data_array(w, Some(&self.name), self.ncomp, v, ascii),
            Values::Int(v) => data_array(w, Some(&self.name), self.ncomp, v, ascii),
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
    ascii: bool,
    point_fields: Vec<Field<'a>>,
    cell_fields: Vec<Field<'a>>,
}

impl<'a> VtuWriter<'a> {
    pub fn new(mesh: &'a Mesh) -> Self {
        VtuWriter {
            mesh,
            ascii: false,
            point_fields: Vec::new(),
            cell_fields: Vec::new(),
        }
    }

    /// Write ASCII instead of base64 binary arrays.
    pub fn ascii(&mut self, on: bool) -> &mut Self {
        self.ascii = on;
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

    /// Write the file atomically (see [`write_atomic`]).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
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
        write_atomic(path, |w| {
            self.write_xml(w, &region).map_err(|e| Error::io(path, e))
        })
    }

    fn write_xml(&self, w: &mut dyn Write, region: &Field) -> io::Result<()> {
        let mesh = self.mesh;
        let ascii = self.ascii;
        let nv = mesh.cell_type.num_vertices();
        writeln!(w, r#"<?xml version="1.0"?>"#)?;
        writeln!(
            w,
            r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
        )?;
        writeln!(w, "  <UnstructuredGrid>")?;
        writeln!(
            w,
            r#"    <Piece NumberOfPoints="{}" NumberOfCells="{}">"#,
            mesh.num_vertices(),
            mesh.num_cells()
        )?;

        writeln!(w, "      <PointData>")?;
        for f in &self.point_fields {
            f.write(w, ascii)?;
        }
        writeln!(w, "      </PointData>")?;
        writeln!(w, "      <CellData>")?;
        for f in std::iter::once(region).chain(&self.cell_fields) {
            f.write(w, ascii)?;
        }
        writeln!(w, "      </CellData>")?;

        writeln!(w, "      <Points>")?;
        let points: Vec<f64> = mesh.coords.iter().flatten().copied().collect();
        data_array(w, Some("Points"), 3, &points, ascii)?;
        writeln!(w, "      </Points>")?;

        writeln!(w, "      <Cells>")?;
        let connectivity: Vec<i64> = mesh.cells.iter().map(|&v| v as i64).collect();
        let offsets: Vec<i64> = (1..=mesh.num_cells()).map(|c| (c * nv) as i64).collect();
        let types = vec![mesh.cell_type.vtk_id(); mesh.num_cells()];
        data_array(w, Some("connectivity"), 1, &connectivity, ascii)?;
        data_array(w, Some("offsets"), 1, &offsets, ascii)?;
        data_array(w, Some("types"), 1, &types, ascii)?;
        writeln!(w, "      </Cells>")?;

        writeln!(w, "    </Piece>")?;
        writeln!(w, "  </UnstructuredGrid>")?;
        writeln!(w, "</VTKFile>")
    }
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
        match el.attr("type").unwrap() {
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

    fn read_arrays(path: &Path) -> (Vec<Element>, Arrays) {
        let els = parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let arrays = els
            .iter()
            .filter(|e| e.name == "DataArray")
            .map(|e| {
                let section = e.path.last().unwrap().clone();
                (e.attr("Name").unwrap().to_string(), (section, numbers(e)))
            })
            .collect();
        (els, arrays)
    }

    fn check_round_trip(ascii: bool) {
        let mesh = square();
        let u = [0.1, -2.5e-300, 3.0, f64::MAX];
        let grad = [1., 2., 3., 4., 5., 6., 7., 8.];
        let h = [0.5, 0.25];
        let part = [7, -3];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/sol.vtu");
        VtuWriter::new(&mesh)
            .ascii(ascii)
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

    #[test]
    fn binary_round_trip_is_bit_exact() {
        check_round_trip(false);
    }

    #[test]
    fn ascii_round_trip_is_exact() {
        check_round_trip(true);
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
