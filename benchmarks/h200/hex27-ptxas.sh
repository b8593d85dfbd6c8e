#!/usr/bin/env bash
# Round 27's host evidence (no device lent): ptxas -v and static SASS counts of scheme III's
# matrices_tiled for sm_90 (NVRTC 13) for the variants that round 27 ruled out, against round 26's
# rows. The variants are not in the kernel: hex27-host-variants.patch adds them as defines (default
# 0) to a temporary copy of the kernels, which this script compiles; the tree is not touched.
#   DIAG_BRANCH 1: a diagonal Gram tile's B fragment by a warp-uniform branch a half, one m16n8k16
#     each; 2: four m16n8k4 a half on the A fragment's registers in place (GRAM_DIAG, UNIFORM_TILES).
#   TILES_HELD 1: a warp's first ⌊tiles / 16⌋ tiles known present at compile time.
#   STATIC_TILES 1: a warp's whole tile list at compile time, one multiply instance a warp (jump
#     table); 2: with the diagonal tiles as m16n8k4 MMAs (one round of tiles: p = 4 only). The 9th
#     column: further defines (comma-separated, - none) — STATIC_FENCE, and the probes STATIC_ONE /
#     STATIC_CANON, which compile other warps' offsets (wrong tiles: registers only).
# With --sass-lines DIR also each variant's annotated SASS (the multiply loop: between a pass's first
# and last DMMA). Usage: LD_LIBRARY_PATH=…/nvidia/cu13/lib bash benchmarks/h200/hex27-ptxas.sh [--sass-lines DIR]
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/crates/galerkin"
cp "$here/scripts/ptxas-registers.py" "$tmp/scripts/"
cp -r "$here/crates/galerkin/kernels" "$tmp/crates/galerkin/"
(cd "$tmp" && patch -s -p1 < "$here/benchmarks/h200/hex27-host-variants.patch")
# hex26-ptxas.sh's define sets (the sweep's), with the two new defines.
eval "$(sed -n '/^P[45]=/,/"$/p' "$here/benchmarks/h200/hex26-ptxas.sh")"
row() { echo "--variant"; echo "$1: $2 FN_REGS=$3 STAGE_WIDE=$4 UNIFORM_TILES=$5 PAIR_CLASSES=$6 DIAG_BRANCH=$7 TILES_HELD=$8 STATIC_TILES=$9 ${10//,/ }"; }
args=()
while read -r p regs wide uni pc db th stt x name; do
  base=$P4; [ "$p" = 5 ] && base=$P5
  mapfile -t -O "${#args[@]}" args < <(row "p = $p $name" "$(echo $base)" "$regs" "$wide" "$uni" "$pc" "$db" "$th" "$stt" "${x#-}")
done <<'ROWS'
4 0 0 0 0 0 0 0 - default
4 0 0 0 0 0 1 0 - default tiles-held
4 1 0 1 1 0 0 0 - tail-scales uniform-tiles pair-classes
4 1 0 1 1 1 0 0 - tail-scales uniform-tiles pair-classes diag-branch k16
4 1 0 1 1 2 0 0 - tail-scales uniform-tiles pair-classes diag-branch k4
4 1 0 1 1 0 1 0 - tail-scales uniform-tiles pair-classes tiles-held
4 1 0 1 1 0 0 1 - tail-scales uniform-tiles pair-classes static-tiles
4 1 0 1 1 0 0 2 - tail-scales uniform-tiles pair-classes static-tiles k4
4 2 0 1 0 0 0 0 - fn-regs uniform-tiles
4 2 0 1 0 1 0 0 - fn-regs uniform-tiles diag-branch k16
4 2 0 1 0 2 0 0 - fn-regs uniform-tiles diag-branch k4
4 2 0 1 0 0 1 0 - fn-regs uniform-tiles tiles-held
4 2 0 1 0 0 0 1 - fn-regs uniform-tiles static-tiles
4 2 0 1 0 0 0 2 - fn-regs uniform-tiles static-tiles k4
4 1 0 1 1 0 0 1 STATIC_FENCE=1 tail-scales uniform-tiles pair-classes static-tiles, __syncwarp between tiles
4 1 0 1 1 0 0 1 STATIC_FENCE=2 tail-scales uniform-tiles pair-classes static-tiles, volatile B loads
4 1 0 1 1 0 0 1 STATIC_FENCE=3 tail-scales uniform-tiles pair-classes static-tiles, opaque branch a tile
4 1 0 1 1 0 0 2 STATIC_FENCE=3 tail-scales uniform-tiles pair-classes static-tiles k4, opaque branch a tile
4 2 0 1 0 0 0 1 STATIC_FENCE=3 fn-regs uniform-tiles static-tiles, opaque branch a tile
4 1 0 1 1 0 0 1 STATIC_FENCE=3,STATIC_ONE=1 probe (wrong tiles) one instance, opaque branch
4 1 0 1 1 0 0 2 STATIC_FENCE=3,STATIC_ONE=1 probe (wrong tiles) one instance k4, opaque branch
4 2 0 1 0 0 0 1 STATIC_FENCE=3,STATIC_ONE=1 probe (wrong tiles) fn-regs one instance, opaque branch
4 1 0 1 1 0 0 1 STATIC_FENCE=3,STATIC_CANON=1 probe (wrong tiles) an instance a pattern (10), opaque branch
4 2 0 1 0 0 0 1 STATIC_FENCE=3,STATIC_CANON=1 probe (wrong tiles) fn-regs an instance a pattern, opaque branch
5 1 1 1 0 0 0 0 - tail-scales wide-stage uniform-tiles
5 1 1 1 0 0 1 0 - tail-scales wide-stage uniform-tiles tiles-held
ROWS
cd "$tmp/crates/galerkin/kernels"
python3 "$tmp/scripts/ptxas-registers.py" \
  geometry.cuh qf/qfunction.cuh qf/diffusion.cuh qf/mass.cuh qf/elasticity.cuh cell_tables.cuh element_schemes.cu \
  --regex '^matrices_tiled$' --sass "${args[@]}" "$@"
