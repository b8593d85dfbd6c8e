//! The process's own clock, for a report whose phases add up to the wall clock a user measures
//! (`/usr/bin/time`): when the kernel started the process, so the time before a run's first timer
//! (loading the binary, the dynamic linker, argument parsing) becomes the phase `start`; and
//! whether the run is the whole process (the CLI), so its timed teardown may also release what
//! otherwise only the process's exit frees (the CUDA contexts).
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Set by [`mark_supervised`]: a parent process waits for this one (the CLI's supervising parent).
static SUPERVISED: AtomicBool = AtomicBool::new(false);

/// Called by a command whose parent supervises it (`galerkin run` re-executed by itself): its
/// report then records when its timed teardown ended (`timings.ended_at`, seconds on the boot
/// clock, which the parent reads too), so the parent can time the exit that follows — the
/// driver's teardown when the process ends, which no call inside the process can time — and add
/// it as the phase `exit`.
pub fn mark_supervised() {
    SUPERVISED.store(true, Ordering::Relaxed);
}

/// Whether [`mark_supervised`] was called.
pub fn is_supervised() -> bool {
    SUPERVISED.load(Ordering::Relaxed)
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

/// Field 22 of a `/proc/PID/stat` line (start time, clock ticks after boot).
fn start_ticks(stat: &str) -> Option<u64> {
    proc_stat_field(stat, 22)?.parse().ok()
}

/// Field `n` (numbered from 1, as in proc(5); `n >= 3`) of a `/proc/PID/stat` or
/// `/proc/thread-self/stat` line. The command name, field 2, is in parentheses and may itself
/// hold spaces and parentheses, so fields are counted from the last `)`.
pub fn proc_stat_field(stat: &str, n: usize) -> Option<&str> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    // `rest` starts at field 3.
    rest.split_whitespace().nth(n.checked_sub(3)?)
}

/// Hands the memory the C allocator keeps after frees back to the system (glibc's `malloc_trim`
/// walks every arena: the run's threads keep freed chunks in arenas of their own), so the kernel
/// has that much less to unmap when the process exits, after the report's last timer. A command's
/// timed teardown calls it last. Returns whether anything was released (false elsewhere).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_free_memory() -> bool {
    // SAFETY: glibc's malloc_trim takes the allocator's locks itself; no pointer is passed.
    unsafe { libc::malloc_trim(0) != 0 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() -> bool {
    false
}

/// For traces: the process's resident memory (`VmRSS` = `RssAnon` + `RssFile` + `RssShmem`) and
/// its `top` largest resident mappings (`/proc/self/smaps`): what the kernel still has to unmap
/// when the process exits. Empty where the system does not tell.
pub fn memory_summary(top: usize) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mut out: Vec<String> = status
        .lines()
        .filter(|l| ["VmRSS:", "RssAnon:", "RssFile:", "RssShmem:", "VmData:"].iter().any(|k| l.starts_with(k)))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    if top == 0 {
        return out.join(", ");
    }
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut maps = largest_mappings(&smaps);
    maps.truncate(top);
    out.extend(maps.into_iter().map(|(kb, name)| format!("{name} {kb} kB")));
    out.join(", ")
}

/// (resident kB, name) of every mapping of a `/proc/PID/smaps` text, largest first; anonymous
/// mappings are named `[anon]`.
fn largest_mappings(smaps: &str) -> Vec<(u64, String)> {
    let mut maps: Vec<(u64, String)> = Vec::new();
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if first.ends_with(':') {
            if first == "Rss:" {
                if let (Some(last), Some(kb)) = (maps.last_mut(), words.next().and_then(|w| w.parse().ok())) {
                    last.0 = kb;
                }
            }
        } else {
            // A mapping's header: range, permissions, offset, device, inode, then its path.
            let name = words.nth(4).map_or("[anon]".to_string(), str::to_string);
            maps.push((0, name));
        }
    }
    maps.sort_by(|a, b| b.0.cmp(&a.0));
    maps
}

/// With `GALERKIN_TRACE=1`, registers a C exit handler that notes (on the boot clock) when the
/// exit handlers registered after it (the CUDA driver's, loaded later) have run; what follows is
/// the shared libraries' destructors and the kernel's teardown of the process.
pub fn trace_exit_handlers() {
    if !crate::trace::enabled() {
        return;
    }
    extern "C" fn noted() {
        use std::io::Write;
        let at = boot_clock().unwrap_or(0.0);
        let _ = writeln!(std::io::stderr(), "[trace exit] C library exit handlers done (boot clock {at:.4} s)");
    }
    #[cfg(unix)]
    {
        // SAFETY: registers a function that only writes to stderr (never panics: errors ignored).
        let _ = unsafe { libc::atexit(noted) };
    }
}

/// Seconds on the boot-time clock (for traces that another process compares with its own clock:
/// Python's `time.clock_gettime(time.CLOCK_BOOTTIME)`).
pub fn boot_seconds() -> Option<f64> {
    boot_clock()
}

#[cfg(target_os = "linux")]
fn clock_ticks_per_second() -> Option<f64> {
    // SAFETY: sysconf reads a constant of the C library.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then_some(hz as f64)
}

#[cfg(not(target_os = "linux"))]
fn clock_ticks_per_second() -> Option<f64> {
    None
}

/// Seconds since boot on the clock the kernel stamps process starts with (`CLOCK_BOOTTIME`).
#[cfg(target_os = "linux")]
fn boot_clock() -> Option<f64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Elsewhere there is no boot clock to share with another process.
#[cfg(not(target_os = "linux"))]
fn boot_clock() -> Option<f64> {
    None
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

    /// Fields after a command name with spaces and `)` in it: the state (3), the nice value (19,
    /// negative here), the start time (22); none before field 3 or past the end.
    #[test]
    fn stat_fields_count_from_the_last_parenthesis() {
        let line = "77 (my (odd) cmd) 2) R 1 77 77 0 -1 4194560 10 0 0 0 1 2 0 0 20 -5 3 0 123456 999 20 0\n";
        assert_eq!(proc_stat_field(line, 3), Some("R"));
        assert_eq!(proc_stat_field(line, 4), Some("1"));
        assert_eq!(proc_stat_field(line, 19), Some("-5"));
        assert_eq!(proc_stat_field(line, 22), Some("123456"));
        assert_eq!(proc_stat_field(line, 25), Some("0"));
        assert_eq!(proc_stat_field(line, 26), None);
        assert_eq!(proc_stat_field(line, 2), None);
        assert_eq!(proc_stat_field("no parenthesis 1 2 3", 3), None);
    }

    #[test]
    fn mappings_are_sorted_by_resident_size() {
        let smaps = "55d0-55e0 r-xp 00000000 fd:01 42 /usr/bin/galerkin\nSize: 64 kB\nRss: 60 kB\n\
                     7f00-7f80 rw-p 00000000 00:00 0 \nSize: 512 kB\nRss: 500 kB\n\
                     7f90-7fa0 rw-s 00000000 00:05 7 /dev/nvidiactl\nSize: 64 kB\nRss: 4 kB\n";
        assert_eq!(largest_mappings(smaps), vec![(500, "[anon]".to_string()), (60, "/usr/bin/galerkin".to_string()), (4, "/dev/nvidiactl".to_string())]);
        if cfg!(target_os = "linux") {
            assert!(memory_summary(3).contains("VmRSS"), "{}", memory_summary(3));
        }
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
