// Point-block Jacobi: y_k = D_k⁻¹ x_k for every node k, with D_k⁻¹ a dense B×B block (B ≤ 3) stored
// row-major and contiguous (blocks[k·B² + i·B + j]) and the node's dofs interleaved (x[k·B + j]).
// One thread per output dof: consecutive threads read consecutive block rows, so the dominant
// stream (the blocks, B× the vector) is coalesced; the B x-values per node are shared in L1.

template <int B>
__device__ __forceinline__ void block_jacobi_apply(u64 n, const double* __restrict__ blocks,
                                                   const double* __restrict__ x, double* __restrict__ y) {
    const u64 stride = grid_threads();
    for (u64 dof = global_thread(); dof < n; dof += stride) {
        const u64 node = dof / B;
        const double* row = blocks + dof * B;  // = node·B² + (dof − node·B)·B
        const double* xk = x + node * B;
        double acc = 0.0;
#pragma unroll
        for (int j = 0; j < B; ++j) acc = fma(row[j], __ldg(&xk[j]), acc);
        y[dof] = acc;
    }
}

#define GALERKIN_BLOCK_JACOBI_VARIANT(B)                                                                 \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) block_jacobi_b##B(                       \
        u64 n, const double* __restrict__ blocks, const double* __restrict__ x, double* __restrict__ y) { \
        block_jacobi_apply<B>(n, blocks, x, y);                                                           \
    }
GALERKIN_BLOCK_JACOBI_VARIANT(1)
GALERKIN_BLOCK_JACOBI_VARIANT(2)
GALERKIN_BLOCK_JACOBI_VARIANT(3)
