//! The `none` level on the CPU: the lattice operator ([`super::grid`]) where the mesh is a uniform
//! lattice with coefficients per cell, else the matrix-free apply with `D` recomputed per point.
use super::grid::{CpuGrid, GridData};
use crate::backend::Cpu;
use crate::operator::level::partial::{cpu::MatFree, Pointwise};
use crate::operator::level::{LevelInput, LevelOperator};
use crate::Result;

pub fn build(input: &LevelInput) -> Result<Box<dyn LevelOperator<Cpu>>> {
    Ok(match GridData::try_new(input)? {
        Some(g) => Box::new(CpuGrid(g)),
        None => Box::new(MatFree::build(input, Pointwise::Recomputed)?),
    })
}
