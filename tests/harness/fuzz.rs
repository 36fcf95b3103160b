//! Fuzzing every parser a user feeds: Newick and nested-JSON trees, the coalescent methods'
//! ultrametric Newick, jet JSON files, the pam50
//! files, point matrices (CSV/TSV, USPS, animals33), TOML configs, and the Parquet tables that
//! `check` and `plot` read back. Inputs are random bytes and mutations of valid files (bit
//! flips, inserted tokens such as `1e308` or `NaN`, deleted, duplicated or truncated spans).
//!
//! Every input must either parse or give a one-line error, never panic, and take less than a
//! second (ten in this short run, which shares the machine with other tests). The process runs
//! under an 8 GiB address-space cap, so runaway allocation aborts the test instead of the
//! machine.
//!
//! `cargo test` runs a short campaign with a fixed seed. The long one (the counts in
//! README.md) runs outside the suite:
//!
//! ```text
//! FUZZ_CASES=1000000 FUZZ_SEED=7 cargo test --release --test harness fuzz:: -- --nocapture --test-threads 1
//! ```
//!
//! (`FUZZ_ALL_KINDS=1` adds every fast config's tables to the Parquet campaign, which shares its
//! `FUZZ_CASES` among the kinds.)

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestRunner};
use std::time::{Duration, Instant};
use trellis_lab::coalescent::newick::{from_newick, to_newick};
use trellis_lab::data::ginkgo::JetDataset;
use trellis_lab::data::matrix::{Column, Delimiter, MatrixSpec, PointMatrix};
use trellis_lab::data::pam50::Pam50;
use trellis_lab::experiment::{self, config, registry::Registry, Results};
use trellis_lab::tree::Tree;

use crate::common::root;

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The per-input time limit: one second in the long (release) campaign, ten in `cargo test`.
fn time_limit() -> Duration {
    if std::env::var("FUZZ_CASES").is_ok() {
        Duration::from_secs(1)
    } else {
        Duration::from_secs(10)
    }
}

/// Caps this process's address space at 8 GiB: a parser that allocates without bound aborts
/// the test rather than exhausting the machine.
fn cap_memory() {
    let cap = 8u64 << 30;
    let limit = libc::rlimit {
        rlim_cur: cap,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit only reads the struct passed by reference.
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
}

/// Tokens that parsers meet at their edges.
const TOKENS: &[&str] = &[
    "1e308",
    "-1e308",
    "1e-320",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "-0",
    "0",
    "-1",
    "18446744073709551616",
    "99999999999999999999999",
    "\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    "=",
    "#",
    "\t",
    "\n",
    "\r\n",
    " ",
    "\u{feff}",
    "é",
    "\0",
    "NA",
    "[[",
    "]]",
    "((",
    "))",
    "true",
    "null",
    "\"\"",
    "1",
    "64",
    "65",
    "100000",
    "1000000000000",
];

#[derive(Clone, Debug)]
enum Op {
    Flip(usize, u8),
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Token(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize, usize),
    Truncate(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(p, b)| Op::Flip(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Op::Set(p, b)),
        (any::<usize>(), vec(any::<u8>(), 1..8)).prop_map(|(p, b)| Op::Insert(p, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Op::Token(p, t)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Op::Delete(p, n)),
        (any::<usize>(), 1usize..256, any::<usize>()).prop_map(|(p, n, q)| Op::Duplicate(p, n, q)),
        any::<usize>().prop_map(Op::Truncate),
    ]
}

fn apply(seed: &[u8], ops: &[Op]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for op in ops {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match op {
            Op::Flip(p, bit) if !b.is_empty() => {
                let i = p % b.len();
                b[i] ^= 1 << bit;
            }
            Op::Set(p, v) if !b.is_empty() => {
                let i = p % b.len();
                b[i] = *v;
            }
            Op::Insert(p, bytes) => {
                let i = at(*p, b.len());
                b.splice(i..i, bytes.iter().copied());
            }
            Op::Token(p, t) => {
                let i = at(*p, b.len());
                b.splice(i..i, TOKENS[*t].bytes());
            }
            Op::Delete(p, n) => {
                let i = at(*p, b.len());
                let j = (i + n).min(b.len());
                b.drain(i..j);
            }
            Op::Duplicate(p, n, q) => {
                let i = at(*p, b.len());
                let j = (i + n).min(b.len());
                let chunk: Vec<u8> = b[i..j].to_vec();
                let k = at(*q, b.len());
                b.splice(k..k, chunk);
            }
            Op::Truncate(p) => {
                let i = at(*p, b.len());
                b.truncate(i);
            }
            _ => {}
        }
    }
    b
}

/// Random bytes (one case in eight) or one to six mutations of a valid input.
fn inputs(corpus: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let n = corpus.len();
    prop_oneof![
        1 => vec(any::<u8>(), 0..512),
        7 => (0..n, vec(op(), 1..6)).prop_map(move |(i, ops)| apply(&corpus[i], &ops)),
    ]
}

/// Runs `target` on `default_cases` inputs (or `FUZZ_CASES`): each must return `Ok` (parsed)
/// or `Err` with a one-line message, within the time limit. Prints the counts.
fn fuzz(
    name: &str,
    default_cases: u32,
    corpus: Vec<Vec<u8>>,
    target: impl Fn(&[u8]) -> Result<(), String>,
) {
    fuzz_n(name, env_or("FUZZ_CASES", default_cases), corpus, target)
}

/// [`fuzz`] with exactly `cases` inputs.
fn fuzz_n(
    name: &str,
    cases: u32,
    corpus: Vec<Vec<u8>>,
    target: impl Fn(&[u8]) -> Result<(), String>,
) {
    cap_memory();
    let seed = env_or("FUZZ_SEED", 1u64);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 2000,
        ..Config::default()
    });
    let stats = std::cell::Cell::new((0u64, 0u64, Duration::ZERO));
    let limit = time_limit();
    let t0 = Instant::now();
    let result = runner.run(&inputs(corpus), |bytes| {
        let t = Instant::now();
        let outcome = target(&bytes);
        let took = t.elapsed();
        let (mut ok, mut err, mut slowest) = stats.get();
        slowest = slowest.max(took);
        match &outcome {
            Ok(()) => ok += 1,
            Err(msg) => {
                err += 1;
                if msg.trim().is_empty() || msg.contains('\n') {
                    return Err(TestCaseError::fail(format!(
                        "error is not one line: {msg:?}"
                    )));
                }
            }
        }
        stats.set((ok, err, slowest));
        if took > limit {
            return Err(TestCaseError::fail(format!("took {took:?}")));
        }
        Ok(())
    });
    let (ok, err, slowest) = stats.get();
    println!(
        "fuzz {name}: {cases} cases (seed {seed}) in {:.1} s: {ok} parsed, {err} one-line errors, slowest {:.2} ms",
        t0.elapsed().as_secs_f64(),
        slowest.as_secs_f64() * 1e3
    );
    if let Err(e) = result {
        panic!("fuzz {name}: {e}");
    }
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap()
}

fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

#[test]
fn newick_trees() {
    let corpus = [
        "((0,1),(2,3));",
        "(((0,1),2),(3,(4,5)));",
        "((a:1.5,b:2)x:0.1,(c,d));",
        "(0,1);",
        "0;",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("newick", 20000, corpus, |b| {
        match Tree::from_newick(&text(b)) {
            Ok(t) => {
                // A parsed tree is a proper tree: its Newick form reads back the same.
                let again = Tree::from_newick(&t.to_newick()).map_err(|e| e.to_string())?;
                assert_eq!(again.clusters(), t.clusters(), "round trip");
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    });
}

#[test]
fn coalescent_newick_histories() {
    // Ultrametric trees with branch lengths, as the coalescent methods write them (any n).
    let corpus = [
        "((0:0.2,1:0.2):1.1,(2:0.5,3:0.5):0.8);",
        "(((a:0.1,b:0.1):0.3,c:0.4):0.6,d:1);",
        "(0:1,1:1);",
        "0;",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("coalescent_newick", 20000, corpus, |b| {
        let h = from_newick(&text(b), None).map_err(|e| e.to_string())?;
        // A parsed history is valid and writes back to a history with the same merge times.
        let again = from_newick(&to_newick(&h, None).map_err(|e| e.to_string())?, None)
            .map_err(|e| e.to_string())?;
        assert_eq!(again.n, h.n, "round trip");
        for (x, y) in again.times().iter().zip(h.times()) {
            assert!(
                (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
                "round trip {x} {y}"
            );
        }
        Ok(())
    });
}

#[test]
fn nested_json_trees() {
    let corpus = ["[[0, 1], 2]", "[[[0, 1], [2, 3]], [4, 5]]", "[0, 1]"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    fuzz("nested_json_tree", 20000, corpus, |b| {
        let v: serde_json::Value = serde_json::from_slice(b).map_err(|e| e.to_string())?;
        Tree::from_nested_json(&v)
            .map(|t| assert!(t.n_leaves() >= 1))
            .map_err(|e| e.to_string())
    });
}

#[test]
fn jet_json_files() {
    let corpus = vec![
        read("data/ginkgo_jets/truth_4.json"),
        read("data/ginkgo_jets/truth_5.json"),
    ];
    fuzz("jets_json", 4000, corpus, |b| {
        let data = JetDataset::from_json(&text(b)).map_err(|e| e.to_string())?;
        for jet in &data.jets {
            jet.validate().map_err(|e| e.to_string())?;
            // A valid jet has a finite likelihood under its truth tree (what `score` prints).
            if let Some(truth) = jet.truth() {
                let ll = truth.log_likelihood(&jet.model().map_err(|e| e.to_string())?);
                assert!(!ll.is_nan(), "NaN log-likelihood for a valid jet");
            }
        }
        Ok(())
    });
}

#[test]
fn pam50_files() {
    let expr = read("data/pam50/pam50_unc232_expr.tsv");
    let labels = read("data/pam50/pam50_unc232_labels.tsv");
    // Small valid pairs (the first rows), so that mutations reach every part of a file.
    let head = |b: &[u8], n: usize| -> Vec<u8> {
        let t = text(b);
        t.lines()
            .take(n)
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes()
    };
    let (e6, l6) = (head(&expr, 6), head(&labels, 6));
    // One corpus entry per file, marked by its first byte: mutations of the expression file
    // (with valid labels) and of the labels (with the valid expression file).
    let mut a = vec![b'E'];
    a.extend(&e6);
    let mut b = vec![b'L'];
    b.extend(&l6);
    fuzz("pam50", 5000, vec![a, b], |input| {
        let (which, rest) = input.split_first().unwrap_or((&b'E', &[]));
        let (e, l) = if *which == b'L' {
            (text(&e6).into_owned(), text(rest).into_owned())
        } else {
            (text(rest).into_owned(), text(&l6).into_owned())
        };
        Pam50::parse(&e, &l, "expr.tsv", "labels.tsv")
            .map(|p| assert_eq!(p.samples.len(), p.subtypes.len()))
            .map_err(|e| e.to_string())
    });
}

#[test]
fn point_matrices() {
    let animals = read("data/animals33/animals33_features.tsv");
    let usps: Vec<u8> = text(&read("data/usps/usps_test.txt"))
        .lines()
        .take(3)
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes();
    let csv = b"x,y,label\n1.5,-2,a\n\"3\",4e2,\"b, c\"\n".to_vec();
    let specs = [
        MatrixSpec {
            delimiter: Some(Delimiter::Comma),
            header: true,
            label_column: Some(Column::Name("label".into())),
            infer: false,
            ..MatrixSpec::default()
        },
        MatrixSpec {
            delimiter: Some(Delimiter::Tab),
            header: true,
            label_column: Some(Column::Name("animal".into())),
            infer: false,
            ..MatrixSpec::default()
        },
        MatrixSpec {
            delimiter: Some(Delimiter::Whitespace),
            header: false,
            label_column: Some(Column::Index(0)),
            infer: false,
            ..MatrixSpec::default()
        },
        MatrixSpec {
            header: true,
            infer: true,
            ..MatrixSpec::default()
        },
        MatrixSpec::default(),
    ];
    fuzz("point_matrix", 2000, vec![csv, animals, usps], |b| {
        let t = text(b);
        // Parsed if some layout reads it; every layout must give a result or a one-line error.
        let (mut parsed, mut first_err) = (false, None);
        for spec in &specs {
            match PointMatrix::parse(&t, spec, "points") {
                Ok(m) => {
                    parsed = true;
                    assert!(m.dim() > 0 && m.values.len() == m.n_points() * m.dim());
                    assert!(m.values.iter().all(|v| v.is_finite()));
                    if let Some(l) = &m.labels {
                        assert_eq!(l.len(), m.n_points());
                    }
                }
                Err(e) => {
                    let e = e.to_string();
                    assert!(!e.contains('\n'), "error is not one line: {e:?}");
                    first_err = first_err.or(Some(e));
                }
            }
        }
        match first_err {
            Some(e) if !parsed => Err(e),
            _ => Ok(()),
        }
    });
}

#[test]
fn toml_configs() {
    let mut corpus = Vec::new();
    for entry in std::fs::read_dir(root().join("configs")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            corpus.push(std::fs::read(&p).unwrap());
        }
    }
    corpus.sort();
    let registry = Registry::builtin();
    let base = root().join("configs");
    fuzz("toml_config", 5000, corpus, |b| {
        let cfg = config::parse_in(&registry, &text(b), &base).map_err(|e| e.to_string())?;
        cfg.kind
            .inputs(&cfg.value)
            .map(|_| ())
            .map_err(|e| format!("{e:#}"))
    });
}

/// The tables `check` and `plot` read back: each table of a real results folder, mutated, is
/// read by the kind's measures (every case) and figures (one case in `FUZZ_FIGURES_EVERY`).
#[test]
fn parquet_tables_of_check_and_plot() {
    let dir = std::env::temp_dir().join(format!("trellis-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let names: &[&str] = if std::env::var("FUZZ_ALL_KINDS").is_ok() {
        &[
            "jets_smoke",
            "posterior_sampling",
            "sparse",
            "scaling_smoke",
            "dasgupta",
            "pam50",
            "cost_functions_smoke",
            "flat_pam50",
            "astar_smoke",
        ]
    } else {
        &["jets_smoke"]
    };
    let registry = Registry::builtin();
    for name in names {
        let cfg =
            crate::common::config_copy(&dir, name, &dir, None, &format!("{name}.toml"), |t| t);
        let res = match experiment::run_config(&cfg, true).unwrap() {
            experiment::Outcome::Written(p) | experiment::Outcome::UpToDate(p) => p,
        };
        let results = Results::open(&res).unwrap();
        let kind = experiment::kind_of(&registry, &results).unwrap();
        let tables: Vec<String> = std::fs::read_dir(&res)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".parquet") && f != "checks.parquet")
            .collect();
        let mut sorted = tables.clone();
        sorted.sort();
        // Corpus entry k is table k's bytes behind one byte naming the table.
        let corpus: Vec<Vec<u8>> = sorted
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let mut b = vec![k as u8];
                b.extend(std::fs::read(res.join(f)).unwrap());
                b
            })
            .collect();
        let originals: Vec<Vec<u8>> = corpus.iter().map(|b| b[1..].to_vec()).collect();
        let figures_every: u64 = env_or("FUZZ_FIGURES_EVERY", 50);
        let figures_dir = dir.join(format!("{name}-figures"));
        std::fs::create_dir_all(&figures_dir).unwrap();
        let count = std::cell::Cell::new(0u64);
        // The campaign's cases are shared between the kinds' tables.
        let cases = env_or("FUZZ_CASES", 1000 * names.len() as u32) / names.len() as u32;
        fuzz_n(&format!("parquet[{name}]"), cases, corpus, |b| {
            let (k, bytes) = b.split_first().unwrap_or((&0, &[]));
            let k = *k as usize % sorted.len();
            let path = res.join(&sorted[k]);
            std::fs::write(&path, bytes).unwrap();
            let measured = kind.measures(&results).map(|_| ());
            count.set(count.get() + 1);
            let drawn = if count.get().is_multiple_of(figures_every) {
                kind.figures(&results, &figures_dir)
            } else {
                Ok(())
            };
            std::fs::write(&path, &originals[k]).unwrap();
            measured
                .and(drawn)
                .map_err(|e| format!("{e:#}"))
                .map_err(|e| e.replace(&res.display().to_string(), "<results>"))
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}
