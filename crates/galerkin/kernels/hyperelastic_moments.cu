// The moments scheme of the hyperelastic Jacobian (`src/hyperelastic/moments.rs`, thirteenth pass of
// BENCHMARKS.md): affine P2 tetrahedra, one warp per cell, HM_WPB cells per block; the element matrix
// from the cell's moments (`hyperelastic_moments.cuh`), so the products cost the same at any rule.
// Compiled after `hyperelastic_law.cuh`, `hyperelastic.cu` (its prologue `HkCell`, `hk_gather`,
// `hk_geometry`, `hk_deformation` and its staged scatter `hk_scatter_staged`; neither GT nor WPB
// defined, so none of its `hyper_assemble`) and `hyperelastic_moments.cuh`. Per cell:
//   G  every lane: M = J⁻¹R, |det J| (`hk_geometry`), g_k = Mᵀ ∇_ξ λ_k (the geometry gradients);
//   L  a lane per point: λ (the table), ∇N_j from λ and g_k, F = R + Σ u_j ⊗ ∇N_j, the law, and
//      w 𝔸 (45 distinct entries) | w P (9) into the point's record;
//   M  a lane per record entry (54, two rounds): its 15 moments Σ_q λ_m λ_n (λ₄ ≡ 1) in registers,
//      then (over the dead records) M_mn in both halves and P_m;
//   R  the residual from P_m (30 items), atomic adds;
//   K  `hm_products` (60 items (i, a ≤ b)) into the staged upper blocks, then the staged scatter.
// Table: the standard one (`cuda::tables`) | λ [NQ][4] at its end.
// Defines: DIM = 3, NLOC = 10, NQ (≤ 32), NV = 4, AFFINE = 1, LAW, HM_WPB.
// HK_NO_SCATTER (the kernel sweep only): one plain store per lane instead of the matrix's scatter.
#if DIM != 3 || !AFFINE || NLOC != 10 || NV != 4 || NQ > 32
#error "the moments scheme is written for affine P2 tetrahedra with at most 32 points"
#endif
#define HM_PT 55  // point record: w 𝔸 (45) | w P (9), odd stride (conflict-free)
#define HM_REC (NQ * HM_PT > HM_MOM ? NQ * HM_PT : HM_MOM)

extern "C" __global__ void __launch_bounds__(32 * HM_WPB) hyper_moments_assemble(HK_KERNEL_ARGS) {
    __shared__ HkCell s_cell[HM_WPB];
    __shared__ double s_rec[HM_WPB][HM_REC];
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wts = ggeo + NQ * NV * 3;
    const double* lams = wts + NQ;
    const int wp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const u64 c = (u64)blockIdx.x * HM_WPB + wp;
    if (c >= ncells) return;  // the whole warp: no block barrier follows
    hk_gather(c, lane, 32, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, s_cell[wp]);
    __syncwarp();
    double mm[3][3], g[4][3];
    const double adet = fabs(hk_geometry(s_cell[wp].x, ggeo, s_cell[wp].rot, mm));
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int A = 0; A < 3; ++A) g[k][A] = ggeo[k * 3] * mm[0][A] + ggeo[k * 3 + 1] * mm[1][A] + ggeo[k * 3 + 2] * mm[2][A];
    double* rec = s_rec[wp];
    if (lane < NQ) {
        double lam[4], gp[10][3], f[3][3], s[3][3], form[HL_FORM];
#pragma unroll
        for (int m = 0; m < 4; ++m) lam[m] = lams[lane * 4 + m];
        hm_grads(lam, g, gp);
        hk_deformation(s_cell[wp].rot, s_cell[wp].u, gp, f);
        hl_point(prm, f, s, form);
        hm_point_tangent(prm, f, s, form, wts[lane] * adet, rec + lane * HM_PT);
    }
    __syncwarp();
    // M: entries e = lane and lane + 32 of the records (< 54), 15 moments each.
    double acc[2][HM_NPAIR];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int p = 0; p < HM_NPAIR; ++p) acc[r][p] = 0.0;
    const bool two = lane + 32 < HM_NE + 9;
    for (int q = 0; q < NQ; ++q) {
        const double l[5] = {lams[q * 4], lams[q * 4 + 1], lams[q * 4 + 2], lams[q * 4 + 3], 1.0};
        const double v0 = rec[q * HM_PT + lane], v1 = two ? rec[q * HM_PT + lane + 32] : 0.0;
#pragma unroll
        for (int m = 0; m < 5; ++m)
#pragma unroll
            for (int n = m; n < 5; ++n) {
                const double ll = l[m] * l[n];
                acc[0][hm_pair(m, n)] += ll * v0;
                acc[1][hm_pair(m, n)] += ll * v1;
            }
    }
    __syncwarp();  // the records are dead: the moments go over them
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int e = lane + 32 * r;
        if (e < HM_NE) {
            int al, be;
            hm_entry(e, al, be);
#pragma unroll
            for (int p = 0; p < HM_NPAIR; ++p) {
                rec[p * 81 + al * 9 + be] = acc[r][p];
                rec[p * 81 + be * 9 + al] = acc[r][p];
            }
        } else if (e < HM_NE + 9) {
#pragma unroll
            for (int m = 0; m < 5; ++m) rec[HM_NPAIR * 81 + m * 9 + e - HM_NE] = acc[r][hm_pair(m, 4)];
        }
    }
    __syncwarp();
    const HkCell& cl = s_cell[wp];
    hm_residual<32>(rec, g, lane, [&](int i, int a, double v) { atomicAdd(&r[(u64)cl.node[i] * 3 + a], v); });
    if (!want_k) return;
    double* st = rec;  // the upper blocks (10 × 60) over the moments, once every lane has read them
    hm_products<32>(rec, g, lane, st, [] { __syncwarp(); });
    __syncwarp();
#ifdef HK_NO_SCATTER
    double sum = 0.0;
    for (int k = lane; k < 10 * 60; k += 32) sum += st[k];
    vals[c * 32 + lane] = sum;
#else
    hk_scatter_staged(st, s_cell[wp], c, lane, 32, row_ptr, kpos, vals);
#endif
}
