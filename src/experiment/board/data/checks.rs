//! The checks behind [`super::validate`]: one dataset at a time, one-line errors naming the key.

use super::{
    is_json, key, planted_sizes, DatasetSpec, Source, ANIMALS, MAX_INSTANCES, MAX_POINTS,
    PAM50_LABELLED, SOURCES, TEST100_JETS, USPS_IMAGES,
};
use crate::data::ginkgo::GinkgoParams;

/// Checks dataset `i` (its name is checked by the caller).
pub(super) fn validate_one(i: usize, s: &DatasetSpec) -> Result<(), String> {
    let source = Source::parse(&s.source).ok_or_else(|| {
        format!(
            "{} = {:?} is not a known source; use one of {}",
            key(i, "source"),
            s.source,
            SOURCES.map(|x| format!("{x:?}")).join(", ")
        )
    })?;
    let json = source == Source::File && s.path.as_deref().is_some_and(is_json);
    let allowed = source.keys(json);
    for (k, set) in [
        ("instances", s.instances.is_some()),
        ("points", s.points.is_some()),
        ("min_leaves", s.min_leaves.is_some()),
        ("max_leaves", s.max_leaves.is_some()),
        (
            "path",
            s.path.is_some()
                && source.default_folder().is_none()
                && !matches!(source, Source::File | Source::Similarity | Source::Distance),
        ),
        ("label_column", s.label_column.is_some()),
        ("names_column", s.names_column.is_some()),
        ("standardize", s.standardize.is_some()),
        ("cluster_sizes", s.cluster_sizes.is_some()),
        ("p_in", s.p_in.is_some()),
        ("p_out", s.p_out.is_some()),
        ("root_scale", s.root_scale.is_some()),
        ("max_tries", s.max_tries.is_some()),
        ("stratify", s.stratify.is_some()),
    ] {
        if set && !allowed.contains(&k) {
            let what = if source == Source::File {
                format!(
                    "source = \"file\" with a {} path",
                    if json { ".json" } else { "matrix" }
                )
            } else {
                format!("source = {:?}", s.source)
            };
            return Err(format!(
                "{} does not apply to {what}; remove it (it takes {})",
                key(i, k),
                allowed.join(", ")
            ));
        }
    }
    let instances = s.instances.unwrap_or(1);
    if instances == 0 {
        return Err(format!(
            "{} = 0; draw at least 1 (or remove the dataset)",
            key(i, "instances")
        ));
    }
    let features = match source {
        Source::Pam50 => 50,
        Source::Usps => 256,
        Source::Animals33 => 102,
        Source::CoalescentD1 => super::D1_DIM,
        // A file's features are known once it is read (checked again then, in `pool`).
        _ => 4,
    };
    check_instances(i, instances, s.points.unwrap_or(64), features)?;
    let points_in = |lo: usize, hi: usize, what: &str| -> Result<(), String> {
        match s.points {
            Some(p) if !(lo..=hi).contains(&p) => Err(format!(
                "{} = {p} is out of range for source = {:?}: use {lo}..={hi} ({what})",
                key(i, "points"),
                s.source
            )),
            _ => Ok(()),
        }
    };
    let needs_points = |example: &str| -> Result<(), String> {
        if s.points.is_none() {
            return Err(format!(
                "{} is missing; source = {:?} draws subsamples of that many points (e.g. points = {example})",
                key(i, "points"),
                s.source
            ));
        }
        Ok(())
    };
    let copies = |all: bool| -> Result<(), String> {
        if all && instances > 1 {
            return Err(format!(
                "{} = {instances} would repeat the same data; set points below the data's size to draw different subsamples, or instances = 1",
                key(i, "instances")
            ));
        }
        Ok(())
    };
    match source {
        Source::Ginkgo => {
            let (Some(lo), Some(hi)) = (s.min_leaves, s.max_leaves) else {
                return Err(format!(
                    "{} and max_leaves are required for source = \"ginkgo\" (e.g. 6 and 12)",
                    key(i, "min_leaves")
                ));
            };
            leaf_range(i, lo, hi)?;
            if let Some(r) = s.root_scale {
                let t_cut = GinkgoParams::qcd().t_cut;
                if !(r.is_finite() && r > t_cut) {
                    return Err(format!(
                        "{} = {r} must be a number above t_cut = {t_cut} (900 for the paper's QCD jets, 60000 for 20 to 50 leaves)",
                        key(i, "root_scale")
                    ));
                }
            }
            if s.max_tries == Some(0) {
                return Err(format!("{} = 0; allow at least 1 try", key(i, "max_tries")));
            }
            if let Some(t) = s.max_tries {
                crate::experiment::limits::check_size(
                    &key(i, "max_tries"),
                    t,
                    crate::experiment::jets::MAX_TRIES,
                    crate::experiment::jets::TRY_COST,
                )?;
            }
        }
        Source::Test100 => {
            if instances > TEST100_JETS {
                return Err(format!(
                    "{} = {instances} is more than the {TEST100_JETS} test jets; use 1..={TEST100_JETS} or remove it for all",
                    key(i, "instances")
                ));
            }
            if s.path.as_deref().is_some_and(is_json) {
                return Err(format!(
                    "{} must be the folder holding tree_100_n9.json, not a file; for another jets file use source = \"file\"",
                    key(i, "path")
                ));
            }
        }
        Source::Pam50 => {
            needs_points("12")?;
            points_in(2, PAM50_LABELLED, "the pam50 samples with a known subtype")?;
        }
        Source::Usps => {
            needs_points("50")?;
            points_in(2, MAX_POINTS.min(USPS_IMAGES), "images per subset")?;
        }
        Source::Animals33 => {
            points_in(2, ANIMALS, "the animals33 animals")?;
            copies(s.points.unwrap_or(ANIMALS) == ANIMALS)?;
        }
        Source::Planted => {
            let sizes = planted_sizes(s);
            let n: usize = sizes.iter().fold(0usize, |a, &b| a.saturating_add(b));
            if s.cluster_sizes.is_none() {
                points_in(
                    3,
                    64,
                    "three planted clusters, at most 64 points in a graph",
                )?;
            } else if sizes.is_empty() || sizes.contains(&0) || !(2..=64).contains(&n) {
                return Err(format!(
                    "{} = {sizes:?} must list non-empty clusters with 2..=64 points in all",
                    key(i, "cluster_sizes")
                ));
            } else if s.points.is_some_and(|p| p != n) {
                return Err(format!(
                    "{} = {} but cluster_sizes add up to {n}; make them agree or remove points",
                    key(i, "points"),
                    s.points.unwrap_or(0)
                ));
            }
            for (k, v) in [("p_in", s.p_in), ("p_out", s.p_out)] {
                if let Some(v) = v {
                    if !(0.0..=1.0).contains(&v) {
                        return Err(format!(
                            "{} = {v} must be a probability in [0, 1]",
                            key(i, k)
                        ));
                    }
                }
            }
        }
        Source::CoalescentD1 => {
            points_in(2, MAX_POINTS, "points per data set")?;
        }
        Source::Similarity | Source::Distance => {
            if s.path.is_none() {
                return Err(format!(
                    "{} is missing; source = {:?} reads a square matrix file with a header of point names (e.g. path = \"my_matrix.csv\")",
                    key(i, "path"),
                    s.source
                ));
            }
        }
        Source::File => {
            let Some(path) = &s.path else {
                return Err(format!(
                    "{} is missing; source = \"file\" reads a jets .json or a .csv/.tsv matrix (e.g. path = \"my_points.csv\")",
                    key(i, "path")
                ));
            };
            if json {
                leaf_range(i, s.min_leaves.unwrap_or(1), s.max_leaves.unwrap_or(64))?;
            } else {
                if let Some(why) = crate::data::matrix::not_a_text_table(path) {
                    return Err(format!(
                        "{} = {:?}: {why}",
                        key(i, "path"),
                        path.display().to_string()
                    ));
                }
                if s.names_column.is_some() && s.names_column == s.label_column {
                    return Err(format!(
                        "{} and label_column name the same column; a column holds the points' names or their classes, not both",
                        key(i, "names_column")
                    ));
                }
                points_in(2, MAX_POINTS, "points per subsample")?;
                copies(s.points.is_none())?;
            }
        }
    }
    Ok(())
}

/// `instances` of dataset `i` (`points` points of `features` numbers each) against the cost
/// model: every instance is held at once (its points and its `n²` similarities), so the limit
/// is [`MAX_INSTANCES`] or as many as fit in half the memory this process may use, whichever
/// is fewer.
pub(super) fn check_instances(
    i: usize,
    instances: usize,
    points: usize,
    features: usize,
) -> Result<(), String> {
    let (n, d) = (points as f64, features as f64);
    let cost = crate::experiment::limits::UnitCost {
        unit: "instance",
        bytes: 8.0 * n * n + 8.0 * n * d + 4096.0,
        seconds: 0.0,
    };
    let budget = crate::memory::usable_bytes().map_or(f64::INFINITY, |b| b as f64 / 2.0);
    let fits = (budget / cost.bytes).floor().min(MAX_INSTANCES as f64) as usize;
    crate::experiment::limits::check_size(&key(i, "instances"), instances, fits.max(1), cost)
}

/// `min_leaves..=max_leaves` inside 1..=64 and not empty.
pub(super) fn leaf_range(i: usize, lo: usize, hi: usize) -> Result<(), String> {
    if lo < 1 || hi > 64 {
        return Err(format!(
            "{} and max_leaves = {lo}..={hi} must lie in 1..=64",
            key(i, "min_leaves")
        ));
    }
    if lo > hi {
        return Err(format!(
            "{} = {lo} exceeds max_leaves = {hi}; set min_leaves <= max_leaves",
            key(i, "min_leaves")
        ));
    }
    Ok(())
}
