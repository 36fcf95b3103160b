//! `cancel::cancel_all` stops the exact trellises (full, MAP-only, sparse, flat) within a
//! fraction of a second, also when it comes while a trellis builds its statistics table, and a
//! computation started afterwards runs to the same bits as before; a `CancelHandle` cancelled
//! from another thread, or past its timeout, stops a running one (one test function:
//! `cancel_all` is process-wide, so these steps must not overlap). A handle cancelled before a
//! computation starts stops it at its first check, whichever computation it is (that test only
//! expects cancellations, so a `cancel_all` beside it changes nothing).
//!
//! A test binary of its own: `cancel_all` would stop the computations of any other test running
//! beside it in the same process.

use rand::rngs::StdRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use trellis_core::cancel::{cancel_all, scope, CancelHandle};
use trellis_core::coalescent::method::{fit, Method, MethodSettings};
use trellis_core::data::ginkgo::{generate_dataset, GinkgoParams, JetDataset};
use trellis_core::exact::{FullTrellis, MapTrellis, PosteriorSampler, SparseTrellis};
use trellis_core::flat::{FlatTrellis, PairwiseAffinity};
use trellis_core::model::{DasguptaModel, ModelError, SplitModel, WeightMatrix};
use trellis_core::pydt::search::{greedy_search, Observations, SearchSettings};
use trellis_core::pydt::{Leaves, Params};
use trellis_core::search::{beam_search_all, Dedup};
use trellis_core::subset::Subset;

fn weights(n: usize) -> WeightMatrix {
    let rows = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        0.0
                    } else {
                        ((i * 7 + j * 7) % 11) as f64 / 10.0
                    }
                })
                .collect()
        })
        .collect();
    WeightMatrix::new(rows).unwrap()
}

/// A model that calls `cancel_all` from its first potential, then is `M`.
struct CancelsOnFirstCall<'a, M>(&'a M, AtomicBool);

impl<M: SplitModel> SplitModel for CancelsOnFirstCall<'_, M> {
    type Stat = M::Stat;
    fn n_leaves(&self) -> usize {
        self.0.n_leaves()
    }
    fn stat(&self, s: Subset) -> M::Stat {
        self.0.stat(s)
    }
    fn log_psi_with(&self, a: Subset, sa: &M::Stat, b: Subset, sb: &M::Stat, p: &M::Stat) -> f64 {
        if !self.1.swap(true, Ordering::Relaxed) {
            cancel_all();
        }
        self.0.log_psi_with(a, sa, b, sb, p)
    }
}

/// A model that calls `cancel_all` while it builds its statistics table, then is `M`.
struct CancelsInStatTable<'a, M>(&'a M);

impl<M: SplitModel> SplitModel for CancelsInStatTable<'_, M> {
    type Stat = M::Stat;
    fn n_leaves(&self) -> usize {
        self.0.n_leaves()
    }
    fn stat(&self, s: Subset) -> M::Stat {
        self.0.stat(s)
    }
    fn stat_table(&self) -> Result<Vec<M::Stat>, ModelError> {
        cancel_all();
        self.0.stat_table()
    }
    fn log_psi_with(&self, a: Subset, sa: &M::Stat, b: Subset, sb: &M::Stat, p: &M::Stat) -> f64 {
        self.0.log_psi_with(a, sa, b, sb, p)
    }
}

/// Asserts `r` is the cancellation error.
#[track_caller]
fn interrupted<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) {
    match r {
        Ok(_) => panic!("{what} ran to the end although cancelled"),
        Err(e) => assert!(e.to_string().starts_with("interrupted"), "{what}: {e}"),
    }
}

/// Runs `f` with `cancel_all` called after `after`; returns how long `f` ran past that call,
/// and its result.
fn cancelled_after<T>(after: Duration, f: impl FnOnce() -> T) -> (Duration, T) {
    let t0 = Instant::now();
    let (out, called) = std::thread::scope(|s| {
        let h = s.spawn(move || {
            std::thread::sleep(after);
            cancel_all();
            Instant::now()
        });
        let out = f();
        (out, h.join().unwrap())
    });
    assert!(
        t0.elapsed() >= after,
        "the computation ended before it was cancelled"
    );
    (Instant::now().saturating_duration_since(called), out)
}

#[test]
fn every_trellis_stops_soon_after_cancel_all_and_later_runs_are_unaffected() {
    let small = DasguptaModel::new(weights(10), 1.0).unwrap();
    let before = FullTrellis::build(&small).unwrap();

    let m = DasguptaModel::new(weights(20), 1.0).unwrap();
    let (late, r) = cancelled_after(Duration::from_millis(300), || {
        FullTrellis::build_with_limit(&m, 20)
    });
    let e = r
        .map(|_| ())
        .expect_err("the full trellis over 20 leaves outlasts 0.3 s")
        .to_string();
    assert!(e.starts_with("interrupted"), "{e}");
    assert!(
        late < Duration::from_secs(1),
        "stopped {late:?} after the call"
    );

    let (late, r) = cancelled_after(Duration::from_millis(300), || {
        MapTrellis::build_with_limit(&m, 20)
    });
    assert!(r
        .map(|_| ())
        .expect_err("MAP-only over 20 leaves outlasts 0.3 s")
        .to_string()
        .starts_with("interrupted"));
    assert!(
        late < Duration::from_secs(1),
        "stopped {late:?} after the call"
    );

    let f = PairwiseAffinity::new(weights(20));
    let (late, r) = cancelled_after(Duration::from_millis(300), || {
        FlatTrellis::build_with_limit(&f, 20)
    });
    assert!(r
        .map(|_| ())
        .expect_err("the flat trellis over 20 points outlasts 0.3 s")
        .to_string()
        .starts_with("interrupted"));
    assert!(
        late < Duration::from_secs(1),
        "stopped {late:?} after the call"
    );

    // A cancellation while the statistics table is built (before the first batch) stops the
    // build: the split loop takes its token before the table.
    let t0 = Instant::now();
    interrupted(
        FullTrellis::build_with_limit(&CancelsInStatTable(&m), 20),
        "the full trellis cancelled during its table",
    );
    interrupted(
        MapTrellis::build_with_limit(&CancelsInStatTable(&m), 20),
        "the MAP-only trellis cancelled during its table",
    );
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());

    // The sparse trellis's inside pass, cancelled by its model's first potential.
    let sp = SparseTrellis::full(12).unwrap();
    let m12 = DasguptaModel::new(weights(12), 1.0).unwrap();
    let e = sp
        .run(&CancelsOnFirstCall(&m12, AtomicBool::new(false)))
        .err();
    assert!(e
        .expect("cancelled during the run")
        .to_string()
        .starts_with("interrupted"));

    // A computation started after the cancellation runs to the same bits.
    let after = FullTrellis::build(&small).unwrap();
    assert_eq!(
        after.log_partition().to_bits(),
        before.log_partition().to_bits()
    );
    assert_eq!(after.map_tree(), before.map_tree());
    assert!(sp.run(&m12).is_ok());

    a_handle_stops_a_running_build_from_another_thread_or_at_its_timeout();
}

#[test]
fn a_handle_cancelled_before_the_start_stops_every_computation_at_its_first_check() {
    let h = CancelHandle::new();
    h.cancel();
    let token = h.token();
    let m = DasguptaModel::new(weights(20), 1.0).unwrap();
    let jets = JetDataset::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/ginkgo_jets/truth_9.json"),
    )
    .unwrap();
    let ginkgo = jets.jets[0].model().unwrap();
    let small = DasguptaModel::new(weights(8), 1.0).unwrap();
    let built = FullTrellis::build(&small).unwrap();
    let sparse = SparseTrellis::full(8).unwrap();
    let sparse_run = sparse.run(&small).unwrap();
    let points: Vec<Vec<f64>> = (0..40)
        .map(|i| vec![i as f64, (i * i % 7) as f64])
        .collect();
    let t0 = Instant::now();
    scope(&token, || {
        interrupted(FullTrellis::build_with_limit(&m, 20), "the split loop");
        interrupted(FullTrellis::build(&ginkgo), "the eight lanes");
        interrupted(
            MapTrellis::build_with_limit(&m, 20),
            "the MAP-only split loop",
        );
        interrupted(MapTrellis::build(&ginkgo), "the MAP-only lanes");
        let f = PairwiseAffinity::new(weights(20));
        interrupted(FlatTrellis::build_with_limit(&f, 20), "the flat trellis");
        interrupted(sparse.run(&small), "the sparse inside pass");
        interrupted(beam_search_all(&m, 100, Dedup::Clusters), "beam search");
        let mut s = PosteriorSampler::new(&built, &small).unwrap();
        interrupted(
            s.sample_many(1_000_000, &mut StdRng::seed_from_u64(1)),
            "the sampler",
        );
        interrupted(
            sparse.sample_many(
                &small,
                &sparse_run,
                1_000_000,
                &mut StdRng::seed_from_u64(1),
            ),
            "the sparse sampler",
        );
        let settings = MethodSettings {
            particles: 10,
            weight_mode: Default::default(),
            resample_threshold: 0.5,
            parallel: true,
        };
        interrupted(fit(Method::Mpost2, &points, 0.0, &settings, 1), "the SMC");
        let leaves = Leaves::with_noise(&points, 0.1).unwrap();
        let p = Params::new(0.5, 0.2, 1.0, 1.0).unwrap();
        interrupted(
            greedy_search(
                &Observations::Gaussian(leaves),
                &p,
                &SearchSettings::default(),
                &mut StdRng::seed_from_u64(1),
            ),
            "the diffusion-tree search",
        );
        interrupted(
            generate_dataset(&GinkgoParams::qcd(), 100_000, 5, 10, 1, 10_000_000, "j"),
            "the jet generator",
        );
    });
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

/// A handle cancelled from another thread, or past its timeout, stops a running build (in the
/// sequential test: a `cancel_all` beside it would stop the build early).
fn a_handle_stops_a_running_build_from_another_thread_or_at_its_timeout() {
    let m = DasguptaModel::new(weights(20), 1.0).unwrap();
    // cancel() from another thread: the child stops, its parent stays as it was.
    let parent = CancelHandle::new();
    let child = parent.child();
    let (token, remote) = (child.token(), child.clone());
    let (late, r) = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            remote.cancel();
        });
        let t0 = Instant::now();
        let r = scope(&token, || FullTrellis::build_with_limit(&m, 20));
        (t0.elapsed(), r)
    });
    interrupted(r, "the full trellis cancelled from another thread");
    assert!(late < Duration::from_millis(1300), "stopped after {late:?}");
    assert!(child.is_cancelled() && !parent.is_cancelled() && !child.timed_out());
    // A timeout.
    let h = CancelHandle::with_timeout(Duration::from_millis(300));
    let t0 = Instant::now();
    interrupted(
        scope(&h.token(), || MapTrellis::build_with_limit(&m, 20)),
        "the MAP-only trellis past its timeout",
    );
    let late = t0.elapsed();
    assert!(late >= Duration::from_millis(300) && late < Duration::from_millis(1300));
    assert!(h.timed_out());
}
