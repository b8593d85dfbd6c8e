// Isotropic linear elasticity σ = λ tr(ε) I + 2μ ε (Nc = Dm): twin of
// `src/operator/qfunction/elasticity.rs`.
struct Elasticity {
    static constexpr int NPASSIVE = 2;  // λ, μ
    static constexpr bool VALUE = false, GRAD = true, FULL_GRAD = true;
    // in[c·Dm + k] = ∂_k u_c; out[c·Dm + k] += σ_ck.
    template <int Dm, int Nc> __device__ static void apply(const double* p, const double* in, double* out) {
        static_assert(Nc == Dm, "elasticity has Dm components");
        double tr = 0.0;
#pragma unroll
        for (int c = 0; c < Dm; ++c) tr += in[c * Dm + c];
#pragma unroll
        for (int c = 0; c < Dm; ++c)
#pragma unroll
            for (int k = 0; k < Dm; ++k)
                out[c * Dm + k] += p[1] * (in[c * Dm + k] + in[k * Dm + c]) + (c == k ? p[0] * tr : 0.0);
    }
    // e[a][b] += λ ∂_a φ_i ∂_b φ_j + μ (δ_ab ∇φ_i·∇φ_j + ∂_b φ_i ∂_a φ_j)
    template <int Dm, int Nc, class PairT> __device__ static void block(const double* p, const PairT& pair, double e[Nc][Nc]) {
        const double dot = pair.dot();
#pragma unroll
        for (int a = 0; a < Nc; ++a)
#pragma unroll
            for (int b = 0; b < Nc; ++b) e[a][b] += p[0] * pair.gg(a, b) + p[1] * (pair.gg(b, a) + (a == b ? dot : 0.0));
    }
};
