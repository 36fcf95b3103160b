//! The shipped configs (`configs/*.toml`), built into the program: `check` compares a run's
//! config with the one its reference numbers were measured on, and runs those numbers only when
//! they match.

/// `(experiment.name, config text)` of every shipped config.
pub const CONFIGS: &[(&str, &str)] = &[
    ("animals33", include_str!("../../configs/animals33.toml")),
    (
        "animals33_smoke",
        include_str!("../../configs/animals33_smoke.toml"),
    ),
    ("astar", include_str!("../../configs/astar.toml")),
    (
        "astar_smoke",
        include_str!("../../configs/astar_smoke.toml"),
    ),
    ("bhc", include_str!("../../configs/bhc.toml")),
    ("bhc_purity", include_str!("../../configs/bhc_purity.toml")),
    (
        "bhc_purity_smoke",
        include_str!("../../configs/bhc_purity_smoke.toml"),
    ),
    ("bhc_smoke", include_str!("../../configs/bhc_smoke.toml")),
    ("board", include_str!("../../configs/board.toml")),
    (
        "board_smoke",
        include_str!("../../configs/board_smoke.toml"),
    ),
    (
        "coalescent_covariance",
        include_str!("../../configs/coalescent_covariance.toml"),
    ),
    (
        "coalescent_greedy",
        include_str!("../../configs/coalescent_greedy.toml"),
    ),
    (
        "coalescent_learning_smoke",
        include_str!("../../configs/coalescent_learning_smoke.toml"),
    ),
    (
        "coalescent_smoke",
        include_str!("../../configs/coalescent_smoke.toml"),
    ),
    (
        "coalescent_structure",
        include_str!("../../configs/coalescent_structure.toml"),
    ),
    (
        "coalescent_structure_exact",
        include_str!("../../configs/coalescent_structure_exact.toml"),
    ),
    (
        "cost_functions",
        include_str!("../../configs/cost_functions.toml"),
    ),
    (
        "cost_functions_smoke",
        include_str!("../../configs/cost_functions_smoke.toml"),
    ),
    ("dasgupta", include_str!("../../configs/dasgupta.toml")),
    ("flat_pam50", include_str!("../../configs/flat_pam50.toml")),
    ("jets", include_str!("../../configs/jets.toml")),
    ("jets_large", include_str!("../../configs/jets_large.toml")),
    ("jets_smoke", include_str!("../../configs/jets_smoke.toml")),
    ("labelled", include_str!("../../configs/labelled.toml")),
    (
        "labelled_smoke",
        include_str!("../../configs/labelled_smoke.toml"),
    ),
    ("pam50", include_str!("../../configs/pam50.toml")),
    (
        "posterior_sampling",
        include_str!("../../configs/posterior_sampling.toml"),
    ),
    (
        "pydt_density",
        include_str!("../../configs/pydt_density.toml"),
    ),
    (
        "pydt_density_smoke",
        include_str!("../../configs/pydt_density_smoke.toml"),
    ),
    (
        "pydt_synthetic",
        include_str!("../../configs/pydt_synthetic.toml"),
    ),
    (
        "pydt_synthetic_smoke",
        include_str!("../../configs/pydt_synthetic_smoke.toml"),
    ),
    (
        "pythia_jets",
        include_str!("../../configs/pythia_jets.toml"),
    ),
    (
        "pythia_jets_large",
        include_str!("../../configs/pythia_jets_large.toml"),
    ),
    (
        "pythia_jets_large_smoke",
        include_str!("../../configs/pythia_jets_large_smoke.toml"),
    ),
    (
        "pythia_jets_smoke",
        include_str!("../../configs/pythia_jets_smoke.toml"),
    ),
    ("scaling", include_str!("../../configs/scaling.toml")),
    (
        "scaling_smoke",
        include_str!("../../configs/scaling_smoke.toml"),
    ),
    ("sparse", include_str!("../../configs/sparse.toml")),
    (
        "sparse_generator_order",
        include_str!("../../configs/sparse_generator_order.toml"),
    ),
    ("usps", include_str!("../../configs/usps.toml")),
    ("usps_smoke", include_str!("../../configs/usps_smoke.toml")),
];

use serde_json::Value;

/// The dotted keys where `run` (a run's config in normal form) differs from the shipped config
/// `name`'s, or `None` when no config of that name is shipped. The output folder and thread
/// count never matter; paths are compared by file name (a copy of the same data elsewhere
/// matches).
pub fn differences(name: &str, run: &Value) -> Option<Vec<String>> {
    let (_, text) = CONFIGS.iter().find(|(n, _)| *n == name)?;
    let reference = super::config::parse_in(
        &super::Registry::builtin(),
        text,
        std::path::Path::new("configs"),
    )
    .ok()?
    .value;
    let mut out = differing_keys(&reference, run, true);
    out.retain(|k| k != "experiment.output_dir" && k != "experiment.threads");
    Some(out)
}

/// Every dotted key where two configs in normal form differ; with `paths_by_name`, two path
/// strings with the same file name count as equal.
pub fn differing_keys(a: &Value, b: &Value, paths_by_name: bool) -> Vec<String> {
    let mut out = Vec::new();
    diff(a, b, "", paths_by_name, &mut out);
    out
}

fn diff(a: &Value, b: &Value, at: &str, paths_by_name: bool, out: &mut Vec<String>) {
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diff(u, v, &join(k), paths_by_name, out),
                    _ => out.push(join(k)),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diff(u, v, &format!("{at}[{i}]"), paths_by_name, out);
            }
        }
        (Value::String(x), Value::String(y)) if x != y => {
            let file = |s: &str| std::path::Path::new(s).file_name().map(|f| f.to_owned());
            let paths = paths_by_name && (x.contains('/') || y.contains('/')) && file(x) == file(y);
            if !paths {
                out.push(at.to_string());
            }
        }
        _ if a == b => {}
        _ => out.push(at.to_string()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_shipped_config_is_built_in_and_matches_itself() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension()? == "toml").then(|| p.file_stem().unwrap().to_string_lossy().into())
            })
            .collect();
        files.sort();
        let built: Vec<String> = super::CONFIGS.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(files, built, "regenerate src/experiment/references.rs");
        let reg = crate::experiment::Registry::builtin();
        for (name, text) in super::CONFIGS {
            let cfg = crate::experiment::config::parse_in(&reg, text, &dir).unwrap();
            assert_eq!(cfg.experiment.name, *name);
            assert_eq!(super::differences(name, &cfg.value), Some(vec![]), "{name}");
        }
        let jets = super::CONFIGS
            .iter()
            .find(|(n, _)| *n == "jets_smoke")
            .unwrap()
            .1;
        let changed = jets
            .replace("seed = 101", "seed = 7")
            .replace("n_jets = 300", "n_jets = 500");
        let cfg = crate::experiment::config::parse_in(&reg, &changed, &dir).unwrap();
        assert_eq!(
            super::differences("jets_smoke", &cfg.value),
            Some(vec![
                "experiment.seed".to_string(),
                "jets.n_jets".to_string()
            ])
        );
        assert_eq!(super::differences("mine", &cfg.value), None);
    }
}
