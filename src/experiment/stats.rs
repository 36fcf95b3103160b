//! Small statistics shared by the experiment kinds (one copy each): mean and standard
//! deviation, Pearson's chi-square test, and digit grouping for captions.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Mean and population standard deviation of a set of values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MeanStd {
    /// Mean.
    pub mean: f64,
    /// Standard deviation (population, ddof = 0).
    pub std: f64,
    /// Values counted.
    pub n: usize,
}

/// Mean and population std of the finite values (NaN for both when there are none).
pub fn mean_std(values: impl IntoIterator<Item = f64>) -> MeanStd {
    let v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return MeanStd {
            mean: f64::NAN,
            std: f64::NAN,
            n,
        };
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    MeanStd {
        mean,
        std: var.sqrt(),
        n,
    }
}

/// Chi-square statistic, degrees of freedom, p-value.
pub type ChiSquareTest = (f64, usize, f64);

/// Pearson's chi-square statistic of `observed` counts against `expected` probabilities, bins with
/// an expected count below 5 pooled into one; returns (statistic, degrees of freedom, p-value).
pub fn chi_square(observed: &[f64], expected_prob: &[f64]) -> ChiSquareTest {
    let total: f64 = observed.iter().sum();
    let (mut stat, mut bins) = (0.0, 0usize);
    let (mut po, mut pe) = (0.0, 0.0);
    for (&o, &p) in observed.iter().zip(expected_prob) {
        let e = p * total;
        if e < 5.0 {
            po += o;
            pe += e;
        } else {
            stat += (o - e).powi(2) / e;
            bins += 1;
        }
    }
    if pe > 0.0 {
        stat += (po - pe).powi(2) / pe;
        bins += 1;
    }
    let dof = bins.saturating_sub(1).max(1);
    let p = ChiSquared::new(dof as f64)
        .map(|c| 1.0 - c.cdf(stat))
        .unwrap_or(f64::NAN);
    (stat, dof, p)
}

/// `1016064000` as `"1,016,064,000"`.
pub fn thousands(k: u128) -> String {
    let digits = k.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(1_016_064_000), "1,016,064,000");
        assert_eq!(thousands(83_160), "83,160");
        assert_eq!(thousands(7), "7");
    }

    #[test]
    fn mean_std_skips_non_finite_values() {
        let s = mean_std([1.0, 3.0, f64::NEG_INFINITY]);
        assert_eq!((s.mean, s.std, s.n), (2.0, 1.0, 2));
        assert!(mean_std([]).mean.is_nan());
    }

    #[test]
    fn chi_square_of_a_perfect_fit_has_p_one() {
        let (stat, dof, p) = chi_square(&[50.0, 50.0], &[0.5, 0.5]);
        assert_eq!((stat, dof), (0.0, 1));
        assert!((p - 1.0).abs() < 1e-12);
    }
}
