//! Gaussian belief propagation over the divergence locations (spec §2.5, paper eq. 12).
//!
//! Given the tree and times, x_v | x_{pa(v)} ~ N(x_{pa(v)}, σ²(t_v − t_{pa(v)}) I) with the zero node
//! at the origin, and the D dimensions are independent. Leaves carry a Gaussian message per
//! dimension, N(x_{id}; mean, var): var = 0 for exactly observed points (the paper's Gaussian
//! model), var = 1 with mean = the auxiliary z for the probit sampler (any per-dimension Gaussian
//! sites, e.g. EP's, work the same way).
//!
//! * Upward pass (post-order): each node's product of children's messages N(μ_v, w_v), and
//!   log p(X | T, t, σ²) = Σ_v log Z_v + log N(0; μ_root, w_root + σ² t_root).
//! * Downward pass: for every node the cavity at its parent without its own message, N(a, α),
//!   which gives the messages from outside, the location marginals and the edge statistics
//!   E[(x_v − x_u)²] of the EM bound (spec §2.5, "Edge statistics").
//! * Backward sampling of all locations (σ² Gibbs, probit auxiliaries).

use super::tree::{PydtTree, NONE};
use super::PydtError;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::numeric::LN_2PI;

/// Leaf messages: leaf i, dimension k is N(x_{ik}; `mean[i·d + k]`, `var[i·d + k]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Leaves {
    /// Number of leaves.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Means, row-major n × d.
    pub mean: Vec<f64>,
    /// Variances (≥ 0), row-major n × d.
    pub var: Vec<f64>,
}

impl Leaves {
    /// Exactly observed points (rows of `x`, each of length `d`): variance 0.
    pub fn exact(x: &[Vec<f64>]) -> Result<Self, PydtError> {
        Self::with_noise(x, 0.0)
    }

    /// Points observed with Gaussian noise of variance `noise` in every dimension. Errors: rows
    /// of different lengths, a non-finite value, a negative or non-finite noise.
    pub fn with_noise(x: &[Vec<f64>], noise: f64) -> Result<Self, PydtError> {
        let n = x.len();
        let d = x.first().map_or(0, Vec::len);
        if !(noise >= 0.0 && noise.is_finite()) {
            return Err(PydtError::Data(format!(
                "leaf noise {noise} must be finite and >= 0"
            )));
        }
        for (i, r) in x.iter().enumerate() {
            if r.len() != d {
                return Err(PydtError::Data(format!(
                    "row {i} has {} values, row 0 has {d}",
                    r.len()
                )));
            }
            if let Some(k) = r.iter().position(|v| !v.is_finite()) {
                return Err(PydtError::Data(format!(
                    "value {} at row {i} column {k} is not finite; remove or impute it",
                    r[k]
                )));
            }
        }
        let mean: Vec<f64> = x.iter().flat_map(|r| r.iter().copied()).collect();
        Ok(Self {
            n,
            d,
            var: vec![noise; mean.len()],
            mean,
        })
    }

    /// Check the shape (n·d means and variances, variances finite and ≥ 0, means finite).
    pub fn validate(&self) -> Result<(), PydtError> {
        if self.mean.len() != self.n * self.d || self.var.len() != self.n * self.d {
            return Err(PydtError::Data(format!(
                "{} means and {} variances for {} points in {} dimensions",
                self.mean.len(),
                self.var.len(),
                self.n,
                self.d
            )));
        }
        if let Some(i) = self.mean.iter().position(|x| !x.is_finite()) {
            return Err(PydtError::Data(format!(
                "value {} at row {} column {} is not finite; remove or impute it",
                self.mean[i],
                i / self.d.max(1),
                i % self.d.max(1)
            )));
        }
        if self.var.iter().any(|v| !(*v >= 0.0 && v.is_finite())) {
            return Err(PydtError::Data(
                "leaf variances must be finite and >= 0".into(),
            ));
        }
        Ok(())
    }

    /// With exact leaves (variance 0), two identical rows make the posterior improper (their
    /// cherry's divergence time runs to t = 1): the first such pair, if any.
    pub fn duplicate_exact_rows(&self) -> Option<(usize, usize)> {
        let mut seen = std::collections::HashMap::new();
        for i in 0..self.n {
            if self.var[i * self.d..(i + 1) * self.d]
                .iter()
                .any(|&v| v > 0.0)
            {
                continue;
            }
            let key: Vec<u64> = self.row(i).iter().map(|x| (x + 0.0).to_bits()).collect();
            if let Some(&j) = seen.get(&key) {
                return Some((j, i));
            }
            seen.insert(key, i);
        }
        None
    }

    /// Row `i` of the means.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.mean[i * self.d..(i + 1) * self.d]
    }
}

/// Workspace and results of the passes, reused across evaluations (no allocation once sized).
#[derive(Debug, Clone, Default)]
pub struct Messages {
    d: usize,
    order: Vec<usize>,
    /// Up-message means μ_v (capacity × d).
    mu: Vec<f64>,
    /// Up-message variances w_v.
    w: Vec<f64>,
    /// Cavity at the parent without v's message: mean a_v and variance α_v.
    cav_mean: Vec<f64>,
    cav_var: Vec<f64>,
    acc: Vec<f64>,
}

impl Messages {
    fn size(&mut self, cap: usize, d: usize) {
        self.d = d;
        for v in [
            &mut self.mu,
            &mut self.w,
            &mut self.cav_mean,
            &mut self.cav_var,
        ] {
            v.resize(cap * d, 0.0);
        }
        self.acc.resize(4 * d, 0.0);
    }

    /// Dimension of the messages.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Up-message mean of node v, dimension k.
    pub fn mu(&self, v: usize, k: usize) -> f64 {
        self.mu[v * self.d + k]
    }

    /// Up-message variance of node v, dimension k.
    pub fn w(&self, v: usize, k: usize) -> f64 {
        self.w[v * self.d + k]
    }

    /// The cavity N(a, α) at v's parent without v's own message (dimension k; the zero node's
    /// point mass for the root); needs [`downward`].
    pub fn cavity(&self, v: usize, k: usize) -> (f64, f64) {
        let i = v * self.d + k;
        (self.cav_mean[i], self.cav_var[i])
    }

    /// The message into v from outside its subtree, N(ν, ω) (dimension k); needs
    /// [`downward`].
    pub fn outside(&self, tree: &PydtTree, sigma2: f64, v: usize, k: usize) -> (f64, f64) {
        let i = v * self.d + k;
        let gamma = sigma2 * tree.branch_length(v);
        (self.cav_mean[i], self.cav_var[i] + gamma)
    }

    /// Posterior marginal N(mean, var) of x_{vk} given all leaves; needs [`downward`].
    pub fn marginal(&self, tree: &PydtTree, sigma2: f64, v: usize, k: usize) -> (f64, f64) {
        let i = v * self.d + k;
        if self.w[i] == 0.0 {
            return (self.mu[i], 0.0);
        }
        let (nu, om) = self.outside(tree, sigma2, v, k);
        let prec = 1.0 / om + 1.0 / self.w[i];
        ((nu / om + self.mu[i] / self.w[i]) / prec, 1.0 / prec)
    }

    /// Σ_k E[(x_{vk} − x_{uk})²] over the edge from v's parent u (the zero node for the root) to v
    /// (spec §2.5, edge statistics); needs [`downward`].
    pub fn edge_expected_sq(&self, tree: &PydtTree, sigma2: f64, v: usize) -> f64 {
        let gamma = sigma2 * tree.branch_length(v);
        (0..self.d)
            .map(|k| {
                let i = v * self.d + k;
                let (a, al, b, be) = (self.cav_mean[i], self.cav_var[i], self.mu[i], self.w[i]);
                let tot = al + be + gamma;
                (al + be) * gamma / tot + ((b - a) * gamma / tot).powi(2)
            })
            .sum()
    }
}

/// Upward pass: fills the up-messages and returns log p(X | T, t, σ²) (spec §2.5).
pub fn upward(tree: &PydtTree, leaves: &Leaves, sigma2: f64, msgs: &mut Messages) -> f64 {
    upward_pass(tree, leaves, sigma2, msgs, true)
}

/// The upward pass's messages only (no logarithms): for [`downward`] when the likelihood's
/// value is not needed (EP sweeps).
pub fn upward_messages(tree: &PydtTree, leaves: &Leaves, sigma2: f64, msgs: &mut Messages) {
    upward_pass(tree, leaves, sigma2, msgs, false);
}

fn upward_pass(
    tree: &PydtTree,
    leaves: &Leaves,
    sigma2: f64,
    msgs: &mut Messages,
    value: bool,
) -> f64 {
    let d = leaves.d;
    msgs.size(tree.capacity(), d);
    let mut order = std::mem::take(&mut msgs.order);
    tree.postorder(&mut order);
    let mut total = 0.0;
    let (prec, mp, q, lns) = (0, d, 2 * d, 3 * d);
    for &v in &order {
        if tree.is_leaf(v) {
            msgs.mu[v * d..(v + 1) * d].copy_from_slice(leaves.row(v));
            msgs.w[v * d..(v + 1) * d].copy_from_slice(&leaves.var[v * d..(v + 1) * d]);
            continue;
        }
        msgs.acc.iter_mut().for_each(|x| *x = 0.0);
        let mut k_children = 0.0;
        for c in tree.children(v) {
            k_children += 1.0;
            let g = sigma2 * tree.branch_length(c);
            for k in 0..d {
                let s = msgs.w[c * d + k] + g;
                let m = msgs.mu[c * d + k];
                let r = 1.0 / s;
                msgs.acc[prec + k] += r;
                msgs.acc[mp + k] += m * r;
            }
            if value {
                for k in 0..d {
                    msgs.acc[lns + k] += (msgs.w[c * d + k] + g).ln();
                }
            }
        }
        for k in 0..d {
            let w = 1.0 / msgs.acc[prec + k];
            msgs.w[v * d + k] = w;
            msgs.mu[v * d + k] = msgs.acc[mp + k] * w;
        }
        if !value {
            continue;
        }
        // Σ_c (μ_c − μ_v)²/s_c, equal to Σ μ_c²/s_c − μ_v Σ μ_c/s_c without its cancellation.
        for c in tree.children(v) {
            let g = sigma2 * tree.branch_length(c);
            for k in 0..d {
                let s = msgs.w[c * d + k] + g;
                msgs.acc[q + k] += (msgs.mu[c * d + k] - msgs.mu[v * d + k]).powi(2) / s;
            }
        }
        let mut ln_z = -(k_children - 1.0) * 0.5 * LN_2PI * d as f64;
        for k in 0..d {
            ln_z += -0.5 * msgs.acc[lns + k] + 0.5 * msgs.w[v * d + k].ln() - 0.5 * msgs.acc[q + k];
        }
        total += ln_z;
    }
    let r = tree.root();
    let g = sigma2 * tree.branch_length(r);
    for k in 0..d {
        let var = msgs.w[r * d + k] + g;
        let m = msgs.mu[r * d + k];
        total += -0.5 * (LN_2PI + var.ln()) - 0.5 * m * m / var;
    }
    msgs.order = order;
    total
}

/// log p(X | T, t, σ²) (upward pass only).
pub fn ln_likelihood(tree: &PydtTree, leaves: &Leaves, sigma2: f64, msgs: &mut Messages) -> f64 {
    upward(tree, leaves, sigma2, msgs)
}

/// Downward pass (after [`upward`] on the same tree): the cavity of every node at its parent.
pub fn downward(tree: &PydtTree, sigma2: f64, msgs: &mut Messages) {
    let d = msgs.d;
    let order = std::mem::take(&mut msgs.order);
    let r = tree.root();
    for k in 0..d {
        msgs.cav_mean[r * d + k] = 0.0;
        msgs.cav_var[r * d + k] = 0.0;
    }
    // Pre-order = reversed post-order. Leave-one-out sums by prefix and suffix sums (no
    // subtraction, which would cancel when one child's precision dominates).
    let mut kids = Vec::new();
    let (mut rp, mut rm) = (Vec::new(), Vec::new());
    let (mut suf_p, mut suf_m) = (Vec::new(), Vec::new());
    for &v in order.iter().rev() {
        if tree.is_leaf(v) {
            continue;
        }
        kids.clear();
        kids.extend(tree.children(v));
        let kn = kids.len();
        // Row 0: the message into v from outside, N(ν, ω) (root: ν = 0, ω = σ² t_root); rows
        // 1..=K: the children's messages as seen from v.
        rp.clear();
        rm.clear();
        let gv = sigma2 * tree.branch_length(v);
        for k in 0..d {
            let om = msgs.cav_var[v * d + k] + gv;
            rp.push(1.0 / om);
            rm.push(msgs.cav_mean[v * d + k] / om);
        }
        for &c in &kids {
            let g = sigma2 * tree.branch_length(c);
            for k in 0..d {
                let s = msgs.w[c * d + k] + g;
                rp.push(1.0 / s);
                rm.push(msgs.mu[c * d + k] / s);
            }
        }
        // suf[i] = Σ of rows i.. (i = 0..=K+1).
        suf_p.clear();
        suf_p.resize((kn + 2) * d, 0.0);
        suf_m.clear();
        suf_m.resize((kn + 2) * d, 0.0);
        for i in (0..=kn).rev() {
            for k in 0..d {
                suf_p[i * d + k] = suf_p[(i + 1) * d + k] + rp[i * d + k];
                suf_m[i * d + k] = suf_m[(i + 1) * d + k] + rm[i * d + k];
            }
        }
        let mut pre = vec![0.0; 2 * d];
        for (j, &c) in kids.iter().enumerate() {
            for k in 0..d {
                // Rows 0..=j (outside and earlier children), then rows j+2.. (later children).
                pre[k] += rp[j * d + k];
                pre[d + k] += rm[j * d + k];
                let p = pre[k] + suf_p[(j + 2) * d + k];
                let m = pre[d + k] + suf_m[(j + 2) * d + k];
                msgs.cav_var[c * d + k] = 1.0 / p;
                msgs.cav_mean[c * d + k] = m / p;
            }
        }
    }
    msgs.order = order;
}

/// Draw every node's location from the joint posterior given the leaves' messages (after
/// [`upward`]): the root from its marginal, then each child given its parent (spec §2.5,
/// backward sampling). Returns row-major capacity × d locations (free slots 0). Leaves with
/// variance 0 are returned as observed.
pub fn sample_locations<R: Rng + ?Sized>(
    tree: &PydtTree,
    sigma2: f64,
    msgs: &Messages,
    rng: &mut R,
) -> Vec<f64> {
    let d = msgs.d;
    let mut x = vec![0.0; tree.capacity() * d];
    let mut stack = vec![tree.root()];
    while let Some(v) = stack.pop() {
        let p = tree.node(v).parent;
        let tau = tree.branch_length(v);
        for k in 0..d {
            let xp = if p == NONE { 0.0 } else { x[p * d + k] };
            let (mu, w) = (msgs.mu[v * d + k], msgs.w[v * d + k]);
            x[v * d + k] = if w == 0.0 {
                mu
            } else {
                // N(x_p, g)·N(μ, w) in a form that stays finite for branches of length ~0.
                let g = sigma2 * tau;
                let mean = xp + (mu - xp) * (g / (g + w));
                let var = g * w / (g + w);
                let z: f64 = StandardNormal.sample(rng);
                mean + z * var.sqrt()
            };
        }
        stack.extend(tree.children(v));
    }
    x
}
