#!/usr/bin/env bash
# Stop 56 (issue 17): the gather over the staged law records (HR_RECORDS) on the device — its GPU = CPU and
# Newton tests, then the P2 kernel sweep at 10^6 dofs, 4 points, against the default, and Nsight Compute's
# per-kernel time and bytes of the records kernel and the gather.
# Usage: bash benchmarks/h200/s56-call.sh .dev-s56 (pack: galerkin + tests/hyperelastic_cuda); timeout_s 540.
NAME=${NAME:-lead-s56}; BUDGET=${BUDGET:-500}; source benchmarks/h200/call-lib.sh "$1"
lane 170 hyperelastic_cuda --test-threads 4 gpu_records gpu_recompute_scheme &
wait; lanes_done
V=${V:-"tc cols fuse sty minb20,records w4 100,records w8 100,records w8 200,records w16 200,records w16 220,records w16 200 lminb3,records w16 200 lminb4,gather recompute w8"}
timeout "$(left 150)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature stiffness \
  --hyper-variants "$V" > "$OUT/$NAME-sweep.txt" 2>&1
step "sweep rc $?"
[ -n "$NCU" ] && ncu_step 90 gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
  --kernel-name regex:'hyper_(records|recompute)' --launch-count 4 "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 \
  --hyper-quadrature stiffness --hyper-variants "${NCU_V:-records w16 200}"
keep "$NAME-sweep.txt" "asm\|floor\|blocks," 30
keep "$NAME-ncu.txt" "hyper_\|duration\|bytes\|throughput\|warps_active\|inst_executed" 40
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
