//! The board's exact scoring as the user sees it: its time in a column of its own in
//! `board.parquet` ([`SECONDS_COLUMN`]), an estimate printed before the jobs start when it is
//! large ([`announce`]), and a progress bar while a posterior rank is counted ([`RankBar`]).

use super::data::{Instance, InstanceData};
use super::methods::BoardMethod;
use super::BoardSection;
use crate::experiment::exact_limit::{rank_seconds, ExactModel};
use crate::exact::human_seconds;
use std::time::{Duration, Instant};

/// The column of a job's exact-scoring seconds (its tree's log posterior and rank, the trellis's
/// MAP tie count, and the instance's full trellis when this job had to build it), on every row
/// of the job (null where the trellis does not run); the method's own time stays in `seconds`.
/// A column, not a metric row, so that the values stay the same run to run.
pub const SECONDS_COLUMN: &str = "exact_scoring_seconds";

/// Estimates above this many seconds are printed before the jobs start.
const ANNOUNCE_SECONDS: f64 = 30.0;

/// The energy model of an instance the trellis runs on.
fn model_of(inst: &Instance) -> ExactModel {
    match inst.data {
        InstanceData::Jet(_) => ExactModel::Ginkgo,
        _ => ExactModel::Pairwise,
    }
}

/// Seconds of exact scoring the jobs may take, by the cost model: per instance within
/// `max_exact_leaves`, one full trellis (unless the trellis method builds it, as its own
/// time), the MAP tie count, and a rank counted up to `rank_cap` trees per job.
pub fn estimate(insts: &[Instance], jobs: &[(usize, BoardMethod)], s: &BoardSection) -> f64 {
    let mut total = 0.0;
    for (i, inst) in insts.iter().enumerate() {
        let n = inst.n();
        if n > s.max_exact_leaves || n > 64 {
            continue;
        }
        let mine: Vec<BoardMethod> = jobs
            .iter()
            .filter(|(j, _)| *j == i)
            .map(|&(_, m)| m)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let model = model_of(inst);
        if mine.contains(&BoardMethod::Trellis) {
            total += model.ties_seconds(n);
        } else {
            total += model.trellis_seconds(n);
        }
        total += mine.len() as f64 * rank_seconds(n, s.rank_cap);
    }
    total
}

/// Prints the estimate of the exact scoring when it is above [`ANNOUNCE_SECONDS`].
pub fn announce(insts: &[Instance], jobs: &[(usize, BoardMethod)], s: &BoardSection) {
    let secs = estimate(insts, jobs, s);
    if secs <= ANNOUNCE_SECONDS {
        return;
    }
    let within: Vec<usize> = insts
        .iter()
        .map(Instance::n)
        .filter(|&n| n <= s.max_exact_leaves)
        .collect();
    eprintln!(
        "exact scoring: up to about {} by the cost model, besides the methods: {} instances of up to {} leaves get their full trellis once (shared by every method's log posterior and rank), the count of trees tied at the MAP, and each tree's posterior rank counted up to board.rank_cap = {} trees above it (about {} each at N = {} when the count reaches the cap); its seconds go to the {SECONDS_COLUMN} column",
        human_seconds(secs),
        within.len(),
        within.iter().max().copied().unwrap_or(0),
        s.rank_cap,
        human_seconds(rank_seconds(s.max_exact_leaves, s.rank_cap)),
        s.max_exact_leaves,
    );
}

/// A bar of the trees counted above a tree for its rank, shown once counting has run for half
/// a second (hidden where stderr is not a terminal, as every progress bar).
pub struct RankBar<'a> {
    bars: &'a indicatif::MultiProgress,
    cap: u64,
    started: Option<Instant>,
    bar: Option<indicatif::ProgressBar>,
}

impl<'a> RankBar<'a> {
    /// A bar to be added under `bars`, out of `cap` trees.
    pub fn new(bars: &'a indicatif::MultiProgress, cap: u64) -> RankBar<'a> {
        RankBar {
            bars,
            cap,
            started: None,
            bar: None,
        }
    }

    /// `count` trees counted so far.
    pub fn tell(&mut self, count: u64) {
        let started = *self.started.get_or_insert_with(Instant::now);
        if self.bar.is_none() && started.elapsed() > Duration::from_millis(500) {
            let bar = crate::experiment::progress_bar(self.cap, "trees counted above (rank)");
            self.bar = Some(self.bars.add(bar));
        }
        if let Some(b) = &self.bar {
            b.set_position(count);
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
            self.bars.remove(&b);
        }
    }
}
