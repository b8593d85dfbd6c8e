// Isotropic linear elasticity σ = λ tr(ε) I + 2μ ε (NCOMP = DIM): twin of
// `src/operator/qfunction/elasticity.rs`.
struct Elasticity {
    static constexpr int NPASSIVE = 2;  // λ, μ
    static constexpr bool VALUE = false, GRAD = true, FULL_GRAD = true;
    // in[c·DIM + k] = ∂_k u_c; out[c·DIM + k] += σ_ck.
    template <int DIM, int NCOMP> __device__ static void apply(const double* p, const double* in, double* out) {
        static_assert(NCOMP == DIM, "elasticity has DIM components");
        double tr = 0.0;
#pragma unroll
        for (int c = 0; c < DIM; ++c) tr += in[c * DIM + c];
#pragma unroll
        for (int c = 0; c < DIM; ++c)
#pragma unroll
            for (int k = 0; k < DIM; ++k)
                out[c * DIM + k] += p[1] * (in[c * DIM + k] + in[k * DIM + c]) + (c == k ? p[0] * tr : 0.0);
    }
    // e[a][b] += λ ∂_a φ_i ∂_b φ_j + μ (δ_ab ∇φ_i·∇φ_j + ∂_b φ_i ∂_a φ_j)
    template <int DIM, int NCOMP, class P> __device__ static void block(const double* p, const P& pair, double e[NCOMP][NCOMP]) {
        const double dot = pair.dot();
#pragma unroll
        for (int a = 0; a < NCOMP; ++a)
#pragma unroll
            for (int b = 0; b < NCOMP; ++b) e[a][b] += p[0] * pair.gg(a, b) + p[1] * (pair.gg(b, a) + (a == b ? dot : 0.0));
    }
};
