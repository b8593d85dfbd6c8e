#!/usr/bin/env bash
# Static SASS counts and registers of round 26's rows for sm_90 through NVRTC (host, no GPU): the fused
# default (`tc cols fuse sty minb20`), its trimmed form (`HK_TRIM`), each alone, without the scatter and
# scattering node blocks; P2 tetrahedra, the stiffness rule (4 points), the fibre law. HK_COUNT_JACOBIAN
# compiles the Jacobian's path alone (the residual-only path, dead in a Jacobian launch, left out), so the
# counts are per cell: everything in it runs once a cell except the default's g' loop, whose 4-way unrolled
# body (98 instructions) no warp enters, and the law's rarely taken slow paths (≈ 54). Files in
# `jit::full_source`'s order. Each variant's SASS with source lines goes to ${SASS_DIR:-/tmp/hyper26-sass}, then
# `hyper26-phases.py` counts it by phase. Usage: LD_LIBRARY_PATH=…/nvidia/cu13/lib bash benchmarks/h200/hyper26-sass.sh
P2="DIM=3 NLOC=10 NQ=4 NV=4 AFFINE=1 LAW=2"
FUSED="$P2 WPB=1 QC=4 WPC=1 HK_FUSE HK_RES_MMA=1 HK_ST_Y HK_MINB=20 HK_COUNT_JACOBIAN"
SASS_DIR=${SASS_DIR:-/tmp/hyper26-sass}
python3 "$(dirname "$0")/../../scripts/ptxas-registers.py" hyperelastic_law.cuh $(grep -v "^#" "$(dirname "$0")/../../crates/galerkin/kernels/hyper_assemble.files") --regex '^hyper_assemble$' --sass --sass-lines "$SASS_DIR" \
  --variant "tc cols fuse sty minb20 (default): $FUSED HK_SCATTER_COLS" \
  --variant "tc cols fuse sty minb20 trim: $FUSED HK_SCATTER_COLS HK_TRIM" \
  --variant "tc no-scatter fuse sty minb20: $FUSED HK_NO_SCATTER" \
  --variant "tc no-scatter fuse sty minb20 trim: $FUSED HK_NO_SCATTER HK_TRIM" \
  --variant "tc blocks fuse sty minb20: $FUSED HK_SCATTER_COLS HK_SCATTER_BLOCKS" \
  --variant "tc blocks fuse sty minb20 trim: $FUSED HK_SCATTER_COLS HK_SCATTER_BLOCKS HK_TRIM"
python3 "$(dirname "$0")/hyper26-phases.py" "$SASS_DIR"/*.sass
