//! `galerkin bench --ceed`: prints each bake-off row as it completes, keeps the JSON file current
//! (rewritten whole after every row, so a sweep cut short still leaves its rows) and draws the plot.
use galerkin::bench::ceed::{self, CeedConfig, CeedRow};
use std::io::Write;
use std::path::PathBuf;

pub fn run(cfg: &CeedConfig, gpu: bool, json: Option<PathBuf>, plot: Option<PathBuf>) -> galerkin::Result<()> {
    let device = crate::gpu_with_banner(gpu)?;
    say!("DoF·it/s: unknowns × CG iterations per second of the resident loop (no preconditioner), median of the timed runs; spread (max − min)/median;");
    say!("bytes/it: the level's stored data + 17 vector passes; GB/s from the median, checked against the copy bandwidth");
    say!(
        "{:<4} {:<11} {:>2} {:>5} {:<7} {:<4} {:>10} {:>8} {:>10} {:>6} {:>10} {:>6} {:>11} {:>7} {:>6}",
        "bp", "cell", "p", "q", "level", "dev", "dofs", "setup s", "DoF·it/s", "spread", "s/it", "iters", "stored MB", "GB/s", "×copy"
    );
    let mut done = galerkin::io::JsonRows::<CeedRow>::new(json);
    let rows = ceed::run(cfg, device.as_ref().map(|(be, c)| (be, *c)), |r| {
        match (&r.cg, &r.skipped) {
            (Some(t), _) => say!(
                "{:<4} {:<11} {:>2} {:>5} {:<7} {:<4} {:>10} {:>8.2} {:>10.3e} {:>5.1}% {:>10.3e} {:>6} {:>11.1} {:>7.0} {:>6.2}",
                r.bp, r.cell, r.degree, r.points, r.level, r.backend, r.dofs, r.setup_s, r.dofs_it_per_s, 100.0 * t.spread(), t.median, r.iterations,
                r.storage_bytes as f64 / 1e6, r.gb_per_s, r.fraction_of_copy
            ),
            (None, Some(why)) => say!("{:<4} {:<11} {:>2} {:>5} {:<7} {:<4} {:>10} skipped: {why}", r.bp, r.cell, r.degree, r.points, r.level, r.backend, r.dofs),
            (None, None) => {}
        }
        done.push(r)
    })?;
    if let Some(path) = plot {
        ceed::plot(&path, &rows)?;
    }
    Ok(())
}
