#!/usr/bin/env bash
# Issue 12, seventh round: the whole device call (H100). Run from the checkout root with the packed
# build in $D (device-pack heat5 ...): benchmarks first, then the GPU tests. Results under $OUT.
D=${D:-.dev-heat5}
. "$(dirname "$0")/heat_common.sh"
# 1. The default lattice PCG loop (ring: march with p·q, update and direction with D⁻¹ per node
#    code) and the CuPy peer.
timeout 60 $G $B --dofs 2000000,10000000 --json "$OUT/heat-gpu.json" 2>&1 | tee "$OUT/heat-gpu.txt"
timeout 40 python3 benchmarks/heat_cupy.py --n 125 215 --iters 200 --runs 5 --json "$OUT/cupy.json" 2>&1 | tee "$OUT/cupy.txt"
# 2. The sixth round's problem file at 10^7 (laser on zmax, Robin on zmax and xmin, the other
#    sides at 0, Crank–Nicolson, 50 steps): Robin now inside the lattice kernels.
cp "$D/h.toml" "$OUT/h.toml"
( /usr/bin/time -v timeout 40 $G run "$OUT/h.toml" --backend cuda --quiet --out "$OUT/hout" ) > "$OUT/heat-file-1e7.txt" 2>&1
cp "$OUT/hout/report.json" "$OUT/heat-file-1e7.json" 2>/dev/null; rm -rf "$OUT/hout"
grep -E '"path"|total_iterations|Elapsed|Maximum resident' "$OUT/heat-file-1e7.txt" "$OUT/heat-file-1e7.json" | head
# 3. The GPU tests.
timeout 90 bash "$D/run.sh"
# 4. In the same call: the generic loop (the sixth round's default) and the fused loop at 10^7.
GALERKIN_GRID_PCG=off timeout 30 $G $B --dofs 10000000 2>&1 | tee "$OUT/heat-gpu-generic.txt"
GALERKIN_GRID_PCG=fused timeout 30 $G $B --dofs 10000000 2>&1 | tee "$OUT/heat-gpu-fused.txt"
# 5. 5·10^7 (10 steps, one timed run: the call's time).
timeout 30 $G bench --heat --gpu --cpu-max-dofs 0 --steps 10 --runs 1 --levels none --dofs 50000000 2>&1 | tee "$OUT/heat-gpu-5e7.txt"
