// Pointwise physics ("QFunctions"): the CUDA twins of `src/operator/qfunction/*.rs`. Prepended, with
// Template parameters are Dm (dimension) and Nc (components): DIM and NCOMP are the kernels' defines.
// the physics headers beside it, to every kernel source that evaluates physics (assembly.cu,
// matfree.cu), so each physics is written once per language and every kernel uses the same code.
//
// A QFunction is a struct with
//   NPASSIVE                 passive fields it reads (coefficients), in the order of its Rust twin
//   VALUE, GRAD              which parts of the field vector it reads and writes
//   FULL_GRAD                whether its bilinear form reads every ∂_k φ_i ∂_l φ_j, not only the sum
//   apply<Dm, Nc>(p, in, out)   out += D(p) in on field vectors [u_0..u_{n-1} | ∂_0 u_0 ..]
//   block<Dm, Nc>(p, pair, e)   e[a][b] += B_iᵀ e_a · D(p) B_j e_b, the linearised form on one
//                                   pair of scalar basis functions (what assembly needs)
// A pair gives its quadrature-weighted moments: vv() = w φ_i φ_j, dot() = w ∇φ_i·∇φ_j and
// gg(k, l) = w ∂_k φ_i ∂_l φ_j (PointPair at one point; RefPair on affine cells, integrated once
// on the host into reference tensors).

// Field vector size of a QFunction for Nc components in Dm dimensions.
template <class Qf, int Dm, int Nc> struct FieldSize {
    static constexpr int value = Nc * ((Qf::VALUE ? 1 : 0) + (Qf::GRAD ? Dm : 0));
};

// Moments of one pair of basis functions at one quadrature point (weight w = w_q |det J|).
template <int Dm> struct PointPair {
    double w, vi, vj;
    const double* gi;
    const double* gj;
    __device__ __forceinline__ double vv() const { return w * vi * vj; }
    __device__ __forceinline__ double dot() const {
        double s = 0.0;
#pragma unroll
        for (int k = 0; k < Dm; ++k) s = fma(gi[k], gj[k], s);
        return w * s;
    }
    __device__ __forceinline__ double gg(int k, int l) const { return w * gi[k] * gj[l]; }
};

// Sum of two QFunctions (e.g. diffusion + reaction): the union of their field parts, passive fields
// one after the other.
template <class A, class B> struct Sum {
    static constexpr int NPASSIVE = A::NPASSIVE + B::NPASSIVE;
    static constexpr bool VALUE = A::VALUE || B::VALUE, GRAD = A::GRAD || B::GRAD;
    static constexpr bool FULL_GRAD = A::FULL_GRAD || B::FULL_GRAD;
    // Offset of a term's part inside the union field vector.
    template <class T, int Nc> __device__ static constexpr int offset() { return (VALUE && !T::VALUE) ? Nc : 0; }
    template <int Dm, int Nc> __device__ static void apply(const double* p, const double* in, double* out) {
        A::template apply<Dm, Nc>(p, in + offset<A, Nc>(), out + offset<A, Nc>());
        B::template apply<Dm, Nc>(p + A::NPASSIVE, in + offset<B, Nc>(), out + offset<B, Nc>());
    }
    template <int Dm, int Nc, class PairT> __device__ static void block(const double* p, const PairT& pair, double e[Nc][Nc]) {
        A::template block<Dm, Nc>(p, pair, e);
        B::template block<Dm, Nc>(p + A::NPASSIVE, pair, e);
    }
};
