//! Heap accounting for per-job peak memory: a counting wrapper around the system allocator.
//!
//! The `trellis-lab` binary installs [`CountingAlloc`] as its global allocator; a library user
//! may do the same. Without it (e.g. in unit tests) [`installed`] is false and peaks are `None`.
//! The counters are two relaxed atomics per allocation, a few nanoseconds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

static CURRENT: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting live heap bytes and their peak.
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: trellis_core::memory::CountingAlloc = trellis_core::memory::CountingAlloc;
/// ```
pub struct CountingAlloc;

fn grow(bytes: usize) {
    let now = CURRENT.fetch_add(bytes as u64, Relaxed) + bytes as u64;
    PEAK.fetch_max(now, Relaxed);
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
}

fn shrink(bytes: usize) {
    CURRENT.fetch_sub(bytes as u64, Relaxed);
}

// SAFETY: every call is forwarded unchanged to `System`; only counters are added.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                shrink(layout.size() - new_size);
            }
        }
        p
    }
}

/// Whether [`CountingAlloc`] is the global allocator (it has seen an allocation).
pub fn installed() -> bool {
    INSTALLED.load(Relaxed)
}

/// Live heap bytes now (0 without [`CountingAlloc`]).
pub fn current_bytes() -> u64 {
    CURRENT.load(Relaxed)
}

/// Starts a new peak window at the current heap size; returns that size.
pub fn reset_peak() -> u64 {
    let now = CURRENT.load(Relaxed);
    PEAK.store(now, Relaxed);
    now
}

/// The largest live heap size since the last [`reset_peak`].
pub fn peak_bytes() -> u64 {
    PEAK.load(Relaxed)
}

/// Runs `f` and returns its result with the peak heap bytes it added above the heap size at its
/// start (`None` without [`CountingAlloc`]). Meaningful when nothing else allocates meanwhile:
/// run jobs one at a time (each may use every thread) to measure them.
pub fn measure_peak<T>(f: impl FnOnce() -> T) -> (T, Option<u64>) {
    let base = reset_peak();
    let out = f();
    let peak = peak_bytes().saturating_sub(base);
    (out, installed().then_some(peak))
}

/// The memory this process may use, in bytes: the least of the machine's physical memory
/// (`MemTotal`), the cgroup's limit (`memory.max`) and the address-space limit (`ulimit -v`),
/// where the system tells them; `None` where it tells none.
pub fn usable_bytes() -> Option<u64> {
    [
        proc_bytes("/proc/meminfo", "MemTotal:"),
        file_number("/sys/fs/cgroup/memory.max"),
        address_space_limit(),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// The memory this process may still take, in bytes: the least of the machine's available
/// memory (`MemAvailable`), what the cgroup's limit leaves (`memory.max` less
/// `memory.current`) and what the address-space limit leaves (`ulimit -v` less this
/// process's `VmSize`), where the system tells them; `None` where it tells none. For a caller
/// about to copy a large input: [`usable_bytes`] bounds the whole process, this what is left.
pub fn available_bytes() -> Option<u64> {
    let cgroup = file_number("/sys/fs/cgroup/memory.max")
        .zip(file_number("/sys/fs/cgroup/memory.current"))
        .map(|(max, now)| max.saturating_sub(now));
    let address_space = address_space_limit()
        .map(|limit| limit.saturating_sub(proc_bytes("/proc/self/status", "VmSize:").unwrap_or(0)));
    [
        proc_bytes("/proc/meminfo", "MemAvailable:"),
        cgroup,
        address_space,
    ]
    .into_iter()
    .flatten()
    .min()
}

/// The `Key:   123 kB` line of a /proc file, in bytes.
fn proc_bytes(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The number a file holds (a cgroup's `memory.max`: none when it says `max`).
fn file_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The address-space limit (`ulimit -v`) in bytes, if there is one.
fn address_space_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
        {
            return Some(lim.rlim_cur);
        }
    }
    None
}

/// `Err` with a one-line message when `bytes` bytes for `what` would not fit in the memory this
/// process may use ([`usable_bytes`]; nothing is refused where the system tells no limit): for
/// a caller to check a size before it allocates or copies.
pub fn check_fits(what: &str, bytes: f64) -> Result<(), String> {
    refuse(what, bytes, usable_bytes(), "may use")
}

/// `Err` with a one-line message when `bytes` more bytes for `what` would not fit in what this
/// process may still take ([`available_bytes`]; nothing is refused where the system tells no
/// limit).
pub fn check_available(what: &str, bytes: f64) -> Result<(), String> {
    refuse(what, bytes, available_bytes(), "may still take")
}

/// "`what` would take X, more than the Y this process `may`" when `bytes` exceed `limit`.
fn refuse(what: &str, bytes: f64, limit: Option<u64>, may: &str) -> Result<(), String> {
    match limit {
        Some(limit) if bytes > limit as f64 => Err(format!(
            "{what} would take {}, more than the {} this process {may}",
            crate::exact::human_bytes(bytes),
            crate::exact::human_bytes(limit as f64)
        )),
        _ => Ok(()),
    }
}

/// Asks the kernel to back the spare capacity of `v` (at least 4 MiB) with transparent huge
/// pages (`madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of the allocation), for tables
/// that are read in a scattered order. Call it before the memory is first written. A hint:
/// nothing happens on other systems, when huge pages are disabled, or if the call fails.
pub fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 2 << 20;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < 2 * PAGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let (first, last) = (start.next_multiple_of(PAGE), (start + bytes) / PAGE * PAGE);
        if last > first {
            // SAFETY: [first, last) lies inside the vector's allocation, which stays mapped
            // while `v` is borrowed; MADV_HUGEPAGE changes no contents, only how pages are backed.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}
