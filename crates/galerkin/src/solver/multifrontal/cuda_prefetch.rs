//! The forward separator-row kernels' index prefetch ([`CudaMultifrontal::set_sep_prefetch`],
//! round 22). Round 21's profile of the row-major bottom forward pass (`mf_mapssbt_forward`, 901 µs
//! at 256 columns, 63 % of the copy bandwidth) had its warps waiting on global loads for half their
//! cycles: after a chunk's bulk copies landed, the owned rows' places in `sep` (two dependent loads)
//! and the root's contribution rows in the buffer (three) were still to be loaded before the stores.
//! With the prefetch the first chunk loads them while its copies are in flight and keeps them, with
//! the lines' sources, in shared memory for the subtree's later chunks (`MF_SEP_PREF`).
//!
//! Round 24 does the same for the backward kernels with bulk lines (`mf_mapss{b,be}p_backward_*`,
//! [`CudaMultifrontal::set_sep_back_prefetch`]): the bottom backward pass (1375 µs at 256 columns,
//! 81 % of the copy bandwidth, the solve's largest launch) loaded its owned rows' count, places
//! and dofs (`own_ptr`, then `own_loc` and `own_dof`) after the product, and every later chunk
//! its line sources (`row_dof`) again before its copies. As built then (every pass, every index
//! path) they took 79 registers against 56 and lost a resident block at 64 and 256 columns. Round 25
//! keeps them to a row-major bottom pass (`mf_mapssbp0_backward_*`: the upper passes and the
//! column-major paths compiled out, 72 registers) under a cap that keeps the plain kernels'
//! resident blocks (58 registers for 32 rows, no spills); the upper passes run `mf_mapssb_backward_*`.
use super::CudaMultifrontal;

impl CudaMultifrontal {
    /// Makes the forward separator-row kernels with the product on the tensor cores
    /// ([`super::SepLines::tc_forward`]) prefetch their store side's indices under the chunk's
    /// copies (`mf_mapss{,b,e,be}tp_forward`: the same products and stores, a few hundred bytes
    /// more shared memory per block); `false` runs the plain `mf_mapss{,b,e,be}t_forward`. Other
    /// launches are unchanged. On by default since round 23: on the H200 at 2^20 cubic elements
    /// it solved 256 columns in 2.881 / 2.885 ms against 3.021 / 3.039 without (round 22 and the
    /// lead's check of it), faster at 32 and 64 columns too, its GPU test passing on the device.
    pub fn set_sep_prefetch(&mut self, on: bool) {
        self.sep_prefetch = on;
    }

    /// Whether the forward separator-row kernels prefetch their indices ([`Self::set_sep_prefetch`]).
    pub fn sep_prefetch(&self) -> bool {
        self.sep_prefetch
    }

    /// Makes the backward separator-row kernel with bulk lines of a row-major bottom pass prefetch
    /// its indices under the first chunk's copies (`mf_mapssbp0_backward_*`, under a register cap:
    /// the lines' sources and the owned rows' places and dofs kept in shared memory for the stores
    /// and the later chunks; the same products and stores, a few hundred bytes more shared memory
    /// per block); `false` runs `mf_mapssb_backward_*` there. The upper passes and column-major
    /// solves are unchanged (round 24 prefetched there too, and lost). On by default since round 28:
    /// on the H200 at 2^20 cubic elements it solved 256 columns in 2.862 [2.854–2.880] ms against
    /// the plain kernel's 2.939 [2.929–2.949] (2026-12-05, `lead-r27-2026-12-05-iga26-rhs.txt`),
    /// its GPU test passing in the same call.
    pub fn set_sep_back_prefetch(&mut self, on: bool) {
        self.sep_back_prefetch = on;
    }

    /// Whether the backward separator-row kernels with bulk lines prefetch their indices
    /// ([`Self::set_sep_back_prefetch`]).
    pub fn sep_back_prefetch(&self) -> bool {
        self.sep_back_prefetch
    }
}
