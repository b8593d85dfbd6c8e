//! A row-major solve's separator rows in `x` itself ([`CudaMultifrontal::set_sep_in_x`], round 26).
//!
//! The separator layout ([`crate::solver::multifrontal::separators`]) gives the rows the upper
//! passes eliminate compact rows of a buffer `sep`, so that a column-major solve's passes move
//! whole lines instead of 24-byte pieces of each column. A row-major `x` holds each dof's columns
//! as one line already: with the rows at their dofs ([`SeparatorPlan::at_dofs`]) `x` can be that
//! buffer. The bottom forward pass then copies `b` at the separator rows into `x` (as it copied
//! them into `sep`), the upper passes overwrite them with `x` in place, and the bottom backward
//! pass reads them there — and no longer stores them: at 2^20 cubic elements and 256 columns that
//! is 0.2 GB of its 4.8 GB (the owned rows' `x`, each separator row once) and its owned rows'
//! dependent index loads (`own_ptr`, then `own_loc`/`own_dof` after the product, what round 25's
//! `-bpf` prefetches). The same products in the same order: bit-identical to the compact layout.
//!
//! [`SeparatorPlan::at_dofs`]: crate::solver::multifrontal::separators::SeparatorPlan::at_dofs
use super::sep::{DevSeparators, SepLayout};
use super::{device_plan, CudaMultifrontal};
use crate::backend::cuda::CudaBackend;
use crate::solver::multifrontal::maps::MapLayout;
use crate::Result;
use std::sync::OnceLock;

impl CudaMultifrontal {
    /// Makes row-major solves keep the separator rows in `x` (off by default; out of place at 2^20
    /// cubic elements and 256 columns on the H100 3.244–3.279 ms against the compact rows'
    /// 3.287–3.303, BENCHMARKS.md stop 55; in-place solves keep them there anyway while
    /// [`Self::set_sep_bottom_adds`] is on). Column-major solves, the overlapped factorization and
    /// the chained forward pass keep the compact rows.
    pub fn set_sep_in_x(&mut self, on: bool) {
        self.sep_in_x = on;
    }

    /// Whether row-major solves keep the separator rows in `x` ([`Self::set_sep_in_x`]).
    pub fn sep_in_x(&self) -> bool {
        self.sep_in_x
    }

    /// Whether row-major solves run with the separator rows in `x` now: on, and this factorization
    /// has a separator layout (then it has one at dofs too; its tables are built here if not yet).
    pub fn sep_in_x_applies(&self, be: &CudaBackend) -> Result<bool> {
        Ok(self.sep_in_x && self.separators.is_some() && self.separators_at_dofs(be)?.is_some())
    }

    /// The separator layout at dofs, built by the first solve that asks for it (from the plan the
    /// factorization built, [`device_plan`]) and kept; `None` where the layout does not apply.
    pub(super) fn separators_at_dofs(&self, be: &CudaBackend) -> Result<Option<&DevSeparators>> {
        self.layout_once(be, &self.separators_at_dofs, SepLayout::AtDofs)
    }

    /// The layout `kind` in `cell`, built from the factorization's plan by the first call and kept.
    fn layout_once<'a>(&'a self, be: &CudaBackend, cell: &'a OnceLock<Option<DevSeparators>>, kind: SepLayout) -> Result<Option<&'a DevSeparators>> {
        if let Some(s) = cell.get() {
            return Ok(s.as_ref());
        }
        let plan = device_plan(&self.sym)?;
        let built = DevSeparators::new(be, &self.sym, &plan, &MapLayout::new(&plan), kind)?;
        // Another thread may have built the same tables first: either copy serves.
        let _ = cell.set(built);
        Ok(cell.get().and_then(Option::as_ref))
    }

    /// Makes in-place row-major solves ([`Self::solve_many_rows_in_place`]) keep the separator rows
    /// in `x` (as [`Self::set_sep_in_x`]) and add the contributions of the forward passes below
    /// the walk (passes 0 and 1 at 2^20 cubic elements) into `x` at their dofs by atomics
    /// (`mf_mapssbtpza_forward`), where `b` holds those rows, instead of writing them to the
    /// contribution buffer for the passes above to read ([`SeparatorPlan::at_dofs_adds`]). On by
    /// default since stop 55: at 2^20 cubic elements and 256 columns the solve moves 0.86 GB less
    /// (`solve_bytes`: 8.62 → 7.76 GB) and took 2.79 ms against the out-of-place 3.29 on the H100
    /// (BENCHMARKS.md, stop 55). A row's sum takes its adds in the order they land: equal to the
    /// out-of-place solve to round-off, not bit-reproducible run to run; off, the in-place solve is
    /// the out-of-place one bit for bit. Out-of-place solves ignore it.
    ///
    /// [`SeparatorPlan::at_dofs_adds`]: crate::solver::multifrontal::separators::SeparatorPlan::at_dofs_adds
    pub fn set_sep_bottom_adds(&mut self, on: bool) {
        self.sep_bottom_adds = on;
    }

    /// Whether in-place solves add the contributions of the passes below the walk into `x` ([`Self::set_sep_bottom_adds`]).
    pub fn sep_bottom_adds(&self) -> bool {
        self.sep_bottom_adds
    }

    /// Whether an in-place row-major solve on this factorization runs with the adds now: asked
    /// for on a device with the bulk copies of the adding kernel (sm_90 and up), a separator layout,
    /// the launches in place ([`Self::in_place_runs`]), and an adds layout here (rows at dofs, the
    /// passes below the walk with roots of at most 16 Schur rows, the tensor-core forward's).
    pub fn bottom_adds_run(&self, be: &CudaBackend) -> Result<bool> {
        Ok(self.adds_apply(be) && self.separators.is_some() && self.in_place_runs() && self.separators_adds(be)?.is_some())
    }

    /// The adds asked for ([`Self::set_sep_bottom_adds`]) on sm_90 and up.
    pub(super) fn adds_apply(&self, be: &CudaBackend) -> bool {
        self.sep_bottom_adds && be.device().compute_capability.0 >= 9
    }

    /// The adds layout, built by the first solve that asks for it and kept.
    pub(super) fn separators_adds(&self, be: &CudaBackend) -> Result<Option<&DevSeparators>> {
        self.layout_once(be, &self.separators_adds, SepLayout::Adds)
    }
}
