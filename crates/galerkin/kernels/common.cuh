// Shared device helpers for galerkin's kernels. Prepended (not #included) to every kernel source by
// the JIT so that NVRTC needs no include path and the cache key covers this file too.
//
// GALERKIN_BLOCK (threads per block) is set by the JIT with -D; every kernel is written for it so the
// block size is chosen in one place (jit.rs) and reductions can size their shared memory statically.
#ifndef GALERKIN_BLOCK
#error "GALERKIN_BLOCK must be defined by the JIT (-DGALERKIN_BLOCK=...)"
#endif

typedef unsigned long long u64;
typedef unsigned int u32;

// Grid-stride index helpers: one place that widens to 64 bits before multiplying, so vectors longer
// than 2^32 elements index correctly.
__device__ __forceinline__ u64 global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }

// Restriction words of the matrix-free levels. With SIGNED_IDX = 1 (hierarchical bases, host:
// `partial::cuda::signed_words`) a word holds the node in its low 30 bits, bit 31 where the cell's
// function is the negated global one and bit 30 where the element lacks the tensor slot (read as 0,
// nothing added); without it a word is the node.
#ifndef SIGNED_IDX
#define SIGNED_IDX 0
#endif
__device__ __forceinline__ u64 idx_node(u32 w) { return SIGNED_IDX ? (u64)(w & 0x3fffffffu) : (u64)w; }
__device__ __forceinline__ double idx_sign(u32 w) {
    return !SIGNED_IDX ? 1.0 : (w & 0x40000000u) ? 0.0 : (w & 0x80000000u) ? -1.0 : 1.0;
}

// Offset of entry (r, s), s ≥ r, of an nd × nd upper triangle packed row by row (row r starts after
// the r rows above it): the one packed layout of element matrices (scheme III writes it, the
// summation and the element apply read it). Host twin: `Storage::index` (element/packed.rs).
__device__ __forceinline__ u64 packed_index(int nd, int r, int s) { return (u64)r * nd - (u64)r * (r - 1) / 2 + (u64)(s - r); }

// Element access in units of V (double or double2). Device allocations are 256-byte aligned and
// vectors are whole allocations, so viewing them as double2 is aligned; the odd tail is done as double.
template <class V> __device__ __forceinline__ V load(const double* p, u64 i) {
    return reinterpret_cast<const V*>(p)[i];
}
template <class V> __device__ __forceinline__ void store(double* p, u64 i, V v) {
    reinterpret_cast<V*>(p)[i] = v;
}

// a*x + y with one rounding (fma), lane-wise for double2.
__device__ __forceinline__ double madd(double a, double x, double y) { return fma(a, x, y); }
__device__ __forceinline__ double2 madd(double a, double2 x, double2 y) {
    return make_double2(fma(a, x.x, y.x), fma(a, x.y, y.y));
}
__device__ __forceinline__ double mul(double a, double x) { return a * x; }
__device__ __forceinline__ double2 mul(double a, double2 x) { return make_double2(a * x.x, a * x.y); }
__device__ __forceinline__ double2 mul(double2 a, double2 x) { return make_double2(a.x * x.x, a.y * x.y); }
__device__ __forceinline__ double splat_as(double v, double) { return v; }
__device__ __forceinline__ double2 splat_as(double v, double2) { return make_double2(v, v); }
// Sum of the lanes (x·y partial sums).
__device__ __forceinline__ double lane_sum(double v) { return v; }
__device__ __forceinline__ double lane_sum(double2 v) { return v.x + v.y; }
__device__ __forceinline__ double dot_lanes(double a, double b) { return a * b; }
__device__ __forceinline__ double dot_lanes(double2 a, double2 b) { return fma(a.y, b.y, a.x * b.x); }

// Sum of `v` over the block, valid in thread 0. Warp shuffles first, then one shared-memory pass
// over the per-warp sums: two barriers per reduction instead of log2(BLOCK).
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}
__device__ __forceinline__ double block_sum(double v) {
    __shared__ double warp_sums[GALERKIN_BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = (threadIdx.x < GALERKIN_BLOCK / 32) ? warp_sums[threadIdx.x] : 0.0;
    if (warp == 0) v = warp_sum(v);
    return v;
}
