//! The pythia_jets kind: the smoke config end to end (figures redrawn byte for byte, every
//! check passing), its exact numbers against enumeration of every tree, the λ choices, and
//! one-line config errors.

use super::compare::compare;
use super::run::log_grid;
use crate::data::ginkgo::JetDataset;
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, crate_dir, run_and_replot, scratch,
    write_config,
};
use crate::model::GinkgoModel;
use crate::subset::Subset;
use crate::tree::Tree;
use std::path::Path;

/// The jets of `data/pythia/<file>` by name.
fn jets_of(file: &str) -> std::collections::BTreeMap<String, crate::data::ginkgo::Jet> {
    JetDataset::load(&crate_dir().join("data/pythia").join(file))
        .unwrap()
        .jets
        .into_iter()
        .map(|j| (j.name.clone(), j))
        .collect()
}

/// The smoke run: every figure drawn and redrawn identically, every check passing, the methods
/// at the evidence fit's λ, and for every jet of 6 or 7 leaves, log Z, the number of finite
/// trees, the MAP and the truth's posterior and rank equal to enumeration of all its trees.
#[test]
fn smoke_config_runs_and_its_exact_numbers_match_enumeration() {
    let dir = scratch("pythia_jets_smoke");
    let res = run_and_replot(&config_in(&dir, "pythia_jets_smoke.toml"));
    for f in [
        "truth_recovery",
        "truth_rank",
        "lambda_scan",
        "gap_to_map",
        "recovery_by_size",
        "recovery_by_size_large",
    ] {
        assert!(res.join(format!("{f}.png")).exists() && res.join(format!("{f}.svg")).exists());
    }
    assert!(assert_checks_pass(&res) > 100);

    let fit = read_parquet(&res.join("lambda_fit.parquet")).unwrap();
    let (fset, fmethod) = (str_column(&fit, "set").unwrap(), str_column(&fit, "method").unwrap());
    let (flambda, fchosen) = (
        f64_column(&fit, "lambda").unwrap(),
        f64_column(&fit, "lambda_chosen").unwrap(),
    );
    let evidence = |set: &str| {
        let i = (0..fit.height())
            .find(|&i| fset[i] == set && fmethod[i] == "evidence")
            .unwrap();
        assert_eq!(flambda[i], fchosen[i]);
        flambda[i].unwrap()
    };
    // The hadron set has no truth fit, said in the table.
    let k = (0..fit.height())
        .find(|&i| fset[i] == "hadron" && fmethod[i] == "truth")
        .unwrap();
    assert_eq!(flambda[k], None);
    assert_eq!(str_column(&fit, "note").unwrap()[k], "no truth trees");

    let e = read_parquet(&res.join("exact.parquet")).unwrap();
    let (set, name) = (str_column(&e, "set").unwrap(), str_column(&e, "jet").unwrap());
    let n = u64_column(&e, "n_leaves").unwrap();
    let lambda = f64_column(&e, "lambda").unwrap();
    let (log_z, map) = (
        f64_column(&e, "log_z").unwrap(),
        f64_column(&e, "map_log_likelihood").unwrap(),
    );
    let finite = u64_column(&e, "n_trees_finite").unwrap();
    let (post, rank) = (
        f64_column(&e, "truth_posterior").unwrap(),
        u64_column(&e, "truth_rank").unwrap(),
    );
    let forbidden = u64_column(&e, "truth_forbidden").unwrap();
    let files = [("parton", jets_of("pythia_parton.json")), ("hadron", jets_of("pythia_hadron.json"))];
    let (mut enumerated, mut forbidden_seen) = (0, 0);
    for i in 0..e.height() {
        assert_eq!(lambda[i], Some(evidence(&set[i])));
        if n[i].unwrap() > 7 {
            continue;
        }
        let jet = &files.iter().find(|(s, _)| *s == set[i]).unwrap().1[&name[i]];
        let m = GinkgoModel::new(jet.leaves.clone(), jet.t_cut, lambda[i].unwrap()).unwrap();
        let all = Tree::enumerate_all(Subset::full(jet.n_leaves)).unwrap();
        let scores: Vec<f64> = all.iter().map(|t| t.log_likelihood(&m)).collect();
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = best + scores.iter().map(|s| (s - best).exp()).sum::<f64>().ln();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(log_z[i].unwrap(), z), "{}: log Z", name[i]);
        assert_eq!(map[i].unwrap(), best, "{}: MAP", name[i]);
        let n_finite = scores.iter().filter(|s| s.is_finite()).count() as u64;
        assert_eq!(finite[i], Some(n_finite));
        if let Some(t) = jet.truth() {
            let l = t.log_likelihood(&m);
            if l == f64::NEG_INFINITY {
                forbidden_seen += 1;
                assert_eq!((forbidden[i], post[i], rank[i]), (Some(1), Some(0.0), None));
            } else {
                assert!(close(post[i].unwrap(), (l - z).exp()), "{}", name[i]);
                let above = scores.iter().filter(|&&s| s > l + 1e-9 * l.abs()).count();
                assert_eq!(rank[i], Some(above as u64 + 1), "{}: rank", name[i]);
            }
        }
        enumerated += 1;
    }
    assert!(enumerated >= 20, "{enumerated} jets enumerated");
    assert!(forbidden_seen >= 1, "no forbidden truth tree among the small jets");

    // The per-method comparisons are those of the trees the table holds.
    let t = read_parquet(&res.join("jets.parquet")).unwrap();
    let (tset, tjet, method) = (
        str_column(&t, "set").unwrap(),
        str_column(&t, "jet").unwrap(),
        str_column(&t, "method").unwrap(),
    );
    let newick = str_column(&t, "tree_newick").unwrap();
    let (rec, lund) = (
        f64_column(&t, "truth_recovered").unwrap(),
        f64_column(&t, "lund_fraction").unwrap(),
    );
    let mut compared = 0;
    for i in (0..t.height()).filter(|&i| tset[i] == "parton" && method[i] != "truth") {
        let jet = &files[0].1[&tjet[i]];
        let c = compare(
            &Tree::from_newick(&newick[i]).unwrap(),
            &jet.truth().unwrap(),
            &jet.leaves.iter().map(|p| p[0]).collect::<Vec<_>>(),
        );
        assert_eq!((rec[i], lund[i]), (c.recovered, c.lund_fraction()), "{}", tjet[i]);
        compared += 1;
    }
    // Every method but the truth on each of the 24 jets.
    assert_eq!(compared, 24 * 15);
}

fn small_config(dir: &Path, body: &str) -> std::path::PathBuf {
    write_config(
        dir,
        "small",
        &format!(
            r#"
[experiment]
kind = "pythia_jets"
name = "small"
seed = 1
output_dir = "{{out}}"
[pythia_jets]
scan_points = 3
min_leaves = 6
max_leaves = 7
{body}
[[pythia_jets.sets]]
name = "parton"
path = "{{data}}/pythia/pythia_parton.json"
max_jets = 5
"#
        ),
    )
}

/// `lambda = "truth"` and a number: the methods run at that λ; the truth fit is recorded.
#[test]
fn lambda_can_be_the_truth_fit_or_a_number() {
    let dir = scratch("pythia_jets_lambda");
    for (body, want) in [("lambda = \"truth\"", None), ("lambda = 2.5", Some(2.5))] {
        let res = run_and_replot(&small_config(&dir, body));
        let fit = read_parquet(&res.join("lambda_fit.parquet")).unwrap();
        let method = str_column(&fit, "method").unwrap();
        let (l, chosen) = (
            f64_column(&fit, "lambda").unwrap(),
            f64_column(&fit, "lambda_chosen").unwrap(),
        );
        let truth = l[method.iter().position(|m| m == "truth").unwrap()].unwrap();
        let want = want.unwrap_or(truth);
        assert!(chosen.iter().all(|c| *c == Some(want)));
        let e = read_parquet(&res.join("exact.parquet")).unwrap();
        assert!(f64_column(&e, "lambda").unwrap().iter().all(|c| *c == Some(want)));
        assert_eq!(e.height(), 5);
        assert_checks_pass(&res);
    }
}

#[test]
fn config_errors_are_one_line_and_name_the_key() {
    let head = "[experiment]\nkind = \"pythia_jets\"\nname = \"p\"\nseed = 1\n";
    let set = "[[pythia_jets.sets]]\nname = \"parton\"\npath = \"../data/pythia/pythia_parton.json\"\n";
    for (body, want) in [
        ("[pythia_jets]\nsets = []\n".to_string(), "pythia_jets.sets is empty"),
        (format!("[pythia_jets]\nlambda = \"map\"\n{set}"), "pythia_jets.lambda"),
        (format!("[pythia_jets]\nlambda = -1.0\n{set}"), "pythia_jets.lambda"),
        (format!("[pythia_jets]\nlambda_range = [5.0, 1.0]\n{set}"), "pythia_jets.lambda_range"),
        // A rate is held to a jets file's range for lam (one rule for both).
        (
            format!("[pythia_jets]\nlambda_range = [1e-300, 1e300]\n{set}"),
            "pythia_jets.lambda_range = [1e-300, 1e300] must satisfy 1e-100 <= low < high <= 1e100",
        ),
        (
            format!("[pythia_jets]\nlambda = 1e308\n{set}"),
            "pythia_jets.lambda = 1e308 must be between 1e-100 and 1e100",
        ),
        (format!("[pythia_jets]\nscan_points = 1\n{set}"), "pythia_jets.scan_points"),
        (format!("[pythia_jets]\nrank_cap = 0\n{set}"), "pythia_jets.rank_cap"),
        (format!("[pythia_jets]\nmax_leaves = 30\n{set}"), "max_leaves"),
        // Above the full trellis's 18 only with full_max_leaves, itself at most 18.
        (
            format!("[pythia_jets]\nmax_leaves = 20\n{set}"),
            "pythia_jets.max_leaves = 20 is above 18, the full trellis's limit here: set pythia_jets.full_max_leaves",
        ),
        (
            format!("[pythia_jets]\nmax_leaves = 20\nfull_max_leaves = 19\n{set}"),
            "pythia_jets.full_max_leaves = 19 must be between 2 and 18",
        ),
        (format!("[pythia_jets]\nfull_max_leaves = 1\n{set}"), "full_max_leaves = 1"),
        (format!("[pythia_jets]\nholdout = \"yes\"\n{set}"), "holdout"),
        (format!("[pythia_jets]\nmin_leaves = 9\nmax_leaves = 8\n{set}"), "min_leaves"),
        (format!("[pythia_jets]\nbeam_size = 0\n{set}"), "pythia_jets.beam_size"),
        (format!("[pythia_jets]\nkt = \"durham\"\n{set}"), "kt"),
        (format!("[pythia_jets]\nlamda = 2.0\n{set}"), "lamda"),
        (format!("[pythia_jets]\n{set}max_jets = 0\n"), "max_jets"),
        (format!("[pythia_jets]\n{set}{}", set), "twice"),
        (format!("[pythia_jets]\n{}", set.replace("parton\"", "Parton set\"")), "sets[0].name"),
        (String::new(), "needs a [pythia_jets] section"),
        ("[jets]\nsource = \"generate\"\n".to_string(), "unknown field `jets`"),
    ] {
        let err = config_error(&format!("{head}{body}"));
        assert!(err.contains(want), "{body:?}: {err}");
    }
}

/// A set without truth trees cannot give the truth fit's λ: a one-line error before any output.
#[test]
fn the_truth_fit_needs_truth_trees() {
    let dir = scratch("pythia_jets_no_truth");
    let cfg = small_config(
        &dir,
        "lambda = \"truth\"\n[[pythia_jets.sets]]\nname = \"hadron\"\npath = \"{data}/pythia/pythia_hadron.json\"\nmax_jets = 2",
    );
    let err = crate::experiment::run_config(&cfg, true).unwrap_err().to_string();
    assert!(err.contains("\"hadron\" has none") && !err.contains('\n'), "{err}");
    assert!(!dir.join("results/small").exists());
}

#[test]
fn the_grid() {
    let g = log_grid([0.05, 50.0], 4);
    assert_eq!((g[0], g[3]), (0.05, 50.0));
    assert!((g[1] - 0.5).abs() < 1e-12 && (g[2] - 5.0).abs() < 1e-12);
}
