//! Which files of a report are this program's, so the report replaces and prunes only those.
//!
//! Every page carries a generator line ([`GENERATOR_META`]), and the report keeps a list of the
//! pages it wrote with their content hashes, `report/.trellis-report.json`. A file at a name
//! the report writes (`index.html`, `report/<name>.html`) or prunes is the report's only when
//! the list names it with its current contents, byte for byte. Anything else (a user's
//! `index.html`, `report/notes.html`, a page edited after the report wrote it, a link, and every
//! page when the list is missing: a generator line proves the report once wrote a page, not that
//! nobody edited it since) is never replaced or deleted: writing over it is a one-line error
//! before anything is written, and pruning passes it by.

use super::folder::PAGES_DIR;
use crate::experiment::staging::{hash_file, hash_text, read_small};
use anyhow::{bail, Result};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The line in every page's `<head>` that says the report wrote it.
pub const GENERATOR_META: &str = "<meta name=\"generator\" content=\"trellis-lab report\">";

/// The list of the pages the report wrote, in the pages folder.
pub const LIST: &str = ".trellis-report.json";

/// The pages a report wrote last time, as paths relative to RESULTS_ROOT with content hashes
/// (`None`: no readable list, a report of an earlier version or none).
pub struct Written {
    root: PathBuf,
    pages: Option<Map<String, Value>>,
}

impl Written {
    /// Reads the list of the report under `root`.
    pub fn read(root: &Path) -> Written {
        let pages = read_small(&root.join(PAGES_DIR).join(LIST), 16 << 20)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.get("pages")?.as_object().cloned());
        Written {
            root: root.to_path_buf(),
            pages,
        }
    }

    /// The content hashes the list gives `rel` (a report that was stopped while it moved its
    /// pages into place lists both a page's old and new contents).
    pub fn hashes(&self, rel: &str) -> Vec<String> {
        match self.pages.as_ref().and_then(|p| p.get(rel)) {
            Some(Value::String(h)) => vec![h.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|h| h.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The pages listed (relative paths), if a list was read.
    pub fn listed(&self) -> Vec<String> {
        self.pages
            .as_ref()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Why the file at `rel` (relative to RESULTS_ROOT) is not the report's own (`None`: it is,
    /// or nothing is there).
    pub fn why_not_ours(&self, rel: &str) -> Option<String> {
        let path = self.root.join(rel);
        let meta = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => return Some(format!("cannot be inspected ({e})")),
            Ok(m) => m,
        };
        if meta.file_type().is_symlink() {
            return Some("is a symbolic link".into());
        }
        if !meta.is_file() {
            return Some("is not a regular file".into());
        }
        match &self.pages {
            Some(_) => {
                let listed = self.hashes(rel);
                if listed.is_empty() {
                    return Some("was not written by trellis-lab report".into());
                }
                let now = hash_file(&path).ok().map(|h| format!("{h:016x}"));
                (!now.is_some_and(|h| listed.contains(&h))).then(|| {
                    "has changed since trellis-lab report wrote it (a user's edit or file)".into()
                })
            }
            // Without the list no page is provably the report's: its generator line proves only
            // that the report once wrote it, not that nobody edited it since.
            None => Some(format!(
                "is not listed as written by trellis-lab report (the list of the pages it wrote, {PAGES_DIR}/{LIST}, is missing), so it may hold your edits"
            )),
        }
    }

    /// `Err` naming the first of `rels` that is there and not the report's own.
    pub fn refuse_foreign(&self, rels: &[String]) -> Result<()> {
        for rel in rels {
            if let Some(why) = self.why_not_ours(rel) {
                bail!(
                    "{} {why}; the report never replaces a file it did not write: move it away, or write results and report to another folder (--output-dir)",
                    self.root.join(rel).display()
                );
            }
        }
        Ok(())
    }
}

/// The text of the list of `pages`: relative paths, each with the content hashes it may have.
pub fn list_text(pages: &std::collections::BTreeMap<String, Vec<String>>) -> String {
    let map: Map<String, Value> = pages
        .iter()
        .map(|(rel, hashes)| {
            let v = match hashes.as_slice() {
                [one] => json!(one),
                many => json!(many),
            };
            (rel.clone(), v)
        })
        .collect();
    let v = json!({"generator": "trellis-lab report", "pages": map});
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// The content hash of a page's text, as the list records it.
pub fn page_hash(text: &str) -> String {
    hash_text(text.as_bytes())
}

/// `Err` when a file is at the list's name that is not the report's list (it would be
/// replaced).
pub fn refuse_foreign_list(root: &Path) -> Result<()> {
    let path = root.join(PAGES_DIR).join(LIST);
    let meta = match std::fs::symlink_metadata(&path) {
        Err(_) => return Ok(()),
        Ok(m) => m,
    };
    let ours = meta.is_file()
        && read_small(&path, 16 << 20)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|v| {
                v.get("generator").and_then(Value::as_str) == Some("trellis-lab report")
                    && v.get("pages").is_some_and(Value::is_object)
            });
    if !ours {
        bail!(
            "{} is where the report keeps the list of the pages it wrote, but it is not such a list; move it away, or write results and report to another folder (--output-dir)",
            path.display()
        );
    }
    Ok(())
}

/// `Err` when the pages folder under `root` is a link or a file: the report writes and prunes
/// only in a folder of its own.
pub fn refuse_bad_pages_dir(root: &Path) -> Result<()> {
    let dir = root.join(PAGES_DIR);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => bail!(
            "{} is a symbolic link; the report writes (and prunes) its pages only in a folder of its own: remove the link, or write results and report to another folder (--output-dir)",
            dir.display()
        ),
        Ok(m) if !m.is_dir() => bail!(
            "{} is a file where the report puts its pages folder; move it away, or write results and report to another folder (--output-dir)",
            dir.display()
        ),
        _ => Ok(()),
    }
}

/// The relative paths a report of `root` would write when the results folders are `names`:
/// `index.html` and `report/<name>.html` each.
pub fn page_paths(names: &[String]) -> Vec<String> {
    let mut v = vec!["index.html".to_string()];
    v.extend(names.iter().map(|n| format!("{PAGES_DIR}/{n}.html")));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_unedited_or_marked_pages_are_ours() {
        let d = std::env::temp_dir().join(format!("trellis-owned-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(d.join(PAGES_DIR)).unwrap();
        std::fs::write(d.join("index.html"), "<html>my own page</html>").unwrap();
        let page = format!("<!DOCTYPE html>\n<head>{GENERATOR_META}</head>");
        std::fs::write(d.join("report/a.html"), &page).unwrap();
        // No list: no page is provably the report's, not even one with the generator line.
        let w = Written::read(&d);
        assert!(w.why_not_ours("index.html").unwrap().contains("is missing"));
        assert!(w.why_not_ours("report/a.html").is_some());
        assert_eq!(w.why_not_ours("report/absent.html"), None);
        let e = w
            .refuse_foreign(&page_paths(&["a".into()]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("index.html") && e.contains("move it away"),
            "{e}"
        );
        // With a list: listed and unedited only (a copy of a page is not ours).
        std::fs::write(
            d.join("report").join(LIST),
            list_text(&[("report/a.html".to_string(), vec![page_hash(&page)])].into()),
        )
        .unwrap();
        std::fs::write(d.join("report/copy.html"), &page).unwrap();
        let w = Written::read(&d);
        assert_eq!(w.why_not_ours("report/a.html"), None);
        assert!(w.why_not_ours("report/copy.html").is_some());
        std::fs::write(d.join("report/a.html"), format!("{page}<p>my notes</p>")).unwrap();
        assert!(w
            .why_not_ours("report/a.html")
            .unwrap()
            .contains("has changed since"));
        std::fs::remove_dir_all(&d).ok();
    }
}
