#!/bin/bash
# Per case: two or more binaries alternated (issue 11, op11), each run under `perf stat`: page faults and
# task-clock of the whole process (set-up + warm-up + R assemblies) beside its table; uptime per run.
# usage: assembly-stat.sh R ROUNDS "case..." NAME=BIN ...
R=$1 ROUNDS=$2 CASES=$3; shift 3
echo "# $(date -u) $(uptime)"
for c in $CASES; do for round in $(seq 1 $ROUNDS); do for nb in "$@"; do
  n=${nb%%=*} b=${nb#*=}
  out=$(RAYON_NUM_THREADS=2 perf stat -x, -e page-faults,task-clock "$b" bench --assembly --case $c --repeats $R 2>&1)
  row=$(echo "$out" | grep -E "^(p|q)[0-9]-")
  pf=$(echo "$out" | grep page-faults | cut -d, -f1); tc=$(echo "$out" | grep task-clock | cut -d, -f1)
  echo "$c round $round $n | $row | faults $pf task-clock-ms $tc | $(uptime | sed 's/.*load/load/')"
done; done; done
echo "# end $(date -u)"
