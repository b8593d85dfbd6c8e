//! The row-major solve in place ([`CudaMultifrontal::solve_many_rows_in_place`], round 27, issue
//! 15): `x` overwrites `b`, as LAPACK's `getrs` overwrites B. Through the separator rows at dofs
//! ([`CudaMultifrontal::set_sep_in_x`]) `sep`, `x` and `b` are then one buffer, and the bottom
//! forward pass copies no owned row (its source is its destination): at 2^20 cubic elements and
//! 256 columns 0.40 GB of the solve's 9.02 (`solve_bytes_aliased`). With the compact rows the
//! bytes are the same as out of place (no `x` buffer needed).
//!
//! Why it is safe: [`crate::solver::multifrontal::in_place::hazards`] applies every launch's
//! reads and writes to one buffer on the plan and finds none (no row of `b` is overwritten before
//! its last read, no two blocks of a launch share a row one of them writes); a block of the
//! staged kernels (`maps_sep_subtree`) stores a chunk's rows only after it gathered them.
use super::{CudaMultifrontal, ForwardDone, LaunchProfile, Out, RowsBottom};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::{Error, Result};

impl CudaMultifrontal {
    /// Solves `nrhs` right-hand sides stored row-major in `bx` (`n × nrhs`, as
    /// [`Self::solve_many_rows`]) and overwrites them with the solutions. The same results as
    /// [`Self::solve_many_rows`], bit for bit. Where the launches that run are not those proven
    /// safe in place ([`Self::in_place_runs`], or the solve runs level by level), it solves into a
    /// scratch `x` kept with the solve's buffers (`n ×` their columns, allocated on the first such
    /// solve and when they grow, not each call) and copies it into `bx`.
    pub fn solve_many_rows_in_place(&self, be: &CudaBackend, nrhs: usize, bx: &mut CudaVector) -> Result<()> {
        self.check_in_place(be, nrhs, bx)?;
        if nrhs == 0 {
            return Ok(());
        }
        self.solve_into(be, nrhs, Out::Over(bx), ForwardDone::No, true)
    }

    /// [`Self::solve_rows_profile`] of [`Self::solve_many_rows_in_place`] (its scratch copy, where it
    /// makes one, after the last launch recorded).
    pub fn solve_rows_in_place_profile(&self, be: &CudaBackend, nrhs: usize, bx: &mut CudaVector) -> Result<Vec<LaunchProfile>> {
        self.check_in_place(be, nrhs, bx)?;
        let start = self.profile_start(be)?;
        let solved = self.solve_many_rows_in_place(be, nrhs, bx);
        self.profile_finish(start, solved)
    }

    /// [`Self::solve_many_rows_in_place`]'s checks: `bx` holds `n × nrhs` values on this device.
    pub(super) fn check_in_place(&self, be: &CudaBackend, nrhs: usize, bx: &CudaVector) -> Result<()> {
        let want = self.sym.n.checked_mul(nrhs).ok_or_else(|| Error::invalid(format!("{nrhs} right-hand sides of {} rows overflow", self.sym.n)))?;
        if bx.len() != want {
            return Err(Error::invalid(format!("multifrontal in-place row-major solve: the right-hand sides hold {} values, expected n × nrhs = {} × {nrhs} = {want}", bx.len(), self.sym.n)));
        }
        be.check("multifrontal in-place row-major solve", want, &[&*bx])?;
        if nrhs > u32::MAX as usize / 2 {
            return Err(Error::invalid(format!("{nrhs} right-hand sides is too many for one solve")));
        }
        Ok(())
    }

    /// Whether a row-major solve through the separator rows runs in place on `b` here: the staged
    /// bottom kernels ([`RowsBottom::Staged`], the default) and no pipelined passes — the launches
    /// whose reads and writes [`crate::solver::multifrontal::in_place::hazards`] models — and no
    /// node left to the level-by-level code.
    pub fn in_place_runs(&self) -> bool {
        self.rows_bottom == RowsBottom::Staged && self.pipe_separators.is_none() && self.upper_leaves.is_empty() && self.upper_levels.iter().all(super::Step::is_empty)
    }
}
