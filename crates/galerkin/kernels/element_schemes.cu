// Element matrices of cells with many basis functions (hierarchical p-version hexahedra, high-order
// Lagrange) integrated on the GPU by three schemes, stored per cell, then summed into a CSR matrix
// colour by colour (plain adds) or with atomics. After "Forming matrices of finite element systems
// in GPGPU": its scheme I (one thread per element) and scheme II (one block per element, one thread
// per quadrature point, shared-memory reduction), and a third, galerkin's own:
//
// III (tiled moments): for physics whose element matrix depends only on the moments
//     M_kl[a][b] = Σ_q w_q |J_q| ∂_k φ_a ∂_l φ_b  (physical gradients; diffusion, elasticity)
// with coefficients constant per cell, the NLOC² · 9 moments are nine small GEMMs per cell, done on
// the FP64 tensor cores in 8 × 8 tiles on or above the diagonal; QF::block turns a pair's moments
// into its NCOMP × NCOMP block, written to (a, b) and, transposed, to (b, a).
//
// Stored layout (as assembly.cu's ELEMENT_STORE): out[c][r][s], r = a·NCOMP + i, row-major, in the
// global orientation (entries scaled by signs[c][a]·signs[c][b] where `has_signs`).
// Defines: DIM (3), NV, NLOC, NQ, NCOMP, QF; the cell tables come from cell_tables.cuh.

constexpr int NDD = ND * ND;

__device__ __forceinline__ double sign_of(const signed char* __restrict__ signs, int has_signs, u64 c, int a) {
    return has_signs ? (double)__ldg(&signs[c * NLOC + a]) : 1.0;
}

// Writes block (a, b) = e (scaled by the pair's sign) and, for a ≠ b, block (b, a) = eᵀ.
__device__ __forceinline__ void write_pair_blocks(double* __restrict__ k, int a, int b, double s, const double e[NCOMP][NCOMP]) {
#pragma unroll
    for (int i = 0; i < NCOMP; ++i)
#pragma unroll
        for (int j = 0; j < NCOMP; ++j) {
            k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j] = s * e[i][j];
            if (a != b) k[(u64)(b * NCOMP + j) * ND + a * NCOMP + i] = s * e[i][j];
        }
}

// ---- Scheme I: one thread per element ----------------------------------------------------------
// The thread loops over the points, keeps the physical gradients of all NLOC functions at the
// point (local memory) and accumulates the upper node blocks in its cell's slice of `out`; the
// lower blocks and the signs are applied at the end.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matrices_per_cell(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    for (u64 c = global_thread(); c < ncells; c += grid_threads()) {
        double* k = out + c * NDD;
        for (int r = 0; r < NDD; ++r) k[r] = 0.0;
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        double g[NLOC][DIM];
        for (int q = 0; q < NQ; ++q) {
            double inv[DIM][DIM], det;
            jacobian_at(xv, tab, q, inv, det);
            const double w = __ldg(&tab[TAB_W + q]) * fabs(det);
            double p[NPA];
            passive_at(coef, meta, c, q, p);
            for (int a = 0; a < NLOC; ++a) phys_grad(tab, q, a, inv, g[a]);
            for (int a = 0; a < NLOC; ++a) {
                const double va = __ldg(&tab[q * NLOC + a]);
                for (int b = a; b < NLOC; ++b) {
                    const PointPair<DIM> pr{w, va, QF::VALUE ? __ldg(&tab[q * NLOC + b]) : 0.0, g[a], g[b]};
                    double e[NCOMP][NCOMP] = {};
                    QF::template block<DIM, NCOMP>(p, pr, e);
#pragma unroll
                    for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                        for (int j = 0; j < NCOMP; ++j) k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j] += e[i][j];
                }
            }
        }
        for (int a = 0; a < NLOC; ++a)
            for (int b = a; b < NLOC; ++b) {
                const double s = sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b);
                double e[NCOMP][NCOMP];
#pragma unroll
                for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                    for (int j = 0; j < NCOMP; ++j) e[i][j] = k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j];
                write_pair_blocks(k, a, b, s, e);
            }
    }
}

// ---- Scheme II: one block per element, one thread per quadrature point ------------------------
// Thread q holds its point's gradients; pairs go in chunks of CHUNK, each thread evaluating its
// point's block for every pair of the chunk, summed over the block by warp shuffles and one
// shared-memory pass. The host launches NQ threads rounded up to a warp (NQ ≤ 1024).
constexpr int CHUNK = 8;
constexpr int PER_PAIR = NCOMP * NCOMP;
constexpr int NPAIRS = NLOC * (NLOC + 1) / 2;

// First pair of row a of the upper triangle, and the k-th pair (a ≤ b), row by row: the row from
// the quadratic's root, corrected for rounding.
__device__ __forceinline__ int row_start(int a) { return a * NLOC - a * (a - 1) / 2; }
__device__ __forceinline__ void upper_pair(int k, int& a, int& b) {
    const double d = 2.0 * NLOC + 1.0;
    a = (int)(0.5 * (d - sqrt(d * d - 8.0 * k)));
    a = a < 0 ? 0 : (a > NLOC - 1 ? NLOC - 1 : a);
    while (a > 0 && row_start(a) > k) --a;
    while (a + 1 < NLOC && row_start(a + 1) <= k) ++a;
    b = a + (k - row_start(a));
}

extern "C" __global__ void __launch_bounds__(1024) matrices_per_point(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    __shared__ double partial[32][CHUNK * PER_PAIR];
    const int q = threadIdx.x, lane = q & 31, warp = q >> 5, nwarps = (blockDim.x + 31) >> 5;
    const bool active = q < NQ;
    for (u64 c = blockIdx.x; c < ncells; c += gridDim.x) {
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        double g[NLOC][DIM], w = 0.0, p[NPA];
        if (active) {
            double inv[DIM][DIM], det;
            jacobian_at(xv, tab, q, inv, det);
            w = __ldg(&tab[TAB_W + q]) * fabs(det);
            passive_at(coef, meta, c, q, p);
            for (int a = 0; a < NLOC; ++a) phys_grad(tab, q, a, inv, g[a]);
        } else {
            for (int s = 0; s < NPA; ++s) p[s] = 0.0;
            for (int a = 0; a < NLOC; ++a)
                for (int d = 0; d < DIM; ++d) g[a][d] = 0.0;
        }
        double* k = out + c * NDD;
        for (int k0 = 0; k0 < NPAIRS; k0 += CHUNK) {
            for (int t = 0; t < CHUNK; ++t) {
                double e[NCOMP][NCOMP] = {};
                if (active && k0 + t < NPAIRS) {
                    int a, b;
                    upper_pair(k0 + t, a, b);
                    const PointPair<DIM> pr{w, __ldg(&tab[q * NLOC + a]), QF::VALUE ? __ldg(&tab[q * NLOC + b]) : 0.0, g[a], g[b]};
                    QF::template block<DIM, NCOMP>(p, pr, e);
                }
#pragma unroll
                for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                    for (int j = 0; j < NCOMP; ++j) {
                        const double v = warp_sum(e[i][j]);
                        if (lane == 0) partial[warp][t * PER_PAIR + i * NCOMP + j] = v;
                    }
            }
            __syncthreads();
            for (int r = threadIdx.x; r < CHUNK * PER_PAIR; r += blockDim.x) {
                const int t = r / PER_PAIR, ij = r % PER_PAIR;
                if (k0 + t < NPAIRS) {
                    double s = 0.0;
                    for (int wv = 0; wv < nwarps; ++wv) s += partial[wv][r];
                    int a, b;
                    upper_pair(k0 + t, a, b);
                    const int i = ij / NCOMP, j = ij % NCOMP;
                    s *= sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b);
                    k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j] = s;
                    if (a != b) k[(u64)(b * NCOMP + j) * ND + a * NCOMP + i] = s;
                }
            }
            __syncthreads();
        }
    }
}

// ---- Scheme III: tiled moments on the tensor cores ----------------------------------------------
// The moments of all pairs are nine small GEMMs per cell, M_kl = Gw_kᵀ G_l over the points, with
// Gw_k[q][a] = w_q |det J_q| ∂_k φ_a and G_l[q][b] = ∂_l φ_b. Each warp owns TPR 8 × 8 tiles
// of node pairs on or above the diagonal, all nine (k, l) each, as FP64 tensor-core fragments
// (mma.sync m8n8k4: 256 FMAs per instruction, two accumulators per lane). The block stages J⁻¹ and
// the weights of all points once per cell, then the gradient tables of QCP points at a time in
// dynamic shared memory; tiles beyond one pass of the warps take further rounds. The host sizes the
// launch (`tiled_shape`): TILED_WARPS warps of TPR tiles and QCP points per pass (a multiple of 4).
#ifndef TILED_WARPS
#define TILED_WARPS 8
#endif
#ifndef QCP
#define QCP 8
#endif
#ifndef TPR
#define TPR 4                                        // tiles per warp and round
#endif
constexpr int N8 = (NLOC + 7) / 8;                   // 8-wide blocks of basis functions
constexpr int NT8 = N8 * (N8 + 1) / 2;               // tiles ta ≤ tb
constexpr int RSTRIDE = (N8 % 2 == 1) ? N8 * 8 : N8 * 8 + 8;  // ≡ 8 (mod 16): conflict-free fragment loads
constexpr int JQ = DIM * DIM + 1;                    // J⁻¹ and w|det J| per point
static_assert(QCP % 4 == 0, "points per pass come in k-steps of 4");
static_assert(DIM == 3, "the tiled scheme is written for 3D cells");

// D += A·B on one 8 × 8 × 4 FP64 tensor-core step: a = A[lane/4][lane%4], b = B[lane%4][lane/4],
// (d0, d1) = D[lane/4][2·(lane%4) + {0, 1}].
__device__ __forceinline__ void dmma(double& d0, double& d1, double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
}

// Tile t of the upper triangle of 8 × 8 blocks, row by row: (ta, tb) with ta ≤ tb.
__device__ __forceinline__ void upper_tile(int t, int& ta, int& tb) {
    ta = 0;
    while (t >= N8 - ta) {
        t -= N8 - ta;
        ++ta;
    }
    tb = ta + t;
}

// A pair's moments, as QF::block reads them (no value term: the host checks QF::VALUE is false).
struct MomentPair {
    double m[DIM * DIM];  // m[k·DIM + l] = Σ_q w ∂_k φ_a ∂_l φ_b
    __device__ __forceinline__ double vv() const { return 0.0; }
    __device__ __forceinline__ double dot() const { return m[0] + m[4] + m[8]; }
    __device__ __forceinline__ double gg(int k, int l) const { return m[k * DIM + l]; }
};

// Dynamic shared memory: jq[NQ][JQ] | gw[DIM][QCP][RSTRIDE] | gb[DIM][QCP][RSTRIDE].
extern "C" __global__ void __launch_bounds__(TILED_WARPS * 32) matrices_tiled(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    extern __shared__ double smem[];
    double* jq = smem;
    double* gw = jq + NQ * JQ;
    double* gb = gw + DIM * QCP * RSTRIDE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int fm = lane >> 2, fk = lane & 3;  // fragment row (or column) and k index
    for (u64 c = blockIdx.x; c < ncells; c += gridDim.x) {
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        __syncthreads();  // the previous cell's last pass has read jq
        for (int q = threadIdx.x; q < NQ; q += blockDim.x) {
            double inv[DIM][DIM], det;
            jacobian_at(xv, tab, q, inv, det);
#pragma unroll
            for (int r = 0; r < DIM * DIM; ++r) jq[q * JQ + r] = inv[r / DIM][r % DIM];
            jq[q * JQ + DIM * DIM] = __ldg(&tab[TAB_W + q]) * fabs(det);
        }
        double* k = out + c * NDD;
        for (int t0 = 0; t0 < NT8; t0 += TILED_WARPS * TPR) {
            double acc[TPR][DIM * DIM][2];
#pragma unroll
            for (int i = 0; i < TPR; ++i)
#pragma unroll
                for (int m = 0; m < DIM * DIM; ++m) acc[i][m][0] = acc[i][m][1] = 0.0;
            int ta[TPR], tb[TPR];
#pragma unroll
            for (int i = 0; i < TPR; ++i) {
                const int t = t0 + warp * TPR + i;
                if (t < NT8) upper_tile(t, ta[i], tb[i]);
                else ta[i] = tb[i] = -1;
            }
            for (int q0 = 0; q0 < NQ; q0 += QCP) {
                __syncthreads();  // jq is written / the previous pass has read gw, gb
                for (int r = threadIdx.x; r < QCP * N8 * 8; r += blockDim.x) {
                    const int qq = r / (N8 * 8), a = r % (N8 * 8), q = q0 + qq;
                    double gr[DIM] = {}, w = 0.0;
                    if (q < NQ && a < NLOC) {
                        double inv[DIM][DIM];
#pragma unroll
                        for (int s = 0; s < DIM * DIM; ++s) inv[s / DIM][s % DIM] = jq[q * JQ + s];
                        phys_grad(tab, q, a, inv, gr);
                        w = jq[q * JQ + DIM * DIM];
                    }
#pragma unroll
                    for (int d = 0; d < DIM; ++d) {
                        gw[(d * QCP + qq) * RSTRIDE + a] = w * gr[d];
                        gb[(d * QCP + qq) * RSTRIDE + a] = gr[d];
                    }
                }
                __syncthreads();
#pragma unroll 1
                for (int kq = 0; kq < QCP; kq += 4) {
#pragma unroll
                    for (int i = 0; i < TPR; ++i) {
                        if (ta[i] < 0) continue;
                        double fa[DIM], fb[DIM];
#pragma unroll
                        for (int d = 0; d < DIM; ++d) {
                            fa[d] = gw[(d * QCP + kq + fk) * RSTRIDE + ta[i] * 8 + fm];
                            fb[d] = gb[(d * QCP + kq + fk) * RSTRIDE + tb[i] * 8 + fm];
                        }
#pragma unroll
                        for (int kk = 0; kk < DIM; ++kk)
#pragma unroll
                            for (int l = 0; l < DIM; ++l) dmma(acc[i][kk * DIM + l][0], acc[i][kk * DIM + l][1], fa[kk], fb[l]);
                    }
                }
            }
            double p[NPA];
            passive_at(coef, meta, c, 0, p);
#pragma unroll
            for (int i = 0; i < TPR; ++i) {
                if (ta[i] < 0) continue;
#pragma unroll
                for (int e2 = 0; e2 < 2; ++e2) {
                    const int a = ta[i] * 8 + fm, b = tb[i] * 8 + 2 * fk + e2;
                    if (a >= NLOC || b >= NLOC || b < a) continue;
                    MomentPair mp;
#pragma unroll
                    for (int m = 0; m < DIM * DIM; ++m) mp.m[m] = acc[i][m][e2];
                    double e[NCOMP][NCOMP] = {};
                    QF::template block<DIM, NCOMP>(p, mp, e);
                    write_pair_blocks(k, a, b, sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b), e);
                }
            }
        }
    }
}

// Throughput probe of the FP64 tensor cores: 8 independent m8n8k4 chains per warp.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dmma_peak(int iters, double seed, double* __restrict__ sink) {
    double d[8][2];
#pragma unroll
    for (int k = 0; k < 8; ++k) d[k][0] = d[k][1] = 0.0;
    const double a = seed * 1e-3, b = 1e-3 * (threadIdx.x & 31);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) dmma(d[k][0], d[k][1], a, b);
    }
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += d[k][0] + d[k][1];
    if (s < 0.0) sink[0] = s;
}

// ---- Summation into CSR ------------------------------------------------------------------------
// values[pos(c, r, s)] += K_c[r][s], one thread per (cell, row node a, column node b) block. `mode`
// 0: atomics (any cell order); 1: a colour's cells (no two share a node), plain adds.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) scatter_matrices(
    u64 ncells, const u32* __restrict__ cell_list, const u32* __restrict__ cell_nodes,
    const double* __restrict__ mats, int mode, const u32* __restrict__ row_ptr,
    const unsigned short* __restrict__ kpos, double* __restrict__ values) {
    const u64 work = ncells * (u64)(NLOC * NLOC);
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 kc = t / (NLOC * NLOC);
        const int ab = (int)(t - kc * (NLOC * NLOC)), a = ab / NLOC, b = ab % NLOC;
        const u64 c = cell_list ? (u64)cell_list[kc] : kc;
        const u64 node_a = __ldg(&cell_nodes[c * NLOC + a]);
        const u64 col = (u64)__ldg(&kpos[(c * NLOC + a) * NLOC + b]) * NCOMP;
        const double* k = mats + c * NDD;
#pragma unroll
        for (int i = 0; i < NCOMP; ++i) {
            const u64 base = (u64)__ldg(&row_ptr[node_a * NCOMP + i]) + col;
#pragma unroll
            for (int j = 0; j < NCOMP; ++j) {
                const double v = __ldg(&k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j]);
                if (mode == 0) atomicAdd(&values[base + j], v);
                else values[base + j] += v;
            }
        }
    }
}

// Throughput probe: 8 independent FMA chains per thread (enough to hide the FMA latency), `iters`
// rounds; the sum is stored only if negative, which it never is, so nothing is dead code.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) fma_peak(int iters, double seed, double* __restrict__ sink) {
    double a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = seed + 1e-3 * k + 1e-9 * threadIdx.x;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) a[k] = fma(a[k], 0.999999, 1e-6);
    }
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += a[k];
    if (s < 0.0) sink[0] = s;
}
