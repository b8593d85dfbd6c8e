#!/usr/bin/env bash
# Runs galerkin's CUDA tests on a GPU machine. A missing GPU, driver or NVRTC FAILS here instead of
# skipping (GALERKIN_REQUIRE_GPU=1, GALERKIN_REQUIRE_NVRTC=1), and correctness tests synchronize
# after every launch (GALERKIN_CUDA_SYNC=1) so a faulting kernel is named. Benchmarks run last,
# without that synchronization, so their GB/s are real.
#
# Usage: scripts/gpu-check.sh [TEST_BINARY...]
#   No arguments: builds the two test binaries with cargo first.
#   On a GPU machine without cargo: build elsewhere with
#     cargo test --release -p galerkin --test cuda_backend --test cuda_kernels_compile --no-run
#   and pass the two executables it prints (target/release/deps/cuda_{backend,kernels_compile}-*).
set -uo pipefail
cd "$(dirname "$0")/.."

# CUDA 13 libraries (libnvrtc.so.13, libcusparse.so.13): toolkit first, then pip wheels if any.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia,os;print(os.path.join(list(nvidia.__path__)[0],"cu13","lib"))' 2>/dev/null); do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH GALERKIN_REQUIRE_GPU=1 GALERKIN_REQUIRE_NVRTC=1

bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  mapfile -t bins < <(cargo test --release -p galerkin --test cuda_backend --test cuda_kernels_compile \
    --no-run 2>&1 | tee /dev/stderr | sed -n 's/.*Executable .*(\(.*\))$/\1/p')
  [ ${#bins[@]} -eq 2 ] || { echo "gpu-check: build failed or test binaries not found"; exit 1; }
fi

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
log=$(mktemp)
status=0
for b in "${bins[@]}"; do
  echo "== $b (correctness, GALERKIN_CUDA_SYNC=1)"
  GALERKIN_CUDA_SYNC=1 "$b" --skip bench_ 2>&1 | tee -a "$log" || status=1
done
for b in "${bins[@]}"; do
  case "$b" in *cuda_backend*)
    echo "== $b (benchmarks)"
    "$b" bench_ --nocapture --test-threads=1 2>&1 | tee -a "$log" || status=1 ;;
  esac
done

echo
echo "== gpu-check summary"
grep -E '^test result|GB/s|SKIPPED|panicked|usable:|unavailable:' "$log"
[ $status -eq 0 ] && echo "gpu-check: PASS" || echo "gpu-check: FAIL"
rm -f "$log"
exit $status
