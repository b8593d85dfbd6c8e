//! `galerkin`: run TOML problem files, list compute devices, run benchmarks. A thin layer over the
//! library: every command is one library call plus printing.
use clap::{Args, Parser, Subcommand};
use galerkin::bench::{self, BenchCase};
use galerkin::backend::BackendKind;
use galerkin::operator::{Scatter, Tuning};
use galerkin::problem::{run_file, RunOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `println!` that treats a closed stdout (`galerkin run … | head`) as the end of the output: the
/// process exits quietly with status 0, as Unix tools do, instead of panicking. Outputs are
/// already written by the time anything is printed.
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*).and_then(|_| out.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

mod ceed_bench;
mod heat_bench;
mod hyper_bench;
mod hex_bench;
mod hex_mixed_bench;
mod dg_bench;
mod advection_bench;
mod supervise;

#[derive(Parser)]
#[command(name = "galerkin", version, about = "Finite elements on CPU cores and NVIDIA GPUs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What `run` and `invert` share: the problem file, the backend, the output directory.
#[derive(Args)]
struct ProblemArgs {
    /// The problem file (TOML).
    problem: PathBuf,
    /// Override the file's backend: cpu, cuda or auto.
    #[arg(long)]
    backend: Option<BackendKind>,
    /// Output directory (`invert`: also the chains' checkpoints).
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Solve a problem file and write VTU, report.json and residual.png.
    Run(ProblemArgs),
    /// Bayesian inversion of a heat problem file with `[camera]`, `[data]`, `[[parameter]]` and
    /// `[mcmc]` tables: chains CSV, trace/histogram/fit PNGs and report.json.
    Invert {
        #[command(flatten)]
        args: ProblemArgs,
        /// Go on from the checkpoints in --out.
        #[arg(long)]
        resume: bool,
        /// Stop each chain after this many iterations (checkpoints written; finish with --resume).
        #[arg(long)]
        stop_after: Option<usize>,
    },
    /// List the compute devices galerkin can use.
    Devices,
    /// Benchmark mesh/dof map, assembly and CG+Jacobi.
    Bench {
        /// Cases to run (default: all): poisson-p1-tet, poisson-p2-tet, elasticity-q1-hex.
        #[arg(long = "case")]
        cases: Vec<String>,
        /// Approximate problem sizes (unknowns), comma separated.
        #[arg(long, value_delimiter = ',', default_value = "10000,100000,1000000")]
        dofs: Vec<usize>,
        /// Cap on CG iterations per solve (the time per iteration is what is reported).
        #[arg(long, default_value_t = 200)]
        max_iter: usize,
        /// Also write the rows as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also run SpMV and CG on the first CUDA GPU (fails when there is none).
        #[arg(long)]
        gpu: bool,
        /// The CPU-vs-GPU matrix instead (needs a GPU): poisson/elasticity 2D/3D × degrees × --dofs,
        /// assembly and solve on both.
        #[arg(long)]
        matrix: bool,
        /// The whole CPU assembly as `run` builds it (reordered mesh, expression source, Dirichlet
        /// conditions), median and spread over --repeats: one row per --case NAME:N
        /// (p1-tet, p2-tet, p3-tet, q1-hex, q2-hex, q3-hex on n³ cubes, e.g. p1-tet:100).
        #[arg(long)]
        assembly: bool,
        /// Matrix problems (default: all): poisson-2d, poisson-3d, elasticity-2d, elasticity-3d.
        #[arg(long = "problem")]
        problems: Vec<String>,
        /// Degrees (matrix, DG, --ceed hexahedra): a list with ranges, e.g. `1,2,3` or `1..8`.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
        degrees: Vec<String>,
        /// CEED bake-off problems instead (bp1..bp6, comma separated): DoFs × CG iterations per
        /// second at each level on hexahedra of --degrees (and tetrahedra of --tet-degrees), sizes
        /// --dofs, CPU up to --cpu-max-dofs, and the GPU with --gpu.
        #[arg(long, value_delimiter = ',')]
        ceed: Vec<String>,
        /// --ceed: tetrahedron degrees (1 to 3; empty: none).
        #[arg(long, value_delimiter = ',')]
        tet_degrees: Vec<String>,
        /// --ceed: full and element levels only up to this many unknowns and this degree.
        #[arg(long, default_value_t = 2_000_000)]
        assembled_max_dofs: usize,
        #[arg(long, default_value_t = 4)]
        assembled_max_degree: usize,
        /// --ceed: CG iterations per timed GPU run (CPU runs last about 0.5 s) and timed runs.
        #[arg(long, default_value_t = 20)]
        iterations: usize,
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// --ceed: the DoF·it/s-against-degree plot (PNG).
        #[arg(long)]
        plot: Option<PathBuf>,
        /// --ceed: CPU `partial` batches summed per node through a node map instead of the
        /// colored scatter (`[assembly] cpu_gather = true`; by default from 8 threads at p ≥ 4,
        /// and p = 3 with Gauss points).
        #[arg(long, conflicts_with = "cpu_no_gather")]
        cpu_gather: bool,
        /// --ceed: CPU `partial` batches always by the colored scatter (`[assembly] cpu_gather =
        /// false`).
        #[arg(long)]
        cpu_no_gather: bool,
        /// --ceed: CPU `partial` batches scattered with their own colors (runs of 1–8 batches
        /// colored by shared nodes) instead of the mesh's cell blocks (`[assembly] cpu_batch_colors
        /// = true`).
        #[arg(long)]
        cpu_batch_colors: bool,
        /// --ceed: CPU `partial` batches through the quadrature points even where the apply on the
        /// nodes (Kronecker products of 1D matrices) applies (`[assembly] cpu_kronecker = false`).
        #[arg(long)]
        cpu_no_kronecker: bool,
        /// Matrix: run the CPU columns only up to this many unknowns.
        #[arg(long, default_value_t = 2_000_000)]
        cpu_max_dofs: usize,
        /// Matrix: GPU assembly column nodes per thread (tuning sweeps; default from the element).
        #[arg(long)]
        assembly_jb: Option<usize>,
        /// Matrix: shared-memory doubles of a patch (256 to 6144; tuning sweeps).
        #[arg(long)]
        patch_doubles: Option<usize>,
        /// Matrix: patch value pairs sorted by entry count per window (1: none; tuning sweeps).
        #[arg(long)]
        patch_sort_window: Option<usize>,
        /// Matrix: also time CG per iteration at these assembly levels (full, element, partial,
        /// none), each as the resident loop on the GPU; none by default. --ceed: the levels to run
        /// (default all four). --hex: CG per iteration of hierarchical elasticity and Poisson at
        /// these levels instead of the element-matrix table (full: scheme III + CSR).
        #[arg(long, value_delimiter = ',')]
        levels: Vec<String>,
        /// DG on an interval instead: assembly and solves (block Thomas, cyclic reduction, faer LU,
        /// CG) for N elements × --degrees, CPU, and the GPU with --gpu.
        #[arg(long)]
        dg: bool,
        /// Transient heat instead (the seed's Table 2): --steps backward-Euler steps of Jacobi-PCG
        /// in a two-material cube of P1 tetrahedra, sizes --dofs, at each of --levels (default
        /// full, element, none), CPU up to --cpu-max-dofs and the GPU with --gpu; --runs repeats.
        #[arg(long)]
        heat: bool,
        /// Hyperelasticity instead: Newton on a clamped cube of P_k tetrahedra (--degrees) with
        /// --law (usyk, svk, neo-hookean), sizes --dofs; assembly of residual and Jacobian, a linear
        /// solve, the whole run and the time per Newton step; one CPU thread up to
        /// --cpu1-max-dofs, all threads up to --cpu-max-dofs, the GPU with --gpu.
        #[arg(long)]
        hyperelastic: bool,
        /// Hyperelasticity's GPU kernel alone instead: its variants (trivial law, no scatter,
        /// launch shapes) timed at --dofs with --law, to see what bounds it (needs a GPU).
        #[arg(long)]
        hyper_kernel_sweep: bool,
        /// --hyper-kernel-sweep: only these variants, comma-separated names as printed (all
        /// where empty; e.g. one to profile with Nsight Compute).
        #[arg(long, default_value = "")]
        hyper_variants: String,
        /// --hyperelastic: the separate linear solve at the converged state up to this many
        /// unknowns only (the Newton run's solves are timed at every size).
        #[arg(long, default_value_t = usize::MAX)]
        solve_max_dofs: usize,
        /// --hyperelastic: the Newton systems' preconditioners, comma-separated, one row each
        /// (multigrid, block-jacobi).
        #[arg(long, default_value = "multigrid")]
        hyper_precond: String,
        /// --hyperelastic: extra `[loads]` keys of the problem, `;`-separated `key = value`
        /// (e.g. 'first_halvings = 2; predictor = "secant"'; README, hyperelasticity).
        #[arg(long, default_value = "")]
        hyper_loads: String,
        /// --hyperelastic / --hyper-kernel-sweep: the problem's `physics.quadrature` (full,
        /// stiffness); unset: the default rule (full) for --hyperelastic, both for the sweep.
        #[arg(long)]
        hyper_quadrature: Option<String>,
        /// --hyperelastic: stop each row after its setup (mesh, space, pattern, loads, the
        /// backend's assembly, the multigrid levels), timed by phase; no Newton run.
        #[arg(long)]
        hyper_setup_only: bool,
        /// --hyperelastic: the law.
        #[arg(long, default_value = "usyk")]
        law: String,
        /// --hyperelastic: one-thread CPU rows up to this many unknowns.
        #[arg(long, default_value_t = 100_000)]
        cpu1_max_dofs: usize,
        /// Element matrices of hierarchical hexahedra instead (the GPGPU matrix-forming seed's
        /// table): --cells hexahedra, elasticity of --degrees (e.g. 1..5), --modes trunk or full,
        /// --quadrature gauss or seed; one CPU core, all cores, the GPU schemes, CSR summation
        /// colored and atomic, and a hybrid CPU+GPU split. Needs a GPU.
        #[arg(long)]
        hex: bool,
        /// 2D upwind DG advection instead: whole runs (setup, assembly, GMRES + element block
        /// Jacobi) of a rotating flow on triangles of --degrees at --dofs, on one CPU core up to
        /// --single-core-max-dofs, all cores up to --cpu-max-dofs, and the GPU with --gpu.
        #[arg(long)]
        advection: bool,
        /// --advection: one-core runs up to this many unknowns.
        #[arg(long, default_value_t = 1_000_000)]
        single_core_max_dofs: usize,
        /// --advection: whole runs of the one-core column.
        #[arg(long, default_value_t = 1)]
        single_core_repeats: usize,
        /// --advection: relative tolerance of GMRES.
        #[arg(long, default_value_t = 1e-8)]
        rtol: f64,
        /// GMRES's many-vector operations on the GPU instead (x·v_j for k vectors, y += Σ c_j v_j),
        /// per --dofs, --vectors and --multi-shapes: medians of --runs, GB/s against copy.
        #[arg(long)]
        gram_schmidt: bool,
        /// --gram-schmidt: vector counts k.
        #[arg(long, value_delimiter = ',', default_value = "1,8,25,32")]
        vectors: Vec<usize>,
        /// --gram-schmidt: kernel shapes NAME[/VECTORS-A-LAUNCH] (s1, p1, p2, p4; 32 a launch unless given).
        #[arg(long, value_delimiter = ',', default_value = "s1,p1,p2,p4,p2/16,p4/16")]
        multi_shapes: Vec<String>,
        /// --hex: number of hexahedra.
        #[arg(long, default_value_t = 10_000)]
        cells: usize,
        /// --hex: trunk (serendipity) or full tensor-product modes.
        #[arg(long, default_value = "trunk")]
        modes: galerkin::fe::ModeSet,
        /// --hex: gauss ((p+1)³ points), seed (max(2, ⌈(3p−2)/2⌉)³ points) or gauss-lobatto.
        #[arg(long, default_value = "gauss")]
        quadrature: galerkin::fe::QuadratureKind,
        /// --hex: cells the CPU integrates per timing (scaled to all cells).
        #[arg(long, default_value_t = 2000)]
        cpu_cells: usize,
        /// --hex: also time scheme III in each launch shape (warps, tiles per warp, MMA shape).
        #[arg(long)]
        tiled_sweep: bool,
        /// --hex --tiled-sweep: only the first N shapes of the sweep (0: all; the time split is
        /// always run).
        #[arg(long, default_value_t = 0)]
        sweep_shapes: usize,
        /// --hex: a mesh of mixed degrees instead (e.g. `1,3`: half the cells of each, split by
        /// x): CPU, GPU schemes and hybrid with cells grouped by degree, against the
        /// highest-degree-everywhere assembly.
        #[arg(long)]
        mixed: Option<String>,
        /// --hex: also split the cells between every visible GPU (rows for 1 … all GPUs).
        #[arg(long)]
        multi_gpu: bool,
        /// --heat: time steps per run.
        #[arg(long, default_value_t = 50)]
        steps: usize,
        /// DG: numbers of elements.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000,1000000")]
        elements: Vec<usize>,
        /// DG and assembly: timed repetitions per measurement (median and spread reported; the
        /// assembly runs one warm-up first).
        #[arg(long, default_value_t = 7)]
        repeats: usize,
        /// DG: CPU columns up to this many elements.
        #[arg(long, default_value_t = 10_000_000)]
        cpu_max_elements: usize,
        /// DG: faer's sparse LU up to this many elements.
        #[arg(long, default_value_t = 1_000_000)]
        faer_max_elements: usize,
        /// DG: CG (block Jacobi, capped at --max-iter) up to this many elements.
        #[arg(long, default_value_t = 100_000)]
        krylov_max_elements: usize,
    },
    /// Benchmark the IGA multifrontal solver: 1D seed problem and 2D Poisson, CPU and GPU, against
    /// faer's sparse LU; many right-hand sides; the O(log N) model fit.
    BenchIga {
        /// Sweeps to run: 1d (sizes × degrees), 2d, rhs (many right-hand sides).
        #[arg(long, value_delimiter = ',', default_value = "1d,2d,rhs")]
        sweeps: Vec<String>,
        /// Degrees of the 1D sweep.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5")]
        degrees: Vec<usize>,
        /// 1D sizes (elements).
        #[arg(long, value_delimiter = ',', default_value = "16,64,256,1024,4096,16384,65536,262144,1048576,4194304,16777216")]
        elements: Vec<usize>,
        /// 2D sizes (elements per side of the unit square).
        #[arg(long, value_delimiter = ',', default_value = "16,32,64,128,256,512")]
        grid: Vec<usize>,
        /// Degrees of the 2D sweep.
        #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
        degrees_2d: Vec<usize>,
        /// Right-hand-side counts solved in one pass.
        #[arg(long, value_delimiter = ',', default_value = "1,16,256,1024")]
        rhs: Vec<usize>,
        /// 1D elements and degree of the right-hand-side sweep.
        #[arg(long, default_value_t = 1 << 20)]
        rhs_elements: usize,
        #[arg(long, default_value_t = 3)]
        rhs_degree: usize,
        /// 2D right-hand-side sweep instead: Poisson on the unit square, this many elements per side
        /// (0: the 1D sweep at --rhs-elements; no CPU engine in 2D).
        #[arg(long, default_value_t = 0)]
        rhs_grid: usize,
        /// GPU engines of the rhs sweep: gpu (automatic), gpu-levels, gpu-subtrees, gpu-subtrees-TxC, gpu-maps, gpu-maps-T
        /// (fused subtrees with T threads × C columns per thread; transfer maps with T columns per block),
        /// gpu-maps-blocks[-T], gpu-maps-pipe[-T], gpu-maps-tc[-T], gpu-maps-sep[-T], gpu-maps-sept[-T] (the maps'
        /// block-per-subtree, pipelined, tensor-core or separator-row kernels; -sep-split[-T]: a block per chunk
        /// of T columns; -sep-stream: the bottom pass through registers; -sep-lean: the bottom passes by warps
        /// (cp.async into each warp's shared memory; -leanf forward only, -leanb backward only); -sep-pipe[-T]: the passes of many subtrees
        /// pipelined, the next chunk's gather in flight; -sep[-pipe]-xK[-T]: K threads per column), gpu-fused (factorization and solve in one call, the forward pass inside the
        /// factorization's launches; its rows time the whole call), gpu-overlap (factorization and solve in one call,
        /// each pass's maps and forward sweep on a second stream beside the factorization; its rows time the whole call;
        /// gpu-overlap-joint: both maps of a pass in one launch before its forward sweep; gpu-overlap-flat: its streams
        /// at one priority), gpu-rows (the default's path with row-major right-hand sides and solutions,
        /// `CudaMultifrontal::solve_many_rows`; with gpu, a headline line per count compares both layouts;
        /// gpu-rows-reg: its bottom pass a thread per column, the rows in registers; gpu-rows-regtc: the same with
        /// the backward product on the tensor cores; gpu-rows-staged: by the staged separator-row kernels;
        /// gpu-rows-fused: the bottom subtrees' rows at implicit 1D places, all of a column's loads issued first,
        /// two columns per thread where the count is even; gpu-rows-fused1: the same, one column per thread;
        /// gpu-rows-[bulk][ext|ext2][tc] (at least one): the separator-row kernels bring whole lines by Hopper's bulk
        /// copies (bulk), stage the external contributions with the gather on every pass (ext) or on passes of
        /// fewer than 2048 subtrees (ext2), run the forward product on the tensor cores (tc), then optionally `top`
        /// with bulk: the passes near the root both ways in one launch by lines, e.g. gpu-rows-bulkext2tctop, the
        /// row-major default since round 20; gpu-rows-plain: round 12's plain kernels, the row-major default before;
        /// any row-major engine then optionally -wCxT: the line walk's items C columns (32, 64, 128) with T threads
        /// per column (1–4), e.g. gpu-rows-w32x4, gpu-rows-w32x2 (default 64 columns × 2 since round 28, 32 × 2 where
        /// that does not fit; where a named item does not fit, e.g. 2D separators, a note says so and the passes run
        /// one launch each), then optionally -topN: the walk over the passes of at most N subtrees only, the passes
        /// below one launch each way (round 29; default 512, e.g. gpu-rows-top64), then optionally -nopf: the
        /// tensor-core forward passes without round 22's index prefetch (the default since round 23; -pf, its old
        /// opt-in, is accepted and changes nothing; -nopf also turns off the backward prefetch), then optionally -bpf
        /// or -nobpf: the bulk bottom backward pass with its indices prefetched under the first chunk's copies, under
        /// a register cap (round 25; the default since round 28), or without, then
        /// optionally -chain: pass 1 chained into the bottom forward pass, one launch (round 23), then optionally -xs,
        /// -xsb or -noxs: the upper passes' contributions split over a column's threads both ways (the default since
        /// round 28), backward only, or not at all, then optionally -ld4: the tensor-core forward passes with rows
        /// of C + 4 and conflict-free accumulator accesses (round 29; bit-identical, 2.5 % slower on the H100), then optionally
        /// -p64: forward 0's chunks of 64 columns pipelined inside a block, double-buffered (round 29; 6 %
        /// slower on the H100; with -ld4, forward 0 pipelined keeps rows of C + 2), then optionally -p64b: the backward
        /// passes' chunks (backward 0 and the split upper passes, NB >= 2) pipelined likewise (round 30; 4 %
        /// slower on the H100; bit-identical; e.g. gpu-rows-p64b, gpu-rows-p64-p64b), then optionally -zs or -nozs: forward 0
        /// without the zeroed Schur rows, its accumulators from zero (round 30; the default since stop 54, so -zs
        /// changes nothing; bit-identical; with -p64 and -ld4 the pipelined chunks take rows of C + 4), or with them
        /// (-nozs, the default before), then optionally -sx:
        /// the separator rows kept in x itself, no owned-row stores in the bottom backward pass (round 26;
        /// not with -chain), then optionally -ip: solved in place, x overwriting b, b refilled outside the timed region
        /// (round 27; with -sx the bottom forward pass copies no owned row), e.g. gpu-rows-nopf,
        /// gpu-rows-w32x2-nobpf (the default before round 28), gpu-rows-noxs, gpu-rows-chain, gpu-rows-sx,
        /// gpu-rows-xsb-sx, gpu-rows-sx-ip, gpu-rows-ld4, gpu-rows-p64, gpu-rows-nozs, gpu-rows-ld4-p64-zs, gpu-rows-top64, gpu-rows-noxs-ld4-sx-ip;
        /// gpu-<lines> (e.g. gpu-bulkext2tctop, gpu-plain): as gpu, column-major, with those lines).
        #[arg(long, value_delimiter = ',', default_value = "gpu,gpu-levels,gpu-subtrees,gpu-maps,gpu-maps-pipe")]
        rhs_engines: Vec<String>,
        /// Timed repetitions per measurement (median and spread reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Largest problem (elements) for the CPU multifrontal and for faer's LU.
        #[arg(long, default_value_t = 1 << 22)]
        cpu_max: usize,
        #[arg(long, default_value_t = 1 << 20)]
        lu_max: usize,
        /// Degrees run at every size; the others stop at --partial-max elements.
        #[arg(long, value_delimiter = ',', default_value = "1,3,5")]
        full_degrees: Vec<usize>,
        #[arg(long, default_value_t = 1 << 22)]
        partial_max: usize,
        /// GPU large-front engines of the 1D/2D sweeps, each timed: auto (batched per level where
        /// the cost model says so), batched (every level), batched-K (levels with at least K fronts
        /// above 160 rows in one launch), per-node (cuSOLVER/cuBLAS per node).
        #[arg(long, value_delimiter = ',', default_value = "auto")]
        large_fronts: Vec<String>,
        /// Also run on the first CUDA GPU (fails when there is none).
        #[arg(long)]
        gpu: bool,
        /// Write the rows as JSON / the log-log plot as PNG.
        #[arg(long)]
        json: Option<PathBuf>,
        #[arg(long)]
        plot: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    galerkin::trace::note("main: start", 0.0);
    galerkin::process::trace_exit_handlers();
    let child = supervise::take_child_mark();
    let cli = Cli::parse();
    // `run` re-executes itself under a supervising parent that adds the process's exit to the
    // report (`supervise`); the child runs the problem as an unsupervised run does.
    if let Command::Run(args) = &cli.command {
        match (child, supervise::wanted()) {
            (true, _) => galerkin::process::mark_supervised(),
            (false, Err(e)) => {
                let _ = writeln!(std::io::stderr(), "error: {e}");
                return ExitCode::FAILURE;
            }
            (false, Ok(true)) => {
                if let Some(code) = supervise::supervise(&args.out) {
                    return code;
                }
            }
            (false, Ok(false)) => {}
        }
    }
    let done = run(cli);
    let clock = galerkin::process::boot_seconds().map(|s| format!(" (boot clock {s:.4} s)")).unwrap_or_default();
    galerkin::trace::note(&format!("main: end{clock}"), 0.0);
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed stderr cannot be reported anywhere: the exit status still says it.
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> galerkin::Result<()> {
    match cli.command {
        Command::Run(ProblemArgs { problem, backend, out, quiet }) => {
            let opts = RunOptions { backend, out_dir: out, progress: !quiet };
            // This process runs this one problem: its report counts the time since the process
            // started (phase `start`) and its teardown releases the CUDA context. What follows the
            // report is printing and `exit`: the run's data is freed in its timed teardown and the
            // report is on disk, so returning from `main` (Rust runs no destructors of statics;
            // the C library's exit flushes nothing of ours) costs no more than `process::exit`.
            galerkin::process::mark_main();
            let r = run_file(&problem, &opts)?;
            galerkin::trace::note("main: run returned", 0.0);
            say!("{}", if r.title.is_empty() { problem.display().to_string() } else { r.title.clone() });
            say!("  backend      {}", r.backend);
            for n in &r.notes {
                say!("  note         {n}");
            }
            say!("  mesh         {} cells ({}), {} vertices", r.mesh.cells, r.mesh.cell_type, r.mesh.vertices);
            say!("  space        {} degree {} x{} -> {} dofs", r.space.family, r.space.degree, r.space.components, r.space.dofs);
            say!("  assembly     {}, {:.1} MB stored, {} colors", r.assembly.level.name(), r.assembly.storage_bytes as f64 / 1e6, r.assembly.colors);
            say!(
                "  solver       {} + {}: {} iterations, relative residual {:.2e}",
                r.solver.method, r.solver.preconditioner, r.solver.iterations, r.solver.relative_residual
            );
            if let Some(e) = &r.errors {
                // DG advection reports no H1 seminorm (NaN).
                let h1 = if e.h1_semi.is_nan() { String::new() } else { format!(", H1 seminorm {:.3e}", e.h1_semi) };
                say!("  error        L2 {:.3e} (relative {:.3e}){h1}", e.l2, e.relative_l2);
            }
            let t = &r.timings;
            // Supervised, this process's total is not the report's: the parent prints the
            // report's (with the `supervisor` and `exit` phases) once it has rewritten it.
            let total = if galerkin::process::is_supervised() {
                format!("process {:.3}", t.total)
            } else {
                format!("total {:.3} ({:.3} in no phase)", t.total, t.unaccounted)
            };
            say!(
                "  time [s]     start {:.3}  setup {:.3}  mesh {:.3}  space {:.3}  assembly {:.3}  preconditioner {:.3}  solve {:.3}  errors {:.3}  output {:.3}  teardown {:.3}  {total}",
                t.start,
                t.setup, t.mesh, t.space, t.assembly, t.preconditioner, t.solve + t.solve_other, t.errors, t.output + t.points, t.teardown
            );
            if let Some(h) = r.memory.peak_host {
                let dev = r.memory.peak_device.map(|d| format!(", device {}", galerkin::memory::human(d))).unwrap_or_default();
                say!("  memory       peak host {}{dev}", galerkin::memory::human(h));
            }
            for o in &r.outputs {
                say!("  wrote        {} ({} bytes, sha256 {})", o.path.display(), o.bytes, &o.sha256[..16]);
            }
            Ok(())
        }
        Command::Invert { args: ProblemArgs { problem, backend, out, quiet }, resume, stop_after } => {
            let opts = galerkin::inverse::InvertOptions { backend, out_dir: out, progress: !quiet, resume, stop_after };
            let r = galerkin::inverse::run::run_file(&problem, &opts)?;
            say!("{}", if r.title.is_empty() { problem.display().to_string() } else { r.title.clone() });
            say!("  backend      {}", r.backend);
            for n in &r.notes {
                say!("  note         {n}");
            }
            let f = &r.forward;
            say!("  forward      {} cells, {} dofs, level {}, {} steps of {} s per run", f.cells, f.dofs, f.level, f.steps_per_run, f.dt);
            say!(
                "  sampling     {} runs, {:.4} s per run, {} PCG iterations ({:.3} ms each), {} re-integrated",
                f.runs, f.seconds_per_run, f.pcg_iterations, 1e3 * f.seconds_per_pcg_iteration, f.reintegrated
            );
            for (k, c) in r.chains.iter().enumerate() {
                say!("  chain {k}      {} iterations, {} samples, acceptance {:.3} (burn-in {:.3}), step {:?}", c.iterations, c.samples, c.acceptance_rate, c.burn_in_acceptance_rate, c.step);
            }
            for p in &r.parameters {
                match &p.posterior {
                    Some(s) => say!(
                        "  {:<12} mean {:.5e}, sd {:.3e}, 95% [{:.5e}, {:.5e}], ESS {:.0}, R-hat {:.3}{}",
                        p.name, s.mean, s.sd, s.interval95[0], s.interval95[1], s.ess, s.rhat,
                        p.truth.map(|t| format!(", truth {t:.5e} ({})", if p.truth_within_two_sd == Some(true) { "within 2 sd" } else { "NOT within 2 sd" })).unwrap_or_default()
                    ),
                    None => say!("  {:<12} no samples yet", p.name),
                }
            }
            if !r.complete {
                say!("  stopped      before the end: run again with --resume to finish");
            }
            let t = &r.seconds;
            say!("  time [s]     setup {:.3}  data {:.3}  sampling {:.3}  output {:.3}  total {:.3}", t.setup, t.data, t.sampling, t.output, t.total);
            for o in &r.outputs {
                say!("  wrote        {} ({} bytes)", o.path.display(), o.bytes);
            }
            Ok(())
        }
        Command::Devices => {
            let threads = rayon::current_num_threads();
            say!("cpu   {threads} threads, stream triad {:.1} GB/s", bench::stream_triad_gbs(1 << 24));
            match galerkin::backend::cuda::probe() {
                Err(why) => say!("cuda  none: {why}"),
                Ok(devices) => {
                    for d in devices {
                        let bw = galerkin::backend::cuda::CudaBackend::new(d.ordinal)
                            .and_then(|be| galerkin::backend::cuda::bench::bandwidth(&be));
                        let bw = match bw {
                            Ok(b) => format!("copy {:.0} GB/s, triad {:.0} GB/s", b.copy_gbs, b.triad_gbs),
                            Err(e) => format!("bandwidth not measured: {e}"),
                        };
                        say!(
                            "cuda  #{} {}: {:.1} GiB ({:.1} GiB free), compute capability {}.{}, {} SMs, {bw}",
                            d.ordinal,
                            d.name,
                            d.total_memory as f64 / (1u64 << 30) as f64,
                            d.free_memory as f64 / (1u64 << 30) as f64,
                            d.compute_capability.0,
                            d.compute_capability.1,
                            d.multiprocessors
                        );
                    }
                }
            }
            Ok(())
        }
        Command::BenchIga { sweeps, degrees, elements, grid, degrees_2d, rhs, rhs_elements, rhs_degree, rhs_grid, rhs_engines, reps, cpu_max, lu_max, full_degrees, partial_max, large_fronts, gpu, json, plot } => {
            use galerkin::bench::iga;
            if let Some(s) = sweeps.iter().find(|s| !["1d", "2d", "rhs"].contains(&s.as_str())) {
                return Err(galerkin::Error::invalid(format!("unknown sweep `{s}` (expected 1d, 2d or rhs)")));
            }
            let has = |s: &str| sweeps.iter().any(|x| x == s);
            let device = if gpu { Some(first_gpu()?.0) } else { None };
            let o = iga::IgaBenchOptions { sweep_1d: has("1d"), sweep_2d: has("2d"), sweep_rhs: has("rhs"), degrees, sizes_1d: elements, sizes_2d: grid, degrees_2d, rhs, rhs_elements, rhs_degree, rhs_grid, rhs_engines, reps, cpu_max, lu_max, full_degrees, partial_max, large_fronts };
            say!("cpu: {} threads; gpu: {}", rayon::current_num_threads(), device.as_ref().map_or("none".to_string(), |d| d.device().name.clone()));
            let r = iga::run(&o, device.as_ref(), |line| say!("{line}"))?;
            if let Some(c) = r.copy_gbs {
                say!("device copy bandwidth {c:.0} GB/s (measured in this run)");
            }
            for f in &r.fits {
                say!("fit p={}: t = {:.3e} + {:.3e} log2 N s for N = {}..{} (max relative residual {:.2})", f.degree, f.a_s, f.b_s, f.from, f.to, f.max_relative_residual);
            }
            if let Some(path) = json {
                galerkin::io::write_json(&path, &r)?;
            }
            if let Some(path) = plot {
                iga::plot(&path, &r, o.rhs_degree)?;
            }
            Ok(())
        }
        Command::Bench { ceed, degrees, tet_degrees, dofs, levels, cpu_max_dofs, assembled_max_dofs, assembled_max_degree, iterations, runs, gpu, json, plot, cpu_gather, cpu_no_gather, cpu_batch_colors, cpu_no_kronecker, .. } if !ceed.is_empty() => {
            let cfg = galerkin::bench::ceed::CeedConfig {
                problems: ceed.iter().map(|b| galerkin::bench::ceed::Bp::parse(b)).collect::<galerkin::Result<_>>()?,
                degrees: parse_degrees(&degrees)?,
                tet_degrees: parse_degrees(&tet_degrees)?,
                dofs,
                levels: if levels.is_empty() {
                    galerkin::operator::AssemblyLevel::ALL.to_vec()
                } else {
                    levels.iter().map(|l| galerkin::operator::AssemblyLevel::parse(l)).collect::<galerkin::Result<_>>()?
                },
                cpu_max_dofs,
                assembled_max_dofs,
                assembled_max_degree,
                iterations,
                runs,
                tuning: galerkin::operator::Tuning { cpu_gather: if cpu_no_gather { Some(false) } else { cpu_gather.then_some(true) }, cpu_batch_colors: cpu_batch_colors.then_some(true), cpu_kronecker: cpu_no_kronecker.then_some(false), ..Default::default() },
            };
            ceed_bench::run(&cfg, gpu, json, plot)
        }
        Command::Bench { hex: true, cells, degrees, modes, quadrature, cpu_cells, runs, json, tiled_sweep, sweep_shapes, mixed, multi_gpu, levels, .. } => {
            let cfg = galerkin::bench::hex::HexBenchConfig {
                cells,
                degrees: parse_degrees(&degrees)?,
                modes,
                quadrature,
                runs,
                cpu_cells,
                tiled_sweep,
                sweep_shapes,
            };
            if !levels.is_empty() {
                let levels = levels.iter().map(|l| galerkin::operator::AssemblyLevel::parse(l)).collect::<galerkin::Result<Vec<_>>>()?;
                return hex_bench::levels(&cfg, &levels, json);
            }
            hex_bench::dispatch(&cfg, mixed.as_deref(), multi_gpu, json)
        }
        Command::Bench { hyper_kernel_sweep: true, dofs, degrees, law, runs, hyper_quadrature, hyper_variants, .. } => {
            let cfg = galerkin::hyperelastic::bench::HyperBenchConfig { dofs, degrees: parse_degrees(&degrees)?, law, cpu_max_dofs: 0, cpu1_max_dofs: 0, runs, solve_max_dofs: 0, preconditioners: vec!["block-jacobi".into()], loads: Vec::new(), quadrature: hyper_quadrature, setup_only: false };
            let only: Vec<String> = hyper_variants.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
            hyper_bench::sweep(&cfg, &only)
        }
        Command::Bench { hyperelastic: true, dofs, degrees, law, cpu_max_dofs, cpu1_max_dofs, runs, gpu, json, solve_max_dofs, hyper_precond, hyper_loads, hyper_quadrature, hyper_setup_only, .. } => {
            let preconditioners = hyper_precond.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
            let loads = hyper_loads.split(';').map(|kv| kv.trim().to_string()).filter(|kv| !kv.is_empty()).collect();
            let cfg = galerkin::hyperelastic::bench::HyperBenchConfig { dofs, degrees: parse_degrees(&degrees)?, law, cpu_max_dofs, cpu1_max_dofs, runs, solve_max_dofs, preconditioners, loads, quadrature: hyper_quadrature, setup_only: hyper_setup_only };
            hyper_bench::run(&cfg, gpu, json)
        }
        Command::Bench { heat: true, dofs, steps, levels, cpu_max_dofs, runs, gpu, json, .. } => {
            let levels = if levels.is_empty() {
                vec![galerkin::operator::AssemblyLevel::Full, galerkin::operator::AssemblyLevel::Element, galerkin::operator::AssemblyLevel::None]
            } else {
                levels.iter().map(|l| galerkin::operator::AssemblyLevel::parse(l)).collect::<galerkin::Result<_>>()?
            };
            let cfg = galerkin::bench::heat::HeatBenchConfig { dofs, steps, levels, cpu_max_dofs, runs, dt: 1e-3 };
            heat_bench::run(&cfg, gpu, json)
        }
        Command::Bench { advection: true, dofs, degrees, cpu_max_dofs, single_core_max_dofs, single_core_repeats, repeats, rtol, gpu, json, .. } => {
            let cfg = galerkin::advection::bench::AdvectionBenchConfig { dofs, degrees: parse_degrees(&degrees)?, cpu_max_dofs, single_core_max_dofs, single_core_repeats, repeats, rtol };
            advection_bench::run(&cfg, gpu, json)
        }
        Command::Bench { gram_schmidt: true, dofs, vectors, multi_shapes, runs, .. } => gram_schmidt_bench(&dofs, &vectors, &multi_shapes, runs),
        Command::Bench { dg: true, elements, degrees, repeats, cpu_max_elements, faer_max_elements, krylov_max_elements, max_iter, gpu, json, .. } => {
            let cfg = galerkin::dg::bench::DgBenchConfig { repeats, cpu_max_elements, faer_max_elements, krylov_max_elements, krylov_max_iter: max_iter };
            dg_bench::run(&elements, &parse_degrees(&degrees)?, &cfg, gpu, json)
        }
        Command::Bench { matrix: true, problems, degrees, dofs, max_iter, json, cpu_max_dofs, assembly_jb, patch_doubles, patch_sort_window, levels, .. } => {
            let tuning = Tuning { scatter: Scatter::Atomic, columns_per_thread: assembly_jb, patch_doubles, patch_sort_window, ..Default::default() };
            let levels = levels.iter().map(|l| galerkin::operator::AssemblyLevel::parse(l)).collect::<galerkin::Result<Vec<_>>>()?;
            bench_matrix(&problems, &parse_degrees(&degrees)?, &dofs, max_iter, cpu_max_dofs, json, tuning, &levels)
        }
        Command::Bench { assembly: true, cases, repeats, json, .. } => bench_assembly(&cases, repeats, json),
        Command::Bench { cases, dofs, max_iter, json, gpu, .. } => {
            let device = if gpu {
                let (be, bw) = first_gpu()?;
                say!("gpu: {} — copy {:.0} GB/s, triad {:.0} GB/s (bytes read + written)", be.device().name, bw.copy_gbs, bw.triad_gbs);
                Some((be, bw.copy_gbs))
            } else {
                None
            };
            let cases = if cases.is_empty() {
                BenchCase::ALL.to_vec()
            } else {
                cases.iter().map(|c| BenchCase::parse(c)).collect::<galerkin::Result<Vec<_>>>()?
            };
            say!("memory bandwidth (stream triad): {:.1} GB/s, {} threads", bench::stream_triad_gbs(1 << 24), rayon::current_num_threads());
            say!("CG: median seconds per iteration of the resident loop, (max − min)/median over the timed runs; GB/s from the median, checked against the copy bandwidth measured in this run");
            say!(
                "{:<18} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12} {:>6} {:>10} {:>6} {:>8}",
                "case", "cells", "dofs", "nnz", "mesh+dof s", "assembly s", "matrix s", "elements/s", "iters", "s/iter", "spread", "CG GB/s"
            );
            let mut rows = Vec::new();
            for case in cases {
                for &n in &dofs {
                    let r = bench::run_case(case, n, max_iter, device.as_ref().map(|(be, c)| (be, *c)))?;
                    say!(
                        "{:<18} {:>9} {:>9} {:>10} {:>10.3} {:>10.3} {:>10.3} {:>12.3e} {:>6} {:>10.3e} {:>5.1}% {:>8.2}",
                        r.case, r.cells, r.dofs, r.nnz, r.mesh_dofmap_s, r.assembly_s, r.matrix_s, r.elements_per_s, r.iterations, r.seconds_per_iteration, 100.0 * r.cg.spread(), r.cg_gb_per_s
                    );
                    if let Some(g) = &r.gpu {
                        say!(
                            "{:<18}   gpu: SpMV {:.0} GB/s (cuSPARSE {:.0}), CG+Jacobi {} iters x {} runs, {:.3e} s/iter ({:.3e}–{:.3e}), {:.0} GB/s of {:.0} copy, {:.1}x the CPU iteration",
                            "", g.spmv_gb_per_s, g.cusparse_gb_per_s, g.iterations, g.cg.runs, g.seconds_per_iteration, g.cg.min, g.cg.max, g.cg_gb_per_s, g.copy_gb_per_s, g.speedup_per_iteration
                        );
                    }
                    rows.push(r);
                }
            }
            if let Some(path) = json {
                galerkin::io::write_json(&path, &rows)?;
            }
            Ok(())
        }
    }
}

/// `galerkin bench --assembly`: one line per case, whole assembly median and spread, and its parts.
fn bench_assembly(cases: &[String], repeats: usize, json: Option<PathBuf>) -> galerkin::Result<()> {
    use galerkin::bench::assembly::{run_case, AssemblyCase};
    if cases.is_empty() {
        return Err(galerkin::Error::invalid("bench --assembly needs at least one --case NAME:N (e.g. p1-tet:100)"));
    }
    let cases = cases.iter().map(|c| AssemblyCase::parse(c)).collect::<galerkin::Result<Vec<_>>>()?;
    println!("whole CPU assembly (full level) as `run` builds it, {} threads, median of {repeats} after a warm-up", rayon::current_num_threads());
    println!(
        "{:<8} {:>4} {:>9} {:>9} {:>10} {:>10} {:>19} {:>11} {:>8} {:>8} {:>8} {:>8} {:>6}",
        "case", "n", "cells", "dofs", "nnz", "assembly s", "min-max s", "elements/s", "color s", "matrix s", "load s", "dirich s", "load%"
    );
    let mut rows = Vec::new();
    for case in &cases {
        let r = run_case(case, repeats)?;
        println!(
            "{:<8} {:>4} {:>9} {:>9} {:>10} {:>10.4} {:>9.4}-{:<9.4} {:>11.3e} {:>8.4} {:>8.4} {:>8.4} {:>8.4} {:>6.1}",
            r.case, r.n, r.cells, r.dofs, r.nnz, r.assembly.median, r.assembly.min, r.assembly.max, r.elements_per_s,
            r.coloring_s, r.matrix_s, r.rhs_s, r.constraints_s, 100.0 * r.rhs_share
        );
        rows.push(r);
    }
    if let Some(path) = json {
        galerkin::io::write_json(&path, &rows)?;
    }
    Ok(())
}

/// Degrees from `--degrees` items: numbers or inclusive ranges `a..b`.
fn parse_degrees(items: &[String]) -> galerkin::Result<Vec<usize>> {
    let num = |s: &str| s.trim().parse::<usize>().map_err(|_| galerkin::Error::invalid(format!("degree `{s}` is not a whole number (give e.g. 3 or 1..8)")));
    let mut out = Vec::new();
    for item in items {
        match item.split_once("..") {
            Some((a, b)) => out.extend(num(a)?..=num(b)?),
            None => out.push(num(item)?),
        }
    }
    Ok(out)
}

/// The first CUDA GPU (an error saying why when there is none) and its measured bandwidth.
/// With `gpu`, the first GPU and its copy bandwidth (measured now), announced; then the CPU's
/// threads: the header of the benchmarks that sweep both.
pub(crate) fn gpu_with_banner(gpu: bool) -> galerkin::Result<Option<(galerkin::backend::cuda::CudaBackend, f64)>> {
    let device = if gpu {
        let (be, bw) = first_gpu()?;
        say!("gpu: {} — copy {:.0} GB/s (bytes read + written, measured in this run)", be.device().name, bw.copy_gbs);
        Some((be, bw.copy_gbs))
    } else {
        None
    };
    say!("cpu: {} threads", rayon::current_num_threads());
    Ok(device)
}

pub(crate) fn first_gpu() -> galerkin::Result<(galerkin::backend::cuda::CudaBackend, galerkin::backend::cuda::bench::Bandwidth)> {
    galerkin::backend::cuda::probe().map_err(|why| galerkin::Error::Backend { backend: "cuda".into(), message: why })?;
    let be = galerkin::backend::cuda::CudaBackend::new(0)?;
    let bw = galerkin::backend::cuda::bench::bandwidth(&be)?;
    Ok((be, bw))
}

/// `galerkin bench --gram-schmidt`: one line per (size, vectors, shape) as it completes.
fn gram_schmidt_bench(dofs: &[usize], ks: &[usize], shapes: &[String], runs: usize) -> galerkin::Result<()> {
    use galerkin::backend::cuda::multi::MultiShape;
    let shapes = shapes.iter().map(|s| MultiShape::parse(s)).collect::<galerkin::Result<Vec<_>>>()?;
    let (be, bw) = first_gpu()?;
    say!("gpu: {} — copy {:.0} GB/s; GMRES's many-vector operations, medians of {runs} (spread (max − min)/median); GB/s of (k+1)·8n (dots) and (k+2)·8n (combination) bytes", be.device().name, bw.copy_gbs);
    say!("{:>10} {:>3} {:>6} {:>10} {:>6} {:>7} {:>5} {:>10} {:>6} {:>7} {:>5} {:>8}", "n", "k", "shape", "dots ms", "spread", "GB/s", "copy", "add ms", "spread", "GB/s", "copy", "check");
    galerkin::bench::gram_schmidt::run(&be, bw.copy_gbs, dofs, ks, &shapes, runs, |r| {
        // (a figure above the copy rate is not printed: "at copy")
        let gbs = |g: Option<f64>| g.map_or(("at".into(), "copy".into()), |g| (format!("{g:.0}"), format!("{:.0}%", 100.0 * g / bw.copy_gbs)));
        let (d, a) = (gbs(r.dots_gbs), gbs(r.add_gbs));
        say!(
            "{:>10} {:>3} {:>6} {:>10.4} {:>5.1}% {:>7} {:>5} {:>10.4} {:>5.1}% {:>7} {:>5} {:>8.1e}",
            r.n, r.k, r.shape.name(), r.dots.median * 1e3, 100.0 * r.dots.spread(), d.0, d.1,
            r.add.median * 1e3, 100.0 * r.add.spread(), a.0, a.1, r.check
        );
    })?;
    Ok(())
}

/// `galerkin bench --matrix`: one line per (problem, degree, size), CPU columns up to `cpu_max`.
#[allow(clippy::too_many_arguments)]
fn bench_matrix(problems: &[String], degrees: &[usize], dofs: &[usize], cpu_iters: usize, cpu_max: usize, json: Option<PathBuf>, tuning: Tuning, levels: &[galerkin::operator::AssemblyLevel]) -> galerkin::Result<()> {
    use galerkin::bench::matrix::{self, MatrixProblem};
    let (be, bw) = first_gpu()?;
    say!("gpu: {} — copy {:.0} GB/s; cpu: {} threads", be.device().name, bw.copy_gbs, rayon::current_num_threads());
    let problems = if problems.is_empty() {
        MatrixProblem::ALL.to_vec()
    } else {
        problems.iter().map(|p| MatrixProblem::parse(p)).collect::<galerkin::Result<Vec<_>>>()?
    };
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3e}"));
    say!(
        "{:<14} {:>2} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5} {:>4} {:>9} {:>6} {:>5} {:>8} {:>6} {:>9} {:>9} {:>6} {:>6} {:>7} {:>7}",
        "problem", "k", "dofs", "nnz", "cpu mat s", "gpu atom", "gpu col", "gpu rows", "gpu patch", "atom%", "col", "el/s", "GF/s", "xflr", "gpu asm", "iters", "cpu slv s", "gpu slv s", "CG GB/s", "CG GF", "x mat", "x solve"
    );
    let mut rows = Vec::new();
    for &problem in &problems {
        for &degree in degrees {
            for &n in dofs {
                let r = matrix::run(problem, degree, n, &be, bw.copy_gbs, n <= cpu_max, cpu_iters, tuning, levels)?;
                say!(
                    "{:<14} {:>2} {:>9} {:>10} {:>9} {:>9.3e} {:>9.3e} {:>9} {:>9} {:>5} {:>4} {:>9.3e} {:>6.0} {:>5.2} {:>8.3} {:>6} {:>9} {:>9.3e} {:>6.0} {:>6.0} {:>7} {:>7}",
                    r.problem, r.degree, r.dofs, r.nnz, opt(r.cpu_matrix_s), r.gpu_matrix_atomic_s, r.gpu_matrix_colored_s, opt(r.gpu_matrix_rows_s), opt(r.gpu_matrix_patch_s),
                    r.patch_atomic_fraction.map_or("-".into(), |f| format!("{:.0}", 100.0 * f)), r.colors,
                    r.gpu_elements_per_s, r.gpu_assembly_gflops, r.assembly_over_floor, r.gpu_assembly_s, r.iterations, opt(r.cpu_solve_s),
                    r.gpu_solve_s, r.gpu_cg_gb_per_s, r.gpu_cg_gflops,
                    r.speedup_matrix.map_or("-".into(), |x| format!("{x:.0}")), r.speedup_solve.map_or("-".into(), |x| format!("{x:.0}"))
                );
                if let Some(c) = r.gpu_matrix_atomic_comp_s {
                    say!("{:<14} {:>2}   gpu atomic into compressible values {c:.3e} s ({:.3} of atomic)", "", "", c / r.gpu_matrix_atomic_s);
                }
                let levels: Vec<String> = r
                    .levels
                    .iter()
                    .map(|l| format!("{} {:.3e} s/it ({:.1} MB)", l.level, l.seconds_per_iteration, l.storage_bytes as f64 / 1e6))
                    .collect();
                if !levels.is_empty() {
                    say!("{:<14} {:>2}   CG+Jacobi per iteration: {}", "", "", levels.join(", "));
                }
                rows.push(r);
            }
        }
    }
    if let Some(path) = json {
        galerkin::io::write_json(&path, &rows)?;
    }
    Ok(())
}
