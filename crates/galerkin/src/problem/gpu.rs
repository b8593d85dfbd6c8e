//! Solving an assembled system on a CUDA GPU: the CSR matrix and vectors go to the device once,
//! the Krylov iterations run there (the same generic solvers as on the CPU), and only the solution
//! comes back.
use super::linear::{LinearSystem, Solution, SolverConfig, SystemOperator};
use crate::backend::cuda::{CudaBackend, DeviceBlockJacobi, DeviceCsr};
use crate::backend::{Backend, Identity, LinearOperator};
use crate::solver::precond::{BlockJacobi, Chebyshev, Jacobi, PreconditionerKind};
use crate::{Error, Result};
use std::time::Instant;

impl LinearSystem {
    /// Solve on the GPU. Needs the `full` assembly level; SSOR and ILU(0) stay CPU-only.
    pub fn solve_cuda(&self, be: &CudaBackend, config: &SolverConfig) -> Result<Solution> {
        let a = match &self.operator {
            SystemOperator::Full(a) => a,
            SystemOperator::Element(_) => {
                return Err(Error::invalid("the CUDA backend solves assembled systems: use assembly level `full`"))
            }
        };
        let method = config
            .method
            .krylov()
            .ok_or_else(|| Error::invalid("the direct solver runs on the CPU: use --backend cpu"))?;
        let mut timings = self.timings.clone();
        let t0 = Instant::now();
        let n = self.ndofs();
        let da = DeviceCsr::from_host(be, a)?;
        let diag = a.diagonal();
        let pc: Box<dyn LinearOperator<CudaBackend> + '_> = match config.preconditioner {
            PreconditionerKind::None => Box::new(Identity(n)),
            PreconditionerKind::Jacobi => Box::new(Jacobi::new(be, &diag)?),
            PreconditionerKind::Chebyshev => Box::new(Chebyshev::new(be, &da, &diag, 4, 30.0)?),
            PreconditionerKind::BlockJacobi => {
                let host = BlockJacobi::from_csr(a, self.ncomp)?;
                Box::new(DeviceBlockJacobi::new(be, host.block_size(), host.inverses())?)
            }
            k @ (PreconditionerKind::Ssor | PreconditionerKind::Ilu0) => {
                return Err(Error::invalid(format!("preconditioner {k:?} is CPU-only (sequential sweeps): use jacobi, block-jacobi or chebyshev on the GPU")))
            }
        };
        let b = be.from_host(&self.rhs)?;
        let mut x = be.zeros(n)?;
        timings.preconditioner = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let stats = method.solve(be, &da, pc.as_ref(), &b, &mut x, &config.options)?;
        let u = be.to_host(&x)?;
        timings.solve = t1.elapsed().as_secs_f64();
        Ok(Solution { u, stats, timings })
    }
}
