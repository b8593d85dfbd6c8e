#!/usr/bin/env bash
# The op6 device call (issue 11): thread scaling of CPU `full` and `partial` on the H100 host's
# 16-core CPU. Run from a checkout root holding .dev-op6/ (device-pack op6 ceed, plus fma_probe
# built by `rustc -O -C target-feature=+avx2,+fma,+avx512f benchmarks/h100-cpu/fma_probe.rs`).
# Everything text goes to $OUT/threads.log, one JSON per thread count.
d=.dev-op6; [ -f $d/bin.tar.xz ] && tar -C $d -xJf $d/bin.tar.xz
log=$OUT/threads.log
{
  date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|L2|L3|NUMA node\(s\)|Flags" | sed 's/\(Flags:\).*\(avx512f\).*/\1 ... \2 .../'
  echo "thread_siblings of cpu0: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)"
  echo "== fma_probe (pure FMA throughput, no memory traffic)"; $d/fma_probe 1 2 4 8 16
  for t in $d/tests/ceed-*; do [ -x "$t" ] && { echo "== batched partial tests on this CPU (AVX-512 twin)"; "$t" batched 2>&1 | tail -4; }; done
} > $log 2>&1
for t in 1 2 4 8 16; do
  echo "== RAYON_NUM_THREADS=$t, $(uptime)" >> $log
  RAYON_NUM_THREADS=$t $d/galerkin bench --ceed bp3,bp5 --degrees 1..4 --dofs 200000 --levels full,partial \
      --runs 5 --iterations 10 --json $OUT/h100cpu-op6-${t}t.json >> $log 2>&1
  echo "rc=$?" >> $log
done
uptime >> $log
