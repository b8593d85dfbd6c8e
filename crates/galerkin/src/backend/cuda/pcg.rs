//! Jacobi-PCG iterations resident on the GPU ([`crate::backend::Backend::pcg_iterations`]): per
//! iteration one operator apply, one p·q partial reduction and two fused kernels
//! (`kernels/vector.cu`: `pcg_update` takes α from the partials on the device and updates x and r
//! while summing r·D⁻¹r and r·r; `pcg_direction` takes β likewise and updates p). No scalar
//! crosses to the host inside a batch; the solver reads the batch's residual norms once after it.
use super::kernels::launch;
use super::{CudaBackend, CudaVector};
use crate::backend::{LinearOperator, PcgWork};
use crate::Result;

impl CudaBackend {
    pub(crate) fn pcg_batch(&self, a: &dyn LinearOperator<CudaBackend>, x: &mut CudaVector, w: &mut PcgWork<'_, CudaBackend>, k: usize) -> Result<()> {
        let n = x.len();
        self.check("resident PCG", n, &[x, &w.p, &w.q, &w.r, w.dinv])?;
        let cfg = self.grid(n as u64);
        let nb = cfg.grid_dim.0;
        if w.partials.len() < 3 * nb as usize || w.state.len() < 3 + k {
            return Err(crate::Error::invalid("resident PCG: work buffers too small for the batch"));
        }
        let n64 = n as u64;
        for slot in 0..k as u32 {
            let parity = (w.iteration % 2) as u32;
            a.apply(self, &w.p, &mut w.q)?;
            {
                let (mut pq, _) = w.partials.data.split_at_mut(nb as usize);
                launch!(self, &self.kernels.dot_partials, cfg; &w.p.data, &w.q.data, &n64, &mut pq)?;
            }
            {
                let (pq, mut out) = w.partials.data.split_at_mut(nb as usize);
                let pq = pq.as_view();
                launch!(self, &self.kernels.pcg_update, cfg; &w.p.data, &w.q.data, &mut x.data, &mut w.r.data, &w.dinv.data, &n64,
                    &pq, &nb, &mut w.state.data, &parity, &mut out)?;
            }
            {
                let (_, parts) = w.partials.data.split_at_mut(nb as usize);
                let parts = parts.as_view();
                launch!(self, &self.kernels.pcg_direction, cfg; &mut w.p.data, &w.r.data, &w.dinv.data, &n64, &parts, &nb,
                    &mut w.state.data, &parity, &slot)?;
            }
            w.iteration += 1;
        }
        Ok(())
    }
}
