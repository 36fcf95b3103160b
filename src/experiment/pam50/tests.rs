//! The pam50 kind end to end (configs/pam50.toml in a scratch folder), the shared subsample
//! helper, and the config errors.

use crate::data::pam50::Pam50 as Pam50Data;
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::experiment::table::{f64_column, read_parquet, str_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, crate_dir, run_and_replot, scratch,
    write_config,
};
use crate::experiment::{run_config, Outcome};
use crate::model::CorrelationModel;
use crate::tree::Tree;

#[test]
fn figure_8_config_gives_the_accepted_numbers_and_redraws_identically() {
    let dir = scratch("pam50-full");
    let cfg = config_in(&dir, "pam50.toml");
    let res = run_and_replot(&cfg);
    for f in [
        "pam50_raw.png",
        "pam50_raw.svg",
        "pam50_centred.png",
        "pam50_centred.svg",
        "trees.nwk",
        "pam50_weights.parquet",
    ] {
        assert!(res.join(f).is_file(), "{f}");
    }
    let df = read_parquet(&res.join("pam50_trees.parquet")).unwrap();
    let exact = str_column(&df, "n_map_trees_exact").unwrap();
    assert_eq!(exact, ["", "", "1016064000", "", "", "83160"]);
    // Each tree as built is the named canonical tree with its children in another order.
    let names = str_column(&read_parquet(&res.join("pam50_samples.parquet")).unwrap(), "sample")
        .unwrap();
    let built = str_column(&df, "newick_as_built").unwrap();
    let newick = str_column(&df, "newick").unwrap();
    for (b, c) in built.iter().zip(&newick) {
        let t = Tree::from_newick(b).unwrap();
        assert_eq!(&t.to_newick_with(|i| names[i].clone()), c);
    }
    // 18 reference numbers and 4 properties.
    assert_eq!(assert_checks_pass(&res), 22);
    assert_eq!(run_config(&cfg, false).unwrap(), Outcome::UpToDate(res));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_run_writes_every_output_and_a_missing_folder_is_one_line() {
    // Two samples per subtype (purity needs pairs) and two unknown.
    let dir = scratch("pam50-small");
    let text = "[experiment]\nkind = \"pam50\"\nname = \"p\"\nseed = 3\noutput_dir = \"{out}\"\n[pam50]\npath = \"{data}/pam50\"\nper_class = 2\nunlabelled = 2\n";
    let res = run_and_replot(&write_config(&dir, "p", text));
    for f in [
        "pam50_raw.png",
        "pam50_centred.svg",
        "trees.nwk",
        "pam50_samples.parquet",
    ] {
        assert!(res.join(f).exists(), "{f}");
    }
    let df = read_parquet(&res.join("pam50_trees.parquet")).unwrap();
    assert_eq!(df.height(), 6, "3 trees x 2 weightings");
    let e = f64_column(&df, "energy").unwrap();
    // Per weighting: greedy, average linkage, MAP; the MAP energy is the lowest.
    for w in 0..2 {
        let (g, a, m) = (
            e[3 * w].unwrap(),
            e[3 * w + 1].unwrap(),
            e[3 * w + 2].unwrap(),
        );
        assert!(m <= g + 1e-9 && m <= a + 1e-9, "{g} {a} {m}");
    }

    // A missing data folder: one line naming the file, no output.
    let bad = write_config(
        &dir,
        "q",
        &text
            .replace("name = \"p\"", "name = \"q\"")
            .replace("{data}/pam50", "no/such/dir"),
    );
    let err = format!("{:#}", run_config(&bad, true).unwrap_err());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no/such/dir"), "{err}");
    assert!(!dir.join("results/q").exists());

    // A subsample above methods.max_exact_leaves: refused before any output.
    let big = write_config(
        &dir,
        "r",
        &text
            .replace("name = \"p\"", "name = \"r\"")
            .replace("per_class = 2", "per_class = 5"),
    );
    let err = format!("{:#}", run_config(&big, true).unwrap_err());
    assert!(
        err.contains("27 samples, above methods.max_exact_leaves = 22")
            && err.contains("pam50.per_class"),
        "{err}"
    );
    assert!(!dir.join("results/r").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn subsample_helper_checks_the_size_and_names_the_section() {
    let dir = crate_dir().join("data/pam50");
    let (data, idx) = Pam50Data::load_subsample(&dir, 2, 2, 8, 22, "pam50").unwrap();
    assert_eq!(idx, data.stratified_subsample(2, 2, 8));
    assert_eq!(idx.len(), 12);
    let e = Pam50Data::load_subsample(&dir, 0, 1, 8, 22, "flat_pam50")
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 sample(s); raise flat_pam50.per_class"), "{e}");
    let e = Pam50Data::load_subsample(&dir, 2, 2, 8, 10, "pam50")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("12 samples, above methods.max_exact_leaves = 10; lower pam50.per_class"),
        "{e}"
    );
}

#[test]
fn the_trellis_row_is_the_tree_method_trellis_finds() {
    let dir = crate_dir().join("data/pam50");
    let (data, idx) = Pam50Data::load_subsample(&dir, 1, 2, 3, 22, "pam50").unwrap();
    let labels = vec![None; idx.len()];
    let methods = MethodsSection::default();
    for centre in [false, true] {
        let w = data.correlation_weights(&idx, centre).unwrap();
        let rows = super::run::trees(&w, 1.0, &labels, "raw", &methods).unwrap();
        let model = CorrelationModel::new(w.clone(), 1.0).unwrap();
        let problem = Problem {
            name: "pam50",
            model: &model,
            similarities: Some(&w),
            truth: None,
        };
        let f = Method::Trellis.run(&problem, &methods).unwrap().unwrap();
        let ours = rows.iter().find(|r| r.algorithm == super::run::TRELLIS).unwrap();
        assert_eq!(ours.tree.to_newick_as_built(), f.tree.to_newick_as_built());
        assert_eq!(ours.exact.unwrap().log_z, f.exact.unwrap().log_z);
    }
}

#[test]
fn config_errors_name_the_key_and_the_fix() {
    let head = "[experiment]\nkind = \"pam50\"\nname = \"p\"\nseed = 1\n[pam50]\npath = \"../data/pam50\"\n";
    for (extra, key) in [
        ("weights = []\n", "pam50.weights is empty"),
        ("weights = [\"raw\", \"raw\"]\n", "pam50.weights lists \"raw\" twice"),
        ("weights = [\"log\"]\n", "log"),
        ("beta = -1.0\n", "pam50.beta"),
        ("per_class = 0\nunlabelled = 1\n", "pam50.per_class"),
        ("per_class = 0\nunlabelled = 5\n", "pam50.per_class = 0 must be at least 2"),
        ("per_class = 1\n", "pam50.per_class = 1 must be at least 2"),
        ("perclass = 1\n", "perclass"),
        ("[methods]\ngreedy = false\n", "methods.greedy"),
        ("[methods]\nmax_exact_leaves = 40\n", "methods.max_exact_leaves"),
        ("[dasgupta]\nbeta = 1.0\n", "dasgupta"),
    ] {
        let e = config_error(&format!("{head}{extra}"));
        assert!(e.contains(key), "{extra}: {e}");
    }
    let e = config_error("[experiment]\nkind = \"pam50\"\nname = \"p\"\nseed = 1\n");
    assert!(e.contains("[pam50]"), "{e}");
}
