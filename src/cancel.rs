//! Cooperative cancellation of long computations (the Python package's Ctrl-C).
//!
//! A process-wide epoch counter: a computation takes a [`Cancel`] token when it starts, and its
//! loops ask [`Cancel::is_cancelled`] between batches of work (a relaxed atomic load, nothing
//! measurable beside the batch); [`cancel_all`] raises the epoch, so every computation running
//! at that instant stops at its next check and returns its error type's `Cancelled`, while
//! computations started afterwards run normally. Nothing in the crate calls [`cancel_all`]: the
//! command line ends on SIGINT as before; the Python bindings call it when Python raises
//! `KeyboardInterrupt` while a computation runs.

use std::sync::atomic::{AtomicU64, Ordering};

static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The one-line message of a cancelled computation.
pub const MESSAGE: &str = "interrupted: the computation was cancelled (Ctrl-C) before it finished";

/// A computation's view of cancellation: cancelled once [`cancel_all`] is called after the
/// token was taken.
#[derive(Clone, Copy, Debug)]
pub struct Cancel {
    start: u64,
}

impl Cancel {
    /// A token for a computation starting now.
    pub fn new() -> Cancel {
        Cancel {
            start: EPOCH.load(Ordering::Acquire),
        }
    }

    /// Whether [`cancel_all`] was called since this token was taken.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        EPOCH.load(Ordering::Relaxed) != self.start
    }
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

/// Cancels every computation running now (their next check fails).
pub fn cancel_all() {
    EPOCH.fetch_add(1, Ordering::Release);
}
