//! Rows of markers per series over grey range bars, against one x axis.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{draw_tick_label, padded_range, TickAxis};
use super::color::qualitative_color;
use super::frame::{blank, desc_height, draw_title};
use super::legend::{FlowLegend, Swatch};
use super::shapes::{draw_marker, fill_rect, line, pt, Marker, MARKERS};
use super::text::{fit_font_size, wrap_two_lines, Label, LABEL_SIZE, TICK_SIZE};
use super::Chart;

/// One row of a [`DotRangeChart`].
#[derive(Debug, Clone, Default)]
pub struct DotRangeRow {
    /// Row label, drawn left of the plot (may be long, e.g. "1/0 weights, Dasgupta").
    pub label: String,
    /// Interval drawn as a light grey bar (e.g. worst to best over all trees);
    /// the ends may be in either order; non-finite ends draw no bar.
    pub range: Option<(f64, f64)>,
    /// Values as `(series index, value)`, each drawn as the series' marker;
    /// non-finite values are skipped.
    pub points: Vec<(usize, f64)>,
    /// Error bars as `(series index, half-length)`: a whisker from value − e to value + e
    /// through the series' marker (e.g. ± one standard error); empty for none.
    pub errors: Vec<(usize, f64)>,
}

/// Horizontal rows of values against a common x axis, each row with an
/// optional grey range bar behind markers of several series: e.g. the
/// dendrogram purity of the MAP and greedy trees against the range of
/// purities over all trees, per weight scheme. Series get colours from
/// [`qualitative_color`] and distinct marker shapes, nudged apart vertically
/// so equal values stay visible; the legend goes under the title.
#[derive(Debug, Clone, Default)]
pub struct DotRangeChart {
    /// Title drawn above the plot.
    pub title: String,
    /// The rows, top to bottom.
    pub rows: Vec<DotRangeRow>,
    /// Legend name of each series, indexed by series.
    pub series_names: Vec<String>,
    /// X axis description.
    pub x_label: String,
    /// Legend name of the range bars, e.g. "all trees: worst to best"; empty for none.
    pub range_label: String,
    /// X axis range; `None` pads the range of all values and range ends by 5%.
    pub x_range: Option<(f64, f64)>,
}

impl DotRangeChart {
    /// Range bars as `(row, lo, hi)` with finite ends.
    fn ranges(&self) -> impl Iterator<Item = (usize, f64, f64)> + '_ {
        self.rows.iter().enumerate().filter_map(|(i, r)| {
            let (a, b) = r.range?;
            (a.is_finite() && b.is_finite()).then_some((i, a.min(b), a.max(b)))
        })
    }

    /// Series used by any point (as many as the largest index, at least the names).
    fn n_series(&self) -> usize {
        self.rows
            .iter()
            .flat_map(|r| r.points.iter().map(|p| p.0 + 1))
            .fold(self.series_names.len(), usize::max)
    }

    fn series_style(s: usize) -> (Marker, RGBColor) {
        (MARKERS[s % MARKERS.len()], qualitative_color(s))
    }

    fn legend(&self) -> FlowLegend {
        let mut entries = Vec::new();
        if !self.range_label.is_empty() && self.ranges().next().is_some() {
            entries.push((
                Swatch::Bar {
                    color: RGBColor(205, 205, 205),
                },
                self.range_label.clone(),
            ));
        }
        for (s, name) in self.series_names.iter().enumerate() {
            if !name.is_empty() {
                let (marker, color) = Self::series_style(s);
                entries.push((
                    Swatch::Marker {
                        marker,
                        color: color.to_rgba(),
                        r: 6.5,
                    },
                    name.clone(),
                ));
            }
        }
        FlowLegend { entries }
    }

    /// The x axis range: explicit if valid, else padded around the data.
    fn x_range(&self) -> (f64, f64) {
        if let Some((a, b)) = self.x_range {
            if a.is_finite() && b.is_finite() && a != b {
                return (a.min(b), a.max(b));
            }
        }
        let values = self
            .rows
            .iter()
            .flat_map(|r| r.points.iter().map(|p| p.1))
            .chain(self.ranges().flat_map(|(_, a, b)| [a, b]));
        padded_range(values, 0.05)
    }
}

/// A [`DotRangeChart`] whose series `strip_series` has many values per row (e.g. one per
/// graph): they are spread vertically across the row by a fixed, evenly spread jitter so that
/// they do not overplot, over a box from the first to the third quartile with the median as a
/// thick line (the range bar is the whiskers); the other series are drawn on the row's centre
/// line, above them.
#[derive(Debug, Clone, Default)]
pub struct StripChart {
    /// The rows, series, labels and ranges.
    pub chart: DotRangeChart,
    /// The series drawn as a jittered strip with a box.
    pub strip_series: usize,
}

impl Chart for StripChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        self.chart.draw_with(area, Some(self.strip_series))
    }
}

/// The `q`-quantile of sorted `v` (linear interpolation between order statistics).
fn quantile(v: &[f64], q: f64) -> f64 {
    let x = q * (v.len() - 1) as f64;
    let (i, f) = (x.floor() as usize, x - x.floor());
    v[i] + f * (v[(i + 1).min(v.len() - 1)] - v[i])
}

/// Vertical offset in `[-0.5, 0.5)` of the `k`-th strip point: the golden-ratio sequence,
/// evenly spread for any count and the same on every redraw.
fn jitter(k: usize) -> f64 {
    (k as f64 * 0.618_033_988_749_895).fract() - 0.5
}

impl Chart for DotRangeChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        self.draw_with(area, None)
    }
}

impl DotRangeChart {
    /// Draws the chart; `strip` is the series drawn as a [`StripChart`] strip, if any.
    fn draw_with<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        strip: Option<usize>,
    ) -> Result<()> {
        blank(area)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let margin = 16.0;
        let mut top = draw_title(area, &self.title)?;

        // Row labels: one line if they fit 40% of the width, else two.
        let labels: Vec<&str> = self.rows.iter().map(|r| r.label.as_str()).collect();
        let max_label_w = 0.4 * w;
        let label_size = fit_font_size(&labels, TICK_SIZE, 16.0, max_label_w);
        let lines: Vec<Vec<&str>> = labels
            .iter()
            .map(|&l| {
                if Label::new(l, label_size).width() <= max_label_w {
                    vec![l]
                } else {
                    wrap_two_lines(l, label_size).0
                }
            })
            .collect();
        let label_w = lines
            .iter()
            .flatten()
            .map(|l| Label::new(l, label_size).width())
            .fold(0.0, f64::max);

        let (lo, hi) = self.x_range();
        let px0 = margin + label_w + 18.0;
        let px1 = w - margin - 24.0;
        let x_axis = TickAxis::fitted(lo, hi, false, px1 - px0);

        let legend = self.legend();
        if !legend.entries.is_empty() {
            let cx = (px0 + px1) / 2.0;
            let max_w = (w - 2.0 * margin).min(2.0 * (cx - margin).min(w - margin - cx));
            legend.draw(area, cx, top, max_w)?;
            top += legend.height(max_w) + 8.0;
        }
        let desc_h = desc_height();
        let x_area = TICK_SIZE * 1.3
            + 14.0
            + if self.x_label.is_empty() {
                0.0
            } else {
                desc_h + 6.0
            };
        let (py0, py1) = (top + 4.0, (h - margin - x_area).max(top + 5.0));
        let n_rows = self.rows.len().max(1) as f64;
        let row_h = (py1 - py0) / n_rows;
        let x_of = |v: f64| px0 + (v - x_axis.lo) / (x_axis.hi - x_axis.lo) * (px1 - px0);
        let inside = |v: f64| v >= x_axis.lo - 1e-12 && v <= x_axis.hi + 1e-12;

        // Background: alternate row shading, then the vertical grid.
        for i in (0..self.rows.len()).step_by(2) {
            let ya = py0 + row_h * i as f64;
            fill_rect(
                area,
                (px0, ya),
                (px1, ya + row_h),
                RGBColor(246, 246, 246).filled(),
            )?;
        }
        for &t in &x_axis.minor {
            let x = x_of(t);
            line(
                area,
                (x, py0),
                (x, py1),
                RGBColor(238, 238, 238).stroke_width(1),
            )?;
        }
        for &t in &x_axis.major {
            let x = x_of(t);
            line(
                area,
                (x, py0),
                (x, py1),
                RGBColor(208, 208, 208).stroke_width(1),
            )?;
            line(
                area,
                (x, py1),
                (x, py1 + 5.0),
                RGBColor(80, 80, 80).stroke_width(1),
            )?;
            let at = (x, py1 + 12.0);
            draw_tick_label(area, &x_axis, t, at, HPos::Center, VPos::Top)?;
        }
        fill_rect(
            area,
            (px0, py0),
            (px1, py1),
            RGBColor(80, 80, 80).stroke_width(1),
        )?;

        // Row labels, right-aligned against the plot.
        let spacing = 0.9 * label_size;
        for (i, row_lines) in lines.iter().enumerate() {
            let cy = py0 + row_h * (i as f64 + 0.5);
            let mid = (row_lines.len() as f64 - 1.0) / 2.0;
            for (k, l) in row_lines.iter().enumerate() {
                Label::new(l, label_size)
                    .anchor(HPos::Right, VPos::Center)
                    .draw(area, pt(px0 - 12.0, cy + (k as f64 - mid) * spacing))?;
            }
        }

        // Range bars.
        let bar_half = (0.2 * row_h).clamp(2.0, 9.0);
        for (i, a, b) in self.ranges() {
            let cy = py0 + row_h * (i as f64 + 0.5);
            let (xa, xb) = (x_of(a).max(px0), x_of(b).min(px1));
            if xb >= xa {
                let (xa, xb) = if xb - xa < 3.0 {
                    ((xa + xb) / 2.0 - 1.5, (xa + xb) / 2.0 + 1.5)
                } else {
                    (xa, xb)
                };
                fill_rect(
                    area,
                    (xa, cy - bar_half),
                    (xb, cy + bar_half),
                    RGBColor(205, 205, 205).filled(),
                )?;
            }
        }

        // Markers, nudged apart vertically by series.
        let n_series = self.n_series().max(1);
        let r = (0.18 * row_h).clamp(2.5, 7.0);
        let nudge = if n_series > 1 {
            (0.5 * row_h / n_series as f64).min(0.9 * r)
        } else {
            0.0
        };
        for (i, row) in self.rows.iter().enumerate() {
            let cy = py0 + row_h * (i as f64 + 0.5);
            if let Some(st) = strip {
                // The strip's box and its points, under the other series.
                let mut v: Vec<f64> = row
                    .points
                    .iter()
                    .filter(|p| p.0 == st && p.1.is_finite())
                    .map(|p| p.1)
                    .collect();
                v.sort_by(f64::total_cmp);
                let half = (0.36 * row_h).max(3.0);
                if v.len() >= 2 {
                    let (q1, med, q3) = (quantile(&v, 0.25), quantile(&v, 0.5), quantile(&v, 0.75));
                    let (xa, xb) = (x_of(q1).max(px0), x_of(q3).min(px1));
                    let dark = RGBColor(60, 60, 60);
                    fill_rect(area, (xa, cy - half), (xb, cy + half), WHITE.filled())?;
                    fill_rect(area, (xa, cy - half), (xb, cy + half), dark.stroke_width(1))?;
                    let xm = x_of(med);
                    fill_rect(
                        area,
                        (xm - 1.5, cy - half),
                        (xm + 1.5, cy + half),
                        dark.filled(),
                    )?;
                }
                let (marker, color) = Self::series_style(st);
                let rs = (0.6 * r).max(2.5);
                let strip_points = row.points.iter().filter(|p| p.0 == st);
                for (k, &(_, v)) in strip_points.enumerate() {
                    if v.is_finite() && inside(v) {
                        let at = (x_of(v), cy + 1.6 * half * jitter(k));
                        draw_marker(area, marker, at, rs + 1.0, WHITE.to_rgba())?;
                        draw_marker(area, marker, at, rs, color.mix(0.85))?;
                    }
                }
            }
            for &(s, v) in &row.points {
                if !v.is_finite() || !inside(v) || Some(s) == strip {
                    continue;
                }
                let (marker, color) = Self::series_style(s);
                let y = if strip.is_some() {
                    cy
                } else {
                    cy + (s as f64 - (n_series as f64 - 1.0) / 2.0) * nudge
                };
                // The series' error bar first, under its marker, clipped to the plot.
                let half = row.errors.iter().find(|e| e.0 == s).map_or(0.0, |e| e.1);
                if half.is_finite() && half > 0.0 {
                    let (xa, xb) = (x_of(v - half).max(px0), x_of(v + half).min(px1));
                    let tick = (0.6 * r).max(2.0);
                    line(area, (xa, y), (xb, y), color.stroke_width(2))?;
                    for x in [xa, xb] {
                        line(area, (x, y - tick), (x, y + tick), color.stroke_width(2))?;
                    }
                }
                if !matches!(marker, Marker::Cross | Marker::Plus) {
                    draw_marker(area, marker, (x_of(v), y), r + 1.5, WHITE.to_rgba())?;
                }
                draw_marker(area, marker, (x_of(v), y), r, color.to_rgba())?;
            }
        }

        if !self.x_label.is_empty() {
            let size = fit_font_size(&[&self.x_label], LABEL_SIZE, 12.0, px1 - px0);
            Label::new(&self.x_label, size)
                .anchor(HPos::Center, VPos::Bottom)
                .draw(area, pt((px0 + px1) / 2.0, h - margin - 0.25 * desc_h))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::test_util::{assert_svg_has, check_outputs, temp_dir};
    use crate::experiment::chart::{save_chart, save_chart_default};
    use std::path::Path;

    /// Purity of three methods against the range over all trees, per scheme.
    fn sample_dot_range() -> DotRangeChart {
        let schemes = [
            "1/0 weights, Dasgupta",
            "1/0 weights, correlation",
            "Gaussian kernel, Dasgupta",
            "Gaussian kernel, correlation",
            "cosine similarity, Dasgupta",
            "cosine similarity, correlation",
            "signed weights, correlation clustering cost",
            "k-NN graph (k = 3), Dasgupta",
        ];
        let rows = schemes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let x = i as f64;
                let (lo, hi) = (0.25 + 0.03 * x, 0.8 + 0.02 * (x * 1.3).sin());
                DotRangeRow {
                    label: s.to_string(),
                    range: Some((lo, hi)),
                    errors: Vec::new(),
                    points: vec![
                        (0, hi - 0.02 * (i % 3) as f64),
                        (1, lo + (hi - lo) * (0.6 + 0.3 * (x * 0.7).cos())),
                        (
                            2,
                            if i == 5 {
                                f64::NAN
                            } else {
                                hi - 0.02 * (i % 3) as f64
                            },
                        ),
                    ],
                }
            })
            .collect();
        DotRangeChart {
            title: "Dendrogram purity per weight scheme".into(),
            rows,
            series_names: vec!["MAP tree".into(), "greedy".into(), "beam search".into()],
            x_label: "dendrogram purity".into(),
            range_label: "all trees: worst to best".into(),
            x_range: None,
        }
    }

    #[test]
    fn dot_range_renders_png_and_svg() {
        let dir = temp_dir("dotrange");
        let (png, svg) = save_chart_default(&dir.join("purity"), &sample_dot_range()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &[
                "all trees: worst to best",
                "beam search",
                "dendrogram purity",
            ],
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn strip_points_spread_over_the_row_and_the_quartiles_interpolate() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
        let offsets: Vec<f64> = (0..50).map(jitter).collect();
        assert!(offsets.iter().all(|o| (-0.5..0.5).contains(o)));
        // Evenly spread: every tenth of the row holds some of 50 points.
        for b in 0..10 {
            let lo = -0.5 + 0.1 * b as f64;
            assert!(offsets.iter().any(|o| (lo..lo + 0.1).contains(o)), "{b}");
        }
        let dir = temp_dir("strip");
        let mut chart = sample_dot_range();
        for (i, row) in chart.rows.iter_mut().enumerate() {
            row.points
                .extend((0..40).map(|k| (0, 0.3 + 0.01 * ((k * 7 + i) % 40) as f64)));
        }
        let strip = StripChart {
            chart,
            strip_series: 0,
        };
        let (png, svg) = save_chart(&dir.join("strip"), 1000, 600, &strip).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(&svg, &["beam search", "dendrogram purity"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_dot_ranges_do_not_fail() {
        let dir = temp_dir("degenerate-dot-range");
        save_chart(&dir.join("r0"), 400, 300, &DotRangeChart::default()).unwrap();
        let rows = DotRangeChart {
            rows: vec![
                DotRangeRow {
                    label: "nan".into(),
                    range: Some((f64::NAN, 1.0)),
                    points: vec![(7, f64::NAN), (0, f64::INFINITY)],
                    errors: vec![(7, 1.0), (0, f64::NAN)],
                },
                DotRangeRow {
                    label: "reversed".into(),
                    range: Some((3.0, -1.0)),
                    points: vec![(1, 2.0), (0, 50.0)],
                    errors: vec![(1, 0.5)],
                },
            ],
            x_range: Some((1.0, 1.0)),
            ..Default::default()
        };
        save_chart(&dir.join("r1"), 300, 200, &rows).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the sample dot-range chart to `/tmp/charts/` for inspection:
    /// `cargo test --lib experiment::chart -- --ignored`.
    #[test]
    #[ignore]
    fn render_dot_range_sample() {
        let dir = Path::new("/tmp/charts");
        save_chart_default(&dir.join("dot_range"), &sample_dot_range()).unwrap();
    }
}
