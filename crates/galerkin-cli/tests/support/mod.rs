//! Helpers shared by the CLI tests: run the `galerkin` binary, find the repository, and run a
//! problem file that must fail without leaving outputs.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `galerkin ARGS`: (success, stdout, stderr).
pub fn galerkin(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_galerkin")).args(args).output().expect("run galerkin");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Write `text` as a problem file, run it, and return stderr; asserts failure and no outputs.
pub fn fails(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("bad.toml");
    std::fs::write(&toml, text).unwrap();
    let out = dir.path().join("out");
    let (ok, _, stderr) = galerkin(&["run", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(!ok, "expected failure for:\n{text}");
    assert!(!stderr.contains("panicked"), "panic instead of an error:\n{stderr}");
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(), "outputs written despite the error");
    stderr
}
