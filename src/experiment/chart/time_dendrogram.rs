//! Multifurcating trees with divergence times side by side: each tree drawn left to right from
//! the zero node at t = 0 to the leaves at t = 1 on a shared time axis, every node with all its
//! children (no binarisation), leaves coloured by category with their names beside them (the
//! layout of Knowles & Ghahramani's Figures 5 and 7). An internal node is drawn at least 4 px
//! right of its parent, so that nodes at (almost) the same time stay distinguishable.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::TickAxis;
use super::dendrogram::{category_legend, leaf_category_color, leaf_category_marker};
use super::frame::{blank, desc_height, draw_panel_title, draw_title, panel_title_font};
use super::legend::FlowLegend;
use super::shapes::{draw_marker, line, pt};
use super::text::{fit_font_size, Label, LABEL_SIZE, TICK_SIZE};
use super::{plot_err, Chart};

/// Colour of leaves without a category.
const UNKNOWN_GREY: RGBColor = RGBColor(150, 150, 150);

/// One tree of a [`TimeDendrogramChart`], as parent links and times.
#[derive(Debug, Clone, Default)]
pub struct TimeTreePanel {
    /// Title above the panel, e.g. `"PYDT: 4 root children"`.
    pub title: String,
    /// Parent of every node (`None` for the root, whose parent is the zero node at t = 0).
    /// Nodes `0..leaf_labels.len()` are the leaves.
    pub parent: Vec<Option<usize>>,
    /// Divergence time of every node in [0, 1] (leaves at 1).
    pub time: Vec<f64>,
    /// Name of each leaf, written right of it.
    pub leaf_labels: Vec<String>,
    /// Category of each leaf (marker and name colour); `None` is grey, "unknown".
    pub leaf_category: Vec<Option<usize>>,
}

/// Trees with divergence times side by side under one title and one legend of
/// `category_names` (plus "unknown" if a leaf has none).
#[derive(Debug, Clone, Default)]
pub struct TimeDendrogramChart {
    /// Title drawn above the figure.
    pub title: String,
    /// The trees, left to right.
    pub panels: Vec<TimeTreePanel>,
    /// Legend name of each category, indexed by category.
    pub category_names: Vec<String>,
    /// Description of the time axis, e.g. `"divergence time t"`.
    pub time_label: String,
    /// Space the axis by the hazard clock s = −ln(1 − t) instead of t, so that divergences
    /// crowded near t = 1 spread out (ticks still name t: 0, 0.5, 0.9, 0.99, …); leaves are drawn
    /// at the right edge, a little after the latest divergence.
    pub log_time: bool,
    /// Label the time axis by cluster size instead: with `Some(n)`, a node at time
    /// `t = 1 − ln(size) / ln(n)` has `size` leaves below it (the root at 0, leaves at 1: a log
    /// scale, which spreads the many small clusters), and the ticks name sizes (for trees without
    /// times, drawn by their clusters' sizes).
    pub size_axis: Option<usize>,
}

/// How times map to the unit interval of the plot's width.
#[derive(Debug, Clone, Copy)]
enum TimeScale {
    Linear,
    /// Linear in t, ticks naming cluster sizes `n^(1 − t)`.
    Sizes {
        n: usize,
    },
    /// s = −ln(1 − t) over [0, s_max]; later times (leaves) at the right edge.
    Hazard {
        s_max: f64,
    },
}

impl TimeScale {
    fn of(chart: &TimeDendrogramChart) -> TimeScale {
        if let Some(n) = chart.size_axis.filter(|&n| n >= 2) {
            return TimeScale::Sizes { n };
        }
        if !chart.log_time {
            return TimeScale::Linear;
        }
        let latest = chart
            .panels
            .iter()
            .flat_map(|p| {
                let mut has_child = vec![false; p.parent.len()];
                for &q in p.parent.iter().flatten() {
                    if let Some(h) = has_child.get_mut(q) {
                        *h = true;
                    }
                }
                (0..p.parent.len())
                    .filter(move |&v| has_child[v])
                    .map(|v| p.time_of(v))
            })
            .filter(|&t| t < 1.0)
            .map(|t| -(-t).ln_1p())
            .fold(0.0, f64::max);
        TimeScale::Hazard {
            s_max: (latest * 1.08).clamp(1.0, 60.0),
        }
    }

    /// Position of time `t` in [0, 1].
    fn x(self, t: f64) -> f64 {
        match self {
            TimeScale::Linear | TimeScale::Sizes { .. } => t,
            TimeScale::Hazard { s_max } => (-(-t).ln_1p() / s_max).clamp(0.0, 1.0),
        }
    }

    /// Tick times and their labels.
    fn ticks(self) -> Vec<(f64, String)> {
        match self {
            TimeScale::Linear => {
                let axis = TickAxis::linear(0.0, 1.0, 5, false);
                axis.major
                    .iter()
                    .map(|&t| (t, axis.tick_text(t).0))
                    .collect()
            }
            TimeScale::Sizes { n } => {
                let ln_n = (n as f64).ln();
                let mut sizes: Vec<usize> = [1, 2, 5]
                    .iter()
                    .flat_map(|&m| (0..7).map(move |e| m * 10usize.pow(e)))
                    .filter(|&s| s < n && (s as f64) < 0.8 * n as f64)
                    .collect();
                sizes.push(n);
                sizes.sort_unstable();
                sizes
                    .into_iter()
                    .map(|s| (1.0 - (s as f64).ln() / ln_n, s.to_string()))
                    .collect()
            }
            TimeScale::Hazard { s_max } => {
                let mut out = vec![(0.0, "0".to_string()), (0.5, "0.5".to_string())];
                for k in 1..=26 {
                    let t = 1.0 - 10f64.powi(-k);
                    if -(-t).ln_1p() > 0.97 * s_max {
                        break;
                    }
                    out.push((t, format!("0.{}", "9".repeat(k as usize))));
                }
                out.retain(|&(t, _)| -(-t).ln_1p() <= 0.97 * s_max || t == 0.0);
                out
            }
        }
    }
}

/// Positions of one tree: leaf order top to bottom, each node's vertical slot, children lists.
struct Layout {
    /// Leaves top to bottom.
    order: Vec<usize>,
    /// Vertical position of every reachable node in leaf slots.
    y: Vec<Option<f64>>,
    /// Children of every node, ordered by their smallest leaf.
    children: Vec<Vec<usize>>,
    /// The root, if the links have exactly one.
    root: Option<usize>,
}

impl Layout {
    /// Walks the tree from its root without recursion; links that do not form a tree (several
    /// roots, cycles, out-of-range parents) draw only what is reachable from the first root.
    fn new(p: &TimeTreePanel) -> Layout {
        let m = p.parent.len();
        let mut children = vec![Vec::new(); m];
        let mut root = None;
        for (v, par) in p.parent.iter().enumerate() {
            match par {
                Some(u) if *u < m && *u != v => children[*u].push(v),
                Some(_) => {}
                None if root.is_none() => root = Some(v),
                None => {}
            }
        }
        // Smallest leaf below every node (post-order by an explicit stack).
        let mut low = vec![usize::MAX; m];
        let mut seen = vec![false; m];
        let mut post = Vec::new();
        let mut stack: Vec<(usize, bool)> = root.map(|r| (r, false)).into_iter().collect();
        while let Some((v, done)) = stack.pop() {
            if done {
                post.push(v);
                continue;
            }
            if seen[v] {
                continue;
            }
            seen[v] = true;
            stack.push((v, true));
            for &c in &children[v] {
                stack.push((c, false));
            }
        }
        for &v in &post {
            low[v] = if children[v].is_empty() {
                v
            } else {
                children[v].iter().map(|&c| low[c]).min().unwrap_or(v)
            };
        }
        for c in &mut children {
            c.sort_by_key(|&k| (low[k], k));
        }
        let mut out = Layout {
            order: Vec::new(),
            y: vec![None; m],
            children,
            root,
        };
        let mut seen = vec![false; m];
        let mut stack: Vec<(usize, bool)> = root.map(|r| (r, false)).into_iter().collect();
        while let Some((v, done)) = stack.pop() {
            if done {
                let ys: Vec<f64> = out.children[v].iter().filter_map(|&c| out.y[c]).collect();
                if let (Some(a), Some(b)) = (ys.first(), ys.last()) {
                    out.y[v] = Some((a + b) / 2.0);
                }
                continue;
            }
            if seen[v] {
                continue;
            }
            seen[v] = true;
            if out.children[v].is_empty() {
                out.y[v] = Some(out.order.len() as f64);
                out.order.push(v);
                continue;
            }
            stack.push((v, true));
            for &c in out.children[v].iter().rev() {
                stack.push((c, false));
            }
        }
        out
    }
}

impl TimeTreePanel {
    fn label_of(&self, leaf: usize) -> String {
        self.leaf_labels
            .get(leaf)
            .cloned()
            .unwrap_or_else(|| leaf.to_string())
    }

    fn color_of(&self, leaf: usize) -> RGBColor {
        match self.leaf_category.get(leaf).copied().flatten() {
            Some(c) => leaf_category_color(c),
            None => UNKNOWN_GREY,
        }
    }

    fn time_of(&self, v: usize) -> f64 {
        self.time
            .get(v)
            .copied()
            .filter(|t| t.is_finite())
            .unwrap_or(1.0)
            .clamp(0.0, 1.0)
    }
}

impl TimeDendrogramChart {
    fn legend(&self, layouts: &[Layout]) -> FlowLegend {
        let unknown = self.panels.iter().zip(layouts).any(|(p, l)| {
            l.order
                .iter()
                .any(|&i| p.leaf_category.get(i).copied().flatten().is_none())
        });
        category_legend(&self.category_names, unknown)
    }
}

impl Chart for TimeDendrogramChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        blank(area)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let margin = 16.0;
        let layouts: Vec<Layout> = self.panels.iter().map(Layout::new).collect();
        let mut top = draw_title(area, &self.title)?;
        let legend = self.legend(&layouts);
        if !legend.entries.is_empty() {
            legend.draw(area, w / 2.0, top, w - 2.0 * margin)?;
            top += legend.height(w - 2.0 * margin) + 10.0;
        }
        if self.panels.is_empty() {
            return Ok(());
        }
        let panel_w = (w - 2.0 * margin) / self.panels.len() as f64;
        let titles: Vec<&str> = self.panels.iter().map(|p| p.title.as_str()).collect();
        let (title_size, title_h) = panel_title_font(&titles, panel_w - 8.0);
        let plot_top = top + title_h + 14.0;
        // Time axis: tick labels and the description below the plots.
        let axis_h = TICK_SIZE * 1.3 + 14.0 + desc_height() + 10.0;
        let plot_bottom = (h - margin - axis_h).max(plot_top + 1.0);
        let n_max = layouts
            .iter()
            .map(|l| l.order.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let slot_h = (plot_bottom - plot_top) / n_max as f64;
        // One label size for every panel, so leaves line up.
        let size = (slot_h * 1.25).clamp(9.0, TICK_SIZE - 2.0).floor();
        let scale = TimeScale::of(self);
        for (k, (panel, layout)) in self.panels.iter().zip(&layouts).enumerate() {
            let x0 = margin + panel_w * k as f64;
            let x1 = x0 + panel_w;
            draw_panel_title(area, &panel.title, (x0, x1), (top, title_h), title_size)?;
            let px = panel_plot_x(panel, layout, (x0, x1), size);
            draw_panel(
                area,
                panel,
                layout,
                (px, scale),
                (plot_top, plot_bottom),
                size,
            )?;
            draw_time_axis(area, (px, scale), plot_bottom, &self.time_label)?;
        }
        Ok(())
    }
}

/// The plot's horizontal extent inside the panel `(x0, x1)`: the leaf names go right of it.
fn panel_plot_x(
    panel: &TimeTreePanel,
    layout: &Layout,
    (x0, x1): (f64, f64),
    size: f64,
) -> (f64, f64) {
    let widest = layout
        .order
        .iter()
        .map(|&i| Label::new(&panel.label_of(i), size).width())
        .fold(0.0, f64::max)
        .min(0.4 * (x1 - x0));
    let px0 = x0 + 24.0;
    (px0, (x1 - widest - 28.0).max(px0 + 10.0))
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &TimeTreePanel,
    layout: &Layout,
    ((px0, px1), scale): ((f64, f64), TimeScale),
    (plot_top, plot_bottom): (f64, f64),
    size: f64,
) -> Result<()> {
    let Some(root) = layout.root else {
        return Ok(());
    };
    let n = layout.order.len().max(1) as f64;
    let slot = (plot_bottom - plot_top) / n.max(1.0);
    let x_of = |t: f64| px0 + scale.x(t) * (px1 - px0);
    let y_of = |s: f64| plot_top + (s + 0.5) * slot;
    let grid = RGBColor(232, 232, 232).stroke_width(1);
    for (t, _) in scale.ticks().into_iter().filter(|&(t, _)| t > 0.0) {
        line(area, (x_of(t), plot_top), (x_of(t), plot_bottom), grid)?;
    }
    let edge = RGBColor(50, 50, 50).stroke_width(2);
    // Node positions: at their time, but every internal node at least MIN_GAP pixels right of
    // its parent (and left of the leaves), so that nodes at (almost) the same time, such as a
    // binary tree's cascade of near-simultaneous divergences, stay distinguishable.
    const MIN_GAP: f64 = 4.0;
    let leaf_x = x_of(1.0);
    let mut xs = vec![f64::NAN; layout.children.len()];
    let mut stack = vec![(root, x_of(0.0))];
    while let Some((v, parent_x)) = stack.pop() {
        if !xs[v].is_nan() {
            continue;
        }
        xs[v] = if layout.children[v].is_empty() {
            leaf_x
        } else {
            x_of(panel.time_of(v))
                .max(parent_x + MIN_GAP)
                .min(leaf_x - MIN_GAP)
        };
        for &c in &layout.children[v] {
            stack.push((c, xs[v]));
        }
    }
    // The zero node's segment to the root, then every node's bracket and its children's segments.
    if let Some(yr) = layout.y[root] {
        line(area, (x_of(0.0), y_of(yr)), (xs[root], y_of(yr)), edge)?;
        area.draw(&Circle::new(
            pt(x_of(0.0), y_of(yr)),
            3,
            RGBColor(50, 50, 50).filled(),
        ))
        .map_err(plot_err)?;
    }
    for (v, kids) in layout.children.iter().enumerate() {
        if layout.y[v].is_none() || xs[v].is_nan() {
            continue;
        }
        let ys: Vec<f64> = kids.iter().filter_map(|&c| layout.y[c]).collect();
        if ys.is_empty() {
            continue;
        }
        let xv = xs[v];
        let (lo, hi) = ys
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &y| {
                (a.min(y), b.max(y))
            });
        line(area, (xv, y_of(lo)), (xv, y_of(hi)), edge)?;
        for &c in kids {
            if let (Some(yc), false) = (layout.y[c], xs[c].is_nan()) {
                line(area, (xv, y_of(yc)), (xs[c].max(xv), y_of(yc)), edge)?;
            }
        }
    }
    let r = (0.35 * slot).clamp(2.0, 7.0);
    let show_names = slot >= 7.0;
    for (s, &leaf) in layout.order.iter().enumerate() {
        let y = y_of(s as f64);
        let x = x_of(1.0);
        draw_marker(
            area,
            leaf_category_marker(panel.leaf_category.get(leaf).copied().flatten()),
            (x, y),
            r,
            panel.color_of(leaf).to_rgba(),
        )?;
        if show_names {
            Label::new(&panel.label_of(leaf), size)
                .color(darker(panel.color_of(leaf)))
                .anchor(HPos::Left, VPos::Center)
                .draw(area, pt(x + r + 6.0, y))?;
        }
    }
    Ok(())
}

/// A darker shade of `c` for text (pale category colours stay readable on white).
fn darker(c: RGBColor) -> RGBColor {
    let f = |v: u8| (f64::from(v) * 0.7).round() as u8;
    RGBColor(f(c.0), f(c.1), f(c.2))
}

fn draw_time_axis<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ((px0, px1), scale): ((f64, f64), TimeScale),
    y: f64,
    label: &str,
) -> Result<()> {
    let color = RGBColor(80, 80, 80);
    line(area, (px0, y), (px1, y), color.stroke_width(1))?;
    for (t, text) in scale.ticks() {
        let x = px0 + scale.x(t) * (px1 - px0);
        line(area, (x, y), (x, y + 5.0), color.stroke_width(1))?;
        Label::new(&text, TICK_SIZE)
            .color(RGBColor(40, 40, 40))
            .anchor(HPos::Center, VPos::Top)
            .draw(area, pt(x, y + 9.0))?;
    }
    if !label.is_empty() {
        let size = fit_font_size(&[label], LABEL_SIZE - 2.0, 12.0, px1 - px0);
        Label::new(label, size)
            .anchor(HPos::Center, VPos::Top)
            .draw(area, pt((px0 + px1) / 2.0, y + 14.0 + TICK_SIZE * 1.3))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::save_chart;
    use crate::experiment::chart::test_util::{check_outputs, temp_dir};

    /// Six leaves: a root with three children (one a cherry, one a triple), and a binary twin.
    fn sample() -> TimeDendrogramChart {
        let labels: Vec<String> = ["Ant", "Bee", "Cat", "Dog", "Eel", "Fox"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let category = vec![Some(0), Some(0), Some(1), Some(1), None, Some(1)];
        let multi = TimeTreePanel {
            title: "PYDT: 3 root children".into(),
            // 6 = root, 7 = {0, 1}, 8 = {2, 3, 5}
            parent: vec![
                Some(7),
                Some(7),
                Some(8),
                Some(8),
                Some(6),
                Some(8),
                None,
                Some(6),
                Some(6),
            ],
            time: vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.3, 0.8, 0.6],
            leaf_labels: labels.clone(),
            leaf_category: category.clone(),
        };
        let binary = TimeTreePanel {
            title: "DDT".into(),
            parent: vec![
                Some(7),
                Some(7),
                Some(9),
                Some(9),
                Some(6),
                Some(8),
                None,
                Some(10),
                Some(10),
                Some(8),
                Some(6),
            ],
            time: vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.2, 0.85, 0.55, 0.9, 0.4],
            leaf_labels: labels,
            leaf_category: category,
        };
        TimeDendrogramChart {
            title: "MAP trees".into(),
            panels: vec![binary, multi],
            category_names: vec!["insects".into(), "mammals".into()],
            time_label: "divergence time t".into(),
            log_time: false,
            size_axis: None,
        }
    }

    #[test]
    fn multifurcations_are_drawn_with_every_child() {
        let chart = sample();
        let l = Layout::new(&chart.panels[1]);
        assert_eq!(l.root, Some(6));
        assert_eq!(l.children[6], vec![7, 8, 4]);
        assert_eq!(l.children[8], vec![2, 3, 5]);
        assert_eq!(l.order, vec![0, 1, 2, 3, 5, 4]);
        assert_eq!(l.y[8], Some(3.0));
        assert_eq!(l.y[6], Some(2.75));
        let dir = temp_dir("time-dendrogram");
        let (png, svg) = save_chart(&dir.join("t"), 1400, 700, &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        for text in [
            "Ant",
            "Fox",
            "insects",
            "unknown",
            "divergence time t",
            "3 root children",
        ] {
            assert!(svg.contains(text), "{text:?} missing");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn broken_links_do_not_fail() {
        let dir = temp_dir("time-dendrogram-broken");
        let cyclic = TimeTreePanel {
            parent: vec![Some(2), Some(9), Some(3), Some(2)],
            time: vec![f64::NAN, 2.0, -1.0, 0.5],
            ..Default::default()
        };
        let empty = TimeTreePanel::default();
        let chart = TimeDendrogramChart {
            panels: vec![cyclic, empty],
            ..Default::default()
        };
        save_chart(&dir.join("b"), 300, 200, &chart).unwrap();
        save_chart(&dir.join("c"), 20, 20, &chart).unwrap();
        save_chart(&dir.join("d"), 400, 300, &TimeDendrogramChart::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
