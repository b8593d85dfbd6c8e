// The P2 tangent from per-cell moments (`kernels/hyperelastic_moments.cu`, thirteenth pass of
// BENCHMARKS.md): the product part as device functions, so that any scheme holding a cell's moments
// in shared memory (the patch kernel next) can form its element matrix from them.
//
// On an affine P2 tetrahedron ∇N_i is linear: ∇N_i = Σ_m λ_m a_im with constant vectors, and with
// λ₄ ≡ 1 every a_im is two terms c·g_k (g_k = ∇λ_k in the material frame, k < 4):
//   vertex v:     ∇N_v = (4λ_v − 1) g_v         terms (m, k, c) = (v, v, 4), (4, v, −1)
//   edge (v, w):  ∇N   = 4 (λ_v g_w + λ_w g_v)  terms (v, w, 4), (w, v, 4)
// (nodes 4…9 are the edges (2,3) (1,3) (1,2) (0,3) (0,2) (0,1): `CellType::edges()` order). So
//   K_(ia)(jb) = Σ_q w_q ∇N_i·𝔸_q[a,b]·∇N_j = Σ_(terms s of i, t of j) c_s c_t g_ks·M_(ms,mt)[a,b]·g_kt
// with the moments M_mn[aA,bB] = Σ_q w_q λ_m λ_n 𝔸_q[aA,bB] (m, n ≤ 4): exact, whatever the rule.
// Likewise r_ia = Σ_s c_s g_ks·P_ms[a,:] with P_m[aA] = Σ_q w_q λ_m P_q[aA].
//
// Layout of a cell's moments in shared memory (HM_MOM doubles): M for the 15 pairs m ≤ n
// (`hm_pair`), each as 81 entries [aA][bB] (both halves: major symmetry written out), then P_m [5][9].
#define HM_NPAIR 15
#define HM_MOM (HM_NPAIR * 81 + 5 * 9)
#define HM_NE 45  // distinct entries of 𝔸 by major symmetry: (α ≤ β), α = 3a + A, β = 3b + B

// The pair (m ≤ n) of 0…4 as an index 0…14.
__device__ __forceinline__ int hm_pair(int m, int n) { return m * 5 - m * (m - 1) / 2 + n - m; }

// Node i's two terms (m, k, c): see the header.
__device__ __forceinline__ void hm_terms(int i, int& m1, int& k1, double& c1, int& m2, int& k2, double& c2) {
    // edges in `CellType::edges()` order: (2,3) (1,3) (1,2) (0,3) (0,2) (0,1)
    const int ev = i < 7 ? (i == 4 ? 2 : 1) : 0;
    const int ew = i == 4 || i == 5 || i == 7 ? 3 : (i == 6 || i == 8 ? 2 : 1);
    if (i < 4) {
        m1 = i, k1 = i, c1 = 4.0, m2 = 4, k2 = i, c2 = -1.0;
    } else {
        m1 = ev, k1 = ew, c1 = 4.0, m2 = ew, k2 = ev, c2 = 4.0;
    }
}

// The rotated gradients of the 10 P2 functions at a point of barycentrics lam, from g_k.
__device__ __forceinline__ void hm_grads(const double lam[4], const double g[4][3], double gp[10][3]) {
#pragma unroll
    for (int i = 0; i < 10; ++i) {
        int m1, k1, m2, k2;
        double c1, c2;
        hm_terms(i, m1, k1, c1, m2, k2, c2);
        const double l1 = c1 * lam[m1], l2 = m2 == 4 ? c2 : c2 * lam[m2];
#pragma unroll
        for (int A = 0; A < 3; ++A) gp[i][A] = l1 * g[k1][A] + l2 * g[k2][A];
    }
}

// w 𝔸 (the HM_NE distinct entries, α ≤ β row-major) and w P = w F S into rec[0, 54), at a point
// with deformation gradient f, stress s and the law's form of ℂ (see `hyperelastic.cu`'s Y phase):
//   𝔸_aA,bB = c₁ U_aA U_bB + e₁ (W_ab X_AB + U_aB U_bA) + c₂ V_aA V_bB
//             + h (δ_AB Σ_I F_aI F_bI B_IA + F_aB F_bA B_AB) + δ_ab S_AB,   U = F X, V = F Y, W = U Fᵀ.
__device__ __forceinline__ void hm_point_tangent(const double* __restrict__ prm, const double f[3][3], const double s[3][3], const double* form,
                                                 double w, double* rec) {
    double um[3][3], wm[3][3];
#if LAW == 2
    double vm[3][3];
#endif
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int A = 0; A < 3; ++A) {
            um[a][A] = f[a][0] * form[A] + f[a][1] * form[3 + A] + f[a][2] * form[6 + A];
#if LAW == 2
            vm[a][A] = f[a][0] * form[9 + A] + f[a][1] * form[12 + A] + f[a][2] * form[15 + A];
#endif
        }
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int b = 0; b < 3; ++b) wm[a][b] = um[a][0] * f[b][0] + um[a][1] * f[b][1] + um[a][2] * f[b][2];
    const double c1 = form[18], e1 = form[19];
#if LAW == 2
    const double c2 = form[20], h = form[21];
    (void)prm;
#else
    (void)prm;
#endif
    int e = 0;
#pragma unroll
    for (int al = 0; al < 9; ++al)
#pragma unroll
        for (int be = al; be < 9; ++be) {
            const int a = al / 3, A = al % 3, b = be / 3, B = be % 3;
            double v = c1 * um[a][A] * um[b][B] + e1 * (wm[a][b] * form[A * 3 + B] + um[a][B] * um[b][A]) + (a == b ? s[A][B] : 0.0);
#if LAW == 2
            double dab = 0.0;
            if (A == B) {
#pragma unroll
                for (int I = 0; I < 3; ++I) dab += f[a][I] * f[b][I] * hl_b(prm, I, A);
            }
            v += c2 * vm[a][A] * vm[b][B] + h * (dab + f[a][B] * f[b][A] * hl_b(prm, A, B));
#endif
            rec[e++] = w * v;
        }
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int A = 0; A < 3; ++A) rec[HM_NE + a * 3 + A] = w * (f[a][0] * s[0][A] + f[a][1] * s[1][A] + f[a][2] * s[2][A]);
}

// (α, β) of the distinct entry e < HM_NE.
__device__ __forceinline__ void hm_entry(int e, int& al, int& be) {
    al = 0;
    while (e >= 9 - al) {
        e -= 9 - al;
        ++al;
    }
    be = al + e;
}

// M_mn[α][β] from the moments (either order of m, n).
__device__ __forceinline__ double hm_m(const double* mom, int m, int n, int al, int be) {
    return m <= n ? mom[hm_pair(m, n) * 81 + al * 9 + be] : mom[hm_pair(n, m) * 81 + be * 9 + al];
}

// The element matrix's upper component blocks from the moments, by the nthr threads of a cell
// (this one `tid`): st[i·60 + p·10 + j] = K_(i,a),(j,b), p = (a ≤ b) as in `hk_pab`. Two passes
// over the 60 items (i, p): the row's terms contracted first (R_n[B] = Σ_s c_s g_ks^A M_(ms,n)[aA,bB],
// n ≤ 4, into registers), then, after `sync` (st may alias the moments), the columns' terms for
// every node j. g holds g_k (k < 4) per thread.
template <int NTHR, class Sync>
__device__ __forceinline__ void hm_products(const double* mom, const double g[4][3], int tid, double* st, Sync sync) {
    constexpr int NIT = (60 + NTHR - 1) / NTHR;
    double rn[NIT][5][3];
#pragma unroll
    for (int r = 0; r < NIT; ++r) {
        const int it = tid + r * NTHR;
        const int i = it < 60 ? it / 6 : 0, p = it % 6;
        const int a = p < 3 ? 0 : (p < 5 ? 1 : 2), b = p < 3 ? p : (p < 5 ? p - 2 : 2);
        int m1, k1, m2, k2;
        double c1, c2;
        hm_terms(i, m1, k1, c1, m2, k2, c2);
        double h1[3], h2[3];  // c_s g_ks (selects: g stays in registers)
#pragma unroll
        for (int A = 0; A < 3; ++A) {
            h1[A] = c1 * (k1 == 0 ? g[0][A] : k1 == 1 ? g[1][A] : k1 == 2 ? g[2][A] : g[3][A]);
            h2[A] = c2 * (k2 == 0 ? g[0][A] : k2 == 1 ? g[1][A] : k2 == 2 ? g[2][A] : g[3][A]);
        }
#pragma unroll
        for (int n = 0; n < 5; ++n)
#pragma unroll
            for (int B = 0; B < 3; ++B) {
                double v = 0.0;
                if (it < 60)
#pragma unroll
                    for (int A = 0; A < 3; ++A) v += h1[A] * hm_m(mom, m1, n, a * 3 + A, b * 3 + B) + h2[A] * hm_m(mom, m2, n, a * 3 + A, b * 3 + B);
                rn[r][n][B] = v;
            }
    }
    sync();
#pragma unroll
    for (int r = 0; r < NIT; ++r) {
        const int it = tid + r * NTHR;
        if (it >= 60) continue;
#pragma unroll
        for (int j = 0; j < 10; ++j) {
            int n1, l1, n2, l2;
            double d1, d2;
            hm_terms(j, n1, l1, d1, n2, l2, d2);
            st[(it / 6) * 60 + (it % 6) * 10 + j] =
                d1 * (g[l1][0] * rn[r][n1][0] + g[l1][1] * rn[r][n1][1] + g[l1][2] * rn[r][n1][2]) +
                d2 * (g[l2][0] * rn[r][n2][0] + g[l2][1] * rn[r][n2][1] + g[l2][2] * rn[r][n2][2]);
        }
    }
}

// The residual from the moments: r_(i,a) = Σ_s c_s g_ks·P_ms[a,:] for the 30 items (i, a), by the
// nthr threads of a cell; `add(i, a, v)` receives each.
template <int NTHR, class Add>
__device__ __forceinline__ void hm_residual(const double* mom, const double g[4][3], int tid, Add add) {
    const double* pm = mom + HM_NPAIR * 81;
    for (int it = tid; it < 30; it += NTHR) {
        const int i = it / 3, a = it % 3;
        int m1, k1, m2, k2;
        double c1, c2;
        hm_terms(i, m1, k1, c1, m2, k2, c2);
        double v = 0.0;
#pragma unroll
        for (int A = 0; A < 3; ++A) {
            const double g1 = k1 == 0 ? g[0][A] : k1 == 1 ? g[1][A] : k1 == 2 ? g[2][A] : g[3][A];
            const double g2 = k2 == 0 ? g[0][A] : k2 == 1 ? g[1][A] : k2 == 2 ? g[2][A] : g[3][A];
            v += c1 * g1 * pm[m1 * 9 + a * 3 + A] + c2 * g2 * pm[m2 * 9 + a * 3 + A];
        }
        add(i, a, v);
    }
}
