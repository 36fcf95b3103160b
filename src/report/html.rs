//! HTML building blocks of the report: escaping, percent-encoding of file names in links, a
//! tiny Markdown subset (for `leaderboard.md`), and number and time formatting.
//!
//! Every string that reaches a page from a config, a manifest, a table or a file name goes
//! through [`escape`] (text and quoted attribute values alike) or, inside a link, through
//! [`encode_path`] first.

/// `s` with `&`, `<`, `>`, `"` and `'` replaced by character references: safe as element text
/// and inside a quoted attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// One path segment (a file or folder name) percent-encoded for a URL: every byte but ASCII
/// letters, digits and `-._~` becomes `%XX`, so spaces, `#`, `?`, `%`, `/`, quotes and angle
/// brackets can never end or redirect a link.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A relative path of `/`-separated segments, each percent-encoded (the separators kept).
pub fn encode_path(segments: &[&str]) -> String {
    segments
        .iter()
        .map(|s| encode_segment(s))
        .collect::<Vec<_>>()
        .join("/")
}

/// `<a href="HREF">TEXT</a>` with the href (already percent-encoded) and the text escaped.
pub fn link(href: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", escape(href), escape(text))
}

/// A number for a table cell, rounded to `digits` significant digits: plain decimal between
/// 1e-3 and 1e9, scientific otherwise; `missing` for none.
pub fn number(v: Option<f64>, digits: usize) -> String {
    let Some(x) = v else {
        return "missing".into();
    };
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let digits = digits.clamp(1, 17);
    let rounded: f64 = format!("{x:.*e}", digits - 1).parse().unwrap_or(x);
    if (1e-3..1e9).contains(&rounded.abs()) {
        format!("{rounded}")
    } else {
        format!("{rounded:e}")
    }
}

/// A difference for a table cell: signed, three significant decimals in scientific form.
pub fn difference(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x.is_finite() && x != 0.0 => format!("{x:+.3e}"),
        Some(x) if x.is_finite() => "0".into(),
        Some(x) => format!("{x}"),
    }
}

/// Seconds since the Unix epoch as an ISO 8601 UTC time, e.g. `2026-11-24T07:47:35Z`.
pub fn iso_utc(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Renders a small Markdown subset to HTML: `#`…`######` headings, paragraphs, `-`/`*`
/// bullet lists, pipe tables (a header row, then a `|---|---|` separator), and inline
/// `**bold**` and `` `code` ``. The text is HTML-escaped before any markup is added, so
/// anything else (raw HTML, links) shows as text.
pub fn markdown(text: &str) -> String {
    markdown_shifted(text, 0)
}

/// [`markdown`] with every heading `shift` levels lower (`#` becomes `<h{1+shift}>`, at most
/// `<h6>`), for a document shown under a page's own headings.
pub fn markdown_shifted(text: &str, shift: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let flush = |paragraph: &mut Vec<&str>, out: &mut String| {
        if !paragraph.is_empty() {
            let joined: Vec<String> = paragraph.iter().map(|l| inline(l.trim())).collect();
            out.push_str(&format!("<p>{}</p>\n", joined.join("\n")));
            paragraph.clear();
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        if t.is_empty() {
            flush(&mut paragraph, &mut out);
            i += 1;
        } else if let Some((level, rest)) = heading(t) {
            flush(&mut paragraph, &mut out);
            let level = (level + shift).min(6);
            out.push_str(&format!("<h{level}>{}</h{level}>\n", inline(rest)));
            i += 1;
        } else if t.starts_with('|') && lines.get(i + 1).is_some_and(|n| is_separator(n)) {
            flush(&mut paragraph, &mut out);
            let mut end = i + 2;
            while end < lines.len() && lines[end].trim().starts_with('|') {
                end += 1;
            }
            out.push_str(&table(lines[i], &lines[i + 2..end]));
            i = end;
        } else if bullet(t).is_some() {
            flush(&mut paragraph, &mut out);
            out.push_str("<ul>\n");
            while let Some(item) = lines.get(i).and_then(|l| bullet(l.trim())) {
                out.push_str(&format!("<li>{}</li>\n", inline(item)));
                i += 1;
            }
            out.push_str("</ul>\n");
        } else {
            paragraph.push(line);
            i += 1;
        }
    }
    flush(&mut paragraph, &mut out);
    out
}

/// `(level, text)` of an ATX heading line (`## Title`).
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let rest = &line[level..];
    if (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with(' ')) {
        Some((level, rest.trim()))
    } else {
        None
    }
}

/// The text of a bullet-list item line (`- item` or `* item`).
fn bullet(line: &str) -> Option<&str> {
    line.strip_prefix("- ").or_else(|| line.strip_prefix("* "))
}

/// The cells of a pipe-table row: outer pipes dropped, `\|` kept as a literal pipe.
fn cells(row: &str) -> Vec<String> {
    let t = row.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = if t.ends_with('|') && !t.ends_with("\\|") {
        &t[..t.len() - 1]
    } else {
        t
    };
    let mut out = vec![String::new()];
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                push_char(&mut out, '|');
            }
            '|' => out.push(String::new()),
            _ => push_char(&mut out, c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Appends `c` to the last cell.
fn push_char(cells: &mut [String], c: char) {
    if let Some(cell) = cells.last_mut() {
        cell.push(c);
    }
}

/// Whether `line` is a table header separator such as `|---|:--:|--:|`.
fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|')
        && t.contains('-')
        && cells(t).iter().all(|c| {
            let c = c.trim();
            !c.is_empty()
                && c.trim_start_matches(':')
                    .trim_end_matches(':')
                    .chars()
                    .all(|x| x == '-')
                && c.contains('-')
        })
}

/// A pipe table: `header` row, then the body rows (the separator already skipped).
fn table(header: &str, body: &[&str]) -> String {
    let head = cells(header);
    let mut out = String::from("<table class=\"md\">\n<thead><tr>");
    for c in &head {
        out.push_str(&format!("<th>{}</th>", inline(c)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in body {
        out.push_str("<tr>");
        let mut r = cells(row);
        r.resize(head.len().max(1), String::new());
        for c in &r {
            out.push_str(&format!("<td>{}</td>", inline(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// Escapes `text`, then turns paired backticks into `<code>` and paired `**` (outside code)
/// into `<strong>`; an unpaired marker stays as written.
pub fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let Some(len) = rest[start + 1..].find('`') else {
            break;
        };
        out.push_str(&bold(&escape(&rest[..start])));
        out.push_str(&format!(
            "<code>{}</code>",
            escape(&rest[start + 1..start + 1 + len])
        ));
        rest = &rest[start + 2 + len..];
    }
    out.push_str(&bold(&escape(rest)));
    out
}

/// Paired `**` markers of already-escaped text as `<strong>`.
fn bold(escaped: &str) -> String {
    let parts: Vec<&str> = escaped.split("**").collect();
    let pairs = (parts.len() - 1) / 2;
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            let marker = if i > 2 * pairs {
                "**"
            } else if i % 2 == 1 {
                "<strong>"
            } else {
                "</strong>"
            };
            out.push_str(marker);
        }
        out.push_str(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_markup_character() {
        assert_eq!(
            escape(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(escape("plain – ünïcode"), "plain – ünïcode");
    }

    #[test]
    fn encodes_file_names_for_urls() {
        assert_eq!(encode_segment("time_jets_6-9.svg"), "time_jets_6-9.svg");
        assert_eq!(
            encode_segment("a b#c?d%e\"f'g<h>/i"),
            "a%20b%23c%3Fd%25e%22f%27g%3Ch%3E%2Fi"
        );
        assert_eq!(encode_segment("é"), "%C3%A9");
        assert_eq!(encode_path(&["..", "my run", "x.png"]), "../my%20run/x.png");
        assert_eq!(
            link("a%20b.html", "<b>"),
            "<a href=\"a%20b.html\">&lt;b&gt;</a>"
        );
    }

    #[test]
    fn formats_utc_times() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_utc(1_795_566_455), "2026-11-25T00:27:35Z");
        assert_eq!(iso_utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn formats_numbers() {
        assert_eq!(number(Some(1.5), 10), "1.5");
        assert_eq!(number(Some(-46.040280080193284), 10), "-46.04028008");
        assert_eq!(number(Some(0.000046040280080193284), 3), "4.6e-5");
        assert_eq!(number(Some(0.10000099999999999), 3), "0.1");
        assert_eq!(number(Some(123456789012.0), 4), "1.235e11");
        assert_eq!(number(Some(0.0), 3), "0");
        assert_eq!(number(None, 3), "missing");
        assert_eq!(number(Some(f64::NAN), 3), "NaN");
        assert_eq!(number(Some(f64::NEG_INFINITY), 3), "-inf");
        assert_eq!(difference(Some(-0.00123)), "-1.230e-3");
        assert_eq!(difference(Some(0.0)), "0");
        assert_eq!(difference(None), "–");
    }

    #[test]
    fn renders_markdown_tables_and_inline_markup() {
        let md = "# Leaderboard\n\nSome **bold** and `code`,\nsecond line.\n\n## Part <2>\n\n\
                  | method | a\\|b |\n|---|:--:|\n| **x** | 1 |\n| y |\n\nafter";
        let html = markdown(md);
        assert!(html.contains("<h1>Leaderboard</h1>"), "{html}");
        assert!(
            html.contains("<p>Some <strong>bold</strong> and <code>code</code>,\nsecond line.</p>")
        );
        assert!(html.contains("<h2>Part &lt;2&gt;</h2>"));
        assert!(html.contains("<thead><tr><th>method</th><th>a|b</th></tr></thead>"));
        assert!(html.contains("<tr><td><strong>x</strong></td><td>1</td></tr>"));
        assert!(
            html.contains("<tr><td>y</td><td></td></tr>"),
            "short rows are padded"
        );
        assert!(html.contains("<p>after</p>"));
        assert!(!html.contains("---"));
        let shifted = markdown_shifted("# a\n###### b", 1);
        assert!(shifted.contains("<h2>a</h2>") && shifted.contains("<h6>b</h6>"));
    }

    #[test]
    fn markdown_never_passes_markup_through() {
        let html =
            markdown("<img src=x onerror=alert(1)> **<b>** `<i>`\n\n| <a> |\n|---|\n| \"q\" |");
        assert!(!html.contains("<img") && !html.contains("<b>") && !html.contains("<a>"));
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(html.contains("<strong>&lt;b&gt;</strong> <code>&lt;i&gt;</code>"));
        assert!(html.contains("<td>&quot;q&quot;</td>"));
    }

    #[test]
    fn unpaired_markers_and_lists() {
        assert_eq!(inline("a ** b"), "a ** b");
        assert_eq!(inline("**a** **b"), "<strong>a</strong> **b");
        assert_eq!(inline("`x"), "`x");
        let html = markdown("- one\n- **two**\ntext\n|not a table|\n");
        assert!(html.contains("<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>"));
        assert!(html.contains("<p>text\n|not a table|</p>"), "{html}");
    }
}
