//! PNG line plots: residual histories (semilog) and convergence studies (log–log with fitted
//! slopes), both thin wrappers over [`plot_lines`].
//!
//! Rendering uses plotters into an in-memory RGB buffer with an embedded DejaVu Sans font (CI
//! machines have no system fonts), then the `png` crate encodes it through [`write_atomic`].
//!
//! Data policy: non-finite points are skipped, and so are non-positive coordinates on a log axis
//! (a residual of exactly 0 after convergence is not an error). A plot with no point left at all
//! is an [`Error::Invalid`], and no file is written.
use super::atomic::write_atomic;
use crate::{Error, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// Pixel size (width, height) of every plot.
pub const PLOT_SIZE: (u32, u32) = (960, 640);

static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Register the embedded font as plotters' "sans-serif" exactly once per process.
fn ensure_font() -> Result<()> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font("sans-serif", FontStyle::Normal, DEJAVU_SANS)
                .map_err(|_| "embedded DejaVuSans.ttf is not a valid font".to_string())
        })
        .clone()
        .map_err(|message| Error::Backend {
            backend: "plotters".into(),
            message,
        })
}

fn render_error(e: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: "plotters".into(),
        message: e.to_string(),
    }
}

/// Least-squares slope of `log y` against `log x` over the points where both are positive and
/// finite: the observed order of convergence when `x = h` and `y = error`. `None` with fewer than
/// two such points or when all `x` coincide.
pub fn fitted_slope(x: &[f64], y: &[f64]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .filter(|(a, b)| a.is_finite() && b.is_finite() && **a > 0.0 && **b > 0.0)
        .map(|(a, b)| (a.ln(), b.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (a, b)| (sx + a / n, sy + b / n));
    let sxx: f64 = pts.iter().map(|(a, _)| (a - mx) * (a - mx)).sum();
    let sxy: f64 = pts.iter().map(|(a, b)| (a - mx) * (b - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Legend entry of a convergence series: its label and fitted slope, when one exists.
fn convergence_label(label: &str, h: &[f64], err: &[f64]) -> String {
    match fitted_slope(h, err) {
        Some(s) => format!("{label} (slope {s:.2})"),
        None => label.to_string(),
    }
}

/// Residual norms against iteration number (0, 1, 2, …) on a logarithmic y axis.
pub fn plot_residual_history(
    path: impl AsRef<Path>,
    title: &str,
    series: &[(&str, &[f64])],
) -> Result<()> {
    let iterations: Vec<Vec<f64>> = series
        .iter()
        .map(|(_, r)| (0..r.len()).map(|k| k as f64).collect())
        .collect();
    let lines: Vec<(&str, &[f64], &[f64])> = series
        .iter()
        .zip(&iterations)
        .map(|((label, r), it)| (*label, it.as_slice(), *r))
        .collect();
    plot_lines(
        path,
        title,
        "iteration",
        "residual norm",
        &lines,
        false,
        true,
    )
}

/// Errors against mesh size `h` on log–log axes; each legend entry shows the fitted slope (the
/// observed convergence order, see [`fitted_slope`]).
pub fn plot_convergence(
    path: impl AsRef<Path>,
    title: &str,
    series: &[(&str, &[f64], &[f64])],
) -> Result<()> {
    let labels: Vec<String> = series
        .iter()
        .map(|(l, h, e)| convergence_label(l, h, e))
        .collect();
    let lines: Vec<(&str, &[f64], &[f64])> = series
        .iter()
        .zip(&labels)
        .map(|((_, h, e), l)| (l.as_str(), *h, *e))
        .collect();
    plot_lines(path, title, "h", "error", &lines, true, true)
}

/// Plot each `(label, x, y)` series as a line with markers and write a PNG of [`PLOT_SIZE`]
/// atomically. See the module docs for how non-finite and non-positive (log axis) points are handled.
pub fn plot_lines(
    path: impl AsRef<Path>,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[(&str, &[f64], &[f64])],
    log_x: bool,
    log_y: bool,
) -> Result<()> {
    let mut pieces = Vec::with_capacity(series.len());
    for &(label, x, y) in series {
        if x.len() != y.len() {
            return Err(Error::dim(
                format!("plot series `{label}` (y values for its x values)"),
                x.len(),
                y.len(),
            ));
        }
        pieces.push((label, vec![x.iter().copied().zip(y.iter().copied()).collect()]));
    }
    render(path.as_ref(), title, xlabel, ylabel, pieces, log_x, log_y)
}

/// Linear plot of series that are each several disconnected polylines (a discontinuous function
/// drawn element by element shows its jumps as gaps), one colour and legend entry per series.
pub fn plot_pieces(path: impl AsRef<Path>, title: &str, xlabel: &str, ylabel: &str, series: Vec<(&str, Vec<Vec<(f64, f64)>>)>) -> Result<()> {
    render(path.as_ref(), title, xlabel, ylabel, series, false, false)
}

/// Series made of pieces, drawn and written as [`plot_lines`] says.
fn render(
    path: &Path,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: Vec<(&str, Vec<Vec<(f64, f64)>>)>,
    log_x: bool,
    log_y: bool,
) -> Result<()> {
    let keep = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    let data: Vec<(&str, Vec<Vec<(f64, f64)>>)> = series
        .into_iter()
        .map(|(label, pieces)| {
            let kept = pieces
                .into_iter()
                .map(|p| p.into_iter().filter(|&(a, b)| keep(a, log_x) && keep(b, log_y)).collect::<Vec<_>>())
                .filter(|p| !p.is_empty())
                .collect();
            (label, kept)
        })
        .collect();
    let all = || data.iter().flat_map(|(_, p)| p.iter().flatten());
    let (Some(xr), Some(yr)) = (
        axis_range(all().map(|p| p.0), log_x),
        axis_range(all().map(|p| p.1), log_y),
    ) else {
        return Err(Error::invalid(format!(
            "plot `{title}` has no point to draw (no series, empty series, or only non-positive values on a log axis)"
        )));
    };
    ensure_font()?;

    let (w, h) = PLOT_SIZE;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, PLOT_SIZE).into_drawing_area();
        let legend = legend_corner(&data, (xr, log_x), (yr, log_y));
        let axes = Axes {
            title,
            xlabel,
            ylabel,
            log_x,
            log_y,
            legend,
        };
        let (x0, x1, y0, y1) = (xr.0, xr.1, yr.0, yr.1);
        match (log_x, log_y) {
            (false, false) => draw(&root, &axes, &data, x0..x1, y0..y1),
            (true, false) => draw(&root, &axes, &data, (x0..x1).log_scale(), y0..y1),
            (false, true) => draw(&root, &axes, &data, x0..x1, (y0..y1).log_scale()),
            (true, true) => draw(
                &root,
                &axes,
                &data,
                (x0..x1).log_scale(),
                (y0..y1).log_scale(),
            ),
        }?;
        root.present().map_err(render_error)?;
    }
    write_atomic(path, |out| {
        encode_png(out, &rgb, PLOT_SIZE).map_err(|e| match e {
            png::EncodingError::IoError(e) => Error::io(path, e),
            e => Error::Backend {
                backend: "png".into(),
                message: e.to_string(),
            },
        })
    })
}

/// Padded (min, max) of the values, or `None` when there are none. Log ranges are padded by a
/// factor, linear ones by a fraction of the span; a single value gets a range around it.
fn axis_range(values: impl Iterator<Item = f64>, log: bool) -> Option<(f64, f64)> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if lo > hi {
        return None;
    }
    Some(if log {
        let pad = if hi > lo { (hi / lo).powf(0.05) } else { 2.0 };
        (lo / pad, hi * pad)
    } else {
        let pad = if hi > lo {
            0.05 * (hi - lo)
        } else {
            0.1 * lo.abs().max(1.0)
        };
        (lo - pad, hi + pad)
    })
}

struct Axes<'a> {
    title: &'a str,
    xlabel: &'a str,
    ylabel: &'a str,
    log_x: bool,
    log_y: bool,
    legend: SeriesLabelPosition,
}

/// The plot corner whose legend-sized box the series cross least (sampled along each segment), so
/// the legend hides as little as possible: convergence curves fill the upper right, residual
/// histories the lower right.
fn legend_corner(
    data: &[(&str, Vec<Vec<(f64, f64)>>)],
    (xr, log_x): ((f64, f64), bool),
    (yr, log_y): ((f64, f64), bool),
) -> SeriesLabelPosition {
    use SeriesLabelPosition::{LowerLeft, LowerRight, UpperLeft, UpperRight};
    let unit = |v: f64, (lo, hi): (f64, f64), log: bool| {
        if log {
            (v / lo).ln() / (hi / lo).ln()
        } else {
            (v - lo) / (hi - lo)
        }
    };
    // (right?, upper?) for each candidate, in order of preference.
    let corners = [(true, true), (false, true), (true, false), (false, false)];
    let mut hits = [0usize; 4];
    for pts in data.iter().flat_map(|(_, pieces)| pieces) {
        let uv: Vec<(f64, f64)> = pts
            .iter()
            .map(|&(x, y)| (unit(x, xr, log_x), unit(y, yr, log_y)))
            .collect();
        let segments = uv
            .windows(2)
            .map(|w| (w[0], w[1]))
            .chain(uv.first().map(|&p| (p, p)));
        for (a, b) in segments {
            for k in 0..=8 {
                let s = k as f64 / 8.0;
                let (u, v) = (a.0 + s * (b.0 - a.0), a.1 + s * (b.1 - a.1));
                for (c, &(right, upper)) in corners.iter().enumerate() {
                    let in_u = if right { u > 0.65 } else { u < 0.35 };
                    let in_v = if upper { v > 0.75 } else { v < 0.25 };
                    hits[c] += usize::from(in_u && in_v);
                }
            }
        }
    }
    let best = (0..4).min_by_key(|&c| hits[c]).unwrap_or(0);
    match corners[best] {
        (true, true) => UpperRight,
        (false, true) => UpperLeft,
        (true, false) => LowerRight,
        (false, false) => LowerLeft,
    }
}

fn log_tick(v: &f64) -> String {
    format!("{v:.0e}")
}

/// Draw axes, series and legend on any combination of linear and logarithmic axes.
fn draw<X, Y>(
    root: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    axes: &Axes,
    data: &[(&str, Vec<Vec<(f64, f64)>>)],
    x_spec: X,
    y_spec: Y,
) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    root.fill(&WHITE).map_err(render_error)?;
    let mut chart = ChartBuilder::on(root)
        .caption(axes.title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(render_error)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axes.xlabel)
        .y_desc(axes.ylabel)
        .label_style(("sans-serif", 16));
    if axes.log_x {
        mesh.x_label_formatter(&log_tick);
    }
    if axes.log_y {
        mesh.y_label_formatter(&log_tick);
    }
    mesh.draw().map_err(render_error)?;
    for (i, (label, pieces)) in data.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        // Markers only on single lines sparse enough to read.
        let marker = if pieces.len() > 1 || pieces.iter().map(Vec::len).sum::<usize>() > 200 { 0 } else { 3 };
        for (k, pts) in pieces.iter().enumerate() {
            let drawn = chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)).point_size(marker))
                .map_err(render_error)?;
            if k == 0 {
                drawn.label(*label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2)));
            }
        }
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(axes.legend.clone())
        .draw()
        .map_err(render_error)
}

fn encode_png(
    out: &mut dyn std::io::Write,
    rgb: &[u8],
    (w, h): (u32, u32),
) -> std::result::Result<(), png::EncodingError> {
    let mut enc = png::Encoder::new(out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    // Plots are mostly flat colour: adaptive filtering plus best deflate shrinks them several-fold.
    enc.set_compression(png::Compression::Best);
    enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = enc.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Check the PNG signature and IHDR by hand, then decode fully; returns the RGB pixels.
    fn read_png(path: &Path) -> Vec<u8> {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(u32::from_be_bytes(bytes[8..12].try_into().unwrap()), 13);
        assert_eq!(&bytes[12..16], b"IHDR");
        let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((w, h), PLOT_SIZE);
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(
            (info.width, info.height, info.color_type),
            (w, h, png::ColorType::Rgb)
        );
        buf
    }

    /// Fraction of pixels that are neither white nor gray-ish: drawn series colours.
    fn coloured_fraction(rgb: &[u8]) -> f64 {
        let n = rgb
            .chunks_exact(3)
            .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 60)
            .count();
        n as f64 / (rgb.len() / 3) as f64
    }

    #[test]
    fn slope_of_exact_power_law_is_recovered() {
        let h = [0.5, 0.25, 0.125, 0.0625];
        let e2: Vec<f64> = h.iter().map(|h| 3.0 * h * h).collect();
        let e3: Vec<f64> = h.iter().map(|h: &f64| 0.1 * h.powi(3)).collect();
        assert!((fitted_slope(&h, &e2).unwrap() - 2.0).abs() < 1e-12);
        assert!((fitted_slope(&h, &e3).unwrap() - 3.0).abs() < 1e-12);
        // Non-positive and non-finite points are ignored, too few points give no slope.
        let e = [3.0 * 0.25, 0.0, 3.0 * 0.125 * 0.125, f64::NAN];
        assert!(
            (fitted_slope(&h, &e).unwrap() - (3.0f64 * 0.125 * 0.125 / 0.75).ln() / 0.25f64.ln())
                .abs()
                < 1e-12
        );
        assert_eq!(fitted_slope(&[0.5], &[1.0]), None);
        assert_eq!(fitted_slope(&[0.5, 0.5], &[1.0, 2.0]), None);
        assert_eq!(convergence_label("L2", &h, &e2), "L2 (slope 2.00)");
        assert_eq!(convergence_label("L2", &h[..1], &e2[..1]), "L2");
    }

    #[test]
    fn convergence_and_residual_plots_are_valid_pngs() {
        let dir = tempfile::tempdir().unwrap();
        let h = [0.5, 0.25, 0.125, 0.0625];
        let l2: Vec<f64> = h.iter().map(|h| 0.3 * h * h).collect();
        let h1: Vec<f64> = h.iter().map(|h| 0.7 * h).collect();
        let p = dir.path().join("plots/conv.png");
        plot_convergence(&p, "Poisson P1", &[("L2", &h, &l2), ("H1", &h, &h1)]).unwrap();
        assert!(coloured_fraction(&read_png(&p)) > 1e-3);

        // A final residual of exactly zero is skipped on the log axis, not an error.
        let cg = [1.0, 1e-2, 1e-5, 1e-9, 0.0];
        let gmres = [1.0, 0.5, 0.1, 1e-3];
        let p = dir.path().join("res.png");
        plot_residual_history(&p, "Residuals", &[("cg", &cg), ("gmres", &gmres)]).unwrap();
        assert!(coloured_fraction(&read_png(&p)) > 1e-3);

        let p = dir.path().join("lin.png");
        plot_lines(
            &p,
            "line",
            "x",
            "y",
            &[("const", &[1.0], &[2.0])],
            false,
            false,
        )
        .unwrap();
        read_png(&p);
    }

    #[test]
    fn legend_goes_to_the_emptiest_corner() {
        let corner = |pts: Vec<(f64, f64)>, log: bool| {
            let xr = axis_range(pts.iter().map(|p| p.0), log).unwrap();
            let yr = axis_range(pts.iter().map(|p| p.1), log).unwrap();
            legend_corner(&[("s", vec![pts])], (xr, log), (yr, log))
        };
        // Error falling with h fills lower left and upper right.
        let conv: Vec<(f64, f64)> = (0..5)
            .map(|k| (0.5f64.powi(k), 0.5f64.powi(2 * k)))
            .collect();
        assert_eq!(corner(conv, true), SeriesLabelPosition::UpperLeft);
        // A falling residual fills upper left and lower right.
        let res: Vec<(f64, f64)> = (0..10).map(|k| (k as f64, 10f64.powi(-k))).collect();
        assert_eq!(corner(res, false), SeriesLabelPosition::UpperRight);
    }

    #[test]
    fn nothing_to_plot_is_an_error_without_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("empty.png");
        assert!(matches!(
            plot_lines(&p, "t", "x", "y", &[], false, false),
            Err(Error::Invalid(_))
        ));
        assert!(matches!(
            plot_residual_history(&p, "t", &[("cg", &[])]),
            Err(Error::Invalid(_))
        ));
        let e = plot_residual_history(&p, "t", &[("cg", &[0.0, -1.0, f64::NAN])]);
        assert!(matches!(e, Err(Error::Invalid(m)) if m.contains("log axis")));
        let e = plot_convergence(&p, "t", &[("L2", &[0.5, 0.25], &[1.0])]);
        assert!(
            matches!(e, Err(Error::Dimension { context, expected: 2, got: 1 }) if context.contains("L2"))
        );
        assert!(!p.exists());
    }
}

/// A colour map of a scalar on a rectangle: `values[j * nu + i]` is the value of cell (i, j) of an
/// `nu × nv` grid over `[u0, u1] × [v0, v1]` (NaN: not drawn), in a blue–red scale from `min` to
/// `max` given in the title (e.g. the temperature on one face of a body).
#[allow(clippy::too_many_arguments)]
pub fn plot_map(path: impl AsRef<Path>, title: &str, ulabel: &str, vlabel: &str, (u0, u1): (f64, f64), (v0, v1): (f64, f64), (nu, nv): (usize, usize), values: &[f64]) -> Result<(f64, f64)> {
    let path = path.as_ref();
    if values.len() != nu * nv || nu == 0 || nv == 0 {
        return Err(Error::dim(format!("map `{title}` ({nu} × {nv} cells)"), nu * nv, values.len()));
    }
    if !(u1 > u0 && v1 > v0) {
        return Err(Error::invalid(format!("map `{title}`: empty rectangle [{u0}, {u1}] × [{v0}, {v1}]")));
    }
    let (min, max) = values.iter().filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    if min > max {
        return Err(Error::invalid(format!("map `{title}` has no finite value to draw")));
    }
    ensure_font()?;
    let colour = |v: f64| {
        let s = if max > min { ((v - min) / (max - min)).clamp(0.0, 1.0) } else { 0.5 };
        // Blue → white → red.
        let (r, g, b) = if s < 0.5 { (2.0 * s, 2.0 * s, 1.0) } else { (1.0, 2.0 - 2.0 * s, 2.0 - 2.0 * s) };
        RGBColor((255.0 * r) as u8, (255.0 * g) as u8, (255.0 * b) as u8)
    };
    let (w, h) = PLOT_SIZE;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, PLOT_SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(render_error)?;
        let caption = format!("{title}  [{min:.4} … {max:.4}]");
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 22))
            .margin(20)
            .x_label_area_size(55)
            .y_label_area_size(85)
            .build_cartesian_2d(u0..u1, v0..v1)
            .map_err(render_error)?;
        chart.configure_mesh().disable_mesh().x_desc(ulabel).y_desc(vlabel).label_style(("sans-serif", 16)).draw().map_err(render_error)?;
        let (du, dv) = ((u1 - u0) / nu as f64, (v1 - v0) / nv as f64);
        let cells = (0..nv).flat_map(|j| (0..nu).map(move |i| (i, j))).filter(|&(i, j)| values[j * nu + i].is_finite()).map(|(i, j)| {
            let (a, b) = (u0 + i as f64 * du, v0 + j as f64 * dv);
            Rectangle::new([(a, b), (a + du, b + dv)], colour(values[j * nu + i]).filled())
        });
        chart.draw_series(cells).map_err(render_error)?;
        root.present().map_err(render_error)?;
    }
    write_atomic(path, |out| {
        encode_png(out, &rgb, PLOT_SIZE).map_err(|e| match e {
            png::EncodingError::IoError(e) => Error::io(path, e),
            e => Error::Backend { backend: "png".into(), message: e.to_string() },
        })
    })?;
    Ok((min, max))
}
