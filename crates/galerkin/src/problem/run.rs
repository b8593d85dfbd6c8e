//! Run a problem file end to end: mesh -> space -> operator -> solver -> VTU, JSON report, PNG.
use super::config::{scalar_spec, vector_spec, BcKind, Generator, Nullspace, PhysicsKind, ProblemFile, ScalarSpec};
use super::estimate::ProblemShape;
use super::linear::{BoundaryCondition, LinearProblem, Solution, SolverConfig, SolverMethod};
use super::nullspace;
use super::validate::{boundaries_have_facets, FieldFaults, Requirement};
use crate::backend::{AnyBackend, BackendKind};
use crate::io::{self, OutputFile};
use crate::memory;
use crate::operator::FeBackend;
use crate::mesh::{generate, gmsh, CellType, Mesh};
use crate::operator::norms::{error_norms_exact, ErrorNorms, ExactFn};
use crate::operator::{FluxFn, VectorFn};
use crate::physics::{Coefficient, Diffusion, Elasticity, Mass, PointwisePhysics, Sum};
use crate::solver::KrylovOptions;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Command-line choices that override the problem file.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub backend: Option<BackendKind>,
    pub out_dir: PathBuf,
    /// Show progress bars (the CLI enables them; indicatif hides them off a terminal).
    pub progress: bool,
}

/// What a run did, written as `report.json`.
#[derive(Debug, Serialize)]
pub struct Report {
    pub title: String,
    /// Where assembly and solve ran: `cpu` or `cuda (<device>)`.
    pub backend: String,
    /// Why the backend differs from the one asked for, and similar remarks.
    pub notes: Vec<String>,
    pub mesh: MeshReport,
    pub space: SpaceReport,
    pub assembly: AssemblyReport,
    pub solver: SolverReport,
    pub errors: Option<ErrorReport>,
    /// The solution at `[output] points`.
    pub points: Vec<PointValue>,
    pub timings: PhaseTimes,
    /// Host memory the problem was estimated to need before it was built, and what was available.
    pub memory: MemoryReport,
    /// The files this run wrote, with size and SHA-256; the report itself is written last, so a
    /// directory whose report matches its files holds one whole run.
    pub outputs: Vec<OutputFile>,
}

/// The solution's components at one point.
#[derive(Debug, Serialize)]
pub struct PointValue {
    pub x: [f64; 3],
    pub value: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct MeshReport {
    pub cell_type: CellType,
    pub cells: usize,
    pub vertices: usize,
    pub dim: usize,
}

#[derive(Debug, Serialize)]
pub struct SpaceReport {
    pub family: String,
    pub degree: usize,
    pub components: usize,
    pub dofs: usize,
}

#[derive(Debug, Serialize)]
pub struct AssemblyReport {
    pub level: crate::operator::AssemblyLevel,
    /// Bytes the operator keeps: CSR values and indices (full), element matrices (element),
    /// quadrature data (partial), passive data (none).
    pub storage_bytes: usize,
    pub colors: usize,
    pub dirichlet_dofs: usize,
}

#[derive(Debug, Serialize)]
pub struct SolverReport {
    pub method: String,
    pub preconditioner: String,
    pub iterations: usize,
    pub initial_residual: f64,
    pub final_residual: f64,
    pub relative_residual: f64,
    pub residual_history: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct ErrorReport {
    pub l2: f64,
    pub h1_semi: f64,
    pub relative_l2: f64,
}

/// The memory estimate a run was admitted with, and the peaks it reached (bytes).
#[derive(Debug, Default, Serialize)]
pub struct MemoryReport {
    pub estimate: f64,
    pub available: Option<f64>,
    /// Peak resident host memory of the process (Linux `VmHWM`), when the system reports it.
    pub peak_host: Option<f64>,
    /// Peak device memory in use (total minus the least free memory seen at the end of each
    /// phase), on the GPU backend.
    pub peak_device: Option<f64>,
}

/// Seconds per phase. The phases cover the run: `total` is the wall clock from the process's start
/// (a command: the CLI) or from reading the problem file (a library call) to the last output file,
/// and `unaccounted` (total minus the phases) stays near zero.
#[derive(Debug, Default, Serialize)]
pub struct PhaseTimes {
    /// From the process's start (by the kernel's clock) to the run's first timer: loading the
    /// binary, argument parsing (`crate::process`); 0 for a library call.
    pub start: f64,
    /// Reading and checking the problem file, compiling its expressions, selecting the backend,
    /// locking the output directory, building the problem's fields.
    pub setup: f64,
    pub mesh: f64,
    /// The parts of `mesh`: build (generation or reading, with validation), checks, and the
    /// locality reordering's Hilbert keys, sort and renumbering.
    pub mesh_parts: std::collections::BTreeMap<String, f64>,
    pub space: f64,
    pub assembly: f64,
    /// The parts of `assembly`: integrator (tables, coefficients at the quadrature points),
    /// coloring, load (source and boundary loads), constraints (Dirichlet data and elimination),
    /// matrix (the operator at its level).
    pub assembly_parts: std::collections::BTreeMap<String, f64>,
    pub preconditioner: f64,
    pub solve: f64,
    /// Around the solve: the null-space check, the solution back to the host.
    pub solve_other: f64,
    /// Error norms against `[exact]`.
    pub errors: f64,
    /// Solution values at `[output] points`.
    pub points: f64,
    /// All output files; `output_files` splits it per file.
    pub output: f64,
    pub output_files: std::collections::BTreeMap<String, f64>,
    /// Freeing the run's data after the outputs (gigabytes of mesh, dof map and device buffers at
    /// 10^7 unknowns: tenths of a second that were in no phase, between the report's total and
    /// the process's end).
    pub teardown: f64,
    pub total: f64,
    pub unaccounted: f64,
    /// Everything before the first Krylov iteration: start, setup, mesh, space, assembly and
    /// preconditioner (set by [`PhaseTimes::close`]).
    pub solve_ready: f64,
    /// A supervised command only ([`crate::process::mark_supervised`]): when `total` was taken,
    /// in seconds on the boot clock (`CLOCK_BOOTTIME`). The supervising parent (`galerkin run`)
    /// reads it once the process has been reaped and adds two phases to the report: `supervisor`
    /// (its own start until this process's start, also counted in `solve_ready`) and `exit` (from
    /// here until this process was reaped: the report's write, the printing, the process's exit);
    /// `total` is then the parent's whole wall clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<f64>,
}

impl PhaseTimes {
    /// Sets the `start` phase (a command's time before `start`), `total` from the process's start
    /// (or `start`) and `unaccounted` as total minus the phases.
    pub fn close(&mut self, start: Instant) {
        self.start = crate::process::since_start(start);
        self.total = self.start + start.elapsed().as_secs_f64();
        let phases = self.start + self.setup + self.mesh + self.space + self.assembly + self.preconditioner + self.solve + self.solve_other + self.errors + self.points + self.output + self.teardown;
        self.unaccounted = self.total - phases;
        self.solve_ready = self.start + self.setup + self.mesh + self.space + self.assembly + self.preconditioner;
        if crate::process::is_supervised() {
            self.ended_at = crate::process::boot_seconds();
        }
    }
}

/// Peak resident memory of this process (`VmHWM` of /proc/self/status), where Linux reports it.
pub fn peak_host_bytes() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

/// The least free device memory seen at phase ends (for the device peak).
#[derive(Default)]
struct DevicePeak(Option<(usize, usize)>);

impl DevicePeak {
    fn sample(&mut self, backend: &AnyBackend) {
        if let Some(dev) = backend.device() {
            if let Ok((free, total)) = dev.memory_info() {
                let least = self.0.map_or(free, |(f, _)| f.min(free));
                self.0 = Some((least, total));
            }
        }
    }
    fn peak(&self) -> Option<f64> {
        self.0.map(|(free, total)| total.saturating_sub(free) as f64)
    }
}

/// Read, run and write the outputs of a problem file.
pub fn run_file(path: &Path, opts: &RunOptions) -> Result<Report> {
    let start = Instant::now();
    let text = io::input::read_regular_text(path, "problem file")?;
    // Before the 1D DG detector, which claims every `family = "dg"`.
    if crate::advection::config::is_advection(&text) {
        return crate::advection::run::run_text(&text, path, opts);
    }
    if crate::dg::config::is_dg(&text) {
        return crate::dg::run::run_text(&text, path, opts);
    }
    if crate::iga::config::is_bspline(&text) {
        return crate::iga::run::run_text(&text, path, opts);
    }
    if super::heat::config::is_heat(&text) {
        return super::heat::run::run_text(&text, path, opts);
    }
    if crate::hyperelastic::config::is_hyperelastic(&text) {
        return crate::hyperelastic::run::run_text(&text, path, opts);
    }
    let pf = ProblemFile::parse(&text, &path.display().to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    run_from(&pf, base, opts, start)
}

/// Read and parse a problem file (a regular file, read no further than its size).
pub fn read_problem_file(path: &Path) -> Result<ProblemFile> {
    let text = io::input::read_regular_text(path, "problem file")?;
    ProblemFile::parse(&text, &path.display().to_string())
}

/// Whether a problem's settings can run on the GPU (`Err` says why not).
fn gpu_capable(pf: &ProblemFile) -> std::result::Result<(), String> {
    crate::solver::precond::cpu_only(pf.solver.method, pf.solver.preconditioner)
}

/// A problem file turned into library objects, ready to assemble and solve.
pub struct Setup {
    pub space: Arc<FunctionSpace>,
    pub problem: LinearProblem,
    pub config: SolverConfig,
    pub mesh_s: f64,
    /// `mesh_s` split into its steps (see [`PhaseTimes::mesh_parts`]).
    pub mesh_parts: std::collections::BTreeMap<String, f64>,
    pub space_s: f64,
    /// Remarks for the report (cells reoriented on reading, ...).
    pub notes: Vec<String>,
    /// Where the problem's field closures record the first value they must not return.
    pub faults: FieldFaults,
    /// The memory estimate the problem was admitted with.
    pub memory: MemoryReport,
}

/// Build the mesh, space, problem and solver configuration of a parsed problem file.
pub fn setup(pf: &ProblemFile, base: &Path, progress: bool) -> Result<Setup> {
    setup_on(pf, base, progress, None)
}

/// [`setup`] for a run on `be`: a generated box is built on the device (`mesh::box_cuda`) and
/// becomes the backend's resident mesh.
pub fn setup_on_device(pf: &ProblemFile, base: &Path, progress: bool, be: &crate::backend::cuda::CudaBackend) -> Result<Setup> {
    setup_on(pf, base, progress, Some(be))
}

/// [`setup`] with the device the problem will run on (its free memory is checked too). Everything
/// the file says is checked before the mesh is built (fields, names, sizes against memory), and
/// what needs the mesh (boundaries, component counts, exact memory) before the space is.
fn setup_on(pf: &ProblemFile, base: &Path, progress: bool, device: Option<&crate::backend::cuda::CudaBackend>) -> Result<Setup> {
    let t = Instant::now();
    check_fields(pf, generator_dim(pf).map(|d| ncomp_of(pf, d)))?;
    if let Some(shape) = generator_shape(pf) {
        check_memory(&shape, device)?;
    }
    // On the GPU a generated box is built there, already ordered (`mesh::box_cuda`).
    let on_device = match device {
        Some(be) => crate::mesh::box_cuda::from_config(be, &pf.mesh)?.map(|b| (be, b)),
        None => None,
    };
    let mut mesh_parts = std::collections::BTreeMap::new();
    let (mesh, mut notes, on_device) = match on_device {
        Some((be, b)) => {
            mesh_parts.extend(b.parts.iter().map(|&(k, v)| (format!("device_box.{k}"), v)));
            let crate::mesh::box_cuda::DeviceBox { mesh, coords, verts, .. } = b;
            (mesh, Vec::new(), Some((be, coords, verts)))
        }
        None => {
            let (mesh, notes) = build_mesh(pf, base)?;
            mesh_parts.insert("build".to_string(), t.elapsed().as_secs_f64());
            (mesh, notes, None)
        }
    };
    let tc = Instant::now();
    let ncomp = ncomp_of(pf, mesh.dim);
    check_fields(pf, Some(ncomp))?;
    for (i, bc) in pf.bc.iter().enumerate() {
        boundaries_have_facets(&mesh, &bc.boundary.to_vec()).map_err(|why| Error::config(format!("bc[{i}].boundary"), why))?;
    }
    let estimate = check_memory(&mesh_shape(pf, &mesh, ncomp), device)?;
    mesh_parts.insert("checks".to_string(), tc.elapsed().as_secs_f64());
    let mesh = if let Some((be, coords, verts)) = on_device {
        let mesh = Arc::new(mesh);
        be.adopt_resident_mesh(&mesh, coords, verts);
        mesh
    } else if pf.mesh.reorder.unwrap_or(true) {
        let (m, parts) = crate::mesh::ordering::reorder_for_locality_timed(&mesh)?;
        mesh_parts.extend(parts.iter().map(|&(k, v)| (format!("reorder.{k}"), v)));
        // The unordered mesh (gigabytes at 10^7 cells) is freed on another thread, beside the
        // space phase.
        std::thread::spawn(move || drop(mesh));
        Arc::new(m)
    } else {
        Arc::new(mesh)
    };
    let mesh_s = t.elapsed().as_secs_f64();
    crate::trace::note("mesh: done", mesh_s);
    let t = Instant::now();
    let nodes = pf.space.nodes.unwrap_or(crate::fe::NodeFamily::default_for(pf.space.degree));
    // The degree and nodes the mesh's cells allow are known only now (simplices: P1–P3).
    let space = if pf.space.family == "hierarchical" {
        let unsupported = |e| match e {
            Error::Unsupported(why) => Error::config("space.family", why),
            e => e,
        };
        match &pf.space.region_degrees {
            Some(map) => {
                let degrees = cell_degrees(&mesh, pf.space.degree, map)?;
                let modes = pf.space.modes.unwrap_or_default();
                let mut space = FunctionSpace::hierarchical_variable(mesh, &degrees, modes, ncomp).map_err(unsupported)?;
                // The full level integrates each degree's cells with their own element and rule
                // (a fixed quadrature degree asks for one rule everywhere: no groups).
                if pf.assembly.quadrature_degree.is_none() {
                    crate::operator::degree_groups::CellDegrees::attach(&mut space, &degrees, modes, pf.assembly.quadrature)?;
                }
                space
            }
            None => FunctionSpace::hierarchical(mesh, pf.space.degree, pf.space.modes.unwrap_or_default(), ncomp).map_err(unsupported)?,
        }
    } else {
        FunctionSpace::lagrange_with_nodes(mesh, pf.space.degree, ncomp, nodes).map_err(|e| match e {
            Error::Unsupported(why) => Error::config("space.degree", why),
            e => e,
        })?
    };
    let space = Arc::new(space);
    let space_s = t.elapsed().as_secs_f64();
    crate::trace::note("space: dof map", space_s);
    let faults = FieldFaults::new(space.mesh.dim);
    let problem = build_problem(pf, space.clone(), &faults)?;
    let config = SolverConfig {
        method: pf.solver.method,
        preconditioner: pf.solver.preconditioner,
        options: KrylovOptions {
            rtol: pf.solver.rtol,
            atol: pf.solver.atol,
            max_iter: pf.solver.max_iter,
            restart: pf.solver.restart,
            progress,
        },
    };
    if pf.solver.nullspace == Nullspace::Constant && ncomp != 1 {
        return Err(Error::config("solver.nullspace", "`constant` is for scalar problems (elasticity needs a Dirichlet condition)"));
    }
    notes.retain(|n| !n.is_empty());
    Ok(Setup { space, problem, config, mesh_s, mesh_parts, space_s, notes, faults, memory: estimate })
}

/// The report's line on a matrix integrated by degree groups: (degree, cells, element size) each.
fn degree_groups_note(groups: &[(usize, usize, usize)]) -> String {
    let parts: Vec<String> = groups.iter().map(|(p, n, k)| format!("p = {p}: {n} cells ({k}×{k})")).collect();
    format!("integrated by degree groups: {}", parts.join(", "))
}

/// The degree of every cell from `[space] region_degrees` (region tag numbers or names).
fn cell_degrees(mesh: &Mesh, default: usize, map: &std::collections::BTreeMap<String, usize>) -> Result<Vec<usize>> {
    let mut by_tag = std::collections::HashMap::new();
    for (region, &p) in map {
        let tag = match region.parse::<i32>() {
            Ok(t) => t,
            Err(_) => match mesh.tag_names.get(region) {
                Some(&(d, t)) if d == mesh.dim => t,
                _ => return Err(Error::config(format!("space.region_degrees.{region}"), "no region of the mesh has this name or tag")),
            },
        };
        if !mesh.cell_tags.contains(&tag) {
            return Err(Error::config(format!("space.region_degrees.{region}"), format!("no cell of the mesh has region tag {tag}")));
        }
        by_tag.insert(tag, p);
    }
    Ok(mesh.cell_tags.iter().map(|t| by_tag.get(t).copied().unwrap_or(default)).collect())
}

/// Read and set up a problem file (relative paths resolved against its folder).
pub fn setup_file(path: &Path, progress: bool) -> Result<(ProblemFile, Setup)> {
    let pf = read_problem_file(path)?;
    let s = setup(&pf, path.parent().unwrap_or(Path::new(".")), progress)?;
    Ok((pf, s))
}

/// Run a parsed problem; `base` resolves relative paths in the file.
///
/// Order: everything the file says is checked first (cheap), the output directory is locked (and
/// temporaries of killed runs removed), then the expensive work runs; the outputs are published
/// last, report after the files it lists.
pub fn run(pf: &ProblemFile, base: &Path, opts: &RunOptions) -> Result<Report> {
    run_from(pf, base, opts, Instant::now())
}

/// [`run`], timed from `t_start` (before the problem file was read).
fn run_from(pf: &ProblemFile, base: &Path, opts: &RunOptions, t_start: Instant) -> Result<Report> {
    let mut notes = Vec::new();
    let background = VtuBackground::from_env()?;
    let backend = AnyBackend::select(opts.backend.unwrap_or(pf.backend), gpu_capable(pf), &mut notes)?;
    let mut times = PhaseTimes::default();
    // The checks that need no mesh run before the directory is touched.
    check_fields(pf, generator_dim(pf).map(|d| ncomp_of(pf, d)))?;
    if let Some(shape) = generator_shape(pf) {
        check_memory(&shape, backend.device())?;
    }
    let out = io::OutputDir::lock(&opts.out_dir)?;
    if !out.removed_temporaries.is_empty() {
        notes.push(format!("removed {} temporary file(s) of an interrupted earlier run: {}", out.removed_temporaries.len(), out.removed_temporaries.join(", ")));
    }

    let mut device_peak = DevicePeak::default();
    device_peak.sample(&backend);
    let Setup { space, problem, config, mesh_s, mesh_parts, space_s, notes: setup_notes, faults, mut memory } = setup_on(pf, base, opts.progress, backend.device())?;
    device_peak.sample(&backend);
    notes.extend(setup_notes);
    times.mesh = mesh_s;
    times.mesh_parts = mesh_parts;
    times.space = space_s;
    let mesh = space.mesh.clone();
    let ncomp = space.ncomp;
    // Report points are located before the solve, so one outside the mesh costs nothing.
    let point_weights = space.points_weights(&pf.output.points, "output.points")?;
    // A large raw appended VTU: its mesh part is encoded, hashed and written on another thread
    // while the system is assembled and solved (or, `late`, solved only); the solution is added
    // at the end.
    let vtu_path = out.join(&format!("{}.vtu", pf.output.name));
    let vtu_name = if ncomp == 1 { "u" } else { "displacement" };
    let spawn_vtu = || {
        (pf.output.vtu && pf.output.vtu_encoding == io::VtuEncoding::Appended && rayon::current_num_threads() >= 4).then(|| {
            io::VtuPreparing::spawn(mesh.clone(), vtu_path.clone(), pf.output.cell_data, vec![(vtu_name, ncomp)], background != VtuBackground::Global)
        })
    };
    let mut prepared = if background == VtuBackground::Late { None } else { spawn_vtu() };
    times.setup = t_start.elapsed().as_secs_f64() - mesh_s - space_s;
    let t = Instant::now();
    let spinner = io::progress_bar(0, "assembling", opts.progress);
    // What the report needs from the system: stored bytes, colors, constrained dofs.
    let (level, tuning) = (pf.assembly.level, pf.assembly.tuning());
    let done = || {
        spinner.finish_and_clear();
        if background == VtuBackground::Late {
            prepared = spawn_vtu();
        }
    };
    let (mut sol, assembly_report, remove_mean) = match &backend {
        AnyBackend::Cpu(cpu) => solve_on(cpu, pf, &problem, level, tuning, &config, &faults, &mut notes, done)?,
        AnyBackend::Cuda(be) => solve_on(be.as_ref(), pf, &problem, level, tuning, &config, &faults, &mut notes, done)?,
    };
    faults.check_none()?;
    if let (crate::operator::AssemblyLevel::Full, Some(cd)) = (level, &space.cell_degrees) {
        notes.push(degree_groups_note(&cd.summary(ncomp)?));
    }
    if remove_mean {
        let mean = nullspace::mean_value(&space, &sol.u)?;
        sol.u.iter_mut().for_each(|v| *v -= mean);
    }
    device_peak.sample(&backend);
    times.assembly = sol.timings.assembly;
    let st = &sol.timings;
    times.assembly_parts = [("integrator", st.integrator), ("coloring", st.coloring), ("load", st.rhs), ("constraints", st.constraints), ("matrix", st.matrix)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    times.preconditioner = sol.timings.preconditioner;
    times.solve = sol.timings.solve;
    times.solve_other = (t.elapsed().as_secs_f64() - times.assembly - times.preconditioner - times.solve).max(0.0);

    let t = Instant::now();
    let errors = match &pf.exact {
        Some(ex) => {
            let specs = vector_spec(&ex.solution, "exact.solution", ncomp)?;
            // On the GPU backend the expressions are compiled into the norms kernel; where they
            // cannot be (or the space is modal), the host computes the norms.
            let on_device = match (&backend, device_exprs(&specs)) {
                (AnyBackend::Cuda(be), Some(exprs)) => crate::operator::norms_cuda::error_norms_cuda(be, &space, &sol.u, &exprs)?,
                _ => None,
            };
            let ErrorNorms { l2, h1_semi, l2_exact } = match on_device {
                Some(n) if n.l2.is_finite() && n.h1_semi.is_finite() && n.l2_exact.is_finite() => n,
                // Non-finite sums: the host pass names the point where the exact solution fails.
                _ => error_norms_exact(&space, &sol.u, &exact_fn(specs, "exact.solution", &faults)?)?,
            };
            faults.check_none()?;
            Some(ErrorReport { l2, h1_semi, relative_l2: if l2_exact > 0.0 { l2 / l2_exact } else { l2 } })
        }
        None => None,
    };
    // The device copies of the mesh and dof map have served their last kernel.
    if let AnyBackend::Cuda(be) = &backend {
        be.release_resident();
    }
    times.errors = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let points = pf
        .output
        .points
        .iter()
        .zip(&point_weights)
        .map(|(&x, w)| PointValue { x, value: (0..ncomp).map(|k| w.iter().map(|&(node, wt)| wt * sol.u[node * ncomp + k]).sum()).collect() })
        .collect();
    times.points = t.elapsed().as_secs_f64();

    // Publish: the previous report goes first (until the new one is written, the directory says
    // "incomplete"), then each file whole, then the report listing them.
    let t = Instant::now();
    out.remove("report.json")?;
    let mut outputs = Vec::new();
    let timed = |times: &mut PhaseTimes, name: &str, t: Instant| {
        times.output_files.insert(name.to_string(), t.elapsed().as_secs_f64());
    };
    if pf.output.vtu {
        let tf = Instant::now();
        let path = vtu_path;
        let name = vtu_name;
        let vals = space.vertex_values(&sol.u);
        let (record, vt) = match prepared {
            Some(job) => {
                let p = job.join()?;
                // What the background thread spent (off the run's path), for the report.
                for (k, s) in [("vtu.background.encode", p.prepare.encode), ("vtu.background.write", p.prepare.write), ("vtu.background.sync", p.prepare.sync), ("vtu.background.sha256", p.prepare.hash)] {
                    times.output_files.insert(k.to_string(), s);
                }
                p.finish(&[vals])?
            }
            None => {
                let mut w = io::VtuWriter::new(&mesh);
                w.encoding(pf.output.vtu_encoding).regions(pf.output.cell_data);
                if ncomp == 1 {
                    w.point_scalar(name, vals)?;
                } else {
                    w.point_vector(name, ncomp, vals)?;
                }
                w.write_recorded(&path)?
            }
        };
        outputs.push(record);
        timed(&mut times, "vtu", tf);
        // Where the VTU's time goes (the hash runs beside the write and fsync).
        for (k, s) in [("vtu.encode", vt.encode), ("vtu.write", vt.write), ("vtu.fsync", vt.sync), ("vtu.sha256", vt.hash)] {
            times.output_files.insert(k.to_string(), s);
        }
    }
    if pf.output.plot && sol.stats.residual_history.len() > 1 {
        let tf = Instant::now();
        let path = out.join("residual.png");
        io::plot_residual_history(&path, &format!("{} residual", sol.stats.method), &[(sol.stats.method.as_str(), &sol.stats.residual_history)])?;
        outputs.push(io::file_record(&path)?);
        timed(&mut times, "residual.png", tf);
    }
    device_peak.sample(&backend);
    memory.peak_host = peak_host_bytes();
    memory.peak_device = device_peak.peak();
    times.output = t.elapsed().as_secs_f64();

    let mut report = Report {
        title: pf.title.clone(),
        backend: backend.name(),
        notes,
        mesh: MeshReport { cell_type: mesh.cell_type, cells: mesh.num_cells(), vertices: mesh.num_vertices(), dim: mesh.dim },
        space: SpaceReport { family: pf.space.family.clone(), degree: pf.space.degree, components: ncomp, dofs: space.ndofs() },
        assembly: AssemblyReport {
            level: pf.assembly.level,
            storage_bytes: assembly_report.0,
            colors: assembly_report.1,
            dirichlet_dofs: assembly_report.2,
        },
        solver: SolverReport {
            method: sol.stats.method.clone(),
            preconditioner: format!("{:?}", config.preconditioner).to_lowercase(),
            iterations: sol.stats.iterations,
            initial_residual: sol.stats.initial_residual,
            final_residual: sol.stats.final_residual,
            relative_residual: sol.stats.relative_residual,
            residual_history: sol.stats.residual_history.clone(),
        },
        errors,
        points,
        timings: PhaseTimes::default(),
        memory,
        outputs,
    };
    // The run's data freed inside the measured time, so the phases add up to the wall clock.
    let t = Instant::now();
    drop((sol, point_weights, problem, mesh, space, backend));
    // A command's process ends after the report: its CUDA context (device memory, mappings) is
    // torn down here, timed, rather than by the driver at exit, outside every phase.
    if crate::process::is_command() {
        let n = crate::backend::cuda::release_unused_contexts();
        crate::trace::note(&format!("teardown: data freed, {n} CUDA context(s) released"), t.elapsed().as_secs_f64());
        // What the allocator kept of the freed gigabytes goes back now, timed, not at the exit.
        let tt = Instant::now();
        if crate::trace::enabled() {
            crate::trace::note(&format!("teardown: before the trim: {}", crate::process::memory_summary(0)), 0.0);
        }
        let trimmed = crate::process::release_free_memory();
        crate::trace::note(&format!("teardown: free memory returned ({trimmed})"), tt.elapsed().as_secs_f64());
        if crate::trace::enabled() {
            crate::trace::note(&format!("teardown: still mapped: {}", crate::process::memory_summary(6)), 0.0);
        }
    }
    times.teardown = t.elapsed().as_secs_f64();
    times.close(t_start);
    report.timings = times;
    if pf.output.report {
        io::write_json(out.join("report.json"), &report)?;
    }
    Ok(report)
}

/// When the VTU's mesh part is prepared beside the run, and where its parallel loops run
/// (`GALERKIN_VTU_BACKGROUND`, for measuring; the default is `pool`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum VtuBackground {
    /// From the end of the set-up (mesh and space), in a small low-priority pool of its own.
    Pool,
    /// From the end of the assembly (the solve's start), in its own pool: nothing beside the set-up.
    Late,
    /// From the end of the set-up, on rayon's global pool (the behaviour before the pool).
    Global,
}

/// The environment variable that chooses the [`VtuBackground`].
const VTU_BACKGROUND_ENV: &str = "GALERKIN_VTU_BACKGROUND";

impl VtuBackground {
    /// From `GALERKIN_VTU_BACKGROUND`: unset is the default; an unknown value is an error, not a
    /// silent default (a measurement must run what it names).
    fn from_env() -> Result<VtuBackground> {
        Self::parse(std::env::var(VTU_BACKGROUND_ENV).ok().as_deref())
    }

    fn parse(value: Option<&str>) -> Result<VtuBackground> {
        match value {
            None | Some("pool") => Ok(VtuBackground::Pool),
            Some("late") => Ok(VtuBackground::Late),
            Some("global") => Ok(VtuBackground::Global),
            Some(other) => Err(Error::invalid(format!("{VTU_BACKGROUND_ENV} = `{other}`: expected `pool`, `late` or `global`"))),
        }
    }
}

/// Assemble and solve on one backend. A singular system (the constant in the operator's null
/// space) is refused unless the file allows it (`[solver] nullspace`); then the load is projected
/// onto the range and, for a direct solver, dof 0 is pinned. Returns the solution, (stored bytes,
/// colors, constrained dofs) for the report, and whether the solution's mean must be removed.
#[allow(clippy::too_many_arguments)]
fn solve_on<B: FeBackend>(
    be: &B,
    pf: &ProblemFile,
    problem: &LinearProblem,
    level: crate::operator::AssemblyLevel,
    tuning: crate::operator::Tuning,
    config: &SolverConfig,
    faults: &FieldFaults,
    notes: &mut Vec<String>,
    assembled: impl FnOnce(),
) -> Result<(Solution, (usize, usize, usize), bool)> {
    let mut system = problem.system(be, level, tuning).map_err(|e| faults.or(e))?;
    faults.check_none()?;
    assembled();
    let r = (system.storage_bytes(), system.ncolors, system.constraints.dofs.len());
    let ncomp = problem.space.ncomp;
    let singular = !nullspace::constant_null_components(be, &system.operator, ncomp)?.is_empty();
    if singular {
        let mut rhs = be.to_host(&system.rhs)?;
        allow_singular(pf, ncomp, &mut rhs, notes)?;
        system.rhs = be.from_host(&rhs)?;
        if pf.solver.method == SolverMethod::Direct {
            system.pin_dof(0)?;
        }
    }
    Ok((system.solve(config).map_err(|e| faults.or(e))?, r, singular))
}

/// A singular system: refused unless the file asks for the constant to be removed; then the load
/// is projected onto the range, and the report says by how much it was not compatible.
fn allow_singular(pf: &ProblemFile, ncomp: usize, rhs: &mut [f64], notes: &mut Vec<String>) -> Result<()> {
    if pf.solver.nullspace != Nullspace::Constant || ncomp != 1 {
        return Err(nullspace::singular_error(ncomp));
    }
    let defect = nullspace::project_out_constant(rhs);
    notes.push(format!(
        "singular problem (no Dirichlet condition): solved with the constant removed (nullspace = \"constant\"); the load's mean, {defect:.3e} of its largest entry, was projected out, and the solution has zero mean"
    ));
    Ok(())
}

/// Solution components: the mesh dimension for elasticity, else 1.
fn ncomp_of(pf: &ProblemFile, dim: usize) -> usize {
    if pf.physics.kind == PhysicsKind::Elasticity {
        dim
    } else {
        1
    }
}

fn generator_dim(pf: &ProblemFile) -> Option<usize> {
    pf.mesh.generator.map(|g| match g {
        Generator::Interval => 1,
        Generator::Rectangle => 2,
        Generator::Box => 3,
    })
}

/// Sizes of a generated mesh from the problem file alone (before it is built), when they are
/// well formed (`build_mesh` reports the ill-formed ones).
fn generator_shape(pf: &ProblemFile) -> Option<ProblemShape> {
    let dim = generator_dim(pf)?;
    let n: Vec<f64> = pf.mesh.n.as_ref()?.iter().map(|&k| k as f64).collect();
    if n.len() != dim {
        return None;
    }
    let cell = pf.mesh.cell.unwrap_or(match dim {
        1 => CellType::Interval,
        2 => CellType::Triangle,
        _ => CellType::Tetrahedron,
    });
    let blocks: f64 = n.iter().product();
    let vertices: f64 = n.iter().map(|k| k + 1.0).product();
    let per_block = match cell {
        CellType::Triangle => 2.0,
        CellType::Tetrahedron => 6.0,
        _ => 1.0,
    };
    let sides = match dim {
        1 => 2.0,
        2 => 2.0 * (n[0] + n[1]),
        _ => 2.0 * (n[0] * n[1] + n[1] * n[2] + n[0] * n[2]) * if cell == CellType::Tetrahedron { 2.0 } else { 1.0 },
    };
    Some(shape_of(pf, cell, blocks * per_block, vertices, sides, ncomp_of(pf, dim)))
}

fn mesh_shape(pf: &ProblemFile, mesh: &Mesh, ncomp: usize) -> ProblemShape {
    shape_of(pf, mesh.cell_type, mesh.num_cells() as f64, mesh.num_vertices() as f64, mesh.boundary.len() as f64, ncomp)
}

fn shape_of(pf: &ProblemFile, cell: CellType, cells: f64, vertices: f64, boundary_facets: f64, ncomp: usize) -> ProblemShape {
    ProblemShape {
        cell,
        cells,
        vertices,
        boundary_facets,
        degree: pf.space.degree,
        ncomp,
        level: pf.assembly.level,
        method: pf.solver.method,
        preconditioner: pf.solver.preconditioner,
        restart: pf.solver.restart,
        reorder: pf.mesh.reorder.unwrap_or(true),
    }
}

/// Refuse a problem whose estimated memory exceeds what the host (and the GPU, when it runs
/// there) has free.
fn check_memory(shape: &ProblemShape, device: Option<&crate::backend::cuda::CudaBackend>) -> Result<MemoryReport> {
    let (host, available) = (shape.host(), memory::host_available());
    memory::check("host", &host, available.as_ref())?;
    if let Some(be) = device {
        let (free, _) = be.memory_info()?;
        let avail = memory::Available { bytes: free as f64, source: format!("free memory of {}", be.device().name) };
        memory::check("GPU", &shape.device(), Some(&avail))?;
    }
    Ok(MemoryReport { estimate: host.total(), available: available.map(|a| a.bytes), ..Default::default() })
}

/// Every field of the file parses and, where it is a number, meets its requirement; with `ncomp`
/// (known once the mesh dimension is), vector fields have the right number of components.
fn check_fields(pf: &ProblemFile, ncomp: Option<usize>) -> Result<()> {
    let p = &pf.physics;
    let forbid = |present: bool, key: &str| -> Result<()> {
        if present {
            Err(Error::config(format!("physics.{key}"), format!("not used by {:?} problems", p.kind).to_lowercase()))
        } else {
            Ok(())
        }
    };
    let unused = match p.kind {
        PhysicsKind::Poisson => vec![(p.young.is_some(), "E"), (p.nu.is_some(), "nu"), (p.lambda.is_some(), "lambda"), (p.mu.is_some(), "mu"), (p.body_force.is_some(), "body_force"), (p.rho.is_some(), "rho")],
        PhysicsKind::Projection => vec![(p.young.is_some(), "E"), (p.nu.is_some(), "nu"), (p.lambda.is_some(), "lambda"), (p.mu.is_some(), "mu"), (p.body_force.is_some(), "body_force"), (p.kappa.is_some(), "kappa"), (p.reaction.is_some(), "reaction")],
        PhysicsKind::Elasticity => vec![(p.kappa.is_some(), "kappa"), (p.reaction.is_some(), "reaction"), (p.source.is_some(), "source"), (p.rho.is_some(), "rho")],
    };
    for (present, k) in unused {
        forbid(present, k)?;
    }
    if p.kind == PhysicsKind::Elasticity && !matches!((p.young.is_some(), p.nu.is_some(), p.lambda.is_some(), p.mu.is_some()), (true, true, false, false) | (false, false, true, true)) {
        return Err(Error::config("physics", "elasticity needs either `E` and `nu`, or `lambda` and `mu`"));
    }
    for (v, key) in [(&p.kappa, "physics.kappa"), (&p.reaction, "physics.reaction"), (&p.rho, "physics.rho"), (&p.lambda, "physics.lambda"), (&p.mu, "physics.mu")] {
        if let Some(v) = v {
            constant_check(&scalar_spec(v, key, true)?, key)?;
        }
    }
    if let Some(e) = p.young {
        if !(e > 0.0 && e.is_finite()) {
            return Err(Error::config("physics.E", format!("Young's modulus must be positive and finite, got {e}")));
        }
    }
    if let Some(nu) = p.nu {
        if !(nu > -1.0 && nu < 0.5) {
            return Err(Error::config("physics.nu", format!("Poisson's ratio must lie in (-1, 0.5), got {nu} (0.5 is incompressible: the displacement formulation locks)")));
        }
    }
    if let (Some(l), Some(m)) = (&p.lambda, &p.mu) {
        if let (ScalarSpec::Number(l), ScalarSpec::Number(m)) = (scalar_spec(l, "physics.lambda", true)?, scalar_spec(m, "physics.mu", true)?) {
            let d = generator_dim(pf).unwrap_or(3) as f64;
            if !(d * l + 2.0 * m > 0.0) {
                return Err(Error::config("physics.lambda", format!("{d}·lambda + 2·mu must be positive (a positive bulk modulus), got lambda = {l}, mu = {m}")));
            }
        }
    }
    let vector = |v: &toml::Value, key: &str| -> Result<()> {
        let specs = match ncomp {
            Some(n) => vector_spec(v, key, n)?,
            None => match v {
                toml::Value::Array(a) => a.iter().enumerate().map(|(i, x)| scalar_spec(x, &format!("{key}[{i}]"), false)).collect::<Result<_>>()?,
                _ => vec![scalar_spec(v, key, false)?],
            },
        };
        specs.iter().enumerate().try_for_each(|(i, s)| {
            let k = if specs.len() > 1 || matches!(v, toml::Value::Array(_)) { format!("{key}[{i}]") } else { key.to_string() };
            if let ScalarSpec::Regions(_) = s {
                return Err(Error::config(&k, "per-region tables are only allowed for coefficients"));
            }
            constant_check(s, &k)
        })
    };
    let source_key = if p.kind == PhysicsKind::Elasticity { "physics.body_force" } else { "physics.source" };
    if let Some(v) = if p.kind == PhysicsKind::Elasticity { &p.body_force } else { &p.source } {
        vector(v, source_key)?;
    }
    for (i, bc) in pf.bc.iter().enumerate() {
        if let Some(v) = &bc.value {
            vector(v, &format!("bc[{i}].value"))?;
        }
        if let Some(a) = &bc.alpha {
            let key = format!("bc[{i}].alpha");
            constant_check(&scalar_spec(a, &key, true)?, &key)?;
        }
    }
    if let Some(ex) = &pf.exact {
        vector(&ex.solution, "exact.solution")?;
    }
    Ok(())
}

/// What the values of the field at `key` must satisfy: positive diffusion, density and shear
/// modulus, non-negative reaction and Robin coefficient, finite everything else.
fn requirement(key: &str) -> Requirement {
    if key.ends_with("kappa") || key.ends_with("rho") || key.ends_with(".mu") {
        Requirement::Positive
    } else if key.ends_with("reaction") || key.ends_with("alpha") {
        Requirement::NonNegative
    } else {
        Requirement::Finite
    }
}

/// A number or per-region table must meet its requirement now; an expression is checked where it
/// is evaluated.
fn constant_check(spec: &ScalarSpec, key: &str) -> Result<()> {
    let req = requirement(key);
    match spec {
        ScalarSpec::Number(v) if !req.holds(*v) => Err(req.error(key, *v, None)),
        ScalarSpec::Regions(m) => match m.iter().find(|(_, v)| !req.holds(**v)) {
            Some((t, v)) => Err(req.error(&format!("{key}.regions.{t}"), *v, None)),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn build_mesh(pf: &ProblemFile, base: &Path) -> Result<(Mesh, Vec<String>)> {
    build_mesh_from(&pf.mesh, base)
}

/// The mesh a `[mesh]` table describes (shared with the heat problem file).
pub(crate) fn build_mesh_from(m: &super::config::MeshConfig, base: &Path) -> Result<(Mesh, Vec<String>)> {
    if let Some(file) = &m.file {
        let generator_keys =
            [("n", m.n.is_some()), ("lower", m.lower.is_some()), ("upper", m.upper.is_some()), ("cell", m.cell.is_some()), ("grading", m.grading.is_some())];
        if let Some((k, _)) = generator_keys.iter().find(|(_, set)| *set) {
            return Err(Error::config(format!("mesh.{k}"), "not allowed with `mesh.file`"));
        }
        let path = base.join(file);
        // The reader holds the file and what it parses: a few times its size.
        let size = io::input::regular_file_size(&path, "mesh file")? as f64;
        let mut est = memory::Estimate::default();
        est.add("mesh file and its parsed nodes and elements", 4.0 * size);
        memory::check("host", &est, memory::host_available().as_ref())?;
        return gmsh::read_msh_with_notes(&path);
    }
    let gen = m.generator.ok_or_else(|| Error::config("mesh.generator", "missing"))?;
    let dim = match gen {
        Generator::Interval => 1,
        Generator::Rectangle => 2,
        Generator::Box => 3,
    };
    let n = m.n.clone().ok_or_else(|| Error::config("mesh.n", "missing (divisions per axis)"))?;
    if n.len() != dim {
        return Err(Error::config("mesh.n", format!("expected {dim} numbers for a {gen:?} mesh, got {}", n.len())));
    }
    if n.contains(&0) {
        return Err(Error::config("mesh.n", "divisions must be at least 1"));
    }
    let corner = |v: &Option<Vec<f64>>, key: &str, default: f64| -> Result<[f64; 3]> {
        let mut c = [default; 3];
        if let Some(v) = v {
            if v.len() != dim {
                return Err(Error::config(format!("mesh.{key}"), format!("expected {dim} coordinates, got {}", v.len())));
            }
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return Err(Error::config(format!("mesh.{key}"), format!("coordinates must be finite, got {x}")));
            }
            c[..dim].copy_from_slice(v);
        }
        Ok(c)
    };
    let lo = corner(&m.lower, "lower", 0.0)?;
    let hi = corner(&m.upper, "upper", 1.0)?;
    if (0..dim).any(|k| !(hi[k] > lo[k])) {
        return Err(Error::config("mesh.upper", "every upper coordinate must exceed the lower one"));
    }
    if m.grading.is_some() && gen != Generator::Interval {
        return Err(Error::config("mesh.grading", "only the interval generator takes a grading"));
    }
    let cell = m.cell;
    let check_cell = |allowed: &[CellType], default: CellType| -> Result<CellType> {
        let c = cell.unwrap_or(default);
        if allowed.contains(&c) {
            Ok(c)
        } else {
            Err(Error::config("mesh.cell", format!("a {gen:?} mesh cannot have {c} cells (allowed: {allowed:?})")))
        }
    };
    let at = |e: Error| match e {
        Error::Invalid(msg) => Error::config("mesh", msg),
        other => other,
    };
    let mesh = match gen {
        Generator::Interval => {
            check_cell(&[CellType::Interval], CellType::Interval)?;
            match m.grading {
                Some(r) => generate::interval_graded(n[0], lo[0], hi[0], r).map_err(|e| match e {
                    Error::Invalid(msg) => Error::config("mesh.grading", msg),
                    other => other,
                }),
                None => generate::interval(n[0], lo[0], hi[0]).map_err(at),
            }
        }
        Generator::Rectangle => {
            let c = check_cell(&[CellType::Triangle, CellType::Quadrilateral], CellType::Triangle)?;
            generate::rectangle(n[0], n[1], [lo[0], lo[1]], [hi[0], hi[1]], c).map_err(at)
        }
        Generator::Box => {
            let c = check_cell(&[CellType::Tetrahedron, CellType::Hexahedron], CellType::Tetrahedron)?;
            generate::box_mesh(n[0], n[1], n[2], lo, hi, c).map_err(at)
        }
    }?;
    Ok((mesh, Vec::new()))
}

/// A coefficient from a scalar spec: numbers and tables were checked already
/// ([`check_fields`]); expressions are checked where they are evaluated, recording in `faults`.
pub fn coefficient(spec: ScalarSpec, key: &str, faults: &FieldFaults) -> Coefficient {
    match spec {
        ScalarSpec::Expr(e) => {
            let (key, req, faults) = (key.to_string(), requirement(key), faults.clone());
            Coefficient::function(move |x| faults.check(&key, req, x, e.eval(x, 0.0)))
        }
        other => unchecked_coefficient(other),
    }
}

fn unchecked_coefficient(spec: ScalarSpec) -> Coefficient {
    match spec {
        ScalarSpec::Number(v) => Coefficient::Constant(v),
        ScalarSpec::Regions(m) => Coefficient::PerRegion(m),
        ScalarSpec::Expr(e) => Coefficient::function(move |x| e.eval(x, 0.0)),
    }
}

/// A vector function from per-component scalar specs (per-region tables are not allowed here);
/// every value is checked finite where it is evaluated.
pub fn vector_fn(specs: Vec<ScalarSpec>, key: &str, faults: &FieldFaults) -> Result<VectorFn> {
    let coefs: Vec<(String, Coefficient)> = component_specs(specs, key)?.into_iter().map(|(k, s)| (k, unchecked_coefficient(s))).collect();
    let faults = faults.clone();
    Ok(Arc::new(move |x, out: &mut [f64]| {
        for (o, (k, c)) in out.iter_mut().zip(&coefs) {
            *o = faults.check(k, Requirement::Finite, x, c.eval(x, 0));
        }
    }))
}

/// The components of a vector field with their keys (`key[i]`), refusing per-region tables and
/// non-finite numbers.
fn component_specs(specs: Vec<ScalarSpec>, key: &str) -> Result<Vec<(String, ScalarSpec)>> {
    let n = specs.len();
    specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let k = if n > 1 { format!("{key}[{i}]") } else { key.to_string() };
            match s {
                ScalarSpec::Regions(_) => Err(Error::config(&k, "per-region tables are only allowed for coefficients")),
                ScalarSpec::Number(v) if !v.is_finite() => Err(Requirement::Finite.error(&k, v, None)),
                s => Ok((k, s)),
            }
        })
        .collect()
}

/// The exact solution's components as expressions for the device (numbers become constant
/// expressions); `None` if any component is something else.
fn device_exprs(specs: &[ScalarSpec]) -> Option<Vec<crate::expr::Expr>> {
    specs
        .iter()
        .map(|s| match s {
            ScalarSpec::Expr(e) => Some(e.clone()),
            ScalarSpec::Number(v) if v.is_finite() => crate::expr::Expr::parse(&format!("{v:e}")).ok(),
            _ => None,
        })
        .collect()
}

/// The exact solution with its gradient: compiled expressions differentiate exactly in the same
/// pass (forward mode), numbers have none; every value is checked finite where it is evaluated.
fn exact_fn(specs: Vec<ScalarSpec>, key: &str, faults: &FieldFaults) -> Result<ExactFn> {
    let parts = component_specs(specs, key)?;
    let faults = faults.clone();
    // One component's values and gradients at the cell's points: per-thread buffers, since the
    // error norms call this once per cell from every rayon worker.
    thread_local! {
        static COMPONENT: std::cell::RefCell<(Vec<f64>, Vec<[f64; 3]>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    Ok(Arc::new(move |xs: &[[f64; 3]], out: &mut [f64], grad: &mut [[f64; 3]]| {
        let n = parts.len();
        COMPONENT.with_borrow_mut(|(v, d)| {
            v.resize(xs.len(), 0.0);
            d.resize(xs.len(), [0.0; 3]);
            for (a, (k, s)) in parts.iter().enumerate() {
                match s {
                    ScalarSpec::Expr(e) => e.eval_grad_batch(xs, 0.0, v, d),
                    ScalarSpec::Number(c) => (v.fill(*c), d.fill([0.0; 3])).1,
                    ScalarSpec::Regions(_) => (v.fill(f64::NAN), d.fill([0.0; 3])).1,
                }
                for (p, x) in xs.iter().enumerate() {
                    out[p * n + a] = faults.check(k, Requirement::Finite, *x, v[p]);
                    grad[p * n + a] = d[p];
                }
            }
        })
    }))
}

fn flux_fn(v: VectorFn) -> FluxFn {
    Arc::new(move |x, _n, out: &mut [f64]| v(x, out))
}

fn build_problem(pf: &ProblemFile, space: Arc<FunctionSpace>, faults: &FieldFaults) -> Result<LinearProblem> {
    let p = &pf.physics;
    let n = space.ncomp;
    let dim = space.mesh.dim;
    let coef = |v: &Option<toml::Value>, key: &str, default: Option<f64>| -> Result<Option<Coefficient>> {
        match v {
            Some(v) => Ok(Some(coefficient(scalar_spec(v, key, true)?, key, faults))),
            None => Ok(default.map(Coefficient::Constant)),
        }
    };
    let (physics, source_key): (Box<dyn PointwisePhysics>, &str) = match p.kind {
        PhysicsKind::Poisson => {
            let kappa = coef(&p.kappa, "physics.kappa", Some(1.0))?.unwrap_or(Coefficient::Constant(1.0));
            let diff: Box<dyn PointwisePhysics> = Box::new(Diffusion::new(kappa));
            match coef(&p.reaction, "physics.reaction", None)? {
                Some(c) => (Box::new(Sum(vec![diff, Box::new(Mass::new(c, 1))])), "physics.source"),
                None => (diff, "physics.source"),
            }
        }
        PhysicsKind::Projection => {
            let rho = coef(&p.rho, "physics.rho", Some(1.0))?.unwrap_or(Coefficient::Constant(1.0));
            (Box::new(Mass::new(rho, 1)), "physics.source")
        }
        PhysicsKind::Elasticity => {
            let e = match (p.young, p.nu, &p.lambda, &p.mu) {
                (Some(e), Some(nu), None, None) => Elasticity::young_poisson(e, nu, dim).map_err(|err| Error::config("physics.E", err.to_string()))?,
                (None, None, Some(_), Some(_)) => {
                    let l = coef(&p.lambda, "physics.lambda", None)?.ok_or_else(|| Error::config("physics.lambda", "missing"))?;
                    let m = coef(&p.mu, "physics.mu", None)?.ok_or_else(|| Error::config("physics.mu", "missing"))?;
                    Elasticity::lame(l, m, dim)
                }
                _ => return Err(Error::config("physics", "elasticity needs either `E` and `nu`, or `lambda` and `mu`")),
            };
            (Box::new(e), "physics.body_force")
        }
    };
    let source_val = if p.kind == PhysicsKind::Elasticity { &p.body_force } else { &p.source };
    let mut problem = LinearProblem { space: space.clone(), physics, source: None, source_exprs: None, bcs: Vec::new(), quadrature_degree: pf.assembly.quadrature_degree, quadrature: pf.assembly.quadrature };
    if let Some(v) = source_val {
        let specs = vector_spec(v, source_key, n)?;
        problem.source_exprs = device_exprs(&specs);
        problem.source = Some(vector_fn(specs, source_key, faults)?);
    }
    for (i, bc) in pf.bc.iter().enumerate() {
        let key = format!("bc[{i}].value");
        let value = bc.value.as_ref().ok_or_else(|| Error::config(&key, "missing"))?;
        let on = bc.boundary.to_vec();
        boundaries_have_facets(&space.mesh, &on).map_err(|why| Error::config(format!("bc[{i}].boundary"), why))?;
        let v = vector_fn(vector_spec(value, &key, n)?, &key, faults)?;
        problem.bcs.push(match bc.kind {
            BcKind::Dirichlet => BoundaryCondition::Dirichlet { on, value: v, components: bc.components.clone() },
            BcKind::Neumann => BoundaryCondition::Neumann { on, flux: flux_fn(v) },
            BcKind::Robin => {
                let key = format!("bc[{i}].alpha");
                let a = bc.alpha.as_ref().ok_or_else(|| Error::config(&key, "missing"))?;
                let alpha = coefficient(scalar_spec(a, &key, true)?, &key, faults);
                if n != 1 {
                    return Err(Error::config(format!("bc[{i}].type"), "Robin conditions are for scalar problems"));
                }
                BoundaryCondition::Robin { on, alpha, value: flux_fn(v) }
            }
        });
    }
    Ok(problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_vtu_background_names_the_variable_and_the_choices() {
        assert_eq!(VtuBackground::parse(None).unwrap(), VtuBackground::Pool);
        assert_eq!(VtuBackground::parse(Some("pool")).unwrap(), VtuBackground::Pool);
        assert_eq!(VtuBackground::parse(Some("late")).unwrap(), VtuBackground::Late);
        assert_eq!(VtuBackground::parse(Some("global")).unwrap(), VtuBackground::Global);
        for bad in ["", "Late", "own"] {
            let e = VtuBackground::parse(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("GALERKIN_VTU_BACKGROUND") && e.contains(&format!("`{bad}`")) && e.contains("`pool`, `late` or `global`"), "{e}");
        }
    }

    /// `mesh.reorder` renumbers the mesh (by default) without changing the solution: the same
    /// errors against the manufactured solution either way, and a different cell order.
    #[test]
    fn reordering_the_mesh_leaves_the_solution_unchanged() {
        let text = |reorder: bool| {
            format!(
                "title = \"t\"\nbackend = \"cpu\"\n[mesh]\ngenerator = \"rectangle\"\ncell = \"triangle\"\nn = [12, 9]\nreorder = {reorder}\n\
                 [space]\ndegree = 2\n[physics]\nkind = \"poisson\"\nkappa = 1.0\nsource = \"2*pi^2*sin(pi*x)*sin(pi*y)\"\n\
                 [[bc]]\nboundary = [\"xmin\", \"xmax\", \"ymin\", \"ymax\"]\ntype = \"dirichlet\"\nvalue = \"sin(pi*x)*sin(pi*y) + x*y\"\n\
                 [exact]\nsolution = \"sin(pi*x)*sin(pi*y) + x*y\"\n[solver]\nmethod = \"cg\"\npreconditioner = \"jacobi\"\nrtol = 1e-12\n\
                 [output]\nvtu = false\nreport = false\nplot = false\n"
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let opts = RunOptions { backend: None, out_dir: dir.path().to_path_buf(), progress: false };
        let mut errors = Vec::new();
        let mut first_cells = Vec::new();
        for reorder in [false, true] {
            let pf = ProblemFile::parse(&text(reorder), "test.toml").unwrap();
            first_cells.push(setup(&pf, dir.path(), false).unwrap().space.mesh.cell(0).to_vec());
            errors.push(run(&pf, dir.path(), &opts).unwrap().errors.unwrap());
        }
        assert_ne!(first_cells[0], first_cells[1], "reorder = true kept the generator's numbering");
        let (a, b) = (&errors[0], &errors[1]);
        assert!(a.l2 < 1e-3, "P2 on a 12×9 mesh: L2 error {}", a.l2);
        assert!((a.l2 - b.l2).abs() < 1e-8 * a.l2 && (a.h1_semi - b.h1_semi).abs() < 1e-8 * a.h1_semi, "errors differ: {a:?} vs {b:?}");
    }

    /// A pure Neumann problem solved with `nullspace = "constant"`: the zero-mean solution
    /// converges to the zero-mean exact one at the optimal rate, CG and the direct solver agree,
    /// and without the key the same file is refused as singular.
    #[test]
    fn phases_add_up_to_the_wall_clock() {
        let text = "backend = \"cpu\"\n[mesh]\ngenerator = \"box\"\nn = [14, 14, 14]\n[space]\ndegree = 2\n[physics]\nkind = \"poisson\"\n\
                    source = \"3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n[[bc]]\nboundary = [\"xmin\", \"xmax\", \"ymin\", \"ymax\", \"zmin\", \"zmax\"]\n\
                    type = \"dirichlet\"\nvalue = 0.0\n[exact]\nsolution = \"sin(pi*x)*sin(pi*y)*sin(pi*z)\"\n[output]\nplot = false\n";
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.toml"), text).unwrap();
        let opts = RunOptions { backend: None, out_dir: dir.path().join("o"), progress: false };
        let wall = Instant::now();
        let r = run_file(&dir.path().join("p.toml"), &opts).unwrap();
        let wall = wall.elapsed().as_secs_f64();
        let t = &r.timings;
        assert!(t.errors > 0.0 && t.output > 0.0 && t.output_files.contains_key("vtu") && t.setup > 0.0, "{t:?}");
        // The report is written after the clock stops; everything before is in a phase.
        assert!(t.unaccounted.abs() <= 0.02 * t.total, "{t:?}");
        assert!(t.total <= wall && wall - t.total <= 0.02 * wall + 0.05, "total {} of wall {wall}", t.total);
        assert!(r.memory.peak_host.is_some_and(|b| b > 1e6));
        // Exact gradients from the compiled expression: the H1 error of P2 is O(h^2), far above
        // round-off, and agrees with central differences of the same expression.
        let e = r.errors.unwrap();
        assert!(e.h1_semi > 1e-4 && e.h1_semi < 1e-1, "{e:?}");
    }

    #[test]
    fn pure_neumann_with_the_constant_removed_converges() {
        let text = |n: usize, method: &str, nullspace: &str| {
            format!(
                "backend = \"cpu\"\n[mesh]\ngenerator = \"rectangle\"\nn = [{n}, {n}]\n[space]\ndegree = 2\n[physics]\nkind = \"poisson\"\n\
                 source = \"2*pi^2*cos(pi*x)*cos(pi*y)\"\n[exact]\nsolution = \"cos(pi*x)*cos(pi*y)\"\n\
                 [solver]\nmethod = \"{method}\"\nrtol = 1e-12\nnullspace = \"{nullspace}\"\n[output]\nvtu = false\nreport = false\nplot = false\n"
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let opts = RunOptions { backend: None, out_dir: dir.path().join("o"), progress: false };
        let l2 = |n: usize, method: &str| run(&ProblemFile::parse(&text(n, method, "constant"), "t.toml").unwrap(), dir.path(), &opts).unwrap().errors.unwrap().l2;
        let (e1, e2) = (l2(6, "cg"), l2(12, "cg"));
        let rate = (e1 / e2).log2();
        assert!((rate - 3.0).abs() < 0.2, "P2 L2 rate {rate} ({e1} -> {e2})");
        assert!((l2(12, "direct") - e2).abs() < 1e-9 * e2);
        let e = run(&ProblemFile::parse(&text(6, "cg", "none"), "t.toml").unwrap(), dir.path(), &opts).unwrap_err().to_string();
        assert!(e.contains("singular"), "{e}");
    }
}
