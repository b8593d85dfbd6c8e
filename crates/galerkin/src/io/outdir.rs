//! An output directory owned by one run at a time, and the record that proves a run's outputs whole.
//!
//! Two runs writing into one directory would interleave their files (a report describing one mesh
//! next to a VTU of another). [`OutputDir::lock`] takes an advisory lock (`flock`) on the
//! directory itself, so no lock file is left behind; a second run fails at once with a message
//! saying so, and the lock goes with the process, however it ends. Holding the lock, the run
//! removes the temporaries that killed runs left behind.
//!
//! A run publishes its outputs in order: it removes the previous report, writes every file
//! (each atomically), then writes the report last, listing each file with its size and SHA-256.
//! So a directory with a report whose files match it holds one whole run; a directory without one
//! holds a partial run (or none).
use super::atomic::remove_stale_temporaries;
use crate::{Error, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A locked output directory; the lock is released when this is dropped (or the process ends).
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    _handle: File,
    /// Temporaries of earlier, killed runs removed when the lock was taken.
    pub removed_temporaries: Vec<String>,
}

impl OutputDir {
    /// Create `path` if needed, lock it, and clean up the temporaries of dead runs.
    pub fn lock(path: &Path) -> Result<OutputDir> {
        std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
        let handle = File::open(path).map_err(|e| Error::io(path, e))?;
        match handle.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::io(
                    path,
                    std::io::Error::new(
                        std::io::ErrorKind::WouldBlock,
                        "the output directory is in use by another galerkin run (it holds the directory's lock); \
                         wait for it to finish or choose another --out",
                    ),
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
        let removed_temporaries = remove_stale_temporaries(path)?;
        Ok(OutputDir { path: path.to_path_buf(), _handle: handle, removed_temporaries })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `name` inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Remove a file of an earlier run (the report, before a new run's files replace its outputs).
    pub fn remove(&self, name: &str) -> Result<()> {
        let p = self.path.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(p, e)),
        }
    }
}

/// One file a run wrote: path, size and SHA-256 (hex), as listed in its report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct OutputFile {
    pub path: PathBuf,
    pub bytes: u64,
    pub sha256: String,
}

/// Size and SHA-256 of a written file.
pub fn file_record(path: &Path) -> Result<OutputFile> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(OutputFile { path: path.to_path_buf(), bytes, sha256 })
}

/// Size and SHA-256 of a file whose bytes are `parts` in order, hashed from memory: what a writer
/// that just wrote them ([`super::atomic::write_atomic_parts`]) records without reading the file
/// back (gigabytes at 10^7 cells).
pub fn parts_record(path: &Path, parts: &[&[u8]]) -> OutputFile {
    let mut hasher = Sha256::new();
    for p in parts {
        hasher.update(p);
    }
    let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    OutputFile { path: path.to_path_buf(), bytes: parts.iter().map(|p| p.len() as u64).sum(), sha256 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_fails_and_drop_releases() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let first = OutputDir::lock(&out).unwrap();
        let e = OutputDir::lock(&out).unwrap_err().to_string();
        assert!(e.contains("in use by another galerkin run") && e.contains("out"), "{e}");
        drop(first);
        let again = OutputDir::lock(&out).unwrap();
        assert!(again.removed_temporaries.is_empty());
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "the lock leaves no file behind");
    }

    #[test]
    fn record_hashes_the_content() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.txt");
        std::fs::write(&p, "abc").unwrap();
        let r = file_record(&p).unwrap();
        assert_eq!(r.bytes, 3);
        assert_eq!(r.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        // The same record from the bytes in memory, split anywhere.
        assert_eq!(parts_record(&p, &[b"a", b"", b"bc"]), r);
    }
}
