#!/usr/bin/env python3
"""Round 27 (host, no device lent): scheme III's image stores at trunk p = 4 (elasticity, Gram tiles, one
round, 16 warps) in the MMA fragment order (form_round_image, the kernel's) against a row-contiguous order
reached by shuffles — a half-warp one row's 16 columns of two adjacent tiles of a strip (8 + 8 where a
tile has no neighbour) — with hex26-banks.py's wavefront model (8-byte words, each half-warp its own
wavefronts; a bank pair takes as many as distinct words fall on it).

The shuffles' cost is counted as 2 SHFL.32 a stored double a store instruction (every value leaves its
lane: a fragment lane (g, t) holds rows g, g + 8 at columns 2t, 2t + 1). A warp's SHFL takes the shared
pipe's (MIO's) slot as a wavefront does, so the reorder pays only if it saves more wavefronts than it adds
shuffles. Usage: python3 benchmarks/h200/hex27-image.py"""
import importlib.util, os

spec = importlib.util.spec_from_file_location("banks", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hex26-banks.py"))
b = importlib.util.module_from_spec(spec)
spec.loader.exec_module(b)


def warp_tiles(w):
    """Warp w's Gram tiles (strip, column block) in strip order, as GramRound's constructor sets them."""
    tiles = sum(b.GB8 - 2 * t for t in range(b.GS16) if b.GB8 > 2 * t)
    base, extra = tiles // b.WARPS, tiles % b.WARPS
    first, count = w * base + min(w, extra), base + (1 if w < extra else 0)
    st, col = 0, first
    while col >= b.GB8 - 2 * st:
        col -= b.GB8 - 2 * st
        st += 1
    col += 2 * st
    out = []
    for _ in range(count):
        out.append((st, col))
        col += 1
        if col == b.GB8:
            st += 1
            col = 2 * st
    return out


def row_contiguous():
    """Store instructions (lane -> packed word) with a half-warp on one row of a tile pair's 16 columns."""
    out = []
    for w in range(b.WARPS):
        tl, i = warp_tiles(w), 0
        while i < len(tl):
            s, c = tl[i]
            pair = i + 1 < len(tl) and tl[i + 1] == (s, c + 1)
            cols = 16 if pair else 8
            per_half = 16 // cols  # rows a half-warp covers
            for k in range(16 // (2 * per_half)):
                a = {}
                for lane in range(32):
                    h, l = lane // 16, lane % 16
                    rr, ss = 16 * s + (2 * k + h) * per_half + l // cols, 8 * c + l % cols
                    if rr <= ss < b.GN:
                        a[lane] = b.packed_c(rr, ss)
                if a:
                    out.append(a)
            i += 2 if pair else 1
    return out


def main():
    img = b.image_stores()
    ideal = sum(len({lane // 16 for lane in a}) for a in img)
    print(f"fragment order (the kernel's): {len(img)} store instructions, {sum(map(b.wavefronts, img))} wavefronts a cell "
          f"(one a non-empty half-warp: {ideal})")
    rc = row_contiguous()
    print(f"row-contiguous by shuffles: {len(rc)} store instructions, {sum(map(b.wavefronts, rc))} wavefronts, "
          f"≥ {2 * len(rc)} SHFL.32 warp instructions a cell")


if __name__ == "__main__":
    main()
