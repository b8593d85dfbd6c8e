//! The `none` level on the CPU: the matrix-free apply with `D` recomputed per point.
use crate::operator::level::partial::{cpu::MatFree, Pointwise};
use crate::operator::level::LevelInput;
use crate::Result;

pub fn build(input: &LevelInput) -> Result<MatFree> {
    MatFree::build(input, Pointwise::Recomputed)
}
