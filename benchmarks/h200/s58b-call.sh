#!/usr/bin/env bash
# Stop 58's second call: what keeps the H100's L2 75 % busy in the Jacobian kernel without its scatter (the first
# call's counters: `tc no-scatter fuse sty minb20` 0.77 ms at 75 % L2 throughput with 8.3·10⁶ reduction sectors,
# the default 1.39 ms at 71 %) — the L2 throughput's breakdown and the L1/L2 sectors by operation, for the default
# and the no-scatter row (one Jacobian launch each); then the two test binaries the first call cut at 130 s
# (hyperelastic_cuda, iga_cuda, --include-ignored) with more time.
# Usage: bash benchmarks/h200/s58b-call.sh .dev-s58 (the first call's pack); timeout_s 320.
# Run at 05:32 UTC (H100): that 75 % is the row's own stand-in stores; the default's L2 is bound by its atomic unit
# (70 % busy) — BENCHMARKS.md, thirty-third pass.
NAME=${NAME:-lead-s58b}; BUDGET=${BUDGET:-280}; source benchmarks/h200/call-lib.sh "$1"
D="tc cols fuse sty minb20"; N="tc no-scatter fuse sty minb20"
M=gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sector_hit_rate.pct,lts__t_requests.sum,lts__t_sectors.sum
for v in "$D" "$N"; do
  if [ -n "$NCU" ] && [ "$(left 60)" -ge 30 ]; then
    echo "### $v" >> "$OUT/$NAME-ncu.txt"
    ncu_step 45 "$M" -k regex:'^hyper_assemble$' --launch-count 1 "$G" bench --hyper-kernel-sweep --dofs 1000000 \
      --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "$v"
    echo "### $v breakdown" >> "$OUT/$NAME-ncu.txt"
    ncu_step 45 breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed -k regex:'^hyper_assemble$' --launch-count 1 \
      "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "$v"
  fi
done
for b in hyperelastic_cuda iga_cuda; do lane 180 "$b" --test-threads 8 & done
wait; lanes_done
keep "$NAME-ncu.txt" "###\|hyper_assemble (\|  [a-z0-9_]*__[a-z0-9_.]*  \|ERR" 90
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc \|has been running" 40
cat "$OUT/$NAME-steps.txt"
