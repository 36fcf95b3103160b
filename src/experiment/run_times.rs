//! `experiments/run_times.toml`: the wall time of every shipped config in one measured run, with
//! the machine it ran on and its load. `scripts/run_times.py measure` runs the configs and writes
//! it from their manifests; `list` prints these times and the READMEs' run-time blocks quote
//! them, so no run time is written by hand.

use super::config;
use anyhow::Result;
use serde::Deserialize;
use std::path::Path;

/// The machine of the measured run.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// The processor's model name, as /proc/cpuinfo gives it.
    pub cpu_model: String,
    /// Cores the program saw.
    pub cores: u64,
    /// The program's identity (crate version and a hash of the executable).
    pub program: String,
}

/// When the run was measured, and how busy the machine was.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Start, as "YYYY-MM-DD HH:MM UTC".
    pub started: String,
    /// End, as "YYYY-MM-DD HH:MM UTC".
    pub finished: String,
    /// /proc/loadavg's 1, 5 and 15 minute load averages at the start.
    #[serde(default)]
    pub load_average_at_start: Vec<f64>,
    /// The same at the end.
    #[serde(default)]
    pub load_average_at_end: Vec<f64>,
}

/// One config's run time.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConfigTime {
    /// The config's file name in `configs/`.
    pub file: String,
    /// Whether the config has a `# long-running` line.
    pub long_running: bool,
    /// Its wall time in seconds, when measured.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// The wall time in words ("3 min 5 s"), or why it was not measured.
    pub time: String,
    /// Worker threads of the run.
    #[serde(default)]
    pub threads: Option<u64>,
    /// The machine's load averages when this config started.
    #[serde(default)]
    pub load_average_at_start: Vec<f64>,
    /// Where a time not measured in this run comes from (an earlier run's manifest).
    #[serde(default)]
    pub note: Option<String>,
}

impl ConfigTime {
    /// The time as the READMEs' blocks print it: the time, and its note in parentheses.
    pub fn shown(&self) -> String {
        match &self.note {
            Some(n) => format!("{} ({n})", self.time),
            None => self.time.clone(),
        }
    }
}

/// The whole generated file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunTimes {
    /// The machine.
    pub machine: Machine,
    /// The run.
    pub run: Run,
    /// One entry per shipped config.
    pub config: Vec<ConfigTime>,
}

impl RunTimes {
    /// Parses the file; `what` names it in errors.
    pub fn parse(text: &str, what: &str) -> Result<RunTimes> {
        toml::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{what} is not a valid run-times file (scripts/run_times.py writes it): {}",
                config::one_line(&e.to_string())
            )
        })
    }

    /// Reads the file at `path`.
    pub fn read(path: &Path) -> Result<RunTimes> {
        let text = super::staging::read_small(path, 1 << 20)?;
        RunTimes::parse(&text, &path.display().to_string())
    }

    /// The file built into the program.
    pub fn builtin() -> &'static RunTimes {
        static TIMES: std::sync::OnceLock<RunTimes> = std::sync::OnceLock::new();
        TIMES.get_or_init(|| {
            RunTimes::parse(
                include_str!("../../experiments/run_times.toml"),
                "experiments/run_times.toml",
            )
            .expect("the built-in run times are valid (tested)")
        })
    }

    /// The run time of the config file `file` ("jets.toml") as the READMEs print it, if listed.
    pub fn time_of(&self, file: &str) -> Option<String> {
        self.config
            .iter()
            .find(|c| c.file == file)
            .map(ConfigTime::shown)
    }

    /// The run time for `list`'s column: the time, marked "(earlier run)" when this run did not
    /// measure it, or "not measured".
    pub fn short_of(&self, file: &str) -> Option<String> {
        self.config.iter().find(|c| c.file == file).map(|c| {
            if c.note.is_some() {
                format!("{} (earlier run)", c.time)
            } else if c.seconds.is_none() {
                "not measured".into()
            } else {
                c.time.clone()
            }
        })
    }

    /// Where and when the times were measured, in one line.
    pub fn measured_on(&self) -> String {
        format!(
            "one measured run on {} cores of an {}, {} (load average {} at the start, {} at the end; \
             the machine was shared with other jobs)",
            self.machine.cores,
            self.machine.cpu_model,
            self.run.started,
            loads(&self.run.load_average_at_start),
            loads(&self.run.load_average_at_end),
        )
    }
}

fn loads(l: &[f64]) -> String {
    if l.is_empty() {
        return "unknown".into();
    }
    l.iter()
        .map(|x| format!("{x:.2}"))
        .collect::<Vec<_>>()
        .join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_run_times_are_the_file_and_name_every_config_once() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let t = RunTimes::builtin();
        assert_eq!(
            *t,
            RunTimes::read(&dir.join("experiments/run_times.toml")).unwrap()
        );
        let mut files: Vec<String> = std::fs::read_dir(dir.join("configs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|f| f.ends_with(".toml"))
            .collect();
        files.sort();
        let listed: Vec<String> = t.config.iter().map(|c| c.file.clone()).collect();
        assert_eq!(
            listed, files,
            "experiments/run_times.toml and configs/ differ: run scripts/run_times.py write"
        );
        for c in &t.config {
            // A measured time has its seconds; an unmeasured one says so.
            assert_eq!(
                c.seconds.is_some(),
                !c.time.starts_with("not measured"),
                "{}",
                c.file
            );
            // A time from an earlier run says so, and only long-running configs take one.
            if let Some(n) = &c.note {
                assert!(
                    n.starts_with("not measured in this run; from an earlier run"),
                    "{n}"
                );
            }
            let long = std::fs::read_to_string(dir.join("configs").join(&c.file))
                .unwrap()
                .lines()
                .any(|l| l.starts_with("# long-running"));
            assert_eq!(c.long_running, long, "{}: long_running", c.file);
            // Every config that is not long-running is measured in each run.
            assert!(
                long || (c.seconds.is_some() && c.note.is_none()),
                "{} not measured",
                c.file
            );
        }
        assert!(t.measured_on().contains(&t.machine.cpu_model));
        assert_eq!(t.time_of("nope.toml"), None);
        assert_eq!(t.short_of("nope.toml"), None);
        let jets = t.config.iter().find(|c| c.file == "jets.toml").unwrap();
        assert_eq!(t.time_of("jets.toml"), Some(jets.time.clone()));
    }

    #[test]
    fn a_bad_file_is_refused_naming_it() {
        let e = RunTimes::parse("[machine]\ncpu_model = 3\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml") && e.contains("run_times.py"), "{e}");
    }
}
