//! The direct solve on the GPU as `galerkin run` and the benchmark do it: assemble into the
//! cyclic reduction's level 0, factor and solve in one pass, then refine.
//!
//! Why refine: block cyclic reduction is backward stable, but its Schur complements at the coarse
//! levels are differences of large numbers, and its forward error grows faster with N than block
//! Thomas's (on the seed's problem at 10⁶ elements, k = 2: L2 error 4.7e-5 against Thomas's
//! 1.1e-6). One step of iterative refinement in f64, with the residual recomputed matrix-free from
//! the problem data (the matrix was overwritten), brings it to 3.3e-7. The system's condition
//! number grows like N², so at 10⁷–10⁸ elements no f64 solver is accurate; see BENCHMARKS.md.
use super::{DeviceCyclicReduction, DeviceDg};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::Backend;
use crate::Result;

/// Two vectors of the problem's size for the refinement (residual and correction).
pub struct RefineScratch {
    r: CudaVector,
    d: CudaVector,
}

impl RefineScratch {
    pub fn new(be: &CudaBackend, n: usize) -> Result<RefineScratch> {
        Ok(RefineScratch { r: be.zeros(n)?, d: be.zeros(n)? })
    }
}

/// Assembles `data` into `cr`'s level 0 and `rhs`, factors and solves into `x`, then applies
/// `refine` steps x += A⁻¹(b − A x). Nothing is allocated; ends after the last launch (the
/// factorization's pivot check synchronised once in the middle).
pub fn assemble_and_solve(
    be: &CudaBackend,
    data: &DeviceDg,
    cr: &mut DeviceCyclicReduction,
    rhs: &mut CudaVector,
    x: &mut CudaVector,
    refine: usize,
    scratch: &mut RefineScratch,
) -> Result<()> {
    data.assemble_into(be, cr.matrix_mut(), rhs)?;
    cr.refactor_and_solve(be, rhs, x)?;
    refine_solution(be, data, cr, x, refine, scratch)
}

/// `refine` steps of x += A⁻¹(b − A x) with the factored `cr` and the matrix-free residual.
pub fn refine_solution(be: &CudaBackend, data: &DeviceDg, cr: &DeviceCyclicReduction, x: &mut CudaVector, refine: usize, scratch: &mut RefineScratch) -> Result<()> {
    use crate::solver::Factorization;
    for _ in 0..refine {
        data.residual(be, x, &mut scratch.r)?;
        cr.solve(be, &scratch.r, &mut scratch.d)?;
        be.axpy(1.0, &scratch.d, x)?;
    }
    Ok(())
}
