//! A raw appended VTU written in two parts: the mesh part beside a run, the point fields at its end.
//!
//! The mesh part (geometry, cells, region tags: 95 % of the bytes at 10^7 cells, 1.7 GB) is a
//! stream of known length: every raw block is an 8-byte count and `len × size` bytes, so the
//! XML head with all offsets comes first, before any value is encoded. The stream is then cut
//! into windows of [`WINDOW`] bytes and pipelined: while one window is hashed (SHA-256 is
//! sequential: one thread) and written at its offset, the next is encoded by the pool's other
//! threads. The preparation then takes about the hash's time instead of encoding plus hash, and
//! holds two windows instead of the encoded gigabytes (no page faults for a second copy of the
//! mesh). The digest stays the SHA-256 of the whole file, bytes in file order.
use crate::io::atomic::AtomicFile;
use crate::io::outdir::OutputFile;
use super::{array_head, le_bytes, small_indices, xml_head, Entry, VtkNumber, VtuTimes, APPENDED_TAIL, REGION_FIELD};
use crate::mesh::Mesh;
use crate::{Error, Result};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Bytes per window of the pipeline (two live at a time): large enough that the steps' joins
/// cost nothing (about 10 ms of hashing each), small enough to stay out of the run's memory.
pub const WINDOW: usize = 16 << 20;

/// Values per encoding task inside a window (64 KiB of output).
const TASK_BYTES: usize = 1 << 16;

/// An array of the appended section: its attributes, its values, and how to write values
/// `first..first + out.len() / elem` as little-endian bytes (called per task, not per value).
struct RawArray<'a> {
    head: String,
    elem: usize,
    len: usize,
    fill: Box<dyn Fn(usize, &mut [u8]) + Sync + 'a>,
}

fn raw<'a, T: VtkNumber + 'a>(name: &str, ncomp: usize, len: usize, f: impl Fn(usize) -> T + Sync + 'a) -> RawArray<'a> {
    let elem = std::mem::size_of::<T>();
    let fill = move |first: usize, out: &mut [u8]| {
        for (i, b) in out.chunks_exact_mut(elem).enumerate() {
            f(first + i).put_le(b);
        }
    };
    RawArray { head: array_head(T::VTK_TYPE, Some(name), ncomp, super::VtuEncoding::Appended), elem, len, fill: Box::new(fill) }
}

impl RawArray<'_> {
    /// The block's bytes: VTK's UInt64 count, then the values.
    fn block_len(&self) -> usize {
        8 + self.len * self.elem
    }
    fn entry(&self) -> Entry<'_> {
        Entry { head: &self.head, inline: None, size: self.block_len() }
    }
}

/// The mesh part's arrays in file order: cell data (the region tags, when `regions`), the points,
/// then connectivity, offsets and types — the arrays [`super::VtuWriter`] writes for them.
fn mesh_arrays(mesh: &Mesh, regions: bool) -> (Vec<RawArray<'_>>, RawArray<'_>, Vec<RawArray<'_>>) {
    let nv = mesh.cell_type.num_vertices();
    let nc = mesh.num_cells();
    let tags = &mesh.cell_tags;
    let cell_data = if regions { vec![raw(REGION_FIELD, 1, tags.len(), |i| tags[i])] } else { Vec::new() };
    let flat = mesh.coords.as_flattened();
    let points = raw("Points", 3, flat.len(), |i| flat[i]);
    let cells = &mesh.cells;
    let id = mesh.cell_type.vtk_id();
    let mut topology = if small_indices(mesh) {
        vec![raw("connectivity", 1, cells.len(), |i| cells[i] as i32), raw("offsets", 1, nc, move |c| ((c + 1) * nv) as i32)]
    } else {
        vec![raw("connectivity", 1, cells.len(), |i| cells[i] as i64), raw("offsets", 1, nc, move |c| ((c + 1) * nv) as i64)]
    };
    topology.push(raw("types", 1, nc, move |_| id));
    (cell_data, points, topology)
}

/// A piece of a window: bytes as they are (the XML head, a block's count), or values of an array.
enum Seg {
    Bytes(Vec<u8>),
    Values { array: usize, first: usize, n: usize },
}

/// A contiguous span of the stream: where it starts in the file, its length, its pieces.
struct Window {
    offset: u64,
    bytes: usize,
    segs: Vec<Seg>,
}

/// The stream `head`, then each array's block, cut into windows of about `window` bytes (a
/// window ends at a value's boundary; the head may make the first one longer).
fn windows(head: &[u8], arrays: &[RawArray], window: usize) -> Vec<Window> {
    let window = window.max(16);
    let mut out = Vec::new();
    let mut cur = Window { offset: 0, bytes: 0, segs: Vec::new() };
    let close = |cur: &mut Window, out: &mut Vec<Window>| {
        let next = Window { offset: cur.offset + cur.bytes as u64, bytes: 0, segs: Vec::new() };
        out.push(std::mem::replace(cur, next));
    };
    let push_bytes = |cur: &mut Window, b: Vec<u8>| {
        cur.bytes += b.len();
        cur.segs.push(Seg::Bytes(b));
    };
    push_bytes(&mut cur, head.to_vec());
    for (k, a) in arrays.iter().enumerate() {
        push_bytes(&mut cur, ((a.len * a.elem) as u64).to_le_bytes().to_vec());
        let mut first = 0;
        while first < a.len {
            let room = window.saturating_sub(cur.bytes) / a.elem;
            if room == 0 {
                close(&mut cur, &mut out);
                continue;
            }
            let n = room.min(a.len - first);
            cur.segs.push(Seg::Values { array: k, first, n });
            cur.bytes += n * a.elem;
            first += n;
        }
    }
    if cur.bytes > 0 {
        out.push(cur);
    }
    out
}

/// The bytes of window `w` into `buf` (resized; no zeroing of what it held), its values encoded
/// in parallel tasks of [`TASK_BYTES`].
fn encode_window(w: &Window, arrays: &[RawArray], buf: &mut Vec<u8>) {
    use rayon::prelude::*;
    buf.resize(w.bytes, 0);
    let mut tasks: Vec<(&RawArray, usize, &mut [u8])> = Vec::new();
    let mut rest = &mut buf[..];
    for seg in &w.segs {
        match seg {
            Seg::Bytes(b) => {
                let (here, tail) = rest.split_at_mut(b.len());
                here.copy_from_slice(b);
                rest = tail;
            }
            &Seg::Values { array, first, n } => {
                let a = &arrays[array];
                let (here, tail) = rest.split_at_mut(n * a.elem);
                let per = (TASK_BYTES / a.elem).max(1);
                tasks.extend(here.chunks_mut(per * a.elem).enumerate().map(|(c, o)| (a, first + c * per, o)));
                rest = tail;
            }
        }
    }
    tasks.into_par_iter().for_each(|(a, first, out)| (a.fill)(first, out));
}

/// Streams `head` and `arrays` into `file` from offset 0 and into `hasher`, window by window:
/// window j hashed and written (its write-back to the disk started) while window j + 1 is
/// encoded, so the fsync after the stream has little left to wait for. Returns the busy seconds of
/// (encoding, writing, hashing), which overlap.
fn stream(file: &AtomicFile, hasher: &mut sha2::Sha256, head: &[u8], arrays: &[RawArray], window: usize) -> Result<(f64, f64, f64)> {
    let timed = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let wins = windows(head, arrays, window);
    let (mut cur, mut next) = (Vec::new(), Vec::new());
    let mut encode = match wins.first() {
        Some(w) => timed(&mut || encode_window(w, arrays, &mut cur)),
        None => 0.0,
    };
    let (mut write, mut hash) = (0.0, 0.0);
    for (j, w) in wins.iter().enumerate() {
        let (h, (written, e)) = rayon::join(
            || timed(&mut || hasher.update(&cur)),
            || {
                rayon::join(
                    || {
                        let t = Instant::now();
                        file.write_parts_at(w.offset, &[&cur])?;
                        // Its write-back starts now, beside the stream, not in one fsync after it.
                        file.start_writeback(w.offset, cur.len() as u64);
                        Ok::<_, Error>(t.elapsed().as_secs_f64())
                    },
                    || match wins.get(j + 1) {
                        Some(nw) => timed(&mut || encode_window(nw, arrays, &mut next)),
                        None => 0.0,
                    },
                )
            },
        );
        write += written?;
        hash += h;
        encode += e;
        std::mem::swap(&mut cur, &mut next);
    }
    Ok((encode, write, hash))
}

/// A raw appended VTU whose mesh part is encoded, hashed and written before its point fields
/// exist: a run prepares it on another thread while it assembles and solves, then
/// [`VtuPrepared::finish`] adds the fields (their blocks come last in the appended section; VTK
/// finds every array by its offset), fsyncs and renames. Same arrays, bit for bit, as
/// [`super::VtuWriter`] with `Appended` (tested).
pub struct VtuPrepared {
    file: AtomicFile,
    path: PathBuf,
    /// Where the point fields' blocks start, and (name, components given, values expected).
    tail_at: u64,
    fields: Vec<(String, usize, usize)>,
    /// The hash of everything before the fields' blocks.
    hasher: sha2::Sha256,
    bytes: u64,
    /// Seconds spent on the mesh part (off the caller's path): the busy time of encoding,
    /// writing and hashing (overlapped, window by window) and of the fsync after them.
    pub prepare: VtuTimes,
}

impl VtuPrepared {
    /// Encodes, hashes and writes (to a temporary of `path`) the mesh part of the file with point
    /// fields `fields` (name, components per vertex) to come; region tags as cell data when
    /// `regions`.
    pub fn new(mesh: &Mesh, path: &Path, regions: bool, fields: &[(&str, usize)]) -> Result<VtuPrepared> {
        Self::windowed(mesh, path, regions, fields, WINDOW)
    }

    /// [`Self::new`] with windows of `window` bytes (tests cross many windows on small meshes).
    pub fn windowed(mesh: &Mesh, path: &Path, regions: bool, fields: &[(&str, usize)], window: usize) -> Result<VtuPrepared> {
        let nv = mesh.cell_type.num_vertices();
        if !mesh.cells.len().is_multiple_of(nv) {
            return Err(Error::dim(format!("mesh connectivity ({} vertices per {})", nv, mesh.cell_type), mesh.num_cells() * nv, mesh.cells.len()));
        }
        if regions && mesh.cell_tags.len() != mesh.num_cells() {
            return Err(Error::dim(format!("cell field `{REGION_FIELD}` (1 per cell)"), mesh.num_cells(), mesh.cell_tags.len()));
        }
        let nverts = mesh.num_vertices();
        let mut spec = Vec::new();
        let mut heads = Vec::new();
        for &(name, n) in fields {
            if name.is_empty() || n == 0 || spec.iter().any(|(s, _, _): &(String, usize, usize)| s == name) {
                return Err(Error::invalid(format!("prepared VTU point field `{name}` ({n} components): names must be distinct and not empty, components at least 1")));
            }
            // Two components are padded with a zero z, as `point_vector` writes them.
            let written = if n == 2 { 3 } else { n };
            heads.push((array_head("Float64", Some(name), written, super::VtuEncoding::Appended), 8 + nverts * written * 8));
            spec.push((name.to_string(), n, nverts * n));
        }
        let (cell_data, points, topology) = mesh_arrays(mesh, regions);
        let pf: Vec<Entry> = heads.iter().map(|(h, size)| Entry { head: h, inline: None, size: *size }).collect();
        let cf: Vec<Entry> = cell_data.iter().map(RawArray::entry).collect();
        let cells: Vec<Entry> = topology.iter().map(RawArray::entry).collect();
        let head = xml_head(mesh, super::VtuEncoding::Appended, &pf, &cf, &points.entry(), &cells, true);
        let arrays: Vec<RawArray> = cell_data.into_iter().chain(std::iter::once(points)).chain(topology).collect();
        let tail_at = head.len() as u64 + arrays.iter().map(|a| a.block_len() as u64).sum::<u64>();
        let total = tail_at + heads.iter().map(|&(_, s)| s as u64).sum::<u64>() + APPENDED_TAIL.len() as u64;
        let file = AtomicFile::create(path, total)?;
        let mut hasher = sha2::Sha256::new();
        let (encode, write, hash) = stream(&file, &mut hasher, head.as_bytes(), &arrays, window)?;
        let t = Instant::now();
        file.sync_data()?;
        let sync = t.elapsed().as_secs_f64();
        Ok(VtuPrepared { file, path: path.to_path_buf(), tail_at, fields: spec, hasher, bytes: total, prepare: VtuTimes { encode, write, sync, hash } })
    }

    /// Writes the point fields (`values[k]` for field k, interleaved components) and the end of
    /// the file, fsyncs and renames it into place; returns its record and the time of each step.
    pub fn finish(self, values: &[&[f64]]) -> Result<(OutputFile, VtuTimes)> {
        if values.len() != self.fields.len() {
            return Err(Error::dim("prepared VTU point fields", self.fields.len(), values.len()));
        }
        let t = Instant::now();
        let mut blocks = Vec::with_capacity(values.len());
        for ((name, n, expected), v) in self.fields.iter().zip(values) {
            if v.len() != *expected {
                return Err(Error::dim(format!("point field `{name}` ({n} per point)"), *expected, v.len()));
            }
            // Two components are padded with a zero z, as `point_vector` writes them.
            blocks.push(if *n == 2 {
                le_bytes(v.len() / 2 * 3, |i| if i % 3 == 2 { 0.0 } else { v[i / 3 * 2 + i % 3] }, true)
            } else {
                le_bytes(v.len(), |i| v[i], true)
            });
        }
        let parts: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).chain(std::iter::once(APPENDED_TAIL.as_bytes())).collect();
        let encode = t.elapsed().as_secs_f64();
        let VtuPrepared { file, path, tail_at, mut hasher, bytes, .. } = self;
        let t = Instant::now();
        let (written, hash) = rayon::join(
            || -> Result<(f64, f64)> {
                file.write_parts_at(tail_at, &parts)?;
                let write = t.elapsed().as_secs_f64();
                let ts = Instant::now();
                file.publish()?;
                Ok((write, ts.elapsed().as_secs_f64()))
            },
            || {
                let t = Instant::now();
                parts.iter().for_each(|p| hasher.update(p));
                (hasher.finalize(), t.elapsed().as_secs_f64())
            },
        );
        let (write, sync) = written?;
        let (digest, hash_s) = hash;
        let sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok((OutputFile { path, bytes, sha256 }, VtuTimes { encode, write, sync, hash: hash_s }))
    }
}

/// A [`VtuPrepared`] being written on another thread. Dropping it (a run that fails before its
/// output) waits for the thread, so the temporary is removed by its guard instead of being left
/// behind when the process exits mid-write.
pub struct VtuPreparing(Option<std::thread::JoinHandle<Result<VtuPrepared>>>);

impl VtuPreparing {
    /// Starts [`VtuPrepared::new`] on its own thread (it owns its copy of the mesh). With
    /// `own_pool` its parallel loops run in a small pool of low-priority threads of their own
    /// ([`crate::io::background`]), so the run's parallel steps never wait behind them; without,
    /// on rayon's global pool (the behaviour before the pool, kept to measure against).
    pub fn spawn(mesh: Arc<Mesh>, path: PathBuf, regions: bool, fields: Vec<(&'static str, usize)>, own_pool: bool) -> VtuPreparing {
        VtuPreparing(Some(std::thread::spawn(move || {
            let _span = crate::trace::span(|| "vtu background: mesh part prepared".to_string());
            if !own_pool {
                return VtuPrepared::new(&mesh, &path, regions, &fields);
            }
            use crate::io::background::{background_threads, low_priority_pool};
            let pool = low_priority_pool("vtu", background_threads(rayon::current_num_threads()))?;
            pool.install(|| VtuPrepared::new(&mesh, &path, regions, &fields))
        })))
    }

    /// Waits for the mesh part to be written.
    pub fn join(mut self) -> Result<VtuPrepared> {
        let handle = self.0.take().ok_or_else(|| Error::invalid("the VTU preparation was already joined"))?;
        handle.join().map_err(|_| Error::invalid("the thread preparing the VTU file panicked"))?
    }
}

impl Drop for VtuPreparing {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            // The prepared file (if any) is dropped here, which removes its temporary.
            let _ = h.join();
        }
    }
}
