//! Hostile input and faults, end to end through the `galerkin` binary.
//!
//! The corpus in `tests/hostile/` holds one problem file per case (and the meshes they read). Its
//! header says what must happen:
//! ```text
//! # expect: fail | ok
//! # message: text the error must contain   (fail; one line per needle)
//! # note: text a report note must contain   (ok)
//! ```
//! Every case runs under an address-space limit of 512 MiB (`prlimit --as`) and must finish within
//! a few seconds: refusing a problem costs neither memory nor time. A failed run leaves nothing
//! half-written; a successful one leaves a report whose file list matches the directory. The
//! remaining tests cover what a file cannot say: special files, broken pipes, a run killed while
//! it writes, and two runs sharing one output directory.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_galerkin");
/// Address-space limit of every corpus run.
const MEMORY_LIMIT: u64 = 512 << 20;
/// Wall-clock limit of every corpus run.
const TIME_LIMIT: Duration = Duration::from_secs(10);

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// Run galerkin with `args` under the memory limit; returns the output and the wall time.
fn limited(args: &[&str]) -> (Output, Duration) {
    let t = Instant::now();
    let out = Command::new("prlimit")
        .arg(format!("--as={MEMORY_LIMIT}"))
        .arg("--")
        .arg("timeout")
        .arg("60")
        .arg(BIN)
        .args(args)
        .output()
        .expect("run prlimit/timeout/galerkin");
    (out, t.elapsed())
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// A report lists exactly the run's files, each with the size and SHA-256 it has on disk.
fn check_report(dir: &Path) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    for o in report["outputs"].as_array().unwrap() {
        let p = Path::new(o["path"].as_str().unwrap());
        let data = std::fs::read(p).unwrap_or_else(|e| panic!("{p:?} listed in the report: {e}"));
        assert_eq!(data.len() as u64, o["bytes"].as_u64().unwrap(), "{p:?}");
        let sha = sha256_hex(p);
        assert_eq!(sha, o["sha256"].as_str().unwrap(), "{p:?} does not match its report");
    }
    report
}

fn sha256_hex(p: &Path) -> String {
    let out = Command::new("sha256sum").arg(p).output().expect("sha256sum");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn corpus_cases_fail_or_pass_as_their_header_says() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(corpus()).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
    cases.sort();
    assert!(cases.len() >= 40, "corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(case).unwrap();
        let header = |key: &str| -> Vec<String> { text.lines().filter_map(|l| l.strip_prefix(&format!("# {key}: "))).map(str::to_string).collect() };
        let expect_ok = header("expect") == ["ok"];
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let (o, took) = limited(&["run", case.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--backend", "cpu"]);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        let mut problems = Vec::new();
        if stderr.contains("panicked") || stderr.contains("memory allocation") || o.status.code().is_none() {
            problems.push(format!("crashed ({:?})", o.status));
        }
        if took > TIME_LIMIT {
            problems.push(format!("took {took:?}"));
        }
        if files(&out).iter().any(|f| f.ends_with(".tmp")) {
            problems.push(format!("left temporaries {:?}", files(&out)));
        }
        if expect_ok {
            if !o.status.success() {
                problems.push("failed".into());
            } else {
                let report = check_report(&out);
                let notes = report["notes"].to_string();
                for n in header("note") {
                    if !notes.contains(&n) {
                        problems.push(format!("no note `{n}` in {notes}"));
                    }
                }
            }
        } else {
            if o.status.code() != Some(1) {
                problems.push(format!("exit status {:?}, expected 1", o.status.code()));
            }
            if !files(&out).is_empty() {
                problems.push(format!("wrote {:?}", files(&out)));
            }
            for n in header("message") {
                if !stderr.contains(&n) {
                    problems.push(format!("message lacks `{n}`"));
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {}\n  stderr: {}", problems.join("; "), stderr.trim()));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

const SMALL: &str = "[mesh]\ngenerator = \"rectangle\"\nn = [8, 8]\n[physics]\nkind = \"poisson\"\nsource = 1.0\n[[bc]]\nboundary = \"xmin\"\ntype = \"dirichlet\"\nvalue = 0.0\n";

#[test]
fn special_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("problem.toml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (path, needle) in [(fifo.to_str().unwrap(), "FIFO"), ("/dev/zero", "character device"), (dir.path().to_str().unwrap(), "directory")] {
        let (o, took) = limited(&["run", path, "--out", dir.path().join("out").to_str().unwrap(), "--quiet"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(1) && stderr.contains(needle) && stderr.contains("not a regular file"), "{path}: {stderr}");
        assert!(took < TIME_LIMIT, "{path}: {took:?}");
    }
    // A mesh path that is a FIFO is refused the same way.
    let mesh_fifo = dir.path().join("mesh.msh");
    assert!(Command::new("mkfifo").arg(&mesh_fifo).status().unwrap().success());
    let toml = dir.path().join("p.toml");
    std::fs::write(&toml, "[mesh]\nfile = \"mesh.msh\"\n[physics]\nkind = \"poisson\"\n").unwrap();
    let (o, took) = limited(&["run", toml.to_str().unwrap(), "--out", dir.path().join("out").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(1) && stderr.contains("FIFO") && took < TIME_LIMIT, "{stderr}");
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("p.toml");
    std::fs::write(&toml, SMALL).unwrap();
    let out = dir.path().join("out");
    let script = format!("'{BIN}' run '{}' --out '{}' --quiet | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}", toml.display(), out.display());
    let o = Command::new("bash").arg("-c").arg(&script).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0", "{stderr}");
    check_report(&out);
    let o = Command::new("bash").arg("-c").arg(format!("'{BIN}' bench --case poisson-p1-tet --dofs 2000 --max-iter 5 | head -n 1 >/dev/null; echo ${{PIPESTATUS[0]}}")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0", "{}", String::from_utf8_lossy(&o.stderr));
}

/// A projection on 700×700 triangles: quick to solve, with a VTU of tens of MB that takes a while
/// to write.
const BIG_OUTPUT: &str = "[mesh]\ngenerator = \"rectangle\"\nn = [700, 700]\nreorder = false\n[physics]\nkind = \"projection\"\nsource = \"x*y\"\n[solver]\nrtol = 1e-6\n[output]\nplot = false\n";

/// Kill a run (SIGKILL) as soon as its first temporary appears, i.e. in the middle of writing
/// its outputs: the directory then holds no report (so it reads as incomplete) and no file that
/// claims to be whole; the next run removes the stale temporary and publishes a whole run.
#[test]
fn a_run_killed_while_writing_leaves_an_incomplete_directory_the_next_run_cleans() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("big.toml");
    std::fs::write(&toml, BIG_OUTPUT).unwrap();
    let out = dir.path().join("out");
    // A whole earlier run in the directory: its report must not survive to describe a partial one.
    let small = dir.path().join("small.toml");
    std::fs::write(&small, SMALL).unwrap();
    assert!(Command::new(BIN).args(["run", small.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).status().unwrap().success());
    assert!(out.join("report.json").exists());

    let mut child = Command::new(BIN).args(["run", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let t = Instant::now();
    let mut saw_tmp = false;
    while t.elapsed() < Duration::from_secs(120) {
        if files(&out).iter().any(|f| f.ends_with(".tmp")) {
            saw_tmp = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    // `galerkin run` is a supervising parent and the run its child (`src/supervise.rs`), which a
    // killed parent takes with it; wait until the run itself has ended, as the lock goes with it.
    let runs = run_children(child.id());
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let t_end = Instant::now();
    while runs.iter().any(|p| std::path::Path::new(&format!("/proc/{p}")).exists()) && t_end.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let left = files(&out);
    eprintln!("killed after {:?}: saw a temporary {saw_tmp}, status {status:?}, left {left:?}", t.elapsed());
    if saw_tmp && !status.success() {
        assert!(!left.contains(&"report.json".to_string()), "a killed run left a report: {left:?}");
    }
    // Whatever the kill left, the next run removes stale temporaries and publishes a whole run.
    let stale = format!(".solution.vtu.{}.0.tmp", 999_999_999u32);
    std::fs::write(out.join(&stale), b"partial").unwrap();
    let o = Command::new(BIN).args(["run", small.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = files(&out);
    assert!(!after.iter().any(|f| f.ends_with(".tmp")), "{after:?}");
    let report = check_report(&out);
    assert!(report["notes"].to_string().contains("interrupted earlier run"), "{}", report["notes"]);
}

/// The process ids of `pid`'s children (Linux `/proc/PID/task/PID/children`; none elsewhere).
fn run_children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default().split_whitespace().filter_map(|w| w.parse().ok()).collect()
}

/// Two runs on one directory at once: the second is refused while the first holds the lock (or
/// runs after it), and the directory ends up describing one run consistently.
#[test]
fn concurrent_runs_on_one_directory_do_not_mix_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let a = dir.path().join("a.toml");
    let b = dir.path().join("b.toml");
    std::fs::write(&a, BIG_OUTPUT.replace("[700, 700]", "[300, 300]")).unwrap();
    std::fs::write(&b, SMALL).unwrap();
    let first = Command::new(BIN).args(["run", a.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    // Wait until the first run holds the directory, then start the second.
    let t = Instant::now();
    while !out.exists() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let second = Command::new(BIN).args(["run", b.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]).output().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let stderr2 = String::from_utf8_lossy(&second.stderr);
    eprintln!("second run: {:?} {stderr2}", second.status);
    assert!(second.status.success() || stderr2.contains("in use by another galerkin run"), "{stderr2}");
    let report = check_report(&out);
    // The VTU in the directory has the mesh the report describes.
    // The XML header is text; the appended arrays after it are raw binary.
    let vtu = String::from_utf8_lossy(&std::fs::read(out.join("solution.vtu")).unwrap()).into_owned();
    let points = report["mesh"]["vertices"].as_u64().unwrap();
    assert!(vtu.contains(&format!("NumberOfPoints=\"{points}\"")), "report says {points} points");
}
