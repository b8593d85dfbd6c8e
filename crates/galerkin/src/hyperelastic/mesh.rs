//! The thick-walled shell standing in for the seed's atrium: a generated box in (r, θ, φ) mapped
//! to a sector of an ellipsoidal shell, x = a r sin θ cos φ, y = b r sin θ sin φ, z = c r cos θ
//! (orientation-preserving, so cells keep their positive orientation). The box's sides become the
//! boundaries `inner`, `outer`, `theta_min`, `theta_max`, `phi_min`, `phi_max`; the cut planes
//! (θ = 90°, φ = 0°, φ = 90°) carry symmetry conditions in the examples. In plane strain, [`ring`]
//! does the same for a rectangle in (r, φ): a thick-walled tube's cross-section.
use super::config::{RingConfig, ShellConfig};
use crate::mesh::{generate::box_mesh, generate::rectangle, Mesh};
use crate::Result;

pub fn shell(s: &ShellConfig) -> Result<Mesh> {
    let d = std::f64::consts::PI / 180.0;
    let mut m = box_mesh(s.n[0], s.n[1], s.n[2], [s.inner, s.theta[0] * d, s.phi[0] * d], [s.outer, s.theta[1] * d, s.phi[1] * d], s.cell)?;
    for x in &mut m.coords {
        let (r, t, p) = (x[0], x[1], x[2]);
        *x = [s.axes[0] * r * t.sin() * p.cos(), s.axes[1] * r * t.sin() * p.sin(), s.axes[2] * r * t.cos()];
    }
    rename(&mut m, &[("xmin", "inner"), ("xmax", "outer"), ("ymin", "theta_min"), ("ymax", "theta_max"), ("zmin", "phi_min"), ("zmax", "phi_max")]);
    Ok(m)
}

/// A rectangle in (r, φ) mapped to x = a r cos φ, y = b r sin φ (orientation-preserving: the
/// map's determinant is a b r > 0); sides `inner`, `outer`, `phi_min`, `phi_max`. Straight-sided
/// cells: the arcs are polygons of `n[1]` sides.
pub fn ring(s: &RingConfig) -> Result<Mesh> {
    let d = std::f64::consts::PI / 180.0;
    let mut m = rectangle(s.n[0], s.n[1], [s.inner, s.phi[0] * d], [s.outer, s.phi[1] * d], s.cell)?;
    for x in &mut m.coords {
        let (r, p) = (x[0], x[1]);
        *x = [s.axes[0] * r * p.cos(), s.axes[1] * r * p.sin(), 0.0];
    }
    rename(&mut m, &[("xmin", "inner"), ("xmax", "outer"), ("ymin", "phi_min"), ("ymax", "phi_max")]);
    Ok(m)
}

fn rename(m: &mut Mesh, names: &[(&str, &str)]) {
    for &(old, new) in names {
        if let Some(v) = m.tag_names.remove(old) {
            m.tag_names.insert(new.to_string(), v);
        }
    }
}
