//! Compressible device memory (the driver's virtual memory API with generic compression, Ampere and
//! later): the L2 compresses a buffer's lines on their way to DRAM, so zeroing one and reading back
//! its zeros move a fraction of their bytes. An atomic scatter zeroes its matrix values before every
//! assembly and then adds into the zeros: with the hyperelastic Jacobian's values here (thirty-fifth
//! pass, H100) the zeroing takes 0.163 instead of 0.207 ms and the kernel reads 0.31 instead of
//! 0.80 GB from DRAM — the P2 assembly at 4 points 8–9 % faster; the product reads the values as fast
//! as before.
use super::context::CudaBackend;
use super::cuda_error;
use crate::Result;
use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, DeviceRepr};

/// A device buffer in compressible memory. It holds either its own memory as a [`CudaSlice`] (the
/// view) or, once [`CompressibleBuffer::install`]ed into a matrix, the ordinary one-element slice it
/// took in exchange; on drop it unmaps its memory only when it holds the view again (the view is
/// leaked first: cudarc's own free is the wrong call for this memory) and otherwise leaves it mapped.
pub struct CompressibleBuffer<T> {
    held: Option<CudaSlice<T>>,
    ptr: sys::CUdeviceptr,
    size: usize,
    handle: sys::CUmemGenericAllocationHandle,
}

fn check(what: &str, r: sys::CUresult) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(cuda_error(format!("{what} failed: {r:?}")))
    }
}

impl CudaBackend {
    /// `len` elements in compressible memory, or `None` where the device has no generic compression
    /// or the driver handed back an uncompressed allocation (the caller keeps ordinary memory).
    /// Uninitialized, like [`CudaBackend::alloc`].
    pub fn alloc_compressible<T: DeviceRepr>(&self, len: usize) -> Result<Option<CompressibleBuffer<T>>> {
        use sys::CUdevice_attribute as A;
        let attr = |a| self.ctx.attribute(a).map_err(|e| cuda_error(format!("device attribute {a:?}: {e}")));
        if attr(A::CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED)? == 0 || attr(A::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)? == 0 {
            return Ok(None);
        }
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| cuda_error(format!("compressible allocation of {len} elements overflows")))?;
        self.ctx.bind_to_thread().map_err(|e| cuda_error(format!("binding the context: {e}")))?;
        // SAFETY: plain C structs of the driver API, all-zero is their documented "unset" state.
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = self.ctx.ordinal() as i32;
        prop.allocFlags.compressionType = sys::CUmemAllocationCompType::CU_MEM_ALLOCATION_COMP_GENERIC as u8;
        let mut gran = 0usize;
        // SAFETY: `prop` and `gran` outlive the calls; each result is checked.
        unsafe {
            check("cuMemGetAllocationGranularity", sys::cuMemGetAllocationGranularity(&mut gran, &prop, sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))?;
        }
        let size = bytes.max(1).div_ceil(gran.max(1)) * gran.max(1);
        let mut handle: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: as above; a failed creation leaves nothing to release.
        unsafe { check(&format!("cuMemCreate of {size} compressible bytes"), sys::cuMemCreate(&mut handle, size, &prop, 0))? };
        let mut got: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        // SAFETY: `handle` is the live allocation created above.
        let asked = unsafe { check("cuMemGetAllocationPropertiesFromHandle", sys::cuMemGetAllocationPropertiesFromHandle(&mut got, handle)) };
        if asked.is_err() || got.allocFlags.compressionType != sys::CUmemAllocationCompType::CU_MEM_ALLOCATION_COMP_GENERIC as u8 {
            // SAFETY: nothing is mapped yet.
            unsafe { sys::cuMemRelease(handle) };
            asked?;
            return Ok(None);
        }
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: the reservation, mapping and access cover exactly `size` bytes of `handle`; on a
        // failure the steps done are undone in reverse order.
        unsafe {
            if let Err(e) = check("cuMemAddressReserve", sys::cuMemAddressReserve(&mut ptr, size, 0, 0, 0)) {
                sys::cuMemRelease(handle);
                return Err(e);
            }
            if let Err(e) = check("cuMemMap", sys::cuMemMap(ptr, size, 0, handle, 0)) {
                sys::cuMemAddressFree(ptr, size);
                sys::cuMemRelease(handle);
                return Err(e);
            }
            let desc = sys::CUmemAccessDesc { location: prop.location, flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
            if let Err(e) = check("cuMemSetAccess", sys::cuMemSetAccess(ptr, size, &desc, 1)) {
                sys::cuMemUnmap(ptr, size);
                sys::cuMemAddressFree(ptr, size);
                sys::cuMemRelease(handle);
                return Err(e);
            }
        }
        // SAFETY: `ptr` maps ≥ len · size_of::<T>() bytes; the view is leaked before the unmap.
        let slice = unsafe { self.stream.upgrade_device_ptr::<T>(ptr, len) };
        Ok(Some(CompressibleBuffer { held: Some(slice), ptr, size, handle }))
    }
}

impl<T> CompressibleBuffer<T> {
    /// Whether `s` is this buffer's own memory.
    fn is_view(&self, s: &CudaSlice<T>) -> bool {
        use cudarc::driver::DevicePtr;
        let (p, _sync) = s.device_ptr(s.stream());
        p == self.ptr
    }

    /// Puts the view into `slot` and keeps `slot`'s slice (the caller's placeholder) instead.
    pub(crate) fn install(&mut self, slot: &mut CudaSlice<T>) {
        if let Some(h) = self.held.as_mut() {
            std::mem::swap(h, slot);
        }
    }

    /// [`Self::install`] undone: `slot` gets its placeholder back and the buffer its view.
    pub(crate) fn uninstall(&mut self, slot: &mut CudaSlice<T>) {
        if self.held.as_ref().is_some_and(|h| !self.is_view(h)) && self.is_view(slot) {
            if let Some(h) = self.held.as_mut() {
                std::mem::swap(h, slot);
            }
        }
    }
}

impl<T> Drop for CompressibleBuffer<T> {
    fn drop(&mut self) {
        let Some(h) = self.held.take() else { return };
        if !self.is_view(&h) {
            // (still installed somewhere: leave the memory mapped rather than pull it from under a user)
            return;
        }
        let _ = h.stream().synchronize();
        let _ = h.leak();
        // SAFETY: the mapping and handle created in `alloc_compressible`; the view, the one slice
        // on them, was just leaked.
        unsafe {
            sys::cuMemUnmap(self.ptr, self.size);
            sys::cuMemAddressFree(self.ptr, self.size);
            sys::cuMemRelease(self.handle);
        }
    }
}
