//! Regression guard on the paper's Table 1: the full `configs/jets.toml` dataset (4430 jets), scored
//! through the library, must give the three mean log-likelihood differences within the tolerance
//! of the paper's values in `src/experiment/jets/expected.toml`.

use rayon::prelude::*;
use std::path::PathBuf;
use trellis_lab::experiment::check::expected_for;
use trellis_lab::experiment::config::load;
use trellis_lab::experiment::jets::{score_jet, Jets, JetsConfig, Table1};
use trellis_lab::experiment::methods::Method;
use trellis_lab::experiment::Registry;

#[test]
fn table1_differences_match_the_paper() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/jets.toml");
    let cfg = load(&Registry::builtin(), &path).unwrap();
    let jc: JetsConfig = cfg.typed().unwrap();
    let (ds, dropped) = jc
        .jets
        .load(cfg.experiment.seed, &cfg.experiment.name)
        .unwrap();
    assert!(dropped.is_none());
    assert_eq!(ds.jets.len(), 4430);
    let scores: Vec<_> = ds
        .jets
        .par_iter()
        .map(|j| score_jet(j, &jc.methods).unwrap())
        .collect();
    let t = Table1::from_scores(&scores);
    let expected = expected_for(&Jets, "jets").unwrap();
    let paper = |id: &str| {
        expected
            .iter()
            .find(|e| e.id == id && e.source.starts_with("paper"))
            .unwrap_or_else(|| panic!("no paper value for {id}"))
    };
    for (a, b) in [
        (Method::Trellis, Method::Beam),
        (Method::Trellis, Method::Greedy),
        (Method::Beam, Method::Greedy),
    ] {
        let ours = t.get(a, b).unwrap();
        let p = paper(&format!("table1.{}-{}.mean", a.name(), b.name()));
        assert_eq!(ours.n, 4430);
        assert!(
            (ours.mean - p.value).abs() <= p.tolerance,
            "{a:?} - {b:?}: ours {:.4}, paper {:.4}",
            ours.mean,
            p.value
        );
        // The exact MAP is never beaten.
        if a == Method::Trellis {
            assert!(scores.iter().all(|s| {
                s.get(Method::Trellis).unwrap().log_likelihood + 1e-9
                    >= s.get(b).unwrap().log_likelihood
            }));
        }
    }
}
