//! Problem files (TOML). Every key is checked: unknown or misspelled keys, wrong types and
//! impossible values are errors naming the dotted key path and the line.
//!
//! Scalar fields (coefficients, sources, boundary values) are a number, a math expression of
//! x, y, z, t (`"sin(pi*x)*y"`), or `{ regions = { 1 = 1.0, 2 = 10.0 } }` for coefficients;
//! vector fields (body forces, tractions, displacements) are arrays of scalar fields.
pub use crate::backend::BackendKind;
use crate::mesh::CellType;
use crate::operator::{AssemblyLevel, Scatter, Tuning};
use crate::problem::linear::{Boundary, SolverMethod};
use crate::solver::precond::PreconditionerKind;
use crate::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A whole problem file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemFile {
    /// Free text shown in reports.
    #[serde(default)]
    pub title: String,
    /// `auto` (GPU when one is found), `cpu` or `cuda`.
    #[serde(default)]
    pub backend: BackendKind,
    pub mesh: MeshConfig,
    #[serde(default)]
    pub space: SpaceConfig,
    pub physics: PhysicsConfig,
    #[serde(default)]
    pub bc: Vec<BcConfig>,
    pub exact: Option<ExactConfig>,
    #[serde(default)]
    pub solver: SolverFileConfig,
    #[serde(default)]
    pub assembly: AssemblyConfig,
    #[serde(default)]
    pub output: OutputConfig,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    Interval,
    Rectangle,
    Box,
}

/// Either a generator (`generator`, `n`, `lower`, `upper`, `cell`, `grading`) or a Gmsh `file`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshConfig {
    pub generator: Option<Generator>,
    /// Path to a `.msh` file, relative to the problem file.
    pub file: Option<PathBuf>,
    pub cell: Option<CellType>,
    /// Divisions per axis.
    pub n: Option<Vec<usize>>,
    pub lower: Option<Vec<f64>>,
    pub upper: Option<Vec<f64>>,
    /// Interval generator only: ratio of consecutive cell sizes (graded mesh).
    pub grading: Option<f64>,
    /// Renumber cells and vertices along a Hilbert curve for memory locality
    /// ([`crate::mesh::ordering::reorder_for_locality`]); default true. Set false to keep the
    /// file's or generator's numbering.
    pub reorder: Option<bool>,
    /// The box built on the GPU: items per chunk of its copies to the host (default 2^21; at
    /// least 1; for measuring, issue 18 e2e9). The host generator ignores it.
    pub download_chunk: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceConfig {
    #[serde(default = "one")]
    pub degree: usize,
    #[serde(default = "lagrange")]
    pub family: String,
    /// Tensor cells: equispaced (default to degree 3) or gauss-lobatto nodes (default above).
    pub nodes: Option<crate::fe::NodeFamily>,
    /// `family = "hierarchical"`: `trunk` (serendipity, default) or `full` tensor-product modes.
    pub modes: Option<crate::fe::ModeSet>,
    /// `family = "hierarchical"`: a degree per region (tag number or name); other cells take
    /// `degree`. Shared edges and faces take the lowest degree around them (minimum rule).
    pub region_degrees: Option<std::collections::BTreeMap<String, usize>>,
}

impl Default for SpaceConfig {
    fn default() -> Self {
        SpaceConfig { degree: 1, family: lagrange(), nodes: None, modes: None, region_degrees: None }
    }
}

fn one() -> usize {
    1
}
fn lagrange() -> String {
    "lagrange".into()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhysicsKind {
    /// −∇·(κ∇u) + c u = f
    Poisson,
    /// −∇·σ(u) = f, σ = λ tr(ε) I + 2μ ε (plane strain in 2D)
    Elasticity,
    /// L2 projection: ρ u = f (the mass matrix)
    Projection,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsConfig {
    pub kind: PhysicsKind,
    /// Poisson: diffusion coefficient (number, expression or per-region table).
    pub kappa: Option<toml::Value>,
    /// Poisson: reaction coefficient c (adds c u v).
    pub reaction: Option<toml::Value>,
    /// Poisson/projection: source f (scalar field); elasticity: use `body_force`.
    pub source: Option<toml::Value>,
    /// Projection: density ρ.
    pub rho: Option<toml::Value>,
    /// Elasticity: Young's modulus and Poisson's ratio…
    #[serde(rename = "E")]
    pub young: Option<f64>,
    pub nu: Option<f64>,
    /// …or Lamé parameters (numbers, expressions or per-region tables).
    pub lambda: Option<toml::Value>,
    pub mu: Option<toml::Value>,
    /// Elasticity: body force per unit volume (array of scalar fields, one per component).
    pub body_force: Option<toml::Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BcKind {
    Dirichlet,
    Neumann,
    Robin,
}

/// One boundary condition: `boundary` (a name, a tag, or a list), `type`, `value`, and for
/// Robin `alpha`; `components` restricts a Dirichlet condition to some components.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BcConfig {
    pub boundary: OneOrMany,
    #[serde(rename = "type")]
    pub kind: BcKind,
    /// Dirichlet: prescribed value; Neumann: flux κ∂u/∂n or traction σn; Robin: g in κ∂u/∂n + αu = g.
    pub value: Option<toml::Value>,
    pub alpha: Option<toml::Value>,
    pub components: Option<Vec<usize>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(Boundary),
    Many(Vec<Boundary>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<Boundary> {
        match self {
            OneOrMany::One(b) => vec![b.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// Exact solution (scalar expression, or array for vector problems) to report errors against.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactConfig {
    pub solution: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverFileConfig {
    #[serde(default = "cg")]
    pub method: SolverMethod,
    #[serde(default = "jacobi")]
    pub preconditioner: PreconditionerKind,
    #[serde(default = "rtol")]
    pub rtol: f64,
    #[serde(default)]
    pub atol: f64,
    #[serde(default = "max_iter")]
    pub max_iter: usize,
    #[serde(default = "restart")]
    pub restart: usize,
    /// What to do with a singular (pure Neumann) problem: `none` refuses it, `constant` removes
    /// the constant (projects the load onto the operator's range, returns the zero-mean solution).
    #[serde(default)]
    pub nullspace: Nullspace,
}

/// The null space a problem file accepts (see [`SolverFileConfig::nullspace`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Nullspace {
    /// A singular problem is an error naming the cause.
    #[default]
    None,
    /// Scalar problems determined up to a constant are solved for the solution of zero mean.
    Constant,
}

fn cg() -> SolverMethod {
    SolverMethod::Cg
}
fn jacobi() -> PreconditionerKind {
    PreconditionerKind::Jacobi
}
fn rtol() -> f64 {
    1e-10
}
fn max_iter() -> usize {
    10_000
}
fn restart() -> usize {
    50
}

impl Default for SolverFileConfig {
    fn default() -> Self {
        SolverFileConfig {
            method: cg(),
            preconditioner: jacobi(),
            rtol: rtol(),
            atol: 0.0,
            max_iter: max_iter(),
            restart: restart(),
            nullspace: Nullspace::None,
        }
    }
}

/// `[assembly]`: the level, the quadrature, and the GPU kernels' knobs (see [`Tuning`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssemblyConfig {
    #[serde(default)]
    pub level: AssemblyLevel,
    /// Override the volume quadrature degree.
    pub quadrature_degree: Option<usize>,
    /// Volume rule family: gauss (default) or gauss-lobatto (tensor cells).
    #[serde(default)]
    pub quadrature: crate::fe::QuadratureKind,
    /// GPU full assembly: atomic (default), colored, rows or patch.
    #[serde(default)]
    pub scatter: Scatter,
    /// GPU assembly: column nodes per thread.
    pub columns_per_thread: Option<usize>,
    /// GPU patch assembly: shared-memory doubles of a patch (256 to 6144).
    pub patch_doubles: Option<usize>,
    /// GPU patch assembly: value pairs sorted by entry count per window (1: none).
    pub patch_sort_window: Option<usize>,
    /// GPU element integration: default, thread-per-cell, thread-per-point or tiled.
    #[serde(default)]
    pub integration: crate::operator::level::Integration,
    /// CPU `partial` on hexahedra (scalar mass/diffusion): cells vectorized in batches of eight
    /// (default true) or one at a time.
    pub cpu_cell_batches: Option<bool>,
    /// Those batches summed into the result per node (true) or scattered by colors (false);
    /// unset: per node from 8 threads at degree ≥ 4 (degree 3 with Gauss points), else colors.
    pub cpu_gather: Option<bool>,
    /// The scatter's colors: the batches' own (true) or the mesh's cell blocks.
    pub cpu_batch_colors: Option<bool>,
    /// Their apply on the nodes (Kronecker products of 1D matrices; default true) or through the
    /// quadrature points (false), where D is one matrix per cell, Gauss rule, p ≤ 2.
    pub cpu_kronecker: Option<bool>,
    /// Stored element matrices as packed upper triangles (symmetric physics): scheme III's at the
    /// GPU element level by default, also its summed ones and the CPU element level's with true,
    /// none with false.
    pub packed: Option<bool>,
    /// GPU full level: the sparsity pattern built beside the host's set-up (default true) or
    /// after it (false, for measuring).
    pub overlap_pattern: Option<bool>,
}

impl AssemblyConfig {
    pub fn tuning(&self) -> Tuning {
        Tuning {
            scatter: self.scatter,
            columns_per_thread: self.columns_per_thread,
            patch_doubles: self.patch_doubles,
            patch_sort_window: self.patch_sort_window,
            integration: self.integration,
            cpu_cell_batches: self.cpu_cell_batches,
            cpu_gather: self.cpu_gather,
            cpu_batch_colors: self.cpu_batch_colors,
            cpu_kronecker: self.cpu_kronecker,
            packed: self.packed,
            overlap_pattern: self.overlap_pattern,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// File stem of the VTU output.
    #[serde(default = "solution")]
    pub name: String,
    #[serde(default = "yes")]
    pub vtu: bool,
    #[serde(default = "yes")]
    pub report: bool,
    #[serde(default = "yes")]
    pub plot: bool,
    /// Points where report.json gives the solution (interpolated in the cell that holds each).
    #[serde(default)]
    pub points: Vec<[f64; 3]>,
    /// How VTU arrays are stored: `appended` (raw binary, the default: fastest), `compressed`
    /// (zlib), `inline` (base64) or `ascii`.
    #[serde(default = "appended")]
    pub vtu_encoding: crate::io::VtuEncoding,
    /// Whether the VTU has the region tags as cell data; `false` writes point data only.
    #[serde(default = "yes")]
    pub cell_data: bool,
}

fn appended() -> crate::io::VtuEncoding {
    crate::io::VtuEncoding::Appended
}

fn solution() -> String {
    "solution".into()
}
fn yes() -> bool {
    true
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig { name: solution(), vtu: true, report: true, plot: true, points: Vec::new(), vtu_encoding: appended(), cell_data: true }
    }
}

impl ProblemFile {
    /// Parse a problem file's text. `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<ProblemFile> {
        let pf: ProblemFile = deserialize(text, source)?;
        pf.check()?;
        Ok(pf)
    }

    /// Checks serde cannot express: value ranges and combinations of keys.
    fn check(&self) -> Result<()> {
        let s = &self.solver;
        if !(s.rtol >= 0.0 && s.rtol < 1.0) {
            return Err(Error::config("solver.rtol", format!("must lie in [0, 1), got {}", s.rtol)));
        }
        if !(s.atol >= 0.0 && s.atol.is_finite()) {
            return Err(Error::config("solver.atol", format!("must be a non-negative number, got {}", s.atol)));
        }
        if s.rtol == 0.0 && s.atol == 0.0 {
            return Err(Error::config("solver.rtol", "rtol and atol cannot both be zero"));
        }
        if s.max_iter == 0 {
            return Err(Error::config("solver.max_iter", "must be at least 1"));
        }
        if self.mesh.download_chunk == Some(0) {
            return Err(Error::config("mesh.download_chunk", "must be a positive number of items, got 0"));
        }
        if s.restart == 0 {
            return Err(Error::config("solver.restart", "must be at least 1"));
        }
        let max = crate::fe::lagrange::MAX_TENSOR_DEGREE;
        if !(1..=max).contains(&self.space.degree) {
            return Err(Error::config("space.degree", format!("Lagrange degree must be 1 to 3 (simplices) or 1 to {max} (quadrilaterals, hexahedra), got {}", self.space.degree)));
        }
        match self.space.family.as_str() {
            "lagrange" => {
                if self.space.modes.is_some() {
                    return Err(Error::config("space.modes", "only for `family = \"hierarchical\"`"));
                }
                if self.space.region_degrees.is_some() {
                    return Err(Error::config("space.region_degrees", "only for `family = \"hierarchical\"`"));
                }
            }
            "hierarchical" => {
                let hmax = crate::fe::hierarchical::MAX_HIERARCHICAL_DEGREE;
                if !(1..=hmax).contains(&self.space.degree) {
                    return Err(Error::config("space.degree", format!("hierarchical degree must be 1 to {hmax}, got {}", self.space.degree)));
                }
                if self.space.nodes.is_some() {
                    return Err(Error::config("space.nodes", "hierarchical bases are modal: they have no nodes"));
                }
                for (region, &p) in self.space.region_degrees.iter().flatten() {
                    if !(1..=hmax).contains(&p) {
                        return Err(Error::config(format!("space.region_degrees.{region}"), format!("hierarchical degree must be 1 to {hmax}, got {p}")));
                    }
                }
            }
            f => return Err(Error::config("space.family", format!("unknown family `{f}` (expected lagrange or hierarchical, or bspline for an IGA problem file)"))),
        }
        check_output_name(&self.output.name)?;
        if let Some(q) = self.assembly.quadrature_degree {
            if !(1..=MAX_QUADRATURE_DEGREE).contains(&q) {
                return Err(Error::config("assembly.quadrature_degree", format!("must lie in 1..={MAX_QUADRATURE_DEGREE}, got {q}")));
            }
        }
        match (&self.mesh.generator, &self.mesh.file) {
            (Some(_), Some(_)) => return Err(Error::config("mesh", "give either `generator` or `file`, not both")),
            (None, None) => return Err(Error::config("mesh", "missing `generator` or `file`")),
            _ => {}
        }
        for (i, bc) in self.bc.iter().enumerate() {
            let key = |k: &str| format!("bc[{i}].{k}");
            if bc.boundary.to_vec().is_empty() {
                return Err(Error::config(key("boundary"), "an empty list names no boundary: give at least one name or tag"));
            }
            if bc.value.is_none() {
                return Err(Error::config(key("value"), "missing"));
            }
            if bc.kind == BcKind::Robin && bc.alpha.is_none() {
                return Err(Error::config(key("alpha"), "a Robin condition needs `alpha`"));
            }
            if bc.kind != BcKind::Robin && bc.alpha.is_some() {
                return Err(Error::config(key("alpha"), "only Robin conditions take `alpha`"));
            }
            if bc.kind != BcKind::Dirichlet && bc.components.is_some() {
                return Err(Error::config(key("components"), "only Dirichlet conditions take `components`"));
            }
        }
        Ok(())
    }
}

/// Highest `assembly.quadrature_degree` accepted: exact for polynomials far beyond what degree-3
/// elements need, and small enough that the rule's size stays trivial.
pub const MAX_QUADRATURE_DEGREE: usize = 40;

/// An output file stem: a plain, visible name that stays inside the output directory.
pub(crate) fn check_output_name(name: &str) -> Result<()> {
    let bad = if name.is_empty() {
        Some("is empty")
    } else if name.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if name.starts_with('.') {
        Some("starts with `.` (hidden names and `..` are reserved)")
    } else if name.chars().any(|c| c.is_control()) {
        Some("contains a control character")
    } else if name.len() > 200 {
        Some("is longer than 200 bytes")
    } else {
        None
    };
    match bad {
        Some(why) => Err(Error::config("output.name", format!("`{}` {why}: it must be a plain file stem", name.escape_debug()))),
        None => Ok(()),
    }
}

/// Deserialize a problem file's text into `T`; errors name the dotted key path and the line
/// (`source` names the file). Shared by every problem-file schema.
pub(crate) fn deserialize<T: serde::de::DeserializeOwned>(text: &str, source: &str) -> Result<T> {
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, source, "", &e))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        toml_error(text, source, &path, e.inner())
    })
}

/// Turn a TOML/serde error into a config error naming the key path and the line.
fn toml_error(text: &str, source: &str, path: &str, e: &toml::de::Error) -> Error {
    // Line of the span's first byte: one more than the newlines before it (counting `lines()`
    // would miss the line that starts exactly at the span).
    let line = e.span().map(|s| {
        let start = s.start.min(text.len());
        1 + text.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count()
    });
    let key = if path.is_empty() || path == "." { source.to_string() } else { path.to_string() };
    let at = line.map(|l| format!(" ({source}, line {l})")).unwrap_or_default();
    Error::config(key, format!("{}{at}", e.message().trim()))
}

/// A scalar field from a problem file before it is bound to a mesh.
#[derive(Clone, Debug)]
pub enum ScalarSpec {
    Number(f64),
    Expr(crate::expr::Expr),
    Regions(BTreeMap<i32, f64>),
}

/// Read a scalar field (`key` names it in errors); `allow_regions` for coefficients only.
pub fn scalar_spec(v: &toml::Value, key: &str, allow_regions: bool) -> Result<ScalarSpec> {
    match v {
        toml::Value::Float(f) => Ok(ScalarSpec::Number(*f)),
        toml::Value::Integer(i) => Ok(ScalarSpec::Number(*i as f64)),
        toml::Value::String(s) => crate::expr::Expr::parse(s)
            .map(ScalarSpec::Expr)
            .map_err(|e| Error::config(key, e.to_string())),
        toml::Value::Table(t) if allow_regions => {
            let regions = t.get("regions").and_then(|r| r.as_table()).ok_or_else(|| {
                Error::config(key, "a table value must be `{ regions = { <tag> = <value>, ... } }`")
            })?;
            if t.len() != 1 {
                return Err(Error::config(key, "only the key `regions` is allowed in a coefficient table"));
            }
            let mut m = BTreeMap::new();
            for (k, val) in regions {
                let tag: i32 = k.parse().map_err(|_| Error::config(format!("{key}.regions.{k}"), "region keys must be integer tags"))?;
                let x = val
                    .as_float()
                    .or_else(|| val.as_integer().map(|i| i as f64))
                    .ok_or_else(|| Error::config(format!("{key}.regions.{k}"), "must be a number"))?;
                m.insert(tag, x);
            }
            Ok(ScalarSpec::Regions(m))
        }
        other => Err(Error::config(
            key,
            format!(
                "expected a number or an expression string{}, got {}",
                if allow_regions { " or { regions = {...} }" } else { "" },
                other.type_str()
            ),
        )),
    }
}

/// Read a vector field of `n` components: an array of scalar fields (a single scalar field is
/// accepted when n = 1).
pub fn vector_spec(v: &toml::Value, key: &str, n: usize) -> Result<Vec<ScalarSpec>> {
    match v {
        toml::Value::Array(a) => {
            if a.len() != n {
                return Err(Error::config(key, format!("expected {n} components, got {}", a.len())));
            }
            a.iter().enumerate().map(|(i, x)| scalar_spec(x, &format!("{key}[{i}]"), false)).collect()
        }
        _ if n == 1 => Ok(vec![scalar_spec(v, key, false)?]),
        _ => Err(Error::config(key, format!("expected an array of {n} components"))),
    }
}
