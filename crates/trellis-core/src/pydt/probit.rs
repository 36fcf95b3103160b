//! Binary data through a probit link (spec §2.10, paper §5.4): P(y = 1 | x) = Φ(x) at each leaf
//! location and dimension. The sampler augments each entry with z ~ N(x, 1) truncated to z > 0
//! (y = 1) or z < 0 (y = 0); given z the leaves are Gaussian observations of variance 1.

use super::bp::Leaves;
use super::PydtError;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal};

/// Binary observations, row-major n × d.
#[derive(Debug, Clone, PartialEq)]
pub struct Binary {
    /// Number of points.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Entries (`true` = 1).
    pub y: Vec<bool>,
}

impl Binary {
    /// From rows of 0/1 values; any other value (or NaN) is an error naming its row and column.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self, PydtError> {
        let n = rows.len();
        let d = rows.first().map_or(0, Vec::len);
        let mut y = Vec::with_capacity(n * d);
        for (i, r) in rows.iter().enumerate() {
            if r.len() != d {
                return Err(PydtError::Data(format!(
                    "row {i} has {} values, row 0 has {d}",
                    r.len()
                )));
            }
            for (k, &v) in r.iter().enumerate() {
                if v == 0.0 || v == 1.0 {
                    y.push(v == 1.0);
                } else {
                    return Err(PydtError::Data(format!(
                        "the probit model needs 0/1 values, row {i} column {k} is {v}; binarise the data or use the Gaussian model"
                    )));
                }
            }
        }
        Ok(Self { n, d, y })
    }

    /// Initial auxiliaries: z = +0.5 for ones and −0.5 for zeros, variance 1.
    pub fn initial_leaves(&self) -> Leaves {
        Leaves {
            n: self.n,
            d: self.d,
            mean: self.y.iter().map(|&b| if b { 0.5 } else { -0.5 }).collect(),
            var: vec![1.0; self.y.len()],
        }
    }
}

/// Draw X ~ N(0, 1) conditioned on X > a: plain rejection for a < 0.45, otherwise Robert's (1995)
/// exponential rejection sampler with the optimal rate (a + √(a² + 4))/2.
pub fn std_normal_above<R: Rng + ?Sized>(a: f64, rng: &mut R) -> f64 {
    if a < 0.45 {
        loop {
            let x: f64 = StandardNormal.sample(rng);
            if x > a {
                return x;
            }
        }
    }
    let lambda = 0.5 * (a + (a * a + 4.0).sqrt());
    loop {
        let e: f64 = Exp1.sample(rng);
        let x = a + e / lambda;
        let u: f64 = rng.random();
        if u.ln() < -0.5 * (x - lambda) * (x - lambda) {
            return x;
        }
    }
}

/// z ~ N(x, 1) truncated to z > 0 when `y`, z < 0 otherwise.
pub fn sample_auxiliary<R: Rng + ?Sized>(x: f64, y: bool, rng: &mut R) -> f64 {
    assert!(
        x.is_finite(),
        "probit auxiliary: leaf location {x} is not finite"
    );
    if y {
        x + std_normal_above(-x, rng)
    } else {
        x - std_normal_above(x, rng)
    }
}
