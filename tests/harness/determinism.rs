//! Reruns are bit-identical: every fast config run with 1 and with 2 worker threads gives the
//! same Parquet tables (every column but the wall-time ones) and byte-identical figures.

use std::path::{Path, PathBuf};
use trellis_lab::experiment::run_config;
use trellis_lab::experiment::staging::list_files;
use trellis_lab::experiment::table::read_parquet;

/// Columns that hold wall times or memory, which no rerun reproduces.
const TIMING_COLUMNS: [&str; 8] = [
    "seconds",
    "exact_scoring_seconds",
    "seconds_sd",
    "splits_per_second",
    "peak_rss_bytes",
    "peak_bytes",
    "map_trellis_seconds",
    "map_trellis_peak_rss_bytes",
];

/// `configs/<name>.toml` with its data and output paths made absolute and `threads` set.
fn config_copy(dir: &Path, name: &str, threads: usize) -> PathBuf {
    crate::common::config_copy(
        dir,
        name,
        &dir.join(format!("t{threads}")),
        Some(threads),
        &format!("{name}-t{threads}.toml"),
        |t| t,
    )
}

#[test]
fn fast_configs_give_the_same_tables_and_figures_with_1_and_2_threads() {
    let dir = std::env::temp_dir().join(format!("trellis-determinism-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "jets_smoke",
        "posterior_sampling",
        "sparse",
        "scaling_smoke",
        "dasgupta",
        "pam50",
        "cost_functions_smoke",
        "flat_pam50",
        "coalescent_smoke",
        "coalescent_learning_smoke",
        "usps_smoke",
        "pydt_synthetic_smoke",
        "animals33_smoke",
        "pydt_density_smoke",
        "board_smoke",
        "astar_smoke",
        "pythia_jets_smoke",
    ] {
        let runs: Vec<PathBuf> = [1, 2]
            .iter()
            .map(|&t| match run_config(&config_copy(&dir, name, t), true) {
                Ok(trellis_lab::experiment::Outcome::Written(d)) => d,
                other => panic!("{name}: {other:?}"),
            })
            .collect();
        let files = list_files(&runs[0]).unwrap();
        assert_eq!(
            files,
            list_files(&runs[1]).unwrap(),
            "{name}: different outputs"
        );
        let mut compared = 0;
        for f in &files {
            let (a, b) = (runs[0].join(f), runs[1].join(f));
            if f.ends_with(".parquet") {
                let (ta, tb) = (read_parquet(&a).unwrap(), read_parquet(&b).unwrap());
                assert_eq!(ta.get_column_names(), tb.get_column_names(), "{name}/{f}");
                for col in ta.get_column_names() {
                    if TIMING_COLUMNS.contains(&col.as_str()) {
                        continue;
                    }
                    let (c, cb) = (ta.column(col).unwrap(), tb.column(col).unwrap());
                    // Bitwise, NaN included: compare the columns' text form.
                    assert_eq!(
                        format!(
                            "{:?}",
                            c.as_materialized_series().iter().collect::<Vec<_>>()
                        ),
                        format!(
                            "{:?}",
                            cb.as_materialized_series().iter().collect::<Vec<_>>()
                        ),
                        "{name}/{f}: column {col} differs between 1 and 2 threads"
                    );
                }
                compared += 1;
            } else if f.ends_with(".png") || f.ends_with(".svg") || f.ends_with(".txt") {
                // The scaling chart and the coalescent tables show wall times.
                let timed = [
                    "scaling_smoke",
                    "astar_smoke",
                    "coalescent_smoke",
                    "coalescent_learning_smoke",
                ]
                .contains(&name)
                    || (name == "usps_smoke" && f.starts_with("table."))
                    || (name == "board_smoke"
                        && (f.starts_with("time_") || f.starts_with("heatmap_seconds")));
                if !timed {
                    assert!(
                        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                        "{name}/{f} differs between 1 and 2 threads"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared >= 1, "{name}: compared no file");
    }
    std::fs::remove_dir_all(&dir).ok();
}
