#!/usr/bin/env bash
# Lead's device check of main after round 28's merges (≤ 300 s): round 28's GPU tests in two lanes (iga28's split
# contributions, tidy28's cached in-place scratch; tidy28's node-block positions formed once), then on a quiet GPU
# issue 15's rhs sweep with iga28's rows (-xsb backward only, -xs both ways, -xs-sx-ip) at 1, 64 and 256 columns,
# and issues 16's and 17's targets with the defaults.
# Usage: bash benchmarks/h200/final-check-r28.sh .dev-NAME   (test binaries: iga_cuda, hyperelastic_cuda)
NAME=lead-r28-final; BUDGET=${BUDGET:-300}; source benchmarks/h200/call-lib.sh "$1"
lane 110 iga_cuda ${IGA_TESTS:-gpu_split_contributions gpu_in_place_solve} --test-threads 2 &
lane 110 hyperelastic_cuda ${HYPER_TESTS:-gpu_blocks_equal_the_cpu} --test-threads 2 &
wait; lanes_done
timeout "$(left 90)" "$G" bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576 --reps 3 --rhs 1,64,256 \
  --rhs-engines "${IGA_ENGINES:-gpu-rows,gpu-rows-xsb,gpu-rows-xs,gpu-rows-xs-sx-ip}" > "$OUT/$NAME-iga.txt" 2>&1
step "iga rc $?"
timeout "$(left 45)" "$G" bench --hex --degrees 4,5 --runs 7 --cpu-cells 10 > "$OUT/$NAME-hex.txt" 2>&1
step "hex rc $?"
timeout "$(left 40)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature stiffness \
  --hyper-variants "${HYPER_VARIANTS:-tc cols fuse sty minb20}" > "$OUT/$NAME-hyper.txt" 2>&1
step "hyper rc $?"
keep "$NAME-iga.txt" "nrhs=\|forward 1 \|backward 1 " 40
targets_summary
