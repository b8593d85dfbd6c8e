//! `galerkin bench --hex`: prints each degree's row of the element-matrix table as it completes and
//! keeps the JSON file current (rewritten whole after every row).
use galerkin::bench::hex::{self, HexBenchConfig, HexRow};
use std::io::Write;
use std::path::PathBuf;

fn ms(t: &Option<galerkin::bench::timing::Timing>) -> String {
    t.as_ref().map_or("-".into(), |t| format!("{:.3}", 1e3 * t.median))
}

/// `bench --hex`: the uniform-degree table, or with `mixed` the mixed-degree rows, or with
/// `multi_gpu` the split over every visible GPU.
pub fn dispatch(cfg: &HexBenchConfig, mixed: Option<&str>, multi_gpu: bool, json: Option<PathBuf>) -> galerkin::Result<()> {
    match (mixed, multi_gpu) {
        (Some(m), _) => crate::hex_mixed_bench::run(cfg, m, json),
        (None, true) => crate::hex_mixed_bench::run_multi(cfg, json),
        (None, false) => run(cfg, json),
    }
}

pub fn run(cfg: &HexBenchConfig, json: Option<PathBuf>) -> galerkin::Result<()> {
    let (be, _) = crate::first_gpu()?;
    say!(
        "{} hexahedra (distorted, rotated), hierarchical {:?} elasticity, {:?} quadrature; GPU times: median of {} runs (ms); CPU: {} threads",
        cfg.cells, cfg.modes, cfg.quadrature, cfg.runs, rayon::current_num_threads()
    );
    let mut done = galerkin::io::JsonRows::<HexRow>::new(json);
    let mut header = false;
    hex::run(cfg, &be, |c, r| {
        if !header {
            say!(
                "gpu: {} — copy {:.0} GB/s, FP64 FMA {:.0} GFLOP/s, FP64 tensor cores {:.0} GFLOP/s (fastest shape; measured in this run: {})",
                c.device, c.copy_gbs, c.fma_gflops, c.dmma_gflops,
                c.dmma_shapes.iter().map(|(n, r)| format!("{n} {r:.0}")).collect::<Vec<_>>().join(", ")
            );
            say!("III: packed upper triangles (the default); III/flr against the packed floor, /full flr against full matrices' floor (rounds 1–8); III full: the full-storage kernel, against the full floor; colored, atomic: summing III's stored matrices");
            say!(
                "{:>2} {:>5} {:>4} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>9}",
                "p", "size", "nq", "dofs", "1 core s", "all s", "default", "I", "II", "III", "III/flr", "/full flr", "III full", "/full flr", "colored", "atomic", "col full", "fused", "×1core", "hybrid ms"
            );
            header = true;
        }
        let t = |k: usize| ms(&r.gpu[k].timing);
        let best = r.gpu.iter().filter_map(|g| g.vs_one_core).fold(0.0, f64::max);
        let ratio = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2}"));
        say!(
            "{:>2} {:>5} {:>4} {:>9} {:>10.3} {:>10.3} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7.0} {:>9}",
            r.p, r.elem_size, r.points, r.dofs, r.cpu_one_core_s, r.cpu_all_cores_s, t(0), t(1), t(2), t(3),
            ratio(r.tiled_over_floor), ratio(r.tiled_over_full_floor), ms(&r.tiled_full), ratio(r.tiled_full_over_full_floor),
            ms(&r.scatter_colored), ms(&r.scatter_atomic), ms(&r.scatter_colored_full), ms(&r.fused_atomic), best,
            r.hybrid_s.map_or("-".into(), |s| format!("{:.3} ({} cpu)", 1e3 * s, r.hybrid_cpu_cells))
        );
        say!(
            "   floors: packed {:.3} ms ({:.3e} bytes), full {:.3} ms ({:.3e} bytes), moment flops {:.3e}",
            1e3 * r.floor_s, r.bytes_written, 1e3 * r.floor_full_s, r.bytes_full, r.moment_flops
        );
        if let (Some(l1), Some(lg), Some(w)) = (&r.launch_empty, &r.launch_empty_grid, &r.write_only) {
            say!(
                "   fixed costs: empty launch {:.4} ms (1 block), {:.4} ms (III's grid, {} blocks); write-only {:.4} ms ({:.0} GB/s); III/(floor + empty launch) {}",
                1e3 * l1.median, 1e3 * lg.median, r.empty_grid_blocks, 1e3 * w.median, r.bytes_written / w.median * 1e-9, ratio(r.tiled_over_floor_plus_launch)
            );
        }
        if let Some(a) = &r.tiled_after_others {
            say!(
                "   III timed first (the table's, since round 18): {} ms; again after the other schemes: {:.3} ms ({:.3}–{:.3}), {:.2}× floor",
                t(3), 1e3 * a.median, 1e3 * a.min, 1e3 * a.max, a.median / r.floor_s
            );
        }
        for g in &r.gpu {
            if let Some(why) = &g.skipped {
                say!("   {} skipped: {why}", g.scheme);
            }
        }
        for w in &r.tiled_sweep {
            match (&w.timing, &w.skipped) {
                (Some(t), _) if w.config.skip != 0 => say!(
                    "   III {:<44} {:>9.3} ms  {:>5.2}× floor  (time split: no matrices formed)",
                    w.label, 1e3 * t.median, w.over_floor.unwrap_or(f64::NAN)
                ),
                (Some(t), _) => say!(
                    "   III {:<44} {:>9.3} ms  {:>5.2}× floor  (spread {:.3}–{:.3}; max rel. diff from 8w table {:.1e})",
                    w.label, 1e3 * t.median, w.over_floor.unwrap_or(f64::NAN), 1e3 * t.min, 1e3 * t.max, w.max_rel_diff.unwrap_or(f64::NAN)
                ),
                (None, Some(why)) => say!("   III {:<44} skipped: {why}", w.label),
                _ => {}
            }
        }
        done.push(r)
    })?;
    Ok(())
}

/// `bench --hex --levels`: CG per iteration at each level, a row per (degree, physics, level).
pub fn levels(cfg: &HexBenchConfig, levels: &[galerkin::operator::AssemblyLevel], json: Option<PathBuf>) -> galerkin::Result<()> {
    let (be, _) = crate::first_gpu()?;
    say!(
        "{} hexahedra (distorted, rotated), hierarchical {:?}, CG per iteration (Jacobi) at each level: median [q1, q3] of {} runs of 20 (ms)",
        cfg.cells, cfg.modes, cfg.runs
    );
    say!("{:>2} {:>10} {:>8} {:>9} {:>9} {:>24} {:>9} {:>10} {:>9}", "p", "physics", "dofs", "level", "setup s", "CG ms/iteration", "MB", "floor ms", "/floor");
    let mut done = galerkin::io::JsonRows::<galerkin::bench::hex_levels::HexLevelRow>::new(json);
    galerkin::bench::hex_levels::run(cfg, levels, &be, |r| {
        match (&r.cg, &r.skipped) {
            (Some(t), _) => say!(
                "{:>2} {:>10} {:>8} {:>9} {:>9.2} {:>9.3} [{:.3}, {:.3}] {:>9.1} {:>10.3} {:>9.2}",
                r.p, r.physics, r.dofs, r.level, r.setup_s, 1e3 * t.median, 1e3 * t.q1, 1e3 * t.q3,
                r.storage_bytes as f64 / 1e6, 1e3 * r.storage_floor_s, t.median / r.storage_floor_s.max(1e-30)
            ),
            (None, s) => say!("{:>2} {:>10} {:>8} {:>9} skipped: {}", r.p, r.physics, r.dofs, r.level, s.as_deref().unwrap_or("-")),
        }
        std::io::stdout().flush().ok();
        done.push(r)
    })?;
    Ok(())
}
