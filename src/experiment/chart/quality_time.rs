//! Quality against wall time: labelled points on a log-scale time axis.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{draw_tick_label, padded_range, TickAxis};
use super::color::qualitative_color;
use super::frame::{
    blank, desc_height, draw_title, label_areas, max_y_ticks, plot_rect, title_band, to_pixels,
    PxRect,
};
use super::shapes::{draw_marker, line, pt, Marker, MARKERS};
use super::text::{fit_font_size, text_style, Label, LABEL_SIZE, TICK_SIZE};
use super::{plot_err, Chart};

/// One method of a [`QualityTimeChart`]: a labelled point.
#[derive(Debug, Clone, Default)]
pub struct QualityTimePoint {
    /// Text drawn next to the point (e.g. the method name).
    pub label: String,
    /// Wall time in seconds; non-positive and non-finite times are clamped
    /// to 1e-7 s (100 ns).
    pub seconds: f64,
    /// Quality score; points with a non-finite quality are skipped.
    pub quality: f64,
    /// Colour of the point: [`qualitative_color`]`(color_index)`, unless `color` is set.
    pub color_index: usize,
    /// A fixed colour for the point (overrides `color_index`), e.g. one per method across
    /// several charts. The marker's shape is always `MARKERS[color_index % 6]` (circle,
    /// square, triangle, diamond, cross, plus), so that points never differ by colour alone.
    pub color: Option<RGBColor>,
}

impl QualityTimePoint {
    fn fill(&self) -> RGBColor {
        self.color
            .unwrap_or_else(|| qualitative_color(self.color_index))
    }

    fn marker(&self) -> Marker {
        MARKERS[self.color_index % MARKERS.len()]
    }
}

/// Quality (y, linear) against wall time (x, log10 scale) of methods, one
/// labelled point each, e.g. dendrogram purity against run time. Time ticks
/// are powers of ten in human units (`1 µs`, `10 ms`, `1 s`), then `1 min`,
/// `10 min`, `1 h`, ...; labels avoid each other and the points where they
/// can. Hints "← faster" and "better →"/"← better" (along the y axis) mark
/// the good directions. With no drawable point the frame shows "no data".
#[derive(Debug, Clone, Default)]
pub struct QualityTimeChart {
    /// Title drawn above the plot.
    pub title: String,
    /// Y axis description, e.g. "mean dendrogram purity (higher is better)".
    pub y_label: String,
    /// The methods, labelled in this order (earlier labels get first choice of place).
    pub points: Vec<QualityTimePoint>,
    /// Higher quality is better (the y hint points up), else lower is.
    pub higher_is_better: bool,
}

/// Time at which non-positive and non-finite times are drawn, in seconds.
const MIN_SECONDS: f64 = 1e-7;
/// Radius of the point markers in pixels.
const R: f64 = 6.0;
/// Font size of the point labels.
const POINT_LABEL_SIZE: f64 = 20.0;

/// Label of the power of ten `10^e` seconds.
fn power_label(e: i32) -> String {
    const UNITS: [&str; 5] = ["ps", "ns", "\u{b5}s", "ms", "s"];
    match usize::try_from(e.div_euclid(3) + 4) {
        Ok(i) if i < UNITS.len() => {
            format!("{} {}", [1, 10, 100][e.rem_euclid(3) as usize], UNITS[i])
        }
        _ => format!("1e{e} s"),
    }
}

/// Major tick times `(seconds, label)` from below `10^lo` to above `10^hi`:
/// powers of ten up to 10 s, then 1 min, 10 min and 10^k h.
fn major_times(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let (lo, hi) = (lo.clamp(-320.0, 300.0), hi.clamp(-320.0, 300.0));
    let first = lo.floor() as i32 - 1;
    let powers = (first..=1).map(|e| (10f64.powi(e), power_label(e)));
    let minutes = [(60.0, "1 min".into()), (600.0, "10 min".into())];
    let hours = (0..=(hi.ceil() as i32 - 2).max(0))
        .map(|k| (3600.0 * 10f64.powi(k), format!("{} h", 10f64.powi(k))));
    let mut out: Vec<(f64, String)> = powers.chain(minutes).chain(hours).collect();
    let last = out
        .iter()
        .position(|(s, _)| s.log10() > hi)
        .unwrap_or(out.len() - 1);
    out.truncate(last + 1);
    out
}

/// Major ticks `(log10 seconds, label)` and minor ticks (log10 of 2..9
/// times each major) within `[lo, hi]` (log10 seconds).
fn time_ticks(lo: f64, hi: f64) -> (Vec<(f64, String)>, Vec<f64>) {
    let all = major_times(lo, hi);
    let inside = |v: f64| v >= lo - 1e-9 && v <= hi + 1e-9;
    let mut minor = Vec::new();
    for w in all.windows(2) {
        let (a, b) = (w[0].0, w[1].0);
        let multiples = (2..=9)
            .map(|k| f64::from(k) * a)
            .filter(|&m| m < b * (1.0 - 1e-9));
        minor.extend(multiples.map(f64::log10).filter(|&v| inside(v)));
    }
    let major = all
        .into_iter()
        .map(|(s, l)| (s.log10(), l))
        .filter(|&(v, _)| inside(v))
        .collect();
    (major, minor)
}

/// The x range (log10 seconds) for data at `logs`: padded, and widened to
/// hold at least two major ticks.
fn time_range(logs: &[f64]) -> (f64, f64) {
    let (lo, hi) = logs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if lo > hi {
        return (-6.3, 1.3);
    }
    let pad = (0.06 * (hi - lo)).max(0.3);
    let (mut lo, mut hi) = (lo - pad, hi + pad);
    if time_ticks(lo, hi).0.len() < 2 {
        let all = major_times(lo, hi);
        let below = all.iter().rev().map(|t| t.0.log10()).find(|&v| v <= lo);
        let above = all.iter().map(|t| t.0.log10()).find(|&v| v >= hi);
        lo = below.map_or(lo, |v| v - 0.15);
        hi = above.map_or(hi, |v| v + 0.15);
    }
    (lo, hi)
}

/// Pixel box `(x0, y0, x1, y1)` of a point label of width `w` and capital
/// height `cap` anchored at `(x, y)` by `(h, v)`, with a 2 px margin.
fn text_box((x, y): (f64, f64), (w, cap): (f64, f64), h: HPos, v: VPos) -> PxRect {
    let x0 = match h {
        HPos::Left => x,
        HPos::Center => x - w / 2.0,
        HPos::Right => x - w,
    };
    let top = match v {
        VPos::Top => y,
        VPos::Center => y - cap / 2.0,
        VPos::Bottom => y - cap,
    };
    // Descenders hang about 0.3 capital heights below the baseline.
    (x0 - 2.0, top - 2.0, x0 + w + 2.0, top + 1.3 * cap + 2.0)
}

/// Area of the intersection of two boxes.
fn overlap(a: PxRect, b: PxRect) -> f64 {
    let w = (a.2.min(b.2) - a.0.max(b.0)).max(0.0);
    let h = (a.3.min(b.3) - a.1.max(b.1)).max(0.0);
    w * h
}

/// A label's place: its anchor position and anchor, and whether it stands away from its point
/// (then a thin leader line joins them).
type Place = ((f64, f64), HPos, VPos, bool);

/// Where to put each label. Tries right, left, above, below, then the four diagonals, then
/// the same directions one, two, ... label heights further out (with a leader line), keeping
/// the first place whose box overlaps no earlier label, no other point and stays inside `plot`;
/// failing that, the place of least overlap (nearest first on ties).
fn place_labels(centers: &[(f64, f64)], sizes: &[(f64, f64)], plot: PxRect) -> Vec<Place> {
    let mut boxes: Vec<PxRect> = Vec::new();
    let mut out = Vec::new();
    for (i, (&(x, y), &size)) in centers.iter().zip(sizes).enumerate() {
        // Labels above or below clear those beside a point (descenders included).
        let (g, v) = (R + 4.0, (0.8 * size.1 + 4.0).max(R + 4.0));
        let row = 1.3 * size.1 + 6.0;
        let mut candidates = vec![
            ((x + g, y), HPos::Left, VPos::Center, false),
            ((x - g, y), HPos::Right, VPos::Center, false),
            ((x, y - v), HPos::Center, VPos::Bottom, false),
            ((x, y + v), HPos::Center, VPos::Top, false),
            ((x + R, y - v), HPos::Left, VPos::Bottom, false),
            ((x + R, y + v), HPos::Left, VPos::Top, false),
            ((x - R, y - v), HPos::Right, VPos::Bottom, false),
            ((x - R, y + v), HPos::Right, VPos::Top, false),
        ];
        for k in 1..=6 {
            let d = v + row * f64::from(k);
            let sx = 2.0 * R * f64::from(k);
            candidates.extend([
                ((x + sx, y - d), HPos::Left, VPos::Bottom, true),
                ((x + sx, y + d), HPos::Left, VPos::Top, true),
                ((x - sx, y - d), HPos::Right, VPos::Bottom, true),
                ((x - sx, y + d), HPos::Right, VPos::Top, true),
                ((x, y - d), HPos::Center, VPos::Bottom, true),
                ((x, y + d), HPos::Center, VPos::Top, true),
            ]);
        }
        let score = |b: PxRect| {
            let labels: f64 = boxes.iter().map(|&o| overlap(b, o)).sum();
            let points: f64 = centers
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &(px, py))| overlap(b, (px - R, py - R, px + R, py + R)))
                .sum();
            let area = (b.2 - b.0) * (b.3 - b.1);
            let outside = area - overlap(b, plot);
            labels + points + 100.0 * outside
        };
        let scored: Vec<(f64, PxRect, Place)> = candidates
            .into_iter()
            .map(|c| {
                let b = text_box(c.0, size, c.1, c.2);
                (score(b), b, c)
            })
            .collect();
        let best = scored
            .iter()
            .find(|s| s.0 <= 0.0)
            .or_else(|| scored.iter().min_by(|a, b| a.0.total_cmp(&b.0)))
            .unwrap_or(&scored[0]);
        boxes.push(best.1);
        out.push(best.2);
    }
    out
}

/// A darker shade of `c` for label text (pale palette colours stay readable).
fn darker(c: RGBColor) -> RGBColor {
    let f = |v: u8| (f64::from(v) * 0.6).round() as u8;
    RGBColor(f(c.0), f(c.1), f(c.2))
}

impl Chart for QualityTimeChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let pts: Vec<(f64, f64, &QualityTimePoint)> = self
            .points
            .iter()
            .filter(|p| p.quality.is_finite())
            .map(|p| {
                let s = Some(p.seconds).filter(|s| s.is_finite() && *s > 0.0);
                let s = s.unwrap_or(MIN_SECONDS);
                (s.log10(), p.quality, p)
            })
            .collect();
        let logs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let (x0, x1) = time_range(&logs);
        let (y0, y1) = padded_range(pts.iter().map(|p| p.1), 0.08);
        let y_axis = TickAxis::linear(y0, y1, max_y_ticks(area, &self.title, 9), false);
        let (x_area, y_area) = label_areas(&y_axis);

        // X ticks, every `stride`-th major labelled (keeping 1 s) if they would crowd.
        let (majors, mut minor) = time_ticks(x0, x1);
        let plot_w = f64::from(area.dim_in_pixel().0) - f64::from(y_area) - 48.0;
        let widest = majors
            .iter()
            .map(|m| Label::new(&m.1, TICK_SIZE).width())
            .fold(0.0, f64::max);
        let stride = (1..majors.len().max(1))
            .find(|&s| majors.len().div_ceil(s) as f64 * (widest + 16.0) <= plot_w)
            .unwrap_or(majors.len().max(1));
        let anchor = majors.iter().position(|m| m.0.abs() < 1e-9).unwrap_or(0);
        let (labelled, unlabelled): (Vec<_>, Vec<_>) = majors
            .into_iter()
            .enumerate()
            .partition(|(i, _)| i.abs_diff(anchor) % stride == 0);
        if stride > 1 {
            minor.clear(); // crowded: decade lines only
        }
        minor.extend(unlabelled.into_iter().map(|(_, m)| m.0));
        let labelled: Vec<(f64, String)> = labelled.into_iter().map(|(_, m)| m).collect();
        let mut x_axis = TickAxis::linear(x0, x1, 2, false);
        x_axis.major = labelled.iter().map(|m| m.0).collect();
        x_axis.minor = minor;

        let mut chart = ChartBuilder::on(area)
            .margin_top(title_band(&self.title))
            .margin_left(12)
            .margin_right(36)
            .margin_bottom(10)
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(x_axis.clone(), y_axis.clone())
            .map_err(plot_err)?;
        // Tick labels are drawn below with `Label`, so plotters gets empty ones.
        chart
            .configure_mesh()
            .label_style(text_style::<DB>(TICK_SIZE))
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|_| String::new())
            .x_labels(x_axis.major.len().max(1))
            .y_labels(y_axis.major.len().max(1))
            .light_line_style(RGBColor(243, 243, 243))
            .bold_line_style(RGBColor(215, 215, 215))
            .axis_style(RGBColor(80, 80, 80))
            .draw()
            .map_err(plot_err)?;
        let plot = plot_rect(area, &chart);
        let (px0, py0, px1, py1) = plot;
        let px = to_pixels(area, &chart);
        for (t, text) in &labelled {
            Label::new(text, TICK_SIZE)
                .color(RGBColor(40, 40, 40))
                .anchor(HPos::Center, VPos::Top)
                .draw(area, pt(px(*t, y0).0, py1 + 14.0))?;
        }
        let (h, v) = (HPos::Right, VPos::Center);
        for &t in &y_axis.major {
            draw_tick_label(area, &y_axis, t, (px0 - 10.0, px(x0, t).1), h, v)?;
        }

        // Points, then their labels on top.
        let centers: Vec<(f64, f64)> = pts.iter().map(|p| px(p.0, p.1)).collect();
        let labels: Vec<Label> = pts
            .iter()
            .map(|p| Label::new(&p.2.label, POINT_LABEL_SIZE))
            .collect();
        let sizes: Vec<(f64, f64)> = labels.iter().map(|l| (l.width(), l.cap_height())).collect();
        let places = place_labels(&centers, &sizes, plot);
        // Leader lines under the points, from a point to the near edge of its far label.
        for ((&c, &size), &(at, h, v, away)) in centers.iter().zip(&sizes).zip(&places) {
            if away {
                let b = text_box(at, size, h, v);
                let ex = c.0.clamp(b.0 + 2.0, b.2 - 2.0);
                let ey = if b.1 > c.1 { b.1 + 1.0 } else { b.3 - 1.0 };
                line(area, c, (ex, ey), RGBColor(120, 120, 120).stroke_width(1))?;
            }
        }
        // Each marker over a slightly larger dark one, which outlines it.
        for (&c, p) in centers.iter().zip(&pts) {
            let dark = RGBColor(40, 40, 40).to_rgba();
            draw_marker(area, p.2.marker(), c, R + 1.2, dark)?;
            draw_marker(area, p.2.marker(), c, R, p.2.fill().to_rgba())?;
        }
        for ((label, p), (at, h, v, _)) in labels.into_iter().zip(&pts).zip(places) {
            let color = darker(p.2.fill());
            label.color(color).anchor(h, v).draw(area, pt(at.0, at.1))?;
        }
        if pts.is_empty() {
            Label::new("no data", LABEL_SIZE)
                .color(RGBColor(120, 120, 120))
                .draw(area, pt((px0 + px1) / 2.0, (py0 + py1) / 2.0))?;
        }

        // Title, axis descriptions and the direction hints.
        draw_title(area, &self.title)?;
        let hint_color = RGBColor(90, 90, 90);
        let desc_y = py1 + f64::from(x_area) - 14.0 - 0.25 * desc_height();
        // The hints only where they leave room for the axis descriptions.
        let faster = Label::new("\u{2190} faster", TICK_SIZE).color(hint_color);
        let room = (px1 - px0) - 2.0 * (faster.width() + 12.0);
        let x_desc = "wall time (log scale)";
        let size = fit_font_size(&[x_desc], LABEL_SIZE, 16.0, room);
        let x_desc = Label::new(x_desc, size).anchor(HPos::Center, VPos::Bottom);
        if x_desc.width() <= room {
            faster
                .anchor(HPos::Left, VPos::Bottom)
                .draw(area, pt(px0, desc_y))?;
        }
        x_desc.draw(area, pt((px0 + px1) / 2.0, desc_y))?;
        let y_x = px0 - f64::from(y_area) + 12.0;
        let (hint, hint_h, hint_y) = if self.higher_is_better {
            ("better \u{2192}", HPos::Right, py0)
        } else {
            ("\u{2190} better", HPos::Left, py1)
        };
        let hint = Label::new(hint, TICK_SIZE).color(hint_color).vertical();
        let mut max = (py1 - py0) - 2.0 * (hint.width() + 16.0);
        if max >= 100.0 {
            hint.anchor(hint_h, VPos::Top).draw(area, pt(y_x, hint_y))?;
        } else {
            max = py1 - py0;
        }
        if !self.y_label.is_empty() {
            let size = fit_font_size(&[&self.y_label], LABEL_SIZE, 12.0, max);
            Label::new(&self.y_label, size)
                .vertical()
                .anchor(HPos::Center, VPos::Top)
                .draw(area, pt(y_x, (py0 + py1) / 2.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::test_util::{assert_svg_has, check_outputs, temp_dir};
    use crate::experiment::chart::{save_chart, save_chart_default};

    fn point(label: &str, seconds: f64, quality: f64, color_index: usize) -> QualityTimePoint {
        let label = label.into();
        QualityTimePoint {
            label,
            seconds,
            quality,
            color_index,
            color: None,
        }
    }

    /// 13 methods from 1 µs to 30 s, some sharing times or qualities.
    fn sample() -> QualityTimeChart {
        let data = [
            ("exact trellis", 30.0, 0.93),
            ("sparse trellis", 4.0, 0.91),
            ("beam search", 0.2, 0.88),
            ("greedy", 1e-3, 0.80),
            ("single linkage", 1e-6, 0.55),
            ("complete linkage", 1e-6, 0.62),
            ("average linkage", 1e-6, 0.62),
            ("Ward", 2e-6, 0.70),
            ("BHC", 4.0, 0.86),
            ("MCMC 1k", 0.2, 0.85),
            ("MCMC 10k", 2.0, 0.88),
            ("random tree", 1e-5, 0.41),
            ("k-means split", 1e-3, 0.80),
        ];
        QualityTimeChart {
            title: "Purity against wall time".into(),
            y_label: "mean dendrogram purity (higher is better)".into(),
            points: data
                .iter()
                .enumerate()
                .map(|(i, &(l, s, q))| point(l, s, q, i))
                .collect(),
            higher_is_better: true,
        }
    }

    #[test]
    fn typical_chart_renders_with_every_label() {
        let dir = temp_dir("quality-time");
        let chart = sample();
        let (png, svg) = save_chart_default(&dir.join("qt"), &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        let labels: Vec<&str> = chart.points.iter().map(|p| p.label.as_str()).collect();
        assert_svg_has(&svg, &labels);
        assert_svg_has(
            &svg,
            &["Purity against wall time", "1 \u{b5}s", "1 s", "faster"],
        );
        // Coincident points get labels in different places, even more of them than the eight
        // places around a point (the board's jets, where many methods tie).
        let mut centers = [(200.0, 200.0); 12];
        centers[11].0 = 400.0;
        let places = place_labels(&centers, &[(80.0, 14.0); 12], (0.0, 0.0, 600.0, 400.0));
        assert!(
            places.iter().any(|p| p.3),
            "some labels stand away, with a leader line"
        );
        let boxes: Vec<PxRect> = places
            .iter()
            .map(|&(p, h, v, _)| text_box(p, (80.0, 14.0), h, v))
            .collect();
        for (i, a) in boxes.iter().enumerate() {
            assert!(
                boxes[..i].iter().all(|&b| overlap(*a, b) == 0.0),
                "{boxes:?}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tick_labels_use_human_units() {
        let (lo, hi) = time_range(&[1e-6f64.log10(), 30f64.log10()]);
        let (major, minor) = time_ticks(lo, hi);
        let labels: Vec<&str> = major.iter().map(|m| m.1.as_str()).collect();
        let want = ["1 \u{b5}s", "10 \u{b5}s", "1 ms", "100 ms", "1 s", "10 s"];
        assert!(want.iter().all(|w| labels.contains(w)), "{labels:?}");
        assert!(minor.iter().any(|&v| (v - 2f64.log10()).abs() < 1e-12));
        let (major, _) = time_ticks(0.0, 5.0);
        let labels: Vec<&str> = major.iter().map(|m| m.1.as_str()).collect();
        assert_eq!(labels, ["1 s", "10 s", "1 min", "10 min", "1 h", "10 h"]);
        // A single time still gets two labelled ticks.
        let (lo, hi) = time_range(&[0.5f64.log10()]);
        assert!(time_ticks(lo, hi).0.len() >= 2, "{lo} {hi}");
    }

    #[test]
    fn degenerate_charts_render() {
        let dir = temp_dir("quality-time-degenerate");
        let empty = QualityTimeChart {
            title: "nothing".into(),
            ..Default::default()
        };
        let (png, svg) = save_chart_default(&dir.join("empty"), &empty).unwrap();
        assert_svg_has(&check_outputs(&dir, &png, &svg), &["no data"]);
        let single = QualityTimeChart {
            points: vec![point("only", 0.5, 0.7, 3)],
            ..Default::default()
        };
        let (png, svg) = save_chart(&dir.join("single"), 500, 400, &single).unwrap();
        assert_svg_has(&check_outputs(&dir, &png, &svg), &["only"]);
        let odd = QualityTimeChart {
            points: vec![
                point("zero time", 0.0, 0.5, 0),
                point("NaN time", f64::NAN, 0.6, 1),
                point("NaN quality", 1.0, f64::NAN, 2),
                point("negative", -3.0, 0.5, 12),
            ],
            higher_is_better: false,
            ..Default::default()
        };
        let (png, svg) = save_chart_default(&dir.join("odd"), &odd).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(&svg, &["zero time", "NaN time", "negative", "100 ns"]);
        assert!(!svg.contains("NaN quality"));
        save_chart(&dir.join("narrow"), 300, 200, &odd).unwrap();
        save_chart(&dir.join("tiny"), 40, 30, &sample()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the sample to `/tmp/quality_time_example.png` for inspection.
    #[test]
    #[ignore]
    fn render_quality_time_sample() {
        save_chart_default(std::path::Path::new("/tmp/quality_time_example"), &sample()).unwrap();
    }
}
