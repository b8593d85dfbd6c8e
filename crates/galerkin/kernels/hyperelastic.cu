// Hyperelastic residual and consistent Jacobian, integrated per cell on the GPU and summed with
// atomic adds into the residual vector and the CSR values of the Jacobian (`src/hyperelastic/cuda.rs`),
// in one launch over every cell. Two schemes of one `hyper_assemble` (same arguments), picked by
// the defines: the column-pair scheme (GT, any element, plane strain too), described here, and the
// tensor-core scheme (WPB, 3D simplices of at most 16 nodes), described before its kernel below.
// Column pairs: a group of GT threads integrates one cell, CPB cells per block.
// Quadrature points are taken QB at a time; for each chunk, with a block barrier between phases
// that run over the block's (cell, point, ...) items:
//   G  per (cell, point): the geometry Jacobian, w = weight·|det|, M = J⁻¹ R (R the material frame);
//      then per (cell, point, node): the rotated gradients g'_j = Mᵀ ∇_ξ φ_j;
//   L  per (cell, point): F' = R + Σ_j u_j ⊗ g'_j, the law ONCE (`hyperelastic_law.cuh`): S, P = F S
//      and the 22-number form of ℂ (never its 81 entries) into shared memory;
//   A  per (cell, point, J ≤ L): the (J, L) slice of ℂ from its form, pushed forward to
//      𝔸_iJkL = F_iI ℂ_IJKL F_kK + δ_ik S_JL, stored with its transpose 𝔸_kLiJ (major symmetry: 6
//      threads per point do the 9 slices);
//   K  per column pair: the element matrix is symmetric, so a thread owns the columns j₁ = p and
//      j₂ = NLOC−1−p of one component b and accumulates, in registers, the rows (i, a) with i ≤ j of
//      each — NLOC + 1 node rows, the same for every thread (balanced), about 0.6 of the full
//      matrix's work: y_aA = w Σ_B 𝔸_aAbB g'_jB, then K_(i,a),(j,b) += Σ_A g'_iA y_aA; and
//      r_(j,b) += w Σ_B P_bB g'_jB.
// At the end each column thread adds its entries, and the transposes of those with i < j, at the CSR
// positions found once on the host (rank of node j among node i's column nodes): every entry of the
// element matrix once.
//
// Defines: DIM (3, or 2 for plane strain), NLOC (nodes per cell), NQ (quadrature points), NV
// (geometry vertices), AFFINE (one Jacobian per cell), LAW, GT (threads per cell, ≥ DIM·⌈NLOC/2⌉),
// CPB (cells per block), QB (points per chunk; the host sizes CPB·QB to the static shared-memory
// limit). Table layout: ∇_ξ φ [NQ][NLOC][3] | ∇_ξ geometry [NQ][NV][3] | w [NQ].
// HK_NO_SCATTER (the kernel sweep only): no atomic adds — each value a plain store into the thread's own few doubles
// (timing; the stores, about as many sectors as the atomics, keep the products alive: an upper bound of the computation).
// HK_POS_SHARED (the sweep): the CSR positions gathered into shared memory with the cell
// (`hk_gather`) instead of two global loads per entry in the scatter (slower: eleventh pass).
// HK_PLAIN_STORE, HK_CONTIG=n (the sweep only, the staged scatter): plain racy stores at the same
// places, or as many atomic adds at consecutive places (timing: what the atomics and their
// scattered sectors cost). HK_PLAIN_STORE with HK_SCATTER_COLS too (round 24: what a coloured,
// non-atomic scatter could save at most); HK_SCATTER_KEEP=k (the column walk, timing only): only
// the rows with row % 5 < k are added (k = 2: 2/5 of the adds, a perfect patch reduction's
// ≈ 1/2.56 — what a pre-summed scatter could save at most, before its own cost).
// HK_STAGE (the tensor-core scheme, `Scheme::Gather`, sixteenth pass): the staged blocks are stored
// to a per-cell record of the global stage passed as `vals` instead of being scattered; the owner
// gather (`hyperelastic_gather.cu`) then writes every CSR value once.
//
// Plane strain (DIM = 2) runs the same 3D arithmetic on the embedded problem: the third reference
// and physical gradient components are zero, the geometry Jacobian gets J₃₃ = 1, u₃ = 0, the frame
// is a rotation about X₃, so F₃₃ = 1 and the 3D law applies unchanged; only the DIM·NLOC in-plane
// rows and columns are integrated and scattered (the state and the CSR rows hold DIM per node).

#ifndef DIM
#define DIM 3
#endif

// ---- The prologue both schemes share (one source: no copies of the geometry or the gather) ----
// The gather of cell c by `nthr` cooperating threads (this one `lane`): geometry vertices, the
// displacements of its nodes (zero beyond DIM), the node numbers and the material frame R (the
// identity without frames).
// Both schemes' kernels take the same arguments and gather a cell into the same shared record.
#define HK_KERNEL_ARGS                                                                                                              \
    u64 ncells, const u32 *__restrict__ cell_verts, const double *__restrict__ coords, const u32 *__restrict__ cell_nodes,          \
        const double *__restrict__ tab, const double *__restrict__ frames, int has_frames, const double *__restrict__ prm,          \
        const double *__restrict__ u, double *__restrict__ r, int want_k, const u32 *__restrict__ row_ptr,                          \
        const unsigned short *__restrict__ kpos, double *__restrict__ vals
// HK_PREFETCH (the tensor-core scheme with HK_PERSIST, eighteenth pass) keeps the positions in the
// cell's record too (HK_POS_SHARED's layout), copied there asynchronously a cell ahead.
#if defined(HK_PREFETCH) && !defined(HK_POS_SHARED)
#define HK_POS_SHARED
#endif
struct HkCell {
    double x[NV][3];     // geometry vertices
    double u[NLOC][3];   // nodal displacements (zero beyond DIM)
    double rot[9];       // material frame R
    u32 node[NLOC];      // node numbers
#ifdef HK_PREFETCH
    u32 vert[NV];  // vertex numbers (the second copy stage reads them)
#endif
#ifdef HK_POS_SHARED
    u32 row[NLOC][3];                // row_ptr of (node i, component a): the scatter's row starts
    unsigned short kp[NLOC * NLOC];  // the cell's column ranks (kpos)
#endif
};
// HK_POS_SHARED: with the Jacobian, the scatter's row starts and column ranks too, so that the
// scatter reads its CSR positions from shared memory instead of two dependent global loads per entry.
__device__ __forceinline__ void hk_gather(u64 c, int lane, int nthr, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                                          const u32* __restrict__ cell_nodes, const double* __restrict__ frames, int has_frames,
                                          const double* __restrict__ u, int want_k, const u32* __restrict__ row_ptr,
                                          const unsigned short* __restrict__ kpos, HkCell& cell) {
#ifdef HK_POS_SHARED
    if (want_k) {
        for (int k = lane; k < NLOC * DIM; k += nthr) cell.row[k / DIM][k % DIM] = row_ptr[(u64)cell_nodes[c * NLOC + k / DIM] * DIM + k % DIM];
        for (int k = lane; k < NLOC * NLOC; k += nthr) cell.kp[k] = kpos[c * NLOC * NLOC + k];
    }
#else
    (void)want_k;
    (void)row_ptr;
    (void)kpos;
#endif
    for (int k = lane; k < NV * 3; k += nthr) cell.x[k / 3][k % 3] = coords[(u64)cell_verts[c * NV + k / 3] * 3 + k % 3];
    for (int k = lane; k < NLOC * 3; k += nthr) {
        const u32 n = cell_nodes[c * NLOC + k / 3];
        if (k % 3 == 0) cell.node[k / 3] = n;
        cell.u[k / 3][k % 3] = k % 3 < DIM ? u[(u64)n * DIM + k % 3] : 0.0;
    }
    for (int k = lane; k < 9; k += nthr) cell.rot[k] = has_frames ? frames[c * 9 + k] : (k % 4 == 0 ? 1.0 : 0.0);
}

// The CSR position of entry ((i, a), (j, b)) of cell c is hk_row(i, a) + hk_rank(i, j)·DIM + b: the
// start of row (node i, component a) and the rank of node j among node i's column nodes.
__device__ __forceinline__ u64 hk_row(const HkCell& cell, int i, int a, const u32* __restrict__ row_ptr) {
#ifdef HK_POS_SHARED
    (void)row_ptr;
    return cell.row[i][a];
#else
    return row_ptr[(u64)cell.node[i] * DIM + a];
#endif
}
__device__ __forceinline__ u64 hk_rank(const HkCell& cell, u64 c, int i, int j, const unsigned short* __restrict__ kpos) {
#ifdef HK_POS_SHARED
    (void)c;
    (void)kpos;
    return cell.kp[i * NLOC + j];
#else
    (void)cell;
    return kpos[(c * NLOC + i) * NLOC + j];
#endif
}

// Component pair p = 0..5 ↔ (a, b) = 00 01 02 11 12 22.
__device__ __forceinline__ int hk_pa(int p) { return p < 3 ? 0 : (p < 5 ? 1 : 2); }
__device__ __forceinline__ int hk_pb(int p) { return p < 3 ? p : (p < 5 ? p - 2 : 2); }
// and back: (a ≤ b) ↦ p.
__device__ __forceinline__ int hk_pab(int a, int b) { return a * (5 - a) / 2 + b; }

// The staged scatter (the tensor-core and the moments schemes): the element matrix's 6 upper
// component blocks st[i·6·NLOC + p·NLOC + j] = K_(i,a),(j,b) (p = (a ≤ b), `hk_pab`) are walked
// row by row over the whole 3·NLOC × 3·NLOC matrix by the nthr threads of the cell, the lower
// blocks read transposed from the upper ones, so consecutive threads add consecutive columns of one
// CSR row (the 3 components of a column node contiguous, the column nodes within one row of ≈ 100
// entries): each warp-wide atomic add touches one or two rows instead of 16.
// HK_SCATTER_COLS (eighteenth pass; 16 < 3·NLOC ≤ 32, P2): the same walk with a lane per column
// (node j, component b) and the rows in turn, unrolled, so that a row's node, component and row
// start are constants or broadcasts and the lane's column terms are formed once: an entry costs
// its value's shared load, its rank and the add, not the index arithmetic of a flat loop (the
// profile of round 18: integer ALU the busiest pipe, ≈ 3 500 instructions per cell).
// HK_UPPER (twenty-first pass, `hyperelastic_upper.cu`): the matrix is symmetric, so only the
// entries of the global upper triangle are added — node blocks (node[i] < node[j]) and the upper
// half of the diagonal blocks (a ≤ b) — about 55 % of the 9·NLOC² adds and of their L2 reduction
// sectors; only those values are zeroed, and `hyper_upper_fill` then copies each lower entry from
// its transpose, so the matrix is the same full CSR, exactly symmetric.
#undef HK_KEEP  // (the CPU emulation includes this file more than once)
#ifdef HK_UPPER
#define HK_KEEP(i, j, a, b) (cell.node[i] < cell.node[j] || (cell.node[i] == cell.node[j] && (a) <= (b)))
#if defined(GT) || defined(HK_FRAG_SCATTER) || defined(HK_STAGE) || defined(HK_PATCH) || defined(HK_NO_SCATTER)
#error "HK_UPPER is the staged scatter's (`hk_scatter_staged`): not with GT, HK_FRAG_SCATTER, HK_STAGE, HK_PATCH or HK_NO_SCATTER"
#endif
#else
#define HK_KEEP(i, j, a, b) true
#endif
// HK_SCATTER_BLOCKS (round 25, with HK_SCATTER_COLS; `src/hyperelastic/blocks.rs`): the values in
// node-block storage, the nine of a node pair's block contiguous, `row_ptr` the blocks' rows
// (row_ptr[3n] = 9 × node n's first block), so entry ((i, a), (j, b)) is at hk_row(i, 0) +
// 9·rank(i, j) + 3a + b. Lane l takes entry e = 32t + l of node row i's 9·NLOC values in block
// order (block j = e / 9) in turn t: one warp-wide add covers whole 72-byte blocks (3 sectors at
// any 8-byte offset, 2 blocks of 10 cut between turns) instead of 24-byte pieces of a row (1 or 2
// sectors each; neighbouring column nodes' pieces often share one): counted on the bench's mesh,
// 291 L2 sectors a P2 cell instead of 365 (−20 %), with the same 30 adds a lane.
#ifdef HK_SCATTER_BLOCKS
#if !defined(HK_SCATTER_COLS) || DIM != 3 || 3 * NLOC > 32 || 3 * NLOC <= 16 || defined(HK_UPPER)
#error "HK_SCATTER_BLOCKS is the column walk's (HK_SCATTER_COLS, 3D, 16 < 3·NLOC ≤ 32), not with HK_UPPER"
#endif
#endif
// HK_SCATTER_BULK (stop 65; with HK_SCATTER_BLOCKS, HK_ST_Y and one warp a cell): the L2's atomic
// unit takes each of the per-lane adds apart (stop 58: it bounds the scatter at ≈ 1.37·10⁸ sectors a
// millisecond), so each block goes to the L2 as one 64-byte bulk reduction instead — Hopper's
// cp.reduce.async.bulk .add.f64 from shared memory: a block's 9 values at p (72 bytes, 8-byte
// aligned) are an aligned run of 8 (p + (p & 1), 16-byte aligned) and one ordinary atomic add.
// Row by row: the warp copies row i's NLOC runs into a slot buffer, and lane j issues block j's
// reduction; two buffers, so a row's copy waits only for the reads of the row before last.
#if defined(HK_SCATTER_BULK) && (!defined(HK_SCATTER_BLOCKS) || defined(HK_CHAIN) || defined(HK_UPPER))
#error "HK_SCATTER_BULK is the node-block scatter's (HK_SCATTER_BLOCKS), not with HK_CHAIN or HK_UPPER"
#endif
// HK_BULK_PAD (stop 66): one 80-byte reduction a block and no atomic add — the block's 9 values and
// a zero added to the neighbouring value that completes 10 aligned ones (adding 0.0 changes no sum).
#if defined(HK_BULK_PAD) && !defined(HK_SCATTER_BULK)
#error "HK_BULK_PAD pads the bulk block scatter's runs (HK_SCATTER_BULK)"
#endif
#ifdef HK_BULK_PAD
#define HK_SLOT 10
#else
#define HK_SLOT 8
#endif
// K_(i,a),(j,b) from the 6 upper component blocks st[i·6·NLOC + pab(a, b)·NLOC + j] (a > b: transposed).
__device__ __forceinline__ double hk_block_value(const double* st, int i, int j, int a, int b) {
    return a <= b ? st[i * 6 * NLOC + hk_pab(a, b) * NLOC + j] : st[j * 6 * NLOC + hk_pab(b, a) * NLOC + i];
}
// `skip` (HK_CHAIN): the local nodes whose pairs the next cell of the segment takes over (not added).
#define HK_SKIPPED(i, j) (((skip >> (i)) & (skip >> (j)) & 1u) != 0)
__device__ __forceinline__ void hk_scatter_staged(const double* st, const HkCell& cell, u64 c, int tid, int nthr, const u32* __restrict__ row_ptr,
                                                  const unsigned short* __restrict__ kpos, double* __restrict__ vals, u32 skip = 0) {
#if defined(HK_SCATTER_BULK)
    // One warp a cell (WPC = 1, checked with the tensor-core scheme's defines); `st` in Y's space,
    // whose spare rows after the staged blocks hold two row buffers of NLOC 16-byte-aligned slots
    // of HK_SLOT doubles: the block's run of 8, or (HK_BULK_PAD) all 9 and a zero on the side that
    // makes 10 aligned ones, [0, v0 … v8] at odd p, [v0 … v8, 0] at even p.
    (void)nthr;
    const int l = tid % 32;
    double* slots = const_cast<double*>(st) + NLOC * 6 * NLOC;
    for (int i = 0; i < NLOC; ++i) {
        double* buf = slots + (i & 1) * HK_SLOT * NLOC;
        // lane j < NLOC: block (i, j) starts at value p; its 16-byte-aligned run of 8 is p + (p & 1)
        const u64 p = l < NLOC ? hk_row(cell, i, 0, row_ptr) + hk_rank(cell, c, i, l, kpos) * 9 : 0;
        const u32 odd = __ballot_sync(0xffffffffu, l < NLOC && (p & 1));
        // the lanes whose block's ninth value is an ordinary atomic add: every block's outside the run
        // of 8; padded, only after the last block of node i's row at an even start (the zero after an
        // even block lands on the next block's first value, and after that one may be the matrix's end)
#ifdef HK_BULK_PAD
        const u32 add9 = __ballot_sync(0xffffffffu, l < NLOC && !(p & 1) && p + 9 == (u64)row_ptr[(u64)cell.node[i] * DIM + DIM]);
#else
        const u32 add9 = 0xffffffffu;
#endif
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
        if (i >= 2 && l < NLOC) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");  // (the buffer's reads of row i − 2)
#endif
        __syncwarp();
        for (int e = l; e < HK_SLOT * NLOC; e += 32) {
            // (an odd block: the run of 8 starts at its second value; the padded run's first slot is the zero)
            const int j = e / HK_SLOT, m = e % HK_SLOT + (HK_SLOT == 8 ? 1 : -1) * (int)((odd >> j) & 1);
            buf[e] = m >= 0 && m < 9 ? hk_block_value(st, i, j, m / 3, m % 3) : 0.0;
        }
        // the bulk run: HK_SLOT values from q (or 8 where the block's ninth is an atomic add)
        const bool ninth = l < NLOC && ((add9 >> l) & 1);
        const u64 q = (p & 1) ? (HK_SLOT == 8 ? p + 1 : p - 1) : p;
        if (ninth) {
            const int m = (p & 1) ? 0 : 8;  // the block's one value outside the run: an ordinary add
            atomicAdd(&vals[p + m], hk_block_value(st, i, l, m / 3, m % 3));
        }
        const int nrun = ninth ? 8 : HK_SLOT;
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the slots' stores, seen by the bulk unit
        __syncwarp();
        if (l < NLOC) {
            const u32 src = (u32)__cvta_generic_to_shared(buf + HK_SLOT * l);
            asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;" ::"l"(vals + q), "r"(src), "r"(8 * nrun) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
#else
        __syncwarp();
        if (l < NLOC)
            for (int m = 0; m < nrun; ++m) atomicAdd(&vals[q + m], buf[HK_SLOT * l + m]);
#endif
    }
#if !defined(HK_EMU) && __CUDA_ARCH__ >= 900
    if (l < NLOC) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // (before the block's shared memory goes)
#endif
    __syncwarp();
#elif defined(HK_SCATTER_BLOCKS)
    const int l = tid % 32, w = tid / 32, nw = nthr / 32;
#pragma unroll
    for (int t = 0; t < (9 * NLOC + 31) / 32; ++t) {
        const int e = 32 * t + l;
        if (e >= 9 * NLOC) continue;
        const int j = e / 9, a = e % 9 / 3, b = e % 3;
        // a ≤ b: K_(i,a),(j,b) = st[i·6·NLOC + pab(a, b)·NLOC + j]; a > b: K_(j,b),(i,a) = st[j·6·NLOC + pab(b, a)·NLOC + i]
        const int off = a <= b ? hk_pab(a, b) * NLOC + j : j * 6 * NLOC + hk_pab(b, a) * NLOC;
        const int step = a <= b ? 6 * NLOC : 1;
        for (int i = w; i < NLOC; i += nw)
            if (!HK_SKIPPED(i, j)) atomicAdd(&vals[hk_row(cell, i, 0, row_ptr) + hk_rank(cell, c, i, j, kpos) * 9 + 3 * a + b], st[off + i * step]);
    }
#elif defined(HK_SCATTER_COLS) && 3 * NLOC <= 32 && 3 * NLOC > 16
    const int cl = tid % 32, j = cl / 3, b = cl % 3, w = tid / 32, nw = nthr / 32;
    if (cl >= 3 * NLOC) return;
    // a ≤ b: K_(i,a),(j,b) = up[i·6·NLOC + a(5 − a)/2·NLOC]; a > b: K_(j,b),(i,a) = lo[a·NLOC + i]
    const double* up = st + b * NLOC + j;
    const double* lo = st + j * 6 * NLOC + hk_pab(b, 0) * NLOC;
#pragma unroll
    for (int row = 0; row < 3 * NLOC; ++row) {
        if (row % nw != w) continue;  // (two warps per cell: the rows in turn)
        const int i = row / 3, a = row % 3;
        if (!HK_KEEP(i, j, a, b) || HK_SKIPPED(i, j)) continue;
#ifdef HK_SCATTER_KEEP  // (the sweep: only HK_SCATTER_KEEP of every 5 rows, timing only)
        if (row % 5 >= HK_SCATTER_KEEP) continue;
#endif
        const double v = a <= b ? up[i * 6 * NLOC + hk_pab(a, 0) * NLOC] : lo[a * NLOC + i];
#ifdef HK_PLAIN_STORE  // (the sweep: racy plain stores at the same places, timing only)
        vals[hk_row(cell, i, a, row_ptr) + hk_rank(cell, c, i, j, kpos) * 3 + b] = v;
#else
        atomicAdd(&vals[hk_row(cell, i, a, row_ptr) + hk_rank(cell, c, i, j, kpos) * 3 + b], v);
#endif
    }
#else
    for (int k = tid; k < 9 * NLOC * NLOC; k += nthr) {
        const int row = k / (3 * NLOC), cl = k % (3 * NLOC);
        const int i = row / 3, a = row % 3, j = cl / 3, b = cl % 3;
        if (!HK_KEEP(i, j, a, b) || HK_SKIPPED(i, j)) continue;
        const double v = hk_block_value(st, i, j, a, b);
        const u64 pos = hk_row(cell, i, a, row_ptr) + hk_rank(cell, c, i, j, kpos) * 3 + b;
#if defined(HK_PLAIN_STORE)  // (the sweep: racy plain stores at the same places, timing only)
        vals[pos] = v;
#elif defined(HK_CONTIG)  // (the sweep: as many atomic adds, at consecutive places of HK_CONTIG values)
        atomicAdd(&vals[((u64)c * 9 * NLOC * NLOC + k + (pos == ~0ull ? 1 : 0)) % HK_CONTIG], v);
#else
        atomicAdd(&vals[pos], v);
#endif
    }
#endif
}

// ---- The patch reduction (`src/hyperelastic/patch.rs`): the patch kernel (`hyperelastic_patch.cu`)
// and the tensor-core scheme with HK_PATCH sum a patch's element matrices in shared memory slots, a
// slot s per distinct global node pair (lo ≤ hi), B_s[x][y] = K_(lo,x),(hi,y); `pslot[cell][pair]` =
// 2·s + flip for the cell's upper pairs i ≤ j (flip: node i is the higher global node). Then one flush.
#define HP_NUP (NLOC * (NLOC + 1) / 2)  // upper node pairs i ≤ j of a cell
#define HP_OWNED 0x8000u                // flush_meta: the row is this patch's alone (`patch::OWNED`)

// The index of the upper pair (i ≤ j) among a cell's HP_NUP: row-major over the upper triangle.
__device__ __forceinline__ int hp_up(int i, int j) { return i * NLOC - i * (i - 1) / 2 + j - i; }

// The flush of patch p's slots by nthr threads (this one tid): its directed entries (each slot as
// (lo, hi) and, off the diagonal, (hi, lo) transposed), sorted by (row node, column rank) on the host,
// added to the CSR values with global atomics (patches share their boundary nodes) or stored where the
// row is the patch's alone, lanes over consecutive places of one row: for a component a, entry e and
// b, place = flush_pos[e] + a·len(e) + b.
__device__ __forceinline__ void hp_flush(u64 p, const double* s_acc, int tid, int nthr, const u32* __restrict__ flush_ptr,
                                         const u32* __restrict__ flush_pos, const u32* __restrict__ flush_meta, double* __restrict__ vals) {
    const u32 f0 = flush_ptr[p];
    const int ne = (int)(flush_ptr[p + 1] - f0);
    for (int k = tid; k < 9 * ne; k += nthr) {
        const int a = k / (3 * ne), e = (k % (3 * ne)) / 3, bb = k % 3;
        const u32 meta = flush_meta[f0 + e];
        const int sd = (int)(meta & 0x7fffu), s = sd >> 1;
        const double v = s_acc[s * 9 + ((sd & 1) ? bb * 3 + a : a * 3 + bb)];
        double* place = &vals[(u64)flush_pos[f0 + e] + (u64)a * (meta >> 16) + bb];
        if (meta & HP_OWNED)
            *place = v;
        else
            atomicAdd(place, v);
    }
}

// The geometry at one point (gg: ∇_ξ of the NV geometry functions there): J = Σ_v x_v ⊗ ∇_ξ N_v
// (J₃₃ = 1 in plane strain) and its inverse; returns det J.
__device__ __forceinline__ double hk_jinv(const double (*x)[3], const double* __restrict__ gg, double inv[3][3]) {
    double jm[3][3];
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int kk = 0; kk < 3; ++kk) {
            double s = 0.0;
            for (int v = 0; v < NV; ++v) s += x[v][a] * gg[v * 3 + kk];
            jm[a][kk] = s;
        }
#if DIM == 2
    jm[0][2] = jm[1][2] = jm[2][0] = jm[2][1] = 0.0;
    jm[2][2] = 1.0;
#endif
    const double det = hl_det3(jm);
    const double rd = 1.0 / det;
    inv[0][0] = (jm[1][1] * jm[2][2] - jm[1][2] * jm[2][1]) * rd;
    inv[0][1] = (jm[0][2] * jm[2][1] - jm[0][1] * jm[2][2]) * rd;
    inv[0][2] = (jm[0][1] * jm[1][2] - jm[0][2] * jm[1][1]) * rd;
    inv[1][0] = (jm[1][2] * jm[2][0] - jm[1][0] * jm[2][2]) * rd;
    inv[1][1] = (jm[0][0] * jm[2][2] - jm[0][2] * jm[2][0]) * rd;
    inv[1][2] = (jm[0][2] * jm[1][0] - jm[0][0] * jm[1][2]) * rd;
    inv[2][0] = (jm[1][0] * jm[2][1] - jm[1][1] * jm[2][0]) * rd;
    inv[2][1] = (jm[0][1] * jm[2][0] - jm[0][0] * jm[2][1]) * rd;
    inv[2][2] = (jm[0][0] * jm[1][1] - jm[0][1] * jm[1][0]) * rd;
    return det;
}
// Column A of M = J⁻¹ R (so that g'_A = Σ_m ∂_m φ M_mA: the frame rotation, once).
__device__ __forceinline__ void hk_m_column(const double inv[3][3], const double* rot, int A, double ma[3]) {
#pragma unroll
    for (int m = 0; m < 3; ++m) ma[m] = inv[m][0] * rot[A] + inv[m][1] * rot[3 + A] + inv[m][2] * rot[6 + A];
}
// The geometry with M = J⁻¹ R whole; returns det J.
__device__ __forceinline__ double hk_geometry(const double (*x)[3], const double* __restrict__ gg, const double* rot, double mm[3][3]) {
    double inv[3][3];
    const double det = hk_jinv(x, gg, inv);
#pragma unroll
    for (int m = 0; m < 3; ++m)
#pragma unroll
        for (int A = 0; A < 3; ++A) mm[m][A] = inv[m][0] * rot[A] + inv[m][1] * rot[3 + A] + inv[m][2] * rot[6 + A];
    return det;
}

// The deformation gradient in the frame at one point: F' = R + Σ_j u_j ⊗ g'_j.
__device__ __forceinline__ void hk_deformation(const double* rot, const double (*uu)[3], const double (*g)[3], double f[3][3]) {
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int A = 0; A < 3; ++A) f[a][A] = rot[a * 3 + A];
    for (int j = 0; j < NLOC; ++j)
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int A = 0; A < 3; ++A) f[a][A] += uu[j][a] * g[j][A];
}

#ifdef GT  // the column-pair scheme (any element); the tensor-core scheme below is compiled instead with WPB
#define NPAIR ((NLOC + 1) / 2)
#define NCT (DIM * NPAIR)
#define NCHUNK ((NQ + QB - 1) / QB)

extern "C" __global__ void __launch_bounds__(GT * CPB) hyper_assemble(HK_KERNEL_ARGS) {
    __shared__ HkCell s_cell[CPB];
    __shared__ double s_w[CPB][QB];
    __shared__ double s_g[CPB][QB][NLOC][3];
    __shared__ double s_a[CPB][QB][81];  // M = J⁻¹R in its first 9 until phase A overwrites it with 𝔸
    __shared__ double s_f[CPB][QB][9];
    __shared__ double s_s[CPB][QB][9];
    __shared__ double s_p[CPB][QB][9];
    __shared__ double s_c[CPB][QB][HL_FORM];
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wq = ggeo + NQ * NV * 3;
    const int grp = threadIdx.x / GT, lane = threadIdx.x % GT;
    const u64 c = (u64)blockIdx.x * CPB + grp;
    const bool live = c < ncells;
    if (live) hk_gather(c, lane, GT, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, s_cell[grp]);
    // This thread's column pair (j1 ≤ j2, equal for the middle node of an odd NLOC) and component b.
    const int j1 = lane / DIM, j2 = NLOC - 1 - j1, b = lane % DIM;
    const bool col = live && lane < NCT;
    double r1 = 0.0, r2 = 0.0;
    // Row t ≤ j1: node t of column j1; row t > j1: node t − j1 − 1 of column j2.
    double kacc[NLOC + 1][DIM];
#pragma unroll
    for (int t = 0; t <= NLOC; ++t)
#pragma unroll
        for (int a = 0; a < DIM; ++a) kacc[t][a] = 0.0;
    for (int ch = 0; ch < NCHUNK; ++ch) {
        const int q0 = ch * QB;
        const int nq = NQ - q0 < QB ? NQ - q0 : QB;
        __syncthreads();  // the gather, or the previous chunk's readers, are done
        for (int k = threadIdx.x; k < CPB * nq; k += GT * CPB) {
            const int e = k / nq, t = k % nq, qg = AFFINE ? 0 : q0 + t;
            if ((u64)blockIdx.x * CPB + e >= ncells) continue;
            double mm[3][3];
            const double det = hk_geometry(s_cell[e].x, ggeo + qg * NV * 3, s_cell[e].rot, mm);
            s_w[e][t] = wq[q0 + t] * fabs(det);
#pragma unroll
            for (int m = 0; m < 3; ++m)
#pragma unroll
                for (int A = 0; A < 3; ++A) s_a[e][t][m * 3 + A] = mm[m][A];
        }
        __syncthreads();
        for (int k = threadIdx.x; k < CPB * nq * NLOC; k += GT * CPB) {
            const int e = k / (nq * NLOC), t = (k / NLOC) % nq, jj = k % NLOC;
            if ((u64)blockIdx.x * CPB + e >= ncells) continue;
            const double* gr = gref + ((q0 + t) * NLOC + jj) * 3;
            const double* m = s_a[e][t];
#pragma unroll
            for (int A = 0; A < 3; ++A) s_g[e][t][jj][A] = gr[0] * m[A] + gr[1] * m[3 + A] + gr[2] * m[6 + A];
        }
        __syncthreads();
        for (int k = threadIdx.x; k < CPB * nq; k += GT * CPB) {
            const int e = k / nq, t = k % nq;
            if ((u64)blockIdx.x * CPB + e >= ncells) continue;
            double f[3][3], s[3][3];
            hk_deformation(s_cell[e].rot, s_cell[e].u, s_g[e][t], f);
            hl_point(prm, f, s, s_c[e][t]);
#pragma unroll
            for (int a = 0; a < 3; ++a)
#pragma unroll
                for (int A = 0; A < 3; ++A) {
                    s_f[e][t][a * 3 + A] = f[a][A];
                    s_s[e][t][a * 3 + A] = s[a][A];
                    s_p[e][t][a * 3 + A] = f[a][0] * s[0][A] + f[a][1] * s[1][A] + f[a][2] * s[2][A];
                }
        }
        __syncthreads();
        if (want_k)
            for (int k = threadIdx.x; k < CPB * nq * 6; k += GT * CPB) {
                const int e = k / (nq * 6), t = (k / 6) % nq, sl = k % 6;
                if ((u64)blockIdx.x * CPB + e >= ncells) continue;
                // (J, L) with J ≤ L: 00 01 02 11 12 22
                const int J = sl < 3 ? 0 : (sl < 5 ? 1 : 2);
                const int L = sl < 3 ? sl : (sl < 5 ? sl - 2 : 2);
                double* a = s_a[e][t];
                const double* f = s_f[e][t];
                double cm[3][3], tm[3][3];
                hl_slice(prm, s_c[e][t], J, L, cm);
#pragma unroll
                for (int i = 0; i < 3; ++i)
#pragma unroll
                    for (int K = 0; K < 3; ++K) tm[i][K] = f[i * 3] * cm[0][K] + f[i * 3 + 1] * cm[1][K] + f[i * 3 + 2] * cm[2][K];
                const double sjl = s_s[e][t][J * 3 + L];
#pragma unroll
                for (int i = 0; i < 3; ++i)
#pragma unroll
                    for (int kk = 0; kk < 3; ++kk) {
                        const double v = tm[i][0] * f[kk * 3] + tm[i][1] * f[kk * 3 + 1] + tm[i][2] * f[kk * 3 + 2] + (i == kk ? sjl : 0.0);
                        a[T4(i, J, kk, L)] = v;
                        if (J != L) a[T4(kk, L, i, J)] = v;
                    }
            }
        __syncthreads();
        if (col)
            for (int t = 0; t < nq; ++t) {
                const double w = s_w[grp][t];
                const double* g = &s_g[grp][t][0][0];
                const double g10 = g[j1 * 3], g11 = g[j1 * 3 + 1], g12 = g[j1 * 3 + 2];
                const double g20 = g[j2 * 3], g21 = g[j2 * 3 + 1], g22 = g[j2 * 3 + 2];
                const double* p = s_p[grp][t];
                r1 += w * (p[b * 3] * g10 + p[b * 3 + 1] * g11 + p[b * 3 + 2] * g12);
                r2 += w * (p[b * 3] * g20 + p[b * 3 + 1] * g21 + p[b * 3 + 2] * g22);
                if (want_k) {
                    const double* a = s_a[grp][t];
                    double y1[DIM][3], y2[DIM][3];
#pragma unroll
                    for (int aa = 0; aa < DIM; ++aa)
#pragma unroll
                        for (int A = 0; A < 3; ++A) {
                            const double a0 = w * a[T4(aa, A, b, 0)], a1 = w * a[T4(aa, A, b, 1)], a2 = w * a[T4(aa, A, b, 2)];
                            y1[aa][A] = a0 * g10 + a1 * g11 + a2 * g12;
                            y2[aa][A] = a0 * g20 + a1 * g21 + a2 * g22;
                        }
#pragma unroll
                    for (int tt = 0; tt <= NLOC; ++tt) {
                        const bool first = tt <= j1;
                        const int i = first ? tt : tt - j1 - 1;
                        const double gi0 = g[i * 3], gi1 = g[i * 3 + 1], gi2 = g[i * 3 + 2];
#pragma unroll
                        for (int aa = 0; aa < DIM; ++aa)
                            kacc[tt][aa] += gi0 * (first ? y1[aa][0] : y2[aa][0]) + gi1 * (first ? y1[aa][1] : y2[aa][1]) +
                                            gi2 * (first ? y1[aa][2] : y2[aa][2]);
                    }
                }
            }
    }
    if (col) {
#ifdef HK_NO_SCATTER
        double sum = r1 + r2;
#pragma unroll
        for (int tt = 0; tt <= NLOC; ++tt)
#pragma unroll
            for (int aa = 0; aa < DIM; ++aa) sum += kacc[tt][aa];
        if (want_k) vals[c * NCT + lane] = sum;
        else r[lane] = sum;
#else
        atomicAdd(&r[(u64)s_cell[grp].node[j1] * DIM + b], r1);
        if (j2 != j1) atomicAdd(&r[(u64)s_cell[grp].node[j2] * DIM + b], r2);
        if (want_k) {
#pragma unroll
            for (int tt = 0; tt <= NLOC; ++tt) {
                const bool first = tt <= j1;
                if (!first && j2 == j1) continue;
                const int j = first ? j1 : j2, i = first ? tt : tt - j1 - 1;
                const HkCell& cl = s_cell[grp];
                const u64 rij = hk_rank(cl, c, i, j, kpos), rji = hk_rank(cl, c, j, i, kpos), rowj = hk_row(cl, j, b, row_ptr);
#pragma unroll
                for (int aa = 0; aa < DIM; ++aa) {
                    atomicAdd(&vals[hk_row(cl, i, aa, row_ptr) + rij * DIM + b], kacc[tt][aa]);
                    if (i != j) atomicAdd(&vals[rowj + rji * DIM + aa], kacc[tt][aa]);
                }
            }
        }
#endif
    }
}
#endif  // GT

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
#if defined(HK_SCATTER_BULK) && (!defined(HK_ST_Y) || WPC != 1 || 3 * QC * TC_YS < NLOC * TC_NCOL + 2 * HK_SLOT * NLOC)
#error "HK_SCATTER_BULK needs HK_ST_Y with room for two row buffers (2·HK_SLOT·NLOC doubles) after the staged blocks, and one warp a cell"
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
// HK_ZERO_AHEAD (the thirty-first pass, `src/hyperelastic/ahead.rs`): the host launches the cells in
// chunks, in launch order, and each launch also zeroes the CSR values that the next chunk's cells are
// the first to touch — segments zseg[s] = offset (48 bits) | length (16 bits), a block's share by
// grid stride, before its cell — so that the zeroing pass runs under the compute-bound kernel
// instead of before it (the first chunk's values by a launch with no cells).
#ifdef HK_ZERO_AHEAD
#define HK_ZERO_ARGS , const u64 *__restrict__ zseg, u32 nzseg
#else
#define HK_ZERO_ARGS
#endif
// HK_CHAIN (thirty-fourth pass, `src/hyperelastic/chain.rs`): a block (one cell's warps) per segment of
// face neighbours, positions seg_ptr[s]..seg_ptr[s + 1] of the cells (laid out in segment order), in
// turn; each cell's link to the next (`links[c]`: the shared nodes' local indices in both cells and their
// mask) says which node blocks the next cell shares. Those are not added: they stay in `s_carry` (the
// NF × NF shared nodes' 6 upper component blocks) and the next cell adds them to its own staged blocks
// before its scatter, so a value two neighbours share is added to the matrix once. Measured slower on the
// H100 (−28 % of the L2 reductions; the segments' L2 working set and the carry's registers cost more:
// BENCHMARKS.md's thirty-fourth pass): opt-in.
#ifdef HK_CHAIN
#define HK_CHAIN_NF 6
#define HK_CHAIN_ARGS , const u32 *__restrict__ seg_ptr, const u64 *__restrict__ links, u32 nseg
#if WPB != 1 || defined(HK_PERSIST) || defined(HK_PATCH) || defined(HK_LAW_WIDE) || defined(HK_ZERO_AHEAD) || defined(HK_STAGE) || defined(HK_UPPER) || defined(HK_FRAG_SCATTER) || defined(HK_NO_SCATTER)
#error "HK_CHAIN is the staged scatter's with one cell a block (WPB = 1), not with HK_PERSIST, HK_PATCH, HK_LAW_WIDE, HK_ZERO_AHEAD, HK_STAGE, HK_UPPER, HK_FRAG_SCATTER or HK_NO_SCATTER"
#endif
#else
#define HK_CHAIN_ARGS
#endif
// Whether this warp's cell adds anything (HK_PATCH_TURNS: not past the patch's end).
#undef HK_LIVE
#if defined(HK_PATCH) && defined(HK_PATCH_TURNS)
#define HK_LIVE live
#else
#define HK_LIVE true
#endif

#ifdef HK_CHAIN
// The carry between two cells of a segment, on the cell's staged blocks st[i·6·NLOC + p·NLOC + j]:
// first the blocks the cell before left (`in`: its link, the nodes' places here from bit 24) are added,
// then the blocks shared with the next cell (`out`: this cell's link, the places here from bit 0) are
// kept for it, in the order of the shared nodes; the scatter then skips the pairs of `out`'s mask.
__device__ __forceinline__ void hk_chain_carry(double* st, u64 in, u64 out, double* carry, int tid) {
    // (a fixed loop over the NF × 6 × NF places, so that the divisions are by constants: the first
    // build's loops bounded by the counts divided by them at run time, +50 % instructions a cell)
    constexpr int N = HK_CHAIN_NF * 6 * HK_CHAIN_NF;
    const int nin = __popc((u32)(in >> 48)), nout = __popc((u32)(out >> 48));
#pragma unroll
    for (int k0 = 0; k0 < N; k0 += TPC) {
        const int k = k0 + tid, s = k / (6 * HK_CHAIN_NF), p = k / HK_CHAIN_NF % 6, t = k % HK_CHAIN_NF;
        if (k < N && s < nin && t < nin) st[((in >> (24 + 4 * s)) & 15) * TC_NCOL + p * NLOC + ((in >> (24 + 4 * t)) & 15)] += carry[k];
    }
    HK_CSYNC();  // every carried block is in before any is kept or scattered
#pragma unroll
    for (int k0 = 0; k0 < N; k0 += TPC) {
        const int k = k0 + tid, s = k / (6 * HK_CHAIN_NF), p = k / HK_CHAIN_NF % 6, t = k % HK_CHAIN_NF;
        if (k < N && s < nout && t < nout) carry[k] = st[((out >> (4 * s)) & 15) * TC_NCOL + p * NLOC + ((out >> (4 * t)) & 15)];
    }
}
#endif

extern "C" __global__ void HK_BOUNDS hyper_assemble(HK_KERNEL_ARGS HK_PATCH_ARGS HK_ZERO_ARGS HK_CHAIN_ARGS) {
#ifdef HK_ZERO_AHEAD
    // (no barrier: no other thread of this launch reads or adds to these values)
    if (want_k)
        for (u32 sg = blockIdx.x; sg < nzseg; sg += gridDim.x) {
            const u64 z = zseg[sg];
            double* zp = vals + (z & 0xffffffffffffull);
            for (u32 k = threadIdx.x; k < (u32)(z >> 48); k += blockDim.x) zp[k] = 0.0;
        }
#endif
    __shared__ HkCell s_cell[WPB][HK_BUFS];
#ifdef HK_PATCH
    extern __shared__ double s_acc[];  // NSLOT * 9: the patch's slots
#endif
    __shared__ __align__(16) double s_g[WPB][NQ][NLOC][3];
    __shared__ HK_PT_ALIGN double s_pt[WPB][TC_REC];
    __shared__ __align__(16) double s_y[WPB][3 * QC][TC_YS];
#ifdef HK_CHAIN
    __shared__ double s_carry[WPB][HK_CHAIN_NF * HK_CHAIN_NF * 6];  // [s][p][t]: shared nodes s, t; component pair p
#endif
    const double* gref = tab;
    const double* ggeo = tab + NQ * NLOC * 3;
    const double* wts = ggeo + NQ * NV * 3;
    // wp: the cell in the block; tid: the thread in the cell; wq: the warp in the cell.
    const int wp = threadIdx.x / TPC, tid = threadIdx.x % TPC, lane = threadIdx.x % 32, wq = tid / 32;
#ifdef HK_COUNT_JACOBIAN  // (host SASS counts only, `scripts/ptxas-registers.py`: the Jacobian's path alone)
    want_k = 1;
#endif
#if defined(HK_PATCH)
    (void)ncells;  // (the number of patches: the grid)
    if (want_k) {
        for (int k = threadIdx.x; k < NSLOT * 9; k += TPC * WPB) s_acc[k] = 0.0;
        __syncthreads();
    }
#ifdef HK_PATCH_TURNS  // every warp the same rounds (the turns' block barriers): past the patch's
                       // end a warp integrates its last cell again and adds nothing
    const u32 p0 = patch_ptr[blockIdx.x], p1 = patch_ptr[blockIdx.x + 1];
    for (u32 base = p0; base < p1; base += WPB) {
        const bool live = base + wp < p1;
        const u32 pk = live ? base + wp : p1 - 1;
#else
    for (u32 pk = patch_ptr[blockIdx.x] + wp; pk < patch_ptr[blockIdx.x + 1]; pk += WPB) {
#endif
        const u64 c = patch_cells[pk];
        HkCell& cell = s_cell[wp][0];
        HK_CSYNC();  // the cell before has done reading the record and the buffers
        hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
        HK_CSYNC();
#elif defined(HK_PERSIST)
    const u64 stride = (u64)gridDim.x * WPB;
    u64 c = (u64)blockIdx.x * WPB + wp;
#ifdef HK_PREFETCH
    if (c < ncells) {  // the first cell's record, both stages
        hk_fetch_ids(c, tid, cell_verts, cell_nodes, frames, has_frames, want_k, kpos, s_cell[wp][0]);
        hk_async_wait();
        HK_CSYNC();
        hk_fetch_vals(tid, coords, u, want_k, row_ptr, s_cell[wp][0]);
    }
#endif
    for (int buf = 0; c < ncells; c += stride, buf ^= HK_BUFS - 1) {
        HkCell& cell = s_cell[wp][buf];
#ifdef HK_PREFETCH
        HkCell& next = s_cell[wp][buf ^ 1];
        const bool more = c + stride < ncells;
        hk_async_wait();
        HK_CSYNC();  // this cell's record is in; the cell before has done reading `next`
        if (more) hk_fetch_ids(c + stride, tid, cell_verts, cell_nodes, frames, has_frames, want_k, kpos, next);
#else
        HK_CSYNC();  // the cell before has done reading the record and the buffers
        hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
        HK_CSYNC();
#endif
#elif defined(HK_LAW_WIDE)
    const bool live = (u64)blockIdx.x * WPB + wp < ncells;
    const u64 c = live ? (u64)blockIdx.x * WPB + wp : ncells - 1;
    HkCell& cell = s_cell[wp][0];
    hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
    HK_CSYNC();
    {
#elif defined(HK_CHAIN)
    (void)ncells;
    const u64 sg = (u64)blockIdx.x * WPB + wp;
    if (sg >= nseg) return;  // the whole segment: no block barrier follows
    const u32 s0 = seg_ptr[sg], s1 = seg_ptr[sg + 1];
    for (u64 c = s0; c < s1; ++c) {
        HkCell& cell = s_cell[wp][0];
        HK_CSYNC();  // the cell before has done reading the record and the buffers
        hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
        HK_CSYNC();
#else
    const u64 c = (u64)blockIdx.x * WPB + wp;
    if (c >= ncells) return;  // the whole cell: no block barrier follows
    HkCell& cell = s_cell[wp][0];
    hk_gather(c, tid, TPC, cell_verts, coords, cell_nodes, frames, has_frames, u, want_k, row_ptr, kpos, cell);
    HK_CSYNC();
    {
#endif
#ifdef HK_TRIM
    // G (HK_TRIM): J⁻¹ in every lane's registers, then a lane per (node j, component A), every point.
    double jinv[3][3];
    const double adet = fabs(hk_jinv(cell.x, ggeo, jinv));
    for (int k = tid; k < NLOC * 3; k += TPC) {
        const int j = k / 3, A = k % 3;
        double ma[3];
        hk_m_column(jinv, cell.rot, A, ma);
#pragma unroll
        for (int q = 0; q < NQ; ++q) {
            const double* gr = gref + (q * NLOC + j) * 3;
            s_g[wp][q][j][A] = gr[0] * ma[0] + gr[1] * ma[1] + gr[2] * ma[2];
        }
    }
#else
    // G: the geometry, in every lane's registers.
    double mm[3][3];
    const double adet = fabs(hk_geometry(cell.x, ggeo, cell.rot, mm));
    for (int k = tid; k < NQ * NLOC; k += TPC) {
        const double* gr = gref + k * 3;
#pragma unroll
        for (int A = 0; A < 3; ++A) s_g[wp][k / NLOC][k % NLOC][A] = gr[0] * mm[0][A] + gr[1] * mm[1][A] + gr[2] * mm[2][A];
    }
#endif
    HK_CSYNC();
#ifndef HK_SCATTER_ONLY  // (the sweep: the gather, the geometry and the scatter of zeros alone; its
                        // unused arrays draw NVRTC warnings, so CI does not compile it)
#ifdef HK_FUSE
    if (!want_k) {  // (with the Jacobian the law runs in the Y phase's lanes: HK_FUSE)
#endif
    // L: the law at every point (the weights w by the cell's own lanes: |det J| is theirs).
    for (int q = tid; q < NQ; q += TPC) s_pt[wp][q * TC_PT + 58] = wts[q] * adet;
#ifdef HK_LAW_WIDE
    __syncthreads();  // every cell's g' of the block
    for (int k = threadIdx.x; k < WPB * NQ; k += WPB * TPC) hk_law_point(prm, s_cell[k / NQ][0], s_g[k / NQ][k % NQ], &s_pt[k / NQ][(k % NQ) * TC_PT]);
    __syncthreads();
    if (!live) return;  // (no block barrier follows)
#else
    for (int q = tid; q < NQ; q += TPC) hk_law_point(prm, cell, s_g[wp][q], &s_pt[wp][q * TC_PT]);
    HK_CSYNC();
#endif
#if HK_RES_MMA
    if (!want_k)  // (with the Jacobian, the GEMM's extra columns give the residual)
#endif
    for (int k = tid; k < NLOC * 3; k += TPC) {
        const int j = k / 3, b = k % 3;
        double acc = 0.0;
        for (int q = 0; q < NQ; ++q) {
            const double* pt = &s_pt[wp][q * TC_PT];
            const double* g = s_g[wp][q][j];
            double y = 0.0;
#pragma unroll
            for (int B = 0; B < 3; ++B) {
                const double p = pt[22 + b * 3] * pt[31 + B] + pt[22 + b * 3 + 1] * pt[34 + B] + pt[22 + b * 3 + 2] * pt[37 + B];
                y += p * g[B];
            }
            acc += pt[58] * y;
        }
        if (HK_LIVE) atomicAdd(&r[(u64)cell.node[j] * 3 + b], acc);
    }
#ifdef HK_FUSE
    }
#endif
#endif
#ifdef HK_PREFETCH
    hk_async_wait();  // the next cell's numbers
    HK_CSYNC();
    if (more) hk_fetch_vals(tid, coords, u, want_k, row_ptr, next);
#endif
    if (!want_k) HK_NEXT_CELL;
    const int g8 = lane / 4, t4 = lane % 4;
    double acc[TC_NTW][4];  // this warp's n-tiles wq·TC_NTW + w
#pragma unroll
    for (int nt = 0; nt < TC_NTW; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0;
#ifndef HK_SCATTER_ONLY
    for (int q0 = 0; q0 < NQ; q0 += QC) {
        const int nq = NQ - q0 < QC ? NQ - q0 : QC;
#ifdef HK_FUSE
        // Y with the law (HK_FUSE): a lane per (point t, pair p), the point's record in registers.
#ifdef HK_TRIM
        double* sf = s_pt[wp];  // the chunk's F (the records' space: dead with the Jacobian)
        hk_trim_f(cell, &s_g[wp][q0], nq, lane, sf);
        HK_CSYNC();
#endif
        for (int it = tid; it < nq * 6; it += TPC) {
            const int t = it / 6, p = it % 6, a = hk_pa(p), b = hk_pb(p);
            const double(*g)[3] = s_g[wp][q0 + t];
            double pt[TC_PT];
            double ua[3], ub[3], fa[3], fb[3], va[3], vb[3];
#ifdef HK_TRIM
            hk_trim_point(prm, sf + t * 3 * TC_FS, a, b, pt, fa, fb, ua, ub, va, vb);
#else
            hk_law_point(prm, cell, g, pt);
            hk_row_of(pt + 40, a, ua);
            hk_row_of(pt + 40, b, ub);
            hk_row_of(pt + 22, a, fa);
            hk_row_of(pt + 22, b, fb);
#if LAW == 2
            hk_row_of(pt + 49, a, va);
            hk_row_of(pt + 49, b, vb);
#endif
#endif
            const double w = wts[q0 + t] * adet;
            const HkPair pr = hk_pair(pt, ua, ub, fa, fb, va, vb, a == b);
            double ab[3][3];
#ifdef HK_TRIM
            hk_trim_entries(prm, pr, w, ab);
#else
#pragma unroll
            for (int A = 0; A < 3; ++A) {
                const double dab = LAW == 2 ? hk_dab(prm, pr, A) : 0.0;
#pragma unroll
                for (int B = 0; B < 3; ++B) ab[A][B] = w * hk_entry(prm, pr, dab, A, B);
            }
#endif
            // the residual's columns: Y[(t, A), TC_NCOL + b] = w P_bA, P = F S (b = p for p < 3)
            if (p < 3) {
#pragma unroll
                for (int A = 0; A < 3; ++A) s_y[wp][t * 3 + A][TC_NCOL + p] = w * (fb[0] * pr.sm[A] + fb[1] * pr.sm[3 + A] + fb[2] * pr.sm[6 + A]);
            }
#pragma unroll
            for (int j = 0; j < NLOC; ++j) {
                const double g0 = g[j][0], g1 = g[j][1], g2 = g[j][2];
#pragma unroll
                for (int A = 0; A < 3; ++A) s_y[wp][t * 3 + A][p * NLOC + j] = ab[A][0] * g0 + ab[A][1] * g1 + ab[A][2] * g2;
            }
        }
#else
        // Y: rows (t, A) of this chunk.
        for (int it = tid; it < nq * 18; it += TPC) {
            const int t = it / 18, A = (it % 18) / 6, p = it % 6;
            const int a = hk_pa(p), b = hk_pb(p);
            const double* pt = &s_pt[wp][(q0 + t) * TC_PT];
            const double* f = pt + 22;
            const double* um = pt + 40;
            const double* vm = pt + 49;
            const HkPair pr = hk_pair(pt, um + a * 3, um + b * 3, f + a * 3, f + b * 3, vm + a * 3, vm + b * 3, a == b);
            const double dab = LAW == 2 ? hk_dab(prm, pr, A) : 0.0;
            double ab[3];
#pragma unroll
            for (int B = 0; B < 3; ++B) ab[B] = pt[58] * hk_entry(prm, pr, dab, A, B);
#if HK_RES_MMA
            // the residual's columns: Y[(t, A), TC_NCOL + b] = w P_bA, P = F S (b = p for p < 3)
            if (p < 3) s_y[wp][t * 3 + A][TC_NCOL + p] = pt[58] * (f[p * 3] * pr.sm[A] + f[p * 3 + 1] * pr.sm[3 + A] + f[p * 3 + 2] * pr.sm[6 + A]);
#endif
            const double* g = s_g[wp][q0 + t][0];
            double* y = &s_y[wp][t * 3 + A][p * NLOC];
#if HK_VEC && NLOC % 2 == 0
            // nodes 2jj and 2jj + 1: g' in three pairs, y in one (rows and points start 16-aligned)
            const double2* g2 = reinterpret_cast<const double2*>(g);
            double2* y2 = reinterpret_cast<double2*>(y);
#pragma unroll
            for (int jj = 0; jj < NLOC / 2; ++jj) {
                const double2 u0 = g2[3 * jj], u1 = g2[3 * jj + 1], u2 = g2[3 * jj + 2];
                y2[jj] = make_double2(ab[0] * u0.x + ab[1] * u0.y + ab[2] * u1.x, ab[0] * u1.y + ab[1] * u2.x + ab[2] * u2.y);
            }
#else
            for (int j = 0; j < NLOC; ++j) y[j] = ab[0] * g[j * 3] + ab[1] * g[j * 3 + 1] + ab[2] * g[j * 3 + 2];
#endif
        }
#endif  // HK_FUSE
        HK_CSYNC();
        // K: the chunk's rows in k-steps of 4.
        for (int r0 = 0; r0 < 3 * nq; r0 += 4) {
            const int rr = r0 + t4;
            const bool rv = rr < 3 * nq;
            const int t = rr / 3, A = rr % 3;
            const double a0 = rv && g8 < NLOC ? s_g[wp][q0 + t][g8][A] : 0.0;
            const double a1 = rv && g8 + 8 < NLOC ? s_g[wp][q0 + t][g8 + 8][A] : 0.0;
#pragma unroll
            for (int w = 0; w < TC_NTW; ++w) {
                const int n = (wq * TC_NTW + w) * 8 + g8;
                const double b0 = rv && n < TC_NCOLR ? s_y[wp][rr][n] : 0.0;
                hk_mma(acc[w], a0, a1, b0);
            }
        }
        HK_CSYNC();
    }
#if HK_RES_MMA
    // the residual from the fragments of its columns
#pragma unroll
    for (int w = 0; w < TC_NTW; ++w)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int i = g8 + 8 * (e / 2), n = (wq * TC_NTW + w) * 8 + 2 * t4 + e % 2;
            if (HK_LIVE && i < NLOC && n >= TC_NCOL && n < TC_NCOLR) atomicAdd(&r[(u64)cell.node[i] * 3 + (n - TC_NCOL)], acc[w][e]);
        }
#endif
#endif
#if defined(HK_PATCH) && !defined(HK_PATCH_TURNS)
    hk_patch_add(acc, wq, lane, pslot + (u64)pk * HP_NUP, s_acc);
#elif defined(HK_FRAG_SCATTER) || defined(HK_NO_SCATTER)
    // Straight from the mma fragments (the fifth pass's scatter, kept for the sweep): a lane's
    // entries lie in 2 rows and 8 column pairs, so a warp's atomic adds touch 16 rows at once.
    hk_fragments(acc, wq, lane, [&](int i, int j, int a, int b, int e, double v) {
#ifdef HK_NO_SCATTER
        (void)a;
        (void)b;
        vals[(c * TPC + tid) * 4 + e % 4] = v + (double)(cell.node[i] + cell.node[j]);
#else
        (void)e;
        const HkCell& cl = cell;
        atomicAdd(&vals[hk_row(cl, i, a, row_ptr) + hk_rank(cl, c, i, j, kpos) * 3 + b], v);
        if (a != b) atomicAdd(&vals[hk_row(cl, j, b, row_ptr) + hk_rank(cl, c, j, i, kpos) * 3 + a], v);
#endif
    });
#else
    // Staged: the fragments go to shared memory (over the point records, dead by now) as the
    // 6 upper blocks st[i][p·NLOC + j], then `hk_scatter_staged` walks the matrix row by row.
#ifdef HK_ST_Y
    double* st = &s_y[wp][0][0];  // (after the last chunk's cell barrier: Y is dead)
#else
    double* st = s_pt[wp];
#endif
#pragma unroll
    for (int w = 0; w < TC_NTW; ++w)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int i = g8 + 8 * (e / 2), n = (wq * TC_NTW + w) * 8 + 2 * t4 + e % 2;
            if (i < NLOC && n < TC_NCOL) st[i * TC_NCOL + n] = acc[w][e];
        }
    HK_CSYNC();
#if defined(HK_PATCH)  // (HK_PATCH_TURNS)
    hk_patch_turns(st, live, wp, tid, pslot + (u64)pk * HP_NUP, s_acc);
#elif defined(HK_STAGE)  // the owner gather (`hyperelastic_gather.cu`): `vals` is the stage, a record per cell
    for (int k = tid; k < NLOC * TC_NCOL; k += TPC) vals[c * (NLOC * TC_NCOL) + k] = st[k];
#elif defined(HK_CHAIN)
    {
        const u64 out = c + 1 < s1 ? links[c] : 0;  // (one load: the carry's link and the skip mask)
        hk_chain_carry(st, c > s0 ? links[c - 1] : 0, out, s_carry[wp], tid);
        hk_scatter_staged(st, cell, c, tid, TPC, row_ptr, kpos, vals, (u32)(out >> 48));
    }
#else
    hk_scatter_staged(st, cell, c, tid, TPC, row_ptr, kpos, vals);
#endif
#endif
    }  // the cell (HK_PERSIST, HK_PATCH: the loop over cells)
#ifdef HK_PATCH
    if (want_k) {
        __syncthreads();  // every cell's adds to the slots are in
        hp_flush(blockIdx.x, s_acc, threadIdx.x, TPC * WPB, flush_ptr, flush_pos, flush_meta, vals);
    }
#endif
}
#endif  // WPB
