//! Quadrature rules on reference cells (stub).
use crate::mesh::CellType;
use crate::Result;

/// Points on the reference cell and their weights (weights sum to the reference volume).
#[derive(Clone, Debug)]
pub struct QuadratureRule {
    pub points: Vec<[f64; 3]>,
    pub weights: Vec<f64>,
}

impl QuadratureRule {
    /// A rule exact for polynomials of degree `degree` on `cell` (total degree on simplices,
    /// per-axis degree on tensor cells).
    pub fn new(cell: CellType, degree: usize) -> Result<QuadratureRule> {
        let _ = (cell, degree);
        todo!()
    }
    pub fn len(&self) -> usize {
        self.weights.len()
    }
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }
}

/// Facet rule (stub; implemented in the fe branch).
pub fn facet_rule(cell: CellType, facet: usize, degree: usize) -> Result<(QuadratureRule, Vec<[f64; 3]>)> {
    let _ = (cell, facet, degree);
    todo!()
}
