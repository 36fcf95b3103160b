//! A* exact MAP (`exact::astar`) on Ginkgo W jets and on Dasgupta graphs of growing size:
//! certified or not, the bound gap, the work, against the full trellis's MAP where it fits.
//!
//! `cargo run --release --example astar -- ginkgo|planted|signed [N ...] [--seconds S] [--jets J]`
//!
//! `planted`: 3-block planted-partition graphs (`p_in` 0.8, `p_out` 0.1), Dasgupta's cost;
//! `signed`: uniform weights in [-1, 1]; `ginkgo`: W jets (root scale 80², λ_root 3).

use std::time::Instant;
use trellis_lab::data::ginkgo::{generate_dataset, GinkgoParams};
use trellis_lab::data::graphs::{planted_partition, signed_uniform_weights};
use trellis_lab::exact::{
    astar, AstarOptions, Budget, DasguptaBound, FullTrellis, GinkgoBound, SubtreeBound,
};
use trellis_lab::model::{DasguptaModel, SplitModel};

fn report<M: SplitModel, B: SubtreeBound<M>>(name: &str, m: &M, b: &B, seconds: f64) {
    let n = m.n_leaves();
    let opts = AstarOptions {
        budget: Budget {
            max_seconds: Some(seconds),
            max_bytes: Some(8 << 30),
            ..Budget::default()
        },
        ..AstarOptions::default()
    };
    let r = astar(m, b, &opts).unwrap();
    let (full, full_s) = if n <= 20 {
        let t0 = Instant::now();
        let v = FullTrellis::build(m).unwrap().map_log_likelihood();
        (
            format!("{v:.4}"),
            format!("{:.2}", t0.elapsed().as_secs_f64()),
        )
    } else {
        ("-".into(), "-".into())
    };
    println!(
        "| {name} | {n} | {} | {:?} | {:.4} | {:.4} | {:.3} | {} | {} | {} | {:.2e} | {:.1} | {:.2} | {full} | {full_s} |",
        r.certified,
        r.stop,
        r.log_likelihood,
        r.upper_bound,
        r.gap(),
        r.stats.iterations,
        r.stats.clusters_expanded,
        r.stats.reenumerations,
        r.stats.splits_evaluated as f64,
        r.stats.peak_bytes as f64 / (1u64 << 20) as f64,
        r.stats.seconds,
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "planted".into());
    let (mut sizes, mut seconds, mut jets) = (Vec::new(), 60.0, 2usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--seconds S")
            }
            "--jets" => jets = args.next().and_then(|s| s.parse().ok()).expect("--jets J"),
            s => sizes.push(s.parse::<usize>().expect("sizes are integers")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![12, 16, 20];
    }
    println!("| instance | N | certified | stop | log-likelihood | upper bound | gap | iterations | expanded | re-enumerations | splits | peak MiB | seconds | full-trellis MAP | full-trellis s |");
    println!("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        for k in 0..jets {
            let seed = (n * 100 + k) as u64;
            match what.as_str() {
                "ginkgo" => {
                    let ds =
                        generate_dataset(&GinkgoParams::w_jet(), 1, n, n, seed, 1_000_000, "w")
                            .unwrap();
                    let m = ds.jets[0].model().unwrap().with_root_rate(3.0).unwrap();
                    report(&format!("w[{seed}]"), &m, &GinkgoBound::new(&m), seconds);
                }
                "planted" => {
                    let sizes = [n / 3, n / 3, n - 2 * (n / 3)];
                    let g = planted_partition(&sizes, 0.8, 0.1, seed).unwrap();
                    let m = DasguptaModel::new(g.weights, 1.0).unwrap();
                    report(
                        &format!("planted[{seed}]"),
                        &m,
                        &DasguptaBound::new(&m),
                        seconds,
                    );
                }
                "signed" => {
                    let w = signed_uniform_weights(n, 1.0, seed).unwrap();
                    let m = DasguptaModel::new(w, 1.0).unwrap();
                    report(
                        &format!("signed[{seed}]"),
                        &m,
                        &DasguptaBound::new(&m),
                        seconds,
                    );
                }
                other => panic!("unknown instance family {other:?}: ginkgo, planted or signed"),
            }
        }
    }
}
