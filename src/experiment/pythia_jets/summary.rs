//! `summary.parquet`: per set, leaf range (`"all"`, and `"n>=K"` for K = `large_from`) and
//! method, the measures of truth recovery and of the likelihood over the jets, and the MAP's
//! paired differences from every other method.
//!
//! - **Per-jet means** (`mean` is the mean over the jets, `se` its standard error):
//!   `log_likelihood` and `gap_to_map` (finite values only), `forbidden` (the share of `-inf`
//!   trees), `posterior` (jets with log Z), `truth_recovered`, `rf_normalised`, `lund_fraction`,
//!   `lund_agrees`.
//! - **Pooled over clusters** (`mean` is a ratio of sums over the jets, `se` its delta-method
//!   standard error with the jet as the unit): `recovered_pooled` (truth clusters recovered over
//!   truth clusters), `recovered_pooled_2`, `recovered_pooled_3_4`, `recovered_pooled_5_up` (the
//!   same within truth clusters of 2, 3–4 and 5 or more leaves) and `recovered_energy` (each
//!   truth cluster weighted by its energy).
//! - **Paired with the MAP**, for every method but the MAP and the truth, on the same jets:
//!   `map_minus_recovered` and `map_minus_lund` (the mean over jets of the MAP's per-jet value
//!   minus the method's, with the standard error of the paired differences),
//!   `map_minus_pooled`, `map_minus_pooled_2`, `map_minus_pooled_3_4`, `map_minus_pooled_5_up`
//!   and `map_minus_energy` (the MAP's pooled ratio minus the method's: one denominator, so the
//!   delta method on the paired numerators), and the shares of jets where the MAP recovers more
//!   truth clusters, as many, or fewer (`map_better_recovery`, `map_tie_recovery`,
//!   `map_worse_recovery`).
//! - As method [`RANDOM`], the expected `truth_recovered` of a uniformly random tree.

use super::compare::{Comparison, SIZE_CLASSES};
use super::pmethod::PMethod;
use super::score::{gap, posterior, JetRecord, MethodRecord};
use crate::experiment::stats::mean_std;
use crate::experiment::table::Table;
use anyhow::Result;
use std::path::Path;

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

/// `Σ a / Σ t` over the pairs `(a_i, t_i)` (one per jet) with its delta-method standard error
/// `sqrt(Σ (a_i − R t_i)² / (n (n − 1))) / mean(t)`, and n; `None` when `Σ t = 0`.
pub fn ratio_se(pairs: &[(f64, f64)]) -> Option<(f64, f64, usize)> {
    let n = pairs.len();
    let (sa, st) = pairs
        .iter()
        .fold((0.0, 0.0), |(x, y), &(a, t)| (x + a, y + t));
    if n == 0 || st <= 0.0 {
        return None;
    }
    let r = sa / st;
    let se = if n >= 2 {
        let ss: f64 = pairs.iter().map(|&(a, t)| (a - r * t).powi(2)).sum();
        (ss / (n * (n - 1)) as f64).sqrt() / (st / n as f64)
    } else {
        f64::NAN
    };
    Some((r, se, n))
}

/// The per-jet metrics, read from a jet's method record (`None`: the jet does not count).
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

/// A pooled measure: its name and a jet's (numerator, denominator).
type Pooled = (&'static str, fn(&Comparison) -> (f64, f64));

/// The pooled measures (see the module documentation), in the order of [`SIZE_CLASSES`].
pub const POOLED: [Pooled; 5] = [
    ("pooled", |c| (c.shared_clusters as f64, c.truth_clusters as f64)),
    ("pooled_2", |c| (c.by_size[0].1 as f64, c.by_size[0].0 as f64)),
    ("pooled_3_4", |c| (c.by_size[1].1 as f64, c.by_size[1].0 as f64)),
    ("pooled_5_up", |c| (c.by_size[2].1 as f64, c.by_size[2].0 as f64)),
    ("energy", |c| (c.shared_energy, c.truth_energy)),
];

/// The `method` of `summary.parquet`'s rows for a uniformly random tree.
pub const RANDOM: &str = "random_tree";

/// Rows of `summary.parquet` being built.
#[derive(Default)]
struct Rows {
    set: Vec<String>,
    leaves: Vec<String>,
    method: Vec<String>,
    metric: Vec<String>,
    mean: Vec<Option<f64>>,
    se: Vec<Option<f64>>,
    jets: Vec<Option<u64>>,
}

impl Rows {
    fn push(&mut self, key: (&str, &str, &str), metric: &str, v: Option<(f64, f64, usize)>) {
        let Some((m, e, n)) = v.filter(|v| v.2 > 0) else {
            return;
        };
        self.set.push(key.0.to_string());
        self.leaves.push(key.1.to_string());
        self.method.push(key.2.to_string());
        self.metric.push(metric.to_string());
        self.mean.push(Some(m));
        self.se.push(Some(e));
        self.jets.push(Some(n as u64));
    }
}

/// One set and leaf range: every row of it.
fn range_rows(rows: &mut Rows, set: &str, range: &str, rs: &[&JetRecord]) {
    let of = |r: &JetRecord, p: PMethod| r.methods.iter().find(|m| m.method == p).cloned();
    for p in PMethod::ALL {
        let key = (set, range, p.name());
        for (name, g) in METRICS {
            let v: Vec<f64> = rs.iter().filter_map(|r| g(r, &of(r, p)?)).collect();
            rows.push(key, name, Some(mean_se(v)));
        }
        let cmp: Vec<Comparison> = rs.iter().filter_map(|r| of(r, p)?.comparison).collect();
        for (name, g) in POOLED {
            let pairs: Vec<(f64, f64)> = cmp.iter().map(g).collect();
            rows.push(key, &format!("recovered_{name}"), ratio_se(&pairs));
        }
        if matches!(p, PMethod::Trellis | PMethod::Truth) {
            continue;
        }
        // Per jet: the MAP's comparison beside this method's.
        let both: Vec<(Comparison, Comparison)> = rs
            .iter()
            .filter_map(|r| Some((of(r, PMethod::Trellis)?.comparison?, of(r, p)?.comparison?)))
            .collect();
        for (name, g) in [
            ("recovered", (|c: &Comparison| c.recovered) as fn(&Comparison) -> Option<f64>),
            ("lund", |c: &Comparison| c.lund_fraction()),
        ] {
            let d: Vec<f64> = both
                .iter()
                .filter_map(|(a, b)| Some(g(a)? - g(b)?))
                .collect();
            rows.push(key, &format!("map_minus_{name}"), Some(mean_se(d)));
        }
        for (name, g) in POOLED {
            let pairs: Vec<(f64, f64)> = both
                .iter()
                .map(|(a, b)| (g(a).0 - g(b).0, g(a).1))
                .collect();
            rows.push(key, &format!("map_minus_{name}"), ratio_se(&pairs));
        }
        for (name, o) in [
            ("map_better_recovery", std::cmp::Ordering::Greater),
            ("map_tie_recovery", std::cmp::Ordering::Equal),
            ("map_worse_recovery", std::cmp::Ordering::Less),
        ] {
            let v = both
                .iter()
                .map(|(a, b)| f64::from(u8::from(a.shared_clusters.cmp(&b.shared_clusters) == o)));
            rows.push(key, name, Some(mean_se(v)));
        }
    }
    let random = rs.iter().filter_map(|r| r.truth?.random_recovered);
    rows.push((set, range, RANDOM), "truth_recovered", Some(mean_se(random)));
}

/// `summary.parquet` (see the module documentation).
pub fn write_summary(records: &[JetRecord], large_from: usize, path: &Path) -> Result<()> {
    let mut sets: Vec<&str> = Vec::new();
    for r in records {
        if !sets.contains(&r.set.as_str()) {
            sets.push(&r.set);
        }
    }
    let large = format!("n>={large_from}");
    let mut rows = Rows::default();
    for s in sets {
        for (range, keep) in [("all", 0), (large.as_str(), large_from)] {
            let rs: Vec<&JetRecord> = records
                .iter()
                .filter(|r| r.set == s && r.n >= keep)
                .collect();
            if !rs.is_empty() {
                range_rows(&mut rows, s, range, &rs);
            }
        }
    }
    debug_assert_eq!(SIZE_CLASSES.len() + 2, POOLED.len());
    Table::new()
        .str("set", &rows.set)
        .str("leaves", &rows.leaves)
        .str("method", &rows.method)
        .str("metric", &rows.metric)
        .f64("mean", &rows.mean)
        .f64("se", &rows.se)
        .u64("jets", &rows.jets)
        .write_parquet(path)
}

/// `by_n.parquet`: per set, number of leaves N and method, over the jets of that N: their
/// number, the mean and standard error of `truth_recovered` and of `gap_to_map` (finite gaps),
/// the share of forbidden trees, the pooled recovery (truth clusters recovered over truth
/// clusters) and the mean wall seconds of the method on one jet (the trellis's: the full or
/// MAP-only trellis and its MAP tree).
pub fn write_by_n(records: &[JetRecord], path: &Path) -> Result<()> {
    let mut keys: Vec<(&str, usize)> = records.iter().map(|r| (r.set.as_str(), r.n)).collect();
    keys.dedup();
    let mut seen = std::collections::BTreeSet::new();
    keys.retain(|k| seen.insert(*k));
    let (mut set, mut n, mut method, mut jets) = (vec![], vec![], vec![], vec![]);
    let (mut rec, mut rec_se, mut pooled, mut gap_m, mut gap_se, mut forb, mut secs) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let opt = |v: f64| v.is_finite().then_some(v);
    for (s, k) in keys {
        let rs: Vec<&JetRecord> = records.iter().filter(|r| r.set == s && r.n == k).collect();
        for p in PMethod::ALL {
            let ms: Vec<(&JetRecord, &MethodRecord)> = rs
                .iter()
                .filter_map(|r| Some((*r, r.methods.iter().find(|m| m.method == p)?)))
                .collect();
            if ms.is_empty() {
                continue;
            }
            let (r_mean, r_se, _) = mean_se(ms.iter().filter_map(|(_, m)| m.comparison?.recovered));
            let (g_mean, g_se, _) = mean_se(ms.iter().map(|(r, m)| gap(r.map, m.log_likelihood)));
            let (f_mean, _, _) = mean_se(
                ms.iter()
                    .map(|(_, m)| f64::from(u8::from(m.log_likelihood == f64::NEG_INFINITY))),
            );
            let (s_mean, _, _) = mean_se(ms.iter().map(|(_, m)| m.seconds));
            let pairs: Vec<(f64, f64)> = ms
                .iter()
                .filter_map(|(_, m)| m.comparison.as_ref().map(POOLED[0].1))
                .collect();
            set.push(s.to_string());
            n.push(Some(k as u64));
            method.push(p.name());
            jets.push(Some(ms.len() as u64));
            rec.push(opt(r_mean));
            rec_se.push(opt(r_se));
            pooled.push(ratio_se(&pairs).map(|x| x.0));
            gap_m.push(opt(g_mean));
            gap_se.push(opt(g_se));
            forb.push(opt(f_mean));
            secs.push(opt(s_mean));
        }
    }
    Table::new()
        .str("set", &set)
        .u64("n_leaves", &n)
        .str("method", &method)
        .u64("jets", &jets)
        .f64("truth_recovered", &rec)
        .f64("truth_recovered_se", &rec_se)
        .f64("recovered_pooled", &pooled)
        .f64("gap_to_map", &gap_m)
        .f64("gap_to_map_se", &gap_se)
        .f64("forbidden", &forb)
        .f64("seconds", &secs)
        .write_parquet(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ratio's standard error against the spread of the ratio over bootstrap-like
    /// reweightings is hard to test exactly; its formula is: equal ratios have error 0, and
    /// one jet's counts give the plain ratio with no error.
    #[test]
    fn ratio_and_its_error() {
        let (r, se, n) = ratio_se(&[(1.0, 2.0), (2.0, 4.0), (3.0, 6.0)]).unwrap();
        assert_eq!((r, se, n), (0.5, 0.0, 3));
        let (r, se, n) = ratio_se(&[(1.0, 4.0)]).unwrap();
        assert!(r == 0.25 && se.is_nan() && n == 1);
        assert_eq!(ratio_se(&[(0.0, 0.0)]), None);
        // Two jets: R = 3/6, residuals 1 − 0.5·4 = −1 and 2 − 0.5·2 = 1; se = sqrt(2/2)/3.
        let (r, se, _) = ratio_se(&[(1.0, 4.0), (2.0, 2.0)]).unwrap();
        assert_eq!(r, 0.5);
        assert!((se - 1.0 / 3.0).abs() < 1e-15);
    }
}
