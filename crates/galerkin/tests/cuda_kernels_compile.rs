//! Compiles every CUDA kernel source to PTX with NVRTC alone (no driver, no GPU), so a broken kernel
//! is caught on any CI machine. Skips with a message when libnvrtc cannot be loaded, unless
//! GALERKIN_REQUIRE_NVRTC=1, which turns the skip into a failure.
use galerkin::backend::cuda::jit;

/// NVRTC is usable, or the test should stop here (after saying why).
fn nvrtc() -> bool {
    match jit::nvrtc_version() {
        Ok(_) => true,
        Err(reason) if std::env::var("GALERKIN_REQUIRE_NVRTC").is_ok_and(|v| v == "1") => {
            panic!("GALERKIN_REQUIRE_NVRTC=1 but NVRTC is unavailable: {reason}")
        }
        Err(reason) => {
            eprintln!("SKIPPED: no NVRTC: {reason}");
            false
        }
    }
}

#[test]
fn every_kernel_compiles_for_hopper_without_warnings() {
    if !nvrtc() {
        return;
    }
    let compiled = jit::compile_all_ptx("compute_90").unwrap_or_else(|e| panic!("{e}"));
    let files: Vec<&str> = compiled.iter().map(|(f, _)| f.as_str()).collect();
    let expected: Vec<&str> = jit::ALL_SOURCES.iter().map(|k| k.file).collect();
    assert_eq!(files, expected);
    for (file, bytes) in &compiled {
        assert!(
            *bytes > 500,
            "{file}: suspiciously small PTX ({bytes} bytes)"
        );
        eprintln!("{file}: {bytes} bytes of PTX for compute_90");
    }
}

#[test]
fn ptx_has_every_entry_point_with_wide_loads() {
    if !nvrtc() {
        return;
    }
    let ptx = |k: &jit::KernelSource| {
        jit::compile_ptx(k.file, k.source, "compute_90")
            .unwrap_or_else(|e| panic!("{e}"))
            .ptx
    };
    let vector = ptx(&jit::ALL_SOURCES[0]);
    for entry in [
        "vec_fill",
        "vec_scale",
        "vec_axpy",
        "vec_axpby",
        "vec_pointwise_mult",
        "vec_dot_partials",
        "vec_cg_update_partials",
        "vec_sum_partials",
        "vec_triad",
    ] {
        assert!(
            vector.contains(&format!(".entry {entry}(")),
            "vector.cu lacks {entry}"
        );
    }
    for shape in ["s1", "p1", "p2", "p4"] {
        for op in ["vec_dots_partials", "vec_add_combination"] {
            assert!(vector.contains(&format!(".entry {op}_{shape}(")), "vector.cu lacks {op}_{shape}");
        }
    }
    // The double2 path must compile to 16-byte loads and stores.
    assert!(
        vector.contains("ld.global.v2.f64") || vector.contains("ld.global.nc.v2.f64"),
        "no 16-byte loads in vector.cu"
    );
    assert!(
        vector.contains("st.global.v2.f64"),
        "no 16-byte stores in vector.cu"
    );
    assert!(
        vector.contains("shfl.sync.down"),
        "reductions should use warp shuffles"
    );
    let spmv = ptx(&jit::ALL_SOURCES[1]);
    for g in [4, 8, 16, 32] {
        assert!(
            spmv.contains(&format!(".entry spmv_csr_g{g}(")),
            "spmv.cu lacks the {g}-thread variant"
        );
    }
    assert!(
        spmv.contains("ld.global.nc.f64"),
        "x should be read through the read-only cache"
    );
    let bj = ptx(&jit::ALL_SOURCES[2]);
    for b in 1..=3 {
        assert!(
            bj.contains(&format!(".entry block_jacobi_b{b}(")),
            "block_jacobi.cu lacks b = {b}"
        );
    }
}

#[test]
fn multifrontal_kernels_have_every_entry_point() {
    if !nvrtc() {
        return;
    }
    let k = &jit::MULTIFRONTAL;
    let ptx = jit::compile_ptx(k.file, k.source, "compute_90").unwrap_or_else(|e| panic!("{e}")).ptx;
    for entry in ["mf_factor_warp", "mf_factor_block", "mf_zero_fronts", "mf_extend_add", "mf_forward_32", "mf_forward_160", "mf_backward_32", "mf_backward_160", "mf_rhs_start", "mf_rhs_extend_add", "mf_rhs_x", "mf_sub_forward_8_1", "mf_sub_forward_8_2", "mf_sub_forward_32_1", "mf_sub_backward_8_1", "mf_sub_backward_8_2", "mf_sub_backward_32_1", "mf_maps_setup_8", "mf_maps_setup_32", "mf_maps_setup_g_8", "mf_maps_setup_g_32", "mf_maps_setup_hk_8", "mf_maps_setup_hk_32", "mf_maps_forward", "mf_maps_backward_1", "mf_maps_backward_2", "mf_maps_backward_3", "mf_mapsp_forward", "mf_mapsp_backward_1", "mf_mapsp_backward_2", "mf_mapsp_backward_3", "mf_mapst_forward", "mf_mapst_backward_1", "mf_mapst_backward_2", "mf_mapst_backward_3", "mf_mapss_forward", "mf_mapss_backward_1", "mf_mapss_backward_2", "mf_mapss_backward_3", "mf_mapss_top"] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "multifrontal.cu lacks {entry}");
    }
    // The tensor-core map kernels: native m16n8k4 on sm_90, two m8n8k4 on sm_80, shuffles before.
    assert!(ptx.contains("mma.sync.aligned.m16n8k4.row.col.f64"), "no FP64 m16n8k4 on sm_90");
    let ptx80 = jit::compile_ptx(k.file, k.source, "compute_80").unwrap_or_else(|e| panic!("{e}")).ptx;
    assert!(ptx80.contains("mma.sync.aligned.m8n8k4.row.col.f64") && !ptx80.contains("m16n8k4"), "sm_80 needs the m8n8k4 pair");
    let ptx75 = jit::compile_ptx(k.file, k.source, "compute_75").unwrap_or_else(|e| panic!("{e}")).ptx;
    assert!(ptx75.contains(".entry mf_mapst_backward_2(") && !ptx75.contains("mma.sync"), "sm_75 has no FP64 mma");
}

/// The batched large-front kernels, the register-streamed bottom pass and the row-major bottom
/// pass a thread per column, round 16's and round 17's fused one with its four sizes (appended to
/// multifrontal.cu in one module) compile and keep every
/// multifrontal entry point besides their own.
#[test]
fn batched_multifrontal_kernels_have_every_entry_point() {
    if !nvrtc() {
        return;
    }
    let k = &jit::MULTIFRONTAL_BATCHED;
    let c = jit::compile_ptx(k.file, k.source, "compute_90").unwrap_or_else(|e| panic!("{e}"));
    let fused = ["36_1", "40_1", "36_2", "40_2"].iter().flat_map(|v| [format!("mf_rows_fused_forward_{v}"), format!("mf_rows_fused_backward_{v}")]);
    // Round 18's separator-row variants (bulk copies, staged contributions, both; the forward
    // product on the tensor cores with each).
    let lines = ["b", "e", "be"].iter().flat_map(|v| (1..=3).map(move |nb| format!("mf_mapss{v}_backward_{nb}")).chain([format!("mf_mapss{v}_forward")]));
    // Round 22: each of those with the store side's indices prefetched under the copies (…tp_forward).
    let tcf = ["", "b", "e", "be"].iter().flat_map(|v| [format!("mf_mapss{v}t_forward"), format!("mf_mapss{v}tp_forward")]);
    // Round 19's walk of the passes near the root by lines (staged contributions, ± tc forward).
    let walk = ["mf_mapssbe_top", "mf_mapssbet_top"].map(String::from);
    // Round 23: pass 1 chained into the bottom forward pass (bulk lines, ± tc forward, ± prefetch).
    let chain = ["mf_mapssb_chain", "mf_mapssbt_chain", "mf_mapssbtp_chain"].map(String::from);
    // Round 25: the bulk backward kernels of a row-major bottom pass with their indices prefetched
    // under the first chunk's copies (round 24's on every pass, `mf_mapss{b,be}p_backward_*`, are gone).
    let back_pref = (1..=3).map(|nb| format!("mf_mapssbp0_backward_{nb}"));
    // Round 28: the upper passes' contributions split over a column's parts (MF_SEP_XS).
    let split = ["mf_mapssbtpxs_forward".to_string()].into_iter().chain((1..=3).map(|nb| format!("mf_mapssbxs_backward_{nb}")));
    // Round 29: the tensor-core forward kernels with rows of C + 4 (MF_SEP_LD4), unsplit and split;
    // forward 0's chunks pipelined inside a block (MF_SEP_PIPE).
    let rows4 = ["mf_mapssbtpl4_forward", "mf_mapssbtpxsl4_forward", "mf_mapssbtp64_forward"].map(String::from);
    // Round 30: the backward kernels pipelined (backward 0 and the split upper passes, NB = 2 and 3);
    // forward 0 without the zeroed Schur rows (MF_SEP_TRIM): plain, C + 4, pipelined, both.
    let pipe_back = ["mf_mapssbp064_backward_", "mf_mapssbxs64_backward_"].iter().flat_map(|v| (2..=3).map(move |nb| format!("{v}{nb}")));
    let trim = ["mf_mapssbtpz_forward", "mf_mapssbtpl4z_forward", "mf_mapssbtp64z_forward", "mf_mapssbtp64l4z_forward"].map(String::from);
    // Stop 55: the trimmed forward adding its result rows into x in place (MF_SEP_ADDS).
    let adds = ["mf_mapssbtpza_forward".to_string()];
    let fused = fused.chain(lines).chain(tcf).chain(walk).chain(chain).chain(back_pref).chain(split).chain(rows4).chain(pipe_back).chain(trim).chain(adds);
    let named = ["mfb_factor", "mfb_forward", "mfb_backward", "mf_factor_block", "mf_extend_add", "mf_rhs_x", "mf_sub_forward_8_1", "mf_stream_forward", "mf_stream_backward_3", "mf_rows_forward", "mf_rows_backward", "mf_rows_backward_tc"];
    for entry in named.iter().map(|s| s.to_string()).chain(fused) {
        assert!(c.ptx.contains(&format!(".entry {entry}(")), "multifrontal_batched.cu lacks {entry}");
    }
    // The bulk variants move lines by the copy engine onto an mbarrier (sm_90).
    // The walk orders the lines other blocks stored before its bulk reads of them (proxy fence),
    // and stamps its items with the global timer where traced (round 20).
    for op in ["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", "mbarrier.try_wait.parity", "mbarrier.expect_tx", "fence.proxy.async.global", "%globaltimer"] {
        assert!(c.ptx.contains(op), "multifrontal_batched.cu for compute_90 lacks {op}");
    }
    // Round 25: the prefetched bottom backward kernels for 32 and 48 rows carry their register caps
    // (the resident blocks of mf_mapssb_backward_2 and _3 at 256 threads); the one for 16 rows none.
    // Round 28's split backward kernels (mf_mapssbxs_backward_*) carry the same caps.
    // Round 29: the pipelined forward kernel waits on two mbarriers, one a buffer, at a parity a chunk
    // pair: its body holds two inits and a parity wait.
    let body = c.ptx.split(".entry mf_mapssbtp64_forward(").nth(1).and_then(|r| r.split(".entry ").next()).unwrap_or_else(|| panic!("no mf_mapssbtp64_forward"));
    for (op, at_least) in [("mbarrier.init.shared::cta.b64", 2), ("mbarrier.try_wait.parity", 1), ("cp.async.bulk.shared::cluster.global", 1)] {
        assert!(body.matches(op).count() >= at_least, "mf_mapssbtp64_forward has fewer than {at_least} {op}");
    }
    // Round 30: the pipelined backward kernels likewise (two inits, a parity wait, bulk copies), under
    // their twins' caps; NB = 1 is not built (its registers cost blocks no cap gives back).
    for family in ["mf_mapssbp064_backward_", "mf_mapssbxs64_backward_"] {
        assert!(!c.ptx.contains(&format!(".entry {family}1(")), "{family}1 is built");
        for (nb, cap) in [(2, 4), (3, 3)] {
            let entry = format!(".entry {family}{nb}(");
            let rest = c.ptx.split(&entry).nth(1).unwrap_or_else(|| panic!("no {entry}"));
            let head = rest.split('{').next().unwrap_or_default();
            assert!(head.contains(".maxntid 256") && head.contains(&format!(".minnctapersm {cap}")), "{family}{nb}: {head}");
            let body = rest.split(".entry ").next().unwrap_or_default();
            for (op, at_least) in [("mbarrier.init.shared::cta.b64", 2), ("mbarrier.try_wait.parity", 1), ("cp.async.bulk.shared::cluster.global", 1)] {
                assert!(body.matches(op).count() >= at_least, "{family}{nb} has fewer than {at_least} {op}");
            }
        }
    }
    // Round 30: the trimmed kernels store no zeroed row and load no accumulator: fewer shared
    // accesses in their PTX than their untrimmed twins', the pipelined ones still on two mbarriers.
    let entry_body = |name: &str| c.ptx.split(&format!(".entry {name}(")).nth(1).and_then(|r| r.split(".entry ").next()).unwrap_or_else(|| panic!("no {name}"));
    for (trimmed, twin) in [("mf_mapssbtpz_forward", "mf_mapssbtp_forward"), ("mf_mapssbtpl4z_forward", "mf_mapssbtpl4_forward"), ("mf_mapssbtp64z_forward", "mf_mapssbtp64_forward")] {
        for op in ["st.shared.", "ld.shared."] {
            let (t, d) = (entry_body(trimmed).matches(op).count(), entry_body(twin).matches(op).count());
            assert!(t < d, "{trimmed} has {t} {op} against {twin}'s {d}");
        }
    }
    assert!(entry_body("mf_mapssbtp64l4z_forward").matches("mbarrier.init.shared::cta.b64").count() >= 2, "mf_mapssbtp64l4z_forward: two mbarriers");
    // Stop 55: the adds are f64 reductions to global memory, and its twin (the trimmed default) has none.
    assert!(entry_body("mf_mapssbtpza_forward").contains("red.global.add.f64") || entry_body("mf_mapssbtpza_forward").contains("atom.global.add.f64"), "mf_mapssbtpza_forward adds no f64 to global memory");
    assert!(!entry_body("mf_mapssbtpz_forward").contains("add.f64") || !entry_body("mf_mapssbtpz_forward").contains("red.global"), "mf_mapssbtpz_forward reduces to global memory");
    for family in ["mf_mapssbp0_backward_", "mf_mapssbxs_backward_"] {
        for (nb, cap) in [(1, None), (2, Some(4)), (3, Some(3))] {
            let entry = format!(".entry {family}{nb}(");
            let body = c.ptx.split(&entry).nth(1).and_then(|r| r.split('{').next()).unwrap_or_else(|| panic!("no {entry}"));
            let want = cap.map(|b| format!(".minnctapersm {b}"));
            assert_eq!(body.contains(".maxntid 256"), cap.is_some(), "{family}{nb}: {body}");
            assert!(want.as_ref().is_none_or(|w| body.contains(w.as_str())), "{family}{nb} lacks {want:?}: {body}");
        }
    }
}

#[test]
fn compile_error_names_the_file_and_line() {
    if !nvrtc() {
        return;
    }
    let src = "extern \"C\" __global__ void k(double* x) {\n  x[0] = undefined_symbol;\n}\n";
    let err = jit::compile_ptx("broken.cu", src, "compute_90")
        .expect_err("must not compile")
        .to_string();
    assert!(
        err.contains("broken.cu"),
        "error does not name the file: {err}"
    );
    assert!(
        err.contains("undefined_symbol"),
        "error does not carry the NVRTC log: {err}"
    );
    assert!(
        err.contains("broken.cu(2)"),
        "error does not point at line 2: {err}"
    );
}

#[test]
fn bad_architecture_is_an_error_not_a_panic() {
    let err = jit::compile_all_ptx("compute_9")
        .expect_err("invalid arch")
        .to_string();
    assert!(err.contains("compute_9"), "{err}");
}

/// 3 degrees × (2 physics in 1D, 5 on each of the 4 cell types in 2D/3D) = 66 cases.
#[test]
fn every_assembly_variant_compiles_without_warnings() {
    if !nvrtc() {
        return;
    }
    let variants = galerkin::operator::level::full::cuda::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(variants.len(), 66);
    assert!(variants.iter().any(|(v, _)| v.reftensor) && variants.iter().any(|(v, _)| v.affine && !v.reftensor));
    for (v, bytes) in &variants {
        assert!(*bytes > 2000, "{v:?}: suspiciously small PTX ({bytes} bytes)");
    }
    let largest = variants.iter().max_by_key(|(_, b)| *b).unwrap();
    eprintln!("{} assembly variants compiled; largest {:?} with {} bytes of PTX", variants.len(), largest.0, largest.1);
}

/// The same 66 cases at the `partial` and `none` levels (`kernels/matfree.cu`), the 18 simplex
/// cases at `partial` also with D_ref stored once per cell (`CELL_D`), and the 13 simplex cases
/// small enough for the thread-per-cell apply (`CELL_APPLY`) at `none` also without it.
#[test]
fn every_matrix_free_variant_compiles_without_warnings() {
    if !nvrtc() {
        return;
    }
    let variants = galerkin::operator::level::partial::cuda::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(variants.len(), 171);
    // Hierarchical hexahedra: signed restriction words; elasticity at p = 6 beyond 48 KB a cell.
    assert_eq!(variants.iter().filter(|(v, _)| v.contains("SIGNED_IDX=1")).count(), 8);
    assert_eq!(variants.iter().filter(|(v, _)| v.contains("DYN_SHARED=1")).count(), 2);
    assert_eq!(variants.iter().filter(|(v, _)| v.contains("CELL_APPLY=1")).count(), 26);
    assert!(variants.iter().any(|(v, _)| v.contains("TENSOR=1") && v.contains("NONE=1")));
    assert_eq!(variants.iter().filter(|(v, _)| v.contains("CELL_D=1")).count(), 18);
    assert!(variants.iter().any(|(v, _)| v.contains("TENSOR=0") && v.contains("NONE=0")));
    for (v, bytes) in &variants {
        assert!(*bytes > 2000, "{v}: suspiciously small PTX ({bytes} bytes)");
    }
    let largest = variants.iter().max_by_key(|(_, b)| *b).unwrap();
    eprintln!("{} matrix-free variants compiled; largest {} with {} bytes of PTX", variants.len(), largest.0, largest.1);
}

/// The bake-off kernel on hexahedra (`kernels/hex_matfree.cu`): Q1–Q8 (in two tests, each under a
/// minute), mass and diffusion, 1 and 3 components, Gauss q = p + 2 and p + 1, collocated
/// Gauss–Lobatto, the signed restriction of hierarchical bases, partial and none.
fn hexahedron_variants_compile(degrees: std::ops::RangeInclusive<usize>) {
    if !nvrtc() {
        return;
    }
    let n = degrees.clone().count();
    let variants = galerkin::operator::level::partial::hex_cuda::compile_variants("compute_90", degrees).unwrap_or_else(|e| panic!("{e}"));
    // Three unsigned rules and the signed restriction (hierarchical bases) on Gauss q = p + 1.
    assert_eq!(variants.len(), n * 4 * 4 * 2);
    for (v, bytes) in &variants {
        assert!(*bytes > 2000, "{v}: suspiciously small PTX ({bytes} bytes)");
    }
}

#[test]
fn hexahedron_matrix_free_variants_q1_to_q5_compile_without_warnings() {
    hexahedron_variants_compile(1..=5);
}

#[test]
fn hexahedron_matrix_free_variants_q6_to_q8_compile_without_warnings() {
    hexahedron_variants_compile(6..=8);
}

/// The QFunction twins compile on their own through the parity kernel, for every physics and
/// dimension (CI catches a twin that no longer compiles even where no GPU runs the parity test).
#[test]
fn qfunction_twins_compile() {
    if !nvrtc() {
        return;
    }
    for (qf, dim, ncomp) in [("Diffusion", 2, 1), ("Mass", 3, 3), ("Elasticity", 3, 3), ("Sum<Diffusion,Mass>", 1, 1), ("Sum<Elasticity,Mass>", 2, 2)] {
        let defines = [format!("QF={qf}"), format!("DIM={dim}"), format!("NCOMP={ncomp}")];
        let c = jit::compile_ptx_with(&jit::QF_PARITY, "compute_90", &defines).unwrap_or_else(|e| panic!("{qf}: {e}"));
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "{qf}: {}", c.log);
        assert!(c.ptx.contains(".entry qf_parity("), "{qf}");
    }
}

#[test]
fn dg_kernels_have_every_entry_point_for_blocks_2_to_7() {
    if !nvrtc() {
        return;
    }
    let dg = jit::ALL_SOURCES.iter().find(|k| k.file == "dg.cu").expect("dg.cu is in ALL_SOURCES");
    let ptx = jit::compile_ptx(dg.file, dg.source, "compute_90").unwrap_or_else(|e| panic!("{e}")).ptx;
    let names = galerkin::dg::cuda::entry_points();
    assert_eq!(names.len(), 8 * 6);
    for name in names {
        assert!(ptx.contains(&format!(".entry {name}(")), "dg.cu lacks {name}");
    }
}

/// The fixed-grid `none` kernel (`kernels/grid.cu`) for both lattices: Kuhn tetrahedra and hexahedra.
#[test]
fn lattice_variants_compile_without_warnings() {
    if !nvrtc() {
        return;
    }
    use galerkin::operator::level::none::grid_cuda;
    let variants = grid_cuda::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(variants.len(), 2);
    for (v, bytes) in &variants {
        assert!(*bytes > 2000, "{v}: suspiciously small PTX ({bytes} bytes)");
    }
    // The stencil lives in registers: the unrolled loops leave no local-memory array behind.
    for cell in [galerkin::mesh::CellType::Tetrahedron, galerkin::mesh::CellType::Hexahedron] {
        let defs = grid_cuda::variant_defines(cell).unwrap();
        let ptx = galerkin::backend::cuda::jit::compile_ptx_with(&galerkin::backend::cuda::jit::GRID, "compute_90", &defs).unwrap().ptx;
        assert!(!ptx.contains(".local"), "{cell:?}: the lattice kernel keeps its stencil in local memory");
    }
}

/// The element-integration schemes (`kernels/element_schemes.cu`) and the default assembly kernel
/// for hierarchical hexahedra: 11 cases, each in both sources, the other tiled shapes the
/// benchmark sweeps at trunk p = 4 and 5 and the eleventh and twelfth rounds' at p = 1–3 (cell
/// groups, prefetch, narrow tiles, wide writes, register caps; split moments; round 14's pipelined
/// cells, round 15's paired pipelined cells) with the packed default (a tiled
/// shape from p = 2), the p = 1 engine on the CUDA cores (`pair_lanes.cu`) in every swept shape,
/// none with `matrices_tiled` or `matrices_pair_lanes` in local memory.
#[test]
fn hierarchical_element_schemes_compile_without_warnings() {
    if !nvrtc() {
        return;
    }
    let variants = galerkin::operator::level::full::schemes::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    use galerkin::operator::level::full::schemes::TiledConfig;
    let round11: usize = [8, 20, 32].into_iter().map(|n| usize::from(TiledConfig::for_functions(n).lanes == 0) + TiledConfig::round11(n).len() + TiledConfig::round12(n).len() + TiledConfig::round13(n).len() + TiledConfig::round14(n).len() + TiledConfig::round15(n).len()).sum();
    // The p = 1 engine on the CUDA cores: every swept shape, and the first in full storage.
    let pair_lanes = TiledConfig::pair_lanes_shapes(8).len() + 1;
    assert_eq!(variants.len(), 22 + TiledConfig::sweep(50).len() - 1 + TiledConfig::sweep(74).len() - 1 + round11 + pair_lanes);
    assert!(variants.iter().any(|(v, _)| v.starts_with("pair_lanes.cu")), "the p = 1 engine compiles");
    for (v, bytes) in &variants {
        assert!(*bytes > 2000, "{v}: suspiciously small PTX ({bytes} bytes)");
    }
}

/// The error-norm kernel compiles with problem-file expressions built in: every function the
/// expression language has (values and Dual3 gradients), scalar and vector fields, 2D and 3D.
#[test]
fn error_norm_kernels_compile_with_expressions() {
    if !nvrtc() {
        return;
    }
    let src = |s: &str| galerkin::expr::Expr::parse(s).unwrap().cuda_source().unwrap().to_string();
    let every = src(
        "abs(x) + signum(y) + sin(x)*cos(y)*tan(z) + asin(x/9) + acos(y/9) + atan(z) + sinh(x) + cosh(y) + tanh(z) \
         + asinh(x) + acosh(2 + y^2) + atanh(z/9) + floor(x) + round(y) + ceil(z) + trunc(x) + fract(y) + exp(-x^2) \
         + sqrt(1 + y^2) + cbrt(z) + ln(2 + x^2) + log2(3 + y^2) + log10(4 + z^2) + x^y + 2^x + atan2(y, x) \
         + min(x, 1) + max(2, y) + pi*e - t",
    );
    for (dim, nv, nloc, nq, exprs) in [
        (3, 4, 4, 24, vec![every.clone()]),
        (2, 3, 6, 12, vec![src("x*y"), src("1.5")]),
        (3, 8, 27, 64, vec![src("x"), src("-y^2"), src("z*x")]),
    ] {
        let mut defines = vec![format!("DIM={dim}"), format!("NV={nv}"), format!("NLOC={nloc}"), format!("NQ={nq}"), format!("NCOMP={}", exprs.len())];
        defines.extend(exprs.iter().enumerate().map(|(c, s)| format!("U{c}={s}")));
        let c = jit::compile_ptx_with(&jit::NORMS, "compute_90", &defines).unwrap_or_else(|e| panic!("dim {dim}: {e}"));
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "dim {dim}: {}", c.log);
        assert!(c.ptx.contains(".entry error_norms("), "dim {dim}");
    }
}

/// The device load vector (`load.cu`) with sources as problem files give them: scalar and
/// vector, simplices (one Jacobian per cell) and hexahedra, 2D and 3D.
#[test]
fn load_kernels_compile_with_expressions() {
    if !nvrtc() {
        return;
    }
    let src = |s: &str| galerkin::expr::Expr::parse(s).unwrap().cuda_source().unwrap().to_string();
    for (dim, nv, nloc, nq, affine, exprs) in [
        (3, 4, 4, 4, 1, vec![src("3*pi^2*(1 + x^2)*sin(pi*x)*sin(pi*y)*sin(pi*z) - 2*x*pi*cos(pi*x)*sin(pi*y)*sin(pi*z)")]),
        (3, 4, 10, 14, 1, vec![src("x*y + t")]),
        (2, 3, 6, 6, 1, vec![src("x*y"), src("1.5")]),
        (3, 8, 27, 27, 0, vec![src("x"), src("-y^2"), src("exp(z*x)")]),
    ] {
        let mut defines = vec![format!("DIM={dim}"), format!("NV={nv}"), format!("NLOC={nloc}"), format!("NQ={nq}"), format!("NCOMP={}", exprs.len()), format!("AFFINE={affine}")];
        defines.extend(exprs.iter().enumerate().map(|(c, s)| format!("F{c}={s}")));
        let c = jit::compile_ptx_with(&jit::LOAD, "compute_90", &defines).unwrap_or_else(|e| panic!("dim {dim}: {e}"));
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "dim {dim}: {}", c.log);
        assert!(c.ptx.contains(".entry load_vector("), "dim {dim}");
    }
}

/// DG advection's kernels, as problems generate them: the assembly for every degree on triangles
/// and quadrilaterals (expression and per-cell velocities, several inflow data), and the element
/// block Jacobi for every block size a P0–P3 / Q0–Q3 space has.
#[test]
fn advection_kernel_variants_compile_without_warnings() {
    use galerkin::advection::cuda::{defines, ADVECTION, ADVECTION_BLOCKS};
    use galerkin::advection::problem::{AdvectionProblem, Tables, Velocity};
    use galerkin::advection::Formula;
    use galerkin::mesh::{generate, CellType};
    if !nvrtc() {
        return;
    }
    let clean = |k: &jit::KernelSource, d: &[String]| {
        let c = jit::compile_ptx_with(k, "compute_90", d).unwrap_or_else(|e| panic!("{} {d:?}: {e}", k.file));
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "{} {d:?}: {}", k.file, c.log);
        assert!(c.ptx.contains(".entry"), "{}: no entry points", k.file);
    };
    clean(&ADVECTION, &[]);
    let f = |s: &str| Formula::parse(s, "test").unwrap();
    for cell in [CellType::Triangle, CellType::Quadrilateral] {
        for k in 0..=3 {
            let mesh = std::sync::Arc::new(generate::rectangle(3, 3, [0.0, 0.0], [1.0, 1.0], cell).unwrap());
            let field = Velocity::field(f("-(y - 0.5)^2 + 1"), f("sin(pi*x) + 2")).unwrap();
            let per_cell = Velocity::PerCell(vec![[1.0, 0.5]; mesh.num_cells()]);
            for v in [field, per_cell] {
                let bc = vec![(1, f("x^2")), (3, f("exp(-y)"))];
                let p = AdvectionProblem::new(mesh.clone(), k, v, f("1 + x"), f("atan2(y, x + 1)"), bc, Some(f("1"))).unwrap();
                clean(&ADVECTION, &defines(&p, &Tables::new(cell, k, 0).unwrap()));
            }
        }
    }
    for b in [1, 3, 4, 6, 9, 10, 16] {
        clean(&ADVECTION_BLOCKS, &[format!("ADV_B={b}")]);
    }
}

/// The hyperelastic kernel for tetrahedra and hexahedra (3D) and triangles and quadrilaterals (plane
/// strain), degrees 1 and 2, every law, without warnings, with every entry point; its tensor-core
/// scheme for tetrahedra on Hopper and before.
#[test]
fn hyperelastic_kernel_variants_compile_without_warnings() {
    if !nvrtc() {
        return;
    }
    let v = galerkin::hyperelastic::cuda::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    // 24 column-pair variants and 6 tensor-core ones (P1/P2 tetrahedra, every law), each
    // tensor-core one with the fragment scatter too, the kernel sweep's 4 + 7 variants (among
    // them the eleventh pass's positions in shared memory, plain stores, consecutive atomics), and
    // the stiffness rule's 3 per tetrahedral element and law (column pairs, tensor cores in two shapes);
    // the twelfth pass's 4 per tensor-core variant (the residual in the GEMM with paired accesses,
    // two warps per cell alone, with both, and with the fragment scatter) and 3 of the sweep's;
    // the sixteenth pass's owner gather, 2 per tensor-core variant (its standard shape, 2 nodes per block).
    // The seventeenth pass's recomputing gather (`hyperelastic_recompute.cu`): P1/P2 tetrahedra,
    // both rules, every law, and 8 warps per block at P2: 15. The eighteenth pass's 5 per tensor-core
    // variant (persistent grid alone, with the prefetch, with the column scatter too, the column scatter
    // alone, two warps per cell with both), 1 per stiffness-rule tensor-core element and 3 of the sweep's: 39.
    // The nineteenth pass's products with the patches' scatter (`HK_PATCH`), 1 per tensor-core
    // element and rule: 12. The twentieth pass's law over a block's cells (`HK_LAW_WIDE`), 2 per
    // tensor-core element (its standard shape, 2 cells of one point a chunk) and 1 at the stiffness
    // rule: 18; the patches' slots filled in turn (`HK_PATCH_TURNS`), 1 per tensor-core element and rule: 12.
    // The twenty-first pass's upper-triangle scatter (`HK_UPPER`): 1 per tensor-core element with the
    // flat walk, 1 more at P2 with the column scatter, 1 per stiffness-rule tensor-core element: 15.
    // The twenty-second pass's staged blocks in Y's space (`HK_ST_Y`): 1 per tensor-core element
    // (`sty`'s defines) and 4 per stiffness-rule one (alone, two register caps, without scatter): 30.
    // The twenty-third pass's fused law (`HK_FUSE`): 2 per tensor-core element (`fuse`'s, and the
    // default's chunks with a register cap), 4 per stiffness-rule one (`fuse`'s, without scatter, with
    // the staged blocks in Y's space alone and with a register cap) and 2 more at P2 (the default's
    // chunks fused; `fuse`'s shape unfused): 42, 39 of them fused, 12 with `HK_ST_Y`.
    // Round 24, 4 per P2 stiffness-rule element (the default there — `fuse` with `HK_ST_Y` and 20
    // cells an SM — and its sweep's timing rows: no scatter, plain stores, 2 of every 5 rows): 12.
    // Round 25, the node-block scatter (`HK_SCATTER_BLOCKS`): 2 per P2 stiffness-rule element (the default's
    // and `tc cols`'s) and 2 per P2 element at the full rule (one and two warps a cell): 12 (21 with round 34's).
    // Round 26, the trimmed default (`HK_TRIM`): 3 per P2 stiffness-rule element (alone, scattering
    // node blocks, without the scatter): 9 (15 with round 34's two carried ones).
    // The thirty-first pass's gather over the staged law records (`HR_RECORDS`, 16 warps a block):
    // P1/P2 tetrahedra, both rules, every law: 12; and the default with the zeroing under the
    // kernel (`HK_ZERO_AHEAD`), 1 per stiffness-rule tensor-core element: 6, 3 of them fused with `HK_ST_Y` (P2).
    // The thirty-fourth pass's carried scatter (`HK_CHAIN`): 4 per P2 stiffness-rule element (the
    // default and the trimmed default, each alone and scattering node blocks): 12, all fused with `HK_ST_Y`.
    // Plane stress (`HL_PLANE_STRESS`, the local Newton on F₃₃ and the condensed form): the column-pair
    // variant of every 2D element and law: 12.
    assert_eq!(v.len(), 362);
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HL_PLANE_STRESS")).count(), 12, "the HL_PLANE_STRESS variants");
    // Its local Newton stays in registers as plane strain's arithmetic does (no local memory in either).
    for ps in [false, true] {
        let d = v.iter().find(|(d, _)| d.iter().any(|x| x == "DIM=2") && d.iter().any(|x| x == "NLOC=9") && d.iter().any(|x| x == "LAW=2") && d.iter().any(|x| x == "HL_PLANE_STRESS") == ps).expect("a Q2 fibre-law variant");
        let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &d.0).unwrap().ptx;
        assert!(ptx.contains(".entry hyper_assemble(") && !ptx.contains("__local_depot"), "plane {}: registers only", if ps { "stress" } else { "strain" });
        // The follower pressure's edge thickness (plane stress only): its two kernels.
        for entry in ["hyper_pressure_thickness", "hyper_pressure_thickness_jacobian"] {
            assert_eq!(ptx.contains(&format!(".entry {entry}(")), ps, "plane {}: {entry}", if ps { "stress" } else { "strain" });
        }
    }
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_CHAIN")).count(), 12, "the HK_CHAIN variants");
    // Its carry is in the kernel: the links read, the adds of the kept blocks fewer than without.
    let chain = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_CHAIN") && d.iter().any(|x| x == "LAW=2") && !d.iter().any(|x| x == "HK_SCATTER_BLOCKS")).expect("a carried fibre-law variant");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &chain.0).unwrap().ptx;
    assert!(ptx.contains(".entry hyper_assemble(") && ptx.contains("popc.b32") && !ptx.contains("__local_depot"), "HK_CHAIN: the links' counts, registers only");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x.starts_with("HK_ZERO_AHEAD"))).count(), 6, "the HK_ZERO_AHEAD variants");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HR_RECORDS")).count(), 12, "the HR_RECORDS variants");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_SCATTER_BLOCKS")).count(), 21, "the HK_SCATTER_BLOCKS variants");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_ST_Y")).count(), 81, "the HK_ST_Y variants");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_FUSE")).count(), 78, "the HK_FUSE variants");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_TRIM")).count(), 15, "the HK_TRIM variants");
    // The trimmed kernel: registers only (no local memory), F on the tensor cores too.
    let trim = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_TRIM") && d.iter().any(|x| x == "LAW=2") && d.iter().any(|x| x == "HK_SCATTER_COLS")).expect("a trimmed fibre-law variant");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &trim.0).unwrap().ptx;
    let body = &ptx[ptx.find(".entry hyper_assemble(").expect("hyper_assemble in the HK_TRIM variant")..];
    let body = &body[..body.find("\n}\n").unwrap_or(body.len())];
    assert!(!body.contains("__local_depot") && body.matches("mma.sync.aligned.m16n8k4").count() > 24, "HK_TRIM: registers only, F and K on the tensor cores");
    assert_eq!(v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_SCATTER_KEEP=2" || x == "HK_PLAIN_STORE") && d.iter().any(|x| x == "HK_FUSE")).count(), 6, "round 24's scatter bounds");
    // The fused law keeps its point record in registers: no local memory (`__local_depot`) in its kernel.
    let fuse = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_FUSE") && d.iter().any(|x| x == "NQ=4") && d.iter().any(|x| x == "NLOC=10") && d.iter().any(|x| x == "LAW=2")).expect("a fused P2 stiffness-rule variant");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &fuse.0).unwrap().ptx;
    let body = &ptx[ptx.find(".entry hyper_assemble(").expect("hyper_assemble in the HK_FUSE variant")..];
    let body = &body[..body.find("\n}\n").unwrap_or(body.len())];
    assert!(!body.contains("__local_depot") && body.contains("mma.sync.aligned.m16n8k4"), "HK_FUSE: registers only, the tensor-core products");
    // Its kernel adds the upper entries only; its passes are in every module of the source.
    let up = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_UPPER") && d.iter().any(|x| x == "HK_SCATTER_COLS")).expect("an upper-triangle variant with the column scatter");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &up.0).unwrap().ptx;
    assert!(ptx.contains(".entry hyper_upper_fill(") && ptx.contains(".entry hyper_upper_zero(") && ptx.contains(".global.add.f64"), "HK_UPPER: the adds and both passes");
    // The tensor-core patch variants are sized by the patch builder: a Kuhn cube's 210 slots at P2, 27 at P1.
    for (d, _) in v.iter().filter(|(d, _)| d.iter().any(|x| x == "HK_PATCH")) {
        let nslot = if d.iter().any(|x| x == "NLOC=10") { "NSLOT=210" } else { "NSLOT=27" };
        assert!(d.iter().any(|x| x == nslot), "{d:?}: {nslot}");
    }
    // The cells in turn add to the slots with plain shared adds: no shared atomics, the flush's global ones.
    let turns = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_PATCH_TURNS")).expect("a patch variant with the cells in turn");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &turns.0).unwrap().ptx;
    let body = &ptx[ptx.find(".entry hyper_assemble(").expect("hyper_assemble in the HK_PATCH_TURNS variant")..];
    let body = &body[..body[1..].find(".entry").map_or(body.len(), |e| e + 1)];
    assert!(!body.contains("atom.shared") && !body.contains("red.shared") && body.contains(".global.add.f64"), "HK_PATCH_TURNS: no shared atomics, global adds in the flush");
    // It sums the cells of a patch in shared memory, then adds to the CSR values (global atomics).
    let tp = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_PATCH") && !d.iter().any(|x| x == "HK_PATCH_TURNS")).expect("a tensor-core patch variant");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &tp.0).unwrap().ptx;
    assert!(ptx.contains(".shared.add.f64") && ptx.contains(".global.add.f64") && ptx.contains("mma.sync.aligned.m16n8k4"), "HK_PATCH: shared sums, global adds, tensor cores");
    // It stores every value and residual entry once: shared atomics only, no global ones.
    let rc = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_RECOMPUTE")).expect("a recomputing-gather variant");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::recompute::HYPERELASTIC_RECOMPUTE, "compute_90", &rc.0).unwrap().ptx;
    let body = &ptx[ptx.find(".entry hyper_recompute(").expect("hyper_recompute in the HK_RECOMPUTE variant")..];
    let body = &body[..body[1..].find(".entry").map_or(body.len(), |e| e + 1)];
    assert!(body.contains("atom.shared.add.f64") && !body.contains("atom.global") && !body.contains("red.global"), "hyper_recompute's adds");
    assert!(ptx.contains(".entry hyper_assemble("), "the residual alone: the tensor-core kernel in the same module");
    // The owner gather: the staging kernel and `hyper_gather`, whose sums stay in shared memory (no
    // global atomics in it: every value is stored once).
    let g = v.iter().find(|(d, _)| d.iter().any(|x| x == "HK_STAGE")).expect("an owner-gather variant");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &g.0).unwrap().ptx;
    let gather = &ptx[ptx.find(".entry hyper_gather(").expect("hyper_gather in the HK_STAGE variant")..];
    let gather = &gather[..gather[1..].find(".entry").map_or(gather.len(), |e| e + 1)];
    assert!(gather.contains("atom.shared.add.f64") && !gather.contains("atom.global") && !gather.contains("red.global"), "hyper_gather's adds");
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, "compute_90", &v[0].0).unwrap().ptx;
    for entry in ["hyper_assemble", "hyper_pressure_residual", "hyper_pressure_jacobian", "hyper_upper_zero", "hyper_upper_fill", "hyper_blocks_spmv", "hyper_blocks_to_csr"] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "hyperelastic.cu lacks {entry}");
    }
    // The tensor-core scheme: Hopper's m16n8k4, and the m8n8k4 pair before Hopper.
    let tc = v.iter().find(|(d, _)| d.iter().any(|x| x.starts_with("WPB="))).expect("a tensor-core variant");
    for (arch, shape) in [("compute_90", "m16n8k4"), ("compute_80", "m8n8k4")] {
        let c = jit::compile_ptx_with(&galerkin::hyperelastic::cuda::HYPERELASTIC, arch, &tc.0).unwrap();
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "{arch}: {}", c.log);
        assert!(c.ptx.contains(".entry hyper_assemble(") && c.ptx.contains(&format!("mma.sync.aligned.{shape}")), "{arch} lacks {shape}");
    }
}

/// The patch-reduced hyperelastic kernel (`hyperelastic_patch.cu`, after the law and the shared
/// prologue of `hyperelastic.cu`): P1/P2 tetrahedra, both rules, every law, cubes and single cells
/// as patches, at P2 2×2×2 cubes in batches of 12 cells (30 variants), the last also with the
/// sweep's defines (cells in turn, the scatter alone), without warnings, with its entry point and
/// the pressure kernels.
#[test]
fn hyperelastic_patch_kernel_compiles_without_warnings() {
    if !nvrtc() {
        return;
    }
    let v = galerkin::hyperelastic::patch::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.len(), 30);
    for extra in [&["HP_CELL_TURNS"][..], &["HP_SCATTER_ONLY"], &["HP_CELL_TURNS", "HP_SCATTER_ONLY"]] {
        let d: Vec<String> = v[v.len() - 1].0.iter().cloned().chain(extra.iter().map(|e| e.to_string())).collect();
        let c = jit::compile_ptx_with(&galerkin::hyperelastic::patch::HYPERELASTIC_PATCH, "compute_90", &d).unwrap();
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "{d:?}: {}", c.log);
    }
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::patch::HYPERELASTIC_PATCH, "compute_90", &v[0].0).unwrap().ptx;
    for entry in ["hyper_patch_assemble", "hyper_pressure_residual", "hyper_pressure_jacobian"] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "hyperelastic_patch.cu lacks {entry}");
    }
    assert!(!ptx.contains(".entry hyper_assemble("), "the patch module compiles no other scheme");
}

/// The moments scheme's hyperelastic kernel (`hyperelastic_moments.cu` with its products
/// `hyperelastic_moments.cuh`, after the law and the shared prologue and staged scatter of
/// `hyperelastic.cu`): P2 tetrahedra, both rules, every law, 1 and 2 cells per block, the sweep's
/// variants without the scatter and without the law (16 variants), without warnings, with its entry
/// point and the pressure kernels, no local memory (its moments and products stay in registers).
#[test]
fn hyperelastic_moments_kernel_compiles_without_warnings() {
    if !nvrtc() {
        return;
    }
    let v = galerkin::hyperelastic::moments::compile_variants("compute_90").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.len(), 16);
    let ptx = jit::compile_ptx_with(&galerkin::hyperelastic::moments::HYPERELASTIC_MOMENTS, "compute_90", &v[0].0).unwrap().ptx;
    for entry in ["hyper_moments_assemble", "hyper_pressure_residual", "hyper_pressure_jacobian"] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "hyperelastic_moments.cu lacks {entry}");
    }
    assert!(!ptx.contains(".entry hyper_assemble("), "the moments module compiles no other scheme");
    assert!(!ptx.contains(".local"), "the moments kernel spills to local memory");
}

/// The device sparsity pattern (`pattern.cu`) for the list capacities the host picks (32 to 1024)
/// with scalar and blocked dofs.
#[test]
fn pattern_kernels_compile_for_every_list_capacity() {
    if !nvrtc() {
        return;
    }
    for (npc, ncomp, cap) in [(4, 1, 32), (4, 1, 128), (10, 3, 256), (27, 1, 512), (64, 3, 1024), (3, 2, 64)] {
        let defines = galerkin::operator::level::full::pattern_cuda::defines(npc, ncomp, cap);
        let c = jit::compile_ptx_with(&jit::PATTERN, "compute_90", &defines).unwrap_or_else(|e| panic!("{defines:?}: {e}"));
        assert!(!c.log.to_ascii_lowercase().contains("warning"), "{defines:?}: {}", c.log);
        for entry in ["count_incidences", "fill_incidences", "row_lengths", "row_columns"] {
            assert!(c.ptx.contains(&format!(".entry {entry}(")), "{defines:?}: no {entry}");
        }
    }
}

/// The device box mesh (`box_mesh.cu`: Hilbert walk, scans, first-appearance renumbering).
#[test]
fn box_mesh_kernels_compile_without_warnings() {
    if !nvrtc() {
        return;
    }
    let c = jit::compile_ptx_with(&jit::BOX_MESH, "compute_90", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.log.to_ascii_lowercase().contains("warning"), "{}", c.log);
    for entry in ["scan_tile_sums", "scan_sums", "scan_tiles", "curve_in_box", "block_cells", "first_touch", "mark_first", "renumber", "fill_u32"] {
        assert!(c.ptx.contains(&format!(".entry {entry}(")), "box_mesh.cu lacks {entry}");
    }
}
