//! The board's run: one job per (instance, method), scored, into `board.parquet` and
//! `trees.parquet`; and the named numbers `check` compares.

use super::data::{load, Instance};
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
    /// The tree, Newick with the points' names ([`Instance::names`], quoted where needed).
    #[serde(default)]
    pub newick_named: String,
    /// `(metric, value)`; `None` for a metric the instance leaves undefined.
    pub metrics: Vec<(String, Option<f64>)>,
    /// What a reader of the tree should know (it ran on the distinct points; the energies
    /// score binary trees only), or empty.
    #[serde(default)]
    pub note: String,
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
    let wide = super::wide::WideEnergy::of(inst).with_context(what)?;
    let binary = tree.to_tree().ok();
    let mut notes: Vec<String> = Vec::new();
    if !built.note.is_empty() {
        notes.push(built.note.clone());
    }
    if m.needs_distinct_points(s) {
        if let Ok(x) = super::methods::features(inst) {
            let k = super::methods::Copies::of(&x).pairs().len();
            if k > 0 {
                notes.push(format!(
                    "ran on the {} distinct points; {k} {} joined to {} first at height 0",
                    inst.n() - k,
                    if k == 1 { "copy" } else { "copies" },
                    if k == 1 { "its" } else { "their" }
                ));
            }
        }
    }
    if (energy.is_some() && binary.is_none()) || (wide.is_some() && !tree.is_binary()) {
        let widest = (0..tree.n_nodes())
            .map(|v| tree.children(v).len())
            .max()
            .unwrap_or(0);
        let scores = if wide.is_some() {
            "the energy scores"
        } else {
            "the energy, log posterior and rank score"
        };
        notes.push(format!(
            "a node has {widest} children: {scores} binary trees only"
        ));
    }
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
    // Above 64 points, the energy of points and graphs on the wide path.
    let mut wide_scored = None;
    if let Some(w) = wide.as_ref().filter(|_| tree.is_binary()) {
        metrics.push((w.metric().into(), Some(w.value(tree).with_context(what)?)));
        wide_scored = Some(w.metric());
    }
    // Dasgupta's cost over the similarities, on any tree (multifurcations and N > 64 too),
    // unless it is already the instance's energy.
    if let Some(sim) = inst.similarities() {
        let done = (energy
            .as_ref()
            .is_some_and(|e| e.metric() == "dasgupta_cost")
            && binary.is_some())
            || wide_scored == Some("dasgupta_cost");
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
    metrics.extend(built.extra.iter().map(|(k, v)| (k.clone(), Some(*v))));
    Ok(Scored {
        seconds,
        peak_bytes,
        scoring_seconds,
        newick: tree.to_newick(),
        newick_named: tree.to_newick_with(|i| {
            crate::coalescent::newick::quote_label(
                inst.names.get(i).map_or(&i.to_string(), String::as_str),
            )
        }),
        metrics,
        note: notes.join("; "),
    })
}

/// Says, for an instance with identical points, which methods ran on the distinct points and
/// which copies were joined to their first (`None` without copies or without such a method).
fn copies_note(inst: &Instance, s: &BoardSection) -> Option<String> {
    let methods: Vec<&str> = s
        .methods
        .iter()
        .filter(|m| m.needs_distinct_points(s) && m.applies(inst, s).is_ok())
        .map(|m| m.name())
        .collect();
    if methods.is_empty() {
        return None;
    }
    let copies = super::methods::Copies::of(&super::methods::features(inst).ok()?);
    let pairs = copies.pairs();
    if pairs.is_empty() {
        return None;
    }
    let name = |p: usize| inst.names.get(p).cloned().unwrap_or_else(|| format!("point {p}"));
    let shown: Vec<String> = pairs
        .iter()
        .take(6)
        .map(|&(c, f)| format!("{} = {}", name(c), name(f)))
        .collect();
    let n = inst.n();
    Some(format!(
        "{}/{}: {} of the {n} points {} ({}{}); {} ran on the {} distinct points, each copy then joined to its first as a pair at height 0; the other methods ran on all {n}",
        inst.dataset,
        inst.instance,
        pairs.len(),
        if pairs.len() == 1 {
            "is a copy of an earlier one"
        } else {
            "are copies of earlier ones"
        },
        shown.join(", "),
        if pairs.len() > 6 { ", ..." } else { "" },
        methods.join(", "),
        n - pairs.len()
    ))
}

/// Says on the terminal which methods did not run, and why: one line per method and reason,
/// with how many instances it covers.
fn say_not_run(insts: &[Instance], skipped: &[(usize, BoardMethod, String)]) {
    let mut seen: Vec<(BoardMethod, &str, usize)> = Vec::new();
    for (_, m, why) in skipped {
        match seen.iter_mut().find(|(a, b, _)| a == m && b == why) {
            Some(e) => e.2 += 1,
            None => seen.push((*m, why, 1)),
        }
    }
    for (m, why, k) in seen {
        let on = if insts.len() == 1 {
            String::new()
        } else {
            format!(" on {k} of {} instances", insts.len())
        };
        eprintln!("note: {} not run{on}: {why}", m.name());
    }
}

/// The run: instances, jobs, tables.
pub fn run(s: &BoardSection, ctx: &mut RunContext) -> Result<()> {
    let seed = ctx.seed();
    let loaded = load(&s.datasets, seed)?;
    let (insts, dropped, mut read) = (loaded.instances, loaded.dropped, loaded.read);
    crate::experiment::dropped::report(ctx, &dropped);
    for inst in &insts {
        if let Some(note) = copies_note(inst, s) {
            if let Some(r) = read.iter_mut().find(|r| r.dataset == inst.dataset) {
                r.notes.push(note);
            }
        }
    }
    for r in &read {
        eprintln!("data {}: {}", r.dataset, r.summary);
        for n in &r.notes {
            eprintln!("note: {n}");
        }
    }
    ctx.manifest.set("data_read", &read);
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
    let mut t_note = vec![];
    let mut t_named = vec![];
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
        t_note.push(r.note.clone());
        t_named.push(r.newick_named.clone());
    }
    for (i, m, why) in &skipped {
        t_ds.push(insts[*i].dataset.clone());
        t_inst.push(insts[*i].instance.clone());
        t_meth.push(m.name().to_string());
        t_newick.push(String::new());
        t_status.push(format!("not run: {why}"));
        t_secs.push(None);
        t_seed.push(None);
        t_note.push(String::new());
        t_named.push(String::new());
    }
    say_not_run(&insts, &skipped);
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
        .str("newick_names", &t_named)
        .str("status", &t_status)
        .str("note", &t_note)
        .f64("seconds", &t_secs)
        .u64("seed", &t_seed)
        .write_parquet(&ctx.path("trees.parquet"))?;
    write_leaves(&insts, ctx)?;
    let order: Vec<&str> = s.datasets.iter().map(|d| d.name.as_str()).collect();
    ctx.manifest.set("datasets", order);
    let methods: Vec<&str> = s.methods.iter().map(|m| m.name()).collect();
    ctx.manifest.set("methods", methods);
    if let Some(v) = super::bayes::manifest(&insts, s) {
        ctx.manifest.set("bhc", v);
    }
    Ok(())
}

/// `leaves.parquet`: every instance's points by leaf index, with their names and classes (empty
/// without labels), which the dendrograms label and colour their leaves by.
fn write_leaves(insts: &[Instance], ctx: &RunContext) -> Result<()> {
    let (mut d, mut i, mut leaf, mut name, mut class) = (vec![], vec![], vec![], vec![], vec![]);
    for inst in insts {
        for p in 0..inst.n() {
            d.push(inst.dataset.clone());
            i.push(inst.instance.clone());
            leaf.push(Some(p as u64));
            name.push(inst.names.get(p).cloned().unwrap_or_else(|| p.to_string()));
            class.push(
                inst.labels
                    .as_ref()
                    .and_then(|l| inst.classes.get(l[p]))
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    Table::new()
        .str("dataset", &d)
        .str("instance", &i)
        .u64("leaf", &leaf)
        .str("name", &name)
        .str("class", &class)
        .write_parquet(&ctx.path("leaves.parquet"))?;
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
