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
//!   (Figure 5 of the paper).
//!
//! Colour helpers [`viridis`], [`diverging`] and [`category_colors`] are shared
//! by all charts.
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
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, FontTransform};

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
/// legend entry `"<legend_title> = <category>"` per category (e.g. Figure 5 of
/// the Cluster Trellis paper: log Z against MAP log-likelihood per jet,
/// coloured by number of leaves). Axis ranges are padded 5% around the data;
/// the legend goes into the plot corner covering the fewest points.
#[derive(Debug, Clone, Default)]
pub struct ScatterByCategory {
    /// The points as `(x, y, category)`; non-finite coordinates are skipped.
    pub points: Vec<(f64, f64, usize)>,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Title drawn above the plot.
    pub title: String,
    /// Prefix of each legend entry, e.g. `"N leaves"` gives `"N leaves = 5"`.
    pub legend_title: String,
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

impl Chart for ScatterByCategory {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        ensure_fonts();
        area.fill(&WHITE).map_err(plot_err)?;
        let (w, _) = area.dim_in_pixel();
        let (origin_x, origin_y) = {
            let (xr, yr) = area.get_pixel_range();
            (f64::from(xr.start), f64::from(yr.start))
        };
        let pts: Vec<(f64, f64, usize)> = self
            .points
            .iter()
            .copied()
            .filter(|(x, y, _)| x.is_finite() && y.is_finite())
            .collect();
        let (x0, x1) = padded_range(pts.iter().map(|p| p.0), 0.05);
        let (y0, y1) = padded_range(pts.iter().map(|p| p.1), 0.05);

        let cats: Vec<usize> = pts
            .iter()
            .map(|p| p.2)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let colors = category_colors(cats.len());
        let color_of = |c: usize| colors[cats.binary_search(&c).unwrap_or(0)];

        // Room for the y tick labels (estimated from the range ends) and the description.
        let tick_w = [y0, y1, (y0 + y1) / 2.0]
            .iter()
            .map(|v| Label::new(&format_tick((v * 10.0).round() / 10.0), TICK_SIZE).width())
            .fold(0.0, f64::max);
        let desc_h = Label::new("M", LABEL_SIZE).cap_height() * 1.9;
        let y_area = (tick_w + 22.0 + desc_h + 14.0).round() as u32;
        let x_area = (TICK_SIZE * 1.3 + 14.0 + desc_h + 14.0).round() as u32;
        let title_h = if self.title.is_empty() {
            12
        } else {
            (TITLE_SIZE * 2.0) as u32
        };

        let mut chart = ChartBuilder::on(area)
            .margin_top(title_h)
            .margin_left(12)
            .margin_right(36)
            .margin_bottom(10)
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
        if !self.title.is_empty() {
            let size = fit_font_size(&[&self.title], TITLE_SIZE, 12.0, f64::from(w) - 40.0);
            Label::new(&self.title, size)
                .draw(area, pt(f64::from(w) / 2.0, f64::from(title_h) / 2.0))?;
        }
        Label::new(&self.x_label, LABEL_SIZE)
            .anchor(HPos::Center, VPos::Bottom)
            .draw(
                area,
                pt(
                    (px0 + px1) / 2.0,
                    py1 + f64::from(x_area) - 14.0 - 0.25 * desc_h,
                ),
            )?;
        Label::new(&self.y_label, LABEL_SIZE)
            .vertical()
            .anchor(HPos::Center, VPos::Top)
            .draw(area, pt(px0 - f64::from(y_area) + 12.0, (py0 + py1) / 2.0))?;

        if cats.is_empty() {
            return Ok(());
        }
        // Legend box, placed in the plot corner that hides the fewest points.
        let entries: Vec<String> = cats
            .iter()
            .map(|c| format!("{} = {c}", self.legend_title))
            .collect();
        let text_w = entries
            .iter()
            .map(|e| Label::new(e, TICK_SIZE).width())
            .fold(0.0, f64::max);
        let row_h = TICK_SIZE * 1.35;
        let (box_w, box_h) = (text_w + 52.0, row_h * cats.len() as f64 + 16.0);
        let inset = 14.0;
        let corners = [
            (px0 + inset, py0 + inset),
            (px1 - inset - box_w, py0 + inset),
            (px1 - inset - box_w, py1 - inset - box_h),
            (px0 + inset, py1 - inset - box_h),
        ];
        let covered = |(bx, by): (f64, f64)| {
            pts.iter()
                .filter(|&&(x, y, _)| {
                    let (sx, sy) = chart.backend_coord(&(x, y));
                    let (sx, sy) = (f64::from(sx) - origin_x, f64::from(sy) - origin_y);
                    sx >= bx && sx <= bx + box_w && sy >= by && sy <= by + box_h
                })
                .count()
        };
        let (bx, by) = corners
            .into_iter()
            .min_by_key(|&c| covered(c))
            .unwrap_or(corners[0]);
        fill_rect(
            area,
            (bx, by),
            (bx + box_w, by + box_h),
            WHITE.mix(0.9).filled(),
        )?;
        fill_rect(
            area,
            (bx, by),
            (bx + box_w, by + box_h),
            RGBColor(160, 160, 160).stroke_width(1),
        )?;
        for (k, (&c, entry)) in cats.iter().zip(&entries).enumerate() {
            let cy = by + 8.0 + row_h * (k as f64 + 0.5);
            area.draw(&Circle::new(pt(bx + 20.0, cy), 7, color_of(c).filled()))
                .map_err(plot_err)?;
            Label::new(entry, TICK_SIZE)
                .anchor(HPos::Left, VPos::Center)
                .draw(area, pt(bx + 38.0, cy))?;
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
}
