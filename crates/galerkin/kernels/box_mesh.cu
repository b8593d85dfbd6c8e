// A generated box mesh built on the device (mesh/box_cuda.rs): lattice blocks in Hilbert-curve
// order, each block's cells in the host template's order, vertices numbered by first appearance in
// those cells, coordinates computed in the new numbering. Nothing is sorted: the curve is walked
// index by index over the 2^L cube holding the lattice (blocks outside it dropped by a scan), and a
// vertex's new number is the count of first appearances before its own (another scan).
//
// The scan (exclusive, u32, in place): tiles of SCAN_TILE items, one block per tile; the tiles'
// sums, their exclusive scan by one block, then each tile scanned from its offset. SCAN_ITEMS (items
// per thread) may be set with -D: tests shrink the tile so that small boxes span many tiles.

#ifndef SCAN_ITEMS
#define SCAN_ITEMS 8
#endif
#define SCAN_TILE (GALERKIN_BLOCK * SCAN_ITEMS)

// Exclusive scan over the block of one value per thread; *total gets the block's sum.
__device__ __forceinline__ u32 block_exclusive_scan(u32 v, u32* total) {
    __shared__ u32 warp_tot[GALERKIN_BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 inc = v;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const u32 y = __shfl_up_sync(0xffffffffu, inc, off);
        if (lane >= off) inc += y;
    }
    if (lane == 31) warp_tot[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < GALERKIN_BLOCK / 32 ? warp_tot[lane] : 0u;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const u32 y = __shfl_up_sync(0xffffffffu, w, off);
            if (lane >= off) w += y;
        }
        if (lane < GALERKIN_BLOCK / 32) warp_tot[lane] = w;  // inclusive
    }
    __syncthreads();
    const u32 before = warp > 0 ? warp_tot[warp - 1] : 0u;
    *total = warp_tot[GALERKIN_BLOCK / 32 - 1];
    __syncthreads();  // warp_tot is reused by the next call
    return before + inc - v;
}

// sums[b] = sum of tile b of data[0..n).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) scan_tile_sums(u64 n, const u32* __restrict__ data,
                                                                             u32* __restrict__ sums) {
    const u64 base = (u64)blockIdx.x * SCAN_TILE;
    u32 s = 0;
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        const u64 k = base + (u64)i * GALERKIN_BLOCK + threadIdx.x;
        if (k < n) s += data[k];
    }
    u32 total;
    block_exclusive_scan(s, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// sums[0..nt) scanned (exclusive) in place by one block; sums[nt] = the grand total.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) scan_sums(u64 nt, u32* __restrict__ sums) {
    u32 carry = 0;
    for (u64 base = 0; base < nt; base += GALERKIN_BLOCK) {
        const u64 k = base + threadIdx.x;
        const u32 v = k < nt ? sums[k] : 0u;
        u32 total;
        const u32 ex = block_exclusive_scan(v, &total);
        if (k < nt) sums[k] = carry + ex;
        carry += total;
    }
    if (threadIdx.x == 0) sums[nt] = carry;
}

// data[0..n) replaced by its exclusive scan, tile b starting from sums[b]. Each thread owns
// SCAN_ITEMS consecutive items of the tile.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) scan_tiles(u64 n, u32* __restrict__ data,
                                                                         const u32* __restrict__ sums) {
    __shared__ u32 tile[SCAN_TILE];
    const u64 base = (u64)blockIdx.x * SCAN_TILE;
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        const int t = i * GALERKIN_BLOCK + threadIdx.x;
        tile[t] = base + t < n ? data[base + t] : 0u;
    }
    __syncthreads();
    u32 own[SCAN_ITEMS];
    u32 s = 0;
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        own[i] = tile[threadIdx.x * SCAN_ITEMS + i];
        s += own[i];
    }
    u32 total;
    u32 at = sums[blockIdx.x] + block_exclusive_scan(s, &total);
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        tile[threadIdx.x * SCAN_ITEMS + i] = at;
        at += own[i];
    }
    __syncthreads();
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        const int t = i * GALERKIN_BLOCK + threadIdx.x;
        if (base + t < n) data[base + t] = tile[t];
    }
}

// The lattice point at index h of the Hilbert curve over 2^level points per axis: the inverse of
// mesh::hilbert::HilbertTable::<3>::index. inv[(e·3 + d) << 3 | digit] = bits | e' << 3 | d' << 6.
__device__ __forceinline__ void hilbert_point(u64 h, int level, const unsigned char* __restrict__ inv, u32 p[3]) {
    u32 e = 0, d = 0;
    p[0] = p[1] = p[2] = 0;
    for (int i = level - 1; i >= 0; --i) {
        const u32 w = (u32)(h >> (3 * i)) & 7u;
        const u32 t = inv[(e * 3 + d) << 3 | w];
        p[0] |= (t & 1u) << i;
        p[1] |= ((t >> 1) & 1u) << i;
        p[2] |= ((t >> 2) & 1u) << i;
        e = (t >> 3) & 7u;
        d = t >> 6;
    }
}

// flag[h] = 1 where curve point h is a block of the n0 × n1 × n2 lattice.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) curve_in_box(u64 npts, int level, u32 n0, u32 n1, u32 n2,
                                                                           const unsigned char* __restrict__ inv,
                                                                           u32* __restrict__ flag) {
    for (u64 h = global_thread(); h < npts; h += grid_threads()) {
        u32 p[3];
        hilbert_point(h, level, inv, p);
        flag[h] = (p[0] < n0 && p[1] < n1 && p[2] < n2) ? 1u : 0u;
    }
}

// The cells of every block in curve order (rank[h] = the block's place, the scan of the flags):
// cell (place·T + t) has the lattice vertices of template[t] at the block's corners. Corner c sits
// at offset (c & 1, c >> 1 & 1, c >> 2 & 1) of the block's lowest vertex.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) block_cells(u64 npts, int level, u32 n0, u32 n1, u32 n2,
                                                                          const unsigned char* __restrict__ inv,
                                                                          const u32* __restrict__ rank, u32 ntpl, u32 nv,
                                                                          const u32* __restrict__ tpl, u32* __restrict__ cells) {
    const u64 s1 = n0 + 1, s2 = (u64)(n0 + 1) * (n1 + 1);
    for (u64 h = global_thread(); h < npts; h += grid_threads()) {
        u32 p[3];
        hilbert_point(h, level, inv, p);
        if (!(p[0] < n0 && p[1] < n1 && p[2] < n2)) continue;
        const u64 base = p[0] + s1 * p[1] + s2 * p[2];
        const u64 out = (u64)rank[h] * ntpl * nv;
        for (u32 k = 0; k < ntpl * nv; ++k) {
            const u32 c = tpl[k];
            cells[out + k] = (u32)(base + (c & 1u) + s1 * ((c >> 1) & 1u) + s2 * ((c >> 2) & 1u));
        }
    }
}

// first[v] = the first position (cell · nv + local vertex) where lattice vertex v occurs.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) first_touch(u64 npos, const u32* __restrict__ cells,
                                                                          u32* __restrict__ first) {
    for (u64 k = global_thread(); k < npos; k += grid_threads()) atomicMin(&first[cells[k]], (u32)k);
}

// mark[k] = 1 where position k is its vertex's first appearance.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) mark_first(u64 npos, const u32* __restrict__ cells,
                                                                         const u32* __restrict__ first, u32* __restrict__ mark) {
    for (u64 k = global_thread(); k < npos; k += grid_threads()) mark[k] = first[cells[k]] == (u32)k ? 1u : 0u;
}

// `lo + t (hi - lo)` as mesh::generate::lerp computes it, t = i / n: (1 - t)·lo + t·hi, each
// operation rounded on its own (no contraction into fma) so the coordinates equal the host's bits.
__device__ __forceinline__ double lattice_coord(u64 i, u32 n, double lo, double hi) {
    const double t = __ddiv_rn((double)i, (double)n);
    return __dadd_rn(__dmul_rn(__dadd_rn(1.0, -t), lo), __dmul_rn(t, hi));
}

// Renumbering, in place: cells[k] becomes the new number of its vertex (the scan of the marks at
// its first appearance); the first appearance also writes that vertex's coordinates, and new_of
// (new number per lattice vertex) for the host's boundary facets.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) renumber(u64 npos, u32* __restrict__ cells,
                                                                       const u32* __restrict__ first,
                                                                       const u32* __restrict__ scanned, u32 n0, u32 n1,
                                                                       u32 n2, double lo0, double lo1, double lo2,
                                                                       double hi0, double hi1, double hi2,
                                                                       double* __restrict__ coords, u32* __restrict__ new_of) {
    const u64 s1 = n0 + 1, s2 = (u64)(n0 + 1) * (n1 + 1);
    for (u64 k = global_thread(); k < npos; k += grid_threads()) {
        const u32 v = cells[k];
        const u32 f = first[v];
        const u32 id = scanned[f];
        if (f == (u32)k) {
            coords[3 * (u64)id] = lattice_coord(v % s1, n0, lo0, hi0);
            coords[3 * (u64)id + 1] = lattice_coord((v / s1) % (n1 + 1), n1, lo1, hi1);
            coords[3 * (u64)id + 2] = lattice_coord(v / s2, n2, lo2, hi2);
            new_of[v] = id;
        }
        cells[k] = id;
    }
}

// v[k] = value for k < n (first touch starts at "never").
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) fill_u32(u64 n, u32 value, u32* __restrict__ v) {
    for (u64 k = global_thread(); k < n; k += grid_threads()) v[k] = value;
}
