//! The pam50 loader, subsample and weights against the data's documented counts.

use std::path::PathBuf;
use trellis_core::data::pam50::{pearson, Pam50};
use trellis_core::exact::FullTrellis;
use trellis_core::model::DasguptaModel;
use trellis_core::search::average_linkage;

fn dir() -> PathBuf {
    crate::common::root().join("data/pam50")
}

#[test]
fn loads_with_the_documented_counts() {
    let d = Pam50::load(&dir()).unwrap();
    assert_eq!((d.samples.len(), d.genes.len()), (232, 50));
    let missing: usize = d.values.iter().flatten().filter(|v| v.is_none()).count();
    assert_eq!(missing, 307);
    assert!((d.missing_fraction() - 0.026466).abs() < 1e-5);
    assert_eq!(d.classes(), ["Basal", "Her2", "LumA", "LumB", "Normal"]);
    let count = |c: &str| {
        d.subtypes
            .iter()
            .filter(|s| s.as_deref() == Some(c))
            .count()
    };
    assert_eq!(
        [
            count("Basal"),
            count("Her2"),
            count("LumA"),
            count("LumB"),
            count("Normal")
        ],
        [57, 35, 23, 12, 12]
    );
    assert_eq!(d.subtypes.iter().filter(|s| s.is_none()).count(), 93);
}

#[test]
fn stratified_subsample_and_weights() {
    let d = Pam50::load(&dir()).unwrap();
    let idx = d.stratified_subsample(2, 2, 12);
    assert_eq!(idx.len(), 12);
    assert_eq!(idx, d.stratified_subsample(2, 2, 12), "seeded");
    for (k, c) in d.classes().iter().enumerate() {
        assert_eq!(d.subtypes[idx[2 * k]].as_deref(), Some(c.as_str()));
        assert_eq!(d.subtypes[idx[2 * k + 1]].as_deref(), Some(c.as_str()));
    }
    assert!(d.subtypes[idx[10]].is_none() && d.subtypes[idx[11]].is_none());
    let raw = d.correlation_weights(&idx, false).unwrap();
    let centred = d.correlation_weights(&idx, true).unwrap();
    let mut off = Vec::new();
    for a in 0..12 {
        for b in 0..12 {
            if a != b {
                assert!((-1.0..=1.0).contains(&raw.get(a, b).unwrap()));
                off.push(centred.get(a, b).unwrap());
            }
        }
    }
    // Centred weights have mean zero and both signs.
    assert!(off.iter().sum::<f64>().abs() < 1e-9);
    assert!(off.iter().any(|&x| x > 0.0) && off.iter().any(|&x| x < 0.0));
    // The exact MAP under Dasgupta's cost is at least as good as average linkage's tree.
    let m = DasguptaModel::new(raw.clone(), 1.0).unwrap();
    let t = FullTrellis::build(&m).unwrap();
    let al = average_linkage(&raw).unwrap();
    assert!(m.tree_cost(&t.map_tree()) <= m.tree_cost(&al) + 1e-9);
}

#[test]
fn pearson_by_hand_and_bad_files() {
    assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-15);
    assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-15);
    let tmp = std::env::temp_dir().join(format!("trellis-pam50-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(
        tmp.join("pam50_unc232_expr.tsv"),
        "sample\tA\tB\ns1\t1.0\ns2\t1\t2\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("pam50_unc232_labels.tsv"),
        "sample\tsubtype\ns1\tBasal\ns2\tNA\n",
    )
    .unwrap();
    let e = Pam50::load(&tmp).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("missing"), "{e}");
    assert!(Pam50::load(&tmp.join("nope"))
        .unwrap_err()
        .to_string()
        .contains("cannot read"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn distance_affinities_by_hand() {
    use trellis_core::data::pam50::Bandwidth;
    let data = Pam50::load(&dir()).unwrap();
    let idx = data.stratified_subsample(2, 1, 11);
    assert_eq!(idx.len(), 11);
    let plain =
        |i: usize| -> Vec<f64> { data.values[i].iter().map(|v| v.unwrap_or(0.0)).collect() };
    let d01 = plain(idx[0])
        .iter()
        .zip(plain(idx[1]))
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let raw = data
        .distance_affinities(&idx, Bandwidth::Fixed(1.0), false)
        .unwrap();
    assert!((raw.get(0, 1).unwrap() - (-d01).exp()).abs() < 1e-15);
    assert_eq!(raw.get(3, 3).unwrap(), 0.0);
    let centred = data
        .distance_affinities(&idx, Bandwidth::Median, true)
        .unwrap();
    let mut sum = 0.0;
    let (mut pos, mut neg) = (0, 0);
    for i in 0..11 {
        for j in i + 1..11 {
            let v = centred.get(i, j).unwrap();
            sum += v;
            pos += (v > 0.0) as usize;
            neg += (v < 0.0) as usize;
        }
    }
    assert!(sum.abs() < 1e-12, "centred affinities sum to zero: {sum}");
    assert!(pos > 0 && neg > 0, "both signs occur");
}
