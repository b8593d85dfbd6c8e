//! The line walk's item shape ([`CudaMultifrontal::set_walk_shape`], round 21): columns per item
//! and threads per column. Round 20's timeline put the walk's time in each item's own work (6–11 µs
//! on 2 warps for 32 columns), so a shorter item — more warps on the same columns, or wider items
//! and half as many of them — is what could pay; both are host choices (the kernel takes `C` and
//! `blockDim.x / C` threads per column), measured against the default on the device.
//!
//! Its extent ([`CudaMultifrontal::set_walk_subtrees`], round 29): the same timeline put half the
//! walk in its lowest level (the passes of 512 subtrees, ≈ 54 µs forward and ≈ 52 backward of
//! 160 at 256 columns), items one after another on the walk's resident blocks; a bound below 512
//! runs that pass as one launch each way instead (its subtrees all at once, the separator-row
//! kernels' defaults), and walks only the levels above it.
use super::CudaMultifrontal;
use crate::solver::multifrontal::separators::TOP_SUBTREES;
use crate::{Error, Result};

/// Columns and threads per column of a line walk's item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkShape {
    /// Columns per item: 32, 64 or 128 (whole warps of lines; the flags and the trace are per
    /// (step, chunk of this many columns)).
    pub cols: usize,
    /// Threads per column, 1 to 4 (the block has `cols · threads` ≤ 512 threads).
    pub threads: usize,
}

impl WalkShape {
    /// The walk's shape before round 21: 32 columns a chunk, the separator-row kernels' threads
    /// per column ([`super::DEFAULT_COLUMN_THREADS`]: 2 warps an item).
    pub const fn round20(threads: usize) -> WalkShape {
        WalkShape { cols: super::sep::WALK_COLS, threads }
    }

    /// The walk's shape by default since round 25: 64 columns a chunk, the separator-row kernels'
    /// threads per column (4 warps an item, half as many items). On the H200 at 2^20 cubic
    /// elements it was faster than round 20's beyond the spread at 64 and 256 columns in four
    /// calls (rounds 22–25; the walk 167 against 193 µs at 256) and level or faster at 32.
    pub const fn round25(threads: usize) -> WalkShape {
        WalkShape { cols: 64, threads }
    }

    /// Errors where the kernel cannot run the shape (columns not 32, 64 or 128; threads not 1–4).
    pub fn check(self) -> Result<WalkShape> {
        if ![32, 64, 128].contains(&self.cols) || !(1..=4).contains(&self.threads) || self.cols * self.threads > 512 {
            return Err(Error::invalid(format!(
                "line walk shape {} columns × {} threads per column (expected 32, 64 or 128 columns, 1 to 4 threads, at most 512 threads)",
                self.cols, self.threads
            )));
        }
        Ok(self)
    }
}

impl CudaMultifrontal {
    /// Gives the line walk ([`super::SepLines::top`]) items of `shape` (`None`, the default:
    /// [`WalkShape::round25`], 64 columns with the separator-row kernels' threads per column,
    /// [`CudaMultifrontal::set_column_threads`], or round 20's 32 where 64 do not fit the shared
    /// memory). Errors on a shape the kernel cannot run. Where a chosen shape's item does not fit,
    /// the passes near the root run one launch each.
    pub fn set_walk_shape(&mut self, shape: Option<WalkShape>) -> Result<()> {
        self.walk_shape = shape.map(WalkShape::check).transpose()?;
        Ok(())
    }

    /// The line walk's shape in force (the default's 64 columns where they fit; see
    /// [`Self::set_walk_shape`]).
    pub fn walk_shape(&self) -> WalkShape {
        self.walk_shape.unwrap_or(WalkShape::round25(self.column_threads))
    }

    /// Walks only the passes near the root with at most `max` subtrees each (`None`, the default:
    /// [`TOP_SUBTREES`], 512); the passes below run one launch each way. A bound under which no
    /// pass falls runs every pass as a launch. Errors on 0. Narrower walks measured no faster (stop 54,
    /// H100, 2^20 cubic elements at 256 columns: 64 → 3.328 ms, 8 → 3.330, against 3.305).
    pub fn set_walk_subtrees(&mut self, max: Option<usize>) -> Result<()> {
        if max == Some(0) {
            return Err(Error::invalid("a walk of passes of at most 0 subtrees (expected at least 1)"));
        }
        self.walk_subtrees = max;
        Ok(())
    }

    /// The most subtrees of a walked pass in force ([`Self::set_walk_subtrees`]).
    pub fn walk_subtrees(&self) -> usize {
        self.walk_subtrees.unwrap_or(TOP_SUBTREES)
    }
}

