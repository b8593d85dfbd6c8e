//! The CPU backend's [`HyperSystem`]: [`CpuHyper`] on host vectors and CSR matrices.
use super::element::CpuHyper;
use super::newton::HyperSystem;
use crate::backend::Cpu;
use crate::linalg::CsrMatrix;
use crate::{Error, Result};

/// [`CpuHyper`] with the positions of the host-integrated extra entries.
pub struct CpuSystem {
    pub asm: CpuHyper,
    extra: Vec<u64>,
}

impl CpuSystem {
    pub fn new(asm: CpuHyper) -> CpuSystem {
        CpuSystem { asm, extra: Vec::new() }
    }
}

impl HyperSystem<Cpu> for CpuSystem {
    fn ndofs(&self) -> usize {
        self.asm.el.space.ndofs()
    }
    fn new_matrix(&self, _be: &Cpu) -> Result<CsrMatrix> {
        Ok(self.asm.matrix())
    }
    fn internal(&mut self, _be: &Cpu, u: &Vec<f64>, r: &mut Vec<f64>, k: Option<&mut CsrMatrix>) -> Result<()> {
        self.asm.assemble(u, r, k)
    }
    fn add_extra(&mut self, _be: &Cpu, k: &mut CsrMatrix, vals: &[f64]) -> Result<()> {
        if vals.len() != self.extra.len() {
            return Err(Error::dim("extra Jacobian entries", self.extra.len(), vals.len()));
        }
        for (&p, &v) in self.extra.iter().zip(vals) {
            k.values[p as usize] += v;
        }
        Ok(())
    }
    fn set_extra_positions(&mut self, _be: &Cpu, pos: &[u64]) -> Result<()> {
        self.extra = pos.to_vec();
        Ok(())
    }
}
