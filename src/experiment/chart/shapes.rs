//! Primitive shapes in pixel coordinates relative to a drawing area:
//! rectangles, lines, polylines and series markers.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::plot_err;

/// A pixel point: `(x, y)` rounded to whole pixels.
pub(super) fn pt(x: f64, y: f64) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

/// Draws the rectangle with corners `(x0, y0)` and `(x1, y1)` (pixels relative to `area`).
pub(super) fn fill_rect<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (f64, f64),
    (x1, y1): (f64, f64),
    style: ShapeStyle,
) -> Result<()> {
    area.draw(&Rectangle::new([pt(x0, y0), pt(x1, y1)], style))
        .map_err(plot_err)
}

/// Draws the straight line from `a` to `b` (pixels relative to `area`).
pub(super) fn line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (f64, f64),
    b: (f64, f64),
    style: ShapeStyle,
) -> Result<()> {
    area.draw(&PathElement::new(vec![pt(a.0, a.1), pt(b.0, b.1)], style))
        .map_err(plot_err)
}

/// Marker shapes, in the order they are handed out to series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Cross,
    Diamond,
    Square,
    Triangle,
    Plus,
}

pub(super) const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Cross,
    Marker::Plus,
];

/// Draws `marker` of radius about `r` pixels centred on `(x, y)` (pixels
/// relative to `area`); open shapes (crosses) are stroked 2 px wide.
pub(super) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    marker: Marker,
    (x, y): (f64, f64),
    r: f64,
    color: RGBAColor,
) -> Result<()> {
    let fill = color.filled();
    let poly = |pts: &[(f64, f64)]| {
        let pts: Vec<(i32, i32)> = pts.iter().map(|&(u, v)| pt(x + u, y + v)).collect();
        area.draw(&Polygon::new(pts, fill)).map_err(plot_err)
    };
    let seg = |(u0, v0): (f64, f64), (u1, v1): (f64, f64)| {
        line(
            area,
            (x + u0, y + v0),
            (x + u1, y + v1),
            color.stroke_width(2),
        )
    };
    match marker {
        Marker::Circle => area
            .draw(&Circle::new(pt(x, y), r.round().max(1.0) as u32, fill))
            .map_err(plot_err),
        Marker::Square => {
            let s = 0.85 * r;
            poly(&[(-s, -s), (s, -s), (s, s), (-s, s)])
        }
        Marker::Diamond => {
            let s = 1.2 * r;
            poly(&[(0.0, -s), (s, 0.0), (0.0, s), (-s, 0.0)])
        }
        Marker::Triangle => {
            let s = 1.15 * r;
            poly(&[(0.0, -s), (0.87 * s, 0.5 * s), (-0.87 * s, 0.5 * s)])
        }
        Marker::Cross => {
            let s = 0.9 * r;
            seg((-s, -s), (s, s))?;
            seg((-s, s), (s, -s))
        }
        Marker::Plus => {
            let s = 1.1 * r;
            seg((-s, 0.0), (s, 0.0))?;
            seg((0.0, -s), (0.0, s))
        }
    }
}

/// A line's dash pattern: `None` solid, `Some((dash, gap))` in pixels.
pub(super) type Dash = Option<(u32, u32)>;

/// The plain dashes of a reference line.
pub(super) const DASHED: Dash = Some((9, 6));

/// Dash patterns handed out in order to lines that colour alone would tell apart: dashes,
/// dots, long dashes, short dashes.
pub(super) const DASHES: [Dash; 4] = [DASHED, Some((2, 4)), Some((18, 6)), Some((5, 3))];

/// Draws a polyline through `pts` (pixels relative to `area`), dashed or solid.
pub(super) fn polyline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(f64, f64)],
    style: ShapeStyle,
    dashed: bool,
) -> Result<()> {
    polyline_dash(area, pts, style, if dashed { DASHED } else { None })
}

/// Draws a polyline through `pts` (pixels relative to `area`) with the dash pattern `dash`.
pub(super) fn polyline_dash<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(f64, f64)],
    style: ShapeStyle,
    dash: Dash,
) -> Result<()> {
    let pts: Vec<(i32, i32)> = pts.iter().map(|&(x, y)| pt(x, y)).collect();
    if pts.len() < 2 {
        return Ok(());
    }
    match dash {
        Some((on, off)) => area.draw(&DashedPathElement::new(pts, on, off, style)),
        None => area.draw(&PathElement::new(pts, style)),
    }
    .map_err(plot_err)
}

/// Stroke width of posterior mass stems (and their legend swatch).
pub(super) const STEM_W: u32 = 2;
