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
    format!("{} ± {sd} {unit}", format_number(m, decimals))
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
    fn formatting() {
        assert_eq!(format_tick(-30.0), "\u{2212}30");
        assert_eq!(format_tick(0.25), "0.25");
        assert_eq!(format_tick(-0.0000001), "0");
        assert_eq!(format_number(-1.5, 2), "\u{2212}1.50");
    }
}
