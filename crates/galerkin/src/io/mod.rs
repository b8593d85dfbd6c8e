//! Output: VTU/PVD for ParaView, JSON reports, PNG plots, progress bars. Every file is written to a
//! temporary sibling and renamed into place, so an output file is either whole or absent.
mod atomic;
pub mod background;
pub(crate) mod base64;
pub mod input;
mod outdir;
pub mod plot;
mod progress;
mod pvd;
mod report;
mod vtu;
pub mod vti;
mod xml;

pub use atomic::{remove_stale_temporaries, temporary_owner, write_atomic, write_atomic_parts, AtomicFile, PartsTimes};
pub use outdir::{file_record, parts_record, OutputDir, OutputFile};
pub use plot::{fitted_slope, plot_convergence, plot_lines, plot_map, plot_pieces, plot_residual_history, PLOT_SIZE};
pub use progress::progress_bar;
pub use pvd::Pvd;
pub use report::{write_json, JsonRows};
pub use vtu::{VtuEncoding, VtuPrepared, VtuPreparing, VtuTimes, VtuWriter, REGION_FIELD};
