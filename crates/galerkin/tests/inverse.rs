//! MCMC (issue 13) against mathematics: a Gaussian likelihood linear in the parameter has an
//! analytic Gaussian posterior, which the chains must reproduce; the diagnostics give known values
//! on independent and AR(1) sequences; a killed and resumed chain equals an uninterrupted one bit
//! for bit; bad input is an error.
use galerkin::inverse::{effective_sample_size, split_rhat, Chain, ChainConfig, Prior, Rng, Summary};

fn config(seed: u64, burn_in: usize, samples: usize) -> ChainConfig {
    ChainConfig { burn_in, samples, target_acceptance: 0.44, seed, checkpoint_every: 0 }
}

/// y_i = a_i θ + ε_i, ε ~ N(0, σ²), prior N(μ0, σ0²): posterior N(μn, σn²) with
/// 1/σn² = 1/σ0² + Σa²/σ², μn = σn² (μ0/σ0² + Σ a y/σ²).
#[test]
fn linear_gaussian_posterior_is_reproduced() {
    let (mu0, s0, sigma, truth) = (1.0, 2.0, 0.5, 2.3);
    let mut rng = Rng::new(11);
    let a: Vec<f64> = (0..8).map(|i| 0.5 + 0.25 * i as f64).collect();
    let y: Vec<f64> = a.iter().map(|ai| ai * truth + sigma * rng.normal()).collect();
    let prec = 1.0 / (s0 * s0) + a.iter().map(|ai| ai * ai).sum::<f64>() / (sigma * sigma);
    let var_n = 1.0 / prec;
    let mu_n = var_n * (mu0 / (s0 * s0) + a.iter().zip(&y).map(|(ai, yi)| ai * yi).sum::<f64>() / (sigma * sigma));
    let priors = [Prior::Normal { mean: mu0, sd: s0 }];
    let mut chains = Vec::new();
    let mut rates = Vec::new();
    for seed in 0..4 {
        let mut loglik = |t: &[f64]| Ok(-0.5 * a.iter().zip(&y).map(|(ai, yi)| ((yi - ai * t[0]) / sigma).powi(2)).sum::<f64>());
        let mut chain = Chain::new(&priors, config(seed, 2000, 20000), Some(vec![mu0 + 3.0 * seed as f64]), &mut loglik).unwrap();
        chain.run(&mut loglik, None, |_| Ok(())).unwrap();
        rates.push(chain.acceptance_rate());
        chains.push(chain.state.samples.iter().map(|s| s[0]).collect::<Vec<f64>>());
    }
    let s = Summary::of(&chains);
    let mc_error = s.sd / s.ess.sqrt();
    eprintln!("posterior N({mu_n:.4}, {:.4}²); chains: mean {:.4}, sd {:.4}, ESS {:.0}, R̂ {:.4}, acceptance {rates:?}", var_n.sqrt(), s.mean, s.sd, s.ess, s.rhat);
    assert!((s.mean - mu_n).abs() < 4.0 * mc_error, "mean {} against {mu_n} (MC error {mc_error:e})", s.mean);
    assert!((s.sd / var_n.sqrt() - 1.0).abs() < 0.05, "sd {} against {}", s.sd, var_n.sqrt());
    assert!(s.rhat < 1.01, "R̂ {}", s.rhat);
    assert!(s.ess > 5000.0, "ESS {}", s.ess);
    assert!(rates.iter().all(|r| (0.3..0.6).contains(r)), "adapted acceptance rates {rates:?}");
    let z = 1.959964;
    assert!((s.interval95[0] - (mu_n - z * var_n.sqrt())).abs() < 0.05 * var_n.sqrt() * 4.0);
    assert!((s.interval95[1] - (mu_n + z * var_n.sqrt())).abs() < 0.05 * var_n.sqrt() * 4.0);
}

#[test]
fn ess_and_rhat_on_known_sequences() {
    let mut rng = Rng::new(5);
    let n = 40_000;
    let iid: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let ess = effective_sample_size(&iid);
    assert!((ess / n as f64 - 1.0).abs() < 0.1, "iid ESS {ess}");
    // AR(1), ρ = 0.9: ESS/n = (1 − ρ)/(1 + ρ).
    let rho = 0.9;
    let mut x = vec![0.0; n];
    for i in 1..n {
        x[i] = rho * x[i - 1] + (1.0f64 - rho * rho).sqrt() * rng.normal();
    }
    let want = n as f64 * (1.0 - rho) / (1.0 + rho);
    let ess = effective_sample_size(&x);
    assert!((ess / want - 1.0).abs() < 0.25, "AR(1) ESS {ess}, expected {want}");
    let chains: Vec<Vec<f64>> = (0..4).map(|_| (0..5000).map(|_| rng.normal()).collect()).collect();
    assert!((split_rhat(&chains) - 1.0).abs() < 0.01);
    let shifted: Vec<Vec<f64>> = chains.iter().enumerate().map(|(k, c)| c.iter().map(|v| v + k as f64).collect()).collect();
    assert!(split_rhat(&shifted) > 1.5);
}

/// A chain killed after a checkpoint and resumed from it ends exactly as an uninterrupted one.
#[test]
fn killed_and_resumed_chain_equals_the_uninterrupted_one() {
    let dir = std::env::temp_dir().join(format!("galerkin-mcmc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chain.json");
    let priors = [Prior::Uniform { lo: 0.0, hi: 12.7 }, Prior::Normal { mean: 0.0, sd: 1.0 }];
    let mut loglik = |t: &[f64]| Ok(-0.5 * ((t[0] - 3.175) / 0.3).powi(2) - 0.5 * (t[1] / 0.5).powi(2));
    let cfg = ChainConfig { checkpoint_every: 250, ..config(42, 300, 1500) };
    let mut whole = Chain::new(&priors, cfg.clone(), None, &mut loglik).unwrap();
    whole.run(&mut loglik, None, |_| Ok(())).unwrap();
    // The "killed" run: stopped by an error after 1000 iterations (last checkpoint at 1000).
    let mut first = Chain::new(&priors, cfg, None, &mut loglik).unwrap();
    let stop = first.run(&mut loglik, Some(&path), |c| if c.state.iteration == 1100 { Err(galerkin::Error::invalid("killed")) } else { Ok(()) });
    assert!(stop.is_err());
    let state = Chain::load(&path).unwrap();
    assert_eq!(state.iteration, 1000);
    let mut resumed = Chain::resume(&priors, state).unwrap();
    resumed.run(&mut loglik, Some(&path), |_| Ok(())).unwrap();
    let first_diff = resumed.state.samples.iter().zip(&whole.state.samples).position(|(a, b)| a != b);
    assert!(resumed.state == whole.state, "the resumed chain differs from the uninterrupted one (first differing sample: {first_diff:?})");
    let mean = whole.state.samples.iter().map(|s| s[0]).sum::<f64>() / 1500.0;
    assert!((mean - 3.175).abs() < 0.1, "mean {mean}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_an_error() {
    let mut loglik = |_: &[f64]| Ok(0.0);
    let bad_prior = [Prior::Uniform { lo: 1.0, hi: 1.0 }];
    assert!(Chain::new(&bad_prior, config(0, 0, 10), None, &mut loglik).unwrap_err().to_string().contains("lo < hi"));
    let zero_sd = [Prior::Normal { mean: 0.0, sd: 0.0 }];
    assert!(Chain::new(&zero_sd, config(0, 0, 10), None, &mut loglik).is_err());
    let ok = [Prior::Uniform { lo: 0.0, hi: 1.0 }];
    assert!(Chain::new(&ok, config(0, 0, 0), None, &mut loglik).is_err(), "no samples");
    assert!(Chain::new(&ok, config(0, 0, 10), Some(vec![2.0]), &mut loglik).unwrap_err().to_string().contains("outside the prior"));
    let mut nan = |_: &[f64]| Ok(f64::NAN);
    assert!(Chain::new(&ok, config(0, 0, 10), None, &mut nan).unwrap_err().to_string().contains("log likelihood"));
    assert!(Chain::load(std::path::Path::new("/nonexistent/chain.json")).is_err());
}
