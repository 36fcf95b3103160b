use super::data::{load, subset_rows, DatasetSpec, Format, ModelName};
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, crate_dir, run_and_replot, scratch, write_config,
};
use crate::flat::enumerate::brute_force;
use crate::subset::Subset;
use crate::tree::Tree;
use trellis_core::bhc::exact::labels_of_subsets;
use trellis_core::bhc::greedy::log_f_of_tree;
use trellis_core::bhc::{bhc_greedy, BetaBernoulli, ConjugateModel, DpmEnergy, NormalInverseWishart};
use trellis_core::coalescent::metrics::adjusted_rand_index;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

const TINY: &str = r#"[experiment]
kind = "bhc"
name = "bhc_tiny"
seed = 7
output_dir = "{out}"
threads = THREADS

[bhc]
sizes = [5, 6]
subsets = 2
rose_max_n = 6

[[bhc.datasets]]
name = "iris"
path = "{data}/labelled/iris.csv"
format = "csv"
label_column = "class"
model = "normal_inverse_wishart"
standardize = true

[[bhc.datasets]]
name = "animals33"
path = "{data}/animals33/animals33_features.tsv"
format = "animals33"
model = "beta_bernoulli"
"#;

fn spec(name: &str) -> DatasetSpec {
    let data = crate_dir().join("data");
    let (path, format, model, label) = match name {
        "iris" => (
            data.join("labelled/iris.csv"),
            Format::Csv,
            ModelName::NormalInverseWishart,
            Some("class".to_string()),
        ),
        _ => (
            data.join("animals33/animals33_features.tsv"),
            Format::Animals33,
            ModelName::BetaBernoulli,
            None,
        ),
    };
    DatasetSpec {
        name: name.into(),
        path,
        format,
        label_column: label,
        model,
        standardize: name == "iris",
        strength: None,
        kappa0: None,
        scale: None,
        beta: None,
    }
}

/// Every number of one row of `bhc.parquet` against brute force over all partitions and all
/// binary trees of its points.
fn check_row<M: ConjugateModel>(m: &M, row: usize, t: &polars::prelude::DataFrame, pairs: &[(f64, f64)]) {
    let get = |c: &str| f64_column(t, c).unwrap()[row].unwrap();
    let n = m.n_points();
    let e = DpmEnergy::new(m, 1.0).unwrap();
    let c = e.log_prior_constant();
    let bf = brute_force(&e).unwrap();
    assert!(close(get("log_evidence"), bf.log_z + c), "row {row}");
    let trees = Tree::enumerate_all(Subset::full(n)).unwrap();
    assert_eq!(trees.len(), [1, 1, 1, 3, 15, 105, 945][n]);
    let fs: Vec<f64> = trees.iter().map(|tr| log_f_of_tree(&e, tr)).collect();
    let max = fs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    assert!(close(get("best_log_bound"), max + c), "row {row}");
    let mean = log_sum_exp(&fs) - (fs.len() as f64).ln();
    assert!(close(get("mean_log_bound"), mean + c), "row {row}");
    let g = bhc_greedy(m, 1.0).unwrap();
    assert!(close(get("bhc_log_bound"), g.log_lower_bound()));
    assert!(close(get("tree_trellis_log_bound"), g.log_lower_bound()));
    assert!(close(get("bound_gap"), bf.log_z + c - g.log_lower_bound()));
    // The greedy tree's f is one of the enumerated trees' (it is a binary tree on the points).
    let gf = log_f_of_tree(&e, &g.tree().unwrap());
    assert!(fs.iter().any(|&f| close(f, gf)));
    let ari = adjusted_rand_index(&g.cut_labels(0.5), &labels_of_subsets(n, &bf.map_clustering)).unwrap();
    assert!(close(get("ari_cut_map"), ari), "row {row}");
    // Co-clustering pairs in order (0,1), (0,2), ...: exact by brute force, BHC's own.
    let bp = g.coclustering();
    let (mut max_d, mut sum_d) = (0.0f64, 0.0);
    let ij = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j)));
    let mut k = 0;
    for (i, j) in ij {
        assert!(close(pairs[k].0, bf.pairwise[i][j]), "row {row} pair {i},{j}");
        assert!(close(pairs[k].1, bp[i][j]));
        max_d = max_d.max((bf.pairwise[i][j] - bp[i][j]).abs());
        sum_d += (bf.pairwise[i][j] - bp[i][j]).abs();
        k += 1;
    }
    assert_eq!(k, pairs.len());
    assert!((get("coclustering_max_abs_diff") - max_d).abs() < 1e-9);
    assert!((get("coclustering_mean_abs_diff") - sum_d / k as f64).abs() < 1e-9);
    // Greedy BRT never beats the best rose tree.
    assert!(get("brt_log_p") <= get("best_rose_log_p") + 1e-9);
}

#[test]
fn tiny_run_equals_brute_force_and_is_the_same_at_any_thread_count() {
    let dir = scratch("bhc_tiny");
    let res = run_and_replot(&write_config(&dir, "bhc_tiny", &TINY.replace("THREADS", "0")));
    for f in ["bhc_bound_gap", "bhc_greedy_vs_best", "bhc_coclustering"] {
        assert!(res.join(format!("{f}.png")).exists() && res.join(format!("{f}.svg")).exists());
    }
    let t = read_parquet(&res.join("bhc.parquet")).unwrap();
    assert_eq!(t.height(), 2 * 2 * 2);
    let p = read_parquet(&res.join("coclustering.parquet")).unwrap();
    let (pd, pn, ps) = (
        str_column(&p, "dataset").unwrap(),
        u64_column(&p, "n").unwrap(),
        u64_column(&p, "subset").unwrap(),
    );
    let (pe, pb) = (f64_column(&p, "exact").unwrap(), f64_column(&p, "bhc").unwrap());
    let (ds, n, sub, rows) = (
        str_column(&t, "dataset").unwrap(),
        u64_column(&t, "n").unwrap(),
        u64_column(&t, "subset").unwrap(),
        str_column(&t, "rows").unwrap(),
    );
    for r in 0..t.height() {
        let idx: Vec<usize> = rows[r].split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(idx.len() as u64, n[r].unwrap());
        let loaded = load(&spec(&ds[r])).unwrap();
        let x: Vec<Vec<f64>> = idx.iter().map(|&i| loaded.rows[i].clone()).collect();
        let pairs: Vec<(f64, f64)> = (0..p.height())
            .filter(|&k| pd[k] == ds[r] && pn[k] == n[r] && ps[k] == sub[r])
            .map(|k| (pe[k].unwrap(), pb[k].unwrap()))
            .collect();
        match ds[r].as_str() {
            "iris" => check_row(&NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap(), r, &t, &pairs),
            _ => check_row(&BetaBernoulli::from_data(&x, 2.0).unwrap(), r, &t, &pairs),
        }
    }
    assert_eq!(assert_checks_pass(&res), 8);
    // One thread: the same tables, bit for bit (timings aside).
    let dir1 = scratch("bhc_tiny_1");
    let res1 = run_and_replot(&write_config(&dir1, "bhc_tiny", &TINY.replace("THREADS", "1")));
    let t1 = read_parquet(&res1.join("bhc.parquet")).unwrap();
    for c in ["log_evidence", "bhc_log_bound", "best_log_bound", "ari_cut_map", "brt_log_p"] {
        let (a, b) = (f64_column(&t, c).unwrap(), f64_column(&t1, c).unwrap());
        assert!(a.iter().zip(&b).all(|(x, y)| x.map(f64::to_bits) == y.map(f64::to_bits)), "{c}");
    }
    assert_eq!(str_column(&t1, "rows").unwrap(), rows);
}

#[test]
fn subsets_are_seeded_sorted_and_distinct() {
    let a = subset_rows(2005, 1, 10, 0, 150).unwrap();
    assert_eq!(a, subset_rows(2005, 1, 10, 0, 150).unwrap());
    assert_eq!(a.len(), 10);
    assert!(a.windows(2).all(|w| w[0] < w[1]) && a[9] < 150);
    assert_ne!(a, subset_rows(2005, 1, 10, 1, 150).unwrap());
    assert_ne!(a, subset_rows(2005, 0, 10, 0, 150).unwrap());
    assert_ne!(a, subset_rows(2006, 1, 10, 0, 150).unwrap());
    assert!(subset_rows(1, 0, 34, 0, 33).is_err());
}

#[test]
fn smoke_config_reproduces_the_accepted_run() {
    let dir = scratch("bhc_smoke");
    let res = run_and_replot(&config_in(&dir, "bhc_smoke.toml"));
    let t = read_parquet(&res.join("bhc.parquet")).unwrap();
    assert_eq!(t.height(), 3 * 3);
    assert!(assert_checks_pass(&res) >= 20);
}

const HEAD: &str = "[experiment]\nkind = \"bhc\"\nname = \"b\"\nseed = 1\n";
const IRIS: &str = "[[bhc.datasets]]\nname = \"iris\"\npath = \"../data/labelled/iris.csv\"\nformat = \"csv\"\nmodel = \"normal_inverse_wishart\"\n";

#[test]
fn bad_sections_are_one_line_errors_naming_the_key() {
    let sizes = "[bhc]\nsizes = [8, 9]\n";
    for (body, want) in [
        (String::new(), "needs a [bhc] section"),
        (format!("[bhc]\nsizes = []\n{IRIS}"), "bhc.sizes"),
        (format!("[bhc]\nsizes = [8, 21]\n{IRIS}"), "bhc.sizes"),
        (format!("[bhc]\nsizes = [8, 8]\n{IRIS}"), "twice"),
        (format!("{sizes}subsets = 0\n{IRIS}"), "bhc.subsets"),
        (format!("{sizes}alpha = 0\n{IRIS}"), "bhc.alpha"),
        (format!("{sizes}brt_gamma = 1.5\n{IRIS}"), "bhc.brt_gamma"),
        (format!("{sizes}rose_max_n = 19\n{IRIS}"), "bhc.rose_max_n"),
        (sizes.to_string(), "datasets"),
        (format!("{sizes}{IRIS}strength = 2\n"), "bhc.datasets[0].strength does not apply"),
        (format!("{sizes}{IRIS}kappa0 = -1\n"), "bhc.datasets[0].kappa0 must be positive"),
        (format!("{sizes}{IRIS}{IRIS}"), "used twice"),
        (format!("{sizes}{}", IRIS.replace("\"iris\"", "\"a b\"")), "bhc.datasets[0].name"),
        (format!("{sizes}{}", IRIS.replace("csv\"\n", "animals33\"\nlabel_column = \"c\"\n")), "label_column"),
        (format!("{sizes}heatmap = {{ dataset = \"x\", n = 8 }}\n{IRIS}"), "bhc.heatmap.dataset"),
        (format!("{sizes}heatmap = {{ dataset = \"iris\", n = 7 }}\n{IRIS}"), "bhc.heatmap.n"),
        (format!("{sizes}budget = 3\n{IRIS}"), "unknown field"),
    ] {
        let err = config_error(&format!("{HEAD}{body}"));
        assert!(err.contains(want), "{body:?}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
}
