//! The dasgupta kind end to end (configs/dasgupta.toml in a temporary folder) and its config
//! errors.

use crate::experiment::config::parse_in;
use crate::experiment::table::{f64_column, read_parquet, str_column};
use crate::experiment::{check_results, plot_results, run_config, Outcome, Registry};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trellis-dasgupta-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `configs/<name>.toml` with its results sent to `dir`.
fn config_into(name: &str, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("configs/{name}.toml"));
    let text = std::fs::read_to_string(src).unwrap().replace(
        "output_dir = \"results\"",
        &format!("output_dir = {:?}", dir.join("results").display().to_string()),
    );
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Every PNG and SVG in `dir`, with its bytes.
fn figures(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png" || e == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn figure_4_config_reproduces_the_paper_and_redraws_identically() {
    let dir = scratch("full");
    let cfg = config_into("dasgupta", &dir);
    let res = match run_config(&cfg, true).unwrap() {
        Outcome::Written(d) => d,
        other => panic!("{other:?}"),
    };
    let drawn = figures(&res);
    let names: Vec<&str> = drawn.iter().map(|(n, _)| n.as_str()).collect();
    for f in [
        "fig4_0.png",
        "fig4_0.svg",
        "fig4_3.svg",
        "cost_ratios.png",
        "cost_ratios.svg",
    ] {
        assert!(names.contains(&f), "{f} missing from {names:?}");
    }
    assert_eq!(drawn.len(), 10, "4 Figure-4 charts and the ratios, PNG + SVG");

    let df = read_parquet(&res.join("dasgupta.parquet")).unwrap();
    assert_eq!(df.height(), 4 + 50);
    let map = f64_column(&df, "map_cost").unwrap();
    let al = f64_column(&df, "average_linkage_cost").unwrap();
    let gr = f64_column(&df, "greedy_cost").unwrap();
    assert!((map[0].unwrap() - 40.08).abs() < 1e-9 && (al[0].unwrap() - 44.08).abs() < 1e-9);
    for i in 0..df.height() {
        let m = map[i].unwrap();
        assert!(m <= al[i].unwrap() + 1e-9 && m <= gr[i].unwrap() + 1e-9, "the MAP is never beaten");
    }
    // The trees as built are the canonical trees, in another order of children.
    for method in ["map", "average_linkage", "greedy"] {
        let canonical = str_column(&df, &format!("{method}_newick")).unwrap();
        let built = str_column(&df, &format!("{method}_newick_as_built")).unwrap();
        for (c, b) in canonical.iter().zip(&built) {
            assert_eq!(&crate::tree::Tree::from_newick(b).unwrap().to_newick(), c);
        }
    }
    let points = read_parquet(&res.join("points.parquet")).unwrap();
    assert_eq!(points.height(), 8 + 8 + 12 + 16 + 50 * 12);

    // `plot` redraws every figure byte for byte from the tables.
    for (name, _) in &drawn {
        std::fs::remove_file(res.join(name)).unwrap();
    }
    plot_results(&res).unwrap();
    assert_eq!(figures(&res), drawn, "figures redrawn from the tables differ");

    let verdicts = check_results(&res).unwrap();
    assert!(verdicts.len() >= 20);
    for v in &verdicts {
        assert!(v.passed, "{}", v.line());
    }
    assert_eq!(run_config(&cfg, false).unwrap(), Outcome::UpToDate(res));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The error of config `text` (a dasgupta config), in one line.
fn error_of(text: &str) -> String {
    let head = "[experiment]\nkind = \"dasgupta\"\nname = \"d\"\nseed = 1\n";
    let msg = match parse_in(&Registry::builtin(), &format!("{head}{text}"), Path::new(".")) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(msg.lines().count(), 1, "{msg}");
    msg
}

const LADDER: &str = "[[dasgupta.adversarial]]\nn_pairs = 4\neps = 0.01\n";
const PLANTED: &str =
    "[dasgupta.planted]\ninstances = 2\ncluster_sizes = [3, 3]\np_in = 0.9\np_out = 0.1\n";

#[test]
fn config_errors_name_the_key_and_the_fix() {
    let ok = format!("[dasgupta]\n{LADDER}{PLANTED}");
    assert!(parse_in(&Registry::builtin(), &format!("[experiment]\nkind = \"dasgupta\"\nname = \"d\"\nseed = 1\n{ok}"), Path::new(".")).is_ok());
    assert!(error_of("[methods]\nmax_exact_leaves = 16\n").contains("[dasgupta]"));
    assert!(error_of("[dasgupta]\n").contains("[[dasgupta.adversarial]]"));
    assert!(error_of(&format!("[dasgupta]\nbeta = 0.0\n{LADDER}")).contains("dasgupta.beta"));
    assert!(error_of(&format!("[dasgupta]\nbata = 1.0\n{LADDER}")).contains("bata"));
    assert!(error_of(&format!("{ok}[jets]\nsource = \"generate\"\n")).contains("jets"));
    let e = error_of(&format!(
        "[methods]\nmax_exact_leaves = 10\n[dasgupta]\n{}",
        LADDER.replace("n_pairs = 4", "n_pairs = 6")
    ));
    assert!(e.contains("methods.max_exact_leaves = 10"), "{e}");
    let e = error_of("[dasgupta]\n[[dasgupta.adversarial]]\nn_pairs = 4\neps = 0.01\nmiddle_bonus = 0.5\n");
    assert!(e.contains("middle_bonus"), "{e}");
    let e = error_of(&format!("[methods]\nmax_exact_leaves = 5\n[dasgupta]\n{PLANTED}"));
    assert!(e.contains("dasgupta.planted") && e.contains("methods.max_exact_leaves"), "{e}");
    let e = error_of(&format!("[dasgupta]\n{}", PLANTED.replace("p_in = 0.9", "p_in = 1.5")));
    assert!(e.contains("dasgupta.planted.p_in"), "{e}");
    let e = error_of(&format!("[dasgupta]\n{}", PLANTED.replace("instances = 2", "instances = 0")));
    assert!(e.contains("dasgupta.planted.instances"), "{e}");
    let e = error_of(&format!("[dasgupta]\n{}", PLANTED.replace("[3, 3]", "[3, 0]")));
    assert!(e.contains("dasgupta.planted.cluster_sizes"), "{e}");
}
