//! Expressions compiled to native closures (one closure per tree node, built once), evaluated in
//! `f64` or in [`Dual3`] — value and exact gradient in x, y, z in one pass (forward-mode automatic
//! differentiation), which is what error norms need at every quadrature point.
use super::ast::{Fn1, Node, Op2};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// The number types a compiled expression evaluates in.
pub trait Scalar: Copy + Send + Sync + 'static + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Neg<Output = Self> {
    fn constant(v: f64) -> Self;
    fn f1(self, f: Fn1) -> Self;
    /// `dst[j] = src[j].f1(f)` over a tape register (f64 overrides it for the branch-free
    /// `sin`/`cos` loops of [`super::trig`]).
    #[inline]
    fn f1_slice(f: Fn1, dst: &mut [Self], src: &[Self]) {
        dst.iter_mut().zip(src).for_each(|(d, &a)| *d = a.f1(f));
    }
    fn powf(self, b: Self) -> Self;
    fn atan2(self, x: Self) -> Self;
    /// The value part (for `min`/`max`, whose branch follows the values).
    fn value(self) -> f64;
}

impl Scalar for f64 {
    fn constant(v: f64) -> Self {
        v
    }
    fn f1(self, f: Fn1) -> f64 {
        apply_f64(f, self)
    }
    fn f1_slice(f: Fn1, dst: &mut [f64], src: &[f64]) {
        match f {
            Fn1::Sin => super::trig::sin_slice(dst, src),
            Fn1::Cos => super::trig::cos_slice(dst, src),
            _ => dst.iter_mut().zip(src).for_each(|(d, &a)| *d = apply_f64(f, a)),
        }
    }
    fn powf(self, b: f64) -> f64 {
        f64::powf(self, b)
    }
    fn atan2(self, x: f64) -> f64 {
        f64::atan2(self, x)
    }
    fn value(self) -> f64 {
        self
    }
}

fn apply_f64(f: Fn1, a: f64) -> f64 {
    use Fn1::*;
    match f {
        Abs => a.abs(),
        Signum => a.signum(),
        Sin => super::trig::sin(a),
        Cos => super::trig::cos(a),
        Tan => a.tan(),
        Asin => a.asin(),
        Acos => a.acos(),
        Atan => a.atan(),
        Sinh => a.sinh(),
        Cosh => a.cosh(),
        Tanh => a.tanh(),
        Asinh => a.asinh(),
        Acosh => a.acosh(),
        Atanh => a.atanh(),
        Floor => a.floor(),
        Round => a.round(),
        Ceil => a.ceil(),
        Trunc => a.trunc(),
        Fract => a.fract(),
        Exp => a.exp(),
        Sqrt => a.sqrt(),
        Cbrt => a.cbrt(),
        Ln => a.ln(),
        Log2 => a.log2(),
        Log10 => a.log10(),
    }
}

/// A value with its gradient in (x, y, z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dual3 {
    pub v: f64,
    pub d: [f64; 3],
}

impl Dual3 {
    /// The chain rule: `f(a)` with `f'(a) = df`.
    fn chain(self, v: f64, df: f64) -> Dual3 {
        Dual3 { v, d: self.d.map(|g| df * g) }
    }
}

impl Add for Dual3 {
    type Output = Dual3;
    fn add(self, b: Dual3) -> Dual3 {
        Dual3 { v: self.v + b.v, d: [0, 1, 2].map(|k| self.d[k] + b.d[k]) }
    }
}
impl Sub for Dual3 {
    type Output = Dual3;
    fn sub(self, b: Dual3) -> Dual3 {
        Dual3 { v: self.v - b.v, d: [0, 1, 2].map(|k| self.d[k] - b.d[k]) }
    }
}
impl Mul for Dual3 {
    type Output = Dual3;
    fn mul(self, b: Dual3) -> Dual3 {
        Dual3 { v: self.v * b.v, d: [0, 1, 2].map(|k| self.d[k] * b.v + self.v * b.d[k]) }
    }
}
impl Div for Dual3 {
    type Output = Dual3;
    fn div(self, b: Dual3) -> Dual3 {
        let q = self.v / b.v;
        Dual3 { v: q, d: [0, 1, 2].map(|k| (self.d[k] - q * b.d[k]) / b.v) }
    }
}
impl Neg for Dual3 {
    type Output = Dual3;
    fn neg(self) -> Dual3 {
        Dual3 { v: -self.v, d: self.d.map(|g| -g) }
    }
}

impl Scalar for Dual3 {
    fn constant(v: f64) -> Self {
        Dual3 { v, d: [0.0; 3] }
    }
    fn f1(self, f: Fn1) -> Dual3 {
        use Fn1::*;
        let a = self.v;
        let v = apply_f64(f, a);
        let df = match f {
            Abs | Signum => {
                if f == Abs {
                    a.signum()
                } else {
                    0.0
                }
            }
            Sin => super::trig::cos(a),
            Cos => -super::trig::sin(a),
            Tan => 1.0 + v * v,
            Asin => 1.0 / (1.0 - a * a).sqrt(),
            Acos => -1.0 / (1.0 - a * a).sqrt(),
            Atan => 1.0 / (1.0 + a * a),
            Sinh => a.cosh(),
            Cosh => a.sinh(),
            Tanh => 1.0 - v * v,
            Asinh => 1.0 / (a * a + 1.0).sqrt(),
            Acosh => 1.0 / (a * a - 1.0).sqrt(),
            Atanh => 1.0 / (1.0 - a * a),
            Floor | Round | Ceil | Trunc => 0.0,
            Fract => 1.0,
            Exp => v,
            Sqrt => 0.5 / v,
            Cbrt => 1.0 / (3.0 * v * v),
            Ln => 1.0 / a,
            Log2 => 1.0 / (a * std::f64::consts::LN_2),
            Log10 => 1.0 / (a * std::f64::consts::LN_10),
        };
        self.chain(v, df)
    }
    /// `a^b = exp(b ln a)`; a constant exponent keeps negative bases (`x^2` at x < 0).
    fn powf(self, b: Dual3) -> Dual3 {
        let v = self.v.powf(b.v);
        let da = if b.v == 0.0 { 0.0 } else { b.v * self.v.powf(b.v - 1.0) };
        let db = if b.d == [0.0; 3] { 0.0 } else { v * self.v.ln() };
        Dual3 { v, d: [0, 1, 2].map(|k| da * self.d[k] + db * b.d[k]) }
    }
    fn atan2(self, x: Dual3) -> Dual3 {
        let r2 = self.v * self.v + x.v * x.v;
        Dual3 { v: self.v.atan2(x.v), d: [0, 1, 2].map(|k| (x.v * self.d[k] - self.v * x.d[k]) / r2) }
    }
    fn value(self) -> f64 {
        self.v
    }
}

/// A compiled expression over `[x, y, z, t]`.
pub type Compiled<T> = Box<dyn Fn(&[T; 4]) -> T + Send + Sync>;

/// One closure per node, so evaluation is a chain of direct calls with no matching on the tree.
pub fn compile<T: Scalar>(n: &Node) -> Compiled<T> {
    match n {
        &Node::Num(v) => {
            let c = T::constant(v);
            Box::new(move |_| c)
        }
        &Node::Var(k) => Box::new(move |x| x[k]),
        Node::Neg(a) => {
            let a = compile::<T>(a);
            Box::new(move |x| -a(x))
        }
        Node::F1(f, a) => {
            let (f, a) = (*f, compile::<T>(a));
            Box::new(move |x| a(x).f1(f))
        }
        Node::F2(op, a, b) => {
            // Common shapes get closures without an inner dispatch.
            let (fa, fb) = (compile::<T>(a), compile::<T>(b));
            match op {
                Op2::Add => Box::new(move |x| fa(x) + fb(x)),
                Op2::Sub => Box::new(move |x| fa(x) - fb(x)),
                Op2::Mul => Box::new(move |x| fa(x) * fb(x)),
                Op2::Div => Box::new(move |x| fa(x) / fb(x)),
                Op2::Pow => match **b {
                    Node::Num(p) if p == 2.0 => Box::new(move |x| {
                        let v = fa(x);
                        v * v
                    }),
                    _ => Box::new(move |x| fa(x).powf(fb(x))),
                },
                &other => Box::new(move |x| apply_op2(other, fa(x), fb(x))),
            }
        }
    }
}

/// A binary operator in any [`Scalar`]; `min`/`max` follow the values (their gradient is the
/// chosen operand's).
#[inline]
pub fn apply_op2<T: Scalar>(op: Op2, u: T, v: T) -> T {
    match op {
        Op2::Add => u + v,
        Op2::Sub => u - v,
        Op2::Mul => u * v,
        Op2::Div => u / v,
        Op2::Pow => u.powf(v),
        Op2::Atan2 => u.atan2(v),
        Op2::Min => {
            if u.value().min(v.value()) == u.value() {
                u
            } else {
                v
            }
        }
        Op2::Max => {
            if u.value().max(v.value()) == u.value() {
                u
            } else {
                v
            }
        }
    }
}

/// Direct evaluation of a tree (constant folding, tests).
pub fn eval_f64(n: &Node, x: &[f64; 4]) -> f64 {
    match n {
        Node::Num(v) => *v,
        Node::Var(k) => x[*k],
        Node::Neg(a) => -eval_f64(a, x),
        Node::F1(f, a) => apply_f64(*f, eval_f64(a, x)),
        Node::F2(op, a, b) => apply_op2(*op, eval_f64(a, x), eval_f64(b, x)),
    }
}
