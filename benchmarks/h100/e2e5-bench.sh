#!/usr/bin/env bash
# Issue 18, branch e2e5: the 10^7-unknown run with the device box (now the default) from a cold
# then a warm PTX cache, then the host mesh (GALERKIN_DEVICE_BOX=off) warm, with step traces
# (GALERKIN_TRACE=1) in all.txt; then the GPU tests (box_cuda with its 215³ test, twice).
d=.dev-e2e5
tar -C "$d" -xJf "$d/bin.tar.xz"
A="$OUT/all.txt"
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc; cat /sys/kernel/mm/transparent_hugepage/enabled; } >> "$A"
s='s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/'
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; $s" examples/poisson-3d.toml > p215.toml
go() {  # name env...
  local name=$1; shift
  env "$@" GALERKIN_TRACE=1 /usr/bin/time -v $d/galerkin run p215.toml --backend cuda --quiet --out "out-$name" > "t-$name.out" 2>&1
  local rc=$?
  python3 - "$name" "$rc" "out-$name/report.json" "t-$name.out" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys, re
name, rc, rep, log = sys.argv[1:]
t = open(log).read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", t)
w = wall.group(1) if wall else "?"
try:
    r = json.load(open(rep)); tm = r["timings"]
    print(f"{name} rc={rc} wall={w} total={tm['total']:.3f} solve_ready={tm['solve_ready']:.3f} its={r['solver']['iterations']} L2={r['errors']['l2']:.5e} H1={r['errors']['h1_semi']:.5e}")
except Exception as e:
    print(f"{name} rc={rc} wall={w} no report: {e}")
PY
  { echo "=== $name"; cat "t-$name.out"; echo "--- report"; cat "out-$name/report.json"; echo; } >> "$A"
  cp "out-$name/report.json" "$OUT/$name-report.json" 2>/dev/null
  rm -rf "out-$name"
}
go box-cold
go box-warm
go host-warm GALERKIN_DEVICE_BOX=off
timeout 170 bash $d/run.sh > t-tests.out 2>&1; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
GALERKIN_REQUIRE_GPU=1 timeout 60 $d/tests/box_cuda-* --include-ignored device_box >> t-tests.out 2>&1; echo "box_cuda again rc=$?" | tee -a "$OUT/summary.txt"
cp t-tests.out "$OUT/tests.txt"
grep -E "^test result|FAILED|panicked|^== " t-tests.out | tail -30
