//! Newton's globalisation for large load steps (issue 17: the 10⁷ benchmark stalled in one load
//! step): a load step too large for Newton is halved and retried from the last converged state and
//! the run converges to the solution of a finely stepped run; the retry's first direction is the
//! abandoned attempt's, rescaled; a stall (damped steps along indefinite directions) is detected
//! before the iteration limit; with cutbacks off the same runs fail naming the step; the
//! Eisenstat–Walker forcing does not oversolve the last step.
mod hyper_common;
use galerkin::backend::Cpu;
use galerkin::hyperelastic::run::{cpu_system, prepare_text, solve_on};
use galerkin::hyperelastic::{Forcing, LoadStepReport, EW_START};

const BEAM_TAIL: &str = r#"
[loads]
steps = STEPS
cutbacks = CUTBACKS
[newton]
rtol = 1e-10
atol = 1e-14
max_iter = MAXIT
forcing = "eisenstat-walker"
[solver]
method = "cg"
rtol = 1e-12
max_iter = 20000
"#;

fn beam(load: f64, steps: usize, cutbacks: usize, max_iter: usize) -> String {
    hyper_common::beam_head("neo-hookean", load)
        + &BEAM_TAIL
            .replace("STEPS", &steps.to_string())
            .replace("CUTBACKS", &cutbacks.to_string())
            .replace("MAXIT", &max_iter.to_string())
}

fn run(text: &str) -> galerkin::Result<(Vec<f64>, Vec<LoadStepReport>)> {
    let (f, mut prep) = prepare_text(text)?;
    let mut sys = cpu_system(&prep)?;
    let (u, reps, _) = solve_on(&Cpu, &mut sys, &mut prep, f.loads.steps)?;
    Ok((u, reps))
}

/// Kelley's guard: near the Newton target the forcing is at least 0.5 target/‖R‖ (capped at
/// η_max), far from it the Eisenstat–Walker value is kept, and the fixed forcing is untouched.
#[test]
fn forcing_does_not_oversolve_the_last_step() {
    let ew = Forcing::EisenstatWalker;
    // ‖R‖ fell 1000×: choice 2 asks 0.9·10⁻⁶, but ‖R‖ = 10⁻⁹ needs only a 20× drop to reach 10⁻¹⁰/2.
    assert!((ew.eta(EW_START, 1e-8, 1e-9, Some((1e-3, 1e-6))) - 0.9e-6).abs() < 1e-18);
    assert!((ew.eta_toward(EW_START, 1e-8, 1e-9, Some((1e-3, 1e-6)), 1e-10) - 0.05).abs() < 1e-15);
    assert_eq!(ew.eta_toward(EW_START, 1e-8, 1e-11, Some((1e-3, 1e-6)), 1e-10), 0.9);
    assert_eq!(ew.eta_toward(EW_START, 1e-8, 1.0, Some((0.3, 2.0)), 1e-10), ew.eta(EW_START, 1e-8, 1.0, Some((0.3, 2.0))));
    assert_eq!(Forcing::Fixed.eta_toward(EW_START, 1e-8, 1e-9, Some((1e-3, 1e-6)), 1e-10), 1e-8);
}

/// A load too large for one step: the smallest of a doubling series of loads that one step cannot
/// carry within the iteration limit without cutbacks (the error names the step) is carried with
/// them: the step is halved (the abandoned attempt reported with its reason), the retry starts from
/// the abandoned attempt's first direction rescaled (no linear solve), every converged step meets
/// the tolerance, and the displacement equals that of a run in sixteen nominal steps.
#[test]
fn a_load_step_too_large_is_cut_back_and_converges() {
    let max_iter = 12;
    let load = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6]
        .into_iter()
        .find(|&load| match run(&beam(load, 1, 0, max_iter)) {
            Ok(_) => false,
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains("Newton did not converge") && e.contains("at load step 1 of 1"), "{e}");
                true
            }
        })
        .expect("one step carried every load up to 1.6 without cutbacks: the test has no large step to cut back");
    eprintln!("load {load}: one step fails without cutbacks");
    let (u, reps) = run(&beam(load, 1, 6, max_iter)).unwrap();
    let abandoned = &reps[0].abandoned;
    assert!(!abandoned.is_empty() && abandoned[0].load_factor == 1.0, "{abandoned:?}");
    eprintln!("{} steps, first abandoned: {}", reps.len(), abandoned[0].reason);
    assert!(abandoned[0].reason.contains("iterations") || abandoned[0].reason.contains("stalled") || abandoned[0].reason.contains("J ≤ 0"), "{}", abandoned[0].reason);
    assert!(reps.len() >= 2 && reps[0].load_factor < 1.0 && reps.last().unwrap().load_factor == 1.0);
    assert!(reps[0].iterations[0].reused && reps[0].iterations[0].linear_iterations == 0, "{:?}", reps[0].iterations[0]);
    for r in &reps {
        let res = &r.residuals;
        assert!(res.last().unwrap() / res[0] <= 1e-10, "step {} not converged: {res:?}", r.step);
    }
    let (u16, reps16) = run(&beam(load, 16, 6, 25)).unwrap();
    assert!(reps16.len() >= 16);
    let d = u.iter().zip(&u16).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let big = u16.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(big > 0.1 && d <= 1e-7 * big, "cut-back run differs from the 16-step run by {d:.2e} (max {big:.2e})");
}

/// A stall: at 3.2 (64 times the load above) the one-step attempt overshoots into states where K is
/// indefinite and the line search takes steps shorter than 1/16 — within the iteration limit of 25.
/// Without cutbacks the run fails naming the stall; with them the stalled attempt is abandoned,
/// the retry reuses its first direction, and the run converges to the 16-step run's displacement.
#[test]
fn a_stalled_load_step_is_cut_back_and_converges() {
    let load = 3.2;
    let e = run(&beam(load, 1, 0, 25)).unwrap_err().to_string();
    assert!(e.contains("at load step 1 of 1") && e.contains("stalled"), "{e}");
    let (u, reps) = run(&beam(load, 1, 6, 25)).unwrap();
    let abandoned = &reps[0].abandoned;
    assert!(!abandoned.is_empty() && abandoned[0].reason.contains("stalled"), "{abandoned:?}");
    assert!(abandoned[0].iterations.len() < 25, "the stall should be found before the iteration limit");
    assert!(reps[0].iterations[0].reused, "{:?}", reps[0].iterations[0]);
    for r in &reps {
        let res = &r.residuals;
        assert!(res.last().unwrap() / res[0] <= 1e-10, "step {} not converged: {res:?}", r.step);
    }
    let (u16, _) = run(&beam(load, 16, 6, 25)).unwrap();
    let d = u.iter().zip(&u16).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let big = u16.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(big > 1.0 && d <= 1e-7 * big, "cut-back run differs from the 16-step run by {d:.2e} (max {big:.2e})");
}
