// The Jacobian in node-block storage (HK_SCATTER_BLOCKS, round 25; `src/hyperelastic/blocks.rs`):
// the same nonzeros as the node-blocked CSR, each node pair's 3 × 3 block contiguous — block q of
// node row n (column node bcol[q]) holds its nine values at 9·q + 3a + b, q from bptr[n] to
// bptr[n + 1]. The kernel's scatter adds whole blocks (`hk_scatter_staged`); these two passes let a
// solver use the result: the product y = A x, and the values back in CSR order. A warp per node row.

// y_(n,a) = Σ_q Σ_b A_q[a][b] · x_(bcol[q], b): the warp's lanes walk the row's 9·len values in
// order (coalesced), each keeping three partial sums by a, then the warp sums them.
extern "C" __global__ void hyper_blocks_spmv(u64 nnodes, const u32* __restrict__ bptr, const u32* __restrict__ bcol, const double* __restrict__ vals,
                                             const double* __restrict__ x, double* __restrict__ y) {
    const u64 n = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (n >= nnodes) return;
    const int lane = threadIdx.x % 32;
    const u64 q0 = bptr[n], len = bptr[n + 1] - q0;
    double s[3] = {0.0, 0.0, 0.0};
    for (u64 e = lane; e < 9 * len; e += 32) {
        const u64 q = q0 + e / 9;
        const int ab = (int)(e % 9);
        const double p = vals[9 * q0 + e] * x[(u64)bcol[q] * 3 + ab % 3];
        s[0] += ab < 3 ? p : 0.0;
        s[1] += ab >= 3 && ab < 6 ? p : 0.0;
        s[2] += ab >= 6 ? p : 0.0;
    }
#pragma unroll
    for (int a = 0; a < 3; ++a) {
#pragma unroll
        for (int o = 16; o > 0; o /= 2) s[a] += __shfl_down_sync(0xffffffffu, s[a], o);
    }
    if (lane == 0) {
        y[3 * n] = s[0];
        y[3 * n + 1] = s[1];
        y[3 * n + 2] = s[2];
    }
}

// The values in CSR order: node n's rows start at 9·bptr[n] (the same offset in both storages),
// row (n, a) holds its 3·len values at 3·len·a + 3·q' + b for the q'-th block. Each lane reads
// block order (coalesced) and writes its CSR place.
extern "C" __global__ void hyper_blocks_to_csr(u64 nnodes, const u32* __restrict__ bptr, const double* __restrict__ src, double* __restrict__ dst) {
    const u64 n = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (n >= nnodes) return;
    const u64 base = 9 * (u64)bptr[n], len = bptr[n + 1] - bptr[n];
    for (u64 e = threadIdx.x % 32; e < 9 * len; e += 32) {
        const u64 q = e / 9, a = e % 9 / 3, b = e % 3;
        dst[base + 3 * len * a + 3 * q + b] = src[base + e];
    }
}
