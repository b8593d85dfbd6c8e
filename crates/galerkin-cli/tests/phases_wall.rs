//! `galerkin run`'s report accounts for the process's whole wall clock: its phases (from the
//! supervising parent's start, phases `start` and `supervisor`, to the freed data, phase
//! `teardown`, and the child's exit, phase `exit`) add up to the time this test measures around
//! the process, within 1.5 % (the issue asks 2 %). On the CPU the exit was already small; what
//! limits the bound here is the start times, known to a clock tick (±5 ms of a 0.5–4 s run), and
//! the parent's rewrite of the report after its total (an fsync).
mod support;

use std::process::Command;
use std::time::Instant;
use support::repo;

/// The Poisson example at `n` cells per side, degree 1, on the CPU backend.
fn problem(n: usize) -> String {
    let text = std::fs::read_to_string(repo().join("examples/poisson-3d.toml")).unwrap();
    let text = text.replace("n = [12, 12, 12]", &format!("n = [{n}, {n}, {n}]")).replace("degree = 2", "degree = 1").replace("rtol = 1e-10", "rtol = 1e-8");
    assert!(text.contains(&format!("n = [{n}, {n}, {n}]")) && text.contains("degree = 1"), "the example changed: update this test");
    text
}

/// One run: the report's timings and the wall clock measured around the process.
fn run_once(toml: &std::path::Path, out: &std::path::Path) -> (serde_json::Value, f64) {
    let t = Instant::now();
    let run = Command::new(env!("CARGO_BIN_EXE_galerkin"))
        .args(["run", toml.to_str().unwrap(), "--backend", "cpu", "--quiet", "--out", out.to_str().unwrap()])
        .output()
        .expect("run galerkin");
    let wall = t.elapsed().as_secs_f64();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    (report, wall)
}

#[test]
fn phases_add_up_to_the_processs_wall_clock() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("p.toml");
    // ≈ 1.2 s on a 2-core machine (118k dofs): 1.5 % is ≈ 18 ms, several times the exec, the exit and
    // a clock tick. (At 24 cells a side the run had become ≈ 0.2 s, where 1.5 % is 3 ms — under a
    // clock tick: CI failed at 98.5 % while another process loaded the machine.)
    std::fs::write(&toml, problem(48)).unwrap();
    // Up to three runs: every run must pass the checks below, and the best one the 1.5 % bound — a
    // neighbour's burst of load can stall the exit of one run on a shared CI machine, but a
    // phase missing from the report misses it in every run.
    let mut best = 0.0f64;
    for attempt in 0..3 {
        let out = dir.path().join(format!("out{attempt}"));
        let (report, wall) = run_once(&toml, &out);
        let tm = &report["timings"];
        let s = |k: &str| tm[k].as_f64().unwrap_or_else(|| panic!("timings.{k} missing: {tm}"));
        // `supervisor` and `exit`: added by the supervising parent (`galerkin run`'s default).
        let phases: f64 = ["start", "supervisor", "setup", "mesh", "space", "assembly", "preconditioner", "solve", "solve_other", "errors", "points", "output", "teardown", "exit"].iter().map(|k| s(k)).sum();
        let total = s("total");
        // The process's start before the first timer is measured (exec, dynamic linking,
        // arguments): more than nothing, far less than a second.
        assert!(s("start") > 0.0 && s("start") < 0.5, "start {}", s("start"));
        assert!((total - phases - s("unaccounted")).abs() < 1e-9 && s("unaccounted").abs() < 0.01 * total, "{tm}");
        // The total (process start to the report) cannot exceed the time around the process (the
        // start time is known to a clock tick, 10 ms).
        assert!(total <= wall + 0.011, "report total {total:.4} s > wall {wall:.4} s");
        assert!(s("solve_ready") > s("start") + s("setup") + s("mesh") && s("solve_ready") < total, "{tm}");
        // P1 at h = 1/48: the discretisation error (7.1e-4), not a failed solve.
        let l2 = report["errors"]["l2"].as_f64().unwrap();
        assert!(l2 > 5e-4 && l2 < 1e-3, "{}", report["errors"]);
        best = best.max(total / wall);
        if best >= 0.985 {
            break;
        }
    }
    // The report misses at most 1.5 % of the wall: its own write, the printing and the exit.
    assert!(best >= 0.985, "phases add up to at best {:.1} % of the wall clock in three runs", 100.0 * best);
}
