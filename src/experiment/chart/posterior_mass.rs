//! Exact posterior mass as stems against sampled frequencies as markers.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{padded_range, TickAxis};
use super::color::qualitative_color;
use super::frame::{
    blank, draw_axis_chart, max_y_ticks, plot_rect, to_pixels, FrameTexts, PxRect, TickChart,
};
use super::legend::{sample_segment, Legend, Swatch};
use super::shapes::{draw_marker, fill_rect, line, polyline, pt, Marker, MARKERS, STEM_W};
use super::text::{Label, TICK_SIZE};
use super::{plot_err, Chart};

/// Exact posterior mass against log-likelihood compared with sampled
/// frequencies (Figure 6 of the Cluster Trellis paper: exact posterior
/// sampling). The exact mass is drawn as green stems with a tick on top, each
/// sample set as markers (black circles, orange crosses, blue diamonds, ...),
/// the truth tree's log-likelihood as a dashed red vertical line that stops
/// above the data at its value (so the stem beneath it stays visible), ending in
/// a red arrowhead; the MAP tree's stem, if `map` is given, is drawn in purple
/// and labelled "MAP". The legend lists every series and goes into the plot
/// region covering the least data. With `log_y` the probability axis is
/// logarithmic, so the agreement shows for the least probable trees too; stems
/// then rise from the axis's floor, and zero frequencies (which have no place on
/// it) are counted in their set's legend entry.
///
/// `exact` and each frequency vector are matched to `values` by index
/// (entries beyond the shorter length are ignored); non-finite entries are
/// skipped.
#[derive(Debug, Clone, Default)]
pub struct PosteriorMassChart {
    /// Distinct log-likelihood values (x positions), ascending.
    pub values: Vec<f64>,
    /// Exact posterior probability mass at each value (sums to 1).
    pub exact: Vec<f64>,
    /// Named sets of empirical frequencies at each value (each sums to 1), e.g.
    /// ("trellis sampler, 100,000 draws", freqs) and ("reference sampler, 20,000 draws", freqs).
    pub samples: Vec<(String, Vec<f64>)>,
    /// Log-likelihood of the truth tree, drawn as a labelled vertical line, if known.
    pub truth: Option<f64>,
    /// Title drawn above the plot.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Legend name of the exact series, e.g. "exact posterior mass".
    pub exact_label: String,
    /// Logarithmic probability axis (base 10).
    pub log_y: bool,
    /// Log-likelihood of the MAP tree, whose stem is drawn in its own colour, if given.
    pub map: Option<f64>,
}

impl PosteriorMassChart {
    /// Colour, shape and opacity of sample set `k`.
    fn sample_style(k: usize) -> (Marker, RGBColor, f64) {
        match k {
            0 => (Marker::Circle, BLACK, 0.8),
            1 => (Marker::Cross, RGBColor(235, 120, 0), 1.0),
            2 => (Marker::Diamond, RGBColor(40, 90, 210), 0.7),
            3 => (Marker::Triangle, RGBColor(150, 40, 160), 0.7),
            _ => (MARKERS[k % MARKERS.len()], qualitative_color(k + 1), 0.7),
        }
    }

    /// `(value, y)` pairs with both finite.
    fn pairs<'s>(&'s self, ys: &'s [f64]) -> impl Iterator<Item = (f64, f64)> + 's {
        self.values
            .iter()
            .zip(ys)
            .map(|(&x, &y)| (x, y))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }
}

impl PosteriorMassChart {
    /// Where the "truth" label goes for a truth line at pixel `sx`: anchor
    /// point, horizontal anchor and the label's pixel extent `(x0, x1)`.
    fn truth_label(
        sx: f64,
        (_, py0, px1, _): PxRect,
        label: &Label,
    ) -> ((f64, f64), HPos, (f64, f64)) {
        let (w, cap) = (label.width(), label.cap_height());
        let ty = py0 + 8.0 + cap / 2.0;
        if sx + 6.0 + w <= px1 - 4.0 {
            ((sx + 6.0, ty), HPos::Left, (sx + 6.0, sx + 6.0 + w))
        } else {
            ((sx - 6.0, ty), HPos::Right, (sx - 6.0 - w, sx - 6.0))
        }
    }

    fn legend(&self, (green, purple, red): (RGBColor, RGBColor, RGBColor)) -> Legend {
        let mut entries = Vec::new();
        if !self.exact.is_empty() {
            let name = if self.exact_label.is_empty() {
                "exact posterior mass"
            } else {
                &self.exact_label
            };
            entries.push((Swatch::Stem { color: green }, name.to_owned()));
            if self.map.is_some_and(f64::is_finite) {
                let name = format!("MAP tree, {name}");
                entries.push((Swatch::Stem { color: purple }, name));
            }
        }
        for (k, (name, freqs)) in self.samples.iter().enumerate() {
            let (marker, color, alpha) = Self::sample_style(k);
            // On a log axis, zero frequencies have no place: say how many.
            let zeros = self.pairs(freqs).filter(|&(_, f)| f <= 0.0).count();
            let name = if self.log_y && zeros > 0 {
                format!("{name} ({zeros} at frequency 0, not shown)")
            } else {
                name.clone()
            };
            entries.push((
                Swatch::Marker {
                    marker,
                    color: color.mix(alpha.max(0.8)),
                    r: if marker == Marker::Cross { 4.0 } else { 4.5 },
                },
                name,
            ));
        }
        if self.truth.is_some_and(f64::is_finite) {
            entries.push((
                Swatch::VLine {
                    color: red,
                    dashed: true,
                },
                "truth tree".to_owned(),
            ));
        }
        Legend { entries }
    }

    /// A probability in axis units (log10 on a log axis; NaN where it has no place).
    fn y(&self, p: f64) -> f64 {
        match (self.log_y, p > 0.0) {
            (false, _) => p.max(0.0),
            (true, true) => p.log10(),
            (true, false) => f64::NAN,
        }
    }

    /// The highest probability drawn at the value `x` (exact mass or a frequency), if any.
    fn top_at(&self, x: f64) -> Option<f64> {
        let near = |v: f64| (v - x).abs() <= 1e-9 * x.abs().max(1.0);
        self.pairs(&self.exact)
            .chain(self.samples.iter().flat_map(|(_, f)| self.pairs(f)))
            .filter(|&(v, p)| near(v) && self.y(p).is_finite())
            .map(|(_, p)| p)
            .reduce(f64::max)
    }
}

impl Chart for PosteriorMassChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let green = RGBColor(0, 150, 70);
        let purple = RGBColor(118, 42, 131);
        let red = RGBColor(215, 25, 28);
        let truth = self.truth.filter(|t| t.is_finite());
        let map = self.map.filter(|m| m.is_finite());
        let truth_text = Label::new("truth", TICK_SIZE).color(red);
        let map_text = Label::new("MAP", TICK_SIZE).color(purple);

        let xs = self
            .values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .chain(truth);
        let x_range = padded_range(xs, 0.04);
        let ys = || {
            self.pairs(&self.exact)
                .chain(self.samples.iter().flat_map(|(_, f)| self.pairs(f)))
                .map(|p| self.y(p.1))
                .filter(|y| y.is_finite())
        };
        let max_ticks = max_y_ticks(area, &self.title, 8);
        let y_axis = if self.log_y {
            let lo = ys().fold(f64::INFINITY, f64::min);
            let hi = ys().fold(f64::NEG_INFINITY, f64::max);
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (-1.0, 0.0) };
            // Room above the largest mass for the truth label and arrow.
            TickAxis::log10(lo - 0.2, hi + 0.45, max_ticks)
        } else {
            let y_max = ys().fold(0.0, f64::max);
            let y_max = if y_max > 0.0 { y_max } else { 1.0 };
            TickAxis::linear(0.0, 1.1 * y_max, max_ticks, false)
        };
        let floor = y_axis.lo;

        let legend = self.legend((green, purple, red));
        // The truth line: from the top of the plot down to just above the data at its value.
        let truth_end = |px: &dyn Fn(f64, f64) -> (f64, f64), t: f64, (_, py0, _, py1): PxRect| {
            self.top_at(t)
                .map_or(py1, |p| px(t, self.y(p)).1 - 12.0)
                .max(py0)
        };
        let obstacles = |chart: &TickChart<'_, DB>| {
            let px = to_pixels(area, chart);
            let plot = plot_rect(area, chart);
            let mut obstacles = Vec::new();
            for (x, m) in self.pairs(&self.exact) {
                let y = self.y(m);
                if y.is_finite() {
                    sample_segment(px(x, floor), px(x, y), &mut obstacles);
                }
            }
            for (_, freqs) in &self.samples {
                obstacles.extend(
                    self.pairs(freqs)
                        .filter(|&(_, f)| self.y(f).is_finite())
                        .map(|(x, f)| px(x, self.y(f))),
                );
            }
            if let Some(t) = truth {
                let (sx, _) = px(t, floor);
                sample_segment((sx, plot.1), (sx, truth_end(&px, t, plot)), &mut obstacles);
                let ((_, ty), _, (lx0, lx1)) = Self::truth_label(sx, plot, &truth_text);
                sample_segment((lx0, ty), (lx1, ty), &mut obstacles);
            }
            obstacles
        };
        let texts = FrameTexts {
            title: &self.title,
            x_label: &self.x_label,
            y_label: &self.y_label,
        };
        let x = (x_range, false);
        draw_axis_chart(area, &texts, x, &y_axis, &legend, obstacles, |plot, px| {
            let (px0, py0, px1, _) = plot;
            // Marker size from the typical spacing of the values.
            let spacing = (px1 - px0) / self.values.len().max(1) as f64;
            let r = (0.5 * spacing).clamp(3.0, 4.5);
            let is_map = |x: f64| map.is_some_and(|m| (x - m).abs() <= 1e-9 * m.abs().max(1.0));

            // Exact mass: stems with a short horizontal tick on top, wider than
            // the sample markers so it stays visible beside them; the MAP's in purple.
            let mut map_top = None;
            for (x, m) in self.pairs(&self.exact) {
                let y = self.y(m);
                if !y.is_finite() {
                    continue;
                }
                let (sx, top) = px(x, y);
                let (_, bottom) = px(x, floor);
                let color = if is_map(x) { purple } else { green };
                line(area, (sx, bottom), (sx, top), color.stroke_width(STEM_W))?;
                fill_rect(
                    area,
                    (sx - r - 2.0, top - 1.0),
                    (sx + r + 2.0, top + 1.0),
                    color.filled(),
                )?;
                if is_map(x) {
                    map_top = Some((sx, top));
                }
            }
            // Sample frequencies; crosses are smaller than circles so both show
            // where they coincide.
            for (k, (_, freqs)) in self.samples.iter().enumerate() {
                let (marker, color, alpha) = Self::sample_style(k);
                let rk = if marker == Marker::Cross { 0.8 * r } else { r };
                for (x, f) in self.pairs(freqs) {
                    let y = self.y(f);
                    if y.is_finite() {
                        draw_marker(area, marker, px(x, y), rk, color.mix(alpha))?;
                    }
                }
            }
            // "MAP" beside its stem's top, on the side with room (the MAP is the largest value).
            if let Some((sx, top)) = map_top {
                let (hpos, lx) = if sx - px0 > map_text.width() + r + 12.0 {
                    (HPos::Right, sx - r - 8.0)
                } else {
                    (HPos::Left, sx + r + 8.0)
                };
                map_text
                    .clone()
                    .anchor(hpos, VPos::Center)
                    .draw(area, pt(lx, top + 0.5 * map_text.cap_height() + 6.0))?;
            }
            // Truth line with a label at its top, stopping above the data with an arrowhead.
            if let Some(t) = truth {
                let (sx, _) = px(t, floor);
                let end = truth_end(px, t, plot);
                polyline(
                    area,
                    &[(sx, py0), (sx, end - 6.0)],
                    red.stroke_width(2),
                    true,
                )?;
                area.draw(&Polygon::new(
                    vec![
                        pt(sx - 5.0, end - 8.0),
                        pt(sx + 5.0, end - 8.0),
                        pt(sx, end),
                    ],
                    red.filled(),
                ))
                .map_err(plot_err)?;
                let (at, hpos, _) = Self::truth_label(sx, plot, &truth_text);
                truth_text
                    .clone()
                    .anchor(hpos, VPos::Center)
                    .draw(area, pt(at.0, at.1))?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::test_util::{assert_svg_has, check_outputs, temp_dir};
    use crate::experiment::chart::{save_chart, save_chart_default};

    /// Figure 6-like data: 90 log-likelihood values in -40..-26 with softmax
    /// masses and two noisy sample sets.
    fn sample_posterior() -> PosteriorMassChart {
        let values: Vec<f64> = (0..90)
            .map(|i| -40.0 + 14.0 * (i as f64 / 89.0).powf(0.8))
            .collect();
        let z: f64 = values.iter().map(|v| (v + 26.0).exp()).sum();
        let exact: Vec<f64> = values.iter().map(|v| (v + 26.0).exp() / z).collect();
        let noisy = |phase: f64| -> Vec<f64> {
            let f: Vec<f64> = exact
                .iter()
                .enumerate()
                .map(|(i, &p)| p * (1.0 + 0.1 * (i as f64 * 1.7 + phase).sin()))
                .collect();
            let total: f64 = f.iter().sum();
            f.iter().map(|x| x / total).collect()
        };
        PosteriorMassChart {
            samples: vec![
                ("trellis sampler, 100,000 draws".into(), noisy(0.0)),
                ("reference sampler, 20,000 draws".into(), noisy(2.0)),
            ],
            values,
            exact,
            truth: Some(-26.95),
            title: "Exact posterior sampling".into(),
            x_label: "log-likelihood".into(),
            y_label: "posterior probability".into(),
            exact_label: "exact posterior mass".into(),
            log_y: false,
            map: None,
        }
    }

    #[test]
    fn posterior_mass_renders_png_and_svg() {
        let dir = temp_dir("posterior");
        let (png, svg) = save_chart_default(&dir.join("fig6"), &sample_posterior()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &[
                "exact posterior mass",
                "trellis sampler, 100,000 draws",
                "reference sampler, 20,000 draws",
                "truth tree",
                ">\ntruth\n<",
            ],
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn log_axis_marks_the_map_and_counts_zero_frequencies() {
        let dir = temp_dir("posterior-log");
        let mut chart = sample_posterior();
        chart.log_y = true;
        chart.map = chart.values.last().copied();
        chart.samples[1].1[0] = 0.0;
        chart.samples[1].1[3] = 0.0;
        let (png, svg) = save_chart_default(&dir.join("fig6log"), &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &[
                "MAP tree, exact posterior mass",
                "reference sampler, 20,000 draws (2 at frequency 0, not shown)",
                ">\nMAP\n<",
                ">\ntruth\n<",
            ],
        );
        // The trellis sampler has no zero frequency, so its legend entry is unchanged.
        assert!(svg.contains(">\ntrellis sampler, 100,000 draws\n<"));
        // The smallest mass (about 1e-7) is on the axis: a power of ten labels its decade or
        // the next one.
        let min = chart.exact.iter().copied().fold(f64::INFINITY, f64::min);
        let decade = min.log10().floor() as i32;
        let exponent = |e: i32| format!(">\n\u{2212}{}\n<", -e);
        assert!(
            svg.contains(&exponent(decade)) || svg.contains(&exponent(decade + 1)),
            "no tick near 10^{decade}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_posterior_charts_do_not_fail() {
        let dir = temp_dir("degenerate-posterior");
        save_chart(&dir.join("p0"), 400, 300, &PosteriorMassChart::default()).unwrap();
        let odd = PosteriorMassChart {
            values: vec![-3.0, f64::NAN, -1.0],
            exact: vec![0.5, 0.5],
            samples: vec![("s".into(), vec![0.0, 1.0, f64::INFINITY, 7.0])],
            truth: Some(f64::NAN),
            log_y: true,
            map: Some(-1.0),
            ..Default::default()
        };
        save_chart(&dir.join("p1"), 300, 200, &odd).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
