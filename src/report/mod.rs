//! `trellis-lab report RESULTS_ROOT`: a static HTML report of every results folder, readable
//! offline (no server, no scripts, relative links only, so the folder can be copied).
//!
//! It writes `RESULTS_ROOT/index.html` (one row per results folder: kind, check verdicts,
//! figure count, run time, finish time; the boards' leaderboards linked first) and one page
//! per results folder, `RESULTS_ROOT/report/<name>.html`, with the check verdicts as the
//! paper-vs-ours table (failed first), the leaderboard (Markdown rendered), every figure, the
//! manifest's facts, links to every file, and the full config. The results folders themselves
//! are left untouched (their manifests hash their outputs).
//!
//! Every string from configs, manifests, tables and file names is HTML-escaped and every file
//! name in a link percent-encoded ([`html`]). A damaged manifest or Parquet file becomes an
//! error line on its page and index row, never a failure of the report. All pages are built
//! in memory first and then written, each through a temporary file and a rename, the index
//! last; pages of folders that are gone are removed. Only the report's own files are ever
//! replaced or removed ([`owned`]): a user's `index.html` or `report/notes.html` at a name the
//! report writes is a one-line error before anything is written. Two reports of one folder at
//! once take turns (a lock file, `.report.lock`).
//!
//! ```no_run
//! let summary = trellis_lab::report::write_report(std::path::Path::new("results")).unwrap();
//! println!("wrote {} ({} results folders)", summary.index.display(), summary.folders);
//! ```

pub mod folder;
pub mod html;
pub mod index;
pub mod owned;
pub mod page;

use anyhow::{bail, Context as _, Result};
use folder::{Checks, Entry, PAGES_DIR};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`write_report`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportSummary {
    /// `RESULTS_ROOT/index.html`.
    pub index: PathBuf,
    /// The per-folder pages written, sorted.
    pub pages: Vec<PathBuf>,
    /// Results folders (with a manifest) in the report.
    pub folders: usize,
    /// Subfolders without a manifest, listed as incomplete.
    pub incomplete: usize,
    /// Results folders whose manifest or `checks.parquet` cannot be read.
    pub unreadable: usize,
    /// Results folders with at least one failed check.
    pub failing: usize,
}

/// Writes the report of the results folders under `root` (see the [module docs](self)).
/// Errors: `root` is missing or not a folder, a results folder is named `report`, or a file
/// cannot be written (then nothing of the new report is left behind).
pub fn write_report(root: &Path) -> Result<ReportSummary> {
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => bail!(
            "{} is not a folder; give the folder results are written to (experiment.output_dir, default results)",
            root.display()
        ),
        Err(_) => bail!(
            "results folder {} does not exist; run a config first (e.g. trellis-lab run configs/board_smoke.toml)",
            root.display()
        ),
    }
    // One report of a folder at a time; a second waits for the first.
    let _lock = crate::experiment::safe_fs::lock_own(&root.join(LOCK), "the report's lock", true)?;
    owned::refuse_bad_pages_dir(root)?;
    owned::refuse_foreign_list(root)?;
    remove_dead_temp_pages(root);
    let entries = folder::scan(root)?;
    let root_text = root.display().to_string();
    let ctx = page::Context {
        generated: html::iso_utc(generated_at()),
        program: format!(
            "trellis-lab {} ({})",
            env!("CARGO_PKG_VERSION"),
            crate::experiment::staging::program_hash()
        ),
        root: root_text.trim_end_matches('/').to_string(),
    };
    let pages_dir = root.join(PAGES_DIR);
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut summary = ReportSummary {
        index: root.join("index.html"),
        pages: Vec::new(),
        folders: 0,
        incomplete: 0,
        unreadable: 0,
        failing: 0,
    };
    for e in &entries {
        match e {
            Entry::Results(f) => {
                summary.folders += 1;
                if f.manifest.is_err() || matches!(f.checks, Checks::Error(_) | Checks::Stale(_)) {
                    summary.unreadable += 1;
                }
                if f.checks.counts().is_some_and(|(p, n)| p < n) {
                    summary.failing += 1;
                }
                let path = pages_dir.join(format!("{}.html", f.name));
                files.push((path.clone(), page::folder_page(f, &ctx)));
                summary.pages.push(path);
            }
            Entry::Incomplete { .. } => summary.incomplete += 1,
        }
    }
    files.push((summary.index.clone(), index::index_page(&entries, &ctx)));
    let rel = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let before = owned::Written::read(root);
    let rels: Vec<String> = files.iter().map(|(p, _)| rel(p)).collect();
    before.refuse_foreign(&rels)?;
    std::fs::create_dir_all(&pages_dir)
        .with_context(|| format!("cannot create {}", pages_dir.display()))?;
    // First a list that names every page by its old and its new contents (and the pages to be
    // pruned), so a report stopped while it moves pages into place still knows them all.
    let write_list = |list: &BTreeMap<String, Vec<String>>| {
        crate::experiment::safe_fs::replace_beside(
            &pages_dir.join(owned::LIST),
            owned::list_text(list).as_bytes(),
        )
    };
    let mut interim: BTreeMap<String, Vec<String>> = before
        .listed()
        .into_iter()
        .map(|r| {
            let h = before.hashes(&r);
            (r, h)
        })
        .collect();
    let mut last: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (r, (path, text)) in rels.iter().zip(&files) {
        let entry = interim.entry(r.clone()).or_default();
        if let Ok(h) = crate::experiment::staging::hash_file(path) {
            entry.push(format!("{h:016x}"));
        }
        entry.push(owned::page_hash(text));
        last.insert(r.clone(), vec![owned::page_hash(text)]);
    }
    write_list(&interim)?;
    write_all(&files)?;
    remove_stale_pages(root, &before, &rels);
    write_list(&last)?;
    Ok(summary)
}

/// The generation time: `SOURCE_DATE_EPOCH` if set (reproducible builds), else now.
fn generated_at() -> i64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        })
}

/// For the interrupted-report tests: with `TRELLIS_LAB_TEST_REPORT_PAUSE_MS` set, waits that
/// long after each page is moved into place, saying so on stderr.
fn test_pause() {
    if let Some(ms) = std::env::var("TRELLIS_LAB_TEST_REPORT_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        eprintln!("report: pausing {ms} ms after a page");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// The lock file of a report, in RESULTS_ROOT.
const LOCK: &str = ".report.lock";

/// Checks, before any computation, that a report of `root` could be written once a results
/// folder `name` is added: `name` is not the pages folder's, the pages folder is not a link or
/// a file, and no file the report would write (the index, every folder's page) is a user's.
pub fn check_destination(root: &Path, name: &str) -> Result<()> {
    if name == PAGES_DIR {
        bail!(
            "a results folder named {PAGES_DIR:?} would be where the report puts its pages; choose another name (--name, or experiment.name)"
        );
    }
    if !root.is_dir() {
        return Ok(());
    }
    owned::refuse_bad_pages_dir(root)?;
    owned::refuse_foreign_list(root)?;
    let mut names = folder::result_names(root);
    names.push(name.to_string());
    owned::Written::read(root).refuse_foreign(&owned::page_paths(&names))
}

/// `path` with `.tmp-<this process>` appended (`index.html` -> `index.html.tmp-123`).
fn tmp_of(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".tmp-{}", std::process::id()));
    PathBuf::from(s)
}

/// Writes every file to a temporary file first; only when all are written are they renamed
/// into place, in order (so the index, last, never links to a page not yet there). On an
/// error the temporary files are removed.
fn write_all(files: &[(PathBuf, String)]) -> Result<()> {
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| -> Result<()> {
        for (path, text) in files {
            let tmp = tmp_of(path);
            // Never over anything already at the name (`create_new` follows no link either).
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .with_context(|| {
                    format!("cannot create {} (move away what is there)", tmp.display())
                })?;
            written.push(tmp.clone());
            crate::experiment::signals_register_file(&tmp);
            std::io::Write::write_all(&mut f, text.as_bytes())
                .with_context(|| format!("cannot write {}", tmp.display()))?;
        }
        for (path, _) in files {
            std::fs::rename(tmp_of(path), path)
                .with_context(|| format!("cannot move {} into place", path.display()))?;
            crate::experiment::signals_forget_file(&tmp_of(path));
            test_pause();
        }
        Ok(())
    })();
    if result.is_err() {
        for tmp in &written {
            std::fs::remove_file(tmp).ok();
            crate::experiment::signals_forget_file(tmp);
        }
    }
    result
}

/// Removes the temporary pages of reports that were killed (`*.html.tmp-PID` of a process that
/// is gone, holding the generator line); called under the report's lock.
fn remove_dead_temp_pages(root: &Path) {
    for dir in [root.to_path_buf(), root.join(PAGES_DIR)] {
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in listing.filter_map(|e| e.ok()) {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some((_, pid)) = n.split_once(".html.tmp-") else {
                continue;
            };
            let path = e.path();
            let ours = pid
                .parse::<u32>()
                .is_ok_and(|p| !crate::experiment::safe_fs::process_alive(p))
                && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
                && crate::experiment::staging::read_small(&path, 64 << 20)
                    .is_ok_and(|t| t.contains(owned::GENERATOR_META));
            if ours {
                std::fs::remove_file(&path).ok();
            }
        }
    }
}

/// Removes the report's own pages that this report did not write (folders that are gone): those
/// the last report listed and nobody changed since; where there is no list (a report of an
/// earlier version) nothing is pruned. Also removes the temporary pages of reports that were
/// killed (`*.html.tmp-PID` of a process that is gone, holding the generator line).
fn remove_stale_pages(root: &Path, before: &owned::Written, keep: &[String]) {
    for rel in before.listed() {
        let inside = Path::new(&rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if inside && !keep.contains(&rel) && before.why_not_ours(&rel).is_none() {
            std::fs::remove_file(root.join(&rel)).ok();
        }
    }
    remove_dead_temp_pages(root);
}
