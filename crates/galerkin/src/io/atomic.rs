//! Atomic file output: write a temporary sibling, fsync it, rename it over the target.
//!
//! A crash, a full disk or an error half-way through a writer must never leave a truncated VTU or
//! JSON file that a later tool (ParaView, a plotting script, a restart) would silently misread.
//! Renaming within one directory is atomic on POSIX file systems, so readers see the old file, the
//! whole new file, or nothing.
use crate::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporaries of concurrent writers in one process (threads writing in parallel).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes the temporary file on drop unless the rename succeeded, so early returns and panics in
/// the caller's closure both clean up.
struct TempGuard {
    path: PathBuf,
    armed: bool,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Write `path` atomically: `f` streams the content into a buffered temporary file in the same
/// directory (created if missing); on success the file is flushed, fsynced and renamed to `path`,
/// on any error the temporary is removed and `path` is left untouched.
///
/// Errors from the `&mut dyn Write` inside `f` are `std::io::Error`s; map them with
/// [`Error::io`]`(path, e)` so the message names the target file.
pub fn write_atomic(path: &Path, f: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let (dir, guard, file) = temporary_for(path)?;
    let mut writer = BufWriter::new(file);
    f(&mut writer)?;
    let file: File = writer.into_inner().map_err(|e| Error::io(&guard.path, e.into_error()))?;
    publish(path, dir, guard, file)
}

/// Seconds [`write_atomic_parts`] spent writing the bytes and making them durable (fsync).
#[derive(Clone, Copy, Debug, Default)]
pub struct PartsTimes {
    pub write: f64,
    pub sync: f64,
}

/// Bytes per positioned write of [`write_atomic_parts`]: large enough for sequential disk writes,
/// small enough that a gigabyte part spreads over every thread.
const WRITE_PIECE: usize = 8 << 20;

/// [`write_atomic`] for content already in memory as byte slices in file order: the temporary is
/// sized once and the slices are written at their offsets by several threads (positioned writes),
/// so a file of gigabytes is not funnelled through one `write` loop; then fsync and rename as
/// there, so the file is still whole or absent.
pub fn write_atomic_parts(path: &Path, parts: &[&[u8]]) -> Result<PartsTimes> {
    let t = std::time::Instant::now();
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let f = AtomicFile::create(path, total as u64)?;
    f.write_parts_at(0, parts)?;
    let write = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    f.publish()?;
    Ok(PartsTimes { write, sync: t.elapsed().as_secs_f64() })
}

/// A file written in pieces, at known offsets, possibly long before it is complete (a run writes
/// the mesh's part of its VTU while it solves): a pre-sized temporary sibling that only
/// [`AtomicFile::publish`] renames over the target. Dropped unpublished, the temporary goes.
pub struct AtomicFile {
    target: PathBuf,
    dir: PathBuf,
    guard: TempGuard,
    file: File,
}

impl AtomicFile {
    /// The temporary for `path`, `len` bytes long.
    pub fn create(path: &Path, len: u64) -> Result<AtomicFile> {
        let (dir, guard, file) = temporary_for(path)?;
        file.set_len(len).map_err(|e| Error::io(&guard.path, e))?;
        Ok(AtomicFile { target: path.to_path_buf(), dir, guard, file })
    }

    /// Writes `parts`, one after the other from `offset`, by several threads (positioned writes of
    /// at most [`WRITE_PIECE`] bytes).
    pub fn write_parts_at(&self, offset: u64, parts: &[&[u8]]) -> Result<()> {
        use rayon::prelude::*;
        let mut pieces = Vec::new();
        let mut at = offset;
        for p in parts {
            for c in p.chunks(WRITE_PIECE) {
                pieces.push((at, c));
                at += c.len() as u64;
            }
        }
        pieces.par_iter().try_for_each(|&(off, bytes)| write_at(&self.file, bytes, off)).map_err(|e| Error::io(&self.guard.path, e))
    }

    /// Starts writing `len` bytes from `offset` back to the disk without waiting for them (Linux
    /// `sync_file_range`), so that a later fsync has little left to do; best effort, a no-op
    /// elsewhere.
    pub fn start_writeback(&self, offset: u64, len: u64) {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: a system call on integers and the descriptor of a file this value owns.
            let _ = unsafe { libc::sync_file_range(self.file.as_raw_fd(), offset as _, len as _, libc::SYNC_FILE_RANGE_WRITE) };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len);
    }

    /// Makes what was written so far durable (so the final fsync has little left to do).
    pub fn sync_data(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(&self.guard.path, e))
    }

    /// fsync, then rename over the target: the file appears whole.
    pub fn publish(self) -> Result<()> {
        let AtomicFile { target, dir, guard, file } = self;
        publish(&target, dir, guard, file)
    }
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], off: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, off)
}

#[cfg(not(unix))]
fn write_at(file: &File, bytes: &[u8], off: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    // One writer at a time where there is no positioned write.
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = file;
    f.seek(SeekFrom::Start(off))?;
    f.write_all(bytes)
}

/// The directory of `path` (created if missing) and a new temporary sibling, removed on drop
/// unless [`publish`] renames it.
fn temporary_for(path: &Path) -> Result<(PathBuf, TempGuard, File)> {
    let name = path.file_name().ok_or_else(|| {
        Error::invalid(format!("output path `{}` has no file name", path.display()))
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp_name = temporary_name(&name.to_string_lossy(), std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
    let tmp = dir.join(tmp_name);
    let file = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| Error::io(&tmp, e))?;
    Ok((dir.to_path_buf(), TempGuard { path: tmp, armed: true }, file))
}

/// fsync the temporary, rename it over `path`, and persist the rename (best effort).
fn publish(path: &Path, dir: PathBuf, mut guard: TempGuard, file: File) -> Result<()> {
    file.sync_all().map_err(|e| Error::io(&guard.path, e))?;
    drop(file);
    fs::rename(&guard.path, path).map_err(|e| Error::io(path, e))?;
    guard.armed = false;
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The temporary sibling of `name` written by process `pid`: `.NAME.PID.N.tmp`.
fn temporary_name(name: &str, pid: u32, n: u64) -> String {
    format!(".{name}.{pid}.{n}.tmp")
}

/// The writer's process id when `file_name` is a temporary of [`write_atomic`].
pub fn temporary_owner(file_name: &str) -> Option<u32> {
    let inner = file_name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = inner.rsplitn(3, '.');
    let n = parts.next()?;
    let pid = parts.next()?;
    let name = parts.next()?;
    if name.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Remove the temporaries that writers other than this process left in `dir` (a run killed while
/// writing). Only call it while holding the directory's lock ([`super::OutputDir`]): then no other
/// galerkin run is writing there, and every temporary of another process is stale. Returns the
/// names removed.
pub fn remove_stale_temporaries(dir: &Path) -> Result<Vec<String>> {
    let me = std::process::id();
    let mut removed = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(Error::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        match temporary_owner(&name) {
            Some(pid) if pid != me && entry.file_type().map(|t| t.is_file()).unwrap_or(false) => {
                fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
                removed.push(name);
            }
            _ => {}
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    #[test]
    fn writes_whole_file_and_creates_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/out.txt");
        write_atomic(&path, |w| {
            w.write_all(b"hello").map_err(|e| Error::io(&path, e))
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"hello");
        assert_eq!(
            dir_entries(&tmp.path().join("a/b")),
            vec!["out.txt".to_string()]
        );
    }

    #[test]
    fn error_midway_leaves_no_file_and_no_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.txt");
        let r = write_atomic(&path, |w| {
            w.write_all(&[7u8; 100_000])
                .map_err(|e| Error::io("x", e))?;
            Err(Error::invalid("boom"))
        });
        assert!(matches!(r, Err(Error::Invalid(ref m)) if m == "boom"));
        assert!(dir_entries(tmp.path()).is_empty());
    }

    #[test]
    fn failed_rewrite_keeps_previous_content() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.txt");
        write_atomic(&path, |w| {
            w.write_all(b"old").map_err(|e| Error::io("x", e))
        })
        .unwrap();
        let r = write_atomic(&path, |w| {
            w.write_all(b"new, partial")
                .map_err(|e| Error::io("x", e))?;
            Err(Error::invalid("boom"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(dir_entries(tmp.path()), vec!["out.txt".to_string()]);
    }

    /// Parts larger than one positioned write land at their offsets, whole; a second write
    /// replaces the file and leaves no temporary.
    #[test]
    fn parallel_parts_are_written_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("d/out.bin");
        let big: Vec<u8> = (0..2 * WRITE_PIECE + 12345).map(|i| (i * 7 % 251) as u8).collect();
        let parts: [&[u8]; 4] = [b"head", &big, b"", b"tail"];
        write_atomic_parts(&path, &parts).unwrap();
        let expected: Vec<u8> = parts.concat();
        assert!(fs::read(&path).unwrap() == expected);
        write_atomic_parts(&path, &[b"short"]).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"short");
        assert_eq!(dir_entries(&tmp.path().join("d")), vec!["out.bin".to_string()]);
    }

    #[test]
    fn panic_in_writer_removes_temporary() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.txt");
        let p2 = path.clone();
        let r = std::panic::catch_unwind(move || write_atomic(&p2, |_| panic!("writer bug")));
        assert!(r.is_err());
        assert!(dir_entries(tmp.path()).is_empty());
    }

    #[test]
    fn stale_temporaries_of_other_processes_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(temporary_owner(".solution.vtu.1234.0.tmp"), Some(1234));
        assert_eq!(temporary_owner(".a.b.c.77.12.tmp"), Some(77));
        for not in ["solution.vtu", ".x.tmp", ".x.12.tmp", ".x.ab.1.tmp", "..1.2.tmp", ".x.1.2.tmpx"] {
            assert_eq!(temporary_owner(not), None, "{not}");
        }
        let stale = temporary_name("solution.vtu", 999_999_999, 3);
        let mine = temporary_name("report.json", std::process::id(), 0);
        for f in [&stale, &mine, &"keep.vtu".to_string()] {
            fs::write(tmp.path().join(f), b"x").unwrap();
        }
        assert_eq!(remove_stale_temporaries(tmp.path()).unwrap(), vec![stale]);
        assert_eq!(dir_entries(tmp.path()), vec![mine, "keep.vtu".to_string()]);
        assert!(remove_stale_temporaries(&tmp.path().join("absent")).unwrap().is_empty());
    }

    #[test]
    fn path_without_file_name_is_an_error() {
        let r = write_atomic(Path::new("/"), |_| Ok(()));
        assert!(matches!(r, Err(Error::Invalid(_))));
    }
}
