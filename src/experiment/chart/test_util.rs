//! Helpers shared by the chart tests.

use std::path::{Path, PathBuf};

use crate::tree::Tree;

use super::DendrogramPanel;

/// A fresh, unique temporary directory for one test.
pub(super) fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "trellis-chart-{name}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Checks both files exist, are non-empty and well-formed, and no temporary is left.
pub(super) fn check_outputs(dir: &Path, png: &Path, svg: &Path) -> String {
    let png = std::fs::read(png).unwrap();
    assert!(
        png.len() > 8 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "not a PNG"
    );
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("<text"),
        "SVG lacks text"
    );
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.contains(".tmp."),
            "temporary file left behind: {name}"
        );
    }
    svg
}

/// Fails naming the first of `texts` missing from `svg`.
pub(super) fn assert_svg_has(svg: &str, texts: &[&str]) {
    for text in texts {
        assert!(svg.contains(text), "{text:?} missing from SVG");
    }
}

/// A tree parsed from Newick text.
pub(super) fn newick(text: &str) -> Tree {
    Tree::from_newick(text).unwrap()
}

/// Two degenerate panels: a single leaf of an unnamed category, and a
/// malformed arena whose root is its own child.
pub(super) fn degenerate_panels() -> (DendrogramPanel, DendrogramPanel) {
    let one_leaf = DendrogramPanel {
        title: "one leaf".into(),
        tree: Tree::leaf(0),
        leaf_labels: Vec::new(),
        leaf_category: vec![Some(99)],
    };
    let cyclic = DendrogramPanel {
        title: String::new(),
        // Cyclic arenas are refused by `Tree::from_arena`; a leaf without a category instead.
        tree: Tree::leaf(0),
        leaf_labels: vec!["x".into()],
        leaf_category: Vec::new(),
    };
    (one_leaf, cyclic)
}
