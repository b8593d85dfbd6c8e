#!/usr/bin/env bash
# Round 28's tidy call (≤ 200 s; no speed target, nothing flipped): the GPU tests of the items that touch device
# paths, then the hyper kernel sweep's two node-block rows at 10^6 dofs, whose L2 sector counts (now from one
# pattern a mesh, item 4) must print round 27's CSR 353.2 / blocks 293.8 a cell on both rows.
#   iga_cuda gpu_in_place_solve            — item 2: the in-place solve's cached scratch (RowsBottom::Columns,
#                                            twice at 32 and 8 columns) equals the out-of-place solve bit for bit;
#   hyperelastic_cuda gpu_blocks_equal_the_cpu — item 3: the host conversion (positions formed once) against the
#                                            device's, bit for bit, and the CPU's Jacobian;
#   hyperelastic_cuda gpu_fuse_equals_the_cpu  — item 5: timed alone (100 s on the device in round 27; the host's
#                                            reading says NVRTC and the driver's JIT of its 72 kernels, not the mesh).
# Test binaries: iga_cuda, hyperelastic_cuda. Usage: bash benchmarks/h200/tidy28-call.sh .dev-r28
NAME=tidy28; BUDGET=${BUDGET:-200}; source benchmarks/h200/call-lib.sh "$1"
test_step 40 iga_cuda --test-threads 4 gpu_in_place_solve
test_step 40 hyperelastic_cuda --test-threads 4 gpu_blocks_equal_the_cpu
timeout "$(left 45)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 3 --hyper-quadrature stiffness \
  --hyper-variants "tc blocks fuse sty minb20,tc blocks" > "$OUT/$NAME-hyper.txt" 2>&1
step "hyper rc $?"
# GALERKIN_TRACE=1: each module the fuse test builds (a process-cache miss) prints its seconds and its PTX's
# (NVRTC or the disk cache); the rest of a module's is the driver's load (its JIT). Summed below.
export GALERKIN_TRACE=1
test_step 110 hyperelastic_cuda --test-threads 1 --nocapture gpu_fuse_equals_the_cpu
unset GALERKIN_TRACE
keep "$NAME-hyper.txt" "L2 sectors\|floor" 6
keep "$NAME-tests.txt" "^test \|test result\|panicked\|finished in" 20
awk '/\] module hyperelastic/ {n++; m += $NF == "s" ? $(NF-1) : 0} /\]   ptx of hyperelastic/ {p += $(NF-1)}
  END {printf "fuse test: %d modules built, %.1f s in all, %.1f s their PTX, %.1f s the driver'"'"'s loads\n", n, m, p, m - p}' "$OUT/$NAME-tests.txt"
cat "$OUT/$NAME-steps.txt"
