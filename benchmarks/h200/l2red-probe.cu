// Stop 69: what the H100's L2 charges for f64 reductions — the bound of issue 17's per-cell atomic
// scatter. Each warp request adds 32 (k = 3: 30) values, k to a 32-byte sector, its 32/k sectors
// contiguous (`contig`, as a node block's lanes) or each in a line of its own (`scatter`), at places
// hashed over a footprint that fits the L2 (16 MB) or not (1 GB, as the P2 Jacobian's 662 MB).
// Modes: red.global.add.f64 (`atomicAdd`, result unused), the same on u64 (is f64 the slow path?),
// plain load + add + store (racy, timing only: what a conflict-free coloured scatter would pay) and
// plain stores. Prints the median of 5 launches a row: values/ms and request-sectors/ms.
// Build and run on the device: nvcc -O3 -arch=sm_90 -o l2red l2red-probe.cu && ./l2red
// (with ncu: ./l2red 1 runs each row once, for lts__t_sectors_op_red.sum etc.)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>
typedef unsigned long long u64;

__device__ __forceinline__ u64 mix(u64 x) {
    x ^= x >> 31; x *= 0x9E3779B97F4A7C15ull; x ^= x >> 29; return x;
}

// MODE 0: atomicAdd f64, 1: atomicAdd u64, 2: plain load-add-store f64, 3: plain store f64.
template <int MODE>
__global__ void probe(double* a, u64 nsect, int k, int scatter, int reps) {
    const int lane = threadIdx.x & 31, ns = 32 / k, s = lane / k, slot = lane % k;
    if (s >= ns) return;  // (k = 3: lanes 30, 31 idle)
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5, nwarps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (int r = 0; r < reps; ++r) {
        const u64 req = (u64)r * nwarps + warp;
        const u64 sector = scatter ? mix(req * 32 + s) % nsect : (mix(req) % (nsect / ns)) * ns + s;
        const u64 i = sector * 4 + slot;
        const double v = 1.0 + lane;
        if (MODE == 0) atomicAdd(&a[i], v);
        else if (MODE == 1) atomicAdd(reinterpret_cast<u64*>(a) + i, (u64)lane + 1);
        else if (MODE == 2) a[i] += v;
        else a[i] = v;
    }
}

int main(int argc, char** argv) {
    const int runs = argc > 1 ? atoi(argv[1]) : 5;
    const u64 big = 1ull << 30, small = 16ull << 20;
    double* a;
    if (cudaMalloc(&a, big) != cudaSuccess) { fprintf(stderr, "cudaMalloc failed\n"); return 1; }
    cudaMemset(a, 0, big);
    // 1 056 blocks × 8 warps × 512 = 4.3·10⁶ requests, 1.4·10⁸ values a launch (the P2 Jacobian adds 2.1·10⁸)
    const int threads = 256, blocks = 132 * 8, reps = 512;
    const u64 requests = (u64)blocks * threads / 32 * reps;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    // the copy bandwidth in the same run (read + write counted), as the benches report it
    {
        std::vector<float> t;
        for (int r = 0; r < std::max(runs, 1); ++r) {
            cudaEventRecord(e0);
            cudaMemcpyAsync(a + big / 16, a, big / 2, cudaMemcpyDeviceToDevice);
            cudaEventRecord(e1); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        printf("copy: %.0f GB/s (read + write, median of %d)\n", 2.0 * (big / 2) / (t[t.size() / 2] * 1e-3) / 1e9, runs);
    }
    const char* names[] = {"red.f64", "red.u64", "ld+add+st", "store"};
    printf("%-10s %-8s %2s %6s %9s %9s %14s %14s\n", "mode", "layout", "k", "MB", "ms", "spread", "values/ms", "req-sect/ms");
    for (int mode = 0; mode < 4; ++mode)
        for (u64 fp : {small, big})
            for (int scatter = 0; scatter < 2; ++scatter)
                for (int k = 1; k <= 4; ++k) {
                    std::vector<float> t;
                    for (int r = 0; r < runs; ++r) {
                        cudaEventRecord(e0);
                        const u64 nsect = fp / 32;
                        if (mode == 0) probe<0><<<blocks, threads>>>(a, nsect, k, scatter, reps);
                        if (mode == 1) probe<1><<<blocks, threads>>>(a, nsect, k, scatter, reps);
                        if (mode == 2) probe<2><<<blocks, threads>>>(a, nsect, k, scatter, reps);
                        if (mode == 3) probe<3><<<blocks, threads>>>(a, nsect, k, scatter, reps);
                        cudaEventRecord(e1); cudaEventSynchronize(e1);
                        float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
                    }
                    if (cudaGetLastError() != cudaSuccess) { fprintf(stderr, "launch failed\n"); return 1; }
                    std::sort(t.begin(), t.end());
                    const double med = t[t.size() / 2], ns = 32 / k, vals = requests * ns * k, sects = requests * ns;
                    printf("%-10s %-8s %2d %6llu %9.4f %4.3f-%4.3f %14.4g %14.4g\n", names[mode], scatter ? "scatter" : "contig", k, fp >> 20,
                           med, t.front(), t.back(), vals / med, sects / med);
                }
    return 0;
}
