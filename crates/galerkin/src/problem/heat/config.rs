//! The heat problem file: `[physics] kind = "heat"`. Every key is checked (unknown keys and bad
//! values are errors naming the dotted key). See README "Transient heat" for a full example.
//!
//! ```toml
//! [mesh]            # as for every problem file (generator or Gmsh file)
//! [physics]
//! kind = "heat"
//! source = 0.0      # Q (W/m³): number or expression of x, y, z
//! [time]
//! dt = 0.1
//! steps = 100       # or t_end = 10.0
//! theta = 0.5       # 1 backward Euler, 0.5 Crank–Nicolson
//! output_every = 10
//! [initial]
//! value = 20.0      # or expression = "20 + x", or vtu = "earlier/temperature_000100.vtu"
//! [[material]]      # the first is the background
//! name = "steel"
//! k = 45.0
//! rho = 7850.0
//! c = 475.0
//! [[material]]
//! name = "inclusion"
//! k = 1.0
//! rho = 2000.0
//! c = 800.0
//! shape = { kind = "sphere", centre = [0.5, 0.5, 0.5], radius = 0.2 }   # or regions = [2, "name"]
//! [corrosion]
//! face = "zmin"
//! depth = 3.175e-3
//! radius = 10e-3
//! [[bc]]
//! type = "laser"    # dirichlet (value), flux (value), laser (power, radius, centre), robin (h, ambient)
//! boundary = "zmax"
//! power = 10.0
//! radius = 1e-3
//! centre = [0.0, 0.0, 12.7e-3]
//! off = 10.0
//! [output]
//! probes = [[0.0, 0.0, 12.7e-3]]
//! face_map = { face = "zmax", times = [5.0, 10.0] }
//! ```
use crate::backend::BackendKind;
use crate::problem::config::{
    deserialize, scalar_spec, AssemblyConfig, MeshConfig, OneOrMany, ScalarSpec, SpaceConfig,
    MAX_QUADRATURE_DEGREE,
};
use crate::{Error, Result};
use serde::Deserialize;
use std::path::PathBuf;

/// Whether a problem file's text is a heat problem (`[physics] kind = "heat"`).
pub fn is_heat(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("physics")?.get("kind")?.as_str().map(|k| k == "heat"))
        .unwrap_or(false)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatFile {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub backend: BackendKind,
    pub mesh: MeshConfig,
    #[serde(default)]
    pub space: SpaceConfig,
    pub physics: HeatPhysics,
    pub time: TimeConfig,
    #[serde(default)]
    pub initial: InitialConfig,
    #[serde(default)]
    pub material: Vec<MaterialConfig>,
    pub voxels: Option<VoxelConfig>,
    pub corrosion: Option<CorrosionConfig>,
    #[serde(default)]
    pub bc: Vec<HeatBc>,
    #[serde(default)]
    pub solver: HeatSolver,
    #[serde(default)]
    pub assembly: AssemblyConfig,
    #[serde(default)]
    pub output: HeatOutput,
    /// The tables of `galerkin invert` (`crate::inverse::config`): a heat run of an inversion's
    /// file is its forward model at the file's own parameter values, so it accepts them.
    pub camera: Option<toml::Value>,
    pub data: Option<toml::Value>,
    pub parameter: Option<toml::Value>,
    pub mcmc: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatPhysics {
    pub kind: String,
    /// Volumetric source Q (W/m³): number or expression of x, y, z.
    pub source: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeConfig {
    pub dt: f64,
    pub steps: Option<usize>,
    pub t_end: Option<f64>,
    #[serde(default = "one")]
    pub theta: f64,
    /// Write a PVD frame every this many steps (0: none but the first and last).
    #[serde(default = "one_step")]
    pub output_every: usize,
}

fn one() -> f64 {
    1.0
}
fn one_step() -> usize {
    1
}

/// The initial temperature: one of `value`, `expression`, `vtu` (default 0).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialConfig {
    pub value: Option<f64>,
    pub expression: Option<String>,
    /// A VTU written by an earlier run on the same mesh (relative to the problem file).
    pub vtu: Option<PathBuf>,
    /// Its point field (default `temperature`).
    pub field: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialConfig {
    pub name: String,
    pub k: f64,
    pub rho: f64,
    pub c: f64,
    pub shape: Option<ShapeConfig>,
    /// Gmsh physical groups (tags or names) made of this material.
    pub regions: Option<Vec<RegionRef>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum RegionRef {
    Tag(i32),
    Name(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeConfig {
    /// layer, sphere, cylinder or box.
    pub kind: String,
    /// layer, cylinder: x, y or z.
    pub axis: Option<String>,
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub centre: Option<Vec<f64>>,
    pub radius: Option<f64>,
    pub lower: Option<Vec<f64>>,
    pub upper: Option<Vec<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoxelConfig {
    /// NumPy `.npy` array of material indices (relative to the problem file).
    pub file: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorrosionConfig {
    /// The corroded face of the bounding box: xmin … zmax.
    pub face: String,
    pub depth: f64,
    /// Half-width of the corroded zone (where the parabola meets the face).
    pub radius: f64,
    /// Centre of the profile (default: the face's centre).
    pub centre: Option<Vec<f64>>,
    /// `pit` (axisymmetric, default) or `groove` (along `axis`).
    pub profile: Option<String>,
    pub axis: Option<String>,
    /// Name of the filler material (default `air`, added when not defined).
    pub filler: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeatBcKind {
    Dirichlet,
    Flux,
    Laser,
    Robin,
}

/// One boundary condition (faces without any are insulated).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatBc {
    pub boundary: OneOrMany,
    #[serde(rename = "type")]
    pub kind: HeatBcKind,
    /// dirichlet: T (number or expression of x, y, z, t); flux: q into the body (of x, y, z).
    pub value: Option<toml::Value>,
    /// flux, laser: a factor of t (expression).
    pub factor: Option<String>,
    /// flux, laser: switched on at / off at (s).
    pub on: Option<f64>,
    pub off: Option<f64>,
    /// laser: total power (W), 1/e² radius (m), centre.
    pub power: Option<f64>,
    pub radius: Option<f64>,
    pub centre: Option<Vec<f64>>,
    /// robin: h (W/(m²·K)) and T∞.
    pub h: Option<f64>,
    pub ambient: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatSolver {
    #[serde(default = "rtol")]
    pub rtol: f64,
    #[serde(default = "max_iter")]
    pub max_iter: usize,
}

fn rtol() -> f64 {
    1e-10
}
fn max_iter() -> usize {
    10_000
}

impl Default for HeatSolver {
    fn default() -> Self {
        HeatSolver {
            rtol: rtol(),
            max_iter: max_iter(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatOutput {
    /// Stem of the VTU/PVD files.
    #[serde(default = "temperature")]
    pub name: String,
    #[serde(default = "yes")]
    pub pvd: bool,
    #[serde(default = "yes")]
    pub report: bool,
    #[serde(default = "yes")]
    pub plot: bool,
    /// Points whose temperature history is recorded (the nearest node's value).
    #[serde(default)]
    pub probes: Vec<Vec<f64>>,
    pub face_map: Option<FaceMapConfig>,
}

fn temperature() -> String {
    "temperature".into()
}
fn yes() -> bool {
    true
}

impl Default for HeatOutput {
    fn default() -> Self {
        HeatOutput {
            name: temperature(),
            pvd: true,
            report: true,
            plot: true,
            probes: Vec::new(),
            face_map: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaceMapConfig {
    /// xmin … zmax (a face of the bounding box).
    pub face: String,
    /// Times at which to draw it (the nearest step's end).
    pub times: Vec<f64>,
    /// Pixels of the map's grid along the longer side (default 200).
    pub resolution: Option<usize>,
}

/// An axis name `x`, `y` or `z` as 0, 1, 2.
pub fn axis(name: &str, key: &str) -> Result<usize> {
    match name {
        "x" => Ok(0),
        "y" => Ok(1),
        "z" => Ok(2),
        _ => Err(Error::config(
            key,
            format!("expected x, y or z, got `{name}`"),
        )),
    }
}

/// A point of 2 or 3 coordinates as `[f64; 3]`.
pub fn point(v: &[f64], key: &str) -> Result<[f64; 3]> {
    if !(2..=3).contains(&v.len()) || v.iter().any(|x| !x.is_finite()) {
        return Err(Error::config(
            key,
            format!("expected 2 or 3 finite coordinates, got {v:?}"),
        ));
    }
    let mut p = [0.0; 3];
    p[..v.len()].copy_from_slice(v);
    Ok(p)
}

fn positive(v: f64, key: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::config(
            key,
            format!("must be positive and finite, got {v}"),
        ))
    }
}

impl HeatFile {
    pub fn parse(text: &str, source: &str) -> Result<HeatFile> {
        let f: HeatFile = deserialize(text, source)?;
        f.check()?;
        Ok(f)
    }

    /// The number of steps (from `steps` or `t_end`).
    pub fn steps(&self) -> usize {
        match (self.time.steps, self.time.t_end) {
            (Some(n), _) => n,
            (None, Some(t)) => (t / self.time.dt).round().max(1.0) as usize,
            (None, None) => 0,
        }
    }

    fn check(&self) -> Result<()> {
        if self.physics.kind != "heat" {
            return Err(Error::config(
                "physics.kind",
                format!("expected `heat`, got `{}`", self.physics.kind),
            ));
        }
        if let Some(s) = &self.physics.source {
            if let ScalarSpec::Expr(e) = scalar_spec(s, "physics.source", false)? {
                if e.depends_on_time() {
                    return Err(Error::config(
                        "physics.source",
                        "a source constant in time is supported (the expression uses t)",
                    ));
                }
            }
        }
        let t = &self.time;
        positive(t.dt, "time.dt")?;
        if !(0.5..=1.0).contains(&t.theta) {
            return Err(Error::config(
                "time.theta",
                format!(
                    "must lie in [0.5, 1] (1 backward Euler, 0.5 Crank–Nicolson), got {}",
                    t.theta
                ),
            ));
        }
        match (t.steps, t.t_end) {
            (Some(_), Some(_)) => {
                return Err(Error::config("time", "give `steps` or `t_end`, not both"))
            }
            (None, None) => return Err(Error::config("time", "missing `steps` or `t_end`")),
            (Some(0), _) => return Err(Error::config("time.steps", "must be at least 1")),
            (None, Some(e)) => {
                positive(e, "time.t_end")?;
                let n = e / t.dt;
                if (n - n.round()).abs() > 1e-6 * n.max(1.0) {
                    return Err(Error::config(
                        "time.t_end",
                        format!("{e} is not a whole number of steps of dt = {}", t.dt),
                    ));
                }
                if n.round() > 1e8 {
                    return Err(Error::config(
                        "time.t_end",
                        format!("{} steps is more than 10^8", n.round()),
                    ));
                }
            }
            _ => {}
        }
        let i = &self.initial;
        if [i.value.is_some(), i.expression.is_some(), i.vtu.is_some()]
            .iter()
            .filter(|&&b| b)
            .count()
            > 1
        {
            return Err(Error::config(
                "initial",
                "give one of `value`, `expression` or `vtu`",
            ));
        }
        if i.field.is_some() && i.vtu.is_none() {
            return Err(Error::config("initial.field", "only with `vtu`"));
        }
        if let Some(v) = i.value {
            if !v.is_finite() {
                return Err(Error::config(
                    "initial.value",
                    format!("must be finite, got {v}"),
                ));
            }
        }
        if let Some(e) = &i.expression {
            crate::expr::Expr::parse(e)
                .map_err(|err| Error::config("initial.expression", err.to_string()))?;
        }
        if self.material.is_empty() {
            return Err(Error::config(
                "material",
                "at least one [[material]] (name, k, rho, c) is needed",
            ));
        }
        for (j, m) in self.material.iter().enumerate() {
            for (k, v) in [("k", m.k), ("rho", m.rho), ("c", m.c)] {
                positive(v, &format!("material[{j}].{k}")).map_err(|_| {
                    Error::config(
                        format!("material[{j}].{k}"),
                        format!(
                            "material `{}`: must be positive and finite, got {v}",
                            m.name
                        ),
                    )
                })?;
            }
            if m.shape.is_some() && m.regions.is_some() {
                return Err(Error::config(
                    format!("material[{j}]"),
                    "give `shape` or `regions`, not both",
                ));
            }
            if self.material[..j].iter().any(|o| o.name == m.name) {
                return Err(Error::config(
                    format!("material[{j}].name"),
                    format!("`{}` is defined twice", m.name),
                ));
            }
        }
        if let Some(c) = &self.corrosion {
            positive(c.depth, "corrosion.depth")?;
            positive(c.radius, "corrosion.radius")?;
        }
        for (j, bc) in self.bc.iter().enumerate() {
            let key = |k: &str| format!("bc[{j}].{k}");
            if bc.boundary.to_vec().is_empty() {
                return Err(Error::config(
                    key("boundary"),
                    "an empty list names no boundary",
                ));
            }
            let allowed: &[&str] = match bc.kind {
                HeatBcKind::Dirichlet => &["value"],
                HeatBcKind::Flux => &["value", "factor", "on", "off"],
                HeatBcKind::Laser => &["power", "radius", "centre", "factor", "on", "off"],
                HeatBcKind::Robin => &["h", "ambient"],
            };
            let given = [
                ("value", bc.value.is_some()),
                ("factor", bc.factor.is_some()),
                ("on", bc.on.is_some()),
                ("off", bc.off.is_some()),
                ("power", bc.power.is_some()),
                ("radius", bc.radius.is_some()),
                ("centre", bc.centre.is_some()),
                ("h", bc.h.is_some()),
                ("ambient", bc.ambient.is_some()),
            ];
            if let Some((k, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
                return Err(Error::config(
                    key(k),
                    format!(
                        "not used by a {:?} condition (it takes {allowed:?})",
                        bc.kind
                    )
                    .to_lowercase(),
                ));
            }
            let needed: &[&str] = match bc.kind {
                HeatBcKind::Dirichlet | HeatBcKind::Flux => &["value"],
                HeatBcKind::Laser => &["power", "radius", "centre"],
                HeatBcKind::Robin => &["h", "ambient"],
            };
            if let Some(k) = needed
                .iter()
                .find(|k| !given.iter().any(|(g, s)| g == *k && *s))
            {
                return Err(Error::config(key(k), "missing"));
            }
        }
        if !(self.solver.rtol > 0.0 && self.solver.rtol < 1.0) {
            return Err(Error::config(
                "solver.rtol",
                format!("must lie in (0, 1), got {}", self.solver.rtol),
            ));
        }
        if self.solver.max_iter == 0 {
            return Err(Error::config("solver.max_iter", "must be at least 1"));
        }
        crate::problem::config::check_output_name(&self.output.name)?;
        if let Some(q) = self.assembly.quadrature_degree {
            if !(1..=MAX_QUADRATURE_DEGREE).contains(&q) {
                return Err(Error::config(
                    "assembly.quadrature_degree",
                    format!("must lie in 1..={MAX_QUADRATURE_DEGREE}, got {q}"),
                ));
            }
        }
        if self.space.family != "lagrange" {
            return Err(Error::config(
                "space.family",
                "heat problems use `lagrange`",
            ));
        }
        for (j, p) in self.output.probes.iter().enumerate() {
            point(p, &format!("output.probes[{j}]"))?;
        }
        if let Some(fm) = &self.output.face_map {
            if crate::problem::heat::material::Corrosion::face(&fm.face).is_none() {
                return Err(Error::config(
                    "output.face_map.face",
                    format!(
                        "expected xmin, xmax, ymin, ymax, zmin or zmax, got `{}`",
                        fm.face
                    ),
                ));
            }
            if let Some(r) = fm.resolution {
                if !(8..=2000).contains(&r) {
                    return Err(Error::config(
                        "output.face_map.resolution",
                        format!("must lie in 8..=2000, got {r}"),
                    ));
                }
            }
            if fm.times.iter().any(|t| !t.is_finite()) {
                return Err(Error::config("output.face_map.times", "must be finite"));
            }
        }
        Ok(())
    }
}
