//! Choosing a backend by name: [`BackendKind`] is the user's word (`auto`, `cpu`, `cuda` in problem
//! files and on the command line), [`AnyBackend`] the backend it opened.
use super::cuda::{probe, CudaBackend};
use super::Cpu;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which backend to run on: `auto` takes the first GPU when one works and the problem can run
/// there, else the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl std::str::FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(BackendKind::Auto),
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" => Ok(BackendKind::Cuda),
            _ => Err(Error::config("backend", format!("unknown backend `{s}` (expected auto, cpu or cuda)"))),
        }
    }
}

/// An opened backend of either kind.
pub enum AnyBackend {
    Cpu(Cpu),
    Cuda(Box<CudaBackend>),
}

impl AnyBackend {
    /// `cpu` or `cuda (<device name>)`, for reports.
    pub fn name(&self) -> String {
        match self {
            AnyBackend::Cpu(_) => "cpu".into(),
            AnyBackend::Cuda(be) => format!("cuda ({})", be.device().name),
        }
    }

    /// The GPU, when this is one (memory checks ask it how much is free).
    pub fn device(&self) -> Option<&CudaBackend> {
        match self {
            AnyBackend::Cpu(_) => None,
            AnyBackend::Cuda(be) => Some(be),
        }
    }

    /// Opens `kind`: `cpu`; `cuda` (an error naming the reason when no GPU can be used, or when
    /// `runnable` says the problem cannot run there); `auto` takes the first GPU when one works and
    /// `runnable` allows it, else the CPU, and says why in `notes`.
    pub fn select(kind: BackendKind, runnable: std::result::Result<(), String>, notes: &mut Vec<String>) -> Result<AnyBackend> {
        let open = || -> std::result::Result<CudaBackend, String> {
            probe()?;
            CudaBackend::new(0).map_err(|e| e.to_string())
        };
        match kind {
            BackendKind::Cpu => Ok(AnyBackend::Cpu(Cpu)),
            BackendKind::Cuda => {
                runnable.map_err(|why| Error::Backend { backend: "cuda".into(), message: why })?;
                open().map(|be| AnyBackend::Cuda(Box::new(be))).map_err(|why| Error::Backend {
                    backend: "cuda".into(),
                    message: format!("no usable CUDA device: {why}"),
                })
            }
            BackendKind::Auto => match runnable.and_then(|_| open()) {
                Ok(be) => Ok(AnyBackend::Cuda(Box::new(be))),
                Err(why) => {
                    notes.push(format!("running on the CPU: {why}"));
                    Ok(AnyBackend::Cpu(Cpu))
                }
            },
        }
    }
}
