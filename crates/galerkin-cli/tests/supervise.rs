//! `galerkin run` under its supervising parent (`src/supervise.rs`): the report gains the phases
//! `supervisor` and `exit` and otherwise says what an unsupervised run's says (`GALERKIN_SUPERVISE=0`
//! gives exactly today's keys); errors, exit codes and printing are the same either way; SIGTERM to
//! the parent stops the run, SIGINT to the parent alone does not.
#![cfg(target_os = "linux")]
mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::repo;

/// The Poisson example at `n` cells per side and `degree`, on the CPU backend.
fn problem(n: usize, degree: usize) -> String {
    let text = std::fs::read_to_string(repo().join("examples/poisson-3d.toml")).unwrap();
    let text = text.replace("n = [12, 12, 12]", &format!("n = [{n}, {n}, {n}]")).replace("degree = 2", &format!("degree = {degree}"));
    assert!(text.contains(&format!("n = [{n}, {n}, {n}]")), "the example changed: update this test");
    text
}

/// `galerkin run TOML --backend cpu --quiet --out OUT` with `GALERKIN_SUPERVISE` set to `supervise`
/// (unset where `None`).
fn run(toml: &Path, out: &Path, supervise: Option<&str>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_galerkin"));
    c.args(["run", toml.to_str().unwrap(), "--backend", "cpu", "--quiet", "--out", out.to_str().unwrap()]);
    c.env_remove("GALERKIN_SUPERVISE").env_remove("GALERKIN_SUPERVISED_CHILD");
    if let Some(v) = supervise {
        c.env("GALERKIN_SUPERVISE", v);
    }
    c
}

fn report(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// The printed summary without the lines that hold times and memory peaks, the output directory
/// `out` written as `OUT`.
fn steady_lines(o: &Output, out: &Path) -> Vec<String> {
    let text = String::from_utf8_lossy(&o.stdout).replace(out.to_str().unwrap(), "OUT");
    // The last bits of a parallel CPU solve vary between runs, and with them the files' SHA-256.
    let unhashed = |l: &str| l.split(", sha256").next().unwrap_or(l).to_string();
    text.lines().filter(|l| !l.contains("time [s]") && !l.contains("memory")).map(unhashed).collect()
}

/// The report's output files as (file name, bytes).
fn files(r: &serde_json::Value) -> Vec<(String, u64)> {
    let name = |o: &serde_json::Value| Path::new(o["path"].as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned();
    r["outputs"].as_array().unwrap().iter().map(|o| (name(o), o["bytes"].as_u64().unwrap())).collect()
}

#[test]
fn the_supervised_report_adds_the_exit_and_the_unsupervised_one_is_todays() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("p.toml");
    std::fs::write(&toml, problem(12, 1)).unwrap();
    let (sup, alone) = (dir.path().join("sup"), dir.path().join("alone"));
    let t = Instant::now();
    let a = run(&toml, &sup, None).output().unwrap();
    let wall = t.elapsed().as_secs_f64();
    let b = run(&toml, &alone, Some("0")).output().unwrap();
    assert!(a.status.success() && b.status.success(), "{}\n{}", String::from_utf8_lossy(&a.stderr), String::from_utf8_lossy(&b.stderr));
    // Same printing (quiet: no progress, the same lines), nothing more on stderr.
    assert_eq!(steady_lines(&a, &sup), steady_lines(&b, &alone));
    assert_eq!(a.stderr, b.stderr);
    let (ra, rb) = (report(&sup), report(&alone));
    let (ta, tb) = (ra["timings"].as_object().unwrap(), rb["timings"].as_object().unwrap());
    let s = |k: &str| ta[k].as_f64().unwrap_or_else(|| panic!("timings.{k}: {ta:?}"));
    // The exit: from the child's teardown end to its reaping — its report's write, the printing,
    // the process's end; more than nothing, far less than the run.
    assert!(s("exit") > 0.0 && s("exit") < 0.5 * s("total"), "exit {}", s("exit"));
    assert!(s("supervisor") >= 0.0 && s("supervisor") < 0.5, "supervisor {}", s("supervisor"));
    let phases: f64 = ta.iter().filter(|(k, _)| !["total", "unaccounted", "solve_ready", "ended_at"].contains(&k.as_str())).filter_map(|(_, v)| v.as_f64()).sum();
    assert!((s("total") - phases - s("unaccounted")).abs() < 1e-9, "{ta:?}");
    // Left over: the parent's reading of the report (and the clamp of a clock tick, see `add_exit`).
    assert!(s("unaccounted").abs() < 0.006, "{ta:?}");
    // The parent's total is its whole life (known to a clock tick of its start).
    assert!(s("total") <= wall + 0.011, "total {} > wall {wall}", s("total"));
    assert!(s("solve_ready") > s("supervisor") + s("start") + s("setup"), "{ta:?}");
    // The printed total is the report's (the child prints its own process's time as `process`).
    let printed = String::from_utf8_lossy(&a.stdout);
    let totals: Vec<&str> = printed.lines().filter_map(|l| l.split("  total ").nth(1)).collect();
    assert_eq!(totals.len(), 1, "{printed}");
    assert!(totals[0].starts_with(&format!("{:.3} (", s("total"))) && totals[0].contains("report.json"), "{printed}");
    let child_line = printed.lines().find(|l| l.contains("teardown")).unwrap_or_else(|| panic!("{printed}"));
    assert!(child_line.contains("  process "), "{child_line}");
    // Unsupervised: today's keys, none of the supervisor's.
    let mut keys: Vec<&String> = ta.keys().filter(|k| !["supervisor", "exit", "ended_at"].contains(&k.as_str())).collect();
    let mut today: Vec<&String> = tb.keys().collect();
    keys.sort();
    today.sort();
    assert_eq!(keys, today);
    let top = |r: &serde_json::Value| r.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(top(&ra), top(&rb));
    // The same solve.
    assert_eq!(ra["solver"]["iterations"], rb["solver"]["iterations"]);
    for k in ["l2", "h1_semi", "relative_l2"] {
        let (x, y) = (ra["errors"][k].as_f64().unwrap(), rb["errors"][k].as_f64().unwrap());
        assert!((x - y).abs() <= 1e-10 * y.abs(), "errors.{k}: {x} and {y}");
    }
    assert!(!files(&ra).is_empty());
    assert_eq!(files(&ra), files(&rb));
    // The rewritten report keeps the child's order of keys (title first, timings in phase order).
    let text = std::fs::read_to_string(sup.join("report.json")).unwrap();
    let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("{k}"));
    assert!(at("title") < at("backend") && at("start") < at("supervisor") && at("supervisor") < at("setup") && at("teardown") < at("exit") && at("exit") < at("total"));
    // No temporaries left by either writer.
    let names: Vec<String> = std::fs::read_dir(&sup).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn a_failing_run_fails_alike_supervised_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, problem(4, 1).replace("[mesh]", "[mesh]\nbogus = 1")).unwrap();
    for toml in [bad.clone(), dir.path().join("missing.toml")] {
        let a = run(&toml, &dir.path().join("a"), None).output().unwrap();
        let b = run(&toml, &dir.path().join("b"), Some("0")).output().unwrap();
        let err = String::from_utf8_lossy(&a.stderr).into_owned();
        assert!(!a.status.success() && err.starts_with("error: "), "{err}");
        assert_eq!(a.status.code(), b.status.code(), "{err}");
        assert_eq!(err, String::from_utf8_lossy(&b.stderr), "supervised and not");
        assert_eq!(a.stdout, b.stdout);
        assert!(!dir.path().join("a/report.json").exists());
    }
    // The switch itself: anything but 0 or 1 is an error naming it, before any run.
    let o = run(&bad, &dir.path().join("c"), Some("yes")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("GALERKIN_SUPERVISE") && err.contains("`yes`"), "{err}");
}

/// The process ids of `pid`'s children (`/proc/PID/task/PID/children`).
fn children(pid: u32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default().split_whitespace().filter_map(|w| w.parse().ok()).collect()
}

/// The supervised child of the parent `pid`, once it has been started (at most 10 s).
fn first_child(pid: u32) -> i32 {
    let t = Instant::now();
    loop {
        if let Some(&c) = children(pid).first() {
            return c;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no child process");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sigterm_to_the_parent_stops_the_run_and_sigint_to_it_alone_does_not() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("p.toml");
    // Long enough (seconds on two cores) to be signalled while it runs.
    std::fs::write(&toml, problem(40, 2)).unwrap();
    let mut parent = run(&toml, &dir.path().join("out"), None).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let child = first_child(parent.id());
    let alive = |pid: i32| Path::new(&format!("/proc/{pid}")).exists();
    // SIGINT to the parent alone (not the terminal's, which the child would get too): ignored.
    assert_eq!(unsafe { libc::kill(parent.id() as i32, libc::SIGINT) }, 0);
    std::thread::sleep(Duration::from_millis(300));
    assert!(parent.try_wait().unwrap().is_none() && alive(child), "SIGINT stopped the supervised run");
    // SIGTERM to the parent reaches the child; the parent ends as the child did, after reaping it.
    assert_eq!(unsafe { libc::kill(parent.id() as i32, libc::SIGTERM) }, 0);
    let status = parent.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(!alive(child), "the child outlived its parent");
    assert!(!dir.path().join("out/report.json").exists());

    // SIGKILL to the parent (nothing to pass on): the child goes with it.
    let mut parent = run(&toml, &dir.path().join("out2"), None).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let child = first_child(parent.id());
    parent.kill().unwrap();
    assert_eq!(parent.wait().unwrap().signal(), Some(libc::SIGKILL));
    let t = Instant::now();
    while alive(child) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!alive(child), "the child outlived its killed parent");
}
