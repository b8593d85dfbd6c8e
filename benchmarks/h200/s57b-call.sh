#!/usr/bin/env bash
# Stop 57's second call: main's GPU test binaries that touch the device (hyperelastic, DG, advection, IGA, setup,
# box mesh, the backend and the release checks), all tests including the ignored ones, with GALERKIN_REQUIRE_GPU=1,
# in two groups of four parallel lanes; then the README's example on the GPU (`auto`).
# Usage: bash benchmarks/h200/s57b-call.sh .dev-s57b (pack: bin.tar.xz of galerkin + tests/<binary>); timeout_s ≈ 220.
# Stop 57: not run — after the first call (s56b) every request (02:25–02:39 UTC) found no machine and the failed
# starts used the device time; it is the next session's first call (BUDGET and the lanes' seconds as sized last).
NAME=${NAME:-lead-s57b}; BUDGET=${BUDGET:-170}; source benchmarks/h200/call-lib.sh "$1"
for b in hyperelastic_cuda cuda_backend dg_cuda iga_cuda; do lane 110 "$b" --test-threads 4 & done
wait; cat /tmp/lane-*.log > "$OUT/$NAME-tests.txt"; rm -f /tmp/lane-*.log; step "group 1 done"
[ "$(left 90)" -ge 60 ] && for b in advection_cuda cuda_release setup_cuda box_cuda; do lane 80 "$b" --test-threads 4 & done
wait; cat /tmp/lane-*.log >> "$OUT/$NAME-tests.txt"; step "group 2 done"
timeout "$(left 60)" "$G" run examples/poisson-3d.toml > "$OUT/$NAME-example.txt" 2>&1; step "example rc $?"
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 40
tail -5 "$OUT/$NAME-example.txt"
cat "$OUT/$NAME-steps.txt"
