//! The exact-trellis limit of a config written for a user's file (`init`, `cluster`): the
//! largest N the exact trellis runs on, chosen from the sizes of the file's instances and from
//! this machine, by the trellis's cost model ([`crate::exact::TrellisCost`]):
//!
//! - at most [`MOST`] (20: the board's own limit; the trellis does N = 20 in about 4 s for jets
//!   and 12 s for points or graphs on 2 cores, and each leaf more costs 3× the time and 2× the
//!   memory);
//! - the tables fit in half the memory this process may use ([`crate::memory::usable_bytes`]);
//! - the exact work on all the file's instances within the limit (trellis, MAP tie count and, on
//!   the board, the posterior ranks of every method's tree) takes at most [`BUDGET_SECONDS`] by
//!   the cost model.
//!
//! The value and the reason are written into the config as a comment.

use crate::exact::{human_bytes, human_seconds, TrellisCost};

/// The largest limit chosen (the board accepts at most 20).
pub const MOST: usize = 20;

/// The most exact work, in seconds by the cost model, that a chosen limit allows on one file.
pub const BUDGET_SECONDS: f64 = 600.0;

/// A split of the pairwise energies (HCC, Dasgupta) through the split loop, against one of the
/// Ginkgo model in eight lanes (the cost model's unit): measured 12 to 20 s at N = 20 on 2 cores
/// against 4 s.
const PAIRWISE_FACTOR: f64 = 3.0;

/// Counting the trees tied at the MAP against building the trellis (measured at N = 19–20 on 2
/// cores: 4.3 s against 2.5 s for a jet, where the trellis runs in eight lanes; 0.3–0.5 of the
/// trellis for points).
const TIES_FACTOR_GINKGO: f64 = 1.7;
const TIES_FACTOR_PAIRWISE: f64 = 0.5;

/// The energy the exact trellis runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExactModel {
    /// A jet's Ginkgo likelihood (eight SIMD lanes).
    Ginkgo,
    /// The HCC energy of points or Dasgupta's cost of a graph (the split loop).
    Pairwise,
}

impl ExactModel {
    fn stat_bytes(self) -> usize {
        match self {
            ExactModel::Ginkgo => std::mem::size_of::<crate::model::ginkgo::GinkgoStat>(),
            ExactModel::Pairwise => {
                std::mem::size_of::<crate::model::correlation::CorrelationStat>()
            }
        }
    }

    /// Seconds to build the full trellis over `n` leaves, by the cost model.
    pub fn trellis_seconds(self, n: usize) -> f64 {
        let s = TrellisCost::of(n, self.stat_bytes()).seconds;
        match self {
            ExactModel::Ginkgo => s,
            ExactModel::Pairwise => s * PAIRWISE_FACTOR,
        }
    }

    /// Seconds to count the trees tied at the MAP over `n` leaves.
    pub fn ties_seconds(self, n: usize) -> f64 {
        let s = TrellisCost::of(n, self.stat_bytes()).seconds;
        match self {
            ExactModel::Ginkgo => s * TIES_FACTOR_GINKGO,
            ExactModel::Pairwise => s * PAIRWISE_FACTOR * TIES_FACTOR_PAIRWISE,
        }
    }

    /// Bytes of the trellis, the tie count's records and the statistics table over `n` leaves.
    pub fn bytes(self, n: usize) -> f64 {
        let subsets = 2f64.powi(n as i32);
        TrellisCost::of(n, self.stat_bytes()).bytes + subsets * (64.0 + self.stat_bytes() as f64)
    }
}

/// Seconds to count at most `cap` trees above a tree over `n` leaves (a posterior rank): the
/// core crate's cost model, which the Python package's `Trellis.rank` checks its cap by.
pub fn rank_seconds(n: usize, cap: u64) -> f64 {
    crate::exact::rank::seconds(n, cap)
}

/// What the exact trellis does on each instance within the limit.
#[derive(Clone, Copy, Debug)]
pub enum Work {
    /// The board: the trellis and its tie count once, and a rank of each of `trees` trees
    /// counted up to `rank_cap` trees above it.
    Board {
        /// Trees ranked per instance (the methods that apply).
        trees: usize,
        /// Board `rank_cap`.
        rank_cap: u64,
    },
    /// The jets kind: the trellis once.
    Jets,
}

impl Work {
    /// Seconds of exact work on one instance of `n` leaves.
    pub fn seconds(self, model: ExactModel, n: usize) -> f64 {
        match self {
            Work::Board { trees, rank_cap } => {
                model.trellis_seconds(n)
                    + model.ties_seconds(n)
                    + trees as f64 * rank_seconds(n, rank_cap)
            }
            Work::Jets => model.trellis_seconds(n),
        }
    }
}

/// The chosen limit and why, in words for a config comment.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactLimit {
    /// The largest N the exact trellis runs on.
    pub limit: usize,
    /// Why, in one or two sentences (no newline).
    pub why: String,
    /// What it means for the file's instances, in words for the terminal (empty when the file
    /// could not be sized or the limit was given).
    pub file: String,
}

/// The limit for instances of `sizes` leaves (see the [module docs](self)), with `usable`
/// bytes of memory (`None`: the system tells no limit).
pub fn choose(sizes: &[usize], model: ExactModel, work: Work, usable: Option<u64>) -> ExactLimit {
    let fits = |n: usize| usable.is_none_or(|u| model.bytes(n) <= u as f64 / 2.0);
    let machine = (1..=MOST).rev().find(|&n| fits(n)).unwrap_or(1);
    let total = |l: usize| -> f64 {
        sizes
            .iter()
            .filter(|&&n| n <= l)
            .map(|&n| work.seconds(model, n))
            .sum()
    };
    let limit = (1..=machine)
        .rev()
        .find(|&l| total(l) <= BUDGET_SECONDS)
        .unwrap_or(1);
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let within = sizes.iter().filter(|&&n| n <= limit).count();
    let at = |n: usize| {
        let (t, b) = (
            human_seconds(work.seconds(model, n)),
            human_bytes(model.bytes(n)),
        );
        let about = |s: String| {
            if s.starts_with("far") {
                s
            } else {
                format!("about {s}")
            }
        };
        format!("{} and {} at N = {n}", about(t), about(b))
    };
    let bound = if limit == MOST {
        format!("{MOST}, the most chosen for any file ({})", at(MOST))
    } else if limit == machine {
        format!(
            "{limit}, the most whose tables fit in half of this machine's memory ({})",
            at(limit)
        )
    } else {
        format!(
            "{limit}: the exact work on this file's instances up to it takes about {} by the cost model, within the {} allowed",
            human_seconds(total(limit)),
            human_seconds(BUDGET_SECONDS)
        )
    };
    let file = if sizes.is_empty() {
        "the file's instances could not be sized (running it says why)".to_string()
    } else if largest <= limit {
        format!(
            "every instance of this file ({} of up to {largest} leaves) is within it",
            sizes.len()
        )
    } else {
        format!(
            "{within} of this file's {} instances are within it (the largest has {largest} leaves, {})",
            sizes.len(),
            at(largest)
        )
    };
    let said = if sizes.is_empty() {
        String::new()
    } else if largest <= limit {
        format!(
            "the exact work on this file ({} instance{} of up to {largest} points) takes about {}",
            sizes.len(),
            if sizes.len() == 1 { "" } else { "s" },
            human_seconds(total(limit))
        )
    } else if within == 0 {
        format!(
            "this file's {} of {largest} points {} above it ({}), so the exact trellis does not run",
            if sizes.len() == 1 { "instance" } else { "instances, the largest" },
            if sizes.len() == 1 { "is" } else { "are" },
            at(largest)
        )
    } else {
        format!(
            "{within} of this file's {} instances are within it (about {}); the largest, of {largest} points, is not ({})",
            sizes.len(),
            human_seconds(total(limit)),
            at(largest)
        )
    };
    ExactLimit {
        limit,
        why: format!("{bound}; {file}."),
        file: said,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: Work = Work::Board {
        trees: 10,
        rank_cap: 1_000_000,
    };

    #[test]
    fn small_files_get_the_most_and_large_memory_or_time_less() {
        let gib = 1u64 << 30;
        let l = choose(&[9, 12], ExactModel::Pairwise, BOARD, Some(24 * gib));
        assert_eq!(l.limit, MOST);
        assert!(
            l.why.contains("every instance") && l.why.contains("up to 12"),
            "{}",
            l.why
        );
        // 13-leaf jets: the limit covers them (the jets kind runs unedited).
        let l = choose(&[13, 5], ExactModel::Ginkgo, Work::Jets, Some(24 * gib));
        assert!(l.limit >= 13, "{l:?}");
        // A small machine: the memory bounds it.
        let l = choose(&[20], ExactModel::Pairwise, BOARD, Some(64 << 20));
        assert!(l.limit < 20 && model_fits(l.limit, 64 << 20), "{l:?}");
        assert!(
            l.why.contains("memory") && l.why.contains("0 of this file's 1"),
            "{}",
            l.why
        );
        // Many large instances: the time budget bounds it, and the total is within it.
        let many = vec![20; 200];
        let l = choose(&many, ExactModel::Ginkgo, Work::Jets, Some(24 * gib));
        assert!(l.limit < 20, "{l:?}");
        let spent: f64 = many
            .iter()
            .filter(|&&n| n <= l.limit)
            .map(|&n| Work::Jets.seconds(ExactModel::Ginkgo, n))
            .sum();
        assert!(spent <= BUDGET_SECONDS);
        // No limit told: only the board's and the budget's.
        assert_eq!(choose(&[3], ExactModel::Ginkgo, BOARD, None).limit, MOST);
    }

    fn model_fits(n: usize, bytes: u64) -> bool {
        ExactModel::Pairwise.bytes(n) <= bytes as f64 / 2.0
    }

    #[test]
    fn the_cost_model_grows_by_leaf() {
        for m in [ExactModel::Ginkgo, ExactModel::Pairwise] {
            let r = m.trellis_seconds(19) / m.trellis_seconds(18);
            assert!((2.5..3.5).contains(&r), "{m:?}: {r}");
            assert!(m.bytes(19) > 1.9 * m.bytes(18));
        }
        assert!(ExactModel::Pairwise.trellis_seconds(20) > ExactModel::Ginkgo.trellis_seconds(20));
        assert!((rank_seconds(20, 1_000_000) - 0.2).abs() < 1e-12);
    }
}
