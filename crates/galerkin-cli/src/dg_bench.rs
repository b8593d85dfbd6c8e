//! `galerkin bench --dg`: printing and JSON of `galerkin::dg::bench`.
use galerkin::dg::bench::{self, DgBenchConfig, Timing};
use std::io::Write;
use std::path::PathBuf;

fn ms(t: &Option<Timing>) -> String {
    t.as_ref().map_or("-".into(), |t| format!("{:.3}", t.median * 1e3))
}

fn sum_ms(a: &Option<Timing>, b: &Option<Timing>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.3}", (a.median + b.median) * 1e3),
        _ => "-".into(),
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// One line per (N, k); CPU columns up to `cfg.cpu_max_elements`, GPU columns with `gpu`.
pub fn run(elements: &[usize], degrees: &[usize], cfg: &DgBenchConfig, gpu: bool, json: Option<PathBuf>) -> galerkin::Result<()> {
    let device = if gpu {
        galerkin::backend::cuda::probe().map_err(|why| galerkin::Error::Backend { backend: "cuda".into(), message: why })?;
        let be = galerkin::backend::cuda::CudaBackend::new(0)?;
        let bw = galerkin::backend::cuda::bench::bandwidth(&be)?;
        say!("gpu: {} — copy {:.0} GB/s, triad {:.0} GB/s (bytes read + written, measured now)", be.device().name, bw.copy_gbs, bw.triad_gbs);
        Some((be, bw.copy_gbs))
    } else {
        None
    };
    say!(
        "cpu: {} threads, stream triad {:.1} GB/s; times in ms, medians of {} runs (faer: ≤ 3)",
        rayon::current_num_threads(),
        galerkin::bench::stream_triad_gbs(1 << 24),
        cfg.repeats
    );
    say!(
        "{:>10} {:>2} {:>8} | {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>6} {:>8} {:>8} | {:>7} {:>7} {:>7} {:>7} {:>8} {:>15} {:>8} {:>5} {:>5} {:>5} {:>5} {:>3} {:>8} {:>8} {:>8}",
        "N", "k", "sample", "cpu asm", "thomas f", "thomas s", "cr f", "cr s", "faer f+s", "xfaer", "cg s/it", "L2 thom",
        "asm", "fac", "sol", "res", "total", "total min-max", "no-ref", "xflr", "asmGB", "facGB", "solGB", "lev", "cg s/it", "L2 gpu", "L2 noref"
    );
    let e = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1e}"));
    let mut rows = Vec::new();
    for &k in degrees {
        for &n in elements {
            let r = bench::run(n, k, cfg, device.as_ref().map(|(b, c)| (b, *c)))?;
            let g = r.gpu.as_ref();
            let gm = |f: fn(&bench::GpuRow) -> &Timing| g.map_or("-".into(), |g| format!("{:.3}", f(g).median * 1e3));
            say!(
                "{:>10} {:>2} {:>8.2} | {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>6} {:>8} {:>8} | {:>7} {:>7} {:>7} {:>7} {:>8} {:>15} {:>8} {:>5} {:>5} {:>5} {:>5} {:>3} {:>8} {:>8} {:>8}",
                r.elements,
                r.degree,
                r.host_sample_s * 1e3,
                ms(&r.cpu_assembly),
                ms(&r.thomas_factor),
                ms(&r.thomas_solve),
                ms(&r.cr_factor),
                ms(&r.cr_solve),
                sum_ms(&r.faer_lu_factor, &r.faer_lu_solve),
                opt(r.thomas_speedup_over_faer, 1),
                r.cpu_krylov.as_ref().map_or("-".into(), |c| format!("{:.2e}", c.seconds_per_iteration)),
                e(r.cpu_l2_error),
                gm(|g| &g.assembly),
                gm(|g| &g.factor),
                gm(|g| &g.solve),
                gm(|g| &g.residual),
                gm(|g| &g.total),
                g.map_or("-".into(), |g| format!("{:.3}-{:.3}", g.total.min * 1e3, g.total.max * 1e3)),
                gm(|g| &g.total_unrefined),
                opt(g.map(|g| g.total_over_floor), 1),
                opt(g.and_then(|g| g.assembly_gbs), 0),
                opt(g.and_then(|g| g.factor_gbs), 0),
                opt(g.and_then(|g| g.solve_gbs), 0),
                g.map_or("-".into(), |g| g.levels.to_string()),
                g.and_then(|g| g.krylov.as_ref()).map_or("-".into(), |c| format!("{:.2e}", c.seconds_per_iteration)),
                e(g.map(|g| g.l2_error)),
                e(g.map(|g| g.l2_error_unrefined)),
            );
            if let Some(why) = &r.gpu_skipped {
                say!("{:>10} {:>2}   gpu skipped: {why}", r.elements, r.degree);
            }
            rows.push(r);
            // Rewritten after every row, so a long sweep that fails late keeps what it measured.
            if let Some(path) = &json {
                galerkin::io::write_json(path, &rows)?;
            }
        }
    }
    Ok(())
}
