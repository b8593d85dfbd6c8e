//! Hierarchical (integrated Legendre) hexahedra for 3D elasticity: element matrices are symmetric
//! with exactly the six rigid-body modes in their null space; a manufactured solution converges
//! exponentially in p on a fixed mesh and at rate p in h (on meshes whose cells see their shared
//! edges and faces in different orientations); a cantilever converges under p-refinement to beam
//! theory.
mod common;
use common::*;
use galerkin::fe::ModeSet;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::norms::error_norms;
use galerkin::operator::{AssemblyLevel, ElementIntegrator, VectorFn};
use galerkin::physics::Elasticity;
use galerkin::problem::{vector, LinearProblem};
use galerkin::space::FunctionSpace;
use std::f64::consts::PI;
use std::sync::Arc;

const LAMBDA: f64 = 1.2;
const MU: f64 = 0.7;

/// A box mesh with every cell's vertex list rotated, its interior vertices moved off the grid
/// (non-affine cells) when `distort`.
fn twisted(n: usize, distort: bool) -> Arc<Mesh> {
    let m = if distort { distorted(CellType::Hexahedron, n) } else { unit_mesh(CellType::Hexahedron, n) };
    Arc::new(generate::rotate_hexahedra(&m, 7).unwrap())
}

/// u = sin πx sin πy sin πz (1, 2, −1) + an affine field (non-zero Dirichlet data), and the body
/// force f = −(λ + μ) ∇(∇·u) − μ Δu.
fn manufactured() -> (VectorFn, VectorFn) {
    let a = [1.0, 2.0, -1.0];
    let exact: VectorFn = Arc::new(move |x, u| {
        let s = (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin();
        let lin = [0.1 + 0.2 * x[1], -0.3 * x[0] + 0.1 * x[2], 0.05 * x[0] + 0.2];
        for c in 0..3 {
            u[c] = a[c] * s + lin[c];
        }
    });
    let force: VectorFn = Arc::new(move |x, f| {
        let (s, c) = ([(PI * x[0]).sin(), (PI * x[1]).sin(), (PI * x[2]).sin()], [(PI * x[0]).cos(), (PI * x[1]).cos(), (PI * x[2]).cos()]);
        let phi = s[0] * s[1] * s[2];
        // Hessian of φ.
        let mut h = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                h[i][j] = if i == j { -PI * PI * phi } else { PI * PI * c[i] * c[j] * s[3 - i - j] };
            }
        }
        for i in 0..3 {
            let grad_div: f64 = (0..3).map(|j| h[i][j] * a[j]).sum();
            f[i] = -(LAMBDA + MU) * grad_div + MU * 3.0 * PI * PI * phi * a[i];
        }
    });
    (exact, force)
}

fn solve_manufactured(space: Arc<FunctionSpace>, level: AssemblyLevel) -> galerkin::operator::norms::ErrorNorms {
    let (exact, force) = manufactured();
    let ex = exact.clone();
    let sol = LinearProblem::new(space.clone(), Elasticity::lame(LAMBDA, MU, 3))
        .source(force)
        .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], Arc::new(move |x, u: &mut [f64]| ex(x, u)))
        .solve(level, &if level == AssemblyLevel::Full { direct() } else { cg(1e-12) })
        .expect("solve");
    error_norms(&space, &sol.u, &exact).expect("norms")
}

fn hier(mesh: Arc<Mesh>, p: usize, modes: ModeSet) -> Arc<FunctionSpace> {
    Arc::new(FunctionSpace::hierarchical(mesh, p, modes, 3).expect("space"))
}

/// Every element matrix (trunk and full, p = 1…5, on a distorted cell) is symmetric, and its null
/// space is exactly the six rigid-body motions: they are annihilated, and no other eigenvalue
/// comes near zero.
#[test]
fn element_matrices_are_symmetric_with_six_rigid_modes() {
    let mesh = twisted(2, true);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    for (p, modes) in [(1, ModeSet::Trunk), (2, ModeSet::Trunk), (3, ModeSet::Trunk), (4, ModeSet::Trunk), (5, ModeSet::Trunk), (3, ModeSet::Full)] {
        let space = hier(mesh.clone(), p, modes);
        let integ = ElementIntegrator::new(&space, &physics, None).unwrap();
        let nd = integ.elem_size();
        let mut ke = vec![0.0; nd * nd];
        let mut s = Default::default();
        let c = 5;
        integ.element_matrix(c, &mut s, &mut ke).unwrap();
        let scale = ke.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..nd {
            for j in 0..i {
                assert!((ke[i * nd + j] - ke[j * nd + i]).abs() < 1e-13 * scale, "p = {p}: K not symmetric at ({i}, {j})");
            }
        }
        // Rigid motions of the space, in this cell's local (signed) coefficients.
        let rigid: [fn([f64; 3]) -> [f64; 3]; 6] = [
            |_| [1.0, 0.0, 0.0],
            |_| [0.0, 1.0, 0.0],
            |_| [0.0, 0.0, 1.0],
            |x| [-x[1], x[0], 0.0],
            |x| [0.0, -x[2], x[1]],
            |x| [x[2], 0.0, -x[0]],
        ];
        for r in rigid {
            let g = space.interpolate(|x, o| o.copy_from_slice(&r(x)));
            let local: Vec<f64> = (0..nd).map(|i| space.dofmap.sign(c, i / 3) * g[space.dofmap.cell(c)[i / 3] * 3 + i % 3]).collect();
            let norm = local.iter().map(|v| v * v).sum::<f64>().sqrt();
            let kr = (0..nd).map(|i| (0..nd).map(|j| ke[i * nd + j] * local[j]).sum::<f64>().abs()).fold(0.0, f64::max);
            assert!(kr < 1e-11 * scale * norm, "p = {p}: a rigid motion is not in the null space ({kr:e})");
        }
        let k = faer::Mat::from_fn(nd, nd, |i, j| ke[i * nd + j] / scale);
        let mut ev: Vec<f64> = k.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        ev.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert!(ev[5].abs() < 1e-10, "p = {p} {modes:?}: fewer than six zero eigenvalues: {:?}", &ev[..7]);
        assert!(ev[6] > 1e-7, "p = {p} {modes:?}: a spurious zero-energy mode ({:e})", ev[6]);
        assert_eq!(space.element.ndofs(), galerkin::fe::HierarchicalHex::count(p, modes));
    }
}

/// On a fixed 2³ mesh the error falls exponentially with p: by a fixed factor every two degrees
/// and by more than 10² from p = 1 to p = 6. The trunk (serendipity) space on parallelepipeds;
/// on distorted cells only the full space keeps its accuracy (serendipity spaces lose order on
/// non-affine cells: Arnold, Boffi and Falk 2002), so that is what the distorted mesh runs.
#[test]
fn error_falls_exponentially_with_p() {
    for (modes, distort) in [(ModeSet::Trunk, false), (ModeSet::Full, true)] {
        let mesh = twisted(2, distort);
        let errs: Vec<f64> = (1..=6).map(|p| solve_manufactured(hier(mesh.clone(), p, modes), AssemblyLevel::Full).h1_semi).collect();
        eprintln!("H1 error against p = 1…6 ({modes:?}, 2³ cells, distorted {distort}): {errs:.3?}");
        // The trunk space gains little at odd p (only edge modes arrive), so compare every other
        // degree: a fixed factor per two degrees is exponential decay.
        for p in 2..errs.len() {
            assert!(errs[p] < errs[p - 2] / 3.0, "{modes:?} p = {}: {} vs {}", p + 1, errs[p], errs[p - 2]);
        }
        assert!(errs[5] < 1e-2 * errs[0], "{modes:?}: {errs:?}");
    }
}

/// Under h-refinement the H1 error falls at rate p and L2 at p + 1: trunk p = 2, 3 on
/// parallelepipeds, full p = 2 on distorted cells.
#[test]
fn error_falls_at_rate_p_with_h() {
    for (p, modes, distort, sizes) in [(2, ModeSet::Trunk, false, [2, 4, 8]), (3, ModeSet::Trunk, false, [2, 4, 6]), (2, ModeSet::Full, true, [2, 4, 8])] {
        let mut hs = Vec::new();
        let mut errs = Vec::new();
        for n in sizes {
            errs.push(solve_manufactured(hier(twisted(n, distort), p, modes), AssemblyLevel::Full));
            hs.push(1.0 / n as f64);
        }
        assert_rates(&format!("hierarchical {modes:?} p = {p}"), p, &hs, &errs, 0.3);
    }
}

/// The element level (element matrices applied inside the Krylov solver) gives the full level's
/// solution.
#[test]
fn element_level_matches_full() {
    let space = hier(twisted(2, true), 3, ModeSet::Trunk);
    let a = solve_manufactured(space.clone(), AssemblyLevel::Full);
    let b = solve_manufactured(space, AssemblyLevel::Element);
    assert!((a.l2 - b.l2).abs() < 1e-9 * a.l2_exact, "{a:?} vs {b:?}");
}

/// A slender cantilever meshed with one element through the thickness (10 × 1 × 1 cells) under
/// p-refinement: p = 1 locks (shear locking of trilinear bricks), from p = 2 on the tip
/// deflection lies within 0.5 % of beam theory and the changes between degrees shrink.
#[test]
fn cantilever_converges_under_p_refinement() {
    let (l, h, w, e, nu, load) = (10.0, 1.0, 1.0, 1000.0, 0.0, 1.0);
    let mesh = Arc::new(generate::rotate_hexahedra(&generate::box_mesh(10, 1, 1, [0.0; 3], [l, h, w], CellType::Hexahedron).unwrap(), 3).unwrap());
    let theory = timoshenko(load, l, h, w, e, nu);
    let mut tips = Vec::new();
    for p in 1..=6 {
        let space = hier(mesh.clone(), p, ModeSet::Trunk);
        let sol = LinearProblem::new(space.clone(), Elasticity::young_poisson(e, nu, 3).unwrap())
            .dirichlet(["xmin"], vector(|_| [0.0; 3]))
            .neumann(["xmax"], Arc::new(move |_x, _n, t: &mut [f64]| t.copy_from_slice(&[0.0, -load / (h * w), 0.0])))
            .solve(AssemblyLevel::Full, &direct())
            .unwrap();
        let wts = space.point_weights([l, h / 2.0, w / 2.0]).expect("tip inside the mesh");
        let tip = -wts.iter().map(|&(node, wt)| wt * sol.u[node * 3 + 1]).sum::<f64>();
        tips.push(tip);
    }
    let rel: Vec<f64> = tips.iter().map(|t| (t - theory).abs() / theory).collect();
    eprintln!("cantilever tip deflection p = 1…6: {tips:.6?} (Timoshenko {theory:.5}); relative errors {rel:.2?}");
    assert!(rel[0] > 0.2, "p = 1 on one element through the thickness should lock");
    assert!(rel[1..].iter().all(|&r| r < 0.005), "p ≥ 2 within 0.5 % of beam theory: {rel:?}");
    let change = |p: usize| (tips[p] - tips[p - 1]).abs();
    assert!(change(2) < 0.2 * change(1) && change(5) < 0.2 * change(2), "p-refinement converges: {tips:?}");
}

/// Dofs: a shared face's modes are numbered once, so the trunk space on n³ cells has the p-version
/// count (vertices + (p−1)·edges + face modes·faces + interior modes·cells).
#[test]
fn dof_counts_follow_the_entities() {
    let n = 3usize;
    let mesh = twisted(n, true);
    let (v, e, f) = ((n + 1).pow(3), 3 * n * (n + 1) * (n + 1), 3 * n * n * (n + 1));
    for p in 1..=7 {
        let space = hier(mesh.clone(), p, ModeSet::Trunk);
        let face = if p >= 4 { (p - 2) * (p - 3) / 2 } else { 0 };
        let interior = if p >= 6 { (p - 3) * (p - 4) * (p - 5) / 6 } else { 0 };
        assert_eq!(space.dofmap.num_nodes, v + (p - 1) * e + face * f + interior * n.pow(3), "p = {p}");
    }
}

/// The CPU's element matrices of every cell in the global orientation (S K S), for the GPU to meet.
fn cpu_matrices(integ: &ElementIntegrator) -> Vec<f64> {
    let space = integ.space;
    let nd = integ.elem_size();
    let ncomp = nd / space.dofmap.nodes_per_cell;
    let mut all = vec![0.0; space.mesh.num_cells() * nd * nd];
    let mut s = Default::default();
    for (c, ke) in all.chunks_mut(nd * nd).enumerate() {
        integ.element_matrix(c, &mut s, ke).unwrap();
        for i in 0..nd {
            for j in 0..nd {
                ke[i * nd + j] *= space.dofmap.sign(c, i / ncomp) * space.dofmap.sign(c, j / ncomp);
            }
        }
    }
    all
}

/// Every GPU scheme (the default assembly kernel, one thread per cell, one thread per quadrature
/// point, tiled moments) gives the CPU's element matrices to round-off: trunk p = 1…5 with Gauss,
/// p = 5 with the seed's rule, full p = 3, on distorted cells in every orientation.
#[test]
fn gpu_element_matrices_match_the_cpu_for_every_scheme() {
    use galerkin::fe::QuadratureKind;
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Tuning;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let mesh = twisted(3, true);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    let mut cases: Vec<(usize, ModeSet, QuadratureKind)> = (1..=5).map(|p| (p, ModeSet::Trunk, QuadratureKind::Gauss)).collect();
    cases.push((5, ModeSet::Trunk, QuadratureKind::Seed));
    cases.push((3, ModeSet::Full, QuadratureKind::Gauss));
    // Full p = 2: 27 functions, 81 columns, so every other row of a matrix is not 16-byte aligned
    // and the tiled default's bulk writes fall back to stores there (and for the last, odd block).
    cases.push((2, ModeSet::Full, QuadratureKind::Gauss));
    for (p, modes, kind) in cases {
        let space = hier(mesh.clone(), p, modes);
        let integ = ElementIntegrator::with_quadrature(&space, &physics, None, kind).unwrap();
        let want = cpu_matrices(&integ);
        for scheme in Integration::ALL {
            let tuning = Tuning { integration: scheme, ..Default::default() };
            let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), tuning).unwrap();
            let got = asm.element_matrices_to_host(&gpu).unwrap();
            let d = rel_diff(&want, &got);
            eprintln!("p = {p} {modes:?} {kind:?} {}: max relative difference {d:.1e}", scheme.name());
            assert!(d < 1e-12, "p = {p} {modes:?} {kind:?} {}: GPU element matrices differ from the CPU's by {d:e}", scheme.name());
        }
    }
}

/// Every launch shape of the tiled scheme the benchmark sweeps (staging from the 1D factor tables
/// or from the reference-gradient table, 8 or 16 warps, alternating order, streaming stores,
/// one or two half tiles per warp stored during the next round (deferred writes, across rounds
/// and cells), two tiles per warp, two blocks per SM, 8 to 32 points per pass, warp-specialised
/// staging warps on named barriers) gives the CPU's element matrices to round-off, at p = 2 (one
/// round of tiles) and 5 (several rounds; one with two tiles per warp) on distorted, rotated cells.
#[test]
fn every_tiled_shape_matches_the_cpu() {
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    use galerkin::operator::level::full::schemes::TiledConfig;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Tuning;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let mesh = twisted(2, true);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    for p in [2, 5] {
        let space = hier(mesh.clone(), p, ModeSet::Trunk);
        let integ = ElementIntegrator::new(&space, &physics, None).unwrap();
        let want = cpu_matrices(&integ);
        let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), Tuning { integration: Integration::Tiled, ..Default::default() }).unwrap();
        // Trunk p ≥ 3 stages from the 1D factor tables by default (the basis on a Gauss rule splits).
        assert_eq!(asm.tiled_default().tensor, p >= 3, "p = {p}: default staging");
        for cfg in TiledConfig::sweep(space.dofmap.nodes_per_cell) {
            let got = asm.tiled_matrices_to_host(&gpu, cfg).unwrap_or_else(|e| panic!("p = {p} {}: {e}", cfg.label()));
            let d = rel_diff(&want, &got);
            eprintln!("p = {p} tiled {}: max relative difference {d:.1e}", cfg.label());
            assert!(d < 1e-12, "p = {p} tiled {}: GPU element matrices differ from the CPU's by {d:e}", cfg.label());
            // Deferred writes carried from one cell into the block's next: 3 blocks for 8 cells.
            if cfg.defer > 0 {
                let got = asm.tiled_matrices_to_host_on(&gpu, cfg, Some(3)).unwrap_or_else(|e| panic!("p = {p} {} on 3 blocks: {e}", cfg.label()));
                let d = rel_diff(&want, &got);
                eprintln!("p = {p} tiled {} on 3 blocks: max relative difference {d:.1e}", cfg.label());
                assert!(d < 1e-12, "p = {p} tiled {} on 3 blocks: GPU element matrices differ from the CPU's by {d:e}", cfg.label());
            }
        }
    }
}

/// Paired tiles (issue 16, tenth round; the default at p = 3): two needed 8 × 8 node blocks per
/// tile, lower ones taken transposed (moments M_lk), give the CPU's matrices at the degrees the
/// sweep test leaves out —
/// p = 1 (one block, half a tile idle), p = 3 (every column even after the walk), p = 4 (the last
/// column's half tile idle) — packed and full, as the unpaired shape does.
#[test]
fn paired_tiles_match_the_cpu_at_every_degree() {
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    use galerkin::operator::level::full::schemes::TiledConfig;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Tuning;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let mesh = twisted(2, true);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    for p in [1, 3, 4] {
        let space = hier(mesh.clone(), p, ModeSet::Trunk);
        let integ = ElementIntegrator::new(&space, &physics, None).unwrap();
        let want = cpu_matrices(&integ);
        let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), Tuning { integration: Integration::Tiled, ..Default::default() }).unwrap();
        // At p = 1 the default is the CUDA-core engine (no tiles): the eleventh round's narrow tiles.
        let nloc = space.dofmap.nodes_per_cell;
        let default = if p == 1 { TiledConfig::round11(nloc)[0] } else { TiledConfig::tenth_round(nloc) };
        assert_eq!(default.paired, p == 3, "p = {p}: paired tiles are the tenth round's default at p = 3 only");
        let paired = TiledConfig { paired: true, ..default };
        for cfg in [paired, TiledConfig { packed: false, ..paired }, TiledConfig { paired: false, ..paired }] {
            let got = asm.tiled_matrices_to_host(&gpu, cfg).unwrap_or_else(|e| panic!("p = {p} {}: {e}", cfg.label()));
            let d = rel_diff(&want, &got);
            eprintln!("p = {p} tiled {}: max relative difference {d:.1e}", cfg.label());
            assert!(d < 1e-12, "p = {p} tiled {}: GPU element matrices differ from the CPU's by {d:e}", cfg.label());
        }
    }
}

/// Each tiled shape `shapes(p, nloc)` names (which may assert what it expects of them) gives the
/// CPU's element matrices at trunk degrees `degrees` on 27 distorted, rotated cells, on a grid of
/// a block per cell (or group) and on 2 blocks, each looping over several cells.
fn tiled_shapes_match_the_cpu_on_27_cells(degrees: std::ops::RangeInclusive<usize>, shapes: impl Fn(usize, usize) -> Vec<galerkin::operator::level::full::schemes::TiledConfig>) {
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Tuning;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let mesh = twisted(3, true);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    for p in degrees {
        let space = hier(mesh.clone(), p, ModeSet::Trunk);
        let integ = ElementIntegrator::new(&space, &physics, None).unwrap();
        let want = cpu_matrices(&integ);
        let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), Tuning { integration: Integration::Tiled, ..Default::default() }).unwrap();
        for cfg in shapes(p, space.dofmap.nodes_per_cell) {
            for grid in [None, Some(2)] {
                let got = asm.tiled_matrices_to_host_on(&gpu, cfg, grid).unwrap_or_else(|e| panic!("p = {p} {} (grid {grid:?}): {e}", cfg.label()));
                let d = rel_diff(&want, &got);
                eprintln!("p = {p} tiled {} (grid {grid:?}): max relative difference {d:.1e}", cfg.label());
                assert!(d < 1e-12, "p = {p} tiled {} (grid {grid:?}): GPU element matrices differ from the CPU's by {d:e}", cfg.label());
            }
        }
    }
}

/// The eleventh round's shapes of scheme III ([`TiledConfig::round11`], issue 16; at p = 1 the
/// default since, beside the tenth round's default they vary): several cells
/// per block (groups of warps with named barriers, one-warp groups on warp barriers), each group's
/// next coordinates prefetched, narrow tiles at p = 1, tiles balanced over the warps and two tiles
/// per warp at p = 4 — give the CPU's matrices at p = 1–4, on 27 distorted, rotated cells so groups
/// run past the last cell, and on 2 blocks, so each group loops over several cells and the
/// prefetch carries coordinates from one cell to the next. (p = 5's shapes are in the sweep test.)
#[test]
fn cell_groups_and_balanced_tiles_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(1..=4, |p, nloc| {
        let shapes = TiledConfig::round11(nloc);
        assert!(shapes.len() >= if p == 4 { 2 } else { 5 }, "p = {p}: {} new shapes", shapes.len());
        assert!(p > 1 || shapes.iter().any(|c| c.narrow && c.cells == 8 && c.prefetch), "p = 1: narrow prefetching groups swept");
        // The eleventh round's p = 1 default (narrow tiles, 8 cells a block) is the first new shape;
        // since round 12 the CUDA-core engine is the default there, and the narrow tiles follow it
        // in the sweep.
        assert!(p > 1 || (shapes[0].narrow && TiledConfig::for_functions(nloc).lanes > 0), "p = 1: the narrow tiles, the pair lanes the default");
        assert!(p > 1 || TiledConfig::sweep(nloc).contains(&shapes[0]), "p = 1: the narrow tiles are swept");
        std::iter::once(TiledConfig::tenth_round(nloc)).chain(shapes).collect()
    });
}

/// The twelfth round's shapes of scheme III ([`TiledConfig::round12`], issue 16) and the default
/// they vary: wide writes (the round's tiles formed into a packed image in shared memory, stored
/// as row segments by double2 stores or sent by bulk copies; p = 5's rounds in several groups,
/// the image at either 16-byte phase of a cell's odd-sized triangle), more blocks per SM at p = 2,
/// 3, two blocks of 8 warps at p = 4 — give the CPU's matrices at p = 2–5 on 27 distorted, rotated
/// cells, on a grid of a block per cell and on 2 blocks (each looping over cells, so an image is
/// reused while the previous cell's copies may still read it).
#[test]
fn wide_writes_and_register_caps_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(2..=5, |p, nloc| {
        let default = TiledConfig::for_functions(nloc);
        let shapes: Vec<TiledConfig> = std::iter::once(default).chain(TiledConfig::round12(nloc)).collect();
        assert!(shapes.iter().any(|c| c.wide == 1) && shapes.iter().any(|c| c.wide == 2), "p = {p}: both wide writes tested");
        // Wide writes by bulk copies are the default at trunk p = 2 since the twelfth round, a copy
        // per whole strip (`wide` 3) at p = 2, 3 since the thirteenth, at p = 4 since the fifteenth
        // (the pipelined rounds send each round's image by strips), at p = 5 since the twenty-second
        // (its three-round Gram tiles send each round's image as its moment strips).
        assert!(default.wide == 3 && default.packed && !default.paired, "p = {p}: default wide writes");
        shapes
    });
}

/// The thirteenth round's split moments ([`TiledConfig::round13`], issue 16: each tile's nine
/// moments over a pair of warps, 5 and 4, swapped through the staging buffers so each warp forms
/// and stores one half tile) give the CPU's matrices at p = 2, 3 in every swept shape — wide
/// bulk-copy writes and per-warp stores, unpaired and paired tiles (p = 3: a paired tile's idle
/// half, transposed blocks), every register cap — and in full storage and with two cell groups a
/// block; and one bulk copy per whole strip (`wide` 3) with and without the split; on 27
/// distorted, rotated cells, a block per cell and 2 blocks looping over cells.
#[test]
fn split_moments_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(2..=3, |p, nloc| {
        let shapes = TiledConfig::round13(nloc);
        assert!(shapes.iter().filter(|c| c.split).count() >= 4, "p = {p}: the split shapes");
        assert!(p == 2 || shapes.iter().any(|c| c.paired) && shapes.iter().any(|c| c.wide == 2), "p = 3: paired and wide split shapes");
        assert!(shapes.iter().any(|c| c.wide == 3 && c.split) && shapes.iter().any(|c| c.wide == 3 && !c.split), "p = {p}: a bulk copy per whole strip");
        let extra = [TiledConfig { packed: false, ..shapes[0] }, TiledConfig { cells: 2, ..shapes[0] }];
        shapes.into_iter().chain(extra).collect()
    });
}

/// Pipelined cells (issue 16, round 14, [`TiledConfig::round14`]: a resident block forms the next
/// cell's J⁻¹ table under a cell's last multiplies and stages its first pass beside the cell's
/// image, at p = 2 with the image in the buffer the last pass read, at p = 3 in a region of its
/// own) give the CPU's matrices beside the default, on 27 distorted, rotated cells — a block per
/// cell where the grid holds them all — and on 2 blocks, so each block's pipeline runs over 13–14
/// cells, its buffers and image reused while the previous cell's copies may still read them; and
/// a pipelined shape made full (no pipeline: the full-storage path), and round 13's default.
/// The first pipelined shape is the packed default at p = 2, 3 since this round.
#[test]
fn pipelined_cells_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(2..=3, |p, nloc| {
        let shapes = TiledConfig::round14(nloc);
        assert!(shapes.len() >= 2 && shapes.iter().all(|c| c.pipe && c.resident && c.wide == 3 && c.packed), "p = {p}: the pipelined shapes");
        assert_eq!(TiledConfig::for_functions(nloc), shapes[0], "p = {p}: the first pipelined shape is the default");
        let extra = [TiledConfig::round13_default(nloc), TiledConfig { packed: false, ..shapes[0] }];
        shapes.into_iter().chain(extra).collect()
    });
}

/// Paired tiles in the pipelined cells (issue 16, round 15, [`TiledConfig::round15`]: each tile
/// two needed 8 × 8 node blocks of one column, lower ones transposed into the image of the whole
/// triangle, sent by strips) give the CPU's matrices beside the default, on 27 distorted, rotated
/// cells — a block per cell — and on 2 blocks, so each block's pipeline runs over 13–14 cells: at
/// p = 2 (3 tiles, one of them half idle; 28 points in one pass with the image in the buffer the
/// pass read, and 16 in two with an image region of its own) and p = 3 (5 tiles; two passes of 32
/// and four of 16 points); and the first made full (no pipeline, paired tiles: round 10's path).
#[test]
fn paired_pipelined_cells_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(2..=3, |p, nloc| {
        let shapes = TiledConfig::round15(nloc);
        assert!(shapes.len() >= 2 && shapes.iter().all(|c| c.pipe && c.paired && c.resident && c.wide == 3 && c.packed), "p = {p}: the paired pipelined shapes");
        let extra = [TiledConfig::for_functions(nloc), TiledConfig { packed: false, ..shapes[0] }];
        shapes.into_iter().chain(extra).collect()
    });
}

/// Wide writes by bulk copies from an image region of their own (issue 16, round 13,
/// [`TiledConfig::round13_high`]: `wide` 4 at p = 4, 5; the next cell's coordinates, J⁻¹ and
/// first pass prepared under a cell's last passes; at p = 5 also the second round's first pass prestaged by
/// the first round's last, with 32 and 16 points per pass, the latter one image group a round)
/// give the CPU's matrices beside the default, on 27 distorted, rotated cells and on 2 blocks, so
/// each block loops over 13–14 cells — the prestaging crosses cells, every round's image region
/// is reused while the previous round's copies may still read it — and on a resident grid, where
/// some blocks take one cell and others none.
#[test]
fn image_region_wide_writes_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let default = TiledConfig::for_functions(nloc);
        let shapes: Vec<TiledConfig> = std::iter::once(default).chain(TiledConfig::round13_high(nloc)).collect();
        assert!(shapes.iter().any(|c| c.wide == 4 && c.packed && !c.paired), "p = {p}: image-region wide writes tested");
        assert!(shapes.iter().any(|c| c.wide == 4 && c.prestage == 2), "p = {p}: prestaged across cells, tested");
        assert!(p == 4 || shapes.iter().any(|c| c.wide == 4 && c.qcp == 16 && c.prestage == 1), "p = 5: 16 points per pass, prestaged, tested");
        shapes
    });
}

/// The p = 1 engine on the CUDA cores (issue 16, round 12: `full/pair_lanes.rs`, a lane per
/// (cell, node pair), a block per group of consecutive cells) gives the CPU's element matrices to
/// round-off in every shape the benchmark sweeps and in full storage, on 27 distorted, rotated
/// cells (the last group partial: 27 = 3·8 + 3 = 6·4 + 3 = 16 + 11) and on 2 blocks, so each
/// block loops over several groups with the next group's coordinates loaded ahead; and for
/// diffusion (one component: 8 × 8 matrices, a cell's gradients larger than its packed triangle);
/// and (round 13) with the geometry fused, 4, 2 and 1 lanes per point forming J⁻¹ and gradients.
#[test]
fn pair_lanes_match_the_cpu() {
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    use galerkin::operator::level::full::schemes::TiledConfig;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Tuning;
    use galerkin::physics::Diffusion;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let mesh = twisted(3, true);
    let elastic = hier(mesh.clone(), 1, ModeSet::Trunk);
    let scalar = Arc::new(FunctionSpace::hierarchical(mesh.clone(), 1, ModeSet::Trunk, 1).expect("space"));
    let elasticity = Elasticity::lame(LAMBDA, MU, 3);
    let diffusion = Diffusion::new(1.7);
    let cases: [(&Arc<FunctionSpace>, &dyn galerkin::physics::PointwisePhysics); 2] = [(&elastic, &elasticity), (&scalar, &diffusion)];
    for (space, physics) in cases {
        let integ = ElementIntegrator::new(space, physics, None).unwrap();
        let want = cpu_matrices(&integ);
        let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), Tuning { integration: Integration::Tiled, ..Default::default() }).unwrap();
        let shapes = TiledConfig::pair_lanes_shapes(space.dofmap.nodes_per_cell);
        assert!(shapes.len() >= 6 && shapes.iter().all(|c| c.lanes > 0), "the p = 1 engine's shapes");
        let full = TiledConfig { packed: false, ..shapes[0] };
        // Round 13: the geometry fused (F lanes per point form J⁻¹ and the gradients), packed and full.
        let fused: Vec<TiledConfig> = TiledConfig::round13(space.dofmap.nodes_per_cell).into_iter().filter(|c| c.lanes > 0 && c.fuse > 0).collect();
        assert!(fused.len() >= 3, "the fused shapes");
        let fused_full = TiledConfig { packed: false, ..fused[0] };
        for cfg in shapes.into_iter().chain([full]).chain(fused).chain([fused_full]) {
            for grid in [None, Some(2)] {
                let got = asm.tiled_matrices_to_host_on(&gpu, cfg, grid).unwrap_or_else(|e| panic!("{} (grid {grid:?}): {e}", cfg.label()));
                let d = rel_diff(&want, &got);
                eprintln!("p = 1, {} dofs a cell, {} (grid {grid:?}): max relative difference {d:.1e}", integ.elem_size(), cfg.label());
                assert!(d < 1e-12, "p = 1 {} (grid {grid:?}): GPU element matrices differ from the CPU's by {d:e}", cfg.label());
            }
        }
    }
}

/// Packed upper triangles (issue 16, ninth round): scheme III's packed matrices, unpacked, equal
/// the full ones its full-storage shape writes (same kernel otherwise) on a resident grid and on
/// 3 blocks looping over 8 cells; the `element` level applies, and block-Jacobi-preconditions, the
/// same operator from packed triangles as from full matrices on the CPU (the twin: half the bytes)
/// and on the GPU, and the GPU's packed apply equals the CPU's.
#[test]
fn packed_matrices_equal_full_ones() {
    use galerkin::backend::Cpu;
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    use galerkin::operator::level::full::schemes::TiledConfig;
    use galerkin::operator::level::Integration;
    use galerkin::operator::Tuning;
    use galerkin::solver::precond::PreconditionerKind;
    let space = hier(twisted(2, true), 4, ModeSet::Trunk);
    let (_, force) = manufactured();
    let problem = LinearProblem::new(space.clone(), Elasticity::lame(LAMBDA, MU, 3)).source(force).dirichlet(["xmin", "zmax"], vector(|_| [0.0; 3]));
    let full = Tuning { packed: Some(false), ..Default::default() };
    let packed = Tuning { packed: Some(true), ..Default::default() };
    let config = galerkin::problem::SolverConfig { preconditioner: PreconditionerKind::BlockJacobi, ..cg(1e-10) };
    let cpu_full = problem.system(&Cpu, AssemblyLevel::Element, full).unwrap();
    let cpu_packed = problem.system(&Cpu, AssemblyLevel::Element, packed).unwrap();
    let (bf, bp) = (cpu_full.storage_bytes(), cpu_packed.storage_bytes());
    assert!((bp as f64) < 0.51 * bf as f64, "packed element level keeps {bp} bytes against {bf} full");
    let x = test_vector(cpu_full.ndofs());
    let want = cpu_full.apply_host(&x).unwrap();
    let d = rel_diff(&want, &cpu_packed.apply_host(&x).unwrap());
    assert!(d < 1e-13, "CPU packed apply differs from the full one by {d:e}");
    // The packed product sums in another order: CG may take a few iterations more or fewer (108
    // against 110 on the H200 host), to the same solution.
    let (sf, sp) = (cpu_full.solve(&config).unwrap(), cpu_packed.solve(&config).unwrap());
    assert!(sf.stats.iterations.abs_diff(sp.stats.iterations) <= 4, "block Jacobi from packed blocks: {} iterations against {}", sp.stats.iterations, sf.stats.iterations);
    let d = rel_diff(&sf.u, &sp.u);
    assert!(d < 1e-8, "CPU packed solution differs from the full one by {d:e}");
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    let integ = ElementIntegrator::new(&space, &physics, None).unwrap();
    let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), Tuning { integration: Integration::Tiled, ..Default::default() }).unwrap();
    // What the full level sums stays full by default (the packed summation was slower); the
    // element level packs.
    assert!(!asm.tiled_default().packed, "scheme III's summed matrices are full by default");
    let shape = TiledConfig { packed: true, ..asm.tiled_default() };
    let unpacked = asm.tiled_default();
    for grid in [None, Some(3)] {
        let a = asm.tiled_matrices_to_host_on(&gpu, shape, grid).unwrap();
        let b = asm.tiled_matrices_to_host_on(&gpu, unpacked, grid).unwrap();
        let d = rel_diff(&b, &a);
        assert!(d < 1e-15, "packed and full scheme III matrices differ by {d:e} (grid {grid:?})");
    }
    let tiled = |t: Tuning| Tuning { integration: Integration::Tiled, ..t };
    for (what, tuning) in [("packed (default)", tiled(Tuning::default())), ("full", tiled(full))] {
        let sys = problem.system(&gpu, AssemblyLevel::Element, tuning).unwrap();
        let d = rel_diff(&want, &sys.apply_host(&x).unwrap());
        assert!(d < 1e-12, "GPU element level, {what}: apply differs from the CPU's by {d:e}");
        let s = sys.solve(&config).unwrap();
        assert!(s.stats.iterations.abs_diff(sf.stats.iterations) <= 4, "GPU {what}: {} iterations against {}", s.stats.iterations, sf.stats.iterations);
        assert!(rel_diff(&sf.u, &s.u) < 1e-8, "GPU {what}: solution differs");
    }
}

/// The GPU's assembled matrix equals the CPU's for every integration scheme, summed colour by
/// colour and with atomics; the element level applies the same operator; and a GPU CG solve
/// reproduces the CPU solution.
#[test]
fn gpu_assembly_and_solve_match_the_cpu() {
    use galerkin::operator::level::Integration;
    use galerkin::operator::{Scatter, Tuning};
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let space = hier(twisted(3, true), 4, ModeSet::Trunk);
    let (exact, force) = manufactured();
    let ex = exact.clone();
    let problem = LinearProblem::new(space.clone(), Elasticity::lame(LAMBDA, MU, 3))
        .source(force)
        .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], Arc::new(move |x, u: &mut [f64]| ex(x, u)));
    let cpu = problem.assemble(AssemblyLevel::Full).unwrap();
    let a = cpu.matrix_to_host().unwrap().unwrap();
    for scheme in Integration::ALL {
        for scatter in [Scatter::Atomic, Scatter::Colored] {
            let sys = problem.system(&gpu, AssemblyLevel::Full, Tuning { integration: scheme, scatter, ..Default::default() }).unwrap();
            let m = sys.matrix_to_host().unwrap().unwrap();
            assert_eq!(m.col_idx, a.col_idx);
            let d = rel_diff(&a.values, &m.values);
            assert!(d < 1e-12, "{} {}: GPU matrix differs by {d:e}", scheme.name(), scatter.name());
        }
    }
    let x = test_vector(a.nrows);
    let mut ax = vec![0.0; a.nrows];
    a.spmv(&x, &mut ax);
    let sys = problem.system(&gpu, AssemblyLevel::Element, Tuning { integration: Integration::Tiled, ..Default::default() }).unwrap();
    assert!(rel_diff(&ax, &sys.apply_host(&x).unwrap()) < 1e-12);
    // The schemes are for hexahedra; elsewhere they are refused by name, not by a compile error.
    let quads = Arc::new(FunctionSpace::lagrange(unit_mesh(CellType::Quadrilateral, 2), 2, 2).unwrap());
    let plane = LinearProblem::new(quads, Elasticity::lame(LAMBDA, MU, 2)).dirichlet(["xmin"], vector(|_| [0.0; 3]));
    for scheme in [Integration::ThreadPerCell, Integration::ThreadPerPoint, Integration::Tiled] {
        let err = plane.system(&gpu, AssemblyLevel::Element, Tuning { integration: scheme, ..Default::default() }).err().expect("refused");
        assert!(err.to_string().contains("hexahedra"), "{}: {err}", scheme.name());
    }
    let want = cpu.solve(&cg(1e-12)).unwrap();
    let got = problem.system(&gpu, AssemblyLevel::Full, Tuning::default()).unwrap().solve(&cg(1e-12)).unwrap();
    let d = rel_diff(&want.u, &got.u);
    assert!(d < 1e-9, "GPU solution differs from the CPU's by {d:e}");
    let err = error_norms(&space, &got.u, &exact).unwrap();
    assert!(err.l2 < 1e-2 * err.l2_exact, "{err:?}");
}

/// The `examples/hex-p*.toml` files on the GPU (their own `[assembly]` tuning, at the full and
/// element levels) agree with the CPU's solution.
#[test]
fn hex_examples_agree_on_the_gpu() {
    use galerkin::problem::run::{read_problem_file, setup_file};
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let dir = if dir.exists() { dir } else { std::path::PathBuf::from("examples") };
    for name in ["hex-p4-cantilever.toml", "hex-p3-manufactured.toml"] {
        let path = dir.join(name);
        let tuning = read_problem_file(&path).unwrap().assembly.tuning();
        let (_, s) = setup_file(&path, false).unwrap();
        let cpu = s.problem.assemble(AssemblyLevel::Full).unwrap().solve(&s.config).unwrap();
        for level in [AssemblyLevel::Full, AssemblyLevel::Element] {
            let sol = s.problem.system(&gpu, level, tuning).unwrap().solve(&s.config).unwrap();
            let d = rel_diff(&cpu.u, &sol.u);
            assert!(d < 1e-7, "{name} {}: GPU and CPU solutions differ by {d:e}", level.name());
        }
    }
}

/// A degree per cell (the seed's mixed meshes: p = 1 for x < ½, p = 3 beyond) by the minimum rule:
/// an affine field is reproduced exactly (conformity across the interface), the modes the p = 1
/// side drops stay zero, and the manufactured solution's error lies between the uniform p = 1 and
/// p = 3 errors.
#[test]
fn mixed_degrees_follow_the_minimum_rule() {
    let base = unit_mesh(CellType::Hexahedron, 4);
    let tags: Vec<i32> = (0..base.num_cells())
        .map(|c| {
            let x: f64 = base.cell(c).iter().map(|&v| base.coords[v][0]).sum::<f64>() / 8.0;
            if x < 0.5 { 1 } else { 2 }
        })
        .collect();
    let tagged = Mesh::new(CellType::Hexahedron, base.coords.clone(), base.cells.clone(), Some(tags.clone()), base.boundary.clone(), base.tag_names.clone()).unwrap();
    let mesh = Arc::new(generate::rotate_hexahedra(&tagged, 5).unwrap());
    let degrees: Vec<usize> = mesh.cell_tags.iter().map(|&t| if t == 1 { 1 } else { 3 }).collect();
    let space = Arc::new(FunctionSpace::hierarchical_variable(mesh.clone(), &degrees, ModeSet::Trunk, 3).unwrap());
    assert!(!space.frozen.is_empty());
    // Patch test: an affine displacement with its own Dirichlet data and no load.
    let affine = |x: [f64; 3]| [0.1 + 0.2 * x[0] - 0.3 * x[1], -0.2 + 0.1 * x[1] + 0.4 * x[2], 0.3 - 0.1 * x[0] + 0.15 * x[2]];
    let sol = LinearProblem::new(space.clone(), Elasticity::lame(LAMBDA, MU, 3))
        .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], vector(affine))
        .solve(AssemblyLevel::Full, &direct())
        .unwrap();
    let exact: VectorFn = Arc::new(move |x, u| u.copy_from_slice(&affine(x)));
    let err = error_norms(&space, &sol.u, &exact).unwrap();
    assert!(err.l2 < 1e-12 * err.l2_exact, "mixed-degree patch test: {err:?}");
    for &n in &space.frozen {
        assert!((0..3).all(|c| sol.u[n * 3 + c] == 0.0), "frozen node {n} moved");
    }
    let mixed = solve_manufactured(space, AssemblyLevel::Full).h1_semi;
    let p1 = solve_manufactured(hier(mesh.clone(), 1, ModeSet::Trunk), AssemblyLevel::Full).h1_semi;
    let p3 = solve_manufactured(hier(mesh, 3, ModeSet::Trunk), AssemblyLevel::Full).h1_semi;
    eprintln!("H1 errors: uniform p = 1 {p1:.3e}, mixed {mixed:.3e}, uniform p = 3 {p3:.3e}");
    assert!(p3 < mixed && mixed < p1, "{p3} < {mixed} < {p1}");
}

#[path = "hierarchical_matrix_free/mod.rs"]
mod matrix_free;

/// A scalar trunk p = 6 cell (105 functions) has more integration threads than a block: its patch
/// variant once got 0 cells a patch and `assembly.cu` stopped compiling, so the GPU full level of
/// p = 6 Poisson failed whatever the scatter. The atomic and colored scatters now equal the CPU's
/// matrix; the patch scatter (unsigned) is refused with a clear error.
#[test]
fn gpu_full_level_of_scalar_p6_matches_the_cpu() {
    use galerkin::operator::{Scatter, Tuning};
    use galerkin::physics::Diffusion;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let space = Arc::new(FunctionSpace::hierarchical(twisted(2, true), 6, ModeSet::Trunk, 1).expect("space"));
    assert_eq!(space.dofmap.nodes_per_cell, 105);
    let problem = LinearProblem::new(space, Diffusion::new(1.3)).dirichlet(["xmin"], vector(|_| [0.0; 3]));
    let a = problem.assemble(AssemblyLevel::Full).unwrap().matrix_to_host().unwrap().unwrap();
    for scatter in [Scatter::Atomic, Scatter::Colored] {
        let sys = problem.system(&gpu, AssemblyLevel::Full, Tuning { scatter, ..Default::default() });
        let m = sys.unwrap_or_else(|e| panic!("{}: {e}", scatter.name())).matrix_to_host().unwrap().unwrap();
        assert_eq!(m.col_idx, a.col_idx);
        let d = rel_diff(&a.values, &m.values);
        assert!(d < 1e-12, "{}: GPU matrix differs by {d:e}", scatter.name());
    }
    // The patch scatter has no signs: refused by name, not by a compile error.
    let err = problem.system(&gpu, AssemblyLevel::Full, Tuning { scatter: Scatter::Patch, ..Default::default() }).err().expect("refused");
    assert!(err.to_string().contains("use atomic or colored"), "{err}");
}

/// Pipelined rounds (issue 16, round 15, [`TiledConfig::round15_high`]: round 14's pipelined
/// cells at p = 4, 5 — several passes a cell, two rounds of tiles a cell at p = 5, each round's
/// image in a region of its own, the next cell's J⁻¹ table formed after the cell's image or in its
/// last pass) give the CPU's matrices beside the default, on 27 distorted, rotated cells on a
/// resident grid (a cell a block) and on 2 blocks, so each block's pipeline runs over 13–14 cells,
/// the rounds' image region reused while the previous round's copies may still read it.
#[test]
fn pipelined_rounds_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let shapes = TiledConfig::round15_high(nloc);
        assert!(shapes.len() >= 3 && shapes.iter().all(|c| c.pipe && c.pipe_rounds > 0 && c.wide == 3 && c.packed && c.resident), "p = {p}: the pipelined rounds");
        assert!(shapes.iter().any(|c| c.pipe_rounds == 1) && shapes.iter().any(|c| c.pipe_rounds == 2), "p = {p}: both places of the next J⁻¹ table");
        std::iter::once(TiledConfig::for_functions(nloc)).chain(shapes).collect()
    });
}

/// Gram tiles (issue 16, round 16, [`TiledConfig::round16_high`]: at p = 4 the moments as 16 × 8
/// tiles of one Gram matrix over the 150 (function, derivative) rows, 7 or 6 tiles a warp across
/// strips, G's packed triangle formed in the image and turned into the matrix's blocks in place, a
/// thread per node pair, signed there) give the CPU's matrices beside the default, on 27 distorted,
/// rotated cells on a resident grid and on 2 blocks, so each block's pipeline runs over 13–14
/// cells with the image region reused while the previous cell's copies may still read it. Round
/// 17's overlapped blocks ([`TiledConfig::round17_high`]: a cell's Gram image turned into its
/// blocks in the next cell's first pass or, spread, its first two, in three orders, and sent a
/// pass later; the next J⁻¹ table's first pass behind a warp barrier) too: on the resident grid
/// every block's one cell forms its blocks in its own tail, on 2 blocks all but each block's last
/// in the next cell's. Round 18's fragment loads ([`TiledConfig::round18_high`]: passes staged
/// transposed, a lane's KS points of the MMA's k index adjacent; the tiles in strip-pair order with
/// B fragments shared by consecutive tiles) too: a wrong permutation of k, a wrong slot or a stale
/// fragment pairs the wrong entries and misses the CPU's matrices by far more than round-off.
/// Round 19's shapes ([`TiledConfig::round19_high`]: 20–32 warps on G's tiles, so a warp's tiles
/// and the strips they cross change; unrolled k-steps) too: a tile dealt twice or to no warp
/// leaves entries doubled or unwritten. Round 20's diagonal B fragments
/// ([`TiledConfig::round20_high`]) too: the wrong half of the A fragment pairs column block 2s + 1
/// with 2s's entries and misses the CPU's matrices by far more than round-off; and the Gram
/// passes staged from the gradient table instead of the factor tables.
#[test]
fn gram_tiles_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=4, |p, nloc| {
        let shapes = TiledConfig::round16_high(nloc);
        assert!(shapes.len() >= 2 && shapes.iter().all(|c| c.gram && c.pipe_rounds == 2 && c.packed), "p = {p}: the Gram-tile shapes");
        assert!(shapes.iter().any(|c| c.mma_k == 8) && shapes.iter().any(|c| c.mma_k == 16), "p = {p}: m16n8k8 and m16n8k16");
        let overlapped = TiledConfig::round17_high(nloc);
        assert!((1..=3).all(|o| overlapped.iter().any(|c| c.gram_overlap == o && !c.gram_spread)), "p = {p}: the three orders of the overlapped blocks");
        assert!(overlapped.iter().any(|c| c.gram_spread), "p = {p}: blocks spread over two passes");
        assert!(overlapped.iter().all(|c| c.gram && c.mma_k == 16), "p = {p}: overlapped blocks on the m16n8k16 Gram tiles");
        // Round 18: transposed passes (the MMA's k index permuted over each 16 or 8 points) and the
        // strip-pair order (B fragments shared, two A fragments held), alone and together.
        let loads = TiledConfig::round18_high(nloc);
        for (wide, pairs) in [(true, false), (false, true), (true, true)] {
            assert!(loads.iter().any(|c| c.gram_wide == wide && c.gram_pairs == pairs && c.mma_k == 16), "p = {p}: wide {wide}, pairs {pairs} on k16");
        }
        assert!(loads.iter().any(|c| c.gram_wide && c.mma_k == 8), "p = {p}: transposed passes on k8");
        // Round 19: more warps than moment tiles on G's 100 tiles (20, 25, 32: 5, 4, 3–4 tiles a
        // warp), on k16 and k8, and a pass's k-steps unrolled.
        let warps = TiledConfig::round19_high(nloc);
        for w in [20, 25, 32] {
            assert!(warps.iter().any(|c| c.warps == w && c.mma_k == 16 && !c.gram_unroll), "p = {p}: {w} warps on k16");
        }
        assert!(warps.iter().any(|c| c.warps == 32 && c.mma_k == 8), "p = {p}: 32 warps on k8");
        assert!(warps.iter().any(|c| c.gram_unroll && c.warps == 16), "p = {p}: unrolled k-steps on 16 warps");
        // Round 20: each strip's diagonal tiles fed from its A fragment (plain and transposed
        // passes, 16 and 20 warps, k-steps rolled and unrolled).
        let diag = TiledConfig::round20_high(nloc);
        assert!(diag.iter().all(|c| c.gram && !c.gram_pairs && c.mma_k == 16), "p = {p}: the k16 strip-order Gram tiles");
        assert!(diag.iter().any(|c| !c.tensor && c.gram_diag) && diag.iter().any(|c| !c.tensor && !c.gram_diag), "p = {p}: passes staged from the gradient table");
        for (w, unroll, wide) in [(16, false, false), (16, true, false), (20, true, false), (16, false, true)] {
            assert!(diag.iter().any(|c| (c.warps, c.gram_unroll, c.gram_wide) == (w, unroll, wide)), "p = {p}: diagonal B fragments, {w} warps, unrolled {unroll}, wide {wide}");
        }
        std::iter::once(TiledConfig::for_functions(nloc)).chain(shapes).chain(overlapped).chain(loads).chain(warps).chain(diag).collect()
    });
}

/// Round 21's p = 5 Gram tiles in two rounds a cell ([`TiledConfig::round21_high`]: the rows of
/// functions 0–31, then 32–73, each round's image its own rows, the second round staging only its
/// functions) give the CPU's matrices on 27 distorted, rotated cells, on the resident grid and on
/// 2 blocks (each block's cells run both rounds in turn). A wrong round boundary (a node pair in
/// neither round, the second round's rows read at the first's offset), a stale row of the first
/// round's functions read by the second, or a sign taken for the wrong pair shows as an O(1)
/// difference; the matrices are also symmetric with the six rigid-body modes in their null space.
#[test]
fn two_round_gram_tiles_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(5..=5, |p, nloc| {
        let shapes = TiledConfig::round21_high(nloc);
        assert!(shapes.len() == 4 && shapes.iter().all(|c| c.gram && c.pipe_rounds == 2 && c.packed), "p = {p}: the two-round Gram shapes");
        assert!(shapes.iter().any(|c| c.mma_k == 8) && shapes.iter().any(|c| c.gram_diag) && shapes.iter().any(|c| !c.gram_diag) && shapes.iter().any(|c| c.warps == 20));
        shapes
    });
    // The first shape's matrices, every cell: symmetric, with the six rigid motions in their null space.
    tiled_matrices_symmetric_with_rigid_null_space(5, TiledConfig::round21_high(74)[0]);
}

/// Round 22's shapes ([`TiledConfig::round22_high`]) give the CPU's matrices on 27 distorted,
/// rotated cells, on the resident grid and on 2 blocks (13–14 cells a block, so each cell's copies
/// are still in flight while the next multiplies). p = 4's early copy wait (the last pass without
/// its barrier): a wait too late lets a cell's image overwrite the previous one's before its copies
/// read it, a missing barrier lets a fast warp's image or J⁻¹ table race a slow warp's last pass —
/// either an O(1) difference on 2 blocks. p = 5's three rounds of Gram tiles (functions 0–15,
/// 16–31, 32–73): a wrong cut leaves a node pair in no round or reads stale rows of an earlier
/// round's functions. The first shape of each degree: symmetric, rigid motions in its null space.
#[test]
fn round22_gram_shapes_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let shapes = TiledConfig::round22_high(nloc);
        assert!(!shapes.is_empty() && shapes.iter().all(|c| c.gram && c.pipe_rounds == 2 && c.packed), "p = {p}: round 22's Gram shapes");
        if p == 4 {
            assert!(shapes.iter().all(|c| c.gram_early_wait && c.gram_rounds == 0), "p = 4: the early copy wait");
        } else {
            assert!(shapes.iter().all(|c| c.gram_rounds == 3) && shapes.iter().any(|c| c.qcp == 32) && shapes.iter().any(|c| !c.gram_diag), "p = 5: three rounds, 32 points a pass, without diag-b");
        }
        shapes
    });
    first_shapes_symmetric_with_rigid_null_space(TiledConfig::round22_high);
}

/// Round 23's shapes ([`TiledConfig::round23_high`]: p = 4's and p = 5's defaults with the
/// alternating order by SM sub-partition, warps 4–7 and 12–15 multiplying before they stage; p = 4
/// also with the early copy wait, and without alternating) give the CPU's matrices on 27 distorted,
/// rotated cells, on the resident grid and on 2 blocks. The order moves each warp's staging of the
/// next pass before or after its multiplies within one barrier interval: a staging that raced the
/// multiplies of the buffer it writes, or a pass left unstaged, misses the CPU by O(1). The tail's
/// indices from row bases (`gram_rows`): a wrong base or the transposed entries of a diagonal
/// block read from the wrong row put moments in the wrong places, O(1) again. The first
/// shape of each degree: symmetric, rigid motions in its null space.
#[test]
fn round23_alternating_order_matches_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let shapes = TiledConfig::round23_high(nloc);
        assert!(!shapes.is_empty() && shapes[0].alt_sub && shapes.iter().all(|c| c.gram && c.pipe_rounds == 2 && c.packed), "p = {p}: round 23's shapes");
        if p == 4 {
            assert!(shapes.iter().any(|c| c.alt_sub && c.gram_early_wait) && shapes.iter().any(|c| !c.alternate), "p = 4: with the early wait, and not alternating");
        }
        assert!(shapes.iter().any(|c| c.gram_rows), "p = {p}: the tail's indices from row bases");
        shapes
    });
    first_shapes_symmetric_with_rigid_null_space(TiledConfig::round23_high);
}

/// Round 24's shapes ([`TiledConfig::round24_high`]: p = 4's default staging from factor tables laid
/// out a function at a time — x's factor (the scale in it) and the (y, z) planes, then the three
/// 1D factors, then the planes with row bases, and with the order by SM sub-partition; p = 5's default
/// with row bases, and with the 1D layout) give the CPU's matrices on 27 distorted, rotated cells, on the resident grid
/// and on 2 blocks. A table entry built for the wrong function, axis, point or derivative (or the
/// scale left out or applied twice) puts a wrong gradient into every cell's Gram rows: O(1). The
/// first shape of each degree: symmetric, rigid motions in its null space.
#[test]
fn round24_function_tables_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let shapes = TiledConfig::round24_high(nloc);
        assert!(!shapes.is_empty() && shapes.iter().all(|c| c.gram && c.tensor && c.pipe_rounds == 2 && c.packed), "p = {p}: round 24's shapes");
        if p == 4 {
            assert!(shapes.iter().any(|c| c.fn_tables == 1) && shapes.iter().any(|c| c.fn_tables == 2 && !c.gram_rows) && shapes.iter().any(|c| c.fn_tables == 2 && c.gram_rows), "p = 4: both layouts, with row bases");
        } else {
            assert!(shapes.iter().any(|c| c.gram_rows && !c.alt_sub) && shapes.iter().any(|c| c.fn_tables == 1), "p = 5: row bases alone, the 1D layout");
        }
        shapes
    });
    first_shapes_symmetric_with_rigid_null_space(TiledConfig::round24_high);
    // The 1D layout (p = 4's second shape) as well: every cell symmetric, rigid motions annihilated.
    tiled_matrices_symmetric_with_rigid_null_space(4, TiledConfig::round24_high(50)[1]);
}

/// Round 25's shapes ([`TiledConfig::round25_high`]: p = 4's default with the functions' scales
/// applied in the tail with the signs' products, with row bases, with 16-byte staging loads (values
/// and derivatives interleaved), with both, and with the staging threads' factor ids in registers
/// too; p = 5's default with the scales in the tail, and with the 16-byte loads) give the CPU's
/// matrices on 27 distorted, rotated cells, on the resident grid and on 2 blocks. A scale applied
/// twice, to the wrong pair or not at all, a sign taken for the wrong pair, an id packed for the
/// wrong function or axis, or a value read as a derivative: O(1). The first shape of each degree
/// and p = 4's last (ids in registers): symmetric, rigid motions in the null space.
#[test]
fn round25_staging_loads_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let shapes = TiledConfig::round25_high(nloc);
        assert!(!shapes.is_empty() && shapes.iter().all(|c| c.gram && c.tensor && c.pipe_rounds == 2 && c.packed && c.fn_tables == 0 && c.fn_regs > 0), "p = {p}: round 25's shapes");
        assert!(shapes.iter().any(|c| !c.stage_wide) && shapes.iter().any(|c| c.stage_wide), "p = {p}: the scales in the tail alone and with the 16-byte loads");
        if p == 4 {
            assert!(shapes.iter().any(|c| c.fn_regs == 2 && c.stage_wide) && shapes.iter().any(|c| c.fn_regs == 1 && c.stage_wide && c.gram_rows), "p = 4: ids in registers, both with row bases");
        }
        shapes
    });
    first_shapes_symmetric_with_rigid_null_space(TiledConfig::round25_high);
    tiled_matrices_symmetric_with_rigid_null_space(4, TiledConfig::round25_high(50)[4]);
}

/// Round 26's shapes ([`TiledConfig::round26_high`]: the Gram tile indices warp-uniform — p = 4
/// with the tail's node pairs by classes of rows from the block's slot table on the scales in the
/// tail, with the factor ids in registers, each again with 16-byte staging loads, and both; p = 5
/// with the 16-byte loads) give the CPU's matrices on 27
/// distorted, rotated cells, on the resident grid and on 2 blocks (each block's table then serves
/// several cells). A warp taking another warp's tiles, a slot table that misses, repeats or swaps a
/// pair, or a diagonal pair's moment taken untransposed: O(1). The first shape of each degree, and
/// p = 4's second and last (ids in registers, and with the classes): symmetric, rigid motions in the null space.
#[test]
fn round26_uniform_tiles_and_pair_classes_match_the_cpu() {
    use galerkin::operator::level::full::schemes::TiledConfig;
    tiled_shapes_match_the_cpu_on_27_cells(4..=5, |p, nloc| {
        let shapes = TiledConfig::round26_high(nloc);
        assert!(!shapes.is_empty() && shapes.iter().all(|c| c.gram && c.uniform_tiles && c.fn_regs > 0 && c.fn_tables == 0), "p = {p}: round 26's shapes");
        if p == 4 {
            assert!(shapes.iter().any(|c| c.fn_regs == 2 && !c.pair_classes) && shapes.iter().filter(|c| c.pair_classes).count() == 3, "p = 4: ids in registers, three rows of pair classes");
        } else {
            assert!(shapes.iter().all(|c| !c.pair_classes), "p = 5 (three rounds): no pair classes");
        }
        shapes
    });
    first_shapes_symmetric_with_rigid_null_space(TiledConfig::round26_high);
    tiled_matrices_symmetric_with_rigid_null_space(4, TiledConfig::round26_high(50)[1]);
    tiled_matrices_symmetric_with_rigid_null_space(4, TiledConfig::round26_high(50)[4]);
}

/// The first shape `shapes(nloc)` names at trunk p = 4 and p = 5 (each round names one for both):
/// every cell's matrix symmetric with the six rigid motions in its null space (the rounds' tests' tail).
fn first_shapes_symmetric_with_rigid_null_space(shapes: fn(usize) -> Vec<galerkin::operator::level::full::schemes::TiledConfig>) {
    for (p, nloc) in [(4, 50), (5, 74)] {
        let cfg = *shapes(nloc).first().unwrap_or_else(|| panic!("p = {p}: the round names no shape"));
        tiled_matrices_symmetric_with_rigid_null_space(p, cfg);
    }
}

/// Every cell's matrix of degree `p` from tiled shape `cfg` on the 27 twisted cells: symmetric, and
/// the six rigid motions (in the global orientation the GPU's S K S uses: no signs) annihilated to
/// round-off. (No GPU: returns.)
fn tiled_matrices_symmetric_with_rigid_null_space(p: usize, cfg: galerkin::operator::level::full::schemes::TiledConfig) {
    use galerkin::operator::level::full::cuda::DeviceAssembler;
    let Some(gpu) = galerkin::backend::cuda::test_gpu() else { return };
    let space = hier(twisted(3, true), p, ModeSet::Trunk);
    let physics = Elasticity::lame(LAMBDA, MU, 3);
    let integ = ElementIntegrator::new(&space, &physics, None).unwrap();
    let tuning = galerkin::operator::Tuning { integration: galerkin::operator::level::Integration::Tiled, ..Default::default() };
    let asm = DeviceAssembler::new(&gpu, &integ, &Vec::new(), tuning).unwrap();
    let got = asm.tiled_matrices_to_host_on(&gpu, cfg, None).unwrap();
    let nd = integ.elem_size();
    let rigid: [fn([f64; 3]) -> [f64; 3]; 6] = [|_| [1.0, 0.0, 0.0], |_| [0.0, 1.0, 0.0], |_| [0.0, 0.0, 1.0], |x| [-x[1], x[0], 0.0], |x| [0.0, -x[2], x[1]], |x| [x[2], 0.0, -x[0]]];
    let modes: Vec<Vec<f64>> = rigid.iter().map(|r| space.interpolate(|x, o| o.copy_from_slice(&r(x)))).collect();
    for (c, ke) in got.chunks(nd * nd).enumerate() {
        let scale = ke.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..nd {
            for j in 0..i {
                assert!((ke[i * nd + j] - ke[j * nd + i]).abs() < 1e-13 * scale, "cell {c}: {}: matrix not symmetric at ({i}, {j})", cfg.label());
            }
        }
        for g in &modes {
            let local: Vec<f64> = (0..nd).map(|i| g[space.dofmap.cell(c)[i / 3] * 3 + i % 3]).collect();
            let norm = local.iter().map(|v| v * v).sum::<f64>().sqrt();
            let kr = (0..nd).map(|i| (0..nd).map(|j| ke[i * nd + j] * local[j]).sum::<f64>().abs()).fold(0.0, f64::max);
            assert!(kr < 1e-11 * scale * norm, "cell {c}: {}: a rigid motion is not in the matrix's null space ({kr:e})", cfg.label());
        }
    }
}
