//! One jet at the chosen λ: every method's tree scored and compared with the truth, the jet's
//! exact facts and the truth's posterior rank; `jets.parquet` and `exact.parquet`.

use super::compare::{compare, random_tree_recovery, Comparison, SIZE_CLASSES};
use super::pmethod::PMethod;
use super::run::model_at;
use super::PythiaJetsSection;
use crate::data::ginkgo::Jet;
use crate::exact::rank::{rank, Count};
use crate::exact::{FullTrellis, MapTrellis};
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::experiment::table::Table;
use crate::model::GinkgoModel;
use crate::tree::Tree;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Instant;

/// One method's tree on one jet.
#[derive(Clone, Debug)]
pub struct MethodRecord {
    /// The method.
    pub method: PMethod,
    /// Its tree (canonical Newick).
    pub newick: String,
    /// Its log-likelihood.
    pub log_likelihood: f64,
    /// Wall seconds.
    pub seconds: f64,
    /// Against the truth tree, when the jet has one (not for the truth itself).
    pub comparison: Option<Comparison>,
}

/// The truth tree's exact standing.
#[derive(Clone, Copy, Debug)]
pub struct TruthFacts {
    /// Its log-likelihood.
    pub log_likelihood: f64,
    /// Its rank (`None` when forbidden, or without the full trellis).
    pub rank: Option<Count>,
    /// The share of its non-trivial clusters a uniformly random tree recovers, in expectation.
    pub random_recovered: Option<f64>,
}

/// What the exact trellis gives of a jet: the MAP always; log Z, the number of finite trees and
/// the truth's rank only from the full trellis (jets up to `full_max_leaves`).
#[derive(Clone, Debug)]
pub struct JetRecord {
    /// The set.
    pub set: String,
    /// The jet's name.
    pub name: String,
    /// Its index in the set (after filtering).
    pub index: usize,
    /// Leaves.
    pub n: usize,
    /// The λ it ran at.
    pub lambda: f64,
    /// Exact log Z (full trellis only).
    pub log_z: Option<f64>,
    /// The exact MAP log-likelihood.
    pub map: f64,
    /// Trees with finite likelihood (full trellis only).
    pub n_trees_finite: Option<u128>,
    /// The methods' trees, in [`PMethod::ALL`] order (truth only when the jet has one).
    pub methods: Vec<MethodRecord>,
    /// The truth's standing, when the jet has a truth tree.
    pub truth: Option<TruthFacts>,
}

/// MAP − method: 0 when every tree is forbidden (the MAP is then `-inf` too), +inf for a
/// forbidden tree under a finite MAP.
pub fn gap(map: f64, ll: f64) -> f64 {
    if map == f64::NEG_INFINITY {
        0.0
    } else {
        map - ll
    }
}

/// `exp(ll − log Z)`; `None` when every tree is forbidden (no distribution) or log Z is
/// unknown (no full trellis).
pub fn posterior(ll: f64, log_z: Option<f64>) -> Option<f64> {
    let z = log_z?;
    z.is_finite().then(|| (ll - z).exp())
}

/// The exact trellis of one jet: the full trellis, or the MAP-only one.
enum Exact {
    Full(FullTrellis),
    Map(MapTrellis),
}

impl Exact {
    fn map_tree(&self) -> Tree {
        match self {
            Exact::Full(t) => t.map_tree(),
            Exact::Map(t) => t.map_tree(),
        }
    }
    fn map_log_likelihood(&self) -> f64 {
        match self {
            Exact::Full(t) => t.map_log_likelihood(),
            Exact::Map(t) => t.map_log_likelihood(),
        }
    }
}

/// The trees of the λ-dependent methods ([`PMethod::MODEL`]) on `m`, with each one's seconds;
/// the full trellis when `full` (else the MAP-only one). `None` for a method with no tree.
type ModelTrees = (Exact, Vec<(PMethod, Option<Tree>, f64)>);

fn model_trees(
    name: &str,
    m: &GinkgoModel,
    full: bool,
    sec: &PythiaJetsSection,
) -> Result<ModelTrees> {
    let opts = MethodsSection {
        beam_size: sec.beam_size,
        max_exact_leaves: super::MAX_LEAVES,
        ..MethodsSection::default()
    };
    let problem = Problem {
        name,
        model: m,
        similarities: None,
        truth: None,
    };
    let t0 = Instant::now();
    let exact = if full {
        Exact::Full(
            FullTrellis::build_with_limit(m, super::MAX_FULL_LEAVES)
                .with_context(|| name.to_string())?,
        )
    } else {
        Exact::Map(MapTrellis::build_with_limit(m, super::MAX_LEAVES).with_context(|| name.to_string())?)
    };
    let mut out = vec![(
        PMethod::Trellis,
        Some(exact.map_tree()),
        t0.elapsed().as_secs_f64(),
    )];
    for (pm, method) in [(PMethod::Beam, Method::Beam), (PMethod::Greedy, Method::Greedy)] {
        let t0 = Instant::now();
        let tree = method.run(&problem, &opts)?.map(|f| f.tree);
        out.push((pm, tree, t0.elapsed().as_secs_f64()));
    }
    Ok((exact, out))
}

/// The λ-dependent methods' trees on `jet` at `lambda`, each scored under that λ and compared
/// with `truth` (for the fits of λ out of sample); the MAP from the full trellis when `full`.
pub fn model_methods_at(
    name: &str,
    jet: &Jet,
    truth: Option<&Tree>,
    lambda: f64,
    full: bool,
    sec: &PythiaJetsSection,
) -> Result<(f64, Vec<MethodRecord>)> {
    let m = model_at(jet, lambda)?;
    let energy: Vec<f64> = jet.leaves.iter().map(|p| p[0]).collect();
    let (exact, trees) = model_trees(name, &m, full, sec)?;
    let records = trees
        .into_iter()
        .filter_map(|(method, tree, seconds)| {
            let tree = tree?;
            Some(MethodRecord {
                method,
                newick: tree.to_newick(),
                log_likelihood: tree.log_likelihood(&m),
                seconds,
                comparison: truth.map(|t| compare(&tree, t, &energy)),
            })
        })
        .collect();
    Ok((exact.map_log_likelihood(), records))
}

/// Scores jet `jet` (index `index` of set `set`) at `lambda`: the full trellis when it has at
/// most `sec.full_max()` leaves, else the MAP-only trellis.
pub fn score_jet(
    set: &str,
    index: usize,
    jet: &Jet,
    truth: Option<&Tree>,
    lambda: f64,
    sec: &PythiaJetsSection,
) -> Result<JetRecord> {
    let name = format!("set {set:?}, jet {:?}", jet.name);
    let m = model_at(jet, lambda)?;
    let energy: Vec<f64> = jet.leaves.iter().map(|p| p[0]).collect();
    let full = jet.n_leaves <= sec.full_max();
    let (exact, model) = model_trees(&name, &m, full, sec)?;
    let mut methods = Vec::new();
    for method in PMethod::ALL {
        let t0 = Instant::now();
        let (tree, seconds) = if let Some(k) = model.iter().position(|x| x.0 == method) {
            (model[k].1.clone(), model[k].2)
        } else if let Some(t) = method.physics_tree(jet, sec.kt) {
            (Some(t?), t0.elapsed().as_secs_f64())
        } else {
            (truth.cloned(), 0.0)
        };
        let Some(tree) = tree else {
            continue;
        };
        methods.push(MethodRecord {
            method,
            newick: tree.to_newick(),
            // The one canonical scorer (the MAP tree scores the trellis's MAP bit for bit).
            log_likelihood: tree.log_likelihood(&m),
            seconds,
            comparison: truth
                .filter(|_| method != PMethod::Truth)
                .map(|t| compare(&tree, t, &energy)),
        });
    }
    let (log_z, n_trees_finite) = match &exact {
        Exact::Full(t) => (Some(t.log_partition()), Some(t.n_trees_finite())),
        Exact::Map(_) => (None, None),
    };
    let truth = match truth {
        Some(t) => {
            let ll = t.log_likelihood(&m);
            let rank = match &exact {
                Exact::Full(trellis) if ll != f64::NEG_INFINITY => {
                    Some(rank(&m, trellis, t, 1e-9, sec.rank_cap).context(name.clone())?)
                }
                _ => None,
            };
            Some(TruthFacts {
                log_likelihood: ll,
                rank,
                random_recovered: random_tree_recovery(t),
            })
        }
        None => None,
    };
    Ok(JetRecord {
        set: set.to_string(),
        name: jet.name.clone(),
        index,
        n: jet.n_leaves,
        lambda,
        log_z,
        map: exact.map_log_likelihood(),
        n_trees_finite,
        methods,
        truth,
    })
}

/// `jets.parquet`: one row per jet and method.
pub fn write_jets_table(records: &[JetRecord], path: &Path) -> Result<()> {
    let rows: Vec<(&JetRecord, &MethodRecord)> = records
        .iter()
        .flat_map(|r| r.methods.iter().map(move |m| (r, m)))
        .collect();
    let s = |g: &dyn Fn(&JetRecord, &MethodRecord) -> String| {
        rows.iter().map(|(r, m)| g(r, m)).collect::<Vec<_>>()
    };
    let f = |g: &dyn Fn(&JetRecord, &MethodRecord) -> Option<f64>| {
        rows.iter().map(|(r, m)| g(r, m)).collect::<Vec<_>>()
    };
    let u = |g: &dyn Fn(&JetRecord, &MethodRecord) -> Option<u64>| {
        rows.iter().map(|(r, m)| g(r, m)).collect::<Vec<_>>()
    };
    let c = |g: &dyn Fn(&Comparison) -> Option<f64>| {
        rows.iter()
            .map(|(_, m)| m.comparison.as_ref().and_then(g))
            .collect::<Vec<_>>()
    };
    let cu = |g: &dyn Fn(&Comparison) -> u64| {
        rows.iter()
            .map(|(_, m)| m.comparison.as_ref().map(g))
            .collect::<Vec<_>>()
    };
    let table = Table::new()
        .str("set", &s(&|r, _| r.set.clone()))
        .str("jet", &s(&|r, _| r.name.clone()))
        .u64("jet_index", &u(&|r, _| Some(r.index as u64)))
        .u64("n_leaves", &u(&|r, _| Some(r.n as u64)))
        .str("method", &s(&|_, m| m.method.name().to_string()))
        .f64("log_likelihood", &f(&|_, m| Some(m.log_likelihood)))
        .f64("gap_to_map", &f(&|r, m| Some(gap(r.map, m.log_likelihood))))
        .u64(
            "forbidden",
            &u(&|_, m| Some(u64::from(m.log_likelihood == f64::NEG_INFINITY))),
        )
        .f64("posterior", &f(&|r, m| posterior(m.log_likelihood, r.log_z)))
        .f64(
            "log_posterior",
            &f(&|r, m| {
                r.log_z
                    .filter(|z| z.is_finite())
                    .map(|z| m.log_likelihood - z)
            }),
        )
        .f64("truth_recovered", &c(&|x| x.recovered))
        .u64("shared_clusters", &cu(&|x| x.shared_clusters as u64))
        .u64("truth_clusters", &cu(&|x| x.truth_clusters as u64))
        .u64("rf", &cu(&|x| x.rf as u64))
        .u64("rf_max", &cu(&|x| x.rf_max as u64))
        .f64("rf_normalised", &c(&|x| x.rf_normalised()))
        .u64("lund_truth", &cu(&|x| x.lund_truth as u64))
        .u64("lund_shared", &cu(&|x| x.lund_shared as u64))
        .f64("lund_fraction", &c(&|x| x.lund_fraction()))
        .u64("lund_agrees", &cu(&|x| u64::from(x.lund_agrees)));
    let comparisons: Vec<Option<Comparison>> = rows.iter().map(|(_, m)| m.comparison).collect();
    with_size_columns(table, &comparisons)
        .str("tree_newick", &s(&|_, m| m.newick.clone()))
        .f64("seconds", &f(&|_, m| Some(m.seconds)))
        .write_parquet(path)
}

/// `table` with the columns of each row's comparison by cluster size and energy:
/// `truth_clusters_<class>` and `shared_clusters_<class>` for each of [`SIZE_CLASSES`], then
/// `truth_energy` and `shared_energy` (null where a row has no comparison).
pub fn with_size_columns(mut table: Table, comparisons: &[Option<Comparison>]) -> Table {
    let count = |g: &dyn Fn(&Comparison) -> u64| {
        comparisons
            .iter()
            .map(|c| c.as_ref().map(g))
            .collect::<Vec<_>>()
    };
    for (k, (class, _, _)) in SIZE_CLASSES.iter().enumerate() {
        table = table
            .u64(&format!("truth_clusters_{class}"), &count(&|x| x.by_size[k].0 as u64))
            .u64(&format!("shared_clusters_{class}"), &count(&|x| x.by_size[k].1 as u64));
    }
    let energy = |g: &dyn Fn(&Comparison) -> f64| {
        comparisons
            .iter()
            .map(|c| c.as_ref().map(g))
            .collect::<Vec<_>>()
    };
    table
        .f64("truth_energy", &energy(&|x| x.truth_energy))
        .f64("shared_energy", &energy(&|x| x.shared_energy))
}

/// `exact.parquet`: one row per jet (log Z, the MAP, tree counts, the truth's standing).
pub fn write_exact_table(records: &[JetRecord], path: &Path) -> Result<()> {
    let f = |g: &dyn Fn(&JetRecord) -> Option<f64>| records.iter().map(g).collect::<Vec<_>>();
    let u = |g: &dyn Fn(&JetRecord) -> Option<u64>| records.iter().map(g).collect::<Vec<_>>();
    let rank = |r: &JetRecord| r.truth.and_then(|t| t.rank);
    Table::new()
        .str("set", &records.iter().map(|r| r.set.clone()).collect::<Vec<_>>())
        .str("jet", &records.iter().map(|r| r.name.clone()).collect::<Vec<_>>())
        .u64("jet_index", &u(&|r| Some(r.index as u64)))
        .u64("n_leaves", &u(&|r| Some(r.n as u64)))
        .f64("lambda", &f(&|r| Some(r.lambda)))
        .f64("log_z", &f(&|r| r.log_z))
        .f64("map_log_likelihood", &f(&|r| Some(r.map)))
        .u64(
            "n_trees_finite",
            &u(&|r| r.n_trees_finite.and_then(|c| u64::try_from(c).ok())),
        )
        .u64("full_trellis", &u(&|r| Some(u64::from(r.log_z.is_some()))))
        .u64(
            "n_trees",
            &u(&|r| crate::tree::n_binary_trees(r.n).and_then(|c| u64::try_from(c).ok())),
        )
        .u64("has_truth", &u(&|r| Some(u64::from(r.truth.is_some()))))
        .f64("truth_log_likelihood", &f(&|r| r.truth.map(|t| t.log_likelihood)))
        .u64(
            "truth_forbidden",
            &u(&|r| {
                r.truth
                    .map(|t| u64::from(t.log_likelihood == f64::NEG_INFINITY))
            }),
        )
        .f64(
            "truth_posterior",
            &f(&|r| {
                let t = r.truth?;
                r.log_z?;
                Some(posterior(t.log_likelihood, r.log_z).unwrap_or(0.0))
            }),
        )
        .u64("truth_rank", &u(&|r| rank(r).map(|c| c.count)))
        .u64("truth_rank_capped", &u(&|r| rank(r).map(|c| u64::from(c.capped))))
        .f64(
            "truth_log10_rank",
            &f(&|r| rank(r).map(|c| (c.count as f64).log10())),
        )
        .f64(
            "random_tree_recovered",
            &f(&|r| r.truth.and_then(|t| t.random_recovered)),
        )
        .write_parquet(path)
}

