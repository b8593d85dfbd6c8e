//! Every example problem on every backend and assembly level: the solution satisfies the CPU's
//! assembled system to the solver tolerance and agrees with the CPU's full-level solution. Written
//! once over the backend (the CLI tests run the files end to end on the CPU).
mod common;
use galerkin::backend::Backend;
use galerkin::operator::{AssemblyLevel, Tuning};
use galerkin::problem::run::setup_file;
use std::path::Path;

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

#[test]
fn examples_agree_on_every_backend_and_level() {
    // From the repository root (where the GPU bundle runs) or from the crate's source folder.
    let dir = if Path::new("examples/poisson-2d.toml").exists() {
        Path::new("examples").to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    };
    for name in ["poisson-2d.toml", "poisson-3d.toml", "elasticity-3d.toml", "plate-with-hole.toml", "poisson-hex-partial.toml", "poisson-hex-gll.toml"] {
        let (_, s) = setup_file(&dir.join(name), false).unwrap();
        let system = s.problem.assemble(AssemblyLevel::Full).unwrap();
        let cpu = system.solve(&s.config).unwrap();
        let a = system.matrix_to_host().unwrap().unwrap();
        let rhs = system.rhs_to_host().unwrap();
        let rtol = s.config.options.rtol;
        on_backends!(|be| {
            for level in AssemblyLevel::ALL {
                let what = format!("{name} {} {}", be.name(), level.name());
                let sol = s.problem.system(be, level, Tuning::default()).unwrap().solve(&s.config).unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut r = vec![0.0; a.nrows];
                a.spmv(&sol.u, &mut r);
                let res = norm(&r.iter().zip(&rhs).map(|(x, b)| b - x).collect::<Vec<_>>()) / norm(&rhs);
                let diff = norm(&cpu.u.iter().zip(&sol.u).map(|(x, y)| x - y).collect::<Vec<_>>()) / norm(&cpu.u);
                eprintln!("{what}: residual in the CPU system {res:.2e}, difference {diff:.2e}, iterations {} (cpu full {})", sol.stats.iterations, cpu.stats.iterations);
                assert!(res <= 10.0 * rtol, "{what}: relative residual {res:e} > 10 rtol");
                assert!(diff < 1e-6, "{what}: solutions differ by {diff:e}");
            }
        });
    }
}
