//! The board's run: one job per (instance, method), scored, into `board.parquet` and
//! `trees.parquet`; and the named numbers `check` compares.

use super::data::{instances_and_dropped, Instance};
use super::energy::Energy;
use super::methods::{build, BoardMethod};
use super::BoardSection;
use crate::experiment::check::Measure;
use crate::experiment::jobs::Mode;
use crate::experiment::kind::{Results, RunContext};
use crate::experiment::table::{f64_column, str_column, Table};
use crate::data::clip;
use crate::hierarchy::HierarchyError;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// One (instance, method) job's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scored {
    /// Wall seconds of the method (scoring excluded).
    pub seconds: f64,
    /// Peak heap bytes the method added (`None` when the program does not count the heap).
    pub peak_bytes: Option<u64>,
    /// Wall seconds of the exact scoring of the tree (`None` where the trellis does not run).
    #[serde(default)]
    pub scoring_seconds: Option<f64>,
    /// The tree, Newick with leaf indices.
    pub newick: String,
    /// `(metric, value)`; `None` for a metric the instance leaves undefined.
    pub metrics: Vec<(String, Option<f64>)>,
}

/// The job seed of method `m` on `inst` under the master `seed`: from the seed, the instance's
/// data and the method alone, never a name, so the same file and seed give the same trees under
/// any `--name` (written to `trees.parquet`'s `seed` column, so that a method's tree can be
/// reproduced alone, e.g. from Python).
fn job_seed(seed: u64, inst: &Instance, m: BoardMethod) -> u64 {
    let method = crate::experiment::staging::hash_bytes(m.name().as_bytes());
    crate::numeric::splitmix64_mix(
        seed ^ crate::numeric::splitmix64_mix(inst.content_hash() ^ method.rotate_left(29)),
    )
}

/// Runs `m` on `inst` and scores its tree; `progress` is told the trees counted above it while
/// its posterior rank is counted.
pub fn score(
    inst: &Instance,
    m: BoardMethod,
    s: &BoardSection,
    seed: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Scored> {
    let what = || {
        let jet = match &inst.data {
            super::data::InstanceData::Jet(j) => format!(" (jet {:?})", clip(&j.name, 80)),
            _ => String::new(),
        };
        format!("{} on {}/{}{jet}", m.name(), inst.dataset, inst.instance)
    };
    let t0 = Instant::now();
    let (built, peak_bytes) = crate::memory::measure_peak(|| build(m, inst, s, seed));
    let seconds = t0.elapsed().as_secs_f64();
    let built = built.with_context(what)?;
    let tree = &built.tree;
    let mut metrics: Vec<(String, Option<f64>)> = Vec::new();
    let energy = Energy::of(inst).with_context(what)?;
    let binary = tree.to_tree().ok();
    let mut scoring_seconds = None;
    if let (Some(e), Some(t)) = (&energy, &binary) {
        metrics.push((e.metric().into(), Some(e.value(t))));
        if inst.n() <= s.max_exact_leaves {
            // The exact scoring's own time, apart from the method's `seconds`.
            let t0 = Instant::now();
            let ties = m == BoardMethod::Trellis;
            let facts = super::energy::exact_scoring(inst, e, t, s, ties, progress)
                .with_context(what)?;
            metrics.extend(facts.metrics());
            scoring_seconds = Some(t0.elapsed().as_secs_f64());
        }
    }
    // Dasgupta's cost over the similarities, on any tree (multifurcations and N > 64 too),
    // unless it is already the instance's energy.
    if let Some(sim) = inst.similarities() {
        let done = energy
            .as_ref()
            .is_some_and(|e| e.metric() == "dasgupta_cost")
            && binary.is_some();
        if !done {
            metrics.push((
                "dasgupta_cost".into(),
                Some(tree.dasgupta_cost(sim).with_context(what)?),
            ));
        }
    }
    if let Some(y) = &inst.labels {
        // A metric the labels leave undefined (purity with one point per class) is recorded as
        // such (a null value), and the others are still computed.
        let labelled = [
            ("dendrogram_purity", tree.dendrogram_purity(y)),
            ("subtree_score", tree.subtree_score(y)),
            ("ari_auc", tree.ari_auc(y)),
        ];
        for (name, v) in labelled {
            let v = match v {
                Err(HierarchyError::Undefined(_)) => None,
                v => Some(v.with_context(what)?),
            };
            metrics.push((name.into(), v));
        }
    }
    if let Some(v) = built.own_objective {
        metrics.push(("own_objective".into(), Some(v)));
    }
    Ok(Scored {
        seconds,
        peak_bytes,
        scoring_seconds,
        newick: tree.to_newick(),
        metrics,
    })
}

/// The run: instances, jobs, tables.
pub fn run(s: &BoardSection, ctx: &mut RunContext) -> Result<()> {
    let seed = ctx.seed();
    let (insts, dropped) = instances_and_dropped(&s.datasets, seed)?;
    crate::experiment::dropped::report(ctx, &dropped);
    super::export::write(&insts, seed, ctx)?;
    let mut jobs: Vec<(usize, BoardMethod)> = Vec::new();
    let mut skipped: Vec<(usize, BoardMethod, String)> = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        for &m in &s.methods {
            match m.applies(inst, s) {
                Ok(()) => jobs.push((i, m)),
                Err(why) => skipped.push((i, m, why)),
            }
        }
    }
    let key = |i: usize, m: BoardMethod| {
        format!("{}/{}/{}", insts[i].dataset, insts[i].instance, m.name())
    };
    let keys: Vec<String> = jobs.iter().map(|&(i, m)| key(i, m)).collect();
    super::exact_work::announce(&insts, &jobs, s);
    let bars = indicatif::MultiProgress::new();
    let pb = bars.add(crate::experiment::progress_bar(keys.len() as u64, "jobs"));
    let done = ctx.jobs.run("fit", &keys, Mode::OneAtATime, |k| {
        let (i, m) = jobs[k];
        let mut rank = super::exact_work::RankBar::new(&bars, s.rank_cap);
        let out = score(&insts[i], m, s, job_seed(seed, &insts[i], m), &mut |c| {
            rank.tell(c)
        });
        rank.finish();
        pb.inc(1);
        out
    });
    pb.finish_and_clear();
    super::energy::forget_trellis();
    let done = done?;

    let mut scoring = vec![];
    let (mut ds, mut inst, mut n, mut meth, mut metric, mut value, mut secs, mut peak) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    let (mut t_ds, mut t_inst, mut t_meth, mut t_newick, mut t_status, mut t_secs) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut t_seed = vec![];
    for (&(i, m), d) in jobs.iter().zip(&done) {
        t_seed.push(Some(job_seed(seed, &insts[i], m)));
        let r = &d.value;
        for (name, v) in &r.metrics {
            ds.push(insts[i].dataset.clone());
            inst.push(insts[i].instance.clone());
            n.push(Some(insts[i].n() as u64));
            meth.push(m.name().to_string());
            metric.push(name.clone());
            value.push(*v);
            secs.push(Some(r.seconds));
            scoring.push(r.scoring_seconds);
            peak.push(r.peak_bytes.map(|b| b as f64));
        }
        t_ds.push(insts[i].dataset.clone());
        t_inst.push(insts[i].instance.clone());
        t_meth.push(m.name().to_string());
        t_newick.push(r.newick.clone());
        t_status.push("ran".to_string());
        t_secs.push(Some(r.seconds));
    }
    for (i, m, why) in &skipped {
        t_ds.push(insts[*i].dataset.clone());
        t_inst.push(insts[*i].instance.clone());
        t_meth.push(m.name().to_string());
        t_newick.push(String::new());
        t_status.push(format!("not run: {why}"));
        t_secs.push(None);
        t_seed.push(None);
    }
    Table::new()
        .str("dataset", &ds)
        .str("instance", &inst)
        .u64("n", &n)
        .str("method", &meth)
        .str("metric", &metric)
        .f64("value", &value)
        .f64("seconds", &secs)
        .f64("peak_bytes", &peak)
        .f64(super::exact_work::SECONDS_COLUMN, &scoring)
        .write_parquet(&ctx.path("board.parquet"))?;
    Table::new()
        .str("dataset", &t_ds)
        .str("instance", &t_inst)
        .str("method", &t_meth)
        .str("newick", &t_newick)
        .str("status", &t_status)
        .f64("seconds", &t_secs)
        .u64("seed", &t_seed)
        .write_parquet(&ctx.path("trees.parquet"))?;
    let order: Vec<&str> = s.datasets.iter().map(|d| d.name.as_str()).collect();
    ctx.manifest.set("datasets", order);
    let methods: Vec<&str> = s.methods.iter().map(|m| m.name()).collect();
    ctx.manifest.set("methods", methods);
    Ok(())
}

/// One row of `board.parquet`.
#[derive(Clone, Debug)]
pub struct Row {
    /// Dataset.
    pub dataset: String,
    /// Instance.
    pub instance: String,
    /// Method name.
    pub method: String,
    /// Metric name.
    pub metric: String,
    /// Value.
    pub value: f64,
    /// Method wall seconds.
    pub seconds: f64,
    /// The job's exact-scoring wall seconds (NaN where none, or in results written before).
    pub scoring_seconds: f64,
}

/// The rows of `board.parquet`.
pub fn rows(results: &Results) -> Result<Vec<Row>> {
    let df = results.table("board")?;
    let (d, i, m, k) = (
        str_column(&df, "dataset")?,
        str_column(&df, "instance")?,
        str_column(&df, "method")?,
        str_column(&df, "metric")?,
    );
    let (v, s) = (f64_column(&df, "value")?, f64_column(&df, "seconds")?);
    let scoring = f64_column(&df, super::exact_work::SECONDS_COLUMN).unwrap_or_default();
    // Undefined metrics (null values) are left out: a mean or a chart is over defined values.
    Ok((0..d.len())
        .filter_map(|r| {
            Some(Row {
                dataset: d[r].clone(),
                instance: i[r].clone(),
                method: m[r].clone(),
                metric: k[r].clone(),
                value: v[r]?,
                seconds: s[r].unwrap_or(f64::NAN),
                scoring_seconds: scoring.get(r).copied().flatten().unwrap_or(f64::NAN),
            })
        })
        .collect())
}

/// Whether a larger value of `metric` is better.
pub fn higher_is_better(metric: &str) -> bool {
    !matches!(
        metric,
        "hcc_energy"
            | "dasgupta_cost"
            | "posterior_rank"
            | "posterior_rank_capped"
    )
}

/// The energy metrics, in the order that decides a dataset's energy: jets have the Ginkgo
/// likelihood, points the HCC energy (their Dasgupta cost is a second metric), graphs
/// Dasgupta's cost.
pub const ENERGY_METRICS: [&str; 3] = ["ginkgo_log_likelihood", "hcc_energy", "dasgupta_cost"];

/// Each dataset's energy metric (the first of [`ENERGY_METRICS`] its rows have).
pub fn dataset_energies(rows: &[Row]) -> BTreeMap<&str, &'static str> {
    let mut out: BTreeMap<&str, &'static str> = BTreeMap::new();
    for r in rows {
        if let Some(k) = ENERGY_METRICS.iter().position(|m| *m == r.metric) {
            let e = out.entry(r.dataset.as_str()).or_insert(ENERGY_METRICS[k]);
            let cur = ENERGY_METRICS.iter().position(|m| m == e).unwrap_or(k);
            if k < cur {
                *e = ENERGY_METRICS[k];
            }
        }
    }
    out
}

/// The named numbers: the exact trellis is never beaten on its own energy, the kt family never
/// scores above the trellis MAP, the trellis MAP ranks first; and per dataset, method and
/// metric, the mean (so that a changed result is noticed).
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let rows = rows(results)?;
    let mut out = vec![Measure::new(
        "rows",
        "rows of board.parquet",
        rows.len() as f64,
    )];
    // (dataset, instance, metric) -> trellis value.
    let mut trellis: BTreeMap<(&str, &str, &str), f64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.method == "trellis") {
        trellis.insert((&r.dataset, &r.instance, &r.metric), r.value);
    }
    let mut beat: BTreeMap<&str, f64> = BTreeMap::new();
    let mut kt_beat: BTreeMap<&str, f64> = BTreeMap::new();
    let mut map_rank: BTreeMap<&str, f64> = BTreeMap::new();
    let energy = dataset_energies(&rows);
    for r in &rows {
        if r.method == "trellis" && r.metric == "posterior_rank" {
            let e = map_rank.entry(&r.dataset).or_insert(1.0);
            *e = e.max(r.value);
        }
        if energy.get(r.dataset.as_str()) != Some(&r.metric.as_str()) {
            continue;
        }
        let Some(&t) = trellis.get(&(r.dataset.as_str(), r.instance.as_str(), r.metric.as_str()))
        else {
            continue;
        };
        // How far the method is better than the trellis MAP (<= 0 always).
        let gain = if higher_is_better(&r.metric) {
            r.value - t
        } else {
            t - r.value
        };
        let tol = 1e-9 * t.abs().max(1.0);
        let over = if gain > tol { gain } else { 0.0 };
        let e = beat.entry(&r.dataset).or_insert(0.0);
        *e = e.max(over);
        if matches!(r.method.as_str(), "kt" | "cambridge_aachen" | "anti_kt") {
            let e = kt_beat.entry(&r.dataset).or_insert(0.0);
            *e = e.max(over);
        }
    }
    for (d, v) in beat {
        out.push(Measure::new(
            format!("{d}.trellis_beaten_by"),
            format!("{d}: largest margin by which any method beats the exact MAP on its energy (0 = never)"),
            v,
        ));
    }
    for (d, v) in kt_beat {
        out.push(Measure::new(
            format!("{d}.kt_family_above_map"),
            format!(
                "{d}: largest margin of a kt-family tree above the trellis MAP (Ginkgo; 0 = never)"
            ),
            v,
        ));
    }
    for (d, v) in map_rank {
        out.push(Measure::new(
            format!("{d}.trellis_rank_max"),
            format!("{d}: worst posterior rank of the trellis MAP (1 = always the best tree)"),
            v,
        ));
    }
    let mut sums: BTreeMap<(&str, &str, &str), (f64, usize)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.metric != "posterior_rank_capped") {
        let e = sums
            .entry((&r.dataset, &r.method, &r.metric))
            .or_insert((0.0, 0));
        e.0 += r.value;
        e.1 += 1;
    }
    for ((d, m, k), (sum, c)) in sums {
        out.push(Measure::new(
            format!("{d}.{m}.{k}.mean"),
            format!("{d}: mean {k} of {m} over {c} instances"),
            sum / c as f64,
        ));
    }
    Ok(out)
}
