#!/usr/bin/env python3
"""Shared-memory wavefronts of scheme III's tail at trunk p = 4 (elasticity, Gram tiles, one round, 16 warps),
counted on the host from the addresses each warp instruction touches (round 26, no device lent).

Model: 8-byte accesses, each half-warp its own wavefronts; within one, a bank pair (address / 8 mod 16)
takes as many wavefronts as distinct 8-byte words fall on it. It reproduces the lead's round-23 profile
(lead-r23-2026-12-04-prof-summary.txt, BENCHMARKS 24th pass): image stores 1 357 measured / 1 338 counted,
the blocks' reads and writes 2 194 / 2 163.

Counts: form_round_image (each warp's tiles into the packed image), gram_blocks in the row-major pair
order (upper_pair), and in round 26's order by classes of rows mod 16 (PAIR_CLASSES; the slot function
below is element_schemes.cu's gram_pair_slot, line for line), whose diagonal pairs read their k > l
moments at (rr, ss)'s virtual place and take the transposed value. Also checks the slot table is a
permutation of the 1 275 pairs. Usage: python3 benchmarks/h200/hex26-banks.py"""
NLOC, DIM = 50, 3
GN = ND = DIM * NLOC
GB8, GS16 = (GN + 7) // 8, (GN + 15) // 16
WARPS, THREADS = 16, 512
NPAIRS = NLOC * (NLOC + 1) // 2


def packed_c(r, s):
    return r * ND - r * (r - 1) // 2 + (s - r)


def row_start(a):
    return a * NLOC - a * (a - 1) // 2


def upper_pair(k):
    a = 0
    while a + 1 < NLOC and row_start(a + 1) <= k:
        a += 1
    return a, a + (k - row_start(a))


def wavefronts(addrs):
    """addrs: lane -> double index (active lanes only)."""
    tot = 0
    for h in (0, 1):
        banks = {}
        for lane, a in addrs.items():
            if lane // 16 == h:
                banks.setdefault(a % 16, set()).add(a)
        tot += max((len(v) for v in banks.values()), default=0)
    return tot


def image_stores():
    tiles = sum(GB8 - 2 * t for t in range(GS16) if GB8 > 2 * t)
    base, extra = tiles // WARPS, tiles % WARPS
    out = []
    for w in range(WARPS):
        first, count = w * base + min(w, extra), base + (1 if w < extra else 0)
        st, col = 0, first
        while col >= GB8 - 2 * st:
            col -= GB8 - 2 * st
            st += 1
        col += 2 * st
        for _ in range(count):
            for v in range(4):
                a = {}
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    rr, ss = 16 * st + g + 8 * (v // 2), 8 * col + 2 * t + v % 2
                    if rr <= ss < GN:
                        a[lane] = packed_c(rr, ss)
                out.append(a)
            col += 1
            if col == GB8:
                st += 1
                col = 2 * st
    return out


# element_schemes.cu's pc_first, pc_run, pc_halves, gram_pair_slot
def pc_first(lo, t):
    return lo + ((t - lo) & 15)


def pc_run(lo, t):
    return (NLOC - 1 - pc_first(lo, t)) // 16 + 1 if pc_first(lo, t) < NLOC else 0


def pc_halves(a0):
    return max(sum(pc_run(a0 + 16 * j, (c - 8 * j) & 15) for j in range(4) if a0 + 16 * j < NLOC) for c in range(16))


PC_SLOTS = sum(16 * pc_halves(a0) for a0 in range(min(16, NLOC)))


def gram_pair_slot(s):
    h, c = s >> 4, s & 15
    for a0 in range(min(16, NLOC)):
        n = pc_halves(a0)
        if h < n:
            j = 0
            while a0 + 16 * j < NLOC:
                lo, t = a0 + 16 * j, (c - 8 * j) & 15
                run = pc_run(lo, t)
                if h < run:
                    return lo | (pc_first(lo, t) + 16 * h) << 8
                h -= run
                j += 1
            return 0xFFFF
        h -= n
    return 0xFFFF


def blocks(classes):
    reads, writes = [], []
    table = [gram_pair_slot(s) for s in range(PC_SLOTS)] if classes else None
    for j in range(3):  # GPPT: a thread's pairs
        for w in range(WARPS):
            lanes = {}
            for lane in range(32):
                s = 32 * w + lane + THREADS * j
                if classes:
                    if s < PC_SLOTS and table[s] != 0xFFFF:
                        lanes[lane] = (table[s] & 255, table[s] >> 8)
                elif s < NPAIRS:
                    lanes[lane] = upper_pair(s)
            if not lanes:
                continue
            for m in range(9):
                r = {}
                for lane, (a, b) in lanes.items():
                    rr, ss = DIM * a + m // 3, DIM * b + m % 3
                    r[lane] = packed_c(rr, ss) if rr <= ss or classes else packed_c(ss, rr)
                reads.append(r)
            for m in range(9):
                wr = {lane: packed_c(DIM * a + m // 3, DIM * b + m % 3) for lane, (a, b) in lanes.items() if DIM * a + m // 3 <= DIM * b + m % 3}
                if wr:
                    writes.append(wr)
    return reads, writes, table


def main():
    img = image_stores()
    print(f"image stores: {len(img)} instructions, {sum(map(wavefronts, img))} wavefronts a cell")
    for name, classes in (("row-major pairs (default)", False), ("pairs by classes of rows (PAIR_CLASSES)", True)):
        r, w, table = blocks(classes)
        print(f"{name}: reads {len(r)} instructions {sum(map(wavefronts, r))} wavefronts, writes {len(w)} instructions {sum(map(wavefronts, w))} wavefronts")
        if table:
            pairs = sorted((e & 255, e >> 8) for e in table if e != 0xFFFF)
            assert pairs == [(a, b) for a in range(NLOC) for b in range(a, NLOC)], "the slot table is not a permutation of the pairs"
            print(f"  slot table: {PC_SLOTS} slots ({PC_SLOTS // 16} half-warps), every one of the {NPAIRS} pairs once; "
                  f"{sum(1 for j in range(3) for w in range(WARPS) if any(32 * w + l + THREADS * j < PC_SLOTS for l in range(32)))} warp-iterations")


if __name__ == "__main__":
    main()
