//! A table of pairwise differences ("mean ± std" cells on a diverging scale).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::color::{diverging, text_color_on};
use super::format::format_number;
use super::frame::blank;
use super::shapes::{fill_rect, line, pt};
use super::text::{
    draw_lines, fit_font_size, snap_size, wrap_two_lines, Label, CAPTION_SIZE, LABEL_SIZE,
    TICK_SIZE, TITLE_SIZE,
};
use super::Chart;

/// A square table of pairwise differences between methods, e.g. Table 1 of
/// the Cluster Trellis paper: cell `(i, j)` shows "mean ± std" of (row `i`
/// minus column `j`) log-likelihood, its background coloured by the mean on a
/// diverging scale (white at 0, blue where the row is higher, red where it is
/// lower) explained by a colour key. `None` cells are drawn grey and empty; rows and columns
/// without any finite mean are left out (e.g. the last row and the first column of an upper
/// triangle). The key spans only the signs that occur: 0 to the largest mean when none is
/// negative (the white-to-blue half of the scale), the smallest mean to 0 when none is
/// positive, and symmetric about 0 otherwise.
#[derive(Debug, Clone, Default)]
pub struct PairwiseDiffTable {
    /// Row and column labels (the methods), in order.
    pub labels: Vec<String>,
    /// `mean[i][j]`: mean of row `i` minus column `j`; `None` leaves the cell empty.
    pub mean: Vec<Vec<Option<f64>>>,
    /// `std[i][j]`: standard deviation shown after "±"; `None` shows the mean only.
    pub std: Vec<Vec<Option<f64>>>,
    /// Title drawn above the table.
    pub title: String,
    /// Caption drawn below the table (e.g. what was averaged over how many items).
    pub caption: String,
}

impl PairwiseDiffTable {
    /// Number of decimals shown in cells.
    const DECIMALS: usize = 4;

    /// Finite (mean, std) of cell `(i, j)`.
    fn cell(&self, i: usize, j: usize) -> (Option<f64>, Option<f64>) {
        let get = |m: &[Vec<Option<f64>>]| m.get(i).and_then(|r| r.get(j)).copied().flatten();
        let mean = get(&self.mean).filter(|v| v.is_finite());
        let std = get(&self.std).filter(|v| v.is_finite());
        (mean, std)
    }

    fn cell_text(&self, i: usize, j: usize) -> Option<String> {
        let d = Self::DECIMALS;
        match self.cell(i, j) {
            (Some(m), Some(s)) => {
                Some(format!("{} ± {}", format_number(m, d), format_number(s, d)))
            }
            (Some(m), None) => Some(format_number(m, d)),
            _ => None,
        }
    }
}

impl Chart for PairwiseDiffTable {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let n = self.labels.len();
        let margin = 30.0;
        let grey_text = RGBColor(70, 70, 70);

        // The rows and columns shown: those with at least one finite mean.
        let shown = |has: &dyn Fn(usize) -> bool| (0..n).filter(|&k| has(k)).collect::<Vec<_>>();
        let rows = shown(&|i| (0..n).any(|j| self.cell(i, j).0.is_some()));
        let cols = shown(&|j| (0..n).any(|i| self.cell(i, j).0.is_some()));
        let (nr, nc) = (rows.len(), cols.len());
        let texts: Vec<Vec<Option<String>>> = rows
            .iter()
            .map(|&i| cols.iter().map(|&j| self.cell_text(i, j)).collect())
            .collect();
        let means = || {
            rows.iter()
                .flat_map(|&i| cols.iter().map(move |&j| (i, j)))
                .filter_map(|(i, j)| self.cell(i, j).0)
        };
        let max_abs = means().fold(0.0f64, |a, m| a.max(m.abs()));
        // The key's range in units of max_abs: only the signs that occur.
        let key_lo = if means().any(|m| m < 0.0) { -1.0 } else { 0.0 };
        let key_hi = if means().any(|m| m > 0.0) { 1.0 } else { 0.0 };

        // Widths: shrink all fonts together until the table fits, wrapping long
        // labels onto two lines; then hand out the spare width.
        let label = |k: usize| self.labels[k].as_str();
        let labels: Vec<&str> = rows.iter().chain(&cols).map(|&k| label(k)).collect();
        let corner_text = "row \u{2212} column";
        let cell_strings: Vec<&str> = texts
            .iter()
            .flatten()
            .flatten()
            .map(String::as_str)
            .collect();
        let avail_w = w - 2.0 * margin;
        let widest = |texts: &[&str], size: f64, wrap: bool| {
            texts
                .iter()
                .map(|t| {
                    let single = Label::new(t, size).width();
                    if wrap {
                        single.min(wrap_two_lines(t, size).1)
                    } else {
                        single
                    }
                })
                .fold(0.0, f64::max)
        };
        let mut scale = 1.0;
        let (cell_size, label_size, corner_size, head_w, col_w) = loop {
            let cell_size = snap_size(TICK_SIZE * scale);
            let label_size = snap_size((LABEL_SIZE - 2.0) * scale);
            let corner_size = snap_size((TICK_SIZE - 4.0) * scale);
            let corner_w = Label::new(corner_text, corner_size).width();
            // 15% slack: SVG viewers without Noto Sans fall back to wider fonts.
            let col_w = (1.15 * widest(&cell_strings, cell_size, false) + 20.0)
                .max(1.15 * widest(&labels, label_size, true) + 16.0);
            let head_min = 1.15 * widest(&labels, label_size, true).max(corner_w) + 30.0;
            let head_single = 1.15 * widest(&labels, label_size, false).max(corner_w) + 30.0;
            let spare = avail_w - col_w * nc as f64;
            if spare >= head_min || scale <= 0.45 {
                let head_w = head_single.min(spare).max(head_min);
                let col_w = if nc == 0 {
                    0.0
                } else {
                    ((avail_w - head_w) / nc as f64)
                        .min(300.0)
                        .min(col_w + 90.0)
                        .max(col_w)
                };
                break (cell_size, label_size, corner_size, head_w, col_w);
            }
            scale -= 0.05;
        };
        let table_w = head_w + col_w * nc as f64;

        // Vertical layout: title, table, colour key, caption; the block is centred.
        let title_h = if self.title.is_empty() {
            0.0
        } else {
            TITLE_SIZE * 1.6
        };
        let key_h = if max_abs > 0.0 { 72.0 } else { 0.0 };
        // A long caption (e.g. the jets a run dropped) wraps into even lines, at most
        // MAX_CAPTION_LINES (the text is bounded where it is made).
        let caption_lines: Vec<String> = if self.caption.is_empty() {
            Vec::new()
        } else {
            let mut lines = super::text_table::wrap_balanced(&self.caption, CAPTION_SIZE, avail_w);
            if lines.len() > MAX_CAPTION_LINES {
                lines.truncate(MAX_CAPTION_LINES);
                if let Some(last) = lines.last_mut() {
                    last.push_str(" …");
                }
            }
            lines
        };
        let caption_h = if caption_lines.is_empty() {
            0.0
        } else {
            CAPTION_SIZE * (1.4 * caption_lines.len() as f64 + 0.4)
        };
        let avail = h - 2.0 * margin - title_h - key_h - caption_h - 24.0;
        let row_h = (avail / (nr as f64 + 1.0)).clamp(2.2 * label_size, 72.0);
        let table_h = row_h * (nr as f64 + 1.0);
        let block_h = title_h + 12.0 + table_h + 12.0 + key_h + caption_h;
        let top = ((h - block_h) / 2.0).max(margin * 0.5);
        let x0 = (w - table_w) / 2.0;
        let y0 = top + title_h + 12.0;
        let cx = w / 2.0;

        if !self.title.is_empty() {
            let size = fit_font_size(&[&self.title], TITLE_SIZE, 12.0, avail_w);
            Label::new(&self.title, size).draw(area, pt(cx, top + title_h / 2.0))?;
        }

        let header_bg = RGBColor(226, 231, 239);
        let empty_bg = RGBColor(238, 238, 238);
        let col_x = |j: usize| x0 + head_w + col_w * j as f64;
        let row_y = |i: usize| y0 + row_h * (i as f64 + 1.0);

        // Header row and column.
        fill_rect(
            area,
            (x0, y0),
            (x0 + table_w, y0 + row_h),
            header_bg.filled(),
        )?;
        fill_rect(
            area,
            (x0, y0),
            (x0 + head_w, y0 + table_h),
            header_bg.filled(),
        )?;
        Label::new(corner_text, corner_size)
            .color(grey_text)
            .draw(area, pt(x0 + head_w / 2.0, y0 + row_h / 2.0))?;
        for (k, &j) in cols.iter().enumerate() {
            let col_center = pt(col_x(k) + col_w / 2.0, y0 + row_h / 2.0);
            draw_lines(
                area,
                label(j),
                label_size,
                (col_w - 16.0) / 1.15,
                col_center,
            )?;
        }
        for (k, &i) in rows.iter().enumerate() {
            let row_center = pt(x0 + head_w / 2.0, row_y(k) + row_h / 2.0);
            draw_lines(
                area,
                label(i),
                label_size,
                (head_w - 30.0) / 1.15,
                row_center,
            )?;
        }

        // Data cells.
        for (i, (row, &ri)) in texts.iter().zip(&rows).enumerate() {
            for (j, (text, &cj)) in row.iter().zip(&cols).enumerate() {
                let (xa, ya) = (col_x(j), row_y(i));
                let bg = match (self.cell(ri, cj).0, text) {
                    (Some(m), Some(_)) if max_abs > 0.0 => diverging(0.75 * m / max_abs),
                    (Some(_), Some(_)) => WHITE,
                    _ => empty_bg,
                };
                fill_rect(area, (xa, ya), (xa + col_w, ya + row_h), bg.filled())?;
                if let Some(t) = text {
                    Label::new(t, cell_size)
                        .color(text_color_on(bg))
                        .draw(area, pt(xa + col_w / 2.0, ya + row_h / 2.0))?;
                }
            }
        }

        // Grid: thin lines between cells, heavy ones around the headers and the frame.
        let thin = RGBColor(190, 190, 190).stroke_width(1);
        let heavy = RGBColor(60, 60, 60).stroke_width(2);
        for k in 1..=nr {
            let style = if k == 1 { heavy } else { thin };
            let y = row_y(k - 1);
            line(area, (x0, y), (x0 + table_w, y), style)?;
        }
        for k in 1..=nc {
            let style = if k == 1 { heavy } else { thin };
            let x = col_x(k - 1);
            line(area, (x, y0), (x, y0 + table_h), style)?;
        }
        fill_rect(area, (x0, y0), (x0 + table_w, y0 + table_h), heavy)?;

        // Colour key: a gradient bar over the signs that occur (-max..+max, 0..+max or -max..0).
        let mut y = y0 + table_h + 12.0;
        if key_h > 0.0 {
            let bar_w = (0.36 * w * (key_hi - key_lo) / 2.0)
                .max(0.24 * w)
                .min(table_w);
            let (bx0, by0, bh) = (cx - bar_w / 2.0, y + 10.0, 16.0);
            let at = |t: f64| bx0 + bar_w * (t - key_lo) / (key_hi - key_lo);
            let steps = 120;
            for s in 0..steps {
                let t = key_lo + (key_hi - key_lo) * (f64::from(s) + 0.5) / f64::from(steps);
                let xa = bx0 + bar_w * f64::from(s) / f64::from(steps);
                let xb = bx0 + bar_w * f64::from(s + 1) / f64::from(steps);
                fill_rect(
                    area,
                    (xa, by0),
                    (xb + 1.0, by0 + bh),
                    diverging(0.75 * t).filled(),
                )?;
            }
            fill_rect(
                area,
                (bx0, by0),
                (bx0 + bar_w, by0 + bh),
                RGBColor(120, 120, 120).stroke_width(1),
            )?;
            let key = |text: &str, x: f64, y: f64, hpos: HPos| {
                Label::new(text, TICK_SIZE - 2.0)
                    .color(grey_text)
                    .anchor(hpos, VPos::Center)
                    .draw(area, pt(x, y))
            };
            let ty = by0 + bh + 16.0;
            if key_lo < 0.0 {
                key(&format_number(-max_abs, 2), at(-1.0), ty, HPos::Center)?;
            }
            key("0", at(0.0), ty, HPos::Center)?;
            if key_hi > 0.0 {
                let top = format!("+{}", format_number(max_abs, 2));
                key(&top, at(1.0), ty, HPos::Center)?;
            }
            let (left, right) = match (key_lo < 0.0, key_hi > 0.0) {
                (true, true) => ("row lower", "row higher"),
                (true, false) => ("row lower", "equal"),
                _ => ("equal", "row higher"),
            };
            key(left, bx0 - 14.0, by0 + bh / 2.0, HPos::Right)?;
            key(right, bx0 + bar_w + 14.0, by0 + bh / 2.0, HPos::Left)?;
            y += key_h;
        }

        let refs: Vec<&str> = caption_lines.iter().map(String::as_str).collect();
        let size = fit_font_size(&refs, CAPTION_SIZE, 10.0, avail_w);
        for (k, line) in caption_lines.iter().enumerate() {
            Label::new(line, size)
                .color(RGBColor(30, 30, 30))
                .draw(area, pt(cx, y + CAPTION_SIZE * (0.9 + 1.4 * k as f64)))?;
        }
        Ok(())
    }
}

/// Most lines a caption wraps into.
const MAX_CAPTION_LINES: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::save_chart;
    use crate::experiment::chart::test_util::{check_outputs, temp_dir};

    fn sample_table() -> PairwiseDiffTable {
        let labels = ["Trellis", "Beam Search", "Greedy", "Truth"];
        let n = labels.len();
        let mut mean = vec![vec![None; n]; n];
        let mut std = vec![vec![None; n]; n];
        for i in 0..n {
            for j in (i + 1)..n {
                mean[i][j] = Some(0.5 * (j - i) as f64 - 0.3);
                std[i][j] = Some(0.25 * j as f64);
            }
        }
        PairwiseDiffTable {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            mean,
            std,
            title: "Log-likelihood differences".into(),
            caption: "mean ± std of row − column log-likelihood over 100 jets".into(),
        }
    }

    #[test]
    fn table_renders_png_and_svg() {
        let dir = temp_dir("table");
        let stem = dir.join("table.v1");
        let (png, svg) = save_chart(&stem, 800, 600, &sample_table()).unwrap();
        assert_eq!(png, dir.join("table.v1.png"));
        assert_eq!(svg, dir.join("table.v1.svg"));
        let svg = check_outputs(&dir, &png, &svg);
        assert!(
            svg.contains("0.2000 ± 0.5000"),
            "cell text missing from SVG"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Occurrences of `text` as a whole SVG text element.
    fn count(svg: &str, text: &str) -> usize {
        svg.matches(&format!(">\n{text}\n<")).count()
    }

    #[test]
    fn empty_rows_and_columns_are_left_out_and_the_key_fits_the_signs() {
        let dir = temp_dir("table-trim");
        // All differences positive: Truth (last) has no row, Trellis (first) no column, and
        // the key runs from 0 to the largest mean only.
        let (png, svg) = save_chart(&dir.join("pos"), 800, 600, &sample_table()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_eq!(count(&svg, "Truth"), 1, "Truth: a column only");
        assert_eq!(count(&svg, "Trellis"), 1, "Trellis: a row only");
        assert_eq!(count(&svg, "Greedy"), 2, "Greedy: a row and a column");
        assert_eq!(count(&svg, "+1.20"), 1);
        assert_eq!(
            count(&svg, "\u{2212}1.20"),
            0,
            "no negative half in the key"
        );
        assert_eq!(count(&svg, "row lower"), 0);
        // One negative difference: the symmetric key with both ends.
        let mut mixed = sample_table();
        mixed.mean[0][1] = Some(-0.4);
        let (png, svg) = save_chart(&dir.join("mixed"), 800, 600, &mixed).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_eq!(count(&svg, "\u{2212}1.20"), 1);
        assert_eq!(count(&svg, "+1.20"), 1);
        assert_eq!(count(&svg, "row lower"), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_table_does_not_fail() {
        let dir = temp_dir("empty-table");
        save_chart(&dir.join("t"), 400, 300, &PairwiseDiffTable::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
