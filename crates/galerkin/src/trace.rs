//! Step times on stderr for finding where a run's set-up goes, finer than the report's phases:
//! `GALERKIN_TRACE=1` prints one line per traced step (seconds since the first trace, the step,
//! its seconds). Off by default: a traced step then costs one atomic load.
use std::sync::OnceLock;
use std::time::Instant;

fn clock() -> Option<&'static Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    START.get_or_init(|| matches!(std::env::var("GALERKIN_TRACE").as_deref(), Ok("1" | "on")).then(Instant::now)).as_ref()
}

/// Whether steps are traced.
pub fn enabled() -> bool {
    clock().is_some()
}

/// Prints `what` took `secs` seconds (when tracing).
pub fn note(what: &str, secs: f64) {
    if let Some(t0) = clock() {
        eprintln!("[trace {:9.4}] {what}: {secs:.4} s", t0.elapsed().as_secs_f64());
    }
}

/// A step timed from its creation to its drop.
pub struct Span {
    what: Option<(String, Instant)>,
}

/// Starts timing `what` (the name is built only when tracing).
pub fn span(what: impl FnOnce() -> String) -> Span {
    Span { what: enabled().then(|| (what(), Instant::now())) }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((what, t)) = self.what.take() {
            note(&what, t.elapsed().as_secs_f64());
        }
    }
}
