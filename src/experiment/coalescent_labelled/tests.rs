use super::data::{subset, Labelled};
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};

#[test]
fn smoke_config_reproduces_the_accepted_run() {
    let dir = scratch("usps_smoke");
    let res = run_and_replot(&config_in(&dir, "usps_smoke.toml"));
    let runs = read_parquet(&res.join("runs.parquet")).unwrap();
    // 2 subsets × 4 methods.
    assert_eq!(runs.height(), 8);
    let trees = str_column(&runs, "newick").unwrap();
    assert!(trees.iter().all(|t| t.ends_with(';') && t.contains("_")));
    // Leaves are named <digit>_<row>: every digit appears 5 times in every tree.
    for t in &trees {
        for digit in 0..10 {
            let k = t.matches(&format!("{digit}_")).count();
            assert!(k >= 5, "digit {digit} appears {k} times in {t}");
        }
    }
    let curves = read_parquet(&res.join("curves.parquet")).unwrap();
    assert_eq!(curves.height(), 8 * 50);
    let ari = f64_column(&curves, "ari").unwrap();
    let nc = u64_column(&curves, "n_clusters").unwrap();
    for (a, k) in ari.iter().zip(&nc) {
        let (a, k) = (a.unwrap(), k.unwrap());
        if k == 1 {
            assert_eq!(a, 0.0);
        }
        if k == 50 {
            assert_eq!(a, 1.0);
        }
    }
    // Learning: 3 iterations × 2 fitted methods × 2 subsets, ℓ and noise positive.
    let learning = read_parquet(&res.join("learning.parquet")).unwrap();
    assert_eq!(learning.height(), 12);
    assert!(f64_column(&learning, "ell")
        .unwrap()
        .iter()
        .all(|v| v.is_some_and(|v| v > 0.0)));
    let subsets = read_parquet(&res.join("subsets.parquet")).unwrap();
    assert_eq!(subsets.height(), 100);
    for f in ["ari_curves.png", "table.png", "ari_curves.svg", "table.svg"] {
        assert!(res.join(f).exists(), "{f}");
    }
    // Three scores of four methods, and the AUC gains of MPOST2 and MGREEDY over HC.
    // 14 reference numbers and 2 properties.
    assert_eq!(assert_checks_pass(&res), 16);
}

/// A user's CSV: two well-separated blobs of 6 points each, with an isotropic Φ.
#[test]
fn a_users_csv_with_a_label_column_runs_every_method() {
    let dir = scratch("labelled_csv");
    let mut csv = String::from("name,a,b,c\n");
    for i in 0..12 {
        let (class, off) = if i < 6 { ("left", 0.0) } else { ("right", 50.0) };
        csv.push_str(&format!(
            "{class},{},{},{}\n",
            off + i as f64 * 0.37,
            off - (i as f64 * 0.61).sin(),
            (i * i) as f64 * 0.05
        ));
    }
    std::fs::write(dir.join("points.csv"), csv).unwrap();
    let cfg = write_config(
        &dir,
        "mine",
        &format!(
            "{HEAD}output_dir = \"{{out}}\"\n[coalescent_labelled]\nsubsets = 2\nper_class = 5\nmethods = [\"mpost2\", \"mgreedy\", \"average_linkage\", \"coalescent_prior\"]\nparticles = 3\niterations = 2\n[coalescent_labelled.data]\nsource = \"file\"\npaths = [\"points.csv\"]\nlabel_column = \"name\"\n[coalescent_labelled.covariance]\nkernel = \"isotropic\"\nell = 1.0\nlearn = \"ell\"\n"
        ),
    );
    let res = run_and_replot(&cfg);
    let runs = read_parquet(&res.join("runs.parquet")).unwrap();
    assert_eq!(runs.height(), 8);
    let m = str_column(&runs, "method").unwrap();
    let purity = f64_column(&runs, "purity").unwrap();
    // The blobs are 50 apart: every data-driven method separates them perfectly.
    for (m, p) in m.iter().zip(&purity) {
        if m != "coalescent_prior" {
            assert_eq!(p.unwrap(), 1.0, "{m}");
        }
    }
    let trees = str_column(&runs, "newick").unwrap();
    assert!(trees[0].contains("left_") && trees[0].contains("right_"));
}

#[test]
fn subsets_are_class_balanced_distinct_and_seeded() {
    let points: Vec<Vec<f64>> = (0..30).map(|i| vec![i as f64, (i % 7) as f64]).collect();
    let labels: Vec<String> = (0..30).map(|i| ["10", "9", "x"][i % 3].to_string()).collect();
    // Names that are not all numbers sort as text.
    let text = Labelled::new(points.clone(), labels).unwrap();
    assert_eq!(text.classes, ["10", "9", "x"]);
    let one = Labelled::new(points.clone(), vec!["a".to_string(); 30]).unwrap_err();
    assert!(one.to_string().contains("at least two labels"), "{one}");
    let labels: Vec<String> = (0..30).map(|i| ["10", "9", "2"][i % 3].to_string()).collect();
    let mut dup = points.clone();
    dup.push(points[4].clone());
    let mut dl = labels.clone();
    dl.push(labels[4].clone());
    let data = Labelled::new(dup, dl).unwrap();
    assert_eq!(data.duplicates_removed, 1);
    // Numeric class names in numeric order.
    assert_eq!(data.classes, ["2", "9", "10"]);
    let a = subset(&data, 4, 7, 0).unwrap();
    assert_eq!(a, subset(&data, 4, 7, 0).unwrap());
    assert_ne!(a, subset(&data, 4, 7, 1).unwrap());
    assert_eq!(a.len(), 12);
    let mut seen = a.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 12);
    for (k, chunk) in a.chunks(4).enumerate() {
        assert!(chunk.iter().all(|&i| data.class[i] == k));
    }
    let e = subset(&data, 11, 7, 0).unwrap_err().to_string();
    assert!(e.contains("fewer than per_class = 11"), "{e}");
}

const HEAD: &str = "[experiment]\nkind = \"coalescent_labelled\"\nname = \"l\"\nseed = 1\n";

fn body(data: &str, cov: &str, extra: &str) -> String {
    format!(
        "{HEAD}[coalescent_labelled]\nsubsets = 2\nper_class = 3\nmethods = [\"mpost2\"]\n{extra}\n[coalescent_labelled.data]\n{data}\n[coalescent_labelled.covariance]\n{cov}\n"
    )
}

const USPS: &str = "source = \"usps\"\npaths = [\"../data/usps/usps_train.txt\"]";
const GRID: &str = "kernel = \"matern32_grid\"\nwidth = 16\nheight = 16\nell = 2.0\nnoise = 0.1";

#[test]
fn bad_configs_get_one_line_errors_naming_the_key() {
    for (text, needle) in [
        (body(USPS, GRID, "particles = 0"), "particles"),
        (body(USPS, GRID, "iterations = 100000"), "iterations"),
        (
            body(USPS, GRID, "resample_threshold = 2.0"),
            "resample_threshold",
        ),
        (
            body(USPS, "kernel = \"matern32_grid\"\nell = 2.0\nnoise = 0.1", ""),
            "covariance.width",
        ),
        (
            body(USPS, "kernel = \"isotropic\"\nell = 1.0", ""),
            "covariance.learn",
        ),
        (
            body(USPS, "kernel = \"isotropic\"\nell = -1.0\nlearn = \"ell\"", ""),
            "covariance.ell",
        ),
        (
            body(
                USPS,
                "kernel = \"matern32_grid\"\nwidth = 16\nheight = 16\nell = 2.0\nnoise = 0.0",
                "",
            ),
            "covariance.noise",
        ),
        (
            body("source = \"file\"\npaths = [\"x.csv\"]", GRID, ""),
            "label_column",
        ),
        (
            body("source = \"usps\"\npaths = []", GRID, ""),
            "data.paths",
        ),
        (
            body(USPS, GRID, "").replace("[\"mpost2\"]", "[\"mpost2\", \"mpost2\"]"),
            "twice",
        ),
        (
            body(USPS, GRID, "").replace("[\"mpost2\"]", "[\"hc\"]"),
            "use one of",
        ),
        (body(USPS, GRID, "").replace("per_class = 3", "per_class = 1"), "per_class"),
    ] {
        let e = config_error(&text);
        assert!(e.contains(needle), "{needle}: {e}");
    }
}

#[test]
fn a_grid_that_does_not_match_the_features_is_refused_before_any_output() {
    let dir = scratch("labelled_grid");
    let cfg = write_config(
        &dir,
        "g",
        &body(
            "source = \"usps\"\npaths = [\"{data}/usps/usps_test.txt\"]",
            "kernel = \"matern32_grid\"\nwidth = 8\nheight = 16\nell = 2.0\nnoise = 0.1",
            "",
        )
        .replace("seed = 1\n", "seed = 1\noutput_dir = \"{out}\"\n"),
    );
    let e = crate::experiment::run_config(&cfg, true).unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("8 x 16 = 128 pixels but the points have 256"), "{msg}");
    assert!(!dir.join("results").join("l").exists());
}
