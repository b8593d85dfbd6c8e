//! Device memory: allocation whose failure says how much was asked and how much is free, and the
//! host<->device copies every other file uses.
use super::context::CudaBackend;
use super::cuda_error;
use crate::{Error, Result};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr};
use std::sync::Arc;

/// Allocates `len` uninitialized elements on `stream`. Out-of-memory errors report the request and
/// the device's free memory (cuMemGetInfo), which is what a user needs to resize a problem.
pub(super) fn alloc_on<T: DeviceRepr>(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    len: usize,
) -> Result<CudaSlice<T>> {
    let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::invalid(format!(
            "device allocation of {len} elements overflows the byte count"
        ))
    })?;
    // SAFETY: the memory is uninitialized; every caller writes it (upload, fill, a kernel) before
    // reading it.
    unsafe { stream.alloc::<T>(len) }.map_err(|e| {
        let free = match ctx.mem_get_info() {
            Ok((free, total)) => format!("{free} bytes free of {total}"),
            Err(q) => format!("free memory unknown ({q})"),
        };
        cuda_error(format!(
            "device allocation of {bytes} bytes failed ({e}); {free}"
        ))
    })
}

impl CudaBackend {
    /// (free, total) device memory in bytes, now (cuMemGetInfo): what a problem's estimate is
    /// checked against before it is uploaded.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(|e| cuda_error(format!("cuMemGetInfo failed: {e}")))
    }

    /// Uninitialized device buffer of `len` elements (see [`alloc_on`]).
    pub(crate) fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        alloc_on(&self.ctx, &self.stream, len)
    }

    /// Sets every element of a device buffer to zero bits (asynchronously, on the stream).
    pub(crate) fn zero_slice<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(&self, dev: &mut CudaSlice<T>) -> Result<()> {
        self.stream
            .memset_zeros(dev)
            .map_err(|e| cuda_error(format!("zeroing {} device bytes failed: {e}", dev.num_bytes())))
    }

    /// Copies a host slice into a new device buffer.
    pub(crate) fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let mut dev = self.alloc::<T>(host.len())?;
        self.copy_into(host, &mut dev)?;
        Ok(dev)
    }

    /// Copies a host slice into an existing device buffer of the same length.
    pub(crate) fn copy_into<T: DeviceRepr>(&self, host: &[T], dev: &mut CudaSlice<T>) -> Result<()> {
        if host.len() != dev.len() {
            return Err(crate::Error::dim("host-to-device copy", dev.len(), host.len()));
        }
        if host.is_empty() {
            return Ok(());
        }
        self.stream
            .memcpy_htod(host, dev)
            .map_err(|e| cuda_error(format!("host-to-device copy of {} bytes failed: {e}", std::mem::size_of_val(host))))
    }

    /// The concatenation of `parts` in a new device buffer, each part copied in place (no host
    /// buffer of the whole).
    pub(crate) fn upload_parts<T: DeviceRepr>(&self, parts: &[&[T]]) -> Result<CudaSlice<T>> {
        let len = parts.iter().map(|p| p.len()).sum();
        let mut dev = self.alloc::<T>(len)?;
        let mut at = 0;
        for p in parts.iter().filter(|p| !p.is_empty()) {
            self.stream.memcpy_htod(*p, &mut dev.slice_mut(at..at + p.len())).map_err(|e| {
                cuda_error(format!("host-to-device copy of {} bytes failed: {e}", std::mem::size_of_val(*p)))
            })?;
            at += p.len();
        }
        Ok(dev)
    }

    /// Copies a whole device buffer to the host, waiting for it (and all earlier work) to finish.
    pub(crate) fn download<T: DeviceRepr + Default + Clone>(
        &self,
        dev: &CudaSlice<T>,
    ) -> Result<Vec<T>> {
        let mut host = vec![T::default(); dev.len()];
        if !host.is_empty() {
            self.stream.memcpy_dtoh(dev, &mut host).map_err(|e| {
                cuda_error(format!(
                    "device-to-host copy of {} bytes failed: {e}",
                    dev.num_bytes()
                ))
            })?;
        }
        self.synchronize()?;
        Ok(host)
    }
}
