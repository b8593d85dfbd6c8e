//! The moments scheme of the GPU Jacobian assembly (`kernels/hyperelastic_moments.cu`, products in
//! `kernels/hyperelastic_moments.cuh`): on an affine P2 tetrahedron ∇N_i is linear in the
//! barycentrics, so the element matrix is an exact contraction of 15 per-cell moments
//! M_mn = Σ_q w_q λ_m λ_n 𝔸_q (λ₄ ≡ 1) with the constant ∇λ_k: the law stays per point, but the
//! products no longer grow with the rule (thirteenth pass in BENCHMARKS.md). One warp per cell,
//! the staged atomic scatter of the tensor-core scheme, the same kernel arguments as `hyper_assemble`;
//! its table is the standard one with the points' barycentrics appended.
use super::element::HyperElement;
use crate::backend::cuda::jit::KernelSource;
use crate::mesh::CellType;
use crate::{Error, Result};

/// The kernel source: the law, `hyperelastic.cu` (its shared prologue and staged scatter, no
/// `hyper_assemble` without GT or WPB, and the follower-pressure kernels), the products, the kernel.
pub const HYPERELASTIC_MOMENTS: KernelSource = hyper_kernel_source!("hyperelastic_moments.cu": "hyperelastic_moments.cuh", "hyperelastic_moments.cu");

/// The kernel's entry point.
pub const ENTRY: &str = "hyper_moments_assemble";

/// The static shared-memory limit per block.
const SHARED_LIMIT: usize = 48 * 1024;

/// Static shared memory per block of `wpb` cells: the gathered cell and the larger of the points'
/// records (55 doubles each: w𝔸's 45 distinct entries, wP) and the moments (15 × 81 + 5 × 9).
pub fn shared_bytes(el: &HyperElement, wpb: usize) -> usize {
    let nq = el.quad.len();
    let cell = 8 * (3 * 4 + 3 * 10 + 9) + 4 * 10;
    wpb * (cell + 8 * (55 * nq).max(15 * 81 + 45))
}

/// The barycentrics λ_k(ξ_q) of the rule's points (the geometry functions of the tetrahedron).
fn barycentrics(el: &HyperElement) -> Vec<[f64; 4]> {
    let (mut vals, mut grads) = ([0.0; 4], [[0.0; 3]; 4]);
    el.quad
        .points
        .iter()
        .map(|p| {
            CellType::Tetrahedron.geometry_basis(*p, &mut vals, &mut grads);
            vals
        })
        .collect()
}

/// Whether the scheme applies: 3D affine P2 tetrahedra (10 nodes, at most 32 points), and the
/// element's tabulated gradients are the ones the kernel forms from λ and ∇λ (vertex v:
/// (4λ_v − 1)∇λ_v; edge (v, w) in `CellType::edges()` order: 4(λ_v∇λ_w + λ_w∇λ_v)) at every point.
pub fn applies(el: &HyperElement) -> bool {
    let cell = el.space.mesh.cell_type;
    if el.dim != 3 || cell != CellType::Tetrahedron || el.nloc() != 10 || el.quad.len() > 32 || el.quad.is_empty() {
        return false;
    }
    let gl = [[-1.0, -1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    barycentrics(el).iter().enumerate().all(|(q, lam)| {
        (0..10).all(|i| {
            let want: [f64; 3] = std::array::from_fn(|a| match i {
                0..=3 => (4.0 * lam[i] - 1.0) * gl[i][a],
                _ => {
                    let [v, w] = cell.edges()[i - 4];
                    4.0 * (lam[v] * gl[w][a] + lam[w] * gl[v][a])
                }
            });
            let got = el.tab.grads[q * 10 + i];
            (0..3).all(|a| (got[a] - want[a]).abs() <= 1e-12)
        })
    })
}

/// The kernel's table: [`super::cuda::tables`] with λ [NQ][4] appended.
pub fn tables(el: &HyperElement) -> Vec<f64> {
    let mut t = super::cuda::tables(el);
    t.extend(barycentrics(el).iter().flatten());
    t
}

/// The kernel's defines for `wpb` cells (warps) per block; an error where the scheme does not apply.
pub fn defines(el: &HyperElement, wpb: usize) -> Result<Vec<String>> {
    if !applies(el) {
        return Err(Error::Unsupported(format!(
            "the hyperelastic moments scheme is written for affine P2 tetrahedra (at most 32 points), not {} nodes of a {:?} in {}D",
            el.nloc(),
            el.space.mesh.cell_type,
            el.dim
        )));
    }
    if wpb == 0 || shared_bytes(el, wpb) > SHARED_LIMIT {
        return Err(Error::invalid(format!("the moments scheme with {wpb} cells per block does not fit 48 KiB of shared memory")));
    }
    Ok(vec![
        "DIM=3".into(),
        "NLOC=10".into(),
        format!("NQ={}", el.quad.len()),
        "NV=4".into(),
        "AFFINE=1".into(),
        format!("LAW={}", el.law.cuda_id()),
        format!("HM_WPB={wpb}"),
    ])
}

/// Compiles the kernel for P2 tetrahedra with every law at both rules (1 and 2 cells per block;
/// and the sweep's variants without the scatter and without the law), for `arch`, with NVRTC only
/// (what CI runs): (defines, PTX bytes), an error on any warning.
pub fn compile_variants(arch: &str) -> Result<Vec<(Vec<String>, usize)>> {
    use crate::mesh::generate::box_mesh;
    use std::sync::Arc;
    let mesh = Arc::new(box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?);
    let space = Arc::new(crate::space::FunctionSpace::lagrange(mesh.clone(), 2, 3)?);
    let mut out = Vec::new();
    for law in [super::Law::Svk { lambda: 1.0, mu: 1.0 }, super::Law::NeoHookean { lambda: 1.0, mu: 1.0 }, super::Law::Usyk { c: 1.0, bf: 1.0, bt: 1.0, bfs: 1.0, kappa: 1.0 }] {
        let frames = if law.anisotropic() { vec![super::frame_from_fibre([1.0, 0.0, 0.0])?; mesh.num_cells()] } else { Vec::new() };
        for rule in [None, Some(super::element::stiffness_quadrature_degree(&space))] {
            let el = HyperElement::with_degree(space.clone(), law, frames.clone(), rule)?;
            let mut variants = vec![defines(&el, 1)?, defines(&el, 2)?];
            if law.anisotropic() {
                for extra in [&["HK_NO_SCATTER"][..], &["HK_TRIVIAL_LAW", "HK_NO_SCATTER"]] {
                    variants.push([defines(&el, 1)?, extra.iter().map(|e| e.to_string()).collect()].concat());
                }
            }
            super::cuda::compile_checked(&HYPERELASTIC_MOMENTS, arch, variants, &mut out)?;
        }
    }
    Ok(out)
}
