//! Times the full trellis (log Z + MAP + finite-tree count + entropy), or with `--map` the
//! MAP-only trellis ([`MapTrellis`]: the same MAP, splits skipped by the model's bound), on the
//! generated W jet that `configs/scaling.toml` uses for each N (seed 22 + N), and prints each
//! result's bits so that two builds (or the two trellises) can be compared bit for bit.
//!
//! `cargo run --release --example trellis_speed [--map] [--split-loop | --lanes]
//! [--energy ginkgo|dasgupta|hcc|generator] [N ...]` (default 16 18 20): the path the library
//! dispatches to; `--split-loop` times either trellis's path before the eight-lane one (the
//! baseline), `--lanes` the full trellis's eight lanes even where the dispatch takes the split
//! loop (the scalar set), and `TRELLIS_LAB_SIMD=scalar|avx2|avx512|neon` narrows the instruction
//! set of every path. `--energy` (full trellis only) picks the energy: the Ginkgo model of the
//! jet (the default), Dasgupta's cost on Gaussian similarities of N points in the plane
//! (`data::graphs::gaussian_similarities`), the HCC energy on signed uniform affinities
//! (`signed_uniform_weights`), both drawn with the jet's seed, or the Ginkgo generator's
//! density of the same jet.

use std::time::Instant;
use trellis_lab::data::ginkgo::{generate_dataset, GinkgoParams};
use trellis_lab::data::graphs::{gaussian_similarities, signed_uniform_weights};
use trellis_lab::exact::{FullTrellis, MapTrellis};
use trellis_lab::model::{CorrelationModel, DasguptaModel, GinkgoGeneratorModel, SplitModel};

/// Which trellis path to time.
#[derive(Clone, Copy)]
enum Path {
    Dispatched,
    SplitLoop,
    Lanes,
}

/// Times the full trellis of `m` by `path` and prints its bits.
fn time_full<M: SplitModel>(m: &M, n: usize, path: Path) {
    let isa = trellis_lab::simd::Isa::detect();
    let splits = (3f64.powi(n as i32) + 1.0) / 2.0 - 2f64.powi(n as i32);
    let t0 = Instant::now();
    let t = match path {
        Path::SplitLoop => FullTrellis::build_split_loop(m, 26).unwrap(),
        Path::Lanes => FullTrellis::build_lanes(m, 26, isa).unwrap(),
        Path::Dispatched => FullTrellis::build_with_limit(m, 26).unwrap(),
    };
    let s = t0.elapsed().as_secs_f64();
    println!(
        "N = {n}: {s:.3} s, {:.3e} splits/s; log Z {:016x} ({:.6}), MAP {:016x} ({:.6}), count {}, entropy {:016x}",
        splits / s,
        t.log_partition().to_bits(),
        t.log_partition(),
        t.map_log_likelihood().to_bits(),
        t.map_log_likelihood(),
        t.n_trees_finite(),
        t.entropy().to_bits()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let map_only = args.iter().any(|a| a == "--map");
    let split_loop = args.iter().any(|a| a == "--split-loop");
    let lanes = args.iter().any(|a| a == "--lanes");
    let energy = args
        .iter()
        .position(|a| a == "--energy")
        .map(|i| args.get(i + 1).expect("--energy takes a name").clone())
        .unwrap_or_else(|| "ginkgo".to_string());
    let sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--energy"))
        .map(|(_, a)| a)
        .map(|a| {
            a.parse()
                .expect("sizes are integers (options: --map, --split-loop, --lanes)")
        })
        .collect();
    let sizes = if sizes.is_empty() {
        vec![16, 18, 20]
    } else {
        sizes
    };
    let isa = trellis_lab::simd::Isa::detect();
    let path = if split_loop {
        "the split loop".to_string()
    } else if lanes || map_only || isa.lanes_beat_split_loop() {
        format!("the eight lanes ({isa})")
    } else {
        format!("the split loop (dispatched for {isa})")
    };
    println!(
        "threads: {}, instruction set: {isa}, path: {path}, energy: {energy}",
        rayon::current_num_threads()
    );
    for n in sizes {
        let ds = generate_dataset(
            &GinkgoParams::w_jet(),
            1,
            n,
            n,
            22 + n as u64,
            1_000_000,
            "speed",
        )
        .expect("the generator makes a jet of this size");
        let m = ds.jets[0].model().unwrap();
        let splits = (3f64.powi(n as i32) + 1.0) / 2.0 - 2f64.powi(n as i32);
        let path = if split_loop {
            Path::SplitLoop
        } else if lanes {
            Path::Lanes
        } else {
            Path::Dispatched
        };
        let t0 = Instant::now();
        if map_only {
            let t = if split_loop {
                MapTrellis::build_split_loop(&m, 30).unwrap()
            } else {
                MapTrellis::build_with_limit(&m, 30).unwrap()
            };
            let s = t0.elapsed().as_secs_f64();
            println!(
                "N = {n}: {s:.3} s, {:.3e} splits/s; MAP {:016x} ({:.6}); scored {:.2} % of the splits",
                splits / s,
                t.map_log_likelihood().to_bits(),
                t.map_log_likelihood(),
                100.0 * t.splits_scored() as f64 / t.splits_visited() as f64,
            );
            continue;
        }
        let seed = 22 + n as u64;
        match energy.as_str() {
            "ginkgo" => time_full(&m, n, path),
            "dasgupta" => {
                let w = gaussian_similarities(n, seed).unwrap();
                time_full(&DasguptaModel::new(w, 1.0).unwrap(), n, path)
            }
            "hcc" => {
                let w = signed_uniform_weights(n, 1.0, seed).unwrap();
                time_full(&CorrelationModel::new(w, 1.0).unwrap(), n, path)
            }
            "generator" => {
                let j = &ds.jets[0];
                let g = GinkgoGeneratorModel::new(j.leaves.clone(), j.t_cut, j.lam).unwrap();
                time_full(&g, n, path)
            }
            other => panic!("unknown energy {other}: ginkgo, dasgupta, hcc or generator"),
        }
    }
}
