//! Reading input files (problem files, meshes) defensively: only regular files, and never more
//! bytes than the file had when it was opened.
//!
//! A FIFO would block `open` forever, `/dev/zero` would be read until memory runs out and a
//! directory gives an unhelpful "Is a directory": all are refused by what they are, before they are
//! opened. The size from `stat` bounds the read, so a file that grows while it is read (a log
//! being appended to) cannot make galerkin allocate without limit either.
use crate::{Error, Result};
use std::io::Read;
use std::path::Path;

/// Size in bytes of the regular file at `path`; an error naming the path and what it is otherwise.
pub fn regular_file_size(path: &Path, what: &str) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("the {what} is {}, not a regular file", kind_of(&meta))),
        ));
    }
    Ok(meta.len())
}

/// Read a whole regular file (at most the size it had when it was checked).
pub fn read_regular_file(path: &Path, what: &str) -> Result<Vec<u8>> {
    let len = regular_file_size(path, what)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // Checked again on the open file: the path may have been replaced between stat and open.
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("the {what} is not a regular file"))));
    }
    let cap = usize::try_from(len).map_err(|_| Error::OutOfMemory(format!("{} is {len} bytes, more than this machine can address", path.display())))?;
    let mut data = Vec::new();
    data.try_reserve_exact(cap)
        .map_err(|_| Error::OutOfMemory(format!("cannot hold the {len} bytes of {} in memory", path.display())))?;
    file.take(len).read_to_end(&mut data).map_err(|e| Error::io(path, e))?;
    Ok(data)
}

/// Read a regular text file as UTF-8.
pub fn read_regular_text(path: &Path, what: &str) -> Result<String> {
    let data = read_regular_file(path, what)?;
    String::from_utf8(data).map_err(|e| {
        Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, format!("the {what} is not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
    })
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a plain file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular_file(dir.path(), "mesh file").unwrap_err().to_string();
        assert!(e.contains("a directory") && e.contains("mesh file"), "{e}");
        let e = read_regular_file(Path::new("/dev/zero"), "problem file").unwrap_err().to_string();
        assert!(e.contains("character device") && e.contains("/dev/zero"), "{e}");
        let fifo = dir.path().join("pipe");
        let ok = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        if ok {
            let e = read_regular_file(&fifo, "mesh file").unwrap_err().to_string();
            assert!(e.contains("FIFO"), "{e}");
        }
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "hello").unwrap();
        assert_eq!(read_regular_text(&f, "x").unwrap(), "hello");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_regular_text(&f, "problem file").unwrap_err().to_string().contains("not UTF-8"));
    }
}
