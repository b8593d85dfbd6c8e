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
//
// HR_RECORDS (the thirty-first pass): the law is not recomputed. `hyper_records` runs it once per
// point — a lane per point, 32/NQ cells a warp, every lane busy — and stores each point's record
// pulled back to the reference cell (Â = (I ⊗ M) w𝔸 (I ⊗ M)ᵀ, ŵP = w P Mᵀ with g' = ∇_ξN · M, so that
// g'ᵀ w𝔸 g' = ∇_ξNᵀ Â ∇_ξN) to a global stage; `hyper_recompute` then reads a cell's records
// instead of gathering the cell and running its law, and contracts them with the reference
// gradients (the table's), so it needs no geometry either. The stage's bytes (54 doubles a point)
// replace the law's ×4–5 redundancy; still no global atomics and no zeroing pass.
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
// The place of w𝔸[α][β] among the record's distinct entries (α ≤ β row-major, `hm_point_tangent`).
__device__ __forceinline__ int hr_tri(int al, int be) {
    const int lo = al < be ? al : be, hi = al < be ? be : al;
    return lo * 9 - lo * (lo - 1) / 2 + hi - lo;
}
__device__ __forceinline__ double hr_tangent(const double* rec, int al, int be) { return rec[hr_tri(al, be)]; }

#ifdef HR_RECORDS
#if NQ > 32
#error "the staged records give a lane to each point of 32 / NQ cells: NQ ≤ 32"
#endif
#define HR_REC 54                  // a point's record in the stage: Â (45, α ≤ β row-major) | ŵP (9)
#define HR_CPW (32 / NQ)           // cells a warp of hyper_records
#ifndef HR_LWPB
#define HR_LWPB 4                  // warps per block of hyper_records
#endif
#ifndef HR_LMINB
#define HR_LMINB 1                 // its blocks an SM asked of the register allocator (the sweep's `lminbN`)
#endif
// The stage: chunks of 32 points (the HR_CPW cells of one warp of hyper_records, lanes beyond
// HR_CPW·NQ unused), each HR_REC rows of 32 doubles — entry e of the point on lane t at
// chunk·HR_REC·32 + e·32 + t — so that every store of hyper_records is a whole 256 B run and a
// cell's NQ points of one entry are adjacent (one 32 B sector at NQ = 4).
__device__ __forceinline__ u64 hr_at(u64 c, int q, int e) { return ((c / HR_CPW) * HR_REC + e) * 32 + (c % HR_CPW) * NQ + q; }

extern "C" __global__ void __launch_bounds__(32 * HR_LWPB, HR_LMINB)
    hyper_records(u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords, const u32* __restrict__ cell_nodes,
                  const double* __restrict__ tab, const double* __restrict__ frames, int has_frames, const double* __restrict__ prm,
                  const double* __restrict__ u, double* __restrict__ stage) {
    __shared__ HkCell s_cell[HR_LWPB][HR_CPW];
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wts = ggeo + NQ * NV * 3;
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const u64 c0 = ((u64)blockIdx.x * HR_LWPB + w) * HR_CPW;
    if (c0 >= ncells) return;  // the whole warp: no block barrier follows
    for (int k = 0; k < HR_CPW && c0 + k < ncells; ++k)
        hk_gather(c0 + k, lane, 32, cell_verts, coords, cell_nodes, frames, has_frames, u, 0, nullptr, nullptr, s_cell[w][k]);
    __syncwarp();
    const int k = lane / NQ, q = lane % NQ;
    if (k >= HR_CPW || c0 + k >= ncells) return;
    const HkCell& cell = s_cell[w][k];
    double mm[3][3], f[3][3], s[3][3], form[HL_FORM], rec[HR_PT];
    const double adet = fabs(hk_geometry(cell.x, ggeo, cell.rot, mm));
    // F' = R + Σ_j u_j ⊗ g'_j, g'_j = ∇_ξN_j · M (`hk_deformation`'s sums in its order)
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int A = 0; A < 3; ++A) f[a][A] = cell.rot[a * 3 + A];
    for (int j = 0; j < NLOC; ++j) {
        const double* gr = gref + (q * NLOC + j) * 3;
        double gj[3];
#pragma unroll
        for (int A = 0; A < 3; ++A) gj[A] = gr[0] * mm[0][A] + gr[1] * mm[1][A] + gr[2] * mm[2][A];
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int A = 0; A < 3; ++A) f[a][A] += cell.u[j][a] * gj[A];
    }
    hl_point(prm, f, s, form);
    hm_point_tangent(prm, f, s, form, wts[q] * adet, rec);
    // Â[(i,a'),(k,b')] = Σ_B (Σ_A M[a'][A] w𝔸[(i,A),(k,B)]) M[b'][B], the rows α ≤ β only.
    double* out = stage + hr_at(c0 + k, q, 0);
    int e = 0;
#pragma unroll
    for (int al = 0; al < 9; ++al) {
        const int i = al / 3, ap = al % 3;
        double t[9];
#pragma unroll
        for (int kb = 0; kb < 9; ++kb)
            t[kb] = mm[ap][0] * hr_tangent(rec, 3 * i, kb) + mm[ap][1] * hr_tangent(rec, 3 * i + 1, kb) + mm[ap][2] * hr_tangent(rec, 3 * i + 2, kb);
#pragma unroll
        for (int be = al; be < 9; ++be, ++e) {
            const int kk = be / 3, bp = be % 3;
            out[(u64)e * 32] = t[3 * kk] * mm[bp][0] + t[3 * kk + 1] * mm[bp][1] + t[3 * kk + 2] * mm[bp][2];
        }
    }
#pragma unroll
    for (int i = 0; i < 3; ++i)
#pragma unroll
        for (int ap = 0; ap < 3; ++ap) {
            const double* wp = rec + HM_NE + i * 3;
            out[(u64)(HM_NE + i * 3 + ap) * 32] = wp[0] * mm[ap][0] + wp[1] * mm[ap][1] + wp[2] * mm[ap][2];
        }
}
#undef HR_STAGE_ARG  // (the CPU emulation includes this file twice)
#define HR_STAGE_ARG , const double* __restrict__ stage
#else
#undef HR_STAGE_ARG
#define HR_STAGE_ARG
#endif


extern "C" __global__ void __launch_bounds__(32 * HR_WPB)
    hyper_recompute(const u32* __restrict__ blk_node, const u32* __restrict__ blk_ptr, const u32* __restrict__ blk_cell,
                    const unsigned short* __restrict__ blk_mask, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                    const u32* __restrict__ cell_nodes, const double* __restrict__ tab, const double* __restrict__ frames, int has_frames,
                    const double* __restrict__ prm, const double* __restrict__ u, double* __restrict__ r, const u32* __restrict__ row_ptr,
                    const unsigned short* __restrict__ kpos, double* __restrict__ vals HR_STAGE_ARG) {
    extern __shared__ double hr_sh[];
    __shared__ HkCell s_cell[HR_WPB];
    const double* gref = tab;
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
    // h's items (q, i, k, B): q | the record offsets of w𝔸[3i + A][3k + B], A = 0, 1, 2 (a byte each),
    // once a block, so that the contraction's loop does no index arithmetic
    __shared__ u32 s_off[NQ * 27];
    for (int it = threadIdx.x; it < NQ * 27; it += 32 * HR_WPB) {
        const int q = it / 27, i = (it % 27) / 9, k = (it % 9) / 3, B = it % 3;
        u32 o = (u32)q;
#pragma unroll
        for (int A = 0; A < 3; ++A) o |= (u32)hr_tri(3 * i + A, 3 * k + B) << (8 * (A + 1));
        s_off[it] = o;
    }
#ifdef HR_RECORDS
    // the reference gradients stand for g' (the records are pulled back), once a warp
    for (int k = lane; k < HR_G; k += 32) g[k] = gref[k];
    (void)cell_verts, (void)coords, (void)frames, (void)has_frames, (void)prm, (void)u, (void)cell;
#endif
    __syncthreads();
    for (u32 e = blk_ptr[blockIdx.x] + w; e < blk_ptr[blockIdx.x + 1]; e += HR_WPB) {
        const u64 c = blk_cell[e];
        u32 mask = blk_mask[e];
#ifdef HR_RECORDS
        __syncwarp();  // the previous cell's records are read
        // entry-major with the points fastest: a cell's NQ points of one entry are adjacent in the stage
        for (int k = lane; k < NQ * HR_REC; k += 32) rec[(k % NQ) * HR_PT + k / NQ] = stage[hr_at(c, k % NQ, k / NQ)];
        __syncwarp();
#else
        const double* ggeo = tab + NQ * NLOC * 3;
        const double* wts = ggeo + NQ * NV * 3;
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
#endif
        while (mask) {
            const int a = __ffs(mask) - 1;
            mask &= mask - 1;
#ifdef HR_RECORDS
            const u32 node = cell_nodes[c * NLOC + a];
#else
            const u32 node = cell.node[a];
#endif
            for (int it = lane; it < NQ * 27; it += 32) {
                const u32 o = s_off[it];
                const int q = o & 0xff;
                const double* ga = g + (q * NLOC + a) * 3;
                const double* pr = rec + q * HR_PT;
                h[it] = ga[0] * pr[(o >> 8) & 0xff] + ga[1] * pr[(o >> 16) & 0xff] + ga[2] * pr[o >> 24];
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
