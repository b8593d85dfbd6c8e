// The owner-computes gather (sixteenth pass, `Scheme::Gather` in `src/hyperelastic/cuda.rs`): the
// tensor-core kernel compiled with HK_STAGE stores each cell's 6 upper component blocks
// st[i·6·NLOC + p·NLOC + j] (p = (a ≤ b), `hk_pab`) to a record of the global stage instead of adding
// them at their CSR places; then one warp per node i sums the rows of its cells' blocks into node i's
// three CSR rows — contiguous in the values, 9 × (column nodes) of them — in shared memory, and
// stores them once, coalesced: no global atomics, no zeroing pass, every value written exactly once
// (the L2 sees whole-sector writes instead of 0.65 sector reductions per element-matrix entry).
// The stage's DRAM traffic (NLOC · 6·NLOC doubles per cell, written once, read ideally once from
// DRAM and again from L2 by the cell's other nodes) is what this scheme pays instead.
// Items (cell entry e, row a, column node j, component b) run with consecutive lanes on consecutive
// columns; two items of one warp-wide step never meet in one place (9·NLOC > 32 items per cell), the
// shared atomics only order the cells' sums for lanes that drift apart.
#ifdef HK_STAGE
#ifndef HG_WPB
#define HG_WPB 4  // nodes (warps) per block
#endif
#ifndef HG_UNROLL
#define HG_UNROLL 4
#endif
extern "C" __global__ void __launch_bounds__(32 * HG_WPB)
    hyper_gather(u64 nnodes, u32 seg_max, const u32* __restrict__ node_ptr, const u32* __restrict__ inc, const u32* __restrict__ row_ptr,
                 const unsigned short* __restrict__ kpos, const double* __restrict__ stage, double* __restrict__ vals) {
    extern __shared__ double hg_seg[];
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const u64 n = (u64)blockIdx.x * HG_WPB + w;
    if (n >= nnodes) return;  // a warp per node: no block barrier follows
    double* seg = hg_seg + (u64)w * seg_max;
    const u32 base = row_ptr[n * 3], r1 = row_ptr[n * 3 + 1] - base, r2 = row_ptr[n * 3 + 2] - base, len = row_ptr[n * 3 + 3] - base;
    for (u32 k = lane; k < len; k += 32) seg[k] = 0.0;
    __syncwarp();
    const u32 e0 = node_ptr[n], items = (node_ptr[n + 1] - e0) * 9 * NLOC;
    // HG_UNROLL items per lane in flight (their loads first, then their adds): a node has few
    // items (≈ 2.4 cells of 90 at P2 on average), so the dependent loads' latency is what counts.
    for (u32 k0 = lane; k0 < items; k0 += 32 * HG_UNROLL) {
        double v[HG_UNROLL];
        u32 pos[HG_UNROLL];
#pragma unroll
        for (int q = 0; q < HG_UNROLL; ++q) {
            const u32 k = k0 + 32u * q;
            pos[q] = ~0u;
            v[q] = 0.0;
            if (k < items) {
                const u32 e = k / (9 * NLOC), it = k % (9 * NLOC);
                const int a = it / (3 * NLOC), j = (it / 3) % NLOC, b = it % 3;
                const u32 ce = inc[e0 + e];  // cell · NLOC + the node's place i in it
                const u64 c = ce / NLOC;
                const int i = ce % NLOC;
                const double* s = stage + c * (NLOC * 6 * NLOC);
                v[q] = a <= b ? s[i * 6 * NLOC + hk_pab(a, b) * NLOC + j] : s[j * 6 * NLOC + hk_pab(b, a) * NLOC + i];
                pos[q] = (a == 0 ? 0u : (a == 1 ? r1 : r2)) + 3u * kpos[(c * NLOC + i) * NLOC + j] + b;
            }
        }
#pragma unroll
        for (int q = 0; q < HG_UNROLL; ++q)
            if (pos[q] != ~0u) atomicAdd(&seg[pos[q]], v[q]);
    }
    __syncwarp();
    for (u32 k = lane; k < len; k += 32) vals[(u64)base + k] = seg[k];
}
#endif
