//! Parity of every physics' Rust body and its CUDA twin (`kernels/qf/`): both evaluate `apply` on
//! random field vectors and `block` on random basis pairs, in 1D–3D, alone and summed; they must
//! agree to round-off. On the CPU, `block` must equal `apply` pushed through the pair's basis
//! vectors. The GPU half skips without a GPU (CI compiles the twins with NVRTC instead:
//! `cuda_kernels_compile`).
mod common;
use common::Rng;
use galerkin::operator::qfunction::{parity, Composite, DiffusionQf, ElasticityQf, MassQf, Pair, Term};
use galerkin::physics::Coefficient;

fn cases(dim: usize) -> Vec<Composite> {
    let c = |v: f64| Coefficient::Constant(v);
    let mut v = vec![
        Composite::new(vec![Term { qf: &DiffusionQf, fields: vec![c(1.0)] }], 1, dim),
        Composite::new(vec![Term { qf: &MassQf, fields: vec![c(1.0)] }], 2, dim),
        Composite::new(vec![Term { qf: &DiffusionQf, fields: vec![c(1.0)] }, Term { qf: &MassQf, fields: vec![c(1.0)] }], 1, dim),
    ];
    if dim > 1 {
        v.push(Composite::new(vec![Term { qf: &ElasticityQf, fields: vec![c(1.0), c(1.0)] }], dim, dim));
        v.push(Composite::new(vec![Term { qf: &ElasticityQf, fields: vec![c(1.0), c(1.0)] }, Term { qf: &MassQf, fields: vec![c(1.0)] }], dim, dim));
    }
    v
}

#[test]
fn rust_bodies_and_cuda_twins_agree() {
    let gpu = galerkin::backend::cuda::test_gpu();
    let mut rng = Rng(3);
    let mut checked = 0;
    for dim in 1..=3 {
        for qf in cases(dim) {
            for _ in 0..5 {
                let p: Vec<f64> = (0..qf.npassive()).map(|_| 1.0 + rng.uniform()).collect();
                let input: Vec<f64> = (0..qf.field_size()).map(|_| rng.uniform()).collect();
                let pair_v: [f64; 9] = std::array::from_fn(|k| if k == 0 { 0.5 + 0.5 * rng.uniform().abs() } else { rng.uniform() });
                let mut apply = vec![0.0; qf.field_size()];
                qf.apply(&p, &input, &mut apply);
                let g = |o: usize| [pair_v[o], pair_v[o + 1], pair_v[o + 2]];
                let pair = Pair { w: pair_v[0], vi: pair_v[1], vj: pair_v[2], gi: g(3), gj: g(6), dim };
                let mut block = vec![0.0; qf.ncomp * qf.ncomp];
                qf.block(&p, &pair, &mut block);
                // The twin reads only the first `dim` gradient entries: zero the rest for both.
                let mut twin_pair = pair_v;
                for k in dim..3 {
                    twin_pair[3 + k] = 0.0;
                    twin_pair[6 + k] = 0.0;
                }
                // Outputs of zeros would agree with anything: every case must produce a signal.
                assert!(apply.iter().any(|v| v.abs() > 1e-3) && block.iter().any(|v| v.abs() > 1e-6), "{}: trivial outputs", qf.cuda_type());
                if let Some(be) = &gpu {
                    let (ga, gb) = parity::cuda_eval(be, &qf, &p, &input, &twin_pair).unwrap();
                    assert!(close(&apply, &ga), "{} in {dim}D: apply {apply:?} vs twin {ga:?}", qf.cuda_type());
                    assert!(close(&block, &gb), "{} in {dim}D: block {block:?} vs twin {gb:?}", qf.cuda_type());
                    // Negative control: the twin with its first coefficient 1% off must disagree,
                    // so a twin that ignored or misread its passive fields would be caught.
                    let mut p_off = p.clone();
                    p_off[0] *= 1.01;
                    let (oa, ob) = parity::cuda_eval(be, &qf, &p_off, &input, &twin_pair).unwrap();
                    assert!(!close(&apply, &oa) && !close(&block, &ob), "{} in {dim}D: the comparison cannot see a 1% coefficient change", qf.cuda_type());
                    checked += 1;
                }
            }
        }
    }
    eprintln!("{checked} QFunction evaluations compared with their CUDA twins");
    if gpu.is_some() {
        assert_eq!(checked, 5 * (3 + 5 + 5), "every case of every dimension reaches the GPU");
    }
}

/// Equal length and equal to round-off, entry by entry.
fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-14 * (1.0 + x.abs()))
}

#[test]
fn the_comparison_sees_a_wrong_entry_and_a_wrong_length() {
    assert!(close(&[1.0, -2.0], &[1.0, -2.0 + 1e-15]));
    assert!(!close(&[1.0, -2.0], &[1.0, -2.0001]));
    assert!(!close(&[1.0, -2.0], &[1.0]));
}
