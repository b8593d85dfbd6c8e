#!/usr/bin/env bash
# Issue 18, round e2e6 (H100): the 10^7-unknown run cold, warm twice, and warm with the VTU's
# background preparation late (after the assembly) or on the global pool (the behaviour before),
# and with huge pages for the box's host copy; each with GALERKIN_TRACE=1 and /usr/bin/time -v;
# summary: wall, report total, solve-ready, CG its, L2, total/wall. Then the packed GPU tests.
# Files back: summary.txt, traces.txt, reports.jsonl (one report per run), NAME.log (tests).
# Usage: bash benchmarks/h100/e2e6-bench.sh .dev-NAME
d=$1
tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$OUT/summary.txt"
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/" examples/poisson-3d.toml > p215.toml
run() {
  name=$1; shift
  env "$@" GALERKIN_TRACE=1 /usr/bin/time -v "$d/galerkin" run p215.toml --backend cuda --quiet --out "out-$name" > "run-$name.txt" 2>&1
  echo "rc=$?" >> "run-$name.txt"
  { echo "===== $name ($*)"; cat "run-$name.txt"; } >> "$OUT/traces.txt"
  # One report per line (the device returns at most 8 files).
  python3 -c 'import json,sys; print(json.dumps({"run": sys.argv[1], "report": json.load(open(sys.argv[2]))}))' "$name" "out-$name/report.json" >> "$OUT/reports.jsonl" 2>/dev/null
  python3 - "$name" "out-$name/report.json" "run-$name.txt" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys, re
name, rep, log = sys.argv[1:]
w = re.search(r"Elapsed \(wall clock\) time.*: (\d+):(\S+)", open(log).read())
try:
    wall = int(w.group(1)) * 60 + float(w.group(2))
    r = json.load(open(rep)); tm = r["timings"]; a = tm["assembly_parts"]
    print(f"{name:12s} wall={wall:.2f} total={tm['total']:.3f} solve_ready={tm['solve_ready']:.3f} total/wall={tm['total']/wall:.3f} "
          f"start={tm.get('start', 0):.3f} setup={tm['setup']:.3f} mesh={tm['mesh']:.3f} space={tm['space']:.3f} asm={tm['assembly']:.3f} "
          f"[int {a['integrator']:.3f} cons {a['constraints']:.3f} mat {a['matrix']:.3f}] solve={tm['solve']:.3f} teardown={tm['teardown']:.3f} "
          f"its={r['solver']['iterations']} L2={r['errors']['l2']:.5e}")
except Exception as e:
    print(f"{name} no report: {e}")
PY
  rm -rf "out-$name"
}
run box-cold
run box-warm
run box-warm2
run late GALERKIN_VTU_BACKGROUND=late
run global GALERKIN_VTU_BACKGROUND=global
run huge GALERKIN_HUGE_PAGES=on
run box-warm3
run late2 GALERKIN_VTU_BACKGROUND=late
timeout 150 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^== " "$OUT"/*.log | tail -30
