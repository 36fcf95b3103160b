//! A table of text cells laid out like a paper's results table: a header row, section rows that
//! span the table (e.g. "Merge time (t)"), and data rows whose highlighted cells (the best per
//! row) are drawn on a tinted background.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::frame::blank;
use super::shapes::{fill_rect, line, pt};
use super::text::{fit_font_size, snap_size, Label, CAPTION_SIZE, TICK_SIZE, TITLE_SIZE};
use super::Chart;

/// One row of a [`TextTable`].
#[derive(Debug, Clone, Default)]
pub struct TextRow {
    /// The cells, left to right (the first is the row's label). A section row uses only the
    /// first cell, drawn across the table.
    pub cells: Vec<String>,
    /// Cells drawn highlighted (same length as `cells`, or empty for none).
    pub highlight: Vec<bool>,
    /// Whether this is a section heading.
    pub section: bool,
}

impl TextRow {
    /// A data row.
    pub fn data(cells: Vec<String>, highlight: Vec<bool>) -> TextRow {
        TextRow {
            cells,
            highlight,
            section: false,
        }
    }

    /// A section heading spanning the table.
    pub fn section(title: impl Into<String>) -> TextRow {
        TextRow {
            cells: vec![title.into()],
            highlight: Vec::new(),
            section: true,
        }
    }
}

/// A results table: `columns` head the columns, `rows` follow; title above, caption below
/// (wrapped onto at most three lines). Fonts shrink together until the table fits.
#[derive(Debug, Clone, Default)]
pub struct TextTable {
    /// Title above the table.
    pub title: String,
    /// Column headings (the first heads the row labels).
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<TextRow>,
    /// Caption below the table.
    pub caption: String,
}

/// The words of `text`, a lone operator ("−", "=", "±", ...) kept with its neighbours so that
/// "(n − 1)" never breaks across lines.
fn words(text: &str) -> Vec<String> {
    const OPS: [&str; 8] = ["\u{2212}", "-", "+", "±", "=", "/", "×", "·"];
    let mut out: Vec<String> = Vec::new();
    let mut glue_next = false;
    for w in text.split_whitespace() {
        let op = OPS.contains(&w);
        match out.last_mut() {
            Some(last) if op || glue_next => {
                last.push(' ');
                last.push_str(w);
            }
            _ => out.push(w.to_string()),
        }
        glue_next = op;
    }
    out
}

/// Splits `text` into lines no wider than `max_w` at `size` (words are never broken).
fn wrap(text: &str, size: f64, max_w: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in words(text) {
        let word = word.as_str();
        let cand = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && Label::new(&cand, size).width() > max_w {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        } else {
            cur = cand;
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// [`wrap`] into as few lines, made as even as they can be: the narrowest width that needs no
/// more lines than `max_w` does, so that no last line holds a lone word.
pub(super) fn wrap_balanced(text: &str, size: f64, max_w: f64) -> Vec<String> {
    let lines = wrap(text, size, max_w);
    if lines.len() < 2 {
        return lines;
    }
    let (mut lo, mut hi) = (0.0, max_w);
    for _ in 0..20 {
        let mid = (lo + hi) / 2.0;
        if wrap(text, size, mid).len() <= lines.len() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    wrap(text, size, hi)
}

/// Cell `j` of row `r` ("" past its end).
fn cell(r: &TextRow, j: usize) -> &str {
    r.cells.get(j).map_or("", String::as_str)
}

/// Margin around a [`TextTable`].
const MARGIN: f64 = 24.0;

impl TextTable {
    /// Number of columns: the longest data row or the headings.
    fn n_columns(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| !r.section)
            .map(|r| r.cells.len())
            .chain([self.columns.len()])
            .max()
            .unwrap_or(0)
    }

    /// Column widths with text of `size` pixels.
    fn column_widths(&self, size: f64) -> Vec<f64> {
        (0..self.n_columns())
            .map(|j| {
                let head = self.columns.get(j).map_or("", String::as_str);
                self.rows
                    .iter()
                    .filter(|r| !r.section)
                    .map(|r| cell(r, j))
                    .chain([head])
                    .map(|t| 1.12 * Label::new(t, size).width() + 24.0)
                    .fold(0.0, f64::max)
            })
            .collect()
    }

    /// The image width at which the table fits at its full text size with no more than its
    /// margins on either side (and the title fits at its full size), so that the text is as
    /// large as it can be when the image is shown scaled to a page.
    pub fn fitted_width(&self) -> u32 {
        let table: f64 = self.column_widths(snap_size(TICK_SIZE)).iter().sum();
        let title = Label::new(&self.title, TITLE_SIZE).width();
        (table.max(title) + 2.0 * MARGIN + 8.0).ceil() as u32
    }
}

impl Chart for TextTable {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let margin = MARGIN;
        let ncol = self.n_columns();
        let col_widths = |size: f64| self.column_widths(size);
        let mut size = snap_size(TICK_SIZE);
        let mut widths = col_widths(size);
        while widths.iter().sum::<f64>() > w - 2.0 * margin && size > 9.0 {
            size = snap_size(size - 2.0); // sizes snap to even pixels
            widths = col_widths(size);
        }
        let table_w: f64 = widths.iter().sum();
        let title_size = fit_font_size(&[&self.title], TITLE_SIZE, 12.0, w - 2.0 * margin);
        let title_h = if self.title.is_empty() {
            0.0
        } else {
            title_size * 1.7
        };
        let cap_size = snap_size(CAPTION_SIZE.min(size + 2.0));
        let cap_lines = wrap_balanced(&self.caption, cap_size, w - 2.0 * margin);
        let cap_h = cap_lines.len() as f64 * cap_size * 1.35 + 10.0;
        let n_rows = self.rows.len() as f64 + 1.0;
        let row_h = ((h - 2.0 * margin - title_h - cap_h) / n_rows).clamp(size * 1.2, size * 2.2);
        let table_h = row_h * n_rows;
        let top = ((h - (title_h + table_h + cap_h)) / 2.0).max(margin / 2.0);
        let x0 = (w - table_w) / 2.0;
        let y0 = top + title_h;
        if !self.title.is_empty() {
            Label::new(&self.title, title_size).draw(area, pt(w / 2.0, top + title_h / 2.0))?;
        }
        let header_bg = RGBColor(226, 231, 239);
        let section_bg = RGBColor(244, 244, 244);
        let best_bg = RGBColor(255, 236, 179);
        let rule = RGBColor(120, 120, 120);
        let col_x: Vec<f64> = widths
            .iter()
            .scan(x0, |x, wj| {
                let start = *x;
                *x += wj;
                Some(start)
            })
            .collect();
        fill_rect(
            area,
            (x0, y0),
            (x0 + table_w, y0 + row_h),
            header_bg.filled(),
        )?;
        for (j, head) in self.columns.iter().enumerate().take(ncol) {
            Label::new(head, size).draw(area, pt(col_x[j] + widths[j] / 2.0, y0 + row_h / 2.0))?;
        }
        for (i, r) in self.rows.iter().enumerate() {
            let ya = y0 + row_h * (i as f64 + 1.0);
            let mid = ya + row_h / 2.0;
            if r.section {
                fill_rect(
                    area,
                    (x0, ya),
                    (x0 + table_w, ya + row_h),
                    section_bg.filled(),
                )?;
                Label::new(cell(r, 0), size)
                    .anchor(HPos::Left, VPos::Center)
                    .draw(area, pt(x0 + 10.0, mid))?;
                continue;
            }
            for j in 0..ncol {
                if r.highlight.get(j).copied().unwrap_or(false) {
                    let xa = col_x[j];
                    fill_rect(
                        area,
                        (xa, ya),
                        (xa + widths[j], ya + row_h),
                        best_bg.filled(),
                    )?;
                }
                let t = cell(r, j);
                if j == 0 {
                    Label::new(t, size)
                        .anchor(HPos::Left, VPos::Center)
                        .draw(area, pt(col_x[0] + 10.0, mid))?;
                } else {
                    Label::new(t, size).draw(area, pt(col_x[j] + widths[j] / 2.0, mid))?;
                }
            }
        }
        let bottom = y0 + table_h;
        for y in [y0, y0 + row_h, bottom] {
            line(area, (x0, y), (x0 + table_w, y), rule.stroke_width(1))?;
        }
        for (k, l) in cap_lines.iter().enumerate() {
            let y = bottom + 10.0 + cap_size * 1.35 * (k as f64 + 0.5);
            Label::new(l, cap_size)
                .color(RGBColor(60, 60, 60))
                .draw(area, pt(w / 2.0, y))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::save_chart;
    use crate::experiment::chart::test_util::temp_dir;

    #[test]
    fn balanced_captions_keep_their_line_count_and_leave_no_lone_word() {
        let text = "Mean ± sd over replicates (SMC weights: exact). Errors of log merge times and \
                    log tree distances against the true coalescent; lowest per row tinted. Runtimes.";
        let size = 18.0;
        let full = Label::new(text, size).width();
        // A width at which greedy wrapping leaves the last word alone.
        let w = Label::new(text.trim_end_matches(" Runtimes."), size).width() + 4.0;
        assert!(w < full);
        let greedy = wrap(text, size, w);
        assert_eq!(greedy.last().map(String::as_str), Some("Runtimes."));
        let even = wrap_balanced(text, size, w);
        assert_eq!(even.len(), greedy.len());
        assert_eq!(
            even.join(" "),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        assert!(even.iter().all(|l| l.contains(' ')), "{even:?}");
        assert_eq!(wrap_balanced("short", size, w), vec!["short".to_string()]);
        assert_eq!(
            words("area / (n \u{2212} 1); purity"),
            vec!["area / (n \u{2212} 1);", "purity"]
        );
    }

    #[test]
    fn the_fitted_width_holds_the_table_at_full_text_size() {
        let table = TextTable {
            title: "Title".into(),
            columns: vec!["Method".into(), "runtime".into(), "score".into()],
            rows: vec![
                TextRow::section("Section"),
                TextRow::data(
                    vec![
                        "MPOST2".into(),
                        "7.12 ± 0.10 µs".into(),
                        "0.237 ± 0.012".into(),
                    ],
                    vec![false, true, false],
                ),
            ],
            caption: "A caption.".into(),
        };
        let w = table.fitted_width();
        let cols: f64 = table.column_widths(snap_size(TICK_SIZE)).iter().sum();
        assert!(f64::from(w) >= cols + 2.0 * MARGIN && f64::from(w) < cols + 2.0 * MARGIN + 10.0);
        let dir = temp_dir("text-table");
        let (png, _) = save_chart(&dir.join("t"), w, 300, &table).unwrap();
        assert!(std::fs::metadata(png).unwrap().len() > 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
