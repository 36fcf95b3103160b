//! The rayon thread pool the computations run on: one per process. A process that `fork` made
//! (multiprocessing's default start method on Linux before Python 3.14) from a process whose
//! pool had started has the pool's bookkeeping but none of its threads, so work handed to it
//! would wait for ever; such a child makes its own pool on first use. The pool has rayon's
//! default size (`RAYON_NUM_THREADS`, else one thread per core).

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::Mutex;

/// The process that made the pool, and the pool (never dropped: a pool inherited through
/// `fork` has no threads to stop).
static POOL: Mutex<Option<(u32, &'static ThreadPool)>> = Mutex::new(None);

/// This process's pool.
fn pool() -> &'static ThreadPool {
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    match *slot {
        Some((owner, pool)) if owner == pid => pool,
        _ => {
            let pool = ThreadPoolBuilder::new()
                .build()
                .expect("the system refused to start the computation threads");
            let pool: &'static ThreadPool = Box::leak(Box::new(pool));
            *slot = Some((pid, pool));
            pool
        }
    }
}

/// Runs `f` with this process's pool as the one its parallel loops use.
pub(crate) fn on_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    pool().install(f)
}
