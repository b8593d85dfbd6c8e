//! Jacobi-PCG iterations resident on the GPU ([`crate::backend::Backend::pcg_iterations`]): per
//! iteration one operator apply (with the p·q partial sums fused where the operator can:
//! [`LinearOperator::apply_dot`], else a partial reduction of its own) and two fused kernels
//! (`kernels/vector.cu`: `pcg_update` takes α from the partials on the device and updates r while
//! summing r·D⁻¹r and r·r; `pcg_direction` takes β likewise and updates x and p). No scalar
//! crosses to the host inside a batch; the solver reads the batch's residual norms once after it.
use super::kernels::launch;
use super::{CudaBackend, CudaVector};
use crate::backend::{LinearOperator, PcgWork};
use crate::Result;

impl CudaBackend {
    pub(crate) fn pcg_batch(&self, a: &dyn LinearOperator<CudaBackend>, x: &mut CudaVector, w: &mut PcgWork<'_, CudaBackend>, k: usize) -> Result<()> {
        let n = x.len();
        self.check("resident PCG", n, &[x, &w.p, &w.q, &w.r, w.dinv])?;
        // The operator's own fused iterations where it has them (the z-marching lattice).
        if a.pcg_fused(self, x, w, k, None)? {
            return Ok(());
        }
        let cfg = self.grid(n as u64);
        let nb = cfg.grid_dim.0;
        if w.partials.len() < 3 * nb as usize || w.state.len() < 4 + k {
            return Err(crate::Error::invalid("resident PCG: work buffers too small for the batch"));
        }
        let n64 = n as u64;
        let alpha_at = (w.state.len() - 1) as u32;
        for slot in 0..k as u32 {
            let parity = (w.iteration % 2) as u32;
            // q = A p with the p·q partials in the same pass where the operator fuses them.
            let np = match a.apply_dot(self, &w.p, &mut w.q, None, &mut w.partials)? {
                Some(np) => np,
                None => {
                    a.apply(self, &w.p, &mut w.q)?;
                    let (mut pq, _) = w.partials.data.split_at_mut(nb as usize);
                    launch!(self, &self.kernels.dot_partials, cfg; &w.p.data, &w.q.data, &n64, &mut pq)?;
                    nb as usize
                }
            };
            if np + 2 * nb as usize > w.partials.len() {
                return Err(crate::Error::invalid("resident PCG: the operator wrote more partial sums than the work buffer holds"));
            }
            let np32 = np as u32;
            {
                let (pq, mut out) = w.partials.data.split_at_mut(np);
                let pq = pq.as_view();
                launch!(self, &self.kernels.pcg_update, cfg; &w.q.data, &mut w.r.data, &w.dinv.data, &n64,
                    &pq, &np32, &mut w.state.data, &parity, &alpha_at, &mut out)?;
            }
            {
                let (_, parts) = w.partials.data.split_at_mut(np);
                let parts = parts.as_view();
                launch!(self, &self.kernels.pcg_direction, cfg; &mut x.data, &mut w.p.data, &w.r.data, &w.dinv.data, &n64, &parts, &nb,
                    &mut w.state.data, &parity, &slot, &alpha_at)?;
            }
            w.iteration += 1;
        }
        Ok(())
    }
}
