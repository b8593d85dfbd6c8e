// The `none` level on a uniform lattice (operator::level::none::grid): one thread per node. The
// lattice's cell template is compiled in (CORNER, TPL), so every loop over the ≤ 8 blocks around a
// node, their cells and the cells' vertices unrolls: the cells' rows of their element matrices
// are summed into the node's (≤ 27-point) stencil in registers, then x is read once per
// neighbour. A cell's matrix is table[material][template cell] (copied to shared memory once per
// block); its vertices are fixed offsets from the node: nothing per cell is read but its material.
// An interior node whose cells share one material (node_material[v] ≠ 255, computed once on the
// host) takes that material's precomputed stencil (`table + stencil_at`, 27 per material).
// Defines: PER cells per block (6 Kuhn tetrahedra or 1 hexahedron), NV vertices per cell,
// GRID_CORNER = {local vertex of block corner c in cell t, or −1; [8][PER]},
// GRID_TPL = {block corner of local vertex j of cell t; [PER][NV]}.
#if !defined(PER) || !defined(NV) || !defined(GRID_CORNER) || !defined(GRID_TPL)
#error "grid.cu needs -DPER -DNV -DGRID_CORNER -DGRID_TPL"
#endif

struct Lattice {
    u64 nx, ny, nz;   // blocks per axis
    u64 px, py;       // vertices per axis (x, y)
};

__device__ constexpr int CORNER[8 * PER] = GRID_CORNER;
__device__ constexpr int TPL[PER * NV] = GRID_TPL;

// Stencil slot (0..26) of the displacement from a node at corner c of a block to the block's corner cj.
__device__ constexpr int slot(int c, int cj) {
    return ((cj & 1) - (c & 1) + 1) + 3 * (((cj >> 1) & 1) - ((c >> 1) & 1) + 1) + 9 * ((cj >> 2) - (c >> 2) + 1);
}

// Whether some cell couples a node to stencil slot k.
__device__ constexpr bool coupled(int k) {
    for (int c = 0; c < 8; ++c)
        for (int t = 0; t < PER; ++t)
            if (CORNER[c * PER + t] >= 0)
                for (int j = 0; j < NV; ++j)
                    if (slot(c, TPL[t * NV + j]) == k) return true;
    return false;
}

// The table in shared memory where it fits (`shared_len` doubles, 0: read it from global memory).
__device__ __forceinline__ const double* stage_table(const double* __restrict__ table, u64 shared_len) {
    extern __shared__ double smem[];
    if (shared_len == 0) return table;
    for (u64 k = threadIdx.x; k < shared_len; k += blockDim.x) smem[k] = table[k];
    __syncthreads();
    return smem;
}

// The stencil of node v: w[k] = Σ over the cells around v of their element-matrix entries
// coupling v to its neighbour in slot k.
__device__ __forceinline__ void stencil(const Lattice& L, u32 i, u32 j, u32 k, const unsigned char* __restrict__ material,
                                        const double* table, double w[27]) {
#pragma unroll
    for (int s = 0; s < 27; ++s) w[s] = 0.0;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
        const u32 a = c & 1, b = (c >> 1) & 1, d = c >> 2;
        if (i < a || j < b || k < d || i - a >= L.nx || j - b >= L.ny || k - d >= L.nz) continue;
        const u64 block = (i - a) + L.nx * ((j - b) + L.ny * (u64)(k - d));
#pragma unroll
        for (int t = 0; t < PER; ++t) {
            const int li = CORNER[c * PER + t];
            if (li < 0) continue;
            const unsigned m = material[block * PER + t];
            const double* row = table + ((m * PER + t) * NV + li) * NV;
#pragma unroll
            for (int jv = 0; jv < NV; ++jv) w[slot(c, TPL[t * NV + jv])] += row[jv];
        }
    }
}

// The node of this thread: blocks run along lines of nodes in x (blockIdx.x: the line, (j, k);
// blockIdx.y: a chunk of the line), so no 64-bit division is needed. False past the line's end.
__device__ __forceinline__ bool node(const Lattice& L, u32& i, u32& j, u32& k, u64& v) {
    const u32 line = blockIdx.x, py = (u32)L.py;
    i = blockIdx.y * blockDim.x + threadIdx.x;
    j = line % py;
    k = line / py;
    v = i + L.px * (u64)line;
    return i < L.px;
}

// y = A x.
extern "C" __global__ void grid_apply(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table,
                                      u64 shared_len, u64 stencil_at, const unsigned char* __restrict__ node_material,
                                      const double* __restrict__ x, double* __restrict__ y) {
    const double* tab = stage_table(table, shared_len);
    u32 i, j, k;
    u64 v;
    if (!node(L, i, j, k, v)) return;
    const long long sy = (long long)L.px, sz = (long long)(L.px * L.py);
    const bool interior = i > 0 && j > 0 && k > 0 && i < L.nx && j < L.ny && k < L.nz;
    double s = 0.0;
    // Fast path: every cell around an interior node of one material m — its row is stencil m.
    const unsigned m = node_material[v];
    if (m != 255u) {
        const double* st = tab + stencil_at + 27 * m;
#pragma unroll
        for (int q = 0; q < 27; ++q) {
            if (!coupled(q)) continue;
            const int dx = q % 3 - 1, dy = (q / 3) % 3 - 1, dz = q / 9 - 1;
            s += st[q] * x[(long long)v + dx + dy * sy + dz * sz];
        }
        y[v] = s;
        return;
    }
    double w[27];
    stencil(L, i, j, k, material, tab, w);
#pragma unroll
    for (int q = 0; q < 27; ++q) {
        if (!coupled(q)) continue;
        const int dx = q % 3 - 1, dy = (q / 3) % 3 - 1, dz = q / 9 - 1;
        // At the boundary a neighbour outside the lattice has w = 0 and is not read.
        if (interior || ((i > 0 || dx >= 0) && (i < L.nx || dx <= 0) && (j > 0 || dy >= 0) && (j < L.ny || dy <= 0) &&
                         (k > 0 || dz >= 0) && (k < L.nz || dz <= 0)))
            s += w[q] * x[(long long)v + dx + dy * sy + dz * sz];
    }
    y[v] = s;
}

// The diagonal of A (stencil slot 13: no displacement).
extern "C" __global__ void grid_diagonal(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table,
                                         u64 shared_len, double* __restrict__ diag) {
    const double* tab = stage_table(table, shared_len);
    u32 i, j, k;
    u64 v;
    if (!node(L, i, j, k, v)) return;
    double w[27];
    stencil(L, i, j, k, material, tab, w);
    diag[v] = w[13];
}
