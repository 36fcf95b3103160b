//! Axes with explicit ticks ([`TickAxis`]: linear, scientific or log10),
//! their tick labels, and axis ranges.

use anyhow::Result;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::format::{format_number, format_tick, typographic_minus};
use super::frame::label_areas;
use super::shapes::pt;
use super::text::{Label, TICK_SIZE};

/// `[min, max]` of `values` padded by `frac` of the span on each side; never
/// empty (a single value gets a pad of `frac` of its magnitude, at least `frac`).
pub fn padded_range(values: impl IntoIterator<Item = f64>, frac: f64) -> (f64, f64) {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * frac
    } else {
        lo.abs().max(1.0) * frac.max(0.05)
    };
    (lo - pad, hi + pad)
}

/// `range` ordered low to high if both ends are finite and distinct.
pub(super) fn valid_range(range: Option<(f64, f64)>) -> Option<(f64, f64)> {
    let (a, b) = range?;
    (a.is_finite() && b.is_finite() && a != b).then(|| (a.min(b), a.max(b)))
}

/// A linear axis over `lo..hi` (data units; log10 of the data for a log axis)
/// with explicit major (labelled, bold grid) and minor (light grid) ticks.
#[derive(Debug, Clone)]
pub(super) struct TickAxis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) major: Vec<f64>,
    pub(super) minor: Vec<f64>,
    /// Ticks are powers of ten of the values (log axis).
    log: bool,
    /// Linear axis labelled in scientific notation (`m×10^e`), with this
    /// decade of the tick step (so mantissas get enough decimals).
    sci: Option<i32>,
}

impl Ranged for TickAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let t = if span > 0.0 {
            (value - self.lo) / span
        } else {
            0.5
        };
        (f64::from(limit.0) + t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let mut points = self.major.clone();
        if hint.weight().allow_light_points() {
            points.extend_from_slice(&self.minor);
            points.sort_by(f64::total_cmp);
        }
        points
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Multiples `k * step` inside `[lo, hi]` (with a little tolerance).
fn multiples(lo: f64, hi: f64, step: f64) -> impl Iterator<Item = (i64, f64)> {
    let a = (lo / step - 1e-9).ceil() as i64;
    let b = (hi / step + 1e-9).floor() as i64;
    (a..=b).map(move |k| (k, k as f64 * step))
}

impl TickAxis {
    /// A linear axis with at most `max_ticks` labelled ticks at 1-2-5 steps
    /// (whole numbers only if `integer`).
    pub(super) fn linear(lo: f64, hi: f64, max_ticks: usize, integer: bool) -> Self {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (0.0, 1.0)
        };
        let raw = (hi - lo) / max_ticks.max(1) as f64;
        let mag = 10f64.powf(raw.log10().floor());
        // Step 1, 2 or 5 times a power of ten, with minor ticks dividing it.
        let (norm, mut div) = [(1.0, 5), (2.0, 4), (5.0, 5), (10.0, 5)]
            .into_iter()
            .find(|&(m, _)| m * mag >= raw * (1.0 - 1e-9))
            .unwrap_or((10.0, 5));
        let mut step = norm * mag;
        if integer && step < 1.0 {
            (step, div) = (1.0, 1);
        }
        let major: Vec<f64> = multiples(lo, hi, step).map(|(_, v)| v).collect();
        let max_abs = major.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let sci = (max_abs >= 1e6 || step < 1e-3).then(|| step.log10().floor() as i32);
        if integer {
            // Minor ticks at whole numbers only.
            div = [div, 5, 4, 2]
                .into_iter()
                .find(|&d| (step / f64::from(d)).fract() == 0.0)
                .unwrap_or(1);
        }
        let minor_step = step / f64::from(div);
        let minor = if div > 1 {
            multiples(lo, hi, minor_step)
                .filter(|(k, _)| k % i64::from(div) != 0)
                .map(|(_, v)| v)
                .collect()
        } else {
            Vec::new()
        };
        Self {
            lo,
            hi,
            major,
            minor,
            log: false,
            sci,
        }
    }

    /// A linear x axis for `area` with at most 10 labelled ticks, fewer if
    /// the labels would crowd the plot width (estimated from `y_axis` and
    /// `reserved` pixels taken by a legend beside the plot).
    pub(super) fn linear_x<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        (lo, hi): (f64, f64),
        integer: bool,
        y_axis: &TickAxis,
        reserved: f64,
    ) -> Self {
        let (w, _) = area.dim_in_pixel();
        let plot_w = f64::from(w) - f64::from(label_areas(y_axis).1) - 60.0 - reserved;
        Self::fitted(lo, hi, integer, plot_w)
    }

    /// A linear axis with at most 10 labelled ticks, fewer if their labels
    /// would not fit side by side in `plot_w` pixels (but at least 2).
    pub(super) fn fitted(lo: f64, hi: f64, integer: bool, plot_w: f64) -> Self {
        let mut max_ticks = 10;
        loop {
            let axis = Self::linear(lo, hi, max_ticks, integer);
            let need = (axis.label_width() + 24.0) * axis.major.len() as f64;
            if need <= plot_w || max_ticks <= 2 {
                return axis;
            }
            max_ticks -= 1;
        }
    }

    /// This axis with labelled ticks at exactly those of `ticks` inside its range (finite,
    /// sorted, without repeats) and no minor ticks.
    pub(super) fn with_ticks(mut self, ticks: &[f64]) -> Self {
        let mut major: Vec<f64> = ticks
            .iter()
            .copied()
            .filter(|t| t.is_finite() && *t >= self.lo && *t <= self.hi)
            .collect();
        major.sort_by(f64::total_cmp);
        major.dedup();
        self.major = major;
        self.minor.clear();
        self
    }

    /// A log axis over `10^lo..10^hi` (arguments in decades) with at most
    /// `max_ticks` labelled ticks, at powers of ten where the range spans at
    /// least one, else at 1, 2 and 5 times powers of ten.
    pub(super) fn log10(lo: f64, hi: f64, max_ticks: usize) -> Self {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (-1.0, 1.0)
        };
        let (a, b) = ((lo - 1e-9).ceil() as i64, (hi + 1e-9).floor() as i64);
        let (mut major, mut minor) = (Vec::new(), Vec::new());
        let in_range = |v: f64| v >= lo - 1e-9 && v <= hi + 1e-9;
        if b > a {
            let max = max_ticks.max(2) as i64;
            let step = [1, 2, 3, 4, 5, 10, 20, 25, 50, 100, 200, 500, 1000]
                .into_iter()
                .find(|&s| b.div_euclid(s) - (a - 1).div_euclid(s) <= max)
                .unwrap_or(1000);
            for e in a..=b {
                if e.rem_euclid(step) == 0 {
                    major.push(e as f64);
                } else {
                    minor.push(e as f64);
                }
            }
            if step == 1 && hi - lo <= 8.0 {
                for e in (a - 1)..=b {
                    for m in 2..=9 {
                        let v = e as f64 + f64::from(m).log10();
                        if in_range(v) {
                            minor.push(v);
                        }
                    }
                }
            }
        } else {
            let sets: [&[u8]; 3] = [&[1, 2, 5], &[1, 2, 3, 5, 7], &[1, 2, 3, 4, 5, 6, 7, 8, 9]];
            for mantissas in sets {
                major.clear();
                minor.clear();
                for e in (a - 1)..=b {
                    for m in 1..=9 {
                        let v = e as f64 + f64::from(m).log10();
                        if in_range(v) {
                            if mantissas.contains(&m) {
                                major.push(v);
                            } else {
                                minor.push(v);
                            }
                        }
                    }
                }
                if major.len() >= 3 {
                    break;
                }
            }
            if major.len() < 2 {
                // A narrow range: linear ticks in data units.
                let lin = Self::linear(10f64.powf(lo), 10f64.powf(hi), max_ticks.min(5), false);
                let logs = |v: &[f64]| v.iter().filter(|&&x| x > 0.0).map(|x| x.log10()).collect();
                (major, minor) = (logs(&lin.major), logs(&lin.minor));
            }
        }
        Self {
            lo,
            hi,
            major,
            minor,
            log: true,
            sci: None,
        }
    }

    /// The label of a major tick: a number for a linear axis, else the
    /// mantissa text (`""`, `"2×"`, ...) before `10` and the exponent.
    pub(super) fn tick_text(&self, t: f64) -> (String, Option<String>) {
        if let Some(step_exp) = self.sci {
            if t == 0.0 {
                return ("0".to_owned(), None);
            }
            let e = t.abs().log10().floor();
            let decimals = (e as i32 - step_exp).clamp(0, 6) as usize;
            let m = format!("{:.decimals$}", t / 10f64.powf(e));
            let m = if m.contains('.') {
                m.trim_end_matches('0').trim_end_matches('.')
            } else {
                &m
            };
            let m = typographic_minus(m.to_owned());
            let base = if m == "1" {
                "10".to_owned()
            } else {
                format!("{m}\u{d7}10")
            };
            return (base, Some(format_number(e, 0)));
        }
        if !self.log {
            return (format_tick(t), None);
        }
        let mut e = (t + 1e-9).floor();
        let mut m = (10f64.powf(t - e) * 100.0).round() / 100.0;
        if m >= 10.0 {
            (m, e) = (m / 10.0, e + 1.0);
        }
        let base = if m == 1.0 {
            "10".to_owned()
        } else {
            format!("{}\u{d7}10", format_tick(m))
        };
        (base, Some(format_number(e, 0)))
    }

    /// Whether tick labels are drawn by `frame::draw_mesh` rather than plotters
    /// (powers of ten with superscript exponents).
    pub(super) fn custom_labels(&self) -> bool {
        self.log || self.sci.is_some()
    }

    /// Width in pixels of the widest major tick label.
    pub(super) fn label_width(&self) -> f64 {
        self.major
            .iter()
            .map(|&t| match self.tick_text(t) {
                (base, None) => Label::new(&base, TICK_SIZE).width(),
                (base, Some(exp)) => {
                    Label::new(&base, TICK_SIZE).width() + Label::new(&exp, SUP_SIZE).width()
                }
            })
            .fold(0.0, f64::max)
    }
}

/// Font size of exponents in power-of-ten tick labels.
const SUP_SIZE: f64 = 16.0;

/// Draws a tick label `base` + superscript `exp` with its box anchored at
/// `(x, y)`: `h` along the label, `v` for the base text (as for [`Label`]).
pub(super) fn draw_power_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (base, exp): (&str, &str),
    (x, y): (f64, f64),
    h: HPos,
    v: VPos,
) -> Result<()> {
    let base_label = Label::new(base, TICK_SIZE).anchor(HPos::Left, v);
    let exp_label = Label::new(exp, SUP_SIZE).anchor(HPos::Left, VPos::Bottom);
    let gap = 1.0;
    let w = base_label.width() + gap + exp_label.width();
    let x0 = match h {
        HPos::Left => x,
        HPos::Center => x - w / 2.0,
        HPos::Right => x - w,
    };
    base_label.draw(area, pt(x0, y))?;
    let cap = base_label.cap_height();
    let baseline = match v {
        VPos::Top => y + cap,
        VPos::Center => y + cap / 2.0,
        VPos::Bottom => y,
    };
    exp_label.draw(
        area,
        pt(x0 + base_label.width() + gap, baseline - 0.62 * cap),
    )
}

// ---------------------------------------------------------------------------

/// Draws the label of major tick `t` of `axis` anchored at `(x, y)` (`h`
/// along it, `v` across it): a power of ten with a superscript exponent, or
/// a plain number in dark grey.
pub(super) fn draw_tick_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    axis: &TickAxis,
    t: f64,
    (x, y): (f64, f64),
    h: HPos,
    v: VPos,
) -> Result<()> {
    match axis.tick_text(t) {
        (base, Some(exp)) => draw_power_label(area, (&base, &exp), (x, y), h, v),
        (base, None) => Label::new(&base, TICK_SIZE)
            .color(RGBColor(40, 40, 40))
            .anchor(h, v)
            .draw(area, pt(x, y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ticks() {
        let x = TickAxis::linear(7.4, 22.6, 10, true);
        assert_eq!(x.major, vec![8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0]);
        assert_eq!(x.minor, vec![9.0, 11.0, 13.0, 15.0, 17.0, 19.0, 21.0]);
        let x = TickAxis::linear(0.0, 0.165, 8, false);
        assert_eq!(x.major.len(), 4); // 0, 0.05, 0.1, 0.15
        assert_eq!(x.tick_text(x.major[3]), ("0.15".to_owned(), None));
        // 21 decades: every third power of ten labelled.
        let y = TickAxis::log10(-4.9, 17.9, 9);
        assert_eq!(y.major, vec![-3.0, 0.0, 3.0, 6.0, 9.0, 12.0, 15.0]);
        assert_eq!(
            y.tick_text(-3.0),
            ("10".to_owned(), Some("\u{2212}3".to_owned()))
        );
        // Less than a decade: 1-2-5 ticks, or more if that gives too few.
        let y = TickAxis::log10(-0.9, 0.1, 9);
        let labels: Vec<_> = y.major.iter().map(|&t| y.tick_text(t).0).collect();
        assert_eq!(labels, ["2\u{d7}10", "5\u{d7}10", "10"]);
        let y = TickAxis::log10(-1.7, -1.3, 9);
        let labels: Vec<_> = y.major.iter().map(|&t| y.tick_text(t).0).collect();
        assert_eq!(labels, ["2\u{d7}10", "3\u{d7}10", "5\u{d7}10"]);
        // A very narrow range: linear ticks.
        let y = TickAxis::log10(0.4, 0.42, 9);
        let labels: Vec<_> = y.major.iter().map(|&t| y.tick_text(t).0).collect();
        assert!(
            labels.len() >= 2 && labels[0].starts_with("2.5"),
            "{labels:?}"
        );
        let big = TickAxis::linear(0.0, 1.3e17, 8, false);
        assert_eq!(
            big.tick_text(1.2e17),
            ("1.2\u{d7}10".to_owned(), Some("17".to_owned()))
        );
    }

    #[test]
    fn fitted_axes_drop_ticks_that_would_crowd() {
        let wide = TickAxis::fitted(0.0, 100.0, false, 2000.0);
        assert_eq!(wide.major.len(), 11); // 0, 10, ..., 100
        let narrow = TickAxis::fitted(0.0, 100.0, false, 200.0);
        assert!(narrow.major.len() < wide.major.len());
        assert!(narrow.major.len() >= 2);
    }

    #[test]
    fn ranges() {
        let (lo, hi) = padded_range([1.0, 3.0], 0.05);
        assert!((lo - 0.9).abs() < 1e-12 && (hi - 3.1).abs() < 1e-12);
        assert_eq!(padded_range([], 0.05), (0.0, 1.0));
        assert_eq!(valid_range(Some((3.0, 1.0))), Some((1.0, 3.0)));
        assert_eq!(valid_range(Some((1.0, 1.0))), None);
        assert_eq!(valid_range(Some((f64::NAN, 1.0))), None);
    }
}
