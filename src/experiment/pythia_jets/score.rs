//! One jet at the chosen λ: every method's tree scored and compared with the truth, the jet's
//! exact facts and the truth's posterior rank; `jets.parquet`, `exact.parquet` and
//! `summary.parquet`.

use super::compare::{compare, random_tree_recovery, Comparison};
use super::run::model_at;
use super::{KtForm, PythiaJetsSection};
use crate::data::ginkgo::Jet;
use crate::exact::rank::{rank, Count};
use crate::exact::FullTrellis;
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::experiment::stats::mean_std;
use crate::experiment::table::Table;
use crate::search::{ee_generalised_kt, generalised_kt, KtAlgorithm};
use crate::tree::Tree;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Instant;

/// A method of this kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PMethod {
    /// The exact MAP tree of the full trellis.
    Trellis,
    /// Beam search.
    Beam,
    /// Greedy agglomeration.
    Greedy,
    /// kt (p = 1).
    Kt,
    /// Cambridge/Aachen (p = 0).
    CambridgeAachen,
    /// anti-kt (p = −1).
    AntiKt,
    /// The truth tree.
    Truth,
}

impl PMethod {
    /// Every method, in table and chart order.
    pub const ALL: [PMethod; 7] = [
        PMethod::Trellis,
        PMethod::Beam,
        PMethod::Greedy,
        PMethod::Kt,
        PMethod::CambridgeAachen,
        PMethod::AntiKt,
        PMethod::Truth,
    ];

    /// The name in tables and measures.
    pub fn name(self) -> &'static str {
        match self {
            PMethod::Trellis => "trellis",
            PMethod::Beam => "beam",
            PMethod::Greedy => "greedy",
            PMethod::Kt => "kt",
            PMethod::CambridgeAachen => "cambridge_aachen",
            PMethod::AntiKt => "anti_kt",
            PMethod::Truth => "truth",
        }
    }

    /// The name in charts.
    pub fn display(self) -> &'static str {
        match self {
            PMethod::Trellis => "Exact MAP (trellis)",
            PMethod::Beam => "Beam search",
            PMethod::Greedy => "Greedy",
            PMethod::Kt => "kt",
            PMethod::CambridgeAachen => "Cambridge/Aachen",
            PMethod::AntiKt => "anti-kt",
            PMethod::Truth => "Truth",
        }
    }

    /// The method named `name`.
    pub fn from_name(name: &str) -> Option<PMethod> {
        PMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The kt family's member, for the kt methods.
    fn kt(self) -> Option<KtAlgorithm> {
        match self {
            PMethod::Kt => Some(KtAlgorithm::Kt),
            PMethod::CambridgeAachen => Some(KtAlgorithm::CambridgeAachen),
            PMethod::AntiKt => Some(KtAlgorithm::AntiKt),
            _ => None,
        }
    }
}

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
    /// Its rank (`None` when forbidden).
    pub rank: Option<Count>,
    /// The share of its non-trivial clusters a uniformly random tree recovers, in expectation.
    pub random_recovered: Option<f64>,
}

/// Everything computed for one jet.
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
    /// Exact log Z.
    pub log_z: f64,
    /// The exact MAP log-likelihood.
    pub map: f64,
    /// Trees with finite likelihood.
    pub n_trees_finite: u128,
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

/// `exp(ll − log Z)`; `None` when every tree is forbidden (no distribution).
pub fn posterior(ll: f64, log_z: f64) -> Option<f64> {
    (log_z.is_finite()).then(|| (ll - log_z).exp())
}

/// Scores jet `jet` (index `index` of set `set`) at `lambda`.
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
    let opts = MethodsSection {
        beam_size: sec.beam_size,
        max_exact_leaves: super::MAX_LEAVES,
        ..MethodsSection::default()
    };
    let problem = Problem {
        name: &name,
        model: &m,
        similarities: None,
        truth,
    };
    let t0 = Instant::now();
    let trellis = FullTrellis::build_with_limit(&m, super::MAX_LEAVES).context(name.clone())?;
    let trellis_seconds = t0.elapsed().as_secs_f64();
    let mut methods = Vec::new();
    for method in PMethod::ALL {
        let t0 = Instant::now();
        let tree = match method {
            PMethod::Trellis => Some(trellis.map_tree()),
            PMethod::Beam => Method::Beam.run(&problem, &opts)?.map(|f| f.tree),
            PMethod::Greedy => Method::Greedy.run(&problem, &opts)?.map(|f| f.tree),
            PMethod::Truth => truth.cloned(),
            kt => {
                let alg = kt.kt().context("a kt method")?;
                Some(match sec.kt {
                    KtForm::Ee => ee_generalised_kt(&jet.leaves, alg),
                    KtForm::Pp => generalised_kt(&jet.leaves, alg, 1.0),
                }
                .with_context(|| name.clone())?)
            }
        };
        let Some(tree) = tree else {
            continue;
        };
        let mut seconds = t0.elapsed().as_secs_f64();
        if method == PMethod::Trellis {
            seconds += trellis_seconds;
        }
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
    let truth = match truth {
        Some(t) => {
            let ll = t.log_likelihood(&m);
            let rank = if ll == f64::NEG_INFINITY {
                None
            } else {
                Some(rank(&m, &trellis, t, 1e-9, sec.rank_cap).context(name.clone())?)
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
        log_z: trellis.log_partition(),
        map: trellis.map_log_likelihood(),
        n_trees_finite: trellis.n_trees_finite(),
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
    Table::new()
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
            &f(&|r, m| r.log_z.is_finite().then_some(m.log_likelihood - r.log_z)),
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
        .u64("lund_agrees", &cu(&|x| u64::from(x.lund_agrees)))
        .str("tree_newick", &s(&|_, m| m.newick.clone()))
        .f64("seconds", &f(&|_, m| Some(m.seconds)))
        .write_parquet(path)
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
        .f64("log_z", &f(&|r| Some(r.log_z)))
        .f64("map_log_likelihood", &f(&|r| Some(r.map)))
        .u64(
            "n_trees_finite",
            &u(&|r| u64::try_from(r.n_trees_finite).ok()),
        )
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

/// Mean and standard error (sample standard deviation over √n) of the finite values, with
/// their count; the standard error is NaN below two values.
pub fn mean_se(values: impl IntoIterator<Item = f64>) -> (f64, f64, usize) {
    let s = mean_std(values);
    let se = if s.n >= 2 {
        s.std / ((s.n - 1) as f64).sqrt()
    } else {
        f64::NAN
    };
    (s.mean, se, s.n)
}

/// The metrics of `summary.parquet` per method, read from a jet's method record (`None`: the
/// jet does not count for it).
type Metric = (&'static str, fn(&JetRecord, &MethodRecord) -> Option<f64>);

const METRICS: [Metric; 8] = [
    ("log_likelihood", |_, m| Some(m.log_likelihood)),
    ("gap_to_map", |r, m| Some(gap(r.map, m.log_likelihood))),
    ("forbidden", |_, m| {
        Some(f64::from(u8::from(m.log_likelihood == f64::NEG_INFINITY)))
    }),
    ("posterior", |r, m| posterior(m.log_likelihood, r.log_z)),
    ("truth_recovered", |_, m| m.comparison?.recovered),
    ("rf_normalised", |_, m| m.comparison?.rf_normalised()),
    ("lund_fraction", |_, m| m.comparison?.lund_fraction()),
    ("lund_agrees", |_, m| {
        Some(f64::from(u8::from(m.comparison?.lund_agrees)))
    }),
];

/// The `method` of `summary.parquet`'s rows for a uniformly random tree.
pub const RANDOM: &str = "random_tree";

/// `summary.parquet`: per set, leaf range (`"all"`, and `"n>=K"` for K = `large_from`) and
/// method, the mean and standard error of each metric over the jets (`gap_to_map` and
/// `log_likelihood` over finite values only, `forbidden` giving the share of `-inf` trees), and
/// for each method but the MAP and the truth the shares of jets where the MAP recovers more of
/// the truth, as much, or less (`map_better_recovery`, `map_tie_recovery`, `map_worse_recovery`);
/// and, as method [`RANDOM`], the expected `truth_recovered` of a uniformly random tree.
pub fn write_summary(records: &[JetRecord], large_from: usize, path: &Path) -> Result<()> {
    let mut sets: Vec<&str> = Vec::new();
    for r in records {
        if !sets.contains(&r.set.as_str()) {
            sets.push(&r.set);
        }
    }
    let large = format!("n>={large_from}");
    let (mut set, mut leaves, mut method, mut metric) = (vec![], vec![], vec![], vec![]);
    let (mut mean, mut se, mut jets) = (vec![], vec![], vec![]);
    for s in sets {
        for (range, keep) in [("all", 0), (large.as_str(), large_from)] {
            let rs: Vec<&JetRecord> = records
                .iter()
                .filter(|r| r.set == s && r.n >= keep)
                .collect();
            if rs.is_empty() {
                continue;
            }
            let mut push = |who: &str, name: &str, v: Vec<f64>| {
                let (m, e, n) = mean_se(v);
                if n > 0 {
                    set.push(s.to_string());
                    leaves.push(range.to_string());
                    method.push(who.to_string());
                    metric.push(name.to_string());
                    mean.push(Some(m));
                    se.push(Some(e));
                    jets.push(Some(n as u64));
                }
            };
            for p in PMethod::ALL {
                let of = |r: &JetRecord| r.methods.iter().find(|m| m.method == p).cloned();
                for (name, g) in METRICS {
                    push(p.name(), name, rs.iter().filter_map(|r| g(r, &of(r)?)).collect());
                }
                if matches!(p, PMethod::Trellis | PMethod::Truth) {
                    continue;
                }
                // Per jet: the MAP's recovery against this method's.
                let cmp: Vec<std::cmp::Ordering> = rs
                    .iter()
                    .filter_map(|r| {
                        let a = of(r)?.comparison?.shared_clusters;
                        let b = r
                            .methods
                            .iter()
                            .find(|m| m.method == PMethod::Trellis)?
                            .comparison?
                            .shared_clusters;
                        Some(b.cmp(&a))
                    })
                    .collect();
                for (name, o) in [
                    ("map_better_recovery", std::cmp::Ordering::Greater),
                    ("map_tie_recovery", std::cmp::Ordering::Equal),
                    ("map_worse_recovery", std::cmp::Ordering::Less),
                ] {
                    push(
                        p.name(),
                        name,
                        cmp.iter().map(|c| f64::from(u8::from(*c == o))).collect(),
                    );
                }
            }
            let random = rs.iter().filter_map(|r| r.truth?.random_recovered);
            push(RANDOM, "truth_recovered", random.collect());
        }
    }
    Table::new()
        .str("set", &set)
        .str("leaves", &leaves)
        .str("method", &method)
        .str("metric", &metric)
        .f64("mean", &mean)
        .f64("se", &se)
        .u64("jets", &jets)
        .write_parquet(path)
}
