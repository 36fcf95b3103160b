//! Long computations that Ctrl-C, a `CancelToken` or its timeout stop.
//!
//! Each call makes its cancel handle (the crate's `cancel::CancelHandle`, a child of the
//! caller's token when one is passed) before anything runs, then runs the computation on the
//! process's thread pool (`pool`) inside `cancel::scope` with that handle's token and the GIL
//! released, while the calling thread wakes every 50 ms to let Python run its signal handlers.
//! When one raises (`KeyboardInterrupt` on Ctrl-C), the call's handle is cancelled, the
//! computation's loops stop at their next check (the trellises check between batches of at
//! most a few million splits, so within a fraction of a second), it is joined, and the Python
//! exception propagates; no half-built result is kept. Only the main thread runs signal
//! handlers, so a computation started from another thread is stopped by its token instead:
//! `token.cancel()` from any thread, or the token's timeout.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;
use trellis_core::cancel::{scope, CancelHandle};

create_exception!(
    trellis_lab,
    CancelledError,
    PyException,
    "A computation stopped because its CancelToken was cancelled."
);

/// How often the waiting thread lets Python handle signals.
const POLL: Duration = Duration::from_millis(50);

/// A cancel token for the long computations (`cancel=` of the trellises, searches, samplers,
/// the coalescent, the diffusion trees and the jet generator): `cancel()` from any thread stops
/// the calls given it, and with `timeout` (seconds) they also stop once that time has passed
/// since the token was made. A call whose token is cancelled before it returns raises
/// `CancelledError`, or `TimeoutError` when the timeout passed; a call given a token that is
/// already cancelled raises at once. Ctrl-C stops a call from the main thread with or without a
/// token; a token is how a call on another thread is stopped.
#[pyclass(module = "trellis_lab", name = "CancelToken", frozen)]
pub(crate) struct CancelToken {
    handle: CancelHandle,
    timeout: Option<f64>,
}

#[pymethods]
impl CancelToken {
    #[new]
    #[pyo3(signature = (timeout = None))]
    fn new(timeout: Option<f64>) -> PyResult<CancelToken> {
        let handle = match timeout {
            None => CancelHandle::new(),
            Some(t) if t >= 0.0 && !t.is_nan() => {
                CancelHandle::with_timeout(Duration::try_from_secs_f64(t).unwrap_or(Duration::MAX))
            }
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "timeout = {t} must be a number of seconds >= 0 (or None for no timeout)"
                )))
            }
        };
        Ok(CancelToken { handle, timeout })
    }

    /// Stops every call running with this token, and makes later calls with it raise at once.
    fn cancel(&self) {
        self.handle.cancel();
    }

    /// Whether `cancel()` was called or the timeout has passed.
    #[getter]
    fn cancelled(&self) -> bool {
        self.handle.is_cancelled()
    }

    /// Whether the timeout has passed.
    #[getter]
    fn timed_out(&self) -> bool {
        self.handle.timed_out()
    }

    /// The timeout in seconds given when the token was made (None: none).
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.timeout
    }

    fn __repr__(&self) -> String {
        let t = self.timeout.map_or("None".into(), |t| t.to_string());
        format!(
            "CancelToken(timeout={t}, cancelled={})",
            if self.handle.is_cancelled() {
                "True"
            } else {
                "False"
            }
        )
    }
}

impl CancelToken {
    /// The exception of a call stopped by this token.
    fn error(&self) -> PyErr {
        match self.timeout {
            Some(t) if self.handle.timed_out() => PyTimeoutError::new_err(format!(
                "timed out: the computation ran past its CancelToken's timeout of {t} s"
            )),
            _ => CancelledError::new_err(
                "cancelled: the computation's CancelToken was cancelled before it finished",
            ),
        }
    }
}

/// Runs `f` on a worker thread, returning its value, or the exception a signal handler raised
/// while it ran (after cancelling and joining it), or the token's exception when `cancel` is
/// cancelled or times out before the call returns. A panic in `f` becomes a `RuntimeError`
/// instead of taking the interpreter down.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: Option<&CancelToken>,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    // The call's handle first: a Ctrl-C or a cancellation from here on stops the computation,
    // even one that arrives before the worker has started.
    let call = cancel.map_or_else(CancelHandle::new, |c| c.handle.child());
    let stopped = cancel.filter(|c| c.handle.is_cancelled());
    if let Some(c) = stopped {
        return Err(c.error());
    }
    let token = call.token();
    let (tx, rx) = channel();
    let value = std::thread::scope(|s| {
        s.spawn(move || {
            // On this process's pool, with the call's token as every computation's.
            let run = || crate::pool::on_pool(|| scope(&token, f));
            let _ = tx.send(catch_unwind(AssertUnwindSafe(run)));
        });
        wait(py, rx, None, |rx| {
            call.cancel();
            py.detach(move || drop(rx.recv()));
        })
    })?;
    match cancel.filter(|c| c.handle.is_cancelled()) {
        Some(c) => Err(c.error()),
        None => Ok(value),
    }
}

/// Runs `f`, a computation that cannot be cancelled (a library's own loop), on a thread of its
/// own: its value, or at once the exception a signal handler raised or the token's exception
/// (`cancel` cancelled or timed out) while it ran. A stopped `f` finishes on its own thread
/// and its result is dropped: the call returns at once, but its thread keeps a core and its
/// memory until then.
pub(crate) fn interruptible_detached<T: Send + 'static>(
    py: Python<'_>,
    cancel: Option<&CancelToken>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    if let Some(c) = cancel.filter(|c| c.handle.is_cancelled()) {
        return Err(c.error());
    }
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("trellis-lab-detached".into())
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        })
        .map_err(|e| PyRuntimeError::new_err(format!("could not start a thread: {e}")))?;
    wait(py, rx, cancel, drop)
}

/// The value `rx` brings, waited for with the GIL released and Python's signal handlers run
/// every [`POLL`]; on an exception from them, or once `cancel` is cancelled, `stop` gets the
/// channel (to cancel and join the computation, or to leave it) and the exception is raised.
fn wait<T: Send>(
    py: Python<'_>,
    mut rx: Receiver<std::thread::Result<T>>,
    cancel: Option<&CancelToken>,
    stop: impl FnOnce(Receiver<std::thread::Result<T>>),
) -> PyResult<T> {
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            // A signal that came while the result was sent is raised here, by the call,
            // rather than at the caller's next line (inside its own `except` clause).
            Ok(Ok(value)) => return py.check_signals().map(|()| value),
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "internal error: the computation panicked; please report it with the input",
                ))
            }
            Err(RecvTimeoutError::Timeout) => {
                let stopped = match cancel.filter(|c| c.handle.is_cancelled()) {
                    Some(c) => Err(c.error()),
                    None => py.check_signals(),
                };
                if let Err(e) = stopped {
                    stop(rx);
                    return Err(e);
                }
            }
        }
    }
}
