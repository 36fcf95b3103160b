//! The conjugate models against numerical integration and enumeration, and the special
//! functions they rest on against closed forms and quadrature.

use super::*;
use crate::numeric::splitmix64_mix;
use std::f64::consts::PI;

/// A uniform in [0, 1) from a seed and an index.
pub(crate) fn unif(seed: u64, i: u64) -> f64 {
    (splitmix64_mix(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i) >> 11) as f64
        / (1u64 << 53) as f64
}

/// Composite Simpson's rule of `f` on `[a, b]` with `m` (even) intervals.
pub(crate) fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, m: usize) -> f64 {
    let h = (b - a) / m as f64;
    let mut s = f(a) + f(b);
    for k in 1..m {
        s += f(a + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn ln_gamma_matches_closed_forms_and_the_beta_integral() {
    // Γ(n) = (n-1)!, Γ(n + 1/2) = (2n)! √π / (4^n n!).
    let mut fact = 1.0f64;
    for n in 1..30 {
        assert!(close(ln_gamma(n as f64), fact.ln(), 1e-14), "Γ({n})");
        fact *= n as f64;
    }
    for n in 0..20u32 {
        let f2n: f64 = (1..=2 * n).map(|k| k as f64).product();
        let fnn: f64 = (1..=n).map(|k| k as f64).product();
        let want = f2n.ln() + 0.5 * PI.ln() - n as f64 * 4f64.ln() - fnn.ln();
        assert!(close(ln_gamma(n as f64 + 0.5), want, 1e-13), "Γ({n}.5)");
    }
    // B(a, b) = ∫ p^(a-1) (1-p)^(b-1) dp = ∫ 2 sin^(2a-1) θ cos^(2b-1) θ dθ over [0, π/2]
    // (p = sin² θ: smooth integrands for the half-integer exponents' square-root ends).
    for &(a, b) in &[(1.0, 1.0), (1.5, 2.5), (3.0, 7.0), (12.5, 4.25), (0.5, 0.5)] {
        let q = simpson(
            |t: f64| 2.0 * t.sin().powf(2.0 * a - 1.0) * t.cos().abs().powf(2.0 * b - 1.0),
            0.0,
            PI / 2.0,
            20_000,
        );
        assert!(close(ln_beta(a, b), q.ln(), 1e-9), "B({a},{b})");
    }
    // Γ_1 is Γ; Γ_2(x) = √π Γ(x) Γ(x - 1/2).
    assert_eq!(ln_multigamma(3.7, 1), ln_gamma(3.7));
    let want = 0.5 * PI.ln() + ln_gamma(3.7) + ln_gamma(3.2);
    assert!(close(ln_multigamma(3.7, 2), want, 1e-14));
}

#[test]
fn beta_bernoulli_sums_to_one_over_all_data_sets() {
    // 3 points x 2 features: Σ over all 2^6 binary tables of p(D) is 1.
    let (a, b) = (vec![0.7, 2.0], vec![1.3, 0.5]);
    let mut total = 0.0;
    for code in 0..64u32 {
        let x: Vec<Vec<f64>> = (0..3)
            .map(|i| (0..2).map(|d| ((code >> (2 * i + d)) & 1) as f64).collect())
            .collect();
        let m = BetaBernoulli::new(&x, a.clone(), b.clone()).unwrap();
        total += m.log_marginal_of(&[0, 1, 2]).exp();
    }
    assert!((total - 1.0).abs() < 1e-13, "{total}");
}

#[test]
fn beta_bernoulli_matches_quadrature() {
    let x = vec![
        vec![1.0, 0.0, 1.0],
        vec![1.0, 1.0, 0.0],
        vec![0.0, 0.0, 1.0],
        vec![1.0, 0.0, 1.0],
    ];
    let m = BetaBernoulli::new(&x, vec![1.0, 2.0, 1.5], vec![1.0, 3.0, 1.25]).unwrap();
    let (a, b) = m.prior();
    let mut want = 0.0;
    for d in 0..3 {
        let c = x.iter().map(|r| r[d]).sum::<f64>();
        let q = simpson(
            |p: f64| p.powf(c + a[d] - 1.0) * (1.0 - p).powf(4.0 - c + b[d] - 1.0),
            0.0,
            1.0,
            20_000,
        );
        want += q.ln() - ln_beta(a[d], b[d]);
    }
    assert!(close(m.log_marginal_of(&[0, 1, 2, 3]), want, 1e-9));
    // The tabulated log-gammas against the formula, on every subset.
    for b in 1..16u64 {
        let pts: Vec<usize> = Subset(b).iter().collect();
        let n = pts.len() as f64;
        let direct: f64 = (0..3)
            .map(|d| {
                let c: f64 = pts.iter().map(|&i| x[i][d]).sum();
                ln_beta(a[d] + c, m.prior().1[d] + n - c) - ln_beta(a[d], m.prior().1[d])
            })
            .sum();
        assert!(close(m.log_marginal_of(&pts), direct, 1e-13));
    }
    // Merging statistics is the same as computing them at once.
    let merged = m.merge(&m.stat_of(&[0, 2]), &m.stat_of(&[1, 3]));
    assert_eq!(merged, m.stat_of(&[0, 1, 2, 3]));
    // The data-centred prior: a = s m, b = s (1 - m), with constant features clamped.
    let e = BetaBernoulli::from_data(&x, 2.0).unwrap();
    assert!(close(e.prior().0[0], 1.5, 1e-15) && close(e.prior().1[0], 0.5, 1e-15));
    assert!(BetaBernoulli::new(&[vec![0.5]], vec![1.0], vec![1.0]).is_err());
    assert!(BetaBernoulli::new(&x, vec![1.0; 3], vec![0.0; 3]).is_err());
}

#[test]
fn dirichlet_multinomial_matches_quadrature_and_sums_to_one() {
    // Two categories: a beta-binomial, checked by quadrature over p.
    let x = vec![vec![3.0, 1.0], vec![0.0, 2.0], vec![4.0, 4.0]];
    let m = DirichletMultinomial::new(&x, vec![1.5, 2.0]).unwrap();
    let binom = |k: f64, n: f64| ln_gamma(n + 1.0) - ln_gamma(k + 1.0) - ln_gamma(n - k + 1.0);
    let coef: f64 = x.iter().map(|r| binom(r[0], r[0] + r[1])).sum();
    let q = simpson(
        |p: f64| p.powf(7.0 + 0.5) * (1.0 - p).powf(7.0 + 1.0),
        0.0,
        1.0,
        20_000,
    );
    let want = coef + q.ln() - ln_beta(1.5, 2.0);
    assert!(close(m.log_marginal_of(&[0, 1, 2]), want, 1e-9));

    // Three categories: a 2-d integral over the simplex (p1, p2, 1 - p1 - p2).
    let x3 = vec![vec![2.0, 0.0, 1.0], vec![1.0, 1.0, 1.0]];
    let beta = [1.0, 2.0, 1.5];
    let m3 = DirichletMultinomial::new(&x3, beta.to_vec()).unwrap();
    let c = [3.0, 1.0, 2.0];
    let ln_coef = (ln_gamma(4.0) - ln_gamma(3.0)) + ln_gamma(4.0);
    let ln_dir = beta.iter().map(|&b| ln_gamma(b)).sum::<f64>() - ln_gamma(4.5);
    let inner = |p1: f64| {
        simpson(
            |p2: f64| {
                let p3 = (1.0 - p1 - p2).max(0.0);
                p1.powf(c[0] + beta[0] - 1.0)
                    * p2.powf(c[1] + beta[1] - 1.0)
                    * p3.powf(c[2] + beta[2] - 1.0)
            },
            0.0,
            1.0 - p1,
            400,
        )
    };
    let q3 = simpson(inner, 0.0, 1.0, 400);
    let want3 = ln_coef + q3.ln() - ln_dir;
    assert!(close(m3.log_marginal_of(&[0, 1]), want3, 1e-7));

    // Two points with totals 2 and 3 over 3 categories: Σ over all count vectors is 1.
    let vectors = |t: u32| {
        let mut out = Vec::new();
        for a in 0..=t {
            for b in 0..=t - a {
                out.push(vec![a as f64, b as f64, (t - a - b) as f64]);
            }
        }
        out
    };
    let mut total = 0.0;
    for u in vectors(2) {
        for v in vectors(3) {
            let m = DirichletMultinomial::new(&[u.clone(), v], vec![0.5, 1.0, 2.0]).unwrap();
            total += m.log_marginal_of(&[0, 1]).exp();
        }
    }
    assert!((total - 1.0).abs() < 1e-13, "{total}");
    assert!(DirichletMultinomial::symmetric(&[vec![1.5]], 1.0).is_err());
}

/// `log N(x | m, v)` in one dimension.
fn ln_normal(x: f64, m: f64, v: f64) -> f64 {
    -0.5 * (2.0 * PI * v).ln() - (x - m).powi(2) / (2.0 * v)
}

#[test]
fn niw_in_one_dimension_matches_a_two_dimensional_integral() {
    // Σ ~ IW(s0, ν0) is σ² ~ InvGamma(ν0/2, s0/2) in 1-d; μ | σ² ~ N(m0, σ²/κ0).
    let x = vec![vec![0.3], vec![-0.5], vec![1.1], vec![0.8]];
    let (m0, k0, nu0, s0) = (0.2, 0.5, 3.0, 1.5);
    let m = NormalInverseWishart::new(&x, vec![m0], k0, nu0, vec![s0]).unwrap();
    let (sh, sc) = (nu0 / 2.0, s0 / 2.0);
    let ln_ig = |v: f64| sh * sc.ln() - ln_gamma(sh) - (sh + 1.0) * v.ln() - sc / v;
    // Integrate over t = ln σ² (dσ² = σ² dt) and μ.
    let integrand = |t: f64| {
        let v = t.exp();
        simpson(
            |mu: f64| {
                let ll: f64 = x.iter().map(|r| ln_normal(r[0], mu, v)).sum();
                (ll + ln_normal(mu, m0, v / k0) + ln_ig(v) + t).exp()
            },
            -12.0,
            12.0,
            1200,
        )
    };
    let q = simpson(integrand, -14.0, 8.0, 1200);
    assert!(
        close(m.log_marginal_of(&[0, 1, 2, 3]), q.ln(), 1e-7),
        "{} vs {}",
        m.log_marginal_of(&[0, 1, 2, 3]),
        q.ln()
    );
}

#[test]
fn niw_matches_the_chain_rule_of_student_t_predictives() {
    // p(x_1..x_n) = ∏ p(x_k | x_<k), each a multivariate t with ν_k - D + 1 degrees of freedom,
    // location m_k and scale S_k (κ_k + 1) / (κ_k (ν_k - D + 1)).
    let d = 3;
    let x: Vec<Vec<f64>> = (0..6)
        .map(|i| {
            (0..d)
                .map(|j| 2.0 * unif(7, (i * d + j) as u64) - 1.0)
                .collect()
        })
        .collect();
    let m0 = vec![0.1, -0.2, 0.05];
    let s0 = vec![1.0, 0.3, 0.1, 0.3, 2.0, -0.2, 0.1, -0.2, 0.7];
    let (k0, nu0) = (0.4, 4.5);
    let model = NormalInverseWishart::new(&x, m0.clone(), k0, nu0, s0.clone()).unwrap();
    let mut total = 0.0;
    let (mut km, mut nu, mut mean, mut s) = (k0, nu0, m0, s0);
    for xi in &x {
        let dof = nu - d as f64 + 1.0;
        let f = (km + 1.0) / (km * dof);
        let scale: Vec<f64> = s.iter().map(|v| v * f).collect();
        let dev: Vec<f64> = xi.iter().zip(&mean).map(|(a, b)| a - b).collect();
        // Mahalanobis distance by solving scale · y = dev (Gauss-Jordan on a 3 x 3).
        let maha = {
            let mut a = scale.clone();
            let mut y = dev.clone();
            for c in 0..d {
                let p = a[c * d + c];
                for r in 0..d {
                    if r != c {
                        let f = a[r * d + c] / p;
                        for k in 0..d {
                            a[r * d + k] -= f * a[c * d + k];
                        }
                        y[r] -= f * y[c];
                    }
                }
            }
            (0..d).map(|c| dev[c] * y[c] / a[c * d + c]).sum::<f64>()
        };
        let df = d as f64;
        total += ln_gamma((dof + df) / 2.0)
            - ln_gamma(dof / 2.0)
            - df / 2.0 * (dof * PI).ln()
            - 0.5 * gaussian::log_det_spd(&scale, d)
            - (dof + df) / 2.0 * (1.0 + maha / dof).ln();
        // Posterior update by one point.
        let kn = km + 1.0;
        for r in 0..d {
            for c in 0..d {
                s[r * d + c] += km / kn * dev[r] * dev[c];
            }
        }
        mean = mean
            .iter()
            .zip(xi)
            .map(|(m, v)| (km * m + v) / kn)
            .collect();
        km = kn;
        nu += 1.0;
    }
    let all: Vec<usize> = (0..6).collect();
    assert!(close(model.log_marginal_of(&all), total, 1e-11));
    // Merge order does not matter.
    let a = model.merge(&model.stat_of(&[5, 0, 3]), &model.stat_of(&[1, 4, 2]));
    assert!(close(model.log_marginal(&a), total, 1e-11));
    assert!(NormalInverseWishart::new(&x, vec![0.0; 3], 1.0, 1.5, vec![1.0; 9]).is_err());
    assert!(NormalInverseWishart::from_data(&x, 0.1, 0.25).is_ok());
}

#[test]
fn dpm_energy_with_the_crp_constant_is_the_evidence() {
    // The CRP prior over all partitions of 5 points sums to one.
    let x: Vec<Vec<f64>> = (0..5)
        .map(|i| vec![(i % 2) as f64, (i / 2 % 2) as f64])
        .collect();
    let m = BetaBernoulli::new(&x, vec![1.0; 2], vec![1.0; 2]).unwrap();
    let alpha = 0.7;
    let e = DpmEnergy::new(&m, alpha).unwrap();
    let mut prior_sum = 0.0;
    let mut evidence = 0.0;
    crate::flat::enumerate::for_each_partition(Subset::full(5), |p| {
        let ln_prior = e.log_prior_constant()
            + p.iter()
                .map(|c| alpha.ln() + ln_gamma(c.len() as f64))
                .sum::<f64>();
        prior_sum += ln_prior.exp();
        let lik: f64 = p
            .iter()
            .map(|c| m.log_marginal_of(&c.iter().collect::<Vec<_>>()))
            .sum();
        evidence += (ln_prior + lik).exp();
    });
    assert!((prior_sum - 1.0).abs() < 1e-13);
    let exact = exact::dpm_exact(&m, alpha).unwrap();
    assert!(close(exact.log_evidence, evidence.ln(), 1e-12));
    assert!(DpmEnergy::new(&m, 0.0).is_err());
}
