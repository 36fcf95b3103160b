//! `trellis-lab` command line: run experiments from TOML configs, redraw and check their
//! results, and score your own jets.

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use trellis_lab::data::ginkgo::JetDataset;
use trellis_lab::experiment::jets::{check_exact_limits, score_jet};
use trellis_lab::experiment::methods::{Method, MethodsSection, BEAM_COST, MAX_BEAM};
use trellis_lab::experiment::{plot_results, Outcome, Registry};
use trellis_lab::search::Dedup;

// Heap accounting for the per-job peak memory experiments record (two relaxed atomics per
// allocation).
#[global_allocator]
static ALLOC: trellis_lab::memory::CountingAlloc = trellis_lab::memory::CountingAlloc;

#[derive(Parser)]
#[command(
    name = "trellis-lab",
    version,
    about = "Exact and approximate inference over hierarchical clusterings"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the experiment a TOML config describes; results go to <output_dir>/<name>/.
    Run {
        /// The config file, e.g. configs/jets.toml.
        config: PathBuf,
        /// Recompute even if the results folder holds a complete run of the same config,
        /// program and inputs.
        #[arg(long)]
        force: bool,
        /// Compute only part I of N of the experiment's jobs (0-based, e.g. 0/3) into
        /// <output_dir>/<name>.shard-I-of-N/; join the N parts with `merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<trellis_lab::experiment::jobs::Shard>,
    },
    /// Join the finished shard folders of one config (all N of them) into its results folder:
    /// the same tables, figures and manifest a single run writes. Run it from the folder the
    /// shards ran in.
    Merge {
        /// The shard folders, e.g. results/board.shard-*-of-3.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
    /// Redraw every figure of a finished run from its Parquet tables and manifest alone.
    Plot {
        /// A results folder written by `run`, e.g. results/jets.
        results: PathBuf,
    },
    /// Check a finished run's numbers against the expected numbers of its kind; writes
    /// checks.parquet and fails if any is out of tolerance.
    Check {
        /// A results folder written by `run`, e.g. results/jets.
        results: PathBuf,
    },
    /// Print a finished run's named numbers as `expected.toml` blocks (to accept it as a
    /// reference run after review).
    Measures {
        /// A results folder written by `run`, e.g. results/jets.
        results: PathBuf,
        /// Relative tolerance of each block (times max(|value|, 1)).
        #[arg(long, default_value_t = 1e-6)]
        tolerance: f64,
        /// The source line of each block.
        #[arg(
            long,
            default_value = "a reviewed run of this config, accepted as its reference"
        )]
        source: String,
    },
    /// Write a static HTML report of every results folder: RESULTS_ROOT/index.html and one
    /// page per folder in RESULTS_ROOT/report/ (checks, figures, leaderboard, run facts).
    Report {
        /// The folder the results folders are in.
        #[arg(default_value = "results")]
        results_root: PathBuf,
    },
    /// List the experiment kinds ("shardable": `run --shard I/N` divides their jobs).
    Kinds,
    /// List every config with the paper item it reproduces, its run time, and whether its
    /// result exists, is up to date and passes `check` (nothing is written).
    List {
        /// The configs folder (its catalog is ../experiments/catalog.toml).
        #[arg(default_value = "configs")]
        configs: PathBuf,
    },
    /// Print a ready config for a data file of your own: `jets` (Table 1 and Figure 5 on a jets
    /// JSON) or `board` (every method on a jets JSON, a points CSV/TSV or a similarity matrix).
    /// Save it anywhere and `run` it: the data path in it is absolute.
    Init {
        /// `jets` or `board`.
        kind: String,
        /// The data file: a jets .json, a points table (CSV, TSV, `;` with decimal commas, R's
        /// and pandas' exports), or (with --similarity or --distance) a square matrix.
        file: PathBuf,
        #[command(flatten)]
        data: DataFlags,
        /// The experiment name (results folder), default: the file's name.
        #[arg(long)]
        name: Option<String>,
        /// The master seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Cluster a data file of your own with every method that applies (or --methods): writes
    /// OUTPUT_DIR/NAME.toml (the config), OUTPUT_DIR/NAME/ (trees as Newick, every method's
    /// scores in Parquet, a dendrogram per method, heatmaps) and the report OUTPUT_DIR/index.html.
    Cluster {
        /// The data file: a jets .json, a points table (CSV, TSV, `;` with decimal commas, R's
        /// and pandas' exports), or (with --similarity or --distance) a square matrix.
        file: PathBuf,
        /// Methods, comma-separated (trellis, sparse, beam, greedy, average_linkage,
        /// average_euclidean, ward, kt, cambridge_aachen, anti_kt, mpost2, mgreedy, ddt, pydt,
        /// truth, bhc, brt); default all that apply but bhc and brt (points only; asked by name).
        #[arg(long, value_delimiter = ',')]
        methods: Option<Vec<String>>,
        #[command(flatten)]
        data: DataFlags,
        /// Where the config, the results folder and the report go.
        #[arg(long, default_value = "results")]
        output_dir: PathBuf,
        /// The experiment name (results folder), default: the file's name.
        #[arg(long)]
        name: Option<String>,
        /// The master seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The exact trellis (and exact posterior ranks) up to this many points (at most 22;
        /// default: chosen for the file and this machine, the reason written in the config).
        #[arg(long)]
        max_exact_leaves: Option<usize>,
        /// Recompute even if the results are up to date.
        #[arg(long)]
        force: bool,
    },
    /// Score your own jets: one JSON object per line per jet (exact MAP, log Z, greedy, beam).
    Score {
        /// A jet file in the schema of data/ginkgo_jets/ (`{"source", "jets": [...]}`).
        file: PathBuf,
        /// Beam size (default: min(3N, N(N-1)/2)).
        #[arg(long)]
        beam_size: Option<usize>,
        /// Largest N the exact trellis accepts; larger jets get null exact fields.
        #[arg(long, default_value_t = 22)]
        max_exact_leaves: usize,
    },
}

/// What a data file of your own holds, for `init` and `cluster`.
#[derive(clap::Args, Debug)]
struct DataFlags {
    /// The points file's column holding each point's class (purity and ARI against it).
    #[arg(long)]
    label_column: Option<String>,
    /// The points file's column holding each point's name (leaf labels; R's and pandas' row
    /// names are found by themselves).
    #[arg(long)]
    names_column: Option<String>,
    /// Z-score every column of the points first (for columns on different scales).
    #[arg(long)]
    standardize: bool,
    /// The file is a square similarity matrix (header = point names), not points.
    #[arg(long)]
    similarity: bool,
    /// The file is a square distance matrix (zero diagonal; header = point names): average
    /// linkage on the distances, Dasgupta's cost on max(D) - D.
    #[arg(long)]
    distance: bool,
}

impl DataFlags {
    /// The options of a config for the file, and what the flags say the file holds.
    fn options(
        self,
        name: String,
        seed: u64,
        output_dir: &str,
        methods: Option<Vec<String>>,
        max_exact_leaves: Option<usize>,
    ) -> (
        trellis_lab::experiment::own_data::Options,
        trellis_lab::experiment::cluster::Matrix,
    ) {
        (
            trellis_lab::experiment::own_data::Options {
                name,
                seed,
                output_dir: output_dir.into(),
                methods,
                label_column: self.label_column,
                names_column: self.names_column,
                standardize: self.standardize,
                max_exact_leaves,
            },
            trellis_lab::experiment::cluster::Matrix {
                similarity: self.similarity,
                distance: self.distance,
            },
        )
    }
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    if let Err(e) = real_main(cli) {
        // One line: the chain of causes, outermost first, each said once (a message that
        // already quotes its cause is not followed by it again).
        let mut msg = String::new();
        for cause in e.chain() {
            let c = trellis_lab::experiment::config::one_line(&cause.to_string());
            if msg.is_empty() {
                msg = c;
            } else if !msg.contains(&c) {
                msg = format!("{msg}: {c}");
            }
        }
        // A user's megabyte-long value quoted in a cause stays one readable line.
        use trellis_lab::experiment::config::{clip, compact_numbers};
        eprintln!("error: {}", clip(&compact_numbers(&msg), 2000));
        std::process::exit(1);
    }
}

/// A command-line usage error as one line (exit 2); help and version print as clap prints them.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    let text = e.to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    let mut line = String::new();
    for p in parts {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(p);
    }
    eprintln!(
        "error: {}; see trellis-lab --help",
        line.trim_end_matches('.')
    );
    std::process::exit(2)
}

fn real_main(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run {
            config,
            force,
            shard,
        } => report(trellis_lab::experiment::run_config_with(
            &Registry::builtin(),
            &config,
            force,
            shard,
        )?),
        Command::Merge { shards } => report(trellis_lab::experiment::merge_shards(&shards)?),
        Command::Plot { results } => {
            let files = plot_results(&results)?;
            eprintln!("redrew {} files in {}", files.len(), results.display());
            Ok(())
        }
        Command::Check { results } => check(results),
        Command::Measures {
            results,
            tolerance,
            source,
        } => {
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                bail!("--tolerance {tolerance} must be a finite number >= 0");
            }
            let text = trellis_lab::experiment::accepted_run_toml(&results, tolerance, &source)?;
            print_lines(&text.lines().map(str::to_string).collect::<Vec<_>>());
            Ok(())
        }
        Command::List { configs } => list(&configs),
        Command::Report { results_root } => {
            let summary = trellis_lab::report::write_report(&results_root)?;
            eprintln!(
                "wrote {} ({} results folders)",
                summary.index.display(),
                summary.folders
            );
            Ok(())
        }
        Command::Kinds => {
            let lines: Vec<String> = Registry::builtin()
                .kinds()
                .iter()
                .map(|k| {
                    let shards = if k.shardable() { "shardable" } else { "" };
                    format!("{:<20} {:<10} {}", k.name(), shards, k.about())
                })
                .collect();
            print_lines(&lines);
            Ok(())
        }
        Command::Score {
            file,
            beam_size,
            max_exact_leaves,
        } => score(file, beam_size, max_exact_leaves),
        Command::Init {
            kind,
            file,
            data,
            name,
            seed,
        } => {
            use trellis_lab::experiment::own_data::{self, DataKind};
            let abs = own_data::absolute(&file)?;
            let name = name.unwrap_or_else(|| own_data::name_of(&abs));
            let (opts, matrix) = data.options(name, seed, "results", None, None);
            let data = DataKind::of_flags(&abs, matrix.similarity, matrix.distance, &opts)?;
            match (kind.as_str(), data) {
                ("jets", DataKind::Jets) | ("board", _) => {}
                ("jets", _) => bail!("init jets needs a jets .json file; for points or a similarity matrix use init board"),
                (other, _) => bail!("init {other:?}: the kinds are jets and board"),
            }
            // The exact trellis's limit, chosen for the file's instances and this machine.
            let (limit, sizes) = own_data::exact_limit(data, &abs, &opts, &kind)?;
            let decisions = own_data::decide(data, &abs, &opts);
            let text = match kind.as_str() {
                "jets" => own_data::jets_config(&abs, &opts, &limit, &sizes),
                _ => own_data::board_config(data, &abs, &opts, &limit, &decisions),
            };
            // The config printed is one `run` accepts (a bad --name or --seed is said here).
            own_data::validate(&text, "the init options")?;
            // ... and the data read as its run reads them (a label column the file lacks).
            own_data::check_board_data(&text, "the init options")?;
            own_data::say_exact_limit(&limit);
            print_lines(&text.lines().map(str::to_string).collect::<Vec<_>>());
            Ok(())
        }
        Command::Cluster {
            file,
            methods,
            data,
            output_dir,
            name,
            seed,
            max_exact_leaves,
            force,
        } => {
            let name = name.unwrap_or_else(|| trellis_lab::experiment::own_data::name_of(&file));
            let (opts, matrix) = data.options(name, seed, ".", methods, max_exact_leaves);
            cluster(&file, opts, matrix, &output_dir, force)
        }
    }
}

/// `cluster`: a board config for `file` run into `out/<name>/`, the config beside it, and the
/// report of `out` ([`trellis_lab::experiment::cluster`]).
fn cluster(
    file: &std::path::Path,
    opts: trellis_lab::experiment::own_data::Options,
    matrix: trellis_lab::experiment::cluster::Matrix,
    out: &std::path::Path,
    force: bool,
) -> Result<()> {
    let done = trellis_lab::experiment::cluster::cluster(file, &opts, matrix, out, force)?;
    // A run says what did not run as it goes; results already up to date say it here.
    let up_to_date = matches!(done.outcome, Outcome::UpToDate(_));
    report(done.outcome)?;
    if let Some(kept) = &done.kept {
        eprintln!(
            "note: {} is kept: it is not the config this program wrote for the results beside it (edited, another program's, or its results are gone); this run's config is {}",
            kept.display(),
            done.config.display()
        );
    }
    // Which methods did not apply, and why (trees.parquet records it).
    for (m, why) in done.not_run.iter().filter(|_| up_to_date) {
        eprintln!("note: {m} not run: {why}");
    }
    if let Some(ties) = &done.map_ties {
        eprintln!("note: {ties}");
    }
    eprintln!(
        "config {}; report {}",
        done.config.display(),
        done.report.index.display()
    );
    Ok(())
}

fn list(configs: &std::path::Path) -> Result<()> {
    use trellis_lab::experiment::list;
    use trellis_lab::experiment::run_times::RunTimes;
    let experiments = configs
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("experiments");
    let catalog_path = experiments.join("catalog.toml");
    // The catalog beside the configs (a checkout), else the one built into the program (the
    // shipped configs' entries; a config of another name is "?": no paper item known for it).
    let catalog = if catalog_path.is_file() {
        list::read_catalog(&catalog_path)?
    } else {
        list::Catalog::builtin().config.clone()
    };
    // The run times of one measured run: the file beside the configs, else the built-in copy.
    let times_path = experiments.join("run_times.toml");
    let times = if times_path.is_file() {
        RunTimes::read(&times_path)?
    } else {
        RunTimes::builtin().clone()
    };
    let rows = list::list(&Registry::builtin(), configs, &catalog, &times)?;
    let mut lines = vec![format!(
        "{:<34} {:<24} {:<44} reproduces",
        "config", "time", "result"
    )];
    for r in &rows {
        let name = r.config.file_name().unwrap_or_default().to_string_lossy();
        lines.push(format!(
            "{:<34} {:<24} {:<44} {}",
            name,
            r.time,
            r.state.words(),
            r.reproduces
        ));
    }
    let ok = rows
        .iter()
        .filter(|r| matches!(r.state, list::State::Checked { passed, total } if passed == total))
        .count();
    lines.push(format!(
        "{} configs; {ok} with an up-to-date result that passes check",
        rows.len()
    ));
    lines.push(format!(
        "times: wall time of {} (experiments/run_times.toml, written by scripts/run_times.py)",
        times.measured_on()
    ));
    lines.push(format!(
        "reproduces: from {}; \"?\" for a config it does not list (a config of your own)",
        if catalog_path.is_file() {
            catalog_path.display().to_string()
        } else {
            "the catalog built into the program (no experiments/catalog.toml beside the configs)"
                .into()
        }
    ));
    print_lines(&lines);
    Ok(())
}

fn report(outcome: Outcome) -> Result<()> {
    match outcome {
        Outcome::Written(dir) => eprintln!("wrote {}", dir.display()),
        Outcome::UpToDate(dir) => eprintln!(
            "{} already holds a complete run of this config, program and inputs; nothing to do (use --force to recompute)",
            dir.display()
        ),
    }
    Ok(())
}

fn check(dir: PathBuf) -> Result<()> {
    let (verdicts, note) = trellis_lab::experiment::check_folder(&Registry::builtin(), &dir)?;
    let failed = verdicts.iter().filter(|v| !v.passed).count();
    let mut lines: Vec<String> = verdicts.iter().map(|v| v.line()).collect();
    if let Some(note) = note {
        lines.push(format!("note: {note}"));
    }
    let na = verdicts.iter().filter(|v| !v.applicable).count();
    lines.push(format!(
        "check: {} passed, {} failed{}",
        verdicts.len() - failed - na,
        failed,
        if na > 0 {
            format!(", {na} not applicable")
        } else {
            String::new()
        }
    ));
    print_lines(&lines);
    if failed > 0 {
        let first = verdicts.iter().find(|v| !v.passed).map(|v| v.line());
        bail!(
            "{failed} of {} numbers in {} are out of tolerance; first: {}",
            verdicts.len(),
            dir.display(),
            first.unwrap_or_default()
        );
    }
    Ok(())
}

/// Prints lines to stdout; a closed pipe (e.g. `| head -1`) ends the output quietly.
fn print_lines(lines: &[String]) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for l in lines {
        if writeln!(out, "{l}").is_err() {
            return;
        }
    }
}

fn score(file: PathBuf, beam_size: Option<usize>, max_exact_leaves: usize) -> Result<()> {
    if beam_size == Some(0) {
        bail!("--beam-size must be at least 1");
    }
    if let Some(b) = beam_size {
        trellis_lab::experiment::limits::check_size("--beam-size", b, MAX_BEAM, BEAM_COST)
            .map_err(anyhow::Error::msg)?;
    }
    if max_exact_leaves > trellis_lab::exact::full::MAX_LEAVES {
        bail!(
            "--max-exact-leaves {max_exact_leaves} is above the exact trellis's hard limit of {} leaves",
            trellis_lab::exact::full::MAX_LEAVES
        );
    }
    trellis_lab::experiment::methods::check_exact_memory("--max-exact-leaves", max_exact_leaves)
        .map_err(anyhow::Error::msg)?;
    let ds = JetDataset::load(&file)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for jet in &ds.jets {
        let methods = MethodsSection {
            trellis: jet.n_leaves <= max_exact_leaves,
            map_trellis: false,
            max_exact_leaves,
            beam: true,
            beam_size,
            beam_dedup: Dedup::Clusters,
            greedy: true,
            sparse: false,
            sparse_seed_trees: 100,
            merge_score: trellis_lab::search::MergeScore::Potential,
        };
        check_exact_limits(std::slice::from_ref(jet), &methods)?;
        let s = score_jet(jet, &methods)?;
        let ll = |m| s.get(m).map(|r| r.log_likelihood);
        let tree = |m| s.get(m).map(|r| r.newick.clone());
        let line = serde_json::json!({
            "name": s.name,
            "n_leaves": s.n_leaves,
            "map_loglh": ll(Method::Trellis),
            "map_tree": tree(Method::Trellis),
            "log_z": s.log_z(),
            "n_trees_finite": s.n_trees_finite().map(|c| c.to_string()),
            "greedy_loglh": ll(Method::Greedy),
            "greedy_tree": tree(Method::Greedy),
            "beam_loglh": ll(Method::Beam),
            "beam_tree": tree(Method::Beam),
            "truth_loglh": ll(Method::Truth),
        });
        if writeln!(out, "{line}").is_err() {
            // A closed pipe (e.g. `| head -1`) ends the output quietly.
            return Ok(());
        }
    }
    Ok(())
}
