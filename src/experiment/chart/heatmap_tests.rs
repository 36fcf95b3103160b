//! Tests of [`super::HeatmapChart`].

use super::*;
use crate::experiment::chart::test_util::{assert_svg_has, check_outputs, temp_dir};
use crate::experiment::chart::{save_chart, save_chart_default};
use std::path::Path;

/// Labels of 11 items in three groups plus an unlabelled one.
fn sample_items() -> Vec<String> {
    [
        "Basal 1", "Basal 2", "Basal 3", "LumA 1", "LumA 2", "LumA 3", "LumA 4",
    ]
    .iter()
    .chain(&["Her2 1", "Her2 2", "Her2 3", "unknown"])
    .map(|s| s.to_string())
    .collect()
}

/// Group of each of the 11 sample items.
const SAMPLE_GROUPS: [usize; 11] = [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2];

/// Pairwise co-clustering probabilities of the 11 sample items.
fn sample_probabilities() -> HeatmapChart {
    let g = SAMPLE_GROUPS;
    let matrix = (0..11)
        .map(|i| {
            (0..11)
                .map(|j| {
                    let noise = 0.5 + 0.5 * ((i * 7 + j * 7 + i * j) as f64 * 0.9).sin();
                    if i == j {
                        1.0
                    } else if g[i] == g[j] {
                        0.7 + 0.28 * noise
                    } else {
                        0.02 + 0.2 * noise
                    }
                })
                .collect()
        })
        .collect();
    HeatmapChart {
        title: "Posterior co-clustering probabilities".into(),
        matrix,
        row_labels: sample_items(),
        col_labels: sample_items(),
        color_label: "P(i and j in the same cluster)".into(),
        diverging: false,
        value_range: Some((0.0, 1.0)),
        annotate: true,
        highlight: vec![vec![0, 1, 2], vec![3, 4, 5, 6], vec![7, 8, 9, 10]],
        marked: vec![(0, 3), (5, 5), (99, 0)],
        reversed: false,
        cell_texts: Vec::new(),
    }
}

/// Affinities in [-0.3, 0.3] between the 11 sample items.
fn sample_affinities() -> HeatmapChart {
    let g = SAMPLE_GROUPS;
    let matrix = (0..11)
        .map(|i| {
            (0..11)
                .map(|j| {
                    let noise = ((i + j) as f64 * 1.7 + (i * j) as f64 * 0.3).sin();
                    if g[i] == g[j] {
                        0.18 + 0.12 * noise
                    } else {
                        -0.12 + 0.15 * noise
                    }
                })
                .collect()
        })
        .collect();
    HeatmapChart {
        title: "Pairwise affinities".into(),
        matrix,
        row_labels: sample_items(),
        col_labels: sample_items(),
        color_label: "affinity".into(),
        diverging: true,
        value_range: Some((-0.3, 0.3)),
        annotate: true,
        highlight: Vec::new(),
        marked: Vec::new(),
        reversed: false,
        cell_texts: Vec::new(),
    }
}

#[test]
fn heatmap_renders_png_and_svg() {
    let dir = temp_dir("heatmap");
    let (png, svg) = save_chart_default(&dir.join("probs"), &sample_probabilities()).unwrap();
    let svg = check_outputs(&dir, &png, &svg);
    assert_svg_has(
        &svg,
        &[
            "Posterior co-clustering probabilities",
            "Basal 1",
            "LumA 2",
            "unknown",
            "P(i and j in the same cluster)",
            "1.00",
        ],
    );
    let mut chart = sample_affinities();
    chart.matrix[0][1] = f64::NAN;
    chart.value_range = None;
    let (png, svg) = save_chart(&dir.join("aff"), 900, 700, &chart).unwrap();
    let svg = check_outputs(&dir, &png, &svg);
    // Symmetric diverging scale with negative ticks, and the n/a key.
    assert_svg_has(&svg, &["affinity", "Her2 3", "\u{2212}0.2", "n/a"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn highlight_outlines_blocks_and_cells() {
    let o = highlight_outlines(&[vec![2, 1, 1, 3], vec![0, 2], vec![], vec![5, 9]], 4, 4);
    let block = CellOutline {
        rows: (1, 4),
        cols: (1, 4),
        block: true,
    };
    assert_eq!(o[0], block);
    // Non-contiguous {0, 2}: its 4 cells; {5, 9} and {} are out of range.
    assert_eq!(o.len(), 5);
    assert!(o[1..].iter().all(|c| !c.block));
    assert!(o.contains(&CellOutline {
        rows: (2, 3),
        cols: (0, 1),
        block: false,
    }));
}

#[test]
fn a_reversed_scale_makes_low_values_bright_and_puts_them_on_top_of_the_bar() {
    let chart = HeatmapChart {
        matrix: vec![vec![1.0, 5.0]],
        color_label: "place (better →)".into(),
        reversed: true,
        ..Default::default()
    };
    let scale = chart.scale();
    assert_eq!(chart.color(1.0, scale), viridis(1.0));
    assert_eq!(chart.color(5.0, scale), viridis(0.0));
    assert!(chart.flipped_bar());
    let plain = HeatmapChart {
        reversed: false,
        ..chart.clone()
    };
    assert_eq!(plain.color(1.0, scale), viridis(0.0));
    assert!(!plain.flipped_bar());
    let diverging = HeatmapChart {
        diverging: true,
        ..chart.clone()
    };
    assert!(!diverging.flipped_bar());
    let dir = temp_dir("reversed-heatmap");
    let (png, _) = save_chart(&dir.join("r"), 400, 300, &chart).unwrap();
    assert!(std::fs::metadata(png).unwrap().len() > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn given_cell_texts_replace_values_and_may_have_two_lines() {
    let chart = HeatmapChart {
        matrix: vec![vec![4.72, f64::NAN], vec![0.5, 2.0]],
        annotate: true,
        cell_texts: vec![
            vec![Some("4.72\n(3 forb.)".into()), Some("forbidden".into())],
            vec![None, Some("≥ 6".into())],
        ],
        ..Default::default()
    };
    let texts = chart.cell_texts(2);
    assert_eq!(
        texts[1][0].as_deref(),
        Some("0.50"),
        "no text given: the value"
    );
    assert_eq!(
        texts[0][1].as_deref(),
        Some("forbidden"),
        "an n/a cell's text"
    );
    let dir = temp_dir("texts-heatmap");
    let (_, svg) = save_chart(&dir.join("t"), 500, 400, &chart).unwrap();
    let svg = std::fs::read_to_string(svg).unwrap();
    for t in ["4.72", "(3 forb.)", "forbidden", "≥ 6", "0.50"] {
        assert!(svg.contains(t), "{t}");
    }
    assert!(!svg.contains("2.00"), "a given text replaces the value");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn degenerate_heatmaps_do_not_fail() {
    let dir = temp_dir("degenerate-heatmap");
    save_chart(&dir.join("h0"), 400, 300, &HeatmapChart::default()).unwrap();
    let empty_rows = HeatmapChart {
        matrix: vec![vec![], vec![]],
        annotate: true,
        highlight: vec![vec![0, 1]],
        ..Default::default()
    };
    save_chart(&dir.join("h1"), 400, 300, &empty_rows).unwrap();
    for diverging in [false, true] {
        let one = HeatmapChart {
            title: "one".into(),
            matrix: vec![vec![0.0]],
            row_labels: vec!["only".into()],
            color_label: "v".into(),
            diverging,
            annotate: true,
            highlight: vec![vec![0, 7]],
            ..Default::default()
        };
        save_chart(&dir.join("h2"), 300, 200, &one).unwrap();
        let odd = HeatmapChart {
            matrix: vec![
                vec![f64::NAN, f64::NEG_INFINITY, 2.0],
                vec![1.0],
                vec![f64::INFINITY, 3.0, -1e-9],
            ],
            diverging,
            value_range: Some((f64::NAN, 1.0)),
            annotate: true,
            highlight: vec![vec![2, 0], vec![usize::MAX, 1], vec![99]],
            ..Default::default()
        };
        let (_, svg) = save_chart(&dir.join("h3"), 300, 200, &odd).unwrap();
        assert!(std::fs::read_to_string(svg).unwrap().contains("n/a"));
        let all_nan = HeatmapChart {
            matrix: vec![vec![f64::NAN; 40]; 30],
            diverging,
            annotate: true,
            value_range: Some((2.0, 2.0)),
            ..Default::default()
        };
        save_chart(&dir.join("h4"), 200, 120, &all_nan).unwrap();
        save_chart(&dir.join("h5"), 20, 20, &all_nan).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Renders the heatmap samples to `/tmp/charts2/` for inspection:
/// `cargo test --lib experiment::chart -- --ignored`.
#[test]
#[ignore]
fn render_heatmap_samples() {
    let dir = Path::new("/tmp/charts2");
    save_chart_default(&dir.join("heatmap_probabilities"), &sample_probabilities()).unwrap();
    save_chart_default(&dir.join("heatmap_affinities"), &sample_affinities()).unwrap();
    // Review only: n/a cells, a non-contiguous group, a small figure.
    let mut odd = sample_probabilities();
    odd.matrix[2][5] = f64::NAN;
    odd.matrix[9][0] = f64::NEG_INFINITY;
    odd.highlight = vec![vec![0, 2, 4], vec![7, 8, 9, 10, 42]];
    save_chart(&dir.join("heatmap_odd_small"), 600, 450, &odd).unwrap();
    let one = HeatmapChart {
        matrix: vec![vec![0.25]],
        row_labels: vec!["only".into()],
        col_labels: vec!["only".into()],
        color_label: "value".into(),
        annotate: true,
        highlight: vec![vec![0]],
        ..Default::default()
    };
    save_chart(&dir.join("heatmap_1x1"), 500, 400, &one).unwrap();
}
