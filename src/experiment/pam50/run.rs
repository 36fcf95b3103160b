//! The pam50 run: per weighting, the local greedy, average linkage and the exact MAP tree;
//! `pam50_samples.parquet`, `pam50_weights.parquet`, `pam50_trees.parquet` and `trees.nwk`.

use super::{Pam50Config, Weighting};
use crate::data::pam50::Pam50;
use crate::exact::FullTrellis;
use crate::experiment::kind::RunContext;
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::experiment::table::Table;
use crate::metrics::dendrogram_purity;
use crate::model::{CorrelationModel, WeightMatrix};
use crate::tree::{n_binary_trees, Tree};
use anyhow::{anyhow, Context, Result};

/// The `algorithm` of the exact MAP tree's rows.
pub const TRELLIS: &str = "trellis_map";

/// One tree found for one weighting.
pub struct Row {
    /// `"raw"` or `"centred"`.
    pub weighting: &'static str,
    /// `"greedy"`, `"average_linkage"` or [`TRELLIS`].
    pub algorithm: &'static str,
    /// The tree.
    pub tree: Tree,
    /// Its HCC energy (Eq. 7).
    pub energy: f64,
    /// Dendrogram purity over the labelled samples.
    pub purity: Option<f64>,
    /// Exact facts of the trellis row.
    pub exact: Option<TrellisFacts>,
}

/// What the trellis knows beyond its MAP tree.
#[derive(Clone, Copy, Debug)]
pub struct TrellisFacts {
    /// Log partition function.
    pub log_z: f64,
    /// Posterior entropy over trees, in nats.
    pub entropy: f64,
    /// Trees whose energy ties with the MAP's.
    pub n_map_trees: u128,
}

/// The three trees of one weighting: the local greedy on the energy and average linkage on the
/// weights through [`Method`], then the exact MAP tree. The trellis is built here rather than
/// through [`Method::Trellis`] (which returns the same tree and log Z) because Figure 8 also
/// needs its posterior entropy and its count of tied MAP trees.
pub fn trees(
    weights: &WeightMatrix,
    beta: f64,
    labels: &[Option<usize>],
    weighting: &'static str,
    methods: &MethodsSection,
) -> Result<Vec<Row>> {
    let name = format!("pam50 subsample, {weighting} weights");
    let model = CorrelationModel::new(weights.clone(), beta).with_context(|| name.clone())?;
    let problem = Problem {
        name: &name,
        model: &model,
        similarities: Some(weights),
        truth: None,
    };
    let row = |algorithm, tree: Tree, exact| Row {
        weighting,
        algorithm,
        energy: model.tree_energy(&tree),
        purity: dendrogram_purity(&tree, labels),
        tree,
        exact,
    };
    let mut rows = Vec::new();
    for (algorithm, m) in [
        ("greedy", Method::Greedy),
        ("average_linkage", Method::AverageLinkage),
    ] {
        let f = m
            .run(&problem, methods)?
            .ok_or_else(|| anyhow!("{name}: {} did not apply", m.name()))?;
        rows.push(row(algorithm, f.tree, None));
    }
    let trellis = FullTrellis::build_with_limit(&model, methods.max_exact_leaves)
        .with_context(|| name.clone())?;
    let facts = TrellisFacts {
        log_z: trellis.log_partition(),
        entropy: trellis.entropy(),
        n_map_trees: trellis.n_map_trees(&model, 1e-9)?,
    };
    rows.push(row(TRELLIS, trellis.map_tree(), Some(facts)));
    Ok(rows)
}

/// Runs the pam50 kind.
pub fn run(cfg: &Pam50Config, ctx: &mut RunContext) -> Result<()> {
    let sec = &cfg.pam50;
    let (data, idx) = Pam50::load_subsample(
        &sec.path,
        sec.per_class,
        sec.unlabelled,
        ctx.seed(),
        cfg.methods.max_exact_leaves,
        "pam50",
    )?;
    let n = idx.len();
    let classes = data.classes();
    let subtype: Vec<String> = idx
        .iter()
        .map(|&i| data.subtypes[i].clone().unwrap_or_else(|| "unknown".into()))
        .collect();
    let labels: Vec<Option<usize>> = idx
        .iter()
        .map(|&i| {
            let s = data.subtypes[i].as_ref()?;
            classes.iter().position(|c| c == s)
        })
        .collect();
    let names: Vec<String> = idx.iter().map(|&i| data.samples[i].clone()).collect();
    Table::new()
        .u64("leaf", &(0..n).map(|k| Some(k as u64)).collect::<Vec<_>>())
        .str("sample", &names)
        .str("subtype", &subtype)
        .write_parquet(&ctx.path("pam50_samples.parquet"))?;

    let mut rows: Vec<Row> = Vec::new();
    let mut weight_cols: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    for &w in &sec.weights {
        let name = w.name();
        let weights = data
            .correlation_weights(&idx, w == Weighting::Centred)
            .context("building the correlation weights")?;
        for i in 0..n {
            weight_cols.push((
                format!("{name}_{i}"),
                (0..n).map(|j| Some(weights.at(i, j))).collect(),
            ));
        }
        let negative = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| weights.at(i, j) < 0.0)
            .count();
        ctx.manifest.set(&format!("negative_pairs_{name}"), negative);
        rows.extend(trees(&weights, sec.beta, &labels, name, &cfg.methods)?);
    }

    write_trees_table(&rows, &names, ctx)?;
    let mut wt = Table::new().str("sample", &names);
    for (col, v) in &weight_cols {
        wt = wt.f64(col, v);
    }
    wt.write_parquet(&ctx.path("pam50_weights.parquet"))?;
    let name_of = |i: usize| names[i].clone();
    let mut nwk = String::new();
    for r in &rows {
        nwk.push_str(&format!(
            "# {} weights, {}: energy {:.4}\n{}\n",
            r.weighting,
            r.algorithm,
            r.energy,
            r.tree.to_newick_with(name_of)
        ));
    }
    ctx.staging.write_string("trees.nwk", &nwk)?;
    ctx.manifest.set("samples", &names);
    ctx.manifest.set("n_leaves", n);
    // The legend of the charts: every subtype of the data, sorted.
    ctx.manifest.set("subtypes", &classes);
    Ok(())
}

/// `pam50_trees.parquet`: one row per weighting and method.
fn write_trees_table(rows: &[Row], names: &[String], ctx: &RunContext) -> Result<()> {
    let n = names.len();
    let exact = |f: &dyn Fn(&TrellisFacts) -> f64| {
        rows.iter()
            .map(|r| r.exact.as_ref().map(f))
            .collect::<Vec<_>>()
    };
    let text = |f: &dyn Fn(&Row) -> String| rows.iter().map(f).collect::<Vec<_>>();
    Table::new()
        .str(
            "weighting",
            &rows.iter().map(|r| r.weighting).collect::<Vec<_>>(),
        )
        .str(
            "algorithm",
            &rows.iter().map(|r| r.algorithm).collect::<Vec<_>>(),
        )
        .f64(
            "energy",
            &rows.iter().map(|r| Some(r.energy)).collect::<Vec<_>>(),
        )
        .f64(
            "dendrogram_purity",
            &rows.iter().map(|r| r.purity).collect::<Vec<_>>(),
        )
        .f64("log_z", &exact(&|e| e.log_z))
        .f64("posterior_entropy_nats", &exact(&|e| e.entropy))
        .f64("n_map_trees", &exact(&|e| e.n_map_trees as f64))
        .f64(
            "log_n_trees",
            &rows
                .iter()
                .map(|_| n_binary_trees(n).map(|t| (t as f64).ln()))
                .collect::<Vec<_>>(),
        )
        .str(
            "newick",
            &text(&|r| r.tree.to_newick_with(|i| names[i].clone())),
        )
        // Exact counts as text: they can exceed 2^53 (f64) and u64.
        .str(
            "n_map_trees_exact",
            &text(&|r| {
                r.exact
                    .map(|e| e.n_map_trees.to_string())
                    .unwrap_or_default()
            }),
        )
        .str("newick_as_built", &text(&|r| r.tree.to_newick_as_built()))
        .write_parquet(&ctx.path("pam50_trees.parquet"))
}
