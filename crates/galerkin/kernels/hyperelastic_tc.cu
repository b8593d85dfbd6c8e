// The tensor-core scheme's kernel (WPB; its description and parts in `hyperelastic_tc.cuh`).
#ifdef WPB
// HK_ZERO_AHEAD (the thirty-first pass, `src/hyperelastic/ahead.rs`): the host launches the cells in
// chunks, in launch order, and each launch also zeroes the CSR values that the next chunk's cells are
// the first to touch — segments zseg[s] = offset (48 bits) | length (16 bits), a block's share by
// grid stride, before its cell — so that the zeroing pass runs under the compute-bound kernel
// instead of before it (the first chunk's values by a launch with no cells).
#ifdef HK_ZERO_AHEAD
#define HK_ZERO_ARGS , const u64 *__restrict__ zseg, u32 nzseg
#else
#define HK_ZERO_ARGS
#endif
// HK_CHAIN (thirty-fourth pass, `src/hyperelastic/chain.rs`): a block (one cell's warps) per segment of
// face neighbours, positions seg_ptr[s]..seg_ptr[s + 1] of the cells (laid out in segment order), in
// turn; each cell's link to the next (`links[c]`: the shared nodes' local indices in both cells and their
// mask) says which node blocks the next cell shares. Those are not added: they stay in `s_carry` (the
// NF × NF shared nodes' 6 upper component blocks) and the next cell adds them to its own staged blocks
// before its scatter, so a value two neighbours share is added to the matrix once. Measured slower on the
// H100 (−28 % of the L2 reductions; the segments' L2 working set and the carry's registers cost more:
// BENCHMARKS.md's thirty-fourth pass): opt-in.
#ifdef HK_CHAIN
#define HK_CHAIN_NF 6
#define HK_CHAIN_ARGS , const u32 *__restrict__ seg_ptr, const u64 *__restrict__ links, u32 nseg
#if WPB != 1 || defined(HK_PERSIST) || defined(HK_PATCH) || defined(HK_LAW_WIDE) || defined(HK_ZERO_AHEAD) || defined(HK_STAGE) || defined(HK_UPPER) || defined(HK_FRAG_SCATTER) || defined(HK_NO_SCATTER)
#error "HK_CHAIN is the staged scatter's with one cell a block (WPB = 1), not with HK_PERSIST, HK_PATCH, HK_LAW_WIDE, HK_ZERO_AHEAD, HK_STAGE, HK_UPPER, HK_FRAG_SCATTER or HK_NO_SCATTER"
#endif
#else
#define HK_CHAIN_ARGS
#endif
// Whether this warp's cell adds anything (HK_PATCH_TURNS: not past the patch's end).
#undef HK_LIVE
#if defined(HK_PATCH) && defined(HK_PATCH_TURNS)
#define HK_LIVE live
#else
#define HK_LIVE true
#endif

#ifdef HK_CHAIN
// The carry between two cells of a segment, on the cell's staged blocks st[i·6·NLOC + p·NLOC + j]:
// first the blocks the cell before left (`in`: its link, the nodes' places here from bit 24) are added,
// then the blocks shared with the next cell (`out`: this cell's link, the places here from bit 0) are
// kept for it, in the order of the shared nodes; the scatter then skips the pairs of `out`'s mask.
__device__ __forceinline__ void hk_chain_carry(double* st, u64 in, u64 out, double* carry, int tid) {
    // (a fixed loop over the NF × 6 × NF places, so that the divisions are by constants: the first
    // build's loops bounded by the counts divided by them at run time, +50 % instructions a cell)
    constexpr int N = HK_CHAIN_NF * 6 * HK_CHAIN_NF;
    const int nin = __popc((u32)(in >> 48)), nout = __popc((u32)(out >> 48));
#pragma unroll
    for (int k0 = 0; k0 < N; k0 += TPC) {
        const int k = k0 + tid, s = k / (6 * HK_CHAIN_NF), p = k / HK_CHAIN_NF % 6, t = k % HK_CHAIN_NF;
        if (k < N && s < nin && t < nin) st[((in >> (24 + 4 * s)) & 15) * TC_NCOL + p * NLOC + ((in >> (24 + 4 * t)) & 15)] += carry[k];
    }
    HK_CSYNC();  // every carried block is in before any is kept or scattered
#pragma unroll
    for (int k0 = 0; k0 < N; k0 += TPC) {
        const int k = k0 + tid, s = k / (6 * HK_CHAIN_NF), p = k / HK_CHAIN_NF % 6, t = k % HK_CHAIN_NF;
        if (k < N && s < nout && t < nout) carry[k] = st[((out >> (4 * s)) & 15) * TC_NCOL + p * NLOC + ((out >> (4 * t)) & 15)];
    }
}
#endif

extern "C" __global__ void HK_BOUNDS hyper_assemble(HK_KERNEL_ARGS HK_PATCH_ARGS HK_ZERO_ARGS HK_CHAIN_ARGS) {
#ifdef HK_ZERO_AHEAD
    // (no barrier: no other thread of this launch reads or adds to these values)
    if (want_k)
        for (u32 sg = blockIdx.x; sg < nzseg; sg += gridDim.x) {
            const u64 z = zseg[sg];
            double* zp = vals + (z & 0xffffffffffffull);
            for (u32 k = threadIdx.x; k < (u32)(z >> 48); k += blockDim.x) zp[k] = 0.0;
        }
#endif
    __shared__ HkCell s_cell[WPB][HK_BUFS];
#ifdef HK_PATCH
    extern __shared__ double s_acc[];  // NSLOT * 9: the patch's slots
#endif
    __shared__ __align__(16) double s_g[WPB][NQ][NLOC][3];
    __shared__ HK_PT_ALIGN double s_pt[WPB][TC_REC];
    __shared__ __align__(16) double s_y[WPB][3 * QC][TC_YS];
#ifdef HK_CHAIN
    __shared__ double s_carry[WPB][HK_CHAIN_NF * HK_CHAIN_NF * 6];  // [s][p][t]: shared nodes s, t; component pair p
#endif
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wts = ggeo + NQ * NV * 3;
    // wp: the cell in the block; tid: the thread in the cell; wq: the warp in the cell.
    const int wp = threadIdx.x / TPC, tid = threadIdx.x % TPC, lane = threadIdx.x % 32, wq = tid / 32;
#ifdef HK_COUNT_JACOBIAN  // (host SASS counts only, `scripts/ptxas-registers.py`: the Jacobian's path alone)
    want_k = 1;
#endif
#if defined(HK_PATCH)
    (void)ncells;  // (the number of patches: the grid)
    if (want_k) {
        for (int k = threadIdx.x; k < NSLOT * 9; k += TPC * WPB) s_acc[k] = 0.0;
        __syncthreads();
    }
#ifdef HK_PATCH_TURNS  // every warp the same rounds (the turns' block barriers): past the patch's
                       // end a warp integrates its last cell again and adds nothing
    const u32 p0 = patch_ptr[blockIdx.x], p1 = patch_ptr[blockIdx.x + 1];
    for (u32 base = p0; base < p1; base += WPB) {
        const bool live = base + wp < p1;
        const u32 pk = live ? base + wp : p1 - 1;
#else
    for (u32 pk = patch_ptr[blockIdx.x] + wp; pk < patch_ptr[blockIdx.x + 1]; pk += WPB) {
#endif
        const u64 c = patch_cells[pk];
        HkCell& cell = s_cell[wp][0];
        HK_CSYNC();  // the cell before has done reading the record and the buffers
        hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
        HK_CSYNC();
#elif defined(HK_PERSIST)
    const u64 stride = (u64)gridDim.x * WPB;
    u64 c = (u64)blockIdx.x * WPB + wp;
#ifdef HK_PREFETCH
    if (c < ncells) {  // the first cell's record, both stages
        hk_fetch_ids(c, tid, cell_verts, cell_nodes, frames, has_frames, want_k, kpos, s_cell[wp][0]);
        hk_async_wait();
        HK_CSYNC();
        hk_fetch_vals(tid, coords, u, want_k, row_ptr, s_cell[wp][0]);
    }
#endif
    for (int buf = 0; c < ncells; c += stride, buf ^= HK_BUFS - 1) {
        HkCell& cell = s_cell[wp][buf];
#ifdef HK_PREFETCH
        HkCell& next = s_cell[wp][buf ^ 1];
        const bool more = c + stride < ncells;
        hk_async_wait();
        HK_CSYNC();  // this cell's record is in; the cell before has done reading `next`
        if (more) hk_fetch_ids(c + stride, tid, cell_verts, cell_nodes, frames, has_frames, want_k, kpos, next);
#else
        HK_CSYNC();  // the cell before has done reading the record and the buffers
        hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
        HK_CSYNC();
#endif
#elif defined(HK_LAW_WIDE)
    const bool live = (u64)blockIdx.x * WPB + wp < ncells;
    const u64 c = live ? (u64)blockIdx.x * WPB + wp : ncells - 1;
    HkCell& cell = s_cell[wp][0];
    hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
    HK_CSYNC();
    {
#elif defined(HK_CHAIN)
    (void)ncells;
    const u64 sg = (u64)blockIdx.x * WPB + wp;
    if (sg >= nseg) return;  // the whole segment: no block barrier follows
    const u32 s0 = seg_ptr[sg], s1 = seg_ptr[sg + 1];
    for (u64 c = s0; c < s1; ++c) {
        HkCell& cell = s_cell[wp][0];
        HK_CSYNC();  // the cell before has done reading the record and the buffers
        hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
        HK_CSYNC();
#else
    const u64 c = (u64)blockIdx.x * WPB + wp;
    if (c >= ncells) return;  // the whole cell: no block barrier follows
    HkCell& cell = s_cell[wp][0];
    hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
    HK_CSYNC();
    {
#endif
#ifdef HK_TRIM
    // G (HK_TRIM): J⁻¹ in every lane's registers, then a lane per (node j, component A), every point.
    double jinv[3][3];
    const double adet = fabs(hk_jinv(cell.x, ggeo, jinv));
    for (int k = tid; k < NLOC * 3; k += TPC) {
        const int j = k / 3, A = k % 3;
        double ma[3];
        hk_m_column(jinv, cell.rot, A, ma);
#pragma unroll
        for (int q = 0; q < NQ; ++q) {
            const double* gr = gref + (q * NLOC + j) * 3;
            s_g[wp][q][j][A] = gr[0] * ma[0] + gr[1] * ma[1] + gr[2] * ma[2];
        }
    }
#else
    // G: the geometry, in every lane's registers.
    double mm[3][3];
    const double adet = fabs(hk_geometry(cell.x, ggeo, cell.rot, mm));
    for (int k = tid; k < NQ * NLOC; k += TPC) {
        const double* gr = gref + k * 3;
#pragma unroll
        for (int A = 0; A < 3; ++A) s_g[wp][k / NLOC][k % NLOC][A] = gr[0] * mm[0][A] + gr[1] * mm[1][A] + gr[2] * mm[2][A];
    }
#endif
    HK_CSYNC();
#ifndef HK_SCATTER_ONLY  // (the sweep: the gather, the geometry and the scatter of zeros alone; its
                        // unused arrays draw NVRTC warnings, so CI does not compile it)
#ifdef HK_FUSE
    if (!want_k) {  // (with the Jacobian the law runs in the Y phase's lanes: HK_FUSE)
#endif
    // L: the law at every point (the weights w by the cell's own lanes: |det J| is theirs).
    for (int q = tid; q < NQ; q += TPC) s_pt[wp][q * TC_PT + 58] = wts[q] * adet;
#ifdef HK_LAW_WIDE
    __syncthreads();  // every cell's g' of the block
    for (int k = threadIdx.x; k < WPB * NQ; k += WPB * TPC) hk_law_point(prm, s_cell[k / NQ][0], s_g[k / NQ][k % NQ], &s_pt[k / NQ][(k % NQ) * TC_PT]);
    __syncthreads();
    if (!live) return;  // (no block barrier follows)
#else
    for (int q = tid; q < NQ; q += TPC) hk_law_point(prm, cell, s_g[wp][q], &s_pt[wp][q * TC_PT]);
    HK_CSYNC();
#endif
#if HK_RES_MMA
    if (!want_k)  // (with the Jacobian, the GEMM's extra columns give the residual)
#endif
    for (int k = tid; k < NLOC * 3; k += TPC) {
        const int j = k / 3, b = k % 3;
        double acc = 0.0;
        for (int q = 0; q < NQ; ++q) {
            const double* pt = &s_pt[wp][q * TC_PT];
            const double* g = s_g[wp][q][j];
            double y = 0.0;
#pragma unroll
            for (int B = 0; B < 3; ++B) {
                const double p = pt[22 + b * 3] * pt[31 + B] + pt[22 + b * 3 + 1] * pt[34 + B] + pt[22 + b * 3 + 2] * pt[37 + B];
                y += p * g[B];
            }
            acc += pt[58] * y;
        }
        if (HK_LIVE) atomicAdd(&r[(u64)cell.node[j] * 3 + b], acc);
    }
#ifdef HK_FUSE
    }
#endif
#endif
#ifdef HK_PREFETCH
    hk_async_wait();  // the next cell's numbers
    HK_CSYNC();
    if (more) hk_fetch_vals(tid, coords, u, want_k, row_ptr, next);
#endif
    if (!want_k) HK_NEXT_CELL;
    const int g8 = lane / 4, t4 = lane % 4;
    double acc[TC_NTW][4];  // this warp's n-tiles wq·TC_NTW + w
#pragma unroll
    for (int nt = 0; nt < TC_NTW; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0;
#ifndef HK_SCATTER_ONLY
    for (int q0 = 0; q0 < NQ; q0 += QC) {
        const int nq = NQ - q0 < QC ? NQ - q0 : QC;
#ifdef HK_FUSE
        // Y with the law (HK_FUSE): a lane per (point t, pair p), the point's record in registers.
#ifdef HK_TRIM
        double* sf = s_pt[wp];  // the chunk's F (the records' space: dead with the Jacobian)
        hk_trim_f(cell, &s_g[wp][q0], nq, lane, sf);
        HK_CSYNC();
#endif
        for (int it = tid; it < nq * 6; it += TPC) {
            const int t = it / 6, p = it % 6, a = hk_pa(p), b = hk_pb(p);
            const double(*g)[3] = s_g[wp][q0 + t];
            double pt[TC_PT];
            double ua[3], ub[3], fa[3], fb[3], va[3], vb[3];
#ifdef HK_TRIM
            hk_trim_point(prm, sf + t * 3 * TC_FS, a, b, pt, fa, fb, ua, ub, va, vb);
#else
            hk_law_point(prm, cell, g, pt);
            hk_row_of(pt + 40, a, ua);
            hk_row_of(pt + 40, b, ub);
            hk_row_of(pt + 22, a, fa);
            hk_row_of(pt + 22, b, fb);
#if LAW == 2
            hk_row_of(pt + 49, a, va);
            hk_row_of(pt + 49, b, vb);
#endif
#endif
            const double w = wts[q0 + t] * adet;
            const HkPair pr = hk_pair(pt, ua, ub, fa, fb, va, vb, a == b);
            double ab[3][3];
#ifdef HK_TRIM
            hk_trim_entries(prm, pr, w, ab);
#else
#pragma unroll
            for (int A = 0; A < 3; ++A) {
                const double dab = LAW == 2 ? hk_dab(prm, pr, A) : 0.0;
#pragma unroll
                for (int B = 0; B < 3; ++B) ab[A][B] = w * hk_entry(prm, pr, dab, A, B);
            }
#endif
            // the residual's columns: Y[(t, A), TC_NCOL + b] = w P_bA, P = F S (b = p for p < 3)
            if (p < 3) {
#pragma unroll
                for (int A = 0; A < 3; ++A) s_y[wp][t * 3 + A][TC_NCOL + p] = w * (fb[0] * pr.sm[A] + fb[1] * pr.sm[3 + A] + fb[2] * pr.sm[6 + A]);
            }
#pragma unroll
            for (int j = 0; j < NLOC; ++j) {
                const double g0 = g[j][0], g1 = g[j][1], g2 = g[j][2];
#pragma unroll
                for (int A = 0; A < 3; ++A) s_y[wp][t * 3 + A][p * NLOC + j] = ab[A][0] * g0 + ab[A][1] * g1 + ab[A][2] * g2;
            }
        }
#else
        // Y: rows (t, A) of this chunk.
        for (int it = tid; it < nq * 18; it += TPC) {
            const int t = it / 18, A = (it % 18) / 6, p = it % 6;
            const int a = hk_pa(p), b = hk_pb(p);
            const double* pt = &s_pt[wp][(q0 + t) * TC_PT];
            const double* f = pt + 22;
            const double* um = pt + 40;
            const double* vm = pt + 49;
            const HkPair pr = hk_pair(pt, um + a * 3, um + b * 3, f + a * 3, f + b * 3, vm + a * 3, vm + b * 3, a == b);
            const double dab = LAW == 2 ? hk_dab(prm, pr, A) : 0.0;
            double ab[3];
#pragma unroll
            for (int B = 0; B < 3; ++B) ab[B] = pt[58] * hk_entry(prm, pr, dab, A, B);
#if HK_RES_MMA
            // the residual's columns: Y[(t, A), TC_NCOL + b] = w P_bA, P = F S (b = p for p < 3)
            if (p < 3) s_y[wp][t * 3 + A][TC_NCOL + p] = pt[58] * (f[p * 3] * pr.sm[A] + f[p * 3 + 1] * pr.sm[3 + A] + f[p * 3 + 2] * pr.sm[6 + A]);
#endif
            const double* g = s_g[wp][q0 + t][0];
            double* y = &s_y[wp][t * 3 + A][p * NLOC];
#if HK_VEC && NLOC % 2 == 0
            // nodes 2jj and 2jj + 1: g' in three pairs, y in one (rows and points start 16-aligned)
            const double2* g2 = reinterpret_cast<const double2*>(g);
            double2* y2 = reinterpret_cast<double2*>(y);
#pragma unroll
            for (int jj = 0; jj < NLOC / 2; ++jj) {
                const double2 u0 = g2[3 * jj], u1 = g2[3 * jj + 1], u2 = g2[3 * jj + 2];
                y2[jj] = make_double2(ab[0] * u0.x + ab[1] * u0.y + ab[2] * u1.x, ab[0] * u1.y + ab[1] * u2.x + ab[2] * u2.y);
            }
#else
            for (int j = 0; j < NLOC; ++j) y[j] = ab[0] * g[j * 3] + ab[1] * g[j * 3 + 1] + ab[2] * g[j * 3 + 2];
#endif
        }
#endif  // HK_FUSE
        HK_CSYNC();
        // K: the chunk's rows in k-steps of 4.
        for (int r0 = 0; r0 < 3 * nq; r0 += 4) {
            const int rr = r0 + t4;
            const bool rv = rr < 3 * nq;
            const int t = rr / 3, A = rr % 3;
            const double a0 = rv && g8 < NLOC ? s_g[wp][q0 + t][g8][A] : 0.0;
            const double a1 = rv && g8 + 8 < NLOC ? s_g[wp][q0 + t][g8 + 8][A] : 0.0;
#pragma unroll
            for (int w = 0; w < TC_NTW; ++w) {
                const int n = (wq * TC_NTW + w) * 8 + g8;
                const double b0 = rv && n < TC_NCOLR ? s_y[wp][rr][n] : 0.0;
                hk_mma(acc[w], a0, a1, b0);
            }
        }
        HK_CSYNC();
    }
#if HK_RES_MMA
    // the residual from the fragments of its columns
#pragma unroll
    for (int w = 0; w < TC_NTW; ++w)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int i = g8 + 8 * (e / 2), n = (wq * TC_NTW + w) * 8 + 2 * t4 + e % 2;
            if (HK_LIVE && i < NLOC && n >= TC_NCOL && n < TC_NCOLR) atomicAdd(&r[(u64)cell.node[i] * 3 + (n - TC_NCOL)], acc[w][e]);
        }
#endif
#endif
#if defined(HK_PATCH) && !defined(HK_PATCH_TURNS)
    hk_patch_add(acc, wq, lane, pslot + (u64)pk * HP_NUP, s_acc);
#elif defined(HK_FRAG_SCATTER) || defined(HK_NO_SCATTER)
    // Straight from the mma fragments (the fifth pass's scatter, kept for the sweep): a lane's
    // entries lie in 2 rows and 8 column pairs, so a warp's atomic adds touch 16 rows at once.
    hk_fragments(acc, wq, lane, [&](int i, int j, int a, int b, int e, double v) {
#ifdef HK_NO_SCATTER
        (void)a;
        (void)b;
        vals[(c * TPC + tid) * 4 + e % 4] = v + (double)(cell.node[i] + cell.node[j]);
#else
        (void)e;
        const HkCell& cl = cell;
        atomicAdd(&vals[hk_row(cl, i, a, row_ptr) + hk_rank(cl, c, i, j, kpos) * 3 + b], v);
        if (a != b) atomicAdd(&vals[hk_row(cl, j, b, row_ptr) + hk_rank(cl, c, j, i, kpos) * 3 + a], v);
#endif
    });
#else
    // Staged: the fragments go to shared memory (over the point records, dead by now) as the
    // 6 upper blocks st[i][p·NLOC + j], then `hk_scatter_staged` walks the matrix row by row.
#ifdef HK_ST_Y
    double* st = &s_y[wp][0][0];  // (after the last chunk's cell barrier: Y is dead)
#else
    double* st = s_pt[wp];
#endif
#pragma unroll
    for (int w = 0; w < TC_NTW; ++w)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int i = g8 + 8 * (e / 2), n = (wq * TC_NTW + w) * 8 + 2 * t4 + e % 2;
            if (i < NLOC && n < TC_NCOL) st[i * TC_NCOL + n] = acc[w][e];
        }
    HK_CSYNC();
#if defined(HK_PATCH)  // (HK_PATCH_TURNS)
    hk_patch_turns(st, live, wp, tid, pslot + (u64)pk * HP_NUP, s_acc);
#elif defined(HK_STAGE)  // the owner gather (`hyperelastic_gather.cu`): `vals` is the stage, a record per cell
    for (int k = tid; k < NLOC * TC_NCOL; k += TPC) vals[c * (NLOC * TC_NCOL) + k] = st[k];
#elif defined(HK_CHAIN)
    {
        const u64 out = c + 1 < s1 ? links[c] : 0;  // (one load: the carry's link and the skip mask)
        hk_chain_carry(st, c > s0 ? links[c - 1] : 0, out, s_carry[wp], tid);
        hk_scatter_staged(st, cell, c, tid, TPC, row_ptr, kpos, vals, (u32)(out >> 48));
    }
#else
    hk_scatter_staged(st, cell, c, tid, TPC, row_ptr, kpos, vals);
#endif
#endif
    }  // the cell (HK_PERSIST, HK_PATCH: the loop over cells)
#ifdef HK_PATCH
    if (want_k) {
        __syncthreads();  // every cell's adds to the slots are in
        hp_flush(blockIdx.x, s_acc, threadIdx.x, TPC * WPB, flush_ptr, flush_pos, flush_meta, vals);
    }
#endif
}
#endif  // WPB
