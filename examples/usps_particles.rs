//! Why MPOST2 trails MGREEDY on USPS (experiments/coalescent_labelled/README.md): at one fixed
//! Φ (the Matérn-3/2 parameters MPOST2 learns in `configs/usps.toml`, ℓ = 2.12, σ² = 11.4), the
//! scores of MPOST2's highest-weight particle with 10 and 100 particles against the greedy rules,
//! on the first 50 training images of every digit.
//!
//! Run: `cargo run --release --example usps_particles`

use std::path::Path;
use trellis_lab::coalescent::covariance::{Covariance, Jitter, Kernel};
use trellis_lab::coalescent::gig::WeightMode;
use trellis_lab::coalescent::method::{fit, Method, MethodSettings};
use trellis_lab::coalescent::metrics::{ari_auc, ari_curve, dendrogram_purity, subtree_score};
use trellis_lab::data::matrix::PointMatrix;

fn main() -> anyhow::Result<()> {
    let m = PointMatrix::usps(Path::new("data/usps/usps_train.txt"))?;
    let labels = m.labels.clone().unwrap_or_default();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for digit in 0..10usize {
        let rows = (0..m.n_points()).filter(|&i| labels[i] == digit.to_string());
        for i in rows.take(50) {
            x.push(m.row(i).to_vec());
            y.push(digit);
        }
    }
    let cov = Covariance::new(Kernel::Matern32Grid {
        width: 16,
        height: 16,
        ell_x: 2.12,
        ell_y: 2.12,
        noise: 11.4,
    })
    .with_jitter(Jitter::RelativeTrace(1e-10));
    let w = cov.whitening()?;
    let xw = w.whiten_rows(&x)?;
    println!(
        "method               weights  particles  subtree  ARI AUC  purity  seconds (2 cores)"
    );
    let (paper, exact) = (WeightMode::PaperFaithful, WeightMode::Exact);
    for (method, particles, weight_mode) in [
        (Method::Mpost2, 10usize, paper),
        (Method::Mpost2, 10, exact),
        (Method::Mpost2, 100, paper),
        (Method::Greedy, 1, paper),
        (Method::Mgreedy, 1, paper),
        (Method::GreedyExact, 1, paper),
    ] {
        let s = MethodSettings {
            particles,
            weight_mode,
            resample_threshold: 0.5,
            parallel: true,
        };
        let t0 = std::time::Instant::now();
        let f = fit(method, &xw, w.ln_det_half(), &s, 1)?;
        let secs = t0.elapsed().as_secs_f64();
        let h = f.best();
        println!(
            "{:<20} {:>7}  {:>9}  {:>7.3}  {:>7.3}  {:>6.3}  {:>7.2}",
            method.display(),
            if weight_mode == exact {
                "exact"
            } else {
                "paper"
            },
            particles,
            subtree_score(h, &y)?,
            ari_auc(&ari_curve(h, &y)?)?,
            dendrogram_purity(h, &y)?,
            secs
        );
    }
    Ok(())
}
