#!/usr/bin/env bash
# CPU emulation of kernels/hyperelastic.cu (no GPU needed): every thread of a block is a std::thread,
# __syncthreads/__syncwarp a barrier, mma.sync an exchange of the warp's fragments. Runs the
# column-pair and the tensor-core schemes on the same random cells (shared nodes, rotated frames)
# and prints their largest relative differences in residual and Jacobian (expected ~1e-16), for
# every law, P2 (NLOC 10, NQ 14; NQ 4, the stiffness rule, whose element matrix outgrows the point
# records) and P1-sized (NLOC 4, NQ 5) cells; the tensor-core scheme also with the twelfth pass's
# residual in the GEMM and paired accesses (HK_RES_MMA, HK_VEC) and two warps per cell (WPC=2); the
# patch kernel in two batches per patch, with plainly stored rows, shared atomics or cells in turn.
# At P2 the tables hold true P2 gradients at random points, and the moments scheme
# (hyperelastic_moments.cu, one and two cells per block) is compared too; and the recomputing gather
# (hyperelastic_recompute.cu, blocks of 7 nodes, its values prefilled with NaN). Round 18: the tensor-core
# kernel looping over cells on a grid of 3 blocks with the next cell's record copied ahead, and the
# staged scatter a lane per column. Round 19: the tensor-core kernel with the patches' scatter (HK_PATCH)
# on the patch kernel's patches, in every case. Round 20: the law of a block's cells on one warp (HK_LAW_WIDE), the patches' slots filled in turn (HK_PATCH_TURNS).
# Round 21: the upper-triangle scatter (HK_UPPER) with its zeroing and fill passes (HK_EMU_UPPER).
# Round 22: the staged blocks in Y's space (HK_ST_Y). Round 23: the law in the Y phase's lanes (HK_FUSE).
# Round 26: the trimmed fused law (HK_TRIM); round 25's node blocks. Round 34: segments carrying shared blocks (HK_CHAIN). Round 31: the recomputing gather over the staged law records (HR_RECORDS).
# Usage: bash crates/galerkin/tests/emu/hyperelastic_schemes.sh   (needs g++ ≥ 11, C++20)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); k=$here/../../kernels; t=$(mktemp -d)
(cd "$k" && cat $(grep -v "^#" hyper_assemble.files)) | sed 's/extern "C" //; s/extern __shared__ double s_acc\[\];/static double s_acc[NSLOT * 9];/' > "$t/hk.cu"; sed 's/extern "C" //' "$k/hyperelastic_patch.cu" > "$t/hp.cu"; cp "$k/hyperelastic_law.cuh" "$t/law.cuh"
sed 's/extern "C" //' "$k/hyperelastic_moments.cu" > "$t/hm.cu"; cp "$k/hyperelastic_moments.cuh" "$t/hm.cuh"
sed 's/extern "C" //; s/extern __shared__ double hr_sh\[\];/static double hr_sh[1 << 15];/' "$k/hyperelastic_recompute.cu" > "$t/hr.cu"
sed 's/extern "C" //' "$k/hyperelastic_upper.cu" > "$t/hu.cu"
cp "$here/warp_emu.h" "$here/hyperelastic_schemes.cpp" "$t/"
# (the fibre law also with one scheme's CSR positions gathered into shared memory, HK_POS_SHARED,
# against the other's read from global memory)
for law in ${EMU_LAWS:-0 1 2}; do
  cases=("-DNLOC=10 -DNQ=14" "-DNLOC=10 -DNQ=4" "-DNLOC=4 -DNQ=5")
  cases+=("-DNLOC=10 -DNQ=14 -DHM_WPB=2" "-DNLOC=10 -DNQ=1")
  [ $law = 2 ] && cases+=("-DNLOC=10 -DNQ=4 -DHK_EMU_PAIRS_POS" "-DNLOC=10 -DNQ=14 -DHK_EMU_TC_POS")
  # the eighteenth pass: the tensor-core kernel on a grid of 3 blocks looping over the cells, the
  # next cell's record copied ahead (every law; P2 at both rules, P1-sized, two warps per cell)
  cases+=("-DNLOC=10 -DNQ=4 -DHK_EMU_TC_PERSIST" "-DNLOC=10 -DNQ=14 -DHK_EMU_TC_PERSIST" "-DNLOC=4 -DNQ=5 -DHK_EMU_TC_PERSIST" "-DNLOC=10 -DNQ=4 -DWPC=2 -DHK_EMU_TC_PERSIST")
  # and the staged scatter a lane per column (HK_SCATTER_COLS; the moments scheme's too), alone and with both
  cases+=("-DNLOC=10 -DNQ=4 -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=14 -DHK_SCATTER_COLS -DHK_EMU_TC_PERSIST" "-DNLOC=10 -DNQ=4 -DWPC=2 -DHK_SCATTER_COLS -DHK_EMU_TC_PERSIST")
  # the twentieth pass: the law of a block's cells on one warp (3 cells a block, one past the end), with the column scatter
  cases+=("-DNLOC=10 -DNQ=4 -DHK_LAW_WIDE -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=14 -DHK_LAW_WIDE" "-DNLOC=4 -DNQ=5 -DHK_LAW_WIDE")
  # and the patches' slots filled by the cells in turn (HK_PATCH_TURNS: 3 warps a block, two past the end)
  cases+=("-DNLOC=10 -DNQ=4 -DHK_PATCH_TURNS" "-DNLOC=10 -DNQ=14 -DHK_PATCH_TURNS" "-DNLOC=4 -DNQ=5 -DHK_PATCH_TURNS")
  # the twenty-first pass: the upper-triangle scatter (HK_UPPER) with its zeroing and fill passes, over
  # NaN values; with the column scatter (one and two warps per cell) and the flat walk (P2, P1-sized)
  cases+=("-DNLOC=10 -DNQ=4 -DHK_EMU_UPPER -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=4 -DWPC=2 -DHK_EMU_UPPER -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=14 -DHK_EMU_UPPER" "-DNLOC=4 -DNQ=5 -DHK_EMU_UPPER")
  # the twenty-second pass: the staged blocks in Y's space (HK_ST_Y) with the column scatter (one and
  # two warps per cell, the persistent kernel), the flat walk (P2 at 14 points, P1-sized), the upper triangle
  cases+=("-DNLOC=10 -DNQ=4 -DHK_ST_Y -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=4 -DWPC=2 -DHK_ST_Y -DHK_SCATTER_COLS -DHK_EMU_TC_PERSIST" "-DNLOC=10 -DNQ=14 -DHK_ST_Y" "-DNLOC=4 -DNQ=5 -DHK_ST_Y" "-DNLOC=10 -DNQ=4 -DHK_ST_Y -DHK_EMU_UPPER -DHK_SCATTER_COLS")
  # the twenty-third pass: the law in the Y phase's lanes (HK_FUSE, a lane per (point, pair), with the
  # residual in the GEMM): P2 at 4 points in one chunk and in chunks of 3 with the column scatter, one
  # and two warps per cell, the persistent kernel, 14 points, P1-sized
  f="-DHK_FUSE -DHK_RES_MMA=1"
  cases+=("-DNLOC=10 -DNQ=4 $f -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=4 -DQC=3 $f -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=4 -DWPC=2 $f -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=4 $f -DHK_SCATTER_COLS -DHK_EMU_TC_PERSIST" "-DNLOC=10 -DNQ=14 -DQC=3 $f" "-DNLOC=4 -DNQ=5 $f" "-DNLOC=10 -DNQ=4 $f -DHK_ST_Y -DHK_SCATTER_COLS")
  # round 26: the trimmed fused law (HK_TRIM: g' a lane per (node, component), F by the tensor cores,
  # the pair's rows of U and V alone, the entries' factors once a lane): P2 at 4 points with the column
  # scatter, with Y's space and the flat walk, the persistent kernel, 14 points in chunks of 3, P1-sized
  trim="$f -DHK_TRIM"
  cases+=("-DNLOC=10 -DNQ=4 $trim -DHK_SCATTER_COLS" "-DNLOC=10 -DNQ=4 $trim -DHK_ST_Y" "-DNLOC=10 -DNQ=4 $trim -DHK_SCATTER_COLS -DHK_EMU_TC_PERSIST" "-DNLOC=10 -DNQ=14 -DQC=3 $trim" "-DNLOC=4 -DNQ=5 $trim")
  # the thirty-fourth pass: segments of 3 cells carrying their shared node blocks (HK_CHAIN) — the
  # default's defines, the column walk and the node blocks' layout aside, two warps per cell, the flat walk
  ch="-DHK_EMU_CHAIN"
  cases+=("-DNLOC=10 -DNQ=4 $trim -DHK_ST_Y -DHK_SCATTER_COLS $ch" "-DNLOC=10 -DNQ=4 $f -DHK_SCATTER_COLS $ch" "-DNLOC=10 -DNQ=4 -DWPC=2 $f -DHK_SCATTER_COLS $ch" "-DNLOC=10 -DNQ=14 $ch" "-DNLOC=4 -DNQ=5 $ch")
  # round 25: the node-block scatter (HK_SCATTER_BLOCKS, converted back to CSR order)
  bl="-DHK_ST_Y -DHK_SCATTER_COLS -DHK_EMU_BLOCKS"
  cases+=("-DNLOC=10 -DNQ=4 $trim $bl")
  # the twelfth pass: the residual in the GEMM, paired accesses, two warps per cell
  for lean in "-DHK_RES_MMA=1 -DHK_VEC=1" "-DWPC=2" "-DWPC=2 -DHK_RES_MMA=1 -DHK_VEC=1"; do
    cases+=("-DNLOC=10 -DNQ=14 $lean" "-DNLOC=10 -DNQ=4 $lean" "-DNLOC=4 -DNQ=5 $lean")
  done
  # the thirteenth pass: the patch kernel's batch cells adding to the slots in turn
  cases+=("-DNLOC=10 -DNQ=14 -DHP_CELL_TURNS" "-DNLOC=4 -DNQ=5 -DHP_CELL_TURNS")
  for sz in "${cases[@]}"; do
    g++ -std=c++20 -O1 -Wno-unknown-pragmas -DLAW=$law $sz -I"$t" -o "$t/emu" "$t/hyperelastic_schemes.cpp" -pthread
    "$t/emu"
  done
done
rm -rf "$t"
