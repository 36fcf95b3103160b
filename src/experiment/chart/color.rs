//! Colour maps and palettes shared by the charts.

use plotters::prelude::*;

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

/// A qualitative palette of 18 distinct colours for when categories need one
/// fixed colour each beyond ten (e.g. a method across all of a kind's
/// figures): the "Tableau 10" of [`qualitative_color`] followed by navy,
/// black, magenta, dark teal, maroon, spring green, gold and olive; colour `i`
/// repeats every 18.
pub fn distinct_color(i: usize) -> RGBColor {
    const EXTRA: [(u8, u8, u8); 8] = [
        (0, 0, 128),
        (0, 0, 0),
        (200, 0, 200),
        (0, 100, 100),
        (128, 0, 0),
        (0, 200, 100),
        (255, 215, 0),
        (128, 128, 0),
    ];
    match i % (10 + EXTRA.len()) {
        k if k < 10 => qualitative_color(k),
        k => {
            let (r, g, b) = EXTRA[k - 10];
            RGBColor(r, g, b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn distinct_colors_differ_for_eighteen_categories() {
        let c: Vec<RGBColor> = (0..18).map(distinct_color).collect();
        for i in 0..18 {
            for j in 0..i {
                let d = |a: u8, b: u8| (f64::from(a) - f64::from(b)).powi(2);
                let dist = (d(c[i].0, c[j].0) + d(c[i].1, c[j].1) + d(c[i].2, c[j].2)).sqrt();
                assert!(dist > 60.0, "colours {j} and {i} too close: {dist}");
            }
        }
        assert_eq!(distinct_color(3), qualitative_color(3));
        assert_eq!(distinct_color(18), distinct_color(0));
    }
}
