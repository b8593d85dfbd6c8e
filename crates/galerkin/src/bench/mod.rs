//! Benchmarks behind `galerkin bench`: mesh and dof map, assembly throughput, and CG+Jacobi cost
//! per iteration for 3D Poisson P1/P2 on tetrahedra and elasticity Q1 on hexahedra.
//!
//! Every time is taken by [`timing`] (resident loop, repeated, median and spread, refused above the
//! copy bandwidth measured in the same run).
pub mod assembly;
pub mod ceed;
pub mod cg_loop;
pub mod gram_schmidt;
pub mod heat;
pub mod hex;
pub mod hex_levels;
pub mod hex_parts;
pub mod iga;
pub mod matrix;
pub mod timing;
use crate::mesh::{generate, CellType};
use crate::operator::AssemblyLevel;
use crate::physics::{Diffusion, Elasticity};
use crate::operator::Tuning;
use crate::problem::linear::{scalar, vector, LinearProblem};
use crate::solver::precond::Preconditionable;
use crate::space::FunctionSpace;
use timing::Timing;
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
    /// CG iterations per timed run of the resident loop.
    pub iterations: usize,
    /// Median seconds per CG+Jacobi iteration, and the timing with its spread.
    pub seconds_per_iteration: f64,
    pub cg: Timing,
    /// Bytes a CG iteration streams at least (matrix values + column indices + row pointers and
    /// ~10 vector passes), divided by the median time per iteration.
    pub cg_gb_per_s: f64,
    /// The ceiling that figure was checked against: this machine's copy bandwidth for arrays the
    /// size of the iteration's working set (capped at 64 MB), measured in the same run.
    pub cpu_copy_gb_per_s: f64,
    /// GPU columns (with `--gpu`): own and cuSPARSE SpMV bandwidth, CG+Jacobi time per iteration
    /// on the device (system assembled there), its compulsory-traffic bandwidth, and the speedup
    /// over the CPU iteration.
    pub gpu: Option<GpuBench>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GpuBench {
    pub spmv_gb_per_s: f64,
    pub cusparse_gb_per_s: f64,
    pub spmv: Timing,
    pub iterations: usize,
    pub seconds_per_iteration: f64,
    pub cg: Timing,
    pub cg_gb_per_s: f64,
    /// The device's copy bandwidth measured in the same run (the ceiling of every GPU figure).
    pub copy_gb_per_s: f64,
    pub speedup_per_iteration: f64,
}

/// Timed runs of the CPU CG loop, and of the GPU's.
const CPU_RUNS: usize = 3;
const GPU_RUNS: usize = 5;
/// A CPU timing run lasts about this long (fewer iterations than `max_iter` on large problems).
const CPU_RUN_SECONDS: f64 = 0.5;

/// Run one case at about `dofs` unknowns (and on `gpu` too, with the copy bandwidth measured
/// there in GB/s). CG is timed as `max_iter` iterations of the resident loop (fewer on the CPU
/// where those would take long), repeated.
pub fn run_case(case: BenchCase, dofs: usize, max_iter: usize, gpu: Option<(&crate::backend::cuda::CudaBackend, f64)>) -> Result<BenchRow> {
    use crate::backend::Cpu;
    let n = case.divisions(dofs);
    let t = Instant::now();
    let (cell, degree, ncomp) = match case {
        BenchCase::PoissonP1Tet => (CellType::Tetrahedron, 1, 1),
        BenchCase::PoissonP2Tet => (CellType::Tetrahedron, 2, 1),
        BenchCase::ElasticityQ1Hex => (CellType::Hexahedron, 1, 3),
    };
    // Renumbered along a Hilbert curve, as `galerkin run` does by default.
    let mesh = Arc::new(crate::mesh::ordering::reorder_for_locality(&generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], cell)?)?);
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
    let a = system.operator.matrix().ok_or_else(|| Error::invalid("bench assembles full matrices"))?;
    let nnz = a.nnz();
    let ndofs = space.ndofs();
    let bytes = (nnz * 12 + ndofs * 8 + ndofs * 8 * 10) as f64;
    let jacobi = crate::solver::Jacobi::new(&Cpu, &system.operator.diagonal(&Cpu)?)?;
    let k_cpu = cpu_iterations(a, &jacobi, &system.rhs, max_iter)?;
    let cpu = cg_loop::time_cg(&mut timing::HostClock::default(), &Cpu, a, &jacobi, &system.rhs, k_cpu, CPU_RUNS)?;
    let cpu_copy = timing::cpu_ceiling_gbs(bytes as usize, ndofs * 8);
    let cg_gb_per_s = timing::guarded_gbs("CPU CG iteration", bytes, &cpu, cpu_copy)?;
    let gpu = match gpu {
        None => None,
        Some((be, copy_gbs)) => {
            let [(spmv, spmv_gbs), (_, cusparse_gbs)] = crate::backend::cuda::bench::spmv_bench(be, a, 50, copy_gbs)?;
            // The system is assembled on the device, its Jacobi diagonal computed there; then only
            // the loop is timed, between CUDA events.
            let dev = problem.system(be, AssemblyLevel::Full, Tuning::default())?;
            let jac = crate::solver::Jacobi::new(be, &dev.operator.diagonal(be)?)?;
            let mut clock = crate::backend::cuda::bench::EventClock::new(be)?;
            let cg = cg_loop::time_cg(&mut clock, be, &dev.operator, &jac, &dev.rhs, max_iter.max(1), GPU_RUNS)?;
            let gbs = timing::guarded_gbs("GPU CG iteration", bytes, &cg, copy_gbs)?;
            Some(GpuBench {
                spmv_gb_per_s: spmv_gbs,
                cusparse_gb_per_s: cusparse_gbs,
                spmv,
                iterations: max_iter.max(1),
                seconds_per_iteration: cg.median,
                cg_gb_per_s: gbs,
                copy_gb_per_s: copy_gbs,
                speedup_per_iteration: cpu.median / cg.median,
                cg,
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
        iterations: k_cpu,
        seconds_per_iteration: cpu.median,
        cg: cpu,
        cg_gb_per_s,
        cpu_copy_gb_per_s: cpu_copy,
        gpu,
    })
}

/// Iterations per CPU timing run: `max_iter`, or fewer where that would take longer than
/// [`CPU_RUN_SECONDS`] (judged from two untimed iterations), at least 5.
pub(crate) fn cpu_iterations(a: &dyn crate::backend::LinearOperator<crate::backend::Cpu>, m: &dyn crate::backend::LinearOperator<crate::backend::Cpu>, b: &Vec<f64>, max_iter: usize) -> Result<usize> {
    let mut probe = cg_loop::CgLoop::new(&crate::backend::Cpu, a, m, b)?;
    let t = Instant::now();
    probe.iterate(2)?;
    let per = t.elapsed().as_secs_f64() / 2.0;
    Ok(((CPU_RUN_SECONDS / per.max(1e-9)) as usize).clamp(5, max_iter.max(5)))
}

/// The largest difference of `got` from `reference`, relative to `reference`'s largest entry: what
/// the benchmarks check a fast result against (the IGA solvers, the hyperelastic kernel sweep).
pub fn max_rel_diff(reference: &[f64], got: &[f64]) -> f64 {
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    reference.iter().zip(got).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
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

/// A level that cannot hold a benchmark's problem (memory, shared memory, 32-bit indices) is a
/// skipped row with its reason, not the end of the sweep: `Ok(Err(reason))` for those errors,
/// `Err` for every other.
pub fn skippable<T>(built: crate::Result<T>) -> crate::Result<std::result::Result<T, String>> {
    match built {
        Ok(t) => Ok(Ok(t)),
        Err(e @ (crate::Error::Unsupported(_) | crate::Error::Backend { .. })) => Ok(Err(e.to_string())),
        Err(e) => Err(e),
    }
}
