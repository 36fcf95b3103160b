//! Long computations that Ctrl-C stops: the computation runs on a worker thread with the GIL
//! released, while the calling thread wakes every 50 ms to let Python run its signal handlers.
//! When one raises (`KeyboardInterrupt` on Ctrl-C), the crate's `cancel::cancel_all` makes the
//! worker's loops stop at their next batch (the trellises check between batches of at most a
//! few million splits, so within a fraction of a second), the worker is joined, and the Python
//! exception propagates; no half-built result is kept.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// How often the waiting thread lets Python handle signals.
const POLL: Duration = Duration::from_millis(50);

/// Runs `f` on a worker thread, returning its value, or the exception a signal handler raised
/// while it ran (after cancelling and joining it). A panic in `f` becomes a `RuntimeError`
/// instead of taking the interpreter down.
pub(crate) fn interruptible<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let (tx, rx) = channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        });
        let mut rx = rx;
        loop {
            let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
            rx = back;
            match got {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "internal error: the computation panicked; please report it with the input",
                    ))
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        trellis_lab::cancel::cancel_all();
                        py.detach(move || drop(rx.recv()));
                        return Err(e);
                    }
                }
            }
        }
    })
}
