//! `trellis-lab report RESULTS_ROOT`: the static HTML report over hand-made results folders
//! (a good one with a failed check and a leaderboard, a malicious one, a damaged one, one with
//! an awkward name, an unfinished one): every page is written, every string escaped, every
//! link relative and pointing at a file that exists.

use crate::common::{bin, one_line_error, scratch, write};
use std::path::{Path, PathBuf};
use trellis_lab::experiment::table::Table;

/// A valid 1×1 PNG.
const PNG: [u8; 68] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x04, 0x00, 0x00, 0x00, 0xb5, 0x1c, 0x0c,
    0x02, 0x00, 0x00, 0x00, 0x0b, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0x00, 0x00,
    0x00, 0x06, 0x00, 0x02, 0x30, 0x81, 0xd0, 0x2f, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
];

const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">\
                   <rect width=\"10\" height=\"10\" fill=\"red\"/></svg>\n";

const MALICIOUS: &str = "<script>alert(1)</script>";

fn manifest(name: &str, kind: &str, config_file: &str, outputs: &[&str]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "config": {"experiment": {"kind": kind, "name": name, "seed": 7, "output_dir": "results"},
                   "extra": {"note": name}},
        "config_file": config_file,
        "run_hash": "0123456789abcdef",
        "seed": 7,
        "crate_version": "0.1.0",
        "program_hash": "0.1.0+feedface",
        "git_revision": "abc123",
        "threads": 2,
        "host_cores": 4,
        "started_unix_seconds": 1_700_000_000,
        "finished_unix_seconds": 1_700_000_042,
        "timings_seconds": {"run": 40.0, "figures": 2.0, "total": 42.0},
        "outputs": outputs,
        "output_bytes": {},
        // A kind-specific fact keyed by the name itself (a malicious key, for `evil`).
        name: name,
    }))
    .unwrap()
}

/// Records the sizes and content hashes of the outputs the manifest of `dir` lists, as a run
/// does, so the report takes the folder as its run wrote it; returns the manifest's hash.
fn seal(dir: &Path) -> String {
    use trellis_lab::experiment::staging::hash_file;
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (mut bytes, mut hashes) = (serde_json::Map::new(), serde_json::Map::new());
    for f in m["outputs"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        let p = dir.join(f);
        bytes.insert(f.into(), std::fs::metadata(&p).unwrap().len().into());
        hashes.insert(f.into(), format!("{:016x}", hash_file(&p).unwrap()).into());
    }
    m["output_bytes"] = bytes.into();
    m["output_hashes"] = hashes.into();
    write(&path, &serde_json::to_string_pretty(&m).unwrap());
    format!("{:016x}", hash_file(&path).unwrap())
}

/// RESULTS_ROOT with: `alpha` (board, a passed and a failed check, leaderboard, figures with
/// awkward names, config file beside RESULTS_ROOT), `evil` (malicious strings everywhere),
/// `corrupt` (damaged manifest and checks), `we ird#%` (awkward folder name), `unfinished` (no
/// manifest), and a staging and a shard folder that must be skipped.
fn fixture(suite: &str) -> PathBuf {
    let base = scratch("report", suite);
    let root = base.join("results");
    std::fs::create_dir_all(base.join("configs")).unwrap();
    write(
        &base.join("configs/alpha.toml"),
        "[experiment]\nname = \"alpha\"\n",
    );

    let alpha = root.join("alpha");
    std::fs::create_dir_all(&alpha).unwrap();
    let outputs = [
        "table.parquet",
        "fig one.png",
        "fig one.svg",
        "b#2?.svg",
        "leaderboard.md",
    ];
    write(
        &alpha.join("manifest.json"),
        &manifest("alpha", "board", "configs/alpha.toml", &outputs),
    );
    Table::new()
        .f64("x", &[Some(1.0)])
        .write_parquet(&alpha.join("table.parquet"))
        .unwrap();
    std::fs::write(alpha.join("fig one.png"), PNG).unwrap();
    write(&alpha.join("fig one.svg"), SVG);
    write(&alpha.join("b#2?.svg"), SVG);
    write(
        &alpha.join("leaderboard.md"),
        "# Leaderboard\n\nCells: **bold** = best; `code` <b>not bold</b>.\n\n## Quality\n\n\
         | method | data <1> |\n|---|---|\n| Trellis | **1.5** |\n| Greedy & co | 2.5 |\n",
    );
    let manifest_hash = seal(&alpha);
    Table::new()
        .str("config", &["alpha", "alpha"])
        .str("id", &["good_id", "bad_id"])
        .str("what", &["the good number", "the <bad> number"])
        .f64("observed", &[Some(1.0), Some(3.0)])
        .f64("expected", &[Some(1.0), Some(2.0)])
        .f64("tolerance", &[Some(0.1), Some(0.5)])
        .f64("difference", &[Some(0.0), Some(1.0)])
        .str("source", &["paper Table 1", "our own accepted run"])
        .str("manifest_hash", &[manifest_hash.clone(), manifest_hash])
        .u64("passed", &[Some(1), Some(0)])
        .write_parquet(&alpha.join("checks.parquet"))
        .unwrap();

    let evil = root.join("evil");
    std::fs::create_dir_all(&evil).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&manifest(
        MALICIOUS,
        "<img src=x onerror=alert(2)>",
        "\"><script>alert(3)</script>.toml",
        &["../../etc/passwd", "<x>.parquet", "/etc/hosts"],
    ))
    .unwrap();
    m["timings_seconds"]["<t>"] = serde_json::json!("<script>");
    m["git_revision"] = serde_json::json!("'\"&<>");
    write(&evil.join("manifest.json"), &m.to_string());
    write(&evil.join("<x>.svg"), SVG);

    let corrupt = root.join("corrupt");
    std::fs::create_dir_all(&corrupt).unwrap();
    write(&corrupt.join("manifest.json"), "{\"config\": <not json");
    std::fs::write(corrupt.join("checks.parquet"), b"PAR1 not really PAR1").unwrap();
    write(&corrupt.join("plot.svg"), SVG);

    let weird = root.join("we ird#%");
    std::fs::create_dir_all(&weird).unwrap();
    write(
        &weird.join("manifest.json"),
        &manifest("we ird#%", "pydt", "configs/none.toml", &["a b.svg"]),
    );
    write(&weird.join("a b.svg"), SVG);
    seal(&weird);

    std::fs::create_dir_all(root.join("unfinished")).unwrap();
    write(&root.join("unfinished/points.parquet"), "partial");
    for skipped in [".alpha.staging-1", "alpha.shard-0-of-2"] {
        std::fs::create_dir_all(root.join(skipped)).unwrap();
        write(
            &root.join(skipped).join("manifest.json"),
            &manifest(skipped, "board", "", &[]),
        );
    }
    root
}

fn report(root: &Path) -> std::process::Output {
    bin()
        .args(["report", root.to_str().unwrap()])
        .output()
        .unwrap()
}

fn report_ok(root: &Path) -> String {
    let out = report(root);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "report failed: {err}");
    err
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every value of attribute `attr` (`href` or `src`) in `html`, as written (quoted).
fn attribute_values(html: &str, attr: &str) -> Vec<String> {
    let needle = format!(" {attr}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&needle) {
        rest = &rest[i + needle.len()..];
        let end = rest.find('"').expect("unterminated attribute");
        out.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    out
}

/// `%XX` sequences decoded (and `&amp;` undone, as a browser reads an attribute).
fn decode(url: &str) -> String {
    let url = url.replace("&amp;", "&");
    let bytes = url.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Asserts that every link and image of the page at `page` is relative, has no scheme, and
/// points at a file that exists (a bare `#id` at an element of the page); returns how many.
fn check_links(page: &Path) -> usize {
    let html = read(page);
    let dir = page.parent().unwrap();
    let mut n = 0;
    for attr in ["href", "src"] {
        for url in attribute_values(&html, attr) {
            n += 1;
            assert!(!url.is_empty(), "{}: empty {attr}", page.display());
            assert!(
                !url.starts_with('/') && !url.contains(':') && !url.starts_with('\\'),
                "{}: {attr}={url:?} is not a relative link",
                page.display()
            );
            for c in [' ', '<', '>', '"', '\''] {
                assert!(
                    !url.contains(c),
                    "{}: {url:?} is not encoded",
                    page.display()
                );
            }
            let (path, fragment) = url.split_once('#').unwrap_or((&url, ""));
            if path.is_empty() {
                assert!(
                    html.contains(&format!("id=\"{fragment}\"")),
                    "{}: no element #{fragment}",
                    page.display()
                );
                continue;
            }
            let target = dir.join(decode(path));
            assert!(
                target.is_file(),
                "{}: {attr}={url:?} points at {}, which does not exist",
                page.display(),
                target.display()
            );
            if !fragment.is_empty() {
                assert!(read(&target).contains(&format!("id=\"{fragment}\"")));
            }
        }
    }
    n
}

#[test]
fn report_pages_links_and_escaping() {
    let root = fixture("pages");
    let err = report_ok(&root);
    assert_eq!(
        err.trim(),
        format!(
            "wrote {} (4 results folders)",
            root.join("index.html").display()
        )
    );
    let index = read(&root.join("index.html"));
    for page in ["alpha", "evil", "corrupt", "we%20ird%23%25"] {
        assert!(
            index.contains(&format!("href=\"report/{page}.html\"")),
            "index does not link {page}: {index}"
        );
    }
    let pages_dir = root.join("report");
    let mut pages: Vec<String> = std::fs::read_dir(&pages_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    // The pages, and the list of what the report wrote (it replaces and prunes only those).
    assert_eq!(
        pages,
        [
            ".trellis-report.json",
            "alpha.html",
            "corrupt.html",
            "evil.html",
            "we ird#%.html"
        ]
    );

    // Skipped folders are not listed; the unfinished one is, as incomplete.
    assert!(!index.contains("staging") && !index.contains("shard"));
    assert!(index.contains("unfinished") && index.contains("incomplete"));
    // The board's leaderboard is linked prominently.
    assert!(index.contains("href=\"report/alpha.html#leaderboard\""));
    assert!(index.contains("<span class=\"fail\">1 failed</span>"));

    // Nothing malicious gets through, on any page.
    let evil = read(&pages_dir.join("evil.html"));
    assert!(
        evil.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{evil}"
    );
    assert!(evil.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(evil.contains("&#39;&quot;&amp;&lt;&gt;"));
    assert!(!evil.contains("etc/passwd") && !evil.contains("etc/hosts"));
    for page in pages
        .iter()
        .filter(|p| p.ends_with(".html"))
        .map(|p| pages_dir.join(p))
        .chain([root.join("index.html")])
    {
        let html = read(&page);
        assert!(
            !html.contains("<script"),
            "{}: raw <script>",
            page.display()
        );
        assert!(!html.contains("<img src=x"), "{}", page.display());
        assert!(!html.contains("<x>") && !html.contains("<bad>") && !html.contains("<b>"));
        assert!(check_links(&page) > 0);
    }
    // The odd file name of the evil folder's figure is encoded, not dropped.
    assert!(evil.contains("src=\"../evil/%3Cx%3E.svg\""));

    // The checks: failed first, coloured, summarised; then the leaderboard and figures.
    let alpha = read(&pages_dir.join("alpha.html"));
    assert!(alpha.contains("1 of 2 checks passed"));
    assert!(alpha.contains("<details open><summary>the 2 checks</summary>"));
    let bad = alpha
        .find("<tr class=\"fail\"><td>the &lt;bad&gt; number</td>")
        .expect("failed row with the fail class");
    let good = alpha
        .find("<tr class=\"pass\"><td>the good number</td>")
        .expect("passed row with the pass class");
    assert!(bad < good, "failed checks come first");
    assert!(alpha.contains("our own accepted run") && alpha.contains("paper Table 1"));
    assert!(alpha.contains("<td><strong>1.5</strong></td>"));
    assert!(alpha.contains("<th>data &lt;1&gt;</th>") && alpha.contains("Greedy &amp; co"));
    assert!(alpha.contains("<img src=\"../alpha/b%232%3F.svg\""));
    assert!(
        alpha.contains("<a href=\"../alpha/fig%20one.png\"><img src=\"../alpha/fig%20one.svg\"")
    );
    assert!(alpha.contains("<a href=\"../../configs/alpha.toml\">configs/alpha.toml</a>"));
    assert!(
        alpha.contains("2023-11-14T22:14:02Z"),
        "finished time in UTC"
    );
    assert!(alpha.contains("href=\"../alpha/table.parquet\""));
    assert!(alpha.contains("kind <strong>board</strong>: every method on every dataset"));

    // Damaged files: an error line on the page and the index row, the rest still shown.
    let corrupt = read(&pages_dir.join("corrupt.html"));
    assert!(corrupt.contains("class=\"error\">manifest.json cannot be read"));
    // Its stored verdicts are not shown: they cannot be tied to a run.
    assert!(corrupt.contains("No verdicts shown: the manifest cannot be read"));
    assert!(corrupt.contains("src=\"../corrupt/plot.svg\""));
    assert!(index.contains("manifest.json cannot be read"));
    assert!(index.contains("stale: see its page"));

    // Not checked: the hint; a missing config file is not linked.
    let weird = read(&pages_dir.join("we ird#%.html"));
    assert!(weird.contains("Not checked (run <code>trellis-lab check"));
    assert!(!weird.contains("href=\"../../configs/none.toml\""));
    std::fs::remove_dir_all(root.parent().unwrap()).ok();
}

#[test]
fn report_is_deterministic_and_removes_stale_pages() {
    let root = fixture("rerun");
    let stamp = |root: &Path| {
        let out = bin()
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .args(["report", root.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success());
        read(&root.join("index.html"))
    };
    let first = stamp(&root);
    let alpha = read(&root.join("report/alpha.html"));
    let second = stamp(&root);
    assert_eq!(first, second);
    assert_eq!(alpha, read(&root.join("report/alpha.html")));
    assert!(first.contains("Generated 2023-11-14T22:13:20Z"));
    // The report's own folder is not listed as an incomplete results folder.
    assert!(!second.contains(">report<"));

    std::fs::remove_dir_all(root.join("we ird#%")).unwrap();
    report_ok(&root);
    assert!(
        !root.join("report/we ird#%.html").exists(),
        "stale page removed"
    );
    assert!(root.join("report/alpha.html").exists());
    let leftovers: Vec<_> = std::fs::read_dir(root.join("report"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(root.parent().unwrap()).ok();
}

#[test]
fn report_errors_are_one_line() {
    let base = scratch("report", "errors");
    let missing = base.join("nothing here");
    let err = one_line_error(&report(&missing));
    assert!(err.contains("does not exist; run a config first"), "{err}");

    let file = base.join("a file");
    write(&file, "x");
    let err = one_line_error(&report(&file));
    assert!(err.contains("is not a folder"), "{err}");

    // A results folder named like the pages folder: refused, nothing written.
    let root = base.join("results");
    std::fs::create_dir_all(root.join("report")).unwrap();
    write(
        &root.join("report/manifest.json"),
        &manifest("report", "board", "", &[]),
    );
    let err = one_line_error(&report(&root));
    assert!(err.contains("rename that experiment"), "{err}");
    assert!(!root.join("index.html").exists());

    // An empty RESULTS_ROOT is fine: an index with no rows.
    let empty = base.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let err = report_ok(&empty);
    assert!(err.contains("(0 results folders)"), "{err}");
    std::fs::remove_dir_all(&base).ok();
}
