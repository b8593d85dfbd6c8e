#!/usr/bin/env bash
# Issue 18, round e2e8 (H100): the 10^7-unknown run under its supervising parent (the default:
# the report's phases include `supervisor` and `exit`), cold once and warm eight times (the third
# traced with GALERKIN_TRACE=1), then twice unsupervised (GALERKIN_SUPERVISE=0, the report as
# before) for comparison; every run under /usr/bin/time -v, its wall clock also taken by Python
# around it (ms, not time's 10 ms). Then the packed GPU tests.
# Per run: time's wall, the report's total, total/wall, the sum of the phases/wall (both walls),
# the exit and supervisor phases, solve-ready, CG iterations, L2 error.
# Files back: summary.txt, traces.txt, reports.jsonl (one report per run), NAME.log (tests).
# Usage: bash benchmarks/h100/e2e8-bench.sh .dev-NAME [call2]
# `call2` (the second call): two warm-up runs before the warm ones, six warm runs, one unsupervised
# run and no tests.
d=$1
tar -C "$d" -xJf "$d/bin.tar.xz"
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; grep -m1 "model name" /proc/cpuinfo; grep -c ^processor /proc/cpuinfo; } | tee -a "$OUT/summary.txt"
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/" examples/poisson-3d.toml > p215.toml
run() {
  name=$1; shift
  python3 - "$name" "$d/galerkin" "$@" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, re, subprocess, sys, time
name, exe, envs = sys.argv[1], sys.argv[2], sys.argv[3:]
env = dict(os.environ, **dict(e.split("=", 1) for e in envs))
out = f"out-{name}"
t0 = time.monotonic()
p = subprocess.run(["/usr/bin/time", "-v", exe, "run", "p215.toml", "--backend", "cuda", "--quiet", "--out", out], env=env, capture_output=True, text=True)
wall = time.monotonic() - t0
log = p.stdout + p.stderr
with open(os.path.join(os.environ["OUT"], "traces.txt"), "a") as f:
    f.write(f"===== {name} {' '.join(envs)} rc={p.returncode} python wall {wall:.4f} s\n{log}\n")
w = re.search(r"Elapsed \(wall clock\) time.*: (\d+):(\S+)", log)
twall = int(w.group(1)) * 60 + float(w.group(2)) if w else float("nan")
try:
    r = json.load(open(f"{out}/report.json"))
    with open(os.path.join(os.environ["OUT"], "reports.jsonl"), "a") as f:
        f.write(json.dumps({"run": name, "env": envs, "python_wall": wall, "time_wall": twall, "report": r}) + "\n")
    tm = r["timings"]
    phases = sum(v for k, v in tm.items() if isinstance(v, (int, float)) and k not in ("total", "unaccounted", "solve_ready", "ended_at"))
    print(f"{name:12s} wall={twall:.2f} (python {wall:.3f}) total={tm['total']:.3f} total/wall={tm['total'] / twall:.4f} "
          f"phases/wall={phases / twall:.4f} (python {phases / wall:.4f}) exit={tm.get('exit', float('nan')):.4f} supervisor={tm.get('supervisor', float('nan')):.4f} "
          f"teardown={tm['teardown']:.3f} solve_ready={tm['solve_ready']:.3f} its={r['solver']['iterations']} L2={r['errors']['l2']:.5e} rc={p.returncode}")
except Exception as e:
    print(f"{name} rc={p.returncode} no report: {e}")
PY
  rm -rf "out-$name"
}
mode=${2:-call1}
run cold
[ "$mode" = call2 ] && { run warmup1; run warmup2; }
run warm1
run warm2
run warm3-trace GALERKIN_TRACE=1
run warm4
run warm5
run warm6
[ "$mode" = call2 ] || { run warm7; run warm8; }
run alone1 GALERKIN_SUPERVISE=0
[ "$mode" = call2 ] && exit 0
run alone2 GALERKIN_SUPERVISE=0
timeout 120 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^== " "$OUT"/*.log | tail -30
