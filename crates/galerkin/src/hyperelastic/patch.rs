//! The patch-reduced scheme of the GPU Jacobian assembly (`kernels/hyperelastic_patch.cu`): one
//! block integrates a patch of cells that share nodes and sums their element matrices in shared
//! memory, then adds each distinct value of the patch to the CSR values once (the eleventh pass of
//! BENCHMARKS.md found the per-cell atomic scatter bound by L2 reduction sectors: each value was
//! added 2.6 times). The patches, their distinct node pairs (slots) and the CSR places of the flush
//! are found here once per mesh (set-up, reused by every Newton step).
//!
//! Patches are runs of consecutive cells of the launch order: the box mesher numbers the 6 Kuhn
//! tetrahedra of a cube one after the other, so runs of 6 are its cubes; other meshes (Gmsh files)
//! get their cells in Hilbert order ([`super::cuda::CellOrder::Hilbert`]) so that a run's cells are
//! neighbours. Any grouping is correct; only the reduction's gain depends on it.
use super::element::HyperElement;
use crate::backend::cuda::jit::KernelSource;
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;
use rayon::prelude::*;
use std::collections::HashMap;

/// The kernel source: the law, the shared prologue of `hyperelastic.cu` (and its follower-pressure
/// kernels; no `hyper_assemble` without GT or WPB), then the patch kernel.
pub const HYPERELASTIC_PATCH: KernelSource = KernelSource {
    file: "hyperelastic_patch.cu",
    source: concat!(
        "#line 1 \"hyperelastic_law.cuh\"\n",
        include_str!("../../kernels/hyperelastic_law.cuh"),
        "\n#line 1 \"hyperelastic.cu\"\n",
        include_str!("../../kernels/hyperelastic.cu"),
        "\n#line 1 \"hyperelastic_patch.cu\"\n",
        include_str!("../../kernels/hyperelastic_patch.cu")
    ),
    physics: false,
    cells: false,
};

/// Static shared memory the patch kernel may use (the limit is 48 KiB).
const SHARED_BUDGET: usize = 46 * 1024;

/// Cells per patch of [`super::cuda::Scheme::Patch`] where the environment names the scheme: the
/// box mesher's Kuhn cube (6 tetrahedra).
pub const DEFAULT_CELLS: usize = 6;

/// Threads per block: the column threads (3·⌈NLOC/2⌉ per cell) of `pc` cells, rounded to warps.
pub fn threads(el: &HyperElement, pc: usize) -> u32 {
    ((pc * 3 * el.nloc().div_ceil(2)).div_ceil(32) * 32) as u32
}

/// The patches of a mesh and what the flush needs, on the host (see the kernel's comments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patches {
    /// Patch p's cells are `cells[ptr[p]..ptr[p + 1]]`.
    pub ptr: Vec<u32>,
    pub cells: Vec<u32>,
    /// Per cell of `cells` (in that order), per upper node pair (i ≤ j, row-major): 2·slot + flip.
    pub pslot: Vec<u16>,
    /// Patch p's directed entries are `flush_ptr[p]..flush_ptr[p + 1]`: the CSR place of
    /// (row node, component 0, column node, component 0), and `row length << 16 | 2·slot + transposed`.
    pub flush_ptr: Vec<u32>,
    pub flush_pos: Vec<u32>,
    pub flush_meta: Vec<u32>,
    /// The most cells and slots of any patch (the kernel's PC and NSLOT).
    pub max_cells: usize,
    pub max_slots: usize,
}

impl Patches {
    /// Patches of `per` consecutive cells of `cell_nodes` (NLOC = `nloc` per cell), with the CSR
    /// pattern's `row_ptr` (3 components per node) and the ranks of [`crate::operator::assemble::Slots`]
    /// (in the same cell order). Fails where the 16- and 32-bit fields cannot hold the values.
    pub fn consecutive(cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], rank: &[u16], per: usize) -> Result<Patches> {
        let nc = cell_nodes.len() / nloc.max(1);
        if per == 0 || nloc == 0 || rank.len() != nc * nloc * nloc || u32::try_from(nc).is_err() {
            return Err(Error::invalid(format!("patches of {per} cells of {nloc} nodes over {nc} cells and {} ranks", rank.len())));
        }
        if *row_ptr.last().unwrap_or(&0) > u32::MAX as usize {
            return Err(Error::Unsupported(format!("{} Jacobian entries exceed the patch scheme's 32-bit places", row_ptr.last().unwrap_or(&0))));
        }
        let one = |p: usize| one_patch(p * per..(p * per + per).min(nc), cell_nodes, nloc, row_ptr, rank);
        let parts: Vec<PatchPart> = (0..nc.div_ceil(per)).into_par_iter().map(one).collect::<Result<_>>()?;
        let mut pt = Patches {
            ptr: vec![0],
            cells: (0..nc as u32).collect(),
            pslot: Vec::with_capacity(nc * nloc * (nloc + 1) / 2),
            flush_ptr: vec![0],
            flush_pos: Vec::new(),
            flush_meta: Vec::new(),
            max_cells: 0,
            max_slots: 0,
        };
        for part in parts {
            pt.max_cells = pt.max_cells.max(part.ncells);
            pt.max_slots = pt.max_slots.max(part.nslots);
            pt.ptr.push(pt.ptr[pt.ptr.len() - 1] + part.ncells as u32);
            pt.pslot.extend(part.pslot);
            pt.flush_pos.extend(part.pos);
            pt.flush_meta.extend(part.meta);
            let nf = u32::try_from(pt.flush_pos.len()).map_err(|_| Error::Unsupported("more than 2³² patch entries".into()))?;
            pt.flush_ptr.push(nf);
        }
        Ok(pt)
    }

    /// The number of patches.
    pub fn len(&self) -> usize {
        self.ptr.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values added to the CSR by the flush (9 per directed entry) against the per-cell scatter's
    /// 9·NLOC² per cell: the reduction's gain.
    pub fn adds(&self) -> usize {
        9 * self.flush_pos.len()
    }
}

/// One patch's slice of [`Patches`].
struct PatchPart {
    ncells: usize,
    nslots: usize,
    pslot: Vec<u16>,
    pos: Vec<u32>,
    meta: Vec<u32>,
}

fn one_patch(cells: std::ops::Range<usize>, cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], rank: &[u16]) -> Result<PatchPart> {
    // slot ↦ (lo, hi, rank of hi in lo's row, rank of lo in hi's row)
    let mut slots: Vec<(usize, usize, u16, u16)> = Vec::new();
    let mut index: HashMap<(usize, usize), u16> = HashMap::new();
    let mut pslot = Vec::with_capacity(cells.len() * nloc * (nloc + 1) / 2);
    for c in cells.clone() {
        let nodes = &cell_nodes[c * nloc..(c + 1) * nloc];
        let rk = |i: usize, j: usize| rank[(c * nloc + i) * nloc + j];
        for i in 0..nloc {
            for j in i..nloc {
                let flip = nodes[i] > nodes[j];
                let (lo, hi, r_lh, r_hl) = if flip { (nodes[j], nodes[i], rk(j, i), rk(i, j)) } else { (nodes[i], nodes[j], rk(i, j), rk(j, i)) };
                let s = match index.get(&(lo, hi)) {
                    Some(&s) => s,
                    None => {
                        let s = u16::try_from(slots.len()).ok().filter(|&s| s < 1 << 15).ok_or_else(|| Error::Unsupported("a patch of more than 32 768 node pairs".into()))?;
                        slots.push((lo, hi, r_lh, r_hl));
                        index.insert((lo, hi), s);
                        s
                    }
                };
                pslot.push(2 * s + u16::from(flip));
            }
        }
    }
    // Directed entries (row node, rank, 2·slot + transposed), sorted so that consecutive entries of
    // one row node lie at consecutive column ranks.
    let mut dir: Vec<(usize, u16, u32)> = Vec::with_capacity(2 * slots.len());
    for (s, &(lo, hi, r_lh, r_hl)) in slots.iter().enumerate() {
        dir.push((lo, r_lh, 2 * s as u32));
        if lo != hi {
            dir.push((hi, r_hl, 2 * s as u32 + 1));
        }
    }
    dir.sort_unstable();
    let mut pos = Vec::with_capacity(dir.len());
    let mut meta = Vec::with_capacity(dir.len());
    for (row, r, sd) in dir {
        let (start, len) = (row_ptr[3 * row], row_ptr[3 * row + 1] - row_ptr[3 * row]);
        if len >= 1 << 16 {
            return Err(Error::Unsupported(format!("a Jacobian row of {len} entries (the patch scheme packs lengths in 16 bits)")));
        }
        pos.push((start + 3 * r as usize) as u32);
        meta.push((len as u32) << 16 | sd);
    }
    Ok(PatchPart { ncells: cells.len(), nslots: slots.len(), pslot, pos, meta })
}

/// Static shared memory of the patch kernel: per cell its gather record and M, |det J|; the slots'
/// 3×3 blocks; per (cell, point of a chunk) w, g', w𝔸, F, S and the law's form.
pub fn shared_bytes(el: &HyperElement, pc: usize, nslot: usize, qb: usize) -> usize {
    let (nloc, nv) = (el.nloc(), el.space.mesh.cell_type.num_vertices());
    let cell = (8 * (3 * nv + 3 * nloc + 9) + 4 * nloc).div_ceil(8) * 8 + 80;
    let per_point = 8 * (1 + 3 * nloc + 81 + 18 + 22);
    pc * (cell + qb * per_point) + 72 * nslot
}

/// Whether the patch scheme applies to `el`: 3D simplices (the kernel's geometry is affine).
pub fn applies(el: &HyperElement) -> bool {
    el.dim == 3 && el.space.mesh.cell_type.is_simplex()
}

/// Points per chunk for patches of at most `pc` cells and `nslot` slots: as many as fit the
/// shared-memory budget, chunks balanced; an error where not even one point fits (or the column
/// threads exceed a block).
fn points_per_chunk(el: &HyperElement, pc: usize, nslot: usize) -> Result<usize> {
    let nq = el.quad.len();
    let qmax = (1..=nq).take_while(|&q| shared_bytes(el, pc, nslot, q) <= SHARED_BUDGET).last().unwrap_or(0);
    if qmax == 0 || pc == 0 || threads(el, pc) > 1024 {
        return Err(Error::Unsupported(format!(
            "a patch of {pc} cells and {nslot} node pairs does not fit one block's 48 KiB of shared memory ({} B at one point per chunk)",
            shared_bytes(el, pc, nslot, 1)
        )));
    }
    Ok(nq.div_ceil(nq.div_ceil(qmax)))
}

/// The kernel's defines for patches of at most `pc` cells and `nslot` slots: the points per chunk
/// ([`points_per_chunk`]), the column threads rounded to warps.
pub fn defines(el: &HyperElement, pc: usize, nslot: usize) -> Result<Vec<String>> {
    if !applies(el) {
        return Err(Error::Unsupported(format!("the hyperelastic patch scheme is written for 3D simplices, not {:?}", el.space.mesh.cell_type)));
    }
    let (nloc, nq) = (el.nloc(), el.quad.len());
    let qb = points_per_chunk(el, pc, nslot)?;
    let pt = threads(el, pc);
    Ok(vec![
        "DIM=3".into(),
        format!("NLOC={nloc}"),
        format!("NQ={nq}"),
        format!("NV={}", el.space.mesh.cell_type.num_vertices()),
        "AFFINE=1".into(),
        format!("LAW={}", el.law.cuda_id()),
        format!("PC={pc}"),
        format!("NSLOT={}", nslot.max(1)),
        format!("QB={qb}"),
        format!("PT={pt}"),
    ])
}

/// [`Patches`] on the device, with the kernel's threads per block.
pub struct DevicePatches {
    pub npatch: u64,
    pub threads: u32,
    /// Values the flush adds (9 per directed entry) and the kernel's static shared memory.
    pub adds: usize,
    pub shared: usize,
    pub ptr: CudaSlice<u32>,
    pub cells: CudaSlice<u32>,
    pub pslot: CudaSlice<u16>,
    pub flush_ptr: CudaSlice<u32>,
    pub flush_pos: CudaSlice<u32>,
    pub flush_meta: CudaSlice<u32>,
}

impl DevicePatches {
    /// The launch shape is the one [`defines`] compiles for `p`.
    pub fn upload(be: &CudaBackend, el: &HyperElement, p: &Patches) -> Result<DevicePatches> {
        let nz = |v: &[u32]| if v.is_empty() { vec![0] } else { v.to_vec() };
        Ok(DevicePatches {
            npatch: p.len() as u64,
            threads: threads(el, p.max_cells),
            adds: p.adds(),
            shared: shared_bytes(el, p.max_cells, p.max_slots, points_per_chunk(el, p.max_cells, p.max_slots)?),
            ptr: be.upload(&p.ptr)?,
            cells: be.upload(&nz(&p.cells))?,
            pslot: be.upload(if p.pslot.is_empty() { &[0u16][..] } else { &p.pslot })?,
            flush_ptr: be.upload(&p.flush_ptr)?,
            flush_pos: be.upload(&nz(&p.flush_pos))?,
            flush_meta: be.upload(&nz(&p.flush_meta))?,
        })
    }
}

/// Compiles the patch kernel with NVRTC only (what CI runs) for P1/P2 tetrahedra, both rules,
/// every law, Kuhn cubes and single cells as patches: (defines, PTX bytes), an error on any warning.
pub fn compile_variants(arch: &str) -> Result<Vec<(Vec<String>, usize)>> {
    use crate::backend::cuda::jit;
    use crate::mesh::{generate::box_mesh, CellType};
    use std::sync::Arc;
    let mesh = Arc::new(box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?);
    let mut out = Vec::new();
    for degree in [1, 2] {
        let space = Arc::new(crate::space::FunctionSpace::lagrange(mesh.clone(), degree, 3)?);
        let (pat, slots) = crate::operator::assemble::pattern(&space, true)?;
        let rank = slots.ok_or_else(|| Error::invalid("sparsity pattern without slots"))?.rank;
        for law in [super::Law::Svk { lambda: 1.0, mu: 1.0 }, super::Law::NeoHookean { lambda: 1.0, mu: 1.0 }, super::Law::Usyk { c: 1.0, bf: 1.0, bt: 1.0, bfs: 1.0, kappa: 1.0 }] {
            let frames = if law.anisotropic() { vec![super::frame_from_fibre([1.0, 0.0, 0.0])?; mesh.num_cells()] } else { Vec::new() };
            for rule in [None, Some(super::element::stiffness_quadrature_degree(&space))] {
                let el = HyperElement::with_degree(space.clone(), law, frames.clone(), rule)?;
                for per in [DEFAULT_CELLS, 1] {
                    let p = Patches::consecutive(&space.dofmap.cell_nodes, el.nloc(), &pat.row_ptr, &rank, per)?;
                    let d = defines(&el, p.max_cells, p.max_slots)?;
                    let c = jit::compile_ptx_with(&HYPERELASTIC_PATCH, arch, &d)?;
                    if c.log.to_ascii_lowercase().contains("warning") {
                        return Err(Error::invalid(format!("NVRTC warnings in hyperelastic_patch.cu for {d:?}:\n{}", c.log)));
                    }
                    out.push((d, c.ptx.len()));
                }
            }
        }
    }
    Ok(out)
}
