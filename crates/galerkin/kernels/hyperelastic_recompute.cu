// The owner gather without a stage (seventeenth pass, `Scheme::Recompute` in
// `src/hyperelastic/recompute.rs`): a block owns a contiguous range of row nodes, [n0, n1), whose
// CSR rows (3 per node, contiguous in the values) and residual rows it sums in shared memory and
// stores once, coalesced: no global atomics, no zeroing, no stage. It walks the distinct cells
// touching its nodes (the host's list: cell, and a mask of the cell's local nodes the block owns);
// per cell, a warp recomputes the geometry, the rotated gradients g'_qj and, per point, the law
// and w𝔸 (`hm_point_tangent`: 45 distinct entries by major symmetry, and w P) — the redundant part,
// once per block that owns one of the cell's nodes — and then, for each OWNED local node a only,
// contracts its 3 × 3·NLOC row block (the expensive part: once over all blocks):
//   h_q[i][k][B] = Σ_A g'_qaA w𝔸_q[iA, kB]          (NQ·27 items over the warp)
//   K_(a,i),(b,k) = Σ_q Σ_B h_q[i][k][B] g'_qbB       (a lane per (b, i), 3 values k)
//   r_(a,i)       = Σ_q Σ_A w P_q[iA] g'_qaA
// adding them with shared atomics (another warp of the block may add to the same rows).
// Compiled after `hyperelastic_law.cuh`, `hyperelastic.cu` with the tensor-core defines (its
// prologue; its `hyper_assemble` is the residual-alone launch of this scheme) and
// `hyperelastic_moments.cuh` (`hm_point_tangent`). Defines: those of the tensor-core scheme, HK_RECOMPUTE,
// HR_WPB (warps per block). Dynamic shared memory: HR_WPB per-warp scratch of HR_SCR doubles, then
// the block's residual rows (3 per node), then its CSR values.
#ifdef HK_RECOMPUTE
#ifndef HR_WPB
#define HR_WPB 4
#endif
#define HR_G (NQ * NLOC * 3)  // g'[q][j][A]
#define HR_PT 55              // point record: w𝔸 (45) | w P (9), odd stride
#define HR_SCR (HR_G + NQ * HR_PT + NQ * 27)
#if 3 * NLOC > 32
#error "the recomputing gather gives a lane to each (column node, row component): 3·NLOC ≤ 32"
#endif

// w𝔸[α][β] from the record's distinct entries (α ≤ β row-major, `hm_point_tangent`).
__device__ __forceinline__ double hr_tangent(const double* rec, int al, int be) {
    const int lo = al < be ? al : be, hi = al < be ? be : al;
    return rec[lo * 9 - lo * (lo - 1) / 2 + hi - lo];
}

extern "C" __global__ void __launch_bounds__(32 * HR_WPB)
    hyper_recompute(const u32* __restrict__ blk_node, const u32* __restrict__ blk_ptr, const u32* __restrict__ blk_cell,
                    const unsigned short* __restrict__ blk_mask, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                    const u32* __restrict__ cell_nodes, const double* __restrict__ tab, const double* __restrict__ frames, int has_frames,
                    const double* __restrict__ prm, const double* __restrict__ u, double* __restrict__ r, const u32* __restrict__ row_ptr,
                    const unsigned short* __restrict__ kpos, double* __restrict__ vals) {
    extern __shared__ double hr_sh[];
    __shared__ HkCell s_cell[HR_WPB];
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wts = ggeo + NQ * NV * 3;
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const u32 n0 = blk_node[blockIdx.x], n1 = blk_node[blockIdx.x + 1];
    const u32 base = row_ptr[(u64)n0 * 3], len = row_ptr[(u64)n1 * 3] - base, nres = 3 * (n1 - n0);
    double* racc = hr_sh + HR_WPB * HR_SCR;
    double* seg = racc + nres;
    for (u32 k = threadIdx.x; k < nres + len; k += 32 * HR_WPB) racc[k] = 0.0;
    double* g = hr_sh + w * HR_SCR;  // g'[q][j][A]
    double* rec = g + HR_G;          // the points' records
    double* h = rec + NQ * HR_PT;    // h[q][i][k][B] of the owned node in hand
    HkCell& cell = s_cell[w];
    __syncthreads();
    for (u32 e = blk_ptr[blockIdx.x] + w; e < blk_ptr[blockIdx.x + 1]; e += HR_WPB) {
        const u64 c = blk_cell[e];
        u32 mask = blk_mask[e];
        hk_gather(c, lane, 32, cell_verts, coords, cell_nodes, frames, has_frames, u, 0, row_ptr, kpos, cell);
        __syncwarp();
        double mm[3][3];
        const double adet = fabs(hk_geometry(cell.x, ggeo, cell.rot, mm));
        for (int k = lane; k < NQ * NLOC; k += 32) {
            const double* gr = gref + k * 3;
#pragma unroll
            for (int A = 0; A < 3; ++A) g[k * 3 + A] = gr[0] * mm[0][A] + gr[1] * mm[1][A] + gr[2] * mm[2][A];
        }
        __syncwarp();
        for (int q = lane; q < NQ; q += 32) {
            double f[3][3], s[3][3], form[HL_FORM];
            hk_deformation(cell.rot, cell.u, reinterpret_cast<const double(*)[3]>(g + q * NLOC * 3), f);
            hl_point(prm, f, s, form);
            hm_point_tangent(prm, f, s, form, wts[q] * adet, rec + q * HR_PT);
        }
        __syncwarp();
        while (mask) {
            const int a = __ffs(mask) - 1;
            mask &= mask - 1;
            const u32 node = cell.node[a];
            for (int it = lane; it < NQ * 27; it += 32) {
                const int q = it / 27, i = (it % 27) / 9, k = (it % 9) / 3, B = it % 3;
                const double* ga = g + (q * NLOC + a) * 3;
                const double* pr = rec + q * HR_PT;
                h[it] = ga[0] * hr_tangent(pr, 3 * i, 3 * k + B) + ga[1] * hr_tangent(pr, 3 * i + 1, 3 * k + B) + ga[2] * hr_tangent(pr, 3 * i + 2, 3 * k + B);
            }
            if (lane < 3) {
                double v = 0.0;
                for (int q = 0; q < NQ; ++q) {
                    const double* ga = g + (q * NLOC + a) * 3;
                    const double* wp = rec + q * HR_PT + HM_NE + lane * 3;
                    v += wp[0] * ga[0] + wp[1] * ga[1] + wp[2] * ga[2];
                }
                atomicAdd(&racc[(node - n0) * 3 + lane], v);
            }
            __syncwarp();
            if (lane < 3 * NLOC) {
                const int b = lane / 3, i = lane % 3;
                double acc[3] = {0.0, 0.0, 0.0};
                for (int q = 0; q < NQ; ++q) {
                    const double* gb = g + (q * NLOC + b) * 3;
                    const double* hq = h + q * 27 + i * 9;
                    const double g0 = gb[0], g1 = gb[1], g2 = gb[2];
#pragma unroll
                    for (int k = 0; k < 3; ++k) acc[k] += hq[k * 3] * g0 + hq[k * 3 + 1] * g1 + hq[k * 3 + 2] * g2;
                }
                const u32 at = row_ptr[(u64)node * 3 + i] - base + 3u * kpos[(c * NLOC + a) * NLOC + b];
#pragma unroll
                for (int k = 0; k < 3; ++k) atomicAdd(&seg[at + k], acc[k]);
            }
            __syncwarp();  // h is rewritten by the next owned node
        }
    }
    __syncthreads();
    for (u32 k = threadIdx.x; k < len; k += 32 * HR_WPB) vals[(u64)base + k] = seg[k];
    for (u32 k = threadIdx.x; k < nres; k += 32 * HR_WPB) r[(u64)n0 * 3 + k] = racc[k];
}
#endif
