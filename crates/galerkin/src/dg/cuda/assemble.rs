//! GPU assembly: one thread per element computes its block row (volume block by quadrature, the
//! face terms of its two faces, L_n and U_n) and its right-hand side, and writes them entry-major.
//!
//! What crosses to the device, once per problem: the N + 1 vertices (8 B each), the basis table
//! (weights, values and derivatives at the Q Gauss points and at both ends: 8·(Q(2b+1) + 4b) B),
//! and each coefficient as either one number (constant) or its samples at the N·Q quadrature points
//! (a also at the vertices), evaluated on the host because coefficients are host expressions. What
//! comes back: only the solution (8·N·b B). Matrix and right-hand side are born on the device.
use super::{DeviceBlockTridiag, DgKernels};
use crate::backend::cuda::kernels::launch;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::dg::basis::Tabulation;
use crate::dg::problem::{DgProblem, Sampled, Samples};
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, DeviceRepr};

/// The kernel's `DgParams` (same field order and C layout).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DgParams {
    eps: f64,
    sigma: f64,
    sigma_boundary: f64,
    h_rule: i32,
    sigma_times_a: i32,
    left_kind: i32,
    right_kind: i32,
    left_value: f64,
    right_value: f64,
}

// SAFETY: plain #[repr(C)] data of f64 and i32 without padding, matching `struct DgParams` in dg.cu.
unsafe impl DeviceRepr for DgParams {}

struct DeviceSampled {
    values: CudaSlice<f64>,
    stride: u64,
}

impl DeviceSampled {
    fn upload(be: &CudaBackend, s: &Sampled) -> Result<DeviceSampled> {
        Ok(DeviceSampled { values: be.upload(&s.values)?, stride: s.stride as u64 })
    }
}

/// A DG problem's data on the device, ready to assemble (again and again) into device storage.
pub struct DeviceDg {
    n: usize,
    b: usize,
    q: usize,
    nodes: CudaSlice<f64>,
    tab: CudaSlice<f64>,
    a_q: DeviceSampled,
    c_q: DeviceSampled,
    f_q: DeviceSampled,
    a_nodes: DeviceSampled,
    params: DgParams,
    k: DgKernels,
    uploaded: usize,
}

impl DeviceDg {
    pub fn upload(be: &CudaBackend, p: &DgProblem, tab: &Tabulation, s: &Samples) -> Result<DeviceDg> {
        let (sigma, sigma_boundary) = p.penalty.scaled(p.degree);
        let (left_kind, left_value) = p.left.code();
        let (right_kind, right_value) = p.right.code();
        let params = DgParams {
            eps: p.method.epsilon(),
            sigma,
            sigma_boundary,
            h_rule: p.penalty.h as i32,
            sigma_times_a: i32::from(p.penalty.times_coefficient),
            left_kind,
            right_kind,
            left_value,
            right_value,
        };
        let packed = tab.packed();
        let uploaded = 8 * p.mesh.nodes().len() + 8 * packed.len() + [&s.a_q, &s.c_q, &s.f_q, &s.a_nodes].iter().map(|x| x.bytes()).sum::<usize>();
        Ok(DeviceDg {
            n: p.mesh.len(),
            b: p.block(),
            q: tab.npoints(),
            nodes: be.upload(p.mesh.nodes())?,
            tab: be.upload(&packed)?,
            a_q: DeviceSampled::upload(be, &s.a_q)?,
            c_q: DeviceSampled::upload(be, &s.c_q)?,
            f_q: DeviceSampled::upload(be, &s.f_q)?,
            a_nodes: DeviceSampled::upload(be, &s.a_nodes)?,
            params,
            k: DgKernels::get(be, p.block())?,
            uploaded,
        })
    }

    /// Host-to-device bytes of [`DeviceDg::upload`].
    pub fn uploaded_bytes(&self) -> usize {
        self.uploaded
    }

    /// Bytes an assembly must move at least: the vertices and sampled coefficients read, the
    /// matrix and right-hand side written.
    pub fn assembly_bytes(&self) -> usize {
        let samples = [&self.a_q, &self.c_q, &self.f_q, &self.a_nodes].iter().map(|s| 8 * s.values.len()).sum::<usize>();
        8 * (self.n + 1) + samples + 8 * self.n * (3 * self.b * self.b + self.b)
    }

    /// A new matrix and right-hand side.
    pub fn assemble(&self, be: &CudaBackend) -> Result<(DeviceBlockTridiag, CudaVector)> {
        let mut m = DeviceBlockTridiag::alloc(be, self.n, self.b)?;
        let mut rhs = CudaVector { data: be.alloc(self.n * self.b)? };
        self.assemble_into(be, &mut m, &mut rhs)?;
        Ok((m, rhs))
    }

    /// `r = b − A x` with every block recomputed on the fly (nothing stored: the matrix may have
    /// been factored in place); reads the vertices, samples and x, writes r.
    pub fn residual(&self, be: &CudaBackend, x: &CudaVector, r: &mut CudaVector) -> Result<()> {
        be.check("DG matrix-free residual", self.n * self.b, &[x, r])?;
        if !be.owns(&self.nodes) {
            return Err(Error::invalid("DG device data used with a CUDA backend other than the one it was uploaded to"));
        }
        let (n, q) = (self.n as u64, self.q as i32);
        launch!(be, &self.k.residual, be.grid(n);
            &n, &q, &self.nodes, &self.tab,
            &self.a_q.values, &self.a_q.stride, &self.c_q.values, &self.c_q.stride,
            &self.f_q.values, &self.f_q.stride, &self.a_nodes.values, &self.a_nodes.stride,
            &self.params, &x.data, &mut r.data)
    }

    /// Bytes of one matrix-free residual: vertices, samples, x read, r written.
    pub fn residual_bytes(&self) -> usize {
        let samples = [&self.a_q, &self.c_q, &self.f_q, &self.a_nodes].iter().map(|s| 8 * s.values.len()).sum::<usize>();
        8 * (self.n + 1) + samples + 2 * 8 * self.n * self.b
    }

    /// Assembles into existing storage of the right size (nothing allocated: the timed path).
    pub fn assemble_into(&self, be: &CudaBackend, m: &mut DeviceBlockTridiag, rhs: &mut CudaVector) -> Result<()> {
        if m.n != self.n || m.b != self.b {
            return Err(Error::dim("DG device assembly (block rows)", self.n, m.n));
        }
        be.check("DG device assembly right-hand side", self.n * self.b, &[rhs])?;
        m.check_owner(be)?;
        if !be.owns(&self.nodes) {
            return Err(Error::invalid("DG device data used with a CUDA backend other than the one it was uploaded to"));
        }
        let (n, q) = (self.n as u64, self.q as i32);
        launch!(be, &self.k.assemble, be.grid(n);
            &n, &q, &self.nodes, &self.tab,
            &self.a_q.values, &self.a_q.stride, &self.c_q.values, &self.c_q.stride,
            &self.f_q.values, &self.f_q.stride, &self.a_nodes.values, &self.a_nodes.stride,
            &self.params, &mut m.lower, &mut m.diag, &mut m.upper, &mut rhs.data)
    }
}
