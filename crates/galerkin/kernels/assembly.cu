// Element matrices of Lagrange elements integrated on the GPU and summed into a CSR matrix (through
// precomputed positions, with atomics or by colors) or stored per cell (the `element` level), plus
// the element-level operator. The physics is the QFunction QF (kernels/qf/), through its linearised
// form on pairs of basis functions (`QF::block`); nothing here knows which physics it is.
//
// One source, many variants: the host compiles it once per (element, quadrature, physics) with
//   DIM     space dimension (1, 2, 3)         NV     vertices of the (affine/multilinear) geometry
//   NLOC    scalar basis functions per cell   NQ     quadrature points
//   NCOMP   components (1 scalar, DIM elasticity)
//   JB      columns (nodes) per thread: bounds the accumulators to NCOMP²·JB registers
//   AFFINE  1 when the Jacobian is constant on the cell (simplices)
//   QF      the QFunction type, e.g. Diffusion or Sum<Elasticity,Mass>
//   PATCH_DOUBLES  shared-memory doubles of a patch block (the host's `patches::patch_doubles`)
//   PATCH_CELLS    cells per patch (`patches::fitted_patch_cells`)
//   REFTENSOR  1 on affine cells with coefficients constant per cell: the quadrature sum is done once
//          on the host into reference tensors (FFC's tensor representation) and a cell only
//          contracts them with its geometry, NLOC²·DIM² work instead of NQ·NLOC²·DIM²
//   REF_TABLE  with REFTENSOR: S and M below as a list of literals, for constant memory
// so every loop below has compile-time bounds and unrolls.
//
// The tables (`tab`), identical for every cell, are laid out as
//   phi[NQ][NLOC] | dphi[NQ][NLOC][DIM] (reference gradients) | gdn[NQ][NV][DIM] (geometry basis
//   gradients) | w[NQ] | with REFTENSOR: S[NLOC][NLOC][DIM][DIM] = Σ_q w ∂_c φ_i ∂_e φ_j and
//   M[NLOC][NLOC] = Σ_q w φ_i φ_j
// The QFunction's NP passive fields (coefficients) live in one buffer: field s at (c, q) is
//   coef[meta[3s] + c·meta[3s+1] + q·meta[3s+2]]
// (strides 0 for constants, per-cell values for regions, per point for functions).

#if !defined(DIM) || !defined(PATCH_DOUBLES) || !defined(PATCH_CELLS)
#error "assembly.cu needs its variant defines (DIM, NV, NLOC, NQ, NCOMP, JB, AFFINE, QF, PATCH_DOUBLES, PATCH_CELLS)"
#endif

constexpr int NJB = (NLOC + JB - 1) / JB;
#if REFTENSOR
constexpr int TAB_S = TAB_W + NQ;
#ifndef REF_TABLE
#error "reference-tensor variants need REF_TABLE, the host's S and M (`tab` from TAB_S on)"
#endif
#endif

// Where the element entries go.
enum Mode { CSR_ATOMIC = 0, CSR_COLORED = 1, ELEMENT_STORE = 2 };

#if REFTENSOR
// What a cell contributes to every entry on the reference-tensor path: J⁻¹, |det J| J⁻¹J⁻ᵀ (the
// diffusion tensor pulled back to the reference cell), |det J| and the passive fields.
struct CellFactors {
    double inv[DIM][DIM], g[DIM][DIM], ad, p[NPA];
};

__device__ __forceinline__ CellFactors cell_factors(const double xv[NV][DIM], const double* __restrict__ tab,
                                                   const double* __restrict__ coef, const u64* __restrict__ meta, u64 c) {
    CellFactors f;
    double det;
    jacobian_at(xv, tab, 0, f.inv, det);
    f.ad = fabs(det);
#pragma unroll
    for (int a = 0; a < DIM; ++a)
#pragma unroll
        for (int b = 0; b < DIM; ++b) {
            double s = 0.0;
#pragma unroll
            for (int k = 0; k < DIM; ++k) s = fma(f.inv[a][k], f.inv[b][k], s);
            f.g[a][b] = f.ad * s;
        }
    passive_at(coef, meta, c, 0, f.p);
    return f;
}

// Where a contraction reads the reference tensors S and M (`tab` from TAB_S on). The patch kernel
// reads them from constant memory: its lanes mostly share (i, j), so a read is one broadcast
// through the constant cache, which leaves the L1 to the mesh and list loads (H100, P2 Poisson in
// 3D: 0.638 → 0.614 ms). The per-cell kernels were slower that way (atomic 1.19 → 1.24 ms,
// colored 3.35 → 3.86 ms) and lanes at different (i, j), as in `assemble_rows`, would serialize:
// they read `tab`.
__constant__ const double REF[] = {REF_TABLE};
// Both give S_ij at `block(i, j)` (entries `s(block, a·DIM + b)`) and M_ij at `m(i, j)`.
struct ConstRef {
    __device__ __forceinline__ int block(int i, int j) const { return (i * NLOC + j) * (DIM * DIM); }
    __device__ __forceinline__ double s(int blk, int k) const { return REF[blk + k]; }
    __device__ __forceinline__ double m(int i, int j) const { return REF[NLOC * NLOC * DIM * DIM + i * NLOC + j]; }
};
struct TabRef {
    const double* __restrict__ tab;
    __device__ __forceinline__ const double* block(int i, int j) const {
        return tab + TAB_S + ((u64)i * NLOC + j) * (DIM * DIM);
    }
    __device__ __forceinline__ double s(const double* blk, int k) const { return __ldg(&blk[k]); }
    __device__ __forceinline__ double m(int i, int j) const {
        return __ldg(&tab[TAB_S + NLOC * NLOC * DIM * DIM + i * NLOC + j]);
    }
};

// The moments of pair (i, j) on an affine cell from the reference tensors S_ij and M_ij: what
// `QF::block` reads, without a quadrature loop.
struct RefPair {
    double vvv, dotv;
    double u[DIM][DIM];  // Σ_q w ∂_k φ_i ∂_l φ_j in physical coordinates, times |det J| (FULL_GRAD only)
    __device__ __forceinline__ double vv() const { return vvv; }
    __device__ __forceinline__ double dot() const { return dotv; }
    __device__ __forceinline__ double gg(int k, int l) const { return u[k][l]; }
};

// The NCOMP×NCOMP block (i, j) of the element matrix from the reference tensors S_ij and M_ij.
template <class Ref>
__device__ __forceinline__ void reftensor_block(const CellFactors& f, Ref ref, int i, int j, double e[NCOMP][NCOMP]) {
    const auto sij = ref.block(i, j);
    // What the QFunction reads, each computed only if it does (the rest is dead code): without
    // FULL_GRAD only S_ij's symmetric part meets the symmetric g, and the host stores S
    // symmetrized, so the upper entries suffice (6 loads instead of 9 in 3D); with it, the physical
    // moments u = |det J| J⁻ᵀ S J⁻¹ and ∇φ_i·∇φ_j as their trace.
    RefPair pr;
    pr.vvv = f.ad * ref.m(i, j);
    double st[DIM][DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a)
#pragma unroll
        for (int b = 0; b < DIM; ++b) st[a][b] = (QF::FULL_GRAD || a <= b) ? ref.s(sij, a * DIM + b) : 0.0;
    if (QF::FULL_GRAD) {
        double t[DIM][DIM];
#pragma unroll
        for (int a = 0; a < DIM; ++a)
#pragma unroll
            for (int k2 = 0; k2 < DIM; ++k2) {
                double s = 0.0;
#pragma unroll
                for (int k = 0; k < DIM; ++k) s = fma(f.inv[k][a], st[k][k2], s);
                t[a][k2] = s;
            }
        double tr = 0.0;
#pragma unroll
        for (int a = 0; a < DIM; ++a)
#pragma unroll
            for (int b = 0; b < DIM; ++b) {
                double s = 0.0;
#pragma unroll
                for (int k = 0; k < DIM; ++k) s = fma(t[a][k], f.inv[k][b], s);
                pr.u[a][b] = f.ad * s;
                if (a == b) tr += pr.u[a][b];
            }
        pr.dotv = tr;
    } else {
        double s = 0.0;
#pragma unroll
        for (int a = 0; a < DIM; ++a)
#pragma unroll
            for (int b = 0; b < DIM; ++b)
                if (a <= b) s = fma(a == b ? f.g[a][b] : 2.0 * f.g[a][b], st[a][b], s);
        pr.dotv = s;
#pragma unroll
        for (int a = 0; a < DIM; ++a)
#pragma unroll
            for (int b = 0; b < DIM; ++b) pr.u[a][b] = 0.0;
    }
#pragma unroll
    for (int a = 0; a < NCOMP; ++a)
#pragma unroll
        for (int b = 0; b < NCOMP; ++b) e[a][b] = 0.0;
    QF::template block<DIM, NCOMP>(f.p, pr, e);
}
#endif

// Block (row node i, columns j0..j0+JB) of cell c's element matrix, NCOMP×(JB·NCOMP), into `acc`;
// columns below `jmin` are left at zero (the patch kernel keeps only the upper triangle). The
// Jacobian is recomputed per call (cheap next to the memory traffic), so threads need no shared
// state.
__device__ __forceinline__ void element_block(u64 c, int i, int j0, int jmin, const u32* __restrict__ cell_verts,
                                              const double* __restrict__ coords, const double* __restrict__ tab,
                                              const double* __restrict__ coef, const u64* __restrict__ meta,
                                              double acc[NCOMP][JB][NCOMP]) {
    double xv[NV][DIM];
    load_cell_coords(c, cell_verts, coords, xv);
#pragma unroll
    for (int a = 0; a < NCOMP; ++a)
#pragma unroll
        for (int jj = 0; jj < JB; ++jj)
#pragma unroll
            for (int b = 0; b < NCOMP; ++b) acc[a][jj][b] = 0.0;
#if REFTENSOR
    {
        const CellFactors f = cell_factors(xv, tab, coef, meta, c);
#pragma unroll
        for (int jj = 0; jj < JB; ++jj) {
            const int j = j0 + jj;
            if (JB * NJB != NLOC && j >= NLOC) break;
            if (j < jmin) continue;
            double e[NCOMP][NCOMP];
            reftensor_block(f, TabRef{tab}, i, j, e);
#pragma unroll
            for (int a = 0; a < NCOMP; ++a)
#pragma unroll
                for (int b = 0; b < NCOMP; ++b) acc[a][jj][b] += e[a][b];
        }
    }
#else
    double inv[DIM][DIM], det = 0.0;
    for (int q = 0; q < NQ; ++q) {
        if (!AFFINE || q == 0) jacobian_at(xv, tab, q, inv, det);
        const double w = __ldg(&tab[TAB_W + q]) * fabs(det);
        double gi[DIM], p[NPA];
        phys_grad(tab, q, i, inv, gi);
        const double phii = __ldg(&tab[q * NLOC + i]);
        passive_at(coef, meta, c, q, p);
#pragma unroll
        for (int jj = 0; jj < JB; ++jj) {
            const int j = j0 + jj;
            if (JB * NJB != NLOC && j >= NLOC) break;
            if (j < jmin) continue;
            double gj[DIM];
            phys_grad(tab, q, j, inv, gj);
            const PointPair<DIM> pr{w, phii, QF::VALUE ? __ldg(&tab[q * NLOC + j]) : 0.0, gi, gj};
            double e[NCOMP][NCOMP];
#pragma unroll
            for (int a = 0; a < NCOMP; ++a)
#pragma unroll
                for (int b = 0; b < NCOMP; ++b) e[a][b] = 0.0;
            QF::template block<DIM, NCOMP>(p, pr, e);
#pragma unroll
            for (int a = 0; a < NCOMP; ++a)
#pragma unroll
                for (int b = 0; b < NCOMP; ++b) acc[a][jj][b] += e[a][b];
        }
    }
#endif
}

// One thread per (cell, row node i, block of JB column nodes): integrates its block of the element
// matrix in registers, then writes it where `mode` says. With `has_signs` (hierarchical bases, whose
// edge and face modes flip sign between neighbours) entry (i, j) is scaled by signs[c][i]·signs[c][j]
// on its way out: the matrix in the global orientation. The 32 lanes of a warp take 32 cells at
// the same (i, block), so their reads of the reference tables are broadcasts, not 32 addresses.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) assemble_cells(
    u64 ncells, const u32* __restrict__ cell_list, const u32* __restrict__ cell_verts,
    const double* __restrict__ coords, const u32* __restrict__ cell_nodes, const signed char* __restrict__ signs,
    int has_signs, const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    int mode, const u32* __restrict__ row_ptr, const unsigned short* __restrict__ kpos, double* __restrict__ out) {
    constexpr int TILE = 32;
    const u64 work = (ncells + TILE - 1) / TILE * (u64)(TILE * NLOC * NJB);
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 tile = t / (TILE * NLOC * NJB);
        const int rest = (int)(t - tile * (TILE * NLOC * NJB)), ij = rest / TILE;
        const u64 k = tile * TILE + (rest % TILE);
        if (k >= ncells) continue;
        const int i = ij / NJB, j0 = (ij % NJB) * JB;
        const u64 c = cell_list ? (u64)cell_list[k] : k;
        double acc[NCOMP][JB][NCOMP];
        element_block(c, i, j0, 0, cell_verts, coords, tab, coef, meta, acc);
        const u64 node_i = __ldg(&cell_nodes[c * NLOC + i]);
        const double si = has_signs ? (double)__ldg(&signs[c * NLOC + i]) : 1.0;
#pragma unroll
        for (int a = 0; a < NCOMP; ++a) {
            const int r = i * NCOMP + a;
            const u64 row_start = mode == ELEMENT_STORE ? 0 : (u64)__ldg(&row_ptr[node_i * NCOMP + a]);
#pragma unroll
            for (int jj = 0; jj < JB; ++jj) {
                const int j = j0 + jj;
                if (JB * NJB != NLOC && j >= NLOC) break;
                const u64 col0 = mode == ELEMENT_STORE ? 0 : row_start + (u64)__ldg(&kpos[(c * NLOC + i) * NLOC + j]) * NCOMP;
                const double sij = has_signs ? si * (double)__ldg(&signs[c * NLOC + j]) : 1.0;
#pragma unroll
                for (int b = 0; b < NCOMP; ++b) {
                    const double v = sij * acc[a][jj][b];
                    if (mode == ELEMENT_STORE) {
                        out[c * (u64)(ND * ND) + (u64)r * ND + j * NCOMP + b] = v;
                    } else if (mode == CSR_ATOMIC) {
                        atomicAdd(&out[col0 + b], v);
                    } else {
                        out[col0 + b] += v;
                    }
                }
            }
        }
    }
}

// Patch assembly: fewer atomics. A block takes PATCH cells (consecutive in `order`, a space-filling
// curve, so they form a compact blob), writes the upper triangle of their element matrices to
// shared memory, then one thread per distinct pair of CSR values (a_RC, a_CR) of the patch sums
// the entries that land there and writes the sum to both: a plain store where no other patch
// touches the values (flag bit 31 of `upos`), an atomic otherwise. Atomic throughput, not
// bandwidth, bounds the per-cell kernel; this trades most atomics for shared-memory work, and
// symmetry halves that work. Every physics here (diffusion with a scalar coefficient, mass,
// isotropic elasticity) has symmetric element matrices. The host (`backend/cuda/patches.rs`) cuts a
// patch's pairs, in CSR order, into slices of 32 (one per warp) and stores a slice's lists column
// by column, padded with a zero slot, so a warp's index loads are coalesced and its lanes loop
// together. Only where a cell's triangle fits (CELL_STRIDE < PATCH_DOUBLES).
#if ((NLOC * (NLOC + 1) / 2) * NCOMP * NCOMP | 1) < PATCH_DOUBLES
// Node blocks (i ≤ j), NCOMP² doubles each, at an odd stride per cell so that lanes (one cell
// each) fall on different shared-memory banks; one zero double after the last cell.
constexpr int CELL_STRIDE = ((NLOC * (NLOC + 1) / 2) * NCOMP * NCOMP) | 1;
constexpr int PATCH = PATCH_CELLS;  // the host's `patches::fitted_patch_cells`
static_assert(PATCH >= 1 && PATCH * CELL_STRIDE < PATCH_DOUBLES, "a patch's triangles and the zero slot fit");
constexpr int ZERO_SLOT = PATCH * CELL_STRIDE;
constexpr u32 EXCLUSIVE = 0x80000000u;

// Offset of node block (i, j), i ≤ j, in a cell's row-major upper triangle.
__device__ __forceinline__ int upper_block(int i, int j) { return i * NLOC - i * (i - 1) / 2 + (j - i); }

__device__ __forceinline__ void write_value(double* __restrict__ values, u32 pos, bool exclusive, double v) {
    if (exclusive) values[pos] = v;
    else atomicAdd(&values[pos], v);
}

#if REFTENSOR
// Row block i of a cell's upper triangle (columns j ≥ i) from its factors and the constant
// reference tensors, into `cell`.
__device__ __forceinline__ void upper_row(const CellFactors& f, int i, double* cell) {
#pragma unroll
    for (int j = 0; j < NLOC; ++j) {
        if (j < i) continue;
        double blk[NCOMP][NCOMP];
        reftensor_block(f, ConstRef{}, i, j, blk);
        double* out = cell + upper_block(i, j) * (NCOMP * NCOMP);
#pragma unroll
        for (int a = 0; a < NCOMP; ++a)
#pragma unroll
            for (int b = 0; b < NCOMP; ++b) out[a * NCOMP + b] = blk[a][b];
    }
}
#endif

// Pair r of a patch is lane r % 32 of slice r / 32: a warp takes one slice (blockDim is a multiple
// of 32), and the slice's width is the same for all its lanes. Its positions and list bounds:
struct PairHead {
    u32 flagged, tp, k, end;
};

__device__ __forceinline__ PairHead pair_head(u32 r, u32 u0, u32 s0, const u32* __restrict__ upos,
                                              const u32* __restrict__ tpos, const u32* __restrict__ slice_base) {
    const u32 s = s0 + r / 32;
    return PairHead{__ldg(&upos[u0 + r]), __ldg(&tpos[u0 + r]), __ldg(&slice_base[s]) + r % 32, __ldg(&slice_base[s + 1])};
}

// The sum of a pair's entries: its list is every 32nd slot from k; four index loads in flight,
// then their shared-memory reads.
__device__ __forceinline__ double sum_pair(const double* e, const unsigned short* __restrict__ slots, u32 k, u32 end) {
    double sum = 0.0;
    for (; k + 96 < end; k += 128) {
        const unsigned short a0 = __ldg(&slots[k]), a1 = __ldg(&slots[k + 32]), a2 = __ldg(&slots[k + 64]),
                             a3 = __ldg(&slots[k + 96]);
        sum += (e[a0] + e[a1]) + (e[a2] + e[a3]);
    }
    for (; k < end; k += 32) sum += e[__ldg(&slots[k])];
    return sum;
}

__device__ __forceinline__ void write_pair(double* __restrict__ values, const PairHead& h, double sum) {
    const u32 pos = h.flagged & ~EXCLUSIVE;
    const bool exclusive = h.flagged & EXCLUSIVE;
    write_value(values, pos, exclusive, sum);
    if (h.tp != pos) write_value(values, h.tp, exclusive, sum);
}

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) assemble_patches(
    u64 ncells, const u32* __restrict__ order, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    const u32* __restrict__ patch_ptr, const u32* __restrict__ slice_ptr, const u32* __restrict__ slice_base,
    const u32* __restrict__ upos, const u32* __restrict__ tpos, const unsigned short* __restrict__ slots,
    double* __restrict__ values) {
    __shared__ double e[ZERO_SLOT + 1];
    if (threadIdx.x == 0) e[ZERO_SLOT] = 0.0;
    const u64 npatches = (ncells + PATCH - 1) / PATCH;
    for (u64 p = blockIdx.x; p < npatches; p += gridDim.x) {
        const u64 c0 = p * PATCH;
        const int nc = (int)min((u64)PATCH, ncells - c0);
#if REFTENSOR
        // Rows i and NLOC-1-i of a cell share one geometry: NLOC+1 triangle entries per thread
        // (H100: elasticity P1 in 3D 1.6 ms against 2.6 ms for a thread per row).
        for (int t = threadIdx.x; t < nc * ((NLOC + 1) / 2); t += blockDim.x) {
            const int i = t / nc, lc = t - i * nc;
            const u64 c = __ldg(&order[c0 + lc]);
            double xv[NV][DIM];
            load_cell_coords(c, cell_verts, coords, xv);
            const CellFactors f = cell_factors(xv, tab, coef, meta, c);
            upper_row(f, i, e + lc * CELL_STRIDE);
            if (NLOC - 1 - i != i) upper_row(f, NLOC - 1 - i, e + lc * CELL_STRIDE);
        }
#else
        for (int t = threadIdx.x; t < nc * NLOC * NJB; t += blockDim.x) {
            const int ij = t / nc, lc = t - ij * nc;
            const int i = ij / NJB, j0 = (ij % NJB) * JB;
            if (j0 + JB <= i) continue;  // a block wholly below the diagonal
            double acc[NCOMP][JB][NCOMP];
            element_block(__ldg(&order[c0 + lc]), i, j0, i, cell_verts, coords, tab, coef, meta, acc);
#pragma unroll
            for (int jj = 0; jj < JB; ++jj) {
                const int j = j0 + jj;
                if (JB * NJB != NLOC && j >= NLOC) break;
                if (j < i) continue;
                double* blk = e + lc * CELL_STRIDE + upper_block(i, j) * (NCOMP * NCOMP);
#pragma unroll
                for (int a = 0; a < NCOMP; ++a)
#pragma unroll
                    for (int b = 0; b < NCOMP; ++b) blk[a * NCOMP + b] = acc[a][jj][b];
            }
        }
#endif
        __syncthreads();
        const u32 u0 = __ldg(&patch_ptr[p]), n = __ldg(&patch_ptr[p + 1]) - u0, s0 = __ldg(&slice_ptr[p]);
        for (u32 r = threadIdx.x; r < n; r += blockDim.x) {
            const PairHead cur = pair_head(r, u0, s0, upos, tpos, slice_base);
            write_pair(values, cur, sum_pair(e, slots, cur.k, cur.end));
        }
        __syncthreads();
    }
}
#endif

#if REFTENSOR
// Assembly by rows, without atomics: one thread owns node n's NCOMP rows and visits the cells around
// it (incidences k = c·NLOC + i from the node-to-cell map), adding row block i of each cell's matrix.
// No two threads write the same value, and a row's values stay in the owner's cache while it is
// filled. Reference-tensor variants only (a row block then costs NLOC contractions, not a
// quadrature loop).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) assemble_rows(
    u64 nnodes, const u32* __restrict__ node_ptr, const u32* __restrict__ node_cells,
    const u32* __restrict__ cell_verts, const double* __restrict__ coords, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, const u32* __restrict__ row_ptr,
    const unsigned short* __restrict__ kpos, double* __restrict__ values) {
    for (u64 n = global_thread(); n < nnodes; n += grid_threads()) {
        u64 row_start[NCOMP];
#pragma unroll
        for (int a = 0; a < NCOMP; ++a) row_start[a] = row_ptr[n * NCOMP + a];
        const u32 end = node_ptr[n + 1];
        for (u32 k = node_ptr[n]; k < end; ++k) {
            const u64 inc = node_cells[k], c = inc / NLOC;
            const int i = (int)(inc - c * NLOC);
            double xv[NV][DIM];
            load_cell_coords(c, cell_verts, coords, xv);
            const CellFactors f = cell_factors(xv, tab, coef, meta, c);
            const unsigned short* kp = kpos + inc * NLOC;
#pragma unroll 4
            for (int j = 0; j < NLOC; ++j) {
                double e[NCOMP][NCOMP];
                reftensor_block(f, TabRef{tab}, i, j, e);
                const u64 col = (u64)__ldg(&kp[j]) * NCOMP;
#pragma unroll
                for (int a = 0; a < NCOMP; ++a)
#pragma unroll
                    for (int b = 0; b < NCOMP; ++b) values[row_start[a] + col + b] += e[a][b];
            }
        }
    }
}
#endif

// kpos[c][i][j] = rank of node j among the node columns of node i's CSR rows (rows are node-blocked:
// every component row of a node has all components of each neighbour node, in node order), found by
// binary search once per mesh. Entries that are missing (a pattern that does not cover the cell)
// count into `*missing`.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) element_positions(
    u64 ncells, const u32* __restrict__ cell_nodes, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx,
    unsigned short* __restrict__ kpos, u32* __restrict__ missing) {
    const u64 work = ncells * (u64)(NLOC * NLOC);
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 c = t / (NLOC * NLOC);
        const int ij = (int)(t - c * (NLOC * NLOC)), i = ij / NLOC, j = ij % NLOC;
        const u64 row = (u64)cell_nodes[c * NLOC + i] * NCOMP;
        const u32 target = cell_nodes[c * NLOC + j] * NCOMP;
        u32 lo = row_ptr[row], hi = row_ptr[row + 1];
        const u32 start = lo;
        while (lo < hi) {
            const u32 mid = lo + (hi - lo) / 2;
            if (col_idx[mid] < target) lo = mid + 1; else hi = mid;
        }
        if (lo < row_ptr[row + 1] && col_idx[lo] == target) {
            kpos[t] = (unsigned short)((lo - start) / NCOMP);
        } else {
            kpos[t] = 0;
            atomicAdd(missing, 1u);
        }
    }
}

// out[idx[k]] += vals[k]: host-integrated terms (Robin facets) added to device matrices.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) add_at(u64 n, const u64* __restrict__ idx,
                                                                      const double* __restrict__ vals,
                                                                      double* __restrict__ out) {
    for (u64 k = global_thread(); k < n; k += grid_threads()) atomicAdd(&out[idx[k]], vals[k]);
}

// Global dof of local dof `s` of cell `c`.
__device__ __forceinline__ u64 local_to_global(const u32* __restrict__ cell_nodes, u64 c, int s) {
    return (u64)__ldg(&cell_nodes[c * NLOC + s / NCOMP]) * NCOMP + s % NCOMP;
}

// Stored element matrices: full (ND × ND, row-major) or, `packed`, the upper triangle of a symmetric
// matrix packed row by row (element_schemes.cu's scheme III): the cell's stride and entry (r, s).
__device__ __forceinline__ u64 stored_stride(int packed) { return packed ? (u64)ND * (ND + 1) / 2 : (u64)ND * ND; }
__device__ __forceinline__ u64 stored_at(int packed, int r, int s) {
    if (!packed) return (u64)r * ND + s;
    return r < s ? packed_index(ND, r, s) : packed_index(ND, s, r);
}

// y += Σ_c R_cᵀ K_c R_c x, one thread per (cell, local row); y must be zeroed by the caller. Packed
// rows read their part left of the diagonal down the column (consecutive rows, consecutive
// addresses).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) element_apply(
    u64 ncells, const u32* __restrict__ cell_nodes, const double* __restrict__ kmat, int packed,
    const double* __restrict__ x, double* __restrict__ y) {
    const u64 work = ncells * (u64)ND;
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 c = t / ND;
        const int r = (int)(t - c * ND);
        const double* k = kmat + c * stored_stride(packed);
        double acc = 0.0;
#pragma unroll 8
        for (int s = 0; s < ND; ++s) acc = fma(k[stored_at(packed, r, s)], __ldg(&x[local_to_global(cell_nodes, c, s)]), acc);
        atomicAdd(&y[local_to_global(cell_nodes, c, r)], acc);
    }
}

// blocks[node][a][b] += the node's NCOMP×NCOMP diagonal block of every cell's matrix (block Jacobi
// without a global matrix), one thread per (cell, local node).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) element_node_blocks(
    u64 ncells, const u32* __restrict__ cell_nodes, const double* __restrict__ kmat, int packed, double* __restrict__ blocks) {
    const u64 work = ncells * (u64)NLOC;
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 c = t / NLOC;
        const int i = (int)(t - c * NLOC);
        const u64 node = __ldg(&cell_nodes[c * NLOC + i]);
        const double* k = kmat + c * stored_stride(packed);
#pragma unroll
        for (int a = 0; a < NCOMP; ++a)
#pragma unroll
            for (int b = 0; b < NCOMP; ++b)
                atomicAdd(&blocks[node * (NCOMP * NCOMP) + a * NCOMP + b], k[stored_at(packed, i * NCOMP + a, i * NCOMP + b)]);
    }
}
