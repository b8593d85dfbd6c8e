//! Factorization and forward solve in the same launches, for right-hand sides known when the
//! matrix is factorized ([`CudaMultifrontal::factor_and_solve`], kernels
//! `mf_fused_factor_forward_*`). A solve with the factorization kept reads `b` in the forward
//! pass, stores its partial results, and reads them (or `b` again) in the backward pass; the
//! factorization itself is latency-bound, so folding the forward pass into its launches lets
//! the forward traffic run while other blocks wait on the factorization's dependent loads. Each
//! fused pass is one launch, a block per subtree: factorize the subtree's fronts, compute its
//! transfer maps, sweep every column forward. The nodes above the fused subtrees are
//! factorized level by level as in [`CudaMultifrontal::refactor`], then the rest of the solve
//! (upper levels, the backward passes by the maps) runs as [`Factorization::solve_many`] does.
//! The factorization and the maps are kept: later solves reuse them.
use super::*;

/// Threads (= columns of the forward sweep, 4 warps for the factorization) of a fused block.
const FUSED_THREADS: usize = 128;

impl CudaMultifrontal {
    /// Whether [`Self::factor_and_solve`] fuses the forward pass into the factorization: the tree
    /// has fused subtrees and each pass has transfer-map kernels (else it factorizes, then solves).
    pub fn fuses_factor_and_forward(&self) -> bool {
        !self.passes.is_empty() && self.passes.iter().all(|p| p.map_nb <= 3)
    }

    /// Uploads the structure and element matrices (as [`Self::factor`]), then factorizes and
    /// solves `nrhs` right-hand sides known now in one go ([`Self::factor_and_solve`]); the
    /// factorization is returned for later solves.
    pub fn factor_and_solve_new(be: &CudaBackend, sym: Arc<Symbolic>, element_matrices: &[f64], nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<CudaMultifrontal> {
        let mut mf = CudaMultifrontal::upload(be, sym, element_matrices)?;
        mf.factor_and_solve(be, nrhs, b, x)?;
        Ok(mf)
    }

    /// Factorizes again from the element matrices on the device (as [`Self::refactor`]) and solves
    /// `nrhs` right-hand sides (`b`, `x` column-major `n × nrhs`), the forward pass of the fused
    /// subtrees inside the factorization's launches (see the module's text). The factorization
    /// and the transfer maps stay for later solves.
    pub fn factor_and_solve(&mut self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<()> {
        self.check_solve(be, "multifrontal factor and solve", nrhs, b, x)?;
        if nrhs == 0 || !self.fuses_factor_and_forward() {
            self.refactor(be)?;
            return if nrhs == 0 { Ok(()) } else { self.solve_device(be, nrhs, b, x, ForwardDone::No) };
        }
        self.reset_factor(be)?;
        let maps = {
            let guard = self.maps_slot(be)?;
            ptr(be, &guard.as_ref().ok_or_else(|| Error::invalid("internal: transfer maps missing"))?.data)
        };
        {
            let mut guard = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
            let leaf = ptr(be, &self.buffers(be, &mut guard, nrhs, None, false)?.leaf);
            let (bp, xp) = (ptr(be, &b.data), ptr(be, &x.data));
            for p in self.passes.iter().filter(|p| p.count > 0) {
                self.launch_fused(be, p, nrhs, bp, xp, leaf, maps)?;
            }
        }
        self.factor_steps(be, true)?;
        if let Some(m) = self.maps.get_mut().unwrap_or_else(|p| p.into_inner()).as_mut() {
            m.fresh = true;
        }
        self.solve_device(be, nrhs, b, x, ForwardDone::Passes)
    }

    /// One fused launch over the subtrees of pass `p`.
    #[allow(clippy::too_many_arguments)]
    fn launch_fused(&self, be: &CudaBackend, p: &DevPass, nrhs: usize, b: DevPtr, x: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        // Shared memory: a front per warp, the maps' set-up, the forward sweep (one after another).
        let smem = |cols: usize| (8 * group_doubles(p.mmax) * (cols / 32)).max(p.smem(cols)).max(p.mapt_smem(false, cols));
        let (cols, bytes) = self.fit_width(FUSED_THREADS, smem).ok_or_else(|| Error::invalid(format!("fused factorization of pass {}: {} bytes of shared memory exceed {}", p.index, smem(32), self.sub_smem)))?;
        let cfg = LaunchConfig { grid_dim: (p.count as u32, 1, 1), block_dim: (cols as u32, 1, 1), shared_mem_bytes: bytes as u32 };
        let k = &self.kernels.fused_factor_forward[usize::from(!p.small_e)];
        let (st, pv, status, lvl) = (ptr(be, &self.storage), ptr(be, &self.pinv), ptr(be, &self.status), ptr(be, &self.lvl_end));
        let (mmax, mcap, nr, n, off) = (p.mmax as i32, p.map_cap(false, true) as u32, nrhs as u32, self.sym.n as u64, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &lvl, &mmax, &st, &pv, &status, &off, &maps, &mcap, &nr, &n, &b, &x, &leaf)?;
        self.mark(be, p, false, nrhs, pipe::Launch::new(k, cfg))
    }
}
