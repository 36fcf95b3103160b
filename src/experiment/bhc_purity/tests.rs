//! The bhc_purity kind: the smoke config end to end (checks, redraw, 1 against 2 threads), the
//! subsets, the data loading, purity on hand-computed trees and the config errors.

use super::run::{class_tree, load, mean_se, repetition, subset, Data};
use super::{BhcPuritySection, DatasetSection, ModelKind};
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, crate_dir, run_and_replot, scratch,
    write_config,
};
use crate::experiment::{run_config, Outcome};

fn section(datasets: Vec<DatasetSection>) -> BhcPuritySection {
    BhcPuritySection {
        repetitions: 2,
        alpha: 1.0,
        bernoulli_strength: 2.0,
        niw_kappa0: 0.1,
        niw_scale: 0.25,
        datasets,
    }
}

fn dataset(name: &str, file: &str, model: ModelKind) -> DatasetSection {
    DatasetSection {
        name: name.into(),
        paper: None,
        file: crate_dir().join(file),
        model,
        binarise_at: None,
        classes: None,
        per_class: 2,
    }
}

#[test]
fn smoke_config_gives_the_accepted_numbers_redraws_identically_and_ignores_threads() {
    let dir = scratch("bhc-purity-smoke");
    let cfg = config_in(&dir, "bhc_purity_smoke.toml");
    let res = run_and_replot(&cfg);
    for f in ["purity.png", "purity.svg", "subsets.parquet"] {
        assert!(res.join(f).is_file(), "{f}");
    }
    // 4 data sets x 4 methods x (mean, s.e.) and 3 properties.
    assert_eq!(assert_checks_pass(&res), 35);
    let t = read_parquet(&res.join("purity.parquet")).unwrap();
    assert_eq!(t.height(), 16);
    let (ds, m) = (
        str_column(&t, "dataset").unwrap(),
        str_column(&t, "method").unwrap(),
    );
    assert_eq!((ds[0].as_str(), m[0].as_str()), ("spambase", "single"));
    assert_eq!((ds[15].as_str(), m[15].as_str()), ("fglass", "bhc"));
    // The paper's values sit beside ours; digits024 has none.
    let pm = f64_column(&t, "paper_mean").unwrap();
    assert_eq!((pm[3], pm[8], pm[15]), (Some(0.728), None, Some(0.467)));
    // 2 x 12 spam, 10 x 3 digits, 3 x 6 digits 0/2/4, 6 x 5 glass.
    let pts = u64_column(&t, "points").unwrap();
    assert_eq!([pts[0], pts[4], pts[8], pts[12]], [24, 30, 18, 30].map(Some));
    let reps = read_parquet(&res.join("purity_repetitions.parquet")).unwrap();
    assert_eq!(reps.height(), 4 * 4 * 3);
    assert_eq!(run_config(&cfg, false).unwrap(), Outcome::UpToDate(res.clone()));

    // One thread gives the same numbers bit for bit.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("threads = 0", "threads = 1")
        .replace("name = \"bhc_purity_smoke\"", "name = \"one_thread\"");
    let one = dir.join("one_thread.toml");
    std::fs::write(&one, text).unwrap();
    let Outcome::Written(res1) = run_config(&one, true).unwrap() else {
        panic!("not written")
    };
    let p = |d: &std::path::Path| {
        f64_column(
            &read_parquet(&d.join("purity_repetitions.parquet")).unwrap(),
            "purity",
        )
        .unwrap()
    };
    assert_eq!(
        p(&res).iter().map(|v| v.unwrap().to_bits()).collect::<Vec<_>>(),
        p(&res1).iter().map(|v| v.unwrap().to_bits()).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn subsets_are_capped_per_class_distinct_and_seeded() {
    let data = load(&dataset("glass", "data/uci/fglass.csv", ModelKind::Gaussian)).unwrap();
    assert_eq!(data.points.len(), 214);
    assert_eq!(data.classes, ["WinF", "WinNF", "Veh", "Con", "Tabl", "Head"]);
    let a = subset(&data, 12, 7, 0, 0);
    // 12 of each class but Tabl (9 fragments): all of it.
    assert_eq!(a.len(), 5 * 12 + 9);
    let mut count = [0usize; 6];
    a.iter().for_each(|&i| count[data.class[i]] += 1);
    assert_eq!(count, [12, 12, 12, 12, 9, 12]);
    let mut u = a.clone();
    u.dedup();
    assert_eq!(u.len(), a.len(), "ascending and distinct within each class");
    assert_eq!(a, subset(&data, 12, 7, 0, 0));
    assert_ne!(a, subset(&data, 12, 7, 0, 1));
    assert_ne!(a, subset(&data, 12, 7, 1, 0));
    assert_ne!(a, subset(&data, 12, 8, 0, 0));
}

#[test]
fn digits_are_binarised_and_filtered_by_class() {
    let mut d = dataset("d", "data/labelled/digits.csv", ModelKind::Bernoulli);
    d.binarise_at = Some(8.0);
    d.classes = Some(vec!["0".into(), "2".into(), "4".into()]);
    let data = load(&d).unwrap();
    // scikit-learn's digits hold 178 zeros, 177 twos and 181 fours.
    assert_eq!(data.points.len(), 178 + 177 + 181);
    assert_eq!(data.classes, ["0", "2", "4"]);
    assert!(data.points.iter().flatten().all(|&v| v == 0.0 || v == 1.0));
    // The first image (a 0): pixel (0, 2) is 5 -> 0, pixel (0, 3) is 13 -> 1.
    assert_eq!((data.points[0][2], data.points[0][3]), (0.0, 1.0));
    d.classes = Some(vec!["0".into(), "x".into()]);
    let e = format!("{:#}", load(&d).err().unwrap());
    assert!(e.contains("class \"x\" is not in") && e.lines().count() == 1, "{e}");
}

#[test]
fn purity_of_hand_computed_trees() {
    // 1-D points 0, 0.1, 5, 5.1, 10.5 of classes 0, 0, 1, 1, 0: every linkage builds
    // (((0, 1), (2, 3)), 4). Class 0 pairs: (0, 1) at a pure node, (0, 4) and (1, 4) at the
    // root (3 of 5 leaves of class 0); class 1: (2, 3) pure. Purity (1 + 0.6 + 0.6 + 1) / 4.
    let data = Data {
        points: [0.0, 0.1, 5.0, 5.1, 10.5].iter().map(|&v| vec![v]).collect(),
        class: vec![0, 0, 1, 1, 0],
        classes: vec!["a".into(), "b".into()],
        row: (0..5).collect(),
    };
    let d = dataset("toy", "unused.csv", ModelKind::Gaussian);
    let r = repetition(&section(vec![d.clone()]), &d, &data, &[0, 1, 2, 3, 4]).unwrap();
    for p in &r.purity[..3] {
        assert!((p - 0.8).abs() < 1e-15, "{p}");
    }
    assert_eq!(r.class_tree, 1.0);
    // Two obvious binary clusters: every method keeps them apart, purity 1.
    let bin = Data {
        points: (0..8)
            .map(|i| vec![f64::from(u8::from(i < 4)); 6])
            .collect(),
        class: (0..8).map(|i| usize::from(i >= 4)).collect(),
        classes: vec!["ones".into(), "zeros".into()],
        row: (0..8).collect(),
    };
    let mut d = dataset("bin", "unused.csv", ModelKind::Bernoulli);
    d.model = ModelKind::Bernoulli;
    let r = repetition(&section(vec![d.clone()]), &d, &bin, &(0..8).collect::<Vec<_>>()).unwrap();
    assert_eq!(r.purity, [1.0; 4]);
    // The class-first tree of a single class and of singletons.
    assert_eq!(class_tree(&[0, 0, 0]).unwrap().dendrogram_purity(&[0, 0, 0]).unwrap(), 1.0);
    let h = class_tree(&[0, 1, 1, 2]).unwrap();
    assert_eq!(h.dendrogram_purity(&[0, 1, 1, 2]).unwrap(), 1.0);
}

#[test]
fn mean_and_standard_error() {
    let (m, se) = mean_se(&[0.5, 0.7]);
    assert!((m - 0.6).abs() < 1e-15 && (se - 0.1).abs() < 1e-15, "{m} {se}");
    let (m, se) = mean_se(&[0.2, 0.4, 0.9]);
    // Sample variance ((0.3)^2 + (0.1)^2 + (0.4)^2) / 2 = 0.13; s.e. sqrt(0.13 / 3).
    assert!((m - 0.5).abs() < 1e-15 && (se - (0.13f64 / 3.0).sqrt()).abs() < 1e-15);
}

#[test]
fn bad_data_is_one_line_naming_the_data_set() {
    let dir = scratch("bhc-purity-bad");
    // Glass under the binary model: its values are not 0/1.
    let text = "[experiment]\nkind = \"bhc_purity\"\nname = \"g\"\nseed = 1\noutput_dir = \"{out}\"\n[bhc_purity]\nrepetitions = 2\n[[bhc_purity.datasets]]\nname = \"glass\"\nfile = \"{data}/uci/fglass.csv\"\nmodel = \"bernoulli\"\nper_class = 3\n";
    let err = format!("{:#}", run_config(&write_config(&dir, "g", text), true).unwrap_err());
    assert!(err.contains("\"glass\"") && err.contains("invalid"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.join("results/g").exists());
    let missing = text.replace("uci/fglass.csv", "uci/none.csv").replace("\"g\"", "\"m\"");
    let err = format!("{:#}", run_config(&write_config(&dir, "m", &missing), true).unwrap_err());
    assert!(err.contains("none.csv") && err.lines().count() == 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn config_errors_name_the_key_and_the_fix() {
    let head = "[experiment]\nkind = \"bhc_purity\"\nname = \"p\"\nseed = 1\n[bhc_purity]\n";
    let ds = "[[bhc_purity.datasets]]\nname = \"a\"\nfile = \"../data/uci/fglass.csv\"\nmodel = \"gaussian\"\nper_class = 3\n";
    for (sec, extra, key) in [
        ("repetitions = 1\n", "", "bhc_purity.repetitions = 1 must be at least 2"),
        ("repetitions = 2\nalpha = 0.0\n", "", "bhc_purity.alpha"),
        ("repetitions = 2\nniw_scale = -1.0\n", "", "bhc_purity.niw_scale"),
        ("repetitions = 2\nbernoulli_strength = 0.0\n", "", "bhc_purity.bernoulli_strength"),
        ("repetitions = 2\n", "per_clas = 3\n", "per_clas"),
        ("repetitions = 2\n", "paper = \"iris\"\n", "is not a row of the paper's table"),
        ("repetitions = 2\n", "classes = [\"WinF\"]\n", "fewer than 2 classes"),
        ("repetitions = 2\n", "binarise_at = nan\n", "binarise_at"),
        ("repetitions = 2\nmodel = \"x\"\n", "", "model"),
    ] {
        let e = config_error(&format!("{head}{sec}{ds}{extra}"));
        assert!(e.contains(key), "{sec}{extra}: {e}");
    }
    let empty = config_error(&format!("{head}repetitions = 2\ndatasets = []\n"));
    assert!(empty.contains("bhc_purity.datasets is empty"), "{empty}");
    let twice = format!("{head}repetitions = 2\n{ds}{ds}");
    assert!(config_error(&twice).contains("used twice"));
    let small = format!("{head}repetitions = 2\n{}", ds.replace("per_class = 3", "per_class = 1"));
    assert!(config_error(&small).contains("per_class = 1 must be at least 2"));
}
