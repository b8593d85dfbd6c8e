//! How every benchmark times and judges itself, in one place:
//! - a [`Clock`] brackets the timed region only, after the work it times has completed (the CPU
//!   clock runs around synchronous work; the GPU clock is a pair of CUDA events on the stream);
//! - [`measure`] runs untimed warm-ups, then `runs` timed repetitions, and keeps every sample:
//!   [`Timing`] reports the median with its spread (min, max, quartiles), never one run;
//! - [`guarded_gbs`] turns bytes moved into GB/s from the median and fails the benchmark, instead
//!   of printing the figure, when it exceeds the copy bandwidth measured in the same run: a figure
//!   above the hardware means the timing is wrong (work skipped, an unsynchronized clock).
//!
//! The CG figures time the resident iteration loop ([`super::cg_loop`]) with the data already on
//! the device, never the difference of two whole solves.
use crate::{Error, Result};
use serde::Serialize;
use std::time::Instant;

/// Brackets one timed region.
pub trait Clock {
    /// Mark the start (the work before it is finished or ordered before the mark).
    fn start(&mut self) -> Result<()>;
    /// Seconds since [`Clock::start`], once the work in between has completed.
    fn stop(&mut self) -> Result<f64>;
}

/// Wall clock for synchronous (CPU) work.
#[derive(Default)]
pub struct HostClock(Option<Instant>);

impl Clock for HostClock {
    fn start(&mut self) -> Result<()> {
        self.0 = Some(Instant::now());
        Ok(())
    }
    fn stop(&mut self) -> Result<f64> {
        let t = self.0.take().ok_or_else(|| Error::invalid("benchmark clock stopped before it was started"))?;
        Ok(t.elapsed().as_secs_f64())
    }
}

/// Repeated measurements of one quantity, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timing {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles.
    pub q1: f64,
    pub q3: f64,
    pub runs: usize,
}

impl Timing {
    /// Statistics of `samples` (seconds); at least one.
    pub fn from_samples(mut samples: Vec<f64>) -> Result<Timing> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return Err(Error::invalid(format!("benchmark samples must be finite, non-negative and at least one: {samples:?}")));
        }
        samples.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let x = p * (samples.len() - 1) as f64;
            let (i, f) = (x.floor() as usize, x.fract());
            samples[i] + f * (samples[(i + 1).min(samples.len() - 1)] - samples[i])
        };
        Ok(Timing { median: q(0.5), min: samples[0], max: samples[samples.len() - 1], q1: q(0.25), q3: q(0.75), runs: samples.len() })
    }

    /// The same timing divided by `k` (seconds per iteration of a `k`-iteration run).
    pub fn per(&self, k: usize) -> Timing {
        let k = k.max(1) as f64;
        Timing { median: self.median / k, min: self.min / k, max: self.max / k, q1: self.q1 / k, q3: self.q3 / k, runs: self.runs }
    }

    /// "1.234e-3 s (1.20e-3–1.31e-3, 5 runs)": median, then min–max.
    pub fn describe(&self) -> String {
        format!("{:.3e} s ({:.2e}–{:.2e}, {} runs)", self.median, self.min, self.max, self.runs)
    }

    /// Spread as (max − min) / median.
    pub fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }
}

/// Run `f` `warmup` times untimed, then `runs` times each bracketed by `clock`.
pub fn measure(clock: &mut dyn Clock, warmup: usize, runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<Timing> {
    if runs == 0 {
        return Err(Error::invalid("benchmark repetitions must be at least 1"));
    }
    for _ in 0..warmup {
        f()?;
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        clock.start()?;
        f()?;
        samples.push(clock.stop()?);
    }
    Timing::from_samples(samples)
}

/// GB/s of `bytes` moved in the median time, or an error when that exceeds `ceiling_gbs`, the copy
/// bandwidth measured in the same run.
pub fn guarded_gbs(what: &str, bytes: f64, t: &Timing, ceiling_gbs: f64) -> Result<f64> {
    let gbs = bytes / t.median / 1e9;
    if !gbs.is_finite() || gbs > ceiling_gbs {
        return Err(Error::invalid(format!(
            "benchmark `{what}`: {bytes:.3e} bytes in {} is {gbs:.0} GB/s, above the copy bandwidth of {ceiling_gbs:.0} GB/s measured in this run; \
             the timing cannot be right (work skipped or an unsynchronized clock), so no figure is reported",
            t.describe()
        )));
    }
    Ok(gbs)
}

/// The ceiling of a CPU loop whose passes touch `working_set` distinct bytes (a level's stored data
/// and its vectors) over vectors of `vector_bytes`: the best of this machine's bandwidths measured
/// on the same footprint ([`ceiling_from`] with [`host_copy_gbs`] and [`host_read_gbs`]). A copy
/// of a fixed 64 MiB is the wrong yardstick on a large last-level cache: a 90 MB level that stays
/// in a 300 MB L3 ran above it (2–16 threads, the H100 host), while the same footprint copied or
/// read from that L3 bounds it honestly; a level larger than the cache is held to DRAM's figure.
pub fn cpu_ceiling_gbs(working_set: usize, vector_bytes: usize) -> f64 {
    ceiling_from(working_set, vector_bytes, host_copy_gbs, host_read_gbs)
}

/// Largest footprint of the ceiling's probes: beyond 512 MiB every last-level cache this runs on is
/// exceeded, so a larger probe measures the same DRAM figure with more memory.
pub const CEILING_PROBE_MAX: usize = 512 << 20;

/// The ceiling rule with its probes passed in (`copy(b)`: GB/s of a copy between two arrays of `b`
/// bytes; `read(b)`: of a read of one array of `b` bytes): the maximum of
/// - a copy whose two arrays together are the working set (`working_set / 2` bytes each),
/// - a read of the whole working set (a loop that mostly reads, as a matrix product, moves more
///   bytes per second than a copy, which also pays the write-allocate of its destination),
/// - a copy of one vector (a loop whose stored data is small runs at its vectors' speed: 10⁵
///   unknowns over 16 cores, where a tiny working set is too short to wake the threads);
///
/// each probe's footprint capped at [`CEILING_PROBE_MAX`].
pub fn ceiling_from(working_set: usize, vector_bytes: usize, copy: impl Fn(usize) -> f64, read: impl Fn(usize) -> f64) -> f64 {
    let ws = working_set.clamp(2, CEILING_PROBE_MAX);
    copy(ws / 2).max(read(ws)).max(copy(vector_bytes.clamp(1, CEILING_PROBE_MAX / 2)))
}

/// Repetitions of a bandwidth probe moving `bytes` per pass: 10, fewer (down to 3) from 100 MB so
/// that the ceiling of a 500 MB level does not take seconds per row.
fn probe_reps(bytes: usize) -> usize {
    (1_000_000_000 / bytes.max(1)).clamp(3, 10)
}

/// Read bandwidth of this machine's cores (GB/s) over an array of `bytes`: the best of 10 serial
/// and 10 parallel sums (the first pass brings an array that fits into the cache).
pub fn host_read_gbs(bytes: usize) -> f64 {
    use rayon::prelude::*;
    // Eight independent sums, so that the adds' latency does not bound one core's read.
    fn sum(c: &[f64]) -> f64 {
        c.chunks_exact(8).fold([0.0f64; 8], |mut a, v| {
            for k in 0..8 {
                a[k] += v[k];
            }
            a
        })
        .iter()
        .sum()
    }
    let n = (bytes / 8).max(1 << 12) / 8 * 8;
    let src: Vec<f64> = (0..n).into_par_iter().map(|i| (i % 7) as f64).collect();
    let mut best = f64::INFINITY;
    for _ in 0..probe_reps(8 * n) {
        let t = Instant::now();
        std::hint::black_box(sum(&src));
        best = best.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(src.par_chunks(1 << 14).map(sum).sum::<f64>());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (8 * n) as f64 / best.max(1e-9) / 1e9
}

/// Copy bandwidth of this machine's cores (bytes read + written per second, GB/s) for arrays of
/// `bytes` each: the best of 10 serial copies (`memcpy`) and 10 parallel ones (rayon), so that
/// neither thread wake-up on small arrays nor one core's limit on large ones lowers it.
pub fn host_copy_gbs(bytes: usize) -> f64 {
    use rayon::prelude::*;
    let n = (bytes / 8).max(1 << 12);
    let src = vec![1.5f64; n];
    let mut dst = vec![0.0f64; n];
    let mut best = f64::INFINITY;
    for _ in 0..probe_reps(16 * n) {
        let t = Instant::now();
        dst.copy_from_slice(&src);
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        dst.par_iter_mut().with_min_len(1 << 14).zip(src.par_iter()).for_each(|(d, s)| *d = *s);
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (16 * n) as f64 / best.max(1e-9) / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_samples() {
        let t = Timing::from_samples(vec![5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((t.median, t.min, t.max, t.q1, t.q3, t.runs), (3.0, 1.0, 5.0, 2.0, 4.0, 5));
        let p = t.per(10);
        assert!((p.median - 0.3).abs() < 1e-15 && (p.max - 0.5).abs() < 1e-15);
        assert!((t.spread() - 4.0 / 3.0).abs() < 1e-15);
        assert!(Timing::from_samples(vec![]).is_err());
        assert!(Timing::from_samples(vec![1.0, f64::NAN]).is_err());
        assert_eq!(Timing::from_samples(vec![2.0, 4.0]).unwrap().median, 3.0);
    }

    #[test]
    fn measure_times_each_run_after_warmup() {
        let mut calls = 0;
        let t = measure(&mut HostClock::default(), 2, 4, || {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_millis(2));
            Ok(())
        })
        .unwrap();
        assert_eq!((calls, t.runs), (6, 4));
        assert!(t.min >= 0.002 && t.median >= t.min && t.max >= t.median);
        assert!(measure(&mut HostClock::default(), 0, 0, || Ok(())).is_err());
    }

    #[test]
    fn figures_above_the_copy_bandwidth_fail() {
        let t = Timing::from_samples(vec![1e-3; 3]).unwrap();
        assert!((guarded_gbs("spmv", 2e9, &t, 2900.0).unwrap() - 2000.0).abs() < 1e-9);
        let e = guarded_gbs("cg", 6e9, &t, 2900.0).unwrap_err().to_string();
        assert!(e.contains("6000 GB/s") && e.contains("2900 GB/s") && e.contains("cg"), "{e}");
        let zero = Timing::from_samples(vec![0.0]).unwrap();
        assert!(guarded_gbs("x", 1.0, &zero, 1e9).is_err(), "an infinite rate is never reported");
        assert!(host_copy_gbs(1 << 20) > 0.1);
        assert!(host_read_gbs(1 << 20) > 0.1);
    }

    /// The rule with recorded probes: each probe runs on the footprint it is meant to (the working
    /// set, not a fixed 64 MiB), the ceiling is the best of them, and a figure above it still fails.
    #[test]
    fn ceiling_probes_the_level_working_set() {
        use std::cell::RefCell;
        let calls = RefCell::new(Vec::new());
        // A model machine: 300 MB cache at 400 GB/s copy / 600 GB/s read, DRAM at 100 / 150 GB/s.
        let fast = |b: usize, cached: f64, dram: f64| if b <= 300_000_000 { cached } else { dram };
        let copy = |b: usize| {
            calls.borrow_mut().push(("copy", b));
            fast(2 * b, 400.0, 100.0)
        };
        let read = |b: usize| {
            calls.borrow_mut().push(("read", b));
            fast(b, 600.0, 150.0)
        };
        // 153 MB (BP3 p = 2 `full` at 2·10⁵ unknowns): probed whole, so it runs from the cache.
        let c = ceiling_from(153_000_000, 1_600_000, copy, read);
        assert_eq!(*calls.borrow(), vec![("copy", 76_500_000), ("read", 153_000_000), ("copy", 1_600_000)]);
        assert_eq!(c, 600.0);
        // Larger than the cache: DRAM's figure (footprints capped at CEILING_PROBE_MAX).
        calls.borrow_mut().clear();
        assert_eq!(ceiling_from(2_000_000_000, 1_600_000, copy, read), 400.0, "the one-vector copy stays in cache");
        assert_eq!(*calls.borrow(), vec![("copy", CEILING_PROBE_MAX / 2), ("read", CEILING_PROBE_MAX), ("copy", 1_600_000)]);
        assert_eq!(ceiling_from(2_000_000_000, 400_000_000, |b| fast(2 * b, 400.0, 100.0), |b| fast(b, 600.0, 150.0)), 150.0);
        // An honest L3-resident row passes, a figure above the measured ceiling still fails.
        let t = Timing::from_samples(vec![1e-3; 3]).unwrap();
        assert!(guarded_gbs("bp3 full", 0.5 * c * 1e6, &t, c).is_ok());
        assert!(guarded_gbs("bp3 full", 1.01 * c * 1e6, &t, c).is_err());
    }
}
