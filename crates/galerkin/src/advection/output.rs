//! What a solution gives back: its L2 error against an exact solution, and a VTU file ParaView
//! reads — every cell with its own copies of its vertices, so the discontinuous field is drawn as
//! it is (no averaging across edges), plus the cell means.
use super::formula::Formula;
use super::problem::{AdvectionProblem, Tables};
use crate::mesh::Mesh;
use crate::Result;
use rayon::prelude::*;
use std::path::Path;

/// (‖u_h − u‖, ‖u‖) in L2, by a cell rule four degrees above the assembly's.
pub fn l2_error(p: &AdvectionProblem, u: &[f64], exact: &Formula) -> Result<(f64, f64)> {
    let t = Tables::new(p.cell_type(), p.degree, 4)?;
    let nloc = t.nloc;
    let (e2, u2) = (0..p.mesh.num_cells())
        .into_par_iter()
        .map(|c| {
            let mut acc = (0.0, 0.0);
            for (q, xi) in t.cell_points.iter().enumerate() {
                let (x, j) = p.mesh.map_point(c, *xi);
                let w = t.cell_weights[q] * (j[0][0] * j[1][1] - j[0][1] * j[1][0]).abs();
                let uh: f64 = (0..nloc).map(|i| t.values[q * nloc + i] * u[c * nloc + i]).sum();
                let ue = exact.eval([x[0], x[1]]);
                acc.0 += w * (uh - ue).powi(2);
                acc.1 += w * ue * ue;
            }
            acc
        })
        .reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    Ok((e2.sqrt(), u2.sqrt()))
}

/// Cell means of the DG field (∫_K u_h / |K|).
pub fn cell_means(p: &AdvectionProblem, u: &[f64]) -> Result<Vec<f64>> {
    let t = Tables::new(p.cell_type(), p.degree, 0)?;
    let nloc = t.nloc;
    Ok((0..p.mesh.num_cells())
        .into_par_iter()
        .map(|c| {
            let (mut s, mut area) = (0.0, 0.0);
            for (q, xi) in t.cell_points.iter().enumerate() {
                let (_, j) = p.mesh.map_point(c, *xi);
                let w = t.cell_weights[q] * (j[0][0] * j[1][1] - j[0][1] * j[1][0]).abs();
                s += w * (0..nloc).map(|i| t.values[q * nloc + i] * u[c * nloc + i]).sum::<f64>();
                area += w;
            }
            s / area
        })
        .collect())
}

/// Writes `u` as a broken P1/Q1 field (each cell's own vertex values) with cell means.
pub fn write_vtu(path: &Path, p: &AdvectionProblem, u: &[f64]) -> Result<()> {
    let mesh = &p.mesh;
    let nv = mesh.cell_type.num_vertices();
    let nloc = p.nloc();
    let at_vertices = Tables::vertex_values(mesh.cell_type, p.degree)?;
    let n = mesh.num_cells();
    let coords: Vec<[f64; 3]> = mesh.cells.iter().map(|&v| mesh.coords[v]).collect();
    let values: Vec<f64> = (0..n * nv).map(|k| (0..nloc).map(|i| at_vertices[(k % nv) * nloc + i] * u[(k / nv) * nloc + i]).sum()).collect();
    // Not validated (`Mesh::new` would see the coincident vertex copies): only written.
    let broken = Mesh {
        dim: mesh.dim,
        coords,
        cell_type: mesh.cell_type,
        cells: (0..n * nv).collect(),
        cell_tags: mesh.cell_tags.clone(),
        boundary: Vec::new(),
        tag_names: Default::default(),
    };
    let means = cell_means(p, u)?;
    crate::io::VtuWriter::new(&broken).point_scalar("u", &values)?.cell_scalar("u_mean", &means)?.write(path)
}
