#!/bin/bash
# Step 1 of op9: 2026-11-23 binary (798ed82) against main (2394ff0), alternating, 1 and 2 threads.
OLD=/work/wt-op9-old/target/release/galerkin
NEW=/tmp/galerkin-main
echo "# $(date -u) $(uptime)"
for round in 1 2; do
  for thr in 1 2; do
    for bin in OLD NEW; do
      b=${!bin}
      echo "== round $round $bin threads=$thr  $(uptime | sed 's/.*load/load/')"
      RAYON_NUM_THREADS=$thr /usr/bin/time -f "cpu user %U s sys %S s wall %e s" $b bench --assembly --case p1-tet:60 --case q1-hex:64 --repeats 3 2>&1 | grep -v "^case\|^whole"
    done
  done
done
echo "# end $(date -u) $(uptime)"
