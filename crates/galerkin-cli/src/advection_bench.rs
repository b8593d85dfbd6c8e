//! `galerkin bench --advection`: prints each row of `galerkin::advection::bench` as it completes,
//! with the speed-up of every whole run over one CPU core, and keeps the JSON file current.
use galerkin::advection::bench::{self, AdvectionBenchConfig, AdvectionRow};
use std::io::Write;
use std::path::PathBuf;

pub fn run(cfg: &AdvectionBenchConfig, gpu: bool, json: Option<PathBuf>) -> galerkin::Result<()> {
    let device = crate::gpu_with_banner(gpu)?;
    say!(
        "curved inflow-outflow flow, P_k triangles, GMRES(50) + element block Jacobi to rtol {:.0e}; seconds, medians of {} whole runs ({} on one core) (spread (max − min)/median);",
        cfg.rtol,
        cfg.repeats,
        cfg.single_core_repeats
    );
    say!("setup: mesh + facet connectivity (host); assembly: GPU upload + pattern + values; solve: preconditioner + GMRES + solution to host");
    say!(
        "{:<7} {:>2} {:>10} {:>9} {:>11} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9}",
        "backend", "k", "dofs", "cells", "nnz", "its", "setup", "assembly", "solve", "total", "spread", "asm ×1c", "total ×1c"
    );
    let mut done = galerkin::io::JsonRows::<AdvectionRow>::new(json);
    let line = |r: &AdvectionRow, x: (String, String)| {
        say!(
            "{:<7} {:>2} {:>10} {:>9} {:>11} {:>6} {:>9.4} {:>9.4} {:>9.4} {:>9.4} {:>6.1}% {:>9} {:>9}",
            r.backend, r.degree, r.dofs, r.cells, r.nnz, r.iterations, r.setup.median, r.assembly.median, r.solve.median, r.total.median,
            100.0 * r.total.spread(), x.0, x.1
        )
    };
    let rows = bench::run(cfg, device.as_ref().map(|(be, _)| be), |r| {
        line(r, ("-".into(), "-".into()));
        done.push(r)
    })?;
    // Again with the speed-up of each run over the one-core run of its size and degree.
    say!("speed-ups over one CPU core (assembly, whole run):");
    for r in &rows {
        if let Some(b) = rows.iter().find(|b| b.backend == "cpu-1" && b.dofs == r.dofs && b.degree == r.degree) {
            line(r, (format!("{:.1}", b.assembly.median / r.assembly.median), format!("{:.1}", b.total.median / r.total.median)));
        }
    }
    Ok(())
}
