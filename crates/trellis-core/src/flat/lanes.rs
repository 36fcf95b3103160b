//! The flat trellis in eight SIMD lanes ([`crate::simd`]), laid out as the hierarchical
//! trellis's lane path ([`crate::exact::lanes`]): the subsets go in blocks of eight (the
//! subsets `8g + s`, `s` a subset of the lowest three points); a term of `S = 8g + s` is a
//! cluster `C = 8c + x` holding the lowest point of `S` and the rest `T = 8t + y`, `c + t = g`,
//! `x + y = s`. For each `t` (all subsets of `g` but `g` itself, so that `T`'s block is
//! finished), the log-energies of block `c` and the results of block `t` give 14 terms of
//! the group's parents by in-register permutes; the terms with `t = g` read the group's own
//! block and are added afterwards, lane by lane in order of size.
//!
//! Each slot keeps an online log-sum-exp (its reference moves up when a term exceeds it by
//! 600) and its MAP (the largest value, ties to the largest `T`: the scalar loop's first in
//! its decreasing order of `T`), merged per parent at the end. The MAP values and MAP clusters
//! are the scalar loop's, bit for bit; log Z agrees to 1e-12; every number is the same for any
//! thread count.

use crate::exact::lanes::cross::{Direct, Fetch, Paired, PREFETCH};
use crate::exact::lanes::{Best, LogSum, LANE_ORDER, SLOT_A, SLOT_B, USED_SLOTS, ZERO_SLOT};
use crate::simd::{dispatch, Isa, Lanes, WithLanes};
use rayon::prelude::*;

/// Eight subsets' `log Z` and MAP values.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Block {
    lz: [f64; 8],
    mp: [f64; 8],
}

/// A term more than this above a slot's reference moves the reference.
const RESCALE: f64 = 600.0;

/// A parent's running sums: the log-sum-exp and the MAP value with its `T`.
#[derive(Clone, Copy, Debug)]
struct Acc {
    sum: LogSum,
    best: Best,
}

impl Acc {
    const NEW: Acc = Acc {
        sum: LogSum::NEW,
        best: Best::NEW,
    };

    fn add_term(&mut self, e: f64, lz: f64, mp: f64, t: u64) {
        let z = e + lz;
        if z.is_finite() {
            self.sum.add(z, 1.0, 0.0);
        }
        self.best.add(e + mp, t);
    }
}

/// `(log Z, MAP)` of every subset, and each subset's MAP cluster, indexed by bitmask.
type Tables = (Vec<(f64, f64)>, Vec<u32>);

/// `log Z` and MAP of every subset of the `N = log_energy.len().ilog2()` points (entry 0, the
/// empty set: 0 and 0), and each subset's MAP cluster (0 when none is finite); `None` when
/// cancelled.
pub(super) fn build(
    log_energy: &[f64],
    isa: Isa,
    cancel: &crate::cancel::Cancel,
) -> Option<Tables> {
    let n = log_energy.len().trailing_zeros() as usize;
    let mut blocks = vec![
        Block {
            lz: [f64::NEG_INFINITY; 8],
            mp: [f64::NEG_INFINITY; 8],
        };
        1usize << (n - 3)
    ];
    let mut map_cluster = vec![0u32; 1usize << n];
    let upper = n - 3;
    for u in 0..=upper {
        let groups = crate::exact::lanes::groups_of_size(upper, u);
        let done = &blocks;
        let outs: Vec<Option<(Block, [u32; 8])>> = groups
            .par_iter()
            .map(|&g| (!cancel.is_cancelled()).then(|| solve_group(log_energy, done, g, isa)))
            .collect();
        if cancel.is_cancelled() {
            return None;
        }
        for (&g, o) in groups.iter().zip(outs) {
            let (b, c) = o.expect("not cancelled");
            blocks[g as usize] = b;
            map_cluster[(g << 3) as usize..(g << 3) as usize + 8].copy_from_slice(&c);
        }
    }
    let cells = blocks
        .iter()
        .flat_map(|b| (0..8).map(move |l| (b.lz[l], b.mp[l])))
        .collect();
    Some((cells, map_cluster))
}

/// The group's eight parents `8g + s`.
fn solve_group(le: &[f64], blocks: &[Block], g: u64, isa: Isa) -> (Block, [u32; 8]) {
    let base = g << 3;
    let mut acc = [Acc::NEW; 8];
    if g != 0 {
        dispatch(
            isa,
            Cross {
                le,
                blocks,
                g,
                acc: &mut acc,
            },
        );
    }
    let mut own = Block {
        lz: [f64::NEG_INFINITY; 8],
        mp: [f64::NEG_INFINITY; 8],
    };
    let mut clusters = [0u32; 8];
    for s in LANE_ORDER {
        let a = &mut acc[s as usize];
        if s == 0 && g == 0 {
            // The empty set.
            own.lz[0] = 0.0;
            own.mp[0] = 0.0;
            continue;
        }
        if s != 0 {
            // The terms with T = 8g + y (the own block), C = x.
            let low = s & s.wrapping_neg();
            let rest = s ^ low;
            let mut sub = rest;
            loop {
                let (x, y) = (low | sub, rest ^ sub);
                a.add_term(
                    le[x as usize],
                    own.lz[y as usize],
                    own.mp[y as usize],
                    base | y,
                );
                if sub == 0 {
                    break;
                }
                sub = (sub - 1) & rest;
            }
        }
        if a.sum.s > 0.0 {
            own.lz[s as usize] = a.sum.log();
        }
        own.mp[s as usize] = a.best.value;
        if a.best.value != f64::NEG_INFINITY {
            clusters[s as usize] = ((base | s) ^ a.best.key) as u32;
        }
    }
    (own, clusters)
}

struct Cross<'a> {
    le: &'a [f64],
    blocks: &'a [Block],
    g: u64,
    acc: &'a mut [Acc; 8],
}

impl WithLanes for Cross<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        cross::<L>(self)
    }
}

/// One vector of slots' sums, MAP values and `8t` of their MAP terms.
#[derive(Clone, Copy)]
struct Sums<L: Lanes> {
    m: L,
    m_up: L,
    s: L,
    best: L,
    best_t: L,
}

#[inline(always)]
fn cross<L: Lanes>(job: Cross<'_>) {
    let Cross { le, blocks, g, acc } = job;
    let low_g = g & g.wrapping_neg();
    let fresh = Sums {
        m: L::splat(f64::NEG_INFINITY),
        m_up: L::splat(f64::NEG_INFINITY),
        s: L::splat(0.0),
        best: L::splat(f64::NEG_INFINITY),
        best_t: L::splat(0.0),
    };
    let mut sums = [fresh, fresh];
    let permuted = Paired;
    // Slots in use, the zero slot (the parent 8g) apart: it takes a term only when C holds the
    // lowest point of g.
    let used = |v: usize| (0..8).filter(move |&l| 8 * v + l < USED_SLOTS && 8 * v + l != ZERO_SLOT);
    let live = [0, 1].map(|v| L::mask(used(v).fold(0u8, |m, l| m | 1 << l)));
    let zero = L::mask(1 << ZERO_SLOT);
    let block = |i: u64| -> &[f64; 8] {
        le[(8 * i) as usize..(8 * i + 8) as usize]
            .try_into()
            .expect("eight log-energies")
    };
    // t running down over the subsets of g but g itself (C = 8(g - t) + x is not empty).
    let mut t = (g - 1) & g;
    let mut ahead = t;
    for _ in 0..PREFETCH {
        ahead = ahead.wrapping_sub(1) & g;
    }
    loop {
        crate::exact::lanes::cross::prefetch_block(block(g ^ ahead));
        crate::exact::lanes::cross::prefetch_block(&blocks[ahead as usize]);
        ahead = ahead.wrapping_sub(1) & g;
        let (ec, bt) = (block(g ^ t), &blocks[t as usize]);
        let live0 = if (g ^ t) & low_g != 0 {
            L::or(live[0], zero)
        } else {
            live[0]
        };
        let t8 = L::splat((t << 3) as f64);
        term(&Direct, ec, bt, live0, t8, &mut sums[0]);
        term(&permuted, ec, bt, live[1], t8, &mut sums[1]);
        if t == 0 {
            break;
        }
        t = (t - 1) & g;
    }
    for (v, x) in sums.iter().enumerate() {
        let ([mut m, mut s], [mut best, mut t]) = ([[0.0f64; 8]; 2], [[0.0f64; 8]; 2]);
        x.m.store(&mut m);
        x.s.store(&mut s);
        x.best.store(&mut best);
        x.best_t.store(&mut t);
        for (l, j) in (8 * v..8 * v + 8)
            .enumerate()
            .filter(|&(_, j)| j < USED_SLOTS)
        {
            let p = &mut acc[(SLOT_A[j] | SLOT_B[j]) as usize];
            p.sum.add(m[l], s[l], 0.0);
            p.best.add(best[l], t[l] as u64 | SLOT_B[j] as u64);
        }
    }
}

/// One vector of slots: the terms `log E(C) + log Z(T)` and `log E(C) + MAP(T)` of the
/// clusters `C` (log-energies `ec`) and rests `T` (block `bt`, `8t` in `t8`).
#[inline(always)]
fn term<L: Lanes>(
    f: &impl Fetch<L>,
    ec: &[f64; 8],
    bt: &Block,
    live: L::M,
    t8: L,
    x: &mut Sums<L>,
) {
    let ninf = L::splat(f64::NEG_INFINITY);
    let e = L::select(live, f.a(ec), ninf);
    let z = e.add(f.b(&bt.lz));
    let up = z.gt(x.m_up);
    if L::bits(up) != 0 {
        let m = L::select(up, z, x.m);
        x.s = x.s.mul(L::select(up, x.m.sub(m).exp(), L::splat(1.0)));
        x.m = m;
        x.m_up = m.add(L::splat(RESCALE));
    }
    x.s = x.s.add(z.sub(x.m).exp());
    // A strictly larger value: within a slot T comes in decreasing order.
    let val = e.add(f.b(&bt.mp));
    let upd = val.gt(x.best);
    x.best = L::select(upd, val, x.best);
    x.best_t = L::select(upd, t8, x.best_t);
}
