//! `galerkin run` on a DG problem file: solve, then write the sampled solution (CSV, PNG), the
//! convergence table (JSON, PNG) when an exact solution is given, the residual history of a Krylov
//! solve and `report.json` — each file written whole or not at all.
use super::config::{DgFile, DgSetup};
use super::convergence::{study, ConvergenceTable};
use super::norms::{errors, DgErrors};
use super::output;
use super::solve::{solve_cpu, solve_cuda, DgSolution, DgSolver, DirectKind, DgTimings};
use crate::io;
use crate::mesh::CellType;
use crate::operator::AssemblyLevel;
use crate::problem::run::{
    select_engine, AssemblyReport, Engine, ErrorReport, MeshReport, PhaseTimes, Report, RunOptions, SolverReport, SpaceReport,
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
    outputs: &'a [std::path::PathBuf],
}

/// Whether a DG setup can run on the GPU.
fn gpu_capable(s: &DgSetup) -> std::result::Result<(), String> {
    match s.solver {
        DgSolver::Direct { kind: DirectKind::Thomas, .. } => Err("block Thomas runs on the CPU".into()),
        _ => Ok(()),
    }
}

/// Runs a DG problem file's text (`path` names it in errors).
pub fn run_text(text: &str, path: &Path, opts: &RunOptions) -> Result<Report> {
    let t_start = Instant::now();
    let file = DgFile::parse(text, &path.display().to_string())?;
    let setup = file.setup()?;
    let mut notes = Vec::new();
    let engine = select_engine(opts.backend.unwrap_or(file.backend), gpu_capable(&setup), &mut notes)?;
    let gpu = match &engine {
        Engine::Cuda(be) => Some(be.as_ref()),
        Engine::Cpu => None,
    };
    let DgSetup { problem: p, exact, solver } = &setup;
    let sol: DgSolution = match gpu {
        Some(be) => solve_cuda(be, p, solver)?,
        None => solve_cpu(p, solver)?,
    };
    let errs = exact.as_ref().map(|e| errors(p, &sol.coefficients, e)).transpose()?;
    let out = &opts.out_dir;
    let o = &file.output;
    let t_out = Instant::now();
    let mut outputs = Vec::new();
    let table = match exact {
        Some(e) if o.convergence > 0 => Some(study(p, e, o.convergence, solver, gpu)?),
        _ => None,
    };
    if o.csv || o.plot {
        let samples = output::sample(p, &sol.coefficients, exact.as_ref(), o.samples_per_element, o.max_sampled_elements)?;
        if o.csv {
            let path = out.join(format!("{}.csv", o.name));
            output::write_csv(&path, &samples)?;
            outputs.push(path);
        }
        if o.plot {
            let path = out.join(format!("{}.png", o.name));
            let error_path = out.join(format!("{}-error.png", o.name));
            let title = format!("{} k = {}, {} elements", p.method.name().to_uppercase(), p.degree, p.mesh.len());
            outputs.extend(output::plot(&path, &error_path, &title, &samples)?);
        }
    }
    if let Some(t) = &table {
        if o.plot {
            outputs.extend(t.write(out)?);
        } else {
            let path = out.join("convergence.json");
            io::write_json(&path, t)?;
            outputs.push(path);
        }
    }
    if o.plot && sol.stats.residual_history.len() > 2 {
        let path = out.join("residual.png");
        io::plot_residual_history(&path, &format!("{} residual", sol.solver), &[(sol.solver.as_str(), &sol.stats.residual_history)])?;
        outputs.push(path);
    }
    if o.report {
        outputs.push(out.join("report.json"));
    }
    let t = &sol.timings;
    let times = PhaseTimes {
        mesh: 0.0,
        space: t.sample + t.upload,
        assembly: t.assembly,
        preconditioner: t.setup,
        solve: t.solve + t.download,
        output: t_out.elapsed().as_secs_f64(),
        total: t_start.elapsed().as_secs_f64(),
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
        assembly: AssemblyReport { level: AssemblyLevel::Full, stored_entries: sol.stored, colors: 0, dirichlet_dofs: 0 },
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
        timings: times,
        outputs,
    })
}
