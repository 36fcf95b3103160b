//! Number formatting with typographic minus signs.

/// Replaces a leading ASCII hyphen by a typographic minus sign (U+2212).
pub(super) fn typographic_minus(s: String) -> String {
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

/// Formats `v` with three significant digits (at most 8 decimals) and a typographic minus; "0"
/// for zero and "–" for NaN or infinities (table cells of errors and runtimes).
pub fn format_sig3(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
    format_number(v, decimals)
}

/// Formats a duration `mean ± sd` given in seconds in the unit that suits the mean (s, ms, µs
/// or ns), the mean with three significant digits and the sd with as many decimals:
/// `7.12e-6, 1.0e-7` gives "7.12 ± 0.10 µs" (table cells of runtimes, readable where fixed
/// point would need eight decimals). "–" for a non-finite mean; "?" for a non-finite sd.
pub fn format_seconds_pm(mean: f64, sd: f64) -> String {
    if !mean.is_finite() {
        return "–".into();
    }
    let (scale, unit) = match mean.abs() {
        m if m >= 1.0 || m == 0.0 => (1.0, "s"),
        m if m >= 1e-3 => (1e3, "ms"),
        m if m >= 1e-6 => (1e6, "\u{b5}s"),
        _ => (1e9, "ns"),
    };
    format!("{} {unit}", scaled_pm(mean, sd, scale))
}

/// "m ± s" of `mean · scale` with three significant digits and `sd · scale` with as many
/// decimals ("?" for a non-finite sd).
fn scaled_pm(mean: f64, sd: f64, scale: f64) -> String {
    let m = mean * scale;
    let decimals = if m == 0.0 {
        0
    } else {
        (2 - m.abs().log10().floor() as i32).clamp(0, 8) as usize
    };
    let sd = if sd.is_finite() {
        format_number(sd * scale, decimals)
    } else {
        "?".into()
    };
    format!("{} ± {sd}", format_number(m, decimals))
}

/// Formats a duration in seconds with three significant digits in the unit that suits it (s,
/// ms, µs or ns), never in e-notation: `2.998e-4` gives "300 µs" (heatmap cells of times).
pub fn format_seconds(secs: f64) -> String {
    let text = format_seconds_pm(secs, 0.0);
    match text.split_once(" ± ") {
        Some((m, rest)) => match rest.rsplit_once(' ') {
            Some((_, unit)) => format!("{m} {unit}"),
            None => m.to_string(),
        },
        None => text,
    }
}

/// Formats `v` with three significant digits, thousands and millions as "k" and "M" from
/// 10,000 on: `350000.7` gives "350k", `4716.8` "4717", `-3.4243` "−3.42" (narrow cells).
pub fn format_compact(v: f64) -> String {
    match v.abs() {
        a if a >= 9.995e6 => format!("{}M", format_sig3(v / 1e6)),
        a if a >= 9999.5 => format!("{}k", format_sig3(v / 1e3)),
        a if a >= 999.5 => format_number(v, 0),
        _ => format_sig3(v),
    }
}

/// The exponent suffix of scientific notation, "e−8", "e5" (a typographic minus: the embedded
/// font has no superscript minus).
fn exponent(e: i32) -> String {
    format!("e{e}").replace('-', "\u{2212}")
}

/// The power of ten a table cell of `v` is scaled by: none (0) for 0.001 ≤ |v| < 100,000 (and
/// for 0 or non-finite values), else the power of ten of `v`'s leading digit.
fn cell_exponent(v: f64) -> i32 {
    let a = v.abs();
    if !a.is_finite() || a == 0.0 || (1e-3..1e5).contains(&a) {
        0
    } else {
        a.log10().floor() as i32
    }
}

/// Formats `mean ± sd` with three significant digits of the mean, the sd with as many
/// decimals; a mean below 0.001 or from 100,000 on in scientific notation with a shared
/// exponent, "(5.00 ± 4.80)e−8", never fixed point with one significant digit ("0.00000005"). "–"
/// for a non-finite mean; "?" for a non-finite sd.
pub fn format_sig3_pm(mean: f64, sd: f64) -> String {
    if !mean.is_finite() {
        return "–".into();
    }
    let e = cell_exponent(mean);
    let pm = scaled_pm(mean, sd, 10f64.powi(-e));
    if e == 0 {
        pm
    } else {
        format!("({pm}){}", exponent(e))
    }
}

/// Formats `v` with three significant digits, below 0.001 or from 100,000 on in scientific
/// notation: "5.00e−8" (a table's reference value beside [`format_sig3_pm`]).
pub fn format_sig3_scaled(v: f64) -> String {
    let e = cell_exponent(v);
    if e == 0 {
        format_sig3(v)
    } else {
        format!("{}{}", format_sig3(v * 10f64.powi(-e)), exponent(e))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn durations_take_the_unit_of_their_mean() {
        assert_eq!(format_seconds_pm(7.12e-6, 1.0e-7), "7.12 ± 0.10 \u{b5}s");
        assert_eq!(format_seconds_pm(6.30e-6, 3.0e-8), "6.30 ± 0.03 \u{b5}s");
        assert_eq!(format_seconds_pm(0.0120, 0.00147), "12.0 ± 1.5 ms");
        assert_eq!(format_seconds_pm(9.2, 0.31), "9.20 ± 0.31 s");
        assert_eq!(format_seconds_pm(125.0, 3.0), "125 ± 3 s");
        assert_eq!(format_seconds_pm(4.2e-8, 1e-9), "42.0 ± 1.0 ns");
        assert_eq!(format_seconds_pm(f64::NAN, 1.0), "–");
        assert_eq!(format_seconds_pm(1e-3, f64::NAN), "1.00 ± ? ms");
    }

    #[test]
    fn small_means_are_scaled_not_printed_with_one_digit() {
        assert_eq!(format_sig3_pm(5.0e-8, 4.8e-8), "(5.00 ± 4.80)e\u{2212}8");
        assert_eq!(format_sig3_pm(0.0123, 0.004), "0.0123 ± 0.0040");
        assert_eq!(
            format_sig3_pm(-2.5e-5, 1e-6),
            "(\u{2212}2.50 ± 0.10)e\u{2212}5"
        );
        assert_eq!(format_sig3_pm(3.2e6, 1e5), "(3.20 ± 0.10)e6");
        assert_eq!(format_sig3_pm(f64::NAN, 1.0), "–");
        assert_eq!(format_sig3_scaled(5.0e-8), "5.00e\u{2212}8");
        assert_eq!(format_sig3_scaled(0.25), "0.250");
    }

    #[test]
    fn compact_numbers_and_durations() {
        assert_eq!(format_seconds(2.998e-4), "300 \u{b5}s");
        assert_eq!(format_seconds(1.38e-3), "1.38 ms");
        assert_eq!(format_seconds(4.525), "4.53 s");
        assert_eq!(format_compact(350000.7), "350k");
        assert_eq!(format_compact(4716.8), "4717");
        assert_eq!(format_compact(-3.4243), "\u{2212}3.42");
        assert_eq!(format_compact(0.0), "0");
        assert_eq!(format_compact(2.9e7), "29.0M");
    }

    #[test]
    fn formatting() {
        assert_eq!(format_tick(-30.0), "\u{2212}30");
        assert_eq!(format_tick(0.25), "0.25");
        assert_eq!(format_tick(-0.0000001), "0");
        assert_eq!(format_number(-1.5, 2), "\u{2212}1.50");
    }
}
