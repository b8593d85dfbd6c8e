//! The transfer maps' solve through compact separator rows on the GPU
//! ([`MapsKernel::Separators`], kernels `mf_mapss_*`; the layout in
//! [`crate::solver::multifrontal::separators`]): the tensor-core map kernels with the rows that
//! passes 1 and up eliminate in a row-major buffer, so those passes move whole lines.
use super::*;
use super::tc_rows::{SEP_LD4, SEP_TRIM};
use crate::solver::multifrontal::separators::{fused_bases, SeparatorPlan, TopWalk, TOP_SUBTREES};

/// The kernels' `struct SepPass`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(super) struct SepPass {
    own_ptr: DevPtr,
    own_loc: DevPtr,
    own_dof: DevPtr,
    upper: u32,
}

// SAFETY: plain old data of the same layout as the kernels' `struct SepPass`.
unsafe impl DeviceRepr for SepPass {}

/// The passes with compact separator rows on the device, the owned-row tables of the bottom pass
/// (kept alive) and the rows of the separator buffer per right-hand side.
pub(super) struct DevSeparators {
    pub(super) passes: Vec<DevPass>,
    own: Vec<CudaSlice<u32>>,
    pub(super) rows: usize,
    /// The walk of the passes of at most [`TOP_SUBTREES`] subtrees (the default's).
    walk: Option<Arc<DevWalk>>,
    /// Walks of fewer passes near the root ([`CudaMultifrontal::set_walk_subtrees`]), by their
    /// bound on a pass's subtrees, built by the first solve that asks for one.
    narrow_walks: Mutex<Vec<(usize, Option<Arc<DevWalk>>)>>,
    /// Most local rows of a bottom subtree (its eliminated and Schur rows, without the owned rows).
    bottom_rows: usize,
    /// Most owned rows of a bottom subtree.
    bottom_own: usize,
    /// Each bottom subtree's first eliminated dof where every subtree's eliminated rows are one
    /// run of dofs ([`fused_bases`](crate::solver::multifrontal::separators::fused_bases); the fused row-major kernels, [`RowsBottom::Fused`]).
    fused_base: Option<CudaSlice<u32>>,
    /// Pass 1 chained into the bottom forward pass ([`CudaMultifrontal::set_sep_chain`]), where
    /// [`chain_deps`](crate::solver::multifrontal::separators::chain_deps) applies: built by the
    /// first solve that asks for it (the chain is opt-in, so a factorization pays nothing for it).
    pub(super) chain: std::sync::OnceLock<Option<super::chain::DevChain>>,
    /// Separator rows at their dofs ([`SeparatorPlan::at_dofs`], [`CudaMultifrontal::set_sep_in_x`]):
    /// a row-major solve's `x` is the separator buffer, and the bottom backward pass stores no
    /// owned row (the upper passes left `x` there); `no_own` is its empty owned-row table.
    pub(super) at_dofs: bool,
    no_own: CudaSlice<u32>,
    /// Passes `0..adds_below` add their contributions into `x` ([`SeparatorPlan::at_dofs_adds`]; 0: none).
    pub(super) adds_below: usize,
}


/// [`TopWalk`] on the device: its tables, the passes' `struct Pass` array and map offsets, and the
/// flags (steps × chunks; a step's chunk is done when its flag holds the solve's epoch) with the
/// item counter, grown on demand.
pub(super) struct DevWalk {
    first: usize,
    /// Doubles of the largest staged map and the most local rows of a walked subtree.
    mcap: usize,
    rows: usize,
    nsteps: usize,
    tables: Vec<CudaSlice<u32>>,
    /// The steps table on the host, for [`CudaMultifrontal::walk_levels`].
    steps: Vec<u32>,
    passes: CudaSlice<u64>,
    map_offs: CudaSlice<u64>,
    state: Mutex<Option<WalkState>>,
}

struct WalkState {
    chunks: usize,
    flags: CudaSlice<u32>,
    counter: CudaSlice<u32>,
    epoch: u32,
    /// The stamps of the last traced line walk and its chunks ([`CudaMultifrontal::set_walk_trace`]).
    trace: Option<(CudaSlice<u64>, usize)>,
}

/// Columns per chunk of the walk (round 12's: a warp per item; the line walk's by default,
/// [`super::WalkShape`]).
pub(super) const WALK_COLS: usize = 32;

/// The walk's largest staged map (doubles), most local rows and dynamic shared memory (bytes; the
/// kernel is left at the default limit, [`DEFAULT_SMEM`]).
fn walk_smem(top: &[DevPass]) -> (usize, usize, usize) {
    let mcap = top.iter().map(|p| p.map_cap(true, true).max(p.map_cap(false, true))).max().unwrap_or(0);
    let rows = top.iter().map(|p| p.dp.rows as usize).max().unwrap_or(0);
    (mcap, rows, 8 * (mcap.next_multiple_of(2) + rows * (WALK_COLS + 1)))
}

/// A `struct Pass` as 16 words (13 pointers, 5 `u32`, padding), for an array of them on the device.
fn pass_words(d: &DevicePass) -> [u64; 16] {
    let pair = |a: u32, b: u32| u64::from(a) | u64::from(b) << 32;
    [
        d.sub_ptr, d.nodes, d.f_off, d.l_off, d.p_off, d.loc, d.loc_ptr, d.row_ptr, d.row_dof, d.elim, d.ext_ptr, d.ext_row, d.ext_src,
        pair(d.front_entries, d.rows),
        pair(d.loc_entries, d.piv_entries),
        pair(d.nodes_max, 0),
    ]
}

impl DevWalk {
    /// [`TopWalk::new`]`(sym, plan, max_subtrees)` on the device over `passes` (the layout's), where
    /// the walk kernels can run it (at most 3 map tiles, a walk item within the default shared
    /// memory).
    fn new(be: &CudaBackend, sym: &Symbolic, plan: &SubtreePlan, passes: &[DevPass], max_subtrees: usize) -> Result<Option<DevWalk>> {
        let Some(w) = TopWalk::new(sym, plan, max_subtrees) else { return Ok(None) };
        if !(passes[w.first..].iter().all(|p| p.map_nb <= 3) && walk_smem(&passes[w.first..]).2 <= DEFAULT_SMEM) {
            return Ok(None);
        }
        let up = |v: &Vec<u32>| be.upload(if v.is_empty() { &[0u32][..] } else { &v[..] });
        let (mcap, rows, _) = walk_smem(&passes[w.first..]);
        let words: Vec<u64> = passes.iter().flat_map(|p| pass_words(&p.dp)).collect();
        let offs: Vec<u64> = passes.iter().map(|p| ptr(be, &p.map_off)).collect();
        Ok(Some(DevWalk {
            first: w.first,
            mcap,
            rows,
            nsteps: w.steps.len() / 2,
            tables: vec![up(&w.steps)?, up(&w.dep_ptr)?, up(&w.dep)?],
            steps: w.steps.clone(),
            passes: be.upload(&words)?,
            map_offs: be.upload(&offs)?,
            state: Mutex::new(None),
        }))
    }
}

/// Which separator layout [`DevSeparators::new`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SepLayout {
    Compact,
    AtDofs,
    Adds,
}

impl DevSeparators {
    /// The separator layout of `plan`, if it applies ([`SeparatorPlan::new`]).
    /// `kind`: compact rows, [`SeparatorPlan::at_dofs`]'s rows, or those with the bottom pass adding
    /// into `x` ([`SeparatorPlan::at_dofs_adds`]).
    pub(super) fn new(be: &CudaBackend, sym: &Symbolic, plan: &SubtreePlan, layout: &MapLayout, kind: SepLayout) -> Result<Option<DevSeparators>> {
        let sp = match kind {
            SepLayout::Compact => SeparatorPlan::new(plan, sym.n),
            SepLayout::AtDofs => SeparatorPlan::at_dofs(plan, sym.n),
            // Every pass below the default walk adds (the walk keeps the buffer; a solve never walks from lower, `walk_for`).
            SepLayout::Adds => SeparatorPlan::at_dofs_adds(sym, plan, sym.n, TopWalk::new(sym, plan, TOP_SUBTREES).map_or(plan.passes.len(), |w| w.first)),
        };
        let Some(sp) = sp else { return Ok(None) };
        let at_dofs = sp.at_dofs;
        let mut passes = sp.passes.iter().enumerate().map(|(q, p)| upload_pass(be, p, layout, q)).collect::<Result<Vec<_>>>()?;
        // The adding kernel is the tensor-core forward: roots of at most 16 Schur rows (else no adds layout).
        if passes[..sp.adds_below].iter().any(|p| !p.tc_roots()) {
            return Ok(None);
        }
        for p in &mut passes[..sp.adds_below] {
            p.adds = true;
        }
        // The bottom forward pass stages b at its owned rows below its local rows.
        let bottom_rows = passes[0].dp.rows as usize;
        passes[0].dp.rows = sp.max_rows0 as u32;
        for (q, p) in passes.iter_mut().enumerate() {
            p.trim_rows = sp.trim_rows(q);
        }
        let up = |v: &Vec<u32>| be.upload(if v.is_empty() { &[0u32][..] } else { &v[..] });
        let own = vec![up(&sp.own_ptr)?, up(&sp.own_loc)?, up(&sp.own_dof)?];
        let walk = DevWalk::new(be, sym, plan, &passes, TOP_SUBTREES)?.map(Arc::new);
        let bottom_own = sp.own_ptr.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0);
        let fused_base = fused_bases(&plan.passes[0]).map(|v| up(&v)).transpose()?;
        let no_own = be.upload(&vec![0u32; sp.own_ptr.len()])?;
        Ok(Some(DevSeparators { passes, own, rows: sp.rows, walk, narrow_walks: Mutex::new(Vec::new()), bottom_rows, bottom_own, fused_base, chain: std::sync::OnceLock::new(), at_dofs, no_own, adds_below: sp.adds_below }))
    }

    /// The walk of the passes near the root with at most `max` subtrees each (`None`: the
    /// default's [`TOP_SUBTREES`]), where the walk kernels can run it; a bound other than the
    /// default's is built by the first call that asks for it (from `sym`'s plan, [`device_plan`])
    /// and kept.
    pub(super) fn walk_of(&self, be: &CudaBackend, sym: &Symbolic, max: Option<usize>) -> Result<Option<Arc<DevWalk>>> {
        let Some(max) = max.filter(|&m| m != TOP_SUBTREES) else { return Ok(self.walk.clone()) };
        let mut narrow = self.narrow_walks.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, w)) = narrow.iter().find(|(m, _)| *m == max) {
            return Ok(w.clone());
        }
        let w = DevWalk::new(be, sym, &device_plan(sym)?, &self.passes, max)?.map(Arc::new);
        narrow.push((max, w.clone()));
        Ok(w)
    }

    /// Pass `q`'s owned-row tables one way for a launch on `b`, `x` and `sep`: none for the bottom
    /// backward pass at dofs (its owned rows' `x` is in place already), nor forward at dofs where
    /// `sep` is `b` itself (an in-place solve: the copy's source is its destination). At dofs is
    /// read off the launch (`sep` is `x`; launches without an `x`, the column-major lean pass and
    /// the chain, never run at dofs), not off `self`: the launch paths take their tables from the
    /// compact layout, whose owned rows are the same — until stop 55 that made every solve at dofs
    /// copy and store its owned rows as the compact one does (bit-identical, the bytes kept).
    pub(super) fn pass(&self, be: &CudaBackend, q: usize, backward: bool, [b, x, sep]: [DevPtr; 3]) -> SepPass {
        let at_dofs = sep == x && x != 0;
        let own_ptr = if at_dofs && (backward || sep == b) { &self.no_own } else { &self.own[0] };
        SepPass { own_ptr: ptr(be, own_ptr), own_loc: ptr(be, &self.own[1]), own_dof: ptr(be, &self.own[2]), upper: u32::from(q > 0) }
    }
}

/// Steps of 4 local rows the register-streamed kernels hold (`MFS_STEPS` in
/// `kernels/multifrontal_stream.cu`): subtrees of at most 48 local rows.
const STREAM_STEPS: usize = 12;

/// Warps per block of the register-streamed kernels (a tile of 8 columns each at a time).
const STREAM_WARPS: usize = 8;

/// Whether the register-streamed kernels can run bottom pass `p` (see
/// [`CudaMultifrontal::streams_bottom`]; `dp.rows` bounds the local rows).
fn stream_fits(p: &DevPass) -> bool {
    !p.has_ext && p.max_schur <= 16 && p.dp.rows as usize <= 4 * STREAM_STEPS && p.map_nb <= 3 && 8 * p.map_cap(true, true).max(p.map_cap(false, true)) <= DEFAULT_SMEM
}

/// Warps per block of `mf_lean_forward` (`MFL_WARPS`) and columns per warp item (`8·MFL_TILES`).
const LEAN_WARPS: usize = 4;
const LEAN_COLS: usize = 32;

/// Whether `mf_lean_forward` can run pass `p`: the bottom pass, no external contributions, at most
/// 32 eliminated rows (`MFL_STEPS` steps of 4) and 8 Schur rows (one fragment row) per subtree.
fn lean_fits(p: &DevPass) -> bool {
    p.index == 0 && !p.has_ext && p.max_schur <= 8 && p.map_nb <= 2
}

/// Warps per block and tile buffers per warp of `mf_lean_backward_*` (`MFB_WARPS`, `MFB_STAGES`).
const LEANB_WARPS: usize = 4;
const LEANB_STAGES: usize = 3;

/// Dynamic shared memory of a block of `mf_lean_backward_*` over pass `p`: the staged `[H K]ᵀ`
/// and each warp's ring of tiles (steps of 4 local rows × 32 lanes).
fn leanb_smem(p: &DevPass) -> usize {
    let steps = (p.dp.rows as usize).div_ceil(4);
    8 * (p.map_cap(true, true).next_multiple_of(2) + LEANB_WARPS * LEANB_STAGES * steps * 32)
}

/// Local rows a thread of `mf_rows_*` holds in registers (`MFR_ROWS`,
/// `kernels/multifrontal_rows.cu`; also the larger of the fused kernels' two sizes, 36 and 40).
const ROWS_REGISTERS: usize = 40;

/// Owned rows a thread of `mf_rows_fused_forward_*` loads with its local rows (`MFR_OWN`).
const ROWS_OWN: usize = 8;

/// Columns per block of `mf_rows_*` (its `__launch_bounds__`).
const ROWS_BLOCK: usize = 128;

/// How a row-major solve ([`CudaMultifrontal::solve_many_rows`]) runs its bottom pass
/// ([`CudaMultifrontal::set_rows_bottom`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowsBottom {
    /// The staged separator-row kernels (`mf_mapss_*`), as the passes above.
    Staged,
    /// A thread per column, its local rows in registers, the maps applied by FMAs (`mf_rows_*`).
    Columns,
    /// As `Columns`, the backward product on the FP64 tensor cores (`mf_rows_backward_tc`).
    ColumnsTensor,
    /// The bottom subtree's rows at implicit 1D places (no `row_dof` loads, every load of a
    /// column's rows issued before the first use, the map permuted once per block), two columns
    /// per thread (16-byte loads) where the count of columns is even, else one
    /// (`mf_rows_fused_*`, round 17). Slower on the H200 at 2^20 cubic elements: 6.07 ms at 256
    /// columns against the staged 3.31 (bottom forward 35 % of the copy rate against 58 %;
    /// BENCHMARKS.md, round 17), 4 % faster at one column.
    Fused,
    /// As `Fused`, always one column per thread (5.34 ms at 256 columns on the H200).
    FusedOne,
}

/// The bottom pass of row-major solves by default.
pub const DEFAULT_ROWS_BOTTOM: RowsBottom = RowsBottom::Staged;

/// How the plain separator-row kernels (`mf_mapss_*`) bring a chunk's row-major lines — `b` of a
/// row-major solve, `sep`, the contribution buffer — into shared memory
/// ([`CudaMultifrontal::set_sep_lines`]). All off ([`SepLines::PLAIN`], `Default`) is round 12's
/// kernels: an 8-byte `cp.async` per element, and each thread adding the external children's
/// contributions to its column from global memory, a batch of 8 entries at a time behind their
/// indices (two dependent round trips per batch: the latency the passes of few subtrees wait on).
/// A solve takes its layout's default ([`DEFAULT_ROWS_SEP_LINES`], [`DEFAULT_COLUMNS_SEP_LINES`])
/// unless chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SepLines {
    /// Each line by one bulk copy of Hopper's copy engine onto an mbarrier (`cp.async.bulk`; on
    /// sm_90 and up, with an even number of right-hand sides: 16-byte lines; else as before).
    pub bulk: bool,
    /// On passes of fewer than this many subtrees (`usize::MAX`: every pass above the bottom one),
    /// the external contributions staged as lines with the chunk's gather and added from shared
    /// memory.
    pub ext_below: Option<usize>,
    /// The forward product (the root's contribution rows) on the FP64 tensor cores, as the
    /// backward one, where a pass's roots have at most 16 Schur rows (else by FMAs as before).
    pub tc_forward: bool,
    /// With `bulk`: the passes near the root ([`TopWalk`], passes of at most [`TOP_SUBTREES`]
    /// subtrees) both ways in one launch, each (step, 32 columns) item by these kernels' gather
    /// and product (`mf_mapssbe_top`, and `mf_mapssbet_top` with `tc_forward` where every walked
    /// pass's roots have ≤ 16 Schur rows): one round of bulk copies per item, the children's
    /// contributions staged, instead of round 12's walk (a row after row and a dependent load per
    /// contribution). Where it does not apply (not sm_90, an odd count of columns, no walk, too
    /// little shared memory) the passes run one launch each.
    pub top: bool,
}

impl SepLines {
    /// Neither variant: round 12's plain kernels (the column-major solves' default,
    /// [`DEFAULT_COLUMNS_SEP_LINES`]; `SepLines::default()`).
    pub const PLAIN: SepLines = SepLines { bulk: false, ext_below: None, tc_forward: false, top: false };
    /// Round 19's walk by lines: bulk copies, contributions staged on the passes of fewer than
    /// [`TC_FEW_SUBTREES`] subtrees, the forward product on the tensor cores, the passes near the
    /// root in one launch.
    pub const WALK: SepLines = SepLines { bulk: true, ext_below: Some(TC_FEW_SUBTREES), tc_forward: true, top: true };
}

/// The row-major solves' lines by default ([`CudaMultifrontal::solve_many_rows`]): [`SepLines::WALK`]
/// since round 20. On the H200 at 2^20 cubic elements it solved 256 columns in 3.040 / 3.058 ms
/// against the plain kernels' 3.345 / 3.364, one column level (rounds 19 and the lead's check of
/// round 19), and its GPU = faer / GPU = CPU test passed on the device both times.
pub const DEFAULT_ROWS_SEP_LINES: SepLines = SepLines::WALK;

/// The column-major solves' lines by default: the plain kernels ([`SepLines::PLAIN`]) until the
/// lines are measured faster there (`bench-iga --rhs-engines gpu,gpu-bulkext2tctop`, round 20).
pub const DEFAULT_COLUMNS_SEP_LINES: SepLines = SepLines::PLAIN;

/// What [`CudaMultifrontal::separator_pass_shape`] reports of one separator pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SepPassShape {
    /// Subtrees of the pass.
    pub subtrees: usize,
    /// Most Schur (contribution) rows of a subtree's root.
    pub max_schur: usize,
    /// Whether any subtree has external children.
    pub has_ext: bool,
}

/// With no map kernel chosen ([`CudaMultifrontal::set_maps_kernel`] `None`), solves of this many
/// right-hand sides or more run [`MapsKernel::Separators`] where the layout applies, fewer the
/// tensor-core kernels. 1 since round 12: with [`DEFAULT_COLUMN_THREADS`] the separator rows are
/// the fastest maps' solve at every count on the H200 at 2^20 cubic elements (1 column: 0.584 ms
/// against 0.637 by the tensor-core kernels; 16: 0.638; 256: 3.44 against 5.00; BENCHMARKS.md,
/// round 12). On the H100 with one thread per column they were slower at 1 (0.759 against 0.697
/// ms; round 8), hence the earlier 16.
pub const SEPARATORS_MIN_RHS: usize = 1;

/// Threads per column of the separator-row kernels' blocks by default
/// ([`CudaMultifrontal::set_column_threads`]): 2 is the fastest at 1, 16, 256 and 1024
/// right-hand sides on the H200 at 2^20 cubic elements (round 12: 1 column 0.584 against 0.710 ms
/// with 1 thread, 16: 0.638 against 0.767, 256: 3.44 against 3.68; 4 threads with 64-column
/// chunks 3.91). The bottom launches are limited by the staged chunk's shared memory, so twice
/// the warps per block are twice the warps per multiprocessor.
pub const DEFAULT_COLUMN_THREADS: usize = 2;

impl CudaMultifrontal {
    /// Gives every chunk of columns its own block in the separator-layout launches of every pass
    /// (`false`, the default: on passes of many subtrees a block walks its subtree's chunks with
    /// the map staged once). Split, the bottom passes have `nrhs / columns` times the blocks, each
    /// with one gather, product and store, and the blocks of one subtree adjacent (its map read
    /// from L2 after the first); for measuring which keeps more loads in flight.
    pub fn set_split_columns(&mut self, split: bool) {
        self.split_columns = split;
    }

    /// Runs the bottom pass of the separator-row solve (`false`, the default: `mf_mapss_*`) by
    /// the register-streamed kernels (`kernels/multifrontal_stream.cu`): the map alone staged in
    /// shared memory, a warp per tile of 8 columns loading its tensor-core fragments straight from
    /// `b` and `sep` and storing from its accumulators, so no column chunk holds shared memory.
    /// Where they do not apply ([`CudaMultifrontal::streams_bottom`] false) the usual kernels run.
    pub fn set_stream_bottom(&mut self, stream: bool) {
        self.stream_bottom = stream;
    }

    /// Runs the bottom forward pass of the separator-row solve (`false`, the default:
    /// `mf_mapss_forward`) by warp items (`mf_lean_forward`, `kernels/multifrontal_stream.cu`): a
    /// warp per (subtree, 32 columns) issues all its gathers as cp.async copies into its own
    /// shared memory, multiplies each landed tile of 8 columns on the tensor cores and stores from
    /// the accumulators — no block barrier and no staged chunk held by a whole block. Where it does
    /// not apply ([`CudaMultifrontal::leans_forward`] false) the usual kernel runs. Slower on the
    /// H200 at 256 columns (1.84 against 1.04 ms: its reads, 8 columns × 32 bytes per instruction,
    /// reach half the copy rate of whole-column runs; BENCHMARKS.md, round 13), faster at one.
    pub fn set_lean_forward(&mut self, lean: bool) {
        self.lean_forward = lean;
    }

    /// Runs the bottom backward pass of the separator-row solve (`false`, the default:
    /// `mf_mapss_backward_*`) by warps (`mf_lean_backward_*`): a block per subtree stages its map
    /// once, then each warp walks its tiles of 8 columns through a ring of cp.async buffers in
    /// its own shared memory (two tiles in flight while one is multiplied on the tensor cores)
    /// and stores x from the accumulators. Where it does not apply
    /// ([`CudaMultifrontal::leans_backward`] false) the usual kernels run. Slower on the H200 (3.34
    /// against 1.68 ms at 256 columns; BENCHMARKS.md, round 13).
    pub fn set_lean_backward(&mut self, lean: bool) {
        self.lean_backward = lean;
    }

    /// Runs the bottom pass of row-major solves ([`CudaMultifrontal::solve_many_rows`]) a thread
    /// per column ([`RowsBottom::Columns`], [`RowsBottom::ColumnsTensor`]: `mf_rows_*`,
    /// `kernels/multifrontal_rows.cu`; [`DEFAULT_ROWS_BOTTOM`] by default): a warp of 32 consecutive columns loads each local row as one 256-byte line into
    /// registers and applies the subtree's map there, the map the block's only shared memory —
    /// instead of the separator-row kernels' staged chunks of columns behind a block barrier.
    /// Where it does not fit ([`CudaMultifrontal::rows_bottom_runs`] false) or for column-major
    /// solves the usual kernels run.
    pub fn set_rows_bottom(&mut self, how: RowsBottom) {
        self.rows_bottom = how;
    }

    /// Chooses how the separator-row kernels move whole lines ([`SepLines`]) in row- and
    /// column-major solves alike (by default [`DEFAULT_ROWS_SEP_LINES`] and
    /// [`DEFAULT_COLUMNS_SEP_LINES`] per layout; `None` restores those). Applies to every plain
    /// launch of `mf_mapss_*` and, with [`SepLines::top`], the walk; not the pipelined kernels.
    pub fn set_sep_lines(&mut self, lines: Option<SepLines>) {
        self.sep_lines = lines;
    }

    /// The lines the separator-row kernels take in a solve of that layout (row-major `b` and `x`,
    /// or column-major).
    pub fn sep_lines(&self, row_major: bool) -> SepLines {
        self.sep_lines.unwrap_or(if row_major { DEFAULT_ROWS_SEP_LINES } else { DEFAULT_COLUMNS_SEP_LINES })
    }

    /// Whether the kernels may move lines by bulk copies here: chosen, and the copy engine's
    /// `cp.async.bulk` exists (sm_90 and up). The one test of both the passes' launches and the walk.
    pub(super) fn bulk_lines(&self, be: &CudaBackend, l: SepLines) -> bool {
        l.bulk && be.device().compute_capability.0 >= 9
    }

    /// Whether a row-major solve's bottom pass runs a thread per column here: chosen, the
    /// separator layout present, no external contributions into the bottom pass, at most
    /// [`ROWS_REGISTERS`] local rows per subtree, the staged map within the default shared memory.
    /// The fused variants ([`RowsBottom::Fused`]) also need every bottom subtree's eliminated rows
    /// to be one run of dofs ([`fused_bases`](crate::solver::multifrontal::separators::fused_bases)) and at most [`ROWS_OWN`] owned rows per subtree.
    pub fn rows_bottom_runs(&self) -> bool {
        let tensor = self.rows_bottom == RowsBottom::ColumnsTensor;
        if matches!(self.rows_bottom, RowsBottom::Fused | RowsBottom::FusedOne) {
            return self.separators.as_ref().is_some_and(|s| {
                s.fused_base.is_some()
                    && s.bottom_rows <= ROWS_REGISTERS
                    && s.bottom_own <= ROWS_OWN
                    && s.passes.first().is_some_and(|p| p.index == 0 && !p.has_ext && 8 * p.map_cap(true, false).max(p.map_cap(false, false)) <= DEFAULT_SMEM)
            });
        }
        self.rows_bottom != RowsBottom::Staged
            && self.separators.as_ref().is_some_and(|s| {
                s.bottom_rows <= ROWS_REGISTERS
                    && s.passes.first().is_some_and(|p| p.index == 0 && !p.has_ext && p.map_nb <= 3 && 8 * p.map_cap(true, tensor).max(p.map_cap(false, false)) <= DEFAULT_SMEM)
            })
    }

    /// One launch of `mf_rows_*` over the bottom pass `p` (row-major `b`, `x`): a block per
    /// (subtree, up to [`ROWS_BLOCK`] consecutive columns), the subtree's map its shared memory.
    #[allow(clippy::too_many_arguments)]
    fn sweep_rows_bottom(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let Some(seps) = self.separators.as_ref() else { return Err(Error::invalid("internal: no separator layout")) };
        if p.count == 0 {
            return Ok(());
        }
        let fused = matches!(self.rows_bottom, RowsBottom::Fused | RowsBottom::FusedOne);
        let cpt = if self.rows_bottom == RowsBottom::Fused && nrhs % 2 == 0 { 2 } else { 1 };
        let threads = nrhs.div_ceil(cpt).next_multiple_of(32).min(ROWS_BLOCK);
        let grid_y = nrhs.div_ceil(threads * cpt);
        if grid_y > GRID_Y {
            return Err(Error::invalid(format!("{nrhs} right-hand sides: too many column blocks for one launch of the row-major bottom pass")));
        }
        let tensor = backward && self.rows_bottom == RowsBottom::ColumnsTensor;
        let smem = 8 * p.map_cap(backward, tensor).next_multiple_of(2);
        let cfg = LaunchConfig { grid_dim: (p.count as u32, grid_y as u32, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let k = match (fused, &seps.fused_base) {
            (true, Some(_)) => &self.kernels.rows_fused[usize::from(seps.bottom_rows > 36)][cpt - 1][usize::from(backward)],
            (true, None) => return Err(Error::invalid("internal: the fused row-major bottom pass without its subtrees' bases")),
            (false, _) => &self.kernels.rows_bottom[usize::from(backward) + usize::from(tensor)],
        };
        let sp = seps.pass(be, p.index, backward, [b, x, sep]);
        let base: DevPtr = seps.fused_base.as_ref().map_or(0, |v| ptr(be, v));
        let (nr, off) = (nrhs as u32, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &sp, &nr, &b, &x, &sep, &leaf, &off, &maps, &base)?;
        self.mark(be, p, backward, nrhs, pipe::Launch::new(k, cfg))
    }

    /// Whether the bottom backward pass runs by warps here: chosen, and the bottom pass fits
    /// (as [`CudaMultifrontal::leans_forward`], with the block within the default shared memory).
    pub fn leans_backward(&self) -> bool {
        self.lean_backward && self.separators.as_ref().and_then(|s| s.passes.first()).is_some_and(|p| lean_fits(p) && leanb_smem(p) <= DEFAULT_SMEM)
    }

    /// Whether the separator-row solve's bottom forward pass runs by warp items here: chosen, the
    /// layout present, no external contributions into the bottom pass, at most 32 eliminated rows
    /// and 8 Schur rows per subtree.
    pub fn leans_forward(&self) -> bool {
        self.lean_forward && self.separators.as_ref().and_then(|s| s.passes.first()).is_some_and(lean_fits)
    }

    /// Whether the separator-row solve's bottom pass runs register-streamed here: chosen, the
    /// layout present, no external contributions into the bottom pass, at most 16 Schur rows and
    /// 48 local rows per subtree, the staged map within the default shared memory.
    pub fn streams_bottom(&self) -> bool {
        self.stream_bottom && self.separators.as_ref().and_then(|s| s.passes.first()).is_some_and(stream_fits)
    }

    /// Whether a solve of `nrhs` columns by the maps runs through the separator rows.
    pub(super) fn separators_chosen(&self, nrhs: usize) -> bool {
        match self.maps_kernel {
            Some(k) => matches!(k, MapsKernel::Separators | MapsKernel::SeparatorsTop),
            None => nrhs >= SEPARATORS_MIN_RHS,
        }
    }

    /// Whether the transfer maps' solve can run through compact separator rows (at least two fused
    /// passes, every row above the bottom pass eliminated by a pass); elsewhere
    /// [`MapsKernel::Separators`] runs the tensor-core kernels.
    pub fn has_separator_layout(&self) -> bool {
        self.separators.is_some()
    }

    /// One launch of the register-streamed kernels over the bottom pass `p` ([`stream_fits`]):
    /// a block of [`STREAM_WARPS`] warps per subtree, the map its only shared memory.
    #[allow(clippy::too_many_arguments)]
    fn sweep_stream(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let Some(seps) = self.separators.as_ref() else { return Err(Error::invalid("internal: no separator layout")) };
        if p.count == 0 {
            return Ok(());
        }
        let smem = 8 * p.map_cap(backward, true).next_multiple_of(2);
        let cfg = LaunchConfig { grid_dim: (p.count as u32, 1, 1), block_dim: (32 * STREAM_WARPS as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let k = if backward { &self.kernels.stream_backward[p.map_nb - 1] } else { &self.kernels.stream_forward };
        let sp = seps.pass(be, p.index, backward, [b, x, sep]);
        let (nr, n, off) = (nrhs as u32, self.sym.n as u64, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &sp, &nr, &n, &b, &x, &sep, &leaf, &off, &maps)?;
        self.mark(be, p, backward, nrhs, pipe::Launch::new(k, cfg))
    }

    /// One launch of `mf_lean_forward` over the bottom pass `p` ([`lean_fits`]): a warp per
    /// (subtree, [`LEAN_COLS`] columns), [`LEAN_WARPS`] per block, static shared memory only.
    #[allow(clippy::too_many_arguments)]
    fn sweep_lean(&self, be: &CudaBackend, p: &DevPass, nrhs: usize, b: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let Some(seps) = self.separators.as_ref() else { return Err(Error::invalid("internal: no separator layout")) };
        if p.count == 0 {
            return Ok(());
        }
        let blocks = (p.count * nrhs.div_ceil(LEAN_COLS)).div_ceil(LEAN_WARPS);
        let blocks = u32::try_from(blocks).map_err(|_| Error::invalid(format!("{nrhs} right-hand sides over {} subtrees: too many blocks for one launch", p.count)))?;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (32 * LEAN_WARPS as u32, 1, 1), shared_mem_bytes: 0 };
        let k = &self.kernels.lean_forward;
        let sp = seps.pass(be, p.index, false, [b, 0, sep]);
        let (count, nr, n, off) = (p.count as u32, nrhs as u32, self.sym.n as u64, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &sp, &count, &nr, &n, &b, &sep, &leaf, &off, &maps)?;
        self.mark(be, p, false, nrhs, pipe::Launch::new(k, cfg))
    }

    /// One launch of `mf_lean_backward_*` over the bottom pass `p`: a block of [`LEANB_WARPS`]
    /// warps per subtree.
    #[allow(clippy::too_many_arguments)]
    fn sweep_lean_backward(&self, be: &CudaBackend, p: &DevPass, nrhs: usize, b: DevPtr, x: DevPtr, sep: DevPtr, maps: DevPtr) -> Result<()> {
        let Some(seps) = self.separators.as_ref() else { return Err(Error::invalid("internal: no separator layout")) };
        if p.count == 0 {
            return Ok(());
        }
        let cfg = LaunchConfig { grid_dim: (p.count as u32, 1, 1), block_dim: (32 * LEANB_WARPS as u32, 1, 1), shared_mem_bytes: leanb_smem(p) as u32 };
        let k = &self.kernels.lean_backward[p.map_nb - 1];
        let sp = seps.pass(be, p.index, true, [b, x, sep]);
        let (nr, n, off) = (nrhs as u32, self.sym.n as u64, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &sp, &nr, &n, &b, &x, &sep, &off, &maps)?;
        self.mark(be, p, true, nrhs, pipe::Launch::new(k, cfg))
    }

    /// The bottom pass by warp items if [`CudaMultifrontal::leans_forward`] (forward) or
    /// [`CudaMultifrontal::leans_backward`] (backward), else the
    /// bottom pass by the register-streamed kernels if [`CudaMultifrontal::streams_bottom`],
    /// else (and every other pass, and every pass of a row-major solve) by
    /// [`CudaMultifrontal::sweep_separators`].
    #[allow(clippy::too_many_arguments)]
    fn sweep_sep_pass(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, n: u64, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        // Row-major b and x: the bottom pass a thread per column where chosen and it fits, else
        // the plain (or pipelined) separator-row kernels, the only others that read that layout.
        if n & ROW_MAJOR != 0 {
            if p.index == 0 && self.rows_bottom_runs() {
                self.sweep_rows_bottom(be, p, backward, nrhs, b, x, sep, leaf, maps)
            } else {
                self.sweep_separators(be, p, backward, nrhs, n, b, x, sep, leaf, maps)
            }
        } else if p.index == 0 && !backward && self.leans_forward() {
            self.sweep_lean(be, p, nrhs, b, sep, leaf, maps)
        } else if p.index == 0 && backward && self.leans_backward() {
            self.sweep_lean_backward(be, p, nrhs, b, x, sep, maps)
        } else if p.index == 0 && self.streams_bottom() {
            self.sweep_stream(be, p, backward, nrhs, b, x, sep, leaf, maps)
        } else {
            self.sweep_separators(be, p, backward, nrhs, n, b, x, sep, leaf, maps)
        }
    }

    /// One launch of the separator-layout kernels over pass `p` (of [`DevSeparators::passes`]):
    /// blocks as the tensor-core kernels', `sep` the separator buffer (`rows × nrhs`, row-major).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sweep_separators(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, n: u64, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let Some(seps) = self.separators.as_ref() else { return Err(Error::invalid("internal: no separator layout")) };
        if p.count == 0 {
            return Ok(());
        }
        if self.pipe_separators.is_some_and(|min| p.count >= min) && self.sweep_separators_pipelined(be, seps, p, backward, nrhs, n, b, x, sep, leaf, maps)? {
            return Ok(());
        }
        let launch = self.launch_separators(be, &be.stream, p, backward, nrhs, n, b, x, sep, leaf, maps)?;
        self.mark(be, p, backward, nrhs, launch)
    }

    /// [`Self::sweep_separators`]'s plain launch on `stream` (what it launched, for the profile);
    /// `n` with the layout bit ([`Self::n_word`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch_separators(&self, be: &CudaBackend, stream: &cudarc::driver::CudaStream, p: &DevPass, backward: bool, nrhs: usize, n: u64, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<pipe::Launch<'_>> {
        let Some(seps) = self.separators.as_ref() else { return Err(Error::invalid("internal: no separator layout")) };
        // The adds layout's passes below the walk always add forward (their contributions are in no table).
        let adds = !backward && p.adds;
        let mut flags = if adds { SEP_BULK | SEP_TCF | SEP_PREF | SEP_TRIM } else { self.with_sep_trim(p, backward, self.sep_line_flags(be, p, backward, n)) };
        // Forward 0 pipelined (`-p64`) takes its rows of C + 2 whatever `-ld4` says (both cannot keep its 5 blocks an SM), unless trimmed (`-zs`).
        if !adds {
            if let Some(launch) = self.launch_sep_pipe64(be, stream, seps, p, backward, flags, nrhs, n, [b, x, sep, leaf, maps])? {
                return Ok(launch);
            }
            flags = self.with_tc_rows4(flags);
        }
        let fit = |f: usize| self.fit_width(self.tensor_cols(p, nrhs), |c| p.mapss_smem(backward, c, f));
        // The split's staged entries (MF_SEP_XS) where they fit beside 32 columns at least, else the unsplit kernel.
        let fitted = match fit(flags) {
            None if flags & SEP_XS != 0 => {
                flags &= !SEP_XS;
                fit(flags)
            }
            fitted => fitted,
        };
        let (cols, smem) = fitted.ok_or_else(|| Error::invalid(format!("pass {}: 32 columns of the separator-row kernels need more shared memory than {} bytes", p.index, self.sub_smem)))?;
        let grid_y = if self.split_columns { nrhs.div_ceil(cols).min(GRID_Y) } else { self.tensor_grid_y(p, nrhs, cols) };
        let which = if backward { p.map_nb } else { 0 };
        let k = match flags {
            _ if adds => &self.kernels.mapss_adds_forward,
            0 if backward => &self.kernels.mapss_backward[p.map_nb - 1],
            0 => &self.kernels.mapss_forward,
            f if f & SEP_TRIM != 0 => &self.kernels.mapss_trim_forward[usize::from(f & SEP_LD4 != 0)][0],
            f if f & SEP_LD4 != 0 => &self.kernels.mapss_ld4_forward[usize::from(f & SEP_XS != 0)],
            f if f & SEP_XS != 0 && backward => &self.kernels.mapss_xs_backward[p.map_nb - 1],
            f if f & SEP_XS != 0 => &self.kernels.mapss_xs_forward,
            f if backward && f & SEP_PREF != 0 => &self.kernels.mapss_back_pref[p.map_nb - 1],
            f if f & SEP_PREF != 0 => &self.kernels.mapss_tcf_pref[f & (SEP_BULK | SEP_EXT)],
            f if f & SEP_TCF != 0 => &self.kernels.mapss_tcf[f & (SEP_BULK | SEP_EXT)],
            f => &self.kernels.mapss_lines[f - 1][which],
        };
        let threads = self.column_block(k, cols)?;
        let cfg = LaunchConfig { grid_dim: (p.count as u32, grid_y as u32, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let sp = seps.pass(be, p.index, backward, [b, x, sep]);
        let mcap = p.mapss_map(backward, flags) as u32;
        let (c, nr, off) = (cols as u32, nrhs as u32, ptr(be, &p.map_off));
        let dp = p.launch_pass(flags);
        launch!(@on stream, be, k, cfg; &self.tree, &dp, &sp, &c, &mcap, &nr, &n, &b, &x, &sep, &leaf, &off, &maps)?;
        Ok(pipe::Launch::new(k, cfg))
    }
}

impl DevPass {
    /// Dynamic shared memory of one block of the pipelined separator-row kernels with `cols`
    /// columns: two tensor-core maps and two chunks of local rows.
    fn mapssp_smem(&self, backward: bool, cols: usize) -> usize {
        2 * self.mapt_smem(backward, cols)
    }

    /// Dynamic shared memory of one block of the plain separator-row kernels with `cols` columns
    /// and line variant `flags` ([`CudaMultifrontal::sep_line_flags`]): the variants' rows are
    /// `cols + 4` doubles (`cols + 2` under the tensor-core forward without [`SEP_LD4`]), the staged
    /// contributions one row per external entry.
    pub(super) fn mapss_smem(&self, backward: bool, cols: usize, flags: usize) -> usize {
        if flags == 0 {
            return self.mapt_smem(backward, cols);
        }
        let ext = if flags & SEP_EXT != 0 { self.max_ext } else { 0 };
        let (rows, pad) = (self.launch_pass(flags).rows as usize, Self::mapss_row_pad(flags));
        // MF_SEP_PREF: the root's slot and two index words per row ahead of the map (`sep_pre_doubles`).
        let pre = if flags & SEP_PREF != 0 { (rows + 2) / 2 * 2 } else { 0 };
        // MF_SEP_XS: four counts and a (row, source) pair a part and entry, for up to 4 parts.
        let split = if flags & SEP_XS != 0 { 2 + 4 * self.max_ext } else { 0 };
        8 * (pre + self.mapss_map(backward, flags).next_multiple_of(2) + (rows + ext) * (cols + pad) + split)
    }

    /// Doubles past a chunk's `C` columns in a staged row of w (line variant `flags` ≠ 0): rows of
    /// `C + 2` under the tensor-core forward product, else `C + 4` (the kernels' `ld`).
    pub(super) fn mapss_row_pad(flags: usize) -> usize {
        if flags & SEP_TCF != 0 && flags & SEP_LD4 == 0 {
            2
        } else {
            4
        }
    }

    /// Whether the pass's roots have few enough Schur rows (≤ 16, one accumulator tile of
    /// `maps_tc_backward<1, true>`) for the forward product on the tensor cores. The one test of
    /// both the passes' launches and the walk.
    fn tc_roots(&self) -> bool {
        self.max_schur <= crate::solver::multifrontal::maps::MAP_ROWS
    }

    /// Doubles of the largest staged map of those kernels (`mcap`): forward on the tensor cores
    /// `Gᵀ` with rows of 16 + [`pipe::TC_PAD`].
    pub(super) fn mapss_map(&self, backward: bool, flags: usize) -> usize {
        if !backward && flags & SEP_TCF != 0 {
            self.max_elim * (crate::solver::multifrontal::maps::MAP_ROWS + pipe::TC_PAD)
        } else {
            self.map_cap(backward, true)
        }
    }
}

/// Threads of a block of `cols` columns with `threads` per column, fewer per column where kernel
/// `k` cannot run that many threads per block.
pub(super) fn block_threads(k: &Kernel, cols: usize, threads: usize) -> Result<usize> {
    Ok(cols * threads.min(k.max_threads()? / cols).max(1))
}

/// The kernels' MF_SEP_BULK, MF_SEP_EXT and MF_SEP_TCF (`mf_mapss{b,e,be}_*` = flags 1, 2, 3;
/// `mf_mapss{,b,e,be}t_forward` = 4…7).
pub(super) const SEP_BULK: usize = 1;
pub(super) const SEP_EXT: usize = 2;
pub(super) const SEP_TCF: usize = 4;
/// MF_SEP_PREF (round 22, forward with MF_SEP_TCF: `mf_mapss{,b,e,be}tp_forward` = 12…15; round 25,
/// backward with MF_SEP_BULK on a row-major bottom pass: `mf_mapssbp0_backward_*` = 9, which the
/// kernel compiles with MF_SEP_BOT).
pub(super) const SEP_PREF: usize = 8;
/// MF_SEP_L2 (round 23, the chained kernels `mf_mapss{b,bt,btp}_chain` only): the external
/// contributions read through L2 (other blocks of the launch stored them).
pub(super) const SEP_L2: usize = 16;
/// MF_SEP_XS (round 28, [`CudaMultifrontal::set_sep_ext_split`]): the contributions split over the
/// parts of a column — forward on `mf_mapssbtp_forward`'s flags (`mf_mapssbtpxs_forward`), backward
/// on `mf_mapssb_backward_*`'s (`mf_mapssbxs_backward_*`).
pub(super) const SEP_XS: usize = 64;

impl CudaMultifrontal {
    /// The line variant of a separator-row launch over pass `p` ([`SepLines`]; 0: the plain
    /// kernels): bulk copies where chosen on sm_90 and up, staged contributions where chosen for
    /// a pass of that few subtrees with external children; the lines of the solve's layout (`n`
    /// with [`ROW_MAJOR`], as [`CudaMultifrontal::line_walk`] and [`CudaMultifrontal::walks`]).
    pub(super) fn sep_line_flags(&self, be: &CudaBackend, p: &DevPass, backward: bool, n: u64) -> usize {
        let l = self.sep_lines(n & ROW_MAJOR != 0);
        let bulk = self.bulk_lines(be, l);
        let ext = p.has_ext && l.ext_below.is_some_and(|min| p.count < min);
        let tcf = l.tc_forward && !backward && p.tc_roots();
        // Backward only a row-major bottom pass (round 25): the upper passes have no owned rows to
        // prefetch and paid the registers for the cached line sources alone (round 24).
        let bottom_rows = p.index == 0 && n & ROW_MAJOR != 0 && !ext;
        let pref = if backward { bulk && bottom_rows && self.sep_back_prefetch } else { tcf && self.sep_prefetch };
        let f = usize::from(bulk) * SEP_BULK + usize::from(ext) * SEP_EXT + usize::from(tcf) * SEP_TCF + usize::from(pref) * SEP_PREF;
        f | if self.splits_ext(p, backward, f) { SEP_XS } else { 0 }
    }
}

impl CudaMultifrontal {
    /// Runs the separator-row solve's passes of at least `min` subtrees (`None`, the default: none)
    /// by the pipelined separator-row kernels (`mf_mapssp_*`): as many blocks as are resident, each
    /// walking (subtree, chunk) items with the next item's gather and map in flight while it
    /// multiplies and stores the current one (double-buffered shared memory), instead of a block
    /// per subtree that waits for each chunk's gather. `Some(`[`pipe::TC_FEW_SUBTREES`]`)` pipelines the
    /// passes of many subtrees (the bottom ones); `Some(0)` every pass (for tests).
    pub fn set_pipe_separators(&mut self, min: Option<usize>) {
        self.pipe_separators = min;
    }

    /// Gives the separator-row kernels' blocks (plain and pipelined) `k` threads per column
    /// ([`DEFAULT_COLUMN_THREADS`] by default; at most 4: blocks of up to 256 columns stay within 1024 threads): the same shared
    /// memory per block, `k` times the warps — more warps per multiprocessor where the staged
    /// chunks, not registers, limit the resident blocks. The moves and the tensor-core products
    /// are shared out over all warps, a column's forward rows over its `k` threads. Errors on 0 or
    /// more than 4.
    pub fn set_column_threads(&mut self, k: usize) -> Result<()> {
        if !(1..=4).contains(&k) {
            return Err(Error::invalid(format!("threads per column of the separator-row kernels: {k} (expected 1 to 4)")));
        }
        self.column_threads = k;
        Ok(())
    }

    /// Threads of a separator-row block of `cols` columns: [`CudaMultifrontal::set_column_threads`]
    /// per column, fewer where kernel `k` cannot run that many threads per block (its registers:
    /// `mf_mapss_backward_3` at 256 columns × 4 failed with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on
    /// the H200). The limit is read from the driver once per kernel ([`Kernel::max_threads`]).
    fn column_block(&self, k: &Kernel, cols: usize) -> Result<usize> {
        block_threads(k, cols, self.column_threads)
    }

    /// One launch of the pipelined separator-row kernels over pass `p`: blocks of the forced
    /// shape's or [`CudaMultifrontal::tensor_cols`] columns (halved until two maps and two chunks
    /// fit the shared memory), as many as are resident (capped by
    /// [`CudaMultifrontal::set_pipe_blocks`] and the subtrees). `false` (nothing launched) where
    /// even 32 columns do not fit.
    #[allow(clippy::too_many_arguments)]
    fn sweep_separators_pipelined(&self, be: &CudaBackend, seps: &DevSeparators, p: &DevPass, backward: bool, nrhs: usize, n: u64, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<bool> {
        let Some((cols, smem)) = self.fit_width(self.tensor_cols(p, nrhs), |c| p.mapssp_smem(backward, c)) else {
            return Ok(false);
        };
        let k = if backward { &self.kernels.mapssp_backward[p.map_nb - 1] } else { &self.kernels.mapssp_forward };
        let threads = self.column_block(k, cols)?;
        let grid = self.walk_grid(be, k, threads, smem, p.count)?;
        let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let sp = seps.pass(be, p.index, backward, [b, x, sep]);
        let mcap = p.map_cap(backward, true) as u32;
        let (count, c, nr, off) = (p.count as u32, cols as u32, nrhs as u32, ptr(be, &p.map_off));
        launch!(be, k, cfg; &self.tree, &p.dp, &sp, &count, &c, &mcap, &nr, &n, &b, &x, &sep, &leaf, &off, &maps)?;
        self.mark(be, p, backward, nrhs, pipe::Launch::new(k, cfg))?;
        Ok(true)
    }

    /// The shape of separator pass `q` that decides which [`SepLines`] variant its launches run
    /// (`None` without the layout or past the last pass): its roots' most Schur rows (the
    /// tensor-core forward product takes at most 16) and whether any subtree has external children
    /// (contributions to stage). For tests that state the dispatch rule apart from it.
    pub fn separator_pass_shape(&self, q: usize) -> Option<SepPassShape> {
        let p = self.separators.as_ref()?.passes.get(q)?;
        Some(SepPassShape { subtrees: p.count, max_schur: p.max_schur, has_ext: p.has_ext })
    }

    /// Whether [`MapsKernel::SeparatorsTop`] walks the passes near the root in one launch here.
    pub fn has_top_walk(&self) -> bool {
        self.separators.as_ref().is_some_and(|s| s.walk.is_some())
    }

    /// The walk of the passes near the root in force on `s` ([`Self::set_walk_subtrees`]).
    pub(super) fn top_walk(&self, be: &CudaBackend, s: &DevSeparators) -> Result<Option<Arc<DevWalk>>> {
        s.walk_of(be, &self.sym, self.walk_subtrees)
    }

    /// The line walk's kernel variant (flags), largest staged map (doubles), dynamic shared
    /// memory (bytes) and item shape for `nrhs` columns where it runs ([`SepLines::top`]: chosen
    /// with bulk lines, sm_90 and up, an even count of columns, a walk, an item of
    /// [`CudaMultifrontal::walk_shape`]'s columns within the default shared memory — by default
    /// round 20's 32 columns where 64 do not fit); the lines of the solve's layout (`n` with [`ROW_MAJOR`]).
    fn line_walk(&self, be: &CudaBackend, s: &DevSeparators, w: &DevWalk, nrhs: usize, n: u64) -> Option<(usize, usize, usize, super::WalkShape)> {
        let l = self.sep_lines(n & ROW_MAJOR != 0);
        if !(l.top && self.bulk_lines(be, l) && nrhs % 2 == 0) {
            return None;
        }
        let top = &s.passes[w.first..];
        let tcf = l.tc_forward && top.iter().all(DevPass::tc_roots);
        let flags = SEP_BULK | SEP_EXT | if tcf { SEP_TCF } else { 0 };
        let mcap = top.iter().map(|p| p.map_cap(true, true).max(p.mapss_map(false, flags))).max()?;
        let rows = top.iter().map(|p| p.dp.rows as usize + p.max_ext).max()?;
        // Within the limit the kernels were allowed (`wide_smem`), less the static mbarrier and item.
        let fits = |shape: super::WalkShape| {
            let smem = 8 * (mcap.next_multiple_of(2) + rows * (shape.cols + 4));
            (smem + 64 <= self.sub_smem).then_some((flags, mcap, smem, shape))
        };
        let round20 = || self.walk_shape.is_none().then(|| fits(super::WalkShape::round20(self.column_threads))).flatten();
        fits(self.walk_shape()).or_else(round20)
    }

    /// The timeline per level of the last line walk traced ([`CudaMultifrontal::set_walk_trace`]);
    /// empty where none was.
    pub fn walk_levels(&self, be: &CudaBackend) -> Result<Vec<super::WalkLevel>> {
        let Some(s) = self.separators.as_ref() else { return Ok(Vec::new()) };
        let Some(w) = self.top_walk(be, s)? else { return Ok(Vec::new()) };
        let guard = w.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some((trace, chunks)) = guard.as_ref().and_then(|st| st.trace.as_ref()) else { return Ok(Vec::new()) };
        Ok(super::walk_trace::levels(&w.steps, *chunks, &be.download(trace)?))
    }

    /// The walk `w` of the passes near the root where it runs for `nrhs` columns
    /// ([`MapsKernel::SeparatorsTop`], or [`SepLines::top`] where it applies), else `None`.
    fn walking(&self, be: &CudaBackend, s: &DevSeparators, w: Option<Arc<DevWalk>>, nrhs: usize, n: u64) -> Option<Arc<DevWalk>> {
        w.filter(|w| self.maps_kernel == Some(MapsKernel::SeparatorsTop) || self.line_walk(be, s, w, nrhs, n).is_some())
    }

    /// The walk that runs on `s` for `nrhs` columns ([`Self::top_walk`], [`Self::walking`]).
    pub(super) fn walk_for(&self, be: &CudaBackend, s: &DevSeparators, nrhs: usize, n: u64) -> Result<Option<Arc<DevWalk>>> {
        // A walk from below the adds layout's `adds_below` would leave those passes' contributions in the buffer: none then.
        Ok(self.walking(be, s, self.top_walk(be, s)?, nrhs, n).filter(|w| w.first >= s.adds_below))
    }

    /// Whether a separator-row solve of `nrhs` columns (row-major `b` and `x`, or column-major)
    /// walks the passes near the root in one launch here ([`MapsKernel::SeparatorsTop`], or
    /// [`SepLines::top`] where it applies).
    /// (A walk of fewer passes that fails to build reads as `false`; the solve then reports it.)
    pub fn walks_top(&self, be: &CudaBackend, nrhs: usize, row_major: bool) -> bool {
        self.separators.as_ref().is_some_and(|s| matches!(self.walk_for(be, s, nrhs, self.n_word(row_major)), Ok(Some(_))))
    }

    /// The first pass of the walk where the passes near the root walk for `nrhs` columns
    /// ([`Self::walk_for`]), else the count of passes: the passes below it run one launch each way.
    pub(super) fn walk_first(&self, be: &CudaBackend, s: &DevSeparators, nrhs: usize, n: u64) -> Result<usize> {
        Ok(self.walk_for(be, s, nrhs, n)?.map_or(s.passes.len(), |w| w.first))
    }

    /// The fused forward passes through the separator rows: pass by pass, or with
    /// [`MapsKernel::SeparatorsTop`] (or [`SepLines::top`]) the passes below the walk, then the walk both ways.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn separators_forward(&self, be: &CudaBackend, s: &DevSeparators, nrhs: usize, n: u64, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let walk = self.walk_for(be, s, nrhs, n)?;
        let end = walk.as_ref().map_or(s.passes.len(), |w| w.first);
        // Passes 0 and 1 in one launch where chained ([`CudaMultifrontal::set_sep_chain`]).
        let chained = end >= 2 && self.chain_forward(be, s, nrhs, n, b, sep, leaf, maps)?;
        for p in &s.passes[if chained { 2 } else { 0 }..end] {
            self.sweep_sep_pass(be, p, false, nrhs, n, b, x, sep, leaf, maps)?;
        }
        match walk {
            Some(w) => self.walk_top(be, s, &w, nrhs, n, sep, leaf, maps),
            None => Ok(()),
        }
    }

    /// The fused backward passes through the separator rows (below the walk, if it ran).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn separators_backward(&self, be: &CudaBackend, s: &DevSeparators, nrhs: usize, n: u64, b: DevPtr, x: DevPtr, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let end = self.walk_first(be, s, nrhs, n)?;
        for p in s.passes[..end].iter().rev() {
            self.sweep_sep_pass(be, p, true, nrhs, n, b, x, sep, leaf, maps)?;
        }
        Ok(())
    }

    /// One launch of `mf_mapss_top`: as many blocks of [`WALK_COLS`] columns (by lines:
    /// [`CudaMultifrontal::walk_shape`]'s) as are resident (at most the items), the item counter
    /// zeroed, a new epoch for the flags.
    #[allow(clippy::too_many_arguments)]
    fn walk_top(&self, be: &CudaBackend, s: &DevSeparators, w: &DevWalk, nrhs: usize, n: u64, sep: DevPtr, leaf: DevPtr, maps: DevPtr) -> Result<()> {
        let lines = self.line_walk(be, s, w, nrhs, n);
        let shape = lines.map_or_else(|| self.walk_shape(), |l| l.3);
        let cols = if lines.is_some() { shape.cols } else { WALK_COLS };
        let chunks = nrhs.div_ceil(cols);
        let mut guard = w.state.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|st| st.chunks < chunks || st.epoch == u32::MAX) {
            *guard = None;
            let mut flags = be.alloc::<u32>(w.nsteps * chunks)?;
            be.zero_slice(&mut flags)?;
            *guard = Some(WalkState { chunks, flags, counter: be.alloc::<u32>(1)?, epoch: 0, trace: None });
        }
        let st = guard.as_mut().ok_or_else(|| Error::invalid("internal: walk state missing"))?;
        st.epoch += 1;
        be.zero_slice(&mut st.counter)?;
        let top = &s.passes[w.first..];
        // Round 12's kernel (a warp per item), or by lines: the shape's columns and threads per
        // column (fewer where the kernel's registers allow fewer).
        let (k, mcap, smem) = match lines {
            Some((flags, mcap, smem, _)) => (&self.kernels.mapss_top_lines[usize::from(flags & SEP_TCF != 0)], mcap, smem),
            None => (&self.kernels.mapss_top, w.mcap, 8 * (w.mcap.next_multiple_of(2) + w.rows * (WALK_COLS + 1))),
        };
        let threads = if lines.is_some() { block_threads(k, cols, shape.threads)? } else { WALK_COLS };
        let per_sm = k.func.occupancy_max_active_blocks_per_multiprocessor(threads as u32, smem, None).map_err(|e| cuda_error(format!("occupancy of {}: {e}", k.name)))?;
        let items = w.nsteps * chunks;
        let grid = (per_sm.max(1) as usize * be.device().multiprocessors.max(1) as usize).min(items).max(1);
        let cfg = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let (pp, offs) = (ptr(be, &w.passes), ptr(be, &w.map_offs));
        let (steps, dep_ptr, dep) = (ptr(be, &w.tables[0]), ptr(be, &w.tables[1]), ptr(be, &w.tables[2]));
        let (flags, counter) = (ptr(be, &st.flags), ptr(be, &st.counter));
        let (ns, nc, ep, mc, nr) = (w.nsteps as u32, chunks as u32, st.epoch, mcap as u32, nrhs as u32);
        if lines.is_some() {
            let c = cols as u32;
            let trace: DevPtr = if self.walk_trace {
                if st.trace.as_ref().is_none_or(|t| t.0.len() < 3 * items) {
                    st.trace = Some((be.alloc::<u64>(3 * items)?, chunks));
                }
                st.trace.as_mut().map_or(0, |t| {
                    t.1 = chunks;
                    ptr(be, &t.0)
                })
            } else {
                0
            };
            launch!(be, k, cfg; &self.tree, &pp, &offs, &steps, &dep_ptr, &dep, &ns, &nc, &flags, &counter, &ep, &c, &mc, &nr, &sep, &leaf, &maps, &trace)?;
        } else {
            launch!(be, k, cfg; &self.tree, &pp, &offs, &steps, &dep_ptr, &dep, &ns, &nc, &flags, &counter, &ep, &mc, &nr, &sep, &leaf, &maps)?;
        }
        let bytes = top.iter().map(|p| p.traffic.bytes(false, nrhs) + p.traffic.bytes(true, nrhs)).sum();
        self.mark_walk(be, w.first, top.iter().map(|p| p.count).sum(), bytes, pipe::Launch::new(k, cfg))
    }
}
