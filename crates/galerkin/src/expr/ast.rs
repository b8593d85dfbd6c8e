//! A syntax tree of the expressions exmex accepted, for compiled evaluation (native closures on the
//! host, CUDA source on the device). exmex stays the validator and owner of the error messages;
//! this parser reads the same (already rewritten, see `leading_minus_as_subtraction`) text with the
//! same precedences (`^` > `/` > `*` > `-` > `+`, equal ones from the left, unary operators
//! tightest) and declines — `None`, the caller keeps exmex's interpreter — anything it does not know,
//! so it can never give a different meaning to an accepted text. `tests` checks both agree.

/// A function of one argument (exmex's unary float operators).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fn1 {
    Abs,
    Signum,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Floor,
    Round,
    Ceil,
    Trunc,
    Fract,
    Exp,
    Sqrt,
    Cbrt,
    Ln,
    Log2,
    Log10,
}

impl Fn1 {
    fn from_name(s: &str) -> Option<Fn1> {
        use Fn1::*;
        Some(match s {
            "abs" => Abs,
            "signum" => Signum,
            "sin" => Sin,
            "cos" => Cos,
            "tan" => Tan,
            "asin" => Asin,
            "acos" => Acos,
            "atan" => Atan,
            "sinh" => Sinh,
            "cosh" => Cosh,
            "tanh" => Tanh,
            "asinh" => Asinh,
            "acosh" => Acosh,
            "atanh" => Atanh,
            "floor" => Floor,
            "round" => Round,
            "ceil" => Ceil,
            "trunc" => Trunc,
            "fract" => Fract,
            "exp" => Exp,
            "sqrt" => Sqrt,
            "cbrt" => Cbrt,
            "ln" | "log" => Ln,
            "log2" => Log2,
            "log10" => Log10,
            _ => return None,
        })
    }
}

/// A binary operator or two-argument function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op2 {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Atan2,
    Min,
    Max,
}

impl Op2 {
    /// exmex's priorities; a higher one binds tighter.
    fn prio(self) -> u8 {
        match self {
            Op2::Pow => 4,
            Op2::Div => 3,
            Op2::Mul => 2,
            Op2::Sub => 1,
            _ => 0,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Num(f64),
    /// Index into `[x, y, z, t]`.
    Var(usize),
    Neg(Box<Node>),
    F1(Fn1, Box<Node>),
    F2(Op2, Box<Node>, Box<Node>),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(char),
    Open,
    Close,
    Comma,
}

fn tokens(src: &str) -> Option<Vec<Tok>> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_ascii_digit() || ch == '.' {
            let rest: String = c[i..].iter().collect();
            let lit = <super::SciNumber as exmex::MatchLiteral>::is_literal(&rest)?;
            out.push(Tok::Num(lit.parse().ok()?));
            i += lit.chars().count();
        } else if ch.is_alphabetic() || ch == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(c[s..i].iter().collect()));
        } else {
            out.push(match ch {
                '(' => Tok::Open,
                ')' => Tok::Close,
                ',' => Tok::Comma,
                '+' | '-' | '*' | '/' | '^' => Tok::Op(ch),
                _ => return None,
            });
            i += 1;
        }
    }
    Some(out)
}

struct Parser {
    t: Vec<Tok>,
    i: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }

    fn bin_op(&self) -> Option<Op2> {
        match self.peek()? {
            Tok::Op('+') => Some(Op2::Add),
            Tok::Op('-') => Some(Op2::Sub),
            Tok::Op('*') => Some(Op2::Mul),
            Tok::Op('/') => Some(Op2::Div),
            Tok::Op('^') => Some(Op2::Pow),
            _ => None,
        }
    }

    /// Operands and operators at one level, folded by priority with equal priorities from the left
    /// (exmex's rule: it applies the highest-priority operator first, the leftmost among equals).
    fn expr(&mut self) -> Option<Node> {
        let mut operands = vec![self.unary()?];
        let mut ops = Vec::new();
        while let Some(op) = self.bin_op() {
            self.i += 1;
            ops.push(op);
            operands.push(self.unary()?);
        }
        while !ops.is_empty() {
            let top = ops.iter().map(|o| o.prio()).max()?;
            let k = ops.iter().position(|o| o.prio() == top)?;
            let op = ops.remove(k);
            let b = operands.remove(k + 1);
            let a = std::mem::replace(&mut operands[k], Node::Num(0.0));
            operands[k] = Node::F2(op, Box::new(a), Box::new(b));
        }
        operands.pop()
    }

    fn unary(&mut self) -> Option<Node> {
        match self.peek()? {
            Tok::Op('-') => {
                self.i += 1;
                Some(Node::Neg(Box::new(self.unary()?)))
            }
            Tok::Op('+') => {
                self.i += 1;
                self.unary()
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Option<Node> {
        let tok = self.peek()?.clone();
        self.i += 1;
        match tok {
            Tok::Num(v) => Some(Node::Num(v)),
            Tok::Open => {
                let e = self.expr()?;
                (self.peek()? == &Tok::Close).then(|| self.i += 1)?;
                Some(e)
            }
            Tok::Name(n) => {
                if let Some(k) = super::VARIABLES.iter().position(|v| *v == n) {
                    return Some(Node::Var(k));
                }
                let constant = match n.as_str() {
                    "pi" | "PI" | "π" => Some(std::f64::consts::PI),
                    "e" | "E" => Some(std::f64::consts::E),
                    "TAU" | "τ" => Some(std::f64::consts::TAU),
                    _ => None,
                };
                if let Some(v) = constant {
                    return Some(Node::Num(v));
                }
                // Functions take a parenthesised argument list (bare `sin x` is left to exmex).
                (self.peek()? == &Tok::Open).then(|| self.i += 1)?;
                let a = self.expr()?;
                let two = match n.as_str() {
                    "atan2" => Some(Op2::Atan2),
                    "min" => Some(Op2::Min),
                    "max" => Some(Op2::Max),
                    _ => None,
                };
                let node = match two {
                    Some(op) => {
                        (self.peek()? == &Tok::Comma).then(|| self.i += 1)?;
                        let b = self.expr()?;
                        Node::F2(op, Box::new(a), Box::new(b))
                    }
                    None => Node::F1(Fn1::from_name(&n)?, Box::new(a)),
                };
                (self.peek()? == &Tok::Close).then(|| self.i += 1)?;
                Some(node)
            }
            _ => None,
        }
    }
}

/// The tree of `text` (exmex-accepted, minus-rewritten), or `None` where this parser declines.
pub fn parse(text: &str) -> Option<Node> {
    let mut p = Parser { t: tokens(text)?, i: 0 };
    let e = p.expr()?;
    (p.i == p.t.len()).then_some(fold(e))
}

/// Constant folding: subtrees without variables become numbers (`2*pi` once, not per point).
fn fold(n: Node) -> Node {
    let n = match n {
        Node::Neg(a) => Node::Neg(Box::new(fold(*a))),
        Node::F1(f, a) => Node::F1(f, Box::new(fold(*a))),
        Node::F2(o, a, b) => Node::F2(o, Box::new(fold(*a)), Box::new(fold(*b))),
        other => other,
    };
    let constant = match &n {
        Node::Neg(a) | Node::F1(_, a) => matches!(**a, Node::Num(_)),
        Node::F2(_, a, b) => matches!(**a, Node::Num(_)) && matches!(**b, Node::Num(_)),
        _ => false,
    };
    if constant {
        Node::Num(super::compile::eval_f64(&n, &[0.0; 4]))
    } else {
        n
    }
}
