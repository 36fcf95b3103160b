//! Grouped bars of counts over whole-number categories (e.g. how many replicates have k children
//! at the root, per model): one bar per series side by side at each category, a y axis from 0
//! with whole-number ticks when every value is whole.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::TickAxis;
use super::color::qualitative_color;
use super::frame::{blank, draw_axis_chart, max_y_ticks, to_pixels, FrameTexts};
use super::legend::{Legend, Swatch};
use super::shapes::fill_rect;
use super::Chart;

/// One series of a [`BarChart`]: a value per category (in the chart's category order).
#[derive(Debug, Clone, Default)]
pub struct BarSeries {
    /// Legend name.
    pub name: String,
    /// The value at each of the chart's categories (non-finite: no bar).
    pub values: Vec<f64>,
}

/// Bars grouped by whole-number category (x), one colour per series.
#[derive(Debug, Clone, Default)]
pub struct BarChart {
    /// The categories, drawn at their values on the x axis (whole-number ticks).
    pub categories: Vec<i64>,
    /// The series, side by side within each category in this order.
    pub series: Vec<BarSeries>,
    /// Title drawn above the plot.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
}

impl Chart for BarChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let values = || self.series.iter().flat_map(|s| s.values.iter().copied());
        let top = values().filter(|v| v.is_finite()).fold(0.0f64, f64::max);
        let whole = values().filter(|v| v.is_finite()).all(|v| v.fract() == 0.0);
        let top = if top > 0.0 { top } else { 1.0 };
        let y_axis = TickAxis::linear(0.0, top * 1.08, max_y_ticks(area, &self.title, 9), whole);
        let (lo, hi) = (
            self.categories.iter().copied().min().unwrap_or(0) as f64 - 0.6,
            self.categories.iter().copied().max().unwrap_or(1) as f64 + 0.6,
        );
        let n = self.series.len().max(1) as f64;
        let width = 0.8 / n;
        // The bars as data rectangles (x0, x1, height) with their colours.
        let bars: Vec<(f64, f64, f64, RGBColor)> = self
            .series
            .iter()
            .enumerate()
            .flat_map(|(g, s)| {
                self.categories
                    .iter()
                    .zip(&s.values)
                    .filter(|(_, v)| v.is_finite())
                    .map(move |(&k, &v)| {
                        let x0 = k as f64 - 0.4 + g as f64 * width;
                        (x0, x0 + width, v, qualitative_color(g))
                    })
            })
            .collect();
        let legend = Legend {
            entries: self
                .series
                .iter()
                .enumerate()
                .map(|(g, s)| {
                    (
                        Swatch::Bar {
                            color: qualitative_color(g),
                        },
                        s.name.clone(),
                    )
                })
                .collect(),
        };
        let obstacles = |chart: &_| {
            let px = to_pixels(area, chart);
            let mut out = Vec::new();
            for &(x0, x1, v, _) in &bars {
                for k in 0..=8 {
                    let x = x0 + (x1 - x0) * f64::from(k) / 8.0;
                    for j in 0..=8 {
                        out.push(px(x, v * f64::from(j) / 8.0));
                    }
                }
            }
            out
        };
        let texts = FrameTexts {
            title: &self.title,
            x_label: &self.x_label,
            y_label: &self.y_label,
        };
        draw_axis_chart(
            area,
            &texts,
            ((lo, hi), true),
            &y_axis,
            &legend,
            obstacles,
            |_, px| {
                for &(x0, x1, v, color) in &bars {
                    let (a, b) = (px(x0, 0.0), px(x1, v));
                    fill_rect(area, (a.0 + 1.0, b.1), (b.0 - 1.0, a.1), color.filled())?;
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

    #[test]
    fn bar_chart_draws_one_rect_per_finite_value_with_whole_ticks() {
        let dir = temp_dir("bars");
        let chart = BarChart {
            categories: vec![2, 3, 4],
            series: vec![
                BarSeries {
                    name: "DDT".into(),
                    values: vec![3.0, 0.0, 0.0],
                },
                BarSeries {
                    name: "PYDT".into(),
                    values: vec![0.0, 1.0, f64::NAN],
                },
            ],
            title: "children of the root over 3 replicates".into(),
            x_label: "children of the root".into(),
            y_label: "replicates".into(),
        };
        let (png, svg) = save_chart(&dir.join("bars"), 700, 450, &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        for name in ["DDT", "PYDT", "replicates"] {
            assert!(svg.contains(name), "{name} missing");
        }
        // Whole counts: no fractional tick labels.
        assert!(!svg.contains(">0.5<") && !svg.contains(">1.5<") && !svg.contains(">2.5<"));
        save_chart(&dir.join("empty"), 300, 200, &BarChart::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
