//! The tables `galerkin invert` reads from a heat problem file: `[camera]`, `[data]`,
//! `[[parameter]]` and `[mcmc]`. The rest of the file is the forward problem (a `galerkin run` of
//! the same file is the forward model at the file's own parameter values).
use super::chain::ChainConfig;
use super::prior::Prior;
use crate::problem::config::deserialize;
use crate::{Error, Result};
use serde::Deserialize;

/// The inversion's tables; the heat tables of the same file are read by
/// [`crate::problem::heat::config::HeatFile`].
#[derive(Debug, Deserialize)]
pub struct InvertFile {
    pub camera: Option<CameraConfig>,
    pub data: Option<DataConfig>,
    #[serde(default)]
    pub parameter: Vec<ParameterConfig>,
    #[serde(default)]
    pub mcmc: McmcConfig,
}

/// A thermal camera over one face of the box.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraConfig {
    /// `xmin` … `zmax`.
    pub face: String,
    /// Pixels along the face's first and second in-plane axis.
    pub pixels: [usize; 2],
    /// Samples per pixel and axis of the pixel average.
    #[serde(default = "three")]
    pub subsamples: usize,
    /// Times of the recorded frames (multiples of `time.dt`).
    pub frames: Vec<f64>,
    /// Noise s.d. (°C).
    pub sigma: f64,
    /// Rounding step of the recorded temperatures (°C, 0: none).
    #[serde(default)]
    pub resolution: f64,
}

/// Observed images: read from a file or made by a finer forward model.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// CSV (`time,i,j,temperature` per pixel and frame, as `observed.csv` is written) or `.npy`
    /// (frames × second axis × first axis), relative to the problem file.
    pub file: Option<String>,
    pub synthetic: Option<SyntheticConfig>,
}

/// Synthetic data: the forward problem at the true parameters on a finer mesh and time step,
/// recorded by the camera (noise from `seed`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    pub truth: Vec<f64>,
    /// Cells per axis of the finer box (default: the forward mesh's).
    pub n: Option<Vec<usize>>,
    /// Time step of the finer model (default: the forward model's).
    pub dt: Option<f64>,
    #[serde(default)]
    pub seed: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterConfig {
    /// What it sets: `corrosion.depth` or `corrosion.radius`.
    pub name: String,
    pub prior: Prior,
    /// Where the chains start (default: the prior's centre).
    pub start: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McmcConfig {
    #[serde(default = "burn_in")]
    pub burn_in: usize,
    #[serde(default = "samples")]
    pub samples: usize,
    #[serde(default = "one")]
    pub chains: usize,
    #[serde(default = "one_u64")]
    pub seed: u64,
    #[serde(default = "acceptance")]
    pub target_acceptance: f64,
    /// Iterations between checkpoints (1: every iteration, so an interrupted run loses nothing).
    #[serde(default = "one")]
    pub checkpoint_every: usize,
}

fn three() -> usize {
    3
}
fn one() -> usize {
    1
}
fn one_u64() -> u64 {
    1
}
fn burn_in() -> usize {
    200
}
fn samples() -> usize {
    2500
}
fn acceptance() -> f64 {
    0.44
}

impl Default for McmcConfig {
    fn default() -> Self {
        McmcConfig { burn_in: burn_in(), samples: samples(), chains: one(), seed: one_u64(), target_acceptance: acceptance(), checkpoint_every: one() }
    }
}

impl McmcConfig {
    /// The configuration of chain `k` (its own seed, a splitmix step from the file's).
    pub fn chain(&self, k: usize) -> ChainConfig {
        let mut z = self.seed.wrapping_add((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ChainConfig { burn_in: self.burn_in, samples: self.samples, target_acceptance: self.target_acceptance, seed: z ^ (z >> 31), checkpoint_every: self.checkpoint_every }
    }
}

impl InvertFile {
    /// Reads the inversion's tables of `text` and checks what needs no mesh.
    pub fn parse(text: &str, source: &str) -> Result<InvertFile> {
        let f: InvertFile = deserialize(text, source)?;
        if f.camera.is_none() {
            return Err(Error::config("camera", "an inversion needs a `[camera]` table (face, pixels, frames, sigma)"));
        }
        let data = f.data.as_ref().ok_or_else(|| Error::config("data", "an inversion needs data: `[data] file = …` or `[data.synthetic]`"))?;
        match (&data.file, &data.synthetic) {
            (None, None) => return Err(Error::config("data", "no data: give `file` or a `[data.synthetic]` table")),
            (Some(_), Some(_)) => return Err(Error::config("data", "give either `file` or `[data.synthetic]`, not both")),
            _ => {}
        }
        if f.parameter.is_empty() {
            return Err(Error::config("parameter", "no parameter to infer: add a `[[parameter]]` table (name, prior)"));
        }
        for (i, p) in f.parameter.iter().enumerate() {
            p.prior.check(&p.name).map_err(|e| Error::config(format!("parameter[{i}].prior"), e.to_string()))?;
        }
        if let Some(s) = &data.synthetic {
            if s.truth.len() != f.parameter.len() {
                return Err(Error::config("data.synthetic.truth", format!("one value per parameter: {} parameters, {} values", f.parameter.len(), s.truth.len())));
            }
            if let Some(dt) = s.dt {
                if !(dt.is_finite() && dt > 0.0) {
                    return Err(Error::config("data.synthetic.dt", format!("must be positive and finite (got {dt})")));
                }
            }
        }
        if f.mcmc.chains == 0 {
            return Err(Error::config("mcmc.chains", "must be at least 1"));
        }
        f.mcmc.chain(0).check().map_err(|e| Error::config("mcmc", e.to_string()))?;
        Ok(f)
    }
}
