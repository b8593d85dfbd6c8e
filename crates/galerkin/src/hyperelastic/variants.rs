//! The NVRTC variants of the hyperelastic kernels that CI compiles (`tests/cuda_kernels_compile.rs`):
//! every element, law and scheme of [`super::cuda`] with the sweep's defines, an error on any warning,
//! so that no opt-in scheme's source rots while the default runs.
use super::cuda::*;
use super::element::HyperElement;
use crate::backend::cuda::jit::{self, KernelSource};
use crate::{Error, Result};

/// Compiles `src` for `arch` with each set of defines, with NVRTC only (what CI runs), appending
/// (defines, PTX bytes) to `out`; an error naming the file and the defines on any warning.
pub fn compile_checked(src: &KernelSource, arch: &str, variants: Vec<Vec<String>>, out: &mut Vec<(Vec<String>, usize)>) -> Result<()> {
    for d in variants {
        let c = jit::compile_ptx_with(src, arch, &d)?;
        if c.log.to_ascii_lowercase().contains("warning") {
            return Err(Error::invalid(format!("NVRTC warnings in {} for {d:?}:\n{}", src.file, c.log)));
        }
        out.push((d, c.ptx.len()));
    }
    Ok(())
}

/// The defines of [`tc_patch_default`] (with `turns`: [`TC_PATCH_TURNS`], 2 warps) for the patches
/// its builder makes of `el`'s mesh (what CI compiles; the slot count from
/// [`super::patch::Patches::of_space`], never a constant).
fn tc_patch_variant(el: &HyperElement, turns: bool) -> Result<Vec<String>> {
    match tc_patch_default(el) {
        Scheme::TcPatch { cells, wpb, qc, group } => {
            let nslot = super::patch::Patches::of_space(&el.space, cells, group)?.max_slots;
            tc_patch_defines(el, if turns { 2 } else { wpb }, qc, nslot, turns)
        }
        other => Err(Error::invalid(format!("tc_patch_default gave {other:?}"))),
    }
}

/// Compiles the kernel for tetrahedra and hexahedra (3D) and triangles and quadrilaterals (plane
/// strain and plane stress) of degree 1 and 2 with every law (the column-pair scheme, and the tensor-core scheme for
/// tetrahedra), for `arch`, with NVRTC only (what CI runs): (defines,
/// PTX bytes), an error on any warning.
pub fn compile_variants(arch: &str) -> Result<Vec<(Vec<String>, usize)>> {
    use crate::mesh::{generate::box_mesh, generate::rectangle, CellType};
    use std::sync::Arc;
    let mut out = Vec::new();
    for cell in [CellType::Tetrahedron, CellType::Hexahedron, CellType::Triangle, CellType::Quadrilateral] {
        let dim = cell.dim();
        let mesh = Arc::new(if dim == 3 { box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], cell)? } else { rectangle(1, 1, [0.0; 2], [1.0; 2], cell)? });
        for degree in [1, 2] {
            let space = Arc::new(crate::space::FunctionSpace::lagrange(mesh.clone(), degree, dim)?);
            for law in [super::Law::Svk { lambda: 1.0, mu: 1.0 }, super::Law::NeoHookean { lambda: 1.0, mu: 1.0 }, super::Law::Usyk { c: 1.0, bf: 1.0, bt: 1.0, bfs: 1.0, kappa: 1.0 }] {
                let frame = if dim == 3 { super::frame_from_fibre([1.0, 0.0, 0.0])? } else { super::element::frame_from_fibre_2d([1.0, 0.0])? };
                let frames = if law.anisotropic() { vec![frame; mesh.num_cells()] } else { Vec::new() };
                let el = HyperElement::new(space.clone(), law, frames.clone())?;
                let mut variants = vec![defines(&el)?];
                if dim == 2 {
                    variants.push(defines(&el.clone().plane_stress(true)?)?);
                }
                // The seventeenth pass's recomputing gather (its own source): both rules, 4 warps
                // per block, and 8 at P2 (the sweep's).
                let mut recompute = Vec::new();
                // The stiffness rule (`physics.quadrature = "stiffness"`) on tetrahedra: P2 has 4
                // points, fewer than the staged scatter's blocks need without the larger record space.
                if cell == CellType::Tetrahedron {
                    let st = HyperElement::with_degree(space.clone(), law, frames, Some(super::element::stiffness_quadrature_degree(&space)))?;
                    variants.push(defines(&st)?);
                    variants.push(defines_for(&st, tc_default(&st))?);
                    variants.push(defines_for(&st, Scheme::Tc { wpb: 1, qc: st.quad.len().min(4), wpc: 1 })?);
                    if tc_applies(&st, (9, 0)) {
                        // The eighteenth pass's persistent kernel at the stiffness rule (the sweep's).
                        let prefetch = TC_PREFETCH.iter().chain(TC_COLS).map(|e| e.to_string());
                        variants.push([defines_for(&st, tc_default(&st))?, prefetch.collect()].concat());
                        variants.push(tc_patch_variant(&st, false)?);
                        variants.push(tc_patch_variant(&st, true)?);
                        let wide = TC_LAW_WIDE.iter().chain(tc_cols(&st)).map(|e| e.to_string());
                        variants.push([defines_for(&st, tc_wide(&st))?, wide.collect()].concat());
                        // The twenty-first pass's upper-triangle scatter (the default's and the sweep's).
                        let upper = super::upper::TC_UPPER.iter().chain(tc_cols(&st)).map(|e| e.to_string());
                        variants.push([defines_for(&st, tc_default(&st))?, upper.collect()].concat());
                        // The twenty-second pass's staged blocks in Y's space, with register caps
                        // (the sweep's, `sty`'s) and without the scatter (the sweep's).
                        let qc = tc_qc(tc_default(&st));
                        for extra in [&[] as &[&str], &["HK_MINB=20"], &["HK_MINB=24"], &["HK_NO_SCATTER", "HK_MINB=20"]] {
                            let sty = tc_st_y(&st, qc, TC_ST_Y).iter().chain(tc_cols(&st)).chain(extra);
                            variants.push([defines_for(&st, tc_default(&st))?, sty.map(|e| e.to_string()).collect()].concat());
                        }
                        // The twenty-third pass's fused law (`fuse`'s, the sweep's: its shape, the
                        // default's, without the scatter, and the default's shape with the column
                        // scatter and no fusion).
                        let fuse = |sc: Scheme, extra: &[&str]| -> Result<Vec<String>> {
                            Ok([defines_for(&st, sc)?, TC_FUSE.iter().chain(extra).map(|e| e.to_string()).collect()].concat())
                        };
                        variants.push(fuse(tc_fuse(&st), tc_cols(&st))?);
                        variants.push(fuse(tc_fuse(&st), &["HK_NO_SCATTER"])?);
                        // with the staged blocks in Y's space, alone and with 20 cells an SM (the sweep's)
                        let fsty = tc_st_y(&st, tc_qc(tc_fuse(&st)), TC_ST_Y);
                        variants.push(fuse(tc_fuse(&st), &[fsty, tc_cols(&st)].concat())?);
                        variants.push(fuse(tc_fuse(&st), &[fsty, tc_cols(&st), &["HK_MINB=20"]].concat())?);
                        // Round 24 (P2, the column scatter): the default at this rule and its sweep's
                        // timing rows (no scatter, plain stores, 2 rows of every 5 added).
                        let (dsc, ddefs) = default_variant(&st, (9, 0))?;
                        // The thirty-first pass: the default with the zeroing under the kernel.
                        variants.push([defines_for(&st, dsc)?, ddefs.iter().chain(&["HK_ZERO_AHEAD=8"]).map(|e| e.to_string()).collect()].concat());
                        if !tc_cols(&st).is_empty() {
                            variants.push([defines_for(&st, dsc)?, ddefs.iter().map(|e| e.to_string()).collect()].concat());
                            // Round 25: the default and `tc cols` scattering whole node blocks (tested, swept).
                            variants.push([defines_for(&st, dsc)?, ddefs.iter().chain(super::blocks::TC_BLOCKS).map(|e| e.to_string()).collect()].concat());
                            variants.push([defines_for(&st, tc_default(&st))?, TC_COLS.iter().chain(super::blocks::TC_BLOCKS).map(|e| e.to_string()).collect()].concat());
                            for extra in [&["HK_NO_SCATTER"][..], &["HK_PLAIN_STORE"], &["HK_SCATTER_KEEP=2"]] {
                                let defs = ddefs.iter().filter(|d| !(extra[0] == "HK_NO_SCATTER" && **d == "HK_SCATTER_COLS")).chain(extra);
                                variants.push([defines_for(&st, dsc)?, defs.map(|e| e.to_string()).collect()].concat());
                            }
                            // The thirty-fourth pass: the default carrying shared blocks along segments,
                            // alone and scattering blocks (tested, swept).
                            for extra in [super::chain::TC_CHAIN.to_vec(), [super::chain::TC_CHAIN, super::blocks::TC_BLOCKS].concat()] {
                                variants.push([defines_for(&st, dsc)?, ddefs.iter().chain(extra.iter()).map(|e| e.to_string()).collect()].concat());
                            }
                            // Round 26: the default trimmed, alone, scattering blocks and without the
                            // scatter (tested, swept); round 34: carrying, alone and scattering blocks.
                            if let Some((tsc, tdefs)) = trim_variant(&st, (9, 0))? {
                                for extra in [&[][..], super::blocks::TC_BLOCKS, &["HK_NO_SCATTER"], super::chain::TC_CHAIN, &[super::chain::TC_CHAIN, super::blocks::TC_BLOCKS].concat()] {
                                    let defs = tdefs.iter().filter(|d| !(extra.first() == Some(&"HK_NO_SCATTER") && **d == "HK_SCATTER_COLS")).chain(extra);
                                    variants.push([defines_for(&st, tsc)?, defs.map(|e| e.to_string()).collect()].concat());
                                }
                            }
                        }
                        if tc_fuse(&st) != tc_default(&st) {
                            variants.push(fuse(tc_default(&st), tc_cols(&st))?);
                            variants.push([defines_for(&st, tc_fuse(&st))?, tc_cols(&st).iter().map(|e| e.to_string()).collect()].concat());
                        }
                    }
                    recompute.push(super::recompute::defines(&el, 4)?);
                    recompute.push(super::recompute::defines(&st, 4)?);
                    if degree == 2 {
                        recompute.push(super::recompute::defines(&el, 8)?);
                    }
                    // the staged law records (both rules at P2 have ≤ 32 points)
                    for e in [&el, &st] {
                        if e.quad.len() <= 32 {
                            recompute.push([super::recompute::defines(e, 16)?, vec![super::recompute::HR_RECORDS.to_string()]].concat());
                        }
                    }
                }
                if tc_applies(&el, (9, 0)) {
                    let tc = defines_for(&el, tc_default(&el))?;
                    variants.push(tc.clone());
                    // The fifth pass's scatter straight from the mma fragments (tested, swept).
                    variants.push([tc.clone(), vec!["HK_FRAG_SCATTER".to_string()]].concat());
                    // The twelfth pass's products: the residual in the GEMM, paired accesses, two
                    // warps per cell (tested, swept).
                    let lean: Vec<String> = TC_LEAN.iter().map(|e| e.to_string()).collect();
                    variants.push([tc.clone(), lean.clone()].concat());
                    // The sixteenth pass's owner gather: the kernel staging its blocks, and the gather.
                    variants.push(defines_for(&el, Scheme::Gather { qc: match tc_default(&el) { Scheme::Tc { qc, .. } => qc, _ => 1 } })?);
                    variants.push([tc.clone(), vec!["HK_STAGE".to_string(), "HG_WPB=2".to_string()]].concat());
                    // The eighteenth pass: the blocks looping over cells, with and without the
                    // next cell's record copied ahead (tested, swept).
                    let prefetch: Vec<String> = TC_PREFETCH.iter().map(|e| e.to_string()).collect();
                    let cols: Vec<String> = TC_COLS.iter().map(|e| e.to_string()).collect();
                    variants.push([tc.clone(), prefetch.clone()].concat());
                    variants.push([tc.clone(), prefetch.clone(), cols.clone()].concat());
                    variants.push([tc.clone(), cols.clone()].concat());
                    variants.push([tc.clone(), vec!["HK_PERSIST".to_string()]].concat());
                    // The nineteenth pass: the products with the patches' pre-summed scatter.
                    variants.push(tc_patch_variant(&el, false)?);
                    variants.push(tc_patch_variant(&el, true)?);
                    // The twentieth pass: the law spread over the block's cells (tested, swept).
                    let wide: Vec<String> = TC_LAW_WIDE.iter().chain(tc_cols(&el)).map(|e| e.to_string()).collect();
                    variants.push([defines_for(&el, tc_wide(&el))?, wide.clone()].concat());
                    variants.push([defines_for(&el, Scheme::Tc { wpb: 2, qc: 1, wpc: 1 })?, wide].concat());
                    // The twenty-first pass: the upper-triangle scatter, with the column scatter
                    // where it applies and with the flat walk (tested, swept).
                    let upper: Vec<String> = super::upper::TC_UPPER.iter().map(|e| e.to_string()).collect();
                    if !tc_cols(&el).is_empty() {
                        variants.push([tc.clone(), upper.clone(), tc_cols(&el).iter().map(|e| e.to_string()).collect()].concat());
                        // Round 25: the node-block scatter with one and two warps a cell (tested).
                        let blocks: Vec<String> = TC_COLS.iter().chain(super::blocks::TC_BLOCKS).map(|e| e.to_string()).collect();
                        variants.push([tc.clone(), blocks.clone()].concat());
                        if let Scheme::Tc { wpb, qc, .. } = tc_default(&el) {
                            variants.push([defines_for(&el, Scheme::Tc { wpb, qc, wpc: 2 })?, blocks].concat());
                        }
                    }
                    variants.push([tc.clone(), upper].concat());
                    // The twenty-second pass: the staged blocks in Y's space (tested).
                    let sty = tc_st_y(&el, tc_qc(tc_default(&el)), TC_ST_Y_MINB).iter().chain(tc_cols(&el));
                    variants.push([tc.clone(), sty.map(|e| e.to_string()).collect()].concat());
                    // The twenty-third pass: the fused law (tested), at the full rule's chunks.
                    variants.push([defines_for(&el, tc_fuse(&el))?, TC_FUSE.iter().chain(tc_cols(&el)).map(|e| e.to_string()).collect()].concat());
                    variants.push([tc, TC_FUSE.iter().chain(tc_cols(&el)).chain(&["HK_MINB=16"]).map(|e| e.to_string()).collect()].concat());
                    if let Scheme::Tc { wpb, qc, .. } = tc_default(&el) {
                        let split = defines_for(&el, Scheme::Tc { wpb, qc, wpc: 2 })?;
                        variants.push([split.clone(), prefetch, cols].concat());
                        variants.push(split.clone());
                        variants.push([split.clone(), lean.clone()].concat());
                        variants.push([split, lean, vec!["HK_FRAG_SCATTER".to_string()]].concat());
                    }
                }
                // The kernel sweep's variants (`bench.rs::kernel_sweep`), once: P2 tetrahedra, the fibre law.
                if cell == CellType::Tetrahedron && degree == 2 && law.anisotropic() {
                    let (pairs, tc) = (defines(&el)?, defines_for(&el, tc_default(&el))?);
                    for extra in [&["HK_TRIVIAL_LAW"][..], &["HK_NO_SCATTER"], &["HK_TRIVIAL_LAW", "HK_NO_SCATTER"], &["HK_POS_SHARED"]] {
                        variants.push([pairs.clone(), extra.iter().map(|e| e.to_string()).collect()].concat());
                    }
                    // (not `HK_SCATTER_ONLY`: a timing variant whose unused arrays draw warnings)
                    for extra in [&["HK_TRIVIAL_LAW"][..], &["HK_NO_SCATTER"], &["HK_TRIVIAL_LAW", "HK_NO_SCATTER"], &["HK_MINB=16"], &["HK_POS_SHARED"], &["HK_PLAIN_STORE"], &["HK_CONTIG=1000"], &["HK_RES_MMA=1"], &["HK_VEC=1"], &["HK_RES_MMA=1", "HK_VEC=1", "HK_TRIVIAL_LAW", "HK_NO_SCATTER"], &["HK_PERSIST", "HK_PREFETCH", "HK_NO_SCATTER"], &["HK_PERSIST", "HK_PREFETCH", "HK_TRIVIAL_LAW", "HK_NO_SCATTER"], &["HK_PERSIST", "HK_PREFETCH", "HK_RES_MMA=1", "HK_VEC=1"]] {
                        variants.push([tc.clone(), extra.iter().map(|e| e.to_string()).collect()].concat());
                    }
                }
                compile_checked(&HYPERELASTIC, arch, variants, &mut out)?;
                compile_checked(&super::recompute::HYPERELASTIC_RECOMPUTE, arch, recompute, &mut out)?;
            }
        }
    }
    Ok(out)
}
