// The load vector of a source given by problem-file expressions (`operator::load_cuda`): per cell,
// at every point of the source rule (the host's `ElementIntegrator::source_quadrature`), the
// expressions compiled in as F0 (F1, F2 for vector fields, over `expr.cuh`) times w |det J| φ_i,
// summed into the cell's vector and added to the global one with atomics.
// Defines: DIM, NV (geometry vertices), NLOC, NQ, NCOMP, AFFINE (one Jacobian per cell), F0...
// Tables: phi[NQ][NLOC] | gdn[NQ][NV][DIM] | w[NQ] | gn[NQ][NV].

constexpr int L_GDN = NQ * NLOC;
constexpr int L_W = L_GDN + NQ * NV * DIM;
constexpr int L_GN = L_W + NQ;

__device__ __forceinline__ double source_component(int c, double x, double y, double z) {
    const double t = 0.0;
    (void)x; (void)y; (void)z; (void)t;
#if NCOMP > 1
    if (c == 1) return (double)(F1);
#endif
#if NCOMP > 2
    if (c == 2) return (double)(F2);
#endif
    (void)c;
    return (double)(F0);
}

extern "C" __global__ void load_vector(u64 ncells, const double* __restrict__ coords, const u32* __restrict__ cell_verts,
                                       const u32* __restrict__ cell_dofs, const double* __restrict__ tab,
                                       double* __restrict__ b) {
    for (u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x; c < ncells; c += (u64)gridDim.x * blockDim.x) {
        double xv[NV][DIM];
        gather_cell_vertices<NV, DIM>(c, cell_verts, coords, xv);
        double be[NLOC][NCOMP];
#pragma unroll
        for (int i = 0; i < NLOC; ++i) {
#pragma unroll
            for (int a = 0; a < NCOMP; ++a) be[i][a] = 0.0;
        }
        double det = 0.0;
        for (int q = 0; q < NQ; ++q) {
            double x[3] = {0.0, 0.0, 0.0};
            map_reference_point<NV, DIM>(xv, &tab[L_GN + q * NV], x);
            if (q == 0 || !AFFINE) {
                double jac[DIM][DIM], inv[DIM][DIM];
                cell_jacobian<NV, DIM>(xv, &tab[L_GDN + q * NV * DIM], jac);
                det = invert_jacobian<DIM>(jac, inv);
            }
            const double w = __ldg(&tab[L_W + q]) * fabs(det);
            double f[NCOMP];
#pragma unroll
            for (int a = 0; a < NCOMP; ++a) f[a] = source_component(a, x[0], x[1], x[2]);
#pragma unroll
            for (int i = 0; i < NLOC; ++i) {
                const double phi = __ldg(&tab[q * NLOC + i]) * w;
#pragma unroll
                for (int a = 0; a < NCOMP; ++a) be[i][a] = fma(phi, f[a], be[i][a]);
            }
        }
#pragma unroll
        for (int i = 0; i < NLOC; ++i) {
            const u64 dof = __ldg(&cell_dofs[c * NLOC + i]);
#pragma unroll
            for (int a = 0; a < NCOMP; ++a) atomicAdd(&b[dof * NCOMP + a], be[i][a]);
        }
    }
}
