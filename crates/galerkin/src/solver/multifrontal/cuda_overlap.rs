//! Factorization and forward sweep overlapped on two streams, for right-hand sides known when
//! the matrix is factorized ([`CudaMultifrontal::factor_and_solve_overlap`]).
//!
//! The factorization stays level by level, as in [`CudaMultifrontal::refactor`], on a stream of
//! its own (by default of the highest priority, so that its short latency-bound launches of the
//! levels near the root get multiprocessors as soon as blocks of the forward sweep retire). What the forward sweep of pass `q` of fused subtrees needs is
//! the factored fronts of its subtrees (levels up to the pass's top level, [`DevPass::top_step`])
//! and the forward contributions of pass `q − 1`. So as soon as the factorization's launches of
//! that level are issued, an event lets a second stream compute the pass's forward transfer map
//! `Gᵀ` (built from its fronts only) and run its forward sweep through the separator rows — the
//! same kernels as [`Factorization::solve_many`]'s default — while the factorization goes on with
//! the levels above, and a third stream compute the pass's backward map `[H K]ᵀ` (needed only by
//! the backward sweep; [`CudaMultifrontal::set_overlap_split_maps`]`(false)`: both maps in one
//! launch before the forward sweep, on the second stream). Once the factorization is checked, the
//! backend's stream waits for the others and solves backward only (the separator-row passes from
//! the root down). The round 9 fused
//! kernels (a block per subtree factorizing, mapping and sweeping) made the factorization serial
//! inside blocks; here each part keeps its own level-parallel launches, and only their order in
//! time changes.
use super::*;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use serde::Serialize;

/// One span of [`CudaMultifrontal::factor_and_solve_overlap_timeline`]: what ran on which stream
/// (1: the factorization's and the backend's, 2: the forward sweep's, 3: the backward maps'), from when to when (ms after the call's start, by events).
#[derive(Clone, Debug, Serialize)]
pub struct OverlapSpan {
    pub label: String,
    pub stream: u8,
    pub start_ms: f64,
    pub end_ms: f64,
}

/// Spans being recorded: label, stream, start and end events.
type Marks = Vec<(String, u8, Arc<CudaEvent>, Arc<CudaEvent>)>;

fn event(stream: &CudaStream, timing: bool) -> Result<Arc<CudaEvent>> {
    let flags = if timing { CUevent_flags::CU_EVENT_DEFAULT } else { CUevent_flags::CU_EVENT_DISABLE_TIMING };
    stream.record_event(Some(flags)).map(Arc::new).map_err(|e| cuda_error(format!("overlapped factorization: event: {e}")))
}

impl CudaMultifrontal {
    /// Whether [`Self::factor_and_solve_overlap`] overlaps the forward sweep with the
    /// factorization here: every fused pass has a separator-row layout and transfer-map kernels
    /// (else it factorizes, then solves).
    pub fn overlaps_forward(&self) -> bool {
        let no_large = self.levels.iter().all(|l| l.factor_large.nodes.is_empty());
        no_large && self.separators.as_ref().is_some_and(|s| s.passes.len() == self.passes.len()) && self.passes.iter().all(|p| p.map_nb <= 3)
    }

    /// Uploads the structure and element matrices (as [`Self::factor`]), then factorizes and
    /// solves `nrhs` right-hand sides known now ([`Self::factor_and_solve_overlap`]).
    pub fn factor_and_solve_overlap_new(be: &CudaBackend, sym: Arc<Symbolic>, element_matrices: &[f64], nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<CudaMultifrontal> {
        let mut mf = CudaMultifrontal::upload(be, sym, element_matrices)?;
        mf.factor_and_solve_overlap(be, nrhs, b, x)?;
        Ok(mf)
    }

    /// Factorizes again from the element matrices on the device (as [`Self::refactor`]) and solves
    /// `nrhs` right-hand sides (`b`, `x` column-major `n × nrhs`), each fused pass's transfer maps
    /// and forward sweep on a second stream as soon as the factorization levels below its roots
    /// are issued (see the module's text). The factorization and the maps stay for later solves.
    pub fn factor_and_solve_overlap(&mut self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<()> {
        self.overlapped(be, nrhs, b, x, None)
    }

    /// [`Self::factor_and_solve_overlap`] with an event around every step: when each
    /// factorization level, each pass's maps and forward sweep, and the backward solve ran.
    pub fn factor_and_solve_overlap_timeline(&mut self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector) -> Result<Vec<OverlapSpan>> {
        let start = event(&be.stream, true)?;
        let mut marks = Marks::new();
        self.overlapped(be, nrhs, b, x, Some(&mut marks))?;
        let ms = |e: &Arc<CudaEvent>| start.elapsed_ms(e).map(f64::from).map_err(|er| cuda_error(format!("overlapped factorization: elapsed time: {er}")));
        marks.iter().map(|(label, stream, a, z)| Ok(OverlapSpan { label: label.clone(), stream: *stream, start_ms: ms(a)?, end_ms: ms(z)? })).collect()
    }

    /// Whether [`Self::factor_and_solve_overlap`] computes each pass's forward map alone before
    /// its forward sweep and the backward map on a third stream (`true`, the default), or both
    /// maps in one launch before the forward sweep. For benchmarks and tests.
    pub fn set_overlap_split_maps(&mut self, split: bool) {
        self.split_maps = split;
    }

    /// Whether [`Self::factor_and_solve_overlap`] runs the factorization on a stream of the
    /// highest priority, the forward sweep on one of a middle priority and the backward maps on
    /// one of the lowest (`true`, the default), or all three at the lowest (the default priority).
    /// For benchmarks.
    pub fn set_overlap_priorities(&mut self, priorities: bool) {
        self.priorities = priorities;
    }

    /// The factorization's, forward sweep's and backward maps' streams, created on first use (again
    /// where the priorities changed).
    fn side_streams(&mut self, be: &CudaBackend) -> Result<[Arc<CudaStream>; 3]> {
        let err = |e: cudarc::driver::DriverError| cuda_error(format!("cannot create a stream: {e}"));
        if self.side.len() < 3 || self.side_prio != self.priorities {
            let ctx = be.stream.context();
            ctx.bind_to_thread().map_err(err)?;
            let (least, greatest) = cudarc::driver::result::stream::get_priority_range().map_err(err)?;
            let prio = |k: i32| if self.priorities { greatest + (least - greatest) * k / 2 } else { least };
            self.side = (0..3).map(|k| ctx.new_stream_with_priority(prio(k)).map_err(err)).collect::<Result<_>>()?;
            self.side_prio = self.priorities;
        }
        Ok([self.side[0].clone(), self.side[1].clone(), self.side[2].clone()])
    }

    fn overlapped(&mut self, be: &CudaBackend, nrhs: usize, b: &CudaVector, x: &mut CudaVector, mut marks: Option<&mut Marks>) -> Result<()> {
        self.check_solve(be, "multifrontal overlapped factor and solve", nrhs, b, x)?;
        if nrhs == 0 || !self.overlaps_forward() {
            self.refactor(be)?;
            return if nrhs == 0 { Ok(()) } else { self.solve_device(be, nrhs, b, x, ForwardDone::No) };
        }
        let [fs, side, third] = self.side_streams(be)?;
        let split = self.split_maps;
        let settle = || {
            let r = [&fs, &side, &third].map(|s| s.synchronize());
            r.into_iter().collect::<std::result::Result<Vec<()>, _>>().map(|_| ()).map_err(|e| cuda_error(format!("overlapped factorization: {e}")))
        };
        let join = |a: &CudaStream, b: &CudaStream| a.join(b).map_err(|e| cuda_error(format!("overlapped factorization: join: {e}")));
        let mut last = match marks.as_deref_mut() {
            Some(_) => Some(event(&be.stream, true)?),
            None => None,
        };
        self.reset_factor(be)?;
        if let (Some(m), Some(a)) = (marks.as_deref_mut(), last.take()) {
            let z = event(&be.stream, true)?;
            m.push(("element matrices copied".into(), 1, a, z.clone()));
            last = Some(z);
        }
        join(&fs, &be.stream)?;
        let maps = {
            let guard = self.maps_slot(be)?;
            ptr(be, &guard.as_ref().ok_or_else(|| Error::invalid("internal: transfer maps missing"))?.data)
        };
        let seps = self.separators.as_ref().ok_or_else(|| Error::invalid("internal: no separator layout"))?;
        let (leaf, sep) = {
            let mut guard = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
            let bufs = self.buffers(be, &mut guard, nrhs, Some(seps.rows), false)?;
            (ptr(be, &bufs.leaf), ptr(be, bufs.sep.as_ref().ok_or_else(|| Error::invalid("internal: separator rows missing"))?))
        };
        let (bp, xp) = (ptr(be, &b.data), ptr(be, &x.data));
        // After the factorization's launches of step i: every pass whose fronts are all factorized
        // by then gets its maps and forward sweep on the second stream (in pass order).
        let mut next = 0;
        let mut after = |i: usize| -> Result<()> {
            if let (Some(m), Some(a)) = (marks.as_deref_mut(), last.take()) {
                let z = event(&fs, true)?;
                m.push((format!("factor step {i}"), 1, a, z.clone()));
                last = Some(z);
            }
            if next >= self.passes.len() || self.passes[next].top_step > i {
                return Ok(());
            }
            let ready = event(&fs, false)?;
            let wait = |s: &CudaStream| s.wait(&ready).map_err(|e| cuda_error(format!("overlapped factorization: wait: {e}")));
            wait(&side)?;
            if split {
                wait(&third)?;
            }
            while next < self.passes.len() && self.passes[next].top_step <= i {
                let (p, ps) = (&self.passes[next], &seps.passes[next]);
                next += 1;
                if p.count == 0 {
                    continue;
                }
                let a = marks.as_ref().map(|_| event(&side, true)).transpose()?;
                self.setup_maps_pass(be, &side, p, maps, usize::from(split))?;
                let mid = marks.as_ref().map(|_| event(&side, true)).transpose()?;
                self.launch_separators(be, &side, ps, false, nrhs, self.n_word(false), bp, xp, sep, leaf, maps)?;
                if let (Some(m), Some(a), Some(mid)) = (marks.as_deref_mut(), a, mid) {
                    let z = event(&side, true)?;
                    m.push((format!("maps {}{}", if split { "G " } else { "" }, p.index), 2, a, mid.clone()));
                    m.push((format!("forward {}", p.index), 2, mid, z));
                }
                if split {
                    let a = marks.as_ref().map(|_| event(&third, true)).transpose()?;
                    self.setup_maps_pass(be, &third, p, maps, 2)?;
                    if let (Some(m), Some(a)) = (marks.as_deref_mut(), a) {
                        m.push((format!("maps HK {}", p.index), 3, a, event(&third, true)?));
                    }
                }
            }
            Ok(())
        };
        let launched = self.factor_launch(be, &fs, false, &mut after);
        let issued = next;
        // Whatever happens next, nothing returns while the second stream still reads b or writes x.
        let by_lib = match launched {
            Ok(v) if issued == self.passes.len() => v,
            Ok(_) => {
                settle()?;
                return Err(Error::invalid(format!("internal: {issued} of {} passes issued beside the factorization", self.passes.len())));
            }
            Err(e) => {
                let _ = settle();
                return Err(e);
            }
        };
        join(&be.stream, &fs)?;
        if let Err(e) = self.factor_check(be, &by_lib) {
            settle()?;
            return Err(e);
        }
        let t = marks.as_ref().map(|_| event(&be.stream, true)).transpose()?;
        join(&be.stream, &side)?;
        join(&be.stream, &third)?;
        if let Some(m) = self.maps.get_mut().unwrap_or_else(|p| p.into_inner()).as_mut() {
            m.fresh = true;
        }
        let j = marks.as_ref().map(|_| event(&be.stream, true)).transpose()?;
        self.solve_device(be, nrhs, b, x, ForwardDone::Separators)?;
        if let (Some(m), Some(t), Some(j)) = (marks, t, j) {
            let z = event(&be.stream, true)?;
            m.push(("factorization checked".into(), 1, last.unwrap_or_else(|| t.clone()), t));
            m.push(("backward".into(), 1, j, z));
        }
        Ok(())
    }
}
