//! `galerkin bench --hyperelastic`: prints each row as it completes and keeps the JSON file
//! current (rewritten whole after every row).
use galerkin::hyperelastic::bench::{self, HyperBenchConfig, HyperRow};
use std::io::Write;
use std::path::PathBuf;

pub fn run(cfg: &HyperBenchConfig, gpu: bool, json: Option<PathBuf>) -> galerkin::Result<()> {
    let device = crate::gpu_with_banner(gpu)?;
    say!("law {}: clamped cube of P_k tetrahedra, dead body force, 1 nominal load step (halved and retried where it fails or stalls) of inexact Newton (Eisenstat–Walker) + CG with --hyper-precond (rtol ≥ 1e-8){};", cfg.law, if cfg.loads.is_empty() { String::new() } else { format!("; [loads] {}", cfg.loads.join(", ")) });
    say!("assembly: residual + Jacobian at the converged state, median of {} runs (spread (max − min)/median); floor: the GPU Jacobian assembly's bytes at the copy bandwidth", cfg.runs);
    say!("quadrature: {} (physics.quadrature)", cfg.quadrature.as_deref().unwrap_or("full"));
    say!(
        "{:<7} {:>2} {:>10} {:>9} {:>11} {:>9} {:>7} {:>9} {:>9} {:>6} {:>7} {:>9} {:>9} {:>7} {:>7}",
        "dev", "k", "dofs", "cells", "nnz", "asm s", "spread", "res s", "solve s", "CG its", "Newton", "run s", "s/step", "GB/s", "×floor"
    );
    let mut done = galerkin::io::JsonRows::<HyperRow>::new(json);
    bench::run(cfg, device.as_ref().map(|(be, c)| (be, *c)), |r| {
        match (&r.assembly, &r.residual, &r.skipped) {
            (Some(a), Some(res), _) => say!(
                "{:<7} {:>2} {:>10} {:>9} {:>11} {:>9.3e} {:>6.1}% {:>9.3e} {:>9.3e} {:>6} {:>7} {:>9.3e} {:>9.3e} {:>7.0} {:>7.2}",
                r.backend, r.degree, r.dofs, r.cells, r.nnz, a.median, 100.0 * a.spread(), res.median, r.linear_solve_s, r.linear_iterations,
                r.newton_iterations, r.whole_run_s, r.per_newton_step_s, r.gb_per_s, r.times_floor
            ),
            (Some(a), None, _) => say!(
                "{:<7} {:>2} {:>10} {:>9} {:>11} {:>9.3e} {:>6.1}% {:>9} {:>9} {:>6} {:>7} {:>9} {:>9} {:>7.0} {:>7.2}",
                r.backend, r.degree, r.dofs, r.cells, r.nnz, a.median, 100.0 * a.spread(), "-", "-", "-", "-", "-", "-", r.gb_per_s, r.times_floor
            ),
            (_, _, Some(why)) => say!("{:<7} {:>2} {:>10} skipped: {why}", r.backend, r.degree, r.dofs),
            _ => {}
        }
        if !r.scheme.is_empty() {
            say!("        kernel scheme: {}", r.scheme);
        }
        if !r.setup_phases.is_empty() {
            let list: Vec<String> = r.setup_phases.iter().map(|(n, s)| format!("{n} {s:.3}")).collect();
            say!("        setup {:.3} s: {}", r.setup_s, list.join(", "));
        }
        if let Some((up, zeroed)) = r.jacobian_allocation {
            say!("        jacobian allocation: pattern's zeros uploaded {up:.3} s, zeroed on the device {zeroed:.3} s");
        }
        say!("        preconditioner: {}{}", r.preconditioner, if r.levels.is_empty() { String::new() } else { format!(" (levels of {:?} unknowns)", r.levels) });
        if r.skipped.is_none() && r.newton_iterations > 0 {
            say!(
                "        Newton: {} iterations, {} CG iterations in all, {} load steps after {} cutbacks",
                r.newton_iterations, r.total_linear_iterations, r.load_steps, r.cutbacks
            );
        }
        done.push(r)
    })?;
    Ok(())
}

/// `galerkin bench --hyper-kernel-sweep`: prints each variant's line.
pub fn sweep(cfg: &HyperBenchConfig, only: &[String]) -> galerkin::Result<()> {
    let Some((be, copy)) = crate::gpu_with_banner(true)? else {
        return Err(galerkin::Error::Unsupported("--hyper-kernel-sweep needs a GPU".into()));
    };
    bench::kernel_sweep(cfg, &be, copy, only, |line| say!("{line}"))
}
