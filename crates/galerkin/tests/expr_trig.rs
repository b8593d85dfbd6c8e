//! `sin` and `cos` of compiled expressions (issue 11, op10): a branch-free reduction and fdlibm's
//! kernels, so a tape's batch loop vectorizes. Each value lies within one ulp of libm's (which
//! rounds correctly), the batched values equal the point-by-point ones bit for bit (the load
//! vector's batched source relies on it), and what the reduction cannot cover (huge, non-finite,
//! or too near a multiple of π/2) gives libm's value.
use galerkin::expr::Expr;

/// Distance in units in the last place between two finite values.
fn ulps(a: f64, b: f64) -> u64 {
    if a == b {
        return 0;
    }
    let key = |v: f64| {
        let i = v.to_bits() as i64;
        if i < 0 {
            i64::MIN - i
        } else {
            i
        }
    };
    key(a).abs_diff(key(b))
}

fn arguments() -> Vec<f64> {
    let mut xs = vec![0.0, -0.0, 1e-300, -5e-324, 1e-9, 0.5, 1.0, 3.0, 1e3, 1e5, 8.2e5, 8.3e5, 1e7, 1e300, f64::MAX, -f64::MAX];
    // Multiples of π/2 (the cancellation the two-round reduction covers) and their neighbours.
    for k in 1..3000 {
        let m = k as f64 * std::f64::consts::FRAC_PI_2;
        xs.extend([m, f64::from_bits(m.to_bits() + 1), f64::from_bits(m.to_bits() - 1), -m]);
    }
    // A pseudo-random spread over [-40, 40], and [0, π] (the bench source's arguments).
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..100_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let u = (s >> 11) as f64 / (1u64 << 53) as f64;
        xs.extend([80.0 * u - 40.0, std::f64::consts::PI * u]);
    }
    xs
}

#[test]
fn sin_and_cos_lie_within_one_ulp_of_libm_and_batches_equal_points_bit_for_bit() {
    let xs = arguments();
    let points: Vec<[f64; 3]> = xs.iter().map(|&x| [x, 0.0, 0.0]).collect();
    for (text, libm) in [("sin(x)", f64::sin as fn(f64) -> f64), ("cos(x)", f64::cos)] {
        let e = Expr::parse(text).unwrap();
        assert!(e.is_compiled());
        let mut batched = vec![0.0; xs.len()];
        e.eval_batch(&points, 0.0, &mut batched);
        // Batches of odd lengths too: the vector loops' remainders.
        let mut short = vec![0.0; 37];
        e.eval_batch(&points[5..42], 0.0, &mut short);
        let (mut differ, mut worst) = (0usize, 0u64);
        for (k, &x) in xs.iter().enumerate() {
            let point = e.eval([x, 0.0, 0.0], 0.0);
            assert_eq!(point.to_bits(), batched[k].to_bits(), "{text} at {x:e}: batched {} against point {point}", batched[k]);
            if (5..42).contains(&k) {
                assert_eq!(point.to_bits(), short[k - 5].to_bits(), "{text} at {x:e}: short batch");
            }
            let want = libm(x);
            let d = ulps(point, want);
            assert!(d <= 1, "{text} at {x:e}: {point:e} against libm's {want:e} ({d} ulps)");
            differ += usize::from(d > 0);
            worst = worst.max(d);
        }
        // A kernel that only agrees within one ulp here and there would still pass the bound:
        // libm's last bit is ours for the great majority of arguments.
        assert!(differ * 10 < xs.len(), "{text}: {differ} of {} values differ from libm in the last bit", xs.len());
    }
}

#[test]
fn non_finite_arguments_give_nan_and_signed_zero_is_kept() {
    for text in ["sin(x)", "cos(x)"] {
        let e = Expr::parse(text).unwrap();
        let xs = [[f64::NAN, 0.0, 0.0], [f64::INFINITY, 0.0, 0.0], [f64::NEG_INFINITY, 0.0, 0.0]];
        let mut out = [0.0; 3];
        e.eval_batch(&xs, 0.0, &mut out);
        for (x, o) in xs.iter().zip(out) {
            assert!(o.is_nan() && e.eval(*x, 0.0).is_nan(), "{text} at {}", x[0]);
        }
    }
    let sin = Expr::parse("sin(x)").unwrap();
    assert_eq!(sin.eval([-0.0, 0.0, 0.0], 0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(Expr::parse("cos(x)").unwrap().eval([0.0, 0.0, 0.0], 0.0), 1.0);
}

/// The derivative of a compiled expression (its dual numbers) takes the same functions: the
/// gradient of sin(πx) sin(πy) is π cos(πx) sin(πy), … to round-off.
#[test]
fn gradients_of_sines_match_closed_forms() {
    let e = Expr::parse("sin(pi*x)*sin(pi*y)").unwrap();
    let pi = std::f64::consts::PI;
    for &(x, y) in &[(0.1, 0.7), (0.33, 0.5), (0.9, 0.05)] {
        let (v, g) = e.eval_grad([x, y, 0.0], 0.0, 1e-6);
        assert!((v - (pi * x).sin() * (pi * y).sin()).abs() < 1e-15);
        assert!((g[0] - pi * (pi * x).cos() * (pi * y).sin()).abs() < 1e-13, "{g:?}");
        assert!((g[1] - pi * (pi * x).sin() * (pi * y).cos()).abs() < 1e-13, "{g:?}");
    }
}
