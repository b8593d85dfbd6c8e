// Geometry helpers of the finite element kernels (assembly.cu, matfree.cu), prepended with the
// QFunctions so both kernels share one copy.

// Inverse of the Dm×Dm Jacobian `j` into `inv`; returns det J.
template <int Dm>
__device__ __forceinline__ double invert_jacobian(const double j[Dm][Dm], double inv[Dm][Dm]) {
    if constexpr (Dm == 1) {
        inv[0][0] = 1.0 / j[0][0];
        return j[0][0];
    } else if constexpr (Dm == 2) {
        const double det = j[0][0] * j[1][1] - j[0][1] * j[1][0], r = 1.0 / det;
        inv[0][0] = j[1][1] * r;
        inv[0][1] = -j[0][1] * r;
        inv[1][0] = -j[1][0] * r;
        inv[1][1] = j[0][0] * r;
        return det;
    } else {
        const double c00 = j[1][1] * j[2][2] - j[1][2] * j[2][1];
        const double c01 = j[1][2] * j[2][0] - j[1][0] * j[2][2];
        const double c02 = j[1][0] * j[2][1] - j[1][1] * j[2][0];
        const double det = j[0][0] * c00 + j[0][1] * c01 + j[0][2] * c02, r = 1.0 / det;
        inv[0][0] = c00 * r;
        inv[0][1] = (j[0][2] * j[2][1] - j[0][1] * j[2][2]) * r;
        inv[0][2] = (j[0][1] * j[1][2] - j[0][2] * j[1][1]) * r;
        inv[1][0] = c01 * r;
        inv[1][1] = (j[0][0] * j[2][2] - j[0][2] * j[2][0]) * r;
        inv[1][2] = (j[0][2] * j[1][0] - j[0][0] * j[1][2]) * r;
        inv[2][0] = c02 * r;
        inv[2][1] = (j[0][1] * j[2][0] - j[0][0] * j[2][1]) * r;
        inv[2][2] = (j[0][0] * j[1][1] - j[0][1] * j[1][0]) * r;
        return det;
    }
}

// The coordinates of cell `c`'s Nv geometry vertices (Dm each) into `xv`.
template <int Nv, int Dm>
__device__ __forceinline__ void gather_cell_vertices(u64 c, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                                                     double xv[Nv][Dm]) {
#pragma unroll
    for (int v = 0; v < Nv; ++v) {
        const u64 p = __ldg(&cell_verts[c * Nv + v]);
#pragma unroll
        for (int d = 0; d < Dm; ++d) xv[v][d] = __ldg(&coords[p * Dm + d]);
    }
}

// The physical point of a reference point from the cell's vertices `xv` and the geometry basis
// values `gn[Nv]` there.
template <int Nv, int Dm>
__device__ __forceinline__ void map_reference_point(const double xv[Nv][Dm], const double* __restrict__ gn, double x[3]) {
#pragma unroll
    for (int a = 0; a < Dm; ++a) {
#pragma unroll
        for (int v = 0; v < Nv; ++v) x[a] = fma(xv[v][a], __ldg(&gn[v]), x[a]);
    }
}

// The Jacobian ∂x_a/∂ξ_e from the cell's vertices `xv` and the geometry basis gradients
// `gdn[Nv][Dm]` at a reference point.
template <int Nv, int Dm>
__device__ __forceinline__ void cell_jacobian(const double xv[Nv][Dm], const double* __restrict__ gdn, double jac[Dm][Dm]) {
#pragma unroll
    for (int a = 0; a < Dm; ++a) {
#pragma unroll
        for (int e = 0; e < Dm; ++e) {
            double s = 0.0;
#pragma unroll
            for (int v = 0; v < Nv; ++v) s = fma(xv[v][a], __ldg(&gdn[v * Dm + e]), s);
            jac[a][e] = s;
        }
    }
}
