//! BHC and greedy Bayesian rose trees as board methods, through the binary: `cluster --methods
//! bhc,brt` on a points table writes their trees and numbers, and every number equals the
//! core's on the same points (the Gaussian model on real values, the standardised table under
//! `--standardize`, Beta–Bernoulli on 0/1 values, and the wide path above 64 points); a matrix
//! is refused for them in one line with nothing written.

use crate::common::{cluster_into, one_line_error, root, scratch, write};
use std::path::Path;
use trellis_core::bhc::{
    bhc_greedy, brt_greedy, BetaBernoulli, ConjugateModel, NormalInverseWishart,
};
use trellis_lab::experiment::table::{f64_column, read_parquet, str_column};

/// `(method, metric) -> value` of `board.parquet`, and `method -> (newick, note)` of
/// `trees.parquet`.
struct Out {
    board: Vec<(String, String, f64)>,
    trees: Vec<(String, String, String)>,
}

fn read(res: &Path) -> Out {
    let b = read_parquet(&res.join("board.parquet")).unwrap();
    let (m, k, v) = (
        str_column(&b, "method").unwrap(),
        str_column(&b, "metric").unwrap(),
        f64_column(&b, "value").unwrap(),
    );
    let t = read_parquet(&res.join("trees.parquet")).unwrap();
    let (tm, nw, note) = (
        str_column(&t, "method").unwrap(),
        str_column(&t, "newick").unwrap(),
        str_column(&t, "note").unwrap(),
    );
    Out {
        board: (0..m.len())
            .map(|r| (m[r].clone(), k[r].clone(), v[r].unwrap()))
            .collect(),
        trees: (0..tm.len())
            .map(|r| (tm[r].clone(), nw[r].clone(), note[r].clone()))
            .collect(),
    }
}

impl Out {
    fn value(&self, method: &str, metric: &str) -> f64 {
        let v: Vec<f64> = self
            .board
            .iter()
            .filter(|(m, k, _)| m == method && k == metric)
            .map(|r| r.2)
            .collect();
        assert_eq!(v.len(), 1, "{method} {metric}: {:?}", self.board);
        v[0]
    }

    fn tree(&self, method: &str) -> (&str, &str) {
        let (_, n, note) = self.trees.iter().find(|r| r.0 == method).unwrap();
        (n, note)
    }
}

/// The rows of a CSV of numbers (header first; columns `cols` of each row).
fn numbers(path: &Path, cols: usize) -> Vec<Vec<f64>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .take(cols)
                .map(|v| v.parse().unwrap())
                .collect()
        })
        .collect()
}

/// `cluster FILE ARGS` into `dir` (a success), and what it wrote to `dir/name`.
fn clustered(dir: &Path, file: &Path, args: &[&str], name: &str) -> Out {
    let out = cluster_into(dir, file, args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read(&dir.join(name))
}

/// A CSV of `rows` under `header`.
fn csv(header: &str, rows: &[Vec<f64>]) -> String {
    let mut t = format!("{header}\n");
    for r in rows {
        let v: Vec<String> = r.iter().map(|v| v.to_string()).collect();
        t.push_str(&format!("{}\n", v.join(",")));
    }
    t
}

/// The board's BHC and BRT numbers and trees equal the core's under `model`.
fn same_as_core<M: ConjugateModel>(out: &Out, model: &M, alpha: f64, gamma: f64) {
    let bhc = bhc_greedy(model, alpha).unwrap();
    assert_eq!(out.value("bhc", "own_objective"), bhc.log_p_tree());
    assert_eq!(out.value("bhc", "bhc_lower_bound"), bhc.log_lower_bound());
    assert!(bhc.log_lower_bound() < 0.0 && bhc.log_p_tree().is_finite());
    assert_eq!(out.tree("bhc").0, bhc.hierarchy().to_newick());
    let brt = brt_greedy(model, gamma).unwrap();
    assert_eq!(out.value("brt", "own_objective"), brt.log_p_tree());
    assert_eq!(out.tree("brt").0, brt.hierarchy().to_newick());
}

#[test]
fn bhc_and_brt_on_a_points_table_equal_the_core() {
    let dir = scratch("bayes_board", "gaussian");
    let file = root().join("data/examples/points_labelled.csv");
    let res = clustered(
        &dir,
        &file,
        &["--label-column", "kind", "--methods", "bhc,brt"],
        "points_labelled",
    );
    let x = numbers(&file, 4);
    same_as_core(
        &res,
        &NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap(),
        1.0,
        0.5,
    );
    // Scored like every method: purity against the labels, Dasgupta's cost; BHC's binary tree
    // has its HCC energy, BRT's rose tree is said to be multifurcating.
    for m in ["bhc", "brt"] {
        let p = res.value(m, "dendrogram_purity");
        assert!((0.0..=1.0).contains(&p), "{m}: {p}");
        assert!(res.value(m, "dasgupta_cost").is_finite());
        let note = res.tree(m).1;
        assert!(
            note.contains("NIW Gaussian") && note.contains("kappa0 = 0.1"),
            "{note}"
        );
    }
    assert!(res.value("bhc", "hcc_energy").is_finite());
    assert!(
        res.tree("brt").1.contains("children"),
        "{}",
        res.tree("brt").1
    );
    let manifest = std::fs::read_to_string(dir.join("points_labelled/manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(m["bhc"]["settings"]["alpha"], 1.0);
    assert_eq!(m["bhc"]["settings"]["gamma"], 0.5);
    assert!(m["bhc"]["models"][0]["model"]
        .as_str()
        .unwrap()
        .starts_with("NIW"));
}

#[test]
fn binary_values_take_beta_bernoulli_and_standardize_is_respected() {
    let dir = scratch("bayes_board", "bernoulli");
    // 20 rows of 5 bits from a fixed rule (two groups), and the same rows scaled by 3 (not 0/1).
    let bits: Vec<Vec<f64>> = (0..20u32)
        .map(|i| {
            (0..5u32)
                .map(|j| f64::from(((i * 7 + j * 3) % 5 < 2) ^ (i < 10) ^ (j % 2 == 0)))
                .collect()
        })
        .collect();
    write(&dir.join("bits.csv"), &csv("a,b,c,d,e", &bits));
    let res = clustered(
        &dir,
        &dir.join("bits.csv"),
        &["--methods", "bhc,brt"],
        "bits",
    );
    same_as_core(
        &res,
        &BetaBernoulli::from_data(&bits, 2.0).unwrap(),
        1.0,
        0.5,
    );
    assert!(
        res.tree("bhc").1.starts_with("Beta-Bernoulli"),
        "{}",
        res.tree("bhc").1
    );
    // Under --standardize the table as read is no longer 0/1: the Gaussian model on the
    // z-scored columns.
    let res = clustered(
        &dir,
        &dir.join("bits.csv"),
        &["--methods", "bhc,brt", "--standardize", "--name", "z"],
        "z",
    );
    let mut z = bits.clone();
    trellis_core::data::standardize(&mut z);
    same_as_core(
        &res,
        &NormalInverseWishart::from_data(&z, 0.1, 0.25).unwrap(),
        1.0,
        0.5,
    );
}

#[test]
fn bhc_and_brt_take_the_wide_path_above_64_points() {
    let dir = scratch("bayes_board", "wide");
    // 120 points in 3 features, three groups, from a fixed integer rule.
    let x: Vec<Vec<f64>> = (0..120u64)
        .map(|i| {
            (0..3u64)
                .map(|j| ((i * 37 + j * 11) % 17) as f64 / 4.0 + 5.0 * (i % 3) as f64)
                .collect()
        })
        .collect();
    write(&dir.join("wide.csv"), &csv("a,b,c", &x));
    let res = clustered(
        &dir,
        &dir.join("wide.csv"),
        &["--methods", "bhc,brt,greedy"],
        "wide",
    );
    same_as_core(
        &res,
        &NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap(),
        1.0,
        0.5,
    );
    // BHC's binary tree gets its HCC energy from the wide path.
    assert!(res.value("bhc", "hcc_energy").is_finite());
}

#[test]
fn a_matrix_is_refused_for_bhc_and_brt_in_one_line() {
    let dir = scratch("bayes_board", "matrix");
    let file = root().join("data/examples/similarities.csv");
    for (flag, m) in [("--similarity", "bhc"), ("--similarity", "greedy,brt")] {
        let err = one_line_error(&cluster_into(&dir, &file, &[flag, "--methods", m]));
        assert!(
            err.contains("need points") && err.contains("drop bhc and brt"),
            "{err}"
        );
    }
    let err = one_line_error(&cluster_into(
        &dir,
        &root().join("data/examples/exports/eurodist_write_csv.csv"),
        &["--distance", "--methods", "bhc"],
    ));
    assert!(err.contains("need points"), "{err}");
    assert!(!dir.join("similarities.toml").exists() && !dir.join("similarities").exists());
}
