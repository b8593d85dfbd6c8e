//! `galerkin bench --advection`: whole runs of a curved inflow–outflow problem (P_k triangles, GMRES(50)
//! + element block Jacobi to a fixed relative tolerance) on one CPU core (a one-thread rayon pool,
//! as the seed measured), on every core, and on the GPU. Each run is timed end to end and by phase:
//! setup (mesh and facet connectivity, on the host for every backend), assembly (GPU: upload,
//! pattern and values, synchronised), solve (preconditioner and GMRES; the solution back on the
//! host). Every figure is the median of `repeats` whole runs with its spread.
use super::formula::Formula;
use super::problem::{AdvectionProblem, Velocity};
use super::run::{solve_cpu, solve_cuda, Solution};
use super::solve::{Method, Precond, SolverConfig};
use crate::backend::cuda::CudaBackend;
use crate::bench::timing::Timing;
use crate::mesh::{generate, CellType};
use crate::solver::KrylovOptions;
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct AdvectionBenchConfig {
    pub dofs: Vec<usize>,
    pub degrees: Vec<usize>,
    /// The CPU columns only up to this many unknowns.
    pub cpu_max_dofs: usize,
    /// One-core column only up to this many unknowns.
    pub single_core_max_dofs: usize,
    pub repeats: usize,
    /// Whole runs of the one-core column (long: 1 by default).
    pub single_core_repeats: usize,
    pub rtol: f64,
}

/// One (backend, size, degree).
#[derive(Clone, Debug, Serialize)]
pub struct AdvectionRow {
    /// `cpu-1` (one core), `cpu-<threads>` or `gpu`.
    pub backend: String,
    pub degree: usize,
    pub cells: usize,
    pub dofs: usize,
    pub nnz: usize,
    pub iterations: usize,
    pub relative_residual: f64,
    pub setup: Timing,
    pub assembly: Timing,
    pub solve: Timing,
    pub total: Timing,
}

/// The benchmark problem: a curved, divergence-free flow β = (1 + sin(πy)/2, (1 + x)/2) that enters
/// through xmin and ymin and leaves through xmax and ymax (no closed streamlines, so block Jacobi
/// GMRES needs about as many iterations as cells along a streamline), reaction 1, a Gaussian
/// source and inflow data 1, on an n × n square of 2n² triangles.
pub fn problem(n: usize, degree: usize) -> Result<AdvectionProblem> {
    let f = |s: &str, key: &str| Formula::parse(s, key);
    let mesh = generate::rectangle(n, n, [0.0, 0.0], [1.0, 1.0], CellType::Triangle)?;
    let v = Velocity::field(f("1 + 0.5*sin(pi*y)", "velocity")?, f("0.5 + 0.5*x", "velocity")?)?;
    AdvectionProblem::new(Arc::new(mesh), degree, v, f("1", "reaction")?, f("exp(-20*((x-0.3)^2 + (y-0.6)^2))", "source")?, vec![], Some(f("1", "inflow")?))
}

/// Divisions per side giving about `dofs` unknowns of degree `k` on triangles.
pub fn divisions(dofs: usize, k: usize) -> usize {
    let nloc = (k + 1) * (k + 2) / 2;
    ((dofs as f64 / (2.0 * nloc as f64)).sqrt().round() as usize).max(1)
}

fn timing(v: Vec<f64>) -> Result<Timing> {
    Timing::from_samples(v)
}

/// `repeats` whole runs of `one` (setup, then assembly and solve), phase by phase.
fn rows(backend: &str, n: usize, k: usize, repeats: usize, mut one: impl FnMut(&AdvectionProblem) -> Result<Solution>) -> Result<AdvectionRow> {
    let (mut setup, mut asm, mut sol, mut total) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        let p = problem(n, k)?;
        let setup_s = t.elapsed().as_secs_f64();
        let s = one(&p)?;
        total.push(t.elapsed().as_secs_f64());
        setup.push(setup_s);
        asm.push(s.assembly_s);
        sol.push(s.precond_s + s.solve_s);
        last = Some((p.mesh.num_cells(), p.ndofs(), s));
    }
    let (cells, dofs, s) = last.ok_or_else(|| Error::invalid("no run"))?;
    Ok(AdvectionRow {
        backend: backend.into(),
        degree: k,
        cells,
        dofs,
        nnz: s.nnz,
        iterations: s.stats.iterations,
        relative_residual: s.stats.relative_residual,
        setup: timing(setup)?,
        assembly: timing(asm)?,
        solve: timing(sol)?,
        total: timing(total)?,
    })
}

/// Every configured row, reported to `row` as it completes.
pub fn run(cfg: &AdvectionBenchConfig, gpu: Option<&CudaBackend>, mut row: impl FnMut(&AdvectionRow) -> Result<()>) -> Result<Vec<AdvectionRow>> {
    let solver = SolverConfig {
        method: Method::Gmres,
        preconditioner: Precond::BlockJacobi,
        options: KrylovOptions { rtol: cfg.rtol, atol: 1e-50, max_iter: 100_000, restart: 50, progress: false },
    };
    let one_core = rayon::ThreadPoolBuilder::new().num_threads(1).build().map_err(|e| Error::invalid(format!("one-thread pool: {e}")))?;
    let mut out = Vec::new();
    for &k in &cfg.degrees {
        if k > super::problem::MAX_DEGREE {
            return Err(Error::invalid(format!("degree {k}: DG advection has degrees 0 to {}", super::problem::MAX_DEGREE)));
        }
        for &dofs in &cfg.dofs {
            let n = divisions(dofs, k);
            let mut push = |r: AdvectionRow| -> Result<()> {
                row(&r)?;
                out.push(r);
                Ok(())
            };
            if let Some(be) = gpu {
                // One untimed run compiles the kernels (NVRTC, once per process).
                solve_cuda(be, &problem(n.min(8), k)?, &solver)?;
                push(rows("gpu", n, k, cfg.repeats, |p| solve_cuda(be, p, &solver))?)?;
            }
            if dofs <= cfg.cpu_max_dofs {
                let threads = rayon::current_num_threads();
                push(rows(&format!("cpu-{threads}"), n, k, cfg.repeats, |p| solve_cpu(p, &solver))?)?;
                if dofs <= cfg.single_core_max_dofs && threads > 1 {
                    push(one_core.install(|| rows("cpu-1", n, k, cfg.single_core_repeats, |p| solve_cpu(p, &solver)))?)?;
                }
            }
        }
    }
    Ok(out)
}
