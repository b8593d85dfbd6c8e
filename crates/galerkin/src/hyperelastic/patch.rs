//! The patch-reduced scheme of the GPU Jacobian assembly (`kernels/hyperelastic_patch.cu`): one
//! block integrates a patch of cells that share nodes and sums their element matrices in shared
//! memory, then adds each distinct value of the patch to the CSR values once (the eleventh pass of
//! BENCHMARKS.md found the per-cell atomic scatter bound by L2 reduction sectors: each value was
//! added 2.6 times). The patches, their distinct node pairs (slots) and the CSR places of the flush
//! are found here once per mesh (set-up, reused by every Newton step).
//!
//! Patches are runs of consecutive cells of the launch order ([`Grouping::Runs`]: the box mesher
//! numbers the 6 Kuhn tetrahedra of a cube one after the other, but `run` renumbers the cells for
//! locality, after which runs of 6 are no longer cubes), or the cells grouped by their longest edge
//! and these groups merged greedily with their neighbours ([`Grouping::Edges`]: the 6 tetrahedra of
//! a Kuhn cube share its diagonal, so this finds the cubes under any numbering, then pairs of cubes
//! and 2×2×2 cubes; on other meshes, the cells around an edge). A patch larger than the cells one
//! block integrates at once is integrated in batches; the rows that only one patch's cells touch are
//! stored plainly by its flush ([`OWNED`]). Any grouping is correct; only the reduction's gain
//! depends on it.
use super::element::HyperElement;
use crate::backend::cuda::jit::KernelSource;
use crate::backend::cuda::CudaBackend;
use crate::{Error, Result};
use cudarc::driver::CudaSlice;
use rayon::prelude::*;
use std::collections::HashMap;

/// The kernel source: the law, the shared prologue of `hyperelastic.cu` (and its follower-pressure
/// kernels; no `hyper_assemble` without GT or WPB), then the patch kernel.
pub const HYPERELASTIC_PATCH: KernelSource = hyper_kernel_source!("hyperelastic_patch.cu": "hyperelastic_patch.cu");

/// Shared memory the patch kernel's point buffers and slots may use together where they fit (beyond
/// it: one point per chunk, the slots in up to [`MAX_BLOCK_SHARED`]).
const SHARED_BUDGET: usize = 46 * 1024;

/// Cells per patch of [`super::cuda::Scheme::Patch`] where the environment names the scheme: the
/// box mesher's Kuhn cube (6 tetrahedra).
pub const DEFAULT_CELLS: usize = 6;

/// The patch scheme `GALERKIN_HYPER_SCHEME=patch` selects: runs of [`DEFAULT_CELLS`] cells.
pub const DEFAULT_SCHEME: super::cuda::Scheme = super::cuda::Scheme::Patch { cells: DEFAULT_CELLS, batch: 0, group: Grouping::Runs };

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
    /// (row node, component 0, column node, component 0), and `row length << 16 | OWNED | 2·slot + transposed`
    /// ([`OWNED`]: the row is this patch's alone, stored plainly).
    pub flush_ptr: Vec<u32>,
    pub flush_pos: Vec<u32>,
    pub flush_meta: Vec<u32>,
    /// The most cells and slots of any patch (the kernel's PC and NSLOT).
    pub max_cells: usize,
    pub max_slots: usize,
}

/// How [`Patches`] groups the cells (see [`Patches::consecutive`] and [`Patches::by_edges`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// Runs of consecutive cells of the launch order (the twelfth pass).
    Runs,
    /// The cells grouped by their longest edge (a Kuhn cube's 6 tetrahedra share its diagonal),
    /// then neighbouring groups merged greedily (most shared vertices, then the nearest) up to the
    /// patch size: cubes, pairs of cubes, 2×2×2 cubes under any numbering of the box mesh.
    Edges,
}

/// The mesh as [`Patches`] reads it: per cell its `nloc` nodes and `nv` vertices, the vertices'
/// coordinates (x, y, z flat), the CSR pattern's `row_ptr` (3 components per node) and the ranks
/// of [`crate::operator::assemble::Slots`] — all in the launch order of the cells.
pub struct PatchMesh<'a> {
    pub cell_nodes: &'a [usize],
    pub nloc: usize,
    pub cell_verts: &'a [usize],
    pub nv: usize,
    pub coords: &'a [f64],
    pub row_ptr: &'a [usize],
    pub rank: &'a [u16],
}

impl Patches {
    /// Patches of `per` consecutive cells of `cell_nodes` (NLOC = `nloc` per cell), with the CSR
    /// pattern's `row_ptr` (3 components per node) and the ranks of [`crate::operator::assemble::Slots`]
    /// (in the same cell order). Fails where the 16- and 32-bit fields cannot hold the values.
    pub fn consecutive(cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], rank: &[u16], per: usize) -> Result<Patches> {
        let nc = cell_nodes.len() / nloc.max(1);
        let lists: Vec<Vec<usize>> = (0..nc.div_ceil(per.max(1))).map(|p| (p * per..(p * per + per).min(nc)).collect()).collect();
        Self::from_lists(&lists, cell_nodes, nloc, row_ptr, rank, per)
    }

    /// Patches of at most `per` cells grouped by [`Grouping`].
    pub fn grouped(m: &PatchMesh, per: usize, group: Grouping) -> Result<Patches> {
        match group {
            Grouping::Runs => Self::consecutive(m.cell_nodes, m.nloc, m.row_ptr, m.rank, per),
            Grouping::Edges => Self::by_edges(m, per),
        }
    }

    /// The patches of `space`'s cells in the mesh's order (its sparsity pattern built here): what
    /// the kernels are compiled for where no mesh is given (CI's NVRTC check), so that their slot
    /// count ([`Patches::max_slots`], the kernels' NSLOT) comes from the builder, not a constant.
    pub fn of_space(space: &crate::space::FunctionSpace, per: usize, group: Grouping) -> Result<Patches> {
        let mesh = &space.mesh;
        let coords: Vec<f64> = mesh.coords.iter().flat_map(|x| *x).collect();
        let (pat, slots) = crate::operator::assemble::pattern(space, true)?;
        let rank = slots.ok_or_else(|| Error::invalid("sparsity pattern without slots"))?.rank;
        let nv = mesh.cell_type.num_vertices();
        let m = PatchMesh { cell_nodes: &space.dofmap.cell_nodes, nloc: space.dofmap.nodes_per_cell, cell_verts: &mesh.cells, nv, coords: &coords, row_ptr: &pat.row_ptr, rank: &rank };
        Self::grouped(&m, per, group)
    }

    /// Patches of at most `per` cells made of whole longest-edge groups ([`Grouping::Edges`]).
    pub fn by_edges(m: &PatchMesh, per: usize) -> Result<Patches> {
        let lists = edge_patches(m, per)?;
        Self::from_lists(&lists, m.cell_nodes, m.nloc, m.row_ptr, m.rank, per)
    }

    /// Patches whose cells are `lists` (a partition of the cells, each of at most `per`).
    fn from_lists(lists: &[Vec<usize>], cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], rank: &[u16], per: usize) -> Result<Patches> {
        let nc = cell_nodes.len() / nloc.max(1);
        if per == 0 || nloc == 0 || rank.len() != nc * nloc * nloc || u32::try_from(nc).is_err() {
            return Err(Error::invalid(format!("patches of {per} cells of {nloc} nodes over {nc} cells and {} ranks", rank.len())));
        }
        if *row_ptr.last().unwrap_or(&0) > u32::MAX as usize {
            return Err(Error::Unsupported(format!("{} Jacobian entries exceed the patch scheme's 32-bit places", row_ptr.last().unwrap_or(&0))));
        }
        // Cells per node: a row whose cells all lie in one patch is that patch's alone.
        let mut incident = vec![0u32; row_ptr.len() / 3];
        for &n in cell_nodes {
            incident[n] += 1;
        }
        let one = |l: &Vec<usize>| one_patch(l, cell_nodes, nloc, row_ptr, rank, &incident);
        let parts: Vec<PatchPart> = lists.par_iter().map(one).collect::<Result<_>>()?;
        let mut pt = Patches {
            ptr: vec![0],
            cells: lists.iter().flatten().map(|&c| c as u32).collect(),
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

    /// Values the flush stores plainly (rows of one patch alone, [`OWNED`]).
    pub fn stores(&self) -> usize {
        9 * self.flush_meta.iter().filter(|&&m| m & OWNED != 0).count()
    }
}

/// The flag of `flush_meta` for a directed entry whose row only this patch touches: the kernel
/// stores it plainly instead of adding it atomically.
pub const OWNED: u32 = 1 << 15;

/// The cells' groups by longest edge, merged into patches of at most `per` cells: each patch grows
/// from the first unassigned group of the launch order by the unassigned group that shares the most
/// vertices with it (ties: the nearest centroid), while one fits.
fn edge_patches(m: &PatchMesh, per: usize) -> Result<Vec<Vec<usize>>> {
    let nc = m.cell_nodes.len() / m.nloc.max(1);
    if per == 0 || m.nv < 2 || m.cell_verts.len() != nc * m.nv {
        return Err(Error::invalid(format!("edge patches of {per} cells over {nc} cells of {} vertices", m.nv)));
    }
    let x = |v: usize| [m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]];
    let d2 = |a: [f64; 3], b: [f64; 3]| (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2);
    let longest: Vec<(usize, usize)> = (0..nc)
        .into_par_iter()
        .map(|c| {
            let vs = &m.cell_verts[c * m.nv..(c + 1) * m.nv];
            let mut best = (f64::NEG_INFINITY, (0, 0));
            for i in 0..m.nv {
                for j in i + 1..m.nv {
                    let (a, b) = (vs[i].min(vs[j]), vs[i].max(vs[j]));
                    let l = d2(x(a), x(b));
                    // (ties: the smaller vertex pair, so that cells agree whatever their local order)
                    if l > best.0 || (l == best.0 && (a, b) < best.1) {
                        best = (l, (a, b));
                    }
                }
            }
            best.1
        })
        .collect();
    let mut index: HashMap<(usize, usize), usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (c, e) in longest.into_iter().enumerate() {
        let g = *index.entry(e).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(c);
    }
    // Split groups larger than a patch (many cells around one edge on a general mesh).
    let groups: Vec<Vec<usize>> = groups.into_iter().flat_map(|g| g.chunks(per).map(<[usize]>::to_vec).collect::<Vec<_>>()).collect();
    let verts: Vec<Vec<usize>> = groups
        .iter()
        .map(|g| {
            let mut v: Vec<usize> = g.iter().flat_map(|&c| m.cell_verts[c * m.nv..(c + 1) * m.nv].iter().copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let centre: Vec<[f64; 3]> = verts
        .iter()
        .map(|v| {
            let s = v.iter().fold([0.0; 3], |s, &k| {
                let p = x(k);
                [s[0] + p[0], s[1] + p[1], s[2] + p[2]]
            });
            s.map(|t| t / v.len() as f64)
        })
        .collect();
    let nvert = m.coords.len() / 3;
    let mut vg_ptr = vec![0usize; nvert + 1];
    for v in verts.iter().flatten() {
        vg_ptr[v + 1] += 1;
    }
    for k in 0..nvert {
        vg_ptr[k + 1] += vg_ptr[k];
    }
    let mut fill = vg_ptr.clone();
    let mut vg = vec![0usize; vg_ptr[nvert]];
    for (g, v) in verts.iter().enumerate() {
        for &k in v {
            vg[fill[k]] = g;
            fill[k] += 1;
        }
    }
    let mut taken = vec![false; groups.len()];
    let mut mark = vec![usize::MAX; nvert];
    let mut patches = Vec::new();
    for seed in 0..groups.len() {
        if taken[seed] {
            continue;
        }
        let pid = patches.len();
        let mut members = vec![seed];
        taken[seed] = true;
        let mut size = groups[seed].len();
        let mut pverts: Vec<usize> = verts[seed].clone();
        for &k in &verts[seed] {
            mark[k] = pid;
        }
        while size < per {
            let n = members.len() as f64;
            let cen = members.iter().fold([0.0; 3], |s, &g| [s[0] + centre[g][0] / n, s[1] + centre[g][1] / n, s[2] + centre[g][2] / n]);
            let mut best: Option<(usize, f64, usize)> = None;
            for &k in &pverts {
                for &g in &vg[vg_ptr[k]..vg_ptr[k + 1]] {
                    if taken[g] || size + groups[g].len() > per {
                        continue;
                    }
                    let shared = verts[g].iter().filter(|&&v| mark[v] == pid).count();
                    let d = d2(centre[g], cen);
                    if best.map_or(true, |(s, bd, bg)| shared > s || (shared == s && (d < bd || (d == bd && g < bg)))) {
                        best = Some((shared, d, g));
                    }
                }
            }
            let Some((_, _, g)) = best else { break };
            taken[g] = true;
            members.push(g);
            size += groups[g].len();
            for &k in &verts[g] {
                if mark[k] != pid {
                    mark[k] = pid;
                    pverts.push(k);
                }
            }
        }
        patches.push(members.iter().flat_map(|&g| groups[g].iter().copied()).collect());
    }
    Ok(patches)
}

/// One patch's slice of [`Patches`].
struct PatchPart {
    ncells: usize,
    nslots: usize,
    pslot: Vec<u16>,
    pos: Vec<u32>,
    meta: Vec<u32>,
}

fn one_patch(cells: &[usize], cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], rank: &[u16], incident: &[u32]) -> Result<PatchPart> {
    // slot ↦ (lo, hi, rank of hi in lo's row, rank of lo in hi's row)
    let mut slots: Vec<(usize, usize, u16, u16)> = Vec::new();
    let mut index: HashMap<(usize, usize), u16> = HashMap::new();
    let mut pslot = Vec::with_capacity(cells.len() * nloc * (nloc + 1) / 2);
    let mut here: HashMap<usize, u32> = HashMap::new();
    for &c in cells {
        let nodes = &cell_nodes[c * nloc..(c + 1) * nloc];
        for &n in nodes {
            *here.entry(n).or_insert(0) += 1;
        }
        let rk = |i: usize, j: usize| rank[(c * nloc + i) * nloc + j];
        for i in 0..nloc {
            for j in i..nloc {
                let flip = nodes[i] > nodes[j];
                let (lo, hi, r_lh, r_hl) = if flip { (nodes[j], nodes[i], rk(j, i), rk(i, j)) } else { (nodes[i], nodes[j], rk(i, j), rk(j, i)) };
                let s = match index.get(&(lo, hi)) {
                    Some(&s) => s,
                    None => {
                        let s = u16::try_from(slots.len()).ok().filter(|&s| s < 1 << 14).ok_or_else(|| Error::Unsupported("a patch of more than 16 384 node pairs".into()))?;
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
        let owned = if here.get(&row) == Some(&incident[row]) { OWNED } else { 0 };
        pos.push((start + 3 * r as usize) as u32);
        meta.push((len as u32) << 16 | owned | sd);
    }
    Ok(PatchPart { ncells: cells.len(), nslots: slots.len(), pslot, pos, meta })
}

/// Static shared memory of the patch kernel for batches of `pc` cells: per cell its gather record
/// and M, |det J|; per (cell, point of a chunk) w, g', w𝔸, F, S and the law's form.
pub fn shared_bytes(el: &HyperElement, pc: usize, qb: usize) -> usize {
    let (nloc, nv) = (el.nloc(), el.space.mesh.cell_type.num_vertices());
    let cell = (8 * (3 * nv + 3 * nloc + 9) + 4 * nloc).div_ceil(8) * 8 + 80;
    let per_point = 8 * (1 + 3 * nloc + 81 + 18 + 22);
    pc * (cell + qb * per_point)
}

/// Dynamic shared memory of the patch kernel: the slots' 3×3 blocks.
pub fn slot_bytes(nslot: usize) -> usize {
    72 * nslot.max(1)
}

/// Shared memory one block may hold on the devices the scheme targets (sm_80 and later: 227 KiB
/// with the opt-in attribute; 163 KiB on sm_80 itself).
const MAX_BLOCK_SHARED: usize = 160 * 1024;

/// Whether the patch scheme applies to `el`: 3D simplices (the kernel's geometry is affine).
pub fn applies(el: &HyperElement) -> bool {
    el.dim == 3 && el.space.mesh.cell_type.is_simplex()
}

/// Points per chunk for batches of `pc` cells integrated at once: as many as fit the static
/// shared-memory budget, chunks balanced; an error where not even one point fits, the column
/// threads exceed a block or the slots of `nslot` node pairs do not fit beside them.
fn points_per_chunk(el: &HyperElement, pc: usize, nslot: usize) -> Result<usize> {
    let nq = el.quad.len();
    // (as many points as keep the block within 46 KiB with its slots, or one where they alone exceed it)
    let qmax = (1..=nq).take_while(|&q| shared_bytes(el, pc, q) + slot_bytes(nslot) <= SHARED_BUDGET).last().unwrap_or(1);
    if shared_bytes(el, pc, qmax) > SHARED_BUDGET || pc == 0 || threads(el, pc) > 1024 || shared_bytes(el, pc, qmax) + slot_bytes(nslot) > MAX_BLOCK_SHARED {
        return Err(Error::Unsupported(format!(
            "a batch of {pc} cells and a patch of {nslot} node pairs do not fit one block ({} B static at one point per chunk, {} B of slots)",
            shared_bytes(el, pc, 1),
            slot_bytes(nslot)
        )));
    }
    Ok(nq.div_ceil(nq.div_ceil(qmax)))
}

/// The kernel's defines for batches of `pc` cells integrated at once and patches of at most
/// `nslot` slots (in dynamic shared memory): the points per chunk ([`points_per_chunk`]), the
/// column threads rounded to warps.
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
        "HP_DYN=1".into(),
    ])
}

/// The batch of cells integrated at once for patches of `cells` cells and a requested `batch`
/// (0: the whole patch).
pub fn batch_of(cells: usize, batch: usize) -> usize {
    if batch == 0 {
        cells
    } else {
        batch.min(cells)
    }
}

/// Allows `kernel` the dynamic shared memory of `p`'s slots beside its static buffers where the
/// two exceed the default 48 KiB (the static size as the compiler laid it out, not our count).
pub(crate) fn allow_shared(kernel: &crate::backend::cuda::kernels::Kernel, p: &DevicePatches) -> Result<()> {
    if kernel.static_shared()?.max(p.shared) + p.dynamic > 48 * 1024 {
        kernel.allow_dynamic_shared(p.dynamic)?;
    }
    Ok(())
}

/// [`Patches`] on the device, with the kernel's launch shape.
pub struct DevicePatches {
    pub npatch: u64,
    pub threads: u32,
    /// Values the flush adds (9 per directed entry), of them stored plainly, the kernel's static
    /// and dynamic shared memory.
    pub adds: usize,
    pub stores: usize,
    pub shared: usize,
    pub dynamic: usize,
    pub ptr: CudaSlice<u32>,
    pub cells: CudaSlice<u32>,
    pub pslot: CudaSlice<u16>,
    pub flush_ptr: CudaSlice<u32>,
    pub flush_pos: CudaSlice<u32>,
    pub flush_meta: CudaSlice<u32>,
}

impl DevicePatches {
    /// The launch shape is the one [`defines`] compiles for batches of `pc` cells and `p`.
    pub fn upload(be: &CudaBackend, el: &HyperElement, p: &Patches, pc: usize) -> Result<DevicePatches> {
        Self::upload_with(be, p, threads(el, pc), shared_bytes(el, pc, points_per_chunk(el, pc, p.max_slots)?))
    }

    /// `p` for a kernel of `threads` per block and `shared` bytes of static shared memory (the
    /// tensor-core scheme with `HK_PATCH`).
    pub fn upload_with(be: &CudaBackend, p: &Patches, threads: u32, shared: usize) -> Result<DevicePatches> {
        let nz = |v: &[u32]| if v.is_empty() { vec![0] } else { v.to_vec() };
        Ok(DevicePatches {
            npatch: p.len() as u64,
            threads,
            adds: p.adds(),
            stores: p.stores(),
            shared,
            dynamic: slot_bytes(p.max_slots),
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
/// every law: Kuhn cubes and single cells as patches integrated whole, and at P2 patches of 2×2×2
/// cubes integrated 12 cells at a time: (defines, PTX bytes), an error on any warning.
pub fn compile_variants(arch: &str) -> Result<Vec<(Vec<String>, usize)>> {
    use crate::backend::cuda::jit;
    use crate::mesh::{generate::box_mesh, CellType};
    use std::sync::Arc;
    let mesh = Arc::new(box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?);
    let mut out = Vec::new();
    for degree in [1, 2] {
        let space = Arc::new(crate::space::FunctionSpace::lagrange(mesh.clone(), degree, 3)?);
        let shapes: &[(Grouping, usize, usize)] = if degree == 2 { &[(Grouping::Runs, DEFAULT_CELLS, 0), (Grouping::Runs, 1, 0), (Grouping::Edges, 48, 12)] } else { &[(Grouping::Runs, DEFAULT_CELLS, 0), (Grouping::Runs, 1, 0)] };
        let patches: Vec<(Patches, usize)> = shapes.iter().map(|&(group, per, batch)| Ok((Patches::of_space(&space, per, group)?, batch))).collect::<Result<_>>()?;
        for law in [super::Law::Svk { lambda: 1.0, mu: 1.0 }, super::Law::NeoHookean { lambda: 1.0, mu: 1.0 }, super::Law::Usyk { c: 1.0, bf: 1.0, bt: 1.0, bfs: 1.0, kappa: 1.0 }] {
            let frames = if law.anisotropic() { vec![super::frame_from_fibre([1.0, 0.0, 0.0])?; mesh.num_cells()] } else { Vec::new() };
            for rule in [None, Some(super::element::stiffness_quadrature_degree(&space))] {
                let el = HyperElement::with_degree(space.clone(), law, frames.clone(), rule)?;
                for (p, batch) in &patches {
                    let d = defines(&el, batch_of(p.max_cells, *batch), p.max_slots)?;
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
