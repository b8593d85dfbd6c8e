//! [`FeOperator`]: the one finite element operator `A = Rᵀ Bᵀ D B R` on any backend and at any
//! assembly level — what `problem/` and the solvers see. It is a [`LevelOperator`] (the strategy)
//! plus the boundary terms the level leaves out and the Dirichlet conditions: eliminated in the
//! matrix where the level has one, else by the masked form `M A M + (I − M)`
//! ([`super::Constrained`]). It offers its preconditioners a diagonal and node blocks on the
//! backend at every level, and its CSR matrix where there is one.
use super::dirichlet::{Constrained, Constraints};
use super::level::{AssemblyLevel, CellMaterials, FeBackend, LevelInput, LevelOperator};
use crate::backend::{Backend, LinearOperator};
use crate::linalg::CsrMatrix;
use crate::solver::precond::Preconditionable;
use crate::{Error, Result};
use std::sync::Mutex;

/// A level plus the boundary terms it leaves out: the unconstrained operator.
pub struct Unconstrained<B: Backend> {
    level: Box<dyn LevelOperator<B>>,
    boundary: Option<B::Matrix>,
    scratch: Mutex<B::Vector>,
    n: usize,
}

impl<B: Backend> LinearOperator<B> for Unconstrained<B> {
    fn nrows(&self) -> usize {
        self.n
    }
    fn ncols(&self) -> usize {
        self.n
    }
    fn apply(&self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        self.level.apply(be, x, y)?;
        if let Some(m) = &self.boundary {
            let mut t = self.scratch.lock().map_err(|_| Error::invalid("operator scratch poisoned"))?;
            m.apply(be, x, &mut t)?;
            be.axpy(1.0, &t, y)?;
        }
        Ok(())
    }
    fn apply_masked(&self, be: &B, x: &B::Vector, y: &mut B::Vector, mask: &B::Vector) -> Result<bool> {
        match self.boundary {
            None => self.level.apply_masked(be, x, y, mask),
            Some(_) => Ok(false),
        }
    }
    fn apply_dot(&self, be: &B, x: &B::Vector, y: &mut B::Vector, mask: Option<&B::Vector>, partials: &mut B::Vector) -> Result<Option<usize>> {
        match self.boundary {
            None => self.level.apply_dot(be, x, y, mask, partials),
            Some(_) => Ok(None),
        }
    }
    fn pcg_fused(&self, be: &B, x: &mut B::Vector, w: &mut crate::backend::PcgWork<'_, B>, k: usize, mask: Option<&B::Vector>) -> Result<bool> {
        match self.boundary {
            None => self.level.pcg_fused(be, x, w, k, mask),
            Some(_) => Ok(false),
        }
    }
}

/// Dirichlet conditions in the masked form, with the masks the diagonal and node blocks need.
struct Masked<B: Backend> {
    op: Constrained<B, Unconstrained<B>>,
    /// Node-block entries kept (both dofs free) and the identity on constrained dofs.
    keep: B::Vector,
    ident: B::Vector,
}

enum Form<B: Backend> {
    /// Unconstrained, or constrained by elimination inside the level's matrix.
    Plain(Unconstrained<B>),
    Masked(Masked<B>),
}

/// The finite element operator on backend `B`.
pub struct FeOperator<B: Backend> {
    form: Form<B>,
    level: AssemblyLevel,
    ncomp: usize,
    /// `(free mask, lift)` when Dirichlet conditions were eliminated in the matrix.
    eliminated: Option<(B::Vector, B::Vector)>,
}

impl<B: FeBackend> FeOperator<B> {
    /// Builds `level` on `be` from `input` (no boundary conditions yet: [`FeOperator::constrain`]).
    pub fn new(be: &B, level: AssemblyLevel, input: &LevelInput) -> Result<FeOperator<B>> {
        let space = input.integ.space;
        let n = space.ndofs();
        let level_op = be.build_level(level, input)?;
        let boundary = if level_op.includes_boundary() || input.boundary.is_empty() {
            None
        } else {
            let nd = space.dofmap.nodes_per_cell * space.ncomp;
            let triplets: Vec<(usize, usize, f64)> = input
                .boundary
                .iter()
                .flat_map(|(_, dofs, ke)| (0..nd * nd).map(move |k| (dofs[k / nd], dofs[k % nd], ke[k])))
                .collect();
            Some(be.upload_matrix(&CsrMatrix::from_triplets(n, n, &triplets)?)?)
        };
        Ok(FeOperator {
            form: Form::Plain(Unconstrained { level: level_op, boundary, scratch: Mutex::new(be.zeros(n)?), n }),
            level,
            ncomp: space.ncomp,
            eliminated: None,
        })
    }
}

impl<B: Backend> FeOperator<B> {
    pub fn level(&self) -> AssemblyLevel {
        self.level
    }

    fn inner(&self) -> &Unconstrained<B> {
        match &self.form {
            Form::Plain(u) => u,
            Form::Masked(m) => &m.op.inner,
        }
    }

    fn inner_mut(&mut self) -> &mut Unconstrained<B> {
        match &mut self.form {
            Form::Plain(u) => u,
            Form::Masked(m) => &mut m.op.inner,
        }
    }

    /// Applies the Dirichlet conditions `cons` and returns the constrained right-hand side of the
    /// load `load`: symmetric elimination where the level has a matrix, the masked form elsewhere.
    pub fn constrain(&mut self, be: &B, cons: &Constraints, load: &B::Vector) -> Result<B::Vector> {
        let n = self.inner().n;
        let (mask_h, lift_h) = (cons.free_mask(n), cons.lift(n));
        let (mask, lift) = (be.from_host(&mask_h)?, be.from_host(&lift_h)?);
        if let Some(a) = self.inner_mut().level.matrix_mut() {
            let mut rhs = be.zeros(n)?;
            be.copy(load, &mut rhs)?;
            be.eliminate(a, &mut rhs, &mask, &lift)?;
            self.eliminated = Some((mask, lift));
            return Ok(rhs);
        }
        let inner = match std::mem::replace(&mut self.form, Form::Plain(Unconstrained { level: Box::new(Empty), boundary: None, scratch: Mutex::new(be.zeros(0)?), n: 0 })) {
            Form::Plain(u) => u,
            Form::Masked(m) => m.op.inner,
        };
        let mut inner = inner;
        inner.level.set_dirichlet(be, &mask_h)?;
        let op = Constrained::new(be, inner, cons)?;
        let rhs = op.rhs(be, load, &lift)?;
        let b = self.ncomp;
        let (mut keep, mut ident) = (vec![0.0; n * b], vec![0.0; n * b]);
        for node in 0..n / b {
            for i in 0..b {
                for j in 0..b {
                    let (mi, mj) = (mask_h[node * b + i], mask_h[node * b + j]);
                    keep[(node * b + i) * b + j] = mi * mj;
                    ident[(node * b + i) * b + j] = if i == j { 1.0 - mi } else { 0.0 };
                }
            }
        }
        self.form = Form::Masked(Masked { op, keep: be.from_host(&keep)?, ident: be.from_host(&ident)? });
        Ok(rhs)
    }

    /// Recomputes the level from new passive data in `input` (same mesh, space and physics) and
    /// returns the right-hand side of `load` under the same Dirichlet conditions.
    pub fn update(&mut self, be: &B, input: &LevelInput, cons: &Constraints, load: &B::Vector) -> Result<B::Vector> {
        self.inner_mut().level.update(be, input)?;
        self.rhs_after_update(be, cons, load)
    }

    /// Takes per-cell coefficients by material without re-integrating where the level can
    /// ([`LevelOperator::set_materials`]); `None` where it cannot (nothing changed), else the
    /// right-hand side of `load` as [`FeOperator::update`] returns it.
    pub fn set_materials(&mut self, be: &B, m: &CellMaterials, cons: &Constraints, load: &B::Vector) -> Result<Option<B::Vector>> {
        if self.eliminated.is_some() || !self.inner_mut().level.set_materials(be, m)? {
            return Ok(None);
        }
        self.rhs_after_update(be, cons, load).map(Some)
    }

    fn rhs_after_update(&mut self, be: &B, cons: &Constraints, load: &B::Vector) -> Result<B::Vector> {
        match &self.form {
            Form::Masked(m) => m.op.rhs(be, load, &be.from_host(&cons.lift(self.inner().n))?),
            Form::Plain(_) if self.eliminated.is_some() => self.constrain(be, cons, load),
            Form::Plain(_) => {
                let mut rhs = be.zeros(self.inner().n)?;
                be.copy(load, &mut rhs)?;
                Ok(rhs)
            }
        }
    }

    /// The assembled matrix (Dirichlet rows and columns eliminated), at the `full` level.
    pub fn matrix(&self) -> Option<&B::Matrix> {
        self.inner().level.matrix()
    }

    /// Bytes the operator keeps beyond the mesh and dof map.
    pub fn storage_bytes(&self, be: &B) -> usize {
        let u = self.inner();
        u.level.storage_bytes() + u.boundary.as_ref().map_or(0, |m| be.matrix_nnz(m) * 12)
    }

    /// Node blocks of the constrained operator (identity on constrained dofs).
    fn blocks(&self, be: &B) -> Result<B::Vector> {
        let u = self.inner();
        let mut blocks = u.level.node_blocks(be)?;
        if let Some(m) = &u.boundary {
            be.axpy(1.0, &be.matrix_node_blocks(m, self.ncomp)?, &mut blocks)?;
        }
        if let Form::Masked(m) = &self.form {
            let mut t = be.zeros(be.len(&blocks))?;
            be.pointwise_mult(&m.keep, &blocks, &mut t)?;
            be.axpy(1.0, &m.ident, &mut t)?;
            blocks = t;
        }
        Ok(blocks)
    }
}

impl<B: Backend> LinearOperator<B> for FeOperator<B> {
    fn nrows(&self) -> usize {
        self.inner().n
    }
    fn ncols(&self) -> usize {
        self.inner().n
    }
    fn apply(&self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        match &self.form {
            Form::Plain(u) => u.apply(be, x, y),
            Form::Masked(m) => m.op.apply(be, x, y),
        }
    }
    fn apply_dot(&self, be: &B, x: &B::Vector, y: &mut B::Vector, mask: Option<&B::Vector>, partials: &mut B::Vector) -> Result<Option<usize>> {
        match &self.form {
            Form::Plain(u) => u.apply_dot(be, x, y, mask, partials),
            Form::Masked(m) => m.op.apply_dot(be, x, y, mask, partials),
        }
    }
    fn pcg_fused(&self, be: &B, x: &mut B::Vector, w: &mut crate::backend::PcgWork<'_, B>, k: usize, mask: Option<&B::Vector>) -> Result<bool> {
        match &self.form {
            Form::Plain(u) => u.pcg_fused(be, x, w, k, mask),
            Form::Masked(m) => m.op.pcg_fused(be, x, w, k, mask),
        }
    }
}

impl<B: Backend> Preconditionable<B> for FeOperator<B> {
    fn diagonal(&self, be: &B) -> Result<B::Vector> {
        // Constrained rows are identity rows: their blocks already carry the 1.
        be.blocks_diagonal(self.ncomp, &self.blocks(be)?)
    }
    fn node_blocks(&self, be: &B) -> Result<(usize, B::Vector)> {
        Ok((self.ncomp, self.blocks(be)?))
    }
    fn matrix(&self) -> Option<&B::Matrix> {
        FeOperator::matrix(self)
    }
}

/// A placeholder level while the form is rebuilt (never applied).
struct Empty;

impl<B: Backend> LevelOperator<B> for Empty {
    fn apply(&self, _be: &B, _x: &B::Vector, _y: &mut B::Vector) -> Result<()> {
        Err(Error::invalid("an operator was used while its constraints were being applied"))
    }
    fn node_blocks(&self, be: &B) -> Result<B::Vector> {
        be.zeros(0)
    }
    fn storage_bytes(&self) -> usize {
        0
    }
    fn includes_boundary(&self) -> bool {
        true
    }
    fn update(&mut self, _be: &B, _input: &LevelInput) -> Result<()> {
        Ok(())
    }
}
