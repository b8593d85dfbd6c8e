//! The linear solve, written once over the backend: GMRES(m) or BiCGStab from `crate::solver`,
//! preconditioned by element block Jacobi (the inverse of each cell's `nloc × nloc` diagonal block),
//! point Jacobi or nothing.
use crate::backend::{Backend, Cpu, Identity, LinearOperator};
use crate::solver::{BlockJacobi, Jacobi, KrylovOptions, SolveStats, SolverMethod};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// `[solver] method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Gmres,
    Bicgstab,
}

/// `[solver] preconditioner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precond {
    BlockJacobi,
    Jacobi,
    None,
}

impl Precond {
    pub fn name(self) -> &'static str {
        match self {
            Precond::BlockJacobi => "block-jacobi",
            Precond::Jacobi => "jacobi",
            Precond::None => "none",
        }
    }
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Gmres => "gmres",
            Method::Bicgstab => "bicgstab",
        }
    }
    fn solver(self) -> SolverMethod {
        match self {
            Method::Gmres => SolverMethod::Gmres,
            Method::Bicgstab => SolverMethod::Bicgstab,
        }
    }
}

/// How to solve.
#[derive(Clone, Debug)]
pub struct SolverConfig {
    pub method: Method,
    pub preconditioner: Precond,
    pub options: KrylovOptions,
}

/// The element block Jacobi of an assembled DG matrix (blocks of `nloc` contiguous rows) on a
/// backend: the CPU takes the generic node-block operations (any size); the GPU's node-block
/// kernels stop at 3, so it has its own for 1 to 16 (`kernels/advection_blocks.cu`).
pub trait AdvectionBackend: Backend {
    fn element_block_jacobi(&self, a: &Self::Matrix, nloc: usize) -> Result<Box<dyn LinearOperator<Self>>>;
}

impl AdvectionBackend for Cpu {
    fn element_block_jacobi(&self, a: &Self::Matrix, nloc: usize) -> Result<Box<dyn LinearOperator<Cpu>>> {
        Ok(Box::new(BlockJacobi::new(self, nloc, self.matrix_node_blocks(a, nloc)?)?))
    }
}

/// A finished solve: the solution on the backend, what the solver did and the seconds spent
/// building the preconditioner and iterating.
pub struct Solved<B: Backend> {
    pub u: B::Vector,
    pub stats: SolveStats,
    pub precond_s: f64,
    pub solve_s: f64,
}

/// Solves `A u = b` from zero.
pub fn solve<B: AdvectionBackend>(be: &B, a: &B::Matrix, b: &B::Vector, nloc: usize, cfg: &SolverConfig) -> Result<Solved<B>> {
    let t = Instant::now();
    let n = crate::backend::LinearOperator::<B>::nrows(a);
    let m: Box<dyn LinearOperator<B>> = match cfg.preconditioner {
        Precond::BlockJacobi => be.element_block_jacobi(a, nloc)?,
        Precond::Jacobi => {
            let d = be.matrix_diagonal(a)?;
            Box::new(Jacobi::new(be, &d).map_err(|e| Error::invalid(format!("point Jacobi: {e}")))?)
        }
        Precond::None => Box::new(Identity(n)),
    };
    let precond_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut u = be.zeros(n)?;
    let stats = cfg.method.solver().solve(be, a, m.as_ref(), b, &mut u, &cfg.options)?;
    Ok(Solved { u, stats, precond_s, solve_s: t.elapsed().as_secs_f64() })
}
