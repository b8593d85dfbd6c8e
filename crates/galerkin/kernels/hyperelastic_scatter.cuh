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
// (Stops 65–68 sent the blocks by Hopper's bulk reductions, cp.reduce.async.bulk: one a block, padded,
// a row's neighbours merged — all slower on the H100, the L2 splitting them into the same sectors; removed
// at stop 69, BENCHMARKS.md thirty-sixth to thirty-eighth passes.)
#ifdef HK_SCATTER_BLOCKS
#if !defined(HK_SCATTER_COLS) || DIM != 3 || 3 * NLOC > 32 || 3 * NLOC <= 16 || defined(HK_UPPER)
#error "HK_SCATTER_BLOCKS is the column walk's (HK_SCATTER_COLS, 3D, 16 < 3·NLOC ≤ 32), not with HK_UPPER"
#endif
#endif
// K_(i,a),(j,b) from the 6 upper component blocks st[i·6·NLOC + pab(a, b)·NLOC + j] (a > b: transposed).
__device__ __forceinline__ double hk_block_value(const double* st, int i, int j, int a, int b) {
    return a <= b ? st[i * 6 * NLOC + hk_pab(a, b) * NLOC + j] : st[j * 6 * NLOC + hk_pab(b, a) * NLOC + i];
}
// `skip` (HK_CHAIN): the local nodes whose pairs the next cell of the segment takes over (not added).
#define HK_SKIPPED(i, j) (((skip >> (i)) & (skip >> (j)) & 1u) != 0)
__device__ __forceinline__ void hk_scatter_staged(const double* st, const HkCell& cell, u64 c, int tid, int nthr, const u32* __restrict__ row_ptr,
                                                  const unsigned short* __restrict__ kpos, double* __restrict__ vals, u32 skip = 0) {
#if defined(HK_SCATTER_BLOCKS)
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
