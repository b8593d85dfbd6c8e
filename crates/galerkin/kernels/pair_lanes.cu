// Scheme III's engine for cells with few functions (trilinear hexahedra, p = 1: 8 functions, 8
// points, 24 × 24 elasticity matrices) on the CUDA cores, built for latency, not for the tensor
// cores: a 24 × 24 matrix from 8 points is too small a product for MMA tiles to pay for their
// staging, and the kernel is bound by the chain of dependent loads per cell and by its writes.
//
// A block takes PL_CELLS consecutive cells (a group) at a time, so its matrices are one contiguous
// stretch of `out`: a lane per coordinate loads the group's vertex coordinates (on a resident grid
// the next group's are loaded into registers during this one, and the vertex ids of the one after:
// no dependent load chain at a group's head); a lane per (cell, point) forms √(w|det J|) J⁻ᵀ∇φ_a of
// the NLOC functions at its point into shared memory; a lane per (cell, pair a ≤ b) sums the pair's
// nine moments M_kl = Σ_q w|det J| ∂_k φ_a ∂_l φ_b and turns them into its NCOMP × NCOMP block by
// the physics' QF::block (any gradient-only physics, coefficients constant per cell), signed, into
// the group's staged matrices in shared memory (over the gradients); then the block stores the
// group's matrices with consecutive lanes on consecutive 16-byte words. Same layouts as
// element_schemes.cu's scheme III: packed upper triangles (PACKED) or full matrices.
// Defines: those of element_schemes.cu's variant (DIM, NV, NLOC, NQ, NCOMP, QF, PACKED,
// STREAM_STORES, SKIP_PARTS) and PL_CELLS (cells per group), PL_MIN_BLOCKS (launch bounds), PL_FUSE.
//
// PL_FUSE F > 0 (round 13): F lanes per (cell, point) each form J and √(w|det J|) J⁻¹ themselves
// (the same J, F times) and the weighted gradients of NLOC / F functions straight into `hs`: no
// J⁻¹ table in shared memory, one phase and one barrier fewer per group (0: the table, then a
// lane per (cell, point, function)).
#ifndef PL_CELLS
#define PL_CELLS 8
#endif
#ifndef PL_MIN_BLOCKS
#define PL_MIN_BLOCKS 1
#endif
#ifndef PACKED
#define PACKED 1
#endif
#ifndef PL_UNROLL
#define PL_UNROLL 2                                  // points (functions) a lane's moment (gradient) loop has in flight: registers
#endif
#ifndef STREAM_STORES
#define STREAM_STORES 0
#endif
#ifndef PL_FUSE
#define PL_FUSE 0
#endif
#ifndef SKIP_PARTS
#define SKIP_PARTS 0                                 // benchmark's time split only: 1 geometry, 2 moments, 4 stores left out
#endif

constexpr int NPAIR = NLOC * (NLOC + 1) / 2;         // pairs a ≤ b
constexpr int PL_THREADS = (NPAIR * PL_CELLS + 31) / 32 * 32;
constexpr int KSTORE = PACKED ? ND * (ND + 1) / 2 : ND * ND;  // doubles stored per cell
constexpr int XC = NV * DIM;                         // coordinates per cell
constexpr int HC = DIM * NQ * NLOC + 8;              // a cell's gradients h[k][q][a]; the pad puts the next cell's on other banks
constexpr int GEOM = PL_CELLS * (XC + HC + NQ * DIM * DIM);
constexpr int STAGE = PL_CELLS * KSTORE;
constexpr int REGION = ((GEOM > STAGE ? GEOM : STAGE) + 1) & ~1;  // staged matrices over coordinates and gradients
static_assert(DIM == 3, "the pair-lane engine is written for 3D cells");
static_assert(PL_CELLS * NQ <= PL_THREADS && PL_CELLS * XC <= PL_THREADS, "a lane per (cell, point) and per coordinate");
static_assert(PL_THREADS <= 1024, "one block of at most 1024 threads");
static_assert(PL_FUSE == 0 || (NLOC % PL_FUSE == 0 && PL_CELLS * NQ * PL_FUSE <= PL_THREADS), "fused geometry: F lanes per (cell, point), NLOC / F functions each");
constexpr int PL_LANES_Q = PL_FUSE > 0 ? PL_FUSE : 1;  // lanes per (cell, point) in the Jacobian phase

// Offset of entry (r, s) in a cell's stored matrix (packed: s ≥ r).
__device__ __forceinline__ int stored_at(int r, int s) { return PACKED ? (int)packed_index(ND, r, s) : r * ND + s; }

__device__ __forceinline__ double pair_sign(const signed char* __restrict__ signs, int has_signs, u64 c, int a) {
    return has_signs ? (double)__ldg(&signs[c * NLOC + a]) : 1.0;
}

// Stores the group's `n` staged matrices (contiguous in `out` from its first cell) with
// consecutive lanes on consecutive 16-byte words where the stored size is even.
__device__ __forceinline__ void store_group(double* __restrict__ out, const double* __restrict__ st, int n) {
    if (KSTORE % 2 == 0) {
        const int n2 = n * KSTORE / 2;
        double2* o = reinterpret_cast<double2*>(out);
        const double2* s = reinterpret_cast<const double2*>(st);
#pragma unroll 2
        for (int i = threadIdx.x; i < n2; i += PL_THREADS) {
            const double2 v = s[i];
            if (SKIP_PARTS & 4) {
                if (v.x == 1.25e300) o[i] = v;  // never: the values stay live, nothing is stored
            } else if (STREAM_STORES) {
                __stcs(&o[i], v);
            } else {
                o[i] = v;
            }
        }
    } else {
        for (int i = threadIdx.x; i < n * KSTORE; i += PL_THREADS) {
            if (SKIP_PARTS & 4) {
                if (st[i] == 1.25e300) out[i] = st[i];
            } else if (STREAM_STORES) {
                __stcs(&out[i], st[i]);
            } else {
                out[i] = st[i];
            }
        }
    }
}

// `groups` of PL_CELLS cells from blockIdx.x, a grid's worth apart (one per block unless the grid
// is resident).
extern "C" __global__ void __launch_bounds__(PL_THREADS, PL_MIN_BLOCKS) matrices_pair_lanes(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    __shared__ __align__(16) double sm[REGION];
    double* xs = sm;                    // xs[cell][v·DIM + d]
    double* hs = sm + PL_CELLS * XC;    // hs[cell·HC + (k·NQ + q)·NLOC + a]
    double* jq = hs + PL_CELLS * HC;    // jq[(cell·NQ + q)·DIM² + r]: √(w|det J|) J⁻¹
    const int t = threadIdx.x;
    // This lane's pair (a, b), row by row of the upper triangle, in cell `slot` of the group.
    const int slot = t / NPAIR;
    int a = 0, b = t - slot * NPAIR;
    while (b >= NLOC - a) {
        b -= NLOC - a;
        ++a;
    }
    b += a;
    // This lane's coordinate: cell xslot, vertex xi / DIM, component xi % DIM.
    const bool xlane = t < PL_CELLS * XC;
    const int xslot = t / XC, xi = t - xslot * XC;
    const u64 groups = (ncells + PL_CELLS - 1) / PL_CELLS, stride = gridDim.x;
    const auto has_cell = [=](u64 g) { return xlane && g < groups && g * PL_CELLS + xslot < ncells; };
    const auto vertex_of = [=](u64 g) { return __ldg(&cell_verts[(g * PL_CELLS + xslot) * NV + xi / DIM]); };
    u64 g = blockIdx.x;
    double xn = 0.0;  // this lane's coordinate of group g
    u32 vn = 0;       // its vertex id in group g + stride
    if (has_cell(g)) xn = __ldg(&coords[(u64)vertex_of(g) * DIM + xi % DIM]);
    if (has_cell(g + stride)) vn = vertex_of(g + stride);
    for (; g < groups; g += stride) {
        const u64 c0 = g * PL_CELLS;
        const int n = ncells - c0 < (u64)PL_CELLS ? (int)(ncells - c0) : PL_CELLS;
        __syncthreads();  // the previous group's staged matrices are stored
        if (xlane) xs[t] = xn;
        // The next group's coordinates (ids loaded a group ago) and the one after's ids, under this one.
        if (has_cell(g + stride)) xn = __ldg(&coords[(u64)vn * DIM + xi % DIM]);
        if (has_cell(g + 2 * stride)) vn = vertex_of(g + 2 * stride);
        // The pair lane's coefficients and signs, issued early.
        const bool live = slot < n;
        const u64 c = c0 + (live ? slot : 0);
        double p[NPA];
        passive_at(coef, meta, c, 0, p);
        const double sab = live ? pair_sign(signs, has_signs, c, a) * pair_sign(signs, has_signs, c, b) : 0.0;
        __syncthreads();
        // A lane per (cell, point) (PL_FUSE: F lanes): √(w|det J|) J⁻¹ (J from the coordinates in shared memory).
        if (t < PL_CELLS * NQ * PL_LANES_Q && t / (NQ * PL_LANES_Q) < n && !(SKIP_PARTS & 1)) {
            const int gs = t / (NQ * PL_LANES_Q), gq = t / PL_LANES_Q, q = gq - gs * NQ;
            // J = Σ_v x_v ⊗ ∇N_v(ξ_q) (cell_jacobian's order), PL_UNROLL vertices in flight: registers.
            const double* x = xs + gs * XC;
            const double* gd = tab + TAB_GDN + q * NV * DIM;
            double jac[DIM][DIM] = {}, inv[DIM][DIM];
#pragma unroll PL_UNROLL
            for (int v = 0; v < NV; ++v) {
                double xv[DIM], gv[DIM];
#pragma unroll
                for (int d = 0; d < DIM; ++d) {
                    xv[d] = x[v * DIM + d];
                    gv[d] = __ldg(&gd[v * DIM + d]);
                }
#pragma unroll
                for (int d = 0; d < DIM; ++d)
#pragma unroll
                    for (int e = 0; e < DIM; ++e) jac[d][e] = fma(xv[d], gv[e], jac[d][e]);
            }
            const double det = invert_jacobian<DIM>(jac, inv);
            const double sw = sqrt(__ldg(&tab[TAB_W + q]) * fabs(det));
            if (PL_FUSE > 0) {
                // This lane's NLOC / F functions (f ≡ lane mod F): their weighted gradients.
#pragma unroll
                for (int r = 0; r < DIM * DIM; ++r) inv[r / DIM][r % DIM] *= sw;
#pragma unroll
                for (int f = t % PL_LANES_Q; f < NLOC; f += PL_LANES_Q) {
                    double gr[DIM];
                    phys_grad(tab, q, f, inv, gr);
#pragma unroll
                    for (int k = 0; k < DIM; ++k) hs[gs * HC + (k * NQ + q) * NLOC + f] = gr[k];
                }
            } else {
#pragma unroll
                for (int r = 0; r < DIM * DIM; ++r) jq[t * DIM * DIM + r] = sw * inv[r / DIM][r % DIM];
            }
        }
        __syncthreads();
        // A lane per (cell, point, function): its weighted physical gradient.
        for (int i = t; PL_FUSE == 0 && i < n * NQ * NLOC && !(SKIP_PARTS & 1); i += PL_THREADS) {
            const int gq = i / NLOC, f = i - gq * NLOC, gs = gq / NQ, q = gq - gs * NQ;
            double inv[DIM][DIM], gr[DIM];
#pragma unroll
            for (int r = 0; r < DIM * DIM; ++r) inv[r / DIM][r % DIM] = jq[gq * DIM * DIM + r];
            phys_grad(tab, q, f, inv, gr);
#pragma unroll
            for (int k = 0; k < DIM; ++k) hs[gs * HC + (k * NQ + q) * NLOC + f] = gr[k];
        }
        if (PL_FUSE == 0) __syncthreads();
        MomentPair mp;
#pragma unroll
        for (int m = 0; m < DIM * DIM; ++m) mp.m[m] = 0.0;
        if (live && !(SKIP_PARTS & 2)) {
            const double* h = hs + slot * HC;
#pragma unroll PL_UNROLL
            for (int q = 0; q < NQ; ++q) {
                double ha[DIM], hb[DIM];
#pragma unroll
                for (int k = 0; k < DIM; ++k) {
                    ha[k] = h[(k * NQ + q) * NLOC + a];
                    hb[k] = h[(k * NQ + q) * NLOC + b];
                }
#pragma unroll
                for (int k = 0; k < DIM; ++k)
#pragma unroll
                    for (int l = 0; l < DIM; ++l) mp.m[k * DIM + l] = fma(ha[k], hb[l], mp.m[k * DIM + l]);
            }
        }
        __syncthreads();  // the gradients are read: the staged matrices go over them
        if (live) {
            double e[NCOMP][NCOMP] = {};
            QF::template block<DIM, NCOMP>(p, mp, e);
            double* k = sm + slot * KSTORE;
#pragma unroll
            for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                for (int j = 0; j < NCOMP; ++j) {
                    const int r = a * NCOMP + i, s = b * NCOMP + j;
                    if (a < b || j >= i) k[stored_at(r, s)] = sab * e[i][j];
                    if (!PACKED && (a < b || j > i)) k[stored_at(s, r)] = sab * e[i][j];
                }
        }
        __syncthreads();
        store_group(out + c0 * KSTORE, sm, n);
    }
}
