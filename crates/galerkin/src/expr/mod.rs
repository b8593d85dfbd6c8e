//! Math expressions of `x, y, z, t` from problem files (source terms, boundary values, exact
//! solutions), parsed once and evaluated at every quadrature point.
//!
//! Built on `exmex` with its float operators (`+ - * / ^`, `sin cos tan exp ln log sqrt abs min
//! max atan2 …`) and constants `pi`/`PI`/`π`, `e`/`E`, `TAU`. Numbers may use scientific notation
//! (`1e-3`, `2.5E+4`), which exmex's own literal matcher does not accept.
mod ast;
mod compile;
mod cuda;
mod tape;
mod trig;

pub use compile::Dual3;
/// Points per pass of a compiled expression's tape ([`Expr::eval_batch`]).
pub const TAPE_BATCH: usize = tape::BATCH;
use crate::{Error, Result};
use compile::Compiled;
use exmex::prelude::*;
use exmex::{FloatOpsFactory, MakeOperators, MatchLiteral, Operator};
use std::sync::Arc;

/// Variables an expression may use, in the order [`Expr::eval`] receives them.
pub const VARIABLES: [&str; 4] = ["x", "y", "z", "t"];

/// exmex's float operators plus a lowercase `pi`, the spelling problem files use.
#[derive(Clone, Debug)]
struct Ops;

impl MakeOperators<f64> for Ops {
    fn make<'a>() -> Vec<Operator<'a, f64>> {
        let mut ops = FloatOpsFactory::<f64>::make();
        ops.push(Operator::make_constant("pi", std::f64::consts::PI));
        ops
    }
}

/// Number literals `12`, `1.5`, `.5`, `1.`, with an optional exponent `e-3`, `E+4`.
#[derive(Clone, Debug)]
struct SciNumber;

impl MatchLiteral for SciNumber {
    fn is_literal(text: &str) -> Option<&str> {
        let b = text.as_bytes();
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let int_end = digits(0);
        let mut end = int_end;
        if b.get(end) == Some(&b'.') {
            end = digits(end + 1);
        }
        if end == 0 || (end == 1 && int_end == 0) {
            return None; // no digit at all (empty, or a lone '.')
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
            let exp_end = digits(end + 1 + sign);
            if exp_end > end + 1 + sign {
                end = exp_end;
            }
        }
        Some(&text[..end])
    }
}

type Flat = FlatEx<f64, Ops, SciNumber>;

struct Inner {
    flat: Flat,
    /// `slots[k]`: index into `[x, y, z, t]` of exmex's k-th (alphabetically sorted) variable.
    slots: [usize; 4],
    nvars: usize,
    /// The same expression compiled to closures, in values and in values with gradients; `None`
    /// where the tree parser declined the text (exmex's interpreter evaluates it then).
    native: Option<(Compiled<f64>, Compiled<Dual3>)>,
    /// The same tree as a tape, for batches of points (see `tape`).
    tape: Option<tape::Tape>,
    /// The CUDA text of the same tree (see `cuda`).
    cuda: Option<String>,
}

impl Inner {
    fn new(flat: Flat, slots: [usize; 4], nvars: usize, text: Option<&str>) -> Inner {
        let tree = text.and_then(ast::parse);
        let native = tree.as_ref().map(|n| (compile::compile::<f64>(n), compile::compile::<Dual3>(n)));
        let tape = tree.as_ref().map(tape::Tape::new);
        let cuda = tree.as_ref().map(cuda::source);
        Inner { flat, slots, nvars, native, tape, cuda }
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expr").field("flat", &self.flat).field("compiled", &self.native.is_some()).finish()
    }
}

/// A parsed expression `f(x, y, z, t)`. Cheap to clone and shareable across threads.
#[derive(Clone, Debug)]
pub struct Expr {
    source: Arc<str>,
    inner: Arc<Inner>,
}

impl Expr {
    /// Parse `src`; fails with [`Error::Expression`] on a syntax error or on a variable other than
    /// `x, y, z, t` (the message names it and lists the allowed ones).
    pub fn parse(src: &str) -> Result<Expr> {
        let err = |message: String| Error::Expression {
            expr: src.to_string(),
            message,
        };
        if src.trim().is_empty() {
            return Err(err("expression is empty".into()));
        }
        let text = leading_minus_as_subtraction(src).map_err(err)?;
        let flat = Flat::parse(&text).map_err(|e| err(e.msg().to_string()))?;
        let mut slots = [0; 4];
        let names = flat.var_names();
        for (k, name) in names.iter().enumerate() {
            slots[k] = VARIABLES.iter().position(|v| v == name).ok_or_else(|| {
                err(format!(
                    "unknown variable `{name}`; allowed variables are {} (constants: pi, e)",
                    VARIABLES.join(", ")
                ))
            })?;
        }
        let nvars = names.len();
        Ok(Expr {
            source: src.into(),
            inner: Arc::new(Inner::new(flat, slots, nvars, Some(&text))),
        })
    }

    /// The expression as CUDA source of `x, y, z, t` for `kernels/expr.cuh` (values in `double`,
    /// value and gradient in `Dual3`); `None` where it is not compiled.
    pub fn cuda_source(&self) -> Option<&str> {
        self.inner.cuda.as_deref()
    }

    /// Whether evaluation runs compiled closures (else exmex's interpreter).
    pub fn is_compiled(&self) -> bool {
        self.inner.native.is_some()
    }

    /// The text this expression was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The partial derivative with respect to variable `var` (0..4 for x, y, z, t), symbolically
    /// (exmex's differentiation); zero when the expression does not use that variable.
    pub fn derivative(&self, var: usize) -> Result<Expr> {
        let name = VARIABLES.get(var).ok_or_else(|| Error::invalid(format!("no variable with index {var}")))?;
        let Inner { flat, slots, nvars, .. } = &*self.inner;
        let Some(k) = slots[..*nvars].iter().position(|&s| s == var) else {
            return Expr::parse("0");
        };
        let d = flat.clone().partial(k).map_err(|e| Error::Expression {
            expr: self.source.to_string(),
            message: format!("cannot differentiate with respect to {name}: {}", e.msg()),
        })?;
        let nvars_d = d.var_names().len();
        // The derivative keeps the variables of its antiderivative, in the same order.
        let mut slots_d = [0; 4];
        for (i, n) in d.var_names().iter().enumerate() {
            slots_d[i] = VARIABLES.iter().position(|v| v == n).unwrap_or(0);
        }
        Ok(Expr {
            source: format!("d/d{name}({})", self.source).into(),
            inner: Arc::new(Inner::new(d.clone(), slots_d, nvars_d, ast_text(&d).as_deref())),
        })
    }

    /// Whether the expression depends on `t` (lets callers skip re-evaluating static data).
    pub fn depends_on_time(&self) -> bool {
        self.inner.slots[..self.inner.nvars].contains(&3)
    }

    /// Value at point `x` and time `t`: compiled closures, or exmex's interpreter (no allocation
    /// for expressions of up to 32 operands) for texts the tree parser declined.
    pub fn eval(&self, x: [f64; 3], t: f64) -> f64 {
        let all = [x[0], x[1], x[2], t];
        match &self.inner.native {
            Some((f, _)) => f(&all),
            None => self.interpret(all),
        }
    }

    fn interpret(&self, all: [f64; 4]) -> f64 {
        let Inner { flat, slots, nvars, .. } = &*self.inner;
        let mut vars = [0.0; 4];
        for (v, &s) in vars.iter_mut().zip(&slots[..*nvars]) {
            *v = all[s];
        }
        // Cannot fail: the variable count was fixed at parse time. NaN keeps the signature simple
        // and would surface in any norm if exmex ever changed that.
        flat.eval(&vars[..*nvars]).unwrap_or(f64::NAN)
    }
}

impl Expr {
    /// Value and gradient in (x, y, z) at `x` and time `t`: exact (forward-mode differentiation of
    /// the compiled tree) when compiled, else central differences of step `h`.
    pub fn eval_grad(&self, x: [f64; 3], t: f64, h: f64) -> (f64, [f64; 3]) {
        if let Some((_, g)) = &self.inner.native {
            let v = |k: usize| Dual3 { v: x[k], d: [0, 1, 2].map(|j| f64::from(u8::from(j == k))) };
            let r = g(&[v(0), v(1), v(2), Dual3 { v: t, d: [0.0; 3] }]);
            return (r.v, r.d);
        }
        let mut d = [0.0; 3];
        for (k, dk) in d.iter_mut().enumerate() {
            let (mut p, mut m) = (x, x);
            p[k] += h;
            m[k] -= h;
            *dk = (self.eval(p, t) - self.eval(m, t)) / (2.0 * h);
        }
        (self.eval(x, t), d)
    }
}

thread_local! {
    /// Per-thread inputs (`x`, `y`, `z`, `t` one after the other) and registers of
    /// [`Expr::eval_batch`], reused across calls.
    static VALUE_SCRATCH: std::cell::RefCell<[Vec<f64>; 2]> = const { std::cell::RefCell::new([Vec::new(), Vec::new()]) };
}

impl Expr {
    /// Values at many points `xs` and time `t` into `out[j]`: one pass of the tape per 32 points
    /// when compiled (a load vector's quadrature loop pays the closures' dispatch per point
    /// otherwise), else point by point.
    pub fn eval_batch(&self, xs: &[[f64; 3]], t: f64, out: &mut [f64]) {
        let n = xs.len();
        assert!(out.len() == n, "eval_batch: {n} points, {} values", out.len());
        let Some(tape) = &self.inner.tape else {
            for (x, o) in xs.iter().zip(out.iter_mut()) {
                *o = self.eval(*x, t);
            }
            return;
        };
        VALUE_SCRATCH.with(|cell| {
            let [inputs, regs] = &mut *cell.borrow_mut();
            inputs.clear();
            for k in 0..3 {
                inputs.extend(xs.iter().map(|x| x[k]));
            }
            inputs.extend(std::iter::repeat_n(t, n));
            let (x, rest) = inputs.split_at(n);
            let (y, rest) = rest.split_at(n);
            let (z, tt) = rest.split_at(n);
            tape.eval([x, y, z, tt], out, regs);
        });
    }
}

thread_local! {
    /// Per-thread inputs and registers of [`Expr::eval_grad_batch`], reused across calls.
    static DUAL_SCRATCH: std::cell::RefCell<[Vec<Dual3>; 3]> = const { std::cell::RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

impl Expr {
    /// Values and gradients in (x, y, z) at many points `xs` and time `t` into `values[j]` and
    /// `grads[j]`: one pass of the tape per 32 points when compiled (the per-point dispatch of
    /// [`Expr::eval_grad`] is what dominates a quadrature loop), else point by point.
    pub fn eval_grad_batch(&self, xs: &[[f64; 3]], t: f64, values: &mut [f64], grads: &mut [[f64; 3]]) {
        let n = xs.len();
        assert!(values.len() == n && grads.len() == n, "eval_grad_batch: {n} points, {} values, {} gradients", values.len(), grads.len());
        let Some(tape) = &self.inner.tape else {
            for ((x, v), g) in xs.iter().zip(values.iter_mut()).zip(grads.iter_mut()) {
                (*v, *g) = self.eval_grad(*x, t, 1e-7);
            }
            return;
        };
        DUAL_SCRATCH.with(|cell| {
            let [inputs, regs, out] = &mut *cell.borrow_mut();
            inputs.clear();
            for k in 0..3 {
                inputs.extend(xs.iter().map(|x| Dual3 { v: x[k], d: [0, 1, 2].map(|j| f64::from(u8::from(j == k))) }));
            }
            inputs.extend(std::iter::repeat_n(Dual3 { v: t, d: [0.0; 3] }, n));
            let (x, rest) = inputs.split_at_mut(n);
            let (y, rest) = rest.split_at_mut(n);
            let (z, tt) = rest.split_at_mut(n);
            out.clear();
            out.resize(n, Dual3 { v: 0.0, d: [0.0; 3] });
            tape.eval([x, y, z, tt].map(|s| &*s), out, regs);
            for ((o, v), g) in out.iter().zip(values.iter_mut()).zip(grads.iter_mut()) {
                (*v, *g) = (o.v, o.d);
            }
        });
    }
}

/// exmex's text of a derivative, readable by the tree parser (its unparse is exmex syntax; a
/// derivative that unparses to what the parser declines stays interpreted).
fn ast_text(f: &Flat) -> Option<String> {
    Some(f.unparse().to_string())
}

/// exmex binds a unary minus tighter than `^`, so it reads `-x^2` as `(-x)^2`: a silent wrong
/// answer for `exp(-x^2)`. Mathematics (and Python, MATLAB, Julia) mean `-(x^2)`. A minus that
/// opens an expression (at the start, after `(` or `,`) is rewritten as `0-`, which gives the
/// binary precedence and the mathematical meaning. A minus right after another operator
/// (`2*-x^2`) has no such rewrite, so it is refused when a `^` follows its operand.
fn leading_minus_as_subtraction(src: &str) -> std::result::Result<String, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 8);
    // The last non-space character before position i, if any.
    let mut prev: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        if c == '-' {
            match prev {
                None | Some('(') | Some(',') => {
                    out.push_str("0-");
                    prev = Some(c);
                    continue;
                }
                Some('+' | '-' | '*' | '/' | '^') if operand_then_power(&chars, i + 1) => {
                    return Err(format!(
                        "`{}` after `{}` is ambiguous (is it -(a^b) or (-a)^b?): add parentheses",
                        chars[i..].iter().collect::<String>().trim(),
                        prev.unwrap_or(' ')
                    ));
                }
                _ => {}
            }
        }
        out.push(c);
        if !c.is_whitespace() {
            prev = Some(c);
        }
    }
    Ok(out)
}

/// Whether the operand starting at `i` (a name or number, an optional call's parentheses, or a
/// parenthesized group) is followed by `^`.
fn operand_then_power(chars: &[char], mut i: usize) -> bool {
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    while i < chars.len() && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '.')) {
        // An exponent's sign inside a literal (1e-3) belongs to the operand.
        if matches!(chars[i], 'e' | 'E') && i > 0 && chars[i - 1].is_ascii_digit() && matches!(chars.get(i + 1), Some('+' | '-')) {
            i += 1;
        }
        i += 1;
    }
    skip_ws(&mut i);
    if chars.get(i) == Some(&'(') {
        let mut depth = 0usize;
        while i < chars.len() {
            match chars[i] {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    skip_ws(&mut i);
    chars.get(i) == Some(&'^')
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::f64::consts::{E, PI};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-14 * (1.0 + b.abs())
    }

    #[test]
    fn values_match_closed_forms() {
        type Reference = fn([f64; 3], f64) -> f64;
        let cases: [(&str, Reference); 7] = [
            ("sin(pi*x)*y+t^2", |p, t| (PI * p[0]).sin() * p[1] + t * t),
            ("exp(-t) * cos(2*PI*y) + z", |p, t| {
                (-t).exp() * (2.0 * PI * p[1]).cos() + p[2]
            }),
            ("x^2 + y^2 + z^2", |p, _| {
                p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
            }),
            ("e^x - 1e-3*y + 2.5E+2*t", |p, t| {
                E.powf(p[0]) - 1e-3 * p[1] + 250.0 * t
            }),
            ("sqrt(abs(x - y)) / (1 + .5*t)", |p, t| {
                (p[0] - p[1]).abs().sqrt() / (1.0 + 0.5 * t)
            }),
            ("atan2(y, x)", |p, _| p[1].atan2(p[0])),
            ("3", |_, _| 3.0),
        ];
        let points = [
            ([0.3, 0.7, -1.2], 0.25),
            ([1.0, -2.0, 0.5], 2.0),
            ([-0.1, 0.0, 3.0], 0.0),
        ];
        for (src, f) in cases {
            let e = Expr::parse(src).unwrap();
            assert_eq!(e.source(), src);
            for (p, t) in points {
                assert!(
                    close(e.eval(p, t), f(p, t)),
                    "{src} at {p:?}, t={t}: {} vs {}",
                    e.eval(p, t),
                    f(p, t)
                );
            }
        }
    }

    #[test]
    fn symbolic_derivatives_match_closed_forms() {
        let u = Expr::parse("x*sin(15*x)*cos(24*x) + y^2*t").unwrap();
        let ux = u.derivative(0).unwrap();
        let uxx = ux.derivative(0).unwrap();
        for x in [0.0f64, 0.3, 0.77, 1.0] {
            let (s, c, s2, c2) = ((15.0 * x).sin(), (15.0 * x).cos(), (24.0 * x).sin(), (24.0 * x).cos());
            let d1 = s * c2 + 15.0 * x * c * c2 - 24.0 * x * s * s2;
            let d2 = 30.0 * c * c2 - 48.0 * s * s2 - x * (801.0 * s * c2 + 720.0 * c * s2);
            assert!(close(ux.eval([x, 2.0, 0.0], 3.0), d1), "{x}");
            assert!(close(uxx.eval([x, 2.0, 0.0], 3.0), d2), "{x}");
        }
        assert!(close(u.derivative(1).unwrap().eval([0.1, 2.0, 0.0], 3.0), 12.0));
        assert_eq!(u.derivative(2).unwrap().eval([1.0, 1.0, 1.0], 1.0), 0.0);
        assert!(u.derivative(7).is_err());
        let pi = Expr::parse("sin(pi*x)").unwrap().derivative(0).unwrap();
        assert!(close(pi.eval([0.0; 3], 0.0), PI));
    }

    #[test]
    fn unary_minus_binds_looser_than_power() {
        let at = |src: &str, x: f64| Expr::parse(src).unwrap().eval([x, 0.0, 0.0], 0.0);
        assert_eq!(at("-x^2", 2.0), -4.0);
        assert_eq!(at(" - x ^ 2 + 1", 2.0), -3.0);
        assert!(close(at("exp(-x^2)", 2.0), (-4.0f64).exp()));
        assert!(close(at("(1-x)*exp(-x^2)", 0.5), 0.5 * (-0.25f64).exp()));
        assert_eq!(at("max(1, -x^2)", 3.0), 1.0);
        assert_eq!(at("(-x)^2", 2.0), 4.0);
        assert_eq!(at("-(x^2)", 2.0), -4.0);
        assert_eq!(at("2^-x", 1.0), 0.5);
        assert_eq!(at("-1e-3*x", 2.0), -2e-3);
        assert_eq!(at("x - -x", 2.0), 4.0);
        assert_eq!(at("-x", 2.0), -2.0);
        for src in ["2*-x^2", "2^-x^2", "1/-sin(x)^2"] {
            let e = Expr::parse(src).unwrap_err();
            assert!(e.to_string().contains("parentheses"), "{src}: {e}");
        }
    }

    #[test]
    fn variable_mapping_is_by_name_not_position() {
        // exmex orders variables alphabetically (t < x < y < z); the mapping must undo that.
        let e = Expr::parse("1000*z + 100*y + 10*x + t").unwrap();
        assert_eq!(e.eval([1.0, 2.0, 3.0], 4.0), 3214.0);
        let e = Expr::parse("y - t").unwrap();
        assert_eq!(e.eval([9.0, 5.0, 7.0], 2.0), 3.0);
        assert!(e.depends_on_time());
        assert!(!Expr::parse("x*y").unwrap().depends_on_time());
    }

    #[test]
    fn unknown_variable_is_named_with_allowed_list() {
        let e = Expr::parse("sin(x) + alpha*w").unwrap_err();
        let Error::Expression { expr, message } = &e else {
            panic!("wrong variant: {e}")
        };
        assert_eq!(expr, "sin(x) + alpha*w");
        assert!(message.contains("`alpha`"), "{message}");
        assert!(message.contains("x, y, z, t"), "{message}");
    }

    #[test]
    fn syntax_errors_are_expression_errors() {
        for src in ["sin(x", "x +* ", "", "   ", "2x", "1e-"] {
            let e = Expr::parse(src).unwrap_err();
            assert!(
                matches!(&e, Error::Expression { expr, message } if expr == src && !message.is_empty()),
                "{src}: {e}"
            );
        }
    }

    #[test]
    fn scientific_literal_matcher() {
        for (s, m) in [
            ("1e-3*x", "1e-3"),
            ("2.5E+4", "2.5E+4"),
            (".5x", ".5"),
            ("1.e", "1."),
            ("7ex", "7"),
            ("x", ""),
        ] {
            assert_eq!(SciNumber::is_literal(s).unwrap_or(""), m, "{s}");
        }
        assert_eq!(SciNumber::is_literal("."), None);
    }

    /// The compiled closures agree with exmex's interpreter (the reference semantics) on a corpus
    /// that exercises every precedence level, associativity, unary minus, constants and function,
    /// and their gradients with exmex's symbolic derivatives.
    #[test]
    fn compiled_agrees_with_the_interpreter() {
        let corpus = [
            "sin(pi*x)*sin(pi*y)*sin(pi*z)",
            "3*pi^2*(1 + x^2)*sin(pi*x)*sin(pi*y)*sin(pi*z) - 2*x*pi*cos(pi*x)*sin(pi*y)*sin(pi*z)",
            "2^3^2 + x",
            "x/y/z + x/y*z - x*y/z",
            "x - y - z + x - t + 1",
            "x - y + z - t",
            "-x^2 + 2^-x - (-y)^2",
            "exp(-x^2 - y^2) * (1 - x) / (2 + sin(3*y))",
            "atan2(y, x) + min(x, y) * max(z, 0.5) + abs(x - y)",
            "sqrt(1 + x^2) + cbrt(y) + ln(2 + x) + log(3 + y) + log2(4 + z) + log10(5 + x)",
            "tanh(x) + sinh(y) + cosh(z) + atan(x) + asin(x/4) + acos(y/5) + tan(z/3)",
            "asinh(x) + acosh(2 + y^2) + atanh(x/3) + floor(3*x) + ceil(y) + round(z) + trunc(x) + fract(y) + signum(z)",
            "1e-3*x + 2.5E+2*y + .5*z + 1.*t + e^x + E + TAU*y + PI",
            "x^0.5 * y^1.5 / (1 + z^2)^2",
            "(x + y)^2 - (x - y)^2 - 4*x*y",
            "t*exp(-t)*x*y*(1 - x)*(1 - y)",
        ];
        let points = [[0.3, 0.7, 1.2, 0.25], [1.1, 2.0, 0.55, 2.0], [0.05, 0.45, 3.0, 0.0], [0.9, 1.3, 0.2, 1.5]];
        for src in corpus {
            let e = Expr::parse(src).unwrap();
            assert!(e.is_compiled(), "{src} was not compiled");
            for p in points {
                let (a, b) = (e.eval([p[0], p[1], p[2]], p[3]), e.interpret(p));
                assert!((a - b).abs() <= 1e-13 * (1.0 + b.abs()), "{src} at {p:?}: compiled {a} vs interpreted {b}");
                let (v, g) = e.eval_grad([p[0], p[1], p[2]], p[3], 1e-6);
                assert_eq!(v, a, "{src}");
                for (k, gk) in g.iter().enumerate() {
                    // exmex differentiates all but atan2, min and max: central differences there.
                    let (d, tol) = match e.derivative(k) {
                        Ok(d) => (d.interpret(p), 1e-9),
                        Err(_) => {
                            let (mut a, mut b) = (p, p);
                            a[k] += 1e-6;
                            b[k] -= 1e-6;
                            ((e.interpret(a) - e.interpret(b)) / 2e-6, 1e-6)
                        }
                    };
                    assert!((gk - d).abs() <= tol * (1.0 + d.abs()), "{src} d/d{}: {gk} vs {d}", VARIABLES[k]);
                }
            }
        }
        // The tape over batches (70 points: two full passes and a partial one) gives the closures'
        // values and gradients bit for bit, at every time.
        let xs: Vec<[f64; 3]> = (0..70).map(|j| { let s = j as f64 / 70.0; [0.1 + 2.0 * s, 0.4 + s * s, 0.2 + 2.5 * (1.0 - s)] }).collect();
        for src in corpus {
            let e = Expr::parse(src).unwrap();
            let (mut v, mut g) = (vec![0.0; xs.len()], vec![[0.0; 3]; xs.len()]);
            e.eval_grad_batch(&xs, 0.75, &mut v, &mut g);
            for (j, x) in xs.iter().enumerate() {
                let (vj, gj) = e.eval_grad(*x, 0.75, 1e-6);
                assert!(v[j].to_bits() == vj.to_bits() || (v[j].is_nan() && vj.is_nan()), "{src} at {x:?}: tape {} vs closures {vj}", v[j]);
                for k in 0..3 {
                    assert!(g[j][k].to_bits() == gj[k].to_bits() || (g[j][k].is_nan() && gj[k].is_nan()), "{src} d/d{}: tape {} vs {}", VARIABLES[k], g[j][k], gj[k]);
                }
            }
        }
        // A text the tree parser declines still evaluates (interpreted), with differences for gradients.
        let e = Expr::parse("sin x").unwrap();
        assert!(!e.is_compiled());
        assert!((e.eval([0.5, 0.0, 0.0], 0.0) - 0.5f64.sin()).abs() < 1e-15);
        assert!((e.eval_grad([0.5, 0.0, 0.0], 0.0, 1e-6).1[0] - 0.5f64.cos()).abs() < 1e-9);
    }

    #[test]
    fn shared_across_rayon_threads() {
        fn assert_send_sync_clone<T: Send + Sync + Clone>() {}
        assert_send_sync_clone::<Expr>();
        let e = Expr::parse("sin(pi*x)*y + t^2").unwrap();
        let n = 10_000;
        let par: f64 = (0..n)
            .into_par_iter()
            .map(|i| {
                let x = i as f64 / n as f64;
                e.clone().eval([x, 2.0, 0.0], 0.5)
            })
            .sum();
        let seq: f64 = (0..n)
            .map(|i| (PI * i as f64 / n as f64).sin() * 2.0 + 0.25)
            .sum();
        assert!((par - seq).abs() < 1e-9 * seq.abs(), "{par} vs {seq}");
    }
}
