//! The forward model inside the chain: the heat problem of the file with its parameters set from
//! θ, run to the camera's frames. Built once: mesh, space, loads, kernels and the step operators
//! stay on the backend, and a sample only recomputes the material of every cell (the corrosion
//! profile at the cell centroids, in parallel) and hands it to
//! [`HeatStepper::set_materials`] — on the lattice that is a byte per cell and per node, with no
//! integration. Only the frames' temperatures come back, and the camera averages them.
use super::camera::Camera;
use crate::operator::FeBackend;
use crate::problem::heat::config::HeatFile;
use crate::problem::heat::material::{Corrosion, MaterialMap};
use crate::problem::heat::run::Prepared;
use crate::problem::heat::{HeatSetup, HeatStepper};
use crate::{Error, Result};

/// A parameter the chain infers: what it sets in the forward problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parameter {
    /// `corrosion.depth` (m): how far the corroded profile reaches into the plate.
    CorrosionDepth,
    /// `corrosion.radius` (m): the profile's half-width at the face.
    CorrosionRadius,
}

impl Parameter {
    pub const NAMES: [&'static str; 2] = ["corrosion.depth", "corrosion.radius"];

    pub fn parse(name: &str) -> Result<Parameter> {
        match name {
            "corrosion.depth" => Ok(Parameter::CorrosionDepth),
            "corrosion.radius" => Ok(Parameter::CorrosionRadius),
            other => Err(Error::invalid(format!("unknown parameter `{other}` (expected one of {})", Self::NAMES.join(", ")))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Parameter::CorrosionDepth => Self::NAMES[0],
            Parameter::CorrosionRadius => Self::NAMES[1],
        }
    }

    /// The values the forward problem admits: a depth within the body along the corroded face's
    /// normal, a positive radius within the body's widest extent.
    pub fn admissible(self, cor: &Corrosion, lo: [f64; 3], hi: [f64; 3]) -> (f64, f64) {
        match self {
            Parameter::CorrosionDepth => (0.0, hi[cor.axis] - lo[cor.axis]),
            Parameter::CorrosionRadius => (0.0, (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max)),
        }
    }

    fn set(self, cor: &mut Corrosion, v: f64) {
        match self {
            Parameter::CorrosionDepth => cor.depth = v,
            Parameter::CorrosionRadius => cor.radius = v,
        }
    }
}

/// The heat problem of a file run to the frames, for any θ.
pub struct HeatForward<'b, B: FeBackend> {
    be: &'b B,
    stepper: HeatStepper<'b, B>,
    pub camera: Camera,
    /// Step index of every frame (increasing).
    frame_steps: Vec<usize>,
    t0: B::Vector,
    state: B::Vector,
    map: MaterialMap,
    /// (ρc, k) per material.
    table: Vec<(f64, f64)>,
    centroids: Vec<[f64; 3]>,
    base: Vec<u8>,
    bounds: ([f64; 3], [f64; 3]),
    params: Vec<Parameter>,
    /// PCG iterations and forward runs so far, and runs that had to re-integrate.
    pub iterations: usize,
    pub runs: usize,
    pub reintegrated: usize,
}

/// The step of each frame time: `round(t/Δt)`, which must be a positive whole number of steps.
pub fn frame_steps(times: &[f64], dt: f64) -> Result<Vec<usize>> {
    let mut steps = Vec::with_capacity(times.len());
    for (i, &t) in times.iter().enumerate() {
        let s = (t / dt).round();
        if !(t.is_finite() && s >= 1.0 && (s * dt - t).abs() <= 1e-9 * t.abs().max(dt)) {
            return Err(Error::config(format!("camera.frames[{i}]"), format!("a frame time must be a positive multiple of the time step {dt} (got {t})")));
        }
        if steps.last().is_some_and(|&p| p >= s as usize) {
            return Err(Error::config(format!("camera.frames[{i}]"), "frame times must increase"));
        }
        steps.push(s as usize);
    }
    if steps.is_empty() {
        return Err(Error::config("camera.frames", "needs at least one frame time"));
    }
    Ok(steps)
}

impl<'b, B: FeBackend> HeatForward<'b, B> {
    /// The forward model of `f` set up as `p` (from [`crate::problem::heat::run::prepare`]).
    pub fn new(be: &'b B, f: &HeatFile, p: &Prepared, camera: Camera, frames: &[f64], params: &[Parameter]) -> Result<Self> {
        let map = p.map.clone();
        if map.materials.len() > 255 {
            return Err(Error::invalid(format!("an inversion takes at most 255 materials (got {})", map.materials.len())));
        }
        let cor = map.corrosion.as_ref();
        if cor.is_none() && params.iter().any(|q| matches!(q, Parameter::CorrosionDepth | Parameter::CorrosionRadius)) {
            return Err(Error::config("parameter", "a corrosion parameter needs a `[corrosion]` table in the problem file"));
        }
        let frame_steps = frame_steps(frames, f.time.dt)?;
        let setup = HeatSetup { rhoc: p.fields.rhoc.clone(), k: p.fields.k.clone(), zero_dirichlet: Vec::new(), dt: f.time.dt, theta: f.time.theta };
        let mut stepper = HeatStepper::with_loads_only(be, p.space.clone(), &setup, &p.loads, f.assembly.level).map_err(|e| p.faults.or(e))?;
        stepper.options.rtol = f.solver.rtol;
        stepper.options.max_iter = f.solver.max_iter;
        stepper.extrapolate = true;
        let mesh = &p.space.mesh;
        let centroids = MaterialMap::centroids(mesh);
        let base = map.base_indices(mesh, &centroids)?.into_iter().map(|t| t as u8).collect();
        let table = map.materials.iter().map(|m| (m.rhoc(), m.k)).collect();
        Ok(HeatForward {
            be,
            stepper,
            camera,
            frame_steps,
            t0: be.from_host(&p.t0)?,
            state: be.from_host(&p.t0)?,
            map,
            table,
            centroids,
            base,
            bounds: mesh.bounding_box(),
            params: params.to_vec(),
            iterations: 0,
            runs: 0,
            reintegrated: 0,
        })
    }

    pub fn frames(&self) -> usize {
        self.frame_steps.len()
    }

    /// Steps of one forward run (to the last frame).
    pub fn last_step(&self) -> usize {
        self.frame_steps.last().copied().unwrap_or(0)
    }

    /// The parameters' values in the problem file.
    pub fn centre(&self) -> Vec<f64> {
        self.params
            .iter()
            .map(|p| match (p, &self.map.corrosion) {
                (Parameter::CorrosionDepth, Some(c)) => c.depth,
                (Parameter::CorrosionRadius, Some(c)) => c.radius,
                _ => f64::NAN,
            })
            .collect()
    }

    /// The admissible range of parameter `i`.
    pub fn range(&self, i: usize) -> (f64, f64) {
        match &self.map.corrosion {
            Some(c) => self.params[i].admissible(c, self.bounds.0, self.bounds.1),
            None => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// The temperature at the end of the last run, on the host.
    pub fn state_to_host(&self) -> Result<Vec<f64>> {
        self.be.to_host(&self.state)
    }

    /// Whether θ is a problem the forward model can run (inside every parameter's range).
    pub fn admits(&self, theta: &[f64]) -> bool {
        let (lo, hi) = self.bounds;
        match &self.map.corrosion {
            Some(c) => self.params.iter().zip(theta).all(|(p, &v)| {
                let (a, b) = p.admissible(c, lo, hi);
                v.is_finite() && v >= a && v <= b
            }),
            None => true,
        }
    }

    /// The material index of every cell at θ.
    pub fn cell_materials(&self, theta: &[f64]) -> Result<Vec<u8>> {
        if theta.len() != self.params.len() {
            return Err(Error::dim("parameter vector", self.params.len(), theta.len()));
        }
        let mut index = self.base.clone();
        if let Some(c) = &self.map.corrosion {
            let mut c = c.clone();
            for (p, &v) in self.params.iter().zip(theta) {
                p.set(&mut c, v);
            }
            c.check().map_err(|why| Error::invalid(format!("corrosion at θ = {theta:?}: {why}")))?;
            c.apply(&self.centroids, self.bounds.0, self.bounds.1, &mut index);
        }
        Ok(index)
    }

    /// The camera's noiseless images at the frames (frame after frame) for θ.
    pub fn images(&mut self, theta: &[f64]) -> Result<Vec<f64>> {
        let index = self.cell_materials(theta)?;
        if !self.stepper.set_materials(&index, &self.table)? {
            self.reintegrated += 1;
        }
        self.stepper.set_time(0.0);
        self.be.copy(&self.t0, &mut self.state)?;
        let mut images = Vec::with_capacity(self.frame_steps.len() * self.camera.pixels().0 * self.camera.pixels().1);
        let mut done = 0;
        for &s in &self.frame_steps {
            let its = self.stepper.run(&mut self.state, s - done)?;
            self.iterations += its.iter().sum::<usize>();
            done = s;
            let u = self.be.to_host(&self.state)?;
            if let Some(i) = u.iter().position(|v| !v.is_finite()) {
                return Err(Error::invalid(format!("forward model at θ = {theta:?}: the temperature at node {i} is not finite after step {s}")));
            }
            images.extend(self.camera.image(&u));
        }
        self.runs += 1;
        Ok(images)
    }
}
