// The matrix-free assembly levels: y = Σ_c R_cᵀ Bᵀ D B R_c x without element matrices.
//   partial (NONE = 0): D in reference coordinates, symmetric and packed, stored per quadrature
//                       point by `matfree_setup` (MFEM's partial assembly, libCEED's qdata);
//   none    (NONE = 1): geometry and passive fields re-read and D re-evaluated at every point of
//                       every apply, through the QFunction's `apply` (nothing stored per point).
// B is applied by sum factorization on quadrilaterals and hexahedra (TENSOR = 1: 1D tables, one
// axis at a time) and as a dense tabulation on simplices. A block takes EPB cells at a time; its
// threads share every phase (gather, B, pointwise, Bᵀ, scatter) with barriers between them and
// keep the cells' intermediate fields in shared memory. Correct first: the next round tunes it.
//
//   CELL_D = 1 (partial on affine cells whose coefficients are constant per cell: simplices):
//                       D_ref is the same at every point but for the weight, so it is stored once
//                       per cell without w_q and scaled by w_q when read (a QD-th of the traffic).
//   CELL_APPLY = 1 (affine simplices, coefficients per cell, small cells): `matfree_apply_cell`,
//                       one thread per cell with its dofs in registers and the tables in shared
//                       memory: no barriers and no shared staging of fields, D_ref built once per
//                       cell (read with CELL_D, recomputed with NONE).
// Defines: DIM, NCOMP, QF (kernels/qf/), NV (geometry vertices), TENSOR, NONE, CELL_D, CELL_APPLY,
// P and Q (basis functions and points per axis with TENSOR, per cell without), EPB (cells per block
// round; the block size with CELL_APPLY), DYN_SHARED (the cells' shared memory allocated at launch:
// cells of more than 48 KB, such as elasticity from Q5), SIGNED_IDX (hierarchical bases: the restriction's words
// carry signs and absent tensor slots, common.cuh).
// Tables `tab`: [b1[Q][P] | g1[Q][P]] (TENSOR) | phi[QD][PD] | dphi[QD][PD][DIM] | gdn[QD][NV][DIM]
// | w[QD], with dofs in kernel order (lexicographic with TENSOR). Passive fields as in assembly.cu:
// field s at (c, q) is coef[meta[3s] + c·meta[3s+1] + q·meta[3s+2]].

#if !defined(DIM) || !defined(QF) || !defined(EPB) || !defined(CELL_D)
#error "matfree.cu needs its variant defines (DIM, NCOMP, QF, NV, TENSOR, NONE, CELL_D, P, Q, EPB)"
#endif
#if CELL_D && (NONE || TENSOR)
#error "CELL_D is a partial level on simplices"
#endif
#ifndef CELL_APPLY
#define CELL_APPLY 0
#endif
#if CELL_APPLY && TENSOR
#error "CELL_APPLY is for simplices"
#endif
#ifndef DYN_SHARED
#define DYN_SHARED 0
#endif
#if CELL_APPLY && SIGNED_IDX
#error "CELL_APPLY gathers unsigned"
#endif


constexpr int ipow(int b, int e) { return e == 0 ? 1 : b * ipow(b, e - 1); }
constexpr int PD = TENSOR ? ipow(P, DIM) : P;  // basis functions per cell
constexpr int QD = TENSOR ? ipow(Q, DIM) : Q;  // points per cell
constexpr int QD_STORED = CELL_D ? 1 : QD;       // points per cell with their own D_ref in qdata
constexpr int MF = FieldSize<QF, DIM, NCOMP>::value;
constexpr int NVAL = QF::VALUE ? NCOMP : 0;
constexpr int NP = QF::NPASSIVE;
constexpr int NPA = NP > 0 ? NP : 1;
constexpr int MAXN = TENSOR ? ipow(P > Q ? P : Q, DIM) : 1;
#if TENSOR
constexpr int T_B1 = 0, T_G1 = Q * P;
#endif
constexpr int T_PHI = TENSOR ? 2 * Q * P : 0;
constexpr int T_DPHI = T_PHI + QD * PD;
constexpr int T_GDN = T_DPHI + QD * PD * DIM;
constexpr int T_W = T_GDN + QD * NV * DIM;
// Shared doubles per cell: gathered dofs (reused for the result), fields at points, two stage buffers.
constexpr int SH_U = NCOMP * PD, SH_F = MF * QD, SH_T = TENSOR ? MF * MAXN : 0;
constexpr int PER_CELL = SH_U + SH_F + 2 * SH_T;
static_assert(PER_CELL > 0, "a cell needs shared memory");

// Field f: component and derivative direction (-1 for the value).
__device__ __forceinline__ int field_comp(int f) { return f < NVAL ? f : (f - NVAL) / DIM; }
__device__ __forceinline__ int field_dir(int f) { return f < NVAL ? -1 : (f - NVAL) % DIM; }

// Geometry and passive fields of cell c at point q: J⁻¹, w_q |det J|, p.
struct PointData {
    double inv[DIM][DIM], wdet, p[NPA];
};

__device__ __forceinline__ PointData point_data(u64 c, int q, const u32* __restrict__ cell_verts,
                                                const double* __restrict__ coords, const double* __restrict__ tab,
                                                const double* __restrict__ coef, const u64* __restrict__ meta) {
    PointData d;
    double jac[DIM][DIM];
#pragma unroll
    for (int a = 0; a < DIM; ++a)
#pragma unroll
        for (int b = 0; b < DIM; ++b) jac[a][b] = 0.0;
#pragma unroll
    for (int v = 0; v < NV; ++v) {
        const u64 vert = __ldg(&cell_verts[c * NV + v]);
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            const double x = __ldg(&coords[vert * DIM + a]);
#pragma unroll
            for (int b = 0; b < DIM; ++b) jac[a][b] = fma(x, __ldg(&tab[T_GDN + (q * NV + v) * DIM + b]), jac[a][b]);
        }
    }
    d.wdet = __ldg(&tab[T_W + q]) * fabs(invert_jacobian<DIM>(jac, d.inv));
#pragma unroll
    for (int s = 0; s < NP; ++s)
        d.p[s] = __ldg(&coef[__ldg(&meta[3 * s]) + c * __ldg(&meta[3 * s + 1]) + (u64)q * __ldg(&meta[3 * s + 2])]);
    return d;
}

// out = D_ref in for a reference-coordinate field vector: gradients to physical coordinates
// (∇x = J⁻ᵀ ∇ξ), the QFunction, back (Jᵀ… the transpose), times w |det J|.
__device__ __forceinline__ void ref_apply(const PointData& d, const double in[MF], double out[MF]) {
    double phys[MF], res[MF];
#pragma unroll
    for (int f = 0; f < MF; ++f) res[f] = 0.0;
#pragma unroll
    for (int f = 0; f < NVAL; ++f) phys[f] = in[f];
#pragma unroll
    for (int c = 0; c < (QF::GRAD ? NCOMP : 0); ++c)
#pragma unroll
        for (int k = 0; k < DIM; ++k) {
            double s = 0.0;
#pragma unroll
            for (int a = 0; a < DIM; ++a) s = fma(d.inv[a][k], in[NVAL + c * DIM + a], s);
            phys[NVAL + c * DIM + k] = s;
        }
    QF::template apply<DIM, NCOMP>(d.p, phys, res);
#pragma unroll
    for (int f = 0; f < NVAL; ++f) out[f] = d.wdet * res[f];
#pragma unroll
    for (int c = 0; c < (QF::GRAD ? NCOMP : 0); ++c)
#pragma unroll
        for (int a = 0; a < DIM; ++a) {
            double s = 0.0;
#pragma unroll
            for (int k = 0; k < DIM; ++k) s = fma(d.inv[a][k], res[NVAL + c * DIM + k], s);
            out[NVAL + c * DIM + a] = d.wdet * s;
        }
}

// Packed upper triangle index of (r, s), r ≤ s.
__device__ __forceinline__ int packed(int r, int s) { return r * MF - r * (r - 1) / 2 + (s - r); }

// Where the D_ref of cell c at point q sits in qdata (entry k at k·stride + slot) and the factor it
// takes there: w_q when stored once per cell (CELL_D), else 1.
struct Slot {
    u64 slot, stride;
    double scale;
};
__device__ __forceinline__ Slot stored_slot(u64 c, int q, u64 ncells, const double* __restrict__ tab) {
#if CELL_D
    return Slot{c, ncells, __ldg(&tab[T_W + q])};
#else
    return Slot{c * QD + q, ncells * (u64)QD, 1.0};
#endif
}

// qdata[k][c·QD_STORED + q] = entry k of the packed D_ref of cell c at point q (CELL_D: at point
// 0, divided by w_0); one thread per stored point.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matfree_setup(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ qdata) {
    const u64 npts = ncells * (u64)QD_STORED;
    const double unweight = CELL_D ? 1.0 / __ldg(&tab[T_W]) : 1.0;
    for (u64 t = global_thread(); t < npts; t += grid_threads()) {
        const u64 c = t / QD_STORED;
        const int q = (int)(t - c * QD_STORED);
        const PointData d = point_data(c, q, cell_verts, coords, tab, coef, meta);
        for (int s = 0; s < MF; ++s) {
            double e[MF], col[MF];
#pragma unroll
            for (int f = 0; f < MF; ++f) e[f] = f == s ? 1.0 : 0.0;
            ref_apply(d, e, col);
            for (int r = 0; r <= s; ++r) qdata[(u64)packed(r, s) * npts + t] = unweight * col[r];
        }
    }
}

// D_ref of cell c at point q (row-major MF×MF): unpacked from qdata, or recomputed (NONE).
__device__ __forceinline__ void dref_at(u64 c, int q, u64 ncells, const double* __restrict__ qdata,
                                        const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                                        const double* __restrict__ tab, const double* __restrict__ coef,
                                        const u64* __restrict__ meta, double dm[MF][MF]) {
#if NONE
    const PointData d = point_data(c, q, cell_verts, coords, tab, coef, meta);
    for (int s = 0; s < MF; ++s) {
        double e[MF], col[MF];
#pragma unroll
        for (int f = 0; f < MF; ++f) e[f] = f == s ? 1.0 : 0.0;
        ref_apply(d, e, col);
#pragma unroll
        for (int r = 0; r < MF; ++r) dm[r][s] = col[r];
    }
#else
    const Slot at = stored_slot(c, q, ncells, tab);
#pragma unroll
    for (int r = 0; r < MF; ++r)
#pragma unroll
        for (int s = r; s < MF; ++s) dm[r][s] = dm[s][r] = at.scale * __ldg(&qdata[(u64)packed(r, s) * at.stride + at.slot]);
#endif
}

#if TENSOR
// One sum-factorization stage over the block's cells: axis `a` of every field's buffer goes from P
// to Q entries with the 1D table (forward, TRANSPOSED = false) or from Q to P with its transpose;
// the other axes keep the sizes `dims` (the input's, first axis fastest). The first forward stage
// reads each field's component straight from the gathered dofs (`from_u`).
template <bool TRANSPOSED>
__device__ __forceinline__ void tensor_stage(int a, const int dims[3], const double* __restrict__ tab, const double* in,
                                             bool from_u, int in_stride, double* out, int out_stride) {
    int dout[3] = {dims[0], dims[1], dims[2]};
    dout[a] = TRANSPOSED ? P : Q;
    const int nout = dout[0] * dout[1] * dout[2];
    for (int it = threadIdx.x; it < EPB * MF * nout; it += blockDim.x) {
        const int e = it / (MF * nout), rest = it - e * (MF * nout);
        const int f = rest / nout, o = rest - f * nout;
        const int id[3] = {o % dout[0], o / dout[0] % dout[1], o / (dout[0] * dout[1])};
        const double* A = tab + (field_dir(f) == a ? T_G1 : T_B1);
        const double* src = in + e * PER_CELL + (from_u ? field_comp(f) * PD : f * in_stride);
        const int sa = a == 0 ? 1 : (a == 1 ? dims[0] : dims[0] * dims[1]);
        const int base = (a == 0 ? 0 : id[0]) + (a == 1 ? 0 : id[1] * dims[0]) + (a == 2 ? 0 : id[2] * dims[0] * dims[1]);
        double s = 0.0;
        for (int k = 0; k < (TRANSPOSED ? Q : P); ++k) {
            const double c = TRANSPOSED ? __ldg(&A[k * P + id[a]]) : __ldg(&A[id[a] * P + k]);
            s = fma(c, src[base + k * sa], s);
        }
        out[e * PER_CELL + f * out_stride + o] = s;
    }
}
#endif

#if !CELL_APPLY
// y += A x (y zeroed by the host). `idx` is the restriction in kernel order (PD nodes per cell).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matfree_apply(
    u64 ncells, const u32* __restrict__ idx, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    const double* __restrict__ qdata, const double* __restrict__ x, double* __restrict__ y) {
#if DYN_SHARED
    extern __shared__ double sh[];        // EPB · PER_CELL doubles, beyond the 48 KB static limit
#else
    __shared__ double sh[EPB * PER_CELL];
#endif
    double* const U = sh;                 // [e][NCOMP][PD], offset e·PER_CELL
    double* const F = sh + SH_U;          // [e][MF][QD]
#if TENSOR
    double* const T1 = F + SH_F;          // [e][MF][MAXN]
    double* const T2 = T1 + SH_T;
#endif
    for (u64 c0 = (u64)blockIdx.x * EPB; c0 < ncells; c0 += (u64)gridDim.x * EPB) {
        // Gather: U = R_c x.
        for (int it = threadIdx.x; it < EPB * NCOMP * PD; it += blockDim.x) {
            const int e = it / (NCOMP * PD), r = it - e * (NCOMP * PD), comp = r / PD, l = r - comp * PD;
            const u64 c = c0 + e;
            double v = 0.0;
            if (c < ncells) {
                const u32 w = __ldg(&idx[c * PD + l]);
                v = idx_sign(w) * __ldg(&x[idx_node(w) * NCOMP + comp]);
            }
            U[e * PER_CELL + r] = v;
        }
        __syncthreads();
        // B: fields at points.
#if TENSOR
        {
            // Stage axis a maps axes ≤ a to Q points; buffers ping-pong T1 → T2 → …, the last into F.
            double* bufs[2] = {T1, T2};
            const double* in = U;
            int in_stride = PD, cur = 0;
            int dims[3] = {DIM > 0 ? P : 1, DIM > 1 ? P : 1, DIM > 2 ? P : 1};
            for (int a = 0; a < DIM; ++a) {
                const bool last = a == DIM - 1;
                double* out = last ? F : bufs[cur];
                const int out_stride = last ? QD : MAXN;
                tensor_stage<false>(a, dims, tab, in, a == 0, in_stride, out, out_stride);
                __syncthreads();
                in = out;
                in_stride = out_stride;
                cur ^= 1;
                dims[a] = Q;
            }
        }
#else
        for (int it = threadIdx.x; it < EPB * MF * QD; it += blockDim.x) {
            const int e = it / (MF * QD), r = it - e * (MF * QD), f = r / QD, q = r - f * QD;
            const int comp = field_comp(f), dir = field_dir(f);
            const double* u = U + e * PER_CELL + comp * PD;
            double s = 0.0;
            for (int l = 0; l < PD; ++l) {
                const double b = dir < 0 ? __ldg(&tab[T_PHI + q * PD + l]) : __ldg(&tab[T_DPHI + (q * PD + l) * DIM + dir]);
                s = fma(b, u[l], s);
            }
            F[e * PER_CELL + r] = s;
        }
        __syncthreads();
#endif
        // D at every point.
        for (int it = threadIdx.x; it < EPB * QD; it += blockDim.x) {
            const int e = it / QD, q = it - e * QD;
            const u64 c = c0 + e;
            if (c >= ncells) continue;
            double in[MF], out[MF];
            double* fq = F + e * PER_CELL + q;
#pragma unroll
            for (int f = 0; f < MF; ++f) in[f] = fq[f * QD];
#if NONE
            const PointData d = point_data(c, q, cell_verts, coords, tab, coef, meta);
            ref_apply(d, in, out);
#else
            const Slot at = stored_slot(c, q, ncells, tab);
#pragma unroll
            for (int r = 0; r < MF; ++r) out[r] = 0.0;
#pragma unroll
            for (int r = 0; r < MF; ++r)
#pragma unroll
                for (int s = r; s < MF; ++s) {
                    const double v = at.scale * __ldg(&qdata[(u64)packed(r, s) * at.stride + at.slot]);
                    out[r] = fma(v, in[s], out[r]);
                    if (s != r) out[s] = fma(v, in[r], out[s]);
                }
#endif
#pragma unroll
            for (int f = 0; f < MF; ++f) fq[f * QD] = out[f];
        }
        __syncthreads();
        // Bᵀ: back to the basis, summed over each component's fields, into U.
#if TENSOR
        {
            double* bufs[2] = {T1, T2};
            const double* in = F;
            int in_stride = QD, cur = 0;
            int dims[3] = {DIM > 0 ? Q : 1, DIM > 1 ? Q : 1, DIM > 2 ? Q : 1};
            for (int a = DIM - 1; a >= 0; --a) {
                double* out = bufs[cur];
                tensor_stage<true>(a, dims, tab, in, false, in_stride, out, MAXN);
                __syncthreads();
                in = out;
                in_stride = MAXN;
                cur ^= 1;
                dims[a] = P;
            }
            for (int it = threadIdx.x; it < EPB * NCOMP * PD; it += blockDim.x) {
                const int e = it / (NCOMP * PD), r = it - e * (NCOMP * PD), comp = r / PD, l = r - comp * PD;
                double s = 0.0;
#pragma unroll
                for (int f = 0; f < MF; ++f)
                    if (field_comp(f) == comp) s += in[e * PER_CELL + f * MAXN + l];
                U[e * PER_CELL + r] = s;
            }
        }
#else
        for (int it = threadIdx.x; it < EPB * NCOMP * PD; it += blockDim.x) {
            const int e = it / (NCOMP * PD), r = it - e * (NCOMP * PD), comp = r / PD, l = r - comp * PD;
            const double* fe = F + e * PER_CELL;
            double s = 0.0;
#pragma unroll
            for (int f = 0; f < MF; ++f) {
                if (field_comp(f) != comp) continue;
                const int dir = field_dir(f);
                for (int q = 0; q < QD; ++q) {
                    const double b = dir < 0 ? __ldg(&tab[T_PHI + q * PD + l]) : __ldg(&tab[T_DPHI + (q * PD + l) * DIM + dir]);
                    s = fma(b, fe[f * QD + q], s);
                }
            }
            U[e * PER_CELL + r] = s;
        }
#endif
        __syncthreads();
        // Scatter: y += R_cᵀ U.
        for (int it = threadIdx.x; it < EPB * NCOMP * PD; it += blockDim.x) {
            const int e = it / (NCOMP * PD), r = it - e * (NCOMP * PD), comp = r / PD, l = r - comp * PD;
            const u64 c = c0 + e;
            if (c < ncells) {
                const u32 w = __ldg(&idx[c * PD + l]);
                if (!SIGNED_IDX || idx_sign(w) != 0.0) atomicAdd(&y[idx_node(w) * NCOMP + comp], idx_sign(w) * U[e * PER_CELL + r]);
            }
        }
        __syncthreads();
    }
}

#endif  // !CELL_APPLY

// blocks[node][a][b] += Σ_q (B e_a)ᵀ D_ref (B e_b) for every (cell, local node): the node blocks
// (and so the diagonal) without a matrix; one thread per (cell, node), dense tables.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matfree_node_blocks(
    u64 ncells, const u32* __restrict__ idx, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    const double* __restrict__ qdata, double* __restrict__ blocks) {
    const u64 work = ncells * (u64)PD;
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 c = t / PD;
        const int l = (int)(t - c * PD);
        double acc[NCOMP][NCOMP];
#pragma unroll
        for (int a = 0; a < NCOMP; ++a)
#pragma unroll
            for (int b = 0; b < NCOMP; ++b) acc[a][b] = 0.0;
        for (int q = 0; q < QD; ++q) {
            double dm[MF][MF];
            dref_at(c, q, ncells, qdata, cell_verts, coords, tab, coef, meta, dm);
            double bf[MF];  // entry of field f of basis function l (its component is field_comp(f))
#pragma unroll
            for (int f = 0; f < MF; ++f) {
                const int dir = field_dir(f);
                bf[f] = dir < 0 ? __ldg(&tab[T_PHI + q * PD + l]) : __ldg(&tab[T_DPHI + (q * PD + l) * DIM + dir]);
            }
#pragma unroll
            for (int r = 0; r < MF; ++r)
#pragma unroll
                for (int s = 0; s < MF; ++s) acc[field_comp(r)][field_comp(s)] = fma(bf[r] * dm[r][s], bf[s], acc[field_comp(r)][field_comp(s)]);
        }
        const u32 w = __ldg(&idx[c * PD + l]);
        const u64 node = idx_node(w);
        if (idx_sign(w) == 0.0) continue;  // a slot the element lacks (signs square to 1)
#pragma unroll
        for (int a = 0; a < NCOMP; ++a)
#pragma unroll
            for (int b = 0; b < NCOMP; ++b) atomicAdd(&blocks[node * (NCOMP * NCOMP) + a * NCOMP + b], acc[a][b]);
    }
}

#if CELL_APPLY
// y += A x with one thread per cell (affine simplex, D_ref constant on the cell but for w_q):
// u and the result in registers, B and Bᵀ from the tables staged once per block in shared memory
// (every thread reads the same entry at once: broadcasts), D_ref = dref_at(c, 0) / w_0.
constexpr int CA_PHI = 0, CA_DPHI = NVAL > 0 ? QD * PD : 0, CA_W = CA_DPHI + QD * PD * DIM;
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matfree_apply_cell(
    u64 ncells, const u32* __restrict__ idx, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    const double* __restrict__ qdata, const double* __restrict__ x, double* __restrict__ y) {
    __shared__ double st[CA_W + QD];
    for (int i = threadIdx.x; i < CA_W + QD; i += blockDim.x) {
        const int src = i < CA_DPHI ? T_PHI + i : (i < CA_W ? T_DPHI + (i - CA_DPHI) : T_W + (i - CA_W));
        st[i] = __ldg(&tab[src]);
    }
    __syncthreads();
    const double w0 = st[CA_W];
    for (u64 c = global_thread(); c < ncells; c += grid_threads()) {
        u32 node[PD];
        double u[NCOMP][PD], v[NCOMP][PD];
#pragma unroll
        for (int l = 0; l < PD; ++l) node[l] = __ldg(&idx[c * PD + l]);
#pragma unroll
        for (int l = 0; l < PD; ++l)
#pragma unroll
            for (int k = 0; k < NCOMP; ++k) {
                u[k][l] = __ldg(&x[(u64)node[l] * NCOMP + k]);
                v[k][l] = 0.0;
            }
        double dm[MF][MF];
        dref_at(c, 0, ncells, qdata, cell_verts, coords, tab, coef, meta, dm);
        for (int q = 0; q < QD; ++q) {
            const double sc = st[CA_W + q] / w0;
            double f[MF], g[MF];
#pragma unroll
            for (int fi = 0; fi < MF; ++fi) {
                const int comp = field_comp(fi), dir = field_dir(fi);
                double s = 0.0;
#pragma unroll
                for (int l = 0; l < PD; ++l)
                    s = fma(dir < 0 ? st[CA_PHI + q * PD + l] : st[CA_DPHI + (q * PD + l) * DIM + dir], u[comp][l], s);
                f[fi] = s;
            }
#pragma unroll
            for (int r = 0; r < MF; ++r) {
                double s = 0.0;
#pragma unroll
                for (int t = 0; t < MF; ++t) s = fma(dm[r][t], f[t], s);
                g[r] = sc * s;
            }
#pragma unroll
            for (int fi = 0; fi < MF; ++fi) {
                const int comp = field_comp(fi), dir = field_dir(fi);
#pragma unroll
                for (int l = 0; l < PD; ++l)
                    v[comp][l] = fma(dir < 0 ? st[CA_PHI + q * PD + l] : st[CA_DPHI + (q * PD + l) * DIM + dir], g[fi], v[comp][l]);
            }
        }
#pragma unroll
        for (int l = 0; l < PD; ++l)
#pragma unroll
            for (int k = 0; k < NCOMP; ++k) atomicAdd(&y[(u64)node[l] * NCOMP + k], v[k][l]);
    }
}
#endif
