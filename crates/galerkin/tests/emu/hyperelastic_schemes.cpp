// CPU emulation driver: the two schemes of kernels/hyperelastic.cu on the same cells (see hyperelastic_schemes.sh).
#include "warp_emu.h"
#include <algorithm>
#include <set>
#include <array>
#ifndef NLOC
#define NLOC 10
#endif
#ifndef NQ
#define NQ 14
#endif
#define NV 4
#define AFFINE 1
#define DIM 3
// HK_EMU_PAIRS_POS / HK_EMU_TC_POS: one scheme with its CSR positions gathered into shared memory
// (HK_POS_SHARED), the other reading them from global memory, so that the two paths check each other.
namespace oldk {
#define GT (((3 * ((NLOC + 1) / 2)) + 7) / 8 * 8)
#define CPB 4
#define QB 3
#ifdef HK_EMU_PAIRS_POS
#define HK_POS_SHARED
#endif
#include "law.cuh"
#include "hk.cu"
#undef HK_POS_SHARED
#undef GT
#undef CPB
#undef QB
}
namespace tck {
// HK_LAW_WIDE (twentieth pass): 3 cells a block, the law of their points on the first warp's lanes;
// 8 cells, so the last block has a warp past the end.
#ifdef HK_LAW_WIDE
#define TC_WPB 3
#else
#define TC_WPB 1
#endif
#define WPB TC_WPB
#ifdef HK_EMU_TC_POS
#define HK_POS_SHARED
#endif
// HK_EMU_TC_PERSIST: the tensor-core kernel looping over cells on a grid of 3 blocks, the next
// cell's record copied ahead (HK_PERSIST, HK_PREFETCH: eighteenth pass).
#ifdef HK_EMU_TC_PERSIST
#define HK_PERSIST
#define HK_PREFETCH
#define TC_GRID(nc) 3
#elif defined(HK_EMU_CHAIN)
// HK_EMU_CHAIN (thirty-fourth pass): segments of EMU_SEG consecutive cells (the last one short),
// each cell's blocks shared with the next carried to it (HK_CHAIN); the random cells share some
// nodes with their neighbours, so the links carry 0 to 6 nodes.
#define HK_CHAIN
#define EMU_SEG 3
#define TC_GRID(nc) (((nc) + EMU_SEG - 1) / EMU_SEG)
#else
#define TC_GRID(nc) (nc)
#endif
// HK_EMU_UPPER (twenty-first pass): the tensor-core kernel's upper-triangle scatter (HK_UPPER) and its
// two passes (hyperelastic_upper.cu) on values prefilled with NaN: zero the upper part, add, fill.
#ifdef HK_EMU_UPPER
#define HK_UPPER
#endif
// HK_EMU_BLOCKS (round 25): the node-block scatter (HK_SCATTER_BLOCKS), its values converted back to
// CSR order below.
#ifdef HK_EMU_BLOCKS
#define HK_SCATTER_BLOCKS
#endif
#include "law.cuh"
#include "hk.cu"
#undef HK_SCATTER_BLOCKS
#ifdef HK_EMU_UPPER
#include "hu.cu"
#undef HK_UPPER
#endif
#undef HK_CHAIN
}
#undef HK_LAW_WIDE  // (the tensor-core kernel's alone)
// The patch scheme (hyperelastic_patch.cu) on patches of EMU_PATCH = 7 consecutive cells integrated
// PC = 4 at a time (two batches, the second short), every node pair its own slot at most (NSLOT the
// bound), rows whose cells all lie in one patch stored plainly, against the column pairs.
namespace pk {
#undef WPB
#undef HK_POS_SHARED
#define PC 4
#define EMU_PATCH 7
#define NSLOT (EMU_PATCH * NLOC * (NLOC + 1) / 2)
#define QB 3
#define PT ((PC * 3 * ((NLOC + 1) / 2) + 31) / 32 * 32)
#include "law.cuh"
#include "hk.cu"
#include "hp.cu"
}
// The tensor-core scheme with the patches' scatter (HK_PATCH, nineteenth pass) on the same patches:
// one warp per block taking the patch's cells in turn, its fragments added to the slots.
// HK_PATCH_TURNS (twentieth pass): 3 warps a block adding their staged cells in turn (7 cells: the
// last round has 2 warps past the patch's end).
#ifdef HK_PATCH_TURNS
#define TPK_WPB 3
#else
#define TPK_WPB 1
#endif
namespace tpk {
#undef HK_PERSIST
#undef HK_PREFETCH
#undef HK_SCATTER_COLS
#define WPB TPK_WPB
#define HK_PATCH
#include "law.cuh"
#include "hk.cu"
#undef HK_PATCH
#undef WPB
}
// The moments scheme (hyperelastic_moments.cu, P2 only): one warp per cell, HM_WPB cells per block.
#if NLOC == 10
namespace mk {
#ifndef HM_WPB
#define HM_WPB 1
#endif
#include "law.cuh"
#include "hk.cu"
#include "hm.cuh"
#include "hm.cu"
}
#endif
// The recomputing gather (hyperelastic_recompute.cu, seventeenth pass): one warp per block, blocks
// of EMU_RANGE consecutive nodes, against the column pairs; its residual alone is the tc kernel's.
namespace rk {
#define WPB 1
#define HK_RECOMPUTE
#define HR_WPB 1
#include "law.cuh"
#include "hk.cu"
#include "hm.cuh"
#include "hr.cu"
#undef HK_RECOMPUTE
}
// The same gather over the staged law records (HR_RECORDS, thirty-first pass): hyper_records (2 warps
// a block) writes the pulled-back records, hyper_recompute contracts them with the reference gradients.
namespace rrk {
#define WPB 1
#define HK_RECOMPUTE
#define HR_RECORDS
#define HR_WPB 1
#define HR_LWPB 2
#include "law.cuh"
#include "hk.cu"
#include "hm.cuh"
#include "hr.cu"
#undef HK_RECOMPUTE
#undef HR_RECORDS
}
#define EMU_RANGE 7
// The patches' host tables as `src/hyperelastic/patch.rs` builds them (runs of EMU_PATCH cells).
struct EmuPatches { std::vector<u32> ptr, cells, fptr, fpos, fmeta; std::vector<unsigned short> pslot; };
static EmuPatches emu_patches(int nc, const std::vector<u32>& cn, const std::vector<u32>& row_ptr, const std::vector<unsigned short>& kpos) {
    EmuPatches p; p.ptr = {0}; p.fptr = {0};
    for (int c = 0; c < nc; ++c) p.cells.push_back(c);
    std::vector<u32> incident(row_ptr.size() / 3, 0);
    for (u32 n : cn) ++incident[n];
    for (int c0 = 0; c0 < nc; c0 += EMU_PATCH) {
        const int c1 = std::min(nc, c0 + EMU_PATCH);
        std::vector<u32> here(incident.size(), 0);
        for (int c = c0; c < c1; ++c) for (int i = 0; i < NLOC; ++i) ++here[cn[c * NLOC + i]];
        std::vector<std::array<u32, 4>> slots;  // lo, hi, rank lo→hi, rank hi→lo
        for (int c = c0; c < c1; ++c) for (int i = 0; i < NLOC; ++i) for (int j = i; j < NLOC; ++j) {
            u32 ni = cn[c * NLOC + i], nj = cn[c * NLOC + j]; bool flip = ni > nj;
            u32 rij = kpos[(c * NLOC + i) * NLOC + j], rji = kpos[(c * NLOC + j) * NLOC + i];
            std::array<u32, 4> key = flip ? std::array<u32, 4>{nj, ni, rji, rij} : std::array<u32, 4>{ni, nj, rij, rji};
            size_t s = 0; while (s < slots.size() && !(slots[s][0] == key[0] && slots[s][1] == key[1])) ++s;
            if (s == slots.size()) slots.push_back(key);
            p.pslot.push_back(2 * s + flip);
        }
        std::vector<std::array<u32, 3>> dir;
        for (size_t s = 0; s < slots.size(); ++s) { dir.push_back({slots[s][0], slots[s][2], (u32)(2 * s)}); if (slots[s][0] != slots[s][1]) dir.push_back({slots[s][1], slots[s][3], (u32)(2 * s + 1)}); }
        std::sort(dir.begin(), dir.end());
        for (auto& d : dir) { u32 len = row_ptr[d[0] * 3 + 1] - row_ptr[d[0] * 3]; p.fpos.push_back(row_ptr[d[0] * 3] + 3 * d[1]); p.fmeta.push_back(len << 16 | (here[d[0]] == incident[d[0]] ? 0x8000u : 0u) | d[2]); }
        p.ptr.push_back(c1); p.fptr.push_back(p.fpos.size());
    }
    return p;
}
int main() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> U(-1, 1);
    const int nc = 8, npool = 30;
    std::vector<u32> cv(nc * NV), cn(nc * NLOC);
    std::vector<double> coords(nc * NV * 3);
    for (int c = 0; c < nc; ++c) {
        double base[3] = {U(rng), U(rng), U(rng)};
        for (int v = 0; v < NV; ++v) { cv[c * NV + v] = c * NV + v; for (int k = 0; k < 3; ++k) coords[(c * NV + v) * 3 + k] = base[k] + (v == k + 1 ? 0.7 : 0.0) + 0.15 * U(rng); }
        std::vector<int> pool(npool); for (int i = 0; i < npool; ++i) pool[i] = i;
        std::shuffle(pool.begin(), pool.end(), rng);
        for (int j = 0; j < NLOC; ++j) cn[c * NLOC + j] = pool[j];
    }
    std::vector<std::set<u32>> cols(npool);
    for (int c = 0; c < nc; ++c) for (int i = 0; i < NLOC; ++i) for (int j = 0; j < NLOC; ++j) cols[cn[c * NLOC + i]].insert(cn[c * NLOC + j]);
    std::vector<u32> row_ptr(npool * 3 + 1); u32 off = 0;
    for (int n = 0; n < npool; ++n) for (int a = 0; a < 3; ++a) { row_ptr[n * 3 + a] = off; off += cols[n].size() * 3; }
    row_ptr[npool * 3] = off;
    std::vector<unsigned short> kpos(nc * NLOC * NLOC);
    for (int c = 0; c < nc; ++c) for (int i = 0; i < NLOC; ++i) for (int j = 0; j < NLOC; ++j) {
        auto& s = cols[cn[c * NLOC + i]]; kpos[(c * NLOC + i) * NLOC + j] = std::distance(s.begin(), s.find(cn[c * NLOC + j]));
    }
    // the table (| λ [NQ][4] for the moments scheme): random gradients, or at P2 the true P2
    // gradients at random points (the moments scheme forms them itself from λ)
    std::vector<double> tab(NQ * NLOC * 3 + NQ * NV * 3 + NQ + NQ * 4);
    for (int k = 0; k < NQ * NLOC * 3; ++k) tab[k] = U(rng);
    double* lam = tab.data() + NQ * NLOC * 3 + NQ * NV * 3 + NQ;
    for (int q = 0; q < NQ; ++q) {
        double sum = 0; for (int m = 0; m < 4; ++m) sum += (lam[q * 4 + m] = 0.1 + 0.5 * (1 + U(rng)));
        for (int m = 0; m < 4; ++m) lam[q * 4 + m] /= sum;
    }
#if NLOC == 10
    {
        const double gl[4][3] = {{-1, -1, -1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        const int edges[6][2] = {{2, 3}, {1, 3}, {1, 2}, {0, 3}, {0, 2}, {0, 1}};  // CellType::edges()
        for (int q = 0; q < NQ; ++q) for (int i = 0; i < 10; ++i) for (int a = 0; a < 3; ++a) {
            const double* l = lam + q * 4;
            tab[(q * NLOC + i) * 3 + a] = i < 4 ? (4 * l[i] - 1) * gl[i][a] : 4 * (l[edges[i - 4][0]] * gl[edges[i - 4][1]][a] + l[edges[i - 4][1]] * gl[edges[i - 4][0]][a]);
        }
    }
#endif
    double gg[4][3] = {{-1, -1, -1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int q = 0; q < NQ; ++q) for (int v = 0; v < NV; ++v) for (int k = 0; k < 3; ++k) tab[NQ * NLOC * 3 + (q * NV + v) * 3 + k] = gg[v][k];
    for (int q = 0; q < NQ; ++q) tab[NQ * NLOC * 3 + NQ * NV * 3 + q] = 0.5 + 0.5 * U(rng);
    std::vector<double> frames(nc * 9);
    for (int c = 0; c < nc; ++c) {
        double th = U(rng), ph = U(rng);
        double R1[9] = {cos(th), -sin(th), 0, sin(th), cos(th), 0, 0, 0, 1}, R2[9] = {1, 0, 0, 0, cos(ph), -sin(ph), 0, sin(ph), cos(ph)};
        for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) { double s = 0; for (int k = 0; k < 3; ++k) s += R1[i * 3 + k] * R2[k * 3 + j]; frames[c * 9 + i * 3 + j] = s; }
    }
#if LAW == 2
    double prm[5] = {0.876, 18.48, 3.58, 1.627, 50.0};
#else
    double prm[2] = {1.3, 0.7};
#endif
    std::vector<double> u(npool * 3);
    for (auto& x : u) x = 0.03 * U(rng);
    int fail = 0;
    const EmuPatches pat = emu_patches(nc, cn, row_ptr, kpos);
    const int npatch = (nc + EMU_PATCH - 1) / EMU_PATCH;
    for (int want = 0; want < 2; ++want) {
        std::vector<double> r1(npool * 3, 0.0), r2(npool * 3, 0.0), v1(off, 0.0), v2(off, 0.0);
        run((nc + 3) / 4, (((3 * ((NLOC + 1) / 2)) + 7) / 8 * 8) * 4, [&] { oldk::hyper_assemble(nc, cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r1.data(), want, row_ptr.data(), kpos.data(), v1.data()); });
#ifdef HK_EMU_UPPER
        // the fill's map as `src/hyperelastic/upper.rs` builds it: node m's lower column nodes n < m
        // (the first of its sorted columns), each with (the place of block (n, m), n's row length)
        std::vector<u32> lo_ptr = {0}, lo_src;
        for (int m = 0; m < npool; ++m) {
            for (u32 n : cols[m]) {
                if ((int)n >= m) break;
                lo_src.push_back(row_ptr[n * 3] + 3 * (u32)std::distance(cols[n].begin(), cols[n].find(m)));
                lo_src.push_back(row_ptr[n * 3 + 1] - row_ptr[n * 3]);
            }
            lo_ptr.push_back(lo_src.size() / 2);
        }
        if (want) {
            std::fill(v2.begin(), v2.end(), nan(""));
            run(npool, 32, [&] { tck::hyper_upper_zero(npool, row_ptr.data(), lo_ptr.data(), v2.data()); });
        }
#endif
#ifdef HK_EMU_CHAIN
        // the links as `src/hyperelastic/chain.rs` builds them: the next cell's nodes among this one's
        std::vector<u32> seg = {0};
        std::vector<u64> links(nc, 0);
        int carried = 0;
        for (int c0 = 0; c0 < nc; c0 += EMU_SEG) {
            const int c1 = std::min(nc, c0 + EMU_SEG);
            for (int c = c0; c + 1 < c1; ++c) {
                int s = 0;
                for (int i = 0; i < NLOC && s < 6; ++i)
                    for (int j = 0; j < NLOC; ++j)
                        if (cn[c * NLOC + i] == cn[(c + 1) * NLOC + j]) { links[c] |= (u64)i << (4 * s) | (u64)j << (24 + 4 * s) | 1ull << (48 + i); ++s; }
                carried += s;
            }
            seg.push_back(c1);
        }
        if (want) printf("chain: %d nodes carried over %d links\n", carried, nc - (int)seg.size() + 1);
        if (carried == 0) fail = 1;
#define HK_EMU_CHAIN_ARGS , seg.data(), links.data(), (u32)(seg.size() - 1)
#else
#define HK_EMU_CHAIN_ARGS
#endif
        run(TC_GRID((nc + TC_WPB - 1) / TC_WPB), 32 * WPC * TC_WPB, [&] { tck::hyper_assemble(nc, cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r2.data(), want, row_ptr.data(), kpos.data(), v2.data() HK_EMU_CHAIN_ARGS); });
#ifdef HK_EMU_BLOCKS
        // (node-block order, HK_SCATTER_BLOCKS: block k of node n's row at row_ptr[3n] + 9k, back to CSR's)
        if (want) {
            const std::vector<double> t(v2);
            for (int n = 0; n < npool; ++n) {
                const u32 m = cols[n].size(), s0 = row_ptr[n * 3];
                for (u32 k = 0; k < m; ++k) for (u32 a = 0; a < 3; ++a) for (u32 b = 0; b < 3; ++b) v2[s0 + a * 3 * m + 3 * k + b] = t[s0 + 9 * k + 3 * a + b];
            }
        }
#endif
#ifdef HK_EMU_UPPER
        int asym = 0;  // every lower value a copy of its transpose
        if (want) {
            run(npool, 32, [&] { tck::hyper_upper_fill(npool, row_ptr.data(), lo_ptr.data(), (const uint2*)lo_src.data(), v2.data()); });
            for (int r = 0; r < npool * 3; ++r) for (u32 p = row_ptr[r]; p < row_ptr[r + 1]; ++p) {
                const int m = r / 3, a = r % 3, q = (p - row_ptr[r]) / 3, b = (p - row_ptr[r]) % 3;
                const u32 n = *std::next(cols[m].begin(), q);
                const u32 t = row_ptr[n * 3 + b] + 3 * (u32)std::distance(cols[n].begin(), cols[n].find(m)) + a;
                if (!(v2[p] == v2[t])) ++asym;
            }
            printf("upper: %d values not equal to their transpose's\n", asym);
        }
        if (asym) fail = 1;
#endif
        std::vector<double> r3(npool * 3, 0.0), v3(off, 0.0);
        run(npatch, PT, [&] { pk::hyper_patch_assemble(npatch, pat.ptr.data(), pat.cells.data(), cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r3.data(), want, pat.pslot.data(), pat.fptr.data(), pat.fpos.data(), pat.fmeta.data(), v3.data()); });
        std::vector<double> r6(npool * 3, 0.0), v6(off, 0.0);
        run(npatch, 32 * WPC * TPK_WPB, [&] { tpk::hyper_assemble(npatch, cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r6.data(), want, row_ptr.data(), kpos.data(), v6.data(), pat.ptr.data(), pat.cells.data(), pat.pslot.data(), pat.fptr.data(), pat.fpos.data(), pat.fmeta.data()); });
        double tr = 0, tkk = 0;  // the tensor-core patch scheme against the column pairs
        for (size_t i = 0; i < r1.size(); ++i) tr = std::max(tr, fabs(r1[i] - r6[i]));
        for (size_t i = 0; i < v1.size(); ++i) tkk = std::max(tkk, fabs(v1[i] - v6[i]));
        double mr_ = 0, mkk = 0;  // the moments scheme against the column pairs (P2)
#if NLOC == 10
        {
            std::vector<double> r4(npool * 3, 0.0), v4(off, 0.0);
            run((nc + HM_WPB - 1) / HM_WPB, 32 * HM_WPB, [&] { mk::hyper_moments_assemble(nc, cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r4.data(), want, row_ptr.data(), kpos.data(), v4.data()); });
            for (size_t i = 0; i < r1.size(); ++i) mr_ = std::max(mr_, fabs(r1[i] - r4[i]));
            for (size_t i = 0; i < v1.size(); ++i) mkk = std::max(mkk, fabs(v1[i] - v4[i]));
        }
#endif
        double rr = 0, rkk = 0;  // the recomputing gather (values prefilled with NaN: all overwritten)
        if (want) {
            std::vector<u32> bnode = {0}, bptr = {0}, bcell; std::vector<unsigned short> bmask;
            for (int n0 = 0; n0 < npool; n0 += EMU_RANGE) {
                const int n1 = std::min(npool, n0 + EMU_RANGE);
                for (int c = 0; c < nc; ++c) {
                    unsigned short m = 0;
                    for (int i = 0; i < NLOC; ++i) if ((int)cn[c * NLOC + i] >= n0 && (int)cn[c * NLOC + i] < n1) m |= 1 << i;
                    if (m) { bcell.push_back(c); bmask.push_back(m); }
                }
                bnode.push_back(n1); bptr.push_back(bcell.size());
            }
            std::vector<double> r5(npool * 3, nan("")), v5(off, nan(""));
            run(bnode.size() - 1, 32, [&] { rk::hyper_recompute(bnode.data(), bptr.data(), bcell.data(), bmask.data(), cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r5.data(), row_ptr.data(), kpos.data(), v5.data()); });
            for (size_t i = 0; i < r1.size(); ++i) rr = std::max(rr, std::isfinite(r5[i]) ? fabs(r1[i] - r5[i]) : INFINITY);
            for (size_t i = 0; i < v1.size(); ++i) rkk = std::max(rkk, std::isfinite(v5[i]) ? fabs(v1[i] - v5[i]) : INFINITY);
            // the staged records: the same blocks, the stage prefilled with NaN (every read entry written)
            const int cpw = 32 / NQ, chunks = (nc + cpw - 1) / cpw;
            std::vector<double> stage((size_t)chunks * 54 * 32, nan("")), r7(npool * 3, nan("")), v7(off, nan(""));
            run((chunks + 1) / 2, 64, [&] { rrk::hyper_records(nc, cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), stage.data()); });
            run(bnode.size() - 1, 32, [&] { rrk::hyper_recompute(bnode.data(), bptr.data(), bcell.data(), bmask.data(), cv.data(), coords.data(), cn.data(), tab.data(), frames.data(), 1, prm, u.data(), r7.data(), row_ptr.data(), kpos.data(), v7.data(), stage.data()); });
            for (size_t i = 0; i < r1.size(); ++i) rr = std::max(rr, std::isfinite(r7[i]) ? fabs(r1[i] - r7[i]) : INFINITY);
            for (size_t i = 0; i < v1.size(); ++i) rkk = std::max(rkk, std::isfinite(v7[i]) ? fabs(v1[i] - v7[i]) : INFINITY);
        }
        double pr = 0, pkk = 0;
        for (size_t i = 0; i < r1.size(); ++i) pr = std::max(pr, fabs(r1[i] - r3[i]));
        for (size_t i = 0; i < v1.size(); ++i) pkk = std::max(pkk, fabs(v1[i] - v3[i]));
        double dr = 0, mr = 0, dk = 0, mk = 0;
        for (size_t i = 0; i < r1.size(); ++i) { dr = std::max(dr, fabs(r1[i] - r2[i])); mr = std::max(mr, fabs(r1[i])); }
        for (size_t i = 0; i < v1.size(); ++i) { dk = std::max(dk, fabs(v1[i] - v2[i])); mk = std::max(mk, fabs(v1[i])); }
        printf("LAW %d NLOC %d NQ %d WPC %d RES_MMA %d VEC %d want_k %d: residual rel %.2e (max %.3e), jacobian rel %.2e (max %.3e), nnz %u; patch: residual %.2e jacobian %.2e (%zu flush entries, %zu stored plainly, for %d cells); moments: residual %.2e jacobian %.2e; recompute (and over the staged records): residual %.2e jacobian %.2e; tc patch: residual %.2e jacobian %.2e\n", LAW, NLOC, NQ, WPC, HK_RES_MMA, HK_VEC, want, dr / mr, mr, mk > 0 ? dk / mk : 0.0, mk, off, pr / mr, mk > 0 ? pkk / mk : 0.0, pat.fpos.size(), (size_t)std::count_if(pat.fmeta.begin(), pat.fmeta.end(), [](u32 m) { return (m & 0x8000u) != 0; }), nc, mr_ / mr, mk > 0 ? mkk / mk : 0.0, rr / mr, mk > 0 ? rkk / mk : 0.0, tr / mr, mk > 0 ? tkk / mk : 0.0);
        if (!(tr <= 1e-12 * mr) || !(tkk <= 1e-12 * std::max(mk, 1e-300))) fail = 1;
        if (!(rr <= 1e-12 * mr) || !(rkk <= 1e-12 * std::max(mk, 1e-300))) fail = 1;
        if (!(dr <= 1e-12 * mr) || !(dk <= 1e-12 * mk) || !(mr > 0) || (want && !(mk > 0))) fail = 1;
        if (!(mr_ <= 1e-12 * mr) || !(mkk <= 1e-12 * std::max(mk, 1e-300))) fail = 1;
        if (!(pr <= 1e-12 * mr) || !(pkk <= 1e-12 * std::max(mk, 1e-300))) fail = 1;
    }
    if (fail) printf("FAILED: the schemes differ by more than 1e-12\n");
    return fail;
}
