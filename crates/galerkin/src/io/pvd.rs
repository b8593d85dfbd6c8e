//! ParaView collections (`.pvd`): a time series of `.vtu` files that ParaView opens as one dataset
//! with a time slider.
use super::atomic::write_atomic;
use super::xml::escape_attr;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// A `.pvd` collection, rewritten atomically after every [`Pvd::add`] so that an interrupted run
/// still leaves a collection of all steps written so far.
#[derive(Clone, Debug)]
pub struct Pvd {
    path: PathBuf,
    entries: Vec<(f64, String)>,
}

impl Pvd {
    /// A collection to be written at `path` (nothing is written until [`Pvd::add`] or [`Pvd::write`]).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Pvd {
            path: path.into(),
            entries: Vec::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries so far as (time, file as written in the collection).
    pub fn entries(&self) -> &[(f64, String)] {
        &self.entries
    }

    /// Record `vtu` at `time` and rewrite the collection. `vtu` should be relative to the `.pvd`'s
    /// directory (ParaView resolves it so); an absolute path inside that directory is made relative.
    pub fn add(&mut self, time: f64, vtu: impl AsRef<Path>) -> Result<()> {
        let vtu = vtu.as_ref();
        if !time.is_finite() {
            return Err(Error::invalid(format!(
                "PVD time for `{}` must be finite, got {time}",
                vtu.display()
            )));
        }
        let dir = self.path.parent().unwrap_or(Path::new(""));
        let rel = if vtu.is_absolute() {
            vtu.strip_prefix(dir).unwrap_or(vtu)
        } else {
            vtu
        };
        let file = rel.to_str().ok_or_else(|| {
            Error::invalid(format!("PVD entry `{}` is not valid UTF-8", rel.display()))
        })?;
        self.entries.push((time, file.to_string()));
        let written = self.write();
        if written.is_err() {
            self.entries.pop(); // keep the in-memory list equal to the last collection on disk
        }
        written
    }

    /// Write the collection atomically.
    pub fn write(&self) -> Result<()> {
        write_atomic(&self.path, |w| {
            let mut doc = String::from("<?xml version=\"1.0\"?>\n");
            doc.push_str("<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n");
            for (t, f) in &self.entries {
                // `{:e}` round-trips f64 exactly, so times are not rounded in the file.
                doc.push_str(&format!(
                    "    <DataSet timestep=\"{t:e}\" group=\"\" part=\"0\" file=\"{}\"/>\n",
                    escape_attr(f)
                ));
            }
            doc.push_str("  </Collection>\n</VTKFile>\n");
            w.write_all(doc.as_bytes())
                .map_err(|e| Error::io(&self.path, e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::xml::parse;

    #[test]
    fn collection_lists_every_step_with_exact_times() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/solution.pvd");
        let mut pvd = Pvd::new(&path);
        let times = [0.0, 0.1, 1.0 / 3.0];
        for (k, &t) in times.iter().enumerate() {
            pvd.add(t, format!("solution_{k:04}.vtu")).unwrap();
        }
        pvd.add(2.5, dir.path().join("run/abs.vtu")).unwrap();
        let els = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(els[0].attr("type"), Some("Collection"));
        let sets: Vec<_> = els.iter().filter(|e| e.name == "DataSet").collect();
        assert_eq!(sets.len(), 4);
        for (k, &t) in times.iter().enumerate() {
            assert_eq!(sets[k].attr("timestep").unwrap().parse::<f64>().unwrap(), t);
            assert_eq!(
                sets[k].attr("file").unwrap(),
                format!("solution_{k:04}.vtu")
            );
        }
        assert_eq!(sets[3].attr("file"), Some("abs.vtu"));
    }

    #[test]
    fn non_finite_time_is_rejected_and_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut pvd = Pvd::new(dir.path().join("s.pvd"));
        assert!(
            matches!(pvd.add(f64::NAN, "a.vtu"), Err(Error::Invalid(m)) if m.contains("a.vtu"))
        );
        assert!(pvd.entries().is_empty());
        assert!(!pvd.path().exists());
    }
}
