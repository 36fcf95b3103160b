//! The Dasgupta run: every graph scored by the exact trellis, average linkage and the greedy;
//! `dasgupta.parquet`, `graphs.parquet` and `points.parquet`.

use super::DasguptaConfig;
use crate::data::graphs::{adversarial, planted_partition};
use crate::experiment::kind::RunContext;
use crate::experiment::methods::{Found, Method, MethodsSection, Problem};
use crate::experiment::table::Table;
use crate::model::{DasguptaModel, WeightMatrix};
use anyhow::{anyhow, Context, Result};

/// One graph of the study.
pub struct Instance {
    /// `"adversarial"` or `"planted"`.
    pub family: &'static str,
    /// Index within the family.
    pub index: usize,
    /// One line for tables and chart titles.
    pub description: String,
    /// The similarity weights.
    pub weights: WeightMatrix,
    /// Group of each point (the construction's rungs, or the planted clusters).
    pub groups: Vec<usize>,
    /// A name per group.
    pub group_names: Vec<String>,
    /// Order of the points around the circle of the graph drawing (empty: index order).
    pub drawing_order: Vec<usize>,
}

/// The three trees of one instance and their Dasgupta costs.
pub struct Scored {
    /// The exact MAP tree (trellis), with log Z.
    pub map: Found,
    /// Average linkage on the weights.
    pub linkage: Found,
    /// The local greedy on the cost ([`Method::Greedy`] on the Dasgupta model).
    pub greedy: Found,
    /// Dasgupta's cost of each, in that order.
    pub costs: [f64; 3],
    /// Exact log partition function at `beta`.
    pub log_z: f64,
}

/// The graphs of `cfg`: the adversarial instances, then the planted-partition graphs.
pub fn instances(cfg: &DasguptaConfig, seed: u64) -> Result<Vec<Instance>> {
    let sec = &cfg.dasgupta;
    let mut out = Vec::new();
    for (k, p) in sec.adversarial.iter().enumerate() {
        let g = adversarial(p).with_context(|| format!("dasgupta.adversarial[{k}]"))?;
        // Draw the path of pairs as a ladder bent into a circle: the even points along the
        // path, then the odd ones back, so that path edges run around the circle.
        let path = p.path_order();
        let mut drawing_order: Vec<usize> = path.iter().map(|&q| 2 * q).collect();
        drawing_order.extend(path.iter().rev().map(|&q| 2 * q + 1));
        out.push(Instance {
            family: "adversarial",
            index: k,
            description: p.describe(),
            weights: g.weights,
            groups: g.groups,
            group_names: g.group_names,
            drawing_order,
        });
    }
    if let Some(p) = &sec.planted {
        for k in 0..p.instances {
            let seed = seed.wrapping_mul(7_919).wrapping_add(k as u64);
            let g = planted_partition(&p.cluster_sizes, p.p_in, p.p_out, seed)
                .context("dasgupta.planted")?;
            out.push(Instance {
                family: "planted",
                index: k,
                description: format!(
                    "clusters {:?}, p_in {}, p_out {}, seed {seed}",
                    p.cluster_sizes, p.p_in, p.p_out
                ),
                weights: g.weights,
                groups: g.labels,
                group_names: (0..p.cluster_sizes.len())
                    .map(|c| format!("cluster {}", c + 1))
                    .collect(),
                drawing_order: vec![],
            });
        }
    }
    Ok(out)
}

/// Scores one graph: the exact MAP tree, average linkage on the weights and the greedy, each
/// through [`Method`], with their Dasgupta costs.
pub fn score(inst: &Instance, beta: f64, methods: &MethodsSection) -> Result<Scored> {
    let name = format!("{} graph {} ({})", inst.family, inst.index, inst.description);
    let model = DasguptaModel::new(inst.weights.clone(), beta).with_context(|| name.clone())?;
    let problem = Problem {
        name: &name,
        model: &model,
        similarities: Some(&inst.weights),
        truth: None,
    };
    let run = |m: Method| {
        m.run(&problem, methods)?
            .ok_or_else(|| anyhow!("{name}: {} did not apply", m.name()))
    };
    let (map, linkage, greedy) = (
        run(Method::Trellis)?,
        run(Method::AverageLinkage)?,
        run(Method::Greedy)?,
    );
    let log_z = map
        .exact
        .map(|e| e.log_z)
        .ok_or_else(|| anyhow!("{name}: the trellis gave no log Z"))?;
    Ok(Scored {
        costs: [&map, &linkage, &greedy].map(|f| model.tree_cost(&f.tree)),
        map,
        linkage,
        greedy,
        log_z,
    })
}

/// Runs the Dasgupta kind.
pub fn run(cfg: &DasguptaConfig, ctx: &mut RunContext) -> Result<()> {
    let instances = instances(cfg, ctx.seed())?;
    let pb = crate::experiment::progress_bar(instances.len() as u64, "graphs");
    let mut scored = Vec::new();
    for inst in &instances {
        scored.push(score(inst, cfg.dasgupta.beta, &cfg.methods)?);
        pb.inc(1);
    }
    pb.finish_and_clear();
    write_dasgupta_table(&instances, &scored, ctx)?;
    write_graphs_table(&instances, ctx)?;
    write_points_table(&instances, ctx)?;
    ctx.manifest.set("instances", instances.len());
    Ok(())
}

/// `dasgupta.parquet`: one row per graph.
fn write_dasgupta_table(instances: &[Instance], scored: &[Scored], ctx: &RunContext) -> Result<()> {
    let col = |f: &dyn Fn(&Scored) -> f64| scored.iter().map(|s| Some(f(s))).collect::<Vec<_>>();
    let text =
        |f: &dyn Fn(&Scored) -> String| scored.iter().map(f).collect::<Vec<_>>();
    let ins = |f: &dyn Fn(&Instance) -> u64| {
        instances.iter().map(|i| Some(f(i))).collect::<Vec<_>>()
    };
    Table::new()
        .str(
            "family",
            &instances.iter().map(|i| i.family).collect::<Vec<_>>(),
        )
        .u64("instance", &ins(&|i| i.index as u64))
        .u64("n_points", &ins(&|i| i.weights.len() as u64))
        .str(
            "description",
            &instances
                .iter()
                .map(|i| i.description.clone())
                .collect::<Vec<_>>(),
        )
        .f64("map_cost", &col(&|s| s.costs[0]))
        .f64("average_linkage_cost", &col(&|s| s.costs[1]))
        .f64("greedy_cost", &col(&|s| s.costs[2]))
        .f64("average_linkage_ratio", &col(&|s| s.costs[1] / s.costs[0]))
        .f64("greedy_ratio", &col(&|s| s.costs[2] / s.costs[0]))
        .f64("log_z", &col(&|s| s.log_z))
        .str("map_newick", &text(&|s| s.map.newick.clone()))
        .str("average_linkage_newick", &text(&|s| s.linkage.newick.clone()))
        .str("greedy_newick", &text(&|s| s.greedy.newick.clone()))
        .str(
            "map_newick_as_built",
            &text(&|s| s.map.tree.to_newick_as_built()),
        )
        .str(
            "average_linkage_newick_as_built",
            &text(&|s| s.linkage.tree.to_newick_as_built()),
        )
        .str(
            "greedy_newick_as_built",
            &text(&|s| s.greedy.tree.to_newick_as_built()),
        )
        .write_parquet(&ctx.path("dasgupta.parquet"))
}

/// `graphs.parquet`: every graph's edges (non-zero weights, `i < j`).
fn write_graphs_table(instances: &[Instance], ctx: &RunContext) -> Result<()> {
    let (mut fam, mut idx, mut ii, mut jj, mut ww) = (vec![], vec![], vec![], vec![], vec![]);
    for inst in instances {
        let n = inst.weights.len();
        for i in 0..n {
            for j in i + 1..n {
                let w = inst.weights.at(i, j);
                if w != 0.0 {
                    fam.push(inst.family);
                    idx.push(Some(inst.index as u64));
                    ii.push(Some(i as u64));
                    jj.push(Some(j as u64));
                    ww.push(Some(w));
                }
            }
        }
    }
    Table::new()
        .str("family", &fam)
        .u64("instance", &idx)
        .u64("i", &ii)
        .u64("j", &jj)
        .f64("weight", &ww)
        .write_parquet(&ctx.path("graphs.parquet"))
}

/// `points.parquet`: per graph and point, its group (index and name) and its position on the
/// circle of the graph drawing (null: points drawn in index order).
fn write_points_table(instances: &[Instance], ctx: &RunContext) -> Result<()> {
    let (mut fam, mut idx, mut point, mut group, mut name, mut pos) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for inst in instances {
        let n = inst.weights.len();
        let mut position = vec![None; n];
        for (k, &p) in inst.drawing_order.iter().enumerate() {
            position[p] = Some(k as u64);
        }
        for (i, at) in position.into_iter().enumerate() {
            fam.push(inst.family);
            idx.push(Some(inst.index as u64));
            point.push(Some(i as u64));
            group.push(Some(inst.groups[i] as u64));
            name.push(inst.group_names[inst.groups[i]].clone());
            pos.push(at);
        }
    }
    Table::new()
        .str("family", &fam)
        .u64("instance", &idx)
        .u64("point", &point)
        .u64("group", &group)
        .str("group_name", &name)
        .u64("circle_position", &pos)
        .write_parquet(&ctx.path("points.parquet"))
}
