//! Nothing dropped in silence: whatever a filter removes from a user's data (jets outside a
//! leaf range, duplicate points) is said on the terminal, recorded in the manifest under
//! `dropped`, and named in the figure captions that count the data.

use super::kind::{Results, RunContext};
use serde::{Deserialize, Serialize};

/// The most names one record keeps (the count is always whole).
const MAX_NAMES: usize = 20;

/// What one filter removed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    /// What was removed, plural, e.g. "jets".
    pub what: String,
    /// Why, e.g. "outside jets.min_leaves..=max_leaves = 5..=10".
    pub why: String,
    /// How many.
    pub count: usize,
    /// Which (the first [`MAX_NAMES`]).
    pub names: Vec<String>,
}

impl Dropped {
    /// A record of `names` removed (`None` when nothing was).
    pub fn of(what: &str, why: &str, names: Vec<String>) -> Option<Dropped> {
        (!names.is_empty()).then(|| Dropped {
            what: what.into(),
            why: why.into(),
            count: names.len(),
            names: names
                .into_iter()
                .take(MAX_NAMES)
                .map(|n| crate::data::clip(&n, 40))
                .collect(),
        })
    }

    /// "2 jets dropped (outside …): a, b".
    pub fn phrase(&self) -> String {
        let more = if self.count > self.names.len() {
            format!(" and {} more", self.count - self.names.len())
        } else {
            String::new()
        };
        let what = match self.what.strip_suffix('s') {
            Some(one) if self.count == 1 => one,
            _ => &self.what,
        };
        format!(
            "{} {what} dropped ({}): {}{more}",
            self.count,
            self.why,
            self.names.join(", ")
        )
    }
}

/// Says what `dropped` removed on the terminal and records it in the run's manifest.
pub fn report(ctx: &mut RunContext, dropped: &[Dropped]) {
    for d in dropped {
        eprintln!("note: {}", d.phrase());
    }
    ctx.manifest.set("dropped", dropped);
}

/// What the run recorded as dropped (none for runs before the record existed).
pub fn recorded(results: &Results) -> Vec<Dropped> {
    results.fact("dropped").unwrap_or_default()
}

/// `"; " + every phrase` for a caption, or nothing.
pub fn caption_suffix(results: &Results) -> String {
    recorded(results)
        .iter()
        .map(|d| format!("; {}", d.phrase()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_count_everything_and_name_the_first() {
        assert_eq!(Dropped::of("jets", "why", vec![]), None);
        let d = Dropped::of(
            "jets",
            "outside 5..=10 leaves",
            vec!["a".into(), "b".into()],
        )
        .unwrap();
        assert_eq!(d.phrase(), "2 jets dropped (outside 5..=10 leaves): a, b");
        let many: Vec<String> = (0..25).map(|i| format!("j{i}")).collect();
        let d = Dropped::of("jets", "w", many).unwrap();
        assert_eq!(d.count, 25);
        assert!(d.phrase().ends_with("j19 and 5 more"), "{}", d.phrase());
    }
}
