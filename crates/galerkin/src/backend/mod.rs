//! Backends: the device runtime. Where vectors and CSR matrices live and the vector, SpMV and
//! node-block operations run. Solvers are written once against [`Backend`] and [`LinearOperator`];
//! the CPU backend (rayon) is always present, the CUDA backend slots in by implementing the same two
//! traits. Finite element code lives in [`crate::operator`] and is never imported from here.
pub mod cpu;
pub mod cuda;
mod select;

pub use cpu::Cpu;
pub use select::{AnyBackend, BackendKind};

use crate::linalg::CsrMatrix;
use crate::Result;

/// Vector storage and the vector operations Krylov methods need. Every method may fail (a GPU launch
/// can), so all return `Result`. Fused operations (`cg_update`) exist so a device backend can stream
/// each vector once per iteration.
pub trait Backend: Send + Sync + Sized {
    /// A vector living in this backend's memory.
    type Vector: Send + Sync;
    /// A CSR matrix living in this backend's memory.
    type Matrix: LinearOperator<Self>;

    fn name(&self) -> &str;
    fn zeros(&self, n: usize) -> Result<Self::Vector>;
    fn from_host(&self, x: &[f64]) -> Result<Self::Vector>;
    fn to_host(&self, x: &Self::Vector) -> Result<Vec<f64>>;
    fn len(&self, x: &Self::Vector) -> usize;

    /// `dst = src`
    fn copy(&self, src: &Self::Vector, dst: &mut Self::Vector) -> Result<()>;
    /// `x[i] = value`
    fn fill(&self, x: &mut Self::Vector, value: f64) -> Result<()>;
    /// `x · y`
    fn dot(&self, x: &Self::Vector, y: &Self::Vector) -> Result<f64>;
    /// `‖x‖₂`
    fn norm2(&self, x: &Self::Vector) -> Result<f64> {
        Ok(self.dot(x, x)?.sqrt())
    }
    /// `y = a·x + y`
    fn axpy(&self, a: f64, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// `x · v` for every `v` in `vs` — GMRES's classical Gram–Schmidt: on a device one reduction
    /// and one wait for the host for all of them, not one each.
    fn dots(&self, x: &Self::Vector, vs: &[Self::Vector]) -> Result<Vec<f64>> {
        vs.iter().map(|v| self.dot(x, v)).collect()
    }
    /// `y += Σ c_i v_i` (`y` not among `vs`; on a device one pass over `y` per 32 vectors).
    fn add_combination(&self, c: &[f64], vs: &[Self::Vector], y: &mut Self::Vector) -> Result<()> {
        if c.len() != vs.len() {
            return Err(crate::Error::dim("combination coefficients", vs.len(), c.len()));
        }
        c.iter().zip(vs).try_for_each(|(&ci, v)| self.axpy(ci, v, y))
    }
    /// `y = a·x + b·y`
    fn axpby(&self, a: f64, x: &Self::Vector, b: f64, y: &mut Self::Vector) -> Result<()>;
    /// `x = a·x`
    fn scale(&self, a: f64, x: &mut Self::Vector) -> Result<()>;
    /// `y = d ⊙ x` (elementwise product; Jacobi preconditioning)
    fn pointwise_mult(&self, d: &Self::Vector, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// `k` Jacobi-PCG iterations with every scalar kept on the device (no host round trip inside
    /// the batch), for backends that have that path; `None` where the backend does not (then
    /// [`crate::solver::jacobi_cg`] drives the ordinary loop). See [`PcgWork`].
    fn has_resident_pcg(&self) -> bool {
        false
    }
    fn pcg_iterations(&self, _a: &dyn LinearOperator<Self>, _x: &mut Self::Vector, _w: &mut PcgWork<'_, Self>, _k: usize) -> Option<Result<()>> {
        None
    }
    /// Fused CG update: `x += α·p; r -= α·q;` returns `r·r`.
    fn cg_update(
        &self,
        alpha: f64,
        p: &Self::Vector,
        q: &Self::Vector,
        x: &mut Self::Vector,
        r: &mut Self::Vector,
    ) -> Result<f64> {
        self.axpy(alpha, p, x)?;
        self.axpy(-alpha, q, r)?;
        self.dot(r, r)
    }

    /// A host CSR matrix moved to this backend.
    fn upload_matrix(&self, a: &CsrMatrix) -> Result<Self::Matrix>;
    /// The matrix back on the host (tests, CPU-only factorizations).
    fn matrix_to_host(&self, a: &Self::Matrix) -> Result<CsrMatrix>;
    fn matrix_nnz(&self, a: &Self::Matrix) -> usize;
    /// The diagonal (zero where a row stores none).
    fn matrix_diagonal(&self, a: &Self::Matrix) -> Result<Self::Vector>;
    /// The `b × b` diagonal blocks of node-interleaved rows (node k owns rows `k·b .. k·b + b`),
    /// row-major block after block.
    fn matrix_node_blocks(&self, a: &Self::Matrix, b: usize) -> Result<Self::Vector>;
    /// Symmetric Dirichlet elimination: free rows move their constrained columns to the right-hand
    /// side (`rhs -= a·lift`), constrained rows become identity rows with `rhs = lift`.
    /// `free_mask` is 1 on free rows and 0 on constrained ones.
    fn eliminate(&self, a: &mut Self::Matrix, rhs: &mut Self::Vector, free_mask: &Self::Vector, lift: &Self::Vector) -> Result<()>;

    /// Inverts `b × b` blocks (row-major, block after block) in place; returns the index of the
    /// first singular or non-finite block, if any (the blocks are then unusable).
    fn invert_blocks(&self, b: usize, blocks: &mut Self::Vector) -> Result<Option<usize>>;
    /// `y_k = M_k x_k` for every node k with `b × b` blocks `M_k`.
    fn apply_blocks(&self, b: usize, blocks: &Self::Vector, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// The diagonals of `b × b` blocks, one vector entry per row.
    fn blocks_diagonal(&self, b: usize, blocks: &Self::Vector) -> Result<Self::Vector>;
}

/// A linear map `y = A x` applied on backend `B`. Assembled matrices, element-by-element operators,
/// constrained operators and preconditioners all implement it.
pub trait LinearOperator<B: Backend>: Send + Sync {
    fn nrows(&self) -> usize;
    fn ncols(&self) -> usize;
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()>;
    /// `y = M A M x + (I − M) x` with `M = diag(mask)` (1 on free, 0 on Dirichlet dofs) in one
    /// pass, where the operator can fuse the masking ([`crate::operator::Constrained`] asks first);
    /// `false`: not done, `y` untouched.
    fn apply_masked(&self, _backend: &B, _x: &B::Vector, _y: &mut B::Vector, _mask: &B::Vector) -> Result<bool> {
        Ok(false)
    }
    /// `y = A x` (with `mask`: the masked form of [`LinearOperator::apply_masked`]) that also
    /// writes the per-block partial sums of `x·y` to the start of `partials` in the same pass (CG's
    /// p·q without a vector pass of its own); returns how many, or `None`: not done, `y` untouched.
    fn apply_dot(&self, _backend: &B, _x: &B::Vector, _y: &mut B::Vector, _mask: Option<&B::Vector>, _partials: &mut B::Vector) -> Result<Option<usize>> {
        Ok(None)
    }
    /// `k` resident Jacobi-PCG iterations run by the operator itself, with the direction update and
    /// D⁻¹ fused into its own kernels (with `mask`: on the masked operator), where it can; `x` may
    /// then lag one update behind (`w.fused.pending`) until a call with `k = 0` brings it up to
    /// date. `false`: not done, nothing touched ([`Backend::pcg_iterations`] asks first).
    fn pcg_fused(&self, _backend: &B, _x: &mut B::Vector, _w: &mut PcgWork<'_, B>, _k: usize, _mask: Option<&B::Vector>) -> Result<bool> {
        Ok(false)
    }
}

/// The identity operator (no preconditioning).
pub struct Identity(pub usize);

impl<B: Backend> LinearOperator<B> for Identity {
    fn nrows(&self) -> usize {
        self.0
    }
    fn ncols(&self) -> usize {
        self.0
    }
    fn apply(&self, backend: &B, x: &B::Vector, y: &mut B::Vector) -> Result<()> {
        backend.copy(x, y)
    }
}

/// The state of a device-resident Jacobi-PCG ([`Backend::pcg_iterations`]): the CG vectors, the
/// inverted diagonal, and on the device `state = [ρ_even, ρ_odd, flag, ‖r‖² of each iteration of
/// the batch…, α of the last iteration]` and the per-block partial sums of the reductions.
pub struct PcgWork<'a, B: Backend> {
    pub p: B::Vector,
    pub q: B::Vector,
    pub r: B::Vector,
    pub dinv: &'a B::Vector,
    pub state: B::Vector,
    pub partials: B::Vector,
    /// Iterations done (its parity picks the ρ slot).
    pub iteration: usize,
    /// The state of an operator's fused PCG ([`LinearOperator::pcg_fused`]).
    pub fused: PcgFused<B::Vector>,
}

/// What an operator's fused PCG ([`LinearOperator::pcg_fused`]) keeps between batches of a solve.
pub struct PcgFused<V> {
    /// The operator was asked whether it fuses (once per solve) and answered `on`.
    pub checked: bool,
    pub on: bool,
    /// `x` lags one update behind.
    pub pending: bool,
    /// The second direction buffer (the previous direction and the new one in two vectors).
    pub p2: Option<V>,
    /// D⁻¹ per node code of the operator (checked against the solver's D⁻¹).
    pub invd: Option<V>,
}

impl<V> Default for PcgFused<V> {
    fn default() -> Self {
        PcgFused { checked: false, on: false, pending: false, p2: None, invd: None }
    }
}
