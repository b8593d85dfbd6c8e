//! Linear boundary value problems as a library call: a space, a physics term, a source and boundary
//! conditions -> a [`System`] on any backend and at any assembly level -> a solution with
//! statistics.
use crate::backend::{Cpu, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::fe::QuadratureKind;
use crate::mesh::Mesh;
use crate::operator::assemble::{assemble_vector, assemble_vector_groups};
use crate::operator::level::BoundaryMatrices;
use crate::operator::{AssemblyLevel, CellMaterials, Coloring, Constraints, ElementIntegrator, ElementRestriction, FeBackend, FeOperator, FluxFn, LevelInput, PassiveField, Tuning, VectorFn};
use crate::physics::{Coefficient, PointwisePhysics};
use crate::solver::precond::{PrecondParams, PreconditionerKind};
pub use crate::solver::SolverMethod;
use crate::solver::{KrylovOptions, SolveStats};
use crate::space::FunctionSpace;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// A boundary named by its mesh tag name ("xmin", a Gmsh physical name) or by its integer tag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Boundary {
    Id(i32),
    Name(String),
}

impl From<&str> for Boundary {
    fn from(s: &str) -> Self {
        Boundary::Name(s.to_string())
    }
}
impl From<i32> for Boundary {
    fn from(t: i32) -> Self {
        Boundary::Id(t)
    }
}

impl Boundary {
    fn resolve(&self, mesh: &Mesh) -> Result<i32> {
        match self {
            Boundary::Id(t) => Ok(*t),
            Boundary::Name(n) => mesh.tag(n, mesh.dim - 1),
        }
    }
}

/// A boundary condition on a set of tagged boundaries.
#[derive(Clone)]
pub enum BoundaryCondition {
    /// u = g (all components, or only `components`).
    Dirichlet { on: Vec<Boundary>, value: VectorFn, components: Option<Vec<usize>> },
    /// (flux) κ∂u/∂n = g, or traction σn = t for elasticity: adds ∫ g·v ds.
    Neumann { on: Vec<Boundary>, flux: FluxFn },
    /// κ∂u/∂n + α u = g: adds ∫ α u v ds to the operator and ∫ g v ds to the load.
    Robin { on: Vec<Boundary>, alpha: Coefficient, value: FluxFn },
}

/// Quadrature points per evaluation of a compiled source (cells are grouped to about this many):
/// two passes of the expression tape.
const SOURCE_GROUP_POINTS: usize = 2 * crate::expr::TAPE_BATCH;

/// Wrap a scalar function of position as a [`VectorFn`].
pub fn scalar(f: impl Fn([f64; 3]) -> f64 + Send + Sync + 'static) -> VectorFn {
    Arc::new(move |x, out: &mut [f64]| out[0] = f(x))
}

/// Wrap a vector function of position returning `[f64; 3]` (first `ncomp` used) as a [`VectorFn`].
pub fn vector(f: impl Fn([f64; 3]) -> [f64; 3] + Send + Sync + 'static) -> VectorFn {
    Arc::new(move |x, out: &mut [f64]| {
        let v = f(x);
        let n = out.len();
        out.copy_from_slice(&v[..n]);
    })
}

/// Wrap a function of (position, outward normal) as a boundary [`FluxFn`].
pub fn flux(f: impl Fn([f64; 3], [f64; 3]) -> f64 + Send + Sync + 'static) -> FluxFn {
    Arc::new(move |x, n, out: &mut [f64]| out[0] = f(x, n))
}

/// An integrator and the facet loads `(facets, flux)` of the Neumann and Robin conditions.
pub(crate) type Integration<'a> = (ElementIntegrator<'a>, Vec<(Vec<(usize, usize)>, FluxFn)>);

/// A linear problem: find u in `space` with a(u, v) = ℓ(v) for all v, plus boundary conditions.
pub struct LinearProblem {
    pub space: Arc<FunctionSpace>,
    pub physics: Box<dyn PointwisePhysics>,
    pub source: Option<VectorFn>,
    /// The same source as expressions, one per component, where it came from a problem file: a
    /// backend with a device integrates the load there from these ([`FeBackend::device_load`]);
    /// the host evaluates them a batch of points at a time.
    pub source_exprs: Option<Vec<crate::expr::Expr>>,
    pub bcs: Vec<BoundaryCondition>,
    /// Quadrature degree override for volume terms.
    pub quadrature_degree: Option<usize>,
    /// Family of the volume rule (Gauss–Lobatto: collocated with Gauss–Lobatto nodes).
    pub quadrature: QuadratureKind,
}

/// Wall-clock seconds spent in each phase.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    /// Everything from physics checks to the final system (the sum of the parts below and set-up).
    pub assembly: f64,
    /// The element integrator: reference tables, coefficients sampled at the quadrature points (on
    /// the GPU's full level, the device's sparsity pattern is built meanwhile: the longer of both).
    pub integrator: f64,
    pub coloring: f64,
    /// The operator at its level (sparsity and matrix, element matrices, quadrature data...).
    pub matrix: f64,
    pub rhs: f64,
    pub constraints: f64,
    pub preconditioner: f64,
    pub solve: f64,
}

/// A linear system ready to solve on backend `B`, Dirichlet conditions applied: the operator at its
/// assembly level and the right-hand side live on the backend.
pub struct System<'b, B: FeBackend> {
    pub backend: &'b B,
    pub operator: FeOperator<B>,
    pub rhs: B::Vector,
    /// The load before Dirichlet conditions (to rebuild `rhs` after an update).
    load: B::Vector,
    pub constraints: Constraints,
    pub symmetric: bool,
    pub ncomp: usize,
    /// Colors of the CPU block coloring.
    pub ncolors: usize,
    pub timings: Timings,
}

/// The system of the CPU backend.
pub type LinearSystem = System<'static, Cpu>;

/// How to solve: a Krylov method with a preconditioner, or a sparse direct factorization.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SolverConfig {
    pub method: SolverMethod,
    pub preconditioner: PreconditionerKind,
    pub options: KrylovOptions,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig { method: SolverMethod::Cg, preconditioner: PreconditionerKind::Jacobi, options: KrylovOptions::default() }
    }
}

/// A solution and how it was obtained.
pub struct Solution {
    pub u: Vec<f64>,
    pub stats: SolveStats,
    pub timings: Timings,
}

impl LinearProblem {
    pub fn new(space: Arc<FunctionSpace>, physics: impl PointwisePhysics + 'static) -> Self {
        LinearProblem { space, physics: Box::new(physics), source: None, source_exprs: None, bcs: Vec::new(), quadrature_degree: None, quadrature: QuadratureKind::Gauss }
    }

    /// The volume rule: its family and, optionally, the degree it must integrate exactly.
    pub fn quadrature(mut self, kind: QuadratureKind, degree: Option<usize>) -> Self {
        self.quadrature = kind;
        self.quadrature_degree = degree;
        self
    }

    /// Volume source f (one value per component); replaces any [`Self::source_exprs`].
    pub fn source(mut self, f: VectorFn) -> Self {
        self.source = Some(f);
        self.source_exprs = None;
        self
    }

    pub fn dirichlet<T: Into<Boundary>>(mut self, on: impl IntoIterator<Item = T>, value: VectorFn) -> Self {
        self.bcs.push(BoundaryCondition::Dirichlet { on: on.into_iter().map(Into::into).collect(), value, components: None });
        self
    }

    pub fn neumann<T: Into<Boundary>>(mut self, on: impl IntoIterator<Item = T>, flux: FluxFn) -> Self {
        self.bcs.push(BoundaryCondition::Neumann { on: on.into_iter().map(Into::into).collect(), flux });
        self
    }

    pub fn robin<T: Into<Boundary>>(mut self, on: impl IntoIterator<Item = T>, alpha: impl Into<Coefficient>, value: FluxFn) -> Self {
        self.bcs.push(BoundaryCondition::Robin { on: on.into_iter().map(Into::into).collect(), alpha: alpha.into(), value });
        self
    }

    fn check(&self) -> Result<()> {
        let n = self.space.ncomp;
        if self.physics.ncomp() != n {
            return Err(Error::invalid(format!(
                "{} has {} components but the space has {n}",
                self.physics.name(),
                self.physics.ncomp()
            )));
        }
        self.physics.check(&self.space.mesh)?;
        for bc in &self.bcs {
            let (BoundaryCondition::Dirichlet { on, .. } | BoundaryCondition::Neumann { on, .. } | BoundaryCondition::Robin { on, .. }) = bc;
            super::validate::boundaries_have_facets(&self.space.mesh, on).map_err(Error::invalid)?;
            if let BoundaryCondition::Dirichlet { components: Some(cs), .. } = bc {
                if let Some(c) = cs.iter().find(|&&c| c >= n) {
                    return Err(Error::invalid(format!("Dirichlet component {c} out of range (the space has {n})")));
                }
            }
            if let BoundaryCondition::Robin { alpha, .. } = bc {
                alpha.check(&self.space.mesh, "robin alpha")?;
            }
        }
        Ok(())
    }

    /// Boundary facets (cell, local facet) of the given boundaries.
    fn facets_on(&self, on: &[Boundary], facet_cells: &[(usize, usize)]) -> Result<Vec<(usize, usize)>> {
        let mesh = &self.space.mesh;
        let tags = on.iter().map(|b| b.resolve(mesh)).collect::<Result<Vec<_>>>()?;
        Ok(mesh.boundary.iter().zip(facet_cells).filter(|(f, _)| tags.contains(&f.tag)).map(|(_, &fc)| fc).collect())
    }

    /// Dirichlet constraints: later conditions override earlier ones on shared dofs.
    pub fn constraints(&self) -> Result<Constraints> {
        let space = &self.space;
        let n = space.ncomp;
        // (dof, value) in the order given; a later entry for a dof replaces an earlier one.
        let mut vals: Vec<(usize, f64)> = Vec::new();
        for bc in &self.bcs {
            if let BoundaryCondition::Dirichlet { on, value, components } = bc {
                let tags = on.iter().map(|b| b.resolve(&space.mesh)).collect::<Result<Vec<_>>>()?;
                let all: Vec<usize> = (0..n).collect();
                let comps = components.as_deref().unwrap_or(&all);
                let (nodes, data) = space.boundary_data(&tags, |x, o| value(x, o))?;
                for (&node, v) in nodes.iter().zip(data.chunks(n)) {
                    for &c in comps {
                        vals.push((node * n + c, v[c]));
                    }
                }
            }
        }
        // Modes a variable-degree space drops stay zero whatever the boundary data.
        for &node in &space.frozen {
            for c in 0..n {
                vals.push((node * n + c, 0.0));
            }
        }
        Ok(last_per_dof(vals))
    }

    /// The element integrator (with the Robin terms) and the facet loads of the boundary
    /// conditions: what both the CPU and the GPU assembly start from.
    pub(crate) fn integrator(&self) -> Result<Integration<'_>> {
        self.check()?;
        let space = &*self.space;
        let mesh = &*space.mesh;
        let mut integ = ElementIntegrator::with_quadrature(space, self.physics.as_ref(), self.quadrature_degree, self.quadrature)?;
        let facet_cells = if self.bcs.iter().any(|b| !matches!(b, BoundaryCondition::Dirichlet { .. })) {
            mesh.boundary_facet_cells()?
        } else {
            Vec::new()
        };
        let mut fluxes: Vec<(Vec<(usize, usize)>, FluxFn)> = Vec::new();
        for bc in &self.bcs {
            match bc {
                BoundaryCondition::Robin { on, alpha, value } => {
                    let f = self.facets_on(on, &facet_cells)?;
                    integ.add_robin(&f, alpha);
                    fluxes.push((f, value.clone()));
                }
                BoundaryCondition::Neumann { on, flux } => fluxes.push((self.facets_on(on, &facet_cells)?, flux.clone())),
                BoundaryCondition::Dirichlet { .. } => {}
            }
        }
        Ok((integ, fluxes))
    }

    /// The boundary (Robin) element matrices, integrated on the host: (cell, dofs, matrix).
    fn boundary_matrices(&self, integ: &ElementIntegrator) -> Result<BoundaryMatrices> {
        let nd = integ.elem_size();
        let cells = integ.robin_cells();
        if cells.is_empty() {
            // No copy of the dof map for nothing (it is 2 GB at 10^7 dofs).
            return Ok(Vec::new());
        }
        let restriction = ElementRestriction::new(&self.space);
        cells
            .into_iter()
            .map(|c| {
                let mut ke = vec![0.0; nd * nd];
                let dofs = (0..nd).map(|r| restriction.global_dof(c, r)).collect();
                integ.add_robin_matrix(c, &mut ke)?;
                // Signed (hierarchical) spaces: the matrix in the global orientation, S K S.
                let n = self.space.ncomp;
                let sign = |r: usize| self.space.dofmap.sign(c, r / n);
                for r in 0..nd {
                    for s in 0..nd {
                        ke[r * nd + s] *= sign(r) * sign(s);
                    }
                }
                Ok((c, dofs, ke))
            })
            .collect()
    }

    /// The system on backend `be` at assembly level `level`: the load vector and constraints are
    /// built on the host, the operator by the level's strategy for that backend.
    pub fn system<'b, B: FeBackend>(&self, be: &'b B, level: AssemblyLevel, tuning: Tuning) -> Result<System<'b, B>> {
        let t0 = Instant::now();
        let space = &*self.space;
        let mesh = &*space.mesh;
        // The device builds what the level needs of the space alone (the CUDA backend: the full
        // level's pattern) while the host samples the coefficients.
        let robin = self.bcs.iter().any(|b| matches!(b, BoundaryCondition::Robin { .. }));
        let host = || {
            let _span = crate::trace::span(|| "integrator (host)".into());
            self.integrator()
        };
        let (integ, fluxes) = be.overlap_setup(space, level, tuning, robin, host)?;
        let mut timings = Timings { integrator: t0.elapsed().as_secs_f64(), ..Default::default() };
        let lap = |t: &mut Instant| {
            let s = t.elapsed().as_secs_f64();
            *t = Instant::now();
            s
        };
        let mut t = Instant::now();
        // The load on the device where the backend has one and the source is compiled (no facet
        // loads); else on the host, colored.
        let device_load = match (&self.source, &self.source_exprs) {
            (Some(_), Some(exprs)) if fluxes.iter().all(|f| f.0.is_empty()) => be.device_load(&integ, exprs)?,
            _ => None,
        };
        timings.rhs = lap(&mut t);
        // The CPU levels and the host load read the coloring; the device levels do not.
        let coloring = Arc::new(if device_load.is_none() || be.levels_use_coloring() { Coloring::greedy(mesh) } else { Coloring { blocks: Vec::new() } });
        timings.coloring = lap(&mut t);
        let load = match device_load {
            Some(load) => load,
            None => be.from_host(&self.load_vector(&integ, &coloring, &fluxes)?)?,
        };
        timings.rhs += lap(&mut t);
        let constraints = self.constraints()?;
        crate::trace::note("system: Dirichlet data", t.elapsed().as_secs_f64());
        let boundary = self.boundary_matrices(&integ)?;
        timings.constraints = lap(&mut t);
        let input = LevelInput { integ: &integ, boundary: &boundary, coloring: &coloring, tuning };
        let mut operator = FeOperator::new(be, level, &input)?;
        timings.matrix = lap(&mut t);
        let rhs = operator.constrain(be, &constraints, &load)?;
        timings.constraints += lap(&mut t);
        timings.assembly = t0.elapsed().as_secs_f64();
        Ok(System {
            backend: be,
            operator,
            rhs,
            load,
            constraints,
            symmetric: self.physics.is_symmetric(),
            ncomp: space.ncomp,
            ncolors: coloring.num_colors(),
            timings,
        })
    }

    /// The load vector alone (source, Neumann and Robin values) on the host, with no operator
    /// built: what a time-dependent problem assembles once per load and scales every step.
    pub fn load_only(&self) -> Result<Vec<f64>> {
        let (integ, fluxes) = self.integrator()?;
        let coloring = Coloring::greedy(&self.space.mesh);
        self.load_vector(&integ, &coloring, &fluxes)
    }

    /// Assemble the system on the CPU at `level`.
    pub fn assemble(&self, level: AssemblyLevel) -> Result<LinearSystem> {
        self.system(&Cpu, level, Tuning::default())
    }

    pub(crate) fn load_vector(&self, integ: &ElementIntegrator, coloring: &Coloring, fluxes: &[(Vec<(usize, usize)>, FluxFn)]) -> Result<Vec<f64>> {
        let space = &*self.space;
        let ncells = space.mesh.num_cells();
        let mut b = vec![0.0; space.ndofs()];
        if let Some(f) = &self.source {
            let quad = integ.source_quadrature()?;
            let n = space.ncomp;
            // The problem file's expressions (the same values as `f`) over a whole group of points;
            // a group with a value that is not finite is evaluated again through `f`, whose checks
            // report it.
            let exprs = self.source_exprs.as_deref().filter(|e| e.len() == n && e.iter().all(crate::expr::Expr::is_compiled));
            let eval = |xs: &[[f64; 3]], out: &mut [f64]| {
                let np = xs.len();
                if let Some(exprs) = exprs {
                    for (e, o) in exprs.iter().zip(out.chunks_exact_mut(np)) {
                        e.eval_batch(xs, 0.0, o);
                    }
                    if out.iter().all(|v| v.is_finite()) {
                        return;
                    }
                }
                let mut v = vec![0.0; n];
                for (p, x) in xs.iter().enumerate() {
                    f(*x, &mut v);
                    for (a, va) in v.iter().enumerate() {
                        out[a * np + p] = *va;
                    }
                }
            };
            let group = SOURCE_GROUP_POINTS.div_ceil(quad.rule.weights.len().max(1));
            b = assemble_vector_groups(space, coloring, group, |cells, s, be| integ.add_sources(cells, &eval, &quad, s, be).map(|()| true))?;
        }
        // Facet loads are few: group them by cell and reuse the colored vector assembly.
        if fluxes.iter().any(|f| !f.0.is_empty()) {
            let mut per_cell: Vec<Vec<(usize, usize)>> = vec![Vec::new(); ncells];
            for (i, (facets, _)) in fluxes.iter().enumerate() {
                for &(c, lf) in facets {
                    per_cell[c].push((i, lf));
                }
            }
            let active: Vec<bool> = per_cell.iter().map(|v| !v.is_empty()).collect();
            let bf = assemble_vector(space, coloring, Some(&active), |c, s, be| {
                for &(i, lf) in &per_cell[c] {
                    integ.add_flux(c, lf, &fluxes[i].1, s, be)?;
                }
                Ok(())
            })?;
            b.iter_mut().zip(bf).for_each(|(x, y)| *x += y);
        }
        Ok(b)
    }

    /// Assemble on the CPU and solve.
    pub fn solve(&self, level: AssemblyLevel, config: &SolverConfig) -> Result<Solution> {
        self.assemble(level)?.solve(config)
    }
}

impl<B: FeBackend> System<'_, B> {
    pub fn ndofs(&self) -> usize {
        self.backend.len(&self.rhs)
    }

    /// Bytes the operator keeps (CSR values and indices, element matrices, quadrature data, ...).
    pub fn storage_bytes(&self) -> usize {
        self.operator.storage_bytes(self.backend)
    }

    /// The assembled matrix on the host (tests compare backends), `None` without one.
    pub fn matrix_to_host(&self) -> Result<Option<CsrMatrix>> {
        self.operator.matrix().map(|a| self.backend.matrix_to_host(a)).transpose()
    }

    /// The right-hand side on the host.
    pub fn rhs_to_host(&self) -> Result<Vec<f64>> {
        self.backend.to_host(&self.rhs)
    }

    /// `A x` for a host vector, on the backend.
    pub fn apply_host(&self, x: &[f64]) -> Result<Vec<f64>> {
        let be = self.backend;
        let mut y = be.zeros(x.len())?;
        self.operator.apply(be, &be.from_host(x)?, &mut y)?;
        be.to_host(&y)
    }

    /// Replaces passive field `field` of `problem`'s physics (a coefficient per cell or per
    /// quadrature point) and recomputes what depends on it — re-assembly, element matrices or
    /// quadrature data, by level — without rebuilding the operator or the load.
    pub fn update_coefficient(&mut self, problem: &LinearProblem, field: usize, value: PassiveField, tuning: Tuning) -> Result<()> {
        self.update_coefficients(problem, vec![(field, value)], tuning)
    }

    /// As [`System::update_coefficient`] for several fields at once (one rebuild of the level).
    pub fn update_coefficients(&mut self, problem: &LinearProblem, fields: Vec<(usize, PassiveField)>, tuning: Tuning) -> Result<()> {
        let (mut integ, _) = problem.integrator()?;
        for (field, value) in fields {
            integ.passive.set(field, value)?;
        }
        let coloring = Arc::new(Coloring::greedy(&problem.space.mesh));
        let boundary = problem.boundary_matrices(&integ)?;
        let input = LevelInput { integ: &integ, boundary: &boundary, coloring: &coloring, tuning };
        self.rhs = self.operator.update(self.backend, &input, &self.constraints, &self.load)?;
        Ok(())
    }

    /// Gives every passive field of `problem` per-cell values by material (`m`): without
    /// re-integrating where the level can (the lattice, when it knows every material of `m`),
    /// else through [`System::update_coefficients`]. Returns whether the fast path was taken.
    pub fn set_materials(&mut self, problem: &LinearProblem, m: &CellMaterials, tuning: Tuning) -> Result<bool> {
        let ncells = problem.space.mesh.num_cells();
        if m.index.len() != ncells {
            return Err(Error::dim("material index per cell", ncells, m.index.len()));
        }
        if let Some(bad) = m.index.iter().find(|&&i| i as usize >= m.values.len()) {
            return Err(Error::invalid(format!("material index {bad} of a table of {}", m.values.len())));
        }
        if let Some(rhs) = self.operator.set_materials(self.backend, m, &self.constraints, &self.load)? {
            self.rhs = rhs;
            return Ok(true);
        }
        let nfields = m.values.first().map_or(0, Vec::len);
        let fields = (0..nfields).map(|f| (f, PassiveField::PerCell(m.field(f)))).collect();
        self.update_coefficients(problem, fields, tuning)?;
        Ok(false)
    }

    /// Fixes `dof` at 0 in a system without Dirichlet conditions: makes a consistent singular
    /// system (only Neumann conditions, `[solver] nullspace = "constant"`) regular for a direct
    /// solver; the constant comes back as the mean afterwards.
    pub fn pin_dof(&mut self, dof: usize) -> Result<()> {
        if !self.constraints.dofs.is_empty() {
            return Err(Error::invalid("pinning a dof of a system that already has Dirichlet conditions"));
        }
        if dof >= self.ndofs() {
            return Err(Error::invalid(format!("pinned dof {dof} out of range ({} dofs)", self.ndofs())));
        }
        let cons = Constraints { dofs: vec![dof], values: vec![0.0] };
        self.rhs = self.operator.constrain(self.backend, &cons, &self.rhs)?;
        self.constraints = cons;
        Ok(())
    }

    /// Solve the system on its backend: a Krylov method with the preconditioner built from what
    /// the operator offers, or a direct factorization of its matrix.
    pub fn solve(&self, config: &SolverConfig) -> Result<Solution> {
        let be = self.backend;
        let mut timings = self.timings.clone();
        let n = self.ndofs();
        let t0 = Instant::now();
        let method = config.method;
        let (x, stats) = if method.is_krylov() {
            if method == SolverMethod::Cg && !self.symmetric {
                return Err(Error::invalid("CG needs a symmetric operator; use gmres or bicgstab"));
            }
            let params = PrecondParams { block_size: self.ncomp, omega: 1.0 };
            let m = config.preconditioner.build_for(be, &self.operator, &params)?;
            let mut x = be.zeros(n)?;
            timings.preconditioner = t0.elapsed().as_secs_f64();
            let stats = method.solve(be, &self.operator, m.as_ref(), &self.rhs, &mut x, &config.options)?;
            (x, stats)
        } else {
            let a = self.operator.matrix().ok_or_else(|| Error::invalid("the direct solver needs assembly level `full`"))?;
            let f = be.factorize(a, self.symmetric)?;
            timings.preconditioner = t0.elapsed().as_secs_f64();
            let mut x = be.zeros(n)?;
            f.solve(be, &self.rhs, &mut x)?;
            let res = be.checked_residual(a, &x, &self.rhs)?;
            let bnorm = be.norm2(&self.rhs)?;
            let stats = SolveStats {
                method: f.name(),
                iterations: 1,
                residual_history: vec![bnorm, res],
                initial_residual: bnorm,
                final_residual: res,
                relative_residual: if bnorm > 0.0 { res / bnorm } else { 0.0 },
            };
            (x, stats)
        };
        let u = be.to_host(&x)?;
        timings.solve = t0.elapsed().as_secs_f64() - timings.preconditioner;
        Ok(Solution { u, stats, timings })
    }
}

/// Constraints from (dof, value) pairs in the order given, the last value of a dof winning (as a
/// map's inserts would): a stable sort, linear for the usual already-sorted boundary nodes, where
/// a map's 3·10^5 inserts took a tenth of a second at 10^7 unknowns.
fn last_per_dof(mut pairs: Vec<(usize, f64)>) -> Constraints {
    pairs.sort_by_key(|p| p.0);
    let mut c = Constraints { dofs: Vec::with_capacity(pairs.len()), values: Vec::with_capacity(pairs.len()) };
    for (d, v) in pairs {
        match (c.dofs.last(), c.values.last_mut()) {
            (Some(&last), Some(lv)) if last == d => *lv = v,
            _ => {
                c.dofs.push(d);
                c.values.push(v);
            }
        }
    }
    c
}

#[cfg(test)]
mod constraint_order_tests {
    use super::last_per_dof;

    /// Sorted, unique dofs; a repeated dof keeps the value given last, as `BTreeMap::insert` did.
    #[test]
    fn last_value_of_each_dof_wins_and_dofs_are_sorted() {
        let c = last_per_dof(vec![(5, 1.0), (2, 2.0), (5, 3.0), (0, 4.0), (2, 5.0), (9, 6.0), (5, 7.0)]);
        assert_eq!(c.dofs, vec![0, 2, 5, 9]);
        assert_eq!(c.values, vec![4.0, 5.0, 7.0, 6.0]);
        let mut map = std::collections::BTreeMap::new();
        let pairs: Vec<(usize, f64)> = (0..200).map(|i| ((i * 37) % 61, i as f64)).collect();
        for &(d, v) in &pairs {
            map.insert(d, v);
        }
        let c = last_per_dof(pairs);
        assert_eq!(c.dofs, map.keys().copied().collect::<Vec<_>>());
        assert_eq!(c.values, map.values().copied().collect::<Vec<_>>());
        assert!(last_per_dof(Vec::new()).dofs.is_empty());
    }
}
