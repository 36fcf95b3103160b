//! The energy methods above 64 points: greedy, beam search and the sparse trellis on points and
//! graphs run on the wide path ([`crate::wide`]: no 64-bit masks), and every method's binary
//! tree gets its energy (HCC energy of points, Dasgupta's cost of a graph) from it. Jets stay at
//! 64 leaves (the Ginkgo likelihood's clusters are masks); at 64 points or fewer nothing here
//! runs ([`super::energy::Energy`] does, as before).
//!
//! Beam search and the sparse trellis's seeding beam are refused where their work
//! ([`crate::wide::beam::work`]) at [`SECONDS_PER_UNIT`] exceeds `board.max_search_seconds`
//! (default 60: a board run's other methods take seconds at these sizes, and one beam should
//! not take it past minutes). The reason names the estimate and the keys that change it.

use super::data::{Instance, InstanceData};
use super::methods::BoardMethod;
use super::BoardSection;
use crate::exact::human_seconds;
use crate::hierarchy::Hierarchy;
use crate::search::{default_beam_size, MAX_BEAM_SIZE};
use crate::wide::{self, PairModel};
use anyhow::{bail, Context, Result};

/// The most leaves of the mask path: above, points and graphs take the wide path.
pub const MASK_LEAVES: usize = 64;

/// Seconds of one unit of beam work ([`crate::wide::beam::work`]) on one core: above every
/// measured on the development machine (an AMD EPYC, shared, one thread: 11 to 57 ns at N = 200
/// to 2000, beams of 100 and 3N, both energies; 100 ns only at N = 100, a tenth of a second).
pub const SECONDS_PER_UNIT: f64 = 60e-9;

/// A points or graph instance's energy above [`MASK_LEAVES`] points.
pub enum WideEnergy {
    /// Points' HCC energy over their centred correlations, β = 1.
    Hcc(wide::Hcc),
    /// A graph's Dasgupta cost over its similarities, β = 1.
    Dasgupta(wide::Dasgupta),
}

/// Runs `f` on the energy's model, whatever its type.
macro_rules! with_model {
    ($e:expr, $m:ident => $body:expr) => {
        match $e {
            WideEnergy::Hcc($m) => $body,
            WideEnergy::Dasgupta($m) => $body,
        }
    };
}

impl WideEnergy {
    /// The energy of `inst` when it takes the wide path: points or a graph above
    /// [`MASK_LEAVES`] points (`None` otherwise).
    pub fn of(inst: &Instance) -> Result<Option<WideEnergy>> {
        let n = inst.n();
        if n <= MASK_LEAVES {
            return Ok(None);
        }
        Ok(match &inst.data {
            InstanceData::Jet(_) => None,
            InstanceData::Points { .. } => {
                let w = inst
                    .centred_correlations()
                    .context("points without correlations")?;
                Some(WideEnergy::Hcc(wide::Hcc::new(n, w, 1.0)?))
            }
            InstanceData::Graph { similarities, .. } => Some(WideEnergy::Dasgupta(
                wide::Dasgupta::new(n, similarities.clone(), 1.0)?,
            )),
        })
    }

    /// The metric it is reported as.
    pub fn metric(&self) -> &'static str {
        match self {
            WideEnergy::Hcc(_) => "hcc_energy",
            WideEnergy::Dasgupta(_) => "dasgupta_cost",
        }
    }

    /// The energy of a binary tree (`-log psi`, β = 1).
    pub fn value(&self, tree: &Hierarchy) -> Result<f64> {
        Ok(-with_model!(self, m => wide::energy::log_psi(m, tree))?)
    }

    /// The best tree `method` (greedy, beam or sparse) finds.
    pub fn best_tree(&self, method: BoardMethod, s: &BoardSection) -> Result<Hierarchy> {
        with_model!(self, m => best_tree(m, method, s))
    }
}

fn best_tree<M: PairModel>(m: &M, method: BoardMethod, s: &BoardSection) -> Result<Hierarchy> {
    let n = m.n_leaves();
    Ok(match method {
        BoardMethod::Greedy => wide::greedy::greedy(m, s.merge_score)?.tree,
        BoardMethod::Beam => wide::beam::beam(m, beam_size(n, s), s.merge_score)?
            .into_iter()
            .next()
            .context("beam search found no tree")?
            .tree,
        BoardMethod::Sparse => {
            let seeds: Vec<Hierarchy> = wide::beam::beam(m, s.sparse_seed_trees, s.merge_score)?
                .into_iter()
                .map(|f| f.tree)
                .collect();
            wide::sparse::sparse_map(m, &seeds)?.tree
        }
        other => bail!("{} does not run on the wide path", other.name()),
    })
}

/// The board's beam size for `n` points: `board.beam_size`, or the paper's rule.
pub fn beam_size(n: usize, s: &BoardSection) -> usize {
    s.beam_size.unwrap_or_else(|| default_beam_size(n))
}

/// Seconds of one core a beam of `b` states over `n` points takes by the cost model.
fn seconds(n: usize, b: usize) -> f64 {
    wide::beam::work(n, b) * SECONDS_PER_UNIT
}

/// Why beam search or the sparse trellis does not run on `n` points above [`MASK_LEAVES`]
/// (their estimated time exceeds `board.max_search_seconds`), or `None` when they run.
pub fn refusal(method: BoardMethod, n: usize, s: &BoardSection) -> Option<String> {
    let (b, what, key) = match method {
        BoardMethod::Beam => (beam_size(n, s), "beam search", "board.beam_size"),
        BoardMethod::Sparse => (
            s.sparse_seed_trees,
            "the sparse trellis's seeding beam",
            "board.sparse_seed_trees",
        ),
        _ => return None,
    };
    let secs = seconds(n, b);
    if n <= MASK_LEAVES || secs <= s.max_search_seconds {
        return None;
    }
    // The largest beam within the budget (the work grows with the beam).
    let (mut lo, mut hi) = (0usize, b.min(MAX_BEAM_SIZE));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if seconds(n, mid) <= s.max_search_seconds {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let fix = if lo == 0 {
        "raise board.max_search_seconds".to_string()
    } else {
        format!("set {key} to at most {lo}, or raise board.max_search_seconds")
    };
    Some(format!(
        "{what} of {b} states over N = {n} takes about {} of one core by the cost model, above board.max_search_seconds = {}; {fix}",
        human_seconds(secs),
        s.max_search_seconds
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ginkgo::Jet;

    fn section(extra: &str) -> BoardSection {
        toml::from_str(&format!("datasets = []\n{extra}")).unwrap()
    }

    fn instance(data: InstanceData) -> Instance {
        Instance {
            dataset: "d".into(),
            instance: "i".into(),
            data,
            labels: None,
            classes: Vec::new(),
            names: Vec::new(),
        }
    }

    fn points(n: usize) -> Instance {
        let x: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..4).map(|d| ((i * 7 + d * 3) % 11) as f64).collect())
            .collect();
        let similarities = super::super::data::correlation_similarities(&x);
        instance(InstanceData::Points { x, similarities })
    }

    #[test]
    fn beam_and_sparse_are_refused_only_above_the_budget_and_say_how_to_fit() {
        let s = section("");
        for n in [10, 64, 65, 300] {
            assert_eq!(refusal(BoardMethod::Beam, n, &s), None, "{n}");
            assert_eq!(refusal(BoardMethod::Sparse, n, &s), None, "{n}");
        }
        assert_eq!(refusal(BoardMethod::Greedy, 2000, &s), None);
        // 2000 points: a beam of 6000 takes far more than a minute; 100 seeds do not.
        let why = refusal(BoardMethod::Beam, 2000, &s).unwrap();
        assert!(
            why.contains("6000 states over N = 2000") && why.contains("board.beam_size to at most"),
            "{why}"
        );
        assert_eq!(refusal(BoardMethod::Sparse, 2000, &s), None);
        let most: usize = why
            .split("at most ")
            .nth(1)
            .and_then(|t| t.split(',').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(seconds(2000, most) <= 60.0 && seconds(2000, most + 1) > 60.0);
        let tight = section("max_search_seconds = 0.1\nsparse_seed_trees = 50");
        let why = refusal(BoardMethod::Sparse, 500, &tight).unwrap();
        assert!(why.contains("board.sparse_seed_trees"), "{why}");
        // At 64 points or fewer the mask path runs, whatever the budget.
        assert_eq!(refusal(BoardMethod::Beam, 64, &tight), None);
        let s = section("beam_size = 40");
        assert_eq!(beam_size(500, &s), 40);
    }

    #[test]
    fn points_above_64_take_the_wide_path_and_jets_stay_at_64() {
        let s = section("");
        let p = points(70);
        let e = WideEnergy::of(&p).unwrap().expect("points above 64");
        assert_eq!(e.metric(), "hcc_energy");
        for m in [BoardMethod::Greedy, BoardMethod::Beam, BoardMethod::Sparse] {
            assert_eq!(m.applies(&p, &s), Ok(()), "{}", m.name());
            let t = e.best_tree(m, &s).unwrap();
            assert!(t.is_binary() && t.n_leaves() == 70);
            assert!(e.value(&t).unwrap().is_finite());
        }
        assert!(WideEnergy::of(&points(64)).unwrap().is_none());
        let jet = Jet {
            name: "j".into(),
            n_leaves: 70,
            t_cut: 16.0,
            lam: 1.5,
            lam_root: 1.5,
            m_hard: 30.0,
            leaves: vec![[1.0, 0.1, 0.2, 0.3]; 70],
            truth_tree: None,
            truth_loglh: None,
            reference: None,
        };
        let j = instance(InstanceData::Jet(jet));
        assert!(WideEnergy::of(&j).unwrap().is_none());
        let why = BoardMethod::Greedy.applies(&j, &s).unwrap_err();
        assert!(why.contains("jets stay at 64"), "{why}");
    }
}
