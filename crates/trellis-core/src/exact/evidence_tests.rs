//! The λ fits: the evidence against enumeration of all trees, each fit against a fine grid of
//! its own objective, the bounds, determinism over thread counts, the one-line errors, and what
//! each potential recovers on jets drawn from the Ginkgo generator.

use super::*;
use crate::data::ginkgo::{generate_dataset, GinkgoParams};
use crate::model::log_add_exp;
use crate::subset::Subset;

const BOTH: [Likelihood; 2] = [Likelihood::PaperEra, Likelihood::Generator];

/// `n_jets` jets of `lo..=hi` leaves from the generator at rate `lambda` and root scale `root`.
fn jets_from(
    lambda: f64,
    root: f64,
    n_jets: usize,
    lo: usize,
    hi: usize,
    seed: u64,
) -> (Vec<GinkgoModel>, Vec<Tree>) {
    let params = GinkgoParams {
        lambda,
        lambda_root: lambda,
        root_scale: root,
        ..GinkgoParams::qcd()
    };
    let ds = generate_dataset(&params, n_jets, lo, hi, seed, 1_000_000, "fit").unwrap();
    let models = ds.jets.iter().map(|j| j.model().unwrap()).collect();
    let trees = ds.jets.iter().map(|j| j.truth().unwrap()).collect();
    (models, trees)
}

/// QCD jets (λ = 1.5, root scale 900).
fn jets(n_jets: usize, lo: usize, hi: usize, seed: u64) -> (Vec<GinkgoModel>, Vec<Tree>) {
    jets_from(1.5, 900.0, n_jets, lo, hi, seed)
}

/// The largest value of `f` on a grid of 2001 points of `log λ` over `[lo, hi]` (bounds exact).
fn grid_max(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    (0..=2000)
        .map(|k| match k {
            0 => lo,
            2000 => hi,
            k => (lo.ln() + (hi / lo).ln() * k as f64 / 2000.0).exp(),
        })
        .map(|l| (l, f(l)))
        .fold(
            (f64::NAN, f64::NEG_INFINITY),
            |b, x| if x.1 > b.1 { x } else { b },
        )
}

/// Two fits with the same bits (NaN standard errors included).
fn same(a: &LambdaFit, b: &LambdaFit) {
    let bits = |f: &LambdaFit| {
        (
            f.lambda.to_bits(),
            f.objective.to_bits(),
            f.std_error.to_bits(),
            f.evaluations,
            f.jets_used,
            f.jets_left_out,
            f.at_bound,
        )
    };
    assert_eq!(bits(a), bits(b), "{a:?} vs {b:?}");
}

/// `log Z` of one jet under `likelihood` at `lambda`, by the trellis.
fn log_z(likelihood: Likelihood, m: &GinkgoModel, lambda: f64) -> f64 {
    under(likelihood, m, lambda, 0, |x| Ok(x.log_z(12).unwrap())).unwrap()
}

/// `log p(tree)` under `likelihood` at `lambda`.
fn log_p(likelihood: Likelihood, m: &GinkgoModel, t: &Tree, lambda: f64) -> f64 {
    under(likelihood, m, lambda, 0, |x| Ok(x.tree_log_likelihood(t))).unwrap()
}

#[test]
fn the_evidence_is_the_sum_over_every_tree() {
    let (models, _) = jets(12, 3, 7, 70);
    let mut compared = 0;
    for likelihood in BOTH {
        for m in &models {
            let n = m.leaves().len();
            let trees = Tree::enumerate_all(Subset::full(n)).unwrap();
            for lambda in [0.3, 1.5, 6.0] {
                let want = trees
                    .iter()
                    .map(|t| log_p(likelihood, m, t, lambda))
                    .fold(f64::NEG_INFINITY, log_add_exp);
                let got = log_z(likelihood, m, lambda);
                assert!(
                    (got - want).abs() < 1e-10 * want.abs().max(1.0),
                    "{likelihood:?} N = {n} λ = {lambda}: {got} vs {want}"
                );
                compared += want.is_finite() as usize;
            }
        }
        // The curve is the sum of the same numbers over the jets.
        let lambdas = [0.3, 1.5, 6.0];
        let curve = evidence_curve(likelihood, &models, &lambdas, 12).unwrap();
        for (l, v) in lambdas.iter().zip(&curve.objective) {
            let want: f64 = models
                .iter()
                .map(|m| log_z(likelihood, m, *l))
                .filter(|v| v.is_finite())
                .sum();
            assert!((v - want).abs() < 1e-9 * want.abs(), "{v} vs {want}");
        }
        assert_eq!(curve.jets_used + curve.jets_left_out, models.len());
    }
    assert!(compared > 50, "{compared}");
}

#[test]
fn the_evidence_fit_is_the_maximum_of_its_objective() {
    let (models, _) = jets(6, 5, 8, 71);
    for likelihood in BOTH {
        let fit = fit_lambda_by_evidence_with(likelihood, &models, 0.1, 20.0, 12).unwrap();
        let objective = |l: f64| -> f64 { models.iter().map(|m| log_z(likelihood, m, l)).sum() };
        let (at, best) = grid_max(0.1, 20.0, objective);
        assert!(
            fit.objective >= best - 1e-9,
            "{likelihood:?}: {fit:?} against the grid's {best} at {at}"
        );
        assert_eq!(fit.objective, objective(fit.lambda));
        assert_eq!((fit.jets_used, fit.jets_left_out), (6, 0));
        assert!(fit.evaluations > GRID_POINTS as u64 && fit.evaluations < 100);
        if fit.at_bound {
            assert!(fit.lambda == 0.1 || fit.lambda == 20.0, "{fit:?}");
        } else {
            // Within one grid step (0.27 % in λ) of the grid's maximum, at a maximum.
            assert!((fit.lambda / at).ln().abs() < 0.0027, "{fit:?} vs {at}");
            assert!(fit.std_error > 0.0, "{fit:?}");
        }
    }
    // The paper-era function of the public signature is the paper-era fit.
    same(
        &fit_lambda_by_evidence(&models, 0.1, 20.0, 12).unwrap(),
        &fit_lambda_by_evidence_with(Likelihood::PaperEra, &models, 0.1, 20.0, 12).unwrap(),
    );
}

#[test]
fn the_tree_fit_is_the_maximum_of_its_objective_and_says_when_it_is_at_a_bound() {
    let (models, trees) = jets(300, 5, 10, 72);
    for likelihood in BOTH {
        let fit = fit_lambda_on_trees_with(likelihood, &models, &trees, 0.1, 20.0).unwrap();
        let objective = |l: f64| -> f64 {
            models
                .iter()
                .zip(&trees)
                .map(|(m, t)| log_p(likelihood, m, t, l))
                .sum()
        };
        let (at, best) = grid_max(0.1, 20.0, objective);
        assert!(
            fit.objective >= best - 1e-9,
            "{likelihood:?}: {fit:?} against {best} at {at}"
        );
        assert_eq!(fit.objective, objective(fit.lambda));
        match likelihood {
            // The paper-era objective rises all the way to the lower bound: the fit is that
            // bound, exactly, and says so.
            Likelihood::PaperEra => {
                assert!(fit.at_bound && fit.lambda == 0.1, "{fit:?}");
                assert!(fit.std_error.is_nan());
                assert!(objective(0.05) > objective(0.1));
            }
            Likelihood::Generator => {
                assert!(!fit.at_bound && fit.std_error > 0.0, "{fit:?}");
                assert!((fit.lambda / at).ln().abs() < 0.0027, "{fit:?} vs {at}");
            }
        }
    }
    // A maximum above the upper bound: the fit is the upper bound.
    let fit = fit_lambda_on_trees_with(Likelihood::Generator, &models, &trees, 0.2, 1.0).unwrap();
    assert!(fit.at_bound && fit.lambda == 1.0, "{fit:?}");
    same(
        &fit_lambda_on_trees(&models, &trees, 0.1, 20.0).unwrap(),
        &fit_lambda_on_trees_with(Likelihood::PaperEra, &models, &trees, 0.1, 20.0).unwrap(),
    );
}

#[test]
fn the_generator_density_recovers_the_generator_s_rate_from_trees() {
    // Jets of every size (no selection on N), at two rates: the maximum-likelihood estimate on
    // the generator's trees lies within three standard errors of the rate that drew them.
    for (lambda, seed) in [(1.5, 74), (3.0, 75)] {
        let (models, trees) = jets_from(lambda, 900.0, 1500, 1, 64, seed);
        let fit =
            fit_lambda_on_trees_with(Likelihood::Generator, &models, &trees, 0.1, 20.0).unwrap();
        assert!(
            (fit.lambda - lambda).abs() < 3.0 * fit.std_error && fit.std_error < 0.1 * lambda,
            "generated at {lambda}: {fit:?}"
        );
        assert_eq!(fit.jets_left_out, 0);
        // The paper-era potential on the same trees does not: at λ = 1.5 it rises to the lower
        // bound; at λ = 3 (fewer light siblings of heavy clusters) it has a maximum, too high.
        let paper = fit_lambda_on_trees(&models, &trees, 0.1, 20.0).unwrap();
        if lambda == 1.5 {
            assert!(paper.at_bound && paper.lambda == 0.1, "{paper:?}");
        } else {
            assert!(paper.lambda > lambda + 5.0 * paper.std_error, "{paper:?}");
        }
    }
}

#[test]
fn the_generator_evidence_recovers_the_generator_s_rate() {
    // Root scale 400: jets of 2 to 14 leaves, none left out by a window (every jet drawn is
    // kept), so the evidence is the exact likelihood of the data and its maximum estimates λ.
    let (models, trees) = jets_from(1.5, 400.0, 250, 1, 64, 76);
    let largest = models.iter().map(|m| m.leaves().len()).max().unwrap();
    assert!(largest <= 14, "{largest}");
    let evidence =
        fit_lambda_by_evidence_with(Likelihood::Generator, &models, 0.1, 20.0, 14).unwrap();
    let on_trees =
        fit_lambda_on_trees_with(Likelihood::Generator, &models, &trees, 0.1, 20.0).unwrap();
    for fit in [&evidence, &on_trees] {
        assert!(
            !fit.at_bound && (fit.lambda - 1.5).abs() < 3.0 * fit.std_error,
            "{fit:?}"
        );
    }
    // Without the trees the estimate is less precise.
    assert!(
        evidence.std_error > on_trees.std_error,
        "{evidence:?} {on_trees:?}"
    );
    // The same bits with one thread as with the default pool.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| {
            fit_lambda_by_evidence_with(Likelihood::Generator, &models, 0.1, 20.0, 14).unwrap()
        });
    same(&one, &evidence);
}

#[test]
fn bad_bounds_wrong_trees_and_forbidden_jets_are_one_line_errors() {
    let (models, trees) = jets(3, 5, 6, 73);
    for (lo, hi) in [
        (0.0, 1.0),
        (2.0, 1.0),
        (1.0, f64::INFINITY),
        (f64::NAN, 1.0),
    ] {
        let e = fit_lambda_by_evidence(&models, lo, hi, 12).unwrap_err();
        assert!(matches!(e, FitError::Bounds { .. }), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
    let e = evidence_curve(Likelihood::Generator, &models, &[1.0, -1.0], 12).unwrap_err();
    assert!(matches!(e, FitError::BadRate { .. }), "{e}");
    let e = fit_lambda_on_trees(&models, &trees[..2], 0.1, 10.0).unwrap_err();
    assert!(
        matches!(e, FitError::TreeCount { jets: 3, trees: 2 }),
        "{e}"
    );
    let e = fit_lambda_on_trees(
        &models[..2],
        &[trees[1].clone(), trees[0].clone()],
        0.1,
        10.0,
    );
    if models[0].leaves().len() != models[1].leaves().len() {
        assert!(matches!(e.unwrap_err(), FitError::TreeSize { .. }));
    }
    let e = fit_lambda_by_evidence(&models, 0.1, 10.0, 4).unwrap_err();
    assert!(matches!(e, FitError::Trellis { i: 0, .. }), "{e}");
    // A cut above every cluster's mass forbids every tree: no jet is left.
    let forbidden: Vec<GinkgoModel> = models
        .iter()
        .map(|m| GinkgoModel::new(m.leaves().to_vec(), 1e12, m.lambda()).unwrap())
        .collect();
    for likelihood in BOTH {
        let e = fit_lambda_by_evidence_with(likelihood, &forbidden, 0.1, 10.0, 12).unwrap_err();
        assert!(matches!(e, FitError::NoJets { n: 3 }), "{e}");
    }
}
