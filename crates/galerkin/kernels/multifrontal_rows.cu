// The bottom pass of a row-major many-right-hand-side solve, a thread per column (round 16,
// `CudaMultifrontal::set_rows_bottom`), appended to multifrontal.cu (its Tree, Pass, SepPass, map
// layout and cp.async helpers).
//
// With b and x row-major (b[d·nrhs + c], `solve_many_rows`) a subtree's row d for 32 consecutive
// columns is one 256-byte line, so a warp of 32 columns loads each local row with one coalesced
// instruction straight into registers: no staged chunk of columns in shared memory, no block
// barrier between a chunk's gather and its product (what held mf_mapss_* to 56–67 % of the copy
// rate). Each thread keeps its column's local rows in registers (MFR_ROWS, compile-time indices:
// every loop over rows is unrolled with a predicate), the block stages only the subtree's map.
// Forward: the root's contribution rows Y = G·b_E to buf, b at the owned separator rows to sep.
// Backward: x_E = [H K]·(b_E, x_S) to x (x_S from sep), x at the owned rows from sep. So the pass
// reads b twice and writes x once, as the staged kernels, with no shared memory per column.
// Only for the bottom pass without external contributions and at most MFR_ROWS local rows per
// subtree; the host checks (`rows_fit`).
#define MFR_ROWS 40

// Backward on the FP64 tensor cores (TC): x_E (ne × 32 columns of a warp) = [H K] · v as m16n8k4
// products, the warp's columns as 4 tiles of 8 taken one at a time. The B fragment (local row
// k0 + tq of column g of the tile) comes from the column's own thread by 4 shuffles (one per row of
// the step, each lane keeping its own); A (16 rows of [H K] at local rows k0…k0+3) from the staged
// map. Per warp and subtree ~10× fewer instructions than the FMA loop's 2 broadcast loads and 4
// FMAs per (local row, 4 rows of x). sM: [H K]ᵀ with row stride ldm + MF_TC_PAD.
__device__ __forceinline__ void rows_tc_backward(const double (&v)[MFR_ROWS], const double* sM, u32 R, u32 ne, u32 ldm, u32 nrhs,
                                                 const u32* rdof, double* __restrict__ x) {
    const u32 lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    const u32 cw = blockIdx.y * blockDim.x + (threadIdx.x & ~31u);
#pragma unroll 1
    for (u32 ct = 0; ct < 4; ++ct) {
        double d[3][4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};
#pragma unroll
        for (int k0 = 0; k0 < MFR_ROWS; k0 += 4) {
            if ((u32)k0 < R) {
                double bf = 0.0;
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const double got = __shfl_sync(0xffffffffu, v[k0 + i], ct * 8 + g);
                    if (tq == (u32)i) bf = got;
                }
                const u32 k = k0 + tq, lds = ldm + MF_TC_PAD;
#pragma unroll
                for (int rt = 0; rt < 3; ++rt)
                    if ((u32)(rt * 16) < ldm) {
                        const double a0 = k < R ? sM[k * lds + rt * 16 + g] : 0.0, a1 = k < R ? sM[k * lds + rt * 16 + g + 8] : 0.0;
                        mf_mma16(d[rt], a0, a1, bf);
                    }
            }
        }
#pragma unroll
        for (int rt = 0; rt < 3; ++rt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const u32 r = rt * 16 + g + 8 * (e >> 1), col = cw + ct * 8 + 2 * tq + (e & 1);
                if (r < ne && col < nrhs) __stcs(x + (u64)rdof[r] * nrhs + col, d[rt][e]);
            }
    }
}

template <bool BACKWARD, bool TC = false>
__device__ __forceinline__ void rows_bottom(const Pass& p, const SepPass& sp, const Tree& t, u32 nrhs, const double* __restrict__ b,
                                            double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf,
                                            const u64* __restrict__ map_off, const double* __restrict__ maps) {
    extern __shared__ __align__(16) double rows_smem[];
    const u32 j = blockIdx.x, c = blockIdx.y * blockDim.x + threadIdx.x;
    const bool mine = c < nrhs;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    const u32* rdof = p.row_dof + r0;
    const u32 o0 = sp.own_ptr[j], nown = sp.own_ptr[j + 1] - o0;
    // The map (backward [H K]ᵀ, R rows of ldm; forward Gᵀ, ne rows of s) lands while the column's
    // rows are loaded.
    // On the tensor cores [H K]ᵀ rows are padded to ldm + MF_TC_PAD (a fragment's 4 rows in distinct banks).
    maps_stage_async<BACKWARD && TC>(maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm), BACKWARD ? R * ldm : ne * s, ldm, rows_smem);
    mf_cp_commit();
    double v[MFR_ROWS];
#pragma unroll
    for (int k = 0; k < MFR_ROWS; ++k) {
        double a = 0.0;
        if (mine && (u32)k < ne)
            a = __ldcs(b + (u64)rdof[k] * nrhs + c);
        else if (BACKWARD && mine && (u32)k < R)
            a = __ldcg(sep + (u64)rdof[k] * nrhs + c);
        v[k] = a;
    }
    if (!BACKWARD && mine)  // b at the owned separator rows to sep
        for (u32 k = 0; k < nown; ++k) sep[(u64)rdof[sp.own_loc[o0 + k]] * nrhs + c] = __ldcs(b + (u64)sp.own_dof[o0 + k] * nrhs + c);
    mf_cp_wait_all();
    __syncthreads();
    const double* sM = rows_smem;
    if (!BACKWARD) {
        const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
        double* dst = buf + (t.slot[root] + t.e[root]) * nrhs + c;
        for (u32 a0 = 0; a0 < s; a0 += 4) {
            double acc[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
            for (int i = 0; i < MFR_ROWS; ++i)
                if ((u32)i < ne) {
#pragma unroll
                    for (u32 u = 0; u < 4; ++u)
                        if (a0 + u < s) acc[u] = fma(sM[i * s + a0 + u], v[i], acc[u]);
                }
            if (mine)
#pragma unroll
                for (u32 u = 0; u < 4; ++u)
                    if (a0 + u < s) dst[(u64)(a0 + u) * nrhs] = acc[u];
        }
    } else {
        // Four rows of x_E at a time: per local row k two broadcast 16-byte loads of [H K]ᵀ row k
        // (or on the tensor cores, up to 3 tiles of 16: the map kernels' limit of 48 eliminated rows).
        if constexpr (TC) {
            rows_tc_backward(v, sM, R, ne, ldm, nrhs, rdof, x);
        } else {
#pragma unroll 1
            for (u32 q0 = 0; q0 < ne; q0 += 4) {
                double acc[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
                for (int k = 0; k < MFR_ROWS; ++k)
                    if ((u32)k < R) {
                        const double2* mk = reinterpret_cast<const double2*>(sM + (u32)k * ldm + q0);
                        const double2 f0 = mk[0], f1 = mk[1];
                        acc[0] = fma(f0.x, v[k], acc[0]);
                        acc[1] = fma(f0.y, v[k], acc[1]);
                        acc[2] = fma(f1.x, v[k], acc[2]);
                        acc[3] = fma(f1.y, v[k], acc[3]);
                    }
                if (mine)
#pragma unroll
                    for (u32 u = 0; u < 4; ++u)
                        if (q0 + u < ne) __stcs(x + (u64)rdof[q0 + u] * nrhs + c, acc[u]);
            }
        }
        if (mine)  // x at the owned rows, from sep
            for (u32 k = 0; k < nown; ++k) x[(u64)sp.own_dof[o0 + k] * nrhs + c] = __ldcg(sep + (u64)rdof[sp.own_loc[o0 + k]] * nrhs + c);
    }
}

// A block per (subtree, blockDim.x consecutive columns): grid (subtrees, ⌈nrhs / blockDim.x⌉).
extern "C" __global__ void __launch_bounds__(128) mf_rows_forward(Tree t, Pass p, SepPass sp, u32 nrhs, const double* __restrict__ b,
                                                                 double* __restrict__ x, double* __restrict__ sep,
                                                                 double* __restrict__ buf, const u64* __restrict__ map_off,
                                                                 const double* __restrict__ maps) {
    rows_bottom<false>(p, sp, t, nrhs, b, x, sep, buf, map_off, maps);
}
extern "C" __global__ void __launch_bounds__(128) mf_rows_backward(Tree t, Pass p, SepPass sp, u32 nrhs, const double* __restrict__ b,
                                                                  double* __restrict__ x, double* __restrict__ sep,
                                                                  double* __restrict__ buf, const u64* __restrict__ map_off,
                                                                  const double* __restrict__ maps) {
    rows_bottom<true>(p, sp, t, nrhs, b, x, sep, buf, map_off, maps);
}
extern "C" __global__ void __launch_bounds__(128) mf_rows_backward_tc(Tree t, Pass p, SepPass sp, u32 nrhs, const double* __restrict__ b,
                                                                     double* __restrict__ x, double* __restrict__ sep,
                                                                     double* __restrict__ buf, const u64* __restrict__ map_off,
                                                                     const double* __restrict__ maps) {
    rows_bottom<true, true>(p, sp, t, nrhs, b, x, sep, buf, map_off, maps);
}
