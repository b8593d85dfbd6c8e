//! `galerkin run` under a supervising parent, so that the report's phases add up to the wall clock
//! a user measures around the command, the process's exit included.
//!
//! Why a second process: after the run's last timer the process still has to exit, and on the GPU
//! backend that exit (the kernel tearing down the driver's per-process state when the `/dev/nvidia*`
//! files close) took 0.06–0.09 s with 85 MB resident — outside every phase, and no call inside
//! the process can bring it forward or time it. A parent can: it starts the same executable with
//! the same arguments, waits, and when the child has been reaped it adds to the child's report the
//! phases `supervisor` (its own start until the child's) and `exit` (from the instant the child's
//! timed teardown ended, `timings.ended_at` on the boot clock both processes read, until the
//! reaping), and sets `total` to its own start until now. The child writes its report as an
//! unsupervised run does; the parent only rewrites (atomically) a report that this child wrote,
//! after a successful run, and otherwise just forwards the exit status. `GALERKIN_SUPERVISE=0`
//! runs the problem in the one process, as before.
//!
//! The terminal's Ctrl-C reaches both processes (one process group); the parent ignores SIGINT and
//! SIGTERM while the child runs and passes SIGTERM on to it, so `kill PARENT` stops the run. A child
//! killed by a signal makes the parent end by the same signal (or exit with 128 + its number where
//! that signal would dump core), so shells and scripts see what they saw before; a parent killed
//! outright (SIGKILL) takes the child with it (`PR_SET_PDEATHSIG`).
use serde_json::{Map, Value};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Set (to anything) in the child's environment: this process is the supervised run. Internal.
pub const CHILD_ENV: &str = "GALERKIN_SUPERVISED_CHILD";
/// `GALERKIN_SUPERVISE=0`: no supervising parent (the run is the process, its report as before).
pub const SUPERVISE_ENV: &str = "GALERKIN_SUPERVISE";

/// Whether this process is a supervised child; the marker is removed from the environment so that
/// nothing this process starts inherits it. Call first in `main`, before any thread starts.
pub fn take_child_mark() -> bool {
    let child = std::env::var_os(CHILD_ENV).is_some();
    if child {
        std::env::remove_var(CHILD_ENV);
    }
    child
}

/// Whether `galerkin run` should supervise itself, from [`SUPERVISE_ENV`] (unset or `1`: yes, `0`:
/// no; anything else is an error naming the variable rather than a silent default).
pub fn wanted() -> Result<bool, String> {
    parse_wanted(std::env::var_os(SUPERVISE_ENV).as_deref().map(|v| v.to_string_lossy()).as_deref())
}

fn parse_wanted(value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => Err(format!("{SUPERVISE_ENV} = `{other}`: expected `1` (a supervising parent times the process's exit, the default) or `0` (none)")),
    }
}

/// Runs this command (`galerkin run … --out OUT`) in a child process and waits for it; then adds
/// the `supervisor` and `exit` phases to `OUT/report.json` where the child wrote one. Returns the
/// exit status to end with, or `None` where no child could be started (the caller then runs the
/// problem itself, unsupervised).
#[cfg(target_os = "linux")]
pub fn supervise(out: &Path) -> Option<ExitCode> {
    use std::os::unix::process::CommandExt;
    let clock = galerkin::process::boot_seconds()?;
    let parent_start = clock - galerkin::process::age().unwrap_or(0.0);
    let exe = std::env::current_exe().ok()?;
    let mut args = std::env::args_os();
    let arg0 = args.next()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg0(arg0).args(args).env(CHILD_ENV, "1");
    // A parent that dies without passing a signal on (SIGKILL) takes the run with it: no orphan
    // keeps computing and holding the output directory's lock.
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls (prctl, getppid) are made.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::other("the supervising parent has ended"));
            }
            Ok(())
        });
    }
    let signals = signals::Forwarding::install();
    let spawned = galerkin::process::boot_seconds()?;
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            galerkin::trace::note(&format!("supervise: no child ({e}), running unsupervised"), 0.0);
            return None;
        }
    };
    signals.child_started(child.id());
    galerkin::trace::note(&format!("supervise: child {} started", child.id()), 0.0);
    let status = match child.wait() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: waiting for the run's process {}: {e}", child.id());
            return Some(ExitCode::FAILURE);
        }
    };
    let reaped = galerkin::process::boot_seconds().unwrap_or(spawned);
    signals.child_ended();
    galerkin::trace::note(&format!("supervise: child reaped ({status}, boot clock {reaped:.4} s)"), 0.0);
    if status.success() {
        let times = Around { parent_start, spawned, reaped };
        let t = std::time::Instant::now();
        match add_exit_to_report(out, &times) {
            // The child printed its own process's time; this is the report's (R13).
            Ok(Some(s)) => say!("  time [s]     supervisor {:.3}  exit {:.3}  total {:.3} ({:.3} in no phase; as in report.json)", s.supervisor, s.exit, s.total, s.unaccounted),
            Ok(None) => {}
            Err(e) => eprintln!("warning: the exit could not be added to {}: {e}", out.join("report.json").display()),
        }
        galerkin::trace::note("supervise: report rewritten", t.elapsed().as_secs_f64());
    }
    drop(signals);
    Some(signals::forward(status))
}

/// Elsewhere there is no boot clock to share: the run is not supervised.
#[cfg(not(target_os = "linux"))]
pub fn supervise(_out: &Path) -> Option<ExitCode> {
    None
}

/// What the parent measured around its child, in seconds on the boot clock.
#[derive(Clone, Copy, Debug)]
struct Around {
    /// The parent's start (the kernel's start time, known to ±5 ms, as the child's `start`).
    parent_start: f64,
    /// Just before the child was started: a report that ended earlier is not this child's.
    spawned: f64,
    /// When the child had been reaped.
    reaped: f64,
}

/// Reads `out/report.json` (holding the directory's lock: no other run writes there meanwhile)
/// and rewrites it with the exit where it is this child's report of a timed run; leaves it alone
/// otherwise (none written, another kind of problem's report, an earlier run's).
fn add_exit_to_report(out: &Path, around: &Around) -> galerkin::Result<Option<Supervised>> {
    let path = out.join("report.json");
    if !path.is_file() {
        return Ok(None);
    }
    let _lock = galerkin::io::OutputDir::lock(out)?;
    let text = std::fs::read_to_string(&path).map_err(|e| galerkin::Error::io(&path, e))?;
    let mut report: Value = serde_json::from_str(&text).map_err(|e| galerkin::Error::invalid(format!("{}: {e}", path.display())))?;
    let now = galerkin::process::boot_seconds().unwrap_or(around.reaped);
    let Some(added) = add_exit(&mut report, around, now) else { return Ok(None) };
    galerkin::io::write_json(&path, &report)?;
    Ok(Some(added))
}

/// What the parent added to a report (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Supervised {
    supervisor: f64,
    exit: f64,
    total: f64,
    unaccounted: f64,
}

/// Adds the phases `supervisor` (after `start`) and `exit` (after `teardown`) to a report's
/// `timings`, sets `total` to the parent's start until `now` and `solve_ready` and `unaccounted`
/// to match. Returns what it added, or `None`, changing nothing, where the report has no `timings.ended_at` between
/// `spawned` and `reaped` (not this child's report, or not one of a timed command run) or already
/// has an `exit`.
fn add_exit(report: &mut Value, around: &Around, now: f64) -> Option<Supervised> {
    let tm = report.get_mut("timings").and_then(Value::as_object_mut)?;
    let num = |k: &str| tm.get(k).and_then(Value::as_f64);
    let (Some(ended), Some(total), Some(unaccounted), Some(ready)) = (num("ended_at"), num("total"), num("unaccounted"), num("solve_ready")) else {
        return None;
    };
    if !(ended >= around.spawned && ended <= around.reaped) || tm.get("exit").is_some() {
        return None;
    }
    // The child's `total` runs from its own start, which it knows (as the parent knows its own) by
    // the kernel's start time, to a clock tick (±5 ms). The exact instant of the spawn bounds both:
    // the parent started before it, the child after it; a child's start estimated before the spawn
    // is moved to it, its `start` phase shortened by as much.
    let parent_start = around.parent_start.min(around.spawned);
    let child_start = ended - total;
    let start = num("start").unwrap_or(0.0);
    let early = (around.spawned - child_start).clamp(0.0, start);
    let supervisor = (child_start + early - parent_start).max(0.0);
    let exit = around.reaped - ended;
    let phases = total - unaccounted - early + supervisor + exit;
    let whole = now - parent_start;
    if early > 0.0 {
        tm.insert("start".into(), number(start - early));
    }
    insert_after(tm, "start", "supervisor", supervisor);
    insert_after(tm, "teardown", "exit", exit);
    // An existing key keeps its place (serde_json's `preserve_order`: the report reads as written).
    tm.insert("total".into(), number(whole));
    tm.insert("unaccounted".into(), number(whole - phases));
    tm.insert("solve_ready".into(), number(ready - early + supervisor));
    Some(Supervised { supervisor, exit, total: whole, unaccounted: whole - phases })
}

/// A JSON number (null where not finite, as serde_json writes a non-finite `f64`).
fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Inserts `key: v` right after the key `after` (at the end without it).
fn insert_after(m: &mut Map<String, Value>, after: &str, key: &str, v: f64) {
    let at = m.keys().position(|k| k == after).map_or(m.len(), |i| i + 1);
    m.shift_insert(at, key.to_string(), number(v));
}

#[cfg(target_os = "linux")]
mod signals {
    //! SIGINT and SIGTERM in the parent while its child runs: ignored, SIGTERM passed on.
    use std::process::{ExitCode, ExitStatus};
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

    /// The running child's process id (0: none yet or no more), for the handler.
    static CHILD: AtomicI32 = AtomicI32::new(0);
    /// A SIGTERM that came before the child had started: sent to it as soon as it has.
    static TERM_PENDING: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(sig: libc::c_int) {
        if sig != libc::SIGTERM {
            return;
        }
        let pid = CHILD.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill and errno are async-signal-safe; errno is restored for the code the
            // signal interrupted.
            unsafe {
                let errno = *libc::__errno_location();
                libc::kill(pid, libc::SIGTERM);
                *libc::__errno_location() = errno;
            }
        } else {
            TERM_PENDING.store(true, Ordering::SeqCst);
        }
    }

    /// The handlers installed for the child's lifetime; dropping it restores the previous ones.
    pub struct Forwarding {
        saved: Vec<(libc::c_int, libc::sigaction)>,
    }

    impl Forwarding {
        /// Handles SIGINT (nothing: the terminal sends it to the child too) and SIGTERM (passed
        /// on). A signal this process was started with ignored stays ignored, and so does it in
        /// the child (an ignored disposition survives exec; a handler does not).
        pub fn install() -> Forwarding {
            let mut saved = Vec::new();
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: sigaction with valid pointers to zero-initialised (valid) structs; the
                // handler only touches atomics and async-signal-safe calls.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 || old.sa_sigaction == libc::SIG_IGN {
                        continue;
                    }
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                    new.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut new.sa_mask);
                    if libc::sigaction(sig, &new, std::ptr::null_mut()) == 0 {
                        saved.push((sig, old));
                    }
                }
            }
            Forwarding { saved }
        }

        /// The child is running: a SIGTERM from now on goes to it, one that came before goes now.
        pub fn child_started(&self, pid: u32) {
            CHILD.store(pid as i32, Ordering::SeqCst);
            if TERM_PENDING.swap(false, Ordering::SeqCst) {
                // SAFETY: a signal to the child this process started and has not yet reaped.
                unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            }
        }

        /// The child was reaped: its process id may be reused, so no more signals to it.
        pub fn child_ended(&self) {
            CHILD.store(0, Ordering::SeqCst);
        }
    }

    impl Drop for Forwarding {
        fn drop(&mut self) {
            for (sig, old) in &self.saved {
                // SAFETY: restores a disposition read by sigaction itself.
                unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
            }
        }
    }

    /// Signals that end a process without a core dump: the parent ends by the same one.
    const RERAISE: [libc::c_int; 8] =
        [libc::SIGHUP, libc::SIGINT, libc::SIGKILL, libc::SIGPIPE, libc::SIGALRM, libc::SIGTERM, libc::SIGUSR1, libc::SIGUSR2];

    /// The child's exit status as this process's: its code, or death by its signal.
    pub fn forward(status: ExitStatus) -> ExitCode {
        use std::os::unix::process::ExitStatusExt;
        if let Some(code) = status.code() {
            return ExitCode::from(code as u8);
        }
        let Some(sig) = status.signal() else { return ExitCode::FAILURE };
        if RERAISE.contains(&sig) {
            // SAFETY: the default disposition, the signal unblocked, then raised: the process
            // ends here as the child did.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(sig);
            }
        }
        ExitCode::from((128 + sig).clamp(0, 255) as u8)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value as Json;
    use super::*;

    /// A report as the child writes it (keys in the struct's order, not sorted).
    const REPORT: &str = r#"{
  "title": "Poisson",
  "backend": "cpu",
  "solver": {
    "method": "cg",
    "iterations": 502,
    "residual_history": [
      1.0,
      2.5e-9
    ]
  },
  "timings": {
    "start": 0.004,
    "setup": 0.25,
    "mesh": 0.5,
    "teardown": 0.25,
    "total": 1.004,
    "unaccounted": -0.0,
    "solve_ready": 0.754,
    "ended_at": 1000.5
  },
  "outputs": []
}"#;

    fn report() -> Json {
        serde_json::from_str(REPORT).unwrap()
    }

    fn f(r: &Json, k: &str) -> f64 {
        r["timings"].get(k).and_then(Json::as_f64).unwrap_or_else(|| panic!("timings.{k}"))
    }

    /// Reading and writing back changes nothing, key order and number spelling included.
    #[test]
    fn a_report_round_trips_byte_for_byte() {
        assert_eq!(serde_json::to_string_pretty(&report()).unwrap(), REPORT);
    }

    /// The child started 1.004 s before its teardown ended at 1000.5 (at 999.496), the parent at
    /// 999.490; it was reaped at 1000.58 and the report is rewritten at 1000.581.
    #[test]
    fn the_exit_and_the_supervisor_are_added_and_the_total_is_the_parents() {
        let mut r = report();
        let around = Around { parent_start: 999.490, spawned: 999.495, reaped: 1000.58 };
        let added = add_exit(&mut r, &around, 1000.581).unwrap();
        assert_eq!(added.total, f(&r, "total"));
        assert_eq!((added.exit, added.unaccounted), (f(&r, "exit"), f(&r, "unaccounted")));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(f(&r, "supervisor"), 0.006), "{}", f(&r, "supervisor"));
        assert!(close(f(&r, "exit"), 0.08), "{}", f(&r, "exit"));
        assert!(close(f(&r, "total"), 1.091));
        assert!(close(f(&r, "solve_ready"), 0.760));
        let phases: f64 = ["start", "supervisor", "setup", "mesh", "teardown", "exit"].iter().map(|k| f(&r, k)).sum();
        // What is left is the parent's reading of the report (1 ms).
        assert!(close(f(&r, "unaccounted"), f(&r, "total") - phases) && close(f(&r, "unaccounted"), 0.001), "{}", f(&r, "unaccounted"));
        // The phases sit where they happen; the rest of the report is as written.
        let text = serde_json::to_string_pretty(&r).unwrap();
        let at = |s: &str| text.find(&format!("\"{s}\"")).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(at("start") < at("supervisor") && at("supervisor") < at("setup"), "{text}");
        assert!(at("teardown") < at("exit") && at("exit") < at("total"), "{text}");
        assert!(at("title") < at("backend") && at("backend") < at("solver") && at("timings") < at("outputs"), "{text}");
        assert!(text.contains("\"iterations\": 502") && text.contains("\"ended_at\": 1000.5"), "{text}");
        // Once only.
        assert!(add_exit(&mut r, &around, 1000.6).is_none());
    }

    /// The child's start estimated (to a clock tick) 3 ms before the spawn: moved to the spawn,
    /// its `start` shortened; the phases still add up to the parent's total.
    #[test]
    fn a_child_start_estimated_before_the_spawn_is_moved_to_it() {
        let mut r = report();
        // The child's start by its estimate: 1000.5 - 1.004 = 999.496; the spawn at 999.499.
        let around = Around { parent_start: 999.497, spawned: 999.499, reaped: 1000.56 };
        assert!(add_exit(&mut r, &around, 1000.56).is_some());
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(f(&r, "start"), 0.001), "{}", f(&r, "start"));
        assert!(close(f(&r, "supervisor"), 0.002), "{}", f(&r, "supervisor"));
        assert!(close(f(&r, "total"), 1.063));
        assert!(close(f(&r, "solve_ready"), 0.754 - 0.003 + 0.002));
        let phases: f64 = ["start", "supervisor", "setup", "mesh", "teardown", "exit"].iter().map(|k| f(&r, k)).sum();
        assert!(close(f(&r, "total"), phases) && close(f(&r, "unaccounted"), 0.0), "{}", f(&r, "unaccounted"));
    }

    /// A report that is not this child's, or has no end instant, stays as it is.
    #[test]
    fn other_reports_are_left_alone() {
        let earlier = Around { parent_start: 1000.6, spawned: 1000.61, reaped: 1002.0 };
        let mut r = report();
        assert!(add_exit(&mut r, &earlier, 1002.0).is_none());
        assert_eq!(r, report());
        let mut other: Json = serde_json::from_str(&REPORT.replace(",\n    \"ended_at\": 1000.5", "")).unwrap();
        let copy = other.clone();
        assert!(add_exit(&mut other, &Around { parent_start: 999.0, spawned: 999.0, reaped: 1001.0 }, 1001.0).is_none());
        assert_eq!(other, copy);
        let mut no_timings: Json = serde_json::from_str(r#"{"title": "heat"}"#).unwrap();
        assert!(add_exit(&mut no_timings, &Around { parent_start: 0.0, spawned: 0.0, reaped: 1e9 }, 1e9).is_none());
    }

    #[test]
    fn the_switch_is_zero_or_one() {
        assert_eq!(parse_wanted(None), Ok(true));
        assert_eq!(parse_wanted(Some("1")), Ok(true));
        assert_eq!(parse_wanted(Some("0")), Ok(false));
        let e = parse_wanted(Some("no")).unwrap_err();
        assert!(e.contains(SUPERVISE_ENV) && e.contains("`no`"), "{e}");
    }
}
