//! `check`: a results folder's numbers against the expected numbers beside its kind.
//!
//! Each kind measures named numbers in its tables ([`Measure`]: computed afresh from the
//! Parquet files, never from a stored verdict) and ships `expected.toml` beside its code:
//!
//! ```toml
//! [[check]]
//! config = "jets"                 # experiment.name of the config the number belongs to
//! id = "table1.trellis-beam.mean" # a measure's id
//! value = 0.4325
//! tolerance = 0.10                # |ours - value| <= tolerance passes
//! source = "paper Table 1"        # or "independent brute force", "a reviewed run of this config on <date>, accepted as its reference"
//! ```
//!
//! A measure may be checked against several expectations (the paper's value, loosely; our own
//! accepted run, tightly). `check` prints one line per expectation and writes `checks.parquet`.

use super::kind::{Kind, Results};
use super::table::Table;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::Path;

/// A named number a kind reads off its tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    /// Stable identifier, e.g. `"table1.trellis-beam.mean"`.
    pub id: String,
    /// What it is, for people: `"Table 1: trellis − beam, mean"`.
    pub what: String,
    /// The value.
    pub value: f64,
    /// For a property: over how many items (instances, jets, trees) it was checked, when the
    /// kind counts them. A property checked over none is "not applicable", never "passed".
    pub over: Option<usize>,
}

impl Measure {
    /// A measure.
    pub fn new(id: impl Into<String>, what: impl Into<String>, value: f64) -> Measure {
        Measure {
            id: id.into(),
            what: what.into(),
            value,
            over: None,
        }
    }

    /// This measure, checked over `n` items.
    pub fn over(self, n: usize) -> Measure {
        Measure {
            over: Some(n),
            ..self
        }
    }
}

/// One expected number.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// `experiment.name` of the config it belongs to (`configs/<name>.toml`).
    pub config: String,
    /// The measure's id.
    pub id: String,
    /// The expected value.
    pub value: f64,
    /// Largest allowed |ours − value|.
    pub tolerance: f64,
    /// Where the value comes from.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedFile {
    #[serde(default)]
    check: Vec<Expected>,
}

/// Parses an `expected.toml` text; every value finite, every tolerance finite and >= 0.
pub fn parse_expected(text: &str) -> Result<Vec<Expected>> {
    let f: ExpectedFile = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "expected numbers: {}",
            super::config::one_line(&e.to_string())
        )
    })?;
    for e in &f.check {
        if !(e.value.is_finite() && e.tolerance.is_finite() && e.tolerance >= 0.0) {
            bail!(
                "expected number {} of config {}: value {} and tolerance {} must be finite, tolerance >= 0",
                e.id,
                e.config,
                e.value,
                e.tolerance
            );
        }
    }
    Ok(f.check)
}

/// The expected numbers of `kind` for config `name`.
pub fn expected_for(kind: &dyn Kind, name: &str) -> Result<Vec<Expected>> {
    Ok(parse_expected(kind.expected())
        .with_context(|| format!("kind {}", kind.name()))?
        .into_iter()
        .filter(|e| e.config == name)
        .collect())
}

/// One checked number.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The expectation.
    pub expected: Expected,
    /// What the measure is (empty when the tables do not give it).
    pub what: String,
    /// Our value, if the tables give it.
    pub observed: Option<f64>,
    /// Whether |observed − expected| <= tolerance (true for a property that does not apply).
    pub passed: bool,
    /// False for a property checked over no items (no instance where it could be violated):
    /// said "not applicable", not "passed".
    pub applicable: bool,
}

impl Verdict {
    /// One line for people: verdict, what, ours, expected ± tolerance, source.
    pub fn line(&self) -> String {
        let e = &self.expected;
        let ours = match self.observed {
            Some(v) => format!("{v:.6}"),
            None => "missing".into(),
        };
        let diff = self
            .observed
            .map(|v| format!("{:+.6}", v - e.value))
            .unwrap_or_else(|| "-".into());
        if !self.applicable {
            return format!(
                "n/a  {}: not applicable, nothing in this run it could hold for ({})",
                if self.what.is_empty() {
                    &e.id
                } else {
                    &self.what
                },
                e.source
            );
        }
        format!(
            "{:<4} {}: ours {ours}, expected {} ± {} (diff {diff}; {})",
            if self.passed { "ok" } else { "FAIL" },
            if self.what.is_empty() {
                &e.id
            } else {
                &self.what
            },
            e.value,
            e.tolerance,
            e.source
        )
    }
}

/// Compares `measures` with `expected`: every verdict recomputed from the values.
pub fn verdicts(measures: &[Measure], expected: &[Expected]) -> Vec<Verdict> {
    expected
        .iter()
        .map(|e| {
            let m = measures.iter().find(|m| m.id == e.id);
            let observed = m.map(|m| m.value);
            let passed =
                observed.is_some_and(|v| v.is_finite() && (v - e.value).abs() <= e.tolerance);
            Verdict {
                expected: e.clone(),
                what: m.map(|m| m.what.clone()).unwrap_or_default(),
                observed,
                passed,
                applicable: true,
            }
        })
        .collect()
}

/// Checks the results folder `results` of `kind`: the verdicts of [`check_report`].
pub fn check_results(kind: &dyn Kind, results: &Results) -> Result<Vec<Verdict>> {
    Ok(check_report(kind, results)?.0)
}

/// The source of every property verdict.
pub const PROPERTY: &str = "property (holds for any data)";

/// Checks the results folder `results` of `kind`: the kind's properties always (each a count
/// of violations that must be 0), and its reference numbers (paper values, accepted runs) only
/// when the run's config is the shipped config they were measured on (output folder, threads
/// and data folders aside). Returns the verdicts and, when reference numbers were skipped, one
/// line saying why.
pub fn check_report(kind: &dyn Kind, results: &Results) -> Result<(Vec<Verdict>, Option<String>)> {
    let name = results.experiment()?.name;
    let mut out: Vec<Verdict> = kind
        .properties(results)?
        .into_iter()
        .map(|m| Verdict {
            expected: Expected {
                config: name.clone(),
                id: m.id.clone(),
                value: 0.0,
                tolerance: 0.0,
                source: PROPERTY.into(),
            },
            passed: m.value == 0.0,
            applicable: m.over != Some(0),
            observed: Some(m.value),
            what: m.what,
        })
        .collect();
    let expected = expected_for(kind, &name)?;
    if expected.is_empty() {
        let note = format!(
            "no reference numbers for a config named {name:?} (kind {} has them for its shipped configs); checked the properties that hold for any data",
            kind.name()
        );
        return Ok((out, Some(note)));
    }
    let config = results
        .manifest()
        .get("config")
        .cloned()
        .unwrap_or_default();
    match super::references::differences(&name, &config) {
        Some(d) if !d.is_empty() => {
            let mut keys = d.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            if d.len() > 5 {
                keys.push_str(&format!(" and {} more", d.len() - 5));
            }
            let note = format!(
                "reference numbers of config {name:?} skipped: this run differs from configs/{name}.toml in {keys}; checked the properties that hold for any data"
            );
            Ok((out, Some(note)))
        }
        _ => {
            let measures = kind.measures(results)?;
            out.extend(verdicts(&measures, &expected));
            Ok((out, None))
        }
    }
}

/// Writes `checks.parquet`: one row per verdict, each with the content hash of the manifest it
/// was checked against (`manifest_hash`), so a reader can tell verdicts of this run from stale
/// ones.
pub fn write_checks(verdicts: &[Verdict], path: &Path, manifest_hash: u64) -> Result<()> {
    let s = |f: &dyn Fn(&Verdict) -> String| verdicts.iter().map(f).collect::<Vec<_>>();
    let x = |f: &dyn Fn(&Verdict) -> Option<f64>| verdicts.iter().map(f).collect::<Vec<_>>();
    Table::new()
        .str("config", &s(&|v| v.expected.config.clone()))
        .str("id", &s(&|v| v.expected.id.clone()))
        .str("what", &s(&|v| v.what.clone()))
        .f64("observed", &x(&|v| v.observed))
        .f64("expected", &x(&|v| Some(v.expected.value)))
        .f64("tolerance", &x(&|v| Some(v.expected.tolerance)))
        .f64(
            "difference",
            &x(&|v| v.observed.map(|o| o - v.expected.value)),
        )
        .str("source", &s(&|v| v.expected.source.clone()))
        .str("manifest_hash", &s(&|_| format!("{manifest_hash:016x}")))
        .u64(
            "passed",
            &verdicts
                .iter()
                .map(|v| Some(v.passed as u64))
                .collect::<Vec<_>>(),
        )
        .u64(
            "applicable",
            &verdicts
                .iter()
                .map(|v| Some(v.applicable as u64))
                .collect::<Vec<_>>(),
        )
        .write_parquet(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_recomputed_and_missing_measures_fail() {
        let exp = parse_expected(
            "[[check]]\nconfig = \"c\"\nid = \"a\"\nvalue = 1.0\ntolerance = 0.1\nsource = \"s\"\n\
             [[check]]\nconfig = \"c\"\nid = \"b\"\nvalue = 0.0\ntolerance = 0.0\nsource = \"s\"\n",
        )
        .unwrap();
        let v = verdicts(&[Measure::new("a", "A", 1.05)], &exp);
        assert!(v[0].passed && !v[1].passed);
        assert!(v[1].line().contains("missing"), "{}", v[1].line());
        let v = verdicts(&[Measure::new("a", "A", 1.2)], &exp);
        assert!(!v[0].passed && v[0].line().starts_with("FAIL"));
        let v = verdicts(&[Measure::new("a", "A", f64::NAN)], &exp);
        assert!(!v[0].passed, "NaN never passes");
    }

    #[test]
    fn bad_tolerances_are_rejected() {
        for t in ["-0.1", "nan", "inf"] {
            let text = format!(
                "[[check]]\nconfig = \"c\"\nid = \"a\"\nvalue = 1.0\ntolerance = {t}\nsource = \"s\"\n"
            );
            assert!(parse_expected(&text).is_err(), "{t}");
        }
    }
}
