//! Text in the embedded Noto Sans font: registration with plotters, font
//! metrics, precisely placed [`Label`]s and plotters text styles.

use std::sync::{Once, OnceLock};

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, FontTransform};
use ttf_parser::{Face, GlyphId};

use super::plot_err;

/// Font family name under which the embedded Noto Sans is registered for the
/// charts in this module. In SVG output it becomes the CSS font list
/// `Noto Sans, sans-serif`, so viewers with Noto Sans installed match the PNG.
pub const FONT: &str = "Noto Sans, sans-serif";

/// Font size for figure titles.
pub const TITLE_SIZE: f64 = 32.0;
/// Font size for axis descriptions and table headers.
pub const LABEL_SIZE: f64 = 28.0;
/// Font size for tick labels, legend entries and table cells.
pub const TICK_SIZE: f64 = 22.0;
/// Font size for captions and footnotes.
pub const CAPTION_SIZE: f64 = 24.0;

/// The most characters of one text drawn (a user's label can be megabytes long).
pub const MAX_LABEL_CHARS: usize = 200;

static FONTS: Once = Once::new();

/// Registers the embedded Noto Sans font with plotters as `"sans-serif"` and
/// as [`FONT`], for both `FontStyle::Normal` and `FontStyle::Bold` (the same
/// regular face: only the regular weight is embedded). Idempotent and cheap;
/// [`save_chart`](super::save_chart) and every chart here call it, but call
/// it yourself before drawing on your own backend.
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

/// Horizontal metrics of the embedded font, read with `ttf-parser` (the
/// parser behind ab_glyph, which renders plotters' text).
struct FontMetrics {
    face: Face<'static>,
    units_per_em: f64,
    cap_height: f64,
    /// Pixels per font unit at plotters size 1 (ab_glyph scales by ascender - descender).
    px_per_unit: f64,
}

impl FontMetrics {
    fn parse(font: &'static [u8]) -> Option<Self> {
        let face = Face::parse(font, 0).ok()?;
        let units_per_em = f64::from(face.units_per_em());
        // The OS/2 capital height (table version 2 and later), else 0.7 em.
        let cap_height = face.capital_height().map_or(0.7 * units_per_em, f64::from);
        let px_per_unit = 1.0 / (f64::from(face.ascender()) - f64::from(face.descender()));
        let m = Self {
            face,
            units_per_em,
            cap_height,
            px_per_unit,
        };
        // Sanity check: the font must map basic Latin.
        m.glyph('M').is_some_and(|g| g.0 != 0).then_some(m)
    }

    /// Glyph id of `c` from the font's Unicode cmap subtables.
    fn glyph(&self, c: char) -> Option<GlyphId> {
        self.face.glyph_index(c)
    }

    /// (advance width, left side bearing) of `c` in font units (those of the
    /// missing-glyph box, glyph 0, if the font lacks `c`).
    fn h_metrics(&self, c: char) -> (f64, f64) {
        let g = self.glyph(c).unwrap_or(GlyphId(0));
        let adv = self.face.glyph_hor_advance(g).unwrap_or(0);
        let lsb = self.face.glyph_hor_side_bearing(g).unwrap_or(0);
        (f64::from(adv), f64::from(lsb))
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
pub(super) fn snap_size(size: f64) -> f64 {
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
    text: std::borrow::Cow<'a, str>,
    size: f64,
    color: RGBColor,
    h: HPos,
    v: VPos,
    vertical: bool,
}

impl<'a> Label<'a> {
    /// Black text of plotters font size `size` (snapped to even pixels),
    /// centred on the drawing position. Text past [`MAX_LABEL_CHARS`] characters is clipped
    /// (saying how much was left out), so a megabyte-long label is measured and drawn at once.
    pub fn new(text: &'a str, size: f64) -> Self {
        let text = if text.len() > MAX_LABEL_CHARS {
            std::borrow::Cow::Owned(crate::data::clip(text, MAX_LABEL_CHARS))
        } else {
            std::borrow::Cow::Borrowed(text)
        };
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
                let units: f64 = self.text.chars().map(|c| m.h_metrics(c).0).sum();
                units * m.px_per_unit * self.size
            }
            None => FontDesc::new(FontFamily::Name(FONT), self.size, FontStyle::Normal)
                .box_size(&self.text)
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
            return area.draw_text(&self.text, &style, pos).map_err(plot_err);
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
            return area.draw_text(&self.text, &style, at).map_err(plot_err);
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
            let (adv, lsb) = m.h_metrics(c);
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

/// Best split of `text` at a space into two lines: the lines and the wider
/// line's width (the whole text and its width if it has no space).
pub(super) fn wrap_two_lines(text: &str, size: f64) -> (Vec<&str>, f64) {
    let width = |t: &str| Label::new(t, size).width();
    // Breaks past the clipped length would not be drawn.
    let head = text
        .char_indices()
        .nth(MAX_LABEL_CHARS)
        .map_or(text, |(cut, _)| &text[..cut]);
    head.match_indices(' ')
        .map(|(i, _)| {
            let (a, b) = (text[..i].trim_end(), text[i..].trim_start());
            (vec![a, b], width(a).max(width(b)))
        })
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or_else(|| (vec![text], width(text)))
}

/// Draws `text` centred on `center`, on two lines if it is wider than `max_w`.
pub(super) fn draw_lines<DB: DrawingBackend>(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_megabyte_label_is_clipped_for_measuring_and_drawing() {
        let long = "Z".repeat(10 << 20);
        let t0 = std::time::Instant::now();
        let label = Label::new(&long, 22.0);
        assert!(label.text.starts_with(&"Z".repeat(MAX_LABEL_CHARS)));
        assert!(label.text.ends_with(&format!(
            "({} more characters)",
            (10 << 20) - MAX_LABEL_CHARS
        )));
        let w = label.width();
        assert!(w > 0.0 && w < 10_000.0, "{w}");
        assert_eq!(fit_font_size(&[&long], 22.0, 12.0, 100.0), 12.0);
        let spaced = "a b ".repeat(1 << 20);
        let (lines, _) = wrap_two_lines(&spaced, 22.0);
        assert_eq!(lines.len(), 2);
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(Label::new("short", 22.0).text, "short");
    }

    #[test]
    fn font_metrics_parse() {
        let m = metrics().expect("font metrics");
        for c in ['±', '\u{d7}', '\u{b7}', '\u{2212}'] {
            assert!(
                m.glyph(c).is_some_and(|g| g.0 != 0),
                "{c} missing from the font"
            );
        }
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

    /// The metrics equal those of the hand-written TrueType parser that
    /// `ttf-parser` replaced (cmap formats 4 and 12, hhea, hmtx, OS/2): the
    /// numbers below were measured with it. Over every Unicode scalar value
    /// the two agreed on glyph id, advance and side bearing.
    #[test]
    fn metrics_match_the_replaced_parser() {
        let m = metrics().expect("font metrics");
        assert_eq!(m.units_per_em, 2048.0);
        assert_eq!(m.cap_height, 1462.0);
        // hhea ascender 2189 minus descender -600.
        assert_eq!(m.px_per_unit, 1.0 / 2789.0);
        // (character, glyph id, advance, left side bearing); ∝ is missing (glyph 0).
        let measured: [(char, u16, f64, f64); 40] = [
            (' ', 3, 532.0, 0.0),
            ('0', 19, 1171.0, 100.0),
            ('1', 20, 1171.0, 182.0),
            ('2', 21, 1171.0, 98.0),
            ('3', 22, 1171.0, 92.0),
            ('4', 23, 1171.0, 43.0),
            ('5', 24, 1171.0, 129.0),
            ('6', 25, 1171.0, 113.0),
            ('7', 26, 1171.0, 90.0),
            ('8', 27, 1171.0, 100.0),
            ('9', 28, 1171.0, 102.0),
            ('.', 17, 549.0, 147.0),
            (',', 15, 549.0, 84.0),
            ('\u{2212}', 555, 1171.0, 102.0),
            ('\u{d7}', 153, 1171.0, 131.0),
            ('\u{b7}', 121, 549.0, 147.0),
            ('\u{b1}', 115, 1171.0, 102.0),
            ('\u{2248}', 559, 1171.0, 96.0),
            ('\u{2264}', 561, 1171.0, 102.0),
            ('\u{2070}', 2023, 717.0, 39.0),
            ('\u{b9}', 123, 717.0, 76.0),
            ('\u{b2}', 116, 717.0, 49.0),
            ('\u{b3}', 117, 717.0, 35.0),
            ('\u{2074}', 571, 717.0, 20.0),
            ('\u{2075}', 572, 717.0, 61.0),
            ('\u{2076}', 2024, 717.0, 41.0),
            ('\u{2077}', 573, 717.0, 57.0),
            ('\u{2078}', 574, 717.0, 51.0),
            ('\u{2079}', 2025, 717.0, 35.0),
            ('M', 48, 1858.0, 199.0),
            ('m', 80, 1915.0, 174.0),
            ('W', 58, 1905.0, 25.0),
            ('i', 76, 528.0, 160.0),
            ('x', 91, 1083.0, 37.0),
            ('(', 11, 614.0, 82.0),
            (')', 12, 614.0, 61.0),
            ('\u{3b1}', 382, 1260.0, 113.0),
            ('\u{3b2}', 383, 1292.0, 174.0),
            ('\u{3b3}', 384, 1061.0, 10.0),
            ('\u{221d}', 0, 1229.0, 193.0),
        ];
        for (c, glyph, adv, lsb) in measured {
            assert_eq!(m.glyph(c).map_or(0, |g| g.0), glyph, "glyph of {c:?}");
            assert_eq!(m.h_metrics(c), (adv, lsb), "metrics of {c:?}");
        }
        // Totals over every Unicode scalar value, as the old parser gave them.
        let (mut mapped, mut glyphs, mut adv, mut lsb) = (0u64, 0u64, 0.0, 0.0);
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let g = m.glyph(c).map_or(0, |g| g.0);
            mapped += u64::from(g != 0);
            glyphs += u64::from(g);
            let (a, l) = m.h_metrics(c);
            (adv, lsb) = (adv + a, lsb + l);
        }
        assert_eq!(
            (mapped, glyphs, adv, lsb),
            (2187, 2_420_422, 1_366_506_948.0, 214_353_032.0)
        );
    }
}
