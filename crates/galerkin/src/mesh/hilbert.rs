//! Hilbert indices by table lookup: the same index as the `hilbert_index` crate (Hamilton's
//! algorithm: per level, the D bits of the point in the current frame, turned into a Gray-code
//! digit, and the frame's entry and direction updated), with each level's work precomputed for
//! every (entry, direction, bits). The crate recomputes rotations and Gray codes per bit; keying
//! 10^7–10^8 cells was most of a large run's mesh phase. Same curve, so meshes reorder exactly as
//! before.

/// Per state (entry point e, direction d) and D input bits: the digit and the next state.
pub struct HilbertTable<const D: usize> {
    /// `next[(e·D + d) << D | b] = (digit, e', d')`.
    next: Vec<(u8, u8, u8)>,
}

impl<const D: usize> Default for HilbertTable<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const D: usize> HilbertTable<D> {
    const MASK: usize = (1 << D) - 1;

    pub fn new() -> Self {
        assert!((1..=4).contains(&D), "Hilbert tables for 1 to 4 dimensions");
        let rot_r = |b: usize, i: usize| {
            let i = i % D;
            ((b >> i) ^ (b << (D - i))) & Self::MASK
        };
        let rot_l = |b: usize, i: usize| {
            let i = i % D;
            ((b << i) ^ (b >> (D - i))) & Self::MASK
        };
        let gc_inv = |g: usize| (1..D).fold(g, |i, j| i ^ (g >> j));
        let tz1 = |i: usize| (!i).trailing_zeros() as usize;
        let dmap = |i: usize| if i == 0 { 0 } else if i & 1 == 0 { tz1(i - 1) % D } else { tz1(i) % D };
        let emap = |i: usize| if i == 0 { 0 } else { let k = 2 * ((i - 1) / 2); k ^ (k >> 1) };
        let mut next = vec![(0, 0, 0); (1 << D) * D << D];
        for e in 0..1 << D {
            for d in 0..D {
                for b in 0..1 << D {
                    let w = gc_inv(rot_r(b ^ e, d + 1));
                    let e2 = e ^ rot_l(emap(w), d + 1);
                    let d2 = (d + dmap(w) + 1) % D;
                    next[(e * D + d) << D | b] = (w as u8, e2 as u8, d2 as u8);
                }
            }
        }
        HilbertTable { next }
    }

    /// The Hilbert index of grid point `p` on a grid of 2^level points per axis
    /// (`level · D ≤ 64`).
    pub fn index(&self, p: [usize; D], level: usize) -> usize {
        let (mut h, mut e, mut d) = (0usize, 0usize, 0usize);
        for i in (0..level).rev() {
            let mut b = 0;
            for (k, &x) in p.iter().enumerate() {
                b |= ((x >> i) & 1) << k;
            }
            let (w, e2, d2) = self.next[(e * D + d) << D | b];
            h = (h << D) | w as usize;
            e = e2 as usize;
            d = d2 as usize;
        }
        h
    }
}

impl HilbertTable<3> {
    /// The table read backwards, for walking the curve from index to point (the device box mesh,
    /// `kernels/box_mesh.cu`): `inv[(e·3 + d) << 3 | digit] = bits | e' << 3 | d' << 6`.
    pub fn inverse(&self) -> Vec<u8> {
        let mut inv = vec![0u8; self.next.len()];
        for (k, &(w, e2, d2)) in self.next.iter().enumerate() {
            let (state, bits) = (k >> 3, (k & 7) as u8);
            inv[state << 3 | w as usize] = bits | e2 << 3 | d2 << 6;
        }
        inv
    }

    /// The grid point at curve index `h` on a grid of 2^level points per axis, from [`Self::inverse`]'s
    /// table (the host twin of `box_mesh.cu`'s `hilbert_point`).
    pub fn point(inv: &[u8], h: usize, level: usize) -> [usize; 3] {
        let (mut p, mut e, mut d) = ([0usize; 3], 0usize, 0usize);
        for i in (0..level).rev() {
            let t = inv[(e * 3 + d) << 3 | (h >> (3 * i)) & 7] as usize;
            for (k, pk) in p.iter_mut().enumerate() {
                *pk |= ((t >> k) & 1) << i;
            }
            e = (t >> 3) & 7;
            d = t >> 6;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hilbert_index::ToHilbertIndex;

    /// Every point of small grids and pseudo-random points of the finest ones get the crate's index.
    #[test]
    fn table_lookup_gives_the_crates_indices() {
        let (t2, t3) = (HilbertTable::<2>::new(), HilbertTable::<3>::new());
        for level in 1..=4 {
            let m = 1usize << level;
            for x in 0..m {
                for y in 0..m {
                    assert_eq!(t2.index([x, y], level), [x, y].to_hilbert_index(level));
                    for z in 0..m {
                        assert_eq!(t3.index([x, y, z], level), [x, y, z].to_hilbert_index(level));
                    }
                }
            }
        }
        let mut s = 0x9e3779b97f4a7c15u64;
        let mut rand = |bits: usize| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s as usize) & ((1 << bits) - 1)
        };
        for _ in 0..20000 {
            let p3 = [rand(21), rand(21), rand(21)];
            assert_eq!(t3.index(p3, 21), p3.to_hilbert_index(21), "{p3:?}");
            let p2 = [rand(31), rand(31)];
            assert_eq!(t2.index(p2, 31), p2.to_hilbert_index(31), "{p2:?}");
        }
    }

    /// Walking the inverse table visits every point of the grid once, at the index the forward
    /// table gives it.
    #[test]
    fn inverse_table_inverts_the_index() {
        let t3 = HilbertTable::<3>::new();
        let inv = t3.inverse();
        for level in 0..=4 {
            for h in 0..1usize << (3 * level) {
                let p = HilbertTable::<3>::point(&inv, h, level);
                assert!(p.iter().all(|&x| x < 1 << level), "{p:?}");
                assert_eq!(t3.index(p, level), h, "level {level}, point {p:?}");
            }
        }
    }
}
