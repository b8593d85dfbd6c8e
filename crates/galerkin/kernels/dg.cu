// Discontinuous Galerkin on an interval: block-tridiagonal assembly, apply, block Jacobi and block
// cyclic reduction, for blocks of B = k + 1 unknowns (2 <= B <= 7). Each operation is one template,
// instantiated for every B at the end of the file (entry points dg_<op>_b<B>), so the file compiles
// as is. The formulas are the twins of src/dg/physics.rs (assembly) and src/dg/cyclic.rs (cyclic
// reduction); tests compare both against the CPU.
//
// Layout: a matrix level of n block rows stores entry e = r*B + c of row i at M[e*n + i]
// (entry-major), so consecutive threads (rows) touch consecutive addresses. Vectors are
// element-major (element i's B coefficients contiguous); several right-hand sides follow one
// another with a column stride.

#define DG_PIVOT_TOL (64.0 * 2.220446049250313e-16)
#define DG_NO_FAILURE 0xffffffffffffffffull

template <int B> __device__ __forceinline__ void dg_load(const double* __restrict__ m, u64 n, u64 i, double (&a)[B][B]) {
#pragma unroll
    for (int r = 0; r < B; ++r)
#pragma unroll
        for (int c = 0; c < B; ++c) a[r][c] = m[(u64)(r * B + c) * n + i];
}

template <int B> __device__ __forceinline__ void dg_store(double* __restrict__ m, u64 n, u64 i, const double (&a)[B][B]) {
#pragma unroll
    for (int r = 0; r < B; ++r)
#pragma unroll
        for (int c = 0; c < B; ++c) m[(u64)(r * B + c) * n + i] = a[r][c];
}

template <int B> __device__ __forceinline__ void dg_zero(double (&a)[B][B]) {
#pragma unroll
    for (int r = 0; r < B; ++r)
#pragma unroll
        for (int c = 0; c < B; ++c) a[r][c] = 0.0;
}

// c = s * a * b (s = +1 or -1), or c += s * a * b with accumulate.
template <int B>
__device__ __forceinline__ void dg_gemm(const double (&a)[B][B], const double (&b)[B][B], double s, bool accumulate, double (&c)[B][B]) {
#pragma unroll
    for (int r = 0; r < B; ++r)
#pragma unroll
        for (int j = 0; j < B; ++j) {
            double acc = 0.0;
#pragma unroll
            for (int k = 0; k < B; ++k) acc = fma(a[r][k], b[k][j], acc);
            c[r][j] = accumulate ? c[r][j] + s * acc : s * acc;
        }
}
template <int B> __device__ __forceinline__ void dg_mul(const double (&a)[B][B], const double (&b)[B][B], double s, double (&c)[B][B]) {
    dg_gemm<B>(a, b, s, false, c);
}
// c -= a * b
template <int B> __device__ __forceinline__ void dg_sub_mul(double (&c)[B][B], const double (&a)[B][B], const double (&b)[B][B]) {
    dg_gemm<B>(a, b, -1.0, true, c);
}

// y -= a * x (x element-major at xp)
template <int B> __device__ __forceinline__ void dg_sub_matvec(double (&y)[B], const double (&a)[B][B], const double (&x)[B]) {
#pragma unroll
    for (int r = 0; r < B; ++r) {
        double acc = 0.0;
#pragma unroll
        for (int c = 0; c < B; ++c) acc = fma(a[r][c], x[c], acc);
        y[r] -= acc;
    }
}

template <int B> __device__ __forceinline__ void dg_matvec(const double (&a)[B][B], const double (&x)[B], double (&y)[B]) {
#pragma unroll
    for (int r = 0; r < B; ++r) {
        double acc = 0.0;
#pragma unroll
        for (int c = 0; c < B; ++c) acc = fma(a[r][c], x[c], acc);
        y[r] = acc;
    }
}

template <int B> __device__ __forceinline__ void dg_load_vec(const double* __restrict__ v, u64 i, double (&x)[B]) {
#pragma unroll
    for (int c = 0; c < B; ++c) x[c] = v[i * B + c];
}

template <int B> __device__ __forceinline__ void dg_store_vec(double* __restrict__ v, u64 i, const double (&x)[B]) {
#pragma unroll
    for (int c = 0; c < B; ++c) v[i * B + c] = x[c];
}

// inv = a^-1 by Gauss-Jordan with partial pivoting. Row exchanges are done with selects over
// compile-time indices so the blocks stay in registers. Returns false on a pivot below
// DG_PIVOT_TOL * B * max|a| (or a non-finite block), as src/dg/dense.rs.
template <int B> __device__ __forceinline__ bool dg_invert(const double (&a)[B][B], double (&inv)[B][B]) {
    double m[B][B];
    double scale = 0.0;
#pragma unroll
    for (int r = 0; r < B; ++r)
#pragma unroll
        for (int c = 0; c < B; ++c) {
            m[r][c] = a[r][c];
            inv[r][c] = (r == c) ? 1.0 : 0.0;
            scale = fmax(scale, fabs(a[r][c]));
        }
    const double tol = DG_PIVOT_TOL * B * scale;
    bool ok = isfinite(scale);
#pragma unroll
    for (int k = 0; k < B; ++k) {
        double best = fabs(m[k][k]);
        int p = k;
#pragma unroll
        for (int r = k + 1; r < B; ++r) {
            const double v = fabs(m[r][k]);
            if (v > best) { best = v; p = r; }
        }
#pragma unroll
        for (int r = k + 1; r < B; ++r) {
            const bool s = (r == p);
#pragma unroll
            for (int c = 0; c < B; ++c) {
                const double t = m[r][c], u = inv[r][c];
                m[r][c] = s ? m[k][c] : t;
                m[k][c] = s ? t : m[k][c];
                inv[r][c] = s ? inv[k][c] : u;
                inv[k][c] = s ? u : inv[k][c];
            }
        }
        const double piv = m[k][k];
        if (!(fabs(piv) > tol)) ok = false;
        const double d = ok ? 1.0 / piv : 0.0;
#pragma unroll
        for (int c = 0; c < B; ++c) { m[k][c] *= d; inv[k][c] *= d; }
#pragma unroll
        for (int r = 0; r < B; ++r) {
            if (r == k) continue;
            const double f = m[r][k];
#pragma unroll
            for (int c = 0; c < B; ++c) { m[r][c] -= f * m[k][c]; inv[r][c] -= f * inv[k][c]; }
        }
    }
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Assembly: one thread per element n writes its block row (L_n, D_n, U_n) and right-hand side.
// The face terms of its two faces are computed here (each interior face twice, once per
// neighbour), so no two threads write the same value and no atomics are needed.
//
// tab: w[Q], phi[Q*B], dphi[Q*B], then phi and dphi at xi = -1 and at xi = +1 (B each).
// Sampled fields: value(n, q) = v[n*stride + (stride ? q : 0)] (stride 0: one constant).

template <int B> struct DgSide {
    double s, v[B], d[B];
};

template <int B> __device__ __forceinline__ void dg_side(DgSide<B>& side, double s, const double* __restrict__ v, const double* __restrict__ dv, double h) {
    side.s = s;
#pragma unroll
    for (int j = 0; j < B; ++j) { side.v[j] = v[j]; side.d[j] = 2.0 / h * dv[j]; }
}

// acc += wa * (-g.d[j] e.s e.v[i] + eps e.d[i] g.s g.v[j]) + sigma e.s g.s e.v[i] g.v[j]
template <int B> __device__ __forceinline__ void dg_face(double (&acc)[B][B], double wa, double eps, double sigma, const DgSide<B>& e, const DgSide<B>& g) {
#pragma unroll
    for (int i = 0; i < B; ++i)
#pragma unroll
        for (int j = 0; j < B; ++j)
            acc[i][j] += wa * (-g.d[j] * e.s * e.v[i] + eps * e.d[i] * g.s * g.v[j]) + sigma * e.s * g.s * e.v[i] * g.v[j];
}

__device__ __forceinline__ double dg_hlen(int rule, double hl, double hr) {
    switch (rule) {
        case 0: return 1.0;
        case 1: return 0.5 * (hl + hr);
        case 2: return fmin(hl, hr);
        case 3: return fmax(hl, hr);
        default: return 2.0 * hl * hr / (hl + hr);
    }
}

__device__ __forceinline__ double dg_sample(const double* __restrict__ v, u64 stride, u64 n, int q) {
    return v[n * stride + (stride ? (u64)q : 0)];
}

struct DgParams {
    double eps, sigma, sigma_boundary;  // sigma's already times the degree factor
    int h_rule, sigma_times_a;
    int left_kind, right_kind;          // 0 Dirichlet, 1 Neumann
    double left_value, right_value;
};

template <int B> __device__ __forceinline__ void dg_boundary(const DgParams& p, int kind, double g, double a, double h, const DgSide<B>& side,
                                                             double (&d)[B][B], double (&r)[B]) {
    if (kind == 0) {
        const double sigma = p.sigma_boundary * (p.sigma_times_a ? a : 1.0) / (p.h_rule == 0 ? 1.0 : h);
        dg_face<B>(d, a, p.eps, sigma, side, side);
#pragma unroll
        for (int i = 0; i < B; ++i) r[i] += p.eps * a * side.d[i] * side.s * g + sigma * side.v[i] * g;
    } else {
#pragma unroll
        for (int i = 0; i < B; ++i) r[i] += g * side.v[i];
    }
}

// The geometry, sampled coefficients and basis table one row needs.
struct DgMesh {
    u64 N;
    int Q;
    const double* nodes;
    const double* tab;
    const double *aq, *cq, *fq, *an;
    u64 a_stride, c_stride, f_stride, an_stride;
};

// Block row n of the matrix and its right-hand side, in registers.
template <int B>
__device__ __forceinline__ void dg_row(const DgMesh& g, const DgParams& p, u64 n, double (&l)[B][B], double (&d)[B][B], double (&u)[B][B],
                                       double (&r)[B]) {
    const int Q = g.Q;
    const double* w = g.tab;
    const double* phi = g.tab + Q;
    const double* dphi = phi + Q * B;
    const double* phl = dphi + Q * B;
    const double* dphl = phl + B;
    const double* phr = dphl + B;
    const double* dphr = phr + B;
    const double x0 = g.nodes[n], x1 = g.nodes[n + 1], h = x1 - x0;
    dg_zero<B>(d);
    dg_zero<B>(l);
    dg_zero<B>(u);
#pragma unroll
    for (int i = 0; i < B; ++i) r[i] = 0.0;
    for (int q = 0; q < Q; ++q) {
        const double wq = w[q];
        const double dd = 2.0 * dg_sample(g.aq, g.a_stride, n, q) * wq / h;
        const double vv = 0.5 * dg_sample(g.cq, g.c_stride, n, q) * wq * h;
        const double fw = 0.5 * h * wq * dg_sample(g.fq, g.f_stride, n, q);
        const double* ph = phi + q * B;
        const double* dph = dphi + q * B;
#pragma unroll
        for (int i = 0; i < B; ++i) {
            const double gi = dd * dph[i], vi = vv * ph[i];
#pragma unroll
            for (int j = 0; j < B; ++j) d[i][j] += gi * dph[j] + vi * ph[j];
            r[i] += fw * ph[i];
        }
    }
    // Left face (vertex n): this element is right of it.
    DgSide<B> me, nb;
    dg_side<B>(me, -1.0, phl, dphl, h);
    double a = g.an[n * g.an_stride];
    if (n > 0) {
        const double hl = x0 - g.nodes[n - 1];
        const double sigma = p.sigma * (p.sigma_times_a ? a : 1.0) / dg_hlen(p.h_rule, hl, h);
        dg_side<B>(nb, 1.0, phr, dphr, hl);
        dg_face<B>(d, 0.5 * a, p.eps, sigma, me, me);
        dg_face<B>(l, 0.5 * a, p.eps, sigma, me, nb);
    } else {
        dg_boundary<B>(p, p.left_kind, p.left_value, a, h, me, d, r);
    }
    // Right face (vertex n + 1): this element is left of it.
    dg_side<B>(me, 1.0, phr, dphr, h);
    a = g.an[(n + 1) * g.an_stride];
    if (n + 1 < g.N) {
        const double hr = g.nodes[n + 2] - x1;
        const double sigma = p.sigma * (p.sigma_times_a ? a : 1.0) / dg_hlen(p.h_rule, h, hr);
        dg_side<B>(nb, -1.0, phl, dphl, hr);
        dg_face<B>(d, 0.5 * a, p.eps, sigma, me, me);
        dg_face<B>(u, 0.5 * a, p.eps, sigma, me, nb);
    } else {
        dg_boundary<B>(p, p.right_kind, p.right_value, a, h, me, d, r);
    }
}

// Assembly: one thread per element n writes its block row and right-hand side.
template <int B>
__device__ void dg_assemble(DgMesh g, DgParams p, double* __restrict__ L, double* __restrict__ D, double* __restrict__ U,
                            double* __restrict__ rhs) {
    for (u64 n = global_thread(); n < g.N; n += grid_threads()) {
        double d[B][B], l[B][B], u[B][B], r[B];
        dg_row<B>(g, p, n, l, d, u, r);
        dg_store<B>(L, g.N, n, l);
        dg_store<B>(D, g.N, n, d);
        dg_store<B>(U, g.N, n, u);
        dg_store_vec<B>(rhs, n, r);
    }
}

// Residual res = b - A x without a stored matrix (the "none" level: every block recomputed from
// the vertices and samples), for iterative refinement after a factorization that overwrote A.
template <int B>
__device__ void dg_residual(DgMesh g, DgParams p, const double* __restrict__ x, double* __restrict__ res) {
    for (u64 n = global_thread(); n < g.N; n += grid_threads()) {
        double d[B][B], l[B][B], u[B][B], r[B], v[B];
        dg_row<B>(g, p, n, l, d, u, r);
        dg_load_vec<B>(x, n, v);
        dg_sub_matvec<B>(r, d, v);
        if (n > 0) {
            dg_load_vec<B>(x, n - 1, v);
            dg_sub_matvec<B>(r, l, v);
        }
        if (n + 1 < g.N) {
            dg_load_vec<B>(x, n + 1, v);
            dg_sub_matvec<B>(r, u, v);
        }
        dg_store_vec<B>(res, n, r);
    }
}

// y = A x for one vector.
template <int B>
__device__ void dg_apply(u64 n, const double* __restrict__ L, const double* __restrict__ D, const double* __restrict__ U,
                         const double* __restrict__ x, double* __restrict__ y) {
    for (u64 i = global_thread(); i < n; i += grid_threads()) {
        double a[B][B], xv[B], acc[B];
        dg_load<B>(D, n, i, a);
        dg_load_vec<B>(x, i, xv);
        dg_matvec<B>(a, xv, acc);
        if (i > 0) {
            double t[B];
            dg_load<B>(L, n, i, a);
            dg_load_vec<B>(x, i - 1, xv);
            dg_matvec<B>(a, xv, t);
#pragma unroll
            for (int c = 0; c < B; ++c) acc[c] += t[c];
        }
        if (i + 1 < n) {
            double t[B];
            dg_load<B>(U, n, i, a);
            dg_load_vec<B>(x, i + 1, xv);
            dg_matvec<B>(a, xv, t);
#pragma unroll
            for (int c = 0; c < B; ++c) acc[c] += t[c];
        }
        dg_store_vec<B>(y, i, acc);
    }
}

// ---------------------------------------------------------------------------------------------
// Block cyclic reduction (see src/dg/cyclic.rs for the algebra). Level l has n rows.

// Step 1, rows i = start + t*step (t < count), in place: D <- D^-1 and, with offdiag, L <- D^-1 L,
// U <- D^-1 U. A singular block records (level << 48 | i) in *fail (smallest wins). With nrhs > 0
// the forward sweep of a solve rides along: g_i = D_i^-1 f_i into x (f, x with column strides).
template <int B>
__device__ void dg_cr_invert(u64 n, u64 start, u64 step, u64 count, int offdiag, double* __restrict__ L, double* __restrict__ D,
                             double* __restrict__ U, u32 level, u64* __restrict__ fail, const double* __restrict__ f, u64 f_cols,
                             double* __restrict__ x, u64 x_cols, u64 nrhs) {
    for (u64 t = global_thread(); t < count; t += grid_threads()) {
        const u64 i = start + t * step;
        double a[B][B], inv[B][B], m[B][B];
        dg_load<B>(D, n, i, a);
        if (!dg_invert<B>(a, inv)) atomicMin(fail, ((u64)level << 48) | i);
        dg_store<B>(D, n, i, inv);
        if (offdiag) {
            dg_load<B>(L, n, i, a);
            dg_mul<B>(inv, a, 1.0, m);
            dg_store<B>(L, n, i, m);
            dg_load<B>(U, n, i, a);
            dg_mul<B>(inv, a, 1.0, m);
            dg_store<B>(U, n, i, m);
        }
        for (u64 k = 0; k < nrhs; ++k) {
            double v[B], g[B];
            dg_load_vec<B>(f + k * f_cols, i, v);
            dg_matvec<B>(inv, v, g);
            dg_store_vec<B>(x + k * x_cols, i, g);
        }
    }
}

// Step 2: even rows i = 2m into the next level (nn rows). With nrhs > 0 also the forward sweep:
// f'_m = f_i - L_i g_{i-1} - U_i g_{i+1}, with g of the odd rows in x (written by step 1).
template <int B>
__device__ void dg_cr_reduce(u64 n, const double* __restrict__ L, const double* __restrict__ D, const double* __restrict__ U, u64 nn,
                             double* __restrict__ L2, double* __restrict__ D2, double* __restrict__ U2, const double* __restrict__ f,
                             u64 f_cols, const double* __restrict__ x, u64 x_cols, double* __restrict__ fn, u64 fn_cols, u64 nrhs) {
    for (u64 m = global_thread(); m < nn; m += grid_threads()) {
        const u64 i = 2 * m;
        const bool left = i >= 1, right = i + 1 < n;
        double d[B][B], s[B][B], o[B][B], r[B][B];
        dg_load<B>(D, n, i, d);
        if (left) {
            dg_load<B>(L, n, i, s);
            dg_load<B>(U, n, i - 1, o);
            dg_sub_mul<B>(d, s, o);
            dg_load<B>(L, n, i - 1, o);
            dg_mul<B>(s, o, -1.0, r);
            for (u64 k = 0; k < nrhs; ++k) {  // fn = f_i - L_i g_{i-1}
                double acc[B], g[B];
                dg_load_vec<B>(f + k * f_cols, i, acc);
                dg_load_vec<B>(x + k * x_cols, i - 1, g);
                dg_sub_matvec<B>(acc, s, g);
                dg_store_vec<B>(fn + k * fn_cols, m, acc);
            }
        } else {
            dg_zero<B>(r);
            for (u64 k = 0; k < nrhs; ++k) {
                double acc[B];
                dg_load_vec<B>(f + k * f_cols, i, acc);
                dg_store_vec<B>(fn + k * fn_cols, m, acc);
            }
        }
        dg_store<B>(L2, nn, m, r);
        if (right) {
            dg_load<B>(U, n, i, s);
            dg_load<B>(L, n, i + 1, o);
            dg_sub_mul<B>(d, s, o);
            dg_load<B>(U, n, i + 1, o);
            dg_mul<B>(s, o, -1.0, r);
            for (u64 k = 0; k < nrhs; ++k) {  // fn -= U_i g_{i+1}
                double acc[B], g[B];
                dg_load_vec<B>(fn + k * fn_cols, m, acc);
                dg_load_vec<B>(x + k * x_cols, i + 1, g);
                dg_sub_matvec<B>(acc, s, g);
                dg_store_vec<B>(fn + k * fn_cols, m, acc);
            }
        } else {
            dg_zero<B>(r);
        }
        dg_store<B>(U2, nn, m, r);
        dg_store<B>(D2, nn, m, d);
    }
}

// Forward on nrhs columns: g_{i+1} = D^-1 f_{i+1} into x, f'_m = f_i - L_i g_{i-1} - U_i g_{i+1}.
template <int B>
__device__ void dg_cr_forward(u64 n, const double* __restrict__ L, const double* __restrict__ D, const double* __restrict__ U,
                              const double* __restrict__ f, u64 f_cols, double* __restrict__ x, u64 x_cols,
                              double* __restrict__ fn, u64 fn_cols, u64 nrhs) {
    const u64 nn = (n + 1) / 2;
    for (u64 m = global_thread(); m < nn; m += grid_threads()) {
        const u64 i = 2 * m;
        const bool left = i >= 1, right = i + 1 < n;
        double dl[B][B], li[B][B], dr[B][B], ui[B][B];
        if (left) { dg_load<B>(D, n, i - 1, dl); dg_load<B>(L, n, i, li); }
        if (right) { dg_load<B>(D, n, i + 1, dr); dg_load<B>(U, n, i, ui); }
        for (u64 k = 0; k < nrhs; ++k) {
            const double* fk = f + k * f_cols;
            double acc[B], v[B], g[B];
            dg_load_vec<B>(fk, i, acc);
            if (left) {
                dg_load_vec<B>(fk, i - 1, v);
                dg_matvec<B>(dl, v, g);
                dg_sub_matvec<B>(acc, li, g);
            }
            if (right) {
                dg_load_vec<B>(fk, i + 1, v);
                dg_matvec<B>(dr, v, g);
                dg_sub_matvec<B>(acc, ui, g);
                dg_store_vec<B>(x + k * x_cols, i + 1, g);
            }
            dg_store_vec<B>(fn + k * fn_cols, m, acc);
        }
    }
}

// Back on nrhs columns: x_i = x'_m, x_{i+1} = g - (D^-1 L) x'_m - (D^-1 U) x'_{m+1}.
template <int B>
__device__ void dg_cr_back(u64 n, const double* __restrict__ L, const double* __restrict__ U, const double* __restrict__ xn, u64 xn_cols,
                           double* __restrict__ x, u64 x_cols, u64 nrhs) {
    const u64 nn = (n + 1) / 2;
    for (u64 m = global_thread(); m < nn; m += grid_threads()) {
        const u64 i = 2 * m;
        const bool odd = i + 1 < n, far = i + 2 < n;
        double lo[B][B], uo[B][B];
        if (odd) dg_load<B>(L, n, i + 1, lo);
        if (far) dg_load<B>(U, n, i + 1, uo);
        for (u64 k = 0; k < nrhs; ++k) {
            const double* xk = xn + k * xn_cols;
            double* xo = x + k * x_cols;
            double v[B], t[B];
            dg_load_vec<B>(xk, m, v);
            dg_store_vec<B>(xo, i, v);
            if (odd) {
                dg_load_vec<B>(xo, i + 1, t);
                dg_sub_matvec<B>(t, lo, v);
                if (far) {
                    dg_load_vec<B>(xk, m + 1, v);
                    dg_sub_matvec<B>(t, uo, v);
                }
                dg_store_vec<B>(xo, i + 1, t);
            }
        }
    }
}

// y_i = Dinv_i x_i on nrhs columns: block Jacobi, and the top level of cyclic reduction.
template <int B>
__device__ void dg_block_diag(u64 n, const double* __restrict__ Dinv, const double* __restrict__ x, u64 x_cols,
                              double* __restrict__ y, u64 y_cols, u64 nrhs) {
    for (u64 i = global_thread(); i < n; i += grid_threads()) {
        double a[B][B], v[B], g[B];
        dg_load<B>(Dinv, n, i, a);
        for (u64 k = 0; k < nrhs; ++k) {
            dg_load_vec<B>(x + k * x_cols, i, v);
            dg_matvec<B>(a, v, g);
            dg_store_vec<B>(y + k * y_cols, i, g);
        }
    }
}

#define DG_VARIANT(B)                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_assemble_b##B(                                           \
        u64 N, int Q, const double* nodes, const double* tab, const double* aq, u64 a_stride, const double* cq, u64 c_stride, \
        const double* fq, u64 f_stride, const double* an, u64 an_stride, DgParams p, double* L, double* D, double* U,          \
        double* rhs) {                                                                                                        \
        const DgMesh g{N, Q, nodes, tab, aq, cq, fq, an, a_stride, c_stride, f_stride, an_stride};                            \
        dg_assemble<B>(g, p, L, D, U, rhs);                                                                                   \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_residual_b##B(                                           \
        u64 N, int Q, const double* nodes, const double* tab, const double* aq, u64 a_stride, const double* cq, u64 c_stride, \
        const double* fq, u64 f_stride, const double* an, u64 an_stride, DgParams p, const double* x, double* res) {          \
        const DgMesh g{N, Q, nodes, tab, aq, cq, fq, an, a_stride, c_stride, f_stride, an_stride};                            \
        dg_residual<B>(g, p, x, res);                                                                                         \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_apply_b##B(u64 n, const double* L, const double* D,      \
                                                                               const double* U, const double* x, double* y) { \
        dg_apply<B>(n, L, D, U, x, y);                                                                                        \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_cr_invert_b##B(                                           \
        u64 n, u64 start, u64 step, u64 count, int offdiag, double* L, double* D, double* U, u32 level, u64* fail,            \
        const double* f, u64 f_cols, double* x, u64 x_cols, u64 nrhs) {                                                       \
        dg_cr_invert<B>(n, start, step, count, offdiag, L, D, U, level, fail, f, f_cols, x, x_cols, nrhs);                    \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_cr_reduce_b##B(                                           \
        u64 n, const double* L, const double* D, const double* U, u64 nn, double* L2, double* D2, double* U2,                 \
        const double* f, u64 f_cols, const double* x, u64 x_cols, double* fn, u64 fn_cols, u64 nrhs) {                        \
        dg_cr_reduce<B>(n, L, D, U, nn, L2, D2, U2, f, f_cols, x, x_cols, fn, fn_cols, nrhs);                                 \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_cr_forward_b##B(                                          \
        u64 n, const double* L, const double* D, const double* U, const double* f, u64 f_cols, double* x, u64 x_cols,         \
        double* fn, u64 fn_cols, u64 nrhs) {                                                                                  \
        dg_cr_forward<B>(n, L, D, U, f, f_cols, x, x_cols, fn, fn_cols, nrhs);                                                \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_cr_back_b##B(                                             \
        u64 n, const double* L, const double* U, const double* xn, u64 xn_cols, double* x, u64 x_cols, u64 nrhs) {           \
        dg_cr_back<B>(n, L, U, xn, xn_cols, x, x_cols, nrhs);                                                                 \
    }                                                                                                                         \
    extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dg_block_diag_b##B(                                          \
        u64 n, const double* Dinv, const double* x, u64 x_cols, double* y, u64 y_cols, u64 nrhs) {                            \
        dg_block_diag<B>(n, Dinv, x, x_cols, y, y_cols, nrhs);                                                                \
    }

DG_VARIANT(2)
DG_VARIANT(3)
DG_VARIANT(4)
DG_VARIANT(5)
DG_VARIANT(6)
DG_VARIANT(7)
