#!/usr/bin/env bash
# Issue 12, sixth round: the whole device call (H100). Run from the checkout root with the packed
# build in $D (device-pack heat4 ...): benchmarks first, then the GPU tests. Results under $OUT.
D=${D:-.dev-heat4}
. "$(dirname "$0")/heat_common.sh"
# 1. The new march (side stencils, ring of four planes) and, in the same call, the fifth round's
#    build (baseline binary, when packed).
timeout 80 $G $B --dofs 2000000,10000000 --json "$OUT/heat-gpu.json" 2>&1 | tee "$OUT/heat-gpu.txt"
[ -x "$D/galerkin-base" ] && timeout 40 $D/galerkin-base $B --dofs 10000000 2>&1 | tee "$OUT/heat-gpu-base.txt"
GALERKIN_GRID_KERNEL=march timeout 20 $G $B --dofs 2000000 2>&1 | tee "$OUT/heat-gpu-march-2e6.txt"
timeout 40 python3 benchmarks/heat_cupy.py --n 125 215 --iters 200 --runs 5 --json "$OUT/cupy.json" 2>&1 | tee "$OUT/cupy.txt"
# 2. A problem file at 10^7 on the direct lattice: laser on zmax (on 5 ms .. 80 ms), Robin on
#    zmax and xmin, the other sides at 0, Crank–Nicolson, 50 steps.
sed 's/n = \[24, 24, 24\]/n = [215, 215, 215]/; s/steps = 20/steps = 50/; s/output_every = 10/output_every = 0/; s/boundary = \["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"\]/boundary = ["xmax", "ymin", "ymax", "zmin"]/' \
    examples/heat-lattice.toml > "$OUT/h.toml"
cat >> "$OUT/h.toml" <<'TOML'

[[bc]]
type = "robin"
boundary = ["zmax", "xmin"]
h = 10.0
ambient = 0.2

[[bc]]
type = "laser"
boundary = "zmax"
power = 2.0
radius = 0.1
centre = [0.5, 0.5, 1.0]
on = 0.005
off = 0.08
TOML
( /usr/bin/time -v timeout 60 $G run "$OUT/h.toml" --backend cuda --quiet --out "$OUT/hout" ) > "$OUT/heat-file-1e7.txt" 2>&1
cp "$OUT/hout/report.json" "$OUT/heat-file-1e7.json" 2>/dev/null; rm -rf "$OUT/hout"
grep -E '"path"|total_iterations|Elapsed|Maximum resident' "$OUT/heat-file-1e7.txt" "$OUT/heat-file-1e7.json" | head
# 3. 5·10^7 (10 steps, one timed run: the call's time).
timeout 45 $G bench --heat --gpu --cpu-max-dofs 0 --steps 10 --runs 1 --levels none --dofs 50000000 2>&1 | tee "$OUT/heat-gpu-5e7.txt"
# 4. The GPU tests.
timeout 100 bash "$D/run.sh"
