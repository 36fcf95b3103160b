//! A weighted graph on a circle next to trees over its nodes.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::dendrogram::{
    draw_dendrogram_panels, draw_panels_heading, leaf_category_marker, DendrogramPanel,
};
use super::format::format_number_exact;
use super::frame::{draw_panel_title, panel_title_font, PxRect};
use super::shapes::{draw_marker, fill_rect, polyline, pt};
use super::text::{fit_font_size, Label, CAPTION_SIZE, TICK_SIZE};
use super::Chart;

/// A weighted graph next to trees over its nodes with their costs (Figure 4
/// of the Cluster Trellis paper). Left: the nodes on a circle, labelled, an
/// edge for each pair `i < j` with `weights[i][j] != 0`, its width growing
/// with `|weight|` (1 to 8 px, relative to the largest), dark grey for
/// positive and dashed red for negative weights, and the weight written at
/// the edge if there are at most 30 edges. Right: the trees drawn as in
/// [`DendrogramChart`](super::DendrogramChart) (y axis "cluster size";
/// category legend from `category_names`).
#[derive(Debug, Clone, Default)]
pub struct GraphAndTreesChart {
    /// Title drawn above the figure.
    pub title: String,
    /// Symmetric weight matrix; only the upper triangle (`i < j`) is read and
    /// non-finite or zero weights draw no edge.
    pub weights: Vec<Vec<f64>>,
    /// Name of each node (missing entries show the index).
    pub node_labels: Vec<String>,
    /// The trees, drawn left to right to the right of the graph.
    pub trees: Vec<DendrogramPanel>,
    /// Title above the graph panel.
    pub graph_title: String,
    /// Names of the leaf categories of the tree panels, for a legend under the title (empty:
    /// no legend). Graph nodes take the colours of the first tree panel's leaf categories.
    pub category_names: Vec<String>,
    /// Order of the nodes around the circle (a permutation of `0..n`; anything else, e.g.
    /// empty, gives index order).
    pub node_order: Vec<usize>,
    /// Where each node goes, in the unit square (x right, y down), instead of the circle (e.g.
    /// a ladder's two rails); empty or of another length: the circle.
    pub node_positions: Vec<(f64, f64)>,
}

/// The stroke width of an edge of weight `w` (1 to 8 px, growing with |w| / `max_abs`).
fn edge_width(w: f64, max_abs: f64) -> u32 {
    (1.0 + 7.0 * w.abs() / max_abs).round() as u32
}

impl GraphAndTreesChart {
    /// Most edges whose weights are written on the graph.
    const MAX_LABELLED_EDGES: usize = 30;

    fn n_nodes(&self) -> usize {
        self.weights.len().max(self.node_labels.len())
    }

    fn node_label(&self, i: usize) -> String {
        self.node_labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| i.to_string())
    }

    /// Edges `(i, j, w)` with `i < j` and a finite non-zero weight.
    fn edges(&self) -> Vec<(usize, usize, f64)> {
        let mut edges = Vec::new();
        for (i, row) in self.weights.iter().enumerate() {
            for (j, &w) in row.iter().enumerate().skip(i + 1) {
                if w.is_finite() && w != 0.0 {
                    edges.push((i, j, w));
                }
            }
        }
        edges
    }

    /// Draws the graph panel in `rect` below a title band of `title_font`.
    fn draw_graph<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        rect: PxRect,
        (title_size, title_h): (f64, f64),
    ) -> Result<()> {
        let (x0, y0, x1, y1) = rect;
        draw_panel_title(area, &self.graph_title, (x0, x1), (y0, title_h), title_size)?;
        let n = self.n_nodes();
        let edges = self.edges();
        let negative = edges.iter().any(|e| e.2 < 0.0);

        // Caption at the bottom. Where every edge rounds to the same width (weights within
        // about 1/14 of each other, e.g. 1 against 1 + ε) the width cue is invisible: say so.
        let max_abs = edges.iter().fold(0.0f64, |a, e| a.max(e.2.abs()));
        let mut widths: Vec<u32> = edges.iter().map(|e| edge_width(e.2, max_abs)).collect();
        widths.sort_unstable();
        widths.dedup();
        let labelled = edges.len() <= Self::MAX_LABELLED_EDGES;
        let caption = match (widths.len() > 1, negative, labelled) {
            (true, true, _) => "edge width grows with |weight|; red dashed: negative",
            (true, false, _) => "edge width grows with weight",
            (false, true, true) => {
                "weights too close for edge widths to differ: read the labels; red dashed: negative"
            }
            (false, false, true) => "weights too close for edge widths to differ: read the labels",
            (false, true, false) => {
                "weights too close for edge widths to differ; red dashed: negative"
            }
            (false, false, false) => "weights too close for edge widths to differ",
        };
        let cap_size = fit_font_size(&[caption], CAPTION_SIZE - 4.0, 14.0, x1 - x0 - 8.0);
        let cap_h = if edges.is_empty() {
            0.0
        } else {
            Label::new(caption, cap_size).cap_height() * 2.4
        };
        if cap_h > 0.0 {
            Label::new(caption, cap_size)
                .color(RGBColor(60, 60, 60))
                .draw(area, pt((x0 + x1) / 2.0, y1 - cap_h / 2.0))?;
        }
        if n == 0 {
            return Ok(());
        }

        // Circle layout, leaving room for the node labels outside it.
        let label_size = if self.node_positions.len() == n && n > 1 {
            TICK_SIZE + 4.0
        } else {
            TICK_SIZE
        };
        let labels: Vec<String> = (0..n).map(|i| self.node_label(i)).collect();
        let label_w = labels
            .iter()
            .map(|l| Label::new(l, label_size).width())
            .fold(0.0, f64::max);
        let label_h = Label::new("M", label_size).cap_height();
        let (top, bottom) = (y0 + title_h + 8.0, y1 - cap_h - 4.0);
        let (cx, cy) = ((x0 + x1) / 2.0, (top + bottom) / 2.0);
        let node_r = 9.0;
        let radius = ((x1 - x0) / 2.0 - label_w - node_r - 16.0)
            .min((bottom - top) / 2.0 - label_h - node_r - 12.0)
            .max(10.0);
        // Slot of each node around the circle.
        let slot: Vec<usize> = {
            let mut seen = vec![false; n];
            let valid = self.node_order.len() == n
                && self
                    .node_order
                    .iter()
                    .all(|&v| v < n && !std::mem::replace(&mut seen[v], true));
            let mut slot: Vec<usize> = (0..n).collect();
            if valid {
                for (k, &v) in self.node_order.iter().enumerate() {
                    slot[v] = k;
                }
            }
            slot
        };
        let angle = |i: usize| {
            -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * slot[i] as f64 / n as f64
        };
        let placed = self.node_positions.len() == n && n > 1;
        let pos: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                if placed {
                    // The unit square inside the room the circle would take, wider than tall.
                    let (u, v) = self.node_positions[i];
                    let half_w = (x1 - x0) / 2.0 - label_w - node_r - 16.0;
                    let half_h = radius * 0.6;
                    (cx + half_w * (2.0 * u - 1.0), cy + half_h * (2.0 * v - 1.0))
                } else if n == 1 {
                    (cx, cy)
                } else {
                    (cx + radius * angle(i).cos(), cy + radius * angle(i).sin())
                }
            })
            .collect();
        // Which way each node's label goes: outward from the centre.
        let outward = |i: usize| -> (f64, f64) {
            if placed {
                let v = self.node_positions[i].1;
                (0.0, if v < 0.5 { -1.0 } else { 1.0 })
            } else if n == 1 {
                (0.0, -1.0)
            } else {
                (angle(i).cos(), angle(i).sin())
            }
        };

        // Edges, weakest first so strong ones stay on top.
        let mut order = edges.clone();
        order.sort_by(|a, b| a.2.abs().total_cmp(&b.2.abs()));
        let red = RGBColor(215, 25, 28);
        for &(i, j, w) in &order {
            let width = edge_width(w, max_abs);
            let (color, dashed) = if w > 0.0 {
                (RGBColor(70, 70, 70).mix(0.85), false)
            } else {
                (red.mix(0.9), true)
            };
            polyline(area, &[pos[i], pos[j]], color.stroke_width(width), dashed)?;
        }

        // Weight values near the edge midpoints, shifted along the edge
        // where they would cover another value or a node.
        if edges.len() <= Self::MAX_LABELLED_EDGES {
            // (Few edges on a laid-out graph: room for labels that read at half the width.)
            let size = if placed {
                TICK_SIZE + 6.0
            } else {
                TICK_SIZE - 4.0
            };
            let cap = Label::new("0", size).cap_height();
            let mut taken: Vec<PxRect> = pos
                .iter()
                .map(|&(x, y)| (x - node_r, y - node_r, x + node_r, y + node_r))
                .collect();
            let overlap = |a: PxRect, b: PxRect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
            for &(i, j, w) in &edges {
                let text = format_number_exact(w, 2, 4);
                let tw = Label::new(&text, size).width();
                let (a, b) = (pos[i], pos[j]);
                let rect_at = |t: f64| {
                    let (x, y) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                    (
                        x - tw / 2.0 - 3.0,
                        y - cap / 2.0 - 4.0,
                        x + tw / 2.0 + 3.0,
                        y + cap / 2.0 + 4.0,
                    )
                };
                let candidates = [0.5, 0.4, 0.6, 0.32, 0.68, 0.25, 0.75];
                let t = candidates
                    .iter()
                    .copied()
                    .find(|&t| taken.iter().all(|&r| !overlap(rect_at(t), r)))
                    .unwrap_or(0.5);
                let r = rect_at(t);
                taken.push(r);
                fill_rect(area, (r.0, r.1), (r.2, r.3), WHITE.mix(0.85).filled())?;
                let color = if w < 0.0 { red } else { BLACK };
                Label::new(&text, size)
                    .color(color)
                    .draw(area, pt((r.0 + r.2) / 2.0, (r.1 + r.3) / 2.0))?;
            }
        }

        // Nodes and their labels outside the circle.
        for (i, &(x, y)) in pos.iter().enumerate() {
            // Colour and shape of the node's category, as its leaves in the trees and the legend.
            let (node_color, marker) = match self.trees.first() {
                Some(p) if p.leaf_category.get(i).is_some_and(|c| c.is_some()) => (
                    p.color_of(i),
                    leaf_category_marker(p.leaf_category.get(i).copied().flatten()),
                ),
                _ => (RGBColor(31, 119, 180), leaf_category_marker(None)),
            };
            draw_marker(area, marker, (x, y), node_r + 2.0, WHITE.to_rgba())?;
            draw_marker(area, marker, (x, y), node_r, node_color.to_rgba())?;
            let (dx, dy) = outward(i);
            let h = if dx > 0.3 {
                HPos::Left
            } else if dx < -0.3 {
                HPos::Right
            } else {
                HPos::Center
            };
            let v = if dy > 0.3 {
                VPos::Top
            } else if dy < -0.3 {
                VPos::Bottom
            } else {
                VPos::Center
            };
            let d = node_r + 7.0;
            Label::new(&labels[i], label_size)
                .anchor(h, v)
                .draw(area, pt(x + d * dx, y + d * dy))?;
        }
        Ok(())
    }
}

impl Chart for GraphAndTreesChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let (x0, top, x1, y1) =
            draw_panels_heading(area, &self.title, &self.category_names, &self.trees)?;
        // The graph gets a square-ish panel, the trees share the rest.
        let graph_w = if self.trees.is_empty() {
            x1 - x0
        } else {
            ((x1 - x0) * 0.42).min(y1 - top + 40.0).max(0.0)
        };
        let tree_w = (x1 - x0 - graph_w) / self.trees.len().max(1) as f64;
        let titles: Vec<&str> = self.trees.iter().map(|p| p.title.as_str()).collect();
        let tree_font = panel_title_font(&titles, tree_w - 8.0);
        let graph_font = panel_title_font(&[&self.graph_title], graph_w - 8.0);
        // One band height for all panels so the titles line up.
        let band = tree_font.1.max(graph_font.1);
        let size = tree_font.0.min(graph_font.0);
        self.draw_graph(area, (x0, top, x0 + graph_w, y1), (size, band))?;
        draw_dendrogram_panels(
            area,
            &self.trees,
            (x0 + graph_w, top, x1, y1),
            "cluster size",
            (size, band),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::save_chart;
    use crate::experiment::chart::test_util::{
        assert_svg_has, check_outputs, degenerate_panels, newick, temp_dir,
    };
    use std::path::Path;

    /// An 8-node graph with 15 weighted edges (some negative) and two trees.
    fn sample_graph() -> GraphAndTreesChart {
        let n = 8;
        let mut weights = vec![vec![0.0; n]; n];
        let pairs = (0..n).flat_map(|i| ((i + 1)..n).map(move |j| (i, j)));
        for (i, j) in pairs.filter(|(i, j)| (i * 3 + j * 5) % 7 < 4).take(15) {
            let w = ((i + 2 * j) % 9) as f64 / 4.0 - 0.6;
            weights[i][j] = w;
            weights[j][i] = w;
        }
        let labels: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
        let panel = |title: &str, tree: &str| DendrogramPanel {
            title: title.into(),
            tree: newick(tree),
            leaf_labels: labels.clone(),
            leaf_category: vec![None; n],
        };
        GraphAndTreesChart {
            title: "A weighted graph and two hierarchies".into(),
            weights,
            node_labels: labels.clone(),
            trees: vec![
                panel("tree A: cost 41.25", "(((0,1),(2,3)),((4,5),(6,7)));"),
                panel("tree B: cost 57.50", "((((0,4),1),(5,2)),((3,6),7));"),
            ],
            graph_title: "graph (8 nodes, 15 edges)".into(),
            category_names: vec![],
            node_order: vec![],
            node_positions: vec![],
        }
    }

    #[test]
    fn graph_and_trees_renders_png_and_svg() {
        let dir = temp_dir("graph");
        let (png, svg) = save_chart(&dir.join("fig4"), 1500, 650, &sample_graph()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &[
                "edge width grows with",
                "tree B: cost 57.50",
                "v7",
                "cluster size",
            ],
        );
        // Weights 1 and 1.01 round to one width: the caption says so instead.
        let mut close = sample_graph();
        for (i, row) in close.weights.iter_mut().enumerate() {
            for (j, w) in row.iter_mut().enumerate() {
                if *w != 0.0 {
                    *w = if (i + j) % 2 == 0 { 1.0 } else { 1.01 };
                }
            }
        }
        let (png, svg) = save_chart(&dir.join("close"), 1500, 650, &close).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(&svg, &["weights too close for edge widths to differ"]);
        assert!(!svg.contains("edge width grows with"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_graphs_do_not_fail() {
        let dir = temp_dir("degenerate-graphs");
        let (one_leaf, cyclic) = degenerate_panels();
        save_chart(&dir.join("g0"), 400, 300, &GraphAndTreesChart::default()).unwrap();
        let graph = GraphAndTreesChart {
            weights: vec![vec![0.0, f64::NAN], vec![f64::NAN], vec![]],
            trees: vec![one_leaf, cyclic],
            ..Default::default()
        };
        save_chart(&dir.join("g1"), 400, 300, &graph).unwrap();
        let single = GraphAndTreesChart {
            weights: vec![vec![0.0]],
            ..Default::default()
        };
        save_chart(&dir.join("g2"), 200, 150, &single).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the sample graph to `/tmp/charts/` for inspection:
    /// `cargo test --lib experiment::chart -- --ignored`.
    #[test]
    #[ignore]
    fn render_graph_sample() {
        let dir = Path::new("/tmp/charts");
        save_chart(&dir.join("graph_and_trees"), 1500, 650, &sample_graph()).unwrap();
    }
}
