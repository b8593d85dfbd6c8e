//! Problem files for B-spline spaces (`[space] family = "bspline"`): their own schema, checked
//! key by key before any work — unknown keys, wrong types, bad knot vectors, degrees out of range
//! and impossible combinations are errors that name the dotted key and the line.
//!
//! ```toml
//! [space]
//! family = "bspline"
//! degree = 3            # 1…8; [px, py] in 2D
//! continuity = 2        # C^k at interior breakpoints, 0…p−1 (default p − 1); [kx, ky] in 2D
//! elements = 64         # uniform elements on [lower, upper]; [nx, ny] in 2D
//! # breakpoints = [0, 0.2, 1]            # non-uniform elements instead (one list per direction in 2D)
//! # knots = [0, 0, 0, 0.5, 0.5, 1, 1, 1] # or a full open knot vector (repeats lower the continuity)
//! ```
use super::adr1d::{Adr1d, EndCondition};
use super::field::Field;
use super::knots::KnotVector;
use super::poisson2d::{Physics2d, Problem2d};
use super::space::{Space1d, Space2d};
use crate::expr::Expr;
use crate::problem::config::{check_output_name, deserialize, BackendKind};
use crate::{Error, Result};
use serde::Deserialize;
use toml::{Spanned, Value};

type Sv = Spanned<Value>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSchema {
    #[serde(default)]
    title: String,
    #[serde(default)]
    backend: BackendKind,
    space: SpaceSchema,
    physics: PhysicsSchema,
    #[serde(default)]
    bc: BcSchema,
    exact: Option<ExactSchema>,
    #[serde(default)]
    solver: SolverSchema,
    #[serde(default)]
    output: OutputSchema,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpaceSchema {
    family: String,
    degree: Sv,
    continuity: Option<Sv>,
    elements: Option<Sv>,
    breakpoints: Option<Sv>,
    knots: Option<Sv>,
    lower: Option<Sv>,
    upper: Option<Sv>,
}

/// What is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// 1D: `−(a u′)′ + b u′ + c u = f`.
    AdvectionDiffusionReaction,
    /// 2D: `−∇·(κ∇u) = f`, Dirichlet boundary.
    Poisson,
    /// 2D: the L2 projection of `f`.
    Projection,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhysicsSchema {
    kind: Kind,
    a: Option<Sv>,
    b: Option<Sv>,
    c: Option<Sv>,
    f: Option<Sv>,
    kappa: Option<Sv>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BcSchema {
    left: Option<EndSchema>,
    right: Option<EndSchema>,
    value: Option<Sv>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum EndKind {
    Dirichlet,
    Neumann,
    Robin,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EndSchema {
    #[serde(rename = "type")]
    kind: EndKind,
    value: Option<Sv>,
    beta: Option<Sv>,
    gamma: Option<Sv>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactSchema {
    solution: Spanned<String>,
    #[serde(default)]
    derive: bool,
}

/// The direct solver of an IGA problem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The multifrontal solver over the elimination tree (CPU or GPU).
    #[default]
    Multifrontal,
    /// faer's general sparse LU of the assembled matrix (CPU), for comparison.
    Lu,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SolverSchema {
    #[serde(default)]
    method: Method,
    quadrature: Option<Spanned<i64>>,
    error_quadrature: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputSchema {
    #[serde(default = "solution")]
    name: String,
    #[serde(default = "yes")]
    csv: bool,
    #[serde(default = "yes")]
    plot: bool,
    #[serde(default = "yes")]
    vtu: bool,
    #[serde(default = "yes")]
    report: bool,
    samples: Option<Sv>,
}

fn solution() -> String {
    "solution".into()
}
fn yes() -> bool {
    true
}

impl Default for OutputSchema {
    fn default() -> Self {
        OutputSchema { name: solution(), csv: true, plot: true, vtu: true, report: true, samples: None }
    }
}

/// The discrete space of a problem file.
#[derive(Clone, Debug)]
pub enum IgaSpace {
    D1(Space1d),
    D2(Space2d),
}

/// The continuous problem.
#[derive(Clone, Debug)]
pub enum IgaProblem {
    D1(Adr1d),
    D2(Problem2d),
}

/// An exact solution and its first derivatives (x, then y in 2D).
#[derive(Clone, Debug)]
pub struct Exact {
    pub u: Expr,
    pub grad: Vec<Expr>,
}

/// Output choices.
#[derive(Clone, Debug)]
pub struct Output {
    pub name: String,
    pub csv: bool,
    pub plot: bool,
    pub vtu: bool,
    pub report: bool,
    /// Sampling points (1D) or sampling cells per direction (2D).
    pub samples: Vec<usize>,
}

/// A validated IGA problem file.
#[derive(Clone, Debug)]
pub struct IgaSetup {
    pub title: String,
    pub backend: BackendKind,
    pub kind: Kind,
    pub space: IgaSpace,
    pub problem: IgaProblem,
    pub exact: Option<Exact>,
    pub method: Method,
    /// Gauss points per element and direction for the solver and for the error norms.
    pub quadrature: usize,
    pub error_quadrature: usize,
    pub output: Output,
}

/// Whether a problem file asks for a B-spline space (`[space] family = "bspline"`); files that
/// do not parse are left to the general reader, which reports their errors.
pub fn is_bspline(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("space")?.get("family")?.as_str().map(|f| f == "bspline"))
        .unwrap_or(false)
}

/// Reads the file context for error messages: which line a span starts on.
struct Ctx<'a> {
    text: &'a str,
    source: &'a str,
}

impl Ctx<'_> {
    fn err<T>(&self, key: &str, span: std::ops::Range<usize>, message: impl std::fmt::Display) -> Result<T> {
        let line = self.text[..span.start.min(self.text.len())].lines().count().max(1);
        Err(Error::config(key, format!("{message} ({}, line {line})", self.source)))
    }

    fn number(&self, key: &str, v: &Sv) -> Result<f64> {
        match v.get_ref() {
            Value::Float(f) if f.is_finite() => Ok(*f),
            Value::Integer(i) => Ok(*i as f64),
            other => self.err(key, v.span(), format!("expected a finite number, got {}", describe(other))),
        }
    }

    fn count(&self, key: &str, v: &Value, span: std::ops::Range<usize>, lo: i64, hi: i64) -> Result<usize> {
        match v {
            Value::Integer(i) if (lo..=hi).contains(i) => Ok(*i as usize),
            Value::Integer(i) => self.err(key, span, format!("must be {lo} to {hi}, got {i}")),
            other => self.err(key, span, format!("expected an integer, got {}", describe(other))),
        }
    }

    /// One integer (all directions) or one per direction.
    fn counts(&self, key: &str, v: &Sv, dim: usize, lo: i64, hi: i64) -> Result<Vec<usize>> {
        match v.get_ref() {
            Value::Array(a) if a.len() == dim => a.iter().map(|x| self.count(key, x, v.span(), lo, hi)).collect(),
            Value::Array(a) => self.err(key, v.span(), format!("expected {dim} integers (one per direction), got {}", a.len())),
            other => Ok(vec![self.count(key, other, v.span(), lo, hi)?; dim]),
        }
    }

    fn floats(&self, key: &str, v: &Value, span: std::ops::Range<usize>) -> Result<Vec<f64>> {
        let Value::Array(a) = v else { return self.err(key, span, format!("expected a list of numbers, got {}", describe(v))) };
        a.iter()
            .enumerate()
            .map(|(i, x)| match x {
                Value::Float(f) => Ok(*f),
                Value::Integer(n) => Ok(*n as f64),
                other => self.err(&format!("{key}[{i}]"), span.clone(), format!("expected a number, got {}", describe(other))),
            })
            .collect()
    }

    /// A list of numbers per direction: flat in 1D, a list of `dim` lists in 2D.
    fn float_lists(&self, key: &str, v: &Sv, dim: usize) -> Result<Vec<Vec<f64>>> {
        if dim == 1 {
            return Ok(vec![self.floats(key, v.get_ref(), v.span())?]);
        }
        match v.get_ref() {
            Value::Array(a) if a.len() == dim && a.iter().all(|x| x.is_array()) => {
                a.iter().enumerate().map(|(d, x)| self.floats(&format!("{key}[{d}]"), x, v.span())).collect()
            }
            _ => self.err(key, v.span(), format!("expected {dim} lists of numbers (one per direction)")),
        }
    }

    /// A domain corner: a number (1D, or every direction) or one per direction.
    fn corner(&self, key: &str, v: Option<&Sv>, dim: usize, default: f64) -> Result<Vec<f64>> {
        let Some(v) = v else { return Ok(vec![default; dim]) };
        match v.get_ref() {
            Value::Array(_) => {
                let c = self.floats(key, v.get_ref(), v.span())?;
                if c.len() != dim {
                    return self.err(key, v.span(), format!("expected {dim} coordinates, got {}", c.len()));
                }
                Ok(c)
            }
            _ => Ok(vec![self.number(key, v)?; dim]),
        }
    }

    /// A scalar field: a number or an expression of x (and y in 2D).
    fn expr(&self, key: &str, v: &Sv) -> Result<Expr> {
        match v.get_ref() {
            Value::Float(_) | Value::Integer(_) => Expr::parse(&format!("{}", self.number(key, v)?)),
            Value::String(s) => match Expr::parse(s) {
                Ok(e) => Ok(e),
                Err(e) => self.err(key, v.span(), e),
            },
            other => self.err(key, v.span(), format!("expected a number or an expression string, got {}", describe(other))),
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the string {s:?}"),
        other => format!("{} `{other}`", other.type_str()),
    }
}

/// `a′` for a coefficient given as an expression (numbers differentiate to zero).
fn d(e: &Expr, var: usize, key: &str) -> Result<Expr> {
    e.derivative(var).map_err(|err| Error::config(key, err.to_string()))
}

fn field(key: &str, e: Expr) -> Field {
    Field::expr(key, e)
}

impl IgaSetup {
    /// Parses and validates a B-spline problem file (`source` names it in errors).
    pub fn parse(text: &str, source: &str) -> Result<IgaSetup> {
        let f: FileSchema = deserialize(text, source)?;
        let cx = Ctx { text, source };
        if f.space.family != "bspline" {
            return Err(Error::config("space.family", format!("expected \"bspline\" in a B-spline problem file, got {:?}", f.space.family)));
        }
        let dim = if f.physics.kind == Kind::AdvectionDiffusionReaction { 1 } else { 2 };
        let space = build_space(&cx, &f.space, dim)?;
        let degree = match &space {
            IgaSpace::D1(s) => s.degree(),
            IgaSpace::D2(s) => s.x.degree().max(s.y.degree()),
        };

        let exact = match &f.exact {
            Some(ex) => {
                let u = match Expr::parse(ex.solution.get_ref()) {
                    Ok(u) => u,
                    Err(e) => return cx.err("exact.solution", ex.solution.span(), e),
                };
                let grad = (0..dim).map(|v| d(&u, v, "exact.solution")).collect::<Result<Vec<_>>>()?;
                Some((Exact { u, grad }, ex.derive))
            }
            None => None,
        };
        let derive = exact.as_ref().filter(|(_, derive)| *derive).map(|(e, _)| e);
        let domain = match &space {
            IgaSpace::D1(s) => s.knots().domain(),
            IgaSpace::D2(s) => s.x.knots().domain(),
        };
        let problem = build_problem(&cx, &f, domain, derive)?;

        let q = |key: &str, v: &Option<Spanned<i64>>, default: usize| -> Result<usize> {
            match v {
                None => Ok(default),
                Some(s) => cx.count(key, &Value::Integer(*s.get_ref()), s.span(), 1, 64),
            }
        };
        let quadrature = q("solver.quadrature", &f.solver.quadrature, degree + 1)?;
        let error_quadrature = q("solver.error_quadrature", &f.solver.error_quadrature, quadrature + 1)?;
        let o = &f.output;
        check_output_name(&o.name)?;
        if o.name == "report" {
            return Err(Error::config("output.name", "`report` is taken by report.json"));
        }
        let samples = match &o.samples {
            Some(v) => cx.counts("output.samples", v, dim, 1, 1 << 24)?,
            None => match &space {
                IgaSpace::D1(s) => vec![(20 * s.num_elements()).clamp(200, 20_000)],
                IgaSpace::D2(s) => vec![(4 * s.x.num_elements()).clamp(16, 512), (4 * s.y.num_elements()).clamp(16, 512)],
            },
        };
        if dim == 2 && samples.iter().product::<usize>() > 1 << 24 {
            return Err(Error::config("output.samples", "at most 2^24 sampling cells"));
        }
        Ok(IgaSetup {
            title: f.title.clone(),
            backend: f.backend,
            kind: f.physics.kind,
            space,
            problem,
            exact: exact.map(|(e, _)| e),
            method: f.solver.method,
            quadrature,
            error_quadrature,
            output: Output { name: o.name.clone(), csv: o.csv, plot: o.plot, vtu: o.vtu, report: o.report, samples },
        })
    }
}

fn build_space(cx: &Ctx, s: &SpaceSchema, dim: usize) -> Result<IgaSpace> {
    let degree = cx.counts("space.degree", &s.degree, dim, 1, super::knots::MAX_DEGREE as i64)?;
    let given: Vec<&str> = [("elements", s.elements.is_some()), ("breakpoints", s.breakpoints.is_some()), ("knots", s.knots.is_some())]
        .iter()
        .filter(|(_, g)| *g)
        .map(|(k, _)| *k)
        .collect();
    if given.len() != 1 {
        let span = s.degree.span();
        let what = if given.is_empty() { "missing".to_string() } else { format!("{} given together", given.join(" and ")) };
        return cx.err("space", span, format!("give exactly one of `elements`, `breakpoints` or `knots` ({what})"));
    }
    let kind = given[0];
    for (key, v) in [("lower", &s.lower), ("upper", &s.upper)] {
        if let (Some(v), false) = (v, kind == "elements") {
            return cx.err(&format!("space.{key}"), v.span(), format!("only used with `elements` (the {kind} give the domain)"));
        }
    }
    if let (Some(v), "knots") = (&s.continuity, kind) {
        return cx.err("space.continuity", v.span(), "not used with `knots` (repeated knots set the continuity)");
    }
    let continuity = match &s.continuity {
        Some(v) => cx.counts("space.continuity", v, dim, 0, super::knots::MAX_DEGREE as i64 - 1)?,
        None => degree.iter().map(|p| p - 1).collect(),
    };
    let knot_vectors: Vec<KnotVector> = match kind {
        "elements" => {
            let v = s.elements.as_ref().ok_or_else(|| Error::invalid("internal: elements"))?;
            let n = cx.counts("space.elements", v, dim, 1, 1 << 30)?;
            let lo = cx.corner("space.lower", s.lower.as_ref(), dim, 0.0)?;
            let hi = cx.corner("space.upper", s.upper.as_ref(), dim, 1.0)?;
            (0..dim)
                .map(|d| {
                    KnotVector::uniform(degree[d], n[d], continuity[d], lo[d], hi[d])
                        .or_else(|e| cx.err(if continuity[d] >= degree[d] { "space.continuity" } else { "space.upper" }, v.span(), strip(&e)))
                })
                .collect::<Result<_>>()?
        }
        "breakpoints" => {
            let v = s.breakpoints.as_ref().ok_or_else(|| Error::invalid("internal: breakpoints"))?;
            let lists = cx.float_lists("space.breakpoints", v, dim)?;
            (0..dim)
                .map(|d| {
                    KnotVector::from_breakpoints(degree[d], &lists[d], continuity[d]).or_else(|e| {
                        let key = if continuity[d] >= degree[d] { "space.continuity".to_string() } else { axis_key("space.breakpoints", d, dim) };
                        cx.err(&key, v.span(), strip(&e))
                    })
                })
                .collect::<Result<_>>()?
        }
        _ => {
            let v = s.knots.as_ref().ok_or_else(|| Error::invalid("internal: knots"))?;
            let lists = cx.float_lists("space.knots", v, dim)?;
            (0..dim)
                .map(|d| KnotVector::new(degree[d], lists[d].clone()).or_else(|e| cx.err(&axis_key("space.knots", d, dim), v.span(), strip(&e))))
                .collect::<Result<_>>()?
        }
    };
    let mut spaces = knot_vectors.into_iter().map(Space1d::new);
    let first = spaces.next().ok_or_else(|| Error::invalid("internal: no direction"))?;
    Ok(match spaces.next() {
        None => IgaSpace::D1(first),
        Some(second) => IgaSpace::D2(Space2d::new(first, second)),
    })
}

fn axis_key(key: &str, d: usize, dim: usize) -> String {
    if dim == 1 { key.to_string() } else { format!("{key}[{d}]") }
}

/// The message of an [`Error::Invalid`] without its prefix.
fn strip(e: &Error) -> String {
    match e {
        Error::Invalid(m) => m.clone(),
        other => other.to_string(),
    }
}

fn build_problem(cx: &Ctx, f: &FileSchema, domain: (f64, f64), derive: Option<&Exact>) -> Result<IgaProblem> {
    let p = &f.physics;
    let allowed: &[&str] = match p.kind {
        Kind::AdvectionDiffusionReaction => &["a", "b", "c", "f"],
        Kind::Poisson => &["kappa", "f"],
        Kind::Projection => &["f"],
    };
    for (key, v) in [("a", &p.a), ("b", &p.b), ("c", &p.c), ("kappa", &p.kappa), ("f", &p.f)] {
        if let (Some(v), false) = (v, allowed.contains(&key)) {
            return cx.err(&format!("physics.{key}"), v.span(), format!("not a coefficient of kind {:?} (it takes {})", p.kind, allowed.join(", ")));
        }
    }
    let coef = |key: &str, v: &Option<Sv>, default: Option<f64>| -> Result<Expr> {
        match (v, default) {
            (Some(v), _) => cx.expr(&format!("physics.{key}"), v),
            (None, Some(d)) => Expr::parse(&format!("{d}")),
            (None, None) => Err(Error::config(format!("physics.{key}"), "missing")),
        }
    };
    let source = |formula: &dyn Fn(&Exact) -> Result<Field>| -> Result<Field> {
        match (&p.f, derive) {
            (Some(v), None) => Ok(field("physics.f", cx.expr("physics.f", v)?)),
            (Some(v), Some(_)) => cx.err("physics.f", v.span(), "given together with [exact] derive = true (which derives it)"),
            (None, Some(ex)) => formula(ex),
            (None, None) => Err(Error::config("physics.f", "missing (give the source, or an [exact] solution with derive = true)")),
        }
    };
    match p.kind {
        Kind::AdvectionDiffusionReaction => {
            if let Some(v) = &f.bc.value {
                return cx.err("bc.value", v.span(), "1D problems take `bc.left` and `bc.right`");
            }
            let (a, b, c) = (coef("a", &p.a, Some(1.0))?, coef("b", &p.b, Some(0.0))?, coef("c", &p.c, Some(0.0))?);
            let da = d(&a, 0, "physics.a")?;
            let (ac, bc, cc) = (a.clone(), b.clone(), c.clone());
            let f_field = source(&|ex: &Exact| {
                let (u, du) = (ex.u.clone(), ex.grad[0].clone());
                let d2u = d(&du, 0, "exact.solution")?;
                let (a, da, b, c) = (ac.clone(), da.clone(), bc.clone(), cc.clone());
                Ok(Field::new("physics.f (derived from exact.solution)", move |p| {
                    let x = [p[0], 0.0, 0.0];
                    let (ux, uxx) = (du.eval(x, 0.0), d2u.eval(x, 0.0));
                    -(da.eval(x, 0.0) * ux + a.eval(x, 0.0) * uxx) + b.eval(x, 0.0) * ux + c.eval(x, 0.0) * u.eval(x, 0.0)
                }))
            })?;
            let cond = |name: &str, end: &Option<EndSchema>, x: f64, normal: f64| -> Result<EndCondition> {
                let end = end.as_ref().ok_or_else(|| Error::config(format!("bc.{name}"), "missing: give `type = \"dirichlet\"`, `\"neumann\"` or `\"robin\"`"))?;
                end_condition(cx, name, end, x, normal, &a, derive)
            };
            let (left, right) = (cond("left", &f.bc.left, domain.0, -1.0)?, cond("right", &f.bc.right, domain.1, 1.0)?);
            Ok(IgaProblem::D1(Adr1d { a: field("physics.a", a.clone()), b: field("physics.b", b), c: field("physics.c", c), f: f_field, left, right }))
        }
        Kind::Poisson => {
            for (k, e) in [("left", &f.bc.left), ("right", &f.bc.right)] {
                if e.is_some() {
                    return Err(Error::config(format!("bc.{k}"), "2D problems take `bc.value` (Dirichlet data on the whole boundary)"));
                }
            }
            let kappa = coef("kappa", &p.kappa, Some(1.0))?;
            let (kx, ky) = (d(&kappa, 0, "physics.kappa")?, d(&kappa, 1, "physics.kappa")?);
            let kc = kappa.clone();
            let f_field = source(&|ex: &Exact| {
                let (ux, uy) = (ex.grad[0].clone(), ex.grad[1].clone());
                let (uxx, uyy) = (d(&ux, 0, "exact.solution")?, d(&uy, 1, "exact.solution")?);
                let (k, kx, ky) = (kc.clone(), kx.clone(), ky.clone());
                Ok(Field::new("physics.f (derived from exact.solution)", move |p| {
                    let x = [p[0], p[1], 0.0];
                    -(kx.eval(x, 0.0) * ux.eval(x, 0.0) + ky.eval(x, 0.0) * uy.eval(x, 0.0) + k.eval(x, 0.0) * (uxx.eval(x, 0.0) + uyy.eval(x, 0.0)))
                }))
            })?;
            let dirichlet = match (&f.bc.value, derive) {
                (Some(v), None) => field("bc.value", cx.expr("bc.value", v)?),
                (Some(v), Some(_)) => return cx.err("bc.value", v.span(), "given together with [exact] derive = true (which derives it)"),
                (None, Some(ex)) => field("bc.value (derived from exact.solution)", ex.u.clone()),
                (None, None) => return Err(Error::config("bc.value", "missing: Poisson needs Dirichlet data on the boundary (or [exact] derive = true)")),
            };
            Ok(IgaProblem::D2(Problem2d { physics: Physics2d::Poisson { kappa: field("physics.kappa", kappa), dirichlet }, f: f_field }))
        }
        Kind::Projection => {
            if let Some(v) = &f.bc.value {
                return cx.err("bc.value", v.span(), "the L2 projection takes no boundary condition");
            }
            if f.bc.left.is_some() || f.bc.right.is_some() {
                return Err(Error::config("bc", "the L2 projection takes no boundary condition"));
            }
            let f_field = source(&|ex: &Exact| Ok(field("physics.f (derived from exact.solution)", ex.u.clone())))?;
            Ok(IgaProblem::D2(Problem2d { physics: Physics2d::Projection, f: f_field }))
        }
    }
}

/// A 1D end condition at `x` with outward normal `normal` (−1 left, +1 right); data not given
/// are derived from the exact solution when asked: `u(x)`, or `γ = a ∂u/∂n + β u`.
fn end_condition(cx: &Ctx, name: &str, e: &EndSchema, x: f64, normal: f64, a: &Expr, derive: Option<&Exact>) -> Result<EndCondition> {
    let key = |k: &str| format!("bc.{name}.{k}");
    let refuse = |k: &str, v: &Option<Sv>, why: &str| -> Result<()> {
        match v {
            Some(v) => cx.err(&key(k), v.span(), why),
            None => Ok(()),
        }
    };
    let derived = |what: &str, v: &Option<Sv>, value: &dyn Fn(&Exact) -> f64| -> Result<f64> {
        let g = match (v, derive) {
            (Some(v), None) => cx.number(&key(what), v)?,
            (Some(v), Some(_)) => return cx.err(&key(what), v.span(), "given together with [exact] derive = true (which derives it)"),
            (None, Some(ex)) => value(ex),
            (None, None) => return Err(Error::config(key(what), "missing")),
        };
        if g.is_finite() { Ok(g) } else { Err(Error::config(key(what), format!("derived value {g} at x = {x} is not finite"))) }
    };
    let p = [x, 0.0, 0.0];
    match e.kind {
        EndKind::Dirichlet => {
            refuse("beta", &e.beta, "only Robin conditions take `beta`")?;
            refuse("gamma", &e.gamma, "Dirichlet conditions take `value`")?;
            Ok(EndCondition::Dirichlet(derived("value", &e.value, &|ex| ex.u.eval(p, 0.0))?))
        }
        EndKind::Neumann | EndKind::Robin => {
            refuse("value", &e.value, "Neumann and Robin conditions take `gamma` (and Robin `beta`)")?;
            let beta = match (&e.beta, e.kind) {
                (Some(v), EndKind::Robin) => cx.number(&key("beta"), v)?,
                (None, EndKind::Robin) => return Err(Error::config(key("beta"), "missing (a Neumann condition is type = \"neumann\")")),
                (Some(v), _) => return cx.err(&key("beta"), v.span(), "a Neumann condition takes no `beta` (use type = \"robin\")"),
                (None, _) => 0.0,
            };
            let gamma = derived("gamma", &e.gamma, &|ex| a.eval(p, 0.0) * normal * ex.grad[0].eval(p, 0.0) + beta * ex.u.eval(p, 0.0))?;
            Ok(EndCondition::Robin { beta, gamma })
        }
    }
}
