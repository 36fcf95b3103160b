//! `cancel::cancel_all` stops the exact trellises (full, MAP-only, sparse, flat) within a
//! fraction of a second, and a computation started afterwards runs to the same bits as before.
//! One test function: cancellation is process-wide, so these steps must not overlap.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use trellis_lab::cancel::cancel_all;
use trellis_lab::exact::{FullTrellis, MapTrellis, SparseTrellis};
use trellis_lab::flat::{FlatTrellis, PairwiseAffinity};
use trellis_lab::model::{DasguptaModel, SplitModel, WeightMatrix};
use trellis_lab::subset::Subset;

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
}
