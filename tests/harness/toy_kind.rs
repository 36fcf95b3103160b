//! A new experiment kind added through the public trait alone (no edit anywhere else in the
//! crate): it runs from a config, its figures are redrawn from its tables, and it is checked.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use trellis_lab::experiment::chart::{save_chart, LineChart, LineSeries};
use trellis_lab::experiment::check::Measure;
use trellis_lab::experiment::table::{f64_column, Table};
use trellis_lab::experiment::{
    check_results_in, plot_results_in, run_config_in, Experiment, Outcome, Registry, Results,
    RunContext,
};

/// Squares: the numbers 1..=n and their squares.
struct Squares;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SquaresConfig {
    squares: SquaresSection,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SquaresSection {
    n: usize,
}

impl Experiment for Squares {
    type Config = SquaresConfig;

    fn name(&self) -> &'static str {
        "squares"
    }

    fn about(&self) -> &'static str {
        "the squares of 1..=n (a toy kind)"
    }

    fn validate(&self, cfg: &SquaresConfig) -> Result<(), String> {
        if cfg.squares.n == 0 {
            return Err("squares.n must be at least 1".into());
        }
        Ok(())
    }

    fn run(&self, cfg: &SquaresConfig, ctx: &mut RunContext) -> Result<()> {
        let x: Vec<Option<f64>> = (1..=cfg.squares.n).map(|i| Some(i as f64)).collect();
        let y: Vec<Option<f64>> = x.iter().map(|v| v.map(|v| v * v)).collect();
        ctx.manifest.set("largest", cfg.squares.n);
        Table::new()
            .f64("x", &x)
            .f64("y", &y)
            .write_parquet(&ctx.path("squares.parquet"))
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        let t = results.table("squares")?;
        let (x, y) = (f64_column(&t, "x")?, f64_column(&t, "y")?);
        let n: usize = results.fact("largest")?;
        let chart = LineChart {
            series: vec![LineSeries {
                name: "x²".into(),
                points: x
                    .iter()
                    .zip(&y)
                    .map(|(a, b)| (a.unwrap(), b.unwrap()))
                    .collect(),
                dashed: false,
                markers: true,
            }],
            title: format!("Squares up to {n}"),
            x_label: "x".into(),
            y_label: "x²".into(),
            log_y: false,
            integer_x: true,
        };
        save_chart(&out.join("squares"), 600, 400, &chart)?;
        Ok(())
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        let y = f64_column(&results.table("squares")?, "y")?;
        Ok(vec![Measure::new(
            "sum",
            "sum of the squares",
            y.iter().flatten().sum(),
        )])
    }

    fn expected(&self) -> &'static str {
        "[[check]]\nconfig = \"toy\"\nid = \"sum\"\nvalue = 55.0\ntolerance = 0.0\nsource = \"n(n+1)(2n+1)/6 for n = 5\"\n"
    }
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("trellis-toy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_toy_kind_runs_plots_and_checks_through_the_public_trait() {
    let dir = scratch();
    let registry = Registry::builtin().with(&Squares);
    let cfg = dir.join("toy.toml");
    std::fs::write(
        &cfg,
        format!(
            "[experiment]\nkind = \"squares\"\nname = \"toy\"\nseed = 1\noutput_dir = \"{}\"\n[squares]\nn = 5\n",
            dir.join("results").display()
        ),
    )
    .unwrap();
    let res = match run_config_in(&registry, &cfg, false).unwrap() {
        Outcome::Written(d) => d,
        other => panic!("{other:?}"),
    };
    let png = std::fs::read(res.join("squares.png")).unwrap();
    std::fs::remove_file(res.join("squares.png")).unwrap();
    plot_results_in(&registry, &res).unwrap();
    assert_eq!(std::fs::read(res.join("squares.png")).unwrap(), png);
    let v = check_results_in(&registry, &res).unwrap();
    assert_eq!(v.len(), 1);
    assert!(v[0].passed, "{}", v[0].line());
    // The built-in registry does not know the toy kind: a one-line error naming it.
    let e = trellis_lab::experiment::run_config(&cfg, true).unwrap_err();
    assert!(e.to_string().contains("squares"), "{e}");
    // Its own validation and its section's keys are enforced.
    std::fs::write(
        &cfg,
        "[experiment]\nkind = \"squares\"\nname = \"toy\"\nseed = 1\n[squares]\nn = 0\n",
    )
    .unwrap();
    let e = run_config_in(&registry, &cfg, true).unwrap_err();
    assert!(e.to_string().contains("squares.n"), "{e}");
    std::fs::write(
        &cfg,
        "[experiment]\nkind = \"squares\"\nname = \"toy\"\nseed = 1\n[squares]\nn = 2\nm = 1\n",
    )
    .unwrap();
    let e = run_config_in(&registry, &cfg, true).unwrap_err();
    assert!(e.to_string().contains("`m`"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
