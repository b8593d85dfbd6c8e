//! Measured ceilings and SpMV throughput: the numbers that say how far a memory-bound kernel is
//! from the hardware (achieved GB/s over the measured copy/triad GB/s), timed with CUDA events
//! after warm-up, median of several runs.
use super::context::CudaBackend;
use super::csr::{DeviceCsr, SpmvPath};
use super::cuda_error;
use super::kernels::launch;
use super::vector::CudaVector;
use crate::backend::Backend;
use crate::linalg::CsrMatrix;
use crate::bench::timing::{guarded_gbs, measure, Clock, Timing};
use crate::{Error, Result};
use cudarc::driver::sys::CUevent_flags;

/// Device memory bandwidth, bytes read plus bytes written per second, in GB/s (1e9 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bandwidth {
    /// Large device-to-device copy (cuMemcpyDtoD).
    pub copy_gbs: f64,
    /// STREAM triad `a = b + s·c` through our own kernel (the same access pattern as axpy).
    pub triad_gbs: f64,
}

/// Timed runs per measurement; the median is reported.
const RUNS: usize = 9;
/// Arrays of this many bytes dwarf the 50 MB L2, so the cache cannot serve repeats.
const ARRAY_BYTES: usize = 512 << 20;

/// A [`Clock`] of two CUDA events on the backend's stream: the time between them is the device's
/// own, whatever the host does meanwhile.
pub struct EventClock<'a> {
    backend: &'a CudaBackend,
    start: cudarc::driver::CudaEvent,
    stop: cudarc::driver::CudaEvent,
}

impl<'a> EventClock<'a> {
    pub fn new(backend: &'a CudaBackend) -> Result<Self> {
        let event = || {
            backend
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| cuda_error(format!("cannot create a timing event: {e}")))
        };
        Ok(EventClock { backend, start: event()?, stop: event()? })
    }
}

fn event_error(e: cudarc::driver::DriverError) -> Error {
    cuda_error(format!("timing event failed: {e}"))
}

impl Clock for EventClock<'_> {
    fn start(&mut self) -> Result<()> {
        self.start.record(&self.backend.stream).map_err(event_error)
    }
    fn stop(&mut self) -> Result<f64> {
        self.stop.record(&self.backend.stream).map_err(event_error)?;
        // elapsed_ms waits for the stop event: the work in between has completed.
        Ok(f64::from(self.start.elapsed_ms(&self.stop).map_err(event_error)?) * 1e-3)
    }
}

/// `reps` runs of `f`, each bracketed by CUDA events, after two untimed warm-up runs (module
/// load, first touch and clock ramp stay out).
pub fn timed(backend: &CudaBackend, reps: usize, f: impl FnMut() -> Result<()>) -> Result<Timing> {
    let mut clock = EventClock::new(backend)?;
    let t = measure(&mut clock, 2, reps, f)?;
    backend.synchronize()?;
    Ok(t)
}

/// Median of [`timed`], in seconds.
pub fn median_seconds(backend: &CudaBackend, reps: usize, f: impl FnMut() -> Result<()>) -> Result<f64> {
    Ok(timed(backend, reps, f)?.median)
}

/// Measures copy and triad bandwidth on arrays of up to 512 MiB each (less if memory is short).
pub fn bandwidth(backend: &CudaBackend) -> Result<Bandwidth> {
    let (free, _) = backend
        .ctx
        .mem_get_info()
        .map_err(|e| cuda_error(format!("cuMemGetInfo failed: {e}")))?;
    let n = ARRAY_BYTES.min(free / 4) / 8;
    if n < 1 << 20 {
        return Err(cuda_error(format!(
            "too little free device memory ({free} bytes) for a bandwidth test"
        )));
    }
    // Non-zero data: zeros can run faster than real data and hide unwritten outputs.
    let filled = |v: f64| -> Result<CudaVector> {
        let mut x = backend.zeros(n)?;
        backend.fill(&mut x, v)?;
        Ok(x)
    };
    let (b, c, mut a) = (filled(1.5)?, filled(-0.25)?, filled(3.0)?);
    let bytes = (n * 8) as f64;
    let copy = median_seconds(backend, RUNS, || backend.copy(&b, &mut a))?;
    let (s, len) = (2.0f64, n as u64);
    let cfg = backend.grid(len.div_ceil(2));
    let triad = median_seconds(
        backend,
        RUNS,
        || launch!(backend, &backend.kernels.triad, cfg; &mut a.data, &b.data, &s, &c.data, &len),
    )?;
    // a = b + 2c = 1.5 − 0.5 everywhere: a wrong triad would make the timing meaningless.
    let check = backend.dot(&a, &a)?;
    if (check - n as f64).abs() > 1e-9 * n as f64 {
        return Err(cuda_error(format!(
            "triad kernel produced wrong values (‖a‖² = {check}, expected {n})"
        )));
    }
    Ok(Bandwidth {
        copy_gbs: 2.0 * bytes / copy * 1e-9,
        triad_gbs: 3.0 * bytes / triad * 1e-9,
    })
}

/// The achievable memory bandwidth in GB/s: the better of copy and triad (see [`bandwidth`]).
pub fn measure_bandwidth(backend: &CudaBackend) -> Result<f64> {
    let bw = bandwidth(backend)?;
    Ok(bw.copy_gbs.max(bw.triad_gbs))
}

/// Bytes one SpMV must move at least: values and column indices, row pointers, x and y once each.
pub fn spmv_bytes(a: &CsrMatrix) -> usize {
    a.nnz() * (8 + 4) + (a.nrows + 1) * 4 + a.ncols * 8 + a.nrows * 8
}

/// SpMV timings of (own kernel, cuSPARSE): `reps` runs each, and their GB/s of [`spmv_bytes`] from
/// the median, checked against `ceiling_gbs` (the copy bandwidth measured in the same run). Use a
/// matrix larger than L2 (≳ 50 MB) or the numbers measure the cache.
pub fn spmv_bench(backend: &CudaBackend, a: &CsrMatrix, reps: usize, ceiling_gbs: f64) -> Result<[(Timing, f64); 2]> {
    let m = DeviceCsr::from_host(backend, a)?;
    // Deterministic non-trivial x (a Weyl sequence in [-1, 1)).
    let x_host: Vec<f64> = (0..a.ncols)
        .map(|i| ((i as f64 * 0.618_033_988_749_895).fract() * 2.0) - 1.0)
        .collect();
    let x = backend.from_host(&x_host)?;
    let mut y = backend.zeros(a.nrows)?;
    let bytes = spmv_bytes(a) as f64;
    let mut run = |path, name| -> Result<(Timing, f64)> {
        let t = timed(backend, reps, || m.spmv_with(backend, path, &x, &mut y))?;
        let gbs = guarded_gbs(name, bytes, &t, ceiling_gbs)?;
        Ok((t, gbs))
    };
    Ok([run(SpmvPath::Own, "SpMV")?, run(SpmvPath::CuSparse, "cuSPARSE SpMV")?])
}
