// The hyperelastic laws: twin of `src/hyperelastic/law.rs` (same names, same arithmetic). LAW picks
// the law at compile time (0 St. Venant–Kirchhoff, 1 compressible neo-Hookean, 2 transversely
// isotropic Fung law of Guccione/Usyk); prm holds its parameters in the order of `Law::params`:
// (λ, μ) or (C, b_f, b_t, b_fs, κ). Fourth-order tensors are t[((i·3 + j)·3 + k)·3 + l]. The
// push-forward of `Law::first_piola` (P = F S, 𝔸 = F ℂ Fᵀ + δ S) is done by `hyperelastic.cu` in
// parallel, one thread per (J, L) slice of ℂ, so the law here stops at S and the form of ℂ
// (`hl_point`), and `hl_slice` gives one slice of ℂ from it. The arithmetic of ℂ is regrouped
// (law.rs sums 81 entries term by term): the values agree to rounding.
// HK_TRIVIAL_LAW (the kernel sweep of `galerkin bench --hyper-kernel-sweep` only) replaces the law
// by S = E, ℂ = 𝕀 to time the kernel without it.
#ifndef LAW
#error "LAW must be defined (0 svk, 1 neo-hookean, 2 usyk)"
#endif

#define T4(i, j, k, l) ((((i) * 3 + (j)) * 3 + (k)) * 3 + (l))

__device__ __forceinline__ double hl_det3(const double a[3][3]) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

// The tangent ℂ of every law has one shape, so the law stores a 22-number form per point instead
// of 81 entries, and the threads that push ℂ forward read their slices from it (`hl_slice`):
//   ℂ_IJKL = c₁ X_IJ X_KL + e₁ (X_IK X_JL + X_IL X_JK) + c₂ Y_IJ Y_KL + h B_IJ (δ_IK δ_JL + δ_IL δ_JK)
// (St. Venant–Kirchhoff: X = I, c₁ = λ, e₁ = μ; neo-Hookean: X = C⁻¹, c₁ = λ, e₁ = μ − λ ln J; the
// Fung law: X = C⁻¹, c₁ = κ, e₁ = −κ ln J, Y = B∘E, c₂ = 2C e^Q, h = ½ C e^Q, B its weights).
// Layout: X [0, 9), Y [9, 18), c₁, e₁, c₂, h. Plane stress (HL_PLANE_STRESS) adds the rank-one
// condensation c₃ Z_IJ Z_KL with Z_IJ = ℂ_IJ33 and c₃ = −1/ℂ₃₃₃₃: Z [22, 31), c₃ at 31.
#ifdef HL_PLANE_STRESS
#define HL_FORM 32
#else
#define HL_FORM 22
#endif

// S += a X + b I
__device__ __forceinline__ void hl_add_s(double s[3][3], const double x[3][3], double a, double b) {
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int j = 0; j < 3; ++j) s[i][j] += a * x[i][j] + (i == j ? b : 0.0);
}

// The Fung law's weight B_IJ.
__device__ __forceinline__ double hl_b(const double* __restrict__ prm, int i, int j) {
    return i == 0 && j == 0 ? prm[1] : (i == 0 || j == 0 ? prm[3] : prm[2]);
}

// S(F) and ℂ's form (above) at one point; non-finite where the law is undefined (J ≤ 0). This is
// `hl_point` itself, except in plane stress, where `hl_point` (below) calls it in its local Newton.
#ifdef HL_PLANE_STRESS
#define HL_LAW hl_law
#else
#define HL_LAW hl_point
#endif
__device__ void HL_LAW(const double* __restrict__ prm, const double f[3][3], double s[3][3], double* form) {
    double cm[3][3];
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
#ifdef HK_TRIM  // (C symmetric: its lower half copied, the same numbers)
            cm[i][k] = k < i ? cm[k][i] : f[0][i] * f[0][k] + f[1][i] * f[1][k] + f[2][i] * f[2][k];
#else
            cm[i][k] = f[0][i] * f[0][k] + f[1][i] * f[1][k] + f[2][i] * f[2][k];
#endif
            s[i][k] = 0.0;
        }
#pragma unroll
    for (int m = 9; m < HL_FORM; ++m) form[m] = 0.0;
#ifdef HK_TRIVIAL_LAW
#pragma unroll
    for (int m = 0; m < 9; ++m) {
        form[m] = m % 4 == 0 ? 1.0 : 0.0;
        s[m / 3][m % 3] = 0.5 * (cm[m / 3][m % 3] - form[m]);
    }
    form[19] = 0.5;
#else  // the law (no unreachable code after the trivial one: NVRTC warns)
#if LAW != 1
    double e[3][3];  // Green–Lagrange strain (neo-Hookean needs only C)
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) e[i][k] = 0.5 * (cm[i][k] - (i == k ? 1.0 : 0.0));
#endif
#if LAW == 0
    const double lambda = prm[0], mu = prm[1];
    const double tr = e[0][0] + e[1][1] + e[2][2];
    hl_add_s(s, e, 2.0 * mu, lambda * tr);
#pragma unroll
    for (int m = 0; m < 9; ++m) form[m] = m % 4 == 0 ? 1.0 : 0.0;
    form[18] = lambda;
    form[19] = mu;
#else
    const double j = hl_det3(f);
#ifndef HK_TRIM  // (HK_TRIM, round 26: no branch — ln J is NaN for J < 0, −∞ at 0, NaN for J non-finite,
                 // so S and ℂ's form are non-finite there all the same, without the moves of the NaNs)
    if (!(j > 0.0) || !isfinite(j)) {
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int k = 0; k < 3; ++k) s[i][k] = nan("");
#pragma unroll
        for (int m = 0; m < HL_FORM; ++m) form[m] = nan("");  // (unrolled: `form` may be a register array)
        return;
    }
#endif
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
#ifdef HK_TRIM  // (C⁻¹ of a symmetric C: the lower half the same numbers, copied)
    ci[1][0] = ci[0][1];
    ci[2][0] = ci[0][2];
    ci[2][1] = ci[1][2];
#endif
#pragma unroll
    for (int m = 0; m < 9; ++m) form[m] = ci[m / 3][m % 3];
    const double lj = log(j);
#if LAW == 1
    const double lambda = prm[0], mu = prm[1];
    hl_add_s(s, ci, lambda * lj - mu, mu);
    form[18] = lambda;
    form[19] = mu - lambda * lj;
#else
    const double c = prm[0], kappa = prm[4];
    hl_add_s(s, ci, kappa * lj, 0.0);
    form[18] = kappa;
    form[19] = -kappa * lj;
    double q = 0.0;
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) q += hl_b(prm, i, k) * e[i][k] * e[i][k];
    const double eq = c * exp(q);
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const double be = hl_b(prm, i, k) * e[i][k];
            form[9 + i * 3 + k] = be;
            s[i][k] += eq * be;
        }
    form[20] = 2.0 * eq;
    form[21] = 0.5 * eq;
#endif
#endif
#endif  // HK_TRIVIAL_LAW
}

// The (J, L) slice of ℂ from its form: cm[I][K] = ℂ_IJKL.
__device__ __forceinline__ void hl_slice(const double* __restrict__ prm, const double* form, int jj, int l, double cm[3][3]) {
    const double c1 = form[18], e1 = form[19];
    const double* x = form;
#if LAW == 2
    const double c2 = form[20], h = form[21];
    const double* y = form + 9;
#endif
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            double v = c1 * x[i * 3 + jj] * x[k * 3 + l] + e1 * (x[i * 3 + k] * x[jj * 3 + l] + x[i * 3 + l] * x[jj * 3 + k]);
#if LAW == 2
            v += c2 * y[i * 3 + jj] * y[k * 3 + l] + h * hl_b(prm, i, jj) * ((i == k && jj == l ? 1.0 : 0.0) + (i == l && jj == k ? 1.0 : 0.0));
#endif
#ifdef HL_PLANE_STRESS
            v += form[31] * form[22 + i * 3 + jj] * form[22 + k * 3 + l];
#endif
            cm[i][k] = v;
        }
}

#ifdef HL_PLANE_STRESS
// Plane stress (twin of `Law::plane_stress`): F₃₃ (f's is ignored; returned) by Newton on E₃₃
// from 1 until S₃₃ = 0, then Z and c₃ of the condensed tangent; non-finite where the local Newton
// fails.
#define HL_PS_ITERS 30
#define HL_PS_TOL 1e-13
__device__ double hl_plane_stress(const double* __restrict__ prm, const double f[3][3], double s[3][3], double* form) {
    double fl[3][3];
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) fl[i][k] = f[i][k];
    double l3 = 1.0;
    for (int it = 0; it < HL_PS_ITERS; ++it) {
        fl[2][2] = l3;
        hl_law(prm, fl, s, form);  // (zeroes Z and c₃: hl_slice below is ℂ itself)
        double cz[3][3];
        hl_slice(prm, form, 2, 2, cz);
        const double k = cz[2][2], de = -s[2][2] / k;
        if (!(k > 0.0) || !isfinite(de)) break;
        const double e33 = 0.5 * (l3 * l3 - 1.0);
        if (fabs(de) <= HL_PS_TOL * (1.0 + fabs(e33))) {
#pragma unroll
            for (int jj = 0; jj < 3; ++jj) {
                hl_slice(prm, form, jj, 2, cz);  // cz[I][K] = ℂ_I jj K 2, so Z_I jj = cz[I][2]
#pragma unroll
                for (int i = 0; i < 3; ++i) form[22 + i * 3 + jj] = cz[i][2];
            }
            form[31] = -1.0 / k;
            return l3;
        }
        double step = de;  // halved while the thickness stretch would not be positive
        while (1.0 + 2.0 * (e33 + step) <= 0.0) step *= 0.5;
        l3 = sqrt(1.0 + 2.0 * (e33 + step));
    }
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int k = 0; k < 3; ++k) s[i][k] = nan("");
#pragma unroll
    for (int m = 0; m < HL_FORM; ++m) form[m] = nan("");
    return nan("");
}
__device__ __forceinline__ void hl_point(const double* __restrict__ prm, const double f[3][3], double s[3][3], double* form) { (void)hl_plane_stress(prm, f, s, form); }
#endif
