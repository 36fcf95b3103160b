//! Gaussian belief propagation over the divergence locations (spec §2.5, paper eq. 12).
//!
//! Given the tree and times, x_v | x_{pa(v)} ~ N(x_{pa(v)}, σ²(t_v − t_{pa(v)}) I) with the zero node
//! at the origin, and the D dimensions are independent. Leaves carry a Gaussian message per
//! dimension, N(x_{id}; mean, var): var = 0 for exactly observed points (the paper's Gaussian
//! model), var = 1 with mean = the auxiliary z for the probit sampler, EP sites for probit EM.
//!
//! * Upward pass (post-order): each node's product of children's messages N(μ_v, w_v), and
//!   log p(X | T, t, σ²) = Σ_v log Z_v + log N(0; μ_root, w_root + σ² t_root).
//! * Downward pass: for every node the cavity at its parent without its own message, N(a, α),
//!   which gives the messages from outside, the location marginals and the edge statistics
//!   E[(x_v − x_u)²] of the EM bound (spec §2.5, "Edge statistics").
//! * Backward sampling of all locations (σ² Gibbs, probit auxiliaries).

use super::tree::{PydtTree, NONE};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

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
    pub fn exact(x: &[Vec<f64>]) -> Self {
        Self::with_noise(x, 0.0)
    }

    /// Points observed with Gaussian noise of variance `noise` in every dimension.
    pub fn with_noise(x: &[Vec<f64>], noise: f64) -> Self {
        let n = x.len();
        let d = x.first().map_or(0, Vec::len);
        let mean: Vec<f64> = x.iter().flat_map(|r| r.iter().copied()).collect();
        Self {
            n,
            d,
            var: vec![noise; mean.len()],
            mean,
        }
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
                msgs.acc[q + k] += m * m * r;
                msgs.acc[lns + k] += s.ln();
            }
        }
        let mut ln_z = -(k_children - 1.0) * 0.5 * LN_2PI * d as f64;
        for k in 0..d {
            let w = 1.0 / msgs.acc[prec + k];
            let mu = msgs.acc[mp + k] * w;
            msgs.w[v * d + k] = w;
            msgs.mu[v * d + k] = mu;
            ln_z += -0.5 * msgs.acc[lns + k] + 0.5 * w.ln()
                - 0.5 * (msgs.acc[q + k] - mu * msgs.acc[mp + k]);
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
    // Pre-order = reversed post-order.
    let mut sums = vec![0.0; 2 * d];
    for &v in order.iter().rev() {
        if tree.is_leaf(v) {
            continue;
        }
        // Message into v from outside: N(ν, ω); for the root ν = 0, ω = σ² t_root.
        let gv = sigma2 * tree.branch_length(v);
        sums.iter_mut().for_each(|x| *x = 0.0);
        for k in 0..d {
            let om = msgs.cav_var[v * d + k] + gv;
            sums[k] = 1.0 / om;
            sums[d + k] = msgs.cav_mean[v * d + k] / om;
        }
        for c in tree.children(v) {
            let g = sigma2 * tree.branch_length(c);
            for k in 0..d {
                let s = msgs.w[c * d + k] + g;
                sums[k] += 1.0 / s;
                sums[d + k] += msgs.mu[c * d + k] / s;
            }
        }
        for c in tree.children(v) {
            let g = sigma2 * tree.branch_length(c);
            for k in 0..d {
                let s = msgs.w[c * d + k] + g;
                let p = sums[k] - 1.0 / s;
                let m = sums[d + k] - msgs.mu[c * d + k] / s;
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
