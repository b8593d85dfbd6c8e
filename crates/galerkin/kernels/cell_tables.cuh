// What every kernel that integrates over cells from reference tables needs (prepended to
// assembly.cu and element_schemes.cu by the JIT): the table layout, the passive fields, the cell's
// vertices, its Jacobian and physical gradients. Defines: DIM, NV, NLOC, NQ, NCOMP, QF.
//
// The tables (`tab`), identical for every cell, are laid out as
//   phi[NQ][NLOC] | dphi[NQ][NLOC][DIM] (reference gradients) | gdn[NQ][NV][DIM] (geometry basis
//   gradients) | w[NQ] | (assembly.cu's reference tensors, where it uses them)
// The QFunction's NP passive fields (coefficients) live in one buffer: field s at (c, q) is
//   coef[meta[3s] + c·meta[3s+1] + q·meta[3s+2]]
// (strides 0 for constants, per-cell values for regions, per point for functions).

constexpr int NP = QF::NPASSIVE;
constexpr int NPA = NP > 0 ? NP : 1;

constexpr int ND = NLOC * NCOMP;
constexpr int TAB_DPHI = NQ * NLOC;
constexpr int TAB_GDN = TAB_DPHI + NQ * NLOC * DIM;
constexpr int TAB_W = TAB_GDN + NQ * NV * DIM;


__device__ __forceinline__ double coef_at(const double* __restrict__ coef, const u64* __restrict__ meta, int slot,
                                          u64 c, int q) {
    return __ldg(&coef[__ldg(&meta[3 * slot]) + c * __ldg(&meta[3 * slot + 1]) + (u64)q * __ldg(&meta[3 * slot + 2])]);
}

// The passive fields of cell c at point q.
__device__ __forceinline__ void passive_at(const double* __restrict__ coef, const u64* __restrict__ meta, u64 c, int q,
                                           double p[NPA]) {
#pragma unroll
    for (int s = 0; s < NP; ++s) p[s] = coef_at(coef, meta, s, c, q);
}

// The coordinates of cell c's NV geometry vertices.
__device__ __forceinline__ void load_cell_coords(u64 c, const u32* __restrict__ cell_verts,
                                                 const double* __restrict__ coords, double xv[NV][DIM]) {
#pragma unroll
    for (int v = 0; v < NV; ++v) {
        const u64 p = __ldg(&cell_verts[c * NV + v]);
#pragma unroll
        for (int d = 0; d < DIM; ++d) xv[v][d] = __ldg(&coords[p * DIM + d]);
    }
}

// Physical gradient ∇x φ = J⁻ᵀ ∇ξ φ of basis function `i` at point `q`.
__device__ __forceinline__ void phys_grad(const double* __restrict__ tab, int q, int i, const double inv[DIM][DIM],
                                          double g[DIM]) {
    const double* d = tab + TAB_DPHI + (q * NLOC + i) * DIM;
    double r[DIM];
#pragma unroll
    for (int b = 0; b < DIM; ++b) r[b] = __ldg(&d[b]);
#pragma unroll
    for (int k = 0; k < DIM; ++k) {
        double s = 0.0;
#pragma unroll
        for (int b = 0; b < DIM; ++b) s = fma(inv[b][k], r[b], s);
        g[k] = s;
    }
}

// J⁻¹ and det J at point q from the cell's vertex coordinates.
__device__ __forceinline__ void jacobian_at(const double xv[NV][DIM], const double* __restrict__ tab, int q,
                                            double inv[DIM][DIM], double& det) {
    double jac[DIM][DIM];
    cell_jacobian<NV, DIM>(xv, tab + TAB_GDN + q * NV * DIM, jac);
    det = invert_jacobian<DIM>(jac, inv);
}

// A pair's moments, as QF::block reads them (no value term: the host checks QF::VALUE is false):
// what scheme III (element_schemes.cu) and its p = 1 engine (pair_lanes.cu) turn into blocks.
struct MomentPair {
    double m[DIM * DIM];  // m[k·DIM + l] = Σ_q w ∂_k φ_a ∂_l φ_b
    __device__ __forceinline__ double vv() const { return 0.0; }
    __device__ __forceinline__ double dot() const {
        double s = 0.0;
#pragma unroll
        for (int k = 0; k < DIM; ++k) s += m[k * DIM + k];
        return s;
    }
    __device__ __forceinline__ double gg(int k, int l) const { return m[k * DIM + l]; }
};
