//! The numbers of Figure 7, read off `sparse.parquet`.

use super::figures::{read, Row};
use super::run::BUILDERS;
use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use anyhow::Result;

/// A sparse trellis is "near the exact one" when its mean MAP − greedy is within this of the
/// exact trellis's.
pub const NEAR_EXACT: f64 = 0.02;

/// The sparsity index at which the paper says both sparse trellises pass beam search ("about
/// 2 %").
pub const PAPER_PASS_SPARSITY: f64 = 0.02;

/// Where a builder's trellises first reach a level.
struct Reach {
    /// Sparsity index of the first trellis that reaches it.
    sparsity: f64,
    /// Its seed trees.
    seed_trees: u64,
    /// Sparsity index of the trellis before it (0 if it is the first).
    before: f64,
}

/// The first of `rows` (one builder's, in seed-tree order) whose mean MAP − greedy reaches
/// `level`, counting only trellises that encode a finite-likelihood tree for all `n_jets`.
fn first_reaching(rows: &[&Row], level: f64, n_jets: u64) -> Option<Reach> {
    let i = rows
        .iter()
        .position(|r| r.n_finite == n_jets && r.mean >= level)?;
    Some(Reach {
        sparsity: rows[i].sparsity,
        seed_trees: rows[i].seed_trees,
        before: if i == 0 { 0.0 } else { rows[i - 1].sparsity },
    })
}

fn display(builder: &str) -> &str {
    match builder {
        "simulator" => "Sim. trellis",
        "beam_search" => "BS trellis",
        other => other,
    }
}

/// `fig7.exact_minus_greedy` and `fig7.beam_minus_greedy` (mean over the test jets); per
/// builder, `fig7.<builder>.seeds_<k>.mean_map_minus_greedy` for every budget,
/// `.passes_beam` (1 when some trellis reaches beam search's mean, with a finite MAP on every
/// test jet), then `.sparsity_to_pass_beam` and `.seed_trees_to_pass_beam` of the first one,
/// `.passes_beam_near_2_percent` (1 when the paper's 2 % lies between the sparsity of the last
/// trellis below beam search and of the first that reaches it) and `.sparsity_to_near_exact`
/// (the first within [`NEAR_EXACT`] of the exact trellis); and `fig7.bs_nears_exact_first` (1
/// when the beam-search trellis gets near the exact one at a smaller sparsity than the
/// simulator trellis).
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let n_jets: u64 = results.fact("n_test_jets")?;
    let (rows, exact, beam) = read(results)?;
    let mut out = vec![
        Measure::new(
            "fig7.exact_minus_greedy",
            "Figure 7: exact trellis − greedy, mean over the test jets",
            exact,
        ),
        Measure::new(
            "fig7.beam_minus_greedy",
            "Figure 7: beam search − greedy, mean over the test jets",
            beam,
        ),
    ];
    let mut near_exact = Vec::new();
    for b in BUILDERS {
        let name = display(b);
        let mut mine: Vec<&Row> = rows.iter().filter(|r| r.builder == b).collect();
        mine.sort_by_key(|r| r.seed_trees);
        for r in &mine {
            out.push(Measure::new(
                format!("fig7.{b}.seeds_{}.mean_map_minus_greedy", r.seed_trees),
                format!(
                    "Figure 7: {name} from {} seed trees, mean MAP − greedy",
                    r.seed_trees
                ),
                r.mean,
            ));
        }
        let pass = first_reaching(&mine, beam, n_jets);
        out.push(Measure::new(
            format!("fig7.{b}.passes_beam"),
            format!("Figure 7: the {name} reaches beam search"),
            pass.is_some() as u8 as f64,
        ));
        if let Some(p) = &pass {
            out.push(Measure::new(
                format!("fig7.{b}.sparsity_to_pass_beam"),
                format!("Figure 7: sparsity index at which the {name} first reaches beam search"),
                p.sparsity,
            ));
            out.push(Measure::new(
                format!("fig7.{b}.seed_trees_to_pass_beam"),
                format!("Figure 7: seed trees with which the {name} first reaches beam search"),
                p.seed_trees as f64,
            ));
        }
        out.push(Measure::new(
            format!("fig7.{b}.passes_beam_near_2_percent"),
            format!("Figure 7: the {name} passes beam search between budgets around sparsity 2 %"),
            pass.is_some_and(|p| p.before < PAPER_PASS_SPARSITY && PAPER_PASS_SPARSITY <= p.sparsity)
                as u8 as f64,
        ));
        let near = first_reaching(&mine, exact - NEAR_EXACT, n_jets).map(|r| r.sparsity);
        if let Some(s) = near {
            out.push(Measure::new(
                format!("fig7.{b}.sparsity_to_near_exact"),
                format!("Figure 7: sparsity index at which the {name} first comes within {NEAR_EXACT} of the exact trellis"),
                s,
            ));
        }
        near_exact.push(near);
    }
    let bs_first = match (near_exact[0], near_exact[1]) {
        (Some(sim), Some(bs)) => bs < sim,
        (None, Some(_)) => true,
        _ => false,
    };
    out.push(Measure::new(
        "fig7.bs_nears_exact_first",
        "Figure 7: the BS trellis comes near the exact one at a smaller sparsity than the Sim. trellis",
        bs_first as u8 as f64,
    ));
    Ok(out)
}
