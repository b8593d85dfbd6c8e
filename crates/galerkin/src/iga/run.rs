//! `galerkin run` for B-spline problem files: space → element matrices → multifrontal factorization
//! and solve (CPU or GPU) → the solution as a function → errors, CSV/PNG (1D) or VTU (2D), JSON.
use super::config::{IgaProblem, IgaSetup, IgaSpace, Method};
use super::function::{ErrorNorms, Spline1d, Spline2d};
use super::output;
use super::system::ElementSystem;
use crate::backend::Backend;
use crate::problem::run::{select_engine, Engine, RunOptions};
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
    pub outputs: Vec<PathBuf>,
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

/// Reads, runs and writes the outputs of a B-spline problem file.
pub fn run_file(path: &Path, opts: &RunOptions) -> Result<IgaReport> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let setup = IgaSetup::parse(&text, &path.display().to_string())?;
    run(&setup, opts)
}

/// The solution on the host, the factorization statistics and GPU launch counts.
struct Solved {
    u: Vec<f64>,
    stats: Option<MultifrontalStats>,
    launches: Option<(usize, usize)>,
}

fn solve(engine: &Engine, method: Method, sys: &ElementSystem, sym: Symbolic, t: &mut Timings) -> Result<Solved> {
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
        Engine::Cpu => {
            let f = CpuMultifrontal::factor(sym, &sys.matrices)?;
            t.factor = clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            let mut u = vec![0.0; sys.ndofs];
            f.solve_into(1, &sys.rhs, &mut u)?;
            t.solve = clock.elapsed().as_secs_f64();
            Ok(Solved { u, stats, launches: None })
        }
        Engine::Cuda(be) => {
            let f = crate::backend::cuda::CudaMultifrontal::factor(be, sym, &sys.matrices)?;
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
    let engine = select_engine(opts.backend.unwrap_or(setup.backend), capable, &mut notes)?;
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
    let out = &opts.out_dir;
    let o = &setup.output;
    let exact = setup.exact.as_ref().map(|e| &e.u);
    let mut outputs = Vec::new();
    let title = if setup.title.is_empty() { "B-spline solution".to_string() } else { setup.title.clone() };
    match &sol {
        Sol::D1(u) => {
            if o.csv {
                let p = out.join(format!("{}.csv", o.name));
                output::write_csv_1d(&p, u, exact, o.samples[0])?;
                outputs.push(p);
            }
            if o.plot {
                let p = out.join(format!("{}.png", o.name));
                output::plot_1d(&p, &title, u, exact, o.samples[0])?;
                outputs.push(p);
            }
        }
        Sol::D2(u) => {
            if o.vtu {
                let p = out.join(format!("{}.vtu", o.name));
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
    let mut report = IgaReport {
        title: setup.title.clone(),
        backend: engine.name(),
        notes,
        space: SpaceReport { family: "bspline", dim, degree, min_continuity: continuity, elements, dofs: sys.ndofs, quadrature_points: q },
        solver: SolverReport { method: setup.method, multifrontal: solved.stats, gpu_launches: solved.launches, relative_residual: residual },
        errors,
        timings: t,
        outputs,
    };
    report.timings.output = clock.elapsed().as_secs_f64();
    report.timings.total = start.elapsed().as_secs_f64();
    if o.report {
        let p = out.join("report.json");
        report.outputs.push(p.clone());
        io::write_json(&p, &report)?;
    }
    Ok(report)
}
