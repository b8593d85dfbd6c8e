//! `galerkin bench-iga`: the multifrontal solver on the seed's 1D problem and on 2D Poisson, CPU
//! and GPU, against faer's general sparse LU of the same matrix; factorization and solve times
//! over sizes and degrees, the cost of many right-hand sides, and the fit of the seed's
//! `t = a + b·log₂N` model.
//!
//! Timing ([`super::timing`]): resident work only (element matrices and right-hand sides already
//! where the solver runs), each measurement repeated, median and spread reported; GPU times with
//! CUDA events. Every GPU figure of moved bytes is checked against the copy bandwidth measured in
//! the same run, and every solution's backward error: a benchmark that would print an impossible
//! or wrong result fails instead.
use super::max_rel_diff;
use super::timing::{guarded_gbs, measure, Clock, HostClock, Timing};
use crate::backend::cuda::bench::EventClock;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::solver::multifrontal::cuda::{LargeFronts, LaunchProfile, MapsKernel, OverlapSpan, RowsBottom, SepLines, SolvePath, SubtreeShape, WalkLevel, WalkShape, DEFAULT_COLUMN_THREADS, TC_FEW_SUBTREES};
use crate::solver::multifrontal::CudaMultifrontal;
use crate::backend::Backend;
use crate::iga::{self, seed, Field, Physics2d, Problem2d, Space1d, Space2d};
use crate::io;
use crate::solver::multifrontal::{CpuMultifrontal, Symbolic};
use crate::solver::{DirectSolver, Factorization};
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// CPU timing: one untimed warm-up (none with `warm_up = false`), then `reps` timed runs.
fn cpu_time(reps: usize, warm_up: bool, f: impl FnMut() -> Result<()>) -> Result<Timing> {
    measure(&mut HostClock::default(), usize::from(warm_up), reps.max(1), f)
}

/// GPU timing: CUDA events on the backend's stream around each run, after one warm-up.
fn gpu_time(be: &CudaBackend, reps: usize, f: impl FnMut() -> Result<()>) -> Result<Timing> {
    measure(&mut EventClock::new(be)?, 1, reps.max(1), f)
}

/// [`gpu_time`] of a solve that overwrites its right-hand sides (`-ip`): `b` copied into `bx` before
/// each run (the untimed first one too), outside the timed region.
fn gpu_time_refilled(be: &CudaBackend, reps: usize, b: &CudaVector, bx: &mut CudaVector, mut f: impl FnMut(&mut CudaVector) -> Result<()>) -> Result<Timing> {
    let mut clock = EventClock::new(be)?;
    be.copy(b, bx)?;
    f(bx)?;
    let mut samples = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        be.copy(b, bx)?;
        clock.start()?;
        f(bx)?;
        samples.push(clock.stop()?);
    }
    Timing::from_samples(samples)
}

/// What to run.
#[derive(Clone, Debug)]
pub struct IgaBenchOptions {
    /// Which sweeps to run: the 1D sizes, the 2D sizes, the right-hand sides.
    pub sweep_1d: bool,
    pub sweep_2d: bool,
    pub sweep_rhs: bool,
    pub degrees: Vec<usize>,
    /// 1D sizes (elements).
    pub sizes_1d: Vec<usize>,
    /// 2D sizes (elements per side of the square).
    pub sizes_2d: Vec<usize>,
    /// Degrees of the 2D sweep.
    pub degrees_2d: Vec<usize>,
    /// Right-hand-side counts, at `rhs_elements` (1D) and degree `rhs_degree`.
    pub rhs: Vec<usize>,
    pub rhs_elements: usize,
    pub rhs_degree: usize,
    /// Elements per side of a 2D right-hand-side sweep (Poisson on the unit square) in place of the
    /// 1D one (0: 1D at `rhs_elements`), so that engines are compared on 2D separators too (round 22);
    /// the CPU engine is not run in 2D.
    pub rhs_grid: usize,
    /// GPU engines of the right-hand-side sweep: `gpu` (automatic choice), `gpu-levels`,
    /// `gpu-subtrees` (forced), `gpu-subtrees-TxC` (forced, T threads × C columns per block).
    pub rhs_engines: Vec<String>,
    pub reps: usize,
    /// Largest size (elements, 1D; elements in total, 2D) run on the CPU multifrontal and on faer.
    pub cpu_max: usize,
    pub lu_max: usize,
    /// Largest size run at degrees other than `full_degrees` (to bound the run time).
    pub full_degrees: Vec<usize>,
    pub partial_max: usize,
    /// GPU large-front engines of the 1D/2D sweeps ([`large_fronts`]): `auto` (the default
    /// choice per level), `batched` (every level), `batched-K` (levels with at least K large
    /// fronts), `per-node`; the first gives the row's `gpu` times, every one a [`GpuVariant`].
    pub large_fronts: Vec<String>,
}

/// The [`LargeFronts`] of a large-front engine name.
pub fn large_fronts(name: &str) -> Result<LargeFronts> {
    let bad = || Error::invalid(format!("unknown large-front engine `{name}` (expected auto, per-node, batched or batched-K with K ≥ 1)"));
    Ok(match name {
        "auto" => LargeFronts::Auto,
        "per-node" => LargeFronts::PerNode,
        "batched" => LargeFronts::Batched { min_nodes: 1 },
        _ => match name.strip_prefix("batched-").map(str::parse::<usize>) {
            Some(Ok(k)) if k >= 1 => LargeFronts::Batched { min_nodes: k },
            _ => return Err(bad()),
        },
    })
}

/// GPU times of one large-front engine at one size.
#[derive(Clone, Debug, Serialize)]
pub struct GpuVariant {
    pub engine: String,
    pub times: EngineTimes,
    /// Launches (kernels and library calls) per factorization and per solve.
    pub launches: (usize, usize),
}

/// One engine's times at one size.
#[derive(Clone, Debug, Serialize)]
pub struct EngineTimes {
    pub factor: Timing,
    pub solve: Timing,
    /// Lower-bound bytes moved per factorization / solve over the median time.
    pub factor_gbs: f64,
    pub solve_gbs: f64,
    pub factor_gflops: f64,
}

/// One (dimension, degree, size) row.
#[derive(Clone, Debug, Serialize)]
pub struct SizeRow {
    pub dim: usize,
    pub degree: usize,
    pub elements: usize,
    pub dofs: usize,
    pub levels: usize,
    pub max_front: usize,
    pub factor_flops: f64,
    pub factor_bytes: f64,
    pub solve_bytes: f64,
    pub assembly_s: f64,
    pub analysis_s: f64,
    pub cpu: Option<EngineTimes>,
    pub gpu: Option<EngineTimes>,
    /// GPU kernel/library launches per factorization and per solve.
    pub gpu_launches: Option<(usize, usize)>,
    /// Every large-front engine's GPU times (the first is `gpu`).
    pub gpu_variants: Vec<GpuVariant>,
    pub lu: Option<EngineTimes>,
    /// faer LU (factor + one solve) over GPU multifrontal (factor + one solve).
    pub gpu_speedup_over_lu: Option<f64>,
    /// Largest difference between solutions (GPU or faer vs the CPU multifrontal), relative to
    /// the solution's size (grows with the condition number).
    pub max_relative_difference: f64,
    /// Largest normwise backward error of the solutions (CPU, GPU, faer).
    pub max_backward_error: f64,
}

/// Cost of `nrhs` right-hand sides in one solve.
#[derive(Clone, Debug, Serialize)]
pub struct RhsRow {
    pub engine: String,
    pub elements: usize,
    pub degree: usize,
    pub nrhs: usize,
    pub factor_s: f64,
    pub solve: Timing,
    pub solve_gbs: f64,
    /// (factor + solve of nrhs) / (factor + solve of 1), with this engine's solve of 1.
    pub cost_over_one: f64,
    /// The same over the fastest factor + one solve of any GPU engine (the target).
    pub cost_over_best_one: f64,
    /// Engines that solve by the transfer maps: their computation after each factorization
    /// (seconds, median), and `cost_over_best_one` with it counted.
    pub maps_setup_s: Option<f64>,
    pub cost_with_setup_over_best_one: Option<f64>,
    /// The floor of a tree solve: three passes over `n × nrhs` doubles (`b` read twice, `x`
    /// written once) at the copy bandwidth measured in the run, and (factor + floor) over the
    /// best GPU factor + one solve: the best ratio any such design can reach.
    pub copy_floor_s: Option<f64>,
    pub floor_cost_over_best_one: f64,
    /// Per fused launch of one solve (GPU engines with fused passes; medians over `reps` profiled
    /// solves): time, bytes, occupancy.
    pub launches: Vec<LaunchProfile>,
    /// [`OVERLAP_ENGINE`]: when each factorization step, each pass's maps and forward sweep (second
    /// stream) and the backward solve ran in one profiled call.
    pub timeline: Vec<OverlapSpan>,
    /// Engines whose solve walks the passes near the root by lines: the walk's timeline per level
    /// in one traced solve after the timed ones ([`CudaMultifrontal::set_walk_trace`]).
    pub walk_levels: Vec<WalkLevel>,
    /// What ran where an engine asks for something that may not apply (round 23: whether the
    /// line walk ran, of which shape; whether pass 1 was chained).
    pub notes: Vec<String>,
}

/// The seed's model `t = a + b log₂ N` fitted to GPU factorization times.
#[derive(Clone, Debug, Serialize)]
pub struct Fit {
    pub degree: usize,
    pub a_s: f64,
    pub b_s: f64,
    /// Sizes (elements) the model was fitted on: from the smallest to where it stops holding.
    pub from: usize,
    pub to: usize,
    pub max_relative_residual: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct IgaBenchReport {
    pub device: Option<String>,
    pub copy_gbs: Option<f64>,
    pub cpu_threads: usize,
    pub rows: Vec<SizeRow>,
    pub rhs: Vec<RhsRow>,
    pub fits: Vec<Fit>,
}

/// The 2D benchmark problem: Poisson with κ = 1 + xy and smooth data.
fn poisson_2d() -> Problem2d {
    Problem2d {
        physics: Physics2d::Poisson { kappa: Field::new("kappa", |p| 1.0 + p[0] * p[1]), dirichlet: Field::new("g", |p| (p[0] + 2.0 * p[1]).sin()) },
        f: Field::new("f", |p| (3.0 * p[0]).cos() * (1.0 + p[1])),
    }
}

/// Bytes a factorization moves at least: copy and read the element matrices, read every child's
/// Schur block, write every front.
fn factor_bytes(s: &Symbolic) -> f64 {
    let internal: u64 = (s.nelem..s.num_nodes()).map(|v| s.m[v] as u64 * s.m[v] as u64).sum();
    let owning_leaves: u64 = s.factor_leaves.iter().map(|&v| (s.m[v as usize] as u64).pow(2)).sum();
    let schur: u64 = (0..s.num_nodes() - 1).map(|v| ((s.m[v] - s.e[v]) as u64).pow(2)).sum();
    // The element matrices are copied into the factor storage first (read + write), then read.
    8.0 * (3 * s.leaf_len + internal + owning_leaves + schur) as f64
}

/// Bytes a solve must move at least: the factor's L and U parts once, `b` read and `x` written.
fn solve_bytes(s: &Symbolic, nrhs: usize) -> f64 {
    let factors: u64 = s.m.iter().zip(&s.e).map(|(&m, &e)| 2 * e as u64 * m as u64).sum();
    8.0 * (factors as f64 + 2.0 * (s.n * nrhs) as f64)
}

/// Normwise backward error `‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)` (with ‖A‖∞ bounded by the element
/// matrices' absolute row sums): what a backward-stable direct solve keeps near machine precision,
/// however ill-conditioned the matrix (unlike differences between two solutions).
fn backward_error(sys: &iga::ElementSystem, x: &[f64]) -> f64 {
    backward_error_for(sys, x, &sys.rhs)
}

/// [`backward_error`] for the right-hand side `b`.
fn backward_error_for(sys: &iga::ElementSystem, x: &[f64], b: &[f64]) -> f64 {
    let k = sys.k;
    let mut ax = vec![0.0; sys.ndofs];
    sys.apply(x, &mut ax);
    let mut rows = vec![0.0; sys.ndofs];
    for (dofs, m) in sys.element_dofs.chunks(k).zip(sys.matrices.chunks(k * k)) {
        for j in 0..k {
            for i in 0..k {
                rows[dofs[i] as usize] += m[i + j * k].abs();
            }
        }
    }
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, a| m.max(a.abs()));
    let r = ax.iter().zip(b).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
    r / (inf(&rows) * inf(x) + inf(b)).max(f64::MIN_POSITIVE)
}

/// Backward error every solver must reach on the benchmark systems.
const BACKWARD_ERROR: f64 = 1e-12;

struct System {
    sys: iga::ElementSystem,
    sym: Arc<Symbolic>,
    assembly_s: f64,
    analysis_s: f64,
}

fn system_1d(p: usize, n: usize) -> Result<System> {
    let space = Space1d::uniform(p, n, 0.0, 1.0)?;
    let t = Instant::now();
    let sys = seed::problem().assemble(&space, p + 1)?;
    let assembly_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sym = Arc::new(iga::symbolic_1d(&space)?);
    Ok(System { sys, sym, assembly_s, analysis_s: t.elapsed().as_secs_f64() })
}

fn system_2d(p: usize, n: usize) -> Result<System> {
    let space = Space2d::new(Space1d::uniform(p, n, 0.0, 1.0)?, Space1d::uniform(p, n, 0.0, 1.0)?);
    let t = Instant::now();
    let sys = poisson_2d().assemble(&space, p + 1)?;
    let assembly_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sym = Arc::new(iga::symbolic_2d(&space)?);
    Ok(System { sys, sym, assembly_s, analysis_s: t.elapsed().as_secs_f64() })
}

fn engine_times(s: &Symbolic, factor: Timing, solve: Timing) -> EngineTimes {
    EngineTimes {
        factor_gbs: factor_bytes(s) / factor.median * 1e-9,
        solve_gbs: solve_bytes(s, 1) / solve.median * 1e-9,
        factor_gflops: s.factor_flops() / factor.median * 1e-9,
        factor,
        solve,
    }
}

/// [`engine_times`] with the GPU's byte rates checked against the copy bandwidth `copy`.
fn gpu_engine_times(s: &Symbolic, factor: Timing, solve: Timing, what: &str, copy: f64) -> Result<EngineTimes> {
    guarded_gbs(&format!("GPU factorization ({what})"), factor_bytes(s), &factor, copy)?;
    guarded_gbs(&format!("GPU solve ({what})"), solve_bytes(s, 1), &solve, copy)?;
    Ok(engine_times(s, factor, solve))
}

/// One size: CPU multifrontal (up to `cpu_max`), GPU multifrontal, faer LU (up to `lu_max`).
fn run_size(dim: usize, p: usize, n: usize, o: &IgaBenchOptions, gpu: Option<(&CudaBackend, f64)>) -> Result<SizeRow> {
    let System { sys, sym, assembly_s, analysis_s } = if dim == 1 { system_1d(p, n)? } else { system_2d(p, n)? };
    let elements = sym.nelem;
    let stats = sym.stats();
    let mut row = SizeRow {
        dim,
        degree: p,
        elements,
        dofs: sys.ndofs,
        levels: stats.levels,
        max_front: stats.max_front,
        factor_flops: stats.factor_flops,
        factor_bytes: factor_bytes(&sym),
        solve_bytes: solve_bytes(&sym, 1),
        assembly_s,
        analysis_s,
        cpu: None,
        gpu: None,
        gpu_launches: None,
        gpu_variants: Vec::new(),
        lu: None,
        gpu_speedup_over_lu: None,
        max_relative_difference: 0.0,
        max_backward_error: 0.0,
    };
    let mut reference: Option<Vec<f64>> = None;
    if elements <= o.cpu_max {
        let mut f = CpuMultifrontal::factor(sym.clone(), &sys.matrices)?;
        let factor = cpu_time(o.reps, true, || f.refactor(&sys.matrices))?;
        let mut x = vec![0.0; sys.ndofs];
        let solve = cpu_time(o.reps, true, || f.solve_into(1, &sys.rhs, &mut x))?;
        row.max_backward_error = row.max_backward_error.max(backward_error(&sys, &x));
        reference = Some(x);
        row.cpu = Some(engine_times(&sym, factor, solve));
    }
    if let Some((be, copy)) = gpu {
        let engines = if o.large_fronts.is_empty() { vec!["auto".to_string()] } else { o.large_fronts.clone() };
        let mut f = CudaMultifrontal::factor(be, sym.clone(), &sys.matrices)?;
        let b = be.from_host(&sys.rhs)?;
        let mut x = be.zeros(sys.ndofs)?;
        for engine in &engines {
            f.set_large_fronts(large_fronts(engine)?);
            let factor = gpu_time(be, o.reps, || f.refactor(be))?;
            let solve = gpu_time(be, o.reps, || f.solve(be, &b, &mut x))?;
            let xg = be.to_host(&x)?;
            row.max_backward_error = row.max_backward_error.max(backward_error(&sys, &xg));
            if let Some(r) = &reference {
                row.max_relative_difference = row.max_relative_difference.max(max_rel_diff(r, &xg));
            }
            reference.get_or_insert(xg);
            let t = gpu_engine_times(&sym, factor, solve, &format!("{dim}D p={p} N={elements} {engine}"), copy)?;
            if row.gpu.is_none() {
                row.gpu_launches = Some(f.launches());
                row.gpu = Some(t.clone());
            }
            row.gpu_variants.push(GpuVariant { engine: engine.clone(), times: t, launches: f.launches() });
        }
    }
    if elements <= o.lu_max {
        // faer's LU (symbolic analysis + numeric factorization, as `DirectSolver::lu` does it) is
        // the slowest part of the sweep: no warm-up, two runs from 2^18 elements on.
        let a = sys.to_csr()?;
        let reps = if elements >= 1 << 18 { 2 } else { o.reps.min(3) };
        let factor = cpu_time(reps, false, || DirectSolver::lu(&a).map(|_| ()))?;
        let lu = DirectSolver::lu(&a)?;
        let mut x = Vec::new();
        let solve = cpu_time(reps, true, || lu.solve(&sys.rhs).map(|v| x = v))?;
        row.max_backward_error = row.max_backward_error.max(backward_error(&sys, &x));
        if let Some(r) = &reference {
            row.max_relative_difference = row.max_relative_difference.max(max_rel_diff(r, &x));
        }
        row.lu = Some(engine_times(&sym, factor, solve));
    }
    if !(row.max_backward_error <= BACKWARD_ERROR) {
        return Err(Error::invalid(format!(
            "{dim}D p={p} N={elements}: a solution has backward error {:.3e} (limit {BACKWARD_ERROR:.0e}): refusing to report times",
            row.max_backward_error
        )));
    }
    if let (Some(g), Some(l)) = (&row.gpu, &row.lu) {
        row.gpu_speedup_over_lu = Some((l.factor.median + l.solve.median) / (g.factor.median + g.solve.median));
    }
    Ok(row)
}

/// Options of a GPU engine of the right-hand-side sweep beyond its path, shape and maps kernel.
#[derive(Clone, Copy, Debug, Default)]
struct EngineFlags {
    /// [`CudaMultifrontal::set_split_columns`].
    split: bool,
    /// [`CudaMultifrontal::set_stream_bottom`].
    stream: bool,
    /// [`CudaMultifrontal::set_pipe_separators`] on the passes of many subtrees.
    pipe: bool,
    /// [`CudaMultifrontal::set_column_threads`] (`None`: the default).
    column_threads: Option<usize>,
    /// [`CudaMultifrontal::set_lean_forward`] and [`CudaMultifrontal::set_lean_backward`].
    lean: (bool, bool),
    /// [`CudaMultifrontal::set_sep_lines`] (`None`: the layout's default).
    lines: Option<SepLines>,
}

/// The solve path, fused-kernel shape, maps kernel and flags of a GPU engine of the
/// right-hand-side sweep.
/// `gpu-maps[-blocks|-pipe|-tc|-sep|-sept][-split][-stream][-lean][-pipe][-xK][-T]`: the transfer maps with the default, block-per-subtree,
/// pipelined, tensor-core or separator-layout kernels (`-sept`: the passes near the root in one
/// launch; `-split`: a block per chunk of columns; `-stream`: the bottom pass through registers;
/// `-lean`: the bottom passes by warps (`-leanf` forward only, `-leanb` backward only);
/// `-pipe` after the kernel: the separator-row passes of many subtrees pipelined; `-xK`: K threads
/// per column in the separator-row blocks),
/// T columns per block.
fn engine_path(engine: &str) -> Result<(SolvePath, Option<SubtreeShape>, Option<MapsKernel>, EngineFlags)> {
    let bad = || Error::invalid(format!("unknown right-hand-side engine `{engine}` (expected gpu, gpu-fused, gpu-overlap, gpu-overlap-joint, gpu-overlap-flat, gpu-levels, gpu-subtrees, gpu-subtrees-TxC, gpu-maps, gpu-maps-blocks, gpu-maps-pipe, gpu-maps-tc, gpu-maps-sep or gpu-maps-sept, each maps engine optionally -split, -stream, -lean[f|b], -pipe, -xK, then -T; or gpu- with separator lines: plain, or [bulk][ext|ext2][tc][top], e.g. gpu-bulkext2tctop)"));
    Ok(match engine {
        "gpu" => (SolvePath::Auto, None, None, EngineFlags::default()),
        "gpu-levels" => (SolvePath::Levels, None, None, EngineFlags::default()),
        "gpu-subtrees" => (SolvePath::Subtrees, None, None, EngineFlags::default()),
        e if e.starts_with("gpu-maps") => {
            let rest = &e["gpu-maps".len()..];
            let (kernel, rest) = if let Some(r) = rest.strip_prefix("-blocks") {
                (Some(MapsKernel::Blocks), r)
            } else if let Some(r) = rest.strip_prefix("-pipe") {
                (Some(MapsKernel::Pipelined), r)
            } else if let Some(r) = rest.strip_prefix("-sept") {
                (Some(MapsKernel::SeparatorsTop), r)
            } else if let Some(r) = rest.strip_prefix("-sep") {
                (Some(MapsKernel::Separators), r)
            } else if let Some(r) = rest.strip_prefix("-tc") {
                (Some(MapsKernel::Tensor), r)
            } else {
                (None, rest)
            };
            let (split, rest) = rest.strip_prefix("-split").map_or((false, rest), |r| (true, r));
            let (stream, rest) = rest.strip_prefix("-stream").map_or((false, rest), |r| (true, r));
            let (lean, rest) = if let Some(r) = rest.strip_prefix("-leanf") {
                ((true, false), r)
            } else if let Some(r) = rest.strip_prefix("-leanb") {
                ((false, true), r)
            } else {
                rest.strip_prefix("-lean").map_or(((false, false), rest), |r| ((true, true), r))
            };
            let (pipe, rest) = rest.strip_prefix("-pipe").map_or((false, rest), |r| (true, r));
            let (column_threads, rest) = match rest.strip_prefix("-x") {
                Some(r) => {
                    let end = r.find('-').unwrap_or(r.len());
                    (Some(r[..end].parse().map_err(|_| bad())?), &r[end..])
                }
                None => (None, rest),
            };
            let shape = match rest {
                "" => None,
                r => Some(SubtreeShape { threads: r.strip_prefix('-').ok_or_else(bad)?.parse().map_err(|_| bad())?, cols: 1 }),
            };
            (SolvePath::Maps, shape, kernel, EngineFlags { split, stream, pipe, column_threads, lean, lines: None })
        }
        e if cols_lines(e).is_some() => (SolvePath::Auto, None, None, EngineFlags { lines: cols_lines(e), ..EngineFlags::default() }),
        e => {
            let (t, c) = e.strip_prefix("gpu-subtrees-").and_then(|r| r.split_once('x')).ok_or_else(bad)?;
            let (threads, cols) = (t.parse().map_err(|_| bad())?, c.parse().map_err(|_| bad())?);
            (SolvePath::Subtrees, Some(SubtreeShape { threads, cols }), None, EngineFlags::default())
        }
    })
}

/// Per-launch medians over several profiled solves (same launches each time).
fn median_profile(runs: Vec<Vec<LaunchProfile>>) -> Vec<LaunchProfile> {
    let Some(first) = runs.first() else { return Vec::new() };
    let mut out = first.clone();
    for (i, l) in out.iter_mut().enumerate() {
        let mut t: Vec<f64> = runs.iter().filter_map(|r| r.get(i)).map(|r| r.seconds).collect();
        t.sort_by(f64::total_cmp);
        l.seconds = t[t.len() / 2];
    }
    out
}

/// The right-hand-side engine that factorizes and solves in one call
/// ([`CudaMultifrontal::factor_and_solve`]).
pub const FUSED_ENGINE: &str = "gpu-fused";
/// The right-hand-side engine that factorizes level by level and sweeps forward on a second
/// stream beside it ([`CudaMultifrontal::factor_and_solve_overlap`]); `gpu-overlap-joint`: both
/// transfer maps of a pass in one launch before its forward sweep
/// ([`CudaMultifrontal::set_overlap_split_maps`]`(false)`); `gpu-overlap-flat`: the three streams
/// at the same priority ([`CudaMultifrontal::set_overlap_priorities`]`(false)`).
pub const OVERLAP_ENGINE: &str = "gpu-overlap";
const OVERLAP_JOINT: &str = "gpu-overlap-joint";
const OVERLAP_FLAT: &str = "gpu-overlap-flat";

/// The right-hand-side engine with row-major `b` and `x` ([`CudaMultifrontal::solve_many_rows`]):
/// the default's factorization and path, the data transposed on the host before it is uploaded.
pub const ROWS_ENGINE: &str = "gpu-rows";
/// [`ROWS_ENGINE`] with its bottom pass chosen ([`CudaMultifrontal::set_rows_bottom`]): a thread
/// per column by FMAs (`-reg`) or with the backward product on the tensor cores (`-regtc`), or the
/// staged separator-row kernels (`-staged`), or round 17's implicit 1D rows, two columns per
/// thread where the count is even (`-fused`) or one (`-fused1`).
const ROWS_REG_ENGINE: &str = "gpu-rows-reg";
const ROWS_REGTC_ENGINE: &str = "gpu-rows-regtc";
const ROWS_STAGED_ENGINE: &str = "gpu-rows-staged";
const ROWS_FUSED_ENGINE: &str = "gpu-rows-fused";
const ROWS_FUSED1_ENGINE: &str = "gpu-rows-fused1";

/// Whether `engine` solves row-major, and with which bottom pass (`None`: the default); any
/// row-major engine may end in [`RowsSuffixes`].
fn rows_engine(engine: &str) -> Option<Option<RowsBottom>> {
    match RowsSuffixes::parse(engine).base {
        ROWS_ENGINE => Some(None),
        ROWS_REG_ENGINE => Some(Some(RowsBottom::Columns)),
        ROWS_REGTC_ENGINE => Some(Some(RowsBottom::ColumnsTensor)),
        ROWS_STAGED_ENGINE => Some(Some(RowsBottom::Staged)),
        ROWS_FUSED_ENGINE => Some(Some(RowsBottom::Fused)),
        ROWS_FUSED1_ENGINE => Some(Some(RowsBottom::FusedOne)),
        base => rows_lines(base).map(|_| None),
    }
}

/// The row-major engines with the separator-row kernels' lines chosen
/// ([`CudaMultifrontal::set_sep_lines`]): `gpu-rows-` then a [`lines_suffix`], without the
/// [`RowsSuffixes`] (`base`).
fn rows_lines(base: &str) -> Option<SepLines> {
    base.strip_prefix("gpu-rows-").and_then(lines_suffix)
}

/// A row-major engine's last suffixes, in this order: `-wCxT`, the line walk's item shape (round
/// 21, [`CudaMultifrontal::set_walk_shape`]: C columns per item, T threads per column, e.g.
/// `gpu-rows-w32x4`, `gpu-rows-w64x2`); `-topN`, the walk over the passes of at most N subtrees
/// only (round 29, [`CudaMultifrontal::set_walk_subtrees`]; the default walks those of at most
/// 512, so `-top64` runs the pass of 512 subtrees at 2^20 elements one launch each way); `-nopf`, the plain separator-row kernels both ways
/// ([`CudaMultifrontal::set_sep_prefetch`]`(false)`, the forward prefetch being the default since
/// round 23, and [`CudaMultifrontal::set_sep_back_prefetch`]`(false)`), or `-pf` (round 22's
/// opt-in, kept so that old commands parse), which changes nothing; `-bpf`, the row-major bottom
/// backward pass's prefetch under a register cap (round 25; round 24's on every pass,
/// [`CudaMultifrontal::set_sep_back_prefetch`]`(true)`: the default since round 28, so it changes
/// nothing), or `-nobpf`, that prefetch off alone; `-chain`,
/// pass 1 chained into the bottom forward pass ([`CudaMultifrontal::set_sep_chain`], round 23);
/// `-xs`, the upper passes' contributions split over a column's parts both ways, or `-xsb`,
/// backward only (round 28, [`CudaMultifrontal::set_sep_ext_split`]; both the default since round
/// 28, so `-xs` changes nothing), or `-noxs`, neither; `-ld4`, the tensor-core forward kernels with
/// rows of `C + 4` and conflict-free accumulator accesses (round 29,
/// [`CudaMultifrontal::set_sep_tc_rows4`]); `-p64`, forward 0's chunks of 64 columns pipelined
/// inside a block (round 29, [`CudaMultifrontal::set_sep_pipe64`]); `-p64b`, the backward passes'
/// (backward 0 and the split upper passes, NB ≥ 2) likewise (round 30,
/// [`CudaMultifrontal::set_sep_pipe64_backward`]; after `-p64` where both: `gpu-rows-p64-p64b`); `-zs`, forward 0 without the
/// zeroed Schur rows (round 30, [`CudaMultifrontal::set_sep_trim`]; with `-p64` and `-ld4` the
/// pipelined chunks take rows of `C + 4`; the default since stop 54, so it changes nothing), or
/// `-nozs`, with them (the default before); `-sx`, the separator rows in `x` (round 26, [`CudaMultifrontal::set_sep_in_x`]); `-ip`, the
/// solve in place (round 27, [`CudaMultifrontal::solve_many_rows_in_place`]); `-noadd`, in place without the
/// forward passes below the walk adding their contributions into `x` (stop 55's default,
/// [`CudaMultifrontal::set_sep_bottom_adds`]; `-add` with them, the default; last).
/// Round 28's defaults (64 × 2 walk items, the bottom backward prefetch) are round 27's
/// `gpu-rows-w64x2-bpf`; the default before them is `gpu-rows-w32x2-nobpf`.
/// E.g. `gpu-rows-nopf`, `gpu-rows-nobpf`, `gpu-rows-w64x2-bpf`, `gpu-rows-w64x2-chain`, `gpu-rows-w64x2-bpf-sx`. Parsed once
/// per engine ([`RowsSuffixes::parse`]).
struct RowsSuffixes<'a> {
    /// The engine without them.
    base: &'a str,
    /// `None`: no `-wCxT`, the default's shape.
    shape: Option<WalkShape>,
    /// `-topN`: walk only the passes of at most N subtrees (`None`: the default's 512).
    top: Option<usize>,
    /// The forward prefetch (`false` with `-nopf`).
    prefetch: bool,
    /// The backward prefetch where named: `-bpf` on, `-nobpf` or `-nopf` (without `-bpf`) off, else the default.
    back_prefetch: Option<bool>,
    chain: bool,
    /// The contributions split (forward, backward) where named: `-xs` both, `-xsb` backward only,
    /// `-noxs` neither; else the default's (both since round 28).
    ext_split: Option<(bool, bool)>,
    /// Rows of `C + 4` under the tensor-core forward (`-ld4`).
    tc_rows4: bool,
    /// `-p64`: the forward chunks pipelined.
    pipe64: bool,
    /// `-p64b`: the backward chunks pipelined.
    pipe64_backward: bool,
    /// `-zs`: forward 0 without the zeroed Schur rows, `-nozs` with them; else the default's (trimmed).
    trim: Option<bool>,
    sep_in_x: bool,
    in_place: bool,
    /// `-add` / `-noadd`: the contributions added into `x` in place or not; else the default's (added).
    bottom_adds: Option<bool>,
}

const BOTTOM_ADDS_SUFFIX: &str = "-add";
const NO_BOTTOM_ADDS_SUFFIX: &str = "-noadd";
const IN_PLACE_SUFFIX: &str = "-ip";
const TOP_SUFFIX: &str = "-top";
const SEP_IN_X_SUFFIX: &str = "-sx";
const NO_PREFETCH_SUFFIX: &str = "-nopf";
const PREFETCH_SUFFIX: &str = "-pf";
const BACK_PREFETCH_SUFFIX: &str = "-bpf";
const NO_BACK_PREFETCH_SUFFIX: &str = "-nobpf";
const CHAIN_SUFFIX: &str = "-chain";
const EXT_SPLIT_SUFFIX: &str = "-xs";
const EXT_SPLIT_BACK_SUFFIX: &str = "-xsb";
const NO_EXT_SPLIT_SUFFIX: &str = "-noxs";
const TC_ROWS4_SUFFIX: &str = "-ld4";
const PIPE64_SUFFIX: &str = "-p64";
const PIPE64_BACKWARD_SUFFIX: &str = "-p64b";
const TRIM_SUFFIX: &str = "-zs";
const NO_TRIM_SUFFIX: &str = "-nozs";

impl<'a> RowsSuffixes<'a> {
    fn parse(engine: &'a str) -> RowsSuffixes<'a> {
        let strip = |e: &'a str, suffix: &str| e.strip_suffix(suffix).map_or((e, false), |e| (e, true));
        let (e, no_adds) = strip(engine, NO_BOTTOM_ADDS_SUFFIX);
        let (e, adds) = strip(e, BOTTOM_ADDS_SUFFIX);
        let bottom_adds = if no_adds { Some(false) } else if adds { Some(true) } else { None };
        let (e, in_place) = strip(e, IN_PLACE_SUFFIX);
        let (e, sep_in_x) = strip(e, SEP_IN_X_SUFFIX);
        let (e, no_trim) = strip(e, NO_TRIM_SUFFIX);
        let (e, trim) = strip(e, TRIM_SUFFIX);
        let trim = if no_trim { Some(false) } else if trim { Some(true) } else { None };
        let (e, pipe64_backward) = strip(e, PIPE64_BACKWARD_SUFFIX);
        let (e, pipe64) = strip(e, PIPE64_SUFFIX);
        let (e, tc_rows4) = strip(e, TC_ROWS4_SUFFIX);
        let (e, split_back) = strip(e, EXT_SPLIT_BACK_SUFFIX);
        let (e, no_split) = strip(e, NO_EXT_SPLIT_SUFFIX);
        let (e, split) = strip(e, EXT_SPLIT_SUFFIX);
        let ext_split = if split || split_back { Some((split, true)) } else if no_split { Some((false, false)) } else { None };
        let (e, chain) = strip(e, CHAIN_SUFFIX);
        // `-bpf` before `-pf`, whose suffix it ends with.
        let (e, no_back) = strip(e, NO_BACK_PREFETCH_SUFFIX);
        let (e, back) = strip(e, BACK_PREFETCH_SUFFIX);
        let (e, prefetch) = match e.strip_suffix(NO_PREFETCH_SUFFIX) {
            Some(e) => (e, false),
            None => (e.strip_suffix(PREFETCH_SUFFIX).unwrap_or(e), true),
        };
        let (e, top) = match e.rsplit_once(TOP_SUFFIX) {
            Some((base, n)) if n.parse::<usize>().is_ok() => (base, n.parse().ok()),
            _ => (e, None),
        };
        let walk = e.rsplit_once("-w").and_then(|(base, rest)| {
            let (c, t) = rest.split_once('x')?;
            Some((base, WalkShape { cols: c.parse().ok()?, threads: t.parse().ok()? }))
        });
        let (base, shape) = walk.map_or((e, None), |(base, shape)| (base, Some(shape)));
        let back_prefetch = if back { Some(true) } else if no_back || !prefetch { Some(false) } else { None };
        RowsSuffixes { base, shape, top, prefetch, back_prefetch, chain, ext_split, tc_rows4, pipe64, pipe64_backward, trim, sep_in_x, in_place, bottom_adds }
    }
}

/// The column-major engines with the lines chosen (round 20; else as `gpu`): `gpu-` then a
/// [`lines_suffix`].
fn cols_lines(engine: &str) -> Option<SepLines> {
    engine.strip_prefix("gpu-").and_then(lines_suffix)
}

/// The separator-row kernels' lines an engine names ([`SepLines`]): `plain` (round 12's kernels,
/// [`SepLines::PLAIN`]: the row-major default before round 20), or `bulk` (bulk copies), then `ext`
/// (external contributions staged on every pass) or `ext2` (on passes of fewer than
/// [`TC_FEW_SUBTREES`] subtrees), then `tc` (the forward product on the tensor cores), at least one
/// of them, in that order, then optionally `top` (round 19: the passes near the root in one launch
/// by lines, [`SepLines::top`]; with `bulk`): `bulk`, `ext2`, `bulkext2tc`, `bulkext2tctop`
/// ([`SepLines::WALK`]), ….
fn lines_suffix(rest: &str) -> Option<SepLines> {
    if rest == "plain" {
        return Some(SepLines::PLAIN);
    }
    let (bulk, rest) = rest.strip_prefix("bulk").map_or((false, rest), |r| (true, r));
    let (ext_below, rest) = if let Some(r) = rest.strip_prefix("ext2") {
        (Some(TC_FEW_SUBTREES), r)
    } else {
        rest.strip_prefix("ext").map_or((None, rest), |r| (Some(usize::MAX), r))
    };
    let (tc_forward, rest) = rest.strip_prefix("tc").map_or((false, rest), |r| (true, r));
    let top = match rest {
        "top" => true,
        "" => false,
        _ => return None,
    };
    (bulk || ext_below.is_some() || tc_forward).then_some(SepLines { bulk, ext_below, tc_forward, top })
}

/// Whether `engine` is one of the overlapped factor-and-solve engines.
fn is_overlap(engine: &str) -> bool {
    [OVERLAP_ENGINE, OVERLAP_JOINT, OVERLAP_FLAT].contains(&engine)
}

/// Many right-hand sides at one size, on the GPU and (at a size the host can hold) the CPU.
fn run_rhs(o: &IgaBenchOptions, gpu: Option<(&CudaBackend, f64)>) -> Result<Vec<RhsRow>> {
    let mut rows = Vec::new();
    let p = o.rhs_degree;
    // "gpu" chooses its solve by the number of right-hand sides; the others force one.
    let mut engines: Vec<(&str, usize)> = Vec::new();
    if gpu.is_some() {
        for e in o.rhs_engines.iter().filter(|e| *e != FUSED_ENGINE && rows_engine(e).is_none() && !is_overlap(e)) {
            engine_path(e)?;
        }
        let size = if o.rhs_grid > 0 { o.rhs_grid * o.rhs_grid } else { o.rhs_elements };
        for e in &o.rhs_engines {
            engines.push((e.as_str(), size));
        }
    }
    let cpu_elements = if o.rhs_grid > 0 { 0 } else { o.rhs_elements.min(o.cpu_max).min(1 << 16) };
    if cpu_elements > 0 {
        engines.push(("cpu", cpu_elements));
    }
    // The system and right-hand sides of one size, built once for every engine at that size.
    let mut cached: Option<(usize, System, Vec<f64>)> = None;
    for (engine, n) in engines {
        if cached.as_ref().is_none_or(|c| c.0 != n) {
            drop(cached.take()); // free the previous size's right-hand sides first
            let system = if o.rhs_grid > 0 { system_2d(p, o.rhs_grid)? } else { system_1d(p, n)? };
            let nd = system.sys.ndofs;
            let max_rhs = o.rhs.iter().copied().max().unwrap_or(1);
            let b_all: Vec<f64> = (0..nd * max_rhs).map(|i| ((i as f64 * 0.618_033_988_749_895).fract() - 0.5) * (1.0 + (i / nd) as f64)).collect();
            cached = Some((n, system, b_all));
        }
        let Some((_, System { sys, sym, .. }, b_all)) = cached.as_ref() else { continue };
        let nd = sys.ndofs;
        let mut one = (0.0, 0.0);
        for &nrhs in &o.rhs {
            let b = &b_all[..nd * nrhs];
            let mut setup = None;
            let mut launches = Vec::new();
            let mut timeline = Vec::new();
            let mut walk_levels = Vec::new();
            let mut notes = Vec::new();
            let (factor_s, solve, check) = match (engine, gpu) {
                // Factorization and solve in one call (the forward pass inside the
                // factorization's launches): `solve` times the whole call, `factor_s` is 0.
                (FUSED_ENGINE, Some((be, copy))) => {
                    let bd = be.from_host(b)?;
                    let mut x = be.zeros(nd * nrhs)?;
                    let mut f = CudaMultifrontal::factor_and_solve_new(be, sym.clone(), &sys.matrices, nrhs, &bd, &mut x)?;
                    if !f.fuses_factor_and_forward() {
                        return Err(Error::invalid(format!("{FUSED_ENGINE}: {n} elements of degree {p} have no fused subtrees to fuse the forward pass into")));
                    }
                    let total = gpu_time(be, o.reps, || f.factor_and_solve(be, nrhs, &bd, &mut x))?;
                    launches = median_profile((0..o.reps.max(1)).map(|_| f.factor_and_solve_profile(be, nrhs, &bd, &mut x)).collect::<Result<_>>()?);
                    guarded_gbs(&format!("GPU factorization and solve of {nrhs} right-hand sides"), solve_bytes(&sym, nrhs), &total, copy)?;
                    let xl = be.to_host(&x)?[nd * (nrhs - 1)..].to_vec();
                    (0.0, total, Some(xl))
                }
                // Factorization level by level, maps and forward sweep of each pass on a second
                // stream beside it, then backward: `solve` times the whole call, `factor_s` is 0.
                (e, Some((be, copy))) if is_overlap(e) => {
                    let bd = be.from_host(b)?;
                    let mut x = be.zeros(nd * nrhs)?;
                    let mut f = CudaMultifrontal::factor(be, sym.clone(), &sys.matrices)?;
                    f.set_overlap_split_maps(e != OVERLAP_JOINT);
                    f.set_overlap_priorities(e != OVERLAP_FLAT);
                    f.factor_and_solve_overlap(be, nrhs, &bd, &mut x)?;
                    if !f.overlaps_forward() {
                        return Err(Error::invalid(format!("{e}: {n} elements of degree {p} have no separator-row passes to overlap")));
                    }
                    let total = gpu_time(be, o.reps, || f.factor_and_solve_overlap(be, nrhs, &bd, &mut x))?;
                    timeline = f.factor_and_solve_overlap_timeline(be, nrhs, &bd, &mut x)?;
                    guarded_gbs(&format!("GPU overlapped factorization and solve of {nrhs} right-hand sides"), solve_bytes(&sym, nrhs), &total, copy)?;
                    let xl = be.to_host(&x)?[nd * (nrhs - 1)..].to_vec();
                    (0.0, total, Some(xl))
                }
                // Row-major b and x, the default's path: times the solve alone as the others.
                (e, Some((be, copy))) if rows_engine(e).is_some() => {
                    let mut f = CudaMultifrontal::factor(be, sym.clone(), &sys.matrices)?;
                    if let Some(Some(how)) = rows_engine(e) {
                        f.set_rows_bottom(how);
                    }
                    let suffixes = RowsSuffixes::parse(e);
                    f.set_sep_lines(rows_lines(suffixes.base));
                    f.set_walk_shape(suffixes.shape)?;
                    f.set_walk_subtrees(suffixes.top)?;
                    f.set_sep_prefetch(suffixes.prefetch);
                    f.set_sep_in_x(suffixes.sep_in_x);
                    if let Some(on) = suffixes.bottom_adds {
                        f.set_sep_bottom_adds(on);
                    }
                    f.set_sep_tc_rows4(suffixes.tc_rows4);
                    f.set_sep_pipe64(suffixes.pipe64);
                    f.set_sep_pipe64_backward(suffixes.pipe64_backward);
                    if let Some(on) = suffixes.trim {
                        f.set_sep_trim(on);
                    }
                    if let Some((forward, backward)) = suffixes.ext_split {
                        f.set_sep_ext_split(forward, backward);
                    }
                    if let Some(on) = suffixes.back_prefetch {
                        f.set_sep_back_prefetch(on);
                    }
                    let chain = suffixes.chain;
                    f.set_sep_chain(chain);
                    // Where the shape's item does not fit (2D separators), the passes run one
                    // launch each, as the default's do where its walk does not fit: said, not refused.
                    if nrhs > 1 && f.has_separator_layout() {
                        let walks = f.walks_top(be, nrhs, true);
                        notes.push(match (walks, f.walk_shape()) {
                            (true, s) => format!("the line walk ran ({} columns x {} threads per item, passes of at most {} subtrees)", s.cols, s.threads, f.walk_subtrees()),
                            (false, s) => format!("no line walk of {} columns x {} threads here: the passes near the root ran one launch each", s.cols, s.threads),
                        });
                        if chain {
                            notes.push(if f.chains_forward(be, nrhs, true) { "pass 1 chained into the bottom forward pass".to_string() } else { "pass 1 not chained here (see CudaMultifrontal::chains_forward): one launch each".to_string() });
                        }
                        let ways = match f.sep_ext_split() {
                            (true, true) => "forward and backward",
                            (false, true) => "backward only",
                            (true, false) => "forward only",
                            (false, false) => "",
                        };
                        if !ways.is_empty() {
                            notes.push(format!("the upper passes' contributions split over each column's parts ({ways}; passes with external children)"));
                        }
                        if suffixes.tc_rows4 {
                            notes.push("the tensor-core forward passes with rows of C + 4 (mf_mapssbtp*l4_forward where the default runs mf_mapssbtp*_forward)".to_string());
                        }
                        if suffixes.pipe64 {
                            notes.push("forward 0's chunks pipelined: 64 columns double-buffered a block (mf_mapssbtp64_forward where the launch rows name it)".to_string());
                        }
                        if suffixes.pipe64_backward {
                            notes.push("the backward chunks pipelined: 64 columns double-buffered a block (mf_mapssbp064_backward_* and mf_mapssbxs64_backward_* where the launch rows name them)".to_string());
                        }
                        if !f.sep_trim() {
                            notes.push("forward 0 with the zeroed Schur rows (round 30's trim off: mf_mapssbtp*_forward where the default runs mf_mapssbtp*z_forward)".to_string());
                        }
                        if suffixes.sep_in_x {
                            notes.push("the separator rows in x (no sep buffer; no owned-row stores in the bottom backward pass)".to_string());
                        }
                        if suffixes.in_place {
                            notes.push(format!(
                                "solved in place (b refilled before each timed solve, outside the timed region): {}",
                                if f.in_place_runs() { "x overwrote b in the launches" } else { "not in place here (a scratch x copied into b)" }
                            ));
                        }
                        if suffixes.in_place {
                            notes.push(if f.bottom_adds_run(be)? {
                                "the forward passes below the walk added their contributions into x (mf_mapssbtpza_forward; none read from the buffer)".to_string()
                            } else {
                                "no adds into x here (off, or not in place)".to_string()
                            });
                        }
                    } else if nrhs > 1 {
                        notes.push("no separator layout here: no line walk and no chain, whatever the engine's suffixes".to_string());
                    }
                    if [ROWS_REG_ENGINE, ROWS_REGTC_ENGINE, ROWS_FUSED_ENGINE, ROWS_FUSED1_ENGINE].contains(&e) && !f.rows_bottom_runs() {
                        return Err(Error::invalid(format!("{e}: the bottom pass of {n} elements of degree {p} cannot run that row-major bottom kernel")));
                    }
                    let factor = gpu_time(be, o.reps, || f.refactor(be))?;
                    let mut bt = vec![0.0; nd * nrhs];
                    for (i, v) in b.iter().enumerate() {
                        bt[(i % nd) * nrhs + i / nd] = *v;
                    }
                    let bd = be.from_host(&bt)?;
                    let mut x = be.zeros(nd * nrhs)?;
                    let solve = if suffixes.in_place {
                        gpu_time_refilled(be, o.reps, &bd, &mut x, |bx| f.solve_many_rows_in_place(be, nrhs, bx))?
                    } else {
                        gpu_time(be, o.reps, || f.solve_many_rows(be, nrhs, &bd, &mut x))?
                    };
                    if f.has_fresh_maps() {
                        let with = gpu_time(be, o.reps, || f.refactor(be).and_then(|_| f.prepare_maps(be)))?;
                        setup = Some((with.median - factor.median).max(0.0));
                        f.solve_many_rows(be, nrhs, &bd, &mut x)?;
                    }
                    let mut profile = || {
                        if suffixes.in_place {
                            be.copy(&bd, &mut x)?;
                            f.solve_rows_in_place_profile(be, nrhs, &mut x)
                        } else {
                            f.solve_rows_profile(be, nrhs, &bd, &mut x)
                        }
                    };
                    launches = median_profile((0..o.reps.max(1)).map(|_| profile()).collect::<Result<_>>()?);
                    if nrhs > 1 && f.walks_top(be, nrhs, true) {
                        f.set_walk_trace(true);
                        f.solve_many_rows(be, nrhs, &bd, &mut x)?;
                        walk_levels = f.walk_levels(be)?;
                        f.set_walk_trace(false);
                    }
                    // The checked x is the in-place solve's own.
                    if suffixes.in_place {
                        be.copy(&bd, &mut x)?;
                        f.solve_many_rows_in_place(be, nrhs, &mut x)?;
                    }
                    guarded_gbs(&format!("GPU row-major solve of {nrhs} right-hand sides"), solve_bytes(&sym, nrhs), &solve, copy)?;
                    let xh = be.to_host(&x)?;
                    let xl = (0..nd).map(|r| xh[r * nrhs + nrhs - 1]).collect();
                    (factor.median, solve, Some(xl))
                }
                (e, Some((be, copy))) if e.starts_with("gpu") => {
                    let (path, shape, kernel, flags) = engine_path(e)?;
                    let mut f = CudaMultifrontal::factor(be, sym.clone(), &sys.matrices)?;
                    f.set_solve_path(path);
                    f.set_subtree_shape(shape)?;
                    f.set_maps_kernel(kernel);
                    f.set_split_columns(flags.split);
                    f.set_stream_bottom(flags.stream);
                    f.set_pipe_separators(flags.pipe.then_some(TC_FEW_SUBTREES));
                    f.set_column_threads(flags.column_threads.unwrap_or(DEFAULT_COLUMN_THREADS))?;
                    f.set_sep_lines(flags.lines);
                    if flags.stream && !f.streams_bottom() {
                        return Err(Error::invalid(format!("{e}: the bottom pass of {n} elements of degree {p} cannot run register-streamed")));
                    }
                    f.set_lean_forward(flags.lean.0);
                    f.set_lean_backward(flags.lean.1);
                    if (flags.lean.0 && !f.leans_forward()) || (flags.lean.1 && !f.leans_backward()) {
                        return Err(Error::invalid(format!("{e}: the bottom passes of {n} elements of degree {p} cannot run by warps")));
                    }
                    let factor = gpu_time(be, o.reps, || f.refactor(be))?;
                    let bd = be.from_host(b)?;
                    let mut x = be.zeros(nd * nrhs)?;
                    let solve = gpu_time(be, o.reps, || f.solve_many(be, nrhs, &bd, &mut x))?;
                    if path == SolvePath::Maps || (path == SolvePath::Auto && f.has_fresh_maps()) {
                        let with = gpu_time(be, o.reps, || f.refactor(be).and_then(|_| f.prepare_maps(be)))?;
                        setup = Some((with.median - factor.median).max(0.0));
                        f.solve_many(be, nrhs, &bd, &mut x)?;
                    }
                    launches = median_profile((0..o.reps.max(1)).map(|_| f.solve_profile(be, nrhs, &bd, &mut x)).collect::<Result<_>>()?);
                    if nrhs > 1 && f.walks_top(be, nrhs, false) {
                        f.set_walk_trace(true);
                        f.solve_many(be, nrhs, &bd, &mut x)?;
                        walk_levels = f.walk_levels(be)?;
                        f.set_walk_trace(false);
                    }
                    guarded_gbs(&format!("GPU solve of {nrhs} right-hand sides"), solve_bytes(&sym, nrhs), &solve, copy)?;
                    // Check the last right-hand side against the CPU.
                    let xl = be.to_host(&x)?[nd * (nrhs - 1)..].to_vec();
                    (factor.median, solve, Some(xl))
                }
                _ => {
                    let mut f = CpuMultifrontal::factor(sym.clone(), &sys.matrices)?;
                    let factor = cpu_time(o.reps, true, || f.refactor(&sys.matrices))?;
                    let mut x = vec![0.0; nd * nrhs];
                    let solve = cpu_time(o.reps, true, || f.solve_into(nrhs, b, &mut x))?;
                    (factor.median, solve, None)
                }
            };
            if let Some(xl) = check {
                let berr = backward_error_for(&sys, &xl, &b[nd * (nrhs - 1)..]);
                if !(berr <= BACKWARD_ERROR) {
                    return Err(Error::invalid(format!("GPU solve of {nrhs} right-hand sides: backward error {berr:.3e} of the last one")));
                }
            }
            if nrhs == 1 {
                one = (factor_s, solve.median);
            }
            let cost_over_one = if one.0 + one.1 > 0.0 { (factor_s + solve.median) / (one.0 + one.1) } else { f64::NAN };
            // Each row as soon as it is measured (the report comes at the end): a run cut off by a
            // time limit still shows what it measured.
            eprintln!("bench-iga rhs: {engine} nrhs {nrhs}: factor {factor_s:.4e} s, solve {:.4e} s [{:.4e}..{:.4e}]", solve.median, solve.min, solve.max);
            rows.push(RhsRow {
                engine: engine.to_string(),
                elements: n,
                degree: p,
                nrhs,
                factor_s,
                solve_gbs: solve_bytes(&sym, nrhs) / solve.median * 1e-9,
                solve,
                cost_over_one,
                cost_over_best_one: f64::NAN,
                maps_setup_s: setup,
                cost_with_setup_over_best_one: None,
                copy_floor_s: gpu.map(|(_, copy)| 3.0 * 8.0 * (nd * nrhs) as f64 / (copy * 1e9)),
                floor_cost_over_best_one: f64::NAN,
                launches,
                timeline,
                walk_levels,
                notes,
            });
        }
    }
    let best_gpu_one = rows.iter().filter(|r| r.engine.starts_with("gpu") && r.nrhs == 1).map(|r| r.factor_s + r.solve.median).fold(f64::INFINITY, f64::min);
    for r in rows.iter_mut().filter(|r| r.engine.starts_with("gpu")) {
        r.cost_over_best_one = (r.factor_s + r.solve.median) / best_gpu_one;
        r.cost_with_setup_over_best_one = r.maps_setup_s.map(|m| (r.factor_s + m + r.solve.median) / best_gpu_one);
        r.floor_cost_over_best_one = r.copy_floor_s.map_or(f64::NAN, |f| (r.factor_s + f) / best_gpu_one);
    }
    Ok(rows)
}

/// Fits `t = a + b log₂ N` to the GPU factorization times of one degree, from the smallest size up
/// to the largest for which every point stays within 20 % of the model.
fn fit_log_model(rows: &[SizeRow], degree: usize) -> Option<Fit> {
    let pts: Vec<(usize, f64)> = rows.iter().filter(|r| r.dim == 1 && r.degree == degree).filter_map(|r| Some((r.elements, r.gpu.as_ref()?.factor.median))).collect();
    let mut best = None;
    for end in 3..=pts.len() {
        let (xs, ys): (Vec<f64>, Vec<f64>) = pts[..end].iter().map(|&(n, t)| ((n as f64).log2(), t)).unzip();
        let k = xs.len() as f64;
        let (mx, my) = (xs.iter().sum::<f64>() / k, ys.iter().sum::<f64>() / k);
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        let b = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum::<f64>() / sxx;
        let a = my - b * mx;
        let worst = xs.iter().zip(&ys).map(|(x, y)| ((a + b * x) - y).abs() / y).fold(0.0, f64::max);
        if worst <= 0.2 {
            best = Some(Fit { degree, a_s: a, b_s: b, from: pts[0].0, to: pts[end - 1].0, max_relative_residual: worst });
        } else {
            break;
        }
    }
    best
}

/// Runs the sweep; prints a line per measurement through `log`.
pub fn run(o: &IgaBenchOptions, gpu: Option<&CudaBackend>, mut log: impl FnMut(&str)) -> Result<IgaBenchReport> {
    let copy = match gpu {
        Some(be) => Some(crate::backend::cuda::bench::bandwidth(be)?.copy_gbs),
        None => None,
    };
    let dev = gpu.zip(copy);
    let mut rows = Vec::new();
    let mut sweep = |dim: usize, degrees: &[usize], sizes: &[usize], log: &mut dyn FnMut(&str)| -> Result<()> {
        for &p in degrees {
            for &n in sizes {
                let elements = if dim == 1 { n } else { n * n };
                if !o.full_degrees.contains(&p) && elements > o.partial_max {
                    continue;
                }
                let r = run_size(dim, p, n, o, dev)?;
                let fmt = |e: &Option<EngineTimes>| e.as_ref().map_or("-".to_string(), |t| format!("{:.3e}/{:.3e}", t.factor.median, t.solve.median));
                log(&format!(
                    "{dim}D p={p} N={:>9} dofs={:>9} levels={:>3} front={:>5}  cpu {:>21}  gpu {:>21}  lu {:>21}  gpu {:>6} GB/s {:>7} GF/s  x{:>6}  diff {:.1e} berr {:.1e}",
                    r.elements,
                    r.dofs,
                    r.levels,
                    r.max_front,
                    fmt(&r.cpu),
                    fmt(&r.gpu),
                    fmt(&r.lu),
                    r.gpu.as_ref().map_or("-".into(), |g| format!("{:.0}", g.factor_gbs)),
                    r.gpu.as_ref().map_or("-".into(), |g| format!("{:.1}", g.factor_gflops)),
                    r.gpu_speedup_over_lu.map_or("-".into(), |s| format!("{s:.0}")),
                    r.max_relative_difference,
                    r.max_backward_error
                ));
                if r.gpu_variants.len() > 1 {
                    for v in &r.gpu_variants {
                        log(&format!(
                            "    gpu {:<10} factor {:.3e} s [{:.3e}..{:.3e}]  solve {:.3e} s [{:.3e}..{:.3e}]  launches {}/{}",
                            v.engine, v.times.factor.median, v.times.factor.min, v.times.factor.max, v.times.solve.median, v.times.solve.min, v.times.solve.max, v.launches.0, v.launches.1
                        ));
                    }
                }
                rows.push(r);
            }
        }
        Ok(())
    };
    if o.sweep_1d {
        sweep(1, &o.degrees, &o.sizes_1d, &mut log)?;
    }
    if o.sweep_2d {
        sweep(2, &o.degrees_2d, &o.sizes_2d, &mut log)?;
    }
    let rhs = if o.sweep_rhs && !o.rhs.is_empty() { run_rhs(o, dev)? } else { Vec::new() };
    for r in &rhs {
        let maps = match (r.maps_setup_s, r.cost_with_setup_over_best_one) {
            (Some(m), Some(c)) => format!(", maps setup {m:.3e} s (with it over the best GPU one = {c:.2})"),
            _ => String::new(),
        };
        let what = match r.engine.as_str() {
            FUSED_ENGINE => "factor and solve fused",
            e if is_overlap(e) => "factor and solve overlapped",
            _ => "solve",
        };
        log(&format!(
            "{} N={} p={} nrhs={:>5}: factor {:.3e} s, {what} {:.3e} s [{:.3e}..{:.3e}] ({:.2} us per rhs, {:.0} GB/s), (factor + solve)/(factor + 1 solve) = {:.2}, over the best GPU one = {:.2}{maps}",
            r.engine, r.elements, r.degree, r.nrhs, r.factor_s, r.solve.median, r.solve.min, r.solve.max, r.solve.median / r.nrhs as f64 * 1e6, r.solve_gbs, r.cost_over_one, r.cost_over_best_one
        ));
        if let (Some(floor), Some(copy)) = (r.copy_floor_s, copy) {
            if r.nrhs > 1 && !r.launches.is_empty() {
                log(&format!("  three-pass floor of b twice + x once at {copy:.0} GB/s: {floor:.3e} s ((factor + floor)/best one = {:.2}); the solve reaches {:.0} % of it", r.floor_cost_over_best_one, 100.0 * floor / r.solve.median));
            }
        }
        for note in &r.notes {
            log(&format!("  note: {note}"));
        }
        if r.nrhs > 1 {
            for l in &r.launches {
                log(&format!("  {}", launch_line(l, copy)));
            }
        }
        for l in &r.walk_levels {
            let dir = if l.backward { "backward" } else { "forward" };
            log(&format!(
                "    walk {dir:<8} {} {:>5} items: {:>7.1} .. {:>7.1} us ({:>6.1} us), per item wait {:>5.1} us, work {:>5.1} us",
                l.pass, l.items, l.start_s * 1e6, l.end_s * 1e6, (l.end_s - l.start_s) * 1e6, l.wait_s * 1e6, l.work_s * 1e6
            ));
        }
        for t in &r.timeline {
            log(&format!("  stream {} {:<24} {:>8.3} .. {:>8.3} ms ({:.3} ms)", t.stream, t.label, t.start_ms, t.end_ms, t.end_ms - t.start_ms));
        }
    }
    // The headline of issue 15 at every count both layouts ran: the default (column-major) and
    // each row-major engine, each (factor + solve) over the best GPU factor + one column.
    for r in rhs.iter().filter(|r| r.engine == "gpu" && r.nrhs > 1) {
        let rows_major: Vec<String> = rhs
            .iter()
            .filter(|q| rows_engine(&q.engine).is_some() && q.nrhs == r.nrhs)
            .map(|q| format!(", row-major {} {:.2} (solve {:.3} ms)", q.engine, q.cost_over_best_one, q.solve.median * 1e3))
            .collect();
        if !rows_major.is_empty() {
            log(&format!(
                "headline nrhs={}: (factor + solve)/(best GPU factor + one) column-major gpu {:.2} (solve {:.3} ms){}",
                r.nrhs,
                r.cost_over_best_one,
                r.solve.median * 1e3,
                rows_major.concat()
            ));
        }
    }
    let fits = o.degrees.iter().filter_map(|&p| fit_log_model(&rows, p)).collect();
    Ok(IgaBenchReport { device: gpu.map(|be| be.device().name.clone()), copy_gbs: copy, cpu_threads: rayon::current_num_threads(), rows, rhs, fits })
}

/// One launch of a profile: time, bytes, GB/s (only where below the copy bandwidth: a launch whose
/// data were still in L2 is not a bandwidth figure), occupancy.
fn launch_line(l: &LaunchProfile, copy: Option<f64>) -> String {
    let gbs = l.bytes / l.seconds * 1e-9;
    let rate = match copy {
        Some(c) if gbs <= c => format!("{gbs:>6.0} GB/s ({:>3.0} % of copy)", 100.0 * gbs / c),
        _ => "above the copy bandwidth (L2-resident)".to_string(),
    };
    format!(
        "{:<11} {:>6} subtrees  {:<20} grid {:>6} x {:>3}, {:>6} B smem, {:>3} regs, {:>2} blocks/SM: {:.3e} s, {:.3e} B, {rate}",
        l.label, l.subtrees, l.kernel, l.grid, l.threads, l.smem_bytes, l.registers, l.blocks_per_sm, l.seconds, l.bytes
    )
}

/// Log–log PNG of 1D factorization times against N: GPU per degree, the fitted models, CPU and
/// faer LU at one degree.
pub fn plot(path: &std::path::Path, r: &IgaBenchReport, cpu_degree: usize) -> Result<()> {
    let mut series: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    let degrees: std::collections::BTreeSet<usize> = r.rows.iter().filter(|x| x.dim == 1).map(|x| x.degree).collect();
    let pick = |p: usize, f: &dyn Fn(&SizeRow) -> Option<f64>| -> (Vec<f64>, Vec<f64>) {
        r.rows.iter().filter(|x| x.dim == 1 && x.degree == p).filter_map(|x| Some((x.elements as f64, f(x)?))).unzip()
    };
    for &p in &degrees {
        let (x, y) = pick(p, &|row| Some(row.gpu.as_ref()?.factor.median));
        if !x.is_empty() {
            series.push((format!("GPU multifrontal p={p}"), x, y));
        }
    }
    for fit in &r.fits {
        let xs: Vec<f64> = r.rows.iter().filter(|x| x.dim == 1 && x.degree == fit.degree && x.elements >= fit.from && x.elements <= fit.to).map(|x| x.elements as f64).collect();
        let ys = xs.iter().map(|n| fit.a_s + fit.b_s * n.log2()).collect();
        series.push((format!("model a + b log2 N, p={}", fit.degree), xs, ys));
    }
    // CPU and faer at one degree (the requested one when it was run) to keep the plot readable.
    let cpu_degree = if degrees.contains(&cpu_degree) { cpu_degree } else { degrees.iter().next().copied().unwrap_or(cpu_degree) };
    let (x, y) = pick(cpu_degree, &|row| Some(row.cpu.as_ref()?.factor.median));
    series.push((format!("CPU multifrontal p={cpu_degree}"), x, y));
    let (x, y) = pick(cpu_degree, &|row| Some(row.lu.as_ref()?.factor.median));
    series.push((format!("faer sparse LU p={cpu_degree}"), x, y));
    let refs: Vec<(&str, &[f64], &[f64])> = series.iter().filter(|s| !s.1.is_empty()).map(|(l, x, y)| (l.as_str(), x.as_slice(), y.as_slice())).collect();
    io::plot_lines(path, "1D multifrontal factorization time", "elements N", "seconds", &refs, true, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row-major engine's suffixes parse in their order, round 26's `-sx` last, with the others.
    #[test]
    fn row_major_suffixes_parse_in_order() {
        let s = RowsSuffixes::parse("gpu-rows-w64x2-bpf-sx");
        assert_eq!((s.base, s.shape, s.prefetch, s.back_prefetch, s.chain, s.sep_in_x), (ROWS_ENGINE, Some(WalkShape { cols: 64, threads: 2 }), true, Some(true), false, true));
        let s = RowsSuffixes::parse("gpu-rows-sx");
        assert_eq!((s.base, s.shape, s.back_prefetch, s.sep_in_x), (ROWS_ENGINE, None, None, true));
        let s = RowsSuffixes::parse("gpu-rows-nopf-chain");
        assert_eq!((s.base, s.prefetch, s.back_prefetch, s.chain, s.sep_in_x), (ROWS_ENGINE, false, Some(false), true, false));
        assert_eq!(rows_engine("gpu-rows-bulkext2tctop-sx"), Some(None));
        let s = RowsSuffixes::parse("gpu-rows-w32x2-nobpf");
        assert_eq!((s.base, s.shape, s.prefetch, s.back_prefetch), (ROWS_ENGINE, Some(WalkShape { cols: 32, threads: 2 }), true, Some(false)));
        let s = RowsSuffixes::parse("gpu-rows-w64x2-bpf-sx-ip");
        assert_eq!((s.base, s.shape, s.back_prefetch, s.sep_in_x, s.in_place), (ROWS_ENGINE, Some(WalkShape { cols: 64, threads: 2 }), Some(true), true, true));
        let s = RowsSuffixes::parse("gpu-rows-ip");
        assert_eq!((s.base, s.sep_in_x, s.in_place, s.ext_split), (ROWS_ENGINE, false, true, None));
        let s = RowsSuffixes::parse("gpu-rows-noxs-sx");
        assert_eq!((s.base, s.sep_in_x, s.ext_split), (ROWS_ENGINE, true, Some((false, false))));
        let s = RowsSuffixes::parse("gpu-rows-w64x2-bpf-xs-sx-ip");
        assert_eq!((s.base, s.shape, s.back_prefetch, s.ext_split, s.sep_in_x, s.in_place), (ROWS_ENGINE, Some(WalkShape { cols: 64, threads: 2 }), Some(true), Some((true, true)), true, true));
        let s = RowsSuffixes::parse("gpu-rows-xsb");
        assert_eq!((s.base, s.shape, s.ext_split, s.chain), (ROWS_ENGINE, None, Some((false, true)), false));
        let s = RowsSuffixes::parse("gpu-rows-w64x2-top64-bpf-sx");
        assert_eq!((s.base, s.shape, s.top, s.back_prefetch, s.sep_in_x), (ROWS_ENGINE, Some(WalkShape { cols: 64, threads: 2 }), Some(64), Some(true), true));
        let s = RowsSuffixes::parse("gpu-rows-top8");
        assert_eq!((s.base, s.shape, s.top), (ROWS_ENGINE, None, Some(8)));
        let s = RowsSuffixes::parse("gpu-rows-bulkext2tctop");
        assert_eq!((s.base, s.top), ("gpu-rows-bulkext2tctop", None));
        let s = RowsSuffixes::parse("gpu-rows-chain-xs");
        assert_eq!((s.base, s.ext_split, s.chain), (ROWS_ENGINE, Some((true, true)), true));
        let s = RowsSuffixes::parse("gpu-rows-ld4");
        assert_eq!((s.base, s.ext_split, s.tc_rows4, s.sep_in_x), (ROWS_ENGINE, None, true, false));
        let s = RowsSuffixes::parse("gpu-rows-w64x2-noxs-ld4-sx-ip");
        assert_eq!((s.base, s.shape, s.ext_split, s.tc_rows4, s.sep_in_x, s.in_place), (ROWS_ENGINE, Some(WalkShape { cols: 64, threads: 2 }), Some((false, false)), true, true, true));
        assert!(!RowsSuffixes::parse("gpu-rows-xs-sx").tc_rows4);
        let s = RowsSuffixes::parse("gpu-rows-p64");
        assert_eq!((s.base, s.ext_split, s.pipe64, s.sep_in_x), (ROWS_ENGINE, None, true, false));
        let s = RowsSuffixes::parse("gpu-rows-noxs-p64-sx-ip");
        assert_eq!((s.base, s.ext_split, s.pipe64, s.sep_in_x, s.in_place), (ROWS_ENGINE, Some((false, false)), true, true, true));
        assert!(!RowsSuffixes::parse("gpu-rows-xs").pipe64);
        let s = RowsSuffixes::parse("gpu-rows-top64-ld4-p64-p64b-zs-sx");
        assert_eq!((s.base, s.top, s.tc_rows4, s.pipe64, s.pipe64_backward, s.trim, s.sep_in_x), (ROWS_ENGINE, Some(64), true, true, true, Some(true), true));
        let s = RowsSuffixes::parse("gpu-rows-ld4-p64-zs");
        assert_eq!((s.base, s.tc_rows4, s.pipe64, s.trim, s.sep_in_x), (ROWS_ENGINE, true, true, Some(true), false));
        let s = RowsSuffixes::parse("gpu-rows-zs-sx-ip");
        assert_eq!((s.base, s.tc_rows4, s.pipe64, s.trim, s.sep_in_x, s.in_place), (ROWS_ENGINE, false, false, Some(true), true, true));
        assert_eq!(RowsSuffixes::parse("gpu-rows-p64").trim, None);
        let s = RowsSuffixes::parse("gpu-rows-ld4-nozs-sx");
        assert_eq!((s.base, s.tc_rows4, s.trim, s.sep_in_x), (ROWS_ENGINE, true, Some(false), true));
        assert_eq!(RowsSuffixes::parse("gpu-rows-nozs").trim, Some(false));
        let s = RowsSuffixes::parse("gpu-rows-top64-ld4-p64-sx");
        assert_eq!((s.base, s.top, s.tc_rows4, s.pipe64, s.sep_in_x), (ROWS_ENGINE, Some(64), true, true, true));
        let s = RowsSuffixes::parse("gpu-rows-p64b");
        assert_eq!((s.base, s.pipe64, s.pipe64_backward), (ROWS_ENGINE, false, true));
        let s = RowsSuffixes::parse("gpu-rows-p64-p64b");
        assert_eq!((s.base, s.pipe64, s.pipe64_backward), (ROWS_ENGINE, true, true));
        let s = RowsSuffixes::parse("gpu-rows-noxs-p64-p64b-sx-ip");
        assert_eq!((s.base, s.ext_split, s.pipe64, s.pipe64_backward, s.sep_in_x, s.in_place), (ROWS_ENGINE, Some((false, false)), true, true, true, true));
        assert!(!RowsSuffixes::parse("gpu-rows-p64").pipe64_backward);
        let s = RowsSuffixes::parse("gpu-rows-sx-ip-add");
        assert_eq!((s.base, s.sep_in_x, s.in_place, s.bottom_adds), (ROWS_ENGINE, true, true, Some(true)));
        let s = RowsSuffixes::parse("gpu-rows-ip-noadd");
        assert_eq!((s.base, s.sep_in_x, s.in_place, s.bottom_adds), (ROWS_ENGINE, false, true, Some(false)));
        assert_eq!(RowsSuffixes::parse("gpu-rows-sx-ip").bottom_adds, None);
    }
}
