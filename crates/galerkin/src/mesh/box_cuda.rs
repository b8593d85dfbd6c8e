//! A generated box mesh built on the GPU (`kernels/box_mesh.cu`), already ordered for locality, so
//! a large run's mesh phase is milliseconds of kernels instead of seconds of host keys, sort and
//! renumbering, and its coordinates and cells are on the device before any kernel needs them (the
//! backend adopts them as its resident mesh: no upload).
//!
//! The order is an equivalent of [`super::ordering::reorder_for_locality`]'s, not the same:
//! - cells: the lattice blocks along the Hilbert curve over the 2^L cube holding the lattice (the
//!   host sorts every cell by its centroid's key), each block's cells in the generator's template
//!   order. Runs of consecutive cells are blobs at every scale all the same, and nothing is sorted.
//! - vertices: numbered by first appearance in that cell order, as on the host.
//!
//! Same cells (vertex lists in the generator's local order), same coordinates to the bit, same
//! boundary facets and tags as the host generator's mesh; tested in `tests/box_cuda.rs`.
use super::generate::{block_template, lattice_boundary_mapped, lattice_tag_names};
use super::hilbert::HilbertTable;
use super::{CellType, Mesh};
use crate::backend::cuda::jit::{BOX_MESH, BLOCK_SIZE};
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, Shared};
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rayon::prelude::*;
use std::sync::Arc;

/// Sizes of the build's steps that only large boxes exceed at their defaults; tests shrink them
/// so that small boxes cross them too (many scan tiles, many download chunks).
#[derive(Clone, Copy, Debug)]
pub struct BoxTuning {
    /// Items per thread of a scan tile (`SCAN_ITEMS` in the kernel: a tile is `BLOCK_SIZE` times
    /// this), 1 to 16.
    pub scan_items: u32,
    /// Items per chunk of the copies to the host (rounded down to whole vertices), at least 1.
    pub download_chunk: usize,
}

impl Default for BoxTuning {
    fn default() -> Self {
        BoxTuning { scan_items: 8, download_chunk: DOWNLOAD_CHUNK }
    }
}

/// A box mesh generated on the device: the host copy and the device buffers the kernels read
/// (coordinates, 3 per vertex; cell vertices as `u32`).
pub struct DeviceBox {
    pub mesh: Mesh,
    pub coords: Shared<f64>,
    pub verts: Shared<u32>,
    /// Seconds of the steps: device kernels, copies to the host (wall), host boundary facets and
    /// tags (built beside the copies: not a part of the phase's sum).
    pub parts: [(&'static str, f64); 3],
}

impl DeviceBox {
    /// The mesh shared, and adopted by `be` as its resident mesh (no upload by later kernels).
    pub fn into_resident(self, be: &CudaBackend) -> Arc<Mesh> {
        let mesh = Arc::new(self.mesh);
        be.adopt_resident_mesh(&mesh, self.coords, self.verts);
        mesh
    }
}

/// The box `[lo, hi]` of `n` blocks of `cell`s (tetrahedra or hexahedra) built on the device, or
/// `None` where the host generator must build it: bad arguments (the host reports them), other cell
/// types, or a lattice so flat that the curve's cube is far larger than it (more than 64 curve
/// points per block).
pub fn box_mesh_cuda(be: &CudaBackend, n: [usize; 3], lo: [f64; 3], hi: [f64; 3], cell: CellType) -> Result<Option<DeviceBox>> {
    box_mesh_cuda_tuned(be, n, lo, hi, cell, BoxTuning::default())
}

/// [`box_mesh_cuda`] with the given step sizes (the same mesh for every tuning).
pub fn box_mesh_cuda_tuned(be: &CudaBackend, n: [usize; 3], lo: [f64; 3], hi: [f64; 3], cell: CellType, tuning: BoxTuning) -> Result<Option<DeviceBox>> {
    if !(1..=16).contains(&tuning.scan_items) || tuning.download_chunk == 0 {
        return Err(Error::invalid(format!("device box mesh: bad tuning {tuning:?} (scan items 1 to 16, chunk at least 1)")));
    }
    if !matches!(cell, CellType::Tetrahedron | CellType::Hexahedron)
        || n.contains(&0)
        || (0..3).any(|k| !(lo[k].is_finite() && hi[k].is_finite() && lo[k] < hi[k]))
        || n.iter().any(|&k| k > u32::MAX as usize / 2)
    {
        return Ok(None);
    }
    let template = block_template(cell, 3)?;
    let nv = cell.num_vertices();
    let nblocks = n.iter().try_fold(1u64, |a, &k| a.checked_mul(k as u64));
    let nverts = n.iter().try_fold(1u64, |a, &k| a.checked_mul(k as u64 + 1));
    let (Some(nblocks), Some(nverts)) = (nblocks, nverts) else { return Ok(None) };
    let npos = nblocks * (template.len() * nv) as u64;
    let level = n.iter().map(|&k| usize::BITS - (k - 1).leading_zeros()).max().unwrap_or(0) as usize;
    let npts = 1u64 << (3 * level);
    // Positions and vertex numbers are u32 (u32::MAX marks "not touched yet").
    if npos >= u32::MAX as u64 || nverts >= u32::MAX as u64 || npts > u32::MAX as u64 || npts > (64 * nblocks).max(1 << 15) {
        return Ok(None);
    }
    let t = std::time::Instant::now();
    // The default tile needs no define (the kernel's own default, as CI compiles it).
    let defines = if tuning.scan_items == 8 { Vec::new() } else { vec![format!("SCAN_ITEMS={}", tuning.scan_items)] };
    let m = be.variant_module(&BOX_MESH, &defines)?;
    let tile = u64::from(BLOCK_SIZE * tuning.scan_items);
    let k = |name| Kernel::from_module(&m, name);
    let inv = be.upload(&HilbertTable::<3>::new().inverse())?;
    let [n0, n1, n2] = n.map(|k| k as u32);
    let level_i = level as i32;
    // Blocks along the curve: flags, their scan (each block's place), then the cells.
    let mut rank = be.alloc::<u32>(npts as usize)?;
    launch!(be, &k("curve_in_box")?, be.grid(npts); &npts, &level_i, &n0, &n1, &n2, &inv, &mut rank)?;
    scan_in_place(be, &m, tile, &mut rank, npts, nblocks, "curve blocks")?;
    let tpl: Vec<u32> = template.iter().flatten().map(|&c| c as u32).collect();
    let tpl = be.upload(&tpl)?;
    let (ntpl, nv32) = (template.len() as u32, nv as u32);
    let mut cells = be.alloc::<u32>(npos as usize)?;
    launch!(be, &k("block_cells")?, be.grid(npts); &npts, &level_i, &n0, &n1, &n2, &inv, &rank, &ntpl, &nv32, &tpl, &mut cells)?;
    drop(rank);
    // Vertices by first appearance: the first position of each, marked, scanned.
    let mut first = be.alloc::<u32>(nverts as usize)?;
    launch!(be, &k("fill_u32")?, be.grid(nverts); &nverts, &u32::MAX, &mut first)?;
    launch!(be, &k("first_touch")?, be.grid(npos); &npos, &cells, &mut first)?;
    let mut mark = be.alloc::<u32>(npos as usize)?;
    launch!(be, &k("mark_first")?, be.grid(npos); &npos, &cells, &first, &mut mark)?;
    scan_in_place(be, &m, tile, &mut mark, npos, nverts, "first appearances")?;
    let mut coords = be.alloc::<f64>(3 * nverts as usize)?;
    let mut new_of = be.alloc::<u32>(nverts as usize)?;
    launch!(be, &k("renumber")?, be.grid(npos); &npos, &mut cells, &first, &mark, &n0, &n1, &n2, &lo[0], &lo[1], &lo[2], &hi[0], &hi[1], &hi[2], &mut coords, &mut new_of)?;
    drop((first, mark));
    be.synchronize()?;
    let kernels = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let new_of = be.download(&new_of)?;
    let ncells = (nblocks as usize) * template.len();
    // The boundary facets and region tags are built on the host (another thread, its loops on
    // rayon's pool) while this thread copies the coordinates and cells down: both take tenths of
    // a second at 10^7 unknowns, and neither needs the other.
    let (copied, host_side) = std::thread::scope(|s| {
        let host_side = s.spawn(|| {
            let t = std::time::Instant::now();
            let np = n.map(|k| k + 1);
            let stride = [1, np[0], np[0] * np[1]];
            let boundary = lattice_boundary_mapped(&n, &stride, 3, &template, cell, |v| new_of[v] as usize);
            let tags: Vec<i32> = (0..ncells).into_par_iter().map(|_| 1).collect();
            (boundary, tags, t.elapsed().as_secs_f64())
        });
        let copied = (|| -> Result<_> {
            let mut host_coords = vec![[0.0; 3]; nverts as usize];
            download_into(be, &coords, 3, tuning.download_chunk, &mut host_coords, |x| [x[0], x[1], x[2]])?;
            let mut host_cells = vec![0usize; npos as usize];
            download_into(be, &cells, 1, tuning.download_chunk, &mut host_cells, |v| v[0] as usize)?;
            Ok((host_coords, host_cells, t.elapsed().as_secs_f64()))
        })();
        (copied, host_side.join())
    });
    let (boundary, cell_tags, boundary_s) = host_side.unwrap_or_else(|p| std::panic::resume_unwind(p));
    let (host_coords, host_cells, copies) = copied?;
    // Valid by construction (the host generator's cells, renumbered): no validation pass.
    let mesh = Mesh { dim: 3, coords: host_coords, cell_type: cell, cells: host_cells, cell_tags, boundary, tag_names: lattice_tag_names(3) };
    // `to_host` is the copies' wall time (the boundary ran beside them); `boundary` its own time.
    let parts = [("device", kernels), ("to_host", copies), ("boundary", boundary_s)];
    Ok(Some(DeviceBox { mesh, coords: Shared::new(coords), verts: Shared::new(cells), parts }))
}

/// `dev` copied to the host as `out`, one `U` from each `group` items: in chunks of about `chunk`
/// items through two pinned buffers in turn, each chunk converted (in parallel) while the next one
/// is copied, so the copy runs at the link's pinned speed and the conversion hides behind it.
///
/// Each copy is followed by an event the host waits on before it reads that chunk. The pinned
/// buffers' own events cannot serve: the backend's context runs without cudarc's event tracking
/// (one stream per backend), so cudarc never records them and `PinnedHostSlice::as_slice` returns
/// at once. Reading through it let the host convert chunks whose copy had not finished: the 10⁷
/// run's host mesh (coordinates and cells, from which the coefficients are sampled) was partly
/// stale, nondeterministically, while every single-chunk test box passed.
fn download_into<T, U>(be: &CudaBackend, dev: &CudaSlice<T>, group: usize, chunk: usize, out: &mut [U], convert: impl Fn(&[T]) -> U + Sync) -> Result<()>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Sync,
    U: Send,
{
    let n = dev.len();
    if n != out.len() * group {
        return Err(Error::invalid(format!("device box mesh: {n} items do not make {} groups of {group}", out.len())));
    }
    if n == 0 {
        return Ok(());
    }
    let fail = |e: cudarc::driver::DriverError| crate::backend::cuda::cuda_error(format!("device-to-host copy of the box mesh failed: {e}"));
    let chunk = (chunk / group).max(1) * group;
    let ctx = be.stream.context();
    // SAFETY: plain page-locked host memory (no flags: cached, unlike write-combined memory, so
    // the host reads it at full speed); a chunk is read only after the event recorded behind its
    // copy completed, and a buffer is copied into again only after the host finished reading it.
    let alloc = |len: usize| unsafe { ctx.alloc_pinned_with_flags::<T>(len, 0) }.map_err(fail);
    let starts: Vec<usize> = (0..n).step_by(chunk).collect();
    let (full, last) = (chunk.min(n), starts.len() - 1);
    let tail = n - starts[last];
    // cudarc copies a destination's whole length: every chunk gets a buffer of exactly its size
    // (two in turn, and one for a shorter last chunk).
    let t = std::time::Instant::now();
    let mut bufs = vec![alloc(full)?];
    if last > 0 {
        bufs.push(alloc(full)?);
    }
    if tail != full {
        bufs.push(alloc(tail)?);
    }
    crate::trace::note(&format!("box download: {} page-locked buffer(s) of {} items", bufs.len(), full), t.elapsed().as_secs_f64());
    let buf_of = |i: usize| if i == last && tail != full { bufs.len() - 1 } else { i % 2 };
    let at: Vec<usize> = (0..starts.len()).map(buf_of).collect();
    // Queues chunk i's copy and returns the event that marks its end.
    let copy = |bufs: &mut Vec<cudarc::driver::PinnedHostSlice<T>>, i: usize| -> Result<cudarc::driver::CudaEvent> {
        let a = starts[i];
        let b = (a + chunk).min(n);
        be.stream.memcpy_dtoh(&dev.slice(a..b), &mut bufs[at[i]]).map_err(fail)?;
        be.stream.record_event(None).map_err(fail)
    };
    let mut run = || -> Result<()> {
        let mut done = copy(&mut bufs, 0)?;
        for (i, &a) in starts.iter().enumerate() {
            let next = if i + 1 < starts.len() { Some(copy(&mut bufs, i + 1)?) } else { None };
            done.synchronize().map_err(fail)?;
            let b = (a + chunk).min(n);
            let src = bufs[at[i]].as_slice().map_err(fail)?;
            if src.len() != b - a {
                return Err(Error::invalid(format!("device box mesh: chunk {i} holds {} items, not {}", src.len(), b - a)));
            }
            out[a / group..b / group].par_iter_mut().zip(src.par_chunks(group)).for_each(|(o, x)| *o = convert(x));
            if let Some(e) = next {
                done = e;
            }
        }
        Ok(())
    };
    let t = std::time::Instant::now();
    let result = run();
    crate::trace::note(&format!("box download: {} chunk(s) copied and converted", starts.len()), t.elapsed().as_secs_f64());
    if result.is_err() {
        // No copy may still be writing into a pinned buffer when it is freed.
        let _ = be.stream.synchronize();
    }
    let t = std::time::Instant::now();
    drop(bufs);
    crate::trace::note("box download: page-locked buffers freed", t.elapsed().as_secs_f64());
    result
}

/// Items per chunk of [`download_into`] (8 MB of `u32`, 16 MB of `f64`). Each call allocates
/// its page-locked buffers (two chunks and a shorter last one) and frees them at the end, and the
/// driver's page locking costs in proportion to their size: chunks of 2^23 items (up to 192 MB
/// locked for the coordinates) made that a visible part of the copies.
const DOWNLOAD_CHUNK: usize = 1 << 21;

/// The chunk of the copies to the host: [`DOWNLOAD_CHUNK`], or `[mesh] download_chunk` items
/// (for measuring; at least 1).
fn download_chunk(m: &crate::problem::config::MeshConfig) -> Result<usize> {
    match m.download_chunk {
        None => Ok(DOWNLOAD_CHUNK),
        Some(0) => Err(Error::config("mesh.download_chunk", "must be a positive number of items, got 0")),
        Some(c) => Ok(c),
    }
}

/// `data[0..n)` replaced by its exclusive scan; the total must be `expect` (what the caller
/// counted), or the build failed.
fn scan_in_place(be: &CudaBackend, m: &Arc<cudarc::driver::CudaModule>, tile: u64, data: &mut CudaSlice<u32>, n: u64, expect: u64, what: &str) -> Result<()> {
    let nt = n.div_ceil(tile);
    if nt > i32::MAX as u64 {
        return Err(Error::invalid(format!("device box mesh: {what}: {nt} scan tiles exceed the grid")));
    }
    let tiles = LaunchConfig { grid_dim: (nt as u32, 1, 1), block_dim: (BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 };
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 };
    let mut sums = be.alloc::<u32>(nt as usize + 1)?;
    launch!(be, &Kernel::from_module(m, "scan_tile_sums")?, tiles; &n, &*data, &mut sums)?;
    launch!(be, &Kernel::from_module(m, "scan_sums")?, one; &nt, &mut sums)?;
    launch!(be, &Kernel::from_module(m, "scan_tiles")?, tiles; &n, data, &sums)?;
    let total = be.download(&sums)?[nt as usize];
    if u64::from(total) != expect {
        return Err(Error::invalid(format!("device box mesh: {what} counted {total}, expected {expect}")));
    }
    Ok(())
}

/// Whether runs on the GPU build their box on the device: the default; `GALERKIN_DEVICE_BOX=off`
/// (or `0`, `false`) builds it on the host instead (generation, then the host's locality
/// reordering). Until the download waited for its copies (see [`download_into`]) the 10⁷ run
/// differed from the host mesh's (L2 3.65e-5 against 3.5463e-5, 671 CG iterations against 502).
pub fn enabled() -> bool {
    !matches!(std::env::var("GALERKIN_DEVICE_BOX").as_deref(), Ok("off" | "0" | "false"))
}

/// The `[mesh]` table's box built on the device, where [`enabled`] and it asks for a generated box
/// of tetrahedra or hexahedra reordered for locality (the default) and its keys are well formed;
/// `None` leaves it (and the reporting of bad keys) to the host generator.
pub fn from_config(be: &CudaBackend, m: &crate::problem::config::MeshConfig) -> Result<Option<DeviceBox>> {
    use crate::problem::config::Generator;
    if !enabled() || m.file.is_some() || m.generator != Some(Generator::Box) || m.grading.is_some() || !m.reorder.unwrap_or(true) {
        return Ok(None);
    }
    let corner = |v: &Option<Vec<f64>>, default: f64| match v {
        None => Some([default; 3]),
        Some(v) if v.len() == 3 => Some([v[0], v[1], v[2]]),
        Some(_) => None,
    };
    let (Some(n), Some(lo), Some(hi)) = (m.n.as_deref(), corner(&m.lower, 0.0), corner(&m.upper, 1.0)) else { return Ok(None) };
    let [n0, n1, n2] = n else { return Ok(None) };
    let tuning = BoxTuning { download_chunk: download_chunk(m)?, ..BoxTuning::default() };
    box_mesh_cuda_tuned(be, [*n0, *n1, *n2], lo, hi, m.cell.unwrap_or(CellType::Tetrahedron), tuning)
}
