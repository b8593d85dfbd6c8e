//! Cell data from Gmsh files: the `$ElementData` views (post-processing data per element) that
//! Gmsh writes with `gmsh.view.addModelData(…, "ElementData", …)` or `gmsh.write("x.msh")` after
//! `Mesh.SaveAll`/`PostProcessing.SaveMesh`. A view section is
//!
//! ```text
//! $ElementData
//! 1                 number of string tags; the first is the view's name
//! "fibres"
//! 1                 number of real tags (the time)
//! 0.0
//! 3                 number of integer tags: time step, components, elements (, partition)
//! 0
//! 3
//! 2
//! 1 1.0 0.0 0.0     element tag, then one value per component
//! 2 0.0 1.0 0.0
//! $EndElementData
//! ```
//!
//! in MSH 4.1 and 2.2 alike (ASCII); in a binary MSH 4.1 file the entries after the integer tags
//! are binary (a 4-byte element tag, then the values as doubles). A view may be split over several sections (partitions, time
//! steps): the sections of its first time step are merged. Values are matched to cells by the
//! element tags the mesh reader keeps ([`super::gmsh::parse_msh_with_cell_elements`]).
use super::gmsh::{walk_sections, Reader};
use super::Mesh;
use crate::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

/// One `$ElementData` view: values per element tag.
#[derive(Clone, Debug)]
pub struct ElementView {
    pub name: String,
    pub components: usize,
    pub values: HashMap<usize, Vec<f64>>,
}

/// Every `$ElementData` view of an MSH file (4.1 ASCII or binary, 2.2 ASCII), by name. The
/// sections are walked with the mesh reader's cursor, so a binary file's numbers are read in the
/// byte order of its endianness marker and errors give the line (ASCII) or byte offset (binary).
pub fn element_views(data: &[u8], source: &str) -> Result<Vec<ElementView>> {
    let mut r = Reader::new(data, source);
    let mut views: Vec<ElementView> = Vec::new();
    // The time step of the first section of each view: later time steps are skipped.
    let mut first_step: HashMap<String, i64> = HashMap::new();
    walk_sections(&mut r, |r, header| {
        if header != "ElementData" {
            return Ok(false);
        }
        r.section = "$ElementData";
        read_view(r, &mut views, &mut first_step)?;
        Ok(true)
    })?;
    Ok(views)
}

/// One `$ElementData` section: its tags are ASCII lines in either file type; its entries are
/// lines (ASCII) or, in a binary file, a 4-byte element tag and the values as doubles each, the
/// layout Gmsh writes (`int` tags, as MshIO and meshio read them too).
fn read_view(r: &mut Reader, views: &mut Vec<ElementView>, first_step: &mut HashMap<String, i64>) -> Result<()> {
    let ns: usize = r.ascii_parse("number of string tags")?;
    let mut strings = Vec::with_capacity(ns.min(16));
    for _ in 0..ns {
        r.skip_whitespace();
        strings.push(r.rest_of_line()?.trim().trim_matches('"').to_string());
    }
    let nr: usize = r.ascii_parse("number of real tags")?;
    for _ in 0..nr {
        r.ascii_parse::<f64>("real tag")?;
    }
    let ni: usize = r.ascii_parse("number of integer tags")?;
    let mut ints = Vec::with_capacity(ni.min(16));
    for _ in 0..ni {
        ints.push(r.ascii_parse::<i64>("integer tag")?);
    }
    if ints.len() < 3 || ints[1] <= 0 || ints[2] < 0 {
        return Err(r.error("needs 3 integer tags: time step, components (≥ 1), number of elements"));
    }
    let name = strings.first().cloned().unwrap_or_default();
    let (step, nc, ne) = (ints[0], ints[1] as usize, ints[2] as usize);
    let at = r.line_or_offset();
    r.plausible(ne, "number of elements", at)?;
    let keep = *first_step.entry(name.clone()).or_insert(step) == step;
    let mut values = HashMap::with_capacity(if keep { ne } else { 0 });
    if r.is_binary() {
        r.rest_of_line()?; // the entries start after the last integer tag's line
    }
    for k in 0..ne {
        let (tag, v) = if r.is_binary() {
            let at = r.line_or_offset();
            let tag = r.int("element tag").map_err(|_| r.error_at(at, format!("{ne} elements announced, {k} given")))?;
            let tag = usize::try_from(tag).ok().filter(|&t| t > 0).ok_or_else(|| r.error_at(at, format!("element tag {tag} is not positive")))?;
            let v = (0..nc).map(|_| r.float("value")).collect::<Result<Vec<f64>>>().map_err(|_| r.error_at(at, format!("element {tag}: file ends inside its {nc} values")))?;
            (tag, v)
        } else {
            r.skip_whitespace();
            let at = r.line_or_offset();
            let l = r.rest_of_line()?.trim();
            if l.is_empty() || l.starts_with('$') {
                return Err(r.error_at(at, format!("{ne} elements announced, {k} given")));
            }
            let mut tok = l.split_whitespace();
            let tag = tok.next().and_then(|t| t.parse::<usize>().ok()).ok_or_else(|| r.error_at(at, format!("element line `{l}`: no element tag")))?;
            let v: Vec<f64> = tok.map(|t| t.parse::<f64>()).collect::<std::result::Result<_, _>>().map_err(|_| r.error_at(at, format!("element {tag}: values are not numbers")))?;
            if v.len() != nc {
                return Err(r.error_at(at, format!("element {tag} has {} values, the view has {nc} components", v.len())));
            }
            (tag, v)
        };
        if keep {
            values.insert(tag, v);
        }
    }
    if keep {
        match views.iter_mut().find(|v| v.name == name) {
            Some(v) if v.components != nc => return Err(r.error(format!("view `{name}`: sections of {} and {nc} components", v.components))),
            Some(v) => v.values.extend(values),
            None => views.push(ElementView { name, components: nc, values }),
        }
    }
    Ok(())
}

/// The mesh of a Gmsh file and, per cell (in the mesh's cell order), the values of its
/// `$ElementData` view `view`, which must have `components` components and a value for every
/// cell; errors name the file, the view and the element.
pub fn read_msh_cell_data(path: &Path, view: &str, components: usize) -> Result<(Mesh, Vec<String>, Vec<Vec<f64>>)> {
    let data = crate::io::input::read_regular_file(path, "mesh file")?;
    let source = path.display().to_string();
    let (mesh, notes, elements) = super::gmsh::parse_msh_with_cell_elements(&data, &source)?;
    let views = element_views(&data, &source)?;
    let Some(v) = views.iter().find(|v| v.name == view) else {
        let names: Vec<String> = views.iter().map(|v| format!("`{}`", v.name)).collect();
        let have = if names.is_empty() { "the file has no $ElementData".to_string() } else { format!("its views: {}", names.join(", ")) };
        return Err(Error::mesh(source, format!("no $ElementData view named `{view}` ({have})")));
    };
    if v.components != components {
        return Err(Error::mesh(source, format!("$ElementData view `{view}` has {} components per element, {components} are needed", v.components)));
    }
    let per_cell = elements
        .iter()
        .map(|tag| v.values.get(tag).cloned().ok_or_else(|| Error::mesh(source.clone(), format!("$ElementData view `{view}` has no value for element {tag} (a cell of the mesh)"))))
        .collect::<Result<Vec<_>>>()?;
    Ok((mesh, notes, per_cell))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VIEW: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$ElementData\n1\n\"fibres\"\n1\n0.0\n3\n0\n3\n2\n7 1 0 0\n9 0 1 0.5\n$EndElementData\n\
                        $ElementData\n1\n\"fibres\"\n1\n1.0\n3\n1\n3\n1\n7 5 5 5\n$EndElementData\n";

    #[test]
    fn views_are_read_by_name_first_time_step_only() {
        let v = element_views(VIEW.as_bytes(), "t.msh").unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].name.as_str(), v[0].components), ("fibres", 3));
        assert_eq!(v[0].values[&7], vec![1.0, 0.0, 0.0]);
        assert_eq!(v[0].values[&9], vec![0.0, 1.0, 0.5]);
    }

    #[test]
    fn malformed_views_are_errors() {
        let short = VIEW.replace("9 0 1 0.5\n", "9 0 1\n");
        assert!(element_views(short.as_bytes(), "t.msh").unwrap_err().to_string().contains("element 9 has 2 values"));
        let cut = VIEW.replace("9 0 1 0.5\n", "");
        assert!(element_views(cut.as_bytes(), "t.msh").unwrap_err().to_string().contains("2 elements announced"));
        let bin = VIEW.replace("4.1 0 8", "4.1 1 8");
        assert!(element_views(bin.as_bytes(), "t.msh").unwrap_err().to_string().contains("endianness marker"));
    }

    /// The reader's binary MSH 4.1 test mesh (little-endian) with a binary view appended: 2
    /// components, and a later time step that must be skipped. Also the first entry's offset.
    fn binary_with_view(data: &[u8]) -> (Vec<u8>, Vec<usize>, usize) {
        let (_, _, elements) = crate::mesh::gmsh::parse_msh_with_cell_elements(data, "t.msh").unwrap();
        let mut out = data.to_vec();
        let mut first = 0;
        for step in [0, 1] {
            out.extend_from_slice(format!("$ElementData\n1\n\"fibres\"\n1\n{step}.0\n3\n{step}\n2\n{}\n", elements.len()).as_bytes());
            if step == 0 {
                first = out.len();
            }
            for &tag in &elements {
                out.extend_from_slice(&(tag as i32).to_le_bytes());
                for v in [tag as f64 + step as f64, -0.5 * tag as f64] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            out.extend_from_slice(b"\n$EndElementData\n");
        }
        (out, elements, first)
    }

    #[test]
    fn binary_views_are_read() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/square_tri_binary.msh");
        let data = std::fs::read(path).unwrap();
        let (file, elements, first) = binary_with_view(&data);
        let v = element_views(&file, "t.msh").unwrap();
        assert_eq!((v.len(), v[0].name.as_str(), v[0].components, v[0].values.len()), (1, "fibres", 2, elements.len()));
        for &tag in &elements {
            assert_eq!(v[0].values[&tag], vec![tag as f64, -0.5 * tag as f64]);
        }
        // Cut inside the last entry of the second section: an error at a byte offset.
        let e = element_views(&file[..file.len() - 30], "t.msh").unwrap_err().to_string();
        assert!(e.contains("byte offset") && e.contains("file ends inside its 2 values"), "{e}");
        let mut zero = file.clone();
        zero[first..first + 4].copy_from_slice(&0i32.to_le_bytes());
        let e = element_views(&zero, "t.msh").unwrap_err().to_string();
        assert!(e.contains("element tag 0 is not positive"), "{e}");
    }
}
