#!/usr/bin/env bash
# hyper25's device call (round 25, H200): the Jacobian in node-block storage (`HK_SCATTER_BLOCKS`: the column walk
# adds whole 3 × 3 node blocks, 72 contiguous bytes, instead of 24-byte pieces of CSR rows). First the GPU = CPU
# tests (the block storage: converted to CSR on host and device, its product, `GALERKIN_HYPER_SCHEME=blocks`; the
# fused shapes with the default among them); then the 10^6 P2 sweep at the stiffness rule (--runs 5): the default,
# the default scattering blocks, the scatter's bounds (`tc no-scatter fuse sty minb20`, `… keep2`), `tc cols` and
# `tc blocks`; the blocks row prints the L2 sectors a cell counted on the pattern and its passes' times; the sweep
# again in another order (the spread); Nsight Compute's L2 counters of the default and the blocks row last.
# At most 8 files under $OUT. Run as `bash .dev-hyper25/call.sh .dev-hyper25` (BUDGET ≤ 240 s).
NAME=hyper25; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
P="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2"; S="$P --runs 5"  # (P: ncu's one run)
# sweep SECONDS VARIANTS: the 10^6 P2 kernel sweep at the stiffness rule, appended to $OUT/hyper25-sweep.txt
sweep() {
  echo "==== stiffness: $2" >> "$OUT/hyper25-sweep.txt"
  timeout "$(left "$1")" "$G" $S --hyper-quadrature stiffness --hyper-variants "$2" >> "$OUT/hyper25-sweep.txt" 2>&1
  step "sweep rc $?"
}
clocks_start
# 1. GPU = CPU (GALERKIN_REQUIRE_GPU=1): the block storage (P2, both rules, every law, 3 shapes and the CSR-converting
#    system), the fused shapes (the default among them)
test_step 95 hyperelastic_cuda gpu_blocks_equal_the_cpu gpu_fuse_equals_the_cpu
# 2. the stiffness-rule sweep: the default, its block scatter, the bounds, the unfused pair
sweep 50 "tc cols fuse sty minb20,tc blocks fuse sty minb20,tc no-scatter fuse sty minb20,tc cols fuse sty minb20 keep2,tc cols,tc blocks"
# 3. again, another order (the spread)
sweep 35 "tc blocks fuse sty minb20,tc cols fuse sty minb20,tc cols fuse sty minb20 keep2,tc no-scatter fuse sty minb20"
# 4. Nsight Compute: one Jacobian launch of the default and of the blocks row: L2 reductions, throughput, registers
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
# prof SECONDS VARIANT: its first Jacobian launch under Nsight Compute, where ncu is there and ≥ 23 s are left
prof() {
  if [ -z "$NCU" ] || [ "$(left 40)" -le 22 ]; then step "ncu $2 skipped"; return; fi
  echo "==== ncu $2" >> "$OUT/hyper25-ncu.txt"
  ncu_step "$1" "$M" -k regex:'^hyper_assemble' --launch-count 1 "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "$2"
}
prof 30 "tc blocks fuse sty minb20"
prof 25 "tc cols fuse sty minb20"
finish '^====\|floor\|^tc \|sectors' 'test result\|FAILED\|panicked\|^test ' '^====\|hyper_assemble\|gpu__time\|lts__\|dram__\|smsp__\|sm__warps\|launch__'
ls -la "$OUT"
