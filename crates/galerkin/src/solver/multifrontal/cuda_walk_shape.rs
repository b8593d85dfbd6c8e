//! The line walk's item shape ([`CudaMultifrontal::set_walk_shape`], round 21): columns per item
//! and threads per column. Round 20's timeline put the walk's time in each item's own work (6–11 µs
//! on 2 warps for 32 columns), so a shorter item — more warps on the same columns, or wider items
//! and half as many of them — is what could pay; both are host choices (the kernel takes `C` and
//! `blockDim.x / C` threads per column), measured against the default on the device.
use super::CudaMultifrontal;
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
    /// Gives the line walk ([`super::SepLines::top`]) items of `shape` (`None`, the default: 32
    /// columns with the separator-row kernels' threads per column,
    /// [`CudaMultifrontal::set_column_threads`]). Errors on a shape the kernel cannot run. Where the
    /// wider item's shared memory does not fit, the passes near the root run one launch each.
    pub fn set_walk_shape(&mut self, shape: Option<WalkShape>) -> Result<()> {
        self.walk_shape = shape.map(WalkShape::check).transpose()?;
        Ok(())
    }

    /// The line walk's shape in force.
    pub fn walk_shape(&self) -> WalkShape {
        self.walk_shape.unwrap_or(WalkShape::round20(self.column_threads))
    }
}

