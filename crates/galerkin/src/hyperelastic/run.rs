//! Running a hyperelastic problem file: mesh (or shell), space, law and fibres, loads and
//! constraints, then the Newton loop on the chosen backend, with a VTU of the displacement after
//! every load step collected in a PVD, and `report.json` (per step: residual norms, step lengths,
//! linear iterations; displacements at the requested points).
use super::config::{expr_of, exprs, FibreSource, HyperBcKind, HyperFile};
use super::element::{frame_from_fibre, frame_from_fibre_2d, CpuHyper, HyperElement};
use super::loads::{add_body_force, add_traction, tagged_facets, FollowerPressure};
use super::newton::{self, HyperSystem, LoadStepReport, Loading, NewtonOptions, NewtonTimes};
use super::multigrid::MgSystem;
use super::system::CpuSystem;
use crate::backend::{AnyBackend, Backend};
use crate::io::{self, OutputFile, Pvd, VtuWriter};
use crate::linalg::CsrMatrix;
use crate::operator::integrate::cell_centroid;
use crate::problem::linear::Boundary;
use crate::problem::run::{AssemblyReport, MeshReport, PhaseTimes, Report, RunOptions, SolverReport, SpaceReport};
use crate::solver::precond::SolverBackend;
use crate::solver::{KrylovOptions, SolverMethod};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// A problem file turned into library objects (host side), ready for a backend.
pub struct Prepared {
    pub el: HyperElement,
    /// CSR pattern of the Jacobian (for the pressure positions).
    pub pattern: CsrMatrix,
    pub dead: Vec<f64>,
    pub mask: Vec<f64>,
    /// Constrained dofs with their value expression (the last condition naming a dof wins).
    pub dirichlet: std::collections::BTreeMap<usize, crate::expr::Expr>,
    pub pressure: FollowerPressure,
    pub options: NewtonOptions,
    pub notes: Vec<String>,
    /// Seconds per phase of [`prepare`] (mesh, frames, space, element, pattern, loads), in order:
    /// where the time before the first Newton iteration goes (issue 17, 10⁷ unknowns).
    pub phases: Vec<(&'static str, f64)>,
}

/// Seconds since the last lap, pushed under `name`.
pub(crate) struct Laps {
    pub laps: Vec<(&'static str, f64)>,
    t: Instant,
}

impl Laps {
    pub(crate) fn new() -> Laps {
        Laps { laps: Vec::new(), t: Instant::now() }
    }
    pub(crate) fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.laps.push((name, (now - self.t).as_secs_f64()));
        self.t = now;
    }
}

fn tags_of(space: &FunctionSpace, on: &[Boundary], key: &str) -> Result<Vec<i32>> {
    on.iter()
        .map(|b| match b {
            Boundary::Id(t) => Ok(*t),
            Boundary::Name(n) => space.mesh.tag(n, space.mesh.dim - 1).map_err(|e| Error::config(key, e.to_string())),
        })
        .collect()
}

/// The mesh of a file: `[shell]`, `[ring]` or the usual `[mesh]`, renumbered for locality; with
/// `fibre = { element_data = "…" }`, also the view's vector per cell (in the renumbered order).
pub fn build_mesh(f: &HyperFile, base: &Path) -> Result<(crate::mesh::Mesh, Vec<String>, Option<Vec<[f64; 3]>>)> {
    let view = match f.physics.fibre_source()? {
        Some(FibreSource::ElementData(name)) => Some(name),
        _ => None,
    };
    let generated = match (&f.shell, &f.ring) {
        (Some(s), _) => Some(super::mesh::shell(s)?),
        (None, Some(r)) => Some(super::mesh::ring(r)?),
        (None, None) => None,
    };
    let (mesh, notes, cell_data) = match (&f.mesh, generated, &view) {
        (_, Some(_), Some(_)) => return Err(Error::config("physics.fibre.element_data", "needs a Gmsh mesh file ([mesh] file = …), not [shell] or [ring]")),
        (_, Some(m), None) => (m, Vec::new(), None),
        (Some(m), None, Some(name)) => {
            let file = m.file.as_ref().ok_or_else(|| Error::config("physics.fibre.element_data", "needs a Gmsh mesh file ([mesh] file = …)"))?;
            let (mesh, notes, data) = crate::mesh::gmsh_data::read_msh_cell_data(&base.join(file), name, 3).map_err(|e| Error::config("physics.fibre.element_data", e.to_string()))?;
            let data = data.into_iter().map(|v| [v[0], v[1], v[2]]).collect::<Vec<_>>();
            (mesh, notes, Some(data))
        }
        (Some(m), None, None) => {
            let (mesh, notes) = crate::problem::run::build_mesh_from(m, base)?;
            (mesh, notes, None)
        }
        (None, None, _) => return Err(Error::config("mesh", "missing")),
    };
    if !(mesh.dim == 3 || mesh.dim == 2) {
        return Err(Error::config("mesh", format!("hyperelasticity needs a 3D mesh or a 2D one (plane strain), got {}D", mesh.dim)));
    }
    if f.physics.plane.is_some() && mesh.dim != 2 {
        return Err(Error::config("physics.plane", format!("only for 2D meshes (this one is {}D)", mesh.dim)));
    }
    let reorder = f.mesh.as_ref().and_then(|m| m.reorder).unwrap_or(true);
    if !reorder {
        return Ok((mesh, notes, cell_data));
    }
    // `reorder_for_locality` puts old cell order[k] at k: the cell data follow the same order.
    let cell_data = cell_data.map(|d| crate::mesh::ordering::hilbert_cell_order(&mesh).iter().map(|&c| d[c as usize]).collect());
    Ok((crate::mesh::ordering::reorder_for_locality(&mesh)?, notes, cell_data))
}

/// The material frame of each cell from the `fibre` key: expressions at the centroid, or the
/// mesh file's vectors (`cell_data`); in 2D an in-plane fibre (its x, y components).
pub(crate) fn frames_of(f: &HyperFile, mesh: &crate::mesh::Mesh, cell_data: Option<Vec<[f64; 3]>>) -> Result<Vec<super::law::M3>> {
    let dim = mesh.dim;
    let frame = |v: [f64; 3]| if dim == 2 { frame_from_fibre_2d([v[0], v[1]]) } else { frame_from_fibre(v) };
    Ok(match (f.physics.fibre_source()?, cell_data) {
        (Some(FibreSource::ElementData(name)), Some(data)) => data
            .iter()
            .enumerate()
            .map(|(c, &v)| {
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(Error::config("physics.fibre.element_data", format!("view `{name}`: cell {c} has a non-finite fibre {v:?}")));
                }
                frame(v).map_err(|why| Error::config("physics.fibre.element_data", format!("view `{name}`: cell {c} (centroid {:?}): {why}", cell_centroid(mesh, c))))
            })
            .collect::<Result<Vec<_>>>()?,
        (Some(FibreSource::Expr(v)), _) => {
            let e = exprs(&v, "physics.fibre", dim)?;
            (0..mesh.num_cells())
                .map(|c| {
                    let x = cell_centroid(mesh, c);
                    frame([e[0].eval(x, 0.0), e[1].eval(x, 0.0), e[2].eval(x, 0.0)]).map_err(|why| Error::config("physics.fibre", format!("at the centroid {x:?} of cell {c}: {why}")))
                })
                .collect::<Result<Vec<_>>>()?
        }
        _ => Vec::new(),
    })
}

/// Everything but the backend.
pub fn prepare(f: &HyperFile, base: &Path) -> Result<Prepared> {
    let mut laps = Laps::new();
    let (mesh, notes, cell_data) = build_mesh(f, base)?;
    laps.lap("mesh");
    let dim = mesh.dim;
    if f.space.family != "lagrange" {
        return Err(Error::config("space.family", "hyperelasticity runs on Lagrange spaces"));
    }
    let frames = frames_of(f, &mesh, cell_data)?;
    laps.lap("frames");
    let space = Arc::new(FunctionSpace::lagrange(Arc::new(mesh), f.space.degree, dim).map_err(|e| match e {
        Error::Unsupported(why) => Error::config("space.degree", why),
        e => e,
    })?);
    laps.lap("space");
    let law = f.law()?;
    let el = HyperElement::with_degree(space.clone(), law, frames, f.quadrature_degree(&space)?)?.plane_stress(f.plane_stress())?;
    laps.lap("element");
    let pattern = crate::operator::assemble::sparsity(&space)?;
    laps.lap("pattern");
    let n = space.ndofs();
    let mut dead = vec![0.0; n];
    if let Some(b) = &f.physics.body_force {
        add_body_force(&el, &exprs(b, "physics.body_force", dim)?, &mut dead)?;
    }
    let mut mask = vec![1.0; n];
    let mut dirichlet = std::collections::BTreeMap::new();
    let mut pressure = FollowerPressure::none();
    for (i, bc) in f.bc.iter().enumerate() {
        let key = format!("bc[{i}]");
        let tags = tags_of(&space, &bc.boundary.to_vec(), &format!("{key}.boundary"))?;
        match bc.kind {
            HyperBcKind::Dirichlet => {
                let v = exprs(&bc.value, &format!("{key}.value"), dim)?;
                let comps = bc.components.clone().unwrap_or_else(|| (0..dim).collect());
                if let Some(&c) = comps.iter().find(|&&c| c >= dim) {
                    return Err(Error::config(format!("{key}.components"), format!("component {c} in {dim}D (components are 0..{})", dim - 1)));
                }
                let nodes = space.boundary_nodes(&tags)?;
                if nodes.is_empty() {
                    return Err(Error::config(format!("{key}.boundary"), "has no boundary facets"));
                }
                for node in nodes {
                    for &c in &comps {
                        mask[node * dim + c] = 0.0;
                        dirichlet.insert(node * dim + c, v[c].clone());
                    }
                }
            }
            HyperBcKind::Traction => {
                let t = exprs(&bc.value, &format!("{key}.value"), dim)?;
                let facets = tagged_facets(&space, &tags)?;
                if facets.is_empty() {
                    return Err(Error::config(format!("{key}.boundary"), "has no boundary facets"));
                }
                add_traction(&space, &facets, &t, &mut dead)?;
            }
            HyperBcKind::Pressure => {
                let p = expr_of(&bc.value, &format!("{key}.value"))?;
                let facets = tagged_facets(&space, &tags)?;
                if facets.is_empty() {
                    return Err(Error::config(format!("{key}.boundary"), "has no boundary facets"));
                }
                pressure = pressure.merge(FollowerPressure::for_element(&el, &facets, &p, &pattern)?);
            }
        }
    }
    let method = f.solver.method.unwrap_or(if f.has_pressure() { SolverMethod::Gmres } else { SolverMethod::Cg });
    let options = NewtonOptions {
        rtol: f.newton.rtol,
        atol: f.newton.atol,
        max_iter: f.newton.max_iter,
        line_search: f.newton.line_search,
        forcing: f.newton.forcing,
        ew_start: super::forcing::EwStart { eta0: f.newton.eta0, eta_rise: f.newton.eta_rise },
        resolve_indefinite: f.newton.resolve_indefinite,
        method,
        precond: f.solver.preconditioner,
        krylov: KrylovOptions { rtol: f.solver.rtol, atol: 0.0, max_iter: f.solver.max_iter, restart: f.solver.restart, progress: false },
        max_cutbacks: f.loads.cutbacks,
        path: f.loads.path(),
        max_rise: f.newton.max_rise,
    };
    laps.lap("loads");
    Ok(Prepared { el, pattern, dead, mask, dirichlet, pressure, options, notes, phases: laps.laps })
}

/// 1 on free dofs and 0 on those a Dirichlet condition of `f` constrains, on `space` (the coarse
/// levels of the multigrid, whose meshes carry the fine one's boundary names).
pub(crate) fn dirichlet_mask(f: &HyperFile, space: &FunctionSpace) -> Result<Vec<f64>> {
    let dim = space.ncomp;
    let mut mask = vec![1.0; space.ndofs()];
    for (i, bc) in f.bc.iter().enumerate().filter(|(_, bc)| bc.kind == HyperBcKind::Dirichlet) {
        let tags = tags_of(space, &bc.boundary.to_vec(), &format!("bc[{i}].boundary"))?;
        let comps = bc.components.clone().unwrap_or_else(|| (0..dim).collect());
        for node in space.boundary_nodes(&tags)? {
            for &c in comps.iter().filter(|&&c| c < dim) {
                mask[node * dim + c] = 0.0;
            }
        }
    }
    Ok(mask)
}

impl Prepared {
    /// The Dirichlet vector at load factor λ: expressions with `t` at t = λ, the others times λ.
    pub fn dirichlet_at(&self, lf: f64) -> Vec<f64> {
        let mut g = vec![0.0; self.mask.len()];
        let coords = &self.el.space.dofmap.node_coords;
        let d = self.el.dim;
        for (dof, e) in &self.dirichlet {
            let x = coords[dof / d];
            g[*dof] = if e.depends_on_time() { e.eval(x, lf) } else { lf * e.eval(x, 0.0) };
        }
        g
    }

    /// The loads on backend `be`.
    pub fn loading<'a, B: Backend>(&'a self, be: &B) -> Result<Loading<'a, B>> {
        Ok(Loading { dead: be.from_host(&self.dead)?, mask: be.from_host(&self.mask)?, dirichlet: Box::new(move |lf| self.dirichlet_at(lf)), pressure: self.pressure.clone() })
    }
}

/// Displacement at points, per load step.
#[derive(Debug, Serialize)]
pub struct PointSeries {
    pub x: [f64; 3],
    /// One `[u_x, u_y, u_z]` per load step (u_z = 0 in plane strain).
    pub displacement: Vec<[f64; 3]>,
}

#[derive(Serialize)]
struct HyperReport<'a> {
    title: &'a str,
    backend: String,
    notes: &'a [String],
    law: super::Law,
    cells: usize,
    degree: usize,
    dofs: usize,
    nnz: usize,
    solver: &'a str,
    preconditioner: super::LinearPrecond,
    load_steps: &'a [LoadStepReport],
    newton_iterations: usize,
    linear_iterations: usize,
    points: &'a [PointSeries],
    times: &'a NewtonTimes,
    outputs: &'a [OutputFile],
}

/// What one backend's run returns.
struct Run {
    steps: Vec<LoadStepReport>,
    times: NewtonTimes,
    points: Vec<PointSeries>,
    outputs: Vec<OutputFile>,
    output_s: f64,
}

/// The Newton loop on `be` with `sys`, writing a VTU per step.
fn drive<B: SolverBackend, S: HyperSystem<B>>(be: &B, sys: &mut S, prep: &mut Prepared, f: &HyperFile, out: &io::OutputDir) -> Result<Run> {
    let space = prep.el.space.clone();
    let opts = prep.options.clone();
    let weights = space.points_weights(&f.output.points, "output.points")?;
    let mut points: Vec<PointSeries> = f.output.points.iter().map(|&x| PointSeries { x, displacement: Vec::new() }).collect();
    let mut pvd = Pvd::new(out.join(&format!("{}.pvd", f.output.name)));
    let mut outputs = Vec::new();
    let mut output_s = 0.0;
    let ld = prep.loading(be)?;
    let mut u = be.zeros(space.ndofs())?;
    let (steps, times) = newton::solve(be, sys, &ld, &mut u, f.loads.steps, &opts, |rep, u| {
        let t = Instant::now();
        let uh = be.to_host(u)?;
        for (p, w) in points.iter_mut().zip(&weights) {
            let mut d = [0.0; 3];
            let dim = space.ncomp;
            for &(node, wt) in w {
                for (k, dk) in d.iter_mut().enumerate().take(dim) {
                    *dk += wt * uh[node * dim + k];
                }
            }
            p.displacement.push(d);
        }
        if f.output.vtu {
            let name = format!("{}_{:04}.vtu", f.output.name, rep.step);
            let path = out.join(&name);
            let (verts, thickness) = (space.vertex_values(&uh), prep.el.thickness_stretch(&uh)?);
            let mut vtu = VtuWriter::new(&space.mesh);
            vtu.point_vector("displacement", space.ncomp, &verts)?;
            if let Some(t) = &thickness {
                // Plane stress: F₃₃ per cell (the sheet's thickness over its reference thickness).
                vtu.cell_scalar("thickness_stretch", t)?;
            }
            vtu.write(&path)?;
            outputs.push(io::file_record(&path)?);
            pvd.add(rep.load_factor, &name)?;
        }
        output_s += t.elapsed().as_secs_f64();
        Ok(())
    })?;
    if f.output.vtu {
        outputs.push(io::file_record(pvd.path())?);
    }
    Ok(Run { steps, times, points, outputs, output_s })
}

/// Reads, runs and writes the outputs of a hyperelastic problem file's text.
pub fn run_text(text: &str, path: &Path, opts: &RunOptions) -> Result<Report> {
    let t_start = Instant::now();
    let f = HyperFile::parse(text, &path.display().to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    let t = Instant::now();
    let mut prep = prepare(&f, base)?;
    let setup_s = t.elapsed().as_secs_f64();
    let mut notes = std::mem::take(&mut prep.notes);
    let runnable = crate::solver::precond::cpu_only(prep.options.method, crate::solver::PreconditionerKind::Jacobi);
    let backend = AnyBackend::select(opts.backend.unwrap_or(f.backend), runnable, &mut notes)?;
    let out = io::OutputDir::lock(&opts.out_dir)?;
    let nnz = prep.pattern.nnz();
    let run = match &backend {
        AnyBackend::Cpu(cpu) => {
            let sys = CpuSystem::new(CpuHyper::new(prep.el.clone())?);
            if prep.options.precond == super::LinearPrecond::Multigrid {
                let mut sys = cpu_multigrid(&f, &prep, sys)?;
                drive(cpu, &mut sys, &mut prep, &f, &out)?
            } else {
                let mut sys = sys;
                drive(cpu, &mut sys, &mut prep, &f, &out)?
            }
        }
        AnyBackend::Cuda(be) => {
            let sys = super::cuda::GpuHyper::new(be, &prep.el)?;
            if prep.options.precond == super::LinearPrecond::Multigrid {
                let mut sys = MgSystem::build(be.as_ref(), &f, &prep, sys, &f.solver.multigrid, |el| super::cuda::GpuHyper::new(be, el))?;
                drive(be.as_ref(), &mut sys, &mut prep, &f, &out)?
            } else {
                let mut sys = sys;
                drive(be.as_ref(), &mut sys, &mut prep, &f, &out)?
            }
        }
    };
    let space = &prep.el.space;
    let mut outputs = run.outputs;
    // Abandoned attempts (cutbacks) count: their work was done.
    let newton_iterations: usize = run.steps.iter().map(|s| s.all_iterations().count()).sum();
    let linear_iterations: usize = run.steps.iter().flat_map(|s| s.all_iterations()).map(|i| i.linear_iterations).sum();
    let cutbacks: usize = run.steps.iter().map(|s| s.abandoned.len()).sum();
    if f.output.report {
        let r = HyperReport {
            title: &f.title,
            backend: backend.name(),
            notes: &notes,
            law: prep.el.law,
            cells: space.mesh.num_cells(),
            degree: f.space.degree,
            dofs: space.ndofs(),
            nnz,
            solver: prep.options.method.name(),
            preconditioner: prep.options.precond,
            load_steps: &run.steps,
            newton_iterations,
            linear_iterations,
            points: &run.points,
            times: &run.times,
            outputs: &outputs,
        };
        let p = out.join("report.json");
        io::write_json(&p, &r)?;
        outputs.push(io::file_record(&p)?);
    }
    let last = run.steps.last();
    Ok(Report {
        title: f.title.clone(),
        backend: backend.name(),
        notes,
        mesh: MeshReport { cell_type: space.mesh.cell_type, cells: space.mesh.num_cells(), vertices: space.mesh.num_vertices(), dim: space.mesh.dim },
        space: SpaceReport { family: if space.mesh.dim == 2 { format!("lagrange (hyperelastic, plane {})", if f.plane_stress() { "stress" } else { "strain" }) } else { "lagrange (hyperelastic)".into() }, degree: f.space.degree, components: space.ncomp, dofs: space.ndofs() },
        assembly: AssemblyReport { level: crate::operator::AssemblyLevel::Full, storage_bytes: nnz * 12, colors: 0, dirichlet_dofs: prep.dirichlet.len() },
        solver: SolverReport {
            method: format!("newton ({} load steps{}, {} iterations) + {}", run.steps.len(), if cutbacks > 0 { format!(" after {cutbacks} cutbacks") } else { String::new() }, newton_iterations, prep.options.method.name()),
            preconditioner: format!("{:?}", prep.options.precond),
            iterations: linear_iterations,
            initial_residual: last.and_then(|s| s.residuals.first().copied()).unwrap_or(0.0),
            final_residual: last.and_then(|s| s.residuals.last().copied()).unwrap_or(0.0),
            relative_residual: last.map_or(0.0, |s| s.residuals.last().copied().unwrap_or(0.0) / s.residuals[0].max(f64::MIN_POSITIVE)),
            residual_history: last.map(|s| s.residuals.clone()).unwrap_or_default(),
        },
        errors: None,
        points: run.points.iter().map(|p| crate::problem::run::PointValue { x: p.x, value: p.displacement.last().map(|d| d.to_vec()).unwrap_or_default() }).collect(),
        timings: PhaseTimes { mesh: setup_s, space: 0.0, assembly: run.times.assembly_s, preconditioner: 0.0, solve: run.times.solve_s, output: run.output_s, total: t_start.elapsed().as_secs_f64(), ..Default::default() },
        memory: Default::default(),
        outputs,
    })
}

/// The Newton loop of a prepared problem on `be` with `sys`, no output: the final displacement
/// (host) and the per-step reports (tests and benchmarks).
pub fn solve_on<B: SolverBackend, S: HyperSystem<B>>(be: &B, sys: &mut S, prep: &mut Prepared, steps: usize) -> Result<(Vec<f64>, Vec<LoadStepReport>, NewtonTimes)> {
    let opts = prep.options.clone();
    let n = prep.el.space.ndofs();
    let ld = prep.loading(be)?;
    let mut u = be.zeros(n)?;
    let (reps, times) = newton::solve(be, sys, &ld, &mut u, steps, &opts, |_, _| Ok(()))?;
    Ok((be.to_host(&u)?, reps, times))
}

/// Parses a problem file's text and prepares it (relative paths from the current directory).
pub fn prepare_text(text: &str) -> Result<(HyperFile, Prepared)> {
    let f = HyperFile::parse(text, "<text>")?;
    let p = prepare(&f, Path::new("."))?;
    Ok((f, p))
}

/// The CPU system of a prepared problem.
pub fn cpu_system(prep: &Prepared) -> Result<CpuSystem> {
    Ok(CpuSystem::new(CpuHyper::new(prep.el.clone())?))
}

/// `fine` with the multigrid hierarchy of file `f`, each coarse level assembled on the CPU with
/// the element [`MgSystem::build`] makes for it (the file's quadrature rule on that level).
pub fn cpu_multigrid(f: &HyperFile, prep: &Prepared, fine: CpuSystem) -> Result<MgSystem<crate::backend::Cpu, CpuSystem>> {
    MgSystem::build(&crate::backend::Cpu, f, prep, fine, &f.solver.multigrid, |el| Ok(CpuSystem::new(CpuHyper::new(el.clone())?)))
}
