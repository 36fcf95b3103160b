//! [`Subset`]: a set of leaves `0..N` (N <= 64) stored as a bitmask.
//!
//! Clusters are subsets; a split of a cluster `S` into siblings `(A, B)` is enumerated once per
//! unordered pair by requiring `A` to hold the lowest element of `S`.

use std::fmt;

/// A set of leaf indices in `0..64`, stored as a bitmask (bit `i` set = leaf `i` present).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Subset(pub u64);

impl Subset {
    /// The largest number of leaves a `Subset` can hold.
    pub const MAX_LEAVES: usize = 64;

    /// The empty set.
    pub const EMPTY: Subset = Subset(0);

    /// The set `{i}`.
    ///
    /// # Panics
    /// If `i >= 64` (a `Subset` is a 64-bit mask).
    #[inline]
    pub fn singleton(i: usize) -> Subset {
        assert!(
            i < Self::MAX_LEAVES,
            "a Subset holds leaves 0..64, got leaf {i}"
        );
        Subset(1u64 << i)
    }

    /// The set `{0, 1, ..., n-1}`.
    ///
    /// # Panics
    /// If `n > 64` (a `Subset` is a 64-bit mask).
    #[inline]
    pub fn full(n: usize) -> Subset {
        assert!(
            n <= Self::MAX_LEAVES,
            "a Subset holds at most 64 leaves, got {n}"
        );
        if n == 64 {
            Subset(u64::MAX)
        } else {
            Subset((1u64 << n) - 1)
        }
    }

    /// Builds a subset from leaf indices.
    ///
    /// # Panics
    /// If an index is 64 or more (a `Subset` is a 64-bit mask).
    pub fn from_indices<I: IntoIterator<Item = usize>>(it: I) -> Subset {
        it.into_iter()
            .fold(Subset::EMPTY, |s, i| s.union(Subset::singleton(i)))
    }

    /// The bitmask.
    #[inline]
    pub fn bits(self) -> u64 {
        self.0
    }

    /// The bitmask as an index into a table of size `2^N`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Number of leaves in the set.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// True for the empty set.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True if the set holds exactly one leaf.
    #[inline]
    pub fn is_singleton(self) -> bool {
        self.0 != 0 && self.0 & (self.0 - 1) == 0
    }

    /// True if leaf `i` is in the set.
    #[inline]
    pub fn contains(self, i: usize) -> bool {
        i < 64 && self.0 >> i & 1 == 1
    }

    /// The smallest leaf index in the set (`None` for the empty set).
    #[inline]
    pub fn lowest(self) -> Option<usize> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as usize)
    }

    /// The set `{lowest}` (empty for the empty set).
    #[inline]
    pub fn lowest_bit(self) -> Subset {
        Subset(self.0 & self.0.wrapping_neg())
    }

    /// Set union.
    #[inline]
    pub fn union(self, other: Subset) -> Subset {
        Subset(self.0 | other.0)
    }

    /// Set intersection.
    #[inline]
    pub fn intersection(self, other: Subset) -> Subset {
        Subset(self.0 & other.0)
    }

    /// Set difference `self \ other`.
    #[inline]
    pub fn minus(self, other: Subset) -> Subset {
        Subset(self.0 & !other.0)
    }

    /// Whether `self` is a valid cluster of `n` points: non-empty and inside `0..n`.
    pub fn is_cluster_of(self, n: usize) -> bool {
        !self.is_empty() && (n >= Self::MAX_LEAVES || self.is_subset_of(Subset::full(n)))
    }

    /// True if every leaf of `self` is in `other`.
    #[inline]
    pub fn is_subset_of(self, other: Subset) -> bool {
        self.0 & !other.0 == 0
    }

    /// True if the two sets share no leaf.
    #[inline]
    pub fn is_disjoint(self, other: Subset) -> bool {
        self.0 & other.0 == 0
    }

    /// The leaf indices in increasing order.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                None
            } else {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(i)
            }
        })
    }

    /// Every unordered split of `self` into two non-empty parts `(A, B)`, once each, with `A`
    /// holding the lowest element. A set of `k` leaves has `2^(k-1) - 1` splits.
    #[inline]
    pub fn splits(self) -> Splits {
        let low = self.lowest_bit();
        let rest = self.minus(low).0;
        Splits {
            set: self.0,
            low: low.0,
            rest,
            sub: rest,
            done: rest == 0,
        }
    }

    /// All subsets of `{0..n}` with exactly `k` elements, in increasing numeric order.
    ///
    /// # Panics
    /// If `n > 64` (a `Subset` is a 64-bit mask).
    pub fn of_size(n: usize, k: usize) -> impl Iterator<Item = Subset> {
        assert!(
            n <= Self::MAX_LEAVES,
            "a Subset holds at most 64 leaves, got {n}"
        );
        // u128 so that n = 64 and Gosper's step past the last subset do not overflow.
        let limit = 1u128 << n;
        let mut cur: u128 = if k == 0 {
            0
        } else if k > n {
            limit
        } else {
            (1u128 << k) - 1
        };
        let mut first = true;
        std::iter::from_fn(move || {
            if k == 0 {
                if first {
                    first = false;
                    return Some(Subset(0));
                }
                return None;
            }
            if cur >= limit {
                return None;
            }
            let out = cur as u64;
            // Gosper's hack: next larger integer with the same popcount.
            let c = cur & cur.wrapping_neg();
            let r = cur + c;
            cur = (((r ^ cur) >> 2) / c) | r;
            Some(Subset(out))
        })
    }
}

/// Iterator over the unordered splits of a set; see [`Subset::splits`].
pub struct Splits {
    set: u64,
    low: u64,
    rest: u64,
    sub: u64,
    done: bool,
}

impl Iterator for Splits {
    type Item = (Subset, Subset);

    #[inline]
    fn next(&mut self) -> Option<(Subset, Subset)> {
        // A = low + `sub`, with `sub` running over the proper submasks of `rest` in decreasing
        // order (sub == rest would leave B empty); the last one is sub == 0, A = {low}.
        if self.done {
            return None;
        }
        self.sub = (self.sub.wrapping_sub(1)) & self.rest;
        let a = self.sub | self.low;
        if self.sub == 0 {
            self.done = true;
        }
        Some((Subset(a), Subset(self.set & !a)))
    }
}

impl fmt::Debug for Subset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl fmt::Display for Subset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (k, i) in self.iter().enumerate() {
            if k > 0 {
                write!(f, ",")?;
            }
            write!(f, "{i}")?;
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn splits_enumerate_each_unordered_pair_once() {
        for n in 1..=8 {
            let s = Subset::full(n);
            let splits: Vec<_> = s.splits().collect();
            assert_eq!(splits.len(), (1usize << (n - 1)) - 1, "n = {n}");
            let mut seen = HashSet::new();
            for (a, b) in splits {
                assert!(!a.is_empty() && !b.is_empty());
                assert!(a.is_disjoint(b));
                assert_eq!(a.union(b), s);
                assert!(a.contains(0));
                assert!(seen.insert(a));
            }
        }
        // A non-contiguous set.
        let s = Subset::from_indices([1, 4, 6]);
        let got: HashSet<_> = s.splits().collect();
        let want: HashSet<_> = [
            (Subset::from_indices([1]), Subset::from_indices([4, 6])),
            (Subset::from_indices([1, 4]), Subset::from_indices([6])),
            (Subset::from_indices([1, 6]), Subset::from_indices([4])),
        ]
        .into_iter()
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn of_size_matches_binomial() {
        for n in 0..=10usize {
            let mut total = 0;
            for k in 0..=n {
                let v: Vec<_> = Subset::of_size(n, k).collect();
                assert!(v.iter().all(|s| s.len() == k && s.0 < 1 << n));
                assert!(v.windows(2).all(|w| w[0] < w[1]));
                total += v.len();
            }
            assert_eq!(total, 1 << n);
        }
    }

    #[test]
    fn basic_set_operations() {
        let s = Subset::from_indices([0, 3, 5]);
        assert_eq!(s.len(), 3);
        assert_eq!(s.lowest(), Some(0));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3, 5]);
        assert!(Subset::singleton(3).is_singleton());
        assert!(!s.is_singleton());
        assert_eq!(s.to_string(), "{0,3,5}");
        assert_eq!(Subset::full(64).len(), 64);
        assert_eq!(s.minus(Subset::singleton(3)), Subset::from_indices([0, 5]));
        assert_eq!(
            Subset::of_size(64, 64).collect::<Vec<_>>(),
            vec![Subset(u64::MAX)]
        );
        assert_eq!(Subset::of_size(64, 63).count(), 64);
        assert!(Subset::singleton(63).is_cluster_of(100));
    }
}
