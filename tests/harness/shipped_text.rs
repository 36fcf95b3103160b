//! The text a reader gets (the READMEs, the catalog `list` and the report show, the configs, the
//! data notes, and every string in the binary) names nothing a reader cannot follow: no issue
//! numbers, no paths into the workplace's shared folder, no "the spec" or "the brief".

use crate::common::{exe, root};
use std::path::{Path, PathBuf};

/// What a reader cannot follow, as (what, needle) pairs matched case-insensitively, plus issue
/// numbers ("issue 13", "issue #13"), found by [`issue_number`].
const INTERNAL: [(&str, &str); 8] = [
    ("a path into the shared folder", "shared/data"),
    ("a path into the shared folder", "shared/specs"),
    ("a path into the shared folder", "shared/papers"),
    (
        "a reference to a brief the reader does not have",
        "the brief",
    ),
    (
        "a section of a specification the reader does not have",
        "spec §",
    ),
    ("a specification the reader does not have", "spec's "),
    ("a task the reader has not seen", "the issue's"),
    ("a task the reader has not seen", "issue goal"),
];

/// The first "commit 1a2b3c4" (a commit hash, 7 to 40 hex digits) in `lower`, if any.
fn commit_hash(lower: &str) -> Option<String> {
    lower.match_indices("commit ").find_map(|(k, m)| {
        let hex: String = lower[k + m.len()..]
            .chars()
            .take_while(|c| c.is_ascii_hexdigit())
            .collect();
        let next = lower[k + m.len() + hex.len()..].chars().next();
        ((7..=40).contains(&hex.len())
            && hex.chars().any(|c| c.is_ascii_digit())
            && !next.is_some_and(|c| c.is_ascii_alphanumeric()))
        .then(|| format!("commit {hex}"))
    })
}

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
    if let Some(c) = commit_hash(&lower) {
        out.push(format!("{name}: a commit hash ({c:?})"));
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
    shipped.extend(files(&r.join("docs"), &[".md"]));
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
    assert!(!problems("t", "as the spec's example").is_empty());
    assert_eq!(problems("t", "following the spec.").len(), 1);
    assert!(problems("t", "the species and the spectrum").is_empty());
    assert_eq!(problems("t", "issue #7").len(), 1);
    assert!(problems("t", "the issues of a file, 13 of them; shared/smallsort.rs").is_empty());
    assert_eq!(problems("t", "as of commit 4675473 (the search)").len(), 1);
    assert!(problems("t", "commit deadbeef and commit abc1234x").is_empty());
    assert_eq!(problems("t", "(spec §2.9)").len(), 1);
    assert_eq!(problems("t", "within the issue's 10 minutes").len(), 1);
}

/// The READMEs a reader gets: the top-level one, the pages of `docs/` and every experiment's.
fn readmes() -> Vec<PathBuf> {
    let r = root();
    let mut out = vec![r.join("README.md")];
    out.extend(
        files(&r.join("docs"), &[".md"])
            .into_iter()
            .filter(|p| p.parent() == Some(r.join("docs").as_path())),
    );
    out.extend(
        files(&r.join("experiments"), &["README.md"])
            .into_iter()
            .filter(|p| p.parent().and_then(Path::parent) == Some(r.join("experiments").as_path())),
    );
    out
}

/// Every `src/...` path in `text` (a word starting with `src/`, or a whole
/// `crates/<crate>/src/...` path; placeholders such as `src/experiment/<kind>/` and globs are
/// skipped), trailing punctuation removed.
fn src_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let in_path = |c: char| c.is_alphanumeric() || "/_.-".contains(c);
    for (k, _) in text.match_indices("src/") {
        let start = text[..k]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| in_path(c))
            .last()
            .map_or(k, |(i, _)| i);
        if start != k && !text[start..].starts_with("crates/") {
            continue;
        }
        let word: String = text[start..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || "/_.-<>*{}".contains(*c))
            .collect();
        if word.contains(['<', '>', '*', '{', '}']) {
            continue;
        }
        out.push(word.trim_end_matches(['.', ',', ':', ';']).to_string());
    }
    out
}

#[test]
fn every_src_path_the_readmes_name_exists() {
    let r = root();
    let mut missing = Vec::new();
    let mut n = 0;
    for p in readmes() {
        let text = std::fs::read_to_string(&p).unwrap();
        for path in src_paths(&text) {
            n += 1;
            // A bare `src/...` path is the harness's (the repository root) or the core crate's
            // (the harness re-exports the core's modules under the same names).
            if !r.join(&path).exists() && !r.join("crates/trellis-core").join(&path).exists() {
                missing.push(format!(
                    "{}: {path} does not exist",
                    p.strip_prefix(&r).unwrap().display()
                ));
            }
        }
    }
    assert!(n > 50, "only {n} src/ paths found: is the scan broken?");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_src_path_scan_finds_paths_and_skips_placeholders() {
    assert_eq!(
        src_paths(
            "see `src/exact/full.rs`, src/flat/ and src/experiment/<kind>/; python/src/lib.rs, \
             crates/trellis-core/src/simd/."
        ),
        vec![
            "src/exact/full.rs",
            "src/flat/",
            "crates/trellis-core/src/simd/"
        ]
    );
}

/// The line that opens a generated run-time block (followed by the config files it lists) and
/// the line that closes it; `scripts/run_times.py` rewrites what lies between.
const BLOCK_BEGIN: &str = "<!-- run-times: begin ";
const BLOCK_END: &str = "<!-- run-times: end -->";

/// Whether `s` starts with a duration: a number (or a range like "3.95–4.24") and a unit of
/// time, or words such as "a second" ("under a second") or "a minute".
fn starts_with_duration(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let words = [
        "a second",
        "half a second",
        "a minute",
        "a few seconds",
        "a few minutes",
        "an hour",
    ];
    if words.iter().any(|w| lower.starts_with(w)) {
        return true;
    }
    let t = lower.trim_start_matches(['~', '≈']);
    let digits = t
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_digit() || ".,–-".contains(*c))
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    if digits == 0 || !t.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let rest = t[digits..].trim_start();
    [
        "s", "ms", "min", "mins", "minute", "minutes", "second", "seconds", "h", "hour", "hours",
    ]
    .iter()
    .any(|u| {
        rest.strip_prefix(u)
            .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
    })
}

/// A run time written by hand on `line`: a shipped config (`configs/x.toml`, `x.toml` or `` `x` ``)
/// followed within a few words by "about/under/takes/in/(" and a duration. Per-N measurements
/// ("N = 20 in 4.0 s") name no config this way.
fn hand_written_run_time(line: &str, stems: &[String]) -> Option<String> {
    for stem in stems {
        for needle in [format!("{stem}.toml"), format!("`{stem}`")] {
            for (k, _) in line.match_indices(&needle) {
                let after = &line[k + needle.len()..];
                let window: String = after.chars().take(60).collect();
                for (j, _) in window.char_indices() {
                    if starts_with_duration(&window[j..])
                        && window[..j].split_whitespace().count() <= 3
                        && !window[..j].contains("N =")
                    {
                        return Some(format!("{needle}{}", &window[..(j + 8).min(window.len())]));
                    }
                }
            }
        }
    }
    None
}

/// A whole run's time written by hand: a duration just before "on 2 cores" or "wall", or after
/// "whole config" / "config took" / "config takes", or in a cell of a table row of a config.
/// Times per N, per pass, per jet, of builds and goals are not run times of a config.
fn hand_written_whole_run(line: &str) -> Option<String> {
    let lower = line.to_lowercase();
    if line.starts_with("| `configs/") {
        for cell in line.trim().trim_matches('|').split('|').skip(1) {
            let c = cell.trim();
            if starts_with_duration(c) || c == "seconds" || c == "< 1 s" {
                return Some(format!("a table cell {c:?}"));
            }
        }
    }
    for key in ["whole config", "config took", "config takes", "config ran"] {
        if let Some(k) = lower.find(key) {
            let after: String = lower[k + key.len()..].chars().take(40).collect();
            if after
                .char_indices()
                .any(|(j, _)| starts_with_duration(&after[j..]))
            {
                return Some(format!("{key}{after}"));
            }
        }
    }
    let excused = [
        "n = ",
        "per ",
        "pass",
        "build",
        "compil",
        "cargo test",
        "goal",
        "jet",
    ];
    for key in ["on 2 cores", "on two cores", " wall"] {
        for (k, _) in lower.match_indices(key) {
            let before: String = {
                let chars: Vec<char> = lower[..k].chars().collect();
                chars[chars.len().saturating_sub(25)..].iter().collect()
            };
            if before
                .char_indices()
                .any(|(j, _)| starts_with_duration(&before[j..]))
                && !excused.iter().any(|e| lower.contains(e))
            {
                return Some(format!("{before}{key}"));
            }
        }
    }
    None
}

fn config_stems() -> Vec<String> {
    let mut s: Vec<String> = std::fs::read_dir(root().join("configs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
        .collect();
    // Longest first, so "jets_large" is not read as "jets".
    s.sort_by_key(|x| std::cmp::Reverse(x.len()));
    s
}

#[test]
fn run_times_are_generated_from_one_measured_run_not_written_by_hand() {
    use trellis_lab::experiment::run_times::RunTimes;
    let r = root();
    let times = RunTimes::read(&r.join("experiments/run_times.toml")).unwrap();
    let stems = config_stems();
    let mut found = Vec::new();
    let mut blocks = 0;
    let mut tabled: Vec<String> = Vec::new();
    for p in readmes() {
        let name = p.strip_prefix(&r).unwrap().display().to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        let mut inside: Option<Vec<String>> = None;
        for (i, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix(BLOCK_BEGIN) {
                let mut files: Vec<String> = rest
                    .trim_end_matches("-->")
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                if files == ["all"] {
                    files = stems.iter().map(|s| format!("{s}.toml")).collect();
                }
                if files == ["table"] {
                    files = vec!["table".into()];
                }
                assert!(
                    !files.is_empty(),
                    "{name}:{}: a block lists no config",
                    i + 1
                );
                inside = Some(files);
                blocks += 1;
                continue;
            }
            if line == BLOCK_END {
                assert!(
                    inside.take().is_some(),
                    "{name}:{}: an end without a begin",
                    i + 1
                );
                continue;
            }
            match &inside {
                Some(files) if files == &["table"] => {
                    // "| `configs/x.toml` | item | ours | <time> | details |": the fourth cell
                    // is the file's short time, as `list` prints it.
                    if let Some(rest) = line.strip_prefix("| `configs/") {
                        let cells: Vec<&str> = rest.split(" | ").collect();
                        let file = cells[0].trim_end_matches('`');
                        assert!(
                            cells.len() >= 5,
                            "{name}:{}: the row of {file} has no run-time cell",
                            i + 1
                        );
                        assert_eq!(
                            Some(cells[3].to_string()),
                            times.short_of(file),
                            "{name}:{}: the table disagrees with experiments/run_times.toml for {file}: run scripts/run_times.py write",
                            i + 1
                        );
                        tabled.push(file.to_string());
                    } else if line.starts_with("(Wall times") {
                        assert!(
                            line.contains(&times.machine.cpu_model)
                                && line.contains(&times.run.started[..10]),
                            "{name}: the table's machine line is not the file's: run scripts/run_times.py write"
                        );
                    }
                }
                Some(files) => {
                    // "- `configs/x.toml`: <time>" for each listed config, as the file says.
                    if let Some(rest) = line.strip_prefix("- `configs/") {
                        let (file, time) = rest.split_once("`: ").unwrap();
                        assert!(files.iter().any(|f| f == file), "{name}: {file} not listed");
                        assert_eq!(
                            Some(time.to_string()),
                            times.time_of(file),
                            "{name}: the block disagrees with experiments/run_times.toml for {file}: run scripts/run_times.py write"
                        );
                    } else if line.starts_with("(Wall times") {
                        assert!(
                            line.contains(&times.machine.cpu_model)
                                && line.contains(&times.run.started[..10]),
                            "{name}: the block's machine line is not the file's: run scripts/run_times.py write"
                        );
                    }
                }
                None => {
                    if let Some(what) =
                        hand_written_run_time(line, &stems).or_else(|| hand_written_whole_run(line))
                    {
                        found.push(format!("{name}:{}: a run time by hand: {what:?}", i + 1));
                    }
                }
            }
        }
        assert!(inside.is_none(), "{name}: a block without its end line");
    }
    // Every block's configs have a line each (the script writes them all).
    for p in readmes() {
        let text = std::fs::read_to_string(&p).unwrap();
        for line in text.lines().filter(|l| l.starts_with(BLOCK_BEGIN)) {
            let listed = line[BLOCK_BEGIN.len()..].trim_end_matches("-->");
            if listed.trim() == "table" {
                continue;
            }
            let files: Vec<String> = if listed.trim() == "all" {
                stems.iter().map(|s| format!("{s}.toml")).collect()
            } else {
                listed.split_whitespace().map(str::to_string).collect()
            };
            for f in &files {
                assert!(
                    text.contains(&format!("- `configs/{f}`: ")),
                    "{}: the block for {f} has no line: run scripts/run_times.py write",
                    p.display()
                );
            }
        }
    }
    assert!(blocks >= 5, "only {blocks} run-time blocks");
    // The README's table has a row for every config that is not a smoke version.
    for stem in stems.iter().filter(|s| !s.ends_with("_smoke")) {
        let f = format!("{stem}.toml");
        assert!(
            tabled.contains(&f),
            "README.md's table has no row for configs/{f}"
        );
    }
    // The configs' comments: the "# long-running" line states no time, and no line states the
    // config's own run time (times per N, per jet or per method are fine).
    for stem in &stems {
        let text = std::fs::read_to_string(r.join(format!("configs/{stem}.toml"))).unwrap();
        for line in text.lines().filter(|l| l.starts_with('#')) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let long = line.starts_with("# long-running")
                && (0..words.len()).any(|k| starts_with_duration(&words[k..].join(" ")));
            if long
                || hand_written_run_time(line, &stems).is_some()
                || hand_written_whole_run(line).is_some()
            {
                found.push(format!("configs/{stem}.toml: a run time by hand: {line:?}"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_run_time_scan_finds_what_it_looks_for() {
    let stems: Vec<String> = ["jets_large", "jets", "scaling", "sparse"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for bad in [
        "`cargo run --release -- run configs/jets.toml` (about 1 s of compute",
        "runs: `scaling` (8 s), and",
        "**Produced by** `run configs/scaling.toml` (about 8 s) into",
        "configs/jets_large.toml takes 40 s",
        "configs/jets.toml (under a second)",
        "`run configs/sparse.toml` (about half a second) into",
        "`run configs/jets_large.toml` (under a minute on 2 cores)",
    ] {
        assert!(hand_written_run_time(bad, &stems).is_some(), "{bad}");
    }
    for fine in [
        "`configs/scaling.toml` (N = 16–20 in 0.1–4.2 s per jet)",
        "`configs/jets.toml` writes 4430 jets",
        "see `configs/jets.toml`; the trellis takes 0.9 s per thousand jets elsewhere in a long sentence",
    ] {
        assert!(hand_written_run_time(fine, &stems).is_none(), "{fine}");
    }
    for bad in [
        "| `configs/board.toml` | 15 methods | `results/board/` | 3 min 54 s |",
        "| `configs/usps_smoke.toml` | the same code path | seconds |",
        "The whole config took 19 min 50 s on 2 cores.",
        "6 min 8 s wall and 3 min 25 s of CPU",
        "it took about 20 minutes on 2 cores",
    ] {
        assert!(hand_written_whole_run(bad).is_some(), "{bad}");
    }
    for fine in [
        "| `configs/board.toml` | 15 methods × 10 datasets | `results/board/` |",
        "one MPOST2 pass takes 2.2 s on 2 cores",
        "N = 20 in 4.0 s on 2 cores",
        "the first release build takes about 8 minutes on 2 cores",
    ] {
        assert!(hand_written_whole_run(fine).is_none(), "{fine}");
    }
    assert!(starts_with_duration("3.95–4.24 s at"));
    assert!(starts_with_duration("12 min"));
    assert!(!starts_with_duration("12 samples"));
    assert!(!starts_with_duration("5 seeds"));
}

#[test]
fn the_readme_stays_short_and_names_the_two_commands() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: the reference belongs in docs/ (README.md is read in ten minutes)"
    );
    for want in [
        "cargo run --release -- run configs/jets.toml",
        "cargo test --release",
    ] {
        assert!(text.contains(want), "README.md does not name {want:?}");
    }
    // Every page of docs/ the README links to exists, and every page of docs/ is linked from
    // the README or from another page of docs/.
    let docs = root().join("docs");
    let pages: Vec<PathBuf> = files(&docs, &[".md"])
        .into_iter()
        .filter(|p| p.parent() == Some(docs.as_path()))
        .collect();
    for page in &pages {
        let name = page.file_name().unwrap().to_string_lossy().to_string();
        let linked = text.contains(&format!("(docs/{name}"))
            || pages.iter().filter(|o| *o != page).any(|o| {
                std::fs::read_to_string(o)
                    .unwrap()
                    .contains(&format!("]({name}"))
            });
        assert!(
            linked,
            "docs/{name} is linked from neither README.md nor docs/"
        );
    }
    for (k, _) in text.match_indices("](docs/") {
        let target: String = text[k + 2..]
            .chars()
            .take_while(|c| *c != ')' && *c != '#')
            .collect();
        assert!(
            root().join(&target).exists(),
            "README.md links {target}, which does not exist"
        );
    }
}
