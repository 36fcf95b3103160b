//! `trellis-lab` command line: run experiments from TOML configs, and small tools.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use trellis_lab::data::ginkgo::JetDataset;
use trellis_lab::experiment::config::AlgorithmsSection;
use trellis_lab::experiment::jets::{check_exact_limits, score_jet};
use trellis_lab::experiment::{run_config, table, Outcome};
use trellis_lab::search::Dedup;

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
        /// Recompute even if the results folder holds a complete run of the same config.
        #[arg(long)]
        force: bool,
    },
    /// Score your own jets: one JSON object per line per jet (exact MAP, log Z, greedy, beam).
    Score {
        /// A jet file in the schema of shared/data/ginkgo_jets/ (`{"source", "jets": [...]}`).
        file: PathBuf,
        /// Beam size (default: min(3N, N(N-1)/2)).
        #[arg(long)]
        beam_size: Option<usize>,
        /// Largest N the exact trellis accepts; larger jets get null exact fields.
        #[arg(long, default_value_t = 22)]
        max_exact_leaves: usize,
    },
    /// Check a results folder's Table 1 against the paper values in its config.
    Check {
        /// A results folder written by `run`, e.g. results/jets.
        results: PathBuf,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = real_main(cli) {
        // One line: the chain of causes, outermost first.
        let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        eprintln!("error: {}", msg.join(": "));
        std::process::exit(1);
    }
}

fn real_main(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run { config, force } => match run_config(&config, force)? {
            Outcome::Written(dir) => {
                eprintln!("wrote {}", dir.display());
                Ok(())
            }
            Outcome::UpToDate(dir) => {
                eprintln!(
                    "{} already holds a complete run of this config; nothing to do (use --force to recompute)",
                    dir.display()
                );
                Ok(())
            }
        },
        Command::Score {
            file,
            beam_size,
            max_exact_leaves,
        } => score(file, beam_size, max_exact_leaves),
        Command::Check { results } => check(results),
    }
}

fn score(file: PathBuf, beam_size: Option<usize>, max_exact_leaves: usize) -> Result<()> {
    let ds = JetDataset::load(&file)?;
    if beam_size == Some(0) {
        bail!("--beam-size must be at least 1");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for jet in &ds.jets {
        let algs = AlgorithmsSection {
            trellis: jet.n_leaves <= max_exact_leaves,
            max_exact_leaves,
            beam: true,
            beam_size,
            beam_dedup: Dedup::Clusters,
            greedy: true,
            sparse: false,
            sparse_seed_trees: 100,
        };
        check_exact_limits(std::slice::from_ref(jet), &algs)?;
        let s = score_jet(jet, &algs)?;
        let line = serde_json::json!({
            "name": s.name,
            "n_leaves": s.n_leaves,
            "map_loglh": s.trellis.as_ref().map(|r| r.log_likelihood),
            "map_tree": s.trellis.as_ref().map(|r| r.newick.clone()),
            "log_z": s.log_z,
            "n_trees_finite": s.n_trees_finite.map(|c| c.to_string()),
            "greedy_loglh": s.greedy.as_ref().map(|r| r.log_likelihood),
            "greedy_tree": s.greedy.as_ref().map(|r| r.newick.clone()),
            "beam_loglh": s.beam.as_ref().map(|r| r.log_likelihood),
            "beam_tree": s.beam.as_ref().map(|r| r.newick.clone()),
            "truth_loglh": s.truth.as_ref().map(|r| r.log_likelihood),
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn check(dir: PathBuf) -> Result<()> {
    let path = dir.join("table1.parquet");
    let df = table::read_parquet(&path)
        .with_context(|| format!("no Table 1 in {} (run the experiment first)", dir.display()))?;
    let kind = table::str_column(&df, "kind")?;
    let row = table::str_column(&df, "row")?;
    let col = table::str_column(&df, "column")?;
    let mean = table::f64_column(&df, "mean")?;
    let paper = table::f64_column(&df, "paper_mean")?;
    let std = table::f64_column(&df, "std")?;
    let paper_std = table::f64_column(&df, "paper_std")?;
    let pm = |v: Option<f64>, s: Option<f64>| match (v, s) {
        (Some(v), Some(s)) => format!("{v:>8.4} ± {s:<7.4}"),
        _ => "-".into(),
    };
    let ok = table::u64_column(&df, "within_tolerance")?;
    let mut checked = 0;
    let mut failed = 0;
    for i in 0..df.height() {
        if kind[i] == "mean" {
            if let (Some(m), Some(p)) = (mean[i], paper[i]) {
                println!(
                    "mean of {:<7}         ours {}  paper {}  diff {:>+8.4}  (not checked)",
                    row[i],
                    pm(Some(m), std[i]),
                    pm(Some(p), paper_std[i]),
                    m - p
                );
            }
            continue;
        }
        if let (Some(m), Some(p), Some(o)) = (mean[i], paper[i], ok[i]) {
            checked += 1;
            let verdict = if o == 1 { "ok" } else { "OUT OF TOLERANCE" };
            if o != 1 {
                failed += 1;
            }
            println!(
                "{:>7} - {:<7}     ours {}  paper {}  diff {:>+8.4}  {verdict}",
                row[i],
                col[i],
                pm(Some(m), std[i]),
                pm(Some(p), paper_std[i]),
                m - p
            );
        }
    }
    if checked == 0 {
        bail!(
            "{} has no paper values to check (config has no [expected] section)",
            path.display()
        );
    }
    println!("{} passed, {} failed", checked - failed, failed);
    if failed > 0 {
        bail!("{failed} Table 1 differences are out of tolerance");
    }
    Ok(())
}
