//! Progress bars with one look across the toolkit (solvers, time stepping, sweeps).
use indicatif::{ProgressBar, ProgressStyle};

/// Template shared by all bars: message, bar, position, rate and time left.
const TEMPLATE: &str =
    "{msg:>12} [{elapsed_precise}] {bar:40.cyan/blue} {pos:>7}/{len:7} ({per_sec}, eta {eta})";

/// A progress bar of `len` steps labelled `message`; hidden when `enabled` is false. indicatif also
/// draws nothing when stderr is not a terminal, so logs and CI output stay clean either way.
pub fn progress_bar(len: u64, message: &str, enabled: bool) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    // The template is a constant, so the fallback only guards against an indicatif format change.
    let style = ProgressStyle::with_template(TEMPLATE)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    ProgressBar::new(len)
        .with_style(style)
        .with_message(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_is_valid_and_bar_tracks_position() {
        assert!(ProgressStyle::with_template(TEMPLATE).is_ok());
        let pb = progress_bar(10, "cg", true);
        pb.inc(3);
        assert_eq!(pb.length(), Some(10));
        assert_eq!(pb.position(), 3);
        assert_eq!(pb.message(), "cg");
        pb.finish_and_clear();
    }

    #[test]
    fn disabled_bar_is_hidden() {
        let pb = progress_bar(10, "cg", false);
        assert!(pb.is_hidden());
        pb.inc(1);
        assert_eq!(pb.position(), 1);
    }
}
