//! Block cyclic reduction on the GPU, the algorithm of [`crate::dg::cyclic`] level by level: per
//! level one launch inverts the odd rows in place, one reduces the even rows into the next level;
//! a solve is one forward launch per level, one block product at the top, one back launch per
//! level. 2⌈log₂ N⌉ + 1 launches each way; every launch is parallel over the rows of its level, and
//! a solve of several right-hand sides loads each block once for all of them.
//! [`DeviceCyclicReduction::refactor_and_solve`] runs the forward sweep of a first right-hand side
//! inside the factorization's launches, so a fresh matrix is factored and solved in one pass over it.
use super::DeviceBlockTridiag;
use crate::backend::cuda::kernels::launch;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::dg::cyclic::next_rows;
use crate::solver::factorization::{check_rhs_len, Factorization};
use crate::{Error, Result};
use cudarc::driver::CudaSlice;
use std::sync::{Mutex, MutexGuard};

/// Right-hand sides and solutions of levels ≥ 1, for `nrhs` columns.
struct Work {
    nrhs: usize,
    f: Vec<CudaSlice<f64>>,
    x: Vec<CudaSlice<f64>>,
}

pub struct DeviceCyclicReduction {
    /// Level 0 is the matrix (factored in place), then ⌈N/2⌉, ⌈N/4⌉, …, 1 rows.
    levels: Vec<DeviceBlockTridiag>,
    work: Mutex<Work>,
    fail: CudaSlice<u64>,
    /// Stands in for the right-hand-side arguments of a factorization without one.
    dummy: CudaSlice<f64>,
}

fn cuda_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Backend { backend: "cuda".into(), message: format!("{what}: {e}") }
}

/// The level work arrays for `nrhs` columns (grown, never shrunk).
fn work_for<'a>(work: &'a Mutex<Work>, be: &CudaBackend, sizes: &[usize], nrhs: usize) -> Result<MutexGuard<'a, Work>> {
    let mut w = work.lock().unwrap_or_else(|p| p.into_inner());
    if w.nrhs < nrhs {
        w.f = sizes.iter().map(|&s| be.alloc(s * nrhs)).collect::<Result<_>>()?;
        w.x = sizes.iter().map(|&s| be.alloc(s * nrhs)).collect::<Result<_>>()?;
        w.nrhs = nrhs;
    }
    Ok(w)
}

/// Back substitution from the top level down to level 0 (`x`), for `nr` columns.
fn back_sweep(be: &CudaBackend, levels: &[DeviceBlockTridiag], w: &mut Work, x: &mut CudaVector, nr: u64) -> Result<()> {
    let top = levels.len() - 1;
    for l in (0..top).rev() {
        let m = &levels[l];
        let (n, nn) = (m.n as u64, levels[l + 1].n as u64);
        let (xc, xnc) = (m.size() as u64, levels[l + 1].size() as u64);
        let (xlo, xhi) = w.x.split_at_mut(l);
        let xnext = &xhi[0];
        if l == 0 {
            launch!(be, &m.k.back, be.grid(nn); &n, &m.lower, &m.upper, xnext, &xnc, &mut x.data, &xc, &nr)?;
        } else {
            launch!(be, &m.k.back, be.grid(nn); &n, &m.lower, &m.upper, xnext, &xnc, &mut xlo[l - 1], &xc, &nr)?;
        }
    }
    Ok(())
}

impl DeviceCyclicReduction {
    /// Allocates the levels above `m` and factors `m` in place.
    pub fn factor_owned(be: &CudaBackend, m: DeviceBlockTridiag) -> Result<DeviceCyclicReduction> {
        let mut cr = DeviceCyclicReduction::new(be, m)?;
        cr.refactor(be)?;
        Ok(cr)
    }

    /// Allocates the levels above `m` without factoring (see [`Self::refactor_and_solve`]).
    pub fn new(be: &CudaBackend, m: DeviceBlockTridiag) -> Result<DeviceCyclicReduction> {
        m.check_owner(be)?;
        let b = m.b;
        let mut levels = vec![m];
        while levels[levels.len() - 1].n > 1 {
            let n = next_rows(levels[levels.len() - 1].n);
            levels.push(DeviceBlockTridiag::alloc(be, n, b)?);
        }
        Ok(DeviceCyclicReduction {
            levels,
            work: Mutex::new(Work { nrhs: 0, f: Vec::new(), x: Vec::new() }),
            fail: be.upload(&[u64::MAX])?,
            dummy: be.alloc(1)?,
        })
    }

    /// Level 0, to assemble a new matrix of the same size into before [`Self::refactor`].
    pub fn matrix_mut(&mut self) -> &mut DeviceBlockTridiag {
        &mut self.levels[0]
    }

    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Device bytes held by the factorization (all levels).
    pub fn bytes(&self) -> usize {
        self.levels.iter().map(DeviceBlockTridiag::bytes).sum()
    }

    /// Factors what level 0 holds now (a freshly assembled matrix). Waits for the device once, to
    /// read whether a block was singular.
    pub fn refactor(&mut self, be: &CudaBackend) -> Result<()> {
        self.factor_pass(be, None)
    }

    /// Factors what level 0 holds and solves `A x = b` in the same pass: the forward sweep runs in
    /// the factorization's launches, then one back sweep. One synchronisation, at the end.
    pub fn refactor_and_solve(&mut self, be: &CudaBackend, b: &CudaVector, x: &mut CudaVector) -> Result<()> {
        let n0 = self.levels[0].size();
        be.check("GPU cyclic reduction solve", n0, &[b, x])?;
        self.factor_pass(be, Some((b, x)))
    }

    fn factor_pass(&mut self, be: &CudaBackend, rhs: Option<(&CudaVector, &mut CudaVector)>) -> Result<()> {
        self.levels[0].check_owner(be)?;
        be.stream.memcpy_htod(&[u64::MAX], &mut self.fail).map_err(|e| cuda_err("resetting the pivot flag failed", e))?;
        let sizes: Vec<usize> = self.levels[1..].iter().map(DeviceBlockTridiag::size).collect();
        let cols: Vec<u64> = self.levels.iter().map(|l| l.size() as u64).collect();
        let mut guard = work_for(&self.work, be, &sizes, usize::from(rhs.is_some()))?;
        let w = &mut *guard;
        let mut rhs = rhs;
        let (dummy, fail) = (&self.dummy, &mut self.fail);
        for l in 0..self.levels.len() {
            let (lo, hi) = self.levels.split_at_mut(l + 1);
            let cur = &mut lo[l];
            let n = cur.n as u64;
            let level = l as u32;
            let (start, step, count, offdiag) = if n == 1 { (0u64, 1u64, 1u64, 0i32) } else { (1, 2, n / 2, 1) };
            let k = cur.k.clone();
            let (fc, fnc) = (cols[l], cols.get(l + 1).copied().unwrap_or(0));
            match &mut rhs {
                Some((b, x)) => {
                    // This level's right-hand side and solution, and the next level's right-hand side.
                    let one = 1u64;
                    let (flo, fhi) = w.f.split_at_mut(l);
                    let f_l: &CudaSlice<f64> = if l == 0 { &b.data } else { &flo[l - 1] };
                    let x_l: &mut CudaSlice<f64> = if l == 0 { &mut x.data } else { &mut w.x[l - 1] };
                    launch!(be, &k.invert, be.grid(count); &n, &start, &step, &count, &offdiag,
                        &mut cur.lower, &mut cur.diag, &mut cur.upper, &level, &mut *fail, f_l, &fc, &mut *x_l, &fc, &one)?;
                    if let Some(next) = hi.first_mut() {
                        let nn = next.n as u64;
                        launch!(be, &k.reduce, be.grid(nn); &n, &cur.lower, &cur.diag, &cur.upper, &nn,
                            &mut next.lower, &mut next.diag, &mut next.upper, f_l, &fc, &*x_l, &fc, &mut fhi[0], &fnc, &one)?;
                    }
                }
                None => {
                    let zero = 0u64;
                    launch!(be, &k.invert, be.grid(count); &n, &start, &step, &count, &offdiag,
                        &mut cur.lower, &mut cur.diag, &mut cur.upper, &level, &mut *fail, dummy, &zero, dummy, &zero, &zero)?;
                    if let Some(next) = hi.first_mut() {
                        let nn = next.n as u64;
                        launch!(be, &k.reduce, be.grid(nn); &n, &cur.lower, &cur.diag, &cur.upper, &nn,
                            &mut next.lower, &mut next.diag, &mut next.upper, dummy, &zero, dummy, &zero, dummy, &zero, &zero)?;
                    }
                }
            }
        }
        if let Some((_, x)) = rhs {
            back_sweep(be, &self.levels, w, x, 1)?;
        }
        let flag = be.download(&self.fail)?[0];
        if flag != u64::MAX {
            let (level, row) = (flag >> 48, flag & ((1 << 48) - 1));
            return Err(Error::Factorization(format!(
                "cyclic reduction (GPU): the diagonal block of element {} (level {level}, row {row}) is singular; check \
                 the penalty (SIPG needs σ large enough), the coefficients and the boundary conditions",
                row << level
            )));
        }
        Ok(())
    }
}

impl Factorization<CudaBackend> for DeviceCyclicReduction {
    fn n(&self) -> usize {
        self.levels[0].size()
    }
    fn name(&self) -> String {
        "cyclic-reduction (gpu)".into()
    }
    fn solve_many(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<()> {
        let n0 = self.n();
        check_rhs_len(be, "GPU cyclic reduction solve", n0, nrhs, b, x)?;
        be.check("GPU cyclic reduction solve", n0 * nrhs, &[b, x])?;
        self.levels[0].check_owner(be)?;
        if n0 == 0 || nrhs == 0 {
            return Ok(());
        }
        let sizes: Vec<usize> = self.levels[1..].iter().map(DeviceBlockTridiag::size).collect();
        let mut guard = work_for(&self.work, be, &sizes, nrhs)?;
        let w = &mut *guard;
        let top = self.levels.len() - 1;
        let nr = nrhs as u64;
        let cols = |l: usize| self.levels[l].size() as u64;
        // Forward: level l's right-hand side into level l + 1's, g of its odd rows into its x.
        for l in 0..top {
            let m = &self.levels[l];
            let (n, nn) = (m.n as u64, self.levels[l + 1].n as u64);
            let (fc, fnc) = (cols(l), cols(l + 1));
            let (flo, fhi) = w.f.split_at_mut(l);
            let fnext = &mut fhi[0];
            if l == 0 {
                launch!(be, &m.k.forward, be.grid(nn); &n, &m.lower, &m.diag, &m.upper, &b.data, &fc, &mut x.data, &fc, fnext, &fnc, &nr)?;
            } else {
                launch!(be, &m.k.forward, be.grid(nn); &n, &m.lower, &m.diag, &m.upper, &flo[l - 1], &fc, &mut w.x[l - 1], &fc, fnext, &fnc, &nr)?;
            }
        }
        // Top: one row, x = D⁻¹ f.
        {
            let m = &self.levels[top];
            let (n, c) = (m.n as u64, cols(top));
            if top == 0 {
                launch!(be, &m.k.block_diag, be.grid(n); &n, &m.diag, &b.data, &c, &mut x.data, &c, &nr)?;
            } else {
                launch!(be, &m.k.block_diag, be.grid(n); &n, &m.diag, &w.f[top - 1], &c, &mut w.x[top - 1], &c, &nr)?;
            }
        }
        back_sweep(be, &self.levels, w, x, nr)
    }
}
