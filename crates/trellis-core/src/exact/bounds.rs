//! Admissible upper bounds on the best log-likelihood of a subtree, the heuristics of
//! [`super::astar`] (design note `docs/design/astar.md`, §2-§3).
//!
//! For a cluster `C` let `V(C)` be the largest log-likelihood (sum of `log psi` over internal
//! nodes) of any binary tree over the leaves of `C`, with `V({i}) = 0`. A bound `h` is
//! *admissible* when `h(C) >= V(C)` for every `C`, and *consistent* when moreover
//! `h(C) >= log psi(A, B) + h(A) + h(B)` for every split `(A, B)` of `C`. A* over clusters needs
//! admissibility only; consistency makes the bounds it backs up never exceed `h`.
//!
//! Every bound here adds a round-off margin `slack(k) = 1e-12 · (k - 1) · scale` (`k = |C|`,
//! `scale` a per-instance constant of the size of one split's terms) to its value, so that
//! admissibility and consistency also hold for the floating-point sums A* forms: the margin is
//! about `1e4` times the rounding error of a sum of `k - 1` terms, and `slack(a) + slack(b) <
//! slack(a + b)` leaves room for consistency.

use crate::model::{log1mexp, DasguptaModel, GinkgoModel, SplitModel};
use crate::subset::Subset;

/// An upper bound on the best log-likelihood `V(C)` of any tree over a cluster.
///
/// Contract, for every non-empty cluster `c` of the model's leaves with statistics `stat =
/// model.stat(c)`: `quick(c, stat) >= bound(c, stat) >= V(c)`; `bound` is 0 for a single leaf;
/// `bound` is `-inf` only when `V(c) = -inf`. `quick` is the cheap version A* calls for every
/// child of every split it enumerates; `bound` is called once per cluster A* keeps.
pub trait SubtreeBound<M: SplitModel>: Sync {
    /// An upper bound on `V(c)`.
    fn bound(&self, c: Subset, stat: &M::Stat) -> f64;

    /// A cheaper, looser upper bound (at least [`SubtreeBound::bound`]).
    fn quick(&self, c: Subset, stat: &M::Stat) -> f64 {
        self.bound(c, stat)
    }
}

/// The round-off margin of a bound over `k` leaves.
#[inline]
fn slack(k: usize, scale: f64) -> f64 {
    1e-12 * (k.saturating_sub(1)) as f64 * scale
}

/// `h + slack`, keeping `-inf` (and refusing NaN: a NaN bound becomes `+inf`, which is sound).
#[inline]
fn inflate(h: f64, k: usize, scale: f64) -> f64 {
    if h.is_nan() {
        f64::INFINITY
    } else if h == f64::NEG_INFINITY {
        h
    } else {
        h + slack(k, scale)
    }
}

/// The bound `H_G` of the design note (§2) for [`GinkgoModel`].
///
/// With `k = |C|`, `H_G({i}) = 0`, `H_G` of a pair is its exact `log psi`, and for `k >= 3`
/// `H_G(C) = -inf` when `t(C) < t_cut` (or NaN) or when no pair `{i, j} ⊆ C` is *feasible*
/// (`t_ij = t({i, j}) >= t_cut`); otherwise
///
/// ```text
/// H_G(C) = c(λ_C) + (k-2)·c(λ) + Σ_{j=1..k-2} (-1 - ln L_{σ_j}(C)) + 2·log1mexp(λ t_cut / τ2(C))
/// ```
///
/// - `c(λ) = -2 log(1 - e^-λ) - ln 4π` is the constant of every split, `λ_C` the root rate when
///   `C` is the whole jet and `λ` otherwise;
/// - `τ2(C)` is the smallest feasible pair mass in `C`;
/// - `ν_s(C) = min_{i ∈ C}` of the `(s-1)`-th smallest `t_ij`, `j ∈ C \ i` (`s = 2..k-1`);
/// - `L_s(C) = max(t_cut, ν_s(C) - ε)` with `ε = 1e-9 · E²` (`E` the jet's total energy), or
///   `L_s = t_cut` when the physics check below fails;
/// - `N_s = min(k-2, k - ceil(k/s))` and `σ_j` the smallest `s` with `N_s >= j`.
///
/// **Admissibility.** Fix a finite tree over `C`. (1) In `log psi(A, B) = c + γ_hi + γ_lo` a
/// non-singleton child `X` contributes `γ = ln λ - ln u - λ t(X)/u` for some `u > 0` (`u` is
/// `tp1` or `tp2`), at most `-1 - ln t(X)` (the maximum over `u`, at `u = λ t(X)`, whatever the
/// rate); a singleton child contributes `log1mexp(λ t_cut/u) <= 0`. (2) Each node but `C` is a
/// child once: `k - 1` constants, `k - 2` non-singleton terms, `k` leaf terms. (3) A non-singleton
/// node `X` of a finite tree has `t(X) >= t_cut` (its own split is finite). (4) For future-pointing
/// causal four-vectors the Minkowski product of two of them is `>= 0`, so `t(X) = (P + R)^2 =
/// t(P) + 2 P·R + R^2 >= t(P)` for `P ⊆ X`: an `s`-subset `X` has `t(X) >= t_ij` for any pair in
/// it, hence `t(X) >= ν_s(C)` (take `i ∈ X`; the other `s - 1` leaves give `s - 1` values of row
/// `i`). The check: every leaf has `E >= 0` and `E >= (1 - 1e-12) |p|`; near-lightlike leaves
/// can then lower a product by at most `~2e-12 E_i E_j`, and round-off in `t` is `~1e-16 E²`,
/// both far inside `ε`. Without the check, `L_s = t_cut` uses (3) alone. (5) The maximal nodes
/// of size `<= s` partition `C` into at least `ceil(k/s)` blocks, so at most `k - ceil(k/s)`
/// internal nodes (and at most the `k - 2` non-root ones) have size `<= s`: the `j`-th smallest
/// non-root internal node has size `>= σ_j`, and as `L_s` grows with `s`, the non-singleton terms
/// sum to at most `Σ_j (-1 - ln L_{σ_j})`. (6) The tree has a cherry `{i, j}`: a feasible pair
/// (its split is finite) whose leaves contribute `log1mexp(λ t_cut / t_ij) <= log1mexp(λ t_cut /
/// τ2)` each (there `tp2 = tp1 = t_ij`); other leaf terms are `<= 0`. Summing gives `H_G`. If `C`
/// has no feasible pair it has no cherry, so no finite tree; if `t(C) < t_cut` every split of `C`
/// is forbidden: `-inf` only when `V(C) = -inf`. (With the physics check the converse holds too:
/// a caterpillar grown from a feasible pair inside `C` with `t(C) >= t_cut` is finite, as masses
/// grow under inclusion.)
///
/// **Consistency.** For a finite split `(A, B)` of `C`, `|A| = a`, `|B| = b`: the constants match
/// (`c(λ_C) + (a-1) c(λ) + (b-1) c(λ)`); at least one child has `>= 2` leaves, and its cherry
/// (or pair) terms are `<= 2 log1mexp(λ t_cut/τ2(C))` because `τ2(A) >= τ2(C)`; the other terms
/// of the right side are `-1 - ln x` for `k - 2` values `x`: `t(A)`, `t(B)` (non-singletons,
/// `>= L_a(C)`, `>= L_b(C)` by (3)-(4)) and the `L_{σ_j}(A)`, `L_{σ_j}(B) >= L_{σ_j}(C)` (minima
/// over fewer leaves). Their sizes form a profile with at most `(a - ceil(a/s)) + (b - ceil(b/s))
/// <= k - ceil(k/s)` entries `<= s`, for every `s`, so the `j`-th smallest is `>= σ_j(C)`, and
/// `-1 - ln L` decreases in the size: the right side is at most `H_G(C)`. The slack is linear in
/// `k - 1`, so it is consistent too.
///
/// `quick` is the same formula with the whole jet's `ν_s` and `τ2` (minima over more leaves,
/// hence larger), one table lookup per size; it checks `t(C) >= t_cut` from the statistics.
/// `bound` costs `O(k N)` (rows of the pair-mass table presorted once).
#[derive(Clone, Debug)]
pub struct GinkgoBound {
    model: GinkgoModel,
    n: usize,
    t_cut: f64,
    lambda: f64,
    /// `c(λ)` and `c(λ_root)`.
    c: [f64; 2],
    /// `t_ij` (row-major `n × n`; the diagonal is unused).
    pair_t: Vec<f64>,
    /// Exact `log psi({i}, {j})` (row-major `n × n`).
    pair_lp: Vec<f64>,
    /// For each leaf `i`, the other leaves by increasing `t_ij`.
    rows: Vec<Vec<u8>>,
    physical: bool,
    eps: f64,
    scale: f64,
    /// `quick` for `k = 0..=n` below the root (the whole jet's `ν_s` and `τ2`).
    quick_by_size: Vec<f64>,
}

impl GinkgoBound {
    /// Precomputes the pair masses, their sorted rows, the physics check and the quick table.
    pub fn new(model: &GinkgoModel) -> GinkgoBound {
        let n = model.n_leaves();
        let leaves = model.leaves();
        let (lambda, lambda_root, t_cut) = (model.lambda(), model.lambda_root(), model.t_cut());
        let constant = |l: f64| -2.0 * log1mexp(l) - (4.0 * std::f64::consts::PI).ln();
        let c = [constant(lambda), constant(lambda_root)];
        let mut pair_t = vec![f64::NAN; n * n];
        let mut pair_lp = vec![f64::NEG_INFINITY; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let p = Subset::singleton(i).union(Subset::singleton(j));
                let t = model.stat(p).t;
                let lp = model.log_psi(Subset::singleton(i), Subset::singleton(j));
                pair_t[i * n + j] = t;
                pair_t[j * n + i] = t;
                pair_lp[i * n + j] = lp;
                pair_lp[j * n + i] = lp;
            }
        }
        let rows = (0..n)
            .map(|i| {
                let mut r: Vec<u8> = (0..n).filter(|&j| j != i).map(|j| j as u8).collect();
                r.sort_by(|&x, &y| {
                    pair_t[i * n + x as usize].total_cmp(&pair_t[i * n + y as usize])
                });
                r
            })
            .collect();
        let physical = leaves.iter().all(|p| {
            let pabs = (p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt();
            p[0] >= 0.0 && p[0] >= (1.0 - 1e-12) * pabs
        });
        let e_jet: f64 = leaves.iter().map(|p| p[0].abs()).sum();
        let e_jet2 = e_jet * e_jet;
        let scale = 2.0
            + c[0].abs().max(c[1].abs())
            + t_cut.ln().abs()
            + e_jet2.max(1.0).ln()
            + lambda.ln().abs().max(lambda_root.ln().abs());
        let mut b = GinkgoBound {
            model: model.clone(),
            n,
            t_cut,
            lambda,
            c,
            pair_t,
            pair_lp,
            rows,
            physical,
            eps: 1e-9 * e_jet2,
            scale,
            quick_by_size: Vec::new(),
        };
        let full = Subset::full(n);
        let (nu, tau2) = b.masses(full);
        b.quick_by_size = (0..=n)
            .map(|k| match k {
                0 | 1 => 0.0,
                2 => f64::INFINITY, // pairs: exact, from `pair_lp`
                // Twice the margin: `quick >= bound` also when a minimum over more leaves
                // rounds differently.
                _ => b.formula(k, false, &nu, tau2) + slack(k, b.scale),
            })
            .collect();
        b
    }

    /// Whether every leaf passed the physics check (`E >= 0`, `E >= (1 - 1e-12)|p|`); when not,
    /// the bound uses `L_s = t_cut` (sound, looser).
    pub fn is_physical(&self) -> bool {
        self.physical
    }

    /// `ν_s(c)` for `s = 2..k-1` (index `s - 2`) and `τ2(c)` (`+inf` if no pair is feasible).
    fn masses(&self, c: Subset) -> (Vec<f64>, f64) {
        let k = c.len();
        let n = self.n;
        let mut nu = vec![f64::INFINITY; k.saturating_sub(2)];
        let mut tau2 = f64::INFINITY;
        for i in c.iter() {
            let mut r = 0; // rank within the row restricted to `c`
            let mut first_feasible = true;
            for &j in &self.rows[i] {
                let j = j as usize;
                if !c.contains(j) {
                    continue;
                }
                let t = self.pair_t[i * n + j];
                if r < nu.len() && t < nu[r] {
                    nu[r] = t;
                }
                r += 1;
                if first_feasible && t >= self.t_cut {
                    first_feasible = false;
                    tau2 = tau2.min(t);
                }
                if r >= nu.len() && !first_feasible {
                    break;
                }
            }
        }
        (nu, tau2)
    }

    /// The formula of `H_G` for `k >= 3` leaves with the given `ν_s` and `τ2`, inflated.
    fn formula(&self, k: usize, root: bool, nu: &[f64], tau2: f64) -> f64 {
        if tau2 == f64::INFINITY || tau2.is_nan() {
            return f64::NEG_INFINITY;
        }
        let mut h = self.c[root as usize] + (k - 2) as f64 * self.c[0];
        let count = |s: usize| (k - 2).min(k - k.div_ceil(s));
        let mut below = 0;
        for s in 2..k {
            let ns = count(s);
            let m = ns - below;
            below = ns;
            if m == 0 {
                continue;
            }
            let l = if self.physical {
                self.t_cut.max(nu[s - 2] - self.eps)
            } else {
                self.t_cut
            };
            h += m as f64 * (-1.0 - l.ln());
        }
        h += 2.0 * log1mexp(self.lambda * self.t_cut / tau2);
        inflate(h, k, self.scale)
    }

    #[inline]
    fn pair(&self, c: Subset) -> f64 {
        let i = c.0.trailing_zeros() as usize;
        let j = 63 - c.0.leading_zeros() as usize;
        inflate(self.pair_lp[i * self.n + j], 2, self.scale)
    }
}

impl SubtreeBound<GinkgoModel> for GinkgoBound {
    fn bound(&self, c: Subset, stat: &<GinkgoModel as SplitModel>::Stat) -> f64 {
        let k = c.len();
        match k {
            0 | 1 => 0.0,
            2 => self.pair(c),
            _ => {
                if stat.t.is_nan() || stat.t < self.t_cut {
                    return f64::NEG_INFINITY;
                }
                let (nu, tau2) = self.masses(c);
                let root = k == self.n && self.n > 0;
                self.formula(k, root, &nu, tau2)
            }
        }
    }

    fn quick(&self, c: Subset, stat: &<GinkgoModel as SplitModel>::Stat) -> f64 {
        let k = c.len();
        match k {
            0 | 1 => 0.0,
            2 => self.pair(c),
            _ if k == self.n => self.bound(c, stat),
            _ => {
                if stat.t.is_nan() || stat.t < self.t_cut {
                    f64::NEG_INFINITY
                } else {
                    self.quick_by_size[k]
                }
            }
        }
    }
}

impl GinkgoBound {
    /// The model the bound was built for.
    pub fn model(&self) -> &GinkgoModel {
        &self.model
    }
}

/// The bound of the design note (§3) for [`DasguptaModel`]: `h(C) = -β · max(LB2(C), LB3(C))`.
///
/// Dasgupta's cost of a tree over `C` is `Σ_{i<j ∈ C} w_ij · |lca(i, j)|` (a merge of `A` and
/// `B` charges `(|A| + |B|) w(A, B)`: every crossing pair pays the size of its lowest common
/// ancestor), with `2 <= |lca| <= |C|`.
///
/// - **Pair bound** `LB2(C) = 2 W⁺(C) + k W⁻(C)`, with `W±` the sums of the positive and the
///   negative weights in `C`: each pair pays at least `2w` if `w > 0` and at least `k w` if
///   `w < 0`.
/// - **Triplet bound** `LB3(C) = 2 W(C) + Σ_{triples T ⊆ C} (W_T - max_{pair ∈ T} w)`: `|lca(i,
///   j)| = 2 + #{l ∈ C under lca(i, j)}`, and in each triple exactly one pair is merged below
///   the triple's own lca; that pair does not count the third leaf, the other two do, so `T`
///   adds `W_T - w_first >= W_T - max_T` for weights of any sign. Exact for `|C| <= 3`.
///
/// **Consistency** (in cost form, `LB(C) <= cost(A, B) + LB(A) + LB(B)`). For LB3:
/// `cost(A, B) - 2 w(A, B) = (k - 2) w(A, B)` is the sum, over the triples `T` crossing the
/// split, of `T`'s two crossing weights `W_T - w_{q_T}` (`q_T` its pair inside `A` or `B`), so the
/// difference is `Σ_T (max_T - w_{q_T}) >= 0`. For LB2 the difference is `(k - 2) w⁺(A, B) +
/// (a - k) W⁻(A) + (b - k) W⁻(B) >= 0`. The maximum of two consistent bounds is consistent.
///
/// `bound` costs `O(k³)`; `quick` is `LB2` with `W⁻(C)` from a table over all subsets when
/// `N <= 20` (8 MiB), else from the sum of all negative weights (a lower bound on `W⁻(C)`), `O(1)`.
#[derive(Clone, Debug)]
pub struct DasguptaBound {
    n: usize,
    beta: f64,
    w: Vec<f64>,
    /// `W⁻` of every subset (when `N <= 20` and some weight is negative).
    neg_table: Option<Vec<f64>>,
    /// Sum of all negative weights (`<= W⁻(C)` for every `C`).
    neg_total: f64,
    scale: f64,
}

/// Largest `N` for which [`DasguptaBound`] tabulates `W⁻` over all subsets.
pub const DASGUPTA_TABLE_LEAVES: usize = 20;

impl DasguptaBound {
    /// Precomputes the weights and (for `N <= 20` with negative weights) the table of `W⁻`.
    pub fn new(model: &DasguptaModel) -> DasguptaBound {
        let wm = model.weights();
        let n = wm.len();
        let mut w = vec![0.0; n * n];
        let (mut neg_total, mut abs_total) = (0.0, 0.0);
        for i in 0..n {
            for j in 0..n {
                let v = if i == j {
                    0.0
                } else {
                    wm.get(i, j).unwrap_or(0.0)
                };
                w[i * n + j] = v;
                if i < j {
                    neg_total += v.min(0.0);
                    abs_total += v.abs();
                }
            }
        }
        let neg_table = if neg_total < 0.0 && n <= DASGUPTA_TABLE_LEAVES {
            wm.pair_sums(|x| x.min(0.0)).ok()
        } else {
            None
        };
        DasguptaBound {
            n,
            beta: model.beta(),
            w,
            neg_table,
            neg_total,
            scale: model.beta() * (n as f64) * abs_total + 1.0,
        }
    }

    /// `W⁻(c)`, the sum of the negative weights inside `c` (`O(k²)`).
    fn neg_sum(&self, c: Subset) -> f64 {
        let idx: Vec<usize> = c.iter().collect();
        let mut s = 0.0;
        for (a, &i) in idx.iter().enumerate() {
            for &j in &idx[a + 1..] {
                s += self.w[i * self.n + j].min(0.0);
            }
        }
        s
    }

    /// `LB3(c) - 2 W(c)`: the triplet sum `Σ_T (W_T - max_T)` (`O(k³)`).
    fn triplet_sum(&self, c: Subset) -> f64 {
        let idx: Vec<usize> = c.iter().collect();
        let n = self.n;
        let mut s = 0.0;
        for (a, &i) in idx.iter().enumerate() {
            for (b, &j) in idx.iter().enumerate().skip(a + 1) {
                let wij = self.w[i * n + j];
                for &l in &idx[b + 1..] {
                    let (wil, wjl) = (self.w[i * n + l], self.w[j * n + l]);
                    s += wij + wil + wjl - wij.max(wil).max(wjl);
                }
            }
        }
        s
    }
}

impl SubtreeBound<DasguptaModel> for DasguptaBound {
    /// `stat` is `W(c)`, the model's statistic.
    fn bound(&self, c: Subset, stat: &f64) -> f64 {
        let k = c.len();
        if k <= 1 {
            return 0.0;
        }
        let lb2 = 2.0 * stat + (k - 2) as f64 * self.neg_sum(c);
        let lb3 = 2.0 * stat + self.triplet_sum(c);
        inflate(-self.beta * lb2.max(lb3), k, self.scale)
    }

    fn quick(&self, c: Subset, stat: &f64) -> f64 {
        let k = c.len();
        if k <= 3 {
            return self.bound(c, stat);
        }
        let neg = if self.neg_total == 0.0 {
            0.0
        } else if let Some(t) = &self.neg_table {
            t[c.index()]
        } else {
            self.neg_total
        };
        // Twice the margin: `W⁻` summed in another order may round differently.
        inflate(
            -self.beta * (2.0 * stat + (k - 2) as f64 * neg),
            k,
            self.scale,
        ) + slack(k, self.scale)
    }
}
