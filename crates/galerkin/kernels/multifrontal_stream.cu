// The bottom pass of the separator-row solve streamed through registers (round 10,
// `CudaMultifrontal::set_stream_bottom`), appended to multifrontal.cu (its Pass, SepPass, map
// layout, mf_mma16 and cp.async helpers).
//
// mf_mapss_{forward,backward}_* stage every column chunk of a subtree in shared memory (the whole
// gather waited for, then the product, then the store): the shared memory a chunk holds for its
// whole life caps the columns in flight per multiprocessor, and the bottom passes reached about
// half of the copy rate. Here the map alone is staged (once per block); a warp takes tiles of 8
// columns and loads the m16n8k4 B fragments straight from memory — lane (g, tq) holds local row
// k = 4·step + tq of column g: b at the eliminated rows (8 columns × 4 consecutive dofs, whole
// 32-byte sectors), x from the row-major sep at the Schur rows backward — then multiplies on the
// FP64 tensor cores and stores from the accumulators: no block barrier after the map, the next
// tile's loads issued before the current tile's stores. Only for passes with no external
// contributions (the bottom pass) and at most 4·MFS_STEPS local rows; the host checks.
//
// Forward: the root's contribution rows Y (s × 8) = G (s × ne) · b_E (ne × 8), s ≤ 16, to buf; b
// at the owned rows to sep. Backward: x_E (ne × 8) = [H K] (ne × R) · w (R × 8) to x; x at the
// owned rows from sep.
#define MFS_STEPS 12

// Loads tile col0's B fragments into bv: row k = 4·st + tq of column col (zero where invalid).
template <bool BACKWARD>
__device__ __forceinline__ void stream_load(const u32* rdof, u32 R, u32 ne, u32 col, bool valid, u32 nrhs, u64 n, const double* __restrict__ b,
                                            const double* __restrict__ sep, double (&bv)[MFS_STEPS]) {
    const u32 tq = threadIdx.x & 3;
#pragma unroll
    for (int st = 0; st < MFS_STEPS; ++st) {
        const u32 k = 4 * st + tq;
        double v = 0.0;
        if (valid && k < ne) {
            v = __ldcs(b + (u64)col * n + rdof[k]);
        } else if (BACKWARD && valid && k < R) {
            v = __ldcg(sep + (u64)rdof[k] * nrhs + col);
        }
        bv[st] = v;
    }
}

template <int NB, bool BACKWARD>
__device__ void stream_sweep(const Tree& t, const Pass& p, const SepPass& sp, u32 nrhs, u64 n, const double* __restrict__ b,
                             double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf, const u64* __restrict__ map_off,
                             const double* __restrict__ maps) {
    extern __shared__ __align__(16) double stream_smem[];
    const u32 j = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const u32 g = lane >> 2, tq = lane & 3;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    const u32* rdof = p.row_dof + r0;
    const u32 o0 = sp.own_ptr[j], nown = sp.own_ptr[j + 1] - o0;
    const double* sM = stream_smem;
    maps_stage_async<BACKWARD>(maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm), BACKWARD ? R * ldm : ne * s, ldm, stream_smem);
    mf_cp_commit();
    const u32 tiles = (nrhs + 7) / 8;
    double bv[MFS_STEPS];
    // The first tile's loads fly while the map lands.
    if (warp < tiles) stream_load<BACKWARD>(rdof, R, ne, warp * 8 + g, warp * 8 + g < nrhs, nrhs, n, b, sep, bv);
    mf_cp_wait_all();
    __syncthreads();
    const int lds = BACKWARD ? (int)ldm + MF_TC_PAD : 0;
    double* dst = nullptr;
    if (!BACKWARD) {
        const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
        dst = buf + (t.slot[root] + t.e[root]) * nrhs;
    }
    for (u32 tile = warp; tile < tiles; tile += nw) {
        const u32 col0 = tile * 8;
        double d[NB][4] = {};
#pragma unroll
        for (int st = 0; st < MFS_STEPS; ++st) {
            const u32 k = 4 * st + tq;
            if (BACKWARD) {
                const bool kv = k < R;
#pragma unroll
                for (int rt = 0; rt < NB; ++rt) {
                    if ((u32)(rt * 16) >= ldm) continue;  // a subtree with fewer eliminated rows than the pass's largest
                    const double a0 = kv ? sM[k * lds + rt * 16 + g] : 0.0, a1 = kv ? sM[k * lds + rt * 16 + g + 8] : 0.0;
                    mf_mma16(d[rt], a0, a1, bv[st]);
                }
            } else {
                const bool kv = k < ne;
                const double a0 = kv && g < s ? sM[k * s + g] : 0.0, a1 = kv && g + 8 < s ? sM[k * s + g + 8] : 0.0;
                mf_mma16(d[0], a0, a1, bv[st]);
            }
        }
        // bv consumed: the next tile's loads go out before this tile's stores.
        const u32 next = tile + nw;
        if (next < tiles) stream_load<BACKWARD>(rdof, R, ne, next * 8 + g, next * 8 + g < nrhs, nrhs, n, b, sep, bv);
#pragma unroll
        for (int rt = 0; rt < NB; ++rt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const u32 r = rt * 16 + g + 8 * (e >> 1), c = col0 + 2 * tq + (e & 1);
                if (c >= nrhs) continue;
                if (BACKWARD) {
                    if (r < ne) __stcs(x + (u64)c * n + rdof[r], d[rt][e]);
                } else if (r < s) {
                    dst[(u64)r * nrhs + c] = d[rt][e];
                }
            }
        // The owned rows, a lane per (row, column): backward x from sep, forward b to sep.
        for (u32 q = lane; q < nown * 8; q += 32) {
            const u32 k = o0 + q / 8, c = col0 + q % 8;
            if (c >= nrhs) continue;
            const u64 srow = (u64)rdof[sp.own_loc[k]] * nrhs + c, xrow = (u64)c * n + sp.own_dof[k];
            if (BACKWARD) {
                x[xrow] = __ldcg(sep + srow);
            } else {
                sep[srow] = __ldcs(b + xrow);
            }
        }
    }
}

extern "C" __global__ void mf_stream_forward(Tree t, Pass p, SepPass sp, u32 nrhs, u64 n, const double* __restrict__ b,
                                             double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf,
                                             const u64* __restrict__ map_off, const double* __restrict__ maps) {
    stream_sweep<1, false>(t, p, sp, nrhs, n, b, x, sep, buf, map_off, maps);
}
#define MF_STREAM_BACKWARD(NB)                                                                                        \
    extern "C" __global__ void mf_stream_backward_##NB(Tree t, Pass p, SepPass sp, u32 nrhs, u64 n,                   \
                                                       const double* __restrict__ b, double* __restrict__ x,          \
                                                       double* __restrict__ sep, double* __restrict__ buf,            \
                                                       const u64* __restrict__ map_off, const double* __restrict__ maps) { \
        stream_sweep<NB, true>(t, p, sp, nrhs, n, b, x, sep, buf, map_off, maps);                                     \
    }
MF_STREAM_BACKWARD(1)
MF_STREAM_BACKWARD(2)
MF_STREAM_BACKWARD(3)

// ---- The bottom forward pass by warp items (round 13, `CudaMultifrontal::set_lean_forward`) ----
// mf_stream_forward loaded its B fragments into registers (12 steps, row indices reloaded per tile,
// a block per subtree: 144 registers, one block per multiprocessor) and mf_mapss_forward stages a
// whole chunk per block and waits for all of it behind block barriers. Here a warp takes an item
// (subtree j, MFL_TILES tiles of 8 columns) and issues every tile's B fragments at once as 8-byte
// cp.async copies into its own shared memory — lane (g, tq) copies row k = 4·st + tq of column g
// (b at the eliminated rows: 4 consecutive dofs per column, whole sectors) and later reads back
// exactly what it copied, so a tile needs only its own cp.async group, no barrier. G's A
// fragments (Schur row g < 8) and the rows' dofs sit in registers for the item; each landed tile
// is multiplied on the FP64 tensor cores and Y (s × 8) = G · b_E goes from the accumulators to
// buf. Bytes in flight are held by shared memory, not registers (8 KB per warp). Bottom pass only
// (no external contributions), ≤ 32 eliminated and ≤ 8 Schur rows per subtree: the host checks.
#define MFL_STEPS 8
#define MFL_TILES 4
#define MFL_WARPS 4

// Waits until at most N of this thread's committed cp.async groups are in flight.
template <int N> __device__ __forceinline__ void mf_cp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

extern "C" __global__ void __launch_bounds__(32 * MFL_WARPS, 7) mf_lean_forward(Tree t, Pass p, SepPass sp, u32 count, u32 nrhs, u64 n,
                                                                              const double* __restrict__ b, double* __restrict__ sep,
                                                                              double* __restrict__ buf, const u64* __restrict__ map_off,
                                                                              const double* __restrict__ maps) {
    __shared__ __align__(16) double stage[MFL_WARPS][MFL_TILES][MFL_STEPS][32];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tq = lane & 3;
    const u32 groups = (nrhs + 8 * MFL_TILES - 1) / (8 * MFL_TILES);
    const u64 item = (u64)blockIdx.x * MFL_WARPS + warp;
    if (item >= (u64)count * groups) return;
    const u32 j = (u32)(item / groups), c0 = (u32)(item % groups) * 8 * MFL_TILES;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne;
    const u32* rdof = p.row_dof + r0;
    const u32 ntiles = min((nrhs - c0 + 7) / 8, (u32)MFL_TILES);
    double(*sw)[MFL_STEPS][32] = stage[warp];
    // Every tile's copies first (one group per tile, empty past the last), then G and the root.
#pragma unroll
    for (u32 tl = 0; tl < MFL_TILES; ++tl) {
        const u32 c = c0 + 8 * tl + g;
        if (tl < ntiles) {
            const double* col = b + (u64)c * n;
#pragma unroll
            for (int st = 0; st < MFL_STEPS; ++st) {
                const u32 k = 4 * st + tq;
                const bool v = c < nrhs && k < ne;
                mf_cp8(&sw[tl][st][lane], v ? col + rdof[k] : b, v);
            }
        }
        mf_cp_commit();
    }
    const double* GT = maps + map_off[j] + (u64)R * maps_ldm(ne);
    double a[MFL_STEPS];
#pragma unroll
    for (int st = 0; st < MFL_STEPS; ++st) {
        const u32 k = 4 * st + tq;
        a[st] = k < ne && g < s ? GT[k * s + g] : 0.0;
    }
    const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
    double* dst = buf + (t.slot[root] + t.e[root]) * nrhs + (u64)g * nrhs;
#pragma unroll
    for (u32 tl = 0; tl < MFL_TILES; ++tl) {
        if (tl >= ntiles) break;
        if (tl == 0) mf_cp_wait<MFL_TILES - 1>();
        else if (tl == 1) mf_cp_wait<MFL_TILES - 2>();
        else if (tl == 2) mf_cp_wait<MFL_TILES - 3>();
        else mf_cp_wait<0>();
        double acc[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
        for (int st = 0; st < MFL_STEPS; ++st) mf_mma16(acc, a[st], 0.0, sw[tl][st][lane]);
        const u32 c = c0 + 8 * tl + 2 * tq;
        if (g < s) {
            if (c < nrhs) dst[c] = acc[0];
            if (c + 1 < nrhs) dst[c + 1] = acc[1];
        }
    }
    // b at the owned separator rows to sep: a lane per (row, column), whole runs of a sep row.
    const u32 o0 = sp.own_ptr[j], nown = sp.own_ptr[j + 1] - o0, ncols = min(nrhs - c0, 8u * MFL_TILES);
    for (u32 q = lane; q < nown * ncols; q += 32) {
        const u32 k = o0 + q / ncols, c = c0 + q % ncols;
        sep[(u64)rdof[sp.own_loc[k]] * nrhs + c] = __ldcs(b + (u64)c * n + sp.own_dof[k]);
    }
}

// ---- The bottom backward pass by warps (round 13, `CudaMultifrontal::set_lean_backward`) ----
// x_E (ne × 8) = [H K] (ne × R) · w (R × 8) per tile of 8 columns, w = b at the eliminated rows
// (column-major) and x from the row-major sep at the Schur rows. A block per subtree stages
// [H K]ᵀ once (row stride ldm + MF_TC_PAD, as maps_tc_backward reads it); then each warp walks its
// tiles (warp, warp + MFB_WARPS, …) through a ring of MFB_STAGES tile buffers in its own shared
// memory: lane (g, tq) copies rows k = 4·st + tq of column g by cp.async and reads back only
// those, so two tiles stay in flight while one is multiplied and no barrier follows the map's.
// x goes from the accumulators to x, x at the owned rows from sep. Bottom pass only, at most
// 32 eliminated rows (NB ≤ 2); the host checks that the block fits the default shared memory.
#define MFB_WARPS 4
#define MFB_STAGES 3

// Tiles w, w + MFB_WARPS, … below `tiles`: how many warp w takes.
__device__ __forceinline__ u32 tile_count(u32 tiles, u32 w) { return w < tiles ? (tiles - 1 - w) / MFB_WARPS + 1 : 0; }

template <int NB>
__device__ __forceinline__ void leanb_issue(u32 tile, u32 steps, const u32* rdof, u32 R, u32 ne, u32 nrhs, u64 n,
                                            const double* __restrict__ b, const double* __restrict__ sep, double* st_buf) {
    const u32 lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    const u32 c = tile * 8 + g;
    const bool cv = c < nrhs;
    for (u32 st = 0; st < steps; ++st) {
        const u32 k = 4 * st + tq;
        const bool v = cv && k < R;
        const double* src = !v ? b : k < ne ? b + (u64)c * n + rdof[k] : sep + (u64)rdof[k] * nrhs + c;
        mf_cp8(st_buf + st * 32 + lane, src, v);
    }
}

template <int NB>
__device__ void lean_backward(const Tree& t, const Pass& p, const SepPass& sp, u32 nrhs, u64 n, const double* __restrict__ b,
                              double* __restrict__ x, const double* __restrict__ sep, const u64* __restrict__ map_off,
                              const double* __restrict__ maps) {
    extern __shared__ __align__(16) double leanb_smem[];
    const u32 j = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tq = lane & 3;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], ldm = maps_ldm(ne);
    const u32* rdof = p.row_dof + r0;
    const u32 steps = (p.rows + 3) / 4, lds = ldm + MF_TC_PAD;
    const u32 mcap = (p.rows * (MF_MAP_ROWS * NB + MF_TC_PAD) + 1) / 2 * 2;
    double* sM = leanb_smem;
    double* ring = leanb_smem + mcap + warp * MFB_STAGES * steps * 32;
    maps_stage_async<true>(maps + map_off[j], R * ldm, ldm, sM);
    mf_cp_commit();
    const u32 tiles = (nrhs + 7) / 8, mine = tile_count(tiles, warp);
#pragma unroll
    for (u32 i = 0; i + 1 < MFB_STAGES; ++i) {
        if (i < mine) leanb_issue<NB>(warp + i * MFB_WARPS, steps, rdof, R, ne, nrhs, n, b, sep, ring + i * steps * 32);
        mf_cp_commit();
    }
    mf_cp_wait<MFB_STAGES - 1>();  // the map (every tile group after it may still fly)
    __syncthreads();
    u32 xr[NB][2];
#pragma unroll
    for (int rt = 0; rt < NB; ++rt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const u32 r = rt * 16 + g + 8 * h;
            xr[rt][h] = r < ne ? rdof[r] : 0;
        }
    for (u32 i = 0; i < mine; ++i) {
        const u32 nxt = i + MFB_STAGES - 1;
        if (nxt < mine) leanb_issue<NB>(warp + nxt * MFB_WARPS, steps, rdof, R, ne, nrhs, n, b, sep, ring + (nxt % MFB_STAGES) * steps * 32);
        mf_cp_commit();
        mf_cp_wait<MFB_STAGES - 1>();
        const double* bt = ring + (i % MFB_STAGES) * steps * 32;
        double d[NB][4];
#pragma unroll
        for (int rt = 0; rt < NB; ++rt)
#pragma unroll
            for (int e = 0; e < 4; ++e) d[rt][e] = 0.0;
#pragma unroll 2
        for (u32 st = 0; st < steps; ++st) {
            const u32 k = 4 * st + tq;
            const bool kv = k < R;
            const double bv = bt[st * 32 + lane];
#pragma unroll
            for (int rt = 0; rt < NB; ++rt) {
                if ((u32)(rt * 16) < ldm) {
                    const double a0 = kv ? sM[k * lds + rt * 16 + g] : 0.0, a1 = kv ? sM[k * lds + rt * 16 + g + 8] : 0.0;
                    mf_mma16(d[rt], a0, a1, bv);
                }
            }
        }
        const u32 col0 = (warp + i * MFB_WARPS) * 8 + 2 * tq;
#pragma unroll
        for (int rt = 0; rt < NB; ++rt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const u32 r = rt * 16 + g + 8 * (e >> 1), c = col0 + (e & 1);
                if (r < ne && c < nrhs) __stcs(x + (u64)c * n + xr[rt][e >> 1], d[rt][e]);
            }
    }
    // x at the owned rows from sep: the block's threads over (row, column) pairs, columns fastest.
    const u32 o0 = sp.own_ptr[j], nown = sp.own_ptr[j + 1] - o0;
    for (u32 q = threadIdx.x; q < nown * nrhs; q += blockDim.x) {
        const u32 k = o0 + q / nrhs, c = q % nrhs;
        x[(u64)c * n + sp.own_dof[k]] = __ldcg(sep + (u64)rdof[sp.own_loc[k]] * nrhs + c);
    }
}

#define MF_LEAN_BACKWARD(NB)                                                                                          \
    extern "C" __global__ void __launch_bounds__(32 * MFB_WARPS) mf_lean_backward_##NB(                              \
        Tree t, Pass p, SepPass sp, u32 nrhs, u64 n, const double* __restrict__ b, double* __restrict__ x,            \
        const double* __restrict__ sep, const u64* __restrict__ map_off, const double* __restrict__ maps) {            \
        lean_backward<NB>(t, p, sp, nrhs, n, b, x, sep, map_off, maps);                                              \
    }
MF_LEAN_BACKWARD(1)
MF_LEAN_BACKWARD(2)
