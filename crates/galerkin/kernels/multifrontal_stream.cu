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
