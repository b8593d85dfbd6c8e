//! A parallel sort for the mesh's large key arrays (the Hilbert keys of 6·10^7 cells): the items
//! are first scattered into 2^12 buckets by the leading bits of their key (histograms and scatter
//! in parallel, by chunks), then every bucket is sorted on its own, all in parallel. A parallel
//! quicksort partitions its first levels on one or two threads, which at 10^8 items is most of its
//! time. Items equal in key are ordered by `Ord`, so the result is exactly the sorted slice.
use crate::operator::coloring::SharedMut;
use rayon::prelude::*;

/// Bits of the key that pick a bucket.
const BUCKET_BITS: u32 = 12;
/// Below this many items a plain parallel sort is as fast.
const SMALL: usize = 1 << 16;

/// `v` sorted (ascending by `Ord`), where `key` is monotone in that order (`a ≤ b ⇒ key(a) ≤
/// key(b)`): the bucket of an item is its key's leading bits.
pub(crate) fn par_sort_by_key_bits<T, K>(mut v: Vec<T>, key: K) -> Vec<T>
where
    T: Copy + Ord + Send + Sync,
    K: Fn(&T) -> u64 + Sync,
{
    if v.len() < SMALL {
        v.par_sort_unstable();
        return v;
    }
    let max = v.par_iter().map(&key).max().unwrap_or(0);
    let bits = u64::BITS - max.leading_zeros();
    let shift = bits.saturating_sub(BUCKET_BITS);
    let nb = 1usize << bits.min(BUCKET_BITS);
    let bucket = |x: &T| (key(x) >> shift) as usize;
    let chunk = v.len().div_ceil(4 * rayon::current_num_threads()).max(SMALL);
    let hist: Vec<Vec<usize>> = v
        .par_chunks(chunk)
        .map(|c| {
            let mut h = vec![0usize; nb];
            c.iter().for_each(|x| h[bucket(x)] += 1);
            h
        })
        .collect();
    // Bucket-major offsets: bucket b's items of chunk c start at offs[c][b].
    let mut offs = vec![vec![0usize; nb]; hist.len()];
    let mut starts = Vec::with_capacity(nb + 1);
    let mut at = 0;
    for b in 0..nb {
        starts.push(at);
        for (c, h) in hist.iter().enumerate() {
            offs[c][b] = at;
            at += h[b];
        }
    }
    starts.push(at);
    let n = v.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    let op = SharedMut(out.as_mut_ptr());
    v.par_chunks(chunk).zip(offs.par_iter_mut()).for_each(|(c, o)| {
        let op = op;
        for x in c {
            let b = bucket(x);
            // SAFETY: the offsets of (chunk, bucket) pairs are disjoint ranges of 0..n that
            // together cover it, and each chunk writes only its own.
            unsafe { op.0.add(o[b]).write(*x) };
            o[b] += 1;
        }
    });
    // SAFETY: every one of the n slots was written above.
    unsafe { out.set_len(n) };
    drop(v);
    let mut buckets = Vec::with_capacity(nb);
    let mut rest = out.as_mut_slice();
    for b in 0..nb {
        let (head, tail) = rest.split_at_mut(starts[b + 1] - starts[b]);
        buckets.push(head);
        rest = tail;
    }
    // Buckets are small where keys spread; a crowded one is still sorted in parallel.
    buckets.into_par_iter().for_each(|s| s.par_sort_unstable());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal to the sorted vector: uniform keys, keys crowded into one bucket, repeated keys with
    /// distinct payloads, small inputs.
    #[test]
    fn sorts_exactly_as_sort_unstable() {
        let mut s = 0x2545f4914f6cdd1du64;
        let mut rand = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let n = 300_000;
        let uniform: Vec<(usize, u32)> = (0..n).map(|i| ((rand() >> 1) as usize, i as u32)).collect();
        let crowded: Vec<(usize, u32)> = (0..n).map(|i| ((1usize << 40) + (rand() % 1000) as usize, i as u32)).collect();
        let repeated: Vec<(usize, u32)> = (0..n).map(|i| ((rand() % 7) as usize, (rand() % 5) as u32 + i as u32 % 3)).collect();
        let small: Vec<(usize, u32)> = (0..100).map(|i| ((rand() % 50) as usize, i)).collect();
        for v in [uniform, crowded, repeated, small] {
            let mut expected = v.clone();
            expected.sort_unstable();
            assert!(par_sort_by_key_bits(v, |p| p.0 as u64) == expected);
        }
    }
}
