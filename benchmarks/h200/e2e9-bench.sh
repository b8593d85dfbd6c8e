#!/usr/bin/env bash
# Issue 18, round e2e9 (H200, nvidia-h200): the 10^7-unknown run (p215.toml: examples/poisson-3d.toml
# at n = 215, P1, rtol 1e-8), supervised (the default), under /usr/bin/time -v and a Python clock
# (ms). First the machine (GPU, host CPU, transparent huge pages, `galerkin devices`: host triad and
# device copy bandwidth), then the guest's memory grown once (Firecracker grows it on first touch,
# about 3 s per 8 GiB: that would otherwise land in the first runs), then: cold once, warm five
# times (the third traced with GALERKIN_TRACE=1), each switch of this round off once
# (GALERKIN_OVERLAP_PATTERN=0: the pattern after the host's set-up; GALERKIN_BOX_DOWNLOAD_CHUNK=8388608:
# the download chunk before this round), one unsupervised run, and, where a second directory holds
# main's binary (`galerkin`), three warm runs of it as the baseline on the same machine. Then the
# packed GPU tests.
# Per run: time's wall, the report's total, total/wall, the sum of the phases over both walls,
# exit, solve-ready and its parts, CG iterations, L2 error.
# Files back: summary.txt, traces.txt, reports.jsonl, NAME.log (tests).
# Usage: bash benchmarks/h200/e2e9-bench.sh .dev-NAME [DIR-WITH-MAINS-galerkin]
d=$1
base=${2:-}
tar -C "$d" -xJf "$d/bin.tar.xz"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; grep -m1 "model name" /proc/cpuinfo; grep -c ^processor /proc/cpuinfo
  echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"; uname -r; grep -E "MemTotal|MemFree" /proc/meminfo; } | tee -a "$OUT/summary.txt"
"$d/galerkin" devices 2>&1 | tee -a "$OUT/summary.txt"
python3 -c '
import time, numpy as np
t = time.monotonic(); a = np.ones(2 << 30); del a
print(f"guest memory grown: 16 GiB touched in {time.monotonic() - t:.1f} s")' 2>&1 | tee -a "$OUT/summary.txt"
grep -E "MemTotal|MemFree" /proc/meminfo | tee -a "$OUT/summary.txt"
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/" examples/poisson-3d.toml > p215.toml
run() {
  name=$1; exe=$2; shift 2
  python3 - "$name" "$exe" "$@" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, re, subprocess, sys, time
name, exe, envs = sys.argv[1], sys.argv[2], sys.argv[3:]
env = dict(os.environ, **dict(e.split("=", 1) for e in envs))
out = f"out-{name}"
t0 = time.monotonic()
p = subprocess.run(["/usr/bin/time", "-v", exe, "run", "p215.toml", "--backend", "cuda", "--quiet", "--out", out], env=env, capture_output=True, text=True)
wall = time.monotonic() - t0
log = p.stdout + p.stderr
with open(os.path.join(os.environ["OUT"], "traces.txt"), "a") as f:
    f.write(f"===== {name} {exe} {' '.join(envs)} rc={p.returncode} python wall {wall:.4f} s\n{log}\n")
w = re.search(r"Elapsed \(wall clock\) time.*: (\d+):(\S+)", log)
twall = int(w.group(1)) * 60 + float(w.group(2)) if w else float("nan")
try:
    r = json.load(open(f"{out}/report.json"))
    with open(os.path.join(os.environ["OUT"], "reports.jsonl"), "a") as f:
        f.write(json.dumps({"run": name, "exe": exe, "env": envs, "python_wall": wall, "time_wall": twall, "report": r}) + "\n")
    tm = r["timings"]; mp = tm.get("mesh_parts", {}); ap = tm.get("assembly_parts", {})
    phases = sum(v for k, v in tm.items() if isinstance(v, (int, float)) and k not in ("total", "unaccounted", "solve_ready", "ended_at"))
    print(f"{name:12s} wall={twall:.2f} (python {wall:.3f}) total={tm['total']:.3f} total/wall={tm['total'] / twall:.4f} "
          f"phases/wall={phases / twall:.4f} (python {phases / wall:.4f}) exit={tm.get('exit', float('nan')):.3f} solve_ready={tm['solve_ready']:.3f} "
          f"[setup {tm['setup']:.3f} mesh {tm['mesh']:.3f} (to_host {mp.get('device_box.to_host', 0):.3f} boundary {mp.get('device_box.boundary', 0):.3f}) "
          f"space {tm['space']:.3f} assembly {tm['assembly']:.3f} (integrator {ap.get('integrator', 0):.3f} constraints {ap.get('constraints', 0):.3f} matrix {ap.get('matrix', 0):.3f})] "
          f"solve {tm['solve']:.3f} output {tm['output']:.3f} its={r['solver']['iterations']} L2={r['errors']['l2']:.5e} rc={p.returncode}")
except Exception as e:
    print(f"{name} rc={p.returncode} no report: {e}")
PY
  rm -rf "out-$name"
}
g=$d/galerkin
run cold "$g"
run warm1 "$g"
run warm2 "$g"
run warm3-trace "$g" GALERKIN_TRACE=1
run warm4 "$g"
run warm5 "$g"
run no-overlap "$g" GALERKIN_OVERLAP_PATTERN=0
run old-chunk "$g" GALERKIN_BOX_DOWNLOAD_CHUNK=8388608
run alone "$g" GALERKIN_SUPERVISE=0
if [ -n "$base" ] && [ -x "$base/galerkin" ]; then
  run main-warm1 "$base/galerkin"
  run main-warm2 "$base/galerkin"
  run main-warm3 "$base/galerkin"
fi
run warm6 "$g"
timeout 100 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^=== " "$OUT"/*.log | tail -30
