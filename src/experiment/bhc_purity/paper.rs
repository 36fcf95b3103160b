//! Heller & Ghahramani (2005), Table 1: dendrogram purity, mean ± standard error over
//! repetitions, of single, complete and average linkage and BHC.
//!
//! These values are transcribed from the published table without a copy at hand; the paper's
//! text could not be read here to confirm them (experiments/bhc_purity/README.md says what was and was not
//! confirmed).

/// The paper's rows (data sets), as `[[bhc_purity.datasets]] paper = ...` names them.
pub const PAPER_ROWS: [&str; 5] = ["synthetic", "newsgroups", "spambase", "digits", "fglass"];

/// `(row, method, mean, s.e.)`, methods as [`super::METHODS`] names them.
pub const PAPER: &[(&str, &str, f64, f64)] = &[
    ("synthetic", "single", 0.599, 0.033),
    ("synthetic", "complete", 0.634, 0.024),
    ("synthetic", "average", 0.668, 0.040),
    ("synthetic", "bhc", 0.828, 0.025),
    ("newsgroups", "single", 0.275, 0.001),
    ("newsgroups", "complete", 0.315, 0.008),
    ("newsgroups", "average", 0.282, 0.002),
    ("newsgroups", "bhc", 0.465, 0.016),
    ("spambase", "single", 0.598, 0.017),
    ("spambase", "complete", 0.699, 0.017),
    ("spambase", "average", 0.668, 0.019),
    ("spambase", "bhc", 0.728, 0.029),
    ("digits", "single", 0.224, 0.004),
    ("digits", "complete", 0.299, 0.006),
    ("digits", "average", 0.342, 0.005),
    ("digits", "bhc", 0.393, 0.015),
    ("fglass", "single", 0.478, 0.009),
    ("fglass", "complete", 0.476, 0.009),
    ("fglass", "average", 0.491, 0.009),
    ("fglass", "bhc", 0.467, 0.011),
];

/// The paper's (mean, s.e.) for `row` and `method`, if it has them.
pub fn paper_value(row: &str, method: &str) -> Option<(f64, f64)> {
    PAPER
        .iter()
        .find(|(r, m, _, _)| *r == row && *m == method)
        .map(|&(_, _, mean, se)| (mean, se))
}
