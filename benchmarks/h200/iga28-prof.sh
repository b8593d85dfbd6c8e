#!/usr/bin/env bash
# Round 28's profile of issue 15's 256-column solve (one call, ≤ 280 s): what binds the passes that are not
# at the copy rate — forward 0 (72 % of copy), forward 1 (66 %), backward 1 (61 %) — by Nsight Compute's full
# set (memory workload tables, source counters, warp states) on each one's launch in a 256-column solve by the
# best engine measured (gpu-rows-w64x2-bpf-sx-ip), after the per-launch profile of that engine and the default.
# Usage: bash benchmarks/h200/iga28-prof.sh .dev-r27
NAME=iga28; BUDGET=${BUDGET:-280}; source benchmarks/h200/call-lib.sh "$1"
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
N=$OUT/$NAME-ncu.txt
E=gpu-rows-w64x2-bpf-sx-ip
timeout "$(left 40)" "$G" $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows,$E > "$OUT/$NAME-rhs.txt" 2>&1
step "bench rc $?"
# full KERNEL SKIP: ncu's full set on KERNEL's launch after SKIP of them in one 256-column solve by $E.
full() {
  if [ -z "$NCU" ] || [ "$(left 80)" -lt 30 ]; then echo "ncu $1 skipped: $(left 80) s left, ncu '$NCU'" >> "$N"; return; fi
  step "ncu $1 skip $2"
  echo "######## $1 skip $2" >> "$N"
  timeout "$(left 75)" "$NCU" --clock-control none --import-source no --set full -k "regex:^$1\$" --launch-skip "$2" --launch-count 1 \
    "$G" $B --reps 1 --rhs 256 --rhs-engines "$E" >> "$N" 2>&1
  echo "ncu $1 rc=$?" >> "$N"
}
full mf_mapssbtp_forward 0
full mf_mapssbtp_forward 1
full mf_mapssb_backward_2 0
step "done"
keep "$NAME-rhs.txt" "nrhs=  256\|forward 0\|forward 1\|backward 1" 12
keep "$NAME-ncu.txt" "^########\|Duration\|DRAM Throughput\|L2 Cache Throughput\|Achieved Occ\|Warp Cycles Per Issued\|rc=\|skipped" 40
cat "$OUT/$NAME-steps.txt"
