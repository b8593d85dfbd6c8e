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

/// Separate bounds of a CPU loop's two kinds of traffic: its stored data (a matrix, quadrature
/// data), streamed from wherever its footprint with the vectors lives (L3 or DRAM), and its vector
/// passes, which run from the cache level their own footprint fits (the cores' L2 on 16 threads at
/// 2·10⁵ unknowns). One bandwidth for both is too low for a loop that moves both: `full` on 16
/// threads moved 99 GB/s against an 82 GB/s probe of its 164 MB working set (op6), its 28 MB of
/// vector passes presumably coming from the 32 MB of aggregate L2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuCeiling {
    /// GB/s of the stored data (probes on the whole working set and on the stored data).
    pub stored_gbs: f64,
    /// GB/s of the vector passes (probes on the vectors' footprint and on one vector).
    pub vector_gbs: f64,
}

impl CpuCeiling {
    /// The fastest rate a loop moving `stored` bytes of stored data and `vectors` bytes of vector
    /// passes can reach: the bytes over the least time, `stored / S + vectors / V` — each part at
    /// its own bound, the parts not overlapping beyond that; a figure above it fails.
    pub fn combined_gbs(&self, stored: f64, vectors: f64) -> f64 {
        let t = stored / self.stored_gbs.max(1e-9) + vectors / self.vector_gbs.max(1e-9);
        if t > 0.0 {
            (stored + vectors) / t
        } else {
            self.stored_gbs.max(self.vector_gbs)
        }
    }
}

/// [`CpuCeiling`] of a loop with `stored` bytes of stored data over `vectors` vectors of
/// `vector_bytes`, measured on this machine ([`ceiling_parts`] with [`host_copy_gbs`] and
/// [`host_read_gbs`]).
pub fn cpu_ceiling(stored: usize, vectors: usize, vector_bytes: usize) -> CpuCeiling {
    ceiling_parts(stored, vectors, vector_bytes, host_copy_gbs, host_read_gbs)
}

/// The split rule with its probes passed in (`copy(b)`, `read(b)` as in [`ceiling_from`]):
/// - stored data: the best of a copy whose two arrays together are the working set (stored data
///   plus vectors), a read of that working set, and a read of the stored data alone;
/// - vectors: the best of a copy whose arrays together are the vectors' footprint, a read of it,
///   and a copy of one vector;
///
/// each footprint capped at [`CEILING_PROBE_MAX`].
pub fn ceiling_parts(stored: usize, vectors: usize, vector_bytes: usize, copy: impl Fn(usize) -> f64, read: impl Fn(usize) -> f64) -> CpuCeiling {
    let cap = |b: usize| b.clamp(2, CEILING_PROBE_MAX);
    let vset = cap(vectors.max(1) * vector_bytes);
    let ws = cap(stored + vset);
    CpuCeiling {
        stored_gbs: copy(ws / 2).max(read(ws)).max(read(cap(stored))),
        vector_gbs: copy(vset / 2).max(read(vset)).max(copy(vector_bytes.clamp(1, CEILING_PROBE_MAX / 2))),
    }
}

/// Repetitions of a bandwidth probe moving `bytes` per pass: 2 GB's worth, from 3 (a 500 MB level's
/// ceiling must not take seconds per row) to 20 (short passes, where one sample is rarely the
/// machine's best).
fn probe_reps(bytes: usize) -> usize {
    (2_000_000_000 / bytes.max(1)).clamp(3, 20)
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

    /// The split rule with recorded probes: the stored data is probed on the working set and on
    /// itself, the vectors on their footprint and one vector; a row whose stored part streams at
    /// the stored bound and whose vector part runs from the cache passes although its total rate
    /// is above the stored bound (BP3 p = 2 `full` on 16 threads), and a figure above the combined
    /// bound still fails.
    #[test]
    fn ceiling_bounds_stored_data_and_vectors_apart() {
        use std::cell::RefCell;
        let calls = RefCell::new(Vec::new());
        // A model machine: L2-sized sets (≤ 32 MB) at 500 GB/s copy / 800 read; the rest at 80 / 85.
        let at = |b: usize, l2: f64, far: f64| if b <= 32_000_000 { l2 } else { far };
        let copy = |b: usize| {
            calls.borrow_mut().push(("copy", b));
            at(2 * b, 500.0, 80.0)
        };
        let read = |b: usize| {
            calls.borrow_mut().push(("read", b));
            at(b, 800.0, 85.0)
        };
        // 153 MB of matrix, 7 vectors of 1.64 MB (11.5 MB), 17 vector passes per iteration.
        let (stored, nv, vb) = (153_000_000usize, 7usize, 1_640_000usize);
        let c = ceiling_parts(stored, nv, vb, copy, read);
        let ws = stored + nv * vb;
        assert_eq!(*calls.borrow(), vec![("copy", ws / 2), ("read", ws), ("read", stored), ("copy", nv * vb / 2), ("read", nv * vb), ("copy", vb)]);
        assert_eq!((c.stored_gbs, c.vector_gbs), (85.0, 800.0));
        let (s, v) = (stored as f64, 17.0 * vb as f64);
        let bound = c.combined_gbs(s, v);
        // Between the stored bound and the vectors'; exactly the bytes over the least time.
        assert!(bound > 85.0 && bound < 800.0);
        assert!((bound - (s + v) / (s / 85.0 + v / 800.0)).abs() < 1e-9 * bound);
        // A `full` row at 93 GB/s (181 MB in 1.95 ms, above the stored bound) passes the split bound...
        let t = Timing::from_samples(vec![1.95e-3; 3]).unwrap();
        assert!((s + v) / 1.95e-3 / 1e9 > 85.0);
        assert!(guarded_gbs("bp3 full", s + v, &t, bound).is_ok());
        // ...while a figure above the combined bound (1 % faster than its least time) still fails,
        // and so does one above the stored bound for a loop of stored data alone.
        let least = (s / 85.0 + v / 800.0) / 1e9;
        let fast = Timing::from_samples(vec![0.99 * least; 3]).unwrap();
        assert!(guarded_gbs("bp3 full", s + v, &fast, bound).is_err());
        let only = Timing::from_samples(vec![0.99 * s / 85.0 / 1e9; 3]).unwrap();
        assert!(guarded_gbs("stored only", s, &only, c.combined_gbs(s, 0.0)).is_err());
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        assert!(near(c.combined_gbs(s, 0.0), 85.0) && near(c.combined_gbs(0.0, v), 800.0) && near(c.combined_gbs(0.0, 0.0), 800.0));
    }
}
