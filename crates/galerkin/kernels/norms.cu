// Error norms against an exact solution on the device (`operator::norms_cuda`): per cell, at every
// point of a quadrature rule, the exact solution's value and gradient (the problem file's
// expressions compiled in as U0, U1, U2 over `expr.cuh`, differentiated exactly through Dual3)
// against u_h and ∇u_h, reduced to per-block partial sums of
//   [ Σ w |u − u_h|², Σ w |∇u − ∇u_h|², Σ w |u|² ].
// Defines: DIM, NV (geometry vertices), NLOC, NQ, NCOMP, U0 (and U1, U2 for vector fields).
// Tables: phi[NQ][NLOC] | dphi[NQ][NLOC][DIM] | gdn[NQ][NV][DIM] | w[NQ] | gn[NQ][NV].

constexpr int T_DPHI = NQ * NLOC;
constexpr int T_GDN = T_DPHI + NQ * NLOC * DIM;
constexpr int T_W = T_GDN + NQ * NV * DIM;
constexpr int T_GN = T_W + NQ;

template <class T>
__device__ __forceinline__ T exact_component(int c, T x, T y, T z) {
    const double t = 0.0;
    (void)x; (void)y; (void)z; (void)t;
#if NCOMP > 1
    if (c == 1) return as_dual(U1);
#endif
#if NCOMP > 2
    if (c == 2) return as_dual(U2);
#endif
    (void)c;
    return as_dual(U0);
}

extern "C" __global__ void error_norms(u64 ncells, const double* __restrict__ coords, const u32* __restrict__ cell_verts,
                                       const u32* __restrict__ cell_dofs, const double* __restrict__ u,
                                       const double* __restrict__ tab, double* __restrict__ partial) {
    double acc[3] = {0.0, 0.0, 0.0};
    for (u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x; c < ncells; c += (u64)gridDim.x * blockDim.x) {
        double xv[NV][DIM];
        gather_cell_vertices<NV, DIM>(c, cell_verts, coords, xv);
        double ue[NLOC][NCOMP];
#pragma unroll
        for (int i = 0; i < NLOC; ++i) {
            const u64 dof = __ldg(&cell_dofs[c * NLOC + i]);
#pragma unroll
            for (int a = 0; a < NCOMP; ++a) ue[i][a] = __ldg(&u[dof * NCOMP + a]);
        }
        for (int q = 0; q < NQ; ++q) {
            double jac[DIM][DIM], inv[DIM][DIM], x[3] = {0.0, 0.0, 0.0};
            cell_jacobian<NV, DIM>(xv, &tab[T_GDN + q * NV * DIM], jac);
            map_reference_point<NV, DIM>(xv, &tab[T_GN + q * NV], x);
            const double w = __ldg(&tab[T_W + q]) * fabs(invert_jacobian<DIM>(jac, inv));
            double uh[NCOMP], gh[NCOMP][DIM];
#pragma unroll
            for (int a = 0; a < NCOMP; ++a) {
                uh[a] = 0.0;
#pragma unroll
                for (int k = 0; k < DIM; ++k) gh[a][k] = 0.0;
            }
            for (int i = 0; i < NLOC; ++i) {
                const double phi = __ldg(&tab[q * NLOC + i]);
                double g[DIM];
#pragma unroll
                for (int k = 0; k < DIM; ++k) {
                    double s = 0.0;
#pragma unroll
                    for (int b = 0; b < DIM; ++b) s = fma(inv[b][k], __ldg(&tab[T_DPHI + (q * NLOC + i) * DIM + b]), s);
                    g[k] = s;
                }
#pragma unroll
                for (int a = 0; a < NCOMP; ++a) {
                    uh[a] = fma(ue[i][a], phi, uh[a]);
#pragma unroll
                    for (int k = 0; k < DIM; ++k) gh[a][k] = fma(ue[i][a], g[k], gh[a][k]);
                }
            }
            const Dual3 X{x[0], {1.0, 0.0, 0.0}}, Y{x[1], {0.0, 1.0, 0.0}}, Z{x[2], {0.0, 0.0, 1.0}};
#pragma unroll
            for (int a = 0; a < NCOMP; ++a) {
                const Dual3 e = exact_component<Dual3>(a, X, Y, Z);
                acc[0] += w * (e.v - uh[a]) * (e.v - uh[a]);
                acc[2] += w * e.v * e.v;
#pragma unroll
                for (int k = 0; k < DIM; ++k) acc[1] += w * (e.d[k] - gh[a][k]) * (e.d[k] - gh[a][k]);
            }
        }
    }
    // One partial triple per block (summed on the host); the barrier lets block_sum reuse its
    // shared slots.
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        const double s = block_sum(acc[k]);
        if (threadIdx.x == 0) partial[blockIdx.x * 3 + k] = s;
        __syncthreads();
    }
}
