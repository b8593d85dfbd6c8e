// Hyperelastic residual and consistent Jacobian, integrated per cell on the GPU and summed into the
// residual vector and the CSR values of the Jacobian (`src/hyperelastic/cuda.rs`). One thread per
// (cell, row node i): it gathers the cell, evaluates the law (`hyperelastic_law.cuh`) at every
// quadrature point, accumulates its 3 residual entries and its 3 × 3·NLOC Jacobian rows, and adds
// them at the CSR positions found once on the host (rank of node j among node i's column nodes).
// Launched once per colour of cells that share no vertex, so the adds need no atomics (`atomic` 0),
// or once over every cell with atomic adds (`atomic` 1: one wide launch instead of many narrow ones).
//
// Defines: NLOC (nodes per cell), NQ (quadrature points), NV (geometry vertices), AFFINE (one
// Jacobian per cell), LAW. Table layout: ∇_ξ φ [NQ][NLOC][3] | ∇_ξ geometry [NQ][NV][3] | w [NQ].

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hyper_assemble(
    u64 ncells, const u32* __restrict__ cells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const u32* __restrict__ cell_nodes, const double* __restrict__ tab, const double* __restrict__ frames, int has_frames,
    const double* __restrict__ prm, const double* __restrict__ u, double* __restrict__ r, int want_k,
    const u32* __restrict__ row_ptr, const unsigned short* __restrict__ kpos, double* __restrict__ vals, int atomic) {
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wq = ggeo + NQ * NV * 3;
    for (u64 t = global_thread(); t < ncells * NLOC; t += grid_threads()) {
        const u64 c = cells[t / NLOC];
        const int i = (int)(t % NLOC);
        double rot[3][3];
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int b = 0; b < 3; ++b) rot[a][b] = has_frames ? frames[c * 9 + a * 3 + b] : (a == b ? 1.0 : 0.0);
        double xv[NV][3];
        for (int v = 0; v < NV; ++v) {
            const u64 id = cell_verts[c * NV + v];
#pragma unroll
            for (int k = 0; k < 3; ++k) xv[v][k] = coords[id * 3 + k];
        }
        double uc[NLOC][3];
        for (int j = 0; j < NLOC; ++j) {
            const u64 n = cell_nodes[c * NLOC + j];
#pragma unroll
            for (int k = 0; k < 3; ++k) uc[j][k] = u[n * 3 + k];
        }
        double racc[3] = {0.0, 0.0, 0.0};
        double kacc[3][NLOC][3];
        for (int a = 0; a < 3; ++a)
            for (int j = 0; j < NLOC; ++j)
#pragma unroll
                for (int b = 0; b < 3; ++b) kacc[a][j][b] = 0.0;
        double inv[3][3], det = 0.0;
        double g[NLOC][3];
        double aa[81];
        for (int q = 0; q < NQ; ++q) {
            if (!AFFINE || q == 0) {
                double jm[3][3];
#pragma unroll
                for (int a = 0; a < 3; ++a)
#pragma unroll
                    for (int b = 0; b < 3; ++b) {
                        double s = 0.0;
                        for (int v = 0; v < NV; ++v) s += xv[v][a] * ggeo[(q * NV + v) * 3 + b];
                        jm[a][b] = s;
                    }
                det = hl_det3(jm);
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
            }
            const double w = wq[q] * fabs(det);
            double f[3][3];
#pragma unroll
            for (int a = 0; a < 3; ++a)
#pragma unroll
                for (int b = 0; b < 3; ++b) f[a][b] = rot[a][b];
            for (int j = 0; j < NLOC; ++j) {
                const double* gr = gref + (q * NLOC + j) * 3;
                double gp[3];
#pragma unroll
                for (int k = 0; k < 3; ++k) gp[k] = inv[0][k] * gr[0] + inv[1][k] * gr[1] + inv[2][k] * gr[2];
#pragma unroll
                for (int A = 0; A < 3; ++A) g[j][A] = gp[0] * rot[0][A] + gp[1] * rot[1][A] + gp[2] * rot[2][A];
#pragma unroll
                for (int a = 0; a < 3; ++a)
#pragma unroll
                    for (int A = 0; A < 3; ++A) f[a][A] += uc[j][a] * g[j][A];
            }
            double p[3][3];
            hl_first_piola(prm, f, p, aa);
#pragma unroll
            for (int a = 0; a < 3; ++a) racc[a] += w * (p[a][0] * g[i][0] + p[a][1] * g[i][1] + p[a][2] * g[i][2]);
            if (want_k) {
                // h[a][b][B] = Σ_A g'_iA A_aAbB, then K[a][j][b] += w Σ_B h[a][b][B] g'_jB.
                double h[3][3][3];
#pragma unroll
                for (int a = 0; a < 3; ++a)
#pragma unroll
                    for (int b = 0; b < 3; ++b)
#pragma unroll
                        for (int B = 0; B < 3; ++B)
                            h[a][b][B] = w * (g[i][0] * aa[T4(a, 0, b, B)] + g[i][1] * aa[T4(a, 1, b, B)] + g[i][2] * aa[T4(a, 2, b, B)]);
                for (int j = 0; j < NLOC; ++j)
#pragma unroll
                    for (int a = 0; a < 3; ++a)
#pragma unroll
                        for (int b = 0; b < 3; ++b) kacc[a][j][b] += h[a][b][0] * g[j][0] + h[a][b][1] * g[j][1] + h[a][b][2] * g[j][2];
            }
        }
        const u64 ni = cell_nodes[c * NLOC + i];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
            if (atomic)
                atomicAdd(&r[ni * 3 + a], racc[a]);
            else
                r[ni * 3 + a] += racc[a];
        }
        if (want_k) {
            const unsigned short* rank = kpos + (c * NLOC + i) * NLOC;
#pragma unroll
            for (int a = 0; a < 3; ++a) {
                const u64 base = row_ptr[ni * 3 + a];
                for (int j = 0; j < NLOC; ++j) {
                    const u64 at = base + (u64)rank[j] * 3;
#pragma unroll
                    for (int b = 0; b < 3; ++b) {
                        if (atomic)
                            atomicAdd(&vals[at + b], kacc[a][j][b]);
                        else
                            vals[at + b] += kacc[a][j][b];
                    }
                }
            }
        }
    }
}

// out[idx[k]] += vals[k]: the host-integrated (follower pressure) entries.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hyper_add_at(u64 n, const u64* __restrict__ idx,
                                                                            const double* __restrict__ vals,
                                                                            double* __restrict__ out) {
    for (u64 k = global_thread(); k < n; k += grid_threads()) atomicAdd(&out[idx[k]], vals[k]);
}
