//! The benchmark matrix of `galerkin bench --matrix`: Poisson and linear elasticity in 2D
//! (triangles) and 3D (tetrahedra), degrees 1–3, at given sizes; assembly and CG+Jacobi on the CPU
//! backend and on the GPU, with iterations, speedups, GFLOP/s and achieved GB/s.
//!
//! GPU assembly is timed as the kernels alone (CUDA events, median of several runs; the positions
//! are found once per mesh and reused, as a time-dependent or nonlinear solve would) and judged
//! against its bytes floor: the compulsory traffic of reading the mesh and dof map once and writing
//! every CSR value, at the measured copy bandwidth. A time below that floor fails the benchmark.
//! CG is timed as the resident loop on each backend ([`super::cg_loop`]); the whole GPU solve to
//! 10⁻⁸ is reported too, as a user sees it (allocation and the final download included).
use super::cg_loop::time_cg;
use super::timing::{guarded_gbs, HostClock, Timing};
use crate::backend::cuda::{self, CudaBackend, DeviceCsr};
use crate::solver::precond::Preconditionable;
use crate::mesh::{generate, CellType};
use crate::operator::assemble::sparsity;
use crate::operator::coloring::cell_colors;
use crate::operator::level::full::cuda::{CsrTarget, DeviceAssembler, Variant};
use crate::operator::level::full::patches;
use crate::operator::{AssemblyLevel, Scatter, Tuning};
use crate::physics::{Diffusion, Elasticity};
use crate::problem::linear::{scalar, vector, LinearProblem, SolverConfig, SolverMethod};
use crate::solver::precond::PreconditionerKind;
use crate::solver::KrylovOptions;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Which problem of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MatrixProblem {
    Poisson2d,
    Poisson3d,
    Elasticity2d,
    Elasticity3d,
}

impl MatrixProblem {
    pub const ALL: [MatrixProblem; 4] = [MatrixProblem::Poisson2d, MatrixProblem::Poisson3d, MatrixProblem::Elasticity2d, MatrixProblem::Elasticity3d];

    pub fn name(self) -> &'static str {
        match self {
            MatrixProblem::Poisson2d => "poisson-2d",
            MatrixProblem::Poisson3d => "poisson-3d",
            MatrixProblem::Elasticity2d => "elasticity-2d",
            MatrixProblem::Elasticity3d => "elasticity-3d",
        }
    }

    pub fn parse(s: &str) -> Result<MatrixProblem> {
        MatrixProblem::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            Error::invalid(format!("unknown problem `{s}` (expected one of {:?})", MatrixProblem::ALL.map(|c| c.name())))
        })
    }

    fn dim(self) -> usize {
        match self {
            MatrixProblem::Poisson2d | MatrixProblem::Elasticity2d => 2,
            _ => 3,
        }
    }

    fn ncomp(self) -> usize {
        match self {
            MatrixProblem::Elasticity2d | MatrixProblem::Elasticity3d => self.dim(),
            _ => 1,
        }
    }

    /// The problem on the unit square/cube with about `dofs` unknowns at `degree`.
    pub fn build(self, degree: usize, dofs: usize) -> Result<LinearProblem> {
        let dim = self.dim();
        let nodes_per_axis = (dofs as f64 / self.ncomp() as f64).powf(1.0 / dim as f64);
        let n = ((nodes_per_axis / degree as f64).round() as usize).max(2);
        let mesh = match dim {
            2 => generate::rectangle(n, n, [0.0; 2], [1.0; 2], CellType::Triangle)?,
            _ => generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?,
        };
        // Renumbered as `galerkin run` does by default (H100, P2 Poisson in 3D: patch assembly
        // 0.653 → 0.614 ms).
        let mesh = Arc::new(crate::mesh::ordering::reorder_for_locality(&mesh)?);
        let space = Arc::new(FunctionSpace::lagrange(mesh, degree, self.ncomp())?);
        Ok(match self {
            MatrixProblem::Poisson2d => LinearProblem::new(space, Diffusion::new(1.0))
                .source(scalar(|_| 1.0))
                .dirichlet(["xmin", "xmax", "ymin", "ymax"], scalar(|_| 0.0)),
            MatrixProblem::Poisson3d => LinearProblem::new(space, Diffusion::new(1.0))
                .source(scalar(|_| 1.0))
                .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], scalar(|_| 0.0)),
            MatrixProblem::Elasticity2d | MatrixProblem::Elasticity3d => {
                LinearProblem::new(space, Elasticity::young_poisson(1.0, 0.3, dim)?)
                    .source(vector(|_| [0.0, -1.0, -1.0]))
                    .dirichlet(["xmin"], vector(|_| [0.0; 3]))
            }
        })
    }
}

/// One row of the matrix. CPU columns are `None` above `cpu_max_dofs`.
#[derive(Clone, Debug, Serialize)]
pub struct MatrixRow {
    pub problem: &'static str,
    pub degree: usize,
    pub cells: usize,
    pub dofs: usize,
    pub nnz: usize,
    /// CPU element matrices summed into CSR (the hot loop), and the whole CPU assembly.
    pub cpu_matrix_s: Option<f64>,
    pub cpu_assembly_s: Option<f64>,
    pub cpu_seconds_per_iteration: Option<f64>,
    /// CPU solve time at the GPU's iteration count (the same algorithm): per-iteration × iterations.
    pub cpu_solve_s: Option<f64>,
    /// The CPU CG loop's timing per iteration (median and spread), and the copy bandwidth of the
    /// host for that working set, which its GB/s were checked against.
    pub cpu_cg: Option<Timing>,
    pub cpu_cg_gb_per_s: Option<f64>,
    /// GPU assembly kernels: atomics, and colored (with the number of colors).
    pub gpu_matrix_atomic_s: f64,
    pub gpu_matrix_colored_s: f64,
    /// The atomic scatter with the values in compressible memory (where the device has it).
    pub gpu_matrix_atomic_comp_s: Option<f64>,
    /// Row-owner assembly (no atomics), on the reference-tensor path only.
    pub gpu_matrix_rows_s: Option<f64>,
    /// Patch assembly (where a cell's upper triangle fits in shared memory), and the global atomics per
    /// element entry it leaves.
    pub gpu_matrix_patch_s: Option<f64>,
    pub patch_atomic_fraction: Option<f64>,
    pub colors: usize,
    pub gpu_elements_per_s: f64,
    pub gpu_assembly_gflops: f64,
    /// Compulsory bytes of assembly / copy bandwidth, and the measured time over that floor.
    pub assembly_floor_s: f64,
    pub assembly_over_floor: f64,
    /// Whole GPU assembly (host pattern, load vector and uploads included), as a user sees it.
    pub gpu_assembly_s: f64,
    /// Median, spread and runs of each GPU assembly scatter timed above.
    pub gpu_matrix_timings: Vec<(&'static str, Timing)>,
    pub iterations: usize,
    /// The whole GPU solve to 10⁻⁸ as a user runs it (vectors allocated, solution downloaded).
    pub gpu_solve_s: f64,
    /// The resident GPU CG loop per iteration (median), with its timing.
    pub gpu_seconds_per_iteration: f64,
    pub gpu_cg: Timing,
    pub gpu_cg_gb_per_s: f64,
    pub gpu_cg_gflops: f64,
    /// CPU over GPU: element matrix kernels, and solve.
    pub speedup_matrix: Option<f64>,
    pub speedup_solve: Option<f64>,
    /// GPU CG+Jacobi seconds per iteration and operator bytes at each level (full, partial, none),
    /// over `level_iters` iterations (set-up excluded).
    pub levels: Vec<LevelTiming>,
}

/// One assembly level's CG iteration on the GPU.
#[derive(Clone, Debug, Serialize)]
pub struct LevelTiming {
    pub level: &'static str,
    pub seconds_per_iteration: f64,
    pub storage_bytes: usize,
    /// Whole set-up of the level's system (assembly, quadrature data, ...).
    pub setup_s: f64,
}

/// Arithmetic of the assembly kernel per cell, as written in `kernels/assembly.cu`: per thread and
/// point the Jacobian (once on affine cells), the row's gradient, and per column a gradient, a dot
/// product and the physics terms; with reference tensors, per entry the contraction with the
/// cell's geometry.
pub fn assembly_flops_per_cell(v: &Variant) -> f64 {
    let (d, n) = (v.dim as f64, v.ncomp as f64);
    let threads = v.threads_per_cell() as f64;
    if v.reftensor {
        let geometry = threads * (2.0 * v.nv as f64 * d * d + 5.0 * d * d * d);
        let per_pair = 2.0 * d * d + 4.0 + if v.full_gradient { 4.0 * d * d * d + 6.0 * n * n } else { 0.0 };
        return geometry + (v.nloc * v.nloc) as f64 * per_pair;
    }
    let geo_points = if v.affine { 1.0 } else { v.nq as f64 };
    let geometry = threads * geo_points * (2.0 * v.nv as f64 * d * d + 3.0 * d * d * d);
    let per_point_row = 2.0 * d * d + 8.0;
    let per_pair = 2.0 * d * d + 2.0 * d + 6.0 + 2.0 * n + if v.full_gradient { 6.0 * n * n } else { 0.0 };
    geometry + v.nq as f64 * (threads * per_point_row + (v.nloc * v.nloc) as f64 * per_pair)
}

/// Compulsory bytes of one assembly: cell vertex and node lists and positions read once, vertex
/// coordinates once, every CSR value zeroed and written once.
fn assembly_floor_bytes(v: &Variant, cells: usize, vertices: usize, nnz: usize) -> f64 {
    let per_cell = 4 * v.nv + 4 * v.nloc + 2 * v.nloc * v.nloc;
    (cells * per_cell + vertices * v.dim * 8 + nnz * 16) as f64
}

/// GPU CG iterations per timed run of the resident loop.
const GPU_CG_ITERATIONS: usize = 100;

/// One case: CPU (when `run_cpu`) and GPU. `copy_gbs` is the device's measured copy bandwidth.
#[allow(clippy::too_many_arguments)]
pub fn run(problem: MatrixProblem, degree: usize, dofs: usize, be: &CudaBackend, copy_gbs: f64, run_cpu: bool, cpu_iters: usize, tuning: Tuning, levels: &[AssemblyLevel]) -> Result<MatrixRow> {
    let p = problem.build(degree, dofs)?;
    let space = p.space.clone();
    let mesh = space.mesh.clone();
    let config = SolverConfig {
        method: SolverMethod::Cg,
        preconditioner: PreconditionerKind::Jacobi,
        options: KrylovOptions { rtol: 1e-8, max_iter: 100_000, ..Default::default() },
    };

    // GPU: the whole assembly as a user runs it, then the kernels timed on their own.
    let t = Instant::now();
    let system = p.system(be, AssemblyLevel::Full, Tuning { scatter: Scatter::Atomic, ..tuning })?;
    be.synchronize()?;
    let gpu_assembly_s = t.elapsed().as_secs_f64();
    let (integ, _) = p.integrator()?;
    let asm = DeviceAssembler::new(be, &integ, &Vec::new(), tuning)?;
    let pattern = &sparsity(&space)?;
    let nnz = pattern.nnz();
    let mut timings: Vec<(&'static str, Timing)> = Vec::new();
    let mut atomic = asm.csr_target(be, pattern, Scatter::Atomic, None)?;
    let t = cuda::bench::timed(be, 5, || asm.assemble_into(be, &mut atomic))?;
    let gpu_matrix_atomic_s = t.median;
    timings.push(("atomic", t));
    // Every other scatter must give the atomic matrix (which the tests check against the CPU): a
    // fast but wrong kernel fails the benchmark instead of reporting a time.
    let reference = atomic.matrix.values_to_host(be)?;
    let check = |t: &CsrTarget| -> Result<()> {
        let diff = super::max_rel_diff(&reference, &t.matrix.values_to_host(be)?);
        if diff > 1e-10 {
            return Err(Error::invalid(format!("{} scatter differs from atomic by {diff:e} (relative to the largest entry)", t.scatter.name())));
        }
        Ok(())
    };
    drop(atomic);
    // Each other scatter: timed like the atomic one, then checked against it.
    let mut time_checked = |name: &'static str, t: &mut CsrTarget| -> Result<f64> {
        let timing = cuda::bench::timed(be, 5, || asm.assemble_into(be, t))?;
        check(t)?;
        let s = timing.median;
        timings.push((name, timing));
        Ok(s)
    };
    // (thirty-fifth pass) the same atomic scatter into values in compressible memory: the zeroing and
    // the scatter's reads of zeroed lines compressed in the L2 (the hyperelastic Jacobian's default).
    let comp = DeviceCsr::pattern_from_host_compressible(be, pattern)?;
    let gpu_matrix_atomic_comp_s = match comp.is_compressible() {
        true => Some(time_checked("atomic comp", &mut asm.target_on(be, comp, Some(pattern), Scatter::Atomic, None)?)?),
        false => None,
    };
    let colors = cell_colors(&mesh);
    let gpu_matrix_colored_s = time_checked("colored", &mut asm.csr_target(be, pattern, Scatter::Colored, Some(&colors))?)?;
    let v = asm.variant.clone();
    let n = space.ndofs();
    let gpu_matrix_rows_s = match v.reftensor {
        true => Some(time_checked("rows", &mut asm.csr_target(be, pattern, Scatter::Rows, None)?)?),
        false => None,
    };
    // Beyond 2·10⁶ unknowns, the host lists of patches of few, large cells (nd(nd+1)/2 entries
    // per cell) take longer to build than the benchmark is worth.
    const FEW_CELLS: usize = 15;
    let small = patches::patch_cells(v.nloc, v.ncomp, tuning.patch_doubles).is_none_or(|c| c < FEW_CELLS);
    let patch = if small && n > 2_000_000 { Err(Error::Unsupported("small patches".into())) } else { asm.csr_target(be, pattern, Scatter::Patch, None) };
    let (gpu_matrix_patch_s, patch_atomic_fraction) = match patch {
        Ok(mut t) => (Some(time_checked("patch", &mut t)?), t.patch_atomic_fraction()),
        Err(Error::Unsupported(_)) => (None, None),
        Err(e) => return Err(e),
    };
    let best = [gpu_matrix_colored_s, gpu_matrix_rows_s.unwrap_or(f64::INFINITY), gpu_matrix_patch_s.unwrap_or(f64::INFINITY)]
        .into_iter()
        .fold(gpu_matrix_atomic_s, f64::min);
    let floor_bytes = assembly_floor_bytes(&v, mesh.num_cells(), mesh.num_vertices(), nnz);
    let floor = floor_bytes / (copy_gbs * 1e9);
    for (name, t) in &timings {
        guarded_gbs(&format!("{} {name} assembly (compulsory bytes)", problem.name()), floor_bytes, t, copy_gbs)?;
    }

    let sol = system.solve(&config)?;
    let iterations = sol.stats.iterations;
    let gpu_solve_s = sol.timings.solve;
    let cg_bytes = (nnz * 12 + n * 8 * 11) as f64;
    let cg_flops = (2 * nnz + 12 * n) as f64;
    let mut clock = cuda::bench::EventClock::new(be)?;
    let gpu_jacobi = crate::solver::Jacobi::new(be, &system.operator.diagonal(be)?)?;
    let gpu_cg = time_cg(&mut clock, be, &system.operator, &gpu_jacobi, &system.rhs, GPU_CG_ITERATIONS, 5)?;
    let gpu_spi = gpu_cg.median;
    let gpu_cg_gb_per_s = guarded_gbs(&format!("{} GPU CG iteration", problem.name()), cg_bytes, &gpu_cg, copy_gbs)?;
    drop((gpu_jacobi, system));
    // Each level asked for (`--levels`): its CG iteration on the same problem, the same resident loop.
    let mut level_rows = Vec::new();
    for &level in levels {
        let t = Instant::now();
        let sys = match p.system(be, level, tuning) {
            Ok(s) => s,
            Err(Error::Unsupported(_)) => continue,
            Err(e) => return Err(e),
        };
        be.synchronize()?;
        let setup_s = t.elapsed().as_secs_f64();
        let jacobi = crate::solver::Jacobi::new(be, &sys.operator.diagonal(be)?)?;
        let t = time_cg(&mut clock, be, &sys.operator, &jacobi, &sys.rhs, GPU_CG_ITERATIONS, 5)?;
        level_rows.push(LevelTiming { level: level.name(), seconds_per_iteration: t.median, storage_bytes: sys.storage_bytes(), setup_s });
    }

    let (mut cpu_matrix_s, mut cpu_assembly_s, mut cpu_cg, mut cpu_cg_gb_per_s) = (None, None, None, None);
    if run_cpu {
        let cpu = p.assemble(AssemblyLevel::Full)?;
        cpu_matrix_s = Some(cpu.timings.matrix);
        cpu_assembly_s = Some(cpu.timings.assembly);
        let a = cpu.operator.matrix().ok_or_else(|| Error::invalid("the matrix bench assembles full matrices"))?;
        let jacobi = crate::solver::Jacobi::new(&crate::backend::Cpu, &cpu.operator.diagonal(&crate::backend::Cpu)?)?;
        let k = super::cpu_iterations(a, &jacobi, &cpu.rhs, cpu_iters)?;
        let t = time_cg(&mut HostClock::default(), &crate::backend::Cpu, a, &jacobi, &cpu.rhs, k, 3)?;
        let ceiling = super::timing::cpu_ceiling_gbs(cg_bytes as usize, n * 8);
        cpu_cg_gb_per_s = Some(guarded_gbs(&format!("{} CPU CG iteration", problem.name()), cg_bytes, &t, ceiling)?);
        cpu_cg = Some(t);
    }
    let cpu_spi = cpu_cg.as_ref().map(|t| t.median);
    let cpu_solve_s = cpu_spi.map(|s| s * iterations as f64);
    Ok(MatrixRow {
        problem: problem.name(),
        degree,
        cells: mesh.num_cells(),
        dofs: n,
        nnz,
        cpu_matrix_s,
        cpu_assembly_s,
        cpu_seconds_per_iteration: cpu_spi,
        cpu_solve_s,
        cpu_cg,
        cpu_cg_gb_per_s,
        gpu_matrix_atomic_s,
        gpu_matrix_atomic_comp_s,
        gpu_matrix_colored_s,
        gpu_matrix_rows_s,
        gpu_matrix_patch_s,
        patch_atomic_fraction,
        colors: colors.len(),
        gpu_elements_per_s: mesh.num_cells() as f64 / best,
        gpu_assembly_gflops: assembly_flops_per_cell(&v) * mesh.num_cells() as f64 / best / 1e9,
        assembly_floor_s: floor,
        assembly_over_floor: best / floor,
        gpu_assembly_s,
        gpu_matrix_timings: timings,
        iterations,
        gpu_solve_s,
        gpu_seconds_per_iteration: gpu_spi,
        gpu_cg,
        gpu_cg_gb_per_s,
        gpu_cg_gflops: cg_flops / gpu_spi / 1e9,
        speedup_matrix: cpu_matrix_s.map(|c| c / best),
        // Loop against loop: the same iterations on both backends.
        speedup_solve: cpu_spi.map(|c| c / gpu_spi),
        levels: level_rows,
    })
}
