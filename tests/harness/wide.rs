//! Your own data above 64 points (issue: energy methods refused above 64): greedy, beam search
//! and the sparse trellis run on a 100-point similarity matrix and a 100-point table, each
//! beside average linkage, and every tree gets its energy; a tight budget lists beam search and
//! the sparse trellis as not run, naming the estimate and the keys that change it.

use crate::common::{bin, scratch, write};
use std::path::Path;
use trellis_lab::experiment::table::{f64_column, read_parquet, str_column};

/// A 100 × 100 similarity matrix of 4 noisy blocks (header p0..p99), deterministic.
fn similarity_csv(path: &Path, n: usize) {
    let mut text = (0..n)
        .map(|i| format!("p{i}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    let noise = |i: usize, j: usize| ((i * 31 + j * 17 + i * j) % 97) as f64 / 97.0;
    for i in 0..n {
        let row: Vec<String> = (0..n)
            .map(|j| {
                let (a, b) = (i.min(j), i.max(j));
                let w = if i == j {
                    0.0
                } else if a % 4 == b % 4 {
                    0.6 + 0.4 * noise(a, b)
                } else {
                    0.3 * noise(a, b)
                };
                format!("{w:.4}")
            })
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    write(path, &text);
}

/// A table of 100 points in 5 dimensions around 4 centres (header x0..x4), deterministic.
fn points_csv(path: &Path, n: usize) {
    let mut text = String::from("x0,x1,x2,x3,x4\n");
    for i in 0..n {
        let row: Vec<String> = (0..5)
            .map(|d| {
                let centre = ((i % 4) * 3 + d) as f64 * if d % 2 == 0 { 1.0 } else { -0.5 };
                let noise = ((i * 13 + d * 7) % 29) as f64 / 29.0 - 0.5;
                format!("{:.4}", centre + noise)
            })
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    write(path, &text);
}

/// `(method, status)` of every tree, and the `(method, metric, value)` rows.
type Tables = (Vec<(String, String)>, Vec<(String, String, Option<f64>)>);

fn tables(res: &Path) -> Tables {
    let t = read_parquet(&res.join("trees.parquet")).unwrap();
    let trees = str_column(&t, "method")
        .unwrap()
        .into_iter()
        .zip(str_column(&t, "status").unwrap())
        .collect();
    let b = read_parquet(&res.join("board.parquet")).unwrap();
    let rows = str_column(&b, "method")
        .unwrap()
        .into_iter()
        .zip(str_column(&b, "metric").unwrap())
        .zip(f64_column(&b, "value").unwrap())
        .map(|((m, k), v)| (m, k, v))
        .collect();
    (trees, rows)
}

const METHODS: [&str; 4] = ["greedy", "beam", "sparse", "average_linkage"];

#[test]
fn energy_methods_run_on_100_points_and_every_tree_has_its_energy() {
    let dir = scratch("wide", "cluster");
    for (file, extra, energy) in [
        ("sims.csv", vec!["--similarity"], "dasgupta_cost"),
        ("points.csv", vec![], "hcc_energy"),
    ] {
        let path = dir.join(file);
        if energy == "dasgupta_cost" {
            similarity_csv(&path, 100);
        } else {
            points_csv(&path, 100);
        }
        let mut args = vec![
            "cluster",
            path.to_str().unwrap(),
            "--output-dir",
            dir.to_str().unwrap(),
            "--methods",
            "greedy,beam,sparse,average_linkage",
        ];
        args.extend(extra);
        let out = bin().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let res = dir.join(file.trim_end_matches(".csv"));
        let (trees, rows) = tables(&res);
        for m in METHODS {
            let status: Vec<&String> = trees.iter().filter(|t| t.0 == m).map(|t| &t.1).collect();
            assert_eq!(status, ["ran"], "{m}: {status:?}");
            let values: Vec<f64> = rows
                .iter()
                .filter(|r| r.0 == m && r.1 == energy)
                .filter_map(|r| r.2)
                .collect();
            assert!(
                values.len() == 1 && values[0].is_finite(),
                "{m} {energy}: {values:?}"
            );
        }
        // The sparse trellis holds the beam's trees, so it is never worse than beam search.
        let value = |m: &str| {
            rows.iter()
                .find(|r| r.0 == m && r.1 == energy)
                .and_then(|r| r.2)
                .unwrap()
        };
        assert!(value("sparse") <= value("beam") + 1e-9 * value("beam").abs());
    }
}

#[test]
fn a_tight_budget_lists_beam_and_sparse_as_not_run_with_the_cost() {
    let dir = scratch("wide", "budget");
    let matrix = dir.join("sims.csv");
    similarity_csv(&matrix, 80);
    let cfg = dir.join("tight.toml");
    write(
        &cfg,
        &format!(
            "[experiment]\nkind = \"board\"\nname = \"tight\"\nseed = 1\noutput_dir = \"out\"\n[board]\nmethods = [\"greedy\", \"beam\", \"sparse\"]\nmax_search_seconds = 0.001\n[[board.datasets]]\nname = \"sims\"\nsource = \"similarity_matrix\"\npath = \"{}\"\n",
            matrix.display()
        ),
    );
    let out = bin().args(["run", cfg.to_str().unwrap()]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (trees, rows) = tables(&dir.join("out/tight"));
    for (m, key) in [
        ("beam", "board.beam_size"),
        ("sparse", "board.sparse_seed_trees"),
    ] {
        let status = &trees.iter().find(|t| t.0 == m).unwrap().1;
        assert!(
            status.starts_with("not run: ")
                && status.contains("N = 80")
                && status.contains("of one core by the cost model")
                && status.contains(key)
                && status.contains("board.max_search_seconds"),
            "{m}: {status}"
        );
    }
    assert!(rows
        .iter()
        .any(|r| r.0 == "greedy" && r.1 == "dasgupta_cost" && r.2.is_some()));
}
