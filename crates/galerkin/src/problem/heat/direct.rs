//! Heat problem files on the direct lattice ([`super::lattice::LatticeHeat`]): a generated box at
//! `[assembly] level = "none"` whose conditions the lattice supports runs without the unstructured
//! mesh, its dof map or its VTU — at 10⁷ unknowns the mesh path spends tens of seconds and GB on
//! them before the first step. Supported: Dirichlet temperatures (numbers, or expressions of
//! x, y, z) on box sides, insulated sides, heat flux, Gaussian lasers and Robin convection on box
//! sides ([`super::faces`]), a constant source Q, an initial temperature (value or
//! expression), materials from shapes, corrosion and voxels (evaluated at each cell's centroid as
//! on the mesh), probes (P1/Q1 interpolation in the cell that holds the point) and the PVD series
//! as `.vti` image data ([`crate::io::vti`]). Anything else ([`plan`] says what) runs on the mesh
//! path, and the report's `path` says why. The same file gives the same temperatures on both paths
//! (`tests/heat_direct.rs`). The energy balance is not computed here (`balance` absent per step).
use super::config::{HeatBcKind, HeatFile};
use super::lattice::{LatticeBackend, LatticeHeat, LatticeMaterial};
use super::material::MaterialMap;
use super::StepRecord;
use crate::io::vti::{write_vti, ImageGrid};
use crate::io::{self, OutputDir};
use crate::mesh::CellType;
use crate::operator::level::none::direct::{LatticeBox, SIDES};
use crate::operator::AssemblyLevel;
use crate::problem::config::{scalar_spec, Generator, ScalarSpec};
use crate::problem::validate::{FieldFaults, Requirement};
use crate::{Error, Result};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// What the direct lattice runs: the box and the conditions.
pub struct Plan {
    pub bx: LatticeBox,
    /// Dirichlet conditions in file order: the sides and the value (number or expression of x, y, z).
    dirichlet: Vec<(Vec<String>, String, ScalarSpec)>,
    source: f64,
}

/// The lattice plan of `f`, or why it runs on the mesh (`Err`: a reason for the report).
pub fn plan(f: &HeatFile) -> std::result::Result<Plan, String> {
    if f.assembly.level != AssemblyLevel::None {
        return Err(format!("assembly level `{}`", f.assembly.level.name()));
    }
    if std::env::var("GALERKIN_HEAT_PATH").as_deref() == Ok("mesh") {
        return Err("GALERKIN_HEAT_PATH=mesh".into());
    }
    let m = &f.mesh;
    if m.file.is_some() || m.generator != Some(Generator::Box) {
        return Err("not a generated box".into());
    }
    if f.space.degree != 1 {
        return Err(format!("degree {}", f.space.degree));
    }
    if f.initial.vtu.is_some() {
        return Err("initial temperature from a VTU".into());
    }
    if f.material.iter().any(|m| m.regions.is_some()) {
        return Err("material regions".into());
    }
    if f.output.face_map.is_some() {
        return Err("face map".into());
    }
    let mut dirichlet = Vec::new();
    for (j, bc) in f.bc.iter().enumerate() {
        let mut sides = Vec::new();
        for b in bc.boundary.to_vec() {
            match b {
                crate::problem::linear::Boundary::Name(s) if SIDES.contains(&s.as_str()) => sides.push(s),
                other => return Err(format!("boundary {other:?} is not a box side by name")),
            }
        }
        if bc.kind != HeatBcKind::Dirichlet {
            // Flux, laser and Robin on box sides: face terms ([`super::faces`]).
            continue;
        }
        let key = format!("bc[{j}].value");
        let spec = bc.value.as_ref().and_then(|v| scalar_spec(v, &key, false).ok()).ok_or_else(|| format!("{key} not a number or expression"))?;
        match &spec {
            ScalarSpec::Number(v) if v.is_finite() => {}
            ScalarSpec::Expr(e) if !e.depends_on_time() => {}
            _ => return Err(format!("{key}: a Dirichlet value changing in time")),
        }
        dirichlet.push((sides, key, spec));
    }
    let source = match &f.physics.source {
        None => 0.0,
        Some(s) => match scalar_spec(s, "physics.source", false) {
            Ok(ScalarSpec::Number(v)) if v.is_finite() => v,
            _ => return Err("a source expression".into()),
        },
    };
    let n = m.n.as_deref().unwrap_or(&[]);
    let corner = |v: &Option<Vec<f64>>, d: f64| -> [f64; 3] {
        let mut c = [d; 3];
        if let Some(v) = v.as_deref().filter(|v| v.len() == 3) {
            c.copy_from_slice(v);
        }
        c
    };
    if n.len() != 3 {
        return Err("mesh.n".into());
    }
    let bx = LatticeBox::new([n[0], n[1], n[2]], corner(&m.lower, 0.0), corner(&m.upper, 1.0), m.cell.unwrap_or(CellType::Tetrahedron)).map_err(|e| e.to_string())?;
    Ok(Plan { bx, dirichlet, source })
}

/// The time loop's results, in the form the mesh path's report takes.
pub struct DirectRun {
    pub records: Vec<StepRecord>,
    pub written: Vec<PathBuf>,
    pub storage_bytes: usize,
    pub counts: Vec<usize>,
    pub assembly_s: f64,
    pub loop_s: f64,
    pub output_s: f64,
    pub mesh_s: f64,
}

/// The interpolation weights of point `p` on the box's nodes: trilinear in a hexahedron, the
/// barycentric coordinates of the Kuhn tetrahedron that holds it (ξ sorted: 0 → e_a → e_a + e_b →
/// 1); `None` outside the box.
pub fn point_weights(bx: &LatticeBox, p: [f64; 3]) -> Option<Vec<(usize, f64)>> {
    let h = bx.spacing();
    let pts = bx.points();
    let mut ijk = [0usize; 3];
    let mut xi = [0.0; 3];
    for d in 0..3 {
        let s = (p[d] - bx.lo[d]) / h[d];
        let tol = 1e-9 * bx.n[d] as f64;
        if !(s >= -tol && s <= bx.n[d] as f64 + tol) {
            return None;
        }
        let i = (s.floor().max(0.0) as usize).min(bx.n[d] - 1);
        ijk[d] = i;
        xi[d] = (s - i as f64).clamp(0.0, 1.0);
    }
    let node = |c: usize| (ijk[0] + (c & 1)) + pts[0] * ((ijk[1] + ((c >> 1) & 1)) + pts[1] * (ijk[2] + (c >> 2)));
    let w: Vec<(usize, f64)> = match bx.cell {
        CellType::Hexahedron => (0..8)
            .map(|c| (node(c), (0..3).map(|d| if (c >> d) & 1 == 1 { xi[d] } else { 1.0 - xi[d] }).product()))
            .collect(),
        _ => {
            let mut ord = [0usize, 1, 2];
            ord.sort_by(|&a, &b| xi[b].total_cmp(&xi[a]));
            let [a, b, c] = ord;
            vec![
                (node(0), 1.0 - xi[a]),
                (node(1 << a), xi[a] - xi[b]),
                (node((1 << a) | (1 << b)), xi[b] - xi[c]),
                (node(7), xi[c]),
            ]
        }
    };
    Some(w)
}

/// The cell centroid as the mesh path computes it (the mean of the vertices, each divided first).
fn centroid(bx: &LatticeBox, c: usize, template: &[Vec<usize>]) -> [f64; 3] {
    let per = template.len();
    let (b, t) = (c / per, c % per);
    let [nx, ny, _] = bx.n;
    let ijk = [b % nx, (b / nx) % ny, b / (nx * ny)];
    let corners = &template[t];
    let mut x = [0.0; 3];
    for &cn in corners {
        (0..3).for_each(|d| x[d] += bx.coord(d, ijk[d] + ((cn >> d) & 1)) / corners.len() as f64);
    }
    x
}

/// The material byte of every cell (voxels, then shape rules in order, then corrosion — as
/// [`MaterialMap::assign`] on the mesh) and the cells per material.
fn cell_materials(bx: &LatticeBox, map: &MaterialMap) -> Result<(Vec<u8>, Vec<usize>)> {
    map.validate()?;
    let nm = map.materials.len();
    if nm > 255 {
        return Err(Error::config("material", format!("{nm} materials: the direct lattice takes at most 255")));
    }
    let (lo, hi) = (bx.lo, bx.hi);
    let template = bx.lattice().template;
    let mat: Vec<u8> = (0..bx.ncells())
        .into_par_iter()
        .with_min_len(4096)
        .map(|c| map.index_at(centroid(bx, c, &template), lo, hi).map(|m| m as u8))
        .collect::<Result<_>>()?;
    let mut counts = vec![0; nm];
    mat.iter().for_each(|&m| counts[m as usize] += 1);
    Ok((mat, counts))
}

/// Runs the file's time loop on the direct lattice of `plan`, writing the `.vti` frames, the PVD
/// and the probe files into `out`.
#[allow(clippy::too_many_arguments)]
pub fn run<B: LatticeBackend>(be: &B, f: &HeatFile, plan: &Plan, map: &MaterialMap, probes: &[[f64; 3]], out: &OutputDir, progress: bool, faults: &FieldFaults) -> Result<DirectRun> {
    let t = Instant::now();
    let bx = &plan.bx;
    let (mat, counts) = cell_materials(bx, map)?;
    let weights = probes
        .iter()
        .enumerate()
        .map(|(j, &p)| point_weights(bx, p).ok_or_else(|| Error::config(format!("output.probes[{j}]"), format!("{p:?} lies outside the mesh"))))
        .collect::<Result<Vec<_>>>()?;
    let n = bx.ndofs();
    let nodes = |g: &(dyn Fn([f64; 3]) -> f64 + Sync)| -> Vec<f64> { (0..n).into_par_iter().with_min_len(4096).map(|v| g(bx.node(v))).collect() };
    // Dirichlet sides and values, later conditions overriding earlier ones on shared nodes.
    let mut sides: Vec<&str> = Vec::new();
    let mut g = vec![0.0; n];
    for (on, key, spec) in &plan.dirichlet {
        let names: Vec<&str> = on.iter().map(String::as_str).collect();
        sides.extend(&names);
        let free = bx.free_mask(&names)?;
        let vals = match spec {
            ScalarSpec::Number(v) => vec![*v; n],
            ScalarSpec::Expr(e) => nodes(&|x| faults.check(key, Requirement::Finite, x, e.eval(x, 0.0))),
            ScalarSpec::Regions(_) => return Err(Error::config(key.clone(), "expected a number or an expression")),
        };
        g.par_iter_mut().zip(free.par_iter().zip(vals.par_iter())).for_each(|(gv, (&fr, &v))| {
            if fr == 0.0 {
                *gv = v;
            }
        });
    }
    faults.check_none()?;
    let materials: Vec<LatticeMaterial> = map.materials.iter().map(|m| LatticeMaterial { rhoc: m.rhoc(), k: m.k }).collect();
    let mesh_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let source = (plan.source != 0.0).then(|| LatticeHeat::<B>::load_vector(be, bx, mat.clone(), &vec![plan.source; materials.len()])).transpose()?;
    let loads = super::run::file_loads(f, faults)?;
    faults.check_none()?;
    // Robin inside the lattice's element matrices; beside it (a face matrix) only where the face
    // materials do not fit the byte per cell.
    let robin = super::faces::robin_sides(&loads)?;
    let (mut heat, robin_matrix) = match LatticeHeat::new_robin(be, bx, mat.clone(), &materials, &sides, &robin, f.time.dt, f.time.theta, None)? {
        Some(h) => (h, false),
        None => (LatticeHeat::new(be, bx, mat, &materials, &sides, f.time.dt, f.time.theta)?, true),
    };
    heat.options.rtol = f.solver.rtol;
    heat.options.max_iter = f.solver.max_iter;
    if let Some(fv) = &source {
        heat.set_source(fv)?;
    }
    let faces = super::faces::face_terms(bx, &loads, robin_matrix)?;
    faults.check_none()?;
    if let Some(r) = &faces.robin {
        heat.set_face_terms(r)?;
    }
    for (v, schedule) in faces.loads {
        heat.add_load(&v, schedule)?;
    }
    let t0: Vec<f64> = match (&f.initial.expression, f.initial.value) {
        (Some(e), _) => {
            let e = crate::expr::Expr::parse(e).map_err(|err| Error::config("initial.expression", err.to_string()))?;
            let u = nodes(&|x| faults.check("initial.expression", Requirement::Finite, x, e.eval(x, 0.0)));
            faults.check_none()?;
            u
        }
        (None, v) => vec![v.unwrap_or(0.0); n],
    };
    if !plan.dirichlet.is_empty() {
        heat.set_dirichlet_values(&g)?;
    }
    let assembly_s = t.elapsed().as_secs_f64();

    let name = &f.output.name;
    let grid = ImageGrid { points: bx.points(), origin: bx.lo, spacing: bx.spacing() };
    let mut pvd = io::Pvd::new(out.join(&format!("{name}.pvd")));
    let mut written: Vec<PathBuf> = Vec::new();
    let mut output_s = 0.0;
    let frame = |step: usize, time: f64, u: &[f64], pvd: &mut io::Pvd, written: &mut Vec<PathBuf>| -> Result<()> {
        let file = format!("{name}_{step:06}.vti");
        let p = out.join(&file);
        write_vti(&p, &grid, &[("temperature", u)])?;
        pvd.add(time, &file)?;
        written.push(p);
        Ok(())
    };
    let to = Instant::now();
    if f.output.pvd {
        frame(0, 0.0, &t0, &mut pvd, &mut written)?;
    }
    output_s += to.elapsed().as_secs_f64();
    let (units, mut probe_values) = super::output::probe_units(be, &weights, n, &t0)?;
    let mut probe_times = vec![0.0];
    let steps = f.steps();
    let dt = f.time.dt;
    let every = f.output.pvd.then_some(f.time.output_every).filter(|&e| e > 0);
    let bar = io::progress_bar(steps as u64, "time steps", progress);
    let mut state = be.from_host(&t0)?;
    let t_loop = Instant::now();
    let stats = heat.run_with(&mut state, steps, |step, u| {
        let to = Instant::now();
        bar.inc(1);
        let time = step as f64 * dt;
        probe_times.push(time);
        for (vals, e) in probe_values.iter_mut().zip(&units) {
            vals.push(be.dot(e, u)?);
        }
        if every.is_some_and(|e| step % e == 0) || (f.output.pvd && step == steps) {
            let host = be.to_host(u)?;
            if let Some(i) = host.iter().position(|v| !v.is_finite()) {
                return Err(Error::invalid(format!("the temperature at node {i} is not finite after step {step} (t = {time})")));
            }
            frame(step, time, &host, &mut pvd, &mut written)?;
        }
        output_s += to.elapsed().as_secs_f64();
        Ok(())
    })?;
    bar.finish_and_clear();
    let loop_s = t_loop.elapsed().as_secs_f64() - output_s;
    let to = Instant::now();
    if f.output.pvd {
        written.push(pvd.path().to_path_buf());
    }
    if !probes.is_empty() {
        let csv = out.join(&format!("{name}-probes.csv"));
        super::output::write_probe_csv(&csv, probes, &probe_times, &probe_values)?;
        written.push(csv);
        if f.output.plot {
            let png = out.join(&format!("{name}-probes.png"));
            super::output::plot_probes(&png, probes, &probe_times, &probe_values)?;
            written.push(png);
        }
    }
    output_s += to.elapsed().as_secs_f64();
    let records = stats
        .iter()
        .enumerate()
        .map(|(k, s)| StepRecord { step: k + 1, time: (k + 1) as f64 * dt, iterations: s.iterations, relative_residual: s.relative_residual, balance: None })
        .collect();
    Ok(DirectRun { records, written, storage_bytes: heat.storage_bytes(), counts, assembly_s, loop_s, output_s, mesh_s })
}
