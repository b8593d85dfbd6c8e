//! JSON reports (solver statistics, convergence tables) for scripts and regression checks.
use super::atomic::write_atomic;
use crate::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Write `value` as pretty-printed JSON (with a trailing newline), atomically.
///
/// Non-finite floats become `null` (JSON has no NaN/∞); values serde cannot map to JSON (e.g. maps
/// with non-string keys) are an [`Error::Invalid`] and leave no file.
pub fn write_json(path: impl AsRef<Path>, value: &impl Serialize) -> Result<()> {
    let path = path.as_ref();
    write_atomic(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value).map_err(|e| {
            if e.is_io() {
                Error::io(path, e.into())
            } else {
                Error::invalid(format!("cannot write {} as JSON: {e}", path.display()))
            }
        })?;
        w.write_all(b"\n").map_err(|e| Error::io(path, e))
    })
}

/// A benchmark's rows as they complete, rewritten whole to `path` (when given) after each one, so a
/// run stopped midway leaves a valid file of the rows done.
pub struct JsonRows<T> {
    rows: Vec<T>,
    path: Option<PathBuf>,
}

impl<T: Serialize + Clone> JsonRows<T> {
    pub fn new(path: Option<PathBuf>) -> Self {
        JsonRows { rows: Vec::new(), path }
    }

    pub fn push(&mut self, row: &T) -> Result<()> {
        self.rows.push(row.clone());
        match &self.path {
            Some(p) => write_json(p, &self.rows),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Report {
        method: &'static str,
        history: Vec<f64>,
        slope: f64,
    }

    #[test]
    fn json_round_trips_numbers_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r/report.json");
        let r = Report {
            method: "cg",
            history: vec![1.0, 0.1, 1.0 / 3.0, 1e-300],
            slope: 2.0000000000000004,
        };
        write_json(&path, &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("}\n") && text.contains("\n  \"method\""),
            "pretty printed: {text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["method"], "cg");
        let h: Vec<f64> = v["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(h, r.history);
        assert_eq!(v["slope"].as_f64(), Some(r.slope));
    }

    #[test]
    fn unserializable_value_is_an_error_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        let mut m = BTreeMap::new();
        m.insert((1, 2), 3.0);
        assert!(matches!(write_json(&path, &m), Err(Error::Invalid(_))));
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
