// Upwind DG advection on triangles and quadrilaterals (crate::advection): the matrix pattern and the
// assembly straight into device CSR values, one thread per cell, twin of advection/assemble.rs.
//
// Compiled per problem with defines: ADV_NLOC (dofs per cell), ADV_QUAD (1: bilinear quadrilaterals,
// 0: affine triangles), ADV_NQ (cell quadrature points), ADV_NE (Gauss points per edge), ADV_PERCELL
// (1: one velocity per cell), and the problem's functions as C expressions of the doubles x, y in
// scope: ADV_BX, ADV_BY, ADV_DIV (∇·β), ADV_C (reaction), ADV_F (source), ADV_G (inflow data of the
// boundary-data index k). Each cell writes only its own rows, so no atomics are needed.
#ifndef ADV_NLOC
#define ADV_NLOC 3
#define ADV_QUAD 0
#define ADV_NQ 6
#define ADV_NE 3
#define ADV_PERCELL 0
#define ADV_BX (-(y - 0.5))
#define ADV_BY (x - 0.5)
#define ADV_DIV 0.0
#define ADV_C 1.0
#define ADV_F 1.0
#define ADV_G 0.0
#endif

#define ADV_NV (ADV_QUAD ? 4 : 3)
#define ADV_NF (ADV_QUAD ? 4 : 3)
#define ADV_BOUNDARY 0xffffffffu

// Packed reference tables (advection/cuda.rs writes them in this order).
#define T_W 0
#define T_PTS (T_W + ADV_NQ)
#define T_VAL (T_PTS + 2 * ADV_NQ)
#define T_GRAD (T_VAL + ADV_NQ * ADV_NLOC)
#define T_ES (T_GRAD + 2 * ADV_NQ * ADV_NLOC)
#define T_EW (T_ES + ADV_NE)
#define T_EVAL (T_EW + ADV_NE)

__device__ __forceinline__ double adv_bx(double x, double y) { return ADV_BX; }
__device__ __forceinline__ double adv_by(double x, double y) { return ADV_BY; }
__device__ __forceinline__ double adv_div(double x, double y) { return ADV_DIV; }
__device__ __forceinline__ double adv_c(double x, double y) { return ADV_C; }
__device__ __forceinline__ double adv_f(double x, double y) { return ADV_F; }
__device__ __forceinline__ double adv_g(int k, double x, double y) { return ADV_G; }

__device__ __forceinline__ void adv_edge(int lf, int* a, int* b) {
#if ADV_QUAD
    const int ea[4] = {0, 1, 3, 0}, eb[4] = {1, 2, 2, 3};
#else
    const int ea[3] = {1, 0, 0}, eb[3] = {2, 2, 1};
#endif
    *a = ea[lf];
    *b = eb[lf];
}

// Cells {c} ∪ neighbours, ascending, and their count.
__device__ __forceinline__ int adv_sorted(u64 c, const u32* __restrict__ nb, u32* s) {
    int n = 0;
    s[n++] = (u32)c;
    for (int f = 0; f < ADV_NF; ++f) {
        const u32 m = nb[c * ADV_NF + f];
        if (m != ADV_BOUNDARY) s[n++] = m;
    }
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && s[j - 1] > s[j]; --j) {
            const u32 t = s[j]; s[j] = s[j - 1]; s[j - 1] = t;
        }
    return n;
}

__device__ __forceinline__ int adv_position(const u32* s, int n, u32 m) {
    int p = 0;
    while (p < n && s[p] != m) ++p;
    return p;
}

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) adv_pattern(
    u64 ncells, const u32* __restrict__ offset, const u32* __restrict__ nb, u32* __restrict__ row_ptr,
    u32* __restrict__ col_idx) {
    for (u64 c = global_thread(); c < ncells; c += grid_threads()) {
        u32 s[ADV_NF + 1];
        const int n = adv_sorted(c, nb, s);
        const u32 width = (u32)(n * ADV_NLOC);
        if (c == 0) row_ptr[0] = 0;
        for (int i = 0; i < ADV_NLOC; ++i) {
            row_ptr[c * ADV_NLOC + i + 1] = offset[c] + (u32)(i + 1) * width;
            u32* row = col_idx + offset[c] + (u64)i * width;
            for (int k = 0; k < n; ++k)
                for (int j = 0; j < ADV_NLOC; ++j) row[k * ADV_NLOC + j] = s[k] * ADV_NLOC + j;
        }
    }
}

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) adv_assemble(
    u64 ncells, const double* __restrict__ coords, const u32* __restrict__ cells, const u32* __restrict__ nb,
    const int* __restrict__ info, const int* __restrict__ edge_data, const u32* __restrict__ offset,
    const double* __restrict__ tab, const double* __restrict__ vel, double* __restrict__ values,
    double* __restrict__ rhs) {
    for (u64 c = global_thread(); c < ncells; c += grid_threads()) {
        double vx[ADV_NV], vy[ADV_NV];
        for (int k = 0; k < ADV_NV; ++k) {
            const u32 v = cells[c * ADV_NV + k];
            vx[k] = coords[2 * (u64)v];
            vy[k] = coords[2 * (u64)v + 1];
        }
        u32 s[ADV_NF + 1];
        const int ns = adv_sorted(c, nb, s);
        const int width = ns * ADV_NLOC;
        double* slab = values + offset[c];
        for (int k = 0; k < ADV_NLOC * width; ++k) slab[k] = 0.0;
        double b[ADV_NLOC];
        for (int i = 0; i < ADV_NLOC; ++i) b[i] = 0.0;
        const int own = adv_position(s, ns, (u32)c) * ADV_NLOC;
        // Volume: −φ_j β·∇φ_i + (c − ∇·β) φ_j φ_i, and f φ_i.
        for (int q = 0; q < ADV_NQ; ++q) {
            const double xi = tab[T_PTS + 2 * q], eta = tab[T_PTS + 2 * q + 1];
            double x, y, j00, j01, j10, j11;
#if ADV_QUAD
            const double n[4] = {(1 - xi) * (1 - eta), xi * (1 - eta), xi * eta, (1 - xi) * eta};
            const double dx[4] = {-(1 - eta), 1 - eta, eta, -eta};
            const double de[4] = {-(1 - xi), -xi, xi, 1 - xi};
            x = y = j00 = j01 = j10 = j11 = 0.0;
            for (int k = 0; k < 4; ++k) {
                x += n[k] * vx[k]; y += n[k] * vy[k];
                j00 += vx[k] * dx[k]; j01 += vx[k] * de[k];
                j10 += vy[k] * dx[k]; j11 += vy[k] * de[k];
            }
#else
            j00 = vx[1] - vx[0]; j01 = vx[2] - vx[0];
            j10 = vy[1] - vy[0]; j11 = vy[2] - vy[0];
            x = vx[0] + xi * j00 + eta * j01;
            y = vy[0] + xi * j10 + eta * j11;
#endif
            const double det = j00 * j11 - j01 * j10;
            const double w = tab[T_W + q] * fabs(det);
#if ADV_PERCELL
            const double bx = vel[2 * c], by = vel[2 * c + 1], div = 0.0;
#else
            const double bx = adv_bx(x, y), by = adv_by(x, y), div = adv_div(x, y);
#endif
            const double react = adv_c(x, y) - div;
            const double f = adv_f(x, y);
            const double* phi = tab + T_VAL + q * ADV_NLOC;
            const double* gr = tab + T_GRAD + 2 * q * ADV_NLOC;
            for (int i = 0; i < ADV_NLOC; ++i) {
                const double r0 = gr[2 * i], r1 = gr[2 * i + 1];
                const double g0 = (j11 * r0 - j10 * r1) / det, g1 = (-j01 * r0 + j00 * r1) / det;
                const double bg = bx * g0 + by * g1;
                double* row = slab + i * width + own;
                for (int j = 0; j < ADV_NLOC; ++j) row[j] += w * phi[j] * (react * phi[i] - bg);
                b[i] += w * f * phi[i];
            }
        }
        // Edges: (β·n)⁺ on the own block, (β·n)⁻ on the neighbour's or the inflow data.
        double cx = 0.0, cy = 0.0;
        for (int k = 0; k < ADV_NV; ++k) { cx += vx[k] / ADV_NV; cy += vy[k] / ADV_NV; }
        for (int lf = 0; lf < ADV_NF; ++lf) {
            int ia, ib;
            adv_edge(lf, &ia, &ib);
            const double ax = vx[ia], ay = vy[ia], tx = vx[ib] - ax, ty = vy[ib] - ay;
            const double len = hypot(tx, ty);
            double nx = ty / len, ny = -tx / len;
            if (nx * (0.5 * (ax + vx[ib]) - cx) + ny * (0.5 * (ay + vy[ib]) - cy) < 0.0) { nx = -nx; ny = -ny; }
            const u32 m = nb[c * ADV_NF + lf];
            const int inf = info[c * ADV_NF + lf];
            const int data = edge_data[c * ADV_NF + lf];
            const int pos = m != ADV_BOUNDARY ? adv_position(s, ns, m) * ADV_NLOC : 0;
            const int lfn = inf & 3, flip = inf >> 2;
            for (int q = 0; q < ADV_NE; ++q) {
                const double sq = tab[T_ES + q];
                const double x = ax + sq * tx, y = ay + sq * ty;
                const double w = tab[T_EW + q] * len;
#if ADV_PERCELL
                double bx = vel[2 * c], by = vel[2 * c + 1];
                if (m != ADV_BOUNDARY) { bx = 0.5 * (bx + vel[2 * (u64)m]); by = 0.5 * (by + vel[2 * (u64)m + 1]); }
#else
                const double bx = adv_bx(x, y), by = adv_by(x, y);
#endif
                const double bn = bx * nx + by * ny;
                const double bp = fmax(bn, 0.0), bm = fmin(bn, 0.0);
                const double* phi = tab + T_EVAL + (lf * 2 * ADV_NE + q) * ADV_NLOC;
                const double* phn = tab + T_EVAL + ((lfn * 2 + flip) * ADV_NE + q) * ADV_NLOC;
                const double g = (m == ADV_BOUNDARY && bm < 0.0 && data >= 0) ? adv_g(data, x, y) : 0.0;
                for (int i = 0; i < ADV_NLOC; ++i) {
                    double* row = slab + i * width;
                    for (int j = 0; j < ADV_NLOC; ++j) row[own + j] += w * bp * phi[j] * phi[i];
                    if (m != ADV_BOUNDARY) {
                        for (int j = 0; j < ADV_NLOC; ++j) row[pos + j] += w * bm * phn[j] * phi[i];
                    } else {
                        b[i] -= w * bm * g * phi[i];
                    }
                }
            }
        }
        for (int i = 0; i < ADV_NLOC; ++i) rhs[c * ADV_NLOC + i] = b[i];
    }
}
