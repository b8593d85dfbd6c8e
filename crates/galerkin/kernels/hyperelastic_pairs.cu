// The column-pair scheme of `hyper_assemble` (GT; any element, plane strain too), after the prologue
// (`hyperelastic.cu`) and the staged scatters (`hyperelastic_scatter.cuh`).
// Column pairs: a group of GT threads integrates one cell, CPB cells per block.
// Quadrature points are taken QB at a time; for each chunk, with a block barrier between phases
// that run over the block's (cell, point, ...) items:
//   G  per (cell, point): the geometry Jacobian, w = weight·|det|, M = J⁻¹ R (R the material frame);
//      then per (cell, point, node): the rotated gradients g'_j = Mᵀ ∇_ξ φ_j;
//   L  per (cell, point): F' = R + Σ_j u_j ⊗ g'_j, the law ONCE (`hyperelastic_law.cuh`): S, P = F S
//      and the 22-number form of ℂ (never its 81 entries) into shared memory;
//   A  per (cell, point, J ≤ L): the (J, L) slice of ℂ from its form, pushed forward to
//      𝔸_iJkL = F_iI ℂ_IJKL F_kK + δ_ik S_JL, stored with its transpose 𝔸_kLiJ (major symmetry: 6
//      threads per point do the 9 slices);
//   K  per column pair: the element matrix is symmetric, so a thread owns the columns j₁ = p and
//      j₂ = NLOC−1−p of one component b and accumulates, in registers, the rows (i, a) with i ≤ j of
//      each — NLOC + 1 node rows, the same for every thread (balanced), about 0.6 of the full
//      matrix's work: y_aA = w Σ_B 𝔸_aAbB g'_jB, then K_(i,a),(j,b) += Σ_A g'_iA y_aA; and
//      r_(j,b) += w Σ_B P_bB g'_jB.
// At the end each column thread adds its entries, and the transposes of those with i < j, at the CSR
// positions found once on the host (rank of node j among node i's column nodes): every entry of the
// element matrix once.
#ifdef GT  // the column-pair scheme (any element); the tensor-core scheme below is compiled instead with WPB
#define NPAIR ((NLOC + 1) / 2)
#define NCT (DIM * NPAIR)
#define NCHUNK ((NQ + QB - 1) / QB)

extern "C" __global__ void __launch_bounds__(GT * CPB) hyper_assemble(HK_KERNEL_ARGS) {
    __shared__ HkCell s_cell[CPB];
    __shared__ double s_w[CPB][QB];
    __shared__ double s_g[CPB][QB][NLOC][3];
    __shared__ double s_a[CPB][QB][81];  // M = J⁻¹R in its first 9 until phase A overwrites it with 𝔸
    __shared__ double s_f[CPB][QB][9];
    __shared__ double s_s[CPB][QB][9];
    __shared__ double s_p[CPB][QB][9];
    __shared__ double s_c[CPB][QB][HL_FORM];
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wq = ggeo + NQ * NV * 3;
    const int grp = threadIdx.x / GT, lane = threadIdx.x % GT;
    const u64 c = (u64)blockIdx.x * CPB + grp;
    const bool live = c < ncells;
    if (live) hk_gather(c, lane, GT, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, s_cell[grp]);
    // This thread's column pair (j1 ≤ j2, equal for the middle node of an odd NLOC) and component b.
    const int j1 = lane / DIM, j2 = NLOC - 1 - j1, b = lane % DIM;
    const bool col = live && lane < NCT;
    double r1 = 0.0, r2 = 0.0;
    // Row t ≤ j1: node t of column j1; row t > j1: node t − j1 − 1 of column j2.
    double kacc[NLOC + 1][DIM];
#pragma unroll
    for (int t = 0; t <= NLOC; ++t)
#pragma unroll
        for (int a = 0; a < DIM; ++a) kacc[t][a] = 0.0;
    for (int ch = 0; ch < NCHUNK; ++ch) {
        const int q0 = ch * QB;
        const int nq = NQ - q0 < QB ? NQ - q0 : QB;
        __syncthreads();  // the gather, or the previous chunk's readers, are done
        for (int k = threadIdx.x; k < CPB * nq; k += GT * CPB) {
            const int e = k / nq, t = k % nq, qg = AFFINE ? 0 : q0 + t;
            if ((u64)blockIdx.x * CPB + e >= ncells) continue;
            double mm[3][3];
            const double det = hk_geometry(s_cell[e].x, ggeo + qg * NV * 3, s_cell[e].rot, mm);
            s_w[e][t] = wq[q0 + t] * fabs(det);
#pragma unroll
            for (int m = 0; m < 3; ++m)
#pragma unroll
                for (int A = 0; A < 3; ++A) s_a[e][t][m * 3 + A] = mm[m][A];
        }
        __syncthreads();
        for (int k = threadIdx.x; k < CPB * nq * NLOC; k += GT * CPB) {
            const int e = k / (nq * NLOC), t = (k / NLOC) % nq, jj = k % NLOC;
            if ((u64)blockIdx.x * CPB + e >= ncells) continue;
            const double* gr = gref + ((q0 + t) * NLOC + jj) * 3;
            const double* m = s_a[e][t];
#pragma unroll
            for (int A = 0; A < 3; ++A) s_g[e][t][jj][A] = gr[0] * m[A] + gr[1] * m[3 + A] + gr[2] * m[6 + A];
        }
        __syncthreads();
        for (int k = threadIdx.x; k < CPB * nq; k += GT * CPB) {
            const int e = k / nq, t = k % nq;
            if ((u64)blockIdx.x * CPB + e >= ncells) continue;
            double f[3][3], s[3][3];
            hk_deformation(s_cell[e].rot, s_cell[e].u, s_g[e][t], f);
            hl_point(prm, f, s, s_c[e][t]);
#pragma unroll
            for (int a = 0; a < 3; ++a)
#pragma unroll
                for (int A = 0; A < 3; ++A) {
                    s_f[e][t][a * 3 + A] = f[a][A];
                    s_s[e][t][a * 3 + A] = s[a][A];
                    s_p[e][t][a * 3 + A] = f[a][0] * s[0][A] + f[a][1] * s[1][A] + f[a][2] * s[2][A];
                }
        }
        __syncthreads();
        if (want_k)
            for (int k = threadIdx.x; k < CPB * nq * 6; k += GT * CPB) {
                const int e = k / (nq * 6), t = (k / 6) % nq, sl = k % 6;
                if ((u64)blockIdx.x * CPB + e >= ncells) continue;
                // (J, L) with J ≤ L: 00 01 02 11 12 22
                const int J = sl < 3 ? 0 : (sl < 5 ? 1 : 2);
                const int L = sl < 3 ? sl : (sl < 5 ? sl - 2 : 2);
                double* a = s_a[e][t];
                const double* f = s_f[e][t];
                double cm[3][3], tm[3][3];
                hl_slice(prm, s_c[e][t], J, L, cm);
#pragma unroll
                for (int i = 0; i < 3; ++i)
#pragma unroll
                    for (int K = 0; K < 3; ++K) tm[i][K] = f[i * 3] * cm[0][K] + f[i * 3 + 1] * cm[1][K] + f[i * 3 + 2] * cm[2][K];
                const double sjl = s_s[e][t][J * 3 + L];
#pragma unroll
                for (int i = 0; i < 3; ++i)
#pragma unroll
                    for (int kk = 0; kk < 3; ++kk) {
                        const double v = tm[i][0] * f[kk * 3] + tm[i][1] * f[kk * 3 + 1] + tm[i][2] * f[kk * 3 + 2] + (i == kk ? sjl : 0.0);
                        a[T4(i, J, kk, L)] = v;
                        if (J != L) a[T4(kk, L, i, J)] = v;
                    }
            }
        __syncthreads();
        if (col)
            for (int t = 0; t < nq; ++t) {
                const double w = s_w[grp][t];
                const double* g = &s_g[grp][t][0][0];
                const double g10 = g[j1 * 3], g11 = g[j1 * 3 + 1], g12 = g[j1 * 3 + 2];
                const double g20 = g[j2 * 3], g21 = g[j2 * 3 + 1], g22 = g[j2 * 3 + 2];
                const double* p = s_p[grp][t];
                r1 += w * (p[b * 3] * g10 + p[b * 3 + 1] * g11 + p[b * 3 + 2] * g12);
                r2 += w * (p[b * 3] * g20 + p[b * 3 + 1] * g21 + p[b * 3 + 2] * g22);
                if (want_k) {
                    const double* a = s_a[grp][t];
                    double y1[DIM][3], y2[DIM][3];
#pragma unroll
                    for (int aa = 0; aa < DIM; ++aa)
#pragma unroll
                        for (int A = 0; A < 3; ++A) {
                            const double a0 = w * a[T4(aa, A, b, 0)], a1 = w * a[T4(aa, A, b, 1)], a2 = w * a[T4(aa, A, b, 2)];
                            y1[aa][A] = a0 * g10 + a1 * g11 + a2 * g12;
                            y2[aa][A] = a0 * g20 + a1 * g21 + a2 * g22;
                        }
#pragma unroll
                    for (int tt = 0; tt <= NLOC; ++tt) {
                        const bool first = tt <= j1;
                        const int i = first ? tt : tt - j1 - 1;
                        const double gi0 = g[i * 3], gi1 = g[i * 3 + 1], gi2 = g[i * 3 + 2];
#pragma unroll
                        for (int aa = 0; aa < DIM; ++aa)
                            kacc[tt][aa] += gi0 * (first ? y1[aa][0] : y2[aa][0]) + gi1 * (first ? y1[aa][1] : y2[aa][1]) +
                                            gi2 * (first ? y1[aa][2] : y2[aa][2]);
                    }
                }
            }
    }
    if (col) {
#ifdef HK_NO_SCATTER
        double sum = r1 + r2;
#pragma unroll
        for (int tt = 0; tt <= NLOC; ++tt)
#pragma unroll
            for (int aa = 0; aa < DIM; ++aa) sum += kacc[tt][aa];
        if (want_k) vals[c * NCT + lane] = sum;
        else r[lane] = sum;
#else
        atomicAdd(&r[(u64)s_cell[grp].node[j1] * DIM + b], r1);
        if (j2 != j1) atomicAdd(&r[(u64)s_cell[grp].node[j2] * DIM + b], r2);
        if (want_k) {
#pragma unroll
            for (int tt = 0; tt <= NLOC; ++tt) {
                const bool first = tt <= j1;
                if (!first && j2 == j1) continue;
                const int j = first ? j1 : j2, i = first ? tt : tt - j1 - 1;
                const HkCell& cl = s_cell[grp];
                const u64 rij = hk_rank(cl, c, i, j, kpos), rji = hk_rank(cl, c, j, i, kpos), rowj = hk_row(cl, j, b, row_ptr);
#pragma unroll
                for (int aa = 0; aa < DIM; ++aa) {
                    atomicAdd(&vals[hk_row(cl, i, aa, row_ptr) + rij * DIM + b], kacc[tt][aa]);
                    if (i != j) atomicAdd(&vals[rowj + rji * DIM + aa], kacc[tt][aa]);
                }
            }
        }
#endif
    }
}
#endif  // GT
