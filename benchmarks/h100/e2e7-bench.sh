#!/usr/bin/env bash
# Issue 18, round e2e7 (H100): the 10^7-unknown run cold once, warm six times (the third traced
# with GALERKIN_TRACE=1), then warm twice with GALERKIN_FAST_EXIT=1 (the second traced) and once
# more warm by default (the JIT caches still warm after `_exit`); every run under
# /usr/bin/time -v, its wall clock also taken by Python around it (ms, not time's 10 ms), and on
# traced runs the exit measured from `main: end` to the moment the parent reaped the process (the
# boot clock on both sides). Then the packed GPU tests. (GALERKIN_FAST_EXIT, which ended the run by
# `_exit`, was removed after this call: it gained nothing. The fast* runs are now plain warm runs.)
# Files back: summary.txt, traces.txt, reports.jsonl (one report per run), NAME.log (tests).
# Usage: bash benchmarks/h100/e2e7-bench.sh .dev-NAME
d=$1
tar -C "$d" -xJf "$d/bin.tar.xz"
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; grep -m1 "model name" /proc/cpuinfo; grep -c ^processor /proc/cpuinfo;
  grep -m1 -o -w sha_ni /proc/cpuinfo || echo "no sha_ni"; } | tee -a "$OUT/summary.txt"
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
reaped = time.clock_gettime(time.CLOCK_BOOTTIME)
wall = time.monotonic() - t0
log = p.stdout + p.stderr
with open(os.path.join(os.environ["OUT"], "traces.txt"), "a") as f:
    f.write(f"===== {name} {' '.join(envs)} rc={p.returncode} python wall {wall:.4f} s, reaped at boot clock {reaped:.4f} s\n{log}\n")
w = re.search(r"Elapsed \(wall clock\) time.*: (\d+):(\S+)", log)
twall = int(w.group(1)) * 60 + float(w.group(2)) if w else float("nan")
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", log)
end = re.search(r"main: end \(boot clock (\S+) s\)", log)
hnd = re.search(r"exit handlers done \(boot clock (\S+) s\)", log)
try:
    r = json.load(open(f"{out}/report.json"))
    with open(os.path.join(os.environ["OUT"], "reports.jsonl"), "a") as f:
        f.write(json.dumps({"run": name, "env": envs, "python_wall": wall, "time_wall": twall, "report": r}) + "\n")
    tm = r["timings"]; of = tm["output_files"]
    exit_s = f" exit={reaped - float(end.group(1)):.4f}" if end else ""
    if end and hnd:
        exit_s += f" [handlers {float(hnd.group(1)) - float(end.group(1)):.4f}, then {reaped - float(hnd.group(1)):.4f}]"
    bg = " ".join(f"{k.split('.')[-1]}={of[k]:.3f}" for k in sorted(of) if k.startswith("vtu.background"))
    print(f"{name:10s} wall={wall:.3f} (time {twall:.2f}) total={tm['total']:.3f} total/wall={tm['total'] / wall:.4f} solve_ready={tm['solve_ready']:.3f} "
          f"output={tm['output']:.3f} (vtu {of.get('vtu', 0):.3f}; bg {bg}) teardown={tm['teardown']:.3f} start={tm['start']:.3f}{exit_s} "
          f"its={r['solver']['iterations']} L2={r['errors']['l2']:.5e} maxrss={int(rss.group(1)) / 1e6 if rss else 0:.2f}GB")
except Exception as e:
    print(f"{name} rc={p.returncode} no report: {e}")
PY
  rm -rf "out-$name"
}
run cold
run warm1
run warm2
run warm3-trace GALERKIN_TRACE=1
run warm4
run warm5
run warm6
run fast1 GALERKIN_FAST_EXIT=1
run fast2-trace GALERKIN_FAST_EXIT=1 GALERKIN_TRACE=1
run warm7
timeout 170 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^== " "$OUT"/*.log | tail -30
