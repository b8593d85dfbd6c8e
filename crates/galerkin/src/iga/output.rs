//! Outputs of an IGA run, each written whole or not at all: the 1D solution sampled to CSV and a
//! PNG plot (with the exact solution when known), the 2D solution sampled on a grid of quadrilaterals
//! to VTU.
use super::function::{Spline1d, Spline2d};
use crate::expr::Expr;
use crate::io::{self, VtuWriter};
use crate::mesh::{generate, CellType};
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// `samples` equally spaced points of `[x0, x1]` (both ends included).
fn points(u: &Spline1d, samples: usize) -> Vec<f64> {
    let (a, b) = u.space.knots().domain();
    let n = samples.max(2);
    (0..n).map(|i| if i + 1 == n { b } else { a + (b - a) * i as f64 / (n - 1) as f64 }).collect()
}

/// CSV columns `x,u_h,du_h` (and `u,error` with an exact solution).
pub fn write_csv_1d(path: &Path, u: &Spline1d, exact: Option<&Expr>, samples: usize) -> Result<()> {
    let xs = points(u, samples);
    io::write_atomic(path, |w: &mut dyn Write| {
        let head = if exact.is_some() { "x,u_h,du_h,u,error\n" } else { "x,u_h,du_h\n" };
        w.write_all(head.as_bytes()).map_err(|e| Error::io(path, e))?;
        for &x in &xs {
            let (v, dv) = u.eval(x);
            let line = match exact {
                Some(ex) => {
                    let ue = ex.eval([x, 0.0, 0.0], 0.0);
                    format!("{x:.17e},{v:.17e},{dv:.17e},{ue:.17e},{:.6e}\n", v - ue)
                }
                None => format!("{x:.17e},{v:.17e},{dv:.17e}\n"),
            };
            w.write_all(line.as_bytes()).map_err(|e| Error::io(path, e))?;
        }
        Ok(())
    })
}

/// PNG of `u_h` (and the exact solution) against x.
pub fn plot_1d(path: &Path, title: &str, u: &Spline1d, exact: Option<&Expr>, samples: usize) -> Result<()> {
    let xs = points(u, samples.min(4000));
    let uh: Vec<f64> = xs.iter().map(|&x| u.eval(x).0).collect();
    let ue: Vec<f64> = exact.map(|ex| xs.iter().map(|&x| ex.eval([x, 0.0, 0.0], 0.0)).collect()).unwrap_or_default();
    let mut series: Vec<(&str, &[f64], &[f64])> = vec![("u_h (B-spline)", &xs, &uh)];
    if exact.is_some() {
        series.push(("exact", &xs, &ue));
    }
    io::plot_lines(path, title, "x", "u", &series, false, false)
}

/// VTU of `u_h` (and the exact solution and error) at the vertices of an `nx × ny` grid of
/// quadrilaterals over the rectangle.
pub fn write_vtu_2d(path: &Path, u: &Spline2d, exact: Option<&Expr>, nx: usize, ny: usize) -> Result<()> {
    let (x0, x1) = u.space.x.knots().domain();
    let (y0, y1) = u.space.y.knots().domain();
    let mesh = generate::rectangle(nx, ny, [x0, y0], [x1, y1], CellType::Quadrilateral)?;
    let uh: Vec<f64> = mesh.coords.iter().map(|c| u.eval(c[0], c[1]).0).collect();
    let grad: Vec<f64> = mesh.coords.iter().flat_map(|c| { let (_, gx, gy) = u.eval(c[0], c[1]); [gx, gy] }).collect();
    let ue: Vec<f64> = exact.map(|ex| mesh.coords.iter().map(|c| ex.eval([c[0], c[1], 0.0], 0.0)).collect()).unwrap_or_default();
    let err: Vec<f64> = ue.iter().zip(&uh).map(|(e, h)| h - e).collect();
    let mut w = VtuWriter::new(&mesh);
    w.point_scalar("u_h", &uh)?.point_vector("grad_u_h", 2, &grad)?;
    if exact.is_some() {
        w.point_scalar("u_exact", &ue)?.point_scalar("error", &err)?;
    }
    w.write(path)
}
