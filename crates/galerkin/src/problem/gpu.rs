//! The pipeline on a CUDA GPU. [`LinearProblem::assemble_cuda`] integrates and assembles on the
//! device and [`DeviceSystem::solve`] iterates there; [`LinearSystem::solve_cuda`] moves a
//! CPU-assembled matrix to the device once. Either way the Krylov iterations are the same generic
//! solvers as on the CPU and only the solution comes back.
use super::linear::{LinearProblem, LinearSystem, Solution, SolverConfig, SystemOperator, Timings};
use crate::backend::cuda::{CudaBackend, CudaVector, DeviceAssembler, DeviceBlockJacobi, DeviceCsr, DeviceElementMatrices, Scatter};
use crate::linalg::CsrMatrix;
use crate::operator::assemble::sparsity;
use crate::operator::coloring::cell_colors;
use crate::operator::{AssemblyLevel, Coloring, Constrained, Constraints};
use crate::solver::KrylovMethod;
use crate::backend::{Backend, Identity, LinearOperator};
use crate::solver::precond::{BlockJacobi, Chebyshev, Jacobi, PreconditionerKind};
use crate::{Error, Result};
use std::borrow::Cow;
use std::time::Instant;

impl LinearSystem {
    /// Solve on the GPU: the assembled matrix goes to the device once ([`DeviceSystem::upload`]),
    /// then [`DeviceSystem::solve`]. The upload counts as preconditioner set-up time.
    pub fn solve_cuda(&self, be: &CudaBackend, config: &SolverConfig) -> Result<Solution> {
        let t0 = Instant::now();
        let system = DeviceSystem::upload(be, self)?;
        let upload = t0.elapsed().as_secs_f64();
        let mut sol = system.solve(config)?;
        sol.timings.preconditioner += upload;
        Ok(sol)
    }
}

/// The operator of a system assembled on the GPU.
pub enum DeviceOperator {
    /// A CSR matrix on the device (Dirichlet rows and columns already eliminated there).
    Full(DeviceCsr),
    /// Element matrices on the device under the masked Dirichlet wrapper.
    Element(Constrained<CudaBackend, DeviceElementMatrices>),
}

/// A linear system assembled on the GPU: operator and right-hand side live on the device; the host
/// keeps only the constraints and the diagonal (for Jacobi-type preconditioners).
pub struct DeviceSystem<'a> {
    pub backend: &'a CudaBackend,
    pub operator: DeviceOperator,
    pub rhs: CudaVector,
    pub constraints: Constraints,
    pub symmetric: bool,
    pub ncomp: usize,
    /// Colors of the assembly (of the colored scatter on the GPU; 0 with atomics).
    pub ncolors: usize,
    pub timings: Timings,
    /// The pattern's structure on the host (its values are not read), to rebuild a host matrix
    /// for block Jacobi; `None` at the element level.
    pattern: Option<Cow<'a, CsrMatrix>>,
    diagonal: Vec<f64>,
}

impl LinearProblem {
    /// Assemble on the GPU: element matrices integrated by the device and summed into the CSR
    /// values there (`scatter` chooses atomics or colors), or stored per cell at the `element`
    /// level; Dirichlet elimination on the device. The load vector (user closures) and the
    /// sparsity pattern are built on the host and uploaded once.
    pub fn assemble_cuda<'b>(&self, be: &'b CudaBackend, level: AssemblyLevel, scatter: Scatter) -> Result<DeviceSystem<'b>> {
        let t0 = Instant::now();
        let space = &*self.space;
        let mesh = &*space.mesh;
        let n = space.ndofs();
        let (integ, fluxes) = self.integrator()?;
        let mut timings = Timings::default();
        let lap = |t: &mut Instant| {
            let s = t.elapsed().as_secs_f64();
            *t = Instant::now();
            s
        };
        let mut t = Instant::now();
        let asm = DeviceAssembler::new(be, &integ)?;
        let block_coloring = Coloring::greedy(mesh);
        let cell_colors = (level == AssemblyLevel::Full && scatter == Scatter::Colored).then(|| cell_colors(mesh));
        timings.coloring = lap(&mut t);
        let rhs_host = self.load_vector(&integ, &block_coloring, &fluxes)?;
        timings.rhs = lap(&mut t);
        let constraints = self.constraints()?;
        let mask = be.from_host(&constraints.free_mask(n))?;
        let lift = be.from_host(&constraints.lift(n))?;
        let mut rhs = be.from_host(&rhs_host)?;
        timings.constraints = lap(&mut t);
        let (operator, pattern, diagonal) = match level {
            AssemblyLevel::Full => {
                let pattern = sparsity(space)?;
                timings.sparsity = lap(&mut t);
                let mut target = asm.csr_target(be, &pattern, scatter, cell_colors.as_deref())?;
                be.synchronize()?;
                timings.positions = lap(&mut t);
                asm.assemble_into(be, &mut target)?;
                be.synchronize()?;
                timings.matrix = lap(&mut t);
                let mut a = target.matrix;
                asm.eliminate(be, &mut a, &mut rhs, &mask, &lift)?;
                let diagonal = asm.csr_diagonal(be, &a)?;
                timings.constraints += lap(&mut t);
                (DeviceOperator::Full(a), Some(Cow::Owned(pattern)), diagonal)
            }
            AssemblyLevel::Element => {
                let em = asm.element_matrices(be)?;
                be.synchronize()?;
                timings.matrix = lap(&mut t);
                let mut diagonal = em.diagonal(be)?;
                for &d in &constraints.dofs {
                    diagonal[d] = 1.0;
                }
                let op = Constrained::new(be, em, &constraints)?;
                rhs = op.rhs(be, &rhs, &lift)?;
                timings.constraints += lap(&mut t);
                (DeviceOperator::Element(op), None, diagonal)
            }
        };
        timings.assembly = t0.elapsed().as_secs_f64();
        Ok(DeviceSystem {
            backend: be,
            operator,
            rhs,
            constraints,
            symmetric: self.physics.is_symmetric(),
            ncomp: space.ncomp,
            ncolors: cell_colors.as_ref().map_or(0, Vec::len),
            timings,
            pattern,
            diagonal,
        })
    }
}

impl<'a> DeviceSystem<'a> {
    /// A system assembled on the CPU at level `full`, moved to the device once.
    pub fn upload(be: &'a CudaBackend, system: &'a LinearSystem) -> Result<Self> {
        let SystemOperator::Full(a) = &system.operator else {
            return Err(Error::invalid(
                "only assembled matrices move to the GPU: use assembly level `full`, or assemble on the GPU (assemble_cuda)",
            ));
        };
        Ok(DeviceSystem {
            backend: be,
            operator: DeviceOperator::Full(DeviceCsr::from_host(be, a)?),
            rhs: be.from_host(&system.rhs)?,
            constraints: system.constraints.clone(),
            symmetric: system.symmetric,
            ncomp: system.ncomp,
            ncolors: system.ncolors,
            timings: system.timings.clone(),
            pattern: Some(Cow::Borrowed(a)),
            diagonal: a.diagonal(),
        })
    }

    pub fn ndofs(&self) -> usize {
        self.rhs.len()
    }

    /// The operator as the solvers see it.
    pub fn as_operator(&self) -> &dyn LinearOperator<CudaBackend> {
        match &self.operator {
            DeviceOperator::Full(a) => a,
            DeviceOperator::Element(op) => op,
        }
    }

    /// Nonzeros of the matrix, or stored element-matrix entries at the element level.
    pub fn storage_entries(&self) -> usize {
        match &self.operator {
            DeviceOperator::Full(a) => a.nnz(),
            DeviceOperator::Element(op) => op.inner.storage_entries(),
        }
    }

    /// The assembled matrix on the host (tests compare it with the CPU's), `None` at the element
    /// level.
    pub fn matrix_to_host(&self) -> Result<Option<CsrMatrix>> {
        match (&self.operator, &self.pattern) {
            (DeviceOperator::Full(a), Some(p)) => {
                let mut m = p.clone().into_owned();
                m.values = a.values_to_host(self.backend)?;
                Ok(Some(m))
            }
            _ => Ok(None),
        }
    }

    /// The sparsity pattern (values unset), `None` at the element level.
    pub fn pattern(&self) -> Option<&CsrMatrix> {
        self.pattern.as_deref()
    }

    /// The diagonal (ones on constrained rows), for Jacobi-type preconditioners.
    pub fn diagonal(&self) -> &[f64] {
        &self.diagonal
    }

    /// The right-hand side on the host.
    pub fn rhs_to_host(&self) -> Result<Vec<f64>> {
        self.backend.to_host(&self.rhs)
    }

    /// Solve on the device with a Krylov method: Jacobi, block Jacobi (assembled level) or
    /// Chebyshev preconditioning, or none.
    pub fn solve(&self, config: &SolverConfig) -> Result<Solution> {
        let be = self.backend;
        let method = config
            .method
            .krylov()
            .ok_or_else(|| Error::invalid("the direct solver runs on the CPU: use --backend cpu"))?;
        if method == KrylovMethod::Cg && !self.symmetric {
            return Err(Error::invalid("CG needs a symmetric operator; use gmres or bicgstab"));
        }
        let mut timings = self.timings.clone();
        let t0 = Instant::now();
        let n = self.ndofs();
        let op = self.as_operator();
        let pc: Box<dyn LinearOperator<CudaBackend> + '_> = match config.preconditioner {
            PreconditionerKind::None => Box::new(Identity(n)),
            PreconditionerKind::Jacobi => Box::new(Jacobi::new(be, &self.diagonal)?),
            PreconditionerKind::Chebyshev => Box::new(Chebyshev::new(be, op, &self.diagonal, 4, 30.0)?),
            PreconditionerKind::BlockJacobi => {
                let host = self.matrix_to_host()?.ok_or_else(|| {
                    Error::invalid("block Jacobi on the GPU needs assembly level `full` (use jacobi or chebyshev with `element`)")
                })?;
                let bj = BlockJacobi::from_csr(&host, self.ncomp)?;
                Box::new(DeviceBlockJacobi::new(be, bj.block_size(), bj.inverses())?)
            }
            k @ (PreconditionerKind::Ssor | PreconditionerKind::Ilu0) => {
                return Err(Error::invalid(format!("preconditioner {k:?} is CPU-only (sequential sweeps): use jacobi, block-jacobi or chebyshev on the GPU")))
            }
        };
        let mut x = be.zeros(n)?;
        timings.preconditioner = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let stats = method.solve(be, op, pc.as_ref(), &self.rhs, &mut x, &config.options)?;
        let u = be.to_host(&x)?;
        timings.solve = t1.elapsed().as_secs_f64();
        Ok(Solution { u, stats, timings })
    }
}
