//! Meshes of an interval for DG: the sorted vertex coordinates x_0 < x_1 < … < x_N, element n being
//! (x_n, x_{n+1}). Uniform, geometrically graded and randomly perturbed meshes, and nested
//! refinement (every element halved) for convergence studies.
use crate::{Error, Result};

/// An interval mesh: N elements, N + 1 strictly increasing finite vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalMesh {
    nodes: Vec<f64>,
}

impl IntervalMesh {
    /// Checks the vertices: at least two, finite, strictly increasing (errors name the vertex).
    pub fn from_nodes(nodes: Vec<f64>) -> Result<IntervalMesh> {
        if nodes.len() < 2 {
            return Err(Error::mesh("interval", format!("a mesh needs at least 2 vertices, got {}", nodes.len())));
        }
        if let Some(i) = nodes.iter().position(|x| !x.is_finite()) {
            return Err(Error::mesh(format!("vertex {i}"), format!("coordinate {} is not finite", nodes[i])));
        }
        if let Some(i) = nodes.windows(2).position(|w| !(w[1] > w[0])) {
            return Err(Error::mesh(
                format!("element {i}"),
                format!("vertices must increase strictly: x_{i} = {} and x_{} = {}", nodes[i], i + 1, nodes[i + 1]),
            ));
        }
        Ok(IntervalMesh { nodes })
    }

    /// `n` equal elements on [a, b].
    pub fn uniform(n: usize, a: f64, b: f64) -> Result<IntervalMesh> {
        check(n, a, b)?;
        let h = (b - a) / n as f64;
        IntervalMesh::from_nodes((0..=n).map(|i| if i == n { b } else { a + i as f64 * h }).collect())
    }

    /// `n` elements on [a, b] whose widths grow by `ratio` from one element to the next.
    pub fn graded(n: usize, a: f64, b: f64, ratio: f64) -> Result<IntervalMesh> {
        check(n, a, b)?;
        if !(ratio > 0.0 && ratio.is_finite()) {
            return Err(Error::invalid(format!("grading ratio must be positive and finite, got {ratio}")));
        }
        // Widths relative to the widest element, so large n cannot overflow.
        let widest = if ratio > 1.0 { n as f64 - 1.0 } else { 0.0 };
        let w: Vec<f64> = (0..n).map(|i| ((i as f64 - widest) * ratio.ln()).exp()).collect();
        let total: f64 = w.iter().sum();
        let mut nodes = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        nodes.push(a);
        for wi in &w[..n - 1] {
            acc += wi;
            nodes.push(a + (b - a) * (acc / total));
        }
        nodes.push(b);
        IntervalMesh::from_nodes(nodes)
    }

    /// A uniform mesh whose interior vertices are moved by up to `amount · h / 2` (0 ≤ amount < 1)
    /// with a seeded generator, so the same seed gives the same mesh everywhere.
    pub fn random(n: usize, a: f64, b: f64, amount: f64, seed: u64) -> Result<IntervalMesh> {
        if !(0.0..1.0).contains(&amount) {
            return Err(Error::invalid(format!("random perturbation must lie in [0, 1), got {amount}")));
        }
        let mut m = IntervalMesh::uniform(n, a, b)?;
        let h = (b - a) / n as f64;
        let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
        for x in &mut m.nodes[1..n] {
            // SplitMix64: a full-period 64-bit generator, good enough to jitter a mesh.
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            *x += amount * 0.5 * h * u;
        }
        IntervalMesh::from_nodes(m.nodes)
    }

    /// Every element split in two at its midpoint (nested: errors on a sequence converge for any
    /// starting mesh).
    pub fn refined(&self) -> IntervalMesh {
        let mut nodes = Vec::with_capacity(2 * self.nodes.len() - 1);
        for w in self.nodes.windows(2) {
            nodes.push(w[0]);
            nodes.push(0.5 * (w[0] + w[1]));
        }
        nodes.push(self.nodes[self.nodes.len() - 1]);
        IntervalMesh { nodes }
    }

    pub fn nodes(&self) -> &[f64] {
        &self.nodes
    }

    /// Number of elements N.
    pub fn len(&self) -> usize {
        self.nodes.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Width of element `e`.
    pub fn h(&self, e: usize) -> f64 {
        self.nodes[e + 1] - self.nodes[e]
    }

    /// Largest element width (the h of convergence tables).
    pub fn h_max(&self) -> f64 {
        self.nodes.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max)
    }

    pub fn h_min(&self) -> f64 {
        self.nodes.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min)
    }

    /// (a, b), the ends of the domain.
    pub fn bounds(&self) -> (f64, f64) {
        (self.nodes[0], self.nodes[self.nodes.len() - 1])
    }
}

fn check(n: usize, a: f64, b: f64) -> Result<()> {
    if n == 0 {
        return Err(Error::invalid("an interval mesh needs at least 1 element"));
    }
    if !(a.is_finite() && b.is_finite() && b > a) {
        return Err(Error::invalid(format!("interval [{a}, {b}] must be finite with lower < upper")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_give_increasing_meshes_with_the_asked_sizes() {
        let u = IntervalMesh::uniform(10, 0.0, 1.0).unwrap();
        assert_eq!(u.len(), 10);
        assert!((u.h_max() - 0.1).abs() < 1e-15 && (u.h_min() - 0.1).abs() < 1e-15);
        let g = IntervalMesh::graded(8, 0.0, 2.0, 1.5).unwrap();
        assert!((g.h(1) / g.h(0) - 1.5).abs() < 1e-12 && g.bounds() == (0.0, 2.0));
        let r = IntervalMesh::random(50, -1.0, 1.0, 0.8, 3).unwrap();
        assert_eq!(r, IntervalMesh::random(50, -1.0, 1.0, 0.8, 3).unwrap());
        assert_ne!(r, IntervalMesh::random(50, -1.0, 1.0, 0.8, 4).unwrap());
        assert!(r.h_min() > 0.2 * 0.04 - 1e-15 && r.h_max() < 1.8 * 0.04 + 1e-15);
        let f = r.refined();
        assert_eq!(f.len(), 100);
        assert!((f.h(0) - r.h(0) / 2.0).abs() < 1e-15);
    }

    #[test]
    fn bad_meshes_are_named() {
        let e = IntervalMesh::from_nodes(vec![0.0, 0.5, 0.5, 1.0]).unwrap_err().to_string();
        assert!(e.contains("element 1"), "{e}");
        let e = IntervalMesh::from_nodes(vec![0.0, f64::NAN]).unwrap_err().to_string();
        assert!(e.contains("vertex 1"), "{e}");
        assert!(IntervalMesh::uniform(0, 0.0, 1.0).is_err());
        assert!(IntervalMesh::uniform(3, 1.0, 1.0).is_err());
        assert!(IntervalMesh::graded(3, 0.0, 1.0, -2.0).is_err());
        assert!(IntervalMesh::random(3, 0.0, 1.0, 1.0, 0).is_err());
    }
}
