// Multifrontal factorization and solves, one launch per tree level (see solver/multifrontal and
// solver/multifrontal/cuda.rs). Fronts are m×m column-major in `storage` at front_off[v]; a node
// eliminates its first e rows/columns with partial pivoting among those rows; the Schur block
// (rows/columns e..m) stays in place for the parent. pinv[pinv_off[v] + i] is the pivot position of
// eliminated row i. Right-hand sides: b and x are n×nrhs column-major; solve slots are row-major
// (row i of a slot at slot[i·nrhs + c]).
//
// Small fronts (m ≤ MF_BLOCK_MAX) are factorized in shared memory by a group of threads per node:
// a warp (several nodes per block) or a whole block. Their solves run one thread per
// (node, right-hand side). Large fronts are assembled here and factorized by cuSOLVER/cuBLAS.

#define MF_WARP_MAX 32
#define MF_BLOCK_MAX 160

struct Tree {
    const u32* m;
    const u32* e;
    const u32* child_ptr;
    const u32* child_idx;
    const u64* front_off;
    const u64* map_off;
    const u32* maps;
    const u64* pinv_off;
    const u64* dofs_off;
    const u32* dofs;
    const unsigned char* active;  // 0: inactive; else where its contribution rows live: MF_IN_LEVEL, MF_IN_LEAF_BUF
    const u64* slot;
    u32* perm;  // front row at each pivot position (written by the factorization, read by fused solves)
    u32 nelem;
};
#define MF_IN_LEVEL 1
#define MF_IN_LEAF_BUF 2

// The layout of a solve's b and x: column-major n × nrhs (column c at c·n, the default), or
// row-major (row d at d·nrhs: CudaMultifrontal::solve_many_rows) where the host passes `n` with
// MF_ROW_MAJOR set. The kernels that honour it (the level-by-level steps, the large fronts' slots,
// the separator-row kernels' pass 0) read the flag; the host runs no other kernel on row-major data.
#define MF_ROW_MAJOR (1ull << 63)
__device__ __forceinline__ bool mf_rows(u64 n) { return (n & MF_ROW_MAJOR) != 0; }
__device__ __forceinline__ u64 mf_at(u64 n, u32 nrhs, u64 c, u64 d) { return mf_rows(n) ? d * nrhs + c : c * n + d; }

// Synchronization of a group: a warp or the whole block.
struct WarpGroup {
    __device__ static void sync() { __syncwarp(); }
    __device__ static int size() { return 32; }
    __device__ static int lane() { return threadIdx.x & 31; }
    __device__ static int index() { return threadIdx.x >> 5; }
};
struct BlockGroup {
    __device__ static void sync() { __syncthreads(); }
    __device__ static int size() { return blockDim.x; }
    __device__ static int lane() { return threadIdx.x; }
    __device__ static int index() { return 0; }
};

// Larger |value| wins; ties go to the smaller row (the CPU's choice).
__device__ __forceinline__ void better(double& v, int& i, double v2, int i2) {
    if (v2 > v || (v2 == v && i2 < i)) { v = v2; i = i2; }
}
__device__ __forceinline__ void warp_argmax(double& v, int& i) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const double v2 = __shfl_xor_sync(0xffffffffu, v, off);
        const int i2 = __shfl_xor_sync(0xffffffffu, i, off);
        better(v, i, v2, i2);
    }
}
// Row of the largest |F[i + k·m]| for k ≤ i < e, known to every thread of the group.
template <class G> __device__ int group_argmax(const double* F, int m, int k, int e, double* red_v, int* red_i) {
    double v = -1.0;
    int idx = k;
    for (int i = k + G::lane(); i < e; i += G::size()) better(v, idx, fabs(F[i + k * m]), i);
    warp_argmax(v, idx);
    if (G::size() == 32) return idx;
    const int warps = G::size() / 32;
    if ((threadIdx.x & 31) == 0) { red_v[threadIdx.x >> 5] = v; red_i[threadIdx.x >> 5] = idx; }
    __syncthreads();
    v = red_v[0];
    idx = red_i[0];
    for (int w = 1; w < warps; ++w) better(v, idx, red_v[w], red_i[w]);
    __syncthreads();
    return idx;
}

// Factorizes node v in the shared buffer F (m×m) with perm (e ints): assemble (a leaf copies its
// front, an internal node adds its children's Schur blocks), eliminate, write back.
template <class G>
__device__ void factor_node(const Tree& t, u32 v, double* __restrict__ storage, u32* __restrict__ pinv, u64* status,
                            double* F, int* perm, double* red_v, int* red_i) {
    const int m = t.m[v], e = t.e[v];
    const int lane = G::lane(), gs = G::size();
    double* Fg = storage + t.front_off[v];
    const u32 c0 = t.child_ptr[v], c1 = t.child_ptr[v + 1];
    if (c0 == c1) {
        for (int idx = lane; idx < m * m; idx += gs) F[idx] = Fg[idx];
    } else {
        for (int idx = lane; idx < m * m; idx += gs) F[idx] = 0.0;
        G::sync();
        for (u32 ci = c0; ci < c1; ++ci) {
            const u32 c = t.child_idx[ci];
            const int mc = t.m[c], ec = t.e[c], sc = mc - ec;
            const double* Fc = storage + t.front_off[c];
            const u32* map = t.maps + t.map_off[c];
            for (int idx = lane; idx < sc * sc; idx += gs) {
                const int a = idx % sc, b = idx / sc;
                F[map[a] + map[b] * m] += Fc[(ec + a) + (u64)(ec + b) * mc];
            }
            G::sync();
        }
    }
    for (int i = lane; i < e; i += gs) perm[i] = i;
    G::sync();
    for (int k = 0; k < e; ++k) {
        const int piv = group_argmax<G>(F, m, k, e, red_v, red_i);
        const double pv = F[piv + k * m];
        if (pv == 0.0 || !isfinite(pv)) {
            if (lane == 0) atomicMin(status, ((u64)v << 32) | (u64)k);
            return;
        }
        if (piv != k) {
            for (int j = lane; j < m; j += gs) {
                const double tmp = F[k + j * m];
                F[k + j * m] = F[piv + j * m];
                F[piv + j * m] = tmp;
            }
            if (lane == 0) {
                const int tp = perm[k];
                perm[k] = perm[piv];
                perm[piv] = tp;
            }
        }
        G::sync();
        const double inv = 1.0 / pv;
        for (int i = k + 1 + lane; i < m; i += gs) F[i + k * m] *= inv;
        G::sync();
        const int rest = m - k - 1;
        for (int idx = lane; idx < rest * rest; idx += gs) {
            const int i = k + 1 + idx % rest, j = k + 1 + idx / rest;
            F[i + j * m] = fma(-F[i + k * m], F[k + j * m], F[i + j * m]);
        }
        G::sync();
    }
    for (int idx = lane; idx < m * m; idx += gs) Fg[idx] = F[idx];
    u32* pv_out = pinv + t.pinv_off[v];
    u32* perm_out = t.perm + t.pinv_off[v];
    for (int i = lane; i < e; i += gs) {
        pv_out[perm[i]] = i;
        perm_out[i] = perm[i];
    }
}

// Shared memory of one group: F (mmax² doubles), then perm (mmax ints, padded to doubles).
__device__ __forceinline__ u64 group_doubles(int mmax) { return (u64)mmax * mmax + (mmax + 1) / 2; }

// One warp per node, `blockDim.x / 32` nodes per block.
extern "C" __global__ void mf_factor_warp(Tree t, const u32* __restrict__ list, u32 count, int mmax,
                                          double* __restrict__ storage, u32* __restrict__ pinv, u64* status) {
    extern __shared__ double smem[];
    const u32 node = blockIdx.x * (blockDim.x / 32) + WarpGroup::index();
    if (node >= count) return;
    double* F = smem + WarpGroup::index() * group_doubles(mmax);
    int* perm = reinterpret_cast<int*>(F + (u64)mmax * mmax);
    factor_node<WarpGroup>(t, list[node], storage, pinv, status, F, perm, nullptr, nullptr);
}

// One block per node (fronts of more than 32 rows).
extern "C" __global__ void mf_factor_block(Tree t, const u32* __restrict__ list, u32 count, int mmax,
                                           double* __restrict__ storage, u32* __restrict__ pinv, u64* status) {
    extern __shared__ double smem[];
    __shared__ double red_v[32];
    __shared__ int red_i[32];
    if (blockIdx.x >= count) return;
    double* F = smem;
    int* perm = reinterpret_cast<int*>(F + (u64)mmax * mmax);
    factor_node<BlockGroup>(t, list[blockIdx.x], storage, pinv, status, F, perm, red_v, red_i);
}

// Large fronts, assembled in global memory: zero them (grid.y = node), then add the `which`-th
// child of each (one child per launch, so no two threads add to one entry).
extern "C" __global__ void mf_zero_fronts(Tree t, const u32* __restrict__ list, double* __restrict__ storage) {
    const u32 v = list[blockIdx.y];
    const u64 mm = (u64)t.m[v] * t.m[v];
    double* F = storage + t.front_off[v];
    for (u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x; idx < mm; idx += (u64)gridDim.x * blockDim.x) F[idx] = 0.0;
}
extern "C" __global__ void mf_extend_add(Tree t, const u32* __restrict__ list, u32 which, double* __restrict__ storage) {
    const u32 v = list[blockIdx.y];
    if (t.child_ptr[v] + which >= t.child_ptr[v + 1]) return;
    const u32 c = t.child_idx[t.child_ptr[v] + which];
    const u64 m = t.m[v], mc = t.m[c], ec = t.e[c], sc = mc - ec;
    double* F = storage + t.front_off[v];
    const double* Fc = storage + t.front_off[c];
    const u32* map = t.maps + t.map_off[c];
    for (u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x; idx < sc * sc; idx += (u64)gridDim.x * blockDim.x) {
        const u64 a = idx % sc, b = idx / sc;
        F[map[a] + map[b] * m] += Fc[(ec + a) + (ec + b) * mc];
    }
}

// Forward step of one (node, right-hand side): see CpuMultifrontal::forward_node.
template <int MMAX>
__device__ void forward_small(const Tree& t, u32 v, u32 c, u32 nrhs, u64 n, const double* __restrict__ storage,
                              const u32* __restrict__ pinv, const double* __restrict__ b, double* __restrict__ x,
                              double* leaf_buf, const double* prev, double* cur) {
    const int m = t.m[v], e = t.e[v];
    const u32* dofs = t.dofs + t.dofs_off[v];
    const u32* pv = pinv + t.pinv_off[v];
    double r[MMAX];
    for (int i = 0; i < m; ++i) r[i] = 0.0;
    for (int i = 0; i < e; ++i) r[pv[i]] = b[mf_at(n, nrhs, c, dofs[i])];
    for (u32 ci = t.child_ptr[v]; ci < t.child_ptr[v + 1]; ++ci) {
        const u32 ch = t.child_idx[ci];
        if (!t.active[ch]) continue;
        const int ec = t.e[ch], sc = t.m[ch] - ec;
        const double* src = (t.active[ch] == MF_IN_LEAF_BUF ? leaf_buf : prev) + (t.slot[ch] + ec) * nrhs + c;
        const u32* map = t.maps + t.map_off[ch];
        for (int a = 0; a < sc; ++a) {
            const int q = map[a];
            r[q < e ? (int)pv[q] : q] += src[(u64)a * nrhs];
        }
    }
    const double* F = storage + t.front_off[v];
    for (int k = 0; k < e; ++k) {
        const double yk = r[k];
        for (int i = k + 1; i < m; ++i) r[i] = fma(-F[i + k * m], yk, r[i]);
    }
    for (int i = 0; i < e; ++i) x[mf_at(n, nrhs, c, dofs[i])] = r[i];
    double* out = (t.active[v] == MF_IN_LEAF_BUF ? leaf_buf : cur) + t.slot[v] * nrhs + c;
    for (int i = e; i < m; ++i) out[(u64)i * nrhs] = r[i];
}

// Backward step of one (node, right-hand side): see CpuMultifrontal::backward_node.
template <int MMAX>
__device__ void backward_small(const Tree& t, u32 v, u32 c, u32 nrhs, u64 n, const double* __restrict__ storage, double* __restrict__ x) {
    const int m = t.m[v], e = t.e[v];
    const u32* dofs = t.dofs + t.dofs_off[v];
    double r[MMAX];
    for (int i = 0; i < m; ++i) r[i] = x[mf_at(n, nrhs, c, dofs[i])];
    const double* F = storage + t.front_off[v];
    for (int l = e; l < m; ++l) {
        const double xl = r[l];
        for (int k = 0; k < e; ++k) r[k] = fma(-F[k + l * m], xl, r[k]);
    }
    for (int k = e - 1; k >= 0; --k) {
        const double xk = r[k] / F[k + k * m];
        r[k] = xk;
        for (int i = 0; i < k; ++i) r[i] = fma(-F[i + k * m], xk, r[i]);
    }
    for (int k = 0; k < e; ++k) x[mf_at(n, nrhs, c, dofs[k])] = r[k];
}

#define MF_SOLVE_VARIANT(MMAX)                                                                                   \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) mf_forward_##MMAX(                               \
        Tree t, const u32* __restrict__ list, u32 count, u32 nrhs, u64 n, const double* __restrict__ storage,     \
        const u32* __restrict__ pinv, const double* __restrict__ b, double* __restrict__ x,                       \
        double* leaf_buf, const double* prev, double* cur) {                                                     \
        const u64 tid = global_thread();                                                                          \
        if (tid >= (u64)count * nrhs) return;                                                                     \
        forward_small<MMAX>(t, list[tid / nrhs], (u32)(tid % nrhs), nrhs, n, storage, pinv, b, x, leaf_buf, prev, \
                            cur);                                                                                 \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) mf_backward_##MMAX(                              \
        Tree t, const u32* __restrict__ list, u32 count, u32 nrhs, u64 n, const double* __restrict__ storage,     \
        double* __restrict__ x) {                                                                                 \
        const u64 tid = global_thread();                                                                          \
        if (tid >= (u64)count * nrhs) return;                                                                     \
        backward_small<MMAX>(t, list[tid / nrhs], (u32)(tid % nrhs), nrhs, n, storage, x);                        \
    }
MF_SOLVE_VARIANT(32)
MF_SOLVE_VARIANT(160)

// Large fronts' right-hand sides (grid.y = node, threads over row·nrhs + c of its slot).
// Forward start: the slot gets b at its eliminated rows (pivoted) and zero elsewhere.
extern "C" __global__ void mf_rhs_start(Tree t, const u32* __restrict__ list, u32 nrhs, u64 n, const u32* __restrict__ pinv,
                                        const double* __restrict__ b, double* __restrict__ cur) {
    const u32 v = list[blockIdx.y];
    const u64 m = t.m[v], e = t.e[v];
    const u32* dofs = t.dofs + t.dofs_off[v];
    const u32* pv = pinv + t.pinv_off[v];
    double* out = cur + t.slot[v] * nrhs;
    for (u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x; idx < m * nrhs; idx += (u64)gridDim.x * blockDim.x) {
        const u64 i = idx / nrhs, c = idx % nrhs;
        if (i < e) out[(u64)pv[i] * nrhs + c] = b[mf_at(n, nrhs, c, dofs[i])];
        else out[idx] = 0.0;
    }
}
// Forward: add the `which`-th child's contribution rows.
extern "C" __global__ void mf_rhs_extend_add(Tree t, const u32* __restrict__ list, u32 which, u32 nrhs, const u32* __restrict__ pinv,
                                             const double* __restrict__ leaf_buf, const double* __restrict__ prev,
                                             double* __restrict__ cur) {
    const u32 v = list[blockIdx.y];
    if (t.child_ptr[v] + which >= t.child_ptr[v + 1]) return;
    const u32 ch = t.child_idx[t.child_ptr[v] + which];
    if (!t.active[ch]) return;
    const u64 e = t.e[v], ec = t.e[ch], sc = t.m[ch] - ec;
    const u32* pv = pinv + t.pinv_off[v];
    const u32* map = t.maps + t.map_off[ch];
    const double* src = (t.active[ch] == MF_IN_LEAF_BUF ? leaf_buf : prev) + (t.slot[ch] + ec) * nrhs;
    double* out = cur + t.slot[v] * nrhs;
    for (u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x; idx < sc * nrhs; idx += (u64)gridDim.x * blockDim.x) {
        const u64 a = idx / nrhs, c = idx % nrhs;
        const u64 q = map[a];
        out[(q < e ? (u64)pv[q] : q) * nrhs + c] += src[idx];
    }
}
// Copy between a large node's slot and x: rows 0..rows of the slot (to_x) or from x (all m rows).
extern "C" __global__ void mf_rhs_x(Tree t, const u32* __restrict__ list, u32 nrhs, u64 n, int to_x,
                                    double* __restrict__ x, double* __restrict__ slots) {
    const u32 v = list[blockIdx.y];
    const u64 rows = to_x ? t.e[v] : t.m[v];
    const u32* dofs = t.dofs + t.dofs_off[v];
    double* s = slots + t.slot[v] * nrhs;
    for (u64 idx = (u64)blockIdx.x * blockDim.x + threadIdx.x; idx < rows * nrhs; idx += (u64)gridDim.x * blockDim.x) {
        const u64 i = idx / nrhs, c = idx % nrhs;
        if (to_x) x[mf_at(n, nrhs, c, dofs[i])] = s[idx];
        else s[idx] = x[mf_at(n, nrhs, c, dofs[i])];
    }
}

// ---- Fused subtrees (solver/multifrontal/subtrees.rs): many right-hand sides ----
// One block per subtree of a pass, NC right-hand sides per thread: a chunk of blockDim.x·NC columns.
// The subtree's fronts, local rows and node sizes are staged in shared memory once; per chunk, w
// (local rows × columns, padded) gets b at the eliminated rows and, in the backward kernel, x at the
// root's Schur rows; then every thread sweeps its NC columns through the subtree's nodes in shared
// memory (each front entry loaded once for the NC columns). The forward kernel hands the root's Schur rows to the contribution buffer; the backward
// kernel recomputes the forward sweep (reading b again instead of storing y) and writes x.
#define MF_BATCH 8
struct Pass {
    const u32* sub_ptr;
    const u32* nodes;
    const u32* f_off;
    const u32* l_off;
    const u32* p_off;
    const u32* loc;
    const u32* loc_ptr;
    const u32* row_ptr;
    const u32* row_dof;
    const u32* elim;
    const u32* ext_ptr;
    const u32* ext_row;
    const u64* ext_src;
    u32 front_entries;  // shared-memory capacities (maxima over the pass's subtrees)
    u32 rows;
    u32 loc_entries;
    u32 piv_entries;
    u32 nodes_max;
};

// Forward step of one node for NC columns: w holds the columns at local rows (row stride ld,
// column u of this thread at w + u·T); rows from `keep` on are not updated (the backward kernel's
// recomputation: they hold x). Each front entry is loaded from shared memory once and applied to
// the NC columns (independent chains); with e a compile-time constant (see sub_forward_any) the
// loops over k carry no predicates.
template <int EMAX, int NC>
__device__ __forceinline__ void sub_forward_node(const double* F, const u32* loc, const u32* lp, int m, int e, u32 keep,
                                                 double* w, int ld, int T) {
    double r[EMAX][NC];
#pragma unroll
    for (int k = 0; k < EMAX; ++k) {
#pragma unroll
        for (int u = 0; u < NC; ++u) r[k][u] = k < e ? w[lp[k] * ld + u * T] : 0.0;
    }
#pragma unroll
    for (int k = 0; k < EMAX; ++k) {
        if (k < e) {
#pragma unroll
            for (int i = k + 1; i < EMAX; ++i) {
                if (i < e) {
                    const double f = F[i + k * m];
#pragma unroll
                    for (int u = 0; u < NC; ++u) r[i][u] = fma(-f, r[k][u], r[i][u]);
                }
            }
        }
    }
    // Schur rows RB at a time: the rows are distinct, but the compiler cannot know it, so the loads
    // of the next rows are issued explicitly before the stores (RB·NC independent chains in flight).
    constexpr int RB = NC >= 4 ? 1 : 4 / NC;
    int i = e;
    for (; i + RB <= m; i += RB) {
        u32 q[RB];
        double acc[RB][NC];
#pragma unroll
        for (int a = 0; a < RB; ++a) {
            q[a] = loc[i + a];
#pragma unroll
            for (int u = 0; u < NC; ++u) acc[a][u] = w[q[a] * ld + u * T];
        }
#pragma unroll
        for (int k = 0; k < EMAX; ++k) {
            if (k < e) {
#pragma unroll
                for (int a = 0; a < RB; ++a) {
                    const double f = F[i + a + k * m];
#pragma unroll
                    for (int u = 0; u < NC; ++u) acc[a][u] = fma(-f, r[k][u], acc[a][u]);
                }
            }
        }
#pragma unroll
        for (int a = 0; a < RB; ++a)
            if (q[a] < keep) {
#pragma unroll
                for (int u = 0; u < NC; ++u) w[q[a] * ld + u * T] = acc[a][u];
            }
    }
    for (; i < m; ++i) {
        const u32 q = loc[i];
        double acc[NC];
#pragma unroll
        for (int u = 0; u < NC; ++u) acc[u] = w[q * ld + u * T];
#pragma unroll
        for (int k = 0; k < EMAX; ++k) {
            if (k < e) {
                const double f = F[i + k * m];
#pragma unroll
                for (int u = 0; u < NC; ++u) acc[u] = fma(-f, r[k][u], acc[u]);
            }
        }
        if (q < keep) {
#pragma unroll
            for (int u = 0; u < NC; ++u) w[q * ld + u * T] = acc[u];
        }
    }
#pragma unroll
    for (int k = 0; k < EMAX; ++k)
        if (k < e) {
#pragma unroll
            for (int u = 0; u < NC; ++u) w[loc[k] * ld + u * T] = r[k][u];
        }
}

// Backward step of one node for NC columns: x at its Schur rows is final, y at its eliminated rows.
template <int EMAX, int NC>
__device__ __forceinline__ void sub_backward_node(const double* F, const u32* loc, int m, int e, double* w, int ld, int T) {
    double r[EMAX][NC];
#pragma unroll
    for (int k = 0; k < EMAX; ++k) {
#pragma unroll
        for (int u = 0; u < NC; ++u) r[k][u] = k < e ? w[loc[k] * ld + u * T] : 0.0;
    }
#pragma unroll 4
    for (int l = e; l < m; ++l) {
        const u32 q = loc[l];
        double xl[NC];
#pragma unroll
        for (int u = 0; u < NC; ++u) xl[u] = w[q * ld + u * T];
#pragma unroll
        for (int k = 0; k < EMAX; ++k) {
            if (k < e) {
                const double f = F[k + l * m];
#pragma unroll
                for (int u = 0; u < NC; ++u) r[k][u] = fma(-f, xl[u], r[k][u]);
            }
        }
    }
#pragma unroll
    for (int k = EMAX - 1; k >= 0; --k) {
        if (k < e) {
            const double d = F[k + k * m];
#pragma unroll
            for (int u = 0; u < NC; ++u) r[k][u] = r[k][u] / d;
#pragma unroll
            for (int i = 0; i < k; ++i) {
                const double f = F[i + k * m];
#pragma unroll
                for (int u = 0; u < NC; ++u) r[i][u] = fma(-f, r[k][u], r[i][u]);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < EMAX; ++k)
        if (k < e) {
#pragma unroll
            for (int u = 0; u < NC; ++u) w[loc[k] * ld + u * T] = r[k][u];
        }
}

// A node's step with its eliminated block size e as a compile-time constant for e ≤ 8 (no
// predicated work for the rows a node does not eliminate), the generic EMAX code above it. A node
// that eliminates nothing changes nothing.
#define MF_EXACT_E(CALL) \
    switch (e) {         \
    case 0: break;       \
    case 1: CALL(1); break; \
    case 2: CALL(2); break; \
    case 3: CALL(3); break; \
    case 4: CALL(4); break; \
    case 5: CALL(5); break; \
    case 6: CALL(6); break; \
    case 7: CALL(7); break; \
    case 8: CALL(8); break; \
    default: if (EMAX > 8) CALL(EMAX); break; \
    }
template <int EMAX, int NC>
__device__ __forceinline__ void sub_forward_any(const double* F, const u32* loc, const u32* lp, int m, int e, u32 keep,
                                                double* w, int ld, int T) {
#define MF_FWD(E) sub_forward_node<E, NC>(F, loc, lp, m, (E) == EMAX ? e : (E), keep, w, ld, T)
    MF_EXACT_E(MF_FWD)
#undef MF_FWD
}
template <int EMAX, int NC>
__device__ __forceinline__ void sub_backward_any(const double* F, const u32* loc, int m, int e, double* w, int ld, int T) {
#define MF_BWD(E) sub_backward_node<E, NC>(F, loc, m, (E) == EMAX ? e : (E), w, ld, T)
    MF_EXACT_E(MF_BWD)
#undef MF_BWD
}

// Stages subtree j's node sizes (meta: m, e, f_off, l_off, p_off, pinv_off per node), fronts (sF),
// local rows (sL) and pivoted local rows (sP) in shared memory; the block must synchronize before
// reading sP. Global loads are batched (MF_BATCH per thread in flight) so that a block waits for
// memory a few times, not once per node or row.
__device__ void sub_stage(const Tree& t, const Pass& p, u32 j, const double* __restrict__ storage, double* sF, u64* sFoff,
                          u32* sL, u32* sP, u32* meta) {
    const u32 T = blockDim.x, tid = threadIdx.x;
    const u32 n0 = p.sub_ptr[j], nn = p.sub_ptr[j + 1] - n0;
    const u32 l0 = p.loc_ptr[j], nl = p.loc_ptr[j + 1] - l0;
    for (u32 i = tid; i < nn; i += T) {
        const u32 v = p.nodes[n0 + i];
        meta[6 * i] = t.m[v];
        meta[6 * i + 1] = t.e[v];
        meta[6 * i + 2] = p.f_off[n0 + i];
        meta[6 * i + 3] = p.l_off[n0 + i];
        meta[6 * i + 4] = p.p_off[n0 + i];
        meta[6 * i + 5] = (u32)t.pinv_off[v];
        sFoff[i] = t.front_off[v];
    }
    for (u32 idx = tid; idx < nl; idx += T) sL[idx] = p.loc[l0 + idx];
    __syncthreads();
    {
        const u32 last = nn - 1;
        const u32 total = meta[6 * last + 2] + meta[6 * last] * meta[6 * last];
        u32 cur = 0;
        for (u32 base = tid; base < total; base += MF_BATCH * T) {
            double val[MF_BATCH];
            u32 at[MF_BATCH];
#pragma unroll
            for (int u = 0; u < MF_BATCH; ++u) {
                const u32 idx = base + u * T;
                at[u] = idx;
                val[u] = 0.0;
                if (idx < total) {
                    while (cur < last && meta[6 * (cur + 1) + 2] <= idx) ++cur;
                    // Coherent (L2) loads: the fused factorization writes these fronts in the same kernel.
                    val[u] = __ldcg(storage + sFoff[cur] + (idx - meta[6 * cur + 2]));
                }
            }
#pragma unroll
            for (int u = 0; u < MF_BATCH; ++u)
                if (at[u] < total) sF[at[u]] = val[u];
        }
    }
    for (u32 i = tid; i < nn; i += T) {
        const u32* md = meta + 6 * i;
        const u32* pm = t.perm + md[5];
        for (u32 k = 0; k < md[1]; ++k) sP[md[4] + k] = sL[md[3] + pm[k]];
    }
}

// w (R local rows × C columns from c0, row stride ld) ← b at the eliminated rows (x at the root's
// Schur rows backward, else 0); columns past nrhs are zero. A warp reads a column's rows
// (consecutive dofs: coalesced), MF_BATCH columns in flight, no integer division; two rows per
// lane in one batch: a subtree's ≤ 64 local rows in one round trip.
template <bool BACKWARD>
__device__ __forceinline__ void sub_load_rows(const u32* rdof, u32 R, u32 ne, u32 c0, u32 C, u32 nrhs, u64 n,
                                              const double* __restrict__ b, const double* __restrict__ x, double* w, int ld) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (u32 cb = warp; cb < C; cb += MF_BATCH * nw) {
        for (u32 row0 = lane; row0 < R; row0 += 64) {
            double val[2][MF_BATCH];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const u32 row = row0 + 32 * h;
                const u32 d = row < R ? rdof[row] : 0;
#pragma unroll
                for (int u = 0; u < MF_BATCH; ++u) {
                    const u32 c = c0 + cb + u * nw;
                    val[h][u] = 0.0;
                    if (row < R && cb + u * nw < C && c < nrhs) {
                        if (row < ne) val[h][u] = b[(u64)c * n + d];
                        else if (BACKWARD) val[h][u] = x[(u64)c * n + d];
                    }
                }
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const u32 row = row0 + 32 * h;
#pragma unroll
                for (int u = 0; u < MF_BATCH; ++u)
                    if (row < R && cb + u * nw < C) w[row * ld + cb + u * nw] = val[h][u];
            }
        }
    }
}

// Adds the external children's contribution rows to this thread's columns (wc: its first column,
// its NC columns T apart), at local rows below `keep`. MF_BATCH entries at a time: their indices,
// then their contributions loaded before any is added (the adds to shared memory would otherwise
// order every next index load after them: two dependent round trips per entry), in entry order.
// With `ew` (not null) the contributions were staged in shared memory with the chunk's gather
// (entry k at ew[(k − x0)·ld], this thread's column at the same offset as in wc): only the rows
// are loaded here, no dependent global round trip per batch.
// CG: the contributions read through L2 only (__ldcg), where other blocks of the launch wrote them
// (mf_mapss*_chain): an L1 line of this SM could hold a stale copy.
template <int NC, bool CG = false>
__device__ __forceinline__ void sub_add_ext(const Pass& p, u32 x0, u32 x1, u32 keep, const double* __restrict__ buf, u32 nrhs,
                                            u32 col, u32 T, double* wc, int ld, const double* ew = nullptr) {
    for (u32 k0 = x0; k0 < x1; k0 += MF_BATCH) {
        u32 row[MF_BATCH], src[MF_BATCH];
#pragma unroll
        for (int u = 0; u < MF_BATCH; ++u) {
            row[u] = k0 + u < x1 ? p.ext_row[k0 + u] : keep;
            src[u] = row[u] < keep && ew == nullptr ? p.ext_src[k0 + u] : 0;
        }
        double v[MF_BATCH][NC];
#pragma unroll
        for (int u = 0; u < MF_BATCH; ++u)
#pragma unroll
            for (u32 c = 0; c < NC; ++c)
                v[u][c] = !(row[u] < keep && col + c * T < nrhs) ? 0.0
                          : ew != nullptr                        ? ew[(k0 + u - x0) * ld + c * T]
                          : CG                                   ? __ldcg(buf + (u64)src[u] * nrhs + col + c * T)
                                                                 : buf[(u64)src[u] * nrhs + col + c * T];
#pragma unroll
        for (int u = 0; u < MF_BATCH; ++u)
#pragma unroll
            for (u32 c = 0; c < NC; ++c)
                if (row[u] < keep && col + c * T < nrhs) wc[row[u] * ld + c * T] += v[u][c];
    }
}

// x at the eliminated rows ← w (a warp per column: coalesced).
__device__ __forceinline__ void sub_store_x(const u32* rdof, u32 ne, u32 c0, u32 C, u32 nrhs, u64 n, const double* w, int ld,
                                            double* __restrict__ x) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (u32 col = warp; col < C && c0 + col < nrhs; col += nw)
        for (u32 row = lane; row < ne; row += 32) x[(u64)(c0 + col) * n + rdof[row]] = w[row * ld + col];
}

template <int EMAX, int NC, bool BACKWARD>
__device__ void sub_sweep(const Tree& t, const Pass& p, u32 nrhs, u64 n, const double* __restrict__ storage,
                          const double* __restrict__ b, double* __restrict__ x, double* __restrict__ buf) {
    extern __shared__ double sub_smem[];
    const u32 j = blockIdx.x;
    // T threads, NC columns each: a chunk of C = T·NC columns; thread tid owns columns tid + u·T.
    const u32 T = blockDim.x, C = T * NC, tid = threadIdx.x;
    const int ld = (int)C + 1;
    double* sF = sub_smem;
    double* w = sub_smem + p.front_entries;
    u64* sFoff = reinterpret_cast<u64*>(w + (u64)p.rows * ld);  // per node: its front in storage
    u32* sL = reinterpret_cast<u32*>(sFoff + p.nodes_max);
    u32* sP = sL + p.loc_entries;
    u32* meta = sP + p.piv_entries;  // per node: m, e, f_off, l_off, p_off, pinv_off
    sub_stage(t, p, j, storage, sF, sFoff, sL, sP, meta);
    const u32 nn = p.sub_ptr[j + 1] - p.sub_ptr[j];
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j];
    const u32* rdof = p.row_dof + r0;
    const u32 x0 = p.ext_ptr[j], x1 = p.ext_ptr[j + 1];
    const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
    for (u32 c0 = 0; c0 < nrhs; c0 += C) {
        __syncthreads();
        sub_load_rows<BACKWARD>(rdof, R, ne, c0, C, nrhs, n, b, x, w, ld);
        __syncthreads();
        if (c0 + tid < nrhs) {
            double* wc = w + tid;
            const u32 keep = BACKWARD ? ne : R;  // backward: the root's Schur rows hold x
            sub_add_ext<NC>(p, x0, x1, keep, buf, nrhs, c0 + tid, T, wc, ld);
            for (u32 i = 0; i < nn; ++i) {
                const u32* md = meta + 6 * i;
                sub_forward_any<EMAX, NC>(sF + md[2], sL + md[3], sP + md[4], (int)md[0], (int)md[1], keep, wc, ld, (int)T);
            }
            if (BACKWARD) {
                for (u32 i = nn; i-- > 0;) {
                    const u32* md = meta + 6 * i;
                    sub_backward_any<EMAX, NC>(sF + md[2], sL + md[3], (int)md[0], (int)md[1], wc, ld, (int)T);
                }
            }
        }
        __syncthreads();
        if (!BACKWARD) {
            const u32 s = R - ne;
            const u64 out = t.slot[root] + t.e[root];
            for (u32 a = 0; a < s; ++a)
                for (u32 col = tid; col < C && c0 + col < nrhs; col += T) buf[(out + a) * nrhs + c0 + col] = w[(ne + a) * ld + col];
        } else {
            sub_store_x(rdof, ne, c0, C, nrhs, n, w, ld, x);
        }
    }
}

// Variants: eliminated blocks of at most EMAX rows, NC columns per thread.
#define MF_SUBTREE_VARIANT(EMAX, NC)                                                                                 \
    extern "C" __global__ void mf_sub_forward_##EMAX##_##NC(Tree t, Pass p, u32 nrhs, u64 n,                          \
                                                            const double* __restrict__ storage,                      \
                                                            const double* __restrict__ b, double* __restrict__ x,    \
                                                            double* __restrict__ buf) {                              \
        sub_sweep<EMAX, NC, false>(t, p, nrhs, n, storage, b, x, buf);                                                \
    }                                                                                                                 \
    extern "C" __global__ void mf_sub_backward_##EMAX##_##NC(Tree t, Pass p, u32 nrhs, u64 n,                         \
                                                             const double* __restrict__ storage,                     \
                                                             const double* __restrict__ b, double* __restrict__ x,   \
                                                             double* __restrict__ buf) {                             \
        sub_sweep<EMAX, NC, true>(t, p, nrhs, n, storage, b, x, buf);                                                 \
    }
MF_SUBTREE_VARIANT(8, 1)
MF_SUBTREE_VARIANT(8, 2)
MF_SUBTREE_VARIANT(32, 1)

// ---- Transfer maps of fused subtrees (solver/multifrontal/maps.rs): many right-hand sides ----
// A fused subtree's solve is linear in its local rows w (b at the eliminated rows plus the external
// contributions; x at the root's Schur rows backward): forward, the root's contribution rows are
// w_S + G·w_E; backward (forward recomputed), x_E = H·w_E + K·x_S. With these small dense maps
// computed once per factorization (by the sweeps above on unit columns), a solve of a pass is a
// gather, a dense product with independent accumulators per thread (no dependent chain through
// shared memory) and a scatter. Layout per subtree at map_off[j]: MT = [H K]ᵀ, R rows of ldm
// (ne rounded up to 16, zero-padded), then Gᵀ (ne rows of s).
#define MF_MAP_ROWS 16
__device__ __forceinline__ u32 maps_ldm(u32 ne) { return (ne + MF_MAP_ROWS - 1) / MF_MAP_ROWS * MF_MAP_ROWS; }

// One block per subtree, a thread per unit column (R of them). PART 0: both maps; 1: only Gᵀ (the
// forward map, ne columns: what a forward sweep needs); 2: only [H K]ᵀ (the backward map) — the two
// halves of an overlapped factor-and-solve, so that the forward sweep waits only for Gᵀ.
template <int EMAX, int PART = 0>
__device__ void maps_setup(const Tree& t, const Pass& p, const double* __restrict__ storage, const u64* __restrict__ map_off,
                           double* __restrict__ maps) {
    extern __shared__ double sub_smem[];
    const u32 j = blockIdx.x, T = blockDim.x, tid = threadIdx.x;
    const int ld = (int)T + 1;
    double* sF = sub_smem;
    double* w = sub_smem + p.front_entries;
    u64* sFoff = reinterpret_cast<u64*>(w + (u64)p.rows * ld);
    u32* sL = reinterpret_cast<u32*>(sFoff + p.nodes_max);
    u32* sP = sL + p.loc_entries;
    u32* meta = sP + p.piv_entries;
    sub_stage(t, p, j, storage, sF, sFoff, sL, sP, meta);
    __syncthreads();
    const u32 nn = p.sub_ptr[j + 1] - p.sub_ptr[j];
    const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    double* MT = maps + map_off[j];
    double* GT = MT + (u64)R * ldm;
    double* wc = w + tid;
    for (u32 c = tid; c < (PART == 1 ? ne : R); c += T) {
        for (u32 r = 0; r < R; ++r) wc[r * ld] = r == c ? 1.0 : 0.0;
        if (c < ne) {
            // G's column c: the forward sweep of a unit b at local row c. The Schur rows are never
            // pivots, so zeroing them afterwards leaves what the backward kernel's forward sweep
            // (Schur rows held at x = 0) computes. A unit Schur row needs no forward sweep: the
            // eliminated rows are zero.
            for (u32 i = 0; i < nn; ++i) {
                const u32* md = meta + 6 * i;
                sub_forward_any<EMAX, 1>(sF + md[2], sL + md[3], sP + md[4], (int)md[0], (int)md[1], R, wc, ld, (int)T);
            }
            for (u32 a = 0; a < s; ++a) {
                if (PART != 2) GT[(u64)c * s + a] = wc[(ne + a) * ld];
                wc[(ne + a) * ld] = 0.0;
            }
        }
        if (PART != 1) {
            // Column c of [H K]: the backward sweep.
            for (u32 i = nn; i-- > 0;) {
                const u32* md = meta + 6 * i;
                sub_backward_any<EMAX, 1>(sF + md[2], sL + md[3], (int)md[0], (int)md[1], wc, ld, (int)T);
            }
            for (u32 r = 0; r < ldm; ++r) MT[(u64)c * ldm + r] = r < ne ? wc[r * ld] : 0.0;
        }
    }
}

// The maps' products of one column (wc: its local rows, stride ld). Forward: the root's s
// contribution rows w_S + G·w_E to dst (row a at dst[a·nrhs]), 4 independent accumulators at a time:
// the groups of 4 rows from `first` on, every `step`-th (several threads per column share them).
__device__ __forceinline__ void maps_apply_forward(const double* sM, const double* wc, int ld, u32 ne, u32 s, double* __restrict__ dst,
                                                   u32 nrhs, u32 first = 0, u32 step = 1) {
    for (u32 a0 = 4 * first; a0 < s; a0 += 4 * step) {
        double acc[4];
#pragma unroll
        for (u32 u = 0; u < 4; ++u) acc[u] = a0 + u < s ? wc[(ne + a0 + u) * ld] : 0.0;
#pragma unroll 4
        for (u32 i = 0; i < ne; ++i) {
            const double wi = wc[i * ld];
#pragma unroll
            for (u32 u = 0; u < 4; ++u)
                if (a0 + u < s) acc[u] = fma(sM[i * s + a0 + u], wi, acc[u]);
        }
#pragma unroll
        for (u32 u = 0; u < 4; ++u)
            if (a0 + u < s) dst[(u64)(a0 + u) * nrhs] = acc[u];
    }
}

// Backward: acc (NB·16 rows of x_E) = [H K]·w over the R local rows, each map row (MT row k, ldm
// doubles, 16-byte aligned) read as broadcast 16-byte shared loads; zero where !mine.
template <int NB>
__device__ __forceinline__ void maps_apply_backward(const double* sM, const double* wc, int ld, u32 R, u32 ldm, bool mine,
                                                    double (&acc)[NB * MF_MAP_ROWS]) {
#pragma unroll
    for (int r = 0; r < NB * MF_MAP_ROWS; ++r) acc[r] = 0.0;
    if (!mine) return;
#pragma unroll 2
    for (u32 k = 0; k < R; ++k) {
        const double wk = wc[k * ld];
        const double2* mk = reinterpret_cast<const double2*>(sM + k * ldm);
#pragma unroll
        for (int blk = 0; blk < NB; ++blk) {
            if (blk * MF_MAP_ROWS < ldm) {
#pragma unroll
                for (int u = 0; u < MF_MAP_ROWS / 2; ++u) {
                    const double2 f = mk[blk * MF_MAP_ROWS / 2 + u];
                    acc[blk * MF_MAP_ROWS + 2 * u] = fma(f.x, wk, acc[blk * MF_MAP_ROWS + 2 * u]);
                    acc[blk * MF_MAP_ROWS + 2 * u + 1] = fma(f.y, wk, acc[blk * MF_MAP_ROWS + 2 * u + 1]);
                }
            }
        }
    }
}

// Asynchronous copies (cp.async, sm_80 on; older devices copy synchronously): the pipelined map
// kernels below and the tensor-core kernels issue a whole chunk's gather at once.
__device__ __forceinline__ void mf_cp8(double* dst, const double* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 8 : 0) : "memory");
#else
    *dst = valid ? *src : 0.0;
#endif
}
__device__ __forceinline__ void mf_cp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most one committed group (the most recent) is still in flight.
__device__ __forceinline__ void mf_cp_wait_all_but_one() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}

// Waits until every committed group has landed.
__device__ __forceinline__ void mf_cp_wait_all() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

// Hopper's bulk copy engine (cp.async.bulk, sm_90): one thread moves a whole line of global memory
// (16-byte aligned, a multiple of 16 bytes) into shared memory in one instruction, completing on an
// mbarrier that counts the bytes (each copy announces its bytes first, every thread of the block
// arrives once per chunk, all wait on the chunk's phase) — instead of an 8-byte cp.async per
// element. Older devices copy synchronously (the host chooses the bulk kernels on sm_90 only).
__device__ __forceinline__ u32 mf_smem_addr(const void* p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mf_bar_init(u64* bar, u32 count) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mf_smem_addr(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mf_bar_arrive(u64* bar) {
#if __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(mf_smem_addr(bar)) : "memory");
#endif
}
__device__ __forceinline__ void mf_bar_wait(u64* bar, u32 parity) {
#if __CUDA_ARCH__ >= 900
    u32 done = 0;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(mf_smem_addr(bar)), "r"(parity)
                     : "memory");
    } while (!done);
#endif
}
// Orders this thread's earlier shared-memory accesses before later bulk copies into it (the next
// chunk's lines overwrite what the last chunk read).
__device__ __forceinline__ void mf_fence_async() {
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mf_bulk(double* dst, const double* src, u32 bytes, u64* bar) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(mf_smem_addr(bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(mf_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(mf_smem_addr(bar))
                 : "memory");
#else
    for (u32 i = 0; i < bytes / 8; ++i) dst[i] = src[i];
#endif
}

// Issues item (j, c0)'s gather into w (R local rows × C columns, stride ld: b at the eliminated
// rows, x at the root's Schur rows backward, else zero; zero past nrhs; a warp per column, lanes
// over rows: coalesced) and, if `map` is not null, subtree j's map (cnt doubles) into it.
template <bool BACKWARD>
__device__ __forceinline__ void mapsp_issue(const Pass& p, u32 j, u32 c0, u32 C, u32 nrhs, u64 n, const double* __restrict__ b,
                                            const double* __restrict__ x, double* w, int ld, double* map, const double* msrc, u32 cnt) {
    const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
    if (map != nullptr)
        for (u32 i = tid; i < cnt; i += blockDim.x) mf_cp8(map + i, msrc + i, true);
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j];
    for (u32 row0 = 0; row0 < R; row0 += 32) {
        const u32 row = row0 + lane;
        if (row >= R) break;
        const u32 d = p.row_dof[r0 + row];
        const double* src = row < ne ? b : x;
        const bool rv = row < ne || BACKWARD;
        for (u32 col = warp; col < C; col += nw) {
            const bool v = rv && c0 + col < nrhs;
            mf_cp8(w + row * ld + col, v ? src + (u64)(c0 + col) * n + d : b, v);
        }
    }
}

// ---- The backward product on the FP64 tensor cores (`MapsKernel::Tensor`) ----
// x_E (ne × C) = [H K] (ne × R) · w (R × C) is a small GEMM per chunk; as 16·NB·R FMAs per column
// on the FP64 units with the map rows as shared broadcasts it issued ~10× the instructions of the
// forward product and kept the bottom backward pass at a third of the copy rate. Here each warp
// owns 32 columns of the chunk (4 tiles of 8) and the NB tiles of 16 rows: per 4 local rows it
// loads 4 B fragments from w and 2·NB A fragments from the map (staged with row stride
// ldm + MF_TC_PAD: the 4 rows of a fragment fall in distinct banks) and issues 4·NB m16n8k4.
#define MF_TC_PAD 4
// D (16 × 8) += A (16 × 4) · B (4 × 8); lane (g, t) = (lane/4, lane%4) holds a0 = A[g][t],
// a1 = A[g + 8][t], b = B[t][g], d[e] = D[g + 8(e/2)][2t + e%2]. Native m16n8k4 on Hopper, two
// m8n8k4 on sm_80/86/89, shuffles before.
__device__ __forceinline__ void mf_mma16(double d[4], double a0, double a1, double b) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
#elif __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d[0]), "+d"(d[1]) : "d"(a0), "d"(b));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d[2]), "+d"(d[3]) : "d"(a1), "d"(b));
#else
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const double x0 = __shfl_sync(0xffffffffu, a0, 4 * g + k), x1 = __shfl_sync(0xffffffffu, a1, 4 * g + k);
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const double y = __shfl_sync(0xffffffffu, b, 4 * (2 * t + i) + k);
            d[i] = fma(x0, y, d[i]);
            d[2 + i] = fma(x1, y, d[2 + i]);
        }
    }
#endif
}

// The chunk's x_E into w's eliminated rows (C columns, a multiple of 32; every warp of the block
// calls it). The chunk's C / 16 halves of 16 columns are shared out over the warps in consecutive
// runs: with a warp per 32 columns each warp takes its own 32 (the columns its threads completed),
// with more warps each fewer. sM: [H K]ᵀ staged with row stride lds = ldm + MF_TC_PAD; row tiles at
// or past ldm (a subtree with fewer eliminated rows than its pass's largest) are skipped, rows from
// ne on are not written.
// FWD (the forward product on the tensor cores, MF_SEP_TCF): the root's contribution rows
// w_S + G·w_E into w's first ne (= s) rows, R the eliminated rows summed over, the accumulators
// starting from w's rows R…R + s − 1 (w_S with the external contributions); sM holds Gᵀ with row
// stride ldm + MF_TC_PAD (ldm = 16: s ≤ 16).
// ALT (MF_SEP_LD4, rows of ld ≡ 4 mod 16 doubles): lane (g, t)'s two accumulators of a row (columns
// 2t, 2t + 1) loaded and stored in the order g & 1, g & 1 ^ 1, so that each 8-byte access of a
// half-warp hits 16 distinct bank pairs (4g + 2t + (g & 1) mod 16); in column order, lanes of
// neighbouring g share a pair (4g + 2t: 2 wavefronts where 1 does). The same values: bit for bit.
template <int NB, bool FWD = false, bool ALT = false>
__device__ __forceinline__ void maps_tc_backward(const double* sM, u32 ldm, double* w, int ld, u32 R, u32 ne, u32 C) {
    const int lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    const int lds = (int)ldm + MF_TC_PAD;
    const u32 halves = C / 16, nw = blockDim.x >> 5, per = (halves + nw - 1) / nw, first = (threadIdx.x >> 5) * per;
    // Halves of 16 columns, each stored before the next: half the accumulators of 32 columns live.
#pragma unroll 1
    for (u32 h = first; h < first + per && h < halves; ++h) {
        const int col0 = 16 * (int)h;
        double d[NB][2][4];
#pragma unroll
        for (int rt = 0; rt < NB; ++rt)
#pragma unroll
            for (int ct = 0; ct < 2; ++ct)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const u32 r = rt * 16 + g + 8 * (e >> 1);
                    if constexpr (ALT) {
                        if (e & 1) continue;  // both of the row's accumulators at e, e + 1
                        const double* at = w + (R + r) * ld + col0 + ct * 8 + 2 * tq;
                        const int o = g & 1;
                        const double lo = FWD && r < ne ? at[o] : 0.0, hi = FWD && r < ne ? at[o ^ 1] : 0.0;
                        d[rt][ct][e] = o ? hi : lo;
                        d[rt][ct][e + 1] = o ? lo : hi;
                    } else {
                        d[rt][ct][e] = FWD && r < ne ? w[(R + r) * ld + col0 + ct * 8 + 2 * tq + (e & 1)] : 0.0;
                    }
                }
        for (u32 k0 = 0; k0 < R; k0 += 4) {
            const u32 k = k0 + tq;
            const bool kv = k < R;
            double bf[2];
#pragma unroll
            for (int ct = 0; ct < 2; ++ct) bf[ct] = kv ? w[k * ld + col0 + ct * 8 + g] : 0.0;
#pragma unroll
            for (int rt = 0; rt < NB; ++rt) {
                if ((u32)(rt * 16) < ldm) {
                    const double a0 = kv ? sM[k * lds + rt * 16 + g] : 0.0, a1 = kv ? sM[k * lds + rt * 16 + g + 8] : 0.0;
#pragma unroll
                    for (int ct = 0; ct < 2; ++ct) mf_mma16(d[rt][ct], a0, a1, bf[ct]);
                }
            }
        }
        __syncwarp();  // every lane's fragments of these columns consumed: overwrite their eliminated rows
#pragma unroll
        for (int rt = 0; rt < NB; ++rt)
#pragma unroll
            for (int ct = 0; ct < 2; ++ct)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const u32 r = rt * 16 + g + 8 * (e >> 1);
                    if constexpr (ALT) {
                        if ((e & 1) == 0 && r < ne) {
                            double* at = w + r * ld + col0 + ct * 8 + 2 * tq;
                            const int o = g & 1;
                            const double first = o ? d[rt][ct][e + 1] : d[rt][ct][e], second = o ? d[rt][ct][e] : d[rt][ct][e + 1];
                            at[o] = first;
                            at[o ^ 1] = second;
                        }
                    } else if (r < ne) {
                        w[r * ld + col0 + ct * 8 + 2 * tq + (e & 1)] = d[rt][ct][e];
                    }
                }
    }
}

// One block per subtree, a thread per column: chunks of blockDim.x columns. The block's map (MT
// backward, Gᵀ forward; `mcap` doubles at most) is staged once; per chunk w is gathered as in
// sub_sweep, then every thread applies the map to its column: forward s dot products written to
// the contribution buffer, backward NB·16 accumulators (rows of x) over the R local rows, each map
// row read from shared memory as broadcast 16-byte loads.
// One chunk of columns c0 … of subtree j once its rows are in w (row stride ld, a column per
// thread): add the outside children's contributions, then apply the subtree's map — forward: the
// root's contribution rows into buf; backward: x of the eliminated rows, stored. Every thread of
// the block calls it (it holds block barriers).
// Stages a subtree's map (`cnt` doubles at `src`) into sM as asynchronous copies, landed with the
// first chunk's gather; backward the tensor-core product reads [H K]ᵀ with row stride
// ldm + MF_TC_PAD. (The tensor-core and the separator-row sweeps share it.)
template <bool BACKWARD>
__device__ __forceinline__ void maps_stage_async(const double* __restrict__ src, u32 cnt, u32 ldm, double* sM) {
    for (u32 i = threadIdx.x; i < cnt; i += blockDim.x) mf_cp8(sM + (BACKWARD ? i + i / ldm * MF_TC_PAD : i), src + i, true);
}
// Gᵀ (ne × s, row-major) for the forward product on the tensor cores: row i at sM[i·(16 +
// MF_TC_PAD)] (columns s…15 are never stored: they only feed accumulator rows that are not).
__device__ __forceinline__ void maps_stage_forward_tc(const double* __restrict__ src, u32 ne, u32 s, double* sM) {
    for (u32 i = threadIdx.x; i < ne * s; i += blockDim.x) mf_cp8(sM + i / s * (16 + MF_TC_PAD) + i % s, src + i, true);
}

template <int NB, bool BACKWARD, bool TC = false>
__device__ __forceinline__ void maps_chunk(const Tree& t, const Pass& p, u32 j, const double* sMap, double* w, int ld, u32 c0,
                                           u32 nrhs, u64 n, double* __restrict__ x, double* __restrict__ buf) {
    const u32 C = blockDim.x, tid = threadIdx.x;
        const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], ns = R - ne, ldm = maps_ldm(ne);
        const bool mine = c0 + tid < nrhs;
        double* wc = w + tid;
        if (mine) sub_add_ext<1>(p, p.ext_ptr[j], p.ext_ptr[j + 1], BACKWARD ? ne : R, buf, nrhs, c0 + tid, C, wc, ld);
        if (!BACKWARD) {
            const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
            if (mine) maps_apply_forward(sMap, wc, ld, ne, ns, buf + (t.slot[root] + t.e[root]) * nrhs + c0 + tid, nrhs);
        } else if (TC) {
            __syncwarp();  // the warp's columns complete (each thread added its own)
            maps_tc_backward<NB>(sMap, ldm, w, ld, R, ne, C);
            __syncthreads();
            sub_store_x(p.row_dof + r0, ne, c0, C, nrhs, n, w, ld, x);
        } else {
            double acc[NB * MF_MAP_ROWS];
            maps_apply_backward<NB>(sMap, wc, ld, R, ldm, mine, acc);
            __syncthreads();  // every column of w read: overwrite the eliminated rows with x
            if (mine) {
#pragma unroll
                for (int r = 0; r < NB * MF_MAP_ROWS; ++r)
                    if ((u32)r < ne) wc[r * ld] = acc[r];
            }
            __syncthreads();
            sub_store_x(p.row_dof + r0, ne, c0, C, nrhs, n, w, ld, x);
        }
}

template <int NB, bool BACKWARD, bool TC = false>
__device__ void maps_sweep(const Tree& t, const Pass& p, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                           double* __restrict__ x, double* __restrict__ buf, const u64* __restrict__ map_off,
                           const double* __restrict__ maps) {
    extern __shared__ __align__(16) double maps_smem[];
    const u32 j = blockIdx.x, C = blockDim.x, tid = threadIdx.x;
    const int ld = (int)C + 1;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    const u32* rdof = p.row_dof + r0;
    double* sM = maps_smem;
    double* w = maps_smem + (mcap + 1) / 2 * 2;
    {
        const u32 cnt = BACKWARD ? R * ldm : ne * s;
        const double* src = maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm);
        if (TC) {
            maps_stage_async<BACKWARD>(src, cnt, ldm, sM);
        } else {
            for (u32 base = tid; base < cnt; base += MF_BATCH * C) {
                double val[MF_BATCH];
#pragma unroll
                for (int u = 0; u < MF_BATCH; ++u) val[u] = base + u * C < cnt ? src[base + u * C] : 0.0;
#pragma unroll
                for (int u = 0; u < MF_BATCH; ++u)
                    if (base + u * C < cnt) sM[base + u * C] = val[u];
            }
        }
    }
    // grid.y > 1 (the tensor-core kernels on passes of few subtrees): the chunks are shared out.
    for (u32 c0 = blockIdx.y * C; c0 < nrhs; c0 += C * gridDim.y) {
        __syncthreads();
        if (TC) {  // the whole chunk in flight at once: one round trip, no registers held
            mapsp_issue<BACKWARD>(p, j, c0, C, nrhs, n, b, x, w, ld, nullptr, nullptr, 0);
            mf_cp_commit();
            mf_cp_wait_all();
        } else {
            sub_load_rows<BACKWARD>(rdof, R, ne, c0, C, nrhs, n, b, x, w, ld);
        }
        __syncthreads();
        maps_chunk<NB, BACKWARD, TC>(t, p, j, sM, w, ld, c0, nrhs, n, x, buf);
    }
}

extern "C" __global__ void mf_maps_setup_8(Tree t, Pass p, const double* __restrict__ storage, const u64* __restrict__ map_off,
                                           double* __restrict__ maps) {
    maps_setup<8>(t, p, storage, map_off, maps);
}
extern "C" __global__ void mf_maps_setup_32(Tree t, Pass p, const double* __restrict__ storage, const u64* __restrict__ map_off,
                                            double* __restrict__ maps) {
    maps_setup<32>(t, p, storage, map_off, maps);
}
// The maps' halves: mf_maps_setup_g_* (forward map only), mf_maps_setup_hk_* (backward map only).
#define MF_MAPS_SETUP_PART(NAME, EMAX, PART)                                                                       \
    extern "C" __global__ void mf_maps_setup_##NAME##_##EMAX(Tree t, Pass p, const double* __restrict__ storage,   \
                                                             const u64* __restrict__ map_off, double* __restrict__ maps) { \
        maps_setup<EMAX, PART>(t, p, storage, map_off, maps);                                                    \
    }
MF_MAPS_SETUP_PART(g, 8, 1)
MF_MAPS_SETUP_PART(g, 32, 1)
MF_MAPS_SETUP_PART(hk, 8, 2)
MF_MAPS_SETUP_PART(hk, 32, 2)
extern "C" __global__ void mf_maps_forward(Tree t, Pass p, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                                           double* __restrict__ x, double* __restrict__ buf, const u64* __restrict__ map_off,
                                           const double* __restrict__ maps) {
    maps_sweep<1, false>(t, p, mcap, nrhs, n, b, x, buf, map_off, maps);
}
// Backward variants: eliminated rows per subtree up to NB·16.
#define MF_MAPS_BACKWARD(NB)                                                                                          \
    extern "C" __global__ void mf_maps_backward_##NB(Tree t, Pass p, u32 mcap, u32 nrhs, u64 n,                       \
                                                     const double* __restrict__ b, double* __restrict__ x,            \
                                                     double* __restrict__ buf, const u64* __restrict__ map_off,       \
                                                     const double* __restrict__ maps) {                               \
        maps_sweep<NB, true>(t, p, mcap, nrhs, n, b, x, buf, map_off, maps);                                          \
    }
MF_MAPS_BACKWARD(1)
MF_MAPS_BACKWARD(2)
MF_MAPS_BACKWARD(3)
// The same sweeps with the backward product on the tensor cores and a deeper gather
// (`MapsKernel::Tensor`; `mcap` is then R·(16·NB + MF_TC_PAD) backward).
extern "C" __global__ void mf_mapst_forward(Tree t, Pass p, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                                            double* __restrict__ x, double* __restrict__ buf, const u64* __restrict__ map_off,
                                            const double* __restrict__ maps) {
    maps_sweep<1, false, true>(t, p, mcap, nrhs, n, b, x, buf, map_off, maps);
}
#define MF_MAPST_BACKWARD(NB)                                                                                         \
    extern "C" __global__ void mf_mapst_backward_##NB(Tree t, Pass p, u32 mcap, u32 nrhs, u64 n,                      \
                                                      const double* __restrict__ b, double* __restrict__ x,           \
                                                      double* __restrict__ buf, const u64* __restrict__ map_off,      \
                                                      const double* __restrict__ maps) {                              \
        maps_sweep<NB, true, true>(t, p, mcap, nrhs, n, b, x, buf, map_off, maps);                                    \
    }
MF_MAPST_BACKWARD(1)
MF_MAPST_BACKWARD(2)
MF_MAPST_BACKWARD(3)

// ---- Factorization and forward solve fused (`CudaMultifrontal::factor_and_solve`) ----
// One block per subtree of a pass, for right-hand sides known at factorization time: the block
// factorizes its subtree's nodes (a warp per node, tree level by tree level: `lvl_end[k]` is the
// first node id past level k, leaves being level 0; the fronts go through global memory, written
// and read by this block's own threads between barriers), computes the subtree's transfer maps
// from them and runs the tensor-core forward sweep of every column, so the forward pass rides on
// the factorization's launches instead of a pass of its own after it. Shared memory: the largest
// of the three phases (they reuse it one after another).
template <int EMAX>
__device__ void fused_factor_forward(const Tree& t, const Pass& p, const u32* __restrict__ lvl_end, int mmax,
                                     double* storage, u32* pinv, u64* status, const u64* __restrict__ map_off,
                                     double* maps, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                                     double* __restrict__ x, double* __restrict__ buf) {
    extern __shared__ __align__(16) double fused_smem[];
    const u32 j = blockIdx.x, n0 = p.sub_ptr[j], nn = p.sub_ptr[j + 1] - n0;
    const u32 nw = blockDim.x >> 5, warp = threadIdx.x >> 5;
    double* F = fused_smem + warp * group_doubles(mmax);
    int* perm = reinterpret_cast<int*>(F + (u64)mmax * mmax);
    u32 lv = 0;
    for (u32 i0 = 0; i0 < nn;) {
        while (lvl_end[lv] <= p.nodes[n0 + i0]) ++lv;
        u32 i1 = i0 + 1;
        while (i1 < nn && p.nodes[n0 + i1] < lvl_end[lv]) ++i1;
        for (u32 i = i0 + warp; i < i1; i += nw) {
            const u32 v = p.nodes[n0 + i];
            if (t.e[v] > 0) factor_node<WarpGroup>(t, v, storage, pinv, status, F, perm, nullptr, nullptr);
        }
        __syncthreads();
        i0 = i1;
    }
    // A zero pivot here leaves pivot orders unwritten, which the maps' set-up would index with:
    // stop (the host reports the singular matrix). One answer for the whole block.
    if (__syncthreads_or(threadIdx.x == 0 && *(volatile u64*)status != ~0ull)) return;
    maps_setup<EMAX>(t, p, storage, map_off, maps);
    __syncthreads();
    maps_sweep<1, false, true>(t, p, mcap, nrhs, n, b, x, buf, map_off, maps);
}
#define MF_FUSED_FACTOR_FORWARD(EMAX)                                                                                 \
    extern "C" __global__ void mf_fused_factor_forward_##EMAX(                                                        \
        Tree t, Pass p, const u32* __restrict__ lvl_end, int mmax, double* storage, u32* pinv, u64* status,           \
        const u64* __restrict__ map_off, double* maps, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,       \
        double* __restrict__ x, double* __restrict__ buf) {                                                           \
        fused_factor_forward<EMAX>(t, p, lvl_end, mmax, storage, pinv, status, map_off, maps, mcap, nrhs, n, b, x,    \
                                   buf);                                                                              \
    }
MF_FUSED_FACTOR_FORWARD(8)
MF_FUSED_FACTOR_FORWARD(32)

// ---- Transfer maps, pipelined (maps.rs, `MapsKernel::Pipelined`): the same products, with the
// loads of the next chunk in flight while a block computes the current one ----
// The block-per-subtree kernels above wait for each chunk's gather (b at the eliminated rows, a
// few dependent round trips per warp) before they multiply, and only the other resident blocks
// hide that wait. Here a block walks a sequence of work items (subtree, chunk of C columns; a
// subtree's chunks are consecutive, so its map is staged once) and issues the gather of
// item i+1 (and the map of its subtree, if new) as asynchronous copies into the other half of a
// double buffer before it multiplies item i: every thread has its whole next gather in flight
// (cp.async, sm_80 on; older devices copy synchronously), with no registers held for it.
// The item loop of the pipelined kernels: block b walks subtrees b, b + G, b + 2G, … (G blocks),
// each with all its chunks of C columns, items k = 0 … nk − 1 = (b + (k / nchunks)·G, chunk
// k % nchunks), so the resident blocks work on neighbouring subtrees at once and each column of b
// and x is read and written in long runs. `issue(j, c0, w, map)` issues item (j, c0)'s gather into
// w and, if `map` is not null, subtree j's map into it (asynchronous copies, not committed);
// `chunk(j, c0, map, w)` computes a landed item (every thread calls it). Halves k = 0, 1 of the
// double buffer: maps at smem + k·mstride, chunks at smem + 2·mstride + k·wstride; the map slot
// toggles whenever the subtree changes.
template <class Issue, class Chunk>
__device__ __forceinline__ void pipe_walk(u32 count, u32 C, u32 nrhs, double* smem, u32 mstride, u32 wstride, Issue issue, Chunk chunk) {
    const u32 nchunks = (nrhs + C - 1) / C, G = gridDim.x;
    if (blockIdx.x >= count) return;
    double* sM0 = smem;
    double* sW0 = smem + 2 * mstride;
    const u64 nk = (u64)((count - 1 - blockIdx.x) / G + 1) * nchunks;
    auto sub_of = [&](u64 k) { return blockIdx.x + (u32)(k / nchunks) * G; };
    auto c0_of = [&](u64 k) { return (u32)(k % nchunks) * C; };
    u32 ms = 0;
    issue(sub_of(0), 0u, sW0, sM0);
    mf_cp_commit();
    for (u64 i = 0; i < nk; ++i) {
        const u32 s = (u32)(i & 1), j = sub_of(i), c0 = c0_of(i);
        __syncthreads();  // item i − 1 is done with the other half of the buffers
        if (i + 1 < nk) {
            const u32 jj = sub_of(i + 1);
            issue(jj, c0_of(i + 1), sW0 + (s ^ 1) * wstride, jj != j ? sM0 + (ms ^ 1) * mstride : nullptr);
        }
        mf_cp_commit();  // possibly empty: the wait below always leaves exactly item i + 1 in flight
        mf_cp_wait_all_but_one();
        __syncthreads();
        chunk(j, c0, sM0 + ms * mstride, sW0 + s * wstride);
        if (i + 1 < nk && sub_of(i + 1) != j) ms ^= 1;
    }
}

template <int NB, bool BACKWARD>
__device__ void mapsp_sweep(const Tree& t, const Pass& p, u32 count, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                            double* __restrict__ x, double* __restrict__ buf, const u64* __restrict__ map_off,
                            const double* __restrict__ maps) {
    extern __shared__ __align__(16) double mapsp_smem[];
    const u32 C = blockDim.x;
    const int ld = (int)C + 1;
    auto issue = [&](u32 j, u32 c0, double* w, double* map) {
        const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], ldm = maps_ldm(ne);
        const u32 cnt = BACKWARD ? R * ldm : ne * (R - ne);
        mapsp_issue<BACKWARD>(p, j, c0, C, nrhs, n, b, x, w, ld, map, maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm), cnt);
    };
    auto chunk = [&](u32 j, u32 c0, const double* sMap, double* w) { maps_chunk<NB, BACKWARD>(t, p, j, sMap, w, ld, c0, nrhs, n, x, buf); };
    pipe_walk(count, C, nrhs, mapsp_smem, (mcap + 1) / 2 * 2, p.rows * (u32)ld, issue, chunk);
}

extern "C" __global__ void mf_mapsp_forward(Tree t, Pass p, u32 count, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                                            double* __restrict__ x, double* __restrict__ buf, const u64* __restrict__ map_off,
                                            const double* __restrict__ maps) {
    mapsp_sweep<1, false>(t, p, count, mcap, nrhs, n, b, x, buf, map_off, maps);
}
#define MF_MAPSP_BACKWARD(NB)                                                                                         \
    extern "C" __global__ void mf_mapsp_backward_##NB(Tree t, Pass p, u32 count, u32 mcap, u32 nrhs, u64 n,           \
                                                      const double* __restrict__ b, double* __restrict__ x,           \
                                                      double* __restrict__ buf, const u64* __restrict__ map_off,      \
                                                      const double* __restrict__ maps) {                              \
        mapsp_sweep<NB, true>(t, p, count, mcap, nrhs, n, b, x, buf, map_off, maps);                                  \
    }
MF_MAPSP_BACKWARD(1)
MF_MAPSP_BACKWARD(2)
MF_MAPSP_BACKWARD(3)

// ---- Transfer maps through compact separator rows (solver/multifrontal/separators.rs,
// `MapsKernel::Separators`): the tensor-core map kernels above with the rows that passes 1 and up
// eliminate moved to a row-major buffer `sep` (row r at sep[r·nrhs + c], compact rows in the order
// of the passes' subtrees), so that those passes move whole lines instead of the separators'
// 24-byte pieces of each column of b and x. Pass 0 (sp.upper = 0) reads b at its eliminated rows
// (column-major), copies b at its owned Schur rows into sep (forward) and writes x there from sep
// (backward); passes above (sp.upper = 1) read b from sep and overwrite it with x in place.
struct SepPass {
    const u32* own_ptr;
    const u32* own_loc;
    const u32* own_dof;
    u32 upper;
};

// Issues chunk c0's gather of subtree j into w: rows from the column-major b a warp per column,
// lanes over rows (pass 0: its eliminated rows, and forward its owned rows into w rows R…); rows
// from the row-major sep a warp per row, lanes over columns; forward the Schur rows are zero.
// FLAGS (the variants mf_mapss{b,e,be}_*): MF_SEP_EXT also stages the external children's
// contribution rows (whole lines of the row-major buf; backward only those at eliminated rows) at
// ew, entry k − ext_ptr[j] at row k − ext_ptr[j]; MF_SEP_BULK brings every row-major line (b, sep,
// buf) by one bulk copy of a thread onto `bar` (nrhs even: 16-byte lines), and every thread
// arrives on it once. `lines` (MF_SEP_PREF, else null): the subtree's line sources (dofs of b and
// sep rows) in shared memory, recorded by the first chunk's issue (`cached` false) and read by
// the later chunks', which then issue their copies without a global load.
#define MF_SEP_BULK 1
#define MF_SEP_EXT 2
#define MF_SEP_TCF 4
#define MF_SEP_PREF 8
#define MF_SEP_L2 16
// MF_SEP_BOT (round 25, the backward prefetch mf_mapssbp0_backward_*): the kernel runs on a
// row-major bottom pass only, so `sp.upper` (false) and `mf_rows(n)` (true) are known when it is
// compiled and its index paths are the prefetched ones alone — round 24's prefetched kernels kept
// every path and took 79 registers against 56. sep_upper / sep_rows read the two through it.
#define MF_SEP_BOT 32
// MF_SEP_XS (round 28, `CudaMultifrontal::set_sep_ext_split`): the external contributions added by
// every part of a column, not part 0 alone. At 256 columns the upper passes' blocks (128 columns, two
// threads a column) left half their warps waiting at the barrier while part 0 walked a subtree's 48
// entries in batches of 8, each batch two dependent round trips (ext_row / ext_src, then the lines):
// forward 1's profile, 39 % of its stalls at a CTA barrier and 32 % on L1TEX. Here the last warp
// stages the entries at rows below `keep` under the first chunk's copies, stably partitioned by
// row % parts (maps_sep_stage_ext), and each part adds its own list (sub_add_ext_split): a row is a
// part's alone and keeps its entries' order, so every sum is the default's bit for bit.
#define MF_SEP_XS 64
// MF_SEP_LD4 (round 29, `CudaMultifrontal::set_sep_tc_rows4`): with the forward product on the
// tensor cores (MF_SEP_TCF) rows of C + 4 doubles, not C + 2, and maps_tc_backward's accumulator
// loads and result stores in the row-parity order (ALT). Forward 0's profile (round 28, C + 2):
// shared loads 3.0-way and stores 4.5-way conflicted — per 128-column chunk 128 B-fragment loads
// at bank pair 2t + g mod 16 (4 wavefronts a request against 2), 32 accumulator loads and 32
// result stores at 2(g + t) + e mod 16 (6 against 2); at C + 4 the B fragments fall at 4t + g
// (conflict-free) and ALT makes the other two conflict-free. 16 bytes more a row of w.
#define MF_SEP_LD4 128
// MF_SEP_TRIM (round 30, `CudaMultifrontal::set_sep_trim`): the tensor-core forward on a pass
// without external entries (the host launches it on no other; forward 0 at 2^20): w's Schur rows
// would hold zeros only, so they are neither zeroed (the issue) nor staged, the accumulators start
// at +0.0 as registers instead of loads of those +0.0s (the same operands of the same MMAs: bit
// for bit), no contribution walk nor its barrier; the owned rows are staged from row
// max(ne, s) (past the eliminated rows read and the result rows written), and `p.rows` is the
// pass's most max(ne, s) + owned rows (`DevPass::trim_rows`), not local + owned.
#define MF_SEP_TRIM 512
// MF_SEP_ADDS (stop 55, `CudaMultifrontal::set_sep_bottom_adds`): on the trimmed forward passes
// below the walk of an in-place solve at dofs (sep is x is b), each root's result rows G·w_E are
// added into sep at their dofs (where b holds those rows) by atomics instead of stored to the
// contribution buffer: the passes that eliminate them gather them with the contributions in
// (SeparatorPlan::at_dofs_adds drops the entries from their tables), so forward 1, backward 1
// and the walk no longer read them from the buffer. A separator row's sum takes its adds in the
// order they land (not bit-reproducible run to run; equal to round-off).
#define MF_SEP_ADDS 1024
#define MF_SEP_PIPE 256  // round 29's pipelined chunks (maps_sep_subtree_pipe, below)
template <int FLAGS>
__device__ __forceinline__ bool sep_upper(const SepPass& sp) { return (FLAGS & MF_SEP_BOT) ? false : sp.upper != 0; }
template <int FLAGS>
__device__ __forceinline__ bool sep_rows(u64 n) { return (FLAGS & MF_SEP_BOT) ? true : mf_rows(n); }
// The first w row of the owned rows staged forward: past the local rows, or with MF_SEP_TRIM past
// the eliminated rows and the product's result rows.
template <int FLAGS>
__device__ __forceinline__ u32 sep_own_row(u32 R, u32 ne) { return (FLAGS & MF_SEP_TRIM) ? max(ne, R - ne) : R; }
template <bool BACKWARD, int FLAGS = 0>
__device__ __forceinline__ void maps_sep_issue(const Pass& p, const SepPass& sp, u32 j, u32 c0, u32 C, u32 nrhs, u64 n,
                                               const double* __restrict__ b, const double* __restrict__ sep, double* w, int ld,
                                               const double* __restrict__ buf = nullptr, double* ew = nullptr, u64* bar = nullptr,
                                               u32* lines = nullptr, bool cached = false) {
    const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j];
    const u32* rdof = p.row_dof + r0;
    const bool upper = sep_upper<FLAGS>(sp), rows = sep_rows<FLAGS>(n);
    const u32 o0 = upper ? 0 : sp.own_ptr[j];
    const u32 ncm = upper ? 0 : ne + (BACKWARD ? 0 : sp.own_ptr[j + 1] - o0), ob = sep_own_row<FLAGS>(R, ne);
    static_assert(!(FLAGS & MF_SEP_TRIM) || (!BACKWARD && (FLAGS & MF_SEP_TCF) && !(FLAGS & (MF_SEP_EXT | MF_SEP_XS))),
                  "MF_SEP_TRIM: the tensor-core forward without contributions");
    if constexpr (FLAGS != 0) {
        // Lines: row-major b (pass 0), then sep rows, then staged contributions.
        const u32 nb = rows ? ncm : 0, first = upper ? 0 : ne, last = BACKWARD ? R : ne, ns = last - first;
        const u32 x0 = p.ext_ptr[j], nx = (FLAGS & MF_SEP_EXT) ? p.ext_ptr[j + 1] - x0 : 0, keep = BACKWARD ? ne : R;
        const u32 nl = nb + ns + nx, cols = min(C, nrhs - c0);
        auto source = [&](u32 k, u32 d) {  // the line's dof, from the cache where it is filled
            if (lines == nullptr) return d;
            if (cached) return lines[k];
            lines[k] = d;
            return d;
        };
        auto at = [&](u32 k, double*& dst, const double*& src) -> bool {
            if (k < nb) {
                const u32 d = source(k, lines != nullptr && cached ? 0u : k < ne ? rdof[k] : sp.own_dof[o0 + k - ne]);
                dst = w + (k < ne ? k : ob + (k - ne)) * ld;
                src = b + (u64)d * nrhs + c0;
                return true;
            }
            if (k < nb + ns) {
                const u32 i = first + k - nb;
                dst = w + i * ld;
                src = sep + (u64)source(k, lines != nullptr && cached ? 0u : rdof[i]) * nrhs + c0;
                return true;
            }
            const u32 e = k - nb - ns;
            dst = ew + e * ld;
            src = buf + p.ext_src[x0 + e] * nrhs + c0;
            return p.ext_row[x0 + e] < keep;
        };
        if ((FLAGS & MF_SEP_BULK) && nrhs % 2 == 0) {
            for (u32 k = tid; k < nl; k += blockDim.x) {
                double* dst;
                const double* src;
                if (at(k, dst, src)) mf_bulk(dst, src, 8 * cols, bar);
            }
        } else {
            for (u32 k = warp; k < nl; k += nw) {
                double* dst;
                const double* src;
                if (at(k, dst, src))
                    for (u32 col = lane; col < C; col += 32) mf_cp8(dst + col, col < cols ? src + col : b, col < cols);
            }
        }
    } else if (rows) {  // row-major b: a warp per row, lanes over columns (whole lines, as sep)
        for (u32 i = warp; i < ncm; i += nw) {
            const u32 d = i < ne ? rdof[i] : sp.own_dof[o0 + i - ne];
            const u32 wr = i < ne ? i : R + (i - ne);
            const double* src = b + (u64)d * nrhs + c0;
            for (u32 col = lane; col < C; col += 32) {
                const bool v = c0 + col < nrhs;
                mf_cp8(w + wr * ld + col, v ? src + col : b, v);
            }
        }
    }
    for (u32 row0 = 0; row0 < (rows ? 0 : ncm); row0 += 32) {
        const u32 i = row0 + lane;
        if (i >= ncm) break;
        const u32 d = i < ne ? rdof[i] : sp.own_dof[o0 + i - ne];
        const u32 wr = i < ne ? i : ob + (i - ne);
        for (u32 col = warp; col < C; col += nw) {
            const bool v = c0 + col < nrhs;
            mf_cp8(w + wr * ld + col, v ? b + (u64)(c0 + col) * n + d : b, v);
        }
    }
    const u32 first = upper ? 0 : ne, last = BACKWARD ? R : ne;
    for (u32 i = first + warp; i < (FLAGS != 0 ? first : last); i += nw) {
        const double* src = sep + (u64)rdof[i] * nrhs + c0;
        for (u32 col = lane; col < C; col += 32) {
            const bool v = c0 + col < nrhs;
            mf_cp8(w + i * ld + col, v ? src + col : sep, v);
        }
    }
    if (!BACKWARD && !(FLAGS & MF_SEP_TRIM))
        for (u32 i = ne + warp; i < R; i += nw)
            for (u32 col = lane; col < C; col += 32) w[i * ld + col] = 0.0;
    if constexpr ((FLAGS & MF_SEP_BULK) != 0) mf_bar_arrive(bar);
}

// MF_SEP_PREF (round 22): the forward sweep's per-subtree indices in shared memory. The first
// chunk loads the store side's — the owned rows' dofs in sep (own_loc, then row_dof: two dependent
// loads) and the root's contribution rows in buf (sub_ptr, nodes, then slot and e: three) — after
// issuing its copies and before waiting for them, so those round trips overlap the copies instead
// of following them; every later chunk reads them (and its line sources, `lines`) from here.
// Layout: at the start of the dynamic shared memory, before the map: the root's slot (one u64),
// then `rows` u32 line sources, then `rows` u32 owned-row dofs (sep_pre_doubles doubles, even).
__device__ __forceinline__ u32 sep_pre_doubles(u32 rows) { return (1 + rows + 1) / 2 * 2; }
__device__ __forceinline__ u32* pre_idx(const u64* pre) { return const_cast<u32*>(reinterpret_cast<const u32*>(pre + 1)); }
__device__ __forceinline__ u64 sep_root_at(const Tree& t, const Pass& p, u32 j, const u64* pre) {
    if (pre != nullptr) return pre[0];
    const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
    return t.slot[root] + t.e[root];
}
// The first chunk's store-side loads (every thread calls it, after its copies are issued): the
// owned rows by the block's last threads (the first ones issued the copies), the root by its last.
// Backward (round 24) the store side is x at the eliminated rows, whose dofs the line sources
// already hold (`lines[i]`, i < ne: row-major b or an upper pass's sep rows), and pass 0's owned
// rows: their count (own_ptr, in pre[0]) and each one's place in w and dof (own_loc, own_dof: two
// dependent loads after the product without it), as pairs at pre_idx(pre)[p.rows + 2k]. They fit:
// a bottom pass's p.rows is its most local + owned rows, and owned rows are Schur rows.
template <bool BACKWARD, int FLAGS>
__device__ __forceinline__ void maps_sep_prefetch(const Tree& t, const Pass& p, const SepPass& sp, u32 j, u64* pre) {
    const u32 r = blockDim.x - 1 - threadIdx.x;
    const bool upper = sep_upper<FLAGS>(sp);
    const u32 o0 = upper ? 0 : sp.own_ptr[j], nown = upper ? 0 : sp.own_ptr[j + 1] - o0;
    if constexpr (BACKWARD) {
        for (u32 k = r; k < nown; k += blockDim.x) {
            pre_idx(pre)[p.rows + 2 * k] = sp.own_loc[o0 + k];
            pre_idx(pre)[p.rows + 2 * k + 1] = sp.own_dof[o0 + k];
        }
        if (r == 0) pre[0] = nown;
    } else {
        const u32* rdof = p.row_dof + p.row_ptr[j];
        for (u32 k = r; k < nown; k += blockDim.x) pre_idx(pre)[p.rows + k] = rdof[sp.own_loc[o0 + k]];
        if (r == 0) {
            const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
            pre[0] = t.slot[root] + t.e[root];
        }
    }
}

// MF_SEP_XS's staging (once a subtree, the last warp, under the first chunk's copies): subtree j's
// external entries at rows below `keep` as (row, source) pairs at xs + 4 + 2·(i·parts + q), entry i
// of part q = row % parts in entry order, and part q's count at xs[q]. Groups of 32 entries, a
// ballot a part: the lanes of a part take consecutive places after the part's earlier groups.
// Room: 4 + 2·parts·(the pass's most entries) words (the host sizes it for 4 parts).
__device__ __forceinline__ void maps_sep_stage_ext(const Pass& p, u32 j, u32 keep, u32 parts, u32* xs) {
    if ((threadIdx.x >> 5) != (blockDim.x >> 5) - 1) return;
    const u32 lane = threadIdx.x & 31, below = (1u << lane) - 1;
    const u32 x0 = p.ext_ptr[j], nx = p.ext_ptr[j + 1] - x0;
    if (lane < 4) xs[lane] = 0;
    __syncwarp();
    for (u32 g = 0; g < nx; g += 32) {
        const u32 e = g + lane, r = e < nx ? p.ext_row[x0 + e] : keep;
        const bool v = r < keep;
        const u32 src = v ? (u32)p.ext_src[x0 + e] : 0, q = v ? r % parts : parts;
#pragma unroll 1
        for (u32 k = 0; k < parts; ++k) {
            const u32 m = __ballot_sync(0xffffffffu, q == k), base = xs[k];
            if (q == k) *reinterpret_cast<uint2*>(xs + 4 + 2 * ((base + __popc(m & below)) * parts + k)) = make_uint2(r, src);
            __syncwarp();
            if (lane == 0) xs[k] = base + __popc(m);
            __syncwarp();
        }
    }
}

// sub_add_ext with MF_SEP_XS: this thread's column `col` gets part `part`'s staged entries (rows and
// sources from shared memory: one round trip a batch, the lines), in their order.
__device__ __forceinline__ void sub_add_ext_split(const u32* xs, u32 part, u32 parts, const double* __restrict__ buf, u32 nrhs, u32 col,
                                                  double* wc, int ld) {
    const u32 cnt = xs[part];
    for (u32 k0 = 0; k0 < cnt; k0 += MF_BATCH) {
        uint2 rs[MF_BATCH];
        double v[MF_BATCH];
#pragma unroll
        for (int u = 0; u < MF_BATCH; ++u)
            rs[u] = k0 + u < cnt ? *reinterpret_cast<const uint2*>(xs + 4 + 2 * ((k0 + u) * parts + part)) : make_uint2(0, 0);
#pragma unroll
        for (int u = 0; u < MF_BATCH; ++u) v[u] = k0 + u < cnt ? buf[(u64)rs[u].y * nrhs + col] : 0.0;
#pragma unroll
        for (int u = 0; u < MF_BATCH; ++u)
            if (k0 + u < cnt) wc[rs[u].x * ld] += v[u];
    }
}

// One landed chunk c0 (C columns) of subtree j in w (row stride ld; the map in sM): forward, b at
// the owned separator rows (staged in w rows R…) to sep, the root's contribution rows to buf;
// backward, x of the eliminated rows by the tensor cores, stored to sep (upper passes) or x with the
// owned rows' x from sep (pass 0). The block has blockDim.x / C threads per column (parts): part 0
// adds the external contributions, the parts share a column's forward rows; moves and products
// are shared out by warps. Every thread of the block calls it (it holds block barriers).
// `ew`: the staged contribution rows (MF_SEP_EXT), else null. FLAGS with MF_SEP_TCF: the forward
// product on the tensor cores (Gᵀ staged by maps_stage_forward_tc), the contribution rows stored
// from w's first rows, whole lines. `pre` (MF_SEP_PREF, else null): the store side's indices
// prefetched while the chunk's copies landed (maps_sep_prefetch); backward, row-major or an upper
// pass (column-major pass 0 loads them as without it: its line sources are not the store's).
template <int NB, bool BACKWARD, int FLAGS = 0>
__device__ __forceinline__ void maps_sep_chunk(const Tree& t, const Pass& p, const SepPass& sp, u32 j, const double* sM, double* w, int ld,
                                               u32 C, u32 c0, u32 nrhs, u64 n, double* __restrict__ x, double* __restrict__ sep,
                                               double* __restrict__ buf, const double* ew = nullptr, const u64* pre = nullptr,
                                               const u32* xs = nullptr) {
    const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
    const u32 own_col = tid % C, part = tid / C, parts = blockDim.x / C;
    const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    const u32* rdof = p.row_dof + r0;
    // Backward with the prefetch: the line sources and owned rows from shared memory (`bp`).
    const bool upper = sep_upper<FLAGS>(sp), rows = sep_rows<FLAGS>(n);
    const u32* bp = BACKWARD && pre != nullptr && (upper || rows) ? pre_idx(pre) : nullptr;
    const u32 o0 = upper || bp ? 0 : sp.own_ptr[j], nown = upper ? 0 : bp ? (u32)pre[0] : sp.own_ptr[j + 1] - o0;
    const bool mine = c0 + own_col < nrhs;
    double* wc = w + own_col;
    constexpr bool TRIM = (FLAGS & MF_SEP_TRIM) != 0;
    if (!BACKWARD)  // b at the owned separator rows, staged in w rows sep_own_row…, to sep
        for (u32 k = warp; k < nown; k += nw) {
            double* dst = sep + (u64)(pre ? pre_idx(pre)[p.rows + k] : rdof[sp.own_loc[o0 + k]]) * nrhs + c0;
            for (u32 col = lane; col < C && c0 + col < nrhs; col += 32) dst[col] = w[(sep_own_row<FLAGS>(R, ne) + k) * ld + col];
        }
    // MF_SEP_TRIM: no contributions, and nothing the product reads or writes is another thread's
    // before it (the owned rows lie past both): no walk, no barrier — but the pipelined kernels keep
    // the (empty) walk and its barrier: without them ptxas held 56 and 59 registers against 48
    // (NVRTC 13.0, sm_90; a resident block lost), with them 48.
    if constexpr (!TRIM || (FLAGS & MF_SEP_PIPE) != 0) {
        if constexpr ((FLAGS & MF_SEP_XS) != 0) {
            if (mine) sub_add_ext_split(xs, part, parts, buf, nrhs, c0 + own_col, wc, ld);
        } else if (mine && part == 0)
            sub_add_ext<1, (FLAGS & MF_SEP_L2) != 0>(p, p.ext_ptr[j], p.ext_ptr[j + 1], BACKWARD ? ne : R, buf, nrhs, c0 + own_col, C, wc, ld,
                                                      ew ? ew + own_col : nullptr);
        // The columns complete: each thread added its own (one part), or every part waits for part 0.
        if (parts > 1)
            __syncthreads();
        else
            __syncwarp();
    }
    if (!BACKWARD && (FLAGS & MF_SEP_TCF)) {
        // MF_SEP_TRIM: the accumulators from +0.0 (FWD false), not from the zeroed Schur rows.
        maps_tc_backward<1, !TRIM, (FLAGS & MF_SEP_LD4) != 0>(sM, 16, w, ld, ne, s, C);
        __syncthreads();
        if constexpr ((FLAGS & MF_SEP_ADDS) != 0) {
            static_assert(TRIM && !(FLAGS & MF_SEP_PIPE), "MF_SEP_ADDS: the trimmed forward (the result is G·w_E alone)");
            for (u32 i = warp; i < s; i += nw) {
                double* dst = sep + (u64)rdof[ne + i] * nrhs + c0;
                for (u32 col = lane; col < C && c0 + col < nrhs; col += 32) atomicAdd(dst + col, w[i * ld + col]);
            }
        } else {
            double* dst = buf + sep_root_at(t, p, j, pre) * nrhs + c0;
            for (u32 i = warp; i < s; i += nw)
                for (u32 col = lane; col < C && c0 + col < nrhs; col += 32) dst[(u64)i * nrhs + col] = w[i * ld + col];
        }
    } else if (!BACKWARD) {
        if (mine) maps_apply_forward(sM, wc, ld, ne, s, buf + sep_root_at(t, p, j, pre) * nrhs + c0 + own_col, nrhs, part, parts);
    } else {
        maps_tc_backward<NB>(sM, ldm, w, ld, R, ne, C);
        __syncthreads();
        if (upper) {  // x in place of b in sep, whole rows
            for (u32 i = warp; i < ne; i += nw) {
                double* dst = sep + (u64)(bp ? bp[i] : rdof[i]) * nrhs + c0;
                for (u32 col = lane; col < C && c0 + col < nrhs; col += 32) dst[col] = w[i * ld + col];
            }
        } else if (rows) {  // row-major x at the eliminated and (from sep) the owned rows: whole lines
            for (u32 i = warp; i < ne + nown; i += nw) {
                const u32 k = i - ne;
                const u32 wr = i < ne ? i : bp ? bp[p.rows + 2 * k] : sp.own_loc[o0 + k];
                const u32 d = i < ne ? (bp ? bp[i] : rdof[i]) : bp ? bp[p.rows + 2 * k + 1] : sp.own_dof[o0 + k];
                double* dst = x + (u64)d * nrhs + c0;
                for (u32 col = lane; col < C && c0 + col < nrhs; col += 32) dst[col] = w[wr * ld + col];
            }
        } else {  // x at the eliminated rows and, from sep, at the owned rows: lanes over rows (a
                  // column's run), the row's place and dof loaded once for all of the warp's columns
            for (u32 i = lane; i - lane < ne + nown; i += 32) {
                const bool v = i < ne + nown;
                const u32 wr = !v ? 0 : i < ne ? i : sp.own_loc[o0 + i - ne], d = !v ? 0 : i < ne ? rdof[i] : sp.own_dof[o0 + i - ne];
                double* xd = x + (u64)(c0 + warp) * n + d;
                if (v)
                    for (u32 col = warp; col < C && c0 + col < nrhs; col += nw, xd += (u64)nw * n) *xd = w[wr * ld + col];
            }
        }
    }
}

// FLAGS != 0 (the variants): rows of ld = C + 4 doubles (32-byte aligned for the bulk copies, and
// the tensor-core B fragments conflict-free; C + 2 with the forward product on the tensor cores,
// MF_SEP_TCF, whose larger map would otherwise cost the bottom pass a resident block), the staged
// contributions (MF_SEP_EXT: p.rows · ld doubles past w, a row per external entry of the pass's
// largest), one mbarrier phase per chunk. MF_SEP_PREF: the prefetched indices (maps_sep_prefetch;
// sep_pre_doubles(p.rows) doubles) ahead of the map; backward since round 24.
template <int NB, bool BACKWARD, int FLAGS = 0>
__device__ __forceinline__ void maps_sep_subtree(const Tree& t, const Pass& p, const SepPass& sp, u32 j, u32 cy, u32 ny, u32 C, u32 mcap, u32 nrhs,
                                                 u64 n, const double* __restrict__ b, double* __restrict__ x, double* __restrict__ sep,
                                                 double* __restrict__ buf, const u64* __restrict__ map_off, const double* __restrict__ maps,
                                                 u64* bar, u32& phase) {
    extern __shared__ __align__(16) double maps_smem[];
    const int ld = (int)C + (FLAGS == 0 ? 1 : (FLAGS & MF_SEP_TCF) && !(FLAGS & MF_SEP_LD4) ? 2 : 4);
    const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    constexpr bool PREF = (FLAGS & MF_SEP_PREF) != 0;
    u64* pre = PREF ? reinterpret_cast<u64*>(maps_smem) : nullptr;
    double* sM = maps_smem + (PREF ? sep_pre_doubles(p.rows) : 0);
    double* w = sM + (mcap + 1) / 2 * 2;
    double* ew = (FLAGS & MF_SEP_EXT) ? w + p.rows * ld : nullptr;
    // MF_SEP_XS: the staged entries past w (never with MF_SEP_EXT, which stages the lines there).
    static_assert(!((FLAGS & MF_SEP_XS) && (FLAGS & MF_SEP_EXT)), "MF_SEP_XS stages entries where MF_SEP_EXT stages lines");
    u32* xs = (FLAGS & MF_SEP_XS) ? reinterpret_cast<u32*>(w + p.rows * ld) : nullptr;
    if (!BACKWARD && (FLAGS & MF_SEP_TCF)) {
        maps_stage_forward_tc(maps + map_off[j] + (u64)R * ldm, ne, s, sM);
    } else {
        const u32 cnt = BACKWARD ? R * ldm : ne * s;
        maps_stage_async<BACKWARD>(maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm), cnt, ldm, sM);
    }
    for (u32 c0 = cy * C; c0 < nrhs; c0 += C * ny, phase ^= 1) {
        if (FLAGS & MF_SEP_BULK) mf_fence_async();
        __syncthreads();
        const bool cached = c0 != cy * C;
        maps_sep_issue<BACKWARD, FLAGS>(p, sp, j, c0, C, nrhs, n, b, sep, w, ld, buf, ew, bar, PREF ? pre_idx(pre) : nullptr, cached);
        mf_cp_commit();
        if (PREF && !cached) maps_sep_prefetch<BACKWARD, FLAGS>(t, p, sp, j, pre);  // while the copies land
        if ((FLAGS & MF_SEP_XS) && !cached) maps_sep_stage_ext(p, j, BACKWARD ? ne : R, blockDim.x / C, xs);
        mf_cp_wait_all();
        if (FLAGS & MF_SEP_BULK) mf_bar_wait(bar, phase);
        __syncthreads();
        maps_sep_chunk<NB, BACKWARD, FLAGS>(t, p, sp, j, sM, w, ld, C, c0, nrhs, n, x, sep, buf, ew, pre, xs);
    }
}

// A block per (subtree, column block) of the grid: maps_sep_subtree's chunks cy·C, cy·C + C·ny, ….
// Block (x, y) takes subtree lin / gridDim.y and column block lin % gridDim.y, lin = x + y·gridDim.x:
// the column blocks of one subtree are launched next to each other, so its map comes from memory
// once and from L2 for the others.
template <int NB, bool BACKWARD, int FLAGS = 0>
__device__ void maps_sep_sweep(const Tree& t, const Pass& p, const SepPass& sp, u32 C, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                               double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf, const u64* __restrict__ map_off,
                               const double* __restrict__ maps) {
    __shared__ __align__(8) u64 bar;
    const u32 lin = blockIdx.x + blockIdx.y * gridDim.x, j = lin / gridDim.y, cy = lin % gridDim.y;
    if ((FLAGS & MF_SEP_BULK) && threadIdx.x == 0) mf_bar_init(&bar, blockDim.x);
    u32 phase = 0;
    maps_sep_subtree<NB, BACKWARD, FLAGS>(t, p, sp, j, cy, gridDim.y, C, mcap, nrhs, n, b, x, sep, buf, map_off, maps, &bar, phase);
}

// C columns per chunk, blockDim.x a multiple of C (threads per column: parts). mf_mapss_*: the
// plain kernels; mf_mapssb_* with bulk copies, mf_mapsse_* with staged contributions,
// mf_mapssbe_* both; mf_mapss{,b,e,be}t_forward: the same with the forward product on the tensor
// cores (`CudaMultifrontal::set_sep_lines`).
// MF_MAPSS_ENTRY: one entry point of the separator-row kernels' signature running SWEEP (also the
// pipelined ones', MF_MAPSS_PIPE_KERNEL below).
#define MF_MAPSS_ENTRY(NAME, SWEEP, NB, BACKWARD, FLAGS, BOUNDS)                                                     \
    extern "C" __global__ void BOUNDS NAME(Tree t, Pass p, SepPass sp, u32 C, u32 mcap, u32 nrhs, u64 n,            \
                                    const double* __restrict__ b, double* __restrict__ x, double* __restrict__ sep,  \
                                    double* __restrict__ buf, const u64* __restrict__ map_off,                       \
                                    const double* __restrict__ maps) {                                               \
        SWEEP<NB, BACKWARD, FLAGS>(t, p, sp, C, mcap, nrhs, n, b, x, sep, buf, map_off, maps);                      \
    }
#define MF_MAPSS_KERNEL(NAME, NB, BACKWARD, FLAGS) MF_MAPSS_KERNEL_BOUNDED(NAME, NB, BACKWARD, FLAGS, )
#define MF_MAPSS_KERNEL_BOUNDED(NAME, NB, BACKWARD, FLAGS, BOUNDS) MF_MAPSS_ENTRY(NAME, maps_sep_sweep, NB, BACKWARD, FLAGS, BOUNDS)
#define MF_MAPSS_BACKWARDS(V, FLAGS)                                \
    MF_MAPSS_KERNEL(mf_mapss##V##_backward_1, 1, true, FLAGS)      \
    MF_MAPSS_KERNEL(mf_mapss##V##_backward_2, 2, true, FLAGS)      \
    MF_MAPSS_KERNEL(mf_mapss##V##_backward_3, 3, true, FLAGS)
#define MF_MAPSS_VARIANT(V, FLAGS)                                  \
    MF_MAPSS_KERNEL(mf_mapss##V##_forward, 1, false, FLAGS)        \
    MF_MAPSS_BACKWARDS(V, FLAGS)
MF_MAPSS_VARIANT(, 0)
MF_MAPSS_VARIANT(b, MF_SEP_BULK)
MF_MAPSS_VARIANT(e, MF_SEP_EXT)
MF_MAPSS_VARIANT(be, MF_SEP_BULK | MF_SEP_EXT)
MF_MAPSS_KERNEL(mf_mapsst_forward, 1, false, MF_SEP_TCF)
MF_MAPSS_KERNEL(mf_mapssbt_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF)
MF_MAPSS_KERNEL(mf_mapsset_forward, 1, false, MF_SEP_EXT | MF_SEP_TCF)
MF_MAPSS_KERNEL(mf_mapssbet_forward, 1, false, MF_SEP_BULK | MF_SEP_EXT | MF_SEP_TCF)
// Round 22: the same with the store side's indices prefetched under the copies (MF_SEP_PREF,
// `CudaMultifrontal::set_sep_prefetch`).
MF_MAPSS_KERNEL(mf_mapsstp_forward, 1, false, MF_SEP_TCF | MF_SEP_PREF)
MF_MAPSS_KERNEL(mf_mapssbtp_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF)
MF_MAPSS_KERNEL(mf_mapssetp_forward, 1, false, MF_SEP_EXT | MF_SEP_TCF | MF_SEP_PREF)
MF_MAPSS_KERNEL(mf_mapssbetp_forward, 1, false, MF_SEP_BULK | MF_SEP_EXT | MF_SEP_TCF | MF_SEP_PREF)
// Round 28: the contributions split over the parts of a column (MF_SEP_XS,
// `CudaMultifrontal::set_sep_ext_split`), on the kernels the upper passes run by default at 256
// columns: forward mf_mapssbtp_forward, backward mf_mapssb_backward_NB. NVRTC 13.0, sm_90: the
// forward 48 registers against 40 (5 blocks of 256 threads an SM where 6 fit; no cap compiles:
// ptxas refuses f64 mma under (256, 6) or (256, 5)); backward NB = 2 59 under (256, 4) against 56,
// NB = 3 73 under (256, 3) against 69 — the plain kernels' resident blocks, no spills; NB = 1 56
// against 48 (4 blocks where 5 fit, no cap compiles), so the host splits only passes of NB ≥ 2.
MF_MAPSS_KERNEL(mf_mapssbtpxs_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_XS)
MF_MAPSS_KERNEL(mf_mapssbxs_backward_1, 1, true, MF_SEP_BULK | MF_SEP_XS)
MF_MAPSS_KERNEL_BOUNDED(mf_mapssbxs_backward_2, 2, true, MF_SEP_BULK | MF_SEP_XS, __launch_bounds__(256, 4))
MF_MAPSS_KERNEL_BOUNDED(mf_mapssbxs_backward_3, 3, true, MF_SEP_BULK | MF_SEP_XS, __launch_bounds__(256, 3))
// Round 29: rows of C + 4 under the tensor-core forward (MF_SEP_LD4, `CudaMultifrontal::set_sep_tc_rows4`)
// on the two forward kernels the default runs at 256 columns: mf_mapssbtp_forward (pass 0, no
// external children) and mf_mapssbtpxs_forward (the upper passes).
MF_MAPSS_KERNEL(mf_mapssbtpl4_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_LD4)
MF_MAPSS_KERNEL(mf_mapssbtpxsl4_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_XS | MF_SEP_LD4)
// MF_SEP_PIPE (round 29, `CudaMultifrontal::set_sep_pipe64`): a block sweeps its subtree's columns
// as chunks of C = 64 double-buffered — chunk k + 2's bulk copies issued into the buffer chunk k
// just left, so chunk k + 1's lines land while chunk k is multiplied and stored. The default runs
// its chunks strictly in turn (stage, issue, wait, product, barrier, stores): a block moved no
// bytes while it computed, and forward 0 reached 70–76 % of the copy rate with 5 blocks an SM.
// Two chunks of 64 columns take the shared memory of one of 128 (round 28's count). (MF_SEP_PIPE is
// defined with the other flags, above: maps_sep_chunk reads it.)
// MF_SEP_PIPE's schedule over a block's `chunks` chunks (sep_pipe's CPU emulation checks it): step k
// issues chunk k (ISSUE, into buffer k & 1; from k = 2 after a proxy fence and a block barrier:
// every thread done with chunk k − 2's buffer), then from k = 1 waits for chunk c = k − 1 (buffer
// c & 1 on bars[c & 1] at parity (c >> 1) & 1, and the cp.async groups: the map, odd-column lines)
// and multiplies and stores it (COMPUTE); STARTED once, after chunk 0's issue, under its copies.
// One call site of each (registers). A macro, not a function of lambdas: that form changed the
// registers of the default kernels, which do not use it (NVRTC 13.0: mf_mapssbp0_backward_2 59
// against 58, round 30).
#define MF_SEP_PIPE_CHUNKS(ISSUE, STARTED, COMPUTE)                                                                   \
    _Pragma("unroll 1") for (u32 k = 0; k <= chunks; ++k) {                                                           \
        if (k < chunks) {                                                                                             \
            if (k >= 2) {                                                                                             \
                mf_fence_async();                                                                                     \
                __syncthreads(); /* every thread done with chunk k − 2's buffer */                                    \
            }                                                                                                         \
            ISSUE;                                                                                                    \
            mf_cp_commit();                                                                                           \
        }                                                                                                             \
        if (k == 0) {                                                                                                 \
            if (chunks > 0) {                                                                                         \
                STARTED;                                                                                              \
            }                                                                                                         \
            continue;                                                                                                 \
        }                                                                                                             \
        const u32 c = k - 1;                                                                                          \
        mf_cp_wait_all(); /* the map (and cp.async lines) */                                                          \
        mf_bar_wait(bars + (c & 1), (c >> 1) & 1);                                                                    \
        __syncthreads(); /* the map, zeroed rows, prefetched indices and staged entries of every thread */            \
        COMPUTE;                                                                                                      \
    }
// maps_sep_subtree with MF_SEP_PIPE: buffers w0 and w0 + p.rows·ld, chunk k in buffer k & 1 on
// bars[k & 1] at parity (k >> 1) & 1 (every thread waits on chunk k before it arrives for k + 2).
// The map and the prefetched indices (MF_SEP_PREF) once a subtree, under chunk 0's copies; chunk 1's issue reads the line sources chunk 0's recorded (the
// same thread records and reads a line). Per column the products and sums of maps_sep_chunk in
// the same order: bit for bit the default's. With an odd count of columns the lines are cp.async
// copies: waited for all at each chunk (correct, less overlap).
template <int NB, bool BACKWARD, int FLAGS>
__device__ __forceinline__ void maps_sep_subtree_pipe(const Tree& t, const Pass& p, const SepPass& sp, u32 j, u32 cy, u32 ny, u32 C, u32 mcap,
                                                      u32 nrhs, u64 n, const double* __restrict__ b, double* __restrict__ x,
                                                      double* __restrict__ sep, double* __restrict__ buf, const u64* __restrict__ map_off,
                                                      const double* __restrict__ maps, u64* bars) {
    static_assert((FLAGS & MF_SEP_BULK) && (FLAGS & MF_SEP_TCF) && !(FLAGS & MF_SEP_EXT), "MF_SEP_PIPE: bulk lines, the tensor-core forward");
    static_assert(!BACKWARD && !(FLAGS & MF_SEP_XS), "MF_SEP_PIPE: forward, unsplit (the others are not built: round 29's registers)");
    extern __shared__ __align__(16) double maps_smem[];
    // Rows of C + 2, or with MF_SEP_LD4 C + 4 (built with MF_SEP_TRIM only: its fewer rows keep the
    // bottom pass's 5 blocks an SM, round 30).
    const int ld = (int)C + ((FLAGS & MF_SEP_LD4) ? 4 : 2);
    const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
    constexpr bool PREF = (FLAGS & MF_SEP_PREF) != 0;
    u64* pre = PREF ? reinterpret_cast<u64*>(maps_smem) : nullptr;
    double* sM = maps_smem + (PREF ? sep_pre_doubles(p.rows) : 0);
    double* w0 = sM + (mcap + 1) / 2 * 2;
    const u32 wsz = p.rows * (u32)ld;  // a buffer's doubles (even: ld is)
    maps_stage_forward_tc(maps + map_off[j] + (u64)R * ldm, ne, s, sM);
    const u32 first = cy * C, step = C * ny, chunks = first < nrhs ? (nrhs - first + step - 1) / step : 0;
    MF_SEP_PIPE_CHUNKS((maps_sep_issue<BACKWARD, FLAGS>(p, sp, j, first + k * step, C, nrhs, n, b, sep, w0 + (k & 1) * wsz, ld, buf, nullptr,
                                                        bars + (k & 1), PREF ? pre_idx(pre) : nullptr, k != 0)),
                       (PREF ? maps_sep_prefetch<BACKWARD, FLAGS>(t, p, sp, j, pre) : void()),
                       (maps_sep_chunk<NB, BACKWARD, FLAGS>(t, p, sp, j, sM, w0 + (c & 1) * wsz, ld, C, first + c * step, nrhs, n, x, sep, buf, nullptr, pre)));
}

// Round 30 (`CudaMultifrontal::set_sep_pipe64_backward`, bench suffix -p64b): the backward
// separator-row launches pipelined as forward 0 above — 64-column chunks through two buffers, chunk
// k + 1's bulk copies landing while chunk k is multiplied and stored. Backward 0 (row-major bottom,
// MF_SEP_BOT, the line sources and owned rows prefetched: 32 768 subtrees and 1.30 ms at 256
// columns on the 2^20 cubic plan, 85–88 % of copy) and backward 1 with the split contributions
// (MF_SEP_XS). Rows of C + 4 as the default backward kernels'; the map ([H K]ᵀ) staged once a
// subtree, landed with chunk 0's lines; MF_SEP_PREF's indices and MF_SEP_XS's entries staged once,
// under chunk 0's copies, past both buffers for the entries. Buffer reuse and parities as
// maps_sep_subtree_pipe's (its schedule: sep_pipe's CPU emulation). The tensor-core product is per
// 16-column half and the stores are copies: bit for bit the default's.
template <int NB, int FLAGS>
__device__ __forceinline__ void maps_sep_subtree_pipe_back(const Tree& t, const Pass& p, const SepPass& sp, u32 j, u32 cy, u32 ny, u32 C, u32 mcap,
                                                           u32 nrhs, u64 n, const double* __restrict__ b, double* __restrict__ x,
                                                           double* __restrict__ sep, double* __restrict__ buf, const u64* __restrict__ map_off,
                                                           const double* __restrict__ maps, u64* bars) {
    static_assert((FLAGS & MF_SEP_BULK) && !(FLAGS & (MF_SEP_EXT | MF_SEP_TCF)), "MF_SEP_PIPE backward: bulk lines, no staged rows");
    extern __shared__ __align__(16) double maps_smem[];
    const int ld = (int)C + 4;
    const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], ldm = maps_ldm(ne);
    constexpr bool PREF = (FLAGS & MF_SEP_PREF) != 0, XS = (FLAGS & MF_SEP_XS) != 0;
    u64* pre = PREF ? reinterpret_cast<u64*>(maps_smem) : nullptr;
    double* sM = maps_smem + (PREF ? sep_pre_doubles(p.rows) : 0);
    double* w0 = sM + (mcap + 1) / 2 * 2;
    const u32 wsz = p.rows * (u32)ld;  // a buffer's doubles (even: ld is)
    u32* xs = XS ? reinterpret_cast<u32*>(w0 + 2 * wsz) : nullptr;
    maps_stage_async<true>(maps + map_off[j], R * ldm, ldm, sM);
    const u32 first = cy * C, step = C * ny, chunks = first < nrhs ? (nrhs - first + step - 1) / step : 0;
    MF_SEP_PIPE_CHUNKS((maps_sep_issue<true, FLAGS>(p, sp, j, first + k * step, C, nrhs, n, b, sep, w0 + (k & 1) * wsz, ld, buf, nullptr,
                                                    bars + (k & 1), PREF ? pre_idx(pre) : nullptr, k != 0)),
                       ((PREF ? maps_sep_prefetch<true, FLAGS>(t, p, sp, j, pre) : void()), (XS ? maps_sep_stage_ext(p, j, ne, blockDim.x / C, xs) : void())),
                       (maps_sep_chunk<NB, true, FLAGS>(t, p, sp, j, sM, w0 + (c & 1) * wsz, ld, C, first + c * step, nrhs, n, x, sep, buf, nullptr, pre, xs)));
}

// A block per (subtree, column block) as maps_sep_sweep, the chunks pipelined (MF_SEP_PIPE).
template <int NB, bool BACKWARD, int FLAGS>
__device__ void maps_sep_sweep_pipe(const Tree& t, const Pass& p, const SepPass& sp, u32 C, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                                    double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf, const u64* __restrict__ map_off,
                                    const double* __restrict__ maps) {
    __shared__ __align__(8) u64 bars[2];
    const u32 lin = blockIdx.x + blockIdx.y * gridDim.x, j = lin / gridDim.y, cy = lin % gridDim.y;
    if (threadIdx.x == 0) {
        mf_bar_init(bars, blockDim.x);
        mf_bar_init(bars + 1, blockDim.x);
    }
    __syncthreads();
    if constexpr (BACKWARD)
        maps_sep_subtree_pipe_back<NB, FLAGS>(t, p, sp, j, cy, gridDim.y, C, mcap, nrhs, n, b, x, sep, buf, map_off, maps, bars);
    else
        maps_sep_subtree_pipe<NB, BACKWARD, FLAGS>(t, p, sp, j, cy, gridDim.y, C, mcap, nrhs, n, b, x, sep, buf, map_off, maps, bars);
}
#define MF_MAPSS_PIPE_KERNEL(NAME, NB, BACKWARD, FLAGS) MF_MAPSS_PIPE_KERNEL_BOUNDED(NAME, NB, BACKWARD, FLAGS, )
#define MF_MAPSS_PIPE_KERNEL_BOUNDED(NAME, NB, BACKWARD, FLAGS, BOUNDS) MF_MAPSS_ENTRY(NAME, maps_sep_sweep_pipe, NB, BACKWARD, FLAGS, BOUNDS)
// Forward 0's default kernel (mf_mapssbtp_forward's flags) with its chunks pipelined. NVRTC 13.0,
// sm_90: 42 registers against 40, no spills (allocated 48: 5 blocks of 256 threads an SM by
// registers, 6 before; 5 by shared memory either way). Forward 1's split kernel pipelined
// (mf_mapssbtpxs_forward's flags) took 64 against 48 — 4 blocks an SM where 5 run, and no cap
// compiles the f64 mma (round 28) —, so it is not built: the split passes run unpipelined.
MF_MAPSS_PIPE_KERNEL(mf_mapssbtp64_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_PIPE)
// Round 30: forward 0's kernels without the zeroed Schur rows (MF_SEP_TRIM, `CudaMultifrontal::set_sep_trim`):
// the default's flags, with rows of C + 4 (MF_SEP_LD4), pipelined (MF_SEP_PIPE), and pipelined with
// rows of C + 4 — the pair round 29 could not fit 5 blocks an SM: 3 rows fewer a buffer on the
// 2^20 plan (35 staged rows against 38) make room for the wider rows.
MF_MAPSS_KERNEL(mf_mapssbtpz_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_TRIM)
MF_MAPSS_KERNEL(mf_mapssbtpl4z_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_LD4 | MF_SEP_TRIM)
MF_MAPSS_KERNEL(mf_mapssbtpza_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_TRIM | MF_SEP_ADDS)
MF_MAPSS_PIPE_KERNEL(mf_mapssbtp64z_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_PIPE | MF_SEP_TRIM)
MF_MAPSS_PIPE_KERNEL(mf_mapssbtp64l4z_forward, 1, false, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_PIPE | MF_SEP_LD4 | MF_SEP_TRIM)

// Round 30: the backward launches pipelined (maps_sep_subtree_pipe_back) under the caps of the
// kernels they replace, which keep those kernels' resident blocks at 256 threads: backward 0
// (mf_mapssbp0_backward_NB's flags) and the split backward 1 (mf_mapssbxs_backward_NB's; the host
// splits passes of NB ≥ 2 only). NVRTC 13.0, sm_90, no spills: backward 0 NB = 2 58 registers under
// (256, 4) as its twin, NB = 3 73 under (256, 3) against 76; backward 1 NB = 2 62 under (256, 4)
// against 59, NB = 3 78 under (256, 3) against 73. Not built: backward 0 at NB = 1 (56 uncapped
// against the twin's 40 — 4 blocks of 256 threads an SM where 6 fit by registers; (256, 5) and
// (256, 6) do not compile the f64 mma), so passes of NB = 1 run unpipelined.
MF_MAPSS_PIPE_KERNEL_BOUNDED(mf_mapssbp064_backward_2, 2, true, MF_SEP_BULK | MF_SEP_PREF | MF_SEP_BOT | MF_SEP_PIPE, __launch_bounds__(256, 4))
MF_MAPSS_PIPE_KERNEL_BOUNDED(mf_mapssbp064_backward_3, 3, true, MF_SEP_BULK | MF_SEP_PREF | MF_SEP_BOT | MF_SEP_PIPE, __launch_bounds__(256, 3))
MF_MAPSS_PIPE_KERNEL_BOUNDED(mf_mapssbxs64_backward_2, 2, true, MF_SEP_BULK | MF_SEP_XS | MF_SEP_PIPE, __launch_bounds__(256, 4))
MF_MAPSS_PIPE_KERNEL_BOUNDED(mf_mapssbxs64_backward_3, 3, true, MF_SEP_BULK | MF_SEP_XS | MF_SEP_PIPE, __launch_bounds__(256, 3))

// Round 25: the backward kernels with bulk lines on a row-major bottom pass (MF_SEP_BOT), the line
// sources and the owned rows' places prefetched under the first chunk's copies
// (`CudaMultifrontal::set_sep_back_prefetch`), under a register cap that keeps the resident blocks
// per SM of mf_mapssb_backward_NB at 256 threads where it would lose one (NVRTC 13.0, sm_90: NB = 2
// 72 registers uncapped, 58 under (256, 4) against 56; NB = 3 87, 76 under (256, 3) against 69;
// NB = 1 takes 40 uncapped, fewer than mf_mapssb_backward_1's 48: no cap). Round 24's prefetched
// kernels ran on every pass uncapped: 79 registers against 56 (NB = 2) cost a block per SM at 64
// and 256 columns, and the upper passes have no owned rows to prefetch.
#define MF_MAPSS_BOTTOM_BACKWARD(NB, BOUNDS) \
    MF_MAPSS_KERNEL_BOUNDED(mf_mapssbp0_backward_##NB, NB, true, MF_SEP_BULK | MF_SEP_PREF | MF_SEP_BOT, BOUNDS)
MF_MAPSS_BOTTOM_BACKWARD(1, )
MF_MAPSS_BOTTOM_BACKWARD(2, __launch_bounds__(256, 4))
MF_MAPSS_BOTTOM_BACKWARD(3, __launch_bounds__(256, 3))

// The separator-row sweep pipelined (`CudaMultifrontal::set_pipe_separators`): a block walks
// (subtree, chunk) items as the pipelined kernels do (pipe_walk), the next item's gather and map
// in flight while it computes and stores the current one, so a block's shared memory is never idle
// waiting for its own gather; same gathers, products and stores as maps_sep_sweep.
template <int NB, bool BACKWARD>
__device__ void maps_sep_pipe(const Tree& t, const Pass& p, const SepPass& sp, u32 count, u32 C, u32 mcap, u32 nrhs, u64 n,
                              const double* __restrict__ b, double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf,
                              const u64* __restrict__ map_off, const double* __restrict__ maps) {
    extern __shared__ __align__(16) double mapssp_smem[];
    const int ld = (int)C + 1;
    auto issue = [&](u32 j, u32 c0, double* w, double* map) {
        if (map != nullptr) {
            const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], ldm = maps_ldm(ne);
            maps_stage_async<BACKWARD>(maps + map_off[j] + (BACKWARD ? 0 : (u64)R * ldm), BACKWARD ? R * ldm : ne * (R - ne), ldm, map);
        }
        maps_sep_issue<BACKWARD>(p, sp, j, c0, C, nrhs, n, b, sep, w, ld);
    };
    auto chunk = [&](u32 j, u32 c0, const double* sM, double* w) { maps_sep_chunk<NB, BACKWARD>(t, p, sp, j, sM, w, ld, C, c0, nrhs, n, x, sep, buf); };
    pipe_walk(count, C, nrhs, mapssp_smem, (mcap + 1) / 2 * 2, p.rows * (u32)ld, issue, chunk);
}

extern "C" __global__ void mf_mapssp_forward(Tree t, Pass p, SepPass sp, u32 count, u32 C, u32 mcap, u32 nrhs, u64 n, const double* __restrict__ b,
                                             double* __restrict__ x, double* __restrict__ sep, double* __restrict__ buf,
                                             const u64* __restrict__ map_off, const double* __restrict__ maps) {
    maps_sep_pipe<1, false>(t, p, sp, count, C, mcap, nrhs, n, b, x, sep, buf, map_off, maps);
}
#define MF_MAPSSP_BACKWARD(NB)                                                                                        \
    extern "C" __global__ void mf_mapssp_backward_##NB(Tree t, Pass p, SepPass sp, u32 count, u32 C, u32 mcap,        \
                                                       u32 nrhs, u64 n, const double* __restrict__ b,                 \
                                                       double* __restrict__ x, double* __restrict__ sep,              \
                                                       double* __restrict__ buf, const u64* __restrict__ map_off,     \
                                                       const double* __restrict__ maps) {                             \
        maps_sep_pipe<NB, true>(t, p, sp, count, C, mcap, nrhs, n, b, x, sep, buf, map_off, maps);                    \
    }
MF_MAPSSP_BACKWARD(1)
MF_MAPSSP_BACKWARD(2)
MF_MAPSSP_BACKWARD(3)

// ---- One launch for the passes near the root (`MapsKernel::SeparatorsTop`) ----
// The passes of few subtrees (a few hundred and fewer; every row in sep) cost launch and tail
// latency each way. Here one launch walks all of them, forward then backward, as a list of steps
// (direction, pass, subtree) × chunks of 32 columns: a block takes items in list order from a
// global counter, waits (one thread spinning) until the items it depends on — forward its external
// children's subtrees, backward the subtree above it (the top subtree: its own forward) at the same
// chunk — have published `epoch` in their flag, does the item (gather, product, store as
// maps_sep_sweep) and publishes its own flag. An item depends only on items earlier in the list,
// which blocks already took and finish without waiting on later ones: no deadlock, whatever is
// resident. Data written by other blocks of this launch are read through L2 (__ldcg), never L1.
__device__ __forceinline__ void mf_wait_flag(const u32* flag, u32 epoch) {
    while (*(volatile const u32*)flag != epoch) {
#if __CUDA_ARCH__ >= 700
        __nanosleep(64);
#endif
    }
}

// An item of a walk: its step (pass q, subtree j, direction) and chunk k, claimed from the
// global counter by the block (`false`: none left). Ends the block's previous item first.
struct WalkItem {
    u32 st, k, q, j;
    bool backward;
};
__device__ __forceinline__ bool mf_walk_claim(const u32* __restrict__ steps, u32 nsteps, u32 nchunks, u32* __restrict__ counter, WalkItem& it) {
    __shared__ u32 s_item;
    __syncthreads();  // the previous item's shared data consumed
    if (threadIdx.x == 0) s_item = atomicAdd(counter, 1u);
    __syncthreads();
    const u32 item = s_item;
    if (item >= nsteps * nchunks) return false;
    it.st = item / nchunks;
    it.k = item - it.st * nchunks;
    it.q = steps[2 * it.st] & 0x7fffffffu;
    it.j = steps[2 * it.st + 1];
    it.backward = (steps[2 * it.st] >> 31) != 0;
    return true;
}
// One thread waits for the item's dependencies (the same chunk of the steps it depends on); the
// block then reads their data.
__device__ __forceinline__ void mf_walk_wait(const WalkItem& it, const u32* __restrict__ dep_ptr, const u32* __restrict__ dep, u32 nchunks,
                                             const u32* flags, u32 epoch) {
    if (threadIdx.x == 0) {
        for (u32 d = dep_ptr[it.st]; d < dep_ptr[it.st + 1]; ++d) mf_wait_flag(flags + (u64)dep[d] * nchunks + it.k, epoch);
        __threadfence();
    }
    __syncthreads();
}
// Publishes the item: every thread's stores visible device-wide, then its flag.
__device__ __forceinline__ void mf_walk_publish(const WalkItem& it, u32 nchunks, u32* flags, u32 epoch) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(flags + (u64)it.st * nchunks + it.k, epoch);
}

extern "C" __global__ void mf_mapss_top(Tree t, const Pass* __restrict__ passes, const u64* __restrict__ map_offs, const u32* __restrict__ steps,
                                        const u32* __restrict__ dep_ptr, const u32* __restrict__ dep, u32 nsteps, u32 nchunks,
                                        u32* __restrict__ flags, u32* __restrict__ counter, u32 epoch, u32 mcap, u32 nrhs,
                                        double* __restrict__ sep, double* __restrict__ buf, const double* __restrict__ maps) {
    extern __shared__ __align__(16) double walk_smem[];
    const u32 C = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = C >> 5;
    const int ld = (int)C + 1;
    double* sM = walk_smem;
    double* w = walk_smem + (mcap + 1) / 2 * 2;
    WalkItem it;
    while (mf_walk_claim(steps, nsteps, nchunks, counter, it)) {
        const u32 k = it.k, c0 = k * C, j = it.j;
        const bool backward = it.backward;
        const Pass& p = passes[it.q];
        const u32 r0 = p.row_ptr[j], R = p.row_ptr[j + 1] - r0, ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
        const u32* rdof = p.row_dof + r0;
        const u64 moff = reinterpret_cast<const u64*>(map_offs[it.q])[j];
        // The map (read-only: cached loads) while the dependencies finish.
        {
            const u32 cnt = backward ? R * ldm : ne * s;
            const double* src = maps + moff + (backward ? 0 : (u64)R * ldm);
            for (u32 i = tid; i < cnt; i += C) mf_cp8(sM + (backward ? i + i / ldm * MF_TC_PAD : i), src + i, true);
            mf_cp_commit();
        }
        mf_walk_wait(it, dep_ptr, dep, nchunks, flags, epoch);
        const u32 last = backward ? R : ne;
        for (u32 i = warp; i < R; i += nw) {
            const double* src = sep + (u64)rdof[i] * nrhs + c0;
            for (u32 col = lane; col < C; col += 32) w[i * ld + col] = i < last && c0 + col < nrhs ? __ldcg(src + col) : 0.0;
        }
        mf_cp_wait_all();
        __syncthreads();
        const bool mine = c0 + tid < nrhs;
        double* wc = w + tid;
        if (mine)
            for (u32 e = p.ext_ptr[j]; e < p.ext_ptr[j + 1]; ++e) {
                const u32 row = p.ext_row[e];
                if (!backward || row < ne) wc[row * ld] += __ldcg(buf + p.ext_src[e] * nrhs + c0 + tid);
            }
        if (!backward) {
            const u32 root = p.nodes[p.sub_ptr[j + 1] - 1];
            if (mine) maps_apply_forward(sM, wc, ld, ne, s, buf + (t.slot[root] + t.e[root]) * nrhs + c0 + tid, nrhs);
        } else {
            __syncwarp();
            maps_tc_backward<3>(sM, ldm, w, ld, R, ne, C);
            __syncthreads();
            for (u32 i = warp; i < ne; i += nw) {
                double* dst = sep + (u64)rdof[i] * nrhs + c0;
                for (u32 col = lane; col < C && c0 + col < nrhs; col += 32) dst[col] = w[i * ld + col];
            }
        }
        mf_walk_publish(it, nchunks, flags, epoch);
    }
}

// ---- The walk by whole lines (`SepLines::top`, round 19) ----
// The same list of items as mf_mapss_top, each done by the separator-row kernels' own gather and
// chunk (maps_sep_issue, maps_sep_chunk with FLAGS: bulk lines, staged contributions, and with
// MF_SEP_TCF the forward product on the tensor cores), so an item waits for memory once — every
// line of sep and of the children's contributions in one round of bulk copies — instead of a
// warp's row after row and a dependent load per contribution. Bulk copies read through L2, so
// the lines other blocks of this launch wrote are seen (after their flags and a proxy fence);
// the host runs it on sm_90 with an even number of columns only (16-byte lines). C columns per
// item, blockDim.x / C threads per column; rows of C + 2 (forward on the tensor cores) or C + 4.
__device__ __forceinline__ void mf_fence_async_global() {
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
#endif
}

// The walk's per-item timeline (`CudaMultifrontal::set_walk_trace`, round 20): where `trace` is
// not null, thread 0 writes the device's global nanosecond timer when the item is claimed, when
// its dependencies are done and when it is published (three words per item, item = step·chunks +
// chunk), so the host can tell per level how long the items waited and how long they worked.
__device__ __forceinline__ void mf_walk_stamp(u64* trace, const WalkItem& it, u32 nchunks, u32 at) {
    if (trace != nullptr && threadIdx.x == 0) {
        u64 now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        trace[3 * ((u64)it.st * nchunks + it.k) + at] = now;
    }
}

template <int FLAGS>
__device__ void maps_sep_walk(const Tree& t, const Pass* __restrict__ passes, const u64* __restrict__ map_offs, const u32* __restrict__ steps,
                              const u32* __restrict__ dep_ptr, const u32* __restrict__ dep, u32 nsteps, u32 nchunks, u32* __restrict__ flags,
                              u32* __restrict__ counter, u32 epoch, u32 C, u32 mcap, u32 nrhs, double* __restrict__ sep,
                              double* __restrict__ buf, const double* __restrict__ maps, u64* __restrict__ trace) {
    extern __shared__ __align__(16) double walkl_smem[];
    __shared__ __align__(8) u64 bar;
    constexpr int BACK = FLAGS & ~MF_SEP_TCF;
    const SepPass sp{nullptr, nullptr, nullptr, 1};
    double* sM = walkl_smem;
    double* w = walkl_smem + (mcap + 1) / 2 * 2;
    if (threadIdx.x == 0) mf_bar_init(&bar, blockDim.x);
    WalkItem it;
    for (u32 phase = 0;; phase ^= 1) {
        mf_fence_async();  // the last item's reads of w before this item's bulk copies into it
        if (!mf_walk_claim(steps, nsteps, nchunks, counter, it)) return;
        mf_walk_stamp(trace, it, nchunks, 0);
        const u32 j = it.j, c0 = it.k * C;
        const Pass p = passes[it.q];  // by value: its fields loaded at once, not again after each store
        const u32 R = p.row_ptr[j + 1] - p.row_ptr[j], ne = p.elim[j], s = R - ne, ldm = maps_ldm(ne);
        const int ld = (int)C + (!it.backward && (FLAGS & MF_SEP_TCF) ? 2 : 4);
        double* ew = w + p.rows * ld;
        const double* mp = maps + reinterpret_cast<const u64*>(map_offs[it.q])[j];
        // The map (read-only) while the dependencies finish.
        if (it.backward)
            maps_stage_async<true>(mp, R * ldm, ldm, sM);
        else if (FLAGS & MF_SEP_TCF)
            maps_stage_forward_tc(mp + (u64)R * ldm, ne, s, sM);
        else
            maps_stage_async<false>(mp + (u64)R * ldm, ne * s, ldm, sM);
        mf_walk_wait(it, dep_ptr, dep, nchunks, flags, epoch);
        mf_walk_stamp(trace, it, nchunks, 1);
        mf_fence_async_global();  // the dependencies' generic stores before this thread's bulk reads
        if (it.backward)
            maps_sep_issue<true, BACK>(p, sp, j, c0, C, nrhs, 0, sep, sep, w, ld, buf, ew, &bar);
        else
            maps_sep_issue<false, FLAGS>(p, sp, j, c0, C, nrhs, 0, sep, sep, w, ld, buf, ew, &bar);
        mf_cp_commit();
        mf_cp_wait_all();
        mf_bar_wait(&bar, phase);
        __syncthreads();
        if (it.backward)
            maps_sep_chunk<3, true, BACK>(t, p, sp, j, sM, w, ld, C, c0, nrhs, 0, nullptr, sep, buf, ew);
        else
            maps_sep_chunk<1, false, FLAGS>(t, p, sp, j, sM, w, ld, C, c0, nrhs, 0, nullptr, sep, buf, ew);
        mf_walk_publish(it, nchunks, flags, epoch);
        mf_walk_stamp(trace, it, nchunks, 2);
    }
}

#define MF_MAPSS_WALK(NAME, FLAGS)                                                                                    \
    extern "C" __global__ void NAME(Tree t, const Pass* __restrict__ passes, const u64* __restrict__ map_offs,        \
                                    const u32* __restrict__ steps, const u32* __restrict__ dep_ptr,                   \
                                    const u32* __restrict__ dep, u32 nsteps, u32 nchunks, u32* __restrict__ flags,    \
                                    u32* __restrict__ counter, u32 epoch, u32 C, u32 mcap, u32 nrhs,                  \
                                    double* __restrict__ sep, double* __restrict__ buf, const double* __restrict__ maps, \
                                    u64* __restrict__ trace) {                                                        \
        maps_sep_walk<FLAGS>(t, passes, map_offs, steps, dep_ptr, dep, nsteps, nchunks, flags, counter, epoch, C, mcap, \
                             nrhs, sep, buf, maps, trace);                                                            \
    }
MF_MAPSS_WALK(mf_mapssbe_top, MF_SEP_BULK | MF_SEP_EXT)
MF_MAPSS_WALK(mf_mapssbet_top, MF_SEP_BULK | MF_SEP_EXT | MF_SEP_TCF)

// ---- The bottom forward pass chained with pass 1 (`CudaMultifrontal::set_sep_chain`, round 23) ----
// Forward 0 stores each bottom subtree's root contribution rows to buf and b at its owned
// separator rows to sep; forward 1 read them back from memory a launch later. Here a block of the
// bottom pass, once its subtree j is stored, counts itself in for each pass-1 subtree J that reads
// j's stores (`dep[dep_ptr[j]..]`, per column block); the block that brings J's count to
// `need[J]` goes on to J's sweep (the same chunks and products as forward 1's launch, with the
// bottom's C and column blocks) while its children's lines are still in L2. No block waits on
// another (the last to arrive does the work): no deadlock, whatever is resident. FLAGS has
// MF_SEP_BULK | MF_SEP_L2: what J reads of other blocks' stores comes through L2, never L1 — the
// sep rows by bulk copies after a proxy fence, the children's contributions by __ldcg (not staged:
// MF_SEP_EXT's rows would cost the bottom pass resident blocks); the host runs it with an even
// number of columns only (16-byte lines), `count` zeroed before each launch. Measured slower on the
// H200 (round 23: 1184 µs against 812 + 229 for the two launches at 256 columns): opt-in.
template <int FLAGS>
__device__ void maps_sep_chain(const Tree& t, const Pass& p0, const SepPass& sp0, const Pass& p1, const SepPass& sp1, u32 C, u32 mcap0,
                               u32 mcap1, u32 nrhs, u64 n, const double* __restrict__ b, double* __restrict__ sep, double* __restrict__ buf,
                               const u64* __restrict__ map_off0, const u64* __restrict__ map_off1, const double* __restrict__ maps,
                               const u32* __restrict__ dep_ptr, const u32* __restrict__ dep, const u32* __restrict__ need, u32* __restrict__ count) {
    __shared__ __align__(8) u64 bar;
    __shared__ u32 s_last;
    const u32 lin = blockIdx.x + blockIdx.y * gridDim.x, j = lin / gridDim.y, cy = lin % gridDim.y;
    if (threadIdx.x == 0) mf_bar_init(&bar, blockDim.x);
    u32 phase = 0;
    maps_sep_subtree<1, false, FLAGS>(t, p0, sp0, j, cy, gridDim.y, C, mcap0, nrhs, n, b, nullptr, sep, buf, map_off0, maps, &bar, phase);
    for (u32 d = dep_ptr[j]; d < dep_ptr[j + 1]; ++d) {
        const u32 J = dep[d];
        __threadfence();  // this block's stores (subtree j, or the last J) visible device-wide
        __syncthreads();  // … by every thread, and every read of shared memory done
        if (threadIdx.x == 0) {
            s_last = atomicAdd(count + (u64)J * gridDim.y + cy, 1u) + 1 == need[J];
            if (s_last) __threadfence();  // acquire: J's other readers' stores before ours
        }
        __syncthreads();
        if (s_last) {
            mf_fence_async_global();  // those generic stores before this thread's bulk reads of them
            maps_sep_subtree<1, false, FLAGS>(t, p1, sp1, J, cy, gridDim.y, C, mcap1, nrhs, n, b, nullptr, sep, buf, map_off1, maps, &bar, phase);
        }
    }
}

#define MF_MAPSS_CHAIN(NAME, FLAGS)                                                                                     \
    extern "C" __global__ void NAME(Tree t, Pass p0, SepPass sp0, Pass p1, SepPass sp1, u32 C, u32 mcap0, u32 mcap1, u32 nrhs, \
                                    u64 n, const double* __restrict__ b, double* __restrict__ sep, double* __restrict__ buf, \
                                    const u64* __restrict__ map_off0, const u64* __restrict__ map_off1,                  \
                                    const double* __restrict__ maps, const u32* __restrict__ dep_ptr,                    \
                                    const u32* __restrict__ dep, const u32* __restrict__ need, u32* __restrict__ count) { \
        maps_sep_chain<FLAGS>(t, p0, sp0, p1, sp1, C, mcap0, mcap1, nrhs, n, b, sep, buf, map_off0, map_off1, maps, dep_ptr, \
                              dep, need, count);                                                                       \
    }
// Bulk lines, with the forward product on the tensor cores, and that with the indices prefetched
// (the row-major default's).
MF_MAPSS_CHAIN(mf_mapssb_chain, MF_SEP_BULK | MF_SEP_L2)
MF_MAPSS_CHAIN(mf_mapssbt_chain, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_L2)
MF_MAPSS_CHAIN(mf_mapssbtp_chain, MF_SEP_BULK | MF_SEP_TCF | MF_SEP_PREF | MF_SEP_L2)
