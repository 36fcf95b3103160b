//! The measures of the fair comparison, read from the tables:
//! - `best.<set>.<range>.<group>.*`: among the physics baselines of `group` (`veto`: given the
//!   model's t_cut; `kt_family`: kt, Cambridge/Aachen and anti-kt as physicists run them;
//!   `any`: every physics baseline), the one with the largest mean truth recovery over the jets
//!   (`summary.parquet`): `method_index` (its place in the kind's list, named in the measure's
//!   words), `truth_recovered`, `recovered_pooled`, and the MAP's paired differences from it
//!   (`map_minus_recovered` and its `_se`, `map_minus_pooled`, by size and energy-weighted, and
//!   the shares of jets where the MAP recovers more, as many or fewer clusters);
//! - `holdout.<set>.<scheme>.<method>.{truth_recovered,truth_recovered_se,recovered_pooled}`
//!   for the λ-dependent methods under each scheme of `lambda_holdout.parquet`, its λ per half
//!   (`holdout.<set>.<scheme>.lambda_half_1/2`), and `holdout.<set>.<scheme>.map_minus_best_veto`
//!   (with `_se`): the MAP under that λ against the strongest vetoed baseline of all jets, paired;
//! - `by_n.<set>.n<N>.<method>.{truth_recovered,gap_to_map}` from `by_n.parquet` for the
//!   exact MAP, beam search, greedy and the strongest vetoed baseline.

use super::measures::{metric_words, range_id, sets_of, summary, Summary, CHECKED};
use super::pmethod::PMethod;
use super::summary::mean_se;
use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;

/// A group of physics baselines: its name in measures, in words, and who is in it.
type Group = (&'static str, &'static str, fn(PMethod) -> bool);

/// The groups of physics baselines.
const GROUPS: [Group; 3] = [
    ("veto", "given the model's t_cut (veto)", |m| m.vetoed()),
    ("kt_family", "of the kt family as physicists run it", |m| {
        m.is_kt_family()
    }),
    ("any", "of all physics baselines", |m| m.is_physics()),
];

/// Whether a metric of [`CHECKED`] is copied for the best baseline: the paired ones and the
/// pooled recovery.
fn copied(metric: &str) -> bool {
    metric.starts_with("map_") || metric == "recovered_pooled"
}

/// The physics baseline of `group` with the largest mean truth recovery on (set, range), first
/// in the kind's order on a tie.
fn best_of(s: &Summary, set: &str, range: &str, group: fn(PMethod) -> bool) -> Option<PMethod> {
    let rec = |m: PMethod| {
        s.get(&(
            set.into(),
            range.into(),
            m.name().into(),
            "truth_recovered".into(),
        ))
        .map(|v| v.mean)
        .filter(|v| v.is_finite())
    };
    let mut best: Option<(PMethod, f64)> = None;
    for m in PMethod::ALL.into_iter().filter(|&m| group(m)) {
        if let Some(v) = rec(m) {
            if best.is_none_or(|b| v > b.1) {
                best = Some((m, v));
            }
        }
    }
    best.map(|b| b.0)
}

/// The `best.*` measures (see the module documentation).
pub fn best(results: &Results) -> Result<Vec<Measure>> {
    let s = summary(results)?;
    let mut keys: Vec<(String, String)> = Vec::new();
    for (set, range, _, _) in s.keys() {
        if !keys.contains(&(set.clone(), range.clone())) {
            keys.push((set.clone(), range.clone()));
        }
    }
    let mut out = Vec::new();
    for (set, range) in keys {
        for (group, words, f) in GROUPS {
            let Some(m) = best_of(&s, &set, &range, f) else {
                continue;
            };
            let id = format!("best.{set}.{}.{group}", range_id(&range));
            let what = format!(
                "set {set}, {range} leaves: the strongest physics baseline {words}, {}",
                m.name()
            );
            out.push(Measure::new(
                format!("{id}.method_index"),
                format!("{what}: its index in the kind's list of methods"),
                m.index() as f64,
            ));
            let get = |metric: &str| s.get(&(set.clone(), range.clone(), m.name().into(), metric.into()));
            if let Some(v) = get("truth_recovered") {
                out.push(Measure::new(
                    format!("{id}.truth_recovered"),
                    format!("{what}: {}", metric_words("truth_recovered")),
                    v.mean,
                ));
            }
            for metric in CHECKED.into_iter().filter(|m| copied(m)) {
                let Some(v) = get(metric) else {
                    continue;
                };
                out.push(Measure::new(
                    format!("{id}.{metric}"),
                    format!("{what}: {}", metric_words(metric)),
                    v.mean,
                ));
                if metric.starts_with("map_minus") {
                    out.push(Measure::new(
                        format!("{id}.{metric}_se"),
                        format!("{what}: {}, its standard error", metric_words(metric)),
                        v.se,
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// The `holdout.*` measures (see the module documentation).
pub fn holdout(results: &Results) -> Result<Vec<Measure>> {
    let s = summary(results)?;
    let h = results.table("lambda_holdout")?;
    if h.height() == 0 {
        return Ok(Vec::new());
    }
    let (set, scheme, method) = (
        str_column(&h, "set")?,
        str_column(&h, "scheme")?,
        str_column(&h, "method")?,
    );
    let (jet, half) = (u64_column(&h, "jet_index")?, u64_column(&h, "half")?);
    let (lambda, rec) = (f64_column(&h, "lambda")?, f64_column(&h, "truth_recovered")?);
    let (shared, truth) = (
        u64_column(&h, "shared_clusters")?,
        u64_column(&h, "truth_clusters")?,
    );
    // The strongest vetoed baseline's recovery per jet, from the jets table.
    let t = results.table("jets")?;
    let (tset, tjet, tmethod) = (
        str_column(&t, "set")?,
        u64_column(&t, "jet_index")?,
        str_column(&t, "method")?,
    );
    let trec = f64_column(&t, "truth_recovered")?;
    let mut out = Vec::new();
    for name in sets_of(&set) {
        let best = best_of(&s, &name, "all", |m| m.vetoed());
        let baseline: BTreeMap<u64, f64> = (0..t.height())
            .filter(|&i| tset[i] == name && best.is_some_and(|b| tmethod[i] == b.name()))
            .filter_map(|i| Some((tjet[i]?, trec[i]?)))
            .collect();
        for sch in super::holdout::SCHEMES {
            let rows: Vec<usize> = (0..h.height())
                .filter(|&i| set[i] == name && scheme[i] == sch)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let id = format!("holdout.{name}.{sch}");
            let what = format!("set {name}, λ {}", sch.replace('_', " "));
            for k in [1, 2] {
                if let Some(l) = rows.iter().find(|&&i| half[i] == Some(k)).and_then(|&i| lambda[i]) {
                    out.push(Measure::new(
                        format!("{id}.lambda_half_{k}"),
                        format!("{what}: the λ of the jets of half {k}"),
                        l,
                    ));
                }
            }
            for m in PMethod::MODEL {
                let mine: Vec<usize> = rows
                    .iter()
                    .copied()
                    .filter(|&i| method[i] == m.name())
                    .collect();
                let (mean, se, n) = mean_se(mine.iter().filter_map(|&i| rec[i]));
                if n == 0 {
                    continue;
                }
                let (a, b) = mine.iter().fold((0u64, 0u64), |(a, b), &i| {
                    (a + shared[i].unwrap_or(0), b + truth[i].unwrap_or(0))
                });
                for (k, v, w) in [
                    ("truth_recovered", mean, "mean over jets of the share of truth clusters recovered"),
                    ("truth_recovered_se", se, "its standard error"),
                    ("recovered_pooled", a as f64 / b.max(1) as f64, "truth clusters recovered over truth clusters"),
                ] {
                    out.push(Measure::new(
                        format!("{id}.{}.{k}", m.name()),
                        format!("{what}, {}: {w}", m.name()),
                        v,
                    ));
                }
                if m == PMethod::Trellis {
                    let d: Vec<f64> = mine
                        .iter()
                        .filter_map(|&i| Some(rec[i]? - baseline.get(&jet[i]?)?))
                        .collect();
                    let (dm, dse, n) = mean_se(d);
                    if n > 0 {
                        let b = best.map_or("", |b| b.name());
                        out.push(Measure::new(
                            format!("{id}.map_minus_best_veto"),
                            format!("{what}: the MAP's per-jet recovery minus {b}'s (paired mean)"),
                            dm,
                        ));
                        out.push(Measure::new(
                            format!("{id}.map_minus_best_veto_se"),
                            format!("{what}: the MAP's per-jet recovery minus {b}'s, its standard error"),
                            dse,
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The `by_n.*` measures (see the module documentation).
pub fn by_n(results: &Results) -> Result<Vec<Measure>> {
    let s = summary(results)?;
    let t = results.table("by_n")?;
    let (set, method) = (str_column(&t, "set")?, str_column(&t, "method")?);
    let n = u64_column(&t, "n_leaves")?;
    let (rec, gap) = (
        f64_column(&t, "truth_recovered")?,
        f64_column(&t, "gap_to_map")?,
    );
    let mut out = Vec::new();
    for name in sets_of(&set) {
        let best = best_of(&s, &name, "all", |m| m.vetoed());
        let keep = |m: &str| {
            PMethod::MODEL.iter().any(|x| x.name() == m) || best.is_some_and(|b| b.name() == m)
        };
        for i in (0..t.height()).filter(|&i| set[i] == name && keep(&method[i])) {
            let Some(k) = n[i] else {
                continue;
            };
            for (metric, v) in [("truth_recovered", rec[i]), ("gap_to_map", gap[i])] {
                if let Some(v) = v {
                    out.push(Measure::new(
                        format!("by_n.{name}.n{k}.{}.{metric}", method[i]),
                        format!("set {name}, jets of {k} leaves, {}: {}", method[i], metric_words(metric)),
                        v,
                    ));
                }
            }
        }
    }
    Ok(out)
}
