//! The problem-file schema of a DG run (`[space] family = "dg"`). Its own structs, checked key by
//! key as the Lagrange schema is (`problem::config`): unknown keys, wrong types and impossible
//! values are errors naming the dotted key and the line.
use super::basis::{BasisKind, MAX_DEGREE};
use super::mesh::IntervalMesh;
use super::method::{DegreeScaling, HScaling, Method, Penalty};
use super::norms::Exact;
use super::problem::{BoundaryCondition, DgProblem, Field};
use super::solve::{DgPreconditioner, DgSolver, DirectKind};
use crate::problem::config::{check_output_name, deserialize, scalar_spec, BackendKind, ScalarSpec};
use crate::solver::{SolverMethod, KrylovOptions};
use crate::{Error, Result};
use serde::Deserialize;

/// Whether a problem file asks for a DG space (`[space] family = "dg"`). A file that is not valid
/// TOML is not DG here; the general parser then reports its error.
pub fn is_dg(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("space")?.get("family")?.as_str().map(|f| f == "dg"))
        .unwrap_or(false)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DgFile {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub backend: BackendKind,
    pub mesh: MeshKeys,
    pub space: SpaceKeys,
    #[serde(default)]
    pub physics: PhysicsKeys,
    #[serde(default)]
    pub bc: Vec<BcKeys>,
    pub exact: Option<ExactKeys>,
    #[serde(default)]
    pub solver: SolverKeys,
    #[serde(default)]
    pub output: OutputKeys,
}

/// A number or a one-element array (`n = 10` or `n = [10]`, as in the Lagrange files).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(untagged)]
pub enum One<T> {
    Value(T),
    Array([T; 1]),
}

impl<T: Copy> One<T> {
    pub fn get(self) -> T {
        match self {
            One::Value(v) | One::Array([v]) => v,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshKeys {
    /// Only `interval`.
    pub generator: Option<String>,
    /// Only `interval`.
    pub cell: Option<String>,
    pub n: One<usize>,
    pub lower: Option<One<f64>>,
    pub upper: Option<One<f64>>,
    /// Ratio of consecutive element widths.
    pub grading: Option<f64>,
    /// Interior vertices moved by up to random·h/2 (0 ≤ random < 1), seeded by `seed`.
    pub random: Option<f64>,
    pub seed: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceKeys {
    pub family: String,
    pub degree: usize,
    #[serde(default)]
    pub basis: BasisKind,
    #[serde(default)]
    pub method: Method,
    /// σ on interior faces (default 4).
    pub penalty: Option<f64>,
    /// σ on Dirichlet ends (default: `penalty`).
    pub boundary_penalty: Option<f64>,
    #[serde(default)]
    pub penalty_degree: DegreeScaling,
    #[serde(default)]
    pub penalty_h: HScaling,
    #[serde(default)]
    pub penalty_coefficient: bool,
    pub quadrature_points: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsKeys {
    /// Only `poisson` (−(a u′)′ + c u = f).
    pub kind: Option<String>,
    pub kappa: Option<toml::Value>,
    pub reaction: Option<toml::Value>,
    pub source: Option<toml::Value>,
}

/// `"xmin"`, `"xmax"` or a list of them (names checked in [`DgFile::setup`], so an unknown one is
/// reported by name).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Ends {
    One(String),
    Many(Vec<String>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BcKind {
    Dirichlet,
    Neumann,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BcKeys {
    pub boundary: Ends,
    #[serde(rename = "type")]
    pub kind: BcKind,
    /// Dirichlet: u; Neumann: the outward flux a ∂u/∂n. Number or expression of x (taken at the end).
    pub value: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactKeys {
    pub solution: toml::Value,
    /// u′ (optional: a fourth-order difference of `solution` otherwise).
    pub derivative: Option<toml::Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MethodKey {
    Direct,
    Cg,
    Gmres,
    Bicgstab,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverKeys {
    #[serde(default = "direct")]
    pub method: MethodKey,
    #[serde(default)]
    pub direct: DirectKind,
    /// Iterative refinement steps after a direct solve (default: 1 for cyclic reduction, else 0).
    pub refine: Option<usize>,
    #[serde(default)]
    pub preconditioner: DgPreconditioner,
    #[serde(default = "rtol")]
    pub rtol: f64,
    #[serde(default)]
    pub atol: f64,
    #[serde(default = "max_iter")]
    pub max_iter: usize,
    #[serde(default = "restart")]
    pub restart: usize,
}

fn direct() -> MethodKey {
    MethodKey::Direct
}
fn rtol() -> f64 {
    1e-12
}
fn max_iter() -> usize {
    100_000
}
fn restart() -> usize {
    100
}

impl Default for SolverKeys {
    fn default() -> Self {
        SolverKeys {
            method: direct(),
            direct: DirectKind::Auto,
            refine: None,
            preconditioner: DgPreconditioner::BlockJacobi,
            rtol: rtol(),
            atol: 0.0,
            max_iter: max_iter(),
            restart: restart(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputKeys {
    /// Stem of the CSV and PNG of the sampled solution.
    #[serde(default = "solution")]
    pub name: String,
    #[serde(default = "yes")]
    pub csv: bool,
    #[serde(default = "yes")]
    pub plot: bool,
    #[serde(default = "yes")]
    pub report: bool,
    /// Points per element on the sampling grid (both ends included, so jumps show).
    #[serde(default = "samples")]
    pub samples_per_element: usize,
    /// At most this many elements are sampled (evenly spread) on large meshes.
    #[serde(default = "max_elements")]
    pub max_sampled_elements: usize,
    /// Refinements (every element halved) of the convergence table when `[exact]` is given.
    #[serde(default = "refinements")]
    pub convergence: usize,
}

fn solution() -> String {
    "solution".into()
}
fn yes() -> bool {
    true
}
fn samples() -> usize {
    9
}
fn max_elements() -> usize {
    2000
}
fn refinements() -> usize {
    4
}

impl Default for OutputKeys {
    fn default() -> Self {
        OutputKeys {
            name: solution(),
            csv: true,
            plot: true,
            report: true,
            samples_per_element: samples(),
            max_sampled_elements: max_elements(),
            convergence: refinements(),
        }
    }
}

/// What a DG file turns into.
pub struct DgSetup {
    pub problem: DgProblem,
    pub exact: Option<Exact>,
    pub solver: DgSolver,
}

impl DgFile {
    pub fn parse(text: &str, source: &str) -> Result<DgFile> {
        let f: DgFile = deserialize(text, source)?;
        f.check()?;
        Ok(f)
    }

    /// Ranges and combinations serde cannot check.
    fn check(&self) -> Result<()> {
        let (m, s, o, v) = (&self.mesh, &self.space, &self.output, &self.solver);
        for (key, value) in [("mesh.generator", &m.generator), ("mesh.cell", &m.cell)] {
            if let Some(g) = value {
                if g != "interval" {
                    return Err(Error::config(key, format!("a DG space lives on an interval mesh: expected `interval`, got `{g}`")));
                }
            }
        }
        if m.n.get() == 0 {
            return Err(Error::config("mesh.n", "must be at least 1 element"));
        }
        if m.grading.is_some() && m.random.is_some() {
            return Err(Error::config("mesh.random", "give `grading` or `random`, not both"));
        }
        if let Some(g) = m.grading {
            if !(g > 0.0 && g.is_finite()) {
                return Err(Error::config("mesh.grading", format!("must be a positive number, got {g}")));
            }
        }
        if let Some(r) = m.random {
            if !(0.0..1.0).contains(&r) {
                return Err(Error::config("mesh.random", format!("must lie in [0, 1), got {r}")));
            }
        }
        if m.seed.is_some() && m.random.is_none() {
            return Err(Error::config("mesh.seed", "only a `random` mesh takes a seed"));
        }
        if s.family != "dg" {
            return Err(Error::config("space.family", format!("expected `dg`, got `{}`", s.family)));
        }
        if !(1..=MAX_DEGREE).contains(&s.degree) {
            return Err(Error::config("space.degree", format!("DG degree must be 1 to {MAX_DEGREE}, got {}", s.degree)));
        }
        for (key, value) in [("space.penalty", s.penalty), ("space.boundary_penalty", s.boundary_penalty)] {
            if let Some(p) = value {
                if !(p >= 0.0 && p.is_finite()) {
                    return Err(Error::config(key, format!("must be a non-negative number, got {p}")));
                }
            }
        }
        if let Some(q) = s.quadrature_points {
            if !(s.degree + 1..=64).contains(&q) {
                return Err(Error::config("space.quadrature_points", format!("must be {} (k + 1) to 64, got {q}", s.degree + 1)));
            }
        }
        if let Some(k) = &self.physics.kind {
            if k != "poisson" {
                return Err(Error::config("physics.kind", format!("DG solves −(a u′)′ + c u = f: expected `poisson`, got `{k}`")));
            }
        }
        if !(v.rtol >= 0.0 && v.rtol < 1.0) {
            return Err(Error::config("solver.rtol", format!("must lie in [0, 1), got {}", v.rtol)));
        }
        if !(v.atol >= 0.0 && v.atol.is_finite()) {
            return Err(Error::config("solver.atol", format!("must be a non-negative number, got {}", v.atol)));
        }
        if v.rtol == 0.0 && v.atol == 0.0 {
            return Err(Error::config("solver.rtol", "rtol and atol cannot both be zero"));
        }
        if v.refine.is_some_and(|r| r > 10) {
            return Err(Error::config("solver.refine", "at most 10 refinement steps (one is enough for f64)"));
        }
        if v.refine.is_some() && v.method != MethodKey::Direct {
            return Err(Error::config("solver.refine", "only a direct solve is refined"));
        }
        if v.max_iter == 0 {
            return Err(Error::config("solver.max_iter", "must be at least 1"));
        }
        if !(1..=10_000).contains(&v.restart) {
            return Err(Error::config("solver.restart", format!("must be 1 to 10000, got {}", v.restart)));
        }
        check_output_name(&o.name)?;
        if o.samples_per_element < 2 {
            return Err(Error::config("output.samples_per_element", "must be at least 2 (both ends of each element)"));
        }
        if o.max_sampled_elements == 0 {
            return Err(Error::config("output.max_sampled_elements", "must be at least 1"));
        }
        if o.convergence > 12 {
            return Err(Error::config("output.convergence", format!("at most 12 refinements (each doubles the elements), got {}", o.convergence)));
        }
        Ok(())
    }

    /// (elements, degree, quadrature points, coefficient fields that are not constants): what the
    /// memory estimate needs, known before anything is built.
    pub fn shape(&self) -> (usize, usize, usize, usize) {
        let s = &self.space;
        let ph = &self.physics;
        let sampled = [&ph.kappa, &ph.reaction, &ph.source].iter().filter(|v| matches!(v, Some(toml::Value::String(_)))).count();
        (self.mesh.n.get(), s.degree, s.quadrature_points.unwrap_or(s.degree + 2), sampled)
    }

    /// Builds the mesh, problem, exact solution and solver.
    pub fn setup(&self) -> Result<DgSetup> {
        let m = &self.mesh;
        let (a, b) = (m.lower.map_or(0.0, One::get), m.upper.map_or(1.0, One::get));
        let n = m.n.get();
        let mesh_err = |e: Error| Error::config("mesh", e.to_string());
        let mesh = match (m.grading, m.random) {
            (Some(g), _) => IntervalMesh::graded(n, a, b, g),
            (_, Some(r)) => IntervalMesh::random(n, a, b, r, m.seed.unwrap_or(0)),
            _ => IntervalMesh::uniform(n, a, b),
        }
        .map_err(mesh_err)?;
        let s = &self.space;
        let defaults = Penalty::default();
        let sigma = s.penalty.unwrap_or(defaults.sigma);
        let penalty = Penalty {
            sigma,
            boundary_sigma: s.boundary_penalty.unwrap_or(sigma),
            degree: s.penalty_degree,
            h: s.penalty_h,
            times_coefficient: s.penalty_coefficient,
        };
        let field = |v: &Option<toml::Value>, key: &str, default: f64| -> Result<Field> {
            match v {
                None => Ok(Field::Const(default)),
                Some(v) => to_field(v, key),
            }
        };
        let ph = &self.physics;
        let mut problem = DgProblem::new(mesh, s.degree);
        problem.basis = s.basis;
        problem.quadrature_points = s.quadrature_points;
        problem.method = s.method;
        problem.penalty = penalty;
        problem.a = field(&ph.kappa, "physics.kappa", 1.0)?;
        problem.c = field(&ph.reaction, "physics.reaction", 0.0)?;
        problem.f = field(&ph.source, "physics.source", 0.0)?;
        let (mut left, mut right) = (None, None);
        for (i, bc) in self.bc.iter().enumerate() {
            let ends = match &bc.boundary {
                Ends::One(e) => vec![e.clone()],
                Ends::Many(v) => v.clone(),
            };
            if ends.is_empty() {
                return Err(Error::config(format!("bc[{i}].boundary"), "names no end (use \"xmin\", \"xmax\" or both)"));
            }
            let value = to_field(&bc.value, &format!("bc[{i}].value"))?;
            for end in ends {
                let (slot, x) = match end.as_str() {
                    "xmin" => (&mut left, a),
                    "xmax" => (&mut right, b),
                    other => {
                        return Err(Error::config(format!("bc[{i}].boundary"), format!("unknown end `{other}` (an interval has \"xmin\" and \"xmax\")")))
                    }
                };
                if slot.is_some() {
                    return Err(Error::config(format!("bc[{i}].boundary"), format!("a second condition for `{end}` (one per end)")));
                }
                let g = value.eval(x);
                if !g.is_finite() {
                    return Err(Error::config(format!("bc[{i}].value"), format!("is {g} at x = {x}")));
                }
                *slot = Some(match bc.kind {
                    BcKind::Dirichlet => BoundaryCondition::Dirichlet(g),
                    BcKind::Neumann => BoundaryCondition::Neumann(g),
                });
            }
        }
        problem.left = left.ok_or_else(|| Error::config("bc", "no condition for the end `xmin` (give one [[bc]] per end)"))?;
        problem.right = right.ok_or_else(|| Error::config("bc", "no condition for the end `xmax` (give one [[bc]] per end)"))?;
        problem.check()?;
        let exact = match &self.exact {
            None => None,
            Some(e) => Some(Exact {
                u: to_field(&e.solution, "exact.solution")?,
                du: e.derivative.as_ref().map(|d| to_field(d, "exact.derivative")).transpose()?,
            }),
        };
        let v = &self.solver;
        let options = KrylovOptions { rtol: v.rtol, atol: v.atol, max_iter: v.max_iter, restart: v.restart, progress: false };
        let krylov = |method| DgSolver::Krylov { method, preconditioner: v.preconditioner, options: options.clone() };
        let solver = match v.method {
            MethodKey::Direct => DgSolver::Direct { kind: v.direct, refine: v.refine },
            MethodKey::Cg => krylov(SolverMethod::Cg),
            MethodKey::Gmres => krylov(SolverMethod::Gmres),
            MethodKey::Bicgstab => krylov(SolverMethod::Bicgstab),
        };
        if v.method == MethodKey::Cg && !problem.method.symmetric() {
            return Err(Error::config("solver.method", format!("CG needs SIPG; {} is not symmetric: use gmres or bicgstab", problem.method.name())));
        }
        Ok(DgSetup { problem, exact, solver })
    }
}

/// A number or an expression of x.
fn to_field(v: &toml::Value, key: &str) -> Result<Field> {
    match scalar_spec(v, key, false)? {
        ScalarSpec::Number(x) if x.is_finite() => Ok(Field::Const(x)),
        ScalarSpec::Number(x) => Err(Error::config(key, format!("must be finite, got {x}"))),
        ScalarSpec::Expr(e) => Ok(Field::Expr(e)),
        ScalarSpec::Regions(_) => Err(Error::config(key, "per-region values need a mesh with regions; DG meshes have none")),
    }
}
