//! Where the host set-up of an assembly goes (what both backends pay before any element matrix):
//! boundary lookup, coloring, load vector, constraints, sparsity, matrix.
//! `cargo run --release --example host_setup -- 500000`
use galerkin::bench::matrix::MatrixProblem;
use galerkin::operator::AssemblyLevel;

fn main() -> galerkin::Result<()> {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(500_000);
    for name in ["poisson-3d", "elasticity-3d"] {
        let p = MatrixProblem::parse(name)?;
        let lp = p.build(1, n)?;
        let t = std::time::Instant::now();
        let facets = lp.space.mesh.boundary_facet_cells()?;
        println!("{name} P1: {} boundary facets found in {:.3} s", facets.len(), t.elapsed().as_secs_f64());
        let s = lp.assemble(AssemblyLevel::Full)?;
        let t = &s.timings;
        println!(
            "  assembly {:.3} s = coloring {:.3} + rhs {:.3} + constraints {:.3} + sparsity and matrix {:.3} (+ rest)",
            t.assembly, t.coloring, t.rhs, t.constraints, t.matrix
        );
    }
    Ok(())
}
