//! Dendrograms side by side, leaves coloured by category, and the panel
//! drawing shared with the graph-and-trees chart.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::TickAxis;
use super::color::qualitative_color;
use super::frame::{blank, desc_height, draw_panel_title, draw_title, panel_title_font, PxRect};
use super::legend::{FlowLegend, Swatch};
use super::shapes::{draw_marker, line, pt, Marker, MARKERS};
use super::text::{fit_font_size, snap_size, Label, LABEL_SIZE, TICK_SIZE};
use super::{plot_err, Chart};
use crate::tree::{Node, Tree};

/// Colour of leaf category `c`: the [`qualitative_color`] palette without its
/// grey (kept for unknown leaves), so 9 distinct colours that then repeat.
pub(super) fn leaf_category_color(c: usize) -> RGBColor {
    const NOT_GREY: [usize; 9] = [0, 1, 2, 3, 4, 5, 6, 8, 9];
    qualitative_color(NOT_GREY[c % NOT_GREY.len()])
}

/// Marker shape of leaf category `c` (circle, square, triangle, ...; `None`, unknown, is a
/// circle): with [`leaf_category_color`] every category below 18 has its own pair of colour
/// and shape, so colour is never the only cue.
pub(super) fn leaf_category_marker(c: Option<usize>) -> Marker {
    match c {
        Some(c) => MARKERS[c % MARKERS.len()],
        None => Marker::Circle,
    }
}

/// Categories that get a pair of colour and marker of their own ([`leaf_category_color`] ×
/// [`leaf_category_marker`]); with more, two would be drawn alike, so callers draw none.
pub const DISTINCT_CATEGORIES: usize = 18;

/// Colour of leaves without a category.
const UNKNOWN_GREY: RGBColor = RGBColor(150, 150, 150);

/// One dendrogram of a [`DendrogramChart`] or
/// [`GraphAndTreesChart`](super::GraphAndTreesChart).
#[derive(Debug, Clone)]
pub struct DendrogramPanel {
    /// Title above the panel, e.g. `"greedy: energy 12.3, purity 0.71"`
    /// (wrapped onto two lines if it does not fit).
    pub title: String,
    /// The tree; leaves are drawn in its left-to-right order.
    pub tree: Tree,
    /// Text under each leaf, indexed by leaf index; missing entries show the index.
    pub leaf_labels: Vec<String>,
    /// Category of each leaf, indexed by leaf index, for the colour of its
    /// marker; `None` (or a missing entry) is drawn grey as "unknown".
    pub leaf_category: Vec<Option<usize>>,
}

/// Dendrograms side by side (one row), e.g. the MAP tree next to the greedy
/// tree. Each is drawn top-down: leaves at the bottom in the tree's order,
/// each node at a height equal to the number of leaves under it (leaves at 0,
/// the root at N), joined by elbow connectors. Leaf markers are coloured by
/// category ([`qualitative_color`] without its grey; grey for unknown), the
/// leaf labels are written below them (vertically if they would overlap),
/// and one shared legend of `category_names` (plus "unknown" if any leaf has
/// no category) goes under the title. With no `category_names` there is no
/// legend.
#[derive(Debug, Clone, Default)]
pub struct DendrogramChart {
    /// Title drawn above the figure.
    pub title: String,
    /// The dendrograms, left to right.
    pub panels: Vec<DendrogramPanel>,
    /// Legend name of each category, indexed by category.
    pub category_names: Vec<String>,
    /// Description of the y axis of each panel, e.g. `"cluster size"`.
    pub height_label: String,
}

/// Pixel positions of a tree's nodes: leaf slots left to right, heights in leaves.
struct TreeLayout {
    /// Leaf indices in left-to-right order.
    order: Vec<usize>,
    /// Per arena node: (slot position, height in leaves), if reachable.
    pos: Vec<Option<(f64, f64)>>,
    /// Internal nodes as (node, left child, right child), children first.
    joins: Vec<(usize, usize, usize)>,
}

impl TreeLayout {
    /// Walks `tree` from the root without recursion; nodes reached twice
    /// (malformed arenas) are ignored rather than looped over.
    fn new(tree: &Tree) -> Self {
        let nodes = tree.nodes();
        let n = nodes.len();
        let mut out = TreeLayout {
            order: Vec::new(),
            pos: vec![None; n],
            joins: Vec::new(),
        };
        let mut leaves_under = vec![0usize; n];
        let mut seen = vec![false; n];
        let mut stack = vec![(tree.root(), false)];
        while let Some((v, children_done)) = stack.pop() {
            let Some(&node) = nodes.get(v) else { continue };
            if !children_done {
                if seen[v] {
                    continue;
                }
                seen[v] = true;
            }
            match node {
                Node::Leaf(i) => {
                    out.pos[v] = Some((out.order.len() as f64, 0.0));
                    leaves_under[v] = 1;
                    out.order.push(i);
                }
                Node::Internal(l, r) if !children_done => {
                    stack.push((v, true));
                    stack.push((r, false));
                    stack.push((l, false));
                }
                Node::Internal(l, r) => {
                    let child = |c: usize| out.pos.get(c).copied().flatten();
                    if let (Some(a), Some(b)) = (child(l), child(r)) {
                        leaves_under[v] = leaves_under[l] + leaves_under[r];
                        out.pos[v] = Some(((a.0 + b.0) / 2.0, leaves_under[v] as f64));
                        out.joins.push((v, l, r));
                    }
                }
            }
        }
        out
    }
}

/// How the leaf labels of one panel are written.
#[derive(Debug, Clone, Copy)]
struct LeafText {
    size: f64,
    vertical: bool,
    /// Pixels the labels need below the leaf markers.
    band: f64,
}

/// Horizontal labels if they fit the leaf spacing `slot_w` at a readable
/// size, else vertical ones no longer than `max_band`.
fn leaf_text(labels: &[String], slot_w: f64, max_band: f64) -> LeafText {
    let texts: Vec<&str> = labels.iter().map(String::as_str).collect();
    let widest = |size: f64| {
        texts
            .iter()
            .map(|t| Label::new(t, size).width())
            .fold(0.0, f64::max)
    };
    let size = fit_font_size(&texts, TICK_SIZE - 2.0, 16.0, slot_w - 6.0);
    if widest(size) <= slot_w - 6.0 {
        let cap = Label::new("M", size).cap_height();
        return LeafText {
            size,
            vertical: false,
            band: cap + 12.0,
        };
    }
    // Vertical: the glyph height must fit the spacing, the length the band.
    let mut size = snap_size(TICK_SIZE - 2.0);
    // Not below 12 px: crowded leaves get touching labels rather than unreadable ones.
    while size > 12.0 && Label::new("M", size).cap_height() * 1.5 > slot_w {
        size -= 2.0;
    }
    let size = fit_font_size(&texts, size, 12.0, max_band - 10.0);
    LeafText {
        size,
        vertical: true,
        band: widest(size).min(max_band - 10.0) + 10.0,
    }
}

/// Horizontal layout of one dendrogram panel inside `(x0, x1)`.
struct PanelFrame {
    y_axis: TickAxis,
    /// Left edge of the plot (the y axis) and its right edge.
    px: (f64, f64),
    n_leaves: usize,
}

impl PanelFrame {
    fn new(layout: &TreeLayout, (x0, x1): (f64, f64), max_ticks: usize) -> Self {
        let n_leaves = layout.order.len();
        let y_axis = TickAxis::linear(0.0, n_leaves.max(1) as f64, max_ticks, true);
        let left = desc_height() + 10.0 + y_axis.label_width() + 16.0;
        let px0 = (x0 + left).min(x1 - 10.0);
        Self {
            y_axis,
            px: (px0, (x1 - 12.0).max(px0 + 1.0)),
            n_leaves,
        }
    }

    fn slot_w(&self) -> f64 {
        (self.px.1 - self.px.0) / self.n_leaves.max(1) as f64
    }

    fn leaf_x(&self, slot: f64) -> f64 {
        self.px.0 + (slot + 0.5) * self.slot_w()
    }
}

impl DendrogramPanel {
    fn label_of(&self, leaf: usize) -> String {
        self.leaf_labels
            .get(leaf)
            .cloned()
            .unwrap_or_else(|| leaf.to_string())
    }

    pub(super) fn color_of(&self, leaf: usize) -> RGBColor {
        match self.leaf_category.get(leaf).copied().flatten() {
            Some(c) => leaf_category_color(c),
            None => UNKNOWN_GREY,
        }
    }

    fn marker_of(&self, leaf: usize) -> Marker {
        leaf_category_marker(self.leaf_category.get(leaf).copied().flatten())
    }
}

/// Whether any leaf of any panel has no category.
fn any_unknown_leaf(panels: &[DendrogramPanel]) -> bool {
    panels.iter().any(|p| {
        TreeLayout::new(&p.tree)
            .order
            .iter()
            .any(|&i| p.leaf_category.get(i).copied().flatten().is_none())
    })
}

/// Draws `panels` side by side in `rect`, each with a title band of
/// `title_font = (size, band height)` on top (so titles of neighbouring
/// panels line up), a y axis described by `height_label` and leaf labels
/// at the bottom.
pub(super) fn draw_dendrogram_panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panels: &[DendrogramPanel],
    rect: PxRect,
    height_label: &str,
    title_font: (f64, f64),
) -> Result<()> {
    let (x0, y0, x1, y1) = rect;
    if panels.is_empty() || x1 <= x0 || y1 <= y0 {
        return Ok(());
    }
    let (title_size, title_h) = title_font;
    let panel_w = (x1 - x0) / panels.len() as f64;
    let layouts: Vec<TreeLayout> = panels.iter().map(|p| TreeLayout::new(&p.tree)).collect();
    let plot_top = y0 + title_h + 12.0;

    // Leaf label band, shared by all panels so the leaf rows line up.
    let max_band = 0.3 * (y1 - plot_top);
    let max_r = 7.0;
    let frames_for = |max_ticks: usize| -> Vec<PanelFrame> {
        layouts
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let px = x0 + panel_w * k as f64;
                PanelFrame::new(l, (px, px + panel_w), max_ticks)
            })
            .collect()
    };
    let texts: Vec<LeafText> = frames_for(8)
        .iter()
        .zip(panels.iter().zip(&layouts))
        .map(|(f, (p, l))| {
            let labels: Vec<String> = l.order.iter().map(|&i| p.label_of(i)).collect();
            leaf_text(&labels, f.slot_w(), max_band)
        })
        .collect();
    let band = texts.iter().map(|t| t.band).fold(0.0, f64::max);
    let plot_bottom = (y1 - band - max_r - 6.0).max(plot_top + 1.0);
    let plot_h = plot_bottom - plot_top;
    let max_ticks = ((plot_h / (2.0 * TICK_SIZE)).floor() as usize).clamp(2, 8);
    let frames = frames_for(max_ticks);

    let edge = RGBColor(50, 50, 50).stroke_width(2);
    let grid = RGBColor(232, 232, 232).stroke_width(1);
    let axis_color = RGBColor(80, 80, 80);
    for (k, ((panel, layout), (frame, text))) in panels
        .iter()
        .zip(&layouts)
        .zip(frames.iter().zip(&texts))
        .enumerate()
    {
        let (pa, pb) = (x0 + panel_w * k as f64, x0 + panel_w * (k + 1) as f64);
        draw_panel_title(area, &panel.title, (pa, pb), (y0, title_h), title_size)?;
        let (px0, px1) = frame.px;
        let top_h = frame.y_axis.hi;
        let y_of = |h: f64| plot_bottom - h / top_h * plot_h;

        // Y axis: grid lines, ticks, labels and description.
        for &t in &frame.y_axis.major {
            let y = y_of(t);
            if t > 0.0 {
                line(area, (px0, y), (px1, y), grid)?;
            }
            line(area, (px0 - 5.0, y), (px0, y), axis_color.stroke_width(1))?;
            Label::new(&frame.y_axis.tick_text(t).0, TICK_SIZE)
                .color(RGBColor(40, 40, 40))
                .anchor(HPos::Right, VPos::Center)
                .draw(area, pt(px0 - 9.0, y))?;
        }
        line(
            area,
            (px0, plot_top),
            (px0, plot_bottom),
            axis_color.stroke_width(1),
        )?;
        if !height_label.is_empty() {
            let size = fit_font_size(&[height_label], LABEL_SIZE - 2.0, 12.0, plot_h);
            Label::new(height_label, size)
                .vertical()
                .anchor(HPos::Center, VPos::Top)
                .draw(area, pt(pa + 6.0, (plot_top + plot_bottom) / 2.0))?;
        }

        // Elbow connectors, then the leaves on top.
        let xy = |v: usize| {
            layout
                .pos
                .get(v)
                .copied()
                .flatten()
                .map(|(s, h)| (frame.leaf_x(s), y_of(h)))
        };
        for &(v, l, r) in &layout.joins {
            if let (Some(p), Some(a), Some(b)) = (xy(v), xy(l), xy(r)) {
                let path = vec![pt(a.0, a.1), pt(a.0, p.1), pt(b.0, p.1), pt(b.0, b.1)];
                area.draw(&PathElement::new(path, edge)).map_err(plot_err)?;
            }
        }
        let r = (0.3 * frame.slot_w()).clamp(2.5, max_r);
        let label_top = plot_bottom + max_r + 6.0;
        for (slot, &leaf) in layout.order.iter().enumerate() {
            let x = frame.leaf_x(slot as f64);
            draw_marker(
                area,
                panel.marker_of(leaf),
                (x, plot_bottom),
                r,
                panel.color_of(leaf).to_rgba(),
            )?;
            let label = panel.label_of(leaf);
            let l = Label::new(&label, text.size);
            if text.vertical {
                l.vertical()
                    .anchor(HPos::Right, VPos::Center)
                    .draw(area, pt(x, label_top))?;
            } else {
                l.anchor(HPos::Center, VPos::Top)
                    .draw(area, pt(x, label_top))?;
            }
        }
    }
    Ok(())
}

/// Legend of leaf categories: one marker per name as its leaves are drawn (colour and shape),
/// plus "unknown" as a grey circle.
pub(super) fn category_legend(names: &[String], unknown: bool) -> FlowLegend {
    let mut entries: Vec<(Swatch, String)> = names
        .iter()
        .enumerate()
        .map(|(c, name)| {
            (
                Swatch::Marker {
                    marker: leaf_category_marker(Some(c)),
                    color: leaf_category_color(c).to_rgba(),
                    r: 7.0,
                },
                name.clone(),
            )
        })
        .collect();
    if unknown && !entries.is_empty() {
        entries.push((
            Swatch::Marker {
                marker: Marker::Circle,
                color: UNKNOWN_GREY.to_rgba(),
                r: 7.0,
            },
            "unknown".to_owned(),
        ));
    }
    FlowLegend { entries }
}

/// Clears `area`, draws `title` and under it a legend of `category_names`
/// (plus "unknown" if a leaf of `panels` has no category), and returns the
/// rectangle left below them for the panels, inside a margin.
pub(super) fn draw_panels_heading<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    category_names: &[String],
    panels: &[DendrogramPanel],
) -> Result<PxRect> {
    let margin = 16.0;
    let unknown = any_unknown_leaf(panels);
    blank(area)?;
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (f64::from(w), f64::from(h));
    let mut top = draw_title(area, title)?;
    let legend = category_legend(category_names, unknown);
    if !legend.entries.is_empty() {
        legend.draw(area, w / 2.0, top, w - 2.0 * margin)?;
        top += legend.height(w - 2.0 * margin) + 10.0;
    }
    Ok((margin, top, w - margin, h - margin))
}

impl Chart for DendrogramChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let rect = draw_panels_heading(area, &self.title, &self.category_names, &self.panels)?;
        let n = self.panels.len().max(1) as f64;
        let titles: Vec<&str> = self.panels.iter().map(|p| p.title.as_str()).collect();
        let title_font = panel_title_font(&titles, (rect.2 - rect.0) / n - 8.0);
        draw_dendrogram_panels(area, &self.panels, rect, &self.height_label, title_font)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::save_chart;
    use crate::experiment::chart::test_util::{check_outputs, degenerate_panels, newick, temp_dir};
    use std::path::Path;

    /// Two 12-leaf trees over 5 categories (leaves 4 and 9 unknown).
    fn sample_dendrograms() -> DendrogramChart {
        let labels: Vec<String> = (0..12).map(|i| format!("S{}", 101 + 7 * i)).collect();
        let category: Vec<Option<usize>> = [0, 1, 2, 3, 9, 0, 1, 2, 3, 4, 4, 1]
            .iter()
            .map(|&c| (c < 5).then_some(c))
            .collect();
        let panel = |title: &str, tree: &str| DendrogramPanel {
            title: title.into(),
            tree: newick(tree),
            leaf_labels: labels.clone(),
            leaf_category: category.clone(),
        };
        DendrogramChart {
            title: "MAP and greedy hierarchies of 12 samples".into(),
            panels: vec![
                panel(
                    "MAP: energy \u{2212}31.42, purity 0.71",
                    "((((0,5),10),((1,6),11)),(((2,7),(3,8)),(4,9)));",
                ),
                panel(
                    "greedy: energy \u{2212}35.07, purity 0.58",
                    "(((((0,1),5),(6,10)),11),(((2,3),(7,8)),(9,4)));",
                ),
            ],
            category_names: ["Basal", "Her2", "LumA", "LumB", "Normal"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            height_label: "cluster size".into(),
        }
    }

    #[test]
    fn dendrogram_renders_png_and_svg() {
        let dir = temp_dir("dendrogram");
        let (png, svg) = save_chart(&dir.join("dendro"), 1400, 700, &sample_dendrograms()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        for text in ["S178", "LumB", "unknown", "cluster size", "purity 0.58"] {
            assert!(svg.contains(text), "{text:?} missing from SVG");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tree_layout_heights_and_order() {
        let layout = TreeLayout::new(&newick("((0,2),(1,(3,4)));"));
        let mut order = layout.order.clone();
        order.sort_unstable();
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
        assert_eq!(layout.joins.len(), 4);
        let heights: Vec<f64> = layout.pos.iter().flatten().map(|p| p.1).collect();
        assert_eq!(heights.iter().fold(0.0, |a: f64, &b| a.max(b)), 5.0);
        assert_eq!(heights.iter().filter(|&&h| h == 0.0).count(), 5);
        // A cyclic arena is refused before it reaches a layout.
        assert!(Tree::from_arena(vec![Node::Internal(0, 1), Node::Leaf(0)], 0).is_err());
    }

    #[test]
    fn degenerate_dendrograms_do_not_fail() {
        let dir = temp_dir("degenerate-dendrograms");
        let (one_leaf, cyclic) = degenerate_panels();
        save_chart(&dir.join("d0"), 400, 300, &DendrogramChart::default()).unwrap();
        let chart = DendrogramChart {
            panels: vec![one_leaf, cyclic],
            category_names: vec!["a".into()],
            ..Default::default()
        };
        save_chart(&dir.join("d1"), 300, 200, &chart).unwrap();
        save_chart(&dir.join("d2"), 20, 20, &chart).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the dendrogram samples to `/tmp/charts/` for inspection:
    /// `cargo test --lib experiment::chart -- --ignored`.
    #[test]
    #[ignore]
    fn render_dendrogram_samples() {
        let dir = Path::new("/tmp/charts");
        save_chart(&dir.join("dendrograms"), 1400, 700, &sample_dendrograms()).unwrap();
        // Many leaves with long labels (vertical), three panels, no legend.
        fn balanced(leaves: &[usize]) -> Tree {
            match leaves {
                [i] => Tree::leaf(*i),
                _ => {
                    let (a, b) = leaves.split_at(leaves.len() / 3 + 1);
                    Tree::join(balanced(a), balanced(b)).unwrap()
                }
            }
        }
        let n = 40;
        let perm: Vec<usize> = (0..n).map(|i| (i * 17) % n).collect();
        let panel = |title: &str, leaves: &[usize]| DendrogramPanel {
            title: title.into(),
            tree: balanced(leaves),
            leaf_labels: (0..n)
                .map(|i| format!("TCGA-A{i:02}-{}", 3000 + 37 * i))
                .collect(),
            leaf_category: (0..n).map(|i| Some(i % 3)).collect(),
        };
        let ids: Vec<usize> = (0..n).collect();
        let big = DendrogramChart {
            title: "Forty leaves".into(),
            panels: vec![
                panel(
                    "beam search (width 10): energy \u{2212}120.5, purity 0.44",
                    &ids,
                ),
                panel("greedy: energy \u{2212}131.0, purity 0.40", &perm),
                panel("average linkage", &ids),
            ],
            category_names: Vec::new(),
            height_label: "cluster size".into(),
        };
        save_chart(&dir.join("dendrograms_40"), 1400, 700, &big).unwrap();
    }
}

#[cfg(test)]
mod distinct_tests {
    use super::*;

    #[test]
    fn the_distinct_categories_have_distinct_colour_and_marker_pairs() {
        let pair = |c: usize| (leaf_category_color(c), leaf_category_marker(Some(c)));
        for a in 0..DISTINCT_CATEGORIES {
            for b in a + 1..DISTINCT_CATEGORIES {
                assert!(pair(a) != pair(b), "{a} and {b} are drawn alike");
            }
        }
        assert!(
            (0..DISTINCT_CATEGORIES).any(|a| pair(a) == pair(DISTINCT_CATEGORIES)),
            "one more category repeats a pair: the limit is the palette's"
        );
    }
}
