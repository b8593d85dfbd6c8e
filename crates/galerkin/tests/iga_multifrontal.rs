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

/// The factorization with the forward pass fused into it equals faer's LU for one and many
/// right-hand sides, from scratch and as a refactorization of other values (the matrix doubled
/// before, so stale factors would show), and the factorization it leaves solves later right-hand
/// sides; singular matrices and bad sizes are errors there too.
#[test]
fn cpu_factor_and_solve_equals_faer_lu_and_keeps_the_factorization() {
    use iga_common::{assert_equals_faer, right_hand_sides};
    for case in small_cases().into_iter().chain(large_front_cases()) {
        let sym = Arc::new(case.sym.clone());
        let n = case.sys.ndofs;
        let b = right_hand_sides(&case.sys, 5);
        let mut x = vec![0.0; 5 * n];
        let f = CpuMultifrontal::factor_and_solve_new(sym.clone(), &case.sys.matrices, 5, &b, &mut x).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_equals_faer(&case, 5, &x, "the CPU, fused from scratch");
        check_against_faer(&Cpu, &f, &case, 3);
        let doubled: Vec<f64> = case.sys.matrices.iter().map(|v| 2.0 * v).collect();
        let mut f = CpuMultifrontal::factor(sym, &doubled).unwrap();
        for nrhs in [1, 17] {
            let b = right_hand_sides(&case.sys, nrhs);
            let mut x = vec![0.0; nrhs * n];
            f.factor_and_solve(&case.sys.matrices, nrhs, &b, &mut x).unwrap();
            assert_equals_faer(&case, nrhs, &x, "the CPU, fused refactorization");
        }
        check_against_faer(&Cpu, &f, &case, 2);
    }
    let mut case = small_cases().into_iter().find(|c| c.name == "seed p=2 N=37").unwrap();
    let n = case.sys.ndofs;
    let mut f = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    assert!(f.factor_and_solve(&case.sys.matrices, 2, &vec![0.0; 3 * n], &mut vec![0.0; 2 * n]).is_err());
    case.sys.matrices.iter_mut().for_each(|v| *v = 0.0);
    let e = f.factor_and_solve(&case.sys.matrices, 1, &vec![1.0; n], &mut vec![0.0; n]).err().unwrap().to_string();
    assert!(e.contains("singular") && e.contains("dof"), "{e}");
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

/// The fused-subtree sweeps and their transfer maps (the GPU's many-right-hand-side solves, run
/// here on the CPU over the same tables) equal the multifrontal solve and faer's LU: 1D and 2D, subtrees as large as the
/// default limits allow and tiny ones (many passes, external children, leaves as roots).
#[test]
fn fused_subtree_sweeps_equal_the_multifrontal_solve() {
    use galerkin::solver::multifrontal::maps::{reference_maps, reference_maps_solve, MapLayout};
    use galerkin::solver::multifrontal::separators::{chain_deps, reference_chained_solve, reference_separator_solve, SeparatorPlan, TopWalk};
    use galerkin::solver::multifrontal::subtrees::{reference_solve, SubtreeLimits, SubtreePlan};
    let tiny = SubtreeLimits { rows: 12, emax: 8, front_entries: 300, mmax: 160 };
    let whole = SubtreeLimits { rows: 100_000, emax: 32, front_entries: 1 << 30, mmax: 160 };
    let mut many_passes = false;
    let mut maps_checked = 0;
    let mut separators_checked = 0;
    let mut walked = 0;
    let mut chained = 0;
    let mut adds_checked = 0;
    for case in small_cases().into_iter().chain(large_front_cases()) {
        let sym = Arc::new(case.sym.clone());
        let f = CpuMultifrontal::factor(sym.clone(), &case.sys.matrices).unwrap();
        let n = case.sys.ndofs;
        let b = iga_common::right_hand_sides(&case.sys, 2)[n..].to_vec();
        let mut want = vec![0.0; n];
        f.solve_into(1, &b, &mut want).unwrap();
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for lim in [SubtreeLimits::default(), tiny, whole] {
            let plan = SubtreePlan::new(&sym, lim).unwrap();
            // Invariants: limits hold; the nodes above a non-fused node are not fused.
            for p in &plan.passes {
                assert!(p.max_rows <= lim.rows && p.max_e <= lim.emax && p.max_front_entries <= lim.front_entries, "{}", case.name);
            }
            for v in 0..sym.num_nodes() {
                if !plan.fused[v] && sym.active[v] && sym.parent[v] != u32::MAX {
                    assert!(!plan.fused[sym.parent[v] as usize], "{}: node {v} above a non-fused one", case.name);
                }
            }
            let all = (0..sym.num_nodes()).all(|v| plan.fused[v] || !sym.active[v]);
            if !all {
                assert!(sym.max_front() > lim.rows.min(lim.mmax) || sym.m.iter().any(|&m| (m * m) as usize > lim.front_entries) || sym.e.iter().any(|&e| e as usize > lim.emax), "{}: a node was left out", case.name);
                continue;
            }
            many_passes |= plan.passes.len() >= 3;
            let perm = |v: usize| {
                let pinv = f.pinv(v);
                let mut p = vec![0u32; pinv.len()];
                for (i, &q) in pinv.iter().enumerate() {
                    p[q as usize] = i as u32;
                }
                p
            };
            let mut x = vec![f64::NAN; n];
            reference_solve(&sym, &plan, &|v| f.front(v), &perm, &b, &mut x);
            let diff = want.iter().zip(&x).fold(0.0f64, |m, (a, c)| if c.is_finite() { m.max((a - c).abs()) } else { f64::INFINITY });
            assert!(diff <= 1e-10 * scale, "{} ({} passes, {lim:?}): fused sweeps differ by {diff:.3e} (scale {scale:.3e})", case.name, plan.passes.len());
            // The same passes by the subtrees' dense transfer maps (the GPU's `SolvePath::Maps`),
            // for the limits the GPU uses and the tiny ones (dense maps of whole trees are large).
            if plan.passes.iter().any(|p| p.max_rows > 64) {
                continue;
            }
            maps_checked += 1;
            let layout = MapLayout::new(&plan);
            let maps = reference_maps(&sym, &plan, &layout, &|v| f.front(v), &perm);
            let mut xm = vec![f64::NAN; n];
            reference_maps_solve(&sym, &plan, &layout, &maps, &b, &mut xm);
            let diff = want.iter().zip(&xm).fold(0.0f64, |m, (a, c)| if c.is_finite() { m.max((a - c).abs()) } else { f64::INFINITY });
            assert!(diff <= 1e-10 * scale, "{} ({} passes, {lim:?}): transfer maps differ by {diff:.3e} (scale {scale:.3e})", case.name, plan.passes.len());
            // The same maps through the compact, row-major separator rows (`MapsKernel::Separators`):
            // every dof is written once (NaN-initialised `x`), every separator row owned once.
            if let Some(sp) = SeparatorPlan::new(&plan, n) {
                assert_eq!(sp.own_loc.len(), sp.rows, "{}: separator rows owned {} times for {} rows", case.name, sp.own_loc.len(), sp.rows);
                let sd = SeparatorPlan::at_dofs(&plan, n).unwrap_or_else(|| panic!("{}: a compact layout but none at dofs", case.name));
                assert!(sd.at_dofs && !sp.at_dofs && sd.rows == n && sd.own_dof == sp.own_dof && sd.own_ptr == sp.own_ptr, "{}: the layouts at dofs and compact own different rows", case.name);
                // Every separator row at its dof: pass 0's Schur rows and the upper passes' rows.
                for (q, (pd, pc)) in sd.passes.iter().zip(&sp.passes).enumerate() {
                    let orig = &plan.passes[q];
                    assert!(pd.row_dof == orig.row_dof && pc.row_dof.len() == orig.row_dof.len(), "{} pass {q}: rows at dofs are not the plan's dofs", case.name);
                }
                // Pass by pass, then with the passes near the root as one walk (every pass above
                // the bottom one, and those of at most 2 subtrees): its steps in list order.
                let walks = [None, TopWalk::new(&sym, &plan, usize::MAX), TopWalk::new(&sym, &plan, 2)];
                // The walk starts at the lowest pass above the bottom one from which every pass has
                // at most the bound's subtrees (round 29's `set_walk_subtrees` picks the bound).
                for max in [1, 2, 8, 64, 512, usize::MAX] {
                    let expect = (1..plan.passes.len()).find(|&q| plan.passes[q..].iter().all(|p| p.len() <= max));
                    assert_eq!(TopWalk::new(&sym, &plan, max).map(|w| w.first), expect, "{} ({lim:?}): the walk of passes of at most {max} subtrees", case.name);
                }
                for walk in walks.iter().enumerate().filter(|(i, w)| *i == 0 || w.is_some()).map(|(_, w)| w) {
                    if let Some(w) = walk {
                        for i in 0..w.dep_ptr.len() - 1 {
                            assert!(w.dep[w.dep_ptr[i] as usize..w.dep_ptr[i + 1] as usize].iter().all(|&d| (d as usize) < i), "{}: step {i} waits for a later one", case.name);
                        }
                        assert_eq!(w.dep_ptr.len() - 1, w.steps.len() / 2);
                        walked += 1;
                    }
                    let mut xs = vec![f64::NAN; n];
                    reference_separator_solve(&sym, &plan, &sp, &layout, &maps, walk.as_ref(), &b, &mut xs);
                    let diff = want.iter().zip(&xs).fold(0.0f64, |m, (a, c)| if c.is_finite() { m.max((a - c).abs()) } else { f64::INFINITY });
                    assert!(diff <= 1e-10 * scale, "{} ({} passes, {lim:?}, walk {:?}): separator layout differs by {diff:.3e} (scale {scale:.3e})", case.name, plan.passes.len(), walk.as_ref().map(|w| w.first));
                    // Round 26: the rows at their dofs, `sep` standing for `x` (no owned-row
                    // stores backward): the same products, so the same bits.
                    let mut xd = vec![f64::NAN; n];
                    reference_separator_solve(&sym, &plan, &sd, &layout, &maps, walk.as_ref(), &b, &mut xd);
                    assert!(xd.iter().zip(&xs).all(|(a, c)| a.to_bits() == c.to_bits()), "{} ({} passes, {lim:?}, walk {:?}): separator rows at dofs differ from compact ones", case.name, plan.passes.len(), walk.as_ref().map(|w| w.first));
                    // Stop 55: the passes below the walk (else 1 and all) adding their contributions
                    // into `x` in place (no table reads them from the buffer): the same solution
                    // to round-off (each separator row's sum in another order), fewer entries, and
                    // none left in the adding passes' tables.
                    let ext = sd.passes.iter().map(|p| p.ext_row.len()).sum::<usize>();
                    let belows = walk.as_ref().map_or(vec![1, plan.passes.len()], |w| vec![w.first]);
                    for below in belows {
                        let sa = SeparatorPlan::at_dofs_adds(&sym, &plan, n, below).unwrap_or_else(|| panic!("{}: at dofs but no adds", case.name));
                        let ext_a = sa.passes.iter().map(|p| p.ext_row.len()).sum::<usize>();
                        assert!(ext_a < ext && sa.passes[..below].iter().all(|p| p.ext_row.is_empty()) && sa.adds_below == below, "{} below {below}: adds keep {ext_a} of {ext} external entries", case.name);
                        let mut xa = vec![f64::NAN; n];
                        reference_separator_solve(&sym, &plan, &sa, &layout, &maps, walk.as_ref(), &b, &mut xa);
                        let diff = want.iter().zip(&xa).fold(0.0f64, |m, (a, c)| if c.is_finite() { m.max((a - c).abs()) } else { f64::INFINITY });
                        assert!(diff <= 1e-10 * scale, "{} ({} passes, {lim:?}, walk {:?}, below {below}): adds differ by {diff:.3e} (scale {scale:.3e})", case.name, plan.passes.len(), walk.as_ref().map(|w| w.first));
                        adds_checked += 1;
                    }
                }
                // Pass 1 chained into the bottom forward pass (round 23's `mf_mapss*_chain`): each
                // pass-1 subtree right after the last bottom subtree it reads, by `chain_deps`.
                if let Some(deps) = chain_deps(&sym, &plan, &sp) {
                    assert_eq!(deps.dep.len() as u32, deps.need.iter().sum::<u32>(), "{}: readers and counts disagree", case.name);
                    assert_eq!((deps.dep_ptr.len() - 1, deps.need.len()), (plan.passes[0].len(), plan.passes[1].len()), "{}", case.name);
                    let mut xc = vec![f64::NAN; n];
                    reference_chained_solve(&sym, &plan, &sp, &layout, &maps, &deps, &b, &mut xc);
                    let diff = want.iter().zip(&xc).fold(0.0f64, |m, (a, c)| if c.is_finite() { m.max((a - c).abs()) } else { f64::INFINITY });
                    assert!(diff <= 1e-10 * scale, "{} ({} passes, {lim:?}): pass 1 chained differs by {diff:.3e} (scale {scale:.3e})", case.name, plan.passes.len());
                    chained += 1;
                }
                separators_checked += 1;
            } else {
                assert!(plan.passes.len() < 2, "{}: {} passes, every node fused, but no separator layout", case.name, plan.passes.len());
            }
        }
    }
    assert!(many_passes, "no case cut into three passes or more");
    assert!(maps_checked > 10, "transfer maps checked on {maps_checked} plans only");
    assert!(separators_checked > 10, "separator layout checked on {separators_checked} plans only");
    assert!(walked > 10, "walks of the passes near the root checked on {walked} plans only");
    assert!(chained > 10, "pass 1 chained into the bottom pass checked on {chained} plans only");
    assert!(adds_checked > 10, "bottom adds checked on {adds_checked} plans only");
}

/// The row-major twin (`solve_many_rows`, `b[row · nrhs + c]`) equals faer's LU (column-major
/// reference, transposed) for 1, 3, 16 and 256 columns on small and large-front cases and on 1D
/// cubic and quartic systems of 512 elements; wrong lengths are errors naming the sizes.
#[test]
fn cpu_row_major_solves_equal_faer_lu() {
    let cases = small_cases().into_iter().chain(large_front_cases()).chain([iga_common::seed_1d(3, 512), iga_common::seed_1d(4, 512)]);
    for case in cases {
        let f = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
        let n = case.sys.ndofs;
        for nrhs in [1, 3, 16, 256] {
            let b = iga_common::to_rows(&iga_common::right_hand_sides(&case.sys, nrhs), n, nrhs);
            let mut x = vec![0.0; n * nrhs];
            f.solve_many_rows(&Cpu, nrhs, &b, &mut x).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            iga_common::assert_equals_faer(&case, nrhs, &iga_common::to_columns(&x, n, nrhs), "CPU row-major");
        }
        let e = f.solve_many_rows(&Cpu, 3, &vec![0.0; 3 * n - 1], &mut vec![0.0; 3 * n]).unwrap_err().to_string();
        assert!(e.contains("row-major") && e.contains(&format!("{}", 3 * n)), "{e}");
    }
}

/// What the GPU's row-major bottom pass a thread per column (`mf_rows_*`, 40 local rows in
/// registers) needs of the plan, on the 1D systems `tests/iga_cuda.rs` runs it on (degrees 1…5,
/// 3001 elements: uneven subtrees): a separator layout, no external contributions into the
/// bottom pass and at most 40 local rows per bottom subtree; and the row-major CPU solve of those
/// systems equals faer's LU at 7 columns. Round 17's fused kernels (`mf_rows_fused_*`) also need
/// every bottom subtree's eliminated rows to be one run of consecutive dofs — the subtree's
/// interior B-splines — (`fused_bases`: its first dof, the minimum) and at most 8 owned rows
/// each; a subtree whose rows skip a dof or repeat one has no base.
#[test]
fn one_d_bottom_subtrees_fit_the_row_major_column_kernel() {
    use galerkin::solver::multifrontal::separators::{fused_bases, SeparatorPlan};
    use galerkin::solver::multifrontal::subtrees::{SubtreeLimits, SubtreePlan};
    for p in 1..=5 {
        let case = iga_common::seed_1d(p, 3001);
        let plan = SubtreePlan::new(&case.sym, SubtreeLimits::default()).unwrap();
        assert!(SeparatorPlan::new(&plan, case.sym.n).is_some(), "{}: no separator layout", case.name);
        let bottom = &plan.passes[0];
        assert!(bottom.ext_ptr.last().is_none_or(|&e| e == 0), "{}: external contributions into the bottom pass", case.name);
        assert!(bottom.max_rows <= 40 && bottom.max_rows > 0, "{}: {} local rows", case.name, bottom.max_rows);
        let bases = fused_bases(bottom).unwrap_or_else(|| panic!("{}: a bottom subtree's eliminated rows are no run of dofs", case.name));
        for (j, &d0) in bases.iter().enumerate() {
            let r0 = bottom.row_ptr[j] as usize;
            let mut rows = bottom.row_dof[r0..r0 + bottom.elim[j] as usize].to_vec();
            rows.sort_unstable();
            assert!(rows.iter().enumerate().all(|(i, &d)| d == d0 + i as u32), "{} subtree {j}: base {d0} for rows {rows:?}", case.name);
        }
        // In 1D a subtree of m consecutive elements eliminates its interior functions, m − p of them
        // (all but p where it ends at the boundary); together every eliminated dof once.
        let elim: usize = bottom.elim.iter().map(|&e| e as usize).sum();
        assert!(elim < case.sym.n && bases.windows(2).all(|w| w[0] < w[1]), "{}: bases {:?}…", case.name, &bases[..bases.len().min(4)]);
        let sp = SeparatorPlan::new(&plan, case.sym.n).unwrap();
        assert!(sp.own_ptr.windows(2).all(|w| w[1] - w[0] <= 8), "{}: more than 8 owned rows in a subtree", case.name);
        let (mut gap, mut twice) = (bottom.clone(), bottom.clone());
        let (r0, ne) = (gap.row_ptr[1] as usize, gap.elim[1] as usize);
        assert!(ne >= 2, "{}: subtree 1 eliminates {ne} rows", case.name);
        gap.row_dof[r0] += 1000;
        twice.row_dof[r0] = twice.row_dof[r0 + 1];
        assert!(fused_bases(&gap).is_none() && fused_bases(&twice).is_none(), "{}: a broken run has a base", case.name);
        let n = case.sys.ndofs;
        let f = CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
        let b = iga_common::to_rows(&iga_common::right_hand_sides(&case.sys, 7), n, 7);
        let mut x = vec![0.0; n * 7];
        f.solve_many_rows(&Cpu, 7, &b, &mut x).unwrap();
        iga_common::assert_equals_faer(&case, 7, &iga_common::to_columns(&x, n, 7), "CPU row-major");
    }
}

/// The bytes budget of a row-major solve through the separator rows (`solve_bytes`, round 26) counts
/// every row where it goes, on the 1D systems of degree 1…5 (3001 elements) and a 2D large-front
/// case: each dof eliminated once (the bottom pass's rows from `b`, the others from `sep`, read
/// forward and backward alike), each separator row copied in once forward and stored once
/// backward, every root's Schur rows written once forward and read by the pass above; with the
/// rows at dofs (`SeparatorPlan::at_dofs`) exactly the owned rows' backward stores and their
/// indices less, nothing else.
#[test]
fn solve_bytes_count_every_row_once() {
    use galerkin::solver::multifrontal::separators::{SeparatorPlan, TopWalk, TOP_SUBTREES};
    use galerkin::solver::multifrontal::solve_bytes::solve_bytes;
    use galerkin::solver::multifrontal::subtrees::{SubtreeLimits, SubtreePlan};
    let mut counted = 0;
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases()) {
        let plan = SubtreePlan::new(&case.sym, SubtreeLimits::default()).unwrap();
        let (Some(sp), Some(sd)) = (SeparatorPlan::new(&plan, case.sym.n), SeparatorPlan::at_dofs(&plan, case.sym.n)) else { continue };
        let walk = TopWalk::new(&case.sym, &plan, TOP_SUBTREES);
        let (c, d) = (solve_bytes(&sp, walk.as_ref()), solve_bytes(&sd, walk.as_ref()));
        let eliminated: u64 = plan.passes.iter().flat_map(|p| p.elim.iter()).map(|&e| u64::from(e)).sum();
        let (bottom, rows) = (plan.passes[0].elim.iter().map(|&e| u64::from(e)).sum::<u64>(), sp.rows as u64);
        assert_eq!(eliminated, case.sym.n as u64, "{}: the passes eliminate {eliminated} of {} dofs", case.name, case.sym.n);
        let sum = |v: &[_], f: &dyn Fn(&galerkin::solver::multifrontal::solve_bytes::LaunchBytes) -> u64| v.iter().map(f).sum::<u64>();
        // `b`: the bottom rows twice and the separator rows once; x: every dof once (compact).
        assert_eq!(sum(&c, &|l| l.b_read), 2 * bottom + rows, "{}: b read", case.name);
        assert_eq!(sum(&c, &|l| l.x_write), bottom + rows, "{}: x written", case.name);
        assert_eq!(sum(&d, &|l| l.x_write), bottom, "{}: x written with the rows at dofs", case.name);
        // The separator rows: copied in once, written once more (x), read by their own pass both ways.
        assert_eq!(sum(&c, &|l| l.sep_write), 2 * rows, "{}: sep written", case.name);
        let roots: u64 = plan.passes.iter().map(|p| (0..p.len()).map(|j| u64::from(p.row_ptr[j + 1] - p.row_ptr[j] - p.elim[j])).sum::<u64>()).sum();
        assert_eq!(sum(&c, &|l| l.contrib_write), roots, "{}: contributions written", case.name);
        for (lc, ld) in c.iter().zip(&d) {
            let own = if lc.label == "backward 0" { rows } else { 0 };
            assert_eq!((lc.lines() - own, lc.maps, &lc.label), (ld.lines(), ld.maps, &ld.label), "{}: the layouts differ beyond the owned stores", case.name);
            assert!(ld.index_bytes <= lc.index_bytes && (own == 0) == (ld.index_bytes == lc.index_bytes), "{} {}: indices {} against {}", case.name, lc.label, ld.index_bytes, lc.index_bytes);
        }
        counted += 1;
    }
    assert!(counted >= 5, "budgets counted on {counted} cases only");
}

/// Round 27's in-place solve (`x` = `b`, `CudaMultifrontal::solve_many_rows_in_place`): the CPU
/// emulation of every launch's reads and writes of `b`, `x` and `sep` on one buffer
/// (`in_place::hazards`) finds no hazard on any plan, walked or not, compact rows or at dofs, in
/// place or not — and it does find the hazards it exists for: the owned rows stored backward while
/// `sep` is `x` (another bottom subtree reads them in the same launch), and the walk run without
/// its waits. The bytes: in place at dofs the bottom forward pass moves no owned row.
#[test]
fn in_place_solve_has_no_hazard() {
    use galerkin::solver::multifrontal::in_place::{hazards, Aliasing};
    use galerkin::solver::multifrontal::separators::{SeparatorPlan, TopWalk, TOP_SUBTREES};
    use galerkin::solver::multifrontal::solve_bytes::{solve_bytes, solve_bytes_aliased};
    use galerkin::solver::multifrontal::subtrees::{SubtreeLimits, SubtreePlan};
    let (mut checked, mut walked) = (0, 0);
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases()) {
        let plan = SubtreePlan::new(&case.sym, SubtreeLimits::default()).unwrap();
        let (Some(sp), Some(sd)) = (SeparatorPlan::new(&plan, case.sym.n), SeparatorPlan::at_dofs(&plan, case.sym.n)) else { continue };
        let walk = TopWalk::new(&case.sym, &plan, TOP_SUBTREES);
        // Round 29's narrower walks (`set_walk_subtrees`): the passes below them one launch each.
        let narrow: Vec<TopWalk> = [64, 8, 1].into_iter().filter_map(|m| TopWalk::new(&case.sym, &plan, m)).collect();
        for w in [None, walk.as_ref()].into_iter().chain(narrow.iter().map(Some)) {
            for (layout, s) in [("compact", &sp), ("at dofs", &sd)] {
                for in_place in [false, true] {
                    let h = hazards(&plan, s, w, Aliasing::of(s, in_place), 5);
                    assert!(h.is_empty(), "{} {layout} walk from pass {:?} in place {in_place}: {h:?}", case.name, w.map(|w| w.first));
                }
            }
            // The owned rows stored backward with `sep` = `x`: other bottom subtrees read them.
            let stores = Aliasing { in_place: true, owned_forward: false, owned_backward: true };
            assert!(!hazards(&plan, &sd, w, stores, 1).is_empty(), "{}: owned stores at dofs not caught", case.name);
        }
        if let Some(w) = &walk {
            let mut loose = w.clone();
            loose.dep.clear();
            loose.dep_ptr.iter_mut().for_each(|d| *d = 0);
            assert!(!hazards(&plan, &sd, Some(&loose), Aliasing::of(&sd, true), 1).is_empty(), "{}: a walk without waits not caught", case.name);
            walked += 1;
        }
        let own: u64 = sd.own_ptr.last().copied().map_or(0, u64::from);
        let (d, i) = (solve_bytes(&sd, walk.as_ref()), solve_bytes_aliased(&sd, walk.as_ref(), true));
        for (ld, li) in d.iter().zip(&i) {
            let less = if ld.label == "forward 0" { 2 * own } else { 0 };
            assert_eq!(ld.lines() - less, li.lines(), "{} {}: in place moves the owned rows' copy less", case.name, ld.label);
        }
        assert_eq!(solve_bytes(&sp, walk.as_ref()), solve_bytes_aliased(&sp, walk.as_ref(), true), "{}: compact rows in place move the same", case.name);
        checked += 1;
    }
    assert!(checked >= 5 && walked >= 1, "checked {checked} plans, {walked} walked");
}

/// The bytes budget of issue 15's solve — 2^20 cubic elements, row-major, 1/32/64/256 columns —
/// on the plan the GPU runs (`SubtreeLimits::default()`, the walk above 512 subtrees), by launch
/// and kind, with the time each launch's bytes take at 4124 GB/s (round 24's copy rate on the
/// H200). Round 26's table in BENCHMARKS.md; `--ignored --nocapture` (a few seconds).
#[test]
#[ignore]
fn solve_bytes_of_issue_15() {
    use galerkin::solver::multifrontal::separators::{SeparatorPlan, TopWalk, TOP_SUBTREES};
    let (sym, plan, sp) = iga_common::issue15_plan();
    let sd = SeparatorPlan::at_dofs(&plan, sym.n).unwrap();
    let walk = TopWalk::new(&sym, &plan, TOP_SUBTREES).unwrap();
    let copy = 4124e9;
    eprintln!("n {}, passes {:?} subtrees, separator rows {}, walk from pass {}", sym.n, plan.passes.iter().map(|p| p.len()).collect::<Vec<_>>(), sp.rows, walk.first);
    // Round 27: the in-place solve's hazards on this plan (none), and its bytes.
    for (name, s) in [("compact rows", &sp), ("rows at dofs", &sd)] {
        for w in [None, Some(&walk)] {
            let h = galerkin::solver::multifrontal::in_place::hazards(&plan, s, w, galerkin::solver::multifrontal::in_place::Aliasing::of(s, true), 5);
            eprintln!("in place, {name}, walk {}: {} hazards {h:?}", w.is_some(), h.len());
            assert!(h.is_empty());
        }
    }
    for (name, s, ip) in [("compact rows (default)", &sp, false), ("rows in x (-sx)", &sd, false), ("rows in x in place (-sx-ip)", &sd, true)] {
        let launches = galerkin::solver::multifrontal::solve_bytes::solve_bytes_aliased(s, Some(&walk), ip);
        for nrhs in [1usize, 32, 64, 256] {
            let total: f64 = launches.iter().map(|l| l.bytes(nrhs)).sum();
            eprintln!("{name}, {nrhs} columns: {:.4} GB, {:.1} us at copy", total * 1e-9, total / copy * 1e6);
        }
        eprintln!("{name} at 256 columns (GB): launch | b read | sep read | sep write | x write | contrib write | contrib read | maps | indices | total | us at copy");
        for l in &launches {
            let g = |d: u64| d as f64 * 8.0 * 256.0 * 1e-9;
            eprintln!(
                "  {:<11} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.5} | {:.4} | {:.1}",
                l.label,
                g(l.b_read),
                g(l.sep_read),
                g(l.sep_write),
                g(l.x_write),
                g(l.contrib_write),
                g(l.contrib_read),
                l.maps as f64 * 8e-9,
                l.index_bytes as f64 * 1e-9,
                l.bytes(256) * 1e-9,
                l.bytes(256) / copy * 1e6
            );
        }
        assert_eq!(launches.len(), 5, "forward 0, forward 1, walk, backward 1, backward 0");
    }
}

/// Stop 54's count for issue 15 on the H100 (BENCHMARKS.md "Stop 54"): there ≤ 2× needs solve(256)
/// ≤ 2.80 ms while the default's launches already move more than the copy rate carries in that
/// time, so bytes must go. Bottom subtrees of 64 eliminated rows instead of 32 (`SubtreeLimits`
/// rows 72, emax 64) halve the subtrees of every pass, so forward 1, backward 1 and the walk move
/// about half their contributions, while backward 0's `[H K]ᵀ` maps double (a subtree's are
/// `e × (e + s)`): on the 2^20 cubic plan at 256 columns the total drops by about 1 GB (9.23 →
/// 8.24 GB; 7.93 in place with the rows in `x`); 48 rows keep the bottom subtrees at 32 (the tree
/// is binary) and gain nothing. Counted on the host only: the solve's kernels are built for at most
/// 48 eliminated rows (NB ≤ 3 map row tiles) and the plan is the factorization's, so nothing runs it.
#[test]
fn larger_bottom_subtrees_cut_issue_15s_bytes() {
    use galerkin::solver::multifrontal::separators::{SeparatorPlan, TopWalk, TOP_SUBTREES};
    use galerkin::solver::multifrontal::solve_bytes::{solve_bytes, solve_bytes_aliased};
    use galerkin::solver::multifrontal::subtrees::{SubtreeLimits, SubtreePlan};
    let sym = iga_common::issue15_symbolic();
    let gb = |v: &[galerkin::solver::multifrontal::solve_bytes::LaunchBytes]| v.iter().map(|l| l.bytes(256)).sum::<f64>() * 1e-9;
    let mut totals = Vec::new();
    // The default's limits (rows 40, emax 32), then 48 and 64 eliminated rows (the fronts still fit
    // the default's staged entries: 1 999 of 2 048 at 64).
    let d = SubtreeLimits::default();
    for (rows, emax) in [(d.rows, d.emax), (56, 48), (72, 64)] {
        let plan = SubtreePlan::new(&sym, SubtreeLimits { rows, emax, ..d }).unwrap();
        let (sp, sd) = (SeparatorPlan::new(&plan, sym.n).unwrap(), SeparatorPlan::at_dofs(&plan, sym.n).unwrap());
        let walk = TopWalk::new(&sym, &plan, TOP_SUBTREES);
        let (v, ip) = (solve_bytes(&sp, walk.as_ref()), solve_bytes_aliased(&sd, walk.as_ref(), true));
        let passes: Vec<_> = plan.passes.iter().map(|p| p.len()).collect();
        let back0 = v.iter().find(|l| l.label == "backward 0").unwrap().maps as f64 * 8e-9;
        eprintln!("emax {emax}: passes {passes:?}, 256 columns {:.3} GB (-sx-ip {:.3}), backward 0's maps {back0:.3} GB", gb(&v), gb(&ip));
        for l in &v {
            eprintln!("    {:<11} {:.3} GB", l.label, l.bytes(256) * 1e-9);
        }
        totals.push((passes[0], gb(&v), gb(&ip), back0));
    }
    let ((s32, t32, _, m32), (_, t48, _, _), (s64, t64, ip64, m64)) = (totals[0], totals[1], totals[2]);
    assert_eq!((s32, s64), (32768, 16384), "the bottom pass's subtrees");
    assert!(t32 - t64 > 0.9 && t32 - t64 < 1.1, "64 eliminated rows: {t32:.3} → {t64:.3} GB");
    assert!((t32 - t48).abs() < 0.15, "48 eliminated rows: {t32:.3} → {t48:.3} GB");
    assert!(m64 > 1.8 * m32 && m64 < 2.1 * m32, "backward 0's maps {m32:.3} → {m64:.3} GB");
    assert!(ip64 < t64 - 0.3, "in place with the rows in x: {t64:.3} → {ip64:.3} GB");
    // Stop 55: passes 0 and 1 (those below the walk) adding their contributions into x in place
    // (`-sx-ip-add`): forward 1, backward 1 and the walk read none of them from the buffer.
    let plan = SubtreePlan::new(&sym, d).unwrap();
    let walk = TopWalk::new(&sym, &plan, TOP_SUBTREES);
    let below = walk.as_ref().map_or(0, |w| w.first);
    assert_eq!(below, 2, "the walk's first pass at 2^20");
    let (sd, sa) = (SeparatorPlan::at_dofs(&plan, sym.n).unwrap(), SeparatorPlan::at_dofs_adds(&sym, &plan, sym.n, below).unwrap());
    let (ip, adds) = (solve_bytes_aliased(&sd, walk.as_ref(), true), solve_bytes_aliased(&sa, walk.as_ref(), true));
    for (a, b) in ip.iter().zip(&adds) {
        eprintln!("    {:<11} -sx-ip {:.3} GB, -sx-ip-add {:.3} GB", a.label, a.bytes(256) * 1e-9, b.bytes(256) * 1e-9);
    }
    let (ip, adds) = (gb(&ip), gb(&adds));
    eprintln!("today's limits: -sx-ip {ip:.3} GB, -sx-ip-add {adds:.3} GB");
    assert!(ip - adds > 0.8 && ip - adds < 0.9, "adds: {ip:.3} → {adds:.3} GB");
}

/// Round 28's split contributions (`CudaMultifrontal::set_sep_ext_split`, MF_SEP_XS): the CPU
/// emulation of the kernel's staging — a subtree's external entries at rows below `keep` (R
/// forward, the eliminated rows backward), stably partitioned by `row % parts` into one list a
/// part, each part adding its list to its own rows — against the default (part 0 alone adds every
/// entry in order): every (row, column) receives the same values in the same order, so the sums
/// are bit-identical. Returns each part's entries (indices into the subtree's entries).
fn split_ext(rows: &[u32], keep: u32, parts: usize) -> Vec<Vec<usize>> {
    let mut lists = vec![Vec::new(); parts];
    // The kernel's warp loop: groups of 32 entries, a ballot a part, positions by popcount.
    for g in (0..rows.len()).step_by(32) {
        for q in 0..parts {
            for (e, &r) in rows.iter().enumerate().skip(g).take(32) {
                if r < keep && r as usize % parts == q {
                    lists[q].push(e);
                }
            }
        }
    }
    lists
}

/// Adds entries `list` of values `vals` (entry → value) to `w` by rows, in list order.
fn add_entries(w: &mut [f64], rows: &[u32], vals: &[f64], list: &[usize]) {
    for &e in list {
        w[rows[e] as usize] += vals[e];
    }
}

#[test]
fn split_contributions_equal_the_default_bit_for_bit() {
    use galerkin::solver::multifrontal::subtrees::{SubtreeLimits, SubtreePlan};
    let (mut subtrees, mut entries) = (0usize, 0usize);
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases()) {
        let plan = SubtreePlan::new(&case.sym, SubtreeLimits::default()).unwrap();
        for (q, p) in plan.passes.iter().enumerate() {
            for j in 0..p.len() {
                let (x0, x1) = (p.ext_ptr[j] as usize, p.ext_ptr[j + 1] as usize);
                let rows = &p.ext_row[x0..x1];
                let r = (p.row_ptr[j + 1] - p.row_ptr[j]) as usize;
                // Values of every magnitude, so that any change of order shows in the last bits.
                let vals: Vec<f64> = (0..rows.len()).map(|e| ((e * 7919 + j * 31) % 1000) as f64 * 1e-3 * 10f64.powi((e % 9) as i32 - 4)).collect();
                for keep in [r as u32, p.elim[j]] {
                    let valid: Vec<usize> = (0..rows.len()).filter(|&e| rows[e] < keep).collect();
                    let mut want = vec![0.5; r];
                    add_entries(&mut want, rows, &vals, &valid);
                    for parts in 1..=4 {
                        let lists = split_ext(rows, keep, parts);
                        assert_eq!(lists.iter().map(Vec::len).sum::<usize>(), valid.len(), "{}: pass {q} subtree {j}: entries lost", case.name);
                        let mut got = vec![0.5; r];
                        for (k, l) in lists.iter().enumerate() {
                            assert!(l.iter().all(|&e| rows[e] as usize % parts == k) && l.windows(2).all(|w| w[0] < w[1]), "{}: part {k} out of order", case.name);
                            add_entries(&mut got, rows, &vals, l);
                        }
                        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{}: pass {q} subtree {j} parts {parts}: sums differ", case.name);
                    }
                }
                subtrees += 1;
                entries += rows.len();
            }
        }
    }
    assert!(subtrees > 1000 && entries > 1000, "only {subtrees} subtrees, {entries} entries checked");
}

/// The 2^20 cubic plan's passes 0 and 1 (the launches round 28's split targets): shapes, the
/// external entries a subtree (forward all, backward at eliminated rows), and the batches of 8
/// the slowest thread of a column walks by default (part 0: every entry, two dependent round
/// trips a batch — indices, then values) and split over 2 parts (its part's entries, one round
/// trip a batch: the indices staged in shared memory under the copies).
#[test]
#[ignore]
fn split_contributions_of_issue_15() {
    let (_, plan, _) = iga_common::issue15_plan();
    for (q, p) in plan.passes.iter().enumerate().take(3) {
        let n = p.len();
        let rr = |j: usize| (p.row_ptr[j + 1] - p.row_ptr[j]) as usize;
        let (mr, me) = ((0..n).map(rr).max().unwrap(), p.elim.iter().max().copied().unwrap() as usize);
        let ms = (0..n).map(|j| rr(j) - p.elim[j] as usize).max().unwrap();
        eprintln!("pass {}: {n} subtrees, rows ≤ {mr} (mean {:.1}), eliminated ≤ {me} (mean {:.1}), Schur ≤ {ms}, max_rows {}", q, (0..n).map(rr).sum::<usize>() as f64 / n as f64, p.elim.iter().map(|&e| e as f64).sum::<f64>() / n as f64, p.max_rows);
        for backward in [false, true] {
            let (mut tot, mut mx, mut b_def, mut b_split, mut mx_part) = (0usize, 0usize, 0usize, 0usize, 0usize);
            for j in 0..n {
                let rows = &p.ext_row[p.ext_ptr[j] as usize..p.ext_ptr[j + 1] as usize];
                let keep = if backward { p.elim[j] } else { rr(j) as u32 };
                let l1 = split_ext(rows, keep, 1);
                let l2 = split_ext(rows, keep, 2);
                tot += l1[0].len();
                mx = mx.max(rows.len());
                b_def += rows.len().div_ceil(8); // the default walks every entry (invalid ones skipped inside a batch)
                let worst = l2.iter().map(Vec::len).max().unwrap();
                mx_part = mx_part.max(worst);
                b_split += worst.div_ceil(8);
            }
            eprintln!(
                "  {}: entries a subtree ≤ {mx}, used {:.1} mean; batches of 8 a subtree (slowest thread): default {:.2} (×2 round trips), split over 2 parts {:.2} (×1), a part's most entries {mx_part}",
                if backward { "backward" } else { "forward" },
                tot as f64 / n as f64,
                b_def as f64 / n as f64,
                b_split as f64 / n as f64
            );
        }
    }
}

/// Round 29's counts for forward 0's pipelined chunks (`set_sep_pipe64`) on the 2^20 cubic plan, at
/// 256 columns (`--include-ignored --nocapture pipelined_chunks_of_issue_15`): the bottom pass's
/// rows, the shared memory of a block of the default (one 128-column chunk, rows of 130 doubles)
/// and of the pipelined kernel (two 64-column chunks, rows of 66) with the resident blocks they
/// leave (233 472 bytes an SM configured, 1 024 reserved and 16 static a block), and per subtree the
/// bulk copies, their bytes and how many of them the block's own work can hide.
#[test]
#[ignore]
fn pipelined_chunks_of_issue_15() {
    let (_, plan, sp) = iga_common::issue15_plan();
    let p = &plan.passes[0];
    let n = p.len();
    let rows = |j: usize| (p.row_ptr[j + 1] - p.row_ptr[j]) as usize;
    let own = |j: usize| (sp.own_ptr[j + 1] - sp.own_ptr[j]) as usize;
    let (me, mown) = (p.elim.iter().max().copied().unwrap() as usize, (0..n).map(own).max().unwrap());
    let prows = sp.max_rows0;
    let mean = |f: &dyn Fn(usize) -> usize| (0..n).map(f).sum::<usize>() as f64 / n as f64;
    eprintln!(
        "pass 0: {n} subtrees, rows ≤ {} (with owned {prows}), eliminated ≤ {me} (mean {:.2}), owned ≤ {mown} (mean {:.2}), Schur mean {:.2}",
        (0..n).map(rows).max().unwrap(),
        mean(&|j| p.elim[j] as usize),
        mean(&|j| own(j)),
        mean(&|j| rows(j) - p.elim[j] as usize)
    );
    // The kernels' layout (DevPass::mapss_smem, mapss_pipe_smem): prefetched words, Gᵀ with rows of 16 + 4, the chunks.
    let (pre, map) = ((prows + 2) / 2 * 2, me * 20);
    let smem = |chunks: usize, ld: usize| 8 * (pre + map + chunks * prows * ld);
    let per_sm = |bytes: usize| 233_472 / (bytes + 1_040);
    let (default, piped) = (smem(1, 130), smem(2, 66));
    eprintln!("shared memory a block: default {default} B ({} blocks/SM), pipelined {piped} B ({} blocks/SM, {} B to spare)", per_sm(default), per_sm(piped), 233_472 - per_sm(piped) * (piped + 1_040));
    assert_eq!(per_sm(default), per_sm(piped), "the pipelined kernel loses a resident block");
    // Lines a chunk: b at the eliminated and owned rows (loads), the owned rows to sep and the Schur rows to buf (stores).
    let loads = mean(&|j| p.elim[j] as usize + own(j));
    let stores = mean(&|j| own(j) + rows(j) - p.elim[j] as usize);
    for (cols, chunks) in [(128usize, 2usize), (64, 4)] {
        eprintln!(
            "{cols}-column chunks: {chunks} a subtree, {:.1} bulk copies of {} B a chunk ({:.1} a subtree, {:.0} B), {:.1} line stores of {} B a chunk; copies the block's own work can hide: {}",
            loads,
            8 * cols,
            loads * chunks as f64,
            loads * chunks as f64 * 8.0 * cols as f64,
            stores,
            8 * cols,
            if chunks == 2 { "none (each chunk waits for its own)".to_string() } else { format!("chunks 1..{} ({:.0} %)", chunks - 1, 100.0 * (chunks - 1) as f64 / chunks as f64) }
        );
    }
}

/// Round 30 (run with `--include-ignored --nocapture`): on the 2^20 cubic plan, the shared memory of
/// the backward kernels the default runs at 256 columns — backward 0 (`mf_mapssbp0_backward_NB`:
/// prefetched words, `[H K]ᵀ` with rows of 16·NB + 4, one chunk of 128 columns in rows of 132) and
/// the split backward 1 (`mf_mapssbxs_backward_NB`: no prefetch, the split's staged entries past
/// the rows) — against their pipelined twins (two 64-column chunks in rows of 68), with the
/// resident blocks each leaves (233 472 bytes an SM configured, 1 024 reserved and 16 static a
/// block; at 256 threads the caps (256, 4) / (256, 3) allow 4 / 3 by registers), and per subtree the
/// bulk copies and their bytes.
#[test]
#[ignore]
fn pipelined_backward_chunks_of_issue_15() {
    let (_, plan, sp) = iga_common::issue15_plan();
    let per_sm = |bytes: usize| 233_472 / (bytes + 1_040);
    for q in 0..2 {
        let p = &plan.passes[q];
        let n = p.len();
        let me = p.elim.iter().max().copied().unwrap() as usize;
        let nb = me.div_ceil(16).max(1);
        // DevPass::dp.rows: pass 0 its most local + owned rows (SeparatorPlan::max_rows0), above its most rows.
        let rows = if q == 0 { sp.max_rows0 } else { p.max_rows };
        let max_ext = (0..n).map(|j| (p.ext_ptr[j + 1] - p.ext_ptr[j]) as usize).max().unwrap_or(0);
        let pre = if q == 0 { (rows + 2) / 2 * 2 } else { 0 };
        let split = if q == 0 { 0 } else { 2 + 4 * max_ext };
        let map = rows * (16 * nb + 4);
        let smem = |chunks: usize, ld: usize| 8 * (pre + map.next_multiple_of(2) + chunks * rows * ld + split);
        let (default, piped) = (smem(1, 132), smem(2, 68));
        let cap = if nb == 2 { 4 } else { 3 };
        eprintln!(
            "backward {q}: {n} subtrees, NB = {nb} (eliminated ≤ {me}), rows {rows}, external entries ≤ {max_ext}; shared memory a block: default {default} B ({} blocks/SM, {cap} by its cap), pipelined {piped} B ({} blocks/SM, {} B to spare)",
            per_sm(default),
            per_sm(piped),
            233_472 - per_sm(piped).min(cap) * (piped + 1_040)
        );
        assert_eq!(per_sm(default).min(cap), per_sm(piped).min(cap), "backward {q}: the pipelined kernel loses a resident block");
        // Lines a chunk, backward: b (pass 0, row-major) at the eliminated rows, sep at the Schur rows (loads); x at the eliminated (and owned) rows (stores).
        let mean = |f: &dyn Fn(usize) -> usize| (0..n).map(f).sum::<usize>() as f64 / n as f64;
        let loads = mean(&|j| (p.row_ptr[j + 1] - p.row_ptr[j]) as usize);
        for (cols, chunks) in [(128usize, 2usize), (64, 4)] {
            eprintln!("  {cols}-column chunks: {chunks} a subtree, {loads:.1} bulk copies of {} B a chunk ({:.0} B a subtree)", 8 * cols, loads * chunks as f64 * 8.0 * cols as f64);
        }
    }
}
