//! Regression guard on the paper's Table 1: the full `configs/jets.toml` dataset (4430 jets), scored
//! through the library, must give the three mean log-likelihood differences within the config's
//! tolerance (0.10) of the paper's.

use rayon::prelude::*;
use std::path::PathBuf;
use trellis_lab::experiment::config::Config;
use trellis_lab::experiment::jets::{load_jets, score_jet, Table1};

#[test]
fn table1_differences_match_the_paper() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/jets.toml");
    let cfg = Config::load(&path).unwrap();
    let ds = load_jets(&cfg).unwrap();
    assert_eq!(ds.jets.len(), 4430);
    let scores: Vec<_> = ds
        .jets
        .par_iter()
        .map(|j| score_jet(j, &cfg.algorithms).unwrap())
        .collect();
    let t = Table1::from_scores(&scores);
    let e = cfg.expected.as_ref().unwrap();
    for (a, b, paper) in [
        ("trellis", "beam", e.trellis_minus_beam),
        ("trellis", "greedy", e.trellis_minus_greedy),
        ("beam", "greedy", e.beam_minus_greedy),
    ] {
        let ours = t.get(a, b).unwrap();
        assert_eq!(ours.n, 4430);
        assert!(
            (ours.mean - paper[0]).abs() <= e.tolerance,
            "{a} - {b}: ours {:.4}, paper {:.4}",
            ours.mean,
            paper[0]
        );
        // The exact MAP is never beaten.
        if a == "trellis" {
            assert!(scores.iter().all(|s| {
                s.trellis.as_ref().unwrap().log_likelihood + 1e-9
                    >= s.get(b).unwrap().log_likelihood
            }));
        }
    }
}
