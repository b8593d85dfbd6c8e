//! The multifrontal numeric phases on the GPU (`kernels/multifrontal.cu`), the same algorithm and
//! storage as [`crate::solver::multifrontal::CpuMultifrontal`]:
//! - factorization: one launch for the leaves that own dofs, then per tree level one launch per
//!   size class over all its nodes — a warp per front of at most 32 rows, a block per front of at
//!   most 160 (in shared memory); larger fronts (2D, near the root) are assembled by two kernels
//!   and factorized by cuSOLVER (LU of the panel of eliminated rows) and cuBLAS (triangular solve,
//!   Schur product), one call each per node;
//! - solves: per level one launch per size class, one thread per (node, right-hand side), all
//!   right-hand sides in the same pass; large fronts use cuBLAS on their slot;
//! - solves with many right-hand sides ([`SolvePath::Subtrees`]): the small fronts are cut into
//!   fused subtrees ([`crate::solver::multifrontal::subtrees`]), one launch per pass each way, one
//!   block per subtree with its fronts and right-hand-side rows in shared memory; the nodes above
//!   them (large fronts) go level by level as before;
//! - solves with many right-hand sides by the subtrees' transfer maps ([`SolvePath::Maps`],
//!   [`crate::solver::multifrontal::maps`]): the same passes, each a gather, a small dense product
//!   per subtree and a scatter; the maps are computed on the first such solve after a
//!   factorization ([`CudaMultifrontal::prepare_maps`]).
//!
//! - large fronts batched ([`LargeFronts`]; by default where [`batch_pays`]): a level of many
//!   large fronts is factorized by one launch of `mfb_factor` (`kernels/multifrontal_batched.cu`,
//!   a thread block per front: blocked LU with partial pivoting in global memory) and solved by
//!   one `mfb_forward` / `mfb_backward` launch each way; the levels near the root (few, very large
//!   fronts that fill the GPU alone) keep cuSOLVER/cuBLAS.
//!
//! The launch count therefore grows with the tree depth (`log N`), not with the number of nodes,
//! except for the library calls of the few large fronts at the top (or of every large front with
//! [`LargeFronts::PerNode`]).
use crate::backend::cuda::dense_libs::{DenseLibs, DevPtr};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{cuda_error, jit, CudaBackend, CudaVector};
use crate::solver::factorization::Factorization;
use crate::solver::multifrontal::cpu::{leaf_fronts, singular};
use crate::solver::multifrontal::maps::MapLayout;
use crate::solver::multifrontal::subtrees::{Pass, SubtreeLimits, SubtreePlan};
use crate::solver::multifrontal::Symbolic;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[path = "cuda_pipe.rs"]
mod pipe;
#[path = "cuda_sep.rs"]
mod sep;
#[path = "cuda_fused.rs"]
mod fused;
#[path = "cuda_overlap.rs"]
mod overlap;
#[path = "cuda_walk_trace.rs"]
mod walk_trace;
#[path = "cuda_walk_shape.rs"]
mod walk_shape;
#[path = "cuda_prefetch.rs"]
mod prefetch;
#[path = "cuda_chain.rs"]
mod chain;
#[path = "cuda_sep_x.rs"]
mod sep_x;
#[path = "cuda_in_place.rs"]
mod in_place;
#[path = "cuda_ext_split.rs"]
mod ext_split;
#[path = "cuda_tc_rows.rs"]
mod tc_rows;
#[path = "cuda_sep_pipe.rs"]
mod sep_pipe;
pub use overlap::OverlapSpan;
pub use pipe::{LaunchProfile, MapsKernel, PIPE_THREADS, TC_FEW_SUBTREES};
pub use walk_shape::WalkShape;
pub use walk_trace::WalkLevel;
pub use sep::{RowsBottom, SepLines, SepPassShape, DEFAULT_COLUMNS_SEP_LINES, DEFAULT_COLUMN_THREADS, DEFAULT_ROWS_BOTTOM, DEFAULT_ROWS_SEP_LINES, SEPARATORS_MIN_RHS};

/// Fronts of at most this many rows are factorized by one warp; up to [`BLOCK_MAX`] by a block.
pub const WARP_MAX: usize = 32;
pub const BLOCK_MAX: usize = 160;
/// Shared memory a block may use without opting in.
const DEFAULT_SMEM: usize = 48 * 1024;
/// Most nodes one launch of the large-front kernels covers (grid.y).
const GRID_Y: usize = 65_535;
/// `MF_ROW_MAJOR` of `kernels/multifrontal.cu`: the top bit of the `n` a launch takes marks
/// row-major `b` and `x`.
const ROW_MAJOR: u64 = 1 << 63;

/// The tree tables as the kernels' `Tree` struct (device pointers), field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct DeviceTree {
    m: DevPtr,
    e: DevPtr,
    child_ptr: DevPtr,
    child_idx: DevPtr,
    front_off: DevPtr,
    map_off: DevPtr,
    maps: DevPtr,
    pinv_off: DevPtr,
    dofs_off: DevPtr,
    dofs: DevPtr,
    active: DevPtr,
    slot: DevPtr,
    perm: DevPtr,
    nelem: u32,
}

// SAFETY: plain old data of the same layout as the kernels' `struct Tree`.
unsafe impl DeviceRepr for DeviceTree {}

/// The device buffers behind a [`DeviceTree`] (kept alive with it).
struct TreeBuffers {
    _u32: Vec<CudaSlice<u32>>,
    _u64: Vec<CudaSlice<u64>>,
    _u8: CudaSlice<u8>,
}

/// One pass of fused subtrees as the kernels' `Pass` struct, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct DevicePass {
    sub_ptr: DevPtr,
    nodes: DevPtr,
    f_off: DevPtr,
    l_off: DevPtr,
    p_off: DevPtr,
    loc: DevPtr,
    loc_ptr: DevPtr,
    row_ptr: DevPtr,
    row_dof: DevPtr,
    elim: DevPtr,
    ext_ptr: DevPtr,
    ext_row: DevPtr,
    ext_src: DevPtr,
    front_entries: u32,
    rows: u32,
    loc_entries: u32,
    piv_entries: u32,
    nodes_max: u32,
}

// SAFETY: plain old data of the same layout as the kernels' `struct Pass`.
unsafe impl DeviceRepr for DevicePass {}

/// A pass on the device: its tables (kept alive), subtree count and kernel variant.
struct DevPass {
    dp: DevicePass,
    count: usize,
    /// Largest eliminated block is at most 8 rows (kernels with several columns per thread exist
    /// only for these; larger blocks run one column per thread).
    small_e: bool,
    _u32: Vec<CudaSlice<u32>>,
    _u64: CudaSlice<u64>,
    /// Transfer maps: each subtree's offset, the largest `[H K]ᵀ` and `Gᵀ` (doubles), and the
    /// backward kernel (accumulators for up to `16·nb` eliminated rows).
    map_off: CudaSlice<u64>,
    map_backward: usize,
    map_forward: usize,
    map_nb: usize,
    /// Index of the pass and the doubles its launches move per right-hand side and in maps (for
    /// the per-launch profile, [`pipe::PassTraffic`]).
    index: usize,
    traffic: pipe::PassTraffic,
    /// Largest front of the pass (the fused factorization's shared memory per warp).
    mmax: usize,
    /// Most Schur (contribution) rows of a subtree's root, and whether any subtree has external
    /// children (the register-streamed kernels handle neither more than 16 nor external ones).
    max_schur: usize,
    has_ext: bool,
    /// Most external contribution entries of a subtree (rows the staged-contribution kernels hold)
    /// and most eliminated rows.
    max_ext: usize,
    max_elim: usize,
    /// Rows a block of the trimmed forward kernels stages ([`CudaMultifrontal::set_sep_trim`]):
    /// the most max(eliminated, Schur) + owned rows of a subtree; `dp.rows` until the separator
    /// layout sets it.
    trim_rows: usize,
    /// A pass below the walk of the adds layout ([`CudaMultifrontal::set_sep_bottom_adds`]): its
    /// forward launch must add its roots' rows into `x` (`mf_mapssbtpza_forward`), whatever else
    /// is set.
    adds: bool,
    /// The factorization step (0: the leaves, then the tree levels) after which every front of
    /// the pass is factorized ([`CudaMultifrontal::factor_and_solve_overlap`]).
    top_step: usize,
}

impl DevPass {
    /// Dynamic shared memory of one block of `cols` right-hand sides.
    fn smem(&self, cols: usize) -> usize {
        let d = &self.dp;
        8 * (d.front_entries as usize + d.rows as usize * (cols + 1) + d.nodes_max as usize) + 4 * (d.loc_entries + d.piv_entries + 6 * d.nodes_max) as usize
    }
    /// Dynamic shared memory of one block of the map kernels with `cols` columns.
    fn map_smem(&self, backward: bool, cols: usize) -> usize {
        8 * (self.map_cap(backward, false).next_multiple_of(2) + self.dp.rows as usize * (cols + 1))
    }
    /// The same for the tensor-core kernels ([`MapsKernel::Tensor`]).
    fn mapt_smem(&self, backward: bool, cols: usize) -> usize {
        8 * (self.map_cap(backward, true).next_multiple_of(2) + self.dp.rows as usize * (cols + 1))
    }
    /// Doubles of the largest staged map: `[H K]ᵀ` backward, `Gᵀ` forward; the tensor-core
    /// kernels stage `[H K]ᵀ` with rows of `16·nb +` [`pipe::TC_PAD`].
    fn map_cap(&self, backward: bool, tensor: bool) -> usize {
        match (backward, tensor) {
            (true, true) => self.dp.rows as usize * (crate::solver::multifrontal::maps::MAP_ROWS * self.map_nb + pipe::TC_PAD),
            (true, false) => self.map_backward,
            (false, _) => self.map_forward,
        }
    }
}

/// How [`CudaMultifrontal`] factorizes and solves the fronts above [`BLOCK_MAX`] rows, per level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LargeFronts {
    /// Batched where a cost model says it is faster ([`batch_pays`]): a level of many mid-sized
    /// fronts in one launch, the few fronts near the root (each filling the GPU) per node.
    #[default]
    Auto,
    /// Levels with at least `min_nodes` large fronts: one launch per step over all of them (a
    /// block per front); levels with fewer: per node, as [`LargeFronts::PerNode`].
    Batched { min_nodes: usize },
    /// cuSOLVER `getrf` + cuBLAS `trsm`/`gemm`, one call per node and step (launches grow with
    /// the number of large nodes).
    PerNode,
}

/// [`LargeFronts::Auto`] solves a level's large fronts batched from this many on: every level.
/// On the H100 the batched solve (a block per front and 8 right-hand sides) was faster than the
/// per-node cuBLAS calls at every 2D size measured, the root's lone front included (`batched`
/// against `auto` with 4 here: p = 1 512², 6.6 against 7.4 ms; p = 3 512², 11.0 against 12.0 ms;
/// BENCHMARKS.md, issue 15).
pub const SOLVE_BATCH_MIN: usize = 1;
/// Cost model of [`batch_pays`]: concurrent blocks of `mfb_factor` (H100: 132 SMs), the FP64 rate
/// of one such block, the fixed cost of one library call and the libraries' rate on a mid-sized
/// front.
const BATCH_SLOTS: usize = 132;
const BLOCK_FLOPS: f64 = 4e10;
const LIB_CALL_S: f64 = 12e-6;
const LIB_FLOPS: f64 = 3e12;

/// Whether a level's large fronts (`(m, e)` each) factorize faster in one launch of a block per
/// front (time: waves of the largest front at [`BLOCK_FLOPS`]) than by three library calls each
/// (call overhead plus flops at [`LIB_FLOPS`]).
pub fn batch_pays(fronts: &[(usize, usize)]) -> bool {
    let flops = |&(m, e): &(usize, usize)| 2.0 * e as f64 * (m * m) as f64;
    let largest = fronts.iter().map(flops).fold(0.0, f64::max);
    let batched = fronts.len().div_ceil(BATCH_SLOTS) as f64 * largest / BLOCK_FLOPS;
    let per_node: f64 = fronts.iter().map(|f| 3.0 * LIB_CALL_S + flops(f) / LIB_FLOPS).sum();
    batched < per_node
}

/// Which forward sweeps of the fused passes ran before [`CudaMultifrontal::solve_device`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ForwardDone {
    No,
    /// Inside the fused factorization (transfer-map layout).
    Passes,
    /// Through the separator rows, beside the factorization.
    Separators,
}

/// Which solve [`CudaMultifrontal`] runs: level by level (every node, one thread per node and
/// right-hand side), by fused subtrees, or chosen by the number of right-hand sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolvePath {
    Auto,
    Levels,
    Subtrees,
    /// The fused subtrees' passes by their transfer maps.
    Maps,
}

/// [`SolvePath::Auto`] uses the fused subtrees from this many right-hand sides on.
pub const SUBTREE_MIN_RHS: usize = 8;
/// [`SolvePath::Auto`] computes the transfer maps once a factorization has solved this many
/// right-hand sides in all (one solve of that many, or several smaller ones: a factorization
/// reused that often pays for them); once computed (until the next factorization) it solves every
/// number of right-hand sides by them. 16 since round 12 (was 192): on the H200 at 2^20 cubic
/// elements their setup (1.04–1.08 ms) plus a 16-column solve by the separator rows (0.638) is
/// less than the fused sweeps' 16-column solve (1.80), and every later solve is 0.58–0.64 ms
/// against 0.77 (1 column, level by level) or 1.80 (BENCHMARKS.md, round 12).
pub const MAPS_MIN_RHS: usize = 16;
/// Threads and right-hand sides per thread of a block of the fused kernels (a block sweeps
/// `threads × cols` columns at once). Several columns per thread load each front entry from
/// shared memory once for all of them and give every thread independent chains of FMAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubtreeShape {
    pub threads: usize,
    pub cols: usize,
}

/// Columns per thread with a kernel variant.
pub const SUBTREE_COLS_PER_THREAD: [usize; 2] = [1, 2];
/// Largest block width of the fused kernels (threads × columns); shared memory is allowed for it.
const SUBTREE_MAX_WIDTH: usize = 256;

impl SubtreeShape {
    /// The default per number of right-hand sides, one column per thread: 32 threads for few, 64
    /// up to 127, then 128 (the fastest measured on the H100 at 256 and 1024 right-hand sides:
    /// more resident warps hide the latency of the block's load, sweep and store phases better
    /// than more columns per thread; BENCHMARKS.md).
    pub fn for_rhs(nrhs: usize) -> SubtreeShape {
        match nrhs {
            0..=32 => SubtreeShape { threads: 32, cols: 1 },
            33..=127 => SubtreeShape { threads: 64, cols: 1 },
            _ => SubtreeShape { threads: 128, cols: 1 },
        }
    }
}

/// Nodes of one launch: a range of the device node list, and their largest front.
#[derive(Clone, Copy, Debug, Default)]
struct List {
    off: usize,
    count: usize,
    mmax: usize,
}

/// Large fronts of a level: device list (for the assembly kernels) and host ids (library calls).
#[derive(Clone, Debug, Default)]
struct Large {
    list: List,
    nodes: Vec<u32>,
    max_children: usize,
    /// [`batch_pays`] for the factorization of these fronts.
    pays: bool,
}

impl Large {
    /// Whether these fronts are factorized (`solve` false) or solved in one batched launch.
    fn batched(&self, mode: LargeFronts, solve: bool) -> bool {
        let k = self.nodes.len();
        match mode {
            LargeFronts::PerNode => false,
            LargeFronts::Batched { min_nodes } => k >= min_nodes.max(1),
            LargeFronts::Auto if solve => k >= SOLVE_BATCH_MIN,
            LargeFronts::Auto => self.pays,
        }
    }
}

/// What one level (or the leaves) launches.
#[derive(Clone, Debug, Default)]
struct Step {
    factor_warp: List,
    factor_block: List,
    factor_large: Large,
    forward_32: List,
    forward_160: List,
    forward_large: Large,
    backward_32: List,
    backward_160: List,
    backward_large: Large,
}

impl Step {
    /// Whether the step solves no node (the in-place solve's check, [`CudaMultifrontal::in_place_runs`]).
    fn is_empty(&self) -> bool {
        [&self.forward_32, &self.forward_160, &self.forward_large.list, &self.backward_32, &self.backward_160, &self.backward_large.list].iter().all(|l| l.count == 0)
    }
}

struct MfKernels {
    factor_warp: Kernel,
    factor_block: Kernel,
    zero_fronts: Kernel,
    extend_add: Kernel,
    forward: [Kernel; 2],
    backward: [Kernel; 2],
    rhs_start: Kernel,
    rhs_extend_add: Kernel,
    rhs_x: Kernel,
    /// Eliminated blocks ≤ 8 rows with 1 and 2 columns per thread, then ≤ 32 rows with 1.
    sub_forward: [Kernel; 3],
    sub_backward: [Kernel; 3],
    /// Transfer maps: setup (eliminated blocks ≤ 8, ≤ 32), forward, backward (≤ 16, 32, 48 rows).
    maps_setup: [Kernel; 2],
    /// The maps' halves (forward map `Gᵀ`, backward map `[H K]ᵀ`), eliminated blocks ≤ 8, ≤ 32
    /// ([`CudaMultifrontal::set_overlap_split_maps`]).
    maps_setup_parts: [[Kernel; 2]; 2],
    maps_forward: Kernel,
    maps_backward: [Kernel; 3],
    /// Batched large fronts: factor, forward, backward (a block per front).
    batched: [Kernel; 3],
    /// The pipelined transfer-map kernels ([`MapsKernel::Pipelined`]).
    mapsp_forward: Kernel,
    mapsp_backward: [Kernel; 3],
    /// The map kernels with the whole gather in flight and the backward product on the FP64
    /// tensor cores ([`MapsKernel::Tensor`]).
    mapst_forward: Kernel,
    mapst_backward: [Kernel; 3],
    /// The tensor-core map kernels through compact separator rows ([`MapsKernel::Separators`]).
    mapss_forward: Kernel,
    mapss_backward: [Kernel; 3],
    /// Their variants by whole lines ([`CudaMultifrontal::set_sep_lines`]): bulk copies
    /// (`mf_mapssb_*`), staged contributions (`mf_mapsse_*`), both (`mf_mapssbe_*`); each
    /// `[forward, backward ≤ 16, 32, 48 rows]`.
    mapss_lines: [[Kernel; 4]; 3],
    /// The forward kernels with the product on the tensor cores: plain, bulk, staged, both.
    mapss_tcf: [Kernel; 4],
    /// Those with the store side's indices prefetched under the copies (`mf_mapss{,b,e,be}tp_forward`,
    /// [`CudaMultifrontal::set_sep_prefetch`]).
    mapss_tcf_pref: [Kernel; 4],
    /// The backward kernels with bulk lines of a row-major bottom pass (`mf_mapssbp0_backward_*`,
    /// `[≤ 16, 32, 48 rows]`) with their indices prefetched under the first chunk's copies, under
    /// a register cap ([`CudaMultifrontal::set_sep_back_prefetch`], round 25).
    mapss_back_pref: [Kernel; 3],
    /// The upper passes' kernels with the contributions split over a column's parts
    /// (`mf_mapssbtpxs_forward`, `mf_mapssbxs_backward_*`; [`CudaMultifrontal::set_sep_ext_split`], round 28).
    mapss_xs_forward: Kernel,
    mapss_xs_backward: [Kernel; 3],
    /// The tensor-core forward kernels with rows of `C + 4` (`mf_mapssbtpl4_forward`, and split
    /// `mf_mapssbtpxsl4_forward`; [`CudaMultifrontal::set_sep_tc_rows4`], round 29).
    mapss_ld4_forward: [Kernel; 2],
    /// Forward 0's kernel with its 64-column chunks pipelined (`mf_mapssbtp64_forward`;
    /// [`CudaMultifrontal::set_sep_pipe64`], round 29).
    mapss_pipe64_forward: Kernel,
    /// The backward kernels with their 64-column chunks pipelined, `[bottom, split][NB − 2]`
    /// (`mf_mapssbp064_backward_*`, `mf_mapssbxs64_backward_*`; [`CudaMultifrontal::set_sep_pipe64_backward`], round 30).
    mapss_pipe64_backward: [[Kernel; 2]; 2],
    /// Forward 0's kernels without the zeroed Schur rows (`mf_mapssbtp{,l4,64,64l4}z_forward`:
    /// `[rows of C + 2, C + 4][unpipelined, pipelined]`; [`CudaMultifrontal::set_sep_trim`], round 30).
    mapss_trim_forward: [[Kernel; 2]; 2],
    /// The trimmed forward of the passes below the walk, its result rows added into `x` in place
    /// (`mf_mapssbtpza_forward`; [`CudaMultifrontal::set_sep_bottom_adds`], stop 55).
    mapss_adds_forward: Kernel,
    /// The same, pipelined ([`CudaMultifrontal::set_pipe_separators`]).
    mapssp_forward: Kernel,
    mapssp_backward: [Kernel; 3],
    /// The walk of the passes near the root, both ways in one launch ([`MapsKernel::SeparatorsTop`]).
    mapss_top: Kernel,
    /// The same walk by whole lines ([`SepLines::top`]): bulk copies with staged contributions,
    /// and that with the forward product on the tensor cores.
    mapss_top_lines: [Kernel; 2],
    /// Pass 1 chained into the bottom forward pass ([`CudaMultifrontal::set_sep_chain`]): bulk
    /// lines, with the forward product on the tensor cores, and that with the indices prefetched.
    mapss_chain: [Kernel; 3],
    /// The bottom separator-row pass streamed through registers, forward and backward (≤ 16, 32,
    /// 48 eliminated rows; [`CudaMultifrontal::set_stream_bottom`]).
    stream_forward: Kernel,
    stream_backward: [Kernel; 3],
    /// The bottom forward pass by warp items, gathered by cp.async into each warp's own shared
    /// memory ([`CudaMultifrontal::set_lean_forward`]).
    lean_forward: Kernel,
    /// The bottom backward pass by warps through rings of cp.async tiles (≤ 16, 32 eliminated
    /// rows; [`CudaMultifrontal::set_lean_backward`]).
    lean_backward: [Kernel; 2],
    /// The row-major bottom pass a thread per column: forward, backward by FMAs, backward on the
    /// tensor cores ([`CudaMultifrontal::set_rows_bottom`]).
    rows_bottom: [Kernel; 3],
    /// The row-major bottom pass with the 1D numbering implicit (`mf_rows_fused_*`,
    /// [`RowsBottom::Fused`]): `[rows 36, 40][1, 2 columns per thread][forward, backward]`.
    rows_fused: [[[Kernel; 2]; 2]; 2],
    /// Factorization, transfer maps and forward sweep of a pass in one launch (eliminated blocks
    /// ≤ 8, ≤ 32; [`CudaMultifrontal::factor_and_solve`]).
    fused_factor_forward: [Kernel; 2],
}

impl MfKernels {
    /// The kernels whose blocks may stage the widest chunks, each allowed the most dynamic shared
    /// memory the device gives it ([`Kernel::allow_most_dynamic_shared`]). The one list of kernels
    /// kept by hand; the launch profile reads a launch's kernel from the launch itself.
    fn wide_smem(&self) -> impl Iterator<Item = &Kernel> {
        let one = std::iter::once;
        self.sub_forward.iter().chain(&self.sub_backward).chain(&self.maps_setup).chain(self.maps_setup_parts.iter().flatten()).chain(one(&self.maps_forward)).chain(&self.maps_backward).chain(one(&self.mapsp_forward)).chain(&self.mapsp_backward).chain(one(&self.mapst_forward)).chain(&self.mapst_backward).chain(one(&self.mapss_forward)).chain(&self.mapss_backward).chain(self.mapss_lines.iter().flatten()).chain(&self.mapss_tcf).chain(&self.mapss_tcf_pref).chain(&self.mapss_back_pref).chain(one(&self.mapss_xs_forward)).chain(&self.mapss_xs_backward).chain(&self.mapss_ld4_forward).chain(one(&self.mapss_pipe64_forward)).chain(&self.mapss_top_lines).chain(&self.mapss_chain).chain(one(&self.mapssp_forward)).chain(&self.mapssp_backward).chain(&self.fused_factor_forward).chain(self.mapss_pipe64_backward.iter().flatten()).chain(self.mapss_trim_forward.iter().flatten()).chain(one(&self.mapss_adds_forward))
    }
}

/// The transfer maps of every fused subtree on the device; `fresh` once computed from the current
/// factorization.
struct DeviceMaps {
    data: CudaSlice<f64>,
    fresh: bool,
}

/// Library state for large fronts: handles, getrf workspace, pivots and info per large node.
struct LargeState {
    libs: DenseLibs,
    work: CudaSlice<f64>,
    ipiv: CudaSlice<i32>,
    info: CudaSlice<i32>,
    /// (node, offset in `ipiv`, index in `info`) of every large node.
    nodes: Vec<(u32, usize, usize)>,
}

/// Right-hand-side slot buffers, kept between solves (grown on demand).
struct SolveBuffers {
    nrhs: usize,
    leaf: CudaSlice<f64>,
    levels: [CudaSlice<f64>; 2],
    /// Separator rows × `nrhs` ([`MapsKernel::Separators`]), allocated on the first solve by them.
    sep: Option<CudaSlice<f64>>,
    /// `n × nrhs`: the scratch `x` of row-major solves in place whose launches are not proven safe
    /// in place ([`CudaMultifrontal::in_place_runs`]), allocated on the first such solve after the
    /// buffers were (re)allocated (round 28: not one a call).
    x: Option<CudaSlice<f64>>,
}

/// Where a solve puts its solution: into `x` beside `b`, or over `b` (row-major only).
enum Out<'a> {
    Beside(&'a CudaVector, &'a mut CudaVector),
    Over(&'a mut CudaVector),
}

/// A multifrontal LU factorization held in device memory.
pub struct CudaMultifrontal {
    sym: Arc<Symbolic>,
    tree: DeviceTree,
    _tree_buffers: TreeBuffers,
    lists: CudaSlice<u32>,
    leaves: Step,
    levels: Vec<Step>,
    /// The launches of the nodes outside fused subtrees (the fused-subtree solve).
    upper_leaves: Step,
    upper_levels: Vec<Step>,
    passes: Vec<DevPass>,
    /// The passes with compact separator rows, where that layout applies.
    separators: Option<sep::DevSeparators>,
    /// Contribution-buffer rows per right-hand side (leaves and fused roots).
    leaf_slots: u64,
    path: SolvePath,
    /// Block shape of the fused kernels; `None`: [`SubtreeShape::for_rhs`].
    shape: Option<SubtreeShape>,
    /// Dynamic shared memory a fused block may use (bytes).
    sub_smem: usize,
    kernels: MfKernels,
    /// The element matrices in front order, copied into `storage` at each factorization.
    elements: CudaSlice<f64>,
    storage: CudaSlice<f64>,
    pinv: CudaSlice<u32>,
    /// Front row at each pivot position (the inverse of `pinv`, per node).
    perm: CudaSlice<u32>,
    status: CudaSlice<u64>,
    large: Option<Mutex<LargeState>>,
    buffers: Mutex<Option<SolveBuffers>>,
    /// Doubles of all transfer maps ([`MapLayout::len`]); the maps themselves, allocated on the
    /// first solve that uses them.
    maps_len: u64,
    maps: Mutex<Option<DeviceMaps>>,
    /// Factorization and solve of the large fronts.
    large_fronts: LargeFronts,
    /// Kernels of the transfer maps' solve; `None`: [`MapsKernel::default`].
    maps_kernel: Option<MapsKernel>,
    /// Most blocks of a pipelined launch (`None`: what is resident at once); tests force a few so
    /// that every block walks many items.
    pipe_blocks: Option<usize>,
    /// Every chunk of columns its own block in the separator-layout launches of every pass
    /// ([`CudaMultifrontal::set_split_columns`]).
    split_columns: bool,
    /// The bottom separator-row pass through registers ([`CudaMultifrontal::set_stream_bottom`]).
    stream_bottom: bool,
    /// The bottom forward pass by warp items ([`CudaMultifrontal::set_lean_forward`]).
    lean_forward: bool,
    /// The bottom backward pass by warps ([`CudaMultifrontal::set_lean_backward`]).
    lean_backward: bool,
    /// The least subtrees of a pass that runs the pipelined separator-row kernels (`None`: none;
    /// [`CudaMultifrontal::set_pipe_separators`]).
    pipe_separators: Option<usize>,
    /// Threads per column of the separator-row kernels' blocks ([`CudaMultifrontal::set_column_threads`]).
    column_threads: usize,
    /// Right-hand sides solved since the last factorization ([`MAPS_MIN_RHS`]).
    solved_columns: AtomicUsize,
    /// Events after each fused launch while [`CudaMultifrontal::solve_profile`] runs.
    probe: Mutex<Option<Vec<pipe::Mark>>>,
    /// First node id past each tree level (leaves first), for [`CudaMultifrontal::factor_and_solve`].
    lvl_end: CudaSlice<u32>,
    /// The streams of [`CudaMultifrontal::factor_and_solve_overlap`] (factorization, forward
    /// sweep, backward maps), created on first use with the priorities of `side_prio`; whether it
    /// computes the two maps apart ([`CudaMultifrontal::set_overlap_split_maps`]) and gives the
    /// streams priorities ([`CudaMultifrontal::set_overlap_priorities`]).
    side: Vec<Arc<cudarc::driver::CudaStream>>,
    side_prio: bool,
    split_maps: bool,
    priorities: bool,
    /// The bottom pass of row-major solves ([`CudaMultifrontal::set_rows_bottom`]).
    rows_bottom: RowsBottom,
    /// How the separator-row kernels move whole lines ([`CudaMultifrontal::set_sep_lines`];
    /// `None`: per layout, [`DEFAULT_ROWS_SEP_LINES`] and [`DEFAULT_COLUMNS_SEP_LINES`]).
    sep_lines: Option<SepLines>,
    /// Whether the line walk stamps its items ([`CudaMultifrontal::set_walk_trace`]).
    walk_trace: bool,
    /// The line walk's item shape ([`CudaMultifrontal::set_walk_shape`]; `None`: round 20's).
    walk_shape: Option<WalkShape>,
    /// The most subtrees of a walked pass ([`CudaMultifrontal::set_walk_subtrees`]; `None`: the
    /// layout's [`TOP_SUBTREES`](crate::solver::multifrontal::separators::TOP_SUBTREES)).
    walk_subtrees: Option<usize>,
    /// Whether the tensor-core forward separator-row kernels prefetch their store side's indices
    /// ([`CudaMultifrontal::set_sep_prefetch`]; on by default since round 23).
    sep_prefetch: bool,
    /// Whether the bulk backward separator-row kernels prefetch their indices
    /// ([`CudaMultifrontal::set_sep_back_prefetch`]; on by default since round 28).
    sep_back_prefetch: bool,
    /// Whether row-major solves keep the separator rows in `x` ([`CudaMultifrontal::set_sep_in_x`];
    /// off by default), and that layout's tables, built on first use.
    sep_in_x: bool,
    /// Whether the upper passes split their contributions over a column's parts, forward and
    /// backward ([`CudaMultifrontal::set_sep_ext_split`]; both on by default since round 28).
    sep_ext_split: (bool, bool),
    /// Whether the tensor-core forward kernels stage rows of `C + 4` ([`CudaMultifrontal::set_sep_tc_rows4`];
    /// off by default, round 29).
    sep_tc_rows4: bool,
    /// Whether forward passes without external entries skip the zeroed Schur rows
    /// ([`CudaMultifrontal::set_sep_trim`]; round 30, on by default since stop 54).
    sep_trim: bool,
    separators_at_dofs: std::sync::OnceLock<Option<sep::DevSeparators>>,
    /// Whether in-place row-major solves add the contributions of the passes below the walk into
    /// `x` ([`CudaMultifrontal::set_sep_bottom_adds`]; on by default), and that layout, built by
    /// the first such solve.
    sep_bottom_adds: bool,
    separators_adds: std::sync::OnceLock<Option<sep::DevSeparators>>,
    /// Whether pass 1 is chained into the bottom forward pass ([`CudaMultifrontal::set_sep_chain`];
    /// off by default).
    sep_chain: bool,
    /// Whether the forward passes of many subtrees pipeline 64-column chunks
    /// ([`CudaMultifrontal::set_sep_pipe64`]; off by default).
    sep_pipe64: bool,
    /// Whether the backward passes of many subtrees pipeline 64-column chunks
    /// ([`CudaMultifrontal::set_sep_pipe64_backward`]; off by default).
    sep_pipe64_backward: bool,
}

/// Builds the concatenated device node list and the per-launch ranges into it.
#[derive(Default)]
struct ListBuilder {
    all: Vec<u32>,
}

impl ListBuilder {
    fn push(&mut self, s: &Symbolic, nodes: &[u32]) -> List {
        let off = self.all.len();
        self.all.extend_from_slice(nodes);
        List { off, count: nodes.len(), mmax: nodes.iter().map(|&v| s.m[v as usize] as usize).max().unwrap_or(0) }
    }

    /// Splits `nodes` by front size: warp, block, library.
    fn classes(&mut self, s: &Symbolic, nodes: &[u32]) -> (List, List, Large) {
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for &v in nodes {
            let m = s.m[v as usize] as usize;
            if m <= WARP_MAX {
                a.push(v)
            } else if m <= BLOCK_MAX {
                b.push(v)
            } else {
                c.push(v)
            }
        }
        let fronts: Vec<(usize, usize)> = c.iter().map(|&v| (s.m[v as usize] as usize, s.e[v as usize] as usize)).collect();
        let large = Large { list: self.push(s, &c), max_children: c.iter().map(|&v| s.children(v as usize).len()).max().unwrap_or(0), nodes: c, pays: batch_pays(&fronts) };
        (self.push(s, &a), self.push(s, &b), large)
    }

    /// The launches of one level (or of the leaves): factor and backward over the nodes that
    /// eliminate something, forward over the active ones.
    fn step(&mut self, s: &Symbolic, nodes: Vec<u32>) -> Step {
        let active: Vec<u32> = nodes.iter().copied().filter(|&v| s.active[v as usize]).collect();
        let owning: Vec<u32> = nodes.into_iter().filter(|&v| s.e[v as usize] > 0).collect();
        let (factor_warp, factor_block, factor_large) = self.classes(s, &owning);
        let (forward_32, forward_160, forward_large) = self.classes(s, &active);
        let (backward_32, backward_160, backward_large) = self.classes(s, &owning);
        Step { factor_warp, factor_block, factor_large, forward_32, forward_160, forward_large, backward_32, backward_160, backward_large }
    }
}

fn ptr<T>(be: &CudaBackend, s: &CudaSlice<T>) -> DevPtr {
    let (p, _sync) = s.device_ptr(&be.stream);
    p
}

/// The subtree plan the device launches follow: `CudaMultifrontal::prepare`'s, and the chained
/// solve's tables rebuild the same one on first use (`cuda_chain.rs`), so both take it from here.
fn device_plan(sym: &Symbolic) -> Result<SubtreePlan> {
    SubtreePlan::new(sym, SubtreeLimits::default())
}

/// Shared-memory doubles of one factorization group (`F` plus the pivot ints), as in the kernel.
fn group_doubles(mmax: usize) -> usize {
    mmax * mmax + mmax.div_ceil(2)
}

impl CudaMultifrontal {
    /// Uploads the structure and element matrices and factorizes on `be`.
    pub fn factor(be: &CudaBackend, sym: Arc<Symbolic>, element_matrices: &[f64]) -> Result<CudaMultifrontal> {
        let mut mf = CudaMultifrontal::upload(be, sym, element_matrices)?;
        mf.refactor(be)?;
        Ok(mf)
    }

    /// Device tables and element matrices (in front order), not yet factorized.
    fn upload(be: &CudaBackend, sym: Arc<Symbolic>, element_matrices: &[f64]) -> Result<CudaMultifrontal> {
        let mut host = vec![0.0; sym.leaf_len as usize];
        leaf_fronts(&sym, element_matrices, &mut host)?;
        let elements = be.upload(&host)?;
        drop(host);
        CudaMultifrontal::prepare(be, sym, elements)
    }

    /// Device tables, node lists, kernels and buffers; no numeric work.
    fn prepare(be: &CudaBackend, sym: Arc<Symbolic>, elements: CudaSlice<f64>) -> Result<CudaMultifrontal> {
        let s = &*sym;
        let u32s: Vec<CudaSlice<u32>> = [&s.m, &s.e, &s.child_ptr, &s.child_idx, &s.maps, &s.front_dofs]
            .iter()
            .map(|v| be.upload(if v.is_empty() { &[0u32][..] } else { &v[..] }))
            .collect::<Result<_>>()?;
        let plan = device_plan(s)?;
        let u64s: Vec<CudaSlice<u64>> =
            [&s.front_off, &s.map_off, &s.pinv_off, &s.dofs_off, &plan.slot].iter().map(|v| be.upload(&v[..])).collect::<Result<_>>()?;
        let active = be.upload(&plan.place)?;
        // Pivot orders start at zero: a front whose elimination stopped at a zero pivot leaves its
        // own unwritten, and work overlapped with the factorization (before its check) reads them
        // as indices ([`CudaMultifrontal::factor_and_solve_overlap`]).
        let mut perm = be.alloc::<u32>(s.n)?;
        be.zero_slice(&mut perm)?;
        let tree = DeviceTree {
            m: ptr(be, &u32s[0]),
            e: ptr(be, &u32s[1]),
            child_ptr: ptr(be, &u32s[2]),
            child_idx: ptr(be, &u32s[3]),
            maps: ptr(be, &u32s[4]),
            dofs: ptr(be, &u32s[5]),
            front_off: ptr(be, &u64s[0]),
            map_off: ptr(be, &u64s[1]),
            pinv_off: ptr(be, &u64s[2]),
            dofs_off: ptr(be, &u64s[3]),
            slot: ptr(be, &u64s[4]),
            active: ptr(be, &active),
            perm: ptr(be, &perm),
            nelem: s.nelem as u32,
        };

        // Node lists of every launch, concatenated.
        let mut lb = ListBuilder::default();
        let leaves = lb.step(s, (0..s.nelem as u32).collect());
        let levels: Vec<Step> = s.levels.iter().map(|r| lb.step(s, (r.start..r.end).collect())).collect();
        let upper = |r: std::ops::Range<u32>| r.filter(|&v| !plan.fused[v as usize]).collect::<Vec<u32>>();
        let upper_leaves = lb.step(s, upper(0..s.nelem as u32));
        let upper_levels: Vec<Step> = s.levels.iter().map(|r| lb.step(s, upper(r.clone()))).collect();
        let all = lb.all;
        let layout = MapLayout::new(&plan);
        let mut passes = plan.passes.iter().enumerate().map(|(q, p)| upload_pass(be, p, &layout, q)).collect::<Result<Vec<_>>>()?;
        // First node id past each tree level (the leaves, then `levels`), for the fused kernels.
        let lvl_end: Vec<u32> = std::iter::once(s.nelem as u32).chain(s.levels.iter().map(|r| r.end)).chain(std::iter::once(u32::MAX)).collect();
        for (dp, p) in passes.iter_mut().zip(&plan.passes) {
            dp.mmax = p.nodes.iter().map(|&v| s.m[v as usize] as usize).max().unwrap_or(0);
            let top = p.nodes.iter().copied().max().unwrap_or(0);
            dp.top_step = lvl_end.iter().position(|&end| top < end).unwrap_or(lvl_end.len() - 1).min(s.levels.len());
        }
        let lvl_end = be.upload(&lvl_end)?;
        let separators = sep::DevSeparators::new(be, s, &plan, &layout, sep::SepLayout::Compact)?;
        let lists = be.upload(if all.is_empty() { &[0u32][..] } else { &all })?;

        let module = be.variant_module(&jit::MULTIFRONTAL_BATCHED, &[])?;
        let get = |name: &'static str| Kernel::from_module(&module, name);
        let kernels = MfKernels {
            factor_warp: get("mf_factor_warp")?,
            factor_block: get("mf_factor_block")?,
            zero_fronts: get("mf_zero_fronts")?,
            extend_add: get("mf_extend_add")?,
            forward: [get("mf_forward_32")?, get("mf_forward_160")?],
            backward: [get("mf_backward_32")?, get("mf_backward_160")?],
            rhs_start: get("mf_rhs_start")?,
            rhs_extend_add: get("mf_rhs_extend_add")?,
            rhs_x: get("mf_rhs_x")?,
            sub_forward: [get("mf_sub_forward_8_1")?, get("mf_sub_forward_8_2")?, get("mf_sub_forward_32_1")?],
            sub_backward: [get("mf_sub_backward_8_1")?, get("mf_sub_backward_8_2")?, get("mf_sub_backward_32_1")?],
            maps_setup: [get("mf_maps_setup_8")?, get("mf_maps_setup_32")?],
            maps_setup_parts: [[get("mf_maps_setup_g_8")?, get("mf_maps_setup_g_32")?], [get("mf_maps_setup_hk_8")?, get("mf_maps_setup_hk_32")?]],
            maps_forward: get("mf_maps_forward")?,
            maps_backward: [get("mf_maps_backward_1")?, get("mf_maps_backward_2")?, get("mf_maps_backward_3")?],
            batched: [get("mfb_factor")?, get("mfb_forward")?, get("mfb_backward")?],
            mapsp_forward: get("mf_mapsp_forward")?,
            mapsp_backward: [get("mf_mapsp_backward_1")?, get("mf_mapsp_backward_2")?, get("mf_mapsp_backward_3")?],
            mapst_forward: get("mf_mapst_forward")?,
            mapst_backward: [get("mf_mapst_backward_1")?, get("mf_mapst_backward_2")?, get("mf_mapst_backward_3")?],
            mapss_forward: get("mf_mapss_forward")?,
            mapss_backward: [get("mf_mapss_backward_1")?, get("mf_mapss_backward_2")?, get("mf_mapss_backward_3")?],
            mapss_lines: [
                [get("mf_mapssb_forward")?, get("mf_mapssb_backward_1")?, get("mf_mapssb_backward_2")?, get("mf_mapssb_backward_3")?],
                [get("mf_mapsse_forward")?, get("mf_mapsse_backward_1")?, get("mf_mapsse_backward_2")?, get("mf_mapsse_backward_3")?],
                [get("mf_mapssbe_forward")?, get("mf_mapssbe_backward_1")?, get("mf_mapssbe_backward_2")?, get("mf_mapssbe_backward_3")?],
            ],
            mapss_tcf: [get("mf_mapsst_forward")?, get("mf_mapssbt_forward")?, get("mf_mapsset_forward")?, get("mf_mapssbet_forward")?],
            mapss_tcf_pref: [get("mf_mapsstp_forward")?, get("mf_mapssbtp_forward")?, get("mf_mapssetp_forward")?, get("mf_mapssbetp_forward")?],
            mapss_back_pref: [get("mf_mapssbp0_backward_1")?, get("mf_mapssbp0_backward_2")?, get("mf_mapssbp0_backward_3")?],
            mapss_xs_forward: get("mf_mapssbtpxs_forward")?,
            mapss_xs_backward: [get("mf_mapssbxs_backward_1")?, get("mf_mapssbxs_backward_2")?, get("mf_mapssbxs_backward_3")?],
            mapss_ld4_forward: [get("mf_mapssbtpl4_forward")?, get("mf_mapssbtpxsl4_forward")?],
            mapss_pipe64_forward: get("mf_mapssbtp64_forward")?,
            mapss_pipe64_backward: [
                [get("mf_mapssbp064_backward_2")?, get("mf_mapssbp064_backward_3")?],
                [get("mf_mapssbxs64_backward_2")?, get("mf_mapssbxs64_backward_3")?],
            ],
            mapss_trim_forward: [
                [get("mf_mapssbtpz_forward")?, get("mf_mapssbtp64z_forward")?],
                [get("mf_mapssbtpl4z_forward")?, get("mf_mapssbtp64l4z_forward")?],
            ],
            mapss_adds_forward: get("mf_mapssbtpza_forward")?,
            mapssp_forward: get("mf_mapssp_forward")?,
            mapssp_backward: [get("mf_mapssp_backward_1")?, get("mf_mapssp_backward_2")?, get("mf_mapssp_backward_3")?],
            mapss_top: get("mf_mapss_top")?,
            mapss_top_lines: [get("mf_mapssbe_top")?, get("mf_mapssbet_top")?],
            mapss_chain: [get("mf_mapssb_chain")?, get("mf_mapssbt_chain")?, get("mf_mapssbtp_chain")?],
            stream_forward: get("mf_stream_forward")?,
            stream_backward: [get("mf_stream_backward_1")?, get("mf_stream_backward_2")?, get("mf_stream_backward_3")?],
            lean_forward: get("mf_lean_forward")?,
            lean_backward: [get("mf_lean_backward_1")?, get("mf_lean_backward_2")?],
            rows_bottom: [get("mf_rows_forward")?, get("mf_rows_backward")?, get("mf_rows_backward_tc")?],
            rows_fused: [
                [[get("mf_rows_fused_forward_36_1")?, get("mf_rows_fused_backward_36_1")?], [get("mf_rows_fused_forward_36_2")?, get("mf_rows_fused_backward_36_2")?]],
                [[get("mf_rows_fused_forward_40_1")?, get("mf_rows_fused_backward_40_1")?], [get("mf_rows_fused_forward_40_2")?, get("mf_rows_fused_backward_40_2")?]],
            ],
            fused_factor_forward: [get("mf_fused_factor_forward_8")?, get("mf_fused_factor_forward_32")?],
        };
        let smem = group_doubles(BLOCK_MAX) * 8;
        kernels.factor_block.allow_dynamic_shared(smem)?;
        // Shared memory for the widest fused blocks where the device allows it (a device with less
        // opt-in shared memory runs the blocks that fit the default 48 KiB). The kernels are shared
        // by every factorization on the backend (one module), so the limit is always set to the
        // same largest value: a per-factorization value could be lowered by another one between
        // this one's setting and its launch (CUDA_ERROR_INVALID_VALUE, seen on the H100).
        let want = passes.iter().chain(separators.iter().flat_map(|s| &s.passes)).map(|p| p.smem(SUBTREE_MAX_WIDTH).max(p.map_smem(true, SUBTREE_MAX_WIDTH)).max(p.mapsp_smem(true, SUBTREE_MAX_WIDTH)).max(2 * p.mapt_smem(true, SUBTREE_MAX_WIDTH)).max(p.mapss_smem(true, SUBTREE_MAX_WIDTH, 11)).max(p.mapss_smem(false, SUBTREE_MAX_WIDTH, 15)).max(p.mapss_smem(false, SUBTREE_MAX_WIDTH, sep::SEP_BULK | sep::SEP_TCF | sep::SEP_PREF | sep::SEP_XS | tc_rows::SEP_LD4))).max().unwrap_or(0);
        let mut sub_smem = DEFAULT_SMEM;
        // (`mf_mapss_top` is not among them: the few rows of its warp items fit 48 KiB; the line
        // walk's items, with their staged contributions, may not.)
        // Each kernel gets the device's maximum less its static shared memory (the bulk-copy
        // variants' mbarrier: asking the whole maximum of them fails, and that failure once left
        // every kernel at 48 KiB, halving the default bottom backward pass's chunk; round 18).
        if want > DEFAULT_SMEM {
            let optin = be.device().shared_optin;
            if let Some(most) = kernels.wide_smem().map(|k| k.allow_most_dynamic_shared(optin).ok()).collect::<Option<Vec<_>>>() {
                sub_smem = most.into_iter().min().unwrap_or(DEFAULT_SMEM);
            }
        }

        let storage = be.alloc::<f64>(s.storage_len as usize)?;
        let mut pinv = be.alloc::<u32>(s.n)?;
        be.zero_slice(&mut pinv)?;
        let status = be.upload(&[u64::MAX])?;
        let large_nodes: Vec<u32> = levels.iter().flat_map(|l| l.factor_large.nodes.iter().copied()).collect();
        let large = if large_nodes.is_empty() {
            None
        } else {
            let libs = DenseLibs::new(&be.stream)?;
            let storage_ptr = ptr(be, &storage);
            let mut work = 1usize;
            let mut nodes = Vec::new();
            let mut ipiv_len = 0usize;
            for (i, &v) in large_nodes.iter().enumerate() {
                let (m, e) = (s.m[v as usize] as usize, s.e[v as usize] as usize);
                work = work.max(libs.getrf_work(e, m, m, storage_ptr + 8 * s.front_off[v as usize])?);
                nodes.push((v, ipiv_len, i));
                ipiv_len += e;
            }
            Some(Mutex::new(LargeState {
                work: be.alloc::<f64>(work)?,
                ipiv: be.alloc::<i32>(ipiv_len)?,
                info: be.alloc::<i32>(large_nodes.len())?,
                libs,
                nodes,
            }))
        };
        Ok(CudaMultifrontal {
            sym,
            tree,
            _tree_buffers: TreeBuffers { _u32: u32s, _u64: u64s, _u8: active },
            lists,
            leaves,
            levels,
            upper_leaves,
            upper_levels,
            passes,
            separators,
            leaf_slots: plan.leaf_slots,
            path: SolvePath::Auto,
            shape: None,
            sub_smem,
            kernels,
            elements,
            storage,
            pinv,
            perm,
            status,
            large,
            buffers: Mutex::new(None),
            maps_len: layout.len,
            maps: Mutex::new(None),
            large_fronts: LargeFronts::default(),
            maps_kernel: None,
            pipe_blocks: None,
            split_columns: false,
            stream_bottom: false,
            lean_forward: false,
            lean_backward: false,
            pipe_separators: None,
            column_threads: DEFAULT_COLUMN_THREADS,
            solved_columns: AtomicUsize::new(0),
            rows_bottom: DEFAULT_ROWS_BOTTOM,
            sep_lines: None,
            walk_trace: false,
            walk_shape: None,
            walk_subtrees: None,
            sep_prefetch: true,
            sep_back_prefetch: true,
            sep_in_x: false,
            sep_ext_split: (true, true),
            sep_tc_rows4: false,
            sep_trim: true,
            separators_at_dofs: std::sync::OnceLock::new(),
            sep_bottom_adds: true,
            separators_adds: std::sync::OnceLock::new(),
            sep_chain: false,
            sep_pipe64: false,
            sep_pipe64_backward: false,
            probe: Mutex::new(None),
            lvl_end,
            side: Vec::new(),
            side_prio: false,
            split_maps: true,
            priorities: true,
        })
    }

    pub fn symbolic(&self) -> &Arc<Symbolic> {
        &self.sym
    }

    /// Device bytes held by the factorization (factors, element matrices, tables).
    pub fn device_bytes(&self) -> usize {
        self.storage.num_bytes() + self.elements.num_bytes() + 2 * self.pinv.num_bytes() + self.lists.num_bytes()
    }

    fn list_ptr(&self, be: &CudaBackend, l: List) -> DevPtr {
        ptr(be, &self.lists) + 4 * l.off as u64
    }

    /// Factorizes again from the element matrices already on the device (what the benchmark times:
    /// everything from the element matrices to a checked factorization).
    pub fn refactor(&mut self, be: &CudaBackend) -> Result<()> {
        self.reset_factor(be)?;
        self.factor_steps(be, false)
    }

    /// Element matrices into the factor storage, status reset, maps marked stale.
    fn reset_factor(&mut self, be: &CudaBackend) -> Result<()> {
        *self.solved_columns.get_mut() = 0;
        if let Some(m) = self.maps.get_mut().unwrap_or_else(|p| p.into_inner()).as_mut() {
            m.fresh = false;
        }
        be.stream
            .memcpy_dtod(&self.elements, &mut self.storage.slice_mut(0..self.elements.len()))
            .map_err(|e| cuda_error(format!("copying the element matrices failed: {e}")))?;
        be.stream
            .memcpy_htod(&[u64::MAX], &mut self.status)
            .map_err(|e| cuda_error(format!("resetting the factorization status failed: {e}")))?;
        Ok(())
    }

    /// Factorizes every node level by level (`upper`: only the nodes outside fused subtrees, those
    /// being factorized already), then checks the status of every front factorized since
    /// [`Self::reset_factor`].
    fn factor_steps(&mut self, be: &CudaBackend, upper: bool) -> Result<()> {
        let by_lib = self.factor_launch(be, &be.stream, upper, &mut |_| Ok(()))?;
        self.factor_check(be, &by_lib)
    }

    /// The launches of [`Self::factor_steps`]; `after(i)` runs after those of step `i` (0: the
    /// leaves, then the tree levels) are issued. Returns the large nodes factorized by cuSOLVER
    /// (indices into the large state's nodes) for [`Self::factor_check`]. The small fronts'
    /// launches go to `stream`; the large fronts' (assembly kernels, libraries) to the backend's,
    /// so a tree with large fronts must be factorized on that one.
    fn factor_launch(&self, be: &CudaBackend, stream: &cudarc::driver::CudaStream, upper: bool, after: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<usize>> {
        let steps: Vec<&Step> = if upper { std::iter::once(&self.upper_leaves).chain(&self.upper_levels).collect() } else { std::iter::once(&self.leaves).chain(&self.levels).collect() };
        let st = ptr(be, &self.storage);
        let pv = ptr(be, &self.pinv);
        let status = ptr(be, &self.status);
        let mut large = self.large.as_ref().map(|l| l.lock().unwrap_or_else(|p| p.into_inner()));
        let mut next_large = 0usize;
        // Large nodes factorized by cuSOLVER (their pivots and info are read back below).
        let mut by_lib = Vec::new();
        for (i, step) in steps.iter().copied().enumerate() {
            self.factor_small(be, stream, step.factor_warp, true, st, pv, status)?;
            self.factor_small(be, stream, step.factor_block, false, st, pv, status)?;
            if let (Some(lg), false) = (large.as_mut(), step.factor_large.nodes.is_empty()) {
                self.assemble_large(be, &step.factor_large, st)?;
                if step.factor_large.batched(self.large_fronts, false) {
                    let l = step.factor_large.list;
                    let cfg = LaunchConfig { grid_dim: (l.count as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
                    let list = self.list_ptr(be, l);
                    launch!(be, &self.kernels.batched[0], cfg; &self.tree, &list, &st, &pv, &status)?;
                    next_large += l.count;
                    after(i)?;
                    continue;
                }
                for &v in &step.factor_large.nodes {
                    by_lib.push(next_large);
                    let (node, ipiv_off, info_idx) = lg.nodes[next_large];
                    debug_assert_eq!(node, v);
                    next_large += 1;
                    let (m, e) = (self.sym.m[v as usize] as usize, self.sym.e[v as usize] as usize);
                    let f = st + 8 * self.sym.front_off[v as usize];
                    let (work, ipiv, info) = (ptr(be, &lg.work), ptr(be, &lg.ipiv), ptr(be, &lg.info));
                    lg.libs.getrf(e, m, f, m, work, ipiv + 4 * ipiv_off as u64, info + 4 * info_idx as u64)?;
                    // L_SE = F_SE U⁻¹, then F_SS −= L_SE U_ES.
                    lg.libs.trsm(true, true, false, false, m - e, e, f, m, f + 8 * e as u64, m)?;
                    let fe = f + 8 * (e * m) as u64;
                    lg.libs.gemm(false, false, m - e, m - e, e, -1.0, f + 8 * e as u64, m, fe, m, 1.0, fe + 8 * e as u64, m)?;
                }
            }
            after(i)?;
        }
        Ok(by_lib)
    }

    /// Waits for the factorization and checks it: the first zero or non-finite pivot of the small
    /// fronts, then cuSOLVER's info of the large nodes `by_lib`, whose pivots it uploads.
    fn factor_check(&mut self, be: &CudaBackend, by_lib: &[usize]) -> Result<()> {
        let mut large = self.large.as_ref().map(|l| l.lock().unwrap_or_else(|p| p.into_inner()));
        let status = be.download(&self.status)?[0];
        if status != u64::MAX {
            return Err(singular(&self.sym, (status >> 32) as usize, (status & 0xffff_ffff) as usize));
        }
        if let Some(lg) = large.as_mut() {
            let info = if by_lib.is_empty() { Vec::new() } else { be.download(&lg.info)? };
            if let Some(&i) = by_lib.iter().find(|&&i| info[lg.nodes[i].2] != 0) {
                let (v, k) = (lg.nodes[i].0 as usize, info[lg.nodes[i].2]);
                return Err(singular(&self.sym, v, (k.max(1) - 1) as usize));
            }
            // Row exchanges → pivot positions, per large node.
            let ipiv = if by_lib.is_empty() { Vec::new() } else { be.download(&lg.ipiv)? };
            for &(v, off, _) in by_lib.iter().map(|&i| &lg.nodes[i]) {
                let e = self.sym.e[v as usize] as usize;
                let mut perm: Vec<u32> = (0..e as u32).collect();
                for k in 0..e {
                    let p = (ipiv[off + k] - 1) as usize;
                    perm.swap(k, p.min(e - 1));
                }
                let mut pinv = vec![0u32; e];
                for (pos, &row) in perm.iter().enumerate() {
                    pinv[row as usize] = pos as u32;
                }
                let at = self.sym.pinv_off[v as usize] as usize;
                be.stream
                    .memcpy_htod(&pinv, &mut self.pinv.slice_mut(at..at + e))
                    .map_err(|er| cuda_error(format!("uploading the pivots of node {v} failed: {er}")))?;
                be.stream
                    .memcpy_htod(&perm, &mut self.perm.slice_mut(at..at + e))
                    .map_err(|er| cuda_error(format!("uploading the pivots of node {v} failed: {er}")))?;
            }
            be.synchronize()?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn factor_small(&self, be: &CudaBackend, stream: &cudarc::driver::CudaStream, l: List, warp: bool, st: DevPtr, pv: DevPtr, status: DevPtr) -> Result<()> {
        if l.count == 0 {
            return Ok(());
        }
        let per_group = group_doubles(l.mmax) * 8;
        let (kernel, cfg) = if warp {
            let groups = (DEFAULT_SMEM / per_group).clamp(1, 8);
            (&self.kernels.factor_warp, LaunchConfig {
                grid_dim: (l.count.div_ceil(groups) as u32, 1, 1),
                block_dim: (32 * groups as u32, 1, 1),
                shared_mem_bytes: (groups * per_group) as u32,
            })
        } else {
            (&self.kernels.factor_block, LaunchConfig { grid_dim: (l.count as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: per_group as u32 })
        };
        let (list, count, mmax) = (self.list_ptr(be, l), l.count as u32, l.mmax as i32);
        launch!(@on stream, be, kernel, cfg; &self.tree, &list, &count, &mmax, &st, &pv, &status)
    }

    /// Runs `f(list pointer, launch shape)` over chunks of at most [`GRID_Y`] nodes of `l`, with
    /// one grid row per node and enough blocks for `work` entries per node.
    fn per_node(&self, be: &CudaBackend, l: List, work: usize, mut f: impl FnMut(DevPtr, LaunchConfig) -> Result<()>) -> Result<()> {
        for chunk in 0..l.count.div_ceil(GRID_Y) {
            let count = (l.count - chunk * GRID_Y).min(GRID_Y);
            let list = self.list_ptr(be, l) + 4 * (chunk * GRID_Y) as u64;
            let blocks = work.div_ceil(256).clamp(1, 1024) as u32;
            f(list, LaunchConfig { grid_dim: (blocks, count as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 })?;
        }
        Ok(())
    }

    /// Zero + extend-add of a level's large fronts in global memory.
    fn assemble_large(&self, be: &CudaBackend, lg: &Large, st: DevPtr) -> Result<()> {
        self.per_node(be, lg.list, lg.list.mmax * lg.list.mmax, |list, cfg| {
            launch!(be, &self.kernels.zero_fronts, cfg; &self.tree, &list, &st)?;
            for which in 0..lg.max_children as u32 {
                launch!(be, &self.kernels.extend_add, cfg; &self.tree, &list, &which, &st)?;
            }
            Ok(())
        })
    }

    /// The solve buffers for `nrhs` columns (`sep_rows`: with the separator rows; `scratch`: with
    /// the in-place solve's scratch `x`), grown where they are too small.
    fn buffers<'a>(&self, be: &CudaBackend, slot: &'a mut Option<SolveBuffers>, nrhs: usize, sep_rows: Option<usize>, scratch: bool) -> Result<&'a SolveBuffers> {
        if slot.as_ref().is_none_or(|b| b.nrhs < nrhs || (sep_rows.is_some() && b.sep.is_none())) {
            *slot = None; // free the old buffers first
            let s = &*self.sym;
            *slot = Some(SolveBuffers {
                nrhs,
                leaf: be.alloc::<f64>((self.leaf_slots as usize * nrhs).max(1))?,
                levels: [be.alloc::<f64>((s.level_slots as usize * nrhs).max(1))?, be.alloc::<f64>((s.level_slots as usize * nrhs).max(1))?],
                sep: sep_rows.map(|r| be.alloc::<f64>((r * nrhs).max(1))).transpose()?,
                x: None,
            });
        }
        let bufs = slot.as_mut().ok_or_else(|| Error::invalid("internal: solve buffers missing"))?;
        if scratch && bufs.x.is_none() {
            bufs.x = Some(be.alloc::<f64>((self.sym.n * bufs.nrhs).max(1))?);
        }
        Ok(bufs)
    }

    /// Solves `nrhs` right-hand sides (`b`, `x` column-major `n × nrhs` device vectors).
    /// `done`: which forward sweeps of the fused passes have run already (their contributions in
    /// the leaf buffer): [`ForwardDone::Passes`] inside the factorization
    /// ([`Self::factor_and_solve`], by the transfer maps; this solve then runs by the maps without
    /// the separator layout), [`ForwardDone::Separators`] through the separator rows beside it
    /// ([`Self::factor_and_solve_overlap`]; this solve then runs by the separator rows).
    fn solve_device(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector, done: ForwardDone) -> Result<()> {
        self.solve_layout(be, nrhs, b, x, done, false)
    }

    /// `n` as the kernels take it, the layout of `b` and `x` in its top bit: `MF_ROW_MAJOR` set for
    /// a row-major solve (`kernels/multifrontal.cu`, `mf_at`). Passed down every launch of a solve
    /// (not kept on the factorization), so solves of either layout on one factorization never
    /// see each other's.
    pub(super) fn n_word(&self, rows: bool) -> u64 {
        self.sym.n as u64 | if rows { ROW_MAJOR } else { 0 }
    }

    /// [`Self::solve_device`] with `b` and `x` column-major (`rows` false) or row-major (`rows`:
    /// only the kernels that honour the layout run: level by level, or the fused passes through
    /// the separator rows, without the register-streamed or warp-item bottom passes).
    fn solve_layout(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector, done: ForwardDone, rows: bool) -> Result<()> {
        self.solve_into(be, nrhs, Out::Beside(b, x), done, rows)
    }

    /// [`Self::solve_layout`]; [`Out::Over`]: row-major, in place on `b` where the launches are
    /// those proven safe with `x` = `b` ([`Self::in_place_runs`]), else into the cached scratch
    /// `x` ([`SolveBuffers::x`]), then copied into `b`.
    fn solve_into(&self, be: &CudaBackend, nrhs: usize, out: Out<'_>, done: ForwardDone, rows: bool) -> Result<()> {
        let passes_forward_done = done != ForwardDone::No;
        if rows && passes_forward_done {
            return Err(Error::invalid("internal: a row-major solve runs its own forward sweep"));
        }
        let over = matches!(out, Out::Over(_));
        if over && !rows {
            return Err(Error::invalid("internal: only row-major solves run in place"));
        }
        let bp = match &out {
            Out::Beside(b, _) => ptr(be, &b.data),
            Out::Over(b) => ptr(be, &b.data),
        };
        let some = !self.passes.is_empty();
        let (fused, by_maps) = match self.path {
            _ if passes_forward_done => (true, true),
            SolvePath::Levels => (false, false),
            SolvePath::Subtrees => (some, false),
            SolvePath::Maps => (some, some),
            SolvePath::Auto => {
                let fresh = self.has_fresh_maps();
                let solved = self.solved_columns.fetch_add(nrhs, Ordering::Relaxed).saturating_add(nrhs);
                (some && (fresh || nrhs >= SUBTREE_MIN_RHS), some && (fresh || solved >= MAPS_MIN_RHS))
            }
        };
        let by_maps = by_maps && self.passes.iter().all(|p| p.map_nb <= 3);
        // Row-major: the fused passes only through the separator rows, else level by level.
        let seps_ok = self.separators.is_some() && self.passes.iter().all(|p| p.map_nb <= 3);
        let (fused, by_maps) = if rows { (fused && seps_ok, fused && seps_ok) } else { (fused, by_maps) };
        let maps = if by_maps { Some(self.maps_ptr(be)?) } else { None };
        // The separator layout: the maps, its kernels chosen, and a layout for this tree.
        let seps = self.separators.as_ref().filter(|_| {
            by_maps
                && match done {
                    ForwardDone::No => rows || self.separators_chosen(nrhs),
                    ForwardDone::Passes => false,
                    ForwardDone::Separators => true,
                }
        });
        let scratch = over && !(fused && seps.is_some() && maps.is_some() && self.in_place_runs());
        // Row-major with the separator rows in `x` ([`Self::set_sep_in_x`], and in place with the
        // adds, [`Self::set_sep_bottom_adds`]): no `sep` buffer. In place, the adds' layout where it
        // applies (the plain layout at dofs then never built), else the plain one.
        let adds = over && self.adds_apply(be);
        let seps = match seps {
            Some(s) if rows && adds && !scratch => match self.separators_adds(be)? {
                Some(a) => Some(a),
                None => self.separators_at_dofs(be)?.or(Some(s)),
            },
            Some(s) if rows && (self.sep_in_x || adds) => self.separators_at_dofs(be)?.or(Some(s)),
            s => s,
        };
        let mut guard = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        let bufs = self.buffers(be, &mut guard, nrhs, seps.filter(|s| !s.at_dofs).map(|s| s.rows), scratch)?;
        let scratch_x = if scratch { Some(bufs.x.as_ref().ok_or_else(|| Error::invalid("internal: the in-place solve's scratch is missing"))?) } else { None };
        let xp = match (&out, scratch_x) {
            (Out::Beside(_, x), _) => ptr(be, &x.data),
            (Out::Over(_), Some(sx)) => ptr(be, sx),
            (Out::Over(_), None) => bp,
        };
        self.solve_steps(be, nrhs, bufs, seps, maps, fused, done, bp, xp, self.n_word(rows))?;
        if let (Out::Over(b), Some(sx)) = (out, scratch_x) {
            be.stream
                .memcpy_dtod(&sx.slice(0..self.sym.n * nrhs), &mut b.data)
                .map_err(|e| cuda_error(format!("copying the in-place solve's scratch into b failed: {e}")))?;
        }
        Ok(())
    }

    /// The launches of [`Self::solve_layout`] (`n` with the layout bit, [`Self::n_word`]).
    #[allow(clippy::too_many_arguments)]
    fn solve_steps(&self, be: &CudaBackend, nrhs: usize, bufs: &SolveBuffers, seps: Option<&sep::DevSeparators>, maps: Option<DevPtr>, fused: bool, done: ForwardDone, bp: DevPtr, xp: DevPtr, n: u64) -> Result<()> {
        let passes_forward_done = done != ForwardDone::No;
        let s = &*self.sym;
        let (st, pv) = (ptr(be, &self.storage), ptr(be, &self.pinv));
        let large = self.large.as_ref().map(|l| l.lock().unwrap_or_else(|p| p.into_inner()));
        let nr = nrhs as u32;
        let leaf = ptr(be, &bufs.leaf);
        let lv = [ptr(be, &bufs.levels[0]), ptr(be, &bufs.levels[1])];
        let sep_buf = match (seps, maps, bufs.sep.as_ref()) {
            (Some(s), Some(m), _) if s.at_dofs => Some((s, m, xp)),
            (Some(s), Some(m), Some(buf)) => Some((s, m, ptr(be, buf))),
            _ => None,
        };
        if fused && sep_buf.is_none() && n & ROW_MAJOR != 0 {
            return Err(Error::invalid("internal: row-major fused passes need the separator rows"));
        }
        let (leaves, levels) = if fused { (&self.upper_leaves, &self.upper_levels) } else { (&self.leaves, &self.levels) };
        // Forward: fused subtrees, leaves, then levels deepest first (ping-pong buffers).
        if let Some((s, m, sp)) = sep_buf {
            if done == ForwardDone::No {
                self.separators_forward(be, s, nrhs, n, bp, xp, sp, leaf, m)?;
            }
        } else if fused && !passes_forward_done {
            for p in &self.passes {
                self.sweep_pass(be, p, false, nrhs, st, bp, xp, leaf, maps)?;
            }
        }
        self.forward_small(be, leaves, nrhs, n, st, pv, bp, xp, leaf, leaf, leaf)?;
        for (i, step) in levels.iter().enumerate() {
            let (cur, prev) = (lv[i % 2], lv[(i + 1) % 2]);
            self.forward_small(be, step, nrhs, n, st, pv, bp, xp, leaf, prev, cur)?;
            let lg = &step.forward_large;
            if let (false, Some(libs)) = (lg.nodes.is_empty(), large.as_ref()) {
                self.per_node(be, lg.list, lg.list.mmax * nrhs, |list, cfg| {
                    launch!(be, &self.kernels.rhs_start, cfg; &self.tree, &list, &nr, &n, &pv, &bp, &cur)?;
                    for which in 0..lg.max_children as u32 {
                        launch!(be, &self.kernels.rhs_extend_add, cfg; &self.tree, &list, &which, &nr, &pv, &leaf, &prev, &cur)?;
                    }
                    Ok(())
                })?;
                let batched = lg.batched(self.large_fronts, true);
                if batched {
                    self.solve_batched(be, lg.list, false, nrhs, st, cur)?;
                }
                for &v in lg.nodes.iter().filter(|_| !batched) {
                    let (m, e) = (s.m[v as usize] as usize, s.e[v as usize] as usize);
                    let f = st + 8 * s.front_off[v as usize];
                    let r = cur + 8 * s.slot[v as usize] * nrhs as u64;
                    // Slots are row-major m × nrhs = column-major (nrhs × m) Rᵀ: Yᵀ Lᵀ = Rᵀ.
                    libs.libs.trsm(true, false, true, true, nrhs, e, f, m, r, nrhs)?;
                    libs.libs.gemm(false, true, nrhs, m - e, e, -1.0, r, nrhs, f + 8 * e as u64, m, 1.0, r + 8 * (e * nrhs) as u64, nrhs)?;
                }
                let to_x = 1i32;
                self.per_node(be, lg.list, lg.list.mmax * nrhs, |list, cfg| launch!(be, &self.kernels.rhs_x, cfg; &self.tree, &list, &nr, &n, &to_x, &xp, &cur))?;
            }
        }
        // Backward: root level first, then down; the leaves last.
        for step in levels.iter().rev() {
            let lg = &step.backward_large;
            if let (false, Some(libs)) = (lg.nodes.is_empty(), large.as_ref()) {
                let (from_x, to_x) = (0i32, 1i32);
                let work = lg.list.mmax * nrhs;
                self.per_node(be, lg.list, work, |list, cfg| launch!(be, &self.kernels.rhs_x, cfg; &self.tree, &list, &nr, &n, &from_x, &xp, &lv[0]))?;
                let batched = lg.batched(self.large_fronts, true);
                if batched {
                    self.solve_batched(be, lg.list, true, nrhs, st, lv[0])?;
                }
                for &v in lg.nodes.iter().filter(|_| !batched) {
                    let (m, e) = (s.m[v as usize] as usize, s.e[v as usize] as usize);
                    let f = st + 8 * s.front_off[v as usize];
                    let r = lv[0] + 8 * s.slot[v as usize] * nrhs as u64;
                    // Y_Eᵀ −= X_Sᵀ U_ESᵀ, then X_Eᵀ Uᵀ = Y_Eᵀ.
                    libs.libs.gemm(false, true, nrhs, e, m - e, -1.0, r + 8 * (e * nrhs) as u64, nrhs, f + 8 * (e * m) as u64, m, 1.0, r, nrhs)?;
                    libs.libs.trsm(true, true, true, false, nrhs, e, f, m, r, nrhs)?;
                }
                self.per_node(be, lg.list, work, |list, cfg| launch!(be, &self.kernels.rhs_x, cfg; &self.tree, &list, &nr, &n, &to_x, &xp, &lv[0]))?;
            }
            self.backward_small(be, step, nrhs, n, st, xp)?;
        }
        self.backward_small(be, leaves, nrhs, n, st, xp)?;
        if let Some((s, m, sp)) = sep_buf {
            self.separators_backward(be, s, nrhs, n, bp, xp, sp, leaf, m)?;
        } else if fused {
            for p in self.passes.iter().rev() {
                self.sweep_pass(be, p, true, nrhs, st, bp, xp, leaf, maps)?;
            }
        }
        Ok(())
    }

    /// One launch over the subtrees of pass `p`: forward (roots' contributions to `leaf`) or
    /// backward (forward recomputed, then `x` at every dof the subtrees eliminate).
    #[allow(clippy::too_many_arguments)]
    fn sweep_pass(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, st: DevPtr, b: DevPtr, x: DevPtr, leaf: DevPtr, maps: Option<DevPtr>) -> Result<()> {
        if p.count == 0 {
            return Ok(());
        }
        let launch = self.launch_pass(be, p, backward, nrhs, st, b, x, leaf, maps)?;
        self.mark(be, p, backward, nrhs, launch)
    }

    /// [`Self::sweep_pass`]'s launch; what it launched, for the profile.
    #[allow(clippy::too_many_arguments)]
    fn launch_pass(&self, be: &CudaBackend, p: &DevPass, backward: bool, nrhs: usize, st: DevPtr, b: DevPtr, x: DevPtr, leaf: DevPtr, maps: Option<DevPtr>) -> Result<pipe::Launch<'_>> {
        if let Some(maps) = maps {
            if let Some(l) = self.launch_pipelined(be, p, backward, nrhs, b, x, leaf, maps)? {
                return Ok(l);
            }
            // One column per thread: the shape's threads, else by the number of right-hand
            // sides (tensor cores: by the pass, [`pipe::TC_FEW_SUBTREES`]); narrower where the
            // block would not fit.
            let tensor = matches!(self.maps_kernel.unwrap_or_default(), MapsKernel::Tensor | MapsKernel::Separators | MapsKernel::SeparatorsTop);
            let cols = if tensor { self.tensor_cols(p, nrhs) } else { self.shape.map_or_else(|| SubtreeShape::for_rhs(nrhs).threads, |s| s.threads) };
            let smem = |cols| if tensor { p.mapt_smem(backward, cols) } else { p.map_smem(backward, cols) };
            let (cols, smem) = self.fit_width(cols, smem).ok_or_else(|| Error::invalid(format!("pass {}: 32 columns of the map kernels need more shared memory than {} bytes", p.index, self.sub_smem)))?;
            let grid_y = if tensor { self.tensor_grid_y(p, nrhs, cols) } else { 1 };
            let cfg = LaunchConfig { grid_dim: (p.count as u32, grid_y as u32, 1), block_dim: (cols as u32, 1, 1), shared_mem_bytes: smem as u32 };
            let k = match (tensor, backward) {
                (false, true) => &self.kernels.maps_backward[p.map_nb - 1],
                (false, false) => &self.kernels.maps_forward,
                (true, true) => &self.kernels.mapst_backward[p.map_nb - 1],
                (true, false) => &self.kernels.mapst_forward,
            };
            let mcap = p.map_cap(backward, tensor) as u32;
            let (nr, n, off) = (nrhs as u32, self.sym.n as u64, ptr(be, &p.map_off));
            launch!(be, k, cfg; &self.tree, &p.dp, &mcap, &nr, &n, &b, &x, &leaf, &off, &maps)?;
            return Ok(pipe::Launch::new(k, cfg));
        }
        let mut sh = self.shape.unwrap_or_else(|| SubtreeShape::for_rhs(nrhs));
        // One column per thread where only that variant exists or the block would not fit.
        if !p.small_e || p.smem(sh.threads * sh.cols) > self.sub_smem {
            sh = SubtreeShape { threads: sh.threads.min(64), cols: 1 };
        }
        let v = if p.small_e { SUBTREE_COLS_PER_THREAD.iter().position(|&c| c == sh.cols).unwrap_or(0) } else { 2 };
        let width = sh.threads * sh.cols;
        let cfg = LaunchConfig { grid_dim: (p.count as u32, 1, 1), block_dim: (sh.threads as u32, 1, 1), shared_mem_bytes: p.smem(width) as u32 };
        let k = if backward { &self.kernels.sub_backward[v] } else { &self.kernels.sub_forward[v] };
        let (nr, n) = (nrhs as u32, self.sym.n as u64);
        launch!(be, k, cfg; &self.tree, &p.dp, &nr, &n, &st, &b, &x, &leaf)?;
        Ok(pipe::Launch::new(k, cfg))
    }

    /// Computes the transfer maps of every fused subtree from the current factorization (if not
    /// yet done): one launch per pass, a block per subtree, a thread per unit column. A solve by
    /// the maps calls it; benchmarks call it to time it apart.
    pub fn prepare_maps(&self, be: &CudaBackend) -> Result<()> {
        self.maps_ptr(be).map(|_| ())
    }

    /// Whether the transfer maps are computed from the current factorization (then
    /// [`SolvePath::Auto`] solves every number of right-hand sides by them).
    pub fn has_fresh_maps(&self) -> bool {
        self.maps.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|m| m.fresh)
    }

    /// The maps' device pointer, computed first where stale.
    fn maps_ptr(&self, be: &CudaBackend) -> Result<DevPtr> {
        let mut guard = self.maps_slot(be)?;
        let m = guard.as_mut().ok_or_else(|| Error::invalid("internal: transfer maps missing"))?;
        let data = ptr(be, &m.data);
        if !m.fresh {
            for p in &self.passes {
                self.setup_maps_pass(be, &be.stream, p, data, 0)?;
            }
            m.fresh = true;
        }
        Ok(data)
    }

    /// One launch of the maps' setup over the subtrees of pass `p` on `stream`: a block per
    /// subtree, a thread per unit column; the maps into `data`. `part` 0: both maps, 1: only the
    /// forward map `Gᵀ`, 2: only the backward map `[H K]ᵀ`.
    fn setup_maps_pass(&self, be: &CudaBackend, stream: &cudarc::driver::CudaStream, p: &DevPass, data: DevPtr, part: usize) -> Result<()> {
        if p.count == 0 {
            return Ok(());
        }
        let st = ptr(be, &self.storage);
        let threads = if p.smem(64) <= self.sub_smem { 64 } else { 32 };
        let cfg = LaunchConfig { grid_dim: (p.count as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: p.smem(threads as usize) as u32 };
        let k = match part {
            0 => &self.kernels.maps_setup[usize::from(!p.small_e)],
            _ => &self.kernels.maps_setup_parts[usize::from(part == 2)][usize::from(!p.small_e)],
        };
        let off = ptr(be, &p.map_off);
        launch!(@on stream, be, k, cfg; &self.tree, &p.dp, &st, &off, &data)
    }

    /// The transfer maps' storage, allocated (not computed) where it is not yet.
    fn maps_slot(&self, be: &CudaBackend) -> Result<std::sync::MutexGuard<'_, Option<DeviceMaps>>> {
        let mut guard = self.maps.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let data = be.alloc::<f64>((self.maps_len as usize).max(1)).map_err(|e| Error::invalid(format!("multifrontal transfer maps ({} MB): {e}", self.maps_len * 8 / 1_000_000)))?;
            *guard = Some(DeviceMaps { data, fresh: false });
        }
        Ok(guard)
    }

    /// One launch of the batched forward or backward kernel over the large fronts of `l` (slots at
    /// `slots`): a block per (front, chunk of 8 right-hand sides).
    #[allow(clippy::too_many_arguments)]
    fn solve_batched(&self, be: &CudaBackend, l: List, backward: bool, nrhs: usize, st: DevPtr, slots: DevPtr) -> Result<()> {
        let chunks = nrhs.div_ceil(8);
        if chunks > GRID_Y {
            return Err(Error::invalid(format!("{nrhs} right-hand sides exceed the batched large-front solve ({} at most)", 8 * GRID_Y)));
        }
        let cfg = LaunchConfig { grid_dim: (l.count as u32, chunks as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let (list, nr) = (self.list_ptr(be, l), nrhs as u32);
        launch!(be, &self.kernels.batched[1 + usize::from(backward)], cfg; &self.tree, &list, &nr, &st, &slots)
    }

    /// Chooses how large fronts are factorized and solved (default [`LargeFronts::Auto`]): for the factorization at the next [`CudaMultifrontal::refactor`], for
    /// solves at once (both kinds leave the same factors and pivots). For benchmarks and tests.
    pub fn set_large_fronts(&mut self, large: LargeFronts) {
        self.large_fronts = large;
    }

    pub fn large_fronts(&self) -> LargeFronts {
        self.large_fronts
    }

    /// Chooses the solve (default [`SolvePath::Auto`]); for benchmarks and tests.
    pub fn set_solve_path(&mut self, path: SolvePath) {
        self.path = path;
    }

    /// Chooses the block shape of the fused kernels (`None`: by the number of right-hand sides);
    /// for benchmarks and tests. Errors if the shape has no kernel or is wider than 256 columns.
    pub fn set_subtree_shape(&mut self, shape: Option<SubtreeShape>) -> Result<()> {
        if let Some(sh) = shape {
            if !SUBTREE_COLS_PER_THREAD.contains(&sh.cols) || sh.threads == 0 || sh.threads % 32 != 0 || sh.threads * sh.cols > SUBTREE_MAX_WIDTH {
                return Err(Error::invalid(format!(
                    "fused subtree shape {} threads × {} columns: threads must be a multiple of 32, columns one of {SUBTREE_COLS_PER_THREAD:?}, at most {SUBTREE_MAX_WIDTH} columns per block",
                    sh.threads, sh.cols
                )));
            }
        }
        self.shape = shape;
        Ok(())
    }

    /// Passes of fused subtrees (launches each way of the fused solve, besides the large fronts).
    pub fn subtree_passes(&self) -> usize {
        self.passes.len()
    }

    #[allow(clippy::too_many_arguments)]
    fn forward_small(&self, be: &CudaBackend, step: &Step, nrhs: usize, n: u64, st: DevPtr, pv: DevPtr, b: DevPtr, x: DevPtr, leaf: DevPtr, prev: DevPtr, cur: DevPtr) -> Result<()> {
        for (l, k) in [(step.forward_32, &self.kernels.forward[0]), (step.forward_160, &self.kernels.forward[1])] {
            if l.count == 0 {
                continue;
            }
            let (list, count, nr) = (self.list_ptr(be, l), l.count as u32, nrhs as u32);
            let cfg = be.grid_exact((l.count * nrhs) as u64);
            launch!(be, k, cfg; &self.tree, &list, &count, &nr, &n, &st, &pv, &b, &x, &leaf, &prev, &cur)?;
        }
        Ok(())
    }

    fn backward_small(&self, be: &CudaBackend, step: &Step, nrhs: usize, n: u64, st: DevPtr, x: DevPtr) -> Result<()> {
        for (l, k) in [(step.backward_32, &self.kernels.backward[0]), (step.backward_160, &self.kernels.backward[1])] {
            if l.count == 0 {
                continue;
            }
            let (list, count, nr) = (self.list_ptr(be, l), l.count as u32, nrhs as u32);
            let cfg = be.grid_exact((l.count * nrhs) as u64);
            launch!(be, k, cfg; &self.tree, &list, &count, &nr, &n, &st, &x)?;
        }
        Ok(())
    }

    /// Kernel launches of one factorization and of one solve (for reports).
    pub fn launches(&self) -> (usize, usize) {
        let steps = || std::iter::once(&self.leaves).chain(&self.levels);
        let nz = |l: List| usize::from(l.count > 0);
        let lib = |lg: &Large, per: usize, solve: bool| match lg.nodes.len() {
            0 => 0,
            _ if lg.batched(self.large_fronts, solve) => 2 + lg.max_children + 1,
            k => 2 + lg.max_children + per * k,
        };
        let factor = 2 + steps().map(|s| nz(s.factor_warp) + nz(s.factor_block) + lib(&s.factor_large, 3, false)).sum::<usize>();
        let solve = steps()
            .map(|s| nz(s.forward_32) + nz(s.forward_160) + nz(s.backward_32) + nz(s.backward_160) + lib(&s.forward_large, 2, true) + lib(&s.backward_large, 2, true))
            .sum::<usize>();
        (factor, solve)
    }
}

/// Uploads one pass's tables.
fn upload_pass(be: &CudaBackend, p: &Pass, layout: &MapLayout, q: usize) -> Result<DevPass> {
    let up = |v: &Vec<u32>| be.upload(if v.is_empty() { &[0u32][..] } else { &v[..] });
    let t: Vec<CudaSlice<u32>> = [&p.sub_ptr, &p.nodes, &p.f_off, &p.l_off, &p.p_off, &p.loc, &p.loc_ptr, &p.row_ptr, &p.row_dof, &p.elim, &p.ext_ptr, &p.ext_row]
        .into_iter()
        .map(up)
        .collect::<Result<_>>()?;
    let src = be.upload(if p.ext_src.is_empty() { &[0u64][..] } else { &p.ext_src[..] })?;
    let nodes_max = p.sub_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let dp = DevicePass {
        sub_ptr: ptr(be, &t[0]),
        nodes: ptr(be, &t[1]),
        f_off: ptr(be, &t[2]),
        l_off: ptr(be, &t[3]),
        p_off: ptr(be, &t[4]),
        loc: ptr(be, &t[5]),
        loc_ptr: ptr(be, &t[6]),
        row_ptr: ptr(be, &t[7]),
        row_dof: ptr(be, &t[8]),
        elim: ptr(be, &t[9]),
        ext_ptr: ptr(be, &t[10]),
        ext_row: ptr(be, &t[11]),
        ext_src: ptr(be, &src),
        front_entries: p.max_front_entries as u32,
        rows: p.max_rows as u32,
        loc_entries: p.max_loc as u32,
        piv_entries: p.max_piv as u32,
        nodes_max,
    };
    let map_off = be.upload(if p.is_empty() { &[0u64][..] } else { &layout.off[q][..] })?;
    // Map kernels exist for up to 3 blocks of 16 eliminated rows (the default limits allow 40).
    let map_nb = layout.max_elim[q].div_ceil(crate::solver::multifrontal::maps::MAP_ROWS).max(1);
    Ok(DevPass {
        dp,
        count: p.len(),
        small_e: p.max_e <= 8,
        _u32: t,
        _u64: src,
        map_off,
        map_backward: layout.backward_entries[q],
        map_forward: layout.forward_entries[q],
        map_nb,
        index: q,
        traffic: pipe::PassTraffic::new(p),
        mmax: 0,
        max_schur: (0..p.len()).map(|j| (p.row_ptr[j + 1] - p.row_ptr[j] - p.elim[j]) as usize).max().unwrap_or(0),
        has_ext: p.ext_ptr.last().is_some_and(|&e| e > 0),
        max_ext: p.ext_ptr.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0),
        max_elim: layout.max_elim[q],
        trim_rows: p.max_rows,
        adds: false,
        top_step: 0,
    })
}

impl CudaBackend {
    /// One thread per work item (no grid-stride loop), `BLOCK_SIZE` threads per block.
    fn grid_exact(&self, work: u64) -> LaunchConfig {
        LaunchConfig { grid_dim: (work.div_ceil(u64::from(jit::BLOCK_SIZE)).max(1) as u32, 1, 1), block_dim: (jit::BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 }
    }
}

impl Factorization<CudaBackend> for CudaMultifrontal {
    fn n(&self) -> usize {
        self.sym.n
    }
    fn name(&self) -> String {
        "multifrontal".into()
    }
    fn solve_many(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<()> {
        self.check_solve(be, "multifrontal solve", nrhs, b, x)?;
        if nrhs == 0 {
            return Ok(());
        }
        self.solve_device(be, nrhs, b, x, ForwardDone::No)
    }
}

impl CudaMultifrontal {
    /// The checks of every solving entry point (`solve_many`, the fused and overlapped factor and
    /// solve): `b` and `x` hold `n × nrhs` values on this device, and `nrhs` fits the kernels' indices.
    fn check_solve(&self, be: &CudaBackend, what: &str, nrhs: usize, b: &CudaVector, x: &CudaVector) -> Result<()> {
        crate::solver::factorization::check_rhs_len(be, what, self.sym.n, nrhs, b, x)?;
        be.check(what, self.sym.n * nrhs, &[b, x])?;
        if nrhs > u32::MAX as usize / 2 {
            return Err(Error::invalid(format!("{nrhs} right-hand sides is too many for one solve")));
        }
        Ok(())
    }

    /// Solves `nrhs` right-hand sides stored **row-major**: `b[row · nrhs + c]` (a row's columns
    /// side by side, as cuSPARSE's `CUSPARSE_ORDER_ROW` or MAGMA's interleaved batches), `x` the
    /// same, both `n × nrhs` on this device. Same factorization, same results to round-off as
    /// [`Factorization::solve_many`] (column-major, the default) on the transposed data. Pick it
    /// where the right-hand sides are built or used row by row (several load cases of one mesh):
    /// a subtree's rows for all columns are then one contiguous run, so the bottom passes move
    /// whole lines of `b` and `x` (as they move the separator rows). It takes the default's path
    /// (level by level, or the fused passes by the transfer maps once [`SolvePath::Auto`] takes
    /// them) but its fused passes always run the separator-row kernels ([`MapsKernel::Separators`],
    /// whatever [`Self::set_maps_kernel`] chose; no register-streamed or warp-item bottom pass);
    /// without a separator layout it runs level by level.
    pub fn solve_many_rows(&self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<()> {
        self.check_solve(be, "multifrontal row-major solve", nrhs, b, x)?;
        if nrhs == 0 {
            return Ok(());
        }
        self.solve_layout(be, nrhs, b, x, ForwardDone::No, true)
    }
}
