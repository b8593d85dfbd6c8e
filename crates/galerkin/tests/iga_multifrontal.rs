//! The multifrontal solver on the CPU equals faer's sparse LU on the same system to round-off:
//! 1D and 2D, symmetric and not (the seed's advection term, Robin ends), uniform, non-uniform and
//! repeated knots, one and many right-hand sides, small fronts and fronts large enough for the
//! blocked (faer) kernels.
mod iga_common;

use galerkin::backend::Cpu;
use galerkin::solver::multifrontal::CpuMultifrontal;
use galerkin::solver::Factorization;
use iga_common::{check_against_faer, large_front_cases, small_cases};
use std::sync::Arc;

#[test]
fn cpu_multifrontal_equals_faer_lu() {
    for case in small_cases() {
        let f = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(f.name(), "multifrontal");
        for nrhs in [1, 5] {
            check_against_faer(&Cpu, &f, &case, nrhs);
        }
    }
}

#[test]
fn cpu_multifrontal_blocked_fronts_and_many_rhs() {
    for case in large_front_cases() {
        assert!(case.sym.max_front() > galerkin::solver::multifrontal::dense::BLOCKED_MIN, "{}: max front {}", case.name, case.sym.max_front());
        let f = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
        check_against_faer(&Cpu, &f, &case, 17);
    }
}

#[test]
fn singular_matrix_and_bad_sizes_are_errors() {
    let mut case = small_cases().into_iter().find(|c| c.name == "seed p=2 N=37").unwrap();
    let f = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    let n = case.sys.ndofs;
    let mut x = vec![0.0; 2 * n];
    assert!(f.solve_many(&Cpu, 3, &vec![0.0; 2 * n], &mut x).is_err());
    // A zero matrix cannot be factorized: the error names a dof.
    case.sys.matrices.iter_mut().for_each(|v| *v = 0.0);
    let e = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).err().unwrap().to_string();
    assert!(e.contains("singular") && e.contains("dof"), "{e}");
    case.sys.matrices[5] = f64::NAN;
    let e = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).err().unwrap().to_string();
    assert!(e.contains("element matrix 0") && e.contains("NaN"), "{e}");
    assert!(CpuMultifrontal::factor(Arc::new(case.sym), &[1.0; 3]).is_err());
}
