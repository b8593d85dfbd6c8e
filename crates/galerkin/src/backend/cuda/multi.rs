//! Operations over several vectors in one launch (`vec_dots_partials`, `vec_add_combination` in
//! `kernels/vector.cu`): GMRES's classical Gram–Schmidt takes every projection of a basis in one
//! reduction with one wait for the host, where modified Gram–Schmidt waits once per basis vector —
//! on a small system that wait, not the arithmetic, is the cost. Up to [`MULTI`] device pointers
//! go into each launch by value.
use super::context::CudaBackend;
use super::cuda_error;
use super::jit::BLOCK_SIZE;
use super::kernels::launch;
use super::vector::CudaVector;
use crate::{Error, Result};
use cudarc::driver::{DevicePtr, DeviceRepr, LaunchConfig};

/// Vectors one launch takes (`MULTI_VECS` in `kernels/vector.cu`).
const MULTI: usize = 32;

/// `VecList` of `kernels/vector.cu`: device pointers and coefficients, by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct VecList {
    v: [u64; MULTI],
    c: [f64; MULTI],
}

// SAFETY: plain data of the kernel's C layout (32 pointers, then 32 doubles).
unsafe impl DeviceRepr for VecList {}

impl CudaBackend {
    fn vec_list(&self, vs: &[CudaVector], c: &[f64]) -> VecList {
        let mut list = VecList {
            v: [0; MULTI],
            c: [0.0; MULTI],
        };
        for (slot, v) in list.v.iter_mut().zip(vs) {
            // (one stream: the launch that reads the pointer is ordered after every earlier write)
            *slot = v.data.device_ptr(&self.stream).0;
        }
        list.c[..c.len()].copy_from_slice(c);
        list
    }

    fn check_many(&self, op: &str, n: usize, vs: &[CudaVector], other: &CudaVector) -> Result<()> {
        self.check(op, n, &[other])?;
        vs.iter().try_for_each(|v| self.check(op, n, &[v]))
    }

    /// `x · v` for every `v` in `vs`: per group of [`MULTI`] one launch of per-block partials, then
    /// one launch summing them and one copy to the host.
    pub(super) fn multi_dots(&self, x: &CudaVector, vs: &[CudaVector]) -> Result<Vec<f64>> {
        self.check_many("dots", x.len(), vs, x)?;
        if vs.is_empty() || x.is_empty() {
            return Ok(vec![0.0; vs.len()]);
        }
        let n = x.len() as u64;
        let cfg = self.grid(n);
        let blocks = cfg.grid_dim.0 as usize;
        let need = vs.len() * (blocks + 1);
        let mut guard = self.multi_scratch.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|s| s.len() < need) {
            *guard = Some(self.alloc::<f64>(need)?);
        }
        let Some(scratch) = guard.as_mut() else {
            return Err(Error::invalid("dots: no scratch"));
        };
        let (mut partials, mut out) = scratch.split_at_mut(vs.len() * blocks);
        for (g, group) in vs.chunks(MULTI).enumerate() {
            let list = self.vec_list(group, &[]);
            let k = group.len() as i32;
            let mut part =
                partials.slice_mut(g * MULTI * blocks..(g * MULTI + group.len()) * blocks);
            launch!(self, &self.kernels.dots_partials, cfg; &list, &k, &x.data, &n, &mut part)?;
        }
        let sum = LaunchConfig {
            grid_dim: (vs.len() as u32, 1, 1),
            block_dim: (BLOCK_SIZE, 1, 1),
            shared_mem_bytes: 0,
        };
        let count = blocks as u32;
        let partials = partials.as_view();
        launch!(self, &self.kernels.sum_partials_many, sum; &partials, &count, &mut out)?;
        let mut host = vec![0.0; vs.len()];
        self.stream
            .memcpy_dtoh(&out.slice(..vs.len()), &mut host)
            .map_err(|e| cuda_error(format!("reading {} dot products failed: {e}", vs.len())))?;
        self.synchronize()?;
        Ok(host)
    }

    /// `y += Σ c_i v_i`, one launch per group of [`MULTI`].
    pub(super) fn multi_add(&self, c: &[f64], vs: &[CudaVector], y: &mut CudaVector) -> Result<()> {
        if c.len() != vs.len() {
            return Err(Error::dim("combination coefficients", vs.len(), c.len()));
        }
        self.check_many("add_combination", y.len(), vs, y)?;
        if y.is_empty() {
            return Ok(());
        }
        let n = y.len() as u64;
        for (group, cg) in vs.chunks(MULTI).zip(c.chunks(MULTI)) {
            let list = self.vec_list(group, cg);
            let k = group.len() as i32;
            launch!(self, &self.kernels.add_combination, self.grid(n); &list, &k, &mut y.data, &n)?;
        }
        Ok(())
    }
}
