// Element matrices of cells with many basis functions (hierarchical p-version hexahedra, high-order
// Lagrange) integrated on the GPU by three schemes, stored per cell, then summed into a CSR matrix
// colour by colour (plain adds) or with atomics. After "Forming matrices of finite element systems
// in GPGPU" (Kozłowski, Kopta, ...): its scheme I (one thread per element) and scheme II (one
// block per element, one thread per quadrature point, shared-memory reduction), and a third,
// galerkin's own:
//
// III (tiled moments): for physics whose element matrix depends only on the moments
//     M_kl[a][b] = Σ_q w_q |J_q| ∂_k φ_a ∂_l φ_b  (physical gradients; diffusion, elasticity)
// with coefficients constant per cell, the NLOC² · 9 moments are a small GEMM per cell: one block
// per cell stages the weighted physical gradients of QC points at a time in shared memory, and each
// thread keeps a TA × TB tile of node pairs (all nine k, l) in registers, 4 FMAs per shared load.
// Only tiles on or above the diagonal are computed; QF::block turns a pair's moments into its
// NCOMP × NCOMP block, written to (a, b) and, transposed, to (b, a).
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

// ---- Scheme III: tiled moments ----------------------------------------------------------------
constexpr int TA = 2, TB = 4;                          // node pairs per thread: TA rows × TB columns
constexpr int NA = (NLOC + TA - 1) / TA, NB = (NLOC + TB - 1) / TB;
constexpr int NMOM = QF::FULL_GRAD ? DIM * DIM : 1;    // moments per pair: all ∂_k ∂_l, or the trace
// Points staged per pass: both gradient tables (DIM × QC × NA·TA and NB·TB doubles) within 40 KB.
constexpr int QC_FIT = 5000 / (DIM * (NA * TA + NB * TB));
constexpr int QC = QC_FIT < 1 ? 1 : (QC_FIT > 16 ? 16 : QC_FIT);
static_assert(DIM * QC * (NA * TA + NB * TB) * 8 <= 48 * 1024, "scheme III's staged gradients fit in static shared memory");

// Tile t (ta, tb) of the upper triangle: the tiles whose columns reach the diagonal.
__device__ __forceinline__ bool upper_tile(int t, int& ta, int& tb) {
    for (ta = 0; ta < NA; ++ta) {
        const int first = (ta * TA) / TB;  // first column tile with b ≥ a for some pair
        const int n = NB - first;
        if (t < n) {
            tb = first + t;
            return true;
        }
        t -= n;
    }
    return false;
}

// A pair's moments, as QF::block reads them (no value term: the host checks QF::VALUE is false).
struct MomentPair {
    const double* m;  // m[k·DIM + l] (FULL_GRAD) or m[0] = the trace
    __device__ __forceinline__ double vv() const { return 0.0; }
    __device__ __forceinline__ double dot() const {
        if (QF::FULL_GRAD) {
            double s = 0.0;
#pragma unroll
            for (int k = 0; k < DIM; ++k) s += m[k * DIM + k];
            return s;
        }
        return m[0];
    }
    __device__ __forceinline__ double gg(int k, int l) const { return QF::FULL_GRAD ? m[k * DIM + l] : 0.0; }
};

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matrices_tiled(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    // Staged gradients, tile-transposed so that lanes (consecutive tb, mostly one ta) read
    // consecutive doubles: gw[k][qq][x·NA + ta] = w ∂_k φ_(ta·TA+x), gb[l][qq][y·NB + tb] = ∂_l φ_(tb·TB+y).
    __shared__ double gw[DIM][QC][NA * TA];
    __shared__ double gb[DIM][QC][NB * TB];
    __shared__ double inv_s[QC][DIM * DIM + 1];
    int ntiles = 0;
    for (int ta = 0; ta < NA; ++ta) ntiles += NB - (ta * TA) / TB;
    for (u64 c = blockIdx.x; c < ncells; c += gridDim.x) {
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        double p[NPA];
        passive_at(coef, meta, c, 0, p);
        double* k = out + c * NDD;
        for (int t0 = 0; t0 < ntiles; t0 += blockDim.x) {
            int ta = 0, tb = 0;
            const bool mine = upper_tile(t0 + threadIdx.x, ta, tb);
            double acc[NMOM][TA][TB];
#pragma unroll
            for (int m = 0; m < NMOM; ++m)
#pragma unroll
                for (int x = 0; x < TA; ++x)
#pragma unroll
                    for (int y = 0; y < TB; ++y) acc[m][x][y] = 0.0;
            for (int q0 = 0; q0 < NQ; q0 += QC) {
                __syncthreads();
                if (threadIdx.x < QC) {
                    const int q = q0 + threadIdx.x;
                    double inv[DIM][DIM], det = 0.0;
                    if (q < NQ) jacobian_at(xv, tab, q, inv, det);
#pragma unroll
                    for (int r = 0; r < DIM * DIM; ++r) inv_s[threadIdx.x][r] = q < NQ ? inv[r / DIM][r % DIM] : 0.0;
                    inv_s[threadIdx.x][DIM * DIM] = q < NQ ? __ldg(&tab[TAB_W + q]) * fabs(det) : 0.0;
                }
                __syncthreads();
                constexpr int NPAD = (NA * TA > NB * TB) ? NA * TA : NB * TB;
                for (int r = threadIdx.x; r < QC * NPAD; r += blockDim.x) {
                    const int qq = r / NPAD, a = r % NPAD, q = q0 + qq;
                    double gr[DIM] = {};
                    if (q < NQ && a < NLOC) {
                        double inv[DIM][DIM];
#pragma unroll
                        for (int s = 0; s < DIM * DIM; ++s) inv[s / DIM][s % DIM] = inv_s[qq][s];
                        phys_grad(tab, q, a, inv, gr);
                    }
                    const double w = inv_s[qq][DIM * DIM];
#pragma unroll
                    for (int d = 0; d < DIM; ++d) {
                        if (a < NA * TA) gw[d][qq][(a % TA) * NA + a / TA] = w * gr[d];
                        if (a < NB * TB) gb[d][qq][(a % TB) * NB + a / TB] = gr[d];
                    }
                }
                __syncthreads();
                if (mine) {
#pragma unroll 2
                    for (int qq = 0; qq < QC; ++qq) {
                        double u[DIM][TA], v[DIM][TB];
#pragma unroll
                        for (int d = 0; d < DIM; ++d) {
#pragma unroll
                            for (int x = 0; x < TA; ++x) u[d][x] = gw[d][qq][x * NA + ta];
#pragma unroll
                            for (int y = 0; y < TB; ++y) v[d][y] = gb[d][qq][y * NB + tb];
                        }
#pragma unroll
                        for (int x = 0; x < TA; ++x)
#pragma unroll
                            for (int y = 0; y < TB; ++y) {
                                if (QF::FULL_GRAD) {
#pragma unroll
                                    for (int kk = 0; kk < DIM; ++kk)
#pragma unroll
                                        for (int l = 0; l < DIM; ++l)
                                            acc[(kk * DIM + l) % NMOM][x][y] = fma(u[kk][x], v[l][y], acc[(kk * DIM + l) % NMOM][x][y]);
                                } else {
#pragma unroll
                                    for (int kk = 0; kk < DIM; ++kk) acc[0][x][y] = fma(u[kk][x], v[kk][y], acc[0][x][y]);
                                }
                            }
                    }
                }
            }
            if (mine) {
#pragma unroll
                for (int x = 0; x < TA; ++x)
#pragma unroll
                    for (int y = 0; y < TB; ++y) {
                        const int a = ta * TA + x, b = tb * TB + y;
                        if (a >= NLOC || b >= NLOC || b < a) continue;
                        double m[NMOM];
#pragma unroll
                        for (int s = 0; s < NMOM; ++s) m[s] = acc[s][x][y];
                        double e[NCOMP][NCOMP] = {};
                        QF::template block<DIM, NCOMP>(p, MomentPair{m}, e);
                        write_pair_blocks(k, a, b, sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b), e);
                    }
            }
        }
    }
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
