//! Passive data: the coefficient fields a QFunction reads, sampled once on the operator's quadrature
//! (constants once, per-region values per cell, functions at every point of every cell). Every
//! level on every backend reads the same samples, and [`PassiveData::set`] replaces one field (a new
//! coefficient per cell or per point, say a time step's temperature) without rebuilding anything
//! else.
use super::geometry::GeometryTab;
use super::qfunction::Composite;
use crate::mesh::Mesh;
use crate::physics::Coefficient;
use crate::{Error, Result};
use rayon::prelude::*;

/// One passive field.
#[derive(Clone, Debug, PartialEq)]
pub enum PassiveField {
    Constant(f64),
    /// One value per cell.
    PerCell(Vec<f64>),
    /// `values[c·nq + q]` at quadrature point q of cell c.
    PerPoint(Vec<f64>),
}

/// Every passive field of an operator's QFunctions, in their order.
#[derive(Clone, Debug)]
pub struct PassiveData {
    pub fields: Vec<PassiveField>,
    pub ncells: usize,
    /// Quadrature points per cell.
    pub nq: usize,
}

impl PassiveData {
    /// Samples the fields of `qf` on `mesh` at the points `geo` maps (the operator's quadrature).
    pub fn sample(qf: &Composite, mesh: &Mesh, geo: &GeometryTab, nq: usize) -> Result<PassiveData> {
        let _span = crate::trace::span(|| "integrator: coefficients sampled and checked".into());
        let ncells = mesh.num_cells();
        let fields = qf
            .fields()
            .into_iter()
            .map(|c| match c {
                Coefficient::Constant(v) => PassiveField::Constant(*v),
                Coefficient::PerRegion(m) => PassiveField::PerCell(mesh.cell_tags.iter().map(|t| m.get(t).copied().unwrap_or(f64::NAN)).collect()),
                Coefficient::Function(f) => {
                    let mut v = vec![0.0; ncells * nq];
                    v.par_chunks_mut(nq.max(1)).enumerate().for_each(|(c, out)| {
                        for (q, o) in out.iter_mut().enumerate() {
                            *o = f(geo.point(mesh, c, q));
                        }
                    });
                    PassiveField::PerPoint(v)
                }
            })
            .collect();
        let data = PassiveData { fields, ncells, nq };
        data.check()?;
        Ok(data)
    }

    /// Sizes match the mesh and quadrature, and every value is finite.
    fn check(&self) -> Result<()> {
        for (s, f) in self.fields.iter().enumerate() {
            let (values, want): (&[f64], usize) = match f {
                PassiveField::Constant(v) => (std::slice::from_ref(v), 1),
                PassiveField::PerCell(v) => (v, self.ncells),
                PassiveField::PerPoint(v) => (v, self.ncells * self.nq),
            };
            if values.len() != want {
                return Err(Error::dim(format!("passive field {s}"), want, values.len()));
            }
            // In parallel: a per-point field is 6·10^7 values at 10^7 unknowns (the first bad one
            // is still the one named).
            if let Some(i) = values.par_iter().position_first(|v| !v.is_finite()) {
                return Err(Error::invalid(format!("passive field {s} (a coefficient) is not finite at sample {i}: {}", values[i])));
            }
        }
        Ok(())
    }

    /// Replaces field `s` (a coefficient per cell or per point), checked like a fresh sample.
    pub fn set(&mut self, s: usize, field: PassiveField) -> Result<()> {
        if s >= self.fields.len() {
            return Err(Error::invalid(format!("passive field {s} does not exist (the physics has {})", self.fields.len())));
        }
        let old = std::mem::replace(&mut self.fields[s], field);
        if let Err(e) = self.check() {
            self.fields[s] = old;
            return Err(e);
        }
        Ok(())
    }

    /// Field `s` at point `q` of cell `c`.
    #[inline]
    pub fn at(&self, s: usize, c: usize, q: usize) -> f64 {
        match &self.fields[s] {
            PassiveField::Constant(v) => *v,
            PassiveField::PerCell(v) => v[c],
            PassiveField::PerPoint(v) => v[c * self.nq + q],
        }
    }

    /// Every field at point `q` of cell `c`.
    #[inline]
    pub fn point(&self, c: usize, q: usize, p: &mut [f64]) {
        for (s, ps) in p.iter_mut().enumerate() {
            *ps = self.at(s, c, q);
        }
    }

    /// Whether every field is constant on each cell (the reference-tensor path of GPU assembly).
    pub fn per_cell(&self) -> bool {
        self.fields.iter().all(|f| !matches!(f, PassiveField::PerPoint(_)))
    }

    /// The device layout the kernels read: all values in one buffer, and per field (offset, cell
    /// stride, point stride), so field s at (c, q) is `values[off + c·cs + q·qs]`.
    pub fn device_layout(&self) -> (Vec<f64>, Vec<u64>) {
        let (parts, meta) = self.device_parts();
        (parts.concat(), meta)
    }

    /// [`Self::device_layout`] without the copy: the values buffer as the fields' own slices, in
    /// order (a per-point field is gigabytes at 10^7 cells; the GPU uploads the slices in place).
    pub fn device_parts(&self) -> (Vec<&[f64]>, Vec<u64>) {
        const ZERO: &[f64] = &[0.0];
        let (mut parts, mut meta, mut off) = (Vec::new(), Vec::new(), 0u64);
        for f in &self.fields {
            let (values, cs, qs): (&[f64], u64, u64) = match f {
                PassiveField::Constant(v) => (std::slice::from_ref(v), 0, 0),
                PassiveField::PerCell(v) => (v, 1, 0),
                PassiveField::PerPoint(v) => (v, self.nq as u64, 1),
            };
            meta.extend([off, cs, qs]);
            off += values.len() as u64;
            parts.push(values);
        }
        if off == 0 {
            parts.push(ZERO);
            meta.extend([0, 0, 0]);
        }
        (parts, meta)
    }
}
