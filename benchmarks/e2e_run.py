"""One timed `galerkin run p215.toml --backend cuda --quiet` for the issue-18 bench scripts
(benchmarks/h100/e2e8-bench.sh, benchmarks/h200/e2e9-bench.sh): under /usr/bin/time -v and a
Python clock (ms), with NAME=VALUE environment settings; appends the run's output to
$OUT/traces.txt and its report to $OUT/reports.jsonl, and prints one summary line (walls, total,
the sum of the phases over both walls, supervisor, exit, teardown, solve-ready and its parts, solve,
output, CG iterations, L2 error).
Usage: python3 benchmarks/e2e_run.py NAME EXE [NAME=VALUE ...]
"""
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
          f"phases/wall={phases / twall:.4f} (python {phases / wall:.4f}) exit={tm.get('exit', float('nan')):.3f} supervisor={tm.get('supervisor', float('nan')):.3f} teardown={tm['teardown']:.3f} solve_ready={tm['solve_ready']:.3f} "
          f"[setup {tm['setup']:.3f} mesh {tm['mesh']:.3f} (to_host {mp.get('device_box.to_host', 0):.3f} boundary {mp.get('device_box.boundary', 0):.3f}) "
          f"space {tm['space']:.3f} assembly {tm['assembly']:.3f} (integrator {ap.get('integrator', 0):.3f} constraints {ap.get('constraints', 0):.3f} matrix {ap.get('matrix', 0):.3f})] "
          f"solve {tm['solve']:.3f} output {tm['output']:.3f} its={r['solver']['iterations']} L2={r['errors']['l2']:.5e} rc={p.returncode}")
except Exception as e:
    print(f"{name} rc={p.returncode} no report: {e}")
