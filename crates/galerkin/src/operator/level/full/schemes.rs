//! Element matrices integrated on the GPU by a chosen scheme ([`Integration`]), stored per cell, and
//! their summation into CSR values colour by colour or with atomics: the seed's study of element
//! integration on the GPU ("Forming matrices of finite element systems in GPGPU") on galerkin's
//! assembler. The kernels are `kernels/element_schemes.cu`, compiled per (element, quadrature,
//! physics) on first use; the stored layout is the `element` level's.
use super::cuda::{kernel_defines, tables, variant_of, CsrTarget, DeviceAssembler, Variant};
use crate::backend::cuda::jit::{self, ASSEMBLY, ELEMENT_SCHEMES, PAIR_LANES};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::operator::level::element::packed::{self, Storage};
use crate::operator::level::{Integration, Scatter, Tuning};
use crate::operator::ElementIntegrator;
use crate::bench::timing::Timing;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rayon::prelude::*;

/// The entry points of one scheme variant.
#[derive(Clone)]
pub(crate) struct SchemeKernels {
    per_cell: Kernel,
    per_point: Kernel,
    tiled: Kernel,
    scatter: Kernel,
    fma: Kernel,
    /// An empty kernel: the fixed cost of a launch.
    empty: Kernel,
    /// Tensor-core probes: m8n8k4, then m16n8k4, m16n8k8, m16n8k16.
    dmma: [Kernel; 4],
}

/// What the physics allows: all schemes write mirrored blocks (symmetric physics); the tiled one
/// reads gradient moments only, with coefficients constant per cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SchemeSupport {
    pub symmetric: bool,
    pub value_term: bool,
    pub per_cell: bool,
}


/// Largest quadrature the thread-per-point scheme takes (one block of threads).
pub const MAX_POINTS_PER_BLOCK: usize = 1024;

/// Dynamic shared memory a block may take (H100: 227 KB).
const MAX_SHARED_BYTES: usize = 227 * 1024;

/// A launch shape of the tiled scheme (`element_schemes.cu`'s TILED_WARPS, TPW, MMA_K,
/// MMA_NATIVE, TENSOR, ALT_ORDER, STREAM_STORES): warps per block, 16 × 8 tiles per warp, the
/// MMA's k (4, 8 or 16: Hopper's m16n8k{4,8,16}; `native` false runs each as m8n8k4 pairs, the
/// only FP64 shape before sm_90); staging from 1D factor tables (`tensor`, where the basis and
/// rule split: [`super::tensor_tables`]) or from the reference-gradient table; odd warps
/// multiplying before they stage (`alternate`); streaming stores of the matrices; blocks per SM
/// the registers are held to and points per pass (`min_blocks`, `qcp`: 0 chooses, see
/// `tiled_shape`); `skip`, for the benchmark's time split only, leaves out parts of the work
/// (bit 1 the staging, 2 the multiplies, 4 the writes: the matrices are then wrong); `producers`
/// warps beside the multiplying ones that only stage (warp-specialised: named barriers per
/// buffer instead of a block barrier per pass, writes through their own scratch; 0: every warp
/// stages and multiplies); `defer` (DEFER_WRITES, one tile per warp, no producers): the first
/// 1 or 2 half tiles of each warp's tile are formed into scratch of the warp's own at the round's
/// end and stored a part per pass of the next round, under its multiplies and staging (0: every
/// half tile is stored at the round's end, in a write phase of its own); `resident`: a persistent
/// grid of as many blocks as the device holds at once (SMs × blocks per SM), each looping over
/// cells, so deferred stores carry into a block's next cell (false: one block per cell, and a
/// cell's last round's deferred stores are a write phase again); `packed`: only the upper
/// triangle is stored, packed row by row ([`Storage::Packed`], PACKED: half the writes); `paired`
/// (PAIRED): each tile holds two needed 8 × 8 node blocks of one column, lower blocks taken
/// transposed, so no MMAs go to the diagonal tiles' wholly-lower halves (p = 5: 28 tiles instead
/// of 30, p = 4: 14 instead of 16, p = 3: 5 instead of 6, p = 2: 3 instead of 4); `cells` (CELLS,
/// 0 or 1: one): cell groups per block, each group of `warps` warps its own cell with its own
/// shared memory and named barrier, so a block holds several cells in flight and the grid has
/// fewer blocks (p ≤ 3, where a cell needs 1–6 warps); `prefetch` (PREFETCH): each group's next
/// cell's coordinates copied to shared memory by `cp.async` during the current cell (its vertex
/// indices a cell further ahead; no registers held), so a cell's head is not a chain of dependent
/// global loads (only where a group loops over cells: resident grids); `narrow` (NARROW, at most 8 functions: trunk p = 1):
/// the idle second half of the one m16n8 tile left out — m8n8k4 steps on its first half, so half
/// the accumulators are constant zeros, not live registers (64–80 registers instead of 128: 24
/// or 32 one-warp cells per SM instead of 16); `wide` (WIDE_WRITES, packed unpaired tiles, one per
/// warp, every warp stages): a round's tiles leave from an image of the packed rows in the free
/// staging buffers — 1: row segments stored by the group's warps with double2 stores over
/// consecutive addresses, 2: one bulk copy (`cp.async.bulk`) per row, read while the warps go on
/// (0: each warp stores its own half tiles' 192-byte row pieces), 3: as 2 but one bulk copy per
/// strip of 16 functions' rows the round holds wholly (contiguous in packed storage), 4: as 2 from an image region of its own beside the staging
/// buffers (one cell group), so the next round's staging does not wait for the copies' reads;
/// `prestage` (PRESTAGE, with `wide` 4 and more than one pass of
/// points): a round's last pass, which stages nothing, stages the first pass of the next round
/// into the buffer it does not read, so that round starts multiplying without a staging phase and
/// two block barriers — 1: the cell's next round (p = 5: two rounds a cell); 2: also the next
/// cell's first (at least three passes, one cell group): its coordinates loaded in the cell's last
/// round's first pass, its J⁻¹ table computed into a second one in the last but one (neither
/// `wide` 4 nor `prestage` combines with `split`); `lanes` (> 0: not tiles at
/// all): the p = 1 engine on the CUDA cores, [`super::pair_lanes`], a block per group of `lanes`
/// cells with a lane per (cell, node pair), on a resident grid where `resident`, its registers
/// held to `min_blocks` blocks per SM, `packed`, `streaming` and `skip` as here (the other fields
/// unused); `split` (SPLIT_MOMENTS, one tile per warp pair, every warp stages, nothing deferred):
/// each tile's nine moments over two warps (5 and 4: 20 and 16 FP64 accumulators instead of 36,
/// so more warps fit an SM's registers), which swap through the staging buffers the moments of
/// each other's half tile and form and store one half each — twice the warps per tile, the
/// automatic blocks per SM chosen for 32 warps instead of 16; `fuse` (pair lanes only, PL_FUSE
/// F > 0): F lanes per (cell, point) each form J⁻¹ and the gradients of NLOC / F functions, no
/// J⁻¹ table and one barrier fewer per group (0: the table, then a lane per (cell, point,
/// function)). (The seventh round's
/// bulk asynchronous writes and prestaging were 4–8 % slower and are gone: BENCHMARKS.md.)
/// `pipe` (PIPE, round 14; packed unpaired tiles with `wide` 3, one round of tiles a cell, one
/// cell group, a resident grid): a block's cells pipelined — the next cell's J⁻¹ table formed
/// under the cell's last multiplies (its coordinates loaded a cell ahead), its first pass staged
/// beside the cell's image (two staging buffers; the image in the buffer the last pass read, or
/// in a region of its own where the cell takes several passes or the triangle outgrows a buffer),
/// so a cell costs two block barriers and no dependent load chain at its head; elsewhere ignored.
/// `pipe_rounds` (PIPE_ROUNDS, round 15, with `pipe` beyond 32 functions: [`super::pipe_rounds`])
/// takes that pipeline to cells of several passes and rounds of tiles (trunk p = 4, 5), each
/// round's image in a region of its own, the next cell's J⁻¹ table formed in the cell's last pass
/// (1) or after its image (2); 0: round 14's pipeline where `pipe` asks for one. `gram` (GRAM,
/// round 16, with `pipe_rounds` 2 where a cell takes one round and NCOMP = DIM: trunk p = 4
/// elasticity, [`super::pipe_rounds::gram`]): the moments as tiles of one Gram matrix over the
/// (function, derivative) rows — 100 MMAs a k-step at p = 4 instead of 144 — turned into the
/// matrix's blocks in the image. `gram_overlap` (GRAM_OVERLAP, round 17, with `gram`:
/// [`super::pipe_rounds::gram_overlap`]): those blocks formed in the next cell's first pass beside
/// its multiplies and sent in its second, not in a phase of their own between two barriers
/// (1: after the multiplies on half the warps of each SM sub-partition, 2: beside the staging in
/// its alternating order, 3: before the multiplies on every warp; 0: in the cell's own tail);
/// `gram_spread` (GRAM_SPREAD) with it: the first strips' blocks in the first pass and the rest's
/// in the second, each part sent a pass later. `gram_wide` and `gram_pairs` (GRAM_WIDE,
/// GRAM_PAIRS, round 18, with `gram`: [`super::pipe_rounds::gram_wide`]): fewer shared-memory
/// load instructions a Gram-tile MMA — each pass staged transposed so a lane's fragment entries
/// are adjacent (double2 loads, half the fragment loads), and a warp's tiles taken in strip-pair
/// order so consecutive tiles share their B fragment. `gram_unroll` (GRAM_UNROLL, round 19, with
/// `gram`: [`super::pipe_rounds::gram_warps`]) unrolls a pass's k-steps, so the next k-step's
/// fragment loads may issue before the current MMAs (software pipelining left to the compiler);
/// with `gram`, `warps` may exceed the moment tiles (up to G's tiles: more warps, fewer
/// accumulators and registers a lane). `gram_diag` (GRAM_DIAG, round 20, with `gram` in strip
/// order: not with `gram_pairs`) takes each strip's two diagonal tiles' B fragments from the
/// strip's A fragment (the same entries of H), so they load none: 80 of p = 4's ~600 fragment
/// loads a k16-step. `gram_early_wait` (GRAM_EARLY_WAIT, round 22, with `gram` in one round a cell)
/// waits for the previous cell's copies a pass early so the last pass has no barrier;
/// `gram_rounds` 3 (GRAM_SPLIT2, round 22, where Gram tiles take several rounds: trunk p = 5)
/// takes three rounds a cell instead of two ([`super::pipe_rounds::gram_split`]). `alt_sub`
/// (ALT_ORDER 2, round 23, with `alternate` in pipelined cells of a multiple of 8 warps:
/// [`alt_order`]) takes the alternating order by SM sub-partition: a warp's sub-partition, whose
/// tensor core it uses, is warp % 4, so with 16 warps `alternate` alone gives all four warps of a
/// sub-partition one order (its tensor core idles while they stage); with `alt_sub` warps 4–7 and
/// 12–15 multiply first, two of each sub-partition's four (measured level at p = 4, 2.3 % slower at
/// p = 5: the warps of a sub-partition do not keep one order over a pass). `gram_rows` (GRAM_ROWS,
/// round 23, with `gram`) forms the tail's packed indices (the image and the blocks) from a base a
/// row (level at p = 4; at p = 5 −1.8 %, its default since round 24). `fn_tables` (FN_TABLES, round 24, with `tensor`: [`tiled_shape_and_tables`]) lays
/// the factor tables out a function at a time in shared memory, built once a block, so a staged
/// entry loads neither its function's factor ids nor its scale: 1 each function's three 1D
/// factors (6 loads an entry instead of 8), 2 its x factor and its (y, z) plane products (5 loads,
/// 3 products; a plane of TN1² points a function). `fn_regs` (FN_REGS, round 25, Gram tiles staged
/// from the factor tables by factor: [`fn_regs`]) 1 applies the functions' scales in the tail with
/// the orientation signs' products, both formed there (no registers held across the passes), so a
/// staged entry loads no scale; 2 also keeps a staging thread's functions' factor ids in registers
/// (it stages the same four in every pass at p = 4), so it loads no id either — no table beyond the
/// factor tables. `stage_wide` (STAGE_WIDE, round 25, with `tensor`, no `fn_tables`) interleaves
/// each factor's value and derivative in the shared tables: one 16-byte load for both.
/// `uniform_tiles` (UNIFORM_TILES, round 26, with `gram`: [`super::pipe_rounds::uniform_tiles`])
/// reads the warp index from lane 0, so the compiler knows a warp's Gram tile indices warp-uniform
/// and holds them in its uniform registers, not in 14 vector registers a lane (p = 4).
/// `pair_classes` (PAIR_CLASSES, round 26, one round of Gram tiles with `fn_regs`:
/// [`super::pipe_rounds::pair_classes`]) orders the tail's node pairs a half-warp per class of rows
/// mod 16, from a table of slots in shared memory: no bank conflicts in the blocks' moment reads
/// and writes (counted at p = 4: 1 692 wavefronts a cell against 2 163).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TiledConfig {
    pub warps: usize,
    pub tiles_per_warp: usize,
    pub mma_k: usize,
    pub native: bool,
    pub tensor: bool,
    pub alternate: bool,
    pub streaming: bool,
    pub min_blocks: usize,
    pub qcp: usize,
    pub skip: u8,
    pub producers: usize,
    pub defer: u8,
    pub resident: bool,
    pub packed: bool,
    pub paired: bool,
    pub cells: usize,
    pub prefetch: bool,
    pub narrow: bool,
    pub wide: u8,
    pub lanes: usize,
    pub split: bool,
    pub fuse: u8,
    pub prestage: u8,
    pub pipe: bool,
    pub pipe_rounds: u8,
    pub gram: bool,
    pub gram_overlap: u8,
    pub gram_spread: bool,
    pub gram_wide: bool,
    pub gram_pairs: bool,
    pub gram_unroll: bool,
    pub gram_diag: bool,
    pub gram_early_wait: bool,
    pub gram_rounds: u8,
    pub alt_sub: bool,
    pub gram_rows: bool,
    pub fn_tables: u8,
    pub fn_regs: u8,
    pub stage_wide: bool,
    pub uniform_tiles: bool,
    pub pair_classes: bool,
}

impl Default for TiledConfig {
    /// 8 warps of one tile (nine moments: 36 FP64 accumulators, 72 of the 128 registers, so two
    /// blocks share an SM and one block's staging and writes overlap the other's multiplies),
    /// m16n8k8, staging from the reference-gradient table: the fourth round's kernel, which the
    /// benchmark's sweep checks every shape against; [`TiledConfig::for_functions`] is what runs.
    fn default() -> Self {
        TiledConfig { warps: 8, tiles_per_warp: 1, mma_k: 8, native: true, tensor: false, alternate: false, streaming: false, min_blocks: 0, qcp: 0, skip: 0, producers: 0, defer: 0, resident: false, packed: false, paired: false, cells: 0, prefetch: false, narrow: false, wide: 0, lanes: 0, split: false, fuse: 0, prestage: 0, pipe: false, pipe_rounds: 0, gram: false, gram_overlap: 0, gram_spread: false, gram_wide: false, gram_pairs: false, gram_unroll: false, gram_diag: false, gram_early_wait: false, gram_rounds: 0, alt_sub: false, gram_rows: false, fn_tables: 0, fn_regs: 0, stage_wide: false, uniform_tiles: false, pair_classes: false }
    }
}

impl TiledConfig {
    /// The shape scheme III runs for `nloc` functions per cell, from the sweep at p = 1…5 on the
    /// H100 (BENCHMARKS.md, fifth round): up to 16 warps of one tile, odd warps multiplying before
    /// they stage; beyond 24 functions (trunk p ≥ 3) staging from the 1D factor tables with
    /// streaming stores (p = 5: 5.6 ms against 6.7–7.1 from the table, p = 4: 1.9 against 2.0),
    /// below from the reference-gradient table, which then fits L1 (p = 2: 0.26 ms against 0.32).
    /// Beyond 32 functions (trunk p ≥ 4: one block of 16 warps per SM) on a resident grid, each
    /// block looping over cells (eighth round: p = 4 1.95 ms against 2.00 with a block per cell,
    /// p = 5 5.69 against 5.75). Deferred writes (`defer`) were 6–12 % slower and stay a sweep
    /// shape. The upper triangle only, packed (ninth round: half the bytes written). Paired
    /// tiles (no MMAs below the diagonal) only from 25 to 32 functions (trunk p = 3), where the
    /// tenth round measured them faster (H200: 0.434 against 0.453 ms); at p = 4, 5 they were
    /// slower for 12.5 % and 6.7 % fewer MMAs (1.797 against 1.708 ms, 5.418 against 5.199), at
    /// p = 2 by 3 %, at p = 1 equal. Up to 8 functions (trunk p = 1), since round 12: no tiles
    /// but the CUDA-core engine ([`Self::pair_lanes_shapes`]'s first: 0.0246 ms against 0.0324
    /// for the eleventh round's narrow tiles in blocks of 8 one-warp cells in the same run, H200);
    /// from 9 to 24 functions (trunk p = 2), since the twelfth round, wide writes by bulk copies
    /// (H200: 0.188 ms against 0.230 in the same run; at p = 3–5 they measured level,
    /// [`Self::round12`]); since the thirteenth round, from 9 to 32 functions (trunk p = 2, 3),
    /// one bulk copy per whole strip (`wide` 3, unpaired tiles; H200: p = 2 0.170 ms against
    /// 0.190 for round 12's `wide2`, p = 3 0.412 against 0.463 for the paired tiles, spreads apart,
    /// [`Self::round13`]); p ≥ 4 keeps the tenth round's shape, which the eleventh and twelfth
    /// rounds' variants did not beat ([`Self::round11`]). Since the fourteenth round, where the
    /// matrices are packed, trunk p = 2, 3 (9–32 functions) pipeline a resident block's cells
    /// ([`Self::round14`]'s first: `pipe`; H200, two processes: p = 2 0.146 / 0.145 ms against
    /// 0.170 / 0.170 for [`Self::round13_default`], p = 3 0.353 / 0.354 against 0.424 / 0.423,
    /// spreads apart); full storage keeps [`Self::round13_default`] (wide writes, hence the
    /// pipeline, need packed triangles).
    pub fn for_functions(nloc: usize) -> TiledConfig {
        // Round 27's device check (H200, 2026-12-05, the lead's `hex26-call.sh`): round 26's Gram
        // tile indices in uniform registers on round 25's staging — p = 4 `fn-regs wide-stage
        // uniform-tiles` 1.223 / 1.229 ms (1.212–1.243 / 1.218–1.231) against the previous default's
        // 1.359 / 1.377 (1.348–1.381) in two sweeps, 2.83× the floor; p = 5 `tail-scales wide-stage
        // uniform-tiles` 4.449 ms (4.403–4.476) against 4.772 (4.759–4.827), 2.72×; their GPU = CPU
        // test passed in the same call. Elasticity only (Gram tiles).
        let round26 = match nloc {
            33..=50 => TiledConfig::round26_high(nloc).get(3).copied(),
            65..=74 => TiledConfig::round26_high(nloc).first().copied(),
            _ => None,
        };
        round26.unwrap_or_else(|| TiledConfig::round24_default(nloc))
    }

    /// The default of rounds 24–26 ([`Self::for_functions`] before round 27's check): the sweep's
    /// second row at trunk p = 4 and p = 5, what round 26's rows were measured against.
    pub fn round24_default(nloc: usize) -> TiledConfig {
        // Round 15 (H200): at trunk p = 4 the pipelined rounds with the next J⁻¹ table formed after
        // the image, 1.516 ms against the previous default's 1.812–1.832 (the spreads apart; its
        // GPU = CPU test passed in the same call). Measured for elasticity: scalar spaces keep the
        // previous shape ([`default_shape_for`]).
        // Round 16 (H200): Gram tiles on m16n8k16 in that pipeline, 1.398 / 1.410 ms against
        // 1.417 / 1.453 for round 15's shape in two processes (the spreads apart; its GPU = CPU
        // test passed in the same call). Elasticity only: a scalar space keeps the previous shape.
        // Round 20 (H200): those tiles with the diagonal tiles' B fragments from the strip's A
        // fragment and unrolled k-steps, 1.386 / 1.423 ms against 1.419 / 1.456 in two processes
        // (−2.3 %; its GPU = CPU test passed in the same call).
        if (33..=50).contains(&nloc) {
            if let Some(&c) = TiledConfig::round20_high(nloc).get(3) {
                return c;
            }
        }
        // Round 22 (H200): at trunk p = 5 Gram tiles in three rounds a cell, 32 points a pass, no
        // diag-b: 4.889 ms (4.879–4.910) against the previous default's 5.405 (5.398–5.421) in one
        // sweep (its GPU = CPU test passed in the same call). Elasticity only (Gram tiles): a
        // scalar space keeps the previous shape ([`default_shape_for`]).
        // Round 24 (H200): those tiles with the tail's indices from row bases (`gram_rows`),
        // 4.763 ms (4.754–4.766) against 4.849 (4.841–4.853) in one sweep (−1.8 %; its GPU = CPU
        // test passed in the same call).
        if (65..=74).contains(&nloc) {
            if let Some(&c) = TiledConfig::round24_high(nloc).first() {
                return c;
            }
        }
        TiledConfig::round21_default(nloc)
    }

    /// Trunk p = 5's default of rounds 22–23 (65–74 functions: round 22's three-round Gram tiles
    /// on 32-point passes; elsewhere [`Self::for_functions`]): the base of rounds 23 and 24's p = 5
    /// rows and, since round 24, the sweep's row after them.
    pub fn round22_default(nloc: usize) -> TiledConfig {
        if (65..=74).contains(&nloc) {
            if let Some(&c) = TiledConfig::round22_high(nloc).get(2) {
                return c;
            }
        }
        // p = 4: the default of rounds 20–24 (round 20's diag-b, unrolled k-steps), whatever later
        // rounds choose (round 22's p = 4 row is built from this: no call back into round22_high).
        TiledConfig::round20_high(nloc).get(3).copied().unwrap_or_else(|| TiledConfig::for_functions(nloc))
    }

    /// The default shape before round 22 beyond p = 4 (at trunk p = 5 the tenth round's moment
    /// tiles, [`Self::round13_default`]): the sweep's second row there.
    pub fn round21_default(nloc: usize) -> TiledConfig {
        match TiledConfig::round14(nloc).first() {
            Some(&pipe) => pipe,
            None => TiledConfig::round13_default(nloc),
        }
    }

    /// The default shape after the thirteenth round ([`Self::for_functions`] before round 14):
    /// what full storage runs, and the baseline of [`Self::round14`]'s pipelined shapes.
    pub fn round13_default(nloc: usize) -> TiledConfig {
        let base = TiledConfig::tenth_round(nloc);
        if nloc <= 8 {
            TiledConfig::pair_lanes_shapes(nloc)[0]
        } else if nloc <= 32 {
            TiledConfig { wide: 3, paired: false, ..base }
        } else {
            base
        }
    }

    /// The shapes of the p = 1 engine on the CUDA cores ([`super::pair_lanes`]) for `nloc`
    /// functions (none beyond 8), the default first (round 12, H200: the fastest, 0.0246 ms;
    /// the others 0.025–0.029): groups of 8 cells (288 threads), 3 blocks per SM on a resident
    /// grid (each block's next group's coordinates loaded under the current one); then a block
    /// per group, 4 blocks per SM, 4 cells (160 threads, 6 per SM), 16 cells (576 threads, 2 per
    /// SM), and streaming stores.
    pub fn pair_lanes_shapes(nloc: usize) -> Vec<TiledConfig> {
        if nloc > 8 {
            return Vec::new();
        }
        let l = TiledConfig { packed: true, lanes: 8, min_blocks: 3, ..TiledConfig::default() };
        vec![
            TiledConfig { resident: true, ..l },
            l,
            TiledConfig { min_blocks: 4, ..l },
            TiledConfig { min_blocks: 4, resident: true, ..l },
            TiledConfig { lanes: 4, min_blocks: 6, ..l },
            TiledConfig { lanes: 4, min_blocks: 6, resident: true, ..l },
            TiledConfig { lanes: 16, min_blocks: 2, ..l },
            TiledConfig { streaming: true, ..l },
        ]
    }

    /// The tenth round's default for `nloc` functions: the baseline the eleventh round's shapes
    /// vary ([`Self::round11`]) and, where it differs from the default (p = 1), the sweep's second
    /// shape.
    pub fn tenth_round(nloc: usize) -> TiledConfig {
        let factors = nloc > 24;
        let paired = (25..=32).contains(&nloc);
        TiledConfig { warps: 16, tensor: factors, alternate: true, streaming: factors, resident: nloc > 32, packed: true, paired, ..TiledConfig::default() }
    }

    /// How this shape stores the matrices.
    pub fn storage(&self) -> Storage {
        if self.packed {
            Storage::Packed
        } else {
            Storage::Full
        }
    }

    /// The shapes the benchmark sweeps (`bench --hex --tiled-sweep`) for `nloc` functions per
    /// cell, the default first: the fourth round's table-staged kernel (8 warps, the reference the
    /// sweep checks every shape against); the fifth round's defaults (16 warps, alternating order;
    /// from the table, or from the factor tables with streaming stores: the sixth round's default
    /// at p ≥ 3) on a resident grid; a deferred half tile per warp, on a resident grid and on a
    /// block per cell (kept as the eighth round's measured evidence that storing under the next
    /// round's multiplies loses; two per warp do not fit the shared memory with 16 warps); two
    /// blocks of 8 warps per SM from the factor tables; 24
    /// points per pass (p = 5: no padded points, two more passes); streaming stores from the
    /// table; two blocks of 8 warps × 2 tiles per SM; and warp-specialised blocks of 16
    /// multiplying warps beside 4 staging warps (k = 4). (The sixth round also measured one round
    /// per cell with 15 warps × 2 tiles, 2 staging warps and k = 8: BENCHMARKS.md.)
    pub fn sweep(nloc: usize) -> Vec<TiledConfig> {
        let t = |warps, tiles_per_warp, tensor, alternate, streaming| TiledConfig { warps, tiles_per_warp, tensor, alternate, streaming, ..TiledConfig::default() };
        let mut v = vec![TiledConfig::for_functions(nloc)];
        // The default of rounds 24–26 right after today's (p = 4, 5; elsewhere the same shape).
        if TiledConfig::round24_default(nloc) != v[0] {
            v.push(TiledConfig::round24_default(nloc));
        }
        // Round 25's first two rows (p = 4, 5: the scales in the tail, and with 16-byte staging
        // loads), then round 26's (the Gram tile indices warp-uniform; p = 4 also the tail's pairs
        // by classes of rows), then round 25's others (p = 4: row bases, the factor ids in
        // registers), then round 24's fn-factors, what round 25's rows are measured against.
        let r25 = TiledConfig::round25_high(nloc);
        let fn_factors = TiledConfig::round24_high(nloc).into_iter().filter(|c| c.fn_tables == 1 && (33..=50).contains(&nloc));
        for c in r25.iter().take(2).copied().chain(TiledConfig::round26_high(nloc)).chain(r25.iter().skip(2).copied()).chain(fn_factors) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 24 (p = 4: per-function factor tables; p = 5: row bases alone), right after the default.
        for c in TiledConfig::round24_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // The previous default (p = 5 before round 24) right after round 24's rows.
        let previous = TiledConfig::round22_default(nloc);
        if !v.contains(&previous) {
            v.push(previous);
        }
        // Round 23 (p = 4, 5: the alternating order by SM sub-partition), right after the default.
        for c in TiledConfig::round23_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // The previous default (p = 5 before round 22) right after the default.
        if TiledConfig::round21_default(nloc) != v[0] && (65..=74).contains(&nloc) {
            v.push(TiledConfig::round21_default(nloc));
        }
        // Round 22 (p = 4: the last pass without its barrier; p = 5: Gram tiles in three rounds a
        // cell), right after the default.
        for c in TiledConfig::round22_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // The previous default (round 16's Gram tiles, p = 4) right after the default.
        if let Some(&c) = TiledConfig::round16_high(nloc).first().filter(|c| **c != v[0]) {
            v.push(c);
        }
        // Round 21 (p = 5): Gram tiles in two rounds a cell, right after the default.
        for c in TiledConfig::round21_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 20 (p = 4): the diagonal tiles' B fragments from the A fragment, right after the default.
        for c in TiledConfig::round20_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 19 (p = 4): more warps on the Gram tiles, unrolled k-steps, right after the default.
        for c in TiledConfig::round19_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 18 (p = 4): the Gram tiles' wider and shared fragment loads right after the default.
        for c in TiledConfig::round18_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 17 (p = 4): the overlapped Gram blocks next.
        for c in TiledConfig::round17_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 16 (p = 4): the Gram tiles right after the default.
        for c in TiledConfig::round16_high(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 15: the paired pipelined shapes right after the default (p = 2, 3).
        for c in TiledConfig::round15(nloc) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        // Round 14: the previous default right after the new one (p = 2, 3), then the pipelined shapes.
        if !v.contains(&TiledConfig::round13_default(nloc)) {
            v.push(TiledConfig::round13_default(nloc));
        }
        // Round 15 (p ≥ 4): the pipelined rounds right after the default.
        let default = v[0];
        v.extend(TiledConfig::round15_high(nloc).into_iter().filter(|c| *c != default));
        let round11 = TiledConfig::round11(nloc);
        // The thirteenth round's shapes first (p ≥ 4: `round13_high`'s); at p = 1 the CUDA-core
        // engine's shapes, then the eleventh round's default beside them; from p = 2 the twelfth
        // round's shapes.
        let lanes = TiledConfig::pair_lanes_shapes(nloc).into_iter().chain(round11.first().copied().filter(|_| nloc <= 8));
        for c in TiledConfig::round14(nloc).into_iter().chain(TiledConfig::round13(nloc)).chain(TiledConfig::round13_high(nloc)).chain(lanes).chain(TiledConfig::round12(nloc)).chain(std::iter::once(TiledConfig::tenth_round(nloc))).chain(round11).chain([
            // (Varied from round 13's default: the pipelined default takes neither paired tiles nor full storage.)
            TiledConfig { paired: !TiledConfig::round13_default(nloc).paired, ..TiledConfig::round13_default(nloc) },
            TiledConfig { resident: true, ..TiledConfig::round13_default(nloc) },
            TiledConfig { packed: false, ..TiledConfig::round13_default(nloc) },
            t(8, 1, false, false, false),
            t(16, 1, false, true, false),
            t(16, 1, true, true, true),
            TiledConfig { resident: true, ..t(16, 1, true, true, true) },
            TiledConfig { defer: 1, resident: true, ..t(16, 1, true, true, true) },
            TiledConfig { defer: 1, ..t(16, 1, true, true, true) },
            t(8, 1, true, true, true),
            TiledConfig { qcp: 24, ..t(16, 1, true, true, true) },
            t(16, 1, false, true, true),
            TiledConfig { min_blocks: 2, ..t(8, 2, true, true, true) },
            TiledConfig { producers: 4, mma_k: 4, ..t(16, 1, true, false, true) },
        ]) {
            if !v.contains(&c) {
                v.push(c);
            }
        }
        v
    }

    /// The eleventh round's shapes for `nloc` functions, each the tenth round's default with a
    /// change (after it in the sweep; `--sweep-shapes` takes them first; at p = 1 the first is
    /// the default now). Up to 32 functions
    /// (trunk p ≤ 3, 1–6 warps a cell): more cells in flight per block — `lo` and `hi` cell groups
    /// (8 and 4 one-warp cells at p = 1, 4 and 2 at p = 2, 3 and 2 at p = 3: up to 16 warps), a
    /// block per group of cells, or a resident grid with each group's next coordinates
    /// prefetched. Beyond (p ≥ 4, several rounds of tiles or one round of many): the tiles
    /// balanced over the warps (each round full: p = 5 30 tiles on 15 warps, paired 28 on 14),
    /// two tiles per warp on 8 warps (two interleaved MMA chains), and the prefetch.
    pub fn round11(nloc: usize) -> Vec<TiledConfig> {
        let d = TiledConfig::tenth_round(nloc);
        let warps = |c: TiledConfig| tile_count(nloc, c.paired).div_ceil(c.tiles_per_warp.max(1)).clamp(1, c.warps.max(1));
        // Warps that split the tiles into their rounds evenly.
        let balanced = |c: TiledConfig| {
            let n = tile_count(nloc, c.paired).div_ceil(c.tiles_per_warp.max(1));
            n.div_ceil(n.div_ceil(c.warps.max(1)))
        };
        let mut v = Vec::new();
        if nloc <= 8 {
            // One warp a cell: narrow tiles free the registers for 24 or 32 cells per SM.
            let n = TiledConfig { narrow: true, ..d };
            v.push(TiledConfig { cells: 8, min_blocks: 4, ..n });
            v.push(TiledConfig { cells: 8, min_blocks: 4, resident: true, prefetch: true, ..n });
            v.push(TiledConfig { cells: 8, min_blocks: 3, resident: true, prefetch: true, ..n });
            v.push(TiledConfig { min_blocks: 32, resident: true, prefetch: true, ..n });
            v.push(TiledConfig { cells: 4, min_blocks: 8, resident: true, prefetch: true, ..n });
            v.push(n);
        }
        if nloc <= 32 {
            let hi = (16 / warps(d)).clamp(2, 8);
            let lo = (hi / 2).max(2);
            for cells in [hi, lo] {
                v.push(TiledConfig { cells, ..d });
                v.push(TiledConfig { cells, resident: true, prefetch: true, ..d });
            }
            v.push(TiledConfig { resident: true, prefetch: true, ..d });
        } else {
            let paired = TiledConfig { paired: !d.paired, ..d };
            for c in [d, paired] {
                if balanced(c) != warps(c) {
                    v.push(TiledConfig { warps: balanced(c), ..c });
                }
            }
            v.push(TiledConfig { warps: 8, tiles_per_warp: 2, ..d });
            v.push(TiledConfig { prefetch: true, ..d });
        }
        let mut out: Vec<TiledConfig> = Vec::new();
        for c in v {
            if c != d && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// The twelfth round's shapes for `nloc` functions (right after the default in the sweep, so
    /// `--sweep-shapes` takes them first; the default itself left out, which at p = 2 is the
    /// first of them), each the tenth round's default with a change: from trunk p = 2 on,
    /// wide writes (`wide`: the round's tiles formed into a packed image in shared memory, then
    /// its row segments stored by double2 stores over consecutive addresses, 1, or sent as one
    /// bulk copy per row, 2; unpaired tiles); at p = 2, 3 (9–32 functions) one and two more
    /// blocks per SM than the default's registers allow (`min_blocks`: 102 or 85 registers at
    /// p = 2 instead of 128), and one more with wide writes; at p = 4 two blocks of 8 warps per
    /// SM with wide writes (p = 5's tiles do not fit the smaller staging buffers).
    pub fn round12(nloc: usize) -> Vec<TiledConfig> {
        let d = TiledConfig::tenth_round(nloc);
        let mut v = Vec::new();
        if nloc > 8 {
            let wide = TiledConfig { paired: false, ..d };
            v.push(TiledConfig { wide: 1, ..wide });
            v.push(TiledConfig { wide: 2, ..wide });
        }
        if (9..=32).contains(&nloc) {
            let warps = tile_count(nloc, d.paired).clamp(1, d.warps.max(1));
            let mb = (16 / warps).clamp(1, 16);
            for min_blocks in [mb + 1, mb + 2] {
                v.push(TiledConfig { min_blocks, ..d });
            }
            let warps = tile_count(nloc, false).clamp(1, d.warps.max(1));
            v.push(TiledConfig { wide: 1, paired: false, min_blocks: (16 / warps).clamp(1, 16) + 1, ..d });
        }
        if (33..=50).contains(&nloc) {
            v.push(TiledConfig { warps: 8, min_blocks: 2, wide: 1, ..d });
        }
        let default = TiledConfig::for_functions(nloc);
        v.retain(|c| *c != d && *c != default);
        v
    }

    /// The thirteenth round's shapes for `nloc` functions (right after the default in the sweep):
    /// at trunk p = 1 the CUDA-core engine's default with its geometry fused (`fuse`: 4, 2 and 1
    /// lanes per point forming J⁻¹ and the gradients, no J⁻¹ table; 4 also at 4 blocks per SM);
    /// at trunk p = 2, 3 (9–32 functions) each tile's moments split over a pair of warps
    /// (`split`): at p = 2 round 12's default (bulk copies per row) with 4, 3 and 2 blocks of 8 warps per
    /// SM (64, 85 and 128 registers); at p = 3 unpaired with wide bulk-copy writes (12 warps, 2
    /// and 1 blocks per SM) and paired as round 12's default (10 warps, 3 and 2 blocks per SM);
    /// and one bulk copy per whole strip (`wide` 3: a strip a round holds wholly is one contiguous
    /// range of packed rows), without and with the split — without it the default at p = 2, 3
    /// since this round (H200), the split measured slower everywhere (BENCHMARKS.md).
    pub fn round13(nloc: usize) -> Vec<TiledConfig> {
        let mut v = Vec::new();
        if let Some(&d) = TiledConfig::pair_lanes_shapes(nloc).first() {
            v.extend([4u8, 2, 1].map(|fuse| TiledConfig { fuse, ..d }));
            v.push(TiledConfig { fuse: 4, min_blocks: 4, ..d });
        }
        if (9..=24).contains(&nloc) {
            // Round 12's default (bulk copies per row).
            let d = TiledConfig { wide: 2, ..TiledConfig::tenth_round(nloc) };
            let s = TiledConfig { split: true, ..d };
            v.extend([s, TiledConfig { min_blocks: 3, ..s }, TiledConfig { min_blocks: 2, ..s }, TiledConfig { wide: 3, ..d }, TiledConfig { wide: 3, ..s }]);
        }
        if (25..=32).contains(&nloc) {
            let d = TiledConfig::tenth_round(nloc);
            let s = TiledConfig { split: true, ..d };
            let wide = TiledConfig { paired: false, wide: 2, ..s };
            v.extend([wide, TiledConfig { min_blocks: 1, ..wide }, s, TiledConfig { min_blocks: 2, ..s }, TiledConfig { wide: 3, split: false, ..wide }, TiledConfig { wide: 3, ..wide }]);
        }
        v
    }

    /// The fourteenth round's shapes for `nloc` functions (right after the default in the sweep, so
    /// `--sweep-shapes` takes them first): at trunk p = 2, 3 (9–32 functions, one round of tiles a
    /// cell) the default with pipelined cells (`pipe`) on a resident grid — at p = 2 with 28 points
    /// in the one pass on m16n8k4 (27 Gauss points: two staging buffers of 28 fit 4 blocks per
    /// SM, two of 32 only 3), with 32 points on m16n8k8 at 3 blocks per SM, and with 28 at 3; at
    /// p = 3 (two passes, the image in a region of its own, 2 blocks per SM) on m16n8k8 and on
    /// m16n8k16 (half the MMA instructions). The first at each degree is the default since this
    /// round ([`Self::for_functions`]).
    pub fn round14(nloc: usize) -> Vec<TiledConfig> {
        let mut v = Vec::new();
        if (9..=32).contains(&nloc) {
            let pipe = TiledConfig { pipe: true, resident: true, ..TiledConfig::round13_default(nloc) };
            if nloc <= 24 {
                let q28 = TiledConfig { mma_k: 4, qcp: 28, ..pipe };
                v.extend([q28, TiledConfig { min_blocks: 3, ..pipe }, TiledConfig { min_blocks: 3, ..q28 }]);
            } else {
                v.extend([pipe, TiledConfig { mma_k: 16, ..pipe }]);
            }
        }
        v
    }

    /// The fifteenth round's shapes at trunk p = 2, 3 (9–32 functions; right after the default in
    /// the sweep): the pipelined default ([`Self::round14`]'s first) with paired tiles — each tile
    /// two needed 8 × 8 node blocks of one column, lower ones transposed, so no MMAs go to the
    /// diagonal tiles' lower halves (p = 3: 5 tiles and warps instead of 6, −17 % of the MMAs;
    /// p = 2: 3 instead of 4, −25 %). At p = 3 at 2 blocks per SM (32 points a pass, two passes:
    /// the staging buffers and the triangle's image take 99 KB), and with 16 points a pass (four
    /// passes) at 3 blocks per SM (15 warps, 136 registers); at p = 2 (28 points on m16n8k4, the
    /// image in the buffer the pass read) at 4 blocks per SM (12 warps, the default's shared
    /// memory), and at 5 (15 warps, 136 registers) with 16 points a pass, whose two passes (32
    /// points for 27) put the image in a region of its own (43 KB a block). Measured slower on
    /// the H200 (round 15, two processes: p = 3 0.390 and 0.416 ms against the default's 0.346,
    /// p = 2 0.168 and 0.212 against 0.132: fewer tiles are fewer warps for the same staging and
    /// writes; the 3- and 5-block shapes spill), so opt-in only.
    pub fn round15(nloc: usize) -> Vec<TiledConfig> {
        let mut v = Vec::new();
        if (9..=32).contains(&nloc) {
            let d = TiledConfig { paired: true, ..TiledConfig::round14(nloc)[0] };
            if nloc <= 24 {
                v.extend([TiledConfig { min_blocks: 4, ..d }, TiledConfig { min_blocks: 5, qcp: 16, ..d }]);
            } else {
                v.extend([TiledConfig { min_blocks: 2, ..d }, TiledConfig { min_blocks: 3, qcp: 16, ..d }]);
            }
        }
        v
    }

    /// The thirteenth round's shapes at high degree (hex13) for `nloc` functions (right after the
    /// default and [`Self::round13`], empty there, in the sweep, before the twelfth round's): from
    /// trunk p = 4 (more than 32 functions: one block per SM), wide writes by bulk copies from an image region of their own (`wide` 4, unpaired tiles), so
    /// the copies read the image under the next round's staging and multiplies instead of holding
    /// back its staging. Up to 50 functions (p = 4: one round a cell) with the next cell's head
    /// prepared under the cell's last passes (`prestage` 2), then without, then prestaged with
    /// m16n8k16 (half the MMA instructions, the same fragment loads); beyond (p = 5: two rounds of
    /// tiles a cell, each round's image in two groups with 32 points per pass) with the second
    /// round's first pass prestaged (`prestage` 1), also with 16 points per pass, whose smaller
    /// staging buffers leave room for each round's whole image (one group a round), the same
    /// prestaged across cells, then without prestaging, then prestaged with m16n8k16.
    pub fn round13_high(nloc: usize) -> Vec<TiledConfig> {
        let d = TiledConfig::tenth_round(nloc);
        let mut v = Vec::new();
        if nloc > 32 {
            let wide = TiledConfig { paired: false, wide: 4, ..d };
            if nloc > 50 {
                let pre = TiledConfig { prestage: 1, ..wide };
                v.extend([pre, TiledConfig { qcp: 16, ..pre }, TiledConfig { qcp: 16, prestage: 2, ..wide }, wide, TiledConfig { mma_k: 16, ..pre }]);
            } else {
                let pre = TiledConfig { prestage: 2, ..wide };
                v.extend([pre, wide, TiledConfig { mma_k: 16, ..pre }]);
            }
        }
        let default = TiledConfig::for_functions(nloc);
        v.retain(|c| *c != default);
        v
    }

    /// The default shape for `nloc` functions with parts of the work left out (`skip` bits: 1
    /// staging, 2 multiplies, 4 writes): the benchmark's split of the time, not element matrices.
    /// At p = 1 the default is the CUDA-core engine (1 geometry, 2 moments, 4 stores).
    /// From round 14 (where the default pipelines cells: p = 2, 3) also the previous default,
    /// [`Self::round13_default`], split the same way (round 13 split its first shape, the split
    /// moments, which lost: not repeated); from round 15 also [`Self::round15`]'s shapes (paired
    /// tiles in the pipeline) that are not the default; at p = 4 [`Self::round20_high`]'s shapes.
    pub fn diagnostics(nloc: usize) -> Vec<TiledConfig> {
        let split = |c: TiledConfig| [1u8, 2, 4, 6].map(|skip| TiledConfig { skip, ..c });
        let mut v: Vec<TiledConfig> = split(TiledConfig::for_functions(nloc)).to_vec();
        // Round 25 (p = 4): the scales in the tail with 16-byte staging loads (its second row),
        // split the same way. Beyond 32 functions (p = 4, 5) the older rounds' shapes, measured, are no longer
        // split (a sweep's device time; round 24 split the (y, z) planes).
        if nloc > 32 {
            for c in TiledConfig::round25_high(nloc).into_iter().filter(|c| c.fn_regs == 1 && c.stage_wide && !c.gram_rows).take(1) {
                v.extend(split(c));
            }
            return v;
        }
        if TiledConfig::round13_default(nloc) != TiledConfig::for_functions(nloc) {
            v.extend(split(TiledConfig::round13_default(nloc)));
        }
        // Round 15: the paired pipelined shapes, those not the default.
        for c in TiledConfig::round15(nloc).into_iter().filter(|c| *c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        // Round 20 (p = 4): the diagonal tiles' B fragments from the A fragment, alone and on
        // table-staged passes, split the same way. (Round 17's overlapped blocks, round 18's
        // fragment loads and round 19's warps, measured, are no longer split.)
        for c in TiledConfig::round20_high(nloc).into_iter().take(2).filter(|c| *c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        // Round 23: the first shape at p = 4 and p = 5 (the alternating order by SM sub-partition), split the same way.
        for c in TiledConfig::round23_high(nloc).into_iter().take(1).filter(|c| *c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        // Round 22: the first shape at p = 4 (early copy wait) and at p = 5 (three rounds), split the same way.
        for c in TiledConfig::round22_high(nloc).into_iter().take(1).filter(|c| *c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        // Round 21 (p = 5): the first two-round Gram shape, split the same way.
        for c in TiledConfig::round21_high(nloc).into_iter().take(1).filter(|c| *c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        // Round 16 (p = 4): the first Gram-tile shape, split the same way.
        if let Some(&c) = TiledConfig::round16_high(nloc).first().filter(|c| **c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        // Round 15 (p ≥ 4): the first pipelined-rounds shape, split the same way.
        if let Some(&c) = TiledConfig::round15_high(nloc).first().filter(|c| **c != TiledConfig::for_functions(nloc)) {
            v.extend(split(c));
        }
        v
    }

    pub fn label(&self) -> String {
        let mut s = if self.lanes > 0 {
            let mut s = format!("pair lanes {}c", self.lanes);
            for (on, tag) in [(self.resident, " res"), (self.packed, " packed"), (self.streaming, " cs")] {
                if on {
                    s += tag;
                }
            }
            if self.fuse > 0 {
                s += &format!(" fuse{}", self.fuse);
            }
            s
        } else {
            self.tile_label()
        };
        if self.min_blocks > 0 {
            s += &format!(" mb{}", self.min_blocks);
        }
        for (bit, what) in [(1, "staging"), (2, "mma"), (4, "writes")] {
            if self.skip & bit != 0 {
                s += &format!(" -{what}");
            }
        }
        s
    }

    /// The tiled kernel's part of [`Self::label`].
    fn tile_label(&self) -> String {
        let mut s = format!(
            "{}w×{}t m16n8k{}{} {}{}{}",
            self.warps,
            self.tiles_per_warp,
            self.mma_k,
            if self.native { "" } else { " (as m8n8k4)" },
            if self.tensor { "factors" } else { "table" },
            if self.alternate { " alt" } else { "" },
            if self.streaming { " cs" } else { "" }
        );
        if self.producers > 0 {
            s += &format!(" +{}p", self.producers);
        }
        if self.defer > 0 {
            s += &format!(" defer{}", self.defer);
        }
        let cells = format!(" {}c", self.cells);
        for (on, tag) in [(self.resident, " res"), (self.packed, " packed"), (self.paired, " paired"), (self.cells > 1, cells.as_str()), (self.prefetch, " pf"), (self.narrow, " narrow")] {
            if on {
                s += tag;
            }
        }
        if self.qcp > 0 {
            s += &format!(" q{}", self.qcp);
        }
        if self.wide > 0 {
            s += &format!(" wide{}", self.wide);
        }
        if self.split {
            s += " split";
        }
        if self.prestage > 0 {
            s += &format!(" pre{}", self.prestage);
        }
        if self.pipe {
            s += " pipe";
        }
        if self.pipe_rounds > 0 {
            s += if self.pipe_rounds == 1 { " rounds jq-last-pass" } else { " rounds jq-late" };
        }
        if self.gram {
            s += " gram";
        }
        if self.gram_overlap > 0 {
            s += &format!(" overlap{}", self.gram_overlap);
        }
        if self.gram_spread {
            s += " spread";
        }
        if self.gram_wide {
            s += " wide-frag";
        }
        if self.gram_pairs {
            s += " strip-pairs";
        }
        if self.gram_unroll {
            s += " k-unrolled";
        }
        if self.gram_diag {
            s += " diag-b";
        }
        if self.gram_early_wait {
            s += " early-wait";
        }
        if self.gram_rounds > 0 {
            s += &format!(" {}-round", self.gram_rounds);
        }
        if self.alt_sub {
            s += " alt-sub";
        }
        if self.gram_rows {
            s += " row-bases";
        }
        if self.fn_tables > 0 {
            s += if self.fn_tables == 1 { " fn-factors" } else { " fn-planes" };
        }
        if self.fn_regs > 0 {
            s += if self.fn_regs == 1 { " tail-scales" } else { " fn-regs" };
        }
        if self.stage_wide {
            s += " wide-stage";
        }
        if self.uniform_tiles {
            s += " uniform-tiles";
        }
        if self.pair_classes {
            s += " pair-classes";
        }
        s
    }
}

/// The launch of the tiled scheme for variant `v` and shape `cfg`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TiledLaunch {
    pub threads: usize,
    pub qcp: usize,
    pub min_blocks: usize,
    pub smem: usize,
    /// Doubles of the wide writes' own image region (`wide` 3; 0 otherwise), within `smem`.
    pub image: usize,
}

/// Tiles of 16 × 8 node pairs for `nloc` functions (`tile_count` of `element_schemes.cu`): with
/// `paired` two needed 8 × 8 blocks per tile, ⌈b(b + 1)/4⌉ for b blocks of 8 functions (the
/// kernel's column walk leaves at most the last column's half tile idle); else those on or above
/// the diagonal.
pub(super) fn tile_count(nloc: usize, paired: bool) -> usize {
    let (n16, nb8) = (nloc.div_ceil(16), nloc.div_ceil(8));
    if paired {
        (nb8 * (nb8 + 1) / 2).div_ceil(2)
    } else {
        (0..n16).map(|a| nb8.saturating_sub(2 * a)).sum()
    }
}

/// Doubles of shared memory the factor tables of (`n1` points, `nf` factors) per axis take in a
/// block (`element_schemes.cu`'s TT_DOUBLES), laid out as FN_TABLES `fn_tables` asks: 0 by factor,
/// 1 three 1D factors a function, 2 x's factor and the (y, z) planes a function.
fn tensor_doubles(v: &Variant, dims: Option<(usize, usize)>, fn_tables: u8) -> usize {
    match dims {
        Some((n1, nf)) => {
            let npad = 16 * v.nloc.div_ceil(16);
            let reals = match fn_tables {
                0 => 6 * nf * n1,
                1 => 6 * v.nloc * n1,
                _ => 2 * v.nloc * n1 + 3 * v.nloc * n1 * n1,
            };
            (reals + npad + (v.nq + npad).div_ceil(2) + 1) & !1
        }
        None => 0,
    }
}

/// The kernel's FN_TABLES for `cfg` on `v` staging from factor tables (`tensor`, with tables:
/// `dims`): `cfg.fn_tables` (at most 2), or the largest layout below it whose block still fits
/// shared memory (the planes take TN1² doubles a function and plane), else 0.
#[cfg(test)]
pub(crate) fn fn_tables(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> u8 {
    tiled_shape_and_tables(v, cfg, dims).1
}

/// [`tiled_shape`] and the kernel's FN_TABLES (`fn_tables` in tests) together: the layouts from the one asked down, each launch
/// computed once, the first whose block fits (the asked one, for every sweep shape that fits).
fn tiled_shape_and_tables(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> (TiledLaunch, u8) {
    let asked = if cfg.tensor && dims.is_some() { cfg.fn_tables.min(2) } else { 0 };
    for f in (1..=asked).rev() {
        let l = tiled_shape_with(v, cfg, dims, f);
        if l.smem <= MAX_SHARED_BYTES {
            return (l, f);
        }
    }
    (tiled_shape_with(v, cfg, dims, 0), 0)
}

/// The kernel's STAGE_WIDE for `cfg` (tables `dims`): asked, staging from factor tables laid out by
/// factor (`tensor`, with tables, no `fn_tables`).
pub(crate) fn stage_wide(cfg: TiledConfig, dims: Option<(usize, usize)>) -> bool {
    cfg.stage_wide && cfg.tensor && dims.is_some() && cfg.fn_tables == 0
}

/// The kernel's FN_REGS for `cfg` launched on `v` as `l` (tables `dims`): `cfg.fn_regs` (at most 2)
/// where the staging reads the factor tables by factor (`tensor`, with tables, no `fn_tables`) for
/// Gram tiles ([`super::pipe_rounds::gram`]) whose blocks form in the cell's tail (no
/// `gram_overlap`: the scales join the signs' products there); 2 (the factor ids in registers)
/// needs one round of tiles a cell (a thread stages the same functions every pass), at most 8
/// functions a staging thread (an unrolled loop) and 16 factors an axis (4-bit ids), else 1.
pub(crate) fn fn_regs(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>, l: &TiledLaunch) -> u8 {
    let Some((_, nf)) = dims.filter(|_| cfg.tensor) else { return 0 };
    let ok = super::pipe_rounds::gram(v, cfg) && cfg.fn_tables == 0 && cfg.producers == 0 && super::pipe_rounds::gram_overlap(v, cfg, l) == 0;
    let npads = (16 * (v.dim * v.nloc).div_ceil(16)).div_ceil(v.dim);
    let spp = (l.threads / l.qcp.max(1)).max(1);
    let regs = super::pipe_rounds::gram_split(v, cfg) == 0 && npads.div_ceil(spp) <= 8 && nf <= 16;
    match cfg.fn_regs.min(2) {
        0 => 0,
        _ if !ok => 0,
        2 if regs => 2,
        _ => 1,
    }
}

/// Launch shape of the tiled scheme for `v`: warps (at most `cfg.warps`, no more than the tiles
/// need), blocks per SM the registers are held to (16 warps' worth unless `cfg.min_blocks`), and
/// points per pass (unless `cfg.qcp`): of the multiples of the MMA's k that fit, with the
/// per-point J⁻¹ and the factor tables (`dims`, where the shape stages from them), in the shared
/// memory those blocks share, as many as fit (k to 32). Mirrors
/// `element_schemes.cu`.
pub(crate) fn tiled_shape(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> TiledLaunch {
    tiled_shape_and_tables(v, cfg, dims).0
}

/// [`tiled_shape`] with the factor tables laid out as FN_TABLES `fn_tables` ([`tensor_doubles`]).
fn tiled_shape_with(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>, fn_tables: u8) -> TiledLaunch {
    let tpw = cfg.tiles_per_warp.max(1);
    // A split shape puts a pair of warps on each tile (`warps` caps the tiles of a round).
    let pair = if cfg.split { 2 } else { 1 };
    // Gram tiles (round 19): up to one warp per tile of G, not of the moments.
    let gram = super::pipe_rounds::gram(v, cfg);
    let tiles = if gram { super::pipe_rounds::gram_tile_count(v) } else { tile_count(v.nloc, cfg.paired) };
    let warps = pair * tiles.div_ceil(tpw).clamp(1, cfg.warps.max(1));
    let cells = cfg.cells.max(1);
    let min_blocks = if cfg.min_blocks > 0 { cfg.min_blocks.min(32) } else { (16 * pair / (warps * tpw * cells)).clamp(1, 16) };
    let rs = 16 * v.nloc.div_ceil(16) + 4;
    // Per cell group: J⁻¹ per point and (prefetch) two cells' coordinates and vertex indices
    // (`element_schemes.cu`'s XSD, NV even); per block: the tables.
    // Prestaging across cells (`prestage` 2): a second J⁻¹ table and the next cell's coordinates.
    let jq_tables = if cfg.prestage >= 2 && wide_writes(cfg) == 4 { 2 } else { 1 };
    let rounds = super::pipe_rounds::pipe_rounds(v, cfg);
    let piped = pipe_asked(v, cfg) || rounds > 0;
    let jq = jq_tables * (v.nq * v.dim * v.dim).div_ceil(2) * 2 * 8
        + if cfg.prefetch { (2 * v.nv * v.dim + v.nv) * 8 } else { 0 }
        + if jq_tables == 2 || piped { (v.nv * v.dim).div_ceil(2) * 2 * 8 } else { 0 };
    let tables = 8 * (tensor_doubles(v, dims, fn_tables) + super::pipe_rounds::pair_class_doubles(v, cfg, dims));
    // Gram tiles stage a point's DIM·NLOC gradient entries as one row (16-row strips, + 4).
    let per_q = if gram { 2 * (16 * (v.nloc * v.dim).div_ceil(16) + 4) * 8 } else { 2 * v.dim * rs * 8 };
    let k = cfg.mma_k;
    // After a round's passes each warp's half-tile scratch (WR × WS, row stride WR + 1): in the
    // staging buffers, or beside them where producer warps stage on; deferred half tiles take
    // `defer` more of the warp's own.
    let wr = 8 * v.ncomp;
    // Gram tiles write through their image, never a warp's scratch (`element_schemes.cu`'s HREGION_W).
    let scratch = if gram { 0 } else { warps * wr * (wr + 1) * 8 };
    let own_scratch = if cfg.producers > 0 { scratch } else { usize::from(cfg.defer) * scratch };
    let budget = ((228 * 1024 / min_blocks).saturating_sub(1024 + tables) / cells).saturating_sub(jq + own_scratch);
    let stagers = 32 * if cfg.producers > 0 { cfg.producers } else { warps };
    // Unless given: the largest multiple of k that fits, up to 32 (fewer passes, fewer barriers,
    // beat padding less: p = 5's 216 points in 7 passes of 32 took 5.59 ms, in 9 of 24 5.79).
    // All points in one pass (one staging buffer) where that fits.
    let one_pass = v.nq.div_ceil(k) * k;
    let auto = if cfg.producers == 0 && one_pass <= 32.max(k) && one_pass * per_q / 2 <= budget { one_pass } else { (budget / per_q / k * k).clamp(k, 32.max(k)) };
    let qcp = if cfg.qcp > 0 { cfg.qcp } else { auto }.min(v.nq.div_ceil(k) * k).min((stagers / k * k).max(k));
    // Where the points take one pass, the body without producers stages into one buffer.
    // Pipelined cells (`pipe`) always take two: a cell's and the next's. Transposed Gram passes
    // (`element_schemes.cu`'s GROWS rows of GPS points) take two of their own size.
    let wide_rows = super::pipe_rounds::gram_wide_rows(v, cfg, qcp, stagers);
    let staged = if let Some((rows, gps)) = wide_rows {
        2 * rows * gps * 8
    } else if v.nq.div_ceil(qcp) > 1 || piped {
        qcp * per_q
    } else {
        qcp * per_q / 2
    };
    // A split pair swaps half its tile's moments there (`element_schemes.cu`'s XCHG doubles a tile).
    let swap = if cfg.split { warps / 2 * 640 * 8 } else { 0 };
    let smem = tables + if cfg.producers > 0 { jq + qcp * per_q + scratch } else { cells * (jq + staged.max(scratch).max(swap) + own_scratch) };
    // Wide writes from an image region of their own (one cell group): what shared memory has left
    // (an even number of doubles), at most a whole packed triangle and its 16-byte phase.
    let nd = v.nloc * v.ncomp;
    let triangle = (nd * (nd + 1) / 2 + 2) & !1;
    let image = if gram {
        // Gram tiles: the whole triangle, G's and then the matrix's (two rounds: the longer's rows).
        super::pipe_rounds::gram_image_doubles(v, super::pipe_rounds::gram_split(v, cfg), super::pipe_rounds::gram_split2(v, cfg))
    } else if rounds > 0 {
        // Pipelined rounds (round 15): each round's image in a region of its own.
        super::pipe_rounds::pipe_image_doubles(v.nloc, v.ncomp, warps)
    } else if wide_writes(cfg) == 4 && cells == 1 {
        ((MAX_SHARED_BYTES.saturating_sub(smem) / 8) & !1).min(triangle)
    } else if piped && (v.nq.div_ceil(qcp) > 1 || triangle > v.dim * qcp * rs) {
        // Pipelined cells: the image in the buffer the last pass read only where it is the one
        // pass and the triangle fits it; else the whole triangle in a region of its own.
        triangle
    } else {
        0
    };
    TiledLaunch { threads: 32 * (warps * cells + cfg.producers), qcp, min_blocks, smem: smem + 8 * image, image }
}

/// The kernel's PRESTAGE for `cfg` launched as `l`: prestaging needs the image region (the staging
/// buffers are free at a round's end) and two passes of points, across cells three (coordinates,
/// J⁻¹, points) and one cell group, else it falls back to the cell's rounds.
fn prestage(v: &Variant, cfg: TiledConfig, l: &TiledLaunch) -> u8 {
    let passes = v.nq.div_ceil(l.qcp.max(1));
    if cfg.prestage == 0 || wide_writes(cfg) != 4 || l.image == 0 || passes < 2 {
        0
    } else if cfg.prestage >= 2 && passes >= 3 && cfg.cells <= 1 && !cfg.prefetch && v.nv * v.dim <= 32 {
        2
    } else {
        1
    }
}

/// Whether `cfg` asks for pipelined cells where the kernel can pipeline them (PIPE): packed
/// tiles with whole-strip copies (`wide` 3; since round 15 also paired tiles, whose image is the
/// whole triangle too), one tile per warp and a round of tiles a cell, one cell group, every warp
/// staging, nothing deferred, split or prestaged; a shape made full from one with `pipe` (the
/// benchmark's full-storage row) runs as before.
fn pipe_asked(v: &Variant, cfg: TiledConfig) -> bool {
    let tpw = cfg.tiles_per_warp.max(1);
    cfg.pipe
        && wide_writes(TiledConfig { paired: false, ..cfg }) == 3
        && cfg.cells <= 1
        && tpw == 1
        && cfg.producers == 0
        && cfg.defer == 0
        && !cfg.split
        && !cfg.prefetch
        && cfg.prestage == 0
        && tile_count(v.nloc, cfg.paired) <= cfg.warps.max(1)
        && v.nv * v.dim <= 32
}

/// The kernel's ALT_ORDER for `cfg` launched on `v` as `l`: 0 without `alternate`; 2 with
/// `alt_sub` where cells are pipelined (PIPE) on a multiple of 8 warps, so each SM
/// sub-partition's four warps split two and two; else 1 (odd warps multiply first).
pub(crate) fn alt_order(v: &Variant, cfg: TiledConfig, l: &TiledLaunch) -> u8 {
    let warps = (l.threads / 32).saturating_sub(cfg.producers) / cfg.cells.max(1);
    let piped = pipe_asked(v, cfg) || super::pipe_rounds::pipe_rounds(v, cfg) > 0;
    match (cfg.alternate, cfg.alt_sub && piped && warps % 8 == 0) {
        (false, _) => 0,
        (true, true) => 2,
        (true, false) => 1,
    }
}

/// The kernel's WIDE_WRITES for `cfg` launched on `v`: 3 where cells are pipelined ([`pipe_asked`],
/// paired tiles too), else [`wide_writes`].
fn wide_define(v: &Variant, cfg: TiledConfig) -> u8 {
    if pipe_asked(v, cfg) {
        3
    } else {
        wide_writes(cfg)
    }
}

/// The kernel's WIDE_WRITES for `cfg` outside pipelined cells: wide writes form packed unpaired
/// tiles only, so a shape made full or paired from one with them (the full-storage row of the
/// benchmark, a tuning without `packed`) stores as before; `wide` 4 needs one cell group (its
/// image region is the block's).
fn wide_writes(cfg: TiledConfig) -> u8 {
    if cfg.packed && !cfg.paired && !(cfg.wide >= 4 && cfg.cells > 1) {
        cfg.wide.min(4)
    } else {
        0
    }
}

/// The defines of the schemes' variant of assembly variant `v` with tiled shape `cfg` (staging
/// from factor tables of `dims` where `cfg.tensor`).
pub(crate) fn scheme_defines_with(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> Vec<String> {
    let dims = dims.filter(|_| cfg.tensor);
    let (l, tables) = tiled_shape_and_tables(v, cfg, dims);
    let (n1, nf) = dims.unwrap_or((1, 1));
    vec![
        format!("TENSOR={}", usize::from(dims.is_some())),
        format!("TN1={n1}"),
        format!("TNF={nf}"),
        format!("FN_TABLES={tables}"),
        format!("FN_REGS={}", fn_regs(v, cfg, dims, &l)),
        format!("STAGE_WIDE={}", usize::from(stage_wide(cfg, dims))),
        format!("UNIFORM_TILES={}", usize::from(super::pipe_rounds::uniform_tiles(v, cfg))),
        format!("PAIR_CLASSES={}", usize::from(super::pipe_rounds::pair_classes(v, cfg, dims))),
        format!("ALT_ORDER={}", alt_order(v, cfg, &l)),
        format!("STREAM_STORES={}", usize::from(cfg.streaming)),
        format!("SKIP_PARTS={}", cfg.skip & 7),
        format!("TILED_WARPS={}", (l.threads / 32 - cfg.producers) / cfg.cells.max(1)),
        format!("CELLS={}", cfg.cells.max(1)),
        format!("PREFETCH={}", usize::from(cfg.prefetch)),
        format!("NARROW={}", usize::from(cfg.narrow)),
        format!("WIDE_WRITES={}", wide_define(v, cfg)),
        format!("IMAGE_DOUBLES={}", l.image),
        format!("PRESTAGE={}", prestage(v, cfg, &l)),
        format!("PRODUCERS={}", cfg.producers),
        format!("SPLIT_MOMENTS={}", usize::from(cfg.split)),
        format!("PIPE={}", usize::from(pipe_asked(v, cfg) || super::pipe_rounds::pipe_rounds(v, cfg) > 0)),
        format!("PIPE_ROUNDS={}", super::pipe_rounds::pipe_rounds(v, cfg)),
        format!("GRAM={}", usize::from(super::pipe_rounds::gram(v, cfg))),
        format!("GRAM_OVERLAP={}", super::pipe_rounds::gram_overlap(v, cfg, &l)),
        format!("GRAM_SPREAD={}", usize::from(super::pipe_rounds::gram_spread(v, cfg, &l))),
        format!("GRAM_WIDE={}", usize::from(super::pipe_rounds::gram_wide(v, cfg, &l))),
        format!("GRAM_PAIRS={}", usize::from(super::pipe_rounds::gram(v, cfg) && cfg.gram_pairs)),
        format!("GRAM_UNROLL={}", usize::from(super::pipe_rounds::gram(v, cfg) && cfg.gram_unroll)),
        format!("GRAM_DIAG={}", usize::from(super::pipe_rounds::gram(v, cfg) && cfg.gram_diag && !cfg.gram_pairs)),
        format!("GRAM_SPLIT={}", if super::pipe_rounds::gram(v, cfg) { super::pipe_rounds::gram_split(v, cfg) } else { 0 }),
        format!("GRAM_SPLIT2={}", if super::pipe_rounds::gram(v, cfg) { super::pipe_rounds::gram_split2(v, cfg) } else { 0 }),
        format!("GRAM_ROWS={}", usize::from(super::pipe_rounds::gram(v, cfg) && cfg.gram_rows)),
        format!("GRAM_EARLY_WAIT={}", usize::from(super::pipe_rounds::gram_early_wait(v, cfg, &l))),
        format!("DEFER_WRITES={}", cfg.defer.min(2)),
        format!("PACKED={}", usize::from(cfg.packed)),
        format!("PAIRED={}", usize::from(cfg.paired)),
        format!("TPW={}", cfg.tiles_per_warp.max(1)),
        format!("MMA_K={}", cfg.mma_k),
        format!("MMA_NATIVE={}", usize::from(cfg.native)),
        format!("MIN_BLOCKS={}", l.min_blocks),
        format!("QCP={}", l.qcp),
        format!("DIM={}", v.dim),
        format!("NV={}", v.nv),
        format!("NLOC={}", v.nloc),
        format!("NQ={}", v.nq),
        format!("NCOMP={}", v.ncomp),
        format!("QF={}", v.qf),
    ]
}

/// The default tiled shape for `v` where the factor tables have `dims`: [`TiledConfig::for_functions`],
/// staging from the table where the basis does not split; packed only where the tuning says
/// `packed = true` (what is summed into CSR: the packed summation was slower, ninth round; the
/// `element` level asks for packed triangles itself, [`DeviceAssembler::element_storage`]).
fn default_shape(v: &Variant, dims: Option<(usize, usize)>) -> TiledConfig {
    default_shape_for(v, dims, v.tuning.packed == Some(true))
}

/// The default tiled shape for `v` in packed or full storage: [`TiledConfig::for_functions`]
/// where packed, else [`TiledConfig::round13_default`] (the same but at p = 2, 3, where the
/// packed default pipelines cells, which full storage cannot), unpacked. `for_functions` knows
/// the functions only: beyond 32 (p = 4, 5) its pipelined rounds and Gram tiles were measured for
/// trunk elasticity (NCOMP = DIM = 3; of the hexahedral spaces only trunk p = 4 has 33–50
/// functions and trunk p = 5 65–74, the lib test `defaults_by_space` pins them), so another
/// number of components takes `round13_default`, and so does a Gram shape the kernel would not run
/// as Gram tiles for `v` or whose block outgrows shared memory (p = 5 with a rule of 512 points:
/// its J⁻¹ table), rather than be refused.
fn default_shape_for(v: &Variant, dims: Option<(usize, usize)>, packed: bool) -> TiledConfig {
    let pipelined_rounds = TiledConfig::for_functions(v.nloc).pipe_rounds > 0;
    let fit = |mut c: TiledConfig| {
        c.tensor &= dims.is_some();
        c.packed &= packed;
        c
    };
    let c = fit(if packed && !(pipelined_rounds && v.ncomp != 3) { TiledConfig::for_functions(v.nloc) } else { TiledConfig::round13_default(v.nloc) });
    if c.gram && (!super::pipe_rounds::gram(v, c) || tiled_shape(v, c, dims.filter(|_| c.tensor)).smem > MAX_SHARED_BYTES) {
        return fit(TiledConfig::round13_default(v.nloc));
    }
    c
}

/// The defines of the schemes' variant of assembly variant `v` (the default tiled shape).
pub(crate) fn scheme_defines(v: &Variant, dims: Option<(usize, usize)>) -> Vec<String> {
    scheme_defines_with(v, default_shape(v, dims), dims)
}

/// The tiled kernel of shape `cfg` from `module`, allowed its dynamic shared memory.
fn tiled_kernel(module: &std::sync::Arc<cudarc::driver::CudaModule>, v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> Result<Kernel> {
    let tiled = Kernel::from_module(module, "matrices_tiled")?;
    let smem = tiled_shape(v, cfg, dims.filter(|_| cfg.tensor)).smem;
    if smem > 48 * 1024 && smem <= MAX_SHARED_BYTES {
        tiled.allow_dynamic_shared(smem)?;
    }
    Ok(tiled)
}

fn load(be: &CudaBackend, asm: &DeviceAssembler) -> Result<SchemeKernels> {
    let dims = asm.tensor_dims;
    let module = be.variant_module(&ELEMENT_SCHEMES, &scheme_defines(&asm.variant, dims))?;
    let k = |name| Kernel::from_module(&module, name);
    Ok(SchemeKernels {
        per_cell: k("matrices_per_cell")?,
        per_point: k("matrices_per_point")?,
        tiled: tiled_kernel(&module, &asm.variant, default_shape(&asm.variant, dims), dims)?,
        scatter: k("scatter_matrices")?,
        fma: k("fma_peak")?,
        empty: k("launch_probe")?,
        dmma: [k("dmma_peak")?, k("dmma16_peak_k4")?, k("dmma16_peak_k8")?, k("dmma16_peak_k16")?],
    })
}

impl DeviceAssembler {
    /// The tiled shape scheme III runs by default here.
    pub fn tiled_default(&self) -> TiledConfig {
        default_shape(&self.variant, self.tensor_dims)
    }

    /// The default tiled shape in `storage` (the `element` level's packed triangles, the
    /// benchmark's full-storage row), whatever the tuning's.
    pub fn tiled_default_for(&self, storage: Storage) -> TiledConfig {
        default_shape_for(&self.variant, self.tensor_dims, storage == Storage::Packed)
    }

    fn scheme_kernels(&self, be: &CudaBackend) -> Result<SchemeKernels> {
        if let Some(k) = self.schemes.get() {
            return Ok(k.clone());
        }
        let k = load(be, self)?;
        Ok(self.schemes.get_or_init(|| k).clone())
    }

    /// Why `scheme` cannot integrate this physics, if it cannot.
    pub fn scheme_unsupported(&self, scheme: Integration) -> Option<String> {
        let s = self.support;
        if scheme == Integration::Default {
            return None;
        }
        if self.variant.dim != 3 || self.variant.nv != 8 {
            return Some(format!("the {} integration is for hexahedra: use default", scheme.name()));
        }
        if !s.symmetric {
            return Some(format!("the {} integration writes symmetric element matrices: this physics is not symmetric", scheme.name()));
        }
        match scheme {
            Integration::ThreadPerPoint if self.variant.nq > MAX_POINTS_PER_BLOCK => Some(format!(
                "thread-per-point integration takes at most {MAX_POINTS_PER_BLOCK} quadrature points per cell, this rule has {}",
                self.variant.nq
            )),
            Integration::Tiled if s.value_term || !s.per_cell => {
                Some("tiled integration needs gradient-only physics (no mass term) with coefficients constant per cell".into())
            }
            Integration::Tiled if tiled_shape(&self.variant, self.tiled_default(), self.tensor_dims.filter(|_| self.tiled_default().tensor)).smem > MAX_SHARED_BYTES => Some(format!(
                "tiled integration of {} points per cell needs more shared memory than a block has: use thread-per-cell",
                self.variant.nq
            )),
            _ => None,
        }
    }

    /// How [`Self::scheme_matrices_into`] stores `scheme`'s element matrices here (what the full
    /// level sums): packed upper triangles for scheme III where the tuning says `packed = true`,
    /// full otherwise (the packed summation, a pair per thread with its mirrored adds, was slower
    /// than the full one: p = 5 13.2 against 8.2 ms, ninth round).
    pub fn storage(&self, scheme: Integration) -> Storage {
        if scheme == Integration::Tiled {
            self.tiled_default().storage()
        } else {
            Storage::Full
        }
    }

    /// How the `element` level keeps `scheme`'s matrices: scheme III's packed (half the bytes
    /// written, kept and read per apply) unless the tuning says `packed = false`.
    pub fn element_storage(&self, scheme: Integration) -> Storage {
        if scheme == Integration::Tiled && self.variant.tuning.packed != Some(false) {
            Storage::Packed
        } else {
            self.storage(scheme)
        }
    }

    /// Every cell's element matrices by `scheme` in layout `storage` (scheme III writes either;
    /// the others full).
    pub(crate) fn matrices_in(&self, be: &CudaBackend, scheme: Integration, storage: Storage, out: &mut CudaSlice<f64>) -> Result<()> {
        if storage == self.storage(scheme) {
            return self.scheme_matrices_into(be, scheme, out);
        }
        if scheme != Integration::Tiled {
            return Err(Error::Unsupported(format!("the {} integration stores full element matrices only", scheme.name())));
        }
        self.tiled_matrices_with(be, self.tiled_default_for(storage), self.ncells, out)
    }

    /// Element matrices of every cell (global orientation) by `scheme`, into `out` in the layout
    /// [`Self::storage`] names (`ncells ·` its doubles per cell). Robin terms are not included.
    pub fn scheme_matrices_into(&self, be: &CudaBackend, scheme: Integration, out: &mut CudaSlice<f64>) -> Result<()> {
        self.first_matrices_into(be, scheme, self.ncells, out)
    }

    /// [`Self::scheme_matrices_into`] for cells `0..ncells` only (the GPU's share of a hybrid run).
    pub fn first_matrices_into(&self, be: &CudaBackend, scheme: Integration, ncells: usize, out: &mut CudaSlice<f64>) -> Result<()> {
        if let Some(why) = self.scheme_unsupported(scheme) {
            return Err(Error::Unsupported(why));
        }
        let per_cell = self.storage(scheme).doubles(self.variant.elem_size());
        if ncells > self.ncells || out.len() < ncells * per_cell {
            return Err(Error::dim("element matrices buffer", ncells * per_cell, out.len()));
        }
        let nc = ncells as u64;
        if nc == 0 {
            return Ok(());
        }
        let blocks = |n: u64| n.min(1 << 20) as u32;
        match scheme {
            Integration::Default => {
                // assembly.cu's store mode, which every element has (the scheme module is only
                // for 3D cells). Row pointers and positions are unused there, but it takes them.
                let (rows, pos) = (be.upload(&[0u32])?, be.upload(&[0u16])?);
                self.launch_assemble(be, nc, None, 2, &rows, &pos, out)
            }
            Integration::ThreadPerCell => {
                let k = self.scheme_kernels(be)?;
                launch!(be, &k.per_cell, be.grid(nc); &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs,
                    &self.tab, &self.coef, &self.meta, out)
            }
            Integration::ThreadPerPoint => {
                let threads = (self.variant.nq.div_ceil(32) * 32) as u32;
                let cfg = LaunchConfig { grid_dim: (blocks(nc), 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
                let k = self.scheme_kernels(be)?;
                launch!(be, &k.per_point, cfg; &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs,
                    &self.tab, &self.coef, &self.meta, out)
            }
            Integration::Tiled => {
                let k = self.scheme_kernels(be)?;
                self.launch_tiled(be, &k.tiled, self.tiled_default(), nc, out, None)
            }
        }
    }

    /// The device's double-precision FMA throughput in GFLOP/s (2 flops per FMA), measured by
    /// independent FMA chains: the arithmetic ceiling the benchmarks hold the schemes to.
    pub fn fma_gflops(&self, be: &CudaBackend) -> Result<f64> {
        let k = self.scheme_kernels(be)?;
        let cfg = be.grid(1 << 40);
        let threads = u64::from(cfg.grid_dim.0) * u64::from(cfg.block_dim.0);
        let iters = 4096i32;
        let mut sink = be.alloc::<f64>(1)?;
        let seed = 1.0f64;
        let t = crate::backend::cuda::bench::median_seconds(be, 5, || launch!(be, &k.fma, cfg; &iters, &seed, &mut sink))?;
        Ok(2.0 * 8.0 * f64::from(iters) * threads as f64 / t * 1e-9)
    }

    /// The FP64 tensor cores' throughput in GFLOP/s per MMA shape, measured by 8 independent
    /// chains per warp: ("m8n8k4", rate), then Hopper's m16n8k4, m16n8k8 and m16n8k16 where the
    /// device has them (compute capability 9.0 and later). The tiled scheme's ceiling is the
    /// fastest.
    pub fn dmma_gflops(&self, be: &CudaBackend) -> Result<Vec<(String, f64)>> {
        let k = self.scheme_kernels(be)?;
        let cfg = be.grid(1 << 40);
        let warps = u64::from(cfg.grid_dim.0) * u64::from(cfg.block_dim.0) / 32;
        let iters = 2048i32;
        let mut sink = be.alloc::<f64>(1)?;
        let seed = 1.0f64;
        let hopper = be.device().compute_capability.0 >= 9;
        let shapes: &[(&str, usize, f64)] = &[("m8n8k4", 0, 256.0), ("m16n8k4", 1, 512.0), ("m16n8k8", 2, 1024.0), ("m16n8k16", 3, 2048.0)];
        let mut out = Vec::new();
        for &(name, i, fma_per_mma) in shapes {
            if i > 0 && !hopper {
                continue;
            }
            let t = crate::backend::cuda::bench::median_seconds(be, 5, || launch!(be, &k.dmma[i], cfg; &iters, &seed, &mut sink))?;
            out.push((name.to_string(), 2.0 * fma_per_mma * 8.0 * f64::from(iters) * warps as f64 / t * 1e-9));
        }
        Ok(out)
    }

    /// The launch of tiled shape `cfg` on cells `0..nc`: one block per cell, or (`cfg.resident`)
    /// as many as the device holds at once, or `grid` blocks where given (tests of blocks that
    /// loop over several cells).
    fn tiled_launch_config(&self, be: &CudaBackend, cfg: TiledConfig, nc: u64, grid: Option<u64>) -> Result<LaunchConfig> {
        if cfg.lanes > 0 {
            return self.pair_launch_config(be, cfg, nc, grid);
        }
        let l = tiled_shape(&self.variant, cfg, self.tensor_dims.filter(|_| cfg.tensor));
        if l.smem > MAX_SHARED_BYTES {
            return Err(Error::Unsupported(format!("tiled integration of shape {} needs {} bytes of shared memory per block", cfg.label(), l.smem)));
        }
        let resident = u64::from(be.device().multiprocessors.max(1)) * l.min_blocks as u64;
        let blocks = match grid {
            Some(g) => g.max(1),
            None if cfg.resident => resident,
            None => 1 << 20,
        }
        .min(nc.div_ceil(cfg.cells.max(1) as u64))
        .max(1) as u32;
        Ok(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (l.threads as u32, 1, 1), shared_mem_bytes: l.smem as u32 })
    }

    /// Launches tiled kernel `k` (shape `cfg`) on cells `0..nc` ([`Self::tiled_launch_config`]).
    fn launch_tiled(&self, be: &CudaBackend, k: &Kernel, cfg: TiledConfig, nc: u64, out: &mut CudaSlice<f64>, grid: Option<u64>) -> Result<()> {
        if cfg.lanes > 0 {
            return self.launch_pair_lanes(be, cfg, nc, out, grid);
        }
        let lc = self.tiled_launch_config(be, cfg, nc, grid)?;
        launch!(be, k, lc; &nc, &self.cell_verts, &self.coords, &self.signs, &self.has_signs, &self.tab, &self.coef, &self.meta,
            &self.tensor_reals, &self.tensor_ints, out)
    }

    /// Device time (CUDA events, median of `runs`) of an empty kernel on one block of 32 threads,
    /// and on the default tiled shape's grid for `ncells` cells (its blocks and threads, no shared
    /// memory): the fixed cost of a launch and of scheduling its blocks, which the benchmark
    /// reports beside scheme III's floor. Returns (one block, the grid, the grid's blocks).
    pub fn empty_launch_seconds(&self, be: &CudaBackend, runs: usize, ncells: usize) -> Result<(Timing, Timing, u32)> {
        let k = self.scheme_kernels(be)?;
        let n = 0u64;
        let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        let t1 = crate::backend::cuda::bench::timed(be, runs, || launch!(be, &k.empty, one; &n))?;
        let grid = LaunchConfig { shared_mem_bytes: 0, ..self.tiled_launch_config(be, self.tiled_default(), ncells as u64, None)? };
        let tg = crate::backend::cuda::bench::timed(be, runs, || launch!(be, &k.empty, grid; &n))?;
        Ok((t1, tg, grid.grid_dim.0))
    }

    /// The tiled scheme's element matrices of cells `0..ncells` with launch shape `cfg` (the
    /// benchmark's sweep; [`Self::first_matrices_into`] takes the default shape).
    pub fn tiled_matrices_with(&self, be: &CudaBackend, cfg: TiledConfig, ncells: usize, out: &mut CudaSlice<f64>) -> Result<()> {
        self.tiled_matrices_on(be, cfg, ncells, out, None)
    }

    /// [`Self::tiled_matrices_with`] on `grid` blocks where given (each looping over cells).
    pub fn tiled_matrices_on(&self, be: &CudaBackend, cfg: TiledConfig, ncells: usize, out: &mut CudaSlice<f64>, grid: Option<u64>) -> Result<()> {
        if let Some(why) = self.scheme_unsupported(Integration::Tiled) {
            return Err(Error::Unsupported(why));
        }
        let per_cell = cfg.storage().doubles(self.variant.elem_size());
        if ncells > self.ncells || out.len() < ncells * per_cell {
            return Err(Error::dim("element matrices buffer", ncells * per_cell, out.len()));
        }
        if cfg.lanes > 0 {
            return self.launch_pair_lanes(be, cfg, ncells as u64, out, grid);
        }
        if !matches!(cfg.mma_k, 4 | 8 | 16) || cfg.warps == 0 || cfg.warps > 32 || cfg.tiles_per_warp == 0 || cfg.tiles_per_warp > 4 || cfg.qcp % cfg.mma_k != 0 || cfg.qcp > 64 || cfg.warps + cfg.producers > 32 || cfg.defer > 2 || (cfg.defer > 0 && (cfg.tiles_per_warp != 1 || cfg.producers > 0)) || cfg.cells > 15 || ((cfg.cells > 1 || cfg.prefetch) && cfg.producers > 0) || (cfg.narrow && self.variant.nloc > 8) || (cfg.split && (cfg.tiles_per_warp != 1 || cfg.producers > 0 || cfg.defer > 0 || cfg.narrow || cfg.prestage > 0 || wide_writes(cfg) == 4)) || cfg.wide > 4 {
            return Err(Error::invalid(format!("tiled shape {cfg:?}: k is 4, 8 or 16, 1 to 32 warps with the producers, 1 to 4 tiles per warp, points per pass a multiple of k up to 64, 0 to 2 deferred half tiles (one tile per warp, no producers), up to 15 cells per block and prefetching without producers, narrow tiles for at most 8 functions, split moments with one tile per warp pair and no producers, deferred writes, narrow tiles, prestaging or image-region wide writes (wide 4), wide writes 0 to 4")));
        }
        if cfg.tensor && self.tensor_dims.is_none() {
            return Err(Error::Unsupported(format!("tiled shape {}: this basis and rule do not split into 1D factors", cfg.label())));
        }
        if ncells == 0 {
            return Ok(());
        }
        let module = be.variant_module(&ELEMENT_SCHEMES, &scheme_defines_with(&self.variant, cfg, self.tensor_dims))?;
        let k = tiled_kernel(&module, &self.variant, cfg, self.tensor_dims)?;
        self.launch_tiled(be, &k, cfg, ncells as u64, out, grid)
    }

    /// Registers per thread and local memory (spill) bytes per thread of shape `cfg`'s kernel
    /// (the tiled kernel, or the p = 1 engine's), compiled where not yet: the benchmark's sweep
    /// prints them beside each shape's time.
    pub fn tiled_resources(&self, be: &CudaBackend, cfg: TiledConfig) -> Result<(i32, i32)> {
        use cudarc::driver::sys::CUfunction_attribute as Attr;
        let k = if cfg.lanes > 0 {
            Kernel::from_module(&be.variant_module(&PAIR_LANES, &super::pair_lanes::pair_defines(&self.variant, cfg))?, "matrices_pair_lanes")?
        } else {
            Kernel::from_module(&be.variant_module(&ELEMENT_SCHEMES, &scheme_defines_with(&self.variant, cfg, self.tensor_dims))?, "matrices_tiled")?
        };
        let get = |a| k.func.get_attribute(a).map_err(|e| crate::backend::cuda::cuda_error(format!("attributes of {}: {e}", cfg.label())));
        Ok((get(Attr::CU_FUNC_ATTRIBUTE_NUM_REGS)?, get(Attr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?))
    }

    /// [`Self::tiled_matrices_with`] for every cell, downloaded as full matrices (unpacked where
    /// the shape packs: tests of every shape).
    pub fn tiled_matrices_to_host(&self, be: &CudaBackend, cfg: TiledConfig) -> Result<Vec<f64>> {
        self.tiled_matrices_to_host_on(be, cfg, None)
    }

    /// [`Self::tiled_matrices_to_host`] on `grid` blocks where given.
    pub fn tiled_matrices_to_host_on(&self, be: &CudaBackend, cfg: TiledConfig, grid: Option<u64>) -> Result<Vec<f64>> {
        let nd = self.variant.elem_size();
        let mut out = be.alloc::<f64>(self.ncells * cfg.storage().doubles(nd))?;
        self.tiled_matrices_on(be, cfg, self.ncells, &mut out, grid)?;
        full_on_host(be, &out, cfg.storage(), nd)
    }

    /// Sums stored element matrices `mats` (layout `storage`) into `target`'s values (zeroed
    /// first): colour by colour with plain adds for [`Scatter::Colored`], atomics otherwise; then
    /// the Robin terms.
    pub fn scatter_matrices(&self, be: &CudaBackend, mats: &CudaSlice<f64>, storage: Storage, target: &mut CsrTarget) -> Result<()> {
        be.zero_slice(&mut target.matrix.values)?;
        let CsrTarget { matrix, kpos, colors, scatter, .. } = target;
        self.add_matrices(be, mats, storage, kpos, colors, *scatter, &mut matrix.values, &matrix.row_ptr)?;
        self.add_robin_values(be, target)
    }

    /// Adds stored element matrices `mats` (layout `storage`) into CSR `values` (rows `row_ptr`)
    /// through this assembler's positions `kpos` (from its [`CsrTarget`]): colour by colour with
    /// plain adds for [`Scatter::Colored`] (`colors`), atomics otherwise. No zeroing, no Robin
    /// terms: several assemblers (cell groups of their own degree) add into one matrix this way.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_matrices(
        &self,
        be: &CudaBackend,
        mats: &CudaSlice<f64>,
        storage: Storage,
        kpos: &CudaSlice<u16>,
        colors: &[(usize, CudaSlice<u32>)],
        scatter: Scatter,
        values: &mut CudaSlice<f64>,
        row_ptr: &CudaSlice<u32>,
    ) -> Result<()> {
        let k = self.scheme_kernels(be)?;
        let nloc = self.variant.nloc as u64;
        // Threads per cell: a block per (a, b), or per pair a ≤ b of a packed triangle.
        let (packed, nl) = match storage {
            Storage::Full => (0i32, nloc * nloc),
            Storage::Packed => (1i32, nloc * (nloc + 1) / 2),
        };
        match scatter {
            Scatter::Colored => {
                let mode = 1i32;
                for (n, cells) in colors.iter() {
                    let n = *n as u64;
                    if n > 0 {
                        launch!(be, &k.scatter, be.grid(n * nl); &n, cells, &self.cell_nodes, mats, &mode, &packed, row_ptr, kpos, &mut *values)?;
                    }
                }
            }
            Scatter::Atomic => {
                let (mode, n) = (0i32, self.ncells as u64);
                if n > 0 {
                    launch!(be, &k.scatter, be.grid(n * nl); &n, &0u64, &self.cell_nodes, mats, &mode, &packed, row_ptr, kpos, &mut *values)?;
                }
            }
            other => return Err(Error::Unsupported(format!("summing stored element matrices by the `{}` scatter: use atomic or colored", other.name()))),
        }
        Ok(())
    }
}

/// Stored matrices `mats` (layout `storage`, `nd` dofs per cell) downloaded as full matrices.
pub(crate) fn full_on_host(be: &CudaBackend, mats: &CudaSlice<f64>, storage: Storage, nd: usize) -> Result<Vec<f64>> {
    let host = be.download(mats)?;
    match storage {
        Storage::Full => Ok(host),
        Storage::Packed => packed::unpack(nd, &host),
    }
}

/// Compiles, with NVRTC only, the element-scheme kernels and the default assembly kernel for the
/// hierarchical hexahedra a user can reach: elasticity on trunk spaces p = 1…8 (Gauss) and p = 5
/// (the seed's rule), full p = 3, diffusion on trunk p = 4; at trunk p = 4, 5 every tiled shape
/// the benchmark sweeps, at p = 1–3 the eleventh round's ([`TiledConfig::round11`]), at p = 1
/// the CUDA-core engine's ([`TiledConfig::pair_lanes_shapes`], and its first in full storage);
/// none may put `matrices_tiled`'s or `matrices_pair_lanes`' arrays in local memory. Returns (variant, PTX bytes) per source.
pub fn compile_variants(arch: &str) -> Result<Vec<(String, usize)>> {
    use crate::fe::{ModeSet, QuadratureKind};
    use crate::mesh::{generate, CellType};
    use crate::physics::{Diffusion, Elasticity, PointwisePhysics};
    use crate::space::FunctionSpace;
    use std::sync::Arc;
    let mesh = Arc::new(generate::box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], CellType::Hexahedron)?);
    let mut cases: Vec<(usize, ModeSet, usize, QuadratureKind)> = (1..=crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE).map(|p| (p, ModeSet::Trunk, 3, QuadratureKind::Gauss)).collect();
    cases.push((5, ModeSet::Trunk, 3, QuadratureKind::Seed));
    cases.push((3, ModeSet::Full, 3, QuadratureKind::Gauss));
    cases.push((4, ModeSet::Trunk, 1, QuadratureKind::Gauss));
    let mut jobs = Vec::new();
    for (p, modes, ncomp, kind) in cases {
        let space = FunctionSpace::hierarchical(mesh.clone(), p, modes, ncomp)?;
        let physics: Box<dyn PointwisePhysics> = if ncomp == 3 { Box::new(Elasticity::lame(1.0, 1.0, 3)) } else { Box::new(Diffusion::new(1.0)) };
        let integ = ElementIntegrator::with_quadrature(&space, physics.as_ref(), None, kind)?;
        let v = variant_of(&integ, Tuning::default())?;
        let dims = super::tensor_tables::tensor_tables(&integ.quad.points, v.nloc, &integ.tab.values, &integ.tab.grads).map(|t| (t.n1, t.nf));
        if dims.is_none() {
            return Err(Error::invalid(format!("hierarchical {modes:?} p = {p}, {kind:?}: no 1D factor tables")));
        }
        let label = format!("hierarchical {modes:?} p = {p}, {ncomp} components, {kind:?} ({} points)", v.nq);
        jobs.push((format!("element_schemes.cu {label}"), ELEMENT_SCHEMES, scheme_defines(&v, dims)));
        if p <= 5 && modes == ModeSet::Trunk && kind == QuadratureKind::Gauss && ncomp == 3 {
            // The whole sweep at p = 4, 5; the eleventh to fifteenth rounds' shapes at p = 1–3.
            // The packed default too (what the `element` level runs; the default compiled above
            // is what the full level sums, full unless `packed = true`); the p = 1 engine's
            // shapes compile as their own kernel.
            let shapes = if p >= 4 { TiledConfig::sweep(v.nloc) } else { std::iter::once(TiledConfig::for_functions(v.nloc)).chain(TiledConfig::round11(v.nloc)).chain(TiledConfig::round12(v.nloc)).chain(TiledConfig::round13(v.nloc)).chain(TiledConfig::round14(v.nloc)).chain(TiledConfig::round15(v.nloc)).collect() };
            for cfg in shapes.into_iter().filter(|c| *c != default_shape(&v, dims) && c.lanes == 0) {
                jobs.push((format!("element_schemes.cu {label}, tiled {}", cfg.label()), ELEMENT_SCHEMES, scheme_defines_with(&v, cfg, dims)));
            }
            // The CUDA-core engine at p = 1, packed and full (the benchmark's full-storage row), and
            // the thirteenth round's fused geometry.
            let fused = TiledConfig::round13(v.nloc).into_iter().filter(|c| c.lanes > 0);
            for cfg in TiledConfig::pair_lanes_shapes(v.nloc).into_iter().chain(TiledConfig::pair_lanes_shapes(v.nloc).first().map(|c| TiledConfig { packed: false, ..*c })).chain(fused) {
                jobs.push((format!("pair_lanes.cu {label}, {}", cfg.label()), PAIR_LANES, super::pair_lanes::pair_defines(&v, cfg)));
            }
        }
        jobs.push((format!("assembly.cu {label}"), ASSEMBLY, kernel_defines(&v, &tables(&integ, &v))));
    }
    jobs.into_par_iter()
        .map(|(label, src, defines): (String, _, Vec<String>)| {
            let c = jit::compile_ptx_with(&src, arch, &defines)?;
            if c.log.to_ascii_lowercase().contains("warning") {
                return Err(Error::invalid(format!("NVRTC warnings in {label}:\n{}", c.log)));
            }
            // Scheme III keeps its accumulators and fragments in registers: an index the compiler
            // cannot resolve would put them in local memory (tenth round's first paired build).
            for entry in ["matrices_tiled", "matrices_pair_lanes"] {
                if let Some(body) = c.ptx.split(&format!(".entry {entry}(")).nth(1) {
                    if body.split(".entry ").next().is_some_and(|b| b.contains("st.local")) {
                        return Err(Error::invalid(format!("{label}: {entry} stores to local memory (PTX st.local)")));
                    }
                }
            }
            // GALERKIN_PTX_DUMP=dir keeps each variant's PTX (registers and spills by `ptxas -v`)
            // and its defines, one line (round 26: `scripts/ptxas-registers.py --variant "NAME: $(cat F)"`).
            if let Some(dir) = std::env::var_os("GALERKIN_PTX_DUMP") {
                let name: String = label.chars().map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' }).collect();
                let path = std::path::Path::new(&dir).join(format!("{name}.ptx"));
                std::fs::write(&path, &c.ptx).map_err(|e| Error::io(path, e))?;
                let path = std::path::Path::new(&dir).join(format!("{name}.defines"));
                std::fs::write(&path, defines.join(" ") + "\n").map_err(|e| Error::io(path, e))?;
            }
            Ok((label, c.ptx.len()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(nloc: usize, nq: usize) -> Variant {
        Variant {
            dim: 3,
            nv: 8,
            nloc,
            nq,
            ncomp: 3,
            affine: false,
            qf: "Elasticity".into(),
            full_gradient: true,
            reftensor: false,
            tuning: Tuning::default(),
        }
    }

    /// Points per pass: as many as fit up to 32 unless given, every shape fits a block's shared
    /// memory, and the warp-specialised shape adds its staging warps and a scratch of its own.
    #[test]
    fn tiled_shapes_take_the_points_that_fit() {
        let p5 = variant(74, 216);
        let dims = Some((6, 12));
        let l = tiled_shape(&p5, TiledConfig::for_functions(74), dims);
        assert_eq!((l.threads, l.qcp, l.min_blocks), (512, 32, 1));
        let l24 = tiled_shape(&p5, TiledConfig { qcp: 24, ..TiledConfig::for_functions(74) }, dims);
        assert_eq!(l24.qcp, 24);
        // The moment tiles (p = 5's default before round 22's Gram tiles): the staging and deferred
        // slots below are theirs.
        let shared = TiledConfig::round21_default(74);
        let ls = tiled_shape(&p5, shared, dims);
        let ws = tiled_shape(&p5, TiledConfig { producers: 4, ..shared }, dims);
        assert_eq!((ws.threads, ws.qcp), (640, 32));
        assert!(ws.smem > ls.smem, "own scratch: {} vs {}", ws.smem, ls.smem);
        // One deferred half tile per warp: a slot of its own (24 rows of 25 doubles) beside the
        // staging buffers, and still 32 points per pass at p = 5; two do not fit 16 warps.
        let d1 = tiled_shape(&p5, TiledConfig { defer: 1, ..shared }, dims);
        assert_eq!(d1.qcp, 32);
        assert_eq!(d1.smem, ls.smem + 16 * 24 * 25 * 8);
        assert!(tiled_shape(&p5, TiledConfig { defer: 2, ..shared }, dims).smem > MAX_SHARED_BYTES);
        let p4 = variant(50, 125);
        assert_eq!(tiled_shape(&p4, TiledConfig::for_functions(50), dims).qcp, 32);
        // Pipelined cells (round 14): at p = 2 two buffers of 28 points and the image in one of
        // them, 4 blocks to an SM; at p = 3 two passes and the whole triangle in a region of its own.
        let p2 = variant(20, 27);
        let pipes = TiledConfig::round14(20);
        assert!(pipes.iter().all(|c| c.pipe && pipe_asked(&p2, *c)), "p = 2: every round-14 shape pipelines");
        let l2 = tiled_shape(&p2, pipes[0], None);
        assert_eq!((l2.threads, l2.qcp, l2.min_blocks, l2.image), (128, 28, 4, 0));
        assert!(4 * (l2.smem + 1024) <= 228 * 1024, "p = 2 pipe: {} bytes a block", l2.smem);
        let p3 = variant(32, 64);
        let l3 = tiled_shape(&p3, TiledConfig::round14(32)[0], dims);
        assert_eq!((l3.threads, l3.qcp, l3.min_blocks, l3.image), (192, 32, 2, 96 * 97 / 2 + 2));
        assert!(2 * (l3.smem + 1024) <= 228 * 1024, "p = 3 pipe: {} bytes a block", l3.smem);
        assert!(!pipe_asked(&p3, TiledConfig { packed: false, ..TiledConfig::round14(32)[0] }), "full storage: no pipeline");
        // Paired tiles in the pipeline (round 15): 3 warps at p = 2 (28 points, the image in the
        // buffer the pass read, 4 blocks to an SM; 16 points, two passes, the image in a region of
        // its own, 5 blocks), 5 at p = 3 (two passes at 2 blocks to an SM, four at 3).
        let triangle = |nd: usize| (nd * (nd + 1) / 2 + 2) & !1;
        for (v, nloc, d, want) in [(&p2, 20, None, [(96, 28, 4, 0), (96, 16, 5, triangle(60))]), (&p3, 32, dims, [(160, 32, 2, triangle(96)), (160, 16, 3, triangle(96))])] {
            let paired = TiledConfig::round15(nloc);
            assert_eq!(paired.len(), 2);
            for (cfg, want) in paired.into_iter().zip(want) {
                assert!(cfg.paired && pipe_asked(v, cfg), "nloc {nloc} {}: pipelined", cfg.label());
                let l = tiled_shape(v, cfg, d);
                assert_eq!((l.threads, l.qcp, l.min_blocks, l.image), want, "nloc {nloc} {}", cfg.label());
                assert!(l.min_blocks * (l.smem + 1024) <= 228 * 1024, "nloc {nloc} {}: {} bytes a block", cfg.label(), l.smem);
                assert!(scheme_defines_with(v, cfg, d).contains(&"WIDE_WRITES=3".to_string()) && !pipe_asked(v, TiledConfig { packed: false, ..cfg }));
            }
        }
        // The packed default pipelines at p = 2, 3; full storage keeps round 13's shape.
        for (v, nloc) in [(&p2, 20), (&p3, 32)] {
            assert_eq!(TiledConfig::for_functions(nloc), TiledConfig::round14(nloc)[0]);
            assert_eq!(default_shape_for(v, None, false), TiledConfig { packed: false, tensor: false, ..TiledConfig::round13_default(nloc) });
            assert!(default_shape_for(v, None, true).pipe);
        }
        // Trunk p = 4 elasticity pipelines rounds (round 15); scalar p = 4 and full storage do not.
        let p4e = variant(50, 125);
        assert_eq!(p4e.ncomp, 3);
        assert_eq!(default_shape_for(&p4e, None, true).pipe_rounds, 2);
        assert_eq!(default_shape_for(&Variant { ncomp: 1, ..p4e.clone() }, None, true), TiledConfig { tensor: false, ..TiledConfig::round13_default(50) });
        assert_eq!(default_shape_for(&p4e, None, false).pipe_rounds, 0);
        for (nloc, nq) in [(8, 8), (20, 27), (32, 64), (50, 125), (74, 216)] {
            for cfg in TiledConfig::sweep(nloc) {
                let l = tiled_shape(&variant(nloc, nq), cfg, dims.filter(|_| cfg.tensor));
                assert!(l.smem <= MAX_SHARED_BYTES, "nloc {nloc} {}: {} bytes", cfg.label(), l.smem);
                let stagers = if cfg.producers > 0 { 32 * cfg.producers } else { l.threads };
                assert!(l.qcp % cfg.mma_k == 0 && l.qcp <= stagers, "nloc {nloc} {}: {} points per pass", cfg.label(), l.qcp);
            }
        }
    }

    /// Which default each hexahedral space beyond 32 functions gets (issue 16's item of round 23):
    /// `for_functions` keys on the functions alone, so the spaces that reach its Gram shapes are
    /// pinned here — of the hierarchical (trunk, full) and Lagrange hexahedra only trunk p = 4 has
    /// 33–50 functions and only trunk p = 5 65–74; elasticity there takes the Gram tiles, a scalar
    /// space, full storage and a rule whose J⁻¹ table outgrows the block the moment tiles.
    #[test]
    fn defaults_by_space() {
        use crate::fe::{FiniteElement, HierarchicalHex, LagrangeElement, ModeSet};
        use crate::mesh::CellType;
        let mut counts: Vec<(String, usize)> = Vec::new();
        for p in 1..=crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE {
            for modes in [ModeSet::Trunk, ModeSet::Full] {
                counts.push((format!("hierarchical {modes:?} p = {p}"), HierarchicalHex::count(p, modes)));
            }
        }
        for k in 1..=crate::fe::lagrange::MAX_TENSOR_DEGREE {
            if let Ok(e) = LagrangeElement::new(CellType::Hexahedron, k) {
                counts.push((format!("Lagrange Q{k}"), e.ndofs()));
            }
        }
        let within = |r: std::ops::RangeInclusive<usize>| counts.iter().filter(|(_, n)| r.contains(n)).map(|(s, n)| format!("{s}: {n}")).collect::<Vec<_>>();
        assert_eq!(within(33..=50), ["hierarchical Trunk p = 4: 50"]);
        assert_eq!(within(65..=74), ["hierarchical Trunk p = 5: 74"]);
        let dims = Some((6, 12));
        for (nloc, nq) in [(50, 125), (74, 216)] {
            let v = variant(nloc, nq);
            let c = default_shape_for(&v, dims, true);
            assert_eq!(c, TiledConfig::for_functions(nloc), "nloc {nloc}: elasticity, packed");
            assert!(c.gram && super::super::pipe_rounds::gram(&v, c), "nloc {nloc}: Gram tiles");
            let scalar = Variant { ncomp: 1, qf: "Diffusion".into(), ..variant(nloc, nq) };
            assert_eq!(default_shape_for(&scalar, dims, true), TiledConfig::round13_default(nloc), "nloc {nloc}: scalar");
            assert_eq!(default_shape_for(&v, dims, false), TiledConfig { packed: false, ..TiledConfig::round13_default(nloc) }, "nloc {nloc}: full storage");
            assert!(!default_shape_for(&v, None, true).tensor, "nloc {nloc}: no factor tables, staged from the table");
        }
        // p = 5 on 8³ points: the Gram shape's J⁻¹ table outgrows the block, the moment tiles fit.
        let many = variant(74, 512);
        assert!(tiled_shape(&many, TiledConfig::for_functions(74), dims).smem > MAX_SHARED_BYTES);
        let c = default_shape_for(&many, dims, true);
        assert_eq!(c, TiledConfig::round13_default(74));
        assert!(tiled_shape(&many, c, dims).smem <= MAX_SHARED_BYTES, "the moment tiles fit: {} bytes", tiled_shape(&many, c, dims).smem);
    }
}
