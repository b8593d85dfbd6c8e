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

/// Every cutback tries a smaller load factor than the attempt it follows: an abandoned attempt is
/// never repeated as it was (after easy steps the grid could cap the next increment so that one
/// halving of the nominal increment gave the same load factor again).
fn assert_cuts_shrink(reps: &[LoadStepReport]) {
    for r in reps {
        let lfs: Vec<f64> = r.abandoned.iter().map(|a| a.load_factor).chain([r.load_factor]).collect();
        assert!(lfs.windows(2).all(|w| w[1] < w[0]), "step {}: attempts at load factors {lfs:?}", r.step);
    }
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
    assert_cuts_shrink(&reps);
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

/// The beam with `path` (keys of `[loads]`) added to its load table.
fn beam_path(load: f64, steps: usize, path: &str) -> String {
    beam(load, steps, 6, 25).replace("cutbacks = 6\n", &format!("cutbacks = 6\n{path}\n"))
}

/// Newton iterations of a run, its abandoned attempts included, and its cutbacks.
fn counts(reps: &[LoadStepReport]) -> (usize, usize) {
    (reps.iter().map(|r| r.all_iterations().count()).sum(), reps.iter().map(|r| r.abandoned.len()).sum())
}

fn max_diff(u: &[f64], v: &[f64]) -> (f64, f64) {
    let d = u.iter().zip(v).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    (d, v.iter().fold(0.0f64, |m, x| m.max(x.abs())))
}

/// The secant predictor on sixteen nominal steps of the stalled beam's load: every step after the
/// first starts on the chord through the last two converged states, which is closer to the new
/// equilibrium than the last state (its first ‖R‖ is below the plain start's Δλ‖f‖ at every step
/// where the path is smooth), so the run takes fewer Newton iterations and reaches the same
/// displacement; the tolerance of the last step is unchanged.
#[test]
fn the_secant_predictor_saves_newton_iterations_on_a_stepped_path() {
    let (u0, r0) = run(&beam_path(3.2, 16, "")).unwrap();
    let (u1, r1) = run(&beam_path(3.2, 16, "predictor = \"secant\"")).unwrap();
    let (n0, n1) = (counts(&r0).0, counts(&r1).0);
    eprintln!("16 steps: {n0} Newton iterations from the last state, {n1} from the secant");
    assert!(n1 < n0, "secant predictor: {n1} Newton iterations against {n0} without");
    let closer = r0.iter().zip(&r1).skip(1).filter(|(a, b)| b.residuals[0] < a.residuals[0]).count();
    assert!(closer >= r0.len() / 2, "the predicted start had the smaller ‖R‖ in only {closer} of {} steps", r0.len() - 1);
    // The stopping test stays relative to the plain start's ‖R‖ (the run without the predictor's).
    let plain = r0.last().unwrap().residuals[0];
    assert!(*r1.last().unwrap().residuals.last().unwrap() <= 1e-10 * plain * (1.0 + 1e-6));
    let (d, big) = max_diff(&u1, &u0);
    assert!(big > 1.0 && d <= 1e-7 * big, "secant run differs by {d:.2e} (max {big:.2e})");
}

/// Intermediate steps stopped early (`step_rtol = 1e-2`) on the stalled beam (3.2 in one nominal
/// step, the default path abandons the full load and converges λ = 0.5 then 1): the same load is
/// carried in fewer Newton and CG iterations (21 and 446 against 23 and 572 when written), to the
/// 16-step run's displacement, the last step still converged to 10⁻¹⁰; the intermediate step
/// stopped at ≤ 10⁻² of its first ‖R‖ but not at the final tolerance.
#[test]
fn intermediate_steps_stopped_early_save_iterations_on_the_stalled_beam() {
    let (_, r_def) = run(&beam_path(3.2, 1, "")).unwrap();
    let (n_def, cut_def) = counts(&r_def);
    assert_cuts_shrink(&r_def);
    assert!(cut_def > 0, "the default path should abandon the full load (the case this key is for)");
    let (u, reps) = run(&beam_path(3.2, 1, "step_rtol = 1e-2")).unwrap();
    let (n, _) = counts(&reps);
    let cg = |r: &[LoadStepReport]| r.iter().flat_map(|s| s.all_iterations()).map(|i| i.linear_iterations).sum::<usize>();
    eprintln!("default path: {n_def} Newton / {} CG iterations; step_rtol = 1e-2: {n} / {}", cg(&r_def), cg(&reps));
    assert!(n < n_def && cg(&reps) < cg(&r_def), "step_rtol: {n} / {} against {n_def} / {}", cg(&reps), cg(&r_def));
    let last = reps.last().unwrap();
    assert_eq!(last.load_factor, 1.0);
    assert!(last.residuals.last().unwrap() / last.residuals[0] <= 1e-10);
    let loose = reps[..reps.len() - 1].iter().filter(|r| r.residuals.last().unwrap() / r.residuals[0] > 1e-10).count();
    for r in &reps[..reps.len() - 1] {
        assert!(r.residuals.last().unwrap() / r.residuals[0] <= 1e-2, "step {}: {:?}", r.step, r.residuals);
    }
    assert!(loose > 0, "no intermediate step stopped before the final tolerance");
    let (u16, _) = run(&beam(3.2, 16, 6, 25)).unwrap();
    let (d, big) = max_diff(&u, &u16);
    assert!(big > 1.0 && d <= 1e-7 * big, "step_rtol run differs from the 16-step run by {d:.2e} (max {big:.2e})");
}

/// `first_halvings` starts at a fraction of the nominal step and the increment doubles after each
/// converged step (λ = 0.25, 0.75, 1); with `grow_iterations = 1` no step is that easy and the
/// increment is kept (0.25, 0.5, 0.75, 1); both reach the 16-step run's displacement. Bad values
/// of the load-path keys are refused naming the key.
#[test]
fn the_first_increment_and_its_growth_follow_the_keys() {
    let lfs = |r: &[LoadStepReport]| r.iter().map(|s| s.load_factor).collect::<Vec<_>>();
    let (u1, r1) = run(&beam_path(3.2, 1, "first_halvings = 2")).unwrap();
    assert_eq!(lfs(&r1), [0.25, 0.75, 1.0]);
    let (u2, r2) = run(&beam_path(3.2, 1, "first_halvings = 2\ngrow_iterations = 1")).unwrap();
    assert_eq!(lfs(&r2), [0.25, 0.5, 0.75, 1.0]);
    let (u16, _) = run(&beam(3.2, 16, 6, 25)).unwrap();
    for u in [&u1, &u2] {
        let (d, big) = max_diff(u, &u16);
        assert!(big > 1.0 && d <= 1e-7 * big, "differs from the 16-step run by {d:.2e} (max {big:.2e})");
    }
    for bad in ["first_halvings = 7", "grow_iterations = 0", "step_rtol = 1.5", "step_rtol = -1e-3"] {
        let e = match prepare_text(&beam_path(3.2, 1, bad)) {
            Ok(_) => panic!("`{bad}` accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(bad.split(' ').next().unwrap()), "`{bad}`: {e}");
    }
    let e = match prepare_text(&beam(3.2, 1, 6, 25).replace("max_iter = 25", "max_iter = 25\nmax_rise = 1.0")) {
        Ok(_) => panic!("max_rise = 1 accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("max_rise"), "{e}");
}

/// Converged steps between consecutive abandoned attempts that are not part of one cutback
/// chain: "double, fail, halve, double, fail" shows as a 1.
fn successes_between_cutbacks(reps: &[LoadStepReport]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut run = 0;
    for r in reps {
        if !r.abandoned.is_empty() && run > 0 {
            out.push(run);
        }
        run = if r.abandoned.is_empty() { run + 1 } else { 1 };
    }
    out
}

/// Growth with memory (`regrow_after = 2`): the beam at load 1.6 in one nominal step with at most
/// 8 Newton iterations per attempt and `step_rtol = 1e-2` is cut back to 1/64, and the default path
/// then doubles to 1/32 after every converged 1/64 step and abandons it again (λ = 0.046875 from
/// 0.015625, 0.0625 from 0.03125, 0.078125 from 0.046875 when written: double, fail, halve, double,
/// fail — the 10⁷ benchmark's pattern at 1/16 and 1/8). With the key, a cut increment grows only
/// after two converged steps: fewer abandoned attempts and fewer Newton and CG iterations (130 /
/// 3045 against 114 / 2699 when written), the same displacement as the 16-step run.
#[test]
fn growth_waits_after_a_cutback_with_regrow_after() {
    let path = "step_rtol = 1e-2";
    let beam8 = |extra: &str| beam_path(1.6, 1, &format!("{path}\n{extra}")).replace("max_iter = 25", "max_iter = 8");
    let (_, r1) = run(&beam8("")).unwrap();
    let (u2, r2) = run(&beam8("regrow_after = 2")).unwrap();
    assert_cuts_shrink(&r1);
    assert_cuts_shrink(&r2);
    let (s1, s2) = (successes_between_cutbacks(&r1), successes_between_cutbacks(&r2));
    let cg = |r: &[LoadStepReport]| r.iter().flat_map(|s| s.all_iterations()).map(|i| i.linear_iterations).sum::<usize>();
    let ((n1, c1), (n2, c2)) = (counts(&r1), counts(&r2));
    eprintln!("default: {n1} Newton / {} CG, {c1} abandoned, successes between cutbacks {s1:?}; regrow_after = 2: {n2} / {}, {c2}, {s2:?}", cg(&r1), cg(&r2));
    // The default path repeats the failed doubling right after one converged step, twice at least.
    assert!(s1.iter().filter(|&&k| k == 1).count() >= 2, "default path: no repeated double-and-fail ({s1:?}); the test lost its case");
    // With the key no cutback follows fewer than two converged steps.
    assert!(s2.iter().all(|&k| k >= 2), "regrow_after = 2: {s2:?}");
    assert!(c2 < c1 && n2 < n1 && cg(&r2) < cg(&r1), "regrow_after = 2: {n2} Newton / {c2} abandoned against {n1} / {c1}");
    let last = r2.last().unwrap();
    assert!(last.load_factor == 1.0 && last.residuals.last().unwrap() / last.residuals[0] <= 1e-10);
    let (u16, _) = run(&beam(1.6, 16, 6, 25)).unwrap();
    let (d, big) = max_diff(&u2, &u16);
    assert!(big > 0.1 && d <= 1e-7 * big, "regrow_after run differs from the 16-step run by {d:.2e} (max {big:.2e})");
    let e = match prepare_text(&beam8("regrow_after = 0")) {
        Ok(_) => panic!("regrow_after = 0 accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("regrow_after"), "{e}");
}
