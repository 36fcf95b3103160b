//! Criterion benchmarks of the exact trellis on single Ginkgo jets: log Z + MAP + finite-tree
//! count + entropy at N = 8 to 18; the eight-lane path with each instruction set (scalar, AVX2,
//! AVX-512) beside the split loop at N = 12 to 16 (`full_trellis_isa`); every energy with a
//! lane kernel (Ginkgo, Dasgupta, HCC, the generator's density) per instruction set beside its
//! split loop at N = 12 and 14 (`full_trellis_energy_isa`); the MAP-only trellis (`map_trellis`, the same MAP, splits
//! skipped by the Ginkgo bound) at N = 12 to 18, each beside the full trellis of the same jet in
//! the same run; the outside pass (all cluster marginals) and posterior
//! sampling; and same-run baselines (brute-force enumeration of all trees at N = 8, beam search,
//! greedy). N = 20 and 22 are measured by `configs/scaling.toml` (one run each).
//!
//! Run: `cargo bench -p trellis-lab-benches`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use trellis_core::data::ginkgo::{generate_dataset, GinkgoParams, Jet};
use trellis_core::exact::{FullTrellis, MapTrellis, Marginals, PosteriorSampler, SparseTrellis};
use trellis_core::search::{
    beam_search, beam_search_all, default_beam_size, generalised_kt, greedy, Dedup, KtAlgorithm,
};
use trellis_core::simd::Isa;
use trellis_core::subset::Subset;
use trellis_core::tree::Tree;

fn jet_with(n: usize) -> Jet {
    // W jets reach 18 leaves often; the likelihood is the same paper-era psi.
    let params = if n <= 12 {
        GinkgoParams::qcd()
    } else {
        GinkgoParams::w_jet()
    };
    generate_dataset(&params, 1, n, n, 2021, 2_000_000, "bench")
        .expect("the generator makes jets of this size")
        .jets
        .remove(0)
}

fn trellis(c: &mut Criterion) {
    let mut g = c.benchmark_group("full_trellis");
    g.sample_size(10);
    for n in [8usize, 10, 12, 14, 16, 18] {
        let m = jet_with(n).model().unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(n), &m, |b, m| {
            b.iter(|| {
                let t = FullTrellis::build(black_box(m)).unwrap();
                black_box((
                    t.log_partition(),
                    t.map_log_likelihood(),
                    t.n_trees_finite(),
                ))
            })
        });
    }
    g.finish();
}

/// The full trellis as dispatched for each instruction set this CPU has (`scalar`, `avx2`,
/// `avx512`: the eight lanes, or the split loop where the lanes are slower), each set's eight
/// lanes themselves (`lanes_<set>`), and the split loop (the path before the lanes, four lanes
/// of AVX2 in the Ginkgo kernel where the CPU has it), on the same jets in one run. Run it with
/// `TRELLIS_LAB_SIMD=scalar` as well to time every path as a CPU without AVX2 runs it.
fn trellis_isa(c: &mut Criterion) {
    let mut g = c.benchmark_group("full_trellis_isa");
    g.sample_size(10);
    for n in [12usize, 14, 16] {
        let m = jet_with(n).model().unwrap();
        g.bench_with_input(BenchmarkId::new("split_loop", n), &m, |b, m| {
            b.iter(|| {
                let t = FullTrellis::build_split_loop(black_box(m), 32).unwrap();
                black_box(t.log_partition())
            })
        });
        let narrowest = Isa::detect();
        for isa in Isa::ALL
            .into_iter()
            .filter(|&i| i.available() && i <= narrowest)
        {
            g.bench_with_input(BenchmarkId::new(isa.name(), n), &m, |b, m| {
                b.iter(|| {
                    let t = FullTrellis::build_with_isa(black_box(m), 32, isa).unwrap();
                    black_box(t.log_partition())
                })
            });
            let lanes = format!("lanes_{}", isa.name());
            g.bench_with_input(BenchmarkId::new(lanes, n), &m, |b, m| {
                b.iter(|| {
                    let t = FullTrellis::build_lanes(black_box(m), 32, isa).unwrap();
                    black_box(t.log_partition())
                })
            });
        }
    }
    g.finish();
}

/// Every energy with a lane kernel beside its own split loop, per instruction set this CPU
/// has, at N = 12 and 14, in one run: the Ginkgo jet, Dasgupta's cost on Gaussian
/// similarities of N points, HCC on signed uniform affinities, the Ginkgo generator's density
/// of the jet; `split_loop`, the eight lanes of each set (`lanes_<set>`) and, for the widest
/// set, the lanes with the MAP-tie count in the same pass (`ties_<set>`). Run it with
/// `TRELLIS_LAB_SIMD=scalar` as well to time the split loop as a CPU without AVX2 runs it.
fn trellis_energy_isa(c: &mut Criterion) {
    use trellis_core::data::graphs::{gaussian_similarities, signed_uniform_weights};
    use trellis_core::exact::TIE_TOLERANCE;
    use trellis_core::model::{CorrelationModel, DasguptaModel, GinkgoGeneratorModel, SplitModel};

    fn bench<M: SplitModel>(
        g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        energy: &str,
        n: usize,
        m: &M,
    ) {
        let id = |path: &str| BenchmarkId::new(format!("{energy}/{path}"), n);
        g.bench_function(id("split_loop"), |b| {
            b.iter(|| {
                black_box(
                    FullTrellis::build_split_loop(m, 32)
                        .unwrap()
                        .log_partition(),
                )
            })
        });
        let narrowest = Isa::detect();
        for isa in Isa::ALL
            .into_iter()
            .filter(|&i| i.available() && i <= narrowest)
        {
            g.bench_function(id(&format!("lanes_{}", isa.name())), |b| {
                b.iter(|| {
                    black_box(
                        FullTrellis::build_lanes(m, 32, isa)
                            .unwrap()
                            .log_partition(),
                    )
                })
            });
        }
        g.bench_function(id(&format!("ties_{}", narrowest.name())), |b| {
            b.iter(|| {
                let t = FullTrellis::build_with_ties(m, 32, TIE_TOLERANCE).unwrap();
                black_box(t.n_map_trees(m, TIE_TOLERANCE).unwrap())
            })
        });
    }

    let mut g = c.benchmark_group("full_trellis_energy_isa");
    g.sample_size(10);
    for n in [12usize, 14] {
        let jet = jet_with(n);
        let seed = 22 + n as u64;
        bench(&mut g, "ginkgo", n, &jet.model().unwrap());
        let w = gaussian_similarities(n, seed).unwrap();
        bench(&mut g, "dasgupta", n, &DasguptaModel::new(w, 1.0).unwrap());
        let w = signed_uniform_weights(n, 1.0, seed).unwrap();
        bench(&mut g, "hcc", n, &CorrelationModel::new(w, 1.0).unwrap());
        let gen = GinkgoGeneratorModel::new(jet.leaves.clone(), jet.t_cut, jet.lam).unwrap();
        bench(&mut g, "generator", n, &gen);
    }
    g.finish();
}

fn map_trellis(c: &mut Criterion) {
    let mut g = c.benchmark_group("map_trellis");
    g.sample_size(10);
    for n in [12usize, 14, 16, 18] {
        let m = jet_with(n).model().unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(n), &m, |b, m| {
            b.iter(|| {
                let t = MapTrellis::build(black_box(m)).unwrap();
                black_box((t.map_log_likelihood(), t.map_tree()))
            })
        });
    }
    g.finish();
}

fn queries(c: &mut Criterion) {
    let mut g = c.benchmark_group("queries");
    g.sample_size(10);
    for n in [12usize, 14] {
        let m = jet_with(n).model().unwrap();
        let t = FullTrellis::build(&m).unwrap();
        g.bench_with_input(BenchmarkId::new("all_cluster_marginals", n), &m, |b, m| {
            b.iter(|| {
                black_box(
                    Marginals::compute(&t, m)
                        .unwrap()
                        .cluster(Subset::singleton(0)),
                )
            })
        });
        g.bench_with_input(BenchmarkId::new("sample_1000_trees", n), &m, |b, m| {
            b.iter(|| {
                let mut s = PosteriorSampler::new(&t, m).unwrap();
                let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(1);
                black_box(s.sample_many(1000, &mut rng).unwrap().len())
            })
        });
    }
    g.finish();
}

fn sparse(c: &mut Criterion) {
    let mut g = c.benchmark_group("sparse_trellis");
    g.sample_size(10);
    // A 40-leaf QCD jet (root scale 200^2), seeded by the 100 trees of a beam search's final beam.
    let params = GinkgoParams {
        root_scale: 40_000.0,
        ..GinkgoParams::qcd()
    };
    let jet = generate_dataset(&params, 1, 40, 40, 40, 2_000_000, "bench").unwrap();
    let m = jet.jets[0].model().unwrap();
    let seeds: Vec<Tree> = beam_search_all(&m, 100, Dedup::Clusters)
        .unwrap()
        .into_iter()
        .map(|f| f.tree)
        .collect();
    g.bench_function("build_and_map_40_leaves_100_seeds", |b| {
        b.iter(|| {
            let sp = SparseTrellis::from_trees(40, &seeds).unwrap();
            black_box(sp.run(&m).unwrap().map_log_likelihood())
        })
    });
    g.bench_function("beam_search_100_then_sparse_40_leaves", |b| {
        b.iter(|| {
            let seeds: Vec<Tree> = beam_search_all(&m, 100, Dedup::Clusters)
                .unwrap()
                .into_iter()
                .map(|f| f.tree)
                .collect();
            let sp = SparseTrellis::from_trees(40, &seeds).unwrap();
            black_box(sp.run(&m).unwrap().map_log_likelihood())
        })
    });
    g.finish();
}

fn baselines(c: &mut Criterion) {
    let mut g = c.benchmark_group("baselines");
    g.sample_size(10);
    let m = jet_with(8).model().unwrap();
    // Brute force: score all 135,135 trees of 8 leaves (what the trellis replaces).
    let all = Tree::enumerate_all(Subset::full(8)).unwrap();
    g.bench_function("enumerate_score_all_trees_8", |b| {
        b.iter(|| {
            black_box(
                all.iter()
                    .map(|t| t.log_likelihood(&m))
                    .fold(f64::NEG_INFINITY, f64::max),
            )
        })
    });
    for n in [10usize, 14] {
        let m = jet_with(n).model().unwrap();
        g.bench_with_input(BenchmarkId::new("beam_search", n), &m, |b, m| {
            b.iter(|| black_box(beam_search(m, default_beam_size(n)).unwrap().log_likelihood))
        });
        g.bench_with_input(BenchmarkId::new("greedy", n), &m, |b, m| {
            b.iter(|| black_box(greedy(m).unwrap().log_likelihood))
        });
    }
    // The jet algorithms on a 40-leaf QCD jet (the sparse group's; issue 13: well under a
    // millisecond), beside greedy and beam search on the same jet.
    let params = GinkgoParams {
        root_scale: 40_000.0,
        ..GinkgoParams::qcd()
    };
    let jet = generate_dataset(&params, 1, 40, 40, 40, 2_000_000, "bench")
        .unwrap()
        .jets
        .remove(0);
    let m = jet.model().unwrap();
    for alg in [
        KtAlgorithm::Kt,
        KtAlgorithm::CambridgeAachen,
        KtAlgorithm::AntiKt,
    ] {
        g.bench_function(format!("generalised_kt_40_{alg:?}"), |b| {
            b.iter(|| black_box(generalised_kt(&jet.leaves, alg, 1.0).unwrap()))
        });
    }
    g.bench_function("greedy_40", |b| {
        b.iter(|| black_box(greedy(&m).unwrap().log_likelihood))
    });
    g.bench_function("beam_search_40", |b| {
        b.iter(|| {
            black_box(
                beam_search(&m, default_beam_size(40))
                    .unwrap()
                    .log_likelihood,
            )
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    trellis,
    trellis_isa,
    trellis_energy_isa,
    map_trellis,
    queries,
    sparse,
    baselines
);
criterion_main!(benches);
