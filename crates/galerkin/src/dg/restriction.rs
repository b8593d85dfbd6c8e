//! The two restrictions of a DG operator on an interval. Unknowns are numbered element by element
//! (element e owns `e·b .. e·b + b`, b = k + 1), so
//! - the element restriction gathers one contiguous block per element (no sharing: scatter is a
//!   copy), and
//! - the interior-face restriction gathers, for face f (the vertex x_f, 1 ≤ f ≤ N − 1), the blocks
//!   of its two neighbours, element f − 1 (left) and element f (right): 2b values.
//!
//! With the volume and face terms of [`super::physics`], `A = Σ_e R_eᵀ K_e R_e + Σ_f R_fᵀ M_f R_f`
//! (+ the Dirichlet ends); [`super::assemble::apply_unassembled`] applies exactly that, and the
//! block-tridiagonal matrix is its assembled form (face f fills D_{f−1}, U_{f−1}, L_f, D_f).
use std::ops::Range;

/// Element e ↦ its b unknowns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementRestriction {
    pub elements: usize,
    pub block: usize,
}

impl ElementRestriction {
    pub fn dofs(&self, e: usize) -> Range<usize> {
        e * self.block..(e + 1) * self.block
    }
    pub fn gather<'a>(&self, x: &'a [f64], e: usize) -> &'a [f64] {
        &x[self.dofs(e)]
    }
    /// `y[R_e] += values`
    pub fn scatter_add(&self, values: &[f64], e: usize, y: &mut [f64]) {
        y[self.dofs(e)].iter_mut().zip(values).for_each(|(yi, v)| *yi += v);
    }
}

/// Interior face f ↦ (left element f − 1, right element f).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaceRestriction {
    pub elements: usize,
    pub block: usize,
}

impl FaceRestriction {
    /// The interior faces, 1 ..= N − 1 (vertex numbers).
    pub fn faces(&self) -> Range<usize> {
        1..self.elements
    }
    pub fn neighbours(&self, f: usize) -> (usize, usize) {
        (f - 1, f)
    }
    /// The 2b unknowns of both neighbours, left block first: contiguous, as element f − 1 and f
    /// are consecutive.
    pub fn dofs(&self, f: usize) -> Range<usize> {
        (f - 1) * self.block..(f + 1) * self.block
    }
    pub fn gather<'a>(&self, x: &'a [f64], f: usize) -> &'a [f64] {
        &x[self.dofs(f)]
    }
    pub fn scatter_add(&self, values: &[f64], f: usize, y: &mut [f64]) {
        y[self.dofs(f)].iter_mut().zip(values).for_each(|(yi, v)| *yi += v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faces_gather_both_neighbours() {
        let (e, f) = (ElementRestriction { elements: 4, block: 3 }, FaceRestriction { elements: 4, block: 3 });
        let x: Vec<f64> = (0..12).map(f64::from).collect();
        assert_eq!(e.gather(&x, 2), &[6.0, 7.0, 8.0]);
        assert_eq!(f.faces(), 1..4);
        assert_eq!(f.neighbours(3), (2, 3));
        assert_eq!(f.gather(&x, 1), &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let mut y = vec![0.0; 12];
        f.scatter_add(&[1.0; 6], 3, &mut y);
        e.scatter_add(&[1.0; 3], 3, &mut y);
        assert_eq!(y[5..], [0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    }
}
