//! `galerkin bench --heat`: the seed's Table 2 — transient heat conduction in a heterogeneous cube
//! (6 P1 tetrahedra per grid cube, the seed's mesh), a fixed number of backward-Euler steps of
//! Jacobi-PCG warm-started from the previous temperature — for each assembly level on the CPU and
//! the GPU: total time of the steps, total PCG iterations and time per iteration.
//!
//! The timed region is [`HeatStepper::run`] itself, the resident time loop (the temperature and
//! both step operators already on the backend; on the GPU only the CG scalars come back), repeated
//! from the same initial state, median and spread. Bytes per PCG iteration: what the step operator
//! stores plus [`VECTOR_PASSES`] vector passes — a floor, checked against the copy bandwidth
//! measured in the same run (a figure above it fails the benchmark).
use super::skippable;
use super::timing::{cpu_ceiling_gbs, guarded_gbs, Clock, HostClock, Timing};
use crate::backend::cuda::bench::EventClock;
use crate::backend::cuda::CudaBackend;
use crate::mesh::{generate, ordering, CellType};
use crate::operator::{AssemblyLevel, FeBackend};
use crate::physics::Coefficient;
use crate::problem::heat::{HeatSetup, HeatStepper};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Vector passes of one PCG iteration with Jacobi, host-driven ([`crate::solver::cg`]): A p (read
/// p, write q), p·q, x += αp, r −= αq, z = D⁻¹r, r·z, p = z + βp.
pub const VECTOR_PASSES: usize = 18;
/// The same on a backend with the device-resident loop ([`crate::solver::jacobi_cg`]): A p (2),
/// p·q (2), the fused x, r update with r·D⁻¹r and r·r (5 reads, 2 writes), p = D⁻¹r + βp (3 + 1).
pub const RESIDENT_VECTOR_PASSES: usize = 15;

/// What to sweep.
#[derive(Clone, Debug)]
pub struct HeatBenchConfig {
    /// Approximate unknowns per row (P1: grid vertices).
    pub dofs: Vec<usize>,
    pub steps: usize,
    pub levels: Vec<AssemblyLevel>,
    /// The CPU runs only up to this many unknowns.
    pub cpu_max_dofs: usize,
    /// Timed repetitions of the whole time loop.
    pub runs: usize,
    /// Time step (s); the cube is 1 m with k ≈ 1, so 1e-3 makes a few tens of PCG iterations.
    pub dt: f64,
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct HeatRow {
    pub level: String,
    pub backend: String,
    pub dofs: usize,
    pub cells: usize,
    pub steps: usize,
    /// Building both step operators and the Jacobi diagonal (s).
    pub setup_s: f64,
    /// The whole time loop (s), over the timed runs.
    pub total: Option<Timing>,
    pub iterations: usize,
    pub seconds_per_iteration: f64,
    pub storage_bytes: usize,
    pub bytes_per_iteration: f64,
    pub gb_per_s: f64,
    pub copy_gb_per_s: f64,
    pub fraction_of_copy: f64,
    pub skipped: Option<String>,
}

/// The seed's kind of body: two materials (steel below z = ½, a poor conductor above, as in a
/// corroded plate), the bottom face held at 0, the rest insulated, everything at 1 at t = 0.
/// `lattice`: keep the generator's numbering (the fixed-grid `none` level needs it), else the
/// locality renumbering every other level gets by default.
pub fn heat_space(dofs: usize, lattice: bool) -> Result<Arc<FunctionSpace>> {
    let n = ((dofs as f64).cbrt().round() as usize).saturating_sub(1).max(2);
    let mut mesh = generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?;
    mesh.cell_tags = (0..mesh.num_cells())
        .map(|c| {
            let z: f64 = mesh.cell(c).iter().map(|&v| mesh.coords[v][2]).sum::<f64>() / 4.0;
            if z < 0.5 {
                1
            } else {
                2
            }
        })
        .collect();
    let mesh = if lattice { mesh } else { ordering::reorder_for_locality(&mesh)? };
    Ok(Arc::new(FunctionSpace::lagrange(Arc::new(mesh), 1, 1)?))
}

fn setup(dt: f64) -> HeatSetup {
    let table = |a: f64, b: f64| Coefficient::PerRegion(BTreeMap::from([(1, a), (2, b)]));
    HeatSetup { rhoc: table(1.0, 0.3), k: table(1.0, 0.05), zero_dirichlet: vec!["zmin".into()], dt, theta: 1.0 }
}

/// Runs the sweep; `row` sees each row as it completes. `gpu`: a device and its copy bandwidth.
pub fn run(cfg: &HeatBenchConfig, gpu: Option<(&CudaBackend, f64)>, mut row: impl FnMut(&HeatRow) -> Result<()>) -> Result<Vec<HeatRow>> {
    if cfg.steps == 0 || cfg.runs == 0 {
        return Err(Error::invalid("bench --heat needs at least one step and one run"));
    }
    let mut rows = Vec::new();
    for &dofs in &cfg.dofs {
        // Each numbering built only if a level asks for it (at 10⁷ unknowns one costs seconds).
        let (mut reordered, mut lattice) = (None, None);
        for &level in &cfg.levels {
            let (slot, keep) = if level == AssemblyLevel::None { (&mut lattice, true) } else { (&mut reordered, false) };
            let space: &Arc<FunctionSpace> = match slot {
                Some(s) => s,
                None => slot.insert(heat_space(dofs, keep)?),
            };
            let n = space.ndofs();
            if n <= cfg.cpu_max_dofs {
                let copy = cpu_ceiling_gbs(64 << 20, n * 8);
                let r = measure(&crate::backend::Cpu, &mut HostClock::default(), space, level, cfg, copy)?;
                row(&r)?;
                rows.push(r);
            }
            if let Some((be, copy)) = gpu {
                let mut clock = EventClock::new(be)?;
                let r = measure(be, &mut clock, space, level, cfg, copy)?;
                row(&r)?;
                rows.push(r);
            }
        }
    }
    Ok(rows)
}

fn measure<B: FeBackend>(be: &B, clock: &mut dyn Clock, space: &Arc<FunctionSpace>, level: AssemblyLevel, cfg: &HeatBenchConfig, copy_gbs: f64) -> Result<HeatRow> {
    let n = space.ndofs();
    let mut r = HeatRow {
        level: level.name().into(),
        backend: be.name().into(),
        dofs: n,
        cells: space.mesh.num_cells(),
        steps: cfg.steps,
        setup_s: 0.0,
        total: None,
        iterations: 0,
        seconds_per_iteration: 0.0,
        storage_bytes: 0,
        bytes_per_iteration: 0.0,
        gb_per_s: 0.0,
        copy_gb_per_s: copy_gbs,
        fraction_of_copy: 0.0,
        skipped: None,
    };
    let t = Instant::now();
    let stepper = match skippable(HeatStepper::new(be, space.clone(), &setup(cfg.dt), level))? {
        Ok(s) => s,
        Err(why) => {
            r.skipped = Some(why);
            return Ok(r);
        }
    };
    r.setup_s = t.elapsed().as_secs_f64();
    let initial = be.from_host(&vec![1.0; n])?;
    let mut samples = Vec::with_capacity(cfg.runs);
    // One untimed run first (kernel compilation, caches), then the timed ones from the same state.
    for run in 0..=cfg.runs {
        let mut temp = be.zeros(n)?;
        be.copy(&initial, &mut temp)?;
        stepper.set_time(0.0);
        clock.start()?;
        let its = stepper.run(&mut temp, cfg.steps)?;
        let s = clock.stop()?;
        if run > 0 {
            samples.push(s);
            r.iterations = its.iter().sum();
        }
    }
    if r.iterations == 0 {
        return Err(Error::invalid("bench --heat: the time loop took no PCG iteration; the problem is trivial"));
    }
    let total = Timing::from_samples(samples)?;
    let per = total.per(r.iterations);
    r.storage_bytes = stepper.storage_bytes();
    let passes = if be.has_resident_pcg() { RESIDENT_VECTOR_PASSES } else { VECTOR_PASSES };
    r.bytes_per_iteration = (stepper.implicit_storage_bytes() + passes * 8 * n) as f64;
    let what = format!("heat {} on {} ({n} unknowns)", level.name(), be.name());
    r.gb_per_s = guarded_gbs(&what, r.bytes_per_iteration, &per, copy_gbs)?;
    r.fraction_of_copy = r.gb_per_s / copy_gbs;
    r.seconds_per_iteration = per.median;
    r.total = Some(total);
    Ok(r)
}
