//! Rendering a [`Chart`] to PNG and SVG files, each written atomically.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::text::ensure_fonts;
use super::{plot_err, Chart};

/// Default figure width in pixels.
pub const DEFAULT_WIDTH: u32 = 1000;
/// Default figure height in pixels.
pub const DEFAULT_HEIGHT: u32 = 750;

/// Appends `suffix` to the file name of `stem` (`out/fig5` + `.png` gives
/// `out/fig5.png`); unlike `with_extension` this keeps dots in the stem.
fn with_suffix(stem: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = stem.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Writes `bytes` to `tmp` (created afresh, never through a link), then renames it to `dest`.
fn write_atomically(tmp: &Path, dest: &Path, bytes: &[u8]) -> Result<()> {
    crate::experiment::safe_fs::with_tmp(tmp, dest, |f| {
        use std::io::Write;
        f.write_all(bytes)
            .with_context(|| format!("cannot write {}", tmp.display()))
    })
    .with_context(|| format!("writing figure {}", dest.display()))
}

/// The chart as PNG bytes: drawn into an RGB buffer, encoded as `image` encodes a saved file.
fn png_bytes<C: Chart + ?Sized>(width: u32, height: u32, chart: &C) -> Result<Vec<u8>> {
    use image::ImageEncoder;
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let area = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        chart.draw(&area)?;
        area.present().map_err(plot_err)?;
    }
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, width, height, image::ColorType::Rgb8)
        .context("encoding a PNG")?;
    Ok(png)
}

/// The chart as SVG text.
fn svg_text<C: Chart + ?Sized>(width: u32, height: u32, chart: &C) -> Result<String> {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        chart.draw(&area)?;
        area.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Renders `chart` at `width`x`height` pixels to both `<stem>.png` and
/// `<stem>.svg` and returns their paths. The suffixes are appended, so `stem`
/// may contain dots.
///
/// Each file is drawn in memory, written as a fresh `<stem>.tmp.<ext>` in the same directory
/// (never through a link at that name) and then renamed into place; on error the temporary
/// file is removed. The
/// parent directory is created if needed.
pub fn save_chart<C: Chart + ?Sized>(
    stem: &Path,
    width: u32,
    height: u32,
    chart: &C,
) -> Result<(PathBuf, PathBuf)> {
    ensure_fonts();
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let png = with_suffix(stem, ".png");
    let svg = with_suffix(stem, ".svg");

    write_atomically(
        &with_suffix(stem, ".tmp.png"),
        &png,
        &png_bytes(width, height, chart)?,
    )?;
    write_atomically(
        &with_suffix(stem, ".tmp.svg"),
        &svg,
        svg_text(width, height, chart)?.as_bytes(),
    )?;
    Ok((png, svg))
}

/// [`save_chart`] at the default size [`DEFAULT_WIDTH`]x[`DEFAULT_HEIGHT`].
pub fn save_chart_default<C: Chart + ?Sized>(stem: &Path, chart: &C) -> Result<(PathBuf, PathBuf)> {
    save_chart(stem, DEFAULT_WIDTH, DEFAULT_HEIGHT, chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::chart::test_util::temp_dir;
    use anyhow::anyhow;
    use plotters::coord::Shift;

    #[test]
    fn suffix_keeps_dots_in_the_stem() {
        assert_eq!(
            with_suffix(Path::new("a/b.c"), ".png"),
            PathBuf::from("a/b.c.png")
        );
    }

    #[test]
    fn failed_render_leaves_no_files() {
        struct Failing;
        impl Chart for Failing {
            fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
                area.fill(&WHITE).map_err(plot_err)?;
                Err(anyhow!("boom"))
            }
        }
        let dir = temp_dir("failing");
        assert!(save_chart(&dir.join("f"), 100, 100, &Failing).is_err());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
