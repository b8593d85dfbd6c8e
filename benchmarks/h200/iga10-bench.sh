#!/usr/bin/env bash
# iga10's device call: GPU tests, the rhs sweep (default; bottom pass through registers; split
# column blocks), then Nsight Compute on the bottom passes' kernels (streamed and current).
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
{ date -u; ls /usr/local/cuda/bin; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > $OUT/env.txt 2>&1
[ -f "$d/run.sh" ] && timeout 45 bash "$d/run.sh"
timeout 75 $G bench-iga --gpu --sweeps rhs --rhs 1,16,256,1024 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
  --rhs-engines gpu,gpu-maps-sep-stream,gpu-maps-sep-split,gpu-maps-sep-split-64 --json $OUT/iga-rhs-iga10.json > $OUT/iga-rhs-iga10.log 2>&1
echo "bench rc $? $(date -u)" >> $OUT/iga-rhs-iga10.log
NCU=/usr/local/cuda/bin/ncu; [ -x $NCU ] || NCU=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
B="bench-iga --gpu --sweeps rhs --rhs 256 --rhs-elements 1048576 --rhs-degree 3 --reps 1 --cpu-max 0"
timeout 25 $NCU --clock-control none $S -k regex:mf_stream_ --launch-count 2 $G $B --rhs-engines gpu-maps-sep-stream > $OUT/ncu-stream.txt 2>&1
echo "ncu rc $? $(date -u)" >> $OUT/ncu-stream.txt
timeout 35 $NCU --clock-control none $S -k regex:mf_mapss_ --launch-count 12 $G $B --rhs-engines gpu-maps-sep > $OUT/ncu-sep.txt 2>&1
echo "ncu rc $? $(date -u)" >> $OUT/ncu-sep.txt
date -u >> $OUT/env.txt
