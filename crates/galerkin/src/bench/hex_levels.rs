//! `galerkin bench --hex --levels full,partial,…`: the CG iteration of hierarchical hexahedra at
//! each assembly level on the GPU — elasticity and Poisson on the `bench --hex` mesh (distorted,
//! rotated), clamped at x = 0 — as the resident loop of [`super::cg_loop`] (Jacobi from the level's
//! own diagonal), timed by CUDA events: `full` assembled by scheme III and summed into the CSR
//! matrix (one SpMV per iteration), `partial` and `none` applying the basis by sum factorization
//! through its signed tensor slots (`operator::level::partial::tensor_of`). The device's copy
//! bandwidth is measured in the same run and each iteration's compulsory bytes (the stored
//! matrix or quadrature data, read once) reported against it.
use super::cg_loop::time_cg;
use super::hex::{bench_mesh, HexBenchConfig};
use super::timing::Timing;
use crate::backend::cuda::bench::{bandwidth, EventClock};
use crate::backend::cuda::CudaBackend;
use crate::solver::precond::Preconditionable;
use crate::operator::level::{AssemblyLevel, Integration, Tuning};
use crate::physics::{Diffusion, Elasticity, PointwisePhysics};
use crate::problem::LinearProblem;
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// CG iterations per timed run.
const ITERATIONS: usize = 20;

/// One (degree, physics, level).
#[derive(Clone, Debug, Serialize)]
pub struct HexLevelRow {
    pub p: usize,
    pub modes: String,
    pub physics: &'static str,
    pub cells: usize,
    pub dofs: usize,
    pub level: &'static str,
    /// Seconds per CG iteration (median and spread of `runs` runs of [`ITERATIONS`]).
    pub cg: Option<Timing>,
    /// Set-up of the level's system (assembly, quadrature data), seconds.
    pub setup_s: f64,
    pub storage_bytes: usize,
    /// The level's storage read once per iteration at the copy bandwidth: its floor, seconds.
    pub storage_floor_s: f64,
    pub copy_gbs: f64,
    pub skipped: Option<String>,
}

/// Runs every degree of `cfg` × elasticity, Poisson × `levels`, calling `row` after each.
pub fn run(cfg: &HexBenchConfig, levels: &[AssemblyLevel], be: &CudaBackend, mut row: impl FnMut(&HexLevelRow) -> Result<()>) -> Result<Vec<HexLevelRow>> {
    let mesh = Arc::new(bench_mesh(cfg.cells)?);
    let copy_gbs = bandwidth(be)?.copy_gbs;
    let mut rows = Vec::new();
    for &p in &cfg.degrees {
        for (name, ncomp) in [("elasticity", 3), ("poisson", 1)] {
            let space = Arc::new(FunctionSpace::hierarchical(mesh.clone(), p, cfg.modes, ncomp)?);
            let physics: Box<dyn PointwisePhysics> = if ncomp == 3 { Box::new(Elasticity::lame(1.2e5, 8.0e4, 3)) } else { Box::new(Diffusion::new(1.0)) };
            let mut problem = LinearProblem::new(space.clone(), Diffusion::new(1.0))
                .source(crate::problem::vector(|x| [1.0, x[1], 0.5]))
                .dirichlet(["xmin"], crate::problem::vector(|_| [0.0; 3]));
            problem.physics = physics;
            for &level in levels {
                // The full level as `bench --hex` assembles it: scheme III, summed into CSR.
                let tuning = Tuning { integration: if level == AssemblyLevel::Full { Integration::Tiled } else { Integration::Default }, ..Tuning::default() };
                let mut r = HexLevelRow {
                    p,
                    modes: format!("{:?}", cfg.modes).to_lowercase(),
                    physics: name,
                    cells: mesh.num_cells(),
                    dofs: space.ndofs(),
                    level: level.name(),
                    cg: None,
                    setup_s: 0.0,
                    storage_bytes: 0,
                    storage_floor_s: 0.0,
                    copy_gbs,
                    skipped: None,
                };
                let t = Instant::now();
                match problem.system(be, level, tuning) {
                    Ok(sys) => {
                        be.synchronize()?;
                        r.setup_s = t.elapsed().as_secs_f64();
                        r.storage_bytes = sys.storage_bytes();
                        r.storage_floor_s = r.storage_bytes as f64 / (copy_gbs * 1e9);
                        let jacobi = crate::solver::Jacobi::new(be, &sys.operator.diagonal(be)?)?;
                        let mut clock = EventClock::new(be)?;
                        r.cg = Some(time_cg(&mut clock, be, &sys.operator, &jacobi, &sys.rhs, ITERATIONS, cfg.runs.max(1))?);
                    }
                    Err(e @ (Error::Unsupported(_) | Error::Invalid(_))) => r.skipped = Some(e.to_string()),
                    Err(e) => r.skipped = Some(format!("failed: {e}")),
                }
                row(&r)?;
                rows.push(r);
            }
        }
    }
    Ok(rows)
}
