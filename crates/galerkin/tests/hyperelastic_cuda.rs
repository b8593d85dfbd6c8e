//! Hyperelasticity on the GPU against the CPU: residual and Jacobian CSR values of every law on
//! P1/P2 tetrahedra (the tensor-core scheme — with the upper-triangle scatter too —, the column-pair, the patch, the moments and the owner-gather schemes) and Q1/Q2 hexahedra, and in plane strain on P1/P2 triangles and Q1/Q2
//! quadrilaterals, and whole Newton solves (dead loads with CG, follower pressure with GMRES, a
//! plane-strain fibre strip) agree. Skips without a GPU unless GALERKIN_REQUIRE_GPU=1.
mod hyper_common;
use galerkin::backend::cuda::{self, CudaBackend};
use galerkin::backend::{Backend, Cpu, LinearOperator};
use galerkin::hyperelastic::blocks::TC_BLOCKS;
use galerkin::hyperelastic::chain::TC_CHAIN;
use galerkin::hyperelastic::cuda::{default_scheme, default_variant, shape, tc_applies, tc_default, tc_fuse, tc_patch_default, tc_cols, tc_qc, tc_st_y, tc_wide, trim_variant, CellOrder, GpuHyper, Scheme, DEFAULT_ORDER, TC_COLS, TC_FUSE, TC_LAW_WIDE, TC_LEAN, TC_PATCH_TURNS, TC_PREFETCH, TC_ST_Y, TC_ST_Y_MINB, TC_TRIM};
use galerkin::hyperelastic::law::Law;
use galerkin::hyperelastic::patch::Grouping;
use galerkin::hyperelastic::recompute;
use galerkin::hyperelastic::upper::{UpperMap, TC_UPPER};
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use galerkin::hyperelastic::{frame_from_fibre, CpuHyper, HyperElement, HyperSystem};
use galerkin::hyperelastic::element::frame_from_fibre_2d;
use galerkin::mesh::{generate::box_mesh, generate::rectangle, CellType};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

fn gpu() -> Option<CudaBackend> {
    cuda::test_gpu()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let d = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    d / b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300)
}

/// One parameter set of every law.
fn laws() -> [Law; 3] {
    [
        Law::Svk { lambda: 1.3, mu: 0.7 },
        Law::NeoHookean { lambda: 2.1, mu: 0.9 },
        Law::Usyk { c: 0.876, bf: 18.48, bt: 3.58, bfs: 1.627, kappa: 50.0 },
    ]
}

/// A smooth, moderate 3D displacement (no inversion).
fn state(space: &FunctionSpace) -> Vec<f64> {
    space.interpolate(|x, v| {
        v[0] = 0.08 * (2.0 * x[1]).sin() + 0.05 * x[0] * x[2];
        v[1] = -0.06 * x[0] * x[1];
        v[2] = 0.07 * x[0] * x[0] - 0.03 * x[1];
    })
}

/// The GPU residual and Jacobian of `el` at `u` against the CPU's, to 1e-12 (`what` names the case).
/// Returns the GPU system, the state on the device and the CPU's residual and Jacobian values.
fn gpu_equals_cpu(be: &CudaBackend, el: HyperElement, u: &[f64], what: &str) -> (GpuHyper, galerkin::backend::cuda::CudaVector, Vec<f64>, Vec<f64>) {
    scheme_equals_cpu(be, el, None, u, what)
}

/// [`gpu_equals_cpu`] with the kernel scheme `sc` (the default where `None`).
fn scheme_equals_cpu(be: &CudaBackend, el: HyperElement, sc: Option<Scheme>, u: &[f64], what: &str) -> (GpuHyper, galerkin::backend::cuda::CudaVector, Vec<f64>, Vec<f64>) {
    variant_equals_cpu(be, el, sc, &[], u, what)
}

/// [`scheme_equals_cpu`] with extra kernel defines (another scatter, a register cap).
fn variant_equals_cpu(be: &CudaBackend, el: HyperElement, sc: Option<Scheme>, extra: &[&str], u: &[f64], what: &str) -> (GpuHyper, galerkin::backend::cuda::CudaVector, Vec<f64>, Vec<f64>) {
    ordered_equals_cpu(be, el, sc, extra, DEFAULT_ORDER, u, what)
}

/// [`variant_equals_cpu`] with the cells launched in `order`.
fn ordered_equals_cpu(be: &CudaBackend, el: HyperElement, sc: Option<Scheme>, extra: &[&str], order: CellOrder, u: &[f64], what: &str) -> (GpuHyper, galerkin::backend::cuda::CudaVector, Vec<f64>, Vec<f64>) {
    let what = &format!("{what} {extra:?} {order:?}");
    let gsys = match sc {
        Some(sc) => GpuHyper::variant_ordered(be, &el, sc, extra, order).unwrap(),
        None => GpuHyper::new(be, &el).unwrap(),
    };
    let what = &format!("{what} ({:?})", gsys.scheme());
    let asm = CpuHyper::new(el).unwrap();
    let mut k = asm.matrix();
    let mut r = vec![0.0; u.len()];
    asm.assemble(u, &mut r, Some(&mut k)).unwrap();
    let ud = be.from_host(u).unwrap();
    let mut rd = be.zeros(u.len()).unwrap();
    let mut kd = galerkin::backend::cuda::DeviceCsr::from_host(be, &gsys.pattern).unwrap();
    gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
    let (er, ek) = (rel(&be.to_host(&rd).unwrap(), &r), rel(&be.matrix_to_host(&kd).unwrap().values, &k.values));
    assert!(er < 1e-12 && ek < 1e-12, "{what}: residual {er:.2e}, Jacobian {ek:.2e}");
    (gsys, ud, r, k.values)
}

#[test]
fn gpu_residual_and_jacobian_equal_the_cpu() {
    let Some(be) = gpu() else { return };
    for law in laws() {
        for (cell, degree) in [(CellType::Tetrahedron, 1), (CellType::Tetrahedron, 2), (CellType::Hexahedron, 1), (CellType::Hexahedron, 2)] {
            let mesh = Arc::new(box_mesh(3, 2, 2, [0.0; 3], [1.0, 0.8, 1.2], cell).unwrap());
            let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 3).unwrap());
            let frames = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre([1.0, 0.2 * (c % 4) as f64, 0.3]).unwrap()).collect() } else { Vec::new() };
            let el = HyperElement::new(space.clone(), law, frames).unwrap();
            let u = state(&space);
            // Tetrahedra: both schemes (the tensor-core one on devices of compute capability ≥ 8.0,
            // the default there), the tensor-core one in its standard shape, two others, with the
            // fifth pass's fragment scatter and with a register cap; the default below.
            if cell == CellType::Tetrahedron {
                let mk = || HyperElement::new(space.clone(), law, el.frames.clone()).unwrap();
                let cc = be.device().compute_capability;
                let what = format!("{law:?} {cell:?} P{degree}");
                scheme_equals_cpu(&be, mk(), Some(Scheme::Pairs(shape(&el).unwrap())), &u, &what);
                if tc_applies(&el, cc) {
                    assert_eq!(default_scheme(&el, cc).unwrap(), tc_default(&el));
                    scheme_equals_cpu(&be, mk(), Some(tc_default(&el)), &u, &what);
                    variant_equals_cpu(&be, mk(), Some(tc_default(&el)), &["HK_FRAG_SCATTER"], &u, &what);
                    variant_equals_cpu(&be, mk(), Some(Scheme::Tc { wpb: 1, qc: 2, wpc: 1 }), &["HK_MINB=16"], &u, &what);
                    for (wpb, qc) in [(2, 3), (1, 4), (1, 7)] {
                        scheme_equals_cpu(&be, mk(), Some(Scheme::Tc { wpb, qc: qc.min(el.quad.len()), wpc: 1 }), &u, &what);
                    }
                }
            }
            let (gsys, ud, r, k) = gpu_equals_cpu(&be, el, &u, &format!("{law:?} {cell:?} P{degree}"));
            let mut rd = be.zeros(u.len()).unwrap();
            let mut kd = galerkin::backend::cuda::DeviceCsr::from_host(&be, &gsys.pattern).unwrap();
            // Assembling twice overwrites (no accumulation across calls).
            gsys.assemble(&be, &ud, &mut rd, Some(&mut kd)).unwrap();
            gsys.assemble(&be, &ud, &mut rd, Some(&mut kd)).unwrap();
            assert!(rel(&be.matrix_to_host(&kd).unwrap().values, &k) < 1e-12);
            // Residual only leaves the matrix alone and gives the same residual.
            gsys.assemble(&be, &ud, &mut rd, None).unwrap();
            assert!(rel(&be.to_host(&rd).unwrap(), &r) < 1e-12);
        }
    }
}

/// A case of the scatter tests on the P1/P2 tetrahedra of a 3 × 2 × 2 box: the element's maker (a
/// rotated frame per cell for the fibre law, the stiffness rule where asked) and the state.
fn tet_case(law: Law, degree: usize, stiffness: bool) -> (impl Fn() -> HyperElement, Vec<f64>) {
    let mesh = Arc::new(box_mesh(3, 2, 2, [0.0; 3], [1.0, 0.8, 1.2], CellType::Tetrahedron).unwrap());
    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 3).unwrap());
    let frames: Vec<_> = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre([1.0, 0.2 * (c % 4) as f64, 0.3]).unwrap()).collect() } else { Vec::new() };
    let q = stiffness.then(|| galerkin::hyperelastic::element::stiffness_quadrature_degree(&space));
    let u = state(&space);
    (move || HyperElement::with_degree(space.clone(), law, frames.clone(), q).unwrap(), u)
}

/// With `gsys`'s residual `r` and Jacobian values `k` at `ud` known to equal the CPU's: assembling
/// twice overwrites, and the residual alone gives `r` and leaves the matrix alone.
fn twice_and_residual_alone(be: &CudaBackend, gsys: &GpuHyper, ud: &galerkin::backend::cuda::CudaVector, r: &[f64], k: &[f64], what: &str) {
    let mut rd = be.zeros(r.len()).unwrap();
    let mut kd = galerkin::backend::cuda::DeviceCsr::from_host(be, &gsys.pattern).unwrap();
    gsys.assemble(be, ud, &mut rd, Some(&mut kd)).unwrap();
    gsys.assemble(be, ud, &mut rd, Some(&mut kd)).unwrap();
    assert!(rel(&be.matrix_to_host(&kd).unwrap().values, k) < 1e-12, "{what}: twice");
    gsys.assemble(be, ud, &mut rd, None).unwrap();
    assert!(rel(&be.to_host(&rd).unwrap(), r) < 1e-12, "{what}: residual alone");
    assert!(rel(&be.matrix_to_host(&kd).unwrap().values, k) < 1e-12, "{what}: the matrix left alone");
}

/// Where the CSR positions come from and the order the cells are launched in change only the order
/// of the atomic adds: on P1/P2 tetrahedra, both rules, every law, both schemes with their
/// positions in shared memory (`HK_POS_SHARED`) and with the cells in Hilbert order instead of the
/// mesh's (the default) equal the CPU.
#[test]
fn gpu_scatter_variants_equal_the_cpu() {
    let Some(be) = gpu() else { return };
    let cc = be.device().compute_capability;
    assert_eq!(DEFAULT_ORDER, CellOrder::Mesh);
    for law in laws() {
        for degree in [1, 2] {
            for stiffness in [false, true] {
                let (mk, u) = tet_case(law, degree, stiffness);
                let el = mk();
                let what = format!("{law:?} P{degree} stiffness rule {stiffness}");
                let pairs = Scheme::Pairs(shape(&el).unwrap());
                variant_equals_cpu(&be, mk(), Some(pairs), &["HK_POS_SHARED"], &u, &what);
                ordered_equals_cpu(&be, mk(), Some(pairs), &[], CellOrder::Hilbert, &u, &what);
                if tc_applies(&el, cc) {
                    variant_equals_cpu(&be, mk(), Some(tc_default(&el)), &["HK_POS_SHARED"], &u, &what);
                    ordered_equals_cpu(&be, mk(), Some(tc_default(&el)), &[], CellOrder::Hilbert, &u, &what);
                }
            }
        }
    }
}

/// The twelfth pass's products (`HK_RES_MMA`: the residual as 3 more GEMM columns; `HK_VEC`: paired
/// shared accesses; two warps per cell, one and two cells per block, chunks of 2 and 4 points, the
/// fragment scatter) equal the CPU on P1/P2 tetrahedra, every law, both rules at P2; and the
/// residual alone (its own loop, not the GEMM) too.
#[test]
fn gpu_lean_products_equal_the_cpu() {
    for_tc_cases(|be, law, mk, u, what, el| {
        let nq = el.quad.len();
        let Scheme::Tc { qc, .. } = tc_default(el) else { panic!("tc_default is a tensor-core scheme") };
        let frag = [TC_LEAN, &["HK_FRAG_SCATTER"]].concat();
        let mut cases: Vec<(Scheme, &[&str])> = vec![(tc_default(el), TC_LEAN), (Scheme::Tc { wpb: 1, qc, wpc: 2 }, TC_LEAN)];
        if law.anisotropic() {
            cases.extend([
                (Scheme::Tc { wpb: 1, qc, wpc: 1 }, &["HK_RES_MMA=1"][..]),
                (Scheme::Tc { wpb: 1, qc, wpc: 2 }, &[]),
                (Scheme::Tc { wpb: 1, qc, wpc: 2 }, &frag),
                (Scheme::Tc { wpb: 2, qc, wpc: 2 }, TC_LEAN),
                (Scheme::Tc { wpb: 1, qc: 4.min(nq), wpc: 2 }, TC_LEAN),
                (Scheme::Tc { wpb: 1, qc: 2.min(nq), wpc: 2 }, TC_LEAN),
            ]);
        }
        for (sc, extra) in cases {
            let (gsys, ud, r, _) = variant_equals_cpu(be, mk(), Some(sc), extra, u, what);
            let mut rd = be.zeros(u.len()).unwrap();
            gsys.assemble(be, &ud, &mut rd, None).unwrap();
            let er = rel(&be.to_host(&rd).unwrap(), &r);
            assert!(er < 1e-12, "{what} {sc:?} {extra:?}: residual alone {er:.2e}");
        }
    });
}

/// `f(backend, law, the element's maker, the state, the case's name, the element)` for every case
/// of the tensor-core tests: every law (a frame per cell for the fibre law), P1 and P2 at the full
/// rule, P2 at the stiffness rule; nothing without a GPU or where the scheme does not apply.
fn for_tc_cases(mut f: impl FnMut(&CudaBackend, Law, &dyn Fn() -> HyperElement, &[f64], &str, &HyperElement)) {
    let Some(be) = gpu() else { return };
    let cc = be.device().compute_capability;
    for law in laws() {
        for (degree, stiffness) in [(1, false), (2, false), (2, true)] {
            let (mk, u) = tet_case(law, degree, stiffness);
            let el = mk();
            if !tc_applies(&el, cc) {
                return;
            }
            f(&be, law, &mk, &u, &format!("{law:?} P{degree} stiffness rule {stiffness}"), &el);
        }
    }
}

/// Each (scheme, kernel defines, cell order) of `cases` on `mk()`'s element at `u` equals the CPU;
/// assembling twice overwrites; the residual alone equals it and leaves the matrix alone.
fn cases_equal_the_cpu(be: &CudaBackend, mk: &dyn Fn() -> HyperElement, u: &[f64], what: &str, cases: Vec<(Scheme, Vec<&str>, CellOrder)>) {
    for (sc, extra, order) in cases {
        let (gsys, ud, r, k) = ordered_equals_cpu(be, mk(), Some(sc), &extra, order, u, what);
        twice_and_residual_alone(be, &gsys, &ud, &r, &k, &format!("{what} {sc:?} {extra:?} {order:?}"));
    }
}

/// The tensor-core default of `el`, the same with two warps per cell, and with two cells per block.
fn tc_shapes(el: &HyperElement) -> (Scheme, Scheme, Scheme) {
    let Scheme::Tc { wpb, qc, .. } = tc_default(el) else { panic!("tc_default is a tensor-core scheme") };
    (tc_default(el), Scheme::Tc { wpb, qc, wpc: 2 }, Scheme::Tc { wpb: 2, qc, wpc: 1 })
}

/// The eighteenth pass's persistent tensor-core kernel (`HK_PERSIST`: blocks looping over cells;
/// `HK_PREFETCH`: the next cell's record and CSR positions copied ahead by cp.async) changes only
/// which block integrates which cell and when its data arrive: on P1/P2 tetrahedra, both rules at
/// P2, every law (a frame per cell), on grids of 1, 5 and 7 blocks — every block looping over many
/// of the mesh's cells, the last ones short — and on the resident grid, in mesh and Hilbert order,
/// with one and two warps per cell and two cells per block, and with the staged scatter a lane per
/// column (`HK_SCATTER_COLS`) alone or with either, it equals the CPU; assembling twice overwrites;
/// the residual alone (no positions copied) equals it and leaves the matrix alone.
#[test]
fn gpu_prefetch_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let (tc, split, pair) = tc_shapes(el);
        let cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (tc, [TC_PREFETCH, &["HK_GRID=7"]].concat(), DEFAULT_ORDER),
            (tc, [TC_PREFETCH, &["HK_GRID=1"]].concat(), CellOrder::Hilbert),
            (tc, TC_PREFETCH.to_vec(), DEFAULT_ORDER),
            (tc, vec!["HK_PERSIST", "HK_GRID=5"], DEFAULT_ORDER),
            (split, [TC_PREFETCH, &["HK_GRID=5"]].concat(), DEFAULT_ORDER),
            (pair, [TC_PREFETCH, &["HK_GRID=3"]].concat(), CellOrder::Hilbert),
            (tc, [TC_PREFETCH, TC_LEAN, &["HK_GRID=7"]].concat(), DEFAULT_ORDER),
            // the staged scatter a lane per column: alone, with the above, two warps per cell
            (tc, TC_COLS.to_vec(), DEFAULT_ORDER),
            (tc, [TC_PREFETCH, TC_COLS, &["HK_GRID=7"]].concat(), CellOrder::Hilbert),
            (split, [TC_PREFETCH, TC_COLS, &["HK_GRID=5"]].concat(), DEFAULT_ORDER),
            (split, TC_COLS.to_vec(), DEFAULT_ORDER),
        ];
        cases_equal_the_cpu(be, mk, u, what, cases);
    });
}

/// The law spread over a block's cells (`HK_LAW_WIDE`, twentieth pass: the block's points on the
/// lanes of its first warps, between two block barriers) changes only which lane evaluates a point:
/// on P1/P2 tetrahedra, both rules at P2, every law (a frame per cell), in its standard shape
/// ([`tc_wide`]) with and without the column scatter, in Hilbert order, and with 5 cells of one point
/// per chunk per block where that fits (P1, P2 at 4 points: 72 cells, so the last block has 3 warps
/// past the end that must meet the barriers and add nothing), it equals the CPU; assembling twice
/// overwrites; the residual alone equals it and leaves the matrix alone.
#[test]
fn gpu_law_wide_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let wide = tc_wide(el);
        assert!(matches!(wide, Scheme::Tc { wpb: 2.., wpc: 1, .. }), "{what}: {wide:?} has one cell a block");
        let mut cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (wide, [TC_LAW_WIDE, TC_COLS].concat(), DEFAULT_ORDER),
            (wide, TC_LAW_WIDE.to_vec(), CellOrder::Hilbert),
        ];
        let five = Scheme::Tc { wpb: 5, qc: 1, wpc: 1 };
        if galerkin::hyperelastic::cuda::defines_for(el, five).is_ok() {
            assert_ne!(el.space.mesh.num_cells() % 5, 0, "{what}: a last block with warps past the end");
            cases.push((five, [TC_LAW_WIDE, TC_COLS].concat(), DEFAULT_ORDER));
        }
        cases_equal_the_cpu(be, mk, u, what, cases);
    });
}

/// [`gpu_gather_newton_equals_the_default`] with the law spread over a block's cells.
#[test]
fn gpu_law_wide_newton_equals_the_default() {
    newton_equals_the_default(tc_wide, &[TC_LAW_WIDE, TC_COLS].concat());
}

/// The upper-triangle scatter (`HK_UPPER`, twenty-first pass: the kernel adds the global upper
/// triangle's entries alone, that part zeroed before, the lower part copied from it after) gives the
/// whole matrix: on P1/P2 tetrahedra, both rules at P2, every law (a frame per cell), with the column
/// scatter and the flat walk, two warps per cell, two cells per block and the Hilbert order, it
/// equals the CPU and is exactly symmetric (every lower value a copy); over a matrix of NaN every
/// value is written (nothing left of the zeroing or the fill); assembling twice overwrites; the
/// residual alone leaves the matrix alone.
#[test]
fn gpu_upper_scatter_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let (tc, split, pair) = tc_shapes(el);
        let cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (tc, [TC_UPPER, TC_COLS].concat(), DEFAULT_ORDER),
            (tc, TC_UPPER.to_vec(), CellOrder::Hilbert),
            (split, [TC_UPPER, TC_COLS].concat(), DEFAULT_ORDER),
            (pair, [TC_UPPER, TC_COLS].concat(), CellOrder::Hilbert),
        ];
        for (sc, extra, order) in cases {
            let case = format!("{what} {sc:?} {extra:?} {order:?}");
            let (gsys, ud, r, k) = ordered_equals_cpu(be, mk(), Some(sc), &extra, order, u, what);
            assert!(gsys.upper().is_some(), "{case}: the upper-triangle passes");
            twice_and_residual_alone(be, &gsys, &ud, &r, &k, &case);
            let mut rd = be.zeros(u.len()).unwrap();
            let mut kd = nan_matrix(be, &gsys);
            gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
            let m = be.matrix_to_host(&kd).unwrap();
            finite_and_equal(&m.values, &k, &format!("{case}: over NaN"));
            assert_exactly_symmetric(&m, &case);
        }
    });
}

/// The staged blocks in Y's space (`HK_ST_Y`, twenty-second pass: the element matrix waits for the
/// scatter where Y was, the point records shrink) change only where the blocks are kept: on P1/P2
/// tetrahedra, both rules at P2, every law (a frame per cell), with the column scatter and the flat
/// walk, register caps of 20 and 24 cells an SM (the caps spill at 80 registers), two warps per
/// cell, two cells per block, the persistent prefetching kernel, the upper-triangle scatter and the
/// Hilbert order, it equals the CPU; assembling twice overwrites; the residual alone equals it and
/// leaves the matrix alone.
#[test]
fn gpu_st_y_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let (tc, split, pair) = tc_shapes(el);
        let sty = tc_st_y(el, tc_qc(tc), TC_ST_Y);
        assert_eq!(sty, TC_ST_Y, "{what}: Y's space holds the staged blocks at the default's {} points a chunk", tc_qc(tc));
        let cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (tc, [sty, TC_COLS].concat(), DEFAULT_ORDER),
            (tc, [TC_ST_Y_MINB, TC_COLS].concat(), DEFAULT_ORDER),
            (tc, [sty, TC_COLS, &["HK_MINB=24"]].concat(), CellOrder::Hilbert),
            (tc, sty.to_vec(), DEFAULT_ORDER),
            (split, [sty, TC_COLS].concat(), DEFAULT_ORDER),
            (pair, [sty, TC_COLS].concat(), CellOrder::Hilbert),
            (tc, [TC_PREFETCH, sty, TC_COLS, &["HK_GRID=7"]].concat(), DEFAULT_ORDER),
            (tc, [sty, TC_UPPER, TC_COLS].concat(), DEFAULT_ORDER),
        ];
        cases_equal_the_cpu(be, mk, u, what, cases);
    });
}

/// [`gpu_gather_newton_equals_the_default`] with `GALERKIN_HYPER_SCHEME=sty`'s defines.
#[test]
fn gpu_st_y_newton_equals_the_default() {
    newton_equals_the_default(tc_default, &[TC_ST_Y_MINB, TC_COLS].concat());
}

/// The twenty-third pass's fused law (`HK_FUSE`: with the Jacobian, each lane of the Y phase — a
/// (point, component pair) — evaluates its point's law in registers, no point records, the
/// residual from the GEMM's extra columns) equals the CPU on P1/P2 tetrahedra, both rules at P2,
/// every law (a frame per cell): in `tc_fuse`'s shape (the stiffness rule's 4 points in one chunk)
/// with the column scatter, with the flat walk, in the default's chunks (accumulators live across
/// chunks), with a register cap, two warps per cell, two cells per block, the persistent prefetching
/// kernel on 7 blocks, the staged blocks in Y's space with 20 cells an SM, and the Hilbert order; assembling twice overwrites; the residual alone (the
/// records' path) equals it and leaves the matrix alone.
#[test]
fn gpu_fuse_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let (tc, split, pair) = tc_shapes(el);
        let fz = tc_fuse(el);
        if el.quad.len() <= 4 {
            assert_eq!(tc_qc(fz), el.quad.len(), "{what}: one chunk of every point");
        }
        let cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (fz, [TC_FUSE, TC_COLS].concat(), DEFAULT_ORDER),
            (fz, TC_FUSE.to_vec(), CellOrder::Hilbert),
            (tc, [TC_FUSE, TC_COLS].concat(), DEFAULT_ORDER),
            (fz, [TC_FUSE, TC_COLS, &["HK_MINB=16"]].concat(), DEFAULT_ORDER),
            (split, [TC_FUSE, TC_COLS].concat(), DEFAULT_ORDER),
            (pair, [TC_FUSE, TC_COLS].concat(), CellOrder::Hilbert),
            (fz, [TC_PREFETCH, TC_FUSE, TC_COLS, &["HK_GRID=7"]].concat(), DEFAULT_ORDER),
            (fz, [TC_FUSE, tc_st_y(el, tc_qc(fz), TC_ST_Y), TC_COLS, &["HK_MINB=20"]].concat(), DEFAULT_ORDER),
        ];
        cases_equal_the_cpu(be, mk, u, what, cases);
    });
}

/// Round 26's trimmed fused law (`HK_TRIM`: g' a lane per (node, component), F of the points by the
/// tensor cores, only the rows of U and V a pair needs, the entries' factors once a lane, no NaN
/// branch in the law) equals the CPU on P1/P2 tetrahedra, both rules at P2 (chunks of 3 at 14
/// points), every law (a frame per cell): in `tc_fuse`'s shape with the column scatter and with the
/// flat walk (Hilbert order), two cells a block, the persistent prefetching kernel on 7 blocks, and
/// the default's defines ([`trim_variant`], P2 at 4 points); assembling twice overwrites; the residual
/// alone (the records' path, with the trimmed geometry and law) equals it and leaves the matrix alone.
/// With node blocks it is in [`gpu_blocks_equal_the_cpu`]; its Newton run against the default in
/// [`gpu_trim_newton_equals_the_default`].
#[test]
fn gpu_trim_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let fz = tc_fuse(el);
        let Scheme::Tc { qc, .. } = fz else { panic!("{what}: tc_fuse is a tensor-core scheme") };
        assert!(qc <= 4, "{what}: HK_TRIM takes at most 4 points a chunk");
        let mut cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (fz, [TC_FUSE, TC_COLS, TC_TRIM].concat(), DEFAULT_ORDER),
            (fz, [TC_FUSE, TC_TRIM].concat(), CellOrder::Hilbert),
            (Scheme::Tc { wpb: 2, qc, wpc: 1 }, [TC_FUSE, TC_COLS, TC_TRIM].concat(), CellOrder::Hilbert),
            (fz, [TC_PREFETCH, TC_FUSE, TC_COLS, TC_TRIM, &["HK_GRID=7"]].concat(), DEFAULT_ORDER),
        ];
        if let Some((sc, defs)) = trim_variant(el, be.device().compute_capability).unwrap() {
            cases.push((sc, defs, DEFAULT_ORDER));
        }
        cases_equal_the_cpu(be, mk, u, what, cases);
    });
}

/// [`gpu_gather_newton_equals_the_default`] with the trimmed fused law's scheme and defines.
#[test]
fn gpu_trim_newton_equals_the_default() {
    newton_equals_the_default(tc_fuse, &[TC_FUSE, TC_COLS, TC_TRIM].concat());
}

/// The thirty-fourth pass's carried scatter (`HK_CHAIN`: a block per segment of face neighbours,
/// each cell keeping the node blocks it shares with the next for it instead of adding them) equals
/// the CPU on P1/P2 tetrahedra, both rules at P2, every law (a frame per cell): with the default's
/// defines (segments of 16, of 3 — many ends — and of 1 — nothing carried — and in Hilbert order), the
/// tensor-core default with the column walk and with the flat walk, two warps a cell, and the
/// trimmed default; assembling twice overwrites (the carry starts afresh in each segment); the
/// residual alone equals it. With node blocks it is in [`gpu_blocks_equal_the_cpu`]; two cells a
/// block are refused by name.
#[test]
fn gpu_chain_equals_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        let (tc, split, pair) = tc_shapes(el);
        let (dsc, ddefs) = default_variant(el, be.device().compute_capability).unwrap();
        let d = [&ddefs[..], TC_CHAIN].concat();
        let mut cases: Vec<(Scheme, Vec<&str>, CellOrder)> = vec![
            (dsc, d.clone(), DEFAULT_ORDER),
            (dsc, [&d[..], &["HK_CHAIN_LEN=3"]].concat(), DEFAULT_ORDER),
            (dsc, [&d[..], &["HK_CHAIN_LEN=1"]].concat(), DEFAULT_ORDER),
            (dsc, d.clone(), CellOrder::Hilbert),
            (tc, [tc_cols(el), TC_CHAIN].concat(), DEFAULT_ORDER),
            (tc, TC_CHAIN.to_vec(), CellOrder::Hilbert),
            (split, [tc_cols(el), TC_CHAIN].concat(), DEFAULT_ORDER),
        ];
        if let Some((sc, defs)) = trim_variant(el, be.device().compute_capability).unwrap() {
            cases.push((sc, [&defs[..], TC_CHAIN].concat(), DEFAULT_ORDER));
        }
        cases_equal_the_cpu(be, mk, u, what, cases);
        let e = GpuHyper::variant(be, &mk(), pair, &[tc_cols(el), TC_CHAIN].concat()).err().expect("two cells a block refused");
        assert!(e.to_string().contains("HK_CHAIN"), "{what}: {e}");
    });
}

/// [`gpu_gather_newton_equals_the_default`] with the default's defines and the carried scatter.
#[test]
fn gpu_chain_newton_equals_the_default() {
    newton_equals_the_default(tc_fuse, &[TC_FUSE, TC_COLS, TC_CHAIN].concat());
}

/// The node-block storage (round 25, `HK_SCATTER_BLOCKS`): on P2 tetrahedra, both rules, every
/// law (a frame per cell), the default at each rule, the tensor-core default with the column walk
/// and the same with two warps a cell, and (round 26) the trimmed default at 4 points, each scattering whole node blocks: the Jacobian, assembled
/// twice in block order and converted to CSR on the host, equals the CPU's (and is not CSR's order
/// as it comes); converted on the device it is the host's conversion bit for bit; its block
/// product equals the CSR product of the CPU's Jacobian; the residual equals the CPU's. And
/// `GALERKIN_HYPER_SCHEME=blocks`'s system (the conversion after each assembly) equals the CPU.
#[test]
fn gpu_blocks_equal_the_cpu() {
    for_tc_cases(|be, _, mk, u, what, el| {
        if tc_cols(el).is_empty() {
            return;  // (P1: no column walk, refused below)
        }
        let (tc, split, _) = tc_shapes(el);
        let (dsc, ddefs) = default_variant(el, be.device().compute_capability).unwrap();
        let mut cases: Vec<(Scheme, Vec<&str>)> = vec![(dsc, [&ddefs[..], TC_BLOCKS].concat()), (tc, [TC_COLS, TC_BLOCKS].concat()), (split, [TC_COLS, TC_BLOCKS].concat())];
        // round 26: the trimmed default scattering blocks (P2 at 4 points); round 34: carrying shared blocks
        if let Some((tsc, tdefs)) = trim_variant(el, be.device().compute_capability).unwrap() {
            cases.push((tsc, [&tdefs[..], TC_BLOCKS].concat()));
            cases.push((tsc, [&tdefs[..], TC_BLOCKS, TC_CHAIN].concat()));
        }
        cases.push((dsc, [&ddefs[..], TC_BLOCKS, TC_CHAIN].concat()));
        let asm = CpuHyper::new(mk()).unwrap();
        let mut k = asm.matrix();
        let mut r = vec![0.0; u.len()];
        asm.assemble(u, &mut r, Some(&mut k)).unwrap();
        let ud = be.from_host(u).unwrap();
        let x: Vec<f64> = (0..u.len()).map(|i| ((i * 7919) % 1013) as f64 / 1013.0 - 0.4).collect();
        let xd = be.from_host(&x).unwrap();
        let mut y_ref = be.zeros(u.len()).unwrap();
        galerkin::backend::cuda::DeviceCsr::from_host(be, &k).unwrap().apply(be, &xd, &mut y_ref).unwrap();
        let y_ref = be.to_host(&y_ref).unwrap();
        for (sc, extra) in cases {
            let what = format!("{what} {sc:?} {extra:?}");
            let gsys = GpuHyper::variant(be, &mk(), sc, &extra).unwrap();
            let b = gsys.blocks().unwrap_or_else(|| panic!("{what}: no block storage"));
            let mut rd = be.zeros(u.len()).unwrap();
            let mut kd = galerkin::backend::cuda::DeviceCsr::from_host(be, &gsys.pattern).unwrap();
            gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
            gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
            let kb = be.matrix_to_host(&kd).unwrap().values;
            let kc = b.host.to_csr(&kb).unwrap();
            let (er, ek) = (rel(&be.to_host(&rd).unwrap(), &r), rel(&kc, &k.values));
            assert!(er < 1e-12 && ek < 1e-12, "{what}: residual {er:.2e}, Jacobian {ek:.2e}");
            assert!(rel(&kb, &k.values) > 1e-3, "{what}: the values came in CSR order");
            let mut out = galerkin::backend::cuda::DeviceCsr::from_host(be, &gsys.pattern).unwrap();
            gsys.blocks_to_csr(be, &kd, &mut out).unwrap();
            assert!(be.matrix_to_host(&out).unwrap().values.iter().zip(&kc).all(|(a, c)| a.to_bits() == c.to_bits()), "{what}: the device's conversion");
            let mut y = be.zeros(u.len()).unwrap();
            gsys.block_spmv(be, &kd, &xd, &mut y).unwrap();
            let ey = rel(&be.to_host(&y).unwrap(), &y_ref);
            assert!(ey < 1e-12, "{what}: block product {ey:.2e}");
        }
        let gsys = GpuHyper::blocks_in_csr(be, &mk()).unwrap();
        let mut rd = be.zeros(u.len()).unwrap();
        let mut kd = galerkin::backend::cuda::DeviceCsr::from_host(be, &gsys.pattern).unwrap();
        gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
        gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
        let ek = rel(&be.matrix_to_host(&kd).unwrap().values, &k.values);
        assert!(ek < 1e-12, "{what}: GALERKIN_HYPER_SCHEME=blocks, Jacobian {ek:.2e}");
        assert!(gsys.block_spmv(be, &kd, &xd, &mut rd).is_err(), "{what}: its matrix is CSR");
    });
    // P1 has no column walk: refused by name.
    if let Some(be) = gpu() {
        let (mk, _) = tet_case(Law::Svk { lambda: 1.0, mu: 1.0 }, 1, false);
        let el = mk();
        if tc_applies(&el, be.device().compute_capability) {
            let e = GpuHyper::variant(&be, &el, tc_default(&el), &[TC_COLS, TC_BLOCKS].concat()).err().expect("P1 refused");
            assert!(e.to_string().contains("HK_SCATTER_BLOCKS"), "{e}");
        }
    }
}

/// [`gpu_gather_newton_equals_the_default`] with `GALERKIN_HYPER_SCHEME=fuse`'s scheme and defines.
#[test]
fn gpu_fuse_newton_equals_the_default() {
    newton_equals_the_default(tc_fuse, &[TC_FUSE, TC_COLS].concat());
}

/// Every value of `m` is bit for bit its transposed entry's (and that entry exists).
fn assert_exactly_symmetric(m: &galerkin::linalg::CsrMatrix, what: &str) {
    for r in 0..m.nrows {
        for p in m.row_ptr[r]..m.row_ptr[r + 1] {
            let c = m.col_idx[p] as usize;
            let row = &m.col_idx[m.row_ptr[c]..m.row_ptr[c + 1]];
            let t = row.binary_search(&(r as u32)).unwrap_or_else(|_| panic!("{what}: ({c}, {r}) not in the pattern"));
            assert_eq!(m.values[p].to_bits(), m.values[m.row_ptr[c] + t].to_bits(), "{what}: ({r}, {c}) against ({c}, {r})");
        }
    }
}

/// The upper-triangle scatter's map (host, no GPU): on the P2 pattern of a box, every lower entry
/// ((m, a), (n, b)), n < m, is sent to the position of ((n, b), (m, a)) — checked against the
/// pattern's own column indices — and the lower blocks are half the off-diagonal ones.
#[test]
fn upper_map_transposes_the_pattern() {
    let (mk, _) = tet_case(Law::Svk { lambda: 1.0, mu: 1.0 }, 2, true);
    let p = CpuHyper::new(mk()).unwrap().matrix();
    let map = UpperMap::of(&p).unwrap();
    let nodes = p.nrows / 3;
    let off_diagonal = p.nnz() / 9 - nodes;
    assert_eq!(2 * map.lower_blocks(), off_diagonal);
    for m in 0..nodes {
        let (lo0, lo1) = (map.lo_ptr[m] as usize, map.lo_ptr[m + 1] as usize);
        for (q, blk) in (lo0..lo1).enumerate() {
            let (src, len) = (map.lo_src[2 * blk] as usize, map.lo_src[2 * blk + 1] as usize);
            let n = p.col_idx[p.row_ptr[3 * m] + 3 * q] as usize / 3;
            assert!(n < m, "node {m}'s block {q} is lower");
            for (a, b) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))) {
                let at = src + b * len + a;
                assert!((p.row_ptr[3 * n + b]..p.row_ptr[3 * n + b + 1]).contains(&at) && p.col_idx[at] as usize == 3 * m + a, "({m}, {a}), ({n}, {b})");
            }
        }
        // the diagonal block follows the lower ones
        assert_eq!(p.col_idx[p.row_ptr[3 * m] + 3 * (lo1 - lo0)] as usize, 3 * m);
    }
    // A pattern that is not node-blocked is refused by name.
    let mut bad = p.clone();
    bad.row_ptr[1] -= 1;
    assert!(UpperMap::of(&bad).unwrap_err().to_string().contains("node 0"));
}

/// [`gpu_gather_newton_equals_the_default`] with the upper-triangle scatter and the column scatter.
#[test]
fn gpu_upper_newton_equals_the_default() {
    newton_equals_the_default(tc_default, &[TC_UPPER, TC_COLS].concat());
}

/// The patch-reduced scheme (`kernels/hyperelastic_patch.cu`) changes only which values are summed
/// in shared memory before the atomic adds: on P1/P2 tetrahedra, both rules, every law, with Kuhn
/// cubes as patches (runs of 6 cells of the box mesh), runs of 4 and of 5 cells in Hilbert order (a
/// patch cut across cubes, the last one short), one cell per patch and patches grouped by longest
/// edge (cubes, 2 cubes, 2×2×2 cubes in batches) in either order, it equals the CPU; assembling twice
/// overwrites; the residual alone leaves the matrix alone.
#[test]
fn gpu_patch_scheme_equals_the_cpu() {
    for_tet_cases(|_, _| true, |be, law, degree, stiffness, mk, u| {
        let what = format!("{law:?} P{degree} stiffness rule {stiffness}");
        let runs = |cells| Some(Scheme::Patch { cells, batch: 0, group: Grouping::Runs });
        let (gsys, ud, r, k) = scheme_equals_cpu(be, mk(), runs(6), u, &what);
        ordered_equals_cpu(be, mk(), runs(4), &[], CellOrder::Hilbert, u, &what);
        ordered_equals_cpu(be, mk(), runs(5), &[], CellOrder::Hilbert, u, &what);
        scheme_equals_cpu(be, mk(), runs(1), u, &what);
        // Patches grouped by longest edge (thirteenth pass): cubes whatever the order, 2 and
        // 2×2×2 cubes integrated in batches (the latter with the interior rows stored plainly).
        for (cells, batch) in [(6, 0), (12, 6), (48, 12), (48, 5)] {
            let sc = Some(Scheme::Patch { cells, batch, group: Grouping::Edges });
            ordered_equals_cpu(be, mk(), sc, &[], CellOrder::Hilbert, u, &what);
        }
        let cubes = Some(Scheme::Patch { cells: 48, batch: 12, group: Grouping::Edges });
        let (csys, _, _, _) = scheme_equals_cpu(be, mk(), cubes, u, &what);
        twice_and_residual_alone(be, &csys, &ud, &r, &k, &format!("{what}: 2×2×2 cubes"));
        twice_and_residual_alone(be, &gsys, &ud, &r, &k, &what);
    });
}

/// The nineteenth pass's tensor-core products with the patches' pre-summed scatter
/// (`Scheme::TcPatch`, `HK_PATCH`: a block per patch, its warps adding their cells' fragments to
/// shared slots, one flush of distinct values) changes only where the element matrices are summed:
/// on P1/P2 tetrahedra, both rules, every law (a frame per cell for the fibre law), with its
/// standard shape (Kuhn cubes, 3 warps taking 2 cells each), cubes with one warp (every cell in
/// turn), 2 cubes with 3 warps (4 cells each, the last short), 2×2×2 cubes with 2 warps (slots beyond
/// 48 KiB), runs of 5 cells in Hilbert order (patches cut across cubes) and single cells — and so
/// with the twentieth pass's staged cells added in turn (`HK_PATCH_TURNS`; rounds with warps past a
/// patch's end) — it equals the CPU; assembling twice overwrites; the residual alone leaves the
/// matrix alone.
#[test]
fn gpu_tc_patch_equals_the_cpu() {
    for_tet_cases(tc_applies, |be, law, degree, stiffness, mk, u| {
        let what = format!("tc patch {law:?} P{degree} stiffness rule {stiffness}");
        let Scheme::TcPatch { qc, .. } = tc_patch_default(&mk()) else { panic!("tc_patch_default is the tensor-core patch scheme") };
        let tp = |cells, wpb, group| Some(Scheme::TcPatch { cells, wpb, qc, group });
        let (gsys, ud, r, k) = scheme_equals_cpu(be, mk(), Some(tc_patch_default(&mk())), u, &what);
        twice_and_residual_alone(be, &gsys, &ud, &r, &k, &what);
        let turns = TC_PATCH_TURNS;
        for (sc, extra, order) in [
            (tp(6, 1, Grouping::Edges), &[][..], CellOrder::Hilbert),
            (tp(12, 3, Grouping::Edges), &[], DEFAULT_ORDER),
            (tp(48, 2, Grouping::Edges), &[], CellOrder::Hilbert),
            (tp(5, 2, Grouping::Runs), &[], CellOrder::Hilbert),
            (tp(1, 1, Grouping::Runs), &[], DEFAULT_ORDER),
            // the twentieth pass's cells in turn: cubes, 2 cubes with 3 warps (a round with 2 past
            // the end), 2×2×2 cubes (slots beyond 48 KiB), runs of 5 across cubes, single cells
            (tp(6, 2, Grouping::Edges), turns, CellOrder::Hilbert),
            (tp(12, 3, Grouping::Edges), turns, DEFAULT_ORDER),
            (tp(48, 2, Grouping::Edges), turns, CellOrder::Hilbert),
            (tp(5, 2, Grouping::Runs), turns, CellOrder::Hilbert),
            (tp(1, 2, Grouping::Runs), turns, DEFAULT_ORDER),
        ] {
            let (psys, _, _, _) = ordered_equals_cpu(be, mk(), sc, extra, order, u, &what);
            twice_and_residual_alone(be, &psys, &ud, &r, &k, &format!("{what} {sc:?} {extra:?} {order:?}"));
        }
    });
}

/// Newton with the tensor-core patch scheme takes the default GPU scheme's iterates.
#[test]
fn gpu_tc_patch_newton_equals_the_default() {
    newton_equals_the_default(tc_patch_default, &[]);
}

/// Newton with the tensor-core patch scheme's cells adding to the slots in turn (twentieth pass)
/// takes the default GPU scheme's iterates.
#[test]
fn gpu_tc_patch_turns_newton_equals_the_default() {
    newton_equals_the_default(|el| match tc_patch_default(el) {
        Scheme::TcPatch { cells, qc, group, .. } => Scheme::TcPatch { cells, wpb: 2, qc, group },
        other => panic!("the tensor-core patch scheme, not {other:?}"),
    }, TC_PATCH_TURNS);
}

/// A device matrix of `gsys`'s pattern whose values are all NaN: what a scheme that writes every
/// value itself (no zeroing pass) must overwrite.
fn nan_matrix(be: &CudaBackend, gsys: &GpuHyper) -> galerkin::backend::cuda::DeviceCsr {
    let mut nan = gsys.pattern.clone();
    nan.values.iter_mut().for_each(|v| *v = f64::NAN);
    galerkin::backend::cuda::DeviceCsr::from_host(be, &nan).unwrap()
}

/// `v` equals `want` to 1e-12 and holds no NaN (`rel` alone would pass over NaN: f64::max drops it).
fn finite_and_equal(v: &[f64], want: &[f64], what: &str) {
    assert!(v.iter().all(|x| x.is_finite()) && rel(v, want) < 1e-12, "{what}");
}

/// The owner gather (`Scheme::Gather`, sixteenth pass: element matrices staged per cell, then a warp
/// per node sums and stores its three CSR rows) equals the CPU on P1/P2 tetrahedra, both rules,
/// every law (a frame per cell for the fibre law), in mesh and Hilbert order; it writes every value
/// itself (no zeroing pass: values filled with NaN before are all overwritten), assembling twice
/// overwrites, the residual alone leaves the matrix alone, and the gather alone rewrites the same
/// values from the stage.
#[test]
fn gpu_gather_scheme_equals_the_cpu() {
    for_tet_cases(tc_applies, |be, law, degree, stiffness, mk, u| {
        let Scheme::Tc { qc, .. } = tc_default(&mk()) else { panic!("the tensor-core default") };
        let what = format!("gather {law:?} P{degree} stiffness rule {stiffness}");
        let (gsys, ud, r, k) = scheme_equals_cpu(be, mk(), Some(Scheme::Gather { qc }), u, &what);
        ordered_equals_cpu(be, mk(), Some(Scheme::Gather { qc: 1 }), &[], CellOrder::Hilbert, u, &what);
        twice_and_residual_alone(be, &gsys, &ud, &r, &k, &what);
        let mut rd = be.zeros(u.len()).unwrap();
        let mut kd = nan_matrix(be, &gsys);
        gsys.assemble(be, &ud, &mut rd, Some(&mut kd)).unwrap();
        finite_and_equal(&be.matrix_to_host(&kd).unwrap().values, &k, &format!("{what}: over NaN"));
        let mut kd = nan_matrix(be, &gsys);
        gsys.gather_only(be, &mut kd).unwrap();
        finite_and_equal(&be.matrix_to_host(&kd).unwrap().values, &k, &format!("{what}: the gather alone"));
    });
}

/// `f(backend, law, degree, stiffness rule, the element's maker, the state)` for every case of the
/// gather tests: every law (a frame per cell for the fibre law), P1/P2, both rules; nothing without
/// a GPU, and nothing from the first case where `applies(element, compute capability)` is false.
fn for_tet_cases(applies: impl Fn(&HyperElement, (u32, u32)) -> bool, mut f: impl FnMut(&CudaBackend, Law, usize, bool, &dyn Fn() -> HyperElement, &[f64])) {
    let Some(be) = gpu() else { return };
    let cc = be.device().compute_capability;
    for law in laws() {
        for degree in [1, 2] {
            for stiffness in [false, true] {
                let (mk, u) = tet_case(law, degree, stiffness);
                if !applies(&mk(), cc) {
                    return;
                }
                f(&be, law, degree, stiffness, &mk, &u);
            }
        }
    }
}

/// The owner gather without a stage (`Scheme::Recompute`, seventeenth pass: blocks owning node
/// ranges recompute their cells' law and contract only their rows) equals the CPU on P1/P2
/// tetrahedra, both rules, every law (a frame per cell for the fibre law), in mesh and Hilbert
/// order, in its standard shape and in blocks so small that the box's nodes take many of them
/// (every cell evaluated by several blocks); every value and residual entry is its own (values
/// filled with NaN before are all overwritten), assembling twice overwrites, the residual alone
/// (the tensor-core kernel) leaves the matrix alone.
#[test]
fn gpu_recompute_scheme_equals_the_cpu() {
    for_tet_cases(recompute::applies, |be, law, degree, stiffness, mk, u| {
        for sc in [recompute::DEFAULT, Scheme::Recompute { wpb: 1, kib: 24 }, Scheme::Recompute { wpb: 2, kib: 40 }] {
            let what = format!("recompute {law:?} P{degree} stiffness rule {stiffness} {sc:?}");
            let (gsys, ud, r, k) = scheme_equals_cpu(be, mk(), Some(sc), u, &what);
            ordered_equals_cpu(be, mk(), Some(sc), &[], CellOrder::Hilbert, u, &what);
            let b = gsys.recompute_blocks().expect("the recomputing gather's blocks");
            let (pairs, evals) = b.counts();
            let ncells = mk().space.mesh.num_cells();
            // every (cell, node) pair owned once; on the connected box some cell has nodes in two
            // blocks' ranges exactly when there is more than one block (one block walks each cell once)
            assert_eq!(pairs, ncells * mk().nloc(), "{what}");
            assert!(evals >= ncells, "{what}: {evals} evaluations of {ncells} cells");
            assert_eq!(evals > ncells, b.nblocks() > 1, "{what}: {evals} evaluations of {ncells} cells in {} blocks", b.nblocks());
            owner_overwrites(be, &gsys, &ud, &r, &k, &what);
        }
    });
}

/// [`twice_and_residual_alone`], and one assembly over a matrix of NaN and a zero residual gives
/// every value and residual entry (a scheme that writes, or zeroes, the values itself).
fn owner_overwrites(be: &CudaBackend, gsys: &GpuHyper, ud: &galerkin::backend::cuda::CudaVector, r: &[f64], k: &[f64], what: &str) {
    twice_and_residual_alone(be, gsys, ud, r, k, what);
    let mut rd = be.zeros(r.len()).unwrap();
    let mut kd = nan_matrix(be, gsys);
    gsys.assemble(be, ud, &mut rd, Some(&mut kd)).unwrap();
    finite_and_equal(&be.matrix_to_host(&kd).unwrap().values, k, &format!("{what}: over NaN"));
    finite_and_equal(&be.to_host(&rd).unwrap(), r, &format!("{what}: residual"));
}

/// The records scheme's widest shape in the tests: 16 warps' scratch fits 200 KiB at 4 points, not
/// at 14 (8 warps in 160 KiB there).
fn records_wide(el: &HyperElement) -> Scheme {
    if el.quad.len() <= 4 { Scheme::Recompute { wpb: 16, kib: 200 } } else { Scheme::Recompute { wpb: 8, kib: 160 } }
}

/// The gather over the staged law records (thirty-first pass, `HR_RECORDS`): the law once a point
/// into the stage, pulled back to the reference cell, the blocks contracting it — equal to the CPU on
/// P1/P2 tetrahedra at both rules (≤ 32 points), every law with a frame per cell, mesh and Hilbert
/// order, blocks so small that each cell's records are read by several blocks, every value and
/// residual entry overwritten (NaN before), twice, and the residual alone.
#[test]
fn gpu_records_scheme_equals_the_cpu() {
    for_tet_cases(recompute::applies, |be, law, degree, stiffness, mk, u| {
        if mk().quad.len() > 32 {
            return;
        }
        for sc in [records_wide(&mk()), Scheme::Recompute { wpb: 1, kib: 24 }, Scheme::Recompute { wpb: 2, kib: 40 }] {
            let what = format!("records {law:?} P{degree} stiffness rule {stiffness} {sc:?}");
            let extra = [recompute::HR_RECORDS];
            let (gsys, ud, r, k) = variant_equals_cpu(be, mk(), Some(sc), &extra, u, &what);
            ordered_equals_cpu(be, mk(), Some(sc), &extra, CellOrder::Hilbert, u, &what);
            owner_overwrites(be, &gsys, &ud, &r, &k, &what);
        }
    });
}

/// [`gpu_gather_newton_equals_the_default`] with the gather over the staged law records.
#[test]
fn gpu_records_newton_equals_the_default() {
    newton_equals_the_default(records_wide, &[recompute::HR_RECORDS]);
}

/// The zeroing pass under the kernel (thirty-first pass, `HK_ZERO_AHEAD`): the default scheme with
/// its cells in 1, 3 and 7 chunks, each launch zeroing the next chunk's values, equals the CPU on
/// P1/P2 tetrahedra at both rules, every law, in mesh and Hilbert order; every value of a NaN-filled
/// matrix is overwritten, assembling twice overwrites, and the residual alone leaves the matrix alone.
#[test]
fn gpu_zero_ahead_equals_the_cpu() {
    for_tet_cases(tc_applies, |be, law, degree, stiffness, mk, u| {
        let (sc, defs) = default_variant(&mk(), be.device().compute_capability).unwrap();
        for d in ["HK_ZERO_AHEAD=1", "HK_ZERO_AHEAD=3", "HK_ZERO_AHEAD=7"] {
            let extra = [&defs[..], &[d]].concat();
            let what = format!("zero ahead {law:?} P{degree} stiffness rule {stiffness} {d}");
            let (gsys, ud, r, k) = variant_equals_cpu(be, mk(), Some(sc), &extra, u, &what);
            ordered_equals_cpu(be, mk(), Some(sc), &extra, CellOrder::Hilbert, u, &what);
            owner_overwrites(be, &gsys, &ud, &r, &k, &what);
        }
    });
}

/// [`gpu_gather_newton_equals_the_default`] with the zeroing pass under the kernel (8 chunks).
#[test]
fn gpu_zero_ahead_newton_equals_the_default() {
    let Some(be) = gpu() else { return };
    let text = hyper_common::usyk_cube(4, 2, "block-jacobi");
    let (_, prep) = prepare_text(&text).unwrap();
    let (sc, defs) = default_variant(&prep.el, be.device().compute_capability).unwrap();
    let extra: Vec<&str> = [&defs[..], &["HK_ZERO_AHEAD=8"]].concat();
    newton_equals_the_default(move |_| sc, &extra);
}

/// Newton with the owner gather takes the default GPU scheme's iterates: the P2 fibre cube with
/// block Jacobi, the same Newton steps, CG counts within 5 % (+1) and the same solution (to round-off).
#[test]
fn gpu_gather_newton_equals_the_default() {
    newton_equals_the_default(|el| match tc_default(el) {
        Scheme::Tc { qc, .. } => Scheme::Gather { qc },
        other => panic!("the tensor-core default, not {other:?}"),
    }, &[]);
}

/// [`gpu_gather_newton_equals_the_default`] with the recomputing gather (seventeenth pass).
#[test]
fn gpu_recompute_newton_equals_the_default() {
    newton_equals_the_default(|_| recompute::DEFAULT, &[]);
}

/// [`gpu_gather_newton_equals_the_default`] with the persistent, prefetching tensor-core kernel and
/// its column scatter (eighteenth pass; the blocks looping over cells change the order of the adds).
#[test]
fn gpu_prefetch_newton_equals_the_default() {
    newton_equals_the_default(tc_default, &[TC_PREFETCH, TC_COLS].concat());
}

/// Newton on the P2 fibre cube with the scheme `sc(el)` (and kernel defines `extra`) against the default scheme's.
fn newton_equals_the_default(sc: impl Fn(&HyperElement) -> Scheme, extra: &[&str]) {
    let Some(be) = gpu() else { return };
    let text = hyper_common::usyk_cube(4, 2, "block-jacobi");
    let (_, mut prep) = prepare_text(&text).unwrap();
    if !tc_applies(&prep.el, be.device().compute_capability) {
        return;
    }
    let mut dsys = GpuHyper::new(&be, &prep.el).unwrap();
    let (ud, rd, _) = solve_on(&be, &mut dsys, &mut prep, 1).unwrap();
    let (_, mut prep) = prepare_text(&text).unwrap();
    let mut gsys = GpuHyper::variant(&be, &prep.el, sc(&prep.el), extra).unwrap();
    let (ug, rg, _) = solve_on(&be, &mut gsys, &mut prep, 1).unwrap();
    // (the default's atomic adds sum in another order: round-off through Newton and CG, 3·10⁻¹⁰
    // measured on the H200; the GPU-vs-CPU Newton test's 1e-8)
    assert!(rel(&ug, &ud) < 1e-8, "{extra:?} vs default solution {:.2e}", rel(&ug, &ud));
    assert!(ud.iter().any(|v| v.abs() > 1e-2), "the load should move the body");
    // The same Newton steps; CG counts within 5 % (the atomic order moves them: 471 against 463
    // measured on the H200 at a late step, where CG runs to a relative tolerance).
    let newton = |r: &[galerkin::hyperelastic::LoadStepReport]| r.iter().map(|s| s.all_iterations().count()).collect::<Vec<_>>();
    assert_eq!(newton(&rd), newton(&rg), "the same Newton steps per load step");
    let its = |r: &[galerkin::hyperelastic::LoadStepReport]| r.iter().flat_map(|s| s.all_iterations()).map(|i| i.linear_iterations).collect::<Vec<_>>();
    for (a, b) in its(&rd).into_iter().zip(its(&rg)) {
        assert!(a.abs_diff(b) * 20 <= a.max(b) + 20, "CG iterations {a} (default) and {b} ({extra:?}) differ by more than 5 % + 1");
    }
}

/// The moments scheme (`Scheme::Moments`: the P2 element matrix from per-cell moments, exact
/// whatever the rule) equals the CPU on P2 tetrahedra, every law, at the full (14 points) and
/// stiffness (4) rules and at degrees 1 (1 point) and 6 (more points than either), one, two and
/// four cells per block; assembling twice overwrites; the residual alone leaves the matrix alone.
/// P1 tetrahedra and hexahedra are refused by name.
#[test]
fn gpu_moments_scheme_equals_the_cpu() {
    let Some(be) = gpu() else { return };
    let mesh = Arc::new(box_mesh(3, 2, 2, [0.0; 3], [1.0, 0.8, 1.2], CellType::Tetrahedron).unwrap());
    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), 2, 3).unwrap());
    let u = state(&space);
    let stiff = galerkin::hyperelastic::element::stiffness_quadrature_degree(&space);
    for law in laws() {
        let frames: Vec<_> = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre([1.0, 0.2 * (c % 4) as f64, 0.3]).unwrap()).collect() } else { Vec::new() };
        for rule in [None, Some(stiff), Some(1), Some(6)] {
            let mk = || HyperElement::with_degree(space.clone(), law, frames.clone(), rule).unwrap();
            let what = format!("moments {law:?} rule {rule:?} ({} points)", mk().quad.len());
            for wpb in [1, 2, 4] {
                scheme_equals_cpu(&be, mk(), Some(Scheme::Moments { wpb }), &u, &what);
            }
            let (gsys, ud, r, k) = scheme_equals_cpu(&be, mk(), Some(Scheme::Moments { wpb: 1 }), &u, &what);
            twice_and_residual_alone(&be, &gsys, &ud, &r, &k, &what);
        }
    }
    for (cell, degree) in [(CellType::Tetrahedron, 1), (CellType::Hexahedron, 2)] {
        let mesh = Arc::new(box_mesh(1, 1, 1, [0.0; 3], [1.0; 3], cell).unwrap());
        let space = Arc::new(FunctionSpace::lagrange(mesh, degree, 3).unwrap());
        let el = HyperElement::new(space, laws()[0], Vec::new()).unwrap();
        let e = GpuHyper::variant(&be, &el, Scheme::Moments { wpb: 1 }, &[]).err().expect("the moments scheme refuses other elements").to_string();
        assert!(e.contains("moments scheme") && e.contains("P2 tetrahedra"), "{e}");
    }
}

/// The stiffness rule (`physics.quadrature = "stiffness"`: 1 point at P1, 4 at P2) on tetrahedra:
/// both schemes equal the CPU, the tensor-core one in its standard shape (its staged scatter then
/// keeps the element matrix in a record space larger than the points' records) and with all
/// points in one chunk, one and two warps per block.
#[test]
fn gpu_stiffness_rule_equals_the_cpu() {
    let Some(be) = gpu() else { return };
    let cc = be.device().compute_capability;
    for law in laws() {
        for degree in [1, 2] {
            let mesh = Arc::new(box_mesh(3, 2, 2, [0.0; 3], [1.0, 0.8, 1.2], CellType::Tetrahedron).unwrap());
            let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 3).unwrap());
            let frames: Vec<_> = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre([1.0, 0.2 * (c % 4) as f64, 0.3]).unwrap()).collect() } else { Vec::new() };
            let q = Some(galerkin::hyperelastic::element::stiffness_quadrature_degree(&space));
            let mk = || HyperElement::with_degree(space.clone(), law, frames.clone(), q).unwrap();
            let el = mk();
            assert_eq!(el.quad.len(), if degree == 2 { 4 } else { 1 });
            let u = state(&space);
            let what = format!("stiffness rule {law:?} P{degree}");
            scheme_equals_cpu(&be, mk(), Some(Scheme::Pairs(shape(&el).unwrap())), &u, &what);
            gpu_equals_cpu(&be, mk(), &u, &what);
            if tc_applies(&el, cc) {
                scheme_equals_cpu(&be, mk(), Some(tc_default(&el)), &u, &what);
                for wpb in [1, 2] {
                    scheme_equals_cpu(&be, mk(), Some(Scheme::Tc { wpb, qc: el.quad.len(), wpc: 1 }), &u, &what);
                }
            }
        }
    }
}

/// Plane strain and plane stress: the GPU kernel's DIM = 2 variant (with `HL_PLANE_STRESS`: the local
/// Newton on F₃₃ and the condensed tangent) equals the CPU (every law, every 2D element).
#[test]
fn gpu_plane_strain_residual_and_jacobian_equal_the_cpu() {
    let Some(be) = gpu() else { return };
    for law in laws() {
        for ((cell, degree), stress) in [(CellType::Triangle, 1), (CellType::Triangle, 2), (CellType::Quadrilateral, 1), (CellType::Quadrilateral, 2)].into_iter().flat_map(|c| [(c, false), (c, true)]) {
            let mesh = Arc::new(rectangle(4, 3, [0.0; 2], [1.0, 0.8], cell).unwrap());
            let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 2).unwrap());
            let frames = if law.anisotropic() { (0..mesh.num_cells()).map(|c| frame_from_fibre_2d([1.0, 0.2 * (c % 4) as f64 - 0.3]).unwrap()).collect() } else { Vec::new() };
            let el = HyperElement::new(space.clone(), law, frames).unwrap().plane_stress(stress).unwrap();
            let u = space.interpolate(|x, v| {
                v[0] = 0.08 * (2.0 * x[1]).sin() + 0.05 * x[0] * x[1];
                v[1] = -0.06 * x[0] * x[1] + 0.03 * x[0] * x[0];
            });
            gpu_equals_cpu(&be, el, &u, &format!("plane {} {law:?} {cell:?} P{degree}", if stress { "stress" } else { "strain" }));
        }
    }
}

const STRIP: &str = r#"
[mesh]
generator = "rectangle"
n = [8, 2]
upper = [4.0, 1.0]
cell = "triangle"
[space]
degree = 2
[physics]
kind = "hyperelasticity"
law = "usyk"
C = 0.876
bf = 18.48
bt = 3.58
bfs = 1.627
kappa = 20.0
fibre = ["1", "0.3 * x - 0.5"]
body_force = [0.0, -0.2]
[[bc]]
type = "dirichlet"
boundary = "xmin"
value = [0, 0]
[loads]
steps = 2
[newton]
forcing = "eisenstat-walker"
[solver]
method = "cg"
rtol = 1e-10
"#;

const SHELL: &str = r#"
[shell]
inner = 1.0
outer = 1.3
theta = [30.0, 90.0]
phi = [0.0, 90.0]
n = [2, 4, 4]
axes = [1.0, 1.0, 1.4]
cell = "tetrahedron"
[space]
degree = 2
[physics]
kind = "hyperelasticity"
law = "usyk"
C = 0.876
bf = 18.48
bt = 3.58
bfs = 1.627
kappa = 50.0
fibre = ["-y", "x", "0.3"]
[[bc]]
type = "dirichlet"
boundary = "theta_max"
value = [0, 0, 0]
components = [2]
[[bc]]
type = "dirichlet"
boundary = "phi_min"
value = [0, 0, 0]
components = [1]
[[bc]]
type = "dirichlet"
boundary = "phi_max"
value = [0, 0, 0]
components = [0]
[[bc]]
type = "pressure"
boundary = "inner"
value = 0.3
[loads]
steps = 2
[solver]
rtol = 1e-10
"#;

const BEAM: &str = r#"
[mesh]
generator = "box"
n = [6, 2, 2]
upper = [3.0, 1.0, 1.0]
cell = "hexahedron"
[space]
degree = 2
[physics]
kind = "hyperelasticity"
law = "neo-hookean"
E = 10.0
nu = 0.3
body_force = [0.0, 0.0, -0.05]
[[bc]]
type = "dirichlet"
boundary = "xmin"
value = [0, 0, 0]
[loads]
steps = 2
[solver]
rtol = 1e-10
"#;

/// The follower pressure's forces and Jacobian entries, integrated on the device, equal the host's:
/// on the shell's inner wall (3D), on an edge in plane strain (P2 triangles, Q2 quadrilaterals) and in
/// plane stress (the same, and the fibre law on P2 triangles: the edge thickness's kernels).
#[test]
fn gpu_pressure_terms_equal_the_cpu() {
    let Some(be) = gpu() else { return };
    let tri = hyper_common::pressed_square("triangle", 2, 0.3, "gmres");
    let quad = hyper_common::pressed_square("quadrilateral", 2, 0.3, "gmres");
    // Plane stress: the edges' current thickness from the cells beside them (fibre frames too).
    let usyk = tri.replace("law = \"neo-hookean\"\nE = 3.0\nnu = 0.3", "law = \"usyk\"\nC = 0.876\nbf = 18.48\nbt = 3.58\nbfs = 1.627\nkappa = 50.0\nfibre = [\"1\", \"0.4 * x\"]");
    assert_ne!(usyk, tri);
    for text in [SHELL.to_string(), tri.clone(), quad.clone(), stress(&tri), stress(&quad), stress(&usyk)] {
        let (_, prep) = prepare_text(&text).unwrap();
        assert!(!prep.pressure.is_empty());
        let n = prep.mask.len();
        let u: Vec<f64> = (0..n).map(|i| 0.02 * (0.37 * i as f64).sin()).collect();
        let mut zero = prep.pattern.clone();
        zero.values.iter_mut().for_each(|v| *v = 0.0);
        let mut cpu = cpu_system(&prep).unwrap();
        cpu.set_pressure(&Cpu, &prep.pressure).unwrap();
        let (mut k, mut r) = (zero.clone(), vec![0.0; n]);
        cpu.add_pressure(&Cpu, &u, 0.7, &mut r, Some(&mut k)).unwrap();
        assert!(r.iter().any(|v| v.abs() > 1e-3) && k.values.iter().any(|v| v.abs() > 1e-3), "the pressure should act");
        let mut gsys = GpuHyper::new(&be, &prep.el).unwrap();
        gsys.set_pressure(&be, &prep.pressure).unwrap();
        let ud = be.from_host(&u).unwrap();
        let mut rd = be.zeros(n).unwrap();
        let mut kd = galerkin::backend::cuda::DeviceCsr::from_host(&be, &zero).unwrap();
        gsys.add_pressure(&be, &ud, 0.7, &mut rd, Some(&mut kd)).unwrap();
        let (er, ek) = (rel(&be.to_host(&rd).unwrap(), &r), rel(&be.matrix_to_host(&kd).unwrap().values, &k.values));
        assert!(er < 1e-12 && ek < 1e-12, "pressure ({}D): residual {er:.2e}, Jacobian {ek:.2e}", prep.el.dim);
    }
}

/// A 2D problem file in plane stress.
fn stress(text: &str) -> String {
    text.replace("kind = \"hyperelasticity\"", "kind = \"hyperelasticity\"\nplane = \"stress\"")
}

/// Whole Newton runs agree: the beam (CG, block Jacobi), the pressurised Usyk shell (GMRES), the
/// plane-strain Usyk strip (CG, 2×2 block Jacobi, inexact Newton), the square squeezed by an edge
/// pressure (GMRES), and in plane stress the strip and the squeezed square (its edge's thickness
/// following the cells beside it).
#[test]
fn gpu_newton_solution_equals_the_cpu() {
    let Some(be) = gpu() else { return };
    let pressed = hyper_common::pressed_square("quadrilateral", 2, 0.3, "gmres");
    let sheet = stress(STRIP);
    let pressed_sheet = stress(&hyper_common::pressed_square("triangle", 2, 0.3, "gmres"));
    for text in [BEAM, SHELL, STRIP, pressed.as_str(), sheet.as_str(), pressed_sheet.as_str()] {
        let (f, mut prep) = prepare_text(text).unwrap();
        let steps = f.loads.steps;
        let mut sys = cpu_system(&prep).unwrap();
        let (uc, rc, _) = solve_on(&Cpu, &mut sys, &mut prep, steps).unwrap();
        let (_, mut prep) = prepare_text(text).unwrap();
        let mut gsys = GpuHyper::new(&be, &prep.el).unwrap();
        let (ug, rg, _) = solve_on(&be, &mut gsys, &mut prep, steps).unwrap();
        let e = rel(&ug, &uc);
        assert!(e < 1e-8, "GPU vs CPU solution {e:.2e}");
        assert!(uc.iter().any(|v| v.abs() > 1e-2), "the load should move the body");
        for (a, b) in rc.iter().zip(&rg) {
            assert_eq!(a.iterations.len(), b.iterations.len(), "same Newton iterations per step");
        }
    }
}

/// The multigrid V-cycle on the device (coarse Jacobians assembled by the GPU kernel, transfers
/// and smoothing as device SpMV, the coarsest solve through the host) equals the CPU's applied
/// to the same vector, and Newton with it reaches the CPU's solution.
#[test]
fn gpu_multigrid_equals_the_cpu() {
    multigrid_matches_the_cpu(&hyper_common::usyk_cube(6, 2, "multigrid"));
}

/// The same with `[physics] quadrature = "stiffness"`: the coarse P1 levels assembled with one
/// point per cell on both backends.
#[test]
fn gpu_multigrid_with_the_stiffness_rule_equals_the_cpu() {
    multigrid_matches_the_cpu(&hyper_common::usyk_cube(6, 2, "multigrid").replace("law = \"usyk\"", "law = \"usyk\"\nquadrature = \"stiffness\""));
}

fn multigrid_matches_the_cpu(text: &str) {
    use galerkin::hyperelastic::multigrid::MgSystem;
    let Some(be) = gpu() else { return };
    let (f, mut prep) = prepare_text(text).unwrap();
    let mut mc = galerkin::hyperelastic::run::cpu_multigrid(&f, &prep, cpu_system(&prep).unwrap()).unwrap();
    let mut mg = MgSystem::build(&be, &f, &prep, GpuHyper::new(&be, &prep.el).unwrap(), &f.solver.multigrid, |el| GpuHyper::new(&be, el)).unwrap();
    assert_eq!(mc.sizes(), mg.sizes());
    // One V-cycle at a deformed state.
    let u = prep.el.space.interpolate(|x, v| {
        v[0] = 0.05 * x[0] * x[1];
        v[1] = -0.04 * x[0] * x[2];
        v[2] = -0.08 * x[0] * x[0];
    });
    let n = u.len();
    let zeros = vec![0.0; n];
    let (mut kc, mut r) = (mc.new_matrix(&Cpu).unwrap(), vec![0.0; n]);
    mc.internal(&Cpu, &u, &mut r, Some(&mut kc)).unwrap();
    let mut rc = r.clone();
    Cpu.eliminate(&mut kc, &mut rc, &prep.mask, &zeros).unwrap();
    let ud = be.from_host(&u).unwrap();
    let (mut kg, mut rg) = (mg.new_matrix(&be).unwrap(), be.zeros(n).unwrap());
    mg.internal(&be, &ud, &mut rg, Some(&mut kg)).unwrap();
    be.eliminate(&mut kg, &mut rg, &be.from_host(&prep.mask).unwrap(), &be.from_host(&zeros).unwrap()).unwrap();
    let x: Vec<f64> = (0..n).map(|i| prep.mask[i] * (0.37 * i as f64).sin()).collect();
    let mut yc = vec![0.0; n];
    mc.multigrid(&Cpu, &u, &kc).unwrap().unwrap().apply(&Cpu, &x, &mut yc).unwrap();
    let mut yg = be.zeros(n).unwrap();
    mg.multigrid(&be, &ud, &kg).unwrap().unwrap().apply(&be, &be.from_host(&x).unwrap(), &mut yg).unwrap();
    let e = rel(&be.to_host(&yg).unwrap(), &yc);
    assert!(e < 1e-9, "GPU V-cycle vs CPU {e:.2e}");
    // Whole Newton runs.
    let (uc, repc, _) = solve_on(&Cpu, &mut mc, &mut prep, 1).unwrap();
    let (_, mut prep) = prepare_text(text).unwrap();
    let (ug, repg, _) = solve_on(&be, &mut mg, &mut prep, 1).unwrap();
    let e = rel(&ug, &uc);
    assert!(e < 1e-6, "GPU vs CPU multigrid Newton solution {e:.2e}");
    assert!(uc.iter().any(|v| v.abs() > 1e-2), "the load should move the body");
    let its = |r: &[galerkin::hyperelastic::LoadStepReport]| r.iter().flat_map(|s| s.all_iterations()).map(|i| i.linear_iterations).collect::<Vec<_>>();
    eprintln!("multigrid CG iterations per Newton step: CPU {:?}, GPU {:?}", its(&repc), its(&repg));
}

/// The matrix values in compressible memory (`DeviceCsr::from_host_compressible`, the GPU Jacobian's
/// matrix since the thirty-fifth pass) assemble the same Jacobian as ordinary memory: the default and
/// node blocks, P2, both rules, every law; twice (the zeroing inside the compressible memory), and
/// the product reads them back. Skips, saying so, where the device has no generic compression.
#[test]
fn gpu_compressible_values_equal_the_cpu() {
    let Some(be) = gpu() else { return };
    for law in laws() {
        for stiffness in [false, true] {
            let (mk, u) = tet_case(law, 2, stiffness);
            let what = format!("compressible {law:?} P2 stiffness rule {stiffness}");
            let (gsys, ud, r, k) = gpu_equals_cpu(&be, mk(), &u, &what);
            let cc = be.device().compute_capability;
            let (dsc, ddefs) = default_variant(&mk(), cc).unwrap();
            let blocks = tc_applies(&mk(), cc).then(|| GpuHyper::variant(&be, &mk(), dsc, &[&ddefs[..], TC_BLOCKS].concat()).unwrap());
            for (sys, name) in std::iter::once((&gsys, "default")).chain(blocks.as_ref().map(|b| (b, "blocks"))) {
                let mut kd = galerkin::backend::cuda::DeviceCsr::from_host_compressible(&be, &sys.pattern).unwrap();
                if !kd.is_compressible() {
                    eprintln!("skipped: this device has no compressible memory");
                    return;
                }
                let mut rd = be.zeros(u.len()).unwrap();
                sys.assemble(&be, &ud, &mut rd, Some(&mut kd)).unwrap();
                sys.assemble(&be, &ud, &mut rd, Some(&mut kd)).unwrap();
                let vals = be.matrix_to_host(&kd).unwrap().values;
                let vals = match sys.blocks() {
                    Some(b) => b.host.to_csr(&vals).unwrap(),
                    None => vals,
                };
                finite_and_equal(&vals, &k, &format!("{what} {name}: Jacobian"));
                finite_and_equal(&be.to_host(&rd).unwrap(), &r, &format!("{what} {name}: residual"));
                if name == "default" {
                    // the CSR product with the values in compressible memory
                    let mut y = be.zeros(u.len()).unwrap();
                    kd.apply(&be, &ud, &mut y).unwrap();
                    let mut m = gsys.pattern.clone();
                    m.values = k.clone();
                    let mut want = vec![0.0; u.len()];
                    m.spmv(&u, &mut want);
                    assert!(rel(&be.to_host(&y).unwrap(), &want) < 1e-12, "{what}: the product");
                }
            }
        }
    }
}
