//! Lines of series (solid or dashed, with or without markers), with an
//! optional log y axis.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{padded_range, TickAxis};
use super::color::qualitative_color;
use super::frame::{blank, draw_axis_chart_ticks, max_y_ticks, to_pixels, FrameTexts, TickChart};
use super::legend::{sample_segment, Legend, Swatch};
use super::shapes::{draw_marker, line, polyline_dash, Dash, Marker, DASHES, MARKERS};
use super::Chart;

/// One series of a [`LineChart`].
#[derive(Debug, Clone, Default)]
pub struct LineSeries {
    /// Legend name; series with an empty name get no legend entry.
    pub name: String,
    /// The points `(x, y)`, connected in the given order; non-finite points
    /// (and, on a log axis, points with `y <= 0`) are skipped and break the line.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (for reference curves such as "3^N slope" or "(2N-3)!! trees"), solid otherwise.
    pub dashed: bool,
    /// Draw a marker at each point (for measured data).
    pub markers: bool,
}

/// Lines (e.g. wall time against problem size with reference curves), with
/// an optional log y axis labelled at powers of ten (`10³`, `2×10⁻¹`).
/// Series get colours from [`qualitative_color`] in order; series with
/// markers also get distinct marker shapes. Axis ranges cover every
/// drawable point; the legend goes into the plot region covering the least
/// data, or to the right of the plot if every region is occupied.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    /// The series, drawn in order (later ones on top).
    pub series: Vec<LineSeries>,
    /// Title drawn above the plot.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Logarithmic y axis (base 10), e.g. wall time against N.
    pub log_y: bool,
    /// Integer ticks on the x axis (e.g. N = 8, 10, ..., 22).
    pub integer_x: bool,
}

/// Options of a [`LineChart`] beyond its fields; draw with [`LineChart::with`].
#[derive(Debug, Clone, Default)]
pub struct LineOptions {
    /// Labelled x ticks at exactly these values (those inside the x range), with no minor
    /// ticks, instead of evenly spaced ones: e.g. only at the sizes N that were measured.
    pub x_ticks: Option<Vec<f64>>,
}

/// A [`LineChart`] drawn with [`LineOptions`] (see [`LineChart::with`]), and optionally with
/// error bars ([`LineChartWith::error_bars`]).
#[derive(Debug, Clone)]
pub struct LineChartWith<'c> {
    chart: &'c LineChart,
    options: LineOptions,
    errors: Vec<Vec<f64>>,
}

impl Chart for LineChartWith<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        self.chart.draw_with(area, &self.options, &self.errors)
    }
}

impl LineChartWith<'_> {
    /// Vertical error bars: `errors[s][k]` is the half-length of the bar at point `k` of series
    /// `s` (y ± it, in data units, drawn in the series' colour with short caps; a missing,
    /// non-finite or zero value draws none). The y axis covers the bars.
    pub fn error_bars(mut self, errors: Vec<Vec<f64>>) -> Self {
        self.errors = errors;
        self
    }
}

impl LineChart {
    /// This chart drawn with `options`, e.g. `save_chart(path, w, h, &chart.with(options))`.
    pub fn with(&self, options: LineOptions) -> LineChartWith<'_> {
        LineChartWith {
            chart: self,
            options,
            errors: Vec::new(),
        }
    }

    /// Drawable runs of each series, in axis units (log10 of y on a log axis).
    fn runs(&self) -> Vec<Vec<Vec<(f64, f64)>>> {
        self.series
            .iter()
            .map(|s| {
                let mut runs = vec![Vec::new()];
                for &(x, y) in &s.points {
                    let y = if self.log_y {
                        if y > 0.0 {
                            y.log10()
                        } else {
                            f64::NAN
                        }
                    } else {
                        y
                    };
                    if x.is_finite() && y.is_finite() {
                        if let Some(run) = runs.last_mut() {
                            run.push((x, y));
                        }
                    } else if runs.last().is_some_and(|r| !r.is_empty()) {
                        runs.push(Vec::new());
                    }
                }
                runs.retain(|r| !r.is_empty());
                runs
            })
            .collect()
    }
}

impl Chart for LineChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        self.draw_with(area, &LineOptions::default(), &[])
    }
}

impl LineChart {
    /// Colour, dash pattern and marker of every series, so that no two series differ by colour
    /// alone: series with markers get distinct shapes; dashed series get distinct patterns
    /// ([`DASHES`] in order); the first solid series without markers stays solid and any later
    /// one takes the next pattern too.
    fn styles(&self) -> Vec<(RGBColor, Dash, Option<Marker>)> {
        let (mut k_marker, mut k_dash, mut plain_seen) = (0, 0, false);
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let marker = s.markers.then(|| {
                    k_marker += 1;
                    MARKERS[(k_marker - 1) % MARKERS.len()]
                });
                let needs_pattern =
                    s.dashed || (!s.markers && std::mem::replace(&mut plain_seen, true));
                let dash = needs_pattern.then(|| {
                    k_dash += 1;
                    DASHES[(k_dash - 1) % DASHES.len()]
                });
                (qualitative_color(i), dash.flatten(), marker)
            })
            .collect()
    }

    /// The error bars of `errors` (see [`LineChartWith::error_bars`]) in axis units: per series,
    /// `(x, y_low, y_high)` of each drawable bar.
    fn bars(&self, errors: &[Vec<f64>]) -> Vec<Vec<(f64, f64, f64)>> {
        let axis = |y: f64| {
            if !self.log_y {
                y
            } else if y > 0.0 {
                y.log10()
            } else {
                f64::NAN
            }
        };
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.points
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &(x, y))| {
                        let e = errors.get(i)?.get(k).copied()?;
                        let (lo, hi) = (axis(y - e), axis(y + e));
                        (e.is_finite() && e > 0.0 && x.is_finite())
                            .then_some((x, lo, hi))
                            .filter(|_| lo.is_finite() && hi.is_finite())
                    })
                    .collect()
            })
            .collect()
    }

    fn draw_with<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        options: &LineOptions,
        errors: &[Vec<f64>],
    ) -> Result<()> {
        blank(area)?;
        let runs = self.runs();
        let bars = self.bars(errors);
        let bar_ends = bars
            .iter()
            .flatten()
            .flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]);
        let all = || {
            runs.iter()
                .flatten()
                .flatten()
                .copied()
                .chain(bar_ends.clone())
        };

        let y_axis = if self.log_y {
            let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p.1), hi.max(p.1))
            });
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (-1.0, 1.0) };
            let pad = (0.04 * (hi - lo)).max(0.1);
            TickAxis::log10(lo - pad, hi + pad, max_y_ticks(area, &self.title, 9))
        } else {
            let (y0, y1) = padded_range(all().map(|p| p.1), 0.05);
            TickAxis::linear(y0, y1, max_y_ticks(area, &self.title, 9), false)
        };
        let x_range = padded_range(all().map(|p| p.0), 0.04);

        let styles = self.styles();
        let legend = Legend {
            entries: self
                .series
                .iter()
                .zip(&styles)
                .filter(|(s, _)| !s.name.is_empty())
                .map(|(s, &(color, dash, marker))| {
                    (
                        Swatch::Line {
                            color,
                            dash,
                            marker,
                        },
                        s.name.clone(),
                    )
                })
                .collect(),
        };
        let obstacles = |chart: &TickChart<'_, DB>| {
            let px = to_pixels(area, chart);
            let mut obstacles = Vec::new();
            for run in runs.iter().flatten() {
                for w in run.windows(2) {
                    sample_segment(px(w[0].0, w[0].1), px(w[1].0, w[1].1), &mut obstacles);
                }
                if let [p] = run[..] {
                    obstacles.push(px(p.0, p.1));
                }
            }
            obstacles
        };
        let texts = FrameTexts {
            title: &self.title,
            x_label: &self.x_label,
            y_label: &self.y_label,
        };
        let x = (x_range, self.integer_x);
        let x_ticks = options.x_ticks.as_deref();
        draw_axis_chart_ticks(
            area,
            &texts,
            x,
            x_ticks,
            &y_axis,
            &legend,
            obstacles,
            |_, px| {
                for (bars, &(color, _, _)) in bars.iter().zip(&styles) {
                    for &(x, lo, hi) in bars {
                        let (a, b) = (px(x, lo), px(x, hi));
                        let style = color.stroke_width(1);
                        line(area, a, b, style)?;
                        for end in [a, b] {
                            line(area, (end.0 - 4.0, end.1), (end.0 + 4.0, end.1), style)?;
                        }
                    }
                }
                for (runs, &(color, dash, marker)) in runs.iter().zip(&styles) {
                    for run in runs {
                        let pts: Vec<(f64, f64)> = run.iter().map(|&(x, y)| px(x, y)).collect();
                        polyline_dash(area, &pts, color.stroke_width(2), dash)?;
                        if let Some(m) = marker {
                            for &p in &pts {
                                draw_marker(area, m, p, 4.5, color.to_rgba())?;
                            }
                        }
                    }
                }
                Ok(())
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::save_chart;
    use crate::experiment::chart::test_util::{check_outputs, temp_dir};

    /// A scaling chart: measured times, a fit and a reference reaching 1e17 s.
    fn sample_lines() -> LineChart {
        let measured: Vec<(f64, f64)> = (8..=20)
            .map(|n| (f64::from(n), 0.0001 * 3f64.powi(n - 8) / 2.0))
            .collect();
        let fit = (8..=22)
            .map(|n| (f64::from(n), 0.00006 * 3f64.powi(n - 8)))
            .collect();
        let trees = (8..=22)
            .map(|n| {
                let double_factorial: f64 = (1..=(2 * n - 3)).step_by(2).map(f64::from).product();
                (f64::from(n), double_factorial * 1e-8)
            })
            .collect();
        LineChart {
            series: vec![
                LineSeries {
                    name: "trellis (measured)".into(),
                    points: measured,
                    dashed: false,
                    markers: true,
                },
                LineSeries {
                    name: "c\u{b7}3^N fit".into(),
                    points: fit,
                    dashed: true,
                    markers: false,
                },
                LineSeries {
                    name: "(2N\u{2212}3)!! trees \u{d7} 10 ns".into(),
                    points: trees,
                    dashed: true,
                    markers: false,
                },
            ],
            title: "Wall time against N".into(),
            x_label: "number of leaves N".into(),
            y_label: "wall time (s)".into(),
            log_y: true,
            integer_x: true,
        }
    }

    #[test]
    fn line_chart_renders_png_and_svg() {
        let dir = temp_dir("lines");
        let chart = sample_lines();
        let (png, svg) = save_chart(&dir.join("scaling"), 900, 700, &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert!(
            svg.contains("(2N\u{2212}3)!! trees"),
            "legend missing from SVG"
        );
        assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 40);
        // Linear axes, with scientific tick labels for the large values.
        let linear = LineChart {
            log_y: false,
            ..chart
        };
        let (png, svg) = save_chart(&dir.join("linear"), 900, 700, &linear).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert!(svg.contains("\u{d7}10"), "scientific tick labels missing");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn explicit_x_ticks_label_only_those_values() {
        let dir = temp_dir("lines-ticks");
        let chart = LineChart {
            series: vec![LineSeries {
                name: "measured".into(),
                points: vec![(8.0, 1.0), (10.0, 2.0), (12.0, 4.0)],
                dashed: false,
                markers: true,
            }],
            integer_x: true,
            ..Default::default()
        };
        let tick_labels = |svg: &str| -> Vec<u32> {
            (7..=13)
                .filter(|n| svg.contains(&format!(">\n{n}\n<")))
                .collect()
        };
        let (_, svg) = save_chart(&dir.join("even"), 900, 600, &chart).unwrap();
        let even = tick_labels(&std::fs::read_to_string(svg).unwrap());
        assert!(even.contains(&9) && even.contains(&11), "{even:?}");
        let options = LineOptions {
            x_ticks: Some(vec![12.0, 8.0, 10.0, 40.0]),
        };
        let (png, svg) = save_chart(&dir.join("ticks"), 900, 600, &chart.with(options)).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_eq!(tick_labels(&svg), vec![8, 10, 12]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn error_bars_draw_a_bar_and_two_caps_each_and_widen_the_axis() {
        let dir = temp_dir("lines-errors");
        let chart = LineChart {
            series: vec![LineSeries {
                name: "measured".into(),
                points: vec![(1.0, 1.0), (2.0, 2.0), (3.0, 1.5)],
                dashed: false,
                markers: false,
            }],
            ..Default::default()
        };
        let lines = |svg: &str| svg.matches("<polyline").count();
        let (_, plain) = save_chart(
            &dir.join("plain"),
            600,
            400,
            &chart.with(LineOptions::default()),
        )
        .unwrap();
        let plain = std::fs::read_to_string(plain).unwrap();
        // One bar of half-length 5 at x = 1 (the axis must reach 6 and −4); 0, NaN and a
        // missing value draw nothing.
        let bars = vec![vec![5.0, 0.0, f64::NAN]];
        let (png, svg) = save_chart(
            &dir.join("bars"),
            600,
            400,
            &chart.with(LineOptions::default()).error_bars(bars),
        )
        .unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_eq!(lines(&svg), lines(&plain) + 3);
        assert!(
            svg.contains(">\n6\n<") && svg.contains(">\n\u{2212}4\n<"),
            "the y axis does not cover the bar"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_line_charts_do_not_fail() {
        let dir = temp_dir("degenerate-lines");
        save_chart(&dir.join("l0"), 400, 300, &LineChart::default()).unwrap();
        let odd = LineChart {
            series: vec![
                LineSeries {
                    name: "non-positive".into(),
                    points: vec![(1.0, 0.0), (2.0, -1.0), (f64::NAN, 1.0)],
                    dashed: true,
                    markers: true,
                },
                LineSeries {
                    name: String::new(),
                    points: vec![(5.0, 3e-3)],
                    dashed: false,
                    markers: true,
                },
            ],
            log_y: true,
            integer_x: true,
            ..Default::default()
        };
        save_chart(&dir.join("l1"), 300, 200, &odd).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
