// Element matrices of cells with many basis functions (hierarchical p-version hexahedra, high-order
// Lagrange) integrated on the GPU by three schemes, stored per cell, then summed into a CSR matrix
// colour by colour (plain adds) or with atomics. After "Forming matrices of finite element systems
// in GPGPU": its scheme I (one thread per element) and scheme II (one block per element, one thread
// per quadrature point, shared-memory reduction), and a third, galerkin's own:
//
// III (tiled moments): for physics whose element matrix depends only on the moments
//     M_kl[a][b] = Σ_q w_q |J_q| ∂_k φ_a ∂_l φ_b  (physical gradients; diffusion, elasticity)
// with coefficients constant per cell, the NLOC² · 9 moments are nine small GEMMs per cell, done on
// the FP64 tensor cores in 8 × 8 tiles on or above the diagonal; QF::block turns a pair's moments
// into its NCOMP × NCOMP block, written to (a, b) and, transposed, to (b, a).
//
// Stored layout (as assembly.cu's ELEMENT_STORE): out[c][r][s], r = a·NCOMP + i, row-major, in the
// global orientation (entries scaled by signs[c][a]·signs[c][b] where `has_signs`). Scheme III with
// PACKED stores only the upper triangle (s ≥ r), packed row by row: entry (r, s) at
// packed_at(r, s), ND·(ND + 1)/2 doubles per cell — the matrices are symmetric, so half the writes;
// the summation below and assembly.cu's element apply read either layout.
// Defines: DIM (3), NV, NLOC, NQ, NCOMP, QF; the cell tables come from cell_tables.cuh.

constexpr int NDD = ND * ND;
constexpr int NDP = ND * (ND + 1) / 2;  // doubles of a packed upper triangle

// Offset of entry (r, s), s ≥ r, in a cell's packed upper triangle (common.cuh's packed_index).
__device__ __forceinline__ u64 packed_at(int r, int s) { return packed_index(ND, r, s); }

__device__ __forceinline__ double sign_of(const signed char* __restrict__ signs, int has_signs, u64 c, int a) {
    return has_signs ? (double)__ldg(&signs[c * NLOC + a]) : 1.0;
}

// Writes block (a, b) = e (scaled by the pair's sign) and, for a ≠ b, block (b, a) = eᵀ.
__device__ __forceinline__ void write_pair_blocks(double* __restrict__ k, int a, int b, double s, const double e[NCOMP][NCOMP]) {
#pragma unroll
    for (int i = 0; i < NCOMP; ++i)
#pragma unroll
        for (int j = 0; j < NCOMP; ++j) {
            k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j] = s * e[i][j];
            if (a != b) k[(u64)(b * NCOMP + j) * ND + a * NCOMP + i] = s * e[i][j];
        }
}

// ---- Scheme I: one thread per element ----------------------------------------------------------
// The thread loops over the points, keeps the physical gradients of all NLOC functions at the
// point (local memory) and accumulates the upper node blocks in its cell's slice of `out`; the
// lower blocks and the signs are applied at the end.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) matrices_per_cell(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    for (u64 c = global_thread(); c < ncells; c += grid_threads()) {
        double* k = out + c * NDD;
        for (int r = 0; r < NDD; ++r) k[r] = 0.0;
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        double g[NLOC][DIM];
        for (int q = 0; q < NQ; ++q) {
            double inv[DIM][DIM], det;
            jacobian_at(xv, tab, q, inv, det);
            const double w = __ldg(&tab[TAB_W + q]) * fabs(det);
            double p[NPA];
            passive_at(coef, meta, c, q, p);
            for (int a = 0; a < NLOC; ++a) phys_grad(tab, q, a, inv, g[a]);
            for (int a = 0; a < NLOC; ++a) {
                const double va = __ldg(&tab[q * NLOC + a]);
                for (int b = a; b < NLOC; ++b) {
                    const PointPair<DIM> pr{w, va, QF::VALUE ? __ldg(&tab[q * NLOC + b]) : 0.0, g[a], g[b]};
                    double e[NCOMP][NCOMP] = {};
                    QF::template block<DIM, NCOMP>(p, pr, e);
#pragma unroll
                    for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                        for (int j = 0; j < NCOMP; ++j) k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j] += e[i][j];
                }
            }
        }
        for (int a = 0; a < NLOC; ++a)
            for (int b = a; b < NLOC; ++b) {
                const double s = sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b);
                double e[NCOMP][NCOMP];
#pragma unroll
                for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                    for (int j = 0; j < NCOMP; ++j) e[i][j] = k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j];
                write_pair_blocks(k, a, b, s, e);
            }
    }
}

// ---- Scheme II: one block per element, one thread per quadrature point ------------------------
// Thread q holds its point's gradients; pairs go in chunks of CHUNK, each thread evaluating its
// point's block for every pair of the chunk, summed over the block by warp shuffles and one
// shared-memory pass. The host launches NQ threads rounded up to a warp (NQ ≤ 1024).
constexpr int CHUNK = 8;
constexpr int PER_PAIR = NCOMP * NCOMP;
constexpr int NPAIRS = NLOC * (NLOC + 1) / 2;

// First pair of row a of the upper triangle, and the k-th pair (a ≤ b), row by row: the row from
// the quadratic's root, corrected for rounding.
__host__ __device__ constexpr int row_start(int a) { return a * NLOC - a * (a - 1) / 2; }
__device__ __forceinline__ void upper_pair(int k, int& a, int& b) {
    const double d = 2.0 * NLOC + 1.0;
    a = (int)(0.5 * (d - sqrt(d * d - 8.0 * k)));
    a = a < 0 ? 0 : (a > NLOC - 1 ? NLOC - 1 : a);
    while (a > 0 && row_start(a) > k) --a;
    while (a + 1 < NLOC && row_start(a + 1) <= k) ++a;
    b = a + (k - row_start(a));
}

extern "C" __global__ void __launch_bounds__(1024) matrices_per_point(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out) {
    __shared__ double partial[32][CHUNK * PER_PAIR];
    const int q = threadIdx.x, lane = q & 31, warp = q >> 5, nwarps = (blockDim.x + 31) >> 5;
    const bool active = q < NQ;
    for (u64 c = blockIdx.x; c < ncells; c += gridDim.x) {
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        double g[NLOC][DIM], w = 0.0, p[NPA];
        if (active) {
            double inv[DIM][DIM], det;
            jacobian_at(xv, tab, q, inv, det);
            w = __ldg(&tab[TAB_W + q]) * fabs(det);
            passive_at(coef, meta, c, q, p);
            for (int a = 0; a < NLOC; ++a) phys_grad(tab, q, a, inv, g[a]);
        } else {
            for (int s = 0; s < NPA; ++s) p[s] = 0.0;
            for (int a = 0; a < NLOC; ++a)
                for (int d = 0; d < DIM; ++d) g[a][d] = 0.0;
        }
        double* k = out + c * NDD;
        for (int k0 = 0; k0 < NPAIRS; k0 += CHUNK) {
            for (int t = 0; t < CHUNK; ++t) {
                double e[NCOMP][NCOMP] = {};
                if (active && k0 + t < NPAIRS) {
                    int a, b;
                    upper_pair(k0 + t, a, b);
                    const PointPair<DIM> pr{w, __ldg(&tab[q * NLOC + a]), QF::VALUE ? __ldg(&tab[q * NLOC + b]) : 0.0, g[a], g[b]};
                    QF::template block<DIM, NCOMP>(p, pr, e);
                }
#pragma unroll
                for (int i = 0; i < NCOMP; ++i)
#pragma unroll
                    for (int j = 0; j < NCOMP; ++j) {
                        const double v = warp_sum(e[i][j]);
                        if (lane == 0) partial[warp][t * PER_PAIR + i * NCOMP + j] = v;
                    }
            }
            __syncthreads();
            for (int r = threadIdx.x; r < CHUNK * PER_PAIR; r += blockDim.x) {
                const int t = r / PER_PAIR, ij = r % PER_PAIR;
                if (k0 + t < NPAIRS) {
                    double s = 0.0;
                    for (int wv = 0; wv < nwarps; ++wv) s += partial[wv][r];
                    int a, b;
                    upper_pair(k0 + t, a, b);
                    const int i = ij / NCOMP, j = ij % NCOMP;
                    s *= sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b);
                    k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j] = s;
                    if (a != b) k[(u64)(b * NCOMP + j) * ND + a * NCOMP + i] = s;
                }
            }
            __syncthreads();
        }
    }
}

// ---- Scheme III: tiled moments on the tensor cores ----------------------------------------------
// The moments of all pairs are nine small GEMMs per cell, M_kl = H_kᵀ H_l over the points, with
// H_k[q][a] = √(w_q |det J_q|) ∂_k φ_a: one table for both operands (the weight split between
// them), so staging computes three gradients per (point, function) and no weighted copy. Each warp
// owns TPW tiles of 16 × 8 node pairs (rows a in 16-blocks, columns b in 8-blocks, every tile
// touching the upper triangle; a warp's tiles are consecutive, so they share their row block and
// its A fragments where the row has an even count), all nine (k, l) each, as FP64 tensor-core
// fragments of mma.sync m16n8kK (K = MMA_K: 4, 8 or 16; Hopper's native shapes where MMA_NATIVE,
// else K/4 pairs of m8n8k4, the same fragments). The block stages √(w|det J|) J⁻¹ of all points
// once per cell, then the tables of QCP points at a time into one of two buffers while the warps
// multiply the other (one barrier per pass); tiles beyond one pass of the warps take further
// rounds (all of a cell's tiles cannot be held at once from p = 5 on: 30 tiles × 36 FP64
// accumulators are 69 120 registers, more than an SM has). The blocks of each half tile go
// through the warp's slice of the (then free) staging buffers, so both the upper rows and the
// transposed (lower) rows leave as contiguous row segments; with DEFER_WRITES a warp's first half
// tiles wait in scratch of its own and are stored a part per pass of the next round, under its
// multiplies (the writes otherwise run as a phase of their own). The host sizes the launch
// (`tiled_shape`).
#ifndef TILED_WARPS
#define TILED_WARPS 8
#endif
#ifndef TPW
#define TPW 1                                        // tiles per warp and round
#endif
#ifndef MMA_K
#define MMA_K 8
#endif
#ifndef MMA_NATIVE
#define MMA_NATIVE 1
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
#ifndef QCP
#define QCP 16
#endif
#ifndef TENSOR
#define TENSOR 0                                     // stage from 1D factor tables (TN1 points, TNF factors per axis)
#endif
#ifndef TN1
#define TN1 1
#endif
#ifndef TNF
#define TNF 1
#endif
#ifndef ALT_ORDER
#define ALT_ORDER 0                                  // odd warps multiply before they stage; 2 (round 23, PIPE): warps 4–7, 12–15 (two of each SM sub-partition's four)
#endif
#ifndef STREAM_STORES
#define STREAM_STORES 0                              // write the matrices with st.global.cs
#endif
#ifndef PRODUCERS
#define PRODUCERS 0                                  // warp-specialised: staging warps beside the TILED_WARPS multiplying
#endif
#ifndef DEFER_WRITES
#define DEFER_WRITES 0                               // half tiles per warp stored during the next round's passes (0, 1, 2)
#endif
#ifndef PACKED
#define PACKED 0                                     // store the upper triangle only, packed (packed_at)
#endif
#ifndef PAIRED
#define PAIRED 0                                     // tiles of two needed 8 × 8 blocks each (paired_walk)
#endif
#ifndef CELLS
#define CELLS 1                                      // cells per block: groups of TILED_WARPS warps, a cell each
#endif
#ifndef PREFETCH
#define PREFETCH 0                                   // the next cell's coordinates loaded under this cell's work
#endif
#ifndef NARROW
#define NARROW 0                                     // one 8-block of functions (NLOC ≤ 8): m8n8k4 on the tile's first half
#endif
#ifndef WIDE_WRITES
#define WIDE_WRITES 0                                // a round's tiles leave from a packed image in shared memory: 1 block-wide double2 row stores, 2 bulk copies per row, 3 a bulk copy per whole strip, 4 bulk copies per row from an image region of its own
#endif
#ifndef PRESTAGE
#define PRESTAGE 0                                   // (WIDE_WRITES 4) a round's last pass stages the first pass of the next round: 1 the cell's, 2 also the next cell's
#endif
#ifndef IMAGE_DOUBLES
#define IMAGE_DOUBLES 0                              // WIDE_WRITES 4: doubles of the image region beside the staging buffers
#endif
#ifndef SPLIT_MOMENTS
#define SPLIT_MOMENTS 0                              // a tile's nine moments over a pair of warps (5 and 4), swapped through shared memory
#endif
#ifndef PIPE
#define PIPE 0                                       // (round 14) a block's cells pipelined: the next cell's J⁻¹ under this cell's last multiplies, its first pass staged beside this cell's image
#endif
#ifndef PIPE_ROUNDS
#define PIPE_ROUNDS 0                                // (round 15, p ≥ 4) PIPE over several rounds of tiles a cell, an image region per round: 1 the next J⁻¹ in the last pass, 2 after the image
#endif
#ifndef GRAM
#define GRAM 0                                       // (round 16, with PIPE_ROUNDS 2) tiles of the Gram matrix HᵀH over (function, derivative) rows: no padding to 16 functions, no lower moments (gram_tiles)
#endif
#ifndef GRAM_OVERLAP
#define GRAM_OVERLAP 0                               // (round 17, with GRAM) a cell's Gram image turned into its blocks in the next cell's first pass, sent in its second: 1 half the warps of each SM sub-partition after their multiplies, 2 beside the staging (ALT_ORDER's order), 3 every warp before its multiplies
#endif
#ifndef GRAM_SPREAD
#define GRAM_SPREAD 0                                // (GRAM_OVERLAP) the blocks of the first strips in the first pass, of the rest in the second, each part sent a pass later
#endif
#ifndef GRAM_WIDE
#define GRAM_WIDE 0                                  // (round 18, with GRAM) passes staged transposed, h[row][point]: a lane's fragment entries adjacent, loaded as double2 (gram_frag_a/b)
#endif
#ifndef GRAM_PAIRS
#define GRAM_PAIRS 0                                 // (round 18, with GRAM) a warp's tiles in strip-pair order: consecutive tiles share B fragments, two A fragments held (gram_pair_tile)
#endif
#ifndef GRAM_UNROLL
#define GRAM_UNROLL 0                                // (round 19, with GRAM) a pass's k-steps unrolled: the next k-step's fragment loads may issue under the current MMAs
#endif
#ifndef GRAM_DIAG
#define GRAM_DIAG 0                                  // (round 20, with GRAM) a strip's two diagonal tiles take their B fragments from its A fragment (G = HᵀH: the same entries of H), no loads
#endif
#ifndef GRAM_SPLIT
#define GRAM_SPLIT 0                                 // (round 21, with GRAM) two rounds of Gram tiles a cell: the rows of the first 16·GRAM_SPLIT functions, then the rest's; 0: one round (gram_round)
#endif
#ifndef GRAM_SPLIT2
#define GRAM_SPLIT2 0                                // (round 22, with GRAM_SPLIT) three rounds: the rows of functions [16·GRAM_SPLIT, 16·GRAM_SPLIT2) a round of their own, then the rest's
#endif
#ifndef GRAM_EARLY_WAIT
#define GRAM_EARLY_WAIT 0                            // (round 22, with GRAM, one round a cell) the previous cell's copies waited for a pass early, so the cell's last pass has no barrier
#endif
#ifndef GRAM_ROWS
#define GRAM_ROWS 0                                  // (round 23, with GRAM) the tail's packed indices as a row base formed once a tile row or node row, + the column (gram_row)
#endif
#ifndef FN_TABLES
#define FN_TABLES 0                                  // (round 24, TENSOR) per-function factor tables in shared memory, built once a block (fn_tables_fill): 1 each function's three 1D factors, its scale in x's; 2 its x factor and its (y, z) plane products
#endif
#ifndef FN_REGS
#define FN_REGS 0                                    // (round 25, TENSOR, GRAM, PIPE) 1 the functions' scales applied in the tail with the signs' products, formed there (no registers across the passes): a staged entry loads no scale; 2 (one round of Gram tiles a cell) also a staging thread's APT functions' factor ids in registers, loaded once a block (FnRegs): no id load
#endif
#ifndef STAGE_WIDE
#define STAGE_WIDE 0                                 // (round 25, TENSOR, not FN_TABLES) a factor's value and derivative adjacent in the shared tables (one 16-byte load for both)
#endif
#ifndef UNIFORM_TILES
#define UNIFORM_TILES 0                              // (round 26, GRAM, PIPE) the warp index read from lane 0: a warp's Gram tile indices warp-uniform to the compiler (its uniform registers, not 14 vector registers at p = 4)
#endif
#ifndef PAIR_CLASSES
#define PAIR_CLASSES 0                               // (round 26, GRAM, one round, FN_REGS) the tail's node pairs a half-warp per class of rows a ≡ a0 (mod 16), from a table in shared memory (gram_pair_slot): no bank conflicts
#endif
#ifndef SKIP_PARTS
#define SKIP_PARTS 0                                 // benchmark's time split only: 1 staging, 2 multiplies, 4 writes left out
#endif
#if MMA_NATIVE && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
#define MMA16_NATIVE 1                               // Hopper's m16n8k{4,8,16} FP64 shapes
#else
#define MMA16_NATIVE 0
#endif
constexpr int TILED_THREADS = TILED_WARPS * 32;  // the warps that own tiles
constexpr int BLOCK_THREADS = CELLS * TILED_THREADS + PRODUCERS * 32;
constexpr int STAGE_THREADS = PRODUCERS ? PRODUCERS * 32 : TILED_THREADS;
constexpr int KS = MMA_K / 4;                        // k-quads per MMA
constexpr int N16 = (NLOC + 15) / 16;                // 16-row blocks of basis functions
constexpr int NB8 = (NLOC + 7) / 8;                  // 8-column blocks holding a function
constexpr int NPAD = 16 * N16;
constexpr int RS = NPAD + 4;                         // ≡ 4 (mod 16): conflict-free fragment loads
// GRAM: the moments as one symmetric Gram matrix G = HᵀH of GN = DIM·NLOC rows, row DIM·a + k
// holding ∂_k φ_a (√(w|det J|) J⁻¹-scaled), so M_kl[a][b] = G[DIM·a + k][DIM·b + l] and the packed
// upper triangle of G has exactly the entries of the packed element matrix where NCOMP = DIM.
// Staged as h[q][GRS] (rows zero from GN to 16·GS16); tiles of 16 × 8 over G's upper triangle.
constexpr int GN = DIM * NLOC;
constexpr int GB8 = (GN + 7) / 8;                    // 8-column blocks of G
constexpr int GS16 = (GN + 15) / 16;                 // 16-row strips of G
constexpr int GRS = 16 * GS16 + 4;                   // ≡ 4 (mod 16): conflict-free fragment loads
constexpr int NPADS = GRAM ? (16 * GS16 + DIM - 1) / DIM : NPAD;  // functions a staged pass writes (zero beyond NLOC)
// GRAM_WIDE: a pass staged as h[DIM·a + d][q], GROWS rows (every row a staged function writes) of
// GPS points. The MMA's k index t + 4j is taken as point KS·t + j, so lane (g, t)'s fragment
// entries of a row are KS adjacent doubles (KS/2 double2 loads); GPS ≡ 2 (mod 16) at k16, 8 at k8,
// so the eight lanes of each quarter-warp load 16 distinct bank pairs.
constexpr int GROWS = DIM * NPADS;
constexpr int GPS = QCP + (MMA_K == 16 ? 2 : 8);
constexpr int HSIZE = GRAM_WIDE ? GROWS * GPS : GRAM ? QCP * GRS : DIM * QCP * RS;  // one staging buffer: H_d[q][a] (GRAM: h[q][DIM·a + d]; GRAM_WIDE: h[DIM·a + d][q]) of a pass
constexpr int JQ = DIM * DIM;                        // √(w|det J|) J⁻¹ per point
constexpr int NCHUNK = (NQ + QCP - 1) / QCP;
constexpr int SPP = STAGE_THREADS / QCP;             // staging threads per point
constexpr int APT = (NPADS + SPP - 1) / SPP;         // functions per staging thread and pass
constexpr int SUNROLL = APT <= 8 ? APT : 4;
// The factor tables in shared memory (TENSOR): val[3][TNF][TN1] | der[3][TNF][TN1] | scale[NPAD]
// (zero beyond NLOC) as doubles, then qid[NQ] | fid[NPAD] as u32 (tensor_tables.rs's layout).
// FN_TABLES (round 24): the reals a function at a time, so a staged entry loads neither its
// function's factor ids nor its scale (2 of 8 loads; the scale multiplies x's factor once a block):
// 1 val[3][NLOC][TN1] | der[3][NLOC][TN1]; 2 x's val[NLOC][TN1] | der[NLOC][TN1], then the
// (y, z) planes g h | g'h | g h'[NLOC][TN1²] (5 loads an entry, 3 products); then scale[NPAD] and
// the ints as before (unused but qid). The global tables keep tensor_tables.rs's layout (TG_VAL).
constexpr int TG_VAL = 3 * TNF * TN1;
constexpr int TT_VAL = FN_TABLES == 1 ? 3 * NLOC * TN1 : TG_VAL;
constexpr int TT_PLANE = TN1 * TN1;
constexpr int TT_FNX = NLOC * TN1;  // FN_TABLES 2: x's values (der after them), then the planes
constexpr int TT_REALS = !TENSOR ? 0 : FN_TABLES == 2 ? 2 * TT_FNX + 3 * NLOC * TT_PLANE + NPAD : 2 * TT_VAL + NPAD;
static_assert(FN_TABLES >= 0 && FN_TABLES <= 2 && (!FN_TABLES || TENSOR), "per-function factor tables (1, 2) from the factor tables");
static_assert(!STAGE_WIDE || (TENSOR && FN_TABLES == 0), "16-byte staging loads: the factor tables by factor");
constexpr int TW = STAGE_WIDE ? 2 : 1;               // doubles a factor entry takes in ts (STAGE_WIDE: value, derivative)
constexpr int TT_INTS = TENSOR ? NQ + NPAD : 0;
// PAIR_CLASSES (round 26): the tail's node pairs (a, b), a half-warp at a time. Their moment reads
// and block writes are 8-byte accesses at G's packed entries (3a + k, 3b + l), one wavefront a
// half-warp where its 16 addresses lie on distinct bank pairs (address mod 16 doubles). Along a
// row b's stride 3 is a permutation of the 16, so the row-major order conflicts only where a
// half-warp spans rows — at p = 4 most do (2 163 wavefronts a cell where 1 440 would do, counted
// from the addresses). Rows a and a + 16 are 48 rows of G apart, whose packed bases differ by 8
// (mod 16) at every k: pair (a0 + 16j, b) of class a0 lies on bank pair f(3a0 + k) + l + 3c, colour
// c = (b + 8j) mod 16, so a class's pairs of distinct colours never conflict. Class a0 takes as
// many half-warps as its most frequent colour; lane c of its h-th holds its h-th pair of colour c
// (rows in order, b ascending): p = 4 94 half-warps, 3 slots a thread of 512 (gram_pair_slot).
__host__ __device__ constexpr int pc_first(int lo, int t) { return lo + ((t - lo) & 15); }  // the first b ≥ lo, b ≡ t (mod 16)
__host__ __device__ constexpr int pc_run(int lo, int t) { return pc_first(lo, t) < NLOC ? (NLOC - 1 - pc_first(lo, t)) / 16 + 1 : 0; }
__host__ __device__ constexpr int pc_halves(int a0) {  // class a0's half-warps: its most frequent colour's pairs
    int most = 0;
    for (int c = 0; c < 16; ++c) {
        int n = 0;
        for (int j = 0; a0 + 16 * j < NLOC; ++j) n += pc_run(a0 + 16 * j, (c - 8 * j) & 15);
        most = n > most ? n : most;
    }
    return most;
}
constexpr int pc_slots() {
    int s = 0;
    for (int a0 = 0; a0 < 16 && a0 < NLOC; ++a0) s += 16 * pc_halves(a0);
    return s;
}
constexpr int PC_SLOTS = PAIR_CLASSES ? pc_slots() : 0;
constexpr int PC_DOUBLES = (PC_SLOTS * 2 + 15) / 16 * 2;  // the slots' table (u16 a slot), whole 16-byte units
constexpr int TT_DOUBLES = ((TT_REALS + (TT_INTS + 1) / 2 + 1) & ~1) + PC_DOUBLES;  // (PAIR_CLASSES: the slots last)
constexpr int WR = 8 * NCOMP;                        // a half tile's blocks: WR × WR entries
constexpr int WS = WR + 1;                           // odd row stride: conflict-free column reads
constexpr int WIT = (WR * WR + 31) / 32;             // a warp's store rounds per direction of a half tile
static_assert(MMA_K == 4 || MMA_K == 8 || MMA_K == 16, "MMA_K is 4, 8 or 16");
static_assert(QCP % MMA_K == 0, "points per pass come in whole MMA k-steps");
static_assert(DIM == 3, "the tiled scheme is written for 3D cells");
static_assert(!GRAM_WIDE || (GRAM && MMA_K >= 8 && QCP % 16 == 0 && !GRAM_OVERLAP && (STAGE_THREADS % QCP) == 0),
              "transposed Gram passes: Gram tiles on k8 or k16, whole 16-point blocks a pass, a staging thread per point of a pass, blocks in the cell's tail");
static_assert(SPP >= 1, "a block stages at least one point per thread");
static_assert(DEFER_WRITES >= 0 && DEFER_WRITES <= 2, "a warp defers 0, 1 or 2 half tiles");
static_assert(!DEFER_WRITES || (TPW == 1 && PRODUCERS == 0), "deferred writes: one tile per warp, every warp stages");
static_assert(!TENSOR || (TN1 <= 256 && TNF <= 256), "factor and point indices are bytes");
static_assert(!NARROW || NLOC <= 8, "narrow tiles: one 8-block of functions");
static_assert(CELLS >= 1 && CELLS <= 15 && (CELLS == 1 || PRODUCERS == 0), "1 to 15 cell groups (a named barrier each), no producer warps");
static_assert(!PREFETCH || (PRODUCERS == 0 && NV * DIM <= TILED_THREADS), "a lane per coordinate of the next cell");
static_assert(!WIDE_WRITES || (PACKED && (!PAIRED || PIPE) && PRODUCERS == 0 && DEFER_WRITES == 0 && TPW == 1),
              "wide writes: packed, unpaired (paired only where cells are pipelined: round 15), one tile per warp, every warp stages");
static_assert(!SPLIT_MOMENTS || (TPW == 1 && PRODUCERS == 0 && DEFER_WRITES == 0 && !NARROW && TILED_WARPS % 2 == 0),
              "split moments: pairs of warps on one tile each, every warp stages, nothing deferred");
constexpr int ROUND_TILES = TILED_WARPS * TPW / (SPLIT_MOMENTS ? 2 : 1);  // tiles per round
constexpr int MSPLIT = 5;                            // moments the first warp of a split pair holds (the second: 4)
constexpr int XCHG = 2 * MSPLIT * 2 * 32;            // a split tile's swap: each warp's moments of the other's half tile
static_assert(WIDE_WRITES >= 0 && WIDE_WRITES <= 4 && (WIDE_WRITES != 4 || IMAGE_DOUBLES > 0) && (IMAGE_DOUBLES == 0 || WIDE_WRITES == 4 || PIPE) &&
                  IMAGE_DOUBLES % 2 == 0,
              "wide writes 0–4; an image region (an even number of doubles) with 4, or pipelined cells");
static_assert(!PIPE || (WIDE_WRITES == 3 && CELLS == 1 && TPW == 1 && PRODUCERS == 0 && DEFER_WRITES == 0 && !SPLIT_MOMENTS && !PREFETCH &&
                        PRESTAGE == 0 && NV * DIM <= 32),
              "pipelined cells: whole-strip bulk copies, one cell group, one tile per warp, every warp stages, warp 0 a lane per coordinate");
static_assert(ALT_ORDER <= 1 || (ALT_ORDER == 2 && PIPE && CELLS == 1 && TILED_WARPS % 8 == 0), "the order by sub-partition: pipelined cells, a multiple of 8 warps");
static_assert(!PRESTAGE || (WIDE_WRITES == 4 && NCHUNK > 1), "prestaging: the writes leave the staging buffers alone, two of them");
static_assert(PRESTAGE <= 1 || (NCHUNK >= 3 && CELLS == 1 && !PREFETCH && NV * DIM <= 32),
              "prestaging across cells: coordinates, jq and points in three passes, one cell group, warp 0 a lane per coordinate");
// Split moments swap through the staging buffers after a round's last pass, where prestaging puts
// the next round's first pass, and were not written for an image region of its own: not combined.
static_assert(!SPLIT_MOMENTS || (PRESTAGE == 0 && WIDE_WRITES != 4), "split moments: no prestaging, no image region of its own (wide writes 4)");

// A tile: the m16n8 product of row blocks r0 (rows 0–7) and r1 (rows 8–15) of 8 functions with
// column block c; r1 < 0: none (its rows repeat r0's, nothing is stored); r0 < 0: no tile. Row
// block R > c is a transposed block: its moments are those of block (c, R) with k and l swapped.
struct Tile {
    int r0 = -1, r1 = -1, c = -1;
};

// PAIRED: the needed 8 × 8 blocks (R, C), R ≤ C, two per tile of one column C — rows 0…C, less
// C − 1 where column C − 1 took block (C − 1, C), plus (transposed) row C + 1 where the count is
// odd and a next column exists — so only the last column may leave half a tile idle: ⌈b(b+1)/4⌉
// tiles for b = NB8 (p = 5: 28, p = 4: 14) against 30 and 16 without, whose diagonal tiles'
// lower halves lie wholly below the diagonal. Returns the tile count; tile t's blocks go to `out`.
__host__ __device__ constexpr int paired_walk(int t, Tile& out) {
    int count = 0;
    bool lent = false;  // the previous column took block (C − 1, C)
    for (int col = 0; col < NB8; ++col) {
        const int own = col + 1 - (lent ? 1 : 0);
        const bool take = (own & 1) && col + 1 < NB8;
        const int n = own + (take ? 1 : 0);
        for (int i = 0; i < n; i += 2, ++count)
            if (count == t) {
                // The column's i-th row block: 0, 1, …, skipping C − 1 where lent.
                out.r0 = i + (lent && i >= col - 1 ? 1 : 0);
                out.r1 = i + 1 < n ? i + 1 + (lent && i + 1 >= col - 1 ? 1 : 0) : -1;
                out.c = col;
            }
        lent = take;
    }
    return count;
}

// Without PAIRED: tiles (A, B) of 16-row block A (row blocks 2A, 2A + 1), 8-column block B ≥ 2A
// (on or above the diagonal), B < NB8.
__host__ __device__ constexpr int tile_count() {
    if (PAIRED) {
        Tile none;
        return paired_walk(-1, none);
    }
    int n = 0;
    for (int a = 0; a < N16; ++a) n += NB8 > 2 * a ? NB8 - 2 * a : 0;
    return n;
}
constexpr int NTILES = tile_count();

__host__ __device__ constexpr Tile tile_of(int t) {
    Tile tl;
    if (PAIRED) {
        paired_walk(t, tl);
        return tl;
    }
    int ta = 0;
    while (t >= NB8 - 2 * ta) {
        t -= NB8 - 2 * ta;
        ++ta;
    }
    tl.r0 = 2 * ta;
    tl.r1 = 2 * ta + 1;
    tl.c = 2 * ta + t;
    return tl;
}

// D += A·B on one 8 × 8 × 4 FP64 tensor-core step: a = A[lane/4][lane%4], b = B[lane%4][lane/4],
// (d0, d1) = D[lane/4][2·(lane%4) + {0, 1}].
__device__ __forceinline__ void dmma(double& d0, double& d1, double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
}

// D (16 × 8) += A (16 × 4·S) · B (4·S × 8) with the m16n8k(4·S) fragments: lane (g, t) =
// (lane/4, lane%4) holds a[i] = A[g + 8(i%2)][t + 4(i/2)], b[i] = B[t + 4i][g] and
// d[i] = D[g + 8(i/2)][2t + i%2]. Native on Hopper; else S · 2 m8n8k4 steps (same fragments).
template <int S>
__device__ __forceinline__ void mma16(double d[4], const double a[2 * S], const double b[S]) {
#if MMA16_NATIVE
    if constexpr (S == 1) {
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(b[0]));
    } else if constexpr (S == 2) {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
                     "{%12, %13, %14, %15}, {%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                       "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
    }
#else
#pragma unroll
    for (int s = 0; s < S; ++s) {
        dmma(d[0], d[1], a[2 * s], b[s]);
        dmma(d[2], d[3], a[2 * s + 1], b[s]);
    }
#endif
}

// FN_REGS 2 (round 25): a staging thread stages the same APT functions (sub + m·SPP) in every
// pass of every cell (one round of Gram tiles), so their factor ids (4 bits an axis, two
// functions a register) live in registers, loaded once a block after the tables' barrier: no id
// load an entry (FN_REGS 1 and 2: no scale load), no table beyond the factor tables (round 24's
// per-function tables took shared memory and spilled less only by chance).
struct FnRegs {
    u32 o[FN_REGS == 2 ? (APT + 1) / 2 : 1];  // function m's factor of axis k: bits 12(m % 2) + 4k of o[m / 2]
    __device__ __forceinline__ int offset(int m, int k) const { return (int)((o[m / 2] >> (12 * (m % 2) + 4 * k)) & 15u) * (TN1 * TW); }
};
static_assert(FN_REGS >= 0 && FN_REGS <= 2 && (!FN_REGS || (TENSOR && FN_TABLES == 0 && GRAM && !GRAM_OVERLAP && PIPE && PRODUCERS == 0)),
              "the scales in the tail: factor tables by factor, Gram tiles with the blocks in the cell's tail, pipelined cells");
static_assert(FN_REGS < 2 || (GRAM_SPLIT == 0 && APT <= 8 && TNF <= 16),
              "factor ids in registers: one round of Gram tiles a cell (the same functions every pass), an unrolled staging loop, 4-bit factor ids");
__device__ __forceinline__ FnRegs fn_regs(const u32* __restrict__ tis, int tid) {
    FnRegs fr{};
    const int sub = GRAM_WIDE ? tid / QCP : tid % SPP;
#pragma unroll
    for (int m = 0; m < (FN_REGS == 2 ? APT : 0); ++m) {
        const int a = sub + m * SPP;
        const u32 fi = a < NLOC ? tis[NQ + a] : 0u;
        fr.o[m / 2] |= ((fi & 255u) | ((fi >> 8) & 255u) << 4 | (fi >> 16) << 8) << (12 * (m % 2));
    }
    return fr;
}

// Stages H_d[q0 + qq][a] (d < 3, qq < QCP, a < NPAD; zero outside NQ and NLOC) into `h`. SPP
// threads share a point: each holds the point's √(w|det J|) J⁻¹ in registers and forms APT
// functions' entries, all their loads issued together (unrolled). With TENSOR the reference
// gradient is c_a · (f'g h, f g'h, f g h') from the factor tables in shared memory `ts`/`tis`;
// otherwise three doubles of the NQ · NLOC · 3 table, read from L2 (it outgrows L1 from p = 4 on).
__device__ __forceinline__ void stage_points(const double* __restrict__ tab, const double* __restrict__ jq,
                                             const double* __restrict__ ts, const u32* __restrict__ tis, int q0,
                                             double* __restrict__ h, int tid, int a0 = 0, const FnRegs& fr = FnRegs{}) {
    // GRAM_WIDE: the lanes of a warp take consecutive points (one function each), so their
    // stores to a transposed row are adjacent and their factor loads mostly one address.
    const int qq = GRAM_WIDE ? tid % QCP : tid / SPP, sub = GRAM_WIDE ? tid / QCP : tid - qq * SPP;
    if (qq >= QCP || (GRAM_WIDE && sub >= SPP)) return;
    const int q = q0 + qq;
    // Entry (d, a) of point qq: H_d[qq][a], or with GRAM row DIM·a + d of the point's Gram row
    // (GRAM_WIDE: entry qq of row DIM·a + d).
    double* hq = h + (GRAM_WIDE ? qq : qq * (GRAM ? GRS : RS));
    const auto at = [](int d, int a) { return GRAM_WIDE ? (DIM * a + d) * GPS : GRAM ? DIM * a + d : d * QCP * RS + a; };
    if (q >= NQ) {
        for (int a = sub; a < NPADS; a += SPP)
#pragma unroll
            for (int d = 0; d < DIM; ++d) hq[at(d, a)] = 0.0;
        return;
    }
    double inv[DIM][DIM];
#pragma unroll
    for (int r = 0; r < DIM * DIM; ++r) inv[r / DIM][r % DIM] = jq[q * JQ + r];
#if TENSOR
    const u32 qi = tis[q];
#if FN_TABLES == 1
    const double* vx = ts + (qi & 255u);
    const double* vy = ts + NLOC * TN1 + ((qi >> 8) & 255u);
    const double* vz = ts + 2 * NLOC * TN1 + (qi >> 16);
#elif FN_TABLES == 2
    const double* vx = ts + (qi & 255u);
    const double* vp = ts + 2 * TT_FNX + ((qi >> 8) & 255u) + TN1 * (qi >> 16);
#else
    const double* vx = ts + TW * (qi & 255u);
    const double* vy = ts + TW * (TNF * TN1 + ((qi >> 8) & 255u));
    const double* vz = ts + TW * (2 * TNF * TN1 + (qi >> 16));
#endif
#endif
#pragma unroll SUNROLL
    for (int m = 0; m < APT; ++m) {
        // (GRAM_SPLIT: a round's passes stage its rows' functions from a0 on; no tile reads the rest.)
        const int a = a0 + sub + m * SPP;
        if ((GRAM_SPLIT || APT * SPP > NPADS) && a >= NPADS) break;
        double r[DIM] = {};
        if (a < NLOC) {
#if TENSOR && FN_TABLES == 1
            const int o = a * TN1;
            const double x = vx[o], y = vy[o], z = vz[o];
            r[0] = vx[TT_VAL + o] * y * z;
            r[1] = x * vy[TT_VAL + o] * z;
            r[2] = x * y * vz[TT_VAL + o];
#elif TENSOR && FN_TABLES == 2
            const double x = vx[a * TN1];
            const double* pa = vp + a * TT_PLANE;
            r[0] = vx[TT_FNX + a * TN1] * pa[0];
            r[1] = x * pa[NLOC * TT_PLANE];
            r[2] = x * pa[2 * NLOC * TT_PLANE];
#elif TENSOR
            // FN_REGS: the offsets from registers and no scale (the tail's sign products carry it).
#if FN_REGS == 2
            const int ox = fr.offset(m, 0), oy = fr.offset(m, 1), oz = fr.offset(m, 2);
#else
            const u32 fi = tis[NQ + a];
            const int ox = (int)(fi & 255u) * TN1 * TW, oy = (int)((fi >> 8) & 255u) * TN1 * TW, oz = (int)(fi >> 16) * TN1 * TW;
#endif
#if !FN_REGS
            const double c = ts[2 * TT_VAL + a];
#endif
#if STAGE_WIDE
            const double2 fx = *reinterpret_cast<const double2*>(vx + ox), fy = *reinterpret_cast<const double2*>(vy + oy),
                          fz = *reinterpret_cast<const double2*>(vz + oz);
            const double x = fx.x, y = fy.x, z = fz.x, dx = fx.y, dy = fy.y, dz = fz.y;
#else
            const double x = vx[ox], y = vy[oy], z = vz[oz], dx = vx[TT_VAL + ox], dy = vy[TT_VAL + oy], dz = vz[TT_VAL + oz];
#endif
#if FN_REGS
            r[0] = dx * y * z;
            r[1] = x * dy * z;
            r[2] = x * y * dz;
#else
            r[0] = c * dx * y * z;
            r[1] = c * x * dy * z;
            r[2] = c * x * y * dz;
#endif
#else
            const double* d = tab + TAB_DPHI + (q * NLOC + a) * DIM;
#pragma unroll
            for (int e = 0; e < DIM; ++e) r[e] = __ldg(&d[e]);
#endif
        }
#pragma unroll
        for (int k = 0; k < DIM; ++k) {
            double g = 0.0;
#pragma unroll
            for (int e = 0; e < DIM; ++e) g = fma(inv[e][k], r[e], g);
            hq[at(k, a)] = g;
        }
    }
}

// One pass of QCP points: the warp's tiles accumulate H_kᵀ H_l over the staged buffer `h`.
__device__ __forceinline__ void multiply_pass(const double* __restrict__ h, const Tile (&tl)[TPW], double (&acc)[TPW][DIM * DIM][4]) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll 1
    for (int kq = 0; kq < QCP; kq += MMA_K) {
        double fb[TPW][DIM][KS];
#pragma unroll
        for (int i = 0; i < TPW; ++i)
#pragma unroll
            for (int l = 0; l < DIM; ++l)
#pragma unroll
                for (int j = 0; j < KS; ++j) fb[i][l][j] = tl[i].c < 0 ? 0.0 : h[(l * QCP + kq + t + 4 * j) * RS + tl[i].c * 8 + g];
#pragma unroll
        for (int kk = 0; kk < DIM; ++kk) {
            double fa[2 * KS] = {};
#pragma unroll
            for (int i = 0; i < TPW; ++i) {
                if (tl[i].r0 < 0) continue;
                if (i == 0 || tl[i].r0 != tl[i - 1].r0 || tl[i].r1 != tl[i - 1].r1) {
                    const int row[2] = {8 * tl[i].r0 + g, 8 * (tl[i].r1 < 0 ? tl[i].r0 : tl[i].r1) + g};
#pragma unroll
                    for (int j = 0; j < 2 * KS; ++j) fa[j] = h[(kk * QCP + kq + t + 4 * (j / 2)) * RS + row[j % 2]];
                }
#pragma unroll
                for (int l = 0; l < DIM; ++l) {
                    if (NARROW) {
                        // One 8-block of functions: the tile's second half is idle, so m8n8k4
                        // steps on its first (same fragments) leave slots 2, 3 zero, not live.
#pragma unroll
                        for (int j = 0; j < KS; ++j) dmma(acc[i][kk * DIM + l][0], acc[i][kk * DIM + l][1], fa[2 * j], fb[i][l][j]);
                    } else {
                        mma16<KS>(acc[i][kk * DIM + l], fa, fb[i][l]);
                    }
                }
            }
        }
    }
}

// SPLIT_MOMENTS: one pass of QCP points for warp HM of a pair sharing tile `tl`: moments
// m = 5·HM + j (j < 5, m < 9) of M_kl, m = 3k + l, so warp 0 holds 20 accumulators and warp 1 16
// instead of 36, and each loads the A fragments of its two k only.
template <int HM>
__device__ __forceinline__ void multiply_split(const double* __restrict__ h, const Tile& tl, double (&acc)[MSPLIT][4]) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    if (tl.r0 < 0) return;
    const int row[2] = {8 * tl.r0 + g, 8 * (tl.r1 < 0 ? tl.r0 : tl.r1) + g};
#pragma unroll 1
    for (int kq = 0; kq < QCP; kq += MMA_K) {
        double fb[DIM][KS], fa[2][2 * KS];
#pragma unroll
        for (int l = 0; l < DIM; ++l)
#pragma unroll
            for (int j = 0; j < KS; ++j) fb[l][j] = h[(l * QCP + kq + t + 4 * j) * RS + tl.c * 8 + g];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2 * KS; ++j) fa[i][j] = h[((HM + i) * QCP + kq + t + 4 * (j / 2)) * RS + row[j % 2]];
#pragma unroll
        for (int j = 0; j < MSPLIT; ++j) {
            constexpr int M0 = HM * MSPLIT;
            if (M0 + j >= DIM * DIM) break;
            mma16<KS>(acc[j], fa[(M0 + j) / DIM - HM], fb[(M0 + j) % DIM]);
        }
    }
}

// A store of the element matrices (streaming where STREAM_STORES: written once, never read here).
__device__ __forceinline__ void store_out(double* p, double v) {
#if STREAM_STORES
    __stcs(p, v);
#else
    *p = v;
#endif
}

// Row block of half tile hh of `tl` (−1: none).
__device__ __forceinline__ int half_row(const Tile& tl, int hh) { return hh == 0 ? tl.r0 : tl.r1; }

// Whether half tile hh of `tl` holds needed pairs: a row block on or above the diagonal, or
// (PAIRED) a transposed one below it (without PAIRED the second half of a diagonal tile lies
// wholly below it and is not needed).
__device__ __forceinline__ bool half_tile_writes(const Tile& tl, int hh) {
    const int r = half_row(tl, hh);
    return tl.r0 >= 0 && r >= 0 && 8 * r < NLOC && (PAIRED || r <= tl.c);
}

// Node corner (a0, b0), a0 ≤ b0, of the block half tile hh of `tl` stores.
__device__ __forceinline__ void half_tile_corner(const Tile& tl, int hh, int& a0, int& b0) {
    const int r = half_row(tl, hh);
    a0 = 8 * (r <= tl.c ? r : tl.c);
    b0 = 8 * (r <= tl.c ? tl.c : r);
}

// The orientation signs a lane applies to its tile's pairs: row[hh] of a = 8·R + g (R half hh's
// row block), col[v] of b = 8·C + 2t + v (0 beyond NLOC). Loaded when the round starts, so their
// latency hides under the staging and multiplies instead of opening the write phase.
struct TileSigns {
    double row[2] = {0.0, 0.0}, col[2] = {0.0, 0.0};
};

__device__ __forceinline__ TileSigns tile_signs(const Tile& tl, const signed char* __restrict__ signs, int has_signs, u64 c) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    TileSigns sg;
    if (tl.r0 < 0) return sg;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        const int r = hh == 0 ? tl.r0 : tl.r1, a = 8 * r + g;
        sg.row[hh] = r >= 0 && a < NLOC ? sign_of(signs, has_signs, c, a) : 0.0;
    }
#pragma unroll
    for (int v = 0; v < 2; ++v) {
        const int b = 8 * tl.c + 2 * t + v;
        sg.col[v] = b < NLOC ? sign_of(signs, has_signs, c, b) : 0.0;
    }
    return sg;
}

// Forms the blocks of half tile hh of `tl` — pairs (a, b), a = 8·R + g (R its row block), b =
// 8·C + 2t + v — from the moments in accumulator slots 2·hh + v, signed (`sg`), each entry handed to
// put(row, col, value) as U[NCOMP·g + i][NCOMP·(2t + v) + j]; a transposed block (R > C) as the
// blocks of pairs (b, a), moments M_lk, at U[NCOMP·(2t + v) + i][NCOMP·g + j].
template <class Put>
__device__ __forceinline__ void form_half_tile(Put put, const double* p, const Tile& tl, int hh, const double (&acc)[DIM * DIM][4],
                                               const TileSigns& sg) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int r = half_row(tl, hh);
    const bool tr = r > tl.c;
    const double sa = hh == 0 ? sg.row[0] : sg.row[1];
#pragma unroll
    for (int v = 0; v < 2; ++v) {
        const double s = sa * sg.col[v];
        MomentPair mp;
#pragma unroll
        for (int m = 0; m < DIM * DIM; ++m) mp.m[m] = tr ? acc[(m % DIM) * DIM + m / DIM][2 * hh + v] : acc[m][2 * hh + v];  // constant indices: acc stays in registers
        double e[NCOMP][NCOMP] = {};
        QF::template block<DIM, NCOMP>(p, mp, e);
        const int ra = tr ? 2 * t + v : g, cb = tr ? g : 2 * t + v;
#pragma unroll
        for (int i = 0; i < NCOMP; ++i)
#pragma unroll
            for (int j = 0; j < NCOMP; ++j) put(NCOMP * ra + i, NCOMP * cb + j, s * e[i][j]);
    }
}

// The blocks U of half tile hh into the warp's scratch `ws` (row stride WS).
__device__ __forceinline__ void fill_half_tile(double* __restrict__ ws, const double* p, const Tile& tl, int hh,
                                               const double (&acc)[DIM * DIM][4], const TileSigns& sg) {
    form_half_tile([&](int r, int col, double v) { ws[r * WS + col] = v; }, p, tl, hh, acc, sg);
}

// Store rounds [lo, hi) (of WIT) of a half tile at node corner (a0, b0) from its blocks U in `ws`:
// UP, U's rows where b ≥ a (the upper blocks: row a0·NCOMP + r, columns b0·NCOMP + col); else U's
// columns where b > a (the transposed blocks: row b0·NCOMP + r, columns a0·NCOMP + col, entry
// U[col][r]). Each warp store covers contiguous row segments of WR doubles.
//
// A packed diagonal half tile (a0 = b0) stores only U's upper triangle, col ≥ r: its WR(WR + 1)/2
// entries are numbered row by row (`triangle_entry`), so its stores take ⌈WR(WR + 1)/64⌉ rounds
// (10 for elasticity) with every lane busy, not WIT (18) with the lower half's lanes idle.
constexpr int TRI = WR * (WR + 1) / 2;

// Row r and column col ≥ r of entry idx of a WR × WR upper triangle numbered row by row (row r
// starts at r·WR − r(r − 1)/2): the quadratic's root in single precision, corrected by a row.
__device__ __forceinline__ void triangle_entry(int idx, int& r, int& col) {
    constexpr float D = 2.0f * WR + 1.0f;
    r = (int)((D - sqrtf(D * D - 8.0f * (float)idx)) * 0.5f);
    if (r > 0 && r * WR - r * (r - 1) / 2 > idx) --r;
    else if (r + 1 < WR && (r + 1) * WR - (r + 1) * r / 2 <= idx) ++r;
    col = r + idx - (r * WR - r * (r - 1) / 2);
}

template <bool UP>
__device__ __forceinline__ void store_rows(double* __restrict__ k, const double* __restrict__ ws, int a0, int b0, int lo, int hi) {
    const int lane = threadIdx.x & 31;
    const bool tri = UP && PACKED && a0 == b0;
#pragma unroll 2
    for (int it = lo; it < hi; ++it) {
        const int idx = 32 * it + lane;
        if (idx >= (tri ? TRI : WR * WR)) break;
        int r = idx / WR, col = idx - r * WR;
        if (tri) triangle_entry(idx, r, col);
        if (UP && PACKED) {
            const int ar = a0 + r / NCOMP, bc = b0 + col / NCOMP, rr = a0 * NCOMP + r, ss = b0 * NCOMP + col;
            if (ar < NLOC && bc < NLOC && ss >= rr) store_out(&k[packed_at(rr, ss)], ws[r * WS + col]);
        } else if (UP) {
            const int ar = a0 + r / NCOMP, bc = b0 + col / NCOMP;
            if (ar < NLOC && bc < NLOC && bc >= ar) store_out(&k[(u64)(a0 * NCOMP + r) * ND + b0 * NCOMP + col], ws[r * WS + col]);
        } else {
            const int ar = a0 + col / NCOMP, bc = b0 + r / NCOMP;
            if (ar < NLOC && bc < NLOC && bc > ar) store_out(&k[(u64)(b0 * NCOMP + r) * ND + a0 * NCOMP + col], ws[col * WS + r]);
        }
    }
}

// Store rounds [lo, hi) of 2·WIT of a half tile: the upper rows' rounds, then the transposed rows'
// (none where PACKED: the upper triangle is the whole of the stored matrix).
__device__ __forceinline__ void store_half_tile(double* __restrict__ k, const double* __restrict__ ws, int a0, int b0, int lo, int hi) {
    if (lo < WIT) store_rows<true>(k, ws, a0, b0, lo, hi < WIT ? hi : WIT);
    if (!PACKED && hi > WIT) store_rows<false>(k, ws, a0, b0, lo > WIT ? lo - WIT : 0, hi - WIT);
}

// Writes half tile hh of `tl` at once through the warp's scratch `ws`: both the upper rows and
// the transposed (lower) rows leave as contiguous row segments.
__device__ __forceinline__ void write_half_tile(double* __restrict__ k, double* __restrict__ ws, const double* p, const Tile& tl,
                                                int hh, const double (&acc)[DIM * DIM][4],
                                                const TileSigns& sg) {
    fill_half_tile(ws, p, tl, hh, acc, sg);
    __syncwarp();
    int a0 = 0, b0 = 0;
    half_tile_corner(tl, hh, a0, b0);
    store_half_tile(k, ws, a0, b0, 0, 2 * WIT);
    __syncwarp();  // the scratch is read before the next half tile overwrites it
}

// A warp's deferred half tiles (DEFER_WRITES): the first DEFER_WRITES half tiles of its last
// round's tile of matrix k (null: none pending), formed into slots of the warp's own
// scratch `wd` at the round's end and stored a part per pass of the next round (the next cell's
// where the cell took one round), so the stores stream out under the multiplies and staging
// instead of in a write phase of their own.
struct Deferred {
    double* k = nullptr;
    Tile tile;
    // Part `part` of `parts` of the pending stores.
    __device__ __forceinline__ void drain(const double* __restrict__ wd, int part, int parts) const {
        if (DEFER_WRITES == 0 || k == nullptr) return;
        constexpr int T = 2 * WIT;
        const int lo = part * (DEFER_WRITES * T) / parts, hi = (part + 1) * (DEFER_WRITES * T) / parts;
#pragma unroll
        for (int j = 0; j < DEFER_WRITES; ++j) {
            const int jl = lo - j * T > 0 ? lo - j * T : 0, jh = hi - j * T < T ? hi - j * T : T;
            if (jl < jh && half_tile_writes(tile, j)) {
                int a0 = 0, b0 = 0;
                half_tile_corner(tile, j, a0, b0);
                store_half_tile(k, wd + j * WR * WS, a0, b0, jl, jh);
            }
        }
    }
};

// Named barriers of the warp-specialised shape (id 0 is __syncthreads): FULL[b] (1, 2) the
// producers arrive at once buffer b is staged, the multiplying warps wait; EMPTY[b] (3, 4) the
// reverse; 5 among the producers (the cell's J⁻¹ table).
__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }

// The barrier of cell group `grp` (CELLS > 1: named barrier 1 + grp over its TILED_THREADS, a
// warp's own where the group is one warp; else the block's).
__device__ __forceinline__ void group_sync(int grp) {
    if (CELLS == 1) __syncthreads();
    else if (TILED_WARPS == 1) __syncwarp();
    else bar_sync(1 + grp, TILED_THREADS);
}

// An asynchronous copy of `bytes` (4 or 8) from global to shared memory (cp.async, sm_80 on;
// before, a plain load and store), waited for by `async_wait`, then a barrier.
template <int BYTES>
__device__ __forceinline__ void async_copy(void* dst, const void* src) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(d), "l"(src), "n"(BYTES) : "memory");
#else
    if (BYTES == 8) *static_cast<double*>(dst) = __ldg(static_cast<const double*>(src));
    else *static_cast<u32*>(dst) = __ldg(static_cast<const u32*>(src));
#endif
}
__device__ __forceinline__ void async_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// PREFETCH: a group's cells' coordinates and vertex indices copied to shared memory ahead of use
// (cp.async: no registers held), so a cell's head is not the chain of dependent global loads
// (vertex index, then coordinate). Two buffers each: while cell c is integrated from xs[b], the
// coordinates of c + stride go to xs[b ^ 1] (their vertex indices arrived a cell earlier, in
// vs[b ^ 1]) and the vertex indices of c + 2·stride to vs[b]. Lane i < NV·DIM copies coordinate
// i % DIM of vertex i / DIM; lane i < NV vertex index i.
struct CoordPrefetch {
    double* xs;  // [2][XS] coordinates
    u32* vs;     // [2][NV] vertex indices
    static constexpr int XS = NV * DIM;
    // The first cell's coordinates and the second's vertex indices (a barrier of the group between).
    __device__ __forceinline__ CoordPrefetch(double* x, u32* v, u64 c, u64 stride, u64 ncells, const u32* __restrict__ cell_verts,
                                             const double* __restrict__ coords, int tid, int grp)
        : xs(x), vs(v) {
        for (int j = 0; j < 2; ++j)
            if (tid < NV && c + j * stride < ncells) async_copy<4>(&vs[j * NV + tid], &cell_verts[(c + j * stride) * NV + tid]);
        async_wait();
        group_sync(grp);
        if (tid < XS && c < ncells) async_copy<8>(&xs[tid], &coords[(u64)vs[tid / DIM] * DIM + tid % DIM]);
    }
    // Waits for cell c's coordinates (buffer b) and issues the copies of the next two cells'; the
    // group's barrier between, which also ends the previous cell's reads of shared memory.
    __device__ __forceinline__ const double* start(int b, u64 c, u64 stride, u64 ncells, const u32* __restrict__ cell_verts,
                                                   const double* __restrict__ coords, int tid, int grp) {
        async_wait();
        group_sync(grp);
        const int o = b ^ 1;
        if (tid < XS && c + stride < ncells) async_copy<8>(&xs[o * XS + tid], &coords[(u64)vs[o * NV + tid / DIM] * DIM + tid % DIM]);
        if (tid < NV && c + 2 * stride < ncells) async_copy<4>(&vs[b * NV + tid], &cell_verts[(c + 2 * stride) * NV + tid]);
        return xs + b * XS;
    }
};

// jq[q] = sqrt(w_q |det J|)·J⁻¹ at every point q, by threads tid, tid + nthreads, … of the block.
// LEAD: point q < QCP by thread q·SPP, the first of the threads that stage it (stage_points), the
// rest by the others in turn — so the first pass may be staged behind a warp barrier, not a block's.
template <bool LEAD = false>
__device__ __forceinline__ void fill_jq(const double xv[NV][DIM], const double* __restrict__ tab, double* __restrict__ jq,
                                        int tid, int nthreads) {
    const bool lead = LEAD && tid < QCP * SPP && tid % SPP == 0;
    const int q0 = !LEAD ? tid : lead ? tid / SPP : QCP + tid - (tid / SPP + 1 < QCP ? tid / SPP + 1 : QCP);
    const int step = !LEAD ? nthreads : lead ? NQ : nthreads - QCP;
    for (int q = q0; q < NQ; q += step) {
        double inv[DIM][DIM], det;
        jacobian_at(xv, tab, q, inv, det);
        const double sw = sqrt(__ldg(&tab[TAB_W + q]) * fabs(det));
#pragma unroll
        for (int r = 0; r < DIM * DIM; ++r) jq[q * JQ + r] = sw * inv[r / DIM][r % DIM];
    }
}

// Names this warp's tiles of the round that starts at tile t0 (−1 past the last tile) and clears
// their accumulators.
__device__ __forceinline__ void round_tiles(int t0, int warp, Tile (&tl)[TPW], double (&acc)[TPW][DIM * DIM][4]) {
#pragma unroll
    for (int i = 0; i < TPW; ++i) {
        const int tt_ = t0 + warp * TPW + i;
        tl[i] = tt_ < NTILES ? tile_of(tt_) : Tile{};
#pragma unroll
        for (int m = 0; m < DIM * DIM; ++m) acc[i][m][0] = acc[i][m][1] = acc[i][m][2] = acc[i][m][3] = 0.0;
    }
}

// Writes this warp's finished tiles of the round; with SKIP_PARTS & 4 (sweep only) writes nothing
// but keeps the accumulators live, so the compiler keeps the multiplies. With DEFER_WRITES the
// first half tiles of tile 0 are only formed into the deferred slots `wd` (their stores drain
// during the next round: `Deferred`).
__device__ __forceinline__ void write_round(double* __restrict__ k, double* __restrict__ ws, double* __restrict__ wd, const double* p,
                                            const Tile (&tl)[TPW], const double (&acc)[TPW][DIM * DIM][4], const TileSigns (&sg)[TPW]) {
#pragma unroll
    for (int i = 0; i < TPW; ++i) {
        if (tl[i].r0 < 0) continue;
        if (SKIP_PARTS & 4) {
            double sum = 0.0;
#pragma unroll
            for (int m = 0; m < DIM * DIM; ++m) sum += acc[i][m][0] + acc[i][m][1] + acc[i][m][2] + acc[i][m][3];
            if (sum == 1.25e300) k[threadIdx.x] = sum;
        } else {
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                if (!half_tile_writes(tl[i], hh)) continue;
                if (i == 0 && hh < DEFER_WRITES) fill_half_tile(wd + hh * WR * WS, p, tl[i], hh, acc[i], sg[i]);
                else write_half_tile(k, ws, p, tl[i], hh, acc[i], sg[i]);
            }
        }
    }
    __syncwarp();
}

// SPLIT_MOMENTS: the two warps of the pair on tile `tl` swap, through the (then free) staging
// buffers `hbuf`, the moments each holds of the other's half tile, so warp hm ends with the nine
// moments of half tile hm in slots 0, 1 of `acc` (2, 3 constant zeros) and writes that half alone,
// as the one-row tile `half` with its signs `hs`: the forming and the stores split too.
__device__ __forceinline__ void split_swap(double* __restrict__ hbuf, int tw, int hm, int grp, const Tile& tl, const TileSigns& sg,
                                           const double (&part)[MSPLIT][4], double (&acc)[DIM * DIM][4], Tile& half, TileSigns& hs) {
    const int lane = threadIdx.x & 31;
    double* xb = hbuf + tw * XCHG;
    const int own = hm ? DIM * DIM - MSPLIT : MSPLIT;
#pragma unroll
    for (int j = 0; j < MSPLIT; ++j)
#pragma unroll
        for (int v = 0; v < 2; ++v)
            if (j < own) xb[hm * (XCHG / 2) + (2 * j + v) * 32 + lane] = hm ? part[j][v] : part[j][2 + v];
    group_sync(grp);
#pragma unroll
    for (int m = 0; m < DIM * DIM; ++m)
#pragma unroll
        for (int v = 0; v < 2; ++v) {
            const bool first = m < MSPLIT;  // a moment warp 0 holds
            const int j = first ? m : m - MSPLIT;
            if (first == (hm == 0)) acc[m][v] = hm ? part[first ? 0 : m - MSPLIT][2 + v] : part[first ? m : 0][v];  // constant indices
            else acc[m][v] = xb[(1 - hm) * (XCHG / 2) + (2 * j + v) * 32 + lane];
            acc[m][2 + v] = 0.0;
        }
    group_sync(grp);  // the swap is read before the image or the scratch go over it
    half = tl.r0 < 0 ? Tile{} : Tile{hm ? tl.r1 : tl.r0, -1, tl.c};
    hs = sg;
    hs.row[0] = hm ? sg.row[1] : sg.row[0];
    hs.row[1] = 0.0;
}

// The cell head both tiled bodies share: a warp's view of cell c (its matrix, its coefficients);
// `Round` names the warp's tiles of the round from tile t0, clears their accumulators and loads
// their signs.
struct TiledCell {
    double* k;
    double p[NPA];
    __device__ __forceinline__ TiledCell(double* __restrict__ out, const double* __restrict__ coef, const u64* __restrict__ meta, u64 c)
        : k(out + c * (PACKED ? (u64)NDP : (u64)NDD)) {
        passive_at(coef, meta, c, 0, p);
    }
    struct Round {
        double acc[TPW][DIM * DIM][4];
        Tile tl[TPW];
        TileSigns sg[TPW];
        __device__ __forceinline__ Round(int t0, int warp, const signed char* __restrict__ signs, int has_signs, u64 c) {
            round_tiles(t0, warp, tl, acc);
#pragma unroll
            for (int i = 0; i < TPW; ++i) sg[i] = tile_signs(tl[i], signs, has_signs, c);
        }
        // SPLIT_MOMENTS (one tile per warp pair): warp hm's half tile of tile `t`, from its moments `part`.
        __device__ __forceinline__ Round(double* __restrict__ hbuf, int tw, int hm, int grp, const Tile& t, const TileSigns& s,
                                         const double (&part)[MSPLIT][4]) {
            split_swap(hbuf, tw, hm, grp, t, s, part, acc[0], tl[0], sg[0]);
        }
    };
    // Writes the round's finished tiles through the warp's scratch `ws` (deferred ones into `wd`).
    __device__ __forceinline__ void write(double* __restrict__ ws, double* __restrict__ wd, const Round& r) const {
        write_round(k, ws, wd, p, r.tl, r.acc, r.sg);
    }
};

// ---- Wide writes (WIDE_WRITES): a round's tiles leave from a packed image in shared memory ------
// The warps form their finished half tiles into an image of the cell's packed upper triangle (the
// staging buffers, free after a round's last pass: entry (r, s) at packed_at(r, s) − lo), then the
// group stores the image's row segments over consecutive addresses — rows of packed storage follow
// one another, so a strip of 16 functions' rows is one contiguous range where the round holds all
// its tiles — as double2 stores by warps (1) or one bulk copy per row (2: cp.async.bulk, Hopper;
// the image then shares the segments' 16-byte phase, and the copies read it while the warps go on
// to the next round). Where a round's image does not fit (p = 5), its tiles go in consecutive
// groups, each the longest that fits. Tiles are unpaired, in order of 16-row strip A and column
// block B ≥ 2A (tile_of). With 4 (a copy per row, as 2) the image has a region of its own (IMAGE_DOUBLES, after the
// staging buffers), so the next round's staging and multiplies do not wait for the copies to read
// it: a round's first group waits only at its last pass's barrier, a round later (round 13).
constexpr int NBUF = NCHUNK > 1 || PIPE ? 2 : 1;      // one pass of points (p ≤ 2): one staging buffer (PIPE: two, a cell's and the next's)
// Gram tiles write through their image, never a warp's scratch: with more warps than 16 (round 19)
// the scratch would outgrow the staging buffers for nothing.
constexpr int SCRATCH_W = GRAM ? 0 : TILED_WARPS * WR * WS;
constexpr int HREGION_W = NBUF * HSIZE > SCRATCH_W ? NBUF * HSIZE : SCRATCH_W;
constexpr int HREGION = SPLIT_MOMENTS && ROUND_TILES * XCHG > HREGION_W ? ROUND_TILES * XCHG : HREGION_W;  // split pairs swap moments there
constexpr int IMAGE_CAP = (WIDE_WRITES == 4 ? IMAGE_DOUBLES : HREGION) - 1;  // one double left for the image's 16-byte phase
constexpr int min_i(int a, int b) { return a < b ? a : b; }
constexpr int max_i(int a, int b) { return a > b ? a : b; }
constexpr int packed_c(int r, int s) { return r * ND - r * (r - 1) / 2 + (s - r); }
// First packed entry of tile t (its strip's first row, from its column or the diagonal on).
constexpr int tile_lo(int t) {
    const Tile tl = tile_of(t);
    const int r0 = 2 * WR * (tl.r0 / 2);
    return packed_c(r0, max_i(r0, WR * tl.c));
}
// One past the last packed entry of tile t (its last row below ND holding a needed pair).
constexpr int tile_hi(int t) {
    const Tile tl = tile_of(t);
    const int ce = min_i(WR * (tl.c + 1), ND), last = min_i(min_i(2 * WR * (tl.r0 / 2 + 1), ND), ce) - 1;
    return packed_c(last, ce - 1) + 1;
}
constexpr bool every_tile_fits() {
    for (int t = 0; t < NTILES; ++t)
        if (tile_hi(t) - tile_lo(t) > IMAGE_CAP) return false;
    return true;
}
static_assert(!WIDE_WRITES || PIPE || every_tile_fits(), "wide writes: a tile's packed rows fit the image region (PIPE: the whole triangle, asserted below)");

// The bulk copies of WIDE_WRITES 2 (sm_90; earlier, plain stores): `bulk_wait_read` returns once
// this thread's copies have read their shared source, `bulk_wait_all` once they are complete.
__device__ __forceinline__ void bulk_store(double* dst, const double* src, unsigned bytes) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    const unsigned sh = (unsigned)__cvta_generic_to_shared(src);
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(sh), "r"(bytes) : "memory");
#else
    for (unsigned i = 0; i < bytes / 8; ++i) store_out(dst + i, src[i]);
#endif
}
__device__ __forceinline__ void bulk_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
__device__ __forceinline__ void bulk_wait_read() {
#if WIDE_WRITES >= 2 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
}
__device__ __forceinline__ void bulk_wait_all() {
#if WIDE_WRITES >= 2 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}
// Before a round's staging overwrites the staging buffers: where the image lives there (2, 3), its
// copies must have read it; an image of its own (4) is waited for at the last pass instead.
__device__ __forceinline__ void staging_wait_read() {
    if (WIDE_WRITES == 2 || WIDE_WRITES == 3) bulk_wait_read();
}
__device__ __forceinline__ void fence_async_shared() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// Calls f(e0, e1) for the packed ranges of tiles [g0, g1) that worker `who` of `workers` takes:
// each row's needed entries (rows numbered across the group's strips, dealt round-robin), or
// with WHOLE a strip the group holds wholly — its rows from the diagonal to the last column,
// contiguous in packed storage — as one range (WIDE_WRITES 3).
template <bool WHOLE, class F>
__device__ __forceinline__ void for_group_ranges(int g0, int g1, int who, int workers, F f) {
    const Tile first = tile_of(g0), last = tile_of(g1 - 1);
    const int a0 = first.r0 / 2, a1 = last.r0 / 2;
    int n = 0;  // ranges of earlier strips
    for (int A = a0; A <= a1; ++A) {
        const int bs = A == a0 ? first.c : 2 * A, be = A == a1 ? last.c : NB8 - 1;
        const int r0 = 2 * WR * A, ce = min_i(WR * (be + 1), ND), rend = min_i(min_i(r0 + 2 * WR, ND), ce);
        if (WHOLE && bs == 2 * A && ce == ND) {
            if (n % workers == who) f(packed_c(r0, r0), packed_c(rend - 1, ND - 1) + 1);
            ++n;
            continue;
        }
        for (int j = ((who - n) % workers + workers) % workers; r0 + j < rend; j += workers) {
            const int r = r0 + j;
            f(packed_c(r, max_i(r, WR * bs)), packed_c(r, ce));
        }
        n += rend - r0;
    }
}

// Calls f(e0, e1) for the strips of 16 functions' rows that worker `who` of `workers` takes (strip
// A by worker A mod workers), each from its diagonal to the last column: contiguous in packed
// storage, the whole triangle in N16 ranges whatever the tiles (the pipelined cells' image, paired
// or not; for unpaired tiles the ranges for_group_ranges<true> gives a cell's every tile).
template <class F>
__device__ __forceinline__ void for_strips(int who, int workers, F f, int a0 = 0, int a1 = N16) {
    for (int A = a0 + who; A < a1; A += workers) {
        const int r0 = 2 * WR * A, rend = min_i(r0 + 2 * WR, ND);
        f(packed_c(r0, r0), packed_c(rend - 1, ND - 1) + 1);
    }
}

// Packed entries [e0, e1) (a row's segment) from image `img` (entry e at img[e − lo]) to the
// cell's matrix `k`, by the warp's lanes: double2 stores where the address is 16-byte aligned (the
// image shares the phase), a double at either end where not.
__device__ __forceinline__ void store_segment(double* __restrict__ k, const double* __restrict__ img, int lo, int e0, int e1) {
    const int lane = threadIdx.x & 31, n = e1 - e0;
    double* dst = k + e0;
    const double* src = img + (e0 - lo);
    const int head = (int)((reinterpret_cast<u64>(dst) >> 3) & 1), pairs = (n - head) >> 1;
    if (head && lane == 0) store_out(dst, src[0]);
    if (((n - head) & 1) && lane == 31) store_out(dst + n - 1, src[n - 1]);
    double2* d2 = reinterpret_cast<double2*>(dst + head);
    const double2* s2 = reinterpret_cast<const double2*>(src + head);
    for (int j = lane; j < pairs; j += 32) {
#if STREAM_STORES
        __stcs(&d2[j], s2[j]);
#else
        d2[j] = s2[j];
#endif
    }
}

// Packed entries [e0, e1) — a row segment, or (WIDE_WRITES 3) a run of whole rows — as one bulk
// copy of its 16-byte-aligned middle, its ends stored by this thread.
__device__ __forceinline__ void send_range(double* __restrict__ k, const double* __restrict__ img, int lo, int e0, int e1) {
    const int n = e1 - e0;
    double* dst = k + e0;
    const double* src = img + (e0 - lo);
    const int head = (int)((reinterpret_cast<u64>(dst) >> 3) & 1), pairs = (n - head) >> 1;
    if (head) store_out(dst, src[0]);
    if ((n - head) & 1) store_out(dst + n - 1, src[n - 1]);
    if (pairs > 0) bulk_store(dst + head, src + head, 16u * (unsigned)pairs);
}

// The packed upper triangle of the warp's tile (accumulators `acc`, signs `sg`) into an image of the
// packed rows: entry e at img[e − lo] (the wide writes' image of a group of tiles, or with lo = 0
// the pipelined cells' whole triangle).
__device__ __forceinline__ void form_packed_image(double* __restrict__ img, int lo, const double* p, const Tile& tl,
                                                  const double (&acc)[DIM * DIM][4], const TileSigns& sg) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        if (!half_tile_writes(tl, hh)) continue;
        int a0 = 0, b0 = 0;
        half_tile_corner(tl, hh, a0, b0);
        const int rr0 = a0 * NCOMP, ss0 = b0 * NCOMP;
        form_half_tile(
            [&](int r, int col, double v) {
                const int rr = rr0 + r, ss = ss0 + col;
                if (rr < ND && ss < ND && ss >= rr) img[packed_c(rr, ss) - lo] = v;
            },
            p, tl, hh, acc, sg);
    }
}

// Writes the round of tiles from t0 (this warp's: tile t0 + warp, accumulators `acc`; a split pair's warps
// pass their tile's index and their own half tile as the tile) through
// packed images in the staging region `hbuf` of the group (every thread of the group calls it).
__device__ __forceinline__ void write_round_wide(double* __restrict__ k, double* __restrict__ hbuf, const double* p, int t0, int warp, int tid,
                                                 int grp, const Tile& tl, const double (&acc)[DIM * DIM][4], const TileSigns& sg) {
    const int tend = min_i(t0 + ROUND_TILES, NTILES), mine = t0 + warp;
    for (int g0 = t0, g1 = t0; g0 < tend; g0 = g1) {
        const int lo = tile_lo(g0);
        for (g1 = g0 + 1; g1 < tend && tile_hi(g1) - lo <= IMAGE_CAP; ++g1) {
        }
        // The image shares the matrix's 16-byte phase: entry e at img[e − lo].
        double* img = hbuf + (WIDE_WRITES == 4 ? HREGION : 0) + ((reinterpret_cast<u64>(k + lo) >> 3) & 1);
        if (g0 > t0) {
            bulk_wait_read();  // the previous group's copies have read the image
            group_sync(grp);   // and its stores
        }
        if (mine >= g0 && mine < g1) form_packed_image(img, lo, p, tl, acc, sg);
        if (WIDE_WRITES >= 2) fence_async_shared();  // the image is visible to the bulk copies
        group_sync(grp);
        if (WIDE_WRITES == 3) {
            for_group_ranges<true>(g0, g1, tid, TILED_THREADS, [&](int e0, int e1) { send_range(k, img, lo, e0, e1); });
            bulk_commit();
        } else if (WIDE_WRITES == 2 || WIDE_WRITES == 4) {  // 4: a copy per row, as 2, from the image region
            for_group_ranges<false>(g0, g1, tid, TILED_THREADS, [&](int e0, int e1) { send_range(k, img, lo, e0, e1); });
            bulk_commit();
        } else {
            for_group_ranges<false>(g0, g1, warp, TILED_WARPS, [&](int e0, int e1) { store_segment(k, img, lo, e0, e1); });
        }
    }
}

// ---- Pipelined cells (PIPE, round 14) and rounds (PIPE_ROUNDS, round 15) -----------------------
// A resident block's stream of passes runs through two staging buffers across rounds of tiles and
// cells: pass n is staged in buffer n & 1 while pass n − 1 multiplies the other. After a round's
// last pass, behind one barrier, the warps form the round's packed image — in a region of its own
// (IMAGE_DOUBLES: the longest round's packed rows and the 16-byte phase), or where a cell takes one
// pass and its triangle fits (p = 2), in the buffer that pass read — and stage the first pass of
// the next round (the cell's next, or the next cell's) into the free buffer, warp 0 loading the
// coordinates of the cell after next (their vertex ids loaded at the cell's head); behind a second
// barrier the image leaves by bulk copies (one per strip the round holds wholly, one per row
// segment of a strip it holds in part; one round a cell: the whole triangle by strips,
// `for_strips`), read while the next round multiplies and waited for only at that round's last
// pass. So a cell costs two barriers (one more per extra pass) and no dependent load chain at its
// head. The next cell's √(w|det J|) J⁻¹ table comes from coordinates loaded a cell ahead: formed
// under the cell's last pass (PIPE alone, round 14, and PIPE_ROUNDS 1: the last pass stages
// nothing, so the table is free, but beyond 32 functions jacobian_at inlined where the 36
// accumulators live spills at 128 registers), or with PIPE_ROUNDS 2 after the cell's image is
// formed (the accumulators dead), behind a third barrier before the next cell's first pass is
// staged. PIPE alone takes one round a cell (p = 2, 3; round 15 also paired tiles: their
// transposed half tiles go to their upper-triangle places in the image of the whole triangle, so
// nothing else depends on the walk); PIPE_ROUNDS several rounds and passes (p = 4, 5: 30 tiles on
// 16 warps at p = 5, 4 passes of 32 points at p = 4).
constexpr bool ONE_ROUND = NTILES <= ROUND_TILES;   // a cell's image is its whole triangle
constexpr bool JQ_LATE = PIPE_ROUNDS == 2;          // the next J⁻¹ table after the image, not in the last pass
static_assert(!PIPE || PIPE_ROUNDS || ONE_ROUND, "pipelined cells: one round of tiles a cell");
static_assert(!PIPE || IMAGE_DOUBLES > 0 || NCHUNK == 1, "pipelined cells: with several passes the image needs a region of its own");
static_assert(!PIPE || PIPE_ROUNDS || NDP + 1 <= (IMAGE_DOUBLES > 0 ? IMAGE_DOUBLES : HSIZE), "pipelined cells: the packed triangle fits the image");
constexpr int pipe_round_span() {
    int span = 0;
    for (int t0 = 0; t0 < NTILES; t0 += ROUND_TILES) span = max_i(span, tile_hi(min_i(t0 + ROUND_TILES, NTILES) - 1) - tile_lo(t0));
    return span;
}
static_assert(!PIPE_ROUNDS || (PIPE && PIPE_ROUNDS <= 2 && (GRAM || pipe_round_span() + 1 <= IMAGE_DOUBLES)),
              "pipelined rounds: PIPE's shape, each round's packed rows and their phase fit the image region");

// ---- Gram tiles (GRAM, round 16: trunk p = 4) --------------------------------------------------
// The nine moment GEMMs of 16-function row strips (p = 4: 16 tiles of 16 × 8 node pairs, 9 MMAs
// each a k-step, 144) pad 50 functions to 64 rows and compute all nine moments of the diagonal
// blocks and the wholly-lower halves of the diagonal tiles. As one Gram matrix G = HᵀH over the
// GN = DIM·NLOC (function, derivative) rows, the tiles of G's upper triangle are 100 (150 rows in
// 19 column blocks of 8 and 10 strips of 16; an MMA each a k-step): 31 % fewer MMAs, 7 tiles on 4
// warps and 6 on 12 (25 on each SM sub-partition, the warps' order), 28 accumulators a lane instead
// of 36. A warp's tiles are consecutive in strip order, so they share the A fragment within a
// strip. The image holds G's packed upper triangle first; behind a barrier a thread per node pair
// (a ≤ b) reads its nine moments and writes QF::block's entries in place — where NCOMP = DIM the
// pair's block of the matrix and its moments are the same nine (six for a = b) packed entries.
//
// GRAM_SPLIT (round 21, trunk p = 5: 210 tiles, too many accumulators for one round) takes two
// rounds a cell: the strips of the rows of functions [0, 16·GRAM_SPLIT) (a moment strip is three
// Gram strips, so a node's rows never straddle the rounds), then the rest's — p = 5: 138 tiles on
// strips 0–5 (9 a warp), then 72 on strips 6–13 (5). A round's rows are contiguous in packed
// storage and hold every moment of its node pairs (a ≤ b, a among its functions), so each round's
// image becomes its pairs' blocks and leaves as the moment strips it covers; the second round's
// passes stage only its own functions (no tile of it reads the first's rows).
//
// GRAM_SPLIT2 (round 22) cuts the second round again at 16·GRAM_SPLIT2 functions — p = 5: 78, 60
// and 72 tiles on strips 0–2, 3–5 and 6–13, 5 a warp (20 accumulators a lane, not 36: round 21's
// first round spilled at the 128-register cap), each round's passes staging its own functions on.
constexpr int GRAM_ROUNDS = GRAM_SPLIT ? (GRAM_SPLIT2 ? 3 : 2) : 1;
constexpr int gram_f0(int rd) { return rd == 0 ? 0 : rd == 1 ? 16 * GRAM_SPLIT : 16 * GRAM_SPLIT2; }  // a round's first function
constexpr int gram_f1(int rd) { return rd + 1 < GRAM_ROUNDS ? gram_f0(rd + 1) : NLOC; }                 // one past its last
constexpr int gram_tiles(int rd) {
    int n = 0;
    for (int t = DIM * gram_f0(rd) / 16; t < (gram_f1(rd) < NLOC ? DIM * gram_f1(rd) / 16 : GS16); ++t) n += GB8 > 2 * t ? GB8 - 2 * t : 0;
    return n;
}
constexpr int gram_lo(int rd) { return packed_c(DIM * gram_f0(rd), DIM * gram_f0(rd)); }       // a round's first packed entry
constexpr int gram_hi(int rd) { return gram_f1(rd) == NLOC ? NDP : gram_lo(rd + 1); }          // one past its last
constexpr int gram_most(int per_round(int), int per) {
    int m = 0;
    for (int rd = 0; rd < GRAM_ROUNDS; ++rd) m = max_i(m, (per_round(rd) + per - 1) / per);
    return m;
}
constexpr int gram_pairs(int rd) { return row_start(gram_f1(rd)) - row_start(gram_f0(rd)); }
constexpr int gram_span(int rd) { return gram_hi(rd) - gram_lo(rd); }
constexpr int GTPW = gram_most(gram_tiles, TILED_WARPS);     // a warp's tiles in a round, at most
constexpr int GPPT = gram_most(gram_pairs, TILED_THREADS);   // a thread's node pairs in a round, at most
static_assert(!GRAM || (PIPE_ROUNDS == 2 && NCOMP == DIM && PACKED && !PAIRED && (ONE_ROUND || GRAM_SPLIT) && gram_most(gram_span, 1) + 1 <= IMAGE_DOUBLES),
              "Gram tiles: pipelined rounds with the next J⁻¹ late, elasticity's blocks, packed, one round (or GRAM_SPLIT's two) and each round's rows in the image");
static_assert(!GRAM_SPLIT || (GRAM && 16 * GRAM_SPLIT < NLOC && !GRAM_OVERLAP && !GRAM_PAIRS && !GRAM_WIDE),
              "two rounds of Gram tiles: within the functions, the blocks in the cell's tail, strip order, plain passes");
static_assert(!GRAM_SPLIT2 || (GRAM_SPLIT && GRAM_SPLIT < GRAM_SPLIT2 && 16 * GRAM_SPLIT2 < NLOC), "three rounds of Gram tiles: two cuts within the functions, in order");
static_assert(!GRAM_PAIRS || GRAM, "strip-pair order: Gram tiles");
static_assert(!GRAM_UNROLL || GRAM, "unrolled k-steps: Gram tiles");
static_assert(!GRAM_DIAG || (GRAM && !GRAM_PAIRS), "diagonal B fragments from the A fragment: Gram tiles in strip order");
static_assert(!GRAM_ROWS || GRAM, "row bases of the tail's packed indices: Gram tiles");

// GRAM_PAIRS (round 18): tile t of G's upper triangle in strip-pair order — strips 2m and 2m + 1
// together: strip 2m's two columns that strip 2m + 1 lacks, then column by column (2m, c),
// (2m + 1, c) — so a warp's consecutive tiles share a B fragment in twos, and its A fragments of
// the two strips (held in two slots) serve all its columns. (A lone last strip: its columns.)
__device__ __forceinline__ void gram_pair_tile(int t, int& st, int& col) {
    for (int s0 = 0;; s0 += 2) {
        // Tiles of strips s0 and s0 + 1 (GB8 > 2·(GS16 − 1): every strip has one).
        const int n0 = GB8 - 2 * s0, n1 = s0 + 1 < GS16 ? GB8 - 2 * (s0 + 1) : 0;
        if (t < n0 + n1) {
            const int single = n0 - n1;
            if (t < single) {
                st = s0;
                col = 2 * s0 + t;
            } else {
                t -= single;
                st = s0 + (t & 1);
                col = 2 * s0 + single + (t >> 1);
            }
            return;
        }
        t -= n0 + n1;
    }
}

// The orientation signs' products loaded where a cell's blocks are formed, not at its head (no
// registers across the passes): GRAM_OVERLAP; FN_REGS, whose tail forms the scales' products there
// too (ptxas, p = 4: 0 B of stack against the default's 32).
constexpr bool SIGNS_LATE = GRAM_OVERLAP || FN_REGS >= 1;
// A warp's Gram tiles of a cell (strip st(i), column block col(i); none(i): no tile i) and their
// accumulators; the orientation signs' products of this thread's node pairs, loaded at the cell's head.
// UNIFORM_TILES (round 26): the warp index the tiles derive from is read from lane 0
// (tiled_pipelined), so the compiler knows them warp-uniform and holds them in uniform registers
// (ptxas, p = 4: FN_REGS 2 without spills, 124 registers against 128 and 48 B of stack). (Packed
// indices, one int a tile, also spill nothing there but take 256 more SASS instructions: not kept.)
// The tile fields are read through st/col/none/set, not directly: direct reads make NVVM compile
// other code (round 28, hex26-ptxas.sh's rows: 0–80 fewer SASS instructions, 2–5 more registers in
// four rows; benchmarks/h200/tidy28-direct-reads.sh) — a change to measure, not a tidy-up.
static_assert(!UNIFORM_TILES || (GRAM && PIPE), "warp-uniform tile indices: Gram tiles, pipelined cells");
struct GramRound {
    double acc[GTPW][4];
    int ts[GTPW], tc[GTPW];
    __device__ __forceinline__ bool none(int i) const { return ts[i] < 0; }
    __device__ __forceinline__ int st(int i) const { return ts[i]; }
    __device__ __forceinline__ int col(int i) const { return tc[i]; }
    __device__ __forceinline__ void set(int i, int s, int c) {
        ts[i] = s;
        tc[i] = c;
    }
    double sg[SIGNS_LATE ? 1 : GPPT];  // (not with SIGNS_LATE: loaded where the blocks are formed)
    // GRAM_PAIRS: bit i of `anew` — tile i loads its strip's A fragment (its slot, st(i) & 1, holds
    // another strip); of `bnew` — tile i loads its B fragment (not its predecessor's column).
    unsigned anew = 0u, bnew = 0u;
    int rd;  // the cell's round (GRAM_SPLIT)
    __device__ __forceinline__ GramRound(int round, int warp, const signed char* __restrict__ signs, int has_signs, u64 c) : rd(round) {
        const int tiles = gram_tiles(rd), base = tiles / TILED_WARPS, extra = tiles % TILED_WARPS;
        const int first = warp * base + min_i(warp, extra), count = base + (warp < extra ? 1 : 0);
#if GRAM_PAIRS
        int held0 = -1, held1 = -1;  // the strips whose A fragments slots 0 and 1 hold
#pragma unroll
        for (int i = 0; i < GTPW; ++i) {
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0;
            int st = -1, col = 0;
            if (i < count) gram_pair_tile(first + i, st, col);
            set(i, st, col);
            if (st < 0) continue;
            const bool odd = (st & 1) != 0;
            if ((odd ? held1 : held0) != st) {
                anew |= 1u << i;
                if (odd) held1 = st;
                else held0 = st;
            }
            if (i == 0 || this->col(i - 1) != col) bnew |= 1u << i;
        }
#else
        int st = DIM * gram_f0(rd) / 16, col = first;
        while (col >= GB8 - 2 * st) {
            col -= GB8 - 2 * st;
            ++st;
        }
        col += 2 * st;
#pragma unroll
        for (int i = 0; i < GTPW; ++i) {
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0;
            set(i, i < count ? st : -1, i < count ? col : 0);
            if (++col == GB8) col = 2 * ++st;
        }
#endif
#pragma unroll
        for (int j = 0; j < (SIGNS_LATE ? 0 : GPPT); ++j) {
            const int pi = row_start(gram_f0(rd)) + (int)threadIdx.x + j * TILED_THREADS, pend = row_start(gram_f1(rd));
            int a = 0, b = 0;
            if (pi < pend) upper_pair(pi, a, b);
            sg[j] = pi < pend ? sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b) : 0.0;
        }
    }
};

// Lane (g, t)'s first entry of the k-step at point kq in the staged pass `h` (gram_frag_a/b).
__device__ __forceinline__ const double* gram_lane(const double* __restrict__ h, int kq, int g, int t) {
    return GRAM_WIDE ? h + g * GPS + kq + KS * t : h + (kq + t) * GRS + g;
}
// The A fragment of G's strip s (rows 16s…16s + 15) and the B fragment of its column block c
// (columns 8c…8c + 7) from the k-step's entries `hk` (gram_lane): G = HᵀH, so both are H's
// entries; a[2j + hh] and b[j] at the MMA's k index t + 4j (mma16's fragments). GRAM_WIDE: from
// the transposed pass, k index t + 4j at point KS·t + j, KS/2 double2 loads a row.
__device__ __forceinline__ void gram_frag_a(const double* __restrict__ hk, int s, double (&fa)[2 * KS]) {
#if GRAM_WIDE
    const double* row = hk + 16 * s * GPS;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh)
#pragma unroll
        for (int u = 0; u < KS / 2; ++u) {
            const double2 v = *reinterpret_cast<const double2*>(row + 8 * hh * GPS + 2 * u);
            fa[4 * u + hh] = v.x;
            fa[4 * u + 2 + hh] = v.y;
        }
#else
#pragma unroll
    for (int j = 0; j < 2 * KS; ++j) fa[j] = hk[4 * (j / 2) * GRS + 16 * s + 8 * (j % 2)];
#endif
}
__device__ __forceinline__ void gram_frag_b(const double* __restrict__ hk, int c, double (&fb)[KS]) {
#if GRAM_WIDE
    const double* row = hk + 8 * c * GPS;
#pragma unroll
    for (int u = 0; u < KS / 2; ++u) {
        const double2 v = *reinterpret_cast<const double2*>(row + 2 * u);
        fb[2 * u] = v.x;
        fb[2 * u + 1] = v.y;
    }
#else
#pragma unroll
    for (int j = 0; j < KS; ++j) fb[j] = hk[4 * j * GRS + 8 * c];
#endif
}

// GRAM_DIAG (round 20): the B fragment of column block 2s + hh (hh = 0, 1) from strip s's A
// fragment `fa`. Both fragments are entries of H (G = HᵀH): b[j] = H[k_j][8(2s + hh) + g] is
// a[2j + hh] = H[k_j][16s + 8hh + g] at the same k index k_j = t + 4j in either staging layout
// (gram_frag_a/b), so a strip's two diagonal tiles load no B fragment (20 of p = 4's 100 tiles).
__device__ __forceinline__ void gram_diag_b(const double (&fa)[2 * KS], int hh, double (&fb)[KS]) {
#pragma unroll
    for (int j = 0; j < KS; ++j) fb[j] = hh == 0 ? fa[2 * j] : fa[2 * j + 1];
}

// One pass of QCP points: the warp's Gram tiles accumulate HᵀH over the staged buffer `h`. A
// warp's tiles in strip order share the A fragment within a strip; in strip-pair order
// (GRAM_PAIRS) two A fragments, one a strip parity, and B fragments of consecutive tiles.
__device__ __forceinline__ void multiply_round(const double* __restrict__ h, GramRound& r) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#if GRAM_UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int kq = 0; kq < QCP; kq += MMA_K) {
        const double* hk = gram_lane(h, kq, g, t);
        double fa[GRAM_PAIRS ? 2 : 1][2 * KS] = {}, held[KS] = {};  // held: GRAM_PAIRS's B fragment across tiles
#pragma unroll
        for (int i = 0; i < GTPW; ++i) {
            if (r.none(i)) continue;
            const bool odd = GRAM_PAIRS && (r.st(i) & 1) != 0;
            if (GRAM_PAIRS ? ((r.anew >> i) & 1u) != 0 : i == 0 || r.st(i) != r.st(i - 1)) {
                if (odd) gram_frag_a(hk, r.st(i), fa[GRAM_PAIRS ? 1 : 0]);
                else gram_frag_a(hk, r.st(i), fa[0]);
            }
            double fb[KS];
            // GRAM_DIAG: column block 2s + hh of strip s is half hh of the strip's A fragment
            // (gram_diag_b); a warp's first tile of a strip holds that strip's A fragment.
            const int hh = r.col(i) - 2 * r.st(i);
            if (GRAM_PAIRS) {
                if ((r.bnew >> i) & 1u) gram_frag_b(hk, r.col(i), held);
#pragma unroll
                for (int j = 0; j < KS; ++j) fb[j] = held[j];
            } else if (GRAM_DIAG && hh < 2) {
                gram_diag_b(fa[0], hh, fb);
            } else {
                gram_frag_b(hk, r.col(i), fb);
            }
            if (odd) mma16<KS>(r.acc[i], fa[GRAM_PAIRS ? 1 : 0], fb);
            else mma16<KS>(r.acc[i], fa[0], fb);
        }
    }
}
__device__ __forceinline__ void multiply_round(const double* __restrict__ h, TiledCell::Round& r) { multiply_pass(h, r.tl, r.acc); }

// The sum of a round's accumulators: SKIP_PARTS & 4 (sweep only) stores it where it cannot land,
// so the compiler keeps the multiplies.
__device__ __forceinline__ double round_sum(const GramRound& r) {
    double sum = 0.0;
#pragma unroll
    for (int i = 0; i < GTPW; ++i) sum += r.acc[i][0] + r.acc[i][1] + r.acc[i][2] + r.acc[i][3];
    return sum;
}
__device__ __forceinline__ double round_sum(const TiledCell::Round& r) {
    double sum = 0.0;
#pragma unroll
    for (int m = 0; m < DIM * DIM; ++m) sum += r.acc[0][m][0] + r.acc[0][m][1] + r.acc[0][m][2] + r.acc[0][m][3];
    return sum;
}

// GRAM_ROWS (round 23): packed entry (r, s), r ≤ s, is gram_row(r) + s — the tail forms each
// row's base once (a tile's two rows, a node pair's three) instead of packed_c's products for
// every entry (the lead's round-23 profile of p = 4: the image's and the blocks' index
// arithmetic about a sixth of the kernel's instructions).
__device__ __forceinline__ int gram_row(int r) { return r * ND - r * (r - 1) / 2 - r; }

// A round's tiles into the image (entry e at img[e − lo]): G's upper triangle from the Gram tiles
// (lane (g, t) holds G[16·ts + g + 8(v/2)][8·tc + 2t + v%2] in slot v), the matrix's from a tile.
__device__ __forceinline__ void form_round_image(double* __restrict__ img, int lo, const double*, const GramRound& r) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < GTPW; ++i) {
        if (r.none(i)) continue;
#pragma unroll
        for (int hv = 0; hv < 2; ++hv) {
            const int rr = 16 * r.st(i) + g + 8 * hv, rb = GRAM_ROWS ? gram_row(rr) - lo : 0;
#pragma unroll
            for (int w = 0; w < 2; ++w) {
                const int ss = 8 * r.col(i) + 2 * t + w;
                if (rr <= ss && ss < GN) img[GRAM_ROWS ? rb + ss : packed_c(rr, ss) - lo] = r.acc[i][2 * hv + w];
            }
        }
    }
}
__device__ __forceinline__ void form_round_image(double* __restrict__ img, int lo, const double* p, const TiledCell::Round& r) {
    if (r.tl[0].r0 >= 0) form_packed_image(img, lo, p, r.tl[0], r.acc[0], r.sg[0]);
}

// After the image's barrier: with Gram tiles, each of this thread's node pairs (a, b), a ≤ b (pair
// tid + j·TILED_THREADS), turns its moments M_kl = G[DIM·a + k][DIM·b + l] (G[DIM·a + l][DIM·a + k]
// below the diagonal where a = b) into its block signed by sign(j, a, b), in place.
// (GRAM_OVERLAP: the pairs [p0, p1) only, one at a time — fewer registers beside the accumulators.)
static_assert(!PAIR_CLASSES || (GRAM && GRAM_ROUNDS == 1 && SIGNS_LATE && !GRAM_OVERLAP && PIPE && CELLS == 1 && DIM == 3 && NLOC >= 16 && NLOC < 256),
              "the tail's pairs by classes of rows: one round of Gram tiles, the signs read in the tail (FN_REGS), the blocks in the cell's tail, byte node indices");
constexpr int GPPT_B = PAIR_CLASSES ? (PC_SLOTS + TILED_THREADS - 1) / TILED_THREADS : GPPT;  // a thread's pair slots in the tail
// PAIR_CLASSES: pair a | b << 8 of slot s (0xffff: none), as the comment at PC_SLOTS orders them;
// the table (pair_slots) is filled once a block.
__device__ __forceinline__ u32 gram_pair_slot(int s) {
    int h = s >> 4;
    const int c = s & 15;
#pragma unroll
    for (int a0 = 0; a0 < 16 && a0 < NLOC; ++a0) {
        const int n = pc_halves(a0);
        if (h < n) {
            for (int j = 0; a0 + 16 * j < NLOC; ++j) {
                const int lo = a0 + 16 * j, t = (c - 8 * j) & 15, run = pc_run(lo, t);
                if (h < run) return (u32)lo | (u32)(pc_first(lo, t) + 16 * h) << 8;
                h -= run;
            }
            return 0xffffu;
        }
        h -= n;
    }
    return 0xffffu;
}
extern __shared__ double pair_smem[];  // the block's dynamic shared memory (matrices_tiled's smem)
__device__ __forceinline__ unsigned short* pair_slots() { return reinterpret_cast<unsigned short*>(pair_smem + TT_DOUBLES - PC_DOUBLES); }
template <class Sign>
__device__ __forceinline__ void gram_blocks(double* __restrict__ img, int lo, const double* p, int tid, Sign sign, int p0 = 0, int p1 = NPAIRS) {
#pragma unroll (GRAM_OVERLAP ? 1 : GPPT_B)
    for (int j = 0; j < GPPT_B; ++j) {
        int a, b;
        if (PAIR_CLASSES) {
            const int s = tid + j * TILED_THREADS;
            if (s >= PC_SLOTS) break;
            const u32 e = pair_slots()[s];
            if (e == 0xffffu) continue;
            a = (int)(e & 255u);
            b = (int)(e >> 8);
        } else {
            const int pi = p0 + tid + j * TILED_THREADS;
            if (pi >= p1) break;
            upper_pair(pi, a, b);
        }
        const double sg = sign(j, a, b);
        // GRAM_ROWS: the bases of node a's rows (below the diagonal, where a = b, row DIM·a + l's).
        int rb[DIM];
#pragma unroll
        for (int k = 0; k < DIM; ++k) rb[k] = GRAM_ROWS ? gram_row(DIM * a + k) - lo : 0;
        MomentPair mp;
#pragma unroll
        for (int m = 0; m < DIM * DIM; ++m) {
            const int rr = DIM * a + m / DIM, ss = DIM * b + m % DIM;
            if (PAIR_CLASSES) {
                // Below the diagonal (a = b, k > l) the moment is the transposed one, read already
                // (the same entry); the load still issues, at (rr, ss)'s place in the packed rows
                // (inside the image, lo = 0), on its colour's bank pair: no conflict.
                const double v = img[GRAM_ROWS ? rb[m / DIM] + ss : packed_c(rr, ss) - lo];
                mp.m[m] = rr <= ss ? v : mp.m[(m % DIM) * DIM + m / DIM];
            } else {
                mp.m[m] = img[GRAM_ROWS ? (rr <= ss ? rb[m / DIM] + ss : rb[m % DIM] + rr) : (rr <= ss ? packed_c(rr, ss) : packed_c(ss, rr)) - lo];
            }
        }
        double e[NCOMP][NCOMP] = {};
        QF::template block<DIM, NCOMP>(p, mp, e);
#pragma unroll
        for (int i = 0; i < NCOMP; ++i)
#pragma unroll
            for (int jj = 0; jj < NCOMP; ++jj) {
                const int rr = NCOMP * a + i, ss = NCOMP * b + jj;
                if (rr <= ss) img[GRAM_ROWS ? rb[i] + ss : packed_c(rr, ss) - lo] = sg * e[i][jj];
            }
    }
}
// Cell c's blocks of the round's node pairs (image entry e at img[e − lo]), signed by the products
// loaded at its head (GRAM_OVERLAP: loaded here, as the blocks a cell later are); a tile's image is
// final already. FN_REGS: the passes staged the functions unscaled, so G's entries of the pair
// (a, b) lack c_a c_b — the scales `sc` join the sign product here (one product a pair, not a
// scale load an entry and pass).
__device__ __forceinline__ void finish_round_image(double* __restrict__ img, int lo, const double* p, const GramRound& r, int tid,
                                                  const signed char* __restrict__ signs, int has_signs, u64 c, const double* __restrict__ sc) {
    gram_blocks(
        img, lo, p, tid,
        [&](int j, int a, int b) {
            const double s = SIGNS_LATE ? sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b) : r.sg[j];
            return FN_REGS ? s * (sc[a] * sc[b]) : s;
        },
        row_start(gram_f0(r.rd)), row_start(gram_f1(r.rd)));
}
__device__ __forceinline__ void finish_round_image(double*, int, const double*, const TiledCell::Round&, int, const signed char*, int, u64, const double*) {}

template <bool G, class A, class B>
struct pick_type {
    using type = A;
};
template <class A, class B>
struct pick_type<false, A, B> {
    using type = B;
};
using PipeRound = typename pick_type<GRAM != 0, GramRound, TiledCell::Round>::type;
constexpr int PIPE_NROUNDS = GRAM ? GRAM_ROUNDS : (NTILES + ROUND_TILES - 1) / ROUND_TILES;  // a cell's rounds of tiles

// GRAM_OVERLAP (round 17): cell c's Gram image — the whole packed triangle, at the phase of c's
// matrix in the image region — turned into c's signed blocks in place by this thread's node pairs
// while the next cell's first pass multiplies (the previous body's lone phase between two
// barriers), then sent by strips at the second pass; with GRAM_SPREAD the first GSPLIT strips'
// blocks (a strip's pairs are consecutive) in the first pass and sent at the second, the rest's in
// the second and sent at the third — about half the pairs a pass (p = 4: 680 and 595). Measured
// 6–12 % slower than the blocks in the cell's tail (H200, round 17): opt-in sweep shapes.
constexpr int gram_split() {
    int s = 0;
    while (GRAM_SPREAD && s < N16 && 2 * row_start(min_i(16 * s, NLOC)) < NPAIRS) ++s;
    return GRAM_SPREAD ? s : N16;
}
constexpr int GSPLIT = gram_split();
static_assert(!GRAM_OVERLAP || (GRAM && GRAM_OVERLAP <= 3 && NCHUNK >= (GRAM_SPREAD ? 3 : 2) && SPP <= 32 && 32 % SPP == 0),
              "overlapped Gram blocks: Gram tiles, a pass a cell for each part of the blocks and one more, a point's staging threads within one warp");
static_assert(!GRAM_SPREAD || GRAM_OVERLAP, "spread Gram blocks: overlapped");
static_assert(!GRAM_EARLY_WAIT || (GRAM && GRAM_ROUNDS == 1 && !GRAM_OVERLAP && JQ_LATE && IMAGE_DOUBLES > 0 && NCHUNK >= 2),
              "early copy wait: Gram tiles in one round a cell, the blocks in its tail, the next J⁻¹ table after the image, the image in its own region, two passes or more");
__device__ __forceinline__ double* gram_image(double* __restrict__ hbuf, const double* k) {
    return hbuf + 2 * HSIZE + ((reinterpret_cast<u64>(k) >> 3) & 1);
}
// Part `part` (0: the first GSPLIT strips, 1: the rest) of cell c's blocks, from its image.
__device__ __forceinline__ void prev_blocks(double* __restrict__ out, const double* __restrict__ coef, const u64* __restrict__ meta,
                                            const signed char* __restrict__ signs, int has_signs, double* __restrict__ hbuf, u64 c, int tid,
                                            int part) {
    const TiledCell cell(out, coef, meta, c);
    const int split = row_start(min_i(16 * GSPLIT, NLOC));
    gram_blocks(
        gram_image(hbuf, cell.k), 0, cell.p, tid,
        [&](int, int a, int b) { return sign_of(signs, has_signs, c, a) * sign_of(signs, has_signs, c, b); }, part == 0 ? 0 : split,
        part == 0 ? split : NPAIRS);
}
// Part `part`'s strips of cell c's matrix from its image, by bulk copies.
__device__ __forceinline__ void send_gram_image(double* __restrict__ out, double* __restrict__ hbuf, u64 c, int tid, int part) {
    double* k = out + c * (u64)NDP;
    const double* img = gram_image(hbuf, k);
    for_strips(tid, TILED_THREADS, [&](int e0, int e1) { send_range(k, img, 0, e0, e1); }, part == 0 ? 0 : GSPLIT, part == 0 ? GSPLIT : N16);
    bulk_commit();
}


__device__ __forceinline__ void tiled_pipelined(u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                                                const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
                                                const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out,
                                                const double* __restrict__ ts, const u32* __restrict__ tis, double* __restrict__ jq,
                                                double* __restrict__ xn, double* __restrict__ hbuf, int tid, int warp) {
    const u64 stride = gridDim.x;
    u64 c = blockIdx.x;
    if (c >= ncells) return;
    const int lane = tid & 31;
    // UNIFORM_TILES: the warp index from lane 0 — the same value, but the compiler now knows it
    // warp-uniform, and so the Gram tiles' indices (GramRound) and the warp's branches.
    if (UNIFORM_TILES) warp = __shfl_sync(0xffffffffu, warp, 0);
    // The block's first cell: its coordinates and J⁻¹ table, the next cell's coordinates (xn), its first pass.
    {
        double xv[NV][DIM];
        load_cell_coords(c, cell_verts, coords, xv);
        if (tid < NV * DIM && c + stride < ncells)
            xn[tid] = __ldg(&coords[(u64)__ldg(&cell_verts[(c + stride) * NV + tid / DIM]) * DIM + tid % DIM]);
        fill_jq(xv, tab, jq, tid, TILED_THREADS);
    }
    __syncthreads();  // jq, xn and the factor tables are in place
    const FnRegs fr = fn_regs(tis, tid);  // (FN_REGS: this thread's functions' offsets, for every pass)
    if (!(SKIP_PARTS & 1)) stage_points(tab, jq, ts, tis, 0, hbuf, tid, 0, fr);
    __syncthreads();
    // ALT_ORDER 1: odd warps multiply first. A warp issues on SM sub-partition warp % 4 and uses
    // its tensor core, so at 16 warps all four of a sub-partition share that order and its tensor
    // core idles while they stage; 2 (round 23): bit 2 of the warp, two of each sub-partition's four
    // multiply while the other two stage.
    const bool mma_first = ALT_ORDER == 2 ? ((warp >> 2) & 1) != 0 : ALT_ORDER && (warp & 1);
    // GRAM_OVERLAP: whether the warp forms the previous cell's blocks after its first multiplies
    // (1: warps 4–7 and 12–15, half of each SM sub-partition's; 2: where it stages after them; 3:
    // none, every warp before — no accumulator live across the blocks, fewer spills).
    const bool blocks_late = GRAM_OVERLAP == 1 ? ((warp >> 2) & 1) != 0 : GRAM_OVERLAP == 2 && mma_first;
    int n = 0;  // passes so far
    for (; c < ncells; c += stride) {
        const bool next = c + stride < ncells, after = c + 2 * stride < ncells;
        // GRAM_OVERLAP: every cell but the block's last leaves its Gram image to the next cell.
        const bool pending = GRAM_OVERLAP && c != blockIdx.x && !(SKIP_PARTS & 4);
        // Lanes < NV of warp 0: the vertex ids of the cell after next, used once this cell multiplied.
        const u32 vid2 = warp == 0 && tid < NV && after ? __ldg(&cell_verts[(c + 2 * stride) * NV + tid]) : 0u;
        const TiledCell cell(out, coef, meta, c);
        // SIGNS_LATE (FN_REGS): the cell's signs, read in its tail, brought into L1 at its head (the
        // first and last byte: NLOC ≤ 128 bytes span at most two lines), so the tail waits on no DRAM load.
        if (SIGNS_LATE && !GRAM_OVERLAP && has_signs && tid < 2) asm volatile("prefetch.global.L1 [%0];" ::"l"(signs + c * NLOC + tid * (NLOC - 1)));
#pragma unroll 1
        for (int rd = 0; rd < PIPE_NROUNDS; ++rd) {
            const int t0 = rd * ROUND_TILES;
            const bool final_round = rd + 1 == PIPE_NROUNDS;
            // GRAM_SPLIT: this round's passes stage its own functions; the pass after its image is the
            // next round's (the next cell's first).
            const int a_this = GRAM ? gram_f0(rd) : 0, a_next = GRAM && !final_round ? gram_f0(rd + 1) : 0;
            PipeRound r(GRAM ? rd : t0, warp, signs, has_signs, c);
#pragma unroll 1
            for (int ch = 0; ch < NCHUNK; ++ch, ++n) {
                const bool last = ch + 1 == NCHUNK;
                const double* cur = hbuf + (n & 1) * HSIZE;
                double* nb = hbuf + ((n + 1) & 1) * HSIZE;
                const bool stage = !last && !(SKIP_PARTS & 1);
                // GRAM_OVERLAP: the previous cell's image (whole since the barrier before this cell's
                // first pass) becomes its blocks in this first pass (GRAM_SPREAD: the first two),
                // beside the multiplies, each part leaving a pass later; the copies are waited for
                // at the last pass.
                const bool blocks = pending && t0 == 0 && (ch == 0 || (GRAM_SPREAD && ch == 1));
                if (pending && t0 == 0 && (ch == 1 || (GRAM_SPREAD && ch == 2))) send_gram_image(out, hbuf, c - stride, tid, ch - 1);
                if (stage && !mma_first) stage_points(tab, jq, ts, tis, (ch + 1) * QCP, nb, tid, a_this, fr);
                if (blocks && !blocks_late) prev_blocks(out, coef, meta, signs, has_signs, hbuf, c - stride, tid, ch);
                if (!JQ_LATE && last && final_round && next) fill_jq(reinterpret_cast<const double(*)[DIM]>(xn), tab, jq, tid, TILED_THREADS);
                if (!(SKIP_PARTS & 2)) multiply_round(cur, r);
                if (stage && mma_first) stage_points(tab, jq, ts, tis, (ch + 1) * QCP, nb, tid, a_this, fr);
                if (blocks && blocks_late) prev_blocks(out, coef, meta, signs, has_signs, hbuf, c - stride, tid, ch);
                if (blocks) fence_async_shared();  // the blocks are visible to the next pass's bulk copies
                // The previous round's copies have read the image (and the buffer it lay in). GRAM_EARLY_WAIT:
                // waited for at the pass before the last, whose barrier makes that block-wide, so
                // the last pass needs none — it stages nothing, and the image region and jq that a
                // warp writes next no warp still in it reads; a warp's tiles go to the image as soon
                // as its multiplies end (16 warps of 6 or 7 tiles: the early ones no longer wait).
                if (GRAM_EARLY_WAIT ? ch + 2 == NCHUNK : last) bulk_wait_read();
                if (!(GRAM_EARLY_WAIT && last)) __syncthreads();
            }
            double x2 = 0.0;  // warp 0, lane i: coordinate i % DIM of vertex i / DIM of the cell after next
            if (final_round && warp == 0 && after) {
                const u32 vid = __shfl_sync(0xffffffffu, vid2, lane < NV * DIM ? lane / DIM : 0);
                if (lane < NV * DIM) x2 = __ldg(&coords[(u64)vid * DIM + lane % DIM]);
            }
            // Pass n − 1 (the round's last) read buffer (n − 1) & 1: the image goes there (or to its
            // own region), the next round's first pass to buffer n & 1, both free.
            const int lo = GRAM ? gram_lo(rd) : ONE_ROUND ? 0 : tile_lo(t0), tend = min_i(t0 + ROUND_TILES, NTILES);
            double* img = (IMAGE_DOUBLES > 0 ? hbuf + 2 * HSIZE : hbuf + ((n - 1) & 1) * HSIZE) + ((reinterpret_cast<u64>(cell.k + lo) >> 3) & 1);
            if (SKIP_PARTS & 4) {
                const double sum = round_sum(r);
                if (sum == 1.25e300) cell.k[threadIdx.x] = sum;
            } else {
                form_round_image(img, lo, cell.p, r);
            }
            // GRAM_OVERLAP with a next cell: its blocks in the next cell's first pass, and no barrier
            // here — the next J⁻¹ table's first QCP points come from the threads that stage them
            // (fill_jq's LEAD), and xn is rewritten only behind the next barrier.
            const bool defer = GRAM_OVERLAP && final_round && next;
            if (JQ_LATE && final_round) {
                if (next) fill_jq<GRAM_OVERLAP != 0>(reinterpret_cast<const double(*)[DIM]>(xn), tab, jq, tid, TILED_THREADS);  // the next cell's
                if (defer) __syncwarp();
                else __syncthreads();  // its table is written, xn read; (GRAM) the image is whole
            } else if (GRAM) {
                __syncthreads();  // (GRAM_SPLIT's first round) the round's Gram image is whole before its blocks read it
            }
            if (!defer && !(SKIP_PARTS & 4)) finish_round_image(img, lo, cell.p, r, tid, signs, has_signs, c, ts + TT_REALS - NPAD);
            if ((!final_round || next) && !(SKIP_PARTS & 1)) stage_points(tab, jq, ts, tis, 0, hbuf + (n & 1) * HSIZE, tid, a_next, fr);
            if (!defer && final_round && warp == 0 && after && lane < NV * DIM) xn[lane] = x2;
            fence_async_shared();  // the image is visible to the bulk copies
            __syncthreads();
            if (defer) {
                if (warp == 0 && after && lane < NV * DIM) xn[lane] = x2;
            } else if (!(SKIP_PARTS & 4)) {
                // (Gram tiles: the moment strips of the round's functions, GRAM_SPLIT's a multiple of 16.)
                if (GRAM) for_strips(tid, TILED_THREADS, [&](int e0, int e1) { send_range(cell.k, img, lo, e0, e1); }, gram_f0(rd) / 16, (gram_f1(rd) + 15) / 16);
                else if (ONE_ROUND) for_strips(tid, TILED_THREADS, [&](int e0, int e1) { send_range(cell.k, img, 0, e0, e1); });
                else for_group_ranges<true>(t0, tend, tid, TILED_THREADS, [&](int e0, int e1) { send_range(cell.k, img, lo, e0, e1); });
                bulk_commit();
            }
        }
    }
    bulk_wait_all();
}

// Warp-specialised body (PRODUCERS > 0): PRODUCERS warps compute each cell's J⁻¹ table and stage
// every pass of points into the two buffers in turn, running up to two passes ahead; the
// TILED_WARPS warps multiply each buffer once it is full and write their tiles through their own
// scratch (not the staging buffers), so staging overlaps the multiplies and the writes, with no
// block-wide barrier. Both sides walk the same (cell, round, pass) sequence.
__device__ __forceinline__ void tiled_specialised(u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
                                                  const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
                                                  const double* __restrict__ coef, const u64* __restrict__ meta, double* __restrict__ out,
                                                  const double* __restrict__ ts, const u32* __restrict__ tis, double* __restrict__ jq,
                                                  double* __restrict__ hbuf, double* __restrict__ scratch) {
    const int warp = threadIdx.x >> 5;
    int n = 0;  // passes so far
    if (warp >= TILED_WARPS) {
        const int tid = threadIdx.x - TILED_THREADS;
        for (u64 c = blockIdx.x; c < ncells; c += gridDim.x) {
            double xv[NV][DIM];
            load_cell_coords(c, cell_verts, coords, xv);
            bar_sync(5, STAGE_THREADS);  // every producer is done with the previous cell's jq
            fill_jq(xv, tab, jq, tid, STAGE_THREADS);
            bar_sync(5, STAGE_THREADS);
            for (int t0 = 0; t0 < NTILES; t0 += TILED_WARPS * TPW) {
#pragma unroll 1
                for (int ch = 0; ch < NCHUNK; ++ch, ++n) {
                    const int b = n & 1;
                    if (n >= 2) bar_sync(3 + b, BLOCK_THREADS);  // the multiplies of pass n − 2 have read buffer b
                    if (!(SKIP_PARTS & 1)) stage_points(tab, jq, ts, tis, ch * QCP, hbuf + b * HSIZE, tid);
                    __syncwarp();
                    bar_arrive(1 + b, BLOCK_THREADS);
                }
            }
        }
        // Match the multiplying warps' arrivals after the last two passes.
        for (int m = n - 2 < 0 ? 0 : n - 2; m < n; ++m) bar_sync(3 + (m & 1), BLOCK_THREADS);
        return;
    }
    double* ws = scratch + warp * (WR * WS);
    for (u64 c = blockIdx.x; c < ncells; c += gridDim.x) {
        const TiledCell cell(out, coef, meta, c);
        for (int t0 = 0; t0 < NTILES; t0 += TILED_WARPS * TPW) {
            TiledCell::Round r(t0, warp, signs, has_signs, c);
#pragma unroll 1
            for (int ch = 0; ch < NCHUNK; ++ch, ++n) {
                const int b = n & 1;
                bar_sync(1 + b, BLOCK_THREADS);
                if (!(SKIP_PARTS & 2)) multiply_pass(hbuf + b * HSIZE, r.tl, r.acc);
                __syncwarp();
                bar_arrive(3 + b, BLOCK_THREADS);
            }
            cell.write(ws, nullptr, r);
        }
    }
}

// FN_TABLES: the per-function tables (TT_REALS' layout) from the global factor tables `tt`
// (val | der | scale, tensor_tables.rs) and function ids `ti` (after the NQ point ids), once a block.
__device__ __forceinline__ void fn_tables_fill(double* __restrict__ ts, const double* __restrict__ tt, const u32* __restrict__ ti) {
    const auto factor = [&](int der, int axis, int a, int i) {
        const int f = (int)((__ldg(&ti[NQ + a]) >> (8 * axis)) & 255u);
        return __ldg(&tt[der * TG_VAL + (axis * TNF + f) * TN1 + i]) * (axis == 0 ? __ldg(&tt[2 * TG_VAL + a]) : 1.0);
    };
    if (FN_TABLES == 1) {
        // ts[der·TT_VAL + (axis·NLOC + a)·TN1 + i]
        for (int e = threadIdx.x; e < 2 * TT_VAL; e += blockDim.x) {
            const int der = e / TT_VAL, axis = e % TT_VAL / (NLOC * TN1), a = e % (NLOC * TN1) / TN1, i = e % TN1;
            ts[e] = factor(der, axis, a, i);
        }
    } else {
        for (int e = threadIdx.x; e < 2 * TT_FNX; e += blockDim.x) ts[e] = factor(e / TT_FNX, 0, e % TT_FNX / TN1, e % TN1);
        // Plane k (0: g h, 1: g'h, 2: g h') of function a at (j, l): ts[2·TT_FNX + (k·NLOC + a)·TT_PLANE + j + TN1·l].
        for (int e = threadIdx.x; e < 3 * NLOC * TT_PLANE; e += blockDim.x) {
            const int k = e / (NLOC * TT_PLANE), a = e % (NLOC * TT_PLANE) / TT_PLANE, j = e % TN1, l = e % TT_PLANE / TN1;
            ts[2 * TT_FNX + e] = factor(k == 1, 1, a, j) * factor(k == 2, 2, a, l);
        }
    }
}

// Dynamic shared memory: the factor tables (TENSOR, TT_DOUBLES), then per cell group (CELLS) a
// region of GROUP_DOUBLES: jq[NQ][JQ] | (PREFETCH) coordinates xs[2][NV·DIM], vertex ids vs[2][NV] |
// h[2][DIM][QCP][RS] (h[1][…] where the points take one pass), the last reused after a round's last pass as TILED_WARPS scratch tiles of
// WR × WS (the host allocates the larger of the two: HREGION); with PRODUCERS the scratch follows
// h, both allocated; with DEFER_WRITES each warp's DEFER_WRITES deferred slots of WR × WS follow
// HREGION, with WIDE_WRITES 4 the image region of IMAGE_DOUBLES. `tt`, `ti`: the factor tables
// in global memory (unused without TENSOR).
constexpr int JQR = (NQ * JQ + 1) & ~1;
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS) matrices_tiled(
    u64 ncells, const u32* __restrict__ cell_verts, const double* __restrict__ coords,
    const signed char* __restrict__ signs, int has_signs, const double* __restrict__ tab,
    const double* __restrict__ coef, const u64* __restrict__ meta, const double* __restrict__ tt,
    const u32* __restrict__ ti, double* __restrict__ out) {
    extern __shared__ double smem[];
    double* ts = smem;
    const u32* tis = reinterpret_cast<const u32*>(smem + TT_REALS);
#if TENSOR
    if (FN_TABLES) fn_tables_fill(ts, tt, ti);
    else
        for (int i = threadIdx.x; i < 2 * TT_VAL; i += blockDim.x) ts[STAGE_WIDE ? 2 * (i % TT_VAL) + i / TT_VAL : i] = __ldg(&tt[i]);  // (STAGE_WIDE: interleaved)
    for (int a = threadIdx.x; a < NPAD; a += blockDim.x) {
        ts[TT_REALS - NPAD + a] = a < NLOC ? __ldg(&tt[2 * TG_VAL + a]) : 0.0;  // the scales (FN_TABLES: unused)
        reinterpret_cast<u32*>(smem + TT_REALS)[NQ + a] = a < NLOC ? __ldg(&ti[NQ + a]) : 0u;
    }
    for (int q = threadIdx.x; q < NQ; q += blockDim.x) reinterpret_cast<u32*>(smem + TT_REALS)[q] = __ldg(&ti[q]);
#endif
    for (int sl = threadIdx.x; sl < PC_SLOTS; sl += blockDim.x) pair_slots()[sl] = (unsigned short)gram_pair_slot(sl);  // (PAIR_CLASSES)
#if PRODUCERS
    double* jq = smem + TT_DOUBLES;
    double* hbuf = jq + JQR;
    __syncthreads();  // the factor tables are in place
    tiled_specialised(ncells, cell_verts, coords, signs, has_signs, tab, coef, meta, out, ts, tis, jq, hbuf, hbuf + 2 * HSIZE);
#else
    // Cell group grp (CELLS > 1) works on cells blockIdx.x·CELLS + grp, then a grid's worth of
    // cells further, with barriers of its own (group_sync), so one group's barrier waits and
    // dependent loads overlap the others' work.
    constexpr int XSD = PREFETCH ? 2 * NV * DIM + NV : 0;  // xs[2][NV·DIM] doubles, vs[2][NV] u32
    constexpr int JQB = PRESTAGE == 2 ? 2 : 1;            // PRESTAGE 2: this cell's jq and the next's
    constexpr int XSN = PRESTAGE == 2 || PIPE ? (NV * DIM + 1) & ~1 : 0;  // PRESTAGE 2, PIPE: the next cell's coordinates
    constexpr int GROUP_DOUBLES = JQB * JQR + XSD + XSN + HREGION + DEFER_WRITES * TILED_WARPS * WR * WS + IMAGE_DOUBLES;
    const int grp = CELLS > 1 ? (int)(threadIdx.x / TILED_THREADS) : 0;
    const int tid = (int)threadIdx.x - grp * TILED_THREADS, warp = tid >> 5;
    double* jq = smem + TT_DOUBLES + grp * GROUP_DOUBLES;
    double* xs = jq + JQB * JQR;
    double* hbuf = xs + XSD + XSN;
#if PIPE
    tiled_pipelined(ncells, cell_verts, coords, signs, has_signs, tab, coef, meta, out, ts, tis, jq, hbuf - XSN, hbuf, tid, warp);
#else
    if (CELLS > 1) __syncthreads();  // the factor tables are in place (else the first cell's barrier)
    // The half-tile scratch: in the staging buffers (free after a round's last pass).
    double* ws = hbuf + warp * (WR * WS);
    double* wd = DEFER_WRITES ? hbuf + HREGION + warp * (DEFER_WRITES * WR * WS) : nullptr;
    Deferred pending;  // the previous round's deferred half tiles (DEFER_WRITES)
    const u64 stride = (u64)gridDim.x * CELLS;
    u64 c = (u64)blockIdx.x * CELLS + grp;
#if PREFETCH
    CoordPrefetch pf(xs, reinterpret_cast<u32*>(xs + 2 * NV * DIM), c, stride, ncells, cell_verts, coords, tid, grp);
    int b = 0;
#endif
    // PRESTAGE 2: jq of the cell (jq + jb·JQR) and of the next (the other), the next cell's
    // coordinates xn; `ready`: this cell's jq and first pass were prepared under the previous cell.
    double* xn = hbuf - XSN;
    int jb = 0, par = 0;  // par: the staging buffer that holds a round's first pass
    bool ready = false;
    for (; c < ncells; c += stride) {
        double* jqc = jq + jb * JQR;
        double* jqn = jq + (jb ^ 1) * JQR;
        if (!ready) {
#if PREFETCH
            // The previous cell's last round has read jq and its scratch; this cell's coordinates are in.
            staging_wait_read();  // the previous cell's bulk copies have read the image
            const double* x = pf.start(b, c, stride, ncells, cell_verts, coords, tid, grp);
            b ^= 1;
            fill_jq(reinterpret_cast<const double(*)[DIM]>(x), tab, jqc, tid, TILED_THREADS);  // read where used: no 24 live registers
#else
            double xv[NV][DIM];
            load_cell_coords(c, cell_verts, coords, xv);
            staging_wait_read();  // the previous cell's bulk copies have read the image
            group_sync(grp);  // the previous cell's last round has read jq and its scratch
            fill_jq(xv, tab, jqc, tid, TILED_THREADS);
#endif
            par = 0;
        }
        // PRESTAGE 2: the next cell's head (its coordinates in the last round's first pass, its jq
        // in the last but one, its first pass of points in the last) is prepared under this cell's
        // last round; its vertex ids are loaded now, into the registers of lanes < NV of warp 0.
        const bool chain = PRESTAGE == 2 && c + stride < ncells;
        const u32 next_vid = chain && tid < NV ? __ldg(&cell_verts[(c + stride) * NV + tid]) : 0u;
        const TiledCell cell(out, coef, meta, c);
        for (int t0 = 0; t0 < NTILES; t0 += ROUND_TILES) {
#if SPLIT_MOMENTS
            // The pair of warps 2·tw, 2·tw + 1 shares tile t0 + tw: warp hm multiplies moments 5·hm….
            const int tw = warp >> 1, hm = warp & 1;
            const Tile tl = t0 + tw < NTILES ? tile_of(t0 + tw) : Tile{};
            const TileSigns sg = tile_signs(tl, signs, has_signs, c);
            double part[MSPLIT][4] = {};
#else
            const int tw = warp;
            TiledCell::Round r(t0, warp, signs, has_signs, c);
#endif
            // PRESTAGE: a round after the cell's first (2: and a cell's first after the group's
            // first cell) finds its first pass staged by the previous round's last pass, in
            // buffer `par` (the one that pass did not read).
            if (!PRESTAGE || (t0 == 0 && !ready)) {
                staging_wait_read();  // the previous round's bulk copies have read the image
                group_sync(grp);  // jq is written; the previous round's scratch is read
                if (!(SKIP_PARTS & 1)) stage_points(tab, jqc, ts, tis, 0, hbuf + par * HSIZE, tid);
                group_sync(grp);
            }
            const bool last = t0 + ROUND_TILES >= NTILES;
            const bool ahead = PRESTAGE && (!last || chain);  // the last pass stages the next round's first
            const bool cross = PRESTAGE == 2 && last && chain;
            // Each pass multiplies one buffer while the other is staged; with ALT_ORDER the odd
            // warps multiply first, so staging and tensor-core work overlap within the pass. With
            // DEFER_WRITES each pass also stores its part of the previous round's deferred tiles.
            const bool mma_first = ALT_ORDER && ((warp + grp) & 1);  // one-warp groups alternate by group
#pragma unroll 1
            for (int ch = 0; ch < NCHUNK; ++ch) {
                const bool stage = (ch + 1 < NCHUNK || ahead) && !(SKIP_PARTS & 1);
                const int q0 = ch + 1 < NCHUNK ? (ch + 1) * QCP : 0;
                const double* js = ch + 1 == NCHUNK && last ? jqn : jqc;
                double* nb = hbuf + ((ch + 1 + par) & 1) * HSIZE;
                // PRESTAGE 2, the last round's first pass: warp 0 loads the next cell's coordinates
                // (lane i: coordinate i % DIM of vertex i / DIM), stored once the pass's work is issued.
                double x_next = 0.0;
                if (cross && ch == 0 && warp == 0) {
                    const int lane = tid & 31;
                    const u32 vid = __shfl_sync(0xffffffffu, next_vid, lane < NV * DIM ? lane / DIM : 0);
                    if (lane < NV * DIM) x_next = __ldg(&coords[(u64)vid * DIM + lane % DIM]);
                }
                if (stage && !mma_first) stage_points(tab, js, ts, tis, q0, nb, tid);
#if SPLIT_MOMENTS
                if (!(SKIP_PARTS & 2)) {  // par stays 0: no prestaging with split moments
                    if (hm) multiply_split<1>(hbuf + (ch & 1) * HSIZE, tl, part);
                    else multiply_split<0>(hbuf + (ch & 1) * HSIZE, tl, part);
                }
#else
                if (!(SKIP_PARTS & 2)) multiply_pass(hbuf + ((ch + par) & 1) * HSIZE, r.tl, r.acc);
#endif
                pending.drain(wd, ch, NCHUNK);
                if (stage && mma_first) stage_points(tab, js, ts, tis, q0, nb, tid);
                if (cross && ch == 0 && tid < NV * DIM) xn[tid] = x_next;
                if (cross && ch + 2 == NCHUNK) fill_jq(reinterpret_cast<const double(*)[DIM]>(xn), tab, jqn, tid, TILED_THREADS);
                if (WIDE_WRITES == 4 && ch + 1 == NCHUNK) bulk_wait_read();  // the previous round's copies have read the image region
                group_sync(grp);  // this buffer is read; the other is staged
            }
            if (ahead) par = (par + NCHUNK) & 1;
            __syncwarp();  // the deferred slots are read before they are refilled
#if SPLIT_MOMENTS
            const TiledCell::Round r(hbuf, tw, hm, grp, tl, sg, part);
#endif
            if (WIDE_WRITES && !(SKIP_PARTS & 4)) write_round_wide(cell.k, hbuf, cell.p, t0, tw, tid, grp, r.tl[0], r.acc[0], r.sg[0]);
            else cell.write(ws, wd, r);
            if (DEFER_WRITES) {
                pending.k = (r.tl[0].r0 >= 0 && !(SKIP_PARTS & 4)) ? cell.k : nullptr;
                pending.tile = r.tl[0];
            }
        }
        ready = chain;
        if (chain) jb ^= 1;
    }
    pending.drain(wd, 0, 1);  // the group's last deferred tiles
    bulk_wait_all();
#endif  // PIPE
#endif
}

// The benchmark's fixed-cost probe: an empty kernel, launched on one block or on scheme III's grid,
// times the launch and block scheduling alone (`n` is unused: launches carry one argument).
extern "C" __global__ void launch_probe(u64 n) {}

// Throughput probes of the FP64 tensor cores: 8 independent chains per warp of m8n8k4 (SHAPE 0)
// or of Hopper's m16n8k4, m16n8k8, m16n8k16 (SHAPE 1, 2, 4: the k-quads); `iters` rounds.
template <int SHAPE>
__device__ __forceinline__ void dmma_probe(int iters, double seed, double* __restrict__ sink) {
    constexpr int S = SHAPE == 0 ? 1 : SHAPE;
    double d[8][4];
    double a[2 * S], b[S];
#pragma unroll
    for (int k = 0; k < 8; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.0;
#pragma unroll
    for (int j = 0; j < 2 * S; ++j) a[j] = seed * 1e-3 * (j + 1);
#pragma unroll
    for (int j = 0; j < S; ++j) b[j] = 1e-3 * (threadIdx.x & 31) + j;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            if constexpr (SHAPE == 0) dmma(d[k][0], d[k][1], a[0], b[0]);
            else mma16<S>(d[k], a, b);
        }
    }
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
    if (s < 0.0) sink[0] = s;
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dmma_peak(int iters, double seed, double* __restrict__ sink) {
    dmma_probe<0>(iters, seed, sink);
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dmma16_peak_k4(int iters, double seed, double* __restrict__ sink) {
    dmma_probe<1>(iters, seed, sink);
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dmma16_peak_k8(int iters, double seed, double* __restrict__ sink) {
    dmma_probe<2>(iters, seed, sink);
}
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) dmma16_peak_k16(int iters, double seed, double* __restrict__ sink) {
    dmma_probe<4>(iters, seed, sink);
}

// ---- Summation into CSR ------------------------------------------------------------------------
// values[pos(c, r, s)] += K_c[r][s]. `mode` 0: atomics (any cell order); 1: a colour's cells (no
// two share a node), plain adds. Full matrices (`packed` 0): one thread per (cell, row node a,
// column node b) block. Packed upper triangles (`packed` 1): one thread per (cell, a ≤ b) pair,
// which reads the pair's block once and adds it to (a, b) and, transposed, to (b, a).
__device__ __forceinline__ void scatter_packed_pair(u64 c, int a, int b, const u32* __restrict__ cell_nodes,
                                                    const double* __restrict__ k, int mode, const u32* __restrict__ row_ptr,
                                                    const unsigned short* __restrict__ kpos, double* __restrict__ values) {
    const u64 node_a = __ldg(&cell_nodes[c * NLOC + a]), node_b = __ldg(&cell_nodes[c * NLOC + b]);
    const u64 col_ab = (u64)__ldg(&kpos[(c * NLOC + a) * NLOC + b]) * NCOMP;
    const u64 col_ba = (u64)__ldg(&kpos[(c * NLOC + b) * NLOC + a]) * NCOMP;
#pragma unroll
    for (int i = 0; i < NCOMP; ++i)
#pragma unroll
        for (int j = 0; j < NCOMP; ++j) {
            const int r = a * NCOMP + i, s = b * NCOMP + j;
            const double v = __ldg(&k[s >= r ? packed_at(r, s) : packed_at(s, r)]);
            const u64 ab = (u64)__ldg(&row_ptr[node_a * NCOMP + i]) + col_ab + j;
            if (mode == 0) atomicAdd(&values[ab], v);
            else values[ab] += v;
            if (a != b) {
                const u64 ba = (u64)__ldg(&row_ptr[node_b * NCOMP + j]) + col_ba + i;
                if (mode == 0) atomicAdd(&values[ba], v);
                else values[ba] += v;
            }
        }
}

extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) scatter_matrices(
    u64 ncells, const u32* __restrict__ cell_list, const u32* __restrict__ cell_nodes,
    const double* __restrict__ mats, int mode, int packed, const u32* __restrict__ row_ptr,
    const unsigned short* __restrict__ kpos, double* __restrict__ values) {
    if (packed) {
        const u64 pairs = ncells * (u64)NPAIRS;
        for (u64 t = global_thread(); t < pairs; t += grid_threads()) {
            const u64 kc = t / NPAIRS;
            int a, b;
            upper_pair((int)(t - kc * NPAIRS), a, b);
            const u64 c = cell_list ? (u64)cell_list[kc] : kc;
            scatter_packed_pair(c, a, b, cell_nodes, mats + c * NDP, mode, row_ptr, kpos, values);
        }
        return;
    }
    const u64 work = ncells * (u64)(NLOC * NLOC);
    for (u64 t = global_thread(); t < work; t += grid_threads()) {
        const u64 kc = t / (NLOC * NLOC);
        const int ab = (int)(t - kc * (NLOC * NLOC)), a = ab / NLOC, b = ab % NLOC;
        const u64 c = cell_list ? (u64)cell_list[kc] : kc;
        const u64 node_a = __ldg(&cell_nodes[c * NLOC + a]);
        const u64 col = (u64)__ldg(&kpos[(c * NLOC + a) * NLOC + b]) * NCOMP;
        const double* k = mats + c * NDD;
#pragma unroll
        for (int i = 0; i < NCOMP; ++i) {
            const u64 base = (u64)__ldg(&row_ptr[node_a * NCOMP + i]) + col;
#pragma unroll
            for (int j = 0; j < NCOMP; ++j) {
                const double v = __ldg(&k[(u64)(a * NCOMP + i) * ND + b * NCOMP + j]);
                if (mode == 0) atomicAdd(&values[base + j], v);
                else values[base + j] += v;
            }
        }
    }
}

// Throughput probe: 8 independent FMA chains per thread (enough to hide the FMA latency), `iters`
// rounds; the sum is stored only if negative, which it never is, so nothing is dead code.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) fma_peak(int iters, double seed, double* __restrict__ sink) {
    double a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = seed + 1e-3 * k + 1e-9 * threadIdx.x;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) a[k] = fma(a[k], 0.999999, 1e-6);
    }
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += a[k];
    if (s < 0.0) sink[0] = s;
}
