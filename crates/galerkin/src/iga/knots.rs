//! Open knot vectors: the breakpoints of a B-spline space, each repeated to set the continuity
//! there, with the two end knots repeated `p + 1` times so that the basis interpolates at the ends
//! (only the first basis function is non-zero at the left end, only the last at the right end).
//!
//! Every constructor validates: degree 1…[`MAX_DEGREE`], finite non-decreasing knots, end
//! multiplicity exactly `p + 1`, interior multiplicity at most `p` (so the space stays at least
//! C⁰), a domain of positive length. Errors are [`Error::Invalid`] messages naming the knot index
//! and value at fault; problem files wrap them with the dotted key.
use crate::{Error, Result};

/// Highest supported degree (the fixed-size work arrays of [`super::basis`] are sized for it).
pub const MAX_DEGREE: usize = 8;

/// An open knot vector `t_0 ≤ t_1 ≤ … ≤ t_{n+p}` of a degree-`p` B-spline space with `n` basis
/// functions.
#[derive(Clone, Debug, PartialEq)]
pub struct KnotVector {
    degree: usize,
    knots: Vec<f64>,
}

fn check_degree(p: usize) -> Result<()> {
    if (1..=MAX_DEGREE).contains(&p) {
        Ok(())
    } else {
        Err(Error::invalid(format!("degree must be 1 to {MAX_DEGREE}, got {p}")))
    }
}

impl KnotVector {
    /// A knot vector given in full, e.g. `[0, 0, 0, 0.5, 1, 1, 1]` for p = 2.
    pub fn new(degree: usize, knots: Vec<f64>) -> Result<KnotVector> {
        check_degree(degree)?;
        let p = degree;
        if let Some(i) = knots.iter().position(|t| !t.is_finite()) {
            return Err(Error::invalid(format!("knot {i} is not finite ({})", knots[i])));
        }
        if let Some(i) = (1..knots.len()).find(|&i| knots[i] < knots[i - 1]) {
            return Err(Error::invalid(format!(
                "knots must be non-decreasing: knot {i} ({}) is smaller than knot {} ({})",
                knots[i],
                i - 1,
                knots[i - 1]
            )));
        }
        let need = 2 * (p + 1);
        if knots.len() < need {
            return Err(Error::invalid(format!(
                "a degree-{p} open knot vector needs at least {need} knots (p + 1 at each end), got {}: \
                 it would have fewer than p + 1 = {} basis functions",
                knots.len(),
                p + 1
            )));
        }
        let runs = multiplicities(&knots);
        let (first, first_m) = runs[0];
        let (last, last_m) = runs[runs.len() - 1];
        if runs.len() < 2 {
            return Err(Error::invalid(format!("the domain [{first}, {last}] has zero length: all knots are equal")));
        }
        if first_m != p + 1 {
            return Err(Error::invalid(format!(
                "the first knot {first} is repeated {first_m} times; an open knot vector of degree {p} repeats it exactly {} times",
                p + 1
            )));
        }
        if last_m != p + 1 {
            return Err(Error::invalid(format!(
                "the last knot {last} is repeated {last_m} times; an open knot vector of degree {p} repeats it exactly {} times",
                p + 1
            )));
        }
        if let Some(&(t, m)) = runs[1..runs.len() - 1].iter().find(|(_, m)| *m > p) {
            return Err(Error::invalid(format!(
                "interior knot {t} is repeated {m} times; at most p = {p} repeats keep the space continuous"
            )));
        }
        Ok(KnotVector { degree, knots })
    }

    /// Breakpoints `x_0 < x_1 < … < x_N` (N elements) with continuity `C^k` at every interior
    /// breakpoint (`0 ≤ k ≤ p − 1`; each interior knot is repeated `p − k` times).
    pub fn from_breakpoints(degree: usize, breakpoints: &[f64], continuity: usize) -> Result<KnotVector> {
        check_degree(degree)?;
        if continuity >= degree {
            return Err(Error::invalid(format!(
                "continuity must be 0 to p - 1 = {} for degree {degree}, got {continuity}",
                degree - 1
            )));
        }
        if breakpoints.len() < 2 {
            return Err(Error::invalid(format!("need at least 2 breakpoints (one element), got {}", breakpoints.len())));
        }
        if let Some(i) = breakpoints.iter().position(|t| !t.is_finite()) {
            return Err(Error::invalid(format!("breakpoint {i} is not finite ({})", breakpoints[i])));
        }
        if let Some(i) = (1..breakpoints.len()).find(|&i| breakpoints[i] <= breakpoints[i - 1]) {
            return Err(Error::invalid(format!(
                "breakpoints must increase strictly: breakpoint {i} ({}) is not larger than breakpoint {} ({}); \
                 repeat knots through `continuity` or a full `knots` vector instead",
                breakpoints[i],
                i - 1,
                breakpoints[i - 1]
            )));
        }
        let (first, last) = (breakpoints[0], breakpoints[breakpoints.len() - 1]);
        let interior = &breakpoints[1..breakpoints.len() - 1];
        let repeat = degree - continuity;
        let mut knots = Vec::with_capacity(2 * (degree + 1) + interior.len() * repeat);
        knots.extend(std::iter::repeat_n(first, degree + 1));
        for &x in interior {
            knots.extend(std::iter::repeat_n(x, repeat));
        }
        knots.extend(std::iter::repeat_n(last, degree + 1));
        KnotVector::new(degree, knots)
    }

    /// `elements` equal elements on `[a, b]` with continuity `C^k` at the interior breakpoints.
    pub fn uniform(degree: usize, elements: usize, continuity: usize, a: f64, b: f64) -> Result<KnotVector> {
        if elements == 0 {
            return Err(Error::invalid("the number of elements must be at least 1"));
        }
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(Error::invalid(format!("the domain [{a}, {b}] must be finite with {a} < {b}")));
        }
        let h = (b - a) / elements as f64;
        let mut bp: Vec<f64> = (0..=elements).map(|i| a + h * i as f64).collect();
        bp[elements] = b;
        KnotVector::from_breakpoints(degree, &bp, continuity)
    }

    pub fn degree(&self) -> usize {
        self.degree
    }

    pub fn knots(&self) -> &[f64] {
        &self.knots
    }

    /// Number of basis functions `n = len − p − 1`.
    pub fn num_basis(&self) -> usize {
        self.knots.len() - self.degree - 1
    }

    /// `[t_0, t_last]`.
    pub fn domain(&self) -> (f64, f64) {
        (self.knots[0], self.knots[self.knots.len() - 1])
    }

    /// The knot spans of positive length (the elements), as indices `i` with `t_i < t_{i+1}`.
    /// The basis functions non-zero on span `i` are `i − p ..= i`.
    pub fn element_spans(&self) -> Vec<usize> {
        (self.degree..self.num_basis())
            .filter(|&i| self.knots[i] < self.knots[i + 1])
            .collect()
    }

    /// The distinct knots (element boundaries), increasing.
    pub fn breakpoints(&self) -> Vec<f64> {
        multiplicities(&self.knots).into_iter().map(|(t, _)| t).collect()
    }

    /// The continuity `p − m` at each interior breakpoint of multiplicity `m`.
    pub fn interior_continuity(&self) -> Vec<usize> {
        let runs = multiplicities(&self.knots);
        runs[1..runs.len() - 1].iter().map(|(_, m)| self.degree - m).collect()
    }

    /// The span `i` with `t_i ≤ x < t_{i+1}` (the last non-empty span for `x = t_last`); points
    /// outside the domain are clamped to the first or last span.
    pub fn find_span(&self, x: f64) -> usize {
        let p = self.degree;
        let n = self.num_basis();
        if x >= self.knots[n] {
            // The last non-empty span ends at t_n (= t_last for an open vector).
            return (p..n).rev().find(|&i| self.knots[i] < self.knots[i + 1]).unwrap_or(n - 1);
        }
        if x <= self.knots[p] {
            return (p..n).find(|&i| self.knots[i] < self.knots[i + 1]).unwrap_or(p);
        }
        // Binary search in [p, n): largest i with t_i <= x.
        let (mut lo, mut hi) = (p, n);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.knots[mid] <= x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// `(knot, multiplicity)` runs of a sorted knot sequence.
fn multiplicities(knots: &[f64]) -> Vec<(f64, usize)> {
    let mut runs: Vec<(f64, usize)> = Vec::new();
    for &t in knots {
        match runs.last_mut() {
            Some((u, m)) if *u == t => *m += 1,
            _ => runs.push((t, 1)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<KnotVector>) -> String {
        r.expect_err("must be rejected").to_string()
    }

    #[test]
    fn uniform_maximal_continuity_has_n_plus_p_functions() {
        for p in 1..=MAX_DEGREE {
            let kv = KnotVector::uniform(p, 10, p - 1, 0.0, 2.0).unwrap();
            assert_eq!(kv.num_basis(), 10 + p);
            assert_eq!(kv.element_spans().len(), 10);
            assert_eq!(kv.domain(), (0.0, 2.0));
            assert_eq!(kv.interior_continuity(), vec![p - 1; 9]);
        }
        // C0 quadratics: two functions per element plus one.
        let kv = KnotVector::uniform(2, 4, 0, 0.0, 1.0).unwrap();
        assert_eq!(kv.num_basis(), 9);
        assert_eq!(kv.element_spans(), vec![2, 4, 6, 8]);
    }

    #[test]
    fn find_span_brackets_points_and_handles_ends() {
        let kv = KnotVector::new(2, vec![0.0, 0.0, 0.0, 0.25, 0.25, 0.7, 1.0, 1.0, 1.0]).unwrap();
        let spans = kv.element_spans();
        assert_eq!(spans, vec![2, 4, 5]);
        assert_eq!(kv.find_span(0.0), 2);
        assert_eq!(kv.find_span(0.1), 2);
        assert_eq!(kv.find_span(0.25), 4);
        assert_eq!(kv.find_span(0.69), 4);
        assert_eq!(kv.find_span(0.7), 5);
        assert_eq!(kv.find_span(1.0), 5);
        assert_eq!(kv.find_span(7.0), 5);
        assert_eq!(kv.find_span(-1.0), 2);
        assert_eq!(kv.interior_continuity(), vec![0, 1]);
    }

    #[test]
    fn bad_knot_vectors_are_named_errors() {
        assert!(err(KnotVector::new(0, vec![0.0, 1.0])).contains("degree must be 1 to 8, got 0"));
        assert!(err(KnotVector::new(9, vec![0.0; 20])).contains("got 9"));
        let e = err(KnotVector::new(1, vec![0.0, 0.0, 0.5, 0.4, 1.0, 1.0]));
        assert!(e.contains("non-decreasing") && e.contains("knot 3 (0.4)"), "{e}");
        let e = err(KnotVector::new(2, vec![0.0, 0.0, 1.0, 1.0, 1.0, 1.0]));
        assert!(e.contains("first knot 0 is repeated 2 times") && e.contains("exactly 3"), "{e}");
        let e = err(KnotVector::new(2, vec![0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0]));
        assert!(e.contains("interior knot 0.5 is repeated 3 times"), "{e}");
        let e = err(KnotVector::new(3, vec![0.0, 0.0, 1.0, 1.0]));
        assert!(e.contains("at least 8 knots") && e.contains("p + 1 = 4 basis functions"), "{e}");
        let e = err(KnotVector::new(1, vec![1.0, 1.0, 1.0, 1.0]));
        assert!(e.contains("zero length"), "{e}");
        assert!(err(KnotVector::new(1, vec![0.0, 0.0, f64::NAN, 1.0, 1.0])).contains("knot 2 is not finite"));
        assert!(err(KnotVector::uniform(3, 4, 3, 0.0, 1.0)).contains("continuity must be 0 to p - 1 = 2"));
        assert!(err(KnotVector::uniform(3, 0, 2, 0.0, 1.0)).contains("at least 1"));
        assert!(err(KnotVector::uniform(3, 2, 2, 1.0, 1.0)).contains("domain"));
        let e = err(KnotVector::from_breakpoints(2, &[0.0, 0.5, 0.5, 1.0], 1));
        assert!(e.contains("increase strictly") && e.contains("breakpoint 2"), "{e}");
    }
}
