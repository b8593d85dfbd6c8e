// Follower pressure (`src/hyperelastic/loads.rs`) on the device: facets of m nodes and np points;
// a point record is [p·w·sign, T₁ (3), T₂ (3), φ (m), ∇φ·t₁ (m), ∇φ·t₂ (m)], dim displacement
// components a node (in 2D dim = 2, T₂ = e_z and ∇φ·t₂ = 0: a₂ stays e_z, or in plane stress
// becomes F₃₃ e_z with F₃₃ = th[point·5] from `hyper_pressure_thickness` when has_th). First one
// thread per (facet, point): the deformed tangents a_α = T_α + Σ_l u_l d^α_l (kept for the
// Jacobian) and r_(j,i) += λ p w φ_j (a₁ × a₂)_i.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hyper_pressure_residual(
    int dim, u64 nf, int m, int np, const u32* __restrict__ nodes, const double* __restrict__ pts, const double* __restrict__ u,
    double lf, int has_th, const double* __restrict__ th, double* __restrict__ tang, double* __restrict__ r) {
    const int ps = 7 + 3 * m;
    for (u64 t = global_thread(); t < nf * np; t += grid_threads()) {
        const u64 f = t / np;
        const double* pt = pts + t * ps;
        double a[2][3];
#pragma unroll
        for (int al = 0; al < 2; ++al)
#pragma unroll
            for (int i = 0; i < 3; ++i) a[al][i] = pt[1 + al * 3 + i];
        for (int l = 0; l < m; ++l) {
            const u64 n = nodes[f * m + l];
            const double d0 = pt[7 + m + l], d1 = pt[7 + 2 * m + l];
#pragma unroll
            for (int i = 0; i < 3; ++i) {
                if (i < dim) {  // unrolled with a guard: a[][] stays in registers
                    a[0][i] += u[n * dim + i] * d0;
                    a[1][i] += u[n * dim + i] * d1;
                }
            }
        }
        if (has_th) a[1][2] *= th[t * 5];  // a₂ = F₃₃ e_z: the current thickness
#pragma unroll
        for (int al = 0; al < 2; ++al)
#pragma unroll
            for (int i = 0; i < 3; ++i) tang[t * 6 + al * 3 + i] = a[al][i];
        const double nda[3] = {a[0][1] * a[1][2] - a[0][2] * a[1][1], a[0][2] * a[1][0] - a[0][0] * a[1][2], a[0][0] * a[1][1] - a[0][1] * a[1][0]};
        const double s = lf * pt[0];
        for (int j = 0; j < m; ++j) {
            const u64 n = nodes[f * m + j];
#pragma unroll
            for (int i = 0; i < 3; ++i)
                if (i < dim) atomicAdd(&r[n * dim + i], s * pt[7 + j] * nda[i]);
        }
    }
}

// Then one thread per (facet, Jacobian entry (j, i), (l, k)): Σ_points λ p w φ_j ∂(a₁ × a₂)_i/∂u_(l,k)
// with ∂(a₁ × a₂)/∂u_(l,k) = d¹_l e_k × a₂ + d²_l a₁ × e_k, added at its CSR position.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hyper_pressure_jacobian(
    int dim, u64 nf, int m, int np, const double* __restrict__ pts, double lf, const double* __restrict__ tang,
    const u64* __restrict__ pos, double* __restrict__ vals) {
    const int ps = 7 + 3 * m;
    const u64 ne = (u64)dim * dim * m * m;
    for (u64 t = global_thread(); t < nf * ne; t += grid_threads()) {
        const u64 f = t / ne;
        const int e = (int)(t % ne);
        const int row = e / (dim * m), colm = e % (dim * m);
        const int j = row / dim, i = row % dim, l = colm / dim, k = colm % dim;
        // (e_k × v)_i = ε_ikn v_n and (v × e_k)_i = −(e_k × v)_i
        const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        double acc = 0.0;
        for (int p = 0; p < np; ++p) {
            const double* pt = pts + (f * np + p) * ps;
            const double* a = tang + (f * np + p) * 6;
            // e_k × a₂: component i is a₂[i2] if k == i1, −a₂[i1] if k == i2, else 0.
            const double x1 = (k == i1 ? a[3 + i2] : 0.0) - (k == i2 ? a[3 + i1] : 0.0);
            const double x2 = -((k == i1 ? a[i2] : 0.0) - (k == i2 ? a[i1] : 0.0));
            acc += lf * pt[0] * pt[7 + j] * (pt[7 + m + l] * x1 + pt[7 + 2 * m + l] * x2);
        }
        atomicAdd(&vals[pos[t]], acc);
    }
}

#ifdef HL_PLANE_STRESS
// Plane stress (`src/hyperelastic/thickness.rs`): before the residual, one thread per (facet,
// point): F' = R + Σ_L u_L ⊗ g'_L over the nloc nodes of the cell beside the facet (frame R
// [nf][9], in-frame gradients g' [nf][np][nloc][2]), the law's local solve for F₃₃, and
// D = ∂F₃₃/∂F' = c₃ F'Z / F₃₃ from the form (Z at 22, c₃ = −1/ℂ₃₃₃₃ at 31): th = [F₃₃, D (2 × 2)].
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hyper_pressure_thickness(
    u64 nf, int np, int nloc, const u32* __restrict__ cnodes, const double* __restrict__ frames, const double* __restrict__ grads,
    const double* __restrict__ prm, const double* __restrict__ u, double* __restrict__ th) {
    for (u64 t = global_thread(); t < nf * np; t += grid_threads()) {
        const u64 f = t / np;
        double fm[3][3];
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int k = 0; k < 3; ++k) fm[i][k] = frames[f * 9 + i * 3 + k];
        for (int l = 0; l < nloc; ++l) {
            const u64 n = cnodes[f * nloc + l];
            const double* g = grads + (t * nloc + l) * 2;
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                fm[i][0] += u[n * 2 + i] * g[0];
                fm[i][1] += u[n * 2 + i] * g[1];
            }
        }
        double s[3][3], form[HL_FORM];
        const double l3 = hl_plane_stress(prm, fm, s, form);
        th[t * 5] = l3;
#pragma unroll
        for (int k = 0; k < 2; ++k)
#pragma unroll
            for (int b = 0; b < 2; ++b) th[t * 5 + 1 + k * 2 + b] = form[31] * (fm[k][0] * form[22 + b] + fm[k][1] * form[22 + 3 + b]) / l3;
    }
}

// After the Jacobian's (dim·m)² entries, one thread per (facet, edge row (j, i), cell column (L, k)):
// Σ_points λ p w φ_j (a₁ × e_z)_i ∂F₃₃/∂u_(L,k), ∂F₃₃/∂u_(L,k) = Σ_β D_kβ g'_Lβ, (a₁ × e_z) = (a₁_y, −a₁_x).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) hyper_pressure_thickness_jacobian(
    u64 nf, int m, int np, int nloc, const double* __restrict__ pts, double lf, const double* __restrict__ tang, const double* __restrict__ th,
    const double* __restrict__ grads, const u64* __restrict__ pos, double* __restrict__ vals) {
    const int ps = 7 + 3 * m;
    const u64 ne = (u64)4 * m * nloc;
    for (u64 t = global_thread(); t < nf * ne; t += grid_threads()) {
        const u64 f = t / ne;
        const int e = (int)(t % ne);
        const int row = e / (2 * nloc), col = e % (2 * nloc);
        const int j = row / 2, i = row % 2, l = col / 2, k = col % 2;
        double acc = 0.0;
        for (int p = 0; p < np; ++p) {
            const u64 fp = f * np + p;
            const double* pt = pts + fp * ps;
            const double* a = tang + fp * 6;
            const double* d = th + fp * 5 + 1 + k * 2;
            const double* g = grads + (fp * nloc + l) * 2;
            const double cross = i == 0 ? a[1] : -a[0];
            acc += lf * pt[0] * pt[7 + j] * cross * (d[0] * g[0] + d[1] * g[1]);
        }
        atomicAdd(&vals[pos[t]], acc);
    }
}
#endif
