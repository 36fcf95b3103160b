//! Limits before work: every size-like config key or flag is checked against a rough cost model
//! before anything is allocated, and an over-large value is a one-line error that says what it
//! would cost. The per-unit costs are measured on the 2-core development machine with the
//! repository's configs (their manifests' timings), so they are orders of magnitude, not promises.

/// What one unit of a size key costs.
#[derive(Clone, Copy, Debug)]
pub struct UnitCost {
    /// What one unit is, e.g. "jet" or "instance of 12 points".
    pub unit: &'static str,
    /// Memory held per unit, in bytes (0 when units stream through).
    pub bytes: f64,
    /// Time per unit, in seconds on one core.
    pub seconds: f64,
}

/// `Err` naming `key`, its cost and the fix when `value` is above `limit`.
pub fn check_size(key: &str, value: usize, limit: usize, cost: UnitCost) -> Result<(), String> {
    if value <= limit {
        return Ok(());
    }
    Err(format!(
        "{key} = {value} is more than the limit of {limit}: it would take {} (one {} costs {}); lower it",
        describe(value as f64, cost),
        cost.unit,
        describe(1.0, cost)
    ))
}

/// "about 9.3 GiB of memory and 2.1 days" for `n` units.
fn describe(n: f64, c: UnitCost) -> String {
    let mut parts = Vec::new();
    if c.bytes > 0.0 {
        parts.push(format!("about {} of memory", bytes(n * c.bytes)));
    }
    if c.seconds > 0.0 {
        parts.push(format!("about {}", duration(n * c.seconds)));
    }
    if parts.is_empty() {
        "nothing measurable".into()
    } else {
        parts.join(" and ")
    }
}

/// Bytes in binary units: `512 B`, `1.5 KiB`, ... `3.0 PiB`.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut k = 0;
    while v >= 1024.0 && k + 1 < UNITS.len() {
        v /= 1024.0;
        k += 1;
    }
    if k == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[k])
    }
}

/// Seconds in the largest sensible unit: `3 µs`, `1.2 s`, `4.0 min`, `2.1 h`, `3.5 days`,
/// `12 years`.
pub fn duration(s: f64) -> String {
    const YEAR: f64 = 365.25 * 86400.0;
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 86400.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s < YEAR {
        format!("{:.1} days", s / 86400.0)
    } else if s < 1000.0 * YEAR {
        format!("{:.1} years", s / YEAR)
    } else {
        format!("{:.1e} years", s / YEAR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_state_the_cost() {
        let c = UnitCost {
            unit: "jet",
            bytes: 1024.0,
            seconds: 1e-3,
        };
        assert!(check_size("jets.n_jets", 10, 10, c).is_ok());
        let e = check_size("jets.n_jets", 1_000_000_000_000, 1_000_000, c).unwrap_err();
        assert!(
            e.contains("jets.n_jets = 1000000000000")
                && e.contains("limit of 1000000")
                && e.contains("931.3 TiB of memory")
                && e.contains("31.7 years")
                && e.contains("lower it"),
            "{e}"
        );
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(duration(90.0), "1.5 min");
        assert_eq!(duration(2e-6), "2 µs");
    }
}
