//! Every public entry point that validates its arguments returns an error, never panics, on
//! bad input; each error is one line that names the bad value or parameter.

use std::fmt::Display;
use trellis_core::data::ginkgo::{generate_dataset, generate_jet, GinkgoParams, Jet};
use trellis_core::data::graphs::{
    adversarial, planted_labels, planted_partition, signed_uniform_weights, weights_from,
    AdversarialParams, WeightScheme,
};
use trellis_core::exact::{
    cluster_marginal, FullTrellis, Marginals, PosteriorSampler, SparseTrellis,
};
use trellis_core::flat::enumerate::{
    bell, brute_force, brute_force_over, partitions_of, tree_cuts,
};
use trellis_core::flat::{FlatTrellis, PairwiseAffinity, PerturbAndMap};
use trellis_core::metrics::dendrogram_purity;
use trellis_core::model::{CorrelationModel, DasguptaModel, GinkgoModel, SplitModel, WeightMatrix};
use trellis_core::search::{
    average_linkage, beam_search, beam_search_all, beam_search_with, greedy, Dedup,
};
use trellis_core::subset::Subset;
use trellis_core::tree::{n_binary_trees, Node, Tree};

/// Asserts `r` is an error whose message is one line containing every `needle`.
#[track_caller]
fn one_line_err<T, E: Display>(r: Result<T, E>, needles: &[&str]) {
    let Err(e) = r else {
        panic!("expected an error mentioning {needles:?}");
    };
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "not one line: {msg}");
    for n in needles {
        assert!(msg.contains(n), "{msg:?} does not mention {n:?}");
    }
}

fn weights(n: usize) -> WeightMatrix {
    WeightMatrix::new(
        (0..n)
            .map(|i| (0..n).map(|j| if i == j { 0.0 } else { 1.0 }).collect())
            .collect(),
    )
    .unwrap()
}

fn leaves(n: usize) -> Vec<[f64; 4]> {
    (0..n).map(|i| [10.0 + i as f64, 1.0, 2.0, 3.0]).collect()
}

/// A model with no leaves, or with more leaves than a `Subset` holds.
struct NLeaves(usize);

impl SplitModel for NLeaves {
    type Stat = ();
    fn n_leaves(&self) -> usize {
        self.0
    }
    fn stat(&self, _: Subset) {}
    fn log_psi_with(&self, _: Subset, _: &(), _: Subset, _: &(), _: &()) -> f64 {
        0.0
    }
}

#[test]
fn correlation_model_rejects_bad_beta() {
    for beta in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        one_line_err(
            CorrelationModel::new(weights(3), beta),
            &["beta", &beta.to_string()],
        );
    }
    assert!(CorrelationModel::new(weights(3), 0.5).is_ok());
}

#[test]
fn dasgupta_model_rejects_bad_beta() {
    for beta in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        one_line_err(
            DasguptaModel::new(weights(3), beta),
            &["beta", &beta.to_string()],
        );
    }
}

#[test]
fn weight_matrix_rejects_bad_shapes_and_values() {
    one_line_err(
        WeightMatrix::new(vec![vec![0.0, 1.0], vec![1.0]]),
        &["row 1", "square"],
    );
    one_line_err(
        WeightMatrix::new(vec![vec![0.0, 1.0], vec![2.0, 0.0]]),
        &["symmetric"],
    );
    for v in [f64::NAN, f64::INFINITY, -f64::INFINITY] {
        one_line_err(
            WeightMatrix::new(vec![vec![0.0, v], vec![v, 0.0]]),
            &["w[0][1]", &v.to_string()],
        );
    }
    one_line_err(WeightMatrix::new(vec![vec![0.0; 65]; 65]), &["65"]);
    assert_eq!(weights(3).get(0, 3), None);
    assert_eq!(weights(3).get(7, 0), None);
    one_line_err(weights_from(100, |_, _| 1.0), &["100"]);
    one_line_err(weights_from(3, |_, _| f64::NAN), &["NaN"]);
}

#[test]
fn ginkgo_model_rejects_bad_arguments() {
    one_line_err(GinkgoModel::new(leaves(65), 16.0, 1.5), &["65 leaves"]);
    let mut bad = leaves(3);
    bad[1][2] = f64::NAN;
    one_line_err(GinkgoModel::new(bad, 16.0, 1.5), &["leaf 1", "NaN"]);
    for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        one_line_err(
            GinkgoModel::new(leaves(3), t, 1.5),
            &["t_cut", &t.to_string()],
        );
    }
    for l in [0.0, -1.5, f64::NAN] {
        one_line_err(
            GinkgoModel::new(leaves(3), 16.0, l),
            &["lambda", &l.to_string()],
        );
    }
    let m = GinkgoModel::new(leaves(3), 16.0, 1.5).unwrap();
    one_line_err(m.with_root_rate(f64::NAN), &["lambda_root", "NaN"]);
    // A jet's fields are public: an unvalidated jet's model is checked too.
    let jet = Jet {
        name: "x".into(),
        n_leaves: 2,
        t_cut: f64::NAN,
        lam: 1.5,
        lam_root: 1.5,
        m_hard: 30.0,
        leaves: leaves(2),
        truth_tree: None,
        truth_loglh: None,
        reference: None,
    };
    one_line_err(jet.model(), &["t_cut", "NaN"]);
}

#[test]
fn statistic_tables_refuse_absurd_sizes() {
    let big = GinkgoModel::new(leaves(40), 16.0, 1.5).unwrap();
    one_line_err(big.stat_table(), &["2^40", "40 leaves"]);
    one_line_err(NLeaves(64).stat_table(), &["2^64"]);
    one_line_err(weights(40).pair_sums(|x| x), &["40"]);
    // Clusters outside the model's leaves do not panic.
    let m = GinkgoModel::new(leaves(3), 16.0, 1.5).unwrap();
    let _ = m.log_psi(Subset::singleton(0), Subset::from_indices([5, 9]));
    let d = DasguptaModel::new(weights(3), 1.0).unwrap();
    let _ = d.merge_cost(Subset::singleton(0), Subset::singleton(40));
    let t = Tree::from_newick("((0,7),1);").unwrap();
    assert!(t.log_likelihood(&m).is_nan());
}

#[test]
fn full_trellis_refuses_empty_and_large_instances() {
    one_line_err(FullTrellis::build(&NLeaves(0)), &["no leaves"]);
    one_line_err(FullTrellis::build(&NLeaves(23)), &["N = 23", "limit of 22"]);
    one_line_err(
        FullTrellis::build_with_limit(&NLeaves(33), usize::MAX),
        &["N = 33", "limit of 32"],
    );
    one_line_err(
        FullTrellis::build_with_limit(&NLeaves(65), usize::MAX),
        &["N = 65"],
    );
    one_line_err(
        FullTrellis::build_with_limit(&NLeaves(1000), 5000),
        &["N = 1000"],
    );
}

#[test]
fn full_trellis_queries_check_clusters_and_models() {
    let m = CorrelationModel::new(weights(4), 1.0).unwrap();
    let t = FullTrellis::build(&m).unwrap();
    for bad in [
        Subset::EMPTY,
        Subset::singleton(4),
        Subset::from_indices([0, 63]),
    ] {
        one_line_err(t.log_partition_of(bad), &["cluster", "4 leaves"]);
        one_line_err(t.map_log_likelihood_of(bad), &["cluster"]);
        one_line_err(t.n_trees_finite_of(bad), &["cluster"]);
        one_line_err(t.map_tree_of(bad), &["cluster"]);
        one_line_err(cluster_marginal(&t, &m, bad), &["cluster"]);
    }
    let other = CorrelationModel::new(weights(5), 1.0).unwrap();
    one_line_err(t.n_map_trees(&other, 1e-9), &["5 leaves", "built over 4"]);
    one_line_err(Marginals::compute(&t, &other), &["5 leaves"]);
    one_line_err(
        cluster_marginal(&t, &other, Subset::singleton(0)),
        &["5 leaves"],
    );
    let marg = Marginals::compute(&t, &m).unwrap();
    one_line_err(marg.cluster(Subset::singleton(9)), &["{9}"]);
    one_line_err(marg.log_outside(Subset::EMPTY), &["{}"]);
    let sub = Tree::from_newick("(0,1);").unwrap();
    one_line_err(marg.subhierarchy(&other, &sub), &["5 leaves"]);
    one_line_err(PosteriorSampler::new(&t, &other), &["5 leaves"]);
}

#[test]
fn posterior_sampler_refuses_posteriors_without_trees() {
    /// Every split forbidden.
    struct Nothing;
    impl SplitModel for Nothing {
        type Stat = ();
        fn n_leaves(&self) -> usize {
            3
        }
        fn stat(&self, _: Subset) {}
        fn log_psi_with(&self, _: Subset, _: &(), _: Subset, _: &(), _: &()) -> f64 {
            f64::NEG_INFINITY
        }
    }
    let t = FullTrellis::build(&Nothing).unwrap();
    one_line_err(
        PosteriorSampler::new(&t, &Nothing),
        &["no tree has finite likelihood"],
    );
    // A sampler handed a model of the same size but other potentials errors, not panics.
    let m = CorrelationModel::new(weights(3), 1.0).unwrap();
    let tm = FullTrellis::build(&m).unwrap();
    let mut s = PosteriorSampler::new(&tm, &Nothing).unwrap();
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(1);
    one_line_err(
        s.sample(&mut rng),
        &["no split of positive posterior weight"],
    );
    one_line_err(s.sample_many(3, &mut rng), &["model"]);
}

#[test]
fn sparse_trellis_checks_sizes_models_and_results() {
    one_line_err(SparseTrellis::full(21), &["N = 21", "at most 20"]);
    one_line_err(SparseTrellis::full(100), &["N = 100"]);
    one_line_err(SparseTrellis::new(0, []), &["no leaves"]);
    one_line_err(SparseTrellis::new(65, []), &["N = 65", "at most 64"]);
    one_line_err(SparseTrellis::from_trees(70, []), &["N = 70"]);
    one_line_err(
        SparseTrellis::new(4, [Subset::from_indices([1, 5])]),
        &["{1,5}"],
    );
    let sp = SparseTrellis::full(4).unwrap();
    let m5 = CorrelationModel::new(weights(5), 1.0).unwrap();
    one_line_err(sp.run(&m5), &["5 leaves", "built over 4"]);
    let m3 = CorrelationModel::new(weights(3), 1.0).unwrap();
    let r3 = SparseTrellis::full(3).unwrap().run(&m3).unwrap();
    one_line_err(sp.map_tree(&r3), &["not a run of this sparse trellis"]);
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(1);
    one_line_err(sp.sample(&m3, &r3, &mut rng), &["not a run"]);
}

#[test]
fn searches_refuse_empty_large_and_bad_beams() {
    one_line_err(greedy(&NLeaves(0)), &["no leaves"]);
    one_line_err(greedy(&NLeaves(65)), &["65 leaves"]);
    one_line_err(beam_search(&NLeaves(0), 3), &["no leaves"]);
    one_line_err(beam_search(&NLeaves(100), 3), &["100 leaves"]);
    let m = CorrelationModel::new(weights(4), 1.0).unwrap();
    one_line_err(beam_search(&m, 0), &["beam size", "got 0"]);
    one_line_err(
        beam_search_with(&m, 1_000_000_000_000, Dedup::Clusters),
        &["beam size", "got 1000000000000"],
    );
    one_line_err(
        beam_search_all(&m, usize::MAX, Dedup::EqualTotal),
        &["beam size"],
    );
    one_line_err(
        average_linkage(&WeightMatrix::new(vec![]).unwrap()),
        &["no leaves"],
    );
}

#[test]
fn trees_refuse_bad_arenas_splits_and_joins() {
    one_line_err(
        Tree::from_arena(vec![Node::Internal(0, 0)], 0),
        &["node 0", "twice"],
    );
    one_line_err(Tree::from_arena(vec![Node::Leaf(0)], 3), &["root index 3"]);
    one_line_err(
        Tree::from_arena(vec![Node::Internal(1, 9), Node::Leaf(0)], 0),
        &["child index 9"],
    );
    one_line_err(
        Tree::from_arena(vec![Node::Leaf(64)], 0),
        &["leaf index 64"],
    );
    one_line_err(
        Tree::from_arena(vec![Node::Leaf(1), Node::Leaf(2), Node::Internal(0, 0)], 2),
        &["twice"],
    );
    one_line_err(
        Tree::from_arena(vec![Node::Leaf(1), Node::Leaf(2)], 0),
        &["not reachable"],
    );
    one_line_err(
        Tree::join(
            Tree::leaf(1),
            Tree::join(Tree::leaf(1), Tree::leaf(2)).unwrap(),
        ),
        &["share leaf 1"],
    );
    one_line_err(
        Tree::from_splits(Subset::EMPTY, |s| (s, s)),
        &["at least one leaf"],
    );
    one_line_err(
        Tree::from_splits(Subset::full(3), |s| (s, Subset::EMPTY)),
        &["split of {0,1,2}"],
    );
    one_line_err(Tree::enumerate_all(Subset::EMPTY), &["0 leaves"]);
    one_line_err(Tree::enumerate_all(Subset::full(11)), &["11 leaves"]);
    let deep = format!("{}0{}", "(".repeat(100_000), ",1)".repeat(100_000));
    one_line_err(Tree::from_newick(&deep), &["nested deeper"]);
    assert_eq!(n_binary_trees(35), None);
    assert_eq!(n_binary_trees(usize::MAX), None);
}

#[test]
fn dendrogram_purity_takes_any_label_values() {
    let t = Tree::from_newick("((0,1),2);").unwrap();
    let labels = [Some(usize::MAX), Some(usize::MAX), Some(0), Some(5), None];
    assert_eq!(dendrogram_purity(&t, &labels), Some(1.0));
    assert_eq!(dendrogram_purity(&t, &[]), None);
}

#[test]
fn flat_entry_points_refuse_bad_arguments() {
    one_line_err(
        PairwiseAffinity::with_beta(weights(3), f64::NAN),
        &["beta", "NaN"],
    );
    let m = PairwiseAffinity::new(weights(3));
    one_line_err(
        FlatTrellis::build(&PairwiseAffinity::new(weights(0))),
        &["no points"],
    );
    one_line_err(
        FlatTrellis::build(&PairwiseAffinity::new(weights(30))),
        &["N = 30"],
    );
    let t = FlatTrellis::build(&m).unwrap();
    one_line_err(
        t.log_partition_of(Subset::singleton(5)),
        &["{5}", "3 points"],
    );
    one_line_err(t.map_log_energy_of(Subset::singleton(5)), &["{5}"]);
    one_line_err(t.map_clustering_of(Subset::singleton(5)), &["{5}"]);
    one_line_err(t.log_energy(Subset::singleton(5)), &["{5}"]);
    one_line_err(t.cluster_marginal(Subset::EMPTY), &["{}"]);
    assert_eq!(m.pair_log_energy(0, 3), None);
    one_line_err(
        PerturbAndMap::new(0, 1).pairwise_marginals(&m),
        &["draws", "0"],
    );
    one_line_err(
        PerturbAndMap::new(usize::MAX, 1).map_clusterings(&m),
        &["draws"],
    );
    let noisy = PerturbAndMap {
        noise_scale: f64::NAN,
        ..PerturbAndMap::new(1, 1)
    };
    one_line_err(noisy.perturbed(&m, 0), &["noise_scale", "NaN"]);
    let huge = PairwiseAffinity::new(
        WeightMatrix::new(vec![vec![0.0, f64::MAX], vec![f64::MAX, 0.0]]).unwrap(),
    );
    let loud = PerturbAndMap {
        noise_scale: f64::MAX,
        ..PerturbAndMap::new(4, 1)
    };
    // Overflowing perturbations are an error, not a panic.
    let _ = loud.map_clusterings(&huge);
}

#[test]
fn flat_enumeration_refuses_absurd_sizes() {
    one_line_err(partitions_of(Subset::full(13)), &["13"]);
    one_line_err(brute_force(&PairwiseAffinity::new(weights(13))), &["13"]);
    let m = PairwiseAffinity::new(weights(3));
    one_line_err(
        brute_force_over(&m, &[vec![Subset::from_indices([0, 1])]]),
        &["clustering [{0,1}]"],
    );
    one_line_err(
        brute_force_over(&PairwiseAffinity::new(weights(17)), &[]),
        &["17"],
    );
    let caterpillar = (1..20).fold(Tree::leaf(0), |t, i| Tree::join(t, Tree::leaf(i)).unwrap());
    one_line_err(tree_cuts(&caterpillar), &["20"]);
    assert_eq!(bell(1000), None);
}

#[test]
fn generators_refuse_bad_parameters() {
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(1);
    for (name, params) in [
        (
            "lambda",
            GinkgoParams {
                lambda: 0.0,
                ..GinkgoParams::qcd()
            },
        ),
        (
            "lambda_root",
            GinkgoParams {
                lambda_root: f64::NAN,
                ..GinkgoParams::qcd()
            },
        ),
        (
            "t_cut",
            GinkgoParams {
                t_cut: -1.0,
                ..GinkgoParams::qcd()
            },
        ),
        (
            "root_scale",
            GinkgoParams {
                root_scale: f64::INFINITY,
                ..GinkgoParams::qcd()
            },
        ),
        (
            "jet_momentum",
            GinkgoParams {
                jet_momentum: f64::NAN,
                ..GinkgoParams::qcd()
            },
        ),
    ] {
        one_line_err(generate_jet(&params, &mut rng), &[name]);
        one_line_err(generate_dataset(&params, 1, 2, 9, 1, 10, "x"), &[name]);
    }
    // A tiny cut against the root scale grows a huge shower: stopped, not a stack overflow.
    let tiny = GinkgoParams {
        t_cut: 1e-300,
        ..GinkgoParams::qcd()
    };
    one_line_err(generate_jet(&tiny, &mut rng), &["shower grew past"]);
    one_line_err(planted_labels(&[usize::MAX, 2]), &["points"]);
    one_line_err(planted_labels(&[40, 40]), &["80 points"]);
    one_line_err(planted_partition(&[40, 40], 0.5, 0.1, 1), &["80 points"]);
    one_line_err(signed_uniform_weights(3, f64::NAN, 1), &["NaN"]);
    one_line_err(signed_uniform_weights(1 << 40, 1.0, 1), &["points"]);
    one_line_err(WeightScheme::WithinOne.weights(&[0; 65]), &["65 points"]);
    let p = AdversarialParams {
        n_pairs: usize::MAX,
        eps: 0.01,
        middle_bonus: 0.0,
    };
    one_line_err(adversarial(&p), &["points"]);
    let p = AdversarialParams {
        n_pairs: 3,
        eps: f64::NAN,
        middle_bonus: 0.0,
    };
    one_line_err(adversarial(&p), &["NaN"]);
}

#[test]
fn subset_helpers_do_not_panic_on_wide_sets() {
    assert_eq!(Subset::of_size(64, 64).count(), 1);
    assert!(Subset::singleton(3).is_cluster_of(1000));
    assert!(!Subset::EMPTY.is_cluster_of(1000));
}

#[test]
fn samplers_and_generators_refuse_counts_beyond_memory_and_trees_over_other_leaves() {
    use trellis_core::coalescent::method::{fit, Method, MethodSettings};
    use trellis_core::memory::usable_bytes;
    let m = DasguptaModel::new(weights(5), 1.0).unwrap();
    let t = FullTrellis::build(&m).unwrap();
    let mut s = PosteriorSampler::new(&t, &m).unwrap();
    // A tree over 3 or 7 leaves has no probability under a trellis over 5.
    for newick in ["((0,1),2);", "((((((0,1),2),3),4),5),6);"] {
        let tree = Tree::from_newick(newick).unwrap();
        one_line_err(s.log_probability(&tree), &["has", "leaves", "built over 5"]);
    }
    let five = Tree::from_newick("((((0,1),2),3),4);").unwrap();
    assert!(s.log_probability(&five).unwrap() < 0.0);
    // Counts refused before anything is drawn or allocated, where the system tells a limit.
    if usable_bytes().is_some() {
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(1);
        one_line_err(
            s.sample_many(usize::MAX / 4, &mut rng),
            &["samples over 5 leaves", "draw at most"],
        );
        let sp = SparseTrellis::full(5).unwrap();
        let r = sp.run(&m).unwrap();
        one_line_err(
            sp.sample_many(&m, &r, usize::MAX / 4, &mut rng),
            &["draw at most"],
        );
        one_line_err(
            generate_dataset(&GinkgoParams::qcd(), usize::MAX / 4, 2, 9, 1, 10, "x"),
            &["jets of up to 9 leaves", "generate at most"],
        );
        // A million points: 8 TB of pairwise tables, refused before they are allocated.
        let points: Vec<Vec<f64>> = (0..1_000_000).map(|i| vec![i as f64]).collect();
        let settings = MethodSettings {
            particles: 1,
            weight_mode: Default::default(),
            resample_threshold: 0.5,
            parallel: false,
        };
        one_line_err(
            fit(Method::Mgreedy, &points, 0.0, &settings, 1),
            &["1000000 points need", "cluster fewer points"],
        );
    }
    one_line_err(WeightMatrix::check_len(65), &["65 points"]);
    assert!(WeightMatrix::check_len(WeightMatrix::MAX_POINTS).is_ok());
}
