//! The methods of a labelled-data comparison, one arm each: every coalescent method
//! (`coalescent::method::Method`: SMC variants and greedy rules, with Φ learned), average
//! linkage on Euclidean distances (kodama) and trees drawn from the coalescent prior.

use crate::coalescent::method::Method;
use serde::{Deserialize, Serialize};

/// A tree-building method of this kind. In configs and tables it is its name: a coalescent
/// method's (`mpost2`, `mgreedy`, …), `average_linkage` or `coalescent_prior`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum LabelledMethod {
    /// A coalescent SMC variant or greedy rule, Φ learned in outer iterations.
    Coalescent(Method),
    /// Average linkage on Euclidean distances (HL's "HC").
    AverageLinkage,
    /// A tree drawn from the n-coalescent prior, ignoring the data (HL's "PRIORITY").
    CoalescentPrior,
}

impl LabelledMethod {
    /// The name in configs and tables.
    pub fn name(self) -> &'static str {
        match self {
            LabelledMethod::Coalescent(m) => m.name(),
            LabelledMethod::AverageLinkage => "average_linkage",
            LabelledMethod::CoalescentPrior => "coalescent_prior",
        }
    }

    /// The papers' spelling, for charts.
    pub fn display(self) -> &'static str {
        match self {
            LabelledMethod::Coalescent(m) => m.display(),
            LabelledMethod::AverageLinkage => "HC (average linkage)",
            LabelledMethod::CoalescentPrior => "Coalescent prior",
        }
    }

    /// Every accepted name.
    pub fn all_names() -> Vec<&'static str> {
        let mut v: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        v.extend(["average_linkage", "coalescent_prior"]);
        v
    }

    /// The method called `name`.
    pub fn from_name(name: &str) -> Option<LabelledMethod> {
        match name {
            "average_linkage" => Some(LabelledMethod::AverageLinkage),
            "coalescent_prior" => Some(LabelledMethod::CoalescentPrior),
            _ => Method::ALL
                .into_iter()
                .find(|m| m.name() == name)
                .map(LabelledMethod::Coalescent),
        }
    }

    /// Whether the method fits the coalescent model (and so learns Φ and has merge times).
    pub fn is_fitted(self) -> bool {
        matches!(self, LabelledMethod::Coalescent(_))
    }
}

impl TryFrom<String> for LabelledMethod {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        LabelledMethod::from_name(&s).ok_or_else(|| {
            format!(
                "unknown method {s:?}; use one of {}",
                LabelledMethod::all_names().join(", ")
            )
        })
    }
}

impl From<LabelledMethod> for String {
    fn from(m: LabelledMethod) -> String {
        m.name().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for name in LabelledMethod::all_names() {
            let m: LabelledMethod = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(m.name(), name);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{name}\""));
        }
        let e = serde_json::from_str::<LabelledMethod>("\"hc\"").unwrap_err();
        assert!(e.to_string().contains("use one of"), "{e}");
        assert!(LabelledMethod::from_name("mpost2").unwrap().is_fitted());
        assert!(!LabelledMethod::AverageLinkage.is_fitted());
    }
}
