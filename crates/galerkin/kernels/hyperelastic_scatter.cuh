// The staged scatter (the tensor-core and the moments schemes): the element matrix's 6 upper
// component blocks st[i·6·NLOC + p·NLOC + j] = K_(i,a),(j,b) (p = (a ≤ b), `hk_pab`) are walked
// row by row over the whole 3·NLOC × 3·NLOC matrix by the nthr threads of the cell, the lower
// blocks read transposed from the upper ones, so consecutive threads add consecutive columns of one
// CSR row (the 3 components of a column node contiguous, the column nodes within one row of ≈ 100
// entries): each warp-wide atomic add touches one or two rows instead of 16.
// HK_SCATTER_COLS (eighteenth pass; 16 < 3·NLOC ≤ 32, P2): the same walk with a lane per column
// (node j, component b) and the rows in turn, unrolled, so that a row's node, component and row
// start are constants or broadcasts and the lane's column terms are formed once: an entry costs
// its value's shared load, its rank and the add, not the index arithmetic of a flat loop (the
// profile of round 18: integer ALU the busiest pipe, ≈ 3 500 instructions per cell).
// HK_UPPER (twenty-first pass, `hyperelastic_upper.cu`): the matrix is symmetric, so only the
// entries of the global upper triangle are added — node blocks (node[i] < node[j]) and the upper
// half of the diagonal blocks (a ≤ b) — about 55 % of the 9·NLOC² adds and of their L2 reduction
// sectors; only those values are zeroed, and `hyper_upper_fill` then copies each lower entry from
// its transpose, so the matrix is the same full CSR, exactly symmetric.
#undef HK_KEEP  // (the CPU emulation includes this file more than once)
#ifdef HK_UPPER
#define HK_KEEP(i, j, a, b) (cell.node[i] < cell.node[j] || (cell.node[i] == cell.node[j] && (a) <= (b)))
#if defined(GT) || defined(HK_FRAG_SCATTER) || defined(HK_STAGE) || defined(HK_PATCH) || defined(HK_NO_SCATTER)
#error "HK_UPPER is the staged scatter's (`hk_scatter_staged`): not with GT, HK_FRAG_SCATTER, HK_STAGE, HK_PATCH or HK_NO_SCATTER"
#endif
#else
#define HK_KEEP(i, j, a, b) true
#endif
// HK_SCATTER_BLOCKS (round 25, with HK_SCATTER_COLS; `src/hyperelastic/blocks.rs`): the values in
// node-block storage, the nine of a node pair's block contiguous, `row_ptr` the blocks' rows
// (row_ptr[3n] = 9 × node n's first block), so entry ((i, a), (j, b)) is at hk_row(i, 0) +
// 9·rank(i, j) + 3a + b. Lane l takes entry e = 32t + l of node row i's 9·NLOC values in block
// order (block j = e / 9) in turn t: one warp-wide add covers whole 72-byte blocks (3 sectors at
// any 8-byte offset, 2 blocks of 10 cut between turns) instead of 24-byte pieces of a row (1 or 2
// sectors each; neighbouring column nodes' pieces often share one): counted on the bench's mesh,
// 291 L2 sectors a P2 cell instead of 365 (−20 %), with the same 30 adds a lane.
#ifdef HK_SCATTER_BLOCKS
#if !defined(HK_SCATTER_COLS) || DIM != 3 || 3 * NLOC > 32 || 3 * NLOC <= 16 || defined(HK_UPPER)
#error "HK_SCATTER_BLOCKS is the column walk's (HK_SCATTER_COLS, 3D, 16 < 3·NLOC ≤ 32), not with HK_UPPER"
#endif
#endif
// HK_SCATTER_BULK (stop 65; with HK_SCATTER_BLOCKS, HK_ST_Y and one warp a cell): the L2's atomic
// unit takes each of the per-lane adds apart (stop 58: it bounds the scatter at ≈ 1.37·10⁸ sectors a
// millisecond), so each block goes to the L2 as one 64-byte bulk reduction instead — Hopper's
// cp.reduce.async.bulk .add.f64 from shared memory: a block's 9 values at p (72 bytes, 8-byte
// aligned) are an aligned run of 8 (p + (p & 1), 16-byte aligned) and one ordinary atomic add.
// Row by row: the warp copies row i's NLOC runs into a slot buffer, and lane j issues block j's
// reduction; two buffers, so a row's copy waits only for the reads of the row before last.
// Measured at stop 68 (H100, BENCHMARKS.md thirty-eighth pass): all three bulk paths are slower than
// the atomic walk of HK_SCATTER_BLOCKS — the L2 splits a bulk reduction into the same sector operations,
// and the staging through shared memory costs issue slots. Kept as opt-in rows, for the record.
#if defined(HK_SCATTER_BULK) && (!defined(HK_SCATTER_BLOCKS) || defined(HK_CHAIN) || defined(HK_UPPER))
#error "HK_SCATTER_BULK is the node-block scatter's (HK_SCATTER_BLOCKS), not with HK_CHAIN or HK_UPPER"
#endif
// HK_BULK_PAD (stop 66): one 80-byte reduction a block and no atomic add — the block's 9 values and
// a zero added to the neighbouring value that completes 10 aligned ones (adding 0.0 changes no sum).
#if defined(HK_BULK_PAD) && !defined(HK_SCATTER_BULK)
#error "HK_BULK_PAD pads the bulk block scatter's runs (HK_SCATTER_BULK)"
#endif
// HK_BULK_RUNS (stop 68, with HK_BULK_PAD): the blocks of a node row that lie side by side in the
// values (their column nodes' ranks consecutive) go as one padded reduction, a run, instead of one a
// block (`blocks::bulk_runs` counts 62 runs and 272 sectors a P2 cell instead of 100 and 300). The lanes
// take the cell's nodes in the order of their global numbers, which is every row's column order,
// so a run is the lanes between two heads (a lane whose rank is not its left neighbour's plus one).
#if defined(HK_BULK_RUNS) && !defined(HK_BULK_PAD)
#error "HK_BULK_RUNS merges the padded bulk runs (HK_BULK_PAD)"
#endif
#ifdef HK_BULK_PAD
#define HK_SLOT 10  // (runs: a run of k blocks takes at most 9k + 2 ≤ 10k slots, so a run at 10 × its first lane fits)
#else
#define HK_SLOT 8
#endif
// The bulk scatter's steps, each lane its own bulk group: wait until at most the last group's reads
// of shared memory are pending (the other row buffer's); add n values from shared `src` to `dst` (the
// slots' stores first made visible to the bulk unit by the caller's fence; emulated by atomic adds);
// close the lane's group (empty where it added nothing); wait for every group (before shared memory goes).
__device__ __forceinline__ void hk_bulk_wait_read1() {
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
#endif
}
__device__ __forceinline__ void hk_bulk_fence() {
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void hk_bulk_add(double* dst, const double* src, int n) {
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;" ::"l"(dst), "r"((u32)__cvta_generic_to_shared(src)), "r"(8 * n) : "memory");
#else
    for (int m = 0; m < n; ++m) atomicAdd(&dst[m], src[m]);
#endif
}
__device__ __forceinline__ void hk_bulk_commit() {
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
__device__ __forceinline__ void hk_bulk_wait_all() {
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}
// K_(i,a),(j,b) from the 6 upper component blocks st[i·6·NLOC + pab(a, b)·NLOC + j] (a > b: transposed).
__device__ __forceinline__ double hk_block_value(const double* st, int i, int j, int a, int b) {
    return a <= b ? st[i * 6 * NLOC + hk_pab(a, b) * NLOC + j] : st[j * 6 * NLOC + hk_pab(b, a) * NLOC + i];
}
// `skip` (HK_CHAIN): the local nodes whose pairs the next cell of the segment takes over (not added).
#define HK_SKIPPED(i, j) (((skip >> (i)) & (skip >> (j)) & 1u) != 0)
__device__ __forceinline__ void hk_scatter_staged(const double* st, const HkCell& cell, u64 c, int tid, int nthr, const u32* __restrict__ row_ptr,
                                                  const unsigned short* __restrict__ kpos, double* __restrict__ vals, u32 skip = 0) {
#if defined(HK_BULK_RUNS)
    // One warp a cell, `st` in Y's space with two row buffers after the staged blocks (as below).
    (void)nthr;
    const int l = tid % 32;
    double* slots = const_cast<double*>(st) + NLOC * 6 * NLOC;
    // lane l < NLOC takes local node jt, the l-th smallest global number (the column order of every row)
    int jt = 0;
    {
        int below = 0;
        for (int m = 0; m < NLOC; ++m) below += l < NLOC && cell.node[m] < cell.node[l];
        for (int m = 0; m < NLOC; ++m) jt = __shfl_sync(0xffffffffu, below, m) == l ? m : jt;
    }
    for (int i = 0; i < NLOC; ++i) {
        double* buf = slots + (i & 1) * HK_SLOT * NLOC;
        const u64 row0 = hk_row(cell, i, 0, row_ptr), rowend = row_ptr[(u64)cell.node[i] * DIM + DIM];
        const u64 r = l < NLOC ? hk_rank(cell, c, i, jt, kpos) : 0, rl = __shfl_up_sync(0xffffffffu, r, 1);
        const u32 heads = __ballot_sync(0xffffffffu, l < NLOC && (l == 0 || r != rl + 1));
        // my run: head lane h (the last head at or below l), its lanes h … e − 1 (e: the next head or NLOC),
        // its values from row0 + 9·r_h, laid out from slot 10·h after a zero where that start is odd
        const int h = l < NLOC ? 31 - __clz(heads & ((2u << l) - 1)) : 0;
        const u32 after = l < NLOC ? heads >> (l + 1) : 0;
        const int e = after ? l + __ffs(after) : NLOC;
        const u64 ph = row0 + 9 * (r - (u64)(l - h));
        const int lead = (int)(ph & 1), at = 10 * h + lead + 9 * (l - h);
        const int jlast = __shfl_sync(0xffffffffu, jt, e - 1);
        if (i >= 2 && l < NLOC) hk_bulk_wait_read1();  // (this buffer's reads of row i − 2)
        __syncwarp();
#pragma unroll
        for (int k = 0; k < (9 * NLOC + 31) / 32; ++k) {
            const int v = 32 * k + l, tv = v < 9 * NLOC ? v / 9 : 0;
            const int to = __shfl_sync(0xffffffffu, at, tv), jv = __shfl_sync(0xffffffffu, jt, tv);
            if (v < 9 * NLOC) buf[to + v % 9] = hk_block_value(st, i, jv, v % 9 / 3, v % 3);
        }
        // the head: its run of n = 9(e − h) + lead values, made even by a zero after it, or, where the run
        // ends its row (after which may come the matrix's end), by the last value's ordinary atomic add
        const int nfull = 9 * (e - h) + lead;
        const bool head = l < NLOC && h == l, last_add = (nfull & 1) && ph + 9 * (e - h) == rowend;
        if (head) {
            if (lead) buf[10 * h] = 0.0;
            if ((nfull & 1) && !last_add) buf[10 * h + nfull] = 0.0;
            if (last_add) atomicAdd(&vals[ph + 9 * (e - h) - 1], hk_block_value(st, i, jlast, 2, 2));
        }
        hk_bulk_fence();
        __syncwarp();
        if (head) hk_bulk_add(vals + (ph - lead), buf + 10 * h, last_add ? nfull - 1 : nfull + (nfull & 1));
        if (l < NLOC) hk_bulk_commit();
    }
    if (l < NLOC) hk_bulk_wait_all();
    __syncwarp();
#elif defined(HK_SCATTER_BULK)
    // One warp a cell (WPC = 1, checked with the tensor-core scheme's defines); `st` in Y's space,
    // whose spare rows after the staged blocks hold two row buffers of NLOC 16-byte-aligned slots
    // of HK_SLOT doubles: the block's run of 8, or (HK_BULK_PAD) all 9 and a zero on the side that
    // makes 10 aligned ones, [0, v0 … v8] at odd p, [v0 … v8, 0] at even p.
    (void)nthr;
    const int l = tid % 32;
    double* slots = const_cast<double*>(st) + NLOC * 6 * NLOC;
    for (int i = 0; i < NLOC; ++i) {
        double* buf = slots + (i & 1) * HK_SLOT * NLOC;
        // lane j < NLOC: block (i, j) starts at value p; its 16-byte-aligned run of 8 is p + (p & 1)
        const u64 p = l < NLOC ? hk_row(cell, i, 0, row_ptr) + hk_rank(cell, c, i, l, kpos) * 9 : 0;
        const u32 odd = __ballot_sync(0xffffffffu, l < NLOC && (p & 1));
        // the lanes whose block's ninth value is an ordinary atomic add: every block's outside the run
        // of 8; padded, only after the last block of node i's row at an even start (the zero after an
        // even block lands on the next block's first value, and after that one may be the matrix's end)
#ifdef HK_BULK_PAD
        const u32 add9 = __ballot_sync(0xffffffffu, l < NLOC && !(p & 1) && p + 9 == (u64)row_ptr[(u64)cell.node[i] * DIM + DIM]);
#else
        const u32 add9 = 0xffffffffu;
#endif
        if (i >= 2 && l < NLOC) hk_bulk_wait_read1();  // (the buffer's reads of row i − 2)
        __syncwarp();
        for (int e = l; e < HK_SLOT * NLOC; e += 32) {
            // (an odd block: the run of 8 starts at its second value; the padded run's first slot is the zero)
            const int j = e / HK_SLOT, m = e % HK_SLOT + (HK_SLOT == 8 ? 1 : -1) * (int)((odd >> j) & 1);
            buf[e] = m >= 0 && m < 9 ? hk_block_value(st, i, j, m / 3, m % 3) : 0.0;
        }
        // the bulk run: HK_SLOT values from q (or 8 where the block's ninth is an atomic add)
        const bool ninth = l < NLOC && ((add9 >> l) & 1);
        const u64 q = (p & 1) ? (HK_SLOT == 8 ? p + 1 : p - 1) : p;
        if (ninth) {
            const int m = (p & 1) ? 0 : 8;  // the block's one value outside the run: an ordinary add
            atomicAdd(&vals[p + m], hk_block_value(st, i, l, m / 3, m % 3));
        }
        hk_bulk_fence();  // the slots' stores, seen by the bulk unit
        __syncwarp();
        if (l < NLOC) {
            hk_bulk_add(vals + q, buf + HK_SLOT * l, ninth ? 8 : HK_SLOT);
            hk_bulk_commit();
        }
    }
    if (l < NLOC) hk_bulk_wait_all();  // (before the block's shared memory goes)
    __syncwarp();
#elif defined(HK_SCATTER_BLOCKS)
    const int l = tid % 32, w = tid / 32, nw = nthr / 32;
#pragma unroll
    for (int t = 0; t < (9 * NLOC + 31) / 32; ++t) {
        const int e = 32 * t + l;
        if (e >= 9 * NLOC) continue;
        const int j = e / 9, a = e % 9 / 3, b = e % 3;
        // a ≤ b: K_(i,a),(j,b) = st[i·6·NLOC + pab(a, b)·NLOC + j]; a > b: K_(j,b),(i,a) = st[j·6·NLOC + pab(b, a)·NLOC + i]
        const int off = a <= b ? hk_pab(a, b) * NLOC + j : j * 6 * NLOC + hk_pab(b, a) * NLOC;
        const int step = a <= b ? 6 * NLOC : 1;
        for (int i = w; i < NLOC; i += nw)
            if (!HK_SKIPPED(i, j)) atomicAdd(&vals[hk_row(cell, i, 0, row_ptr) + hk_rank(cell, c, i, j, kpos) * 9 + 3 * a + b], st[off + i * step]);
    }
#elif defined(HK_SCATTER_COLS) && 3 * NLOC <= 32 && 3 * NLOC > 16
    const int cl = tid % 32, j = cl / 3, b = cl % 3, w = tid / 32, nw = nthr / 32;
    if (cl >= 3 * NLOC) return;
    // a ≤ b: K_(i,a),(j,b) = up[i·6·NLOC + a(5 − a)/2·NLOC]; a > b: K_(j,b),(i,a) = lo[a·NLOC + i]
    const double* up = st + b * NLOC + j;
    const double* lo = st + j * 6 * NLOC + hk_pab(b, 0) * NLOC;
#pragma unroll
    for (int row = 0; row < 3 * NLOC; ++row) {
        if (row % nw != w) continue;  // (two warps per cell: the rows in turn)
        const int i = row / 3, a = row % 3;
        if (!HK_KEEP(i, j, a, b) || HK_SKIPPED(i, j)) continue;
#ifdef HK_SCATTER_KEEP  // (the sweep: only HK_SCATTER_KEEP of every 5 rows, timing only)
        if (row % 5 >= HK_SCATTER_KEEP) continue;
#endif
        const double v = a <= b ? up[i * 6 * NLOC + hk_pab(a, 0) * NLOC] : lo[a * NLOC + i];
#ifdef HK_PLAIN_STORE  // (the sweep: racy plain stores at the same places, timing only)
        vals[hk_row(cell, i, a, row_ptr) + hk_rank(cell, c, i, j, kpos) * 3 + b] = v;
#else
        atomicAdd(&vals[hk_row(cell, i, a, row_ptr) + hk_rank(cell, c, i, j, kpos) * 3 + b], v);
#endif
    }
#else
    for (int k = tid; k < 9 * NLOC * NLOC; k += nthr) {
        const int row = k / (3 * NLOC), cl = k % (3 * NLOC);
        const int i = row / 3, a = row % 3, j = cl / 3, b = cl % 3;
        if (!HK_KEEP(i, j, a, b) || HK_SKIPPED(i, j)) continue;
        const double v = hk_block_value(st, i, j, a, b);
        const u64 pos = hk_row(cell, i, a, row_ptr) + hk_rank(cell, c, i, j, kpos) * 3 + b;
#if defined(HK_PLAIN_STORE)  // (the sweep: racy plain stores at the same places, timing only)
        vals[pos] = v;
#elif defined(HK_CONTIG)  // (the sweep: as many atomic adds, at consecutive places of HK_CONTIG values)
        atomicAdd(&vals[((u64)c * 9 * NLOC * NLOC + k + (pos == ~0ull ? 1 : 0)) % HK_CONTIG], v);
#else
        atomicAdd(&vals[pos], v);
#endif
    }
#endif
}

// ---- The patch reduction (`src/hyperelastic/patch.rs`): the patch kernel (`hyperelastic_patch.cu`)
// and the tensor-core scheme with HK_PATCH sum a patch's element matrices in shared memory slots, a
// slot s per distinct global node pair (lo ≤ hi), B_s[x][y] = K_(lo,x),(hi,y); `pslot[cell][pair]` =
// 2·s + flip for the cell's upper pairs i ≤ j (flip: node i is the higher global node). Then one flush.
#define HP_NUP (NLOC * (NLOC + 1) / 2)  // upper node pairs i ≤ j of a cell
#define HP_OWNED 0x8000u                // flush_meta: the row is this patch's alone (`patch::OWNED`)

// The index of the upper pair (i ≤ j) among a cell's HP_NUP: row-major over the upper triangle.
__device__ __forceinline__ int hp_up(int i, int j) { return i * NLOC - i * (i - 1) / 2 + j - i; }

// The flush of patch p's slots by nthr threads (this one tid): its directed entries (each slot as
// (lo, hi) and, off the diagonal, (hi, lo) transposed), sorted by (row node, column rank) on the host,
// added to the CSR values with global atomics (patches share their boundary nodes) or stored where the
// row is the patch's alone, lanes over consecutive places of one row: for a component a, entry e and
// b, place = flush_pos[e] + a·len(e) + b.
__device__ __forceinline__ void hp_flush(u64 p, const double* s_acc, int tid, int nthr, const u32* __restrict__ flush_ptr,
                                         const u32* __restrict__ flush_pos, const u32* __restrict__ flush_meta, double* __restrict__ vals) {
    const u32 f0 = flush_ptr[p];
    const int ne = (int)(flush_ptr[p + 1] - f0);
    for (int k = tid; k < 9 * ne; k += nthr) {
        const int a = k / (3 * ne), e = (k % (3 * ne)) / 3, bb = k % 3;
        const u32 meta = flush_meta[f0 + e];
        const int sd = (int)(meta & 0x7fffu), s = sd >> 1;
        const double v = s_acc[s * 9 + ((sd & 1) ? bb * 3 + a : a * 3 + bb)];
        double* place = &vals[(u64)flush_pos[f0 + e] + (u64)a * (meta >> 16) + bb];
        if (meta & HP_OWNED)
            *place = v;
        else
            atomicAdd(place, v);
    }
}
