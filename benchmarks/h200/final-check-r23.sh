#!/usr/bin/env bash
# Lead's device check of merged main after round 23 (binaries of CI's clean-clone build): the three targets on a
# quiet GPU (the IGA many-rhs sweep of ${IGA_ENGINES}, the default hex table at p = 4, 5, the hyperelastic rows of
# ${HYPER_VARIANTS}), then the round's GPU tests (the new default's and the merged opt-in paths') in three lanes.
# Usage: bash benchmarks/h200/final-check-r23.sh .dev-NAME    (binaries in .dev-NAME/bin.tar.xz)
NAME=lead-r23; BUDGET=${BUDGET:-330}; source benchmarks/h200/call-lib.sh "$1"
targets "${IGA_ENGINES:-gpu-rows,gpu-rows-nopf}" "${HYPER_VARIANTS:-tc cols,tc cols fuse,tc cols fuse sty,tc cols fuse sty minb20}"
# the round's GPU tests, one lane each (filters: the new paths and the changed defaults)
lane() { local bin=$1; shift; { echo "=== $bin $*"; timeout "$(left 150)" "$T/$bin" --include-ignored "$@" 2>&1; echo "rc $?"; } > "/tmp/lane-$bin.log"; }
[ -x "$T/hyperelastic_cuda" ] && lane hyperelastic_cuda fuse &
[ -x "$T/iga_cuda" ] && lane iga_cuda ${IGA_TESTS:-gpu_prefetched gpu_chained} --test-threads 2 &
[ -x "$T/hierarchical" ] && lane hierarchical round2 &
wait
cat /tmp/lane-*.log > "$OUT/$NAME-tests.txt" 2>/dev/null
step "tests done"
keep "$NAME-iga.txt" "nrhs=  256\|nrhs=    1" 8
keep "$NAME-hex.txt" "^ [1-5] \|floor\|III" 20
keep "$NAME-hyper.txt" "^tc \|floor" 8
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 30
cat "$OUT/$NAME-steps.txt"
