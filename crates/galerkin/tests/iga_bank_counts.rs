//! Shared-memory bank counts of the bottom forward separator-row pass (`mf_mapssbtp_forward` and
//! round 29's `mf_mapssbtpl4_forward`, `MF_SEP_LD4`), from the kernel's index patterns mirrored on
//! the host: which accesses of a chunk conflict with rows of `C + 2` doubles, and that rows of
//! `C + 4` with the accumulators in row-parity order leave none. The model (8-byte accesses by
//! half-warps, a wavefront per distinct address on a half's most loaded bank pair; 4-byte accesses
//! by the whole warp on 32 banks) reproduces round 28's Nsight Compute totals of forward 0
//! (BENCHMARKS.md, round 29). These are host checks of index logic; the GPU test of the kernels is
//! `iga_cuda`'s `gpu_tc_rows4_equal_the_default_bit_for_bit`.
mod iga_common;

/// One warp's shared access: each lane's address in units of its access size (`None`: inactive).
type Lanes = [Option<usize>; 32];

/// Wavefronts and the ideal count of one warp-wide shared access of `bytes` (4 or 8) a lane.
fn wavefronts(addr: &Lanes, bytes: usize) -> (usize, usize) {
    let (halves, pairs): (&[std::ops::Range<usize>], usize) = if bytes == 8 { (&[0..16, 16..32], 16) } else { (&[0..32], 32) };
    let (mut waves, mut ideal) = (0, 0);
    for h in halves {
        let mut distinct: Vec<usize> = addr[h.clone()].iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.is_empty() {
            continue;
        }
        let mut load = vec![0; pairs];
        for a in &distinct {
            load[a % pairs] += 1;
        }
        waves += load.into_iter().max().unwrap_or(0);
        ideal += (distinct.len() * bytes).div_ceil(128);
    }
    (waves, ideal)
}

/// Requests, wavefronts and ideal wavefronts of one class of accesses.
#[derive(Clone, Copy, Default, Debug)]
struct Tally {
    requests: usize,
    waves: usize,
    ideal: usize,
}

impl Tally {
    fn add(&mut self, addr: &Lanes, bytes: usize) {
        if addr.iter().all(Option::is_none) {
            return; // a branch no lane takes issues nothing
        }
        let (w, i) = wavefronts(addr, bytes);
        self.requests += 1;
        self.waves += w;
        self.ideal += i;
    }
    fn conflicts(&self) -> usize {
        self.waves - self.ideal
    }
}

/// The shared accesses of one chunk of `c` columns of `mf_mapssbtp_forward` (rows of `ld` doubles,
/// `alt`: `maps_tc_backward`'s accumulators in row-parity order) on a bottom subtree of `r` local
/// rows, `ne` eliminated, `nown` owned rows, 256 threads (8 warps; at 128 columns 2 threads a
/// column, a half of 16 columns a warp in the product); `first`: the subtree's first chunk (line sources and prefetched
/// indices stored), else the second (line sources read). Classes: 0 owned-row copies, 1 accumulator
/// loads, 2 B fragments, 3 A fragments, 4 contribution-row copies, 5 indices (pre, lines); stores 0
/// zeroed Schur rows, 1 results, 2 indices. Addresses in doubles from w (u32 index words apart).
/// `trim` (round 30, `MF_SEP_TRIM`): no zeroed Schur rows, no accumulator loads, the owned rows
/// staged from row max(ne, s).
#[allow(clippy::too_many_arguments)]
fn chunk(c: usize, r: usize, ne: usize, nown: usize, ld: usize, alt: bool, trim: bool, first: bool, loads: &mut [Tally; 6], stores: &mut [Tally; 3]) {
    let s = r - ne;
    let own_row = if trim { ne.max(s) } else { r };
    let lanes = |f: &dyn Fn(usize) -> Option<usize>| -> Lanes { std::array::from_fn(f) };
    // Line sources: lane k < ne + nown of warps 0, 1 (u32 words); pre[0] a broadcast per warp.
    let nl = ne + nown;
    for w in 0..nl.div_ceil(32) {
        let a = lanes(&|l| (32 * w + l < nl).then_some(32 * w + l));
        if first {
            stores[2].add(&a, 4);
        } else {
            loads[5].add(&a, 4);
        }
    }
    if first {
        stores[2].add(&lanes(&|l| (31 - l < nown).then_some(1000 + 31 - l)), 4);
        stores[2].add(&lanes(&|l| (l == 31).then_some(0)), 8);
    }
    // Zeroed Schur rows (the issue), a warp a row, lanes over columns.
    for i in if trim { ne..ne } else { ne..r } {
        for c0 in (0..c).step_by(32) {
            stores[0].add(&lanes(&|l| Some(i * ld + c0 + l)), 8);
        }
    }
    // Owned rows (staged at w rows r…) copied out: a warp a row; its place in sep from pre.
    for k in 0..nown {
        loads[5].add(&lanes(&|_| Some(0)), 4);
        for c0 in (0..c).step_by(32) {
            loads[0].add(&lanes(&|l| Some((own_row + k) * ld + c0 + l)), 8);
        }
    }
    // The product: a warp a half of 16 columns (16h…16h + 15); lane (g, t) = (l / 4, l % 4).
    let (g, t) = (|l: usize| l / 4, |l: usize| l % 4);
    for h in 0..c / 16 {
        let col0 = 16 * h;
        for ct in 0..2 {
            for eh in 0..2 {
                let row = |l: usize| g(l) + 8 * eh;
                for e in 0..2 {
                    // Column 2t + e, or with alt 2t + (g & 1 ^ e): the same two columns per lane.
                    let col = |l: usize| col0 + ct * 8 + 2 * t(l) + if alt { (g(l) & 1) ^ e } else { e };
                    loads[1].add(&lanes(&|l| (!trim && row(l) < s).then_some((ne + row(l)) * ld + col(l))), 8);
                }
            }
        }
        for k0 in (0..ne).step_by(4) {
            let k = |l: usize| k0 + t(l);
            for ct in 0..2 {
                loads[2].add(&lanes(&|l| (k(l) < ne).then_some(k(l) * ld + col0 + ct * 8 + g(l))), 8);
            }
            for half in 0..2 {
                loads[3].add(&lanes(&|l| (k(l) < ne).then_some(k(l) * 20 + g(l) + 8 * half)), 8);
            }
        }
        for ct in 0..2 {
            for eh in 0..2 {
                let row = |l: usize| g(l) + 8 * eh;
                for e in 0..2 {
                    let col = |l: usize| col0 + ct * 8 + 2 * t(l) + if alt { (g(l) & 1) ^ e } else { e };
                    stores[1].add(&lanes(&|l| (row(l) < s).then_some(row(l) * ld + col(l))), 8);
                }
            }
        }
    }
    // pre[0] (the root's slot) a warp, then the contribution rows to buf: a warp a row.
    for _ in 0..8 {
        loads[5].add(&lanes(&|_| Some(0)), 8);
    }
    for i in 0..s {
        for c0 in (0..c).step_by(32) {
            loads[4].add(&lanes(&|l| Some(i * ld + c0 + l)), 8);
        }
    }
}

/// Tallies of a pass's subtrees `(rows, eliminated, owned)` at chunks of `c` columns, 256 / c
/// chunks each (256 columns: two of 128, or four of 64 pipelined), rows of `c + pad` doubles.
fn tally_with(shapes: &[(usize, usize, usize)], c: usize, pad: usize, alt: bool, trim: bool) -> ([Tally; 6], [Tally; 3]) {
    let (mut loads, mut stores) = ([Tally::default(); 6], [Tally::default(); 3]);
    for &(r, ne, nown) in shapes {
        for k in 0..256 / c {
            chunk(c, r, ne, nown, c + pad, alt, trim, k == 0, &mut loads, &mut stores);
        }
    }
    (loads, stores)
}

fn tally(shapes: &[(usize, usize, usize)], c: usize, pad: usize, alt: bool) -> ([Tally; 6], [Tally; 3]) {
    tally_with(shapes, c, pad, alt, false)
}

/// Round 30's trim removes exactly the zeroed Schur rows' stores and the accumulator loads, and
/// keeps every other access (and its conflicts) as it was; the owned rows' copies stay whole lines.
#[test]
fn trimmed_forward_drops_the_zeroed_rows_and_accumulator_loads_only() {
    for (c, pad, alt) in [(128, 2, false), (128, 4, true), (64, 2, false), (64, 4, true)] {
        for (r, ne, nown) in [(35, 29, 3), (38, 32, 0), (35, 32, 3), (6, 2, 1), (20, 4, 2)] {
            let (l0, s0) = tally_with(&[(r, ne, nown)], c, pad, alt, false);
            let (l1, s1) = tally_with(&[(r, ne, nown)], c, pad, alt, true);
            let what = format!("C = {c}, rows of C + {pad}, ({r}, {ne}, {nown})");
            assert_eq!((l1[1].requests, s1[0].requests), (0, 0), "{what}: trimmed still loads accumulators or zeroes rows");
            assert_eq!(s0[0].requests, (r - ne) * c / 32 * (256 / c), "{what}: the default's zeroed rows");
            for k in [0, 2, 3, 4, 5] {
                assert_eq!((l1[k].requests, l1[k].waves), (l0[k].requests, l0[k].waves), "{what}: load class {k} changed");
            }
            for k in [1, 2] {
                assert_eq!((s1[k].requests, s1[k].waves), (s0[k].requests, s0[k].waves), "{what}: store class {k} changed");
            }
            assert_eq!(l1[0].conflicts(), 0, "{what}: the owned rows' copies conflict");
        }
    }
}

/// With rows of `C + 4` (C a multiple of 32) and the accumulators in row-parity order, every
/// accumulator load, B fragment and result store of the tensor-core forward is conflict-free for
/// any count of Schur rows up to 16 and eliminated rows up to 48; with `C + 2` the B fragments and
/// the accumulators conflict (4 and 6 wavefronts against 2 at 6 Schur rows) — the rows the model
/// claims (a changed index pattern fails here).
#[test]
fn tensor_core_forward_accesses_conflict_free_with_rows_of_c_plus_4() {
    for c in [32, 64, 128, 256] {
        for s in 1..=16 {
            for ne in [1, 4, 21, 32, 45] {
                let (loads, stores) = tally(&[(ne + s, ne, 0)], c, 4, true);
                for (what, t) in [("accumulator loads", loads[1]), ("B fragments", loads[2]), ("A fragments", loads[3]), ("result stores", stores[1])] {
                    assert_eq!(t.conflicts(), 0, "{what} conflict at C = {c}, {s} Schur rows, {ne} eliminated (rows of C + 4): {t:?}");
                }
            }
        }
    }
    let (loads, stores) = tally(&[(38, 32, 0)], 128, 2, false);
    // 2 chunks × 8 warps × (2 × 2 accumulator loads, 8 × 2 B fragments, 4 result stores).
    assert_eq!((loads[1].requests, loads[1].waves), (64, 64 * 6));
    assert_eq!((loads[2].requests, loads[2].waves), (256, 256 * 4));
    assert_eq!((stores[1].requests, stores[1].waves), (64, 64 * 6));
    assert_eq!(loads[3].conflicts(), 0);
    // Without the parity order rows of C + 4 still leave the accumulators 2-way (4 against 2).
    let (loads, stores) = tally(&[(38, 32, 0)], 128, 4, false);
    assert_eq!((loads[2].conflicts(), loads[1].waves, stores[1].waves), (0, 64 * 4, 64 * 4));
}

/// The 2^20 cubic plan's bottom pass (forward 0 at 256 columns: 32 768 subtrees, two 128-column
/// chunks each): shared requests, wavefronts and conflicts a chunk by class, rows of `C + 2` (the
/// default) against `C + 4` with the parity order, beside round 28's profile of forward 0.
#[test]
#[ignore]
fn bank_counts_of_forward_0_of_issue_15() {
    let (_, _, sp) = iga_common::issue15_plan();
    let p = &sp.passes[0];
    let shapes: Vec<_> = (0..p.len()).map(|j| ((p.row_ptr[j + 1] - p.row_ptr[j]) as usize, p.elim[j] as usize, (sp.own_ptr[j + 1] - sp.own_ptr[j]) as usize)).collect();
    let mut hist = std::collections::BTreeMap::new();
    for s in &shapes {
        *hist.entry(s).or_insert(0usize) += 1;
    }
    eprintln!("pass 0: {} subtrees; (rows, eliminated, owned): count {hist:?}; p.rows {}", shapes.len(), p.max_rows);
    let chunks = 2.0 * shapes.len() as f64;
    eprintln!("profile (round 28, lead-r28-2026-12-05-check-ncu.txt) a chunk: loads 335.5 requests, 383.4 conflicts, 1010.9 wavefronts; stores 57.5 requests, 147.3 conflicts, 260.8 wavefronts");
    let trim_rows = sp.trim_rows(0);
    eprintln!("trimmed rows (round 30, max(ne, s) + owned): {trim_rows}; untrimmed {}", sp.max_rows0);
    // Shared memory a block at 256 columns (prefetched words, map of 32 × 20, rows) and blocks an SM (233 472 B, 1 040 reserved + static).
    let block = |rows: usize, c: usize, pad: usize, bufs: usize| 8 * ((rows + 2) / 2 * 2 + 640 + bufs * rows * (c + pad));
    for (name, rows, c, pad, bufs) in [
        ("default", sp.max_rows0, 128, 2, 1),
        ("-ld4", sp.max_rows0, 128, 4, 1),
        ("-zs", trim_rows, 128, 2, 1),
        ("-ld4-zs", trim_rows, 128, 4, 1),
        ("-p64", sp.max_rows0, 64, 2, 2),
        ("-ld4-p64 (C + 4, not built)", sp.max_rows0, 64, 4, 2),
        ("-p64-zs", trim_rows, 64, 2, 2),
        ("-ld4-p64-zs", trim_rows, 64, 4, 2),
    ] {
        let b = block(rows, c, pad, bufs);
        eprintln!("smem {name}: {b} B a block, {} blocks an SM by shared memory", 233_472 / (b + 1040));
    }
    for (name, c, pad, alt, trim) in [
        ("C + 2 (default)", 128, 2, false, false),
        ("C + 4, parity order (-ld4)", 128, 4, true, false),
        ("C + 2, trimmed (-zs)", 128, 2, false, true),
        ("C + 4, parity, trimmed (-ld4-zs)", 128, 4, true, true),
        ("64 columns, C + 2 (-p64)", 64, 2, false, false),
        ("64 columns, C + 2, trimmed (-p64-zs)", 64, 2, false, true),
        ("64 columns, C + 4, parity, trimmed (-ld4-p64-zs)", 64, 4, true, true),
    ] {
        let (loads, stores) = tally_with(&shapes, c, pad, alt, trim);
        let sub = |ts: &[Tally]| ts.iter().map(|t| (t.requests, t.waves)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let (lr, lw) = sub(&loads);
        let (sr, sw) = sub(&stores);
        eprintln!("{name}: a subtree (256 columns) loads {:.1} requests / {:.1} wavefronts, stores {:.1} / {:.1}", lr as f64 / shapes.len() as f64, lw as f64 / shapes.len() as f64, sr as f64 / shapes.len() as f64, sw as f64 / shapes.len() as f64);
    }
    for (name, pad, alt) in [("C + 2 (default)", 2, false), ("C + 4", 4, false), ("C + 4, parity order (-ld4)", 4, true)] {
        let (loads, stores) = tally(&shapes, 128, pad, alt);
        let line = |ts: &[Tally], names: &[&str]| {
            let all = ts.iter().fold(Tally::default(), |a, t| Tally { requests: a.requests + t.requests, waves: a.waves + t.waves, ideal: a.ideal + t.ideal });
            let parts: Vec<_> = ts.iter().zip(names).map(|(t, n)| format!("{n} {:.1}/{:.1}", t.requests as f64 / chunks, t.conflicts() as f64 / chunks)).collect();
            format!("{:.1} requests, {:.1} conflicts, {:.1} wavefronts [{}]", all.requests as f64 / chunks, all.conflicts() as f64 / chunks, all.waves as f64 / chunks, parts.join(", "))
        };
        eprintln!("{name}: loads {}", line(&loads, &["owned", "accumulators", "B", "A", "contribution rows", "indices"]));
        eprintln!("{name}: stores {}", line(&stores, &["zeroed rows", "results", "indices"]));
    }
}
