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
//!
//! The exact trellis's limit (`max_exact_leaves`) is chosen for the file and the machine
//! ([`exact_limit`], [`super::exact_limit`]) unless given, and written with the reason, so that
//! a config written for a file runs unedited on it.

use super::exact_limit::{ExactLimit, ExactModel, Work};
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
    /// A square distance matrix.
    Distance,
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

    /// The kind of `file` from the flags `--similarity` and `--distance` (at most one), with
    /// the flags that apply to points only refused for the other kinds, in one line each.
    pub fn of_flags(
        file: &Path,
        similarity: bool,
        distance: bool,
        opts: &Options,
    ) -> Result<DataKind> {
        if similarity && distance {
            bail!("--similarity and --distance both given; a matrix holds similarities (higher = more alike) or distances (0 = the same point): pass the one it holds");
        }
        let kind = match (Self::of(file, similarity), distance) {
            (DataKind::Points, true) => DataKind::Distance,
            (DataKind::Jets, true) => bail!(
                "--distance: {} is a jets file (.json); --distance reads a square distance matrix",
                file.display()
            ),
            (k, _) => k,
        };
        let bayes = opts
            .methods
            .iter()
            .flatten()
            .find(|m| matches!(m.as_str(), "bhc" | "brt"));
        if let (Some(m), DataKind::Similarity | DataKind::Distance | DataKind::Jets) = (bayes, kind)
        {
            let held = match kind {
                DataKind::Jets => "a jets file",
                _ => "a similarity or distance matrix",
            };
            bail!("--methods {m}: BHC and BRT need points (rows of features) and {} holds {held}; pass the points table itself (CSV/TSV, no --similarity/--distance) or drop bhc and brt from --methods", file.display());
        }
        let what = match kind {
            DataKind::Points => return Ok(kind),
            DataKind::Jets => "a jets file (.json) has no columns",
            _ => "a matrix names its points in its header and holds no other columns",
        };
        for (flag, set) in [
            ("--label-column", opts.label_column.is_some()),
            ("--names-column", opts.names_column.is_some()),
            ("--standardize", opts.standardize),
        ] {
            if set {
                bail!("{flag} applies to a points table; {what}: drop the flag");
            }
        }
        if kind == DataKind::Jets && similarity {
            bail!("--similarity: {} is a jets file (.json); --similarity reads a square similarity matrix", file.display());
        }
        Ok(kind)
    }

    /// The board source that reads it.
    fn source(self) -> &'static str {
        match self {
            DataKind::Jets | DataKind::Points => "file",
            DataKind::Similarity => "similarity_matrix",
            DataKind::Distance => "distance_matrix",
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
    /// The points file's names column.
    pub names_column: Option<String>,
    /// Whether the points' columns are standardised.
    pub standardize: bool,
    /// The largest N the exact trellis takes (`None`: chosen for the file and the machine).
    pub max_exact_leaves: Option<usize>,
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

/// The sizes (leaves or points) of the instances a board config reads from `file`.
fn instance_sizes(kind: DataKind, file: &Path, opts: &Options) -> Result<Vec<usize>> {
    let mut spec = format!(
        "name = {}\nsource = \"{}\"\npath = {}\n",
        quoted(&opts.name),
        kind.source(),
        quoted(&file.display().to_string())
    );
    if kind == DataKind::Points {
        spec.push_str(&points_keys(opts, &Decisions::default()));
    }
    let spec: super::board::data::DatasetSpec =
        toml::from_str(&spec).context("the data file's dataset entry")?;
    let insts = super::board::data::instances(&[spec], opts.seed)?;
    Ok(insts.iter().map(|i| i.n()).collect())
}

/// The exact trellis's limit for `file` and why: `opts.max_exact_leaves` when given, else
/// chosen from the sizes of the file's instances and this machine for `kind` of config ("board"
/// or "jets", [`super::exact_limit::choose`]).
pub fn exact_limit(
    data: DataKind,
    file: &Path,
    opts: &Options,
    config: &str,
) -> Result<(ExactLimit, Vec<usize>)> {
    // A file that cannot be read is said by the run, in its place among the checks (after the
    // options and the results folder): here the machine alone decides.
    let sizes = instance_sizes(data, file, opts).unwrap_or_default();
    if let Some(l) = opts.max_exact_leaves {
        return Ok((
            ExactLimit {
                limit: l,
                why: format!("{l}, as given."),
                file: String::new(),
            },
            sizes,
        ));
    }
    let model = match data {
        DataKind::Jets => ExactModel::Ginkgo,
        _ => ExactModel::Pairwise,
    };
    let work = if config == "jets" {
        Work::Jets
    } else {
        Work::Board {
            trees: opts.methods.as_ref().map_or(
                super::board::methods::BoardMethod::default_methods().len(),
                Vec::len,
            ),
            rank_cap: 1_000_000,
        }
    };
    let usable = crate::memory::usable_bytes();
    Ok((
        super::exact_limit::choose(&sizes, model, work, usable),
        sizes,
    ))
}

/// Says on the terminal, before any work, up to which N the exact trellis runs and what it
/// costs by the cost model (on idle cores).
pub fn say_exact_limit(limit: &ExactLimit) {
    if let Some(line) = exact_limit_line(limit) {
        eprintln!("{line}");
    }
}

/// What `cluster` says just before it computes: the reader's decisions, which its config now
/// states, and the exact trellis's estimate.
pub fn before_computing(limit: &ExactLimit, d: &Decisions) -> Option<String> {
    let mut lines: Vec<String> = [&d.names_column, &d.label_column]
        .into_iter()
        .flatten()
        .map(|(_, why)| format!("note: {why}"))
        .collect();
    if let Some(n) = d.square_distances {
        lines.push(format!(
            "note: the table is {n} × {n}, symmetric, with a zero diagonal: it looks like a \
             distance matrix, read here as {n} points of {n} features; if it holds distances, \
             give --distance (similarities: --similarity)"
        ));
    }
    lines.extend(exact_limit_line(limit));
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The line [`say_exact_limit`] prints (`None` when the file could not be sized or the limit
/// was given).
pub fn exact_limit_line(limit: &ExactLimit) -> Option<String> {
    (!limit.file.is_empty()).then(|| {
        format!(
            "exact trellis: up to N = {}; {} (times by the cost model, on idle cores)",
            limit.limit, limit.file
        )
    })
}

/// `text` as `# ` comment lines of at most about 96 columns.
fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for w in text.split_whitespace() {
        if line.len() + 1 + w.len() > 96 && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(w);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// What the reader decided about a points file that the options did not say: written into the
/// config uncommented, with the reason as a comment, so that the config states what ran.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decisions {
    /// The label column found by itself, and why.
    pub label_column: Option<(String, String)>,
    /// The names column found by itself, and why.
    pub names_column: Option<(String, String)>,
    /// The table is square, symmetric, with a zero diagonal and no negative value (`n` rows):
    /// it looks like a distance matrix read as points.
    pub square_distances: Option<usize>,
}

/// Whether an `n × n` table (row-major) is symmetric with a zero diagonal and no negative value,
/// `n >= 3`: a distance matrix, by its look.
fn looks_like_distances(n: usize, dim: usize, v: &[f64]) -> bool {
    n >= 3
        && n == dim
        && v.iter().all(|x| *x >= 0.0)
        && (0..n).all(|i| v[i * n + i] == 0.0 && (0..i).all(|j| v[i * n + j] == v[j * n + i]))
}

/// The decisions the reader makes on `file` (a points table) beyond `opts`; none for other
/// kinds, for a file without a header (its columns have no names to write), or for a file that
/// cannot be read (the run says why, in its place among the checks).
pub fn decide(kind: DataKind, file: &Path, opts: &Options) -> Decisions {
    use crate::data::matrix::{Column, MatrixSpec, PointMatrix};
    let mut d = Decisions::default();
    if kind != DataKind::Points {
        return d;
    }
    let spec = MatrixSpec {
        header: true,
        infer: true,
        label_column: opts.label_column.clone().map(Column::Name),
        names_column: opts.names_column.clone().map(Column::Name),
        ..MatrixSpec::default()
    };
    let Ok(m) = PointMatrix::load(file, &spec) else {
        return d;
    };
    let n = m.n_points();
    d.square_distances = looks_like_distances(n, m.dim(), &m.values).then_some(n);
    if !m.has_header {
        return d;
    }
    let why = |col: &str| {
        let key = format!("{col:?}");
        m.notes
            .iter()
            .find(|n| n.contains(&key) || (col.is_empty() && n.contains("row names")))
            .cloned()
            .unwrap_or_else(|| format!("column {key} was found by the reader"))
    };
    if opts.label_column.is_none() {
        d.label_column = m.label_name.as_ref().map(|l| (l.clone(), why(l)));
    }
    if opts.names_column.is_none() {
        d.names_column = m.names_name.as_ref().map(|l| (l.clone(), why(l)));
    }
    d
}

/// The points keys of a dataset entry: the label and names columns (given, or decided with the
/// reason as a comment) and `standardize`.
fn points_keys(opts: &Options, d: &Decisions) -> String {
    let mut t = String::new();
    for (key, given, decided, hint) in [
        (
            "label_column",
            &opts.label_column,
            &d.label_column,
            "the column of each point's class, if any",
        ),
        (
            "names_column",
            &opts.names_column,
            &d.names_column,
            "the column of each point's name (leaf labels), if any",
        ),
    ] {
        match (given, decided) {
            (Some(c), _) => t.push_str(&format!("{key} = {}\n", quoted(c))),
            (None, Some((c, why))) => {
                t.push_str(&comment(&format!("Found by the reader: {why}")));
                t.push_str(&format!("{key} = {}\n", quoted(c)));
            }
            (None, None) => t.push_str(&format!("# {key} = \"...\"   # {hint} (none found)\n")),
        }
    }
    if opts.standardize {
        t.push_str("standardize = true\n");
    } else {
        t.push_str(
            "# standardize = true   # z-score every column first (columns on different scales)\n",
        );
    }
    t
}

/// The commented keys of BHC and BRT in a points config.
const BAYES_KEYS: &str = "# BHC and Bayesian rose trees (points only) run when listed: methods = [..., \"bhc\", \"brt\"].\n\
# Beta-Bernoulli when every value is 0 or 1, else a NIW Gaussian on the table as read:\n\
# [board.bhc]\n\
# alpha = 1.0        # BHC's DP concentration\n\
# gamma = 0.5        # BRT's gamma in (0, 1]\n\
# kappa0 = 0.1       # Gaussian: kappa0; S0 = scale diag(var), nu0 = D + 2, m0 = the data mean\n\
# scale = 0.25\n\
# strength = 2.0     # Beta-Bernoulli: the prior's strength around each feature's frequency\n\
# max_points = 2000\n";

/// The text of a board config that runs every method (or `opts.methods`) on `file`, with the
/// exact trellis up to `limit` leaves and the reader's decisions `d`.
pub fn board_config(
    kind: DataKind,
    file: &Path,
    opts: &Options,
    limit: &ExactLimit,
    d: &Decisions,
) -> String {
    let what = match kind {
        DataKind::Jets => "a jets JSON (data/ginkgo_jets schema): judged by the Ginkgo log-likelihood",
        DataKind::Points => "points, rows of features with a header: judged by the HCC energy over centred correlations, and by purity against the labels if any",
        DataKind::Similarity => "a square similarity matrix (header = point names): judged by Dasgupta's cost",
        DataKind::Distance => "a square distance matrix (header = point names): average linkage on the distances, Dasgupta's cost on max(D) - D",
    };
    let source = kind.source();
    let mut t = format!(
        "# Every tree-building method on one file of your own (trellis-lab board kind).\n\
         #   trellis-lab run THIS.toml   ->  <output_dir>/<name>/: board.parquet (every method's\n\
         #   scores), trees.parquet (trees as Newick), tree_<dataset>_<method>.png, heatmaps\n\
         # Every path here is relative to this file's folder (or absolute).\n\n\
         [experiment]\nkind = \"board\"\nname = {}\nseed = {}\noutput_dir = {}\n\n\
         [board]\n{}max_exact_leaves = {}\n",
        quoted(&opts.name),
        seed_text(opts.seed),
        quoted(&opts.output_dir),
        comment(&format!(
            "The exact trellis (and exact posterior ranks) up to this many points (at most 22): {}",
            limit.why
        )),
        limit.limit
    );
    match &opts.methods {
        Some(m) => t.push_str(&format!(
            "methods = [{}]\n",
            m.iter().map(|x| quoted(x)).collect::<Vec<_>>().join(", ")
        )),
        None => t.push_str(
            "# methods = [\"trellis\", \"beam\", \"greedy\", \"average_linkage\"]   # default: all, where they apply, but bhc and brt\n",
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
        t.push_str(&points_keys(opts, d));
        t.push('\n');
        t.push_str(BAYES_KEYS);
    }
    t
}

/// The text of a jets config (Table 1 and Figure 5: exact trellis, beam search, greedy) on the
/// jets JSON `file` whose jets have `sizes` leaves, with the exact trellis up to `limit` leaves:
/// jets above it are dropped (`jets.max_leaves`, listed when run) so that the config runs
/// unedited, or the trellis is off when no jet is within it.
pub fn jets_config(file: &Path, opts: &Options, limit: &ExactLimit, sizes: &[usize]) -> String {
    let l = limit.limit;
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let within = sizes.is_empty() || sizes.iter().any(|&n| n <= l);
    let leaves = if largest <= l || !within {
        "# max_leaves = 12\n".to_string()
    } else {
        format!("# Jets above the exact trellis's limit below are dropped (listed when run).\nmax_leaves = {l}\n")
    };
    let trellis = if within {
        "trellis = true\n"
    } else {
        "# No jet of this file is within the exact trellis's limit below: the trellis is off.\ntrellis = false\n"
    };
    format!(
        "# The exact trellis, beam search and greedy on jets of your own (Table 1 and Figure 5).\n\
         #   trellis-lab run THIS.toml   ->  <output_dir>/<name>/: jets.parquet, table1.png, fig5_logz_vs_map.png\n\
         # Every path here is relative to this file's folder (or absolute).\n\n\
         [experiment]\nkind = \"jets\"\nname = {}\nseed = {}\noutput_dir = {}\n\n\
         [jets]\nsource = \"file\"\npath = {}\n\
         # min_leaves = 5   # keep only jets with this many leaves or more (dropped jets are listed)\n\
         {leaves}\n\
         [methods]\n{trellis}beam = true\ngreedy = true\n{}max_exact_leaves = {l}\n",
        quoted(&opts.name),
        seed_text(opts.seed),
        quoted(&opts.output_dir),
        quoted(&file.display().to_string()),
        comment(&format!("The exact trellis up to this many leaves: {}", limit.why)),
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
            names_column: None,
            standardize: false,
            max_exact_leaves: Some(12),
        }
    }

    fn limit() -> ExactLimit {
        ExactLimit {
            limit: 12,
            why: "12, as given.".into(),
            file: String::new(),
        }
    }

    #[test]
    fn a_square_symmetric_table_with_a_zero_diagonal_looks_like_distances() {
        let d = [0.0, 1.0, 2.0, 1.0, 0.0, 3.0, 2.0, 3.0, 0.0];
        assert!(looks_like_distances(3, 3, &d));
        let mut asym = d;
        asym[1] = 1.5;
        assert!(!looks_like_distances(3, 3, &asym));
        let mut diag = d;
        diag[4] = 0.1;
        assert!(!looks_like_distances(3, 3, &diag));
        let mut neg = d;
        (neg[1], neg[3]) = (-1.0, -1.0);
        assert!(!looks_like_distances(3, 3, &neg));
        assert!(!looks_like_distances(3, 2, &d[..6]));
        assert!(!looks_like_distances(2, 2, &[0.0, 1.0, 1.0, 0.0]));
    }

    #[test]
    fn configs_written_for_a_file_parse_and_validate() {
        let reg = Registry::builtin();
        let base = Path::new("/tmp");
        for kind in [
            DataKind::Jets,
            DataKind::Points,
            DataKind::Similarity,
            DataKind::Distance,
        ] {
            let d = Decisions {
                names_column: Some(("".into(), "R's row names".into())),
                ..Decisions::default()
            };
            let text = board_config(
                kind,
                Path::new("/data/it's \"odd\".csv"),
                &opts(),
                &limit(),
                &d,
            );
            config::parse_in(&reg, &text, base).unwrap_or_else(|e| panic!("{kind:?}: {e}\n{text}"));
        }
        let mut o = opts();
        o.methods = Some(vec!["trellis".into(), "greedy".into()]);
        let text = board_config(
            DataKind::Points,
            Path::new("/d/p.csv"),
            &o,
            &limit(),
            &Decisions::default(),
        );
        let cfg = config::parse_in(&reg, &text, base).unwrap();
        assert_eq!(cfg.experiment.output_dir, PathBuf::from("/tmp/results"));
        // Jets within the limit; one above it (dropped by max_leaves); none within (no trellis).
        for (sizes, max_leaves, trellis) in [
            (vec![5, 9], None, true),
            (vec![5, 13], Some(12), true),
            (vec![30], None, false),
        ] {
            let text = jets_config(Path::new("/d/j.json"), &opts(), &limit(), &sizes);
            config::parse_in(&reg, &text, base).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let toml: toml::Value = toml::from_str(&text).unwrap();
            let (jets, methods) = (&toml["jets"], &toml["methods"]);
            assert_eq!(methods["max_exact_leaves"].as_integer(), Some(12));
            assert_eq!(
                jets.get("max_leaves").and_then(|v| v.as_integer()),
                max_leaves
            );
            assert_eq!(methods["trellis"].as_bool(), Some(trellis), "{text}");
        }
        let c = comment(&"word ".repeat(60));
        assert!(
            c.lines().all(|l| l.starts_with("# ") && l.len() <= 96),
            "{c}"
        );
        assert_eq!(name_of(Path::new("/x/my data (v2).csv")), "my_data__v2_");
        assert_eq!(DataKind::of(Path::new("a.JSON"), false), DataKind::Jets);
        assert_eq!(DataKind::of(Path::new("a.csv"), true), DataKind::Similarity);
    }
}
