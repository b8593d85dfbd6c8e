//! `galerkin bench --hyperelastic`: a clamped cube of P_k tetrahedra under a dead body force, the
//! chosen law (the Usyk/Guccione fibre law by default, helical fibres), one load step of inexact
//! Newton (Eisenstat–Walker forcing, see [`super::Forcing`]) with CG + block Jacobi; every backend
//! solves the same problem with the same settings. Per size and backend (one CPU thread — the seed's one core —, all CPU
//! threads, the GPU): the assembly of residual and Jacobian and of the residual alone (median of
//! repeated runs at the converged state, synchronised clock), one linear solve, the whole Newton
//! run (all load steps, data resident) and the time per Newton step. On the GPU, the Jacobian
//! assembly is set against its bytes-moved floor: what the kernel must read (cell vertices and
//! nodes, coordinates, frames, CSR positions, row pointers, the state) and write (the CSR values
//! once, the residual), at the copy bandwidth measured in the same run.
use super::cuda::{shape, shared_bytes, tc_applies, tc_default, tc_fuse, tc_shared_bytes, tc_st_y, tc_wide, TC_ST_Y, CellOrder, GpuHyper, Scheme, Shape, DEFAULT_ORDER, TC_COLS, TC_FUSE, TC_LAW_WIDE, TC_LEAN, TC_PATCH_TURNS, TC_PREFETCH, TC_TRIM};
use super::upper::TC_UPPER;
use super::blocks::TC_BLOCKS;
use super::element::HyperElement;
use super::newton::HyperSystem;
use super::run::{cpu_multigrid, cpu_system, prepare_text, solve_on, Laps, Prepared};
use crate::backend::cuda::bench::EventClock;
use crate::backend::cuda::{CudaBackend, DeviceCsr};
use crate::backend::{Backend, Cpu, LinearOperator};
use super::multigrid::MgSystem;
use crate::bench::timing::{guarded_gbs, measure, Clock, HostClock, Timing};
use crate::solver::precond::{BlockJacobi, SolverBackend};
use crate::{Error, Result};
use serde::Serialize;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct HyperBenchConfig {
    pub dofs: Vec<usize>,
    pub degrees: Vec<usize>,
    /// `svk`, `neo-hookean` or `usyk`.
    pub law: String,
    /// All-threads CPU rows up to this many unknowns.
    pub cpu_max_dofs: usize,
    /// One-thread CPU rows up to this many unknowns.
    pub cpu1_max_dofs: usize,
    pub runs: usize,
    /// The separate linear solve at the converged state up to this many unknowns (above, the
    /// Newton run's own solves are the measurement: at 10⁷ one more solve is a minute).
    pub solve_max_dofs: usize,
    /// The Newton systems' preconditioners, one row each: `multigrid` (geometric, the default)
    /// and/or `block-jacobi`.
    pub preconditioners: Vec<String>,
    /// Extra `[loads]` keys of the problem, one `key = value` each (`--hyper-loads`): the load
    /// path of the tenth pass (`first_halvings`, `predictor`, …) for the sizes that need it.
    pub loads: Vec<String>,
    /// `physics.quadrature` of the problem (`full`, `stiffness`); None: the default for the
    /// Newton rows, both rules for the kernel sweep.
    pub quadrature: Option<String>,
    /// Stop each row after its setup (`--hyper-setup-only`): the phases before the first Newton
    /// iteration, measured without the run.
    pub setup_only: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct HyperRow {
    pub backend: String,
    pub law: String,
    /// The Newton systems' preconditioner (`multigrid`, `block-jacobi`).
    pub preconditioner: String,
    /// Multigrid: unknowns per level, the finest first.
    pub levels: Vec<usize>,
    pub degree: usize,
    /// Volume quadrature points per cell (`physics.quadrature`).
    pub quadrature_points: usize,
    pub dofs: usize,
    pub cells: usize,
    pub nnz: usize,
    /// Mesh, space, pattern, positions, upload (s).
    pub setup_s: f64,
    /// `setup_s` by phase: [`Prepared::phases`], then `system` (the backend's assembly: its
    /// pattern and slots, uploads, kernel) and `multigrid` (the coarse levels).
    pub setup_phases: Vec<(String, f64)>,
    /// GPU: the Jacobian's allocation timed apart from the set-up, the pattern's zeros uploaded and
    /// zeroed on the device (s; [`matrix_allocation_both_ways`]).
    pub jacobian_allocation: Option<(f64, f64)>,
    /// Residual and Jacobian.
    pub assembly: Option<Timing>,
    /// Residual alone.
    pub residual: Option<Timing>,
    /// One CG + block-Jacobi solve of the first Newton system (rtol 1e-8).
    pub linear_solve_s: f64,
    pub linear_iterations: usize,
    /// Newton iterations of the whole run (abandoned attempts included).
    pub newton_iterations: usize,
    pub total_linear_iterations: usize,
    /// Converged load steps, and the attempts given up before them (each halved the increment).
    pub load_steps: usize,
    pub cutbacks: usize,
    /// The whole Newton run (one load step).
    pub whole_run_s: f64,
    pub per_newton_step_s: f64,
    /// GPU: the Jacobian assembly's bytes floor, GB/s at the median and its ratio to the copy
    /// bandwidth (1 = at the floor), and time / floor time.
    pub floor_bytes: f64,
    pub gb_per_s: f64,
    pub copy_gb_per_s: f64,
    pub times_floor: f64,
    /// ‖R‖ at each Newton iterate and the forcing η of each linear solve (the last load step).
    pub residuals: Vec<f64>,
    pub forcing: Vec<f64>,
    /// GPU: the kernel scheme ([`Scheme`], `GALERKIN_HYPER_SCHEME` overrides the default).
    pub scheme: String,
    pub skipped: Option<String>,
}

fn problem(dofs: usize, degree: usize, law: &str, precond: &str, quadrature: Option<&str>, loads: &[String]) -> Result<String> {
    if !matches!(precond, "multigrid" | "block-jacobi") {
        return Err(Error::config("--hyper-precond", format!("unknown preconditioner `{precond}` (multigrid, block-jacobi)")));
    }
    let n = ((((dofs as f64) / 3.0).cbrt() - 1.0) / degree as f64).round().max(1.0) as usize;
    let params = match law {
        "usyk" => "C = 0.876\nbf = 18.48\nbt = 3.58\nbfs = 1.627\nkappa = 50.0\nfibre = [\"1\", \"0.5 * z - 0.25\", \"0.2\"]",
        "svk" | "neo-hookean" => "E = 10.0\nnu = 0.3",
        other => return Err(Error::config("--law", format!("unknown law `{other}` (svk, neo-hookean, usyk)"))),
    };
    let load = if law == "usyk" { 0.2 } else { 0.3 };
    let quad = quadrature.map(|q| format!("quadrature = \"{q}\"\n")).unwrap_or_default();
    Ok(format!(
        "[mesh]\ngenerator = \"box\"\nn = [{n}, {n}, {n}]\ncell = \"tetrahedron\"\n[space]\ndegree = {degree}\n[physics]\nkind = \"hyperelasticity\"\nlaw = \"{law}\"\n{quad}{params}\n\
         body_force = [0.0, 0.0, -{load}]\n[[bc]]\ntype = \"dirichlet\"\nboundary = \"xmin\"\nvalue = [0, 0, 0]\n[loads]\nsteps = 1\n{}\
         [newton]\nrtol = 1e-8\nforcing = \"eisenstat-walker\"\n[solver]\nmethod = \"cg\"\npreconditioner = \"{precond}\"\nrtol = 1e-8\nmax_iter = 100000\n",
        loads.iter().map(|kv| format!("{kv}\n")).collect::<String>()
    ))
}

/// The Jacobian's allocation with the pattern's zero values uploaded (`from_host_compressible`,
/// `GpuHyper::new_matrix` before stop 62) and zeroed on the device (`pattern_from_host_compressible`,
/// since), each synchronised: (uploaded, zeroed) seconds, apart from the set-up's phases.
fn matrix_allocation_both_ways(be: &CudaBackend, pattern: &crate::linalg::CsrMatrix) -> Result<(f64, f64)> {
    let time = |way: fn(&CudaBackend, &crate::linalg::CsrMatrix) -> Result<DeviceCsr>| -> Result<f64> {
        be.synchronize()?;
        let t = Instant::now();
        let m = way(be, pattern)?;
        be.synchronize()?;
        let s = t.elapsed().as_secs_f64();
        drop(m);
        Ok(s)
    };
    Ok((time(DeviceCsr::from_host_compressible)?, time(DeviceCsr::pattern_from_host_compressible)?))
}

/// Times one backend: the Newton run, then assembly and a linear solve at the converged state.
#[allow(clippy::too_many_arguments)]
fn time_backend<B: SolverBackend, S: HyperSystem<B>>(
    be: &B,
    sys: &mut S,
    prep: &mut Prepared,
    clock: &mut dyn Clock,
    runs: usize,
    solve_max_dofs: usize,
    row: &mut HyperRow,
) -> Result<()> {
    let t = Instant::now();
    let (u, reps, _) = solve_on(be, sys, prep, 1)?;
    be_sync(be)?;
    row.whole_run_s = t.elapsed().as_secs_f64();
    row.newton_iterations = reps.iter().map(|r| r.all_iterations().count()).sum();
    row.total_linear_iterations = reps.iter().flat_map(|r| r.all_iterations()).map(|i| i.linear_iterations).sum();
    row.load_steps = reps.len();
    row.cutbacks = reps.iter().map(|r| r.abandoned.len()).sum();
    row.per_newton_step_s = row.whole_run_s / row.newton_iterations.max(1) as f64;
    if let Some(last) = reps.last() {
        row.residuals = last.residuals.clone();
        row.forcing = last.iterations.iter().map(|i| i.forcing).collect();
    }
    let n = u.len();
    let ud = be.from_host(&u)?;
    let mut r = be.zeros(n)?;
    let mut k = sys.new_matrix(be)?;
    row.assembly = Some(measure(clock, 1, runs, || sys.internal(be, &ud, &mut r, Some(&mut k)))?);
    row.residual = Some(measure(clock, 1, runs, || sys.internal(be, &ud, &mut r, None))?);
    if n > solve_max_dofs {
        return Ok(());
    }
    // One linear solve of K du = r (a Newton-sized system at a loaded state).
    let mask = be.from_host(&prep.mask)?;
    let zeros = be.zeros(n)?;
    let mut rhs = be.zeros(n)?;
    be.fill(&mut rhs, 1e-3)?;
    be.pointwise_mult(&mask, &rhs, &mut r)?;
    be.eliminate(&mut k, &mut r, &mask, &zeros)?;
    let t = Instant::now();
    let pc: Box<dyn LinearOperator<B> + '_> = match sys.multigrid(be, &ud, &k)? {
        Some(mg) => mg,
        None => Box::new(BlockJacobi::new(be, 3, be.matrix_node_blocks(&k, 3)?)?),
    };
    let mut du = be.zeros(n)?;
    let opts = crate::solver::KrylovOptions { rtol: 1e-8, atol: 0.0, max_iter: 20_000, restart: 50, progress: false };
    let st = crate::solver::cg(be, &k, pc.as_ref(), &r, &mut du, &opts)?;
    be_sync(be)?;
    row.linear_solve_s = t.elapsed().as_secs_f64();
    row.linear_iterations = st.iterations;
    Ok(())
}

/// Owned names for a row's JSON.
fn phases(laps: &[(&'static str, f64)]) -> Vec<(String, f64)> {
    laps.iter().map(|&(n, s)| (n.to_string(), s)).collect()
}

/// The setup phases on stderr with the Newton trace ([`super::newton::TRACE_ENV`]): a run cut
/// short by a time limit still shows where its time before Newton went.
fn trace_setup(row: &HyperRow) {
    if std::env::var_os(super::newton::TRACE_ENV).is_some() {
        let list: Vec<String> = row.setup_phases.iter().map(|(n, s)| format!("{n} {s:.3}")).collect();
        eprintln!("setup ({}, {} dofs): {:.3} s = {}", row.backend, row.dofs, row.setup_s, list.join(", "));
    }
}

/// Waits for the backend's queued work (a norm is a synchronising reduction on every backend).
fn be_sync<B: Backend>(be: &B) -> Result<()> {
    let x = be.zeros(1)?;
    be.norm2(&x).map(|_| ())
}

/// Runs the sweep, calling `emit` with every row as it completes.
pub fn run(cfg: &HyperBenchConfig, gpu: Option<(&CudaBackend, f64)>, mut emit: impl FnMut(&HyperRow) -> Result<()>) -> Result<()> {
    for &degree in &cfg.degrees {
        for &dofs in &cfg.dofs {
          for precond in &cfg.preconditioners {
            let text = problem(dofs, degree, &cfg.law, precond, cfg.quadrature.as_deref(), &cfg.loads)?;
            let t = Instant::now();
            let (f0, prep0) = prepare_text(&text)?;
            let prep_s = t.elapsed().as_secs_f64();
            let space = prep0.el.space.clone();
            let base = HyperRow {
                backend: String::new(),
                law: cfg.law.clone(),
                preconditioner: precond.clone(),
                levels: Vec::new(),
                degree,
                quadrature_points: prep0.el.quad.len(),
                dofs: space.ndofs(),
                cells: space.mesh.num_cells(),
                nnz: prep0.pattern.nnz(),
                setup_s: prep_s,
                setup_phases: phases(&prep0.phases),
                assembly: None,
                residual: None,
                linear_solve_s: 0.0,
                linear_iterations: 0,
                newton_iterations: 0,
                total_linear_iterations: 0,
                load_steps: 0,
                cutbacks: 0,
                whole_run_s: 0.0,
                per_newton_step_s: 0.0,
                floor_bytes: 0.0,
                gb_per_s: 0.0,
                copy_gb_per_s: 0.0,
                times_floor: 0.0,
                residuals: Vec::new(),
                forcing: Vec::new(),
                scheme: String::new(),
                skipped: None,
                jacobian_allocation: None,
            };
            // Kept for the GPU row (at 10⁷ unknowns a second preparation is 4 s); the CPU rows
            // prepare in their own thread pools, their setup is theirs.
            let mut first = Some((f0, prep0));
            let cpu_row = |threads: Option<usize>, limit: usize| -> Result<HyperRow> {
                let mut row = HyperRow { backend: match threads { Some(1) => "cpu-1".into(), _ => format!("cpu-{}", rayon::current_num_threads()) }, ..base.clone() };
                if row.dofs > limit {
                    row.skipped = Some(format!("above the CPU limit of {limit} unknowns"));
                    return Ok(row);
                }
                let text = &text;
                let work = move || -> Result<HyperRow> {
                    let t = Instant::now();
                    let (f, mut prep) = prepare_text(text)?;
                    let mut laps = Laps::new();
                    let sys = cpu_system(&prep)?;
                    laps.lap("system");
                    let setup = |row: &mut HyperRow, laps: &mut Laps, levels: &[usize]| {
                        row.levels = levels.to_vec();
                        row.setup_s = t.elapsed().as_secs_f64();
                        row.setup_phases = phases(&prep.phases);
                        row.setup_phases.extend(phases(&std::mem::take(&mut laps.laps)));
                        trace_setup(row);
                    };
                    if prep.options.precond == super::LinearPrecond::Multigrid {
                        let mut sys = cpu_multigrid(&f, &prep, sys)?;
                        laps.lap("multigrid");
                        setup(&mut row, &mut laps, sys.sizes());
                        if !cfg.setup_only {
                            time_backend(&Cpu, &mut sys, &mut prep, &mut HostClock::default(), cfg.runs, cfg.solve_max_dofs, &mut row)?;
                        }
                    } else {
                        let mut sys = sys;
                        setup(&mut row, &mut laps, &[]);
                        if !cfg.setup_only {
                            time_backend(&Cpu, &mut sys, &mut prep, &mut HostClock::default(), cfg.runs, cfg.solve_max_dofs, &mut row)?;
                        }
                    }
                    Ok(row)
                };
                match threads {
                    Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(|e| Error::invalid(format!("thread pool: {e}")))?.install(work),
                    None => work(),
                }
            };
            emit(&cpu_row(Some(1), cfg.cpu1_max_dofs)?)?;
            emit(&cpu_row(None, cfg.cpu_max_dofs)?)?;
            if let Some((be, copy)) = gpu {
                let mut row = HyperRow { backend: "cuda".into(), ..base.clone() };
                let t = Instant::now();
                let (f, mut prep) = match first.take() {
                    Some(p) => p,
                    None => prepare_text(&text)?,
                };
                let mut laps = Laps::new();
                let sys = GpuHyper::new(be, &prep.el)?;
                laps.lap("system");
                row.scheme = format!("{:?}", sys.scheme());
                let setup = |row: &mut HyperRow, laps: &mut Laps, levels: &[usize]| {
                    row.levels = levels.to_vec();
                    row.setup_s = prep_s + t.elapsed().as_secs_f64();
                    row.setup_phases.extend(phases(&std::mem::take(&mut laps.laps)));
                    trace_setup(row);
                };
                let timed = if prep.options.precond == super::LinearPrecond::Multigrid {
                    let mut sys = MgSystem::build(be, &f, &prep, sys, &f.solver.multigrid, |el| GpuHyper::new(be, el))?;
                    laps.lap("multigrid");
                    setup(&mut row, &mut laps, sys.sizes());
                    if cfg.setup_only { Ok(()) } else { time_backend(be, &mut sys, &mut prep, &mut EventClock::new(be)?, cfg.runs, cfg.solve_max_dofs, &mut row) }
                } else {
                    let mut sys = sys;
                    setup(&mut row, &mut laps, &[]);
                    if cfg.setup_only { Ok(()) } else { time_backend(be, &mut sys, &mut prep, &mut EventClock::new(be)?, cfg.runs, cfg.solve_max_dofs, &mut row) }
                };
                // A Newton run that does not converge is a row of its own (with the history), and
                // the sweep goes on.
                if let Err(e) = timed {
                    match e {
                        Error::NotConverged { ref history, .. } => {
                            row.residuals = history.clone();
                            row.skipped = Some(e.to_string());
                            emit(&row)?;
                            continue;
                        }
                        e => return Err(e),
                    }
                }
                if !cfg.setup_only {
                    row.jacobian_allocation = Some(matrix_allocation_both_ways(be, &prep.pattern)?);
                }
                row.floor_bytes = floor_bytes(&prep.el, row.nnz);
                if let Some(a) = &row.assembly {
                    row.gb_per_s = guarded_gbs("hyperelastic Jacobian assembly", row.floor_bytes, a, copy)?;
                    row.copy_gb_per_s = copy;
                    row.times_floor = a.median / (row.floor_bytes / (copy * 1e9));
                }
                emit(&row)?;
            }
          }
        }
    }
    Ok(())
}

/// The tensor-core scheme's (cells per block, points per chunk); (1, 1) for the others.
fn wpb_qc(sc: Scheme) -> (usize, usize) {
    match sc {
        Scheme::Tc { wpb, qc, .. } => (wpb, qc),
        _ => (1, 1),
    }
}

/// The Jacobian assembly's bytes-moved floor: what the kernel must read (cell vertices and nodes,
/// coordinates, frames, CSR positions (u16) and row pointers, the state) and write (the CSR values
/// once, the residual).
pub fn floor_bytes(el: &HyperElement, nnz: usize) -> f64 {
    let mesh = &el.space.mesh;
    let (nc, nloc, nv) = (mesh.num_cells() as f64, el.nloc() as f64, mesh.cell_type.num_vertices() as f64);
    let frames = if el.frames.is_empty() { 0.0 } else { 72.0 * nc };
    let nverts = mesh.num_vertices() as f64;
    let n = el.space.ndofs() as f64;
    4.0 * nv * nc + 24.0 * nverts + 4.0 * nloc * nc + frames + 2.0 * nloc * nloc * nc + 8.0 * n + 4.0 * n + 8.0 * nnz as f64 + 8.0 * n
}

/// The suffixes of the sweep rows whose matrix values live in compressible memory, and in ordinary
/// memory ([`CudaBackend::alloc_compressible`]; thirty-fifth pass): the same kernel, the zeroing and
/// the kernel's reads of zeroed lines compressed in the L2 or not. Other rows take the system's matrix
/// (compressible where the device has it).
const COMP: &str = " comp";
const PLAIN: &str = " plain";

/// The sweep's timing-only defines (their values are wrong by design: not checked).
const TIMING_ONLY: &[&str] = &["HK_NO_SCATTER", "HK_SCATTER_ONLY", "HK_PLAIN_STORE", "HK_SCATTER_KEEP", "HK_CONTIG", "HK_TRIVIAL_LAW", "HP_SCATTER_ONLY"];

/// `galerkin bench --hyper-kernel-sweep`: what bounds the Jacobian kernel. Per size, the kernel's
/// variants at the state u = 10⁻³ (a translation: the law's cost does not depend on the values) —
/// the law replaced by a trivial one, the atomic scatter by plain stores into a thread's own few values, both, and
/// other launch shapes — each timed as the whole assembly (zeroing + kernel), the kernel alone and
/// the residual alone (median of `runs`, CUDA events), with the zeroing pass and the floor.
/// `only`: the variants to time, by name (all where empty; `--hyper-variants`, e.g. to profile one).
/// Each row that computes the residual and Jacobian is checked against the default system's (`check`:
/// the larger relative difference; an error above 10⁻¹⁰).
pub fn kernel_sweep(cfg: &HyperBenchConfig, be: &CudaBackend, copy: f64, only: &[String], mut emit: impl FnMut(String)) -> Result<()> {
    let rules: Vec<&str> = match cfg.quadrature.as_deref() {
        Some(q) => vec![q],
        None => vec!["full", "stiffness"],
    };
    for &degree in &cfg.degrees {
        for &dofs in &cfg.dofs {
          for &rule in &rules {
            let (_, prep) = prepare_text(&problem(dofs, degree, &cfg.law, "block-jacobi", Some(rule), &[])?)?;
            let el = &prep.el;
            let nnz = prep.pattern.nnz();
            let floor_s = floor_bytes(el, nnz) / (copy * 1e9);
            emit(format!(
                "dofs {} cells {} nnz {} quadrature {rule}, {} points; floor {:.3e} s ({:.3e} bytes at {copy:.0} GB/s)",
                el.space.ndofs(),
                el.space.mesh.num_cells(),
                nnz,
                el.quad.len(),
                floor_s,
                floor_bytes(el, nnz)
            ));
            // What each row's kernel is, and the per-cell scatter's global atomics (the patch rows
            // print theirs): the L2's reduction rate bounds the scatter (round 18's count).
            let per_cell_atomics = 9 * el.nloc() * el.nloc() * el.space.mesh.num_cells();
            emit(format!(
                "the default (GpuHyper::new) = `tc cols fuse sty minb20` at ≤ 4 points (P2), `tc cols` (the tensor-core scheme with the column scatter; GALERKIN_HYPER_SCHEME=cols at every rule) at more; `tc staged` = `tc cols` without the column scatter (GALERKIN_HYPER_SCHEME=tc); per-cell scatter: {per_cell_atomics} global atomic adds a launch"
            ));
            let base = shape(el)?;
            let pairs = Scheme::Pairs(base);
            // Where the time goes: the law alone is the `res` column (gather, geometry, law,
            // residual); "products only" drops the law and the scatter; "scatter only" drops the
            // law and the products (the gather, the geometry and the scatter of zeros).
            // The full rule's list is the sixth pass's; the stiffness rule (few points) gets
            // the where-the-time-goes variants and the chunk shapes that fit its points.
            let full = rule == "full";
            let mut variants: Vec<(String, Scheme, Vec<&str>)> = vec![
                ("pairs".into(), pairs, vec![]),
                ("pairs trivial-law".into(), pairs, vec!["HK_TRIVIAL_LAW"]),
                ("pairs no-scatter".into(), pairs, vec!["HK_NO_SCATTER"]),
                ("pairs products-only".into(), pairs, vec!["HK_TRIVIAL_LAW", "HK_NO_SCATTER"]),
                ("pairs pos".into(), pairs, vec!["HK_POS_SHARED"]),
            ];
            let contig = format!("HK_CONTIG={nnz}");
            for (cpb, qb) in if full { &[(4, 4), (8, 3), (8, 4)][..] } else { &[][..] } {
                let (cpb, qb) = (*cpb, *qb);
                let sh = Shape { gt: base.gt, cpb, qb: qb.min(el.quad.len()) };
                if sh != base {
                    variants.push((format!("pairs {cpb}x{qb}"), Scheme::Pairs(sh), vec![]));
                }
            }
            if tc_applies(el, be.device().compute_capability) {
                let tc = tc_default(el);
                variants.push(("tc staged".into(), tc, vec![]));
                // The sixteenth pass's owner gather: the element matrices staged per cell, then a
                // warp per node writes its CSR rows once (the row also times the gather alone);
                // `scatter-only`: the staging of zeros (gather, geometry) and the gather.
                variants.push(("gather".into(), Scheme::Gather { qc: wpb_qc(tc).1 }, vec![]));
                variants.push(("gather scatter-only".into(), Scheme::Gather { qc: wpb_qc(tc).1 }, vec!["HK_SCATTER_ONLY"]));
                // (8 items per lane in flight instead of 4: whether the gather is latency-bound)
                variants.push(("gather u8".into(), Scheme::Gather { qc: wpb_qc(tc).1 }, vec!["HG_UNROLL=8"]));
                // The seventeenth pass's owner gather without the stage: blocks owning node ranges
                // recompute their cells' law and contract only their rows (4 warps in 100 KiB, 4 in
                // 200 KiB: larger ranges, less recomputation; 8 in 200 KiB).
                if super::recompute::applies(el, be.device().compute_capability) {
                    variants.push(("gather recompute".into(), super::recompute::DEFAULT, vec![]));
                    variants.push(("gather recompute 200".into(), Scheme::Recompute { wpb: 4, kib: 200 }, vec![]));
                    variants.push(("gather recompute w8".into(), Scheme::Recompute { wpb: 8, kib: 200 }, vec![]));
                    // The thirty-first pass: the same gather over the law's records, staged once a
                    // point (`HR_RECORDS`): no recomputed law, so more warps an SM pay only their scratch.
                    if el.quad.len() <= 32 {
                        for (wpb, kib) in [(4, 100), (8, 100), (8, 200), (16, 200), (16, 220)] {
                            variants.push((format!("records w{wpb} {kib}"), Scheme::Recompute { wpb, kib }, vec![super::recompute::HR_RECORDS]));
                        }
                        // (the records kernel with 3 and 4 blocks an SM asked of the register allocator)
                        for m in ["HR_LMINB=3", "HR_LMINB=4"] {
                            let name = format!("records w16 200 lminb{}", &m[9..]);
                            variants.push((name, Scheme::Recompute { wpb: 16, kib: 200 }, vec![super::recompute::HR_RECORDS, m]));
                        }
                    }
                }
                // The twelfth pass's products: the residual as 3 more GEMM columns (`resmma`),
                // Y's shared accesses in pairs (`vec`), both (`lean`), two warps per cell (`split`).
                let (wpb, qc) = wpb_qc(tc);
                let split = Scheme::Tc { wpb, qc, wpc: 2 };
                let lean = TC_LEAN.to_vec();
                let lean_po = [TC_LEAN, &["HK_TRIVIAL_LAW", "HK_NO_SCATTER"]].concat();
                variants.push(("tc resmma".into(), tc, vec!["HK_RES_MMA=1"]));
                variants.push(("tc vec".into(), tc, vec!["HK_VEC=1"]));
                variants.push(("tc lean".into(), tc, lean.clone()));
                variants.push(("tc lean products-only".into(), tc, lean_po.clone()));
                variants.push(("tc split".into(), split, vec![]));
                variants.push(("tc split lean".into(), split, lean.clone()));
                variants.push(("tc split lean products-only".into(), split, lean_po));
                variants.push(("tc split lean frag".into(), split, [TC_LEAN, &["HK_FRAG_SCATTER"]].concat()));
                // register caps: 8 or 12 cells of 64 threads per SM (128 or 85 registers)
                variants.push(("tc split lean minb8".into(), split, [TC_LEAN, &["HK_MINB=8"]].concat()));
                variants.push(("tc split lean minb12".into(), split, [TC_LEAN, &["HK_MINB=12"]].concat()));
                variants.push(("tc lean minb16".into(), tc, [TC_LEAN, &["HK_MINB=16"]].concat()));
                if el.quad.len() >= 4 {
                    variants.push(("tc split lean 1x4".into(), Scheme::Tc { wpb, qc: 4, wpc: 2 }, lean.clone()));
                }
                if el.quad.len() >= 2 {
                    variants.push(("tc split lean 1x2".into(), Scheme::Tc { wpb, qc: 2, wpc: 2 }, lean.clone()));
                }
                if full {
                    variants.push(("tc fragment-scatter".into(), tc, vec!["HK_FRAG_SCATTER"]));
                }
                variants.push(("tc trivial-law".into(), tc, vec!["HK_TRIVIAL_LAW"]));
                variants.push(("tc no-scatter".into(), tc, vec!["HK_NO_SCATTER"]));
                variants.push(("tc products-only".into(), tc, vec!["HK_TRIVIAL_LAW", "HK_NO_SCATTER"]));
                variants.push(("tc scatter-only".into(), tc, vec!["HK_SCATTER_ONLY"]));
                // What the scatter's time is (eleventh pass): plain racy stores at the same places,
                // as many atomics at consecutive places, the positions read from shared memory,
                // and the gather and geometry alone (coalesced plain stores).
                variants.push(("tc scatter-only store".into(), tc, vec!["HK_SCATTER_ONLY", "HK_PLAIN_STORE"]));
                variants.push(("tc scatter-only contig".into(), tc, vec!["HK_SCATTER_ONLY", contig.as_str()]));
                variants.push(("tc scatter-only pos".into(), tc, vec!["HK_SCATTER_ONLY", "HK_POS_SHARED"]));
                variants.push(("tc scatter-only pos store".into(), tc, vec!["HK_SCATTER_ONLY", "HK_POS_SHARED", "HK_PLAIN_STORE"]));
                variants.push(("tc scatter-only pos contig".into(), tc, vec!["HK_SCATTER_ONLY", "HK_POS_SHARED", contig.as_str()]));
                variants.push(("tc prologue-only".into(), tc, vec!["HK_SCATTER_ONLY", "HK_NO_SCATTER"]));
                variants.push(("tc staged pos".into(), tc, vec!["HK_POS_SHARED"]));
                variants.push(("tc staged store".into(), tc, vec!["HK_PLAIN_STORE"]));
                variants.push(("tc minb16".into(), tc, vec!["HK_MINB=16"]));
                // The eighteenth pass: a grid of the blocks resident at once looping over the cells
                // (`persist`), the next cell's record and positions copied ahead (`prefetch`), the
                // latter's parts, lean products and two warps per cell.
                variants.push(("tc persist".into(), tc, vec!["HK_PERSIST"]));
                variants.push(("tc prefetch".into(), tc, TC_PREFETCH.to_vec()));
                variants.push(("tc prefetch no-scatter".into(), tc, [TC_PREFETCH, &["HK_NO_SCATTER"]].concat()));
                variants.push(("tc prefetch scatter-only".into(), tc, [TC_PREFETCH, &["HK_SCATTER_ONLY"]].concat()));
                variants.push(("tc prefetch products-only".into(), tc, [TC_PREFETCH, &["HK_TRIVIAL_LAW", "HK_NO_SCATTER"]].concat()));
                variants.push(("tc prefetch lean".into(), tc, [TC_PREFETCH, TC_LEAN].concat()));
                variants.push(("tc prefetch split".into(), split, TC_PREFETCH.to_vec()));
                // the staged scatter a lane per column (`cols`), alone and with the above
                let pc = [TC_PREFETCH, TC_COLS].concat();
                variants.push(("tc cols".into(), tc, TC_COLS.to_vec()));
                variants.push(("tc cols scatter-only".into(), tc, [TC_COLS, &["HK_SCATTER_ONLY"]].concat()));
                variants.push(("tc prefetch cols".into(), tc, pc.clone()));
                variants.push(("tc prefetch cols scatter-only".into(), tc, [&pc[..], &["HK_SCATTER_ONLY"]].concat()));
                variants.push(("tc prefetch cols lean".into(), tc, [&pc[..], TC_LEAN].concat()));
                variants.push(("tc prefetch cols split".into(), split, pc));
                // The twentieth pass: the law of a block's cells on one warp's lanes (`wide`), against
                // the same block shape without it (`tc cols WxQ`), and the default's law replaced by
                // a trivial one (`tc cols trivial-law`: what the law costs the default).
                let wide = tc_wide(el);
                let (ww, wq) = wpb_qc(wide);
                variants.push(("tc cols wide".into(), wide, [TC_COLS, TC_LAW_WIDE].concat()));
                variants.push((format!("tc cols {ww}x{wq}"), wide, TC_COLS.to_vec()));
                variants.push(("tc cols wide trivial-law".into(), wide, [TC_COLS, TC_LAW_WIDE, &["HK_TRIVIAL_LAW"]].concat()));
                variants.push(("tc cols trivial-law".into(), tc, [TC_COLS, &["HK_TRIVIAL_LAW"]].concat()));
                // The twenty-first pass: the upper-triangle scatter (`upper`: the adds of the global
                // upper triangle alone, that part zeroed, the lower part filled from it after the
                // kernel — both passes inside `asm` and `kernel`), with and without the column
                // scatter; `scatter-only`: its gather, geometry and scatter of zeros.
                variants.push(("tc cols upper".into(), tc, [TC_COLS, TC_UPPER].concat()));
                variants.push(("tc upper".into(), tc, TC_UPPER.to_vec()));
                variants.push(("tc cols upper scatter-only".into(), tc, [TC_COLS, TC_UPPER, &["HK_SCATTER_ONLY"]].concat()));
                // The twenty-second pass: the staged blocks in Y's space (`sty`: 8.1 instead of
                // 11.1 KB a cell at 4 points) with register caps for 18, 20 or 24 cells an SM
                // (`minbN`: ≤ 112, 96, 80 registers; 126 and 16 cells without), with and without
                // the scatter; `tc cols minb20`: the cap alone (the shared memory then allows ≈ 18).
                let sty = tc_st_y(el, qc, TC_ST_Y);
                variants.push(("tc cols sty".into(), tc, [TC_COLS, sty].concat()));
                for (name, minb) in [("minb18", "HK_MINB=18"), ("minb20", "HK_MINB=20"), ("minb24", "HK_MINB=24")] {
                    variants.push((format!("tc cols sty {name}"), tc, [TC_COLS, sty, &[minb]].concat()));
                    variants.push((format!("tc no-scatter sty {name}"), tc, [sty, &["HK_NO_SCATTER", minb]].concat()));
                }
                variants.push(("tc no-scatter sty".into(), tc, [sty, &["HK_NO_SCATTER"]].concat()));
                variants.push(("tc cols minb20".into(), tc, [TC_COLS, &["HK_MINB=20"]].concat()));
                // The twenty-third pass: the law in the Y phase's lanes, a lane per (point, pair),
                // no point records, the residual in the GEMM (`fuse`: `tc_fuse`'s shape, all 4
                // points of the stiffness rule in one chunk), without the scatter, with the
                // default's chunks (`fuse QxC`), the fused shape without the fusion (`tc cols 1xQ`),
                // and a cap of 128 registers (the full rule's chunks need 168 without).
                let fz = tc_fuse(el);
                let (fw, fq) = wpb_qc(fz);
                variants.push(("tc cols fuse".into(), fz, [TC_FUSE, TC_COLS].concat()));
                variants.push(("tc no-scatter fuse".into(), fz, [TC_FUSE, &["HK_NO_SCATTER"]].concat()));
                variants.push(("tc cols fuse minb16".into(), fz, [TC_FUSE, TC_COLS, &["HK_MINB=16"]].concat()));
                // (with the staged blocks in Y's space the fused kernel needs 103 registers and 9.8 KB
                // a cell: 19 cells an SM, 21 with `minb20`'s 96 — it is latency-bound, not LSU-bound)
                let fsty = tc_st_y(el, fq, TC_ST_Y);
                variants.push(("tc cols fuse sty".into(), fz, [TC_FUSE, fsty, TC_COLS].concat()));
                variants.push(("tc cols fuse sty minb20".into(), fz, [TC_FUSE, fsty, TC_COLS, &["HK_MINB=20"]].concat()));
                variants.push(("tc no-scatter fuse sty".into(), fz, [TC_FUSE, fsty, &["HK_NO_SCATTER"]].concat()));
                // Round 24 (the default at ≤ 4 points is `tc cols fuse sty minb20`): its scatter's
                // bounds — without it, with plain racy stores at the same places (a coloured,
                // non-atomic scatter's most), with 2 of every 5 rows added (a perfect patch
                // reduction's ≈ 1/2.56 of the adds, before its own cost). Timing only.
                let fsm = [TC_FUSE, fsty, &["HK_MINB=20"]].concat();
                variants.push(("tc no-scatter fuse sty minb20".into(), fz, [&fsm[..], &["HK_NO_SCATTER"]].concat()));
                variants.push(("tc cols fuse sty minb20 store".into(), fz, [&fsm[..], TC_COLS, &["HK_PLAIN_STORE"]].concat()));
                variants.push(("tc cols fuse sty minb20 keep2".into(), fz, [&fsm[..], TC_COLS, &["HK_SCATTER_KEEP=2"]].concat()));
                // The thirty-first pass: the zeroing pass under the kernel, the cells in 4, 8, 16 chunks
                // each zeroing the next's values (`super::ahead`); asm = all the launches.
                for (n, d) in [(4, "HK_ZERO_AHEAD=4"), (8, "HK_ZERO_AHEAD=8"), (16, "HK_ZERO_AHEAD=16")] {
                    variants.push((format!("tc cols fuse sty minb20 ahead{n}"), fz, [&fsm[..], TC_COLS, &[d]].concat()));
                }
                // Round 25: the default scattering whole node blocks (the values in block order;
                // `blocks` prints the L2 sectors a cell counted both ways, and the block passes).
                variants.push(("tc blocks fuse sty minb20".into(), fz, [&fsm[..], TC_COLS, TC_BLOCKS].concat()));
                variants.push(("tc blocks".into(), tc, [TC_COLS, TC_BLOCKS].concat()));
                // Round 26: the default trimmed (`HK_TRIM`: −15 % of the pre-scatter instructions by
                // static SASS counts, unmeasured), alone, scattering blocks and without the scatter.
                variants.push(("tc cols fuse sty minb20 trim".into(), fz, [&fsm[..], TC_COLS, TC_TRIM].concat()));
                variants.push(("tc blocks fuse sty minb20 trim".into(), fz, [&fsm[..], TC_COLS, TC_BLOCKS, TC_TRIM].concat()));
                variants.push(("tc no-scatter fuse sty minb20 trim".into(), fz, [&fsm[..], &["HK_NO_SCATTER"], TC_TRIM].concat()));
                // The thirty-fifth pass: the default and node blocks with the values in compressible
                // memory (`comp`: the zeroing and the kernel's reads of zeroed lines compressed; the
                // system's own matrix since) and in ordinary memory (`plain`: the matrix before).
                for suffix in [COMP, PLAIN] {
                    variants.push((format!("tc cols fuse sty minb20{suffix}"), fz, [&fsm[..], TC_COLS].concat()));
                    variants.push((format!("tc blocks fuse sty minb20 trim{suffix}"), fz, [&fsm[..], TC_COLS, TC_BLOCKS, TC_TRIM].concat()));
                }
                // The thirty-fourth pass: segments of face neighbours carrying the node blocks each cell
                // shares with the next (`chain`: 16 cells a segment, `chainN`: N), with the default's
                // defines, trimmed, and scattering blocks.
                use super::chain::TC_CHAIN;
                for (name, len) in [("chain", "HK_CHAIN_LEN=16"), ("chain2", "HK_CHAIN_LEN=2"), ("chain4", "HK_CHAIN_LEN=4"), ("chain8", "HK_CHAIN_LEN=8"), ("chain32", "HK_CHAIN_LEN=32")] {
                    variants.push((format!("tc {name} fuse sty minb20"), fz, [&fsm[..], TC_COLS, TC_CHAIN, &[len]].concat()));
                    variants.push((format!("tc blocks {name} fuse sty minb20 trim"), fz, [&fsm[..], TC_COLS, TC_BLOCKS, TC_CHAIN, TC_TRIM, &[len]].concat()));
                }
                variants.push(("tc chain fuse sty minb20 trim".into(), fz, [&fsm[..], TC_COLS, TC_CHAIN, TC_TRIM].concat()));
                // (the carry's loop state spills ≈ 100 bytes a thread under `minb20`'s 96 registers; without a cap, 168)
                variants.push(("tc chain fuse sty".into(), fz, [TC_FUSE, fsty, TC_COLS, TC_CHAIN].concat()));
                variants.push(("tc chain4 fuse sty".into(), fz, [TC_FUSE, fsty, TC_COLS, TC_CHAIN, &["HK_CHAIN_LEN=4"]].concat()));
                variants.push(("tc blocks chain fuse sty minb20".into(), fz, [&fsm[..], TC_COLS, TC_BLOCKS, TC_CHAIN].concat()));
                if fz != tc {
                    variants.push((format!("tc cols fuse {wpb}x{qc}"), tc, [TC_FUSE, TC_COLS].concat()));
                    variants.push((format!("tc cols {fw}x{fq}"), fz, TC_COLS.to_vec()));
                }
                // The nineteenth pass: the tensor-core products with the patches' pre-summed
                // scatter (`tc cube N/W`: edge-grouped patches of N cells, W warps per block
                // taking the patch's cells in turn); `scatter-only`: its gather, geometry and the
                // reduction and flush of zeros.
                if super::patch::applies(el) {
                    let tcp = |cells, wpb| Scheme::TcPatch { cells, wpb, qc: wpb_qc(tc).1, group: super::patch::Grouping::Edges };
                    for (cells, wpb) in [(6, 3), (6, 4), (6, 2), (6, 1), (12, 4), (12, 3), (24, 4)] {
                        variants.push((format!("tc cube {cells}/{wpb}"), tcp(cells, wpb), vec![]));
                    }
                    variants.push(("tc cube 6/3 scatter-only".into(), tcp(6, 3), vec!["HK_SCATTER_ONLY"]));
                    variants.push(("tc cube 12/4 scatter-only".into(), tcp(12, 4), vec!["HK_SCATTER_ONLY"]));
                    // The twentieth pass: the cells' staged blocks into the slots in turn (`turns`:
                    // plain shared adds, no atomics), with the column scatter's neighbours for scale.
                    for (cells, wpb) in [(6, 2), (6, 3), (12, 2), (12, 3), (12, 4), (24, 4)] {
                        variants.push((format!("tc cube {cells}/{wpb} turns"), tcp(cells, wpb), TC_PATCH_TURNS.to_vec()));
                    }
                    variants.push(("tc cube 6/3 turns scatter-only".into(), tcp(6, 3), [TC_PATCH_TURNS, &["HK_SCATTER_ONLY"]].concat()));
                }
                let shapes: &[(usize, usize, &str)] = if full {
                    &[(1, 2, ""), (1, 2, "HK_MINB=16"), (1, 1, "HK_MINB=16"), (1, 3, ""), (1, 4, ""), (2, 4, ""), (2, 2, "")]
                } else {
                    &[(1, 4, ""), (1, 4, "HK_MINB=16"), (2, 4, ""), (2, 3, "")]
                };
                for &(wpb, qc, minb) in shapes {
                    if qc > el.quad.len() {
                        continue;
                    }
                    let sc = Scheme::Tc { wpb, qc, wpc: 1 };
                    if sc != tc || !minb.is_empty() {
                        let name = if minb.is_empty() { format!("tc {wpb}x{qc}") } else { format!("tc {wpb}x{qc} minb16") };
                        variants.push((name, sc, if minb.is_empty() { vec![] } else { vec![minb] }));
                    }
                }
            }
            // The patch-reduced scheme (twelfth pass): a Kuhn cube per block, the whole kernel and
            // its reduction and flush of zeros; one cell per block (the same kernel without the
            // reduction); and (below) runs of 6 cells in Hilbert order, the fallback of other meshes.
            if super::patch::applies(el) {
                use super::patch::Grouping::{Edges, Runs};
                for (name, cells, defs) in [("patch 6", 6, &[][..]), ("patch 6 scatter-only", 6, &["HP_SCATTER_ONLY"][..]), ("patch 1", 1, &[]), ("patch 1 scatter-only", 1, &["HP_SCATTER_ONLY"])] {
                    variants.push((name.into(), Scheme::Patch { cells, batch: 0, group: Runs }, defs.to_vec()));
                }
                // The thirteenth pass: patches grouped by longest edge (Kuhn cubes under any
                // numbering), 1, 2, 4 and 2×2×2 cubes, integrated `cube N/B`: B cells at a time;
                // `turns`: a batch's cells add to the slots in turn, without shared atomics.
                for (cells, batch, turns) in [(6, 0, false), (6, 0, true), (12, 0, false), (12, 6, false), (24, 12, false), (48, 6, false), (48, 12, false), (48, 12, true), (48, 24, false)] {
                    let name = match (batch, turns) {
                        (0, false) => format!("cube {cells}"),
                        (0, true) => format!("cube {cells} turns"),
                        (_, false) => format!("cube {cells}/{batch}"),
                        (_, true) => format!("cube {cells}/{batch} turns"),
                    };
                    let sc = Scheme::Patch { cells, batch, group: Edges };
                    let defs: Vec<&str> = if turns { vec!["HP_CELL_TURNS"] } else { vec![] };
                    variants.push((name.clone(), sc, defs.clone()));
                    variants.push((format!("{name} scatter-only"), sc, [defs, vec!["HP_SCATTER_ONLY"]].concat()));
                }
            }
            // The moments scheme (thirteenth pass): the element matrix from per-cell moments, one
            // warp per cell (one or two per block); without the matrix's scatter; without the law
            // as well (the products alone, like `tc products-only`).
            if super::moments::applies(el) {
                for (name, wpb, defs) in [
                    ("mom", 1, &[][..]),
                    ("mom 2", 2, &[]),
                    ("mom no-scatter", 1, &["HK_NO_SCATTER"]),
                    ("mom products-only", 1, &["HK_TRIVIAL_LAW", "HK_NO_SCATTER"]),
                ] {
                    variants.push((name.into(), Scheme::Moments { wpb }, defs.to_vec()));
                }
            }
            // The cells in Hilbert order as well, for the kernels that tell what the launch order
            // changes (nothing measurable on the H200: eleventh pass; the sweep's mesh is in that order).
            let mut variants: Vec<(String, Scheme, Vec<&str>, CellOrder)> = variants.into_iter().map(|(n, sc, d)| (n, sc, d, DEFAULT_ORDER)).collect();
            let again: Vec<_> = variants
                .iter()
                // (stop 59 added the default, node blocks and the carried scatter — measured equal to
                // their twins: the problem's mesh is already in Hilbert order, `reorder_for_locality`)
                .filter(|v| {
                    [
                        "pairs", "pairs pos", "tc staged", "tc staged pos", "tc scatter-only", "tc scatter-only pos", "tc scatter-only store", "patch 6", "patch 6 scatter-only",
                        "tc cols fuse sty minb20", "tc blocks fuse sty minb20 trim", "tc chain fuse sty minb20", "tc chain2 fuse sty minb20", "tc chain4 fuse sty minb20", "tc chain4 fuse sty", "tc blocks chain4 fuse sty minb20 trim",
                    ]
                    .contains(&v.0.as_str())
                })
                .map(|(n, sc, d, _)| (format!("{n} hilbert"), *sc, d.clone(), CellOrder::Hilbert))
                .collect();
            variants.extend(again);
            let n = el.space.ndofs();
            let mut u = be.zeros(n)?;
            be.fill(&mut u, 1e-3)?;
            let mut r = be.zeros(n)?;
            let mut clock = EventClock::new(be)?;
            // The blocks rows' L2 sectors, counted on this mesh's pattern: formed on the first
            // such row, reused by the rest (round 28: the pattern built once a mesh, not a row).
            let mut sectors: Option<(usize, usize)> = None;
            // The default system's residual and Jacobian, against which every row that computes them
            // is checked (thirty-fourth pass: no wrong variant timed as a fast one).
            let mut reference: Option<(Vec<f64>, Vec<f64>)> = None;
            for (name, sc, defs, order) in variants {
                if !only.is_empty() && !only.iter().any(|o| name == *o) {
                    continue;
                }
                let sys = match GpuHyper::variant_ordered(be, el, sc, &defs, order) {
                    Ok(s) => s,
                    Err(e) => {
                        emit(format!("{name:<24} skipped: {e}"));
                        continue;
                    }
                };
                // (thirty-fifth pass: the system's matrix has its values in compressible memory where
                // the device has it; `… plain` rows keep them in ordinary memory, `… comp` rows insist)
                let mut k = if name.ends_with(PLAIN) {
                    DeviceCsr::from_host(be, &sys.pattern)?
                } else if name.ends_with(COMP) {
                    DeviceCsr::from_host_compressible(be, &sys.pattern)?
                } else {
                    sys.new_matrix(be)?
                };
                if name.ends_with(COMP) && !k.is_compressible() {
                    emit(format!("{name:<24} skipped: no compressible memory on this device (or GALERKIN_COMPRESSIBLE=0)"));
                    continue;
                }
                let runs = cfg.runs.max(1);
                if name.ends_with(COMP) {
                    // (what reading incompressible values from compressible memory costs the product)
                    let mut y = be.zeros(n)?;
                    let mv = measure(&mut clock, 1, runs, || k.apply(be, &u, &mut y))?;
                    emit(format!("{name}: csr spmv {:.3e} (spread {:.3e}..{:.3e}) with the values in compressible memory", mv.median, mv.min, mv.max));
                }
                if let Some(b) = sys.blocks() {
                    // (the estimate of round 25, counted on this pattern and cell order; the block
                    // storage's passes: the product, the conversion to CSR, CSR's product for scale)
                    let (csr, blk) = match sectors {
                        Some(counted) => counted,
                        None => {
                            let (p, slots) = crate::operator::assemble::pattern(&el.space, true)?;
                            let rank = slots.ok_or_else(|| crate::Error::invalid("sparsity pattern without slots"))?.rank;
                            *sectors.insert(super::blocks::scatter_sectors(&p, &el.space.dofmap.cell_nodes, el.nloc(), &rank, 32, None))
                        }
                    };
                    let nc = el.space.mesh.num_cells() as f64;
                    let mut tmp = be.alloc::<f64>(k.nnz())?;
                    let mut y = be.zeros(n)?;
                    let t2c = measure(&mut clock, 1, runs, || b.to_csr(be, &k.values, &mut tmp))?;
                    let bmv = measure(&mut clock, 1, runs, || sys.block_spmv(be, &k, &u, &mut y))?;
                    let cmv = measure(&mut clock, 1, runs, || k.apply(be, &u, &mut y))?;
                    emit(format!(
                        "{name}: L2 sectors a cell (counted) CSR {:.1} blocks {:.1} ({:.2}x fewer); to_csr {:.3e} (spread {:.3e}..{:.3e})  block spmv {:.3e} (spread {:.3e}..{:.3e})  csr spmv {:.3e} (spread {:.3e}..{:.3e})",
                        csr as f64 / nc, blk as f64 / nc, csr as f64 / blk.max(1) as f64, t2c.median, t2c.min, t2c.max, bmv.median, bmv.min, bmv.max, cmv.median, cmv.min, cmv.max
                    ));
                }
                let asm = measure(&mut clock, 1, runs, || sys.assemble(be, &u, &mut r, Some(&mut k)))?;
                let timing_only = defs.iter().any(|d| TIMING_ONLY.iter().any(|t| d.starts_with(t)));
                let check = if timing_only {
                    "check -".to_string()
                } else {
                    let (r0, k0) = match &reference {
                        Some(v) => v,
                        None => {
                            let d = GpuHyper::new(be, el)?;
                            let mut kd = d.new_matrix(be)?;
                            let mut rd = be.zeros(n)?;
                            d.assemble(be, &u, &mut rd, Some(&mut kd))?;
                            reference.insert((be.to_host(&rd)?, be.matrix_to_host(&kd)?.values))
                        }
                    };
                    let kv = be.matrix_to_host(&k)?.values;
                    let kv = match sys.blocks() {
                        Some(b) => b.host.to_csr(&kv)?,
                        None => kv,
                    };
                    let (er, ek) = (crate::bench::max_rel_diff(r0, &be.to_host(&r)?), crate::bench::max_rel_diff(k0, &kv));
                    if !(er <= 1e-10 && ek <= 1e-10) {
                        return Err(crate::Error::invalid(format!("{name}: residual {er:.2e} and Jacobian {ek:.2e} from the default's (relative to their largest)")));
                    }
                    format!("check {:.1e}", er.max(ek))
                };
                let kern = measure(&mut clock, 1, runs, || sys.assemble_with(be, &u, &mut r, Some(&mut k), false))?;
                let res = measure(&mut clock, 1, runs, || sys.assemble(be, &u, &mut r, None))?;
                let zero = measure(&mut clock, 1, runs, || be.zero_slice(&mut k.values))?;
                if let Some(up) = sys.upper() {
                    // (the two passes alone: the upper part's zeroing, the lower part's fill)
                    let uz = measure(&mut clock, 1, runs, || up.zero(be, &k.row_ptr, &mut k.values))?;
                    let uf = measure(&mut clock, 1, runs, || up.fill(be, &k.row_ptr, &mut k.values))?;
                    emit(format!("{name}: upper zero {:.3e} (spread {:.3e}..{:.3e})  fill {:.3e} (spread {:.3e}..{:.3e})", uz.median, uz.min, uz.max, uf.median, uf.min, uf.max));
                }
                let (shape, shared) = match sc {
                    Scheme::Pairs(sh) => (format!("gt {:>2} cpb {:>2} qb {:>2}", sh.gt, sh.cpb, sh.qb), shared_bytes(el, sh.cpb, sh.qb)),
                    Scheme::Tc { wpb, qc, wpc } => (format!("cells/block {wpb} qc {qc} wpc {wpc}"), tc_shared_bytes(el, wpb, qc)),
                    Scheme::Patch { cells, .. } => {
                        let (adds, stores, shared, dynamic) = sys.patch_stats().unwrap_or_default();
                        let per = 9.0 * (el.nloc() * el.nloc()) as f64 * el.space.mesh.num_cells() as f64 / adds.max(1) as f64;
                        let plain = 100.0 * stores as f64 / adds.max(1) as f64;
                        (format!("cells {cells} adds /{per:.2} stores {plain:.0}% slots {dynamic} B"), shared)
                    }
                    Scheme::Moments { wpb } => (format!("cells/block {wpb}"), super::moments::shared_bytes(el, wpb)),
                    Scheme::TcPatch { cells, wpb, qc, .. } => {
                        // the global atomics of one launch (the flush's adds less its plain stores)
                        let (adds, stores, shared, dynamic) = sys.patch_stats().unwrap_or_default();
                        let atomics = adds - stores;
                        let fewer = per_cell_atomics as f64 / atomics.max(1) as f64;
                        (format!("cells {cells} wpb {wpb} qc {qc} atomics {atomics} (/{fewer:.2}) stores {stores} slots {dynamic} B"), shared + dynamic)
                    }
                    Scheme::Gather { qc } => {
                        let g = measure(&mut clock, 1, runs, || sys.gather_only(be, &mut k))?;
                        (format!("qc {qc} gather alone {:.3e}", g.median), tc_shared_bytes(el, 1, qc))
                    }
                    Scheme::Recompute { wpb, kib } => {
                        // The model next to the time: the redundancy, bytes and flops counted.
                        let b = sys.recompute_blocks().ok_or_else(|| crate::Error::invalid("recompute blocks"))?;
                        let (worst, best, flops) = super::recompute::model(el, b, nnz);
                        let (pairs, evals) = b.counts();
                        emit(format!(
                            "{name}: {} blocks, {evals} cell evaluations ({:.2} per cell), {pairs} owned (cell, node) pairs; model: DRAM {:.3e}..{:.3e} B ({:.3e}..{:.3e} s at {copy:.0} GB/s), {:.3e} flop ({:.3e} s at 34 TFLOP/s FP64)",
                            b.nblocks(),
                            b.redundancy(el.space.mesh.num_cells()),
                            best,
                            worst,
                            best / (copy * 1e9),
                            worst / (copy * 1e9),
                            flops,
                            flops / 34e12
                        ));
                        (format!("wpb {wpb} {kib} KiB x{:.2}", b.redundancy(el.space.mesh.num_cells())), 8 * wpb * super::recompute::scratch_doubles(el) + 8 * b.max_vals)
                    }
                };
                // (the kernel as compiled: registers, static shared memory, blocks an SM)
                let occ = sys.assemble_stats().map(|(regs, st, per_sm)| format!("  regs {regs} static {st} B blocks/SM {per_sm}")).unwrap_or_default();
                emit(format!(
                    "{name:<20} {shape:<20} shared {shared:>5} B: asm {:.3e} (x{:.2} floor)  kernel {:.3e}  res {:.3e}  zero {:.3e}{occ}  spread {:.3e}..{:.3e}  {check}",
                    asm.median,
                    asm.median / floor_s,
                    kern.median,
                    res.median,
                    zero.median,
                    asm.min,
                    asm.max
                ));
            }
          }
        }
    }
    Ok(())
}
