//! Every shipped config (`configs/*.toml`, long-running ones included) loads and validates, its
//! input files exist, and its kind ships expected numbers for it, so that `check` can judge any
//! results folder a user regenerates.

use std::path::PathBuf;
use trellis_lab::experiment::check::expected_for;
use trellis_lab::experiment::config::parse_in;
use trellis_lab::experiment::Registry;

/// Configs whose full run has not been accepted yet (no expected numbers): none may be added
/// without a reason.
const NOT_YET_ACCEPTED: [&str; 0] = [];

#[test]
fn every_shipped_config_loads_and_has_expected_numbers() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs");
    let registry = Registry::builtin();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{} configs", names.len());
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        let cfg =
            parse_in(&registry, &text, &dir).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        assert_eq!(
            cfg.experiment.name,
            stem,
            "{}: experiment.name should match the file name (results/<name>/)",
            path.display()
        );
        for input in cfg.kind.inputs(&cfg.value).unwrap() {
            assert!(
                input.is_file(),
                "{}: missing input {}",
                path.display(),
                input.display()
            );
        }
        let expected = expected_for(cfg.kind, &cfg.experiment.name).unwrap();
        if NOT_YET_ACCEPTED.contains(&stem.as_str()) {
            assert!(
                expected.is_empty(),
                "{stem}: accepted now; remove it from NOT_YET_ACCEPTED"
            );
        } else {
            assert!(
                !expected.is_empty(),
                "{stem}: its kind has no expected numbers for it"
            );
        }
    }
}
