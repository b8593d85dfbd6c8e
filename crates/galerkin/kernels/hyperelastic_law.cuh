// The hyperelastic laws: twin of `src/hyperelastic/law.rs` (same names, same arithmetic). LAW picks
// the law at compile time (0 St. Venant–Kirchhoff, 1 compressible neo-Hookean, 2 transversely
// isotropic Fung law of Guccione/Usyk); prm holds its parameters in the order of `Law::params`:
// (λ, μ) or (C, b_f, b_t, b_fs, κ). Fourth-order tensors are t[((i·3 + j)·3 + k)·3 + l]. The
// push-forward of `Law::first_piola` (P = F S, 𝔸 = F ℂ Fᵀ + δ S) is done by `hyperelastic.cu` in
// parallel, one thread per (J, L) slice of ℂ, so the law here stops at S and ℂ (`hl_pk2`).
#ifndef LAW
#error "LAW must be defined (0 svk, 1 neo-hookean, 2 usyk)"
#endif

#define T4(i, j, k, l) ((((i) * 3 + (j)) * 3 + (k)) * 3 + (l))

__device__ __forceinline__ double hl_det3(const double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

// S += a X + b I, C += c X⊗X + e (X_IK X_JL + X_IL X_JK)
__device__ __forceinline__ void hl_add_iso(double s[3][3], double* t, const double x[3][3], double a, double b, double c, double e) {
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            s[i][j] += a * x[i][j] + (i == j ? b : 0.0);
#pragma unroll
            for (int k = 0; k < 3; ++k)
#pragma unroll
                for (int l = 0; l < 3; ++l) t[T4(i, j, k, l)] += c * x[i][j] * x[k][l] + e * (x[i][k] * x[j][l] + x[i][l] * x[j][k]);
        }
}

// S(F) and C = ∂S/∂E; non-finite where the law is undefined (J ≤ 0).
__device__ void hl_pk2(const double* __restrict__ prm, const double f[3][3], double s[3][3], double* t) {
    double cm[3][3];
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            cm[i][k] = f[0][i] * f[0][k] + f[1][i] * f[1][k] + f[2][i] * f[2][k];
            s[i][k] = 0.0;
        }
#if LAW != 1
    double e[3][3];  // Green–Lagrange strain (neo-Hookean needs only C)
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) e[i][k] = 0.5 * (cm[i][k] - (i == k ? 1.0 : 0.0));
#endif
#pragma unroll
    for (int m = 0; m < 81; ++m) t[m] = 0.0;
#if LAW == 0
    const double lambda = prm[0], mu = prm[1];
    const double tr = e[0][0] + e[1][1] + e[2][2];
    hl_add_iso(s, t, e, 2.0 * mu, lambda * tr, 0.0, 0.0);
    const double id[3][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
    double dummy[3][3] = {{0.0}};
    hl_add_iso(dummy, t, id, 0.0, 0.0, lambda, mu);
#else
    const double j = hl_det3(f);
    if (!(j > 0.0) || !isfinite(j)) {
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int k = 0; k < 3; ++k) s[i][k] = nan("");
        for (int m = 0; m < 81; ++m) t[m] = nan("");
        return;
    }
    const double r = 1.0 / (j * j);
    double ci[3][3];
    ci[0][0] = (cm[1][1] * cm[2][2] - cm[1][2] * cm[2][1]) * r;
    ci[0][1] = (cm[0][2] * cm[2][1] - cm[0][1] * cm[2][2]) * r;
    ci[0][2] = (cm[0][1] * cm[1][2] - cm[0][2] * cm[1][1]) * r;
    ci[1][0] = (cm[1][2] * cm[2][0] - cm[1][0] * cm[2][2]) * r;
    ci[1][1] = (cm[0][0] * cm[2][2] - cm[0][2] * cm[2][0]) * r;
    ci[1][2] = (cm[0][2] * cm[1][0] - cm[0][0] * cm[1][2]) * r;
    ci[2][0] = (cm[1][0] * cm[2][1] - cm[1][1] * cm[2][0]) * r;
    ci[2][1] = (cm[0][1] * cm[2][0] - cm[0][0] * cm[2][1]) * r;
    ci[2][2] = (cm[0][0] * cm[1][1] - cm[0][1] * cm[1][0]) * r;
    const double lj = log(j);
#if LAW == 1
    const double lambda = prm[0], mu = prm[1];
    hl_add_iso(s, t, ci, lambda * lj - mu, mu, lambda, mu - lambda * lj);
#else
    const double c = prm[0], bf = prm[1], bt = prm[2], bfs = prm[3], kappa = prm[4];
    hl_add_iso(s, t, ci, kappa * lj, 0.0, kappa, -kappa * lj);
    const double b[3][3] = {{bf, bfs, bfs}, {bfs, bt, bt}, {bfs, bt, bt}};
    double q = 0.0;
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) q += b[i][k] * e[i][k] * e[i][k];
    const double eq = c * exp(q);
    double be[3][3];
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            be[i][k] = b[i][k] * e[i][k];
            s[i][k] += eq * be[i][k];
        }
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int jj = 0; jj < 3; ++jj)
#pragma unroll
            for (int k = 0; k < 3; ++k)
#pragma unroll
                for (int l = 0; l < 3; ++l) {
                    const double sym = 0.5 * b[i][jj] * ((i == k && jj == l ? 1.0 : 0.0) + (i == l && jj == k ? 1.0 : 0.0));
                    t[T4(i, jj, k, l)] += eq * (2.0 * be[i][jj] * be[k][l] + sym);
                }
#endif
#endif
}
