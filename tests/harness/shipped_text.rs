//! The text a reader gets (the READMEs, the catalog `list` and the report show, the configs, the
//! data notes, and every string in the binary) names nothing a reader cannot follow: no issue
//! numbers, no paths into the workplace's shared folder, no "the spec" or "the brief".

use crate::common::{exe, root};
use std::path::{Path, PathBuf};

/// What a reader cannot follow, as (what, needle) pairs matched case-insensitively, plus issue
/// numbers ("issue 13", "issue #13"), found by [`issue_number`].
const INTERNAL: [(&str, &str); 4] = [
    ("a path into the shared folder", "shared/data"),
    ("a path into the shared folder", "shared/specs"),
    ("a path into the shared folder", "shared/papers"),
    (
        "a reference to a brief the reader does not have",
        "the brief",
    ),
];

/// Whether `lower` says "the spec" as a word (not "the species", "the spectrum").
fn the_spec(lower: &str) -> bool {
    lower.match_indices("the spec").any(|(k, m)| {
        !lower[k + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
    })
}

/// The first "issue N" / "issue #N" in `text`, if any.
fn issue_number(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut from = 0;
    while let Some(k) = lower[from..].find("issue") {
        let at = from + k;
        let mut j = at + 5;
        while j < b.len() && (b[j] == b' ' || b[j] == b'#') {
            j += 1;
        }
        if j > at + 5 && j < b.len() && b[j].is_ascii_digit() {
            return Some(String::from_utf8_lossy(&b[at..(j + 3).min(b.len())]).into_owned());
        }
        from = at + 5;
    }
    None
}

/// Every problem of `text` (named `name`), one line each.
fn problems(name: &str, text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out: Vec<String> = INTERNAL
        .iter()
        .filter(|(_, n)| lower.contains(n))
        .map(|(what, n)| format!("{name}: {what} ({n:?})"))
        .collect();
    if the_spec(&lower) {
        out.push(format!(
            "{name}: a reference to a specification the reader does not have (\"the spec\")"
        ));
    }
    if let Some(i) = issue_number(text) {
        out.push(format!("{name}: an issue number ({i:?})"));
    }
    out
}

/// Files under `dir` (recursively) whose name ends with one of `ends`.
fn files(dir: &Path, ends: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if ends
                .iter()
                .any(|x| p.file_name().unwrap().to_string_lossy().ends_with(x))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn shipped_text_names_nothing_a_reader_cannot_follow() {
    let r = root();
    let mut shipped = vec![r.join("README.md")];
    shipped.extend(files(&r.join("experiments"), &[".md", ".toml"]));
    shipped.extend(files(&r.join("configs"), &[".toml"]));
    shipped.extend(files(&r.join("data"), &["README.md"]));
    shipped.extend(files(&r.join("src"), &["expected.toml"]));
    assert!(shipped.len() > 30, "{shipped:?}");
    let mut found = Vec::new();
    for p in &shipped {
        let text = std::fs::read_to_string(p).unwrap();
        found.extend(problems(
            &p.strip_prefix(&r).unwrap().display().to_string(),
            &text,
        ));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_binary_s_strings_name_nothing_a_reader_cannot_follow() {
    let bytes = std::fs::read(exe()).unwrap();
    // Printable runs of 8 or more bytes, as `strings` finds them.
    let text: String = bytes
        .split(|b| !(b.is_ascii_graphic() || *b == b' ' || *b == b'\n'))
        .filter(|run| run.len() >= 8)
        .map(|run| String::from_utf8_lossy(run).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    let found = problems("the binary", &text);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_checks_find_what_they_look_for() {
    assert!(!problems("t", "see Issue 13 and shared/data/x").is_empty());
    assert_eq!(problems("t", "as the spec's example").len(), 1);
    assert_eq!(problems("t", "following the spec.").len(), 1);
    assert!(problems("t", "the species and the spectrum").is_empty());
    assert_eq!(problems("t", "issue #7").len(), 1);
    assert!(problems("t", "the issues of a file, 13 of them; shared/smallsort.rs").is_empty());
}
