//! `galerkin run` on an advection problem file: mesh, assembly and solve on the chosen backend
//! (`auto`: the GPU when there is one), then the L2 error, the VTU file, the residual plot and
//! `report.json` — each file written whole or not at all, the report last.
use super::config::{AdvectionFile, AdvectionSetup};
use super::output;
use super::solve::{solve, AdvectionBackend, SolverConfig};
use super::AdvectionProblem;
use crate::backend::AnyBackend;
use crate::io::{self, OutputFile};
use crate::operator::AssemblyLevel;
use crate::problem::run::{AssemblyReport, ErrorReport, MemoryReport, MeshReport, PhaseTimes, Report, RunOptions, SolverReport, SpaceReport};
use crate::solver::SolveStats;
use crate::Result;
use std::path::Path;
use std::time::Instant;

/// A solved system, on the host.
pub struct Solution {
    pub u: Vec<f64>,
    pub stats: SolveStats,
    pub nnz: usize,
    pub assembly_s: f64,
    pub precond_s: f64,
    pub solve_s: f64,
}

/// Assembles and solves on the CPU.
pub fn solve_cpu(p: &AdvectionProblem, cfg: &SolverConfig) -> Result<Solution> {
    let t = Instant::now();
    let (a, b) = super::assemble::assemble(p)?;
    let assembly_s = t.elapsed().as_secs_f64();
    finish(&crate::backend::Cpu, &a, &b, p.nloc(), cfg, assembly_s)
}

/// Assembles and solves on the GPU (matrix and right-hand side born on the device).
pub fn solve_cuda(be: &crate::backend::cuda::CudaBackend, p: &AdvectionProblem, cfg: &SolverConfig) -> Result<Solution> {
    let t = Instant::now();
    let dev = super::cuda::DeviceAdvection::upload(be, p)?;
    let (a, b) = dev.assemble(be)?;
    be.synchronize()?;
    let assembly_s = t.elapsed().as_secs_f64();
    finish(be, &a, &b, p.nloc(), cfg, assembly_s)
}

fn finish<B: AdvectionBackend>(be: &B, a: &B::Matrix, b: &B::Vector, nloc: usize, cfg: &SolverConfig, assembly_s: f64) -> Result<Solution> {
    let s = solve(be, a, b, nloc, cfg)?;
    Ok(Solution { u: be.to_host(&s.u)?, stats: s.stats, nnz: be.matrix_nnz(a), assembly_s, precond_s: s.precond_s, solve_s: s.solve_s })
}

/// Runs an advection problem file's text (`path` names it in errors and resolves the mesh file).
pub fn run_text(text: &str, path: &Path, opts: &RunOptions) -> Result<Report> {
    let t_start = Instant::now();
    let file = AdvectionFile::parse(text, &path.display().to_string())?;
    let mut notes = Vec::new();
    let engine = AnyBackend::select(opts.backend.unwrap_or(file.backend), Ok(()), &mut notes)?;
    let gpu = match &engine {
        AnyBackend::Cuda(be) => Some(be.as_ref()),
        AnyBackend::Cpu(_) => None,
    };
    let mut memory = MemoryReport::default();
    if let Some((host, device)) = file.memory_estimate(gpu.is_some()) {
        let available = crate::memory::host_available();
        crate::memory::check("host", &host, available.as_ref())?;
        if let Some(be) = gpu {
            let (free, _) = be.memory_info()?;
            let avail = crate::memory::Available { bytes: free as f64, source: format!("free memory of {}", be.device().name) };
            crate::memory::check("GPU", &device, Some(&avail))?;
        }
        memory = MemoryReport { estimate: host.total() + device.total(), available: available.map(|a| a.bytes), ..Default::default() };
    }
    let t = Instant::now();
    let AdvectionSetup { problem: p, exact, mut solver, notes: more } = file.setup(path.parent().unwrap_or(Path::new(".")))?;
    notes.extend(more);
    solver.options.progress = opts.progress;
    let mesh_s = t.elapsed().as_secs_f64();
    let out_dir = io::OutputDir::lock(&opts.out_dir)?;
    if !out_dir.removed_temporaries.is_empty() {
        notes.push(format!("removed {} temporary file(s) of an interrupted earlier run", out_dir.removed_temporaries.len()));
    }
    let sol = match &engine {
        AnyBackend::Cuda(be) => solve_cuda(be, &p, &solver)?,
        AnyBackend::Cpu(_) => solve_cpu(&p, &solver)?,
    };
    let errors = exact.as_ref().map(|e| output::l2_error(&p, &sol.u, e)).transpose()?;
    let t_out = Instant::now();
    out_dir.remove("report.json")?;
    let o = &file.output;
    let mut paths = Vec::new();
    if o.vtu {
        let path = out_dir.join(&format!("{}.vtu", o.name));
        output::write_vtu(&path, &p, &sol.u)?;
        paths.push(path);
    }
    if o.plot && sol.stats.residual_history.len() > 2 {
        let path = out_dir.join("residual.png");
        io::plot_residual_history(&path, &format!("{} residual", sol.stats.method), &[(sol.stats.method.as_str(), &sol.stats.residual_history)])?;
        paths.push(path);
    }
    let outputs = paths.iter().map(|p| io::file_record(p)).collect::<Result<Vec<OutputFile>>>()?;
    notes.push(format!("DG advection, upwind flux, degree {} on {}s; `mesh` includes the facet connectivity", p.degree, p.cell_type()));
    let report = Report {
        title: file.title.clone(),
        backend: engine.name(),
        notes,
        mesh: MeshReport { cell_type: p.cell_type(), cells: p.mesh.num_cells(), vertices: p.mesh.num_vertices(), dim: 2 },
        space: SpaceReport { family: "dg".into(), degree: p.degree, components: 1, dofs: p.ndofs() },
        assembly: AssemblyReport { level: AssemblyLevel::Full, storage_bytes: sol.nnz * 12 + 4 * (p.ndofs() + 1), colors: 0, dirichlet_dofs: 0 },
        solver: SolverReport {
            method: solver.method.name().into(),
            preconditioner: solver.preconditioner.name().into(),
            iterations: sol.stats.iterations,
            initial_residual: sol.stats.initial_residual,
            final_residual: sol.stats.final_residual,
            relative_residual: sol.stats.relative_residual,
            residual_history: sol.stats.residual_history.clone(),
        },
        errors: errors.map(|(l2, norm)| ErrorReport { l2, h1_semi: f64::NAN, relative_l2: if norm > 0.0 { l2 / norm } else { l2 } }),
        points: Vec::new(),
        timings: PhaseTimes {
            mesh: mesh_s,
            space: 0.0,
            assembly: sol.assembly_s,
            preconditioner: sol.precond_s,
            solve: sol.solve_s,
            output: t_out.elapsed().as_secs_f64(),
            total: t_start.elapsed().as_secs_f64(),
            ..Default::default()
        },
        memory,
        outputs,
    };
    if o.report {
        io::write_json(out_dir.join("report.json"), &report)?;
    }
    Ok(report)
}
