//! `galerkin invert PROBLEM.toml`: the heat problem of the file as the forward model, a camera,
//! observed images (from a file or a finer forward model), priors, and adaptive Metropolis–
//! Hastings chains with checkpoints; results as CSV, PNG and `report.json`.
use super::camera::Camera;
use super::chain::{Chain, ChainState};
use super::config::{InvertFile, ParameterConfig};
use super::diagnostics::Summary;
use super::forward::{HeatForward, Parameter};
use super::prior::Prior;
use super::rng::Rng;
use super::{data, plots};
use crate::backend::{AnyBackend, BackendKind};
use crate::io::{self, OutputFile};
use crate::operator::FeBackend;
use crate::problem::heat::config::HeatFile;
use crate::problem::heat::run::prepare;
use crate::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How `galerkin invert` runs.
#[derive(Clone, Debug)]
pub struct InvertOptions {
    pub backend: Option<BackendKind>,
    pub out_dir: PathBuf,
    pub progress: bool,
    /// Go on from the chains' checkpoints in `out_dir` (written every `mcmc.checkpoint_every`).
    pub resume: bool,
    /// Stop each chain after this many iterations in this invocation (checkpoints written;
    /// resume later): time-boxed runs.
    pub stop_after: Option<usize>,
}

/// What `report.json` of an inversion holds.
#[derive(Debug, Serialize)]
pub struct InvertReport {
    pub title: String,
    pub backend: String,
    pub notes: Vec<String>,
    /// All chains ran to their end (else stopped by `stop_after`: resume to finish).
    pub complete: bool,
    pub forward: ForwardReport,
    pub data: DataReport,
    pub parameters: Vec<ParameterReport>,
    pub chains: Vec<ChainReport>,
    pub seconds: Seconds,
    pub outputs: Vec<OutputFile>,
}

#[derive(Debug, Serialize)]
pub struct ForwardReport {
    pub cells: usize,
    pub dofs: usize,
    pub level: &'static str,
    pub dt: f64,
    pub steps_per_run: usize,
    pub frames: Vec<f64>,
    pub pixels: [usize; 2],
    /// Forward runs in this invocation, their PCG iterations, and runs that re-integrated the
    /// operators (a material the lattice had not seen).
    pub runs: usize,
    pub pcg_iterations: usize,
    pub reintegrated: usize,
    /// Wall time of one forward run inside one chain (chains run concurrently) and of one of its
    /// PCG iterations; all chains' runs per second of sampling.
    pub seconds_per_run: f64,
    pub seconds_per_pcg_iteration: f64,
    pub runs_per_second: f64,
}

/// What one chain's thread returns.
struct Sampled {
    state: ChainState,
    resumed_from: Option<usize>,
    checkpoint: PathBuf,
    runs: usize,
    iterations: usize,
    reintegrated: usize,
}

#[derive(Debug, Serialize)]
pub struct DataReport {
    /// `synthetic` or the file read.
    pub source: String,
    pub truth: Option<Vec<f64>>,
    /// Unknowns and time step of the model that made synthetic data.
    pub dofs: Option<usize>,
    pub dt: Option<f64>,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
pub struct ParameterReport {
    pub name: String,
    pub prior: Prior,
    pub posterior: Option<Summary>,
    pub truth: Option<f64>,
    /// |mean − truth| ≤ 2 s.d. (synthetic data only).
    pub truth_within_two_sd: Option<bool>,
}

#[derive(Debug, Serialize)]
pub struct ChainReport {
    pub seed: u64,
    pub iterations: usize,
    pub samples: usize,
    pub acceptance_rate: f64,
    pub burn_in_acceptance_rate: f64,
    /// The proposal step after burn-in's adaptation.
    pub step: Vec<f64>,
    pub resumed_from: Option<usize>,
}

#[derive(Debug, Default, Serialize)]
pub struct Seconds {
    pub setup: f64,
    pub data: f64,
    pub sampling: f64,
    pub output: f64,
    pub total: f64,
}

/// Reads and runs the inversion of the file at `path`.
pub fn run_file(path: &Path, opts: &InvertOptions) -> Result<InvertReport> {
    let text = String::from_utf8(crate::io::input::read_regular_file(path, "problem file")?).map_err(|_| Error::config(path.display().to_string(), "not UTF-8 text"))?;
    run_text(&text, path, opts)
}

pub fn run_text(text: &str, path: &Path, opts: &InvertOptions) -> Result<InvertReport> {
    let source = path.display().to_string();
    let heat = HeatFile::parse(text, &source)?;
    let inv = InvertFile::parse(text, &source)?;
    let mut notes = Vec::new();
    let backend = AnyBackend::select(opts.backend.unwrap_or(heat.backend), Ok(()), &mut notes)?;
    let name = backend.name();
    let ctx = Ctx { text, path, heat: &heat, inv: &inv, opts };
    let mut r = match &backend {
        AnyBackend::Cpu(_) => invert(&|| Ok(crate::backend::Cpu), &ctx)?,
        AnyBackend::Cuda(be) => {
            let ordinal = be.device().ordinal;
            invert(&|| crate::backend::cuda::CudaBackend::new(ordinal), &ctx)?
        }
    };
    r.backend = name;
    notes.extend(std::mem::take(&mut r.notes));
    r.notes = notes;
    Ok(r)
}

struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
    heat: &'a HeatFile,
    inv: &'a InvertFile,
    opts: &'a InvertOptions,
}

fn camera_of(inv: &InvertFile, space: &crate::space::FunctionSpace) -> Result<Camera> {
    let c = inv.camera.as_ref().ok_or_else(|| Error::config("camera", "missing"))?;
    Camera::new(space, &c.face, (c.pixels[0], c.pixels[1]), c.subsamples, c.sigma, c.resolution).map_err(|e| Error::config("camera", e.to_string()))
}

/// Checks each prior against what the forward problem admits (a depth inside the plate).
fn check_priors<B: FeBackend>(params: &[ParameterConfig], kinds: &[Parameter], fwd: &HeatForward<B>) -> Result<()> {
    for (i, (p, _)) in params.iter().zip(kinds).enumerate() {
        let mut probe = fwd.centre();
        let inside = |v: f64, probe: &mut Vec<f64>| {
            probe[i] = v;
            fwd.admits(probe)
        };
        let ok = match p.prior {
            Prior::Uniform { lo, hi } => inside(lo, &mut probe) && inside(hi, &mut probe),
            Prior::Normal { mean, .. } => inside(mean, &mut probe),
        };
        if !ok {
            let (a, b) = fwd.range(i);
            return Err(Error::config(format!("parameter[{i}].prior"), format!("`{}` must stay within [{a}, {b}] (the body's extent): {:?} reaches outside", p.name, p.prior)));
        }
        if let Some(s) = p.start {
            if p.prior.log_density(s) == f64::NEG_INFINITY || !inside(s, &mut probe) {
                return Err(Error::config(format!("parameter[{i}].start"), format!("{s} lies outside the prior or the body")));
            }
        }
    }
    Ok(())
}

/// The inversion on backends made by `make` (one for the set-up and the data, one per chain).
fn invert<B: FeBackend>(make: &(dyn Fn() -> Result<B> + Sync), c: &Ctx) -> Result<InvertReport> {
    let be0 = make()?;
    let be = &be0;
    let t_start = Instant::now();
    let (heat, inv) = (c.heat, c.inv);
    let base = c.path.parent().unwrap_or(Path::new("."));
    let cam = inv.camera.as_ref().ok_or_else(|| Error::config("camera", "missing"))?;
    let kinds = inv
        .parameter
        .iter()
        .enumerate()
        .map(|(i, p)| Parameter::parse(&p.name).map_err(|e| Error::config(format!("parameter[{i}].name"), e.to_string())))
        .collect::<Result<Vec<_>>>()?;
    let out = io::OutputDir::lock(&c.opts.out_dir)?;
    let prepared = prepare(heat, base)?;
    let mut notes = prepared.notes.clone();
    let camera = camera_of(inv, &prepared.space)?;
    let mut fwd = HeatForward::new(be, heat, &prepared, camera, &cam.frames, &kinds)?;
    check_priors(&inv.parameter, &kinds, &fwd)?;
    let (cells, dofs) = (prepared.space.mesh.num_cells(), prepared.space.ndofs());
    let setup_s = t_start.elapsed().as_secs_f64();

    // The data.
    let t = Instant::now();
    let data_cfg = inv.data.as_ref().ok_or_else(|| Error::config("data", "missing"))?;
    let mut written: Vec<PathBuf> = Vec::new();
    let pixels = fwd.camera.pixels();
    let (observed, data_report) = match (&data_cfg.file, &data_cfg.synthetic) {
        (Some(file), _) => {
            let obs = data::read(&base.join(file), &cam.frames, pixels)?;
            (obs, DataReport { source: file.clone(), truth: None, dofs: None, dt: None, seconds: 0.0 })
        }
        (None, Some(s)) => {
            let mut fine = HeatFile::parse(c.text, &c.path.display().to_string())?;
            if let Some(n) = &s.n {
                fine.mesh.n = Some(n.clone());
            }
            if let Some(dt) = s.dt {
                fine.time.dt = dt;
            }
            let p = prepare(&fine, base)?;
            let cam_fine = camera_of(inv, &p.space)?;
            let mut truth_model = HeatForward::new(be, &fine, &p, cam_fine, &cam.frames, &kinds)?;
            if !truth_model.admits(&s.truth) {
                return Err(Error::config("data.synthetic.truth", format!("{:?} lies outside the body", s.truth)));
            }
            let images = truth_model.images(&s.truth)?;
            let obs = truth_model.camera.record(images, &mut Rng::new(s.seed));
            notes.push(format!("synthetic data: {} unknowns, dt = {}, truth {:?}, noise seed {}", p.space.ndofs(), fine.time.dt, s.truth, s.seed));
            (obs, DataReport { source: "synthetic".into(), truth: Some(s.truth.clone()), dofs: Some(p.space.ndofs()), dt: Some(fine.time.dt), seconds: 0.0 })
        }
        (None, None) => return Err(Error::config("data", "no data")),
    };
    let mut data_report = data_report;
    let obs_path = out.join("observed.csv");
    data::write_csv(&obs_path, &cam.frames, pixels, &observed)?;
    written.push(obs_path);
    data_report.seconds = t.elapsed().as_secs_f64();

    // The chains.
    let t = Instant::now();
    let priors: Vec<Prior> = inv.parameter.iter().map(|p| p.prior.clone()).collect();
    let start: Option<Vec<f64>> = if inv.parameter.iter().any(|p| p.start.is_some()) {
        Some(inv.parameter.iter().map(|p| p.start.unwrap_or_else(|| p.prior.center())).collect())
    } else {
        None
    };
    let mcmc = &inv.mcmc;
    let total = mcmc.chains * (mcmc.burn_in + mcmc.samples);
    let bar = io::progress_bar(total as u64, "MCMC", c.opts.progress);
    let budget = c.opts.stop_after.unwrap_or(usize::MAX);
    let names: Vec<&str> = inv.parameter.iter().map(|p| p.name.as_str()).collect();
    let camera = &fwd.camera;
    // One thread, backend (CUDA stream) and forward model per chain: the chains' solves
    // interleave on the GPU, which one chain's small solves leave mostly idle.
    let one_chain = |k: usize| -> Result<Sampled> {
        let be = make()?;
        let mut fwd = HeatForward::new(&be, heat, &prepared, camera.clone(), &cam.frames, &kinds)?;
        let mut loglik = |theta: &[f64]| -> Result<f64> {
            if !fwd.admits(theta) {
                return Ok(f64::NEG_INFINITY);
            }
            let img = fwd.images(theta)?;
            fwd.camera.log_likelihood(&observed, &img)
        };
        let cp = out.join(&format!("chain-{k}.json"));
        let config = mcmc.chain(k);
        let (mut chain, resumed_from) = if c.opts.resume && cp.exists() {
            let state = Chain::load(&cp)?;
            if state.config != config {
                return Err(Error::invalid(format!("checkpoint {} was written with another `[mcmc]` table ({:?}); remove it or restore the table", cp.display(), state.config)));
            }
            let from = state.iteration;
            (Chain::resume(&priors, state)?, Some(from))
        } else {
            (Chain::new(&priors, config, start.clone(), &mut loglik)?, None)
        };
        bar.inc(chain.state.iteration as u64);
        chain.run_for(&mut loglik, Some(&cp), budget, |ch| {
            bar.inc(1);
            let est: Vec<String> = names.iter().zip(&ch.state.theta).map(|(n, v)| format!("{n} = {v:.4e}")).collect();
            bar.set_message(format!("chain {k}: acceptance {:.2}, {}", ch.acceptance_rate(), est.join(", ")));
            Ok(())
        })?;
        Ok(Sampled { state: chain.state, resumed_from, checkpoint: cp, runs: fwd.runs, iterations: fwd.iterations, reintegrated: fwd.reintegrated })
    };
    let sampled: Vec<Sampled> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..mcmc.chains).map(|k| s.spawn(move || one_chain(k))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::invalid("a chain's thread panicked")))).collect::<Result<Vec<_>>>()
    })?;
    bar.finish_and_clear();
    let runs: usize = sampled.iter().map(|x| x.runs).sum();
    let pcg: usize = sampled.iter().map(|x| x.iterations).sum();
    let reintegrated: usize = sampled.iter().map(|x| x.reintegrated).sum();
    let resumed: Vec<Option<usize>> = sampled.iter().map(|x| x.resumed_from).collect();
    written.extend(sampled.iter().map(|x| x.checkpoint.clone()));
    let states: Vec<ChainState> = sampled.into_iter().map(|x| x.state).collect();
    let sampling_s = t.elapsed().as_secs_f64();
    let complete = states.iter().all(|s| s.iteration >= s.config.burn_in + s.config.samples);

    // Results.
    let t = Instant::now();
    let np = inv.parameter.len();
    let per_param: Vec<Vec<Vec<f64>>> = (0..np).map(|i| states.iter().map(|s| s.samples.iter().map(|x| x[i]).collect()).collect()).collect();
    let any_samples = states.iter().any(|s| !s.samples.is_empty());
    let parameters: Vec<ParameterReport> = inv
        .parameter
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let posterior = any_samples.then(|| Summary::of(&per_param[i]));
            let truth = data_report.truth.as_ref().map(|t| t[i]);
            let within = match (&posterior, truth) {
                (Some(s), Some(t)) => Some((s.mean - t).abs() <= 2.0 * s.sd),
                _ => None,
            };
            ParameterReport { name: p.name.clone(), prior: p.prior.clone(), posterior, truth, truth_within_two_sd: within }
        })
        .collect();
    let csv = out.join("chains.csv");
    plots::write_chains_csv(&csv, &inv.parameter, &states)?;
    written.push(csv);
    if any_samples {
        for (i, p) in inv.parameter.iter().enumerate() {
            let slug = p.name.replace('.', "-");
            let trace = out.join(&format!("trace-{slug}.png"));
            plots::trace(&trace, &p.name, &per_param[i], parameters[i].truth)?;
            written.push(trace);
            let hist = out.join(&format!("histogram-{slug}.png"));
            plots::histogram(&hist, &p.name, &per_param[i], parameters[i].truth)?;
            written.push(hist);
        }
        // Observed against predicted at the posterior mean.
        let mean: Vec<f64> = parameters.iter().map(|p| p.posterior.as_ref().map_or(f64::NAN, |s| s.mean)).collect();
        if fwd.admits(&mean) {
            let predicted = fwd.images(&mean)?;
            let png = out.join("fit.png");
            plots::fit(&png, &cam.frames, pixels, &observed, &predicted)?;
            written.push(png);
        }
    }
    let chains = states
        .iter()
        .zip(&resumed)
        .map(|(s, r)| ChainReport {
            seed: s.config.seed,
            iterations: s.iteration,
            samples: s.samples.len(),
            acceptance_rate: s.recorded_acceptance(),
            burn_in_acceptance_rate: s.burn_in_acceptance(),
            step: s.step.clone(),
            resumed_from: *r,
        })
        .collect();
    let mut outputs = written.iter().map(|p| io::file_record(p)).collect::<Result<Vec<_>>>()?;
    let mut report = InvertReport {
        title: heat.title.clone(),
        backend: String::new(),
        notes,
        complete,
        forward: ForwardReport {
            cells,
            dofs,
            level: heat.assembly.level.name(),
            dt: heat.time.dt,
            steps_per_run: fwd.last_step(),
            frames: cam.frames.clone(),
            pixels: [pixels.0, pixels.1],
            runs,
            pcg_iterations: pcg,
            reintegrated,
            seconds_per_run: if runs > 0 { mcmc.chains as f64 * sampling_s / runs as f64 } else { 0.0 },
            seconds_per_pcg_iteration: if pcg > 0 { mcmc.chains as f64 * sampling_s / pcg as f64 } else { 0.0 },
            runs_per_second: runs as f64 / sampling_s.max(1e-12),
        },
        data: data_report,
        parameters,
        chains,
        seconds: Seconds { setup: setup_s, data: 0.0, sampling: sampling_s, output: 0.0, total: 0.0 },
        outputs: Vec::new(),
    };
    report.seconds.data = report.data.seconds;
    report.seconds.output = t.elapsed().as_secs_f64();
    report.seconds.total = t_start.elapsed().as_secs_f64();
    let p = out.join("report.json");
    report.outputs = outputs.clone();
    io::write_json(&p, &report)?;
    outputs.push(io::file_record(&p)?);
    report.outputs = outputs;
    Ok(report)
}
