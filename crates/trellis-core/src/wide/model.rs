//! [`PairModel`]: an energy whose split term depends only on the two clusters' sizes, their
//! internal sums and their cross sum, with its two models: [`Dasgupta`] (Dasgupta's cost,
//! [`crate::model::DasguptaModel`]) and [`Hcc`] (hierarchical correlation clustering,
//! [`crate::model::CorrelationModel`]). Same potentials, revenue scores and sign conventions as
//! those; the weights are an `n × n` row-major matrix of any size.

use super::WideError;
use crate::model::error::check_beta_scale;
use std::ops::{Add, Sub};

/// What a model sums over pairs of leaves (cheap to copy, added and subtracted exactly as
/// floating-point numbers are).
pub trait Sums:
    Copy + Default + Send + Sync + std::fmt::Debug + Add<Output = Self> + Sub<Output = Self>
{
}

impl Sums for f64 {}

/// The size of a cluster and the sum over its pairs of leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stat<S> {
    /// Number of leaves.
    pub size: usize,
    /// Sum over the pairs of leaves inside.
    pub inside: S,
}

impl<S: Sums> Stat<S> {
    /// The statistics of `a ∪ b` for disjoint `a`, `b` whose cross sum is `cross`.
    #[inline]
    pub fn join(&self, b: &Stat<S>, cross: S) -> Stat<S> {
        Stat {
            size: self.size + b.size,
            inside: self.inside + b.inside + cross,
        }
    }
}

/// A split energy of pairwise form.
pub trait PairModel: Sync {
    /// What is summed over pairs of leaves.
    type Sums: Sums;

    /// The checked weights and temperature.
    fn weights(&self) -> &PairWeights;

    /// Number of leaves.
    fn n_leaves(&self) -> usize {
        self.weights().n
    }

    /// The inverse temperature.
    fn beta(&self) -> f64 {
        self.weights().beta
    }

    /// The summand of leaves `i != j`.
    fn weight(&self, i: usize, j: usize) -> Self::Sums;

    /// `log psi(A, B)` for disjoint clusters with statistics `a`, `b` and cross sum `cross`.
    fn log_psi(&self, a: &Stat<Self::Sums>, b: &Stat<Self::Sums>, cross: Self::Sums) -> f64;

    /// The revenue score ([`crate::model::SplitModel::log_psi_revenue`]).
    fn log_psi_revenue(&self, a: &Stat<Self::Sums>, b: &Stat<Self::Sums>, cross: Self::Sums)
        -> f64;

    /// The statistics of one leaf.
    fn leaf(&self) -> Stat<Self::Sums> {
        Stat {
            size: 1,
            inside: Self::Sums::default(),
        }
    }

    /// `Σ_{i ∈ a, j ∈ b} weight(i, j)` (O(|a| |b|)).
    fn cross_of(&self, a: &[usize], b: &[usize]) -> Self::Sums {
        let mut total = Self::Sums::default();
        for &i in a {
            for &j in b {
                total = total + self.weight(i, j);
            }
        }
        total
    }
}

/// A symmetric `n × n` weight matrix, checked: square, finite off the diagonal, symmetric to
/// 1e-12 relative (as [`crate::model::WeightMatrix`]); the upper triangle's value is kept on
/// both sides and the diagonal is zeroed.
fn checked(n: usize, mut w: Vec<f64>) -> Result<Vec<f64>, WideError> {
    if n == 0 {
        return Err(WideError::Empty);
    }
    if n.checked_mul(n) != Some(w.len()) {
        return Err(WideError::Weights(format!(
            "{} weights for {n} leaves; give a full n × n row-major matrix ({} entries)",
            w.len(),
            n.saturating_mul(n)
        )));
    }
    for i in 0..n {
        w[i * n + i] = 0.0;
        for j in i + 1..n {
            let (a, b) = (w[i * n + j], w[j * n + i]);
            for (r, c, v) in [(i, j, a), (j, i, b)] {
                if !v.is_finite() {
                    return Err(WideError::Weights(format!(
                        "weight w[{r}][{c}] = {v:?} is not a finite number; replace it (e.g. by 0 for no edge)"
                    )));
                }
            }
            if (a - b).abs() > 1e-12 * a.abs().max(b.abs()).max(1.0) {
                return Err(WideError::Weights(format!(
                    "weight matrix is not symmetric: w[{i}][{j}] = {a:?} but w[{j}][{i}] = {b:?}; pass a symmetric matrix"
                )));
            }
            w[j * n + i] = a;
        }
    }
    Ok(w)
}

/// A checked `n × n` weight matrix and inverse temperature: what both models hold.
#[derive(Clone, Debug)]
pub struct PairWeights {
    n: usize,
    w: Vec<f64>,
    beta: f64,
}

impl PairWeights {
    /// `w` checked (square, finite, symmetric; the diagonal zeroed) and `beta` (positive, not
    /// so large that the potentials overflow).
    pub fn new(n: usize, w: Vec<f64>, beta: f64) -> Result<PairWeights, WideError> {
        let w = checked(n, w)?;
        let beta = checked_beta(n, &w, beta)?;
        Ok(PairWeights { n, w, beta })
    }

    /// `w[i][j]` (0 on the diagonal).
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.w[i * self.n + j]
    }
}

/// `beta` checked as the mask models check it ([`crate::model::ModelError::BadBeta`],
/// `BetaTooLarge`).
fn checked_beta(n: usize, w: &[f64], beta: f64) -> Result<f64, WideError> {
    let abs_sum: f64 = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| w[i * n + j].abs())
        .sum();
    Ok(check_beta_scale(beta, n, abs_sum)?)
}

/// Dasgupta's cost over a similarity graph: merging `A` and `B` costs `(|A| + |B|) w(A, B)`,
/// `log psi = -β · cost`; revenue `β (n − |A| − |B|) w(A, B)` (see [`crate::model::dasgupta`]).
#[derive(Clone, Debug)]
pub struct Dasgupta(PairWeights);

impl Dasgupta {
    /// The model of the `n × n` row-major similarities `w` (the diagonal is ignored) at inverse
    /// temperature `beta`.
    pub fn new(n: usize, w: Vec<f64>, beta: f64) -> Result<Dasgupta, WideError> {
        Ok(Dasgupta(PairWeights::new(n, w, beta)?))
    }
}

impl PairModel for Dasgupta {
    type Sums = f64;

    fn weights(&self) -> &PairWeights {
        &self.0
    }

    #[inline]
    fn weight(&self, i: usize, j: usize) -> f64 {
        self.0.at(i, j)
    }

    #[inline]
    fn log_psi(&self, a: &Stat<f64>, b: &Stat<f64>, cross: f64) -> f64 {
        -self.0.beta * (a.size + b.size) as f64 * cross
    }

    #[inline]
    fn log_psi_revenue(&self, a: &Stat<f64>, b: &Stat<f64>, cross: f64) -> f64 {
        self.0.beta * (self.0.n - a.size - b.size) as f64 * cross
    }

    fn cross_of(&self, a: &[usize], b: &[usize]) -> f64 {
        let (n, mut total) = (self.0.n, 0.0);
        for &i in a {
            let row = &self.0.w[i * n..(i + 1) * n];
            for &j in b {
                total += row[j];
            }
        }
        total
    }
}

/// Positive and negative parts summed apart (the statistics of [`Hcc`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signed {
    /// Sum of the positive weights.
    pub positive: f64,
    /// Sum of the negative weights (≤ 0).
    pub negative: f64,
}

impl Add for Signed {
    type Output = Signed;
    #[inline]
    fn add(self, o: Signed) -> Signed {
        Signed {
            positive: self.positive + o.positive,
            negative: self.negative + o.negative,
        }
    }
}

impl Sub for Signed {
    type Output = Signed;
    #[inline]
    fn sub(self, o: Signed) -> Signed {
        Signed {
            positive: self.positive - o.positive,
            negative: self.negative - o.negative,
        }
    }
}

impl Sums for Signed {}

/// Hierarchical correlation clustering over signed affinities: merging `A` and `B` costs the
/// positive weight across them plus the magnitude of the negative weight inside each,
/// `log psi = -β E`; revenue `−β [N_in(A ∪ B) − P(A, B)]` (see [`crate::model::correlation`]).
#[derive(Clone, Debug)]
pub struct Hcc(PairWeights);

impl Hcc {
    /// The model of the `n × n` row-major signed affinities `w` (the diagonal is ignored) at
    /// inverse temperature `beta`.
    pub fn new(n: usize, w: Vec<f64>, beta: f64) -> Result<Hcc, WideError> {
        Ok(Hcc(PairWeights::new(n, w, beta)?))
    }
}

impl PairModel for Hcc {
    type Sums = Signed;

    fn weights(&self) -> &PairWeights {
        &self.0
    }

    #[inline]
    fn weight(&self, i: usize, j: usize) -> Signed {
        let x = self.0.at(i, j);
        Signed {
            positive: x.max(0.0),
            negative: x.min(0.0),
        }
    }

    #[inline]
    fn log_psi(&self, a: &Stat<Signed>, b: &Stat<Signed>, cross: Signed) -> f64 {
        let energy = cross.positive - a.inside.negative - b.inside.negative;
        -self.0.beta * energy
    }

    #[inline]
    fn log_psi_revenue(&self, a: &Stat<Signed>, b: &Stat<Signed>, cross: Signed) -> f64 {
        let inside_negative = a.inside.negative + b.inside.negative + cross.negative;
        -self.0.beta * (-inside_negative - cross.positive)
    }
}
