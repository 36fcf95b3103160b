//! `[pydt.map]`: the greedy Bayesian EM search (spec §2.9) per model and replicate (in
//! parallel, each on one core with its own random stream; with `four_clusters` every replicate
//! draws its own data set, shared by the models). Tables: `maps.parquet` (one row per model ×
//! replicate), `map_nodes.parquet` (every node of every MAP tree), `map_trace.parquet` (the best
//! objective after the start and after every search step) and `points.parquet` (the data).

use super::data::{self, Dataset};
use super::mcmc::shape;
use super::{stream, MapPart, ModelSpec, Observation, PydtSection, Source};
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::pydt::metrics::{dendrogram_purity, subtree_score};
use crate::pydt::em::TimeDensity;
use crate::pydt::newick::to_newick;
use crate::pydt::probit::Binary;
use crate::pydt::search::{greedy_search, Observations, SearchResult};
use crate::pydt::tree::NONE;
use crate::pydt::{Leaves, PydtTree};
use anyhow::{Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;
use std::time::Instant;

/// One search.
struct Found {
    model: usize,
    replicate: usize,
    result: SearchResult,
    /// The density the objective is of: "t" or "s" (the final EM's `time_density` resolved).
    density: &'static str,
    seconds: f64,
}

fn observations(model: &ModelSpec, rows: &[Vec<f64>]) -> Result<Observations> {
    Ok(match model.observation {
        Observation::Gaussian => Observations::Gaussian(Leaves::with_noise(rows, model.noise)?),
        Observation::Probit => Observations::Probit(Binary::from_rows(rows)?),
    })
}

fn search(
    part: &MapPart,
    model: &ModelSpec,
    data: &Dataset,
    seed: u64,
    (mi, r): (usize, usize),
) -> Result<Found> {
    let obs = observations(model, &data.rows)?;
    let params = model.params()?;
    // θ and α are the PYDT's: a DDT (θ = α = 0) never learns them, as in the sampler.
    let mut settings = part.search;
    if model.is_ddt() {
        for em in [&mut settings.em, &mut settings.final_em] {
            em.learn_theta = false;
            em.learn_alpha = false;
        }
    }
    // Probit fits run EM on EP sites (noisy leaves): always the s-density.
    let density = match &obs {
        Observations::Gaussian(leaves) => settings.final_em.density_for(leaves)?,
        Observations::Probit(_) => TimeDensity::LogScale,
    };
    let mut rng = StdRng::seed_from_u64(stream(seed, 3, mi, r));
    let t0 = Instant::now();
    let result = greedy_search(&obs, &params, &settings, &mut rng)?;
    Ok(Found {
        model: mi,
        replicate: r,
        result,
        density: density.key(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The data sets of the replicates: one per replicate for generated data, else the one given.
pub fn replicate_data(
    s: &PydtSection,
    replicates: usize,
    base: &Dataset,
    seed: u64,
) -> Result<Vec<Dataset>> {
    if s.data.source != Source::FourClusters {
        return Ok(vec![base.clone()]);
    }
    (0..replicates)
        .map(|r| {
            if r == 0 {
                Ok(base.clone())
            } else {
                data::load(&s.data, &s.models, seed, r)
            }
        })
        .collect()
}

/// Runs the searches and writes the tables.
pub fn run(s: &PydtSection, part: &MapPart, sets: &[Dataset], ctx: &mut RunContext) -> Result<()> {
    let seed = ctx.seed();
    let data_of = |r: usize| &sets[r.min(sets.len() - 1)];
    let jobs: Vec<(usize, usize)> = (0..part.seeds)
        .flat_map(|r| (0..s.models.len()).map(move |m| (m, r)))
        .collect();
    let pb = crate::experiment::progress_bar(jobs.len() as u64, "searches");
    let done: Vec<Result<Found>> = jobs
        .par_iter()
        .map(|&(m, r)| {
            let out = search(part, &s.models[m], data_of(r), seed, (m, r)).with_context(|| {
                format!("pydt.map: model {:?} replicate {}", s.models[m].name, r + 1)
            });
            pb.inc(1);
            out
        })
        .collect();
    pb.finish_and_clear();
    let found: Vec<Found> = done.into_iter().collect::<Result<_>>()?;
    write_maps(s, &found, &data_of)?.write_parquet(&ctx.path("maps.parquet"))?;
    write_nodes(s, &found, &data_of).write_parquet(&ctx.path("map_nodes.parquet"))?;
    write_trace(s, &found).write_parquet(&ctx.path("map_trace.parquet"))?;
    Ok(())
}

/// Purity and subtree score of `tree` when every leaf has a group (and some group has two).
fn scores(tree: &PydtTree, data: &Dataset) -> (Option<f64>, Option<f64>) {
    match data.labels() {
        Some(y) => (
            dendrogram_purity(tree, &y).ok(),
            subtree_score(tree, &y).ok(),
        ),
        None => (None, None),
    }
}

fn write_maps<'a>(
    s: &PydtSection,
    found: &[Found],
    data_of: &dyn Fn(usize) -> &'a Dataset,
) -> Result<Table> {
    let mut newick = Vec::new();
    let (mut purity, mut subtree) = (Vec::new(), Vec::new());
    let (mut root, mut internal, mut max) = (Vec::new(), Vec::new(), Vec::new());
    for f in found {
        let d = data_of(f.replicate);
        let t = &f.result.tree;
        newick.push(to_newick(t, Some(&d.names))?);
        let (p, st) = scores(t, d);
        purity.push(p);
        subtree.push(st);
        let (r, i, m) = shape(t);
        root.push(Some(r as u64));
        internal.push(Some(i as u64));
        max.push(Some(m as u64));
    }
    let x = |g: &dyn Fn(&Found) -> f64| found.iter().map(|f| Some(g(f))).collect::<Vec<_>>();
    Ok(Table::new()
        .str(
            "model",
            &found
                .iter()
                .map(|f| s.models[f.model].name.as_str())
                .collect::<Vec<_>>(),
        )
        .u64(
            "replicate",
            &found
                .iter()
                .map(|f| Some(f.replicate as u64 + 1))
                .collect::<Vec<_>>(),
        )
        .f64("objective", &x(&|f| f.result.objective))
        .str(
            "time_density",
            &found.iter().map(|f| f.density).collect::<Vec<_>>(),
        )
        .f64(
            "start_objective",
            &found
                .iter()
                .map(|f| f.result.trace.first().copied())
                .collect::<Vec<_>>(),
        )
        .u64("root_children", &root)
        .u64("internal_nodes", &internal)
        .u64("max_children", &max)
        .u64(
            "em_runs",
            &found
                .iter()
                .map(|f| Some(f.result.em_runs as u64))
                .collect::<Vec<_>>(),
        )
        .f64("theta", &x(&|f| f.result.params.theta))
        .f64("alpha", &x(&|f| f.result.params.alpha))
        .f64("c", &x(&|f| f.result.params.c))
        .f64("sigma2", &x(&|f| f.result.params.sigma2))
        .f64("purity", &purity)
        .f64("subtree", &subtree)
        .f64("seconds", &x(&|f| f.seconds))
        .str("newick", &newick))
}

/// Every node of every MAP tree: leaves keep their data index, internal nodes are numbered on
/// from n in post-order; the root's parent is empty (the zero node).
fn write_nodes<'a>(
    s: &PydtSection,
    found: &[Found],
    data_of: &dyn Fn(usize) -> &'a Dataset,
) -> Table {
    let (mut model, mut rep, mut node, mut parent, mut time, mut name, mut group) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for f in found {
        let d = data_of(f.replicate);
        let t = &f.result.tree;
        let n = t.n_leaves();
        let mut id = vec![usize::MAX; t.capacity()];
        for (v, slot) in id.iter_mut().enumerate().take(n) {
            *slot = v;
        }
        for (k, v) in t.internal_nodes().into_iter().enumerate() {
            id[v] = n + k;
        }
        let mut order = Vec::new();
        t.postorder(&mut order);
        let mut rows: Vec<(usize, Option<u64>, f64, String, String)> = order
            .iter()
            .map(|&v| {
                let p = t.node(v).parent;
                let leaf = v < n;
                (
                    id[v],
                    (p != NONE).then(|| id[p] as u64),
                    t.time(v),
                    if leaf {
                        d.names[v].clone()
                    } else {
                        String::new()
                    },
                    match d.group.get(v).copied().flatten() {
                        Some(g) if leaf => d.group_names[g].clone(),
                        _ => String::new(),
                    },
                )
            })
            .collect();
        rows.sort_by_key(|r| r.0);
        for (v, p, tm, nm, g) in rows {
            model.push(s.models[f.model].name.clone());
            rep.push(Some(f.replicate as u64 + 1));
            node.push(Some(v as u64));
            parent.push(p);
            time.push(Some(tm));
            name.push(nm);
            group.push(g);
        }
    }
    Table::new()
        .str("model", &model)
        .u64("replicate", &rep)
        .u64("node", &node)
        .u64("parent", &parent)
        .f64("time", &time)
        .str("name", &name)
        .str("group", &group)
}

fn write_trace(s: &PydtSection, found: &[Found]) -> Table {
    let (mut model, mut rep, mut step, mut obj) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for f in found {
        for (k, &v) in f.result.trace.iter().enumerate() {
            model.push(s.models[f.model].name.as_str());
            rep.push(Some(f.replicate as u64 + 1));
            step.push(Some(k as u64));
            obj.push(Some(v));
        }
    }
    Table::new()
        .str("model", &model)
        .u64("replicate", &rep)
        .u64("step", &step)
        .f64("objective", &obj)
}

/// The points of every data set used, with names, groups and coordinates `x1`, `x2`, ….
pub fn write_points(sets: &[Dataset]) -> Table {
    let dim = sets.first().map_or(0, Dataset::dim);
    let (mut rep, mut point, mut name, mut group) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut coords: Vec<Vec<Option<f64>>> = vec![Vec::new(); dim];
    for (r, d) in sets.iter().enumerate() {
        for (i, row) in d.rows.iter().enumerate() {
            rep.push(Some(r as u64 + 1));
            point.push(Some(i as u64));
            name.push(d.names[i].as_str());
            group.push(
                d.group[i]
                    .map(|g| d.group_names[g].as_str())
                    .unwrap_or_default(),
            );
            for (c, v) in coords.iter_mut().zip(row) {
                c.push(Some(*v));
            }
        }
    }
    let mut t = Table::new()
        .u64("replicate", &rep)
        .u64("point", &point)
        .str("name", &name)
        .str("group", &group);
    for (j, c) in coords.iter().enumerate() {
        t = t.f64(&format!("x{}", j + 1), c);
    }
    t
}
