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
template <int ROWS>
__device__ __forceinline__ void rows_tc_backward(const double (&v)[ROWS][1], const double* sM, u32 R, u32 ne, u32 ldm, u32 nrhs,
                                                 const u32* rdof, double* __restrict__ x) {
    const u32 lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    const u32 cw = blockIdx.y * blockDim.x + (threadIdx.x & ~31u);
#pragma unroll 1
    for (u32 ct = 0; ct < 4; ++ct) {
        double d[3][4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};
#pragma unroll
        for (int k0 = 0; k0 < ROWS; k0 += 4) {
            if ((u32)k0 < R) {
                double bf = 0.0;
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const double got = __shfl_sync(0xffffffffu, k0 + i < ROWS ? v[k0 + i][0] : 0.0, ct * 8 + g);
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

// Round 17 (`RowsBottom::Fused*`): the same pass with the subtree's 1D numbering implicit. In 1D
// the eliminated rows of a bottom subtree of consecutive elements are one run of dofs
// d0 … d0 + ne − 1 (the host checks it and passes d0 per subtree in `base`, else the kernels are
// not run), so local row i is read at b + (d0 + i)·nrhs with no row_dof load in front of it: every
// load of the column's rows is independent and issued before the first is used, and so are b at
// the owned rows (forward, MFR_OWN at most). The map is permuted into that order once per block
// while it is staged (Gᵀ rows; [H K]ᵀ rows and columns), so x_E is stored at d0 + q as well.
// CPT consecutive columns per thread (2: 16-byte loads, a warp reads 512 contiguous bytes of a
// row, twice the bytes in flight per thread; the host requires nrhs even).
// Measured slower on the H200 (round 17, 2^20 cubic elements, 256 columns: forward 35 % of the copy
// rate for both CPT against the staged kernels' 58 %; backward 30–38 % against 72 %, likely also
// the permuted staging's row_dof loads now ahead of the b loads), so opt-in.
#define MFR_OWN 8

// CPT consecutive doubles of row-major b (or sep, cg: kept in L2) at p, or stores to x.
template <int CPT>
__device__ __forceinline__ void mfr_load(double (&o)[CPT], const double* p, bool cg) {
    if constexpr (CPT == 2) {
        const double2 t = cg ? __ldcg(reinterpret_cast<const double2*>(p)) : __ldcs(reinterpret_cast<const double2*>(p));
        o[0] = t.x;
        o[1] = t.y;
    } else {
        o[0] = cg ? __ldcg(p) : __ldcs(p);
    }
}
template <int CPT>
__device__ __forceinline__ void mfr_store(double* p, const double (&o)[CPT], bool streaming) {
    if constexpr (CPT == 2) {
        if (streaming) __stcs(reinterpret_cast<double2*>(p), make_double2(o[0], o[1]));
        else *reinterpret_cast<double2*>(p) = make_double2(o[0], o[1]);
    } else {
        if (streaming) __stcs(p, o[0]);
        else *p = o[0];
    }
}

// Stages the subtree's map into sM, permuted into the implicit order when FUSED (local row k < ne
// of the subtree to row rdof[k] − d0): forward Gᵀ (ne rows of s), backward [H K]ᵀ (R rows of ldm,
// its columns q < ne likewise). Unfused it is round 16's copy (TC: the padded rows).
template <bool FUSED, bool BACKWARD, bool TC>
__device__ __forceinline__ void mfr_stage(const double* __restrict__ src, const u32* rdof, u32 d0, u32 R, u32 ne, u32 s, u32 ldm, double* sM) {
    if constexpr (!FUSED) {
        maps_stage_async<BACKWARD && TC>(src, BACKWARD ? R * ldm : ne * s, ldm, sM);
    } else {
        const u32 w = BACKWARD ? ldm : s, cnt = (BACKWARD ? R : ne) * w;
        for (u32 i = threadIdx.x; i < cnt; i += blockDim.x) {
            const u32 k = i / w, q = i - k * w;
            const u32 rk = k < ne ? rdof[k] - d0 : k, cq = BACKWARD && q < ne ? rdof[q] - d0 : q;
            mf_cp8(sM + rk * w + cq, src + i, true);
        }
    }
}

// Round 16's bottom pass (FUSED false: rows through row_dof, ROWS = MFR_ROWS, CPT 1) and round 17's
// (FUSED: implicit rows); a block per (subtree, blockDim.x·CPT consecutive columns).
template <int ROWS, int CPT, bool FUSED, bool BACKWARD, bool TC = false>
__device__ __forceinline__ void rows_bottom(const Pass& p, const SepPass& sp, const Tree& t, u32 nrhs, const double* __restrict__ b,
                                            double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf,
                                            const u64* __restrict__ map_off, const double* __restrict__ maps, const u32* __restrict__ base) {
    static_assert(!TC || CPT == 1, "the tensor-core backward takes one column per thread");
    extern __shared__ __align__(16) double rows_smem[];
    const u32 j = blockIdx.x, c = (blockIdx.y * blockDim.x + threadIdx.x) * CPT;
    const bool mine = c < nrhs;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    const u32* rdof = p.row_dof + r0;
    const u32 d0 = FUSED ? base[j] : 0;
    const u32 o0 = sp.own_ptr[j], nown = sp.own_ptr[j + 1] - o0;
    // Local row i's dof (eliminated rows) and where x_E's row q goes.
    auto dof = [&](u32 i) -> u64 { return FUSED ? (u64)(d0 + i) : (u64)rdof[i]; };
    // The map (backward [H K]ᵀ, R rows of ldm; forward Gᵀ, ne rows of s) lands while the column's
    // rows are loaded.
    mfr_stage<FUSED, BACKWARD, TC>(maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm), rdof, d0, R, ne, s, ldm, rows_smem);
    mf_cp_commit();
    double v[ROWS][CPT];
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
#pragma unroll
        for (int u = 0; u < CPT; ++u) v[k][u] = 0.0;
        if (mine && (u32)k < ne)
            mfr_load<CPT>(v[k], b + dof(k) * nrhs + c, false);
        else if (BACKWARD && mine && (u32)k < R)
            mfr_load<CPT>(v[k], sep + (u64)rdof[k] * nrhs + c, true);
    }
    if (!BACKWARD && mine) {  // b at the owned separator rows to sep
        if constexpr (FUSED) {  // loaded with the others, stored after
            double ob[MFR_OWN][CPT];
#pragma unroll
            for (int k = 0; k < MFR_OWN; ++k)
                if ((u32)k < nown) mfr_load<CPT>(ob[k], b + (u64)sp.own_dof[o0 + k] * nrhs + c, false);
#pragma unroll
            for (int k = 0; k < MFR_OWN; ++k)
                if ((u32)k < nown) mfr_store<CPT>(sep + (u64)rdof[sp.own_loc[o0 + k]] * nrhs + c, ob[k], false);
        } else {
            for (u32 k = 0; k < nown; ++k) sep[(u64)rdof[sp.own_loc[o0 + k]] * nrhs + c] = __ldcs(b + (u64)sp.own_dof[o0 + k] * nrhs + c);
        }
    }
    mf_cp_wait_all();
    __syncthreads();
    const double* sM = rows_smem;
    if (!BACKWARD) {
        const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
        double* dst = buf + (t.slot[root] + t.e[root]) * nrhs + c;
        for (u32 a0 = 0; a0 < s; a0 += 4) {
            double acc[4][CPT] = {};
#pragma unroll
            for (int i = 0; i < ROWS; ++i)
                if ((u32)i < ne) {
#pragma unroll
                    for (u32 u = 0; u < 4; ++u)
                        if (a0 + u < s)
#pragma unroll
                            for (int w = 0; w < CPT; ++w) acc[u][w] = fma(sM[i * s + a0 + u], v[i][w], acc[u][w]);
                }
            if (mine)
#pragma unroll
                for (u32 u = 0; u < 4; ++u)
                    if (a0 + u < s) mfr_store<CPT>(dst + (u64)(a0 + u) * nrhs, acc[u], false);
        }
    } else {
        // Four rows of x_E at a time: per local row k two broadcast 16-byte loads of [H K]ᵀ row k
        // (or on the tensor cores, up to 3 tiles of 16: the map kernels' limit of 48 eliminated rows).
        if constexpr (TC) {
            rows_tc_backward<ROWS>(v, sM, R, ne, ldm, nrhs, rdof, x);
        } else {
#pragma unroll 1
            for (u32 q0 = 0; q0 < ne; q0 += 4) {
                double acc[4][CPT] = {};
#pragma unroll
                for (int k = 0; k < ROWS; ++k)
                    if ((u32)k < R) {
                        const double2* mk = reinterpret_cast<const double2*>(sM + (u32)k * ldm + q0);
                        const double2 f0 = mk[0], f1 = mk[1];
#pragma unroll
                        for (int w = 0; w < CPT; ++w) {
                            acc[0][w] = fma(f0.x, v[k][w], acc[0][w]);
                            acc[1][w] = fma(f0.y, v[k][w], acc[1][w]);
                            acc[2][w] = fma(f1.x, v[k][w], acc[2][w]);
                            acc[3][w] = fma(f1.y, v[k][w], acc[3][w]);
                        }
                    }
                if (mine)
#pragma unroll
                    for (u32 u = 0; u < 4; ++u)
                        if (q0 + u < ne) mfr_store<CPT>(x + dof(q0 + u) * nrhs + c, acc[u], true);
            }
        }
        if (mine) {  // x at the owned rows: their sep values are Schur rows of v (FUSED) or read again
            for (u32 k = 0; k < nown; ++k) {
                double o[CPT];
                if constexpr (FUSED) {
                    const u32 a = sp.own_loc[o0 + k];
#pragma unroll
                    for (int u = 0; u < CPT; ++u) o[u] = 0.0;
#pragma unroll
                    for (int i = 0; i < ROWS; ++i)
                        if ((u32)i == a)
#pragma unroll
                            for (int u = 0; u < CPT; ++u) o[u] = v[i][u];
                } else {
                    mfr_load<CPT>(o, sep + (u64)rdof[sp.own_loc[o0 + k]] * nrhs + c, true);
                }
                mfr_store<CPT>(x + (u64)sp.own_dof[o0 + k] * nrhs + c, o, false);
            }
        }
    }
}

// A block per (subtree, blockDim.x·CPT consecutive columns): grid (subtrees, ⌈nrhs / (blockDim.x·CPT)⌉).
// `base`: each subtree's first eliminated dof (the fused kernels; null for round 16's).
#define MFR_ARGS                                                                                                                       \
    Tree t, Pass p, SepPass sp, u32 nrhs, const double *__restrict__ b, double *__restrict__ x, double *__restrict__ sep,            \
        double *__restrict__ buf, const u64 *__restrict__ map_off, const double *__restrict__ maps, const u32 *__restrict__ base
#define MFR_KERNEL(name, ROWS, CPT, FUSED, BACKWARD, TC)                                                   \
    extern "C" __global__ void __launch_bounds__(128) name(MFR_ARGS) {                                     \
        rows_bottom<ROWS, CPT, FUSED, BACKWARD, TC>(p, sp, t, nrhs, b, x, sep, buf, map_off, maps, base); \
    }
MFR_KERNEL(mf_rows_forward, MFR_ROWS, 1, false, false, false)
MFR_KERNEL(mf_rows_backward, MFR_ROWS, 1, false, true, false)
MFR_KERNEL(mf_rows_backward_tc, MFR_ROWS, 1, false, true, true)
// Fused: mf_rows_fused_{forward,backward}_<rows>_<columns per thread>; the host takes the
// smallest ROWS ≥ the pass's local rows.
#define MFR_FUSED(ROWS, CPT)                                                               \
    MFR_KERNEL(mf_rows_fused_forward_##ROWS##_##CPT, ROWS, CPT, true, false, false)        \
    MFR_KERNEL(mf_rows_fused_backward_##ROWS##_##CPT, ROWS, CPT, true, true, false)
MFR_FUSED(36, 1)
MFR_FUSED(40, 1)
MFR_FUSED(36, 2)
MFR_FUSED(40, 2)
