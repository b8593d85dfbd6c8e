//! The GPU's [`HyperSystem`]: residual and Jacobian of every cell integrated and summed on the
//! device by `kernels/hyperelastic*.cu` (law: `kernels/hyperelastic_law.cuh`) in one launch over
//! every cell, with atomic adds into device vectors and a device CSR matrix whose sparsity and
//! per-entry positions were found once on the host (the `full` level's
//! [`crate::operator::assemble::pattern`] slots). The law runs once per (cell, quadrature point).
//! Two schemes ([`Scheme`], see the kernel's comments): a group of threads per cell owning column
//! pairs of the element matrix (every element; the default), and, for 3D simplices of at most 16
//! nodes (P1/P2 tetrahedra), one warp per cell with the element matrix as a small GEMM on the FP64
//! tensor cores, staged in shared memory and scattered row by row (the default where it applies);
//! and a third, [`Scheme::Patch`] ([`super::patch`]: a block per patch of cells, their sums reduced in
//! shared memory before the atomic adds; slower overall, twelfth pass in BENCHMARKS.md); and a fourth,
//! [`Scheme::Moments`] ([`super::moments`]: affine P2 tetrahedra, the element matrix from per-cell
//! moments, thirteenth pass); and a fifth, [`Scheme::Gather`] (`kernels/hyperelastic_gather.cu`: the
//! tensor-core scheme's element matrices staged per cell, then a warp per node stores its CSR rows
//! once, without atomics or zeroing; sixteenth pass); and a sixth, [`Scheme::Recompute`]
//! ([`super::recompute`]: the owner gather without the stage, each block recomputing the law of its
//! nodes' cells and contracting only their rows; seventeenth pass). The follower pressure's terms are integrated on the device too (one thread per
//! facet point, then one per facet Jacobian entry), so nothing crosses per Newton step.
use super::element::HyperElement;
use super::loads::FollowerPressure;
use super::newton::HyperSystem;
use crate::backend::cuda::jit::KernelSource;
use crate::backend::cuda::kernels::{launch, Kernel};
use crate::backend::cuda::{CudaBackend, CudaVector, DeviceCsr};
use crate::backend::Backend;
use crate::linalg::CsrMatrix;
use crate::operator::assemble::pattern;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};

/// The kernel source: the law's twin, then the assembly kernel.
pub const HYPERELASTIC: KernelSource = hyper_kernel_source!("hyperelastic.cu": "hyperelastic_gather.cu", "hyperelastic_upper.cu", "hyperelastic_blocks.cu");

/// Static shared memory the column-pair scheme may use per block (the limit is 48 KiB): 46 KiB
/// makes 8 P2 cells × 4 points per chunk the default, the fastest shape of the fourth pass's sweep.
const SHARED_BUDGET: usize = 46 * 1024;
/// The hard limit on static shared memory per block.
const SHARED_LIMIT: usize = 48 * 1024;

/// The environment variable that overrides [`default_variant`] in [`GpuHyper::new`].
pub const SCHEME_ENV: &str = "GALERKIN_HYPER_SCHEME";

/// The launch shape of the column-pair scheme: threads per cell (≥ the DIM·⌈NLOC/2⌉ column-pair
/// threads, rounded up to 8), cells per block, quadrature points per chunk (as many as the
/// shared-memory budget allows, chunks balanced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub gt: usize,
    pub cpb: usize,
    pub qb: usize,
}

/// The kernel's two schemes (`kernels/hyperelastic_pairs.cu`, `kernels/hyperelastic_tc.cuh`): column
/// pairs (any element, plane strain too), or the tensor-core scheme for 3D simplices of at most 16
/// nodes — `wpc` warps per cell (1 or 2), `wpb` cells per block, the element matrix on the FP64
/// tensor cores in chunks of `qc` points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Pairs(Shape),
    Tc { wpb: usize, qc: usize, wpc: usize },
    /// The patch-reduced scheme (`kernels/hyperelastic_patch.cu`, [`super::patch`]): one block per
    /// patch of at most `cells` cells grouped by `group`, integrated `batch` cells at a time (0: the
    /// whole patch at once), summed in shared memory, each distinct value added once (3D simplices).
    Patch { cells: usize, batch: usize, group: super::patch::Grouping },
    /// The moments scheme (`kernels/hyperelastic_moments.cu`, [`super::moments`]): affine P2
    /// tetrahedra, one warp per cell, `wpb` cells per block, the element matrix from the cell's
    /// moments Σ_q w λ_m λ_n 𝔸_q (products independent of the rule).
    Moments { wpb: usize },
    /// The owner gather (`kernels/hyperelastic_gather.cu`, sixteenth pass): the tensor-core scheme
    /// (one warp per cell, chunks of `qc` points) stores each cell's element matrix to a stage, then
    /// one warp per node sums its cells' rows and stores its CSR rows once (no atomics, no zeroing).
    Gather { qc: usize },
    /// The owner gather without a stage (`kernels/hyperelastic_recompute.cu`, [`super::recompute`],
    /// seventeenth pass): a block of `wpb` warps (in `kib` KiB of shared memory) owns a range of row
    /// nodes, recomputes the law of each cell touching them and contracts only the owned rows.
    Recompute { wpb: usize, kib: usize },
    /// The tensor-core products with the patch-reduced scatter (`kernels/hyperelastic_tc.cuh` with
    /// `HK_PATCH`, nineteenth pass): a block of `wpb` warps per patch of at most `cells` cells
    /// grouped by `group` ([`super::patch`]), the warps taking the patch's cells in turn (chunks of
    /// `qc` points), each adding its element matrix's fragments to the patch's slots in shared
    /// memory; then each distinct value added to the CSR values once.
    TcPatch { cells: usize, wpb: usize, qc: usize, group: super::patch::Grouping },
}

impl Scheme {
    /// Threads per block and cells per block.
    fn launch(self) -> (usize, usize) {
        match self {
            Scheme::Pairs(s) => (s.gt * s.cpb, s.cpb),
            Scheme::Tc { wpb, wpc, .. } => (32 * wpc * wpb, wpb),
            Scheme::Patch { cells, .. } => (0, cells),
            Scheme::Moments { wpb } => (32 * wpb, wpb),
            Scheme::Gather { .. } => (32, 1),
            // (the residual alone: the tensor-core kernel, one warp per cell)
            Scheme::Recompute { .. } => (32, 1),
            Scheme::TcPatch { cells, wpb, .. } => (32 * wpb, cells),
        }
    }
}

/// Static shared memory of the column-pair scheme per block: per cell, vertices, displacements,
/// frame (f64) and nodes (u32); per point, w, g', 𝔸 (M before it), F, S, P and the law's form.
pub fn shared_bytes(el: &HyperElement, cpb: usize, qb: usize) -> usize {
    let (nloc, nv) = (el.nloc(), el.space.mesh.cell_type.num_vertices());
    let fixed = 8 * (3 * nv + 3 * nloc + 9) + 4 * nloc;
    let per_point = 8 * (1 + 3 * nloc + 81 + 27 + form_len(el));
    cpb * (fixed + qb * per_point)
}

/// Numbers of the law's form of ℂ per point (`HL_FORM` of `kernels/hyperelastic_law.cuh`): 22, and
/// 10 more for plane stress's condensation.
pub fn form_len(el: &HyperElement) -> usize {
    if el.plane_stress {
        32
    } else {
        22
    }
}

/// Static shared memory of the tensor-core scheme per block: per cell, vertices, displacements,
/// frame, nodes, g' and the 59-number record of every point (or the element matrix's upper blocks,
/// NLOC × 6·NLOC, which the staged scatter keeps there, where larger), and Y for a chunk of `qc`
/// points (rows padded to the conflict-free stride; room for the residual's 3 columns of
/// `HK_RES_MMA` counted whether used or not).
pub fn tc_shared_bytes(el: &HyperElement, wpb: usize, qc: usize) -> usize {
    tc_bytes(el, wpb, qc, (59 * el.quad.len()).max(6 * el.nloc() * el.nloc()))
}

/// [`tc_shared_bytes`] of [`Scheme::TcPatch`] (static; its slots are dynamic): nothing staged, the
/// point records alone (a third less per cell at P2's 4 points, so more cells fit a block).
pub fn tc_patch_shared_bytes(el: &HyperElement, wpb: usize, qc: usize) -> usize {
    tc_bytes(el, wpb, qc, 59 * el.quad.len())
}

/// The twentieth pass's contention-free way into [`Scheme::TcPatch`]'s slots (kernel define): each
/// cell's blocks staged as the default stages them, the block's cells adding them to the slots in
/// turn with plain shared adds.
pub const TC_PATCH_TURNS: &[&str] = &["HK_PATCH_TURNS"];

/// [`Scheme::TcPatch`]'s static shared memory: [`tc_patch_shared_bytes`], or with `turns`
/// ([`TC_PATCH_TURNS`]) the staged blocks' [`tc_shared_bytes`].
pub fn tc_patch_static_bytes(el: &HyperElement, wpb: usize, qc: usize, turns: bool) -> usize {
    if turns {
        tc_shared_bytes(el, wpb, qc)
    } else {
        tc_patch_shared_bytes(el, wpb, qc)
    }
}

/// The row stride (doubles) of the tensor-core scheme's Y (`TC_YS` in the kernel): its 6·NLOC
/// columns and the residual's 3 (`HK_RES_MMA`, counted whether used or not) in n-tiles of 8, padded
/// to ≡ 4 (mod 16) doubles so that the B-fragment loads are free of bank conflicts.
fn y_stride(nloc: usize) -> usize {
    let nt = (6 * nloc + 3).div_ceil(8);
    (8 * nt + 11) / 16 * 16 + 4
}

/// The tensor-core scheme's static shared memory with `rec` doubles of point records per cell.
fn tc_bytes(el: &HyperElement, wpb: usize, qc: usize, rec: usize) -> usize {
    let (nloc, nv, nq) = (el.nloc(), el.space.mesh.cell_type.num_vertices(), el.quad.len());
    wpb * (8 * (3 * nv + 3 * nloc + 9 + 3 * nq * nloc + rec + 3 * qc * y_stride(nloc)) + 4 * nloc)
}

/// The eighteenth pass's persistent tensor-core kernel (kernel defines): a grid of the blocks resident
/// at once, each looping over cells, the next cell's record and CSR positions copied ahead by cp.async.
pub const TC_PREFETCH: &[&str] = &["HK_PERSIST", "HK_PREFETCH"];

/// The eighteenth pass's staged scatter a lane per column, the rows unrolled (kernel define).
pub const TC_COLS: &[&str] = &["HK_SCATTER_COLS"];

/// [`TC_COLS`] where the column scatter applies (16 < 3·NLOC ≤ 32: P2 tetrahedra), else nothing:
/// the kernel would ignore it, and a define it ignores would only compile the same kernel twice.
pub fn tc_cols(el: &HyperElement) -> &'static [&'static str] {
    if (17..=32).contains(&(3 * el.nloc())) {
        TC_COLS
    } else {
        &[]
    }
}

/// The twentieth pass's law spread over a block's cells (kernel define; see [`tc_wide`]).
pub const TC_LAW_WIDE: &[&str] = &["HK_LAW_WIDE"];

/// The tensor-core scheme that [`TC_LAW_WIDE`] needs: the default's chunks with as many cells (one
/// warp each, at most 4) per block as fit the static shared memory, so that the law of the block's
/// points runs on the lanes of one warp (P2, 4 points: 4 cells, 16 lanes busy instead of 4).
pub fn tc_wide(el: &HyperElement) -> Scheme {
    let qc = tc_default_qc(el);
    let wpb = (2..=4).rev().find(|&w| tc_shared_bytes(el, w, qc) <= SHARED_LIMIT).unwrap_or(1);
    Scheme::Tc { wpb, qc, wpc: 1 }
}

/// The twelfth pass's leaner products for the tensor-core scheme (kernel defines, see
/// `kernels/hyperelastic_tc.cuh`): the residual as 3 more GEMM columns, Y's shared accesses in pairs.
pub const TC_LEAN: &[&str] = &["HK_RES_MMA=1", "HK_VEC=1"];

/// The twenty-second pass's lean shared memory (kernel define): the staged blocks in Y's space, the
/// records only the points' (P2, 4 points: 8.1 instead of 11.1 KB a cell), so that with a register
/// cap (`HK_MINB`) more cells fit an SM. Use [`tc_st_y`], which leaves it out where it does not fit.
pub const TC_ST_Y: &[&str] = &["HK_ST_Y"];

/// [`TC_ST_Y`] with the register cap of `GALERKIN_HYPER_SCHEME=sty` (20 cells an SM: ≤ 96
/// registers; 126 without).
pub const TC_ST_Y_MINB: &[&str] = &["HK_ST_Y", "HK_MINB=20"];

/// `defines` ([`TC_ST_Y`] or [`TC_ST_Y_MINB`]) where Y's space of a chunk of `qc` points holds the
/// staged blocks (3·qc rows of Y against NLOC rows of 6·NLOC; the kernel refuses it otherwise), else nothing.
pub fn tc_st_y(el: &HyperElement, qc: usize, defines: &'static [&'static str]) -> &'static [&'static str] {
    let nloc = el.nloc();
    if 3 * qc * y_stride(nloc) >= 6 * nloc * nloc {
        defines
    } else {
        &[]
    }
}

/// The twenty-third pass's fused law (kernel defines, see `HK_FUSE` in `kernels/hyperelastic_tc.cuh`):
/// with the Jacobian, the law runs in the Y phase's lanes (one per point and component pair, in
/// registers) instead of a lane per point writing records, and the residual comes from the GEMM.
pub const TC_FUSE: &[&str] = &["HK_FUSE", "HK_RES_MMA=1"];

/// The tensor-core shape for [`TC_FUSE`]: the default's, but all points in one chunk where the rule
/// has at most 4 (P2's stiffness rule: 12 rows of Y, 3 k-steps instead of 4, and no accumulators
/// live across chunks while the law runs: 128 registers where chunks of 3 need 168).
pub fn tc_fuse(el: &HyperElement) -> Scheme {
    let nq = el.quad.len();
    match tc_default(el) {
        Scheme::Tc { wpb, wpc, .. } if nq <= 4 && tc_shared_bytes(el, wpb, nq) <= SHARED_LIMIT => Scheme::Tc { wpb, qc: nq, wpc },
        sc => sc,
    }
}

/// The chunk size (points) of a tensor-core scheme, 0 for the others.
pub fn tc_qc(sc: Scheme) -> usize {
    match sc {
        Scheme::Tc { qc, .. } | Scheme::Gather { qc } | Scheme::TcPatch { qc, .. } => qc,
        _ => 0,
    }
}

/// Whether the tensor-core scheme applies: 3D simplices of at most 16 nodes, a device with FP64
/// tensor cores (compute capability 8.0 and later).
pub fn tc_applies(el: &HyperElement, cc: (u32, u32)) -> bool {
    let nloc = el.nloc();
    el.dim == 3
        && el.space.mesh.cell_type.is_simplex()
        && nloc <= 16
        && cc.0 >= 8
        && tc_shared_bytes(el, 1, 1) <= SHARED_LIMIT
}

/// The tensor-core scheme's standard shape: one cell per block (independent warps), chunks of 3
/// points (the fastest of the sixth pass's sweep at P2: 3.04 ms against 3.22 ms with 4), fewer
/// where the element has fewer points or the shared memory limit needs it.
pub fn tc_default(el: &HyperElement) -> Scheme {
    Scheme::Tc { wpb: 1, qc: tc_default_qc(el), wpc: 1 }
}

/// The points per chunk of [`tc_default`].
fn tc_default_qc(el: &HyperElement) -> usize {
    (1..=3.min(el.quad.len())).rev().find(|&q| tc_shared_bytes(el, 1, q) <= SHARED_LIMIT).unwrap_or(1)
}

/// [`Scheme::TcPatch`]'s standard shape: Kuhn cubes (edge-grouped patches of 6 cells), the
/// tensor-core default's chunks, 3 warps per block (each taking 2 of the cube's cells) or fewer where
/// the static shared memory needs it (at P2 and 4 points: 29 KiB static + 15 KiB of slots, 5 blocks
/// an SM).
pub fn tc_patch_default(el: &HyperElement) -> Scheme {
    let qc = tc_default_qc(el);
    let wpb = (1..=3).rev().find(|&w| tc_patch_shared_bytes(el, w, qc) <= SHARED_LIMIT).unwrap_or(1);
    Scheme::TcPatch { cells: super::patch::DEFAULT_CELLS, wpb, qc, group: super::patch::Grouping::Edges }
}

/// See [`Shape`]; fails where not even one point per chunk fits.
pub fn shape(el: &HyperElement) -> Result<Shape> {
    let (nloc, nq) = (el.nloc(), el.quad.len());
    let gt = (el.dim * nloc.div_ceil(2)).div_ceil(8) * 8;
    let cpb = (128 / gt).max(1);
    let qmax = (1..=nq).take_while(|&q| shared_bytes(el, cpb, q) <= SHARED_BUDGET).last().unwrap_or(0);
    if qmax == 0 {
        return Err(Error::Unsupported(format!("hyperelastic GPU kernel: a cell of {nloc} nodes does not fit in shared memory")));
    }
    let chunks = nq.div_ceil(qmax);
    Ok(Shape { gt, cpb, qb: nq.div_ceil(chunks).max(1) })
}

/// The default scheme's family and shape before its defines ([`default_variant`] picks those, and the
/// fused shape at ≤ 4 points): the tensor-core scheme ([`tc_default`]) where it applies (3D simplices of at
/// most 16 nodes on devices of compute capability ≥ 8.0), column pairs ([`shape`]) elsewhere. With
/// its element matrix staged in shared memory and scattered row by row (sixth pass in
/// BENCHMARKS.md) it is the faster of the two at P2 on the H100.
pub fn default_scheme(el: &HyperElement, cc: (u32, u32)) -> Result<Scheme> {
    if tc_applies(el, cc) {
        return Ok(tc_default(el));
    }
    Ok(Scheme::Pairs(shape(el)?))
}

/// The default scheme and kernel defines of [`GpuHyper::new`], chosen by the rule's point count: with
/// the column scatter (P2 tetrahedra) and at most 4 points (the stiffness rule), the fused law
/// ([`tc_fuse`], [`TC_FUSE`]) with the staged blocks in Y's space and 20 cells an SM
/// ([`TC_ST_Y_MINB`]): 1.35 against 1.41 ms at 10⁶ unknowns on the H200 (rounds 23–24 in
/// BENCHMARKS.md); with more points (Newton's 14-point rule) the fused law holds accumulators
/// across chunks (168 registers, 14 % slower), so [`default_scheme`] with [`tc_cols`] — as everywhere else.
pub fn default_variant(el: &HyperElement, cc: (u32, u32)) -> Result<(Scheme, Vec<&'static str>)> {
    let sc = default_scheme(el, cc)?;
    if !matches!(sc, Scheme::Tc { .. }) {
        return Ok((sc, Vec::new()));
    }
    let (cols, nq, fz) = (tc_cols(el), el.quad.len(), tc_fuse(el));
    let sty = tc_st_y(el, nq, TC_ST_Y_MINB);
    if !cols.is_empty() && nq <= FUSE_MAX_POINTS && tc_qc(fz) == nq && !sty.is_empty() {
        return Ok((fz, [TC_FUSE, sty, cols].concat()));
    }
    Ok((sc, cols.to_vec()))
}

/// The most points of a rule for which [`default_variant`] takes the fused law (one chunk of them).
pub const FUSE_MAX_POINTS: usize = 4;

/// Round 26's trimmed fused law (kernel define, see `HK_TRIM` in `kernels/hyperelastic_tc.cuh`): the
/// fused kernel's pre-scatter instructions cut where they are not arithmetic the result needs — g' a
/// lane per (node, component), F of the points by the tensor cores, only the rows of U and V a pair
/// needs, the entries' factors formed once a lane, no NaN branch in the law: −15 % of the pre-scatter
/// warp instructions by static SASS counts (host; BENCHMARKS.md's 26th pass), not yet measured. With
/// [`TC_FUSE`] and one warp a cell (the kernel refuses it otherwise); composes with any scatter.
pub const TC_TRIM: &[&str] = &["HK_TRIM"];

/// [`default_variant`] with [`TC_TRIM`] where the default is the fused law (P2 tetrahedra at ≤ 4
/// points), else `None` (`GALERKIN_HYPER_SCHEME=trim`, the sweep's `… trim` rows, the tests).
pub fn trim_variant(el: &HyperElement, cc: (u32, u32)) -> Result<Option<(Scheme, Vec<&'static str>)>> {
    let (sc, defs) = default_variant(el, cc)?;
    Ok(defs.contains(&"HK_FUSE").then(|| (sc, [&defs[..], TC_TRIM].concat())))
}

/// The defines of the column-pair variant (what CI compiles for every element).
pub fn defines(el: &HyperElement) -> Result<Vec<String>> {
    defines_for(el, Scheme::Pairs(shape(el)?))
}

/// The defines of `el` with scheme `sc` (checked against the column threads, the element and the
/// shared memory limit).
pub fn defines_for(el: &HyperElement, sc: Scheme) -> Result<Vec<String>> {
    let cell = el.space.mesh.cell_type;
    let mut d = vec![
        format!("DIM={}", el.dim),
        format!("NLOC={}", el.nloc()),
        format!("NQ={}", el.quad.len()),
        format!("NV={}", cell.num_vertices()),
        format!("AFFINE={}", u8::from(cell.is_simplex())),
        format!("LAW={}", el.law.cuda_id()),
    ];
    if el.plane_stress {
        if !matches!(sc, Scheme::Pairs(_)) {
            return Err(Error::Unsupported(format!("plane stress runs the column-pair scheme, not {sc:?}")));
        }
        d.push("HL_PLANE_STRESS".into());
    }
    match sc {
        Scheme::Pairs(sh) => {
            if sh.gt < el.dim * el.nloc().div_ceil(2) || sh.cpb == 0 || sh.qb == 0 || shared_bytes(el, sh.cpb, sh.qb) > SHARED_LIMIT {
                return Err(Error::invalid(format!("hyperelastic kernel shape {sh:?} does not fit {} nodes in 48 KiB of shared memory", el.nloc())));
            }
            d.extend([format!("GT={}", sh.gt), format!("CPB={}", sh.cpb), format!("QB={}", sh.qb)]);
        }
        Scheme::Tc { wpb, qc, wpc } => {
            if !tc_applies(el, (9, 0)) || wpb == 0 || qc == 0 || qc > el.quad.len() || !(1..=2).contains(&wpc) || tc_shared_bytes(el, wpb, qc) > SHARED_LIMIT {
                return Err(Error::invalid(format!(
                    "hyperelastic tensor-core scheme (wpb {wpb}, qc {qc}, wpc {wpc}: 1 or 2 warps per cell) does not fit {} nodes of a {:?} in 48 KiB of shared memory",
                    el.nloc(),
                    cell
                )));
            }
            d.extend([format!("WPB={wpb}"), format!("QC={qc}"), format!("WPC={wpc}")]);
        }
        Scheme::Patch { .. } | Scheme::TcPatch { .. } => return Err(Error::invalid("the patch schemes' defines depend on the mesh (`patch::defines`, `tc_patch_defines`)")),
        Scheme::Moments { wpb } => return super::moments::defines(el, wpb),
        Scheme::Gather { qc } => {
            let mut d = defines_for(el, Scheme::Tc { wpb: 1, qc, wpc: 1 })?;
            d.push("HK_STAGE".into());
            return Ok(d);
        }
        Scheme::Recompute { wpb, .. } => return super::recompute::defines(el, wpb),
    }
    Ok(d)
}

/// The defines of [`Scheme::TcPatch`] for patches of at most `nslot` slots: the tensor-core scheme's
/// (one warp per cell) with `HK_PATCH` (and [`TC_PATCH_TURNS`] with `turns`); an error where its
/// static shared memory exceeds 48 KiB.
pub fn tc_patch_defines(el: &HyperElement, wpb: usize, qc: usize, nslot: usize, turns: bool) -> Result<Vec<String>> {
    if wpb == 0 || tc_patch_static_bytes(el, wpb, qc, turns) > SHARED_LIMIT {
        return Err(Error::invalid(format!("the tensor-core patch scheme: {wpb} warps of {} nodes at {qc} points per chunk do not fit 48 KiB of static shared memory", el.nloc())));
    }
    let mut d = defines_for(el, Scheme::Tc { wpb, qc, wpc: 1 })?;
    d.extend(["HK_PATCH".to_string(), format!("NSLOT={}", nslot.max(1))]);
    d.extend(TC_PATCH_TURNS.iter().filter(|_| turns).map(|e| e.to_string()));
    Ok(d)
}

/// Reference tables in the kernel's layout: ∇_ξ φ | ∇_ξ geometry | weights.
pub fn tables(el: &HyperElement) -> Vec<f64> {
    let cell = el.space.mesh.cell_type;
    let nv = cell.num_vertices();
    let mut t: Vec<f64> = el.tab.grads.iter().flat_map(|g| *g).collect();
    let (mut vals, mut grads) = (vec![0.0; nv], vec![[0.0; 3]; nv]);
    for p in &el.quad.points {
        cell.geometry_basis(*p, &mut vals, &mut grads);
        t.extend(grads.iter().flat_map(|g| *g));
    }
    t.extend_from_slice(&el.quad.weights);
    t
}

/// The order in which the kernel's blocks take the cells. The sums are the same (up to the order of
/// the atomic adds); what changes is how soon cells that add to the same CSR sectors follow each
/// other, i.e. whether those sectors are still in L2 (eleventh pass in BENCHMARKS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellOrder {
    /// The mesh's numbering (a structured box: lexicographic, so cells sharing a node across a
    /// layer of the box are a whole layer apart).
    Mesh,
    /// Along a Hilbert curve of the centroids ([`crate::mesh::ordering::hilbert_cell_order`]).
    Hilbert,
}

/// The cell order of [`GpuHyper::new`] and [`GpuHyper::variant`]: the mesh's (the Hilbert order
/// measured no faster on the H200: L2 already hits 85 % of the scatter's sectors, eleventh pass).
pub const DEFAULT_ORDER: CellOrder = CellOrder::Mesh;

/// `v`'s records of `per` entries, in `order`; `v` itself where `order` is None (the default
/// path uploads the mesh's arrays without a copy: the slots alone are 0.5 GB at 10⁷ unknowns).
fn reorder<'a, T: Copy>(v: &'a [T], per: usize, order: Option<&[u32]>) -> std::borrow::Cow<'a, [T]> {
    match order {
        None => std::borrow::Cow::Borrowed(v),
        Some(o) => o.iter().flat_map(|&c| v[c as usize * per..(c as usize + 1) * per].iter().copied()).collect(),
    }
}

/// Everything the kernel reads, uploaded once.
pub struct GpuHyper {
    assemble: Kernel,
    pressure_residual: Kernel,
    pressure_jacobian: Kernel,
    /// Plane stress: the edge's thickness stretch and its Jacobian block (`hyperelastic_pressure.cu`).
    pressure_thickness: Option<(Kernel, Kernel)>,
    ndofs: usize,
    dim: usize,
    pub pattern: CsrMatrix,
    cell_verts: CudaSlice<u32>,
    coords: CudaSlice<f64>,
    cell_nodes: CudaSlice<u32>,
    tab: CudaSlice<f64>,
    frames: CudaSlice<f64>,
    has_frames: i32,
    prm: CudaSlice<f64>,
    kpos: CudaSlice<u16>,
    ncells: usize,
    scheme: Scheme,
    patches: Option<super::patch::DevicePatches>,
    gather: Option<DeviceGather>,
    recompute: Option<super::recompute::DeviceRecompute>,
    pressure: Option<DevicePressure>,
    /// `HK_PERSIST` (eighteenth pass): the grid, blocks resident at once, each looping over cells.
    persist_blocks: Option<u32>,
    /// `HK_UPPER` (twenty-first pass): the upper part's zeroing and the lower part's fill.
    upper: Option<super::upper::DeviceUpper>,
    /// `HK_SCATTER_BLOCKS` (round 25): the node-block structure; the matrix's values are then in
    /// block order ([`super::blocks`]) unless `blocks_scratch` is set.
    blocks: Option<super::blocks::DeviceBlocks>,
    /// (`GALERKIN_HYPER_SCHEME=blocks`) the block-order values, converted into the matrix's CSR
    /// values after each assembly.
    blocks_scratch: Option<std::sync::Mutex<CudaSlice<f64>>>,
    /// `HK_ZERO_AHEAD=n` (thirty-first pass): the cells in n chunks, each launch zeroing the next's values.
    ahead: Option<super::ahead::DeviceAhead>,
    /// `HK_CHAIN` (thirty-fourth pass): the segments of face neighbours (the cells in their order).
    chain: Option<DeviceChain>,
}

/// [`super::chain::Chains`] on the device: a block per segment.
struct DeviceChain {
    nseg: u32,
    seg_ptr: CudaSlice<u32>,
    links: CudaSlice<u64>,
}

/// The owner gather's data ([`Scheme::Gather`]): each node's cells (cell · NLOC + the node's place
/// in it, by node), the per-cell stage of the element matrices (NLOC × 6·NLOC doubles each: 1.1 GB
/// at 10⁶ P2 unknowns), the gather kernel and its shared memory (a node's 3 CSR rows per warp).
struct DeviceGather {
    kernel: Kernel,
    nnodes: u64,
    seg_max: u32,
    node_ptr: CudaSlice<u32>,
    inc: CudaSlice<u32>,
    /// Scratch the assembly kernel writes and the gather reads, on the backend's one stream.
    stage: CudaSlice<f64>,
}

/// Each node's cells, by node: (ptr, inc) with node n's entries inc[ptr[n]..ptr[n + 1]], each
/// cell · NLOC + the node's place in it (`cell_nodes` flat, NLOC per cell, in launch order).
pub(super) fn node_incidence(cell_nodes: &[usize], nnodes: usize) -> (Vec<u32>, Vec<u32>) {
    let mut ptr = vec![0u32; nnodes + 1];
    for &n in cell_nodes {
        ptr[n + 1] += 1;
    }
    for i in 0..nnodes {
        ptr[i + 1] += ptr[i];
    }
    let mut fill = ptr.clone();
    let mut inc = vec![0u32; cell_nodes.len()];
    for (k, &n) in cell_nodes.iter().enumerate() {
        inc[fill[n] as usize] = k as u32;
        fill[n] += 1;
    }
    (ptr, inc)
}

/// Blocks of `threads` threads of `k` (static shared memory only) resident on the whole device at
/// once: the grid of a kernel whose blocks loop over the cells (`HK_PERSIST`).
fn resident_blocks(be: &CudaBackend, k: &Kernel, threads: usize) -> Result<u32> {
    let per_sm = k.func.occupancy_max_active_blocks_per_multiprocessor(threads as u32, 0, None).map_err(|e| Error::Unsupported(format!("occupancy of hyper_assemble: {e}")))?;
    Ok(per_sm.max(1) * be.device().multiprocessors.max(1))
}

/// Nodes (warps) per block of the gather kernel (`HG_WPB`'s default in the kernel).
const GATHER_WPB: usize = 4;

impl DeviceGather {
    /// Each node's (cell, place) entries from `cell_nodes` (in launch order), the longest node
    /// segment of `row_ptr` (3 rows per node), uploads, and the kernel from `module`; refused where a
    /// node's rows do not fit the shared memory of a block.
    fn new(be: &CudaBackend, module: &std::sync::Arc<cudarc::driver::CudaModule>, cell_nodes: &[usize], nloc: usize, row_ptr: &[usize], stage_len: usize) -> Result<DeviceGather> {
        let nnodes = (row_ptr.len() - 1) / 3;
        let ncells = cell_nodes.len() / nloc.max(1);
        if ncells * nloc > u32::MAX as usize || row_ptr.last().copied().unwrap_or(0) > u32::MAX as usize {
            return Err(Error::Unsupported(format!("the owner gather indexes {ncells} cells and the CSR values with 32 bits")));
        }
        let (ptr, inc) = node_incidence(cell_nodes, nnodes);
        let seg_max = (0..nnodes).map(|n| row_ptr[3 * n + 3] - row_ptr[3 * n]).max().unwrap_or(0).max(1);
        let shared = GATHER_WPB * seg_max * 8;
        let kernel = Kernel::from_module(module, "hyper_gather")?;
        if shared > 48 * 1024 {
            let most = be.device().shared_optin.saturating_sub(kernel.static_shared()?);
            if shared > most {
                return Err(Error::Unsupported(format!("the owner gather: a node's {seg_max} CSR values ({shared} B for {GATHER_WPB} nodes) do not fit the {most} B of a block's shared memory")));
            }
            kernel.allow_dynamic_shared(shared)?;
        }
        Ok(DeviceGather {
            kernel,
            nnodes: nnodes as u64,
            seg_max: seg_max as u32,
            node_ptr: be.upload(&ptr)?,
            inc: be.upload(if inc.is_empty() { &[0u32][..] } else { &inc })?,
            stage: be.alloc::<f64>(stage_len.max(1))?,
        })
    }

    /// The gather alone: node rows of `vals` from the stage as the last assembly left it.
    fn launch(&self, be: &CudaBackend, row_ptr: &CudaSlice<u32>, kpos: &CudaSlice<u16>, vals: &mut CudaSlice<f64>) -> Result<()> {
        if self.nnodes == 0 {
            return Ok(());
        }
        let blocks = u32::try_from(self.nnodes.div_ceil(GATHER_WPB as u64)).map_err(|_| Error::Unsupported(format!("{} nodes in one launch", self.nnodes)))?;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (32 * GATHER_WPB as u32, 1, 1), shared_mem_bytes: (GATHER_WPB * self.seg_max as usize * 8) as u32 };
        launch!(be, &self.kernel, cfg; &self.nnodes, &self.seg_max, &self.node_ptr, &self.inc, row_ptr, kpos, &self.stage, &mut *vals)
    }
}

/// [`super::loads::FlatPressure`] on the device, with room for the deformed tangents.
struct DevicePressure {
    /// Displacement components per node (3, or 2 in plane strain).
    dim: i32,
    nf: u64,
    m: i32,
    np: i32,
    nodes: CudaSlice<u32>,
    points: CudaSlice<f64>,
    positions: CudaSlice<u64>,
    tangents: CudaSlice<f64>,
    /// Plane stress: [`super::loads::FlatThickness`] and per point [F₃₃, ∂F₃₃/∂F' (2 × 2)].
    thick: Option<DeviceThickness>,
    /// The residual kernel's `th` where there is no thickness (never read).
    no_thick: CudaSlice<f64>,
}

struct DeviceThickness {
    nloc: i32,
    nodes: CudaSlice<u32>,
    frames: CudaSlice<f64>,
    grads: CudaSlice<f64>,
    positions: CudaSlice<u64>,
    values: CudaSlice<f64>,
}

fn u32s(v: &[usize], what: &str) -> Result<Vec<u32>> {
    v.iter().map(|&x| u32::try_from(x).map_err(|_| Error::Unsupported(format!("{what} {x} exceeds 32 bits")))).collect()
}

impl GpuHyper {
    /// The default scheme and defines for `el` on this device ([`default_variant`]: by the rule's
    /// point count), or the one named by `GALERKIN_HYPER_SCHEME` (`cols` ([`default_scheme`] with
    /// [`tc_cols`] at every rule: the default before round 24), `pairs`, `tc` (without the default's [`TC_COLS`]), `prefetch` — the tensor-core scheme with [`TC_PREFETCH`] and [`TC_COLS`] —, `wide` ([`tc_wide`] with [`TC_LAW_WIDE`] and [`TC_COLS`]), `upper` (the default with [`super::upper::TC_UPPER`]), `sty` (the default with [`TC_ST_Y_MINB`]), `fuse` ([`tc_fuse`] with [`TC_FUSE`] and [`TC_COLS`]), `trim` ([`trim_variant`]: the default with [`TC_TRIM`] where it is the fused law, else the default), `blocks` (the default with the node-block storage [`super::blocks::TC_BLOCKS`], converted to CSR after each assembly so that the solver can use it), `chain` (the default with [`super::chain::TC_CHAIN`] where it is the tensor-core scheme with one cell a block, else the default), `tc-patch` ([`tc_patch_default`]), `patch`, `moments`, `gather` or `recompute`: to compare whole runs with either, as the
    /// benchmark does; an unknown name or a scheme that does not apply is an error, except `moments`,
    /// which leaves the elements it is not written for — a P2 run's coarser P1 multigrid levels — to
    /// the default).
    pub fn new(be: &CudaBackend, el: &HyperElement) -> Result<GpuHyper> {
        let cc = be.device().compute_capability;
        let sc = match std::env::var(SCHEME_ENV).ok().as_deref() {
            // The tensor-core default with the eighteenth pass's column scatter (P2 tetrahedra: 1.40
            // against 1.66 ms at 4 points on the H200; its GPU = CPU and Newton tests passed there).
            // At ≤ 4 points (P2) the fused law with 20 cells an SM (rounds 23–24), else the same
            // scheme with the column scatter alone ([`default_variant`]).
            None => {
                let (sc, defs) = default_variant(el, cc)?;
                return Self::variant(be, el, sc, &defs);
            }
            // The default before round 24 at every rule: the tensor-core scheme with the column scatter.
            Some("cols") => match default_scheme(el, cc)? {
                sc @ Scheme::Tc { .. } => return Self::variant(be, el, sc, tc_cols(el)),
                sc => sc,
            },
            Some("pairs") => Scheme::Pairs(shape(el)?),
            Some("tc") => tc_default(el),
            // Where the tensor-core scheme applies (else the default: plane strain, hexahedra).
            Some("prefetch") if tc_applies(el, cc) => return Self::variant(be, el, tc_default(el), &[TC_PREFETCH, tc_cols(el)].concat()),
            Some("prefetch") => default_scheme(el, cc)?,
            // The default with the law spread over a block's cells (twentieth pass), where it applies.
            Some("wide") if tc_applies(el, cc) => return Self::variant(be, el, tc_wide(el), &[TC_LAW_WIDE, tc_cols(el)].concat()),
            Some("wide") => default_scheme(el, cc)?,
            // The default with the upper-triangle scatter (twenty-first pass), where it applies.
            Some("upper") if tc_applies(el, cc) => return Self::variant(be, el, tc_default(el), &[super::upper::TC_UPPER, tc_cols(el)].concat()),
            Some("upper") => default_scheme(el, cc)?,
            // The default with the staged blocks in Y's space and 20 cells an SM (twenty-second pass).
            Some("sty") if tc_applies(el, cc) => {
                let tc = tc_default(el);
                return Self::variant(be, el, tc, &[tc_st_y(el, tc_qc(tc), TC_ST_Y_MINB), tc_cols(el)].concat());
            }
            Some("sty") => default_scheme(el, cc)?,
            // The law in the Y phase's lanes, all 4 points in one chunk (twenty-third pass), where it applies.
            Some("fuse") if tc_applies(el, cc) => return Self::variant(be, el, tc_fuse(el), &[TC_FUSE, tc_cols(el)].concat()),
            Some("fuse") => default_scheme(el, cc)?,
            // The default trimmed (round 26, unmeasured) where it is the fused law, else the default.
            Some("trim") => {
                let (sc, defs) = match trim_variant(el, cc)? {
                    Some(v) => v,
                    None => default_variant(el, cc)?,
                };
                return Self::variant(be, el, sc, &defs);
            }
            // The default scattering whole node blocks (round 25), where the column scatter applies;
            // each assembly then converts the values to CSR order (one more pass: opt-in).
            Some("blocks") if tc_applies(el, cc) && !tc_cols(el).is_empty() => return Self::blocks_in_csr(be, el),
            Some("blocks") => default_scheme(el, cc)?,
            // The default carrying the blocks shared with the next cell along segments of face
            // neighbours (thirty-fourth pass), where the default is the tensor-core scheme with one
            // cell a block and the staged scatter (else the default).
            Some("chain") => {
                let (sc, defs) = default_variant(el, cc)?;
                if matches!(sc, Scheme::Tc { wpb: 1, .. }) {
                    return Self::variant(be, el, sc, &[&defs[..], super::chain::TC_CHAIN].concat());
                }
                sc
            }
            // Where the tensor-core scheme applies (else the default: plane strain, hexahedra).
            Some("tc-patch") if tc_applies(el, cc) => tc_patch_default(el),
            Some("tc-patch") => default_scheme(el, cc)?,
            Some("patch") => super::patch::DEFAULT_SCHEME,
            // P2 only: the multigrid's coarser (P1) levels keep the default scheme.
            Some("moments") if super::moments::applies(el) => Scheme::Moments { wpb: 1 },
            Some("moments") => default_scheme(el, cc)?,
            // Where the tensor-core scheme applies (else the default: plane strain, hexahedra).
            Some("gather") if tc_applies(el, cc) => match tc_default(el) {
                Scheme::Tc { qc, .. } => Scheme::Gather { qc },
                other => other,
            },
            Some("gather") => default_scheme(el, cc)?,
            // Where it applies (P1/P2 tetrahedra: the multigrid's levels too), else the default.
            Some("recompute") if super::recompute::applies(el, cc) => super::recompute::DEFAULT,
            Some("recompute") => default_scheme(el, cc)?,
            Some(other) => return Err(Error::invalid(format!("{SCHEME_ENV} = `{other}`: expected `cols`, `pairs`, `tc`, `prefetch`, `wide`, `upper`, `sty`, `fuse`, `trim`, `blocks`, `chain`, `tc-patch`, `patch`, `moments`, `gather` or `recompute`"))),
        };
        Self::variant(be, el, sc, &[])
    }

    /// [`default_variant`] scattering whole node blocks ([`super::blocks::TC_BLOCKS`]) into a
    /// scratch in block order, converted into the matrix's CSR values after each assembly
    /// (`GALERKIN_HYPER_SCHEME=blocks`); an error where the column walk does not apply.
    pub fn blocks_in_csr(be: &CudaBackend, el: &HyperElement) -> Result<GpuHyper> {
        let (sc, defs) = default_variant(el, be.device().compute_capability)?;
        let mut sys = Self::variant(be, el, sc, &[&defs[..], super::blocks::TC_BLOCKS].concat())?;
        sys.blocks_scratch = Some(std::sync::Mutex::new(be.alloc::<f64>(sys.pattern.nnz().max(1))?));
        Ok(sys)
    }

    /// With scheme `sc` and extra defines (the kernel sweep of the benchmark: `HK_TRIVIAL_LAW`,
    /// `HK_NO_SCATTER`, `HK_SCATTER_ONLY`, `HK_FRAG_SCATTER`, `HK_MINB=n`).
    pub fn variant(be: &CudaBackend, el: &HyperElement, sc: Scheme, extra: &[&str]) -> Result<GpuHyper> {
        Self::variant_ordered(be, el, sc, extra, DEFAULT_ORDER)
    }

    /// [`Self::variant`] with the cells taken in `order`.
    pub fn variant_ordered(be: &CudaBackend, el: &HyperElement, sc: Scheme, extra: &[&str], order: CellOrder) -> Result<GpuHyper> {
        let space = &el.space;
        let mesh = &*space.mesh;
        if matches!(sc, Scheme::Tc { .. } | Scheme::Gather { .. } | Scheme::Recompute { .. } | Scheme::TcPatch { .. }) && !tc_applies(el, be.device().compute_capability) {
            return Err(Error::Unsupported(format!("the hyperelastic tensor-core scheme does not apply to {} nodes of a {:?} on this device", el.nloc(), mesh.cell_type)));
        }
        let (pattern, slots) = pattern(space, true)?;
        let slots = slots.ok_or_else(|| Error::invalid("sparsity pattern without slots"))?;
        let coords: Vec<f64> = mesh.coords.iter().flat_map(|x| *x).collect();
        let base = match order {
            CellOrder::Mesh => None,
            CellOrder::Hilbert => Some(crate::mesh::ordering::hilbert_cell_order(mesh)),
        };
        let nloc = el.nloc();
        let nv = mesh.cell_type.num_vertices();
        // (`HK_CHAIN`: the segments of face neighbours, built in the base order; the cells then in theirs)
        let chains = match (extra.iter().any(|e| super::chain::TC_CHAIN.contains(e)), sc) {
            (false, _) => None,
            (true, Scheme::Tc { wpb: 1, .. }) => {
                let verts = reorder(&mesh.cells, nv, base.as_deref());
                let nodes = reorder(&space.dofmap.cell_nodes, nloc, base.as_deref());
                Some(super::chain::Chains::build(&verts, nv, &nodes, nloc, super::chain::len_asked(extra)?)?)
            }
            (true, _) => return Err(Error::invalid(format!("the carried scatter (HK_CHAIN) is the tensor-core scheme's with one cell a block, not {sc:?}"))),
        };
        let perm = match (&chains, base) {
            (Some(ch), Some(b)) => Some(ch.order.iter().map(|&k| b[k as usize]).collect::<Vec<u32>>()),
            (Some(ch), None) => Some(ch.order.clone()),
            (None, b) => b,
        };
        let perm = perm.as_deref();
        let cell_nodes = reorder(&space.dofmap.cell_nodes, nloc, perm);
        let rank = reorder(&slots.rank, nloc * nloc, perm);
        let patches_of = |cells, group| {
            let m = super::patch::PatchMesh {
                cell_nodes: &cell_nodes,
                nloc,
                cell_verts: &reorder(&mesh.cells, mesh.cell_type.num_vertices(), perm),
                nv: mesh.cell_type.num_vertices(),
                coords: &coords,
                row_ptr: &pattern.row_ptr,
                rank: &rank,
            };
            super::patch::Patches::grouped(&m, cells, group)
        };
        let (module, entry, patches) = match sc {
            Scheme::Patch { cells, batch, group } => {
                let p = patches_of(cells, group)?;
                let pc = super::patch::batch_of(p.max_cells, batch);
                let mut defs = super::patch::defines(el, pc, p.max_slots)?;
                defs.extend(extra.iter().map(|d| d.to_string()));
                let module = be.variant_module(&super::patch::HYPERELASTIC_PATCH, &defs)?;
                (module, "hyper_patch_assemble", Some(super::patch::DevicePatches::upload(be, el, &p, pc)?))
            }
            Scheme::TcPatch { cells, wpb, qc, group } => {
                let p = patches_of(cells, group)?;
                let turns = extra.iter().any(|e| TC_PATCH_TURNS.contains(e));
                let mut defs = tc_patch_defines(el, wpb, qc, p.max_slots, turns)?;
                defs.extend(extra.iter().filter(|e| !TC_PATCH_TURNS.contains(e)).map(|d| d.to_string()));
                let module = be.variant_module(&HYPERELASTIC, &defs)?;
                (module, "hyper_assemble", Some(super::patch::DevicePatches::upload_with(be, &p, 32 * wpb as u32, tc_patch_static_bytes(el, wpb, qc, turns))?))
            }
            Scheme::Moments { wpb } => {
                let mut defs = super::moments::defines(el, wpb)?;
                defs.extend(extra.iter().map(|d| d.to_string()));
                (be.variant_module(&super::moments::HYPERELASTIC_MOMENTS, &defs)?, super::moments::ENTRY, None)
            }
            Scheme::Recompute { wpb, .. } => {
                let mut defs = super::recompute::defines(el, wpb)?;
                defs.extend(extra.iter().map(|d| d.to_string()));
                (be.variant_module(&super::recompute::HYPERELASTIC_RECOMPUTE, &defs)?, "hyper_assemble", None)
            }
            _ => {
                let mut defs = defines_for(el, sc)?;
                // (`HK_ZERO_AHEAD=n`: the count is the host's, one module for every n)
                // (`HK_CHAIN_LEN=n`: the host's alone)
                defs.extend(extra.iter().filter(|d| !d.starts_with(super::chain::LEN_PREFIX)).map(|d| if d.starts_with(super::ahead::PREFIX) { super::ahead::PREFIX.to_string() } else { d.to_string() }));
                (be.variant_module(&HYPERELASTIC, &defs)?, "hyper_assemble", None)
            }
        };
        let recompute = match sc {
            Scheme::Recompute { wpb, kib } => {
                let records = extra.contains(&super::recompute::HR_RECORDS);
                Some(super::recompute::DeviceRecompute::new(be, &module, el, wpb, kib, &cell_nodes, &pattern.row_ptr, records)?)
            }
            _ => None,
        };
        let gather = match sc {
            Scheme::Gather { .. } => Some(DeviceGather::new(be, &module, &cell_nodes, nloc, &pattern.row_ptr, mesh.num_cells() * nloc * 6 * nloc)?),
            _ => None,
        };
        let upper = match (sc, extra.iter().any(|e| super::upper::TC_UPPER.contains(e))) {
            (Scheme::Tc { .. }, true) => Some(super::upper::DeviceUpper::new(be, &module, &pattern)?),
            (_, true) => return Err(Error::invalid(format!("the upper-triangle scatter (HK_UPPER) is the tensor-core scheme's, not {sc:?}'s"))),
            _ => None,
        };
        let blocks = match (sc, extra.iter().any(|e| super::blocks::TC_BLOCKS.contains(e))) {
            (Scheme::Tc { .. }, true) if extra.iter().any(|e| TC_COLS.contains(e)) && !tc_cols(el).is_empty() => Some(super::blocks::DeviceBlocks::new(be, &module, &pattern)?),
            (_, true) => return Err(Error::invalid(format!("the node-block scatter (HK_SCATTER_BLOCKS) is the tensor-core column walk's (HK_SCATTER_COLS, P2 tetrahedra), not {sc:?} with {extra:?}"))),
            _ => None,
        };
        let frames: Vec<f64> = reorder(&el.frames, 1, if el.frames.is_empty() { None } else { perm }).iter().flat_map(|r| r.iter().flat_map(|row| *row)).collect();
        let assemble = Kernel::from_module(&module, entry)?;
        if let Some(p) = &patches {
            super::patch::allow_shared(&assemble, p)?;
        }
        // (`HK_GRID=n`, tests: at most n blocks, so that each loops over several cells of a small mesh)
        let cap = extra.iter().find_map(|d| d.strip_prefix("HK_GRID=")).map(|n| n.parse::<u32>().map_err(|_| Error::invalid(format!("HK_GRID=`{n}`: expected a block count"))));
        let persist_blocks = match (sc, extra.iter().any(|d| *d == "HK_PERSIST")) {
            (Scheme::Tc { .. }, true) => Some(resident_blocks(be, &assemble, sc.launch().0)?.min(cap.transpose()?.unwrap_or(u32::MAX)).max(1)),
            _ => None,
        };
        let ahead = match (super::ahead::chunks_asked(extra)?, sc) {
            (None, _) => None,
            (Some(n), Scheme::Tc { .. }) if patches.is_none() && gather.is_none() && recompute.is_none() && upper.is_none() && blocks.is_none() && persist_blocks.is_none() => {
                Some(super::ahead::DeviceAhead::new(be, &super::ahead::Plan::new(&cell_nodes, nloc, &pattern.row_ptr, n)?)?)
            }
            (Some(_), _) => return Err(Error::invalid(format!("the zeroing under the kernel ({}) is the tensor-core scheme's with its own scatter, not {sc:?} with {extra:?}", super::ahead::PREFIX))),
        };
        let chain = match &chains {
            Some(ch) => Some(DeviceChain {
                nseg: u32::try_from(ch.len()).map_err(|_| Error::Unsupported(format!("{} segments in one launch", ch.len())))?,
                seg_ptr: be.upload(&ch.seg_ptr)?,
                links: be.upload(if ch.links.is_empty() { &[0u64][..] } else { &ch.links })?,
            }),
            None => None,
        };
        Ok(GpuHyper {
            chain,
            ahead,
            assemble,
            pressure_residual: Kernel::from_module(&module, "hyper_pressure_residual")?,
            pressure_jacobian: Kernel::from_module(&module, "hyper_pressure_jacobian")?,
            pressure_thickness: match el.plane_stress {
                true => Some((Kernel::from_module(&module, "hyper_pressure_thickness")?, Kernel::from_module(&module, "hyper_pressure_thickness_jacobian")?)),
                false => None,
            },
            ndofs: space.ndofs(),
            dim: el.dim,
            cell_verts: be.upload(&u32s(&reorder(&mesh.cells, mesh.cell_type.num_vertices(), perm), "vertex")?)?,
            coords: be.upload(&coords)?,
            cell_nodes: be.upload(&u32s(&cell_nodes, "node")?)?,
            tab: be.upload(&if matches!(sc, Scheme::Moments { .. }) { super::moments::tables(el) } else { tables(el) })?,
            frames: be.upload(if frames.is_empty() { &[0.0][..] } else { &frames })?,
            has_frames: i32::from(!frames.is_empty()),
            prm: be.upload(&el.law.params())?,
            // (the patch scheme reads its own places)
            kpos: be.upload(if patches.is_some() { &[0u16][..] } else { &rank[..] })?,
            ncells: mesh.num_cells(),
            scheme: sc,
            patches,
            gather,
            recompute,
            pattern,
            pressure: None,
            persist_blocks,
            upper,
            blocks,
            blocks_scratch: None,
        })
    }

    /// The scheme this system launches.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The patch scheme's (values its flush adds, of them stored plainly, static and dynamic shared
    /// memory per block); None for the others.
    pub fn patch_stats(&self) -> Option<(usize, usize, usize, usize)> {
        self.patches.as_ref().map(|p| (p.adds, p.stores, p.shared, p.dynamic))
    }

    /// Residual and (with `k`) Jacobian at `u`, the internal forces only (what tests compare).
    pub fn assemble(&self, be: &CudaBackend, u: &CudaVector, r: &mut CudaVector, k: Option<&mut DeviceCsr>) -> Result<()> {
        self.assemble_with(be, u, r, k, true)
    }

    /// [`Self::assemble`]; `zero: false` adds to the matrix values as they are (the kernel sweep
    /// times the kernel without the zeroing pass; the patch scheme stores the rows a patch owns).
    pub fn assemble_with(&self, be: &CudaBackend, u: &CudaVector, r: &mut CudaVector, k: Option<&mut DeviceCsr>, zero: bool) -> Result<()> {
        be.check("hyperelastic assembly", self.ndofs, &[u, r])?;
        be.fill(r, 0.0)?;
        let want_k = i32::from(k.is_some());
        let mut dummy;
        let mut k = k;
        // (`GALERKIN_HYPER_SCHEME=blocks`: the kernel adds to the scratch, converted below)
        let mut scratch = match (&self.blocks_scratch, k.is_some()) {
            (Some(m), true) => Some(m.lock().map_err(|_| Error::invalid("the node-block scratch's lock is poisoned"))?),
            _ => None,
        };
        let (row_ptr, vals) = match k.as_deref_mut() {
            Some(k) => {
                if k.nnz() != self.pattern.nnz() {
                    return Err(Error::dim("hyperelastic Jacobian entries", self.pattern.nnz(), k.nnz()));
                }
                // (node blocks: the blocks' row starts, the values in block order)
                let (row_ptr, vals) = match (&self.blocks, scratch.as_deref_mut()) {
                    (Some(b), Some(s)) => (&b.rows, s),
                    (Some(b), None) => (&b.rows, &mut k.values),
                    _ => (&k.row_ptr, &mut k.values),
                };
                // (the owner gather writes every value: nothing to zero; the chunks zero ahead)
                if zero && self.gather.is_none() && self.recompute.is_none() && self.ahead.is_none() {
                    match &self.upper {
                        Some(up) => up.zero(be, &k.row_ptr, &mut *vals)?,
                        None => be.zero_slice(&mut *vals)?,
                    }
                }
                (row_ptr, vals)
            }
            None => {
                dummy = be.alloc::<f64>(1)?;
                (&self.cell_verts, &mut dummy)
            }
        };
        let nc = self.ncells as u64;
        if nc == 0 {
            return Ok(());
        }
        if let Some(p) = &self.patches {
            let blocks = u32::try_from(p.npatch).map_err(|_| Error::Unsupported(format!("{} patches in one launch", p.npatch)))?;
            let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (p.threads, 1, 1), shared_mem_bytes: p.dynamic as u32 };
            if let Scheme::TcPatch { .. } = self.scheme {
                // (the tensor-core kernel's arguments, `ncells` the number of patches, then the patches')
                launch!(be, &self.assemble, cfg; &p.npatch, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
                    &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &self.kpos, &mut *vals,
                    &p.ptr, &p.cells, &p.pslot, &p.flush_ptr, &p.flush_pos, &p.flush_meta)?;
                return Ok(());
            }
            launch!(be, &self.assemble, cfg; &p.npatch, &p.ptr, &p.cells, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
                &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, &p.pslot, &p.flush_ptr, &p.flush_pos,
                &p.flush_meta, &mut *vals)?;
            return Ok(());
        }
        let (threads, cpb) = self.scheme.launch();
        let blocks = u32::try_from(nc.div_ceil(cpb as u64)).map_err(|_| Error::Unsupported(format!("{nc} cells in one launch")))?;
        let blocks = self.persist_blocks.map_or(blocks, |p| p.min(blocks));
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: 0 };
        if let (Some(rc), true) = (&self.recompute, want_k != 0) {
            let a = super::recompute::CellArgs {
                cell_verts: &self.cell_verts,
                coords: &self.coords,
                cell_nodes: &self.cell_nodes,
                tab: &self.tab,
                frames: &self.frames,
                has_frames: self.has_frames,
                prm: &self.prm,
                kpos: &self.kpos,
            };
            return rc.launch(be, &a, &u.data, &mut r.data, row_ptr, vals);
        }
        if let (Some(g), true) = (&self.gather, want_k != 0) {
            // The stage is scratch of this system, written here and read by the gather on the same stream.
            launch!(be, &self.assemble, cfg; &nc, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
                &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &self.kpos, &g.stage)?;
            return g.launch(be, row_ptr, &self.kpos, vals);
        }
        if let Some(za) = &self.ahead {
            return self.launch_ahead(be, za, u, r, want_k, row_ptr, vals, zero);
        }
        match &self.chain {
            // (a block per segment)
            Some(ch) => {
                let cfg = LaunchConfig { grid_dim: (ch.nseg.max(1), 1, 1), ..cfg };
                launch!(be, &self.assemble, cfg; &nc, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
                    &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &self.kpos, &mut *vals,
                    &ch.seg_ptr, &ch.links, &ch.nseg)?
            }
            None => launch!(be, &self.assemble, cfg; &nc, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
                &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &self.kpos, &mut *vals)?,
        }
        if let (Some(up), true) = (&self.upper, want_k != 0) {
            up.fill(be, row_ptr, vals)?;
        }
        match (&self.blocks, scratch.as_deref(), k.as_deref_mut()) {
            (Some(b), Some(s), Some(k)) => b.to_csr(be, s, &mut k.values),
            _ => Ok(()),
        }
    }

    /// The launches of `HK_ZERO_AHEAD`: with the Jacobian and `zero`, a cell-less launch zeroing the
    /// first chunk's values, then each chunk's cells zeroing the next's; else one launch, nothing zeroed.
    #[allow(clippy::too_many_arguments)]
    fn launch_ahead(&self, be: &CudaBackend, za: &super::ahead::DeviceAhead, u: &CudaVector, r: &mut CudaVector, want_k: i32, row_ptr: &CudaSlice<u32>, vals: &mut CudaSlice<f64>, zero: bool) -> Result<()> {
        let (threads, cpb) = self.scheme.launch();
        let nc = self.ncells as u64;
        let (nloc, nv) = (self.cell_nodes.len() / self.ncells, self.cell_verts.len() / self.ncells);
        let cfg = |blocks: u64| -> Result<LaunchConfig> {
            let b = u32::try_from(blocks.max(1)).map_err(|_| Error::Unsupported(format!("{blocks} blocks in one launch")))?;
            Ok(LaunchConfig { grid_dim: (b, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: 0 })
        };
        let none = 0u32;
        if want_k == 0 || !zero {
            let l0 = &za.lists[0].0;
            return launch!(be, &self.assemble, cfg(nc.div_ceil(cpb as u64))?; &nc, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
                &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &self.kpos, &mut *vals, l0, &none);
        }
        let (l0, n0) = (&za.lists[0].0, za.lists[0].1);
        launch!(be, &self.assemble, cfg(u64::from(n0).min(1 << 16))?; &0u64, &self.cell_verts, &self.coords, &self.cell_nodes, &self.tab,
            &self.frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &self.kpos, &mut *vals, l0, &n0)?;
        let k = za.bounds.len() - 1;
        for j in 0..k {
            let (c0, c1) = (za.bounds[j], za.bounds[j + 1]);
            let (l, n) = match za.lists.get(j + 1) {
                Some((l, n)) => (l, *n),
                None => (l0, 0),
            };
            let ncj = (c1 - c0) as u64;
            let verts = self.cell_verts.slice(c0 * nv..c1 * nv);
            let nodes = self.cell_nodes.slice(c0 * nloc..c1 * nloc);
            let frames = if self.has_frames != 0 { self.frames.slice(c0 * 9..c1 * 9) } else { self.frames.slice(..) };
            let kpos = self.kpos.slice(c0 * nloc * nloc..c1 * nloc * nloc);
            launch!(be, &self.assemble, cfg(ncj.div_ceil(cpb as u64))?; &ncj, &verts, &self.coords, &nodes, &self.tab,
                &frames, &self.has_frames, &self.prm, &u.data, &mut r.data, &want_k, row_ptr, &kpos, &mut *vals, l, &n)?;
        }
        Ok(())
    }

    /// The Jacobian kernel as compiled for this device: registers per thread, static shared memory
    /// per block and blocks resident per SM (the driver's occupancy; what bounds the tensor-core
    /// scheme's warps an SM — the twenty-second pass's `sty`/`minbN` sweep rows print it).
    pub fn assemble_stats(&self) -> Result<(usize, usize, u32)> {
        let regs = self
            .assemble
            .func
            .get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
            .map_err(|e| Error::Unsupported(format!("registers of hyper_assemble: {e}")))?;
        let (threads, _) = self.scheme.launch();
        let per_sm = self
            .assemble
            .func
            .occupancy_max_active_blocks_per_multiprocessor(threads as u32, 0, None)
            .map_err(|e| Error::Unsupported(format!("occupancy of hyper_assemble: {e}")))?;
        Ok((regs.max(0) as usize, self.assemble.static_shared()?, per_sm))
    }

    /// The node-block storage ([`super::blocks`], `HK_SCATTER_BLOCKS`); None for the other scatters.
    /// Where set (and not `GALERKIN_HYPER_SCHEME=blocks`), the matrix's values are in block order.
    pub fn blocks(&self) -> Option<&super::blocks::DeviceBlocks> {
        self.blocks.as_ref()
    }

    /// y = K x for a Jacobian `k` this system assembled in block order (`HK_SCATTER_BLOCKS`).
    pub fn block_spmv(&self, be: &CudaBackend, k: &DeviceCsr, x: &CudaVector, y: &mut CudaVector) -> Result<()> {
        match (&self.blocks, &self.blocks_scratch) {
            (Some(b), None) => b.spmv(be, &k.values, x, y),
            _ => Err(Error::invalid("block_spmv: the matrix is not in node-block order")),
        }
    }

    /// `out`'s values = those of `k` (assembled in block order) in CSR order, on the device.
    pub fn blocks_to_csr(&self, be: &CudaBackend, k: &DeviceCsr, out: &mut DeviceCsr) -> Result<()> {
        match (&self.blocks, &self.blocks_scratch) {
            (Some(b), None) => b.to_csr(be, &k.values, &mut out.values),
            _ => Err(Error::invalid("blocks_to_csr: the matrix is not in node-block order")),
        }
    }

    /// The upper-triangle scatter's two passes ([`super::upper`]); None for the other scatters.
    pub fn upper(&self) -> Option<&super::upper::DeviceUpper> {
        self.upper.as_ref()
    }

    /// The recomputing gather's blocks ([`Scheme::Recompute`]); None for the others.
    pub fn recompute_blocks(&self) -> Option<&super::recompute::Blocks> {
        self.recompute.as_ref().map(|rc| &rc.blocks)
    }

    /// The owner gather alone ([`Scheme::Gather`]): `k`'s values from the element matrices the last
    /// assembly staged (the benchmark's "scatter alone" of this scheme); an error for other schemes.
    pub fn gather_only(&self, be: &CudaBackend, k: &mut DeviceCsr) -> Result<()> {
        let Some(g) = &self.gather else { return Err(Error::invalid("gather_only: the scheme is not the owner gather")) };
        if k.nnz() != self.pattern.nnz() {
            return Err(Error::dim("hyperelastic Jacobian entries", self.pattern.nnz(), k.nnz()));
        }
        g.launch(be, &k.row_ptr, &self.kpos, &mut k.values)
    }

}

impl HyperSystem<CudaBackend> for GpuHyper {
    fn ndofs(&self) -> usize {
        self.ndofs
    }
    fn components(&self) -> usize {
        self.dim
    }
    /// The Jacobian with its values in compressible memory where the device has it (thirty-fifth
    /// pass: the zeroing before each assembly and the scatter's reads of the zeroed lines cost less),
    /// zeroed on the device: every assembly overwrites them, so the pattern's zeros (0.66 GB at 10⁶
    /// P2 dofs) are not uploaded.
    fn new_matrix(&self, be: &CudaBackend) -> Result<DeviceCsr> {
        DeviceCsr::pattern_from_host_compressible(be, &self.pattern)
    }
    fn internal(&mut self, be: &CudaBackend, u: &CudaVector, r: &mut CudaVector, k: Option<&mut DeviceCsr>) -> Result<()> {
        self.assemble(be, u, r, k)
    }
    fn set_pressure(&mut self, be: &CudaBackend, p: &FollowerPressure) -> Result<()> {
        if p.is_empty() {
            self.pressure = None;
            return Ok(());
        }
        let f = p.flat()?;
        if f.dim != self.dim {
            return Err(Error::dim("follower pressure components", self.dim, f.dim));
        }
        let nf = f.nodes.len() / f.m.max(1);
        let int = |v: usize, what: &str| i32::try_from(v).map_err(|_| Error::Unsupported(format!("{v} pressure {what}")));
        if f.thick.is_some() != self.pressure_thickness.is_some() {
            return Err(Error::invalid("a follower pressure's model (plane stress or not) differs from the element's"));
        }
        let thick = match &f.thick {
            Some(t) => Some(DeviceThickness {
                nloc: int(t.nloc, "cell nodes")?,
                nodes: be.upload(&t.nodes)?,
                frames: be.upload(&t.frames)?,
                grads: be.upload(&t.grads)?,
                positions: be.upload(&t.positions)?,
                values: be.alloc::<f64>((nf * f.np * 5).max(1))?,
            }),
            None => None,
        };
        self.pressure = Some(DevicePressure {
            dim: f.dim as i32,
            nf: nf as u64,
            m: int(f.m, "facet nodes")?,
            np: int(f.np, "facet points")?,
            nodes: be.upload(&f.nodes)?,
            points: be.upload(&f.points)?,
            positions: be.upload(&f.positions)?,
            tangents: be.alloc::<f64>((nf * f.np * 6).max(1))?,
            thick,
            no_thick: be.alloc::<f64>(1)?,
        });
        Ok(())
    }
    fn add_pressure(&mut self, be: &CudaBackend, u: &CudaVector, lf: f64, r: &mut CudaVector, k: Option<&mut DeviceCsr>) -> Result<()> {
        let Some(p) = &mut self.pressure else { return Err(Error::invalid("pressure terms asked for before the pressure was set")) };
        be.check("hyperelastic pressure", self.ndofs, &[u, r])?;
        let npts = p.nf * p.np as u64;
        if npts == 0 {
            return Ok(());
        }
        if let (Some(t), Some((kt, _))) = (&mut p.thick, &self.pressure_thickness) {
            launch!(be, kt, be.grid(npts); &p.nf, &p.np, &t.nloc, &t.nodes, &t.frames, &t.grads, &self.prm, &u.data, &mut t.values)?;
        }
        let has_th = i32::from(p.thick.is_some());
        let th = p.thick.as_ref().map_or(&p.no_thick, |t| &t.values);
        launch!(be, &self.pressure_residual, be.grid(npts); &p.dim, &p.nf, &p.m, &p.np, &p.nodes, &p.points, &u.data, &lf, &has_th, th, &mut p.tangents, &mut r.data)?;
        if let Some(k) = k {
            let n = p.nf * (p.dim * p.dim) as u64 * (p.m as u64) * (p.m as u64);
            launch!(be, &self.pressure_jacobian, be.grid(n); &p.dim, &p.nf, &p.m, &p.np, &p.points, &lf, &p.tangents, &p.positions, &mut k.values)?;
            if let (Some(t), Some((_, kj))) = (&p.thick, &self.pressure_thickness) {
                let n = p.nf * 4 * (p.m as u64) * (t.nloc as u64);
                launch!(be, kj, be.grid(n); &p.nf, &p.m, &p.np, &t.nloc, &p.points, &lf, &p.tangents, &t.values, &t.grads, &t.positions, &mut k.values)?;
            }
        }
        Ok(())
    }
}

pub use super::variants::{compile_checked, compile_variants};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate::box_mesh, CellType};
    use std::sync::Arc;

    fn element(cell: CellType, degree: usize) -> HyperElement {
        let mesh = Arc::new(box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], cell).unwrap());
        let space = Arc::new(crate::space::FunctionSpace::lagrange(mesh, degree, 3).unwrap());
        HyperElement::new(space, super::super::Law::Svk { lambda: 1.0, mu: 1.0 }, Vec::new()).unwrap()
    }

    /// The tensor-core scheme applies to P1/P2 tetrahedra on FP64-tensor-core devices only, its
    /// shared memory (one P2 cell per block: 16 944 B, what ptxas reports) fits, shapes beyond
    /// 48 KiB are refused by name, and the default is the tensor-core scheme where it applies
    /// (column pairs on older devices and on hexahedra).
    #[test]
    fn tensor_core_scheme_where_it_applies() {
        for degree in [1, 2] {
            let el = element(CellType::Tetrahedron, degree);
            assert!(tc_applies(&el, (9, 0)) && tc_applies(&el, (8, 0)) && !tc_applies(&el, (7, 5)));
            assert_eq!(tc_default(&el), Scheme::Tc { wpb: 1, qc: 3, wpc: 1 });
            assert_eq!(default_scheme(&el, (9, 0)).unwrap(), tc_default(&el));
            assert!(matches!(default_scheme(&el, (7, 5)).unwrap(), Scheme::Pairs(_)));
        }
        let p2 = element(CellType::Tetrahedron, 2);
        assert_eq!(p2.quad.len(), 14);
        assert_eq!(tc_shared_bytes(&p2, 1, 4), 16_944);
        assert_eq!(tc_shared_bytes(&p2, 1, 3), 15_312);
        assert!(defines_for(&p2, Scheme::Tc { wpb: 2, qc: 4, wpc: 1 }).unwrap().contains(&"WPB=2".to_string()));
        let e = defines_for(&p2, Scheme::Tc { wpb: 4, qc: 4, wpc: 1 }).unwrap_err().to_string();
        assert!(e.contains("tensor-core") && e.contains("48 KiB"), "{e}");
        // The column-pair default for P2 is 8 cells × 4 points (44 800 B).
        assert_eq!(shape(&p2).unwrap(), Shape { gt: 16, cpb: 8, qb: 4 });
        for degree in [1, 2] {
            let hex = element(CellType::Hexahedron, degree);
            assert!(!tc_applies(&hex, (9, 0)));
            assert!(matches!(default_scheme(&hex, (9, 0)).unwrap(), Scheme::Pairs(_)));
        }
        // The stiffness rule at P2: 4 points, whose records (4 × 59) are smaller than the element
        // matrix's upper blocks (10 × 60) the staged scatter keeps there: those size the space.
        let space = p2.space.clone();
        let st = HyperElement::with_degree(space.clone(), p2.law, Vec::new(), Some(crate::hyperelastic::element::stiffness_quadrature_degree(&space))).unwrap();
        assert_eq!(st.quad.len(), 4);
        assert!(tc_applies(&st, (9, 0)));
        assert_eq!(tc_shared_bytes(&st, 1, 3), 11_104);
        assert_eq!(tc_shared_bytes(&st, 1, 4), 12_736);
    }

    /// `HK_ST_Y` (the staged blocks in Y's space) applies where 3·qc rows of Y hold the NLOC × 6·NLOC
    /// blocks: P2 (Y rows of 68 against 600 values) from 3 points a chunk, P1 (36 against 96) from 1;
    /// elsewhere it is left out (the kernel would refuse it).
    #[test]
    fn staged_blocks_in_y_where_they_fit() {
        let (p1, p2) = (element(CellType::Tetrahedron, 1), element(CellType::Tetrahedron, 2));
        for qc in [3, 4] {
            assert_eq!(tc_st_y(&p2, qc, TC_ST_Y), TC_ST_Y);
        }
        assert!(tc_st_y(&p2, 2, TC_ST_Y_MINB).is_empty());
        assert_eq!(tc_st_y(&p1, 1, TC_ST_Y_MINB), TC_ST_Y_MINB);
        assert_eq!(tc_qc(tc_default(&p2)), 3);
        assert_eq!(tc_qc(Scheme::Pairs(shape(&p2).unwrap())), 0);
    }

    /// Y's row stride is ≡ 4 (mod 16) doubles and holds the 6·NLOC columns and the residual's 3
    /// (P2: 68, P1: 36); [`tc_fuse`] takes every point of a rule of at most 4 in one chunk (P2's
    /// stiffness rule: 12 736 B a cell) and the default's chunks otherwise (P2's full rule).
    #[test]
    fn fused_shape_and_y_stride() {
        assert_eq!((y_stride(10), y_stride(4)), (68, 36));
        for nloc in 1..=16 {
            assert!(y_stride(nloc) % 16 == 4 && y_stride(nloc) >= 6 * nloc + 3, "{nloc}");
        }
        let p2 = element(CellType::Tetrahedron, 2);
        assert_eq!(tc_fuse(&p2), tc_default(&p2));
        let st = HyperElement::with_degree(p2.space.clone(), p2.law, Vec::new(), Some(crate::hyperelastic::element::stiffness_quadrature_degree(&p2.space))).unwrap();
        assert_eq!(tc_fuse(&st), Scheme::Tc { wpb: 1, qc: 4, wpc: 1 });
        assert_eq!(tc_shared_bytes(&st, 1, 4), 12_736);
        assert!(defines_for(&st, tc_fuse(&st)).is_ok());
    }

    /// Which scheme each rule gets by default (round 24): P2 at the stiffness rule's 4 points the
    /// fused law with Y's space and 20 cells an SM; P2 at the full 14-point rule, P1 and devices
    /// without FP64 tensor cores what they had.
    #[test]
    fn the_default_by_the_rules_point_count() {
        let p2 = element(CellType::Tetrahedron, 2);
        assert_eq!(p2.quad.len(), 14);
        assert_eq!(default_variant(&p2, (9, 0)).unwrap(), (tc_default(&p2), TC_COLS.to_vec()));
        let st = HyperElement::with_degree(p2.space.clone(), p2.law, Vec::new(), Some(crate::hyperelastic::element::stiffness_quadrature_degree(&p2.space))).unwrap();
        assert_eq!(st.quad.len(), 4);
        let (sc, defs) = default_variant(&st, (9, 0)).unwrap();
        assert_eq!(sc, Scheme::Tc { wpb: 1, qc: 4, wpc: 1 });
        assert_eq!(defs, ["HK_FUSE", "HK_RES_MMA=1", "HK_ST_Y", "HK_MINB=20", "HK_SCATTER_COLS"]);
        assert!(defines_for(&st, sc).is_ok());
        let p1 = element(CellType::Tetrahedron, 1);
        assert_eq!(default_variant(&p1, (9, 0)).unwrap(), (tc_default(&p1), Vec::new()));
        assert!(matches!(default_variant(&st, (7, 5)).unwrap(), (Scheme::Pairs(_), ref d) if d.is_empty()));
        // Round 26's trimmed default: only where the default is the fused law (P2 at ≤ 4 points).
        let (tsc, tdefs) = trim_variant(&st, (9, 0)).unwrap().expect("P2 at 4 points is fused");
        assert_eq!(tsc, sc);
        assert_eq!(tdefs, ["HK_FUSE", "HK_RES_MMA=1", "HK_ST_Y", "HK_MINB=20", "HK_SCATTER_COLS", "HK_TRIM"]);
        assert_eq!(trim_variant(&p2, (9, 0)).unwrap(), None);
        assert_eq!(trim_variant(&p1, (9, 0)).unwrap(), None);
        assert_eq!(trim_variant(&st, (7, 5)).unwrap(), None);
    }
}
