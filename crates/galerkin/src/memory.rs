//! Memory budgets: an estimate in bytes by part, what this process can still take, and the refusal
//! that names both. Used before large allocations (problem set-up, direct factorizations), so a
//! problem that cannot fit fails at once with a clear message instead of aborting later.
use crate::{Error, Result};

/// An estimate in bytes, by part.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    pub parts: Vec<(&'static str, f64)>,
}

impl Estimate {
    pub fn total(&self) -> f64 {
        self.parts.iter().map(|p| p.1).sum()
    }

    pub fn add(&mut self, what: &'static str, bytes: f64) {
        if bytes > 0.0 {
            self.parts.push((what, bytes));
        }
    }

    /// "12.3 GiB (mesh 1.2 GiB, dof map 0.8 GiB, ...)"
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self.parts.iter().map(|(w, b)| format!("{w} {}", human(*b))).collect();
        format!("{} ({})", human(self.total()), parts.join(", "))
    }
}

/// Bytes in GiB/MiB with 3 significant digits.
pub fn human(bytes: f64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    if bytes >= 1e6 * GIB {
        format!("{:.2e} GiB", bytes / GIB)
    } else if bytes >= 0.1 * GIB {
        format!("{:.3} GiB", bytes / GIB)
    } else {
        format!("{:.1} MiB", bytes / (1u64 << 20) as f64)
    }
}

/// Memory a process can still take, and where the figure came from.
#[derive(Clone, Debug)]
pub struct Available {
    pub bytes: f64,
    pub source: String,
}

/// Host memory available to this process: the least of the kernel's `MemAvailable`, the cgroup
/// limit less its usage, and the address-space limit (`ulimit -v`) less the address space in use.
/// `None` where none of them can be read.
pub fn host_available() -> Option<Available> {
    let mut best: Option<Available> = None;
    let mut consider = |bytes: f64, source: String| {
        if best.as_ref().is_none_or(|b| bytes < b.bytes) {
            best = Some(Available { bytes, source });
        }
    };
    if let Some(kb) = proc_field("/proc/meminfo", "MemAvailable:") {
        consider(kb * 1024.0, "MemAvailable in /proc/meminfo".into());
    }
    if let Some(limit) = cgroup_headroom() {
        consider(limit, "the cgroup's memory.max less its memory.current".into());
    }
    if let Ok(limits) = std::fs::read_to_string("/proc/self/limits") {
        let soft = limits.lines().find(|l| l.starts_with("Max address space")).and_then(|l| l.split_whitespace().nth(3)).and_then(|s| s.parse::<f64>().ok());
        if let (Some(limit), Some(used_kb)) = (soft, proc_field("/proc/self/status", "VmSize:")) {
            consider((limit - used_kb * 1024.0).max(0.0), "the address-space limit (ulimit -v) less the address space in use".into());
        }
    }
    best
}

fn proc_field(path: &str, key: &str) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
}

fn cgroup_headroom() -> Option<f64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cg.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let max: f64 = std::fs::read_to_string(dir.join("memory.max")).ok()?.trim().parse().ok()?;
    let current: f64 = std::fs::read_to_string(dir.join("memory.current")).ok()?.trim().parse().ok()?;
    Some((max - current).max(0.0))
}

/// Refuse `estimate` when it exceeds what is available; `what` names the memory ("host", "GPU").
pub fn check(what: &str, estimate: &Estimate, available: Option<&Available>) -> Result<()> {
    match available {
        Some(a) if estimate.total() > a.bytes => Err(Error::OutOfMemory(format!(
            "the problem needs about {} of {what} memory, but {} is available ({}); use a coarser mesh, a lower degree or another solver",
            estimate.describe(),
            human(a.bytes),
            a.source
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_names_the_parts_and_the_source() {
        let mut e = Estimate::default();
        e.add("mesh", 6e9);
        e.add("GMRES basis", 4e9);
        e.add("nothing", 0.0);
        let avail = Available { bytes: 8e9, source: "test".into() };
        let msg = check("host", &e, Some(&avail)).unwrap_err().to_string();
        assert!(msg.contains("out of memory") && msg.contains("mesh 5.588 GiB") && msg.contains("GMRES basis") && msg.contains("7.451 GiB"), "{msg}");
        assert!(!msg.contains("nothing"));
        assert!(check("host", &e, Some(&Available { bytes: 2e10, source: "t".into() })).is_ok());
        assert!(check("host", &e, None).is_ok());
    }

    #[test]
    fn this_machine_reports_available_memory() {
        let a = host_available().expect("Linux exposes /proc/meminfo");
        assert!(a.bytes > 0.0, "{a:?}");
    }
}
