//! Checks that turn wrong answers and wrong causes into errors naming the real one: boundary names
//! and tags that select no facet, and coefficient, source and boundary values that are not finite
//! (or not positive where the physics needs it) at the point where they are evaluated.
use super::linear::Boundary;
use crate::mesh::Mesh;
use crate::{Error, Result};
use std::sync::{Arc, OnceLock};

/// Every boundary in `on` must exist and carry at least one facet of `mesh`; `Err` says which does
/// not and what the mesh has.
pub fn boundaries_have_facets(mesh: &Mesh, on: &[Boundary]) -> std::result::Result<(), String> {
    if on.is_empty() {
        return Err("an empty list names no boundary".into());
    }
    let hint = || {
        if mesh.boundary.is_empty() {
            "; this mesh has no tagged boundary facets at all (a .msh file without $Entities carries no physical tags on its elements)".to_string()
        } else {
            let mut tags: Vec<i32> = mesh.boundary.iter().map(|f| f.tag).collect();
            tags.sort_unstable();
            tags.dedup();
            format!("; the boundary facets carry the tags {tags:?}")
        }
    };
    for b in on {
        let (tag, label) = match b {
            Boundary::Id(t) => (*t, format!("tag {t}")),
            Boundary::Name(n) => (mesh.tag(n, mesh.dim.saturating_sub(1)).map_err(|e| e.to_string())?, format!("boundary `{n}`")),
        };
        if !mesh.boundary.iter().any(|f| f.tag == tag) {
            let label = if matches!(b, Boundary::Name(_)) { format!("{label} (tag {tag})") } else { label };
            return Err(format!("{label} selects no facet of the mesh{}", hint()));
        }
    }
    Ok(())
}

/// What a field's values must satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    Finite,
    Positive,
    NonNegative,
}

impl Requirement {
    pub fn holds(self, v: f64) -> bool {
        match self {
            Requirement::Finite => v.is_finite(),
            Requirement::Positive => v.is_finite() && v > 0.0,
            Requirement::NonNegative => v.is_finite() && v >= 0.0,
        }
    }

    fn wanted(self) -> &'static str {
        match self {
            Requirement::Finite => "a finite value",
            Requirement::Positive => "a positive value",
            Requirement::NonNegative => "a non-negative value",
        }
    }

    /// The error for a value that breaks the requirement, at `key` (a dotted TOML key).
    pub fn error(self, key: &str, value: f64, at: Option<([f64; 3], usize)>) -> Error {
        let place = match at {
            Some((x, dim)) => format!(" at x = {:?}", &x[..dim.clamp(1, 3)]),
            None => String::new(),
        };
        Error::config(key, format!("evaluates to {value}{place}; it must be {}", self.wanted()))
    }
}

/// The first bad value met by any field closure of a run (evaluated in parallel, during assembly,
/// on either backend). Closures cannot return errors, so they record here and the run asks after
/// assembly and after the solve: the user then hears "physics.kappa evaluates to 0 at x = [..]"
/// rather than what it led to ("Jacobi diagonal entry is 0").
#[derive(Clone, Default)]
pub struct FieldFaults {
    first: Arc<OnceLock<Error>>,
    dim: usize,
}

impl FieldFaults {
    pub fn new(dim: usize) -> Self {
        FieldFaults { first: Arc::default(), dim }
    }

    /// Check `value` of field `key` at `x`; records the first failure and passes the value on.
    #[inline]
    pub fn check(&self, key: &str, req: Requirement, x: [f64; 3], value: f64) -> f64 {
        if !req.holds(value) && self.first.get().is_none() {
            let _ = self.first.set(req.error(key, value, Some((x, self.dim))));
        }
        value
    }

    /// The recorded failure, if any.
    pub fn take(&self) -> Option<Error> {
        self.first.get().map(|e| Error::config(config_key(e), config_message(e)))
    }

    /// `Err` with the recorded failure, or `other` when nothing was recorded.
    pub fn or(&self, other: Error) -> Error {
        self.take().unwrap_or(other)
    }

    /// `Ok(())` unless a failure was recorded.
    pub fn check_none(&self) -> Result<()> {
        self.take().map_or(Ok(()), Err)
    }
}

fn config_key(e: &Error) -> String {
    match e {
        Error::Config { key, .. } => key.clone(),
        _ => String::new(),
    }
}

fn config_message(e: &Error) -> String {
    match e {
        Error::Config { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{generate, CellType};

    #[test]
    fn boundaries_without_facets_are_named() {
        let m = generate::rectangle(2, 2, [0.0; 2], [1.0; 2], CellType::Triangle).unwrap();
        assert!(boundaries_have_facets(&m, &["xmin".into(), 3.into()]).is_ok());
        let e = boundaries_have_facets(&m, &[]).unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = boundaries_have_facets(&m, &[99.into()]).unwrap_err();
        assert!(e.contains("tag 99") && e.contains("[1, 2, 3, 4]"), "{e}");
        let e = boundaries_have_facets(&m, &["left".into()]).unwrap_err();
        assert!(e.contains("left") && e.contains("xmin"), "{e}");
        // A name that resolves to a tag no facet carries (a Gmsh file without $Entities).
        let mut bare = m.clone();
        bare.boundary.clear();
        let e = boundaries_have_facets(&bare, &["xmin".into()]).unwrap_err();
        assert!(e.contains("boundary `xmin` (tag 1) selects no facet") && e.contains("$Entities"), "{e}");
    }

    #[test]
    fn first_fault_is_kept_with_its_point_and_key() {
        let f = FieldFaults::new(2);
        assert_eq!(f.check("physics.kappa", Requirement::Positive, [0.5, 0.25, 0.0], 2.0), 2.0);
        assert!(f.check_none().is_ok());
        f.check("physics.kappa", Requirement::Positive, [0.5, 0.25, 0.0], 0.0);
        f.check("physics.source", Requirement::Finite, [0.0; 3], f64::NAN);
        let e = f.take().unwrap().to_string();
        assert!(e.contains("physics.kappa") && e.contains("evaluates to 0") && e.contains("[0.5, 0.25]") && e.contains("positive"), "{e}");
        assert!(f.clone().check_none().is_err(), "clones share the record");
    }
}
