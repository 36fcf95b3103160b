//! The frame of the axis charts: title band, label areas, plotters chart
//! context on [`TickAxis`] axes, grid and tick labels, legend placement, the
//! title and axis descriptions, and the titles of side-by-side panels.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{draw_power_label, TickAxis};
use super::legend::{place_legend, Legend};
use super::plot_err;
use super::shapes::pt;
use super::text::{
    draw_lines, ensure_fonts, fit_font_size, snap_size, text_style, wrap_two_lines, Label,
    LABEL_SIZE, TICK_SIZE, TITLE_SIZE,
};

/// Pixel rectangle `(x0, y0, x1, y1)` relative to the drawing area.
pub(super) type PxRect = (f64, f64, f64, f64);

/// Clears `area` to white (after registering the fonts): the first step of
/// every chart.
pub(super) fn blank<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> Result<()> {
    ensure_fonts();
    area.fill(&WHITE).map_err(plot_err)
}

/// Height of the title band above the plot.
pub(super) fn title_band(title: &str) -> u32 {
    if title.is_empty() {
        12
    } else {
        (TITLE_SIZE * 2.0) as u32
    }
}

/// Draws `title` (if any) centred in the title band at the top of `area`,
/// shrunk to fit its width less a margin of 48 pixels on each side (so a long
/// title never runs to the edge), and returns the band's height.
pub(super) fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<f64> {
    let w = f64::from(area.dim_in_pixel().0);
    let band = f64::from(title_band(title));
    if !title.is_empty() {
        let size = fit_font_size(&[title], TITLE_SIZE, 12.0, w - 96.0);
        Label::new(title, size).draw(area, pt(w / 2.0, band / 2.0))?;
    }
    Ok(band)
}

/// Height reserved for an axis description (1.9 capital heights of `LABEL_SIZE` text).
pub(super) fn desc_height() -> f64 {
    Label::new("M", LABEL_SIZE).cap_height() * 1.9
}

/// The texts around an axis chart: the title above, the x axis description
/// below the plot and the y axis description left of it (empty: none).
pub(super) struct FrameTexts<'t> {
    pub(super) title: &'t str,
    pub(super) x_label: &'t str,
    pub(super) y_label: &'t str,
}

/// Draws the title and the axis descriptions around the plot rectangle,
/// whose label areas below and left of it are `x_area` and `y_area` pixels.
pub(super) fn draw_frame_texts<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plot: PxRect,
    texts: &FrameTexts<'_>,
    (x_area, y_area): (f64, f64),
) -> Result<()> {
    let (px0, py0, px1, py1) = plot;
    let desc_h = desc_height();
    draw_title(area, texts.title)?;
    let x_label = texts.x_label;
    if !x_label.is_empty() {
        let size = fit_font_size(&[x_label], LABEL_SIZE, 12.0, px1 - px0);
        Label::new(x_label, size)
            .anchor(HPos::Center, VPos::Bottom)
            .draw(
                area,
                pt((px0 + px1) / 2.0, py1 + x_area - 14.0 - 0.25 * desc_h),
            )?;
    }
    let y_label = texts.y_label;
    if !y_label.is_empty() {
        let size = fit_font_size(&[y_label], LABEL_SIZE, 12.0, py1 - py0);
        Label::new(y_label, size)
            .vertical()
            .anchor(HPos::Center, VPos::Top)
            .draw(area, pt(px0 - y_area + 12.0, (py0 + py1) / 2.0))?;
    }
    Ok(())
}

/// Sizes of the x and y label areas for the given y axis.
pub(super) fn label_areas(y_axis: &TickAxis) -> (u32, u32) {
    let desc_h = desc_height();
    let y_area = (y_axis.label_width() + 24.0 + desc_h + 14.0).round() as u32;
    let x_area = (TICK_SIZE * 1.3 + 14.0 + desc_h + 14.0).round() as u32;
    (x_area, y_area)
}

/// A chart context on [`TickAxis`] axes.
pub(super) type TickChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickAxis, TickAxis>>;

/// Builds a chart with the house style on `area`, leaving `right` and
/// `bottom` extra pixels free beside and below it (for a legend).
fn build_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    x_axis: &TickAxis,
    y_axis: &TickAxis,
    (right, bottom): (f64, f64),
) -> Result<TickChart<'a, DB>> {
    let (x_area, y_area) = label_areas(y_axis);
    let chart = ChartBuilder::on(area)
        .margin_top(title_band(title))
        .margin_left(12)
        .margin_right((36.0 + right).round() as u32)
        .margin_bottom((10.0 + bottom).round() as u32)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x_axis.clone(), y_axis.clone())
        .map_err(plot_err)?;
    Ok(chart)
}

/// A chart with its x axis and where its legend goes.
struct Layout<'a, DB: DrawingBackend> {
    chart: TickChart<'a, DB>,
    x_axis: TickAxis,
    legend_pos: Option<(f64, f64)>,
}

/// Lays out a chart with a legend: inside the plot where it covers none of
/// the `obstacles` (pixel points, as a function of the chart), else to the
/// right of the plot if that leaves it most of the width, else below it.
/// The x axis ticks are fitted to the resulting plot width.
fn layout_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x_range, integer_x): ((f64, f64), bool),
    x_ticks: Option<&[f64]>,
    y_axis: &TickAxis,
    legend: &Legend,
    obstacles: impl Fn(&TickChart<'a, DB>) -> Vec<(f64, f64)>,
) -> Result<Layout<'a, DB>> {
    let make_x_axis = |reserved: f64| {
        let axis = TickAxis::linear_x(area, x_range, integer_x, y_axis, reserved);
        match x_ticks {
            Some(ticks) => axis.with_ticks(ticks),
            None => axis,
        }
    };
    let x_axis = make_x_axis(0.0);
    let chart = build_chart(area, title, &x_axis, y_axis, (0.0, 0.0))?;
    if legend.entries.is_empty() {
        return Ok(Layout {
            chart,
            x_axis,
            legend_pos: None,
        });
    }
    let (lw, lh) = legend.size();
    let (pos, covered) = place_legend(plot_rect(area, &chart), (lw, lh), &obstacles(&chart));
    if covered == 0 {
        return Ok(Layout {
            chart,
            x_axis,
            legend_pos: Some(pos),
        });
    }
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (f64::from(w), f64::from(h));
    let (px0, py0, px1, py1) = plot_rect(area, &chart);
    if px1 - px0 - lw - 16.0 >= 0.5 * w {
        let right = lw + 16.0;
        let x_axis = make_x_axis(right);
        let chart = build_chart(area, title, &x_axis, y_axis, (right, 0.0))?;
        let (_, py0, px1, _) = plot_rect(area, &chart);
        return Ok(Layout {
            chart,
            x_axis,
            legend_pos: Some((px1 + 16.0, py0)),
        });
    }
    if py1 - py0 - lh - 8.0 >= 0.5 * h {
        let chart = build_chart(area, title, &x_axis, y_axis, (0.0, lh + 8.0))?;
        return Ok(Layout {
            chart,
            x_axis,
            legend_pos: Some(((w - lw) / 2.0, h - 10.0 - lh)),
        });
    }
    // No room outside: the least covered place inside.
    Ok(Layout {
        chart,
        x_axis,
        legend_pos: Some(pos),
    })
}

/// Draws an axis chart on `area` (cleared already): lays it out with its
/// legend (see [`layout_chart`]; `x` is the x range and whether its ticks are
/// whole numbers), draws the grid, axes and tick labels, then the data with
/// `draw_data(plot rectangle, data-to-pixel mapping)`, the legend on top and
/// last the title and axis descriptions.
pub(super) fn draw_axis_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    texts: &FrameTexts<'_>,
    x: ((f64, f64), bool),
    y_axis: &TickAxis,
    legend: &Legend,
    obstacles: impl Fn(&TickChart<'a, DB>) -> Vec<(f64, f64)>,
    draw_data: impl FnOnce(PxRect, &dyn Fn(f64, f64) -> (f64, f64)) -> Result<()>,
) -> Result<()> {
    draw_axis_chart_ticks(area, texts, x, None, y_axis, legend, obstacles, draw_data)
}

/// [`draw_axis_chart`] with labelled x ticks at exactly `x_ticks` (those inside the x range;
/// no minor ticks) when given, e.g. only at the N that have data.
#[allow(clippy::too_many_arguments)]
pub(super) fn draw_axis_chart_ticks<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    texts: &FrameTexts<'_>,
    x: ((f64, f64), bool),
    x_ticks: Option<&[f64]>,
    y_axis: &TickAxis,
    legend: &Legend,
    obstacles: impl Fn(&TickChart<'a, DB>) -> Vec<(f64, f64)>,
    draw_data: impl FnOnce(PxRect, &dyn Fn(f64, f64) -> (f64, f64)) -> Result<()>,
) -> Result<()> {
    let Layout {
        mut chart,
        x_axis,
        legend_pos,
    } = layout_chart(area, texts.title, x, x_ticks, y_axis, legend, obstacles)?;
    draw_mesh(area, &mut chart, &x_axis, y_axis)?;
    let plot = plot_rect(area, &chart);
    draw_data(plot, &to_pixels(area, &chart))?;
    if let Some(pos) = legend_pos {
        legend.draw(area, pos)?;
    }
    let (x_area, y_area) = label_areas(y_axis);
    draw_frame_texts(area, plot, texts, (f64::from(x_area), f64::from(y_area)))
}

/// At most how many labelled y ticks fit on a chart on `area` with `title`.
pub(super) fn max_y_ticks<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    max: usize,
) -> usize {
    let (_, h) = area.dim_in_pixel();
    let (x_area, _) = label_areas(&TickAxis::linear(0.0, 1.0, 1, false));
    let plot_h = f64::from(h) - f64::from(title_band(title)) - f64::from(x_area) - 10.0;
    ((plot_h / (2.2 * TICK_SIZE)).floor() as usize).clamp(2, max)
}

/// Draws the grid, axes and tick labels of `chart`.
fn draw_mesh<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &mut TickChart<'_, DB>,
    x_axis: &TickAxis,
    y_axis: &TickAxis,
) -> Result<()> {
    let fmt = |axis: &TickAxis, v: f64| {
        if axis.custom_labels() {
            String::new()
        } else {
            axis.tick_text(v).0
        }
    };
    let x_fmt = |v: &f64| fmt(x_axis, *v);
    let y_fmt = |v: &f64| fmt(y_axis, *v);
    chart
        .configure_mesh()
        .label_style(text_style::<DB>(TICK_SIZE))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_labels(x_axis.major.len().max(1))
        .y_labels(y_axis.major.len().max(1))
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(208, 208, 208))
        .axis_style(RGBColor(80, 80, 80))
        .draw()
        .map_err(plot_err)?;
    let (px0, _, _, py1) = plot_rect(area, chart);
    let px = to_pixels(area, chart);
    for (axis, is_x) in [(x_axis, true), (y_axis, false)] {
        if !axis.custom_labels() {
            continue;
        }
        for &t in &axis.major {
            let (base, exp) = axis.tick_text(t);
            let exp = exp.unwrap_or_default();
            if is_x {
                let (sx, _) = px(t, y_axis.lo);
                draw_power_label(
                    area,
                    (&base, &exp),
                    (sx, py1 + 14.0),
                    HPos::Center,
                    VPos::Top,
                )?;
            } else {
                let (_, sy) = px(x_axis.lo, t);
                draw_power_label(
                    area,
                    (&base, &exp),
                    (px0 - 10.0, sy),
                    HPos::Right,
                    VPos::Center,
                )?;
            }
        }
    }
    Ok(())
}

/// Pixel position of `area`'s top left corner on its backend.
pub(super) fn origin<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> (f64, f64) {
    let (xr, yr) = area.get_pixel_range();
    (f64::from(xr.start), f64::from(yr.start))
}

/// The plotting rectangle of `chart` in pixels relative to `area`.
pub(super) fn plot_rect<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &TickChart<'_, DB>,
) -> PxRect {
    let (ox, oy) = origin(area);
    let (px, py) = chart.plotting_area().get_pixel_range();
    (
        f64::from(px.start) - ox,
        f64::from(py.start) - oy,
        f64::from(px.end) - ox,
        f64::from(py.end) - oy,
    )
}

/// A mapping from data coordinates of `chart` to pixels relative to `area`.
pub(super) fn to_pixels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &TickChart<'_, DB>,
) -> impl Fn(f64, f64) -> (f64, f64) {
    let (ox, oy) = origin(area);
    let coord = chart.as_coord_spec().clone();
    move |x, y| {
        let (sx, sy) = coord.translate(&(x, y));
        (f64::from(sx) - ox, f64::from(sy) - oy)
    }
}

// Panels (dendrograms, the graph) side by side under one title.

/// Font size and band height for panel titles at most `max_w` pixels wide:
/// one line at the largest size from `LABEL_SIZE - 4` down to 20 at which
/// every title fits, else two lines (see [`draw_lines`]) at the largest size
/// down to 16 at which every title fits wrapped.
pub(super) fn panel_title_font(titles: &[&str], max_w: f64) -> (f64, f64) {
    let titles: Vec<&str> = titles.iter().copied().filter(|t| !t.is_empty()).collect();
    let top = snap_size(LABEL_SIZE - 4.0);
    if titles.is_empty() {
        return (top, 0.0);
    }
    let sizes = || (0..).map(|k| top - 2.0 * f64::from(k));
    let fits = |size: f64, wrap: bool| {
        titles.iter().all(|t| {
            let single = Label::new(t, size).width();
            single <= max_w || (wrap && wrap_two_lines(t, size).1 <= max_w)
        })
    };
    if let Some(size) = sizes().take_while(|&s| s >= 20.0).find(|&s| fits(s, false)) {
        return (size, size * 1.7);
    }
    let size = sizes()
        .take_while(|&s| s >= 16.0)
        .find(|&s| fits(s, true))
        .unwrap_or(16.0);
    (size, size * 2.6)
}

/// Draws a panel title centred in the band from `top` to `top + band` over `(x0, x1)`.
pub(super) fn draw_panel_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    (x0, x1): (f64, f64),
    (top, band): (f64, f64),
    size: f64,
) -> Result<()> {
    if title.is_empty() || band <= 0.0 {
        return Ok(());
    }
    draw_lines(
        area,
        title,
        size,
        x1 - x0 - 8.0,
        pt((x0 + x1) / 2.0, top + band / 2.0),
    )
}
