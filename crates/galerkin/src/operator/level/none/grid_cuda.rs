//! The lattice operator of [`super::grid`] on the GPU (`kernels/grid.cu`): the material bytes, the
//! element-matrix table and the two small index tables on the device. Two applies, chosen by size
//! as measured on the H100 (BENCHMARKS.md, issue 12's fourth and sixth rounds): below
//! [`MARCH_MIN_NODES`] a thread per node in tiles of 32 × 4 × 2 nodes (`grid_apply*`; CG's p·q then
//! a reduction of its own), from there a z-marching one (`grid_march*`: a block per tile of (x, y)
//! columns and chunk of planes, a ring of four planes in shared memory with one barrier per plane,
//! the next plane and node codes prefetched, boundary nodes on one side of the box on that side's
//! stencil rather than the cell gather — [`GridData::march_codes`]) that sums CG's p·q in the same
//! pass ([`LevelOperator::apply_dot`]) and runs CG with the lattice's own update and direction
//! kernels (D⁻¹ per node code: `grid_cuda/pcg.rs`, 10 vector passes per iteration). `GALERKIN_GRID_KERNEL=tile|march`
//! overrides, `GALERKIN_GRID_ZK` sets the marching chunk, `GALERKIN_GRID_PCG=ring|fused|off` the loop.
use super::grid::{index_tables, GridData};
use crate::backend::cuda::jit::GRID;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector};
use crate::backend::{Backend, PcgWork};
use crate::operator::level::{CellMaterials, LevelInput, LevelOperator};
use crate::mesh::generate::block_template;
use crate::mesh::CellType;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, DeviceRepr};

mod pcg;
use pcg::code_nodes;
pub use pcg::{fused_iterations, fused_pcg_enabled, lattice_pcg_iterations, pcg_loop, set_fused_pcg, set_pcg_loop, PcgLoop};

/// `struct Lattice` of grid.cu, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
struct DeviceLattice {
    nx: u64,
    ny: u64,
    nz: u64,
    px: u64,
    py: u64,
}

// SAFETY: #[repr(C)] of five u64, matching `struct Lattice` in grid.cu.
unsafe impl DeviceRepr for DeviceLattice {}

/// Materials whose uniform stencils travel as kernel parameters (`STENCIL_MATS` in grid.cu).
const STENCIL_MATS: usize = 4;

/// `struct Stencils` of grid.cu: the first [`STENCIL_MATS`] materials' stencils (zeros beyond).
#[repr(C)]
#[derive(Clone, Copy)]
struct DeviceStencils {
    w: [f64; STENCIL_MATS * 27],
}

// SAFETY: #[repr(C)] array of f64, matching `struct Stencils` in grid.cu.
unsafe impl DeviceRepr for DeviceStencils {}

fn param_stencils(host: &GridData) -> DeviceStencils {
    let mut w = [0.0; STENCIL_MATS * 27];
    let k = host.stencils.len().min(w.len());
    w[..k].copy_from_slice(&host.stencils[..k]);
    DeviceStencils { w }
}

/// The defines of the variant for a lattice whose block holds the cells `template` (lists of block
/// corners): sizes and both index tables, compiled in.
fn defines(template: &[Vec<usize>]) -> Vec<String> {
    let (per, nv) = (template.len(), template.first().map_or(0, Vec::len));
    let (corner, tpl) = index_tables(template);
    let list = |v: Vec<i32>| format!("{{{}}}", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
    vec![format!("PER={per}"), format!("NV={nv}"), format!("GRID_CORNER={}", list(corner)), format!("GRID_TPL={}", list(tpl))]
}

/// Most table bytes staged in shared memory (the default dynamic limit of a block).
const SHARED_TABLE_BYTES: usize = 48 * 1024;

pub struct DeviceGrid {
    host: GridData,
    apply_k: Kernel,
    apply_masked_k: Kernel,
    diagonal_k: Kernel,
    lattice: DeviceLattice,
    material: CudaSlice<u8>,
    /// The plain operator's node codes ([`DeviceGrid::plain_codes`]).
    node_material: CudaSlice<u8>,
    table: CudaSlice<f64>,
    /// Which nodes are free (host) and the node codes of the masked operator, once constrained,
    /// with one node per code ([`code_nodes`]).
    masked: Option<(Vec<bool>, CudaSlice<u8>, Vec<i64>)>,
    /// One node per code of the plain operator.
    plain_nodes: Vec<i64>,
    /// The lattice's Jacobi-PCG kernels (`grid_pcg_*`: fused march and masked, update, flush,
    /// check, pick, direction).
    pcg: [Kernel; 7],
    march: [Kernel; 4],
    /// Planes per z-chunk of a marching block; 0: the tile kernels.
    zk: u32,
    /// Per-block sums and the arrival counter of the fused x·y, grown to the launch's blocks.
    dot: std::sync::Mutex<Option<(CudaSlice<f64>, CudaSlice<u32>)>>,
}

/// Columns per marching block along x and y (`MARCH_X`, `MARCH_Y` in grid.cu).
const MARCH: [u32; 2] = [32, 8];

/// Which apply kernel: `None` the default by size (see the module doc), `Some(0)` the tiles,
/// `Some(zk)` marching by chunks of `zk` planes.
pub type KernelChoice = Option<u32>;

/// Lattices of at least this many nodes take the marching apply by default: on the H100, since the
/// march has side stencils and one barrier per plane (issue 12's sixth round), it beats the tiles
/// at 10⁶ nodes (0.0669 against 0.0768 ms per PCG iteration) and 2·10⁶ (0.1146 against 0.1356);
/// at 10⁷ it takes 0.439 ms (the tiles 0.587 in the fourth round).
pub const MARCH_MIN_NODES: usize = 1_000_000;

pub fn fuses_dot(points: [usize; 3]) -> bool {
    planes_per_chunk(points, None) > 0
}

/// Planes per z-chunk of the marching kernel (0: the tiles) for a lattice of `points` nodes per
/// axis: long chunks (each re-reads two halo planes) as long as there are enough blocks to fill
/// the GPU (≈ 2048).
fn planes_per_chunk(points: [usize; 3], choice: KernelChoice) -> u32 {
    if let Some(zk) = choice {
        return zk;
    }
    let march = match std::env::var("GALERKIN_GRID_KERNEL").as_deref() {
        Ok("march") => true,
        Ok("tile") => false,
        _ => points.iter().product::<usize>() >= MARCH_MIN_NODES,
    };
    if !march {
        return 0;
    }
    if let Some(zk) = std::env::var("GALERKIN_GRID_ZK").ok().and_then(|v| v.parse::<u32>().ok()).filter(|&z| z > 0) {
        return zk;
    }
    let tiles = points[0].div_ceil(MARCH[0] as usize) * points[1].div_ceil(MARCH[1] as usize);
    let chunks = 2048usize.div_ceil(tiles).max(1);
    points[2].div_ceil(chunks).clamp(4, 64) as u32
}

impl DeviceGrid {
    /// The lattice operator of `input` on the GPU, or `None` where [`GridData::try_new`] declines.
    pub fn try_build(be: &CudaBackend, input: &LevelInput) -> Result<Option<DeviceGrid>> {
        let Some(host) = GridData::try_new(input)? else { return Ok(None) };
        Self::from_data(be, host).map(Some)
    }

    /// The lattice operator of `host` on the GPU (built from a mesh or straight from a box).
    pub fn from_data(be: &CudaBackend, host: GridData) -> Result<DeviceGrid> {
        Self::from_data_with(be, host, None)
    }

    /// [`DeviceGrid::from_data`] with the apply kernel chosen (tests run both).
    pub fn from_data_with(be: &CudaBackend, host: GridData, choice: KernelChoice) -> Result<DeviceGrid> {
        let module = be.variant_module(&GRID, &defines(&host.lattice.template))?;
        let [nx, ny, nz] = host.lattice.n.map(|k| k as u64);
        let lattice = DeviceLattice { nx, ny, nz, px: nx + 1, py: ny + 1 };
        let march = ["grid_march", "grid_march_masked", "grid_march_dot", "grid_march_masked_dot"].map(|k| Kernel::from_module(&module, k));
        let [m0, m1, m2, m3] = march;
        let pcg = ["grid_pcg_march", "grid_pcg_march_masked", "grid_pcg_update", "grid_pcg_flush", "grid_pcg_check", "grid_pcg_pick", "grid_pcg_direction"]
            .map(|k| Kernel::from_module(&module, k));
        let [k0, k1, k2, k3, k4, k5, k6] = pcg;
        let zk = planes_per_chunk(host.lattice.points(), choice);
        let codes = Self::codes_for(&host, zk);
        let mut g = DeviceGrid {
            pcg: [k0?, k1?, k2?, k3?, k4?, k5?, k6?],
            plain_nodes: Vec::new(),
            march: [m0?, m1?, m2?, m3?],
            zk,
            dot: std::sync::Mutex::new(None),
            apply_k: Kernel::from_module(&module, "grid_apply")?,
            apply_masked_k: Kernel::from_module(&module, "grid_apply_masked")?,
            diagonal_k: Kernel::from_module(&module, "grid_diagonal")?,
            lattice,
            material: be.upload(&host.material)?,
            node_material: be.upload(&codes)?,
            table: be.upload(&[host.table.as_slice(), host.stencils.as_slice()].concat())?,
            masked: None,
            host,
        };
        g.plain_nodes = code_nodes(&codes);
        Ok(g)
    }

    /// The node codes of the plain operator: [`GridData::march_codes`] (side stencils on the
    /// boundary) for the marching kernels, `node_material` for the tiles.
    fn plain_codes(&self) -> Vec<u8> {
        Self::codes_for(&self.host, self.zk)
    }

    fn codes_for(host: &GridData, zk: u32) -> Vec<u8> {
        if zk > 0 { host.march_codes() } else { host.node_material.clone() }
    }

    /// Uploads the plain codes (after the materials changed) and the masked ones derived from them.
    fn refresh_codes(&mut self, be: &CudaBackend) -> Result<()> {
        let codes = self.plain_codes();
        self.node_material = be.upload(&codes)?;
        self.plain_nodes = code_nodes(&codes);
        self.refresh_masked(be)
    }
}

impl DeviceGrid {
    /// Launch shape: a block per tile of [`TILE`] nodes (x, y, z; grid x: the (y, z) tiles, grid y:
    /// the x-chunks), and the table doubles staged in shared memory (0: none).
    fn config(&self) -> Result<(cudarc::driver::LaunchConfig, u64)> {
        let [px, py, pz] = self.host.lattice.points();
        let [tx, ty, tz] = TILE;
        let tiles = py.div_ceil(ty as usize) * pz.div_ceil(tz as usize);
        let tiles = u32::try_from(tiles).map_err(|_| Error::Unsupported(format!("a lattice of {py}×{pz} lines of nodes exceeds the launch grid")))?;
        let chunks = px.div_ceil(tx as usize) as u32;
        if chunks > 65535 {
            return Err(Error::Unsupported(format!("a lattice of {px} nodes per line exceeds the launch grid")));
        }
        let shared = if self.table.len() * 8 <= SHARED_TABLE_BYTES { self.table.len() } else { 0 };
        let cfg = cudarc::driver::LaunchConfig { grid_dim: (tiles, chunks, 1), block_dim: (tx, ty, tz), shared_mem_bytes: (shared * 8) as u32 };
        Ok((cfg, shared as u64))
    }
}

impl DeviceGrid {
    /// `y = A x` (`grid_apply`), or with `mask` the masked operator (`grid_apply_masked`, with the
    /// node codes of [`LevelOperator::set_dirichlet`]).
    fn launch_apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector, mask: Option<&CudaVector>) -> Result<()> {
        let n = self.host.ndofs();
        be.check("lattice operator apply", n, &[x, y])?;
        if !be.owns(&self.table) {
            return Err(Error::invalid("a lattice operator used with a CUDA backend other than the one that built it"));
        }
        self.launch_kernel(be, x, y, mask, None)
    }

    /// The apply of this operator's kernel (tiles, or marching with x·y into `total[0]` when given).
    fn launch_kernel(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector, mask: Option<&CudaVector>, total: Option<&mut CudaVector>) -> Result<()> {
        if self.zk > 0 {
            return self.launch_march(be, x, y, mask, total);
        }
        if total.is_some() {
            return Err(Error::invalid("the lattice's tile apply does not fuse x·y"));
        }
        let n = self.host.ndofs();
        let (cfg, shared) = self.config()?;
        let stencil_at = self.host.table.len() as u64;
        let p = param_stencils(&self.host);
        let (l, mat, tab) = (&self.lattice, &self.material, &self.table);
        let codes = self.codes(be, n, mask)?;
        match mask {
            None => launch!(be, &self.apply_k, cfg; l, mat, tab, &shared, &stencil_at, &p, codes, &x.data, &mut y.data),
            Some(m) => launch!(be, &self.apply_masked_k, cfg; l, mat, tab, &shared, &stencil_at, &p, codes, &x.data, &mut y.data, &m.data),
        }
    }

    /// The node codes of the plain or (with `mask`) the masked operator.
    fn codes(&self, be: &CudaBackend, n: usize, mask: Option<&CudaVector>) -> Result<&CudaSlice<u8>> {
        match (mask, &self.masked) {
            (None, _) => Ok(&self.node_material),
            (Some(mask), Some((_, codes, _))) => {
                be.check("lattice operator masked apply", n, &[mask])?;
                Ok(codes)
            }
            (Some(_), None) => Err(Error::invalid("masked lattice apply before its Dirichlet mask was set")),
        }
    }

    /// The x·y scratch with room for `blocks` block sums (the counter zeroed once, at allocation;
    /// the kernel's last block resets it).
    fn dot_scratch(&self, be: &CudaBackend, blocks: usize) -> Result<std::sync::MutexGuard<'_, Option<(CudaSlice<f64>, CudaSlice<u32>)>>> {
        let mut g = self.dot.lock().map_err(|_| Error::invalid("lattice x·y scratch poisoned"))?;
        if g.as_ref().is_none_or(|(s, _)| s.len() < blocks) {
            *g = Some((be.upload(&vec![0.0; blocks])?, be.upload(&[0u32])?));
        }
        Ok(g)
    }

    /// The z-marching apply (`grid_march*`), masked with `mask`, with x·y into `total[0]` when given.
    fn launch_march(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector, mask: Option<&CudaVector>, total: Option<&mut CudaVector>) -> Result<()> {
        let n = self.host.ndofs();
        let zk = self.zk;
        let (cfg, blocks) = self.march_config()?;
        let stencil_at = self.host.table.len() as u64;
        let p = param_stencils(&self.host);
        let codes = self.codes(be, n, mask)?;
        let (l, mat, tab) = (&self.lattice, &self.material, &self.table);
        match (mask, total) {
            (None, None) => launch!(be, &self.march[0], cfg; l, mat, tab, &stencil_at, &p, codes, &x.data, &mut y.data, &zk),
            (Some(m), None) => launch!(be, &self.march[1], cfg; l, mat, tab, &stencil_at, &p, codes, &x.data, &mut y.data, &m.data, &zk),
            (m, Some(total)) => {
                let mut guard = self.dot_scratch(be, blocks)?;
                let (sums, counter) = guard.as_mut().ok_or_else(|| Error::invalid("lattice x·y scratch missing"))?;
                match m {
                    None => launch!(be, &self.march[2], cfg; l, mat, tab, &stencil_at, &p, codes, &x.data, &mut y.data, &zk, sums, counter, &mut total.data),
                    Some(m) => launch!(be, &self.march[3], cfg; l, mat, tab, &stencil_at, &p, codes, &x.data, &mut y.data, &m.data, &zk, sums, counter, &mut total.data),
                }
            }
        }
    }

    /// Launch shape of the marching kernels: a block per tile of (x, y) columns and chunk of
    /// `zk` planes; also the number of blocks.
    fn march_config(&self) -> Result<(cudarc::driver::LaunchConfig, usize)> {
        let [px, py, pz] = self.host.lattice.points();
        let dims = [px.div_ceil(MARCH[0] as usize), py.div_ceil(MARCH[1] as usize), pz.div_ceil(self.zk.max(1) as usize)];
        if dims[1] > 65535 || dims[2] > 65535 || dims[0] > u32::MAX as usize {
            return Err(Error::Unsupported(format!("a lattice of {px}×{py}×{pz} nodes exceeds the launch grid")));
        }
        let cfg = cudarc::driver::LaunchConfig { grid_dim: (dims[0] as u32, dims[1] as u32, dims[2] as u32), block_dim: (MARCH[0], MARCH[1], 1), shared_mem_bytes: 0 };
        Ok((cfg, dims.iter().product()))
    }

    /// The masked operator's node codes for the free nodes `free`, on the device.
    fn set_masked(&mut self, be: &CudaBackend, free: Vec<bool>) -> Result<()> {
        let codes = self.host.masked_codes(&self.plain_codes(), &free);
        let nodes = code_nodes(&codes);
        self.masked = Some((free, be.upload(&codes)?, nodes));
        Ok(())
    }

    /// Recomputes the masked operator's node codes after the materials changed.
    fn refresh_masked(&mut self, be: &CudaBackend) -> Result<()> {
        if let Some((free, _, _)) = self.masked.take() {
            self.set_masked(be, free)?;
        }
        Ok(())
    }
}

/// Nodes per block of the lattice kernels along x, y, z: 32 × 4 × 2 = 256 threads, a warp per
/// x-chunk of a line (coalesced), and the block's 15- or 27-point neighbourhoods overlapping in L1.
const TILE: [u32; 3] = [32, 4, 2];

impl LevelOperator<CudaBackend> for DeviceGrid {
    fn apply(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        self.launch_apply(be, x, y, None)
    }
    fn set_dirichlet(&mut self, be: &CudaBackend, free: &[f64]) -> Result<()> {
        let free: Vec<bool> = free.iter().map(|&f| f == 1.0).collect();
        self.set_masked(be, free)
    }
    fn apply_masked(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector, mask: &CudaVector) -> Result<bool> {
        if self.masked.is_none() {
            return Ok(false);
        }
        self.launch_apply(be, x, y, Some(mask))?;
        Ok(true)
    }
    fn apply_dot(&self, be: &CudaBackend, x: &CudaVector, y: &mut CudaVector, mask: Option<&CudaVector>, partials: &mut CudaVector) -> Result<Option<usize>> {
        if self.zk == 0 || mask.is_some() && self.masked.is_none() || partials.is_empty() {
            return Ok(None);
        }
        be.check("lattice operator apply", self.host.ndofs(), &[x, y])?;
        if !be.owns(&self.table) {
            return Err(Error::invalid("a lattice operator used with a CUDA backend other than the one that built it"));
        }
        self.launch_kernel(be, x, y, mask, Some(partials)).map(|_| Some(1))
    }
    fn pcg_fused(&self, be: &CudaBackend, x: &mut CudaVector, w: &mut PcgWork<'_, CudaBackend>, k: usize, mask: Option<&CudaVector>) -> Result<bool> {
        self.fused_pcg(be, x, w, k, mask)
    }
    fn node_blocks(&self, be: &CudaBackend) -> Result<CudaVector> {
        let n = self.host.ndofs();
        let mut d = be.zeros(n)?;
        let (cfg, shared) = self.config()?;
        launch!(be, &self.diagonal_k, cfg; &self.lattice, &self.material, &self.table, &shared, &mut d.data)?;
        Ok(d)
    }
    fn storage_bytes(&self) -> usize {
        self.host.storage_bytes()
    }
    fn includes_boundary(&self) -> bool {
        false
    }
    fn update(&mut self, be: &CudaBackend, input: &LevelInput) -> Result<()> {
        let host = GridData::try_new(input)?.ok_or_else(|| Error::invalid("the lattice operator's update no longer has per-cell coefficients on the lattice"))?;
        self.material = be.upload(&host.material)?;
        self.table = be.upload(&[host.table.as_slice(), host.stencils.as_slice()].concat())?;
        self.host = host;
        self.refresh_codes(be)
    }
    fn set_materials(&mut self, be: &CudaBackend, m: &CellMaterials) -> Result<bool> {
        if !self.host.relabel(m) {
            return Ok(false);
        }
        self.material = be.upload(&self.host.material)?;
        self.refresh_codes(be)?;
        Ok(true)
    }
}

/// The defines of the lattice of `cell` (box meshes of Kuhn tetrahedra or of hexahedra).
pub fn variant_defines(cell: CellType) -> Result<Vec<String>> {
    Ok(defines(&block_template(cell, 3)?))
}

/// Compiles `grid.cu` for both lattices (Kuhn tetrahedra, hexahedra) with NVRTC only.
pub fn compile_variants(arch: &str) -> Result<Vec<(String, usize)>> {
    let variants = [CellType::Tetrahedron, CellType::Hexahedron].into_iter().map(variant_defines).collect::<Result<Vec<_>>>()?;
    crate::operator::level::partial::cuda::compile_checked(&GRID, arch, variants)
}
