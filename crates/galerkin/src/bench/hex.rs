//! `galerkin bench --hex`: the table of "Forming matrices of finite element systems in GPGPU" —
//! m hexahedra (10 000 by default) with hierarchical elasticity elements of degree p = 1…5, the time
//! to integrate all element matrices on one CPU core, on all cores, and on the GPU by each scheme
//! (the default assembly kernel; I: a thread per cell; II: a thread per quadrature point; III:
//! tiled moments), then the time to sum them into the CSR matrix colour by colour and with atomics,
//! and a hybrid run splitting the cells between the CPU cores and the GPU in proportion to their
//! measured speeds.
//!
//! The mesh is a box of m cells with interior vertices moved off the grid (non-affine cells: every
//! scheme runs its quadrature loop) and every cell's vertex list rotated (signed edge and face
//! modes). Scheme III is held to its floor, the larger of the time to write the matrices at the
//! copy bandwidth and the time for its moment flops at the FP64 tensor-core throughput, both
//! measured in the same run; a figure above either ceiling fails the benchmark. Its default stores
//! packed upper triangles: its floor is that of the packed bytes, and the full matrices' floor
//! (rounds 1–8) is reported beside it, with the full-storage kernel held to it.
use super::timing::{Clock, HostClock, Timing};
use crate::backend::cuda::bench::{bandwidth, timed};
use crate::backend::cuda::CudaBackend;
use crate::fe::{ModeSet, QuadratureKind};
use crate::mesh::{generate, CellType, Mesh};
use crate::operator::level::full::cuda::DeviceAssembler;
use crate::operator::level::element::packed::{self, Storage};
use crate::operator::level::full::schemes::TiledConfig;
use crate::operator::level::{Integration, Scatter, Tuning};
use crate::operator::local_matrix::{LocalMatrices, LocalScratch};
use crate::operator::ElementIntegrator;
use crate::physics::Elasticity;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// What to sweep.
#[derive(Clone, Debug)]
pub struct HexBenchConfig {
    pub cells: usize,
    pub degrees: Vec<usize>,
    pub modes: ModeSet,
    pub quadrature: QuadratureKind,
    /// Timed repetitions of each GPU measurement.
    pub runs: usize,
    /// The CPU integrates at most this many cells per timing (its time is scaled to all cells).
    pub cpu_cells: usize,
    /// Also time scheme III in every launch shape of [`TiledConfig::sweep`].
    pub tiled_sweep: bool,
    /// Only the first this many shapes of the sweep (0: all).
    pub sweep_shapes: usize,
}

/// Scheme III in one launch shape (`--tiled-sweep`).
#[derive(Clone, Debug, Serialize)]
pub struct SweepTime {
    pub config: TiledConfig,
    pub label: String,
    pub timing: Option<Timing>,
    pub skipped: Option<String>,
    pub over_floor: Option<f64>,
    /// Largest difference from the default shape's matrices on the first cells, relative to their
    /// largest entry.
    pub max_rel_diff: Option<f64>,
}

/// One GPU scheme's time for all element matrices.
#[derive(Clone, Debug, Serialize)]
pub struct SchemeTime {
    pub scheme: String,
    pub timing: Option<Timing>,
    pub skipped: Option<String>,
    /// Speed-up over one CPU core.
    pub vs_one_core: Option<f64>,
}

/// One row: degree p.
#[derive(Clone, Debug, Serialize)]
pub struct HexRow {
    pub p: usize,
    pub modes: String,
    pub quadrature: String,
    pub cells: usize,
    pub dofs: usize,
    /// Basis functions per cell (scalar) and the element matrix's size.
    pub functions: usize,
    pub elem_size: usize,
    pub points: usize,
    /// CPU times for all cells, scaled from `cpu_cells_timed` cells (all cores) and that divided
    /// by the thread count (one core) when fewer were timed.
    pub cpu_one_core_s: f64,
    pub cpu_all_cores_s: f64,
    pub cpu_threads: usize,
    pub cpu_cells_timed: usize,
    pub gpu: Vec<SchemeTime>,
    /// Summation of the stored matrices (scheme III's packed triangles) into CSR values.
    pub scatter_colored: Option<Timing>,
    pub scatter_atomic: Option<Timing>,
    /// Scheme III storing full matrices (`packed = false`: the eighth round's kernel), and their
    /// colour-by-colour summation.
    pub tiled_full: Option<Timing>,
    pub scatter_colored_full: Option<Timing>,
    /// The default fused kernel integrating and summing with atomics in one pass.
    pub fused_atomic: Option<Timing>,
    /// Scheme III's floor: max(bytes written / copy bandwidth, moment flops / FP64 tensor-core
    /// throughput), both measured in the run. The moment flops are the packed product's minimum:
    /// 2 per multiply-add, per point, nine moments ∂_k φ_a ∂_l φ_b for each pair a < b and six for
    /// a = b (M_kl[a][a] = M_lk[a][a]), i.e. 2·(9·n(n − 1)/2 + 6·n)·nq·m for n functions.
    /// `bytes_written` and `floor_s` are the packed triangles' (what the default III writes; the
    /// ratio `tiled_over_floor` is against it); `bytes_full` and `floor_full_s` those of full
    /// matrices (the floor of rounds 1–8), against which `tiled_over_full_floor` (the packed
    /// kernel) and `tiled_full_over_full_floor` (the full kernel) are given too.
    pub bytes_written: f64,
    pub bytes_full: f64,
    pub moment_flops: f64,
    pub floor_s: f64,
    pub floor_full_s: f64,
    pub tiled_over_floor: Option<f64>,
    pub tiled_over_full_floor: Option<f64>,
    pub tiled_full_over_full_floor: Option<f64>,
    /// Fixed costs measured beside the floor (not folded into it): an empty kernel on one block,
    /// the same on scheme III's default grid (`empty_grid_blocks` blocks of its threads), and a
    /// write-only kernel storing the bytes III writes (`vec_fill`); and III against the floor
    /// plus the one-block empty launch (the launch no kernel avoids).
    pub launch_empty: Option<Timing>,
    pub launch_empty_grid: Option<Timing>,
    pub empty_grid_blocks: u32,
    pub write_only: Option<Timing>,
    pub tiled_over_floor_plus_launch: Option<f64>,
    /// Scheme III's default timed again after the other schemes (the table's III is timed first,
    /// since round 18; before, in this place).
    pub tiled_after_others: Option<Timing>,
    /// Hybrid: cells on the CPU, and the wall time of both parts running at once.
    pub hybrid_cpu_cells: usize,
    pub hybrid_s: Option<f64>,
    pub tiled_sweep: Vec<SweepTime>,
}

/// What the run measured about the device.
#[derive(Clone, Debug, Serialize)]
pub struct Ceilings {
    pub device: String,
    pub copy_gbs: f64,
    pub fma_gflops: f64,
    /// FP64 tensor-core throughput: the fastest MMA shape measured (the tiled scheme's ceiling).
    pub dmma_gflops: f64,
    /// Each MMA shape's measured throughput (GFLOP/s).
    pub dmma_shapes: Vec<(String, f64)>,
}

/// The benchmark mesh: `cells` hexahedra in a box of about nx × ny × nz, distorted and rotated.
pub fn bench_mesh(cells: usize) -> Result<Mesh> {
    let n = (cells as f64).cbrt();
    let nz = (n.floor() as usize).max(1);
    let ny = ((cells as f64 / nz as f64).sqrt().floor() as usize).max(1);
    let nx = cells.div_ceil(ny * nz).max(1);
    let mut m = generate::box_mesh(nx, ny, nz, [0.0; 3], [nx as f64, ny as f64, nz as f64], CellType::Hexahedron)?;
    let hi = [nx as f64, ny as f64, nz as f64];
    for (i, x) in m.coords.iter_mut().enumerate() {
        if (0..3).all(|k| x[k] > 1e-9 && x[k] < hi[k] - 1e-9) {
            for (k, xk) in x.iter_mut().enumerate() {
                *xk += 0.15 * (((i * 7 + k * 3) % 5) as f64 / 4.0 - 0.5);
            }
        }
    }
    let m = Mesh::new(CellType::Hexahedron, m.coords, m.cells, Some(m.cell_tags), m.boundary, m.tag_names)?;
    generate::rotate_hexahedra(&m, 11)
}

/// The element matrices of `cells` on the CPU (current rayon pool), each computed, put in layout
/// `storage` (the CPU twin of the GPU's stored form: packed where scheme III packs) and dropped.
pub(super) fn integrate_cells(local: &LocalMatrices, cells: std::ops::Range<usize>, storage: Storage) -> Result<()> {
    let len = local.len();
    let nd = (len as f64).sqrt().round() as usize;
    cells.into_par_iter().try_for_each_init(
        || (LocalScratch::default(), vec![0.0; len], vec![0.0; storage.doubles(nd)]),
        |(s, ke, kp), c| {
            local.element_matrix(c, s, ke)?;
            if storage == Storage::Packed {
                packed::pack_cell(nd, ke, kp);
                std::hint::black_box(&kp);
            }
            std::hint::black_box(&ke);
            Ok(())
        },
    )
}

/// CPU seconds to integrate the element matrices of the first `n` cells with `threads` threads.
fn cpu_time(local: &LocalMatrices, n: usize, threads: usize) -> Result<f64> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| Error::invalid(format!("thread pool: {e}")))?;
    let mut clock = HostClock::default();
    clock.start()?;
    pool.install(|| integrate_cells(local, 0..n, Storage::Full))?;
    clock.stop()
}

/// Runs the sweep on `be`, calling `row` after each degree.
pub fn run(cfg: &HexBenchConfig, be: &CudaBackend, mut row: impl FnMut(&Ceilings, &HexRow) -> Result<()>) -> Result<Vec<HexRow>> {
    let mesh = Arc::new(bench_mesh(cfg.cells)?);
    // Cells of one colour share no vertex, so no dof of any degree: one colouring serves all.
    let colors = crate::operator::coloring::cell_colors(&mesh);
    let physics = Elasticity::lame(1.2e5, 8.0e4, 3);
    let copy_gbs = bandwidth(be)?.copy_gbs;
    let mut ceilings: Option<Ceilings> = None;
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    for &p in &cfg.degrees {
        let space = FunctionSpace::hierarchical(mesh.clone(), p, cfg.modes, 3)?;
        let integ = ElementIntegrator::with_quadrature(&space, &physics, None, cfg.quadrature)?;
        let ncells = mesh.num_cells();
        let (nloc, nq) = (integ.tab.ndofs, integ.quad.len());
        let nd = 3 * nloc;
        // CPU: one core and all cores, on a prefix of the cells, scaled.
        let local = LocalMatrices::new(&integ);
        let ncpu = cfg.cpu_cells.clamp(1, ncells);
        let scale = ncells as f64 / ncpu as f64;
        let n1 = (ncpu / threads.max(1)).max(1);
        let one = cpu_time(&local, n1, 1)? * ncells as f64 / n1 as f64;
        let all = cpu_time(&local, ncpu, threads)? * scale;
        // GPU schemes.
        // Scheme III's matrices stored packed (`packed = true`: also what is summed here, so the
        // summation columns are the packed triangles'; `col full` sums full ones).
        let tuning = Tuning { packed: Some(true), ..Tuning::default() };
        let asm = DeviceAssembler::new(be, &integ, &Vec::new(), tuning)?;
        let ceil = match &ceilings {
            Some(c) => c.clone(),
            None => {
                let dmma_shapes = asm.dmma_gflops(be)?;
                let dmma_gflops = dmma_shapes.iter().map(|s| s.1).fold(0.0, f64::max);
                let c = Ceilings { device: be.device().name.clone(), copy_gbs, fma_gflops: asm.fma_gflops(be)?, dmma_gflops, dmma_shapes };
                ceilings = Some(c.clone());
                c
            }
        };
        let mut mats = be.alloc::<f64>(ncells * nd * nd)?;
        let storage = asm.storage(Integration::Tiled);
        let bytes_full = (ncells * nd * nd * 8) as f64;
        let bytes = (ncells * storage.doubles(nd) * 8) as f64;
        let moments_per_point = (9 * nloc * (nloc - 1) / 2 + 6 * nloc) as f64;
        let flops = 2.0 * moments_per_point * nq as f64 * ncells as f64;
        let floor_of = |bytes: f64| (bytes / (ceil.copy_gbs * 1e9)).max(flops / (ceil.dmma_gflops * 1e9));
        let (floor, floor_full) = (floor_of(bytes), floor_of(bytes_full));
        // Scheme III is timed first, before the others (round 18): timed after the seconds of
        // schemes I and II and the default kernel it read 5.9–6.1 ms at p = 5 where the sweep's row
        // of the same kernel (same defines, grid and buffer size) read 5.49, and Nsight Compute 5.40
        // at 1.98 GHz — the clock the GPU keeps after that load is the cause (BENCHMARKS.md, round
        // 18), not the kernel. Its time after the others is kept beside it (`tiled_after_others`).
        let order = [Integration::Tiled, Integration::Default, Integration::ThreadPerCell, Integration::ThreadPerPoint];
        debug_assert!(Integration::ALL.iter().all(|s| order.contains(s)));
        let mut gpu = Vec::new();
        let mut tiled = None;
        for scheme in order {
            // Scheme I is slow at high p: fewer repetitions.
            let runs = if scheme == Integration::ThreadPerCell { cfg.runs.min(3) } else { cfg.runs };
            let t = match asm.scheme_unsupported(scheme) {
                Some(why) => Err(why),
                None => Ok(timed(be, runs, || asm.scheme_matrices_into(be, scheme, &mut mats))?),
            };
            if let Ok(t) = &t {
                let bytes = if scheme == Integration::Tiled { bytes } else { bytes_full };
                if bytes / t.median > ceil.copy_gbs * 1e9 * 1.02 || (scheme == Integration::Tiled && flops / t.median > ceil.dmma_gflops * 1e9 * 1.02) {
                    return Err(Error::invalid(format!(
                        "benchmark hex p = {p} {}: {bytes:.3e} bytes and {flops:.3e} flops in {} exceed the measured ceilings ({:.0} GB/s, {:.0} GFLOP/s); no figure is reported",
                        scheme.name(),
                        t.describe(),
                        ceil.copy_gbs,
                        ceil.dmma_gflops
                    )));
                }
                if scheme == Integration::Tiled {
                    tiled = Some(t.median);
                }
            }
            gpu.push((
                scheme,
                SchemeTime { scheme: scheme.name().into(), vs_one_core: t.as_ref().ok().map(|t| one / t.median), timing: t.as_ref().ok().cloned(), skipped: t.err() },
            ));
        }
        // The table's columns in `Integration::ALL`'s order.
        gpu.sort_by_key(|(s, _)| Integration::ALL.iter().position(|a| a == s));
        let gpu: Vec<SchemeTime> = gpu.into_iter().map(|(_, t)| t).collect();
        let tiled_after_others = match tiled {
            Some(_) => {
                let t = timed(be, cfg.runs, || asm.scheme_matrices_into(be, Integration::Tiled, &mut mats))?;
                guard(&format!("hex p = {p} tiled (after the other schemes)"), &t, bytes, flops, &ceil)?;
                Some(t)
            }
            None => None,
        };
        let tiled_sweep = if cfg.tiled_sweep && tiled.is_some() { sweep_tiled(be, &asm, cfg.runs, cfg.sweep_shapes, ncells, (bytes, bytes_full), flops, (floor, floor_full), &ceil)? } else { Vec::new() };
        // Summation of the stored matrices: scheme III's (packed) where it runs, else the last
        // scheme's (all are equal); then III's full matrices and their colored summation.
        let pattern = crate::operator::assemble::sparsity(&space)?;
        let stored = if tiled.is_some() {
            asm.scheme_matrices_into(be, Integration::Tiled, &mut mats)?;
            storage
        } else {
            Storage::Full
        };
        let scatter_t = |scatter: Scatter, mats: &cudarc::driver::CudaSlice<f64>, stored: Storage| -> Result<Timing> {
            let mut target = asm.csr_target(be, &pattern, scatter, Some(&colors))?;
            timed(be, cfg.runs, || asm.scatter_matrices(be, mats, stored, &mut target))
        };
        let scatter_colored = Some(scatter_t(Scatter::Colored, &mats, stored)?);
        let scatter_atomic = Some(scatter_t(Scatter::Atomic, &mats, stored)?);
        let (tiled_full, scatter_colored_full) = if tiled.is_some() && storage == Storage::Packed {
            let full = asm.tiled_default_for(Storage::Full);
            let t = timed(be, cfg.runs, || asm.tiled_matrices_with(be, full, ncells, &mut mats))?;
            guard(&format!("hex p = {p} tiled full"), &t, bytes_full, flops, &ceil)?;
            (Some(t), Some(scatter_t(Scatter::Colored, &mats, Storage::Full)?))
        } else {
            (None, None)
        };
        // Fixed costs: the empty launch (one block, III's grid) and writing III's bytes alone.
        let (launch_empty, launch_empty_grid, empty_grid_blocks, write_only) = if tiled.is_some() {
            let (one, grid, blocks) = asm.empty_launch_seconds(be, cfg.runs, ncells)?;
            let mut v = <CudaBackend as crate::backend::Backend>::zeros(be, (bytes / 8.0) as usize)?;
            let w = timed(be, cfg.runs, || <CudaBackend as crate::backend::Backend>::fill(be, &mut v, 1.0))?;
            (Some(one), Some(grid), blocks, Some(w))
        } else {
            (None, None, 0, None)
        };
        let fused_atomic = {
            let mut target = asm.csr_target(be, &pattern, Scatter::Atomic, None)?;
            Some(timed(be, cfg.runs, || asm.assemble_into(be, &mut target))?)
        };
        // Hybrid: the CPU takes the last cells in proportion to its speed, concurrently.
        let (hybrid_cpu_cells, hybrid_s) = match tiled {
            Some(tg) => {
                let (rg, rc) = (ncells as f64 / tg, ncells as f64 / all);
                let ncpu_h = ((ncells as f64 * rc / (rg + rc)).round() as usize).min(ncells);
                let ngpu = ncells - ncpu_h;
                let mut best = f64::INFINITY;
                for _ in 0..cfg.runs.min(5) {
                    be.synchronize()?;
                    let t0 = Instant::now();
                    asm.first_matrices_into(be, Integration::Tiled, ngpu, &mut mats)?;
                    integrate_cells(&local, ngpu..ncells, storage)?;
                    be.synchronize()?;
                    best = best.min(t0.elapsed().as_secs_f64());
                }
                (ncpu_h, Some(best))
            }
            None => (0, None),
        };
        let r = HexRow {
            p,
            modes: format!("{:?}", cfg.modes).to_lowercase(),
            quadrature: format!("{:?}", cfg.quadrature).to_lowercase(),
            cells: ncells,
            dofs: space.ndofs(),
            functions: nloc,
            elem_size: nd,
            points: nq,
            cpu_one_core_s: one,
            cpu_all_cores_s: all,
            cpu_threads: threads,
            cpu_cells_timed: ncpu,
            gpu,
            scatter_colored,
            scatter_atomic,
            tiled_full_over_full_floor: tiled_full.as_ref().map(|t| t.median / floor_full),
            tiled_full,
            scatter_colored_full,
            fused_atomic,
            bytes_written: bytes,
            bytes_full,
            moment_flops: flops,
            floor_s: floor,
            floor_full_s: floor_full,
            tiled_over_floor: tiled.map(|t| t / floor),
            tiled_over_full_floor: tiled.map(|t| t / floor_full),
            tiled_over_floor_plus_launch: tiled.zip(launch_empty.as_ref()).map(|(t, l)| t / (floor + l.median)),
            tiled_after_others,
            launch_empty,
            launch_empty_grid,
            empty_grid_blocks,
            write_only,
            hybrid_cpu_cells,
            hybrid_s,
            tiled_sweep,
        };
        row(&ceil, &r)?;
        rows.push(r);
    }
    Ok(rows)
}

/// Fails with the benchmark's message when `bytes` or `flops` in `t` exceed the measured ceilings.
fn guard(what: &str, t: &Timing, bytes: f64, flops: f64, ceil: &Ceilings) -> Result<()> {
    if bytes / t.median > ceil.copy_gbs * 1e9 * 1.02 || flops / t.median > ceil.dmma_gflops * 1e9 * 1.02 {
        return Err(Error::invalid(format!(
            "benchmark {what}: {bytes:.3e} bytes and {flops:.3e} flops in {} exceed the measured ceilings ({:.0} GB/s, {:.0} GFLOP/s); no figure is reported",
            t.describe(),
            ceil.copy_gbs,
            ceil.dmma_gflops
        )));
    }
    Ok(())
}

/// Scheme III in every shape of [`TiledConfig::sweep`]: the time for all cells (held to the floor
/// and ceilings of what the shape writes: `bytes` and `floor` are (packed, full)), and its
/// matrices of the first cells (unpacked where packed) against the fourth round's shape's.
#[allow(clippy::too_many_arguments)]
fn sweep_tiled(be: &CudaBackend, asm: &DeviceAssembler, runs: usize, shapes: usize, ncells: usize, bytes: (f64, f64), flops: f64, floor: (f64, f64), ceil: &Ceilings) -> Result<Vec<SweepTime>> {
    let nd = asm.variant.elem_size();
    let check = ncells.min(64);
    let first_cells = |config: TiledConfig| -> Result<Vec<f64>> {
        let mut m = be.alloc::<f64>(check * config.storage().doubles(nd))?;
        asm.tiled_matrices_with(be, config, check, &mut m)?;
        crate::operator::level::full::schemes::full_on_host(be, &m, config.storage(), nd)
    };
    let want = first_cells(TiledConfig::default())?;
    let pick = |config: TiledConfig| if config.packed { (bytes.0, floor.0) } else { (bytes.1, floor.1) };
    let mut mats = be.alloc::<f64>(ncells * nd * nd)?;
    let mut out = Vec::new();
    let all = TiledConfig::sweep(asm.variant.nloc);
    let n = if shapes == 0 { all.len() } else { shapes.min(all.len()) };
    for &config in &all[..n] {
        let label = config.label();
        let t = timed(be, runs, || asm.tiled_matrices_with(be, config, ncells, &mut mats));
        let (timing, skipped) = match t {
            Ok(t) => (Some(t), None),
            Err(Error::Unsupported(why)) => (None, Some(why)),
            Err(e) => return Err(e),
        };
        let mut max_rel_diff = None;
        let (bytes, floor) = pick(config);
        if let Some(t) = &timing {
            guard(&format!("hex tiled {label}"), t, bytes, flops, ceil)?;
            max_rel_diff = Some(super::max_rel_diff(&want, &first_cells(config)?));
        }
        // Each shape's row as soon as it is measured (stderr), so a cut run still reports it.
        match &timing {
            Some(t) => {
                let (regs, local) = asm.tiled_resources(be, config).unwrap_or((-1, -1));
                eprintln!("sweep nloc {} {label}: {:.3} ms ({:.3}–{:.3}), {:.2}× floor, diff {:.1e}, {regs} registers, {local} B local", asm.variant.nloc, t.median * 1e3, t.min * 1e3, t.max * 1e3, t.median / floor, max_rel_diff.unwrap_or(f64::NAN))
            }
            None => eprintln!("sweep nloc {} {label}: skipped ({})", asm.variant.nloc, skipped.as_deref().unwrap_or("")),
        }
        out.push(SweepTime { config, label, over_floor: timing.as_ref().map(|t| t.median / floor), timing, skipped, max_rel_diff });
    }
    // The time split: the default shape with its staging, multiplies or writes left out. These
    // form no matrices, so neither the guard nor the comparison applies (`max_rel_diff` stays None).
    for config in TiledConfig::diagnostics(asm.variant.nloc) {
        let timing = timed(be, runs, || asm.tiled_matrices_with(be, config, ncells, &mut mats))?;
        eprintln!("split nloc {} {}: {:.3} ms", asm.variant.nloc, config.label(), timing.median * 1e3);
        out.push(SweepTime { config, label: config.label(), over_floor: Some(timing.median / pick(config).1), timing: Some(timing), skipped: None, max_rel_diff: None });
    }
    Ok(out)
}
