//! `galerkin bench --heat`: prints each row of the seed's Table 2 as it completes and keeps the
//! JSON file current (rewritten whole after every row).
use galerkin::bench::heat::{self, HeatBenchConfig, HeatRow};
use std::io::Write;
use std::path::PathBuf;

pub fn run(cfg: &HeatBenchConfig, gpu: bool, json: Option<PathBuf>) -> galerkin::Result<()> {
    let device = crate::gpu_with_banner(gpu)?;
    say!("{} backward-Euler steps, Jacobi-PCG (rtol 1e-10) warm-started; total: the whole time loop, median of {} runs (spread (max − min)/median);", cfg.steps, cfg.runs);
    say!(
        "bytes/it: the step operator's stored data + {} vector passes ({} with the device-resident PCG, {} with p·q inside the lattice apply, {} with the marching lattice's ring loop and {} with its fused loop, + {} node-code bytes); GB/s from the median, checked against the copy bandwidth",
        heat::VECTOR_PASSES,
        heat::RESIDENT_VECTOR_PASSES,
        heat::FUSED_VECTOR_PASSES,
        heat::RING_PCG_VECTOR_PASSES,
        heat::FUSED_PCG_VECTOR_PASSES,
        heat::PCG_CODE_BYTES
    );
    say!("lattice PCG loop (GALERKIN_GRID_PCG): {:?}", galerkin::operator::level::none::grid_cuda::pcg_loop());
    say!("none: the lattice built straight from the box (no mesh); the other levels on the mesh");
    say!(
        "{:<8} {:<5} {:>10} {:>10} {:>8} {:>10} {:>7} {:>8} {:>10} {:>11} {:>7} {:>6}",
        "level", "dev", "dofs", "cells", "setup s", "total s", "spread", "PCG its", "ms/it", "stored MB", "GB/s", "×copy"
    );
    let mut done = galerkin::io::JsonRows::<HeatRow>::new(json);
    heat::run(cfg, device.as_ref().map(|(be, c)| (be, *c)), |r| {
        match (&r.total, &r.skipped) {
            (Some(t), _) => say!(
                "{:<8} {:<5} {:>10} {:>10} {:>8.2} {:>10.3e} {:>6.1}% {:>8} {:>10.4} {:>11.1} {:>7.0} {:>6.2}",
                r.level, r.backend, r.dofs, r.cells, r.setup_s, t.median, 100.0 * t.spread(), r.iterations, 1e3 * r.seconds_per_iteration,
                r.storage_bytes as f64 / 1e6, r.gb_per_s, r.fraction_of_copy
            ),
            (None, Some(why)) => say!("{:<8} {:<5} {:>10} skipped: {why}", r.level, r.backend, r.dofs),
            (None, None) => {}
        }
        done.push(r)
    })?;
    Ok(())
}
