//! Per-pair values of a particle's active clusters (ε, cached Bessel terms, SMC1 clocks), stored
//! as one row per slot and shared between particles.
//!
//! Slot pair (a, b)'s value lives in the row of the slot written more recently (its `birth`
//! stage; leaves are born at 0 and share the initial rows). Merging writes one fresh row for
//! the new cluster's slot, so a particle's copy at resampling costs n reference counts instead of
//! n² numbers, and rows no particle uses any more are freed.

use std::sync::Arc;

/// Symmetric per-pair values over n slots.
#[derive(Clone, Debug)]
pub(super) struct PairTable<T> {
    rows: Vec<Arc<Vec<T>>>,
    birth: Vec<usize>,
}

impl<T: Copy + Default> PairTable<T> {
    /// Rows shared with `rows` (each of length n), every slot born at stage 0.
    pub(super) fn shared(rows: &[Arc<Vec<T>>]) -> Self {
        PairTable {
            rows: rows.to_vec(),
            birth: vec![0; rows.len()],
        }
    }

    /// n slots with default values in rows of their own.
    pub(super) fn filled(n: usize) -> Self {
        PairTable {
            rows: (0..n).map(|_| Arc::new(vec![T::default(); n])).collect(),
            birth: vec![0; n],
        }
    }

    /// The value of slot pair (a, b).
    #[inline]
    pub(super) fn get(&self, a: usize, b: usize) -> T {
        if self.birth[a] >= self.birth[b] {
            self.rows[a][b]
        } else {
            self.rows[b][a]
        }
    }

    /// Sets (a, b) and (b, a) in both rows (copying a row first if another particle shares it).
    pub(super) fn set_pair(&mut self, a: usize, b: usize, v: T) {
        Arc::make_mut(&mut self.rows[a])[b] = v;
        Arc::make_mut(&mut self.rows[b])[a] = v;
    }

    /// Gives slot `a` a fresh row born at `stage` (> every earlier birth) and returns it to be
    /// filled for the active slots.
    pub(super) fn new_row(&mut self, a: usize, stage: usize) -> &mut Vec<T> {
        let n = self.rows.len();
        self.birth[a] = stage;
        self.rows[a] = Arc::new(vec![T::default(); n]);
        Arc::make_mut(&mut self.rows[a])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_row_wins_and_clones_share_rows() {
        let base: Vec<Arc<Vec<f64>>> = (0..4)
            .map(|i| Arc::new((0..4).map(|j| (i + j) as f64).collect()))
            .collect();
        let mut t = PairTable::shared(&base);
        assert_eq!(t.get(1, 3), 4.0);
        let copy = t.clone();
        let row = t.new_row(1, 1);
        row[0] = 10.0;
        row[2] = 12.0;
        assert_eq!((t.get(1, 0), t.get(0, 1), t.get(2, 1)), (10.0, 10.0, 12.0));
        assert_eq!(t.get(0, 2), 2.0);
        // The copy still sees the old rows.
        assert_eq!(copy.get(1, 0), 1.0);
        assert_eq!(Arc::strong_count(&base[0]), 3);
        let mut f: PairTable<Option<u8>> = PairTable::filled(3);
        f.set_pair(0, 2, Some(7));
        assert_eq!((f.get(2, 0), f.get(0, 1)), (Some(7), None));
    }
}
