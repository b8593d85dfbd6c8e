//! CPU assembly on affine cells (issue 11, op9): parallelograms and parallelepipeds take the
//! reference moments cell by cell (no quadrature loop, no sum factorization), and load vectors
//! evaluate a compiled source a batch of points at a time. Each must give what the reference
//! quadrature loop and the point-by-point source give, to round-off.
use galerkin::expr::Expr;
use galerkin::mesh::{generate, CellType, Mesh};
use galerkin::operator::geometry::GeometryTab;
use galerkin::operator::integrate::{ElementIntegrator, Scratch};
use galerkin::operator::local_matrix::{affine_jacobian, LocalMatrices, LocalScratch, MOMENTS_MAX_NLOC};
use galerkin::physics::{Diffusion, Elasticity, Mass, PointwisePhysics, Sum};
use galerkin::problem::{scalar, LinearProblem};
use galerkin::space::FunctionSpace;
use std::sync::Arc;

/// A 2×2(×2) mesh of the unit square or cube with vertex v moved by `warp(v, x)`.
fn mesh(cell: CellType, warp: impl Fn(usize, &mut [f64; 3])) -> Arc<Mesh> {
    let dim = cell.dim();
    let mut mesh = if dim == 2 { generate::rectangle(2, 2, [0.0; 2], [1.0; 2], cell).unwrap() } else { generate::box_mesh(2, 2, 2, [0.0; 3], [1.0; 3], cell).unwrap() };
    for (v, x) in mesh.coords.iter_mut().enumerate() {
        warp(v, x);
        if dim == 2 {
            x[2] = 0.0;
        }
    }
    Arc::new(mesh)
}

/// An affine map of the whole mesh (every cell stays a parallelogram or parallelepiped), with
/// determinant [`shear_det`].
fn shear(_: usize, x: &mut [f64; 3]) {
    let y = *x;
    x[0] = 0.3 + 1.1 * y[0] + 0.3 * y[1] + 0.1 * y[2];
    x[1] = -0.2 + 0.2 * y[0] + 0.9 * y[1] + 0.25 * y[2];
    x[2] = y[2] + 0.15 * y[0] - 0.1 * y[1];
}
/// det of [`shear`]'s matrix in 3D, of its leading 2×2 block in 2D.
fn shear_det(dim: usize) -> f64 {
    if dim == 2 {
        1.1 * 0.9 - 0.3 * 0.2
    } else {
        1.1 * (0.9 - 0.25 * -0.1) - 0.3 * (0.2 - 0.25 * 0.15) + 0.1 * (0.2 * -0.1 - 0.9 * 0.15)
    }
}

/// Vertices moved independently: no quadrilateral or hexahedron stays affine.
fn distort(v: usize, x: &mut [f64; 3]) {
    let s = (v as f64 * 0.7).sin() * 0.08;
    x[0] += s;
    x[1] -= 0.5 * s;
    x[2] += 0.3 * s;
}

fn affine_cells(mesh: &Mesh) -> usize {
    let geo = GeometryTab::new(mesh.cell_type, &[[0.3, 0.2, 0.4]]);
    (0..mesh.num_cells())
        .filter(|&c| {
            let xv: Vec<[f64; 3]> = mesh.cell(c).iter().map(|&v| mesh.coords[v]).collect();
            affine_jacobian(&geo, mesh.cell_type, &xv, mesh.dim).is_some()
        })
        .count()
}

#[test]
fn parallelepipeds_are_affine_and_distorted_cells_are_not() {
    for cell in [CellType::Quadrilateral, CellType::Hexahedron, CellType::Triangle, CellType::Tetrahedron] {
        let sheared = mesh(cell, shear);
        assert_eq!(affine_cells(&sheared), sheared.num_cells(), "{cell:?}: sheared cells are affine");
        let distorted = mesh(cell, distort);
        let want = if cell.is_simplex() { distorted.num_cells() } else { 0 };
        assert_eq!(affine_cells(&distorted), want, "{cell:?}: distorted cells");
    }
}

/// On sheared meshes the element matrices of [`LocalMatrices`] (reference moments up to
/// [`MOMENTS_MAX_NLOC`] basis functions, then sum factorization) equal the quadrature loop's to
/// round-off, for scalar and vector physics with coefficients constant per cell (vector physics
/// keeps sum factorization there), and the moments give symmetric scalar physics exactly
/// symmetric matrices.
#[test]
fn moments_on_parallelepipeds_match_the_quadrature_loop() {
    for cell in [CellType::Quadrilateral, CellType::Hexahedron] {
        let dim = cell.dim();
        let mesh = mesh(cell, shear);
        for degree in 1..=3 {
            let cases: Vec<(usize, Box<dyn PointwisePhysics>)> = vec![
                (1, Box::new(Diffusion::new(1.3))),
                (1, Box::new(Sum(vec![Box::new(Diffusion::new(0.8)), Box::new(Mass::new(0.7, 1))]))),
                (dim, Box::new(Sum(vec![Box::new(Elasticity::lame(1.1, 0.6, dim)), Box::new(Mass::new(0.4, dim))]))),
                (dim, Box::new(Mass::new(2.0, dim))),
            ];
            for (n, physics) in cases {
                let space = FunctionSpace::lagrange(mesh.clone(), degree, n).unwrap();
                let integ = ElementIntegrator::new(&space, physics.as_ref(), None).unwrap();
                let local = LocalMatrices::new(&integ);
                let (nd, nloc) = (integ.elem_size(), local.nloc);
                // The moments' matrices are mirrored from their upper triangle.
                let moments = n == 1 && nloc <= MOMENTS_MAX_NLOC && physics.is_symmetric();
                let (mut want, mut got) = (vec![0.0; nd * nd], vec![0.0; nd * nd]);
                let (mut s, mut ls) = (Scratch::default(), LocalScratch::default());
                for c in 0..mesh.num_cells() {
                    integ.element_matrix(c, &mut s, &mut want).unwrap();
                    local.element_matrix(c, &mut ls, &mut got).unwrap();
                    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let at = |i: usize, a: usize, j: usize, b: usize| ((i * n + a) * n + b) * nloc + j;
                    for i in 0..nloc {
                        for a in 0..n {
                            for j in 0..nloc {
                                for b in 0..n {
                                    let (w, g) = (want[(i * n + a) * nd + j * n + b], got[at(i, a, j, b)]);
                                    assert!((w - g).abs() <= 1e-12 * scale, "{cell:?} k={degree} n={n}: cell {c} ({i},{a},{j},{b}) {g} vs {w}");
                                    if moments {
                                        assert_eq!(g.to_bits(), got[at(j, b, i, a)].to_bits(), "{cell:?} k={degree} n={n}: cell {c} not symmetric at ({i},{a},{j},{b})");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The load of a problem file's source (compiled expressions, evaluated a batch of points at a
/// time) equals the load of the same source as a closure called point by point, bit for bit, on
/// simplices, distorted and sheared cells, scalar and vector; where the source is not finite the
/// point-by-point values are taken, NaN where they are NaN. A constant source's load sums to
/// its integral (the basis is a partition of unity): the sheared cells' determinant taken once.
#[test]
fn compiled_source_in_batches_equals_the_point_by_point_load() {
    let texts = ["3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z) + x*y", "exp(-x)*cos(2*y) - z^2", "sqrt(x - 0.5)"];
    for cell in [CellType::Triangle, CellType::Quadrilateral, CellType::Tetrahedron, CellType::Hexahedron] {
        let dim = cell.dim();
        for (shape, warp) in [("distorted", distort as fn(usize, &mut [f64; 3])), ("sheared", shear)] {
            let mesh = mesh(cell, warp);
            for degree in 1..=2 {
                for n in [1, dim] {
                    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, n).unwrap());
                    let exprs: Vec<Expr> = (0..n).map(|a| Expr::parse(texts[a % texts.len()]).unwrap()).collect();
                    assert!(exprs.iter().all(Expr::is_compiled));
                    let closures = exprs.clone();
                    let f: galerkin::operator::VectorFn = Arc::new(move |x, out: &mut [f64]| {
                        for (o, e) in out.iter_mut().zip(&closures) {
                            *o = e.eval(x, 0.0);
                        }
                    });
                    let physics = || Mass::new(1.0, n);
                    let by_point = LinearProblem::new(space.clone(), physics()).source(f.clone()).load_only().unwrap();
                    let mut problem = LinearProblem::new(space.clone(), physics()).source(f);
                    problem.source_exprs = Some(exprs);
                    let batched = problem.load_only().unwrap();
                    for (k, (a, b)) in by_point.iter().zip(&batched).enumerate() {
                        assert!(a.to_bits() == b.to_bits(), "{cell:?} {shape} k={degree} n={n}: dof {k} {a} point by point vs {b} batched");
                    }
                    if n == 3 {
                        assert!(batched.iter().any(|v| v.is_nan()), "the third component is NaN on half the domain");
                    }
                }
                if shape == "sheared" {
                    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), degree, 1).unwrap());
                    let mut problem = LinearProblem::new(space, Diffusion::new(1.0)).source(scalar(|_| 2.0));
                    problem.source_exprs = Some(vec![Expr::parse("2").unwrap()]);
                    let total: f64 = problem.load_only().unwrap().iter().sum();
                    let volume = shear_det(dim).abs();
                    assert!((total - 2.0 * volume).abs() < 1e-13, "{cell:?} k={degree}: ∫2 = {total}, want {}", 2.0 * volume);
                }
            }
        }
    }
}
