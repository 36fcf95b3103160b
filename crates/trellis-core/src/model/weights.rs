//! [`WeightMatrix`]: symmetric pairwise weights (similarities or affinities) over `N` points,
//! the input of the graph-based energies ([`super::dasgupta`], [`super::correlation`]).

use super::error::{check_table_size, ModelError};

/// A symmetric matrix of finite pairwise weights; the diagonal is ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightMatrix {
    n: usize,
    w: Vec<f64>,
}

impl WeightMatrix {
    /// The most points a matrix may have (clusters over them are 64-bit masks).
    pub const MAX_POINTS: usize = 64;

    /// `Err(TooLarge)` for more than [`WeightMatrix::MAX_POINTS`] points: what a caller can
    /// check before it reads or converts `n` rows.
    pub fn check_len(n: usize) -> Result<(), ModelError> {
        if n > Self::MAX_POINTS {
            return Err(ModelError::TooLarge { n });
        }
        Ok(())
    }

    /// Checks and stores `rows` (square, symmetric to 1e-12 relative, finite off the diagonal).
    pub fn new(rows: Vec<Vec<f64>>) -> Result<WeightMatrix, ModelError> {
        let n = rows.len();
        Self::check_len(n)?;
        for (row, r) in rows.iter().enumerate() {
            if r.len() != n {
                return Err(ModelError::NotSquare {
                    row,
                    len: r.len(),
                    n,
                });
            }
        }
        let mut w = vec![0.0; n * n];
        for (i, row) in rows.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if i == j {
                    continue;
                }
                if !v.is_finite() {
                    return Err(ModelError::NotFinite { i, j, v });
                }
                let b = rows[j][i];
                if i < j && (v - b).abs() > 1e-12 * v.abs().max(b.abs()).max(1.0) {
                    return Err(ModelError::NotSymmetric { i, j, a: v, b });
                }
                // Store the upper triangle's value on both sides: exactly symmetric.
                w[i * n + j] = if i < j { v } else { b };
            }
        }
        Ok(WeightMatrix { n, w })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.n
    }

    /// `Σ_{i<j} |w_ij|` (infinite when the sum overflows).
    pub fn abs_sum(&self) -> f64 {
        (0..self.n)
            .flat_map(|i| (i + 1..self.n).map(move |j| (i, j)))
            .map(|(i, j)| self.at(i, j).abs())
            .sum()
    }

    /// True for an empty matrix.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `w[i][j]` (0 on the diagonal); `None` when `i` or `j` is not below [`WeightMatrix::len`].
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        (i < self.n && j < self.n).then(|| self.w[i * self.n + j])
    }

    /// `w[i][j]` for indices known to be in range (callers iterate over `0..len`).
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.w[i * self.n + j]
    }

    /// For every subset of the points (indexed by bitmask), the sum of `f(w_ij)` over its pairs
    /// `i < j`, by adding the highest point last (`O(N 2^N)`). Errors for more than
    /// [`super::error::MAX_TABLE_LEAVES`] points (the table would not fit in memory).
    pub fn pair_sums(&self, f: impl Fn(f64) -> f64) -> Result<Vec<f64>, ModelError> {
        let n = self.n;
        check_table_size(n)?;
        let mut out = vec![0.0; 1usize << n];
        for b in 1u64..(1u64 << n) {
            let h = 63 - b.leading_zeros() as usize;
            let rest = b & !(1u64 << h);
            let mut s = out[rest as usize];
            let mut r = rest;
            while r != 0 {
                let j = r.trailing_zeros() as usize;
                s += f(self.at(j, h));
                r &= r - 1;
            }
            out[b as usize] = s;
        }
        Ok(out)
    }

    /// The sum of `f(w_ij)` over the pairs `i < j` of one subset, in the same order as
    /// [`WeightMatrix::pair_sums`] (so both agree to the bit). Points of `s` at or above
    /// [`WeightMatrix::len`] are not in the matrix and are left out.
    pub fn pair_sum(&self, s: crate::subset::Subset, f: impl Fn(f64) -> f64) -> f64 {
        let bits = if self.n >= 64 {
            s.0
        } else {
            s.0 & ((1u64 << self.n) - 1)
        };
        // `h` increasing, and for each `h` the points `j < h` increasing (no allocation).
        let mut total = 0.0;
        let mut rest = bits;
        while rest != 0 {
            let h = rest.trailing_zeros() as usize;
            let mut lower = bits & ((1u64 << h) - 1);
            while lower != 0 {
                let j = lower.trailing_zeros() as usize;
                total += f(self.at(j, h));
                lower &= lower - 1;
            }
            rest &= rest - 1;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_errors_name_the_problem() {
        assert!(matches!(
            WeightMatrix::new(vec![vec![0.0, 1.0], vec![1.0]]),
            Err(ModelError::NotSquare { .. })
        ));
        assert!(matches!(
            WeightMatrix::new(vec![vec![0.0, 1.0], vec![2.0, 0.0]]),
            Err(ModelError::NotSymmetric { .. })
        ));
        let e = WeightMatrix::new(vec![vec![0.0, f64::NAN], vec![f64::NAN, 0.0]]).unwrap_err();
        assert!(e.to_string().contains("not a finite number"));
        // NaN on the diagonal is ignored.
        assert!(WeightMatrix::new(vec![vec![f64::NAN, 1.0], vec![1.0, 0.0]]).is_ok());
    }

    #[test]
    fn pair_sums_match_direct_sums() {
        let rows: Vec<Vec<f64>> = (0..6)
            .map(|i| (0..6).map(|j| ((i * 7 + j * 7) % 5) as f64 - 2.0).collect())
            .collect();
        let w = WeightMatrix::new(rows).unwrap();
        let t = w.pair_sums(|x| x).unwrap();
        for b in 0..64u64 {
            let s = crate::subset::Subset(b);
            assert_eq!(t[b as usize].to_bits(), w.pair_sum(s, |x| x).to_bits());
        }
    }
}
