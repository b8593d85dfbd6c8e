#!/usr/bin/env bash
# hnewton11's device call (limit 200 s, planned to the second): from t = 0 the one-core 10^6 run
# on core 15 (≤ 165 s: a lower bound if cut) beside the 10^7 GPU Newton run on cores 0-14 (≤ 163 s);
# then the multigrid GPU tests of hyperelastic_cuda (filtered, ≤ 32 s); the 10^6 GPU row if time is left.
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
RAYON_NUM_THREADS=1 GALERKIN_NEWTON_TRACE=1 taskset -c 15 timeout 165 $G bench --hyperelastic --dofs 1000000 --degrees 2 \
  --cpu1-max-dofs 2000000 --cpu-max-dofs 0 --runs 1 --solve-max-dofs 0 --hyper-loads 'step_rtol = 1e-2' \
  --json "$OUT/cpu1e6.json" > "$OUT/cpu1e6.txt" 2>&1 &
cpu=$!
GALERKIN_NEWTON_TRACE=1 RAYON_NUM_THREADS=15 taskset -c 0-14 timeout 163 $G bench --hyperelastic --dofs 10000000 --degrees 2 --gpu \
  --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2; regrow_after = 2' \
  --json "$OUT/gpu1e7.json" > "$OUT/gpu1e7.txt" 2>&1
echo "1e7 rc=$? in 163 s limit, at $SECONDS s" | tee -a "$OUT/gpu1e7.txt"
left=$((197 - SECONDS)); [ $left -gt 32 ] && left=32
( export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1; nvidia-smi --query-gpu=name,memory.total --format=csv;
  taskset -c 0-14 timeout $left "$d/tests/hyperelastic_cuda" multigrid --include-ignored ) > "$OUT/hnewton11.log" 2>&1
echo "tests rc=$? in ${left} s limit, at $SECONDS s" | tee -a "$OUT/hnewton11.log"
wait $cpu; echo "cpu1e6 rc=$? at $SECONDS s" | tee -a "$OUT/cpu1e6.txt"
left=$((197 - SECONDS))
if [ $left -ge 12 ]; then
  RAYON_NUM_THREADS=15 taskset -c 0-14 timeout $left $G bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 \
    --cpu-max-dofs 0 --runs 1 --solve-max-dofs 0 --hyper-loads 'step_rtol = 1e-2' --json "$OUT/gpu1e6.json" > "$OUT/gpu1e6.txt" 2>&1
  echo "gpu1e6 rc=$? at $SECONDS s" | tee -a "$OUT/gpu1e6.txt"
fi
grep -c "newton [0-9]" "$OUT/gpu1e7.txt"; grep "abandoned" "$OUT/gpu1e7.txt" | cut -c1-60; tail -4 "$OUT/gpu1e7.txt" | cut -c1-250
grep -h "setup\|copy" "$OUT"/*.txt | cut -c1-300; tail -2 "$OUT/cpu1e6.txt" | cut -c1-200; grep "test \|test result\|FAILED\|panicked" "$OUT/hnewton11.log"
