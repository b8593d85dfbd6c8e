//! Jacobi-PCG fused into the z-marching lattice apply ([`crate::backend::LinearOperator::pcg_fused`];
//! `kernels/grid.cu`, `grid_pcg_*`): two kernels per iteration and 9 vector passes instead of
//! three kernels and 12. The direction update `p = D⁻¹r + βp'` and `x += α'p'` happen while the
//! march loads its planes of p, and D⁻¹ is read only where a node is off the uniform path: a node
//! of code m takes `invd[m]`, which is the solver's own D⁻¹ at one node of that code, checked bit
//! for bit at every node of the code before the solve's first iteration (else the unfused loop
//! runs: same iterates either way). Opt-in ([`fused_pcg_enabled`]: measured slower than the
//! unfused loop on the H100), then taken wherever the marching apply is.
use super::DeviceGrid;
use crate::backend::cuda::kernels::launch;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::{Backend, PcgWork};
use crate::{Error, Result};

/// Fused iterations run in this process (tests: the fused path was taken, not the fallback).
static FUSED_ITERATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many PCG iterations the fused lattice loop has run in this process.
pub fn fused_iterations() -> usize {
    FUSED_ITERATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the fused loop is on: off by default — on the H100 it measured slower than the unfused
/// resident loop with the marching apply (0.548 against 0.535 ms per PCG iteration at 10⁷
/// unknowns, same call; BENCHMARKS.md): the march is bound by latency and L1 traffic, not by
/// DRAM, and the direction update's loads (r, p', the node codes, x) lengthen it by more than
/// the three passes save. `GALERKIN_GRID_PCG=on` or [`set_fused_pcg`] turns it on.
static FUSED_PCG: std::sync::OnceLock<std::sync::atomic::AtomicBool> = std::sync::OnceLock::new();

fn fused_flag() -> &'static std::sync::atomic::AtomicBool {
    FUSED_PCG.get_or_init(|| std::sync::atomic::AtomicBool::new(std::env::var("GALERKIN_GRID_PCG").as_deref() == Ok("on")))
}

/// Turns the fused lattice PCG on or off for this process (tests; the default comes from
/// `GALERKIN_GRID_PCG=on`).
pub fn set_fused_pcg(on: bool) {
    fused_flag().store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the fused lattice PCG is on in this process.
pub fn fused_pcg_enabled() -> bool {
    fused_flag().load(std::sync::atomic::Ordering::Relaxed)
}

/// Codes a node can have besides 255 (the gather path).
const CODES: usize = 255;

/// One node of each code 0..255 (−1 where no node has it).
pub(super) fn code_nodes(codes: &[u8]) -> Vec<i64> {
    let mut at = vec![-1i64; CODES];
    for (v, &c) in codes.iter().enumerate() {
        if (c as usize) < CODES && at[c as usize] < 0 {
            at[c as usize] = v as i64;
        }
    }
    at
}

/// Blocks of the grid-stride fused PCG kernels (update, flush, check): enough to fill an H100
/// twice over, few enough that the update's last block sums their partials quickly.
const STRIDE_BLOCKS: usize = 1056;

impl DeviceGrid {
    fn stride_config(&self, n: usize) -> cudarc::driver::LaunchConfig {
        let blocks = n.div_ceil(256).clamp(1, STRIDE_BLOCKS) as u32;
        cudarc::driver::LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
    }

    /// Whether this solve can take the fused loop: the marching apply, the mask the operator
    /// knows, and `w.dinv` equal to the per-code D⁻¹ at every uniform node (then `w.fused` gets the
    /// per-code table and the second direction buffer).
    fn fused_setup(&self, be: &CudaBackend, w: &mut PcgWork<'_, CudaBackend>, mask: Option<&CudaVector>) -> Result<bool> {
        if self.zk == 0 || !fused_pcg_enabled() || !be.owns(&self.table) {
            return Ok(false);
        }
        let n = self.host.ndofs();
        let (codes, nodes) = match (mask, &self.masked) {
            (None, _) => (&self.node_material, &self.plain_nodes),
            (Some(m), Some((_, codes, nodes))) => {
                be.check("fused lattice PCG", n, &[m])?;
                (codes, nodes)
            }
            (Some(_), None) => return Ok(false),
        };
        let idx = be.upload(nodes)?;
        let mut invd = be.zeros(CODES)?;
        let count = CODES as u32;
        let one = cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        launch!(be, &self.pcg[5], one; &idx, &count, &w.dinv.data, &mut invd.data)?;
        let mut flag = be.upload(&[0u32])?;
        let n64 = n as u64;
        launch!(be, &self.pcg[4], self.stride_config(n); codes, &n64, &w.dinv.data, &invd.data, &mut flag)?;
        if be.download(&flag)?[0] != 0 {
            return Ok(false);
        }
        w.fused.invd = Some(invd);
        w.fused.p2 = Some(be.zeros(n)?);
        Ok(true)
    }

    /// [`crate::backend::LinearOperator::pcg_fused`] on the lattice: `k` iterations (march, update),
    /// or with `k = 0` the pending `x += αp`.
    pub(super) fn fused_pcg(&self, be: &CudaBackend, x: &mut CudaVector, w: &mut PcgWork<'_, CudaBackend>, k: usize, mask: Option<&CudaVector>) -> Result<bool> {
        if !w.fused.checked {
            w.fused.checked = true;
            w.fused.on = self.fused_setup(be, w, mask)?;
        }
        if !w.fused.on {
            return Ok(false);
        }
        let n = self.host.ndofs();
        be.check("fused lattice PCG", n, &[x, &w.p, &w.q, &w.r, w.dinv])?;
        let n64 = n as u64;
        let alpha_at = (w.state.len() - 1) as u32;
        let (p2, invd) = match (w.fused.p2.as_mut(), w.fused.invd.as_ref()) {
            (Some(p2), Some(invd)) => (p2, invd),
            _ => return Err(Error::invalid("fused lattice PCG: its buffers are missing")),
        };
        if k == 0 {
            if w.fused.pending && w.iteration > 0 {
                // The last direction: iteration i wrote p into buffer i % 2 (0: w.p, 1: p2).
                let last = if (w.iteration - 1) % 2 == 0 { &w.p } else { &*p2 };
                launch!(be, &self.pcg[3], self.stride_config(n); &n64, &mut x.data, &last.data, &w.state.data, &alpha_at)?;
            }
            w.fused.pending = false;
            return Ok(true);
        }
        if w.state.len() < 4 + k || w.partials.is_empty() {
            return Err(Error::invalid("fused lattice PCG: work buffers too small for the batch"));
        }
        let (march_cfg, march_blocks) = self.march_config()?;
        let stride = self.stride_config(n);
        let mut guard = self.dot_scratch(be, march_blocks.max(2 * stride.grid_dim.0 as usize))?;
        let (sums, counter) = guard.as_mut().ok_or_else(|| Error::invalid("lattice x·y scratch missing"))?;
        let codes = self.codes(be, n, mask)?;
        let stencil_at = self.host.table.len() as u64;
        let params = super::param_stencils(&self.host);
        let (l, mat, tab, zk) = (&self.lattice, &self.material, &self.table, self.zk);
        for slot in 0..k as u32 {
            let i = w.iteration;
            let parity = (i % 2) as u32;
            let first = u32::from(i == 0);
            // Direction i into buffer i % 2, the previous one read from the other.
            let (p_old, p_new) = if i % 2 == 0 { (&*p2, &mut w.p) } else { (&w.p, &mut *p2) };
            let (r, q, dinv, s, pq) = (&w.r.data, &mut w.q.data, &w.dinv.data, &mut w.state.data, &mut w.partials.data);
            match mask {
                None => launch!(be, &self.pcg[0], march_cfg; l, mat, tab, &stencil_at, &params, codes, &zk,
                    r, &p_old.data, &mut p_new.data, &mut x.data, q, dinv, &invd.data, s, &parity, &first, &alpha_at,
                    &mut *sums, &mut *counter, pq)?,
                Some(m) => launch!(be, &self.pcg[1], march_cfg; l, mat, tab, &stencil_at, &params, codes, &m.data, &zk,
                    r, &p_old.data, &mut p_new.data, &mut x.data, q, dinv, &invd.data, s, &parity, &first, &alpha_at,
                    &mut *sums, &mut *counter, pq)?,
            }
            launch!(be, &self.pcg[2], stride; codes, &n64, &w.q.data, &mut w.r.data, &w.dinv.data, &invd.data, &w.partials.data,
                &mut w.state.data, &parity, &slot, &alpha_at, &mut *sums, &mut *counter)?;
            w.iteration += 1;
            w.fused.pending = true;
        }
        FUSED_ITERATIONS.fetch_add(k, std::sync::atomic::Ordering::Relaxed);
        Ok(true)
    }
}
