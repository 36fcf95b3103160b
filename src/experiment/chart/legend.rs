//! Legends: a boxed [`Legend`] placed inside or beside a plot, and a
//! [`FlowLegend`] of entries in centred rows (under a title).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::frame::PxRect;
use super::shapes::{
    draw_marker, fill_rect, line, polyline, polyline_dash, pt, Dash, Marker, STEM_W,
};
use super::text::{Label, TICK_SIZE};

/// The sample drawn before a legend entry.
#[derive(Debug, Clone)]
pub(super) enum Swatch {
    /// A horizontal line, solid or with a dash pattern, optionally with a marker on it.
    Line {
        color: RGBColor,
        dash: Dash,
        marker: Option<Marker>,
    },
    /// A marker alone.
    Marker {
        marker: Marker,
        color: RGBAColor,
        r: f64,
    },
    /// A vertical stem with a tick on top (exact masses).
    Stem { color: RGBColor },
    /// A vertical line, optionally dashed.
    VLine { color: RGBColor, dashed: bool },
    /// A thick horizontal bar (ranges).
    Bar { color: RGBColor },
}

/// Draws `swatch` between `x0` and `x1`, centred vertically on `cy`, for a
/// legend row `row_h` pixels high.
fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: &Swatch,
    (x0, x1): (f64, f64),
    cy: f64,
    row_h: f64,
) -> Result<()> {
    let xm = (x0 + x1) / 2.0;
    match *swatch {
        Swatch::Line {
            color,
            dash,
            marker,
        } => {
            let (xa, xb) = if dash.is_some() {
                (x0, x1 + 2.0)
            } else {
                (x0, x1)
            };
            polyline_dash(area, &[(xa, cy), (xb, cy)], color.stroke_width(2), dash)?;
            if let Some(m) = marker {
                draw_marker(area, m, (xm, cy), 4.5, color.to_rgba())?;
            }
        }
        Swatch::Marker { marker, color, r } => {
            draw_marker(area, marker, (xm, cy), r, color)?;
        }
        Swatch::Stem { color } => {
            let (top, bottom) = (cy - 0.36 * row_h, cy + 0.4 * row_h);
            line(area, (xm, bottom), (xm, top), color.stroke_width(STEM_W))?;
            fill_rect(
                area,
                (xm - 4.0, top - 1.0),
                (xm + 4.0, top + 1.0),
                color.filled(),
            )?;
        }
        Swatch::VLine { color, dashed } => {
            let (top, bottom) = (cy - 0.45 * row_h, cy + 0.45 * row_h);
            polyline(
                area,
                &[(xm, top), (xm, bottom)],
                color.stroke_width(2),
                dashed,
            )?;
        }
        Swatch::Bar { color } => {
            let half = (0.22 * row_h).min(7.0);
            fill_rect(area, (x0, cy - half), (x1, cy + half), color.filled())?;
        }
    }
    Ok(())
}

/// Width of the swatch column in a legend.
const SWATCH_W: f64 = 44.0;

/// A legend box: one row per entry, a swatch followed by the entry's text.
pub(super) struct Legend {
    pub(super) entries: Vec<(Swatch, String)>,
}

impl Legend {
    pub(super) fn row_h() -> f64 {
        TICK_SIZE * 1.4
    }

    pub(super) fn size(&self) -> (f64, f64) {
        let text_w = self
            .entries
            .iter()
            .map(|(_, t)| Label::new(t, TICK_SIZE).width())
            .fold(0.0, f64::max);
        (
            // 18% slack: SVG viewers without Noto Sans fall back to wider fonts.
            1.18 * text_w + SWATCH_W + 28.0,
            Self::row_h() * self.entries.len() as f64 + 14.0,
        )
    }

    /// Draws the legend with its top left corner at `(bx, by)`.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (bx, by): (f64, f64),
    ) -> Result<()> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let (bw, bh) = self.size();
        fill_rect(area, (bx, by), (bx + bw, by + bh), WHITE.mix(0.92).filled())?;
        fill_rect(
            area,
            (bx, by),
            (bx + bw, by + bh),
            RGBColor(160, 160, 160).stroke_width(1),
        )?;
        let row_h = Self::row_h();
        for (k, (swatch, text)) in self.entries.iter().enumerate() {
            let cy = by + 7.0 + row_h * (k as f64 + 0.5);
            let (x0, x1) = (bx + 12.0, bx + 12.0 + SWATCH_W);
            draw_swatch(area, swatch, (x0, x1), cy, row_h)?;
            Label::new(text, TICK_SIZE)
                .anchor(HPos::Left, VPos::Center)
                .draw(area, pt(x1 + 12.0, cy))?;
        }
        Ok(())
    }
}

/// Points every ~3 px along the segment `a`-`b` (for legend placement).
pub(super) fn sample_segment(a: (f64, f64), b: (f64, f64), out: &mut Vec<(f64, f64)>) {
    let n = ((b.0 - a.0).hypot(b.1 - a.1) / 3.0)
        .ceil()
        .clamp(1.0, 2000.0) as usize;
    out.extend((0..=n).map(|i| {
        let t = i as f64 / n as f64;
        (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
    }));
}

/// Top left corner for a `size` box inside `plot`, among the corners and the
/// middles of the top and bottom edges, covering the fewest `obstacles`
/// (pixel points), and how many it covers.
pub(super) fn place_legend(
    plot: PxRect,
    size: (f64, f64),
    obstacles: &[(f64, f64)],
) -> ((f64, f64), usize) {
    let (px0, py0, px1, py1) = plot;
    let (w, h) = size;
    let inset = 12.0;
    let (l, r, c) = (px0 + inset, px1 - inset - w, (px0 + px1 - w) / 2.0);
    let (t, b) = (py0 + inset, py1 - inset - h);
    let margin = 4.0;
    let covered = |(x, y): (f64, f64)| {
        obstacles
            .iter()
            .filter(|&&(u, v)| {
                u >= x - margin && u <= x + w + margin && v >= y - margin && v <= y + h + margin
            })
            .count()
    };
    [(r, t), (l, t), (c, t), (r, b), (l, b), (c, b)]
        .into_iter()
        .map(|p| (p, covered(p)))
        .min_by_key(|&(_, n)| n)
        .unwrap_or(((l, t), 0))
}

/// Legend entries laid out left to right, wrapped onto as many centred rows
/// as the width needs, without a box (for legends under a title).
pub(super) struct FlowLegend {
    pub(super) entries: Vec<(Swatch, String)>,
}

impl FlowLegend {
    /// Width of the swatch before each entry.
    const SWATCH: f64 = 30.0;
    /// Horizontal gap between entries.
    const GAP: f64 = 26.0;

    fn entry_w(text: &str) -> f64 {
        // 8% slack: SVG viewers without Noto Sans fall back to wider fonts.
        Self::SWATCH + 8.0 + 1.08 * Label::new(text, TICK_SIZE).width()
    }

    /// Indices of the entries on each row for rows at most `max_w` wide.
    fn rows(&self, max_w: f64) -> Vec<Vec<usize>> {
        let mut rows: Vec<Vec<usize>> = Vec::new();
        let mut used = f64::INFINITY;
        for (k, (_, text)) in self.entries.iter().enumerate() {
            let w = Self::entry_w(text);
            match rows.last_mut() {
                Some(row) if used + Self::GAP + w <= max_w => {
                    row.push(k);
                    used += Self::GAP + w;
                }
                _ => {
                    rows.push(vec![k]);
                    used = w;
                }
            }
        }
        rows
    }

    /// Height of the legend laid out in `max_w` pixels (0 without entries).
    pub(super) fn height(&self, max_w: f64) -> f64 {
        Legend::row_h() * self.rows(max_w).len() as f64
    }

    /// Draws the rows centred on `cx`, the first row's top at `top`.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        cx: f64,
        top: f64,
        max_w: f64,
    ) -> Result<()> {
        let row_h = Legend::row_h();
        for (r, row) in self.rows(max_w).iter().enumerate() {
            let widths: Vec<f64> = row
                .iter()
                .map(|&k| Self::entry_w(&self.entries[k].1))
                .collect();
            let total = widths.iter().sum::<f64>() + Self::GAP * (row.len() as f64 - 1.0);
            let cy = top + row_h * (r as f64 + 0.5);
            let mut x = cx - total / 2.0;
            for (&k, w) in row.iter().zip(&widths) {
                let (swatch, text) = &self.entries[k];
                draw_swatch(area, swatch, (x, x + Self::SWATCH), cy, row_h)?;
                Label::new(text, TICK_SIZE)
                    .anchor(HPos::Left, VPos::Center)
                    .draw(area, pt(x + Self::SWATCH + 8.0, cy))?;
                x += w + Self::GAP;
            }
        }
        Ok(())
    }
}
