//! The wide path where the masks stop: hundreds of points, cancellation, and (ignored) the
//! timings of the module docs.

use super::tests::weights;
use super::*;
use crate::cancel::{scope, CancelHandle};
use std::time::Instant;

/// Centred Pearson correlations of `n` random points in 8 dimensions drawn around 5 centres
/// (the board's HCC weights for points), row-major.
fn correlations(n: usize, seed: u64) -> Vec<f64> {
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    let mut rng = StdRng::seed_from_u64(seed);
    let centres: Vec<Vec<f64>> = (0..5)
        .map(|_| (0..8).map(|_| rng.random_range(-1.0..1.0)).collect())
        .collect();
    let x: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let c = &centres[i % 5];
            c.iter()
                .map(|v| v + 0.3 * rng.random_range(-1.0..1.0))
                .collect()
        })
        .collect();
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let r = crate::data::pam50::pearson(&x[i], &x[j]);
            w[i * n + j] = r;
            w[j * n + i] = r;
        }
    }
    let mean = w.iter().sum::<f64>() / (n * (n - 1)) as f64;
    for i in 0..n {
        for j in 0..n {
            if i != j {
                w[i * n + j] -= mean;
            }
        }
    }
    w
}

/// Greedy, a beam of `b` and the sparse trellis over the beam's trees and greedy's tree: the
/// trees are binary over every point, and the sparse MAP is at least every seed's value.
fn runs_at_scale<M: PairModel>(model: &M, b: usize) {
    let n = model.n_leaves();
    for score in [MergeScore::Potential, MergeScore::Revenue] {
        let g = greedy::greedy(model, score).unwrap();
        assert_eq!(g.tree.n_leaves(), n);
        assert!(g.tree.is_binary() && g.log_psi.is_finite());
        let found = beam::beam(model, b, score).unwrap();
        assert!(!found.is_empty() && found.len() <= b);
        let mut seen = std::collections::HashSet::new();
        for f in &found {
            assert!(f.tree.is_binary() && f.tree.n_leaves() == n);
            assert!(seen.insert(f.tree.clusters()), "distinct final trees");
        }
        if score == MergeScore::Revenue {
            assert!(found.windows(2).all(|w| w[0].log_psi >= w[1].log_psi));
        }
        let mut seeds: Vec<Hierarchy> = found.iter().map(|f| f.tree.clone()).collect();
        seeds.push(g.tree.clone());
        let s = sparse::sparse_map(model, &seeds).unwrap();
        assert!(s.tree.is_binary() && s.tree.n_leaves() == n);
        for seed in &seeds {
            assert!(s.log_psi >= energy::log_psi(model, seed).unwrap());
        }
        assert_eq!(s.log_psi, energy::log_psi(model, &s.tree).unwrap());
        assert!(s.vertices > n && s.splits >= n - 1);
    }
}

#[test]
fn everything_runs_at_200_and_500_points() {
    for n in [200, 500] {
        let b = if n == 200 { 8 } else { 3 };
        runs_at_scale(&Hcc::new(n, correlations(n, n as u64), 1.0).unwrap(), b);
        let sim = weights(n, 0.0, 1.0, 9 + n as u64);
        runs_at_scale(&Dasgupta::new(n, sim, 1.0).unwrap(), b);
    }
}

#[test]
fn a_cancelled_token_stops_every_computation() {
    let n = 120;
    let model = Hcc::new(n, correlations(n, 1), 1.0).unwrap();
    let tree = greedy::greedy(&model, MergeScore::Revenue).unwrap().tree;
    let handle = CancelHandle::new();
    handle.cancel();
    let token = handle.token();
    scope(&token, || {
        let score = MergeScore::Revenue;
        assert_eq!(
            greedy::greedy(&model, score).unwrap_err(),
            WideError::Cancelled
        );
        assert_eq!(
            beam::beam(&model, 4, score).unwrap_err(),
            WideError::Cancelled
        );
        let seeds = [tree.clone()];
        assert_eq!(
            sparse::sparse_map(&model, &seeds).unwrap_err(),
            WideError::Cancelled
        );
        assert_eq!(
            energy::log_psi(&model, &tree).unwrap_err(),
            WideError::Cancelled
        );
    });
    // A cancellation mid-run: a deadline that passes during a long beam.
    let timed = CancelHandle::with_timeout(std::time::Duration::from_millis(50));
    let t0 = Instant::now();
    let big = Hcc::new(300, correlations(300, 2), 1.0).unwrap();
    let r = scope(&timed.token(), || {
        beam::beam(&big, 200, MergeScore::Revenue)
    });
    assert_eq!(r.unwrap_err(), WideError::Cancelled);
    assert!(t0.elapsed().as_secs_f64() < 5.0, "{:?}", t0.elapsed());
}

/// Timings for the report (not a test of speed): greedy, beams of 100 and 3N, the sparse trellis
/// over the 100-beam's trees, both energies (HCC on clustered points' correlations, Dasgupta on
/// uniform similarities and on a 0/1 graph, whose many exact ties the bounds must carry).
/// `WIDE_N=100,200` chooses the sizes; beams whose work is above 1e10 units are skipped.
/// `RAYON_NUM_THREADS=1 cargo test -p trellis-core --release wide_timings -- --ignored --nocapture`.
#[test]
#[ignore]
fn wide_timings() {
    let sizes: Vec<usize> = std::env::var("WIDE_N").map_or(vec![100, 200, 300, 500], |v| {
        v.split(',').map(|x| x.parse().unwrap()).collect()
    });
    for n in sizes {
        time_all("hcc", &Hcc::new(n, correlations(n, 7), 1.0).unwrap());
        time_all(
            "dasgupta",
            &Dasgupta::new(n, weights(n, 0.0, 1.0, 7), 1.0).unwrap(),
        );
        let graph = weights(n, 0.0, 1.0, 8)
            .iter()
            .map(|&w| f64::from(w < 0.1))
            .collect();
        time_all("0/1 graph", &Dasgupta::new(n, graph, 1.0).unwrap());
    }
}

fn time_all<M: PairModel>(name: &str, model: &M) {
    let n = model.n_leaves();
    let score = MergeScore::Revenue;
    let t = Instant::now();
    greedy::greedy(model, score).unwrap();
    let threads = rayon::current_num_threads();
    let mut line = format!(
        "{name} N = {n} ({threads} threads): greedy {:.3} s",
        t.elapsed().as_secs_f64()
    );
    for b in [100, 3 * n] {
        let units = beam::work(n, b);
        if units > 1e10 {
            line += &format!("; beam {b} skipped ({units:.1e} units)");
            continue;
        }
        let t = Instant::now();
        let found = beam::beam(model, b, score).unwrap();
        let tb = t.elapsed().as_secs_f64();
        line += &format!("; beam {b} {tb:.2} s ({:.0} ns a unit)", tb / units * 1e9);
        if b == 100 {
            let seeds: Vec<Hierarchy> = found.into_iter().map(|f| f.tree).collect();
            let t = Instant::now();
            let s = sparse::sparse_map(model, &seeds).unwrap();
            line += &format!(
                "; sparse over its {} trees {:.3} s ({} vertices)",
                seeds.len(),
                t.elapsed().as_secs_f64(),
                s.vertices
            );
        }
    }
    eprintln!("{line}");
}
