// The patch-reduced Jacobian assembly (`src/hyperelastic/patch.rs`): one block assembles a patch of
// cells that share nodes (a Kuhn cube of 6 tetrahedra on the box mesh, or consecutive cells of the
// launch order elsewhere) and sums their element matrices in shared memory before anything reaches
// L2, so each distinct value of the patch is added to the CSR values once instead of once per cell
// (a cube's 6 P2 tetrahedra add 600 node-pair blocks into 393 distinct ones; the eleventh pass of
// BENCHMARKS.md found the atomic scatter bound by L2 reduction sectors per element-matrix entry).
// Compiled after `hyperelastic_law.cuh` and `hyperelastic.cu` (its prologue: `HkCell`, `hk_gather`,
// `hk_geometry`, `hk_deformation`; neither GT nor WPB defined, so none of its `hyper_assemble`).
//
// Per block (patch p, cells patch_cells[patch_ptr[p] .. patch_ptr[p + 1]]): batches of PC cells of
// the patch (a patch may hold several batches: 2×2×2 cubes integrated a cube or two at a time) are
// integrated side by side on CUDA cores, QB points at a time, with block barriers between phases:
//   G  per (cell, point, node): g'_j = Mᵀ ∇_ξ φ_j (M = J⁻¹R once per cell: affine simplices), w;
//   L  per (cell, point): F = R + Σ u_j ⊗ g'_j, the law (`hl_point`): S and ℂ's form;
//   A  per (cell, point, (J, L)): w 𝔸_iJkL = w (F_iI ℂ_IJKL F_kK + δ_ik S_JL) from the law's slice;
//   K  per (cell, column pair, component b) — columns j₁ = p and j₂ = NLOC−1−p: h = w 𝔸·g'_j (the 9
//      numbers y_aA of column (j, b)), then the rows (i, a) with i ≤ j of both columns (NLOC + 1 node
//      rows per thread, balanced), K_(i,a),(j,b) += Σ_A g'_iA y_aA in registers across the chunks;
//      the residual r_(j,b) += w Σ_B (F S)_bB g'_jB likewise.
// Then every cell's upper node pairs (i ≤ j) go to the patch's slots in shared memory with shared
// atomics: slot s holds the 3×3 block of the distinct global node pair (lo ≤ hi), B_s[x][y] =
// K_(lo,x),(hi,y); `pslot[cell][pair]` = 2·s + flip (flip: node i is the higher of the two, the block
// goes in transposed). Last, one flush: the patch's directed entries (each slot as (lo, hi) and, off
// the diagonal, (hi, lo) transposed), sorted by (row node, column rank) on the host, are added to the
// CSR values with global atomics (patches share their boundary nodes), lanes over consecutive
// places of one row: for a component a, entry e and b, place = flush_pos[e] + a·len(e) + b.
//
// Defines: DIM = 3, NLOC, NQ, NV, AFFINE = 1, LAW; PC (cells per batch), NSLOT (slots per patch,
// most), QB (points per chunk), PT (threads per block ≥ 3·⌈NLOC/2⌉·PC); the host sizes them.
// HP_DYN: the slots in dynamic shared memory (NSLOT·72 bytes, given at launch; the host allows
// more than 48 KiB per block), static otherwise (the CPU emulation).
// HP_SCATTER_ONLY (the kernel sweep only): no law and no products, the gather, geometry and the whole
// reduction and flush of zeros (what the scatter costs). HP_CELL_TURNS: a batch's cells add to the
// slots one after another with plain adds instead of all at once with shared atomics.
#if DIM != 3 || !AFFINE
#error "the patch scheme is written for 3D simplices"
#endif
#define HP_NPAIR ((NLOC + 1) / 2)
#define HP_NCT (3 * HP_NPAIR)           // column threads per cell
#define HP_NCHUNK ((NQ + QB - 1) / QB)
// (HP_NUP, HP_OWNED, hp_up and the flush `hp_flush`: in hyperelastic.cu, shared with HK_PATCH)

// Adds a cell thread's rows (kacc, see the kernel) to the patch's slots through the cell's
// `pslot` entries `ps`: atomically, or plainly where no other thread adds to them meanwhile.
__device__ __forceinline__ void hp_to_slots(const unsigned short* ps, int j1, int j2, int b, const double (&kacc)[NLOC + 1][3], double* s_acc, bool atomic) {
#pragma unroll
    for (int tt = 0; tt <= NLOC; ++tt) {
        const bool first = tt <= j1;
        if (!first && j2 == j1) continue;
        const int j = first ? j1 : j2, i = first ? tt : tt - j1 - 1;
        const int sf = ps[hp_up(i, j)], s = sf >> 1;
#pragma unroll
        for (int a = 0; a < 3; ++a) {
            double* slot = &s_acc[s * 9 + ((sf & 1) ? b * 3 + a : a * 3 + b)];
            if (atomic)
                atomicAdd(slot, kacc[tt][a]);
            else
                *slot += kacc[tt][a];
        }
    }
}

extern "C" __global__ void __launch_bounds__(PT) hyper_patch_assemble(
    u64 npatch, const u32* __restrict__ patch_ptr, const u32* __restrict__ patch_cells, const u32* __restrict__ cell_verts,
    const double* __restrict__ coords, const u32* __restrict__ cell_nodes, const double* __restrict__ tab,
    const double* __restrict__ frames, int has_frames, const double* __restrict__ prm, const double* __restrict__ u,
    double* __restrict__ r, int want_k, const unsigned short* __restrict__ pslot, const u32* __restrict__ flush_ptr,
    const u32* __restrict__ flush_pos, const u32* __restrict__ flush_meta, double* __restrict__ vals) {
    __shared__ HkCell s_cell[PC];
#ifdef HP_DYN
    extern __shared__ double s_acc[];  // NSLOT * 9
#else
    __shared__ double s_acc[NSLOT * 9];
#endif
#ifdef HP_SCATTER_ONLY
// (the geometry is computed, its cost part of the scatter's, and not read; the tables' point parts unread)
#pragma nv_diag_suppress 550
#pragma nv_diag_suppress 177
#endif
    __shared__ double s_m[PC][10];  // M = J⁻¹R, |det J|
#ifndef HP_SCATTER_ONLY
    __shared__ double s_w[PC][QB];
    __shared__ double s_g[PC][QB][NLOC][3];
    __shared__ double s_a[PC][QB][81];
    __shared__ double s_fs[PC][QB][18];  // F | S
    __shared__ double s_c[PC][QB][HL_FORM];
#endif
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wq = ggeo + NQ * NV * 3;
    const u64 p = blockIdx.x;
    if (p >= npatch) return;
    const u32 c0 = patch_ptr[p];
    const int npc = (int)(patch_ptr[p + 1] - c0);
    // This thread's cell of a batch, column pair (j1 ≤ j2) and component b in the K phase; its
    // cell's gather is shared by the cell's HP_NCT threads (all cells at once: one round of
    // dependent loads).
    const int ce = threadIdx.x / HP_NCT, lane = threadIdx.x % HP_NCT;
    const int j1 = lane / 3, j2 = NLOC - 1 - j1, b = lane % 3;
    for (int k = threadIdx.x; k < NSLOT * 9; k += PT) s_acc[k] = 0.0;
    for (int cb = 0; cb < npc; cb += PC) {
        const int ncell = npc - cb < PC ? npc - cb : PC;
        const bool col = ce < ncell;
        __syncthreads();  // the previous batch's readers of the cell records are done
        if (col) hk_gather(patch_cells[c0 + cb + ce], lane, HP_NCT, cell_verts, coords, cell_nodes, frames, has_frames, u, 0, nullptr, nullptr, s_cell[ce]);
        __syncthreads();
        for (int e = threadIdx.x; e < ncell; e += PT) {
            double mm[3][3];
            s_m[e][9] = fabs(hk_geometry(s_cell[e].x, ggeo, s_cell[e].rot, mm));
#pragma unroll
            for (int k = 0; k < 9; ++k) s_m[e][k] = mm[k / 3][k % 3];
        }
        double r1 = 0.0, r2 = 0.0;
        double kacc[NLOC + 1][3];  // row t ≤ j1: node t of column j1; row t > j1: node t − j1 − 1 of column j2
#pragma unroll
        for (int t = 0; t <= NLOC; ++t)
#pragma unroll
            for (int a = 0; a < 3; ++a) kacc[t][a] = 0.0;
#ifndef HP_SCATTER_ONLY
        for (int ch = 0; ch < HP_NCHUNK; ++ch) {
            const int q0 = ch * QB;
            const int nq = NQ - q0 < QB ? NQ - q0 : QB;
            __syncthreads();  // the geometry, or the previous chunk's readers, are done
            for (int k = threadIdx.x; k < ncell * nq * NLOC; k += PT) {
                const int e = k / (nq * NLOC), t = (k / NLOC) % nq, j = k % NLOC;
                const double* gr = gref + ((q0 + t) * NLOC + j) * 3;
                const double* m = s_m[e];
#pragma unroll
                for (int A = 0; A < 3; ++A) s_g[e][t][j][A] = gr[0] * m[A] + gr[1] * m[3 + A] + gr[2] * m[6 + A];
                if (j == 0) s_w[e][t] = wq[q0 + t] * m[9];
            }
            __syncthreads();
            for (int k = threadIdx.x; k < ncell * nq; k += PT) {
                double f[3][3], s[3][3];
                double* fs = s_fs[k / nq][k % nq];
                hk_deformation(s_cell[k / nq].rot, s_cell[k / nq].u, s_g[k / nq][k % nq], f);
                hl_point(prm, f, s, s_c[k / nq][k % nq]);
#pragma unroll
                for (int m = 0; m < 9; ++m) {
                    fs[m] = f[m / 3][m % 3];
                    fs[9 + m] = s[m / 3][m % 3];
                }
            }
            __syncthreads();
            if (want_k)
                for (int k = threadIdx.x; k < ncell * nq * 9; k += PT) {
                    const int e = k / (nq * 9), t = (k / 9) % nq, jl = k % 9, J = jl / 3, L = jl % 3;
                    const double* f = s_fs[e][t];
                    const double w = s_w[e][t];
                    double cm[3][3];
                    hl_slice(prm, s_c[e][t], J, L, cm);
                    const double sjl = s_fs[e][t][9 + jl];
#pragma unroll
                    for (int i = 0; i < 3; ++i) {
                        double fc[3];  // (F ℂ_·J·L)_iK
#pragma unroll
                        for (int K = 0; K < 3; ++K) fc[K] = f[i * 3] * cm[0][K] + f[i * 3 + 1] * cm[1][K] + f[i * 3 + 2] * cm[2][K];
#pragma unroll
                        for (int kk = 0; kk < 3; ++kk)
                            s_a[e][t][T4(i, J, kk, L)] = w * (fc[0] * f[kk * 3] + fc[1] * f[kk * 3 + 1] + fc[2] * f[kk * 3 + 2] + (i == kk ? sjl : 0.0));
                    }
                }
            __syncthreads();
            if (col)
                for (int t = 0; t < nq; ++t) {
                    const double* g = &s_g[ce][t][0][0];
                    const double* fs = s_fs[ce][t];
                    const double w = s_w[ce][t];
                    double h1[3][3], h2[3][3];  // h_(j,b)[a][A] = Σ_B w 𝔸_aA,bB g'_jB
#pragma unroll
                    for (int B = 0; B < 3; ++B) {  // w P_bB = w Σ_I F_bI S_IB
                        const double pb = w * (fs[b * 3] * fs[9 + B] + fs[b * 3 + 1] * fs[12 + B] + fs[b * 3 + 2] * fs[15 + B]);
                        r1 += pb * g[j1 * 3 + B];
                        r2 += pb * g[j2 * 3 + B];
                    }
                    if (!want_k) continue;
                    const double* am = s_a[ce][t];
#pragma unroll
                    for (int a = 0; a < 3; ++a)
#pragma unroll
                        for (int A = 0; A < 3; ++A) {
                            const double* ab = am + T4(a, A, b, 0);
                            h1[a][A] = ab[0] * g[j1 * 3] + ab[1] * g[j1 * 3 + 1] + ab[2] * g[j1 * 3 + 2];
                            h2[a][A] = ab[0] * g[j2 * 3] + ab[1] * g[j2 * 3 + 1] + ab[2] * g[j2 * 3 + 2];
                        }
#pragma unroll
                    for (int tt = 0; tt <= NLOC; ++tt) {
                        const bool first = tt <= j1;
                        const double* gi = g + (first ? tt : tt - j1 - 1) * 3;
#pragma unroll
                        for (int a = 0; a < 3; ++a)  // (selects on values: the h stay in registers)
                            kacc[tt][a] += gi[0] * (first ? h1[a][0] : h2[a][0]) + gi[1] * (first ? h1[a][1] : h2[a][1]) + gi[2] * (first ? h1[a][2] : h2[a][2]);
                    }
                }
        }
#endif
        if (col) {
            atomicAdd(&r[(u64)s_cell[ce].node[j1] * 3 + b], r1);
            if (j2 != j1) atomicAdd(&r[(u64)s_cell[ce].node[j2] * 3 + b], r2);
        }
        if (!want_k) continue;
        // (the slots were zeroed before the first batch's barriers)
#ifdef HP_CELL_TURNS
        // The cells of the batch take turns with plain adds (a cell's node pairs are distinct
        // slots), instead of shared atomics.
        for (int turn = 0; turn < ncell; ++turn) {
            if (ce == turn) hp_to_slots(pslot + (u64)(c0 + cb + ce) * HP_NUP, j1, j2, b, kacc, s_acc, false);
            __syncthreads();
        }
#else
        if (col) hp_to_slots(pslot + (u64)(c0 + cb + ce) * HP_NUP, j1, j2, b, kacc, s_acc, true);
#endif
    }
    if (!want_k) return;
    __syncthreads();
    hp_flush(p, s_acc, threadIdx.x, PT, flush_ptr, flush_pos, flush_meta, vals);
}
