//! Every exact query of the trellis (log Z, MAP, counts, entropy, cluster and sub-hierarchy
//! marginals, posterior samples) against brute-force enumeration of all trees.

use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::HashMap;
use trellis_lab::data::ginkgo::{generate_dataset, GinkgoParams, JetDataset};
use trellis_lab::exact::{cluster_marginal, FullTrellis, Marginals, PosteriorSampler};
use trellis_lab::experiment::stats::chi_square;
use trellis_lab::model::{log_add_exp, SplitModel};
use trellis_lab::simd::Isa;
use trellis_lab::subset::Subset;
use trellis_lab::tree::Tree;

/// Brute-force posterior: every tree with its log-likelihood, and log Z.
struct Brute {
    trees: Vec<Tree>,
    ll: Vec<f64>,
    log_z: f64,
}

impl Brute {
    fn new(m: &impl SplitModel) -> Brute {
        let trees = Tree::enumerate_all(Subset::full(m.n_leaves())).unwrap();
        let ll: Vec<f64> = trees.iter().map(|t| t.log_likelihood(m)).collect();
        let log_z = ll.iter().cloned().fold(f64::NEG_INFINITY, log_add_exp);
        Brute { trees, ll, log_z }
    }
    fn p(&self, k: usize) -> f64 {
        (self.ll[k] - self.log_z).exp()
    }
}

/// A toy model with forbidden splits, so `-inf` flows through every query.
struct Toy {
    n: usize,
}

impl SplitModel for Toy {
    type Stat = ();
    fn n_leaves(&self) -> usize {
        self.n
    }
    fn stat(&self, _: Subset) {}
    fn log_psi_with(&self, a: Subset, _: &(), b: Subset, _: &(), _: &()) -> f64 {
        // Leaves 0 and 1 may never be siblings; other splits prefer balance.
        if (a == Subset::singleton(0) && b == Subset::singleton(1)) || (a.len() == 1 && b.len() > 3)
        {
            f64::NEG_INFINITY
        } else {
            -((a.len() as f64) - (b.len() as f64)).abs() * 0.7 + 0.05 * (a.bits() % 5) as f64
        }
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol
}

fn check_all_queries(m: &impl SplitModel, label: &str) {
    let n = m.n_leaves();
    let t = FullTrellis::build(m).unwrap();
    let b = Brute::new(m);
    assert!(close(t.log_partition(), b.log_z, 1e-9), "{label}: log Z");
    if b.log_z == f64::NEG_INFINITY {
        // No tree has finite likelihood: the posterior is undefined, no cluster has mass.
        assert!(t.entropy().is_nan());
        let marg = Marginals::compute(&t, m).unwrap();
        assert_eq!(marg.cluster(Subset::full(n)).unwrap(), 0.0);
        return;
    }
    // Entropy.
    let h: f64 = (0..b.trees.len())
        .filter(|&k| b.ll[k].is_finite())
        .map(|k| -b.p(k) * (b.ll[k] - b.log_z))
        .sum();
    assert!(
        close(t.entropy(), h, 1e-9),
        "{label}: entropy {} vs {h}",
        t.entropy()
    );
    // Cluster marginals, all at once and one at a time.
    let marg = Marginals::compute(&t, m).unwrap();
    let mut brute_c: HashMap<Subset, f64> = HashMap::new();
    let mut expected_counts = vec![0.0; n + 1];
    for (k, tree) in b.trees.iter().enumerate() {
        if !b.ll[k].is_finite() {
            continue;
        }
        for c in tree.clusters() {
            *brute_c.entry(c).or_default() += b.p(k);
            expected_counts[c.len()] += b.p(k);
        }
    }
    for bits in 1..(1u64 << n) {
        let c = Subset(bits);
        let want = brute_c.get(&c).copied().unwrap_or(0.0);
        let got = marg.cluster(c).unwrap();
        assert!(close(got, want, 1e-9), "{label}: P({c}) {got} vs {want}");
        if bits % 3 == 0 || c.len() == 1 {
            let single = cluster_marginal(&t, m, c).unwrap();
            assert!(
                close(single, want, 1e-9),
                "{label}: single P({c}) {single} vs {want}"
            );
        }
    }
    for i in 0..n {
        assert!(close(
            marg.cluster(Subset::singleton(i)).unwrap(),
            1.0,
            1e-12
        ));
    }
    assert_eq!(marg.cluster(Subset::full(n)).unwrap(), 1.0);
    let counts = marg.expected_cluster_counts();
    for k in 1..=n {
        assert!(
            close(counts[k], expected_counts[k], 1e-9),
            "{label}: size {k}"
        );
    }
    assert!(close(counts[1], n as f64, 1e-9) && close(counts[n], 1.0, 1e-12));
    // Sub-hierarchy marginals: every subtree of a few trees.
    for k in (0..b.trees.len()).step_by((b.trees.len() / 7).max(1)) {
        let tree = &b.trees[k];
        let cl = tree.node_clusters();
        for (v, c) in cl.iter().enumerate() {
            if c.len() < 2 {
                continue;
            }
            let sub = Tree::from_splits(*c, |s| {
                // The split of s in `tree`.
                let node = cl.iter().position(|x| x == &s).unwrap();
                match tree.nodes()[node] {
                    trellis_lab::tree::Node::Internal(l, r) => (cl[l], cl[r]),
                    _ => unreachable!(),
                }
            })
            .unwrap();
            let sub_clusters = sub.clusters();
            let want: f64 = (0..b.trees.len())
                .filter(|&j| b.ll[j].is_finite())
                .filter(|&j| {
                    let cj = b.trees[j].clusters();
                    sub_clusters.iter().all(|x| cj.binary_search(x).is_ok())
                })
                .map(|j| b.p(j))
                .sum();
            let got = marg.subhierarchy(m, &sub).unwrap();
            assert!(
                close(got, want, 1e-9),
                "{label}: P(subtree at node {v}) {got} vs {want}"
            );
        }
    }
}

#[test]
fn all_queries_match_enumeration_on_jets() {
    let ds = generate_dataset(&GinkgoParams::qcd(), 12, 3, 7, 21, 10_000, "q").unwrap();
    for jet in &ds.jets {
        check_all_queries(&jet.model().unwrap(), &jet.name);
    }
}

#[test]
fn all_queries_match_enumeration_with_forbidden_splits() {
    for n in 2..=7 {
        check_all_queries(&Toy { n }, &format!("toy n = {n}"));
    }
}

#[test]
fn bad_cluster_queries_are_errors() {
    let m = Toy { n: 4 };
    let t = FullTrellis::build(&m).unwrap();
    let marg = Marginals::compute(&t, &m).unwrap();
    for c in [
        Subset::EMPTY,
        Subset::from_indices([1, 4]),
        Subset::singleton(9),
    ] {
        let e = marg.cluster(c).unwrap_err().to_string();
        assert!(e.contains("0..4"), "{e}");
        assert!(cluster_marginal(&t, &m, c).is_err());
    }
}

/// Chi-square goodness of fit of sampled tree frequencies against the exact probabilities
/// (the experiment layer's test, which pools trees expected fewer than 5 times).
fn chi_square_p_value(b: &Brute, counts: &HashMap<Vec<Subset>, usize>) -> f64 {
    let (mut observed, mut prob) = (Vec::new(), Vec::new());
    for (k, tree) in b.trees.iter().enumerate() {
        let o = *counts.get(&tree.clusters()).unwrap_or(&0) as f64;
        if !b.ll[k].is_finite() {
            assert_eq!(o, 0.0, "sampled a tree of zero probability");
            continue;
        }
        observed.push(o);
        prob.push(b.p(k));
    }
    chi_square(&observed, &prob).2
}

#[test]
fn posterior_samples_pass_chi_square() {
    let truth5 = JetDataset::load(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/ginkgo_jets/truth_5.json"),
    )
    .unwrap();
    let mut models: Vec<(String, trellis_lab::model::GinkgoModel)> = truth5
        .jets
        .iter()
        .take(3)
        .map(|j| (j.name.clone(), j.model().unwrap()))
        .collect();
    let gen = generate_dataset(&GinkgoParams::qcd(), 2, 6, 6, 8, 10_000, "s").unwrap();
    models.extend(
        gen.jets
            .iter()
            .map(|j| (j.name.clone(), j.model().unwrap())),
    );
    let mut rng = StdRng::seed_from_u64(2024);
    for (name, m) in &models {
        let t = FullTrellis::build(m).unwrap();
        let b = Brute::new(m);
        let mut sampler = PosteriorSampler::new(&t, m).unwrap();
        let draws = 30_000;
        let mut counts: HashMap<Vec<Subset>, usize> = HashMap::new();
        for tree in sampler.sample_many(draws, &mut rng).unwrap() {
            assert_eq!(tree.n_leaves(), m.n_leaves());
            *counts.entry(tree.clusters()).or_default() += 1;
        }
        let p = chi_square_p_value(&b, &counts);
        assert!(p > 1e-3, "{name}: chi-square p-value {p}");
    }
    // The same seed gives the same draws.
    let (_, m) = &models[0];
    let t = FullTrellis::build(m).unwrap();
    let draw = |seed| {
        let mut s = PosteriorSampler::new(&t, m).unwrap();
        s.sample_many(50, &mut StdRng::seed_from_u64(seed)).unwrap()
    };
    assert!(draw(5) == draw(5));
}

#[test]
fn bit_identical_for_one_and_two_threads() {
    let ds = generate_dataset(&GinkgoParams::w_jet(), 1, 13, 13, 4, 100_000, "t").unwrap();
    let m = ds.jets[0].model().unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let t = FullTrellis::build(&m).unwrap();
            let marg = Marginals::compute(&t, &m).unwrap();
            let per_cluster: Vec<(u64, u64)> = (1..1u64 << 13)
                .map(|b| {
                    (
                        t.log_partition_of(Subset(b)).unwrap().to_bits(),
                        t.map_log_likelihood_of(Subset(b)).unwrap().to_bits(),
                    )
                })
                .collect();
            let marginals: Vec<u64> = marg
                .all_log_clusters()
                .iter()
                .map(|x| x.to_bits())
                .collect();
            (
                per_cluster,
                marginals,
                t.entropy().to_bits(),
                t.map_tree().to_newick(),
            )
        })
    };
    assert!(run(1) == run(2));
}

#[test]
fn beam_seeded_sparse_trellis_lies_between_its_best_seed_and_the_exact_map() {
    use trellis_lab::exact::SparseTrellis;
    use trellis_lab::search::{beam_search_all, Dedup};
    let ds = generate_dataset(&GinkgoParams::w_jet(), 6, 10, 13, 17, 100_000, "b").unwrap();
    for jet in &ds.jets {
        let m = jet.model().unwrap();
        let found = beam_search_all(&m, 20, Dedup::Clusters).unwrap();
        assert!(found
            .windows(2)
            .all(|w| w[0].log_likelihood >= w[1].log_likelihood));
        let seeds: Vec<Tree> = found.iter().map(|f| f.tree.clone()).collect();
        let sp = SparseTrellis::from_trees(jet.n_leaves, &seeds).unwrap();
        let r = sp.run(&m).unwrap();
        let exact = FullTrellis::build(&m).unwrap();
        assert!(
            r.map_log_likelihood() >= found[0].log_likelihood - 1e-9,
            "{}",
            jet.name
        );
        assert!(r.map_log_likelihood() <= exact.map_log_likelihood() + 1e-9);
        assert!(r.log_partition() <= exact.log_partition() + 1e-9);
        let map = sp.map_tree(&r).unwrap().unwrap();
        assert!((map.log_likelihood(&m) - r.map_log_likelihood()).abs() < 1e-9);
        assert!(sp.sparsity_index() > 0.0 && sp.sparsity_index() < 1.0);
    }
}

/// The full trellis's answers are pinned to the values the scalar implementation of 2026-11-24
/// gave (before the split loop and the Ginkgo kernel were vectorised), on the generated W jets
/// that `configs/scaling.toml` uses (seed 22 + N), with every instruction set this CPU has: the
/// MAP value and the count bit for bit (any change to the potential's arithmetic shows up
/// here), log Z and the entropy to 1e-12 relative (the eight-lane path sums in another order
/// with another `exp`), and each the same for 1 and 2 threads.
#[test]
fn full_trellis_answers_are_pinned_bit_for_bit() {
    // (N, log Z bits, MAP bits, finite trees, entropy bits)
    let pinned: [(usize, u64, u64, u128, u64); 2] = [
        (
            12,
            0xc05394916ba879f6,
            0xc0560654c224f58a,
            13_749_310_575,
            0x40313549692b3a38,
        ),
        (
            14,
            0xc054e7e45fd080d3,
            0xc05822af780a87c8,
            3_332_502_072_900,
            0x403550d124007500,
        ),
    ];
    for (n, log_z, map, count, entropy) in pinned {
        let ds = generate_dataset(
            &GinkgoParams::w_jet(),
            1,
            n,
            n,
            22 + n as u64,
            1_000_000,
            "pin",
        )
        .unwrap();
        let m = ds.jets[0].model().unwrap();
        let close = |got: f64, want: u64| {
            let want = f64::from_bits(want);
            (got - want).abs() <= 1e-12 * want.abs().max(1.0)
        };
        for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
            let mut bits = Vec::new();
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let t = pool.install(|| FullTrellis::build_with_isa(&m, 32, isa).unwrap());
                assert!(close(t.log_partition(), log_z), "log Z, N = {n}, {isa}");
                assert_eq!(t.map_log_likelihood().to_bits(), map, "MAP, N = {n}");
                assert_eq!(t.n_trees_finite(), count, "count, N = {n}");
                assert!(close(t.entropy(), entropy), "entropy, N = {n}, {isa}");
                bits.push((t.log_partition().to_bits(), t.entropy().to_bits()));
                let rescored = t.map_tree().log_likelihood(&m);
                assert!(
                    (rescored - f64::from_bits(map)).abs() < 1e-9,
                    "MAP tree rescored, N = {n}"
                );
            }
            assert_eq!(bits[0], bits[1], "1 vs 2 threads, N = {n}, {isa}");
        }
    }
}
