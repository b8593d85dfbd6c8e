//! The process's own clock, for a report whose phases add up to the wall clock a user measures
//! (`/usr/bin/time`): when the kernel started the process, so the time before a run's first timer
//! (loading the binary, the dynamic linker, argument parsing) becomes the phase `start`; and
//! whether the run is the whole process (the CLI), so its timed teardown may also release what
//! otherwise only the process's exit frees (the CUDA contexts).
use std::sync::OnceLock;
use std::time::Instant;

/// The instant `main` called [`mark_main`] and the process's age then (seconds).
static MAIN: OnceLock<(Instant, f64)> = OnceLock::new();

/// Called by a program whose process runs one problem and exits (`galerkin run`), before the run
/// starts (the process's age is read here, from the kernel's start time). Library callers
/// (tests, other programs) do not call it: their runs are not the process, so their reports have
/// no `start` phase and their teardown leaves the process's CUDA contexts alone.
pub fn mark_main() {
    MAIN.get_or_init(|| (Instant::now(), age().unwrap_or(0.0)));
}

/// Whether [`mark_main`] was called: this process runs one command and exits.
pub fn is_command() -> bool {
    MAIN.get().is_some()
}

/// Seconds from the process's start to `t` for a command (0 without [`mark_main`], or where the
/// system does not tell the start).
pub fn since_start(t: Instant) -> f64 {
    match MAIN.get() {
        Some(&(main, age)) if t >= main => age + (t - main).as_secs_f64(),
        Some(&(main, age)) => (age - (main - t).as_secs_f64()).max(0.0),
        None => 0.0,
    }
}

/// Seconds since the kernel started this process (Linux: `/proc/self/stat`'s start time in clock
/// ticks since boot against the boot-time clock). The start time is truncated to a tick (10 ms),
/// so half a tick is added: the error is then within ±5 ms.
pub fn age() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let ticks = start_ticks(&stat)?;
    let hz = clock_ticks_per_second()?;
    let now = boot_clock()?;
    Some((now - (ticks as f64 + 0.5) / hz).max(0.0))
}

/// Field 22 of a `/proc/PID/stat` line (start time, clock ticks after boot). The command name,
/// field 2, is in parentheses and may itself hold spaces and parentheses: fields are counted
/// from the last `)`.
fn start_ticks(stat: &str) -> Option<u64> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    // `rest` starts at field 3.
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn clock_ticks_per_second() -> Option<f64> {
    extern "C" {
        fn sysconf(name: i32) -> i64;
    }
    const SC_CLK_TCK: i32 = 2;
    // SAFETY: sysconf reads a constant of the C library.
    let hz = unsafe { sysconf(SC_CLK_TCK) };
    (hz > 0).then_some(hz as f64)
}

#[cfg(not(target_os = "linux"))]
fn clock_ticks_per_second() -> Option<f64> {
    None
}

/// Seconds since boot on the clock the kernel stamps process starts with (`CLOCK_BOOTTIME`).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn boot_clock() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_BOOTTIME: i32 = 7;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec of the 64-bit Linux layout.
    let rc = unsafe { clock_gettime(CLOCK_BOOTTIME, &mut ts) };
    (rc == 0).then(|| ts.sec as f64 + ts.nsec as f64 * 1e-9)
}

/// `/proc/uptime` (10 ms resolution) where the clock call is not declared.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn boot_clock() -> Option<f64> {
    std::fs::read_to_string("/proc/uptime").ok()?.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_field_22_even_with_parentheses_in_the_name() {
        let line = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 20 0";
        assert_eq!(start_ticks(line), Some(987654));
        assert_eq!(start_ticks("4242 (x"), None);
    }

    /// The test process started before this test ran and not before boot; its age grows with the
    /// clock. Without `mark_main` a run has no start phase.
    #[test]
    fn age_is_positive_and_grows() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let a = age().expect("the process age on Linux");
        std::thread::sleep(std::time::Duration::from_millis(30));
        let b = age().unwrap();
        assert!(a > 0.0 && a < 3600.0, "age {a}");
        assert!(b - a > 0.02 && b - a < 1.0, "{a} then {b}");
        if !is_command() {
            assert_eq!(since_start(Instant::now()), 0.0);
        }
    }
}
