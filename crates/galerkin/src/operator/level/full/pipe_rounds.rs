//! Scheme III's pipelined rounds (round 15, issue 16: trunk p = 4, 5): round 14's pipelined cells
//! (`pipe`, PIPE) taken to cells of several passes of points and rounds of tiles, the image of
//! each round in a shared-memory region of its own (`element_schemes.cu`'s
//! `tiled_pipelined`, PIPE_ROUNDS). The host side: the shapes the sweep tries, the kernel's
//! PIPE_ROUNDS for a shape and the image region it needs (the longest round's packed rows, as the
//! kernel's `pipe_round_span`).
use super::cuda::Variant;
use super::schemes::TiledConfig;

impl TiledConfig {
    /// The fifteenth round's shapes at high degree for `nloc` functions (right after the default
    /// in the sweep, so `--sweep-shapes` takes them first; none up to 32 functions, trunk p ≤ 3):
    /// the default (packed unpaired tiles on a resident grid, 16 warps, factor tables) with
    /// pipelined rounds and whole-strip copies (`wide` 3) — the next cell's J⁻¹ table formed after
    /// the cell's image (`pipe_rounds` 2: no accumulators live, a barrier more), then in the cell's
    /// last pass (1, as round 14: no barrier more, more spills), then with m16n8k16. p = 4 (one
    /// round a cell): 32 points per pass (4 passes), the whole triangle one image; p = 5 (two
    /// rounds a cell): 16 points per pass, whose smaller staging buffers leave room for each
    /// round's image (the longest 16 722 doubles).
    pub fn round15_high(nloc: usize) -> Vec<TiledConfig> {
        if nloc <= 32 {
            return Vec::new();
        }
        let base = TiledConfig { wide: 3, paired: false, pipe: true, resident: true, ..TiledConfig::tenth_round(nloc) };
        let late = TiledConfig { pipe_rounds: 2, qcp: if nloc > 50 { 16 } else { 0 }, ..base };
        vec![late, TiledConfig { pipe_rounds: 1, ..late }, TiledConfig { mma_k: 16, ..late }]
    }
}

impl TiledConfig {
    /// The sixteenth round's shapes at trunk p = 4 (33–50 functions; none elsewhere): round 15's
    /// (pipelined rounds, the next J⁻¹ table after the image) with Gram tiles (`gram`: the nine
    /// moments as tiles of one Gram matrix over the 150 (function, derivative) rows, 100 MMAs a
    /// k-step instead of 144, 28 accumulators a lane instead of 36) on m16n8k16 — the default
    /// since round 16 (H200: 1.398 / 1.410 ms against 1.417 / 1.453 in two processes) — then on
    /// m16n8k8 (1.449 / 1.461: the transform's phase costs what the fewer MMAs save).
    pub fn round16_high(nloc: usize) -> Vec<TiledConfig> {
        if !(33..=50).contains(&nloc) {
            return Vec::new();
        }
        let gram = TiledConfig { gram: true, ..TiledConfig::round15_high(nloc)[0] };
        vec![TiledConfig { mma_k: 16, ..gram }, gram]
    }
}

impl TiledConfig {
    /// The seventeenth round's shapes at trunk p = 4 (33–50 functions; none elsewhere): the
    /// default Gram tiles (m16n8k16) with each cell's blocks formed from its Gram image in the
    /// next cell's first passes and sent a pass later (`gram_overlap`), so the tail of a cell with
    /// a next one has no lone transform and one barrier fewer: spread over two passes (the first
    /// strip's 680 pairs, then the other 595) after the multiplies on half the warps of each SM
    /// sub-partition (1) and before them on every warp (3: no accumulator live across the
    /// blocks); then all in the first pass, in the orders 1, 2 (beside the staging in its
    /// alternating order) and 3. Measured slower (H200: 1.488–1.571 ms against the default's
    /// 1.398–1.418, two processes; BENCHMARKS.md, 17th pass): the blocks' shared-memory traffic
    /// adds to the passes, which shared memory bounds, instead of hiding under the multiplies.
    /// Sweep rows only.
    pub fn round17_high(nloc: usize) -> Vec<TiledConfig> {
        let Some(&g) = TiledConfig::round16_high(nloc).first() else { return Vec::new() };
        let shape = |gram_overlap, gram_spread| TiledConfig { gram_overlap, gram_spread, ..g };
        vec![shape(1, true), shape(3, true), shape(1, false), shape(2, false), shape(3, false)]
    }
}

impl TiledConfig {
    /// The eighteenth round's shapes at trunk p = 4 (33–50 functions; none elsewhere): the default
    /// Gram tiles with fewer shared-memory load instructions a tile — transposed passes whose
    /// fragment entries a lane loads as double2 (`gram_wide`: 6 loads a tile and k16-step instead
    /// of 12 where the A fragment is new, 2 instead of 4 where not), then the tiles in strip-pair
    /// order (`gram_pairs`: consecutive tiles share a B fragment), then both; then both on m16n8k8
    /// (fewer fragment registers beside the 28 accumulators: no spills in the loop). Sweep rows
    /// until the device measures them.
    pub fn round18_high(nloc: usize) -> Vec<TiledConfig> {
        let Some(&g) = TiledConfig::round16_high(nloc).first() else { return Vec::new() };
        let shape = |gram_wide, gram_pairs, mma_k| TiledConfig { gram_wide, gram_pairs, mma_k, ..g };
        vec![shape(true, false, 16), shape(false, true, 16), shape(true, true, 16), shape(true, true, 8), shape(true, false, 8)]
    }
}

impl TiledConfig {
    /// The nineteenth round's shapes at trunk p = 4 (33–50 functions; none elsewhere): the default
    /// Gram tiles (m16n8k16) with more work in flight per SM, which the round-18 profile found
    /// latency-bound (one block of 16 warps at 128 registers, no eligible warp in 59 % of cycles).
    /// More warps share G's 100 tiles (one round a cell still), so each holds fewer accumulators
    /// and the block fits the register file at fewer registers a lane: 20 warps (5 tiles, 96
    /// registers), 25 (4 tiles, 72), 32 (3–4 tiles, 64; on k16 and k8, whose fragments are half
    /// the registers); then the k-steps of a pass unrolled (`gram_unroll`: the next k-step's
    /// fragment loads may issue under the current MMAs) on 16 and 20 warps. Measured (H200,
    /// BENCHMARKS.md, 19th pass): more warps 7–46 % slower (occupancy up to 50 %, the issue rate
    /// flat, spills and L1 traffic up), unrolled k-steps level with the default. Sweep rows only.
    pub fn round19_high(nloc: usize) -> Vec<TiledConfig> {
        let Some(&g) = TiledConfig::round16_high(nloc).first() else { return Vec::new() };
        let shape = |warps, mma_k, gram_unroll| TiledConfig { warps, mma_k, gram_unroll, ..g };
        vec![shape(20, 16, false), shape(25, 16, false), shape(32, 16, false), shape(32, 8, false), shape(16, 16, true), shape(20, 16, true)]
    }
}

impl TiledConfig {
    /// The twentieth round's shapes at trunk p = 4 (33–50 functions; none elsewhere): the default
    /// Gram tiles (m16n8k16, strip order) with each strip's two diagonal tiles fed from the strip's
    /// A fragment (`gram_diag`: columns 2s and 2s + 1 of strip s are its A fragment's halves, the
    /// same entries of H), so 20 of the 100 tiles load no B fragment — the round-19 profile put
    /// the kernel on the shared-memory/L1 instruction path; then with the k-steps unrolled (no
    /// spills, round 19) on 16 and 20 warps, and on the transposed passes (double2 loads). Then
    /// passes staged from the gradient table (`tensor` off: three L2 loads a function and point)
    /// instead of the factor tables (eight products), with and without the diagonal fragments:
    /// on Hopper the FP64 FMA units and the FP64 tensor cores are one pipe, so the staging's
    /// products (about a tenth of the default's pipe cycles, round 18's profile) queue with the
    /// MMAs instead of overlapping them. Measured (H200, BENCHMARKS.md, 20th pass): diag-b −1 %
    /// (12.8 M shared-load wavefronts fewer), diag-b with unrolled k-steps −2.3 % in both processes
    /// (1.386 / 1.423 ms against 1.419 / 1.456), table-staged 7–8 % slower (the staging waits on
    /// L2). The fourth (diag-b, unrolled k-steps, 16 warps) is p = 4's default from round 20
    /// ([`Self::for_functions`]); the rest are sweep rows.
    pub fn round20_high(nloc: usize) -> Vec<TiledConfig> {
        let Some(&g) = TiledConfig::round16_high(nloc).first() else { return Vec::new() };
        let shape = |warps, gram_unroll, gram_wide| TiledConfig { warps, gram_unroll, gram_wide, gram_diag: true, ..g };
        let table = |gram_diag| TiledConfig { tensor: false, gram_diag, ..g };
        vec![shape(16, false, false), table(true), table(false), shape(16, true, false), shape(20, true, false), shape(16, false, true)]
    }
}

impl TiledConfig {
    /// The twenty-first round's shapes at trunk p = 5 (65–74 functions; none elsewhere): round 15's
    /// pipelined rounds (16 points a pass, the next J⁻¹ table after the image) with Gram tiles in
    /// two rounds a cell ([`gram_split`]: 138 tiles on the rows of functions 0–31, 9 a warp, then
    /// 72 on the rest's, 5 a warp; 210 MMAs a k-step instead of the moment tiles' 270) on
    /// m16n8k16 with the diagonal tiles' B fragments from the A fragment (p = 4's default since
    /// round 20), without them, on m16n8k8 with its two k-steps a pass unrolled (half the fragment
    /// registers beside the 36 accumulators), and on 20 warps (7 tiles a warp in the first round,
    /// 96 registers). Measured (H200, BENCHMARKS.md, 21st pass): equal to the CPU to 1.7e-15 but
    /// 38–115 % slower than p = 5's default (7.49–11.65 ms against 5.42): 36 accumulators beside
    /// the fragments spill (144–232 B of stack, 101 M local loads a launch against 4.5 M), so the
    /// multiplies wait on L1 (0.31 eligible warps a scheduler against 0.58). Sweep rows only.
    pub fn round21_high(nloc: usize) -> Vec<TiledConfig> {
        if !(65..=74).contains(&nloc) {
            return Vec::new();
        }
        let g = TiledConfig { gram: true, mma_k: 16, gram_diag: true, ..TiledConfig::round15_high(nloc)[0] };
        vec![g, TiledConfig { gram_diag: false, ..g }, TiledConfig { mma_k: 8, gram_unroll: true, ..g }, TiledConfig { warps: 20, ..g }]
    }
}

impl TiledConfig {
    /// The twenty-second round's shapes. Trunk p = 4 (33–50 functions): the default (round 20's
    /// diag-b, unrolled k-steps) with the previous cell's copies waited for a pass early, so the
    /// cell's last pass has no barrier (`gram_early_wait`, [`gram_early_wait`]): round 20's split
    /// put ≈ 0.29 ms in the tail, and behind that barrier the warps of 6 tiles wait for those of 7
    /// before any writes its tiles to the image. Trunk p = 5 (65–74 functions): round 21's Gram
    /// tiles in three rounds a cell (`gram_rounds` 3: functions 0–15, 16–31, 32–73; 78, 60, 72
    /// tiles, 5 a warp, 20 accumulators a lane instead of the two rounds' 36, which spilled), on 16
    /// points a pass and on 32 (the longest round's image, 9 528 doubles, leaves room for two
    /// 32-point staging buffers: half the passes and barriers), with and without diag-b. Sweep rows
    /// until the device measures them.
    pub fn round22_high(nloc: usize) -> Vec<TiledConfig> {
        if (33..=50).contains(&nloc) {
            return vec![TiledConfig { gram_early_wait: true, ..TiledConfig::round22_default(nloc) }];
        }
        let Some(&g) = TiledConfig::round21_high(nloc).first() else { return Vec::new() };
        let three = TiledConfig { gram_rounds: 3, ..g };
        vec![three, TiledConfig { qcp: 32, ..three }, TiledConfig { qcp: 32, gram_diag: false, ..three }]
    }
}

impl TiledConfig {
    /// The twenty-third round's shapes at trunk p = 4 (33–50 functions) and p = 5 (65–74; none
    /// elsewhere): the default with the alternating order by SM sub-partition (`alt_sub`, ALT_ORDER
    /// 2). A warp issues on sub-partition warp % 4 and shares its tensor core; `alternate` (odd warps
    /// multiply first) gives all four warps of a sub-partition one order at 16 warps, so each
    /// sub-partition stages, then multiplies, its tensor core idle meanwhile — round 22's split at
    /// p = 4 adds the staging (0.29 ms) to the multiplies in full. With `alt_sub` two of each
    /// sub-partition's warps multiply while the other two stage. p = 4 also with round 22's early
    /// copy wait, and the default without alternating at all (the control: level with the default
    /// if the odd-warp order overlaps nothing). Then the tail's packed indices from a base a row
    /// (`gram_rows`, GRAM_ROWS: the lead's round-23 profile of p = 4 put the image's and the
    /// blocks' index products at about a sixth of the instructions), alone and with `alt_sub`.
    /// Measured (H200, BENCHMARKS.md, 23rd pass): level at p = 4 (1.343–1.396 ms against the
    /// default's 1.363 / 1.392, spreads overlapping; not alternating is level too, so neither order
    /// overlaps anything), alt-sub 2.3 % slower at p = 5 (5.000 against 4.886 ms), row bases −1.5 % on
    /// top of it there. Sweep rows only.
    pub fn round23_high(nloc: usize) -> Vec<TiledConfig> {
        let d = TiledConfig::round22_default(nloc);
        let sub = TiledConfig { alt_sub: true, ..d };
        if (33..=50).contains(&nloc) {
            vec![sub, TiledConfig { gram_early_wait: true, ..sub }, TiledConfig { alternate: false, ..d }, TiledConfig { gram_rows: true, ..d }, TiledConfig { gram_rows: true, ..sub }]
        } else if (65..=74).contains(&nloc) {
            vec![sub, TiledConfig { gram_rows: true, ..sub }]
        } else {
            Vec::new()
        }
    }
}

impl TiledConfig {
    /// The twenty-fourth round's shapes at trunk p = 4 (33–50 functions) and p = 5 (65–74; none
    /// elsewhere). p = 4's parts add up on the shared-memory path (round 23), so fewer wavefronts a
    /// cell: the lead's round-23 profile counts ≈ 17 400 a cell — fragments 8 400, staging 5 300
    /// (of which the factor loads 3 100 and the function's factor ids and scale 750), the tail
    /// 3 500. The default with the factor tables a function at a time: x's factor and the (y, z)
    /// planes (`fn_tables` 2: five loads an entry, no factor-id or scale load, ≈ −1 270
    /// wavefronts), the three 1D factors (`fn_tables` 1: six loads, ≈ −750), then the planes with
    /// round 23's row bases, and with row bases and the order by sub-partition (round 23's fastest
    /// p = 4 row). p = 5: round 23's
    /// row bases alone (round 23 measured them only beside the order by sub-partition), then the
    /// three 1D factors a function (its planes, TN1 = 6, outgrow the block). Measured (H200,
    /// BENCHMARKS.md, 24th pass): p = 4 fn-factors −1.8 % / −3.2 % (1.338 / 1.353 ms against
    /// 1.363 / 1.398, the spreads apart by 0.001 ms in one sweep and touching in the other: not
    /// the default), fn-planes −0.7 % / −2.0 % (−875 shared wavefronts and −4 870 warp
    /// instructions a cell, Nsight Compute); p = 5 row bases −1.8 % (4.763 against 4.849 ms, the
    /// spreads apart: **p = 5's default since round 24**, [`Self::for_functions`]), fn-factors
    /// 3.4 % slower.
    pub fn round24_high(nloc: usize) -> Vec<TiledConfig> {
        let d = TiledConfig::round22_default(nloc);
        if (33..=50).contains(&nloc) {
            let planes = TiledConfig { fn_tables: 2, ..d };
            vec![planes, TiledConfig { fn_tables: 1, ..d }, TiledConfig { gram_rows: true, ..planes }, TiledConfig { gram_rows: true, alt_sub: true, ..planes }]
        } else if (65..=74).contains(&nloc) {
            vec![TiledConfig { gram_rows: true, ..d }, TiledConfig { fn_tables: 1, ..d }]
        } else {
            Vec::new()
        }
    }
}

impl TiledConfig {
    /// The twenty-fifth round's shapes at trunk p = 4 (33–50 functions) and p = 5 (65–74; none
    /// elsewhere): round 24's load saving in the staging without its tables' shared memory. The
    /// functions' scales applied in the tail with the signs' products, both formed there (`fn_regs`
    /// 1: no scale load an entry, −256 shared loads a cell at p = 4, and no sign products held
    /// across the passes: ptxas gives p = 4 0 B of stack against the default's 32); with each
    /// factor's value and derivative adjacent (`stage_wide`: one 16-byte load for both, 3 an entry
    /// instead of 6, −768 shared loads a cell; 8 B of stack); each with row bases; then a staging
    /// thread's factor ids in registers too (`fn_regs` 2: −256 more, but 48 B of stack — the
    /// brief's candidate (a), two registers across the passes). p = 5: its default with the scales
    /// in the tail, and with the 16-byte loads too (its three rounds change a thread's functions:
    /// no ids in registers). Sweep rows until the device measures them.
    pub fn round25_high(nloc: usize) -> Vec<TiledConfig> {
        // (On the defaults before round 25, so a later default built from these rows stays one.)
        let d = if (65..=74).contains(&nloc) { TiledConfig { gram_rows: true, ..TiledConfig::round22_default(nloc) } } else { TiledConfig::round22_default(nloc) };
        let tail = TiledConfig { fn_regs: 1, ..d };
        let wide = TiledConfig { stage_wide: true, ..tail };
        if (33..=50).contains(&nloc) {
            vec![tail, wide, TiledConfig { gram_rows: true, ..tail }, TiledConfig { gram_rows: true, ..wide }, TiledConfig { fn_regs: 2, ..wide }]
        } else if (65..=74).contains(&nloc) {
            vec![tail, wide]
        } else {
            Vec::new()
        }
    }
}

impl TiledConfig {
    /// The twenty-sixth round's shapes at trunk p = 4 (33–50 functions) and p = 5 (65–74; none
    /// elsewhere), on round 25's scales in the tail (`fn_regs` 1, the first shapes without spills),
    /// with a warp's Gram tile indices warp-uniform (`uniform_tiles`: the compiler holds them in
    /// uniform registers, 14 vector registers a lane fewer at p = 4). p = 4, in turn: the tail's node
    /// pairs by classes of rows mod 16 (`pair_classes`: no bank conflicts in the blocks, −471 shared
    /// wavefronts a cell counted from the addresses, no `upper_pair` root a pair); the factor ids in
    /// registers (`fn_regs` 2: ptxas 0 B of stack, round 25's row 48 B); both again with the 16-byte
    /// staging loads; the pair classes with the ids in registers. p = 5 (three rounds: no pair classes, no ids in registers): the 16-byte
    /// loads with the uniform indices. Sweep rows until the device measures them.
    pub fn round26_high(nloc: usize) -> Vec<TiledConfig> {
        let r25 = TiledConfig::round25_high(nloc);
        let (Some(&tail), Some(&wide)) = (r25.first(), r25.get(1)) else { return Vec::new() };
        let (tail, wide) = (TiledConfig { uniform_tiles: true, ..tail }, TiledConfig { uniform_tiles: true, ..wide });
        if (33..=50).contains(&nloc) {
            let ids = TiledConfig { fn_regs: 2, ..tail };
            let classes = |c: TiledConfig| TiledConfig { pair_classes: true, ..c };
            vec![classes(tail), ids, classes(wide), TiledConfig { fn_regs: 2, ..wide }, classes(ids)]
        } else {
            vec![wide]
        }
    }
}

/// The kernel's UNIFORM_TILES for `cfg` on `v`: asked, with Gram tiles ([`gram`], pipelined cells).
pub(crate) fn uniform_tiles(v: &Variant, cfg: TiledConfig) -> bool {
    cfg.uniform_tiles && gram(v, cfg)
}

/// Slots of the tail's node pairs by classes of rows (`element_schemes.cu`'s PC_SLOTS for `nloc`
/// functions): class a0 (rows a ≡ a0 mod 16) takes 16 slots for each pair of its most frequent
/// colour (b + 8j) mod 16, row a0 + 16j (p = 4: 1 504 slots for 1 275 pairs).
pub(crate) fn pair_class_slots(nloc: usize) -> usize {
    (0..16.min(nloc))
        .map(|a0| {
            let colour = |c: usize| (0..).map(|j| a0 + 16 * j).take_while(|&r| r < nloc).enumerate().map(|(j, r)| (r..nloc).filter(|b| (b + 8 * j) % 16 == c).count()).sum::<usize>();
            16 * (0..16).map(colour).max().unwrap_or(0)
        })
        .sum()
}

/// The kernel's PAIR_CLASSES for `cfg` on `v` (tables `dims`): asked, with the orientation signs
/// read in the tail (`fn_regs`, on factor tables by factor), one round of Gram tiles a cell
/// ([`gram`], no [`gram_split`]) whose blocks form in its own tail, one cell group and byte node
/// indices.
pub(crate) fn pair_classes(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> bool {
    cfg.pair_classes
        && cfg.fn_regs > 0
        && cfg.tensor
        && dims.is_some()
        && cfg.fn_tables == 0
        && cfg.producers == 0
        && cfg.gram_overlap == 0
        && cfg.cells <= 1
        && gram(v, cfg)
        && gram_split(v, cfg) == 0
        && (16..256).contains(&v.nloc)
}

/// Doubles of the pair slots' table in shared memory (`element_schemes.cu`'s PC_DOUBLES: a u16 a
/// slot, whole 16-byte units) where [`pair_classes`] holds, else 0.
pub(crate) fn pair_class_doubles(v: &Variant, cfg: TiledConfig, dims: Option<(usize, usize)>) -> usize {
    if pair_classes(v, cfg, dims) {
        (2 * pair_class_slots(v.nloc)).div_ceil(16) * 2
    } else {
        0
    }
}

/// The kernel's GRAM_EARLY_WAIT for `cfg` launched on `v` as `l`: asked, with Gram tiles
/// ([`gram`]) in one round a cell, the blocks in the cell's tail (no `gram_overlap`) and two
/// passes of points or more (the wait moves to the pass before the last).
pub(crate) fn gram_early_wait(v: &Variant, cfg: TiledConfig, l: &super::schemes::TiledLaunch) -> bool {
    cfg.gram_early_wait && gram(v, cfg) && gram_split(v, cfg) == 0 && gram_overlap(v, cfg, l) == 0 && v.nq.div_ceil(l.qcp.max(1)) >= 2
}

/// The kernel's GRAM_SPLIT for `cfg` on `v`: where the moment tiles take more than one round a
/// cell and the functions fill five 16-function strips up to trunk p = 5's 74 (the first round's
/// rows — functions 0–31, 16 752 doubles at p = 5 — and two 16-point staging buffers fit a block's
/// shared memory), Gram tiles take two rounds, the first on the rows of functions [0, 32); else 0.
/// (`gram_rounds` 3, round 22: the first round on functions [0, 16), [`gram_split2`].)
pub(crate) fn gram_split(v: &Variant, cfg: TiledConfig) -> usize {
    let two = super::schemes::tile_count(v.nloc, false) > cfg.warps.max(1) && (65..=74).contains(&v.nloc);
    match (two, cfg.gram_rounds) {
        (false, _) => 0,
        (true, 3) => 1,
        (true, _) => 2,
    }
}

/// The kernel's GRAM_SPLIT2 for `cfg` on `v`: with two rounds ([`gram_split`]) and `gram_rounds`
/// 3, the second cut at function 32 (a third round on the rest); else 0.
pub(crate) fn gram_split2(v: &Variant, cfg: TiledConfig) -> usize {
    if gram_split(v, cfg) == 1 {
        2
    } else {
        0
    }
}

/// Doubles of the Gram tiles' image region for `v` cut at `split` and `split2` ([`gram_split`],
/// [`gram_split2`]; 16-function units, 0: no cut): the longest round's packed rows (a round's rows
/// are contiguous), one double for the 16-byte phase, even.
pub(crate) fn gram_image_doubles(v: &Variant, split: usize, split2: usize) -> usize {
    let nd = v.nloc * v.ncomp;
    let rows = |r: usize| r * nd - r * r.saturating_sub(1) / 2;  // packed entries of rows [0, r)
    let cuts: Vec<usize> = [split, split2].into_iter().filter(|&s| s > 0).map(|s| rows(v.dim * 16 * s)).collect();
    let bounds: Vec<usize> = std::iter::once(0).chain(cuts).chain(std::iter::once(rows(nd))).collect();
    let span = bounds.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    (span + 2) & !1
}

/// Tiles of 16 × 8 over the upper triangle of the Gram matrix G = HᵀH of `v`'s DIM·NLOC
/// (function, derivative) rows (`element_schemes.cu`'s GT: 16-row strips, 8-column blocks on or
/// above the diagonal; p = 4 elasticity: 100).
pub(crate) fn gram_tile_count(v: &Variant) -> usize {
    let gn = v.dim * v.nloc;
    let (gs16, gb8) = (gn.div_ceil(16), gn.div_ceil(8));
    (0..gs16).map(|t| gb8.saturating_sub(2 * t)).sum()
}

/// (rows, points a row) of a transposed Gram pass (`element_schemes.cu`'s GROWS, GPS) where `cfg`
/// stages them on `v` with `qcp` points a pass and `stagers` staging threads (GRAM_WIDE): asked,
/// with Gram tiles ([`gram`]) on k8 or k16, whole 16-point blocks a pass, a thread per point of a
/// pass and the blocks in the cell's tail (no `gram_overlap`); GPS ≡ 2 (mod 16) at k16, 8 at k8,
/// so a quarter-warp's double2 fragment loads hit distinct banks.
pub(crate) fn gram_wide_rows(v: &Variant, cfg: TiledConfig, qcp: usize, stagers: usize) -> Option<(usize, usize)> {
    let ok = cfg.gram_wide && gram(v, cfg) && cfg.mma_k >= 8 && qcp > 0 && qcp % 16 == 0 && cfg.gram_overlap == 0 && stagers % qcp == 0;
    let rows = v.dim * (16 * (v.dim * v.nloc).div_ceil(16)).div_ceil(v.dim);
    ok.then_some((rows, qcp + if cfg.mma_k == 16 { 2 } else { 8 }))
}

/// The kernel's GRAM_WIDE for `cfg` launched on `v` as `l` ([`gram_wide_rows`]).
pub(crate) fn gram_wide(v: &Variant, cfg: TiledConfig, l: &super::schemes::TiledLaunch) -> bool {
    gram_wide_rows(v, cfg, l.qcp, l.threads).is_some()
}

/// The kernel's GRAM_OVERLAP for `cfg` launched on `v` as `l`: its `gram_overlap` (at most 3) where Gram tiles
/// run ([`gram`]) over several passes of points a cell (the blocks form in the first, leave in
/// the second), with a point's staging threads within one warp (the next J⁻¹ table's first pass
/// is formed by them behind a warp barrier); else 0, the blocks in the cell's own tail.
pub(crate) fn gram_overlap(v: &Variant, cfg: TiledConfig, l: &super::schemes::TiledLaunch) -> u8 {
    let spp = (l.threads / l.qcp.max(1)).max(1);
    if gram(v, cfg) && v.nq.div_ceil(l.qcp.max(1)) >= 2 && spp <= 32 && 32 % spp == 0 {
        cfg.gram_overlap.min(3)
    } else {
        0
    }
}

/// The kernel's GRAM_SPREAD for `cfg` launched on `v` as `l`: asked, with overlapped blocks
/// ([`gram_overlap`]) and a pass more than their two parts.
pub(crate) fn gram_spread(v: &Variant, cfg: TiledConfig, l: &super::schemes::TiledLaunch) -> bool {
    cfg.gram_spread && gram_overlap(v, cfg, l) > 0 && v.nq.div_ceil(l.qcp.max(1)) >= 3
}

/// Whether `cfg` runs Gram tiles on `v` (GRAM): asked, with pipelined rounds forming the next J⁻¹
/// table after the image (`pipe_rounds` 2), one round of tiles a cell (the image holds the whole
/// triangle, first G's, then the matrix's) or, at trunk p = 5, two ([`gram_split`]), and a block
/// of the matrix per pair of functions the same nine entries as its moments (NCOMP = DIM = 3:
/// elasticity); elsewhere the moment tiles run. Two rounds take the blocks in the cell's tail in
/// strip order on plain passes (no `gram_overlap`, `gram_pairs`, `gram_wide`).
pub(crate) fn gram(v: &Variant, cfg: TiledConfig) -> bool {
    let rounds_ok = super::schemes::tile_count(v.nloc, false) <= cfg.warps.max(1)
        || (gram_split(v, cfg) > 0 && cfg.gram_overlap == 0 && !cfg.gram_pairs && !cfg.gram_wide);
    cfg.gram && pipe_rounds(v, cfg) == 2 && v.dim == 3 && v.ncomp == v.dim && rounds_ok
}

/// The kernel's PIPE_ROUNDS for `cfg` (0: none): where it asks for pipelined rounds (`pipe` with
/// `pipe_rounds` 1 or 2) with what the pipeline needs — packed unpaired tiles with whole-strip
/// copies (`wide` 3), one tile per warp, one cell group, every warp staging, nothing deferred,
/// split, prefetched or prestaged, warp 0 a lane per coordinate — beyond 32 functions (p ≤ 3
/// keep round 14's pipeline).
pub(crate) fn pipe_rounds(v: &Variant, cfg: TiledConfig) -> u8 {
    let asked = cfg.pipe
        && cfg.pipe_rounds > 0
        && v.nloc > 32
        && cfg.packed
        && !cfg.paired
        && cfg.wide == 3
        && cfg.cells <= 1
        && cfg.tiles_per_warp.max(1) == 1
        && cfg.producers == 0
        && cfg.defer == 0
        && !cfg.split
        && !cfg.prefetch
        && cfg.prestage == 0
        && v.nv * v.dim <= 32;
    if asked {
        cfg.pipe_rounds.min(2)
    } else {
        0
    }
}

/// Doubles of the pipelined rounds' image region for `nloc` functions of `ncomp` components on
/// `warps` one-tile warps: the longest round's packed rows (from its first tile's first entry to
/// its last tile's last), one double for the 16-byte phase, even (`element_schemes.cu`'s
/// `pipe_round_span`, unpaired tiles in order of 16-row strip and 8-column block).
pub(crate) fn pipe_image_doubles(nloc: usize, ncomp: usize, warps: usize) -> usize {
    let (nd, wr, nb8, n16) = (nloc * ncomp, 8 * ncomp, nloc.div_ceil(8), nloc.div_ceil(16));
    let tiles: Vec<(usize, usize)> = (0..n16).flat_map(|a| (2 * a..nb8).map(move |c| (a, c))).collect();
    let packed = |r: usize, s: usize| r * nd - r * r.saturating_sub(1) / 2 + (s - r);
    let lo = |(a, c): (usize, usize)| {
        let r0 = 2 * wr * a;
        packed(r0, r0.max(wr * c))
    };
    let hi = |(a, c): (usize, usize)| {
        let ce = (wr * (c + 1)).min(nd);
        let last = (2 * wr * (a + 1)).min(nd).min(ce) - 1;
        packed(last, ce - 1) + 1
    };
    let span = tiles.chunks(warps.max(1)).map(|round| hi(round[round.len() - 1]) - lo(round[0])).max().unwrap_or(0);
    (span + 2) & !1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_images_as_the_kernel_spans_them() {
        // p = 4: one round, the whole packed triangle of 150 rows; p = 5: round 1 spans 16 722.
        assert_eq!(pipe_image_doubles(50, 3, 16), (150 * 151 / 2 + 2) & !1);
        assert_eq!(pipe_image_doubles(74, 3, 16), 16_724);
    }

    fn variant(nloc: usize, nq: usize) -> Variant {
        Variant { dim: 3, nv: 8, nloc, nq, ncomp: 3, affine: false, qf: "Elasticity".into(), full_gradient: true, reftensor: false, tuning: Default::default() }
    }

    #[test]
    fn pipelined_rounds_fit_a_block() {
        // p = 4: 32 points a pass, the whole triangle; p = 5: 16 points, the longest round's rows;
        // within the 227 KB a block may take, one block of 16 warps an SM. None at p ≤ 3.
        let dims = Some((6, 6));
        for (nloc, nq, qcp) in [(50, 125, 32), (74, 216, 16)] {
            let shapes = TiledConfig::round15_high(nloc);
            assert_eq!(shapes.len(), 3);
            for cfg in shapes {
                let v = variant(nloc, nq);
                assert!(pipe_rounds(&v, cfg) > 0, "nloc {nloc} {}: pipelined rounds", cfg.label());
                let l = super::super::schemes::tiled_shape(&v, cfg, dims);
                assert_eq!((l.threads, l.qcp, l.min_blocks, l.image), (512, qcp, 1, pipe_image_doubles(nloc, 3, 16)), "nloc {nloc} {}", cfg.label());
                assert!(l.smem <= 227 * 1024, "nloc {nloc} {}: {} bytes", cfg.label(), l.smem);
            }
        }
        assert!(TiledConfig::round15_high(32).is_empty());
        // Round 16: Gram tiles at p = 4 only (p = 5 takes two rounds of tiles a cell), for
        // elasticity only; their staging rows are 164 doubles a point (150 rounded to 160, + 4),
        // the image the whole triangle, within a block's shared memory.
        let v = variant(50, 125);
        for cfg in TiledConfig::round16_high(50) {
            assert!(gram(&v, cfg), "{}", cfg.label());
            let l = super::super::schemes::tiled_shape(&v, cfg, dims);
            assert_eq!((l.threads, l.qcp, l.image), (512, 32, (150 * 151 / 2 + 2) & !1), "{}", cfg.label());
            assert!(l.smem <= 227 * 1024 && l.smem >= 8 * (2 * 32 * 164 + l.image), "{}: {} bytes", cfg.label(), l.smem);
        }
        assert!(TiledConfig::round16_high(74).is_empty() && TiledConfig::round16_high(32).is_empty());
        // Round 17: the overlapped blocks on those Gram tiles (32 points a pass: 16 staging
        // threads a point, within a warp; 4 passes), none where Gram tiles do not run.
        let overlap = |v: &Variant, c: TiledConfig| gram_overlap(v, c, &super::super::schemes::tiled_shape(v, c, dims));
        let spread = |v: &Variant, c: TiledConfig| gram_spread(v, c, &super::super::schemes::tiled_shape(v, c, dims));
        let shapes = TiledConfig::round17_high(50);
        assert_eq!(shapes.iter().map(|c| (overlap(&v, *c), spread(&v, *c))).collect::<Vec<_>>(), [(1, true), (3, true), (1, false), (2, false), (3, false)]);
        assert!(!spread(&v, TiledConfig { gram_overlap: 0, ..shapes[0] }), "spread blocks: overlapped only");
        assert!(shapes.iter().all(|c| c.mma_k == 16 && gram(&v, *c)));
        assert_eq!(overlap(&v, TiledConfig::round16_high(50)[0]), 0, "round 16's Gram tiles: the blocks in the cell's tail");
        assert!(TiledConfig::round17_high(74).is_empty() && TiledConfig::round17_high(32).is_empty());
        // Round 18: transposed passes (two of 162 rows × 34 or 40 points) and strip-pair order on
        // the Gram tiles, within a block's shared memory, still 32 points a pass; none elsewhere.
        for c in TiledConfig::round18_high(50) {
            let l = super::super::schemes::tiled_shape(&v, c, dims);
            assert!(gram(&v, c) && l.qcp == 32 && l.smem <= 227 * 1024, "{}: {} bytes", c.label(), l.smem);
            let gps = if c.mma_k == 16 { 34 } else { 40 };
            assert_eq!(gram_wide(&v, c, &l), c.gram_wide, "{}", c.label());
            if c.gram_wide {
                assert!(l.smem >= 8 * (2 * 162 * gps + l.image), "{}: {} bytes", c.label(), l.smem);
            }
        }
        assert!(!gram_wide(&v, TiledConfig { gram_overlap: 1, ..TiledConfig::round18_high(50)[0] }, &super::super::schemes::tiled_shape(&v, TiledConfig::round18_high(50)[0], dims)), "transposed passes: blocks in the cell's tail only");
        assert!(TiledConfig::round18_high(74).is_empty() && TiledConfig::round18_high(32).is_empty());
        // Round 19: Gram tiles on 20, 25 and 32 warps (G's 100 tiles bound the warps, not the 16
        // moment tiles), a block within the register file and shared memory (no warp scratch:
        // the Gram tiles write through their image), still 32 points a pass; none elsewhere.
        assert_eq!(gram_tile_count(&v), 100);
        let wide = TiledConfig::round19_high(50);
        assert!(wide.iter().any(|c| c.gram_unroll) && wide.iter().any(|c| c.warps > 16));
        for c in wide {
            let l = super::super::schemes::tiled_shape(&v, c, dims);
            assert!(gram(&v, c), "{}", c.label());
            assert_eq!((l.threads, l.qcp, l.min_blocks), (32 * c.warps, 32, 1), "{}", c.label());
            assert!(l.smem <= 227 * 1024 && l.smem >= 8 * (2 * 32 * 164 + l.image), "{}: {} bytes", c.label(), l.smem);
        }
        assert!(TiledConfig::round19_high(74).is_empty() && TiledConfig::round19_high(32).is_empty());
        // Round 20: the diagonal tiles' B fragments from the A fragment, on the Gram tiles in
        // strip order (not strip pairs), the default's staging and image; none elsewhere.
        let diag = TiledConfig::round20_high(50);
        assert!(diag.iter().any(|c| !c.tensor && c.gram_diag) && diag.iter().any(|c| !c.tensor && !c.gram_diag), "table-staged passes, with and without");
        for c in diag {
            let l = super::super::schemes::tiled_shape(&v, c, dims);
            assert!(gram(&v, c) && !c.gram_pairs && c.mma_k == 16 && (c.gram_diag || !c.tensor), "{}", c.label());
            assert_eq!((l.threads, l.qcp, l.min_blocks), (32 * c.warps, 32, 1), "{}", c.label());
            assert!(l.smem <= 227 * 1024, "{}: {} bytes", c.label(), l.smem);
        }
        assert!(TiledConfig::round20_high(74).is_empty() && TiledConfig::round20_high(32).is_empty());
        let default = TiledConfig::for_functions(50);
        assert!(default.gram_diag && default.gram_unroll && default.tensor && default.warps == 16 && gram(&v, default), "p = 4's default since round 20: diag-b, unrolled, 16 warps");
        assert!(!TiledConfig::for_functions(74).gram_diag && !TiledConfig::for_functions(32).gram_diag, "p = 3, 5 keep their shapes");
        // Round 21: p = 5's Gram tiles in two rounds (functions 0–31, then 32–73: 138 and 72
        // tiles), the longer round's rows (16 752 doubles) in the image, within a block's shared
        // memory at 16 points a pass; no overlapped blocks, strip pairs or transposed passes there.
        let v5 = variant(74, 216);
        let gram5 = TiledConfig::round21_high(74);
        assert!(gram5.len() == 4 && gram5.iter().any(|c| c.gram_diag) && gram5.iter().any(|c| !c.gram_diag) && gram5.iter().any(|c| c.mma_k == 8) && gram5.iter().any(|c| c.warps == 20));
        assert_eq!(gram_tile_count(&v5), 210);
        for c in gram5.iter().copied() {
            let l = super::super::schemes::tiled_shape(&v5, c, dims);
            assert!(gram(&v5, c) && gram_split(&v5, c) == 2, "{}", c.label());
            assert_eq!((l.threads, l.qcp, l.min_blocks, l.image), (32 * c.warps, 16, 1, 16_754), "{}", c.label());
            assert!(l.smem <= 227 * 1024, "{}: {} bytes", c.label(), l.smem);
        }
        assert_eq!(gram_image_doubles(&v5, 2, 0), (96 * 222 - 96 * 95 / 2 + 2) & !1);
        assert_eq!(gram_image_doubles(&v, 0, 0), (150 * 151 / 2 + 2) & !1, "one round: the whole triangle");
        // Round 22: p = 5 in three rounds (functions 0–15, 16–31, 32–73: the first round's 9 528
        // packed entries the longest), within a block at 16 and 32 points a pass; p = 4's early
        // copy wait on the default, one round, four passes.
        assert_eq!(gram_image_doubles(&v5, 1, 2), (48 * 222 - 48 * 47 / 2 + 2) & !1);
        let three = TiledConfig::round22_high(74);
        assert_eq!(three.len(), 3);
        for c in three {
            let l = super::super::schemes::tiled_shape(&v5, c, dims);
            assert!(gram(&v5, c) && (gram_split(&v5, c), gram_split2(&v5, c)) == (1, 2), "{}", c.label());
            assert_eq!((l.threads, l.min_blocks, l.image), (512, 1, 9_530), "{}", c.label());
            assert!(l.qcp == 16 || l.qcp == 32, "{}", c.label());
            assert!(l.smem <= 227 * 1024, "{}: {} bytes", c.label(), l.smem);
        }
        let early = TiledConfig::round22_high(50);
        assert_eq!(early.len(), 1);
        let l = super::super::schemes::tiled_shape(&v, early[0], dims);
        assert!(gram_early_wait(&v, early[0], &l) && !gram_early_wait(&v, TiledConfig::for_functions(50), &l));
        assert!(!gram_early_wait(&v5, TiledConfig { gram_early_wait: true, ..TiledConfig::round21_high(74)[0] }, &l), "several rounds: no early wait");
        assert_eq!(gram_split(&v, TiledConfig::round16_high(50)[0]), 0, "p = 4: one round");
        for bad in [TiledConfig { gram_overlap: 1, ..gram5[0] }, TiledConfig { gram_pairs: true, ..gram5[0] }, TiledConfig { gram_wide: true, ..gram5[0] }] {
            assert!(!gram(&v5, bad), "two rounds: {} runs the moment tiles", bad.label());
        }
        assert!(TiledConfig::round21_high(50).is_empty() && TiledConfig::round21_high(98).is_empty());
        // Round 23: the order by SM sub-partition (ALT_ORDER 2) on p = 4's and p = 5's defaults,
        // their launch unchanged; p = 4 also with the early wait, and without alternating at all.
        let alt = |v: &Variant, c: TiledConfig| super::super::schemes::alt_order(v, c, &super::super::schemes::tiled_shape(v, c, dims));
        for (vv, nloc) in [(&v, 50), (&v5, 74)] {
            let shapes = TiledConfig::round23_high(nloc);
            let d = TiledConfig::for_functions(nloc);
            assert_eq!(alt(vv, d), 1, "nloc {nloc}: the default alternates odd warps");
            assert!(shapes[0].alt_sub && alt(vv, shapes[0]) == 2 && gram(vv, shapes[0]), "nloc {nloc}: {}", shapes[0].label());
            let (l, ld) = (super::super::schemes::tiled_shape(vv, shapes[0], dims), super::super::schemes::tiled_shape(vv, d, dims));
            assert_eq!((l.threads, l.qcp, l.smem, l.image), (ld.threads, ld.qcp, ld.smem, ld.image), "nloc {nloc}: the default's launch");
        }
        let r23 = TiledConfig::round23_high(50);
        assert_eq!(r23.iter().map(|c| (alt(&v, *c), c.gram_early_wait, c.gram_rows)).collect::<Vec<_>>(), [(2, false, false), (2, true, false), (0, false, false), (1, false, true), (2, false, true)]);
        assert!(gram_early_wait(&v, r23[1], &super::super::schemes::tiled_shape(&v, r23[1], dims)));
        assert_eq!(TiledConfig::round23_high(74).iter().map(|c| (alt(&v5, *c), c.gram_rows)).collect::<Vec<_>>(), [(2, false), (2, true)]);
        assert!(TiledConfig::round23_high(32).is_empty() && TiledConfig::round23_high(98).is_empty());
        // Round 24: p = 4's factor tables a function at a time (p = 4's Gauss rule: 5 points an
        // axis), the default's launch with the larger tables, within a block; where the planes
        // outgrow the block (6 points an axis) the 1D layout, then none, is what runs.
        let five = Some((5, 5));
        let fnt = |c: TiledConfig, dims| super::super::schemes::fn_tables(&v, c, dims);
        let r24 = TiledConfig::round24_high(50);
        assert_eq!(r24.iter().map(|c| (c.fn_tables, c.gram_rows, c.alt_sub)).collect::<Vec<_>>(), [(2, false, false), (1, false, false), (2, true, false), (2, true, true)]);
        let ld = super::super::schemes::tiled_shape(&v, TiledConfig::for_functions(50), five);
        for c in r24.iter().copied() {
            let l = super::super::schemes::tiled_shape(&v, c, five);
            assert_eq!(fnt(c, five), c.fn_tables, "{}", c.label());
            assert_eq!((l.threads, l.qcp, l.image), (ld.threads, ld.qcp, ld.image), "{}", c.label());
            let more = if c.fn_tables == 1 { 6 * 50 * 5 - 6 * 5 * 5 } else { 2 * 50 * 5 + 3 * 50 * 25 - 6 * 5 * 5 };
            assert_eq!(l.smem, ld.smem + 8 * more, "{}", c.label());
            assert!(l.smem <= 227 * 1024, "{}: {} bytes", c.label(), l.smem);
        }
        assert_eq!(fnt(r24[0], Some((6, 12))), 1, "6 points an axis: the planes do not fit, the 1D layout does");
        assert_eq!(fnt(TiledConfig { tensor: false, ..r24[0] }, five), 0, "table-staged: no factor tables");
        assert_eq!(TiledConfig::round24_high(74).iter().map(|c| (c.gram_rows, c.fn_tables)).collect::<Vec<_>>(), [(true, 0), (false, 1)]);
        assert_eq!(TiledConfig::round24_default(74), TiledConfig { gram_rows: true, ..TiledConfig::round22_default(74) }, "p = 5's default of rounds 24–26: row bases");
        assert_eq!(TiledConfig::for_functions(74), TiledConfig::round26_high(74)[0], "p = 5's default since round 27: uniform tiles, scales in the tail, 16-byte loads");
        assert_eq!(TiledConfig::for_functions(50), TiledConfig::round26_high(50)[3], "p = 4's default since round 27: uniform tiles, ids in registers, 16-byte loads");
        assert_eq!(TiledConfig::round22_default(74), TiledConfig::round22_high(74)[2]);
        assert!(TiledConfig::sweep(74)[..5] == [TiledConfig::for_functions(74), TiledConfig::round24_default(74), TiledConfig::round25_high(74)[0], TiledConfig::round25_high(74)[1], TiledConfig::round24_high(74)[1]] && TiledConfig::sweep(74)[5] == TiledConfig::round22_default(74), "p = 5's sweep: the default (round 26's row), the previous default, round 25's rows, fn-factors, the default before round 24");
        // p = 5 (6 points an axis, ≤ 10 factors): the 1D layout fits beside the default's 32-point passes.
        let f5 = TiledConfig::round24_high(74)[1];
        let (l5, ld5) = (super::super::schemes::tiled_shape(&v5, f5, Some((6, 10))), super::super::schemes::tiled_shape(&v5, TiledConfig::for_functions(74), Some((6, 10))));
        assert_eq!(super::super::schemes::fn_tables(&v5, f5, Some((6, 10))), 1);
        assert_eq!((l5.qcp, l5.image, l5.smem), (ld5.qcp, ld5.image, ld5.smem + 8 * 6 * 6 * (74 - 10)));
        assert!(TiledConfig::round24_high(32).is_empty() && TiledConfig::round24_high(98).is_empty());
        // Round 25: p = 4's scales in the tail (FN_REGS 1), with 16-byte staging loads
        // (STAGE_WIDE), each with row bases, and the factor ids in registers too (FN_REGS 2), on the
        // default's launch: the factor tables unchanged (interleaved, not larger), no shared memory
        // more. p = 5 (three rounds: a thread's functions change by round) the scales in the tail
        // only, alone and with the 16-byte loads; asking it for ids in registers gives 1.
        let r25 = TiledConfig::round25_high(50);
        assert_eq!(r25.iter().map(|c| (c.fn_regs, c.stage_wide, c.gram_rows)).collect::<Vec<_>>(), [(1, false, false), (1, true, false), (1, false, true), (1, true, true), (2, true, false)]);
        let r26 = TiledConfig::round26_high(50);
        let sw = TiledConfig::sweep(50);
        assert!(sw[0] == r26[3] && sw[1] == TiledConfig::round24_default(50) && sw[2..4] == r25[..2] && sw[4..7] == r26[..3] && sw[7] == r26[4] && sw[8..11] == r25[2..] && sw[11] == r24[1], "p = 4's sweep: the default (round 26's fourth row), the previous default, round 25's first two rows, round 26's others, round 25's others, fn-factors");
        for c in r25.iter().copied() {
            let l = super::super::schemes::tiled_shape(&v, c, five);
            assert_eq!(super::super::schemes::fn_regs(&v, c, five, &l), c.fn_regs, "{}", c.label());
            assert_eq!(super::super::schemes::stage_wide(c, five), c.stage_wide, "{}", c.label());
            assert_eq!((l.threads, l.qcp, l.image, l.smem, fnt(c, five)), (ld.threads, ld.qcp, ld.image, ld.smem, 0), "{}", c.label());
        }
        let r25_5 = TiledConfig::round25_high(74);
        assert_eq!(r25_5.iter().map(|c| (c.fn_regs, c.stage_wide, c.gram_rows)).collect::<Vec<_>>(), [(1, false, true), (1, true, true)]);
        let six = Some((6, 6));
        for c in r25_5.iter().chain(&[TiledConfig { fn_regs: 2, ..r25_5[0] }]).copied() {
            let (l, l0) = (super::super::schemes::tiled_shape(&v5, c, six), super::super::schemes::tiled_shape(&v5, TiledConfig::for_functions(74), six));
            assert_eq!(super::super::schemes::fn_regs(&v5, c, six, &l), 1, "p = 5 {}: the scales in the tail, no ids in registers", c.label());
            assert_eq!((l.qcp, l.smem, l.image), (l0.qcp, l0.smem, l0.image), "{}", c.label());
        }
        assert_eq!(super::super::schemes::fn_regs(&v, r25[0], None, &ld), 0, "no factor tables: no scales in the tail");
        assert_eq!(super::super::schemes::fn_regs(&v, TiledConfig { fn_tables: 1, ..r25[4] }, five, &ld), 0, "per-function tables: scales in the tables already");
        assert!(!super::super::schemes::stage_wide(TiledConfig { fn_tables: 1, ..r25[1] }, five) && !super::super::schemes::stage_wide(r25[1], None));
        let over = TiledConfig { gram_overlap: 1, ..r25[0] };
        assert_eq!(super::super::schemes::fn_regs(&v, over, five, &super::super::schemes::tiled_shape(&v, over, five)), 0, "overlapped blocks: no scales in the tail");
        assert!(TiledConfig::round25_high(32).is_empty() && TiledConfig::round25_high(98).is_empty());
        // Round 26: the tile indices warp-uniform on round 25's rows (p = 4 with the ids in
        // registers, alone and with 16-byte loads; the pair classes on three of them), the default's
        // launch; the pair classes' slot table (1 504 u16 slots at p = 4: 376 doubles) the only
        // shared memory more. p = 5 (three rounds): no pair classes, asked or not.
        assert_eq!(r26.iter().map(|c| (c.uniform_tiles, c.fn_regs, c.stage_wide, c.pair_classes, c.gram_rows)).collect::<Vec<_>>(), [(true, 1, false, true, false), (true, 2, false, false, false), (true, 1, true, true, false), (true, 2, true, false, false), (true, 2, false, true, false)]);
        assert_eq!(pair_class_slots(50), 1504);
        assert!(pair_class_slots(50) >= 50 * 51 / 2 && pair_class_slots(50) <= 3 * 512, "p = 4: every pair a slot, three slots a thread");
        for c in r26.iter().copied() {
            let l = super::super::schemes::tiled_shape(&v, c, five);
            let defs = super::super::schemes::scheme_defines_with(&v, c, five);
            assert_eq!(super::super::schemes::fn_regs(&v, c, five, &l), c.fn_regs, "{}", c.label());
            assert!(uniform_tiles(&v, c) && defs.contains(&"UNIFORM_TILES=1".to_string()), "{}", c.label());
            assert_eq!(defs.contains(&"PAIR_CLASSES=1".to_string()), c.pair_classes, "{}", c.label());
            let table = if c.pair_classes { 8 * 376 } else { 0 };
            assert_eq!((l.threads, l.qcp, l.image, l.smem, fnt(c, five)), (ld.threads, ld.qcp, ld.image, ld.smem + table, 0), "{}", c.label());
        }
        let ds = super::super::schemes::scheme_defines_with(&v, TiledConfig::round24_default(50), five);
        assert!(ds.contains(&"UNIFORM_TILES=0".to_string()) && ds.contains(&"PAIR_CLASSES=0".to_string()), "the previous default unchanged");
        let dn = super::super::schemes::scheme_defines_with(&v, TiledConfig::for_functions(50), five);
        assert!(dn.contains(&"UNIFORM_TILES=1".to_string()) && dn.contains(&"FN_REGS=2".to_string()) && dn.contains(&"STAGE_WIDE=1".to_string()), "round 27's default: {dn:?}");
        assert!(!pair_classes(&v, TiledConfig { fn_regs: 0, ..r26[0] }, five), "pair classes: the signs read in the tail (fn_regs)");
        assert!(!pair_classes(&v, r26[0], None) && !pair_classes(&v, TiledConfig { gram_overlap: 1, ..r26[0] }, five), "pair classes: factor tables, the blocks in the cell's tail");
        let r26_5 = TiledConfig::round26_high(74);
        assert_eq!(r26_5.iter().map(|c| (c.uniform_tiles, c.fn_regs, c.stage_wide, c.gram_rows)).collect::<Vec<_>>(), [(true, 1, true, true)]);
        let (l, l0) = (super::super::schemes::tiled_shape(&v5, r26_5[0], six), super::super::schemes::tiled_shape(&v5, TiledConfig::for_functions(74), six));
        assert_eq!((l.qcp, l.smem, l.image), (l0.qcp, l0.smem, l0.image));
        assert!(uniform_tiles(&v5, r26_5[0]) && !pair_classes(&v5, TiledConfig { pair_classes: true, ..r26_5[0] }, six), "p = 5: uniform tiles, no pair classes (three rounds)");
        assert!(!uniform_tiles(&v, TiledConfig { uniform_tiles: true, ..TiledConfig::round15_high(50)[0] }), "moment tiles: no uniform Gram tiles");
        assert!(TiledConfig::round26_high(32).is_empty() && TiledConfig::round26_high(98).is_empty());
        assert!(!gram(&Variant { ncomp: 1, qf: "Diffusion".into(), ..variant(50, 125) }, TiledConfig::round16_high(50)[0]), "scalar: no Gram tiles");
        assert_eq!(pipe_rounds(&variant(32, 64), TiledConfig { pipe_rounds: 2, ..TiledConfig::round14(32)[0] }), 0, "p = 3 keeps round 14's pipeline");
    }
}
