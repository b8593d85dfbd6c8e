//! The owner gather without a stage (`kernels/hyperelastic_recompute.cu`, seventeenth pass in
//! BENCHMARKS.md): a block owns a contiguous range of row nodes, sums their CSR and residual rows in
//! shared memory and stores them once; it walks the distinct cells touching its nodes, recomputes
//! each one's law at the points (once per block that owns one of its nodes: the redundancy,
//! [`Blocks::redundancy`]) and contracts only the owned nodes' row blocks (once over all blocks).
//! No stage, no global atomics, no zeroing pass. The residual alone is the tensor-core kernel's.
use super::cuda::{node_incidence, tc_applies, tc_default, Scheme};
use super::element::HyperElement;
use crate::backend::cuda::jit::KernelSource;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// The kernel source: the law, `hyperelastic.cu` (its prologue, and its tensor-core `hyper_assemble`
/// for the residual alone), `hm_point_tangent` of the moments header, the kernel.
pub const HYPERELASTIC_RECOMPUTE: KernelSource = hyper_kernel_source!("hyperelastic_recompute.cu": "hyperelastic_moments.cuh", "hyperelastic_recompute.cu");

/// The kernel's entry point (the residual alone: `hyper_assemble`).
pub const ENTRY: &str = "hyper_recompute";

/// The scheme's standard shape: 4 warps per block, 100 KiB of dynamic shared memory (2 blocks per SM).
pub const DEFAULT: Scheme = Scheme::Recompute { wpb: 4, kib: 100 };

/// Whether the scheme applies: where the tensor-core scheme does (3D simplices; its kernel is the
/// residual-alone launch), with a lane per (column node, component): 3·NLOC ≤ 32 (P1, P2).
pub fn applies(el: &HyperElement, cc: (u32, u32)) -> bool {
    tc_applies(el, cc) && 3 * el.nloc() <= 32
}

/// Per-warp scratch in doubles: g' (NQ·NLOC·3), the points' records (NQ·55), h (NQ·27).
pub fn scratch_doubles(el: &HyperElement) -> usize {
    let nq = el.quad.len();
    nq * el.nloc() * 3 + nq * 55 + nq * 27
}

/// The defines: the tensor-core scheme's standard ones, `HK_RECOMPUTE`, `HR_WPB`.
pub fn defines(el: &HyperElement, wpb: usize) -> Result<Vec<String>> {
    if !applies(el, (9, 0)) || !(1..=32).contains(&wpb) {
        return Err(Error::invalid(format!("the recomputing gather (wpb {wpb}) does not apply to {} nodes of a {:?}", el.nloc(), el.space.mesh.cell_type)));
    }
    let mut d = super::cuda::defines_for(el, tc_default(el))?;
    d.extend(["HK_RECOMPUTE".to_string(), format!("HR_WPB={wpb}")]);
    Ok(d)
}

/// The blocks' node ranges and cell lists, built once per mesh on the host.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    /// Block b owns nodes node[b]..node[b + 1].
    pub node: Vec<u32>,
    /// Block b's cells are cell[ptr[b]..ptr[b + 1]] (ascending), each with the mask of its local
    /// nodes the block owns.
    pub ptr: Vec<u32>,
    pub cell: Vec<u32>,
    pub mask: Vec<u16>,
    /// The most residual and CSR values one block holds (3 per node + its rows' values).
    pub max_vals: usize,
}

impl Blocks {
    /// Contiguous node ranges whose residual and CSR values (3 + the 3 rows' entries per node) fit
    /// `cap` doubles each (`row_ptr`: 3 rows per node), and their cells from `cell_nodes` (NLOC ≤ 16
    /// per cell, in launch order). An error where one node alone does not fit.
    pub fn build(cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], cap: usize) -> Result<Blocks> {
        if nloc == 0 || nloc > 16 {
            return Err(Error::invalid(format!("the recomputing gather's masks hold at most 16 nodes per cell, not {nloc}")));
        }
        let nnodes = (row_ptr.len() - 1) / 3;
        let ncells = cell_nodes.len() / nloc;
        if ncells > u32::MAX as usize || row_ptr.last().copied().unwrap_or(0) > u32::MAX as usize {
            return Err(Error::Unsupported(format!("the recomputing gather indexes {ncells} cells and the CSR values with 32 bits")));
        }
        let (nptr, inc) = node_incidence(cell_nodes, nnodes);
        let vals = |a: usize, b: usize| row_ptr[3 * b] - row_ptr[3 * a] + 3 * (b - a);
        let mut blocks = Blocks { node: vec![0], ptr: vec![0], ..Default::default() };
        let mut stamp = vec![u32::MAX; ncells];
        let mut at = vec![0u32; ncells];
        let mut n0 = 0;
        while n0 < nnodes {
            if vals(n0, n0 + 1) > cap {
                return Err(Error::Unsupported(format!("the recomputing gather: node {n0}'s {} values exceed a block's {cap}", vals(n0, n0 + 1))));
            }
            let mut n1 = n0 + 1;
            while n1 < nnodes && vals(n0, n1 + 1) <= cap {
                n1 += 1;
            }
            let b = (blocks.node.len() - 1) as u32;
            let start = blocks.cell.len();
            for n in n0..n1 {
                for &ce in &inc[nptr[n] as usize..nptr[n + 1] as usize] {
                    let (c, place) = (ce as usize / nloc, ce as usize % nloc);
                    if stamp[c] != b {
                        stamp[c] = b;
                        at[c] = blocks.cell.len() as u32;
                        blocks.cell.push(c as u32);
                        blocks.mask.push(0);
                    }
                    blocks.mask[at[c] as usize] |= 1 << place;
                }
            }
            // ascending cells: a block's warps walk the launch order (its locality)
            let mut list: Vec<(u32, u16)> = blocks.cell[start..].iter().copied().zip(blocks.mask[start..].iter().copied()).collect();
            list.sort_unstable();
            for (k, (c, m)) in list.into_iter().enumerate() {
                blocks.cell[start + k] = c;
                blocks.mask[start + k] = m;
            }
            blocks.max_vals = blocks.max_vals.max(vals(n0, n1));
            blocks.node.push(n1 as u32);
            blocks.ptr.push(blocks.cell.len() as u32);
            n0 = n1;
        }
        Ok(blocks)
    }

    pub fn nblocks(&self) -> usize {
        self.node.len() - 1
    }

    /// Cell evaluations per cell: how often the law runs per cell (1 would be no redundancy).
    pub fn redundancy(&self, ncells: usize) -> f64 {
        self.cell.len() as f64 / ncells.max(1) as f64
    }

    /// (owned (cell, node) pairs, cell evaluations).
    pub fn counts(&self) -> (usize, usize) {
        (self.mask.iter().map(|m| m.count_ones() as usize).sum(), self.cell.len())
    }
}

/// The scheme's model: (DRAM bytes if every cell evaluation reads its cell from DRAM, bytes if each
/// cell's data is read from DRAM once, flops), counted from the blocks. Per evaluation: vertices
/// (u32) and their coordinates, nodes (u32) and their displacements, the frame, the list entry; per
/// owned pair: its CSR ranks (u16 × NLOC) and 3 row starts; once: the values and the residual.
pub fn model(el: &HyperElement, b: &Blocks, nnz: usize) -> (f64, f64, f64) {
    let (nloc, nq) = (el.nloc() as f64, el.quad.len() as f64);
    let nv = el.space.mesh.cell_type.num_vertices() as f64;
    let (pairs, evals) = b.counts();
    let (pairs, evals) = (pairs as f64, evals as f64);
    let ncells = el.space.mesh.num_cells() as f64;
    let per_cell = 28.0 * nv + 28.0 * nloc + if el.frames.is_empty() { 0.0 } else { 72.0 };
    let per_pair = 2.0 * nloc + 12.0;
    let once = 8.0 * nnz as f64 + 8.0 * el.space.ndofs() as f64 + 8.0 * b.node.len() as f64;
    let worst = evals * (per_cell + 6.0) + pairs * per_pair + once;
    let best = ncells * per_cell + evals * 6.0 + pairs * per_pair + once;
    // flops (an FMA = 2): geometry; g' (9 FMA per point and node); F (9 per point and node); the
    // law with w𝔸 and wP (≈ 600 FMA per point, hm_point_tangent's 45 entries of ≈ 8–12 each
    // and the law's ≈ 150); per owned pair h (81 per point), K (27 per point and column node), r (9).
    let eval = 2.0 * (27.0 * nv + 60.0 + 18.0 * nq * nloc + 600.0 * nq);
    let pair = 2.0 * nq * (81.0 + 27.0 * nloc + 9.0);
    (worst, best, evals * eval + pairs * pair)
}

/// The define of the staged law records (thirty-first pass): `hyper_records` runs the law once a
/// point and stores its pulled-back record, the gather reads the records instead of recomputing.
pub const HR_RECORDS: &str = "HR_RECORDS";

/// Warps per block of `hyper_records` (the kernel's `HR_LWPB`).
const RECORDS_WPB: u32 = 4;

/// The records' chunks of 32 points (32 / NQ cells each: a warp of `hyper_records`).
fn record_chunks(el: &HyperElement) -> usize {
    let cpw = (32 / el.quad.len().max(1)).max(1);
    el.space.mesh.num_cells().div_ceil(cpw)
}

/// Doubles of the records' stage: [`record_chunks`], 54 rows of 32 each.
pub fn stage_doubles(el: &HyperElement) -> usize {
    record_chunks(el) * 54 * 32
}

/// `hyper_records` and its stage.
struct DeviceRecords {
    kernel: Kernel,
    stage: CudaSlice<f64>,
    chunks: u64,
    ncells: u64,
}

/// The blocks on the device and the kernel.
pub(super) struct DeviceRecompute {
    records: Option<DeviceRecords>,
    kernel: Kernel,
    pub blocks: Blocks,
    nblocks: u32,
    threads: u32,
    shared: u32,
    node: CudaSlice<u32>,
    ptr: CudaSlice<u32>,
    cell: CudaSlice<u32>,
    mask: CudaSlice<u16>,
}

/// The arrays the kernel reads besides the blocks' (those of `hyper_assemble`).
pub(super) struct CellArgs<'a> {
    pub cell_verts: &'a CudaSlice<u32>,
    pub coords: &'a CudaSlice<f64>,
    pub cell_nodes: &'a CudaSlice<u32>,
    pub tab: &'a CudaSlice<f64>,
    pub frames: &'a CudaSlice<f64>,
    pub has_frames: i32,
    pub prm: &'a CudaSlice<f64>,
    pub kpos: &'a CudaSlice<u16>,
}

impl DeviceRecompute {
    /// Blocks of `wpb` warps in `kib` KiB of dynamic shared memory: the warps' scratch, the rest for
    /// the owned rows; an error where that leaves no room or exceeds the device's opt-in maximum.
    /// With `records` (the module compiled with [`HR_RECORDS`]) the law runs once a point into a stage
    /// of [`stage_doubles`] (an error where NQ > 32).
    #[allow(clippy::too_many_arguments)]
    pub fn new(be: &CudaBackend, module: &std::sync::Arc<cudarc::driver::CudaModule>, el: &HyperElement, wpb: usize, kib: usize, cell_nodes: &[usize], row_ptr: &[usize], records: bool) -> Result<DeviceRecompute> {
        if records && el.quad.len() > 32 {
            return Err(Error::invalid(format!("the staged law records give a lane to each point: {} points exceed 32", el.quad.len())));
        }
        let shared = kib * 1024;
        let scratch = 8 * wpb * scratch_doubles(el);
        let optin = be.device().shared_optin;
        if shared > optin || shared <= scratch + 8 * 1024 {
            return Err(Error::invalid(format!("the recomputing gather: {kib} KiB per block for {wpb} warps' {scratch} B of scratch (at most {optin} B, 8 KiB left for rows)")));
        }
        let blocks = Blocks::build(cell_nodes, el.nloc(), row_ptr, (shared - scratch) / 8)?;
        let kernel = Kernel::from_module(module, ENTRY)?;
        let used = scratch + 8 * blocks.max_vals;
        // The limit is the function's, shared by every system compiled with the same defines (the
        // multigrid's P1 levels: one module), so it is set to the most any of them may use — the
        // device's maximum less the static `HkCell`s — never to this system's own need.
        let limit = kernel.allow_most_dynamic_shared(optin)?;
        if used > limit {
            return Err(Error::invalid(format!("the recomputing gather: {used} B of dynamic shared memory exceed the {limit} B a block may have")));
        }
        let nblocks = u32::try_from(blocks.nblocks()).map_err(|_| Error::Unsupported(format!("{} blocks in one launch", blocks.nblocks())))?;
        let up32 = |v: &[u32]| be.upload(if v.is_empty() { &[0u32][..] } else { v });
        let records = match records {
            true => Some(DeviceRecords {
                kernel: Kernel::from_module(module, "hyper_records")?,
                stage: be.alloc::<f64>(stage_doubles(el))?,
                chunks: record_chunks(el) as u64,
                ncells: el.space.mesh.num_cells() as u64,
            }),
            false => None,
        };
        Ok(DeviceRecompute {
            records,
            kernel,
            nblocks,
            threads: 32 * wpb as u32,
            shared: used as u32,
            node: up32(&blocks.node)?,
            ptr: up32(&blocks.ptr)?,
            cell: up32(&blocks.cell)?,
            mask: be.upload(if blocks.mask.is_empty() { &[0u16][..] } else { &blocks.mask })?,
            blocks,
        })
    }

    /// Residual and Jacobian values, every one stored once.
    pub fn launch(&self, be: &CudaBackend, a: &CellArgs, u: &CudaSlice<f64>, r: &mut CudaSlice<f64>, row_ptr: &CudaSlice<u32>, vals: &mut CudaSlice<f64>) -> Result<()> {
        if self.nblocks == 0 {
            return Ok(());
        }
        let cfg = LaunchConfig { grid_dim: (self.nblocks, 1, 1), block_dim: (self.threads, 1, 1), shared_mem_bytes: self.shared };
        let Some(rec) = &self.records else {
            return launch!(be, &self.kernel, cfg; &self.node, &self.ptr, &self.cell, &self.mask, a.cell_verts, a.coords, a.cell_nodes, a.tab,
                a.frames, &a.has_frames, a.prm, u, r, row_ptr, a.kpos, vals);
        };
        // The stage is scratch of this system, written here and read by the gather on the same stream.
        let ncells = rec.ncells;
        let grid = u32::try_from(rec.chunks.div_ceil(RECORDS_WPB as u64)).map_err(|_| Error::Unsupported(format!("{ncells} cells in one launch")))?;
        let rcfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (32 * RECORDS_WPB, 1, 1), shared_mem_bytes: 0 };
        let stage = &rec.stage;
        launch!(be, &rec.kernel, rcfg; &ncells, a.cell_verts, a.coords, a.cell_nodes, a.tab, a.frames, &a.has_frames, a.prm, u, stage)?;
        launch!(be, &self.kernel, cfg; &self.node, &self.ptr, &self.cell, &self.mask, a.cell_verts, a.coords, a.cell_nodes, a.tab,
            a.frames, &a.has_frames, a.prm, u, r, row_ptr, a.kpos, vals, stage)
    }
}
