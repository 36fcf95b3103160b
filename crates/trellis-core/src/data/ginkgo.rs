//! Ginkgo toy jets: the invariant-mass generator of the Cluster Trellis paper era and the JSON
//! dataset format of `../shared/data/ginkgo_jets/` (`{"source": ..., "jets": [...]}`, one object
//! per jet with `name`, `n_leaves`, `t_cut`, `lam`, `lam_root`, `M_hard`, `leaves` as
//! `[[E, px, py, pz], ...]`, and optionally `truth_tree` as nested lists of leaf indices,
//! `truth_loglh` and `reference`).
//!
//! The generator (spec: `../shared/specs/ginkgo.md`): a node with four-vector `p` and scale `t_P`
//! is a leaf if `t_P <= t_cut`; otherwise it decays into two children with scales
//! `t_L = t_P u_L`, `t_R = (sqrt(t_P) - sqrt(t_L))^2 u_R`, `u ~ Exponential(λ)` redrawn while
//! `u >= 1 - 1e-3` (rate `λ_root` at the root), back to back along a uniform direction in the
//! parent's rest frame, then boosted to the lab frame. Leaves are listed depth first, left first.

use crate::model::ginkgo::{FourVector, GinkgoModel};
use crate::tree::{Node, Tree};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp, StandardNormal};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Reference results stored with some jets (`truth_9.json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JetReference {
    /// Exact MAP log-likelihood.
    pub map_loglh: f64,
    /// Exact log partition function.
    pub log_z: f64,
    /// Number of trees with finite likelihood.
    pub n_trees_finite: u64,
    /// Greedy log-likelihood of the reference implementation.
    pub greedy_loglh: f64,
    /// Beam-search log-likelihood of the reference implementation.
    pub beam_loglh: f64,
    /// Beam size the reference used.
    pub beam_size: usize,
}

/// One jet: observed leaves, generator parameters, and (if known) the generator's tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Jet {
    /// Name, unique within a dataset.
    pub name: String,
    /// Number of leaves (must equal `leaves.len()`).
    pub n_leaves: usize,
    /// Cut on squared mass below which a particle does not split.
    pub t_cut: f64,
    /// Decay rate of non-root splits.
    pub lam: f64,
    /// Decay rate of the root split.
    pub lam_root: f64,
    /// Mass of the jet (root scale is `M_hard^2`).
    #[serde(rename = "M_hard")]
    pub m_hard: f64,
    /// Leaf four-vectors `(E, px, py, pz)`.
    pub leaves: Vec<FourVector>,
    /// The generator's tree as nested lists of leaf indices, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_tree: Option<serde_json::Value>,
    /// Log-likelihood of the generator's tree under the paper-era likelihood, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_loglh: Option<f64>,
    /// Reference results, if stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<JetReference>,
}

/// A set of jets with a note on where they come from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JetDataset {
    /// Where the jets come from (generator settings or file of origin).
    pub source: String,
    /// The jets.
    pub jets: Vec<Jet>,
}

/// Problems with jet data.
#[derive(Debug, thiserror::Error)]
pub enum JetError {
    /// File could not be read.
    #[error("cannot read jet file {path}: {cause} (check the path)")]
    Io {
        /// The file.
        path: String,
        /// The cause (said in the message, so not a separate source: it is said once).
        cause: std::io::Error,
    },
    /// File could not be written.
    #[error(
        "cannot write jet file {path}: {cause} (check that its folder exists and is writable)"
    )]
    Write {
        /// The file.
        path: String,
        /// The cause.
        cause: std::io::Error,
    },
    /// File is not valid JSON in the expected schema.
    #[error("jet file {path} is not in the ginkgo_jets JSON schema ({{\"source\", \"jets\": [{{name, n_leaves, t_cut, lam, lam_root, M_hard, leaves}}]}}): {msg}")]
    Schema {
        /// The file.
        path: String,
        /// What serde said.
        msg: String,
    },
    /// A jet's values are not usable.
    #[error("jet {name:?}: {msg}")]
    Invalid {
        /// The jet.
        name: String,
        /// What is wrong and how to fix it.
        msg: String,
    },
    /// Generator parameters that are not usable.
    #[error("Ginkgo parameter {name} = {value:?} must be {what} (the QCD value is {typical})")]
    BadParams {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        what: &'static str,
        /// The QCD setting.
        typical: f64,
    },
    /// A shower that grew past the generator's limits (a tiny `t_cut` against the root scale).
    #[error("the shower grew past {MAX_SHOWER_LEAVES} leaves or {MAX_SHOWER_DEPTH} levels; raise t_cut or lower root_scale")]
    ShowerTooLarge,
    /// A generated jet with more leaves than a model holds.
    #[error("the generated jet has {n} leaves; at most 64 can be modelled (raise t_cut or lower root_scale)")]
    TooManyLeaves {
        /// Number of leaves.
        n: usize,
    },
    /// The model of a jet could not be built.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// The generator could not make enough jets in the leaf range.
    #[error("generated {got} of {want} jets with {min}..={max} leaves in {tries} tries; widen the leaf range or raise max_tries")]
    TooFewJets {
        /// Jets made.
        got: usize,
        /// Jets asked for.
        want: usize,
        /// Smallest leaf count.
        min: usize,
        /// Largest leaf count.
        max: usize,
        /// Tries used.
        tries: usize,
    },
    /// More jets asked for at once than fit in memory.
    #[error("{want} jets of up to {max} leaves would take about {} in memory, more than the {} this process may use; generate at most {fits} at a time", crate::exact::human_bytes(*bytes), crate::exact::human_bytes(*usable as f64))]
    TooManyJets {
        /// Jets asked for.
        want: usize,
        /// Their most leaves.
        max: usize,
        /// Bytes they would take ([`jet_bytes`] each).
        bytes: f64,
        /// Bytes this process may use ([`crate::memory::usable_bytes`]).
        usable: u64,
        /// How many would fit.
        fits: u64,
    },
    /// The generator was cancelled ([`crate::cancel`]) while it ran.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
}

/// The most leaves a jet may have (its clusters are 64-bit masks).
pub const MAX_LEAVES: usize = 64;

/// An upper estimate of the memory one generated jet of `n` leaves takes: the [`Jet`], its
/// four-momenta, its truth tree as nested JSON lists (96 bytes a node) and its name.
pub fn jet_bytes(n: usize) -> f64 {
    (std::mem::size_of::<Jet>() + 32 * n + 96 * 2 * n + 64) as f64
}

/// The smallest energy, `t_cut` or rate a jet may have (smaller ones underflow when squared);
/// a rate given elsewhere (a config's λ) is held to the same range.
pub const MIN_VALUE: f64 = 1e-100;
/// The largest `t_cut` or rate a jet may have (larger ones overflow the likelihood's terms).
pub const MAX_VALUE: f64 = 1e100;

impl Jet {
    /// Checks that the jet can be scored: 1 to 64 leaves, finite values, positive energies,
    /// `n_leaves` consistent, positive `t_cut` and rates, and a truth tree (if any) over the leaves.
    pub fn validate(&self) -> Result<(), JetError> {
        let bad = |msg: String| JetError::Invalid {
            name: self.name.clone(),
            msg,
        };
        if self.leaves.is_empty() {
            return Err(bad("has no leaves".into()));
        }
        if self.leaves.len() > MAX_LEAVES {
            return Err(bad(format!(
                "has {} leaves; at most {MAX_LEAVES} are supported",
                self.leaves.len()
            )));
        }
        if self.n_leaves != self.leaves.len() {
            return Err(bad(format!(
                "n_leaves is {} but {} leaves are listed; make them agree",
                self.n_leaves,
                self.leaves.len()
            )));
        }
        for (i, p) in self.leaves.iter().enumerate() {
            if p.iter().any(|x| !x.is_finite()) {
                return Err(bad(format!(
                    "leaf {i} has a non-finite component {p:?}; remove or fix that particle"
                )));
            }
            if p[0] <= 0.0 {
                return Err(bad(format!(
                    "leaf {i} has energy {:?} <= 0; energies must be positive",
                    p[0]
                )));
            }
            if p[0] < MIN_VALUE {
                return Err(bad(format!(
                    "leaf {i} has energy {:e}, too small: its squared mass underflows; rescale the units (e.g. to GeV)",
                    p[0]
                )));
            }
            // Time-like or light-like, up to rounding: E >= |p|.
            let p3 = (p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt();
            if p[0] < p3 * (1.0 - 1e-9) {
                return Err(bad(format!(
                    "leaf {i} is space-like: E = {:e} < |p| = {p3:e}; fix the particle (E must be at least |p|)",
                    p[0]
                )));
            }
        }
        // The model squares sums of four-momenta: they must stay finite.
        let total: f64 = self.leaves.iter().flatten().map(|x| x.abs()).sum();
        if !(total * total).is_finite() {
            return Err(bad(format!(
                "its leaf values sum to {total:e} in absolute value, whose square overflows; rescale the units (e.g. to GeV)"
            )));
        }
        for (what, v) in [
            ("t_cut", self.t_cut),
            ("lam", self.lam),
            ("lam_root", self.lam_root),
        ] {
            if !(v.is_finite() && (MIN_VALUE..=MAX_VALUE).contains(&v)) {
                return Err(bad(format!(
                    "{what} = {v:?} must be a positive number between 1e-100 and 1e100 (Ginkgo's QCD jets: t_cut 16, lam 1.5)"
                )));
            }
        }
        if self.leaves.len() >= 2 {
            let mut sum = [0.0f64; 4];
            for p in &self.leaves {
                for k in 0..4 {
                    sum[k] += p[k];
                }
            }
            let mass2 = sum[0] * sum[0] - sum[1] * sum[1] - sum[2] * sum[2] - sum[3] * sum[3];
            if mass2.is_nan() || mass2 < self.t_cut {
                return Err(bad(format!(
                    "its squared mass {mass2:e} is below t_cut = {:e}, so every split is forbidden and no tree has a finite likelihood; lower t_cut or check the leaves",
                    self.t_cut
                )));
            }
        }
        if let Some(t) = &self.truth_tree {
            let tree = Tree::from_nested_json(t).map_err(|e| bad(format!("truth_tree: {e}")))?;
            if tree.leaves() != crate::subset::Subset::full(self.leaves.len()) {
                return Err(bad(
                    "truth_tree does not cover exactly the leaves 0..n_leaves".into(),
                ));
            }
        }
        Ok(())
    }

    /// The same jet with its leaves relabelled in decreasing order of energy (ties keep their
    /// order); the truth tree, if any, is relabelled to match.
    pub fn sorted_by_energy(&self) -> Jet {
        let mut order: Vec<usize> = (0..self.leaves.len()).collect();
        order.sort_by(|&a, &b| self.leaves[b][0].total_cmp(&self.leaves[a][0]));
        // new index of old leaf i
        let mut new_of = vec![0usize; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old] = new;
        }
        fn relabel(v: &serde_json::Value, new_of: &[usize]) -> serde_json::Value {
            match v {
                serde_json::Value::Number(n) => n
                    .as_u64()
                    .and_then(|i| new_of.get(i as usize))
                    .map(|&j| serde_json::Value::from(j))
                    .unwrap_or_else(|| v.clone()),
                serde_json::Value::Array(a) => {
                    serde_json::Value::Array(a.iter().map(|x| relabel(x, new_of)).collect())
                }
                other => other.clone(),
            }
        }
        Jet {
            leaves: order.iter().map(|&i| self.leaves[i]).collect(),
            truth_tree: self.truth_tree.as_ref().map(|t| relabel(t, &new_of)),
            ..self.clone()
        }
    }

    /// The paper-era likelihood model for this jet (rate `lam` for every split, as the
    /// reference); errors as [`GinkgoModel::new`] (the fields are public, so the jet may not
    /// have been validated).
    pub fn model(&self) -> Result<GinkgoModel, crate::model::ModelError> {
        GinkgoModel::new(self.leaves.clone(), self.t_cut, self.lam)
    }

    /// The generator's tree, if stored.
    pub fn truth(&self) -> Option<Tree> {
        self.truth_tree
            .as_ref()
            .and_then(|t| Tree::from_nested_json(t).ok())
    }
}

/// Largest jet file [`JetDataset::load`] reads (1 GiB, several million jets).
pub const MAX_JET_FILE_BYTES: u64 = 1 << 30;

impl JetDataset {
    /// Reads and validates a dataset file (a regular file of at most [`MAX_JET_FILE_BYTES`]).
    pub fn load(path: &Path) -> Result<JetDataset, JetError> {
        let text =
            super::read_text_limited(path, MAX_JET_FILE_BYTES).map_err(|cause| JetError::Io {
                path: path.display().to_string(),
                cause,
            })?;
        Self::from_json(&text).map_err(|e| match e {
            JetError::Schema { msg, .. } => JetError::Schema {
                path: path.display().to_string(),
                msg,
            },
            other => other,
        })
    }

    /// Parses and validates a dataset from JSON text.
    pub fn from_json(text: &str) -> Result<JetDataset, JetError> {
        let ds: JetDataset = serde_json::from_str(text).map_err(|e| {
            // JSON has no NaN or Infinity; Python writes them anyway. Say so plainly.
            let nonfinite = ["NaN", "Infinity"].iter().any(|w| text.contains(w));
            JetError::Schema {
                path: "<input>".into(),
                msg: if nonfinite {
                    format!(
                        "it contains NaN or Infinity values ({}); remove or fix those particles",
                        super::one_line(&e.to_string())
                    )
                } else {
                    super::one_line(&e.to_string())
                },
            }
        })?;
        for j in &ds.jets {
            j.validate()?;
        }
        Ok(ds)
    }

    /// The dataset as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("jets serialise")
    }

    /// Writes the dataset to `path` as JSON (read back by [`JetDataset::load`]), atomically:
    /// the file appears whole or not at all, and never through a link ([`super::write_atomic`]).
    pub fn save(&self, path: &Path) -> Result<(), JetError> {
        super::write_atomic(path, self.to_json().as_bytes()).map_err(|cause| JetError::Write {
            path: path.display().to_string(),
            cause,
        })
    }
}

/// Parameters of the Ginkgo generator.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GinkgoParams {
    /// Cut on squared mass (paper: 16).
    pub t_cut: f64,
    /// Decay rate of non-root splits (paper: 1.5).
    pub lambda: f64,
    /// Decay rate of the root split (QCD 1.5, W 3.0).
    pub lambda_root: f64,
    /// Root scale `M_hard^2` (QCD 900, W 6400).
    pub root_scale: f64,
    /// Magnitude of the jet's momentum along (1,1,1)/sqrt(3) (paper: 400).
    pub jet_momentum: f64,
}

/// Largest number of leaves [`generate_jet`] grows a shower to.
pub const MAX_SHOWER_LEAVES: usize = 1 << 16;

/// Deepest a shower of [`generate_jet`] may grow.
pub const MAX_SHOWER_DEPTH: usize = 1024;

impl GinkgoParams {
    /// Checks that the generator can run: `t_cut`, `lambda`, `lambda_root` and `root_scale`
    /// positive finite numbers, `jet_momentum` a finite number.
    pub fn validate(&self) -> Result<(), JetError> {
        let qcd = GinkgoParams::qcd();
        let positive = "a positive finite number";
        for (name, value, typical) in [
            ("t_cut", self.t_cut, qcd.t_cut),
            ("lambda", self.lambda, qcd.lambda),
            ("lambda_root", self.lambda_root, qcd.lambda_root),
            ("root_scale", self.root_scale, qcd.root_scale),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(JetError::BadParams {
                    name,
                    value,
                    what: positive,
                    typical,
                });
            }
        }
        if !self.jet_momentum.is_finite() {
            return Err(JetError::BadParams {
                name: "jet_momentum",
                value: self.jet_momentum,
                what: "a finite number",
                typical: qcd.jet_momentum,
            });
        }
        Ok(())
    }

    /// The paper's QCD settings: t_cut 16, λ = λ_root = 1.5, root scale 30^2.
    pub fn qcd() -> GinkgoParams {
        GinkgoParams {
            t_cut: 16.0,
            lambda: 1.5,
            lambda_root: 1.5,
            root_scale: 900.0,
            jet_momentum: 400.0,
        }
    }

    /// The paper era's W-jet settings: root scale 80^2, λ_root = 3.0, λ = 1.5.
    pub fn w_jet() -> GinkgoParams {
        GinkgoParams {
            root_scale: 6400.0,
            lambda_root: 3.0,
            ..GinkgoParams::qcd()
        }
    }

    /// The jet's four-vector.
    pub fn jet_four_vector(&self) -> FourVector {
        let c = self.jet_momentum / 3f64.sqrt();
        [
            (self.jet_momentum.powi(2) + self.root_scale).sqrt(),
            c,
            c,
            c,
        ]
    }
}

/// Boosts `p` (given in the rest frame of `parent`) to the frame where `parent` has four-vector
/// `parent`.
fn boost(p: FourVector, parent: &FourVector, m_parent: f64) -> FourVector {
    let e = parent[0];
    let beta = [parent[1] / e, parent[2] / e, parent[3] / e];
    let b2 = beta[0] * beta[0] + beta[1] * beta[1] + beta[2] * beta[2];
    if b2 == 0.0 {
        return p;
    }
    let gamma = e / m_parent;
    let bq = beta[0] * p[1] + beta[1] * p[2] + beta[2] * p[3];
    let coef = (gamma - 1.0) * bq / b2 + gamma * p[0];
    [
        gamma * (p[0] + bq),
        p[1] + coef * beta[0],
        p[2] + coef * beta[1],
        p[3] + coef * beta[2],
    ]
}

/// One generated jet: leaves in depth-first order and the tree over them.
#[derive(Clone, Debug)]
pub struct GeneratedJet {
    /// Leaf four-vectors.
    pub leaves: Vec<FourVector>,
    /// The generator's tree.
    pub tree: Tree,
    /// Scale `t` of every internal node, in the tree's arena order (leaves have their own `t`).
    pub scales: Vec<f64>,
}

/// Generates one jet with the invariant-mass Ginkgo shower.
///
/// Errors for parameters [`GinkgoParams::validate`] refuses, for a shower that grows past
/// [`MAX_SHOWER_LEAVES`] leaves or [`MAX_SHOWER_DEPTH`] levels, and for a jet of more than 64
/// leaves ([`JetError::TooManyLeaves`], after the whole shower is drawn, so the random stream
/// is the same as for any other jet).
pub fn generate_jet<R: rand::Rng + ?Sized>(
    params: &GinkgoParams,
    rng: &mut R,
) -> Result<GeneratedJet, JetError> {
    params.validate()?;
    struct Shower<'a, R: ?Sized> {
        params: &'a GinkgoParams,
        rng: &'a mut R,
        leaves: Vec<FourVector>,
        nodes: Vec<Node>,
        scales: Vec<f64>,
        exp: Exp<f64>,
        exp_root: Exp<f64>,
        too_large: bool,
    }
    impl<R: rand::Rng + ?Sized> Shower<'_, R> {
        fn draw_u(&mut self, root: bool) -> f64 {
            loop {
                let u = if root {
                    self.exp_root.sample(self.rng)
                } else {
                    self.exp.sample(self.rng)
                };
                if u < 1.0 - 1e-3 {
                    return u;
                }
            }
        }
        fn node(&mut self, p: FourVector, t_p: f64, root: bool, depth: usize) -> usize {
            if self.too_large || depth > MAX_SHOWER_DEPTH || self.leaves.len() > MAX_SHOWER_LEAVES {
                self.too_large = true;
                return 0;
            }
            if t_p <= self.params.t_cut {
                self.nodes.push(Node::Leaf(self.leaves.len()));
                self.leaves.push(p);
                self.scales.push(t_p);
                return self.nodes.len() - 1;
            }
            let r = loop {
                let v: [f64; 3] = [
                    StandardNormal.sample(self.rng),
                    StandardNormal.sample(self.rng),
                    StandardNormal.sample(self.rng),
                ];
                let norm = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                if norm > 0.0 {
                    break [v[0] / norm, v[1] / norm, v[2] / norm];
                }
            };
            let u_l = self.draw_u(root);
            let u_r = self.draw_u(root);
            let t_l = t_p * u_l;
            let t_r = (t_p.sqrt() - t_l.sqrt()).powi(2) * u_r;
            let m = t_p.sqrt();
            let e_l = m / 2.0 * (1.0 + t_l / t_p - t_r / t_p);
            let e_r = m / 2.0 * (1.0 + t_r / t_p - t_l / t_p);
            let pstar = m / 2.0
                * (1.0 - 2.0 * (t_l + t_r) / t_p + (t_l - t_r).powi(2) / (t_p * t_p))
                    .max(0.0)
                    .sqrt();
            let left = boost([e_l, pstar * r[0], pstar * r[1], pstar * r[2]], &p, m);
            let right = boost([e_r, -pstar * r[0], -pstar * r[1], -pstar * r[2]], &p, m);
            let l = self.node(left, t_l, false, depth + 1);
            let rr = self.node(right, t_r, false, depth + 1);
            self.nodes.push(Node::Internal(l, rr));
            self.scales.push(t_p);
            self.nodes.len() - 1
        }
    }
    let mut sh = Shower {
        params,
        rng,
        leaves: Vec::new(),
        nodes: Vec::new(),
        scales: Vec::new(),
        // Validated above: both rates are positive and finite.
        exp: Exp::new(params.lambda).map_err(|_| bad_rate("lambda", params.lambda))?,
        exp_root: Exp::new(params.lambda_root)
            .map_err(|_| bad_rate("lambda_root", params.lambda_root))?,
        too_large: false,
    };
    let root = sh.node(params.jet_four_vector(), params.root_scale, true, 0);
    if sh.too_large {
        return Err(JetError::ShowerTooLarge);
    }
    if sh.leaves.len() > crate::subset::Subset::MAX_LEAVES {
        return Err(JetError::TooManyLeaves { n: sh.leaves.len() });
    }
    let tree = Tree::from_arena(sh.nodes, root).map_err(|e| JetError::Invalid {
        name: "generated".into(),
        msg: format!("the shower's tree is invalid: {e}"),
    })?;
    Ok(GeneratedJet {
        leaves: sh.leaves,
        tree,
        scales: sh.scales,
    })
}

fn bad_rate(name: &'static str, value: f64) -> JetError {
    JetError::BadParams {
        name,
        value,
        what: "a positive finite number",
        typical: 1.5,
    }
}

/// Generates `n_jets` jets with `min_leaves <= N <= max_leaves` (both inclusive), keeping the
/// first that fall in range, from one RNG seeded with `seed`. Jets are named `{prefix}[k]` and
/// carry their truth tree and its log-likelihood under the paper-era model. Refuses, before
/// drawing, more jets than fit in memory ([`jet_bytes`] each); stops when cancelled
/// ([`crate::cancel`]).
pub fn generate_dataset(
    params: &GinkgoParams,
    n_jets: usize,
    min_leaves: usize,
    max_leaves: usize,
    seed: u64,
    max_tries: usize,
    prefix: &str,
) -> Result<JetDataset, JetError> {
    let cancel = crate::cancel::Cancel::new();
    params.validate()?;
    let each = jet_bytes(max_leaves.min(MAX_LEAVES));
    if let Some(usable) = crate::memory::usable_bytes() {
        if n_jets as f64 * each > usable as f64 {
            return Err(JetError::TooManyJets {
                want: n_jets,
                max: max_leaves.min(MAX_LEAVES),
                bytes: n_jets as f64 * each,
                usable,
                fits: (usable as f64 / each) as u64,
            });
        }
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut jets = Vec::new();
    let mut tries = 0;
    while jets.len() < n_jets {
        if tries % 16 == 0 && cancel.is_cancelled() {
            return Err(JetError::Cancelled);
        }
        if tries == max_tries {
            return Err(JetError::TooFewJets {
                got: jets.len(),
                want: n_jets,
                min: min_leaves,
                max: max_leaves,
                tries,
            });
        }
        tries += 1;
        let g = match generate_jet(params, &mut rng) {
            Ok(g) => g,
            // Too many leaves for any range: drawn and discarded, as before.
            Err(JetError::TooManyLeaves { .. } | JetError::ShowerTooLarge) => continue,
            Err(e) => return Err(e),
        };
        let n = g.leaves.len();
        if n < min_leaves || n > max_leaves || n > MAX_LEAVES {
            continue;
        }
        let model = GinkgoModel::new(g.leaves.clone(), params.t_cut, params.lambda)?;
        let truth_loglh = g.tree.log_likelihood(&model);
        jets.push(Jet {
            name: format!("{prefix}[{}]", jets.len()),
            n_leaves: n,
            t_cut: params.t_cut,
            lam: params.lambda,
            lam_root: params.lambda_root,
            m_hard: params.root_scale.sqrt(),
            leaves: g.leaves,
            truth_tree: Some(g.tree.to_nested_json()),
            truth_loglh: Some(truth_loglh),
            reference: None,
        });
    }
    Ok(JetDataset {
        source: format!(
            "trellis-lab Ginkgo generator: t_cut {}, lambda {}, lambda_root {}, root scale {}, {}..={} leaves, seed {seed}, {tries} tries",
            params.t_cut, params.lambda, params.lambda_root, params.root_scale, min_leaves, max_leaves
        ),
        jets,
    })
}
