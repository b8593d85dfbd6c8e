// The matrix-free levels on hexahedra for mass and diffusion (CEED's BP1–BP6), one source for every
// degree: a slab of Q×Q threads per element, each thread owning one column of points along z in
// registers (libCEED cuda-gen's and MFEM's 3D layout). The x and y contractions go through one
// shared-memory slice of the element at a time, the z contractions stay in registers, so an
// element needs 4 slices of Q×Q doubles whatever its degree.
//   apply:  gather x (the restriction, fused), B to the points (skipped when COLLO: Gauss–Lobatto
//           points collocated with the nodes, B = I), the pointwise operator, Bᵀ, scatter-add into y.
//   diffusion takes gradients at the points with the collocated derivative Dq (Q×Q: Lagrange
//           polynomials through the Q points, exact since u is of degree P-1 < Q along a line),
//           then the symmetric 3×3 D_ref (6 numbers per point) and Dqᵀ.
//   partial (NONE = 0) reads D_ref (or w|J|ρ for mass) per point from qdata, laid out
//           qdata[k·npts + c·QD + q], written by hex_setup;
//   none    (NONE = 1) recomputes it at every point from the cell's 8 vertices (trilinear map) and
//           the coefficient: nothing stored per point.
// Components (NCOMP > 1: BP2, BP4) share the scalar operator and are applied one after the other.
//
// Defines: P, Q (1D basis functions and points), NCOMP, KIND (0 mass, 1 diffusion), COLLO, NONE,
// EPB (elements per block: the block is Q×Q×EPB threads), SIGNED_IDX (hierarchical bases: the
// restriction's words carry signs and absent tensor slots, common.cuh).
// Table `tab`: B[Q][P] | Dq[Q][Q] | x1d[Q] | w1d[Q] | refv[8][3] (reference vertices).
// The coefficient (κ or ρ) at (c, q) is coef[meta[0] + c·meta[1] + q·meta[2]], as in assembly.cu.

#if !defined(P) || !defined(Q) || !defined(KIND) || !defined(EPB)
#error "hex_matfree.cu needs its variant defines (P, Q, NCOMP, KIND, COLLO, NONE, EPB)"
#endif
#if COLLO && P != Q
#error "collocated quadrature needs Q == P"
#endif

constexpr int PD = P * P * P, QD = Q * Q * Q;
constexpr int NQD = KIND == 0 ? 1 : 6;  // qdata entries per point
constexpr int T_B = 0, T_D = Q * P, T_X = T_D + Q * Q, T_W = T_X + Q, T_REF = T_W + Q, T_LEN = T_REF + 24;

// The pointwise operator at point (qx, qy, qz) of cell c: out = w|J| ρ (mass: d[0]) or
// w|J| κ J⁻¹J⁻ᵀ packed (xx, xy, xz, yy, yz, zz).
__device__ __forceinline__ void hex_point(const double* __restrict__ tabs, const double* __restrict__ xv, double coefv,
                                          int qx, int qy, int qz, double d[NQD]) {
    const double xi[3] = {tabs[T_X + qx], tabs[T_X + qy], tabs[T_X + qz]};
    double jac[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
#pragma unroll
    for (int v = 0; v < 8; ++v) {
        double f[3], g[3];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
            const double r = tabs[T_REF + 3 * v + a];
            f[a] = r > 0.5 ? xi[a] : 1.0 - xi[a];
            g[a] = r > 0.5 ? 1.0 : -1.0;
        }
        const double dn[3] = {g[0] * f[1] * f[2], f[0] * g[1] * f[2], f[0] * f[1] * g[2]};
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int b = 0; b < 3; ++b) jac[a][b] = fma(xv[3 * v + a], dn[b], jac[a][b]);
    }
    double inv[3][3];
    const double det = invert_jacobian<3>(jac, inv);
    const double wdet = tabs[T_W + qx] * tabs[T_W + qy] * tabs[T_W + qz] * fabs(det) * coefv;
#if KIND == 0
    d[0] = wdet;
#else
    int k = 0;
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int b = a; b < 3; ++b) {
            d[k++] = wdet * (inv[a][0] * inv[b][0] + inv[a][1] * inv[b][1] + inv[a][2] * inv[b][2]);
        }
#endif
}

__device__ __forceinline__ double coef_at(const double* __restrict__ coef, const u64* __restrict__ meta, u64 c, int q) {
    return __ldg(&coef[__ldg(&meta[0]) + c * __ldg(&meta[1]) + (u64)q * __ldg(&meta[2])]);
}

// qdata of every point: one thread per point.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hex_setup(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ qdata) {
    const u64 npts = ncells * (u64)QD;
    for (u64 t = global_thread(); t < npts; t += grid_threads()) {
        const u64 c = t / QD;
        const int q = (int)(t - c * QD);
        double xv[24];
#pragma unroll
        for (int v = 0; v < 8; ++v)
#pragma unroll
            for (int a = 0; a < 3; ++a) xv[3 * v + a] = __ldg(&coords[(u64)__ldg(&cell_verts[c * 8 + v]) * 3 + a]);
        double d[NQD];
        hex_point(tab, xv, coef_at(coef, meta, c, q), q % Q, q / Q % Q, q / (Q * Q), d);
#pragma unroll
        for (int k = 0; k < NQD; ++k) qdata[(u64)k * npts + t] = d[k];
    }
}

// r[0..P) along z at this thread's (x, y) → r[0..Q) at the points: x and y through the slice
// (double-buffered: one barrier per layer), z in registers.
__device__ __forceinline__ void interp(double r[Q], double (*sl)[Q * Q], const double* __restrict__ sB, int tx, int ty) {
#if !COLLO
#pragma unroll
    for (int z = 0; z < P; ++z) {
        double* s = sl[z & 1];
        s[ty * Q + tx] = r[z];
        __syncthreads();
        double v = 0.0;
#pragma unroll
        for (int i = 0; i < P; ++i) v = fma(sB[tx * P + i], s[ty * Q + i], v);
        r[z] = ty < P ? v : 0.0;
    }
#pragma unroll
    for (int z = 0; z < P; ++z) {
        double* s = sl[(z + P) & 1];
        s[ty * Q + tx] = r[z];
        __syncthreads();
        double v = 0.0;
#pragma unroll
        for (int j = 0; j < P; ++j) v = fma(sB[ty * P + j], s[j * Q + tx], v);
        r[z] = v;
    }
    double t[Q];
#pragma unroll
    for (int qz = 0; qz < Q; ++qz) {
        double v = 0.0;
#pragma unroll
        for (int k = 0; k < P; ++k) v = fma(sB[qz * P + k], r[k], v);
        t[qz] = v;
    }
#pragma unroll
    for (int qz = 0; qz < Q; ++qz) r[qz] = t[qz];
#endif
}

// The transpose of `interp`: r[0..Q) at the points → r[0..P) on the nodes (valid where tx, ty < P).
__device__ __forceinline__ void interp_t(double r[Q], double (*sl)[Q * Q], const double* __restrict__ sB, int tx, int ty) {
#if !COLLO
    double t[Q];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        double v = 0.0;
#pragma unroll
        for (int qz = 0; qz < Q; ++qz) v = fma(sB[qz * P + k], r[qz], v);
        t[k] = v;
    }
#pragma unroll
    for (int z = 0; z < P; ++z) {
        double* s = sl[z & 1];
        s[ty * Q + tx] = t[z];
        __syncthreads();
        double v = 0.0;
#pragma unroll
        for (int j = 0; j < Q; ++j) v = fma(sB[j * P + (ty < P ? ty : 0)], s[j * Q + tx], v);
        r[z] = v;
    }
#pragma unroll
    for (int z = 0; z < P; ++z) {
        double* s = sl[(z + P) & 1];
        s[ty * Q + tx] = r[z];
        __syncthreads();
        double v = 0.0;
#pragma unroll
        for (int i = 0; i < Q; ++i) v = fma(sB[i * P + (tx < P ? tx : 0)], s[ty * Q + i], v);
        r[z] = v;
    }
#endif
}

// y += A x (y zeroed by the host); `idx` is the restriction in lexicographic order.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hex_apply(
    u64 ncells, const u32* __restrict__ idx, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    const double* __restrict__ qdata, const double* __restrict__ x, double* __restrict__ y) {
    __shared__ double tabs[T_LEN];
    __shared__ double slices[EPB][4][Q * Q];
#if NONE
    __shared__ double verts[EPB][24];
#endif
    const int tx = threadIdx.x, ty = threadIdx.y, e = threadIdx.z;
    const int tid = tx + Q * (ty + Q * e);
    for (int i = tid; i < T_LEN; i += Q * Q * EPB) tabs[i] = __ldg(&tab[i]);
    const double* sB = tabs + T_B;
#if KIND == 1
    const double* sD = tabs + T_D;
#endif
    double(*sl)[Q * Q] = slices[e];
    const u64 npts = ncells * (u64)QD;
    (void)npts;
    for (u64 c0 = (u64)blockIdx.x * EPB; c0 < ncells; c0 += (u64)gridDim.x * EPB) {
        const u64 c = c0 + e;
        const bool live = c < ncells;
#if NONE
        __syncthreads();
        for (int k = tx + Q * ty; live && k < 24; k += Q * Q) verts[e][k] = __ldg(&coords[(u64)__ldg(&cell_verts[c * 8 + k / 3]) * 3 + k % 3]);
#endif
        __syncthreads();
        for (int comp = 0; comp < NCOMP; ++comp) {
            double r[Q];
#pragma unroll
            for (int z = 0; z < Q; ++z) {
                if (live && z < P && tx < P && ty < P) {
                    const u32 w = __ldg(&idx[c * PD + tx + P * (ty + P * z)]);
                    r[z] = idx_sign(w) * __ldg(&x[idx_node(w) * NCOMP + comp]);
                } else {
                    r[z] = 0.0;
                }
            }
            interp(r, sl, sB, tx, ty);
#if KIND == 0
            // Mass: the value at every point times w|J|ρ.
#pragma unroll
            for (int qz = 0; qz < Q; ++qz) {
                double d[1] = {0.0};
                if (live) {
#if NONE
                    hex_point(tabs, verts[e], coef_at(coef, meta, c, tx + Q * (ty + Q * qz)), tx, ty, qz, d);
#else
                    d[0] = __ldg(&qdata[c * QD + tx + Q * (ty + Q * qz)]);
#endif
                }
                r[qz] *= d[0];
            }
#else
            // Diffusion: gradients at the points, D_ref, transposed gradients.
            double o[Q];
#pragma unroll
            for (int k = 0; k < Q; ++k) o[k] = 0.0;
#pragma unroll
            for (int qz = 0; qz < Q; ++qz) {
                double* s0 = sl[qz & 1];
                double* s1 = sl[2];
                double* s2 = sl[3];
                s0[ty * Q + tx] = r[qz];
                __syncthreads();
                double gx = 0.0, gy = 0.0, gz = 0.0;
#pragma unroll
                for (int i = 0; i < Q; ++i) {
                    gx = fma(sD[tx * Q + i], s0[ty * Q + i], gx);
                    gy = fma(sD[ty * Q + i], s0[i * Q + tx], gy);
                    gz = fma(sD[qz * Q + i], r[i], gz);
                }
                double d[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
                if (live) {
#if NONE
                    hex_point(tabs, verts[e], coef_at(coef, meta, c, tx + Q * (ty + Q * qz)), tx, ty, qz, d);
#else
                    const u64 t = c * QD + tx + Q * (ty + Q * qz);
#pragma unroll
                    for (int k = 0; k < 6; ++k) d[k] = __ldg(&qdata[(u64)k * npts + t]);
#endif
                }
                const double vx = d[0] * gx + d[1] * gy + d[2] * gz;
                const double vy = d[1] * gx + d[3] * gy + d[4] * gz;
                const double vz = d[2] * gx + d[4] * gy + d[5] * gz;
                // s1/s2 are rewritten only after the next layer's barrier, which every thread
                // reaches after reading them here.
                s1[ty * Q + tx] = vx;
                s2[ty * Q + tx] = vy;
                __syncthreads();
                double acc = 0.0;
#pragma unroll
                for (int i = 0; i < Q; ++i) {
                    acc = fma(sD[i * Q + tx], s1[ty * Q + i], acc);
                    acc = fma(sD[i * Q + ty], s2[i * Q + tx], acc);
                }
                o[qz] += acc;
#pragma unroll
                for (int k = 0; k < Q; ++k) o[k] = fma(sD[qz * Q + k], vz, o[k]);
                __syncthreads();
            }
#pragma unroll
            for (int k = 0; k < Q; ++k) r[k] = o[k];
#endif
            interp_t(r, sl, sB, tx, ty);
            if (live && tx < P && ty < P) {
#pragma unroll
                for (int z = 0; z < P; ++z) {
                    const u32 w = __ldg(&idx[c * PD + tx + P * (ty + P * z)]);
                    if (!SIGNED_IDX || idx_sign(w) != 0.0) atomicAdd(&y[idx_node(w) * NCOMP + comp], idx_sign(w) * r[z]);
                }
            }
            __syncthreads();
        }
    }
}

// diag[node] += Σ_q (B e_l)ᵀ D_ref (B e_l) for every (cell, local node l): the diagonal without a
// matrix (the node blocks are diagonal: components do not couple). One thread per (cell, node).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hex_diagonal(
    u64 ncells, const u32* __restrict__ idx, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const double* __restrict__ tab, const double* __restrict__ coef, const u64* __restrict__ meta,
    const double* __restrict__ qdata, double* __restrict__ diag) {
    const u64 work = ncells * (u64)PD, npts = ncells * (u64)QD;
    (void)npts;
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 c = t / PD;
        const int l = (int)(t - c * PD);
        const int li[3] = {l % P, l / P % P, l / (P * P)};
        double xv[24];
#if NONE
#pragma unroll
        for (int v = 0; v < 8; ++v)
#pragma unroll
            for (int a = 0; a < 3; ++a) xv[3 * v + a] = __ldg(&coords[(u64)__ldg(&cell_verts[c * 8 + v]) * 3 + a]);
#endif
        (void)xv;
        double acc = 0.0;
        for (int q = 0; q < QD; ++q) {
            const int qi[3] = {q % Q, q / Q % Q, q / (Q * Q)};
            double d[NQD];
#if NONE
            hex_point(tab, xv, coef_at(coef, meta, c, q), qi[0], qi[1], qi[2], d);
#else
#pragma unroll
            for (int k = 0; k < NQD; ++k) d[k] = __ldg(&qdata[(u64)k * npts + c * QD + q]);
#endif
            double b[3];
#pragma unroll
            for (int a = 0; a < 3; ++a) b[a] = __ldg(&tab[T_B + qi[a] * P + li[a]]);
#if KIND == 0
            const double v = b[0] * b[1] * b[2];
            acc = fma(d[0] * v, v, acc);
#else
            double g[3];
#pragma unroll
            for (int a = 0; a < 3; ++a) {
                // ∂ of the basis function at the point: Σ_j Dq[q][j] B[j][l] (exact, see above).
                double s = 0.0;
                for (int j = 0; j < Q; ++j) s = fma(__ldg(&tab[T_D + qi[a] * Q + j]), __ldg(&tab[T_B + j * P + li[a]]), s);
                g[a] = s;
            }
            const double gr[3] = {g[0] * b[1] * b[2], b[0] * g[1] * b[2], b[0] * b[1] * g[2]};
            acc += d[0] * gr[0] * gr[0] + d[3] * gr[1] * gr[1] + d[5] * gr[2] * gr[2] +
                   2.0 * (d[1] * gr[0] * gr[1] + d[2] * gr[0] * gr[2] + d[4] * gr[1] * gr[2]);
#endif
        }
        const u32 w = __ldg(&idx[c * PD + l]);
        const u64 node = idx_node(w);
        if (idx_sign(w) == 0.0) continue;  // a slot the element lacks
#pragma unroll
        for (int comp = 0; comp < NCOMP; ++comp) atomicAdd(&diag[(node * NCOMP + comp) * NCOMP + comp], acc);
    }
}
