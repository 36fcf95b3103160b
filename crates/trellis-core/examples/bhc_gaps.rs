//! BHC against the exact answers on real data (iris and animals33 subsets).
//!
//! `cargo run --release -p trellis-core --example bhc_gaps [-- --max-n 20 --alpha 1]`
//!
//! For iris (Normal–Inverse-Wishart, `from_data(0.1, 0.25)`) and animals33 (Beta–Bernoulli,
//! `from_data(2)`) subsets of N evenly spaced rows, prints the DPM evidence, BHC's bound, the
//! best tree's bound, the gaps in nats, the ARI of BHC's r < 0.5 cut against the exact MAP
//! partition and the co-clustering differences; greedy BRT against the best rose tree; and where the exact time goes at the largest N.
//! Greedy BHC's and BRT's speed at N = 1,000 is measured by `cargo bench -p trellis-lab-benches
//! --bench bhc`.

use std::path::PathBuf;
use std::time::Instant;
use trellis_core::bhc::exact::{best_bhc_tree, compare};
use trellis_core::bhc::rose::best_rose_tree;
use trellis_core::bhc::{
    brt_greedy, BetaBernoulli, ConjugateModel, DpmEnergy, NormalInverseWishart,
};
use trellis_core::data::matrix::{Column, MatrixSpec, PointMatrix};
use trellis_core::flat::{ClusterEnergy, FlatTrellis};

fn rows(m: &PointMatrix) -> Vec<Vec<f64>> {
    (0..m.n_points()).map(|i| m.row(i).to_vec()).collect()
}

fn pick(x: &[Vec<f64>], n: usize) -> Vec<Vec<f64>> {
    (0..n).map(|i| x[i * x.len() / n].clone()).collect()
}

fn report<M: ConjugateModel>(name: &str, m: &M, alpha: f64) {
    let t = Instant::now();
    let c = compare(m, alpha).unwrap();
    println!(
        "{name:>10} N={:>2} log p(D)={:>10.4} bound={:>10.4} best={:>10.4} mean={:>10.4} | gap ev-greedy={:>7.4} ev-best={:>7.4} best-greedy={:>9.6} greedy_is_best={} | K cut={} map={} ARI={:.3} | coclust max={:.3} mean={:.4} | {:.2}s",
        c.n,
        c.dpm.log_evidence,
        c.greedy_log_bound,
        c.best_log_bound,
        c.mean_log_bound,
        c.gap_evidence_greedy,
        c.gap_evidence_best,
        c.gap_best_greedy,
        c.greedy_is_best,
        c.cut_labels.iter().max().unwrap() + 1,
        c.map_labels.iter().max().unwrap() + 1,
        c.ari_cut_map,
        c.coclustering_max_abs_diff,
        c.coclustering_mean_abs_diff,
        t.elapsed().as_secs_f64()
    );
    assert!((c.tree_trellis_log_bound - c.greedy_log_bound).abs() < 1e-9);
}

fn brt_report<M: ConjugateModel>(name: &str, m: &M) {
    let greedy = brt_greedy(m, 0.5).unwrap();
    let best = best_rose_tree(m, 0.5).unwrap();
    println!(
        "{name:>10} N={:>2} BRT gamma=0.5: greedy log p(D|T)={:>10.4} ({} internal nodes), best={:>10.4} ({} internal nodes), gap={:.6}",
        m.n_points(),
        greedy.log_p_tree(),
        greedy.hierarchy().n_internal(),
        best.log_p,
        best.hierarchy.n_internal(),
        best.log_p - greedy.log_p_tree()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: f64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().unwrap())
    };
    let max_n = arg("--max-n", 20.0) as usize;
    let alpha = arg("--alpha", 1.0);
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let iris = PointMatrix::load(
        &data.join("labelled/iris.csv"),
        &MatrixSpec {
            label_column: Some(Column::Name("class".into())),
            ..MatrixSpec::with_header()
        },
    )
    .unwrap();
    let animals = PointMatrix::animals33(&data.join("animals33/animals33_features.tsv")).unwrap();
    let (iris, animals) = (rows(&iris), rows(&animals));
    println!("alpha = {alpha}");
    for n in (8..=max_n).step_by(4) {
        let x = pick(&iris, n);
        report(
            "iris",
            &NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap(),
            alpha,
        );
        let x = pick(&animals, n);
        report(
            "animals33",
            &BetaBernoulli::from_data(&x, 2.0).unwrap(),
            alpha,
        );
    }

    // Greedy BRT against the best rose tree (gamma = 0.5), to N = 16.
    for n in (8..=max_n.min(16)).step_by(4) {
        let x = pick(&iris, n);
        brt_report(
            "iris",
            &NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap(),
        );
        let x = pick(&animals, n);
        brt_report("animals33", &BetaBernoulli::from_data(&x, 2.0).unwrap());
    }

    // Where the exact time goes at the largest N (animals33: the widest data).
    let x = pick(&animals, max_n);
    let m = BetaBernoulli::from_data(&x, 2.0).unwrap();
    let e = DpmEnergy::new(&m, alpha).unwrap();
    let t = Instant::now();
    let table = e.log_energy_table().unwrap();
    let t_table = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let z = FlatTrellis::build(&e).unwrap().log_partition();
    let t_flat = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let best = best_bhc_tree(&table, max_n).unwrap();
    println!(
        "animals33 N={max_n}: energy table {t_table:.2}s, flat trellis (with its own table) {t_flat:.2}s, tree recursion {:.2}s (log Z {z:.4}, log max f {:.4})",
        t.elapsed().as_secs_f64(),
        best.log_f_max
    );
}
