// Mass (reaction) ρ u·v for every component: twin of `src/operator/qfunction/mass.rs`.
struct Mass {
    static constexpr int NPASSIVE = 1;  // ρ
    static constexpr bool VALUE = true, GRAD = false, FULL_GRAD = false;
    template <int Dm, int Nc> __device__ static void apply(const double* p, const double* in, double* out) {
#pragma unroll
        for (int i = 0; i < Nc; ++i) out[i] = fma(p[0], in[i], out[i]);
    }
    template <int Dm, int Nc, class PairT> __device__ static void block(const double* p, const PairT& pair, double e[Nc][Nc]) {
        const double s = p[0] * pair.vv();
#pragma unroll
        for (int a = 0; a < Nc; ++a) e[a][a] += s;
    }
};
