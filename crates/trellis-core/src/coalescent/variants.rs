//! The SMC variants of coalescent clustering (spec §3.6–§3.10): PRIOR-PRIOR, PRIOR-POST and
//! POST-POST (Teh, Daumé & Roy), SMC1 (Görür & Teh's race), MPOST1 and MPOST2 (Henao & Lucas).
//!
//! Every variant runs `M` particles through the n − 1 stages of a ranked history, multiplies each
//! particle's weight by its incremental weight ω and resamples systematically when the effective
//! sample size drops below `resample_threshold · M` ([`super::smc::Population`]). The data are
//! whitened (spec §1); `ln_det_half` = ½ log|Φ| enters once per Gaussian normaliser.
//!
//! Proposals and weights at stage k (λ_k pairs, f_C(Δ) = e^{−λ_k Δ} Z_C(Δ), I_C = ∫ f_C):
//!
//! | variant | pair | Δ | ω (exact mode) | ω (paper-faithful) |
//! |---|---|---|---|---|
//! | PRIOR-PRIOR | uniform | Exp(λ_k) | Z_C(Δ) | same |
//! | PRIOR-POST | ∝ Z_C(Δ) | Exp(λ_k) | Σ_C Z_C(Δ) / λ_k | same |
//! | POST-POST | ∝ I_C (true integral) | truncated GIG | Σ_C I_C | same |
//! | MPOST1 | ∝ I_C (Bessel) | truncated GIG | Σ_C I_C | Σ_C I_C without P(V ≥ r) |
//! | MPOST2 | ∝ Ẑ_C (Bessel at λ = 1) | truncated GIG | I_{C*} Σ_C Ẑ_C / Ẑ_{C*} | Σ_C Ẑ_C |
//! | SMC1 | race of per-pair clocks (rate 1) | from pair creation | Π Ī_new / Π Z_losers | Ī without P(V ≥ r) |
//!
//! POST-POST always uses each pair's true integral: the Bessel formula times P(V ≥ r), the
//! latter by quadrature (Teh et al. integrated numerically; spec §3.7). MPOST1 uses HL eq. 7's
//! Bessel formula alone in paper-faithful mode (HL's normaliser, about 10x cheaper per pair), and
//! is the same algorithm as POST-POST in exact mode. In `exact` mode every ω is a true importance weight, so exp of the log-evidence
//! estimate is unbiased for p(X) (tested on the spec's n = 3 example); `paper_faithful` reproduces
//! HL, whose normaliser ignores the truncation V ≥ r (spec §3.5, §7 item 6) and whose MPOST2 weight
//! is approximate (HL eq. 13). Ẑ_C is HL's eq. 13 plus the stage constants that make it equal I_C
//! at λ = 1: log Ẑ_C = log K_λ̃(√ε) + (λ̃/2) log ε + λ_k r/2 − (d/2) log 2π − ½ log|Φ|.
//!
//! So `log_evidence` estimates log p(X) only in exact mode. In paper-faithful mode it is the log
//! of HL's weight total, not an estimate of log p(X): measured against the exact value, MPOST1's
//! lies +0.3 to +2.6 nats and MPOST2's +1 to +12 nats above, without shrinking as particles are
//! added. Exact mode is unbiased in p(X) but not always usable: SMC1's weights (a ratio of
//! products over the race's losers) can have infinite variance, and on a 5-point instance its
//! log-evidence was still 0.8 nats low at 10⁵ particles.
//!
//! Determinism: particle p at stage k draws from its own generator seeded by (seed, k, p), and
//! resampling from (seed, k); results do not depend on the thread count.

use super::gig::{ln_bessel_k, GigError, MergeTime, WeightMode};
use super::history::{merge_unchecked, pair_rate, sq_dist, Cluster, History, HistoryError};
use super::pairs::PairTable;
use super::smc::{Population, SmcError};
use crate::numeric::log_sum_exp;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp1};
use rayon::prelude::*;
use std::f64::consts::PI;
use std::sync::Arc;

/// One of the SMC algorithms of spec §3.7, §3.9 and §3.10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Δ and pair from the prior; weight Z_C(Δ).
    PriorPrior,
    /// Δ from the prior, pair from its local posterior.
    PriorPost,
    /// Pair and Δ from the local posterior, pair integrals by quadrature.
    PostPost,
    /// Görür & Teh's race: every pair proposes its merge time once, at its creation.
    Smc1,
    /// Henao & Lucas: POST-POST with the Bessel normaliser (HL eq. 7).
    Mpost1,
    /// Henao & Lucas: pair chosen with the λ-free Bessel term (HL eq. 13), O(n²) Bessel calls.
    Mpost2,
}

impl Variant {
    /// Every variant, in the order of the papers' tables.
    pub const ALL: [Variant; 6] = [
        Variant::PriorPrior,
        Variant::PriorPost,
        Variant::PostPost,
        Variant::Smc1,
        Variant::Mpost1,
        Variant::Mpost2,
    ];

    /// The name used in configs and tables (`post_post`, `mpost2`, …).
    pub fn name(self) -> &'static str {
        match self {
            Variant::PriorPrior => "prior_prior",
            Variant::PriorPost => "prior_post",
            Variant::PostPost => "post_post",
            Variant::Smc1 => "smc1",
            Variant::Mpost1 => "mpost1",
            Variant::Mpost2 => "mpost2",
        }
    }

    /// The papers' spelling (`POST-POST`, `MPOST2`, …).
    pub fn display(self) -> &'static str {
        match self {
            Variant::PriorPrior => "PRIOR-PRIOR",
            Variant::PriorPost => "PRIOR-POST",
            Variant::PostPost => "POST-POST",
            Variant::Smc1 => "SMC1",
            Variant::Mpost1 => "MPOST1",
            Variant::Mpost2 => "MPOST2",
        }
    }
}

/// Settings of one SMC run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmcSettings {
    /// The algorithm.
    pub variant: Variant,
    /// Number of particles M ≥ 1.
    pub particles: usize,
    /// Resample when ESS < threshold · M (spec §7 item 15: 0.5).
    pub resample_threshold: f64,
    /// Normalisers with or without the truncation factor (spec §3.5).
    pub weight_mode: WeightMode,
    /// Seed of every random draw.
    pub seed: u64,
    /// Step the particles in parallel (rayon) or one after another on the calling thread (for
    /// one-core timings, or when the caller parallelises over runs). Same numbers either way.
    pub parallel: bool,
}

impl SmcSettings {
    /// M particles of `variant`, threshold 0.5, exact weights.
    pub fn new(variant: Variant, particles: usize, seed: u64) -> Self {
        SmcSettings {
            variant,
            particles,
            resample_threshold: 0.5,
            weight_mode: WeightMode::Exact,
            seed,
            parallel: true,
        }
    }
}

/// Errors of [`run_smc`] (one line each).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SmcRunError {
    /// Bad data or a degenerate merge.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// A merge-time density that cannot be normalised.
    #[error(transparent)]
    Gig(#[from] GigError),
    /// Bad weights.
    #[error(transparent)]
    Smc(#[from] SmcError),
    /// A bad setting.
    #[error("smc setting `{name}` = {value} {reason}")]
    Setting {
        /// The setting.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        reason: &'static str,
    },
    /// Two identical points (their merge-time density cannot be normalised for d ≥ 2).
    #[error(
        "points {i} and {j} are identical; jitter or merge duplicate points before clustering"
    )]
    Duplicate {
        /// First point.
        i: usize,
        /// Second point.
        j: usize,
    },
    /// [`crate::cancel::cancel_all`] was called while the SMC ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
    /// Every particle reached weight zero.
    #[error("every particle has weight zero at stage {stage}; the data are impossible under the model (check for duplicate points or a singular covariance)")]
    AllImpossible {
        /// The stage.
        stage: usize,
    },
}

/// The weighted particle set of one run.
#[derive(Debug, Clone)]
pub struct SmcOutcome {
    /// The particles' histories.
    pub histories: Vec<History>,
    /// Their final unnormalised log weights.
    pub log_weights: Vec<f64>,
    /// Exact mode: the estimate of log p(X) (exp of it unbiased for p(X); SMC1's can have
    /// infinite variance). Paper-faithful mode: the log of HL's weight total, not an estimate of
    /// log p(X) (see the module docs).
    pub log_evidence: f64,
    /// How many stages resampled.
    pub resamples: usize,
}

impl SmcOutcome {
    /// Normalised weights.
    pub fn weights(&self) -> Vec<f64> {
        let z = log_sum_exp(&self.log_weights);
        self.log_weights.iter().map(|w| (w - z).exp()).collect()
    }
}

/// A generator for (seed, stage, stream): SplitMix64 of the three, so every particle and stage
/// has its own stream whatever the thread count.
fn stream(seed: u64, stage: usize, p: usize) -> StdRng {
    let mut z = seed ^ (stage as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= (p as u64)
        .wrapping_add(1)
        .wrapping_mul(0xD1B5_4A32_D192_ED03);
    StdRng::seed_from_u64(crate::numeric::splitmix64_mix(z))
}

/// log N(m1; m2, vΦ) in whitened coordinates.
fn ln_gauss(d: f64, v: f64, eps: f64, ln_det_half: f64) -> f64 {
    -0.5 * d * (2.0 * PI * v).ln() - ln_det_half - eps / (2.0 * v)
}

/// Draws an index with probability ∝ exp(log_w) by one uniform; `z` = log_sum_exp(log_w).
fn choose(log_w: &[f64], z: f64, rng: &mut StdRng) -> Option<usize> {
    if z == f64::NEG_INFINITY || z.is_nan() {
        return None;
    }
    let u: f64 = rng.random::<f64>();
    let mut cum = 0.0;
    let mut last = None;
    for (i, &w) in log_w.iter().enumerate() {
        if w == f64::NEG_INFINITY {
            continue;
        }
        cum += (w - z).exp();
        last = Some(i);
        if u < cum {
            return Some(i);
        }
    }
    last
}

/// Shared read-only inputs of a run.
struct Problem {
    /// The leaves, shared by every particle.
    leaves: Vec<Arc<Cluster>>,
    n: usize,
    d: usize,
    ln_det_half: f64,
    mode: WeightMode,
    variant: Variant,
}

/// A race clock of SMC1: proposed merge time and log Z at it.
#[derive(Clone, Copy, Debug)]
struct Clock {
    t: f64,
    ln_z: f64,
}

/// One particle: the active clusters in slots, their ids, ε per slot pair and the merges so far.
#[derive(Clone)]
struct Particle {
    /// Shared between particles until merged (a particle's copy costs n reference counts).
    slots: Vec<Arc<Cluster>>,
    ids: Vec<usize>,
    active: Vec<usize>,
    /// ε per slot pair.
    eps: PairTable<f64>,
    /// MPOST2: log K_λ̃(√ε) + (λ̃/2) log ε per slot pair; others: empty.
    kterm: PairTable<f64>,
    /// SMC1 clocks per slot pair; others: empty.
    clocks: PairTable<Option<Clock>>,
    merges: Vec<(usize, usize, f64)>,
    t_prev: f64,
}

impl Particle {
    fn new(pb: &Problem, eps: &[Arc<Vec<f64>>], kterm: &[Arc<Vec<f64>>]) -> Particle {
        let n = pb.n;
        Particle {
            slots: pb.leaves.clone(),
            ids: (0..n).collect(),
            active: (0..n).collect(),
            eps: PairTable::shared(eps),
            kterm: PairTable::shared(kterm),
            clocks: if pb.variant == Variant::Smc1 {
                PairTable::filled(n)
            } else {
                PairTable::shared(&[])
            },
            merges: Vec::with_capacity(n.saturating_sub(1)),
            t_prev: 0.0,
        }
    }

    /// r of the slot pair at the current stage (≥ 0 up to rounding).
    fn offset(&self, a: usize, b: usize, t_ref: f64) -> f64 {
        let (ca, cb) = (&self.slots[a], &self.slots[b]);
        (ca.s + cb.s + 2.0 * t_ref - ca.t - cb.t).max(0.0)
    }

    /// Active slot pairs (a < b) in a fixed order.
    fn pairs(&self) -> Vec<(usize, usize)> {
        let m = self.active.len();
        let mut out = Vec::with_capacity(m * (m - 1) / 2);
        for (i, &a) in self.active.iter().enumerate() {
            for &b in &self.active[i + 1..] {
                out.push((a, b));
            }
        }
        out
    }

    /// The merge-time density of the slot pair (a, b) at this stage, prior rate `rho`.
    fn merge_time(
        &self,
        pb: &Problem,
        a: usize,
        b: usize,
        rho: f64,
    ) -> Result<MergeTime, GigError> {
        MergeTime::new(
            rho,
            self.offset(a, b, self.t_prev),
            self.eps.get(a, b),
            pb.d,
        )
    }

    /// An index drawn ∝ exp(log_w); an error when every weight is zero.
    fn pick(&self, log_w: &[f64], z: f64, rng: &mut StdRng) -> Result<usize, SmcRunError> {
        choose(log_w, z, rng).ok_or(SmcRunError::AllImpossible {
            stage: self.merges.len() + 1,
        })
    }

    /// Merges slots a and b at time t: the new cluster takes slot a; caches are updated.
    fn merge(&mut self, pb: &Problem, a: usize, b: usize, t: f64) -> Result<(), SmcRunError> {
        let n = pb.n;
        let e = self.eps.get(a, b);
        let (parent, _) = merge_unchecked(&self.slots[a], &self.slots[b], self.t_prev, t, 0.0, e)?;
        let (ia, ib) = (self.ids[a], self.ids[b]);
        self.merges.push((ia.min(ib), ia.max(ib), t));
        self.slots[a] = Arc::new(parent);
        self.ids[a] = n + self.merges.len() - 1;
        self.active.retain(|&x| x != b);
        self.t_prev = t;
        let lt = 1.0 - pb.d as f64 / 2.0;
        let stage = self.merges.len();
        let mpost2 = pb.variant == Variant::Mpost2;
        let Particle {
            slots,
            active,
            eps,
            kterm: kt,
            ..
        } = self;
        let eps_row = eps.new_row(a, stage);
        let mut kt_row = mpost2.then(|| kt.new_row(a, stage));
        for &c in active.iter() {
            if c == a {
                continue;
            }
            let e = sq_dist(&slots[a].mean, &slots[c].mean);
            eps_row[c] = e;
            if let Some(row) = kt_row.as_mut() {
                row[c] = kterm(lt, e);
            }
        }
        Ok(())
    }

    /// One stage of a stage-wise variant: proposes, merges, returns log ω.
    /// `leaf_gig`: MPOST1 with HL's normaliser only, this stage's ln_gig_full of every pair of
    /// leaves (shared by all particles: it depends on λ_k and ε, not on r).
    fn step(
        &mut self,
        pb: &Problem,
        leaf_gig: &[f64],
        rng: &mut StdRng,
    ) -> Result<f64, SmcRunError> {
        let d = pb.d as f64;
        let lambda = pair_rate(self.active.len());
        let pairs = self.pairs();
        let (a, b, delta, ln_omega) = match pb.variant {
            Variant::PriorPrior => {
                let e: f64 = Exp1.sample(rng);
                let delta = e / lambda;
                let (a, b) = pairs[rng.random_range(0..pairs.len())];
                let v = 2.0 * delta + self.offset(a, b, self.t_prev);
                let ln_z = ln_gauss(d, v, self.eps.get(a, b), pb.ln_det_half);
                (a, b, delta, ln_z)
            }
            Variant::PriorPost => {
                let e: f64 = Exp1.sample(rng);
                let delta = e / lambda;
                let ln_z: Vec<f64> = pairs
                    .iter()
                    .map(|&(a, b)| {
                        let v = 2.0 * delta + self.offset(a, b, self.t_prev);
                        ln_gauss(d, v, self.eps.get(a, b), pb.ln_det_half)
                    })
                    .collect();
                let total = log_sum_exp(&ln_z);
                let i = self.pick(&ln_z, total, rng)?;
                let (a, b) = pairs[i];
                (a, b, delta, total - lambda.ln())
            }
            Variant::PostPost | Variant::Mpost1 => {
                let mut ln_i = Vec::with_capacity(pairs.len());
                for &(a, b) in &pairs {
                    let mt = self.merge_time(pb, a, b, lambda)?;
                    // POST-POST always uses the true (truncated) integral; MPOST1 HL's Bessel
                    // formula, with the truncation factor only in exact mode.
                    let (ia, ib) = (self.ids[a], self.ids[b]);
                    let li = if pb.variant == Variant::PostPost {
                        mt.ln_normaliser(WeightMode::Exact)
                    } else if !leaf_gig.is_empty() && ia < pb.n && ib < pb.n {
                        mt.ln_normaliser_untruncated_with(leaf_gig[ia.min(ib) * pb.n + ia.max(ib)])
                    } else {
                        mt.ln_normaliser(pb.mode)
                    };
                    ln_i.push(li - pb.ln_det_half);
                }
                let total = log_sum_exp(&ln_i);
                let i = self.pick(&ln_i, total, rng)?;
                let (a, b) = pairs[i];
                let mt = self.merge_time(pb, a, b, lambda)?;
                (a, b, mt.sample(rng), total)
            }
            Variant::Mpost2 => {
                let stage_const = -0.5 * d * (2.0 * PI).ln() - pb.ln_det_half;
                let ln_zh: Vec<f64> = pairs
                    .iter()
                    .map(|&(a, b)| {
                        self.kterm.get(a, b)
                            + lambda * self.offset(a, b, self.t_prev) / 2.0
                            + stage_const
                    })
                    .collect();
                let total = log_sum_exp(&ln_zh);
                let i = self.pick(&ln_zh, total, rng)?;
                let (a, b) = pairs[i];
                let mt = self.merge_time(pb, a, b, lambda)?;
                let ln_omega = match pb.mode {
                    WeightMode::PaperFaithful => total,
                    WeightMode::Exact => {
                        mt.ln_normaliser(WeightMode::Exact) - pb.ln_det_half + total - ln_zh[i]
                    }
                };
                (a, b, mt.sample(rng), ln_omega)
            }
            Variant::Smc1 => return self.race_step(pb, rng),
        };
        let t = self.t_prev + delta;
        self.merge(pb, a, b, t)?;
        Ok(ln_omega)
    }

    /// SMC1: draws clocks for the pairs of slot `a` with every other active slot (all pairs when
    /// `a` is None) and returns Σ log Ī of the new pairs.
    fn draw_clocks(
        &mut self,
        pb: &Problem,
        a: Option<usize>,
        rng: &mut StdRng,
    ) -> Result<f64, SmcRunError> {
        let d = pb.d as f64;
        let pairs: Vec<(usize, usize)> = match a {
            None => self.pairs(),
            Some(a) => self
                .active
                .iter()
                .filter(|&&c| c != a)
                .map(|&c| (a.min(c), a.max(c)))
                .collect(),
        };
        let mut ln_w = 0.0;
        let mut drawn = Vec::with_capacity(pairs.len());
        for (x, y) in pairs {
            let tau = self.slots[x].t.max(self.slots[y].t);
            let r = self.offset(x, y, tau);
            let e = self.eps.get(x, y);
            let mt = MergeTime::new(1.0, r, e, pb.d)?;
            ln_w += mt.ln_normaliser(pb.mode) - pb.ln_det_half;
            let dl = mt.sample(rng);
            let clock = Clock {
                t: tau + dl,
                ln_z: ln_gauss(d, 2.0 * dl + r, e, pb.ln_det_half),
            };
            drawn.push((x, y, clock));
        }
        match a {
            None => {
                for (x, y, clock) in drawn {
                    self.clocks.set_pair(x, y, Some(clock));
                }
            }
            Some(a) => {
                let row = self.clocks.new_row(a, self.merges.len());
                for (x, y, clock) in drawn {
                    row[if x == a { y } else { x }] = Some(clock);
                }
            }
        }
        Ok(ln_w)
    }

    /// One stage of SMC1 (spec §3.9): the earliest clock wins; losers divide by their Z.
    fn race_step(&mut self, pb: &Problem, rng: &mut StdRng) -> Result<f64, SmcRunError> {
        let mut ln_omega = 0.0;
        if self.merges.is_empty() {
            ln_omega += self.draw_clocks(pb, None, rng)?;
        }
        let mut win: Option<(f64, usize, usize)> = None;
        for (x, y) in self.pairs() {
            let c = self
                .clocks
                .get(x, y)
                .expect("every active pair has a clock");
            if win.is_none_or(|(t, _, _)| c.t < t) {
                win = Some((c.t, x, y));
            }
        }
        let (t, a, b) = win.expect("at least one pair");
        for &c in &self.active {
            for s in [a, b] {
                if c != a && c != b {
                    let (x, y) = (s.min(c), s.max(c));
                    // Losers are never read again: b leaves, a gets a fresh row.
                    let clock = self.clocks.get(x, y).expect("loser has a clock");
                    ln_omega -= clock.ln_z;
                }
            }
        }
        self.merge(pb, a, b, t)?;
        if self.active.len() > 1 {
            ln_omega += self.draw_clocks(pb, Some(a), rng)?;
        }
        Ok(ln_omega)
    }
}

/// HL eq. 13's per-pair term log K_λ̃(√ε) + (λ̃/2) log ε.
/// ε is floored at the smallest normal number so that coinciding means give a huge but finite
/// term (identical leaves are refused before the run).
fn kterm(lt: f64, e: f64) -> f64 {
    let e = e.max(f64::MIN_POSITIVE);
    ln_bessel_k(lt, e.sqrt()) + lt / 2.0 * e.ln()
}

/// MPOST1 with HL's normaliser: ln_gig_full at stage `stage` (λ = C(n − stage + 1, 2)) of every
/// pair of leaves still active in some particle, at i·n + j (i < j); empty for other variants and
/// modes. About 3/5 of MPOST1's pair normalisers are between two leaves, the same in every
/// particle; the values are bit-identical to computing them per particle.
fn leaf_gig_table(
    pb: &Problem,
    particles: &[Particle],
    eps: &[Arc<Vec<f64>>],
    stage: usize,
    parallel: bool,
) -> Vec<f64> {
    if pb.variant != Variant::Mpost1 || pb.mode != WeightMode::PaperFaithful {
        return Vec::new();
    }
    let n = pb.n;
    let mut live = vec![false; n];
    for p in particles {
        for &a in &p.active {
            if p.ids[a] < n {
                live[p.ids[a]] = true;
            }
        }
    }
    let lambda = pair_rate(n - stage + 1);
    let row = |i: usize| -> Vec<f64> {
        (0..n)
            .map(|j| {
                if j <= i || !live[i] || !live[j] {
                    return f64::NAN;
                }
                MergeTime::new(lambda, 0.0, eps[i][j], pb.d).map_or(f64::NAN, |mt| mt.ln_gig_full())
            })
            .collect()
    };
    let rows: Vec<Vec<f64>> = if parallel {
        (0..n).into_par_iter().map(row).collect()
    } else {
        (0..n).map(row).collect()
    };
    rows.concat()
}

/// Runs one SMC variant on whitened `data` (n rows of dimension d) and returns the weighted
/// particle set and the log-evidence estimate.
pub fn run_smc(
    data: &[Vec<f64>],
    ln_det_half: f64,
    s: &SmcSettings,
) -> Result<SmcOutcome, SmcRunError> {
    // The token first: a cancellation while the pair tables are built stops the run.
    let cancel = crate::cancel::Cancel::new();
    let n = data.len();
    if n == 0 {
        return Err(HistoryError::NoLeaves.into());
    }
    let d = super::history::check_data(data, n)?;
    if s.particles == 0 {
        return Err(SmcRunError::Setting {
            name: "particles",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    if !(0.0..=1.0).contains(&s.resample_threshold) {
        return Err(SmcRunError::Setting {
            name: "resample_threshold",
            value: s.resample_threshold,
            reason: "must be in [0, 1]",
        });
    }
    if !ln_det_half.is_finite() {
        return Err(SmcRunError::Setting {
            name: "ln_det_half",
            value: ln_det_half,
            reason: "must be finite",
        });
    }
    let pb = Problem {
        leaves: data
            .iter()
            .map(|x| Arc::new(Cluster::leaf(x.clone())))
            .collect(),
        n,
        d,
        ln_det_half,
        mode: s.weight_mode,
        variant: s.variant,
    };
    let lt = 1.0 - d as f64 / 2.0;
    let mut eps = vec![0.0; n * n];
    let mut kt = if s.variant == Variant::Mpost2 {
        vec![0.0; n * n]
    } else {
        Vec::new()
    };
    for i in 0..n {
        // O(n² d) in all: a row at a time between checks.
        if cancel.is_cancelled() {
            return Err(SmcRunError::Cancelled);
        }
        for j in i + 1..n {
            let e = sq_dist(&data[i], &data[j]);
            if e == 0.0 && d >= 2 {
                return Err(SmcRunError::Duplicate { i, j });
            }
            eps[i * n + j] = e;
            eps[j * n + i] = e;
            if s.variant == Variant::Mpost2 {
                let k = kterm(lt, e);
                kt[i * n + j] = k;
                kt[j * n + i] = k;
            }
        }
    }
    let rows = |m: &[f64]| -> Vec<Arc<Vec<f64>>> {
        m.chunks(n.max(1)).map(|r| Arc::new(r.to_vec())).collect()
    };
    let (eps, kt) = (rows(&eps), rows(&kt));
    let mut particles = vec![Particle::new(&pb, &eps, &kt); s.particles];
    let mut pop = Population::new(s.particles);
    for stage in 1..n {
        if cancel.is_cancelled() {
            return Err(SmcRunError::Cancelled);
        }
        let leaf_gig = leaf_gig_table(&pb, &particles, &eps, stage, s.parallel);
        // A stage over many points and particles is long: each particle's step checks too.
        let step = |(p, part): (usize, &mut Particle)| {
            if cancel.is_cancelled() {
                return Err(SmcRunError::Cancelled);
            }
            part.step(&pb, &leaf_gig, &mut stream(s.seed, stage, p))
        };
        let omegas: Vec<Result<f64, SmcRunError>> = if s.parallel {
            particles.par_iter_mut().enumerate().map(step).collect()
        } else {
            particles.iter_mut().enumerate().map(step).collect()
        };
        let omegas: Vec<f64> = omegas.into_iter().collect::<Result<_, _>>()?;
        pop.reweight(&omegas)?;
        if pop.log_evidence() == f64::NEG_INFINITY {
            return Err(SmcRunError::AllImpossible { stage });
        }
        if stage + 1 < n {
            let u: f64 = stream(s.seed, stage, usize::MAX).random::<f64>();
            if let Some(anc) = pop.maybe_resample(s.resample_threshold, u) {
                // Cheap: a particle's pair tables share their rows.
                particles = anc.iter().map(|&a| particles[a].clone()).collect();
            }
        }
    }
    let histories = particles
        .into_iter()
        .map(|p| History::new(n, p.merges))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SmcOutcome {
        histories,
        log_weights: pop.log_weights().to_vec(),
        log_evidence: pop.log_evidence(),
        resamples: pop.resample_count(),
    })
}

#[cfg(test)]
#[path = "variants_tests.rs"]
mod tests;
