//! Measures `log Z` by fast subset convolution (`O(N^2 2^N)`) against the flat trellis
//! (`O(3^N)`): time of each and the absolute error of `log Z`, for random signed affinities of
//! three magnitudes, N = 4 to 20 (or the sizes given as arguments).
//!
//! `cargo run --release --example flat_convolution [N ...]`

use std::time::Instant;
use trellis_lab::data::graphs::signed_uniform_weights;
use trellis_lab::flat::{log_partition_by_convolution, FlatTrellis, PairwiseAffinity};

fn model(n: usize, scale: f64, seed: u64) -> PairwiseAffinity {
    PairwiseAffinity::new(signed_uniform_weights(n, scale, seed).unwrap())
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes are integers"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![4, 8, 12, 16, 18, 20]
    } else {
        sizes
    };
    println!("| N | affinity scale | trellis | convolution | log Z (trellis) | |error| of log Z | digits lost | error bound |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        for scale in [0.1, 1.0, 3.0] {
            let m = model(n, scale, n as u64);
            let t0 = Instant::now();
            let exact = FlatTrellis::build(&m)
                .expect("N within the limit")
                .log_partition();
            let t_trellis = t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let r = log_partition_by_convolution(&m).expect("N within the limit");
            let t_conv = t0.elapsed().as_secs_f64();
            println!(
                "| {n} | {scale} | {t_trellis:.4} s | {t_conv:.4} s | {exact:.6} | {:.1e} | {:.1} | {:.1e} |",
                (r.log_z - exact).abs(),
                r.digits_lost,
                r.relative_error_bound(n)
            );
        }
    }
}
