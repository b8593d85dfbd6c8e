// The upper-triangle scatter's two passes (HK_UPPER, twenty-first pass; `src/hyperelastic/upper.rs`).
// The CSR is node-blocked: node m's 3 rows hold the same column nodes, sorted, each of length
// L = row_ptr[3m + 1] − row_ptr[3m]; its lo(m) = lo_ptr[m + 1] − lo_ptr[m] column nodes below m come
// first, then the diagonal block. Row (m, a)'s upper part (what the kernel adds to) starts at column
// 3·lo + a: the diagonal block's entries (a, b ≥ a) and every block of a higher node.
// `hyper_upper_zero` zeroes that part only; `hyper_upper_fill` writes the rest, each lower entry from
// its transpose: ((m, a), (n, b)) with n < m from the upper block (n, m), whose (0, 0) entry is at
// lo_src[lo_ptr[m] + q] = (position, row length of n) for n the q-th column node of m; the diagonal
// block's (a, b < a) from (b, a). One warp per node, lanes over its 3 rows' entries.
__device__ __forceinline__ void hu_node(u64 m, u32& base, u32& len, u32& lo, const u32* __restrict__ row_ptr, const u32* __restrict__ lo_ptr) {
    base = row_ptr[3 * m];
    len = row_ptr[3 * m + 1] - base;
    lo = lo_ptr[m + 1] - lo_ptr[m];
    if (len < 3 * lo + 3) len = lo = 0;  // (no diagonal block — a node of no cell: nothing to do)
}

extern "C" __global__ void hyper_upper_zero(u64 nnodes, const u32* __restrict__ row_ptr, const u32* __restrict__ lo_ptr, double* __restrict__ vals) {
    const u64 m = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (m >= nnodes) return;
    u32 base, len, lo;
    hu_node(m, base, len, lo, row_ptr, lo_ptr);
    const u32 w = len - 3 * lo;  // row (m, a) zeroes its columns 3·lo + a … len − 1
    for (u32 t = threadIdx.x % 32; t < 3 * w; t += 32) {
        const u32 a = t / w, k = 3 * lo + t % w;
        if (k >= 3 * lo + a) vals[base + a * len + k] = 0.0;
    }
}

extern "C" __global__ void hyper_upper_fill(u64 nnodes, const u32* __restrict__ row_ptr, const u32* __restrict__ lo_ptr, const uint2* __restrict__ lo_src,
                                            double* __restrict__ vals) {
    const u64 m = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (m >= nnodes) return;
    u32 base, len, lo;
    hu_node(m, base, len, lo, row_ptr, lo_ptr);
    const u32 w = len ? 3 * lo + 2 : 0;  // row (m, a) fills its columns 0 … 3·lo + a − 1
    const uint2* src = lo_src + lo_ptr[m];
    for (u32 t = threadIdx.x % 32; t < 3 * w; t += 32) {
        const u32 a = t / w, k = t % w, b = k % 3;
        if (k >= 3 * lo + a) continue;
        const u64 from = k < 3 * lo ? (u64)src[k / 3].x + (u64)b * src[k / 3].y + a  // upper block (n, m), entry (b, a)
                                    : (u64)base + (u64)b * len + 3 * lo + a;         // the diagonal block's (b, a)
        vals[base + (u64)a * len + k] = vals[from];
    }
}
