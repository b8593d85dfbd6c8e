//! Pass 1 chained into the bottom forward pass ([`CudaMultifrontal::set_sep_chain`], round 23;
//! kernels `mf_mapss{b,bt,btp}_chain`). The bottom forward pass stores every bottom subtree's
//! root contribution rows to the contribution buffer and b at its owned separator rows to `sep`;
//! forward 1 read them back from memory one launch later (231 µs of the 2.885-ms solve of 256
//! columns at 2^20 cubic elements on the H200, round 22). Chained, the block that stores the last
//! bottom subtree a pass-1 subtree reads goes on to that subtree's sweep in the same launch, while
//! those lines are still in L2, and forward 1's launch, its tail and its DRAM reads go away.
//! **Measured slower** on the H200 at 2^20 cubic elements (round 23): the chained launch took 1184 µs
//! at 256 columns against 812 + 229 apart (solve 3.051 against 2.907 ms), 246 against 165 + 51 µs at
//! 32 columns — each bottom block now fences its stores before counting itself in, the pass-1 sweeps
//! run at the bottom pass's occupancy, and the two inlined sweeps take 64 registers (4 blocks per SM
//! at 256 columns instead of 5). Opt-in, for the record.
use super::sep::{block_threads, DevSeparators, SEP_BULK, SEP_EXT, SEP_L2, SEP_PREF, SEP_TCF, SEP_XS};
use super::*;
use crate::solver::multifrontal::separators::{chain_deps, ChainDeps, SeparatorPlan};

/// [`ChainDeps`] on the device (`dep_ptr`, `dep`, `need`) and the arrival counters (pass-1
/// subtrees × column blocks), grown on demand and zeroed before each launch.
pub(super) struct DevChain {
    tables: Vec<CudaSlice<u32>>,
    count: Mutex<Option<CudaSlice<u32>>>,
}

impl DevChain {
    pub(super) fn new(be: &CudaBackend, d: &ChainDeps) -> Result<DevChain> {
        let up = |v: &Vec<u32>| be.upload(if v.is_empty() { &[0u32][..] } else { &v[..] });
        Ok(DevChain { tables: vec![up(&d.dep_ptr)?, up(&d.dep)?, up(&d.need)?], count: Mutex::new(None) })
    }
}

impl CudaMultifrontal {
    /// Chains pass 1 of the separator-row solve into the bottom forward pass (`false` by
    /// default; measured slower, see the module's doc): one launch for both where it applies
    /// ([`CudaMultifrontal::chains_forward`]), the same products in the same order (the results
    /// are bit-identical).
    pub fn set_sep_chain(&mut self, on: bool) {
        self.sep_chain = on;
    }

    /// Whether pass 1 is chained into the bottom forward pass where it applies ([`Self::set_sep_chain`]).
    pub fn sep_chain(&self) -> bool {
        self.sep_chain
    }

    /// Whether a forward solve of `nrhs` columns (row-major or column-major `b`) runs passes 0
    /// and 1 as one chained launch here: chosen; a separator layout whose pass-1 subtrees read
    /// bottom subtrees only ([`chain_deps`](crate::solver::multifrontal::separators::chain_deps));
    /// pass 1 below the walk; both passes by the plain separator-row kernels (not a row-major
    /// bottom a thread per column, not pipelined, warp items or streamed) with bulk lines (sm_90
    /// and up, an even count of columns) and the same line variant but for staged contributions
    /// (the chained pass 1 reads them through L2 instead: the same sums in the same order).
    /// The chain's tables on the device are built here, by the first call that gets this far
    /// (a failed upload reads as `false`; the solve then reports it).
    pub fn chains_forward(&self, be: &CudaBackend, nrhs: usize, row_major: bool) -> bool {
        let n = self.n_word(row_major);
        // The separator rows in `x` do not chain ([`Self::set_sep_in_x`]).
        !(row_major && self.sep_in_x) && self.separators.as_ref().is_some_and(|s| matches!(self.walk_first(be, s, nrhs, n), Ok(q) if q >= 2) && matches!(self.chain_flags(be, s, nrhs, n), Ok(Some(_))))
    }

    /// The chained launch's kernel variant (`flags`, with [`SEP_BULK`] and [`SEP_L2`], without
    /// [`SEP_EXT`]) and the chain's tables, where [`Self::chains_forward`]'s conditions other than
    /// the walk's hold; the tables are built ([`Self::dev_chain`]) only once every other condition
    /// holds, and handed back so that the launch looks them up once.
    fn chain_flags<'a>(&self, be: &CudaBackend, s: &'a DevSeparators, nrhs: usize, n: u64) -> Result<Option<(usize, &'a DevChain)>> {
        let (Some(p0), Some(p1)) = (s.passes.first(), s.passes.get(1)) else { return Ok(None) };
        let row_major = n & ROW_MAJOR != 0;
        let bottom_own = if row_major { self.rows_bottom_runs() } else { self.leans_forward() || self.streams_bottom() };
        let piped = self.pipe_separators.is_some_and(|min| p0.count >= min || p1.count >= min);
        if !self.sep_chain || s.at_dofs || nrhs % 2 != 0 || bottom_own || piped || self.split_columns || p0.index != 0 {
            return Ok(None);
        }
        // Without the round-28 split (MF_SEP_XS): the chained kernels add the contributions as before.
        let (f0, f1) = (self.sep_line_flags(be, p0, false, n) & !(SEP_EXT | SEP_XS), self.sep_line_flags(be, p1, false, n) & !(SEP_EXT | SEP_XS));
        if f0 != f1 || f0 & SEP_BULK == 0 {
            return Ok(None);
        }
        Ok(self.dev_chain(be, s)?.map(|c| (f0 | SEP_L2, c)))
    }

    /// The chain's tables on the device ([`chain_deps`] of this factorization's plans, rebuilt
    /// from the symbolic structure as the factorization built them), made on first use and kept;
    /// `None` where [`chain_deps`] does not apply.
    fn dev_chain<'a>(&self, be: &CudaBackend, s: &'a DevSeparators) -> Result<Option<&'a DevChain>> {
        if let Some(c) = s.chain.get() {
            return Ok(c.as_ref());
        }
        let plan = device_plan(&self.sym)?;
        let deps = SeparatorPlan::new(&plan, self.sym.n).and_then(|sp| chain_deps(&self.sym, &plan, &sp));
        let built = deps.map(|d| DevChain::new(be, &d)).transpose()?;
        // Another thread may have built the same tables first: either copy serves.
        let _ = s.chain.set(built);
        Ok(s.chain.get().and_then(Option::as_ref))
    }

    /// Passes 0 and 1 forward as one launch of `mf_mapss*_chain` where [`Self::chains_forward`]
    /// (`false`: nothing launched, the passes run one launch each): a block per (bottom subtree,
    /// column block) of the bottom pass's width, the counters zeroed first.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn chain_forward(&self, be: &CudaBackend, s: &DevSeparators, nrhs: usize, n: u64, b: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<bool> {
        let Some((flags, chain)) = self.chain_flags(be, s, nrhs, n)? else { return Ok(false) };
        let (p0, p1) = (&s.passes[0], &s.passes[1]);
        let smem = |c: usize| p0.mapss_smem(false, c, flags).max(p1.mapss_smem(false, c, flags));
        let Some((cols, smem)) = self.fit_width(self.tensor_cols(p0, nrhs), smem) else { return Ok(false) };
        let grid_y = self.tensor_grid_y(p0, nrhs, cols);
        let k = &self.kernels.mapss_chain[match flags & !(SEP_BULK | SEP_L2) {
            0 => 0,
            SEP_TCF => 1,
            f if f == SEP_TCF | SEP_PREF => 2,
            f => return Err(Error::invalid(format!("internal: no chained kernel for line flags {f}"))),
        }];
        let threads = block_threads(k, cols, self.column_threads)?;
        let mut guard = chain.count.lock().unwrap_or_else(|p| p.into_inner());
        let want = p1.count * grid_y;
        if guard.as_ref().is_none_or(|c| c.len() < want) {
            *guard = Some(be.alloc::<u32>(want)?);
        }
        let count = guard.as_mut().ok_or_else(|| Error::invalid("internal: chain counters missing"))?;
        be.zero_slice(count)?;
        let cfg = LaunchConfig { grid_dim: (p0.count as u32, grid_y as u32, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let (sp0, sp1) = (s.pass(be, 0, false, [b, 0, sep]), s.pass(be, 1, false, [b, 0, sep]));
        let (c, m0, m1, nr) = (cols as u32, p0.mapss_map(false, flags) as u32, p1.mapss_map(false, flags) as u32, nrhs as u32);
        let (off0, off1) = (ptr(be, &p0.map_off), ptr(be, &p1.map_off));
        let (dep_ptr, dep, need, cnt) = (ptr(be, &chain.tables[0]), ptr(be, &chain.tables[1]), ptr(be, &chain.tables[2]), ptr(be, &*count));
        launch!(be, k, cfg; &self.tree, &p0.dp, &sp0, &p1.dp, &sp1, &c, &m0, &m1, &nr, &n, &b, &sep, &leaf, &off0, &off1, &maps, &dep_ptr, &dep, &need, &cnt)?;
        let bytes = p0.traffic.bytes(false, nrhs) + p1.traffic.bytes(false, nrhs);
        self.mark_span(be, "forward 0+1".to_string(), 0, p0.count + p1.count, bytes, pipe::Launch::new(k, cfg))?;
        Ok(true)
    }
}
