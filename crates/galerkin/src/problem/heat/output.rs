//! Outputs of a heat run beyond the PVD series: probe histories (CSV + PNG), colour maps of the
//! temperature on a face of the bounding box, and reading the temperature back from a VTU of an
//! earlier run (an initial condition).
use crate::io::{self, write_atomic};
use crate::mesh::Mesh;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use std::path::Path;

/// Writes `time, probe 0, probe 1, …` rows.
pub fn write_probe_csv(
    path: &Path,
    points: &[[f64; 3]],
    times: &[f64],
    values: &[Vec<f64>],
) -> Result<()> {
    write_atomic(path, |w| {
        let mut s = String::from("time");
        for p in points {
            s.push_str(&format!(",T({} {} {})", p[0], p[1], p[2]));
        }
        s.push('\n');
        for (i, t) in times.iter().enumerate() {
            s.push_str(&format!("{t:e}"));
            for v in values {
                s.push_str(&format!(",{:e}", v[i]));
            }
            s.push('\n');
        }
        w.write_all(s.as_bytes()).map_err(|e| Error::io(path, e))
    })
}

pub fn plot_probes(
    path: &Path,
    points: &[[f64; 3]],
    times: &[f64],
    values: &[Vec<f64>],
) -> Result<()> {
    let labels: Vec<String> = points
        .iter()
        .map(|p| format!("({:.4}, {:.4}, {:.4})", p[0], p[1], p[2]))
        .collect();
    let series: Vec<(&str, &[f64], &[f64])> = labels
        .iter()
        .zip(values)
        .map(|(l, v)| (l.as_str(), times, v.as_slice()))
        .collect();
    io::plot_lines(path, "Probe temperatures", "t", "T", &series, false, false)
}

/// The nodes on a face of the bounding box and a nearest-node grid over it, built once.
#[derive(Clone)]
pub struct FaceMap {
    pub face: String,
    /// In-plane axes (u, v) and their ranges.
    axes: (usize, usize),
    range: ((f64, f64), (f64, f64)),
    grid: (usize, usize),
    /// The node whose value fills each grid cell where no facet covers its centre.
    cell_node: Vec<usize>,
    /// Linear interpolation from a boundary facet's vertices (weights) where one covers it.
    cell_linear: Vec<Option<([usize; 3], [f64; 3])>>,
}

impl FaceMap {
    /// `face` is xmin … zmax; `resolution` grid cells along the longer side.
    pub fn new(space: &FunctionSpace, face: &str, resolution: usize) -> Result<FaceMap> {
        Self::build(space, face, Err(resolution))
    }

    /// A map with exactly `grid` = (cells along the first in-plane axis, along the second) (a
    /// camera's pixels times its sub-samples).
    pub fn with_grid(space: &FunctionSpace, face: &str, grid: (usize, usize)) -> Result<FaceMap> {
        if grid.0 == 0 || grid.1 == 0 {
            return Err(Error::invalid(format!("a face grid needs at least one cell per axis (got {grid:?})")));
        }
        Self::build(space, face, Ok(grid))
    }

    fn build(space: &FunctionSpace, face: &str, grid: std::result::Result<(usize, usize), usize>) -> Result<FaceMap> {
        let mesh = &space.mesh;
        let (axis, upper) = super::material::Corrosion::face(face).ok_or_else(|| {
            Error::config("output.face_map.face", format!("unknown face `{face}`"))
        })?;
        if mesh.dim != 3 {
            return Err(Error::config("output.face_map", "face maps need a 3D mesh"));
        }
        let (lo, hi) = mesh.bounding_box();
        let plane = if upper { hi[axis] } else { lo[axis] };
        let tol = 1e-9 * (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
        let nodes: Vec<usize> = (0..space.dofmap.node_coords.len())
            .filter(|&i| (space.dofmap.node_coords[i][axis] - plane).abs() <= tol)
            .collect();
        if nodes.is_empty() {
            return Err(Error::config(
                "output.face_map.face",
                format!("no node lies on `{face}`"),
            ));
        }
        let (a, b) = match axis {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        let (ru, rv) = ((lo[a], hi[a]), (lo[b], hi[b]));
        let (lu, lv) = (ru.1 - ru.0, rv.1 - rv.0);
        let (nu, nv) = if let Ok(g) = grid {
            g
        } else if lu >= lv {
            let resolution = grid.err().unwrap_or(1);
            (
                resolution,
                ((resolution as f64 * lv / lu).round() as usize).max(1),
            )
        } else {
            let resolution = grid.err().unwrap_or(1);
            (
                ((resolution as f64 * lu / lv).round() as usize).max(1),
                resolution,
            )
        };
        // Bucket the face nodes, then search outward rings of buckets for each grid cell's centre.
        let nb = ((nodes.len() as f64).sqrt().ceil() as usize).clamp(1, 512);
        let bucket = |x: f64, (l, h): (f64, f64)| {
            (((x - l) / (h - l) * nb as f64).floor().max(0.0) as usize).min(nb - 1)
        };
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); nb * nb];
        for &n in &nodes {
            let x = space.dofmap.node_coords[n];
            buckets[bucket(x[b], rv) * nb + bucket(x[a], ru)].push(n);
        }
        let min_w = (lu / nb as f64).min(lv / nb as f64);
        let mut cell_node = Vec::with_capacity(nu * nv);
        for j in 0..nv {
            for i in 0..nu {
                let (u, v) = (
                    ru.0 + (i as f64 + 0.5) * lu / nu as f64,
                    rv.0 + (j as f64 + 0.5) * lv / nv as f64,
                );
                let (bu, bv) = (bucket(u, ru) as isize, bucket(v, rv) as isize);
                let mut best = (f64::INFINITY, nodes[0]);
                let mut ring = 0isize;
                while ring < nb as isize + 1 {
                    for dv in -ring..=ring {
                        for du in -ring..=ring {
                            if du.abs() != ring && dv.abs() != ring {
                                continue;
                            }
                            let (cu, cv) = (bu + du, bv + dv);
                            if cu < 0 || cv < 0 || cu >= nb as isize || cv >= nb as isize {
                                continue;
                            }
                            for &n in &buckets[cv as usize * nb + cu as usize] {
                                let x = space.dofmap.node_coords[n];
                                let d = (x[a] - u).powi(2) + (x[b] - v).powi(2);
                                if d < best.0 {
                                    best = (d, n);
                                }
                            }
                        }
                    }
                    // Nodes beyond ring r lie at least r bucket widths away from the query.
                    if best.0.is_finite() && ring as f64 * min_w >= best.0.sqrt() {
                        break;
                    }
                    ring += 1;
                }
                cell_node.push(best.1);
            }
        }
        // Linear interpolation inside the face's boundary facets (quadrilaterals split in two
        // after ordering their corners by angle, whatever their local numbering).
        let mut cell_linear: Vec<Option<([usize; 3], [f64; 3])>> = vec![None; nu * nv];
        let uv = |v: usize| (mesh.coords[v][a], mesh.coords[v][b]);
        for f in &mesh.boundary {
            if !f
                .vertices
                .iter()
                .all(|&v| (mesh.coords[v][axis] - plane).abs() <= tol)
            {
                continue;
            }
            let mut vs = f.vertices.clone();
            if vs.len() == 4 {
                let (cu, cv) = vs.iter().fold((0.0, 0.0), |(x, y), &v| {
                    (x + uv(v).0 / 4.0, y + uv(v).1 / 4.0)
                });
                vs.sort_by(|&p, &q| {
                    (uv(p).1 - cv)
                        .atan2(uv(p).0 - cu)
                        .total_cmp(&(uv(q).1 - cv).atan2(uv(q).0 - cu))
                });
            }
            let tris: Vec<[usize; 3]> = match vs.len() {
                3 => vec![[vs[0], vs[1], vs[2]]],
                4 => vec![[vs[0], vs[1], vs[2]], [vs[0], vs[2], vs[3]]],
                _ => Vec::new(),
            };
            for t in tris {
                let (p0, p1, p2) = (uv(t[0]), uv(t[1]), uv(t[2]));
                let det = (p1.0 - p0.0) * (p2.1 - p0.1) - (p2.0 - p0.0) * (p1.1 - p0.1);
                if det.abs() <= f64::MIN_POSITIVE {
                    continue;
                }
                let (umin, umax) = (p0.0.min(p1.0).min(p2.0), p0.0.max(p1.0).max(p2.0));
                let (vmin, vmax) = (p0.1.min(p1.1).min(p2.1), p0.1.max(p1.1).max(p2.1));
                let px = |x: f64, (l, h): (f64, f64), n: usize| {
                    ((x - l) / (h - l) * n as f64 - 0.5).max(0.0)
                };
                let (i0, i1) = (
                    px(umin, ru, nu).floor() as usize,
                    (px(umax, ru, nu).ceil() as usize).min(nu - 1),
                );
                let (j0, j1) = (
                    px(vmin, rv, nv).floor() as usize,
                    (px(vmax, rv, nv).ceil() as usize).min(nv - 1),
                );
                for j in j0..=j1 {
                    for i in i0..=i1 {
                        let (u, v) = (
                            ru.0 + (i as f64 + 0.5) * lu / nu as f64,
                            rv.0 + (j as f64 + 0.5) * lv / nv as f64,
                        );
                        let l1 = ((u - p0.0) * (p2.1 - p0.1) - (p2.0 - p0.0) * (v - p0.1)) / det;
                        let l2 = ((p1.0 - p0.0) * (v - p0.1) - (u - p0.0) * (p1.1 - p0.1)) / det;
                        let l0 = 1.0 - l1 - l2;
                        if l0 >= -1e-12 && l1 >= -1e-12 && l2 >= -1e-12 {
                            cell_linear[j * nu + i] = Some((t, [l0, l1, l2]));
                        }
                    }
                }
            }
        }
        Ok(FaceMap {
            cell_linear,
            face: face.to_string(),
            axes: (a, b),
            range: (ru, rv),
            grid: (nu, nv),
            cell_node,
        })
    }

    /// `u` (all nodes) at the centre of every grid cell, row after row (first axis fastest).
    pub fn values(&self, u: &[f64]) -> Vec<f64> {
        self.cell_node
            .iter()
            .zip(&self.cell_linear)
            .map(|(&n, lin)| match lin {
                Some((vs, w)) => (0..3).map(|k| w[k] * u[vs[k]]).sum(),
                None => u[n],
            })
            .collect()
    }

    /// Cells along the two in-plane axes.
    pub fn grid(&self) -> (usize, usize) {
        self.grid
    }

    /// Draws `u` (all nodes) at time `t`; returns the colour scale's (min, max).
    pub fn draw(&self, path: &Path, u: &[f64], t: f64) -> Result<(f64, f64)> {
        let values = self.values(u);
        let name = |k: usize| ["x", "y", "z"][k];
        io::plot_map(
            path,
            &format!("T on {} at t = {t:.4}", self.face),
            name(self.axes.0),
            name(self.axes.1),
            self.range.0,
            self.range.1,
            self.grid,
            &values,
        )
    }
}

/// Attributes `key="value"` of an XML start tag.
fn attr<'a>(tag: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!(" {key}=\"");
    let start = tag.find(&pat)? + pat.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// A `<DataArray>`'s Float64 values (inline binary with a UInt64 header, or ASCII).
fn decode(tag: &str, body: &str, what: &str) -> std::result::Result<Vec<f64>, String> {
    if attr(tag, "type") != Some("Float64") {
        return Err(format!("{what} is not Float64"));
    }
    match attr(tag, "format") {
        Some("ascii") => body.split_whitespace().map(|s| s.parse::<f64>().map_err(|_| format!("{what}: `{s}` is not a number"))).collect(),
        Some("binary") => {
            let bytes = io::base64::decode(body.trim()).ok_or(format!("{what}: invalid base64"))?;
            if bytes.len() < 8 {
                return Err(format!("{what}: truncated"));
            }
            let n = u64::from_le_bytes(bytes[..8].try_into().map_err(|_| "header")?) as usize;
            if n % 8 != 0 || bytes.len() < 8 + n {
                return Err(format!("{what}: {n} data bytes announced, {} present", bytes.len() - 8));
            }
            Ok(bytes[8..8 + n].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
        }
        other => Err(format!("{what}: unsupported format {other:?} (this reader takes the VTU files galerkin writes)")),
    }
}

/// The point field `field` of a VTU written by galerkin on `mesh` (its points must match the
/// mesh's vertices): vertex values.
pub fn read_vtu_point_field(path: &Path, field: &str, mesh: &Mesh) -> Result<Vec<f64>> {
    let text = io::input::read_regular_text(path, "initial VTU")?;
    let bad = |why: String| Error::config("initial.vtu", format!("`{}`: {why}", path.display()));
    let (mut points, mut values) = (None, None);
    let mut rest = text.as_str();
    let mut offset = 0;
    while let Some(i) = rest.find("<DataArray") {
        let start = offset + i;
        let tag_end = text[start..]
            .find('>')
            .ok_or_else(|| bad("unterminated DataArray".into()))?
            + start;
        let tag = &text[start..=tag_end];
        let body_end = text[tag_end..]
            .find("</DataArray>")
            .ok_or_else(|| bad("unterminated DataArray".into()))?
            + tag_end;
        let body = &text[tag_end + 1..body_end];
        let before = &text[..start];
        let in_points = before
            .rfind("<Points>")
            .is_some_and(|p| before.rfind("</Points>").is_none_or(|q| q < p));
        let in_point_data = before
            .rfind("<PointData")
            .is_some_and(|p| before.rfind("</PointData>").is_none_or(|q| q < p));
        if in_points {
            points = Some(decode(tag, body, "Points").map_err(bad)?);
        } else if in_point_data && attr(tag, "Name") == Some(field) {
            if attr(tag, "NumberOfComponents").is_some_and(|c| c != "1") {
                return Err(bad(format!("field `{field}` is not a scalar")));
            }
            values = Some(decode(tag, body, field).map_err(bad)?);
        }
        offset = body_end;
        rest = &text[offset..];
    }
    let points = points.ok_or_else(|| bad("no Points".into()))?;
    let values = values.ok_or_else(|| bad(format!("no point field `{field}`")))?;
    let nv = mesh.num_vertices();
    if points.len() != 3 * nv || values.len() != nv {
        return Err(bad(format!(
            "{} points and {} values, but the mesh has {nv} vertices",
            points.len() / 3,
            values.len()
        )));
    }
    let (lo, hi) = mesh.bounding_box();
    let size = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    for (v, x) in mesh.coords.iter().enumerate() {
        if (0..3).any(|k| (points[3 * v + k] - x[k]).abs() > 1e-9 * size) {
            return Err(bad(format!("point {v} lies at {:?}, but this mesh's vertex {v} at {x:?}: the VTU must come from the same mesh", &points[3 * v..3 * v + 3])));
        }
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(bad(format!("value {i} of `{field}` is not finite")));
    }
    Ok(values)
}

/// Probes as dot products with the basis weights at their points (interpolated, not the nearest
/// node), so one scalar per probe and step leaves the backend: each probe's weights as a backend
/// vector over `n` nodes, and its value in the initial temperature `t0`.
pub(crate) fn probe_units<B: crate::backend::Backend>(be: &B, weights: &[Vec<(usize, f64)>], n: usize, t0: &[f64]) -> crate::Result<(Vec<B::Vector>, Vec<Vec<f64>>)> {
    let units = weights
        .iter()
        .map(|w| {
            let mut e = vec![0.0; n];
            w.iter().for_each(|&(i, a)| e[i] += a);
            be.from_host(&e)
        })
        .collect::<crate::Result<Vec<_>>>()?;
    let values = weights.iter().map(|w| vec![w.iter().map(|&(i, a)| a * t0[i]).sum()]).collect();
    Ok((units, values))
}

