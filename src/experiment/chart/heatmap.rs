//! A matrix as square coloured cells with a colour bar, optional values in
//! the cells and outlined groups.

use std::collections::BTreeSet;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{draw_tick_label, padded_range, valid_range, TickAxis};
use super::color::{diverging, text_color_on, viridis};
use super::format::format_number;
use super::frame::{blank, draw_title};
use super::shapes::{fill_rect, line, pt};
use super::text::{fit_font_size, snap_size, Label, LABEL_SIZE, TICK_SIZE};
use super::Chart;

/// A matrix of values as square coloured cells, e.g. pairwise co-clustering
/// probabilities or affinities between items: row labels on the left, column
/// labels below (rotated when they do not fit a cell), a vertical colour bar
/// with ticks and `color_label` on the right. Non-finite and missing cells
/// (rows may be ragged) are drawn light grey and keyed as "n/a". Groups in
/// `highlight` get a thick outline around their block of cells when their
/// indices are contiguous, else each of their cells is outlined.
#[derive(Debug, Clone, Default)]
pub struct HeatmapChart {
    /// Title drawn above the figure.
    pub title: String,
    /// The values, `matrix[row][col]`; non-finite cells are drawn light grey.
    pub matrix: Vec<Vec<f64>>,
    /// Row labels, top to bottom; missing ones show the row index.
    pub row_labels: Vec<String>,
    /// Column labels, left to right; missing ones show the column index.
    pub col_labels: Vec<String>,
    /// Colour-bar caption, e.g. `"P(i and j in the same cluster)"`.
    pub color_label: String,
    /// `true`: the [`diverging`] palette centred at 0 over a symmetric range;
    /// `false`: [`viridis`].
    pub diverging: bool,
    /// Value range of the colour scale (values outside are clamped); `None`
    /// (or an empty or non-finite range) uses min..max of the finite values,
    /// or ±max|v| if `diverging`. A diverging scale is always made symmetric.
    pub value_range: Option<(f64, f64)>,
    /// Write each value in its cell (2 decimals, fewer if cells are small),
    /// in black or white, whichever reads better on the cell colour.
    pub annotate: bool,
    /// Groups of indices (e.g. the clusters of the MAP clustering), applied to
    /// both rows and columns; indices out of range are ignored.
    pub highlight: Vec<Vec<usize>>,
    /// Single cells `(row, col)` to outline thickly, e.g. the best value of each column;
    /// out-of-range cells are ignored.
    pub marked: Vec<(usize, usize)>,
    /// Reverse the (non-diverging) colour scale: low values bright, high values dark, and the
    /// colour bar drawn with low values on top. With this set where lower is better (a place,
    /// a cost) and unset where higher is better, the better end is always bright and at the
    /// top of the bar.
    pub reversed: bool,
    /// Texts to write in the cells instead of their values (with `annotate`), `[row][col]`;
    /// a `None` or missing text falls back to the value (or "n/a"). A text may have several
    /// lines (`\n`), e.g. "4.72" over "(3 forb.)": the font fits every first line with a
    /// number, and words or a further line shrink on their own if they must; a non-finite cell may have a text too,
    /// e.g. "forbidden". Empty: every cell shows its value.
    pub cell_texts: Vec<Vec<Option<String>>>,
}

/// Colour of non-finite heatmap cells and their "n/a" key.
const NA_GREY: RGBColor = RGBColor(215, 215, 215);

/// An outline around cells `rows.0..rows.1` x `cols.0..cols.1` of a heatmap;
/// `block` outlines a whole group (thick), otherwise a single cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CellOutline {
    rows: (usize, usize),
    cols: (usize, usize),
    block: bool,
}

/// Outlines for `groups` on an `n_rows` x `n_cols` matrix: one block per
/// group whose in-range row and column indices are both contiguous, else one
/// outline per cell `(i, j)` with `i` and `j` in the group.
fn highlight_outlines(groups: &[Vec<usize>], n_rows: usize, n_cols: usize) -> Vec<CellOutline> {
    let mut out = Vec::new();
    for group in groups {
        let in_range = |n: usize| -> Vec<usize> {
            group
                .iter()
                .copied()
                .filter(|&i| i < n)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        let (rows, cols) = (in_range(n_rows), in_range(n_cols));
        let span = |v: &[usize]| match (v.first(), v.last()) {
            (Some(&a), Some(&b)) if b - a + 1 == v.len() => Some((a, b + 1)),
            _ => None,
        };
        match (span(&rows), span(&cols)) {
            (Some(rows), Some(cols)) => out.push(CellOutline {
                rows,
                cols,
                block: true,
            }),
            _ => {
                for &i in &rows {
                    for &j in &cols {
                        out.push(CellOutline {
                            rows: (i, i + 1),
                            cols: (j, j + 1),
                            block: false,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Draws a `width` px outline of the rectangle `(x0, y0)`-`(x1, y1)` centred on
/// its edges, as four filled bars (crisp corners in PNG and SVG).
fn outline_rect<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (f64, f64),
    (x1, y1): (f64, f64),
    width: f64,
    color: RGBColor,
) -> Result<()> {
    let d = width / 2.0;
    let style = color.filled();
    fill_rect(area, (x0 - d, y0 - d), (x1 + d, y0 + d), style)?;
    fill_rect(area, (x0 - d, y1 - d), (x1 + d, y1 + d), style)?;
    fill_rect(area, (x0 - d, y0 - d), (x0 + d, y1 + d), style)?;
    fill_rect(area, (x1 - d, y0 - d), (x1 + d, y1 + d), style)
}

/// Where the parts of a [`HeatmapChart`] go, in pixels relative to the area.
struct HeatmapLayout {
    /// Font size of row and column labels.
    label_size: f64,
    /// Column labels read bottom to top.
    vertical_cols: bool,
    /// Side of a cell.
    cell: f64,
    /// Top left corner of the matrix.
    x0: f64,
    y0: f64,
}

impl HeatmapChart {
    /// Gap between the matrix and the colour bar, and the bar's width.
    const BAR_GAP: f64 = 26.0;
    const BAR_W: f64 = 22.0;

    /// Number of rows and columns (the longest row).
    fn dims(&self) -> (usize, usize) {
        let cols = self.matrix.iter().map(Vec::len).max().unwrap_or(0);
        (self.matrix.len(), cols)
    }

    /// The finite value of cell `(i, j)`.
    fn value(&self, i: usize, j: usize) -> Option<f64> {
        self.matrix
            .get(i)
            .and_then(|r| r.get(j))
            .copied()
            .filter(|v| v.is_finite())
    }

    fn finite_values(&self) -> impl Iterator<Item = f64> + '_ {
        self.matrix
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
    }

    /// Whether any cell of the matrix is non-finite or missing.
    fn has_na(&self) -> bool {
        let (_, cols) = self.dims();
        self.matrix
            .iter()
            .any(|r| r.len() < cols || r.iter().any(|v| !v.is_finite()))
    }

    /// The colour scale's range, `lo < hi` (symmetric about 0 if diverging).
    fn scale(&self) -> (f64, f64) {
        let (lo, hi) = valid_range(self.value_range).unwrap_or_else(|| {
            self.finite_values()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        });
        if self.diverging {
            let m = lo.abs().max(hi.abs());
            let m = if m.is_finite() && m > 0.0 { m } else { 1.0 };
            (-m, m)
        } else if lo < hi {
            (lo, hi)
        } else {
            padded_range([lo, hi], 0.05)
        }
    }

    /// Colour of value `v` on the scale `(lo, hi)`.
    fn color(&self, v: f64, (lo, hi): (f64, f64)) -> RGBColor {
        if self.diverging {
            diverging(v / hi)
        } else if self.reversed {
            viridis((hi - v) / (hi - lo))
        } else {
            viridis((v - lo) / (hi - lo))
        }
    }

    /// Whether the colour bar runs from low values at the top to high at the bottom.
    fn flipped_bar(&self) -> bool {
        self.reversed && !self.diverging
    }

    /// Label of row (`row`) or column `k`.
    fn label(&self, row: bool, k: usize) -> String {
        let labels = if row {
            &self.row_labels
        } else {
            &self.col_labels
        };
        labels.get(k).cloned().unwrap_or_else(|| k.to_string())
    }

    /// Cell texts: the given ones ([`Self::cell_texts`]), else the value with `decimals`
    /// decimals (no "−0.00"); `None` for n/a cells.
    fn cell_texts(&self, decimals: usize) -> Vec<Vec<Option<String>>> {
        let (rows, cols) = self.dims();
        let unit = 10f64.powi(decimals as i32);
        (0..rows)
            .map(|i| {
                (0..cols)
                    .map(|j| {
                        let given = self.cell_texts.get(i).and_then(|r| r.get(j)).cloned();
                        given.flatten().or_else(|| {
                            self.value(i, j).map(|v| {
                                let v = if (v * unit).round() == 0.0 { 0.0 } else { v };
                                format_number(v, decimals)
                            })
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// Annotation texts and font size fitting cells of side `cell`: 2
    /// decimals if they fit at a readable size, else 1, else 0, else none.
    fn annotations(&self, cell: f64) -> Option<(Vec<Vec<Option<String>>>, f64)> {
        if !self.annotate || cell < 14.0 {
            return None;
        }
        let top = snap_size((TICK_SIZE - 2.0).min(0.45 * cell));
        (0..=2).rev().find_map(|decimals| {
            let texts = self.cell_texts(decimals);
            // The size fits every first line with a number (the values); words ("forbidden")
            // and further lines (a note such as "(8 forb.)") shrink on their own if they must.
            let flat: Vec<&str> = texts
                .iter()
                .flatten()
                .flatten()
                .filter_map(|t| t.lines().next())
                .filter(|l| l.chars().any(|c| c.is_ascii_digit()))
                .collect();
            let lines = texts
                .iter()
                .flatten()
                .flatten()
                .map(|t| t.lines().count())
                .max()
                .unwrap_or(1)
                .max(1) as f64;
            // Several lines must fit the cell's height too.
            let top = top.min((0.9 * cell / (2.3 * lines)).floor() * 2.0);
            let size = fit_font_size(&flat, top, 10.0, cell - 6.0);
            let fits = flat
                .iter()
                .all(|t| Label::new(t, size).width() <= cell - 4.0);
            let tall = lines * 1.15 * size <= 0.9 * cell + 0.5;
            (fits && tall && size <= 0.6 * cell).then_some((texts, size))
        })
    }

    /// Width of the colour bar block right of the matrix (gap, bar, ticks, caption).
    fn bar_block_w(&self, ticks: &TickAxis, caption_size: f64) -> f64 {
        let tick_w = (1.08 * ticks.label_width()).max(Label::new("n/a", TICK_SIZE).width());
        let caption_w = if self.color_label.is_empty() {
            0.0
        } else {
            16.0 + 1.3 * caption_size
        };
        Self::BAR_GAP + Self::BAR_W + 12.0 + tick_w + caption_w
    }

    /// Lays the figure out in `w` x `h` pixels below a band of `top` pixels.
    fn layout(&self, (w, h): (f64, f64), top: f64, bar_w: f64) -> HeatmapLayout {
        let (rows, cols) = self.dims();
        let margin = 16.0;
        let row_labels: Vec<String> = (0..rows).map(|i| self.label(true, i)).collect();
        let col_labels: Vec<String> = (0..cols).map(|j| self.label(false, j)).collect();
        let row_refs: Vec<&str> = row_labels.iter().map(String::as_str).collect();
        let col_refs: Vec<&str> = col_labels.iter().map(String::as_str).collect();
        let widest = |texts: &[&str], size: f64| {
            texts
                .iter()
                .map(|t| Label::new(t, size).width())
                .fold(0.0, f64::max)
        };
        let mut size = snap_size(TICK_SIZE);
        loop {
            let size_rows = fit_font_size(&row_refs, size, 8.0, 0.28 * w);
            let size_cols = fit_font_size(&col_refs, size, 8.0, 0.28 * h);
            let s = size_rows.min(size_cols);
            // 8% slack: SVG viewers without Noto Sans fall back to wider fonts.
            let row_w = 1.08 * widest(&row_refs, s) + 10.0;
            let col_w = 1.08 * widest(&col_refs, s);
            let avail_w = w - 2.0 * margin - row_w - bar_w;
            let na_h = if self.has_na() {
                Self::BAR_W + 14.0
            } else {
                0.0
            };
            let cell_for = |band: f64| {
                let band = band.max(na_h);
                let avail_h = h - top - margin - band - 8.0;
                (avail_w / cols.max(1) as f64)
                    .min(avail_h / rows.max(1) as f64)
                    .max(1.0)
            };
            let flat_band = Label::new("M", s).cap_height() + 14.0;
            let flat_cell = cell_for(flat_band);
            let vertical_cols = col_w + 6.0 > flat_cell;
            let band = if vertical_cols {
                col_w + 12.0
            } else {
                flat_band
            };
            let cell = if vertical_cols {
                cell_for(band)
            } else {
                flat_cell
            };
            if cell >= s / 0.85 || s <= 8.0 {
                let block_w = row_w + cell * cols as f64 + bar_w;
                let block_h = cell * rows as f64 + 8.0 + band.max(na_h);
                let x0 = ((w - block_w) / 2.0).max(margin) + row_w;
                let y0 = top + ((h - top - margin - block_h) / 2.0).max(0.0);
                return HeatmapLayout {
                    label_size: s,
                    vertical_cols,
                    cell,
                    x0,
                    y0,
                };
            }
            size = s - 2.0;
        }
    }
}

impl Chart for HeatmapChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let top = draw_title(area, &self.title)?;
        let (rows, cols) = self.dims();
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let scale = self.scale();
        // The bar's ticks depend on its height, which depends on the layout:
        // lay out with generous ticks first, then with the actual ones.
        let caption_size =
            |bar_h: f64| fit_font_size(&[&self.color_label], LABEL_SIZE - 4.0, 10.0, bar_h);
        let ticks_for = |bar_h: f64| {
            let max_ticks = ((bar_h / (2.0 * TICK_SIZE)).floor() as usize).clamp(2, 8);
            TickAxis::linear(scale.0, scale.1, max_ticks, false)
        };
        let first = self.layout((w, h), top, self.bar_block_w(&ticks_for(h), LABEL_SIZE));
        let bar_h = first.cell * rows as f64;
        let (ticks, cap_size) = (ticks_for(bar_h), caption_size(bar_h));
        let lay = self.layout((w, h), top, self.bar_block_w(&ticks, cap_size));
        let HeatmapLayout { cell, x0, y0, .. } = lay;
        let (x1, y1) = (x0 + cell * cols as f64, y0 + cell * rows as f64);

        // Cells, then a white grid between them when cells are large enough.
        for i in 0..rows {
            for j in 0..cols {
                let bg = self.value(i, j).map_or(NA_GREY, |v| self.color(v, scale));
                let (xa, ya) = (x0 + cell * j as f64, y0 + cell * i as f64);
                fill_rect(area, (xa, ya), (xa + cell, ya + cell), bg.filled())?;
            }
        }
        if cell >= 10.0 {
            for k in 1..rows {
                let y = y0 + cell * k as f64;
                line(area, (x0, y), (x1, y), WHITE.stroke_width(1))?;
            }
            for k in 1..cols {
                let x = x0 + cell * k as f64;
                line(area, (x, y0), (x, y1), WHITE.stroke_width(1))?;
            }
        }
        if let Some((texts, size)) = self.annotations(cell) {
            for (i, row) in texts.iter().enumerate() {
                for (j, text) in row.iter().enumerate() {
                    let bg = self.value(i, j).map_or(NA_GREY, |v| self.color(v, scale));
                    let text = text.as_deref().unwrap_or("n/a");
                    let lines: Vec<&str> = text.lines().collect();
                    let step = 1.15 * size;
                    let top =
                        y0 + cell * (i as f64 + 0.5) - step * (lines.len() as f64 - 1.0) / 2.0;
                    for (k, l) in lines.iter().enumerate() {
                        let size = if Label::new(l, size).width() <= cell - 4.0 {
                            size
                        } else {
                            fit_font_size(&[l], size, 7.0, cell - 4.0)
                        };
                        Label::new(l, size).color(text_color_on(bg)).draw(
                            area,
                            pt(x0 + cell * (j as f64 + 0.5), top + step * k as f64),
                        )?;
                    }
                }
            }
        }
        fill_rect(
            area,
            (x0, y0),
            (x1, y1),
            RGBColor(90, 90, 90).stroke_width(1),
        )?;

        // Highlighted groups: a white halo under a black outline.
        let mut outlines = highlight_outlines(&self.highlight, rows, cols);
        outlines.extend(
            self.marked
                .iter()
                .filter(|&&(i, j)| i < rows && j < cols)
                .map(|&(i, j)| CellOutline {
                    rows: (i, i + 1),
                    cols: (j, j + 1),
                    block: true,
                }),
        );
        for halo in [true, false] {
            for o in &outlines {
                let base = if o.block {
                    (0.1 * cell).clamp(2.0, 4.0)
                } else {
                    (0.06 * cell).clamp(1.0, 2.0)
                };
                let (width, color) = if halo {
                    (base + 3.0, WHITE)
                } else {
                    (base, RGBColor(15, 15, 15))
                };
                let a = (x0 + cell * o.cols.0 as f64, y0 + cell * o.rows.0 as f64);
                let b = (x0 + cell * o.cols.1 as f64, y0 + cell * o.rows.1 as f64);
                outline_rect(area, a, b, width, color)?;
            }
        }

        // Row labels left, column labels below (reading upwards if rotated).
        let s = lay.label_size;
        for i in 0..rows {
            Label::new(&self.label(true, i), s)
                .anchor(HPos::Right, VPos::Center)
                .draw(area, pt(x0 - 10.0, y0 + cell * (i as f64 + 0.5)))?;
        }
        for j in 0..cols {
            let text = self.label(false, j);
            let cx = x0 + cell * (j as f64 + 0.5);
            if lay.vertical_cols {
                Label::new(&text, s)
                    .vertical()
                    .anchor(HPos::Right, VPos::Center)
                    .draw(area, pt(cx, y1 + 10.0))?;
            } else {
                Label::new(&text, s)
                    .anchor(HPos::Center, VPos::Top)
                    .draw(area, pt(cx, y1 + 10.0))?;
            }
        }

        // Colour bar: a gradient with ticks, the caption right of it, and an
        // "n/a" key under it if any cell is non-finite.
        let (bx0, bx1) = (x1 + Self::BAR_GAP, x1 + Self::BAR_GAP + Self::BAR_W);
        let bar_h = y1 - y0;
        let steps = bar_h.round().clamp(1.0, 256.0) as usize;
        for k in 0..steps {
            let f = |k: usize| k as f64 / steps as f64;
            let v = scale.0 + (scale.1 - scale.0) * (f(k) + 0.5 / steps as f64);
            let (ya, yb) = if self.flipped_bar() {
                (y0 + bar_h * f(k), y0 + bar_h * f(k + 1))
            } else {
                (y1 - bar_h * f(k + 1), y1 - bar_h * f(k))
            };
            fill_rect(
                area,
                (bx0, ya),
                (bx1, yb + 1.0),
                self.color(v, scale).filled(),
            )?;
        }
        let dark = RGBColor(80, 80, 80);
        fill_rect(area, (bx0, y0), (bx1, y1), dark.stroke_width(1))?;
        let y_of = |v: f64| {
            let f = (v - scale.0) / (scale.1 - scale.0);
            if self.flipped_bar() {
                y0 + f * bar_h
            } else {
                y1 - f * bar_h
            }
        };
        for &t in &ticks.major {
            let y = y_of(t);
            line(area, (bx1, y), (bx1 + 5.0, y), dark.stroke_width(1))?;
            draw_tick_label(area, &ticks, t, (bx1 + 10.0, y), HPos::Left, VPos::Center)?;
        }
        if !self.color_label.is_empty() {
            let cx = bx1 + 12.0 + 1.08 * ticks.label_width() + 16.0;
            Label::new(&self.color_label, cap_size)
                .vertical()
                .anchor(HPos::Center, VPos::Top)
                .draw(area, pt(cx, (y0 + y1) / 2.0))?;
        }
        if self.has_na() {
            let ya = y1 + 12.0;
            fill_rect(area, (bx0, ya), (bx1, ya + Self::BAR_W), NA_GREY.filled())?;
            fill_rect(
                area,
                (bx0, ya),
                (bx1, ya + Self::BAR_W),
                dark.stroke_width(1),
            )?;
            Label::new("n/a", TICK_SIZE)
                .color(RGBColor(40, 40, 40))
                .anchor(HPos::Left, VPos::Center)
                .draw(area, pt(bx1 + 10.0, ya + Self::BAR_W / 2.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "heatmap_tests.rs"]
mod tests;
