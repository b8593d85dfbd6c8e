//! Problem-file expressions as a small tree that the CPU evaluates, differentiates and the GPU
//! compiles: the velocity, reaction, source and inflow data are emitted as CUDA C functions (NVRTC
//! defines), so the GPU assembly evaluates them at its own quadrature points and nothing is sampled
//! on the host. The CPU evaluates the same tree, so both backends integrate the same functions.
//!
//! Every source is first checked by [`crate::expr::Expr::parse`] (so errors read as everywhere
//! else); the tree is then read with the usual precedence (`^` above unary minus, `-x^2 = -(x^2)`).
//! A chain `a^b^c` is refused (its grouping differs between conventions); `tests` check the tree
//! against `Expr::eval` point by point.
use crate::{Error, Result};

/// Functions of one argument the tree knows (exmex names).
const UNARY: [&str; 13] = ["sin", "cos", "tan", "exp", "ln", "log", "sqrt", "abs", "asin", "acos", "atan", "sinh", "cosh"];
/// Functions of two arguments.
const BINARY: [&str; 3] = ["atan2", "min", "max"];

#[derive(Clone, Debug, PartialEq)]
pub enum Formula {
    Num(f64),
    /// 0, 1, 2 for x, y, z (t is refused: the problem is steady).
    Var(usize),
    Neg(Box<Formula>),
    Add(Box<Formula>, Box<Formula>),
    Sub(Box<Formula>, Box<Formula>),
    Mul(Box<Formula>, Box<Formula>),
    Div(Box<Formula>, Box<Formula>),
    Pow(Box<Formula>, Box<Formula>),
    Call(&'static str, Vec<Formula>),
}

use Formula::*;

fn b(f: Formula) -> Box<Formula> {
    Box::new(f)
}

impl Formula {
    /// Parses `src` (`key` names it in errors).
    pub fn parse(src: &str, key: &str) -> Result<Formula> {
        crate::expr::Expr::parse(src).map_err(|e| Error::config(key, e.to_string()))?;
        let mut p = Parser { s: src.as_bytes(), i: 0, key, src };
        let f = p.sum()?;
        p.ws();
        if p.i < p.s.len() {
            return Err(p.err("unexpected text"));
        }
        Ok(f)
    }

    /// A number or an expression string from TOML.
    pub fn from_toml(v: &toml::Value, key: &str) -> Result<Formula> {
        match v {
            toml::Value::Float(f) if f.is_finite() => Ok(Num(*f)),
            toml::Value::Float(f) => Err(Error::config(key, format!("must be finite, got {f}"))),
            toml::Value::Integer(i) => Ok(Num(*i as f64)),
            toml::Value::String(s) => Formula::parse(s, key),
            other => Err(Error::config(key, format!("expected a number or an expression string, found {}", other.type_str()))),
        }
    }

    pub fn eval(&self, x: [f64; 2]) -> f64 {
        match self {
            Num(v) => *v,
            Var(k) => x.get(*k).copied().unwrap_or(0.0),
            Neg(a) => -a.eval(x),
            Add(a, c) => a.eval(x) + c.eval(x),
            Sub(a, c) => a.eval(x) - c.eval(x),
            Mul(a, c) => a.eval(x) * c.eval(x),
            Div(a, c) => a.eval(x) / c.eval(x),
            Pow(a, c) => a.eval(x).powf(c.eval(x)),
            Call(name, args) => {
                let a = args[0].eval(x);
                match *name {
                    "sin" => a.sin(),
                    "cos" => a.cos(),
                    "tan" => a.tan(),
                    "exp" => a.exp(),
                    "ln" => a.ln(),
                    "log" => a.log10(),
                    "sqrt" => a.sqrt(),
                    "abs" => a.abs(),
                    "asin" => a.asin(),
                    "acos" => a.acos(),
                    "atan" => a.atan(),
                    "sinh" => a.sinh(),
                    "cosh" => a.cosh(),
                    "atan2" => a.atan2(args[1].eval(x)),
                    "min" => a.min(args[1].eval(x)),
                    "max" => a.max(args[1].eval(x)),
                    _ => f64::NAN,
                }
            }
        }
    }

    /// ∂/∂x_var, symbolically; an error for functions without a derivative here (abs, min, max).
    pub fn derivative(&self, var: usize) -> Result<Formula> {
        let d = |f: &Formula| f.derivative(var);
        Ok(match self {
            Num(_) => Num(0.0),
            Var(k) => Num(if *k == var { 1.0 } else { 0.0 }),
            Neg(a) => Neg(b(d(a)?)),
            Add(a, c) => Add(b(d(a)?), b(d(c)?)),
            Sub(a, c) => Sub(b(d(a)?), b(d(c)?)),
            Mul(a, c) => Add(b(Mul(b(d(a)?), c.clone())), b(Mul(a.clone(), b(d(c)?)))),
            Div(a, c) => Div(b(Sub(b(Mul(b(d(a)?), c.clone())), b(Mul(a.clone(), b(d(c)?))))), b(Mul(c.clone(), c.clone()))),
            Pow(a, c) => match **c {
                // u^n: n u^(n−1) u'
                Num(n) => Mul(b(Mul(b(Num(n)), b(Pow(a.clone(), b(Num(n - 1.0)))))), b(d(a)?)),
                // u^v = exp(v ln u): u^v (v' ln u + v u'/u)
                _ => Mul(
                    b(self.clone()),
                    b(Add(b(Mul(b(d(c)?), b(Call("ln", vec![(**a).clone()])))), b(Div(b(Mul(c.clone(), b(d(a)?))), a.clone())))),
                ),
            },
            Call(name, args) => {
                let a = &args[0];
                let da = d(a)?;
                let outer = match *name {
                    "sin" => Call("cos", vec![a.clone()]),
                    "cos" => Neg(b(Call("sin", vec![a.clone()]))),
                    "tan" => Div(b(Num(1.0)), b(Pow(b(Call("cos", vec![a.clone()])), b(Num(2.0))))),
                    "exp" => self.clone(),
                    "ln" => Div(b(Num(1.0)), b(a.clone())),
                    "log" => Div(b(Num(1.0 / std::f64::consts::LN_10)), b(a.clone())),
                    "sqrt" => Div(b(Num(0.5)), b(self.clone())),
                    "asin" => Div(b(Num(1.0)), b(Call("sqrt", vec![Sub(b(Num(1.0)), b(Pow(b(a.clone()), b(Num(2.0)))))]))),
                    "acos" => Neg(b(Div(b(Num(1.0)), b(Call("sqrt", vec![Sub(b(Num(1.0)), b(Pow(b(a.clone()), b(Num(2.0)))))]))))),
                    "atan" => Div(b(Num(1.0)), b(Add(b(Num(1.0)), b(Pow(b(a.clone()), b(Num(2.0))))))),
                    "sinh" => Call("cosh", vec![a.clone()]),
                    "cosh" => Call("sinh", vec![a.clone()]),
                    "atan2" => {
                        // atan2(y, x)' = (x y' − y x') / (x² + y²)
                        let (y, x) = (a, &args[1]);
                        let dx = d(x)?;
                        return Ok(Div(
                            b(Sub(b(Mul(b(x.clone()), b(da))), b(Mul(b(y.clone()), b(dx))))),
                            b(Add(b(Mul(b(x.clone()), b(x.clone()))), b(Mul(b(y.clone()), b(y.clone()))))),
                        ));
                    }
                    other => return Err(Error::Unsupported(format!("the derivative of `{other}` (the velocity's divergence needs one): write the velocity without abs, min or max"))),
                };
                Mul(b(outer), b(da))
            }
        })
    }

    /// A CUDA C expression of `x`, `y` (doubles in scope), without whitespace (NVRTC defines).
    pub fn to_c(&self) -> String {
        match self {
            Num(v) => format!("({v:e})"),
            Var(k) => ["x", "y", "z"][*k].to_string(),
            Neg(a) => format!("(-{})", a.to_c()),
            Add(a, c) => format!("({}+{})", a.to_c(), c.to_c()),
            Sub(a, c) => format!("({}-{})", a.to_c(), c.to_c()),
            Mul(a, c) => format!("({}*{})", a.to_c(), c.to_c()),
            Div(a, c) => format!("({}/{})", a.to_c(), c.to_c()),
            Pow(a, c) => format!("pow({},{})", a.to_c(), c.to_c()),
            Call(name, args) => {
                let c_name = match *name {
                    "ln" => "log",
                    "log" => "log10",
                    "abs" => "fabs",
                    "min" => "fmin",
                    "max" => "fmax",
                    n => n,
                };
                format!("{c_name}({})", args.iter().map(Formula::to_c).collect::<Vec<_>>().join(","))
            }
        }
    }

    /// `a + c` with constants folded (keeps generated code short).
    pub fn plus(a: Formula, c: Formula) -> Formula {
        match (&a, &c) {
            (Num(p), Num(q)) => Num(p + q),
            (Num(z), _) if *z == 0.0 => c,
            (_, Num(z)) if *z == 0.0 => a,
            _ => Add(b(a), b(c)),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    key: &'a str,
    src: &'a str,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> Error {
        Error::config(self.key, format!("`{}`: {what} at character {}", self.src, self.i + 1))
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }
    fn sum(&mut self) -> Result<Formula> {
        let mut f = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            f = if op == b'+' { Add(b(f), b(r)) } else { Sub(b(f), b(r)) };
        }
        Ok(f)
    }
    fn product(&mut self) -> Result<Formula> {
        let mut f = self.unary()?;
        while let Some(op @ (b'*' | b'/')) = self.peek() {
            self.i += 1;
            let r = self.unary()?;
            f = if op == b'*' { Mul(b(f), b(r)) } else { Div(b(f), b(r)) };
        }
        Ok(f)
    }
    fn unary(&mut self) -> Result<Formula> {
        match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Ok(Neg(b(self.unary()?)))
            }
            Some(b'+') => {
                self.i += 1;
                self.unary()
            }
            _ => self.power(),
        }
    }
    fn power(&mut self) -> Result<Formula> {
        let base = self.atom()?;
        if self.peek() != Some(b'^') {
            return Ok(base);
        }
        self.i += 1;
        let exp = match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Neg(b(self.atom()?))
            }
            _ => self.atom()?,
        };
        if self.peek() == Some(b'^') {
            return Err(self.err("a chain a^b^c is ambiguous: add parentheses"));
        }
        Ok(Pow(b(base), b(exp)))
    }
    fn atom(&mut self) -> Result<Formula> {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let f = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err(self.err("expected `)`"));
                }
                self.i += 1;
                Ok(f)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let rest = std::str::from_utf8(&self.s[self.i..]).unwrap_or("");
                let mut end = rest.bytes().take_while(|c| c.is_ascii_digit() || *c == b'.').count();
                let r = rest.as_bytes();
                if matches!(r.get(end), Some(b'e' | b'E')) {
                    let sign = usize::from(matches!(r.get(end + 1), Some(b'+' | b'-')));
                    let digits = r[(end + 1 + sign).min(r.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
                    if digits > 0 {
                        end += 1 + sign + digits;
                    }
                }
                let v: f64 = rest[..end].parse().map_err(|_| self.err("bad number"))?;
                self.i += end;
                Ok(Num(v))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let rest = std::str::from_utf8(&self.s[self.i..]).unwrap_or("");
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                self.i += name.len();
                match name.as_str() {
                    "x" => return Ok(Var(0)),
                    "y" => return Ok(Var(1)),
                    "z" => return Ok(Var(2)),
                    "t" => return Err(self.err("the advection problem is steady: `t` is not allowed")),
                    "pi" | "PI" | "π" => return Ok(Num(std::f64::consts::PI)),
                    "e" | "E" => return Ok(Num(std::f64::consts::E)),
                    "TAU" => return Ok(Num(std::f64::consts::TAU)),
                    _ => {}
                }
                let known = UNARY.iter().chain(&BINARY).find(|n| **n == name).copied();
                let Some(f) = known else {
                    return Err(self.err(&format!("function `{name}` is not available in advection expressions (known: {}, {})", UNARY.join(", "), BINARY.join(", "))));
                };
                if self.peek() != Some(b'(') {
                    return Err(self.err(&format!("`{name}` needs parentheses")));
                }
                self.i += 1;
                let mut args = vec![self.sum()?];
                while self.peek() == Some(b',') {
                    self.i += 1;
                    args.push(self.sum()?);
                }
                if self.peek() != Some(b')') {
                    return Err(self.err("expected `)`"));
                }
                self.i += 1;
                let want = if BINARY.contains(&f) { 2 } else { 1 };
                if args.len() != want {
                    return Err(self.err(&format!("`{f}` takes {want} argument(s)")));
                }
                Ok(Call(f, args))
            }
            _ => Err(self.err("expected a number, variable, function or `(`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCES: [&str; 10] = [
        "sin(pi*x)*cos(2*y) + 1",
        "-x^2 + 3*y - 2",
        "exp(-(x-0.5)^2/0.01)",
        "1e-3 * x / (1 + y^2)",
        "sqrt(1 + x*x) - ln(2 + y)",
        "atan2(y - 0.5, x - 0.5)",
        "x^0.5 * y",
        "2^x",
        "-(y - 0.5)",
        "max(x, y) - min(x, 0.3) + abs(x - y)",
    ];

    #[test]
    fn agrees_with_expr_eval() {
        for src in SOURCES {
            let f = Formula::parse(src, "k").unwrap();
            let e = crate::expr::Expr::parse(src).unwrap();
            for i in 0..20 {
                let p = [0.05 + 0.043 * i as f64, 0.9 - 0.037 * i as f64];
                let (a, r) = (f.eval(p), e.eval([p[0], p[1], 0.0], 0.0));
                assert!((a - r).abs() <= 1e-13 * (1.0 + r.abs()), "{src} at {p:?}: {a} vs {r}");
            }
        }
    }

    #[test]
    fn derivatives_match_differences() {
        for src in &SOURCES[..9] {
            let f = Formula::parse(src, "k").unwrap();
            for var in 0..2 {
                let d = f.derivative(var).unwrap();
                let p = [0.31, 0.67];
                let h = 1e-5;
                let (mut lo, mut hi) = (p, p);
                lo[var] -= h;
                hi[var] += h;
                let fd = (f.eval(hi) - f.eval(lo)) / (2.0 * h);
                assert!((d.eval(p) - fd).abs() < 1e-6 * (1.0 + fd.abs()), "{src} d/d{var}: {} vs {fd}", d.eval(p));
            }
        }
        assert!(Formula::parse("abs(x)", "k").unwrap().derivative(0).is_err());
    }

    #[test]
    fn c_code_has_no_whitespace_and_bad_input_is_named() {
        let f = Formula::parse("-x^2 + sin(pi * y)", "physics.source").unwrap();
        let c = f.to_c();
        assert!(!c.contains(char::is_whitespace), "{c}");
        assert!(c.contains("pow(x,"), "{c}");
        for bad in ["x^2^3", "t + x", "foo(x)", "sin x", "x +"] {
            let e = Formula::parse(bad, "physics.source").unwrap_err().to_string();
            assert!(e.contains("physics.source"), "{bad}: {e}");
        }
    }
}
