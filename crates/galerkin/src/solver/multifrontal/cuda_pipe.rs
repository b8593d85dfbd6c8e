//! The transfer maps' pipelined kernels ([`MapsKernel::Pipelined`]) and the per-launch profile of
//! a fused solve ([`CudaMultifrontal::solve_profile`]).
//!
//! The block-per-subtree map kernels (round 5, [`MapsKernel::Blocks`]) gather a chunk of columns,
//! wait for it, multiply and scatter, one chunk after the other: only the other resident blocks
//! hide each gather's round trips. The pipelined kernels give every block a sequence of
//! (subtree, chunk) items (subtrees b, b + grid, …, each with all its chunks) and issue the next item's gather — and its subtree's map when the
//! subtree changes — as asynchronous copies (`cp.async`) into the other half of a double buffer
//! before multiplying the current one, so each block keeps a whole chunk of loads in flight while
//! it computes. The grid is what is resident at once (occupancy × multiprocessors).
use super::*;
use serde::Serialize;

/// Which kernels apply the transfer maps in a solve by them ([`SolvePath::Maps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MapsKernel {
    /// A block per subtree, its chunks of columns one after the other, the products on the FP64
    /// units (round 5).
    Blocks,
    /// A block per sequence of (subtree, chunk) items, the next item's loads in flight.
    Pipelined,
    /// A block per subtree as [`MapsKernel::Blocks`], each chunk's whole gather issued at once as
    /// asynchronous copies (one round trip, no registers held) and the backward product
    /// `x_E = [H K]·w` on the FP64 tensor cores (`mma.sync` m16n8k4 on Hopper). The default below
    /// [`super::SEPARATORS_MIN_RHS`] right-hand sides (none since round 12) and where the
    /// separator layout does not apply: on the H100 at 2^20 cubic elements the fastest single solve (0.70 ms; 256: 6.1
    /// against 8.1 ms of the block kernels; BENCHMARKS.md, rounds 7 and 8).
    #[default]
    Tensor,
    /// [`MapsKernel::Tensor`] with the rows that the passes above the bottom one eliminate in a
    /// compact, row-major buffer (`crate::solver::multifrontal::separators`): those passes read
    /// and write whole lines instead of the separators' pieces of each column of `b` and `x`.
    /// Where the layout does not apply ([`CudaMultifrontal::has_separator_layout`]), the
    /// tensor-core kernels.
    Separators,
    /// [`MapsKernel::Separators`] with the passes near the root (at most
    /// [`crate::solver::multifrontal::separators::TOP_SUBTREES`] subtrees each) walked both ways
    /// by one launch (`mf_mapss_top`, [`crate::solver::multifrontal::separators::TopWalk`])
    /// instead of a launch per pass and direction.
    SeparatorsTop,
}

/// Padding of each staged `[H K]ᵀ` row of the tensor-core kernels (`MF_TC_PAD` in
/// `kernels/multifrontal.cu`): rows `16·k + 4` doubles apart put the 4 rows of an A fragment in
/// distinct shared-memory banks.
pub(super) const TC_PAD: usize = 4;

/// Passes of fewer subtrees than this (those near the root: a few hundred subtrees or less do not
/// fill the GPU one block per subtree) run the tensor-core map kernels with blocks of 32 columns
/// and their chunks shared out over `grid.y`, a chunk per block.
pub const TC_FEW_SUBTREES: usize = 2048;

/// Columns per chunk (threads per block) of the pipelined kernels unless a shape is forced (32 for
/// at most 32 right-hand sides).
pub const PIPE_THREADS: usize = 64;

/// Doubles a pass's launches move: per right-hand side, the rows the subtrees eliminate (`b` read;
/// `x` written backward), their roots' Schur rows (contributions written forward; `x` read
/// backward), the external contributions read (forward all, backward those at eliminated rows);
/// and the maps read once per solve (`Gᵀ` forward, `[H K]ᵀ` backward).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PassTraffic {
    elim: u64,
    schur: u64,
    ext_forward: u64,
    ext_backward: u64,
    map_forward: u64,
    map_backward: u64,
}

impl PassTraffic {
    pub(super) fn new(p: &Pass) -> PassTraffic {
        let mut t = PassTraffic::default();
        for j in 0..p.len() {
            let (r, ne) = ((p.row_ptr[j + 1] - p.row_ptr[j]) as u64, p.elim[j] as u64);
            t.elim += ne;
            t.schur += r - ne;
            t.map_forward += ne * (r - ne);
            t.map_backward += r * crate::solver::multifrontal::maps::ldm(ne as usize) as u64;
            for k in p.ext_ptr[j] as usize..p.ext_ptr[j + 1] as usize {
                t.ext_forward += 1;
                t.ext_backward += u64::from(u64::from(p.ext_row[k]) < ne);
            }
        }
        t
    }

    /// Bytes of one launch with `nrhs` columns.
    pub(super) fn bytes(&self, backward: bool, nrhs: usize) -> f64 {
        let n = nrhs as u64;
        let d = if backward { n * (2 * self.elim + self.schur + self.ext_backward) + self.map_backward } else { n * (self.elim + self.schur + self.ext_forward) + self.map_forward };
        8.0 * d as f64
    }
}

/// What a launch was: kernel, grid, block, shared memory. The kernel itself, not its name, so the
/// profile reads its registers and occupancy without a list of kernels to look it up in (round 10
/// lost a sweep to such a list missing a new kernel).
#[derive(Clone, Copy)]
pub(super) struct Launch<'a> {
    kernel: &'a Kernel,
    grid: u32,
    threads: u32,
    smem: u32,
}

impl<'a> Launch<'a> {
    pub(super) fn new(k: &'a Kernel, cfg: LaunchConfig) -> Launch<'a> {
        Launch { kernel: k, grid: cfg.grid_dim.0, threads: cfg.block_dim.0, smem: cfg.shared_mem_bytes }
    }
}

/// A profiled launch's kernel name and function (kept past the launch).
struct Launched {
    name: &'static str,
    func: cudarc::driver::CudaFunction,
    grid: u32,
    threads: u32,
    smem: u32,
}

impl From<Launch<'_>> for Launched {
    fn from(l: Launch<'_>) -> Launched {
        Launched { name: l.kernel.name, func: l.kernel.func.clone(), grid: l.grid, threads: l.threads, smem: l.smem }
    }
}

/// An event recorded after one fused launch while profiling.
pub(super) struct Mark {
    label: String,
    pass: usize,
    backward: bool,
    subtrees: usize,
    bytes: f64,
    launch: Launched,
    event: cudarc::driver::CudaEvent,
}

/// One launch of a profiled solve: what ran, its time between events and the bytes it moves.
#[derive(Clone, Debug, Serialize)]
pub struct LaunchProfile {
    /// `forward q` / `backward q` (pass q).
    pub label: String,
    pub pass: usize,
    pub backward: bool,
    pub subtrees: usize,
    pub kernel: String,
    pub grid: u32,
    pub threads: u32,
    pub smem_bytes: u32,
    /// Registers per thread and resident blocks per multiprocessor (from the driver).
    pub registers: i32,
    pub blocks_per_sm: u32,
    /// Seconds from the previous event (the previous launch's end, or the solve's start; the first
    /// backward launch also holds any level-by-level launches above the fused subtrees).
    pub seconds: f64,
    /// Bytes the launch moves by [`PassTraffic`] (its own lower bound).
    pub bytes: f64,
}

impl DevPass {
    /// Dynamic shared memory of one block of the pipelined map kernels with `cols` columns: two
    /// maps and two chunks of local rows.
    pub(super) fn mapsp_smem(&self, backward: bool, cols: usize) -> usize {
        let m = if backward { self.map_backward } else { self.map_forward };
        8 * 2 * (m.next_multiple_of(2) + self.dp.rows as usize * (cols + 1))
    }
}

impl CudaMultifrontal {
    /// Chooses the transfer maps' kernels (`None`: [`MapsKernel::Separators`] from
    /// [`super::SEPARATORS_MIN_RHS`] right-hand sides on where that layout applies, else
    /// [`MapsKernel::default`]); for benchmarks and tests. The block width is the forced shape's threads, else [`PIPE_THREADS`] (pipelined) or
    /// by the number of right-hand sides (blocks).
    pub fn set_maps_kernel(&mut self, kernel: Option<MapsKernel>) {
        self.maps_kernel = kernel;
    }

    /// Caps the blocks of a pipelined launch (`None`: as many as are resident at once) and the
    /// column blocks (`grid.y`) of a tensor-core launch (`None`: a chunk per block on passes of
    /// few subtrees); for tests, so that each block walks many (subtree, chunk) items. Errors on 0.
    pub fn set_pipe_blocks(&mut self, max: Option<usize>) -> Result<()> {
        if max == Some(0) {
            return Err(Error::invalid("a pipelined launch needs at least one block"));
        }
        self.pipe_blocks = max;
        Ok(())
    }

    /// Block width of the tensor-core map kernels on pass `p`: the forced shape's threads, else
    /// 32 on passes of fewer than [`TC_FEW_SUBTREES`] subtrees, else by the number of
    /// right-hand sides.
    pub(super) fn tensor_cols(&self, p: &DevPass, nrhs: usize) -> usize {
        self.shape.map_or_else(|| if p.count < TC_FEW_SUBTREES { 32 } else { SubtreeShape::for_rhs(nrhs).threads }, |s| s.threads)
    }

    /// Column blocks (`grid.y`) of a tensor-core launch of `cols` columns per block: every chunk
    /// its own block on passes of fewer than [`TC_FEW_SUBTREES`] subtrees, else one (a block walks
    /// its subtree's chunks); capped by [`CudaMultifrontal::set_pipe_blocks`].
    pub(super) fn tensor_grid_y(&self, p: &DevPass, nrhs: usize, cols: usize) -> usize {
        let y = if p.count < TC_FEW_SUBTREES { nrhs.div_ceil(cols) } else { 1 };
        y.min(self.pipe_blocks.unwrap_or(usize::MAX)).min(GRID_Y).max(1)
    }

    /// The pipelined launch of one pass, or `None` where the blocks' kernels are chosen or even 32
    /// columns of the pipelined kernel do not fit the shared memory.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch_pipelined(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, b: DevPtr, x: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<Option<Launch<'_>>> {
        if self.maps_kernel.unwrap_or_default() != MapsKernel::Pipelined {
            return Ok(None);
        }
        let Some((cols, smem)) = self.fit_width(self.shape.map_or(if nrhs <= 32 { 32 } else { PIPE_THREADS }, |s| s.threads), |c| p.mapsp_smem(backward, c)) else {
            return Ok(None);
        };
        let k = if backward { &self.kernels.mapsp_backward[p.map_nb - 1] } else { &self.kernels.mapsp_forward };
        let grid = self.walk_grid(be, k, cols, smem, p.count)?;
        let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (cols as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let mcap = if backward { p.map_backward } else { p.map_forward } as u32;
        let (count, nr, n, off) = (p.count as u32, nrhs as u32, self.sym.n as u64, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &count, &mcap, &nr, &n, &b, &x, &leaf, &off, &maps)?;
        Ok(Some(Launch::new(k, cfg)))
    }

    /// The widest of `cols`, `cols / 2`, … (down to 32) whose block's shared memory `smem(width)`
    /// fits, with that shared memory; `None` where even 32 columns do not fit.
    pub(super) fn fit_width(&self, mut cols: usize, smem: impl Fn(usize) -> usize) -> Option<(usize, usize)> {
        while cols > 32 && smem(cols) > self.sub_smem {
            cols /= 2;
        }
        let bytes = smem(cols);
        (bytes <= self.sub_smem).then_some((cols, bytes))
    }

    /// Blocks of a launch whose blocks walk subtrees b, b + grid, … of `count`: as many as are
    /// resident at once with `threads` threads and `smem` bytes each, capped by
    /// [`CudaMultifrontal::set_pipe_blocks`] and by `count` (no more blocks than subtrees).
    pub(super) fn walk_grid(&self, be: &CudaBackend, k: &Kernel, threads: usize, smem: usize, count: usize) -> Result<usize> {
        let per_sm = k.func.occupancy_max_active_blocks_per_multiprocessor(threads as u32, smem, None).map_err(|e| cuda_error(format!("occupancy of {}: {e}", k.name)))?;
        let resident = per_sm.max(1) as usize * be.device().multiprocessors.max(1) as usize;
        Ok(count.min(self.pipe_blocks.unwrap_or(resident)).max(1))
    }

    /// Records an event after a fused launch while a profile is being taken (timing events:
    /// cudarc's default flags disable timing, and `cuEventElapsedTime` then fails).
    pub(super) fn mark(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, launch: Launch<'_>) -> Result<()> {
        let mut guard = self.probe.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(marks) = guard.as_mut() {
            let event = be.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(|e| cuda_error(format!("profile event: {e}")))?;
            let dir = if backward { "backward" } else { "forward" };
            marks.push(Mark { label: format!("{dir} {}", p.index), pass: p.index, backward, subtrees: p.count, bytes: p.traffic.bytes(backward, nrhs), launch: launch.into(), event });
        }
        Ok(())
    }

    /// Records an event after the walk of the passes near the root (both ways, one launch).
    pub(super) fn mark_walk(&self, be: &CudaBackend, first: usize, subtrees: usize, bytes: f64, launch: Launch<'_>) -> Result<()> {
        self.mark_span(be, format!("walk {first}.. both ways"), first, subtrees, bytes, launch)
    }

    /// Records an event after a launch of several passes (`label`, from pass `first` on).
    pub(super) fn mark_span(&self, be: &CudaBackend, label: String, first: usize, subtrees: usize, bytes: f64, launch: Launch<'_>) -> Result<()> {
        let mut guard = self.probe.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(marks) = guard.as_mut() {
            let event = be.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(|e| cuda_error(format!("profile event: {e}")))?;
            marks.push(Mark { label, pass: first, backward: false, subtrees, bytes, launch: launch.into(), event });
        }
        Ok(())
    }

    /// One solve with an event after every fused launch: each launch's time, bytes and occupancy
    /// (the benchmark's split of where a solve's time goes). Empty where no pass is fused.
    pub fn solve_profile(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<Vec<LaunchProfile>> {
        crate::solver::factorization::check_rhs_len(be, "multifrontal solve", self.sym.n, nrhs, b, x)?;
        let start = self.profile_start(be)?;
        let solved = self.solve_device(be, nrhs, b, x, ForwardDone::No);
        self.profile_finish(start, solved)
    }

    /// [`Self::solve_profile`] of [`CudaMultifrontal::solve_many_rows`] (row-major `b` and `x`).
    pub fn solve_rows_profile(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<Vec<LaunchProfile>> {
        self.check_solve(be, "multifrontal row-major solve", nrhs, b, x)?;
        let start = self.profile_start(be)?;
        let solved = if nrhs == 0 { Ok(()) } else { self.solve_layout(be, nrhs, b, x, ForwardDone::No, true) };
        self.profile_finish(start, solved)
    }

    /// [`Self::solve_profile`] of [`CudaMultifrontal::factor_and_solve`]: the fused launches
    /// (factorization, maps and forward sweep of each pass), then the backward ones; the first
    /// backward launch's time also holds the factorization above the fused passes and its check.
    pub fn factor_and_solve_profile(&mut self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<Vec<LaunchProfile>> {
        let start = self.profile_start(be)?;
        let solved = self.factor_and_solve(be, nrhs, b, x);
        self.profile_finish(start, solved)
    }

    /// Starts recording an event after every fused launch.
    pub(super) fn profile_start(&self, be: &CudaBackend) -> Result<cudarc::driver::CudaEvent> {
        let start = be.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(|e| cuda_error(format!("profile event: {e}")))?;
        *self.probe.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
        Ok(start)
    }

    /// The launches recorded since [`Self::profile_start`] (after `solved`, the run they time).
    pub(super) fn profile_finish(&self, start: cudarc::driver::CudaEvent, solved: Result<()>) -> Result<Vec<LaunchProfile>> {
        let marks = self.probe.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
        solved?;
        let mut prev = &start;
        let mut out = Vec::with_capacity(marks.len());
        for m in &marks {
            let ms = prev.elapsed_ms(&m.event).map_err(|e| cuda_error(format!("profile event: {e}")))?;
            prev = &m.event;
            let (name, func) = (m.launch.name, &m.launch.func);
            let registers = func.get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS).map_err(|e| cuda_error(format!("registers of {name}: {e}")))?;
            let blocks_per_sm = func.occupancy_max_active_blocks_per_multiprocessor(m.launch.threads, m.launch.smem as usize, None).map_err(|e| cuda_error(format!("occupancy of {name}: {e}")))?;
            out.push(LaunchProfile {
                label: m.label.clone(),
                pass: m.pass,
                backward: m.backward,
                subtrees: m.subtrees,
                kernel: name.to_string(),
                grid: m.launch.grid,
                threads: m.launch.threads,
                smem_bytes: m.launch.smem,
                registers,
                blocks_per_sm,
                seconds: f64::from(ms) * 1e-3,
                bytes: m.bytes,
            });
        }
        Ok(out)
    }
}
