#!/usr/bin/env bash
# hyper24's device call (round 24, H200): the fused law with Y's space and 20 cells an SM (`tc cols fuse sty minb20`)
# as the default at ≤ 4 points (P2), `tc cols` at Newton's 14; and the scatter's bounds. First the GPU = CPU tests
# (the fused shapes, the stiffness rule through GpuHyper::new — the new default —, the default at the full rule, the
# multigrid at the stiffness rule); then the 10^6 P2 sweep at the stiffness rule (--runs 5): the default before and
# after, the fused rows, the scatter's bounds (`… store`: plain racy stores at the same places, a coloured scatter's
# most; `… keep2`: 2 rows of every 5 added, a perfect patch reduction's ≈ 1/2.56 of the adds; `tc no-scatter fuse sty
# minb20`: none); the 14-point row; the stiffness sweep again (the spread); Nsight Compute's L2/DRAM counters of the
# scatter rows last. At most 8 files under $OUT. Run as `bash .dev-hyper24/call.sh .dev-hyper24` (BUDGET ≤ 240 s).
NAME=hyper24; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
P="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2"; S="$P --runs 5"  # (P: ncu's one run)
# sweep RULE SECONDS VARIANTS: the 10^6 P2 kernel sweep, appended to $OUT/hyper24-sweep.txt
sweep() {
  echo "==== $1: $3" >> "$OUT/hyper24-sweep.txt"
  timeout "$(left "$2")" "$G" $S --hyper-quadrature "$1" --hyper-variants "$3" >> "$OUT/hyper24-sweep.txt" 2>&1
  step "sweep $1 rc $?"
}
clocks_start
# 1. GPU = CPU (GALERKIN_REQUIRE_GPU=1): the fused shapes (the new default's among them), the stiffness rule through
#    GpuHyper::new (the new default), the default at the full rule (unchanged), the multigrid at the stiffness rule
test_step 95 hyperelastic_cuda gpu_fuse_equals_the_cpu gpu_stiffness_rule_equals_the_cpu gpu_residual_and_jacobian_equal_the_cpu gpu_multigrid_with_the_stiffness_rule_equals_the_cpu
# 2. the stiffness-rule sweep: before/after default, the fused rows, the scatter's bounds
sweep stiffness 40 "tc cols,tc cols fuse sty minb20,tc no-scatter fuse sty minb20,tc cols fuse sty minb20 store,tc cols fuse sty minb20 keep2,tc cols fuse,tc no-scatter fuse,tc no-scatter"
# 3. Newton's 14-point rule: `tc cols` stays its default
sweep full 20 "tc cols,tc cols fuse sty minb20,tc cols fuse"
# 4. the stiffness sweep again, another order (the spread)
sweep stiffness 30 "tc cols fuse sty minb20,tc cols,tc cols fuse sty minb20 keep2,tc cols fuse sty minb20 store,tc no-scatter fuse sty minb20"
# 5. Nsight Compute: one Jacobian launch of each scatter row, the L2 reductions, DRAM bytes, occupancy
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active
for v in "tc cols fuse sty minb20" "tc cols fuse sty minb20 keep2" "tc cols fuse sty minb20 store" "tc cols"; do
  [ -n "$NCU" ] && [ "$(left 40)" -gt 25 ] || { step "ncu $v skipped"; continue; }
  echo "==== ncu $v" >> "$OUT/hyper24-ncu.txt"
  ncu_step 25 "$M" -k regex:'^hyper_assemble' --launch-count 1 "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "$v"
done
finish '^====\|floor\|^tc ' 'test result\|FAILED\|panicked\|^test ' '^====\|hyper_assemble\|gpu__time\|lts__\|dram__\|smsp__\|sm__warps\|l1tex__'
ls -la "$OUT"
