//! The sampled solution: a CSV of (x, element, u_h, u) on a grid that includes both ends of every
//! sampled element (so a jump is two rows at one x), and a PNG that draws u_h element by element
//! (jumps show as gaps) over the exact solution when there is one.
use super::basis::Tabulation;
use super::norms::Exact;
use super::problem::DgProblem;
use crate::io::{plot_pieces, write_atomic};
use crate::{Error, Result};
use std::path::Path;

/// One sampled point.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub x: f64,
    pub element: usize,
    pub u_h: f64,
    pub u: Option<f64>,
}

/// `per_element` points on each of at most `max_elements` elements (evenly spread).
pub fn sample(p: &DgProblem, coef: &[f64], exact: Option<&Exact>, per_element: usize, max_elements: usize) -> Result<Vec<Sample>> {
    if coef.len() != p.ndofs() {
        return Err(Error::dim("DG solution to sample", p.ndofs(), coef.len()));
    }
    let tab: Tabulation = p.tabulation()?;
    let (n, b) = (p.mesh.len(), p.block());
    let stride = n.div_ceil(max_elements.max(1));
    let per = per_element.max(2);
    let mut out = Vec::with_capacity(n.div_ceil(stride) * per);
    for e in (0..n).step_by(stride) {
        let (x0, h) = (p.mesh.nodes()[e], p.mesh.h(e));
        for s in 0..per {
            let xi = -1.0 + 2.0 * s as f64 / (per - 1) as f64;
            let x = x0 + 0.5 * h * (xi + 1.0);
            let (u_h, _) = tab.evaluate(&coef[e * b..(e + 1) * b], xi);
            out.push(Sample { x, element: e, u_h, u: exact.map(|ex| ex.u.eval(x)) });
        }
    }
    Ok(out)
}

pub fn write_csv(path: &Path, samples: &[Sample]) -> Result<()> {
    write_atomic(path, |w| {
        let io = |e| Error::io(path, e);
        writeln!(w, "x,element,u_h,u_exact").map_err(io)?;
        for s in samples {
            match s.u {
                Some(u) => writeln!(w, "{:.17e},{},{:.17e},{:.17e}", s.x, s.element, s.u_h, u),
                None => writeln!(w, "{:.17e},{},{:.17e},", s.x, s.element, s.u_h),
            }
            .map_err(io)?;
        }
        Ok(())
    })
}

/// `value(sample)` element by element: one polyline per element, so jumps show as gaps.
fn per_element(samples: &[Sample], value: impl Fn(&Sample) -> f64) -> Vec<Vec<(f64, f64)>> {
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut last = usize::MAX;
    for s in samples {
        if s.element != last {
            pieces.push(Vec::new());
            last = s.element;
        }
        if let Some(piece) = pieces.last_mut() {
            piece.push((s.x, value(s)));
        }
    }
    pieces
}

/// u_h element by element over the exact solution; with an exact solution also `error_path`:
/// u_h − u element by element, where jumps far below the plot's scale become visible.
pub fn plot(path: &Path, error_path: &Path, title: &str, samples: &[Sample]) -> Result<Vec<std::path::PathBuf>> {
    let mut series = vec![("u_h (DG, per element)", per_element(samples, |s| s.u_h))];
    let exact = samples.iter().all(|s| s.u.is_some());
    if exact {
        let line: Vec<(f64, f64)> = samples.iter().filter_map(|s| s.u.map(|u| (s.x, u))).collect();
        series.insert(0, ("exact u", vec![line]));
    }
    plot_pieces(path, title, "x", "u", series)?;
    if !exact {
        return Ok(vec![path.to_path_buf()]);
    }
    let err = per_element(samples, |s| s.u_h - s.u.unwrap_or(f64::NAN));
    plot_pieces(error_path, &format!("{title}: error u_h - u (jumps at element ends)"), "x", "u_h - u", vec![("u_h - u", err)])?;
    Ok(vec![path.to_path_buf(), error_path.to_path_buf()])
}
