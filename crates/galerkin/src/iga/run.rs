//! `galerkin run` for B-spline problem files: space → element matrices → multifrontal factorization
//! and solve (CPU or GPU) → the solution as a function → errors, CSV/PNG (1D) or VTU (2D), JSON.
use super::config::{IgaProblem, IgaSetup, IgaSpace, Method};
use super::function::{ErrorNorms, Spline1d, Spline2d};
use super::output;
use super::system::ElementSystem;
use crate::backend::Backend;
use crate::io::OutputFile;
use crate::memory;
use crate::mesh::CellType;
use crate::operator::AssemblyLevel;
use crate::backend::AnyBackend;
use crate::problem::run::{
    AssemblyReport, ErrorReport as FeErrors, MemoryReport, MeshReport, PhaseTimes, Report, RunOptions, SolverReport as FeSolver,
    SpaceReport as FeSpace,
};
use crate::solver::multifrontal::{CpuMultifrontal, MultifrontalStats, Symbolic};
use crate::solver::{DirectSolver, Factorization};
use crate::{io, Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Largest accepted relative residual `‖A u − b‖ / ‖b‖` of a direct solve: above it the matrix is
/// numerically singular for the purpose at hand and the run fails instead of reporting garbage.
pub const RESIDUAL_LIMIT: f64 = 1e-8;

/// What an IGA run did, written as `report.json`.
#[derive(Debug, Serialize)]
pub struct IgaReport {
    pub title: String,
    pub backend: String,
    pub notes: Vec<String>,
    pub space: SpaceReport,
    pub solver: SolverReport,
    pub errors: Option<ErrorReport>,
    pub timings: Timings,
    pub memory: MemoryReport,
    /// The files this run wrote (size, SHA-256); the report is written after them.
    pub outputs: Vec<OutputFile>,
}

#[derive(Debug, Serialize)]
pub struct SpaceReport {
    pub family: &'static str,
    pub dim: usize,
    pub degree: Vec<usize>,
    /// Lowest continuity at an interior breakpoint per direction (degree − 1 for maximal).
    pub min_continuity: Vec<Option<usize>>,
    pub elements: Vec<usize>,
    pub dofs: usize,
    /// Basis functions per element.
    pub element_size: usize,
    pub dirichlet_dofs: usize,
    pub quadrature_points: usize,
}

#[derive(Debug, Serialize)]
pub struct SolverReport {
    pub method: Method,
    pub multifrontal: Option<MultifrontalStats>,
    /// GPU kernel and library launches of one factorization and one solve.
    pub gpu_launches: Option<(usize, usize)>,
    pub relative_residual: f64,
}

#[derive(Debug, Serialize)]
pub struct ErrorReport {
    pub l2: f64,
    pub h1_semi: f64,
    pub relative_l2: f64,
    pub relative_h1: f64,
    /// Gauss points per element and direction used for the norms.
    pub quadrature_points: usize,
}

/// Seconds per phase.
#[derive(Debug, Default, Serialize)]
pub struct Timings {
    pub setup: f64,
    pub assembly: f64,
    pub analysis: f64,
    pub factor: f64,
    pub solve: f64,
    pub errors: f64,
    pub output: f64,
    pub total: f64,
}

/// Runs a B-spline problem file's text (`path` names it in errors) and returns the summary the
/// CLI prints; `report.json` holds the IGA report ([`IgaReport`]).
pub fn run_text(text: &str, path: &Path, opts: &RunOptions) -> Result<Report> {
    let setup = IgaSetup::parse(text, &path.display().to_string())?;
    let r = run(&setup, opts)?;
    let (cells, dim) = (r.space.elements.iter().product::<usize>(), r.space.dim);
    let mut notes = r.notes.clone();
    if let Some(m) = &r.solver.multifrontal {
        notes.push(format!(
            "B-splines of degree {:?} on {:?} elements; multifrontal: {} tree levels, largest front {}, {:.3e} factor flops; analysis {:.3} s, factor {:.3} s, solve {:.3} s",
            r.space.degree, r.space.elements, m.levels, m.max_front, m.factor_flops, r.timings.analysis, r.timings.factor, r.timings.solve
        ));
    }
    if let Some(e) = &r.errors {
        notes.push(format!("relative H1 error {:.3e} ({} Gauss points per direction)", e.relative_h1, e.quadrature_points));
    }
    Ok(Report {
        title: r.title.clone(),
        backend: r.backend.clone(),
        notes,
        mesh: MeshReport { cell_type: if dim == 1 { CellType::Interval } else { CellType::Quadrilateral }, cells, vertices: r.space.elements.iter().map(|e| e + 1).product(), dim },
        space: FeSpace { family: "bspline".into(), degree: r.space.degree.iter().copied().max().unwrap_or(0), components: 1, dofs: r.space.dofs },
        assembly: AssemblyReport { level: AssemblyLevel::Element, storage_bytes: cells * r.space.element_size * r.space.element_size * 8, colors: 0, dirichlet_dofs: r.space.dirichlet_dofs },
        solver: FeSolver {
            method: format!("{:?}", r.solver.method).to_lowercase(),
            preconditioner: "none".into(),
            iterations: 0,
            initial_residual: 0.0,
            final_residual: 0.0,
            relative_residual: r.solver.relative_residual,
            residual_history: Vec::new(),
        },
        errors: r.errors.as_ref().map(|e| FeErrors { l2: e.l2, h1_semi: e.h1_semi, relative_l2: e.relative_l2 }),
        points: Vec::new(),
        timings: PhaseTimes {
            mesh: 0.0,
            space: r.timings.setup,
            assembly: r.timings.assembly,
            preconditioner: r.timings.analysis + r.timings.factor,
            solve: r.timings.solve,
            errors: r.timings.errors,
            output: r.timings.output,
            total: r.timings.total,
            ..Default::default()
        },
        memory: r.memory,
        outputs: r.outputs,
    })
}

/// Host (and device) memory the run needs for its element matrices, before they are built.
fn check_elements_memory(nelem: usize, k: usize, ndofs: usize) -> Result<memory::Estimate> {
    let mut est = memory::Estimate::default();
    est.add("element matrices", (nelem * k * k) as f64 * 8.0);
    est.add("element restriction", (nelem * k) as f64 * 4.0);
    est.add("vectors", ndofs as f64 * 8.0 * 4.0);
    memory::check("host", &est, memory::host_available().as_ref())?;
    Ok(est)
}

/// The factorization's memory, checked before it is allocated: the fronts on the host (CPU) or
/// the device (GPU, with a copy of the element matrices), or faer's LU (bounded below by the matrix).
fn check_factor_memory(engine: &AnyBackend, method: Method, sym: &Symbolic, est: &mut memory::Estimate) -> Result<()> {
    let fronts = sym.storage_len as f64 * 8.0;
    match (engine, method) {
        (_, Method::Lu) => est.add("CSR matrix", sym.leaf_len as f64 * 16.0),
        (AnyBackend::Cpu(_), _) => est.add("multifrontal fronts", fronts),
        (AnyBackend::Cuda(be), _) => {
            let mut dev = memory::Estimate::default();
            dev.add("multifrontal fronts", fronts);
            dev.add("element matrices", sym.leaf_len as f64 * 8.0);
            dev.add("solve buffers", (sym.leaf_slots + 2 * sym.level_slots) as f64 * 8.0);
            let (free, _) = be.memory_info()?;
            memory::check("GPU", &dev, Some(&memory::Available { bytes: free as f64, source: format!("free memory of {}", be.device().name) }))?;
        }
    }
    memory::check("host", est, memory::host_available().as_ref())
}

/// The solution on the host, the factorization statistics and GPU launch counts.
struct Solved {
    u: Vec<f64>,
    stats: Option<MultifrontalStats>,
    launches: Option<(usize, usize)>,
}

fn solve(engine: &AnyBackend, method: Method, sys: &ElementSystem, sym: Symbolic, t: &mut Timings) -> Result<Solved> {
    let clock = Instant::now();
    if method == Method::Lu {
        let lu = DirectSolver::lu(&sys.to_csr()?)?;
        t.factor = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        let u = lu.solve(&sys.rhs)?;
        t.solve = clock.elapsed().as_secs_f64();
        return Ok(Solved { u, stats: None, launches: None });
    }
    let stats = Some(sym.stats());
    let sym = Arc::new(sym);
    match engine {
        // The right-hand side is known at factorization time: on the CPU the forward elimination
        // runs inside the factorization (`factor_and_solve`), so `factor` times both.
        AnyBackend::Cpu(_) => {
            let mut u = vec![0.0; sys.ndofs];
            let clock = Instant::now();
            CpuMultifrontal::factor_and_solve_new(sym, &sys.matrices, 1, &sys.rhs, &mut u)?;
            t.factor = clock.elapsed().as_secs_f64();
            Ok(Solved { u, stats, launches: None })
        }
        // The GPU's fused path was slower (BENCHMARKS.md, round 9): factorize, then solve.
        AnyBackend::Cuda(be) => {
            let f = crate::solver::multifrontal::CudaMultifrontal::factor(be, sym, &sys.matrices)?;
            t.factor = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let b = be.from_host(&sys.rhs)?;
            let mut x = be.zeros(sys.ndofs)?;
            f.solve(be.as_ref(), &b, &mut x)?;
            let u = be.to_host(&x)?;
            t.solve = clock.elapsed().as_secs_f64();
            Ok(Solved { u, stats, launches: Some(f.launches()) })
        }
    }
}

fn relative_residual(sys: &ElementSystem, u: &[f64]) -> f64 {
    let mut au = vec![0.0; sys.ndofs];
    sys.apply(u, &mut au);
    let r = au.iter().zip(&sys.rhs).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
    let b = sys.rhs.iter().map(|v| v * v).sum::<f64>().sqrt();
    if b > 0.0 { r / b } else { r }
}

/// Runs a validated setup.
pub fn run(setup: &IgaSetup, opts: &RunOptions) -> Result<IgaReport> {
    let start = Instant::now();
    let mut notes = Vec::new();
    let capable = if setup.method == Method::Lu { Err("faer's sparse LU runs on the CPU".to_string()) } else { Ok(()) };
    let engine = AnyBackend::select(opts.backend.unwrap_or(setup.backend), capable, &mut notes)?;
    let (nelem, k, ndofs) = match &setup.space {
        IgaSpace::D1(s) => (s.num_elements(), s.degree() + 1, s.num_basis()),
        IgaSpace::D2(s) => (s.num_elements(), s.element_size(), s.num_basis()),
    };
    let mut est = check_elements_memory(nelem, k, ndofs)?;
    let out = crate::io::OutputDir::lock(&opts.out_dir)?;
    if !out.removed_temporaries.is_empty() {
        notes.push(format!("removed {} temporary file(s) of an interrupted earlier run", out.removed_temporaries.len()));
    }
    let mut t = Timings { setup: start.elapsed().as_secs_f64(), ..Default::default() };
    let q = setup.quadrature;

    let clock = Instant::now();
    let sys = match (&setup.problem, &setup.space) {
        (IgaProblem::D1(p), IgaSpace::D1(s)) => p.assemble(s, q)?,
        (IgaProblem::D2(p), IgaSpace::D2(s)) => p.assemble(s, q)?,
        _ => return Err(Error::invalid("internal: problem and space dimensions differ")),
    };
    t.assembly = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let sym = match &setup.space {
        IgaSpace::D1(s) => super::symbolic_1d(s)?,
        IgaSpace::D2(s) => super::symbolic_2d(s)?,
    };
    t.analysis = clock.elapsed().as_secs_f64();
    check_factor_memory(&engine, setup.method, &sym, &mut est)?;
    let memory = MemoryReport { estimate: est.total(), available: memory::host_available().map(|a| a.bytes), ..Default::default() };
    let dirichlet_dofs = sys.dirichlet;
    let solved = solve(&engine, setup.method, &sys, sym, &mut t)?;
    let residual = relative_residual(&sys, &solved.u);
    if !(residual <= RESIDUAL_LIMIT) {
        return Err(Error::Factorization(format!(
            "the direct solve left a relative residual of {residual:.3e} (limit {RESIDUAL_LIMIT:.0e}): the matrix is numerically singular"
        )));
    }

    let clock = Instant::now();
    let nq = setup.error_quadrature;
    enum Sol {
        D1(Spline1d),
        D2(Spline2d),
    }
    let sol = match &setup.space {
        IgaSpace::D1(s) => Sol::D1(Spline1d::new(s.clone(), solved.u)?),
        IgaSpace::D2(s) => Sol::D2(Spline2d::new(s.clone(), solved.u)?),
    };
    let errors = match &setup.exact {
        None => None,
        Some(ex) => {
            let e: ErrorNorms = match &sol {
                Sol::D1(u) => {
                    let (f, df) = (ex.u.clone(), ex.grad[0].clone());
                    u.errors(&move |x| f.eval([x, 0.0, 0.0], 0.0), &move |x| df.eval([x, 0.0, 0.0], 0.0), nq)?
                }
                Sol::D2(u) => {
                    let (f, gx, gy) = (ex.u.clone(), ex.grad[0].clone(), ex.grad[1].clone());
                    let g = move |p: [f64; 2]| [gx.eval([p[0], p[1], 0.0], 0.0), gy.eval([p[0], p[1], 0.0], 0.0)];
                    u.errors(&move |p| f.eval([p[0], p[1], 0.0], 0.0), &g, nq)?
                }
            };
            Some(ErrorReport { l2: e.l2, h1_semi: e.h1_semi, relative_l2: e.relative_l2(), relative_h1: e.relative_h1(), quadrature_points: nq })
        }
    };
    t.errors = clock.elapsed().as_secs_f64();

    let clock = Instant::now();
    out.remove("report.json")?;
    let o = &setup.output;
    let exact = setup.exact.as_ref().map(|e| &e.u);
    let mut outputs: Vec<PathBuf> = Vec::new();
    let title = if setup.title.is_empty() { "B-spline solution".to_string() } else { setup.title.clone() };
    match &sol {
        Sol::D1(u) => {
            if o.csv {
                let p = out.join(&format!("{}.csv", o.name));
                output::write_csv_1d(&p, u, exact, o.samples[0])?;
                outputs.push(p);
            }
            if o.plot {
                let p = out.join(&format!("{}.png", o.name));
                output::plot_1d(&p, &title, u, exact, o.samples[0])?;
                outputs.push(p);
            }
        }
        Sol::D2(u) => {
            if o.vtu {
                let p = out.join(&format!("{}.vtu", o.name));
                output::write_vtu_2d(&p, u, exact, o.samples[0], o.samples[1])?;
                outputs.push(p);
            }
        }
    }
    let (dim, degree, continuity, elements) = match &setup.space {
        IgaSpace::D1(s) => (1, vec![s.degree()], vec![s.knots().interior_continuity().into_iter().min()], vec![s.num_elements()]),
        IgaSpace::D2(s) => (
            2,
            vec![s.x.degree(), s.y.degree()],
            vec![s.x.knots().interior_continuity().into_iter().min(), s.y.knots().interior_continuity().into_iter().min()],
            vec![s.x.num_elements(), s.y.num_elements()],
        ),
    };
    let outputs = outputs.iter().map(|p| crate::io::file_record(p)).collect::<Result<Vec<_>>>()?;
    let mut report = IgaReport {
        title: setup.title.clone(),
        backend: engine.name(),
        notes,
        space: SpaceReport { family: "bspline", dim, degree, min_continuity: continuity, elements, dofs: sys.ndofs, element_size: k, dirichlet_dofs, quadrature_points: q },
        solver: SolverReport { method: setup.method, multifrontal: solved.stats, gpu_launches: solved.launches, relative_residual: residual },
        errors,
        timings: t,
        memory,
        outputs,
    };
    report.timings.output = clock.elapsed().as_secs_f64();
    report.timings.total = start.elapsed().as_secs_f64();
    if o.report {
        io::write_json(out.join("report.json"), &report)?;
    }
    Ok(report)
}
