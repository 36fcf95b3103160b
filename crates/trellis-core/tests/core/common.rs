//! Helpers shared by the core crate's integration tests: the repository's data and generated jets.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository root (the data files live in its `data/` folder).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Ginkgo models of a reference jet file in `data/ginkgo_jets/`.
pub fn reference_jets(file: &str) -> Vec<trellis_core::model::GinkgoModel> {
    let path = root().join("data/ginkgo_jets").join(file);
    trellis_core::data::ginkgo::JetDataset::load(&path)
        .unwrap()
        .jets
        .iter()
        .map(|j| j.model().unwrap())
        .collect()
}

/// Ginkgo models of `n_jets` generated jets with `min..=max` leaves, each with the root rate of
/// `params` (the generator gets `max_tries` tries).
pub fn generated_jets(
    params: &trellis_core::data::ginkgo::GinkgoParams,
    n_jets: usize,
    (min, max): (usize, usize),
    seed: u64,
    max_tries: usize,
) -> Vec<trellis_core::model::GinkgoModel> {
    trellis_core::data::ginkgo::generate_dataset(params, n_jets, min, max, seed, max_tries, "g")
        .unwrap()
        .jets
        .iter()
        .map(|j| {
            j.model()
                .unwrap()
                .with_root_rate(params.lambda_root)
                .unwrap()
        })
        .collect()
}
