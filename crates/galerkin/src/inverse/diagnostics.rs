//! What a user reads from chains: mean, s.d., a central credible interval, the effective sample
//! size (Geyer's initial monotone sequence estimator) and split-R̂ (Gelman–Rubin on half-chains).
use serde::Serialize;

/// The posterior of one parameter from several chains.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub mean: f64,
    pub sd: f64,
    /// 2.5 % and 97.5 % quantiles.
    pub interval95: [f64; 2],
    pub ess: f64,
    pub rhat: f64,
}

impl Summary {
    /// Over `chains` (each a sequence of one parameter's samples).
    pub fn of(chains: &[Vec<f64>]) -> Summary {
        let all: Vec<f64> = chains.iter().flatten().copied().collect();
        let n = all.len().max(1) as f64;
        let mean = all.iter().sum::<f64>() / n;
        let sd = (all.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
        let mut sorted = all.clone();
        sorted.sort_by(f64::total_cmp);
        Summary {
            mean,
            sd,
            interval95: [quantile(&sorted, 0.025), quantile(&sorted, 0.975)],
            ess: chains.iter().map(|c| effective_sample_size(c)).sum(),
            rhat: split_rhat(chains),
        }
    }
}

/// The q-quantile of sorted values (linear interpolation).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let x = q * (sorted.len() - 1) as f64;
    let (i, f) = (x.floor() as usize, x - x.floor());
    sorted[i] + f * (sorted[(i + 1).min(sorted.len() - 1)] - sorted[i])
}

/// Effective sample size of one chain: n / (1 + 2 Σ ρ_k), the sum over Geyer's initial positive
/// and monotone sequence of paired autocorrelations.
pub fn effective_sample_size(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 4 {
        return n as f64;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
    if var == 0.0 {
        return n as f64;
    }
    let rho = |k: usize| (0..n - k).map(|i| (x[i] - mean) * (x[i + k] - mean)).sum::<f64>() / (n as f64 * var);
    let mut sum = 0.0;
    let mut prev = f64::INFINITY;
    let mut k = 0;
    while k + 1 < n {
        // Γ_m = ρ_{2m} + ρ_{2m+1}, positive and non-increasing.
        let pair = rho(k) + rho(k + 1);
        if pair <= 0.0 {
            break;
        }
        let pair = pair.min(prev);
        sum += pair;
        prev = pair;
        k += 2;
    }
    // Σ_{k≥0} Γ = ρ_0 + 2 Σ_{k≥1} ρ_k + … ⇒ τ = 2 Σ Γ − 1.
    let tau = (2.0 * sum - 1.0).max(1.0 / n as f64);
    n as f64 / tau
}

/// Split-R̂ over chains (each cut in two halves): near 1 when the chains agree.
pub fn split_rhat(chains: &[Vec<f64>]) -> f64 {
    let halves: Vec<&[f64]> = chains.iter().flat_map(|c| {
        let h = c.len() / 2;
        [&c[..h], &c[c.len() - h..]]
    }).filter(|h| h.len() >= 2).collect();
    let m = halves.len();
    if m < 2 {
        return f64::NAN;
    }
    let n = halves.iter().map(|h| h.len()).min().unwrap_or(0) as f64;
    let means: Vec<f64> = halves.iter().map(|h| h.iter().sum::<f64>() / h.len() as f64).collect();
    let grand = means.iter().sum::<f64>() / m as f64;
    let b = n / (m as f64 - 1.0) * means.iter().map(|x| (x - grand).powi(2)).sum::<f64>();
    let w = halves.iter().zip(&means).map(|(h, mu)| h.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (h.len() as f64 - 1.0)).sum::<f64>() / m as f64;
    if w == 0.0 {
        return if b == 0.0 { 1.0 } else { f64::INFINITY };
    }
    (((n - 1.0) / n * w + b / n) / w).sqrt()
}
