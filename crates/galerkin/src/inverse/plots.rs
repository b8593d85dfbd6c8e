//! The inversion's pictures and tables: chains as CSV, trace and histogram PNGs per parameter, and
//! observed against predicted pixel temperatures along the camera's middle row.
use super::chain::ChainState;
use super::config::ParameterConfig;
use crate::io::{plot_lines, write_atomic};
use crate::{Error, Result};
use std::path::Path;

/// `chain,sample,<parameters…>`: the recorded samples of every chain.
pub fn write_chains_csv(path: &Path, params: &[ParameterConfig], states: &[ChainState]) -> Result<()> {
    write_atomic(path, |w| {
        let e = |err| Error::io(path, err);
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        writeln!(w, "chain,sample,{}", names.join(",")).map_err(e)?;
        for (k, s) in states.iter().enumerate() {
            for (i, x) in s.samples.iter().enumerate() {
                let vals: Vec<String> = x.iter().map(|v| format!("{v:e}")).collect();
                writeln!(w, "{k},{i},{}", vals.join(",")).map_err(e)?;
            }
        }
        Ok(())
    })
}

/// Each chain's samples of one parameter against the sample index (and the truth, if known).
pub fn trace(path: &Path, name: &str, chains: &[Vec<f64>], truth: Option<f64>) -> Result<()> {
    let labels: Vec<String> = (0..chains.len()).map(|k| format!("chain {k}")).collect();
    let xs: Vec<Vec<f64>> = chains.iter().map(|c| (0..c.len()).map(|i| i as f64).collect()).collect();
    let longest = chains.iter().map(Vec::len).max().unwrap_or(0) as f64;
    let (tx, ty) = (vec![0.0, longest.max(1.0)], vec![truth.unwrap_or(f64::NAN); 2]);
    let mut series: Vec<(&str, &[f64], &[f64])> = labels.iter().zip(&xs).zip(chains).map(|((l, x), y)| (l.as_str(), x.as_slice(), y.as_slice())).collect();
    if truth.is_some() {
        series.push(("truth", &tx, &ty));
    }
    plot_lines(path, &format!("Trace of {name}"), "sample", name, &series, false, false)
}

/// A histogram (probability density) of all chains' samples of one parameter, as a step line.
pub fn histogram(path: &Path, name: &str, chains: &[Vec<f64>], truth: Option<f64>) -> Result<()> {
    let all: Vec<f64> = chains.iter().flatten().copied().collect();
    let (lo, hi) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let bins = ((all.len() as f64).sqrt().ceil() as usize).clamp(5, 60);
    let width = if hi > lo { (hi - lo) / bins as f64 } else { lo.abs().max(1e-12) * 1e-3 };
    let mut counts = vec![0usize; bins];
    for &x in &all {
        counts[(((x - lo) / width) as usize).min(bins - 1)] += 1;
    }
    let density = |c: usize| c as f64 / (all.len().max(1) as f64 * width);
    let (mut x, mut y) = (vec![lo], vec![0.0]);
    for (b, &c) in counts.iter().enumerate() {
        let (a, e) = (lo + b as f64 * width, lo + (b + 1) as f64 * width);
        x.extend([a, e]);
        y.extend([density(c), density(c)]);
    }
    x.push(lo + bins as f64 * width);
    y.push(0.0);
    let top = y.iter().copied().fold(0.0, f64::max);
    let (tx, ty) = (vec![truth.unwrap_or(f64::NAN); 2], vec![0.0, top]);
    let mut series: Vec<(&str, &[f64], &[f64])> = vec![("posterior", &x, &y)];
    if truth.is_some() {
        series.push(("truth", &tx, &ty));
    }
    plot_lines(path, &format!("Posterior of {name}"), name, "density", &series, false, false)
}

/// Observed and predicted temperatures of the camera's middle pixel row, frame by frame.
pub fn fit(path: &Path, times: &[f64], (pu, pv): (usize, usize), observed: &[f64], predicted: &[f64]) -> Result<()> {
    let j = pv / 2;
    let x: Vec<f64> = (0..pu).map(|i| i as f64).collect();
    let row = |img: &[f64], f: usize| -> Vec<f64> { (0..pu).map(|i| img[(f * pv + j) * pu + i]).collect() };
    let rows: Vec<(String, Vec<f64>)> = times
        .iter()
        .enumerate()
        .flat_map(|(f, t)| [(format!("observed, t = {t}"), row(observed, f)), (format!("posterior mean, t = {t}"), row(predicted, f))])
        .collect();
    let series: Vec<(&str, &[f64], &[f64])> = rows.iter().map(|(l, y)| (l.as_str(), x.as_slice(), y.as_slice())).collect();
    plot_lines(path, &format!("Camera row {j}: observed and predicted"), "pixel", "T", &series, false, false)
}
