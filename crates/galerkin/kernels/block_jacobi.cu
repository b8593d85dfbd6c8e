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

// Inverts every B×B block in place (closed form: B ≤ 3), one thread per block; the smallest index
// of a singular or non-finite block goes to *bad (initialised to 0xffffffff by the host).
template <int B>
__device__ __forceinline__ void block_invert(u64 nblocks, double* __restrict__ blocks, u32* __restrict__ bad) {
    for (u64 k = global_thread(); k < nblocks; k += grid_threads()) {
        double* m = blocks + k * (B * B);
        double inv[B * B];
        double det;
        if (B == 1) {
            det = m[0];
            inv[0] = 1.0;
        } else if (B == 2) {
            det = m[0] * m[3] - m[1] * m[2];
            inv[0] = m[3]; inv[1] = -m[1]; inv[2] = -m[2]; inv[3] = m[0];
        } else {
            const double c00 = m[4] * m[8] - m[5] * m[7], c01 = m[5] * m[6] - m[3] * m[8], c02 = m[3] * m[7] - m[4] * m[6];
            det = m[0] * c00 + m[1] * c01 + m[2] * c02;
            inv[0] = c00; inv[1] = m[2] * m[7] - m[1] * m[8]; inv[2] = m[1] * m[5] - m[2] * m[4];
            inv[3] = c01; inv[4] = m[0] * m[8] - m[2] * m[6]; inv[5] = m[2] * m[3] - m[0] * m[5];
            inv[6] = c02; inv[7] = m[1] * m[6] - m[0] * m[7]; inv[8] = m[0] * m[4] - m[1] * m[3];
        }
        const double r = 1.0 / det;
        bool ok = det != 0.0 && isfinite(r);
#pragma unroll
        for (int i = 0; i < B * B; ++i) {
            m[i] = inv[i] * r;
            ok = ok && isfinite(m[i]);
        }
        if (!ok) atomicMin(bad, (u32)min(k, (u64)0xfffffffeu));
    }
}

// d[r] = (block r / B)[r % B][r % B].
template <int B>
__device__ __forceinline__ void block_diagonal(u64 n, const double* __restrict__ blocks, double* __restrict__ d) {
    for (u64 r = global_thread(); r < n; r += grid_threads()) d[r] = blocks[(r / B) * (B * B) + (r % B) * (B + 1)];
}

#define GALERKIN_BLOCK_OPS_VARIANT(B)                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) block_invert_b##B(                            \
        u64 nblocks, double* __restrict__ blocks, u32* __restrict__ bad) {                                     \
        block_invert<B>(nblocks, blocks, bad);                                                                 \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) block_diagonal_b##B(                          \
        u64 n, const double* __restrict__ blocks, double* __restrict__ d) {                                    \
        block_diagonal<B>(n, blocks, d);                                                                       \
    }
GALERKIN_BLOCK_OPS_VARIANT(1)
GALERKIN_BLOCK_OPS_VARIANT(2)
GALERKIN_BLOCK_OPS_VARIANT(3)
