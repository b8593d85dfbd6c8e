// Element block Jacobi for DG matrices (crate::advection): the ADV_B × ADV_B diagonal block of every
// cell (rows c·B .. c·B + B, contiguous), taken from a CSR matrix, inverted by Gauss–Jordan with
// partial pivoting (one thread per block; B ≤ 16, beyond the closed forms of block_jacobi.cu) and
// applied one thread per row. Compiled once per block size with -DADV_B=….
#ifndef ADV_B
#define ADV_B 6
#endif

// blocks[c·B² + i·B + j] = A[c·B + i][c·B + j]; blocks zeroed by the host first.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) adv_blocks_extract(
    u64 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col_idx, const double* __restrict__ values,
    double* __restrict__ blocks) {
    for (u64 r = global_thread(); r < nrows; r += grid_threads()) {
        const u64 c = r / ADV_B;
        for (u32 k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
            const u64 col = col_idx[k];
            if (col / ADV_B == c) blocks[c * ADV_B * ADV_B + (r % ADV_B) * ADV_B + col % ADV_B] = values[k];
        }
    }
}

// In place; the smallest index of a singular or non-finite block goes to *bad (host sets 0xffffffff).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) adv_blocks_invert(
    u64 nblocks, double* __restrict__ blocks, u32* __restrict__ bad) {
    for (u64 c = global_thread(); c < nblocks; c += grid_threads()) {
        double a[ADV_B * ADV_B], inv[ADV_B * ADV_B];
        double* m = blocks + c * ADV_B * ADV_B;
        double scale = 0.0;
        for (int k = 0; k < ADV_B * ADV_B; ++k) {
            a[k] = m[k];
            inv[k] = (k / ADV_B == k % ADV_B) ? 1.0 : 0.0;
            scale = fmax(scale, fabs(a[k]));
        }
        bool ok = scale > 0.0 && isfinite(scale);
        for (int col = 0; col < ADV_B && ok; ++col) {
            int p = col;
            for (int r = col + 1; r < ADV_B; ++r)
                if (fabs(a[r * ADV_B + col]) > fabs(a[p * ADV_B + col])) p = r;
            const double piv = a[p * ADV_B + col];
            if (!(fabs(piv) > 1e-14 * scale)) { ok = false; break; }
            if (p != col)
                for (int j = 0; j < ADV_B; ++j) {
                    double t = a[p * ADV_B + j]; a[p * ADV_B + j] = a[col * ADV_B + j]; a[col * ADV_B + j] = t;
                    t = inv[p * ADV_B + j]; inv[p * ADV_B + j] = inv[col * ADV_B + j]; inv[col * ADV_B + j] = t;
                }
            const double d = 1.0 / piv;
            for (int j = 0; j < ADV_B; ++j) { a[col * ADV_B + j] *= d; inv[col * ADV_B + j] *= d; }
            for (int r = 0; r < ADV_B; ++r) {
                if (r == col) continue;
                const double f = a[r * ADV_B + col];
                if (f == 0.0) continue;
                for (int j = 0; j < ADV_B; ++j) {
                    a[r * ADV_B + j] -= f * a[col * ADV_B + j];
                    inv[r * ADV_B + j] -= f * inv[col * ADV_B + j];
                }
            }
        }
        for (int k = 0; k < ADV_B * ADV_B; ++k) {
            m[k] = inv[k];
            ok = ok && isfinite(inv[k]);
        }
        if (!ok) atomicMin(bad, (u32)min(c, (u64)0xfffffffeu));
    }
}

// y_r = Σ_j blocks[c][r % B][j] x[c·B + j], c = r / B.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) adv_blocks_apply(
    u64 n, const double* __restrict__ blocks, const double* __restrict__ x, double* __restrict__ y) {
    for (u64 r = global_thread(); r < n; r += grid_threads()) {
        const u64 c = r / ADV_B;
        const double* row = blocks + r * ADV_B;
        const double* xc = x + c * ADV_B;
        double acc = 0.0;
#pragma unroll
        for (int j = 0; j < ADV_B; ++j) acc = fma(row[j], __ldg(&xc[j]), acc);
        y[r] = acc;
    }
}
