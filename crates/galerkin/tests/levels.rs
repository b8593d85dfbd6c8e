//! Every assembly level on every backend against the CPU's assembled matrix: for every element (P1–P3
//! on intervals, triangles and tetrahedra, Q1–Q3 on quadrilaterals and hexahedra, on distorted
//! meshes) and every physics (constant, per-region and function coefficients, sums), `full`,
//! `element`, `partial` and `none` apply the same operator to round-off and give the same diagonal
//! and node blocks; the GPU's assembled matrices equal the CPU's for every scatter; Dirichlet,
//! Neumann and Robin systems agree; passive data updates without a rebuild. Written once over the
//! backend: CPU everywhere, GPU where one is found.
mod common;
use common::*;
use galerkin::backend::{Backend, Cpu};
use galerkin::linalg::CsrMatrix;
use galerkin::mesh::CellType;
use galerkin::operator::level::full::patches::patch_cells;
use galerkin::operator::{AssemblyLevel, FeBackend, PassiveField, Scatter, Tuning};
use galerkin::physics::{Coefficient, Diffusion};
use galerkin::problem::{flux, scalar, LinearProblem};
use galerkin::solver::precond::Preconditionable;
use galerkin::space::FunctionSpace;
use std::sync::Arc;

/// The CPU's assembled matrix of `problem` (Dirichlet conditions eliminated).
fn cpu_matrix(problem: &LinearProblem) -> CsrMatrix {
    problem.assemble(AssemblyLevel::Full).unwrap().matrix_to_host().unwrap().unwrap()
}

/// Checks every level of `problem` on `be` against `a` (the CPU full matrix): apply, diagonal, node
/// blocks, and (at `full`) the matrix itself for every scatter the GPU has.
fn check_levels<B: FeBackend>(be: &B, label: &str, problem: &LinearProblem, a: &CsrMatrix, rhs: &[f64], tol: f64) {
    check_levels_of(be, label, problem, a, Some(rhs), &AssemblyLevel::ALL, tol)
}

/// `check_levels` at the given levels, the right-hand side only where one is given.
fn check_levels_of<B: FeBackend>(
    be: &B,
    label: &str,
    problem: &LinearProblem,
    a: &CsrMatrix,
    rhs: Option<&[f64]>,
    levels: &[AssemblyLevel],
    tol: f64,
) {
    let ncomp = problem.space.ncomp;
    let x = test_vector(a.nrows);
    let mut ax = vec![0.0; a.nrows];
    a.spmv(&x, &mut ax);
    for &level in levels {
        let what = format!("{label} {} {}", be.name(), level.name());
        let sys = problem.system(be, level, Tuning::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let d = rel_diff(&ax, &sys.apply_host(&x).unwrap());
        assert!(d < tol, "{what}: A x differs from the CPU matrix's by {d:e}");
        if let Some(rhs) = rhs {
            let d = rel_diff(rhs, &sys.rhs_to_host().unwrap());
            assert!(d < tol, "{what}: right-hand side differs by {d:e}");
        }
        let diag = be.to_host(&sys.operator.diagonal(be).unwrap()).unwrap();
        let d = rel_diff(&a.diagonal(), &diag);
        assert!(d < tol, "{what}: diagonal differs by {d:e}");
        let (b, blocks) = sys.operator.node_blocks(be).unwrap();
        assert_eq!(b, ncomp);
        let d = rel_diff(&a.node_blocks(ncomp), &be.to_host(&blocks).unwrap());
        assert!(d < tol, "{what}: node blocks differ by {d:e}");
        assert!(sys.storage_bytes() > 0, "{what}: no storage reported");
        if level == AssemblyLevel::Full {
            let m = sys.matrix_to_host().unwrap().expect("full has a matrix");
            assert_eq!(m.col_idx, a.col_idx, "{what}: pattern");
            let d = rel_diff(&a.values, &m.values);
            assert!(d < tol, "{what}: matrix differs by {d:e}");
        } else {
            assert!(sys.operator.matrix().is_none(), "{what}: only full has a matrix");
        }
    }
}

/// Every scatter of GPU full assembly gives the CPU matrix (those a variant lacks say so, pointing
/// at `atomic`).
fn check_scatters<B: FeBackend>(be: &B, label: &str, problem: &LinearProblem, a: &CsrMatrix) {
    if be.name() != "cuda" {
        return;
    }
    for scatter in [Scatter::Colored, Scatter::Rows, Scatter::Patch] {
        let tuning = Tuning { scatter, ..Tuning::default() };
        match problem.system(be, AssemblyLevel::Full, tuning) {
            Ok(sys) => {
                let m = sys.matrix_to_host().unwrap().unwrap();
                let d = rel_diff(&a.values, &m.values);
                assert!(d < 1e-12, "{label} ({}): GPU and CPU matrices differ by {d:e}", scatter.name());
            }
            Err(e) => assert!(scatter != Scatter::Colored && e.to_string().contains("atomic"), "{label} ({}): {e}", scatter.name()),
        }
    }
}

fn check_space(cell: CellType, degree: usize, ncomp: usize) {
    let mesh = distorted(cell, if cell.dim() == 3 { 2 } else { 3 });
    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, ncomp).unwrap());
    for (name, physics) in physics_cases(mesh.dim, ncomp) {
        let label = format!("{cell:?} degree {degree} {name}");
        let problem = LinearProblem { space: space.clone(), physics, source: None, source_exprs: None, bcs: Vec::new(), quadrature_degree: None, quadrature: Default::default() };
        let a = cpu_matrix(&problem);
        let rhs = vec![0.0; a.nrows];
        on_backends!(|be| {
            check_levels(be, &label, &problem, &a, &rhs, 1e-12);
            check_scatters(be, &label, &problem, &a);
        });
    }
}

#[test]
fn scalar_levels_agree_for_every_element_and_degree() {
    for cell in CellType::ALL {
        for degree in 1..=3 {
            check_space(cell, degree, 1);
        }
    }
}

#[test]
fn elasticity_levels_agree_in_2d_and_3d() {
    for cell in CellType::ALL.into_iter().filter(|c| c.dim() > 1) {
        for degree in 1..=3 {
            check_space(cell, degree, cell.dim());
        }
    }
}

/// Poisson with Dirichlet, Neumann and Robin sides and a variable κ.
pub fn mixed_problem(cell: CellType, degree: usize, n: usize) -> LinearProblem {
    let space = Arc::new(FunctionSpace::lagrange(distorted(cell, n), degree, 1).unwrap());
    LinearProblem::new(space, Diffusion::new(Coefficient::function(|x| 1.0 + x[0])))
        .source(scalar(|x| 1.0 + x[1]))
        .dirichlet(["xmin", "ymin"], scalar(|x| x[1] * x[1] + x[0]))
        .neumann(["xmax"], flux(|x, _| x[1]))
        .robin(["ymax"], 2.0, flux(|_, _| 1.0))
}

#[test]
fn dirichlet_robin_and_neumann_agree_on_every_level() {
    for (cell, degree) in [(CellType::Triangle, 2), (CellType::Quadrilateral, 3), (CellType::Tetrahedron, 1), (CellType::Hexahedron, 2)] {
        let p = mixed_problem(cell, degree, 4);
        let cpu = p.assemble(AssemblyLevel::Full).unwrap();
        let (a, rhs) = (cpu.matrix_to_host().unwrap().unwrap(), cpu.rhs_to_host().unwrap());
        on_backends!(|be| {
            check_levels(be, &format!("{cell:?} P{degree} mixed"), &p, &a, &rhs, 1e-12);
            check_scatters(be, &format!("{cell:?} P{degree} mixed"), &p, &a);
        });
    }
}

/// Patch assembly across many patches (Hilbert-ordered cells; values between patches added
/// atomically, the others stored) matches the CPU: scalar and vector, reference-tensor and
/// quadrature (hexahedra) variants.
#[test]
fn patch_scatter_over_many_patches_matches_the_cpu() {
    let Some(be) = galerkin::backend::cuda::test_gpu() else { return };
    let cases = [
        (CellType::Tetrahedron, 2, 1, 6),
        (CellType::Tetrahedron, 1, 3, 8),
        (CellType::Triangle, 2, 2, 16),
        (CellType::Triangle, 1, 1, 40),
        (CellType::Hexahedron, 1, 1, 12),
    ];
    for (cell, degree, ncomp, n) in cases {
        let mesh = distorted(cell, n);
        let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, ncomp).unwrap());
        let per_patch = patch_cells(space.dofmap.nodes_per_cell, ncomp, None).unwrap();
        assert!(mesh.num_cells() > 3 * per_patch, "{cell:?}: {} cells make too few patches of {per_patch}", mesh.num_cells());
        let (name, physics) = physics_cases(mesh.dim, ncomp).swap_remove(0);
        let problem = LinearProblem { space, physics, source: None, source_exprs: None, bcs: Vec::new(), quadrature_degree: None, quadrature: Default::default() };
        let cpu = cpu_matrix(&problem);
        let tuning = Tuning { scatter: Scatter::Patch, ..Tuning::default() };
        let gpu = problem.system(&be, AssemblyLevel::Full, tuning).unwrap().matrix_to_host().unwrap().unwrap();
        let d = rel_diff(&cpu.values, &gpu.values);
        eprintln!("{cell:?} P{degree} {name}: {} patches, difference {d:.1e}", mesh.num_cells().div_ceil(per_patch));
        assert!(d < 1e-12, "{cell:?} P{degree} {name}: patch assembly differs from the CPU by {d:e}");
    }
}

/// A new coefficient (per cell, then constant) reaches every level without a rebuild: the updated
/// operator and right-hand side equal those of a system built with the new coefficient.
#[test]
fn passive_data_updates_without_a_rebuild() {
    for (cell, degree) in [(CellType::Tetrahedron, 2), (CellType::Quadrilateral, 2)] {
        let p = mixed_problem(cell, degree, 3);
        let ncells = p.space.mesh.num_cells();
        let fresh = LinearProblem::new(p.space.clone(), Diffusion::new(2.5))
            .source(scalar(|x| 1.0 + x[1]))
            .dirichlet(["xmin", "ymin"], scalar(|x| x[1] * x[1] + x[0]))
            .neumann(["xmax"], flux(|x, _| x[1]))
            .robin(["ymax"], 2.0, flux(|_, _| 1.0));
        let x = test_vector(p.space.ndofs());
        on_backends!(|be| {
            for level in AssemblyLevel::ALL {
                let want = fresh.system(be, level, Tuning::default()).unwrap();
                for value in [PassiveField::PerCell(vec![2.5; ncells]), PassiveField::Constant(2.5)] {
                    let mut sys = p.system(be, level, Tuning::default()).unwrap();
                    // A per-cell field where the GPU kernel samples per point is a new variant.
                    match sys.update_coefficient(&p, 0, value.clone(), Tuning::default()) {
                        Ok(()) => {}
                        Err(e) if e.to_string().contains("anew") => continue,
                        Err(e) => panic!("{cell:?} {} {}: {e}", be.name(), level.name()),
                    }
                    let d = rel_diff(&want.apply_host(&x).unwrap(), &sys.apply_host(&x).unwrap());
                    assert!(d < 1e-12, "{cell:?} {} {}: updated operator differs by {d:e}", be.name(), level.name());
                    let d = rel_diff(&want.rhs_to_host().unwrap(), &sys.rhs_to_host().unwrap());
                    assert!(d < 1e-12, "{cell:?} {} {}: updated right-hand side differs by {d:e}", be.name(), level.name());
                }
                assert!(p.system(be, level, Tuning::default()).unwrap().update_coefficient(&p, 7, PassiveField::Constant(1.0), Tuning::default()).is_err());
            }
        });
    }
    // Sizes are checked: a per-cell field of the wrong length is refused.
    let p = mixed_problem(CellType::Triangle, 1, 2);
    let mut sys = p.system(&Cpu, AssemblyLevel::Partial, Tuning::default()).unwrap();
    assert!(sys.update_coefficient(&p, 0, PassiveField::PerCell(vec![1.0; 3]), Tuning::default()).is_err());
}

/// The `none` level on a uniform lattice (box meshes of Kuhn tetrahedra and of hexahedra, three
/// materials by position, mass + diffusion, Dirichlet and Robin sides) is the lattice operator —
/// a byte per cell and a table of element matrices — and agrees with the CPU's assembled matrix
/// on every backend; so does a per-cell coefficient update; a renumbered copy of the mesh falls
/// back to the general `none` and still agrees.
#[test]
fn lattice_none_level_matches_the_assembled_operator() {
    use galerkin::physics::{Mass, Sum};
    use std::collections::BTreeMap;
    for cell in [CellType::Tetrahedron, CellType::Hexahedron] {
        let mut mesh = galerkin::mesh::generate::box_mesh(5, 4, 3, [0.0; 3], [1.0, 0.8, 0.5], cell).unwrap();
        let region = |c: usize, m: &galerkin::mesh::Mesh| {
            let x: f64 = m.cell(c).iter().map(|&v| m.coords[v][0] + 0.3 * m.coords[v][2]).sum::<f64>() / m.cell(c).len() as f64;
            1 + (x > 0.35) as i32 + (x > 0.7) as i32
        };
        mesh.cell_tags = (0..mesh.num_cells()).map(|c| region(c, &mesh)).collect();
        let per_region = |v: [f64; 3]| Coefficient::PerRegion(BTreeMap::from([(1, v[0]), (2, v[1]), (3, v[2])]));
        for renumber in [false, true] {
            let m = if renumber { galerkin::mesh::ordering::reorder_for_locality(&mesh).unwrap() } else { mesh.clone() };
            let lattice = galerkin::mesh::lattice::Lattice::recognize(&m).is_some();
            assert_eq!(lattice, !renumber || m.cells == mesh.cells, "{cell:?}: lattice recognition");
            let ncells = m.num_cells();
            let space = Arc::new(FunctionSpace::lagrange(Arc::new(m), 1, 1).unwrap());
            let physics = || Sum(vec![Box::new(Mass::new(per_region([1e3, 2e3, 0.5e3]), 1)), Box::new(Diffusion::new(per_region([1.0, 40.0, 0.2])))]);
            let bare = LinearProblem::new(space.clone(), physics());
            let p = LinearProblem::new(space.clone(), physics()).dirichlet(["xmin"], scalar(|x| x[1])).robin(["zmax"], 3.0, flux(|_, _| 1.0));
            let cpu = p.assemble(AssemblyLevel::Full).unwrap();
            let (a, rhs) = (cpu.matrix_to_host().unwrap().unwrap(), cpu.rhs_to_host().unwrap());
            let label = format!("{cell:?} lattice{}", if renumber { " renumbered" } else { "" });
            // Dirichlet sides only: the lattice applies the masked operator M A M + (I − M) in one pass.
            let pd = LinearProblem::new(space.clone(), physics()).dirichlet(["xmin", "zmax"], scalar(|x| x[1] - x[2]));
            let cd = pd.assemble(AssemblyLevel::Full).unwrap();
            let (ad, rhsd) = (cd.matrix_to_host().unwrap().unwrap(), cd.rhs_to_host().unwrap());
            on_backends!(|be| {
                check_levels(be, &label, &p, &a, &rhs, 1e-12);
                check_levels(be, &format!("{label} dirichlet only"), &pd, &ad, &rhsd, 1e-12);
                // (Without Robin sides: their facet matrices are kept beside any level.)
                let sys = bare.system(be, AssemblyLevel::None, Tuning::default()).unwrap();
                let nv = space.mesh.cell_type.num_vertices();
                let per = if cell == CellType::Tetrahedron { 6 } else { 1 };
                // Per material: the element matrices, the interior stencil and the six side stencils.
                let grid_bytes = ncells + space.ndofs() + 3 * (per * nv * nv + 7 * 27) * 8;
                if lattice {
                    assert_eq!(sys.storage_bytes(), grid_bytes, "{label} {}: the lattice operator keeps a byte per cell and the table", be.name());
                } else {
                    assert_ne!(sys.storage_bytes(), grid_bytes, "{label} {}: a renumbered mesh takes the general none level", be.name());
                }
                // A new conductivity per cell (two values) reaches the lattice operator.
                let k: Vec<f64> = (0..ncells).map(|c| if c % 7 == 0 { 5.0 } else { 0.5 }).collect();
                let mut sys = p.system(be, AssemblyLevel::None, Tuning::default()).unwrap();
                sys.update_coefficient(&p, 1, PassiveField::PerCell(k.clone()), Tuning::default()).unwrap();
                let mut full = p.system(be, AssemblyLevel::Full, Tuning::default()).unwrap();
                full.update_coefficient(&p, 1, PassiveField::PerCell(k), Tuning::default()).unwrap();
                let x = test_vector(a.nrows);
                let d = rel_diff(&full.apply_host(&x).unwrap(), &sys.apply_host(&x).unwrap());
                assert!(d < 1e-12, "{label} {}: updated lattice operator differs by {d:e}", be.name());
            });
        }
    }
}

/// Hierarchical hexahedra (issue 16), trunk p = 1…8 and full p = 1…6, on a distorted mesh whose
/// cells are rotated at random (neighbours see shared edges and faces in different frames: the
/// restriction's signs exercised): `partial` and `none` — each function a signed slot of the
/// (p + 1)³ tensor products of the 1D basis, applied by sum factorization — equal the assembled
/// matrix times a vector, its diagonal and node blocks, for Poisson (a varying κ: the hexahedral
/// mass/diffusion kernels; with a reaction: the general kernel) and elasticity. CPU, and the GPU
/// where one is found.
#[test]
fn hierarchical_matrix_free_levels_match_the_assembled_matrix() {
    use galerkin::fe::ModeSet;
    use galerkin::mesh::generate;
    use galerkin::physics::{Elasticity, Mass, PointwisePhysics, Sum};
    let mesh = Arc::new(generate::rotate_hexahedra(&distorted(CellType::Hexahedron, 2), 7).unwrap());
    let kappa = || Coefficient::function(|x| 1.0 + x[0] * x[0] + 0.5 * x[1]);
    let cases = (1..=8).map(|p| (p, ModeSet::Trunk)).chain((1..=6).map(|p| (p, ModeSet::Full)));
    for (p, modes) in cases {
        let physics: Vec<(&str, usize, Box<dyn PointwisePhysics>)> = vec![
            ("poisson", 1, Box::new(Diffusion::new(kappa()))),
            ("reaction", 1, Box::new(Sum(vec![Box::new(Diffusion::new(kappa())), Box::new(Mass::new(2.0, 1))]))),
            ("elasticity", 3, Box::new(Elasticity::lame(1.2, kappa(), 3))),
        ];
        for (name, ncomp, physics) in physics {
            // The reaction case's general kernel is the elasticity one's: p ≤ 4 is enough.
            if name == "reaction" && p > 4 {
                continue;
            }
            let space = Arc::new(FunctionSpace::hierarchical(mesh.clone(), p, modes, ncomp).unwrap());
            let label = format!("hierarchical {modes:?} p = {p} {name}");
            let problem = LinearProblem { space, physics, source: None, source_exprs: None, bcs: Vec::new(), quadrature_degree: None, quadrature: Default::default() };
            let a = cpu_matrix(&problem);
            on_backends!(|be| { check_levels_of(be, &label, &problem, &a, None, &[AssemblyLevel::Partial, AssemblyLevel::None], 1e-11) });
        }
    }
}
