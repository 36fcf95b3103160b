//! [`super::lanes_bits`] for the other energies with a lane kernel: Dasgupta's cost and the HCC
//! energy on fixed weight matrices (random, tied, decimal) and the Ginkgo generator's density
//! on fixed jets (one with a raised cut: forbidden clusters, `-inf` splits). Every instruction
//! set this CPU has, dispatched and in the lanes, agrees with the split loop on every cluster's
//! MAP value, MAP tree and count bit for bit (log Z to 1e-12), the MAP-tie count in the lanes'
//! own pass equals the second pass's, and all of it equals what the scalar set gave on x86-64,
//! kept in `tests/data/lanes_bits_energies.txt` (the inputs' bits, and a hash of every split's
//! `log psi`: the generator's density calls libm, whose last bits are the platform's).
//!
//! To rewrite the file (only after an intended change of the results, on x86-64):
//! `cargo test --release -p trellis-core --test core write_lanes_bits_energies -- --ignored`.

use crate::common::generated_jets;
use crate::lanes_bits::{assert_same, crate_path, hex, psi_hash, solve_with, unhex, Fnv, Summary};
use trellis_core::data::ginkgo::GinkgoParams;
use trellis_core::data::graphs::{gaussian_similarities, signed_uniform_weights, weights_from};
use trellis_core::exact::{FullTrellis, TIE_TOLERANCE};
use trellis_core::model::{
    CorrelationModel, DasguptaModel, GinkgoGeneratorModel, SplitModel, WeightMatrix,
};

const GOLDEN: &str = "tests/data/lanes_bits_energies.txt";

/// One case's input: a graph energy's weights and temperature, or a jet for the generator.
#[derive(Clone)]
enum Input {
    Dasgupta(WeightMatrix, f64),
    Hcc(WeightMatrix, f64),
    Generator(Vec<[f64; 4]>, f64, f64),
}

fn cases() -> Vec<(&'static str, Input)> {
    let unit = weights_from(7, |_, _| 1.0).unwrap();
    let decimal = weights_from(8, |i, j| [0.1, 0.2, 0.3][(i * 7 + j) % 3]).unwrap();
    let jet = |params: &GinkgoParams, seed, n| generated_jets(params, 1, (n, n), seed, 1_000_000);
    let (qcd, w) = (
        jet(&GinkgoParams::qcd(), 81, 8).remove(0),
        jet(&GinkgoParams::w_jet(), 82, 10).remove(0),
    );
    vec![
        (
            "dasgupta-gauss-9",
            Input::Dasgupta(gaussian_similarities(9, 71).unwrap(), 1.0),
        ),
        ("dasgupta-unit-7", Input::Dasgupta(unit, 0.5)),
        (
            "hcc-signed-10",
            Input::Hcc(signed_uniform_weights(10, 1.0, 72).unwrap(), 1.0),
        ),
        ("hcc-decimal-8", Input::Hcc(decimal, 2.5)),
        (
            "generator-qcd-8",
            Input::Generator(qcd.leaves().to_vec(), qcd.t_cut(), qcd.lambda()),
        ),
        (
            "generator-w-10",
            Input::Generator(w.leaves().to_vec(), w.t_cut(), w.lambda()),
        ),
        (
            "generator-w-10-raised-cut",
            Input::Generator(w.leaves().to_vec(), 4.0 * w.t_cut(), 0.5 * w.lambda()),
        ),
    ]
}

/// What the file keeps of a case: the trellis's summary and the tie count.
#[derive(Debug, PartialEq)]
struct Golden {
    summary: Summary,
    ties: u128,
}

/// The summary of `m` (every instruction set checked, [`solve_with`]), its `log psi` hash and
/// its tie count, counted in the lanes' own pass on every instruction set and equal to the
/// second pass's.
fn solve<M: SplitModel>(name: &str, m: &M) -> Golden {
    let second = FullTrellis::build_split_loop(m, 32)
        .unwrap()
        .n_map_trees(m, TIE_TOLERANCE)
        .unwrap();
    let summary = solve_with(name, m, |isa, _| {
        let t = FullTrellis::build_with_ties_isa(m, 32, TIE_TOLERANCE, isa).unwrap();
        let got = t.n_map_trees(m, TIE_TOLERANCE).unwrap();
        assert_eq!(got, second, "{name} ({isa}): MAP-tie count");
    });
    let mut h = Fnv::new();
    psi_hash(m, &m.stat_table().unwrap(), &mut h);
    Golden {
        summary: Summary {
            model: h.0,
            ..summary
        },
        ties: second,
    }
}

fn solve_input(name: &str, input: &Input) -> Golden {
    match input {
        Input::Dasgupta(w, beta) => solve(name, &DasguptaModel::new(w.clone(), *beta).unwrap()),
        Input::Hcc(w, beta) => solve(name, &CorrelationModel::new(w.clone(), *beta).unwrap()),
        Input::Generator(leaves, t_cut, lambda) => solve(
            name,
            &GinkgoGeneratorModel::new(leaves.clone(), *t_cut, *lambda).unwrap(),
        ),
    }
}

/// The input's lines of the file.
fn input_lines(input: &Input) -> String {
    let graph = |kind: &str, w: &WeightMatrix, beta: f64| {
        let mut s = format!("{kind} n={} beta={}\n", w.len(), hex(beta));
        for i in 0..w.len() {
            let row: Vec<String> = (i + 1..w.len()).map(|j| hex(w.at(i, j))).collect();
            s += &format!("w {}\n", row.join(" "));
        }
        s
    };
    match input {
        Input::Dasgupta(w, beta) => graph("dasgupta", w, *beta),
        Input::Hcc(w, beta) => graph("hcc", w, *beta),
        Input::Generator(leaves, t_cut, lambda) => {
            let mut s = format!("generator t_cut={} lambda={}\n", hex(*t_cut), hex(*lambda));
            for p in leaves {
                s += &format!("leaf {}\n", p.map(hex).join(" "));
            }
            s
        }
    }
}

fn write_golden(path: &std::path::Path) {
    if !cfg!(target_arch = "x86_64") {
        panic!("the golden file is written on x86-64 (its scalar set is the reference)");
    }
    let mut text = String::from(
        "# The exact trellis's results for every energy with a lane kernel but Ginkgo's, from the\n\
         # scalar set on x86-64; every machine and instruction set must give the same bits (log Z:\n\
         # within 1e-12). Written by:\n\
         # cargo test --release -p trellis-core --test core write_lanes_bits_energies -- --ignored\n\
         # Floats are the hex of their bits; hashes are FNV-1a over the 64-bit words.\n",
    );
    for (name, input) in cases() {
        let g = solve_input(name, &input);
        let s = &g.summary;
        text += &format!("case {name}\n{}", input_lines(&input));
        text += &format!(
            "model {:016x}\nlog_z {}\nmap {}\ncount {}\nmap_all {:016x}\ncount_all {:016x}\nties {}\ntree {}\n",
            s.model, hex(s.log_z), hex(s.map), s.count, s.map_all, s.count_all, g.ties, s.tree
        );
    }
    std::fs::write(path, text).unwrap();
}

/// The file's cases: name, input and what it keeps.
fn read_golden(path: &std::path::Path) -> Vec<(String, Input, Golden)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with the ignored test write_lanes_bits_energies (module docs)",
            path.display()
        )
    });
    let mut out = Vec::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(head) = lines.next() {
        let name = head.strip_prefix("case ").expect("a case line").to_string();
        let kind = lines.next().expect("the input's line");
        let f: Vec<&str> = kind.split_whitespace().collect();
        let param = |i: usize, key: &str| unhex(f[i].strip_prefix(key).expect(key));
        let mut rows = Vec::new();
        while let Some(l) = lines.next_if(|l| l.starts_with("w ") || l.starts_with("leaf ")) {
            let (_, rest) = l.split_once(' ').unwrap();
            rows.push(rest.split_whitespace().map(unhex).collect::<Vec<f64>>());
        }
        let input = match f[0] {
            "generator" => Input::Generator(
                rows.iter().map(|p| [p[0], p[1], p[2], p[3]]).collect(),
                param(1, "t_cut="),
                param(2, "lambda="),
            ),
            graph => {
                let n = rows.len();
                let w = weights_from(n, |i, j| rows[i][j - i - 1]).unwrap();
                let beta = param(2, "beta=");
                if graph == "dasgupta" {
                    Input::Dasgupta(w, beta)
                } else {
                    Input::Hcc(w, beta)
                }
            }
        };
        let mut value = |key: &str| -> String {
            let l = lines.next().expect("a complete case");
            let (k, v) = l.split_once(' ').expect("key value");
            assert_eq!(k, key, "{l}");
            v.to_string()
        };
        let word = |s: String| u64::from_str_radix(&s, 16).unwrap();
        let summary = Summary {
            model: word(value("model")),
            log_z: unhex(&value("log_z")),
            map: unhex(&value("map")),
            count: value("count").parse().unwrap(),
            map_all: word(value("map_all")),
            count_all: word(value("count_all")),
            tree: String::new(),
        };
        let ties = value("ties").parse().unwrap();
        let tree = value("tree");
        out.push((
            name,
            input,
            Golden {
                summary: Summary { tree, ..summary },
                ties,
            },
        ));
    }
    out
}

fn golden_path() -> std::path::PathBuf {
    crate_path(GOLDEN)
}

/// Writes the golden file (see the module docs).
#[test]
#[ignore = "writes tests/data/lanes_bits_energies.txt: run it only to accept new results, on x86-64"]
fn write_lanes_bits_energies() {
    write_golden(&golden_path());
    assert_eq!(read_golden(&golden_path()).len(), cases().len());
}

#[test]
fn every_energy_s_bits_equal_on_every_isa_and_the_golden_file() {
    let cases = read_golden(&golden_path());
    assert_eq!(cases.len(), self::cases().len(), "one entry per case");
    for (name, input, g) in &cases {
        let got = solve_input(name, input);
        let (s, w) = (&got.summary, &g.summary);
        assert_eq!(
            s.model, w.model,
            "{name}: the model's log psi differs from the golden file's on this platform (its \
             libm rounds differently from the one that wrote the file); the instruction sets \
             were compared with each other above"
        );
        assert_same(name, s, w);
        assert_eq!(got.ties, g.ties, "{name}: MAP-tie count");
    }
    assert!(
        cases.iter().any(|(_, _, g)| g.ties > 1000),
        "a case with many ties"
    );
}
