//! The thick-walled shell standing in for the seed's atrium: a generated box in (r, θ, φ) mapped
//! to a sector of an ellipsoidal shell, x = a r sin θ cos φ, y = b r sin θ sin φ, z = c r cos θ
//! (orientation-preserving, so cells keep their positive orientation). The box's sides become the
//! boundaries `inner`, `outer`, `theta_min`, `theta_max`, `phi_min`, `phi_max`; the cut planes
//! (θ = 90°, φ = 0°, φ = 90°) carry symmetry conditions in the examples.
use super::config::ShellConfig;
use crate::mesh::{generate::box_mesh, Mesh};
use crate::Result;

pub fn shell(s: &ShellConfig) -> Result<Mesh> {
    let d = std::f64::consts::PI / 180.0;
    let mut m = box_mesh(s.n[0], s.n[1], s.n[2], [s.inner, s.theta[0] * d, s.phi[0] * d], [s.outer, s.theta[1] * d, s.phi[1] * d], s.cell)?;
    for x in &mut m.coords {
        let (r, t, p) = (x[0], x[1], x[2]);
        *x = [s.axes[0] * r * t.sin() * p.cos(), s.axes[1] * r * t.sin() * p.sin(), s.axes[2] * r * t.cos()];
    }
    let names = [("xmin", "inner"), ("xmax", "outer"), ("ymin", "theta_min"), ("ymax", "theta_max"), ("zmin", "phi_min"), ("zmax", "phi_max")];
    for (old, new) in names {
        if let Some(v) = m.tag_names.remove(old) {
            m.tag_names.insert(new.to_string(), v);
        }
    }
    Ok(m)
}
