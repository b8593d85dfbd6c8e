//! The recomputing gather's host tables ([`galerkin::hyperelastic::recompute::Blocks`], seventeenth
//! pass): contiguous node ranges that cover every node once and fit their cap, and per block the
//! distinct cells touching its nodes with the masks of the owned local nodes — every (cell, node)
//! pair owned by exactly one block (CPU only; the kernel is checked against the CPU in
//! `hyperelastic_cuda`). The redundancy (cell evaluations per cell) on the benchmark's cube.
mod hyper_common;
use galerkin::hyperelastic::recompute::Blocks;
use galerkin::hyperelastic::run::prepare_text;

/// The invariants above on the P2 fibre cube of `n`³ boxes, at row caps of `caps` doubles; the
/// redundancy at each cap.
fn check(n: usize, caps: &[usize]) -> Vec<f64> {
    let (_, prep) = prepare_text(&hyper_common::usyk_cube(n, 2, "block-jacobi")).unwrap();
    let el = &prep.el;
    let (cn, nloc, rp) = (&el.space.dofmap.cell_nodes, el.nloc(), &prep.pattern.row_ptr);
    let (nnodes, ncells) = ((rp.len() - 1) / 3, cn.len() / nloc);
    let mut out = Vec::new();
    for &cap in caps {
        let b = Blocks::build(cn, nloc, rp, cap).unwrap();
        assert_eq!((b.node[0], *b.node.last().unwrap() as usize), (0, nnodes));
        let mut owner = vec![usize::MAX; nnodes];
        let mut seen = vec![0u32; ncells * nloc];
        for k in 0..b.nblocks() {
            let (n0, n1) = (b.node[k] as usize, b.node[k + 1] as usize);
            assert!(n1 > n0 && rp[3 * n1] - rp[3 * n0] + 3 * (n1 - n0) <= cap.max(b.max_vals), "block {k} over its cap");
            owner[n0..n1].iter_mut().for_each(|o| *o = k);
            let cells = &b.cell[b.ptr[k] as usize..b.ptr[k + 1] as usize];
            assert!(cells.windows(2).all(|w| w[0] < w[1]), "block {k}: cells ascending and distinct");
            for (e, &c) in cells.iter().enumerate() {
                let m = b.mask[b.ptr[k] as usize + e];
                assert_ne!(m, 0, "block {k}: cell {c} without an owned node");
                for a in 0..nloc {
                    let node = cn[c as usize * nloc + a];
                    // owned here exactly where the node is in the block's range
                    assert_eq!(m >> a & 1 == 1, (n0..n1).contains(&node), "block {k} cell {c} place {a}");
                    seen[c as usize * nloc + a] += u32::from(m >> a & 1);
                }
            }
        }
        assert!(owner.iter().all(|&o| o != usize::MAX));
        assert!(seen.iter().all(|&s| s == 1), "every (cell, node) pair owned once");
        let (pairs, evals) = b.counts();
        assert_eq!(pairs, ncells * nloc);
        assert!(evals >= ncells);
        out.push(b.redundancy(ncells));
    }
    out
}

/// The tables' invariants on a small cube; larger ranges evaluate cells less often.
#[test]
fn blocks_own_every_pair_once() {
    let rho = check(4, &[600, 2000, 6000, 1 << 30]);
    assert!(rho.windows(2).all(|w| w[0] >= w[1]), "{rho:?}");
    assert_eq!(rho[3], 1.0, "one block: each cell once");
    assert!(rho[0] > 1.5, "{rho:?}");
}

/// The benchmark's cube at 10⁶ unknowns (34³ boxes): the redundancy at the sweep's caps
/// (`--include-ignored --nocapture`: seconds of host set-up).
#[test]
#[ignore]
fn redundancy_on_the_bench_cube() {
    let caps = [6_000, 12_000, 19_000, 25_000];
    let rho = check(34, &caps);
    for (c, r) in caps.iter().zip(&rho) {
        println!("cap {c} doubles: {r:.3} evaluations per cell");
    }
}
