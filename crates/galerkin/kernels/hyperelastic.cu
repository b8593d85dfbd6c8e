// Hyperelastic residual and consistent Jacobian, integrated per cell on the GPU and summed with
// atomic adds into the residual vector and the CSR values of the Jacobian (`src/hyperelastic/cuda.rs`),
// in one launch over every cell. Two schemes of one `hyper_assemble` (same arguments), picked by
// the defines: the column-pair scheme (GT, any element, plane strain too; `hyperelastic_pairs.cu`) and
// the tensor-core scheme (WPB, 3D simplices of at most 16 nodes; `hyperelastic_tc.cuh`, `hyperelastic_tc.cu`).
// This file: the prologue both share (the cell's gather, its CSR positions, the geometry); the
// staged scatters follow in `hyperelastic_scatter.cuh`. One source, concatenated in that order
// (`hyper_kernel_source!` in `src/hyperelastic/mod.rs`).
//
// Defines: DIM (3, or 2 for plane strain), NLOC (nodes per cell), NQ (quadrature points), NV
// (geometry vertices), AFFINE (one Jacobian per cell), LAW, GT (threads per cell, ≥ DIM·⌈NLOC/2⌉),
// CPB (cells per block), QB (points per chunk; the host sizes CPB·QB to the static shared-memory
// limit). Table layout: ∇_ξ φ [NQ][NLOC][3] | ∇_ξ geometry [NQ][NV][3] | w [NQ].
// HK_NO_SCATTER (the kernel sweep only): no atomic adds — each value a plain store into the thread's own few doubles
// (timing; the stores, about as many sectors as the atomics, keep the products alive: an upper bound of the computation).
// HK_POS_SHARED (the sweep): the CSR positions gathered into shared memory with the cell
// (`hk_gather`) instead of two global loads per entry in the scatter (slower: eleventh pass).
// HK_PLAIN_STORE, HK_CONTIG=n (the sweep only, the staged scatter): plain racy stores at the same
// places, or as many atomic adds at consecutive places (timing: what the atomics and their
// scattered sectors cost). HK_PLAIN_STORE with HK_SCATTER_COLS too (round 24: what a coloured,
// non-atomic scatter could save at most); HK_SCATTER_KEEP=k (the column walk, timing only): only
// the rows with row % 5 < k are added (k = 2: 2/5 of the adds, a perfect patch reduction's
// ≈ 1/2.56 — what a pre-summed scatter could save at most, before its own cost).
// HK_STAGE (the tensor-core scheme, `Scheme::Gather`, sixteenth pass): the staged blocks are stored
// to a per-cell record of the global stage passed as `vals` instead of being scattered; the owner
// gather (`hyperelastic_gather.cu`) then writes every CSR value once.
//
// Plane strain (DIM = 2) runs the same 3D arithmetic on the embedded problem: the third reference
// and physical gradient components are zero, the geometry Jacobian gets J₃₃ = 1, u₃ = 0, the frame
// is a rotation about X₃, so F₃₃ = 1 and the 3D law applies unchanged; only the DIM·NLOC in-plane
// rows and columns are integrated and scattered (the state and the CSR rows hold DIM per node).

#ifndef DIM
#define DIM 3
#endif

// ---- The prologue both schemes share (one source: no copies of the geometry or the gather) ----
// The gather of cell c by `nthr` cooperating threads (this one `lane`): geometry vertices, the
// displacements of its nodes (zero beyond DIM), the node numbers and the material frame R (the
// identity without frames).
// Both schemes' kernels take the same arguments and gather a cell into the same shared record.
#define HK_KERNEL_ARGS                                                                                                              \
    u64 ncells, const u32 *__restrict__ cell_verts, const double *__restrict__ coords, const u32 *__restrict__ cell_nodes,          \
        const double *__restrict__ tab, const double *__restrict__ frames, int has_frames, const double *__restrict__ prm,          \
        const double *__restrict__ u, double *__restrict__ r, int want_k, const u32 *__restrict__ row_ptr,                          \
        const unsigned short *__restrict__ kpos, double *__restrict__ vals
// HK_PREFETCH (the tensor-core scheme with HK_PERSIST, eighteenth pass) keeps the positions in the
// cell's record too (HK_POS_SHARED's layout), copied there asynchronously a cell ahead.
#if defined(HK_PREFETCH) && !defined(HK_POS_SHARED)
#define HK_POS_SHARED
#endif
struct HkCell {
    double x[NV][3];     // geometry vertices
    double u[NLOC][3];   // nodal displacements (zero beyond DIM)
    double rot[9];       // material frame R
    u32 node[NLOC];      // node numbers
#ifdef HK_PREFETCH
    u32 vert[NV];  // vertex numbers (the second copy stage reads them)
#endif
#ifdef HK_POS_SHARED
    u32 row[NLOC][3];                // row_ptr of (node i, component a): the scatter's row starts
    unsigned short kp[NLOC * NLOC];  // the cell's column ranks (kpos)
#endif
};
// HK_POS_SHARED: with the Jacobian, the scatter's row starts and column ranks too, so that the
// scatter reads its CSR positions from shared memory instead of two dependent global loads per entry.
__device__ __forceinline__ void hk_gather(u64 c, int lane, int nthr, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                                          const u32* __restrict__ cell_nodes, const double* __restrict__ frames, int has_frames,
                                          const double* __restrict__ u, int want_k, const u32* __restrict__ row_ptr,
                                          const unsigned short* __restrict__ kpos, HkCell& cell) {
#ifdef HK_POS_SHARED
    if (want_k) {
        for (int k = lane; k < NLOC * DIM; k += nthr) cell.row[k / DIM][k % DIM] = row_ptr[(u64)cell_nodes[c * NLOC + k / DIM] * DIM + k % DIM];
        for (int k = lane; k < NLOC * NLOC; k += nthr) cell.kp[k] = kpos[c * NLOC * NLOC + k];
    }
#else
    (void)want_k;
    (void)row_ptr;
    (void)kpos;
#endif
    for (int k = lane; k < NV * 3; k += nthr) cell.x[k / 3][k % 3] = coords[(u64)cell_verts[c * NV + k / 3] * 3 + k % 3];
    for (int k = lane; k < NLOC * 3; k += nthr) {
        const u32 n = cell_nodes[c * NLOC + k / 3];
        if (k % 3 == 0) cell.node[k / 3] = n;
        cell.u[k / 3][k % 3] = k % 3 < DIM ? u[(u64)n * DIM + k % 3] : 0.0;
    }
    for (int k = lane; k < 9; k += nthr) cell.rot[k] = has_frames ? frames[c * 9 + k] : (k % 4 == 0 ? 1.0 : 0.0);
}

// The CSR position of entry ((i, a), (j, b)) of cell c is hk_row(i, a) + hk_rank(i, j)·DIM + b: the
// start of row (node i, component a) and the rank of node j among node i's column nodes.
__device__ __forceinline__ u64 hk_row(const HkCell& cell, int i, int a, const u32* __restrict__ row_ptr) {
#ifdef HK_POS_SHARED
    (void)row_ptr;
    return cell.row[i][a];
#else
    return row_ptr[(u64)cell.node[i] * DIM + a];
#endif
}
__device__ __forceinline__ u64 hk_rank(const HkCell& cell, u64 c, int i, int j, const unsigned short* __restrict__ kpos) {
#ifdef HK_POS_SHARED
    (void)c;
    (void)kpos;
    return cell.kp[i * NLOC + j];
#else
    (void)cell;
    return kpos[(c * NLOC + i) * NLOC + j];
#endif
}

// Component pair p = 0..5 ↔ (a, b) = 00 01 02 11 12 22.
__device__ __forceinline__ int hk_pa(int p) { return p < 3 ? 0 : (p < 5 ? 1 : 2); }
__device__ __forceinline__ int hk_pb(int p) { return p < 3 ? p : (p < 5 ? p - 2 : 2); }
// and back: (a ≤ b) ↦ p.
__device__ __forceinline__ int hk_pab(int a, int b) { return a * (5 - a) / 2 + b; }

// The geometry at one point (gg: ∇_ξ of the NV geometry functions there): J = Σ_v x_v ⊗ ∇_ξ N_v
// (J₃₃ = 1 in plane strain) and its inverse; returns det J.
__device__ __forceinline__ double hk_jinv(const double (*x)[3], const double* __restrict__ gg, double inv[3][3]) {
    double jm[3][3];
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int kk = 0; kk < 3; ++kk) {
            double s = 0.0;
            for (int v = 0; v < NV; ++v) s += x[v][a] * gg[v * 3 + kk];
            jm[a][kk] = s;
        }
#if DIM == 2
    jm[0][2] = jm[1][2] = jm[2][0] = jm[2][1] = 0.0;
    jm[2][2] = 1.0;
#endif
    const double det = hl_det3(jm);
    const double rd = 1.0 / det;
    inv[0][0] = (jm[1][1] * jm[2][2] - jm[1][2] * jm[2][1]) * rd;
    inv[0][1] = (jm[0][2] * jm[2][1] - jm[0][1] * jm[2][2]) * rd;
    inv[0][2] = (jm[0][1] * jm[1][2] - jm[0][2] * jm[1][1]) * rd;
    inv[1][0] = (jm[1][2] * jm[2][0] - jm[1][0] * jm[2][2]) * rd;
    inv[1][1] = (jm[0][0] * jm[2][2] - jm[0][2] * jm[2][0]) * rd;
    inv[1][2] = (jm[0][2] * jm[1][0] - jm[0][0] * jm[1][2]) * rd;
    inv[2][0] = (jm[1][0] * jm[2][1] - jm[1][1] * jm[2][0]) * rd;
    inv[2][1] = (jm[0][1] * jm[2][0] - jm[0][0] * jm[2][1]) * rd;
    inv[2][2] = (jm[0][0] * jm[1][1] - jm[0][1] * jm[1][0]) * rd;
    return det;
}
// Column A of M = J⁻¹ R (so that g'_A = Σ_m ∂_m φ M_mA: the frame rotation, once).
__device__ __forceinline__ void hk_m_column(const double inv[3][3], const double* rot, int A, double ma[3]) {
#pragma unroll
    for (int m = 0; m < 3; ++m) ma[m] = inv[m][0] * rot[A] + inv[m][1] * rot[3 + A] + inv[m][2] * rot[6 + A];
}
// The geometry with M = J⁻¹ R whole; returns det J.
__device__ __forceinline__ double hk_geometry(const double (*x)[3], const double* __restrict__ gg, const double* rot, double mm[3][3]) {
    double inv[3][3];
    const double det = hk_jinv(x, gg, inv);
#pragma unroll
    for (int m = 0; m < 3; ++m)
#pragma unroll
        for (int A = 0; A < 3; ++A) mm[m][A] = inv[m][0] * rot[A] + inv[m][1] * rot[3 + A] + inv[m][2] * rot[6 + A];
    return det;
}

// The deformation gradient in the frame at one point: F' = R + Σ_j u_j ⊗ g'_j.
__device__ __forceinline__ void hk_deformation(const double* rot, const double (*uu)[3], const double (*g)[3], double f[3][3]) {
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int A = 0; A < 3; ++A) f[a][A] = rot[a * 3 + A];
    for (int j = 0; j < NLOC; ++j)
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int A = 0; A < 3; ++A) f[a][A] += uu[j][a] * g[j][A];
}

