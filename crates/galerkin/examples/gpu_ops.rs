//! Times each backend operation CG uses, on the GPU, at 10⁷ unknowns (P1 Poisson matrix), to see
//! where a CG iteration's time goes. `cargo run --release --example gpu_ops` on a GPU machine.
use galerkin::backend::cuda::{test_gpu, DeviceCsr};
use galerkin::backend::{Backend, LinearOperator};
use galerkin::mesh::{generate, CellType};
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Diffusion;
use galerkin::problem::{scalar, LinearProblem};
use galerkin::solver::precond::Jacobi;
use galerkin::space::FunctionSpace;
use std::sync::Arc;
use std::time::Instant;

fn main() -> galerkin::Result<()> {
    let Some(be) = test_gpu() else { return Ok(()) };
    let n = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(215);
    let degree = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mesh = Arc::new(generate::box_mesh(n, n, n, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?);
    let space = Arc::new(FunctionSpace::lagrange(mesh, degree, 1)?);
    let sys = LinearProblem::new(space, Diffusion::new(1.0)).source(scalar(|_| 1.0)).dirichlet(["xmin"], scalar(|_| 0.0)).assemble(AssemblyLevel::Full)?;
    let a = &sys.matrix_to_host()?.ok_or_else(|| galerkin::Error::invalid("full assembly has a matrix"))?;
    let nd = a.nrows;
    let mut da = DeviceCsr::from_host(&be, a)?;
    let chosen = da.threads_per_row();
    let jac = Jacobi::new(&be, &be.from_host(&a.diagonal())?)?;
    let x = be.from_host(&vec![1.0; nd])?;
    let mut y = be.zeros(nd)?;
    let mut z = be.zeros(nd)?;
    let mut w = be.zeros(nd)?;
    let reps = 50;
    let time = |name: &str, bytes: f64, f: &mut dyn FnMut() -> galerkin::Result<()>| -> galerkin::Result<()> {
        f()?;
        be.synchronize()?;
        let t = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        be.synchronize()?;
        let s = t.elapsed().as_secs_f64() / reps as f64;
        println!("{name:<16} {:>10.1} us  {:>8.0} GB/s", s * 1e6, bytes / s / 1e9);
        Ok(())
    };
    let v = nd as f64 * 8.0;
    println!("n = {nd}, nnz = {}", a.nnz());
    for g in [4, 8, 16, 32] {
        da.set_threads_per_row(g)?;
        let label = format!("spmv g={g}{}", if g == chosen { " *" } else { "" });
        time(&label, (a.nnz() * 12 + nd * 4) as f64 + 2.0 * v, &mut || da.apply(&be, &x, &mut y))?;
    }
    da.set_threads_per_row(chosen)?;
    time("jacobi", 3.0 * v, &mut || jac.apply(&be, &x, &mut z))?;
    time("dot", 2.0 * v, &mut || be.dot(&x, &y).map(|_| ()))?;
    time("axpby", 3.0 * v, &mut || be.axpby(1.0, &x, 0.5, &mut w))?;
    time("axpy", 3.0 * v, &mut || be.axpy(1.0, &x, &mut w))?;
    time("cg_update", 6.0 * v, &mut || be.cg_update(1e-3, &x, &y, &mut w, &mut z).map(|_| ()))?;
    time("copy", 2.0 * v, &mut || be.copy(&x, &mut w))?;
    Ok(())
}
