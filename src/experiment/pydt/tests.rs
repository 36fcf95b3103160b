use super::data::{parse_groups, principal_components, standardize, ANIMAL_GROUPS};
use super::density::split;
use crate::experiment::table::{f64_column, read_parquet, str_column, u64_column};
use crate::experiment::test_support::{
    assert_checks_pass, config_error, config_in, run_and_replot, scratch, write_config,
};

const HEAD: &str =
    "[experiment]\nkind = \"pydt\"\nname = \"p\"\nseed = 3\noutput_dir = \"{out}\"\n";
const DDT: &str = "[[pydt.models]]\nname = \"DDT\"\n";
const PYDT: &str = "[[pydt.models]]\nname = \"PYDT\"\ntheta = 1.0\nalpha = 0.5\n";
const CLUSTERS: &str = "[pydt.data]\nsource = \"four_clusters\"\nper_cluster = 3\n";
const MCMC: &str = "[pydt.mcmc]\nchains = 1\niterations = 3\n";

fn cfg(data: &str, models: &str, parts: &str) -> String {
    format!("{HEAD}{data}{models}{parts}")
}

#[test]
fn bad_configs_get_one_line_errors_naming_the_key() {
    let probit = "[[pydt.models]]\nname = \"P\"\nobservation = \"probit\"\n";
    let animals = "[pydt.data]\nsource = \"animals33\"\npath = \"../data/animals33/animals33_features.tsv\"\n";
    for (text, needle) in [
        (cfg(CLUSTERS, DDT, ""), "runs nothing"),
        (cfg(CLUSTERS, "", MCMC), "pydt.models"),
        (cfg(CLUSTERS, &format!("{DDT}{DDT}"), MCMC), "twice"),
        (
            cfg(CLUSTERS, "[[pydt.models]]\nname = \"a b\"\n", MCMC),
            "name",
        ),
        (
            cfg(
                CLUSTERS,
                "[[pydt.models]]\nname = \"X\"\nalpha = 1.5\n",
                MCMC,
            ),
            "`alpha` = 1.5",
        ),
        (
            cfg(
                CLUSTERS,
                "[[pydt.models]]\nname = \"X\"\nalpha = 0.25\ntheta = -0.6\n",
                MCMC,
            ),
            "`theta` = -0.6",
        ),
        (
            cfg(CLUSTERS, "[[pydt.models]]\nname = \"X\"\nc = 0.0\n", MCMC),
            "`c` = 0",
        ),
        (
            cfg(
                CLUSTERS,
                "[[pydt.models]]\nname = \"X\"\nsigma2 = -1.0\n",
                MCMC,
            ),
            "`sigma2` = -1",
        ),
        (
            cfg(
                CLUSTERS,
                "[[pydt.models]]\nname = \"X\"\nnoise = -1.0\n",
                MCMC,
            ),
            "noise",
        ),
        (cfg(CLUSTERS, probit, MCMC), "continuous"),
        (cfg(animals, DDT, MCMC), "must be \"probit\""),
        (
            cfg(&format!("{animals}per_cluster = 4\n"), probit, MCMC),
            "per_cluster",
        ),
        (
            cfg(&format!("{animals}standardize = true\n"), probit, MCMC),
            "standardize",
        ),
        (
            cfg("[pydt.data]\nsource = \"usps\"\n", DDT, MCMC),
            "pydt.data.path is missing",
        ),
        (
            cfg(
                "[pydt.data]\nsource = \"four_clusters\"\ndim = 2\n",
                DDT,
                MCMC,
            ),
            "pydt.data.dim",
        ),
        (
            cfg(CLUSTERS, DDT, "[pydt.mcmc]\niterations = 0\n"),
            "iterations",
        ),
        (
            cfg(CLUSTERS, DDT, "[pydt.mcmc]\niterations = 2000000\n"),
            "pydt.mcmc.iterations",
        ),
        (
            cfg(
                CLUSTERS,
                DDT,
                "[pydt.mcmc]\niterations = 2\n[pydt.mcmc.hypers]\nc_prior = [0.0, 1.0]\n",
            ),
            "pydt.mcmc.hypers",
        ),
        (cfg(CLUSTERS, DDT, "[pydt.map]\nseeds = 0\n"), "seeds"),
        (
            cfg(
                CLUSTERS,
                DDT,
                "[pydt.map]\n[pydt.map.search]\nlist_size = 0\n",
            ),
            "list_size",
        ),
        (
            cfg(
                CLUSTERS,
                DDT,
                "[pydt.density]\nburn_in = 1\nsamples = 1\ntest_fraction = 1.5\n",
            ),
            "test_fraction",
        ),
        (
            cfg(
                animals,
                probit,
                "[pydt.density]\nburn_in = 1\nsamples = 1\n",
            ),
            "Gaussian",
        ),
        (
            cfg(CLUSTERS, DDT, "[pydt.mcmc]\niterations = 2\nwarp = 9\n"),
            "warp",
        ),
    ] {
        let e = config_error(&text.replace("{out}", "/tmp/unused"));
        assert!(e.contains(needle), "{needle}: {e}");
    }
}

/// A run that fails on its data writes nothing and says which cell is wrong.
#[test]
fn bad_data_is_refused_before_any_output() {
    let dir = scratch("pydt_bad_data");
    let cases = [
        (
            "nan.csv",
            "a,b\n1,2\n3,NaN\n5,6\n7,8\n",
            "[[pydt.models]]\nname = \"G\"\n",
            "has a missing value (\"NaN\")",
        ),
        (
            "half.csv",
            "a,b\n1,0\n0,1\n1,0.5\n0,0\n",
            "[[pydt.models]]\nname = \"P\"\nobservation = \"probit\"\n",
            "row 2 column 1 is 0.5",
        ),
        (
            "dup.csv",
            "a,b\n1,2\n3,4\n1,2\n5,6\n",
            "[[pydt.models]]\nname = \"G\"\n",
            "deduplicate",
        ),
    ];
    for (file, text, model, needle) in cases {
        std::fs::write(dir.join(file), text).unwrap();
        let cfg = write_config(
            &dir,
            "bad",
            &cfg(
                &format!("[pydt.data]\nsource = \"file\"\npath = \"{file}\"\n"),
                model,
                MCMC,
            ),
        );
        let e = format!(
            "{:#}",
            crate::experiment::run_config(&cfg, true).unwrap_err()
        );
        assert!(e.contains(needle), "{file}: {e}");
        assert!(
            !dir.join("results").join("p").exists(),
            "{file}: output written"
        );
    }
}

#[test]
fn four_clusters_are_equidistant_and_seeded() {
    use super::{data, DataSection, Source};
    let d: DataSection =
        toml::from_str("source = \"four_clusters\"\nper_cluster = 400\nspread = 0.05\ndim = 5")
            .unwrap();
    assert_eq!(d.source, Source::FourClusters);
    let a = data::load(&d, &[], 7, 0).unwrap();
    assert_eq!(a, data::load(&d, &[], 7, 0).unwrap());
    assert_ne!(a.rows, data::load(&d, &[], 7, 1).unwrap().rows);
    assert_eq!((a.rows.len(), a.dim()), (1600, 5));
    assert_eq!(a.group_names, ["A", "B", "C", "D"]);
    let centre = |k: usize| -> Vec<f64> {
        (0..5)
            .map(|j| (0..400).map(|i| a.rows[400 * k + i][j]).sum::<f64>() / 400.0)
            .collect()
    };
    let c: Vec<Vec<f64>> = (0..4).map(centre).collect();
    for i in 0..4 {
        for j in i + 1..4 {
            let dist = c[i]
                .iter()
                .zip(&c[j])
                .map(|(x, y)| (x - y).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!((dist - 2.0).abs() < 0.02, "centres {i}, {j}: {dist}");
        }
        assert!(c[i][3].abs() < 0.02 && c[i][4].abs() < 0.02);
    }
    assert_eq!(a.names[401], "B2");
    assert_eq!(a.labels().unwrap()[1599], 3);
}

#[test]
fn every_animal_has_a_group_and_the_table_parses() {
    let table = parse_groups(ANIMAL_GROUPS, "built-in").unwrap();
    assert_eq!(table.len(), 33);
    let header = std::fs::read_to_string(
        crate::experiment::test_support::crate_dir().join("data/animals33/animals33_features.tsv"),
    )
    .unwrap();
    for line in header.lines().skip(1) {
        let animal = line.split('\t').next().unwrap();
        assert!(table.iter().any(|(a, _)| a == animal), "{animal}");
    }
    let mut groups: Vec<&str> = table.iter().map(|(_, g)| g.as_str()).collect();
    groups.dedup();
    assert_eq!(
        groups,
        [
            "land mammals",
            "aquatic mammals",
            "fish",
            "reptiles",
            "birds",
            "insects"
        ]
    );
    assert!(parse_groups("animal\tgroup\nCat\n", "x")
        .unwrap_err()
        .to_string()
        .contains("line 2"));
}

#[test]
fn standardising_and_principal_components() {
    let mut rows: Vec<Vec<f64>> = (0..50)
        .map(|i| {
            let t = i as f64;
            vec![t, 2.0 * t + (t * 0.7).sin(), 5.0, (t * 1.3).cos()]
        })
        .collect();
    standardize(&mut rows);
    for j in 0..4 {
        let m = rows.iter().map(|r| r[j]).sum::<f64>() / 50.0;
        let v = rows.iter().map(|r| r[j] * r[j]).sum::<f64>() / 50.0;
        assert!(m.abs() < 1e-12);
        assert!(
            (v - if j == 2 { 0.0 } else { 1.0 }).abs() < 1e-12,
            "column {j}: {v}"
        );
    }
    let pc = principal_components(&rows, 3);
    let var: Vec<f64> = (0..3)
        .map(|c| pc.iter().map(|r| r[c] * r[c]).sum::<f64>() / 50.0)
        .collect();
    // Variance is kept in decreasing order, and the total is the trace (3, one column constant).
    assert!(var[0] >= var[1] && var[1] >= var[2], "{var:?}");
    assert!((var.iter().sum::<f64>() - 3.0).abs() < 1e-9, "{var:?}");
    let dot: f64 = pc.iter().map(|r| r[0] * r[1]).sum();
    assert!(dot.abs() < 1e-9);
}

#[test]
fn splits_are_disjoint_complete_and_seeded() {
    let (train, test) = split(40, 0.1, 5, 0).unwrap();
    assert_eq!((train.len(), test.len()), (36, 4));
    let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..40).collect::<Vec<_>>());
    assert_eq!(split(40, 0.1, 5, 0).unwrap(), (train, test.clone()));
    assert_ne!(split(40, 0.1, 5, 1).unwrap().1, test);
    assert!(split(4, 0.5, 5, 0)
        .unwrap_err()
        .to_string()
        .contains("test_fraction"));
}

/// The MCMC part on four small clusters: one row per recorded state, the DDT stays binary,
/// every number finite, and figures redraw byte for byte.
#[test]
fn mcmc_part_runs_end_to_end() {
    let dir = scratch("pydt_mcmc");
    let path = write_config(
        &dir,
        "m",
        &cfg(
            CLUSTERS,
            &format!("{DDT}{PYDT}"),
            "[pydt.mcmc]\nchains = 2\niterations = 6\nthin = 2\n",
        ),
    );
    let res = run_and_replot(&path);
    let t = read_parquet(&res.join("traces.parquet")).unwrap();
    // 2 models x 2 chains x (start + iterations 2, 4, 6).
    assert_eq!(t.height(), 16);
    let model = str_column(&t, "model").unwrap();
    let internal = u64_column(&t, "internal_nodes").unwrap();
    let root = u64_column(&t, "root_children").unwrap();
    let lj = f64_column(&t, "ln_joint").unwrap();
    for i in 0..t.height() {
        assert!(lj[i].unwrap().is_finite());
        if model[i] == "DDT" {
            assert_eq!((internal[i], root[i]), (Some(11), Some(2)));
        } else {
            assert!((1..=11).contains(&internal[i].unwrap()));
        }
    }
    let theta = f64_column(&t, "theta").unwrap();
    assert!((0..t.height()).all(|i| model[i] != "DDT" || theta[i] == Some(0.0)));
    let chains = read_parquet(&res.join("chains.parquet")).unwrap();
    assert_eq!(chains.height(), 4);
    let newick = str_column(&chains, "final_newick").unwrap();
    assert!(newick
        .iter()
        .all(|n| n.contains("A1") && n.contains("D3") && n.ends_with(';')));
    let pts = read_parquet(&res.join("points.parquet")).unwrap();
    assert_eq!((pts.height(), pts.width()), (12, 7));
    assert!(res.join("mcmc_trace.png").is_file());
}

/// The density part on a user's CSV: held-out points disjoint per split, finite averages, and
/// the summary's means are the table's.
#[test]
fn density_part_runs_on_a_users_file() {
    let dir = scratch("pydt_density");
    let mut csv = String::from("kind,x,y\n");
    for i in 0..16 {
        let (k, off) = if i % 2 == 0 { ("a", 0.0) } else { ("b", 4.0) };
        csv.push_str(&format!(
            "{k},{},{}\n",
            off + (i as f64 * 0.9).sin(),
            (i as f64 * 0.37).cos()
        ));
    }
    std::fs::write(dir.join("pts.csv"), csv).unwrap();
    let path = write_config(
        &dir,
        "d",
        &cfg(
            "[pydt.data]\nsource = \"file\"\npath = \"pts.csv\"\nlabel_column = \"kind\"\nstandardize = true\ncomponents = 2\n",
            &format!("{DDT}{PYDT}"),
            "[pydt.density]\nsplits = 2\ntest_fraction = 0.25\nburn_in = 2\nsamples = 3\nthin = 1\n",
        ),
    );
    let res = run_and_replot(&path);
    let t = read_parquet(&res.join("density.parquet")).unwrap();
    assert_eq!(t.height(), 4);
    for col in ["ln_predictive", "ln_likelihood", "ln_joint"] {
        assert!(
            f64_column(&t, col)
                .unwrap()
                .iter()
                .all(|v| v.unwrap().is_finite()),
            "{col}"
        );
    }
    assert!(u64_column(&t, "n_test")
        .unwrap()
        .iter()
        .all(|v| *v == Some(4)));
    let p = read_parquet(&res.join("density_points.parquet")).unwrap();
    assert_eq!(p.height(), 16);
    let names = str_column(&p, "name").unwrap();
    assert!(names[0].starts_with("a_") || names[0].starts_with("b_"));
    let s = read_parquet(&res.join("density_summary.parquet")).unwrap();
    assert_eq!(s.height(), 2 * 4);
    let mean = f64_column(&s, "mean").unwrap();
    let lp = f64_column(&t, "ln_predictive").unwrap();
    let model = str_column(&t, "model").unwrap();
    let ddt: Vec<f64> = (0..4)
        .filter(|&i| model[i] == "DDT")
        .map(|i| lp[i].unwrap())
        .collect();
    assert!((mean[0].unwrap() - (ddt[0] + ddt[1]) / 2.0).abs() < 1e-12);
    assert!(res.join("density.svg").is_file());
}

#[test]
fn smoke_configs_reproduce_the_accepted_runs() {
    // The reference numbers and the 2 properties of every pydt run.
    for (file, checks) in [
        ("pydt_synthetic_smoke.toml", 16 + 2),
        ("animals33_smoke.toml", 25 + 2),
        ("pydt_density_smoke.toml", 15 + 2),
    ] {
        let dir = scratch(file);
        let res = run_and_replot(&config_in(&dir, file));
        assert_eq!(assert_checks_pass(&res), checks, "{file}");
    }
}

/// The MAP part: every tree in `map_nodes.parquet` is whole (one root, times increasing down
/// every path, leaves at t = 1), its counts agree with `maps.parquet`, the DDT is binary, the
/// search never ends below its start, and each replicate has its own data set.
#[test]
fn map_part_writes_consistent_trees() {
    let dir = scratch("pydt_map");
    let path = write_config(
        &dir,
        "map",
        &cfg(
            CLUSTERS,
            &format!("{DDT}{PYDT}"),
            "[pydt.map]\nseeds = 2\n[pydt.map.search]\niterations = 3\n",
        ),
    );
    let res = run_and_replot(&path);
    let maps = read_parquet(&res.join("maps.parquet")).unwrap();
    assert_eq!(maps.height(), 4);
    let (model, rep) = (
        str_column(&maps, "model").unwrap(),
        u64_column(&maps, "replicate").unwrap(),
    );
    let internal = u64_column(&maps, "internal_nodes").unwrap();
    let maxc = u64_column(&maps, "max_children").unwrap();
    let (obj, start) = (
        f64_column(&maps, "objective").unwrap(),
        f64_column(&maps, "start_objective").unwrap(),
    );
    let nodes = read_parquet(&res.join("map_nodes.parquet")).unwrap();
    let (nm, nr, nn, np, nt) = (
        str_column(&nodes, "model").unwrap(),
        u64_column(&nodes, "replicate").unwrap(),
        u64_column(&nodes, "node").unwrap(),
        u64_column(&nodes, "parent").unwrap(),
        f64_column(&nodes, "time").unwrap(),
    );
    for i in 0..maps.height() {
        assert!(obj[i].unwrap() >= start[i].unwrap());
        if model[i] == "DDT" {
            assert_eq!((maxc[i], internal[i]), (Some(2), Some(11)));
        }
        let rows: Vec<usize> = (0..nodes.height())
            .filter(|&k| nm[k] == model[i] && nr[k] == rep[i])
            .collect();
        assert_eq!(rows.len() as u64, 12 + internal[i].unwrap());
        assert_eq!(rows.iter().filter(|&&k| np[k].is_none()).count(), 1);
        let time_of = |v: u64| {
            rows.iter()
                .find(|&&k| nn[k] == Some(v))
                .map(|&k| nt[k].unwrap())
                .unwrap()
        };
        for &k in &rows {
            let t = nt[k].unwrap();
            if nn[k].unwrap() < 12 {
                assert_eq!(t, 1.0);
            }
            if let Some(p) = np[k] {
                assert!(time_of(p) < t, "parent after child");
            }
        }
    }
    let pts = read_parquet(&res.join("points.parquet")).unwrap();
    assert_eq!(pts.height(), 24);
    let x1 = f64_column(&pts, "x1").unwrap();
    assert_ne!(x1[0], x1[12], "replicates share their data");
    let trace = read_parquet(&res.join("map_trace.parquet")).unwrap();
    let o = f64_column(&trace, "objective").unwrap();
    let s = u64_column(&trace, "step").unwrap();
    for k in 1..trace.height() {
        if s[k] != Some(0) {
            assert!(
                o[k].unwrap() >= o[k - 1].unwrap(),
                "the best objective fell"
            );
        }
    }
    for f in [
        "map_trees.png",
        "map_trees_linear.svg",
        "map_root_children.png",
        "map_search.png",
    ] {
        assert!(res.join(f).is_file(), "{f}");
    }
}

/// Damaged tables (no rows, absurd node numbers, cycles) give errors or odd figures, never a
/// panic, in `plot` and `check`.
#[test]
fn damaged_tables_never_panic() {
    use crate::experiment::table::Table;
    let dir = scratch("pydt_damaged");
    let path = write_config(
        &dir,
        "dmg",
        &cfg(
            CLUSTERS,
            DDT,
            "[pydt.map]\n[pydt.map.search]\niterations = 1\n[pydt.mcmc]\niterations = 2\n",
        ),
    );
    let res = run_and_replot(&path);
    let nodes = |node: &[Option<u64>], parent: &[Option<u64>]| {
        let n = node.len();
        Table::new()
            .str("model", &vec!["DDT"; n])
            .u64("replicate", &vec![Some(1); n])
            .u64("node", node)
            .u64("parent", parent)
            .f64("time", &vec![Some(f64::NAN); n])
            .str("name", &vec!["x"; n])
            .str("group", &vec!["A"; n])
            .write_parquet(&res.join("map_nodes.parquet"))
            .unwrap()
    };
    // A cycle, a self-loop and a node number far past the rows.
    nodes(&[Some(0), Some(1), Some(2)], &[Some(1), Some(0), Some(2)]);
    let _ = crate::experiment::plot_results(&res);
    let _ = crate::experiment::check_results(&res);
    nodes(&[Some(1 << 40)], &[None]);
    let e = crate::experiment::plot_results(&res).unwrap_err();
    assert!(format!("{e:#}").contains("damaged"), "{e:#}");
    // Empty tables.
    Table::new()
        .str("model", &Vec::<String>::new())
        .u64("replicate", &[])
        .u64("chain", &[])
        .u64("iteration", &[])
        .f64("ln_joint", &[])
        .u64("internal_nodes", &[])
        .u64("root_children", &[])
        .f64("objective", &[])
        .f64("start_objective", &[])
        .u64("max_children", &[])
        .f64("purity", &[])
        .f64("subtree", &[])
        .write_parquet(&res.join("maps.parquet"))
        .unwrap();
    std::fs::copy(res.join("maps.parquet"), res.join("traces.parquet")).unwrap();
    let _ = crate::experiment::plot_results(&res);
    let _ = crate::experiment::check_results(&res);
}
