//! Forward 0's chunks pipelined inside a block ([`CudaMultifrontal::set_sep_pipe64`], round 29,
//! `MF_SEP_PIPE`). At 256 columns the bottom forward pass (`mf_mapssbtp_forward`, 32 768 subtrees on
//! the 2^20 cubic plan) ran a block's two 128-column chunks strictly in turn — stage, issue the bulk
//! copies, wait, product, barrier, stores —, so a block moved no bytes while it multiplied and
//! stored; only its 4 resident neighbours overlapped it (0.80 ms, 70–76 % of the copy rate). Here
//! the block sweeps 64-column chunks through two buffers: chunk k + 1's copies land while chunk k
//! is multiplied and stored. Two buffers of 64 columns take the shared memory of one of 128 (45 568
//! bytes against 44 960 on that plan: 5 blocks an SM either way). Same products in the same order
//! per column (the tensor-core product is per 16-column half): bit for bit the default's.
//!
//! Round 30 ([`CudaMultifrontal::set_sep_pipe64_backward`]): the backward launches the same way —
//! backward 0 (`mf_mapssbp0_backward_*`, 1.30 ms at 256 columns, 85–88 % of copy) and the split
//! upper passes (`mf_mapssbxs_backward_*`) — on passes of NB ≥ 2, under the register caps that keep
//! their twins' resident blocks; and forward 0 trimmed ([`CudaMultifrontal::set_sep_trim`]:
//! `mf_mapssbtp64z_forward`, with rows of `C + 4` `mf_mapssbtp64l4z_forward`).
use super::sep::{DevSeparators, SEP_BULK, SEP_EXT, SEP_PREF, SEP_TCF, SEP_XS};
use super::tc_rows::{SEP_LD4, SEP_TRIM};
use super::{launch, pipe, ptr, CudaBackend, CudaMultifrontal, DevPass, DevPtr, Kernel, Result};
use cudarc::driver::LaunchConfig;

/// Columns of a pipelined chunk (the kernel takes any multiple of 32; the host runs 64).
pub(super) const PIPE64_COLS: usize = 64;

/// The line variant the pipelined kernel is built on: forward 0's default (bulk lines, the product
/// on the tensor cores, the store side's indices prefetched; no staged rows, no split).
const PIPE64_FLAGS: usize = SEP_BULK | SEP_TCF | SEP_PREF;

/// The backward line variants the pipelined backward kernels are built on: backward 0's default
/// (bulk lines, the line sources and owned rows prefetched on a row-major bottom pass:
/// `mf_mapssbp0_backward_*`, compiled with MF_SEP_BOT) and the split upper passes'
/// (`mf_mapssbxs_backward_*`).
const PIPE64B_BOTTOM: usize = SEP_BULK | SEP_PREF;
const PIPE64B_SPLIT: usize = SEP_BULK | SEP_XS;

impl CudaMultifrontal {
    /// Pipelines the 64-column chunks of the forward separator-row launches that run
    /// `mf_mapssbtp_forward` — the bottom pass by default — as `mf_mapssbtp64_forward` where a
    /// block walks at least two chunks of its subtree (passes of at least [`TC_FEW_SUBTREES`](super::TC_FEW_SUBTREES)
    /// subtrees, or with the column blocks capped by [`Self::set_pipe_blocks`]); the block keeps the
    /// default's threads (4 a column at 256 columns). With the split off
    /// ([`Self::set_sep_ext_split`]`(false, _)`) forward 1 runs it too, at a resident block less
    /// (42 registers, allocated 48: 5 blocks of 256 threads an SM where its 40 keep 6). The split
    /// upper passes' kernel pipelined took 64 registers against 48 (a resident block lost, no cap
    /// compiles), so it is not built: with the default split forward 1 is unchanged, as are the
    /// backward passes. Bit-identical to the default. Off by default: measured slower (stop 54, H100, 2^20
    /// cubic elements at 256 columns: 3.518 ms against 3.305, forward 0 1.202 against 0.983 ms at 4
    /// blocks an SM against 5).
    pub fn set_sep_pipe64(&mut self, on: bool) {
        self.sep_pipe64 = on;
    }

    /// Whether the forward passes of many subtrees pipeline their chunks ([`Self::set_sep_pipe64`]).
    pub fn sep_pipe64(&self) -> bool {
        self.sep_pipe64
    }

    /// Pipelines the 64-column chunks of the backward separator-row launches as forward 0's are
    /// with [`Self::set_sep_pipe64`]: backward 0 (`mf_mapssbp0_backward_*` →
    /// `mf_mapssbp064_backward_*`) and the split upper passes (`mf_mapssbxs_backward_*` →
    /// `mf_mapssbxs64_backward_*`), on passes of NB ≥ 2 where a block walks at least two chunks.
    /// Under the default kernels' register caps (256, 4) and (256, 3): their resident blocks kept
    /// at 256 threads; NB = 1 is not built (56 registers against 40 — two blocks an SM lost, no
    /// cap compiles the f64 mma). Composes with [`Self::set_sep_pipe64`]. Bit-identical to the
    /// default. Off by default: measured slower (stop 54, H100, 2^20 cubic elements at 256 columns:
    /// 3.437 ms against 3.305, backward 0 1.725 against 1.625 ms, already 95 % of copy unpipelined).
    pub fn set_sep_pipe64_backward(&mut self, on: bool) {
        self.sep_pipe64_backward = on;
    }

    /// Whether the backward passes of many subtrees pipeline their chunks ([`Self::set_sep_pipe64_backward`]).
    pub fn sep_pipe64_backward(&self) -> bool {
        self.sep_pipe64_backward
    }

    /// The pipelined kernel of a launch over pass `p` (line variant `flags`) where chosen and
    /// built: forward 0's variant with [`Self::set_sep_pipe64`], the backward ones of NB ≥ 2 with
    /// [`Self::set_sep_pipe64_backward`].
    fn pipe64_kernel(&self, p: &DevPass, backward: bool, flags: usize) -> Option<&Kernel> {
        if !backward {
            // Forward 0's variant, trimmed (`-zs`) with rows of C + 4 (`-ld4`) or not.
            if !self.sep_pipe64 || flags & !(SEP_TRIM | SEP_LD4) != PIPE64_FLAGS || flags & (SEP_TRIM | SEP_LD4) == SEP_LD4 {
                return None;
            }
            return Some(if flags & SEP_TRIM != 0 { &self.kernels.mapss_trim_forward[usize::from(flags & SEP_LD4 != 0)][1] } else { &self.kernels.mapss_pipe64_forward });
        }
        let which = match flags {
            PIPE64B_BOTTOM => 0,
            PIPE64B_SPLIT => 1,
            _ => return None,
        };
        let nb = p.map_nb.checked_sub(2)?;
        self.kernels.mapss_pipe64_backward[which].get(nb).filter(|_| self.sep_pipe64_backward)
    }

    /// The pipelined kernel where a launch over pass `p` (line variant `flags`, `nrhs` columns)
    /// runs pipelined: its kernel chosen and built ([`Self::pipe64_kernel`]), its chunks not split
    /// over blocks, at least two chunks for some block, and the block's shared memory within the limit.
    fn pipes64(&self, p: &DevPass, backward: bool, flags: usize, nrhs: usize) -> Option<&Kernel> {
        self.pipe64_kernel(p, backward, flags).filter(|_| {
            !self.split_columns
                && nrhs > PIPE64_COLS * self.tensor_grid_y(p, nrhs, PIPE64_COLS)
                && p.mapss_pipe_smem(backward, PIPE64_COLS, flags) <= self.sub_smem
        })
    }

    /// The pipelined launch of pass `p` where [`Self::pipes64`], else `None`. Its block has
    /// the threads the default's would (its chunk's columns fitted as
    /// [`Self::launch_separators`] does, times the threads a column), 64 columns a chunk.
    /// `lines`: `b`, `x`, `sep`, the contribution buffer and the maps.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch_sep_pipe64(
        &self,
        be: &CudaBackend,
        stream: &cudarc::driver::CudaStream,
        seps: &DevSeparators,
        p: &DevPass,
        backward: bool,
        flags: usize,
        nrhs: usize,
        n: u64,
        lines: [DevPtr; 5],
    ) -> Result<Option<pipe::Launch<'_>>> {
        // Trimmed (`-zs`, round 30): rows of C + 4 where `-ld4` asks, the pass's trimmed rows.
        let flags = if !backward && flags & SEP_TRIM != 0 { self.with_tc_rows4(flags) } else { flags };
        let Some(k) = self.pipes64(p, backward, flags, nrhs) else { return Ok(None) };
        let Some((cols, _)) = self.fit_width(self.tensor_cols(p, nrhs), |c| p.mapss_smem(backward, c, flags)) else { return Ok(None) };
        let threads = super::sep::block_threads(k, PIPE64_COLS, (cols * self.column_threads / PIPE64_COLS).max(1))?;
        let smem = p.mapss_pipe_smem(backward, PIPE64_COLS, flags);
        let grid_y = self.tensor_grid_y(p, nrhs, PIPE64_COLS);
        let cfg = LaunchConfig { grid_dim: (p.count as u32, grid_y as u32, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 };
        let [b, x, sep, leaf, maps] = lines;
        let sp = seps.pass(be, p.index, backward, [b, x, sep]);
        let mcap = p.mapss_map(backward, flags) as u32;
        let (c, nr, off) = (PIPE64_COLS as u32, nrhs as u32, ptr(be, &p.map_off));
        let dp = p.launch_pass(flags);
        launch!(@on stream, be, k, cfg; &self.tree, &dp, &sp, &c, &mcap, &nr, &n, &b, &x, &sep, &leaf, &off, &maps)?;
        Ok(Some(pipe::Launch::new(k, cfg)))
    }
}

impl DevPass {
    /// Dynamic shared memory of one block of the pipelined kernels (line variant `flags`) with
    /// chunks of `cols` columns: [`DevPass::mapss_smem`]'s block — the prefetched words
    /// (MF_SEP_PREF), the map, one chunk's rows (of `cols + 2` under the tensor-core forward
    /// product, else `cols + 4`; with [`SEP_TRIM`] the trimmed rows, [`DevPass::launch_pass`]) and
    /// the split's staged entries (MF_SEP_XS) — and the second chunk's rows (the kernels stage the
    /// entries past both buffers; no pipelined kernel stages contribution rows, MF_SEP_EXT).
    pub(super) fn mapss_pipe_smem(&self, backward: bool, cols: usize, flags: usize) -> usize {
        debug_assert!(flags & SEP_EXT == 0 && flags != 0, "the pipelined kernels' line variants");
        self.mapss_smem(backward, cols, flags) + 8 * self.launch_pass(flags).rows as usize * (cols + Self::mapss_row_pad(flags))
    }
}

#[cfg(test)]
mod tests {
    /// One step of the kernel's schedule ([`pipe64_schedule`]): chunk `chunk` (columns `c0…`) issued
    /// into buffer `chunk & 1`, or waited for at that buffer's parity and multiplied and stored.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum PipeStep {
        /// The block barrier before an issue into a buffer a chunk used before.
        Barrier,
        Issue { chunk: u32, buffer: u32, c0: u32 },
        /// The once-a-subtree staging under chunk 0's copies (the prefetched indices, the split's entries).
        Started,
        Compute { chunk: u32, buffer: u32, parity: u32, c0: u32 },
    }

    /// `MF_SEP_PIPE_CHUNKS`' loop (kernels/multifrontal.cu; `maps_sep_subtree_pipe` forward and, round 30,
    /// `maps_sep_subtree_pipe_back` backward run it) over column block `cy`
    /// of `ny` with chunks of `cols` columns, step for step: the CPU emulation its tests check (every
    /// chunk issued and computed once, in order, its parity the buffer's phase, no buffer reissued
    /// before its chunk is done and a barrier passed, at most two chunks in flight).
    fn pipe64_schedule(nrhs: u32, cols: u32, cy: u32, ny: u32) -> Vec<PipeStep> {
        let (first, step) = (cy * cols, cols * ny);
        let chunks = if first < nrhs { (nrhs - first).div_ceil(step) } else { 0 };
        let mut out = Vec::new();
        for k in 0..=chunks {
            if k < chunks {
                if k >= 2 {
                    out.push(PipeStep::Barrier);
                }
                out.push(PipeStep::Issue { chunk: k, buffer: k & 1, c0: first + k * step });
            }
            if k == 0 {
                if chunks > 0 {
                    out.push(PipeStep::Started);
                }
                continue;
            }
            let c = k - 1;
            out.push(PipeStep::Compute { chunk: c, buffer: c & 1, parity: (c >> 1) & 1, c0: first + c * step });
        }
        out
    }

    /// The schedule against an mbarrier model (a phase count a buffer: an issue opens the next
    /// phase, a compute waits for the phase whose parity it names) for column counts whose chunk
    /// counts are 1, 2, 3, 4, 5 and odd, column blocks of 1 to 3.
    #[test]
    fn pipelined_chunks_cover_every_column_once_at_the_right_phase() {
        for nrhs in [1u32, 33, 63, 64, 65, 96, 128, 192, 256, 300] {
            for ny in 1..=3u32 {
                for cy in 0..ny {
                    let steps = pipe64_schedule(nrhs, 64, cy, ny);
                    let what = format!("{nrhs} columns, block {cy} of {ny}");
                    let mut phases = [0u32; 2]; // issues into each buffer so far
                    let mut done = [true; 2]; // the buffer's last chunk computed
                    let mut barrier_since = [true; 2]; // a block barrier since that compute
                    let (mut issued, mut computed, mut covered) = (Vec::new(), Vec::new(), Vec::new());
                    let mut started = false;
                    for s in &steps {
                        match *s {
                            PipeStep::Barrier => barrier_since = [true; 2],
                            PipeStep::Started => {
                                assert!(!started && issued.len() == 1 && computed.is_empty(), "{what}: the staging not once, after chunk 0's issue and before any compute");
                                started = true;
                            }
                            PipeStep::Issue { chunk, buffer, c0 } => {
                                assert_eq!(buffer, chunk & 1, "{what}");
                                assert!(done[buffer as usize] && barrier_since[buffer as usize], "{what}: chunk {chunk} reuses a busy buffer");
                                assert!(issued.len() - computed.len() < 2, "{what}: three chunks in flight");
                                done[buffer as usize] = false;
                                phases[buffer as usize] += 1;
                                issued.push((chunk, c0));
                            }
                            PipeStep::Compute { chunk, buffer, parity, c0 } => {
                                assert!(started, "{what}: chunk {chunk} computed before the staging");
                                assert_eq!(issued.get(chunk as usize), Some(&(chunk, c0)), "{what}: chunk {chunk} computed before its issue");
                                // The chunk's phase is the buffer's (chunk >> 1)-th: waiting on its parity
                                // returns once it completes, and the next one on this buffer is not open.
                                assert_eq!(phases[buffer as usize], (chunk >> 1) + 1, "{what}: chunk {chunk}");
                                assert_eq!(parity, ((phases[buffer as usize] - 1) & 1), "{what}: chunk {chunk}'s parity");
                                assert!(!done[buffer as usize], "{what}");
                                done[buffer as usize] = true;
                                barrier_since[buffer as usize] = false;
                                computed.push(chunk);
                                covered.extend(c0..(c0 + 64).min(nrhs));
                            }
                        }
                    }
                    assert_eq!(computed, (0..computed.len() as u32).collect::<Vec<_>>(), "{what}: chunks out of order");
                    assert_eq!(issued.len(), computed.len(), "{what}");
                    let mine: Vec<u32> = (0..nrhs).filter(|c| (c / 64) % ny == cy).collect();
                    assert_eq!(covered, mine, "{what}: columns");
                }
            }
        }
        // The shapes the device runs: 256 columns, 4 chunks; 300 columns, 5 (an odd count, the last of 44).
        assert_eq!(pipe64_schedule(256, 64, 0, 1).iter().filter(|s| matches!(s, PipeStep::Compute { .. })).count(), 4);
        assert_eq!(pipe64_schedule(300, 64, 0, 1).iter().filter(|s| matches!(s, PipeStep::Barrier)).count(), 3);
    }
}
