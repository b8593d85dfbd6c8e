//! Solving an assembled system on a CUDA GPU: the CSR matrix and vectors go to the device once,
//! the Krylov iterations run there (the same generic solvers as on the CPU), and only the solution
//! comes back.
use super::linear::{LinearSystem, Solution, SolverConfig, SolverMethod, SystemOperator};
use crate::backend::cuda::{CudaBackend, DeviceBlockJacobi, DeviceCsr};
use crate::backend::{Backend, Identity, LinearOperator};
use crate::linalg::dense::invert_in_place;
use crate::solver::precond::{Chebyshev, Jacobi, PreconditionerKind};
use crate::solver::KrylovMethod;
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
        let method = match config.method {
            SolverMethod::Cg => KrylovMethod::Cg,
            SolverMethod::Gmres => KrylovMethod::Gmres,
            SolverMethod::Bicgstab => KrylovMethod::BiCgStab,
            SolverMethod::Direct => return Err(Error::invalid("the direct solver runs on the CPU: use --backend cpu")),
        };
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
                let bs = self.ncomp;
                let mut blocks = vec![0.0; n * bs];
                for node in 0..n / bs {
                    for i in 0..bs {
                        for j in 0..bs {
                            blocks[node * bs * bs + i * bs + j] = a.get(node * bs + i, node * bs + j);
                        }
                    }
                    invert_in_place(&mut blocks[node * bs * bs..(node + 1) * bs * bs], bs)
                        .ok_or_else(|| Error::invalid(format!("block Jacobi: singular block at node {node}")))?;
                }
                Box::new(DeviceBlockJacobi::new(be, bs, &blocks)?)
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
