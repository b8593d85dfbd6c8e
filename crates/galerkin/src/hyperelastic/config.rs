//! The hyperelastic problem file: `[physics] kind = "hyperelasticity"`. Every key is checked
//! (unknown keys and bad values are errors naming the dotted key).
//!
//! ```toml
//! [mesh]                      # as for every problem file (generator or Gmsh file) — or [shell], or [ring]
//! [shell]                     # a box (r, θ, φ) mapped to an ellipsoidal shell sector
//! inner = 1.0                 # radii (before the semi-axis scaling `axes`)
//! outer = 1.3
//! theta = [30.0, 90.0]        # polar angle range (degrees; θ = 90 is the plane z = 0)
//! phi = [0.0, 90.0]           # azimuth range (degrees)
//! n = [2, 6, 6]
//! axes = [1.0, 1.0, 1.5]      # x, y, z scaling: a prolate ellipsoid
//! cell = "hexahedron"         # boundaries: inner, outer, theta_min, theta_max, phi_min, phi_max
//! [ring]                      # plane strain: a rectangle (r, φ) mapped to an elliptic ring sector,
//! inner = 1.0                 # x = a r cos φ, y = b r sin φ (a thick-walled tube's cross-section)
//! outer = 1.5
//! phi = [0.0, 90.0]           # degrees
//! n = [4, 16]                 # divisions in r and φ
//! axes = [1.0, 1.0]           # a, b
//! cell = "quadrilateral"      # or "triangle"; boundaries: inner, outer, phi_min, phi_max
//! [space]
//! degree = 2
//! [physics]
//! kind = "hyperelasticity"
//! law = "usyk"                # "svk", "neo-hookean" (E, nu or lambda, mu) or "usyk"
//! C = 0.876                   # usyk: C, bf, bt, bfs (Guccione et al. 1991), kappa (penalty)
//! bf = 18.48
//! bt = 3.58
//! bfs = 1.627
//! kappa = 50.0
//! fibre = ["-y", "x", "0.3"]  # fibre direction (expressions of x, y, z), per cell at its centroid,
//!                             # or per cell from the mesh file: fibre = { element_data = "fibres" }
//!                             # (a Gmsh $ElementData view of 3 components per element, by name)
//! plane = "strain"            # 2D meshes only (the default there): plane strain, F₃₃ = 1, or
//!                             # "stress" (thin sheets: F₃₃ such that S₃₃ = 0); vectors
//!                             # (values, body_force, fibre) then have 2 components
//! body_force = [0, 0, 0]      # dead load per reference volume
//! [[bc]]
//! type = "dirichlet"          # value (expressions; with `t` they are evaluated at t = λ, otherwise
//! boundary = "theta_max"      # scaled by λ), components = [2]
//! value = [0, 0, 0]
//! components = [2]
//! [[bc]]
//! type = "pressure"           # follower pressure (on the deformed surface); "traction" is dead
//! boundary = "inner"
//! value = 2.0
//! [loads]
//! steps = 10                  # nominal load steps: λ = 1/steps, 2/steps, … 1
//! cutbacks = 6                # a failed or stalled step is retried from the last converged state
//!                             # with half the increment, at most this many halvings deep (0: off)
//! first_halvings = 0          # start at the nominal increment halved this many times (≤ cutbacks)
//! grow_iterations = 6         # double a cut increment only after a step of ≤ this many Newton
//!                             # iterations (default: after every converged step)
//! regrow_after = 1            # after a cutback, double the increment again only once this many
//!                             # steps have converged since (1: after the first)
//! predictor = "none"          # "secant": start a step on the chord through the last two converged
//! step_rtol = 0.0             # steps before λ = 1 stop at this × their first ‖R‖ (0: newton.rtol)
//! [newton]
//! rtol = 1e-9
//! atol = 1e-12
//! max_iter = 25
//! line_search = true
//! forcing = "fixed"           # linear rtol: "fixed" ([solver] rtol) or "eisenstat-walker" (inexact
//!                             # Newton: rtol tied to the drop of ‖R‖, never below [solver] rtol)
//! eta0 = 0.3                  # eisenstat-walker: rtol of an attempt's first solve
//! eta_rise = 0.9              # eisenstat-walker: the loosest rtol after ‖R‖ rose
//! resolve_indefinite = false  # CG met negative curvature after a loose step: solve it again to 1e-3
//! max_rise = 1000.0           # the line search halves a step that raises ‖R‖ more than this many times
//! [solver]
//! method = "gmres"            # cg, gmres, bicgstab, direct (CPU)
//! preconditioner = "block-jacobi"
//! ```
use super::newton::LinearPrecond;
use crate::backend::BackendKind;
use crate::mesh::CellType;
use crate::problem::config::{deserialize, MeshConfig, OneOrMany, SpaceConfig};
use crate::solver::SolverMethod;
use crate::{Error, Result};
use serde::Deserialize;

/// Whether a problem file's text is a hyperelastic problem (`[physics] kind = "hyperelasticity"`).
pub fn is_hyperelastic(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("physics")?.get("kind")?.as_str().map(|k| k == "hyperelasticity"))
        .unwrap_or(false)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperFile {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub backend: BackendKind,
    pub mesh: Option<MeshConfig>,
    pub shell: Option<ShellConfig>,
    pub ring: Option<RingConfig>,
    #[serde(default)]
    pub space: SpaceConfig,
    pub physics: HyperPhysics,
    #[serde(default)]
    pub bc: Vec<HyperBc>,
    #[serde(default)]
    pub loads: LoadsConfig,
    #[serde(default)]
    pub newton: NewtonConfig,
    #[serde(default)]
    pub solver: HyperSolver,
    #[serde(default)]
    pub output: HyperOutput,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellConfig {
    pub inner: f64,
    pub outer: f64,
    pub theta: [f64; 2],
    pub phi: [f64; 2],
    pub n: [usize; 3],
    #[serde(default = "unit_axes")]
    pub axes: [f64; 3],
    #[serde(default = "hexahedron")]
    pub cell: CellType,
}

/// `[ring]`: a plane-strain sector of an elliptic ring (`hyperelastic::mesh::ring`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingConfig {
    pub inner: f64,
    pub outer: f64,
    pub phi: [f64; 2],
    pub n: [usize; 2],
    #[serde(default = "unit_axes_2d")]
    pub axes: [f64; 2],
    #[serde(default = "quadrilateral")]
    pub cell: CellType,
}

fn unit_axes_2d() -> [f64; 2] {
    [1.0; 2]
}
fn quadrilateral() -> CellType {
    CellType::Quadrilateral
}

fn unit_axes() -> [f64; 3] {
    [1.0; 3]
}
fn hexahedron() -> CellType {
    CellType::Hexahedron
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LawName {
    Svk,
    NeoHookean,
    Usyk,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperPhysics {
    pub kind: String,
    pub law: LawName,
    #[serde(rename = "E")]
    pub young: Option<f64>,
    pub nu: Option<f64>,
    pub lambda: Option<f64>,
    pub mu: Option<f64>,
    #[serde(rename = "C")]
    pub c: Option<f64>,
    pub bf: Option<f64>,
    pub bt: Option<f64>,
    pub bfs: Option<f64>,
    pub kappa: Option<f64>,
    /// Fibre direction: expressions of x, y, z (per cell, at its centroid; one per dimension), or
    /// `{ element_data = "view name" }` (per cell, from the Gmsh file's `$ElementData`).
    pub fibre: Option<toml::Value>,
    /// Dead body force per reference volume (one expression per dimension).
    pub body_force: Option<toml::Value>,
    /// 2D: `"strain"` (plane strain, F₃₃ = 1; the default on a 2D mesh) or `"stress"` (plane stress:
    /// F₃₃ solved for S₃₃ = 0 at every point — thin sheets).
    pub plane: Option<String>,
    /// Volume quadrature of residual and Jacobian: `"full"` (degree 2k on simplices, the default)
    /// or `"stiffness"` (degree 2(k−1): exact for the small-strain stiffness on affine simplices).
    pub quadrature: Option<String>,
}

/// Where the fibre directions come from.
pub enum FibreSource {
    /// Expressions evaluated at each cell's centroid.
    Expr(toml::Value),
    /// A named `$ElementData` view of the Gmsh mesh file.
    ElementData(String),
}

impl HyperPhysics {
    /// The fibre key, parsed (`None` when absent).
    pub fn fibre_source(&self) -> Result<Option<FibreSource>> {
        let Some(v) = &self.fibre else { return Ok(None) };
        match v {
            toml::Value::Array(_) => Ok(Some(FibreSource::Expr(v.clone()))),
            toml::Value::Table(t) => {
                if let Some(k) = t.keys().find(|k| *k != "element_data") {
                    return Err(Error::config(format!("physics.fibre.{k}"), "unknown key (the table takes `element_data` only)"));
                }
                match t.get("element_data") {
                    Some(toml::Value::String(name)) if !name.is_empty() => Ok(Some(FibreSource::ElementData(name.clone()))),
                    Some(_) => Err(Error::config("physics.fibre.element_data", "expected the name of a $ElementData view (a non-empty string)")),
                    None => Err(Error::config("physics.fibre.element_data", "missing")),
                }
            }
            other => Err(Error::config("physics.fibre", format!("expected an array of expressions or {{ element_data = \"name\" }}, got {}", other.type_str()))),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HyperBcKind {
    Dirichlet,
    Traction,
    Pressure,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperBc {
    pub boundary: OneOrMany,
    #[serde(rename = "type")]
    pub kind: HyperBcKind,
    /// Dirichlet, traction: three components; pressure: one scalar.
    pub value: toml::Value,
    pub components: Option<Vec<usize>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadsConfig {
    #[serde(default = "one")]
    pub steps: usize,
    #[serde(default = "cutbacks")]
    pub cutbacks: usize,
    /// Halvings of the nominal increment before the first attempt.
    #[serde(default)]
    pub first_halvings: usize,
    /// Double the increment again only after a step of at most this many Newton iterations.
    pub grow_iterations: Option<usize>,
    /// After an abandoned attempt, the increment doubles again only once this many steps have
    /// converged since it (1: after the first, the path before this key).
    #[serde(default = "one")]
    pub regrow_after: usize,
    /// `none` or `secant` (extrapolate from the last two converged steps).
    #[serde(default)]
    pub predictor: Predictor,
    /// Steps before the last stop at this × their first ‖R‖ (0: the final tolerance).
    #[serde(default)]
    pub step_rtol: f64,
}

/// The start of a load step: the last converged state, or the secant through the last two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Predictor {
    #[default]
    None,
    Secant,
}

impl Default for LoadsConfig {
    fn default() -> Self {
        LoadsConfig { steps: 1, cutbacks: cutbacks(), first_halvings: 0, grow_iterations: None, regrow_after: 1, predictor: Predictor::None, step_rtol: 0.0 }
    }
}

impl LoadsConfig {
    /// The Newton loop's [`super::newton::LoadPath`].
    pub fn path(&self) -> super::newton::LoadPath {
        super::newton::LoadPath { first_halvings: self.first_halvings, grow_iterations: self.grow_iterations.unwrap_or(usize::MAX), regrow_after: self.regrow_after, secant: self.predictor == Predictor::Secant, step_rtol: self.step_rtol }
    }
}

fn cutbacks() -> usize {
    super::newton::DEFAULT_CUTBACKS
}

fn one() -> usize {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewtonConfig {
    #[serde(default = "newton_rtol")]
    pub rtol: f64,
    #[serde(default = "newton_atol")]
    pub atol: f64,
    #[serde(default = "newton_max_iter")]
    pub max_iter: usize,
    #[serde(default = "yes")]
    pub line_search: bool,
    #[serde(default)]
    pub forcing: super::newton::Forcing,
    /// Eisenstat–Walker: η of an attempt's first solve, and the most η may be where ‖R‖ rose.
    #[serde(default = "ew_eta0")]
    pub eta0: f64,
    #[serde(default = "ew_eta_rise")]
    pub eta_rise: f64,
    /// Solve a loose step again where the iterate it led to has an indefinite Jacobian.
    #[serde(default)]
    pub resolve_indefinite: bool,
    /// The line search halves a step that raises ‖R‖ more than this many times.
    #[serde(default = "max_rise")]
    pub max_rise: f64,
}

fn max_rise() -> f64 {
    super::newton::MAX_RESIDUAL_RISE
}

impl Default for NewtonConfig {
    fn default() -> Self {
        NewtonConfig { rtol: newton_rtol(), atol: newton_atol(), max_iter: newton_max_iter(), line_search: true, forcing: Default::default(), eta0: ew_eta0(), eta_rise: ew_eta_rise(), resolve_indefinite: false, max_rise: max_rise() }
    }
}

fn ew_eta0() -> f64 {
    super::forcing::EW_START.eta0
}
fn ew_eta_rise() -> f64 {
    super::forcing::EW_START.eta_rise
}
fn newton_rtol() -> f64 {
    1e-9
}
fn newton_atol() -> f64 {
    1e-12
}
fn newton_max_iter() -> usize {
    25
}
fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperSolver {
    /// Default: `cg` without a pressure load (the Jacobian is symmetric), else `gmres`.
    pub method: Option<SolverMethod>,
    #[serde(default = "block_jacobi")]
    pub preconditioner: LinearPrecond,
    #[serde(default = "lin_rtol")]
    pub rtol: f64,
    #[serde(default = "lin_max_iter")]
    pub max_iter: usize,
    #[serde(default = "restart")]
    pub restart: usize,
    /// `[solver.multigrid]`: the settings of `preconditioner = "multigrid"`.
    #[serde(default)]
    pub multigrid: super::multigrid::MgConfig,
}

impl Default for HyperSolver {
    fn default() -> Self {
        HyperSolver { method: None, preconditioner: block_jacobi(), rtol: lin_rtol(), max_iter: lin_max_iter(), restart: restart(), multigrid: Default::default() }
    }
}

fn block_jacobi() -> LinearPrecond {
    LinearPrecond::BlockJacobi
}
fn lin_rtol() -> f64 {
    1e-10
}
fn lin_max_iter() -> usize {
    5000
}
fn restart() -> usize {
    100
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperOutput {
    #[serde(default = "displacement")]
    pub name: String,
    #[serde(default = "yes")]
    pub vtu: bool,
    #[serde(default = "yes")]
    pub report: bool,
    /// Points where the report gives the displacement after every load step.
    #[serde(default)]
    pub points: Vec<[f64; 3]>,
}

impl Default for HyperOutput {
    fn default() -> Self {
        HyperOutput { name: displacement(), vtu: true, report: true, points: Vec::new() }
    }
}

fn displacement() -> String {
    "displacement".into()
}

fn positive(key: &str, v: Option<f64>) -> Result<f64> {
    match v {
        Some(x) if x > 0.0 && x.is_finite() => Ok(x),
        Some(x) => Err(Error::config(key, format!("must be positive and finite, got {x}"))),
        None => Err(Error::config(key, "missing")),
    }
}

impl HyperFile {
    pub fn parse(text: &str, source: &str) -> Result<HyperFile> {
        let f: HyperFile = deserialize(text, source)?;
        f.check()?;
        Ok(f)
    }

    fn check(&self) -> Result<()> {
        if self.physics.kind != "hyperelasticity" {
            return Err(Error::config("physics.kind", "must be \"hyperelasticity\""));
        }
        match (self.mesh.is_some(), self.shell.is_some(), self.ring.is_some()) {
            (true, false, false) | (false, true, false) | (false, false, true) => {}
            (false, false, false) => return Err(Error::config("mesh", "missing: give [mesh], [shell] or [ring]")),
            (_, _, true) => return Err(Error::config("ring", "give one of [mesh], [shell] and [ring]")),
            _ => return Err(Error::config("shell", "give either [mesh] or [shell], not both")),
        }
        if let Some(r) = &self.ring {
            if !(r.inner > 0.0 && r.outer > r.inner && r.outer.is_finite()) {
                return Err(Error::config("ring.inner", format!("need 0 < inner < outer, got {} and {}", r.inner, r.outer)));
            }
            if !(r.phi[0].is_finite() && r.phi[0] < r.phi[1] && r.phi[1] - r.phi[0] < 360.0) {
                return Err(Error::config("ring.phi", "need φ₀ < φ₁ < φ₀ + 360 degrees (a sector: the map has no periodic seam)"));
            }
            if r.n.contains(&0) {
                return Err(Error::config("ring.n", "divisions must be positive"));
            }
            if r.axes.iter().any(|a| !(*a > 0.0 && a.is_finite())) {
                return Err(Error::config("ring.axes", "semi-axis scalings must be positive"));
            }
            if !matches!(r.cell, CellType::Quadrilateral | CellType::Triangle) {
                return Err(Error::config("ring.cell", format!("must be \"quadrilateral\" or \"triangle\", got {}", r.cell)));
            }
        }
        if let Some(s) = &self.shell {
            if !(s.inner > 0.0 && s.outer > s.inner && s.outer.is_finite()) {
                return Err(Error::config("shell.inner", format!("need 0 < inner < outer, got {} and {}", s.inner, s.outer)));
            }
            if !(0.0 < s.theta[0] && s.theta[0] < s.theta[1] && s.theta[1] < 180.0) {
                return Err(Error::config("shell.theta", "need 0 < θ₀ < θ₁ < 180 degrees (the poles are excluded)"));
            }
            if !(s.phi[0] < s.phi[1] && s.phi[1] - s.phi[0] < 360.0) {
                return Err(Error::config("shell.phi", "need φ₀ < φ₁ < φ₀ + 360 degrees (a sector: the map has no periodic seam)"));
            }
            if s.n.contains(&0) {
                return Err(Error::config("shell.n", "divisions must be positive"));
            }
            if s.axes.iter().any(|a| !(*a > 0.0 && a.is_finite())) {
                return Err(Error::config("shell.axes", "semi-axis scalings must be positive"));
            }
        }
        if self.loads.steps == 0 {
            return Err(Error::config("loads.steps", "must be at least 1"));
        }
        if self.loads.cutbacks > 30 {
            return Err(Error::config("loads.cutbacks", format!("at most 30 halvings of a load step, got {}", self.loads.cutbacks)));
        }
        if self.loads.first_halvings > self.loads.cutbacks {
            return Err(Error::config("loads.first_halvings", format!("at most `cutbacks` = {}, got {}", self.loads.cutbacks, self.loads.first_halvings)));
        }
        if self.loads.grow_iterations == Some(0) {
            return Err(Error::config("loads.grow_iterations", "must be at least 1 (leave it out to grow after every step)"));
        }
        if self.loads.regrow_after == 0 {
            return Err(Error::config("loads.regrow_after", "must be at least 1 (1: double again after the first converged step)"));
        }
        if !(self.loads.step_rtol >= 0.0 && self.loads.step_rtol < 1.0) {
            return Err(Error::config("loads.step_rtol", format!("must lie in [0, 1), got {}", self.loads.step_rtol)));
        }
        let n = &self.newton;
        if !(n.max_rise > 1.0 && n.max_rise.is_finite()) {
            return Err(Error::config("newton.max_rise", format!("must be a finite number above 1, got {}", n.max_rise)));
        }
        if !(n.rtol >= 0.0 && n.rtol < 1.0) {
            return Err(Error::config("newton.rtol", format!("must lie in [0, 1), got {}", n.rtol)));
        }
        if !(n.atol >= 0.0 && n.atol.is_finite()) {
            return Err(Error::config("newton.atol", format!("must be non-negative, got {}", n.atol)));
        }
        for (key, v) in [("newton.eta0", n.eta0), ("newton.eta_rise", n.eta_rise)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::config(key, format!("must lie in (0, 1), got {v}")));
            }
        }
        if !(self.solver.rtol > 0.0 && self.solver.rtol < 1.0) {
            return Err(Error::config("solver.rtol", format!("must lie in (0, 1), got {}", self.solver.rtol)));
        }
        self.law()?;
        self.physics.fibre_source()?;
        if let Some(p) = &self.physics.plane {
            if p != "strain" && p != "stress" {
                return Err(Error::config("physics.plane", format!("`{p}` is not a 2D model: \"strain\" (the default) or \"stress\"")));
            }
        }
        for (i, bc) in self.bc.iter().enumerate() {
            if bc.components.is_some() && bc.kind != HyperBcKind::Dirichlet {
                return Err(Error::config(format!("bc[{i}].components"), "only for dirichlet conditions"));
            }
            if let Some(c) = &bc.components {
                if c.is_empty() || c.iter().any(|&k| k > 2) {
                    return Err(Error::config(format!("bc[{i}].components"), "components are 0, 1, 2 (0, 1 in 2D)"));
                }
            }
        }
        Ok(())
    }

    /// The quadrature degree `physics.quadrature` asks for on `space` (None: the default).
    pub fn quadrature_degree(&self, space: &crate::space::FunctionSpace) -> Result<Option<usize>> {
        match self.physics.quadrature.as_deref() {
            None | Some("full") => Ok(None),
            Some("stiffness") => Ok(Some(super::element::stiffness_quadrature_degree(space))),
            Some(other) => Err(Error::config("physics.quadrature", format!("unknown quadrature `{other}` (full, stiffness)"))),
        }
    }

    /// The law with its parameters (Lamé from E, ν where given).
    pub fn law(&self) -> Result<super::Law> {
        let p = &self.physics;
        let lame = || -> Result<(f64, f64)> {
            match (p.young, p.nu, p.lambda, p.mu) {
                (Some(e), Some(nu), None, None) => {
                    let e = positive("physics.E", Some(e))?;
                    if !(-1.0 < nu && nu < 0.5) {
                        return Err(Error::config("physics.nu", format!("must lie in (-1, 0.5), got {nu}")));
                    }
                    Ok((e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), e / (2.0 * (1.0 + nu))))
                }
                (None, None, Some(l), Some(m)) => {
                    if !(l >= 0.0 && l.is_finite()) {
                        return Err(Error::config("physics.lambda", format!("must be non-negative, got {l}")));
                    }
                    Ok((l, positive("physics.mu", Some(m))?))
                }
                _ => Err(Error::config("physics", "give either E and nu, or lambda and mu")),
            }
        };
        let usyk_keys = [("C", p.c), ("bf", p.bf), ("bt", p.bt), ("bfs", p.bfs), ("kappa", p.kappa)];
        Ok(match p.law {
            LawName::Svk | LawName::NeoHookean => {
                if let Some((k, _)) = usyk_keys.iter().find(|(_, v)| v.is_some()) {
                    return Err(Error::config(format!("physics.{k}"), "only for law = \"usyk\""));
                }
                if p.fibre.is_some() {
                    return Err(Error::config("physics.fibre", "only for law = \"usyk\" (the others are isotropic)"));
                }
                let (lambda, mu) = lame()?;
                if p.law == LawName::Svk {
                    super::Law::Svk { lambda, mu }
                } else {
                    super::Law::NeoHookean { lambda, mu }
                }
            }
            LawName::Usyk => {
                if p.young.is_some() || p.nu.is_some() || p.lambda.is_some() || p.mu.is_some() {
                    return Err(Error::config("physics", "law = \"usyk\" takes C, bf, bt, bfs and kappa, not Lamé parameters"));
                }
                if p.fibre.is_none() {
                    return Err(Error::config("physics.fibre", "missing: the usyk law needs a fibre direction"));
                }
                super::Law::Usyk {
                    c: positive("physics.C", p.c)?,
                    bf: positive("physics.bf", p.bf)?,
                    bt: positive("physics.bt", p.bt)?,
                    bfs: positive("physics.bfs", p.bfs)?,
                    kappa: positive("physics.kappa", p.kappa)?,
                }
            }
        })
    }

    /// Whether the 2D model is plane stress (`physics.plane = "stress"`).
    pub fn plane_stress(&self) -> bool {
        self.physics.plane.as_deref() == Some("stress")
    }

    /// Whether any load is a follower pressure (non-symmetric Jacobian).
    pub fn has_pressure(&self) -> bool {
        self.bc.iter().any(|b| b.kind == HyperBcKind::Pressure)
    }
}

/// An expression from a number or a string (`key` names it in errors).
pub fn expr_of(v: &toml::Value, key: &str) -> Result<crate::expr::Expr> {
    let src = match v {
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Integer(i) => format!("{i}"),
        toml::Value::String(s) => s.clone(),
        other => return Err(Error::config(key, format!("expected a number or an expression, got {}", other.type_str()))),
    };
    crate::expr::Expr::parse(&src).map_err(|e| Error::config(key, e.to_string()))
}

/// Three expressions from an array of three numbers or strings.
pub fn expr3(v: &toml::Value, key: &str) -> Result<[crate::expr::Expr; 3]> {
    exprs(v, key, 3)
}

/// `dim` expressions from an array of `dim` numbers or strings, padded with zeros to three (plane
/// strain's vectors have two components).
pub fn exprs(v: &toml::Value, key: &str, dim: usize) -> Result<[crate::expr::Expr; 3]> {
    let a = v.as_array().ok_or_else(|| Error::config(key, format!("expected an array of {dim} components")))?;
    if a.len() != dim {
        let why = if dim == 2 { " (plane strain: x and y)" } else { "" };
        return Err(Error::config(key, format!("expected {dim} components{why}, got {}", a.len())));
    }
    let zero = toml::Value::Integer(0);
    let at = |i: usize| if i < dim { expr_of(&a[i], &format!("{key}[{i}]")) } else { expr_of(&zero, key) };
    Ok([at(0)?, at(1)?, at(2)?])
}
