//! The README's example: Poisson in the unit cube with P2 tetrahedra, solved with CG + Jacobi and
//! written for ParaView. Run with `cargo run --release --example poisson`.
use galerkin::io::VtuWriter;
use galerkin::mesh::{generate, CellType};
use galerkin::operator::AssemblyLevel;
use galerkin::physics::Diffusion;
use galerkin::problem::{scalar, LinearProblem, SolverConfig};
use galerkin::space::FunctionSpace;
use std::f64::consts::PI;
use std::sync::Arc;

fn main() -> galerkin::Result<()> {
    let mesh = Arc::new(generate::box_mesh(10, 10, 10, [0.0; 3], [1.0; 3], CellType::Tetrahedron)?);
    let space = Arc::new(FunctionSpace::lagrange(mesh.clone(), 2, 1)?);
    let f = scalar(|x| 3.0 * PI * PI * (PI * x[0]).sin() * (PI * x[1]).sin() * (PI * x[2]).sin());
    let solution = LinearProblem::new(space.clone(), Diffusion::new(1.0))
        .source(f)
        .dirichlet(["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"], scalar(|_| 0.0))
        .solve(AssemblyLevel::Full, &SolverConfig::default())?;
    println!("{} dofs, {} CG iterations", space.ndofs(), solution.stats.iterations);
    let mut vtu = VtuWriter::new(&mesh);
    vtu.point_scalar("u", space.vertex_values(&solution.u))?;
    vtu.write("out/poisson.vtu")
}
