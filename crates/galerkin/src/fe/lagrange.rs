//! H1 Lagrange elements P1–P3 on simplices and Q1–Q3 on quadrilaterals/hexahedra (stub).
use super::{FiniteElement, Tabulation};
use crate::mesh::CellType;
use crate::Result;

#[derive(Clone, Debug)]
pub struct LagrangeElement {
    cell: CellType,
    degree: usize,
    nodes: Vec<[f64; 3]>,
    entity_dofs: Vec<Vec<Vec<usize>>>,
}

impl LagrangeElement {
    /// Lagrange element of `degree` (1..=3) on `cell`.
    pub fn new(cell: CellType, degree: usize) -> Result<LagrangeElement> {
        let _ = (cell, degree);
        todo!()
    }
}

impl FiniteElement for LagrangeElement {
    fn cell_type(&self) -> CellType {
        self.cell
    }
    fn degree(&self) -> usize {
        self.degree
    }
    fn ndofs(&self) -> usize {
        self.nodes.len()
    }
    fn entity_dofs(&self) -> &[Vec<Vec<usize>>] {
        &self.entity_dofs
    }
    fn nodes(&self) -> Option<&[[f64; 3]]> {
        Some(&self.nodes)
    }
    fn tabulate(&self, points: &[[f64; 3]]) -> Tabulation {
        let _ = points;
        todo!()
    }
}
