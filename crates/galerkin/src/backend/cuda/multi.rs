//! Operations over several vectors in one launch (`vec_dots_partials_*`, `vec_add_combination_*` in
//! `kernels/vector.cu`): GMRES's classical Gram–Schmidt takes every projection of a basis in one
//! reduction with one wait for the host, where modified Gram–Schmidt waits once per basis vector —
//! on a small system that wait, not the arithmetic, is the cost. Up to [`MULTI`] device pointers
//! go into each launch by value. The kernels come in shapes ([`MultiShape`]), which `galerkin bench
//! --gram-schmidt` times one by one: loading one double a step a thread, the dots drew half the copy
//! rate at 10⁷ unknowns; 16-byte pairs draw all of it (BENCHMARKS.md, stop 70).
use super::context::CudaBackend;
use super::cuda_error;
use super::jit::BLOCK_SIZE;
use super::kernels::launch;
use super::vector::CudaVector;
use crate::{Error, Result};
use cudarc::driver::{DevicePtr, DeviceRepr, LaunchConfig};

/// Vectors one launch takes at most (`MULTI_VECS` in `kernels/vector.cu`).
pub const MULTI: usize = 32;

/// A kernel shape of `kernels/vector.cu`: what a thread loads a step — one double (`s1`), or one,
/// two or four 16-byte pairs a grid stride apart (`p1`, `p2`, `p4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MultiKernel {
    S1,
    P1,
    P2,
    P4,
}

impl MultiKernel {
    /// In the order of the kernels' arrays in `Kernels`.
    pub const ALL: [MultiKernel; 4] = [MultiKernel::S1, MultiKernel::P1, MultiKernel::P2, MultiKernel::P4];

    pub fn name(self) -> &'static str {
        ["s1", "p1", "p2", "p4"][self.index()]
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Elements a thread takes a step: the launch has a thread per that many elements.
    fn elements(self) -> u64 {
        [1, 2, 4, 8][self.index()]
    }
}

/// How the many-vector operations run: the kernel shape and the vectors a launch takes (fewer
/// means fewer streams a thread, but `x` or `y` read again per launch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiShape {
    pub kernel: MultiKernel,
    pub group: usize,
}

impl MultiShape {
    /// The shape GMRES uses: one 16-byte pair a step, 32 vectors a launch — on the H100 DG advection's
    /// GMRES(50) solve at 10⁷ unknowns took 17.3 s with it against 22.4 s with `s1` (the shape before;
    /// `p4` 17.5–17.6 s, `p2` 17.7 s) and 1.01 s against 1.20 s at 10⁶ (BENCHMARKS.md, stop 70).
    pub const DEFAULT: MultiShape = MultiShape { kernel: MultiKernel::P1, group: MULTI };

    /// `NAME` or `NAME/GROUP`, e.g. `p2` or `p2/16` (GROUP 1 to [`MULTI`]).
    pub fn parse(s: &str) -> Result<MultiShape> {
        let (name, group) = s.trim().split_once('/').unwrap_or((s.trim(), "32"));
        let kernel = MultiKernel::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| Error::invalid(format!("unknown many-vector shape `{name}` (s1, p1, p2, p4)")))?;
        let group = group
            .parse::<usize>()
            .ok()
            .filter(|g| (1..=MULTI).contains(g))
            .ok_or_else(|| Error::invalid(format!("vectors a launch `{group}` in `{s}`: 1 to {MULTI}")))?;
        Ok(MultiShape { kernel, group })
    }

    pub fn name(self) -> String {
        format!("{}/{}", self.kernel.name(), self.group)
    }

    /// Vectors a launch, checked: a `VecList` holds at most [`MULTI`].
    fn group(self) -> Result<usize> {
        if (1..=MULTI).contains(&self.group) {
            Ok(self.group)
        } else {
            Err(Error::invalid(format!("many-vector shape {}: 1 to {MULTI} vectors a launch", self.name())))
        }
    }
}

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

    /// `x · v` for every `v` in `vs`: per group of `shape.group` vectors one launch of per-block
    /// partials, then one launch summing them and one copy to the host.
    pub fn dots_shaped(&self, x: &CudaVector, vs: &[CudaVector], shape: MultiShape) -> Result<Vec<f64>> {
        self.check_many("dots", x.len(), vs, x)?;
        let per_launch = shape.group()?;
        if vs.is_empty() || x.is_empty() {
            return Ok(vec![0.0; vs.len()]);
        }
        let n = x.len() as u64;
        let cfg = self.grid(n.div_ceil(shape.kernel.elements()));
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
        let kernel = &self.kernels.dots_partials[shape.kernel.index()];
        for (g, group) in vs.chunks(per_launch).enumerate() {
            let list = self.vec_list(group, &[]);
            let k = group.len() as i32;
            let first = g * per_launch;
            let mut part = partials.slice_mut(first * blocks..(first + group.len()) * blocks);
            launch!(self, kernel, cfg; &list, &k, &x.data, &n, &mut part)?;
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

    /// `y += Σ c_i v_i`, one launch per group of `shape.group` vectors.
    pub fn add_combination_shaped(&self, c: &[f64], vs: &[CudaVector], y: &mut CudaVector, shape: MultiShape) -> Result<()> {
        if c.len() != vs.len() {
            return Err(Error::dim("combination coefficients", vs.len(), c.len()));
        }
        self.check_many("add_combination", y.len(), vs, y)?;
        let per_launch = shape.group()?;
        if y.is_empty() {
            return Ok(());
        }
        let n = y.len() as u64;
        let (kernel, cfg) = (&self.kernels.add_combination[shape.kernel.index()], self.grid(n.div_ceil(shape.kernel.elements())));
        for (group, cg) in vs.chunks(per_launch).zip(c.chunks(per_launch)) {
            let list = self.vec_list(group, cg);
            let k = group.len() as i32;
            launch!(self, kernel, cfg; &list, &k, &mut y.data, &n)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_with_and_without_a_group() {
        assert_eq!(MultiShape::parse("p2/16").unwrap(), MultiShape { kernel: MultiKernel::P2, group: 16 });
        assert_eq!(MultiShape::parse(" s1 ").unwrap(), MultiShape { kernel: MultiKernel::S1, group: MULTI });
        for k in MultiKernel::ALL {
            assert_eq!(MultiShape::parse(&format!("{}/7", k.name())).unwrap().kernel, k);
        }
        for bad in ["q1", "p2/0", "p2/33", "p2/x", ""] {
            assert!(MultiShape::parse(bad).is_err(), "`{bad}` parsed");
        }
        assert_eq!(MultiShape::parse("p4/8").unwrap().name(), "p4/8");
    }
}
