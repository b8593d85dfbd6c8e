// Just enough of CUDA to run a kernel block on the CPU (see hyperelastic_schemes.sh).
#include <cmath>
#include <cstdio>
#include <thread>
#include <barrier>
#include <mutex>
#include <vector>
#include <random>
typedef unsigned long long u64;
typedef unsigned int u32;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct double2 { double x, y; };
struct uint2 { u32 x, y; };
inline double2 make_double2(double x, double y) { return {x, y}; }
#define HK_EMU 1
struct Dim { unsigned x, y, z; };
thread_local Dim threadIdx, blockIdx;
Dim blockDim, gridDim;
std::barrier<>* g_bar;
inline void __syncthreads() { g_bar->arrive_and_wait(); }
inline void __syncwarp() { g_bar->arrive_and_wait(); }
std::mutex g_mu;
inline double atomicAdd(double* p, double v) { std::lock_guard<std::mutex> l(g_mu); double o = *p; *p += v; return o; }
// (the warp's votes through the block's barrier: a block of one warp, or all warps voting together)
unsigned emu_vote[1024];
inline unsigned __ballot_sync(unsigned, int pred) {
    emu_vote[threadIdx.x] = pred ? 1u : 0u;
    g_bar->arrive_and_wait();
    const unsigned w0 = threadIdx.x - threadIdx.x % 32;
    unsigned m = 0;
    for (unsigned l = 0; l < 32; ++l) m |= emu_vote[w0 + l] << l;
    g_bar->arrive_and_wait();
    return m;
}
inline int __ffs(unsigned x) { return __builtin_ffs(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline u64 global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
inline u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }
using std::isfinite; using std::nan; using std::fabs; using std::exp; using std::log;
// the fragments of every warp of the block (all of its warps call mma together: one barrier)
double emu_a0[1024], emu_a1[1024], emu_b0[1024];
inline void hk_emu_mma(double d[4], double a0, double a1, double b0) {
    int lane = threadIdx.x % 32, w0 = threadIdx.x - lane;
    emu_a0[threadIdx.x] = a0; emu_a1[threadIdx.x] = a1; emu_b0[threadIdx.x] = b0;
    g_bar->arrive_and_wait();
    int g = lane / 4, t = lane % 4;
    for (int e = 0; e < 4; ++e) {
        int row = g + 8 * (e / 2), col = 2 * t + e % 2;
        double s = 0;
        for (int k = 0; k < 4; ++k) {
            double A = row < 8 ? emu_a0[w0 + row * 4 + k] : emu_a1[w0 + (row - 8) * 4 + k];
            double B = emu_b0[w0 + col * 4 + k];
            s += A * B;
        }
        d[e] += s;
    }
    g_bar->arrive_and_wait();
}
// (a thread that returns leaves the barrier: a warp past the last cell may leave before the others)
template <class F> void run(unsigned grid, unsigned block, F f) {
    blockDim = {block, 1, 1}; gridDim = {grid, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> bar(block); g_bar = &bar;
        std::vector<std::thread> th;
        for (unsigned t = 0; t < block; ++t) th.emplace_back([&, t, b] { threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; f(); bar.arrive_and_drop(); });
        for (auto& x : th) x.join();
    }
}
