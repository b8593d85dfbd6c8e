// The CSR sparsity pattern of a dof map on the device (operator/level/full/pattern_cuda.rs): dof
// (n, a) couples to (m, b) when nodes n and m share a cell. Node -> cell incidences are counted and
// filled with atomics (their order within a node does not matter); then one thread per node gathers
// the nodes of its cells into a sorted list without repeats (at most MAXU entries, a bound the host
// derives from the largest incidence count), first for the row lengths, then, once the host has
// summed them into row pointers, for the columns. Same rows, in the same order, as the host's
// `operator::assemble::sparsity`.
//
// Defines: NPC (nodes per cell), NCOMP (components per node), MAXU (list capacity).

// cnt[n] = number of incidences of node n (cnt zeroed by the caller).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) count_incidences(u64 ninc, const u32* __restrict__ cell_nodes,
                                                                                u32* __restrict__ cnt) {
    for (u64 k = global_thread(); k < ninc; k += grid_threads()) atomicAdd(&cnt[cell_nodes[k]], 1u);
}

// cells[start[n] .. start[n + 1]] = the cells around node n (fill zeroed by the caller).
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) fill_incidences(u64 ninc, const u32* __restrict__ cell_nodes,
                                                                               const u32* __restrict__ start, u32* __restrict__ fill,
                                                                               u32* __restrict__ cells) {
    for (u64 k = global_thread(); k < ninc; k += grid_threads()) {
        const u32 n = cell_nodes[k];
        const u32 at = atomicAdd(&fill[n], 1u);
        cells[start[n] + at] = (u32)(k / NPC);
    }
}

// The distinct nodes of node n's cells, ascending, into list; returns their count, or MAXU + 1 when
// they do not fit.
__device__ __forceinline__ int gather_row(u32 n, const u32* __restrict__ start, const u32* __restrict__ cells,
                                          const u32* __restrict__ cell_nodes, u32* list) {
    int len = 0;
    for (u32 p = start[n]; p < start[n + 1]; ++p) {
        const u64 c = cells[p];
        for (int j = 0; j < NPC; ++j) {
            const u32 m = cell_nodes[c * NPC + j];
            int i = len;
            while (i > 0 && list[i - 1] > m) --i;
            if (i > 0 && list[i - 1] == m) continue;
            if (len == MAXU) return MAXU + 1;
            for (int s = len; s > i; --s) list[s] = list[s - 1];
            list[i] = m;
            ++len;
        }
    }
    return len;
}

// lens[n] = distinct neighbour nodes of node n (its own included); *overflow set where MAXU is short.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) row_lengths(u64 nn, const u32* __restrict__ start,
                                                                           const u32* __restrict__ cells,
                                                                           const u32* __restrict__ cell_nodes,
                                                                           u32* __restrict__ lens, u32* __restrict__ overflow) {
    u32 list[MAXU];
    for (u64 n = global_thread(); n < nn; n += grid_threads()) {
        const int len = gather_row((u32)n, start, cells, cell_nodes, list);
        if (len > MAXU) {
            atomicOr(overflow, 1u);
            lens[n] = 0;
        } else {
            lens[n] = (u32)len;
        }
    }
}

// The columns of node n's NCOMP rows: (m, b) -> m·NCOMP + b for its sorted neighbours m.
extern "C" __global__ void __launch_bounds__(GALERKIN_BLOCK) row_columns(u64 nn, const u32* __restrict__ start,
                                                                           const u32* __restrict__ cells,
                                                                           const u32* __restrict__ cell_nodes,
                                                                           const u32* __restrict__ row_ptr, u32* __restrict__ col_idx) {
    u32 list[MAXU];
    for (u64 n = global_thread(); n < nn; n += grid_threads()) {
        const int len = gather_row((u32)n, start, cells, cell_nodes, list);
        if (len > MAXU) continue;  // row_lengths flagged it; the host does not use this pattern
        for (int a = 0; a < NCOMP; ++a) {
            u32 at = row_ptr[n * NCOMP + a];
            for (int t = 0; t < len; ++t)
                for (int b = 0; b < NCOMP; ++b) col_idx[at++] = list[t] * NCOMP + b;
        }
    }
}
