//! VTK XML image data (`.vti`) for ParaView: point fields on a uniform grid of nodes, with no mesh.
//! What the heat runs on the direct lattice write ([`crate::problem::heat::direct`]): the grid is
//! the extent, origin and spacing, so a frame of 10⁷ nodes is 80 MB of raw appended Float64 and
//! a few lines of XML (a VTU of the same nodes would add the 6·10⁷ tetrahedra's connectivity).
//! Written whole or not at all ([`write_atomic`]); [`read_vti`] parses the files this writes
//! (tests).
use super::atomic::write_atomic;
use super::xml::escape_attr;
use crate::{Error, Result};
use std::path::Path;

/// A uniform grid of `points` nodes per axis (x fastest), node (i, j, k) at `origin + (i, j, k) ∘ spacing`.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageGrid {
    pub points: [usize; 3],
    pub origin: [f64; 3],
    pub spacing: [f64; 3],
}

impl ImageGrid {
    pub fn nodes(&self) -> usize {
        self.points.iter().product()
    }
}

/// Writes `fields` (name, one value per node) on `grid` to `path` as raw appended Float64.
pub fn write_vti(path: &Path, grid: &ImageGrid, fields: &[(&str, &[f64])]) -> Result<()> {
    if grid.points.contains(&0) {
        return Err(Error::invalid(format!("VTI grid of {:?} points is empty", grid.points)));
    }
    for (name, v) in fields {
        if v.len() != grid.nodes() {
            return Err(Error::dim(format!("VTI point field `{name}`"), grid.nodes(), v.len()));
        }
        if name.is_empty() || fields.iter().filter(|(m, _)| m == name).count() > 1 {
            return Err(Error::invalid(format!("VTI field name `{name}` is empty or given twice")));
        }
    }
    let [px, py, pz] = grid.points.map(|p| p - 1);
    let [ox, oy, oz] = grid.origin;
    let [sx, sy, sz] = grid.spacing;
    let mut head = String::from("<?xml version=\"1.0\"?>\n");
    head.push_str("<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n");
    head.push_str(&format!(
        "  <ImageData WholeExtent=\"0 {px} 0 {py} 0 {pz}\" Origin=\"{ox:e} {oy:e} {oz:e}\" Spacing=\"{sx:e} {sy:e} {sz:e}\">\n"
    ));
    head.push_str(&format!("    <Piece Extent=\"0 {px} 0 {py} 0 {pz}\">\n"));
    let first = fields.first().map_or(String::new(), |(n, _)| format!(" Scalars=\"{}\"", escape_attr(n)));
    head.push_str(&format!("      <PointData{first}>\n"));
    let mut offset = 0usize;
    for (name, v) in fields {
        head.push_str(&format!(
            "        <DataArray type=\"Float64\" Name=\"{}\" format=\"appended\" offset=\"{offset}\"/>\n",
            escape_attr(name)
        ));
        offset += 8 + 8 * v.len();
    }
    head.push_str("      </PointData>\n    </Piece>\n  </ImageData>\n  <AppendedData encoding=\"raw\">\n_");
    write_atomic(path, |w| {
        let io = |e| Error::io(path, e);
        w.write_all(head.as_bytes()).map_err(io)?;
        let mut buf = Vec::with_capacity(1 << 20);
        for (_, v) in fields {
            w.write_all(&((8 * v.len()) as u64).to_le_bytes()).map_err(io)?;
            for chunk in v.chunks(1 << 17) {
                buf.clear();
                chunk.iter().for_each(|x| buf.extend_from_slice(&x.to_le_bytes()));
                w.write_all(&buf).map_err(io)?;
            }
        }
        w.write_all(b"\n  </AppendedData>\n</VTKFile>\n").map_err(io)
    })
}

/// The grid and the Float64 point fields of a `.vti` written by [`write_vti`].
pub fn read_vti(path: &Path) -> Result<(ImageGrid, Vec<(String, Vec<f64>)>)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let bad = |why: &str| Error::invalid(format!("`{}` is not a VTI file of this writer: {why}", path.display()));
    let marker = b"<AppendedData encoding=\"raw\">\n_";
    let at = bytes.windows(marker.len()).position(|w| w == marker).ok_or_else(|| bad("no raw appended data"))?;
    let head = std::str::from_utf8(&bytes[..at]).map_err(|_| bad("header is not UTF-8"))?;
    let data = &bytes[at + marker.len()..];
    let attr = |tag: &str, name: &str| -> Result<String> {
        let t = head.find(&format!("<{tag} ")).ok_or_else(|| bad(&format!("no <{tag}>")))?;
        let s = &head[t..];
        let key = format!(" {name}=\"");
        let k = s.find(&key).ok_or_else(|| bad(&format!("<{tag}> has no {name}")))? + key.len();
        let end = s[k..].find('"').ok_or_else(|| bad("unterminated attribute"))?;
        Ok(s[k..k + end].to_string())
    };
    let nums = |s: String| -> Result<Vec<f64>> { s.split_whitespace().map(|x| x.parse::<f64>().map_err(|_| bad("bad number"))).collect() };
    let ext = nums(attr("ImageData", "WholeExtent")?)?;
    let (origin, spacing) = (nums(attr("ImageData", "Origin")?)?, nums(attr("ImageData", "Spacing")?)?);
    if ext.len() != 6 || origin.len() != 3 || spacing.len() != 3 {
        return Err(bad("extent, origin or spacing of the wrong length"));
    }
    let grid = ImageGrid {
        points: std::array::from_fn(|d| (ext[2 * d + 1] - ext[2 * d]) as usize + 1),
        origin: std::array::from_fn(|d| origin[d]),
        spacing: std::array::from_fn(|d| spacing[d]),
    };
    let mut fields = Vec::new();
    for piece in head.split("<DataArray ").skip(1) {
        let get = |name: &str| -> Result<String> {
            let key = format!("{name}=\"");
            let k = piece.find(&key).ok_or_else(|| bad(&format!("DataArray without {name}")))? + key.len();
            Ok(piece[k..k + piece[k..].find('"').ok_or_else(|| bad("unterminated attribute"))?].to_string())
        };
        let offset: usize = get("offset")?.parse().map_err(|_| bad("bad offset"))?;
        let len = data.get(offset..offset + 8).ok_or_else(|| bad("offset past the data"))?;
        let len = u64::from_le_bytes(len.try_into().map_err(|_| bad("short length"))?) as usize;
        let raw = data.get(offset + 8..offset + 8 + len).ok_or_else(|| bad("array past the data"))?;
        if len != 8 * grid.nodes() {
            return Err(bad("array length is not one Float64 per node"));
        }
        fields.push((get("Name")?, raw.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()));
    }
    Ok((grid, fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_fields_and_rejects_wrong_sizes() {
        let dir = std::env::temp_dir().join(format!("galerkin-vti-{}", std::process::id()));
        let p = dir.join("a.vti");
        let grid = ImageGrid { points: [3, 2, 2], origin: [0.0, -1.0, 0.5], spacing: [0.5, 2.0, 0.25] };
        let t: Vec<f64> = (0..12).map(|i| i as f64 * 0.1 - 0.3).collect();
        let u: Vec<f64> = (0..12).map(|i| (i as f64).sqrt()).collect();
        write_vti(&p, &grid, &[("temperature", &t), ("u", &u)]).unwrap();
        let (g, f) = read_vti(&p).unwrap();
        assert_eq!(g, grid);
        assert_eq!(f, vec![("temperature".to_string(), t.clone()), ("u".to_string(), u)]);
        assert!(write_vti(&dir.join("b.vti"), &grid, &[("t", &t[..11])]).is_err());
        assert!(!dir.join("b.vti").exists(), "a refused write leaves no file");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
