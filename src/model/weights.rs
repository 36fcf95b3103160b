//! [`WeightMatrix`]: symmetric pairwise weights (similarities or affinities) over `N` points,
//! the input of the graph-based energies ([`super::dasgupta`], [`super::correlation`]).

/// Problems with a weight matrix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WeightError {
    /// Not square.
    #[error("weight matrix row {row} has {len} entries but there are {n} rows; it must be square")]
    NotSquare {
        /// Offending row.
        row: usize,
        /// Its length.
        len: usize,
        /// Number of rows.
        n: usize,
    },
    /// `w[i][j] != w[j][i]`.
    #[error("weight matrix is not symmetric: w[{i}][{j}] = {a} but w[{j}][{i}] = {b}")]
    NotSymmetric {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// `w[i][j]`.
        a: f64,
        /// `w[j][i]`.
        b: f64,
    },
    /// NaN or infinite weight.
    #[error("weight w[{i}][{j}] = {v} is not a finite number")]
    NotFinite {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// The value.
        v: f64,
    },
    /// Too many points for a bitmask cluster.
    #[error("{n} points: at most 64 are supported")]
    TooLarge {
        /// Number of points.
        n: usize,
    },
}

/// A symmetric matrix of finite pairwise weights; the diagonal is ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightMatrix {
    n: usize,
    w: Vec<f64>,
}

impl WeightMatrix {
    /// Checks and stores `rows` (square, symmetric to 1e-12 relative, finite off the diagonal).
    pub fn new(rows: Vec<Vec<f64>>) -> Result<WeightMatrix, WeightError> {
        let n = rows.len();
        if n > 64 {
            return Err(WeightError::TooLarge { n });
        }
        for (row, r) in rows.iter().enumerate() {
            if r.len() != n {
                return Err(WeightError::NotSquare {
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
                    return Err(WeightError::NotFinite { i, j, v });
                }
                let b = rows[j][i];
                if i < j && (v - b).abs() > 1e-12 * v.abs().max(b.abs()).max(1.0) {
                    return Err(WeightError::NotSymmetric { i, j, a: v, b });
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

    /// True for an empty matrix.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `w[i][j]` (0 on the diagonal).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.w[i * self.n + j]
    }

    /// For every subset of the points (indexed by bitmask), the sum of `f(w_ij)` over its pairs
    /// `i < j`, by adding the highest point last (`O(N 2^N)`).
    pub fn pair_sums(&self, f: impl Fn(f64) -> f64) -> Vec<f64> {
        let n = self.n;
        let mut out = vec![0.0; 1usize << n];
        for b in 1u64..(1u64 << n) {
            let h = 63 - b.leading_zeros() as usize;
            let rest = b & !(1u64 << h);
            let mut s = out[rest as usize];
            let mut r = rest;
            while r != 0 {
                let j = r.trailing_zeros() as usize;
                s += f(self.get(j, h));
                r &= r - 1;
            }
            out[b as usize] = s;
        }
        out
    }

    /// The sum of `f(w_ij)` over the pairs `i < j` of one subset, in the same order as
    /// [`WeightMatrix::pair_sums`] (so both agree to the bit).
    pub fn pair_sum(&self, s: crate::subset::Subset, f: impl Fn(f64) -> f64) -> f64 {
        let idx: Vec<usize> = s.iter().collect();
        let mut total = 0.0;
        for (k, &h) in idx.iter().enumerate() {
            for &j in &idx[..k] {
                total += f(self.get(j, h));
            }
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
            Err(WeightError::NotSquare { .. })
        ));
        assert!(matches!(
            WeightMatrix::new(vec![vec![0.0, 1.0], vec![2.0, 0.0]]),
            Err(WeightError::NotSymmetric { .. })
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
        let t = w.pair_sums(|x| x);
        for b in 0..64u64 {
            let s = crate::subset::Subset(b);
            assert_eq!(t[b as usize].to_bits(), w.pair_sum(s, |x| x).to_bits());
        }
    }
}
