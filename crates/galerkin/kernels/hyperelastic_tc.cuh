#ifdef WPB
// ---- The tensor-core scheme (3D simplices, NLOC ≤ 16): WPC warps per cell, WPB cells per block ----
// No block barrier: each cell's warp (or pair of warps, WPC = 2) integrates it through its own slice
// of shared memory, with __syncwarp (a cell barrier) between phases, so the SM interleaves
// independent cells instead of waiting at barriers. With WPC = 2 the loops below run over the
// cell's 64 threads and each warp owns half of K's n-tiles.
//   G  every lane forms the (affine) geometry itself: M = J⁻¹ R, |det J|; then per (point, node)
//      g'_qj = Mᵀ ∇_ξ φ_j(ξ_q), all points at once;
//   L  per point (a lane each, all points at once): F = R + Σ_j u_j ⊗ g'_qj, the law (`hl_point`,
//      its form of ℂ written straight into the point record), S, and for the Jacobian U = F X and
//      V = F Y (X, Y the form's tensors); then per (node j, component b) the residual
//      r_(j,b) = Σ_q w Σ_B (F S)_bB g'_qjB;
//   Y  per chunk of QC points, per (point, A, component pair p = (a ≤ b)): the three entries
//      w 𝔸_aA,bB (B = 0, 1, 2) straight from the form — ℂ's shape pushed forward term by term,
//        𝔸_aA,bB = c₁ U_aA U_bB + e₁ (W_ab X_AB + U_aB U_bA) + c₂ V_aA V_bB
//                  + h (δ_AB Σ_I F_aI F_bI B_IA + F_aB F_bA B_AB) + δ_ab S_AB,   W = F X Fᵀ,
//      (no slice of ℂ or 𝔸 is stored) — and the row (q, A) of Y[(q, A), (p, j)] = Σ_B w 𝔸_aA,bB g'_qjB;
//   K  the element matrix as one small GEMM per cell on the FP64 tensor cores (mma m16n8k4):
//      K[i, (p, j)] += Σ_(q, A) g'_qiA Y[(q, A), (p, j)], rows i padded to 16, the 6·NLOC columns to
//      n-tiles of 8, the accumulators in registers across the chunks. With HK_RES_MMA the residual
//      rides along as 3 more columns Y[(q, A), 6·NLOC + b] = w P_bA (P2: the last tile's spare ones).
// Scatter: the blocks a < b are added at (i, a), (j, b) and, transposed, at (j, b), (i, a) (the
// element matrix is symmetric); the diagonal blocks a = b whole: every entry of the element matrix
// once, at the CSR positions found once on the host.
#if DIM != 3 || !AFFINE || NLOC > 16
#error "the tensor-core scheme is written for 3D simplices of at most 16 nodes"
#endif
#ifndef QC
#define QC 4
#endif
// WPC (warps per cell, 1 or 2; the twelfth pass): with 2, the cell's phases are shared by 64
// threads (cell barriers instead of __syncwarp) and each warp keeps half of the n-tiles' accumulators.
#ifndef WPC
#define WPC 1
#endif
#define TPC (32 * WPC)
// HK_RES_MMA=1 (the twelfth pass): the residual r_(i,b) = Σ_(q,A) g'_qiA (w P_bA) as 3 more columns
// of the GEMM (the spare columns of the last n-tile at P2) instead of its own loop over the points.
#ifndef HK_RES_MMA
#define HK_RES_MMA 0
#endif
// HK_VEC=1 (the twelfth pass): Y's loads of g' and its stores in pairs (128-bit shared accesses).
#ifndef HK_VEC
#define HK_VEC 0
#endif
#if WPC == 1
#define HK_CSYNC() __syncwarp()
#elif WPB == 1
#define HK_CSYNC() __syncthreads()
#else
#define HK_CSYNC() asm volatile("bar.sync %0, %1;" ::"r"(wp + 1), "r"(TPC) : "memory")
#endif
#define TC_NCOL (6 * NLOC)
#define TC_NCOLR (TC_NCOL + (HK_RES_MMA ? 3 : 0))  // with the residual's columns
#define TC_NT ((TC_NCOLR + 7) / 8)
#define TC_NTW ((TC_NT + WPC - 1) / WPC)  // n-tiles per warp
#define TC_YS (((8 * TC_NT + 11) / 16) * 16 + 4)  // ≡ 4 (mod 16): conflict-free B-fragment loads
#define TC_PT 59                                     // point record: form (22) | F | S | U | V | w
// The point records' space, reused by the staged scatter for the element matrix's upper blocks
// (NLOC × 6·NLOC): the larger of the two (a rule of few points, e.g. 4 at P2, needs the blocks');
// HK_PATCH stages nothing (the fragments go straight to the patch's slots), unless HK_PATCH_TURNS.
// HK_ST_Y (twenty-second pass): the staged blocks go to Y's space instead (dead once the last
// chunk's k-steps are done, and at least as large at P2 with 3 points a chunk: 9 × 68 ≥ 10 × 60),
// so the records hold the points alone — 8.1 instead of 11.1 KB a cell at P2's 4 points, more
// cells an SM where the registers allow it (with HK_MINB).
#if (defined(HK_PATCH) && !defined(HK_PATCH_TURNS)) || defined(HK_ST_Y)
#define TC_REC (NQ * TC_PT)
#else
#define TC_REC (NQ * TC_PT > NLOC * TC_NCOL ? NQ * TC_PT : NLOC * TC_NCOL)
#endif

#if defined(HK_ST_Y) && 3 * QC * TC_YS < NLOC * TC_NCOL
#error "HK_ST_Y: Y's space (3·QC rows) is smaller than the staged blocks (NLOC × 6·NLOC): more points a chunk"
#endif

// D (16 × 8) += A (16 × 4) · B (4 × 8), FP64 tensor cores; lane (g, t) = (lane/4, lane%4) holds
// a0 = A[g][t], a1 = A[g + 8][t], b0 = B[t][g], d[e] = D[g + 8(e/2)][2t + e%2].
__device__ __forceinline__ void hk_mma(double d[4], double a0, double a1, double b0) {
#ifdef HK_EMU
    hk_emu_mma(d, a0, a1, b0);
#elif __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b0));
#else
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d[0]), "+d"(d[1]) : "d"(a0), "d"(b0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+d"(d[2]), "+d"(d[3]) : "d"(a1), "d"(b0));
#endif
}


// HK_MINB (the sweep): blocks per SM promised to the compiler, which caps the registers per thread.
#ifdef HK_MINB
#define HK_BOUNDS __launch_bounds__(TPC * WPB, HK_MINB)
#else
#define HK_BOUNDS __launch_bounds__(TPC * WPB)
#endif

// HK_PERSIST (eighteenth pass): each cell's warp(s) loop over cells c, c + stride, … of a grid of
// what is resident at once (`GpuHyper` sizes it by the occupancy) instead of a block per cell.
// HK_PREFETCH (with HK_PERSIST): the next cell's record is copied into the other of two buffers by
// cp.async while this cell is integrated, in two stages — its indices (nodes, vertices, frame,
// column ranks) at the cell's start, what they point to (displacements, coordinates, row starts)
// after its law — so that no cell begins with the chain of dependent global loads, and the scatter
// reads its positions from shared memory (HK_POS_SHARED's layout) without loading them in its path.
template <int BYTES>
__device__ __forceinline__ void hk_async(void* dst, const void* src) {
#ifdef HK_EMU
    if (BYTES == 8) *static_cast<double*>(dst) = *static_cast<const double*>(src); else *static_cast<u32*>(dst) = *static_cast<const u32*>(src);
#else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "n"(BYTES) : "memory");
#endif
}
// Waits for this thread's copies; a cell barrier must follow before others read them.
__device__ __forceinline__ void hk_async_wait() {
#ifndef HK_EMU
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
#ifdef HK_PREFETCH
#ifndef HK_PERSIST
#error "HK_PREFETCH needs HK_PERSIST"
#endif
// Stage 1 of cell c's record: node and vertex numbers, frame (the identity without frames), ranks.
__device__ __forceinline__ void hk_fetch_ids(u64 c, int tid, const u32* __restrict__ cell_verts, const u32* __restrict__ cell_nodes,
                                             const double* __restrict__ frames, int has_frames, int want_k, const unsigned short* __restrict__ kpos,
                                             HkCell& cell) {
    if (tid < NLOC) hk_async<4>(&cell.node[tid], &cell_nodes[c * NLOC + tid]);
    else if (tid < NLOC + NV) hk_async<4>(&cell.vert[tid - NLOC], &cell_verts[c * NV + tid - NLOC]);
    const int kr = (tid + TPC - NLOC - NV) % TPC;  // the frame on the next lanes
    if (kr < 9) {
        if (has_frames) hk_async<8>(&cell.rot[kr], &frames[c * 9 + kr]);
        else cell.rot[kr] = kr % 4 == 0 ? 1.0 : 0.0;
    }
    if (want_k) {
#if NLOC % 2 == 0  // ranks in pairs: 4-byte copies (a cell's ranks start 4-byte aligned)
        for (int k = tid; k < NLOC * NLOC / 2; k += TPC) hk_async<4>(&cell.kp[2 * k], &kpos[c * NLOC * NLOC + 2 * k]);
#else
        for (int k = tid; k < NLOC * NLOC; k += TPC) cell.kp[k] = kpos[c * NLOC * NLOC + k];
#endif
    }
}
// Stage 2, once stage 1 has arrived and a cell barrier has passed: what the numbers point to.
__device__ __forceinline__ void hk_fetch_vals(int tid, const double* __restrict__ coords, const double* __restrict__ u, int want_k,
                                              const u32* __restrict__ row_ptr, HkCell& cell) {
    for (int k = tid; k < NLOC * 3; k += TPC) hk_async<8>(&cell.u[k / 3][k % 3], &u[(u64)cell.node[k / 3] * 3 + k % 3]);
    for (int k = tid; k < NV * 3; k += TPC) hk_async<8>(&cell.x[k / 3][k % 3], &coords[(u64)cell.vert[k / 3] * 3 + k % 3]);
    if (want_k)
        for (int k = tid; k < NLOC * 3; k += TPC) hk_async<4>(&cell.row[k / 3][k % 3], &row_ptr[(u64)cell.node[k / 3] * 3 + k % 3]);
}
#define HK_BUFS 2
#else
#define HK_BUFS 1
#endif
#if defined(HK_PERSIST) || defined(HK_PATCH) || defined(HK_CHAIN)
#define HK_NEXT_CELL continue
#else
#define HK_NEXT_CELL return
#endif

// f(i, j, a, b, e, v) for each of a warp's accumulator fragments (`acc`, its n-tiles wq·TC_NTW + w)
// that is an entry of the element matrix's upper component blocks: v = K_(i,a),(j,b), a ≤ b, row node
// i < NLOC, column n = p·NLOC + j < 6·NLOC (p = (a ≤ b)); e the fragment's place (4w + its element).
template <class F>
__device__ __forceinline__ void hk_fragments(const double (&acc)[TC_NTW][4], int wq, int lane, F f) {
    const int g8 = lane / 4, t4 = lane % 4;
#pragma unroll
    for (int w = 0; w < TC_NTW; ++w)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int i = g8 + 8 * (e / 2), n = (wq * TC_NTW + w) * 8 + 2 * t4 + e % 2;
            if (i >= NLOC || n >= TC_NCOL) continue;
            const int p = n / NLOC;
            f(i, n % NLOC, hk_pa(p), hk_pb(p), 4 * w + e, acc[w][e]);
        }
}

// HK_PATCH (nineteenth pass; `Scheme::TcPatch`): a block per patch of cells (`src/hyperelastic/patch.rs`,
// Kuhn cubes on the box), its WPB cells' warps taking the patch's cells in turn (`ncells` is then the
// number of patches); each warp adds its cell's fragments of K straight to the patch's slots in
// dynamic shared memory (shared atomics: the block's cells share node pairs) instead of scattering
// them to L2, and after a block barrier the flush (`hp_flush`) adds each distinct value once: the
// per-cell scatter's 900 atomic adds a cell become the patch's distinct entries (/1.53 for cubes).
// The law at one point of a cell into its record pt (TC_PT numbers; w at pt[58] is the cell's own):
// F = R + Σ_j u_j ⊗ g'_j, the law's form (`hl_point`), F, S and, for the Jacobian's Y, U = F X and
// (the fibre law) V = F Y.
__device__ __forceinline__ void hk_law_point(const double* __restrict__ prm, const HkCell& cell, const double (*g)[3], double* pt) {
    double f[3][3], s[3][3];
    hk_deformation(cell.rot, cell.u, g, f);
    hl_point(prm, f, s, pt);
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int A = 0; A < 3; ++A) {
            pt[22 + a * 3 + A] = f[a][A];
            pt[31 + a * 3 + A] = s[a][A];
            pt[40 + a * 3 + A] = f[a][0] * pt[A] + f[a][1] * pt[3 + A] + f[a][2] * pt[6 + A];
#if LAW == 2
            pt[49 + a * 3 + A] = f[a][0] * pt[9 + A] + f[a][1] * pt[12 + A] + f[a][2] * pt[15 + A];
#endif
        }
}

// One entry w 𝔸_aA,bB (both schemes' Y phase: the records' and HK_FUSE's): ℂ's form pushed forward
// term by term from the rows a and b of U = F X, F and (the fibre law) V = F Y, X, S and the form's
// scalars (see the scheme's comment); wab = W_ab = U_a · F_b, dab = Σ_I F_aI F_bI B_IA (the fibre law).
struct HkPair {
    const double *x, *sm, *ua, *ub, *fa, *fb, *va, *vb;
    double c1, e1, c2, h, wab;
    bool diag;  // a = b
};
__device__ __forceinline__ double hk_dab(const double* __restrict__ prm, const HkPair& q, int A) {
    double dab = 0.0;
#pragma unroll
    for (int I = 0; I < 3; ++I) dab += q.fa[I] * q.fb[I] * hl_b(prm, I, A);
    return dab;
}
__device__ __forceinline__ double hk_entry(const double* __restrict__ prm, const HkPair& q, double dab, int A, int B) {
    double v = q.c1 * q.ua[A] * q.ub[B] + q.e1 * (q.wab * q.x[A * 3 + B] + q.ua[B] * q.ub[A]) + (q.diag ? q.sm[A * 3 + B] : 0.0);
#if LAW == 2
    v += q.c2 * q.va[A] * q.vb[B] + q.h * ((A == B ? dab : 0.0) + q.fa[B] * q.fb[A] * hl_b(prm, A, B));
#else
    (void)prm;
    (void)dab;
#endif
    return v;
}
// The pair (a, b)'s view of a point record pt (TC_PT numbers: `hk_law_point`'s layout), wherever it
// lies (shared memory, or registers under HK_FUSE with the rows a, b given).
__device__ __forceinline__ HkPair hk_pair(const double* pt, const double* ua, const double* ub, const double* fa, const double* fb, const double* va,
                                          const double* vb, bool diag) {
    HkPair q;
    q.x = pt;
    q.sm = pt + 31;
    q.ua = ua;
    q.ub = ub;
    q.fa = fa;
    q.fb = fb;
    q.va = va;
    q.vb = vb;
    q.c1 = pt[18];
    q.e1 = pt[19];
    q.c2 = pt[20];
    q.h = pt[21];
    q.wab = ua[0] * fb[0] + ua[1] * fb[1] + ua[2] * fb[2];
    q.diag = diag;
    return q;
}

// HK_FUSE (twenty-third pass; with HK_RES_MMA=1): with the Jacobian, no law phase, no point records
// and no residual loop: the Y phase's items are (point t, pair p) — 6 a point, all three rows A of Y
// at once — and each such lane evaluates its point's law itself, in registers (the 6 lanes of a
// point repeat it side by side: the warp issues the law once, as with a lane per point, but on 24
// of 32 lanes instead of 4), forms the 9 entries w 𝔸_aA,bB and stores its 3 × NLOC values of Y and,
// for p < 3, the residual's column. What it removes per cell is shared-memory traffic: the records'
// stores and their ≈ 35 loads per (t, A, p) item, the residual loop's loads, two thirds of the g'
// loads of Y (read once for three rows); the residual-alone launch keeps the records' path.
#ifdef HK_FUSE
#if !HK_RES_MMA || defined(HK_LAW_WIDE)
#error "HK_FUSE needs HK_RES_MMA=1 (the residual from the GEMM) and not HK_LAW_WIDE"
#endif
#endif
// Row r (0..2, known only at run time) of a 3 × 3 matrix m held in registers, by selects: an index
// into a register array that is not a compile-time constant would move it to local memory.
__device__ __forceinline__ void hk_row_of(const double* m, int r, double out[3]) {
#pragma unroll
    for (int k = 0; k < 3; ++k) out[k] = r == 0 ? m[k] : (r == 1 ? m[3 + k] : m[6 + k]);
}

// HK_TRIM (round 26; with HK_FUSE, one warp a cell): the fused kernel's pre-scatter instructions
// cut where they are not arithmetic the result needs (static SASS counts, BENCHMARKS.md's 26th pass):
//   g'  a lane per (node j, component A) over every point, with column A of M = J⁻¹R alone — not M
//       whole in every lane and a flat loop over (point, node) whose 4·NLOC items split the warp;
//   F   of the chunk's points as one small GEMM on the tensor cores (`hk_trim_f`) into the records'
//       space (dead with the Jacobian), each (point, pair) lane reading its point's F and its rows
//       a, b there — not 9·NLOC FMAs and the nodes' u and g' loads repeated in every lane;
//   U, V only the rows a, b (`hk_trim_point`) — not U = F X and V = F Y whole and 6 rows selected;
//   the entries' factors formed once a lane (`hk_trim_entries`), and the law without its NaN branch
//   (`hl_point`: the NaNs' moves were on every lane's path; ln J makes S and ℂ non-finite at J ≤ 0).
// Everything else is the fused kernel's: the same Y, GEMM and scatters (any of them). Host counts
// (`benchmarks/h200/hyper26-sass.sh`): 1 555 instructions a cell against 1 768, 1 209 against 1 423
// before the scatter. HK_COUNT_JACOBIAN (counts only) compiles the Jacobian's path alone.
#ifdef HK_TRIM
#if !defined(HK_FUSE) || WPC != 1 || QC > 4
#error "HK_TRIM is the fused kernel's (HK_FUSE) with one warp a cell (WPC = 1) and at most 4 points a chunk"
#endif
#define TC_FS 4  // a row of F in the records' space: 3 numbers padded to 4 (16-byte rows)
// F'_t = R + Σ_j u_j ⊗ g'_tj of the chunk's nq ≤ 4 points t (g: the chunk's first point's g') as
// D[a][n] = R_aA + Σ_j A[a][j] B[j][n], column n = 4A + t (shifts, not divisions by 3), A[a][j] = u_ja
// (rows a < 3), B[j][n] = g'_tjA (m16n8k4, the nodes j in k-steps of 4), stored to sf[(3t + a)·TC_FS + A].
__device__ __forceinline__ void hk_trim_f(const HkCell& cell, const double (*g)[NLOC][3], int nq, int lane, double* sf) {
    const int g8 = lane / 4, t4 = lane % 4;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
        const int bA = 2 * nt + (g8 >> 2), bt = g8 & 3;         // B's column of this lane
        const int dA = 2 * nt + (t4 >> 1), dt = 2 * (t4 & 1);  // D's columns dt, dt + 1 of row g8
        const bool bv = bA < 3 && bt < nq, dv = g8 < 3 && dA < 3;
        double d[4] = {dv && dt < nq ? cell.rot[g8 * 3 + dA] : 0.0, dv && dt + 1 < nq ? cell.rot[g8 * 3 + dA] : 0.0, 0.0, 0.0};
#pragma unroll
        for (int k0 = 0; k0 < NLOC; k0 += 4) {
            const int j = k0 + t4;
            const double a0 = g8 < 3 && j < NLOC ? cell.u[j][g8] : 0.0;
            const double b0 = bv && j < NLOC ? g[bt][j][bA] : 0.0;
            hk_mma(d, a0, 0.0, b0);
        }
        if (dv && dt < nq) sf[(dt * 3 + g8) * TC_FS + dA] = d[0];
        if (dv && dt + 1 < nq) sf[((dt + 1) * 3 + g8) * TC_FS + dA] = d[1];
    }
}
// The law at a point from its F (sf: `hk_trim_f`'s rows) into pt's form (0..21) and S (31..39), with
// the rows a, b of F, U = F X and (the fibre law) V = F Y that the pair (a, b) needs.
__device__ __forceinline__ void hk_trim_point(const double* __restrict__ prm, const double* sf, int a, int b, double* pt, double fa[3], double fb[3],
                                              double ua[3], double ub[3], double va[3], double vb[3]) {
    double f[3][3], s[3][3];
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
        for (int A = 0; A < 3; ++A) f[r][A] = sf[r * TC_FS + A];
    hl_point(prm, f, s, pt);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        fa[k] = sf[a * TC_FS + k];
        fb[k] = sf[b * TC_FS + k];
    }
#pragma unroll
    for (int A = 0; A < 3; ++A) {
#pragma unroll
        for (int B = 0; B < 3; ++B) pt[31 + A * 3 + B] = s[A][B];
        ua[A] = fa[0] * pt[A] + fa[1] * pt[3 + A] + fa[2] * pt[6 + A];
        ub[A] = fb[0] * pt[A] + fb[1] * pt[3 + A] + fb[2] * pt[6 + A];
#if LAW == 2
        va[A] = fa[0] * pt[9 + A] + fa[1] * pt[12 + A] + fa[2] * pt[15 + A];
        vb[A] = fb[0] * pt[9 + A] + fb[1] * pt[12 + A] + fb[2] * pt[15 + A];
#else
        va[A] = vb[A] = 0.0;
#endif
    }
}
// The pair's 9 entries w 𝔸_aA,bB (`hk_entry`'s sum regrouped: w and the form's scalars folded into
// factors formed once a lane — w c₁ U_aA, w e₁ U_bA, w e₁ W_ab, w c₂ V_aA, w h F_bA, w h d_A — so that
// an entry costs 7 or 8 FP64 operations instead of 12 and the selects of S).
__device__ __forceinline__ void hk_trim_entries(const double* __restrict__ prm, const HkPair& q, double w, double ab[3][3]) {
    const double wc1 = w * q.c1, we1 = w * q.e1, ewab = we1 * q.wab, ws = q.diag ? w : 0.0;
#if LAW == 2
    const double wc2 = w * q.c2, wh = w * q.h;
#endif
#pragma unroll
    for (int A = 0; A < 3; ++A) {
        const double cu = wc1 * q.ua[A], eu = we1 * q.ub[A];
#if LAW == 2
        const double cv = wc2 * q.va[A], hf = wh * q.fb[A], hd = wh * hk_dab(prm, q, A);
#endif
#pragma unroll
        for (int B = 0; B < 3; ++B) {
            double v = cu * q.ub[B] + ewab * q.x[A * 3 + B] + eu * q.ua[B] + ws * q.sm[A * 3 + B];
#if LAW == 2
            v += cv * q.vb[B] + hf * hl_b(prm, A, B) * q.fa[B] + (A == B ? hd : 0.0);
#else
            (void)prm;
#endif
            ab[A][B] = v;
        }
    }
}
#define HK_PT_ALIGN __align__(16)
#else
#define HK_PT_ALIGN
#endif

// HK_LAW_WIDE (twentieth pass; WPB > 1, a block per WPB cells): the law of the block's WPB·NQ points
// is spread over the block's threads (at P2's 4 points and WPB = 4: 16 lanes of one warp instead of
// 4 lanes in each of 4 warps), between two block barriers; the law's ≈ 300 instructions a point are
// then issued once per 16 points rather than once per cell. A warp past the last cell integrates
// the last cell again (it must meet the barriers) and leaves before adding anything.
#ifdef HK_LAW_WIDE
#if WPB < 2 || WPC != 1 || defined(HK_PERSIST) || defined(HK_PATCH) || defined(HK_SCATTER_ONLY)
#error "HK_LAW_WIDE needs WPB > 1 cells of one warp each, without HK_PERSIST, HK_PATCH or HK_SCATTER_ONLY"
#endif
#endif

#ifdef HK_PATCH
#if defined(HK_PERSIST) || defined(HK_STAGE) || defined(HK_FRAG_SCATTER) || defined(HK_NO_SCATTER) || !defined(NSLOT)
#error "HK_PATCH needs NSLOT and neither HK_PERSIST, HK_STAGE, HK_FRAG_SCATTER nor HK_NO_SCATTER"
#endif
#define HK_PATCH_ARGS                                                                                                                  \
    , const u32 *__restrict__ patch_ptr, const u32 *__restrict__ patch_cells, const unsigned short *__restrict__ pslot,              \
        const u32 *__restrict__ flush_ptr, const u32 *__restrict__ flush_pos, const u32 *__restrict__ flush_meta
// A cell's fragments go to distinct slot entries, so with one cell at a time per block (WPB = 1: its
// warps own distinct n-tiles, and the cells follow each other after a cell barrier) plain adds do;
// with several, the block's cells share slots and add atomically.
__device__ __forceinline__ void hk_slot_add(double* slot, double v) {
#if WPB == 1
    *slot += v;
#else
    atomicAdd(slot, v);
#endif
}
// A warp's fragments of K (the upper component blocks p = (a ≤ b) of every node pair (i, j)) to the
// patch's slots through the cell's `pslot` entries ps: entry ((i, a), (j, b)) goes to the slot of
// {i, j} at [a][b] where node i is the slot's lower global node, else at [b][a]; the blocks a = b of
// i > j are left out (they equal those of i < j) and the diagonal blocks' a < b go to [b][a] as well
// (the element matrix is symmetric): each of the cell's 9·HP_NUP upper values once.
__device__ __forceinline__ void hk_patch_add(const double (&acc)[TC_NTW][4], int wq, int lane, const unsigned short* __restrict__ ps, double* s_acc) {
    hk_fragments(acc, wq, lane, [&](int i, int j, int a, int b, int, double v) {
        if (a == b && i > j) return;
        const int sf = ps[i <= j ? hp_up(i, j) : hp_up(j, i)], s = sf >> 1;
        const bool direct = (i <= j) != ((sf & 1) != 0);
        const int x = direct ? a : b, y = direct ? b : a;
        hk_slot_add(&s_acc[s * 9 + x * 3 + y], v);
        if (i == j && a != b) hk_slot_add(&s_acc[s * 9 + y * 3 + x], v);
    });
}
// HK_PATCH_TURNS (twentieth pass): contention-free and register-lean. Each warp stages its cell's
// upper blocks in shared memory as the default does (a plain store per fragment), then the block's
// cells add them to the slots in turn — a block barrier before each turn, the cell's TPC threads
// over its node pairs with plain shared adds: no atomics or compare-and-swap loops, no cell's adds
// racing another's, and the walk a loop over pairs instead of the nineteenth pass's unrolled
// fragment-to-slot walk (245 registers). Entry ((i, a), (j, b)) of pair i ≤ j goes to [a][b] of its
// slot where node i is the lower global node, else to [b][a]; a diagonal pair's block whole.
#ifdef HK_PATCH_TURNS
__device__ __forceinline__ void hk_patch_turns(const double* st, bool live, int wp, int tid, const unsigned short* __restrict__ ps, double* s_acc) {
    for (int turn = 0; turn < WPB; ++turn) {
        __syncthreads();  // the turn before is done with the slots
        if (turn != wp || !live) continue;
        for (int up = tid; up < HP_NUP; up += TPC) {
            int i = 0, j = up;  // (i ≤ j) from the row-major upper index
            while (j >= NLOC - i) {
                j -= NLOC - i;
                ++i;
            }
            j += i;
            const int sf = ps[up];
            double* slot = s_acc + (sf >> 1) * 9;
#pragma unroll
            for (int a = 0; a < 3; ++a)
#pragma unroll
                for (int b = 0; b < 3; ++b) {
                    const double v = a <= b ? st[i * TC_NCOL + hk_pab(a, b) * NLOC + j] : st[j * TC_NCOL + hk_pab(b, a) * NLOC + i];
                    slot[(sf & 1) ? b * 3 + a : a * 3 + b] += v;
                }
        }
    }
}
#endif
#else
#define HK_PATCH_ARGS
#endif
#endif  // WPB
