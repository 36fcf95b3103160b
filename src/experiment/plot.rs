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
//! * [`PosteriorMassChart`]: exact posterior mass as stems against sampled
//!   frequencies as markers (Figure 6 of the paper);
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
//!   co-clustering probabilities.
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

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Once, OnceLock};

use anyhow::{anyhow, Context, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, FontTransform};

use crate::tree::{Node, Tree};

/// Font family name under which the embedded Noto Sans is registered for the
/// charts in this module. In SVG output it becomes the CSS font list
/// `Noto Sans, sans-serif`, so viewers with Noto Sans installed match the PNG.
pub const FONT: &str = "Noto Sans, sans-serif";
/// Default figure width in pixels.
pub const DEFAULT_WIDTH: u32 = 1000;
/// Default figure height in pixels.
pub const DEFAULT_HEIGHT: u32 = 750;
/// Font size for figure titles.
pub const TITLE_SIZE: f64 = 32.0;
/// Font size for axis descriptions and table headers.
pub const LABEL_SIZE: f64 = 28.0;
/// Font size for tick labels, legend entries and table cells.
pub const TICK_SIZE: f64 = 22.0;
/// Font size for captions and footnotes.
pub const CAPTION_SIZE: f64 = 24.0;

static FONTS: Once = Once::new();

/// Registers the embedded Noto Sans font with plotters as `"sans-serif"` and
/// as [`FONT`], for both `FontStyle::Normal` and `FontStyle::Bold` (the same
/// regular face: only the regular weight is embedded). Idempotent and cheap;
/// [`save_chart`] and every chart here call it, but call it yourself before
/// drawing on your own backend.
pub fn ensure_fonts() {
    FONTS.call_once(|| {
        for name in ["sans-serif", FONT] {
            for style in [FontStyle::Normal, FontStyle::Bold] {
                // `InvalidFont` implements neither Debug nor Error, hence no `expect`.
                if plotters::style::register_font(name, style, ttf_noto_sans::REGULAR).is_err() {
                    panic!("embedded Noto Sans font failed to parse");
                }
            }
        }
    });
}

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

/// Appends `suffix` to the file name of `stem` (`out/fig5` + `.png` gives
/// `out/fig5.png`); unlike `with_extension` this keeps dots in the stem.
fn with_suffix(stem: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = stem.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Renders to `tmp` with `render`, then renames it to `dest`; removes `tmp` on failure.
fn write_atomically(
    tmp: &Path,
    dest: &Path,
    render: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let result = render(tmp).and_then(|()| {
        std::fs::rename(tmp, dest)
            .with_context(|| format!("renaming {} to {}", tmp.display(), dest.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result.with_context(|| format!("writing figure {}", dest.display()))
}

/// Renders `chart` at `width`x`height` pixels to both `<stem>.png` and
/// `<stem>.svg` and returns their paths. The suffixes are appended, so `stem`
/// may contain dots.
///
/// Each file is first written as `<stem>.tmp.<ext>` in the same directory and
/// then renamed into place; on error the temporary file is removed. The
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

    // The bitmap encoder picks the format from the extension, so `.png` stays last.
    write_atomically(&with_suffix(stem, ".tmp.png"), &png, |tmp| {
        let area = BitMapBackend::new(tmp, (width, height)).into_drawing_area();
        chart.draw(&area)?;
        area.present().map_err(plot_err)
    })?;
    write_atomically(&with_suffix(stem, ".tmp.svg"), &svg, |tmp| {
        let area = SVGBackend::new(tmp, (width, height)).into_drawing_area();
        chart.draw(&area)?;
        area.present().map_err(plot_err)
    })?;
    Ok((png, svg))
}

/// [`save_chart`] at the default size [`DEFAULT_WIDTH`]x[`DEFAULT_HEIGHT`].
pub fn save_chart_default<C: Chart + ?Sized>(stem: &Path, chart: &C) -> Result<(PathBuf, PathBuf)> {
    save_chart(stem, DEFAULT_WIDTH, DEFAULT_HEIGHT, chart)
}

// ---------------------------------------------------------------------------
// Colours
// ---------------------------------------------------------------------------

fn to_u8(v: f64) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn lerp_rgb(a: (u8, u8, u8), b: (u8, u8, u8), t: f64) -> RGBColor {
    let f = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    RGBColor(f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
}

/// The viridis colour map (perceptually uniform, colour-blind safe): `t` in
/// `[0, 1]` runs from dark purple through teal to yellow; values outside are
/// clamped. A polynomial fit to matplotlib's table (error below 1%).
pub fn viridis(t: f64) -> RGBColor {
    const C: [[f64; 3]; 7] = [
        [
            0.277_727_327_223_417_7,
            0.005_407_344_544_966_578,
            0.334_099_805_335_306_1,
        ],
        [
            0.105_093_043_108_577_4,
            1.404_613_529_898_575,
            1.384_590_162_594_685,
        ],
        [
            -0.330_861_828_725_556_3,
            0.214_847_559_468_213,
            0.095_095_163_028_236_59,
        ],
        [
            -4.634_230_498_983_486,
            -5.799_100_973_351_585,
            -19.332_440_956_279_87,
        ],
        [
            6.228_269_936_347_081,
            14.179_933_366_805_09,
            56.690_552_600_681_05,
        ],
        [
            4.776_384_997_670_288,
            -13.745_145_377_746_01,
            -65.353_032_633_372_34,
        ],
        [
            -5.435_455_855_934_631,
            4.645_852_612_178_535,
            26.312_435_249_583_2,
        ],
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let channel = |k: usize| C.iter().rev().fold(0.0, |acc, c| acc * t + c[k]);
    RGBColor(to_u8(channel(0)), to_u8(channel(1)), to_u8(channel(2)))
}

/// A diverging red-white-blue colour map (ColorBrewer RdBu): `t = -1` is dark
/// red, `0` white, `+1` dark blue; values outside `[-1, 1]` are clamped.
pub fn diverging(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (178, 24, 43),
        (239, 138, 98),
        (255, 255, 255),
        (103, 169, 207),
        (33, 102, 172),
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(-1.0, 1.0) };
    let x = (t + 1.0) * 2.0; // in 0..=4
    let i = (x.floor() as usize).min(3);
    lerp_rgb(STOPS[i], STOPS[i + 1], x - i as f64)
}

/// `n` distinct colours sampled evenly from [`viridis`], skipping its pale
/// yellow end so every colour stands out on white.
pub fn category_colors(n: usize) -> Vec<RGBColor> {
    match n {
        0 => Vec::new(),
        1 => vec![viridis(0.45)],
        _ => (0..n)
            .map(|i| viridis(0.88 * i as f64 / (n - 1) as f64))
            .collect(),
    }
}

/// Black or white, whichever reads better on `bg`.
pub fn text_color_on(bg: RGBColor) -> RGBColor {
    let lum = 0.299 * f64::from(bg.0) + 0.587 * f64::from(bg.1) + 0.114 * f64::from(bg.2);
    if lum < 128.0 {
        WHITE
    } else {
        BLACK
    }
}

// ---------------------------------------------------------------------------
// Number formatting
// ---------------------------------------------------------------------------

/// Replaces a leading ASCII hyphen by a typographic minus sign (U+2212).
fn typographic_minus(s: String) -> String {
    match s.strip_prefix('-') {
        Some(rest) => format!("\u{2212}{rest}"),
        None => s,
    }
}

/// Formats `v` with `decimals` decimals and a typographic minus sign.
pub fn format_number(v: f64, decimals: usize) -> String {
    typographic_minus(format!("{v:.decimals$}"))
}

/// Formats `v` with at least `min` and at most `max` decimals: the fewest that show it exactly
/// (to 1e-9), so that 1.01 stays "1.01" while 1.001 is not rounded to "1.00".
pub fn format_number_exact(v: f64, min: usize, max: usize) -> String {
    let decimals = (min..=max)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((v * scale).round() / scale - v).abs() <= 1e-9 * v.abs().max(1.0)
        })
        .unwrap_or(max);
    format_number(v, decimals)
}

/// Formats an axis tick value: at most 6 decimals, trailing zeros dropped,
/// typographic minus (`-30.0` gives `−30`, `0.25` stays `0.25`).
pub fn format_tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        return "0".to_owned();
    }
    typographic_minus(s.to_owned())
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

/// Horizontal metrics of the embedded font, parsed from its TrueType tables.
struct FontMetrics {
    cmap: &'static [u8],
    hmtx: &'static [u8],
    n_hmetrics: usize,
    units_per_em: f64,
    cap_height: f64,
    /// Pixels per font unit at plotters size 1 (ab_glyph scales by ascender - descender).
    px_per_unit: f64,
}

fn be_u16(d: &[u8], o: usize) -> Option<u16> {
    d.get(o..o + 2).map(|b| u16::from_be_bytes([b[0], b[1]]))
}

fn be_i16(d: &[u8], o: usize) -> Option<i16> {
    be_u16(d, o).map(|v| v as i16)
}

fn be_u32(d: &[u8], o: usize) -> Option<u32> {
    d.get(o..o + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn font_table<'a>(font: &'a [u8], tag: &[u8; 4]) -> Option<&'a [u8]> {
    let n = usize::from(be_u16(font, 4)?);
    (0..n).find_map(|i| {
        let rec = 12 + 16 * i;
        if font.get(rec..rec + 4)? != tag {
            return None;
        }
        let off = be_u32(font, rec + 8)? as usize;
        let len = be_u32(font, rec + 12)? as usize;
        font.get(off..off + len)
    })
}

impl FontMetrics {
    fn parse(font: &'static [u8]) -> Option<Self> {
        let head = font_table(font, b"head")?;
        let hhea = font_table(font, b"hhea")?;
        let units_per_em = f64::from(be_u16(head, 18)?);
        let ascent = f64::from(be_i16(hhea, 4)?);
        let descent = f64::from(be_i16(hhea, 6)?);
        let cap_height = font_table(font, b"OS/2")
            .filter(|os2| be_u16(os2, 0).is_some_and(|v| v >= 2))
            .and_then(|os2| be_i16(os2, 88))
            .map_or(0.7 * units_per_em, f64::from);
        let m = Self {
            cmap: font_table(font, b"cmap")?,
            hmtx: font_table(font, b"hmtx")?,
            n_hmetrics: usize::from(be_u16(hhea, 34)?),
            units_per_em,
            cap_height,
            px_per_unit: 1.0 / (ascent - descent),
        };
        // Sanity check: the font must map basic Latin.
        (m.glyph('M')? != 0 && m.n_hmetrics > 0).then_some(m)
    }

    /// Glyph id of `c` from a (3,1)/(0,x) format-4 or format-12 cmap subtable.
    fn glyph(&self, c: char) -> Option<u16> {
        let cmap = self.cmap;
        let cp = u32::from(c);
        for i in 0..usize::from(be_u16(cmap, 2)?) {
            let sub = cmap.get(be_u32(cmap, 4 + 8 * i + 4)? as usize..)?;
            let found = match be_u16(sub, 0)? {
                4 => Self::format4(sub, cp),
                12 => Self::format12(sub, cp),
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn format4(sub: &[u8], cp: u32) -> Option<u16> {
        let cp = u16::try_from(cp).ok()?;
        let seg_x2 = usize::from(be_u16(sub, 6)?);
        for seg in 0..seg_x2 / 2 {
            if cp > be_u16(sub, 14 + 2 * seg)? {
                continue;
            }
            let start = be_u16(sub, 16 + seg_x2 + 2 * seg)?;
            if cp < start {
                return None;
            }
            let delta = be_u16(sub, 16 + 2 * seg_x2 + 2 * seg)?;
            let ro_pos = 16 + 3 * seg_x2 + 2 * seg;
            let ro = usize::from(be_u16(sub, ro_pos)?);
            if ro == 0 {
                return Some(cp.wrapping_add(delta));
            }
            let g = be_u16(sub, ro_pos + ro + 2 * usize::from(cp - start))?;
            return Some(if g == 0 { 0 } else { g.wrapping_add(delta) });
        }
        None
    }

    fn format12(sub: &[u8], cp: u32) -> Option<u16> {
        let n = be_u32(sub, 12)? as usize;
        (0..n).find_map(|i| {
            let g = 16 + 12 * i;
            let (start, end) = (be_u32(sub, g)?, be_u32(sub, g + 4)?);
            (start..=end)
                .contains(&cp)
                .then(|| u16::try_from(be_u32(sub, g + 8)? + (cp - start)).ok())
                .flatten()
        })
    }

    /// (advance width, left side bearing) in font units.
    fn h_metrics(&self, glyph: u16) -> (f64, f64) {
        let g = usize::from(glyph);
        let n = self.n_hmetrics;
        let (adv, lsb) = if g < n {
            (be_u16(self.hmtx, 4 * g), be_i16(self.hmtx, 4 * g + 2))
        } else {
            (
                be_u16(self.hmtx, 4 * (n - 1)),
                be_i16(self.hmtx, 4 * n + 2 * (g - n)),
            )
        };
        (f64::from(adv.unwrap_or(0)), f64::from(lsb.unwrap_or(0)))
    }
}

fn metrics() -> Option<&'static FontMetrics> {
    static METRICS: OnceLock<Option<FontMetrics>> = OnceLock::new();
    METRICS
        .get_or_init(|| FontMetrics::parse(ttf_noto_sans::REGULAR))
        .as_ref()
}

/// Whether `DB` is plotters' SVG backend (which emits `<text>` elements
/// instead of rasterising glyphs).
fn is_svg<DB: DrawingBackend>() -> bool {
    std::any::type_name::<DB>().contains("SVGBackend")
}

/// Sizes are snapped to even pixels: ab_glyph places the baseline at
/// `size / 2` truncated, so odd sizes make glyphs jitter vertically.
fn snap_size(size: f64) -> f64 {
    ((size / 2.0).round() * 2.0).max(2.0)
}

/// A plotters text style in the embedded font for plotters' own text (tick
/// labels, etc.). `size` is snapped to even pixels and, for the SVG backend,
/// scaled so the SVG text has the same size as in the PNG (plotters writes
/// `font-size = size / 1.24` to SVG while ab_glyph renders an em of about
/// `size / 1.36` px).
pub fn text_style<DB: DrawingBackend>(size: f64) -> TextStyle<'static> {
    ensure_fonts();
    let size = snap_size(size);
    let size = match metrics() {
        Some(m) if is_svg::<DB>() => size * m.px_per_unit * m.units_per_em * 1.24,
        _ => size,
    };
    TextStyle::from((FONT, size, FontStyle::Normal).into_font())
}

/// One line of text in the embedded font, drawn precisely.
///
/// The anchor refers to the box from the baseline up to the capital height
/// (descenders hang below it), so `VPos::Center` centres text visually:
/// `Label::new("Trellis", 22.0).draw(area, (x, y))` centres it on `(x, y)`.
/// In PNGs, glyphs are placed one by one from the font's metrics to avoid
/// plotters' uneven letter spacing; in SVGs the text stays one `<text>`.
#[derive(Clone)]
pub struct Label<'a> {
    text: &'a str,
    size: f64,
    color: RGBColor,
    h: HPos,
    v: VPos,
    vertical: bool,
}

impl<'a> Label<'a> {
    /// Black text of plotters font size `size` (snapped to even pixels),
    /// centred on the drawing position.
    pub fn new(text: &'a str, size: f64) -> Self {
        Self {
            text,
            size: snap_size(size),
            color: BLACK,
            h: HPos::Center,
            v: VPos::Center,
            vertical: false,
        }
    }

    /// Sets the text colour.
    pub fn color(mut self, color: RGBColor) -> Self {
        self.color = color;
        self
    }

    /// Sets which point of the text lands on the drawing position: `h` along
    /// the text, `v` across it (`Top` = capital height, `Bottom` = baseline).
    pub fn anchor(mut self, h: HPos, v: VPos) -> Self {
        self.h = h;
        self.v = v;
        self
    }

    /// Rotates the text to read bottom to top (for y axis descriptions).
    pub fn vertical(mut self) -> Self {
        self.vertical = true;
        self
    }

    /// Length of the text along its direction, in pixels.
    pub fn width(&self) -> f64 {
        ensure_fonts();
        match metrics() {
            Some(m) => {
                let units: f64 = self
                    .text
                    .chars()
                    .map(|c| m.h_metrics(m.glyph(c).unwrap_or(0)).0)
                    .sum();
                units * m.px_per_unit * self.size
            }
            None => FontDesc::new(FontFamily::Name(FONT), self.size, FontStyle::Normal)
                .box_size(self.text)
                .map_or(0.0, |(w, _)| f64::from(w)),
        }
    }

    /// Height of capital letters, in pixels.
    pub fn cap_height(&self) -> f64 {
        metrics().map_or(0.52, |m| m.cap_height * m.px_per_unit) * self.size
    }

    /// Maps text-local offsets (along, down) to screen offsets.
    fn rotate(&self, (u, v): (f64, f64)) -> (f64, f64) {
        if self.vertical {
            (v, -u)
        } else {
            (u, v)
        }
    }

    /// Draws the text with its anchor at `pos` (pixels relative to `area`).
    pub fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        pos: (i32, i32),
    ) -> Result<()> {
        ensure_fonts();
        let transform = || {
            if self.vertical {
                FontTransform::Rotate270
            } else {
                FontTransform::None
            }
        };
        let color = self.color;
        let Some(m) = metrics() else {
            // Fallback: plotters' own layout.
            let style = TextStyle::from((FONT, self.size).into_font())
                .color(&color)
                .transform(transform())
                .pos(Pos::new(self.h, self.v));
            return area.draw_text(self.text, &style, pos).map_err(plot_err);
        };
        let cap = self.cap_height();
        // Offset across the text from the anchor to the baseline.
        let to_baseline = match self.v {
            VPos::Top => cap,
            VPos::Center => cap / 2.0,
            VPos::Bottom => 0.0,
        };
        let (ax, ay) = (f64::from(pos.0), f64::from(pos.1));

        if is_svg::<DB>() {
            // plotters' SVG backend puts the baseline 0.76 em below the point for VPos::Top.
            let em = m.units_per_em * m.px_per_unit * self.size;
            let style = TextStyle::from((FONT, em * 1.24).into_font())
                .color(&color)
                .transform(transform())
                .pos(Pos::new(self.h, VPos::Top));
            let (dx, dy) = self.rotate((0.0, to_baseline - 0.76 * em));
            let at = ((ax + dx).round() as i32, (ay + dy).round() as i32);
            return area.draw_text(self.text, &style, at).map_err(plot_err);
        }

        let width = self.width();
        let along = match self.h {
            HPos::Left => 0.0,
            HPos::Center => width / 2.0,
            HPos::Right => width,
        };
        // Screen position of the start of the baseline.
        let (ox, oy) = self.rotate((-along, to_baseline));
        let (bx, by) = (ax + ox, ay + oy);
        let scale = m.px_per_unit * self.size;
        let style = TextStyle::from((FONT, self.size).into_font())
            .color(&color)
            .transform(transform())
            .pos(Pos::new(HPos::Left, VPos::Top));
        let mut pen = 0.0;
        let mut buf = [0u8; 4];
        for c in self.text.chars() {
            let (adv, lsb) = m.h_metrics(m.glyph(c).unwrap_or(0));
            if !c.is_whitespace() {
                // ab_glyph draws the glyph's pixel box at the given x (losing the
                // floored side bearing) with the baseline `size / 2` below y.
                let (dx, dy) = self.rotate((pen + (lsb * scale).floor(), -self.size / 2.0));
                let at = ((bx + dx).round() as i32, (by + dy).round() as i32);
                area.draw_text(c.encode_utf8(&mut buf), &style, at)
                    .map_err(plot_err)?;
            }
            pen += adv * scale;
        }
        Ok(())
    }
}

/// Largest size `<= size` (stepping down by 2, not below `min`) at which every
/// text is at most `max_w` pixels long.
pub fn fit_font_size(texts: &[&str], size: f64, min: f64, max_w: f64) -> f64 {
    let mut size = snap_size(size);
    while size > min && texts.iter().any(|t| Label::new(t, size).width() > max_w) {
        size -= 2.0;
    }
    size.max(snap_size(min))
}

// ---------------------------------------------------------------------------
// Drawing helpers
// ---------------------------------------------------------------------------

fn pt(x: f64, y: f64) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

fn fill_rect<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (f64, f64),
    (x1, y1): (f64, f64),
    style: ShapeStyle,
) -> Result<()> {
    area.draw(&Rectangle::new([pt(x0, y0), pt(x1, y1)], style))
        .map_err(plot_err)
}

fn line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (f64, f64),
    b: (f64, f64),
    style: ShapeStyle,
) -> Result<()> {
    area.draw(&PathElement::new(vec![pt(a.0, a.1), pt(b.0, b.1)], style))
        .map_err(plot_err)
}

/// Best split of `text` at a space into two lines: the lines and the wider
/// line's width (the whole text and its width if it has no space).
fn wrap_two_lines(text: &str, size: f64) -> (Vec<&str>, f64) {
    let width = |t: &str| Label::new(t, size).width();
    text.match_indices(' ')
        .map(|(i, _)| {
            let (a, b) = (text[..i].trim_end(), text[i..].trim_start());
            (vec![a, b], width(a).max(width(b)))
        })
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or_else(|| (vec![text], width(text)))
}

/// Draws `text` centred on `center`, on two lines if it is wider than `max_w`.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: f64,
    max_w: f64,
    center: (i32, i32),
) -> Result<()> {
    let lines = if Label::new(text, size).width() <= max_w {
        vec![text]
    } else {
        wrap_two_lines(text, size).0
    };
    let spacing = 0.9 * size;
    let mid = (lines.len() as f64 - 1.0) / 2.0;
    for (k, l) in lines.iter().enumerate() {
        let y = f64::from(center.1) + (k as f64 - mid) * spacing;
        Label::new(l, size).draw(area, (center.0, y.round() as i32))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Pairwise difference table
// ---------------------------------------------------------------------------

/// A square table of pairwise differences between methods, e.g. Table 1 of
/// the Cluster Trellis paper: cell `(i, j)` shows "mean ± std" of (row `i`
/// minus column `j`) log-likelihood, its background coloured by the mean on a
/// diverging scale (white at 0, blue where the row is higher, red where it is
/// lower) explained by a colour key. `None` cells are drawn grey and empty.
#[derive(Debug, Clone, Default)]
pub struct PairwiseDiffTable {
    /// Row and column labels (the methods), in order.
    pub labels: Vec<String>,
    /// `mean[i][j]`: mean of row `i` minus column `j`; `None` leaves the cell empty.
    pub mean: Vec<Vec<Option<f64>>>,
    /// `std[i][j]`: standard deviation shown after "±"; `None` shows the mean only.
    pub std: Vec<Vec<Option<f64>>>,
    /// Title drawn above the table.
    pub title: String,
    /// Caption drawn below the table (e.g. what was averaged over how many items).
    pub caption: String,
}

impl PairwiseDiffTable {
    /// Number of decimals shown in cells.
    const DECIMALS: usize = 4;

    /// Finite (mean, std) of cell `(i, j)`.
    fn cell(&self, i: usize, j: usize) -> (Option<f64>, Option<f64>) {
        let get = |m: &[Vec<Option<f64>>]| m.get(i).and_then(|r| r.get(j)).copied().flatten();
        let mean = get(&self.mean).filter(|v| v.is_finite());
        let std = get(&self.std).filter(|v| v.is_finite());
        (mean, std)
    }

    fn cell_text(&self, i: usize, j: usize) -> Option<String> {
        let d = Self::DECIMALS;
        match self.cell(i, j) {
            (Some(m), Some(s)) => {
                Some(format!("{} ± {}", format_number(m, d), format_number(s, d)))
            }
            (Some(m), None) => Some(format_number(m, d)),
            _ => None,
        }
    }
}

impl Chart for PairwiseDiffTable {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let n = self.labels.len();
        let margin = 30.0;
        let grey_text = RGBColor(70, 70, 70);

        let texts: Vec<Vec<Option<String>>> = (0..n)
            .map(|i| (0..n).map(|j| self.cell_text(i, j)).collect())
            .collect();
        let max_abs = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter_map(|(i, j)| self.cell(i, j).0)
            .fold(0.0f64, |a, m| a.max(m.abs()));

        // Widths: shrink all fonts together until the table fits, wrapping long
        // labels onto two lines; then hand out the spare width.
        let labels: Vec<&str> = self.labels.iter().map(String::as_str).collect();
        let corner_text = "row \u{2212} column";
        let cell_strings: Vec<&str> = texts
            .iter()
            .flatten()
            .flatten()
            .map(String::as_str)
            .collect();
        let avail_w = w - 2.0 * margin;
        let widest = |texts: &[&str], size: f64, wrap: bool| {
            texts
                .iter()
                .map(|t| {
                    let single = Label::new(t, size).width();
                    if wrap {
                        single.min(wrap_two_lines(t, size).1)
                    } else {
                        single
                    }
                })
                .fold(0.0, f64::max)
        };
        let mut scale = 1.0;
        let (cell_size, label_size, corner_size, head_w, col_w) = loop {
            let cell_size = snap_size(TICK_SIZE * scale);
            let label_size = snap_size((LABEL_SIZE - 2.0) * scale);
            let corner_size = snap_size((TICK_SIZE - 4.0) * scale);
            let corner_w = Label::new(corner_text, corner_size).width();
            // 15% slack: SVG viewers without Noto Sans fall back to wider fonts.
            let col_w = (1.15 * widest(&cell_strings, cell_size, false) + 20.0)
                .max(1.15 * widest(&labels, label_size, true) + 16.0);
            let head_min = 1.15 * widest(&labels, label_size, true).max(corner_w) + 30.0;
            let head_single = 1.15 * widest(&labels, label_size, false).max(corner_w) + 30.0;
            let spare = avail_w - col_w * n as f64;
            if spare >= head_min || scale <= 0.45 {
                let head_w = head_single.min(spare).max(head_min);
                let col_w = if n == 0 {
                    0.0
                } else {
                    ((avail_w - head_w) / n as f64)
                        .min(300.0)
                        .min(col_w + 90.0)
                        .max(col_w)
                };
                break (cell_size, label_size, corner_size, head_w, col_w);
            }
            scale -= 0.05;
        };
        let table_w = head_w + col_w * n as f64;

        // Vertical layout: title, table, colour key, caption; the block is centred.
        let title_h = if self.title.is_empty() {
            0.0
        } else {
            TITLE_SIZE * 1.6
        };
        let key_h = if max_abs > 0.0 { 72.0 } else { 0.0 };
        let caption_h = if self.caption.is_empty() {
            0.0
        } else {
            CAPTION_SIZE * 1.8
        };
        let avail = h - 2.0 * margin - title_h - key_h - caption_h - 24.0;
        let row_h = (avail / (n as f64 + 1.0)).clamp(2.2 * label_size, 72.0);
        let table_h = row_h * (n as f64 + 1.0);
        let block_h = title_h + 12.0 + table_h + 12.0 + key_h + caption_h;
        let top = ((h - block_h) / 2.0).max(margin * 0.5);
        let x0 = (w - table_w) / 2.0;
        let y0 = top + title_h + 12.0;
        let cx = w / 2.0;

        if !self.title.is_empty() {
            let size = fit_font_size(&[&self.title], TITLE_SIZE, 12.0, avail_w);
            Label::new(&self.title, size).draw(area, pt(cx, top + title_h / 2.0))?;
        }

        let header_bg = RGBColor(226, 231, 239);
        let empty_bg = RGBColor(238, 238, 238);
        let col_x = |j: usize| x0 + head_w + col_w * j as f64;
        let row_y = |i: usize| y0 + row_h * (i as f64 + 1.0);

        // Header row and column.
        fill_rect(
            area,
            (x0, y0),
            (x0 + table_w, y0 + row_h),
            header_bg.filled(),
        )?;
        fill_rect(
            area,
            (x0, y0),
            (x0 + head_w, y0 + table_h),
            header_bg.filled(),
        )?;
        Label::new(corner_text, corner_size)
            .color(grey_text)
            .draw(area, pt(x0 + head_w / 2.0, y0 + row_h / 2.0))?;
        for (k, l) in labels.iter().enumerate() {
            let col_center = pt(col_x(k) + col_w / 2.0, y0 + row_h / 2.0);
            draw_lines(area, l, label_size, (col_w - 16.0) / 1.15, col_center)?;
            let row_center = pt(x0 + head_w / 2.0, row_y(k) + row_h / 2.0);
            draw_lines(area, l, label_size, (head_w - 30.0) / 1.15, row_center)?;
        }

        // Data cells.
        for (i, row) in texts.iter().enumerate() {
            for (j, text) in row.iter().enumerate() {
                let (xa, ya) = (col_x(j), row_y(i));
                let bg = match (self.cell(i, j).0, text) {
                    (Some(m), Some(_)) if max_abs > 0.0 => diverging(0.75 * m / max_abs),
                    (Some(_), Some(_)) => WHITE,
                    _ => empty_bg,
                };
                fill_rect(area, (xa, ya), (xa + col_w, ya + row_h), bg.filled())?;
                if let Some(t) = text {
                    Label::new(t, cell_size)
                        .color(text_color_on(bg))
                        .draw(area, pt(xa + col_w / 2.0, ya + row_h / 2.0))?;
                }
            }
        }

        // Grid: thin lines between cells, heavy ones around the headers and the frame.
        let thin = RGBColor(190, 190, 190).stroke_width(1);
        let heavy = RGBColor(60, 60, 60).stroke_width(2);
        for k in 1..=n {
            let style = if k == 1 { heavy } else { thin };
            let y = row_y(k - 1);
            line(area, (x0, y), (x0 + table_w, y), style)?;
            let x = col_x(k - 1);
            line(area, (x, y0), (x, y0 + table_h), style)?;
        }
        fill_rect(area, (x0, y0), (x0 + table_w, y0 + table_h), heavy)?;

        // Colour key: a gradient bar from -max to +max.
        let mut y = y0 + table_h + 12.0;
        if key_h > 0.0 {
            let bar_w = (0.36 * w).min(table_w);
            let (bx0, by0, bh) = (cx - bar_w / 2.0, y + 10.0, 16.0);
            let steps = 120;
            for s in 0..steps {
                let t = -1.0 + 2.0 * (f64::from(s) + 0.5) / f64::from(steps);
                let xa = bx0 + bar_w * f64::from(s) / f64::from(steps);
                let xb = bx0 + bar_w * f64::from(s + 1) / f64::from(steps);
                fill_rect(
                    area,
                    (xa, by0),
                    (xb + 1.0, by0 + bh),
                    diverging(0.75 * t).filled(),
                )?;
            }
            fill_rect(
                area,
                (bx0, by0),
                (bx0 + bar_w, by0 + bh),
                RGBColor(120, 120, 120).stroke_width(1),
            )?;
            let key = |text: &str, x: f64, y: f64, hpos: HPos| {
                Label::new(text, TICK_SIZE - 2.0)
                    .color(grey_text)
                    .anchor(hpos, VPos::Center)
                    .draw(area, pt(x, y))
            };
            let ty = by0 + bh + 16.0;
            key(&format_number(-max_abs, 2), bx0, ty, HPos::Center)?;
            key("0", cx, ty, HPos::Center)?;
            key(
                &format!("+{}", format_number(max_abs, 2)),
                bx0 + bar_w,
                ty,
                HPos::Center,
            )?;
            key("row lower", bx0 - 14.0, by0 + bh / 2.0, HPos::Right)?;
            key("row higher", bx0 + bar_w + 14.0, by0 + bh / 2.0, HPos::Left)?;
            y += key_h;
        }

        if !self.caption.is_empty() {
            let size = fit_font_size(&[&self.caption], CAPTION_SIZE, 10.0, avail_w);
            Label::new(&self.caption, size)
                .color(RGBColor(30, 30, 30))
                .draw(area, pt(cx, y + caption_h / 2.0))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Scatter plot coloured by category
// ---------------------------------------------------------------------------

/// A scatter plot of `(x, y)` points coloured by an integer category, with a
/// legend entry per category: its name from `category_names`, else
/// `"<legend_title> = <category>"` (e.g. Figure 5 of the Cluster Trellis
/// paper: log Z against MAP log-likelihood per jet, coloured by number of
/// leaves). Axis ranges are padded 5% around the data unless given; with
/// `diagonal`, both axes share one range, the plot is square and the line
/// y = x is drawn dashed. The legend goes into the plot region covering the
/// fewest points (or beside a square plot when there is room).
#[derive(Debug, Clone, Default)]
pub struct ScatterByCategory {
    /// The points as `(x, y, category)`; non-finite coordinates and points
    /// outside explicit axis ranges are skipped.
    pub points: Vec<(f64, f64, usize)>,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Title drawn above the plot.
    pub title: String,
    /// Prefix of each legend entry, e.g. `"N leaves"` gives `"N leaves = 5"`
    /// (for categories without a name in `category_names`).
    pub legend_title: String,
    /// Legend names indexed by category; when non-empty, used instead of
    /// `"<legend_title> = <category>"` for the categories it covers.
    pub category_names: Vec<String>,
    /// Draw the line y = x (dashed grey, with a legend entry "y = x"), using
    /// the same range for both axes on a square plot so it runs at 45 degrees.
    pub diagonal: bool,
    /// X axis range; `None` (or an empty or non-finite range) pads the data range by 5%.
    pub x_range: Option<(f64, f64)>,
    /// Y axis range; `None` (or an empty or non-finite range) pads the data range by 5%.
    pub y_range: Option<(f64, f64)>,
}

/// `[min, max]` of `values` padded by `frac` of the span on each side; never
/// empty (a single value gets a pad of `frac` of its magnitude, at least `frac`).
pub fn padded_range(values: impl IntoIterator<Item = f64>, frac: f64) -> (f64, f64) {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * frac
    } else {
        lo.abs().max(1.0) * frac.max(0.05)
    };
    (lo - pad, hi + pad)
}

/// `range` ordered low to high if both ends are finite and distinct.
fn valid_range(range: Option<(f64, f64)>) -> Option<(f64, f64)> {
    let (a, b) = range?;
    (a.is_finite() && b.is_finite() && a != b).then(|| (a.min(b), a.max(b)))
}

/// Colour of the y = x line and its legend swatch.
const DIAGONAL_GREY: RGBColor = RGBColor(110, 110, 110);

impl ScatterByCategory {
    /// The x and y axis ranges for the finite points `pts`.
    fn axis_ranges(&self, pts: &[(f64, f64, usize)]) -> ((f64, f64), (f64, f64)) {
        let x = valid_range(self.x_range)
            .unwrap_or_else(|| padded_range(pts.iter().map(|p| p.0), 0.05));
        let y = valid_range(self.y_range)
            .unwrap_or_else(|| padded_range(pts.iter().map(|p| p.1), 0.05));
        if self.diagonal {
            let common = (x.0.min(y.0), x.1.max(y.1));
            (common, common)
        } else {
            (x, y)
        }
    }

    /// Legend text of category `c`.
    fn entry_name(&self, c: usize) -> String {
        match self.category_names.get(c) {
            Some(name) => name.clone(),
            None => format!("{} = {c}", self.legend_title),
        }
    }
}

impl Chart for ScatterByCategory {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let (w, h) = area.dim_in_pixel();
        let (origin_x, origin_y) = origin(area);
        let finite: Vec<(f64, f64, usize)> = self
            .points
            .iter()
            .copied()
            .filter(|(x, y, _)| x.is_finite() && y.is_finite())
            .collect();
        let ((x0, x1), (y0, y1)) = self.axis_ranges(&finite);
        let pts: Vec<(f64, f64, usize)> = finite
            .into_iter()
            .filter(|&(x, y, _)| x >= x0 && x <= x1 && y >= y0 && y <= y1)
            .collect();

        let cats: Vec<usize> = pts
            .iter()
            .map(|p| p.2)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let colors = category_colors(cats.len());
        let color_of = |c: usize| colors[cats.binary_search(&c).unwrap_or(0)];
        let mut entries: Vec<(Swatch, String)> = cats
            .iter()
            .map(|&c| {
                let swatch = Swatch::Marker {
                    marker: Marker::Circle,
                    color: color_of(c).to_rgba(),
                    r: 7.0,
                };
                (swatch, self.entry_name(c))
            })
            .collect();
        if self.diagonal {
            let swatch = Swatch::Line {
                color: DIAGONAL_GREY,
                dashed: true,
                marker: None,
            };
            entries.push((swatch, "y = x".to_owned()));
        }
        let legend = Legend { entries };
        let (lw, lh) = legend.size();

        // Room for the y tick labels (estimated from the range ends) and the description.
        let tick_w = [y0, y1, (y0 + y1) / 2.0]
            .iter()
            .map(|v| Label::new(&format_tick((v * 10.0).round() / 10.0), TICK_SIZE).width())
            .fold(0.0, f64::max);
        let desc_h = Label::new("M", LABEL_SIZE).cap_height() * 1.9;
        let y_area = (tick_w + 22.0 + desc_h + 14.0).round() as u32;
        let x_area = (TICK_SIZE * 1.3 + 14.0 + desc_h + 14.0).round() as u32;
        let title_h = title_band(&self.title);

        // Margins (left, right, top, bottom); a square plot with `diagonal`,
        // the legend beside it if the spare width allows.
        let (mut ml, mut mr, mut mt, mut mb) = (12.0, 36.0, f64::from(title_h), 10.0);
        let mut legend_outside = false;
        if self.diagonal {
            let pw = f64::from(w) - ml - mr - f64::from(y_area);
            let ph = f64::from(h) - mt - mb - f64::from(x_area);
            if pw > ph && ph > 0.0 {
                let extra = pw - ph;
                legend_outside = !legend.entries.is_empty() && extra >= lw + 32.0;
                let beside = if legend_outside { lw + 16.0 } else { 0.0 };
                ml += (extra - beside) / 2.0;
                mr += (extra - beside) / 2.0 + beside;
            } else if ph > pw && pw > 0.0 {
                mt += (ph - pw) / 2.0;
                mb += (ph - pw) / 2.0;
            }
        }
        let margin = |v: f64| v.round().max(0.0) as u32;
        let mut chart = ChartBuilder::on(area)
            .margin_top(margin(mt))
            .margin_left(margin(ml))
            .margin_right(margin(mr))
            .margin_bottom(margin(mb))
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .label_style(text_style::<DB>(TICK_SIZE))
            .x_label_formatter(&|v| format_tick(*v))
            .y_label_formatter(&|v| format_tick(*v))
            .x_labels(10)
            .y_labels(10)
            .light_line_style(RGBColor(240, 240, 240))
            .bold_line_style(RGBColor(208, 208, 208))
            .axis_style(RGBColor(80, 80, 80))
            .draw()
            .map_err(plot_err)?;
        let to_px = |x: f64, y: f64| {
            let (sx, sy) = chart.backend_coord(&(x, y));
            (f64::from(sx) - origin_x, f64::from(sy) - origin_y)
        };

        // The diagonal over the common range of both axes, under the points.
        let mut obstacles: Vec<(f64, f64)> = pts.iter().map(|&(x, y, _)| to_px(x, y)).collect();
        let (d0, d1) = (x0.max(y0), x1.min(y1));
        if self.diagonal && d1 > d0 {
            let (a, b) = (to_px(d0, d0), to_px(d1, d1));
            polyline(area, &[a, b], DIAGONAL_GREY.stroke_width(2), true)?;
            sample_segment(a, b, &mut obstacles);
        }
        chart
            .draw_series(
                pts.iter()
                    .map(|&(x, y, c)| Circle::new((x, y), 3, color_of(c).mix(0.45).filled())),
            )
            .map_err(plot_err)?;

        // Texts around the plot, in coordinates relative to `area`.
        let (px, py) = chart.plotting_area().get_pixel_range();
        let (px0, px1) = (f64::from(px.start) - origin_x, f64::from(px.end) - origin_x);
        let (py0, py1) = (f64::from(py.start) - origin_y, f64::from(py.end) - origin_y);
        draw_frame_texts(
            area,
            (px0, py0, px1, py1),
            &self.title,
            &self.x_label,
            &self.y_label,
            f64::from(x_area),
            f64::from(y_area),
        )?;

        if legend.entries.is_empty() {
            return Ok(());
        }
        let pos = if legend_outside {
            (px1 + 16.0, py0)
        } else {
            place_legend((px0, py0, px1, py1), (lw, lh), &obstacles).0
        };
        legend.draw(area, pos)
    }
}

// ---------------------------------------------------------------------------
// Axes with explicit ticks
// ---------------------------------------------------------------------------

/// A linear axis over `lo..hi` (data units; log10 of the data for a log axis)
/// with explicit major (labelled, bold grid) and minor (light grid) ticks.
#[derive(Debug, Clone)]
struct TickAxis {
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
    /// Ticks are powers of ten of the values (log axis).
    log: bool,
    /// Linear axis labelled in scientific notation (`m×10^e`), with this
    /// decade of the tick step (so mantissas get enough decimals).
    sci: Option<i32>,
}

impl Ranged for TickAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let t = if span > 0.0 {
            (value - self.lo) / span
        } else {
            0.5
        };
        (f64::from(limit.0) + t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let mut points = self.major.clone();
        if hint.weight().allow_light_points() {
            points.extend_from_slice(&self.minor);
            points.sort_by(f64::total_cmp);
        }
        points
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Multiples `k * step` inside `[lo, hi]` (with a little tolerance).
fn multiples(lo: f64, hi: f64, step: f64) -> impl Iterator<Item = (i64, f64)> {
    let a = (lo / step - 1e-9).ceil() as i64;
    let b = (hi / step + 1e-9).floor() as i64;
    (a..=b).map(move |k| (k, k as f64 * step))
}

impl TickAxis {
    /// A linear axis with at most `max_ticks` labelled ticks at 1-2-5 steps
    /// (whole numbers only if `integer`).
    fn linear(lo: f64, hi: f64, max_ticks: usize, integer: bool) -> Self {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (0.0, 1.0)
        };
        let raw = (hi - lo) / max_ticks.max(1) as f64;
        let mag = 10f64.powf(raw.log10().floor());
        // Step 1, 2 or 5 times a power of ten, with minor ticks dividing it.
        let (norm, mut div) = [(1.0, 5), (2.0, 4), (5.0, 5), (10.0, 5)]
            .into_iter()
            .find(|&(m, _)| m * mag >= raw * (1.0 - 1e-9))
            .unwrap_or((10.0, 5));
        let mut step = norm * mag;
        if integer && step < 1.0 {
            (step, div) = (1.0, 1);
        }
        let major: Vec<f64> = multiples(lo, hi, step).map(|(_, v)| v).collect();
        let max_abs = major.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let sci = (max_abs >= 1e6 || step < 1e-3).then(|| step.log10().floor() as i32);
        if integer {
            // Minor ticks at whole numbers only.
            div = [div, 5, 4, 2]
                .into_iter()
                .find(|&d| (step / f64::from(d)).fract() == 0.0)
                .unwrap_or(1);
        }
        let minor_step = step / f64::from(div);
        let minor = if div > 1 {
            multiples(lo, hi, minor_step)
                .filter(|(k, _)| k % i64::from(div) != 0)
                .map(|(_, v)| v)
                .collect()
        } else {
            Vec::new()
        };
        Self {
            lo,
            hi,
            major,
            minor,
            log: false,
            sci,
        }
    }

    /// A linear x axis for `area` with at most 10 labelled ticks, fewer if
    /// the labels would crowd the plot width (estimated from `y_axis` and
    /// `reserved` pixels taken by a legend beside the plot).
    fn linear_x<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        (lo, hi): (f64, f64),
        integer: bool,
        y_axis: &TickAxis,
        reserved: f64,
    ) -> Self {
        let (w, _) = area.dim_in_pixel();
        let plot_w = f64::from(w) - f64::from(label_areas(y_axis).1) - 60.0 - reserved;
        let mut max_ticks = 10;
        loop {
            let axis = Self::linear(lo, hi, max_ticks, integer);
            let need = (axis.label_width() + 24.0) * axis.major.len() as f64;
            if need <= plot_w || max_ticks <= 2 {
                return axis;
            }
            max_ticks -= 1;
        }
    }

    /// A log axis over `10^lo..10^hi` (arguments in decades) with at most
    /// `max_ticks` labelled ticks, at powers of ten where the range spans at
    /// least one, else at 1, 2 and 5 times powers of ten.
    fn log10(lo: f64, hi: f64, max_ticks: usize) -> Self {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (-1.0, 1.0)
        };
        let (a, b) = ((lo - 1e-9).ceil() as i64, (hi + 1e-9).floor() as i64);
        let (mut major, mut minor) = (Vec::new(), Vec::new());
        let in_range = |v: f64| v >= lo - 1e-9 && v <= hi + 1e-9;
        if b > a {
            let max = max_ticks.max(2) as i64;
            let step = [1, 2, 3, 4, 5, 10, 20, 25, 50, 100, 200, 500, 1000]
                .into_iter()
                .find(|&s| b.div_euclid(s) - (a - 1).div_euclid(s) <= max)
                .unwrap_or(1000);
            for e in a..=b {
                if e.rem_euclid(step) == 0 {
                    major.push(e as f64);
                } else {
                    minor.push(e as f64);
                }
            }
            if step == 1 && hi - lo <= 8.0 {
                for e in (a - 1)..=b {
                    for m in 2..=9 {
                        let v = e as f64 + f64::from(m).log10();
                        if in_range(v) {
                            minor.push(v);
                        }
                    }
                }
            }
        } else {
            let sets: [&[u8]; 3] = [&[1, 2, 5], &[1, 2, 3, 5, 7], &[1, 2, 3, 4, 5, 6, 7, 8, 9]];
            for mantissas in sets {
                major.clear();
                minor.clear();
                for e in (a - 1)..=b {
                    for m in 1..=9 {
                        let v = e as f64 + f64::from(m).log10();
                        if in_range(v) {
                            if mantissas.contains(&m) {
                                major.push(v);
                            } else {
                                minor.push(v);
                            }
                        }
                    }
                }
                if major.len() >= 3 {
                    break;
                }
            }
            if major.len() < 2 {
                // A narrow range: linear ticks in data units.
                let lin = Self::linear(10f64.powf(lo), 10f64.powf(hi), max_ticks.min(5), false);
                let logs = |v: &[f64]| v.iter().filter(|&&x| x > 0.0).map(|x| x.log10()).collect();
                (major, minor) = (logs(&lin.major), logs(&lin.minor));
            }
        }
        Self {
            lo,
            hi,
            major,
            minor,
            log: true,
            sci: None,
        }
    }

    /// The label of a major tick: a number for a linear axis, else the
    /// mantissa text (`""`, `"2×"`, ...) before `10` and the exponent.
    fn tick_text(&self, t: f64) -> (String, Option<String>) {
        if let Some(step_exp) = self.sci {
            if t == 0.0 {
                return ("0".to_owned(), None);
            }
            let e = t.abs().log10().floor();
            let decimals = (e as i32 - step_exp).clamp(0, 6) as usize;
            let m = format!("{:.decimals$}", t / 10f64.powf(e));
            let m = if m.contains('.') {
                m.trim_end_matches('0').trim_end_matches('.')
            } else {
                &m
            };
            let m = typographic_minus(m.to_owned());
            let base = if m == "1" {
                "10".to_owned()
            } else {
                format!("{m}\u{d7}10")
            };
            return (base, Some(format_number(e, 0)));
        }
        if !self.log {
            return (format_tick(t), None);
        }
        let mut e = (t + 1e-9).floor();
        let mut m = (10f64.powf(t - e) * 100.0).round() / 100.0;
        if m >= 10.0 {
            (m, e) = (m / 10.0, e + 1.0);
        }
        let base = if m == 1.0 {
            "10".to_owned()
        } else {
            format!("{}\u{d7}10", format_tick(m))
        };
        (base, Some(format_number(e, 0)))
    }

    /// Whether tick labels are drawn by [`draw_mesh`] rather than plotters
    /// (powers of ten with superscript exponents).
    fn custom_labels(&self) -> bool {
        self.log || self.sci.is_some()
    }

    /// Width in pixels of the widest major tick label.
    fn label_width(&self) -> f64 {
        self.major
            .iter()
            .map(|&t| match self.tick_text(t) {
                (base, None) => Label::new(&base, TICK_SIZE).width(),
                (base, Some(exp)) => {
                    Label::new(&base, TICK_SIZE).width() + Label::new(&exp, SUP_SIZE).width()
                }
            })
            .fold(0.0, f64::max)
    }
}

/// Font size of exponents in power-of-ten tick labels.
const SUP_SIZE: f64 = 16.0;

/// Draws a tick label `base` + superscript `exp` with its box anchored at
/// `(x, y)`: `h` along the label, `v` for the base text (as for [`Label`]).
fn draw_power_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (base, exp): (&str, &str),
    (x, y): (f64, f64),
    h: HPos,
    v: VPos,
) -> Result<()> {
    let base_label = Label::new(base, TICK_SIZE).anchor(HPos::Left, v);
    let exp_label = Label::new(exp, SUP_SIZE).anchor(HPos::Left, VPos::Bottom);
    let gap = 1.0;
    let w = base_label.width() + gap + exp_label.width();
    let x0 = match h {
        HPos::Left => x,
        HPos::Center => x - w / 2.0,
        HPos::Right => x - w,
    };
    base_label.draw(area, pt(x0, y))?;
    let cap = base_label.cap_height();
    let baseline = match v {
        VPos::Top => y + cap,
        VPos::Center => y + cap / 2.0,
        VPos::Bottom => y,
    };
    exp_label.draw(
        area,
        pt(x0 + base_label.width() + gap, baseline - 0.62 * cap),
    )
}

// ---------------------------------------------------------------------------
// Markers, lines and legends in pixel coordinates
// ---------------------------------------------------------------------------

/// Marker shapes, in the order they are handed out to series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Circle,
    Cross,
    Diamond,
    Square,
    Triangle,
    Plus,
}

const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Cross,
    Marker::Plus,
];

/// Draws `marker` of radius about `r` pixels centred on `(x, y)` (pixels
/// relative to `area`); open shapes (crosses) are stroked 2 px wide.
fn draw_marker<DB: DrawingBackend>(
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

/// Draws a polyline through `pts` (pixels relative to `area`), dashed or solid.
fn polyline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(f64, f64)],
    style: ShapeStyle,
    dashed: bool,
) -> Result<()> {
    let pts: Vec<(i32, i32)> = pts.iter().map(|&(x, y)| pt(x, y)).collect();
    if pts.len() < 2 {
        return Ok(());
    }
    if dashed {
        area.draw(&DashedPathElement::new(pts, 9, 6, style))
    } else {
        area.draw(&PathElement::new(pts, style))
    }
    .map_err(plot_err)
}

/// The sample drawn before a legend entry.
#[derive(Debug, Clone)]
enum Swatch {
    /// A horizontal line, optionally dashed, optionally with a marker on it.
    Line {
        color: RGBColor,
        dashed: bool,
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
            dashed,
            marker,
        } => {
            let (xa, xb) = if dashed { (x0, x1 + 2.0) } else { (x0, x1) };
            polyline(area, &[(xa, cy), (xb, cy)], color.stroke_width(2), dashed)?;
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
struct Legend {
    entries: Vec<(Swatch, String)>,
}

impl Legend {
    fn row_h() -> f64 {
        TICK_SIZE * 1.4
    }

    fn size(&self) -> (f64, f64) {
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
    fn draw<DB: DrawingBackend>(
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

/// Pixel rectangle `(x0, y0, x1, y1)` relative to the drawing area.
type PxRect = (f64, f64, f64, f64);

/// Points every ~3 px along the segment `a`-`b` (for legend placement).
fn sample_segment(a: (f64, f64), b: (f64, f64), out: &mut Vec<(f64, f64)>) {
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
fn place_legend(plot: PxRect, size: (f64, f64), obstacles: &[(f64, f64)]) -> ((f64, f64), usize) {
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

/// Height of the title band above the plot.
fn title_band(title: &str) -> u32 {
    if title.is_empty() {
        12
    } else {
        (TITLE_SIZE * 2.0) as u32
    }
}

/// Draws the title and the axis descriptions around the plot rectangle.
#[allow(clippy::too_many_arguments)]
fn draw_frame_texts<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plot: PxRect,
    title: &str,
    x_label: &str,
    y_label: &str,
    x_area: f64,
    y_area: f64,
) -> Result<()> {
    let (w, _) = area.dim_in_pixel();
    let (px0, py0, px1, py1) = plot;
    let desc_h = Label::new("M", LABEL_SIZE).cap_height() * 1.9;
    if !title.is_empty() {
        let size = fit_font_size(&[title], TITLE_SIZE, 12.0, f64::from(w) - 40.0);
        Label::new(title, size).draw(
            area,
            pt(f64::from(w) / 2.0, f64::from(title_band(title)) / 2.0),
        )?;
    }
    if !x_label.is_empty() {
        let size = fit_font_size(&[x_label], LABEL_SIZE, 12.0, px1 - px0);
        Label::new(x_label, size)
            .anchor(HPos::Center, VPos::Bottom)
            .draw(
                area,
                pt((px0 + px1) / 2.0, py1 + x_area - 14.0 - 0.25 * desc_h),
            )?;
    }
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
fn label_areas(y_axis: &TickAxis) -> (u32, u32) {
    let desc_h = Label::new("M", LABEL_SIZE).cap_height() * 1.9;
    let y_area = (y_axis.label_width() + 24.0 + desc_h + 14.0).round() as u32;
    let x_area = (TICK_SIZE * 1.3 + 14.0 + desc_h + 14.0).round() as u32;
    (x_area, y_area)
}

/// A chart context on [`TickAxis`] axes.
type TickChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickAxis, TickAxis>>;

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
    y_axis: &TickAxis,
    legend: &Legend,
    obstacles: impl Fn(&TickChart<'a, DB>) -> Vec<(f64, f64)>,
) -> Result<Layout<'a, DB>> {
    let x_axis = TickAxis::linear_x(area, x_range, integer_x, y_axis, 0.0);
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
        let x_axis = TickAxis::linear_x(area, x_range, integer_x, y_axis, right);
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

/// At most how many labelled y ticks fit on a chart on `area` with `title`.
fn max_y_ticks<DB: DrawingBackend>(
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
fn origin<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> (f64, f64) {
    let (xr, yr) = area.get_pixel_range();
    (f64::from(xr.start), f64::from(yr.start))
}

/// The plotting rectangle of `chart` in pixels relative to `area`.
fn plot_rect<DB: DrawingBackend>(
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
fn to_pixels<DB: DrawingBackend>(
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

/// The qualitative "Tableau 10" palette (matplotlib's default colour cycle);
/// colour `i` repeats every 10.
pub fn qualitative_color(i: usize) -> RGBColor {
    const C: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

// ---------------------------------------------------------------------------
// Posterior mass chart
// ---------------------------------------------------------------------------

/// Stroke width of posterior mass stems.
const STEM_W: u32 = 2;

/// Exact posterior mass against log-likelihood compared with sampled
/// frequencies (Figure 6 of the Cluster Trellis paper: exact posterior
/// sampling). The exact mass is drawn as green stems with a tick on top, each
/// sample set as markers (black circles, orange crosses, blue diamonds, ...),
/// the truth tree's log-likelihood as a dashed red vertical line; the legend
/// lists every series and goes into the plot region covering the least data.
///
/// `exact` and each frequency vector are matched to `values` by index
/// (entries beyond the shorter length are ignored); non-finite entries are
/// skipped.
#[derive(Debug, Clone, Default)]
pub struct PosteriorMassChart {
    /// Distinct log-likelihood values (x positions), ascending.
    pub values: Vec<f64>,
    /// Exact posterior probability mass at each value (sums to 1).
    pub exact: Vec<f64>,
    /// Named sets of empirical frequencies at each value (each sums to 1), e.g.
    /// ("trellis sampler, 100,000 draws", freqs) and ("reference sampler, 20,000 draws", freqs).
    pub samples: Vec<(String, Vec<f64>)>,
    /// Log-likelihood of the truth tree, drawn as a labelled vertical line, if known.
    pub truth: Option<f64>,
    /// Title drawn above the plot.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Legend name of the exact series, e.g. "exact posterior mass".
    pub exact_label: String,
}

impl PosteriorMassChart {
    /// Colour, shape and opacity of sample set `k`.
    fn sample_style(k: usize) -> (Marker, RGBColor, f64) {
        match k {
            0 => (Marker::Circle, BLACK, 0.8),
            1 => (Marker::Cross, RGBColor(235, 120, 0), 1.0),
            2 => (Marker::Diamond, RGBColor(40, 90, 210), 0.7),
            3 => (Marker::Triangle, RGBColor(150, 40, 160), 0.7),
            _ => (MARKERS[k % MARKERS.len()], qualitative_color(k + 1), 0.7),
        }
    }

    /// `(value, y)` pairs with both finite.
    fn pairs<'s>(&'s self, ys: &'s [f64]) -> impl Iterator<Item = (f64, f64)> + 's {
        self.values
            .iter()
            .zip(ys)
            .map(|(&x, &y)| (x, y))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }
}

impl PosteriorMassChart {
    /// Where the "truth" label goes for a truth line at pixel `sx`: anchor
    /// point, horizontal anchor and the label's pixel extent `(x0, x1)`.
    fn truth_label(
        sx: f64,
        (_, py0, px1, _): PxRect,
        label: &Label,
    ) -> ((f64, f64), HPos, (f64, f64)) {
        let (w, cap) = (label.width(), label.cap_height());
        let ty = py0 + 8.0 + cap / 2.0;
        if sx + 6.0 + w <= px1 - 4.0 {
            ((sx + 6.0, ty), HPos::Left, (sx + 6.0, sx + 6.0 + w))
        } else {
            ((sx - 6.0, ty), HPos::Right, (sx - 6.0 - w, sx - 6.0))
        }
    }

    fn legend(&self, green: RGBColor, red: RGBColor) -> Legend {
        let mut entries = Vec::new();
        if !self.exact.is_empty() {
            let name = if self.exact_label.is_empty() {
                "exact posterior mass"
            } else {
                &self.exact_label
            };
            entries.push((Swatch::Stem { color: green }, name.to_owned()));
        }
        for (k, (name, _)) in self.samples.iter().enumerate() {
            let (marker, color, alpha) = Self::sample_style(k);
            entries.push((
                Swatch::Marker {
                    marker,
                    color: color.mix(alpha.max(0.8)),
                    r: if marker == Marker::Cross { 4.0 } else { 4.5 },
                },
                name.clone(),
            ));
        }
        if self.truth.is_some_and(f64::is_finite) {
            entries.push((
                Swatch::VLine {
                    color: red,
                    dashed: true,
                },
                "truth tree".to_owned(),
            ));
        }
        Legend { entries }
    }
}

impl Chart for PosteriorMassChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let green = RGBColor(0, 150, 70);
        let red = RGBColor(215, 25, 28);
        let truth = self.truth.filter(|t| t.is_finite());
        let truth_text = Label::new("truth", TICK_SIZE).color(red);

        let xs = self
            .values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .chain(truth);
        let x_range = padded_range(xs, 0.04);
        let y_max = self
            .pairs(&self.exact)
            .chain(self.samples.iter().flat_map(|(_, f)| self.pairs(f)))
            .map(|p| p.1)
            .fold(0.0, f64::max);
        let y_max = if y_max > 0.0 { y_max } else { 1.0 };
        let y_axis = TickAxis::linear(0.0, 1.1 * y_max, max_y_ticks(area, &self.title, 8), false);

        let legend = self.legend(green, red);
        let obstacles = |chart: &TickChart<'_, DB>| {
            let px = to_pixels(area, chart);
            let plot = plot_rect(area, chart);
            let mut obstacles = Vec::new();
            for (x, m) in self.pairs(&self.exact) {
                sample_segment(px(x, 0.0), px(x, m.max(0.0)), &mut obstacles);
            }
            for (_, freqs) in &self.samples {
                obstacles.extend(self.pairs(freqs).map(|(x, f)| px(x, f)));
            }
            if let Some(t) = truth {
                let (sx, _) = px(t, 0.0);
                sample_segment((sx, plot.1), (sx, plot.3), &mut obstacles);
                let ((_, ty), _, (lx0, lx1)) = Self::truth_label(sx, plot, &truth_text);
                sample_segment((lx0, ty), (lx1, ty), &mut obstacles);
            }
            obstacles
        };
        let Layout {
            mut chart,
            x_axis,
            legend_pos,
        } = layout_chart(
            area,
            &self.title,
            (x_range, false),
            &y_axis,
            &legend,
            obstacles,
        )?;
        draw_mesh(area, &mut chart, &x_axis, &y_axis)?;
        let plot = plot_rect(area, &chart);
        let (px0, py0, px1, py1) = plot;
        let px = to_pixels(area, &chart);

        // Marker size from the typical spacing of the values.
        let spacing = (px1 - px0) / self.values.len().max(1) as f64;
        let r = (0.5 * spacing).clamp(3.0, 4.5);

        // Exact mass: stems with a short horizontal tick on top, wider than
        // the sample markers so it stays visible beside them.
        for (x, m) in self.pairs(&self.exact) {
            let (sx, top) = px(x, m.max(0.0));
            let (_, bottom) = px(x, 0.0);
            line(area, (sx, bottom), (sx, top), green.stroke_width(STEM_W))?;
            fill_rect(
                area,
                (sx - r - 2.0, top - 1.0),
                (sx + r + 2.0, top + 1.0),
                green.filled(),
            )?;
        }
        // Sample frequencies; crosses are smaller than circles so both show
        // where they coincide.
        for (k, (_, freqs)) in self.samples.iter().enumerate() {
            let (marker, color, alpha) = Self::sample_style(k);
            let rk = if marker == Marker::Cross { 0.8 * r } else { r };
            for (x, f) in self.pairs(freqs) {
                draw_marker(area, marker, px(x, f), rk, color.mix(alpha))?;
            }
        }
        // Truth line with a label at its top.
        if let Some(t) = truth {
            let (sx, _) = px(t, 0.0);
            polyline(area, &[(sx, py0), (sx, py1)], red.stroke_width(2), true)?;
            let (at, hpos, _) = Self::truth_label(sx, plot, &truth_text);
            truth_text
                .anchor(hpos, VPos::Center)
                .draw(area, pt(at.0, at.1))?;
        }
        if let Some(pos) = legend_pos {
            legend.draw(area, pos)?;
        }

        let (x_area, y_area) = label_areas(&y_axis);
        draw_frame_texts(
            area,
            plot,
            &self.title,
            &self.x_label,
            &self.y_label,
            f64::from(x_area),
            f64::from(y_area),
        )
    }
}

// ---------------------------------------------------------------------------
// Line chart
// ---------------------------------------------------------------------------

/// One series of a [`LineChart`].
#[derive(Debug, Clone, Default)]
pub struct LineSeries {
    /// Legend name; series with an empty name get no legend entry.
    pub name: String,
    /// The points `(x, y)`, connected in the given order; non-finite points
    /// (and, on a log axis, points with `y <= 0`) are skipped and break the line.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (for reference curves such as "3^N slope" or "(2N-3)!! trees"), solid otherwise.
    pub dashed: bool,
    /// Draw a marker at each point (for measured data).
    pub markers: bool,
}

/// Lines (e.g. wall time against problem size with reference curves), with
/// an optional log y axis labelled at powers of ten (`10³`, `2×10⁻¹`).
/// Series get colours from [`qualitative_color`] in order; series with
/// markers also get distinct marker shapes. Axis ranges cover every
/// drawable point; the legend goes into the plot region covering the least
/// data, or to the right of the plot if every region is occupied.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    /// The series, drawn in order (later ones on top).
    pub series: Vec<LineSeries>,
    /// Title drawn above the plot.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Logarithmic y axis (base 10), e.g. wall time against N.
    pub log_y: bool,
    /// Integer ticks on the x axis (e.g. N = 8, 10, ..., 22).
    pub integer_x: bool,
}

impl LineChart {
    /// Drawable runs of each series, in axis units (log10 of y on a log axis).
    fn runs(&self) -> Vec<Vec<Vec<(f64, f64)>>> {
        self.series
            .iter()
            .map(|s| {
                let mut runs = vec![Vec::new()];
                for &(x, y) in &s.points {
                    let y = if self.log_y {
                        if y > 0.0 {
                            y.log10()
                        } else {
                            f64::NAN
                        }
                    } else {
                        y
                    };
                    if x.is_finite() && y.is_finite() {
                        if let Some(run) = runs.last_mut() {
                            run.push((x, y));
                        }
                    } else if runs.last().is_some_and(|r| !r.is_empty()) {
                        runs.push(Vec::new());
                    }
                }
                runs.retain(|r| !r.is_empty());
                runs
            })
            .collect()
    }
}

impl Chart for LineChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let runs = self.runs();
        let all = || runs.iter().flatten().flatten();

        let y_axis = if self.log_y {
            let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p.1), hi.max(p.1))
            });
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (-1.0, 1.0) };
            let pad = (0.04 * (hi - lo)).max(0.1);
            TickAxis::log10(lo - pad, hi + pad, max_y_ticks(area, &self.title, 9))
        } else {
            let (y0, y1) = padded_range(all().map(|p| p.1), 0.05);
            TickAxis::linear(y0, y1, max_y_ticks(area, &self.title, 9), false)
        };
        let x_range = padded_range(all().map(|p| p.0), 0.04);

        // Colours and marker shapes.
        let styles: Vec<(RGBColor, Option<Marker>)> = {
            let mut k_marker = 0;
            self.series
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let marker = s.markers.then(|| {
                        k_marker += 1;
                        MARKERS[(k_marker - 1) % MARKERS.len()]
                    });
                    (qualitative_color(i), marker)
                })
                .collect()
        };
        let legend = Legend {
            entries: self
                .series
                .iter()
                .zip(&styles)
                .filter(|(s, _)| !s.name.is_empty())
                .map(|(s, &(color, marker))| {
                    (
                        Swatch::Line {
                            color,
                            dashed: s.dashed,
                            marker,
                        },
                        s.name.clone(),
                    )
                })
                .collect(),
        };
        let obstacles = |chart: &TickChart<'_, DB>| {
            let px = to_pixels(area, chart);
            let mut obstacles = Vec::new();
            for run in runs.iter().flatten() {
                for w in run.windows(2) {
                    sample_segment(px(w[0].0, w[0].1), px(w[1].0, w[1].1), &mut obstacles);
                }
                if let [p] = run[..] {
                    obstacles.push(px(p.0, p.1));
                }
            }
            obstacles
        };
        let Layout {
            mut chart,
            x_axis,
            legend_pos,
        } = layout_chart(
            area,
            &self.title,
            (x_range, self.integer_x),
            &y_axis,
            &legend,
            obstacles,
        )?;
        draw_mesh(area, &mut chart, &x_axis, &y_axis)?;
        let plot = plot_rect(area, &chart);
        let px = to_pixels(area, &chart);

        for ((s, runs), &(color, marker)) in self.series.iter().zip(&runs).zip(&styles) {
            for run in runs {
                let pts: Vec<(f64, f64)> = run.iter().map(|&(x, y)| px(x, y)).collect();
                polyline(area, &pts, color.stroke_width(2), s.dashed)?;
                if let Some(m) = marker {
                    for &p in &pts {
                        draw_marker(area, m, p, 4.5, color.to_rgba())?;
                    }
                }
            }
        }
        if let Some(pos) = legend_pos {
            legend.draw(area, pos)?;
        }

        let (x_area, y_area) = label_areas(&y_axis);
        draw_frame_texts(
            area,
            plot,
            &self.title,
            &self.x_label,
            &self.y_label,
            f64::from(x_area),
            f64::from(y_area),
        )
    }
}

// ---------------------------------------------------------------------------
// Legends flowing in rows
// ---------------------------------------------------------------------------

/// Legend entries laid out left to right, wrapped onto as many centred rows
/// as the width needs, without a box (for legends under a title).
struct FlowLegend {
    entries: Vec<(Swatch, String)>,
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
    fn height(&self, max_w: f64) -> f64 {
        Legend::row_h() * self.rows(max_w).len() as f64
    }

    /// Draws the rows centred on `cx`, the first row's top at `top`.
    fn draw<DB: DrawingBackend>(
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

/// Font size and band height for panel titles at most `max_w` pixels wide:
/// one line at the largest size from `LABEL_SIZE - 4` down to 20 at which
/// every title fits, else two lines (see [`draw_lines`]) at the largest size
/// down to 16 at which every title fits wrapped.
fn panel_title_font(titles: &[&str], max_w: f64) -> (f64, f64) {
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
fn draw_panel_title<DB: DrawingBackend>(
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

// ---------------------------------------------------------------------------
// Dendrograms
// ---------------------------------------------------------------------------

/// Colour of leaf category `c`: the [`qualitative_color`] palette without its
/// grey (kept for unknown leaves), so 9 distinct colours that then repeat.
fn leaf_category_color(c: usize) -> RGBColor {
    const NOT_GREY: [usize; 9] = [0, 1, 2, 3, 4, 5, 6, 8, 9];
    qualitative_color(NOT_GREY[c % NOT_GREY.len()])
}

/// Colour of leaves without a category.
const UNKNOWN_GREY: RGBColor = RGBColor(150, 150, 150);

/// One dendrogram of a [`DendrogramChart`] or [`GraphAndTreesChart`].
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
        let desc_h = Label::new("M", LABEL_SIZE).cap_height() * 1.9;
        let left = desc_h + 10.0 + y_axis.label_width() + 16.0;
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

    fn color_of(&self, leaf: usize) -> RGBColor {
        match self.leaf_category.get(leaf).copied().flatten() {
            Some(c) => leaf_category_color(c),
            None => UNKNOWN_GREY,
        }
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
fn draw_dendrogram_panels<DB: DrawingBackend>(
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
            area.draw(&Circle::new(
                pt(x, plot_bottom),
                r.round() as u32,
                panel.color_of(leaf).filled(),
            ))
            .map_err(plot_err)?;
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

/// Legend of leaf categories: one filled circle per name, plus "unknown" in grey.
fn category_legend(names: &[String], unknown: bool) -> FlowLegend {
    let mut entries: Vec<(Swatch, String)> = names
        .iter()
        .enumerate()
        .map(|(c, name)| {
            (
                Swatch::Marker {
                    marker: Marker::Circle,
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

/// Clears `area`, draws `title` and a legend of `category_names` (plus "unknown" if
/// `unknown`) under it, and returns the y coordinate below them.
fn draw_title_and_category_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    category_names: &[String],
    unknown: bool,
    margin: f64,
) -> Result<f64> {
    ensure_fonts();
    area.fill(&WHITE).map_err(plot_err)?;
    let w = f64::from(area.dim_in_pixel().0);
    let mut top = f64::from(title_band(title));
    if !title.is_empty() {
        let size = fit_font_size(&[title], TITLE_SIZE, 12.0, w - 40.0);
        Label::new(title, size).draw(area, pt(w / 2.0, top / 2.0))?;
    }
    let legend = category_legend(category_names, unknown);
    if !legend.entries.is_empty() {
        legend.draw(area, w / 2.0, top, w - 2.0 * margin)?;
        top += legend.height(w - 2.0 * margin) + 10.0;
    }
    Ok(top)
}

impl Chart for DendrogramChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let margin = 16.0;
        let top = draw_title_and_category_legend(
            area,
            &self.title,
            &self.category_names,
            any_unknown_leaf(&self.panels),
            margin,
        )?;
        let n = self.panels.len().max(1) as f64;
        let titles: Vec<&str> = self.panels.iter().map(|p| p.title.as_str()).collect();
        let title_font = panel_title_font(&titles, (w - 2.0 * margin) / n - 8.0);
        draw_dendrogram_panels(
            area,
            &self.panels,
            (margin, top, w - margin, h - margin),
            &self.height_label,
            title_font,
        )
    }
}

// ---------------------------------------------------------------------------
// Graph and trees
// ---------------------------------------------------------------------------

/// A weighted graph next to trees over its nodes with their costs (Figure 4
/// of the Cluster Trellis paper). Left: the nodes on a circle, labelled, an
/// edge for each pair `i < j` with `weights[i][j] != 0`, its width growing
/// with `|weight|` (1 to 8 px, relative to the largest), dark grey for
/// positive and dashed red for negative weights, and the weight written at
/// the edge if there are at most 30 edges. Right: the trees drawn as in
/// [`DendrogramChart`] (y axis "cluster size"; category legend from `category_names`).
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

        // Caption at the bottom.
        let caption = if negative {
            "edge width grows with |weight|; red dashed: negative"
        } else {
            "edge width grows with weight"
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
        let label_size = TICK_SIZE;
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
        let pos: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                if n == 1 {
                    (cx, cy)
                } else {
                    (cx + radius * angle(i).cos(), cy + radius * angle(i).sin())
                }
            })
            .collect();

        // Edges, weakest first so strong ones stay on top.
        let max_abs = edges.iter().fold(0.0f64, |a, e| a.max(e.2.abs()));
        let mut order = edges.clone();
        order.sort_by(|a, b| a.2.abs().total_cmp(&b.2.abs()));
        let red = RGBColor(215, 25, 28);
        for &(i, j, w) in &order {
            let width = (1.0 + 7.0 * w.abs() / max_abs).round() as u32;
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
            let size = TICK_SIZE - 4.0;
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
            let node_color = match self.trees.first() {
                Some(p) if p.leaf_category.get(i).is_some_and(|c| c.is_some()) => p.color_of(i),
                _ => RGBColor(31, 119, 180),
            };
            area.draw(&Circle::new(pt(x, y), node_r as u32 + 2, WHITE.filled()))
                .map_err(plot_err)?;
            area.draw(&Circle::new(pt(x, y), node_r as u32, node_color.filled()))
                .map_err(plot_err)?;
            let (dx, dy) = if n == 1 {
                (0.0, -1.0)
            } else {
                (angle(i).cos(), angle(i).sin())
            };
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
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let margin = 16.0;
        let top = draw_title_and_category_legend(
            area,
            &self.title,
            &self.category_names,
            any_unknown_leaf(&self.trees),
            margin,
        )?;
        let (x0, x1, y1) = (margin, w - margin, h - margin);
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

// ---------------------------------------------------------------------------
// Dot and range chart
// ---------------------------------------------------------------------------

/// One row of a [`DotRangeChart`].
#[derive(Debug, Clone, Default)]
pub struct DotRangeRow {
    /// Row label, drawn left of the plot (may be long, e.g. "1/0 weights, Dasgupta").
    pub label: String,
    /// Interval drawn as a light grey bar (e.g. worst to best over all trees);
    /// the ends may be in either order; non-finite ends draw no bar.
    pub range: Option<(f64, f64)>,
    /// Values as `(series index, value)`, each drawn as the series' marker;
    /// non-finite values are skipped.
    pub points: Vec<(usize, f64)>,
}

/// Horizontal rows of values against a common x axis, each row with an
/// optional grey range bar behind markers of several series: e.g. the
/// dendrogram purity of the MAP and greedy trees against the range of
/// purities over all trees, per weight scheme. Series get colours from
/// [`qualitative_color`] and distinct marker shapes, nudged apart vertically
/// so equal values stay visible; the legend goes under the title.
#[derive(Debug, Clone, Default)]
pub struct DotRangeChart {
    /// Title drawn above the plot.
    pub title: String,
    /// The rows, top to bottom.
    pub rows: Vec<DotRangeRow>,
    /// Legend name of each series, indexed by series.
    pub series_names: Vec<String>,
    /// X axis description.
    pub x_label: String,
    /// Legend name of the range bars, e.g. "all trees: worst to best"; empty for none.
    pub range_label: String,
    /// X axis range; `None` pads the range of all values and range ends by 5%.
    pub x_range: Option<(f64, f64)>,
}

impl DotRangeChart {
    /// Range bars as `(row, lo, hi)` with finite ends.
    fn ranges(&self) -> impl Iterator<Item = (usize, f64, f64)> + '_ {
        self.rows.iter().enumerate().filter_map(|(i, r)| {
            let (a, b) = r.range?;
            (a.is_finite() && b.is_finite()).then_some((i, a.min(b), a.max(b)))
        })
    }

    /// Series used by any point (as many as the largest index, at least the names).
    fn n_series(&self) -> usize {
        self.rows
            .iter()
            .flat_map(|r| r.points.iter().map(|p| p.0 + 1))
            .fold(self.series_names.len(), usize::max)
    }

    fn series_style(s: usize) -> (Marker, RGBColor) {
        (MARKERS[s % MARKERS.len()], qualitative_color(s))
    }

    fn legend(&self) -> FlowLegend {
        let mut entries = Vec::new();
        if !self.range_label.is_empty() && self.ranges().next().is_some() {
            entries.push((
                Swatch::Bar {
                    color: RGBColor(205, 205, 205),
                },
                self.range_label.clone(),
            ));
        }
        for (s, name) in self.series_names.iter().enumerate() {
            if !name.is_empty() {
                let (marker, color) = Self::series_style(s);
                entries.push((
                    Swatch::Marker {
                        marker,
                        color: color.to_rgba(),
                        r: 6.5,
                    },
                    name.clone(),
                ));
            }
        }
        FlowLegend { entries }
    }

    /// The x axis range: explicit if valid, else padded around the data.
    fn x_range(&self) -> (f64, f64) {
        if let Some((a, b)) = self.x_range {
            if a.is_finite() && b.is_finite() && a != b {
                return (a.min(b), a.max(b));
            }
        }
        let values = self
            .rows
            .iter()
            .flat_map(|r| r.points.iter().map(|p| p.1))
            .chain(self.ranges().flat_map(|(_, a, b)| [a, b]));
        padded_range(values, 0.05)
    }
}

impl Chart for DotRangeChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let margin = 16.0;
        let mut top = f64::from(title_band(&self.title));
        if !self.title.is_empty() {
            let size = fit_font_size(&[&self.title], TITLE_SIZE, 12.0, w - 40.0);
            Label::new(&self.title, size).draw(area, pt(w / 2.0, top / 2.0))?;
        }

        // Row labels: one line if they fit 40% of the width, else two.
        let labels: Vec<&str> = self.rows.iter().map(|r| r.label.as_str()).collect();
        let max_label_w = 0.4 * w;
        let label_size = fit_font_size(&labels, TICK_SIZE, 16.0, max_label_w);
        let lines: Vec<Vec<&str>> = labels
            .iter()
            .map(|&l| {
                if Label::new(l, label_size).width() <= max_label_w {
                    vec![l]
                } else {
                    wrap_two_lines(l, label_size).0
                }
            })
            .collect();
        let label_w = lines
            .iter()
            .flatten()
            .map(|l| Label::new(l, label_size).width())
            .fold(0.0, f64::max);

        let (lo, hi) = self.x_range();
        let px0 = margin + label_w + 18.0;
        let px1 = w - margin - 24.0;
        let mut max_ticks = 10;
        let x_axis = loop {
            let axis = TickAxis::linear(lo, hi, max_ticks, false);
            if (axis.label_width() + 24.0) * axis.major.len() as f64 <= px1 - px0 || max_ticks <= 2
            {
                break axis;
            }
            max_ticks -= 1;
        };

        let legend = self.legend();
        if !legend.entries.is_empty() {
            let cx = (px0 + px1) / 2.0;
            let max_w = (w - 2.0 * margin).min(2.0 * (cx - margin).min(w - margin - cx));
            legend.draw(area, cx, top, max_w)?;
            top += legend.height(max_w) + 8.0;
        }
        let desc_h = Label::new("M", LABEL_SIZE).cap_height() * 1.9;
        let x_area = TICK_SIZE * 1.3
            + 14.0
            + if self.x_label.is_empty() {
                0.0
            } else {
                desc_h + 6.0
            };
        let (py0, py1) = (top + 4.0, (h - margin - x_area).max(top + 5.0));
        let n_rows = self.rows.len().max(1) as f64;
        let row_h = (py1 - py0) / n_rows;
        let x_of = |v: f64| px0 + (v - x_axis.lo) / (x_axis.hi - x_axis.lo) * (px1 - px0);
        let inside = |v: f64| v >= x_axis.lo - 1e-12 && v <= x_axis.hi + 1e-12;

        // Background: alternate row shading, then the vertical grid.
        for i in (0..self.rows.len()).step_by(2) {
            let ya = py0 + row_h * i as f64;
            fill_rect(
                area,
                (px0, ya),
                (px1, ya + row_h),
                RGBColor(246, 246, 246).filled(),
            )?;
        }
        for &t in &x_axis.minor {
            let x = x_of(t);
            line(
                area,
                (x, py0),
                (x, py1),
                RGBColor(238, 238, 238).stroke_width(1),
            )?;
        }
        for &t in &x_axis.major {
            let x = x_of(t);
            line(
                area,
                (x, py0),
                (x, py1),
                RGBColor(208, 208, 208).stroke_width(1),
            )?;
            line(
                area,
                (x, py1),
                (x, py1 + 5.0),
                RGBColor(80, 80, 80).stroke_width(1),
            )?;
            match x_axis.tick_text(t) {
                (base, Some(exp)) => draw_power_label(
                    area,
                    (&base, &exp),
                    (x, py1 + 12.0),
                    HPos::Center,
                    VPos::Top,
                )?,
                (base, None) => Label::new(&base, TICK_SIZE)
                    .color(RGBColor(40, 40, 40))
                    .anchor(HPos::Center, VPos::Top)
                    .draw(area, pt(x, py1 + 12.0))?,
            }
        }
        fill_rect(
            area,
            (px0, py0),
            (px1, py1),
            RGBColor(80, 80, 80).stroke_width(1),
        )?;

        // Row labels, right-aligned against the plot.
        let spacing = 0.9 * label_size;
        for (i, row_lines) in lines.iter().enumerate() {
            let cy = py0 + row_h * (i as f64 + 0.5);
            let mid = (row_lines.len() as f64 - 1.0) / 2.0;
            for (k, l) in row_lines.iter().enumerate() {
                Label::new(l, label_size)
                    .anchor(HPos::Right, VPos::Center)
                    .draw(area, pt(px0 - 12.0, cy + (k as f64 - mid) * spacing))?;
            }
        }

        // Range bars.
        let bar_half = (0.2 * row_h).clamp(2.0, 9.0);
        for (i, a, b) in self.ranges() {
            let cy = py0 + row_h * (i as f64 + 0.5);
            let (xa, xb) = (x_of(a).max(px0), x_of(b).min(px1));
            if xb >= xa {
                let (xa, xb) = if xb - xa < 3.0 {
                    ((xa + xb) / 2.0 - 1.5, (xa + xb) / 2.0 + 1.5)
                } else {
                    (xa, xb)
                };
                fill_rect(
                    area,
                    (xa, cy - bar_half),
                    (xb, cy + bar_half),
                    RGBColor(205, 205, 205).filled(),
                )?;
            }
        }

        // Markers, nudged apart vertically by series.
        let n_series = self.n_series().max(1);
        let r = (0.18 * row_h).clamp(2.5, 7.0);
        let nudge = if n_series > 1 {
            (0.5 * row_h / n_series as f64).min(0.9 * r)
        } else {
            0.0
        };
        for (i, row) in self.rows.iter().enumerate() {
            let cy = py0 + row_h * (i as f64 + 0.5);
            for &(s, v) in &row.points {
                if !v.is_finite() || !inside(v) {
                    continue;
                }
                let (marker, color) = Self::series_style(s);
                let y = cy + (s as f64 - (n_series as f64 - 1.0) / 2.0) * nudge;
                if !matches!(marker, Marker::Cross | Marker::Plus) {
                    draw_marker(area, marker, (x_of(v), y), r + 1.5, WHITE.to_rgba())?;
                }
                draw_marker(area, marker, (x_of(v), y), r, color.to_rgba())?;
            }
        }

        if !self.x_label.is_empty() {
            let size = fit_font_size(&[&self.x_label], LABEL_SIZE, 12.0, px1 - px0);
            Label::new(&self.x_label, size)
                .anchor(HPos::Center, VPos::Bottom)
                .draw(area, pt((px0 + px1) / 2.0, h - margin - 0.25 * desc_h))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Heatmap
// ---------------------------------------------------------------------------

/// A matrix of values as square coloured cells, e.g. pairwise co-clustering
/// probabilities or affinities between items: row labels on the left, column
/// labels below (rotated when they do not fit a cell), a vertical colour bar
/// with ticks and `color_label` on the right. Non-finite and missing cells
/// (rows may be ragged) are drawn light grey and keyed as "n/a". Groups in
/// `highlight` get a thick outline around their block of cells when their
/// indices are contiguous, else each of their cells is outlined.
#[derive(Debug, Clone, Default)]
pub struct HeatmapChart {
    /// Title drawn above the figure.
    pub title: String,
    /// The values, `matrix[row][col]`; non-finite cells are drawn light grey.
    pub matrix: Vec<Vec<f64>>,
    /// Row labels, top to bottom; missing ones show the row index.
    pub row_labels: Vec<String>,
    /// Column labels, left to right; missing ones show the column index.
    pub col_labels: Vec<String>,
    /// Colour-bar caption, e.g. `"P(i and j in the same cluster)"`.
    pub color_label: String,
    /// `true`: the [`diverging`] palette centred at 0 over a symmetric range;
    /// `false`: [`viridis`].
    pub diverging: bool,
    /// Value range of the colour scale (values outside are clamped); `None`
    /// (or an empty or non-finite range) uses min..max of the finite values,
    /// or ±max|v| if `diverging`. A diverging scale is always made symmetric.
    pub value_range: Option<(f64, f64)>,
    /// Write each value in its cell (2 decimals, fewer if cells are small),
    /// in black or white, whichever reads better on the cell colour.
    pub annotate: bool,
    /// Groups of indices (e.g. the clusters of the MAP clustering), applied to
    /// both rows and columns; indices out of range are ignored.
    pub highlight: Vec<Vec<usize>>,
}

/// Colour of non-finite heatmap cells and their "n/a" key.
const NA_GREY: RGBColor = RGBColor(215, 215, 215);

/// An outline around cells `rows.0..rows.1` x `cols.0..cols.1` of a heatmap;
/// `block` outlines a whole group (thick), otherwise a single cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CellOutline {
    rows: (usize, usize),
    cols: (usize, usize),
    block: bool,
}

/// Outlines for `groups` on an `n_rows` x `n_cols` matrix: one block per
/// group whose in-range row and column indices are both contiguous, else one
/// outline per cell `(i, j)` with `i` and `j` in the group.
fn highlight_outlines(groups: &[Vec<usize>], n_rows: usize, n_cols: usize) -> Vec<CellOutline> {
    let mut out = Vec::new();
    for group in groups {
        let in_range = |n: usize| -> Vec<usize> {
            group
                .iter()
                .copied()
                .filter(|&i| i < n)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        let (rows, cols) = (in_range(n_rows), in_range(n_cols));
        let span = |v: &[usize]| match (v.first(), v.last()) {
            (Some(&a), Some(&b)) if b - a + 1 == v.len() => Some((a, b + 1)),
            _ => None,
        };
        match (span(&rows), span(&cols)) {
            (Some(rows), Some(cols)) => out.push(CellOutline {
                rows,
                cols,
                block: true,
            }),
            _ => {
                for &i in &rows {
                    for &j in &cols {
                        out.push(CellOutline {
                            rows: (i, i + 1),
                            cols: (j, j + 1),
                            block: false,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Draws a `width` px outline of the rectangle `(x0, y0)`-`(x1, y1)` centred on
/// its edges, as four filled bars (crisp corners in PNG and SVG).
fn outline_rect<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (f64, f64),
    (x1, y1): (f64, f64),
    width: f64,
    color: RGBColor,
) -> Result<()> {
    let d = width / 2.0;
    let style = color.filled();
    fill_rect(area, (x0 - d, y0 - d), (x1 + d, y0 + d), style)?;
    fill_rect(area, (x0 - d, y1 - d), (x1 + d, y1 + d), style)?;
    fill_rect(area, (x0 - d, y0 - d), (x0 + d, y1 + d), style)?;
    fill_rect(area, (x1 - d, y0 - d), (x1 + d, y1 + d), style)
}

/// Where the parts of a [`HeatmapChart`] go, in pixels relative to the area.
struct HeatmapLayout {
    /// Font size of row and column labels.
    label_size: f64,
    /// Column labels read bottom to top.
    vertical_cols: bool,
    /// Side of a cell.
    cell: f64,
    /// Top left corner of the matrix.
    x0: f64,
    y0: f64,
}

impl HeatmapChart {
    /// Gap between the matrix and the colour bar, and the bar's width.
    const BAR_GAP: f64 = 26.0;
    const BAR_W: f64 = 22.0;

    /// Number of rows and columns (the longest row).
    fn dims(&self) -> (usize, usize) {
        let cols = self.matrix.iter().map(Vec::len).max().unwrap_or(0);
        (self.matrix.len(), cols)
    }

    /// The finite value of cell `(i, j)`.
    fn value(&self, i: usize, j: usize) -> Option<f64> {
        self.matrix
            .get(i)
            .and_then(|r| r.get(j))
            .copied()
            .filter(|v| v.is_finite())
    }

    fn finite_values(&self) -> impl Iterator<Item = f64> + '_ {
        self.matrix
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
    }

    /// Whether any cell of the matrix is non-finite or missing.
    fn has_na(&self) -> bool {
        let (_, cols) = self.dims();
        self.matrix
            .iter()
            .any(|r| r.len() < cols || r.iter().any(|v| !v.is_finite()))
    }

    /// The colour scale's range, `lo < hi` (symmetric about 0 if diverging).
    fn scale(&self) -> (f64, f64) {
        let (lo, hi) = valid_range(self.value_range).unwrap_or_else(|| {
            self.finite_values()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        });
        if self.diverging {
            let m = lo.abs().max(hi.abs());
            let m = if m.is_finite() && m > 0.0 { m } else { 1.0 };
            (-m, m)
        } else if lo < hi {
            (lo, hi)
        } else {
            padded_range([lo, hi], 0.05)
        }
    }

    /// Colour of value `v` on the scale `(lo, hi)`.
    fn color(&self, v: f64, (lo, hi): (f64, f64)) -> RGBColor {
        if self.diverging {
            diverging(v / hi)
        } else {
            viridis((v - lo) / (hi - lo))
        }
    }

    /// Label of row (`row`) or column `k`.
    fn label(&self, row: bool, k: usize) -> String {
        let labels = if row {
            &self.row_labels
        } else {
            &self.col_labels
        };
        labels.get(k).cloned().unwrap_or_else(|| k.to_string())
    }

    /// Cell texts with `decimals` decimals (no "−0.00"), `None` for n/a cells.
    fn cell_texts(&self, decimals: usize) -> Vec<Vec<Option<String>>> {
        let (rows, cols) = self.dims();
        let unit = 10f64.powi(decimals as i32);
        (0..rows)
            .map(|i| {
                (0..cols)
                    .map(|j| {
                        self.value(i, j).map(|v| {
                            let v = if (v * unit).round() == 0.0 { 0.0 } else { v };
                            format_number(v, decimals)
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// Annotation texts and font size fitting cells of side `cell`: 2
    /// decimals if they fit at a readable size, else 1, else 0, else none.
    fn annotations(&self, cell: f64) -> Option<(Vec<Vec<Option<String>>>, f64)> {
        if !self.annotate || cell < 14.0 {
            return None;
        }
        let top = snap_size((TICK_SIZE - 2.0).min(0.45 * cell));
        (0..=2).rev().find_map(|decimals| {
            let texts = self.cell_texts(decimals);
            let flat: Vec<&str> = texts
                .iter()
                .flatten()
                .flatten()
                .map(String::as_str)
                .collect();
            let size = fit_font_size(&flat, top, 10.0, cell - 6.0);
            let fits = flat
                .iter()
                .all(|t| Label::new(t, size).width() <= cell - 4.0);
            (fits && size <= 0.6 * cell).then_some((texts, size))
        })
    }

    /// Width of the colour bar block right of the matrix (gap, bar, ticks, caption).
    fn bar_block_w(&self, ticks: &TickAxis, caption_size: f64) -> f64 {
        let tick_w = (1.08 * ticks.label_width()).max(Label::new("n/a", TICK_SIZE).width());
        let caption_w = if self.color_label.is_empty() {
            0.0
        } else {
            16.0 + 1.3 * caption_size
        };
        Self::BAR_GAP + Self::BAR_W + 12.0 + tick_w + caption_w
    }

    /// Lays the figure out in `w` x `h` pixels below a band of `top` pixels.
    fn layout(&self, (w, h): (f64, f64), top: f64, bar_w: f64) -> HeatmapLayout {
        let (rows, cols) = self.dims();
        let margin = 16.0;
        let row_labels: Vec<String> = (0..rows).map(|i| self.label(true, i)).collect();
        let col_labels: Vec<String> = (0..cols).map(|j| self.label(false, j)).collect();
        let row_refs: Vec<&str> = row_labels.iter().map(String::as_str).collect();
        let col_refs: Vec<&str> = col_labels.iter().map(String::as_str).collect();
        let widest = |texts: &[&str], size: f64| {
            texts
                .iter()
                .map(|t| Label::new(t, size).width())
                .fold(0.0, f64::max)
        };
        let mut size = snap_size(TICK_SIZE);
        loop {
            let size_rows = fit_font_size(&row_refs, size, 8.0, 0.28 * w);
            let size_cols = fit_font_size(&col_refs, size, 8.0, 0.28 * h);
            let s = size_rows.min(size_cols);
            // 8% slack: SVG viewers without Noto Sans fall back to wider fonts.
            let row_w = 1.08 * widest(&row_refs, s) + 10.0;
            let col_w = 1.08 * widest(&col_refs, s);
            let avail_w = w - 2.0 * margin - row_w - bar_w;
            let na_h = if self.has_na() {
                Self::BAR_W + 14.0
            } else {
                0.0
            };
            let cell_for = |band: f64| {
                let band = band.max(na_h);
                let avail_h = h - top - margin - band - 8.0;
                (avail_w / cols.max(1) as f64)
                    .min(avail_h / rows.max(1) as f64)
                    .max(1.0)
            };
            let flat_band = Label::new("M", s).cap_height() + 14.0;
            let flat_cell = cell_for(flat_band);
            let vertical_cols = col_w + 6.0 > flat_cell;
            let band = if vertical_cols {
                col_w + 12.0
            } else {
                flat_band
            };
            let cell = if vertical_cols {
                cell_for(band)
            } else {
                flat_cell
            };
            if cell >= s / 0.85 || s <= 8.0 {
                let block_w = row_w + cell * cols as f64 + bar_w;
                let block_h = cell * rows as f64 + 8.0 + band.max(na_h);
                let x0 = ((w - block_w) / 2.0).max(margin) + row_w;
                let y0 = top + ((h - top - margin - block_h) / 2.0).max(0.0);
                return HeatmapLayout {
                    label_size: s,
                    vertical_cols,
                    cell,
                    x0,
                    y0,
                };
            }
            size = s - 2.0;
        }
    }
}

impl Chart for HeatmapChart {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (f64::from(w), f64::from(h));
        let top = f64::from(title_band(&self.title));
        if !self.title.is_empty() {
            let size = fit_font_size(&[&self.title], TITLE_SIZE, 12.0, w - 40.0);
            Label::new(&self.title, size).draw(area, pt(w / 2.0, top / 2.0))?;
        }
        let (rows, cols) = self.dims();
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let scale = self.scale();
        // The bar's ticks depend on its height, which depends on the layout:
        // lay out with generous ticks first, then with the actual ones.
        let caption_size =
            |bar_h: f64| fit_font_size(&[&self.color_label], LABEL_SIZE - 4.0, 10.0, bar_h);
        let ticks_for = |bar_h: f64| {
            let max_ticks = ((bar_h / (2.0 * TICK_SIZE)).floor() as usize).clamp(2, 8);
            TickAxis::linear(scale.0, scale.1, max_ticks, false)
        };
        let first = self.layout((w, h), top, self.bar_block_w(&ticks_for(h), LABEL_SIZE));
        let bar_h = first.cell * rows as f64;
        let (ticks, cap_size) = (ticks_for(bar_h), caption_size(bar_h));
        let lay = self.layout((w, h), top, self.bar_block_w(&ticks, cap_size));
        let HeatmapLayout { cell, x0, y0, .. } = lay;
        let (x1, y1) = (x0 + cell * cols as f64, y0 + cell * rows as f64);

        // Cells, then a white grid between them when cells are large enough.
        for i in 0..rows {
            for j in 0..cols {
                let bg = self.value(i, j).map_or(NA_GREY, |v| self.color(v, scale));
                let (xa, ya) = (x0 + cell * j as f64, y0 + cell * i as f64);
                fill_rect(area, (xa, ya), (xa + cell, ya + cell), bg.filled())?;
            }
        }
        if cell >= 10.0 {
            for k in 1..rows {
                let y = y0 + cell * k as f64;
                line(area, (x0, y), (x1, y), WHITE.stroke_width(1))?;
            }
            for k in 1..cols {
                let x = x0 + cell * k as f64;
                line(area, (x, y0), (x, y1), WHITE.stroke_width(1))?;
            }
        }
        if let Some((texts, size)) = self.annotations(cell) {
            for (i, row) in texts.iter().enumerate() {
                for (j, text) in row.iter().enumerate() {
                    let bg = self.value(i, j).map_or(NA_GREY, |v| self.color(v, scale));
                    let text = text.as_deref().unwrap_or("n/a");
                    Label::new(text, size).color(text_color_on(bg)).draw(
                        area,
                        pt(x0 + cell * (j as f64 + 0.5), y0 + cell * (i as f64 + 0.5)),
                    )?;
                }
            }
        }
        fill_rect(
            area,
            (x0, y0),
            (x1, y1),
            RGBColor(90, 90, 90).stroke_width(1),
        )?;

        // Highlighted groups: a white halo under a black outline.
        let outlines = highlight_outlines(&self.highlight, rows, cols);
        for halo in [true, false] {
            for o in &outlines {
                let base = if o.block {
                    (0.1 * cell).clamp(2.0, 4.0)
                } else {
                    (0.06 * cell).clamp(1.0, 2.0)
                };
                let (width, color) = if halo {
                    (base + 3.0, WHITE)
                } else {
                    (base, RGBColor(15, 15, 15))
                };
                let a = (x0 + cell * o.cols.0 as f64, y0 + cell * o.rows.0 as f64);
                let b = (x0 + cell * o.cols.1 as f64, y0 + cell * o.rows.1 as f64);
                outline_rect(area, a, b, width, color)?;
            }
        }

        // Row labels left, column labels below (reading upwards if rotated).
        let s = lay.label_size;
        for i in 0..rows {
            Label::new(&self.label(true, i), s)
                .anchor(HPos::Right, VPos::Center)
                .draw(area, pt(x0 - 10.0, y0 + cell * (i as f64 + 0.5)))?;
        }
        for j in 0..cols {
            let text = self.label(false, j);
            let cx = x0 + cell * (j as f64 + 0.5);
            if lay.vertical_cols {
                Label::new(&text, s)
                    .vertical()
                    .anchor(HPos::Right, VPos::Center)
                    .draw(area, pt(cx, y1 + 10.0))?;
            } else {
                Label::new(&text, s)
                    .anchor(HPos::Center, VPos::Top)
                    .draw(area, pt(cx, y1 + 10.0))?;
            }
        }

        // Colour bar: a gradient with ticks, the caption right of it, and an
        // "n/a" key under it if any cell is non-finite.
        let (bx0, bx1) = (x1 + Self::BAR_GAP, x1 + Self::BAR_GAP + Self::BAR_W);
        let bar_h = y1 - y0;
        let steps = bar_h.round().clamp(1.0, 256.0) as usize;
        for k in 0..steps {
            let f = |k: usize| k as f64 / steps as f64;
            let v = scale.0 + (scale.1 - scale.0) * (f(k) + 0.5 / steps as f64);
            let (ya, yb) = (y1 - bar_h * f(k + 1), y1 - bar_h * f(k));
            fill_rect(
                area,
                (bx0, ya),
                (bx1, yb + 1.0),
                self.color(v, scale).filled(),
            )?;
        }
        let dark = RGBColor(80, 80, 80);
        fill_rect(area, (bx0, y0), (bx1, y1), dark.stroke_width(1))?;
        let y_of = |v: f64| y1 - (v - scale.0) / (scale.1 - scale.0) * bar_h;
        for &t in &ticks.major {
            let y = y_of(t);
            line(area, (bx1, y), (bx1 + 5.0, y), dark.stroke_width(1))?;
            match ticks.tick_text(t) {
                (base, Some(exp)) => draw_power_label(
                    area,
                    (&base, &exp),
                    (bx1 + 10.0, y),
                    HPos::Left,
                    VPos::Center,
                )?,
                (base, None) => Label::new(&base, TICK_SIZE)
                    .color(RGBColor(40, 40, 40))
                    .anchor(HPos::Left, VPos::Center)
                    .draw(area, pt(bx1 + 10.0, y))?,
            }
        }
        if !self.color_label.is_empty() {
            let cx = bx1 + 12.0 + 1.08 * ticks.label_width() + 16.0;
            Label::new(&self.color_label, cap_size)
                .vertical()
                .anchor(HPos::Center, VPos::Top)
                .draw(area, pt(cx, (y0 + y1) / 2.0))?;
        }
        if self.has_na() {
            let ya = y1 + 12.0;
            fill_rect(area, (bx0, ya), (bx1, ya + Self::BAR_W), NA_GREY.filled())?;
            fill_rect(
                area,
                (bx0, ya),
                (bx1, ya + Self::BAR_W),
                dark.stroke_width(1),
            )?;
            Label::new("n/a", TICK_SIZE)
                .color(RGBColor(40, 40, 40))
                .anchor(HPos::Left, VPos::Center)
                .draw(area, pt(bx1 + 10.0, ya + Self::BAR_W / 2.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh, unique temporary directory for one test.
    fn temp_dir(name: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "trellis-plot-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Checks both files exist, are non-empty and well-formed, and no temporary is left.
    fn check_outputs(dir: &Path, png: &Path, svg: &Path) -> String {
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
    #[test]
    fn exact_number_format_keeps_the_digits_that_matter() {
        assert_eq!(format_number_exact(1.01, 2, 4), "1.01");
        assert_eq!(format_number_exact(1.001, 2, 4), "1.001");
        assert_eq!(format_number_exact(44.088, 2, 4), "44.088");
        assert_eq!(format_number_exact(40.08, 2, 4), "40.08");
        assert_eq!(format_number_exact(1.0, 2, 4), "1.00");
        assert_eq!(format_number_exact(1.0 / 3.0, 2, 4), "0.3333");
        assert_eq!(format_number_exact(-0.5, 2, 4), "−0.50");
    }

    fn assert_svg_has(svg: &str, texts: &[&str]) {
        for text in texts {
            assert!(svg.contains(text), "{text:?} missing from SVG");
        }
    }

    fn sample_table() -> PairwiseDiffTable {
        let labels = ["Trellis", "Beam Search", "Greedy", "Truth"];
        let n = labels.len();
        let mut mean = vec![vec![None; n]; n];
        let mut std = vec![vec![None; n]; n];
        for i in 0..n {
            for j in (i + 1)..n {
                mean[i][j] = Some(0.5 * (j - i) as f64 - 0.3);
                std[i][j] = Some(0.25 * j as f64);
            }
        }
        PairwiseDiffTable {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            mean,
            std,
            title: "Log-likelihood differences".into(),
            caption: "mean ± std of row − column log-likelihood over 100 jets".into(),
        }
    }

    #[test]
    fn table_renders_png_and_svg() {
        let dir = temp_dir("table");
        let stem = dir.join("table.v1");
        let (png, svg) = save_chart(&stem, 800, 600, &sample_table()).unwrap();
        assert_eq!(png, dir.join("table.v1.png"));
        assert_eq!(svg, dir.join("table.v1.svg"));
        let svg = check_outputs(&dir, &png, &svg);
        assert!(
            svg.contains("0.2000 ± 0.5000"),
            "cell text missing from SVG"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn scatter_renders_png_and_svg() {
        let dir = temp_dir("scatter");
        let stem = dir.join("sub").join("scatter");
        let points = (0..500)
            .map(|i| {
                let x = -45.0 + (i as f64 * 0.37).sin() * 9.0;
                (x, x + 9.0 + (i as f64 * 1.3).cos(), 5 + i % 6)
            })
            .collect();
        let chart = ScatterByCategory {
            points,
            x_label: "MAP log-likelihood".into(),
            y_label: "log Z".into(),
            title: "Partition function vs MAP".into(),
            legend_title: "N leaves".into(),
            category_names: vec![],
            diagonal: false,
            x_range: None,
            y_range: None,
        };
        let (png, svg) = save_chart_default(&stem, &chart).unwrap();
        let svg = check_outputs(&dir.join("sub"), &png, &svg);
        assert!(svg.contains("N leaves = 10"), "legend missing from SVG");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_charts_do_not_fail() {
        let dir = temp_dir("empty");
        save_chart(&dir.join("t"), 400, 300, &PairwiseDiffTable::default()).unwrap();
        save_chart(&dir.join("s"), 400, 300, &ScatterByCategory::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Figure 6-like data: 90 log-likelihood values in -40..-26 with softmax
    /// masses and two noisy sample sets.
    fn sample_posterior() -> PosteriorMassChart {
        let values: Vec<f64> = (0..90)
            .map(|i| -40.0 + 14.0 * (i as f64 / 89.0).powf(0.8))
            .collect();
        let z: f64 = values.iter().map(|v| (v + 26.0).exp()).sum();
        let exact: Vec<f64> = values.iter().map(|v| (v + 26.0).exp() / z).collect();
        let noisy = |phase: f64| -> Vec<f64> {
            let f: Vec<f64> = exact
                .iter()
                .enumerate()
                .map(|(i, &p)| p * (1.0 + 0.1 * (i as f64 * 1.7 + phase).sin()))
                .collect();
            let total: f64 = f.iter().sum();
            f.iter().map(|x| x / total).collect()
        };
        PosteriorMassChart {
            samples: vec![
                ("trellis sampler, 100,000 draws".into(), noisy(0.0)),
                ("reference sampler, 20,000 draws".into(), noisy(2.0)),
            ],
            values,
            exact,
            truth: Some(-26.95),
            title: "Exact posterior sampling".into(),
            x_label: "log-likelihood".into(),
            y_label: "posterior probability".into(),
            exact_label: "exact posterior mass".into(),
        }
    }

    /// A scaling chart: measured times, a fit and a reference reaching 1e17 s.
    fn sample_lines() -> LineChart {
        let measured: Vec<(f64, f64)> = (8..=20)
            .map(|n| (f64::from(n), 0.0001 * 3f64.powi(n - 8) / 2.0))
            .collect();
        let fit = (8..=22)
            .map(|n| (f64::from(n), 0.00006 * 3f64.powi(n - 8)))
            .collect();
        let trees = (8..=22)
            .map(|n| {
                let double_factorial: f64 = (1..=(2 * n - 3)).step_by(2).map(f64::from).product();
                (f64::from(n), double_factorial * 1e-8)
            })
            .collect();
        LineChart {
            series: vec![
                LineSeries {
                    name: "trellis (measured)".into(),
                    points: measured,
                    dashed: false,
                    markers: true,
                },
                LineSeries {
                    name: "c\u{b7}3^N fit".into(),
                    points: fit,
                    dashed: true,
                    markers: false,
                },
                LineSeries {
                    name: "(2N\u{2212}3)!! trees \u{d7} 10 ns".into(),
                    points: trees,
                    dashed: true,
                    markers: false,
                },
            ],
            title: "Wall time against N".into(),
            x_label: "number of leaves N".into(),
            y_label: "wall time (s)".into(),
            log_y: true,
            integer_x: true,
        }
    }

    #[test]
    fn posterior_mass_renders_png_and_svg() {
        let dir = temp_dir("posterior");
        let (png, svg) = save_chart_default(&dir.join("fig6"), &sample_posterior()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &[
                "exact posterior mass",
                "trellis sampler, 100,000 draws",
                "reference sampler, 20,000 draws",
                "truth tree",
                ">\ntruth\n<",
            ],
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn line_chart_renders_png_and_svg() {
        let dir = temp_dir("lines");
        let chart = sample_lines();
        let (png, svg) = save_chart(&dir.join("scaling"), 900, 700, &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert!(
            svg.contains("(2N\u{2212}3)!! trees"),
            "legend missing from SVG"
        );
        assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 40);
        // Linear axes, with scientific tick labels for the large values.
        let linear = LineChart {
            log_y: false,
            ..chart
        };
        let (png, svg) = save_chart(&dir.join("linear"), 900, 700, &linear).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert!(svg.contains("\u{d7}10"), "scientific tick labels missing");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_new_charts_do_not_fail() {
        let dir = temp_dir("degenerate");
        save_chart(&dir.join("p0"), 400, 300, &PosteriorMassChart::default()).unwrap();
        save_chart(&dir.join("l0"), 400, 300, &LineChart::default()).unwrap();
        let odd = PosteriorMassChart {
            values: vec![-3.0, f64::NAN, -1.0],
            exact: vec![0.5, 0.5],
            samples: vec![("s".into(), vec![0.0, 1.0, f64::INFINITY, 7.0])],
            truth: Some(f64::NAN),
            ..Default::default()
        };
        save_chart(&dir.join("p1"), 300, 200, &odd).unwrap();
        let odd = LineChart {
            series: vec![
                LineSeries {
                    name: "non-positive".into(),
                    points: vec![(1.0, 0.0), (2.0, -1.0), (f64::NAN, 1.0)],
                    dashed: true,
                    markers: true,
                },
                LineSeries {
                    name: String::new(),
                    points: vec![(5.0, 3e-3)],
                    dashed: false,
                    markers: true,
                },
            ],
            log_y: true,
            integer_x: true,
            ..Default::default()
        };
        save_chart(&dir.join("l1"), 300, 200, &odd).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn axis_ticks() {
        let x = TickAxis::linear(7.4, 22.6, 10, true);
        assert_eq!(x.major, vec![8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0]);
        assert_eq!(x.minor, vec![9.0, 11.0, 13.0, 15.0, 17.0, 19.0, 21.0]);
        let x = TickAxis::linear(0.0, 0.165, 8, false);
        assert_eq!(x.major.len(), 4); // 0, 0.05, 0.1, 0.15
        assert_eq!(x.tick_text(x.major[3]), ("0.15".to_owned(), None));
        // 21 decades: every third power of ten labelled.
        let y = TickAxis::log10(-4.9, 17.9, 9);
        assert_eq!(y.major, vec![-3.0, 0.0, 3.0, 6.0, 9.0, 12.0, 15.0]);
        assert_eq!(
            y.tick_text(-3.0),
            ("10".to_owned(), Some("\u{2212}3".to_owned()))
        );
        // Less than a decade: 1-2-5 ticks, or more if that gives too few.
        let y = TickAxis::log10(-0.9, 0.1, 9);
        let labels: Vec<_> = y.major.iter().map(|&t| y.tick_text(t).0).collect();
        assert_eq!(labels, ["2\u{d7}10", "5\u{d7}10", "10"]);
        let y = TickAxis::log10(-1.7, -1.3, 9);
        let labels: Vec<_> = y.major.iter().map(|&t| y.tick_text(t).0).collect();
        assert_eq!(labels, ["2\u{d7}10", "3\u{d7}10", "5\u{d7}10"]);
        // A very narrow range: linear ticks.
        let y = TickAxis::log10(0.4, 0.42, 9);
        let labels: Vec<_> = y.major.iter().map(|&t| y.tick_text(t).0).collect();
        assert!(
            labels.len() >= 2 && labels[0].starts_with("2.5"),
            "{labels:?}"
        );
        let big = TickAxis::linear(0.0, 1.3e17, 8, false);
        assert_eq!(
            big.tick_text(1.2e17),
            ("1.2\u{d7}10".to_owned(), Some("17".to_owned()))
        );
        let m = metrics().expect("font metrics");
        for c in ['\u{d7}', '\u{b7}', '\u{2212}'] {
            assert!(
                m.glyph(c).is_some_and(|g| g != 0),
                "{c} missing from the font"
            );
        }
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

    #[test]
    fn font_metrics_parse() {
        let m = metrics().expect("font metrics");
        assert_ne!(m.glyph('±'), Some(0));
        assert_ne!(m.glyph('\u{2212}'), Some(0));
        // Plotters' own (truncating) layout agrees with ours to within a pixel.
        ensure_fonts();
        let text = "mean ± std of row − column";
        let ours = Label::new(text, 22.0).width();
        let theirs = FontDesc::new(FontFamily::Name(FONT), 22.0, FontStyle::Normal)
            .box_size(text)
            .unwrap()
            .0;
        assert!(
            (ours - f64::from(theirs)).abs() <= 1.0,
            "{ours} vs {theirs}"
        );
    }

    #[test]
    fn colour_maps_hit_reference_values() {
        let close = |a: RGBColor, b: (u8, u8, u8)| {
            [(a.0, b.0), (a.1, b.1), (a.2, b.2)]
                .iter()
                .all(|&(x, y)| (i32::from(x) - i32::from(y)).abs() <= 6)
        };
        assert!(
            close(viridis(0.0), (0x44, 0x01, 0x54)),
            "{:?}",
            viridis(0.0)
        );
        assert!(
            close(viridis(0.5), (0x21, 0x91, 0x8c)),
            "{:?}",
            viridis(0.5)
        );
        assert!(
            close(viridis(1.0), (0xfd, 0xe7, 0x25)),
            "{:?}",
            viridis(1.0)
        );
        assert_eq!(diverging(0.0), WHITE);
        assert_eq!(diverging(-1.0), RGBColor(178, 24, 43));
        assert_eq!(diverging(2.0), RGBColor(33, 102, 172));
        assert_eq!(category_colors(6).len(), 6);
    }

    #[test]
    fn formatting() {
        assert_eq!(
            with_suffix(Path::new("a/b.c"), ".png"),
            PathBuf::from("a/b.c.png")
        );
        assert_eq!(format_tick(-30.0), "\u{2212}30");
        assert_eq!(format_tick(0.25), "0.25");
        assert_eq!(format_tick(-0.0000001), "0");
        assert_eq!(format_number(-1.5, 2), "\u{2212}1.50");
        let (lo, hi) = padded_range([1.0, 3.0], 0.05);
        assert!((lo - 0.9).abs() < 1e-12 && (hi - 3.1).abs() < 1e-12);
    }

    fn newick(text: &str) -> Tree {
        Tree::from_newick(text).unwrap()
    }

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
        }
    }

    /// Purity of three methods against the range over all trees, per scheme.
    fn sample_dot_range() -> DotRangeChart {
        let schemes = [
            "1/0 weights, Dasgupta",
            "1/0 weights, correlation",
            "Gaussian kernel, Dasgupta",
            "Gaussian kernel, correlation",
            "cosine similarity, Dasgupta",
            "cosine similarity, correlation",
            "signed weights, correlation clustering cost",
            "k-NN graph (k = 3), Dasgupta",
        ];
        let rows = schemes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let x = i as f64;
                let (lo, hi) = (0.25 + 0.03 * x, 0.8 + 0.02 * (x * 1.3).sin());
                DotRangeRow {
                    label: s.to_string(),
                    range: Some((lo, hi)),
                    points: vec![
                        (0, hi - 0.02 * (i % 3) as f64),
                        (1, lo + (hi - lo) * (0.6 + 0.3 * (x * 0.7).cos())),
                        (
                            2,
                            if i == 5 {
                                f64::NAN
                            } else {
                                hi - 0.02 * (i % 3) as f64
                            },
                        ),
                    ],
                }
            })
            .collect();
        DotRangeChart {
            title: "Dendrogram purity per weight scheme".into(),
            rows,
            series_names: vec!["MAP tree".into(), "greedy".into(), "beam search".into()],
            x_label: "dendrogram purity".into(),
            range_label: "all trees: worst to best".into(),
            x_range: None,
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
        // A cyclic arena is walked without looping.
        let cyclic = Tree::from_arena(vec![Node::Internal(0, 1), Node::Leaf(0)], 0);
        assert!(TreeLayout::new(&cyclic).joins.is_empty());
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
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dot_range_renders_png_and_svg() {
        let dir = temp_dir("dotrange");
        let (png, svg) = save_chart_default(&dir.join("purity"), &sample_dot_range()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &[
                "all trees: worst to best",
                "beam search",
                "dendrogram purity",
            ],
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_trees_graphs_and_rows_do_not_fail() {
        let dir = temp_dir("degenerate-trees");
        let one_leaf = DendrogramPanel {
            title: "one leaf".into(),
            tree: Tree::leaf(0),
            leaf_labels: Vec::new(),
            leaf_category: vec![Some(99)],
        };
        let cyclic = DendrogramPanel {
            title: String::new(),
            tree: Tree::from_arena(vec![Node::Internal(0, 0)], 0),
            leaf_labels: vec!["x".into()],
            leaf_category: Vec::new(),
        };
        save_chart(&dir.join("d0"), 400, 300, &DendrogramChart::default()).unwrap();
        let chart = DendrogramChart {
            panels: vec![one_leaf.clone(), cyclic.clone()],
            category_names: vec!["a".into()],
            ..Default::default()
        };
        save_chart(&dir.join("d1"), 300, 200, &chart).unwrap();
        save_chart(&dir.join("d2"), 20, 20, &chart).unwrap();
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
        save_chart(&dir.join("r0"), 400, 300, &DotRangeChart::default()).unwrap();
        let rows = DotRangeChart {
            rows: vec![
                DotRangeRow {
                    label: "nan".into(),
                    range: Some((f64::NAN, 1.0)),
                    points: vec![(7, f64::NAN), (0, f64::INFINITY)],
                },
                DotRangeRow {
                    label: "reversed".into(),
                    range: Some((3.0, -1.0)),
                    points: vec![(1, 2.0), (0, 50.0)],
                },
            ],
            x_range: Some((1.0, 1.0)),
            ..Default::default()
        };
        save_chart(&dir.join("r1"), 300, 200, &rows).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the sample figures to `/tmp/charts/` for inspection:
    /// `cargo test --lib experiment::plot -- --ignored`.
    #[test]
    #[ignore]
    fn render_sample_figures() {
        let dir = Path::new("/tmp/charts");
        save_chart(&dir.join("dendrograms"), 1400, 700, &sample_dendrograms()).unwrap();
        save_chart(&dir.join("graph_and_trees"), 1500, 650, &sample_graph()).unwrap();
        save_chart_default(&dir.join("dot_range"), &sample_dot_range()).unwrap();
        // Many leaves with long labels (vertical), three panels, no legend.
        fn balanced(leaves: &[usize]) -> Tree {
            match leaves {
                [i] => Tree::leaf(*i),
                _ => {
                    let (a, b) = leaves.split_at(leaves.len() / 3 + 1);
                    Tree::join(balanced(a), balanced(b))
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
        }
    }

    /// Two named categories near the diagonal.
    fn sample_diagonal_scatter() -> ScatterByCategory {
        let points = (0..300)
            .map(|i| {
                let x = -60.0 + 40.0 * ((i as f64 * 0.61).sin() * 0.5 + 0.5);
                let c = i % 2;
                let y = x + (i as f64 * 1.3).cos() * 3.0 + if c == 0 { 2.5 } else { -1.0 };
                (x, y, c)
            })
            .collect();
        ScatterByCategory {
            points,
            x_label: "greedy log-likelihood".into(),
            y_label: "trellis MAP log-likelihood".into(),
            title: "MAP vs greedy".into(),
            legend_title: "kind".into(),
            category_names: vec!["exact trellis".into(), "sparse trellis".into()],
            diagonal: true,
            ..Default::default()
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
    fn scatter_diagonal_and_names_render() {
        let dir = temp_dir("scatter-diag");
        let (png, svg) = save_chart_default(&dir.join("diag"), &sample_diagonal_scatter()).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(
            &svg,
            &["exact trellis", "sparse trellis", "y = x", "MAP vs greedy"],
        );
        assert!(
            !svg.contains("kind = "),
            "named categories still use legend_title"
        );
        // Names for some categories only, and explicit ranges that drop points.
        let chart = ScatterByCategory {
            points: vec![(0.5, 0.5, 0), (1.5, 2.0, 1), (9.0, 0.5, 3)],
            legend_title: "K".into(),
            category_names: vec!["zero".into(), "one".into()],
            x_range: Some((0.0, 2.0)),
            y_range: Some((3.0, 0.0)),
            ..Default::default()
        };
        let (png, svg) = save_chart(&dir.join("ranges"), 600, 450, &chart).unwrap();
        let svg = check_outputs(&dir, &png, &svg);
        assert_svg_has(&svg, &["zero", "one"]);
        assert!(!svg.contains("K = 3"), "point outside x_range drawn");
        assert!(!svg.contains("y = x"), "diagonal drawn without `diagonal`");
        let ((x0, x1), (y0, y1)) = sample_diagonal_scatter().axis_ranges(&[(0.0, 5.0, 0)]);
        assert_eq!((x0, x1), (y0, y1));
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
    fn degenerate_heatmaps_and_scatters_do_not_fail() {
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
        let diag = ScatterByCategory {
            points: vec![(1.0, f64::NAN, 0), (2.0, 2.0, 4)],
            category_names: vec!["a".into()],
            diagonal: true,
            x_range: Some((f64::INFINITY, 0.0)),
            ..Default::default()
        };
        save_chart(&dir.join("s0"), 300, 500, &diag).unwrap();
        save_chart(&dir.join("s1"), 30, 20, &diag).unwrap();
        let empty = ScatterByCategory {
            diagonal: true,
            ..Default::default()
        };
        save_chart(&dir.join("s2"), 400, 300, &empty).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Renders the heatmap and scatter samples to `/tmp/charts2/` for inspection:
    /// `cargo test --lib experiment::plot -- --ignored`.
    #[test]
    #[ignore]
    fn render_heatmap_and_scatter_samples() {
        let dir = Path::new("/tmp/charts2");
        save_chart_default(&dir.join("heatmap_probabilities"), &sample_probabilities()).unwrap();
        save_chart_default(&dir.join("heatmap_affinities"), &sample_affinities()).unwrap();
        save_chart_default(&dir.join("scatter_diagonal"), &sample_diagonal_scatter()).unwrap();
        let named = ScatterByCategory {
            points: (0..400)
                .map(|i| {
                    let t = i as f64 * 0.37;
                    let c = i % 3;
                    (t.sin() * 3.0 + c as f64 * 2.0, t.cos() * 2.0 + c as f64, c)
                })
                .collect(),
            x_label: "first component".into(),
            y_label: "second component".into(),
            title: "Items by subtype".into(),
            legend_title: "subtype".into(),
            category_names: vec!["Basal".into(), "LumA".into(), "Her2".into()],
            ..Default::default()
        };
        save_chart_default(&dir.join("scatter_named"), &named).unwrap();
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
        let fig5 = ScatterByCategory {
            points: (0..500)
                .map(|i| {
                    let x = -45.0 + (i as f64 * 0.37).sin() * 9.0;
                    (x, x + 9.0 + (i as f64 * 1.3).cos(), 5 + i % 6)
                })
                .collect(),
            x_label: "MAP log-likelihood".into(),
            y_label: "log Z".into(),
            title: "Partition function vs MAP".into(),
            legend_title: "N leaves".into(),
            ..Default::default()
        };
        save_chart_default(&dir.join("scatter_fig5"), &fig5).unwrap();
    }
}
