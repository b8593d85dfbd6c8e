//! CPU assembly: every block row (element n: its volume block, the face terms of its two faces, its
//! couplings L_n and U_n, its right-hand side) is computed independently, rayon over rows, straight
//! into the block-tridiagonal storage. No locks and no scatter: face n's contributions to rows
//! n − 1 and n are recomputed by each row (two b × b face blocks per face more, no traffic).
use super::basis::Tabulation;
use super::block_tridiag::BlockTridiag;
use super::dense::{self, with_block_size, Blk};
use super::physics::{dirichlet_rhs, face_block, load, neumann_rhs, volume_block, Side};
use super::problem::{BoundaryCondition, DgProblem, Samples};
use super::restriction::{ElementRestriction, FaceRestriction};
use crate::{Error, Result};
use rayon::prelude::*;

/// Block rows per rayon task.
const ROWS_PER_TASK: usize = 2048;

/// The block-tridiagonal matrix and right-hand side of `p`.
pub fn assemble(p: &DgProblem, tab: &Tabulation, s: &Samples) -> Result<(BlockTridiag, Vec<f64>)> {
    let mut m = BlockTridiag::zeros(p.mesh.len(), p.block())?;
    let mut rhs = vec![0.0; p.ndofs()];
    assemble_into(p, tab, s, &mut m, &mut rhs)?;
    Ok((m, rhs))
}

/// [`assemble`] into existing storage (re-assembly on the same mesh allocates nothing).
pub fn assemble_into(p: &DgProblem, tab: &Tabulation, s: &Samples, m: &mut BlockTridiag, rhs: &mut [f64]) -> Result<()> {
    if m.n != p.mesh.len() || m.b != p.block() || rhs.len() != p.ndofs() || tab.nbasis() != p.block() {
        return Err(Error::dim("DG assembly storage (unknowns)", p.ndofs(), rhs.len()));
    }
    with_block_size!(p.block(), B => {
        let bb = B * B;
        let rows = ROWS_PER_TASK;
        m.lower
            .par_chunks_mut(rows * bb)
            .zip(m.diag.par_chunks_mut(rows * bb))
            .zip(m.upper.par_chunks_mut(rows * bb))
            .zip(rhs.par_chunks_mut(rows * B))
            .enumerate()
            .for_each(|(t, (((lc, dc), uc), rc))| {
                for k in 0..rc.len() / B {
                    let (l, d, u, r) = row::<B>(p, tab, s, t * rows + k);
                    dense::store(&l, &mut lc[k * bb..]);
                    dense::store(&d, &mut dc[k * bb..]);
                    dense::store(&u, &mut uc[k * bb..]);
                    rc[k * B..(k + 1) * B].copy_from_slice(&r);
                }
            });
        Ok(())
    })
}

/// Block row n: (L_n, D_n, U_n, rhs_n).
#[inline(always)]
fn row<const B: usize>(p: &DgProblem, tab: &Tabulation, s: &Samples, n: usize) -> (Blk<B>, Blk<B>, Blk<B>, [f64; B]) {
    let (mesh, k, eps) = (&p.mesh, p.degree, p.method.epsilon());
    let big_n = mesh.len();
    let h = mesh.h(n);
    let mut d = volume_block::<B>(tab, h, |q| s.a_q.at(n, q), |q| s.c_q.at(n, q));
    let mut r = load::<B>(tab, h, |q| s.f_q.at(n, q));
    let (mut l, mut u) = ([[0.0; B]; B], [[0.0; B]; B]);
    let add = |acc: &mut Blk<B>, m: Blk<B>| acc.iter_mut().flatten().zip(m.iter().flatten()).for_each(|(a, v)| *a += v);
    let add_rhs = |acc: &mut [f64; B], v: [f64; B]| acc.iter_mut().zip(v).for_each(|(a, v)| *a += v);

    // Left face (vertex n): this element lies right of it.
    let me = Side::<B>::right_of_face(tab, h);
    let a = s.a_nodes.at(n, 0);
    if n > 0 {
        let hl = mesh.h(n - 1);
        let sigma = p.penalty.interior(k, hl, h, a);
        add(&mut d, face_block(0.5 * a, eps, sigma, &me, &me));
        l = face_block(0.5 * a, eps, sigma, &me, &Side::left_of_face(tab, hl));
    } else {
        boundary(p, a, h, &me, p.left, &mut d, &mut r, add, add_rhs);
    }
    // Right face (vertex n + 1): this element lies left of it.
    let me = Side::<B>::left_of_face(tab, h);
    let a = s.a_nodes.at(n + 1, 0);
    if n + 1 < big_n {
        let hr = mesh.h(n + 1);
        let sigma = p.penalty.interior(k, h, hr, a);
        add(&mut d, face_block(0.5 * a, eps, sigma, &me, &me));
        u = face_block(0.5 * a, eps, sigma, &me, &Side::right_of_face(tab, hr));
    } else {
        boundary(p, a, h, &me, p.right, &mut d, &mut r, add, add_rhs);
    }
    (l, d, u, r)
}

/// The terms of an end: Nitsche's face block and data for Dirichlet, the flux for Neumann.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn boundary<const B: usize>(
    p: &DgProblem,
    a: f64,
    h: f64,
    side: &Side<B>,
    bc: BoundaryCondition,
    d: &mut Blk<B>,
    r: &mut [f64; B],
    add: impl Fn(&mut Blk<B>, Blk<B>),
    add_rhs: impl Fn(&mut [f64; B], [f64; B]),
) {
    let eps = p.method.epsilon();
    match bc {
        BoundaryCondition::Dirichlet(g) => {
            let sigma = p.penalty.boundary(p.degree, h, a);
            add(d, face_block(a, eps, sigma, side, side));
            add_rhs(r, dirichlet_rhs(a, eps, sigma, side, g));
        }
        BoundaryCondition::Neumann(g) => add_rhs(r, neumann_rhs(side, g)),
    }
}

/// `y = A x` without assembling: element blocks through the element restriction, 2b × 2b face
/// blocks through the interior-face restriction, plus the Dirichlet ends — the operator as its four
/// pieces. Slow (serial, recomputes every block) and meant as the check of the assembled form.
pub fn apply_unassembled(p: &DgProblem, tab: &Tabulation, s: &Samples, x: &[f64], y: &mut [f64]) -> Result<()> {
    if x.len() != p.ndofs() || y.len() != p.ndofs() {
        return Err(Error::dim("unassembled DG apply", p.ndofs(), x.len().min(y.len())));
    }
    with_block_size!(p.block(), B => {
        let (mesh, k, eps) = (&p.mesh, p.degree, p.method.epsilon());
        let (n, nodes) = (mesh.len(), mesh.nodes().len());
        let elements = ElementRestriction { elements: n, block: B };
        let faces = FaceRestriction { elements: n, block: B };
        y.fill(0.0);
        for e in 0..n {
            let h = mesh.h(e);
            let ke = volume_block::<B>(tab, h, |q| s.a_q.at(e, q), |q| s.c_q.at(e, q));
            elements.scatter_add(&dense::matvec(&ke, elements.gather(x, e)), e, y);
        }
        for f in faces.faces() {
            let (le, re) = faces.neighbours(f);
            let a = s.a_nodes.at(f, 0);
            let sigma = p.penalty.interior(k, mesh.h(le), mesh.h(re), a);
            let sides = [Side::<B>::left_of_face(tab, mesh.h(le)), Side::<B>::right_of_face(tab, mesh.h(re))];
            let xf = faces.gather(x, f);
            let mut yf = vec![0.0; 2 * B];
            for (te, test) in sides.iter().enumerate() {
                for (tg, trial) in sides.iter().enumerate() {
                    let v = dense::matvec(&face_block(0.5 * a, eps, sigma, test, trial), &xf[tg * B..]);
                    yf[te * B..(te + 1) * B].iter_mut().zip(v).for_each(|(yi, vi)| *yi += vi);
                }
            }
            faces.scatter_add(&yf, f, y);
        }
        for (e, vertex, side, bc) in [
            (0, 0, Side::<B>::right_of_face(tab, mesh.h(0)), p.left),
            (n - 1, nodes - 1, Side::<B>::left_of_face(tab, mesh.h(n - 1)), p.right),
        ] {
            if let BoundaryCondition::Dirichlet(_) = bc {
                let a = s.a_nodes.at(vertex, 0);
                let sigma = p.penalty.boundary(k, mesh.h(e), a);
                let v = dense::matvec(&face_block(a, eps, sigma, &side, &side), elements.gather(x, e));
                elements.scatter_add(&v, e, y);
            }
        }
        Ok(())
    })
}
