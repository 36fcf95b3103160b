//! The index page, `RESULTS_ROOT/index.html`: one row per subfolder (the paper item a shipped
//! config reproduces, kind, checks, figures, run time, finish time), the boards' leaderboards
//! linked first, and the reproduced papers cited once.

use super::folder::{kind_of, Checks, Entry, Folder, PAGES_DIR};
use super::html::{encode_path, escape, link};
use super::page::{document, finished, total_seconds, Context};

/// The index: one row per subfolder, the boards' leaderboards first.
pub fn index_page(entries: &[Entry], ctx: &Context) -> String {
    let folders: Vec<&Folder> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Results(f) => Some(&**f),
            Entry::Incomplete { .. } => None,
        })
        .collect();
    let mut b = String::from("<h1>trellis-lab results</h1>\n");
    let boards: Vec<String> = folders
        .iter()
        .filter(|f| f.manifest.as_ref().ok().and_then(kind_of) == Some("board"))
        .map(|f| {
            let anchor = if f.leaderboard.is_some() {
                "#leaderboard"
            } else {
                ""
            };
            let href = format!(
                "{}{anchor}",
                encode_path(&[PAGES_DIR, &format!("{}.html", f.name)])
            );
            link(&href, &f.name)
        })
        .collect();
    if !boards.is_empty() {
        b.push_str(&format!(
            "<p class=\"lead\">Leaderboard (every method on every dataset): {}</p>\n",
            boards.join(" · ")
        ));
    }
    let count = |p: &dyn Fn(&Folder) -> bool| folders.iter().filter(|f| p(f)).count();
    b.push_str(&format!(
        "<p>{} results folders: {} with every check passed, {} with failed checks, {} not checked; {} incomplete folders.</p>\n",
        folders.len(),
        count(&|f| f.checks.counts().is_some_and(|(p, n)| p == n)),
        count(&|f| f.checks.counts().is_some_and(|(p, n)| p < n)),
        count(&|f| matches!(f.checks, Checks::NotChecked)),
        entries.len() - folders.len(),
    ));
    // Grouped by paper (in the catalog's order), then the runs of every paper's methods (the
    // board), then the rest (your own data, incomplete folders).
    let catalog = crate::experiment::list::Catalog::builtin();
    let group_of = |e: &Entry| -> usize {
        let Entry::Results(f) = e else {
            return catalog.paper.len() + 1;
        };
        let m = f.manifest.as_ref().ok();
        match catalog.entry(exp_name(f, m)) {
            Some((_, Some(p))) => catalog
                .paper
                .iter()
                .position(|q| q.key == p.key)
                .unwrap_or(catalog.paper.len()),
            Some((_, None)) => catalog.paper.len(),
            None => catalog.paper.len() + 1,
        }
    };
    for g in 0..=catalog.paper.len() + 1 {
        let rows: Vec<&Entry> = entries.iter().filter(|e| group_of(e) == g).collect();
        if rows.is_empty() {
            continue;
        }
        let heading = match catalog.paper.get(g) {
            Some(p) => escape(&p.short),
            None if g == catalog.paper.len() => "Every paper's methods on every dataset".into(),
            None => "Other runs".into(),
        };
        b.push_str(&format!("<h2>{heading}</h2>\n"));
        b.push_str(
            "<table class=\"index\">\n<thead><tr><th></th><th>results folder</th><th>kind</th>\
             <th>checks</th><th>figures</th><th>seconds</th><th>finished (UTC)</th></tr></thead>\n<tbody>\n",
        );
        for e in rows {
            b.push_str(&match e {
                Entry::Results(f) => index_row(f),
                Entry::Incomplete { name, why } => format!(
                    "<tr><td></td><td>{}</td><td></td><td class=\"muted\" colspan=\"4\">incomplete: {}</td></tr>\n",
                    escape(name),
                    escape(why)
                ),
            });
        }
        b.push_str("</tbody>\n</table>\n");
    }
    b.push_str("<h2>Reproduced papers</h2>\n<ul class=\"papers\">\n");
    for p in &crate::experiment::list::Catalog::builtin().paper {
        b.push_str(&format!("<li>{}</li>\n", escape(&p.citation)));
    }
    b.push_str("</ul>\n");
    document("trellis-lab results", &b, ctx)
}

/// The index's line under a results folder of a shipped config's name: the paper item it
/// reproduces, or, when its config differs from the shipped one, which keys differ (its numbers
/// are then not that item's). Empty for other names.
fn paper_item(exp_name: &str, m: Option<&serde_json::Value>) -> String {
    let Some((e, _)) = crate::experiment::list::Catalog::builtin().entry(exp_name) else {
        return String::new();
    };
    let differs = m
        .and_then(|m| m.get("config"))
        .and_then(|c| crate::experiment::references::differences(exp_name, c))
        .unwrap_or_default();
    if differs.is_empty() {
        // The paper heads the row's group; a smoke run names the paper item of its full config (`X_smoke` of `X`).
        let full = exp_name
            .strip_suffix("_smoke")
            .and_then(|x| crate::experiment::list::Catalog::builtin().entry(x));
        let what = match full {
            Some((full, _)) => format!("smoke run of {}: {}", full.file, full.reproduces),
            None => e.reproduces.clone(),
        };
        format!("<div class=\"muted\">{}</div>", escape(&what))
    } else {
        format!(
            "<div class=\"muted\">config differs from configs/{} in {}: not that paper item</div>",
            escape(&e.file),
            escape(&crate::data::clip(&differs.join(", "), 120))
        )
    }
}

/// The experiment name of a results folder (its manifest's, else the folder's).
fn exp_name<'a>(f: &'a Folder, m: Option<&'a serde_json::Value>) -> &'a str {
    m.and_then(|m| m.pointer("/config/experiment/name"))
        .and_then(|v| v.as_str())
        .unwrap_or(&f.name)
}

/// One results folder's row of the index.
fn index_row(f: &Folder) -> String {
    let m = f.manifest.as_ref().ok();
    let page = encode_path(&[PAGES_DIR, &format!("{}.html", f.name)]);
    let thumb = f
        .figures
        .iter()
        .find_map(|g| g.png.as_ref())
        .map(|png| {
            format!(
                "<a href=\"{}\"><img class=\"thumb\" src=\"{}\" alt=\"\" loading=\"lazy\"></a>",
                escape(&page),
                escape(&encode_path(&[&f.name, png]))
            )
        })
        .unwrap_or_default();
    let mut name = link(&page, &f.name);
    name.push_str(&paper_item(exp_name(f, m), m));
    if let Err(e) = &f.manifest {
        name.push_str(&format!(
            "<div class=\"error\">manifest.json cannot be read: {}</div>",
            escape(e)
        ));
    }
    let checks = match &f.checks {
        Checks::NotChecked => "<span class=\"muted\">not checked</span>".to_string(),
        Checks::Error(_) => "<span class=\"error\">checks.parquet unreadable</span>".to_string(),
        Checks::Stale(_) => "<span class=\"error\">stale: see its page</span>".to_string(),
        Checks::Read(v) => {
            let passed = v.iter().filter(|c| c.passed).count();
            let failed = v.len() - passed;
            let mut s = format!("<span class=\"pass\">{passed} passed</span>");
            if failed > 0 {
                s.push_str(&format!(", <span class=\"fail\">{failed} failed</span>"));
            }
            s
        }
    };
    format!(
        "<tr><td>{thumb}</td><td>{name}</td><td>{}</td><td>{checks}</td><td class=\"num\">{}</td>\
         <td class=\"num\">{}</td><td>{}</td></tr>\n",
        escape(m.and_then(kind_of).unwrap_or("?")),
        f.figures.len(),
        total_seconds(m)
            .map(|s| format!("{s:.1}"))
            .unwrap_or_default(),
        escape(finished(m).as_deref().unwrap_or("")),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_whose_config_differs_is_not_cited_as_the_paper_item() {
        let (_, text) = crate::experiment::references::CONFIGS
            .iter()
            .find(|(n, _)| *n == "jets")
            .unwrap();
        let reg = crate::experiment::Registry::builtin();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let parse = |t: &str| {
            let cfg = crate::experiment::config::parse_in(&reg, t, &dir).unwrap();
            serde_json::json!({ "config": cfg.value })
        };
        let same = super::paper_item("jets", Some(&parse(text)));
        assert!(
            same.contains("Table 1") && !same.contains("differs"),
            "{same}"
        );
        let changed = parse(&text.replace("seed = 20211130", "seed = 7"));
        let other = super::paper_item("jets", Some(&changed));
        assert!(
            other.contains("config differs from configs/jets.toml in experiment.seed")
                && !other.contains("Table 1"),
            "{other}"
        );
        assert_eq!(super::paper_item("my_own_data", None), "");
        // A smoke run names its full config's paper item.
        let (_, smoke) = crate::experiment::references::CONFIGS
            .iter()
            .find(|(n, _)| *n == "jets_smoke")
            .unwrap();
        let item = super::paper_item("jets_smoke", Some(&parse(smoke)));
        assert!(
            item.contains("smoke run of jets.toml") && item.contains("Table 1"),
            "{item}"
        );
    }
}
