//! A user's own data file to a ready config: `trellis-lab init` prints one, `trellis-lab
//! cluster` writes one beside its results and runs it. Three kinds of file:
//! - a jets JSON (the `data/ginkgo_jets` schema): judged by the Ginkgo likelihood;
//! - a points CSV/TSV with a header (rows = points, an optional label column): judged by the
//!   HCC energy over centred correlations, and by dendrogram purity against the labels;
//! - a square similarity matrix CSV/TSV (header = point names): judged by Dasgupta's cost.
//!
//! The configs are `kind = "board"` with one dataset (every method where it applies) or, for
//! jets, `kind = "jets"` (Table 1 and Figure 5 on the file). Every path in a config is relative
//! to the config file's folder; the configs written here name the data by its absolute path, so
//! they run wherever they are saved.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// What a data file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// A jets JSON.
    Jets,
    /// Points, rows of features.
    Points,
    /// A square similarity matrix.
    Similarity,
}

impl DataKind {
    /// The kind of `file`: a `.json` holds jets; otherwise points, or a similarity matrix when
    /// `similarity` says so.
    pub fn of(file: &Path, similarity: bool) -> DataKind {
        let json = file
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        match (json, similarity) {
            (true, _) => DataKind::Jets,
            (false, true) => DataKind::Similarity,
            (false, false) => DataKind::Points,
        }
    }
}

/// What a config for a user's file says besides the file.
#[derive(Clone, Debug)]
pub struct Options {
    /// The experiment name (the results folder's name).
    pub name: String,
    /// The master seed.
    pub seed: u64,
    /// The results folder's parent, as written in the config (relative to the config's folder).
    pub output_dir: String,
    /// Board methods to run (default: every one, each where it applies).
    pub methods: Option<Vec<String>>,
    /// The points file's label column.
    pub label_column: Option<String>,
    /// The largest N the exact trellis takes.
    pub max_exact_leaves: usize,
}

/// A results-folder name from a file name: letters, digits, `_` and `-` (others become `_`).
pub fn name_of(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if name.is_empty() {
        "my_data".into()
    } else {
        name
    }
}

/// `file` as an absolute path, checked to be a regular file.
pub fn absolute(file: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(file)
        .with_context(|| format!("cannot read {} (check the path)", file.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file; give a data file", file.display());
    }
    std::path::absolute(file).with_context(|| format!("cannot resolve {}", file.display()))
}

/// A TOML string literal.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A seed as a config writes it: an integer up to TOML's largest (2^63 - 1), a string of
/// digits above it (as `experiment.seed` accepts).
fn seed_text(seed: u64) -> String {
    match i64::try_from(seed) {
        Ok(_) => seed.to_string(),
        Err(_) => quoted(&seed.to_string()),
    }
}

/// `Err` (one line, the options named as `what`) unless `text` is a config `run` accepts.
pub fn validate(text: &str, what: &str) -> Result<()> {
    let reg = super::Registry::builtin();
    super::config::parse_in(&reg, text, Path::new("."))
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("config <input>", what)))
}

/// Reads the data a board config `text` names, as its run would, so that `init` prints a config
/// only for data it can run on (a label column the file does not have, a file that is not a
/// matrix, are said now, in one line, not at `run`).
pub fn check_board_data(text: &str, what: &str) -> Result<()> {
    let mut table: toml::Table = toml::from_str(text)?;
    let seed = table
        .get("experiment")
        .and_then(|e| e.get("seed"))
        .and_then(|s| s.as_integer())
        .unwrap_or(1) as u64;
    let Some(board) = table.remove("board") else {
        return Ok(());
    };
    let sec: super::board::BoardSection = board.try_into()?;
    super::board::data::load(&sec.datasets, seed)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{what}: {e:#}"))
}

/// The text of a board config that runs every method (or `opts.methods`) on `file`.
pub fn board_config(kind: DataKind, file: &Path, opts: &Options) -> String {
    let (source, what) = match kind {
        DataKind::Jets => ("file", "a jets JSON (data/ginkgo_jets schema): judged by the Ginkgo log-likelihood"),
        DataKind::Points => ("file", "points, rows of features with a header: judged by the HCC energy over centred correlations, and by purity against the labels if any"),
        DataKind::Similarity => ("similarity_matrix", "a square similarity matrix (header = point names): judged by Dasgupta's cost"),
    };
    let mut t = format!(
        "# Every tree-building method on one file of your own (trellis-lab board kind).\n\
         #   trellis-lab run THIS.toml   ->  <output_dir>/<name>/: board.parquet (every method's\n\
         #   scores), trees.parquet (trees as Newick), tree_<dataset>_<method>.png, heatmaps\n\
         # Every path here is relative to this file's folder (or absolute).\n\n\
         [experiment]\nkind = \"board\"\nname = {}\nseed = {}\noutput_dir = {}\n\n\
         [board]\n# The exact trellis (and exact posterior ranks) up to this many points (at most 20).\n\
         max_exact_leaves = {}\n",
        quoted(&opts.name),
        seed_text(opts.seed),
        quoted(&opts.output_dir),
        opts.max_exact_leaves
    );
    match &opts.methods {
        Some(m) => t.push_str(&format!(
            "methods = [{}]\n",
            m.iter().map(|x| quoted(x)).collect::<Vec<_>>().join(", ")
        )),
        None => t.push_str(
            "# methods = [\"trellis\", \"beam\", \"greedy\", \"average_linkage\"]   # default: all, where they apply\n",
        ),
    }
    t.push_str(
        "# merge_score = \"revenue\"   # greedy and beam search: \"revenue\" (default) or \"potential\" (the papers' rule)\n",
    );
    t.push_str(&format!(
        "\n# {what}\n[[board.datasets]]\nname = {}\nsource = \"{source}\"\npath = {}\n",
        quoted(&opts.name),
        quoted(&file.display().to_string())
    ));
    if kind == DataKind::Points {
        match &opts.label_column {
            Some(l) => t.push_str(&format!("label_column = {}\n", quoted(l))),
            None => t.push_str(
                "# label_column = \"label\"   # the column of each point's class, if any\n",
            ),
        }
    }
    t
}

/// The text of a jets config (Table 1 and Figure 5: exact trellis, beam search, greedy) on the
/// jets JSON `file`.
pub fn jets_config(file: &Path, opts: &Options) -> String {
    format!(
        "# The exact trellis, beam search and greedy on jets of your own (Table 1 and Figure 5).\n\
         #   trellis-lab run THIS.toml   ->  <output_dir>/<name>/: jets.parquet, table1.png, fig5_logz_vs_map.png\n\
         # Every path here is relative to this file's folder (or absolute).\n\n\
         [experiment]\nkind = \"jets\"\nname = {}\nseed = {}\noutput_dir = {}\n\n\
         [jets]\nsource = \"file\"\npath = {}\n\
         # min_leaves = 5   # keep only jets with this many leaves or more (dropped jets are listed)\n\
         # max_leaves = 12\n\n\
         [methods]\ntrellis = true\nbeam = true\ngreedy = true\n\
         # The exact trellis up to this many leaves (N = 20 takes about 14 s and 160 MiB on 2 cores).\n\
         max_exact_leaves = {}\n",
        quoted(&opts.name),
        seed_text(opts.seed),
        quoted(&opts.output_dir),
        quoted(&file.display().to_string()),
        opts.max_exact_leaves
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{config, Registry};

    fn opts() -> Options {
        Options {
            name: "mine".into(),
            seed: 1,
            output_dir: "results".into(),
            methods: None,
            label_column: Some("kind".into()),
            max_exact_leaves: 12,
        }
    }

    #[test]
    fn configs_written_for_a_file_parse_and_validate() {
        let reg = Registry::builtin();
        let base = Path::new("/tmp");
        for kind in [DataKind::Jets, DataKind::Points, DataKind::Similarity] {
            let text = board_config(kind, Path::new("/data/it's \"odd\".csv"), &opts());
            config::parse_in(&reg, &text, base).unwrap_or_else(|e| panic!("{kind:?}: {e}\n{text}"));
        }
        let mut o = opts();
        o.methods = Some(vec!["trellis".into(), "greedy".into()]);
        let text = board_config(DataKind::Points, Path::new("/d/p.csv"), &o);
        let cfg = config::parse_in(&reg, &text, base).unwrap();
        assert_eq!(cfg.experiment.output_dir, PathBuf::from("/tmp/results"));
        let text = jets_config(Path::new("/d/j.json"), &opts());
        config::parse_in(&reg, &text, base).unwrap();
        assert_eq!(name_of(Path::new("/x/my data (v2).csv")), "my_data__v2_");
        assert_eq!(DataKind::of(Path::new("a.JSON"), false), DataKind::Jets);
        assert_eq!(DataKind::of(Path::new("a.csv"), true), DataKind::Similarity);
    }
}
