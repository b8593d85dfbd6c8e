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
//! in MSH 4.1 and 2.2 alike (ASCII). A view may be split over several sections (partitions, time
//! steps): the sections of its first time step are merged. Values are matched to cells by the
//! element tags the mesh reader keeps ([`super::gmsh::parse_msh_with_cell_elements`]).
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

/// Whether the `$MeshFormat` header says binary (`<version> 1 <size>`).
fn is_binary(data: &[u8]) -> bool {
    let head = &data[..data.len().min(256)];
    let text = String::from_utf8_lossy(head);
    text.lines().skip_while(|l| l.trim() != "$MeshFormat").nth(1).and_then(|l| l.split_whitespace().nth(1).map(|t| t == "1")).unwrap_or(false)
}

/// Every `$ElementData` view of an ASCII MSH file (4.1 or 2.2), by name.
pub fn element_views(data: &[u8], source: &str) -> Result<Vec<ElementView>> {
    if is_binary(data) {
        return Err(Error::Unsupported(format!("{source}: $ElementData in a binary MSH file (save it as ASCII: Mesh.Binary = 0)")));
    }
    let text = std::str::from_utf8(data).map_err(|e| Error::mesh(source.to_string(), format!("not UTF-8 text: {e}")))?;
    let mut views: Vec<ElementView> = Vec::new();
    // (name, time step) of the first section of each view: later time steps are skipped.
    let mut first_step: HashMap<String, i64> = HashMap::new();
    let mut rest = text;
    let mut offset = 0usize;
    while let Some(at) = rest.find("$ElementData") {
        let start = offset + at;
        let line = text[..start].matches('\n').count() + 1;
        let body_start = start + "$ElementData".len();
        let end = text[body_start..].find("$EndElementData").ok_or_else(|| Error::mesh(format!("{source}, line {line}"), "$ElementData has no $EndElementData"))?;
        let body = &text[body_start..body_start + end];
        let here = format!("{source}, line {line}, $ElementData");
        let bad = |what: &str| Error::mesh(here.clone(), what.to_string());
        let mut lines = body.lines().map(str::trim).filter(|l| !l.is_empty());
        let mut count = |what: &str| -> Result<usize> { lines.next().and_then(|l| l.parse::<usize>().ok()).ok_or_else(|| bad(&format!("expected the number of {what}"))) };
        let ns = count("string tags")?;
        let mut strings = Vec::with_capacity(ns);
        for _ in 0..ns {
            strings.push(lines.next().ok_or_else(|| bad("missing string tag"))?.trim_matches('"').to_string());
        }
        let nr = lines.next().and_then(|l| l.parse::<usize>().ok()).ok_or_else(|| bad("expected the number of real tags"))?;
        for _ in 0..nr {
            lines.next().and_then(|l| l.parse::<f64>().ok()).ok_or_else(|| bad("missing real tag"))?;
        }
        let ni = lines.next().and_then(|l| l.parse::<usize>().ok()).ok_or_else(|| bad("expected the number of integer tags"))?;
        let mut ints = Vec::with_capacity(ni);
        for _ in 0..ni {
            ints.push(lines.next().and_then(|l| l.parse::<i64>().ok()).ok_or_else(|| bad("missing integer tag"))?);
        }
        if ints.len() < 3 || ints[1] <= 0 || ints[2] < 0 {
            return Err(bad("needs 3 integer tags: time step, components (≥ 1), number of elements"));
        }
        let name = strings.first().cloned().unwrap_or_default();
        let (step, nc, ne) = (ints[0], ints[1] as usize, ints[2] as usize);
        let keep = *first_step.entry(name.clone()).or_insert(step) == step;
        let mut values = HashMap::with_capacity(if keep { ne } else { 0 });
        for k in 0..ne {
            let l = lines.next().ok_or_else(|| bad(&format!("{ne} elements announced, {k} given")))?;
            if !keep {
                continue;
            }
            let mut tok = l.split_whitespace();
            let tag = tok.next().and_then(|t| t.parse::<usize>().ok()).ok_or_else(|| bad(&format!("element line `{l}`: no element tag")))?;
            let v: Vec<f64> = tok.map(|t| t.parse::<f64>()).collect::<std::result::Result<_, _>>().map_err(|_| bad(&format!("element {tag}: values are not numbers")))?;
            if v.len() != nc {
                return Err(bad(&format!("element {tag} has {} values, the view has {nc} components", v.len())));
            }
            values.insert(tag, v);
        }
        if keep {
            match views.iter_mut().find(|v| v.name == name) {
                Some(v) if v.components != nc => return Err(bad(&format!("view `{name}`: sections of {} and {nc} components", v.components))),
                Some(v) => v.values.extend(values),
                None => views.push(ElementView { name, components: nc, values }),
            }
        }
        offset = body_start + end + "$EndElementData".len();
        rest = &text[offset..];
    }
    Ok(views)
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
        assert!(element_views(bin.as_bytes(), "t.msh").unwrap_err().to_string().contains("binary"));
    }
}
