//! SIGINT and SIGTERM end a run without leaving its staging folder behind: live staging folders
//! are registered here, and the first time one is, a thread starts that waits for either
//! signal, removes every registered folder, and then ends the process as the signal would
//! have (so the exit status still says which signal it was). Lock files the process created
//! and the folders it created for them go too (a folder only while empty). The job journal is
//! not touched: finished jobs survive the interruption and the next run resumes from them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static CREATED: Mutex<Vec<Created>> = Mutex::new(Vec::new());
static START: Once = Once::new();

/// A lock file or an (empty) folder the process created, removed at a signal.
#[derive(Clone, PartialEq, Eq)]
pub enum Created {
    /// A file (a lock the process created).
    File(PathBuf),
    /// A folder the process created, removed only while empty.
    EmptyDir(PathBuf),
}

/// Registers what the process created, to remove at SIGINT or SIGTERM (files first, then
/// folders in the order registered: deepest first).
pub fn register_created(what: Created) {
    START.call_once(start);
    created().push(what);
}

/// Forgets what [`register_created`] registered (removed, or kept on purpose).
pub fn unregister_created(what: &Created) {
    created().retain(|c| c != what);
}

fn created() -> std::sync::MutexGuard<'static, Vec<Created>> {
    CREATED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a staging folder to remove on SIGINT or SIGTERM.
pub fn register(dir: &Path) {
    START.call_once(start);
    hold().push(dir.to_path_buf());
}

/// Forgets a staging folder (committed or removed).
pub fn unregister(dir: &Path) {
    hold().retain(|d| d != dir);
}

/// The list of live staging folders, locked: a commit holds it while it swaps folders, so a
/// signal's cleanup waits until the swap is done (and then finds the folder committed).
pub fn hold() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(unix)]
fn start() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::Builder::new()
        .name("signal-cleanup".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                // Hold the lock to the end, so no folder is registered and left meanwhile.
                let live = hold();
                for d in live.iter() {
                    std::fs::remove_dir_all(d).ok();
                }
                let made = created();
                for c in made.iter() {
                    if let Created::File(f) = c {
                        std::fs::remove_file(f).ok();
                    }
                }
                for c in made.iter() {
                    if let Created::EmptyDir(d) = c {
                        std::fs::remove_dir(d).ok();
                    }
                }
                signal_hook::low_level::emulate_default_handler(sig).ok();
                std::process::exit(128 + sig);
            }
        })
        .ok();
}

#[cfg(not(unix))]
fn start() {}
