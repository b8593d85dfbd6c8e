//! `galerkin bench --dg`: assembly and solve timed separately, for N elements and degree k, on the
//! CPU (block Thomas, cyclic reduction, faer's sparse LU on the same matrix, CG) and the GPU
//! (assembly, cyclic reduction, CG), on the seed's problem (u = (1 − x) e^{−x²}, a = 1, Dirichlet
//! ends, SIPG with the default penalty, Legendre basis, k + 2 Gauss points).
//!
//! Timing: the resident work only (data already in memory, or on the device), each measurement
//! repeated, median and spread reported; a GPU repetition is bracketed by stream synchronisations.
//! Bytes: each phase's compulsory traffic (model in [`Bytes`]) over its median time, printed only
//! when the working set is far beyond the L2 cache, and the run fails rather than print a GPU
//! figure above the copy bandwidth measured in the same run.
//! Timing and the bandwidth guard are the shared ones of [`crate::bench::timing`]; GPU runs use
//! its host clock around work that ends in a stream synchronisation.
use super::assemble::assemble_into;
use super::cuda::{assemble_and_solve, DeviceBlockJacobi, DeviceCyclicReduction, DeviceDg, RefineScratch};
use super::cyclic::CyclicReduction;
use super::norms::{errors, Exact};
use super::problem::{DgProblem, Field};
use super::block_tridiag::BlockJacobi;
use super::mesh::IntervalMesh;
use super::thomas::BlockThomas;
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, Cpu, LinearOperator};
use crate::solver::{DirectSolver, Factorization, SolverMethod, KrylovOptions};
use crate::{Error, Result};
use serde::Serialize;
use std::time::Instant;

pub use crate::bench::timing::Timing;
use crate::bench::timing::{guarded_gbs, measure, Clock, HostClock};

/// One untimed warm-up, then `runs` timed runs of `f` (which ends with its work complete).
pub fn time(runs: usize, f: impl FnMut() -> Result<()>) -> Result<Timing> {
    measure(&mut HostClock::default(), 1, runs.max(1), f)
}

/// Compulsory bytes of each phase for N elements and blocks of b (f64 = 8 bytes), counting every
/// value once (perfect caching of neighbours).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bytes {
    /// Read the vertices and f at the Q points, write 3b² + b values per element.
    pub assembly: f64,
    /// Σ over levels of n_l·7b² (odd rows read and written in place, even rows and two odd
    /// blocks read, next level written), n_l summing to about 2N.
    pub factor: f64,
    /// Σ over levels of n_l·(2.5b² + 4b).
    pub solve: f64,
    /// The floor of assembly + direct solve: write the matrix and right-hand side once, read them
    /// once, write the solution: (6b² + 3b)·8·N.
    pub floor: f64,
}

impl Bytes {
    pub fn new(n: usize, b: usize, q: usize) -> Bytes {
        let (b, q) = (b as f64, q as f64);
        let mut rows = 0.0;
        let mut m = n;
        while m > 1 {
            rows += m as f64;
            m = m.div_ceil(2);
        }
        let n = n as f64;
        Bytes {
            assembly: 8.0 * (n + 1.0 + n * q + n * (3.0 * b * b + b)),
            factor: 8.0 * rows * 7.0 * b * b,
            solve: 8.0 * rows * (2.5 * b * b + 4.0 * b),
            floor: 8.0 * n * (6.0 * b * b + 3.0 * b),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct KrylovRow {
    pub method: String,
    pub preconditioner: String,
    pub iterations: usize,
    pub converged: bool,
    pub seconds: f64,
    pub seconds_per_iteration: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct GpuRow {
    pub device: String,
    pub copy_gbs: f64,
    pub upload_s: f64,
    pub assembly: Timing,
    pub factor: Timing,
    pub solve: Timing,
    /// The direct solve as `galerkin run` does it: assembly, factorization with the forward sweep
    /// fused in, back sweep, one step of iterative refinement (matrix-free residual + one more
    /// solve). The target's number.
    pub total: Timing,
    /// The same without the refinement.
    pub total_unrefined: Timing,
    /// The matrix-free residual b − A x alone.
    pub residual: Timing,
    /// One solve of 16 right-hand sides with the kept factorization (N ≤ 10⁶).
    pub solve_16: Option<Timing>,
    pub floor_s: f64,
    pub total_over_floor: f64,
    /// GB/s of the byte model over the median (absent while the data fit in cache).
    pub assembly_gbs: Option<f64>,
    pub factor_gbs: Option<f64>,
    pub solve_gbs: Option<f64>,
    pub levels: usize,
    /// max |x_gpu − x_cpu| / max |x_cpu| where the CPU ran (refined GPU against block Thomas).
    pub diff_vs_cpu: Option<f64>,
    /// L2 errors against the exact solution, with and without the refinement step.
    pub l2_error: f64,
    pub l2_error_unrefined: f64,
    pub krylov: Option<KrylovRow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DgBenchRow {
    pub elements: usize,
    pub degree: usize,
    pub dofs: usize,
    pub stored_values: usize,
    pub bytes: Bytes,
    pub threads: usize,
    pub host_sample_s: f64,
    pub cpu_assembly: Option<Timing>,
    pub thomas_factor: Option<Timing>,
    pub thomas_solve: Option<Timing>,
    pub cr_factor: Option<Timing>,
    pub cr_solve: Option<Timing>,
    pub faer_lu_factor: Option<Timing>,
    pub faer_lu_solve: Option<Timing>,
    /// (faer LU factor + solve) / (Thomas factor + solve), medians.
    pub thomas_speedup_over_faer: Option<f64>,
    /// L2 errors against the exact solution: block Thomas, cyclic reduction, and cyclic reduction
    /// with one refinement step.
    pub cpu_l2_error: Option<f64>,
    pub cr_l2_error: Option<f64>,
    pub cr_refined_l2_error: Option<f64>,
    pub cpu_krylov: Option<KrylovRow>,
    pub gpu: Option<GpuRow>,
    /// Why the GPU columns are missing (device memory), when they are.
    pub gpu_skipped: Option<String>,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct DgBenchConfig {
    pub repeats: usize,
    pub cpu_max_elements: usize,
    pub faer_max_elements: usize,
    pub krylov_max_elements: usize,
    pub krylov_max_iter: usize,
}

/// The seed's problem on `n` uniform elements of degree `k`.
pub fn seed_problem(n: usize, k: usize) -> Result<(DgProblem, Exact)> {
    let mut p = DgProblem::new(IntervalMesh::uniform(n, 0.0, 1.0)?, k);
    p.f = Field::func(|x| (-x * x).exp() * (2.0 - 6.0 * x - 4.0 * x * x + 4.0 * x * x * x));
    p.left = super::BoundaryCondition::Dirichlet(1.0);
    p.right = super::BoundaryCondition::Dirichlet(0.0);
    let exact = Exact {
        u: Field::func(|x| (1.0 - x) * (-x * x).exp()),
        du: Some(Field::func(|x| (-x * x).exp() * (-1.0 - 2.0 * x + 2.0 * x * x))),
    };
    Ok((p, exact))
}

/// GB/s of `bytes` in `t` seconds when the data is well beyond any cache (256 MB), else `None`;
/// a figure above `ceiling` (the measured copy bandwidth) is an error, never a result.
fn gbs(bytes: f64, t: &Timing, ceiling: f64, what: &str) -> Result<Option<f64>> {
    if bytes < 256e6 {
        return Ok(None);
    }
    guarded_gbs(what, bytes, t, ceiling).map(Some)
}

fn krylov_row<B: Backend>(
    be: &B,
    a: &dyn LinearOperator<B>,
    m: &dyn LinearOperator<B>,
    rhs: &B::Vector,
    max_iter: usize,
    sync: &dyn Fn() -> Result<()>,
) -> Result<KrylovRow> {
    let opts = KrylovOptions { rtol: 1e-10, max_iter, ..KrylovOptions::default() };
    let mut x = be.zeros(a.nrows())?;
    sync()?;
    let c = Instant::now();
    let (iterations, converged) = match SolverMethod::Cg.solve(be, a, m, rhs, &mut x, &opts) {
        Ok(s) => (s.iterations, true),
        Err(Error::NotConverged { iterations, .. }) => (iterations, false),
        Err(e) => return Err(e),
    };
    sync()?;
    let seconds = c.elapsed().as_secs_f64();
    Ok(KrylovRow {
        method: "cg".into(),
        preconditioner: "block-jacobi".into(),
        iterations,
        converged,
        seconds,
        seconds_per_iteration: seconds / iterations.max(1) as f64,
    })
}

/// One row: CPU columns up to `cfg.cpu_max_elements`, GPU columns when `gpu` is given (with the
/// copy bandwidth `copy_gbs` measured on it in this run).
pub fn run(n: usize, k: usize, cfg: &DgBenchConfig, gpu: Option<(&CudaBackend, f64)>) -> Result<DgBenchRow> {
    let (p, exact) = seed_problem(n, k)?;
    let tab = p.tabulation()?;
    let b = p.block();
    let c = Instant::now();
    let s = p.sample(&tab)?;
    let host_sample_s = c.elapsed().as_secs_f64();
    let bytes = Bytes::new(n, b, tab.npoints());
    let mut row = DgBenchRow {
        elements: n,
        degree: k,
        dofs: p.ndofs(),
        stored_values: 3 * n * b * b,
        bytes,
        threads: rayon::current_num_threads(),
        host_sample_s,
        cpu_assembly: None,
        thomas_factor: None,
        thomas_solve: None,
        cr_factor: None,
        cr_solve: None,
        faer_lu_factor: None,
        faer_lu_solve: None,
        thomas_speedup_over_faer: None,
        cpu_l2_error: None,
        cr_l2_error: None,
        cr_refined_l2_error: None,
        cpu_krylov: None,
        gpu: None,
        gpu_skipped: None,
    };
    let reps = cfg.repeats;
    let (mut cpu_x, mut cpu_matrix) = (None, None);
    if n <= cfg.cpu_max_elements {
        let mut m = super::BlockTridiag::zeros(n, b)?;
        let mut rhs = vec![0.0; p.ndofs()];
        row.cpu_assembly = Some(time(reps, || assemble_into(&p, &tab, &s, &mut m, &mut rhs))?);
        let mut x = vec![0.0; p.ndofs()];
        // Factorizations consume a copy of the matrix, made before each timed run.
        let mut factored = None;
        row.thomas_factor = Some(time_with(reps, || Ok(m.clone()), |mm| BlockThomas::factor_owned(mm).map(|f| factored = Some(f)))?);
        let thomas = factored.take().ok_or_else(|| Error::invalid("no factorization"))?;
        row.thomas_solve = Some(time(reps, || thomas.solve(&Cpu, &rhs, &mut x))?);
        row.cpu_l2_error = Some(errors(&p, &x, &exact)?.l2);
        let mut cr = None;
        row.cr_factor = Some(time_with(reps, || Ok(m.clone()), |mm| CyclicReduction::factor_owned(mm).map(|f| cr = Some(f)))?);
        let cr = cr.ok_or_else(|| Error::invalid("no factorization"))?;
        let mut y = vec![0.0; p.ndofs()];
        row.cr_solve = Some(time(reps, || cr.solve(&Cpu, &rhs, &mut y))?);
        for (name, sol) in [("block Thomas", &x), ("cyclic reduction", &y)] {
            check_backward_error(&m, &rhs, sol, name)?;
        }
        row.cr_l2_error = Some(errors(&p, &y, &exact)?.l2);
        let mut r = vec![0.0; y.len()];
        m.apply(&y, &mut r)?;
        r.iter_mut().zip(&rhs).for_each(|(ri, bi)| *ri = bi - *ri);
        let mut d = vec![0.0; y.len()];
        cr.solve(&Cpu, &r, &mut d)?;
        y.iter_mut().zip(&d).for_each(|(yi, di)| *yi += di);
        row.cr_refined_l2_error = Some(errors(&p, &y, &exact)?.l2);
        if n <= cfg.faer_max_elements {
            let csr = m.to_csr()?;
            let r = reps.min(3);
            let mut lu = None;
            row.faer_lu_factor = Some(time_with(r, || Ok(()), |_| DirectSolver::lu(&csr).map(|f| lu = Some(f)))?);
            let lu = lu.ok_or_else(|| Error::invalid("no factorization"))?;
            let mut z = vec![0.0; p.ndofs()];
            row.faer_lu_solve = Some(time(r, || lu.solve_many(&Cpu, 1, &rhs, &mut z))?);
            let med = |t: &Option<Timing>| t.as_ref().map_or(f64::NAN, |t| t.median);
            row.thomas_speedup_over_faer =
                Some((med(&row.faer_lu_factor) + med(&row.faer_lu_solve)) / (med(&row.thomas_factor) + med(&row.thomas_solve)));
        }
        if n <= cfg.krylov_max_elements {
            let pre = BlockJacobi::new(&m)?;
            row.cpu_krylov = Some(krylov_row(&Cpu, &m, &pre, &rhs, cfg.krylov_max_iter, &|| Ok(()))?);
        }
        cpu_x = Some(x);
        cpu_matrix = Some(m);
    }
    if let Some((be, copy_gbs)) = gpu {
        // Matrix and cyclic-reduction levels (2·3b²N), vectors, level work and refinement
        // scratch (about 10bN), the sampled source (QN) and the vertices, in f64.
        let need = 8 * (6 * b * b * n + 10 * b * n + tab.npoints() * n + 2 * n);
        let free = be.device().free_memory;
        if need as f64 > 0.9 * free as f64 {
            row.gpu_skipped = Some(format!("needs about {:.1} GB of device memory, {:.1} GB free", need as f64 / 1e9, free as f64 / 1e9));
            return Ok(row);
        }
        row.gpu = Some(gpu_row(be, copy_gbs, &p, &tab, &s, &exact, &bytes, cpu_x.as_deref(), cpu_matrix.as_ref(), cfg)?);
    }
    Ok(row)
}

/// A solver's backward error ‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞) must be at round-off level: the
/// solutions of two stable solvers may differ by up to cond(A)·ε (about N², large at 10⁶ elements),
/// so that, not their difference, is the check.
fn check_backward_error(m: &super::BlockTridiag, b: &[f64], x: &[f64], name: &str) -> Result<()> {
    let mut ax = vec![0.0; x.len()];
    m.apply(x, &mut ax)?;
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |s, a| s.max(a.abs()));
    let r = ax.iter().zip(b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
    let bb = m.b * m.b;
    let norm_a = (0..m.size())
        .map(|row| {
            let (e, i) = (row / m.b, row % m.b);
            let sum = |a: &[f64]| a[e * bb + i * m.b..e * bb + (i + 1) * m.b].iter().map(|v| v.abs()).sum::<f64>();
            sum(&m.lower) + sum(&m.diag) + sum(&m.upper)
        })
        .fold(0.0, f64::max);
    let err = r / (norm_a * inf(x) + inf(b));
    if !(err <= 1e-13) {
        return Err(Error::invalid(format!("benchmark: {name} has backward error {err:.3e}: the solve is wrong")));
    }
    Ok(())
}

/// Like [`time`], for work that needs fresh input each run: `make` prepares it, untimed.
fn time_with<T>(runs: usize, mut make: impl FnMut() -> Result<T>, mut f: impl FnMut(T) -> Result<()>) -> Result<Timing> {
    let runs = runs.max(1);
    f(make()?)?;
    let mut clock = HostClock::default();
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let input = make()?;
        clock.start()?;
        f(input)?;
        samples.push(clock.stop()?);
    }
    Timing::from_samples(samples)
}

#[allow(clippy::too_many_arguments)]
fn gpu_row(
    be: &CudaBackend,
    copy_gbs: f64,
    p: &DgProblem,
    tab: &super::Tabulation,
    s: &super::problem::Samples,
    exact: &Exact,
    bytes: &Bytes,
    cpu_x: Option<&[f64]>,
    cpu_matrix: Option<&super::BlockTridiag>,
    cfg: &DgBenchConfig,
) -> Result<GpuRow> {
    let reps = cfg.repeats;
    let sync = || be.synchronize();
    let c = Instant::now();
    let data = DeviceDg::upload(be, p, tab, s)?;
    sync()?;
    let upload_s = c.elapsed().as_secs_f64();
    let (m, mut rhs) = data.assemble(be)?;
    let mut cr = DeviceCyclicReduction::factor_owned(be, m)?;
    let mut x = be.zeros(p.ndofs())?;
    let assembly = time(reps, || {
        data.assemble_into(be, cr.matrix_mut(), &mut rhs)?;
        sync()
    })?;
    // Each factorization needs a fresh matrix: re-assemble (untimed) before each timed factor,
    // which ends with a synchronising read of the pivot flag.
    let mut clock = HostClock::default();
    let mut samples = Vec::with_capacity(reps);
    for i in 0..=reps {
        data.assemble_into(be, cr.matrix_mut(), &mut rhs)?;
        sync()?;
        clock.start()?;
        cr.refactor(be)?;
        let t = clock.stop()?;
        if i > 0 {
            samples.push(t); // the first run is the warm-up
        }
    }
    let factor = Timing::from_samples(samples)?;
    let solve = time(reps, || {
        cr.solve(be, &rhs, &mut x)?;
        sync()
    })?;
    let solve_16 = if p.mesh.len() <= 1_000_000 {
        let b16 = be.from_host(&be.to_host(&rhs)?.repeat(16))?;
        let mut x16 = be.zeros(16 * p.ndofs())?;
        Some(time(reps, || {
            cr.solve_many(be, 16, &b16, &mut x16)?;
            sync()
        })?)
    } else {
        None
    };
    let mut r = be.zeros(p.ndofs())?;
    let residual = time(reps, || {
        data.residual(be, &x, &mut r)?;
        sync()
    })?;
    let mut scratch = RefineScratch::new(be, p.ndofs())?;
    let total_unrefined = time(reps, || {
        assemble_and_solve(be, &data, &mut cr, &mut rhs, &mut x, 0, &mut scratch)?;
        sync()
    })?;
    let l2_error_unrefined = errors(p, &be.to_host(&x)?, exact)?.l2;
    let total = time(reps, || {
        assemble_and_solve(be, &data, &mut cr, &mut rhs, &mut x, 1, &mut scratch)?;
        sync()
    })?;
    let xh = be.to_host(&x)?;
    let l2_error = errors(p, &xh, exact)?.l2;
    let diff_vs_cpu = cpu_x.map(|c| crate::bench::max_rel_diff(c, &xh));
    if let Some(m) = cpu_matrix {
        check_backward_error(m, &be.to_host(&rhs)?, &xh, "GPU cyclic reduction")?;
    }
    let krylov = if p.mesh.len() <= cfg.krylov_max_elements {
        let (m, rhs) = data.assemble(be)?;
        let pre = DeviceBlockJacobi::new(be, &m)?;
        Some(krylov_row(be, &m, &pre, &rhs, cfg.krylov_max_iter, &|| be.synchronize())?)
    } else {
        None
    };
    let ceiling = copy_gbs;
    let floor_s = bytes.floor / (copy_gbs * 1e9);
    Ok(GpuRow {
        device: be.device().name.clone(),
        copy_gbs,
        upload_s,
        assembly_gbs: gbs(data.assembly_bytes() as f64, &assembly, ceiling, "dg gpu assembly")?,
        factor_gbs: gbs(bytes.factor, &factor, ceiling, "dg gpu cyclic-reduction factor")?,
        solve_gbs: gbs(bytes.solve, &solve, ceiling, "dg gpu cyclic-reduction solve")?,
        total_over_floor: total.median / floor_s,
        floor_s,
        assembly,
        factor,
        solve,
        total,
        total_unrefined,
        residual,
        solve_16,
        levels: cr.levels(),
        diff_vs_cpu,
        l2_error,
        l2_error_unrefined,
        krylov,
    })
}
