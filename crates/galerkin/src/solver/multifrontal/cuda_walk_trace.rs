//! The line walk's timeline per level ([`CudaMultifrontal::set_walk_trace`], round 20): the stamps
//! its items write (claimed, dependencies done, published) summed up per pass and direction, so a
//! run shows where the walk's time goes — waiting on the level below, or working — where one
//! launch's event pair only gives the total.
use super::CudaMultifrontal;
use serde::Serialize;

/// One level (pass and direction) of a traced walk; times in seconds from the walk's first claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WalkLevel {
    pub pass: usize,
    pub backward: bool,
    /// Items (subtree, chunk of columns) of the level.
    pub items: usize,
    /// First claim and last publish of the level's items.
    pub start_s: f64,
    pub end_s: f64,
    /// Means over the items of the wait (claimed to dependencies done) and of the work
    /// (dependencies done to published: gather, product, stores, fence).
    pub wait_s: f64,
    pub work_s: f64,
}

/// The levels of a walk from its steps (pairs `pass | backward << 31`, subtree) and stamps (three
/// nanosecond words per item, item = step · `chunks` + chunk), in the order the steps list them.
pub(super) fn levels(steps: &[u32], chunks: usize, stamps: &[u64]) -> Vec<WalkLevel> {
    let t0 = stamps.chunks_exact(3).map(|s| s[0]).min().unwrap_or(0);
    let secs = |a: u64, b: u64| b.saturating_sub(a) as f64 * 1e-9;
    let mut out: Vec<WalkLevel> = Vec::new();
    for (st, pair) in steps.chunks_exact(2).enumerate() {
        let (pass, backward) = ((pair[0] & 0x7fff_ffff) as usize, pair[0] >> 31 != 0);
        let i = out.iter().position(|l| l.pass == pass && l.backward == backward).unwrap_or_else(|| {
            out.push(WalkLevel { pass, backward, items: 0, start_s: f64::INFINITY, end_s: 0.0, wait_s: 0.0, work_s: 0.0 });
            out.len() - 1
        });
        let l = &mut out[i];
        for s in (0..chunks).filter_map(|k| stamps.get(3 * (st * chunks + k)..3 * (st * chunks + k + 1))) {
            l.items += 1;
            l.start_s = l.start_s.min(secs(t0, s[0]));
            l.end_s = l.end_s.max(secs(t0, s[2]));
            l.wait_s += secs(s[0], s[1]);
            l.work_s += secs(s[1], s[2]);
        }
    }
    for l in out.iter_mut().filter(|l| l.items > 0) {
        l.wait_s /= l.items as f64;
        l.work_s /= l.items as f64;
    }
    out
}

impl CudaMultifrontal {
    /// Makes each line walk ([`super::SepLines::top`]) stamp its items' timeline (off by default:
    /// three stores of the global timer per item), read by [`CudaMultifrontal::walk_levels`].
    pub fn set_walk_trace(&mut self, on: bool) {
        self.walk_trace = on;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two forward subtrees of pass 2 and one of pass 3, then pass 3 and 2 backward, two chunks
    /// each: items, first claim and last publish per level, mean wait and work.
    #[test]
    fn levels_sum_the_stamps_per_pass_and_direction() {
        let back = 1u32 << 31;
        let steps = [2, 0, 2, 1, 3, 0, 3 | back, 0, 2 | back, 0];
        // Per item: claimed, dependencies done, published (ns from 1000).
        let items: [[u64; 3]; 10] = [
            [1000, 1000, 1100], [1000, 1010, 1200], [1050, 1050, 1150], [1060, 1060, 1160],
            [1100, 1200, 1300], [1100, 1300, 1400],
            [1300, 1400, 1500], [1400, 1500, 1600],
            [1500, 1600, 1700], [1600, 1600, 1800],
        ];
        let stamps: Vec<u64> = items.iter().flatten().copied().collect();
        let l = levels(&steps, 2, &stamps);
        assert_eq!(l.iter().map(|l| (l.pass, l.backward, l.items)).collect::<Vec<_>>(), [(2, false, 4), (3, false, 2), (3, true, 2), (2, true, 2)]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(close(l[0].start_s, 0.0) && close(l[0].end_s, 200e-9), "{:?}", l[0]);
        assert!(close(l[0].wait_s, 2.5e-9) && close(l[0].work_s, (100.0 + 190.0 + 100.0 + 100.0) / 4.0 * 1e-9), "{:?}", l[0]);
        assert!(close(l[1].start_s, 100e-9) && close(l[1].end_s, 400e-9) && close(l[1].wait_s, 150e-9) && close(l[1].work_s, 100e-9), "{:?}", l[1]);
        assert!(close(l[3].start_s, 500e-9) && close(l[3].end_s, 800e-9) && close(l[3].wait_s, 50e-9) && close(l[3].work_s, 150e-9), "{:?}", l[3]);
    }
}
