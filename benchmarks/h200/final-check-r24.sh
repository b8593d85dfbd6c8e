#!/usr/bin/env bash
# Lead's device check of merged main after round 24 (binaries of CI's clean-clone build): the three targets on a
# quiet GPU (call-lib's `targets` with ${IGA_ENGINES} and ${HYPER_VARIANTS}), then the round's GPU tests in lanes
# (${HIER_TESTS}, ${HYPER_TESTS}, ${IGA_TESTS}: the filters of the new paths and the changed defaults).
# Usage: bash benchmarks/h200/final-check-r24.sh .dev-NAME    (binaries in .dev-NAME/bin.tar.xz)
NAME=lead-r24; BUDGET=${BUDGET:-340}; source benchmarks/h200/call-lib.sh "$1"
targets "${IGA_ENGINES:-gpu-rows,gpu-rows-w64x2}" "${HYPER_VARIANTS:-tc cols,tc cols fuse sty minb20}"
lane 200 hyperelastic_cuda ${HYPER_TESTS:-gpu_fuse gpu_stiffness gpu_multigrid_with_the_stiffness} &
lane ${IGA_LANE_S:-200} iga_cuda ${IGA_TESTS:-gpu_prefetched gpu_walk_shapes gpu_chained} --test-threads 2 &
lane 150 hierarchical ${HIER_TESTS:-round2 wide_writes} &
wait; lanes_done
targets_summary
