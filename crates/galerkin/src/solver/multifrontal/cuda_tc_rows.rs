//! Rows of `C + 4` doubles under the separator-row forward product on the tensor cores
//! ([`CudaMultifrontal::set_sep_tc_rows4`], round 29, the kernels' `MF_SEP_LD4`). The forward
//! kernels with that product staged a chunk's rows at `C + 2` (the bottom pass's map would
//! otherwise have cost it a resident block, round 16); Nsight Compute on the bottom forward pass at
//! 256 columns (round 28, `mf_mapssbtp_forward`, 0.80 ms) counted its shared loads 3.0-way and its
//! stores 4.5-way bank-conflicted. Counted per 128-column chunk on the 2^20 cubic plan (round 29,
//! BENCHMARKS.md): 128 B-fragment loads at bank pair `2t + g` mod 16 (4 wavefronts against 2), 32
//! accumulator loads and 32 result stores at `2(g + t) + e` mod 16 (6 against 2). With rows of
//! `C + 4` the B fragments fall at `4t + g` (conflict-free), and the accumulators are loaded and
//! stored in the order of the row's parity (`maps_tc_backward`'s `ALT`): conflict-free too. Same
//! products in the same order: bit-identical to the default. 16 bytes more a row: the bottom
//! pass's block at 256 columns 45 568 bytes against 44 960, still 5 an SM on the H200.
//!
//! Round 30 ([`CudaMultifrontal::set_sep_trim`], `MF_SEP_TRIM`): on a forward pass without external
//! entries (the bottom one) w's Schur rows only ever held the zeros the issue stored and the
//! accumulators loaded back — per 128-column chunk 24 store and 32 load requests on the 2^20 plan
//! (round 29's count) —, so the trimmed kernels stage none: the accumulators start at +0.0 in
//! registers (the same operands of the same MMAs, bit for bit), the owned rows follow
//! max(eliminated, Schur) rows, and a block's rows shrink (35 against 38 on that plan), which lets
//! the pipelined forward 0 (`-p64`) keep rows of `C + 4` at 5 blocks an SM. The default since
//! stop 54 (H100: forward 0 −2 %, the solve at 256 columns −0.7 %, beyond the spread).
use super::sep::{SEP_BULK, SEP_PREF, SEP_TCF, SEP_XS};
use super::{CudaMultifrontal, DevPass, DevicePass};

/// MF_SEP_LD4: rows of `C + 4` and the accumulators in parity order under the tensor-core forward
/// (`mf_mapssbtpl4_forward`, `mf_mapssbtpxsl4_forward`).
pub(super) const SEP_LD4: usize = 128;
/// MF_SEP_TRIM: forward 0's kernels without the zeroed Schur rows (`mf_mapssbtp{,l4,64,64l4}z_forward`).
pub(super) const SEP_TRIM: usize = 512;

impl CudaMultifrontal {
    /// Runs the forward separator-row kernels the default runs at 64 and 256 columns
    /// (`mf_mapssbtp_forward` on the bottom pass, `mf_mapssbtpxs_forward` above it) with rows of
    /// `C + 4` doubles and conflict-free accumulator accesses (`mf_mapssbtpl4_forward`,
    /// `mf_mapssbtpxsl4_forward`): the same products and stores, bit for bit, 16 bytes more shared
    /// memory a row. Off by default: measured slower (stop 54, H100, 2^20 cubic elements at 256
    /// columns: 3.388 ms against 3.305, forward 0 1.074 against 0.983 ms); other launches and
    /// the line walk are unchanged.
    pub fn set_sep_tc_rows4(&mut self, on: bool) {
        self.sep_tc_rows4 = on;
    }

    /// Whether the tensor-core forward kernels stage rows of `C + 4` ([`Self::set_sep_tc_rows4`]).
    pub fn sep_tc_rows4(&self) -> bool {
        self.sep_tc_rows4
    }

    /// A separator-row launch's line `flags` with [`SEP_LD4`] where asked for and built: forward
    /// bulk lines, tensor-core product and prefetch, split contributions or not.
    pub(super) fn with_tc_rows4(&self, flags: usize) -> usize {
        if self.sep_tc_rows4 && flags & !(SEP_XS | SEP_TRIM) == SEP_BULK | SEP_TCF | SEP_PREF {
            flags | SEP_LD4
        } else {
            flags
        }
    }

    /// Runs the forward separator-row launches of passes without external entries (the bottom
    /// pass) that run `mf_mapssbtp_forward`'s variant — plain, with [`Self::set_sep_tc_rows4`], or
    /// pipelined by [`Self::set_sep_pipe64`] — without w's Schur rows (`mf_mapssbtpz_forward`,
    /// `…l4z`, `…64z`, `…64l4z`): not zeroed, not staged, the product's accumulators from +0.0 in
    /// registers instead of loads of those zeros; the same MMAs on the same operands, bit for bit.
    /// With the pipeline, rows of `C + 4` too where [`Self::set_sep_tc_rows4`] is on (without this
    /// it keeps `C + 2`: both did not fit 5 blocks an SM). On by default since stop 54: the solve at
    /// 256 columns on the H100 at 2^20 cubic elements 3.281 ms [3.278–3.282] against 3.305 [3.304–3.308]
    /// (forward 0 0.963 ms against 0.983; BENCHMARKS.md, stop 54).
    pub fn set_sep_trim(&mut self, on: bool) {
        self.sep_trim = on;
    }

    /// Whether the forward passes without external entries skip the Schur rows ([`Self::set_sep_trim`]).
    pub fn sep_trim(&self) -> bool {
        self.sep_trim
    }

    /// A separator-row launch's line `flags` with [`SEP_TRIM`] where asked for and built: forward,
    /// bulk lines, tensor-core product and prefetch, unsplit, on a pass without external entries.
    pub(super) fn with_sep_trim(&self, p: &DevPass, backward: bool, flags: usize) -> usize {
        if self.sep_trim && !backward && !p.has_ext && flags == SEP_BULK | SEP_TCF | SEP_PREF {
            flags | SEP_TRIM
        } else {
            flags
        }
    }
}

impl DevPass {
    /// The pass as a launch with line `flags` sees it: with [`SEP_TRIM`], `rows` is the rows its
    /// blocks stage ([`DevPass::trim_rows`]: the prefetched words and w are laid out by it).
    pub(super) fn launch_pass(&self, flags: usize) -> DevicePass {
        if flags & SEP_TRIM != 0 {
            DevicePass { rows: self.trim_rows as u32, ..self.dp }
        } else {
            self.dp
        }
    }
}
