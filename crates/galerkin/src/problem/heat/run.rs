//! Runs a heat problem file: mesh → materials → space → loads → [`HeatStepper`] on the chosen
//! backend (the generic [`FeBackend`] code: CPU or CUDA alike) → PVD series, probe histories,
//! face maps and a JSON report with the PCG iterations and the energy balance of every step.
use super::config::{axis, point, HeatBcKind, HeatFile, RegionRef};
use super::loads::{HeatLoads, Laser, Load, Schedule};
use super::material::{Corrosion, Material, MaterialMap, Profile, Rule, Selector, Shape, Voxels};
use super::output::{plot_probes, write_probe_csv, FaceMap};
use super::stepper::{HeatSetup, HeatStepper};
use super::StepRecord;
use crate::backend::AnyBackend;
use crate::io::{self, OutputFile};
use crate::operator::FeBackend;
use crate::problem::config::{scalar_spec, ScalarSpec};
use crate::problem::run::{
    build_mesh_from, AssemblyReport, MeshReport, PhaseTimes, Report, RunOptions, SolverReport,
    SpaceReport,
};
use crate::problem::validate::{boundaries_have_facets, FieldFaults, Requirement};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// What `report.json` holds for a heat run.
#[derive(Serialize)]
struct HeatReport<'a> {
    title: &'a str,
    backend: String,
    notes: &'a [String],
    /// `lattice` (the direct lattice, no mesh) or `mesh (why not the lattice)`.
    path: &'a str,
    cells: usize,
    dofs: usize,
    degree: usize,
    level: &'static str,
    storage_bytes: usize,
    materials: Vec<MaterialReport>,
    dt: f64,
    theta: f64,
    steps: usize,
    total_iterations: usize,
    /// Wall time of the time loop without outputs, per PCG iteration (s).
    seconds_per_iteration: f64,
    loop_seconds: f64,
    /// Largest relative energy-balance residual over the steps.
    max_balance_relative: f64,
    heat_in_total: f64,
    stored_change_total: f64,
    per_step: &'a [StepRecord],
    face_maps: Vec<FaceMapReport>,
    outputs: &'a [OutputFile],
}

#[derive(Serialize)]
struct MaterialReport {
    name: String,
    k: f64,
    rho: f64,
    c: f64,
    cells: usize,
}

#[derive(Serialize)]
struct FaceMapReport {
    file: String,
    time: f64,
    min: f64,
    max: f64,
}

/// The material map of the file (region names resolved on `mesh`; without one, as on the direct
/// lattice, region rules are an error) in the bounding box `bbox`.
pub(super) fn materials(f: &HeatFile, base: &Path, bbox: ([f64; 3], [f64; 3]), mesh: Option<&crate::mesh::Mesh>) -> Result<MaterialMap> {
    let mut mats: Vec<Material> = f
        .material
        .iter()
        .map(|m| Material::new(&m.name, m.k, m.rho, m.c))
        .collect();
    let mut rules = Vec::new();
    for (j, m) in f.material.iter().enumerate() {
        let key = |k: &str| format!("material[{j}].{k}");
        if let Some(s) = &m.shape {
            let need = |v: Option<f64>, k: &str| {
                v.ok_or_else(|| {
                    Error::config(
                        key(&format!("shape.{k}")),
                        format!("a {} needs `{k}`", s.kind),
                    )
                })
            };
            let pt = |v: &Option<Vec<f64>>, k: &str| -> Result<[f64; 3]> {
                point(
                    v.as_deref().ok_or_else(|| {
                        Error::config(
                            key(&format!("shape.{k}")),
                            format!("a {} needs `{k}`", s.kind),
                        )
                    })?,
                    &key(&format!("shape.{k}")),
                )
            };
            let ax = || axis(s.axis.as_deref().unwrap_or(""), &key("shape.axis"));
            let shape = match s.kind.as_str() {
                "layer" => Shape::Layer {
                    axis: ax()?,
                    from: need(s.from, "from")?,
                    to: need(s.to, "to")?,
                },
                "sphere" => Shape::Sphere {
                    centre: pt(&s.centre, "centre")?,
                    radius: need(s.radius, "radius")?,
                },
                "cylinder" => Shape::Cylinder {
                    centre: pt(&s.centre, "centre")?,
                    axis: ax()?,
                    radius: need(s.radius, "radius")?,
                    from: s.from.unwrap_or(f64::NEG_INFINITY),
                    to: s.to.unwrap_or(f64::INFINITY),
                },
                "box" => Shape::Box {
                    lower: pt(&s.lower, "lower")?,
                    upper: pt(&s.upper, "upper")?,
                },
                other => {
                    return Err(Error::config(
                        key("shape.kind"),
                        format!("expected layer, sphere, cylinder or box, got `{other}`"),
                    ))
                }
            };
            rules.push(Rule {
                selector: Selector::Shape(shape),
                material: j,
            });
        }
        if let Some(rs) = &m.regions {
            let mesh = mesh.ok_or_else(|| Error::config(key("regions"), "material regions need a mesh"))?;
            let tags = rs
                .iter()
                .map(|r| match r {
                    RegionRef::Tag(t) => Ok(*t),
                    RegionRef::Name(n) => mesh
                        .tag(n, mesh.dim)
                        .map_err(|e| Error::config(key("regions"), e.to_string())),
                })
                .collect::<Result<Vec<_>>>()?;
            if let Some(t) = tags.iter().find(|t| !mesh.cell_tags.contains(t)) {
                return Err(Error::config(
                    key("regions"),
                    format!("no cell of the mesh has region tag {t}"),
                ));
            }
            rules.push(Rule {
                selector: Selector::Regions(tags),
                material: j,
            });
        }
    }
    let voxels = match &f.voxels {
        Some(v) => Some(
            Voxels::read_npy(&base.join(&v.file))
                .map_err(|e| Error::config("voxels.file", e.to_string()))?,
        ),
        None => None,
    };
    let corrosion = match &f.corrosion {
        Some(c) => {
            let (ax, upper) = Corrosion::face(&c.face).ok_or_else(|| {
                Error::config(
                    "corrosion.face",
                    format!("expected xmin … zmax, got `{}`", c.face),
                )
            })?;
            let (lo, hi) = bbox;
            let centre = match &c.centre {
                Some(v) => point(v, "corrosion.centre")?,
                None => std::array::from_fn(|k| 0.5 * (lo[k] + hi[k])),
            };
            let profile = match c.profile.as_deref().unwrap_or("pit") {
                "pit" if c.axis.is_none() => Profile::Pit,
                "pit" => {
                    return Err(Error::config(
                        "corrosion.axis",
                        "only a groove takes an axis",
                    ))
                }
                "groove" => Profile::Groove {
                    axis: axis(
                        c.axis.as_deref().ok_or_else(|| {
                            Error::config("corrosion.axis", "a groove needs the axis it runs along")
                        })?,
                        "corrosion.axis",
                    )?,
                },
                other => {
                    return Err(Error::config(
                        "corrosion.profile",
                        format!("expected pit or groove, got `{other}`"),
                    ))
                }
            };
            let filler_name = c.filler.clone().unwrap_or_else(|| "air".into());
            let filler = match mats.iter().position(|m| m.name == filler_name) {
                Some(i) => i,
                None if filler_name == "air" => {
                    mats.push(Material::air());
                    mats.len() - 1
                }
                None => {
                    return Err(Error::config(
                        "corrosion.filler",
                        format!("no material named `{filler_name}`"),
                    ))
                }
            };
            Some(Corrosion {
                axis: ax,
                upper,
                depth: c.depth,
                radius: c.radius,
                centre,
                profile,
                filler,
            })
        }
        None => None,
    };
    Ok(MaterialMap {
        materials: mats,
        voxels,
        rules,
        corrosion,
    })
}

/// The loads of the file's `[[bc]]` tables and `physics.source`.
fn loads(f: &HeatFile, mesh: &crate::mesh::Mesh, faults: &FieldFaults) -> Result<HeatLoads> {
    for (j, bc) in f.bc.iter().enumerate() {
        boundaries_have_facets(mesh, &bc.boundary.to_vec()).map_err(|why| Error::config(format!("bc[{j}].boundary"), why))?;
    }
    file_loads(f, faults)
}

/// The loads of the file, their boundaries unchecked (the direct lattice has no mesh; its plan
/// takes box sides by name only).
pub(super) fn file_loads(f: &HeatFile, faults: &FieldFaults) -> Result<HeatLoads> {
    let mut loads = HeatLoads::default();
    for (j, bc) in f.bc.iter().enumerate() {
        let key = |k: &str| format!("bc[{j}].{k}");
        let on = bc.boundary.to_vec();
        let schedule = || -> Result<Schedule> {
            let mut s = Schedule {
                factor: None,
                on: bc.on.unwrap_or(f64::NEG_INFINITY),
                off: bc.off.unwrap_or(f64::INFINITY),
            };
            if !(s.on <= s.off) {
                return Err(Error::config(
                    key("off"),
                    format!("must not come before `on` ({} < {})", s.off, s.on),
                ));
            }
            if let Some(e) = &bc.factor {
                let e = crate::expr::Expr::parse(e)
                    .map_err(|err| Error::config(key("factor"), err.to_string()))?;
                let (faults, k) = (faults.clone(), key("factor"));
                s = s.factor(move |t| {
                    faults.check(&k, Requirement::Finite, [0.0; 3], e.eval([0.0; 3], t))
                });
            }
            Ok(s)
        };
        let load = match bc.kind {
            HeatBcKind::Dirichlet => {
                let (faults, k) = (faults.clone(), key("value"));
                match scalar_spec(
                    bc.value
                        .as_ref()
                        .ok_or_else(|| Error::config(key("value"), "missing"))?,
                    &k,
                    false,
                )? {
                    ScalarSpec::Number(v) if v.is_finite() => Load::Dirichlet {
                        on,
                        value: Arc::new(move |_, _| v),
                        time_dependent: false,
                    },
                    ScalarSpec::Number(v) => {
                        return Err(Error::config(k, format!("must be finite, got {v}")))
                    }
                    ScalarSpec::Expr(e) => Load::Dirichlet {
                        on,
                        time_dependent: e.depends_on_time(),
                        value: Arc::new(move |x, t| {
                            faults.check(&k, Requirement::Finite, x, e.eval(x, t))
                        }),
                    },
                    ScalarSpec::Regions(_) => {
                        return Err(Error::config(k, "expected a number or an expression"))
                    }
                }
            }
            HeatBcKind::Flux => {
                let (faults, k) = (faults.clone(), key("value"));
                let q: super::loads::SpaceFn = match scalar_spec(bc.value.as_ref().ok_or_else(|| Error::config(key("value"), "missing"))?, &k, false)? {
                    ScalarSpec::Number(v) if v.is_finite() => Arc::new(move |_| v),
                    ScalarSpec::Expr(e) if !e.depends_on_time() => Arc::new(move |x| faults.check(&k, Requirement::Finite, x, e.eval(x, 0.0))),
                    ScalarSpec::Expr(_) => return Err(Error::config(k, "a flux's value is a function of x, y, z; give its time dependence as `factor`")),
                    _ => return Err(Error::config(k, "expected a finite number or an expression of x, y, z")),
                };
                Load::Flux {
                    on,
                    q,
                    schedule: schedule()?,
                }
            }
            HeatBcKind::Laser => {
                let laser = Laser {
                    power: bc.power.unwrap_or(f64::NAN),
                    radius: bc.radius.unwrap_or(f64::NAN),
                    centre: point(bc.centre.as_deref().unwrap_or(&[]), &key("centre"))?,
                };
                laser
                    .check()
                    .map_err(|e| Error::config(key("power"), e.to_string()))?;
                Load::Laser {
                    on,
                    laser,
                    schedule: schedule()?,
                }
            }
            HeatBcKind::Robin => {
                let (h, ambient) = (bc.h.unwrap_or(f64::NAN), bc.ambient.unwrap_or(f64::NAN));
                if !(h.is_finite() && h >= 0.0) {
                    return Err(Error::config(
                        key("h"),
                        format!("must be finite and non-negative, got {h}"),
                    ));
                }
                if !ambient.is_finite() {
                    return Err(Error::config(
                        key("ambient"),
                        format!("must be finite, got {ambient}"),
                    ));
                }
                Load::Robin { on, h, ambient }
            }
        };
        loads = loads.push(load);
    }
    if let Some(s) = &f.physics.source {
        let faults = faults.clone();
        let q: super::loads::SpaceFn = match scalar_spec(s, "physics.source", false)? {
            ScalarSpec::Number(v) if v.is_finite() => Arc::new(move |_| v),
            ScalarSpec::Expr(e) => Arc::new(move |x| {
                faults.check("physics.source", Requirement::Finite, x, e.eval(x, 0.0))
            }),
            _ => {
                return Err(Error::config(
                    "physics.source",
                    "expected a finite number or an expression of x, y, z",
                ))
            }
        };
        loads = loads.source(move |x| q(x), Schedule::default());
    }
    Ok(loads)
}

/// The initial temperature at every node.
fn initial(
    f: &HeatFile,
    base: &Path,
    space: &FunctionSpace,
    faults: &FieldFaults,
) -> Result<Vec<f64>> {
    let i = &f.initial;
    if let Some(p) = &i.vtu {
        if space.dofmap.node_coords.len() != space.mesh.num_vertices() {
            return Err(Error::config(
                "initial.vtu",
                "a VTU holds vertex values: it can start a degree-1 space only",
            ));
        }
        return super::output::read_vtu_point_field(
            &base.join(p),
            i.field.as_deref().unwrap_or("temperature"),
            &space.mesh,
        );
    }
    if let Some(e) = &i.expression {
        let e = crate::expr::Expr::parse(e)
            .map_err(|err| Error::config("initial.expression", err.to_string()))?;
        let u = space.interpolate(|x, v| {
            v[0] = faults.check("initial.expression", Requirement::Finite, x, e.eval(x, 0.0))
        });
        faults.check_none()?;
        return Ok(u);
    }
    Ok(vec![i.value.unwrap_or(0.0); space.ndofs()])
}

/// What a heat problem file sets up before its operators: the mesh (a generated box keeps its
/// lattice numbering at level `none`), the materials, the loads, the space and the initial state.
pub struct Prepared {
    pub space: Arc<FunctionSpace>,
    pub map: MaterialMap,
    pub fields: super::material::MaterialFields,
    pub loads: HeatLoads,
    pub t0: Vec<f64>,
    pub faults: FieldFaults,
    pub notes: Vec<String>,
    pub mesh_s: f64,
    pub space_s: f64,
}

pub fn prepare(f: &HeatFile, base: &Path) -> Result<Prepared> {
    let mut notes = Vec::new();
    let t = Instant::now();
    let (mesh, mesh_notes) = build_mesh_from(&f.mesh, base)?;
    notes.extend(mesh_notes);
    // A lattice keeps its numbering at level `none` by default: that is what makes its operator
    // the fixed-grid one (operator::level::none::grid), faster than any renumbering.
    let keep_lattice = f.assembly.level == crate::operator::AssemblyLevel::None && crate::mesh::lattice::Lattice::recognize(&mesh).is_some();
    let mut mesh = if f.mesh.reorder.unwrap_or(!keep_lattice) {
        crate::mesh::ordering::reorder_for_locality(&mesh)?
    } else {
        mesh
    };
    let map = materials(f, base, mesh.bounding_box(), Some(&mesh))?;
    let fields = map.assign(&mut mesh)?;
    let faults = FieldFaults::new(mesh.dim);
    let loads = loads(f, &mesh, &faults)?;
    let mesh_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let nodes = f
        .space
        .nodes
        .unwrap_or(crate::fe::NodeFamily::default_for(f.space.degree));
    let space = Arc::new(
        FunctionSpace::lagrange_with_nodes(Arc::new(mesh), f.space.degree, 1, nodes).map_err(
            |e| match e {
                Error::Unsupported(why) => Error::config("space.degree", why),
                e => e,
            },
        )?,
    );
    let t0 = initial(f, base, &space, &faults)?;
    Ok(Prepared { space, map, fields, loads, t0, faults, notes, mesh_s, space_s: t.elapsed().as_secs_f64() })
}

/// Reads, runs and writes the outputs of a heat problem file's text.
pub fn run_text(text: &str, path: &Path, opts: &RunOptions) -> Result<Report> {
    run_text_on(text, path, opts, true)
}

/// [`run_text`] with the direct lattice allowed or not (`false`: the mesh path whatever the file
/// asks; tests compare the two).
pub fn run_text_on(text: &str, path: &Path, opts: &RunOptions, lattice: bool) -> Result<Report> {
    let t_start = Instant::now();
    let f = HeatFile::parse(text, &path.display().to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut notes = Vec::new();
    let backend = AnyBackend::select(opts.backend.unwrap_or(f.backend), Ok(()), &mut notes)?;
    let path = match super::direct::plan(&f) {
        Ok(plan) if lattice => return run_direct(&f, base, opts, backend, notes, plan, t_start),
        Ok(_) => "mesh (asked for)".to_string(),
        Err(why) => format!("mesh ({why})"),
    };
    let mut times = PhaseTimes::default();
    let Prepared { space, map, fields, loads, t0, faults, notes: prep_notes, mesh_s, space_s } = prepare(&f, base)?;
    notes.extend(prep_notes);
    times.mesh = mesh_s;
    times.space = space_s;
    let probes = f
        .output
        .probes
        .iter()
        .enumerate()
        .map(|(j, p)| point(p, &format!("output.probes[{j}]")))
        .collect::<Result<Vec<_>>>()?;
    // The field at each probe point: the element's basis weights there, found once.
    let probe_weights = space.points_weights(&probes, "output.probes")?;
    let face_map = match &f.output.face_map {
        Some(fm) => Some((
            FaceMap::new(&space, &fm.face, fm.resolution.unwrap_or(200))?,
            fm.times.clone(),
        )),
        None => None,
    };
    let out = io::OutputDir::lock(&opts.out_dir)?;
    let setup = HeatSetup {
        rhoc: fields.rhoc.clone(),
        k: fields.k.clone(),
        zero_dirichlet: Vec::new(),
        dt: f.time.dt,
        theta: f.time.theta,
    };
    let ctx = Context {
        f: &f,
        space: &space,
        setup: &setup,
        loads: &loads,
        t0: &t0,
        probes: &probes,
        probe_weights: &probe_weights,
        face_map: face_map.as_ref(),
        out: &out,
        progress: opts.progress,
        faults: &faults,
    };
    let run = match &backend {
        AnyBackend::Cpu(cpu) => march(cpu, &ctx)?,
        AnyBackend::Cuda(be) => march(be.as_ref(), &ctx)?,
    };
    faults.check_none()?;
    times.assembly = run.assembly_s;
    times.solve = run.loop_s;
    times.output = run.output_s;
    let geometry = Geometry { cell_type: space.mesh.cell_type, cells: space.mesh.num_cells(), vertices: space.mesh.num_vertices(), dofs: space.ndofs() };
    finish(&f, &backend, notes, path, geometry, material_reports(&map, &fields.counts), run, times, &out, t_start)
}

/// Runs a heat file on the direct lattice of `plan` ([`super::direct`]).
fn run_direct(f: &HeatFile, base: &Path, opts: &RunOptions, backend: AnyBackend, notes: Vec<String>, plan: super::direct::Plan, t_start: Instant) -> Result<Report> {
    let mut times = PhaseTimes::default();
    let probes = f.output.probes.iter().enumerate().map(|(j, p)| point(p, &format!("output.probes[{j}]"))).collect::<Result<Vec<_>>>()?;
    let map = materials(f, base, (plan.bx.lo, plan.bx.hi), None)?;
    let faults = FieldFaults::new(3);
    let out = io::OutputDir::lock(&opts.out_dir)?;
    let r = match &backend {
        AnyBackend::Cpu(cpu) => super::direct::run(cpu, f, &plan, &map, &probes, &out, opts.progress, &faults),
        AnyBackend::Cuda(be) => super::direct::run(be.as_ref(), f, &plan, &map, &probes, &out, opts.progress, &faults),
    }
    .map_err(|e| faults.or(e))?;
    faults.check_none()?;
    times.mesh = r.mesh_s;
    times.assembly = r.assembly_s;
    times.solve = r.loop_s;
    times.output = r.output_s;
    let outputs = r.written.iter().map(|p| io::file_record(p)).collect::<Result<Vec<_>>>()?;
    let bx = &plan.bx;
    let geometry = Geometry { cell_type: bx.cell, cells: bx.ncells(), vertices: bx.ndofs(), dofs: bx.ndofs() };
    let run = Marched { records: r.records, outputs, face_maps: Vec::new(), storage_bytes: r.storage_bytes, assembly_s: r.assembly_s, loop_s: r.loop_s, output_s: r.output_s };
    finish(f, &backend, notes, "lattice".into(), geometry, material_reports(&map, &r.counts), run, times, &out, t_start)
}

/// The mesh (or lattice) sizes a report names.
struct Geometry {
    cell_type: crate::mesh::CellType,
    cells: usize,
    vertices: usize,
    dofs: usize,
}

fn material_reports(map: &MaterialMap, counts: &[usize]) -> Vec<MaterialReport> {
    map.materials
        .iter()
        .zip(counts)
        .map(|(m, &cells)| MaterialReport { name: m.name.clone(), k: m.k, rho: m.rho, c: m.c, cells })
        .collect()
}

/// Writes `report.json` (when asked) and returns the run's report.
#[allow(clippy::too_many_arguments)]
fn finish(f: &HeatFile, backend: &AnyBackend, notes: Vec<String>, path: String, g: Geometry, materials: Vec<MaterialReport>, run: Marched, mut times: PhaseTimes, out: &io::OutputDir, t_start: Instant) -> Result<Report> {
    let total_iterations: usize = run.records.iter().map(|r| r.iterations).sum();
    let mut outputs = run.outputs;
    times.total = t_start.elapsed().as_secs_f64();
    let balances = || run.records.iter().filter_map(|r| r.balance);
    if f.output.report {
        let r = HeatReport {
            title: &f.title,
            backend: backend.name(),
            notes: &notes,
            path: &path,
            cells: g.cells,
            dofs: g.dofs,
            degree: f.space.degree,
            level: f.assembly.level.name(),
            storage_bytes: run.storage_bytes,
            materials,
            dt: f.time.dt,
            theta: f.time.theta,
            steps: run.records.len(),
            total_iterations,
            seconds_per_iteration: if total_iterations > 0 {
                run.loop_s / total_iterations as f64
            } else {
                0.0
            },
            loop_seconds: run.loop_s,
            max_balance_relative: balances().map(|b| b.relative).fold(0.0, f64::max),
            heat_in_total: balances().map(|b| b.heat_in).sum(),
            stored_change_total: balances().map(|b| b.stored_change).sum(),
            per_step: &run.records,
            face_maps: run.face_maps,
            outputs: &outputs,
        };
        let p = out.join("report.json");
        io::write_json(&p, &r)?;
        outputs.push(io::file_record(&p)?);
    }
    let last = run.records.last();
    Ok(Report {
        title: f.title.clone(),
        backend: backend.name(),
        notes,
        mesh: MeshReport {
            cell_type: g.cell_type,
            cells: g.cells,
            vertices: g.vertices,
            dim: 3,
        },
        space: SpaceReport {
            family: "lagrange (heat)".into(),
            degree: f.space.degree,
            components: 1,
            dofs: g.dofs,
        },
        assembly: AssemblyReport {
            level: f.assembly.level,
            storage_bytes: run.storage_bytes,
            colors: 0,
            dirichlet_dofs: 0,
        },
        solver: SolverReport {
            method: format!("cg, {} steps", run.records.len()),
            preconditioner: "jacobi".into(),
            iterations: total_iterations,
            initial_residual: 0.0,
            final_residual: 0.0,
            relative_residual: last.map_or(0.0, |r| r.relative_residual),
            residual_history: Vec::new(),
        },
        errors: None,
        points: Vec::new(),
        timings: times,
        memory: Default::default(),
        outputs,
    })
}

struct Context<'a> {
    f: &'a HeatFile,
    space: &'a Arc<FunctionSpace>,
    setup: &'a HeatSetup,
    loads: &'a HeatLoads,
    t0: &'a [f64],
    probes: &'a [[f64; 3]],
    probe_weights: &'a [Vec<(usize, f64)>],
    face_map: Option<&'a (FaceMap, Vec<f64>)>,
    out: &'a io::OutputDir,
    progress: bool,
    faults: &'a FieldFaults,
}

struct Marched {
    records: Vec<StepRecord>,
    outputs: Vec<OutputFile>,
    face_maps: Vec<FaceMapReport>,
    storage_bytes: usize,
    assembly_s: f64,
    loop_s: f64,
    output_s: f64,
}

/// The time loop on backend `be` with its outputs: only the probes' values (dot products), the
/// balance's scalars and the requested frames come back from the backend.
fn march<B: FeBackend>(be: &B, c: &Context) -> Result<Marched> {
    let f = c.f;
    let t = Instant::now();
    let mut stepper =
        HeatStepper::with_loads(be, c.space.clone(), c.setup, c.loads, f.assembly.level)
            .map_err(|e| c.faults.or(e))?;
    stepper.options.rtol = f.solver.rtol;
    stepper.options.max_iter = f.solver.max_iter;
    let assembly_s = t.elapsed().as_secs_f64();
    let storage_bytes = stepper.storage_bytes();
    let n = c.space.ndofs();
    let steps = f.steps();
    let mut state = be.from_host(c.t0)?;
    let name = &f.output.name;
    let mut output_s = 0.0;
    let mut outputs = Vec::new();
    let mut pvd = io::Pvd::new(c.out.join(&format!("{name}.pvd")));
    let frame = |step: usize,
                 time: f64,
                 u: &[f64],
                 pvd: &mut io::Pvd,
                 outputs: &mut Vec<std::path::PathBuf>|
     -> Result<()> {
        let file = format!("{name}_{step:06}.vtu");
        let p = c.out.join(&file);
        let mut w = io::VtuWriter::new(&c.space.mesh);
        w.point_scalar("temperature", c.space.vertex_values(u))?;
        w.write(&p)?;
        pvd.add(time, &file)?;
        outputs.push(p);
        Ok(())
    };
    let mut written: Vec<std::path::PathBuf> = Vec::new();
    if f.output.pvd {
        frame(0, 0.0, c.t0, &mut pvd, &mut written)?;
    }
    let (units, mut probe_values) = super::output::probe_units(be, &c.probe_weights, n, c.t0)?;
    let mut probe_times = vec![0.0];
    // Face maps: the step whose end is nearest each requested time.
    let dt = f.time.dt;
    let map_steps: Vec<(usize, f64)> = c
        .face_map
        .map(|(_, ts)| {
            ts.iter()
                .map(|&tm| (((tm / dt).round().max(0.0) as usize).min(steps), tm))
                .collect()
        })
        .unwrap_or_default();
    let mut face_maps = Vec::new();
    if let Some((fm, _)) = c.face_map {
        for (k, &(s, tm)) in map_steps.iter().enumerate() {
            if s == 0 {
                let file = format!("{name}-face-{k}.png");
                let (min, max) = fm.draw(&c.out.join(&file), c.t0, 0.0)?;
                written.push(c.out.join(&file));
                face_maps.push(FaceMapReport {
                    file,
                    time: tm,
                    min,
                    max,
                });
            }
        }
    }
    let bar = io::progress_bar(steps as u64, "time steps", c.progress);
    let every = f
        .output
        .pvd
        .then_some(f.time.output_every)
        .filter(|&e| e > 0);
    let t_loop = Instant::now();
    let records = stepper.run_recorded(&mut state, steps, |r, u| {
        let t_out = Instant::now();
        bar.inc(1);
        probe_times.push(r.time);
        for (vals, e) in probe_values.iter_mut().zip(&units) {
            vals.push(be.dot(e, u)?);
        }
        let want_frame =
            every.is_some_and(|e| r.step % e == 0) || (f.output.pvd && r.step == steps);
        let maps: Vec<usize> = map_steps
            .iter()
            .enumerate()
            .filter(|(_, (s, _))| *s == r.step)
            .map(|(k, _)| k)
            .collect();
        if want_frame || !maps.is_empty() {
            let host = be.to_host(u)?;
            if let Some(i) = host.iter().position(|v| !v.is_finite()) {
                return Err(c.faults.or(Error::invalid(format!(
                    "the temperature at node {i} is not finite after step {} (t = {})",
                    r.step, r.time
                ))));
            }
            if want_frame {
                frame(r.step, r.time, &host, &mut pvd, &mut written)?;
            }
            if let Some((fm, _)) = c.face_map {
                for k in maps {
                    let file = format!("{name}-face-{k}.png");
                    let (min, max) = fm.draw(&c.out.join(&file), &host, r.time)?;
                    written.push(c.out.join(&file));
                    face_maps.push(FaceMapReport {
                        file,
                        time: r.time,
                        min,
                        max,
                    });
                }
            }
        }
        output_s += t_out.elapsed().as_secs_f64();
        Ok(())
    })?;
    bar.finish_and_clear();
    let loop_s = t_loop.elapsed().as_secs_f64() - output_s;
    let t_out = Instant::now();
    if f.output.pvd {
        written.push(pvd.path().to_path_buf());
    }
    if !c.probes.is_empty() {
        let csv = c.out.join(&format!("{name}-probes.csv"));
        write_probe_csv(&csv, c.probes, &probe_times, &probe_values)?;
        written.push(csv);
        if f.output.plot {
            let png = c.out.join(&format!("{name}-probes.png"));
            plot_probes(&png, c.probes, &probe_times, &probe_values)?;
            written.push(png);
        }
    }
    for p in &written {
        outputs.push(io::file_record(p)?);
    }
    output_s += t_out.elapsed().as_secs_f64();
    Ok(Marched {
        records,
        outputs,
        face_maps,
        storage_bytes,
        assembly_s,
        loop_s,
        output_s,
    })
}
