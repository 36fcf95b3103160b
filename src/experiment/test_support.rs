//! Helpers for the kinds' end-to-end tests (test builds only): scratch folders, the configs of
//! `configs/` rewritten to run there, a run whose figures are redrawn and compared byte for
//! byte, `check` with every verdict passing, and config errors.

use super::config::parse_in;
use super::{check_results, plot_results, run_config, Outcome, Registry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The crate's folder.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty scratch folder for test `name`.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trellis-kind-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes config `text` to `dir/<name>.toml`, with `{out}` replaced by `dir/results` and
/// `{data}` by the crate's `data/` folder; returns its path.
pub fn write_config(dir: &Path, name: &str, text: &str) -> PathBuf {
    let text = text
        .replace("{out}", &dir.join("results").display().to_string())
        .replace("{data}", &crate_dir().join("data").display().to_string());
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `configs/<file>` copied into `dir`, writing its results into `dir/results` and reading its
/// data from the crate's `data/` folder; returns the copy's path.
pub fn config_in(dir: &Path, file: &str) -> PathBuf {
    let text = std::fs::read_to_string(crate_dir().join("configs").join(file)).unwrap();
    let text = text
        .replace("output_dir = \"../results\"", "output_dir = \"{out}\"")
        .replace("\"../data/", "\"{data}/");
    write_config(dir, file.trim_end_matches(".toml"), &text)
}

/// The figures (PNG and SVG) of results folder `dir`, by name.
fn figures(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "png" || x == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Runs `cfg` (forced), then redraws its figures from the tables with `plot` and asserts they
/// are byte-identical to the ones the run drew; returns the results folder.
pub fn run_and_replot(cfg: &Path) -> PathBuf {
    let dir = match run_config(cfg, true).unwrap() {
        Outcome::Written(d) | Outcome::UpToDate(d) => d,
    };
    let drawn = figures(&dir);
    assert!(!drawn.is_empty(), "the run drew no figure");
    for name in drawn.keys() {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let written = plot_results(&dir).unwrap();
    let images = written
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "png" || x == "svg"))
        .count();
    assert_eq!(images, drawn.len(), "plot drew other figures");
    let redrawn = figures(&dir);
    assert_eq!(
        drawn.keys().collect::<Vec<_>>(),
        redrawn.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &drawn {
        assert!(&redrawn[name] == bytes, "{name} differs when redrawn");
    }
    dir
}

/// The verdicts on the tables of `dir` as they are, without the check that they are the run's
/// own (which `check` makes first): for tests of how verdicts are recomputed from edited tables.
pub fn verdicts_of_edited(dir: &Path) -> Vec<crate::experiment::check::Verdict> {
    let results = crate::experiment::Results::open(dir).unwrap();
    let kind =
        crate::experiment::kind_of(&crate::experiment::Registry::builtin(), &results).unwrap();
    crate::experiment::check::check_results(kind, &results).unwrap()
}

/// Checks results folder `dir` against its kind's expected numbers; asserts every verdict
/// passed and returns how many there were.
pub fn assert_checks_pass(dir: &Path) -> usize {
    let verdicts = check_results(dir).unwrap();
    let failed: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.passed)
        .map(|v| v.line())
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    verdicts.len()
}

/// The one-line error the config `text` gives (it must be refused).
pub fn config_error(text: &str) -> String {
    match parse_in(&Registry::builtin(), text, &crate_dir().join("configs")) {
        Ok(_) => panic!("config accepted:\n{text}"),
        Err(e) => {
            let msg = e.to_string();
            assert_eq!(msg.lines().count(), 1, "not one line: {msg}");
            msg
        }
    }
}
