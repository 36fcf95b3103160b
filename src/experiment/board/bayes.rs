//! BHC (Heller & Ghahramani 2005) and greedy Bayesian rose trees (Blundell, Teh & Heller 2010)
//! on the board, by the core's [`trellis_core::bhc`] on the points as the board read them
//! (z-scored when the dataset says `standardize = true`, as every other method sees them).
//!
//! - **Model**: Beta–Bernoulli per feature when every value of the table is 0 or 1, the prior
//!   centred on each feature's frequency with strength `board.bhc.strength` (default 2);
//!   otherwise a full-covariance Gaussian with the Normal–Inverse-Wishart prior centred on the
//!   data (`m₀` = the data mean, `ν₀ = D + 2`, `S₀ = scale · diag(var)` with
//!   `board.bhc.scale`, default 0.25, and `κ₀ = board.bhc.kappa0`, default 0.1): the defaults
//!   of the core's `from_data` and of Python's `tl.bhc`. Each tree's `note` in `trees.parquet`
//!   (and so `leaderboard.md`) and the manifest's `bhc` key state the model and values.
//! - **BHC**: DP concentration `board.bhc.alpha` (default 1). Its `own_objective` is
//!   `log p(D|T)`, and `bhc_lower_bound` is its lower bound on the DPM evidence,
//!   `log[Γ(α)/Γ(N+α) f(T)]`.
//! - **BRT**: `γ = board.bhc.gamma` (default 0.5, as the core's examples). Its tree is a rose
//!   tree, kept as it is (not binarised): like PYDT's multifurcating trees, the energies
//!   score it only where it happens to be binary (a `note` says so), and Dasgupta's cost and
//!   the label scores take it as it is. Its `own_objective` is BRT's `log p(D|T)`.
//! - **Size**: `O(N²)` marginal likelihoods and a pair table of `N²/2` entries: they run at any
//!   N (no 64-point masks) up to `board.bhc.max_points` (default 2000).

use super::data::{Instance, InstanceData};
use super::methods::{BoardMethod, Built};
use super::BoardSection;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use trellis_core::bhc::{
    bhc_greedy, brt_greedy, BetaBernoulli, ConjugateModel, NormalInverseWishart,
};

/// `[board.bhc]`: BHC and BRT.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BhcPart {
    /// BHC's DP concentration α (default 1).
    pub alpha: f64,
    /// BRT's γ in (0, 1] (default 0.5).
    pub gamma: f64,
    /// Gaussian model: κ₀ (default 0.1).
    pub kappa0: f64,
    /// Gaussian model: `S₀ = scale · diag(var)` (default 0.25).
    pub scale: f64,
    /// Beta–Bernoulli model: the prior's strength (default 2).
    pub strength: f64,
    /// Largest N they run on (default 2000).
    pub max_points: usize,
}

impl Default for BhcPart {
    fn default() -> Self {
        BhcPart {
            alpha: 1.0,
            gamma: 0.5,
            kappa0: 0.1,
            scale: 0.25,
            strength: 2.0,
            max_points: 2000,
        }
    }
}

/// Most points `board.bhc.max_points` may allow (a pair table of 50M entries, about 1 GB).
pub const MOST_POINTS: usize = 10_000;

impl BhcPart {
    /// Checks every value, in one line each.
    pub fn validate(&self) -> Result<(), String> {
        use crate::experiment::config::positive;
        positive("board.bhc.alpha", self.alpha)?;
        positive("board.bhc.kappa0", self.kappa0)?;
        positive("board.bhc.scale", self.scale)?;
        positive("board.bhc.strength", self.strength)?;
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(format!(
                "board.bhc.gamma = {:?} must be in (0, 1] (BRT's gamma; 0.5 is the default)",
                self.gamma
            ));
        }
        if self.max_points == 0 || self.max_points > MOST_POINTS {
            return Err(format!("board.bhc.max_points must be in 1..={MOST_POINTS}"));
        }
        Ok(())
    }
}

/// Why BHC or BRT does not run on `inst`, if it does not.
pub fn applies(inst: &Instance, s: &BoardSection) -> std::result::Result<(), String> {
    match &inst.data {
        InstanceData::Points { .. } if inst.n() > s.bhc.max_points => Err(format!(
            "N = {} is above board.bhc.max_points = {}",
            inst.n(),
            s.bhc.max_points
        )),
        InstanceData::Points { .. } => Ok(()),
        InstanceData::Graph { .. } => {
            Err("needs points (rows of features); a similarity or distance matrix has none".into())
        }
        InstanceData::Jet(_) => Err("needs a points table (rows of features), not jets".into()),
    }
}

/// The cluster model BHC and BRT use on a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Every value is 0 or 1: Beta–Bernoulli per feature.
    Bernoulli,
    /// Otherwise: Normal–Inverse-Wishart Gaussian.
    Gaussian,
}

impl Model {
    /// The model of the table `x`.
    pub fn of(x: &[Vec<f64>]) -> Model {
        if x.iter().flatten().all(|&v| v == 0.0 || v == 1.0) {
            Model::Bernoulli
        } else {
            Model::Gaussian
        }
    }

    /// The model and its hyperparameters in words.
    pub fn describe(self, p: &BhcPart, d: usize) -> String {
        match self {
            Model::Bernoulli => format!(
                "Beta-Bernoulli per feature (every value is 0 or 1): Beta(s m_d, s (1 - m_d)), m_d the feature's frequency clamped to [1/(2N), 1 - 1/(2N)], s = {}",
                p.strength
            ),
            Model::Gaussian => format!(
                "NIW Gaussian, full covariance: m0 = the data mean, kappa0 = {}, nu0 = D + 2 = {}, S0 = {} diag(var)",
                p.kappa0,
                d + 2,
                p.scale
            ),
        }
    }
}

/// The points `inst` holds (as the board read them).
fn points(inst: &Instance) -> Result<&[Vec<f64>]> {
    match &inst.data {
        InstanceData::Points { x, .. } => Ok(x),
        _ => bail!("BHC and BRT need points (rows of features)"),
    }
}

/// Runs BHC or BRT (`method`) on `inst`'s points.
pub fn build(method: BoardMethod, inst: &Instance, s: &BoardSection) -> Result<Built> {
    let x = points(inst)?;
    let p = &s.bhc;
    let model = Model::of(x);
    let d = x.first().map_or(0, Vec::len);
    let built = match model {
        Model::Bernoulli => run(method, &BetaBernoulli::from_data(x, p.strength)?, p)?,
        Model::Gaussian => run(
            method,
            &NormalInverseWishart::from_data(x, p.kappa0, p.scale)?,
            p,
        )?,
    };
    let what = match method {
        BoardMethod::Bhc => format!("alpha = {}", p.alpha),
        _ => format!("gamma = {}", p.gamma),
    };
    Ok(Built {
        note: format!("{}; {what}", model.describe(p, d)),
        ..built
    })
}

/// The tree and numbers of BHC or BRT under `model`.
fn run<M: ConjugateModel>(method: BoardMethod, model: &M, p: &BhcPart) -> Result<Built> {
    Ok(match method {
        BoardMethod::Bhc => {
            let r = bhc_greedy(model, p.alpha)?;
            let mut b = Built::of(r.hierarchy()).with_objective(r.log_p_tree());
            b.extra
                .push(("bhc_lower_bound".into(), r.log_lower_bound()));
            b
        }
        BoardMethod::Brt => {
            let r = brt_greedy(model, p.gamma)?;
            Built::of(r.hierarchy()).with_objective(r.log_p_tree())
        }
        m => bail!("{} is not BHC or BRT", m.name()),
    })
}

/// The manifest's `bhc` value: the settings, and the model each instance ran with.
pub fn manifest(insts: &[Instance], s: &BoardSection) -> Option<serde_json::Value> {
    if !s.methods.iter().any(|m| matches!(m, BoardMethod::Bhc | BoardMethod::Brt)) {
        return None;
    }
    let models: Vec<serde_json::Value> = insts
        .iter()
        .filter_map(|inst| {
            let x = points(inst).ok()?;
            let d = x.first().map_or(0, Vec::len);
            Some(serde_json::json!({
                "dataset": inst.dataset,
                "instance": inst.instance,
                "model": Model::of(x).describe(&s.bhc, d),
            }))
        })
        .collect();
    Some(serde_json::json!({ "settings": s.bhc, "models": models }))
}
