//! Run a problem file end to end: mesh -> space -> operator -> solver -> VTU, JSON report, PNG.
use super::config::{scalar_spec, vector_spec, BcKind, Generator, PhysicsKind, ProblemFile, ScalarSpec};
use super::linear::{BoundaryCondition, LinearProblem, Solution, SolverConfig};
use crate::backend::{AnyBackend, BackendKind};
use crate::operator::FeBackend;
use crate::io;
use crate::mesh::{generate, gmsh, CellType, Mesh};
use crate::operator::norms::{error_norms, ErrorNorms};
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
    pub timings: PhaseTimes,
    pub outputs: Vec<PathBuf>,
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

/// Seconds per phase.
#[derive(Debug, Default, Serialize)]
pub struct PhaseTimes {
    pub mesh: f64,
    pub space: f64,
    pub assembly: f64,
    pub preconditioner: f64,
    pub solve: f64,
    pub output: f64,
    pub total: f64,
}

/// Read, run and write the outputs of a problem file.
pub fn run_file(path: &Path, opts: &RunOptions) -> Result<Report> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let pf = ProblemFile::parse(&text, &path.display().to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    run(&pf, base, opts)
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
    pub space_s: f64,
}

/// Build the mesh, space, problem and solver configuration of a parsed problem file.
pub fn setup(pf: &ProblemFile, base: &Path, progress: bool) -> Result<Setup> {
    let t = Instant::now();
    let mesh = build_mesh(pf, base)?;
    let mesh = Arc::new(if pf.mesh.reorder.unwrap_or(true) { crate::mesh::ordering::reorder_for_locality(&mesh)? } else { mesh });
    let mesh_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let ncomp = if pf.physics.kind == PhysicsKind::Elasticity { mesh.dim } else { 1 };
    let nodes = pf.space.nodes.unwrap_or(crate::fe::NodeFamily::default_for(pf.space.degree));
    let space = Arc::new(FunctionSpace::lagrange_with_nodes(mesh, pf.space.degree, ncomp, nodes)?);
    let space_s = t.elapsed().as_secs_f64();
    let problem = build_problem(pf, space.clone())?;
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
    Ok(Setup { space, problem, config, mesh_s, space_s })
}

/// Read and set up a problem file (relative paths resolved against its folder).
pub fn setup_file(path: &Path, progress: bool) -> Result<(ProblemFile, Setup)> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let pf = ProblemFile::parse(&text, &path.display().to_string())?;
    let s = setup(&pf, path.parent().unwrap_or(Path::new(".")), progress)?;
    Ok((pf, s))
}

/// Run a parsed problem; `base` resolves relative paths in the file.
pub fn run(pf: &ProblemFile, base: &Path, opts: &RunOptions) -> Result<Report> {
    let t_start = Instant::now();
    let mut notes = Vec::new();
    let backend = AnyBackend::select(opts.backend.unwrap_or(pf.backend), gpu_capable(pf), &mut notes)?;
    let mut times = PhaseTimes::default();

    let Setup { space, problem, config, mesh_s, space_s } = setup(pf, base, opts.progress)?;
    times.mesh = mesh_s;
    times.space = space_s;
    let mesh = space.mesh.clone();
    let ncomp = space.ncomp;
    let spinner = io::progress_bar(0, "assembling", opts.progress);
    // What the report needs from the system: stored bytes, colors, constrained dofs.
    let (level, tuning) = (pf.assembly.level, pf.assembly.tuning());
    let (sol, assembly_report) = match &backend {
        AnyBackend::Cpu(cpu) => solve_on(cpu, &problem, level, tuning, &config, || spinner.finish_and_clear())?,
        AnyBackend::Cuda(be) => solve_on(be.as_ref(), &problem, level, tuning, &config, || spinner.finish_and_clear())?,
    };
    times.assembly = sol.timings.assembly;
    times.preconditioner = sol.timings.preconditioner;
    times.solve = sol.timings.solve;

    let errors = match &pf.exact {
        Some(ex) => {
            let f = vector_fn(vector_spec(&ex.solution, "exact.solution", ncomp)?, "exact.solution")?;
            let ErrorNorms { l2, h1_semi, l2_exact } = error_norms(&space, &sol.u, &f)?;
            Some(ErrorReport { l2, h1_semi, relative_l2: if l2_exact > 0.0 { l2 / l2_exact } else { l2 } })
        }
        None => None,
    };

    let t = Instant::now();
    let mut outputs = Vec::new();
    let out = &opts.out_dir;
    if pf.output.vtu {
        let path = out.join(format!("{}.vtu", pf.output.name));
        let mut w = io::VtuWriter::new(&mesh);
        let name = if ncomp == 1 { "u" } else { "displacement" };
        let vals = space.vertex_values(&sol.u);
        if ncomp == 1 {
            w.point_scalar(name, vals)?;
        } else {
            w.point_vector(name, ncomp, vals)?;
        }
        w.write(&path)?;
        outputs.push(path);
    }
    if pf.output.plot && sol.stats.residual_history.len() > 1 {
        let path = out.join("residual.png");
        io::plot_residual_history(&path, &format!("{} residual", sol.stats.method), &[(sol.stats.method.as_str(), &sol.stats.residual_history)])?;
        outputs.push(path);
    }
    times.output = t.elapsed().as_secs_f64();
    times.total = t_start.elapsed().as_secs_f64();

    let report = Report {
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
        timings: times,
        outputs,
    };
    if pf.output.report {
        let path = out.join("report.json");
        io::write_json(&path, &report)?;
    }
    Ok(report)
}

/// Assemble and solve on one backend; returns the solution and (stored bytes, colors, constrained
/// dofs) for the report.
fn solve_on<B: FeBackend>(
    be: &B,
    problem: &LinearProblem,
    level: crate::operator::AssemblyLevel,
    tuning: crate::operator::Tuning,
    config: &SolverConfig,
    assembled: impl FnOnce(),
) -> Result<(Solution, (usize, usize, usize))> {
    let system = problem.system(be, level, tuning)?;
    assembled();
    let r = (system.storage_bytes(), system.ncolors, system.constraints.dofs.len());
    Ok((system.solve(config)?, r))
}

fn build_mesh(pf: &ProblemFile, base: &Path) -> Result<Mesh> {
    let m = &pf.mesh;
    if let Some(file) = &m.file {
        let generator_keys =
            [("n", m.n.is_some()), ("lower", m.lower.is_some()), ("upper", m.upper.is_some()), ("cell", m.cell.is_some()), ("grading", m.grading.is_some())];
        if let Some((k, _)) = generator_keys.iter().find(|(_, set)| *set) {
            return Err(Error::config(format!("mesh.{k}"), "not allowed with `mesh.file`"));
        }
        return gmsh::read_msh(&base.join(file));
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
    match gen {
        Generator::Interval => {
            check_cell(&[CellType::Interval], CellType::Interval)?;
            match m.grading {
                Some(r) => generate::interval_graded(n[0], lo[0], hi[0], r),
                None => generate::interval(n[0], lo[0], hi[0]),
            }
        }
        Generator::Rectangle => {
            let c = check_cell(&[CellType::Triangle, CellType::Quadrilateral], CellType::Triangle)?;
            generate::rectangle(n[0], n[1], [lo[0], lo[1]], [hi[0], hi[1]], c)
        }
        Generator::Box => {
            let c = check_cell(&[CellType::Tetrahedron, CellType::Hexahedron], CellType::Tetrahedron)?;
            generate::box_mesh(n[0], n[1], n[2], lo, hi, c)
        }
    }
}

/// A coefficient from a scalar spec.
pub fn coefficient(spec: ScalarSpec) -> Coefficient {
    match spec {
        ScalarSpec::Number(v) => Coefficient::Constant(v),
        ScalarSpec::Regions(m) => Coefficient::PerRegion(m),
        ScalarSpec::Expr(e) => Coefficient::function(move |x| e.eval(x, 0.0)),
    }
}

/// A vector function from per-component scalar specs (per-region tables are not allowed here).
pub fn vector_fn(specs: Vec<ScalarSpec>, key: &str) -> Result<VectorFn> {
    let coefs = specs
        .into_iter()
        .map(|s| match s {
            ScalarSpec::Regions(_) => Err(Error::config(key, "per-region tables are only allowed for coefficients")),
            s => Ok(coefficient(s)),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(move |x, out: &mut [f64]| {
        for (o, c) in out.iter_mut().zip(&coefs) {
            *o = c.eval(x, 0);
        }
    }))
}

fn flux_fn(v: VectorFn) -> FluxFn {
    Arc::new(move |x, _n, out: &mut [f64]| v(x, out))
}

fn build_problem(pf: &ProblemFile, space: Arc<FunctionSpace>) -> Result<LinearProblem> {
    let p = &pf.physics;
    let n = space.ncomp;
    let dim = space.mesh.dim;
    let coef = |v: &Option<toml::Value>, key: &str, default: Option<f64>| -> Result<Option<Coefficient>> {
        match v {
            Some(v) => Ok(Some(coefficient(scalar_spec(v, key, true)?))),
            None => Ok(default.map(Coefficient::Constant)),
        }
    };
    let forbid = |present: bool, key: &str| -> Result<()> {
        if present {
            Err(Error::config(format!("physics.{key}"), format!("not used by {:?} problems", p.kind).to_lowercase()))
        } else {
            Ok(())
        }
    };
    let (physics, source_key): (Box<dyn PointwisePhysics>, &str) = match p.kind {
        PhysicsKind::Poisson => {
            for (present, k) in [(p.young.is_some(), "E"), (p.nu.is_some(), "nu"), (p.lambda.is_some(), "lambda"), (p.mu.is_some(), "mu"), (p.body_force.is_some(), "body_force"), (p.rho.is_some(), "rho")] {
                forbid(present, k)?;
            }
            let kappa = coef(&p.kappa, "physics.kappa", Some(1.0))?.unwrap_or(Coefficient::Constant(1.0));
            let diff: Box<dyn PointwisePhysics> = Box::new(Diffusion::new(kappa));
            match coef(&p.reaction, "physics.reaction", None)? {
                Some(c) => (Box::new(Sum(vec![diff, Box::new(Mass::new(c, 1))])), "physics.source"),
                None => (diff, "physics.source"),
            }
        }
        PhysicsKind::Projection => {
            for (present, k) in [(p.young.is_some(), "E"), (p.nu.is_some(), "nu"), (p.lambda.is_some(), "lambda"), (p.mu.is_some(), "mu"), (p.body_force.is_some(), "body_force"), (p.kappa.is_some(), "kappa"), (p.reaction.is_some(), "reaction")] {
                forbid(present, k)?;
            }
            let rho = coef(&p.rho, "physics.rho", Some(1.0))?.unwrap_or(Coefficient::Constant(1.0));
            (Box::new(Mass::new(rho, 1)), "physics.source")
        }
        PhysicsKind::Elasticity => {
            for (present, k) in [(p.kappa.is_some(), "kappa"), (p.reaction.is_some(), "reaction"), (p.source.is_some(), "source"), (p.rho.is_some(), "rho")] {
                forbid(present, k)?;
            }
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
    let mut problem = LinearProblem { space: space.clone(), physics, source: None, bcs: Vec::new(), quadrature_degree: pf.assembly.quadrature_degree, quadrature: pf.assembly.quadrature };
    if let Some(v) = source_val {
        problem.source = Some(vector_fn(vector_spec(v, source_key, n)?, source_key)?);
    }
    for (i, bc) in pf.bc.iter().enumerate() {
        let key = format!("bc[{i}].value");
        let value = bc.value.as_ref().ok_or_else(|| Error::config(&key, "missing"))?;
        let on = bc.boundary.to_vec();
        for b in &on {
            if let super::linear::Boundary::Name(name) = b {
                space.mesh.tag(name, dim - 1).map_err(|e| Error::config(format!("bc[{i}].boundary"), e.to_string()))?;
            }
        }
        let v = vector_fn(vector_spec(value, &key, n)?, &key)?;
        problem.bcs.push(match bc.kind {
            BcKind::Dirichlet => BoundaryCondition::Dirichlet { on, value: v, components: bc.components.clone() },
            BcKind::Neumann => BoundaryCondition::Neumann { on, flux: flux_fn(v) },
            BcKind::Robin => {
                let a = bc.alpha.as_ref().ok_or_else(|| Error::config(format!("bc[{i}].alpha"), "missing"))?;
                let alpha = coefficient(scalar_spec(a, &format!("bc[{i}].alpha"), true)?);
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
}
