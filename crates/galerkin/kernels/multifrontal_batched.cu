// Batched large fronts (more than MF_BLOCK_MAX rows), appended to multifrontal.cu (its Tree,
// group_argmax and storage conventions): every large front of a tree level in ONE launch, one
// thread block per front (grid.x = node of the list), instead of one cuSOLVER/cuBLAS call per node
// and step. Fronts are assembled in global memory beforehand by mf_zero_fronts/mf_extend_add.
//
// Factorization (mfb_factor): blocked right-looking LU of the first e columns of the m×m
// column-major front with partial pivoting among the e eliminated rows (the CPU's rule: larger
// |value|, ties to the smaller row): per panel of MFB_NB columns an unblocked pivoted panel LU over
// rows kb..m, the U row block by the unit-lower panel triangle, and the rank-MFB_NB update of the
// trailing (m−kb−nb)² block by 64×64 tiles staged in shared memory (4×4 accumulators per thread).
// The pivots go to t.perm / pinv exactly as factor_node writes them.
//
// Solves (mfb_forward, mfb_backward): slots row-major m × nrhs (row i at slot[i·nrhs + c]);
// grid.y = chunk of MFB_RC right-hand sides; per block of 32 eliminated rows a warp per column
// solves the 32×32 triangle with the rows in registers (shuffles), then the block updates the
// other rows by a 32-column product (coalesced along the front's columns).

#define MFB_THREADS 256
#define MFB_NB 16
#define MFB_TILE 64
#define MFB_RC 8

extern "C" __global__ void __launch_bounds__(MFB_THREADS) mfb_factor(Tree t, const u32* __restrict__ list,
                                                                     double* __restrict__ storage,
                                                                     u32* __restrict__ pinv, u64* status) {
    __shared__ double red_v[32];
    __shared__ int red_i[32];
    __shared__ double L11[MFB_NB][MFB_NB + 1];
    __shared__ double Ls[MFB_NB][MFB_TILE];
    __shared__ double Us[MFB_NB][MFB_TILE];
    const u32 v = list[blockIdx.x];
    const int m = t.m[v], e = t.e[v];
    const int lane = threadIdx.x, gs = blockDim.x;
    double* F = storage + t.front_off[v];
    u32* perm = t.perm + t.pinv_off[v];
    for (int i = lane; i < e; i += gs) perm[i] = i;
    __syncthreads();
    for (int kb = 0; kb < e; kb += MFB_NB) {
        const int nb = min(MFB_NB, e - kb), kend = kb + nb;
        // Panel: columns kb..kend, rows kb..m, pivots among rows < e.
        for (int k = kb; k < kend; ++k) {
            const int piv = group_argmax<BlockGroup>(F, m, k, e, red_v, red_i);
            const double pv = F[piv + (u64)k * m];
            if (pv == 0.0 || !isfinite(pv)) {
                if (lane == 0) atomicMin(status, ((u64)v << 32) | (u64)k);
                return;
            }
            if (piv != k) {
                for (int j = lane; j < m; j += gs) {
                    const double tmp = F[k + (u64)j * m];
                    F[k + (u64)j * m] = F[piv + (u64)j * m];
                    F[piv + (u64)j * m] = tmp;
                }
                if (lane == 0) {
                    const u32 tp = perm[k];
                    perm[k] = perm[piv];
                    perm[piv] = tp;
                }
            }
            __syncthreads();
            const double inv = 1.0 / pv;
            for (int i = k + 1 + lane; i < m; i += gs) F[i + (u64)k * m] *= inv;
            __syncthreads();
            const int rows = m - k - 1, cols = kend - k - 1;
            for (int idx = lane; idx < rows * cols; idx += gs) {
                const int i = k + 1 + idx % rows, j = k + 1 + idx / rows;
                F[i + (u64)j * m] = fma(-F[i + (u64)k * m], F[k + (u64)j * m], F[i + (u64)j * m]);
            }
            __syncthreads();
        }
        if (kend >= m) break;
        // U12 = L11⁻¹ F[kb..kend, kend..m], a thread per column (L11 unit lower, in shared memory).
        for (int idx = lane; idx < nb * nb; idx += gs) L11[idx % nb][idx / nb] = F[kb + idx % nb + (u64)(kb + idx / nb) * m];
        __syncthreads();
        for (int j = kend + lane; j < m; j += gs) {
            double u[MFB_NB];
#pragma unroll
            for (int r = 0; r < MFB_NB; ++r) u[r] = r < nb ? F[kb + r + (u64)j * m] : 0.0;
#pragma unroll
            for (int r = 1; r < MFB_NB; ++r)
#pragma unroll
                for (int q = 0; q < r; ++q) u[r] = fma(-L11[r][q], u[q], u[r]);
#pragma unroll
            for (int r = 0; r < MFB_NB; ++r)
                if (r < nb) F[kb + r + (u64)j * m] = u[r];
        }
        __syncthreads();
        // Trailing update F[kend.., kend..] −= L21 U12 by 64×64 tiles.
        const int rest = m - kend, tiles = (rest + MFB_TILE - 1) / MFB_TILE;
        const int tx = lane % 16, ty = lane / 16;
        for (int tile = 0; tile < tiles * tiles; ++tile) {
            const int i0 = kend + (tile % tiles) * MFB_TILE, j0 = kend + (tile / tiles) * MFB_TILE;
            for (int idx = lane; idx < MFB_NB * MFB_TILE; idx += gs) {
                const int a = idx % MFB_TILE, q = idx / MFB_TILE;
                Ls[q][a] = (q < nb && i0 + a < m) ? F[i0 + a + (u64)(kb + q) * m] : 0.0;
                const int q2 = idx % MFB_NB, b = idx / MFB_NB;
                Us[q2][b] = (q2 < nb && j0 + b < m) ? F[kb + q2 + (u64)(j0 + b) * m] : 0.0;
            }
            __syncthreads();
            double acc[4][4] = {};
#pragma unroll
            for (int q = 0; q < MFB_NB; ++q) {
                double l[4], u[4];
#pragma unroll
                for (int a = 0; a < 4; ++a) l[a] = Ls[q][tx + 16 * a];
#pragma unroll
                for (int b = 0; b < 4; ++b) u[b] = Us[q][ty + 16 * b];
#pragma unroll
                for (int a = 0; a < 4; ++a)
#pragma unroll
                    for (int b = 0; b < 4; ++b) acc[a][b] = fma(l[a], u[b], acc[a][b]);
            }
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const int j = j0 + ty + 16 * b;
                if (j >= m) continue;
#pragma unroll
                for (int a = 0; a < 4; ++a) {
                    const int i = i0 + tx + 16 * a;
                    if (i < m) F[i + (u64)j * m] -= acc[a][b];
                }
            }
            __syncthreads();
        }
    }
    u32* pv_out = pinv + t.pinv_off[v];
    for (int i = lane; i < e; i += gs) pv_out[perm[i]] = i;
}

// Row `lane` of the 32×32 diagonal block at kb (columns kb..kb+nb; zero past them, and the
// identity past row nb so that the unrolled sweeps need no bounds).
__device__ __forceinline__ void tri_row(const double* F, int m, int kb, int nb, int lane, double* row) {
#pragma unroll
    for (int q = 0; q < 32; ++q) row[q] = (lane < nb && q < nb) ? F[kb + lane + (u64)(kb + q) * m] : (lane == q ? 1.0 : 0.0);
}

// What both solve kernels take from their block: the front (node of the list at blockIdx.x, its
// m, e and factors F), its slot rows r, the chunk of right-hand sides (blockIdx.y: columns c0 ..
// c0 + nc) and the thread's lane and warp.
struct SolveFront {
    int m, e;
    const double* F;
    double* r;
    u32 c0, nc;
    int lane, warp, warps;
    __device__ SolveFront(const Tree& t, const u32* __restrict__ list, u32 nrhs, const double* __restrict__ storage,
                          double* __restrict__ slots) {
        const u32 v = list[blockIdx.x];
        m = t.m[v];
        e = t.e[v];
        F = storage + t.front_off[v];
        r = slots + t.slot[v] * nrhs;
        c0 = blockIdx.y * MFB_RC;
        nc = min((u32)MFB_RC, nrhs - c0);
        lane = threadIdx.x & 31;
        warp = threadIdx.x >> 5;
        warps = blockDim.x >> 5;
    }
};

// Forward solve of one large front for the columns c0..c0+MFB_RC of its slot r (after
// mf_rhs_start / mf_rhs_extend_add): y_E = L_EE⁻¹ r_E (unit lower), r_S −= L_SE y_E.
extern "C" __global__ void __launch_bounds__(MFB_THREADS) mfb_forward(Tree t, const u32* __restrict__ list, u32 nrhs,
                                                                      const double* __restrict__ storage,
                                                                      double* __restrict__ slots) {
    const SolveFront f(t, list, nrhs, storage, slots);
    const int m = f.m, e = f.e, lane = f.lane, warp = f.warp, warps = f.warps;
    const double* F = f.F;
    double* r = f.r;
    const u32 c0 = f.c0, nc = f.nc;
    for (int kb = 0; kb < e; kb += 32) {
        const int nb = min(32, e - kb);
        double l[32];  // this lane's row of the 32×32 triangle, loaded once (independent loads)
        tri_row(F, m, kb, nb, lane, l);
        for (u32 c = c0 + warp; c < c0 + nc; c += warps) {
            double ri = lane < nb ? r[(u64)(kb + lane) * nrhs + c] : 0.0;
#pragma unroll
            for (int q = 0; q < 32; ++q) {
                const double yq = __shfl_sync(0xffffffffu, ri, q);
                if (lane > q) ri = fma(-l[q], yq, ri);
            }
            if (lane < nb) r[(u64)(kb + lane) * nrhs + c] = ri;
        }
        __syncthreads();
        const int rows = m - kb - nb;
        for (int idx = threadIdx.x; idx < rows * (int)nc; idx += blockDim.x) {
            const int i = kb + nb + idx % rows;
            const u32 c = c0 + idx / rows;
            double acc = 0.0;
            for (int q = 0; q < nb; ++q) acc = fma(F[i + (u64)(kb + q) * m], r[(u64)(kb + q) * nrhs + c], acc);
            r[(u64)i * nrhs + c] -= acc;
        }
        __syncthreads();
    }
}

// Backward solve of one large front (slot rows 0..e: y, rows e..m: x of the Schur rows):
// y_E −= U_ES x_S, then x_E = U_EE⁻¹ y_E, by blocks of 32 rows from the last.
extern "C" __global__ void __launch_bounds__(MFB_THREADS) mfb_backward(Tree t, const u32* __restrict__ list, u32 nrhs,
                                                                       const double* __restrict__ storage,
                                                                       double* __restrict__ slots) {
    const SolveFront f(t, list, nrhs, storage, slots);
    const int m = f.m, e = f.e, lane = f.lane, warp = f.warp, warps = f.warps;
    const double* F = f.F;
    double* r = f.r;
    const u32 c0 = f.c0, nc = f.nc;
    for (int idx = threadIdx.x; idx < e * (int)nc; idx += blockDim.x) {
        const int k = idx % e;
        const u32 c = c0 + idx / e;
        double acc = 0.0;
        for (int l = e; l < m; ++l) acc = fma(F[k + (u64)l * m], r[(u64)l * nrhs + c], acc);
        r[(u64)k * nrhs + c] -= acc;
    }
    __syncthreads();
    for (int kb = ((e - 1) / 32) * 32; kb >= 0; kb -= 32) {
        const int nb = min(32, e - kb);
        double u[32];  // this lane's row of the 32×32 triangle (1 on the diagonal past nb)
        tri_row(F, m, kb, nb, lane, u);
        for (u32 c = c0 + warp; c < c0 + nc; c += warps) {
            double ri = lane < nb ? r[(u64)(kb + lane) * nrhs + c] : 0.0;
#pragma unroll
            for (int q = 31; q >= 0; --q) {
                if (lane == q) ri /= u[q];
                const double xq = __shfl_sync(0xffffffffu, ri, q);
                if (lane < q) ri = fma(-u[q], xq, ri);
            }
            if (lane < nb) r[(u64)(kb + lane) * nrhs + c] = ri;
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < kb * (int)nc; idx += blockDim.x) {
            const int i = idx % kb;
            const u32 c = c0 + idx / kb;
            double acc = 0.0;
            for (int q = 0; q < nb; ++q) acc = fma(F[i + (u64)(kb + q) * m], r[(u64)(kb + q) * nrhs + c], acc);
            r[(u64)i * nrhs + c] -= acc;
        }
        __syncthreads();
    }
}
