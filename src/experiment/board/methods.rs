//! The board's methods: one arm each, where each applies, and the trees they return as
//! [`Hierarchy`]s for common scoring.
//!
//! - **Energy-model methods** (trellis, sparse trellis, beam search, greedy) run on the
//!   instance's own split energy: the Ginkgo likelihood of a jet, the HCC energy over centred
//!   correlations of points, Dasgupta's cost over a graph's similarities. Jets need `N <= 64`
//!   (bitset clusters); points and graphs above 64 take the wide path ([`super::wide`]), where
//!   beam search and the sparse trellis run within `board.max_search_seconds`; the trellis
//!   needs `N <= max_exact_leaves`.
//! - **Average linkage** (kodama, any N): on a jet, Euclidean distances of its leaves' features
//!   (below); on points and graphs, `max(s) - s` of the similarities (average linkage of that
//!   dissimilarity merges exactly as average linkage of the similarities), by
//!   [`scipy_average_linkage`], SciPy's tree and tie rule, as Python's `average_linkage`; on a
//!   distance matrix, the distances themselves (SciPy's `linkage(squareform(D), "average")`).
//! - **Euclidean average linkage and Ward linkage** (kodama, any N; what SciPy's
//!   `linkage(X, "average")` and `linkage(X, "ward")` compute): Euclidean distances of the
//!   points' raw features, as a user passing `X` to SciPy gets them (not standardised); on a
//!   jet, of its leaves' features (below) unstandardised. Graphs have no features.
//! - **kt, Cambridge/Aachen, anti-kt**: jets only, E-scheme, `R = kt_radius`.
//! - **MPOST2, MGREEDY** (Kingman coalescent, isotropic Φ = σ² I) and **DDT, PYDT** (greedy
//!   EM search, Gaussian leaves with noise): on points, their columns standardised; on a jet,
//!   each leaf's (rapidity − the jet's, azimuth − the jet's wrapped to (−π, π], ln p_T),
//!   standardised.
//! - **Truth**: a generated jet's own tree.

use super::data::{Instance, InstanceData};
use super::BoardSection;
use crate::coalescent::covariance::Kernel;
use crate::coalescent::method::{fit, Method as Coalescent, MethodSettings};
use crate::hierarchy::Hierarchy;
use crate::model::ginkgo::FourVector;
use crate::pydt::bp::Leaves;
use crate::pydt::search::{greedy_search, Observations, SearchSettings};
use crate::pydt::Params;
use crate::search::{generalised_kt, scipy_average_linkage, KtAlgorithm};
use crate::tree::Tree;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// A method on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum BoardMethod {
    /// The exact full trellis's MAP tree.
    Trellis,
    /// A sparse trellis over a beam's trees.
    Sparse,
    /// Beam search.
    Beam,
    /// Greedy agglomeration on the energy.
    Greedy,
    /// Average linkage (kodama).
    AverageLinkage,
    /// Average linkage of Euclidean distances of the raw features (SciPy's `"average"`).
    AverageEuclidean,
    /// Ward linkage of the raw features (SciPy's `"ward"`).
    Ward,
    /// kt (p = 1).
    Kt,
    /// Cambridge/Aachen (p = 0).
    CambridgeAachen,
    /// anti-kt (p = −1).
    AntiKt,
    /// Henao & Lucas's MPOST2 SMC (MAP particle).
    Mpost2,
    /// Henao & Lucas's MGREEDY.
    Mgreedy,
    /// Dirichlet diffusion tree, greedy EM search.
    Ddt,
    /// Pitman–Yor diffusion tree, greedy EM search.
    Pydt,
    /// The generator's tree (jets).
    Truth,
    /// Bayesian hierarchical clustering, greedy (points; [`super::bayes`]).
    Bhc,
    /// Greedy Bayesian rose trees (points; [`super::bayes`]).
    Brt,
}

impl BoardMethod {
    /// Every method, in table and chart order (a method's place is its colour in every chart).
    pub const ALL: [BoardMethod; 17] = [
        BoardMethod::Trellis,
        BoardMethod::Sparse,
        BoardMethod::Beam,
        BoardMethod::Greedy,
        BoardMethod::AverageLinkage,
        BoardMethod::AverageEuclidean,
        BoardMethod::Ward,
        BoardMethod::Kt,
        BoardMethod::CambridgeAachen,
        BoardMethod::AntiKt,
        BoardMethod::Mpost2,
        BoardMethod::Mgreedy,
        BoardMethod::Ddt,
        BoardMethod::Pydt,
        BoardMethod::Truth,
        BoardMethod::Bhc,
        BoardMethod::Brt,
    ];

    /// Whether the method runs only when listed by name (BHC and BRT): `board.methods` left
    /// out runs every other one ([`BoardMethod::default_methods`]), so that the runs and
    /// accepted numbers of configs written before them stay as they were.
    pub fn asked_by_name(self) -> bool {
        matches!(self, BoardMethod::Bhc | BoardMethod::Brt)
    }

    /// The methods a board runs when `board.methods` is not given.
    pub fn default_methods() -> Vec<BoardMethod> {
        BoardMethod::ALL
            .into_iter()
            .filter(|m| !m.asked_by_name())
            .collect()
    }

    /// The name in configs and tables.
    pub fn name(self) -> &'static str {
        match self {
            BoardMethod::Trellis => "trellis",
            BoardMethod::Sparse => "sparse",
            BoardMethod::Beam => "beam",
            BoardMethod::Greedy => "greedy",
            BoardMethod::AverageLinkage => "average_linkage",
            BoardMethod::AverageEuclidean => "average_euclidean",
            BoardMethod::Ward => "ward",
            BoardMethod::Kt => "kt",
            BoardMethod::CambridgeAachen => "cambridge_aachen",
            BoardMethod::AntiKt => "anti_kt",
            BoardMethod::Mpost2 => "mpost2",
            BoardMethod::Mgreedy => "mgreedy",
            BoardMethod::Ddt => "ddt",
            BoardMethod::Pydt => "pydt",
            BoardMethod::Truth => "truth",
            BoardMethod::Bhc => "bhc",
            BoardMethod::Brt => "brt",
        }
    }

    /// The name in charts.
    pub fn display(self) -> &'static str {
        match self {
            BoardMethod::Trellis => "Trellis (exact)",
            BoardMethod::Sparse => "Sparse trellis",
            BoardMethod::Beam => "Beam search",
            BoardMethod::Greedy => "Greedy",
            BoardMethod::AverageLinkage => "Average linkage",
            BoardMethod::AverageEuclidean => "Average (Euclidean)",
            BoardMethod::Ward => "Ward",
            BoardMethod::Kt => "kt",
            BoardMethod::CambridgeAachen => "Cambridge/Aachen",
            BoardMethod::AntiKt => "anti-kt",
            BoardMethod::Mpost2 => "MPOST2",
            BoardMethod::Mgreedy => "MGREEDY",
            BoardMethod::Ddt => "DDT",
            BoardMethod::Pydt => "PYDT",
            BoardMethod::Truth => "Truth",
            BoardMethod::Bhc => "BHC",
            BoardMethod::Brt => "BRT",
        }
    }

    /// The method named `name`.
    pub fn from_name(name: &str) -> Option<BoardMethod> {
        BoardMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the method uses the instance's split energy (jets: `N <= 64`).
    pub fn uses_energy(self) -> bool {
        matches!(
            self,
            BoardMethod::Trellis | BoardMethod::Sparse | BoardMethod::Beam | BoardMethod::Greedy
        )
    }

    /// Whether the method cannot take identical points (the coalescent's likelihood, and the
    /// diffusion trees' with noiseless leaves, are improper with two leaves at the same place),
    /// and so runs on the distinct points ([`Copies`]).
    pub fn needs_distinct_points(self, s: &BoardSection) -> bool {
        match self {
            BoardMethod::Mpost2 | BoardMethod::Mgreedy => true,
            BoardMethod::Ddt | BoardMethod::Pydt => s.pydt.noise == 0.0,
            _ => false,
        }
    }

    /// Whether it runs on `inst` under `s`, and if not, why.
    pub fn applies(self, inst: &Instance, s: &BoardSection) -> std::result::Result<(), String> {
        let n = inst.n();
        let jet = matches!(inst.data, InstanceData::Jet(_));
        let graph = matches!(inst.data, InstanceData::Graph { .. });
        if let Some(why) = super::wide::refusal(self, n, s).filter(|_| !jet) {
            return Err(why);
        }
        match self {
            BoardMethod::Trellis if n > s.max_exact_leaves => Err(format!(
                "N = {n} is above board.max_exact_leaves = {}",
                s.max_exact_leaves
            )),
            m if m.uses_energy() && jet && n > super::wide::MASK_LEAVES => Err(format!(
                "N = {n} is above 64 leaves: the Ginkgo likelihood's clusters are 64-bit masks (jets stay at 64; points and graphs run at any N)"
            )),

            BoardMethod::Kt | BoardMethod::CambridgeAachen | BoardMethod::AntiKt if !jet => {
                Err("jets only".into())
            }
            BoardMethod::Mpost2
            | BoardMethod::Mgreedy
            | BoardMethod::Ddt
            | BoardMethod::Pydt
            | BoardMethod::AverageEuclidean
            | BoardMethod::Ward
                if graph =>
            {
                Err("needs points (a graph has none)".into())
            }
            BoardMethod::Mpost2 | BoardMethod::Mgreedy if n > s.coalescent.max_points => {
                Err(format!(
                    "N = {n} is above board.coalescent.max_points = {}",
                    s.coalescent.max_points
                ))
            }
            BoardMethod::Ddt | BoardMethod::Pydt if n > s.pydt.max_points => Err(format!(
                "N = {n} is above board.pydt.max_points = {}",
                s.pydt.max_points
            )),
            BoardMethod::Bhc | BoardMethod::Brt => super::bayes::applies(inst, s),
            BoardMethod::Truth => match &inst.data {
                InstanceData::Jet(j) if j.truth_tree.is_some() => Ok(()),
                _ => Err("no generator tree".into()),
            },
            _ => Ok(()),
        }
    }
}

impl TryFrom<String> for BoardMethod {
    type Error = String;

    fn try_from(s: String) -> std::result::Result<Self, String> {
        BoardMethod::from_name(&s).ok_or_else(|| {
            format!(
                "unknown board method {s:?}; use one of {}",
                BoardMethod::ALL.map(|m| m.name()).join(", ")
            )
        })
    }
}

impl From<BoardMethod> for String {
    fn from(m: BoardMethod) -> String {
        m.name().to_string()
    }
}

/// What a method built: its tree and, where the method has one, its own objective.
pub struct Built {
    /// The tree over the instance's points.
    pub tree: Hierarchy,
    /// The method's own objective (the coalescent's log joint, the diffusion tree's
    /// log p(X, T, s), BHC's and BRT's log p(D|T)); the energy methods' value is their energy,
    /// recorded elsewhere.
    pub own_objective: Option<f64>,
    /// Further numbers of the method's own, as `(metric, value)` rows (BHC's lower bound).
    pub extra: Vec<(String, f64)>,
    /// What a reader of the tree should know about how it was built (BHC's model), or empty.
    pub note: String,
}

impl Built {
    /// A tree with no objective of its own.
    pub fn of(tree: Hierarchy) -> Built {
        Built {
            tree,
            own_objective: None,
            extra: Vec::new(),
            note: String::new(),
        }
    }

    /// The same with the method's own objective.
    pub fn with_objective(self, v: f64) -> Built {
        Built {
            own_objective: Some(v),
            ..self
        }
    }
}

/// Runs `method` on `inst` (which it must [`BoardMethod::applies`] to); `seed` is the job's.
pub fn build(method: BoardMethod, inst: &Instance, s: &BoardSection, seed: u64) -> Result<Built> {
    let plain = |t: Tree| -> Result<Built> {
        Ok(Built::of(Hierarchy::from_tree(&t)?))
    };
    match method {
        m if m.uses_energy() => match super::wide::WideEnergy::of(inst)? {
            Some(e) => Ok(Built::of(e.best_tree(m, s)?)),
            None => plain(super::energy::best_tree(m, inst, s)?),
        },
        BoardMethod::AverageLinkage => {
            let n = inst.n();
            if let InstanceData::Graph {
                distances: Some(dist),
                ..
            } = &inst.data
            {
                // A distance matrix: the distances themselves (SciPy's linkage of squareform(D)).
                if n == 1 {
                    return plain(Tree::leaf(0));
                }
                let mut d = Vec::with_capacity(n * (n - 1) / 2);
                for i in 0..n {
                    d.extend_from_slice(&dist[i * n + i + 1..(i + 1) * n]);
                }
                return linkage(d, n, kodama::Method::Average);
            }
            match inst.similarities() {
                // The core crate's function, which Python's average_linkage calls too.
                Some(sim) => Ok(Built::of(scipy_average_linkage(sim, n)?)),
                None if n == 1 => plain(Tree::leaf(0)),
                None => linkage(euclidean_distances(&features(inst)?), n, kodama::Method::Average),
            }
        }
        BoardMethod::AverageEuclidean | BoardMethod::Ward => {
            let n = inst.n();
            if n == 1 {
                return plain(Tree::leaf(0));
            }
            let x = match &inst.data {
                InstanceData::Points { x, .. } => x.clone(),
                InstanceData::Jet(jet) => jet_features(&jet.leaves),
                InstanceData::Graph { .. } => bail!("a graph has no points to run on"),
            };
            let m = if method == BoardMethod::Ward {
                kodama::Method::Ward
            } else {
                kodama::Method::Average
            };
            linkage(euclidean_distances(&x), n, m)
        }
        BoardMethod::Kt | BoardMethod::CambridgeAachen | BoardMethod::AntiKt => {
            let InstanceData::Jet(jet) = &inst.data else {
                bail!("{} runs on jets only", method.name());
            };
            let alg = match method {
                BoardMethod::Kt => KtAlgorithm::Kt,
                BoardMethod::CambridgeAachen => KtAlgorithm::CambridgeAachen,
                _ => KtAlgorithm::AntiKt,
            };
            plain(generalised_kt(&jet.leaves, alg, s.kt_radius)?)
        }
        BoardMethod::Mpost2 | BoardMethod::Mgreedy => {
            let (x, copies) = distinct_features(inst, method, s)?;
            let c = &s.coalescent;
            let (xw, ln_det_half) = isotropic_whitening(&x, c.sigma2)?;
            let ms = MethodSettings {
                particles: c.particles,
                weight_mode: Default::default(),
                resample_threshold: c.resample_threshold,
                parallel: true,
            };
            let m = if method == BoardMethod::Mpost2 {
                Coalescent::Mpost2
            } else {
                Coalescent::Mgreedy
            };
            let f = fit(m, &xw, ln_det_half, &ms, seed)?;
            let h = f.best();
            let joint = crate::coalescent::history::ln_joint(h, &xw, ln_det_half)?;
            Ok(Built::of(copies.extend(Hierarchy::from_history(h)?)?).with_objective(joint))
        }
        BoardMethod::Ddt | BoardMethod::Pydt => {
            let (x, copies) = distinct_features(inst, method, s)?;
            let p = &s.pydt;
            let params = if method == BoardMethod::Ddt {
                Params::new(0.0, 0.0, p.c, p.sigma2)?
            } else {
                Params::new(p.theta, p.alpha, p.c, p.sigma2)?
            };
            let obs = Observations::Gaussian(Leaves::with_noise(&x, p.noise)?);
            let settings = SearchSettings {
                iterations: p.iterations,
                ..SearchSettings::default()
            };
            let r = greedy_search(&obs, &params, &settings, &mut StdRng::seed_from_u64(seed))?;
            Ok(Built::of(copies.extend(Hierarchy::from_pydt(&r.tree)?)?).with_objective(r.objective))
        }
        BoardMethod::Bhc | BoardMethod::Brt => super::bayes::build(method, inst, s),
        BoardMethod::Truth => {
            let InstanceData::Jet(jet) = &inst.data else {
                bail!("only generated jets carry their tree");
            };
            let v = jet
                .truth_tree
                .as_ref()
                .context("the jet has no generator tree")?;
            plain(Tree::from_nested_json(v).with_context(|| format!("{}'s tree", jet.name))?)
        }
        m => bail!("no arm for {}", m.name()),
    }
}

/// Identical points of an instance, for a method that cannot take them
/// ([`BoardMethod::needs_distinct_points`]): it runs on the distinct points, and its tree is
/// extended to every point, each copy joined to its first occurrence at height 0.
pub struct Copies {
    /// Points of the instance.
    n: usize,
    /// The distinct points (first occurrences), in order.
    kept: Vec<usize>,
    /// `(copy, its first point)`.
    copies: Vec<(usize, usize)>,
}

impl Copies {
    /// The identical points of `x` (the instance's points or a jet's leaf features).
    pub fn of(x: &[Vec<f64>]) -> Copies {
        let (kept, copies) = crate::hierarchy::distinct_rows(x);
        Copies {
            n: x.len(),
            kept,
            copies,
        }
    }

    /// `(copy, its first point)` of every copy.
    pub fn pairs(&self) -> &[(usize, usize)] {
        &self.copies
    }

    /// A tree over the distinct points, extended to every point.
    fn extend(&self, h: Hierarchy) -> Result<Hierarchy> {
        if self.copies.is_empty() {
            return Ok(h);
        }
        Ok(h.with_copies(self.n, &self.kept, &self.copies)?)
    }
}

/// The standardised features `method` runs on (the distinct points only, when it needs them
/// distinct and the instance has copies) and the copies left out.
fn distinct_features(
    inst: &Instance,
    method: BoardMethod,
    s: &BoardSection,
) -> Result<(Vec<Vec<f64>>, Copies)> {
    let x = features(inst)?;
    if !method.needs_distinct_points(s) {
        let none = Copies {
            n: x.len(),
            kept: (0..x.len()).collect(),
            copies: Vec::new(),
        };
        return Ok((x, none));
    }
    let copies = Copies::of(&x);
    if copies.copies.is_empty() {
        return Ok((x, copies));
    }
    let distinct = copies.kept.iter().map(|&r| x[r].clone()).collect();
    Ok((distinct, copies))
}

/// The condensed Euclidean distances between the rows of `x` (pairs `(i, j)`, `i < j`, row by
/// row: SciPy's `pdist` order), each the square root of the summed squared differences.
pub fn euclidean_distances(x: &[Vec<f64>]) -> Vec<f64> {
    let n = x.len();
    let mut d = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let e: f64 = x[i].iter().zip(&x[j]).map(|(a, b)| (a - b) * (a - b)).sum();
            d.push(e.sqrt());
        }
    }
    d
}

/// The tree kodama's `linkage` of the condensed dissimilarities `d` over `n` points builds with
/// `method` (SciPy's algorithms: the nearest-neighbour chain for average and Ward linkage).
fn linkage(mut d: Vec<f64>, n: usize, method: kodama::Method) -> Result<Built> {
    let dendrogram = kodama::linkage(&mut d, n, method);
    Ok(Built::of(Hierarchy::from_linkage(&dendrogram)?))
}

/// The rows `x` whitened for Φ = σ² I, and ½ log|Φ|: what the Cholesky factor of Φ gives (the
/// same bits: each value over σ = √σ², the d logs of σ summed in order), without the `d × d`
/// matrix and its `O(d³)` factorisation (10,000 features: 800 MB and minutes).
fn isotropic_whitening(x: &[Vec<f64>], sigma2: f64) -> Result<(Vec<Vec<f64>>, f64)> {
    let d = x.first().map_or(0, Vec::len);
    Kernel::Isotropic { dim: d, sigma2 }.validate()?;
    let sigma = sigma2.sqrt();
    let ln_det_half: f64 = (0..d).map(|_| sigma.ln()).sum();
    let xw = x
        .iter()
        .map(|row| row.iter().map(|v| v / sigma).collect())
        .collect();
    Ok((xw, ln_det_half))
}

/// Standardised features for the feature-based methods (see the module documentation).
pub fn features(inst: &Instance) -> Result<Vec<Vec<f64>>> {
    let raw = match &inst.data {
        InstanceData::Points { x, .. } => x.clone(),
        InstanceData::Jet(jet) => jet_features(&jet.leaves),
        InstanceData::Graph { .. } => bail!("a graph has no points to run on"),
    };
    if raw.is_empty() || raw[0].is_empty() {
        bail!("{}/{} has no features", inst.dataset, inst.instance);
    }
    let mut x = raw;
    crate::experiment::pydt::data::standardize(&mut x);
    Ok(x)
}

/// (y − y_jet, φ − φ_jet wrapped to (−π, π], ln p_T) of each leaf.
pub fn jet_features(leaves: &[FourVector]) -> Vec<Vec<f64>> {
    let mut total = [0.0; 4];
    for p in leaves {
        for k in 0..4 {
            total[k] += p[k];
        }
    }
    let (_, y0, phi0) = crate::search::kt::kinematics(&total);
    leaves
        .iter()
        .map(|p| {
            let (pt2, y, phi) = crate::search::kt::kinematics(p);
            let mut dphi = phi - phi0;
            let pi = std::f64::consts::PI;
            if dphi > pi {
                dphi -= 2.0 * pi;
            } else if dphi <= -pi {
                dphi += 2.0 * pi;
            }
            // ln p_T, floored at a tiny momentum so that a p_T = 0 leaf stays finite.
            vec![y - y0, dphi, 0.5 * pt2.max(1e-300).ln()]
        })
        .collect()
}
