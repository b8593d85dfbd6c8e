//! The matrix-free levels on hexahedra for mass and diffusion on the GPU (`kernels/hex_matfree.cu`):
//! what CEED's bake-off problems measure. A Q×Q slab of threads per element, columns along z in
//! registers, geometry stored as 6 numbers per point (`partial`) or recomputed from the 8 vertices
//! (`none`), collocated Gauss–Lobatto quadrature without the interpolation stages. Other physics
//! and cells take the general kernel of [`super::cuda`].
use super::cuda::{compile_checked, DeviceMatFree, Variant};
use super::Pointwise;
use crate::backend::cuda::jit::{self, HEX_MATFREE};
use crate::backend::cuda::CudaBackend;
use crate::fe::{gauss_legendre, gauss_lobatto};
use crate::mesh::CellType;
use crate::operator::basis::TensorBasis;
use crate::operator::integrate::ElementIntegrator;
use crate::operator::level::LevelInput;
use crate::Result;

/// Most points per axis: a slab of Q×Q threads within one block.
const MAX_Q: usize = 16;

/// The variant of `integ`, when the fast kernel applies: (defines, cells per block, tables).
pub struct HexVariant {
    pub defines: Vec<String>,
    pub epb: usize,
    pub q1: usize,
    /// `B[Q][P] | Dq[Q][Q] | x1d[Q] | w1d[Q] | refv[8][3]`.
    pub tab: Vec<f64>,
    pub nqd: usize,
}

impl HexVariant {
    /// `None` unless the cells are hexahedra with a tensor basis and the physics is exactly mass or
    /// diffusion (one coefficient, the same operator on every component).
    pub fn of(integ: &ElementIntegrator, t: &TensorBasis, slot_sign: Option<&[f64]>, mode: Pointwise) -> Option<HexVariant> {
        if integ.space.mesh.cell_type != CellType::Hexahedron {
            return None;
        }
        let kind = match integ.qf.cuda_type().as_str() {
            "Mass" => 0,
            "Diffusion" => 1,
            _ => return None,
        };
        if t.q1d > MAX_Q || t.p1d > t.q1d || t.p1d < 2 {
            return None;
        }
        let (p1, q1) = (t.p1d, t.q1d);
        let x1d: Vec<f64> = (0..q1).map(|i| integ.basis.rule.points[i][0]).collect();
        let w1d = [gauss_legendre(q1), gauss_lobatto(q1)].into_iter().find(|(x, _)| x.iter().zip(&x1d).all(|(a, b)| (a - b).abs() < 1e-14))?.1;
        let collo = p1 == q1 && (0..q1).all(|i| (0..p1).all(|j| (t.b[i * p1 + j] - f64::from(u8::from(i == j))).abs() < 1e-13));
        let mut tab = t.b.clone();
        tab.extend(collocated_derivative(&x1d));
        tab.extend_from_slice(&x1d);
        tab.extend_from_slice(&w1d);
        for v in CellType::Hexahedron.reference_vertices() {
            tab.extend_from_slice(v);
        }
        let epb = (jit::BLOCK_SIZE as usize / (q1 * q1)).max(1);
        let b = |v: bool| usize::from(v);
        let defines = vec![
            format!("P={p1}"),
            format!("Q={q1}"),
            format!("NCOMP={}", integ.space.ncomp),
            format!("KIND={kind}"),
            format!("COLLO={}", b(collo)),
            format!("NONE={}", b(mode == Pointwise::Recomputed)),
            format!("EPB={epb}"),
            format!("SIGNED_IDX={}", b(super::cuda::signed(integ, slot_sign))),
        ];
        Some(HexVariant { defines, epb, q1, tab, nqd: if kind == 0 { 1 } else { 6 } })
    }
}

/// `D[i][j] = ℓ_j'(x_i)` for the Lagrange polynomials `ℓ_j` through the points `x` (barycentric
/// form): differentiates exactly any polynomial of degree < len(x) sampled at the points.
pub fn collocated_derivative(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let w: Vec<f64> = (0..n).map(|j| 1.0 / (0..n).filter(|&k| k != j).map(|k| x[j] - x[k]).product::<f64>()).collect();
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        let mut diag = 0.0;
        for j in (0..n).filter(|&j| j != i) {
            let v = w[j] / w[i] / (x[i] - x[j]);
            d[i * n + j] = v;
            diag -= v;
        }
        d[i * n + i] = diag;
    }
    d
}

/// The fast matrix-free operator on hexahedra where [`HexVariant::of`] applies, else `None`.
pub fn try_build(be: &CudaBackend, input: &LevelInput, mode: Pointwise) -> Result<Option<DeviceMatFree>> {
    let integ = input.integ;
    let Some((t, slot_sign)) = super::tensor_of(integ) else { return Ok(None) };
    let Some(v) = HexVariant::of(integ, &t, slot_sign.as_deref(), mode) else { return Ok(None) };
    let q = v.q1 as u32;
    let variant = Variant {
        module: be.variant_module(&HEX_MATFREE, &v.defines)?,
        kernels: ["hex_apply", "hex_diagonal", "hex_setup"],
        order: &t.lex_to_dof,
        slot_sign: slot_sign.as_deref(),
        tab: &v.tab,
        stored_points: v.q1.pow(3),
        ns: v.nqd,
        epb: v.epb,
        block: (q, q, v.epb as u32),
        dyn_shared: 0,
    };
    DeviceMatFree::from_variant(be, input, mode, variant).map(Some)
}

/// Compiles `hex_matfree.cu` for every variant the bake-off reaches (Q1–Q8, mass and diffusion,
/// 1 and 3 components, Gauss q = p + 2 and p + 1 (the default) and collocated Gauss–Lobatto
/// q = p + 1, partial and none) and the signed restriction of hierarchical bases (Gauss q = p + 1)
/// with NVRTC only, for the degrees `p` in `degrees`; warnings are errors.
pub fn compile_variants(arch: &str, degrees: std::ops::RangeInclusive<usize>) -> Result<Vec<(String, usize)>> {
    let mut all = Vec::new();
    for p in degrees {
        // Signed restrictions (hierarchical bases) on their default Gauss rule, q = p + 1.
        for (q, collo, signed) in [(p + 2, false, 0), (p + 1, false, 0), (p + 1, true, 0), (p + 1, false, 1)] {
            for (kind, ncomp) in [(0, 1), (1, 1), (0, 3), (1, 3)] {
                for none in [0, 1] {
                    let epb = (jit::BLOCK_SIZE as usize / (q * q)).max(1);
                    all.push(vec![
                        format!("P={}", p + 1),
                        format!("Q={q}"),
                        format!("NCOMP={ncomp}"),
                        format!("KIND={kind}"),
                        format!("COLLO={}", usize::from(collo)),
                        format!("NONE={none}"),
                        format!("EPB={epb}"),
                        format!("SIGNED_IDX={signed}"),
                    ]);
                }
            }
        }
    }
    compile_checked(&HEX_MATFREE, arch, all)
}
