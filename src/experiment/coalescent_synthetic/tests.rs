use crate::experiment::table::{f64_column, read_parquet, str_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};

#[test]
fn smoke_config_reproduces_the_accepted_run() {
    let dir = scratch("coalescent_smoke");
    let res = run_and_replot(&config_in(&dir, "coalescent_smoke.toml"));
    let df = read_parquet(&res.join("runs.parquet")).unwrap();
    // 1 setting × 3 replicates × 9 methods.
    assert_eq!(df.height(), 27);
    let trees = str_column(&df, "best_tree_newick").unwrap();
    assert!(trees.iter().all(|t| t.ends_with(';')));
    assert!(res.join("table.png").exists() && res.join("truth.parquet").exists());
    // Greedy methods have no evidence estimate; SMC methods have a finite one.
    let ev = f64_column(&df, "log_evidence").unwrap();
    let m = str_column(&df, "method").unwrap();
    for (e, m) in ev.iter().zip(&m) {
        assert_eq!(e.is_some(), !m.contains("greedy"), "{m}");
    }
    // Six tree errors of nine methods against our accepted run.
    // 54 reference numbers and 2 properties.
    assert_eq!(assert_checks_pass(&res), 56);
}

#[test]
fn learning_smoke_config_reproduces_the_accepted_run() {
    let dir = scratch("coalescent_learning_smoke");
    let res = run_and_replot(&config_in(&dir, "coalescent_learning_smoke.toml"));
    let df = read_parquet(&res.join("runs.parquet")).unwrap();
    assert_eq!(df.height(), 10);
    let ell = f64_column(&df, "ell_mae").unwrap();
    assert!(ell
        .iter()
        .all(|v| v.is_some_and(|v| v.is_finite() && v >= 0.0)));
    // Nine errors of five methods, and 2 properties.
    assert_eq!(assert_checks_pass(&res), 47);
}

#[test]
fn the_papers_numbers_stand_beside_ours_by_setting_and_method_name() {
    let dir = scratch("coalescent_paper_columns");
    let cfg = write_config(
        &dir,
        "p",
        &format!(
            "{}output_dir = \"{{out}}\"\n[coalescent_synthetic]\npaper_table = 1\nsettings = [{{ name = \"D1\", n = 6, d = 3 }}]\nreplicates = 1\nmethods = [\"mpost2\", \"greedy\"]\nparticles = 4\n",
            HEAD
        ),
    );
    let res = run_and_replot(&cfg);
    let df = read_parquet(&res.join("summary.parquet")).unwrap();
    let (m, q) = (
        str_column(&df, "method").unwrap(),
        str_column(&df, "measure").unwrap(),
    );
    let paper = f64_column(&df, "paper_mean").unwrap();
    for i in 0..df.height() {
        let expect = if m[i] == "mpost2" && q[i] == "mse_t" {
            Some(0.045)
        } else if m[i] == "greedy" {
            None // Table 1 has no greedy column
        } else {
            paper[i]
        };
        assert_eq!(paper[i], expect, "{} {}", m[i], q[i]);
    }
    assert!(paper.iter().filter(|p| p.is_some()).count() == 6);
    let rt = read_parquet(&res.join("runtime.parquet")).unwrap();
    assert_eq!(f64_column(&rt, "paper_seconds").unwrap()[0], Some(1.98));
    assert!(res.join("table.png").exists());
}

const HEAD: &str = "[experiment]\nkind = \"coalescent_synthetic\"\nname = \"s\"\nseed = 1\n";

fn body(extra: &str) -> String {
    format!(
        "{HEAD}[coalescent_synthetic]\nsettings = [{{ name = \"A\", n = 8, d = 4 }}]\nreplicates = 2\nmethods = [\"mpost2\"]\nparticles = 5\n{extra}"
    )
}

#[test]
fn bad_sections_are_one_line_errors_naming_the_key() {
    for (extra, needle) in [
        (
            "resample_threshold = 2.0\n",
            "coalescent_synthetic.resample_threshold",
        ),
        ("ell = -1.0\n", "coalescent_synthetic.ell"),
        ("noise = nan\n", "coalescent_synthetic.noise"),
        ("paper_table = 4\n", "coalescent_synthetic.paper_table"),
        ("weight_mode = \"fast\"\n", "weight_mode"),
        ("bogus = 1\n", "bogus"),
        (
            "[coalescent_synthetic.learning]\niterations = 5\nburn_in = 5\nell_start = 0.1\n",
            "learning.burn_in",
        ),
        (
            "[coalescent_synthetic.learning]\niterations = 5\nburn_in = 1\nell_start = 0\n",
            "learning.ell_start",
        ),
    ] {
        let e = config_error(&body(extra));
        assert!(e.contains(needle) && !e.contains('\n'), "{extra}: {e}");
    }
    let e = config_error(&body("").replace("n = 8", "n = 2"));
    assert!(e.contains("coalescent_synthetic.settings"), "{e}");
    let e = config_error(
        &body("")
            .replace("n = 8", "n = 2000")
            .replace("particles = 5", "particles = 100000"),
    );
    assert!(e.contains("GiB"), "{e}");
    let e = config_error(&body("").replace("\"mpost2\"", "\"mpost3\""));
    assert!(e.contains("mpost3") && !e.contains('\n'), "{e}");
}
