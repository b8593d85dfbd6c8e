//! A small rayon pool of low-priority threads for output work that runs beside a solve (the VTU's
//! mesh part: encoding, positioned writes, SHA-256).
//!
//! Why not rayon's global pool: a global worker that waits inside a `join` steals other jobs, so a
//! set-up step's short parallel loop could end up waiting for a background SHA-256 of 1.8 GB (the
//! Dirichlet data of the 10^7-unknown run went from 0.07 to 0.56 s that way), and the positioned
//! writes blocked global workers in system calls. A pool of its own keeps the background's jobs
//! out of the run's queues; a lower scheduling priority lets the run's threads take the cores they
//! need first, the background using what is idle (the host waits on the GPU during the solve).
use crate::{Error, Result};

/// Nice value of the background threads (0 is normal, 19 the lowest): they yield to the run's
/// threads when the cores are all busy, without starving when they are not.
pub const BACKGROUND_NICE: i32 = 10;

/// Threads of the background pool for a machine running `threads` rayon workers: a quarter,
/// between 2 and 4 (the SHA-256 is one thread's work; encoding and writing share the rest).
pub fn background_threads(threads: usize) -> usize {
    (threads / 4).clamp(2, 4)
}

/// A pool of `threads` threads named `name-N`, each at [`BACKGROUND_NICE`] where the system allows.
pub fn low_priority_pool(name: &'static str, threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(|_| lower_priority(BACKGROUND_NICE))
        .build()
        .map_err(|e| Error::invalid(format!("cannot start the background output threads: {e}")))
}

/// Lowers the calling thread's scheduling priority to nice `nice` (best effort: a refusal leaves
/// it at the normal priority, which is only slower, never wrong).
#[cfg(target_os = "linux")]
pub fn lower_priority(nice: i32) {
    // SAFETY: a plain system call on integers. On Linux, PRIO_PROCESS with `who = 0` names the
    // calling thread (threads are tasks), not the whole process.
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
}

#[cfg(not(target_os = "linux"))]
pub fn lower_priority(_nice: i32) {}

/// The calling thread's nice value (Linux: field 19 of /proc/thread-self/stat), for tests.
pub fn thread_nice() -> Option<i32> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    crate::process::proc_stat_field(&stat, 19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_threads_run_at_the_background_priority_and_the_caller_does_not() {
        let before = thread_nice();
        let pool = low_priority_pool("bg-test", 2).unwrap();
        let inside: Vec<Option<i32>> = pool.install(|| {
            use rayon::prelude::*;
            (0..8).into_par_iter().map(|_| thread_nice()).collect()
        });
        if let (true, Some(b)) = (cfg!(target_os = "linux"), before) {
            // A process already above BACKGROUND_NICE may stay there (lowering nice needs privilege).
            let ok = |n: &Option<i32>| *n == Some(BACKGROUND_NICE) || (b > BACKGROUND_NICE && *n == Some(b));
            assert!(inside.iter().all(ok), "{inside:?}, want {BACKGROUND_NICE}");
            assert_eq!(thread_nice(), before, "the calling thread's priority changed");
        }
        assert_eq!(pool.current_num_threads(), 2);
    }

    #[test]
    fn a_quarter_of_the_threads_between_two_and_four() {
        assert_eq!(background_threads(1), 2);
        assert_eq!(background_threads(8), 2);
        assert_eq!(background_threads(12), 3);
        assert_eq!(background_threads(16), 4);
        assert_eq!(background_threads(128), 4);
    }
}
