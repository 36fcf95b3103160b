//! Points read from files (pam50, animals33, USPS, a user's matrix) and the subsamples drawn
//! from them.

use super::{
    correlation_similarities, instance_seed, key, usps_files, DatasetSpec, Instance, InstanceData,
    Source, MAX_POINTS,
};
use crate::data::matrix::{Column, MatrixSpec, PointMatrix};
use crate::data::pam50::Pam50;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// How a user's points file is read: the columns the config names, and whether its columns are
/// standardised.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Read {
    pub label_column: Option<String>,
    pub names_column: Option<String>,
    pub standardize: bool,
}

/// Points with (optionally) a class each, from which instances are drawn.
pub(super) struct Pool {
    rows: Vec<Vec<f64>>,
    class: Option<Vec<usize>>,
    classes: Vec<String>,
    /// Rows of the source left out (exact duplicates), by name.
    pub(super) dropped: Vec<String>,
    /// Each row's name (a file's row number, a sample id, an animal, a USPS image).
    names: Vec<String>,
    /// What the reader decided that the file did not say ([`PointMatrix::notes`]).
    pub(super) notes: Vec<String>,
    /// The source in words: what was read, its size and labels.
    pub(super) about: String,
}

/// "3 classes: a 8, b 8, c 8" (the first few) for `class` over `classes`.
fn class_counts(class: &[usize], classes: &[String]) -> String {
    let mut count = vec![0usize; classes.len()];
    for &c in class {
        count[c] += 1;
    }
    let shown: Vec<String> = classes
        .iter()
        .zip(&count)
        .take(8)
        .map(|(c, k)| format!("{} {k}", crate::data::clip(c, 24)))
        .collect();
    format!(
        "{} classes: {}{}",
        classes.len(),
        shown.join(", "),
        if classes.len() > 8 { ", ..." } else { "" }
    )
}

/// Class indices for label strings: classes in numeric order when every label is a number,
/// else in text order (as the coalescent_labelled and pydt kinds order them).
fn classes_of(labels: &[String]) -> (Vec<usize>, Vec<String>) {
    let mut classes: Vec<String> = labels.to_vec();
    classes.sort();
    classes.dedup();
    if classes.iter().all(|c| c.trim().parse::<f64>().is_ok()) {
        classes.sort_by(|a, b| {
            let (x, y): (f64, f64) = (
                a.trim().parse().unwrap_or(0.0),
                b.trim().parse().unwrap_or(0.0),
            );
            x.total_cmp(&y).then_with(|| a.cmp(b))
        });
    }
    let index: HashMap<&str, usize> = classes
        .iter()
        .enumerate()
        .map(|(k, c)| (c.as_str(), k))
        .collect();
    let class = labels.iter().map(|l| index[l.as_str()]).collect();
    (class, classes)
}

pub(super) fn load_pool(source: Source, path: &Path, read: &Read) -> Result<Pool> {
    match source {
        Source::Pam50 => {
            let data = Pam50::load(path)?;
            let classes = data.classes();
            let idx: Vec<usize> = (0..data.samples.len())
                .filter(|&k| data.subtypes[k].is_some())
                .collect();
            let class: Vec<usize> = idx
                .iter()
                .map(|&k| {
                    let s = data.subtypes[k].as_deref().unwrap_or_default();
                    classes.iter().position(|c| c == s).unwrap_or(0)
                })
                .collect();
            let about = format!(
                "pam50 ({}): {} samples with a known subtype × {} genes, {}",
                path.display(),
                idx.len(),
                data.genes.len(),
                class_counts(&class, &classes)
            );
            Ok(Pool {
                about,
                rows: data.filled_rows(&idx)?,
                class: Some(class),
                classes,
                dropped: Vec::new(),
                names: idx.iter().map(|&k| data.samples[k].clone()).collect(),
                notes: Vec::new(),
            })
        }
        Source::Animals33 => {
            let file = path.join("animals33_features.tsv");
            let m = PointMatrix::animals33(&file)?;
            let names = m
                .labels
                .clone()
                .with_context(|| format!("{} has no animal column", file.display()))?;
            let table = crate::experiment::pydt::data::parse_groups(crate::experiment::pydt::data::ANIMAL_GROUPS, "the built-in animals33 group table")?;
            let mut classes: Vec<String> = Vec::new();
            for (_, g) in &table {
                if !classes.contains(g) {
                    classes.push(g.clone());
                }
            }
            let class = names
                .iter()
                .map(|a| {
                    let (_, g) = table
                        .iter()
                        .find(|(x, _)| x.eq_ignore_ascii_case(a))
                        .with_context(|| {
                            format!("the built-in animals33 group table has no group for {a:?}")
                        })?;
                    Ok(classes.iter().position(|c| c == g).unwrap_or(0))
                })
                .collect::<Result<Vec<usize>>>()?;
            let about = format!(
                "animals33 ({}): {} animals × {} features, {}",
                file.display(),
                m.n_points(),
                m.dim(),
                class_counts(&class, &classes)
            );
            Ok(Pool {
                about,
                rows: (0..m.n_points()).map(|k| m.row(k).to_vec()).collect(),
                class: Some(class),
                classes,
                dropped: Vec::new(),
                names,
                notes: Vec::new(),
            })
        }
        Source::Usps => {
            let (mut rows, mut labels, mut names) = (Vec::new(), Vec::new(), Vec::new());
            let dropped = usps_rows(path, |row, label, name| {
                rows.push(row.to_vec());
                labels.push(label.to_string());
                names.push(name);
            })?;
            let (class, classes) = classes_of(&labels);
            Ok(Pool {
                about: format!(
                    "USPS ({}): {} distinct images × 256 pixels, {}",
                    path.display(),
                    rows.len(),
                    class_counts(&class, &classes)
                ),
                rows,
                class: Some(class),
                classes,
                dropped,
                names,
                notes: Vec::new(),
            })
        }
        _ => file_pool(path, read),
    }
}

/// A user's points file as a pool: names, labels, and the columns standardised when asked (a
/// note says when their scales differ by more than [`SCALE_RATIO`] and they are not).
fn file_pool(path: &Path, read: &Read) -> Result<Pool> {
    let mut m = PointMatrix::load(
        path,
        &MatrixSpec {
            header: true,
            label_column: read.label_column.clone().map(Column::Name),
            names_column: read.names_column.clone().map(Column::Name),
            infer: true,
            ..MatrixSpec::default()
        },
    )?;
    let (class, classes) = match &m.labels {
        Some(l) => {
            let (c, n) = classes_of(l);
            (Some(c), n)
        }
        None => (None, Vec::new()),
    };
    let clip = crate::data::clip;
    let mut parts = vec![format!("{} points × {} features", m.n_points(), m.dim())];
    if let Some(d) = m.dialect.describe() {
        parts[0] = format!("{} (read with {d})", parts[0]);
    }
    match &m.names_name {
        Some(c) if c.is_empty() => parts.push("names from the unnamed first column".into()),
        Some(c) => parts.push(format!("names from column {:?}", clip(c, 40))),
        None => {}
    }
    match (&class, &m.label_name) {
        (Some(c), Some(l)) => parts.push(format!(
            "labels from column {:?}, {}",
            clip(l, 40),
            class_counts(c, &classes)
        )),
        _ => parts.push("no labels".into()),
    }
    let mut rows: Vec<Vec<f64>> = (0..m.n_points()).map(|k| m.row(k).to_vec()).collect();
    let mut notes = std::mem::take(&mut m.notes);
    if read.standardize {
        crate::data::standardize(&mut rows);
        parts.push("columns standardised (z-scores)".into());
    } else if let Some(note) = scale_note(&m) {
        notes.push(note);
    }
    if m.names.as_ref().is_some_and(|v| *v == m.features) {
        notes.push(format!(
            "{} looks like a square matrix (its row names equal its column names): if it holds similarities or distances between the points, pass --similarity or --distance (source = \"similarity_matrix\" or \"distance_matrix\")",
            path.display()
        ));
    }
    let names = m
        .names
        .take()
        .unwrap_or_else(|| (1..=rows.len()).map(|k| format!("row {k}")).collect());
    Ok(Pool {
        about: format!("{}: {}", path.display(), parts.join(", ")),
        rows,
        class,
        classes,
        dropped: Vec::new(),
        names,
        notes,
    })
}

/// Columns whose standard deviations differ by more than this are said to be on different
/// scales (a mass in grams beside lengths in millimetres: the largest drowns the others).
pub(super) const SCALE_RATIO: f64 = 100.0;

/// The note for a matrix whose column scales differ by more than [`SCALE_RATIO`], naming the
/// widest and the narrowest column and the flag.
fn scale_note(m: &PointMatrix) -> Option<String> {
    let n = m.n_points();
    if n < 2 {
        return None;
    }
    let sd = |j: usize| {
        let mean = (0..n).map(|i| m.row(i)[j]).sum::<f64>() / n as f64;
        ((0..n).map(|i| (m.row(i)[j] - mean).powi(2)).sum::<f64>() / n as f64).sqrt()
    };
    let sds: Vec<(f64, usize)> = (0..m.dim()).map(|j| (sd(j), j)).filter(|s| s.0 > 0.0).collect();
    let (lo, hi) = (
        sds.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0))?,
        sds.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0))?,
    );
    (hi.0 > SCALE_RATIO * lo.0).then(|| {
        format!(
            "the columns' scales differ by {:.0}x (standard deviation {:.3} for {:?}, {:.3} for {:?}): the widest decides the correlations between points and the others barely count; pass --standardize (standardize = true in a config) to give every column unit variance",
            hi.0 / lo.0,
            hi.0,
            crate::data::clip(&m.features[hi.1], 30),
            lo.0,
            crate::data::clip(&m.features[lo.1], 30)
        )
    })
}

/// The instances of a pool: every point once (`points` unset or the pool's size), else
/// `instances` subsamples of `points`, stratified by class when the pool has classes and
/// `stratify` is not false. Chosen points keep the pool's order.
pub(super) fn subsamples(i: usize, s: &DatasetSpec, pool: &Pool, ds: u64) -> Result<Vec<Instance>> {
    let total = pool.rows.len();
    let points = s.points.unwrap_or(total);
    if points > total {
        bail!(
            "{} = {points} but the data have {total} points; lower it",
            key(i, "points")
        );
    }
    if points > MAX_POINTS {
        bail!(
            "an instance of {points} points is more than {MAX_POINTS} (its similarity matrix holds n² numbers); set {} to draw smaller subsamples",
            key(i, "points")
        );
    }
    if points < 2 {
        bail!("the data have {points} point(s); an instance needs at least 2");
    }
    let instances = s.instances.unwrap_or(1);
    let features = pool.rows.first().map_or(0, Vec::len);
    super::checks::check_instances(i, instances, points, features).map_err(anyhow::Error::msg)?;
    let whole = points == total;
    if whole && instances > 1 {
        bail!(
            "{} = {instances} would repeat the same {total} points; set {} below {total}",
            key(i, "instances"),
            key(i, "points")
        );
    }
    (0..instances)
        .map(|k| {
            let idx: Vec<usize> = if whole {
                (0..total).collect()
            } else {
                let mut rng = StdRng::seed_from_u64(instance_seed(ds, k));
                match (&pool.class, s.stratify.unwrap_or(true)) {
                    (Some(class), true) => stratified(class, pool.classes.len(), points, &mut rng),
                    _ => sorted(rand::seq::index::sample(&mut rng, total, points).into_vec()),
                }
            };
            let x: Vec<Vec<f64>> = idx.iter().map(|&r| pool.rows[r].clone()).collect();
            let labels = pool
                .class
                .as_ref()
                .map(|c| idx.iter().map(|&r| c[r]).collect());
            let name = if whole {
                "all".to_string()
            } else {
                format!("subsample_{k}")
            };
            let names = idx.iter().map(|&r| pool.names[r].clone()).collect();
            points_instance(s, name, x, labels, pool.classes.clone(), names)
        })
        .collect()
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

/// `points` indices drawn by class: as equal a share of every class as the class sizes allow
/// (each round gives one point to every class with points left, classes in a random order, so
/// that the remainder of an uneven split falls on random classes); uniformly without
/// replacement within a class; returned in ascending order. `points` must not exceed the total.
fn stratified(class: &[usize], n_classes: usize, points: usize, rng: &mut StdRng) -> Vec<usize> {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n_classes];
    for (r, &c) in class.iter().enumerate() {
        members[c].push(r);
    }
    let mut order: Vec<usize> = (0..n_classes).collect();
    order.shuffle(rng);
    let mut quota = vec![0usize; n_classes];
    let mut left = points.min(class.len());
    while left > 0 {
        for &c in &order {
            if left > 0 && quota[c] < members[c].len() {
                quota[c] += 1;
                left -= 1;
            }
        }
    }
    let mut out = Vec::with_capacity(points);
    for (c, m) in members.iter().enumerate() {
        out.extend(
            rand::seq::index::sample(rng, m.len(), quota[c])
                .into_iter()
                .map(|k| m[k]),
        );
    }
    sorted(out)
}

/// A points instance with its correlation similarities (checked finite).
pub(super) fn points_instance(
    s: &DatasetSpec,
    instance: String,
    x: Vec<Vec<f64>>,
    labels: Option<Vec<usize>>,
    classes: Vec<String>,
    names: Vec<String>,
) -> Result<Instance> {
    let d = x.first().map_or(0, Vec::len);
    let column = |j: usize| underflowing_spread(|| x.iter().map(move |r| r[j]));
    let row = |i: usize| underflowing_spread(|| x[i].iter().copied());
    let found = (0..d)
        .find_map(|j| column(j).map(|s| ("column", j, s)))
        .or_else(|| (0..x.len()).find_map(|i| row(i).map(|s| ("point", i, s))));
    if let Some((what, k, (lo, hi))) = found {
        bail!(
            "{instance}: {what} {} holds distinct values ({lo:e} to {hi:e}) whose squared differences underflow to 0, so every method would see them as equal; rescale the data (multiply it by about 1e{})",
            k + 1,
            -(hi.abs().max(lo.abs()).log10().floor() as i32)
        );
    }
    let similarities = correlation_similarities(&x);
    if let Some(e) = similarities.iter().position(|v| !v.is_finite()) {
        let n = x.len();
        bail!(
            "{instance}: the correlation of points {} and {} is not finite (values too large to square); rescale the data",
            e / n,
            e % n
        );
    }
    Ok(Instance {
        dataset: s.name.clone(),
        instance,
        data: InstanceData::Points { x, similarities },
        labels,
        classes,
        names,
    })
}

/// The least and largest of the values `v()` yields when they differ but their squared
/// deviations from the mean add up to less than the smallest normal number (standardising or
/// correlating them would see equal values).
fn underflowing_spread<I: Iterator<Item = f64>>(v: impl Fn() -> I) -> Option<(f64, f64)> {
    let (lo, hi) = v().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| {
        (lo.min(a), hi.max(a))
    });
    if lo >= hi {
        return None;
    }
    let (sum, count) = v().fold((0.0, 0usize), |(s, c), a| (s + a, c + 1));
    let mean = sum / count as f64;
    let ss: f64 = v().map(|a| (a - mean) * (a - mean)).sum();
    (ss < f64::MIN_POSITIVE).then_some((lo, hi))
}

/// Calls `keep` with every USPS image of the folder `path` (both files, in order) but exact
/// duplicates of an earlier one (+0.0 and -0.0 alike), with its label and name
/// (`<file> line <k>`); returns the duplicates' names, which are dropped.
fn usps_rows(path: &Path, mut keep: impl FnMut(&[f64], &str, String)) -> Result<Vec<String>> {
    let mut seen: HashSet<Vec<u64>> = HashSet::new();
    let mut dropped = Vec::new();
    for f in usps_files(path) {
        let m = PointMatrix::usps(&f)?;
        let ls = m.labels.clone().unwrap_or_default();
        for k in 0..m.n_points() {
            let key: Vec<u64> = m.row(k).iter().map(|v| (v + 0.0).to_bits()).collect();
            let file = f.file_name().unwrap_or_default().to_string_lossy();
            let name = format!("{file} line {}", k + 1);
            if seen.insert(key) {
                keep(m.row(k), ls.get(k).map_or("", String::as_str), name);
            } else {
                dropped.push(name);
            }
        }
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::underflowing_spread;

    #[test]
    fn only_distinct_values_whose_spread_underflows_are_found() {
        let spread = |v: &[f64]| underflowing_spread(|| v.iter().copied());
        assert_eq!(spread(&[1e-300, 4e-300, 2e-300]), Some((1e-300, 4e-300)));
        assert_eq!(spread(&[1e-300, 1e-300]), None, "equal values are not underflow");
        assert_eq!(spread(&[0.0, 1e-150]), None, "the squares are still normal");
        assert_eq!(spread(&[1.0, 1.0 + 1e-15]), None);
        assert_eq!(spread(&[1e-200, 1.0]), None, "tiny among normal values is fine");
    }
}
