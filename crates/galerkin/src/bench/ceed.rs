//! CEED's bake-off problems (`galerkin bench --ceed`): BP1/BP2 mass, BP3/BP4 diffusion with Gauss
//! quadrature (q = p + 2 points per axis), BP5/BP6 diffusion with collocated Gauss–Lobatto
//! quadrature (q = p + 1), scalar and with 3 components, on the unit cube meshed with hexahedra
//! (Q1–Q8 on Gauss–Lobatto nodes) or tetrahedra (P1–P3), at every assembly level, CPU and GPU.
//!
//! The metric is the field's: DoFs × CG iterations per second of the resident CG loop
//! ([`super::cg_loop`], no preconditioner as in the CEED runs), repeated with median and spread,
//! and the bytes each iteration must move — the level's stored data (matrix, element matrices,
//! quadrature data or coefficients, plus the restriction) and 17 vector passes (x read and y
//! written by the operator, 15 by the CG updates) — against the copy bandwidth measured in the same
//! run; a figure above it fails the benchmark.
use super::cg_loop::time_cg;
use super::skippable;
use super::timing::{cpu_ceiling, guarded_gbs, Clock, HostClock, Timing};
use crate::backend::{Cpu, Identity};
use crate::fe::{NodeFamily, QuadratureKind};
use crate::mesh::{generate, CellType};
use crate::operator::{AssemblyLevel, FeBackend, Tuning};
use crate::physics::{Diffusion, Mass};
use crate::problem::linear::{vector, LinearProblem};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One of CEED's bake-off problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bp {
    Bp1,
    Bp2,
    Bp3,
    Bp4,
    Bp5,
    Bp6,
}

impl Bp {
    pub const ALL: [Bp; 6] = [Bp::Bp1, Bp::Bp2, Bp::Bp3, Bp::Bp4, Bp::Bp5, Bp::Bp6];

    pub fn name(self) -> &'static str {
        ["bp1", "bp2", "bp3", "bp4", "bp5", "bp6"][self as usize]
    }

    pub fn parse(s: &str) -> Result<Bp> {
        Bp::ALL.into_iter().find(|b| b.name() == s.to_ascii_lowercase()).ok_or_else(|| Error::invalid(format!("unknown bake-off problem `{s}` (expected bp1 to bp6)")))
    }

    /// Components: 3 for the vector problems BP2, BP4, BP6.
    pub fn ncomp(self) -> usize {
        if matches!(self, Bp::Bp2 | Bp::Bp4 | Bp::Bp6) {
            3
        } else {
            1
        }
    }

    pub fn is_mass(self) -> bool {
        matches!(self, Bp::Bp1 | Bp::Bp2)
    }

    /// BP5/BP6: Gauss–Lobatto quadrature collocated with the nodes.
    pub fn collocated(self) -> bool {
        matches!(self, Bp::Bp5 | Bp::Bp6)
    }

    /// Quadrature points per axis on hexahedra.
    pub fn q1d(self, degree: usize) -> usize {
        degree + if self.collocated() { 1 } else { 2 }
    }

    /// The problem on an `n³` mesh of `cell`s of the unit cube with Lagrange elements of
    /// `degree` (hexahedra: Gauss–Lobatto nodes; tetrahedra: P1–P3, quadrature exact on affine
    /// cells for q = p + 2, no collocated rule). Diffusion has homogeneous Dirichlet conditions on
    /// the whole boundary, mass none; the source is 1 in every component.
    pub fn problem(self, cell: CellType, degree: usize, n: usize) -> Result<LinearProblem> {
        let space = Arc::new(bp_space(cell, degree, n, self.ncomp())?);
        self.on_space(space)
    }

    /// The problem on a space built by [`bp_space`] (shared between problems of one size).
    pub fn on_space(self, space: Arc<FunctionSpace>) -> Result<LinearProblem> {
        let ncomp = space.ncomp;
        let cell = space.mesh.cell_type;
        let degree = space.element.degree();
        if cell.is_simplex() && self.collocated() {
            return Err(Error::Unsupported(format!("{} on tetrahedra (collocated Gauss–Lobatto quadrature needs hexahedra)", self.name())));
        }
        let one = vector(move |_| [1.0; 3]);
        let problem = if self.is_mass() {
            LinearProblem::new(space, Mass::new(1.0, ncomp)).source(one)
        } else {
            LinearProblem::new(space, Diffusion::vector(1.0, ncomp)).source(one).dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], vector(|_| [0.0; 3]))
        };
        Ok(match (cell.is_simplex(), self.collocated()) {
            (true, _) => problem.quadrature(QuadratureKind::Gauss, Some(2 * degree + 2)),
            (false, true) => problem.quadrature(QuadratureKind::GaussLobatto, None),
            (false, false) => problem.quadrature(QuadratureKind::Gauss, Some(2 * self.q1d(degree) - 1)),
        })
    }
}

/// The space of the bake-off problems: `n³` cells of the unit cube, Gauss–Lobatto nodes on
/// hexahedra.
pub fn bp_space(cell: CellType, degree: usize, n: usize, ncomp: usize) -> Result<FunctionSpace> {
    let mesh = Arc::new(generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], cell)?);
    if cell.is_simplex() {
        FunctionSpace::lagrange(mesh, degree, ncomp)
    } else {
        FunctionSpace::lagrange_with_nodes(mesh, degree, ncomp, NodeFamily::GaussLobatto)
    }
}

/// Divisions per axis that give about `dofs` unknowns.
pub fn divisions(cell: CellType, degree: usize, ncomp: usize, dofs: usize) -> usize {
    let nodes = dofs as f64 / ncomp as f64;
    let per_axis = nodes.cbrt() - 1.0;
    let n = if cell.is_simplex() { per_axis / degree as f64 } else { per_axis / degree as f64 };
    (n.round() as usize).max(1)
}

/// What `galerkin bench --ceed` runs.
#[derive(Clone, Debug)]
pub struct CeedConfig {
    pub problems: Vec<Bp>,
    /// Hexahedron degrees (1–8) and tetrahedron degrees (1–3; empty: no tetrahedra).
    pub degrees: Vec<usize>,
    pub tet_degrees: Vec<usize>,
    pub dofs: Vec<usize>,
    pub levels: Vec<AssemblyLevel>,
    /// CPU rows up to this many unknowns (0: no CPU rows).
    pub cpu_max_dofs: usize,
    /// `full` and `element` rows up to this many unknowns and this degree (their matrices grow
    /// as (p+1)^6 per cell).
    pub assembled_max_dofs: usize,
    pub assembled_max_degree: usize,
    /// CG iterations per timed run on the GPU (the CPU runs about half a second) and timed runs.
    pub iterations: usize,
    pub runs: usize,
    /// The levels' knobs (`bench --cpu-gather`, `--cpu-batch-colors`: the CPU `partial` batches'
    /// sum into y).
    pub tuning: Tuning,
}

/// One measured (or skipped) configuration.
#[derive(Clone, Debug, Serialize)]
pub struct CeedRow {
    pub bp: String,
    pub cell: String,
    pub degree: usize,
    /// Quadrature points per cell.
    pub points: usize,
    pub level: String,
    pub backend: String,
    pub dofs: usize,
    pub cells: usize,
    /// Set-up of the operator and right-hand side on the backend, seconds.
    pub setup_s: f64,
    pub iterations: usize,
    /// Seconds per CG iteration.
    pub cg: Option<Timing>,
    /// DoFs × CG iterations per second at the median.
    pub dofs_it_per_s: f64,
    /// What the level keeps (matrix, element matrices, quadrature data, restriction).
    pub storage_bytes: usize,
    pub bytes_per_iteration: f64,
    pub gb_per_s: f64,
    /// The ceiling: the GPU's copy bandwidth; on the CPU the combined bound of the stored data
    /// and the vector passes ([`crate::bench::timing::CpuCeiling`], its parts below).
    pub copy_gb_per_s: f64,
    /// CPU: the parts of that bound, stored data and vectors (0 on the GPU).
    pub stored_gb_per_s: f64,
    pub vector_gb_per_s: f64,
    /// gb_per_s / copy_gb_per_s.
    pub fraction_of_copy: f64,
    /// Why the row was not measured.
    pub skipped: Option<String>,
}

/// Vector passes of one resident CG iteration without preconditioner (8 bytes per unknown each):
/// x read and y written by the operator; dot(p, q), the fused x/r update (4 reads, 2 writes), the
/// identity "preconditioner" copy, dot(r, z) and p = z + βp.
const VECTOR_PASSES: usize = 2 + 2 + 6 + 2 + 2 + 3;

/// Runs the configured sweep, calling `row` as each row completes (for printing and saving).
pub fn run(cfg: &CeedConfig, gpu: Option<(&crate::backend::cuda::CudaBackend, f64)>, mut row: impl FnMut(&CeedRow) -> Result<()>) -> Result<Vec<CeedRow>> {
    let mut rows = Vec::new();
    let mut cases: Vec<(CellType, usize)> = cfg.degrees.iter().map(|&p| (CellType::Hexahedron, p)).collect();
    cases.extend(cfg.tet_degrees.iter().map(|&p| (CellType::Tetrahedron, p)));
    for &dofs in &cfg.dofs {
        for &(cell, degree) in &cases {
            // One mesh and space per (cell, degree, components), shared by the problems.
            let mut spaces: Vec<(usize, Arc<FunctionSpace>)> = Vec::new();
            for &bp in &cfg.problems {
                let ncomp = bp.ncomp();
                let space = match spaces.iter().find(|(c, _)| *c == ncomp) {
                    Some((_, s)) => s.clone(),
                    None => {
                        let s = Arc::new(bp_space(cell, degree, divisions(cell, degree, ncomp, dofs), ncomp)?);
                        spaces.push((ncomp, s.clone()));
                        s
                    }
                };
                let problem = match bp.on_space(space.clone()) {
                    Ok(p) => p,
                    Err(Error::Unsupported(_)) => continue,
                    Err(e) => return Err(e),
                };
                for &level in &cfg.levels {
                    let assembled = matches!(level, AssemblyLevel::Full | AssemblyLevel::Element);
                    let skip = (assembled && (space.ndofs() > cfg.assembled_max_dofs || degree > cfg.assembled_max_degree))
                        .then(|| format!("assembled levels only up to {} unknowns and degree {}", cfg.assembled_max_dofs, cfg.assembled_max_degree));
                    if space.ndofs() <= cfg.cpu_max_dofs {
                        // The ceiling is measured per row, on that level's working set (below).
                        let r = measure(&Cpu, &mut HostClock::default(), bp, &problem, level, cfg, 0.0, skip.clone(), true)?;
                        row(&r)?;
                        rows.push(r);
                    }
                    if let Some((be, copy)) = gpu {
                        let mut clock = crate::backend::cuda::bench::EventClock::new(be)?;
                        let r = measure(be, &mut clock, bp, &problem, level, cfg, copy, skip.clone(), false)?;
                        row(&r)?;
                        rows.push(r);
                    }
                }
            }
        }
    }
    Ok(rows)
}

/// Vectors the resident CG loop keeps (b, x, r, z, p, q) plus the Dirichlet mask: the footprint the
/// CPU ceiling's vector bound is measured on (with the level's stored data, its working set).
const CG_VECTORS: usize = 7;

/// One row: build the system at `level` on `be`, time the CG loop, judge the bandwidth (`copy_gbs`:
/// the GPU's copy bandwidth; on the CPU, where the working set decides between cache and DRAM, the
/// bounds of [`cpu_ceiling`] are measured here, the stored data's on the level's working set and
/// the vector passes' on the CG vectors, and combined over this row's bytes of each).
#[allow(clippy::too_many_arguments)]
fn measure<B: FeBackend>(be: &B, clock: &mut dyn Clock, bp: Bp, problem: &LinearProblem, level: AssemblyLevel, cfg: &CeedConfig, copy_gbs: f64, skip: Option<String>, cpu: bool) -> Result<CeedRow> {
    let space = &problem.space;
    let n = space.ndofs();
    let cell = space.mesh.cell_type;
    let degree = space.element.degree();
    let points = if cell.is_simplex() { 0 } else { bp.q1d(degree).pow(3) };
    let mut r = CeedRow {
        bp: bp.name().into(),
        cell: cell.name().into(),
        degree,
        points,
        level: level.name().into(),
        backend: be.name().into(),
        dofs: n,
        cells: space.mesh.num_cells(),
        setup_s: 0.0,
        iterations: 0,
        cg: None,
        dofs_it_per_s: 0.0,
        storage_bytes: 0,
        bytes_per_iteration: 0.0,
        gb_per_s: 0.0,
        copy_gb_per_s: copy_gbs,
        stored_gb_per_s: 0.0,
        vector_gb_per_s: 0.0,
        fraction_of_copy: 0.0,
        skipped: skip,
    };
    if r.skipped.is_some() {
        return Ok(r);
    }
    let t = Instant::now();
    let sys = match skippable(problem.system(be, level, cfg.tuning))? {
        Ok(s) => s,
        Err(why) => {
            r.skipped = Some(why);
            return Ok(r);
        }
    };
    r.setup_s = t.elapsed().as_secs_f64();
    let id = Identity(n);
    let k = if cpu {
        let mut probe = super::cg_loop::CgLoop::new(be, &sys.operator, &id, &sys.rhs)?;
        let t = Instant::now();
        probe.iterate(2)?;
        ((0.5 / (t.elapsed().as_secs_f64() / 2.0).max(1e-9)) as usize).clamp(3, cfg.iterations.max(3))
    } else {
        cfg.iterations.max(1)
    };
    let timing = time_cg(clock, be, &sys.operator, &id, &sys.rhs, k, cfg.runs)?;
    r.iterations = k;
    r.storage_bytes = sys.storage_bytes();
    r.bytes_per_iteration = (r.storage_bytes + VECTOR_PASSES * 8 * n) as f64;
    let copy_gbs = if cpu {
        // Stored data and vector passes each held to the bandwidth of where they live.
        let c = cpu_ceiling(r.storage_bytes, CG_VECTORS, 8 * n);
        (r.stored_gb_per_s, r.vector_gb_per_s) = (c.stored_gbs, c.vector_gbs);
        c.combined_gbs(r.storage_bytes as f64, (VECTOR_PASSES * 8 * n) as f64)
    } else {
        copy_gbs
    };
    r.copy_gb_per_s = copy_gbs;
    let what = format!("{} {} p={} {} on {}", bp.name(), cell.name(), degree, level.name(), be.name());
    r.gb_per_s = guarded_gbs(&what, r.bytes_per_iteration, &timing, copy_gbs)?;
    r.fraction_of_copy = r.gb_per_s / copy_gbs;
    r.dofs_it_per_s = n as f64 / timing.median;
    r.cg = Some(timing);
    Ok(r)
}

/// The roofline-style plot: DoF·it/s against degree, one line per (problem, level, backend) on
/// hexahedra at the largest size run.
pub fn plot(path: &std::path::Path, rows: &[CeedRow]) -> Result<()> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for r in rows.iter().filter(|r| r.cg.is_some() && r.cell == "hexahedron") {
        let k = (r.bp.clone(), r.level.clone(), r.backend.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut series = Vec::new();
    for (bp, level, backend) in &keys {
        let pick: Vec<&CeedRow> = rows.iter().filter(|r| r.cg.is_some() && r.cell == "hexahedron" && &r.bp == bp && &r.level == level && &r.backend == backend).collect();
        let top = pick.iter().map(|r| r.dofs).max().unwrap_or(0);
        // Per degree, the largest size run (sizes are rounded per degree, so compare within 4×).
        let mut pts: Vec<(f64, f64)> = pick.iter().filter(|r| r.dofs * 4 >= top).map(|r| (r.degree as f64, r.dofs_it_per_s)).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts.dedup_by(|a, b| a.0 == b.0);
        series.push((format!("{bp} {level} {backend}"), pts.iter().map(|p| p.0).collect::<Vec<_>>(), pts.iter().map(|p| p.1).collect::<Vec<_>>()));
    }
    let refs: Vec<(&str, &[f64], &[f64])> = series.iter().map(|(l, x, y)| (l.as_str(), x.as_slice(), y.as_slice())).collect();
    crate::io::plot_lines(path, "CEED bake-off: DoFs x CG iterations per second", "polynomial degree p", "DoF·it/s", &refs, false, true)
}
