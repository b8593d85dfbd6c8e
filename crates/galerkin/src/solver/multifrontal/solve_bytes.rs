//! The bytes a row-major solve through the separator rows must move, pass by pass and by kind
//! (round 26's budget of issue 15): what each launch of `CudaMultifrontal::solve_many_rows` reads
//! and writes of the right-hand sides' lines, the contribution buffer and the transfer maps, and
//! its index tables, counted on the plan itself. The per-launch profile's figure
//! (`PassTraffic`, `cuda_pipe.rs`) leaves out the separator rows' copy in and out of `sep` (the
//! owned rows); this count has them, so the floor of a solve at the copy rate and what a change of
//! layout removes (e.g. the rows in `x`, [`SeparatorPlan::at_dofs`]) can be read off before any
//! device runs it.
use super::maps::ldm;
use super::separators::{SeparatorPlan, TopWalk};
use super::subtrees::Pass;

/// Doubles per right-hand side (lines) and bytes per solve (maps, indices) of one launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchBytes {
    /// `forward q`, `backward q`, or `walk` (the passes near the root both ways, one launch).
    pub label: String,
    /// Lines of `b` read at the bottom pass's eliminated rows (both ways) and at its owned rows
    /// (forward, the copy into the separator rows).
    pub b_read: u64,
    /// Separator rows read (`b` forward and backward at the rows a pass eliminates; `x` of its
    /// Schur rows backward) and written (the owned rows' copy forward; `x` backward).
    pub sep_read: u64,
    pub sep_write: u64,
    /// Lines of `x` written by the bottom backward pass: eliminated rows, then owned rows.
    pub x_write: u64,
    /// Contribution rows written (forward: every root's Schur rows) and read (forward: all of a
    /// subtree's external ones; backward: those at its eliminated rows, the forward recomputed).
    pub contrib_write: u64,
    pub contrib_read: u64,
    /// Transfer maps read once per block (doubles): `Gᵀ` forward, `[H K]ᵀ` backward.
    pub maps: u64,
    /// Index bytes read once per block (row, contribution and owned-row tables).
    pub index_bytes: u64,
}

impl LaunchBytes {
    /// Lines (doubles per right-hand side) read and written.
    pub fn lines(&self) -> u64 {
        self.b_read + self.sep_read + self.sep_write + self.x_write + self.contrib_write + self.contrib_read
    }

    /// Bytes of the launch at `nrhs` columns: the lines, the maps and the indices once.
    pub fn bytes(&self, nrhs: usize) -> f64 {
        8.0 * (self.lines() * nrhs as u64 + self.maps) as f64 + self.index_bytes as f64
    }

    fn add(&mut self, o: &LaunchBytes) {
        self.b_read += o.b_read;
        self.sep_read += o.sep_read;
        self.sep_write += o.sep_write;
        self.x_write += o.x_write;
        self.contrib_write += o.contrib_write;
        self.contrib_read += o.contrib_read;
        self.maps += o.maps;
        self.index_bytes += o.index_bytes;
    }
}

/// One pass one way (`q` its index in `sp`).
/// `in_place`: `x` is `b` ([`super::in_place`]); at dofs the bottom forward pass then copies no
/// owned row (`sep` is `b` itself).
fn pass_bytes(sp: &SeparatorPlan, q: usize, backward: bool, in_place: bool) -> LaunchBytes {
    let p: &Pass = &sp.passes[q];
    let mut l = LaunchBytes { label: format!("{} {q}", if backward { "backward" } else { "forward" }), ..LaunchBytes::default() };
    for j in 0..p.len() {
        let (r, ne) = ((p.row_ptr[j + 1] - p.row_ptr[j]) as u64, p.elim[j] as u64);
        let (ext0, ext1) = (p.ext_ptr[j] as usize, p.ext_ptr[j + 1] as usize);
        let copies = !(sp.at_dofs && (backward || in_place));
        let own = if q == 0 && copies { u64::from(sp.own_ptr[j + 1] - sp.own_ptr[j]) } else { 0 };
        // The rows the pass eliminates come from `b` at the bottom, from `sep` above.
        let (from_b, from_sep) = if q == 0 { (ne, 0) } else { (0, ne) };
        if backward {
            l.b_read += from_b;
            l.sep_read += from_sep + (r - ne);
            l.contrib_read += p.ext_row[ext0..ext1].iter().filter(|&&e| u64::from(e) < ne).count() as u64;
            l.maps += r * ldm(ne as usize) as u64;
            // `x` at the eliminated rows: `x` itself at the bottom, in place in `sep` above; the
            // owned rows' `x` from `sep` into `x` (none where `sep` is `x`).
            if q == 0 {
                l.x_write += ne + own;
            } else {
                l.sep_write += ne;
            }
        } else {
            l.b_read += from_b + own;
            l.sep_read += from_sep;
            l.sep_write += own;
            l.contrib_read += (ext1 - ext0) as u64;
            l.contrib_write += r - ne;
            l.maps += ne * (r - ne);
        }
        // row_ptr, row_dof, elim, ext_ptr, ext_row (u32), ext_src (u64), a map offset (u64);
        // the bottom pass's owned rows: own_ptr, own_loc, own_dof.
        l.index_bytes += 4 * (2 + r + 1 + 2 + (ext1 - ext0) as u64) + 8 * (ext1 - ext0) as u64 + 8;
        if q == 0 && copies {
            l.index_bytes += 4 * (2 + 2 * own);
        }
    }
    l
}

/// Every launch of a row-major solve through `sp`, in order: forward passes below the walk, the
/// walk (both ways, one launch) where `walk` is given, backward passes below it. The maps are
/// counted as [`super::maps::MapLayout`] lays them out (`r · ldm(ne)` + `ne · s` doubles a subtree).
pub fn solve_bytes(sp: &SeparatorPlan, walk: Option<&TopWalk>) -> Vec<LaunchBytes> {
    solve_bytes_aliased(sp, walk, false)
}

/// [`solve_bytes`] of a solve in place (`in_place`: `x` is `b`,
/// `CudaMultifrontal::solve_many_rows_in_place`): at dofs the bottom forward pass reads and writes
/// no owned row (0.40 GB of 9.02 at 2^20 cubic elements and 256 columns); compact rows the same bytes.
pub fn solve_bytes_aliased(sp: &SeparatorPlan, walk: Option<&TopWalk>, in_place: bool) -> Vec<LaunchBytes> {
    let end = walk.map_or(sp.passes.len(), |w| w.first);
    let mut out: Vec<LaunchBytes> = (0..end).map(|q| pass_bytes(sp, q, false, in_place)).collect();
    if walk.is_some() {
        let mut w = LaunchBytes { label: "walk".to_string(), ..LaunchBytes::default() };
        for q in end..sp.passes.len() {
            w.add(&pass_bytes(sp, q, false, in_place));
            w.add(&pass_bytes(sp, q, true, in_place));
        }
        out.push(w);
    }
    out.extend((0..end).rev().map(|q| pass_bytes(sp, q, true, in_place)));
    out
}
