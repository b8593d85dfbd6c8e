//! Expressions as CUDA source: the tree printed as one C++ expression of `x, y, z, t` whose
//! functions (`ex_sin`, `ex_pow`, …, `kernels/expr.cuh`) are overloaded for `double` and for the
//! value-and-gradient type `Dual3`, so one text serves values and exact gradients on the device.
//! The text has no whitespace, so it travels as an NVRTC `-D` define and keys the PTX cache.
use super::ast::{Fn1, Node, Op2};

/// The CUDA text of a tree.
pub fn source(n: &Node) -> String {
    let mut s = String::new();
    emit(n, &mut s);
    s
}

fn emit(n: &Node, s: &mut String) {
    match n {
        // `{:e}` is the shortest text that reads back as the same double.
        Node::Num(v) if v.is_finite() => s.push_str(&format!("({v:e})")),
        Node::Num(v) if v.is_nan() => s.push_str("(0.0/0.0)"),
        Node::Num(v) => s.push_str(if *v > 0.0 { "(1.0/0.0)" } else { "(-1.0/0.0)" }),
        Node::Var(k) => s.push(['x', 'y', 'z', 't'][*k]),
        Node::Neg(a) => {
            s.push_str("(-");
            emit(a, s);
            s.push(')');
        }
        Node::F1(f, a) => {
            s.push_str(fn1_name(*f));
            s.push('(');
            emit(a, s);
            s.push(')');
        }
        Node::F2(op, a, b) => {
            let infix = match op {
                Op2::Add => Some('+'),
                Op2::Sub => Some('-'),
                Op2::Mul => Some('*'),
                Op2::Div => Some('/'),
                _ => None,
            };
            match infix {
                Some(c) => {
                    s.push('(');
                    emit(a, s);
                    s.push(c);
                    emit(b, s);
                    s.push(')');
                }
                None => {
                    s.push_str(match op {
                        Op2::Pow => "ex_pow",
                        Op2::Atan2 => "ex_atan2",
                        Op2::Min => "ex_min",
                        _ => "ex_max",
                    });
                    s.push('(');
                    emit(a, s);
                    s.push(',');
                    emit(b, s);
                    s.push(')');
                }
            }
        }
    }
}

fn fn1_name(f: Fn1) -> &'static str {
    use Fn1::*;
    match f {
        Abs => "ex_abs",
        Signum => "ex_signum",
        Sin => "ex_sin",
        Cos => "ex_cos",
        Tan => "ex_tan",
        Asin => "ex_asin",
        Acos => "ex_acos",
        Atan => "ex_atan",
        Sinh => "ex_sinh",
        Cosh => "ex_cosh",
        Tanh => "ex_tanh",
        Asinh => "ex_asinh",
        Acosh => "ex_acosh",
        Atanh => "ex_atanh",
        Floor => "ex_floor",
        Round => "ex_round",
        Ceil => "ex_ceil",
        Trunc => "ex_trunc",
        Fract => "ex_fract",
        Exp => "ex_exp",
        Sqrt => "ex_sqrt",
        Cbrt => "ex_cbrt",
        Ln => "ex_log",
        Log2 => "ex_log2",
        Log10 => "ex_log10",
    }
}
