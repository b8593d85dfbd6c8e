//! Benchmarks behind `galerkin bench`: mesh and dof map, assembly throughput, and CG+Jacobi cost
//! per iteration for 3D Poisson P1/P2 on tetrahedra and elasticity Q1 on hexahedra.
pub mod assembly;
pub mod matrix;
pub mod timing;
use crate::mesh::{generate, CellType};
use crate::operator::AssemblyLevel;
use crate::physics::{Diffusion, Elasticity};
use crate::problem::linear::{scalar, vector, LinearProblem, SolverConfig, SolverMethod};
use crate::operator::Tuning;
use crate::solver::precond::PreconditionerKind;
use crate::solver::KrylovOptions;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One benchmark case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchCase {
    PoissonP1Tet,
    PoissonP2Tet,
    ElasticityQ1Hex,
}

impl BenchCase {
    pub const ALL: [BenchCase; 3] = [BenchCase::PoissonP1Tet, BenchCase::PoissonP2Tet, BenchCase::ElasticityQ1Hex];

    pub fn name(self) -> &'static str {
        match self {
            BenchCase::PoissonP1Tet => "poisson-p1-tet",
            BenchCase::PoissonP2Tet => "poisson-p2-tet",
            BenchCase::ElasticityQ1Hex => "elasticity-q1-hex",
        }
    }

    pub fn parse(s: &str) -> Result<BenchCase> {
        BenchCase::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            Error::invalid(format!("unknown bench case `{s}` (expected one of {:?})", BenchCase::ALL.map(|c| c.name())))
        })
    }

    /// Divisions per axis that give about `dofs` unknowns.
    fn divisions(self, dofs: usize) -> usize {
        let per_cube_nodes = match self {
            BenchCase::PoissonP1Tet => 1.0,
            BenchCase::PoissonP2Tet => 8.0,
            BenchCase::ElasticityQ1Hex => 3.0,
        };
        ((dofs as f64 / per_cube_nodes).cbrt().round() as usize).max(2)
    }
}

/// One row of the benchmark table.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub case: String,
    pub cells: usize,
    pub dofs: usize,
    pub nnz: usize,
    pub mesh_dofmap_s: f64,
    /// Whole assembly: coloring, sparsity, element matrices, load vector, Dirichlet elimination.
    pub assembly_s: f64,
    /// Sparsity and element matrices computed and summed into the CSR values (the hot loop).
    pub matrix_s: f64,
    /// Cells per second of the hot loop.
    pub elements_per_s: f64,
    pub iterations: usize,
    pub seconds_per_iteration: f64,
    /// Bytes a CG iteration streams at least (matrix values + column indices + row pointers and
    /// ~10 vector passes), divided by the time per iteration.
    pub cg_gb_per_s: f64,
    /// GPU columns (with `--gpu`): own and cuSPARSE SpMV bandwidth, CG+Jacobi time per iteration
    /// on the device (system assembled there), its compulsory-traffic bandwidth, and the speedup
    /// over the CPU iteration.
    pub gpu: Option<GpuBench>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GpuBench {
    pub spmv_gb_per_s: f64,
    pub cusparse_gb_per_s: f64,
    pub iterations: usize,
    pub seconds_per_iteration: f64,
    pub cg_gb_per_s: f64,
    pub speedup_per_iteration: f64,
}

/// Run one case at about `dofs` unknowns (and on `gpu` too, when given).
pub fn run_case(case: BenchCase, dofs: usize, max_iter: usize, gpu: Option<&crate::backend::cuda::CudaBackend>) -> Result<BenchRow> {
    let n = case.divisions(dofs);
    let t = Instant::now();
    let (cell, degree, ncomp) = match case {
        BenchCase::PoissonP1Tet => (CellType::Tetrahedron, 1, 1),
        BenchCase::PoissonP2Tet => (CellType::Tetrahedron, 2, 1),
        BenchCase::ElasticityQ1Hex => (CellType::Hexahedron, 1, 3),
    };
    let mesh = Arc::new(generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], cell)?);
    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, ncomp)?);
    let mesh_dofmap_s = t.elapsed().as_secs_f64();
    let problem = match case {
        BenchCase::ElasticityQ1Hex => LinearProblem::new(space.clone(), Elasticity::young_poisson(1.0, 0.3, 3)?)
            .source(vector(|_| [0.0, 0.0, -1.0]))
            .dirichlet(["xmin"], vector(|_| [0.0; 3])),
        _ => LinearProblem::new(space.clone(), Diffusion::new(1.0)).source(scalar(|_| 1.0)).dirichlet(
            ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"],
            scalar(|_| 0.0),
        ),
    };
    let system = problem.assemble(AssemblyLevel::Full)?;
    let assembly_s = system.timings.assembly;
    let matrix_s = system.timings.matrix;
    let config = SolverConfig {
        method: SolverMethod::Cg,
        preconditioner: PreconditionerKind::Jacobi,
        options: KrylovOptions { rtol: 1e-8, max_iter, ..Default::default() },
    };
    let cpu_solve = |k: usize| system.solve(&capped(&config, k));
    let (iterations, seconds_per_iteration) = per_iteration(max_iter, &cpu_solve)?;
    let a = system.matrix_to_host()?.ok_or_else(|| Error::invalid("bench assembles full matrices"))?;
    let nnz = a.nnz();
    let ndofs = space.ndofs();
    let bytes = (nnz * 12 + ndofs * 8 + ndofs * 8 * 10) as f64;
    let gpu = match gpu {
        None => None,
        Some(be) => {
            let (spmv, cusparse) = crate::backend::cuda::bench::spmv_bench(be, &a, 50)?;
            let gpu_system = problem.system(be, AssemblyLevel::Full, Tuning::default())?;
            let _ = gpu_system.solve(&capped(&config, 5)); // JIT and first allocations
            let gpu_solve = |k: usize| gpu_system.solve(&capped(&config, k));
            let (its, spi) = per_iteration(max_iter, &gpu_solve)?;
            Some(GpuBench {
                spmv_gb_per_s: spmv,
                cusparse_gb_per_s: cusparse,
                iterations: its,
                seconds_per_iteration: spi,
                cg_gb_per_s: bytes / spi / 1e9,
                speedup_per_iteration: seconds_per_iteration / spi,
            })
        }
    };
    Ok(BenchRow {
        case: case.name().into(),
        cells: mesh.num_cells(),
        dofs: ndofs,
        nnz,
        mesh_dofmap_s,
        assembly_s,
        matrix_s,
        elements_per_s: mesh.num_cells() as f64 / matrix_s,
        iterations,
        seconds_per_iteration,
        cg_gb_per_s: bytes / seconds_per_iteration / 1e9,
        gpu,
    })
}

/// A STREAM-like triad `a = b + s·c` over `n` doubles: the machine's memory bandwidth in GB/s,
/// against which the CG numbers are read.
pub fn stream_triad_gbs(n: usize) -> f64 {
    use rayon::prelude::*;
    let b = vec![1.0; n];
    let c = vec![2.0; n];
    let mut a = vec![0.0; n];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        a.par_iter_mut().with_min_len(1 << 16).zip(b.par_iter().zip(c.par_iter())).for_each(|(x, (y, z))| *x = y + 3.0 * z);
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&a);
    (3 * n * 8) as f64 / best / 1e9
}

pub(crate) fn capped(config: &SolverConfig, max_iter: usize) -> SolverConfig {
    SolverConfig { options: KrylovOptions { max_iter, ..config.options.clone() }, ..config.clone() }
}

/// Iterations and seconds per iteration of a solve capped at `max_iter`, set-up excluded: a
/// converged solve reports its own solve time; a capped one is timed against a solve capped at
/// half as many iterations, so uploads and preconditioner set-up cancel out.
pub(crate) fn per_iteration(max_iter: usize, solve: &dyn Fn(usize) -> Result<crate::problem::Solution>) -> Result<(usize, f64)> {
    let timed = |k: usize| -> Result<(usize, f64, bool)> {
        let t = Instant::now();
        match solve(k) {
            Ok(sol) => Ok((sol.stats.iterations, sol.timings.solve, true)),
            Err(Error::NotConverged { iterations, .. }) => Ok((iterations, t.elapsed().as_secs_f64(), false)),
            Err(e) => Err(e),
        }
    };
    let (its, secs, converged) = timed(max_iter)?;
    if converged || its < 4 {
        return Ok((its, secs / its.max(1) as f64));
    }
    let (its2, secs2, _) = timed(its / 2)?;
    Ok((its, (secs - secs2).max(0.0) / (its - its2).max(1) as f64))
}
