//! The MAP-tie count ([`crate::exact::map_ties`]) in the lane trellis's own pass: beside each
//! slot's running MAP, the splits that may still tie with the parent's final MAP value are
//! kept as candidates (with their exact `log psi`), and once the parent's MAP value is known
//! they are counted by [`crate::exact::map_ties`]'s rule, operation for operation, so the
//! count and magnitude of every cluster are the second pass's.
//!
//! **Which splits are kept.** A split ties when `v >= B - tol max(|B - MAP(A) - MAP(B)| + M,
//! |B|, 1)` (`B` the parent's final MAP value, `M` the children's magnitudes). That floor
//! grows with `B` (its slope is at least `1 - tol > 0`), and `B` is at least a slot's running
//! best `b`, so a tying split has `v >= b - tol (|b| + |MAP(A)| + |MAP(B)| + M + 1)`, with
//! `M` at most twice the largest magnitude of the finished clusters. The lanes keep every
//! split whose upper bound reaches that (doubled, and widened by `1e-15` relative for the
//! roundings of the floor): a superset of the tying splits. Tolerances of 1/2 or more (where
//! the floor may not grow with `B`, and rounding wants a margin) are left to the second pass.

/// One split that may tie: its children and its exact `log psi`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cand {
    pub(crate) a: u64,
    pub(crate) b: u64,
    pub(crate) psi: f64,
}

/// What the tie count reads of the finished clusters.
#[derive(Clone, Copy)]
pub(crate) struct TieTables<'a> {
    /// The relative tolerance (in `[0, 1)`).
    pub(crate) tol: f64,
    /// The largest magnitude of any finished cluster.
    pub(crate) mag_max: f64,
    /// Every finished cluster's tied-tree count and magnitude, by bitmask.
    pub(crate) count: &'a [u128],
    pub(crate) mag: &'a [f64],
}

impl TieTables<'_> {
    /// The window below a slot's best `b` within which a split is kept, given the children's
    /// MAP values' magnitude `|MAP(A)| + |MAP(B)|` (see the module docs).
    #[inline(always)]
    pub(crate) fn window_factor(&self) -> f64 {
        2.0 * self.tol + 1e-15
    }
}

/// Whether the single-pass count applies to tolerance `tol` (already clamped to `>= 0`).
pub(crate) fn single_pass(tol: f64) -> bool {
    tol < 0.5
}

/// A cluster's tied-tree count and magnitude from its candidates, by
/// [`crate::exact::map_ties`]'s rule; `child(i)` gives a child's MAP value, count and
/// magnitude.
pub(crate) fn count(
    best: f64,
    tol: f64,
    cands: &[Cand],
    child: impl Fn(u64) -> (f64, u128, f64),
) -> (u128, f64) {
    if !best.is_finite() {
        return (0, 0.0);
    }
    let scale = best.abs().max(1.0);
    let (mut count, mut magnitude) = (0u128, 0.0f64);
    for c in cands {
        let ((ma, ca, ga), (mb, cb, gb)) = (child(c.a), child(c.b));
        if ca == 0 || cb == 0 || !c.psi.is_finite() {
            continue;
        }
        let m = (best - ma - mb).abs() + ga + gb;
        let floor = best - tol * m.max(scale);
        if c.psi + ma + mb >= floor {
            count = count.saturating_add(ca.saturating_mul(cb));
            magnitude = magnitude.max(m);
        }
    }
    (count, magnitude)
}
