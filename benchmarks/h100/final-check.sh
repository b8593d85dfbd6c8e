#!/usr/bin/env bash
# Lead's check of merged main on the device: the issue-18 run at 10^7 unknowns (device box, cold
# then warm PTX cache, twice warm; summary lines as benchmarks/h100/e2e5-bench.sh prints them),
# then every GPU test binary packed by `/work/tools/device-pack NAME …` (GALERKIN_REQUIRE_GPU=1).
# Usage: bash benchmarks/h100/final-check.sh .dev-NAME
d=$1
tar -C "$d" -xJf "$d/bin.tar.xz"
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/" examples/poisson-3d.toml > p215.toml
for name in box-cold box-warm box-warm2; do
  GALERKIN_TRACE=1 /usr/bin/time -v "$d/galerkin" run p215.toml --backend cuda --quiet --out "out-$name" > "$OUT/p215-$name.txt" 2>&1
  echo "rc=$?" >> "$OUT/p215-$name.txt"
  cp "out-$name/report.json" "$OUT/p215-$name-report.json" 2>/dev/null
  python3 - "$name" "out-$name/report.json" "$OUT/p215-$name.txt" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys, re
name, rep, log = sys.argv[1:]
w = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", open(log).read())
try:
    r = json.load(open(rep)); tm = r["timings"]
    ws = w.group(1) if w else "?"
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(ws.split(":")))) if w else float("nan")
    print(f"{name} wall={ws} total={tm['total']:.3f} total/wall={tm['total'] / secs:.3f} solve_ready={tm['solve_ready']:.3f} its={r['solver']['iterations']} L2={r['errors']['l2']:.5e}")
except Exception as e:
    print(f"{name} no report: {e}")
PY
  rm -rf "out-$name"
done
# SKIP_TESTS=1: the caller runs the test binaries itself (final-check-r11.sh runs them in lanes).
[ "${SKIP_TESTS:-0}" = 1 ] && exit 0
timeout 520 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^== " "$OUT"/*.log | tail -40
