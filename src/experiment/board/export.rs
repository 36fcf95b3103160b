//! The board writes the data it ran on, so that another tool can check them: the jets of each
//! dataset as `data_<dataset>.json` (the `data/ginkgo_jets` schema, which `source = "file"`
//! reads back), and its points or similarity matrices as `data_<dataset>.csv` (one row per
//! point: `instance`, `point`, `label`, then the features, or the similarities to every point
//! of the instance).

use super::data::{Instance, InstanceData};
use crate::data::ginkgo::JetDataset;
use crate::experiment::kind::RunContext;
use anyhow::Result;
use std::collections::BTreeMap;

/// Writes every dataset's data into the run's outputs.
pub fn write(insts: &[Instance], seed: u64, ctx: &RunContext) -> Result<()> {
    let mut by_dataset: BTreeMap<&str, Vec<&Instance>> = BTreeMap::new();
    for inst in insts {
        by_dataset.entry(inst.dataset.as_str()).or_default().push(inst);
    }
    for (name, list) in by_dataset {
        let jets: Vec<_> = list
            .iter()
            .filter_map(|i| match &i.data {
                InstanceData::Jet(j) => Some(j.clone()),
                _ => None,
            })
            .collect();
        if !jets.is_empty() {
            let ds = JetDataset {
                source: format!(
                    "trellis-lab board, dataset {name:?}, experiment.seed = {seed}: the jets it ran on"
                ),
                jets,
            };
            ctx.staging
                .write_string(&format!("data_{name}.json"), &ds.to_json())?;
            continue;
        }
        let mut csv = String::new();
        for inst in list {
            let (rows, prefix): (Vec<Vec<f64>>, &str) = match &inst.data {
                InstanceData::Points { x, .. } => (x.clone(), "x"),
                InstanceData::Graph {
                    similarities,
                    distances,
                } => {
                    let n = inst.n();
                    match distances {
                        Some(d) => (d.chunks(n.max(1)).map(<[f64]>::to_vec).collect(), "d"),
                        None => (similarities.chunks(n.max(1)).map(<[f64]>::to_vec).collect(), "s"),
                    }
                }
                InstanceData::Jet(_) => continue,
            };
            if csv.is_empty() {
                let d = rows.first().map_or(0, Vec::len);
                csv.push_str("instance,point,label");
                for k in 1..=d {
                    csv.push_str(&format!(",{prefix}{k}"));
                }
                csv.push('\n');
            }
            for (p, row) in rows.iter().enumerate() {
                let label = inst
                    .labels
                    .as_ref()
                    .and_then(|l| inst.classes.get(l[p]))
                    .map(|c| c.replace([',', '"', '\n'], " "))
                    .unwrap_or_default();
                csv.push_str(&format!("{},{p},{label}", inst.instance));
                for v in row {
                    // Shortest round-trip text: every value reads back to the same bits.
                    csv.push_str(&format!(",{v:?}"));
                }
                csv.push('\n');
            }
        }
        if !csv.is_empty() {
            ctx.staging
                .write_string(&format!("data_{name}.csv"), &csv)?;
        }
    }
    Ok(())
}
