//! Linear boundary value problems as a library call: a space, a physics term, a source and boundary
//! conditions -> an assembled (or element-level) system -> a solution with statistics.
use crate::backend::{Cpu, Identity, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::mesh::Mesh;
use crate::operator::assemble::{assemble_matrix, assemble_vector, sparsity};
use crate::operator::dirichlet::eliminate;
use crate::operator::{AssemblyLevel, Coloring, Constrained, Constraints, ElementIntegrator, ElementMatrices, FluxFn, VectorFn};
use crate::physics::{Coefficient, PointwisePhysics};
use crate::solver::precond::{BlockJacobi, Chebyshev, Jacobi, PrecondParams, PreconditionerKind};
use crate::solver::{DirectSolver, KrylovMethod, KrylovOptions, SolveStats};
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
    pub bcs: Vec<BoundaryCondition>,
    /// Quadrature degree override for volume terms.
    pub quadrature_degree: Option<usize>,
}

/// Wall-clock seconds spent in each phase.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    /// Everything from physics checks to the final system (the sum of the parts below and set-up).
    pub assembly: f64,
    pub coloring: f64,
    pub sparsity: f64,
    /// GPU only: CSR position of every element entry, found once per mesh.
    pub positions: f64,
    /// Element matrices computed and summed (the hot loop).
    pub matrix: f64,
    pub rhs: f64,
    pub constraints: f64,
    pub preconditioner: f64,
    pub solve: f64,
}

/// The assembled operator of a linear system, at the chosen assembly level.
pub enum SystemOperator {
    Full(CsrMatrix),
    Element(Constrained<Cpu, ElementMatrices>),
}

/// A linear system ready to solve, with Dirichlet conditions already applied.
pub struct LinearSystem {
    pub operator: SystemOperator,
    pub rhs: Vec<f64>,
    pub constraints: Constraints,
    pub symmetric: bool,
    pub ncomp: usize,
    pub ncolors: usize,
    pub timings: Timings,
}

/// How to solve: a Krylov method with a preconditioner, or a sparse direct factorization.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SolverConfig {
    pub method: SolverMethod,
    pub preconditioner: PreconditionerKind,
    pub options: KrylovOptions,
}

/// `direct` picks Cholesky for symmetric problems and LU otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverMethod {
    Cg,
    Gmres,
    Bicgstab,
    Direct,
}

impl SolverMethod {
    /// The Krylov method this names (`None` for the direct solver).
    pub fn krylov(self) -> Option<KrylovMethod> {
        match self {
            SolverMethod::Cg => Some(KrylovMethod::Cg),
            SolverMethod::Gmres => Some(KrylovMethod::Gmres),
            SolverMethod::Bicgstab => Some(KrylovMethod::BiCgStab),
            SolverMethod::Direct => None,
        }
    }
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
        LinearProblem { space, physics: Box::new(physics), source: None, bcs: Vec::new(), quadrature_degree: None }
    }

    /// Volume source f (one value per component).
    pub fn source(mut self, f: VectorFn) -> Self {
        self.source = Some(f);
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
        let mut vals: std::collections::BTreeMap<usize, f64> = Default::default();
        let mut buf = vec![0.0; n];
        for bc in &self.bcs {
            if let BoundaryCondition::Dirichlet { on, value, components } = bc {
                let tags = on.iter().map(|b| b.resolve(&space.mesh)).collect::<Result<Vec<_>>>()?;
                let all: Vec<usize> = (0..n).collect();
                let comps = components.as_deref().unwrap_or(&all);
                for node in space.boundary_nodes(&tags)? {
                    value(space.dofmap.node_coords[node], &mut buf);
                    for &c in comps {
                        vals.insert(node * n + c, buf[c]);
                    }
                }
            }
        }
        Ok(Constraints { dofs: vals.keys().copied().collect(), values: vals.values().copied().collect() })
    }

    /// The element integrator (with the Robin terms) and the facet loads of the boundary
    /// conditions: what both the CPU and the GPU assembly start from.
    pub(crate) fn integrator(&self) -> Result<Integration<'_>> {
        self.check()?;
        let space = &*self.space;
        let mesh = &*space.mesh;
        let mut integ = ElementIntegrator::new(space, self.physics.as_ref(), self.quadrature_degree)?;
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

    /// Assemble the system at `level`.
    pub fn assemble(&self, level: AssemblyLevel) -> Result<LinearSystem> {
        let t0 = Instant::now();
        let space = &*self.space;
        let mesh = &*space.mesh;
        let (integ, fluxes) = self.integrator()?;
        let mut timings = Timings::default();
        let lap = |t: &mut Instant| {
            let s = t.elapsed().as_secs_f64();
            *t = Instant::now();
            s
        };
        let mut t = Instant::now();
        let coloring = Arc::new(Coloring::greedy(mesh));
        timings.coloring = lap(&mut t);
        let mut rhs = self.load_vector(&integ, &coloring, &fluxes)?;
        timings.rhs = lap(&mut t);
        let constraints = self.constraints()?;
        timings.constraints = lap(&mut t);
        let operator = match level {
            AssemblyLevel::Full => {
                let mut a = sparsity(space)?;
                timings.sparsity = lap(&mut t);
                assemble_matrix(&integ, &coloring, &mut a)?;
                timings.matrix = lap(&mut t);
                eliminate(&mut a, &mut rhs, &constraints)?;
                SystemOperator::Full(a)
            }
            AssemblyLevel::Element => {
                let em = ElementMatrices::assemble(&integ, coloring.clone())?;
                timings.matrix = lap(&mut t);
                let op = Constrained::new(&Cpu, em, &constraints)?;
                rhs = op.rhs(&Cpu, &rhs, &constraints.lift(space.ndofs()))?;
                SystemOperator::Element(op)
            }
        };
        timings.assembly = t0.elapsed().as_secs_f64();
        Ok(LinearSystem {
            operator,
            rhs,
            constraints,
            symmetric: self.physics.is_symmetric(),
            ncomp: space.ncomp,
            ncolors: coloring.num_colors(),
            timings,
        })
    }

    pub(crate) fn load_vector(&self, integ: &ElementIntegrator, coloring: &Coloring, fluxes: &[(Vec<(usize, usize)>, FluxFn)]) -> Result<Vec<f64>> {
        let space = &*self.space;
        let ncells = space.mesh.num_cells();
        let mut b = vec![0.0; space.ndofs()];
        if let Some(f) = &self.source {
            let quad = integ.source_quadrature()?;
            b = assemble_vector(space, coloring, None, |c, s, be| integ.add_source(c, f, &quad, s, be))?;
        }
        // Facet loads are few: group them by cell and reuse the colored vector assembly.
        let mut per_cell: Vec<Vec<(usize, usize)>> = vec![Vec::new(); ncells];
        for (i, (facets, _)) in fluxes.iter().enumerate() {
            for &(c, lf) in facets {
                per_cell[c].push((i, lf));
            }
        }
        if fluxes.iter().any(|f| !f.0.is_empty()) {
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

    /// Assemble and solve.
    pub fn solve(&self, level: AssemblyLevel, config: &SolverConfig) -> Result<Solution> {
        self.assemble(level)?.solve(config)
    }
}

impl LinearSystem {
    pub fn ndofs(&self) -> usize {
        self.rhs.len()
    }

    /// Nonzeros of the assembled matrix (or stored element-matrix entries at the element level).
    pub fn storage_entries(&self) -> usize {
        match &self.operator {
            SystemOperator::Full(a) => a.nnz(),
            SystemOperator::Element(op) => op.inner.matrices.len(),
        }
    }

    fn as_operator(&self) -> &dyn LinearOperator<Cpu> {
        match &self.operator {
            SystemOperator::Full(a) => a,
            SystemOperator::Element(op) => op,
        }
    }

    /// The diagonal with constrained rows set to one.
    pub fn diagonal(&self) -> Vec<f64> {
        match &self.operator {
            SystemOperator::Full(a) => a.diagonal(),
            SystemOperator::Element(op) => {
                let mut d = op.inner.diagonal();
                for &i in &self.constraints.dofs {
                    d[i] = 1.0;
                }
                d
            }
        }
    }

    /// Per-node diagonal blocks of the element-level operator, identity on constrained dofs.
    fn element_node_blocks(&self, op: &Constrained<Cpu, ElementMatrices>) -> Vec<f64> {
        let n = self.ncomp;
        let mut b = op.inner.node_blocks();
        for &d in &self.constraints.dofs {
            let (node, c) = (d / n, d % n);
            for j in 0..n {
                b[node * n * n + c * n + j] = if j == c { 1.0 } else { 0.0 };
                b[node * n * n + j * n + c] = if j == c { 1.0 } else { 0.0 };
            }
        }
        b
    }

    fn preconditioner(&self, kind: PreconditionerKind) -> Result<Box<dyn LinearOperator<Cpu> + '_>> {
        let op = match &self.operator {
            SystemOperator::Full(a) => return kind.build(a, &PrecondParams { block_size: self.ncomp, omega: 1.0 }),
            SystemOperator::Element(op) => op,
        };
        Ok(match kind {
            PreconditionerKind::None => Box::new(Identity(self.ndofs())),
            PreconditionerKind::Jacobi => Box::new(Jacobi::new(&Cpu, &self.diagonal())?),
            PreconditionerKind::BlockJacobi => Box::new(BlockJacobi::from_blocks(self.ncomp, self.element_node_blocks(op))?),
            PreconditionerKind::Chebyshev => Box::new(Chebyshev::new(&Cpu, op, &self.diagonal(), 4, 30.0)?),
            PreconditionerKind::Ssor | PreconditionerKind::Ilu0 => {
                return Err(Error::invalid(format!(
                    "preconditioner `{kind:?}` needs an assembled matrix: use assembly level `full`"
                )))
            }
        })
    }

    /// Solve the system.
    pub fn solve(&self, config: &SolverConfig) -> Result<Solution> {
        let mut timings = self.timings.clone();
        let n = self.ndofs();
        let t0 = Instant::now();
        let b = &self.rhs;
        let bnorm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        let (u, stats) = if let Some(method) = config.method.krylov() {
            let m = self.preconditioner(config.preconditioner)?;
            timings.preconditioner = t0.elapsed().as_secs_f64();
            if method == KrylovMethod::Cg && !self.symmetric {
                return Err(Error::invalid("CG needs a symmetric operator; use gmres or bicgstab"));
            }
            let mut u = vec![0.0; n];
            let stats = method.solve(&Cpu, self.as_operator(), m.as_ref(), b, &mut u, &config.options)?;
            (u, stats)
        } else {
            let a = match &self.operator {
                SystemOperator::Full(a) => a,
                SystemOperator::Element(_) => {
                    return Err(Error::invalid("the direct solver needs assembly level `full`"));
                }
            };
            let solver = if self.symmetric { DirectSolver::cholesky(a)? } else { DirectSolver::lu(a)? };
            timings.preconditioner = t0.elapsed().as_secs_f64();
            let u = solver.solve(b)?;
            let res = crate::solver::direct::checked_residual(a, &u, b)?;
            let stats = SolveStats {
                method: if self.symmetric { "cholesky".into() } else { "lu".into() },
                iterations: 1,
                residual_history: vec![bnorm, res],
                initial_residual: bnorm,
                final_residual: res,
                relative_residual: if bnorm > 0.0 { res / bnorm } else { 0.0 },
            };
            (u, stats)
        };
        timings.solve = t0.elapsed().as_secs_f64() - timings.preconditioner;
        Ok(Solution { u, stats, timings })
    }
}
