//! `galerkin bench --hex --mixed` (cells grouped by degree against the highest degree everywhere)
//! and `--hex --multi-gpu` (cells split between the visible GPUs); JSON rewritten whole per row.
use galerkin::bench::hex::HexBenchConfig;
use galerkin::bench::hex_parts::{self, MultiGpuRow};
use std::io::Write;
use std::path::PathBuf;

fn ms(t: &Option<galerkin::bench::timing::Timing>) -> String {
    t.as_ref().map_or("-".into(), |t| format!("{:.3}", 1e3 * t.median))
}

pub fn run(cfg: &HexBenchConfig, mixed: &str, json: Option<PathBuf>) -> galerkin::Result<()> {
    let degrees = hex_parts::parse_mixed(mixed)?;
    let (be, _) = crate::first_gpu()?;
    say!(
        "{} hexahedra (distorted, rotated) of degrees {:?} in equal slabs along x, hierarchical {:?} elasticity, {:?} quadrature; GPU: {}, median of {} runs (ms); CPU: {} threads",
        cfg.cells, degrees, cfg.modes, cfg.quadrature, be.device().name, cfg.runs, rayon::current_num_threads()
    );
    let r = hex_parts::run_mixed(cfg, &degrees, &be)?;
    say!("cells per degree {:?}, {} dofs", r.cells_per_degree, r.dofs);
    say!(
        "{:<26} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>14}",
        "", "sizes", "1 core s", "all s", "default", "I", "II", "III", "III+sum", "hybrid ms"
    );
    for w in &r.ways {
        let t = |k: usize| ms(&w.gpu[k].1);
        say!(
            "{:<26} {:>10} {:>10.3} {:>10.3} {:>9} {:>9} {:>9} {:>9} {:>10} {:>14}",
            w.way,
            w.elem_sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("+"),
            w.cpu_one_core_s, w.cpu_all_cores_s, t(0), t(1), t(2), t(3), ms(&w.assembly),
            w.hybrid_s.map_or("-".into(), |s| format!("{:.3} ({} cpu)", 1e3 * s, w.hybrid_cpu_cells))
        );
    }
    let mut done = galerkin::io::JsonRows::<hex_parts::MixedRow>::new(json);
    done.push(&r)
}

pub fn run_multi(cfg: &HexBenchConfig, json: Option<PathBuf>) -> galerkin::Result<()> {
    let devices = galerkin::backend::cuda::probe().map_err(|e| galerkin::Error::Unsupported(format!("--multi-gpu needs CUDA GPUs: {e}")))?;
    let gpus = devices.iter().map(|d| galerkin::backend::cuda::CudaBackend::new(d.ordinal)).collect::<galerkin::Result<Vec<_>>>()?;
    if gpus.is_empty() {
        return Err(galerkin::Error::Unsupported("--multi-gpu: no CUDA GPU".into()));
    }
    say!(
        "{} hexahedra (distorted, rotated), hierarchical {:?} elasticity, {:?} quadrature, scheme III split over 1…{} GPUs by measured speed; wall ms, median of {} runs",
        cfg.cells, cfg.modes, cfg.quadrature, gpus.len(), cfg.runs
    );
    say!("{:>2} {:>5} {:>22} {:>22} {:>12} {:>12}", "p", "gpus", "cells per gpu", "alone ms", "integrate", "+ sum");
    let mut done = galerkin::io::JsonRows::<MultiGpuRow>::new(json);
    hex_parts::run_multi_gpu(cfg, &gpus, |r| {
        say!(
            "{:>2} {:>5} {:>22} {:>22} {:>12.3} {:>12.3}",
            r.p, r.gpus, format!("{:?}", r.cells_per_gpu),
            r.alone_s.iter().map(|t| format!("{:.3}", 1e3 * t)).collect::<Vec<_>>().join(" "),
            1e3 * r.integrate.median, 1e3 * r.assemble.median
        );
        done.push(r)
    })?;
    Ok(())
}
