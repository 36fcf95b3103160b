//! Cooperative cancellation of long computations (the Python package's Ctrl-C, cancel tokens
//! and timeouts).
//!
//! A computation takes a [`Cancel`] token when it starts, and its loops ask
//! [`Cancel::is_cancelled`] between batches of work (a relaxed atomic load or two, nothing
//! measurable beside the batch). A token is cancelled
//! - by [`cancel_all`], which raises a process-wide epoch: every computation running at that
//!   instant stops at its next check, while computations started afterwards run normally;
//! - by its [`CancelHandle`], from any thread: [`CancelHandle::cancel`], or the handle's
//!   deadline passing ([`CancelHandle::with_timeout`]). A handle cancelled before the
//!   computation starts stops it at its first check.
//!
//! Who makes the token: a computation takes `Cancel::new()`, which is the token of the
//! enclosing [`scope`] when there is one on this thread, otherwise a fresh epoch token. A
//! caller that must not lose a cancellation arriving between its decision to compute and the
//! computation's first line (the Python bindings: Ctrl-C is polled on another thread) makes a
//! handle first and runs the computation inside `scope(&handle.token(), ...)`.
//!
//! Nothing in the crate cancels: the command line ends on SIGINT as before; the Python bindings
//! cancel a call's handle when Python raises `KeyboardInterrupt` while it runs, or when the
//! caller's token is cancelled or times out.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The one-line message of a cancelled computation.
pub const MESSAGE: &str = "interrupted: the computation was cancelled (Ctrl-C) before it finished";

/// What a [`CancelHandle`] shares with its tokens.
#[derive(Debug)]
struct Shared {
    cancelled: AtomicBool,
    deadline: Option<Instant>,
    /// A handle whose cancellation (or deadline) cancels this one too.
    parent: Option<Arc<Shared>>,
}

impl Shared {
    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.parent.as_ref().is_some_and(|p| p.is_cancelled())
    }

    fn timed_out(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.parent.as_ref().is_some_and(|p| p.timed_out())
    }
}

/// Cancels the computations that run with its tokens ([`CancelHandle::token`]), from any
/// thread; cheap to clone (clones share the state).
#[derive(Clone, Debug)]
pub struct CancelHandle {
    shared: Arc<Shared>,
}

impl CancelHandle {
    /// A handle that cancels when [`CancelHandle::cancel`] is called.
    pub fn new() -> CancelHandle {
        Self::make(None, None)
    }

    /// A handle that also cancels once `timeout` has passed from now (a timeout too long to
    /// represent never passes).
    pub fn with_timeout(timeout: Duration) -> CancelHandle {
        Self::make(Instant::now().checked_add(timeout), None)
    }

    /// A new handle that is cancelled when this one is (or times out), and can also be
    /// cancelled alone, leaving this one as it is.
    pub fn child(&self) -> CancelHandle {
        Self::make(None, Some(self.shared.clone()))
    }

    fn make(deadline: Option<Instant>, parent: Option<Arc<Shared>>) -> CancelHandle {
        CancelHandle {
            shared: Arc::new(Shared {
                cancelled: AtomicBool::new(false),
                deadline,
                parent,
            }),
        }
    }

    /// Cancels every computation running with this handle's tokens, and every later one.
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether the handle is cancelled: [`CancelHandle::cancel`] was called (on it or on the
    /// handle it is a child of) or its deadline passed.
    pub fn is_cancelled(&self) -> bool {
        self.shared.is_cancelled()
    }

    /// Whether a deadline (its own or its parent's) has passed.
    pub fn timed_out(&self) -> bool {
        self.shared.timed_out()
    }

    /// A token for a computation: cancelled when this handle is, or by [`cancel_all`] after
    /// now.
    pub fn token(&self) -> Cancel {
        Cancel {
            start: EPOCH.load(Ordering::Acquire),
            handle: Some(self.shared.clone()),
        }
    }
}

impl Default for CancelHandle {
    fn default() -> Self {
        CancelHandle::new()
    }
}

/// A computation's view of cancellation: cancelled once [`cancel_all`] is called after the
/// token was taken, or once its [`CancelHandle`] (if any) is cancelled.
#[derive(Clone, Debug)]
pub struct Cancel {
    start: u64,
    handle: Option<Arc<Shared>>,
}

thread_local! {
    static SCOPE: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

impl Cancel {
    /// The token for a computation starting now: the enclosing [`scope`]'s token on this thread
    /// if there is one, otherwise one that only [`cancel_all`] (after now) cancels.
    pub fn new() -> Cancel {
        SCOPE
            .with(|s| s.borrow().clone())
            .unwrap_or_else(|| Cancel {
                start: EPOCH.load(Ordering::Acquire),
                handle: None,
            })
    }

    /// Whether the token is cancelled (see [`Cancel`]).
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        EPOCH.load(Ordering::Relaxed) != self.start
            || self.handle.as_ref().is_some_and(|h| h.is_cancelled())
    }
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

/// Runs `f` with `token` as the token of every computation `f` starts on this thread
/// ([`Cancel::new`] returns a clone of it), so that a cancellation between the token's making
/// and a computation's first check still stops the computation. Scopes nest (the innermost
/// wins) and end with `f`, also when it panics. A computation that hands work to other threads
/// takes its token first and passes it on (or opens a scope there).
pub fn scope<T>(token: &Cancel, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Cancel>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            SCOPE.with(|s| *s.borrow_mut() = previous);
        }
    }
    let previous = SCOPE.with(|s| s.borrow_mut().replace(token.clone()));
    let _restore = Restore(previous);
    f()
}

/// Cancels every computation running now (their next check fails).
pub fn cancel_all() {
    EPOCH.fetch_add(1, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_cancels_its_tokens_and_its_children_not_its_parent() {
        let parent = CancelHandle::new();
        let child = parent.child();
        let (p, c) = (parent.token(), child.token());
        assert!(!p.is_cancelled() && !c.is_cancelled());
        child.cancel();
        assert!(c.is_cancelled() && !p.is_cancelled() && !parent.is_cancelled());
        let other = parent.child();
        parent.cancel();
        assert!(p.is_cancelled() && other.is_cancelled() && other.token().is_cancelled());
        assert!(!parent.timed_out() && !other.timed_out());
    }

    #[test]
    fn a_deadline_cancels_once_passed_and_a_huge_timeout_never() {
        let h = CancelHandle::with_timeout(Duration::from_millis(30));
        let child = h.child();
        assert!(!h.token().is_cancelled());
        std::thread::sleep(Duration::from_millis(40));
        assert!(h.token().is_cancelled() && h.timed_out());
        assert!(child.is_cancelled() && child.timed_out());
        let never = CancelHandle::with_timeout(Duration::MAX);
        assert!(!never.is_cancelled() && !never.timed_out());
    }

    #[test]
    fn a_scope_gives_its_token_to_computations_started_inside_it_and_ends_with_it() {
        let h = CancelHandle::new();
        h.cancel();
        let outer = h.token();
        let inner_handle = CancelHandle::new();
        let inside = scope(&outer, || {
            let nested = scope(&inner_handle.token(), Cancel::new);
            (Cancel::new(), nested)
        });
        assert!(inside.0.is_cancelled(), "the scope's token, taken before");
        assert!(!inside.1.is_cancelled(), "the innermost scope wins");
        assert!(!Cancel::new().is_cancelled(), "no scope after it ends");
        let panicked = std::panic::catch_unwind(|| scope(&outer, || panic!("inside")));
        assert!(panicked.is_err());
        assert!(
            !Cancel::new().is_cancelled(),
            "the scope ends on a panic too"
        );
    }
}
