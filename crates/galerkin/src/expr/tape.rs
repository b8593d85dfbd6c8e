//! The expression tree flattened into a tape of instructions evaluated over a batch of points at
//! once: each instruction runs as a loop over the batch, so the dispatch per tree node is paid once
//! per batch instead of once per point, and additions and products vectorise. Error norms and
//! other per-cell loops evaluate every quadrature point of a cell in one call.
use super::ast::{Fn1, Node, Op2};
use super::compile::Scalar;

/// Points per pass over the tape: the registers of a typical expression (a few dozen instructions
/// of 32 values) stay in the L1 cache.
pub const BATCH: usize = 32;

/// Instruction `i` writes register `i`; operands name earlier registers.
#[derive(Clone, Copy, Debug)]
enum Op {
    Num(f64),
    Var(usize),
    Neg(usize),
    F1(Fn1, usize),
    F2(Op2, usize, usize),
    Square(usize),
}

/// A tree in post order (every operand before its use; the last register is the result).
#[derive(Clone, Debug)]
pub struct Tape {
    ops: Vec<Op>,
}

impl Tape {
    pub fn new(n: &Node) -> Tape {
        let mut ops = Vec::new();
        push(n, &mut ops);
        Tape { ops }
    }

    /// Evaluate at `vars[k][j]` (variable k of `[x, y, z, t]` at point j) into `out[j]`, for any
    /// number of points; `scratch` is reused between calls.
    pub fn eval<T: Scalar>(&self, vars: [&[T]; 4], out: &mut [T], scratch: &mut Vec<T>) {
        let n_all = out.len();
        scratch.resize(self.ops.len() * BATCH, T::constant(0.0));
        let mut start = 0;
        while start < n_all {
            let n = BATCH.min(n_all - start);
            for (i, op) in self.ops.iter().enumerate() {
                let (done, rest) = scratch.split_at_mut(i * BATCH);
                let dst = &mut rest[..n];
                let reg = |r: usize| &done[r * BATCH..r * BATCH + n];
                match *op {
                    Op::Num(v) => dst.fill(T::constant(v)),
                    Op::Var(k) => dst.copy_from_slice(&vars[k][start..start + n]),
                    Op::Neg(a) => dst.iter_mut().zip(reg(a)).for_each(|(d, &a)| *d = -a),
                    Op::Square(a) => dst.iter_mut().zip(reg(a)).for_each(|(d, &a)| *d = a * a),
                    Op::F1(f, a) => T::f1_slice(f, dst, reg(a)),
                    Op::F2(op, a, b) => {
                        let (a, b) = (reg(a), reg(b));
                        match op {
                            Op2::Add => zip3(dst, a, b, |u, v| u + v),
                            Op2::Sub => zip3(dst, a, b, |u, v| u - v),
                            Op2::Mul => zip3(dst, a, b, |u, v| u * v),
                            Op2::Div => zip3(dst, a, b, |u, v| u / v),
                            other => zip3(dst, a, b, |u, v| super::compile::apply_op2(other, u, v)),
                        }
                    }
                }
            }
            let last = (self.ops.len() - 1) * BATCH;
            out[start..start + n].copy_from_slice(&scratch[last..last + n]);
            start += n;
        }
    }
}

#[inline(always)]
fn zip3<T: Copy>(dst: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    for ((d, &u), &v) in dst.iter_mut().zip(a).zip(b) {
        *d = f(u, v);
    }
}

fn push(n: &Node, ops: &mut Vec<Op>) -> usize {
    let op = match n {
        &Node::Num(v) => Op::Num(v),
        &Node::Var(k) => Op::Var(k),
        Node::Neg(a) => Op::Neg(push(a, ops)),
        Node::F1(f, a) => Op::F1(*f, push(a, ops)),
        Node::F2(Op2::Pow, a, b) if **b == Node::Num(2.0) => Op::Square(push(a, ops)),
        Node::F2(op, a, b) => {
            let a = push(a, ops);
            Op::F2(*op, a, push(b, ops))
        }
    };
    ops.push(op);
    ops.len() - 1
}
