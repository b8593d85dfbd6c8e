//! `galerkin bench --hex --mixed` and `--multi-gpu`: element matrices of hierarchical elasticity
//! hexahedra integrated in parts.
//! - **Mixed degrees** (the seed's half p = 1, half p = 3 mesh, split by x): the cells grouped by
//!   degree, each group with its own element ([`crate::operator::degree_groups`]), against the
//!   variable-degree space's highest degree in every cell: CPU one core and all cores, every GPU
//!   scheme, assembly (integration and summation into the one matrix, colour by colour) and the
//!   hybrid CPU + GPU split per group.
//! - **Several GPUs**: the cells split between the first 1, 2, … visible GPUs in proportion to
//!   their measured speeds, each integrating its share (scheme III) and summing it into its own
//!   partial matrix, all at once; wall time of the integration alone and with the summation.
use super::hex::{bench_mesh, integrate_cells};
use super::timing::{Clock, HostClock, Timing};
use crate::backend::cuda::bench::timed;
use crate::backend::cuda::CudaBackend;
use crate::operator::degree_groups::degree_groups;
use crate::operator::level::element::packed::Storage;
use crate::operator::level::full::cuda::DeviceAssembler;
use crate::operator::level::full::parts::{MultiGpuAssembler, PartsAssembler};
use crate::operator::level::{Integration, Scatter, Tuning};
use crate::operator::local_matrix::LocalMatrices;
use crate::operator::ElementIntegrator;
use crate::physics::Elasticity;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One way of integrating the mixed mesh: grouped by degree, or the highest degree everywhere.
#[derive(Clone, Debug, Serialize)]
pub struct MixedWay {
    pub way: String,
    /// Element matrix sizes (per group).
    pub elem_sizes: Vec<usize>,
    pub cpu_one_core_s: f64,
    pub cpu_all_cores_s: f64,
    /// (scheme, median time for all cells) per GPU scheme; `None` where unsupported.
    pub gpu: Vec<(String, Option<Timing>)>,
    /// Scheme III and the summation into the CSR values, colour by colour.
    pub assembly: Option<Timing>,
    /// Hybrid: cells on the CPU and the wall time (best of the runs).
    pub hybrid_cpu_cells: usize,
    pub hybrid_s: Option<f64>,
}

/// The mixed-degree row.
#[derive(Clone, Debug, Serialize)]
pub struct MixedRow {
    pub degrees: Vec<usize>,
    pub cells_per_degree: Vec<usize>,
    pub dofs: usize,
    pub cpu_threads: usize,
    pub ways: Vec<MixedWay>,
}


/// CPU seconds for all cells of each of `locals` (timed on at most `cap` cells each, scaled) with
/// `threads` threads.
fn cpu_seconds(locals: &[(LocalMatrices, usize)], cap: usize, threads: usize) -> Result<f64> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| Error::invalid(format!("thread pool: {e}")))?;
    let mut total = 0.0;
    for (local, n) in locals {
        let m = cap.clamp(1, (*n).max(1)).min(*n);
        if m == 0 {
            continue;
        }
        let mut clock = HostClock::default();
        clock.start()?;
        pool.install(|| integrate_cells(local, 0..m, Storage::Full))?;
        total += clock.stop()? * *n as f64 / m as f64;
    }
    Ok(total)
}

/// The mixed-degree row: `degrees` (e.g. [1, 3]) on `cfg.cells` cells in equal slabs along x.
pub fn run_mixed(cfg: &super::hex::HexBenchConfig, degrees: &[usize], be: &CudaBackend) -> Result<MixedRow> {
    if degrees.is_empty() {
        return Err(Error::invalid("--mixed needs at least one degree, e.g. 1,3"));
    }
    let mesh = Arc::new(bench_mesh(cfg.cells)?);
    let ncells = mesh.num_cells();
    let xmax = mesh.coords.iter().map(|x| x[0]).fold(f64::MIN, f64::max);
    let per_cell: Vec<usize> = (0..ncells)
        .map(|c| {
            let x: f64 = mesh.cell(c).iter().map(|&v| mesh.coords[v][0]).sum::<f64>() / 8.0;
            degrees[((x / xmax * degrees.len() as f64) as usize).min(degrees.len() - 1)]
        })
        .collect();
    let space = FunctionSpace::hierarchical_variable(mesh.clone(), &per_cell, cfg.modes, 3)?;
    let groups = degree_groups(&space, &per_cell, cfg.modes)?;
    let physics = Elasticity::lame(1.2e5, 8.0e4, 3);
    let pattern = crate::operator::assemble::sparsity(&space)?;
    let threads = rayon::current_num_threads();
    let one_cap = (cfg.cpu_cells / threads.max(1)).max(1);
    let mut ways = Vec::new();
    // Grouped by degree.
    {
        let parts: Vec<&FunctionSpace> = groups.iter().map(|g| &g.space).collect();
        let integs = parts.iter().map(|s| ElementIntegrator::with_quadrature(s, &physics, None, cfg.quadrature)).collect::<Result<Vec<_>>>()?;
        let locals: Vec<(LocalMatrices, usize)> = integs.iter().map(|i| (LocalMatrices::new(i), i.space.mesh.num_cells())).collect();
        let one = cpu_seconds(&locals, one_cap, 1)?;
        let all = cpu_seconds(&locals, cfg.cpu_cells, threads)?;
        let mut asm = PartsAssembler::new(be, &parts, &physics, cfg.quadrature, &pattern, Scatter::Colored)?;
        let mut gpu = Vec::new();
        for scheme in Integration::ALL {
            let runs = if scheme == Integration::ThreadPerCell { cfg.runs.min(3) } else { cfg.runs };
            let t = match asm.unsupported(scheme) {
                Some(_) => None,
                None => Some(timed(be, runs, || asm.integrate(be, scheme))?),
            };
            gpu.push((scheme.name().to_string(), t));
        }
        let assembly = Some(timed(be, cfg.runs, || asm.assemble(be, Integration::Tiled))?);
        // Hybrid: per group, the CPU takes its last cells in proportion to the speeds.
        let tiled = gpu.iter().find(|g| g.0 == Integration::Tiled.name()).and_then(|g| g.1.clone());
        let (mut hybrid_cpu_cells, mut hybrid_s) = (0, None);
        if let Some(tg) = tiled {
            let (rg, rc) = (ncells as f64 / tg.median, ncells as f64 / all);
            let counts: Vec<usize> = locals.iter().map(|(_, n)| *n - ((*n as f64 * rc / (rg + rc)).round() as usize).min(*n)).collect();
            hybrid_cpu_cells = locals.iter().zip(&counts).map(|((_, n), g)| n - g).sum();
            let mut best = f64::INFINITY;
            for _ in 0..cfg.runs.min(5) {
                be.synchronize()?;
                let t0 = Instant::now();
                asm.integrate_first(be, Integration::Tiled, &counts)?;
                for (((local, n), &g), part) in locals.iter().zip(&counts).zip(&asm.parts) {
                    integrate_cells(local, g..*n, part.storage)?;
                }
                be.synchronize()?;
                best = best.min(t0.elapsed().as_secs_f64());
            }
            hybrid_s = Some(best);
        }
        ways.push(MixedWay {
            way: "grouped by degree".into(),
            elem_sizes: integs.iter().map(|i| i.elem_size()).collect(),
            cpu_one_core_s: one,
            cpu_all_cores_s: all,
            gpu,
            assembly,
            hybrid_cpu_cells,
            hybrid_s,
        });
    }
    // The highest degree in every cell (the variable-degree space as it is).
    {
        let integ = ElementIntegrator::with_quadrature(&space, &physics, None, cfg.quadrature)?;
        let locals = vec![(LocalMatrices::new(&integ), ncells)];
        let one = cpu_seconds(&locals, one_cap, 1)?;
        let all = cpu_seconds(&locals, cfg.cpu_cells, threads)?;
        let asm = DeviceAssembler::new(be, &integ, &Vec::new(), Tuning::default())?;
        let nd = integ.elem_size();
        let mut mats = be.alloc::<f64>(ncells * nd * nd)?;
        let mut gpu = Vec::new();
        for scheme in Integration::ALL {
            let runs = if scheme == Integration::ThreadPerCell { cfg.runs.min(3) } else { cfg.runs };
            let t = match asm.scheme_unsupported(scheme) {
                Some(_) => None,
                None => Some(timed(be, runs, || asm.scheme_matrices_into(be, scheme, &mut mats))?),
            };
            gpu.push((scheme.name().to_string(), t));
        }
        let colors = crate::operator::coloring::cell_colors(&mesh);
        let mut target = asm.csr_target(be, &pattern, Scatter::Colored, Some(&colors))?;
        let assembly = Some(timed(be, cfg.runs, || {
            asm.scheme_matrices_into(be, Integration::Tiled, &mut mats)?;
            asm.scatter_matrices(be, &mats, asm.storage(Integration::Tiled), &mut target)
        })?);
        ways.push(MixedWay {
            way: format!("degree {} everywhere", degrees.iter().max().copied().unwrap_or(1)),
            elem_sizes: vec![nd],
            cpu_one_core_s: one,
            cpu_all_cores_s: all,
            gpu,
            assembly,
            hybrid_cpu_cells: 0,
            hybrid_s: None,
        });
    }
    Ok(MixedRow {
        degrees: groups.iter().map(|g| g.degree).collect(),
        cells_per_degree: groups.iter().map(|g| g.cells.len()).collect(),
        dofs: space.ndofs(),
        cpu_threads: threads,
        ways,
    })
}

/// One multi-GPU row: degree p on the first `gpus` GPUs.
#[derive(Clone, Debug, Serialize)]
pub struct MultiGpuRow {
    pub p: usize,
    pub gpus: usize,
    pub devices: Vec<String>,
    pub cells_per_gpu: Vec<usize>,
    /// Scheme III on each GPU alone, all cells (what the split is proportioned by).
    pub alone_s: Vec<f64>,
    /// Wall time of every GPU integrating its share at once (median over the runs).
    pub integrate: Timing,
    /// The same with each GPU summing its share into its partial matrix.
    pub assemble: Timing,
}

/// Median wall time of `runs` runs of `multi` (after one warm-up).
fn multi_timing(multi: &mut MultiGpuAssembler, runs: usize, sum: bool) -> Result<Timing> {
    multi.run(Integration::Tiled, sum)?;
    let samples = (0..runs.max(1)).map(|_| multi.run(Integration::Tiled, sum)).collect::<Result<Vec<_>>>()?;
    Timing::from_samples(samples)
}

/// The multi-GPU rows for every degree of `cfg`: 1, 2, … of the `gpus`.
pub fn run_multi_gpu(cfg: &super::hex::HexBenchConfig, gpus: &[CudaBackend], mut row: impl FnMut(&MultiGpuRow) -> Result<()>) -> Result<Vec<MultiGpuRow>> {
    let mesh = Arc::new(bench_mesh(cfg.cells)?);
    let physics = Elasticity::lame(1.2e5, 8.0e4, 3);
    let mut rows = Vec::new();
    for &p in &cfg.degrees {
        let space = FunctionSpace::hierarchical(mesh.clone(), p, cfg.modes, 3)?;
        let integ = ElementIntegrator::with_quadrature(&space, &physics, None, cfg.quadrature)?;
        let nd = integ.elem_size();
        let ncells = mesh.num_cells();
        // Each GPU alone on all cells: its speed.
        let mut alone = Vec::new();
        for be in gpus {
            let asm = DeviceAssembler::new(be, &integ, &Vec::new(), Tuning::default())?;
            let mut mats = be.alloc::<f64>(ncells * nd * nd)?;
            alone.push(timed(be, cfg.runs, || asm.scheme_matrices_into(be, Integration::Tiled, &mut mats))?.median);
        }
        let pattern = crate::operator::assemble::sparsity(&space)?;
        for n in 1..=gpus.len() {
            let speeds: Vec<f64> = alone[..n].iter().map(|t| 1.0 / t).collect();
            let mut multi = MultiGpuAssembler::new(&gpus[..n], &space, &physics, cfg.quadrature, &pattern, Scatter::Colored, &speeds)?;
            let integrate = multi_timing(&mut multi, cfg.runs, false)?;
            let assemble = multi_timing(&mut multi, cfg.runs, true)?;
            let r = MultiGpuRow {
                p,
                gpus: n,
                devices: gpus[..n].iter().map(|b| format!("{} (#{})", b.device().name, b.device().ordinal)).collect(),
                cells_per_gpu: multi.cells.iter().map(Vec::len).collect(),
                alone_s: alone[..n].to_vec(),
                integrate,
                assemble,
            };
            row(&r)?;
            rows.push(r);
        }
    }
    Ok(rows)
}

/// Parses `--mixed` (e.g. `1,3`).
pub fn parse_mixed(s: &str) -> Result<Vec<usize>> {
    s.split(',')
        .map(|d| {
            let p = d.trim().parse::<usize>().map_err(|_| Error::invalid(format!("--mixed: degree `{d}` is not a whole number (e.g. --mixed 1,3)")))?;
            if !(1..=crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE).contains(&p) {
                return Err(Error::invalid(format!("--mixed: degree {p} is outside 1..={}", crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE)));
            }
            Ok(p)
        })
        .collect()
}
