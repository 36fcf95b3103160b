//! The exact trellis gives the same bits on every instruction set and on every machine: for a
//! few fixed Ginkgo jets of 6 to 12 leaves, the full and the MAP-only trellis with every
//! instruction set this CPU has (scalar, AVX2, AVX-512 on x86-64; scalar, NEON on ARM) agree on
//! every cluster's MAP value, MAP tree and finite-tree count bit for bit, and log Z is within
//! 1e-12 of the split loop's; and all of these equal, bit for bit (log Z to 1e-12), what the
//! scalar set gave on x86-64, kept in `tests/data/lanes_bits.txt`.
//!
//! The golden file holds the jets themselves (the leaves' bits and the model's parameters), not
//! only the generator's seeds: the generator draws through the standard library's `ln` and
//! `exp`, whose last bits are the platform's libm's. The model also calls libm (`ln t` of every
//! cluster, `ln_1p`/`exp_m1` in a leaf's term), so the file also keeps a hash of every
//! cluster's statistics and every split's `log psi`: where that hash differs, the platform's libm
//! differs, and the test says so rather than blaming the trellis.
//!
//! To rewrite the file (only after an intended change of the results, on x86-64), run the
//! ignored test that writes it:
//! `cargo test --release -p trellis-core --test core write_lanes_bits -- --ignored`.

use crate::common::generated_jets;
use trellis_core::data::ginkgo::GinkgoParams;
use trellis_core::exact::{FullTrellis, MapTrellis};
use trellis_core::model::{GinkgoModel, SplitModel};
use trellis_core::simd::Isa;
use trellis_core::subset::Subset;

/// The golden file, under the crate's folder.
const GOLDEN: &str = "tests/data/lanes_bits.txt";

/// The jets: name, generator parameters, seed, number of leaves, and whether the cut is raised
/// (many forbidden clusters) with a separate root rate.
fn cases() -> Vec<(&'static str, GinkgoParams, u64, usize, bool)> {
    vec![
        ("qcd-6", GinkgoParams::qcd(), 61, 6, false),
        ("qcd-8", GinkgoParams::qcd(), 62, 8, false),
        ("w-10", GinkgoParams::w_jet(), 63, 10, false),
        ("w-10-raised-cut", GinkgoParams::w_jet(), 63, 10, true),
        ("qcd-12", GinkgoParams::qcd(), 64, 12, false),
    ]
}

/// The generator's jet for a case.
fn generate(params: &GinkgoParams, seed: u64, n: usize, raised: bool) -> GinkgoModel {
    let m = generated_jets(params, 1, (n, n), seed, 1_000_000).remove(0);
    if raised {
        GinkgoModel::new(m.leaves().to_vec(), 40.0 * m.t_cut(), m.lambda())
            .unwrap()
            .with_root_rate(3.0 * m.lambda())
            .unwrap()
    } else {
        m
    }
}

/// FNV-1a over 64-bit words.
pub(crate) struct Fnv(pub(crate) u64);

impl Fnv {
    pub(crate) fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub(crate) fn f(&mut self, x: f64) {
        self.word(x.to_bits());
    }
}

/// A hash of everything the model computes with libm: every cluster's statistics and every
/// split's `log psi`.
fn model_hash(m: &GinkgoModel) -> u64 {
    let n = m.n_leaves();
    let stats: Vec<_> = (0..1u64 << n).map(|b| m.stat(Subset(b))).collect();
    let mut h = Fnv::new();
    for s in &stats {
        h.f(s.t);
        h.f(s.sqrt_t);
        h.f(s.log_t);
    }
    psi_hash(m, &stats, &mut h);
    h.0
}

/// Adds every split's `log psi` of `m` (statistics `stats`) to `h`.
pub(crate) fn psi_hash<M: SplitModel>(m: &M, stats: &[M::Stat], h: &mut Fnv) {
    let n = m.n_leaves();
    for p in 1..1u64 << n {
        // Splits {A, B} once each: A holds the lowest leaf of P.
        let low = p & p.wrapping_neg();
        let rest = p ^ low;
        let mut sub = rest;
        while sub != 0 {
            sub = (sub - 1) & rest;
            let (a, b) = (low | sub, rest & !sub);
            if b != 0 {
                let sp = &stats[p as usize];
                h.f(m.log_psi_with(
                    Subset(a),
                    &stats[a as usize],
                    Subset(b),
                    &stats[b as usize],
                    sp,
                ));
            }
        }
    }
}

/// What the golden file keeps of one jet's trellis.
#[derive(Debug, PartialEq)]
pub(crate) struct Summary {
    /// Hash of [`model_hash`]'s values (libm's part).
    pub(crate) model: u64,
    /// The whole jet's log Z (compared to 1e-12).
    pub(crate) log_z: f64,
    /// The whole jet's MAP value and finite-tree count.
    pub(crate) map: f64,
    pub(crate) count: u128,
    /// Hashes of every cluster's MAP value bits and count.
    pub(crate) map_all: u64,
    pub(crate) count_all: u64,
    /// The MAP tree, canonical Newick.
    pub(crate) tree: String,
}

/// The trellis with every instruction set this CPU has, checked against each other and the
/// split loop; the scalar set's summary.
fn solve(name: &str, m: &GinkgoModel) -> Summary {
    let summary = solve_with(name, m, |isa, full| {
        let map = MapTrellis::build_with_isa(m, 32, isa).unwrap();
        for b in 1..1u64 << m.n_leaves() {
            let s = Subset(b);
            assert_eq!(
                map.map_log_likelihood_of(s).unwrap().to_bits(),
                full.map_log_likelihood_of(s).unwrap().to_bits(),
                "{name} ({isa}) {b:#x}: MAP value, MAP-only trellis"
            );
        }
        assert_eq!(
            full.map_tree().to_newick(),
            map.map_tree().to_newick(),
            "{name} ({isa}): MAP-only tree"
        );
    });
    Summary {
        model: model_hash(m),
        ..summary
    }
}

/// [`solve`] for any model (its lanes taken with every instruction set: the dispatched path
/// and the eight lanes themselves), with `more` checking each instruction set's trellis further;
/// the summary's `model` hash is 0.
pub(crate) fn solve_with<M: SplitModel>(
    name: &str,
    m: &M,
    more: impl Fn(Isa, &FullTrellis),
) -> Summary {
    let n = m.n_leaves();
    let want = FullTrellis::build_split_loop(m, 32).unwrap();
    let mut out = None;
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let what = format!("{name} ({isa})");
        let full = FullTrellis::build_with_isa(m, 32, isa).unwrap();
        let lanes = FullTrellis::build_lanes(m, 32, isa).unwrap();
        more(isa, &full);
        let (mut map_all, mut count_all) = (Fnv::new(), Fnv::new());
        for b in 1..1u64 << n {
            let s = Subset(b);
            let v = full.map_log_likelihood_of(s).unwrap();
            assert_eq!(
                v.to_bits(),
                want.map_log_likelihood_of(s).unwrap().to_bits(),
                "{what} {b:#x}: MAP value, full trellis"
            );
            assert_eq!(
                lanes.map_log_likelihood_of(s).unwrap().to_bits(),
                v.to_bits(),
                "{what} {b:#x}: MAP value, lanes"
            );
            let c = full.n_trees_finite_of(s).unwrap();
            assert_eq!(
                c,
                lanes.n_trees_finite_of(s).unwrap(),
                "{what} {b:#x}: lanes' count"
            );
            assert_eq!(
                c,
                want.n_trees_finite_of(s).unwrap(),
                "{what} {b:#x}: count"
            );
            let (z, zw) = (
                full.log_partition_of(s).unwrap(),
                want.log_partition_of(s).unwrap(),
            );
            if z == f64::NEG_INFINITY || zw == f64::NEG_INFINITY {
                assert_eq!(z, zw, "{what} {b:#x}: log Z");
            } else {
                let rel = (z - zw).abs() / zw.abs().max(1.0);
                assert!(rel <= 1e-12, "{what} {b:#x}: log Z {z} vs {zw}");
            }
            map_all.f(v);
            count_all.word(c as u64);
            count_all.word((c >> 64) as u64);
        }
        let tree = full.map_tree().to_newick();
        assert_eq!(tree, want.map_tree().to_newick(), "{what}: MAP tree");
        assert_eq!(
            tree,
            lanes.map_tree().to_newick(),
            "{what}: lanes' MAP tree"
        );
        let summary = Summary {
            model: 0,
            log_z: full.log_partition(),
            map: full.map_log_likelihood(),
            count: full.n_trees_finite(),
            map_all: map_all.0,
            count_all: count_all.0,
            tree,
        };
        if isa == Isa::Scalar {
            out = Some(summary);
        }
    }
    out.expect("the scalar set is always available")
}

/// One jet of the golden file.
struct GoldenJet {
    name: String,
    model: GinkgoModel,
    summary: Summary,
}

pub(crate) fn hex(x: f64) -> String {
    format!("{:016x}", x.to_bits())
}

pub(crate) fn unhex(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).expect("16 hex digits"))
}

fn write_golden(path: &std::path::Path) {
    if !cfg!(target_arch = "x86_64") {
        panic!("the golden file is written on x86-64 (its scalar set is the reference)");
    }
    let mut text = String::from(
        "# The exact trellis's results on fixed Ginkgo jets, from the scalar set on x86-64; every\n\
         # machine and instruction set must give the same bits (log Z: within 1e-12).\n\
         # Written by: cargo test --release -p trellis-core --test core write_lanes_bits -- --ignored\n\
         # Floats are the hex of their bits; hashes are FNV-1a over the 64-bit words.\n",
    );
    for (name, params, seed, n, raised) in cases() {
        let m = generate(&params, seed, n, raised);
        let s = solve(name, &m);
        text += &format!(
            "jet {name} t_cut={} lambda={} lambda_root={}\n",
            hex(m.t_cut()),
            hex(m.lambda()),
            hex(m.lambda_root())
        );
        for p in m.leaves() {
            text += &format!("leaf {}\n", p.map(hex).join(" "));
        }
        text += &format!(
            "model {:016x}\nlog_z {}\nmap {}\ncount {}\nmap_all {:016x}\ncount_all {:016x}\ntree {}\n",
            s.model,
            hex(s.log_z),
            hex(s.map),
            s.count,
            s.map_all,
            s.count_all,
            s.tree
        );
    }
    std::fs::write(path, text).unwrap();
}

fn read_golden(path: &std::path::Path) -> Vec<GoldenJet> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with the ignored test write_lanes_bits (module docs)",
            path.display()
        )
    });
    let mut jets = Vec::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    while let Some(head) = lines.next() {
        let f: Vec<&str> = head.split_whitespace().collect();
        assert_eq!(f[0], "jet", "{head}");
        let param = |i: usize, key: &str| unhex(f[i].strip_prefix(key).expect(key));
        let (t_cut, lambda, lambda_root) = (
            param(2, "t_cut="),
            param(3, "lambda="),
            param(4, "lambda_root="),
        );
        let mut leaves = Vec::new();
        let mut value = |key: &str| -> String {
            loop {
                let l = lines.next().expect("a complete jet entry");
                if let Some(rest) = l.strip_prefix("leaf ") {
                    let p: Vec<f64> = rest.split_whitespace().map(unhex).collect();
                    leaves.push([p[0], p[1], p[2], p[3]]);
                    continue;
                }
                let (k, v) = l.split_once(' ').expect("key value");
                assert_eq!(k, key, "{l}");
                return v.to_string();
            }
        };
        let word = |s: String| u64::from_str_radix(&s, 16).unwrap();
        let summary = Summary {
            model: word(value("model")),
            log_z: unhex(&value("log_z")),
            map: unhex(&value("map")),
            count: value("count").parse().unwrap(),
            map_all: word(value("map_all")),
            count_all: word(value("count_all")),
            tree: value("tree"),
        };
        let model = GinkgoModel::new(leaves, t_cut, lambda)
            .unwrap()
            .with_root_rate(lambda_root)
            .unwrap();
        jets.push(GoldenJet {
            name: f[1].to_string(),
            model,
            summary,
        });
    }
    jets
}

fn golden_path() -> std::path::PathBuf {
    crate_path(GOLDEN)
}

/// `file` under the crate's folder.
pub(crate) fn crate_path(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

/// Writes the golden file (see the module docs).
#[test]
#[ignore = "writes tests/data/lanes_bits.txt: run it only to accept new results, on x86-64"]
fn write_lanes_bits() {
    write_golden(&golden_path());
    assert_eq!(read_golden(&golden_path()).len(), cases().len());
}

#[test]
fn lanes_bits_equal_on_every_isa_and_the_golden_file() {
    let jets = read_golden(&golden_path());
    assert_eq!(jets.len(), cases().len(), "one entry per case");
    for j in &jets {
        let (g, name) = (&j.summary, &j.name);
        let got = solve(name, &j.model);
        assert_eq!(
            got.model, g.model,
            "{name}: the model's statistics or log psi differ from the golden file's on this \
             platform: its libm (ln, ln_1p, exp_m1) rounds differently from the one that wrote \
             the file, so the trellis's bits cannot match it here (the instruction sets were \
             compared with each other above)"
        );
        assert_same(name, &got, g);
    }
}

/// `got` equals the golden file's `want` (log Z to 1e-12), and has finite trees.
pub(crate) fn assert_same(name: &str, got: &Summary, want: &Summary) {
    let (z, w) = (got.log_z, want.log_z);
    let rel = (z - w).abs() / w.abs().max(1.0);
    assert!(rel <= 1e-12, "{name}: log Z {z} vs {w}");
    assert_eq!(got.map.to_bits(), want.map.to_bits(), "{name}: MAP value");
    assert_eq!(got.count, want.count, "{name}: finite-tree count");
    assert_eq!(
        got.map_all, want.map_all,
        "{name}: the clusters' MAP values"
    );
    assert_eq!(
        got.count_all, want.count_all,
        "{name}: the clusters' counts"
    );
    assert_eq!(got.tree, want.tree, "{name}: MAP tree");
    assert!(
        want.count > 0 && want.map.is_finite(),
        "{name}: an instance with finite trees"
    );
}

#[test]
fn the_generator_gives_the_golden_jets() {
    let jets = read_golden(&golden_path());
    let mut same_bits = 0;
    let mut values = 0;
    for ((name, params, seed, n, raised), j) in cases().into_iter().zip(&jets) {
        assert_eq!(name, j.name);
        let m = generate(&params, seed, n, raised);
        assert_eq!(m.n_leaves(), j.model.n_leaves(), "{name}");
        let params = [
            (m.t_cut(), j.model.t_cut()),
            (m.lambda(), j.model.lambda()),
            (m.lambda_root(), j.model.lambda_root()),
        ];
        let leaves = m
            .leaves()
            .iter()
            .flatten()
            .zip(j.model.leaves().iter().flatten());
        for (x, y) in leaves.map(|(x, y)| (*x, *y)).chain(params) {
            // The generator's libm calls may round differently on another platform.
            assert!(
                (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                "{name}: generated {x} vs golden {y}"
            );
            same_bits += (x.to_bits() == y.to_bits()) as usize;
            values += 1;
        }
    }
    println!("the generator's values equal the golden file's bit for bit: {same_bits} of {values}");
    assert!(values > 0);
}
