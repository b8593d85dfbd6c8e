#!/usr/bin/env bash
# Issue 18, branch e2e4: the 10^7-unknown run (cold then warm PTX cache), main's binary as the
# baseline on the same machine (cold, warm), the 100^3 run, then the GPU tests. Few files come
# back: everything but the reports goes into all.txt.
d=.dev-e2e4
tar -C "$d" -xJf "$d/bin.tar.xz"
xz -dc "$d/galerkin-main.xz" > "$d/galerkin-main" && chmod +x "$d/galerkin-main"
A="$OUT/all.txt"
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc; } >> "$A"
s='s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/'
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; $s" examples/poisson-3d.toml > p215.toml
sed "s/n = \[12, 12, 12\]/n = [100, 100, 100]/; $s" examples/poisson-3d.toml > p100.toml
go() {  # name binary file keep-report
  /usr/bin/time -v "$2" run "$3" --backend cuda --quiet --out "out-$1" > "t-$1.out" 2>&1
  echo "$1 rc=$? $(grep -E 'Elapsed|Maximum resident|User time|System time' "t-$1.out" | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  { echo "=== $1"; cat "t-$1.out"; echo "--- report"; cat out-"$1"/report.json; echo; } >> "$A"
  [ "$4" = keep ] && cp out-"$1"/report.json "$OUT/$1-report.json"
  rm -rf "out-$1"
}
go e2e4-215-cold $d/galerkin p215.toml keep
go e2e4-215-warm $d/galerkin p215.toml keep
go main-215-a $d/galerkin-main p215.toml
go main-215-warm $d/galerkin-main p215.toml keep
go e2e4-215-warm2 $d/galerkin p215.toml
go e2e4-100 $d/galerkin p100.toml keep
go main-100 $d/galerkin-main p100.toml
timeout 150 bash $d/run.sh > t-tests.out 2>&1; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
{ echo "=== tests"; cat t-tests.out; } >> "$A"
tail -8 t-tests.out
