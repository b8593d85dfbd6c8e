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

// The table in shared memory where it fits (`shared_len` doubles, 0: read it from global memory)
// and where more than two threads of the block `need` it: a block of an interior line has only its
// two end nodes off the uniform-stencil path, and they read the table through L1 instead of every
// block copying it (a block-wide decision: every thread of the block must call this).
__device__ __forceinline__ const double* stage_table(const double* __restrict__ table, u64 shared_len, bool need = true) {
    extern __shared__ double smem[];
    if (shared_len == 0 || __syncthreads_count(need) <= 2) return table;
    const u32 tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z), nt = blockDim.x * blockDim.y * blockDim.z;
    for (u64 k = tid; k < shared_len; k += nt) smem[k] = table[k];
    __syncthreads();
    return smem;
}

// Calls f(c, t, row) for every cell t of every block (at corner c of the block) around node
// (i, j, k): row is the node's row of that cell's element matrix (table[material][t]).
template <class F>
__device__ __forceinline__ void around(const Lattice& L, u32 i, u32 j, u32 k, const unsigned char* __restrict__ material,
                                       const double* table, F f) {
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
            f(c, t, table + ((m * PER + t) * NV + li) * NV);
        }
    }
}

// The stencil of node v: w[k] = Σ over the cells around v of their element-matrix entries
// coupling v to its neighbour in slot k.
__device__ __forceinline__ void stencil(const Lattice& L, u32 i, u32 j, u32 k, const unsigned char* __restrict__ material,
                                        const double* table, double w[27]) {
#pragma unroll
    for (int s = 0; s < 27; ++s) w[s] = 0.0;
    around(L, i, j, k, material, table, [&](int c, int t, const double* row) {
#pragma unroll
        for (int jv = 0; jv < NV; ++jv) w[slot(c, TPL[t * NV + jv])] += row[jv];
    });
}

// The node of this thread: a block is a tile of blockDim.x × blockDim.y × blockDim.z nodes (a chunk
// of x-lines, several lines in y and z), so the neighbours its nodes share come from L1 rather
// than every line's block fetching its 3 × 3 neighbour lines through L2. blockIdx.x numbers the
// (y, z) tiles, blockIdx.y the x-chunks. False outside the lattice.
__device__ __forceinline__ bool node(const Lattice& L, u32& i, u32& j, u32& k, u64& v) {
    const u32 py = (u32)L.py, pz = (u32)L.nz + 1;
    const u32 tiles_y = (py + blockDim.y - 1) / blockDim.y;
    i = blockIdx.y * blockDim.x + threadIdx.x;
    j = (blockIdx.x % tiles_y) * blockDim.y + threadIdx.y;
    k = (blockIdx.x / tiles_y) * blockDim.z + threadIdx.z;
    v = i + L.px * ((u64)j + L.py * (u64)k);
    return i < L.px && j < py && k < pz;
}

// The uniform stencils of the first STENCIL_MATS materials, passed by value: kernel parameters live
// in the constant bank, so with compile-time indices the products take their coefficients as
// operands — no load instruction (the apply is bound by L1/LSU traffic, not DRAM).
#define STENCIL_MATS 4
struct Stencils {
    double w[STENCIL_MATS * 27];
};

// Σ_q w(q) x(neighbour q) over the coupled slots; xat(dx, dy, dz) gives x at the neighbour
// displaced by (dx, dy, dz) (from global memory, or from the marching kernels' shared planes).
template <class W, class X>
__device__ __forceinline__ double stencil_sum(W w, X xat) {
    double s = 0.0;
#pragma unroll
    for (int q = 0; q < 27; ++q) {
        if (!coupled(q)) continue;
        s += w(q) * xat(q % 3 - 1, (q / 3) % 3 - 1, q / 9 - 1);
    }
    return s;
}

// x at a displacement from node v of a lattice with strides sy, sz, from global memory.
struct GlobalX {
    const double* __restrict__ x;
    long long v, sy, sz;
    __device__ __forceinline__ double operator()(int dx, int dy, int dz) const { return x[v + dx + dy * sy + dz * sz]; }
};

// Stencil M of the parameters (compile-time indices: constant-bank operands).
template <int M>
struct ParamStencil {
    const Stencils& P;
    __device__ __forceinline__ double operator()(int q) const { return P.w[M * 27 + q]; }
};

// A stencil in memory (shared or global).
struct MemStencil {
    const double* st;
    __device__ __forceinline__ double operator()(int q) const { return st[q]; }
};

// The uniform stencil of material m (the first STENCIL_MATS from the parameters, the others from
// `st`: the table's stencils in memory) applied to xat.
template <class X>
__device__ __forceinline__ double uniform_sum(unsigned m, const Stencils& P, const double* st, X xat) {
    switch (m) {
    case 0: return stencil_sum(ParamStencil<0>{P}, xat);
    case 1: return stencil_sum(ParamStencil<1>{P}, xat);
    case 2: return stencil_sum(ParamStencil<2>{P}, xat);
    case 3: return stencil_sum(ParamStencil<3>{P}, xat);
    default: return stencil_sum(MemStencil{st + 27 * m}, xat);
    }
}

// x at node n, masked (M x, M = diag(mask)) when MASKED.
template <bool MASKED>
__device__ __forceinline__ double xm(const double* __restrict__ x, const double* __restrict__ mask, long long n) {
    return MASKED ? mask[n] * x[n] : x[n];
}

// Σ over the cells around node (i, j, k) of their rows of the element matrix times x at their
// vertices, accumulated directly (no stencil array: few registers, so the uniform path that most
// nodes take keeps the occupancy that hides its gathers). A cell that exists has all its vertices.
// xat(dx, dy, dz): x at the vertex displaced by (dx, dy, dz) from the node.
template <class X>
__device__ __forceinline__ double gather_at(const Lattice& L, u32 i, u32 j, u32 k, const unsigned char* __restrict__ material,
                                            const double* table, X xat) {
    double s = 0.0;
    around(L, i, j, k, material, table, [&](int c, int t, const double* row) {
#pragma unroll
        for (int jv = 0; jv < NV; ++jv) {
            const int cj = TPL[t * NV + jv];
            s += row[jv] * xat((cj & 1) - (c & 1), ((cj >> 1) & 1) - ((c >> 1) & 1), (cj >> 2) - (c >> 2));
        }
    });
    return s;
}

// gather_at with x (masked: M x) from global memory.
template <bool MASKED>
__device__ __forceinline__ double gather(const Lattice& L, u32 i, u32 j, u32 k, u64 v, const unsigned char* __restrict__ material,
                                         const double* table, const double* __restrict__ x, const double* __restrict__ mask) {
    const long long sy = (long long)L.px, sz = (long long)(L.px * L.py), vv = (long long)v;
    return gather_at(L, i, j, k, material, table, [&](int dx, int dy, int dz) { return xm<MASKED>(x, mask, vv + dx + dy * sy + dz * sz); });
}

// Threads per block of the apply kernels (tiles 32 × 4 × 2, marching 32 × 8).
#define GRID_THREADS 256

// Sum of v over the block of GRID_THREADS threads (tid: linear thread index), valid in thread 0.
__device__ __forceinline__ double grid_block_sum(double v, u32 tid) {
    __shared__ double warp_sums[GRID_THREADS / 32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((tid & 31) == 0) warp_sums[tid >> 5] = v;
    __syncthreads();
    v = tid < GRID_THREADS / 32 ? warp_sums[tid] : 0.0;
    if (tid < 32) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;
}

// The block's x·y into sums[block]; the last block to finish (counter, reset by it) sums all
// blocks' values in block order into *total: deterministic, and the PCG update reads one value
// instead of re-summing thousands of block sums in each of its blocks.
__device__ __forceinline__ void grid_dot_finish(double d, u32 tid, u32 block, u32 nblocks, double* __restrict__ sums,
                                                unsigned* __restrict__ counter, double* __restrict__ total) {
    __shared__ bool last;
    d = grid_block_sum(d, tid);
    if (tid == 0) {
        sums[block] = d;
        __threadfence();
        last = atomicAdd(counter, 1u) == nblocks - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    double acc = 0.0;
    for (u32 b = tid; b < nblocks; b += GRID_THREADS) acc += ((volatile const double*)sums)[b];
    acc = grid_block_sum(acc, tid);
    if (tid == 0) {
        *total = acc;
        *counter = 0u;
    }
}

// Where the DOT kernels put x·y: per-block sums, the arrival counter and the total.
struct DotOut {
    double* sums;
    unsigned* counter;
    double* total;
};

// y = A x, or y = M A M x + (I − M) x (the Dirichlet-masked operator in one pass) when MASKED.
// (A fused x·y here, as the marching kernel has, measured slower on the H100: BENCHMARKS.md.)
template <bool MASKED>
__device__ __forceinline__ void apply_impl(const Lattice& L, const unsigned char* __restrict__ material, const double* __restrict__ table,
                                           u64 shared_len, u64 stencil_at, const Stencils& P, const unsigned char* __restrict__ node_material,
                                           const double* __restrict__ x, double* __restrict__ y, const double* __restrict__ mask) {
    u32 i, j, k;
    u64 v;
    const bool valid = node(L, i, j, k, v);
    const unsigned m = valid ? node_material[v] : 0u;
    const double* tab = stage_table(table, shared_len, valid && m == 255u);
    double s = 0.0;
    if (valid) {
        if (m != 255u) {
            // Every cell around this interior node is of material m: its row is stencil m. Masked,
            // the codes (`node_material` of the masked operator) send every node on or next to a
            // Dirichlet node to the gather below, so here no mask is read.
            const long long sy = (long long)L.px, sz = (long long)(L.px * L.py), vv = (long long)v;
            s = uniform_sum(m, P, tab + stencil_at, GlobalX{x, vv, sy, sz});
        } else {
            s = gather<MASKED>(L, i, j, k, v, material, tab, x, mask);
            if (MASKED) {
                const double mv = mask[v];
                s = mv * s + (1.0 - mv) * x[v];
            }
        }
        y[v] = s;
    }
}

// y = A x.
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_apply(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 shared_len, u64 stencil_at,
           const Stencils P, const unsigned char* __restrict__ node_material, const double* __restrict__ x, double* __restrict__ y) {
    apply_impl<false>(L, material, table, shared_len, stencil_at, P, node_material, x, y, nullptr);
}

// y = M A M x + (I − M) x: the operator with Dirichlet rows and columns masked (mask: 1 free, 0 fixed).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_apply_masked(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 shared_len, u64 stencil_at,
                  const Stencils P, const unsigned char* __restrict__ node_material, const double* __restrict__ x, double* __restrict__ y,
                  const double* __restrict__ mask) {
    apply_impl<true>(L, material, table, shared_len, stencil_at, P, node_material, x, y, mask);
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

// ---- The z-marching apply (the default from 5·10⁶ nodes): a block owns a MARCH_X × MARCH_Y tile of (x, y) columns
// and marches up a chunk of `zk` planes; the three planes of x a node's stencil spans live in
// shared memory (with a one-node halo), each plane fetched once per block, so a uniform node's 15
// (or 27) neighbours are shared-memory reads instead of L1 gathers. Nodes off the uniform path
// (material interfaces, the boundary, next to Dirichlet nodes) take the cell gather from global
// memory as before. With DOT the block also sums x·y over its nodes (grid_dot_finish: the
// p·q of CG in the same pass: one vector pass less per iteration).
#define MARCH_X 32
#define MARCH_Y 8
#define MARCH_W (MARCH_X + 2)
#define MARCH_H (MARCH_Y + 2)

// The (up to 2) entries of a (MARCH_X + 2) × (MARCH_Y + 2) plane tile this thread loads: the
// offset within a plane of the lattice (−1: off the lattice) and the shared-memory index; computed
// once per block, so a plane costs a load and a store per entry and no index arithmetic.
#define MARCH_PER ((MARCH_W * MARCH_H + MARCH_X * MARCH_Y - 1) / (MARCH_X * MARCH_Y))
struct PlaneLoad {
    long long at[MARCH_PER];
};

__device__ __forceinline__ PlaneLoad plane_load(const Lattice& L, long long i0, long long j0, u32 tid) {
    PlaneLoad p;
#pragma unroll
    for (int r = 0; r < MARCH_PER; ++r) {
        const u32 e = tid + r * MARCH_X * MARCH_Y;
        const long long ii = i0 - 1 + (long long)(e % MARCH_W), jj = j0 - 1 + (long long)(e / MARCH_W);
        const bool in = e < MARCH_W * MARCH_H && ii >= 0 && ii < (long long)L.px && jj >= 0 && jj < (long long)L.py;
        p.at[r] = in ? ii + (long long)L.px * jj : -1;
    }
    return p;
}

// This thread's entries of plane k (zeros off the lattice), into registers.
__device__ __forceinline__ void plane_fetch(const PlaneLoad& p, const Lattice& L, const double* __restrict__ x, long long k, double v[MARCH_PER]) {
    const bool kin = k >= 0 && k <= (long long)L.nz;
    const long long base = k * (long long)(L.px * L.py);
#pragma unroll
    for (int r = 0; r < MARCH_PER; ++r) v[r] = (kin && p.at[r] >= 0) ? x[base + p.at[r]] : 0.0;
}

__device__ __forceinline__ void plane_store(double* __restrict__ dst, const double v[MARCH_PER], u32 tid) {
#pragma unroll
    for (int r = 0; r < MARCH_PER; ++r) {
        const u32 e = tid + r * MARCH_X * MARCH_Y;
        if (e < MARCH_W * MARCH_H) dst[e] = v[r];
    }
}

// x at a displacement from tile position e, from the three shared planes (below, this, above).
struct PlaneX {
    const double* lo;
    const double* mid;
    const double* hi;
    int e;
    __device__ __forceinline__ double operator()(int dx, int dy, int dz) const {
        const double* pl = dz < 0 ? lo : (dz == 0 ? mid : hi);
        return pl[e + dx + dy * MARCH_W];
    }
};

// What every marching kernel sets up first: its thread, its (x, y) column, its chunk of planes
// [k0, k1) and the plane-tile entries it loads (one place for the march and the fused PCG march).
struct MarchBlock {
    u32 tid, i, j, k0, k1, e;
    bool column;
    PlaneLoad pl;
};

__device__ __forceinline__ MarchBlock march_block(const Lattice& L, u32 zk) {
    MarchBlock b;
    b.tid = threadIdx.x + MARCH_X * threadIdx.y;
    const long long i0 = (long long)blockIdx.x * MARCH_X, j0 = (long long)blockIdx.y * MARCH_Y;
    b.i = (u32)i0 + threadIdx.x;
    b.j = (u32)j0 + threadIdx.y;
    b.column = b.i < L.px && b.j < L.py;
    b.k0 = blockIdx.z * zk;
    b.k1 = min(b.k0 + zk, (u32)L.nz + 1);
    b.e = (threadIdx.x + 1) + (threadIdx.y + 1) * MARCH_W;
    b.pl = plane_load(L, i0, j0, b.tid);
    return b;
}

// Shared-memory slot of plane k (k ≥ −1) in the marching apply's ring of four.
__device__ __forceinline__ u32 ring(long long k) {
    return (u32)(k + 1) & 3u;
}

// The march keeps four planes in a ring: while plane k is computed from the slots of k − 1, k,
// k + 1, plane k + 2 (fetched into registers one plane earlier) goes into the fourth slot, so one
// barrier per plane suffices (three slots need two: the store would overwrite a plane still read).
// The node codes of the next plane are prefetched with it. Codes from `march_codes` (grid.rs):
// besides the interior uniform stencils, a node on one side of the box whose cells share one
// material has that side's stencil (zero weight outside the lattice, whose halo entries are 0),
// so the boundary nodes that sit in every warp of the first and last x-tiles do not take the
// 24-cell gather (the warp waited for it: a third of the warps at 10⁷ nodes).
template <bool MASKED, bool DOT>
__device__ __forceinline__ void march_impl(const Lattice& L, const unsigned char* __restrict__ material, const double* __restrict__ table,
                                           u64 stencil_at, const Stencils& P, const unsigned char* __restrict__ codes,
                                           const double* __restrict__ x, double* __restrict__ y, const double* __restrict__ mask, u32 zk,
                                           DotOut out) {
    __shared__ double planes[4][MARCH_W * MARCH_H];
    const MarchBlock B = march_block(L, zk);
    const u64 plane = L.px * L.py, v0 = B.i + L.px * (u64)B.j;
    double next[MARCH_PER];
    for (long long k = (long long)B.k0 - 1; k <= (long long)B.k0 + 1; ++k) {
        plane_fetch(B.pl, L, x, k, next);
        plane_store(planes[ring(k)], next, B.tid);
    }
    if (B.k0 + 2 <= B.k1) plane_fetch(B.pl, L, x, (long long)B.k0 + 2, next);
    unsigned mnext = B.column && B.k0 < B.k1 ? codes[v0 + plane * B.k0] : 255u;
    double dot = 0.0;
    for (u32 k = B.k0; k < B.k1; ++k) {
        __syncthreads();
        // Plane k + 2 into the slot plane k − 2 had (read by the last iteration: done, barrier).
        if (k + 2 <= B.k1) plane_store(planes[ring(k + 2)], next, B.tid);
        if (k + 3 <= B.k1) plane_fetch(B.pl, L, x, (long long)k + 3, next);
        const unsigned m = mnext;
        if (B.column && k + 1 < B.k1) mnext = codes[v0 + plane * (k + 1)];
        if (B.column) {
            const u64 v = v0 + plane * k;
            const PlaneX px{planes[ring((long long)k - 1)], planes[ring(k)], planes[ring(k + 1)], (int)B.e};
            double s;
            if (m != 255u) {
                // Uniform node (masked: not on or next to a Dirichlet node, no mask read).
                s = uniform_sum(m, P, table + stencil_at, px);
            } else if (MASKED) {
                s = gather<true>(L, B.i, B.j, k, v, material, table, x, mask);
                const double mv = mask[v];
                s = mv * s + (1.0 - mv) * px(0, 0, 0);
            } else {
                s = gather_at(L, B.i, B.j, k, material, table, px);
            }
            y[v] = s;
            if (DOT) dot += px(0, 0, 0) * s;
        }
    }
    if (DOT) grid_dot_finish(dot, B.tid, blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), gridDim.x * gridDim.y * gridDim.z, out.sums, out.counter, out.total);
}

// y = A x (z-marching).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_march(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 stencil_at, const Stencils P,
           const unsigned char* __restrict__ codes, const double* __restrict__ x, double* __restrict__ y, u32 zk) {
    march_impl<false, false>(L, material, table, stencil_at, P, codes, x, y, nullptr, zk, DotOut{});
}

// y = M A M x + (I − M) x (z-marching; codes: the masked operator's node codes).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_march_masked(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 stencil_at, const Stencils P,
                  const unsigned char* __restrict__ codes, const double* __restrict__ x, double* __restrict__ y, const double* __restrict__ mask,
                  u32 zk) {
    march_impl<true, false>(L, material, table, stencil_at, P, codes, x, y, mask, zk, DotOut{});
}

// y = A x and x·y.
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_march_dot(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 stencil_at, const Stencils P,
               const unsigned char* __restrict__ codes, const double* __restrict__ x, double* __restrict__ y, u32 zk, double* __restrict__ sums, unsigned* __restrict__ counter,
               double* __restrict__ total) {
    march_impl<false, true>(L, material, table, stencil_at, P, codes, x, y, nullptr, zk, DotOut{sums, counter, total});
}

// y = M A M x + (I − M) x and x·y.
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_march_masked_dot(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 stencil_at,
                      const Stencils P, const unsigned char* __restrict__ codes, const double* __restrict__ x, double* __restrict__ y,
                      const double* __restrict__ mask, u32 zk, double* __restrict__ sums,
                      unsigned* __restrict__ counter, double* __restrict__ total) {
    march_impl<true, true>(L, material, table, stencil_at, P, codes, x, y, mask, zk, DotOut{sums, counter, total});
}

// ---- Jacobi-PCG with the marching apply (grid_cuda/pcg.rs; issue 12's fifth and seventh rounds). D⁻¹
// is read only where a node is off the uniform path: a node of code m ≠ 255 has the inverse
// diagonal invd[m] (checked bit for bit against the solver's D⁻¹ before the first iteration of a
// solve). Two loops (scalars in s as in vector.cu's pcg_update/pcg_direction: [ρ_even, ρ_odd, flag,
// ‖r‖² per slot…, α]); vector passes of 8 bytes per node:
//   ring (the default): grid_march_dot: q = A p, p·q                                    — 2;
//     grid_pcg_update: α = ρ/(p·q), r −= αq, r·D⁻¹r and r·r                          — 3;
//     grid_pcg_direction: x += αp, p = D⁻¹r + βp                                      — 5;
//     10 (the generic resident loop: 12), and a node-code byte in each kernel;
//   fused: grid_pcg_march: p = D⁻¹r + βp' (r, p' read, p written), x += α'p' (x read and
//     written), q = A p from the shared planes of p, p·q                               — 6;
//     grid_pcg_update                                                                 — 3;
//     9. p' (the previous direction) and p live in two buffers (a block reads p' in its halo
//     while the neighbouring block writes its p), x lags one update behind (grid_pcg_flush
//     brings it up to date when the solver reads it).

// Sums N values of every block into sums[N × nblocks]; the last block to arrive sums each in block
// order (deterministic) into the N values of total[], returned true in thread 0 of that block.
template <int N>
__device__ __forceinline__ bool grid_sums_finish(double (&d)[N], u32 tid, u32 block, u32 nblocks, double* __restrict__ sums,
                                                 unsigned* __restrict__ counter, double (&total)[N]) {
    __shared__ bool last;
#pragma unroll
    for (int c = 0; c < N; ++c) {
        const double b = grid_block_sum(d[c], tid);
        if (tid == 0) sums[c * nblocks + block] = b;
        __syncthreads();
    }
    if (tid == 0) {
        __threadfence();
        last = atomicAdd(counter, 1u) == nblocks - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
#pragma unroll
    for (int c = 0; c < N; ++c) {
        double acc = 0.0;
        for (u32 b = tid; b < nblocks; b += GRID_THREADS) acc += ((volatile const double*)sums)[c * nblocks + b];
        total[c] = grid_block_sum(acc, tid);
        __syncthreads();
    }
    if (tid == 0) *counter = 0u;
    return tid == 0;
}

// D⁻¹ at node n of code c.
__device__ __forceinline__ double inv_diag(unsigned c, const double* __restrict__ invd, const double* __restrict__ dinv, u64 n) {
    return c != 255u ? invd[c] : dinv[n];
}

// Where the fused PCG reads and writes: the CG vectors, D⁻¹ (per code and per node), the scalars.
struct PcgVectors {
    const double* r;
    const double* p_old;
    double* p;
    double* x;
    double* q;
    const double* dinv;
    const double* invd;
    double* s;
    u32 parity, first, alpha_at;
};

template <bool MASKED>
__device__ __forceinline__ void pcg_march_impl(const Lattice& L, const unsigned char* __restrict__ material, const double* __restrict__ table,
                                               u64 stencil_at, const Stencils& P, const unsigned char* __restrict__ codes,
                                               const double* __restrict__ mask, u32 zk, PcgVectors V, DotOut out) {
    // The ring of four planes of march_impl (one barrier per plane, plane k + 3 fetched while k is
    // computed), of p and, masked, of M p (the gather off the uniform path reads M p).
    __shared__ double planes[4][MARCH_W * MARCH_H];
    __shared__ double mplanes[MASKED ? 4 : 1][MASKED ? MARCH_W * MARCH_H : 1];
    const MarchBlock B = march_block(L, zk);
    const u32 tid = B.tid, i = B.i, j = B.j, k0 = B.k0, k1 = B.k1, e = B.e;
    const bool column = B.column;
    const PlaneLoad& pl = B.pl;
    const u64 plane = L.px * L.py, v0 = i + L.px * (u64)j;
    // Which of this thread's plane entries the block owns (the tile, not its halo).
    bool own[MARCH_PER];
#pragma unroll
    for (int r = 0; r < MARCH_PER; ++r) {
        const u32 en = tid + r * MARCH_X * MARCH_Y;
        const u32 ex = en % MARCH_W, ey = en / MARCH_W;
        own[r] = pl.at[r] >= 0 && ex >= 1 && ex <= MARCH_X && ey >= 1 && ey <= MARCH_Y;
    }
    const bool first = V.first != 0u;
    const double beta = first ? 0.0 : V.s[V.parity] / V.s[1 - V.parity];
    const double alpha = first ? 0.0 : V.s[V.alpha_at];
    // Plane k of p = D⁻¹r + βp' into registers (and M p), updating x and p where owned.
    auto fetch = [&](long long k, double v[MARCH_PER], double mv[MARCH_PER]) {
        const bool kin = k >= 0 && k <= (long long)L.nz;
        const bool kown = k >= (long long)k0 && k < (long long)k1;
        const long long base = k * (long long)plane;
#pragma unroll
        for (int r = 0; r < MARCH_PER; ++r) {
            v[r] = 0.0;
            mv[r] = 0.0;
            if (kin && pl.at[r] >= 0) {
                const u64 n = (u64)(base + pl.at[r]);
                const unsigned c = codes[n];
                const double po = first ? 0.0 : V.p_old[n];
                const double pn = inv_diag(c, V.invd, V.dinv, n) * V.r[n] + beta * po;
                if (kown && own[r]) {
                    if (!first) V.x[n] += alpha * po;
                    V.p[n] = pn;
                }
                v[r] = pn;
                // Masked codes: m ≠ 255 only on nodes neither fixed nor next to a fixed one.
                mv[r] = MASKED ? (c != 255u ? pn : mask[n] * pn) : pn;
            }
        }
    };
    auto store = [&](u32 slot, const double v[MARCH_PER], const double mv[MARCH_PER]) {
        plane_store(planes[slot], v, tid);
        if (MASKED) plane_store(mplanes[slot], mv, tid);
    };
    double next[MARCH_PER], mnext[MARCH_PER];
    for (long long k = (long long)k0 - 1; k <= (long long)k0 + 1; ++k) {
        fetch(k, next, mnext);
        store(ring(k), next, mnext);
    }
    if (k0 + 2 <= k1) fetch((long long)k0 + 2, next, mnext);
    unsigned cnext = column && k0 < k1 ? codes[v0 + plane * k0] : 255u;
    double dot = 0.0;
    for (u32 k = k0; k < k1; ++k) {
        __syncthreads();
        if (k + 2 <= k1) store(ring(k + 2), next, mnext);
        if (k + 3 <= k1) fetch((long long)k + 3, next, mnext);
        const unsigned m = cnext;
        if (column && k + 1 < k1) cnext = codes[v0 + plane * (k + 1)];
        if (column) {
            const u64 v = v0 + plane * k;
            const u32 lo = ring((long long)k - 1), mid = ring(k), hi = ring(k + 1);
            const double pv = planes[mid][e];
            double s;
            if (m != 255u) {
                s = uniform_sum(m, P, table + stencil_at, PlaneX{planes[lo], planes[mid], planes[hi], (int)e});
            } else {
                const PlaneX px = MASKED ? PlaneX{mplanes[lo], mplanes[mid], mplanes[hi], (int)e} : PlaneX{planes[lo], planes[mid], planes[hi], (int)e};
                s = gather_at(L, i, j, k, material, table, px);
                if (MASKED) {
                    const double mk = mask[v];
                    s = mk * s + (1.0 - mk) * pv;
                }
            }
            V.q[v] = s;
            dot += pv * s;
        }
    }
    grid_dot_finish(dot, tid, blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), gridDim.x * gridDim.y * gridDim.z, out.sums,
                    out.counter, out.total);
}

// The fused march's vector arguments, in kernel-parameter order.
#define PCG_ARGS const double* __restrict__ r, const double* __restrict__ p_old, double* __restrict__ p, double* __restrict__ x, \
    double* __restrict__ q, const double* __restrict__ dinv, const double* __restrict__ invd, double* __restrict__ s, u32 parity, u32 first, u32 alpha_at
#define PCG_VECTORS PcgVectors{r, p_old, p, x, q, dinv, invd, s, parity, first, alpha_at}

// p = D⁻¹r + βp', x += α'p', q = A p and p·q into *total (plain operator).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_pcg_march(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 stencil_at, const Stencils P,
               const unsigned char* __restrict__ codes, u32 zk, PCG_ARGS, double* __restrict__ sums, unsigned* __restrict__ counter,
               double* __restrict__ total) {
    pcg_march_impl<false>(L, material, table, stencil_at, P, codes, nullptr, zk, PCG_VECTORS, DotOut{sums, counter, total});
}

// The same for the masked operator M A M + (I − M).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_pcg_march_masked(Lattice L, const unsigned char* __restrict__ material, const double* __restrict__ table, u64 stencil_at, const Stencils P,
                      const unsigned char* __restrict__ codes, const double* __restrict__ mask, u32 zk, PCG_ARGS,
                      double* __restrict__ sums, unsigned* __restrict__ counter, double* __restrict__ total) {
    pcg_march_impl<true>(L, material, table, stencil_at, P, codes, mask, zk, PCG_VECTORS, DotOut{sums, counter, total});
}

// α = ρ/(p·q) (pq: the march's total), r −= αq, then ρ_new = r·D⁻¹r into the other parity and
// ‖r‖² into the batch slot (the last block); α kept for the next march's x update.
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_pcg_update(const unsigned char* __restrict__ codes, u64 n, const double* __restrict__ q, double* __restrict__ r, const double* __restrict__ dinv,
                const double* __restrict__ invd, const double* __restrict__ pq, double* __restrict__ s, u32 parity, u32 slot, u32 alpha_at,
                double* __restrict__ sums, unsigned* __restrict__ counter) {
    const double pqv = *pq, rho = s[parity];
    const double alpha = pqv > 0.0 ? rho / pqv : 0.0;
    double d[2] = {0.0, 0.0};
    for (u64 k = blockIdx.x * (u64)GRID_THREADS + threadIdx.x; k < n; k += (u64)gridDim.x * GRID_THREADS) {
        const double rk = r[k] - alpha * q[k];
        r[k] = rk;
        d[0] += rk * rk * inv_diag(codes[k], invd, dinv, k);
        d[1] += rk * rk;
    }
    double total[2];
    if (grid_sums_finish<2>(d, threadIdx.x, blockIdx.x, gridDim.x, sums, counter, total)) {
        s[alpha_at] = alpha;
        if (!(pqv > 0.0)) s[2] = 1.0;
        s[1 - parity] = total[0];
        s[3 + slot] = total[1];
        if (!(total[0] > 0.0)) s[2] = 2.0;
    }
}

// The ring loop's direction (grid_cuda::DeviceGrid's default PCG with the marching apply: march with
// p·q, grid_pcg_update, this): β = ρ_new/ρ from the update's totals, x += αp, p = D⁻¹r + βp with
// D⁻¹ per node code — 5 vector passes and a code byte (the generic pcg_direction: 6, D⁻¹ read).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_pcg_direction(const unsigned char* __restrict__ codes, u64 n, double* __restrict__ x, double* __restrict__ p, const double* __restrict__ r,
                   const double* __restrict__ dinv, const double* __restrict__ invd, const double* __restrict__ s, u32 parity, u32 alpha_at) {
    const double beta = s[1 - parity] / s[parity], alpha = s[alpha_at];
    for (u64 k = blockIdx.x * (u64)GRID_THREADS + threadIdx.x; k < n; k += (u64)gridDim.x * GRID_THREADS) {
        const double pk = p[k];
        x[k] += alpha * pk;
        p[k] = inv_diag(codes[k], invd, dinv, k) * r[k] + beta * pk;
    }
}

// x += α p (the update the march of the next iteration would have made).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_pcg_flush(u64 n, double* __restrict__ x, const double* __restrict__ p, const double* __restrict__ s, u32 alpha_at) {
    const double alpha = s[alpha_at];
    for (u64 k = blockIdx.x * (u64)GRID_THREADS + threadIdx.x; k < n; k += (u64)gridDim.x * GRID_THREADS) x[k] += alpha * p[k];
}

// flag[0] = 1 where a node of code c ≠ 255 has D⁻¹ other than invd[c] (bit for bit); idx: one node
// per code, whose D⁻¹ is copied to pick[] first (grid_pcg_pick).
extern "C" __global__ void __launch_bounds__(GRID_THREADS)
grid_pcg_check(const unsigned char* __restrict__ codes, u64 n, const double* __restrict__ dinv, const double* __restrict__ invd,
               unsigned* __restrict__ flag) {
    bool bad = false;
    for (u64 k = blockIdx.x * (u64)GRID_THREADS + threadIdx.x; k < n; k += (u64)gridDim.x * GRID_THREADS) {
        const unsigned c = codes[k];
        if (c != 255u && __double_as_longlong(dinv[k]) != __double_as_longlong(invd[c])) bad = true;
    }
    if (__syncthreads_or(bad) && threadIdx.x == 0) atomicOr(flag, 1u);
}

// invd[c] = dinv[idx[c]] for the `count` codes (idx[c] < 0: no node of that code, NaN).
extern "C" __global__ void grid_pcg_pick(const long long* __restrict__ idx, u32 count, const double* __restrict__ dinv, double* __restrict__ invd) {
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < count) invd[c] = idx[c] >= 0 ? dinv[idx[c]] : __longlong_as_double(0x7ff8000000000000LL);
}
