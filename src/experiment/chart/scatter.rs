//! A scatter plot coloured by category, optionally square with the diagonal y = x.

use std::collections::BTreeSet;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{padded_range, valid_range};
use super::color::{category_colors, qualitative_color};
use super::format::format_tick;
use super::frame::{blank, desc_height, draw_frame_texts, origin, title_band, FrameTexts};
use super::legend::{place_legend, sample_segment, Legend, Swatch};
use super::shapes::{draw_marker, polyline, Marker, DASHED, MARKERS};
use super::text::{text_style, Label, TICK_SIZE};
use super::{plot_err, Chart};

/// A scatter plot of `(x, y)` points coloured by an integer category, with a
/// legend entry per category: its name from `category_names`, else
/// `"<legend_title> = <category>"` (e.g. Figure 5 of the Cluster Trellis
/// paper: log Z against MAP log-likelihood per jet, coloured by number of
/// leaves). Axis ranges are padded 5% around the data unless given; with
/// `diagonal`, both axes share one range, the plot is square and the line
/// y = x is drawn dashed. The legend goes into the plot region covering the
/// fewest points (or beside a square plot when there is room).
#[derive(Debug, Clone, Default)]
pub struct ScatterByCategory {
    /// The points as `(x, y, category)`; non-finite coordinates and points
    /// outside explicit axis ranges are skipped.
    pub points: Vec<(f64, f64, usize)>,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Title drawn above the plot.
    pub title: String,
    /// Prefix of each legend entry, e.g. `"N leaves"` gives `"N leaves = 5"`
    /// (for categories without a name in `category_names`).
    pub legend_title: String,
    /// Legend names indexed by category; when non-empty, used instead of
    /// `"<legend_title> = <category>"` for the categories it covers.
    pub category_names: Vec<String>,
    /// Draw the line y = x (dashed grey, with a legend entry "y = x"), using
    /// the same range for both axes on a square plot so it runs at 45 degrees.
    pub diagonal: bool,
    /// X axis range; `None` (or an empty or non-finite range) pads the data range by 5%.
    pub x_range: Option<(f64, f64)>,
    /// Y axis range; `None` (or an empty or non-finite range) pads the data range by 5%.
    pub y_range: Option<(f64, f64)>,
}

/// A [`ScatterByCategory`] drawn for telling a few classes apart: every category an opaque
/// marker of its own shape (circle, square, triangle, ...) and colour (the qualitative
/// palette of [`qualitative_color`], in category order), larger than the default points, and
/// each legend entry drawn exactly as its points are. Categories are drawn in order, so the
/// last is on top.
#[derive(Debug, Clone, Default)]
pub struct ClassScatter {
    /// The data, labels, ranges and legend names.
    pub scatter: ScatterByCategory,
}

/// How [`ScatterByCategory::draw_styled`] draws the points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PointStyle {
    /// Small translucent circles coloured by [`category_colors`] (the default).
    Translucent,
    /// Opaque markers, shape and colour per category ([`ClassScatter`]).
    Classes,
}

/// Radius of a [`ClassScatter`] marker and of its legend swatch.
const CLASS_R: f64 = 5.5;

impl Chart for ClassScatter {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        self.scatter.draw_styled(area, PointStyle::Classes)
    }
}

/// Colour of the y = x line and its legend swatch.
const DIAGONAL_GREY: RGBColor = RGBColor(110, 110, 110);

impl ScatterByCategory {
    /// The x and y axis ranges for the finite points `pts`.
    fn axis_ranges(&self, pts: &[(f64, f64, usize)]) -> ((f64, f64), (f64, f64)) {
        let x = valid_range(self.x_range)
            .unwrap_or_else(|| padded_range(pts.iter().map(|p| p.0), 0.05));
        let y = valid_range(self.y_range)
            .unwrap_or_else(|| padded_range(pts.iter().map(|p| p.1), 0.05));
        if self.diagonal {
            let common = (x.0.min(y.0), x.1.max(y.1));
            (common, common)
        } else {
            (x, y)
        }
    }

    /// Legend text of category `c`.
    fn entry_name(&self, c: usize) -> String {
        match self.category_names.get(c) {
            Some(name) => name.clone(),
            None => format!("{} = {c}", self.legend_title),
        }
    }
}

impl Chart for ScatterByCategory {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        self.draw_styled(area, PointStyle::Translucent)
    }
}

impl ScatterByCategory {
    fn draw_styled<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        style: PointStyle,
    ) -> Result<()> {
        blank(area)?;
        let (w, h) = area.dim_in_pixel();
        let (origin_x, origin_y) = origin(area);
        let finite: Vec<(f64, f64, usize)> = self
            .points
            .iter()
            .copied()
            .filter(|(x, y, _)| x.is_finite() && y.is_finite())
            .collect();
        let ((x0, x1), (y0, y1)) = self.axis_ranges(&finite);
        let pts: Vec<(f64, f64, usize)> = finite
            .into_iter()
            .filter(|&(x, y, _)| x >= x0 && x <= x1 && y >= y0 && y <= y1)
            .collect();

        let cats: Vec<usize> = pts
            .iter()
            .map(|p| p.2)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let colors = match style {
            PointStyle::Translucent => category_colors(cats.len()),
            PointStyle::Classes => (0..cats.len()).map(qualitative_color).collect(),
        };
        let rank = |c: usize| cats.binary_search(&c).unwrap_or(0);
        let color_of = |c: usize| colors[rank(c)];
        let marker_of = |c: usize| match style {
            PointStyle::Translucent => Marker::Circle,
            PointStyle::Classes => MARKERS[rank(c) % MARKERS.len()],
        };
        let mut entries: Vec<(Swatch, String)> = cats
            .iter()
            .map(|&c| {
                let swatch = Swatch::Marker {
                    marker: marker_of(c),
                    color: color_of(c).to_rgba(),
                    r: match style {
                        PointStyle::Translucent => 7.0,
                        PointStyle::Classes => CLASS_R,
                    },
                };
                (swatch, self.entry_name(c))
            })
            .collect();
        if self.diagonal {
            let swatch = Swatch::Line {
                color: DIAGONAL_GREY,
                dash: DASHED,
                marker: None,
            };
            entries.push((swatch, "y = x".to_owned()));
        }
        let legend = Legend { entries };
        let (lw, lh) = legend.size();

        // Room for the y tick labels (estimated from the range ends) and the description.
        let tick_w = [y0, y1, (y0 + y1) / 2.0]
            .iter()
            .map(|v| Label::new(&format_tick((v * 10.0).round() / 10.0), TICK_SIZE).width())
            .fold(0.0, f64::max);
        let desc_h = desc_height();
        let y_area = (tick_w + 22.0 + desc_h + 14.0).round() as u32;
        let x_area = (TICK_SIZE * 1.3 + 14.0 + desc_h + 14.0).round() as u32;
        let title_h = title_band(&self.title);

        // Margins (left, right, top, bottom); a square plot with `diagonal`,
        // the legend beside it if the spare width allows.
        let (mut ml, mut mr, mut mt, mut mb) = (12.0, 36.0, f64::from(title_h), 10.0);
        let mut legend_outside = false;
        if self.diagonal {
            let pw = f64::from(w) - ml - mr - f64::from(y_area);
            let ph = f64::from(h) - mt - mb - f64::from(x_area);
            if pw > ph && ph > 0.0 {
                let extra = pw - ph;
                legend_outside = !legend.entries.is_empty() && extra >= lw + 32.0;
                let beside = if legend_outside { lw + 16.0 } else { 0.0 };
                ml += (extra - beside) / 2.0;
                mr += (extra - beside) / 2.0 + beside;
            } else if ph > pw && pw > 0.0 {
                mt += (ph - pw) / 2.0;
                mb += (ph - pw) / 2.0;
            }
        }
        let margin = |v: f64| v.round().max(0.0) as u32;
        let mut chart = ChartBuilder::on(area)
            .margin_top(margin(mt))
            .margin_left(margin(ml))
            .margin_right(margin(mr))
            .margin_bottom(margin(mb))
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .label_style(text_style::<DB>(TICK_SIZE))
            .x_label_formatter(&|v| format_tick(*v))
            .y_label_formatter(&|v| format_tick(*v))
            .x_labels(10)
            .y_labels(10)
            .light_line_style(RGBColor(240, 240, 240))
            .bold_line_style(RGBColor(208, 208, 208))
            .axis_style(RGBColor(80, 80, 80))
            .draw()
            .map_err(plot_err)?;
        let to_px = |x: f64, y: f64| {
            let (sx, sy) = chart.backend_coord(&(x, y));
            (f64::from(sx) - origin_x, f64::from(sy) - origin_y)
        };

        // The diagonal over the common range of both axes, under the points.
        let mut obstacles: Vec<(f64, f64)> = pts.iter().map(|&(x, y, _)| to_px(x, y)).collect();
        let (d0, d1) = (x0.max(y0), x1.min(y1));
        if self.diagonal && d1 > d0 {
            let (a, b) = (to_px(d0, d0), to_px(d1, d1));
            polyline(area, &[a, b], DIAGONAL_GREY.stroke_width(2), true)?;
            sample_segment(a, b, &mut obstacles);
        }
        match style {
            PointStyle::Translucent => {
                chart
                    .draw_series(
                        pts.iter().map(|&(x, y, c)| {
                            Circle::new((x, y), 3, color_of(c).mix(0.45).filled())
                        }),
                    )
                    .map_err(plot_err)?;
            }
            PointStyle::Classes => {
                for &c in &cats {
                    for &(x, y, _) in pts.iter().filter(|p| p.2 == c) {
                        let at = to_px(x, y);
                        draw_marker(area, marker_of(c), at, CLASS_R, color_of(c).to_rgba())?;
                    }
                }
            }
        }

        // Texts around the plot, in coordinates relative to `area`.
        let (px, py) = chart.plotting_area().get_pixel_range();
        let (px0, px1) = (f64::from(px.start) - origin_x, f64::from(px.end) - origin_x);
        let (py0, py1) = (f64::from(py.start) - origin_y, f64::from(py.end) - origin_y);
        let texts = FrameTexts {
            title: &self.title,
            x_label: &self.x_label,
            y_label: &self.y_label,
        };
        draw_frame_texts(
            area,
            (px0, py0, px1, py1),
            &texts,
            (f64::from(x_area), f64::from(y_area)),
        )?;

        if legend.entries.is_empty() {
            return Ok(());
        }
        let pos = if legend_outside {
            (px1 + 16.0, py0)
        } else {
            place_legend((px0, py0, px1, py1), (lw, lh), &obstacles).0
        };
        legend.draw(area, pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::test_util::{assert_svg_has, check_outputs, temp_dir};
    use crate::experiment::chart::{save_chart, save_chart_default};
    use std::path::Path;

    #[test]
    fn class_scatter_draws_opaque_markers_like_its_legend() {
        let dir = temp_dir("class-scatter");
        let scatter = ScatterByCategory {
            points: (0..30)
                .map(|i| (i as f64, (i as f64 * 0.7).sin(), i % 3))
                .collect(),
            category_names: vec!["a".into(), "b".into(), "c".into()],
            ..Default::default()
        };
        let (_, plain) = save_chart(&dir.join("plain"), 600, 400, &scatter).unwrap();
        let (png, svg) =
            save_chart(&dir.join("class"), 600, 400, &ClassScatter { scatter }).unwrap();
        assert!(std::fs::metadata(png).unwrap().len() > 0);
        let (plain, svg) = (
            std::fs::read_to_string(plain).unwrap(),
            std::fs::read_to_string(svg).unwrap(),
        );
        // The default points are translucent; the class markers are not.
        assert!(
            plain.contains("opacity=\"0.45\""),
            "translucent default expected"
        );
        assert!(!svg.contains("opacity=\"0.45\""));
        // Category 1 is drawn as squares and category 2 as triangles (polygons), in the plot
        // and in the legend: 10 + 1 squares and 10 + 1 triangles.
        assert_eq!(svg.matches("<polygon").count(), 22, "{svg}");
        // The palette is the qualitative one: blue, orange, green.
        for c in [
            qualitative_color(0),
            qualitative_color(1),
            qualitative_color(2),
        ] {
            let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            assert!(svg.to_uppercase().contains(&hex), "{hex}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn scatter_renders_png_and_svg() {
        let dir = temp_dir("scatter");
        let stem = dir.join("sub").join("scatter");
        let points = (0..500)
            .map(|i| {
                let x = -45.0 + (i as f64 * 0.37).sin() * 9.0;
                (x, x + 9.0 + (i as f64 * 1.3).cos(), 5 + i % 6)
            })
            .collect();
        let chart = ScatterByCategory {
            points,
            x_label: "MAP log-likelihood".into(),
            y_label: "log Z".into(),
            title: "Partition function vs MAP".into(),
            legend_title: "N leaves".into(),
            category_names: vec![],
            diagonal: false,
            x_range: None,
            y_range: None,
        };
        let (png, svg) = save_chart_default(&stem, &chart).unwrap();
        let svg = check_outputs(&dir.join("sub"), &png, &svg);
        assert!(svg.contains("N leaves = 10"), "legend missing from SVG");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_scatter_does_not_fail() {
        let dir = temp_dir("empty-scatter");
        save_chart(&dir.join("s"), 400, 300, &ScatterByCategory::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Two named categories near the diagonal.
    fn sample_diagonal_scatter() -> ScatterByCategory {
        let points = (0..300)
            .map(|i| {
                let x = -60.0 + 40.0 * ((i as f64 * 0.61).sin() * 0.5 + 0.5);
                let c = i % 2;
                let y = x + (i as f64 * 1.3).cos() * 3.0 + if c == 0 { 2.5 } else { -1.0 };
                (x, y, c)
            })
            .collect();
        ScatterByCategory {
            points,
            x_label: "greedy log-likelihood".into(),
            y_label: "trellis MAP log-likelihood".into(),
            title: "MAP vs greedy".into(),
            legend_title: "kind".into(),
            category_names: vec!["exact trellis".into(), "sparse trellis".into()],
            diagonal: true,
            ..Default::default()
        }
    }

    #[test]
    fn scatter_diagonal_and_names_render() {
        let dir = temp_dir("scatter-diag");
        let (png, svg) = save_chart_default(&dir.join("diag"), &sample_diagonal_scatter()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &["exact trellis", "sparse trellis", "y = x", "MAP vs greedy"],
        );
        assert!(
            !svg.contains("kind = "),
            "named categories still use legend_title"
        );
        // Names for some categories only, and explicit ranges that drop points.
        let chart = ScatterByCategory {
            points: vec![(0.5, 0.5, 0), (1.5, 2.0, 1), (9.0, 0.5, 3)],
            legend_title: "K".into(),
            category_names: vec!["zero".into(), "one".into()],
            x_range: Some((0.0, 2.0)),
            y_range: Some((3.0, 0.0)),
            ..Default::default()
        };
        let (png, svg) = save_chart(&dir.join("ranges"), 600, 450, &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(&svg, &["zero", "one"]);
        assert!(!svg.contains("K = 3"), "point outside x_range drawn");
        assert!(!svg.contains("y = x"), "diagonal drawn without `diagonal`");
        let ((x0, x1), (y0, y1)) = sample_diagonal_scatter().axis_ranges(&[(0.0, 5.0, 0)]);
        assert_eq!((x0, x1), (y0, y1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_scatters_do_not_fail() {
        let dir = temp_dir("degenerate-scatter");
        let diag = ScatterByCategory {
            points: vec![(1.0, f64::NAN, 0), (2.0, 2.0, 4)],
            category_names: vec!["a".into()],
            diagonal: true,
            x_range: Some((f64::INFINITY, 0.0)),
            ..Default::default()
        };
        save_chart(&dir.join("s0"), 300, 500, &diag).unwrap();
        save_chart(&dir.join("s1"), 30, 20, &diag).unwrap();
        let empty = ScatterByCategory {
            diagonal: true,
            ..Default::default()
        };
        save_chart(&dir.join("s2"), 400, 300, &empty).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the scatter samples to `/tmp/charts2/` for inspection:
    /// `cargo test --lib experiment::chart -- --ignored`.
    #[test]
    #[ignore]
    fn render_scatter_samples() {
        let dir = Path::new("/tmp/charts2");
        save_chart_default(&dir.join("scatter_diagonal"), &sample_diagonal_scatter()).unwrap();
        let named = ScatterByCategory {
            points: (0..400)
                .map(|i| {
                    let t = i as f64 * 0.37;
                    let c = i % 3;
                    (t.sin() * 3.0 + c as f64 * 2.0, t.cos() * 2.0 + c as f64, c)
                })
                .collect(),
            x_label: "first component".into(),
            y_label: "second component".into(),
            title: "Items by subtype".into(),
            legend_title: "subtype".into(),
            category_names: vec!["Basal".into(), "LumA".into(), "Her2".into()],
            ..Default::default()
        };
        save_chart_default(&dir.join("scatter_named"), &named).unwrap();
        let fig5 = ScatterByCategory {
            points: (0..500)
                .map(|i| {
                    let x = -45.0 + (i as f64 * 0.37).sin() * 9.0;
                    (x, x + 9.0 + (i as f64 * 1.3).cos(), 5 + i % 6)
                })
                .collect(),
            x_label: "MAP log-likelihood".into(),
            y_label: "log Z".into(),
            title: "Partition function vs MAP".into(),
            legend_title: "N leaves".into(),
            ..Default::default()
        };
        save_chart_default(&dir.join("scatter_fig5"), &fig5).unwrap();
    }
}
