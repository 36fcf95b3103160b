//! Helpers shared by the integration tests: the program, scratch folders, one-line errors and
//! copies of the repository's configs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The program's path.
pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_trellis-lab")
}

/// The program.
pub fn bin() -> Command {
    Command::new(exe())
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `run cfg`.
pub fn run(cfg: &Path) -> Output {
    bin().args(["run", cfg.to_str().unwrap()]).output().unwrap()
}

/// Runs `cfg` and fails the test with the program's stderr if the run failed.
pub fn run_ok(cfg: &Path) {
    let out = run(cfg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether a successful run found its results up to date.
pub fn skipped(out: Output) -> bool {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).contains("nothing to do")
}

/// Writes `text` to `path`.
pub fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// A fresh, empty scratch folder for test `name` of suite `suite`.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trellis-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The error of a failed run: exactly one line on stderr and exit code 1 (not a crash or a
/// signal).
pub fn one_line_error(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "expected exit 1, stderr: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "error should be one line: {err}"
    );
    err
}

/// `configs/<name>.toml` copied into `dir` with absolute data paths, its output in `out`,
/// `threads` set if given, and `edit` applied to its text; written as `dir/<file>`.
pub fn config_copy(
    dir: &Path,
    name: &str,
    out: &Path,
    threads: Option<usize>,
    file: &str,
    edit: impl Fn(String) -> String,
) -> PathBuf {
    let text = std::fs::read_to_string(root().join(format!("configs/{name}.toml"))).unwrap();
    let mut copy = String::new();
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        if key == "output_dir" || (key == "threads" && threads.is_some()) {
            continue;
        }
        copy.push_str(&line.replace("\"../data/", &format!("\"{}/data/", root().display())));
        copy.push('\n');
        if line.trim() == "[experiment]" {
            copy.push_str(&format!("output_dir = \"{}\"\n", out.display()));
            if let Some(t) = threads {
                copy.push_str(&format!("threads = {t}\n"));
            }
        }
    }
    let path = dir.join(file);
    std::fs::write(&path, edit(copy)).unwrap();
    path
}

/// `trellis-lab cluster FILE --output-dir OUT EXTRA...`.
pub fn cluster_into(out: &Path, file: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "cluster".to_string(),
        file.display().to_string(),
        "--output-dir".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    bin().args(&args).output().unwrap()
}
