// CSR SpMV y = A x tuned for finite element rows (7 to ~250 nonzeros): "CSR-vector" with a group of
// G lanes per row, G in {4, 8, 16, 32} picked on the host from the mean row length. Lanes of a group
// read consecutive values/col_idx entries (coalesced), x goes through the read-only cache (__ldg),
// and the group's partial sums meet through warp shuffles; no shared memory, no atomics.

template <int G>
__device__ __forceinline__ void spmv_csr_group(u32 nrows, const u32* __restrict__ row_ptr,
                                               const u32* __restrict__ col_idx,
                                               const double* __restrict__ values,
                                               const double* __restrict__ x, double* __restrict__ y) {
    static_assert(G == 4 || G == 8 || G == 16 || G == 32, "threads per row must divide a warp");
    constexpr u32 ROWS_PER_WARP = 32 / G;
    const u32 lane = threadIdx.x & 31;
    const u32 sub = lane % G;          // lane within the row's group
    const u32 group = lane / G;        // which of the warp's rows
    const u64 warp = global_thread() / 32;
    const u64 warps = grid_threads() / 32;
    // The loop bound depends on the warp only, so every lane reaches every shuffle (full mask is valid).
    for (u64 base = warp * ROWS_PER_WARP; base < nrows; base += warps * ROWS_PER_WARP) {
        const u64 row = base + group;
        double acc = 0.0;
        if (row < nrows) {
            const u32 begin = row_ptr[row], end = row_ptr[row + 1];
            for (u32 k = begin + sub; k < end; k += G) acc = fma(values[k], __ldg(&x[col_idx[k]]), acc);
        }
#pragma unroll
        for (int off = G / 2; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off, G);
        if (row < nrows && sub == 0) y[row] = acc;
    }
}

#define GALERKIN_SPMV_VARIANT(G)                                                                       \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) spmv_csr_g##G(                         \
        u32 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx,                    \
        const double* __restrict__ values, const double* __restrict__ x, double* __restrict__ y) {      \
        spmv_csr_group<G>(nrows, row_ptr, col_idx, values, x, y);                                       \
    }
GALERKIN_SPMV_VARIANT(4)
GALERKIN_SPMV_VARIANT(8)
GALERKIN_SPMV_VARIANT(16)
GALERKIN_SPMV_VARIANT(32)

// d[r] = a_rr, one thread per row (0 where the row stores no diagonal entry).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) csr_diagonal(
    u64 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx, const double* __restrict__ values,
    double* __restrict__ d) {
    for (u64 r = global_thread(); r < nrows; r += grid_threads()) {
        double v = 0.0;
        for (u32 k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
            if (col_idx[k] == r) v = values[k];
        d[r] = v;
    }
}

// The B×B diagonal block of node r / B, row r % B, one thread per row: blocks[node·B² + i·B + j].
template <int B>
__device__ __forceinline__ void csr_node_blocks(u64 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx,
                                                const double* __restrict__ values, double* __restrict__ blocks) {
    for (u64 r = global_thread(); r < nrows; r += grid_threads()) {
        const u64 node = r / B;
        double row[B];
#pragma unroll
        for (int j = 0; j < B; ++j) row[j] = 0.0;
        for (u32 k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
            const u64 c = col_idx[k];
            if (c / B == node) row[c % B] = values[k];
        }
#pragma unroll
        for (int j = 0; j < B; ++j) blocks[r * B + j] = row[j];
    }
}
#define GALERKIN_CSR_BLOCKS_VARIANT(B)                                                                    \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) csr_node_blocks_b##B(                     \
        u64 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx,                       \
        const double* __restrict__ values, double* __restrict__ blocks) {                                  \
        csr_node_blocks<B>(nrows, row_ptr, col_idx, values, blocks);                                       \
    }
GALERKIN_CSR_BLOCKS_VARIANT(1)
GALERKIN_CSR_BLOCKS_VARIANT(2)
GALERKIN_CSR_BLOCKS_VARIANT(3)

// Symmetric Dirichlet elimination, one thread per row: constrained rows become identity rows with
// b = g; free rows move their constrained columns to the right-hand side (b -= a·g) and zero them.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) csr_eliminate(
    u64 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx, double* __restrict__ values,
    const double* __restrict__ free_mask, const double* __restrict__ lift, double* __restrict__ rhs) {
    for (u64 r = global_thread(); r < nrows; r += grid_threads()) {
        const u32 s = row_ptr[r], e = row_ptr[r + 1];
        if (free_mask[r] == 0.0) {
            for (u32 k = s; k < e; ++k) values[k] = col_idx[k] == r ? 1.0 : 0.0;
            rhs[r] = lift[r];
        } else {
            double b = rhs[r];
            for (u32 k = s; k < e; ++k) {
                const u32 col = col_idx[k];
                if (free_mask[col] == 0.0) {
                    b -= values[k] * lift[col];
                    values[k] = 0.0;
                }
            }
            rhs[r] = b;
        }
    }
}
