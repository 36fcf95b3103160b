//! The page of one results folder (`report/<name>.html`), and what every page shares (the
//! stylesheet, the footer). Pages are plain HTML with one inline stylesheet, no scripts, and
//! relative links only.

use super::folder::{kind_of, Check, Checks, Folder};
use super::html::{difference, encode_path, escape, iso_utc, link, markdown_shifted, number};
use serde_json::Value;

/// What every page's footer says.
pub struct Context {
    /// When the report was generated (ISO UTC).
    pub generated: String,
    /// The program that generated it (name, version, program hash).
    pub program: String,
    /// RESULTS_ROOT as given on the command line (for the `check` hint).
    pub root: String,
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}\
h1{margin-bottom:.1em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:.6em 0}\
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}summary{cursor:pointer;color:#3b6fc4}\
.pass{color:#17692a;background:#e6f4ea}.fail{color:#a50e0e;background:#fce8e6}\
.muted{color:#666}.error{color:#a50e0e;font-weight:bold}\
.lead{font-size:1.1em;padding:.5em .8em;background:#eef3fb;border-left:4px solid #3b6fc4}\
figure{display:inline-block;margin:.5em;vertical-align:top;max-width:100%}\
figure img{width:560px;max-width:100%;border:1px solid #ddd;background:#fff}\
figcaption{font-size:.9em;color:#444;text-align:left;max-width:560px}\
pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:40em}\
code{background:#f3f3f3;padding:0 .2em}img.thumb{height:48px;max-width:110px;object-fit:contain;border:1px solid #ddd}\
nav{font-size:.95em}footer{margin-top:2em;font-size:.85em;color:#666}";

/// Check tables longer than this are folded when every check passed.
const FOLD_CHECKS: usize = 50;

/// The keys of a manifest shown in the facts table or elsewhere, not as "other facts".
const KNOWN_KEYS: &[&str] = &[
    "config",
    "data_read",
    "dropped",
    "config_file",
    "config_hash",
    "crate_version",
    "finished_unix_seconds",
    "git_revision",
    "host_cores",
    "output_bytes",
    "output_hashes",
    "outputs",
    "program",
    "program_hash",
    "run_hash",
    "seed",
    "started_unix_seconds",
    "threads",
    "timings_seconds",
];

/// A whole HTML document.
pub(super) fn document(title: &str, body: &str, ctx: &Context) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         {}\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\
         <footer>Generated {} by {}.</footer>\n</body>\n</html>\n",
        super::owned::GENERATOR_META,
        escape(title),
        escape(&ctx.generated),
        escape(&ctx.program)
    )
}

/// A string field of the manifest at a JSON pointer.
fn text_at<'a>(m: Option<&'a Value>, pointer: &str) -> Option<&'a str> {
    m?.pointer(pointer)?.as_str()
}

/// A JSON value as text: strings as they are, anything else as compact JSON, cut at `max`
/// characters.
fn json_text(v: &Value, max: usize) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s
    }
}

/// The run's total seconds (`timings_seconds.total`, else `.run`).
pub(super) fn total_seconds(m: Option<&Value>) -> Option<f64> {
    let t = m?.get("timings_seconds")?;
    t.get("total").or_else(|| t.get("run"))?.as_f64()
}

/// The finish time (ISO UTC) a manifest records.
pub(super) fn finished(m: Option<&Value>) -> Option<String> {
    m?.get("finished_unix_seconds")?.as_i64().map(iso_utc)
}

/// The link from a page in `report/` to file `file` of results folder `name`.
fn file_href(name: &str, file: &str) -> String {
    encode_path(&["..", name, file])
}

/// The one-line description of a kind, if it is a built-in one.
fn about(kind: &str) -> Option<&'static str> {
    crate::experiment::Registry::builtin()
        .get(kind)
        .map(|k| k.about())
}

/// Which paper item a run of a shipped config reproduces, with the paper's citation; for a run
/// whose config differs from the shipped one, which keys differ (its numbers are then not the
/// paper item's). Empty for other runs (your own data).
pub fn reproduces(exp_name: &str, m: Option<&serde_json::Value>) -> String {
    let Some((entry, paper)) = crate::experiment::list::Catalog::builtin().entry(exp_name) else {
        return String::new();
    };
    let mut b = format!(
        "<p class=\"cite\">Reproduces: {}",
        escape(&entry.reproduces)
    );
    if let Some(p) = paper {
        b.push_str(&format!(" &mdash; {}", escape(&p.citation)));
    }
    b.push_str("</p>\n");
    let differs = m
        .and_then(|m| m.get("config"))
        .and_then(|c| crate::experiment::references::differences(exp_name, c))
        .unwrap_or_default();
    if !differs.is_empty() {
        b.push_str(&format!(
            "<p class=\"muted\">This run's config differs from configs/{} in {}: these results are not that paper item's.</p>\n",
            escape(&entry.file),
            escape(&differs.join(", "))
        ));
    }
    b
}

/// The page of one results folder.
pub fn folder_page(f: &Folder, ctx: &Context) -> String {
    let m = f.manifest.as_ref().ok();
    let exp_name = text_at(m, "/config/experiment/name").unwrap_or(&f.name);
    let kind = m.and_then(kind_of).unwrap_or("unknown kind");
    let mut b = String::new();
    b.push_str(&format!(
        "<nav>{} · <a href=\"#checks\">checks</a>{} · <a href=\"#figures\">figures</a> · \
         <a href=\"#manifest\">run</a> · <a href=\"#outputs\">files</a> · \
         <a href=\"#config\">config</a></nav>\n",
        link("../index.html", "all results"),
        if f.leaderboard.is_some() {
            " · <a href=\"#leaderboard\">leaderboard</a>"
        } else {
            ""
        }
    ));
    b.push_str(&format!(
        "<h1>{}</h1>\n<p>kind <strong>{}</strong>: {}",
        escape(exp_name),
        escape(kind),
        escape(about(kind).unwrap_or("not a built-in kind of this program"))
    ));
    if f.has_readme {
        let href = encode_path(&["..", "..", "experiments", kind, "README.md"]);
        b.push_str(&format!(
            " ({})",
            link(&href, &format!("experiments/{kind}/README.md"))
        ));
    }
    b.push_str("</p>\n");
    b.push_str(&reproduces(exp_name, m));
    if exp_name != f.name {
        b.push_str(&format!(
            "<p class=\"muted\">results folder {}</p>\n",
            escape(&f.name)
        ));
    }
    if let Err(e) = &f.manifest {
        b.push_str(&format!(
            "<p class=\"error\">manifest.json cannot be read: {}</p>\n",
            escape(e)
        ));
    }
    b.push_str(&data_section(m));
    b.push_str(&checks_section(
        &format!("{}/{}", ctx.root, f.name),
        &f.checks,
    ));
    if let Some(lb) = &f.leaderboard {
        // The file brings its own `# Leaderboard` title: shown one level down, as a section.
        b.push_str("<section id=\"leaderboard\">\n");
        match lb {
            Ok(text) => {
                if !text.trim_start().starts_with('#') {
                    b.push_str("<h2>Leaderboard</h2>\n");
                }
                b.push_str(&markdown_shifted(text, 1));
                b.push_str(&format!(
                    "<p class=\"muted\">From {}.</p>\n",
                    link(&file_href(&f.name, "leaderboard.md"), "leaderboard.md")
                ));
            }
            Err(e) => b.push_str(&format!(
                "<h2>Leaderboard</h2>\n<p class=\"error\">leaderboard.md cannot be read: {}</p>\n",
                escape(e)
            )),
        }
        b.push_str("</section>\n");
    }
    b.push_str(&figures_section(f));
    b.push_str(&facts_section(f, m));
    b.push_str(&outputs_section(f, m));
    b.push_str("<h2 id=\"config\">Config</h2>\n");
    match m.and_then(|m| m.get("config")) {
        Some(c) => {
            let pretty = serde_json::to_string_pretty(c).unwrap_or_default();
            b.push_str(&format!("<pre>{}</pre>\n", escape(&pretty)));
        }
        None => b.push_str("<p class=\"muted\">The manifest records no config.</p>\n"),
    }
    document(&format!("{exp_name} — trellis-lab results"), &b, ctx)
}

/// What the run read (the manifest's `data_read`: per dataset, the file, points, features,
/// labels and instances, and what the reader decided; and its `dropped` records). Empty for a
/// run that records neither.
fn data_section(m: Option<&Value>) -> String {
    let read: Vec<crate::experiment::board::data::DataRead> = m
        .and_then(|m| m.get("data_read"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let dropped: Vec<crate::experiment::dropped::Dropped> = m
        .and_then(|m| m.get("dropped"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    if read.is_empty() && dropped.is_empty() {
        return String::new();
    }
    let mut b = String::from("<h2 id=\"data\">Data</h2>\n<ul class=\"data\">\n");
    for r in &read {
        b.push_str(&format!(
            "<li><strong>{}</strong>: {}",
            escape(&r.dataset),
            escape(&r.summary)
        ));
        for n in &r.notes {
            b.push_str(&format!("<br><span class=\"muted\">{}</span>", escape(n)));
        }
        b.push_str("</li>\n");
    }
    for d in &dropped {
        b.push_str(&format!("<li>{}</li>\n", escape(&d.phrase())));
    }
    b.push_str("</ul>\n");
    b
}

/// The verdicts as the paper-vs-ours table, failed ones first.
fn checks_section(dir: &str, checks: &Checks) -> String {
    let mut b = String::from("<h2 id=\"checks\">Checks</h2>\n");
    match checks {
        Checks::NotChecked => b.push_str(&format!(
            "<p class=\"muted\">Not checked (run <code>trellis-lab check {}</code>).</p>\n",
            escape(dir)
        )),
        Checks::Error(e) => b.push_str(&format!(
            "<p class=\"error\">checks.parquet cannot be read: {}</p>\n",
            escape(e)
        )),
        Checks::Stale(why) => b.push_str(&format!(
            "<p class=\"error\">No verdicts shown: {}.</p>\n",
            escape(why)
        )),
        Checks::Read(v) => {
            let passed = v.iter().filter(|c| c.passed).count();
            let class = if passed == v.len() { "pass" } else { "fail" };
            b.push_str(&format!(
                "<p class=\"{class}\">{passed} of {} checks passed.</p>\n",
                v.len()
            ));
            if !v.is_empty() {
                // A long table of passes only is folded (a click, no script, unfolds it).
                let open = if passed < v.len() || v.len() <= FOLD_CHECKS {
                    " open"
                } else {
                    ""
                };
                b.push_str(&format!(
                    "<details{open}><summary>the {} checks</summary>\n",
                    v.len()
                ));
                b.push_str(
                    "<table class=\"checks\">\n<thead><tr><th>what</th><th>ours</th>\
                     <th>expected ± tolerance</th><th>difference</th><th>source</th>\
                     <th>verdict</th></tr></thead>\n<tbody>\n",
                );
                for c in v {
                    b.push_str(&check_row(c));
                }
                b.push_str("</tbody>\n</table>\n</details>\n");
            }
        }
    }
    b
}

/// One row of the checks table.
fn check_row(c: &Check) -> String {
    let (class, verdict) = if !c.applicable {
        ("muted", "not applicable")
    } else if c.passed {
        ("pass", "passed")
    } else {
        ("fail", "FAILED")
    };
    format!(
        "<tr class=\"{class}\"><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} ± {}</td>\
         <td class=\"num\">{}</td><td>{}</td><td class=\"{class}\">{verdict}</td></tr>\n",
        escape(&c.what),
        escape(&number(c.observed, 10)),
        escape(&number(c.expected, 10)),
        escape(&number(c.tolerance, 3)),
        escape(&difference(c.difference)),
        escape(&c.source),
    )
}

/// The caption and alternative text of figure `stem` of a run of `kind`, from the kind's own
/// caption source ([`crate::experiment::kind::Experiment::caption`]); a figure it does not
/// know (an older run's) is named by its file and described as a figure of the kind.
pub(super) fn figure_caption(kind: Option<&str>, stem: &str) -> crate::experiment::kind::Caption {
    kind.and_then(|k| crate::experiment::Registry::builtin().get(k))
        .and_then(|k| k.caption(stem))
        .unwrap_or_else(|| {
            crate::experiment::kind::Caption::new(
                format!("{stem} (no caption for this figure)"),
                format!("Figure {stem} of a {} run", kind.unwrap_or("results")),
            )
        })
}

/// Every figure: the SVG (or PNG) as an image, linked to the PNG (or itself), with its
/// caption and alternative text.
fn figures_section(f: &Folder) -> String {
    let mut b = format!("<h2 id=\"figures\">Figures ({})</h2>\n", f.figures.len());
    if f.figures.is_empty() {
        b.push_str("<p class=\"muted\">No figures.</p>\n");
    }
    let kind = f.manifest.as_ref().ok().and_then(kind_of);
    for g in &f.figures {
        let Some(shown) = g.svg.as_ref().or(g.png.as_ref()) else {
            continue;
        };
        let target = g.png.as_ref().unwrap_or(shown);
        let caption = figure_caption(kind, &g.stem);
        b.push_str(&format!(
            "<figure><a href=\"{}\"><img src=\"{}\" alt=\"{}\" loading=\"lazy\"></a>\
             <figcaption>{} <span class=\"muted\">({})</span></figcaption></figure>\n",
            escape(&file_href(&f.name, target)),
            escape(&file_href(&f.name, shown)),
            escape(&caption.alt),
            escape(&caption.text),
            escape(target)
        ));
    }
    b
}

/// The manifest's facts: what ran, where, when, how long.
fn facts_section(f: &Folder, m: Option<&Value>) -> String {
    let mut b = String::from("<h2 id=\"manifest\">Run</h2>\n");
    let Some(m) = m else {
        b.push_str("<p class=\"muted\">No readable manifest.</p>\n");
        return b;
    };
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, html: String| rows.push((escape(k), html));
    let plain = |p: &str| {
        m.pointer(p)
            .map(|v| escape(&json_text(v, 500)))
            .unwrap_or_else(|| "<span class=\"muted\">–</span>".into())
    };
    let config_file = match (&f.config_link, text_at(Some(m), "/config_file")) {
        (Some(segments), Some(file)) => {
            let mut path: Vec<&str> = vec!["..", ".."];
            path.extend(segments.iter().map(String::as_str));
            link(&encode_path(&path), file)
        }
        _ => plain("/config_file"),
    };
    row("config file", config_file);
    row("seed", plain("/seed"));
    row("run hash", plain("/run_hash"));
    row("git revision", plain("/git_revision"));
    row("program", plain("/program_hash"));
    row("crate version", plain("/crate_version"));
    row(
        "threads",
        format!(
            "{} (of {} host cores)",
            plain("/threads"),
            plain("/host_cores")
        ),
    );
    for (key, label) in [
        ("started_unix_seconds", "started (UTC)"),
        ("finished_unix_seconds", "finished (UTC)"),
    ] {
        let t = m.get(key).and_then(Value::as_i64).map(iso_utc);
        row(label, escape(t.as_deref().unwrap_or("–")));
    }
    if let Some(t) = m.get("timings_seconds").and_then(Value::as_object) {
        let parts: Vec<String> = t
            .iter()
            .map(|(k, v)| match v.as_f64() {
                Some(s) => format!("{k} {s:.3} s"),
                None => format!("{k} {}", json_text(v, 40)),
            })
            .collect();
        row("timings", escape(&parts.join(", ")));
    }
    if let Some(obj) = m.as_object() {
        for (k, v) in obj
            .iter()
            .filter(|(k, _)| !KNOWN_KEYS.contains(&k.as_str()))
        {
            row(k, format!("<code>{}</code>", escape(&json_text(v, 500))));
        }
    }
    b.push_str("<table class=\"facts\">\n<tbody>\n");
    for (k, v) in rows {
        b.push_str(&format!("<tr><th>{k}</th><td>{v}</td></tr>\n"));
    }
    b.push_str("</tbody>\n</table>\n");
    b
}

/// The files of the run: the outputs its manifest lists, then anything else in the folder.
fn outputs_section(f: &Folder, m: Option<&Value>) -> String {
    let mut b = String::from("<h2 id=\"outputs\">Files</h2>\n");
    let listed: Vec<String> = m
        .and_then(|m| m.get("outputs"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty() && !s.contains(['/', '\\']) && *s != "..")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let bytes = |file: &str| {
        m.and_then(|m| m.pointer(&format!("/output_bytes/{}", file.replace('~', "~0"))))
            .and_then(Value::as_u64)
    };
    b.push_str(
        "<table class=\"files\">\n<thead><tr><th>file</th><th>bytes</th><th></th></tr></thead>\n<tbody>\n",
    );
    let extra = f.files.iter().filter(|x| !listed.contains(x));
    for (file, is_output) in listed
        .iter()
        .map(|x| (x, true))
        .chain(extra.map(|x| (x, false)))
    {
        let present = f.files.contains(file);
        let name = if present {
            link(&file_href(&f.name, file), file)
        } else {
            escape(file)
        };
        let note = match (is_output, present) {
            (true, true) => "",
            (true, false) => "<span class=\"error\">missing</span>",
            (false, _) => match file.as_str() {
                "manifest.json" => "<span class=\"muted\">the run&#39;s manifest</span>",
                "checks.parquet" => "<span class=\"muted\">written by check</span>",
                _ => "<span class=\"muted\">not a listed output</span>",
            },
        };
        let size = bytes(file).map(|n| n.to_string()).unwrap_or_default();
        b.push_str(&format!(
            "<tr><td>{name}</td><td class=\"num\">{size}</td><td>{note}</td></tr>\n"
        ));
    }
    b.push_str("</tbody>\n</table>\n");
    b
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_shipped_configs_page_cites_its_paper_item_and_says_when_the_config_differs() {
        let (_, text) = crate::experiment::references::CONFIGS
            .iter()
            .find(|(n, _)| *n == "jets")
            .unwrap();
        let reg = crate::experiment::Registry::builtin();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let cfg = crate::experiment::config::parse_in(&reg, text, &dir).unwrap();
        let same = serde_json::json!({ "config": cfg.value });
        let p = super::reproduces("jets", Some(&same));
        assert!(
            p.contains("Reproduces: Cluster Trellis paper: Table 1"),
            "{p}"
        );
        assert!(
            p.contains("Greenberg") && p.contains("AISTATS") && p.contains("2021"),
            "{p}"
        );
        assert!(!p.contains("differs"), "{p}");
        let changed = text.replace("seed = 20211130", "seed = 7");
        let cfg = crate::experiment::config::parse_in(&reg, &changed, &dir).unwrap();
        let other = serde_json::json!({ "config": cfg.value });
        let p = super::reproduces("jets", Some(&other));
        assert!(
            p.contains("differs from configs/jets.toml in experiment.seed"),
            "{p}"
        );
        // The board runs every paper's methods: its item, no single citation.
        let p = super::reproduces("board", None);
        assert!(
            p.contains("Reproduces: the board") && !p.contains("&mdash;"),
            "{p}"
        );
        assert_eq!(super::reproduces("my_own_data", None), "");
    }
}
