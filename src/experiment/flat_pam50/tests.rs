//! The flat_pam50 kind: the real config end to end (tables, figures redrawn byte for byte,
//! expected numbers), and every config and run error.

use super::{BandwidthSetting, FlatPam50, FlatPam50Config};
use crate::experiment::config::parse_in;
use crate::experiment::Experiment;
use crate::experiment::table::{f64_column, read_parquet};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch,
};
use crate::experiment::{run_config, Registry};
use std::path::{Path, PathBuf};

#[test]
fn config_runs_redraws_and_checks() {
    let dir = scratch("flat-run");
    let res = run_and_replot(&config_in(&dir, "flat_pam50.toml"));
    assert!(res.join("map_clustering.txt").exists());
    for f in [
        "fig2_affinity_vs_marginal",
        "fig3_perturb_vs_exact",
        "fig4_affinities",
        "fig5_marginals",
    ] {
        assert!(res.join(format!("{f}.png")).exists() && res.join(format!("{f}.svg")).exists());
    }
    let df = read_parquet(&res.join("flat_pairs.parquet")).unwrap();
    assert_eq!(df.height(), 55, "11 samples, 55 pairs");
    let exact = f64_column(&df, "exact_marginal").unwrap();
    let log = f64_column(&df, "exact_log_marginal").unwrap();
    for (p, l) in exact.iter().zip(&log) {
        let (p, l) = (p.unwrap(), l.unwrap());
        assert!((0.0..=1.0).contains(&p) && (p.ln() - l).abs() < 1e-9);
    }
    assert!(assert_checks_pass(&res) >= 10);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_minimal_config_gets_the_defaults_and_a_path_relative_to_it() {
    let text = "[experiment]\nkind = \"flat_pam50\"\nname = \"f\"\nseed = 1\n[flat_pam50]\npath = \"d\"\n";
    let cfg = parse_in(&Registry::builtin(), text, Path::new("/base")).unwrap();
    assert_eq!(cfg.kind.name(), "flat_pam50");
    let c: FlatPam50Config = cfg.typed().unwrap();
    let f = &c.flat_pam50;
    assert_eq!(f.path, Path::new("/base/d"));
    assert_eq!((f.per_class, f.unlabelled, f.perturb_draws), (2, 1, 1000));
    assert_eq!(f.bandwidth, BandwidthSetting::Named("median".into()));
    assert!(f.centre && f.beta == 1.0);
    assert_eq!(c.methods.max_exact_leaves, 22);
    assert_eq!(
        FlatPam50.inputs(&c),
        vec![
            PathBuf::from("/base/d/pam50_unc232_expr.tsv"),
            PathBuf::from("/base/d/pam50_unc232_labels.tsv")
        ]
    );
}

fn flat_error(section: &str) -> String {
    config_error(&format!(
        "[experiment]\nkind = \"flat_pam50\"\nname = \"f\"\nseed = 1\n{section}"
    ))
}

#[test]
fn config_errors_are_one_line_and_name_the_key() {
    let base = "[flat_pam50]\npath = \"data/pam50\"\n";
    for (extra, needle) in [
        ("bandwidth = \"wide\"\n", "flat_pam50.bandwidth = \"wide\""),
        ("bandwidth = -1.0\n", "flat_pam50.bandwidth = -1"),
        ("bandwidth = 0.0\n", "flat_pam50.bandwidth"),
        ("beta = -1.0\n", "flat_pam50.beta = -1"),
        ("beta = nan\n", "flat_pam50.beta = NaN"),
        ("beta = inf\n", "flat_pam50.beta = inf"),
        ("perturb_draws = 0\n", "flat_pam50.perturb_draws must be at least 1"),
        ("per_class = 0\nunlabelled = 1\n", "at least two samples"),
        ("seeds = 3\n", "unknown field `seeds`"),
        (
            "[methods]\nmax_exact_leaves = 40\n",
            "methods.max_exact_leaves = 40",
        ),
        (
            "[methods]\nbeam = false\n",
            "methods.beam does not apply to experiment.kind = \"flat_pam50\"",
        ),
    ] {
        let e = flat_error(&format!("{base}{extra}"));
        assert!(e.contains(needle), "{needle}: {e}");
    }
    // The old section name and a missing section.
    let e = flat_error("[flat]\npath = \"data/pam50\"\n");
    assert!(e.contains("unknown field `flat`"), "{e}");
    let e = flat_error("");
    assert!(e.contains("needs a [flat_pam50] section"), "{e}");
    let e = flat_error("[flat_pam50]\nbeta = 2.0\n");
    assert!(e.contains("\"path\" is missing"), "{e}");
}

/// The error of `configs/flat_pam50.toml` edited by `edit`, as `main` prints it (the chain of
/// causes on one line); the failed run leaves no results.
fn run_error(edit: &dyn Fn(String) -> String, name: &str) -> String {
    let dir = scratch(name);
    let cfg = config_in(&dir, "flat_pam50.toml");
    std::fs::write(&cfg, edit(std::fs::read_to_string(&cfg).unwrap())).unwrap();
    let e = match run_config(&cfg, true) {
        Ok(o) => panic!("ran: {o:?}"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        !dir.join("results/flat_pam50").exists(),
        "a failed run leaves no results"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

#[test]
fn an_overflowing_beta_is_an_error_naming_the_key() {
    let e = run_error(
        &|t| t.replace("beta = 10.0", "beta = 1e308"),
        "flat-beta",
    );
    assert!(e.contains("flat_pam50.beta = 1e308 is too large"), "{e}");
    assert!(e.contains("lower beta"), "{e}");
}

#[test]
fn a_subsample_beyond_the_exact_limit_is_an_error_naming_the_keys() {
    let e = run_error(
        &|t| t.replace("per_class = 2 ", "per_class = 10 "),
        "flat-large",
    );
    assert!(
        e.contains("methods.max_exact_leaves = 22")
            && e.contains("flat_pam50.per_class or flat_pam50.unlabelled"),
        "{e}"
    );
}
