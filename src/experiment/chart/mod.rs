//! Figure rendering for experiment reports.
//!
//! Every figure is a type implementing [`Chart`]; [`save_chart`] renders it to
//! both `<stem>.png` and `<stem>.svg`, writing each to a temporary file in the
//! same directory first and renaming it into place, so a half-written figure
//! never appears under its final name.
//!
//! Text uses the embedded Noto Sans font, registered with plotters on first
//! use (see [`ensure_fonts`]) under the family names `"sans-serif"` and
//! [`FONT`]. Draw free-standing text with [`Label`], which positions glyphs
//! precisely (plotters 0.3.7's `ab_glyph` renderer drops each glyph's left
//! side bearing, giving visibly uneven letter spacing) and makes PNG and SVG
//! text the same size. For plotters' own text (tick labels) use
//! [`text_style`]. Font sizes are plotters sizes: the pixel distance from the
//! font's ascender to its descender, so one em is about `size / 1.36` px.
//!
//! Provided charts:
//! * [`PairwiseDiffTable`]: a matrix of "mean ± std" pairwise differences with a
//!   diverging background colour (Table 1 of the Cluster Trellis paper);
//! * [`ScatterByCategory`]: a scatter plot coloured by an integer category
//!   (Figure 5 of the paper), optionally with named categories, fixed axis
//!   ranges and the diagonal y = x;
//! * [`QualityTimeChart`]: quality against wall time on a log axis, one labelled point per method
//!   (the board's quality-vs-time charts);
//! * [`PosteriorMassChart`]: exact posterior mass as stems against sampled
//!   frequencies as markers (Figure 6 of the paper);
//! * [`BarChart`]: grouped bars of counts over whole-number categories;
//! * [`LineChart`]: lines of [`LineSeries`] (solid or dashed, with or without
//!   markers) with an optional log y axis, e.g. wall time against N;
//! * [`DendrogramChart`]: dendrograms of [`DendrogramPanel`]s side by side,
//!   leaves coloured by category;
//! * [`GraphAndTreesChart`]: a weighted graph next to trees over its nodes
//!   (Figure 4 of the paper);
//! * [`DotRangeChart`]: rows of [`DotRangeRow`] markers per series over grey
//!   range bars, e.g. purity of the MAP tree against the range over all trees;
//! * [`HeatmapChart`]: a matrix as square coloured cells with a colour bar,
//!   optional values in the cells and outlined groups, e.g. pairwise
//!   co-clustering probabilities;
//! * [`TextTable`]: a paper-style results table of text cells with section
//!   rows and the best cell per row highlighted (Henao & Lucas's Tables 1–3);
//! * [`TimeDendrogramChart`]: multifurcating trees with divergence times on a
//!   shared time axis, leaves coloured by category (Knowles & Ghahramani's
//!   Figures 5 and 7).
//!
//! Colour helpers [`viridis`], [`diverging`], [`category_colors`] and
//! [`qualitative_color`] are shared by all charts.
//!
//! The embedded font covers Latin, Greek and common symbols (`−`, `×`, `·`,
//! `±`, `≈`, `≤`, superscript digits) but not every mathematical sign: `∝`,
//! for one, renders as an empty box in PNGs.
//!
//! ```ignore
//! let chart = ScatterByCategory { points, x_label: "MAP log-likelihood".into(), ..Default::default() };
//! save_chart(Path::new("figures/fig5"), 1000, 750, &chart)?; // fig5.png + fig5.svg
//! ```
//!
//! The module is a small chart toolkit: the shared pieces in files of their
//! own (fonts and [`Label`] in `text.rs`, `color.rs`, `format.rs`, axes and
//! ticks in `axis.rs`, `legend.rs`, primitive `shapes.rs`, the frame of the
//! axis charts in `frame.rs`, `save.rs`) and one file per chart type.

mod axis;
mod bar;
mod color;
mod dendrogram;
mod dot_range;
mod format;
mod frame;
mod graph_trees;
mod heatmap;
mod legend;
mod line;
mod pairwise_diff;
mod panels;
mod posterior_mass;
mod quality_time;
mod save;
mod scatter;
mod shapes;
#[cfg(test)]
mod test_util;
mod text;
mod text_table;
mod time_dendrogram;

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};

pub use axis::padded_range;
pub use bar::{BarChart, BarSeries};
pub use color::{
    category_colors, distinct_color, diverging, qualitative_color, text_color_on, viridis,
};
pub use dendrogram::{DendrogramChart, DendrogramPanel, DISTINCT_CATEGORIES};
pub use dot_range::StripChart;
pub use dot_range::{DotRangeChart, DotRangeRow};
pub use format::{format_compact, format_seconds, format_seconds_pm};
pub use format::{
    format_number, format_number_exact, format_sig3, format_sig3_pm, format_sig3_scaled,
    format_tick,
};
pub use graph_trees::GraphAndTreesChart;
pub use heatmap::HeatmapChart;
pub use line::{LineChart, LineChartWith, LineOptions, LineSeries};
pub use pairwise_diff::PairwiseDiffTable;
pub use panels::{Column, Row};
pub use posterior_mass::PosteriorMassChart;
pub use quality_time::{QualityTimeChart, QualityTimePoint};
pub use save::{save_chart, save_chart_default, DEFAULT_HEIGHT, DEFAULT_WIDTH};
pub use scatter::ClassScatter;
pub use scatter::ScatterByCategory;
pub use text::{
    ensure_fonts, fit_font_size, text_style, Label, CAPTION_SIZE, FONT, LABEL_SIZE, TICK_SIZE,
    TITLE_SIZE,
};
pub use text_table::{TextRow, TextTable};
pub use time_dendrogram::{TimeDendrogramChart, TimeTreePanel};

/// Converts a plotters error into an [`anyhow::Error`]. In code generic over
/// the backend, `?` cannot do this (backend error types need not be
/// `'static`), so write `.map_err(plot_err)?`.
pub fn plot_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plotting failed: {e}")
}

/// A figure that can be drawn onto any plotters backend.
///
/// Implement this for a data-holding struct, then render it with
/// [`save_chart`]. Inside `draw`, convert plotters errors with
/// `.map_err(plot_err)?`, draw text with [`Label`] and style plotters' own
/// text with [`text_style`].
pub trait Chart {
    /// Draws the whole figure onto `area`, filling its background first.
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()>;
}
