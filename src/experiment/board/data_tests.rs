//! Tests of the board's data layer: every source's counts, sizes and labels, determinism,
//! similarity matrices, validation messages and the "file" source.

use super::data::*;
use crate::data::pam50::Pam50;
use std::path::{Path, PathBuf};

/// A spec with only a name and a source.
fn spec(name: &str, source: &str) -> DatasetSpec {
    DatasetSpec {
        name: name.into(),
        source: source.into(),
        instances: None,
        points: None,
        min_leaves: None,
        max_leaves: None,
        path: None,
        label_column: None,
        names_column: None,
        standardize: None,
        cluster_sizes: None,
        p_in: None,
        p_out: None,
        root_scale: None,
        max_tries: None,
        stratify: None,
    }
}

/// Resolved as a config in `configs/` would be (tests run in the crate's folder).
fn resolved(mut specs: Vec<DatasetSpec>) -> Vec<DatasetSpec> {
    resolve_paths(&mut specs, Path::new("configs"));
    validate(&specs).unwrap();
    specs
}

fn n_by_n_ok(inst: &Instance) {
    let n = inst.n();
    let s = inst.similarities().expect("similarities");
    assert_eq!(s.len(), n * n, "{}", inst.instance);
    for a in 0..n {
        assert_eq!(s[a * n + a], 0.0);
        for b in 0..n {
            assert!(s[a * n + b].is_finite());
            assert_eq!(s[a * n + b], s[b * n + a]);
        }
    }
}

fn counts(labels: &[usize], k: usize) -> Vec<usize> {
    let mut c = vec![0; k];
    for &l in labels {
        c[l] += 1;
    }
    c
}

fn unique_temp(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!(
        "trellis-board-{}-{nanos}-{name}",
        std::process::id()
    ))
}

#[test]
fn ginkgo_jets_respect_the_leaf_range_and_the_seed() {
    let mut small = spec("small", "ginkgo");
    small.instances = Some(6);
    small.min_leaves = Some(6);
    small.max_leaves = Some(12);
    let mut large = spec("large", "ginkgo");
    large.instances = Some(3);
    large.min_leaves = Some(20);
    large.max_leaves = Some(40);
    large.root_scale = Some(60000.0);
    let specs = resolved(vec![small, large]);
    let a = instances(&specs, 7).unwrap();
    assert_eq!(a.len(), 9);
    for (k, inst) in a.iter().enumerate() {
        let (lo, hi, ds) = if k < 6 {
            (6, 12, "small")
        } else {
            (20, 40, "large")
        };
        assert_eq!(inst.dataset, ds);
        assert_eq!(
            inst.instance,
            format!("jet_{:04}", if k < 6 { k } else { k - 6 })
        );
        let InstanceData::Jet(j) = &inst.data else {
            panic!("not a jet")
        };
        assert!((lo..=hi).contains(&inst.n()), "{} leaves", inst.n());
        assert!(j.model().is_ok() && j.truth().is_some() && inst.labels.is_none());
    }
    assert_eq!(a, instances(&specs, 7).unwrap());
    assert_ne!(a, instances(&specs, 8).unwrap());
    // A dataset's stream depends on its position, not on the datasets before it.
    let alone = instances(&specs[..1], 7).unwrap();
    assert_eq!(alone[..], a[..6]);
    // Too few jets in range: one line naming the keys that help.
    let mut rare = spec("rare", "ginkgo");
    (rare.min_leaves, rare.max_leaves, rare.max_tries) = (Some(60), Some(64), Some(50));
    let e = instances(&resolved(vec![rare]), 7).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("board.datasets[0] (\"rare\"") && e.contains("board.datasets[0].root_scale"),
        "{e}"
    );
}

#[test]
fn test100_reads_the_first_jets() {
    let all = instances(&resolved(vec![spec("t", "ginkgo_test100")]), 1).unwrap();
    assert_eq!(all.len(), 100);
    assert!(all.iter().all(|i| i.n() == 9));
    let mut s = spec("t", "ginkgo_test100");
    s.instances = Some(5);
    let five = instances(&resolved(vec![s]), 99).unwrap();
    assert_eq!(five[..], all[..5]);
    let InstanceData::Jet(j) = &five[0].data else {
        panic!()
    };
    assert_eq!(j.name, "tree_100_truth_3[0]");
}

#[test]
fn pam50_subsamples_are_stratified_and_match_the_pam50_kind_weights() {
    let mut s = spec("pam50_12", "pam50");
    s.points = Some(12);
    s.instances = Some(3);
    let mut big = spec("pam50_50", "pam50");
    big.points = Some(50);
    let specs = resolved(vec![s, big]);
    let a = instances(&specs, 3).unwrap();
    assert_eq!(a.len(), 4);
    for inst in &a {
        n_by_n_ok(inst);
        let labels = inst.labels.as_ref().unwrap();
        assert_eq!(inst.classes, ["Basal", "Her2", "LumA", "LumB", "Normal"]);
        let c = counts(labels, 5);
        let (lo, hi) = (inst.n() / 5, inst.n().div_ceil(5));
        assert!(c.iter().all(|&k| (lo..=hi).contains(&k)), "{c:?}");
        let InstanceData::Points { x, .. } = &inst.data else {
            panic!()
        };
        assert!(x.iter().all(|r| r.len() == 50));
    }
    assert_eq!(a[0].n(), 12);
    assert_eq!(a[3].n(), 50);
    assert_ne!(a[0], a[1]);
    assert_eq!(a, instances(&specs, 3).unwrap());
    assert_ne!(a, instances(&specs, 4).unwrap());

    // The same samples through the pam50 kind's loader give the same raw and centred weights.
    let data = Pam50::load(Path::new("data/pam50")).unwrap();
    let InstanceData::Points { x, .. } = &a[0].data else {
        panic!()
    };
    let all = data
        .filled_rows(&(0..data.samples.len()).collect::<Vec<_>>())
        .unwrap();
    let idx: Vec<usize> = x
        .iter()
        .map(|r| all.iter().position(|q| q == r).unwrap())
        .collect();
    assert!(idx.iter().all(|&k| data.subtypes[k].is_some()));
    let n = idx.len();
    let (raw, centred) = (
        data.correlation_weights(&idx, false).unwrap(),
        data.correlation_weights(&idx, true).unwrap(),
    );
    let mine = a[0].centred_correlations().unwrap();
    let s = a[0].similarities().unwrap();
    for i in 0..n {
        for j in 0..n {
            assert_eq!(s[i * n + j], raw.at(i, j));
            assert!((mine[i * n + j] - centred.at(i, j)).abs() < 1e-12);
        }
    }
    assert_eq!(a[0].similarity_weights().unwrap().unwrap(), raw);
}

#[test]
fn animals33_has_every_animal_in_six_groups() {
    let all = instances(&resolved(vec![spec("animals", "animals33")]), 0).unwrap();
    assert_eq!(all.len(), 1);
    let a = &all[0];
    assert_eq!((a.n(), a.instance.as_str()), (33, "all"));
    n_by_n_ok(a);
    let c = counts(a.labels.as_ref().unwrap(), a.classes.len());
    assert_eq!(a.classes[0], "land mammals");
    assert_eq!(c.iter().sum::<usize>(), 33);
    assert_eq!(c.len(), 6);
    assert_eq!(c[0], 16);
    let InstanceData::Points { x, .. } = &a.data else {
        panic!()
    };
    assert!(x.iter().flatten().all(|&v| v == 0.0 || v == 1.0));
    // Subsamples are stratified over the groups.
    let mut s = spec("animals_12", "animals33");
    s.points = Some(12);
    s.instances = Some(2);
    let subs = instances(&resolved(vec![s]), 0).unwrap();
    assert_eq!(subs.len(), 2);
    assert_ne!(subs[0], subs[1]);
    for inst in &subs {
        assert_eq!(inst.n(), 12);
        let c = counts(inst.labels.as_ref().unwrap(), 6);
        assert!(c.iter().all(|&k| k == 2), "{c:?}");
    }
}

#[test]
fn usps_subsets_are_stratified_by_digit() {
    // One read of USPS for both datasets (the pool is shared within a call).
    let mut small = spec("usps_50", "usps");
    small.points = Some(50);
    small.instances = Some(2);
    let mut large = spec("usps_500", "usps");
    large.points = Some(500);
    let specs = resolved(vec![small, large]);
    let a = instances(&specs, 11).unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(a.iter().map(Instance::n).collect::<Vec<_>>(), [50, 50, 500]);
    for inst in &a {
        assert_eq!(inst.classes.len(), 10);
        assert_eq!(inst.classes[0], "0");
        let c = counts(inst.labels.as_ref().unwrap(), 10);
        let per = inst.n() / 10;
        assert!(c.iter().all(|&k| k == per), "{c:?}");
        let InstanceData::Points { x, .. } = &inst.data else {
            panic!()
        };
        assert!(x.iter().all(|r| r.len() == 256));
    }
    n_by_n_ok(&a[0]);
    n_by_n_ok(&a[2]);
    assert_ne!(a[0], a[1]);
    // Determinism on the small dataset alone (cheap): same seed same, another seed different.
    let again = instances(&specs[..1], 11).unwrap();
    assert_eq!(again[..], a[..2]);
    assert_ne!(instances(&specs[..1], 12).unwrap()[..], a[..2]);
}

#[test]
fn planted_partition_graphs_follow_the_dasgupta_defaults() {
    let mut s = spec("planted", "planted_partition");
    s.instances = Some(4);
    let mut sized = spec("planted_8", "planted_partition");
    sized.points = Some(8);
    let mut custom = spec("planted_custom", "planted_partition");
    custom.cluster_sizes = Some(vec![2, 5]);
    custom.p_in = Some(1.0);
    custom.p_out = Some(0.0);
    let specs = resolved(vec![s, sized, custom]);
    let a = instances(&specs, 5).unwrap();
    assert_eq!(a.len(), 6);
    for (k, inst) in a[..4].iter().enumerate() {
        assert_eq!(inst.instance, format!("graph_{k}"));
        assert_eq!(inst.n(), 12);
        assert_eq!(
            inst.labels.as_deref().unwrap(),
            [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
        );
        n_by_n_ok(inst);
        assert!(inst
            .similarities()
            .unwrap()
            .iter()
            .all(|&w| w == 0.0 || w == 1.0));
        assert!(matches!(inst.data, InstanceData::Graph { .. }));
        assert!(inst.centred_correlations().is_none());
    }
    assert_ne!(a[0], a[1]);
    assert_eq!(a[4].labels.as_deref().unwrap(), [0, 0, 0, 1, 1, 1, 2, 2]);
    // p_in = 1, p_out = 0: exactly the planted blocks.
    let InstanceData::Graph { similarities, .. } = &a[5].data else {
        panic!()
    };
    let l = a[5].labels.as_ref().unwrap();
    for i in 0..7 {
        for j in 0..7 {
            let want = if i != j && l[i] == l[j] { 1.0 } else { 0.0 };
            assert_eq!(similarities[i * 7 + j], want);
        }
    }
    assert_eq!(a, instances(&specs, 5).unwrap());
    assert_ne!(a, instances(&specs, 6).unwrap());
}

#[test]
fn coalescent_d1_is_32_points_in_32_dimensions_without_labels() {
    let mut s = spec("d1", "coalescent_d1");
    s.instances = Some(2);
    let specs = resolved(vec![s]);
    let a = instances(&specs, 2012).unwrap();
    assert_eq!(a.len(), 2);
    for inst in &a {
        assert_eq!(inst.n(), 32);
        assert!(inst.labels.is_none() && inst.classes.is_empty());
        let InstanceData::Points { x, .. } = &inst.data else {
            panic!()
        };
        assert!(x
            .iter()
            .all(|r| r.len() == 32 && r.iter().all(|v| v.is_finite())));
        n_by_n_ok(inst);
    }
    assert_eq!(a[1].instance, "dataset_1");
    assert_ne!(a[0], a[1]);
    assert_eq!(a, instances(&specs, 2012).unwrap());
    assert_ne!(a, instances(&specs, 2013).unwrap());
}

#[test]
fn file_matrix_with_a_label_column_and_jets_json() {
    let csv = unique_temp("points.csv");
    let mut text = String::from("x,kind,y,z\n");
    for k in 0..20 {
        let c = k % 2;
        let v = k as f64;
        text.push_str(&format!(
            "{},{},{},{}\n",
            v * 0.5 + c as f64,
            if c == 0 { "odd_one" } else { "b" },
            (v * 1.7).sin(),
            v * v * 0.01 - c as f64
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let mut all = spec("mine", "file");
    all.path = Some(csv.clone());
    all.label_column = Some("kind".into());
    let mut subs = all.clone();
    subs.name = "mine_6".into();
    subs.points = Some(6);
    subs.instances = Some(3);
    let mut plain = spec("mine_unlabelled", "file");
    plain.path = Some(csv.clone());
    let mut stratify_off = subs.clone();
    stratify_off.name = "mine_uniform".into();
    stratify_off.stratify = Some(false);
    stratify_off.instances = Some(1);
    let specs = resolved(vec![all, subs, stratify_off]);
    assert_eq!(inputs(&specs), vec![csv.clone()]);
    let a = instances(&specs, 1).unwrap();
    // Without a label column named, the one column of text is found as the labels (and said).
    let found = load(&resolved(vec![plain]), 1).unwrap();
    assert_eq!(found.instances[0].classes, ["b", "odd_one"]);
    assert_eq!(found.instances[0].labels, a[0].labels);
    let note = found.read[0].notes.join(" ");
    assert!(
        note.contains("column \"kind\" holds text") && note.contains("--label-column kind"),
        "{note}"
    );
    // Three columns of text (names, and two with every value distinct): an error naming the
    // extra one and the flags.
    std::fs::write(&csv, "x,kind,p,q\n1,a,b,e\n2,c,d,f\n").unwrap();
    let mut two = spec("two_texts", "file");
    two.path = Some(csv.clone());
    let e = format!("{:#}", instances(&resolved(vec![two]), 1).unwrap_err());
    std::fs::remove_file(&csv).ok();
    assert!(
        e.contains("column \"p\" holds text too")
            && e.contains("--names-column")
            && e.contains("--label-column")
            && e.contains("two_texts")
            && !e.contains('\n'),
        "{e}"
    );
    assert_eq!(a.len(), 5);
    assert_eq!((a[0].n(), a[0].instance.as_str()), (20, "all"));
    assert_eq!(a[0].classes, ["b", "odd_one"]);
    assert_eq!(a[0].labels.as_ref().unwrap()[..4], [1, 0, 1, 0]);
    let InstanceData::Points { x, .. } = &a[0].data else {
        panic!()
    };
    assert_eq!(x[1], vec![1.5, 1.7f64.sin(), 0.01 - 1.0]);
    for inst in &a[1..4] {
        assert_eq!(inst.n(), 6);
        assert_eq!(counts(inst.labels.as_ref().unwrap(), 2), [3, 3]);
        n_by_n_ok(inst);
    }
    assert_eq!((a[4].n(), a[4].dataset.as_str()), (6, "mine_uniform"));

    // A jets JSON: the leaf range filters, the first `instances` are kept.
    let mut j = spec("jets", "file");
    j.path = Some(PathBuf::from("data/ginkgo_jets/truth_5.json"));
    let mut four = spec("jets_4", "file");
    four.path = Some(PathBuf::from("data/ginkgo_jets/truth_4.json"));
    four.instances = Some(3);
    four.max_leaves = Some(4);
    let specs = vec![j, four];
    validate(&specs).unwrap();
    let a = instances(&specs, 0).unwrap();
    assert_eq!(a.len(), 13);
    assert!(a[..10].iter().all(|i| i.n() == 5));
    assert!(a[10..].iter().all(|i| i.n() == 4 && i.dataset == "jets_4"));
    // A leaf range that leaves jets out says which.
    let mut five = spec("jets_5", "file");
    five.path = Some(PathBuf::from("data/examples/jets.json"));
    five.min_leaves = Some(5);
    five.max_leaves = Some(5);
    let (kept, dropped) = instances_and_dropped(&[five], 0).unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(dropped.len(), 1);
    assert_eq!(
        dropped[0].phrase(),
        "2 jets dropped (jets_5: outside board.datasets[0].min_leaves..=max_leaves = 5..=5): truth_4[0] (4 leaves), truth_9[0] (9 leaves)"
    );
}

#[test]
fn paths_default_to_the_data_folder_and_inputs_list_the_files() {
    let mut specs = vec![
        spec("a", "pam50"),
        spec("b", "usps"),
        spec("c", "animals33"),
        spec("d", "ginkgo_test100"),
        spec("e", "ginkgo"),
        spec("f", "pam50"),
    ];
    specs[0].path = Some(PathBuf::from("/abs/pam50"));
    resolve_paths(&mut specs, Path::new("/work/cfg"));
    assert_eq!(specs[0].path, Some(PathBuf::from("/abs/pam50")));
    assert_eq!(specs[1].path, Some(PathBuf::from("/work/cfg/../data/usps")));
    assert_eq!(specs[4].path, None);
    let files = inputs(&specs);
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "/abs/pam50/pam50_unc232_expr.tsv",
            "/abs/pam50/pam50_unc232_labels.tsv",
            "/work/cfg/../data/usps/usps_train.txt",
            "/work/cfg/../data/usps/usps_test.txt",
            "/work/cfg/../data/animals33/animals33_features.tsv",
            "/work/cfg/../data/ginkgo_jets/tree_100_n9.json",
            "/work/cfg/../data/pam50/pam50_unc232_expr.tsv",
            "/work/cfg/../data/pam50/pam50_unc232_labels.tsv",
        ]
    );
    // From the real configs folder every input exists.
    let mut specs = vec![
        spec("a", "pam50"),
        spec("b", "usps"),
        spec("c", "animals33"),
    ];
    specs.push(spec("d", "ginkgo_test100"));
    resolve_paths(&mut specs, Path::new("configs"));
    assert!(inputs(&specs).iter().all(|p| p.is_file()));
}

#[test]
fn validation_errors_are_one_line_and_name_the_key() {
    let err = |specs: Vec<DatasetSpec>, want: &str| {
        let e = validate(&specs).unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    };
    err(vec![], "board.datasets is empty");
    err(vec![spec("a", "mnist")], "board.datasets[0].source");
    err(vec![spec("a b", "animals33")], "board.datasets[0].name");
    err(
        vec![spec("a", "animals33"), spec("a", "coalescent_d1")],
        "board.datasets[1].name = \"a\" is also the name of board.datasets[0]",
    );
    err(vec![spec("f", "file")], "board.datasets[0].path is missing");
    let mut s = spec("f", "file");
    s.path = Some("x.xlsx".into());
    err(vec![s], "board.datasets[0].path");
    err(
        vec![spec("p", "pam50")],
        "board.datasets[0].points is missing",
    );
    let mut s = spec("p", "pam50");
    s.points = Some(233);
    err(vec![s], "board.datasets[0].points = 233 is out of range");
    let mut s = spec("u", "usps");
    s.points = Some(20_000);
    err(vec![s], "board.datasets[0].points = 20000");
    // Every instance is held at once: 100,000 of 2,000 images is 3.3 TiB.
    let mut s = spec("u", "usps");
    s.points = Some(2000);
    s.instances = Some(100_000);
    err(vec![s], "board.datasets[0].instances = 100000 is more than the limit of");
    let mut s = spec("g", "ginkgo");
    s.min_leaves = Some(12);
    s.max_leaves = Some(6);
    err(
        vec![s.clone()],
        "board.datasets[0].min_leaves = 12 exceeds max_leaves = 6",
    );
    s.max_leaves = None;
    err(
        vec![s.clone()],
        "board.datasets[0].min_leaves and max_leaves are required",
    );
    s.max_leaves = Some(20);
    s.points = Some(5);
    err(
        vec![s.clone()],
        "board.datasets[0].points does not apply to source = \"ginkgo\"",
    );
    s.points = None;
    s.instances = Some(0);
    err(vec![s.clone()], "board.datasets[0].instances = 0");
    s.instances = Some(1);
    s.root_scale = Some(-1.0);
    err(vec![s], "board.datasets[0].root_scale");
    let mut s = spec("t", "ginkgo_test100");
    s.instances = Some(101);
    err(vec![s], "board.datasets[0].instances = 101");
    let mut s = spec("a", "animals33");
    s.instances = Some(3);
    err(
        vec![s],
        "board.datasets[0].instances = 3 would repeat the same data",
    );
    let mut s = spec("pp", "planted_partition");
    s.cluster_sizes = Some(vec![40, 40]);
    err(vec![s.clone()], "board.datasets[0].cluster_sizes");
    s.cluster_sizes = Some(vec![4, 4]);
    s.points = Some(9);
    err(
        vec![s.clone()],
        "board.datasets[0].points = 9 but cluster_sizes add up to 8",
    );
    s.points = None;
    s.p_in = Some(1.5);
    err(vec![s], "board.datasets[0].p_in = 1.5");
    let mut s = spec("d", "coalescent_d1");
    s.path = Some("x".into());
    err(vec![s], "board.datasets[0].path does not apply");
    let mut s = spec("j", "file");
    s.path = Some("jets.json".into());
    s.points = Some(3);
    err(
        vec![s],
        "board.datasets[0].points does not apply to source = \"file\" with a .json path",
    );
    // A dataset is named in the message as well.
    let mut s = spec("my_set", "usps");
    s.label_column = Some("digit".into());
    err(vec![s], "(dataset \"my_set\")");
}

#[test]
fn config_toml_round_trips_and_rejects_unknown_keys() {
    #[derive(serde::Deserialize)]
    struct Board {
        datasets: Vec<DatasetSpec>,
    }
    let b: Board = toml::from_str(
        r#"
        [[datasets]]
        name = "ginkgo_small"
        source = "ginkgo"
        instances = 20
        min_leaves = 6
        max_leaves = 12

        [[datasets]]
        name = "planted"
        source = "planted_partition"
        cluster_sizes = [4, 4, 4]
        p_in = 0.8
        "#,
    )
    .unwrap();
    assert_eq!(b.datasets.len(), 2);
    validate(&b.datasets).unwrap();
    let e = toml::from_str::<Board>("[[datasets]]\nname = \"a\"\nsource = \"usps\"\nsize = 3\n")
        .err()
        .unwrap();
    assert!(e.to_string().contains("size"), "{e}");
}

#[test]
fn the_board_configs_datasets_validate_and_their_inputs_exist() {
    for entry in std::fs::read_dir("configs").unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("board") && name.ends_with(".toml")) {
            continue;
        }
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let datasets = table["board"]["datasets"].clone();
        let mut specs: Vec<DatasetSpec> = datasets.try_into().unwrap();
        resolve_paths(&mut specs, Path::new("configs"));
        validate(&specs).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(inputs(&specs).iter().all(|p| p.is_file()), "{name}");
    }
}
