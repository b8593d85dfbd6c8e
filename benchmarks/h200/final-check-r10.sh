#!/usr/bin/env bash
# Lead's device check of merged main after round 10 (one call, ≤ 600 s): final-check.sh (p215 cold and
# warm, every packed GPU test binary), then the IGA many-rhs sweep (default engine and round 10's
# opt-in ones) and the 10^7 hyperelastic Newton run with `step_rtol = 1e-2` and the cutback fix,
# cut off at the call's end. The p215 files are tarred so that $OUT keeps ≤ 8 files.
# Usage: bash benchmarks/h200/final-check-r10.sh .dev-NAME
d=$1
SECONDS=0
bash benchmarks/h100/final-check.sh "$d"
tar -C "$OUT" -cf "$OUT/p215.tar" $(cd "$OUT" && ls p215-*) && rm -f "$OUT"/p215-*
G=$d/galerkin
timeout 70 $G bench-iga --gpu --sweeps rhs --rhs 1,16,256,1024 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
  --rhs-engines gpu,gpu-maps-sep-stream,gpu-maps-sep-split --json "$OUT/iga-rhs.json" > "$OUT/iga-rhs.txt" 2>&1
echo "iga rc=$? at $SECONDS s" | tee -a "$OUT/iga-rhs.txt"
left=$((585 - SECONDS)); [ $left -gt 20 ] || left=20
GALERKIN_NEWTON_TRACE=1 timeout $left $G bench --hyperelastic --dofs 10000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 \
  --runs 1 --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2' --json "$OUT/hyper1e7.json" > "$OUT/hyper1e7.txt" 2>&1
echo "1e7 rc=$? in ${left}s limit, at $SECONDS s" | tee -a "$OUT/hyper1e7.txt"
tail -3 "$OUT/iga-rhs.txt"; grep -c "newton [0-9]" "$OUT/hyper1e7.txt"; tail -3 "$OUT/hyper1e7.txt" | cut -c1-300
