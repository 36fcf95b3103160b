//! The bhc_purity run: load each data set, draw the subsets, run the four methods on every
//! subset (one job per data set and repetition) and write the tables.

use super::{paper_value, BhcPuritySection, DatasetSection, ModelKind, METHODS};
use trellis_core::bhc::{bhc_greedy, BetaBernoulli, NormalInverseWishart};
use crate::coalescent::linkage::{linkage_history, Linkage};
use crate::data::matrix::{Column, MatrixSpec, PointMatrix};
use crate::experiment::jobs::Mode;
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::hierarchy::Hierarchy;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A labelled data set as the methods see it.
pub struct Data {
    /// Points (binarised when the config says so).
    pub points: Vec<Vec<f64>>,
    /// Class of each point, an index into `classes`.
    pub class: Vec<usize>,
    /// Class names, in order of first appearance.
    pub classes: Vec<String>,
    /// Each point's 0-based data row in the file.
    pub row: Vec<usize>,
}

/// Loads `d.file`, keeps the classes asked for and binarises.
pub fn load(d: &DatasetSection) -> Result<Data> {
    let spec = MatrixSpec {
        label_column: Some(Column::Name("class".into())),
        ..MatrixSpec::with_header()
    };
    let m = PointMatrix::load(&d.file, &spec)
        .with_context(|| format!("bhc_purity data set {:?}", d.name))?;
    let labels = m.labels.clone().unwrap_or_default();
    if let Some(want) = &d.classes {
        if let Some(c) = want.iter().find(|c| !labels.contains(c)) {
            bail!(
                "bhc_purity data set {:?}: class {c:?} is not in {}; list classes of its `class` column",
                d.name,
                d.file.display()
            );
        }
    }
    let mut out = Data {
        points: Vec::new(),
        class: Vec::new(),
        classes: Vec::new(),
        row: Vec::new(),
    };
    for (i, l) in labels.iter().enumerate() {
        if d.classes.as_ref().is_some_and(|w| !w.contains(l)) {
            continue;
        }
        let c = match out.classes.iter().position(|c| c == l) {
            Some(c) => c,
            None => {
                out.classes.push(l.clone());
                out.classes.len() - 1
            }
        };
        let p: Vec<f64> = m
            .row(i)
            .iter()
            .map(|&v| match d.binarise_at {
                Some(t) => f64::from(u8::from(v >= t)),
                None => v,
            })
            .collect();
        out.points.push(p);
        out.class.push(c);
        out.row.push(i);
    }
    Ok(out)
}

/// Subset `rep` of data set number `ds`: at most `per_class` points of each class (every point
/// of a smaller class), drawn without replacement by a generator seeded by (seed, ds, rep);
/// class by class in class order, ascending within a class. Indices into `data.points`.
pub fn subset(data: &Data, per_class: usize, seed: u64, ds: usize, rep: usize) -> Vec<usize> {
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); data.classes.len()];
    for (i, &c) in data.class.iter().enumerate() {
        by_class[c].push(i);
    }
    let mix = crate::numeric::splitmix64_mix;
    let mut rng = StdRng::seed_from_u64(mix(mix(mix(seed ^ 0xB4C5_2005) ^ ds as u64) ^ rep as u64));
    let mut out = Vec::new();
    for members in &by_class {
        let k = per_class.min(members.len());
        let mut pick: Vec<usize> = rand::seq::index::sample(&mut rng, members.len(), k)
            .into_iter()
            .map(|j| members[j])
            .collect();
        pick.sort_unstable();
        out.extend(pick);
    }
    out
}

/// The tree that joins each class first (a node per class of two or more points, then the
/// root over the classes): its dendrogram purity is 1.
pub fn class_tree(labels: &[usize]) -> Result<Hierarchy> {
    let n = labels.len();
    let k = labels.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (i, &c) in labels.iter().enumerate() {
        members[c].push(i);
    }
    let mut parent: Vec<Option<usize>> = vec![None; n];
    let mut top = Vec::new();
    for m in members.iter().filter(|m| !m.is_empty()) {
        if m.len() == 1 {
            top.push(m[0]);
        } else {
            parent.push(None);
            let v = parent.len() - 1;
            m.iter().for_each(|&i| parent[i] = Some(v));
            top.push(v);
        }
    }
    if top.len() > 1 {
        parent.push(None);
        let root = parent.len() - 1;
        top.iter().for_each(|&v| parent[v] = Some(root));
    }
    Ok(Hierarchy::from_topology(n, parent)?)
}

/// One repetition's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rep {
    /// Purity per method, in [`METHODS`] order.
    pub purity: Vec<f64>,
    /// Wall seconds per method.
    pub seconds: Vec<f64>,
    /// Purity of [`class_tree`].
    pub class_tree: f64,
}

/// The four methods on the points `idx` of `data`.
pub fn repetition(s: &BhcPuritySection, d: &DatasetSection, data: &Data, idx: &[usize]) -> Result<Rep> {
    let x: Vec<Vec<f64>> = idx.iter().map(|&i| data.points[i].clone()).collect();
    let y: Vec<usize> = idx.iter().map(|&i| data.class[i]).collect();
    let (mut purity, mut seconds) = (Vec::new(), Vec::new());
    for m in METHODS {
        let t = Instant::now();
        let h = match m {
            "bhc" => match d.model {
                ModelKind::Bernoulli => {
                    let model = BetaBernoulli::from_data(&x, s.bernoulli_strength)?;
                    bhc_greedy(&model, s.alpha)?.hierarchy()
                }
                ModelKind::Gaussian => {
                    let model = NormalInverseWishart::from_data(&x, s.niw_kappa0, s.niw_scale)?;
                    bhc_greedy(&model, s.alpha)?.hierarchy()
                }
            },
            _ => {
                let method = match m {
                    "single" => Linkage::Single,
                    "complete" => Linkage::Complete,
                    _ => Linkage::Average,
                };
                Hierarchy::from_history(&linkage_history(&x, method)?)?
            }
        };
        seconds.push(t.elapsed().as_secs_f64());
        purity.push(h.dendrogram_purity(&y)?);
    }
    let class_tree = class_tree(&y)?.dendrogram_purity(&y)?;
    Ok(Rep {
        purity,
        seconds,
        class_tree,
    })
}

/// Mean and standard error (sample standard deviation over √n) of `v`; NaN s.e. for n < 2.
pub fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Runs the kind.
pub fn run(s: &BhcPuritySection, ctx: &mut RunContext) -> Result<()> {
    let seed = ctx.seed();
    let data: Vec<Data> = s.datasets.iter().map(load).collect::<Result<_>>()?;
    let mut jobs: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (k, (d, x)) in s.datasets.iter().zip(&data).enumerate() {
        if x.points.is_empty() {
            bail!("bhc_purity data set {:?}: no points in {}", d.name, d.file.display());
        }
        for r in 0..s.repetitions {
            jobs.push((k, r, subset(x, d.per_class, seed, k, r)));
        }
    }
    let keys: Vec<String> = jobs
        .iter()
        .map(|(k, r, _)| format!("{}/{r}", s.datasets[*k].name))
        .collect();
    let pb = crate::experiment::progress_bar(keys.len() as u64, "subsets");
    let done = ctx.jobs.run("repetitions", &keys, Mode::Parallel, |j| {
        let (k, r, idx) = &jobs[j];
        let d = &s.datasets[*k];
        let out = repetition(s, d, &data[*k], idx)
            .with_context(|| format!("bhc_purity data set {:?}, repetition {r}", d.name));
        pb.inc(1);
        out
    })?;
    pb.finish_and_clear();

    // Per-repetition rows.
    let (mut ds, mut rep, mut meth, mut pur, mut sec, mut pure, mut npts) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for ((k, r, idx), d) in jobs.iter().zip(&done) {
        for (mi, m) in METHODS.iter().enumerate() {
            ds.push(s.datasets[*k].name.clone());
            rep.push(Some(*r as u64));
            meth.push(*m);
            pur.push(Some(d.value.purity[mi]));
            sec.push(Some(d.value.seconds[mi]));
            pure.push(Some(d.value.class_tree));
            npts.push(Some(idx.len() as u64));
        }
    }
    Table::new()
        .str("dataset", &ds)
        .u64("repetition", &rep)
        .str("method", &meth)
        .u64("points", &npts)
        .f64("purity", &pur)
        .f64("class_tree_purity", &pure)
        .f64("seconds", &sec)
        .write_parquet(&ctx.path("purity_repetitions.parquet"))?;

    // Summary rows, with the paper's value beside ours.
    let mut t = (vec![], vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for d in &s.datasets {
        for (mi, m) in METHODS.iter().enumerate() {
            let v: Vec<f64> = jobs
                .iter()
                .zip(&done)
                .filter(|((k, _, _), _)| s.datasets[*k].name == d.name)
                .map(|(_, r)| r.value.purity[mi])
                .collect();
            let n: Vec<u64> = jobs
                .iter()
                .filter(|(k, _, _)| s.datasets[*k].name == d.name)
                .map(|(_, _, idx)| idx.len() as u64)
                .collect();
            let (mean, se) = mean_se(&v);
            let paper = d.paper.as_deref().and_then(|p| paper_value(p, m));
            t.0.push(d.name.clone());
            t.1.push(d.paper.clone().unwrap_or_default());
            t.2.push(*m);
            t.3.push(Some(mean));
            t.4.push(Some(se));
            t.5.push(Some(v.len() as u64));
            t.6.push((paper.map(|p| p.0), paper.map(|p| p.1)));
            t.7.push(n.first().copied());
        }
    }
    Table::new()
        .str("dataset", &t.0)
        .str("paper_row", &t.1)
        .str("method", &t.2)
        .f64("mean", &t.3)
        .f64("se", &t.4)
        .u64("repetitions", &t.5)
        .u64("points", &t.7)
        .f64("paper_mean", &t.6.iter().map(|p| p.0).collect::<Vec<_>>())
        .f64("paper_se", &t.6.iter().map(|p| p.1).collect::<Vec<_>>())
        .write_parquet(&ctx.path("purity.parquet"))?;

    // The subsets: data row and class of every point.
    let (mut sd, mut sr, mut sp, mut srow, mut scl) = (vec![], vec![], vec![], vec![], vec![]);
    for (k, r, idx) in &jobs {
        for (p, &i) in idx.iter().enumerate() {
            sd.push(s.datasets[*k].name.clone());
            sr.push(Some(*r as u64));
            sp.push(Some(p as u64));
            srow.push(Some(data[*k].row[i] as u64));
            scl.push(data[*k].classes[data[*k].class[i]].clone());
        }
    }
    Table::new()
        .str("dataset", &sd)
        .u64("repetition", &sr)
        .u64("position", &sp)
        .u64("row", &srow)
        .str("class", &scl)
        .write_parquet(&ctx.path("subsets.parquet"))?;
    let sizes: Vec<(String, usize, usize)> = s
        .datasets
        .iter()
        .zip(&data)
        .map(|(d, x)| (d.name.clone(), x.points.len(), x.classes.len()))
        .collect();
    ctx.manifest.set("datasets_points_classes", &sizes);
    Ok(())
}
