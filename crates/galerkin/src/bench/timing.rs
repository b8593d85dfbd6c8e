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

/// Copy bandwidth of this machine's cores (bytes read + written per second, GB/s) for arrays of
/// `bytes` each: the best of 10 serial copies (`memcpy`) and 10 parallel ones (rayon), so that
/// neither thread wake-up on small arrays nor one core's limit on large ones lowers it. The
/// ceiling of a CPU benchmark whose passes stream arrays that large: a pass over arrays that stay
/// in cache is bounded by a copy in cache, not by one through DRAM (measured once on 64 MiB, the
/// CG loop at 10⁶ unknowns ran above it, its 8 MB vectors being in the host's L3).
pub fn host_copy_gbs(bytes: usize) -> f64 {
    use rayon::prelude::*;
    let n = (bytes / 8).max(1 << 12);
    let src = vec![1.5f64; n];
    let mut dst = vec![0.0f64; n];
    let mut best = f64::INFINITY;
    for _ in 0..10 {
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
    }
}
