//! The kinds `run`, `plot`, `check` and `kinds` know. The built-in ones are listed once, in
//! `src/experiment/mod.rs`; a program (or a test) can add its own with [`Registry::with`].

use super::kind::Kind;

/// A set of experiment kinds, looked up by name.
#[derive(Clone)]
pub struct Registry {
    kinds: Vec<&'static dyn Kind>,
}

impl Registry {
    /// A registry of exactly these kinds.
    pub fn new(kinds: Vec<&'static dyn Kind>) -> Registry {
        Registry { kinds }
    }

    /// The built-in kinds.
    pub fn builtin() -> Registry {
        Registry::new(super::builtin_kinds())
    }

    /// This registry plus `kind` (which replaces a kind of the same name).
    pub fn with(mut self, kind: &'static dyn Kind) -> Registry {
        self.kinds.retain(|k| k.name() != kind.name());
        self.kinds.push(kind);
        self
    }

    /// The kind named `name`.
    pub fn get(&self, name: &str) -> Option<&'static dyn Kind> {
        self.kinds.iter().copied().find(|k| k.name() == name)
    }

    /// Every kind.
    pub fn kinds(&self) -> &[&'static dyn Kind] {
        &self.kinds
    }

    /// Every kind's name, in registry order.
    pub fn names(&self) -> Vec<&'static str> {
        self.kinds.iter().map(|k| k.name()).collect()
    }
}
