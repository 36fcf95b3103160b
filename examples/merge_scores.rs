//! Greedy and beam search by each merge's own energy (the papers' rule) and by the revenue
//! form (`MergeScore::Revenue`), against average linkage, on every board instance of a config
//! whose energy is Dasgupta's cost or HCC (up to 64 points): the energy each finds, and how often
//! each is at least as good as average linkage (beam) or within 25 % of it (greedy).
//!
//! ```sh
//! cargo run --release --example merge_scores -- configs/board.toml
//! ```

use trellis_lab::experiment::board::data::instances;
use trellis_lab::experiment::board::energy::Energy;
use trellis_lab::experiment::board::methods::{build, BoardMethod};
use trellis_lab::experiment::board::BoardConfig;
use trellis_lab::experiment::{config, Registry};
use trellis_lab::search::{
    beam_search_scored, default_beam_size, greedy_scored, Dedup, MergeScore,
};

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("configs/board.toml".into());
    let cfg = config::load(&Registry::builtin(), std::path::Path::new(&path))?;
    let board: BoardConfig = cfg.typed()?;
    let insts = instances(&board.board.datasets, cfg.experiment.seed)?;
    println!("dataset instance n metric avg greedy greedy_rev beam beam_rev");
    let mut tally = std::collections::BTreeMap::<String, [usize; 5]>::new();
    for inst in &insts {
        let Some(energy) = Energy::of(inst)? else {
            continue;
        };
        if matches!(energy, Energy::Ginkgo(_)) {
            continue;
        }
        let avg = build(BoardMethod::AverageLinkage, inst, &board.board, 1)?
            .tree
            .to_tree()?;
        let avg = energy.value(&avg);
        let n = inst.n();
        let run = |score: MergeScore| -> anyhow::Result<(f64, f64)> {
            let (g, b) = match &energy {
                Energy::Hcc(m) => (
                    greedy_scored(m, score)?.tree,
                    beam_search_scored(m, default_beam_size(n), Dedup::Clusters, score)?[0]
                        .tree
                        .clone(),
                ),
                Energy::Dasgupta(m) => (
                    greedy_scored(m, score)?.tree,
                    beam_search_scored(m, default_beam_size(n), Dedup::Clusters, score)?[0]
                        .tree
                        .clone(),
                ),
                Energy::Ginkgo(_) => unreachable!(),
            };
            Ok((energy.value(&g), energy.value(&b)))
        };
        let (g, b) = run(MergeScore::Potential)?;
        let (gr, br) = run(MergeScore::Revenue)?;
        println!(
            "{} {} {n} {} {avg:.4} {g:.4} {gr:.4} {b:.4} {br:.4}",
            inst.dataset,
            inst.instance,
            energy.metric()
        );
        let t = tally
            .entry(format!("{} ({})", inst.dataset, energy.metric()))
            .or_default();
        let tol = 1e-9 * avg.abs().max(1.0);
        t[0] += 1;
        t[1] += (b <= avg + tol) as usize;
        t[2] += (br <= avg + tol) as usize;
        t[3] += (g <= 1.25 * avg + tol) as usize;
        t[4] += (gr <= 1.25 * avg + tol) as usize;
    }
    println!("\ndataset: instances, beam <= avg (potential, revenue), greedy <= 1.25 avg (potential, revenue)");
    for (k, t) in tally {
        println!("{k}: {} | {} {} | {} {}", t[0], t[1], t[2], t[3], t[4]);
    }
    Ok(())
}
