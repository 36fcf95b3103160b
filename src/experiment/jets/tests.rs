//! The jets kind's config: defaults, and one-line errors that name the key.

use super::*;
use crate::experiment::config::parse_in;
use crate::experiment::Registry;
use std::path::Path;

const OK: &str = r#"
    [experiment]
    name = "t"
    seed = 1
    [jets]
    source = "generate"
    n_jets = 3
    min_leaves = 3
    max_leaves = 6
"#;

fn parse(text: &str) -> Result<JetsConfig, String> {
    let cfg = parse_in(&Registry::builtin(), text, Path::new("/base")).map_err(|e| e.to_string())?;
    assert_eq!(cfg.kind.name(), "jets");
    Ok(cfg.typed().unwrap())
}

#[test]
fn a_minimal_config_gets_the_papers_defaults() {
    let c = parse(OK).unwrap();
    assert_eq!(c.jets.leaf_range(), (3, 6));
    assert_eq!(
        c.jets.generator_params(),
        crate::data::ginkgo::GinkgoParams::qcd()
    );
    assert!(c.methods.trellis && c.methods.beam && c.methods.greedy && !c.methods.sparse);
}

#[test]
fn relative_jet_files_are_relative_to_the_config() {
    let c = parse(&OK.replace(
        "source = \"generate\"\n    n_jets = 3",
        "source = \"file\"\n    path = \"j.json\"",
    ))
    .unwrap();
    assert_eq!(c.jets.path.as_deref(), Some(Path::new("/base/j.json")));
    assert_eq!(Jets.inputs(&c), vec![PathBuf::from("/base/j.json")]);
}

#[test]
fn bad_values_are_one_line_errors_naming_the_key() {
    for (from, to, needle) in [
        ("n_jets = 3", "n_jest = 3", "n_jest"),
        ("max_leaves = 6", "max_leaves = 30", "methods.max_exact_leaves"),
        ("n_jets = 3", "n_jets = 0", "jets.n_jets"),
        ("n_jets = 3", "n_jets = 1000000000000", "jets.n_jets"),
        ("source = \"generate\"", "source = \"file\"", "jets.path"),
        ("name = \"t\"", "name = \"a/b\"", "experiment.name"),
        ("max_leaves = 6", "max_leaves = 6\n    t_cut = -1.0", "jets.t_cut"),
        ("max_leaves = 6", "max_leaves = 2", "jets.min_leaves"),
        ("[jets]", "[data]", "data"),
    ] {
        let e = parse(&OK.replace(from, to)).unwrap_err();
        assert!(e.contains(needle), "{to}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = parse(&format!("{OK}\n[methods]\nbeam_size = 0\n")).unwrap_err();
    assert!(e.contains("methods.beam_size"), "{e}");
    let e = parse(&format!("{OK}\n[methods]\nbeam_size = 1000000000\n")).unwrap_err();
    assert!(e.contains("methods.beam_size"), "{e}");
    let e = parse(&format!("{OK}\n[methods]\nmax_exact_leaves = 40\n")).unwrap_err();
    assert!(e.contains("hard limit"), "{e}");
}

/// A user's jets file with the MAP-only trellis beside the full trellis: the same MAP value,
/// bit for bit, and the same tree on every jet.
#[test]
fn map_trellis_runs_on_a_jets_file_and_equals_the_trellis() {
    use crate::experiment::table::{f64_column, read_parquet, str_column};
    use crate::experiment::test_support::{run_and_replot, scratch, write_config};
    let dir = scratch("jets_map_trellis");
    let cfg = write_config(
        &dir,
        "mine",
        r#"
[experiment]
kind = "jets"
name = "mine"
seed = 1
output_dir = "{out}"
[jets]
source = "file"
path = "{data}/ginkgo_jets/truth_9.json"
[methods]
trellis = true
map_trellis = true
beam = false
greedy = false
"#,
    );
    let res = run_and_replot(&cfg);
    let df = read_parquet(&res.join("jets.parquet")).unwrap();
    let (jet, algo, ll, newick) = (
        str_column(&df, "jet").unwrap(),
        str_column(&df, "algorithm").unwrap(),
        f64_column(&df, "log_likelihood").unwrap(),
        str_column(&df, "tree_newick").unwrap(),
    );
    let row = |j: &str, a: &str| {
        (0..jet.len())
            .find(|&i| jet[i] == j && algo[i] == a)
            .unwrap()
    };
    let names: std::collections::BTreeSet<&String> = jet.iter().collect();
    assert_eq!(algo.iter().filter(|a| *a == "map_trellis").count(), 10);
    assert_eq!(names.len(), 10);
    for j in names {
        let (t, m) = (row(j, "trellis"), row(j, "map_trellis"));
        assert_eq!(ll[t].unwrap().to_bits(), ll[m].unwrap().to_bits(), "{j}");
        assert_eq!(newick[t], newick[m], "{j}");
    }
}
