//! `sin` and `cos` of compiled expressions without branches, so that a tape's loop over a batch
//! of points vectorizes (issue 11: the libm calls were 13 % of a P1 assembly, the source
//! 3π² sin πx sin πy sin πz at every quadrature point). fdlibm's (musl's) kernels on
//! [-π/4, π/4] after a Cody–Waite reduction by π/2 in two rounds (good to about 118 bits), the
//! quadrant chosen by bit operations: within one ulp of the correctly rounded value, like libm,
//! but not always libm's last bit. Arguments the reduction does not cover (|x| ≥ 2^19·π/2, not
//! finite, or a multiple of π/2 so close that two rounds cancel more than 46 bits) go to libm.
//! The loop is left to the baseline target (SSE2, two lanes): an AVX2 copy chosen at run time
//! measured slower on the 2-core VM's load vector (BENCHMARKS.md, issue 11 round 10).
//! The scalar functions and the slice functions give the same bits, so an expression's batched
//! and point-by-point values agree exactly.

const TOINT: f64 = 6755399441055744.0; // 1.5 · 2^52: adding it rounds to an integer in the low bits
const INVPIO2: f64 = 6.36619772367581382433e-01;
const PIO2_1: f64 = 1.57079632673412561417e+00; // first 33 bits of π/2
const PIO2_2: f64 = 6.07710050630396597660e-11; // next 33 bits
const PIO2_2T: f64 = 2.02226624879595063154e-21; // π/2 − (PIO2_1 + PIO2_2)
/// |x| below this (2^19·π/2) is reduced here: n·PIO2_1 and n·PIO2_2 are exact.
const LIMIT: f64 = 823549.6582763792;

/// (x − n·π/2 as a head and a tail, n mod 4), and whether the reduction is not to be trusted.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, u64, bool) {
    let shifted = x * INVPIO2 + TOINT;
    let fnum = shifted - TOINT;
    let q = shifted.to_bits() & 3;
    let t = x - fnum * PIO2_1; // exact
    let w = fnum * PIO2_2;
    let r = t - w;
    let w = fnum * PIO2_2T - ((t - r) - w);
    let y0 = r - w;
    let y1 = (r - y0) - w;
    let ax = x.abs();
    let bad = !(ax < LIMIT) || y0.abs() < ax * 1.4210854715202004e-14; // 2^-46
    (y0, y1, q, bad)
}

/// fdlibm's __kernel_sin(x, y, 1) on [-π/4, π/4], y the tail of x.
#[inline(always)]
fn ksin(x: f64, y: f64) -> f64 {
    const S1: f64 = -1.66666666666666324348e-01;
    const S2: f64 = 8.33333333332248946124e-03;
    const S3: f64 = -1.98412698298579493134e-04;
    const S4: f64 = 2.75573137070700676789e-06;
    const S5: f64 = -2.50507602534068634195e-08;
    const S6: f64 = 1.58969099521155010221e-10;
    let z = x * x;
    let w = z * z;
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * x;
    x - ((z * (0.5 * y - v * r) - y) - v * S1)
}

/// fdlibm's __kernel_cos(x, y) on [-π/4, π/4].
#[inline(always)]
fn kcos(x: f64, y: f64) -> f64 {
    const C1: f64 = 4.16666666666666019037e-02;
    const C2: f64 = -1.38888888888741095749e-03;
    const C3: f64 = 2.48015872894767294178e-05;
    const C4: f64 = -2.75573143513906633035e-07;
    const C5: f64 = 2.08757232129817482790e-09;
    const C6: f64 = -1.13596475577881948265e-11;
    let z = x * x;
    let w = z * z;
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + (z * r - x * y))
}

/// sin (`shift` 0) or cos (`shift` 1) where the reduction holds, and whether it does not.
#[inline(always)]
fn kernel(x: f64, shift: u64) -> (f64, bool) {
    let (y0, y1, q, bad) = reduce(x);
    let q = q + shift; // cos x = sin(x + π/2)
    let (s, c) = (ksin(y0, y1), kcos(y0, y1));
    let v = if q & 1 == 0 { s } else { c };
    (f64::from_bits(v.to_bits() ^ (((q >> 1) & 1) << 63)), bad)
}

#[inline(always)]
fn scalar(x: f64, shift: u64) -> f64 {
    match kernel(x, shift) {
        (_, true) if shift == 0 => x.sin(),
        (_, true) => x.cos(),
        (v, false) => v,
    }
}

#[inline(always)]
fn slice(dst: &mut [f64], src: &[f64], shift: u64) {
    // Two loops: the first without branches (it vectorizes), the second redoes the rare
    // arguments the reduction does not cover.
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = kernel(x, shift).0;
    }
    for (d, &x) in dst.iter_mut().zip(src) {
        if reduce(x).3 {
            *d = if shift == 0 { x.sin() } else { x.cos() };
        }
    }
}

pub fn sin(x: f64) -> f64 {
    scalar(x, 0)
}

pub fn cos(x: f64) -> f64 {
    scalar(x, 1)
}

/// `dst[j] = sin(src[j])`, the same bits as [`sin`].
pub fn sin_slice(dst: &mut [f64], src: &[f64]) {
    slice(dst, src, 0)
}

/// `dst[j] = cos(src[j])`, the same bits as [`cos`].
pub fn cos_slice(dst: &mut [f64], src: &[f64]) {
    slice(dst, src, 1)
}
