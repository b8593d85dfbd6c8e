//! `galerkin run` on a DG problem file: solve, then write the sampled solution (CSV, PNG), the
//! convergence table (JSON, PNG) when an exact solution is given, the residual history of a Krylov
//! solve and `report.json` — each file written whole or not at all.
use super::config::{DgFile, DgSetup};
use super::convergence::{study, ConvergenceTable};
use super::norms::{errors, DgErrors};
use super::output;
use super::solve::{solve_cpu, solve_cuda, DgSolution, DgTimings, DirectKind};
use crate::io::{self, OutputFile};
use crate::memory;
use crate::mesh::CellType;
use crate::operator::AssemblyLevel;
use crate::backend::AnyBackend;
use crate::problem::run::{
    AssemblyReport, ErrorReport, MemoryReport, MeshReport, PhaseTimes, Report, RunOptions, SolverReport, SpaceReport,
};
use crate::Result;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// The DG-specific `report.json`.
#[derive(Debug, Serialize)]
struct DgReport<'a> {
    title: &'a str,
    backend: String,
    notes: &'a [String],
    elements: usize,
    h_min: f64,
    h_max: f64,
    degree: usize,
    basis: &'static str,
    method: &'static str,
    epsilon: f64,
    penalty: super::method::Penalty,
    dofs: usize,
    /// Stored matrix values (3 N b²).
    stored: usize,
    solver: &'a str,
    preconditioner: &'a str,
    iterations: usize,
    relative_residual: f64,
    residual_history: &'a [f64],
    /// max |A − Aᵀ|/max |A| (CPU assembly).
    asymmetry: Option<f64>,
    errors: Option<DgErrors>,
    timings: DgTimings,
    convergence: Option<&'a ConvergenceTable>,
    memory: &'a MemoryReport,
    outputs: &'a [OutputFile],
}

/// Refuses a problem that cannot fit, before the mesh is built: host memory, and device memory on
/// the GPU.
fn check_memory(file: &DgFile, gpu: Option<&crate::backend::cuda::CudaBackend>) -> Result<MemoryReport> {
    let (n, k, q, sampled) = file.shape();
    let (host, device) = super::problem::memory_estimate(n, k, q, sampled, gpu.is_some());
    let available = memory::host_available();
    memory::check("host", &host, available.as_ref())?;
    if let (Some(be), Some(device)) = (gpu, device) {
        let (free, _) = be.memory_info()?;
        let avail = memory::Available { bytes: free as f64, source: format!("free memory of {}", be.device().name) };
        memory::check("GPU", &device, Some(&avail))?;
    }
    Ok(MemoryReport { estimate: host.total(), available: available.map(|a| a.bytes), ..Default::default() })
}

/// Runs a DG problem file's text (`path` names it in errors). Everything is checked before the
/// output directory is locked; outputs are published as `problem::run` does: the old report
/// removed, each file written whole, the report (listing them with sizes and hashes) last.
pub fn run_text(text: &str, path: &Path, opts: &RunOptions) -> Result<Report> {
    let t_start = Instant::now();
    let file = DgFile::parse(text, &path.display().to_string())?;
    let mut notes = Vec::new();
    let solver_kind = file.solver.method;
    let thomas = solver_kind == super::config::MethodKey::Direct && file.solver.direct == DirectKind::Thomas;
    let capable = if thomas { Err("block Thomas runs on the CPU".to_string()) } else { Ok(()) };
    let engine = AnyBackend::select(opts.backend.unwrap_or(file.backend), capable, &mut notes)?;
    let gpu = match &engine {
        AnyBackend::Cuda(be) => Some(be.as_ref()),
        AnyBackend::Cpu(_) => None,
    };
    let memory = check_memory(&file, gpu)?;
    let setup = file.setup()?;
    let out_dir = io::OutputDir::lock(&opts.out_dir)?;
    if !out_dir.removed_temporaries.is_empty() {
        notes.push(format!("removed {} temporary file(s) of an interrupted earlier run", out_dir.removed_temporaries.len()));
    }
    let DgSetup { problem: p, exact, solver } = &setup;
    let sol: DgSolution = match gpu {
        Some(be) => solve_cuda(be, p, solver)?,
        None => solve_cpu(p, solver)?,
    };
    let errs = exact.as_ref().map(|e| errors(p, &sol.coefficients, e)).transpose()?;
    let out = out_dir.path();
    let o = &file.output;
    let t_out = Instant::now();
    let table = match exact {
        Some(e) if o.convergence > 0 => Some(study(p, e, o.convergence, solver, gpu)?),
        _ => None,
    };
    out_dir.remove("report.json")?;
    let mut paths = Vec::new();
    if o.csv || o.plot {
        let samples = output::sample(p, &sol.coefficients, exact.as_ref(), o.samples_per_element, o.max_sampled_elements)?;
        if o.csv {
            let path = out.join(format!("{}.csv", o.name));
            output::write_csv(&path, &samples)?;
            paths.push(path);
        }
        if o.plot {
            let path = out.join(format!("{}.png", o.name));
            let error_path = out.join(format!("{}-error.png", o.name));
            let title = format!("{} k = {}, {} elements", p.method.name().to_uppercase(), p.degree, p.mesh.len());
            paths.extend(output::plot(&path, &error_path, &title, &samples)?);
        }
    }
    if let Some(t) = &table {
        if o.plot {
            paths.extend(t.write(out)?);
        } else {
            let path = out.join("convergence.json");
            io::write_json(&path, t)?;
            paths.push(path);
        }
    }
    if o.plot && sol.stats.residual_history.len() > 2 {
        let path = out.join("residual.png");
        io::plot_residual_history(&path, &format!("{} residual", sol.solver), &[(sol.solver.as_str(), &sol.stats.residual_history)])?;
        paths.push(path);
    }
    let outputs = paths.iter().map(|p| io::file_record(p)).collect::<Result<Vec<OutputFile>>>()?;
    let t = &sol.timings;
    let times = PhaseTimes {
        mesh: 0.0,
        space: t.sample + t.upload,
        assembly: t.assembly,
        preconditioner: t.setup,
        solve: t.solve + t.download,
        output: t_out.elapsed().as_secs_f64(),
        total: t_start.elapsed().as_secs_f64(),
        ..Default::default()
    };
    notes.push(format!(
        "DG {} (ε = {}), {} basis, σ = {} ({:?} in k, h: {:?}); sampling and upload counted under `space`",
        p.method.name().to_uppercase(),
        p.method.epsilon(),
        p.basis.name(),
        p.penalty.sigma,
        p.penalty.degree,
        p.penalty.h
    ));
    if o.report {
        let r = DgReport {
            title: &file.title,
            backend: engine.name(),
            notes: &notes,
            elements: p.mesh.len(),
            h_min: p.mesh.h_min(),
            h_max: p.mesh.h_max(),
            degree: p.degree,
            basis: p.basis.name(),
            method: p.method.name(),
            epsilon: p.method.epsilon(),
            penalty: p.penalty,
            dofs: p.ndofs(),
            stored: sol.stored,
            solver: &sol.solver,
            preconditioner: &sol.preconditioner,
            iterations: sol.stats.iterations,
            relative_residual: sol.stats.relative_residual,
            residual_history: &sol.stats.residual_history,
            asymmetry: sol.asymmetry,
            errors: errs,
            timings: sol.timings,
            convergence: table.as_ref(),
            memory: &memory,
            outputs: &outputs,
        };
        io::write_json(out.join("report.json"), &r)?;
    }
    Ok(Report {
        title: file.title.clone(),
        backend: engine.name(),
        notes,
        mesh: MeshReport { cell_type: CellType::Interval, cells: p.mesh.len(), vertices: p.mesh.len() + 1, dim: 1 },
        space: SpaceReport { family: "dg".into(), degree: p.degree, components: 1, dofs: p.ndofs() },
        assembly: AssemblyReport { level: AssemblyLevel::Full, storage_bytes: sol.stored * 8, colors: 0, dirichlet_dofs: 0 },
        solver: SolverReport {
            method: sol.solver.clone(),
            preconditioner: sol.preconditioner.clone(),
            iterations: sol.stats.iterations,
            initial_residual: sol.stats.initial_residual,
            final_residual: sol.stats.final_residual,
            relative_residual: sol.stats.relative_residual,
            residual_history: sol.stats.residual_history.clone(),
        },
        errors: errs.map(|e| ErrorReport { l2: e.l2, h1_semi: e.h1, relative_l2: if e.l2_exact > 0.0 { e.l2 / e.l2_exact } else { e.l2 } }),
        points: Vec::new(),
        timings: times,
        memory,
        outputs,
    })
}
