//! Jacobi-PCG with the z-marching lattice apply ([`crate::backend::LinearOperator::pcg_fused`];
//! `kernels/grid.cu`, `grid_pcg_*`). D⁻¹ is read only where a node is off the uniform path: a node
//! of code m takes `invd[m]`, which is the solver's own D⁻¹ at one node of that code, checked bit
//! for bit at every node of the code before the solve's first iteration (else the generic loop
//! runs: same iterates either way). Two loops ([`PcgLoop`]):
//! - **ring** (the default): the marching apply with p·q (`grid_march_dot`), the update
//!   (`grid_pcg_update`: α, r, r·D⁻¹r and r·r, last-block totals) and the direction
//!   (`grid_pcg_direction`: x += αp, p = D⁻¹r + βp) — three kernels and 10 vector passes (the
//!   generic resident loop, [`crate::backend::cuda`]'s `pcg_update`/`pcg_direction`: 12, D⁻¹ read
//!   twice and the partial sums re-summed in every block);
//! - **fused** (`GALERKIN_GRID_PCG=fused`): the direction update `p = D⁻¹r + βp'` and
//!   `x += α'p'` happen while the march loads its planes of p (the same ring of four planes) —
//!   two kernels and 9 passes.
//!
//! `GALERKIN_GRID_PCG=off` gives the generic loop (measurements).
use super::DeviceGrid;
use crate::backend::cuda::kernels::launch;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::{Backend, PcgWork};
use crate::{Error, Result};

/// Lattice PCG iterations run in this process by either loop (tests: the lattice's loop was
/// taken, not the generic one).
static FUSED_ITERATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The same per loop: ring, fused.
static LOOP_ITERATIONS: [std::sync::atomic::AtomicUsize; 2] = [std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicUsize::new(0)];

/// How many PCG iterations the lattice's own loops (ring or fused) have run in this process.
pub fn fused_iterations() -> usize {
    FUSED_ITERATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

/// How many PCG iterations loop `l` has run in this process (0 for the generic loop).
pub fn lattice_pcg_iterations(l: PcgLoop) -> usize {
    match l {
        PcgLoop::Generic => 0,
        PcgLoop::Ring => LOOP_ITERATIONS[0].load(std::sync::atomic::Ordering::Relaxed),
        PcgLoop::Fused => LOOP_ITERATIONS[1].load(std::sync::atomic::Ordering::Relaxed),
    }
}

/// Which Jacobi-PCG loop a marching lattice runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcgLoop {
    /// The backend's generic resident loop (apply with p·q, `pcg_update`, `pcg_direction`: 12 passes).
    Generic,
    /// March with p·q, the lattice's update and direction with D⁻¹ per node code (10 passes).
    Ring,
    /// The direction update inside the march (9 passes).
    Fused,
}

impl PcgLoop {
    fn from_env() -> PcgLoop {
        match std::env::var("GALERKIN_GRID_PCG").as_deref() {
            Ok("off") => PcgLoop::Generic,
            Ok("on" | "fused") => PcgLoop::Fused,
            _ => PcgLoop::Ring,
        }
    }
}

/// The loop of this process: `GALERKIN_GRID_PCG` = `off` (generic), `ring` (default) or `fused`
/// (also `on`), or [`set_pcg_loop`].
static PCG_LOOP: std::sync::OnceLock<std::sync::atomic::AtomicU8> = std::sync::OnceLock::new();

fn loop_flag() -> &'static std::sync::atomic::AtomicU8 {
    PCG_LOOP.get_or_init(|| std::sync::atomic::AtomicU8::new(PcgLoop::from_env() as u8))
}

/// Sets the lattice PCG loop of this process (tests, measurements).
pub fn set_pcg_loop(l: PcgLoop) {
    loop_flag().store(l as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The lattice PCG loop of this process.
pub fn pcg_loop() -> PcgLoop {
    match loop_flag().load(std::sync::atomic::Ordering::Relaxed) {
        0 => PcgLoop::Generic,
        1 => PcgLoop::Ring,
        _ => PcgLoop::Fused,
    }
}

/// [`set_pcg_loop`]: the fused loop on, or back to the default ring loop.
pub fn set_fused_pcg(on: bool) {
    set_pcg_loop(if on { PcgLoop::Fused } else { PcgLoop::Ring });
}

/// Whether the fused loop is the one of this process.
pub fn fused_pcg_enabled() -> bool {
    pcg_loop() == PcgLoop::Fused
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

    /// Whether this solve can take the lattice's loop: the marching apply, the mask the operator
    /// knows, and `w.dinv` equal to the per-code D⁻¹ at every uniform node (then `w.fused` gets the
    /// per-code table and, for the fused loop, the second direction buffer).
    fn fused_setup(&self, be: &CudaBackend, w: &mut PcgWork<'_, CudaBackend>, mask: Option<&CudaVector>, mode: PcgLoop) -> Result<bool> {
        if self.zk == 0 || mode == PcgLoop::Generic || !be.owns(&self.table) {
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
        if mode == PcgLoop::Fused {
            w.fused.p2 = Some(be.zeros(n)?);
        }
        Ok(true)
    }

    /// [`crate::backend::LinearOperator::pcg_fused`] on the lattice: `k` iterations of the loop of
    /// [`pcg_loop`] (taken at the solve's first batch), or with `k = 0` the fused loop's pending
    /// `x += αp`.
    pub(super) fn fused_pcg(&self, be: &CudaBackend, x: &mut CudaVector, w: &mut PcgWork<'_, CudaBackend>, k: usize, mask: Option<&CudaVector>) -> Result<bool> {
        if !w.fused.checked {
            w.fused.checked = true;
            w.fused.on = self.fused_setup(be, w, mask, pcg_loop())?;
        }
        if !w.fused.on {
            return Ok(false);
        }
        if w.fused.p2.is_none() {
            return self.ring_pcg(be, x, w, k, mask);
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
        LOOP_ITERATIONS[1].fetch_add(k, std::sync::atomic::Ordering::Relaxed);
        Ok(true)
    }
}

impl DeviceGrid {
    /// The ring loop: `k` iterations of march with p·q, update and direction (x up to date after
    /// each, nothing pending).
    fn ring_pcg(&self, be: &CudaBackend, x: &mut CudaVector, w: &mut PcgWork<'_, CudaBackend>, k: usize, mask: Option<&CudaVector>) -> Result<bool> {
        if k == 0 {
            return Ok(true);
        }
        let n = self.host.ndofs();
        be.check("lattice PCG", n, &[x, &w.p, &w.q, &w.r, w.dinv])?;
        if w.state.len() < 4 + k || w.partials.is_empty() {
            return Err(Error::invalid("lattice PCG: work buffers too small for the batch"));
        }
        let invd = w.fused.invd.as_ref().ok_or_else(|| Error::invalid("lattice PCG: its D⁻¹ per code is missing"))?;
        let n64 = n as u64;
        let alpha_at = (w.state.len() - 1) as u32;
        let (_, march_blocks) = self.march_config()?;
        let stride = self.stride_config(n);
        // The scratch of both reductions, grown once for the larger.
        drop(self.dot_scratch(be, march_blocks.max(2 * stride.grid_dim.0 as usize))?);
        let codes = self.codes(be, n, mask)?;
        for slot in 0..k as u32 {
            let parity = (w.iteration % 2) as u32;
            self.launch_march(be, &w.p, &mut w.q, mask, Some(&mut w.partials))?;
            {
                let mut guard = self.dot_scratch(be, 2 * stride.grid_dim.0 as usize)?;
                let (sums, counter) = guard.as_mut().ok_or_else(|| Error::invalid("lattice x·y scratch missing"))?;
                launch!(be, &self.pcg[2], stride; codes, &n64, &w.q.data, &mut w.r.data, &w.dinv.data, &invd.data, &w.partials.data,
                    &mut w.state.data, &parity, &slot, &alpha_at, &mut *sums, &mut *counter)?;
            }
            launch!(be, &self.pcg[6], stride; codes, &n64, &mut x.data, &mut w.p.data, &w.r.data, &w.dinv.data, &invd.data,
                &w.state.data, &parity, &alpha_at)?;
            w.iteration += 1;
        }
        FUSED_ITERATIONS.fetch_add(k, std::sync::atomic::Ordering::Relaxed);
        LOOP_ITERATIONS[0].fetch_add(k, std::sync::atomic::Ordering::Relaxed);
        Ok(true)
    }
}
