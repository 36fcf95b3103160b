//! Times the flat cluster trellis: build (log Z + MAP) and all pairwise marginals, for random
//! signed affinities at N = 16 and N = 20 (or the sizes given as arguments).
//!
//! `cargo run --release --example flat_speed [--split-loop] [N ...]`: `--split-loop` times the
//! path before the eight lanes (the baseline); `TRELLIS_LAB_SIMD=scalar|avx2|avx512|neon`
//! narrows the lanes' instruction set (with `scalar` the dispatch takes the split loop).

use std::time::Instant;
use trellis_lab::data::graphs::signed_uniform_weights;
use trellis_lab::flat::{FlatTrellis, PairwiseAffinity};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split_loop = args.iter().any(|a| a == "--split-loop");
    let sizes: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| {
            a.parse()
                .expect("sizes are integers (option: --split-loop)")
        })
        .collect();
    let sizes = if sizes.is_empty() {
        vec![16, 20]
    } else {
        sizes
    };
    println!("threads: {}", rayon::current_num_threads());
    for n in sizes {
        let model = PairwiseAffinity::new(signed_uniform_weights(n, 1.0, n as u64).unwrap());
        let t0 = Instant::now();
        let trellis = if split_loop {
            FlatTrellis::build_split_loop(&model, 32).unwrap()
        } else {
            FlatTrellis::build(&model).unwrap()
        };
        let build = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let p = trellis.pairwise_marginals();
        let pairwise = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        let lp = trellis.pairwise_log_marginals();
        let log_pairwise = t2.elapsed().as_secs_f64();
        let map = trellis.map_clustering();
        let terms = (3f64.powi(n as i32) - 1.0) / 2.0;
        println!(
            "N = {n}: build (log Z + MAP) {build:.3} s ({:.2e} terms/s), pairwise marginals {pairwise:.3} s, \
             pairwise log-marginals {log_pairwise:.3} s, total {:.3} s; log Z = {:.6}, MAP = {:.6} with {} clusters, P(0~1) = {:.6} (log {:.6})",
            terms / build,
            build + pairwise,
            trellis.log_partition(),
            trellis.map_log_energy(),
            map.len(),
            p[0][1],
            lp[0][1]
        );
    }
}
