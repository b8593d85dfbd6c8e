//! The multifrontal solver on the GPU equals faer's sparse LU (and the CPU multifrontal) to
//! round-off: 1D and 2D, symmetric and not, warp-, block- and library-sized fronts, one and many
//! right-hand sides; singular matrices are errors; launches grow like the tree depth. Skips without
//! a GPU (fails with GALERKIN_REQUIRE_GPU=1).
mod iga_common;

use galerkin::backend::cuda::test_gpu;
use galerkin::solver::multifrontal::cuda::{LaunchProfile, MapsKernel, RowsBottom, SepLines, SolvePath, SubtreeShape, BLOCK_MAX, DEFAULT_COLUMNS_SEP_LINES, DEFAULT_COLUMN_THREADS, DEFAULT_ROWS_SEP_LINES, MAPS_MIN_RHS, TC_FEW_SUBTREES};
use galerkin::solver::multifrontal::CudaMultifrontal;
use galerkin::backend::Backend;
use galerkin::iga::{self, seed, Space1d};
use galerkin::solver::Factorization;
use iga_common::{assert_equals_faer, check_against_faer, large_front_cases, right_hand_sides, small_cases};
use std::sync::Arc;

#[test]
fn gpu_multifrontal_equals_faer_lu() {
    let Some(be) = test_gpu() else { return };
    for case in small_cases() {
        let f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for nrhs in [1, 5, 33] {
            check_against_faer(&be, &f, &case, nrhs);
        }
        // With the transfer maps computed, the default solves every number of columns by them.
        f.prepare_maps(&be).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for nrhs in [1, 5] {
            check_against_faer(&be, &f, &case, nrhs);
        }
    }
}

/// The three solves (level by level, fused subtrees, their transfer maps) equal faer's LU for one
/// and many right-hand sides (chunks of 32 and 64 columns, a partial last chunk), with fronts small
/// and large (subtrees below, library-sized fronts above them).
#[test]
fn gpu_fused_subtree_and_level_solves_equal_faer_lu() {
    let Some(be) = test_gpu() else { return };
    let mut fused = 0;
    for case in small_cases().into_iter().chain(large_front_cases()) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        fused += usize::from(f.subtree_passes() > 0);
        for path in [SolvePath::Subtrees, SolvePath::Maps, SolvePath::Levels] {
            f.set_solve_path(path);
            for nrhs in [1, 3, 70] {
                check_against_faer(&be, &f, &case, nrhs);
            }
        }
    }
    assert!(fused > 10, "only {fused} cases have fused subtrees");
}

/// Every block shape of the fused kernels (1 and 2 right-hand sides per thread, blocks of 64 to
/// 256 columns) equals faer's LU, with partial chunks (70 of 64, 96, 128 or 256 columns, 3 of
/// 256); passes with eliminated blocks above 8 rows fall back to one column per thread. The
/// transfer maps' kernels (one column per thread) run with each shape's threads (32 to 256 columns
/// per block). Shapes without a kernel are errors.
#[test]
fn gpu_fused_subtree_shapes_equal_faer_lu() {
    let Some(be) = test_gpu() else { return };
    let shapes = [(32, 2), (64, 2), (96, 1), (128, 1), (256, 1)];
    for case in small_cases().into_iter().chain(large_front_cases()) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for (threads, cols) in shapes {
            f.set_subtree_shape(Some(SubtreeShape { threads, cols })).unwrap();
            for path in [SolvePath::Subtrees, SolvePath::Maps] {
                f.set_solve_path(path);
                for nrhs in [3, 70] {
                    check_against_faer(&be, &f, &case, nrhs);
                }
            }
        }
    }
    let case = small_cases().into_iter().next().unwrap();
    let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    for (threads, cols) in [(64, 3), (48, 1), (32, 4), (0, 1), (512, 1)] {
        assert!(f.set_subtree_shape(Some(SubtreeShape { threads, cols })).is_err(), "{threads} × {cols} accepted");
    }
}

/// The transfer maps' pipelined kernels, their tensor-core kernels and their block-per-subtree
/// kernels equal faer's LU for 1, 3, 70 and 256 right-hand sides, with chunks of 32
/// to 256 columns (tensor cores: 1 to 8 warps of 32 columns, partial and empty column tiles,
/// subtrees with fewer eliminated rows than their pass's largest, a chunk per block or 1 and 3
/// column blocks walking all chunks), and with the grid capped at 1, 3 or 5 blocks so that each
/// block walks many (subtree, chunk) items: subtree changes inside a block's range, partial last
/// chunks, both halves of the double buffer; the separator-row kernels also with every chunk its
/// own block (`set_split_columns`: the subtree and chunk of a block from its linear index) and
/// pipelined on every pass (`set_pipe_separators`: 1, 3, 5 or all resident blocks walking items),
/// and with 2 or 4 threads per column (`set_column_threads`: the products shared out over more
/// warps than 32-column groups, a column's forward rows over its threads).
#[test]
fn gpu_transfer_map_kernels_equal_faer_lu() {
    let Some(be) = test_gpu() else { return };
    let configs = [
        (MapsKernel::Blocks, None, None, false, None, 1),
        (MapsKernel::Pipelined, None, None, false, None, 1),
        (MapsKernel::Pipelined, Some(32), Some(1), false, None, 1),
        (MapsKernel::Pipelined, Some(64), Some(5), false, None, 1),
        (MapsKernel::Pipelined, Some(128), Some(3), false, None, 1),
        (MapsKernel::Pipelined, Some(256), None, false, None, 1),
        (MapsKernel::Tensor, None, None, false, None, 1),
        (MapsKernel::Tensor, Some(32), Some(1), false, None, 1),
        (MapsKernel::Tensor, Some(64), Some(3), false, None, 1),
        (MapsKernel::Tensor, Some(256), None, false, None, 1),
        (MapsKernel::Separators, None, None, false, None, 1),
        (MapsKernel::Separators, Some(32), Some(1), false, None, 1),
        (MapsKernel::Separators, Some(64), Some(3), false, None, 1),
        (MapsKernel::Separators, Some(256), None, false, None, 1),
        (MapsKernel::SeparatorsTop, None, None, false, None, 1),
        (MapsKernel::SeparatorsTop, Some(64), Some(3), false, None, 1),
        (MapsKernel::Separators, None, None, true, None, 1),
        (MapsKernel::Separators, Some(32), None, true, None, 1),
        (MapsKernel::Separators, Some(64), None, true, None, 1),
        (MapsKernel::Separators, None, None, false, Some(0), 1),
        (MapsKernel::Separators, Some(32), Some(1), false, Some(0), 1),
        (MapsKernel::Separators, Some(64), Some(5), false, Some(0), 1),
        (MapsKernel::Separators, Some(128), Some(3), false, Some(0), 1),
        (MapsKernel::Separators, Some(256), None, false, Some(0), 1),
        (MapsKernel::Separators, None, None, false, None, 2),
        (MapsKernel::Separators, Some(64), Some(3), false, None, 4),
        (MapsKernel::Separators, Some(256), None, false, None, 4),
        (MapsKernel::Separators, Some(32), None, true, None, 2),
        (MapsKernel::Separators, Some(64), Some(5), false, Some(0), 2),
        (MapsKernel::Separators, Some(128), None, false, Some(0), 4),
    ];
    let mut separators = 0;
    let mut streamed = 0;
    let mut leaned = 0;
    let mut fused = 0;
    for case in small_cases().into_iter().chain(large_front_cases()) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        if f.subtree_passes() == 0 {
            continue;
        }
        fused += 1;
        separators += usize::from(f.has_separator_layout() && f.has_top_walk());
        f.set_solve_path(SolvePath::Maps);
        for (kernel, threads, blocks, split, pipe, column_threads) in configs {
            f.set_maps_kernel(Some(kernel));
            f.set_column_threads(column_threads).unwrap();
            f.set_split_columns(split);
            f.set_pipe_separators(pipe);
            f.set_subtree_shape(threads.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
            f.set_pipe_blocks(blocks).unwrap();
            for nrhs in [1, 3, 70, 256] {
                check_against_faer(&be, &f, &case, nrhs);
            }
        }
        f.set_split_columns(false);
        f.set_pipe_separators(None);
        f.set_column_threads(1).unwrap();
        f.set_pipe_blocks(None).unwrap();
        // The bottom pass through registers (tiles of 8 columns, partial at 3 and 70).
        f.set_maps_kernel(Some(MapsKernel::Separators));
        f.set_subtree_shape(None).unwrap();
        f.set_stream_bottom(true);
        streamed += usize::from(f.streams_bottom());
        for nrhs in [1, 3, 70, 256] {
            check_against_faer(&be, &f, &case, nrhs);
        }
        f.set_stream_bottom(false);
        // The bottom passes by warps (tiles of 8 columns; forward items of 32: partial at 1, 3
        // and 70, 8 per subtree at 256; backward 4 warps walking 1 to 32 tiles).
        f.set_lean_forward(true);
        f.set_lean_backward(true);
        leaned += usize::from(f.leans_forward() && f.leans_backward());
        for nrhs in [1, 3, 70, 256] {
            check_against_faer(&be, &f, &case, nrhs);
        }
        f.set_lean_forward(false);
        f.set_lean_backward(false);
        assert!(f.set_pipe_blocks(Some(0)).is_err());
        assert!(f.set_column_threads(0).is_err() && f.set_column_threads(5).is_err());
    }
    assert!(fused > 10, "only {fused} cases have fused subtrees");
    assert!(separators > 5, "only {separators} cases have the separator layout");
    assert!(streamed > 5, "only {streamed} cases stream the bottom pass");
    assert!(leaned >= 2, "only {leaned} cases run the bottom passes by warps");
}

#[test]
fn gpu_multifrontal_large_fronts_use_the_libraries() {
    let Some(be) = test_gpu() else { return };
    let cases = large_front_cases();
    assert!(cases.iter().any(|c| c.sym.max_front() > BLOCK_MAX), "no front needs cuSOLVER");
    for case in cases {
        let f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        check_against_faer(&be, &f, &case, 1);
        check_against_faer(&be, &f, &case, 19);
    }
}

/// 4096 cubic elements of the seed problem (several fused passes, the separator layout): the
/// system, its CPU and GPU multifrontal factorizations.
fn cubic_4096(be: &galerkin::backend::cuda::CudaBackend) -> (galerkin::iga::ElementSystem, galerkin::solver::multifrontal::CpuMultifrontal, CudaMultifrontal) {
    let space = Space1d::uniform(3, 4096, 0.0, 1.0).unwrap();
    let sys = seed::problem().assemble(&space, 4).unwrap();
    let sym = Arc::new(iga::symbolic_1d(&space).unwrap());
    let cpu = galerkin::solver::multifrontal::CpuMultifrontal::factor(sym.clone(), &sys.matrices).unwrap();
    let gpu = CudaMultifrontal::factor(be, sym, &sys.matrices).unwrap();
    (sys, cpu, gpu)
}

/// The GPU's solutions `xg` equal the CPU's `xc`: random right-hand sides on 4096 cubic elements,
/// whose condition number (~1e7) scales the round-off difference between two backward-stable
/// solves (H100: 4.9e-10 relative).
fn assert_equals_cpu(xc: &[f64], xg: &[f64], what: &str) {
    let scale = xc.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = xc.iter().zip(xg).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff < 1e-8 * scale, "{what}: GPU vs CPU {diff:.3e} (scale {scale:.3e})");
}

#[test]
fn gpu_and_cpu_multifrontal_agree_on_many_right_hand_sides_and_refactor() {
    let Some(be) = test_gpu() else { return };
    let (sys, cpu, mut gpu) = cubic_4096(&be);
    let nrhs = 256;
    let b = right_hand_sides(&sys, nrhs);
    let mut xc = vec![0.0; b.len()];
    cpu.solve_into(nrhs, &b, &mut xc).unwrap();
    assert!(gpu.has_separator_layout() && gpu.has_top_walk(), "4096 cubic elements: no separator layout or walk");
    for round in 0..12 {
        let bd = be.from_host(&b).unwrap();
        let mut xd = be.zeros(b.len()).unwrap();
        // Round 0: the default (transfer maps for this many columns, computed after the
        // factorization); round 1: level by level; round 2: fused subtrees, 2 columns per thread,
        // blocks of 128; round 3: transfer maps again (recomputed after the refactorizations),
        // block-per-subtree kernels, blocks of 256 columns; round 4: the pipelined map kernels
        // with 7 blocks (each walks ~150 items of 32 columns); round 5: the tensor-core map kernels;
        // round 6: the same through compact separator rows; round 7: with the passes near the root
        // walked by one launch; round 8: separator rows with the bottom pass through registers;
        // round 9: separator rows pipelined on every pass, 7 blocks walking the items; round 10:
        // separator rows with 1 thread per column (rounds 0 and 6–9: the default, 2); round 11:
        // separator rows with the bottom passes by warps.
        gpu.set_solve_path([SolvePath::Auto, SolvePath::Levels, SolvePath::Subtrees, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps, SolvePath::Maps][round]);
        let shape = [None, None, Some(SubtreeShape { threads: 64, cols: 2 }), Some(SubtreeShape { threads: 256, cols: 1 }), Some(SubtreeShape { threads: 32, cols: 1 }), None, None, None, None, None, None, None][round];
        gpu.set_subtree_shape(shape).unwrap();
        gpu.set_maps_kernel([None, None, None, Some(MapsKernel::Blocks), Some(MapsKernel::Pipelined), Some(MapsKernel::Tensor), Some(MapsKernel::Separators), Some(MapsKernel::SeparatorsTop), Some(MapsKernel::Separators), Some(MapsKernel::Separators), Some(MapsKernel::Separators), Some(MapsKernel::Separators)][round]);
        gpu.set_pipe_blocks([None, None, None, None, Some(7), None, None, None, None, Some(7), None, None][round]).unwrap();
        gpu.set_pipe_separators((round == 9).then_some(0));
        gpu.set_column_threads(if round == 10 { 1 } else { DEFAULT_COLUMN_THREADS }).unwrap();
        gpu.set_stream_bottom(round == 8);
        assert!(round != 8 || gpu.streams_bottom(), "4096 cubic elements: the bottom pass does not stream");
        gpu.set_lean_forward(round == 11);
        gpu.set_lean_backward(round == 11);
        assert!(round != 11 || (gpu.leans_forward() && gpu.leans_backward()), "4096 cubic elements: the bottom passes do not run by warps");
        gpu.solve_many(&be, nrhs, &bd, &mut xd).unwrap();
        let xg = be.to_host(&xd).unwrap();
        assert_equals_cpu(&xc, &xg, &format!("round {round}"));
        gpu.refactor(&be).unwrap();
    }
}

/// The default engine's kernels, so that a change of them is no silent one (BENCHMARKS.md, round
/// 12): on a fresh factorization one column is solved level by level (no fused launch); once
/// [`MAPS_MIN_RHS`] columns have been solved in all, the transfer maps are computed and every
/// solve — one column included — runs the separator-row kernels (`mf_mapss_*`) with
/// [`DEFAULT_COLUMN_THREADS`] threads per column (32-column blocks at 1 and 16 columns); a
/// refactorization makes the maps stale again. Every solve equals the CPU twin's.
#[test]
fn gpu_default_engine_takes_the_separator_rows_with_two_threads_per_column() {
    let Some(be) = test_gpu() else { return };
    let (sys, cpu, mut gpu) = cubic_4096(&be);
    assert!(gpu.has_separator_layout(), "4096 cubic elements: no separator layout");
    assert_eq!(DEFAULT_COLUMN_THREADS, 2);
    // One solve of `nrhs` columns by the default engine: its fused launches (kernel, threads),
    // the solution checked against the CPU's.
    let solve = |gpu: &CudaMultifrontal, nrhs: usize| -> Vec<(String, u32)> {
        let b = right_hand_sides(&sys, nrhs);
        let mut xc = vec![0.0; b.len()];
        cpu.solve_into(nrhs, &b, &mut xc).unwrap();
        let bd = be.from_host(&b).unwrap();
        let mut xd = be.zeros(b.len()).unwrap();
        let launches = gpu.solve_profile(&be, nrhs, &bd, &mut xd).unwrap();
        let xg = be.to_host(&xd).unwrap();
        assert_equals_cpu(&xc, &xg, &format!("{nrhs} columns"));
        launches.into_iter().map(|l| (l.kernel, l.threads)).collect()
    };
    let separator_rows = |launches: &[(String, u32)], threads: u32| {
        assert!(!launches.is_empty());
        for (k, t) in launches {
            assert!(k.starts_with("mf_mapss_forward") || k.starts_with("mf_mapss_backward_"), "default engine ran {k}");
            assert_eq!(*t, threads, "{k}: {t} threads per block");
        }
    };
    for round in 0..2 {
        // A fresh factorization: one column level by level, the maps not computed.
        assert!(solve(&gpu, 1).is_empty(), "round {round}: one column ran fused launches on a fresh factorization");
        assert!(!gpu.has_fresh_maps());
        // MAPS_MIN_RHS columns in all: the maps, through the separator rows.
        separator_rows(&solve(&gpu, MAPS_MIN_RHS - 1), 32 * DEFAULT_COLUMN_THREADS as u32);
        assert!(gpu.has_fresh_maps());
        separator_rows(&solve(&gpu, 1), 32 * DEFAULT_COLUMN_THREADS as u32);
        separator_rows(&solve(&gpu, 16), 32 * DEFAULT_COLUMN_THREADS as u32);
        let wide = solve(&gpu, 256);
        assert!(wide.iter().all(|(k, t)| k.starts_with("mf_mapss_") && *t >= 64 && *t % 64 == 0), "256 columns: {wide:?}");
        gpu.refactor(&be).unwrap();
    }
}

/// The factorization with the forward pass inside its launches (`factor_and_solve`) equals faer's
/// LU for 1, 3, 70 and 256 right-hand sides, from scratch (factor storage never written before)
/// and as a refactorization; the factorization and transfer maps it leaves solve later right-hand
/// sides; on 4096 cubic elements (several passes) it equals the CPU's fused twin; a singular matrix
/// is an error naming a dof.
#[test]
fn gpu_factor_and_solve_equals_faer_lu_and_keeps_the_factorization() {
    let Some(be) = test_gpu() else { return };
    let mut fused = 0;
    for case in small_cases().into_iter().chain(large_front_cases()) {
        let n = case.sys.ndofs;
        for nrhs in [1, 3, 70, 256] {
            let bd = be.from_host(&right_hand_sides(&case.sys, nrhs)).unwrap();
            let mut xd = be.zeros(n * nrhs).unwrap();
            let mut f = CudaMultifrontal::factor_and_solve_new(&be, Arc::new(case.sym.clone()), &case.sys.matrices, nrhs, &bd, &mut xd).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            assert_equals_faer(&case, nrhs, &be.to_host(&xd).unwrap(), "the GPU, fused from scratch");
            fused += usize::from(f.fuses_factor_and_forward());
            let mut xd = be.zeros(n * nrhs).unwrap();
            f.factor_and_solve(&be, nrhs, &bd, &mut xd).unwrap();
            assert_equals_faer(&case, nrhs, &be.to_host(&xd).unwrap(), "the GPU, fused refactorization");
            for path in [SolvePath::Auto, SolvePath::Levels] {
                f.set_solve_path(path);
                check_against_faer(&be, &f, &case, 5);
            }
        }
    }
    assert!(fused > 40, "only {fused} fused runs");
    let space = Space1d::uniform(3, 4096, 0.0, 1.0).unwrap();
    let sys = seed::problem().assemble(&space, 4).unwrap();
    let sym = Arc::new(iga::symbolic_1d(&space).unwrap());
    let nrhs = 256;
    let b = right_hand_sides(&sys, nrhs);
    let mut xc = vec![0.0; b.len()];
    galerkin::solver::multifrontal::CpuMultifrontal::factor_and_solve_new(sym.clone(), &sys.matrices, nrhs, &b, &mut xc).unwrap();
    let bd = be.from_host(&b).unwrap();
    let mut xd = be.zeros(b.len()).unwrap();
    let gpu = CudaMultifrontal::factor_and_solve_new(&be, sym, &sys.matrices, nrhs, &bd, &mut xd).unwrap();
    assert!(gpu.fuses_factor_and_forward() && gpu.subtree_passes() >= 3, "4096 cubic elements: {} passes", gpu.subtree_passes());
    let xg = be.to_host(&xd).unwrap();
    let scale = xc.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = xc.iter().zip(&xg).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff < 1e-8 * scale, "fused GPU vs fused CPU {diff:.3e} (scale {scale:.3e})");
    let mut case = small_cases().into_iter().find(|c| c.name == "seed p=3 N=64").unwrap();
    case.sys.matrices.iter_mut().for_each(|v| *v = 0.0);
    let n = case.sys.ndofs;
    let bd = be.from_host(&vec![1.0; n]).unwrap();
    let mut xd = be.zeros(n).unwrap();
    let e = CudaMultifrontal::factor_and_solve_new(&be, Arc::new(case.sym.clone()), &case.sys.matrices, 1, &bd, &mut xd).err().unwrap().to_string();
    assert!(e.contains("singular") && e.contains("dof"), "{e}");
}

/// The factorization with each pass's maps and forward sweep on a second stream beside it
/// (`factor_and_solve_overlap`) equals faer's LU for 1, 16 and 256 right-hand sides, from scratch
/// and as a refactorization (the two maps apart on streams of three priorities, the default, and
/// both in one launch on streams of one priority), on every small and large-front case (those without a separator-row
/// layout factorize, then solve) and on 1D cubic and quartic systems of 2048 elements and several
/// passes (the cubic one overlapped: asserted); the factorization and maps it leaves solve later right-hand
/// sides; on 4096 cubic elements it equals the CPU's fused twin (also with the timeline's events); a
/// singular matrix is an error naming a dof and leaves the GPU usable (no fault from the maps and
/// forward sweep that ran beside the failed factorization).
#[test]
fn gpu_overlapped_factor_and_solve_equals_faer_lu_and_keeps_the_factorization() {
    let Some(be) = test_gpu() else { return };
    let big = |p: usize| {
        let space = Space1d::uniform(p, 2048, 0.0, 1.0).unwrap();
        let sys = seed::problem().assemble(&space, p + 1).unwrap();
        iga_common::Case { name: format!("seed p={p} N=2048"), sym: iga::symbolic_1d(&space).unwrap(), sys }
    };
    let mut overlapped = 0;
    for case in small_cases().into_iter().chain(large_front_cases()).chain([big(3), big(4)]) {
        let n = case.sys.ndofs;
        for nrhs in [1, 16, 256] {
            let bd = be.from_host(&right_hand_sides(&case.sys, nrhs)).unwrap();
            let mut xd = be.zeros(n * nrhs).unwrap();
            let mut f = CudaMultifrontal::factor_and_solve_overlap_new(&be, Arc::new(case.sym.clone()), &case.sys.matrices, nrhs, &bd, &mut xd).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            assert_equals_faer(&case, nrhs, &be.to_host(&xd).unwrap(), "the GPU, overlapped from scratch");
            if case.name == "seed p=3 N=2048" {
                assert!(f.overlaps_forward() && f.subtree_passes() >= 3, "{}: {} passes, overlapped {}", case.name, f.subtree_passes(), f.overlaps_forward());
            }
            overlapped += usize::from(f.overlaps_forward());
            let mut xd = be.zeros(n * nrhs).unwrap();
            f.factor_and_solve_overlap(&be, nrhs, &bd, &mut xd).unwrap();
            assert_equals_faer(&case, nrhs, &be.to_host(&xd).unwrap(), "the GPU, overlapped refactorization");
            f.set_overlap_split_maps(false);
            f.set_overlap_priorities(false);
            let mut xd = be.zeros(n * nrhs).unwrap();
            f.factor_and_solve_overlap(&be, nrhs, &bd, &mut xd).unwrap();
            assert_equals_faer(&case, nrhs, &be.to_host(&xd).unwrap(), "the GPU, overlapped with both maps in one launch, streams of one priority");
            assert!(!f.overlaps_forward() || f.has_fresh_maps(), "{}: maps left stale", case.name);
            for path in [SolvePath::Auto, SolvePath::Levels] {
                f.set_solve_path(path);
                check_against_faer(&be, &f, &case, 5);
            }
        }
    }
    assert!(overlapped >= 3, "only {overlapped} overlapped runs");
    let space = Space1d::uniform(3, 4096, 0.0, 1.0).unwrap();
    let sys = seed::problem().assemble(&space, 4).unwrap();
    let sym = Arc::new(iga::symbolic_1d(&space).unwrap());
    for nrhs in [1, 16, 256] {
        let b = right_hand_sides(&sys, nrhs);
        let mut xc = vec![0.0; b.len()];
        galerkin::solver::multifrontal::CpuMultifrontal::factor_and_solve_new(sym.clone(), &sys.matrices, nrhs, &b, &mut xc).unwrap();
        let bd = be.from_host(&b).unwrap();
        let mut xd = be.zeros(b.len()).unwrap();
        let mut gpu = CudaMultifrontal::factor_and_solve_overlap_new(&be, sym.clone(), &sys.matrices, nrhs, &bd, &mut xd).unwrap();
        assert!(gpu.overlaps_forward(), "4096 cubic elements: not overlapped");
        assert_equals_cpu(&xc, &be.to_host(&xd).unwrap(), &format!("overlapped, {nrhs} columns"));
        let spans = gpu.factor_and_solve_overlap_timeline(&be, nrhs, &bd, &mut xd).unwrap();
        assert!(spans.iter().filter(|s| s.stream == 2 && s.label.starts_with("forward")).count() == gpu.subtree_passes(), "{spans:?}");
        assert_equals_cpu(&xc, &be.to_host(&xd).unwrap(), &format!("overlapped with the timeline, {nrhs} columns"));
    }
    let mut case = small_cases().into_iter().find(|c| c.name == "seed p=3 N=64").unwrap();
    let good = case.sys.matrices.clone();
    case.sys.matrices.iter_mut().for_each(|v| *v = 0.0);
    let n = case.sys.ndofs;
    let bd = be.from_host(&vec![1.0; n]).unwrap();
    let mut xd = be.zeros(n).unwrap();
    let e = CudaMultifrontal::factor_and_solve_overlap_new(&be, Arc::new(case.sym.clone()), &case.sys.matrices, 1, &bd, &mut xd).err().unwrap().to_string();
    assert!(e.contains("singular") && e.contains("dof"), "{e}");
    case.sys.matrices = good;
    let bd = be.from_host(&right_hand_sides(&case.sys, 1)).unwrap();
    CudaMultifrontal::factor_and_solve_overlap_new(&be, Arc::new(case.sym.clone()), &case.sys.matrices, 1, &bd, &mut xd).unwrap();
    assert_equals_faer(&case, 1, &be.to_host(&xd).unwrap(), "the GPU, overlapped after a singular matrix");
}

#[test]
fn gpu_launches_grow_like_the_tree_depth() {
    let Some(be) = test_gpu() else { return };
    let mut counts = Vec::new();
    for n in [1usize << 10, 1 << 14] {
        let space = Space1d::uniform(3, n, 0.0, 1.0).unwrap();
        let sys = seed::problem().assemble(&space, 4).unwrap();
        let f = CudaMultifrontal::factor(&be, Arc::new(iga::symbolic_1d(&space).unwrap()), &sys.matrices).unwrap();
        counts.push((f.symbolic().levels.len(), f.launches()));
    }
    let ((l0, (f0, s0)), (l1, (f1, s1))) = (counts[0], counts[1]);
    assert_eq!(l1 - l0, 4, "16x the elements adds 4 tree levels");
    assert!(f1 - f0 <= 8 && s1 - s0 <= 16, "launches {counts:?}");
}

#[test]
fn gpu_singular_matrix_is_an_error_naming_a_dof() {
    let Some(be) = test_gpu() else { return };
    let mut case = small_cases().into_iter().find(|c| c.name == "seed p=3 N=64").unwrap();
    case.sys.matrices.iter_mut().for_each(|v| *v = 0.0);
    let e = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).err().unwrap().to_string();
    assert!(e.contains("singular") && e.contains("dof"), "{e}");
    let mut big = large_front_cases().pop().unwrap();
    // With library-sized fronts too: the first zero pivot (kernel flag or cuSOLVER's info) is named.
    big.sys.matrices.iter_mut().for_each(|v| *v = 0.0);
    let e = CudaMultifrontal::factor(&be, Arc::new(big.sym.clone()), &big.sys.matrices).err().unwrap().to_string();
    assert!(e.contains("singular"), "{e}");
}

#[test]
fn iga_examples_agree_between_cpu_and_gpu() {
    use galerkin::iga::config::IgaSetup;
    use galerkin::problem::config::BackendKind;
    use galerkin::problem::RunOptions;
    let Some(_be) = test_gpu() else { return };
    let dir = ["examples", "../../examples"].iter().map(std::path::Path::new).find(|d| d.join("iga-seed-benchmark.toml").exists()).expect("examples folder");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_str().unwrap().starts_with("iga-") {
            continue;
        }
        let setup = IgaSetup::parse(&std::fs::read_to_string(&path).unwrap(), &path.display().to_string()).unwrap();
        let out = tempfile::tempdir().unwrap();
        let run = |b| galerkin::iga::run::run(&setup, &RunOptions { backend: Some(b), out_dir: out.path().to_path_buf(), progress: false }).unwrap();
        let (cpu, gpu) = (run(BackendKind::Cpu), run(BackendKind::Cuda));
        assert!(gpu.backend.starts_with("cuda"), "{}", gpu.backend);
        assert!(gpu.solver.relative_residual < 1e-12, "{}: GPU residual {}", path.display(), gpu.solver.relative_residual);
        if let (Some(c), Some(g)) = (&cpu.errors, &gpu.errors) {
            // The seed example's error (1.3e-11) is near the solution's round-off: allow 1e-12.
            assert!((c.relative_h1 - g.relative_h1).abs() <= 1e-3 * c.relative_h1 + 1e-12, "{}: {} vs {}", path.display(), c.relative_h1, g.relative_h1);
        }
        n += 1;
    }
    assert!(n >= 4);
}

/// `solve_many_rows` on `f`: row-major `b` of [`right_hand_sides`] in, `x` checked against faer's
/// LU (column-major reference, transposed).
fn check_rows_against_faer(be: &galerkin::backend::cuda::CudaBackend, f: &CudaMultifrontal, case: &iga_common::Case, nrhs: usize) {
    check_rows_against_ref(be, f, case, &FaerRef::new(case, nrhs), nrhs);
}

/// faer's LU solutions of [`right_hand_sides`]`(.., cols)` (column-major), factored and solved once
/// for the checks of a case: the first `k` columns of those right-hand sides are the `k`-column
/// set, so a check of `k ≤ cols` columns compares with the first `k` solutions. (Round 25: the
/// chain test factored and solved afresh for each of its ~100 checks.)
struct FaerRef {
    cols: usize,
    x: Vec<f64>,
}

impl FaerRef {
    fn new(case: &iga_common::Case, cols: usize) -> FaerRef {
        let n = case.sys.ndofs;
        let b = right_hand_sides(&case.sys, cols);
        let lu = galerkin::solver::DirectSolver::lu(&case.sys.to_csr().unwrap()).unwrap();
        let x = (0..cols).flat_map(|c| lu.solve(&b[c * n..(c + 1) * n]).unwrap()).collect();
        FaerRef { cols, x }
    }

    /// As [`assert_equals_faer`]: column-major `x` of `nrhs ≤ cols` columns equals the reference to
    /// round-off (relative to each solution's size).
    fn assert_equals(&self, case: &iga_common::Case, nrhs: usize, x: &[f64], what: &str) {
        assert!(nrhs <= self.cols, "{}: the reference has {} columns, not {nrhs}", case.name, self.cols);
        let n = case.sys.ndofs;
        for c in 0..nrhs {
            let reference = &self.x[c * n..(c + 1) * n];
            let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = reference.iter().zip(&x[c * n..(c + 1) * n]).fold(0.0f64, |m, (r, v)| m.max((r - v).abs()));
            assert!(diff <= 1e-10 * scale, "{} rhs {c}/{nrhs} on {what}: max difference {diff:.3e} (solution scale {scale:.3e})", case.name);
        }
    }
}

/// [`check_rows_against_faer`] with the case's reference `r` made once.
fn check_rows_against_ref(be: &galerkin::backend::cuda::CudaBackend, f: &CudaMultifrontal, case: &iga_common::Case, r: &FaerRef, nrhs: usize) {
    let n = case.sys.ndofs;
    let b = iga_common::to_rows(&right_hand_sides(&case.sys, nrhs), n, nrhs);
    let bd = be.from_host(&b).unwrap();
    let mut xd = be.zeros(n * nrhs).unwrap();
    f.solve_many_rows(be, nrhs, &bd, &mut xd).unwrap_or_else(|e| panic!("{} ({nrhs} row-major): {e}", case.name));
    r.assert_equals(case, nrhs, &iga_common::to_columns(&be.to_host(&xd).unwrap(), n, nrhs), "GPU row-major");
}

/// `check_against_faer` (column-major `solve_many`) with the case's reference `r` made once.
fn check_columns_against_ref(be: &galerkin::backend::cuda::CudaBackend, f: &CudaMultifrontal, case: &iga_common::Case, r: &FaerRef, nrhs: usize) {
    let n = case.sys.ndofs;
    let bd = be.from_host(&right_hand_sides(&case.sys, nrhs)).unwrap();
    let mut xd = be.zeros(n * nrhs).unwrap();
    f.solve_many(be, nrhs, &bd, &mut xd).unwrap_or_else(|e| panic!("{} ({nrhs} column-major): {e}", case.name));
    r.assert_equals(case, nrhs, &be.to_host(&xd).unwrap(), "GPU column-major");
}

/// `f`'s solves of `nrhs` row-major and column-major right-hand sides equal faer's LU.
fn check_both_layouts_against_faer(be: &galerkin::backend::cuda::CudaBackend, f: &CudaMultifrontal, case: &iga_common::Case, nrhs: usize) {
    let reference = FaerRef::new(case, nrhs);
    check_rows_against_ref(be, f, case, &reference, nrhs);
    check_columns_against_ref(be, f, case, &reference, nrhs);
}

/// Row-major right-hand sides (`solve_many_rows`) equal faer's LU for 1, 3, 16 and 256 columns
/// (odd counts: partial 32-column lines) on small and large-front cases and 1D cubic and quartic
/// systems with several fused passes: level by level on a fresh factorization (1 and 3 columns),
/// through the separator rows once the maps are made (16, 256, then every count again), also
/// where the column-major kernels were set to others (tensor cores, register-streamed bottom
/// pass). At 256 columns every fused launch is a separator-row kernel; the CPU twin agrees; wrong
/// lengths are errors.
#[test]
fn gpu_row_major_solves_equal_faer_lu() {
    let Some(be) = test_gpu() else { return };
    let mut by_rows = 0;
    let cases = small_cases().into_iter().chain(large_front_cases()).chain([iga_common::seed_1d(3, 4096), iga_common::seed_1d(4, 2048)]);
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        // The staged separator-row kernels at the bottom too (the thread-per-column bottom pass:
        // gpu_row_major_bottom_by_columns_equals_faer_lu_and_the_cpu).
        f.set_rows_bottom(RowsBottom::Staged);
        for nrhs in [1, 3, 16, 256] {
            check_rows_against_faer(&be, &f, &case, nrhs);
        }
        f.prepare_maps(&be).unwrap();
        for nrhs in [1, 3, 16, 256] {
            check_rows_against_faer(&be, &f, &case, nrhs);
        }
        if f.subtree_passes() > 0 && f.has_separator_layout() {
            by_rows += 1;
            let n = case.sys.ndofs;
            let b = be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, 256), n, 256)).unwrap();
            let mut x = be.zeros(n * 256).unwrap();
            let launches = f.solve_rows_profile(&be, 256, &b, &mut x).unwrap();
            assert!(!launches.is_empty() && launches.iter().all(|l| l.kernel.starts_with("mf_mapss")), "{}: {:?}", case.name, launches.iter().map(|l| &l.kernel).collect::<Vec<_>>());
            f.set_maps_kernel(Some(MapsKernel::Tensor));
            f.set_stream_bottom(true);
            for nrhs in [3, 256] {
                check_rows_against_faer(&be, &f, &case, nrhs);
            }
            f.set_maps_kernel(None);
            f.set_stream_bottom(false);
        }
    }
    assert!(by_rows >= 2, "only {by_rows} cases solve row-major through the separator rows");
    // The CPU twin, and wrong lengths.
    let case = iga_common::seed_1d(3, 4096);
    let n = case.sys.ndofs;
    let cpu = galerkin::solver::multifrontal::CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    let gpu = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    let b = iga_common::to_rows(&right_hand_sides(&case.sys, 77), n, 77);
    let mut xc = vec![0.0; n * 77];
    cpu.solve_many_rows(&galerkin::backend::Cpu, 77, &b, &mut xc).unwrap();
    let bd = be.from_host(&b).unwrap();
    let mut xd = be.zeros(n * 77).unwrap();
    gpu.solve_many_rows(&be, 77, &bd, &mut xd).unwrap();
    assert_equals_cpu(&xc, &be.to_host(&xd).unwrap(), "row-major, 77 columns");
    let short = be.zeros(n * 77 - 1).unwrap();
    let e = gpu.solve_many_rows(&be, 77, &short, &mut xd).unwrap_err().to_string();
    assert!(e.contains("row-major"), "{e}");
}

/// The row-major bottom pass a thread per column (`set_rows_bottom`: by FMAs, kernels
/// `mf_rows_forward` / `mf_rows_backward`, and with the backward product on the tensor cores,
/// `mf_rows_backward_tc`) equals faer's LU for 1, 7, 32 and 256 columns (partial lines of 32 and a
/// second block of 128 columns) on 1D systems of degree 1…5 with an odd number of elements (uneven
/// subtrees), and on the small and large-front cases, where it may not fit and the staged kernels
/// run instead. Where it runs, the profile at 256 columns shows its kernels for the bottom pass and
/// the separator-row kernels above it, and 77 columns equal the CPU twin. Round 17's fused
/// variants (`RowsBottom::Fused`: implicit 1D rows, two columns per thread at an even count —
/// 32, 256 — else one; `FusedOne`: always one) the same, and they must run on every degree.
#[test]
fn gpu_row_major_bottom_by_columns_equals_faer_lu_and_the_cpu() {
    let Some(be) = test_gpu() else { return };
    let mut ran = Vec::new();
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(small_cases()).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let cpu = galerkin::solver::multifrontal::CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
        let b77 = iga_common::to_rows(&right_hand_sides(&case.sys, 77), n, 77);
        let mut xc = vec![0.0; n * 77];
        cpu.solve_many_rows(&galerkin::backend::Cpu, 77, &b77, &mut xc).unwrap();
        let variants = [
            (RowsBottom::Columns, "mf_rows_forward", "mf_rows_backward"),
            (RowsBottom::ColumnsTensor, "mf_rows_forward", "mf_rows_backward_tc"),
            (RowsBottom::Fused, "mf_rows_fused_forward_", "mf_rows_fused_backward_"),
            (RowsBottom::FusedOne, "mf_rows_fused_forward_", "mf_rows_fused_backward_"),
        ];
        for (how, forward, backward) in variants {
            // The fused kernels' names end in _<rows>_<columns per thread>: 2 at 256 columns by Fused.
            let cpt = if how == RowsBottom::Fused { "_2" } else { "_1" };
            let fits = |k: &str, want: &str| if want.ends_with('_') { k.starts_with(want) && k.ends_with(cpt) } else { k == want };
            f.set_rows_bottom(how);
            for nrhs in [1, 7, 32, 256] {
                check_rows_against_faer(&be, &f, &case, nrhs);
            }
            if !f.rows_bottom_runs() {
                continue;
            }
            ran.push(format!("{} {how:?}", case.name));
            let b = be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, 256), n, 256)).unwrap();
            let mut x = be.zeros(n * 256).unwrap();
            let launches = f.solve_rows_profile(&be, 256, &b, &mut x).unwrap();
            for l in &launches {
                let ok = match (l.pass, l.backward) {
                    (0, false) => fits(&l.kernel, forward),
                    (0, true) => fits(&l.kernel, backward),
                    _ => l.kernel.starts_with("mf_mapss"),
                };
                assert!(ok, "{} {how:?}: {} ran {}", case.name, l.label, l.kernel);
            }
            assert!(launches.iter().any(|l| l.pass == 0 && l.backward && fits(&l.kernel, backward)), "{} {how:?}: no bottom launch", case.name);
            let bd = be.from_host(&b77).unwrap();
            let mut xd = be.zeros(n * 77).unwrap();
            f.solve_many_rows(&be, 77, &bd, &mut xd).unwrap();
            assert_equals_cpu(&xc, &be.to_host(&xd).unwrap(), &format!("{} {how:?}: row-major bottom by columns, 77 columns", case.name));
        }
    }
    assert_every_degree_ran(&ran, &["Columns", "ColumnsTensor", "Fused", "FusedOne"], "the bottom pass by columns");
}

/// The separator-row kernels' variants (`set_sep_lines`, round 18: every row-major line by one
/// bulk copy of the copy engine, `mf_mapssb_*`; the external contributions staged with the gather,
/// `mf_mapsse_*`; both, `mf_mapssbe_*`; the forward product on the tensor cores, `mf_mapsst_forward`,
/// and with both, `mf_mapssbet_forward`) equal faer's LU for 1, 7, 32 and 256 row-major columns (odd
/// counts: the bulk kernels fall back to 8-byte copies; 32 and 256: 16-byte lines, 256 in several
/// chunks) on 1D systems of degree 1…5 with an odd number of elements (uneven subtrees), and on the
/// small and large-front cases; column-major at 256 columns too. At 256 columns the profile shows
/// the chosen variant on every pass it applies to (bulk: every pass; staged contributions: the
/// passes above the bottom one), and 78 columns (even: bulk lines) and 77 equal the CPU twin.
#[test]
fn gpu_separator_line_variants_equal_faer_lu_and_the_cpu() {
    let Some(be) = test_gpu() else { return };
    let mut ran = Vec::new();
    let mut no_tc = Vec::new();
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(small_cases()).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(&be).unwrap();
        f.set_rows_bottom(RowsBottom::Staged);
        let n = case.sys.ndofs;
        let twins = cpu_twins(&case, true);
        let variants = [
            (SepLines { bulk: true, ext_below: None, tc_forward: false, top: false }, "mf_mapssb_"),
            (SepLines { bulk: false, ext_below: Some(usize::MAX), tc_forward: false, top: false }, "mf_mapsse_"),
            (SepLines { bulk: true, ext_below: Some(usize::MAX), tc_forward: false, top: false }, "mf_mapssbe_"),
            (SepLines { bulk: false, ext_below: None, tc_forward: true, top: false }, "mf_mapsst_"),
            (SepLines { bulk: true, ext_below: Some(usize::MAX), tc_forward: true, top: false }, "mf_mapssbet_"),
            // Round 19: the passes near the root in one launch by lines (bulk, staged, ± tc).
            (SepLines { bulk: true, ext_below: Some(TC_FEW_SUBTREES), tc_forward: true, top: true }, "mf_mapssbet_top"),
            (SepLines { bulk: true, ext_below: None, tc_forward: false, top: true }, "mf_mapssbe_top"),
        ];
        for (lines, name) in variants {
            f.set_sep_lines(Some(lines));
            for nrhs in [1, 7, 32, 256] {
                check_rows_against_faer(&be, &f, &case, nrhs);
            }
            check_against_faer(&be, &f, &case, 256);
            let b = be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, 256), n, 256)).unwrap();
            let mut x = be.zeros(n * 256).unwrap();
            let launches = f.solve_rows_profile(&be, 256, &b, &mut x).unwrap();
            if launches.is_empty() {
                continue; // no fused passes through the separator rows here
            }
            no_tc.extend(assert_line_launches(&be, &f, &case.name, lines, &launches, true));
            ran.push(format!("{} {name}", case.name));
            assert_equals_twins(&be, &twins, &format!("{} {lines:?}: row-major", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
        }
    }
    assert_every_degree_ran(&ran, &["mf_mapssb_", "mf_mapsse_", "mf_mapssbe_", "mf_mapsst_", "mf_mapssbet_", "mf_mapssbet_top", "mf_mapssbe_top"], "the line variant");
    // The 1D cases' roots have ≤ 6 Schur rows: every forward launch of theirs is on the tensor cores.
    assert!(no_tc.iter().all(|c| !c.starts_with("seed")), "the tensor-core forward product did not apply to a 1D pass: {no_tc:?}");
}

/// The CPU twins of a case at 77 and 78 columns (odd: the bulk kernels' 8-byte fallback; even:
/// 16-byte lines): (columns, `b` in the layout the GPU solves — row-major or column-major — and the
/// CPU multifrontal's `x` in the same layout).
fn cpu_twins(case: &iga_common::Case, row_major: bool) -> Vec<(usize, Vec<f64>, Vec<f64>)> {
    let n = case.sys.ndofs;
    let cpu = galerkin::solver::multifrontal::CpuMultifrontal::factor(Arc::new(case.sym.clone()), &case.sys.matrices).unwrap();
    [77, 78]
        .into_iter()
        .map(|k| {
            let mut xc = vec![0.0; n * k];
            let b = if row_major {
                let b = iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k);
                cpu.solve_many_rows(&galerkin::backend::Cpu, k, &b, &mut xc).unwrap();
                b
            } else {
                let b = right_hand_sides(&case.sys, k);
                cpu.solve_into(k, &b, &mut xc).unwrap();
                b
            };
            (k, b, xc)
        })
        .collect()
}

/// Asserts that the GPU's `solve` (columns, `b`, a zeroed `x`, in the twins' layout) equals each
/// CPU twin ([`cpu_twins`]).
fn assert_equals_twins(
    be: &galerkin::backend::cuda::CudaBackend,
    twins: &[(usize, Vec<f64>, Vec<f64>)],
    what: &str,
    solve: impl Fn(usize, &galerkin::backend::cuda::CudaVector, &mut galerkin::backend::cuda::CudaVector) -> galerkin::Result<()>,
) {
    for (k, bh, xc) in twins {
        let bd = be.from_host(bh).unwrap();
        let mut xd = be.zeros(xc.len()).unwrap();
        solve(*k, &bd, &mut xd).unwrap_or_else(|e| panic!("{what}, {k} columns: {e}"));
        assert_equals_cpu(xc, &be.to_host(&xd).unwrap(), &format!("{what}, {k} columns"));
    }
}

/// Asserts that a 256-column separator-row solve by `f` (row-major or column-major `b` and `x`)
/// with `lines` ran the launches the dispatch rule names, stated here apart from it: the line walk
/// (sm_90, an even count of columns, passes of ≤ 512 subtrees near the root) in one launch in place
/// of those passes' launches, `mf_mapssbe[t]_top`, on every 1D case where `lines.top` and the device
/// has bulk copies; elsewhere per pass bulk copies where chosen on sm_90, staged contributions
/// where a pass has external children and fewer subtrees than `ext_below`, the tensor cores forward
/// where its roots have ≤ 16 Schur rows, and those with the indices prefetched (`…tp_forward`)
/// where `f.sep_prefetch()` (trimmed, `…tpz_forward`, on a pass without external entries where
/// `f.sep_trim()`, stop 54's default), the bulk backward kernel of a row-major bottom pass with theirs
/// (`mf_mapssbp0_backward_*`) where `f.sep_back_prefetch()` (the upper passes `mf_mapssb[e]_backward_*`),
/// and where `f.sep_ext_split()` may have chosen them the split kernels (`…xs_…`, round 28: their
/// own test, `gpu_split_contributions…`, asserts that they run). Returns the forward passes where
/// the tensor cores were chosen and did not apply.
fn assert_line_launches(be: &galerkin::backend::cuda::CudaBackend, f: &CudaMultifrontal, name: &str, lines: SepLines, launches: &[LaunchProfile], row_major: bool) -> Vec<String> {
    let bulk_here = be.device().compute_capability.0 >= 9;
    let mut no_tc = Vec::new();
    let walked = f.walks_top(be, 256, row_major);
    assert!(!walked || lines.top, "{name} {lines:?}: a walk not chosen");
    if lines.top && bulk_here && name.starts_with("seed") {
        assert!(walked, "{name} {lines:?}: the line walk does not apply to a 1D case");
    }
    assert_eq!(launches.iter().any(|l| l.label.starts_with("walk")), walked, "{name} {lines:?}: the walk");
    for l in launches.iter().filter(|l| l.label.starts_with("walk")) {
        let t = if lines.tc_forward && (l.pass..).map_while(|q| f.separator_pass_shape(q)).all(|s| s.max_schur <= 16) { "t" } else { "" };
        assert_eq!(l.kernel, format!("mf_mapssbe{t}_top"), "{name} {lines:?}: the walk");
    }
    for l in launches.iter().filter(|l| !l.label.starts_with("walk")) {
        // Staged contributions only where a pass has external children (never the bottom
        // one); the tensor cores forward only, and only where the pass's roots have at
        // most 16 Schur rows (the 1D cases everywhere; not 2D p = 3's bottom pass, whose
        // separators are longer: there the FMA forward runs, as round 18's check saw).
        let shape = f.separator_pass_shape(l.pass).unwrap_or_else(|| panic!("{name}: pass {} has no separator rows", l.pass));
        let b = if lines.bulk && bulk_here { "b" } else { "" };
        let e = if lines.ext_below.is_some_and(|min| shape.subtrees < min) && shape.has_ext { "e" } else { "" };
        let t = if lines.tc_forward && !l.backward && shape.max_schur <= 16 { "t" } else { "" };
        if t.is_empty() && lines.tc_forward && !l.backward {
            no_tc.push(format!("{name} forward {}: {} Schur rows", l.pass, shape.max_schur));
        }
        let p = if !t.is_empty() && f.sep_prefetch() { "p" } else { "" };
        // Backward prefetch (round 25): a row-major bottom pass only (never with staged contributions).
        let bp = if !b.is_empty() && e.is_empty() && f.sep_back_prefetch() && row_major && l.pass == 0 { "p0" } else { "" };
        // The split contributions (round 28, on by default): passes with external children on the
        // bulk kernels without staged contributions — forward with the tensor cores and the
        // prefetch, backward with 2 or 3 map row tiles (the kernel's last digit) — unless the
        // staged entries would not fit beside 32 columns (then the unsplit kernel runs).
        let nb = l.kernel.chars().last().and_then(|c| c.to_digit(10)).unwrap_or(0);
        let (split_fw, split_bw) = f.sep_ext_split();
        let split = shape.has_ext
            && !b.is_empty()
            && e.is_empty()
            && if l.backward { split_bw && bp.is_empty() && nb >= 2 } else { split_fw && !t.is_empty() && !p.is_empty() };
        // The trimmed forward (stop 54's default): bulk, tensor-core and prefetched lines, unsplit, on a
        // pass without external entries (`CudaMultifrontal::with_sep_trim`).
        let z = if !l.backward && f.sep_trim() && !shape.has_ext && !b.is_empty() && e.is_empty() && !t.is_empty() && !p.is_empty() { "z" } else { "" };
        let want = if l.backward { format!("mf_mapss{b}{e}{bp}_backward_") } else { format!("mf_mapss{b}{e}{t}{p}{z}_forward") };
        let want_xs = if l.backward { format!("mf_mapss{b}{e}{bp}xs_backward_") } else { format!("mf_mapss{b}{e}{t}{p}xs_forward") };
        assert!(l.kernel.starts_with(&want) || (split && l.kernel.starts_with(&want_xs)), "{name} {lines:?}: {} ran {} (expected {want}* or, split, {want_xs}*)", l.label, l.kernel);

    }
    no_tc
}

/// The lines by default per layout (round 20): a fresh factorization takes
/// [`DEFAULT_ROWS_SEP_LINES`] (the walk by lines, [`SepLines::WALK`]) for row-major solves and
/// [`DEFAULT_COLUMNS_SEP_LINES`] for column-major ones, and `set_sep_lines(None)` restores them.
/// Column-major solves with the walk by lines, with round 18's lines pass by pass, with the plain
/// kernels and by default equal faer's LU for 1, 7, 32 and 256 columns (odd counts: the bulk
/// kernels fall back to 8-byte copies and the walk does not run) on 1D systems of degree 1…5 with
/// an odd number of elements and on the small (1D and 2D) and large-front cases; at 256 columns
/// the profile shows the launches the rule names ([`assert_line_launches`]), the walk on every 1D
/// case on sm_90; 77 and 78 columns equal the CPU twin. The row-major default runs the walk too.
#[test]
fn gpu_column_major_separator_lines_and_the_defaults_equal_faer_lu_and_the_cpu() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let mut ran = Vec::new();
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(small_cases()).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(f.sep_lines(true), DEFAULT_ROWS_SEP_LINES, "{}: the row-major lines by default", case.name);
        assert_eq!(f.sep_lines(false), DEFAULT_COLUMNS_SEP_LINES, "{}: the column-major lines by default", case.name);
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let twins = cpu_twins(&case, false);
        let bulkext2tc = SepLines { top: false, ..SepLines::WALK };
        for (lines, name) in [(Some(SepLines::WALK), "walk"), (Some(bulkext2tc), "bulkext2tc"), (Some(SepLines::PLAIN), "plain"), (None, "default")] {
            f.set_sep_lines(lines);
            let want = lines.unwrap_or(DEFAULT_COLUMNS_SEP_LINES);
            assert_eq!(f.sep_lines(false), want, "{} {name}", case.name);
            for nrhs in [1, 7, 32, 256] {
                check_against_faer(&be, &f, &case, nrhs);
            }
            let b = be.from_host(&right_hand_sides(&case.sys, 256)).unwrap();
            let mut x = be.zeros(n * 256).unwrap();
            let launches = f.solve_profile(&be, 256, &b, &mut x).unwrap();
            // Without the separator layout (the tiny cases) column-major solves run the other map
            // kernels, where the lines do not apply.
            if !launches.is_empty() && f.has_separator_layout() {
                assert_line_launches(&be, &f, &case.name, want, &launches, false);
                ran.push(format!("{} {name}", case.name));
            }
            assert_equals_twins(&be, &twins, &format!("{} {name}: column-major", case.name), |k, b, x| f.solve_many(&be, k, b, x));
        }
        // The row-major default: the walk by lines where it applies, equal to faer's LU.
        assert_eq!(f.sep_lines(true), DEFAULT_ROWS_SEP_LINES, "{}: set_sep_lines(None) restores the row-major default", case.name);
        check_rows_against_faer(&be, &f, &case, 256);
        let b = be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, 256), n, 256)).unwrap();
        let mut x = be.zeros(n * 256).unwrap();
        let launches = f.solve_rows_profile(&be, 256, &b, &mut x).unwrap();
        if !launches.is_empty() && f.has_separator_layout() {
            assert_line_launches(&be, &f, &case.name, DEFAULT_ROWS_SEP_LINES, &launches, true);
            if bulk_here && case.name.starts_with("seed") {
                assert!(launches.iter().any(|l| l.kernel == "mf_mapssbet_top"), "{}: the row-major default did not walk by lines", case.name);
            }
        }
    }
    assert_every_degree_ran(&ran, &["walk", "bulkext2tc", "plain", "default"], "the column-major lines");
}

/// Asserts that `ran` ("<case> <name>") holds every `name` on the seed case of every degree 1…5.
fn assert_every_degree_ran(ran: &[String], names: &[&str], what: &str) {
    assert_degrees_ran(ran, 1..=5, names, what);
}

/// [`assert_every_degree_ran`] for the degrees `ps`.
fn assert_degrees_ran(ran: &[String], ps: std::ops::RangeInclusive<usize>, names: &[&str], what: &str) {
    for p in ps {
        for name in names {
            assert!(ran.iter().any(|c| c == &format!("seed p={p} N=3001 {name}")), "degree {p}: {what} {name} did not run ({ran:?})");
        }
    }
}

/// A row-major solve of 256 columns by `f`, profiled (the walk's first pass), then traced and
/// checked against faer's LU: the walk's first pass and its timeline per level.
fn traced_walk(be: &galerkin::backend::cuda::CudaBackend, f: &mut CudaMultifrontal, case: &iga_common::Case) -> (usize, Vec<galerkin::solver::multifrontal::cuda::WalkLevel>) {
    let n = case.sys.ndofs;
    let b = be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, 256), n, 256)).unwrap();
    let mut x = be.zeros(n * 256).unwrap();
    let launches = f.solve_rows_profile(be, 256, &b, &mut x).unwrap();
    let first = launches.iter().find(|l| l.label.starts_with("walk")).map(|l| l.pass).unwrap_or_else(|| panic!("{}: the walk's launch not in the profile", case.name));
    f.set_walk_trace(true);
    check_rows_against_faer(be, f, case, 256);
    f.set_walk_trace(false);
    (first, f.walk_levels(be).unwrap())
}

/// The line walk's timeline (`set_walk_trace`, round 20) after a traced row-major solve of 256
/// columns by the default lines (which still equals faer's LU), on the 1D cases of degree 1…5: a
/// level per walked pass and direction, forward up the passes then backward down them, each with
/// its subtrees × 256 / the default shape's columns (64 since round 25: 4 chunks) as items; every item of a level above depends on one below, so no level
/// ends before the one it waits on; waits and work lie within the level's span. Off again, the
/// next solve leaves the timeline as it was.
#[test]
fn gpu_walk_trace_has_every_level_in_order() {
    let Some(be) = test_gpu() else { return };
    if be.device().compute_capability.0 < 9 {
        eprintln!("skipping: the line walk needs sm_90");
        return;
    }
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(&be).unwrap();
        assert!(f.walks_top(&be, 256, true), "{}: the row-major default does not walk", case.name);
        assert!(f.walk_levels(&be).unwrap().is_empty(), "{}: a timeline before any traced walk", case.name);
        let (first, levels) = traced_walk(&be, &mut f, &case);
        let passes: Vec<usize> = (first..).take_while(|&q| f.separator_pass_shape(q).is_some()).collect();
        let want: Vec<(usize, bool)> = passes.iter().map(|&q| (q, false)).chain(passes.iter().rev().map(|&q| (q, true))).collect();
        assert_eq!(levels.iter().map(|l| (l.pass, l.backward)).collect::<Vec<_>>(), want, "{}: the walk's levels", case.name);
        for l in &levels {
            let subtrees = f.separator_pass_shape(l.pass).map(|s| s.subtrees).unwrap_or(0);
            assert_eq!(l.items, subtrees * 256 / f.walk_shape().cols, "{}: {l:?} items", case.name);
            assert!(l.start_s >= 0.0 && l.wait_s >= 0.0 && l.work_s >= 0.0 && l.start_s + l.wait_s + l.work_s <= l.end_s + 1e-12, "{}: {l:?}", case.name);
        }
        for (l, next) in levels.iter().zip(levels.iter().skip(1)) {
            assert!(next.end_s >= l.end_s, "{}: {next:?} ended before {l:?}", case.name);
        }
        check_rows_against_faer(&be, &f, &case, 256);
        assert_eq!(f.walk_levels(&be).unwrap(), levels, "{}: an untraced solve changed the timeline", case.name);
    }
}

/// The line walk's item shapes (`set_walk_shape`, round 21: 32 columns with 1, 2 (round 20's
/// default) or 4 threads per column, 64 with 2 (the default since round 25) or 4, 128 with 2 —
/// other item boundaries, chunk counts and warps per item) equal faer's LU row-major for 1, 7, 32 and 256 columns (odd counts:
/// no walk, the passes one launch each; 32: one chunk narrower than a 64-column item; 256: several
/// chunks) and column-major at 256 with the walk's lines, on 1D systems of degree 1…5 with an odd
/// number of elements and on the 2D large-front cases; 77 and 78 columns equal the CPU twins both
/// ways. On the 1D cases with bulk copies the walk runs at 256 columns with items of up to 64
/// columns, and a traced walk has every walked subtree × 256 / columns items. Shapes the kernel
/// cannot run are errors; `None` restores the default's shape (64 × 2 since round 25).
#[test]
fn gpu_walk_shapes_equal_faer_lu_and_the_cpu() {
    use galerkin::solver::multifrontal::cuda::WalkShape;
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let shapes = [(32, 1), (32, 2), (32, 4), (64, 2), (64, 4), (128, 2)].map(|(cols, threads)| WalkShape { cols, threads });
    let mut walked = Vec::new();
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(f.walk_shape(), WalkShape { cols: 64, threads: DEFAULT_COLUMN_THREADS }, "{}: round 25's shape (64 x 2) by default", case.name);
        assert!(f.set_walk_shape(Some(WalkShape { cols: 48, threads: 2 })).is_err(), "{}: 48 columns accepted", case.name);
        f.prepare_maps(&be).unwrap();
        let (rows, cols) = (cpu_twins(&case, true), cpu_twins(&case, false));
        for shape in shapes {
            f.set_walk_shape(Some(shape)).unwrap();
            assert_eq!(f.walk_shape(), shape, "{}", case.name);
            f.set_sep_lines(None);
            for nrhs in [1, 7, 32, 256] {
                check_rows_against_faer(&be, &f, &case, nrhs);
            }
            assert_equals_twins(&be, &rows, &format!("{} {shape:?}: row-major", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
            let walks = f.walks_top(&be, 256, true);
            if bulk_here && case.name.starts_with("seed") && shape.cols <= 64 {
                assert!(walks, "{} {shape:?}: the row-major default does not walk", case.name);
            }
            if walks {
                walked.push(format!("{} {}x{}", case.name, shape.cols, shape.threads));
                let (first, levels) = traced_walk(&be, &mut f, &case);
                let items: usize = levels.iter().map(|l| l.items).sum();
                let subtrees: usize = (first..).map_while(|q| f.separator_pass_shape(q)).map(|s| s.subtrees).sum();
                assert_eq!(items, 2 * subtrees * 256 / shape.cols, "{} {shape:?}: the traced walk's items", case.name);
            }
            f.set_sep_lines(Some(SepLines::WALK));
            check_against_faer(&be, &f, &case, 256);
            assert_equals_twins(&be, &cols, &format!("{} {shape:?}: column-major", case.name), |k, b, x| f.solve_many(&be, k, b, x));
        }
        f.set_walk_shape(None).unwrap();
        assert_eq!(f.walk_shape(), WalkShape { cols: 64, threads: DEFAULT_COLUMN_THREADS }, "{}: None restores round 25's shape", case.name);
    }
    if bulk_here {
        assert!(walked.iter().filter(|c| c.starts_with("seed")).count() >= 5 * 5, "the shapes walked too rarely: {walked:?}");
    }
}

/// The walk over fewer passes (`set_walk_subtrees`, round 29: the passes below its bound one
/// launch each way) equals faer's LU row-major at 1, 7, 32 and 256 columns and column-major at 256,
/// and the CPU at 77 and 78 columns; the profile's walk starts at the lowest pass above the bottom
/// one from which every pass has at most the bound's subtrees, its trace has those passes' items
/// both ways, and a bound no pass meets walks nothing. 0 is refused; `None` restores 512.
#[test]
fn gpu_narrow_walks_equal_faer_lu_and_the_cpu() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let mut narrowed = 0;
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(f.walk_subtrees(), 512, "{}: the default bound", case.name);
        assert!(f.set_walk_subtrees(Some(0)).is_err(), "{}: a bound of 0 accepted", case.name);
        f.prepare_maps(&be).unwrap();
        let rows = cpu_twins(&case, true);
        let counts: Vec<usize> = (0..).map_while(|q| f.separator_pass_shape(q)).map(|s| s.subtrees).collect();
        let default_first = (1..counts.len()).find(|&q| counts[q..].iter().all(|&c| c <= 512));
        for max in [64, 8, 2, 1] {
            f.set_walk_subtrees(Some(max)).unwrap();
            assert_eq!(f.walk_subtrees(), max, "{}", case.name);
            for nrhs in [1, 7, 32, 256] {
                check_rows_against_faer(&be, &f, &case, nrhs);
            }
            assert_equals_twins(&be, &rows, &format!("{} walk of <= {max} subtrees: row-major", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
            let expect = (1..counts.len()).find(|&q| counts[q..].iter().all(|&c| c <= max));
            if bulk_here {
                assert_eq!(f.walks_top(&be, 256, true), expect.is_some(), "{} <= {max}: passes {counts:?}", case.name);
                if let Some(q) = expect {
                    let (first, levels) = traced_walk(&be, &mut f, &case);
                    assert_eq!(first, q, "{} <= {max}: the walk's first pass (passes {counts:?})", case.name);
                    let items: usize = levels.iter().map(|l| l.items).sum();
                    assert_eq!(items, 2 * counts[q..].iter().sum::<usize>() * 256 / f.walk_shape().cols, "{} <= {max}: the traced walk's items", case.name);
                }
                narrowed += usize::from(expect != default_first);
            }
            f.set_sep_lines(Some(SepLines::WALK));
            check_against_faer(&be, &f, &case, 256);
            f.set_sep_lines(None);
        }
        f.set_walk_subtrees(None).unwrap();
        assert_eq!(f.walk_subtrees(), 512, "{}: None restores the default", case.name);
    }
    if bulk_here {
        assert!(narrowed >= 5, "the bounds moved the walk's first pass {narrowed} times only");
    }
}

/// The walk shapes the kernel can run (32, 64 or 128 columns, 1 to 4 threads per column, at most
/// 512 threads) pass `WalkShape::check`; others are errors that name the shape. Host only.
#[test]
fn walk_shapes_outside_the_kernels_range_are_refused() {
    use galerkin::solver::multifrontal::cuda::WalkShape;
    for (cols, threads) in [(32, 1), (32, 4), (64, 2), (64, 4), (128, 4)] {
        assert_eq!(WalkShape { cols, threads }.check().ok(), Some(WalkShape { cols, threads }));
    }
    for (cols, threads) in [(16, 2), (48, 2), (256, 2), (32, 0), (32, 5)] {
        let e = WalkShape { cols, threads }.check().expect_err(&format!("{cols}×{threads} accepted")).to_string();
        assert!(e.contains(&format!("{cols} columns × {threads} threads")), "{e}");
    }
}

/// The forward separator-row kernels with their store side's indices prefetched under the copies
/// (`set_sep_prefetch`, round 22: `mf_mapss{,b,e,be}tp_forward`; on by default since round 23) equal faer's LU row-major for 1,
/// 7, 32, 64 and 256 columns and column-major at 256, with the default lines (the walk by lines) and
/// the lines pass by pass with and without bulk copies and staged contributions, on 1D systems of
/// degree 1…5 with an odd number of elements and on the 2D large-front cases; 77 and 78 columns
/// equal the CPU twins. With blocks walking several chunks of a subtree (the grid's column blocks
/// capped at 1: the later chunks read the cached line sources and indices), with chunks of 32, 64
/// and the default's columns, 7 and 256 columns equal the same solve without the prefetch bit
/// for bit (the same products in the same order). At 256 columns the profile shows the prefetched
/// kernel on every tensor-core forward pass (and on some pass of every 1D case). Round 24: every
/// check runs with the bulk backward kernels' prefetch on too (`set_sep_back_prefetch`, on by
/// default since round 28), which is bit-identical to those kernels without it; round 25: that prefetch is the
/// row-major bottom pass's alone (`mf_mapssbp0_backward_*`, under a register cap, whose later
/// chunks read the cached line sources and whose stores the prefetched owned rows), shows on
/// backward pass 0 of every 1D case with bulk lines and on no other pass.
#[test]
fn gpu_prefetched_forward_equals_faer_lu_and_the_cpu() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let (mut ran, mut back) = (Vec::new(), Vec::new());
    let tc = SepLines { bulk: false, ext_below: None, tc_forward: true, top: false };
    let bulkext = SepLines { bulk: true, ext_below: Some(usize::MAX), tc_forward: true, top: false };
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert!(f.sep_prefetch(), "{}: the prefetch is off by default (the default since round 23)", case.name);
        assert!(f.sep_back_prefetch(), "{}: the backward prefetch is off by default (the default since round 28)", case.name);
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let (rows, cols) = (cpu_twins(&case, true), cpu_twins(&case, false));
        let reference = FaerRef::new(&case, 256);
        let bs: Vec<_> = [7, 256].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        for (lines, name) in [(None, "default"), (Some(tc), "tc"), (Some(bulkext), "bulkexttc")] {
            f.set_sep_lines(lines);
            f.set_sep_prefetch(true);
            f.set_sep_back_prefetch(true);
            for nrhs in [1, 7, 32, 64, 256] {
                check_rows_against_ref(&be, &f, &case, &reference, nrhs);
            }
            assert_equals_twins(&be, &rows, &format!("{} {name}: row-major, prefetched", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
            if lines.is_some() {
                check_columns_against_ref(&be, &f, &case, &reference, 256);
                assert_equals_twins(&be, &cols, &format!("{} {name}: column-major, prefetched", case.name), |k, b, x| f.solve_many(&be, k, b, x));
            }
            for (blocks, width) in [(None, None), (Some(1), None), (Some(1), Some(32)), (Some(1), Some(64))] {
                f.set_pipe_blocks(blocks).unwrap();
                f.set_subtree_shape(width.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
                let what = format!("{} {name} {blocks:?} {width:?}", case.name);
                assert_setting_bit_identical(&be, &mut f, n, &bs, &format!("{what}: the prefetch"), CudaMultifrontal::set_sep_prefetch);
                assert_setting_bit_identical(&be, &mut f, n, &bs, &format!("{what}: the backward prefetch"), CudaMultifrontal::set_sep_back_prefetch);
                let mut x = be.zeros(n * 256).unwrap();
                let launches = f.solve_rows_profile(&be, 256, &bs[1].1, &mut x).unwrap();
                if !launches.is_empty() {
                    assert_line_launches(&be, &f, &what, f.sep_lines(true), &launches, true);
                    if case.name.starts_with("seed") {
                        assert!(launches.iter().any(|l| !l.backward && (l.kernel.ends_with("tp_forward") || l.kernel.ends_with("tpz_forward"))), "{what}: no prefetched forward launch");
                        if bulk_here && f.sep_lines(true).bulk {
                            assert!(launches.iter().any(|l| l.backward && l.pass == 0 && l.kernel.starts_with("mf_mapssbp0_backward_")), "{what}: no prefetched bottom backward launch");
                            back.extend(launches.iter().filter(|l| l.kernel.starts_with("mf_mapssbp0_")).map(|l| l.kernel.clone()));
                        }
                        ran.push(format!("{} {name}", case.name));
                    }
                }
            }
            f.set_pipe_blocks(None).unwrap();
            f.set_subtree_shape(None).unwrap();
            f.set_sep_prefetch(false);
            f.set_sep_back_prefetch(false);
        }
    }
    assert_every_degree_ran(&ran, &["default", "tc", "bulkexttc"], "the prefetched forward");
    back.sort();
    back.dedup();
    // Which of the three capped kernels (16, 32, 48 eliminated rows) these cases ran (--nocapture).
    eprintln!("prefetched bottom backward kernels that ran: {back:?}");
}

/// Round 26: a row-major solve with its separator rows in `x` (`set_sep_in_x`: the layout at
/// dofs, no `sep` buffer, no owned-row stores in the bottom backward pass; off by default) equals
/// faer's LU for 1, 7, 32, 64 and 256 columns and the CPU twins at 77 and 78, with the default
/// lines (the walk by lines), the tensor-core lines pass by pass and bulk + staged contributions,
/// with the bottom backward prefetch off (and on, with the default lines), on 1D systems of degree 1…5 with an odd number of
/// elements and the 2D large-front cases; with the grid's column blocks capped at 1 and chunks of
/// 32, 64 and the default's columns, 7 and 256 columns equal the compact rows bit for bit (the
/// same products in the same order). It applies wherever a separator layout does, and a chained
/// forward pass is not taken with it.
#[test]
fn gpu_separator_rows_in_x_equal_faer_lu_and_the_compact_rows() {
    let Some(be) = test_gpu() else { return };
    let mut ran = Vec::new();
    let tc = SepLines { bulk: false, ext_below: None, tc_forward: true, top: false };
    let bulkext = SepLines { bulk: true, ext_below: Some(usize::MAX), tc_forward: true, top: false };
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert!(!f.sep_in_x(), "{}: the separator rows in x are on by default", case.name);
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let rows = cpu_twins(&case, true);
        let reference = FaerRef::new(&case, 256);
        let bs: Vec<_> = [7, 256].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        for (lines, name) in [(None, "default"), (Some(tc), "tc"), (Some(bulkext), "bulkexttc")] {
            f.set_sep_lines(lines);
            // The backward prefetch both ways with the default lines only (the call's time).
            for &back in if lines.is_none() { &[false, true][..] } else { &[false][..] } {
                f.set_sep_back_prefetch(back);
                f.set_sep_in_x(true);
                let applies = f.sep_in_x_applies(&be).unwrap();
                assert_eq!(applies, f.has_separator_layout(), "{} {name}: the rows in x apply {applies} where a separator layout is {}", case.name, f.has_separator_layout());
                f.set_sep_chain(true);
                assert!(!f.chains_forward(&be, 256, true), "{} {name}: chained with the rows in x", case.name);
                f.set_sep_chain(false);
                for nrhs in [1, 7, 32, 64, 256] {
                    check_rows_against_ref(&be, &f, &case, &reference, nrhs);
                }
                assert_equals_twins(&be, &rows, &format!("{} {name} bpf {back}: row-major, rows in x", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
                for (blocks, width) in [(None, None), (Some(1), None), (Some(1), Some(32)), (Some(1), Some(64))] {
                    f.set_pipe_blocks(blocks).unwrap();
                    f.set_subtree_shape(width.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
                    let what = format!("{} {name} bpf {back} {blocks:?} {width:?}: the rows in x", case.name);
                    assert_setting_bit_identical(&be, &mut f, n, &bs, &what, CudaMultifrontal::set_sep_in_x);
                }
                f.set_pipe_blocks(None).unwrap();
                f.set_subtree_shape(None).unwrap();
                if applies && case.name.starts_with("seed") {
                    ran.push(format!("{} {name}", case.name));
                }
            }
            f.set_sep_in_x(false);
            f.set_sep_back_prefetch(false);
        }
    }
    assert_every_degree_ran(&ran, &["default", "tc", "bulkexttc"], "the separator rows in x");
}

/// Asserts that `f`'s row-major solves of each `(columns, b)` are the same bit for bit with a setting
/// off and on (`set(f, false)`, then `set(f, true)`: left on); `what` names it in failures.
fn assert_setting_bit_identical(
    be: &galerkin::backend::cuda::CudaBackend,
    f: &mut CudaMultifrontal,
    n: usize,
    bs: &[(usize, galerkin::backend::cuda::CudaVector)],
    what: &str,
    set: impl Fn(&mut CudaMultifrontal, bool),
) {
    for (k, b) in bs {
        let mut x = [be.zeros(n * k).unwrap(), be.zeros(n * k).unwrap()];
        for (on, x) in [false, true].into_iter().zip(x.iter_mut()) {
            set(f, on);
            f.solve_many_rows(be, *k, b, x).unwrap_or_else(|e| panic!("{what} {on}, {k} columns: {e}"));
        }
        assert!(be.to_host(&x[0]).unwrap() == be.to_host(&x[1]).unwrap(), "{what}, {k} columns: the solve differs with it on");
    }
}

/// Pass 1 chained into the bottom forward pass (`set_sep_chain`, round 23: `mf_mapss{b,bt,btp}_chain`,
/// the block that stores the last bottom subtree a pass-1 subtree reads goes on to that subtree)
/// equals faer's LU row-major for 7 (odd: not chained), 32 and 256 columns and column-major at 256,
/// with the default lines and with the lines pass by pass (no walk: pass 1 of the small cases is
/// otherwise walked), prefetched or not, on 1D systems of degree 1…5 with an odd number of elements, a 1D
/// cubic system large enough that pass 1 runs below the default's walk, and the 2D large-front
/// cases; 77 and 78 columns equal the CPU twins. With the column blocks capped at 1 (a block walks
/// every chunk of its subtree and of the pass-1 subtree it goes on to) or not (a counter per
/// column block), chunks of 32, 64 and the default's columns, 78 and 256 columns equal the unchained
/// solve bit for bit (the same products in the same order). Where it applies (sm_90, even column
/// counts, every 1D case with those lines) the profile shows one `forward 0+1` launch of the
/// chained kernel and no `forward 1`; elsewhere the passes run one launch each.
///
/// Round 25: the same checks in three tests (degrees 1–3 here; 4–5; the large 1D and the 2D cases)
/// that run side by side, each case's faer reference factored and solved once ([`FaerRef`]) — one
/// test of everything took over 140 s alone on a fresh H200 (round 24's second call).
#[test]
fn gpu_chained_forward_equals_faer_lu_and_the_unchained_solve() {
    let Some(be) = test_gpu() else { return };
    let ran = chained_forward_checks(&be, (1..=3).map(|p| iga_common::seed_1d(p, 3001)).collect());
    assert_degrees_ran(&ran, 1..=3, &["nowalk", "bulkexttc"], "the chained forward");
}

/// [`gpu_chained_forward_equals_faer_lu_and_the_unchained_solve`] for degrees 4 and 5.
#[test]
fn gpu_chained_forward_of_degrees_4_and_5_equals_faer_lu_and_the_unchained_solve() {
    let Some(be) = test_gpu() else { return };
    let ran = chained_forward_checks(&be, (4..=5).map(|p| iga_common::seed_1d(p, 3001)).collect());
    assert_degrees_ran(&ran, 4..=5, &["nowalk", "bulkexttc"], "the chained forward");
}

/// [`gpu_chained_forward_equals_faer_lu_and_the_unchained_solve`] for 160 001 cubic elements (pass 1
/// below the default's walk: the default lines chain there) and the 2D large-front cases.
#[test]
fn gpu_chained_forward_of_large_systems_equals_faer_lu_and_the_unchained_solve() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let ran = chained_forward_checks(&be, [iga_common::seed_1d(3, 160_001)].into_iter().chain(large_front_cases()).collect());
    assert!(!bulk_here || ran.iter().any(|r| r.starts_with("seed p=3 N=160001 default")), "the default lines never chained: {ran:?}");
}

/// The chain test's checks on `cases` (see [`gpu_chained_forward_equals_faer_lu_and_the_unchained_solve`]);
/// returns the "case lineup" where the profile showed the chained launch.
fn chained_forward_checks(be: &galerkin::backend::cuda::CudaBackend, cases: Vec<iga_common::Case>) -> Vec<String> {
    let bulk_here = be.device().compute_capability.0 >= 9;
    let mut ran = Vec::new();
    let nowalk = SepLines { top: false, ..SepLines::WALK };
    let bulkext = SepLines { bulk: true, ext_below: Some(usize::MAX), tc_forward: true, top: false };
    for case in cases {
        let t0 = std::time::Instant::now();
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert!(!f.sep_chain(), "{}: the chain is on by default", case.name);
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let big = n > 100_000;
        let (rows, cols) = if big { (Vec::new(), Vec::new()) } else { (cpu_twins(&case, true), cpu_twins(&case, false)) };
        let reference = (!big).then(|| FaerRef::new(&case, 256));
        let bs: Vec<_> = [78, 256].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        let lineups: &[(Option<SepLines>, &str)] = if big { &[(None, "default")] } else { &[(None, "default"), (Some(nowalk), "nowalk"), (Some(bulkext), "bulkexttc")] };
        let set_up = t0.elapsed().as_secs_f64();
        for &(lines, name) in lineups {
            f.set_sep_lines(lines);
            // Without the prefetch (`mf_mapssbt_chain`) on one lineup of each case.
            let pfs: &[bool] = if name == "nowalk" || big { &[true, false] } else { &[true] };
            for &pf in pfs {
                f.set_sep_prefetch(pf);
                f.set_sep_chain(true);
                let what = format!("{} {name} pf={pf}", case.name);
                // At 160 001 cubic elements the system's conditioning (≈ N²) puts any solver's round-off
                // near 1e-9 of the solution, above `assert_equals_faer`'s 1e-10 (the lead's check failed
                // there at 7 columns, which do not chain): that case is checked bit for bit against the
                // unchained solve below, which equals faer's LU on the smaller cases.
                if let Some(r) = &reference {
                    for nrhs in [7, 32, 256] {
                        check_rows_against_ref(&be, &f, &case, r, nrhs);
                    }
                    if lines.is_some() {
                        check_columns_against_ref(&be, &f, &case, r, 256);
                    }
                }
                assert_equals_twins(&be, &rows, &format!("{what}: row-major, chained"), |k, b, x| f.solve_many_rows(&be, k, b, x));
                if lines.is_some() {
                    assert_equals_twins(&be, &cols, &format!("{what}: column-major, chained"), |k, b, x| f.solve_many(&be, k, b, x));
                }
                // With the default lines pass 1 of the 3001-element cases is walked (12 subtrees):
                // no chain there (round 23's device call failed here, on this expectation).
                let chains = f.chains_forward(&be, 256, true);
                if bulk_here && case.name.starts_with("seed") && (lines.is_some() || big) {
                    assert!(chains, "{what}: pass 1 is not chained into a 1D bottom pass");
                }
                for (blocks, width) in [(None, None), (Some(1), None), (None, Some(32)), (Some(1), Some(64))] {
                    f.set_pipe_blocks(blocks).unwrap();
                    f.set_subtree_shape(width.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
                    let what = format!("{what} {blocks:?} {width:?}");
                    assert_setting_bit_identical(&be, &mut f, n, &bs, &format!("{what}: the chain"), CudaMultifrontal::set_sep_chain);
                    let mut x = be.zeros(n * 256).unwrap();
                    let launches = f.solve_rows_profile(&be, 256, &bs[1].1, &mut x).unwrap();
                    let chained: Vec<_> = launches.iter().filter(|l| l.label == "forward 0+1").collect();
                    let chains = f.chains_forward(&be, 256, true);
                    assert_eq!(chained.len(), usize::from(chains), "{what}: chained launches {:?}", launches.iter().map(|l| &l.label).collect::<Vec<_>>());
                    if chains {
                        let k = &chained[0].kernel;
                        let p = if f.sep_prefetch() && k.starts_with("mf_mapssbt") { "p" } else { "" };
                        assert!(k.starts_with("mf_mapssb") && k.ends_with(&format!("{p}_chain")) && (f.sep_prefetch() || !k.ends_with("tp_chain")), "{what}: {k}");
                        assert!(!launches.iter().any(|l| l.label == "forward 1" || l.label == "forward 0"), "{what}: passes 0 and 1 also ran apart");
                        ran.push(format!("{} {name}", case.name));
                    }
                }
                f.set_pipe_blocks(None).unwrap();
                f.set_subtree_shape(None).unwrap();
            }
        }
        f.set_sep_chain(false);
        // Where the time goes (shown with --nocapture): the set-up (factorization, CPU twins, faer's reference) and the checks.
        eprintln!("chain checks {}: set-up {set_up:.2} s, all {:.2} s", case.name, t0.elapsed().as_secs_f64());
    }
    ran
}

/// Round 27: the row-major solve in place (`solve_many_rows_in_place`: `x` overwrites `b`, through
/// the separator rows compact or at dofs — `set_sep_in_x` —, where at dofs the bottom forward pass
/// copies no owned row; without stop 55's adds, `set_sep_bottom_adds(false)`) equals the out-of-place solve bit for bit and faer's LU to round-off at 1,
/// 32, 64 and 256 columns, with the default lines (64 × 2 walk items and the bottom backward
/// prefetch since round 28) and with round 20's 32 × 2 items without the prefetch, twice in a row on refilled right-hand sides, on 1D systems of degree
/// 1…5 with an odd number of elements and the 2D large-front cases; where the launches are not the
/// ones proven safe (a row-major register bottom kernel) it still equals through its scratch copy;
/// a wrong length is an error.
#[test]
fn gpu_in_place_solve_equals_the_out_of_place_one_and_faer_lu() {
    use galerkin::solver::multifrontal::cuda::WalkShape;
    let Some(be) = test_gpu() else { return };
    let (mut ran, mut scratch_ran) = (Vec::new(), 0);
    let cases = (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases());
    for case in cases {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(&be).unwrap();
        // The bit-for-bit in-place path (stop 55's adds, the default, are checked apart).
        f.set_sep_bottom_adds(false);
        // The 1D systems run in place; the 2D large-front cases leave nodes to the level-by-level
        // code, so they go through the scratch copy (the device found it, round 27's check).
        assert!(f.in_place_runs() || !case.name.starts_with("seed"), "{}: the default launches do not run in place", case.name);
        let n = case.sys.ndofs;
        let reference = FaerRef::new(&case, 256);
        let mut short = be.zeros(n * 2 - 1).unwrap();
        assert!(f.solve_many_rows_in_place(&be, 2, &mut short).is_err(), "{}: a wrong length solved in place", case.name);
        for (shape, back, name) in [(Some(WalkShape::round20(DEFAULT_COLUMN_THREADS)), false, "w32x2-nopf"), (None, true, "default")] {
            f.set_walk_shape(shape).unwrap();
            f.set_sep_back_prefetch(back);
            for sx in [false, true] {
                f.set_sep_in_x(sx);
                for nrhs in [1, 32, 64, 256] {
                    let what = format!("{} {name} sx {sx}, {nrhs} columns", case.name);
                    let b = iga_common::to_rows(&right_hand_sides(&case.sys, nrhs), n, nrhs);
                    let bd = be.from_host(&b).unwrap();
                    let mut x = be.zeros(n * nrhs).unwrap();
                    f.solve_many_rows(&be, nrhs, &bd, &mut x).unwrap_or_else(|e| panic!("{what}: {e}"));
                    let out = be.to_host(&x).unwrap();
                    let mut bx = be.zeros(n * nrhs).unwrap();
                    for round in 0..2 {
                        be.copy(&bd, &mut bx).unwrap();
                        f.solve_many_rows_in_place(&be, nrhs, &mut bx).unwrap_or_else(|e| panic!("{what} in place: {e}"));
                        assert!(be.to_host(&bx).unwrap() == out, "{what}, round {round}: in place differs from out of place");
                    }
                    reference.assert_equals(&case, nrhs, &iga_common::to_columns(&be.to_host(&bx).unwrap(), n, nrhs), &format!("{what} in place"));
                }
                if f.has_separator_layout() && case.name.starts_with("seed") {
                    ran.push(format!("{} {name} sx {sx}", case.name));
                }
            }
        }
        f.set_walk_shape(None).unwrap();
        f.set_sep_back_prefetch(true);
        // Not the launches proven in place: the cached scratch x, copied into b. Twice in a row at
        // each width, and 8 columns after 32 (a scratch wider than the solve): a stale or
        // mis-sized reuse of the scratch would differ.
        f.set_rows_bottom(RowsBottom::Columns);
        if !f.in_place_runs() {
            for nrhs in [32, 8] {
                let b = iga_common::to_rows(&right_hand_sides(&case.sys, nrhs), n, nrhs);
                let bd = be.from_host(&b).unwrap();
                let mut x = be.zeros(n * nrhs).unwrap();
                f.solve_many_rows(&be, nrhs, &bd, &mut x).unwrap();
                let x = be.to_host(&x).unwrap();
                for round in 0..2 {
                    let mut bx = be.from_host(&b).unwrap();
                    f.solve_many_rows_in_place(&be, nrhs, &mut bx).unwrap();
                    assert!(be.to_host(&bx).unwrap() == x, "{}: the scratch in-place solve differs ({nrhs} columns, round {round})", case.name);
                }
            }
            scratch_ran += 1;
        }
    }
    assert_every_degree_ran(&ran, &["w32x2-nopf sx false", "w32x2-nopf sx true", "default sx false", "default sx true"], "the in-place solve");
    assert!(scratch_ran > 0, "no case took the in-place solve's scratch path");
}

/// Stop 55: the in-place solve's default — the separator rows in `x` and every forward pass below
/// the walk adding its contributions there (`set_sep_bottom_adds`, on by default: those passes run
/// `mf_mapssbtpza_forward`, the tables hold none of their entries) — equals the out-of-place solve
/// to round-off (a row's adds land in any order) and faer's LU, at 1, 32, 64 and 256 columns, twice
/// in a row on refilled right-hand sides, with the rows in `x` asked for or not, on 1D systems of
/// degree 1…5 with an odd number of elements; with the adds off it is the out-of-place solve bit
/// for bit.
#[test]
fn gpu_bottom_adds_equal_the_default_and_faer_lu() {
    let Some(be) = test_gpu() else { return };
    let mut ran = Vec::new();
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(&be).unwrap();
        assert!(f.sep_bottom_adds() && !f.sep_in_x(), "{}: the defaults", case.name);
        let n = case.sys.ndofs;
        let reference = FaerRef::new(&case, 256);
        for nrhs in [1, 32, 64, 256] {
            let what = format!("{} adds, {nrhs} columns", case.name);
            let b = iga_common::to_rows(&right_hand_sides(&case.sys, nrhs), n, nrhs);
            let bd = be.from_host(&b).unwrap();
            let mut x = be.zeros(n * nrhs).unwrap();
            f.solve_many_rows(&be, nrhs, &bd, &mut x).unwrap_or_else(|e| panic!("{what}: {e}"));
            let out = be.to_host(&x).unwrap();
            // Adds off: in place is out of place, bit for bit.
            f.set_sep_bottom_adds(false);
            assert!(!f.bottom_adds_run(&be).unwrap(), "{what}: adds while off");
            let mut bx = be.from_host(&b).unwrap();
            f.solve_many_rows_in_place(&be, nrhs, &mut bx).unwrap_or_else(|e| panic!("{what} in place without adds: {e}"));
            assert!(be.to_host(&bx).unwrap() == out, "{what}: in place without adds differs from out of place");
            f.set_sep_bottom_adds(true);
            assert!(f.bottom_adds_run(&be).unwrap(), "{what}: the 1D case does not run the adds");
            let scale = out.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (sx, round) in [(false, 0), (false, 1), (true, 0)] {
                f.set_sep_in_x(sx);
                be.copy(&bd, &mut bx).unwrap();
                f.solve_many_rows_in_place(&be, nrhs, &mut bx).unwrap_or_else(|e| panic!("{what} in place: {e}"));
                let got = be.to_host(&bx).unwrap();
                let diff = got.iter().zip(&out).fold(0.0f64, |m, (a, c)| m.max((a - c).abs()));
                assert!(diff <= 1e-12 * scale, "{what}, sx {sx} round {round}: differs from out of place by {diff:.3e} (scale {scale:.3e})");
            }
            f.set_sep_in_x(false);
            reference.assert_equals(&case, nrhs, &iga_common::to_columns(&be.to_host(&bx).unwrap(), n, nrhs), &what);
            if nrhs == 256 && f.has_separator_layout() {
                be.copy(&bd, &mut bx).unwrap();
                let launches = f.solve_rows_in_place_profile(&be, nrhs, &mut bx).unwrap();
                // Every forward launch below the walk adds (forward 0 at least).
                let fwd: Vec<_> = launches.iter().filter(|l| !l.backward && !l.label.starts_with("walk")).collect();
                assert!(fwd.iter().any(|l| l.pass == 0), "{what}: no forward 0 launch");
                for l in fwd {
                    assert_eq!(l.kernel, "mf_mapssbtpza_forward", "{what}: {}", l.label);
                }
                ran.push(case.name.clone());
            }
        }
    }
    assert!(ran.len() >= 4, "the adds ran with a separator layout on {ran:?} only");
}

/// Round 28: the upper passes' contributions split over the parts of a column
/// (`set_sep_ext_split`: `mf_mapssbtpxs_forward`, `mf_mapssbxs_backward_*`; each part adds the
/// entries at its rows, staged in shared memory) equal the unsplit solve bit for bit (the same
/// additions in the same order) and faer's LU, on 1D systems of degree 1…5 and the 2D large-front
/// cases: with the default lines (the walk takes the small cases' upper passes: nothing to split
/// there) and with bulk lines, tensor cores and no staged contributions or walk (every pass with
/// external children launched alone: the split kernels run); 1, 2 and 4 threads a column (1, 2, 4
/// parts), both ways and backward only, row-major at 7, 78 and 256 columns (with the default
/// threads also chunks of 32 and 64 columns) and against faer's LU row-major at 1, 7, 32 and 256
/// and column-major at 256; the CPU twins at 77 and 78. The profile at 256
/// columns shows the split kernels wherever the dispatch rule chooses them (`-xs` in the bench).
#[test]
fn gpu_split_contributions_equal_faer_lu_and_the_unsplit_solve() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let lines = SepLines { bulk: true, ext_below: None, tc_forward: true, top: false };
    let mut ran = Vec::new();
    let mut ran_backward = 0;
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases()) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(f.sep_ext_split(), (true, true), "{}: the split is off by default (the default both ways since round 28)", case.name);
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let (rows, reference) = (cpu_twins(&case, true), FaerRef::new(&case, 256));
        let bs: Vec<_> = [7, 78, 256].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        for (lineup, name) in [(None, "default"), (Some(lines), "lines")] {
            f.set_sep_lines(lineup);
            for threads in [DEFAULT_COLUMN_THREADS, 1, 4] {
                f.set_column_threads(threads).unwrap();
                for (fw, bw) in [(true, true), (false, true)] {
                    let what = format!("{} {name} {threads} threads a column, split ({fw}, {bw})", case.name);
                    // Chunks of 32 and 64 columns (the column blocks capped or not) with the default threads a column.
                    let widths: &[_] = if threads == DEFAULT_COLUMN_THREADS { &[(None, None), (Some(32), Some(1)), (Some(64), None)] } else { &[(None, None)] };
                    for &(width, blocks) in widths {
                        f.set_subtree_shape(width.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
                        f.set_pipe_blocks(blocks).unwrap();
                        assert_setting_bit_identical(&be, &mut f, n, &bs, &format!("{what} {width:?} {blocks:?}"), |f, on| f.set_sep_ext_split(on && fw, on && bw));
                    }
                    f.set_subtree_shape(None).unwrap();
                    f.set_pipe_blocks(None).unwrap();
                    if threads == DEFAULT_COLUMN_THREADS {
                        for nrhs in [1, 7, 32, 256] {
                            check_rows_against_ref(&be, &f, &case, &reference, nrhs);
                        }
                        check_columns_against_ref(&be, &f, &case, &reference, 256);
                        assert_equals_twins(&be, &rows, &format!("{what}: row-major"), |k, b, x| f.solve_many_rows(&be, k, b, x));
                    }
                    let mut x = be.zeros(n * 256).unwrap();
                    let launches = f.solve_rows_profile(&be, 256, &bs[2].1, &mut x).unwrap();
                    let split: Vec<_> = launches.iter().filter(|l| l.kernel.contains("xs_")).collect();
                    for l in &split {
                        assert!(l.pass > 0 && (l.backward || fw), "{what}: {} ran {}", l.label, l.kernel);
                        assert_eq!(l.kernel, if l.backward { format!("mf_mapssbxs_backward_{}", &l.kernel[l.kernel.len() - 1..]) } else { "mf_mapssbtpxs_forward".to_string() }, "{what}: {}", l.label);
                    }
                    // With these lines the 1D cases' upper forward passes split (bulk copies: sm_90).
                    if lineup.is_some() && bulk_here && case.name.starts_with("seed") && fw {
                        assert!(split.iter().any(|l| !l.backward), "{what}: no forward split in {:?}", launches.iter().map(|l| (&l.label, &l.kernel)).collect::<Vec<_>>());
                        ran.push(format!("{} {name}", case.name));
                        ran_backward += split.iter().filter(|l| l.backward).count();
                    }
                }
            }
            f.set_column_threads(DEFAULT_COLUMN_THREADS).unwrap();
            f.set_sep_ext_split(true, true);
        }
    }
    assert_every_degree_ran(&ran, &["lines"], "the split contributions");
    assert!(!bulk_here || ran_backward > 0, "the backward split kernels never ran");
}

/// Rows of `C + 4` under the tensor-core forward (`set_sep_tc_rows4`, round 29:
/// `mf_mapssbtpl4_forward`, `mf_mapssbtpxsl4_forward`, the accumulators loaded and stored in the
/// order of the row's parity) give the default's solve bit for bit: 1D p = 1…5 and the 2D
/// large-front cases, row-major at 7, 64 and 256 columns, the contributions split forward or not,
/// chunks of the default width, of 32 (column blocks capped at 1) and of 64 columns; = faer's LU at
/// 256 columns with it on. The 64- and 256-column profiles name the new kernels wherever a forward
/// separator-row launch ran the tensor-core forward with bulk lines and prefetch, its plain twins
/// nowhere, the split one only with the split on; on sm_90 every degree's bottom pass ran them.
#[test]
fn gpu_tc_rows4_equal_the_default_bit_for_bit() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let mut ran = Vec::new();
    for case in (1..=5).map(|p| iga_common::seed_1d(p, 3001)).chain(large_front_cases()) {
        let mut f = CudaMultifrontal::factor(&be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert!(!f.sep_tc_rows4(), "{}: rows of C + 4 on by default (measured slower, stop 54)", case.name);
        // The untrimmed kernels (`mf_mapssbtpl4_forward`): the trimmed ones are the trim test's.
        f.set_sep_trim(false);
        f.prepare_maps(&be).unwrap();
        let n = case.sys.ndofs;
        let bs: Vec<_> = [7, 64, 256].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        for (fw, name) in [(true, "split"), (false, "unsplit")] {
            f.set_sep_ext_split(fw, true);
            for (width, blocks) in [(None, None), (Some(32), Some(1)), (Some(64), None)] {
                f.set_subtree_shape(width.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
                f.set_pipe_blocks(blocks).unwrap();
                assert_setting_bit_identical(&be, &mut f, n, &bs, &format!("{} {name} {width:?} {blocks:?}", case.name), |f, on| f.set_sep_tc_rows4(on));
            }
            f.set_subtree_shape(None).unwrap();
            f.set_pipe_blocks(None).unwrap();
            f.set_sep_tc_rows4(true);
            check_rows_against_faer(&be, &f, &case, 256);
            for (k, b) in &bs[1..] {
                let mut x = be.zeros(n * k).unwrap();
                let launches = f.solve_rows_profile(&be, *k, b, &mut x).unwrap();
                let what = format!("{} {name} {k} columns", case.name);
                let kernels: Vec<_> = launches.iter().map(|l| (l.label.as_str(), l.kernel.as_str(), l.pass, l.backward)).collect();
                for l in &launches {
                    assert!(l.kernel != "mf_mapssbtp_forward" && l.kernel != "mf_mapssbtpxs_forward", "{what}: {} ran {} with rows of C + 4 on", l.label, l.kernel);
                    if l.kernel.ends_with("l4_forward") {
                        assert!(!l.backward && (fw || l.kernel == "mf_mapssbtpl4_forward"), "{what}: {} ran {}", l.label, l.kernel);
                    }
                }
                if bulk_here && case.name.starts_with("seed") {
                    assert!(launches.iter().any(|l| l.pass == 0 && l.kernel == "mf_mapssbtpl4_forward"), "{what}: the bottom pass did not run mf_mapssbtpl4_forward: {kernels:?}");
                    ran.push(format!("{} {name}", case.name));
                }
            }
            f.set_sep_tc_rows4(false);
        }
        f.set_sep_ext_split(true, true);
    }
    assert!(!bulk_here || !ran.is_empty(), "rows of C + 4 never ran");
    if bulk_here {
        assert_every_degree_ran(&ran, &["split", "unsplit"], "rows of C + 4");
    }
}

/// A setup of the pipelined-chunk tests (rounds 29 and 30): lines, column blocks, forced chunk width.
type PipeSetup = (Option<SepLines>, Option<usize>, Option<usize>);

/// The pipelined-chunk tests' systems (the first the large one: 1D cubic, 160 001 elements, at
/// least TC_FEW_SUBTREES bottom subtrees as at 2^20; then 1D p = 1…5 of 3001 elements), each
/// factored with its maps and its row-major right-hand sides at 64, 77, 96, 256 and 300 columns,
/// and its setups: the large case as the default runs it (width 128 forced or not), the small ones
/// pass by pass with the column blocks capped at 1 and 2.
fn pipe_cases(be: &galerkin::backend::cuda::CudaBackend) -> impl Iterator<Item = (iga_common::Case, CudaMultifrontal, Vec<(usize, galerkin::backend::cuda::CudaVector)>, Vec<PipeSetup>)> + '_ {
    let nowalk = SepLines { top: false, ..SepLines::WALK };
    let cases = [iga_common::seed_1d(3, 160_001)].into_iter().chain((1..=5).map(|p| iga_common::seed_1d(p, 3001)));
    cases.enumerate().map(move |(i, case)| {
        let f = CudaMultifrontal::factor(be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(be).unwrap();
        let n = case.sys.ndofs;
        let bs = [64, 77, 96, 256, 300].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        let setups = if i == 0 { vec![(None, None, None), (None, None, Some(128))] } else { [Some(1), Some(2)].into_iter().flat_map(|y| [(Some(nowalk), y, None), (Some(nowalk), y, Some(128))]).collect() };
        (case, f, bs, setups)
    })
}

/// Applies a [`PipeSetup`] to `f`; its name in messages.
fn apply_pipe_setup(f: &mut CudaMultifrontal, case: &iga_common::Case, (lines, blocks, width): PipeSetup) -> String {
    f.set_sep_lines(lines);
    f.set_pipe_blocks(blocks).unwrap();
    f.set_subtree_shape(width.map(|threads| SubtreeShape { threads, cols: 1 })).unwrap();
    format!("{} lines {lines:?} blocks {blocks:?} width {width:?}", case.name)
}

/// Round 29: forward 0's 64-column chunks pipelined inside a block (`set_sep_pipe64`,
/// `mf_mapssbtp64_forward`, `MF_SEP_PIPE`: chunk k + 1's bulk copies in flight while chunk k is
/// multiplied and stored) equal the default solve bit for bit — per column the same products in
/// the same order — at 64 (one chunk: the default kernel runs), 77 (odd: cp.async lines, waited a
/// chunk), 96 (a short second chunk), 256 (four chunks) and 300 (five, the last short) columns: on a
/// 1D cubic system of 160 001 elements at the default's blocks (its bottom pass has at least
/// TC_FEW_SUBTREES subtrees, as at 2^20, so a block walks its subtree's chunks) and on 1D systems
/// of degree 1…5 (3001 elements, the lines pass by pass) with the column blocks capped at 1 and 2
/// (a block walks 2–5 chunks of its subtree, or every other one) and blocks of the default's threads
/// or 4 a column (chunks of 128 forced: 256 threads, the 2^20 shape). Row-major and, for the small
/// cases, column-major (the bottom pass's `b` by cp.async lines) = faer's LU at 256 columns; = the CPU
/// twins (77, 78). Where it applies (sm_90, more than 64 columns) the 256-column profile shows
/// `mf_mapssbtp64_forward` on forward 0 and nowhere else; off, never.
#[test]
fn gpu_pipelined_forward_chunks_equal_the_default_bit_for_bit() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let mut ran = Vec::new();
    for (i, (case, mut f, bs, setups)) in pipe_cases(&be).enumerate() {
        let large = i == 0;
        assert!(!f.sep_pipe64(), "{}: the pipelined chunks are on by default (measured slower, stop 54)", case.name);
        // The untrimmed kernel (`mf_mapssbtp64_forward`): the trimmed ones are the trim test's.
        f.set_sep_trim(false);
        let n = case.sys.ndofs;
        for setup in setups {
            let width = setup.2;
            let what = apply_pipe_setup(&mut f, &case, setup);
            assert_setting_bit_identical(&be, &mut f, n, &bs, &what, |f, on| f.set_sep_pipe64(on));
            let mut x = be.zeros(n * 256).unwrap();
            for on in [false, true] {
                f.set_sep_pipe64(on);
                let launches = f.solve_rows_profile(&be, 256, &bs[3].1, &mut x).unwrap();
                let piped: Vec<_> = launches.iter().filter(|l| l.kernel == "mf_mapssbtp64_forward").collect();
                for l in &piped {
                    assert!(on && l.label == "forward 0", "{what} {on}: {} ran {}", l.label, l.kernel);
                }
                if on && bulk_here {
                    assert_eq!(piped.len(), 1, "{what}: forward 0 not pipelined: {:?}", launches.iter().map(|l| (&l.label, &l.kernel)).collect::<Vec<_>>());
                    assert_eq!(piped[0].threads, if width.is_some() || large { 256 } else { 64 }, "{what}: the block's threads");
                    ran.push(what.clone());
                }
            }
        }
        f.set_sep_pipe64(true);
        if !large {
            check_both_layouts_against_faer(&be, &f, &case, 256);
        }
        assert_equals_twins(&be, &cpu_twins(&case, true), &format!("{}: pipelined, row-major", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
    }
    assert!(!bulk_here || ran.iter().any(|r| r.starts_with("seed p=3 N=160001 lines None blocks None width None")), "the default's shape never pipelined: {ran:?}");
    assert!(!bulk_here || ran.len() == 2 + 5 * 4, "some setups never pipelined: {ran:?}");
}

/// The default's backward kernel that `set_sep_pipe64_backward` replaces by its pipelined twin
/// (round 30: `mf_mapssbp0_backward_N` → `mf_mapssbp064_backward_N`, `mf_mapssbxs_backward_N` →
/// `mf_mapssbxs64_backward_N`, N = 2, 3), if `kernel` is one.
fn pipelined_backward_twin(kernel: &str) -> Option<String> {
    let (family, nb) = kernel.rsplit_once('_')?;
    let piped = match family {
        "mf_mapssbp0_backward" => "mf_mapssbp064_backward",
        "mf_mapssbxs_backward" => "mf_mapssbxs64_backward",
        _ => return None,
    };
    matches!(nb, "2" | "3").then(|| format!("{piped}_{nb}"))
}

/// Round 30: the backward passes' 64-column chunks pipelined inside a block
/// (`set_sep_pipe64_backward`: backward 0 by `mf_mapssbp064_backward_N`, the split upper passes by
/// `mf_mapssbxs64_backward_N`, N ≥ 2) equal the default solve bit for bit at 64, 77 (odd: cp.async
/// lines), 96, 256 and 300 columns, alone and with forward 0's (`-p64-p64b`), on round 29's cases
/// and setups: a 1D cubic system of 160 001 elements at the default's blocks (≥ TC_FEW_SUBTREES
/// bottom subtrees, as at 2^20) with the default width and 128 forced, and 1D p = 1…5 (3001
/// elements, the lines pass by pass) with the column blocks capped at 1 and 2. At 256 columns the
/// profile with it on runs the pipelined twin exactly where the rule says — every launch whose
/// default kernel has one and whose blocks walk several chunks (capped column blocks, or a pass of
/// at least TC_FEW_SUBTREES subtrees), on sm_90 — with the default's threads (at least 64), and
/// nowhere with it off; the large case's backward 0 runs it, and some split upper pass (the small
/// cases also run lines without staged contributions, whose upper passes then split). = faer's LU (row- and column-major) at
/// 256 columns and the CPU twins (77, 78) with it on.
#[test]
fn gpu_pipelined_backward_chunks_equal_the_default_bit_for_bit() {
    let Some(be) = test_gpu() else { return };
    let bulk_here = be.device().compute_capability.0 >= 9;
    let (mut ran, mut large_bottom) = (Vec::new(), false);
    // The upper passes of these cases have fewer than TC_FEW_SUBTREES subtrees, where the default
    // lines stage their contributions (no split): lines without the staging split them (NB ≥ 2).
    let split_lines = SepLines { top: false, ext_below: None, ..SepLines::WALK };
    for (i, (case, mut f, bs, mut setups)) in pipe_cases(&be).enumerate() {
        let large = i == 0;
        assert!(!f.sep_pipe64_backward(), "{}: the pipelined backward chunks are on by default (measured slower, stop 54)", case.name);
        let n = case.sys.ndofs;
        if !large {
            setups.extend([(Some(split_lines), Some(1), None), (Some(split_lines), Some(2), Some(128))]);
        }
        for setup in setups {
            let blocks = setup.1;
            let what = apply_pipe_setup(&mut f, &case, setup);
            assert_setting_bit_identical(&be, &mut f, n, &bs, &what, |f, on| f.set_sep_pipe64_backward(on));
            if large {
                assert_setting_bit_identical(&be, &mut f, n, &bs, &format!("{what} with -p64"), |f, on| {
                    f.set_sep_pipe64(on);
                    f.set_sep_pipe64_backward(on);
                });
            }
            let mut x = be.zeros(n * 256).unwrap();
            f.set_sep_pipe64_backward(false);
            let off = f.solve_rows_profile(&be, 256, &bs[3].1, &mut x).unwrap();
            f.set_sep_pipe64_backward(true);
            let on = f.solve_rows_profile(&be, 256, &bs[3].1, &mut x).unwrap();
            f.set_sep_pipe64_backward(false);
            let names = |ls: &[LaunchProfile]| ls.iter().map(|l| format!("{} {}", l.label, l.kernel)).collect::<Vec<_>>();
            assert_eq!(off.len(), on.len(), "{what}: {:?} against {:?}", names(&off), names(&on));
            assert!(off.iter().all(|l| !l.kernel.contains("64_backward")), "{what}: a pipelined backward kernel with it off: {:?}", names(&off));
            for (a, b) in off.iter().zip(&on) {
                assert_eq!((&a.label, a.pass, a.backward), (&b.label, b.pass, b.backward), "{what}");
                let twin = pipelined_backward_twin(&a.kernel).filter(|_| bulk_here && (blocks.is_some() || a.subtrees >= TC_FEW_SUBTREES));
                match twin {
                    Some(t) => {
                        assert_eq!(b.kernel, t, "{what}: {} ran {} (default {})", b.label, b.kernel, a.kernel);
                        assert_eq!(b.threads, a.threads.max(64), "{what}: {}'s threads", b.label);
                        ran.push(format!("{what} {}", b.label));
                        large_bottom |= large && b.label == "backward 0";
                    }
                    None => assert_eq!(a.kernel, b.kernel, "{what}: {} changed kernel", a.label),
                }
            }
        }
        f.set_sep_lines(None);
        f.set_pipe_blocks(None).unwrap();
        f.set_subtree_shape(None).unwrap();
        f.set_sep_pipe64_backward(true);
        if !large {
            check_both_layouts_against_faer(&be, &f, &case, 256);
        }
        assert_equals_twins(&be, &cpu_twins(&case, true), &format!("{}: backward pipelined, row-major", case.name), |k, b, x| f.solve_many_rows(&be, k, b, x));
    }
    assert!(!bulk_here || large_bottom, "the large case's backward 0 never pipelined: {ran:?}");
    assert!(!bulk_here || ran.iter().any(|r| !r.ends_with("backward 0")), "no split upper pass pipelined: {ran:?}");
}

/// Round 30: forward 0 without the zeroed Schur rows (`set_sep_trim`, `MF_SEP_TRIM`:
/// `mf_mapssbtp{,l4,64,64l4}z_forward` — not zeroed, not staged, the accumulators from +0.0 in
/// registers, the owned rows after max(eliminated, Schur) rows; the default since stop 54) equals
/// the untrimmed solve (round 30's default) bit for bit, alone and with rows of C + 4 (`set_sep_tc_rows4`), the pipelined chunks (`set_sep_pipe64`)
/// and both (the pipelined chunks then with rows of C + 4): at 64, 77 (odd: cp.async lines), 96
/// and 256 columns on a 1D cubic system of 160 001 elements at the default's blocks (at least
/// TC_FEW_SUBTREES bottom subtrees, as at 2^20) and on 1D p = 1…5 (3001 elements, the lines pass by
/// pass, column blocks capped at 2); row-major and column-major = faer's LU at 256 columns; = the
/// CPU twins (77, 78). Where it applies (sm_90) the 256-column profile names on forward 0 the
/// trimmed kernel of the settings, on no backward launch, and none with it off.
#[test]
fn gpu_trimmed_forward_equals_the_default_bit_for_bit() {
    let Some(be) = test_gpu() else { return };
    let mut ran = Vec::new();
    for (large, case, mut f) in forward0_cases(&be) {
        assert!(f.sep_trim(), "{}: the trimmed forward is off by default (the default since stop 54)", case.name);
        f.set_sep_trim(false);
        let n = case.sys.ndofs;
        let bs: Vec<_> = [64, 77, 96, 256].iter().map(|&k| (k, be.from_host(&iga_common::to_rows(&right_hand_sides(&case.sys, k), n, k)).unwrap())).collect();
        if !large {
            f.set_sep_lines(Some(SepLines { top: false, ..SepLines::WALK }));
            f.set_pipe_blocks(Some(2)).unwrap();
        }
        // The solve with every setting off (trim included): the reference of each combination.
        let reference: Vec<_> = bs
            .iter()
            .map(|(k, b)| {
                let mut x = be.zeros(n * k).unwrap();
                f.solve_many_rows(&be, *k, b, &mut x).unwrap();
                be.to_host(&x).unwrap()
            })
            .collect();
        for (ld4, pipe) in [(false, false), (true, false), (false, true), (true, true)] {
            let what = format!("{} ld4 {ld4} pipe {pipe}", case.name);
            f.set_sep_tc_rows4(ld4);
            f.set_sep_pipe64(pipe);
            assert_setting_bit_identical(&be, &mut f, n, &bs, &what, |f, on| f.set_sep_trim(on));
            f.set_sep_trim(true);
            for ((k, b), want) in bs.iter().zip(&reference) {
                let mut x = be.zeros(n * k).unwrap();
                f.solve_many_rows(&be, *k, b, &mut x).unwrap();
                assert!(be.to_host(&x).unwrap() == *want, "{what}, {k} columns: trimmed differs from the untrimmed solve");
            }
            let mut x = be.zeros(n * 256).unwrap();
            for on in [false, true] {
                f.set_sep_trim(on);
                let launches = f.solve_rows_profile(&be, 256, &bs[3].1, &mut x).unwrap();
                let trimmed: Vec<_> = launches.iter().filter(|l| l.kernel.ends_with("z_forward")).collect();
                for l in &trimmed {
                    assert!(on && !l.backward, "{what} {on}: {} ran {}", l.label, l.kernel);
                }
                if on && be.device().compute_capability.0 >= 9 {
                    let want = match (ld4, pipe) {
                        (false, false) => "mf_mapssbtpz_forward",
                        (true, false) => "mf_mapssbtpl4z_forward",
                        (false, true) => "mf_mapssbtp64z_forward",
                        (true, true) => "mf_mapssbtp64l4z_forward",
                    };
                    let names: Vec<_> = launches.iter().map(|l| (&l.label, &l.kernel)).collect();
                    assert!(launches.iter().any(|l| l.label == "forward 0" && l.kernel == want), "{what}: forward 0 did not run {want}: {names:?}");
                    ran.push(what.clone());
                }
            }
            f.set_sep_trim(true);
            if !large && ld4 == pipe {
                check_both_layouts_against_faer(&be, &f, &case, 256);
            }
            if ld4 && pipe {
                assert_equals_twins(&be, &cpu_twins(&case, true), &format!("{what}: trimmed, row-major"), |k, b, x| f.solve_many_rows(&be, k, b, x));
            }
            f.set_sep_trim(false);
        }
        f.set_sep_tc_rows4(false);
        f.set_sep_pipe64(false);
    }
    assert!(be.device().compute_capability.0 < 9 || ran.len() == 6 * 4, "some setups never ran the trimmed kernels: {ran:?}");
}

/// The forward-0 tests' systems, factored with their maps: first (`true`) a 1D cubic one of 160 001
/// elements (its bottom pass has at least TC_FEW_SUBTREES subtrees, as at 2^20: the default's blocks
/// walk their subtree's chunks), then 1D p = 1…5 at 3001 elements.
fn forward0_cases(be: &galerkin::backend::cuda::CudaBackend) -> impl Iterator<Item = (bool, iga_common::Case, CudaMultifrontal)> + '_ {
    let cases = [iga_common::seed_1d(3, 160_001)].into_iter().chain((1..=5).map(|p| iga_common::seed_1d(p, 3001)));
    cases.enumerate().map(move |(i, case)| {
        let f = CudaMultifrontal::factor(be, Arc::new(case.sym.clone()), &case.sys.matrices).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        f.prepare_maps(be).unwrap();
        (i == 0, case, f)
    })
}
