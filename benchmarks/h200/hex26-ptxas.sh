#!/usr/bin/env bash
# ptxas -v and static SASS counts of scheme III's matrices_tiled for sm_90 through NVRTC (host, no GPU):
# round 25's and round 26's rows at trunk p = 4 and p = 5 against the default (registers, stack and
# spills; SASS instructions by class). The define sets are the sweep's (GALERKIN_PTX_DUMP=dir of the
# NVRTC compile test writes each variant's .defines); rows differ only in FN_REGS, STAGE_WIDE,
# UNIFORM_TILES and PAIR_CLASSES. Files in jit::full_source's order.
# Usage: LD_LIBRARY_PATH=…/nvidia/cu13/lib bash benchmarks/h200/hex26-ptxas.sh
P4="TENSOR=1 TN1=5 TNF=5 FN_TABLES=0 ALT_ORDER=1 STREAM_STORES=1 SKIP_PARTS=0 TILED_WARPS=16 CELLS=1 PREFETCH=0 NARROW=0
  WIDE_WRITES=3 IMAGE_DOUBLES=11326 PRESTAGE=0 PRODUCERS=0 SPLIT_MOMENTS=0 PIPE=1 PIPE_ROUNDS=2 GRAM=1 GRAM_OVERLAP=0
  GRAM_SPREAD=0 GRAM_WIDE=0 GRAM_PAIRS=0 GRAM_UNROLL=1 GRAM_DIAG=1 GRAM_SPLIT=0 GRAM_SPLIT2=0 GRAM_ROWS=0 GRAM_EARLY_WAIT=0
  DEFER_WRITES=0 PACKED=1 PAIRED=0 TPW=1 MMA_K=16 MMA_NATIVE=1 MIN_BLOCKS=1 QCP=32 DIM=3 NV=8 NLOC=50 NQ=125 NCOMP=3 QF=Elasticity"
P5="TENSOR=1 TN1=6 TNF=6 FN_TABLES=0 ALT_ORDER=1 STREAM_STORES=1 SKIP_PARTS=0 TILED_WARPS=16 CELLS=1 PREFETCH=0 NARROW=0
  WIDE_WRITES=3 IMAGE_DOUBLES=9530 PRESTAGE=0 PRODUCERS=0 SPLIT_MOMENTS=0 PIPE=1 PIPE_ROUNDS=2 GRAM=1 GRAM_OVERLAP=0
  GRAM_SPREAD=0 GRAM_WIDE=0 GRAM_PAIRS=0 GRAM_UNROLL=0 GRAM_DIAG=0 GRAM_SPLIT=1 GRAM_SPLIT2=2 GRAM_ROWS=1 GRAM_EARLY_WAIT=0
  DEFER_WRITES=0 PACKED=1 PAIRED=0 TPW=1 MMA_K=16 MMA_NATIVE=1 MIN_BLOCKS=1 QCP=32 DIM=3 NV=8 NLOC=74 NQ=216 NCOMP=3 QF=Elasticity"
row() { echo "--variant"; echo "$1: $2 FN_REGS=$3 STAGE_WIDE=$4 UNIFORM_TILES=$5 PAIR_CLASSES=$6"; }
args=()
while read -r p regs wide uni pc name; do
  base=$P4; [ "$p" = 5 ] && base=$P5
  mapfile -t -O "${#args[@]}" args < <(row "p = $p $name" "$(echo $base)" "$regs" "$wide" "$uni" "$pc")
done <<'ROWS'
4 0 0 0 0 default
4 1 0 0 0 tail-scales
4 1 1 0 0 tail-scales wide-stage
4 2 1 0 0 fn-regs wide-stage
4 2 0 0 0 fn-regs
4 1 0 1 0 tail-scales uniform-tiles
4 1 0 1 1 tail-scales uniform-tiles pair-classes
4 1 0 0 1 tail-scales pair-classes
4 2 0 1 0 fn-regs uniform-tiles
4 1 1 1 1 tail-scales wide-stage uniform-tiles pair-classes
4 2 1 1 0 fn-regs wide-stage uniform-tiles
4 2 0 1 1 fn-regs uniform-tiles pair-classes
5 0 0 0 0 default
5 1 0 0 0 tail-scales
5 1 1 0 0 tail-scales wide-stage
5 1 1 1 0 tail-scales wide-stage uniform-tiles
ROWS
exec python3 "$(dirname "$0")/../../scripts/ptxas-registers.py" \
  geometry.cuh qf/qfunction.cuh qf/diffusion.cuh qf/mass.cuh qf/elasticity.cuh cell_tables.cuh element_schemes.cu \
  --regex '^matrices_tiled$' --sass "${args[@]}"
