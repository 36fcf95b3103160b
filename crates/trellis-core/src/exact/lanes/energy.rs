//! What the lane trellis ([`super`]) needs of an energy: its statistics in blocks of eight, its
//! parents' constants, and `log psi` of one vector of slots with the instruction set's lanes
//! ([`Energy`]); and the two energies whose potential is a cut weight from per-subset totals
//! computed once, Dasgupta's cost and the HCC / correlation energy (their `log psi` is a few
//! exact operations: the lanes give the model's bits).

use super::cross::{Fetch, Step};
use super::{SLOT_A, SLOT_B};
use crate::exact::ExactError;
use crate::model::correlation::CorrelationStat;
use crate::model::{CorrelationModel, DasguptaModel, LaneModel, SplitModel};
use crate::simd::Lanes;

/// An energy in the lanes.
pub(crate) trait Energy: Sync + Sized {
    /// Eight subsets' statistics, as the vector kernel reads them.
    type Stat: Copy + Send + Sync;
    /// One parent's constants.
    type Consts: Copy;
    /// One vector of slots' constants (lanes of no parent: any value).
    type Slots<L: Lanes>;
    /// One vector's `log psi`, with what its exact value needs.
    type Psi<L: Lanes>: LanePsi<L> + Copy;
    /// Whether the loop computes the potentials of several upper parts before their sums
    /// (`cross::BATCH`): faster for a long potential (the generator's), slower for short ones.
    const AHEAD: bool = false;

    /// Number of leaves.
    fn n_leaves(&self) -> usize;
    /// The statistics of block `b` (the subsets `8b..8b + 8`).
    fn block_stat(&self, b: usize) -> Self::Stat;
    /// The constants of parent `i` (two or more leaves); `None`: every split is forbidden.
    fn consts(&self, i: u64) -> Option<Self::Consts>;
    /// One vector of slots' constants from each lane's parent's.
    fn slots<L: Lanes>(c: &[Option<Self::Consts>; 8]) -> Self::Slots<L>;
    /// The exact `log psi` of the split `(a, b)` (`a` holds the parent's lowest leaf): the
    /// model's bits.
    fn log_psi_scalar(&self, a: u64, b: u64) -> f64;
    /// `log psi` of one vector of slots for the upper parts `(a, g - a)` (blocks' statistics
    /// `ba`, `bb`), `-inf` outside `live`.
    fn log_psi<L: Lanes>(
        st: &Step<'_, Self, L>,
        f: &impl Fetch<L>,
        a: u64,
        ba: &Self::Stat,
        bb: &Self::Stat,
        live: L::M,
    ) -> Self::Psi<L>;
    /// The model's `log psi` (the same bits) in the lanes of `need` of a vector whose
    /// [`Energy::log_psi`] is `psi` (other lanes: any value).
    fn exact<L: Lanes>(&self, psi: &Self::Psi<L>, need: L::M) -> L;
}

/// One vector's `log psi`: `lp` for the log-sum-exp and the count (`-inf` exactly where the
/// model's value is), and an upper bound on the model's value ([`Energy::exact`] gives it).
pub(crate) trait LanePsi<L: Lanes> {
    /// `log psi`, possibly with fast logarithms (within 1e-12 of the model's).
    fn lp(&self) -> L;
    /// Never below the model's `log psi` (a lane's MAP value can only grow where this does).
    fn lp_up(&self) -> L;
}

/// A `log psi` computed with exact operations only.
#[derive(Clone, Copy)]
pub(crate) struct ExactPsi<L>(pub(crate) L);

impl<L: Lanes> LanePsi<L> for ExactPsi<L> {
    #[inline(always)]
    fn lp(&self) -> L {
        self.0
    }
    #[inline(always)]
    fn lp_up(&self) -> L {
        self.0
    }
}

/// `into` with the lanes of `lanes` (bits) replaced by the model's `log psi` of their splits,
/// for the upper parts `(a, g - a)` and vector `v` of slots.
#[inline(always)]
pub(crate) fn scalar_lanes<E: Energy, L: Lanes>(
    k: &E,
    g: u64,
    v: usize,
    a: u64,
    lanes: u8,
    into: L,
) -> L {
    let mut out = [0.0f64; 8];
    into.store(&mut out);
    let b = g ^ a;
    for (l, o) in out.iter_mut().enumerate() {
        if lanes >> l & 1 == 1 {
            let j = 8 * v + l;
            *o = k.log_psi_scalar((a << 3) | SLOT_A[j] as u64, (b << 3) | SLOT_B[j] as u64);
        }
    }
    L::load(&out)
}

/// Runs `run` with the energy of the model behind `m` (its statistics built first).
pub(crate) fn with_energy<R: RunEnergy>(m: LaneModel<'_>, run: R) -> Result<R::Output, ExactError> {
    Ok(match m {
        LaneModel::Ginkgo(g) => run.run(&super::ginkgo::GinkgoLanes::new(g)?),
        LaneModel::Dasgupta(d) => run.run(&Cut::dasgupta(d)?),
        LaneModel::Correlation(c) => run.run(&Cut::correlation(c)?),
        LaneModel::Generator(g) => run.run(&super::generator::GeneratorLanes::new(g)?),
    })
}

/// A computation over any [`Energy`] (for [`with_energy`]).
pub(crate) trait RunEnergy {
    type Output;
    fn run<E: Energy>(self, e: &E) -> Self::Output;
}

/// `Err(BadStatTable)` unless a model's table has an entry per subset of `n` leaves.
pub(crate) fn check_table<T>(table: &[T], n: usize) -> Result<(), ExactError> {
    if table.len() != 1usize << n {
        return Err(ExactError::BadStatTable {
            len: table.len(),
            n,
        });
    }
    Ok(())
}

/// Dasgupta's cost (`W` the internal weight, no negative part) or the HCC energy (positive and
/// negative internal sums): `log psi = c ((((P(S) - P(A)) - P(B)) - N(A)) - N(B))`, with
/// `c = -β |S|` for Dasgupta's cost (`N = 0` left out) and `c = -β` for HCC: the models'
/// operations in their order.
pub(crate) struct Cut {
    n: usize,
    /// `P(S)`: `W(S)` or the positive internal sum.
    pos: Vec<f64>,
    /// The negative internal sums (HCC; empty for Dasgupta's cost).
    neg: Vec<f64>,
    /// `-β`.
    neg_beta: f64,
    /// Dasgupta's cost (the factor `|S|`).
    sized: bool,
}

impl Cut {
    fn dasgupta(m: &DasguptaModel) -> Result<Cut, ExactError> {
        let pos = m.stat_table()?;
        check_table(&pos, m.n_leaves())?;
        Ok(Cut {
            n: m.n_leaves(),
            pos,
            neg: Vec::new(),
            neg_beta: -m.beta(),
            sized: true,
        })
    }

    fn correlation(m: &CorrelationModel) -> Result<Cut, ExactError> {
        let stats: Vec<CorrelationStat> = m.stat_table()?;
        check_table(&stats, m.n_leaves())?;
        Ok(Cut {
            n: m.n_leaves(),
            pos: stats.iter().map(|s| s.positive).collect(),
            neg: stats.iter().map(|s| s.negative).collect(),
            neg_beta: -m.beta(),
            sized: false,
        })
    }

    fn neg_at(&self, i: u64) -> f64 {
        if self.sized {
            0.0
        } else {
            self.neg[i as usize]
        }
    }
}

/// Eight subsets' internal sums.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CutStat {
    pos: [f64; 8],
    neg: [f64; 8],
}

/// A parent's factor and positive internal sum.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CutConsts {
    c: f64,
    pos: f64,
}

pub(crate) struct CutSlots<L> {
    c: L,
    pos: L,
}

impl Energy for Cut {
    type Stat = CutStat;
    type Consts = CutConsts;
    type Slots<L: Lanes> = CutSlots<L>;
    type Psi<L: Lanes> = ExactPsi<L>;

    fn n_leaves(&self) -> usize {
        self.n
    }

    fn block_stat(&self, b: usize) -> CutStat {
        CutStat {
            pos: std::array::from_fn(|l| self.pos[8 * b + l]),
            neg: std::array::from_fn(|l| self.neg_at((8 * b + l) as u64)),
        }
    }

    fn consts(&self, i: u64) -> Option<CutConsts> {
        let c = if self.sized {
            // DasguptaModel: `-self.beta * (a.len() + b.len()) as f64 * (...)`.
            self.neg_beta * i.count_ones() as f64
        } else {
            self.neg_beta
        };
        Some(CutConsts {
            c,
            pos: self.pos[i as usize],
        })
    }

    #[inline(always)]
    fn slots<L: Lanes>(c: &[Option<CutConsts>; 8]) -> CutSlots<L> {
        let (mut f, mut p) = ([0.0f64; 8], [0.0f64; 8]);
        for (l, x) in c.iter().enumerate() {
            if let Some(x) = x {
                (f[l], p[l]) = (x.c, x.pos);
            }
        }
        CutSlots {
            c: L::load(&f),
            pos: L::load(&p),
        }
    }

    #[inline]
    fn log_psi_scalar(&self, a: u64, b: u64) -> f64 {
        let c = self.consts(a | b).expect("every parent is allowed").c;
        let (a, b) = (a as usize, b as usize);
        let cross = self.pos[a | b] - self.pos[a] - self.pos[b];
        if self.sized {
            c * cross
        } else {
            c * (cross - self.neg[a] - self.neg[b])
        }
    }

    #[inline(always)]
    fn log_psi<L: Lanes>(
        st: &Step<'_, Self, L>,
        f: &impl Fetch<L>,
        _a: u64,
        ba: &CutStat,
        bb: &CutStat,
        live: L::M,
    ) -> ExactPsi<L> {
        let c = &st.c.c;
        let mut e = c.pos.sub(f.a(&ba.pos)).sub(f.b(&bb.pos));
        if !st.k.sized {
            e = e.sub(f.a(&ba.neg)).sub(f.b(&bb.neg));
        }
        ExactPsi(L::select(live, c.c.mul(e), L::splat(f64::NEG_INFINITY)))
    }

    #[inline(always)]
    fn exact<L: Lanes>(&self, psi: &ExactPsi<L>, _need: L::M) -> L {
        psi.0
    }
}
