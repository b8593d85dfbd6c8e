//! The upper passes' contributions split over the parts of a column
//! ([`CudaMultifrontal::set_sep_ext_split`], round 28, `MF_SEP_XS`). At 256 columns the separator-row
//! blocks take 128 columns with two threads a column; the external children's contributions were
//! added by part 0 alone — a subtree of pass 1 has 48 entries on the 2^20 cubic plan, walked in
//! batches of 8, each batch two dependent round trips (the entry's row and source, then the line) —
//! while part 1's warps waited at the barrier after it. Nsight Compute on forward 1 (round 28):
//! 39 % of the stalls at a CTA barrier, 32 % on L1TEX. With the split the last warp stages the
//! subtree's entries (rows below the pass's `keep`) in shared memory under the first chunk's copies,
//! stably partitioned by row modulo the parts, and every part adds its own list: a row belongs to
//! one part and keeps its entries' order, so the sums are the default's bit for bit.
use super::sep::{SEP_BULK, SEP_PREF, SEP_TCF};
use super::{CudaMultifrontal, DevPass};

impl CudaMultifrontal {
    /// Splits the upper separator-row passes' contributions over the parts of a column, forward
    /// (`mf_mapssbtpxs_forward` in place of `mf_mapssbtp_forward`) and / or backward
    /// (`mf_mapssbxs_backward_*` in place of `mf_mapssb_backward_*`, on passes whose backward map
    /// takes 2 or 3 row tiles: with 1 its registers would cost a resident block). Same products in
    /// the same order: bit-identical to the unsplit solve. Both ways on by default since round 28: on
    /// the H200 at 2^20 cubic elements it solved 256 columns in 2.698 [2.690–2.701] ms against the
    /// unsplit 2.815 [2.813–2.824] (forward 1 194 against 231 µs, backward 1 227 against 303), 64
    /// columns in 0.941 against 0.980, its GPU test passing in the same call
    /// (`lead-r28-2026-12-05-final-*`); `(false, false)` runs the unsplit kernels. By ptxas
    /// (NVRTC 13.0, sm_90) the forward kernel takes 48 registers against 40 — 5 blocks of 256
    /// threads an SM where 6 fit —, the backward ones keep their resident blocks under a cap.
    pub fn set_sep_ext_split(&mut self, forward: bool, backward: bool) {
        self.sep_ext_split = (forward, backward);
    }

    /// Which ways the upper passes split their contributions ([`Self::set_sep_ext_split`]).
    pub fn sep_ext_split(&self) -> (bool, bool) {
        self.sep_ext_split
    }

    /// Whether a launch over pass `p` with line variant `flags` splits its contributions: asked
    /// for that way, the pass has external children, and the launch runs the variant the split
    /// kernels are built on (forward bulk lines, tensor-core product and prefetch; backward bulk
    /// lines alone, 2 or 3 row tiles).
    pub(super) fn splits_ext(&self, p: &DevPass, backward: bool, flags: usize) -> bool {
        let (forward_on, backward_on) = self.sep_ext_split;
        p.has_ext
            && if backward { backward_on && flags == SEP_BULK && p.map_nb >= 2 } else { forward_on && flags == SEP_BULK | SEP_TCF | SEP_PREF }
    }
}
