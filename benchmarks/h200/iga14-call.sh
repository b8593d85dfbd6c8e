#!/usr/bin/env bash
# iga14's device call (one call, ≤ 270 s): the GPU tests iga_cuda and iga_batched in the background
# (as the round's brief asks), beside, at 2^20 cubic elements: (A) 1, 16, 256 columns by the default
# (`gpu`: factor, then solve) and by the overlapped factor-and-solve (`gpu-overlap`: each pass's forward
# map and forward sweep on a second stream beside the level-by-level factorization, its backward map on a
# third, streams of three priorities; `-joint`: both maps in one launch; `-flat`: one priority; the whole
# call timed), with the default's per-launch profiles and the overlap's timeline of the streams; (B) the
# overlap and the default alone at 1, 256 and 1024 columns once the tests are done or cut.
# Usage: bash .dev-iga14/call.sh .dev-iga14
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga14-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
for t in iga_cuda iga_batched; do
  ( GALERKIN_REQUIRE_GPU=1 timeout 235 "$d/tests/$t" --include-ignored > "$OUT/iga14-$t.log" 2>&1; echo "$t rc=$? at $SECONDS s" >> "$OUT/iga14-$t.log" ) &
done
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0"
timeout 120 $G $B --rhs 1,16,256 --rhs-engines gpu,gpu-overlap,gpu-overlap-joint,gpu-overlap-flat --json "$OUT/iga14-rhs.json" > "$OUT/iga14-rhs.txt" 2>&1
echo "bench A rc=$? at $SECONDS s" >> "$OUT/iga14-rhs.txt"
echo "bench A done at $SECONDS s: $(date -u)" >> "$E"
wait
echo "tests done at $SECONDS s: $(date -u)" >> "$E"
left=$((262 - SECONDS)); [ $left -gt 5 ] || left=5
timeout $left $G $B --rhs 1,256,1024 --rhs-engines gpu-overlap,gpu > "$OUT/iga14-rhs-alone.txt" 2>&1
echo "bench B rc=$? at $SECONDS s" >> "$OUT/iga14-rhs-alone.txt"
echo "all done at $SECONDS s: $(date -u)" >> "$E"
tail -n 3 "$OUT"/iga14-iga_*.log
grep -h "bench-iga rhs:\|rc=" "$OUT"/iga14-rhs*.txt | cut -c1-150
grep -h "nrhs=" "$OUT"/iga14-rhs*.txt | cut -c1-230
awk '/^gpu-overlap N=.*nrhs=  256/{f=1;next} /^gpu/{f=0} f' "$OUT"/iga14-rhs.txt | head -50
