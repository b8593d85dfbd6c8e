//! The CPU backend's [`HyperSystem`]: [`CpuHyper`] on host vectors and CSR matrices.
use super::element::CpuHyper;
use super::loads::FollowerPressure;
use super::newton::HyperSystem;
use crate::backend::Cpu;
use crate::linalg::CsrMatrix;
use crate::{Error, Result};

/// [`CpuHyper`] with the follower pressure, if any.
pub struct CpuSystem {
    pub asm: CpuHyper,
    pressure: Option<(FollowerPressure, Vec<u64>)>,
    kv: Vec<f64>,
}

impl CpuSystem {
    pub fn new(asm: CpuHyper) -> CpuSystem {
        CpuSystem { asm, pressure: None, kv: Vec::new() }
    }
}

impl HyperSystem<Cpu> for CpuSystem {
    fn ndofs(&self) -> usize {
        self.asm.el.space.ndofs()
    }
    fn components(&self) -> usize {
        self.asm.el.dim
    }
    fn new_matrix(&self, _be: &Cpu) -> Result<CsrMatrix> {
        Ok(self.asm.matrix())
    }
    fn internal(&mut self, _be: &Cpu, u: &Vec<f64>, r: &mut Vec<f64>, k: Option<&mut CsrMatrix>) -> Result<()> {
        self.asm.assemble(u, r, k)
    }
    fn set_pressure(&mut self, _be: &Cpu, p: &FollowerPressure) -> Result<()> {
        self.pressure = Some((p.clone(), p.positions()));
        Ok(())
    }
    fn add_pressure(&mut self, _be: &Cpu, u: &Vec<f64>, lf: f64, r: &mut Vec<f64>, k: Option<&mut CsrMatrix>) -> Result<()> {
        let Some((p, pos)) = &self.pressure else { return Err(Error::invalid("pressure terms asked for before the pressure was set")) };
        let want = k.is_some();
        p.add(u, lf, r, want.then_some(&mut self.kv));
        if let Some(k) = k {
            if self.kv.len() != pos.len() {
                return Err(Error::dim("pressure Jacobian entries", pos.len(), self.kv.len()));
            }
            for (&at, &v) in pos.iter().zip(&self.kv) {
                k.values[at as usize] += v;
            }
        }
        Ok(())
    }
}
