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
