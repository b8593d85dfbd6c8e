//! One error type for the whole pipeline. Every variant names its cause so that a user who wrote a
//! bad mesh, a bad TOML key or an impossible size learns what to fix without reading a backtrace.
use std::path::PathBuf;

/// Result alias used throughout galerkin.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A mesh failed to parse or validate; `location` names the file line, element or node at fault.
    #[error("mesh error ({location}): {message}")]
    Mesh { location: String, message: String },

    /// A problem file (TOML) was malformed; `key` is the dotted path of the offending key.
    #[error("problem file error at `{key}`: {message}")]
    Config { key: String, message: String },

    /// A math expression in a problem file did not parse or uses unknown variables.
    #[error("expression error in `{expr}`: {message}")]
    Expression { expr: String, message: String },

    /// Sizes of vectors, matrices or spaces do not fit together.
    #[error("dimension mismatch in {context}: expected {expected}, got {got}")]
    Dimension { context: String, expected: usize, got: usize },

    /// An iterative solver failed; the residual history is kept for diagnosis.
    #[error("{method} did not converge: {reason} after {iterations} iterations (relative residual {relative_residual:.3e})")]
    NotConverged {
        method: String,
        reason: String,
        iterations: usize,
        relative_residual: f64,
        history: Vec<f64>,
    },

    /// A direct factorization failed (singular or not positive definite).
    #[error("factorization failed: {0}")]
    Factorization(String),

    /// A backend (GPU driver, kernel launch, device memory) reported a failure.
    #[error("backend `{backend}`: {message}")]
    Backend { backend: String, message: String },

    /// An unsupported combination was requested (e.g. an element on a cell it is not defined for).
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// A problem would need more memory than the machine (or the GPU) has: refused before
    /// allocating, or an allocation that failed, with the estimate and what is available.
    #[error("out of memory: {0}")]
    OutOfMemory(String),

    /// Reading or writing a file failed.
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, #[source] source: std::io::Error },

    /// Anything else that is a user-facing invalid argument.
    #[error("invalid argument: {0}")]
    Invalid(String),
}

impl Error {
    pub fn mesh(location: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Mesh { location: location.into(), message: message.into() }
    }
    pub fn config(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config { key: key.into(), message: message.into() }
    }
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub fn dim(context: impl Into<String>, expected: usize, got: usize) -> Self {
        Error::Dimension { context: context.into(), expected, got }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }
}
