#!/usr/bin/env bash
# ptxas -v of the hyperelastic Jacobian kernel for sm_90 through NVRTC (host, no GPU): registers, spills and stack
# of round 25's rows, to check that the node-block scatter (`HK_SCATTER_BLOCKS`) needs no more registers than the
# default it extends (P2 tetrahedra, the stiffness rule, the fibre law). Files in `jit::full_source`'s order.
# Usage: LD_LIBRARY_PATH=…/nvidia/cu13/lib bash benchmarks/h200/hyper25-ptxas.sh
P2="DIM=3 NLOC=10 NQ=4 NV=4 AFFINE=1 LAW=2"
FUSED="$P2 WPB=1 QC=4 WPC=1 HK_FUSE HK_RES_MMA=1 HK_ST_Y HK_MINB=20"
TC="$P2 WPB=1 QC=3 WPC=1 HK_SCATTER_COLS"
exec python3 "$(dirname "$0")/../../scripts/ptxas-registers.py" \
  hyperelastic_law.cuh $(grep -v "^#" "$(dirname "$0")/../../crates/galerkin/kernels/hyper_assemble.files") hyperelastic_gather.cu hyperelastic_upper.cu hyperelastic_blocks.cu \
  --regex '^hyper_(assemble|blocks_spmv|blocks_to_csr)$' \
  --variant "tc cols fuse sty minb20 (default): $FUSED HK_SCATTER_COLS" \
  --variant "tc blocks fuse sty minb20: $FUSED HK_SCATTER_COLS HK_SCATTER_BLOCKS" \
  --variant "tc no-scatter fuse sty minb20: $FUSED HK_NO_SCATTER" \
  --variant "tc cols: $TC" \
  --variant "tc blocks: $TC HK_SCATTER_BLOCKS"
