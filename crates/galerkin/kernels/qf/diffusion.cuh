// Diffusion κ ∇u·∇v for every component: twin of `src/operator/qfunction/diffusion.rs`.
struct Diffusion {
    static constexpr int NPASSIVE = 1;  // κ
    static constexpr bool VALUE = false, GRAD = true, FULL_GRAD = false;
    template <int DIM, int NCOMP> __device__ static void apply(const double* p, const double* in, double* out) {
#pragma unroll
        for (int i = 0; i < NCOMP * DIM; ++i) out[i] = fma(p[0], in[i], out[i]);
    }
    template <int DIM, int NCOMP, class P> __device__ static void block(const double* p, const P& pair, double e[NCOMP][NCOMP]) {
        const double s = p[0] * pair.dot();
#pragma unroll
        for (int a = 0; a < NCOMP; ++a) e[a][a] += s;
    }
};
