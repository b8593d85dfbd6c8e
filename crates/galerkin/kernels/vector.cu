// Vector kernels of the CUDA backend. Each operation is a small functor applied by one of two
// grid-stride drivers (map / reduce), so the 16-byte-access and tail logic exists once.
// A functor's operator()<V>(k) handles element k in units of V: V = double2 for the bulk,
// V = double for the single odd tail element.

// Apply `op` to every element of an n-vector: double2 pairs in a grid-stride loop, tail by thread 0.
template <class Op> __device__ __forceinline__ void map_all(u64 n, const Op& op) {
    const u64 pairs = n / 2, stride = grid_threads();
    for (u64 k = global_thread(); k < pairs; k += stride) op.template operator()<double2>(k);
    if (global_thread() == 0 && (n & 1)) op.template operator()<double>(n - 1);
}

// Like map_all, but `op` returns a partial sum; each block writes its sum to partials[blockIdx.x].
// The fixed grid makes the summation order, hence the result, deterministic run to run.
template <class Op> __device__ __forceinline__ void reduce_all(u64 n, const Op& op, double* partials) {
    const u64 pairs = n / 2, stride = grid_threads();
    double acc = 0.0;
    for (u64 k = global_thread(); k < pairs; k += stride) acc += op.template operator()<double2>(k);
    if (global_thread() == 0 && (n & 1)) acc += op.template operator()<double>(n - 1);
    acc = block_sum(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

struct FillOp {
    double* x; double v;
    template <class V> __device__ void operator()(u64 k) const { store<V>(x, k, splat_as(v, V())); }
};
struct ScaleOp {
    double* x; double a;
    template <class V> __device__ void operator()(u64 k) const { store<V>(x, k, mul(a, load<V>(x, k))); }
};
struct AxpyOp {
    double a; const double* x; double* y;
    template <class V> __device__ void operator()(u64 k) const {
        store<V>(y, k, madd(a, load<V>(x, k), load<V>(y, k)));
    }
};
struct AxpbyOp {
    double a; const double* x; double b; double* y;
    template <class V> __device__ void operator()(u64 k) const {
        store<V>(y, k, madd(a, load<V>(x, k), mul(b, load<V>(y, k))));
    }
};
struct PointwiseMultOp {
    const double* d; const double* x; double* y;
    template <class V> __device__ void operator()(u64 k) const { store<V>(y, k, mul(load<V>(d, k), load<V>(x, k))); }
};
struct DotOp {
    const double* x; const double* y;
    template <class V> __device__ double operator()(u64 k) const { return dot_lanes(load<V>(x, k), load<V>(y, k)); }
};
// CG's fused update: x += αp; r -= αq; returns the new r·r, so each vector is streamed once.
struct CgUpdateOp {
    double alpha; const double* p; const double* q; double* x; double* r;
    template <class V> __device__ double operator()(u64 k) const {
        store<V>(x, k, madd(alpha, load<V>(p, k), load<V>(x, k)));
        const V rk = madd(-alpha, load<V>(q, k), load<V>(r, k));
        store<V>(r, k, rk);
        return dot_lanes(rk, rk);
    }
};

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) vec_fill(double* x, double v, u64 n) {
    map_all(n, FillOp{x, v});
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) vec_scale(double* x, double a, u64 n) {
    map_all(n, ScaleOp{x, a});
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_axpy(double a, const double* __restrict__ x, double* __restrict__ y, u64 n) {
    map_all(n, AxpyOp{a, x, y});
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_axpby(double a, const double* __restrict__ x, double b, double* __restrict__ y, u64 n) {
    map_all(n, AxpbyOp{a, x, b, y});
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_pointwise_mult(const double* __restrict__ d, const double* __restrict__ x, double* __restrict__ y, u64 n) {
    map_all(n, PointwiseMultOp{d, x, y});
}
// x and y may be the same vector (‖x‖²), so no __restrict__ here either.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_dot_partials(const double* x, const double* y, u64 n, double* partials) {
    reduce_all(n, DotOp{x, y}, partials);
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_cg_update_partials(double alpha, const double* __restrict__ p, const double* __restrict__ q,
                       double* __restrict__ x, double* __restrict__ r, u64 n, double* partials) {
    reduce_all(n, CgUpdateOp{alpha, p, q, x, r}, partials);
}

// Second stage of every reduction: one block sums the per-block partials into out[0].
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_sum_partials(const double* __restrict__ partials, u32 count, double* __restrict__ out) {
    double acc = 0.0;
    for (u32 i = threadIdx.x; i < count; i += GALERKIN_BLOCK) acc += partials[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[0] = acc;
}

// Several vectors at once (`backend::cuda::multi`, GMRES's classical Gram–Schmidt): up to
// MULTI_VECS device pointers, and coefficients, passed by value — no pointer table to upload.
#define MULTI_VECS 32
struct VecList {
    const double* v[MULTI_VECS];
    double c[MULTI_VECS];
};
// The many-vector kernels in shapes (`backend::cuda::multi::MultiShape`, timed by `galerkin bench
// --gram-schmidt`): a thread reads U units of V (double or double2) a step, a grid stride apart, so U·k
// loads are in flight per thread; the elements past the last whole V (at most one) by thread 0.
template <class V> __device__ __forceinline__ V zero_as() { return splat_as(0.0, V()); }

// partials[j·gridDim.x + block] = the block's part of x·v_j, j < k (then `vec_sum_partials_many`).
template <class V, int U>
__device__ __forceinline__ void dots_partials(const VecList& vs, int k, const double* __restrict__ x, u64 n, double* __restrict__ partials) {
    constexpr u64 W = sizeof(V) / sizeof(double);
    const u64 units = n / W, stride = grid_threads();
    double acc[MULTI_VECS];
#pragma unroll
    for (int j = 0; j < MULTI_VECS; ++j) acc[j] = 0.0;
    for (u64 i = global_thread(); i < units; i += U * stride) {
        V xs[U];
#pragma unroll
        for (int u = 0; u < U; ++u) xs[u] = i + u * stride < units ? load<V>(x, i + u * stride) : zero_as<V>();
#pragma unroll
        for (int j = 0; j < MULTI_VECS; ++j) {
            if (j < k) {
#pragma unroll
                for (int u = 0; u < U; ++u)
                    if (i + u * stride < units) acc[j] += dot_lanes(xs[u], load<V>(vs.v[j], i + u * stride));
            }
        }
    }
    if (global_thread() == 0) {
        for (u64 e = units * W; e < n; ++e) {
#pragma unroll
            for (int j = 0; j < MULTI_VECS; ++j)
                if (j < k) acc[j] += x[e] * vs.v[j][e];
        }
    }
#pragma unroll
    for (int j = 0; j < MULTI_VECS; ++j) {
        if (j < k) {  // (k is the launch's: every thread of the block takes the same branches)
            const double s = block_sum(acc[j]);
            if (threadIdx.x == 0) partials[(u64)j * gridDim.x + blockIdx.x] = s;
        }
    }
}
// y += Σ_{j<k} c_j v_j (y is none of the v_j), each product added with one rounding (fma).
template <class V, int U>
__device__ __forceinline__ void add_combination(const VecList& vs, int k, double* __restrict__ y, u64 n) {
    constexpr u64 W = sizeof(V) / sizeof(double);
    const u64 units = n / W, stride = grid_threads();
    for (u64 i = global_thread(); i < units; i += U * stride) {
        V acc[U];
#pragma unroll
        for (int u = 0; u < U; ++u) acc[u] = i + u * stride < units ? load<V>(y, i + u * stride) : zero_as<V>();
#pragma unroll
        for (int j = 0; j < MULTI_VECS; ++j) {
            if (j < k) {
#pragma unroll
                for (int u = 0; u < U; ++u)
                    if (i + u * stride < units) acc[u] = madd(vs.c[j], load<V>(vs.v[j], i + u * stride), acc[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (i + u * stride < units) store<V>(y, i + u * stride, acc[u]);
    }
    if (global_thread() == 0) {
        for (u64 e = units * W; e < n; ++e) {
            double acc = y[e];
#pragma unroll
            for (int j = 0; j < MULTI_VECS; ++j)
                if (j < k) acc = madd(vs.c[j], vs.v[j][e], acc);
            y[e] = acc;
        }
    }
}
// The shapes' entry points, in the order of `MultiKernel::ALL`: doubles one a step (s1), double2 pairs
// one, two or four a step (p1, p2, p4).
#define MULTI_SHAPE(name, V, U)                                                                                      \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)                                                     \
    vec_dots_partials_##name(VecList vs, int k, const double* __restrict__ x, u64 n, double* __restrict__ partials) { \
        dots_partials<V, U>(vs, k, x, n, partials);                                                                  \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)                                                     \
    vec_add_combination_##name(VecList vs, int k, double* __restrict__ y, u64 n) { add_combination<V, U>(vs, k, y, n); }
MULTI_SHAPE(s1, double, 1)
MULTI_SHAPE(p1, double2, 1)
MULTI_SHAPE(p2, double2, 2)
MULTI_SHAPE(p4, double2, 4)

// Block j sums row j of partials [gridDim.x][count] into out[j].
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_sum_partials_many(const double* __restrict__ partials, u32 count, double* __restrict__ out) {
    double acc = 0.0;
    for (u32 i = threadIdx.x; i < count; i += GALERKIN_BLOCK) acc += partials[(u64)blockIdx.x * count + i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

// STREAM triad a = b + s·c, used only to measure the achievable memory bandwidth.
struct TriadOp {
    double* a; const double* b; double s; const double* c;
    template <class V> __device__ void operator()(u64 k) const { store<V>(a, k, madd(s, load<V>(c, k), load<V>(b, k))); }
};
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
vec_triad(double* __restrict__ a, const double* __restrict__ b, double s, const double* __restrict__ c, u64 n) {
    map_all(n, TriadOp{a, b, s, c});
}

// ---- Jacobi-PCG resident on the device (backend::cuda::pcg) ----
// The scalars never leave the device inside a batch of iterations: state s = [ρ_even, ρ_odd,
// flag, ‖r‖² per iteration of the batch…]. Every block re-sums the previous kernel's per-block
// partials itself (a few hundred doubles), so no second-stage launch and no host round trip.

// Sum of `count` partials, in every block.
__device__ __forceinline__ double sum_in_block(const double* __restrict__ partials, u32 count) {
    double acc = 0.0;
    for (u32 i = threadIdx.x; i < count; i += GALERKIN_BLOCK) acc += partials[i];
    return block_sum(acc);
}

// α = ρ / (p·q) from the p·q partials; r −= α q; partials of r·D⁻¹r and r·r. Block 0 keeps α in
// s[alpha_at] for `pcg_direction`, which updates x (x += α p before p changes: one pass over p
// and x fewer than updating x here).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
pcg_update(const double* __restrict__ q, double* __restrict__ r, const double* __restrict__ dinv, u64 n,
           const double* __restrict__ pq_partials, u32 nparts, double* __restrict__ s, u32 parity, u32 alpha_at,
           double* __restrict__ out_partials) {
    __shared__ double alpha_s;
    const double pq = sum_in_block(pq_partials, nparts);
    if (threadIdx.x == 0) {
        const double rho = s[parity];
        alpha_s = pq > 0.0 ? rho / pq : 0.0;
        if (blockIdx.x == 0) {
            s[alpha_at] = alpha_s;
            if (!(pq > 0.0)) s[2] = 1.0;
        }
    }
    __syncthreads();
    const double alpha = alpha_s;
    double rz = 0.0, rr = 0.0;
    for (u64 k = global_thread(); k < n; k += grid_threads()) {
        const double rk = r[k] - alpha * q[k];
        r[k] = rk;
        rz += rk * rk * dinv[k];
        rr += rk * rk;
    }
    rz = block_sum(rz);
    __syncthreads();
    rr = block_sum(rr);
    if (threadIdx.x == 0) {
        out_partials[blockIdx.x] = rz;
        out_partials[gridDim.x + blockIdx.x] = rr;
    }
}

// β = ρ_new / ρ from the update's partials; x += α p (α from s[alpha_at]); p = D⁻¹ r + β p; block
// 0 stores ρ_new for the next iteration (the other parity) and ‖r‖² in the batch history slot.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK)
pcg_direction(double* __restrict__ x, double* __restrict__ p, const double* __restrict__ r, const double* __restrict__ dinv, u64 n,
              const double* __restrict__ partials, u32 nparts, double* __restrict__ s, u32 parity, u32 slot, u32 alpha_at) {
    __shared__ double beta_s;
    const double rz = sum_in_block(partials, nparts);
    __syncthreads();
    const double rr = sum_in_block(partials + nparts, nparts);
    if (threadIdx.x == 0) {
        const double rho = s[parity];
        beta_s = rz / rho;
        if (blockIdx.x == 0) {
            s[1 - parity] = rz;
            s[3 + slot] = rr;
            if (!(rz > 0.0)) s[2] = 2.0;
        }
    }
    __syncthreads();
    const double beta = beta_s, alpha = s[alpha_at];
    for (u64 k = global_thread(); k < n; k += grid_threads()) {
        const double pk = p[k];
        x[k] += alpha * pk;
        p[k] = dinv[k] * r[k] + beta * pk;
    }
}
