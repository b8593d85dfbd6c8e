//! The block-tridiagonal matrix in device memory, entry-major: entry (r, c) of block row i at
//! `[(r·b + c)·n + i]`, so a warp's threads (consecutive rows) read consecutive addresses.
use super::DgKernels;
use crate::backend::cuda::kernels::launch;
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::LinearOperator;
use crate::dg::block_tridiag::BlockTridiag;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;

pub struct DeviceBlockTridiag {
    pub n: usize,
    pub b: usize,
    pub(crate) lower: CudaSlice<f64>,
    pub(crate) diag: CudaSlice<f64>,
    pub(crate) upper: CudaSlice<f64>,
    pub(crate) k: DgKernels,
}

/// Host AoS (block after block, row-major) ↔ device entry-major.
fn to_entry_major(a: &[f64], n: usize, bb: usize) -> Vec<f64> {
    let mut out = vec![0.0; a.len()];
    for i in 0..n {
        for e in 0..bb {
            out[e * n + i] = a[i * bb + e];
        }
    }
    out
}

fn to_block_major(a: &[f64], n: usize, bb: usize) -> Vec<f64> {
    let mut out = vec![0.0; a.len()];
    for i in 0..n {
        for e in 0..bb {
            out[i * bb + e] = a[e * n + i];
        }
    }
    out
}

impl DeviceBlockTridiag {
    /// Uninitialized storage for `n` block rows of `b × b` (assembly writes every entry).
    pub fn alloc(be: &CudaBackend, n: usize, b: usize) -> Result<DeviceBlockTridiag> {
        let len = n.checked_mul(b * b).ok_or_else(|| Error::invalid(format!("{n} blocks of {b}×{b} overflow")))?;
        let k = DgKernels::get(be, b)?;
        Ok(DeviceBlockTridiag { n, b, lower: be.alloc(len)?, diag: be.alloc(len)?, upper: be.alloc(len)?, k })
    }

    pub fn from_host(be: &CudaBackend, m: &BlockTridiag) -> Result<DeviceBlockTridiag> {
        let bb = m.b * m.b;
        Ok(DeviceBlockTridiag {
            n: m.n,
            b: m.b,
            lower: be.upload(&to_entry_major(&m.lower, m.n, bb))?,
            diag: be.upload(&to_entry_major(&m.diag, m.n, bb))?,
            upper: be.upload(&to_entry_major(&m.upper, m.n, bb))?,
            k: DgKernels::get(be, m.b)?,
        })
    }

    pub fn to_host(&self, be: &CudaBackend) -> Result<BlockTridiag> {
        let bb = self.b * self.b;
        Ok(BlockTridiag {
            n: self.n,
            b: self.b,
            lower: to_block_major(&be.download(&self.lower)?, self.n, bb),
            diag: to_block_major(&be.download(&self.diag)?, self.n, bb),
            upper: to_block_major(&be.download(&self.upper)?, self.n, bb),
        })
    }

    /// A copy on the device (device-to-device, no host round trip).
    pub fn try_clone(&self, be: &CudaBackend) -> Result<DeviceBlockTridiag> {
        self.check_owner(be)?;
        let copy = |src: &CudaSlice<f64>| -> Result<CudaSlice<f64>> {
            let mut dst = be.alloc::<f64>(src.len())?;
            be.stream
                .memcpy_dtod(src, &mut dst)
                .map_err(|e| Error::Backend { backend: "cuda".into(), message: format!("copying a DG matrix on the device failed: {e}") })?;
            Ok(dst)
        };
        Ok(DeviceBlockTridiag { n: self.n, b: self.b, lower: copy(&self.lower)?, diag: copy(&self.diag)?, upper: copy(&self.upper)?, k: self.k.clone() })
    }

    /// Scalar unknowns N·b.
    pub fn size(&self) -> usize {
        self.n * self.b
    }

    /// Bytes of the three block arrays.
    pub fn bytes(&self) -> usize {
        3 * 8 * self.n * self.b * self.b
    }

    pub(crate) fn check_owner(&self, be: &CudaBackend) -> Result<()> {
        if be.owns(&self.diag) {
            Ok(())
        } else {
            Err(Error::invalid("a DG device matrix was used with a CUDA backend other than the one that made it"))
        }
    }
}

impl LinearOperator<CudaBackend> for DeviceBlockTridiag {
    fn nrows(&self) -> usize {
        self.size()
    }
    fn ncols(&self) -> usize {
        self.size()
    }
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("DG block-tridiagonal apply", self.size(), &[x, y])?;
        self.check_owner(be)?;
        if self.n == 0 {
            return Ok(());
        }
        let n = self.n as u64;
        launch!(be, &self.k.apply, be.grid(n); &n, &self.lower, &self.diag, &self.upper, &x.data, &mut y.data)
    }
}

/// Element block Jacobi on the GPU: the diagonal blocks inverted on the device (pivoting, a
/// singular block is an error naming its element), applied as one block product per element.
pub struct DeviceBlockJacobi {
    n: usize,
    inverses: CudaSlice<f64>,
    k: DgKernels,
}

impl DeviceBlockJacobi {
    pub fn new(be: &CudaBackend, m: &DeviceBlockTridiag) -> Result<DeviceBlockJacobi> {
        m.check_owner(be)?;
        let mut inverses = be.alloc::<f64>(m.diag.len())?;
        be.stream
            .memcpy_dtod(&m.diag, &mut inverses)
            .map_err(|e| Error::Backend { backend: "cuda".into(), message: format!("copying DG diagonal blocks failed: {e}") })?;
        let mut fail = be.upload(&[u64::MAX])?;
        let n = m.n as u64;
        if n > 0 {
            // L and U are not touched (offdiag = 0); the inverses' buffer stands in for both.
            let (zero, one, off, level) = (0u64, 1u64, 0i32, 0u32);
            let dummy = be.alloc::<f64>(1)?;
            launch!(be, &m.k.invert, be.grid(n); &n, &zero, &one, &n, &off, &dummy, &mut inverses, &dummy, &level, &mut fail,
                &dummy, &zero, &dummy, &zero, &zero)?;
        }
        let flag = be.download(&fail)?[0];
        if flag != u64::MAX {
            return Err(Error::Factorization(format!(
                "block Jacobi: the diagonal block of element {} is singular",
                flag & ((1 << 48) - 1)
            )));
        }
        Ok(DeviceBlockJacobi { n: m.size(), inverses, k: m.k.clone() })
    }
}

impl LinearOperator<CudaBackend> for DeviceBlockJacobi {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        be.check("DG block Jacobi apply", self.n, &[x, y])?;
        let rows = (self.n / self.k.b) as u64;
        if rows == 0 {
            return Ok(());
        }
        let (cols, one) = (self.n as u64, 1u64);
        launch!(be, &self.k.block_diag, be.grid(rows); &rows, &self.inverses, &x.data, &cols, &mut y.data, &cols, &one)
    }
}
