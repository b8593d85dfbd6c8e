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
use crate::operator::level::none::direct::LatticeBox;
use crate::operator::level::none::grid_cuda;
use crate::problem::heat::lattice::{LatticeBackend, LatticeHeat, LatticeMaterial};
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
/// p·q (2), the fused r update with r·D⁻¹r and r·r (3 reads, 1 write), x += αp and p = D⁻¹r + βp
/// (4 reads, 2 writes).
pub const RESIDENT_VECTOR_PASSES: usize = 14;
/// The generic resident loop with p·q summed inside the apply (the z-marching lattice kernel,
/// `GALERKIN_GRID_PCG=off`): 12.
pub const FUSED_VECTOR_PASSES: usize = 12;
/// The marching lattice's ring loop (`grid_cuda` `pcg`, the default from
/// [`grid_cuda::MARCH_MIN_NODES`] nodes): A p with p·q (p read, q written), the update (q, r read,
/// r written), the direction (x, p, r read, x, p written; D⁻¹ per node code) — 10, plus a node-code
/// byte per node in each of the three kernels ([`PCG_CODE_BYTES`]; the apply's is in its storage).
pub const RING_PCG_VECTOR_PASSES: usize = 10;
/// The marching lattice's fused Jacobi-PCG (`GALERKIN_GRID_PCG=fused`: the direction update
/// inside the march, D⁻¹ per node code): r, p' read, p, q written, x read and written in the
/// march; q, r read and r written in the update — 9, plus a code byte per node in each.
pub const FUSED_PCG_VECTOR_PASSES: usize = 9;
/// Node-code bytes per node the lattice's loops read besides the apply's (update, direction or
/// fetch), counted in their bytes model.
pub const PCG_CODE_BYTES: usize = 2;

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

/// The same body as a lattice box (`none` built straight from the box, no mesh): the cell
/// materials from the same centroid rule, indices into [`lattice_materials`].
pub fn heat_box(dofs: usize) -> Result<(LatticeBox, Vec<u8>)> {
    let n = ((dofs as f64).cbrt().round() as usize).saturating_sub(1).max(2);
    let bx = LatticeBox::new([n; 3], [0.0; 3], [1.0; 3], CellType::Tetrahedron)?;
    let material = bx.cell_materials(|c| Ok(if c[2] < 0.5 { 0 } else { 1 }))?;
    Ok((bx, material))
}

/// ρc and k of the two materials of [`heat_box`] (those of `setup`'s regions 1 and 2).
pub fn lattice_materials() -> [LatticeMaterial; 2] {
    [LatticeMaterial { rhoc: 1.0, k: 1.0 }, LatticeMaterial { rhoc: 0.3, k: 0.05 }]
}

fn setup(dt: f64) -> HeatSetup {
    let table = |a: f64, b: f64| Coefficient::PerRegion(BTreeMap::from([(1, a), (2, b)]));
    HeatSetup { rhoc: table(1.0, 0.3), k: table(1.0, 0.05), zero_dirichlet: vec!["zmin".into()], dt, theta: 1.0 }
}

/// What a row times: the stepper on a mesh, or the lattice built straight from the box (`none`).
enum Body<'a> {
    Mesh(&'a Arc<FunctionSpace>),
    Lattice(&'a LatticeBox, &'a [u8]),
}

/// The time loop of either body.
enum Loop<'b, B: FeBackend + LatticeBackend> {
    Mesh(HeatStepper<'b, B>),
    Lattice(LatticeHeat<'b, B>),
}

impl<B: FeBackend + LatticeBackend> Loop<'_, B> {
    fn run(&self, t: &mut B::Vector, steps: usize) -> Result<Vec<usize>> {
        match self {
            Loop::Mesh(s) => {
                s.set_time(0.0);
                s.run(t, steps)
            }
            Loop::Lattice(l) => l.run(t, steps),
        }
    }
    fn storage_bytes(&self) -> usize {
        match self {
            Loop::Mesh(s) => s.storage_bytes(),
            Loop::Lattice(l) => l.storage_bytes(),
        }
    }
    fn implicit_storage_bytes(&self) -> usize {
        match self {
            Loop::Mesh(s) => s.implicit_storage_bytes(),
            Loop::Lattice(l) => l.implicit_storage_bytes(),
        }
    }
}

/// Runs the sweep; `row` sees each row as it completes. `gpu`: a device and its copy bandwidth.
/// `none` runs on the lattice built straight from the box (no mesh: what lets it reach 5·10⁷
/// unknowns); the other levels on the mesh.
pub fn run(cfg: &HeatBenchConfig, gpu: Option<(&CudaBackend, f64)>, mut row: impl FnMut(&HeatRow) -> Result<()>) -> Result<Vec<HeatRow>> {
    if cfg.steps == 0 || cfg.runs == 0 {
        return Err(Error::invalid("bench --heat needs at least one step and one run"));
    }
    let mut rows = Vec::new();
    for &dofs in &cfg.dofs {
        // Each body built only if a level asks for it (at 10⁷ unknowns a mesh costs seconds).
        let (mut reordered, mut lattice) = (None, None);
        for &level in &cfg.levels {
            let body = if level == AssemblyLevel::None {
                let (bx, material) = match &lattice {
                    Some(l) => l,
                    None => lattice.insert(heat_box(dofs)?),
                };
                Body::Lattice(bx, material)
            } else {
                Body::Mesh(match &reordered {
                    Some(s) => s,
                    None => reordered.insert(heat_space(dofs, false)?),
                })
            };
            let n = match body {
                Body::Mesh(s) => s.ndofs(),
                Body::Lattice(bx, _) => bx.ndofs(),
            };
            if n <= cfg.cpu_max_dofs {
                let copy = cpu_ceiling_gbs(64 << 20, n * 8);
                let r = measure(&crate::backend::Cpu, &mut HostClock::default(), &body, level, cfg, copy)?;
                row(&r)?;
                rows.push(r);
            }
            if let Some((be, copy)) = gpu {
                let mut clock = EventClock::new(be)?;
                let r = measure(be, &mut clock, &body, level, cfg, copy)?;
                row(&r)?;
                rows.push(r);
            }
        }
    }
    Ok(rows)
}

fn measure<B: FeBackend + LatticeBackend>(be: &B, clock: &mut dyn Clock, body: &Body, level: AssemblyLevel, cfg: &HeatBenchConfig, copy_gbs: f64) -> Result<HeatRow> {
    let (n, cells) = match body {
        Body::Mesh(s) => (s.ndofs(), s.mesh.num_cells()),
        Body::Lattice(bx, _) => (bx.ndofs(), bx.ncells()),
    };
    let mut r = HeatRow {
        level: level.name().into(),
        backend: be.name().into(),
        dofs: n,
        cells,
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
    let built = match body {
        Body::Mesh(space) => skippable(HeatStepper::new(be, (*space).clone(), &setup(cfg.dt), level))?.map(Loop::Mesh),
        Body::Lattice(bx, material) => {
            skippable(LatticeHeat::new(be, bx, material.to_vec(), &lattice_materials(), &["zmin"], cfg.dt, 1.0))?.map(Loop::Lattice)
        }
    };
    let stepper = match built {
        Ok(s) => s,
        Err(why) => {
            r.skipped = Some(why);
            return Ok(r);
        }
    };
    r.setup_s = t.elapsed().as_secs_f64();
    let initial = be.from_host(&vec![1.0; n])?;
    let mut samples = Vec::with_capacity(cfg.runs);
    let lattice_its = grid_cuda::fused_iterations();
    // One untimed run first (kernel compilation, caches), then the timed ones from the same state.
    for run in 0..=cfg.runs {
        let mut temp = be.zeros(n)?;
        be.copy(&initial, &mut temp)?;
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
    // The lattice's own loop (ring or fused) counted only where it ran every iteration.
    let own_loop = grid_cuda::fused_iterations() - lattice_its >= (cfg.runs + 1) * r.iterations;
    let passes = match (be.has_resident_pcg(), matches!(body, Body::Lattice(bx, _) if grid_cuda::fuses_dot(bx.points()))) {
        (false, _) => VECTOR_PASSES,
        (true, false) => RESIDENT_VECTOR_PASSES,
        (true, true) if !own_loop => FUSED_VECTOR_PASSES,
        (true, true) => match grid_cuda::pcg_loop() {
            grid_cuda::PcgLoop::Generic => FUSED_VECTOR_PASSES,
            grid_cuda::PcgLoop::Ring => RING_PCG_VECTOR_PASSES,
            grid_cuda::PcgLoop::Fused => FUSED_PCG_VECTOR_PASSES,
        },
    };
    let code_bytes = if passes < FUSED_VECTOR_PASSES { PCG_CODE_BYTES } else { 0 };
    r.bytes_per_iteration = (stepper.implicit_storage_bytes() + (passes * 8 + code_bytes) * n) as f64;
    let what = format!("heat {} on {} ({n} unknowns)", level.name(), be.name());
    r.gb_per_s = guarded_gbs(&what, r.bytes_per_iteration, &per, copy_gbs)?;
    r.fraction_of_copy = r.gb_per_s / copy_gbs;
    r.seconds_per_iteration = per.median;
    r.total = Some(total);
    Ok(r)
}
