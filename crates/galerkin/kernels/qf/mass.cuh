// Mass (reaction) ρ u·v for every component: twin of `src/operator/qfunction/mass.rs`.
struct Mass {
    static constexpr int NPASSIVE = 1;  // ρ
    static constexpr bool VALUE = true, GRAD = false, FULL_GRAD = false;
    template <int DIM, int NCOMP> __device__ static void apply(const double* p, const double* in, double* out) {
#pragma unroll
        for (int i = 0; i < NCOMP; ++i) out[i] = fma(p[0], in[i], out[i]);
    }
    template <int DIM, int NCOMP, class P> __device__ static void block(const double* p, const P& pair, double e[NCOMP][NCOMP]) {
        const double s = p[0] * pair.vv();
#pragma unroll
        for (int a = 0; a < NCOMP; ++a) e[a][a] += s;
    }
};
