//! The log-concave density of u = ln V and its one-sided integrals by adaptive Gauss–Kronrod
//! (the exact normaliser and the tail probability of [`super::MergeTime`]).

// ---------------------------------------------------------------------------------------------
// The log-concave density of u = ln V and its one-sided integrals
// ---------------------------------------------------------------------------------------------

/// Non-negative Gauss–Kronrod 15-point nodes (the 7-point Gauss nodes are those at even indices).
pub(super) const K15_X: [f64; 8] = [
    0.0,
    0.20778495500789848,
    0.4058451513773972,
    0.5860872354676911,
    0.7415311855993945,
    0.8648644233597691,
    0.9491079123427585,
    0.9914553711208126,
];
/// Kronrod weights for `K15_X`.
pub(super) const K15_W: [f64; 8] = [
    0.20948214108472782,
    0.20443294007529889,
    0.19035057806478542,
    0.1690047266392679,
    0.14065325971552592,
    0.10479001032225019,
    0.06309209262997856,
    0.022935322010529224,
];
/// Gauss 7-point weights for `K15_X[0]`, `K15_X[2]`, `K15_X[4]`, `K15_X[6]`.
pub(super) const G7_W: [f64; 4] = [
    0.4179591836734694,
    0.3818300505051189,
    0.27970539148927664,
    0.1294849661688697,
];

/// One Gauss–Kronrod 7/15 step on [a, b]: (Kronrod estimate, |Kronrod − Gauss|).
pub(super) fn gk15(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    let c = 0.5 * (a + b);
    let hw = 0.5 * (b - a);
    let f0 = f(c);
    let mut k = K15_W[0] * f0;
    let mut g = G7_W[0] * f0;
    for j in 1..8 {
        let pair = f(c - hw * K15_X[j]) + f(c + hw * K15_X[j]);
        k += K15_W[j] * pair;
        if j % 2 == 0 {
            g += G7_W[j / 2] * pair;
        }
    }
    (k * hw, (k - g).abs() * hw)
}

/// a·x with 0·∞ = 0.
pub(super) fn mul0(a: f64, x: f64) -> f64 {
    if a == 0.0 {
        0.0
    } else {
        a * x
    }
}

/// The log-density of u = ln V relative to an origin o (where e^o = V_o):
/// H(w) = h(o + w) − h(o) = λw − A(e^{−w} − 1) − B(e^{w} − 1), with A = ε/(2V_o), B = ρV_o/2,
/// h(u) = λu − (ε/2)e^{−u} − (ρ/2)e^{u}. H is concave (strictly when A + B > 0) and H(0) = 0.
/// Mirroring w ↦ −w gives the shape (−λ, B, A).
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub(super) lam: f64,
    pub(super) a: f64,
    pub(super) b: f64,
}

/// Levels (drops of H below its value at the start) at which [`Shape::ln_integral`] cuts its
/// initial panels. Beyond the last one the remaining mass is below e^{−37} of the total
/// (concavity).
pub(super) const PANEL_LEVELS: [f64; 7] = [1.0, 3.0, 6.0, 10.0, 16.0, 25.0, 38.0];
/// Target of the summed |Kronrod − Gauss| estimates, relative to the integral.
pub(super) const QUAD_TOL: f64 = 1e-12;
/// Maximum number of panels of the adaptive rule.
pub(super) const MAX_PANELS: usize = 160;

impl Shape {
    pub(super) fn mirrored(self) -> Shape {
        Shape {
            lam: -self.lam,
            a: self.b,
            b: self.a,
        }
    }

    /// H(w), accurate near 0 (expm1 forms); −∞ where it underflows, never NaN for finite w.
    pub(super) fn h(&self, w: f64) -> f64 {
        // em = e^{w} − 1, emn = e^{−w} − 1, each from the expm1 of the non-negative argument.
        let (em, emn) = if w >= 0.0 {
            let em = w.exp_m1();
            let emn = if em.is_finite() {
                -em / (1.0 + em)
            } else {
                -1.0
            };
            (em, emn)
        } else {
            let emn = (-w).exp_m1();
            let em = if emn.is_finite() {
                -emn / (1.0 + emn)
            } else {
                -1.0
            };
            (em, emn)
        };
        self.lam * w - mul0(self.a, emn) - mul0(self.b, em)
    }

    /// H'(w).
    pub(super) fn dh(&self, w: f64) -> f64 {
        self.lam + mul0(self.a, (-w).exp()) - mul0(self.b, w.exp())
    }

    /// A point w > 0 where H(w) ≈ −l (l > 0), for a shape with H'(0) ≤ 0 (up to rounding) that
    /// tends to −∞. Safeguarded Newton on ln(−H), which is close to linear in both the
    /// exponential and the double-exponential regime; the result is approximate (relative 1e-3
    /// in −H) but always finite and positive.
    pub(super) fn level(&self, l: f64) -> f64 {
        let (lam, a, b) = (self.lam, self.a, self.b);
        // A point where H ≤ −l for sure (with −A(e^{−w} − 1) ≤ A): from B(e^w − 1) ≥ l + A when
        // λ ≤ 0; from B(e^w − 1) ≥ λw + Bw²/2 when B ≥ λ > 0; from λw ≤ −(l + A) when B = 0.
        let cap = if lam <= 0.0 && b > 0.0 {
            ((l + a) / b).ln_1p()
        } else if b > 0.0 {
            (2.0 * (l + a) / b).sqrt()
        } else if lam < 0.0 {
            (l + a) / -lam
        } else {
            f64::INFINITY
        };
        let s0 = -self.dh(0.0);
        let c0 = a + b;
        let guess = 2.0 * l / (s0 + (s0 * s0 + 2.0 * c0 * l).sqrt());
        let mut w = if guess.is_finite() && guess > 0.0 {
            guess.min(cap)
        } else if cap.is_finite() && cap > 0.0 {
            cap
        } else {
            1.0
        };
        let ln_l = l.ln();
        let (mut lo, mut hi) = (0.0_f64, f64::INFINITY);
        for _ in 0..200 {
            let hv = self.h(w);
            if hv.is_nan() || hv == f64::NEG_INFINITY {
                hi = hi.min(w);
                w = if lo > 0.0 { (lo * w).sqrt() } else { 1e-3 * w };
                continue;
            }
            if hv > -l {
                lo = lo.max(w);
            } else {
                hi = hi.min(w);
            }
            if hv < 0.0 {
                let phi = (-hv).ln() - ln_l;
                if phi.abs() < 1e-3 {
                    return w;
                }
                let next = w - phi * hv / self.dh(w);
                if next.is_finite() && next > lo && next < hi {
                    w = next;
                    continue;
                }
            }
            let next = if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * w
            };
            if !(next.is_finite() && next > 0.0) || next == w {
                break;
            }
            w = next;
        }
        if w.is_finite() && w > 0.0 {
            w
        } else if hi.is_finite() {
            hi
        } else {
            f64::MAX
        }
    }

    /// ln ∫₀^∞ e^{H(w)} dw for a shape with H'(0) ≤ 0 that tends to −∞.
    pub(super) fn ln_integral(&self) -> f64 {
        let mut pts = [0.0_f64; PANEL_LEVELS.len() + 1];
        let mut npts = 1;
        let mut w = self.level(PANEL_LEVELS[0]);
        pts[npts] = w;
        npts += 1;
        // Further cuts by tangent steps: the tangent lies above H, so each step lands at or
        // beyond the wanted level.
        for &l in &PANEL_LEVELS[1..] {
            let hv = self.h(w);
            if hv <= -l {
                continue;
            }
            let slope = self.dh(w);
            let next = w + (-l - hv) / slope;
            if !(slope < 0.0 && next.is_finite() && next > w) {
                break;
            }
            w = next;
            pts[npts] = w;
            npts += 1;
        }
        // Make sure the last cut is far enough (only reached on a failed tangent step).
        let mut guard = 0;
        while self.h(w) > -PANEL_LEVELS[PANEL_LEVELS.len() - 1] && guard < 2000 {
            let next = 2.0 * w;
            if !next.is_finite() {
                break;
            }
            w = next;
            pts[npts - 1] = pts[npts - 1].max(w);
            guard += 1;
        }
        let f = |x: f64| self.h(x).exp();
        let mut panels = [(0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64); MAX_PANELS];
        let mut np = 0;
        for i in 0..npts - 1 {
            let (k, e) = gk15(&f, pts[i], pts[i + 1]);
            panels[np] = (pts[i], pts[i + 1], k, e);
            np += 1;
        }
        while np + 1 < MAX_PANELS {
            let mut total = 0.0;
            let mut err = 0.0;
            let mut worst = 0;
            for (i, p) in panels[..np].iter().enumerate() {
                total += p.2;
                err += p.3;
                if p.3 > panels[worst].3 {
                    worst = i;
                }
            }
            if err <= QUAD_TOL * total || !(err.is_finite()) {
                break;
            }
            let (a, b, _, _) = panels[worst];
            let m = 0.5 * (a + b);
            if !(m > a && m < b) {
                break;
            }
            let (k1, e1) = gk15(&f, a, m);
            let (k2, e2) = gk15(&f, m, b);
            panels[worst] = (a, m, k1, e1);
            panels[np] = (m, b, k2, e2);
            np += 1;
        }
        panels[..np].iter().map(|p| p.2).sum::<f64>().ln()
    }
}
