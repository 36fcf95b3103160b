//! `Tree.clusters()`: every internal node's cluster as a sorted list of leaves, the lists in
//! lexicographic order, as a lazy sequence. The lists of a caterpillar over n leaves hold
//! n²/2 leaves in all (5·10⁹ at n = 10⁵), so they are made one at a time when asked for; the
//! sequence itself holds O(n) numbers, and finding its order takes O(n log n).
//!
//! The order without the lists: a cluster's first element is its lowest leaf m, so clusters
//! with different lowest leaves are ordered by them; the clusters whose lowest leaf is m are
//! the ancestors of leaf m up to the last one whose lowest leaf is still m, a chain
//! `C_1 ⊂ C_2 ⊂ … ⊂ C_k`. For i < j, `C_j \ C_i` is the union of the children hung off the
//! chain between them, whose lowest leaf is `min(S_{i+1..=j})` (`S_t`: the lowest leaf of the
//! children of `C_t` other than the chain's), and `C_i` comes first exactly when its highest
//! leaf `M_i` is below that (then `C_i` is a prefix of `C_j`; otherwise `C_j` has that leaf
//! where `C_i` has a larger one). With `f(i)` the first `t > i` where `S_t < M_i`, `C_i < C_j`
//! iff `j < f(i)`.

use crate::convert::check_memory;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PySlice, PySliceMethods, PyString};
use std::cmp::Ordering;
use trellis_core::hierarchy::Hierarchy;

/// No parent (the root).
const NONE: u32 = u32::MAX;

/// Every internal node's cluster of a tree, as sorted lists of leaf indices in lexicographic
/// order: a sequence (`len`, indexing, slicing, iteration, `in`, `index`, `count`, `==` with
/// any sequence of lists) whose lists are made when asked for, so that it takes memory linear
/// in the leaves whatever the tree's shape (a caterpillar's lists hold n²/2 leaves in all).
/// `tolist()` makes every list at once (its size is checked first).
#[pyclass(module = "trellis_lab", name = "Clusters", frozen, sequence)]
pub(crate) struct Clusters {
    n_leaves: usize,
    /// The leaves in an order that makes every cluster a range of it.
    order: Vec<u32>,
    /// Each node's range of `order`: `start[v]..start[v] + size[v]`.
    start: Vec<u32>,
    size: Vec<u32>,
    parent: Vec<u32>,
    lowest: Vec<u32>,
    /// The internal nodes in the clusters' order, and each internal node's place in it.
    sorted: Vec<u32>,
    place: Vec<u32>,
    /// The tree's canonical parent array (equal for equal cluster sets).
    canonical: Vec<i64>,
}

impl Clusters {
    /// The clusters of `h`.
    pub(crate) fn of(h: &Hierarchy) -> Clusters {
        let (n, nodes) = (h.n_leaves(), h.n_nodes());
        let lowest = crate::linkage::lowest_leaves(h);
        let mut highest: Vec<usize> = (0..nodes).collect();
        let mut size = vec![1u32; nodes];
        for &v in h.postorder() {
            if v >= n {
                let kids = h.children(v);
                highest[v] = kids.iter().map(|&c| highest[c]).max().unwrap_or(v);
                size[v] = kids.iter().map(|&c| size[c]).sum();
            }
        }
        // Ranges: parents before children (the post-order backwards).
        let mut start = vec![0u32; nodes];
        let mut order = vec![0u32; n];
        for &v in h.postorder().iter().rev() {
            if v < n {
                order[start[v] as usize] = v as u32;
                continue;
            }
            let mut at = start[v];
            for &c in h.children(v) {
                start[c] = at;
                at += size[c];
            }
        }
        let parent: Vec<u32> = (h.parents().iter())
            .map(|p| p.map_or(NONE, |p| p as u32))
            .collect();
        let mut sorted = Vec::with_capacity(nodes - n);
        for m in 0..n {
            let mut chain = Vec::new();
            let mut v = parent[m];
            while v != NONE && lowest[v as usize] == m {
                chain.push(v as usize);
                v = parent[v as usize];
            }
            sort_chain(h, &chain, &lowest, &highest, &mut sorted);
        }
        let mut place = vec![0u32; nodes - n];
        for (k, &v) in sorted.iter().enumerate() {
            place[v as usize - n] = k as u32;
        }
        Clusters {
            n_leaves: n,
            order,
            start,
            size,
            parent,
            lowest: lowest.into_iter().map(|l| l as u32).collect(),
            sorted,
            place,
            canonical: crate::tree::canonical(h),
        }
    }

    /// The sorted leaves of node `v`.
    fn leaves(&self, v: usize) -> Vec<u32> {
        let s = self.start[v] as usize;
        let mut c = self.order[s..s + self.size[v] as usize].to_vec();
        c.sort_unstable();
        c
    }

    /// The `k`-th cluster as a Python list.
    fn list<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.leaves(self.sorted[k] as usize))
    }

    /// The place of `item` (a sorted list of leaves) among the clusters, if it is one.
    fn find(&self, item: &Bound<'_, PyAny>) -> Option<usize> {
        let leaves: Vec<i64> = item.extract().ok()?;
        let first = usize::try_from(*leaves.first()?).ok()?;
        if first >= self.n_leaves || leaves.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let mut v = self.parent[first];
        while v != NONE && self.lowest[v as usize] as usize == first {
            let u = v as usize;
            if self.size[u] as usize == leaves.len() {
                let same = self
                    .leaves(u)
                    .iter()
                    .zip(&leaves)
                    .all(|(&a, &b)| a as i64 == b);
                return same.then(|| self.place[u - self.n_leaves] as usize);
            }
            v = self.parent[u];
        }
        None
    }

    /// `index` as a place in `0..len`, or an `IndexError`.
    fn place_of(&self, index: isize) -> PyResult<usize> {
        let len = self.sorted.len() as isize;
        let k = if index < 0 { index + len } else { index };
        if (0..len).contains(&k) {
            Ok(k as usize)
        } else {
            Err(PyIndexError::new_err(format!(
                "cluster index {index} out of range for {len} clusters"
            )))
        }
    }

    /// Leaves in all the lists (the sum of the cluster sizes).
    fn total(&self) -> u64 {
        self.sorted
            .iter()
            .map(|&v| self.size[v as usize] as u64)
            .sum()
    }
}

/// Appends the nodes of `chain` (the clusters whose lowest leaf is m, smallest first) to `out`
/// in lexicographic order (see the module's docs).
fn sort_chain(
    h: &Hierarchy,
    chain: &[usize],
    lowest: &[usize],
    highest: &[usize],
    out: &mut Vec<u32>,
) {
    let k = chain.len();
    // S_t: the lowest leaf hung off the chain at its t-th node (the children not on it).
    let side: Vec<usize> = chain
        .iter()
        .map(|&v| {
            let m = lowest[v];
            let kids = h.children(v).iter().filter(|&&c| lowest[c] != m);
            kids.map(|&c| lowest[c]).min().unwrap_or(usize::MAX)
        })
        .collect();
    // f(i), by a stack of the later places whose S is below every S nearer to i (S rising
    // towards the top).
    let mut first_below = vec![k; k];
    let mut stack: Vec<usize> = Vec::new();
    for i in (0..k).rev() {
        if i + 1 < k {
            while stack.last().is_some_and(|&t| side[t] >= side[i + 1]) {
                stack.pop();
            }
            stack.push(i + 1);
        }
        let below = stack.partition_point(|&t| side[t] < highest[chain[i]]);
        if below > 0 {
            first_below[i] = stack[below - 1];
        }
    }
    let mut idx: Vec<usize> = (0..k).collect();
    idx.sort_unstable_by(|&i, &j| match i.cmp(&j) {
        Ordering::Equal => Ordering::Equal,
        Ordering::Less if j < first_below[i] => Ordering::Less,
        Ordering::Less => Ordering::Greater,
        Ordering::Greater if i < first_below[j] => Ordering::Greater,
        Ordering::Greater => Ordering::Less,
    });
    out.extend(idx.into_iter().map(|i| chain[i] as u32));
}

#[pymethods]
impl Clusters {
    fn __len__(&self) -> usize {
        self.sorted.len()
    }

    /// The cluster at `index` (a sorted list of leaves), or a list of them for a slice.
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Ok(s) = index.cast::<PySlice>() {
            let ix = s.indices(self.sorted.len() as isize)?;
            let places = (0..ix.slicelength).map(|i| (ix.start + i as isize * ix.step) as usize);
            let out = PyList::empty(py);
            for k in places {
                out.append(self.list(py, k)?)?;
            }
            return Ok(out.into_any());
        }
        let k = self.place_of(index.extract()?)?;
        Ok(self.list(py, k)?.into_any())
    }

    fn __contains__(&self, item: &Bound<'_, PyAny>) -> bool {
        self.find(item).is_some()
    }

    /// The place of the cluster `value` (a sorted list of leaves) within `start..stop` (as
    /// `list.index` takes them); `ValueError` if it is not one there.
    #[pyo3(signature = (value, start = 0, stop = isize::MAX, /), text_signature = "($self, value, start=0, stop=9223372036854775807, /)")]
    fn index(&self, value: &Bound<'_, PyAny>, start: isize, stop: isize) -> PyResult<usize> {
        let len = self.sorted.len() as isize;
        let at = |i: isize| if i < 0 { (i + len).max(0) } else { i.min(len) };
        let (lo, hi) = (at(start), at(stop));
        self.find(value)
            .filter(|&k| (lo..hi).contains(&(k as isize)))
            .ok_or_else(|| PyValueError::new_err("the list is not one of the tree's clusters"))
    }

    /// 1 if `value` is one of the clusters, else 0.
    #[pyo3(signature = (value, /))]
    fn count(&self, value: &Bound<'_, PyAny>) -> usize {
        usize::from(self.find(value).is_some())
    }

    /// Equal to another tree's clusters over the same leaves when the trees have the same
    /// clusters, and to any sequence of the same lists in the same order.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let boolean = |b: bool| PyBool::new(py, b).to_owned().into_any().unbind();
        if let Ok(o) = other.cast::<Clusters>() {
            let o = o.get();
            return Ok(boolean(
                self.n_leaves == o.n_leaves && self.canonical == o.canonical,
            ));
        }
        let Ok(len) = other.len() else {
            return Ok(py.NotImplemented());
        };
        if other.is_instance_of::<PyString>() || len != self.sorted.len() {
            return Ok(boolean(false));
        }
        for k in 0..len {
            if k % 4096 == 0 {
                py.check_signals()?;
            }
            if !self.list(py, k)?.eq(other.get_item(k)?)? {
                return Ok(boolean(false));
            }
        }
        Ok(boolean(true))
    }

    /// The number of leaves in all the lists (the sum of the cluster sizes: n²/2 for a
    /// caterpillar over n leaves), what `tolist()` makes.
    #[getter]
    fn total_size(&self) -> u64 {
        self.total()
    }

    /// Every cluster as a list at once (a list of sorted lists); refused, saying the memory it
    /// would take, when that would not fit.
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        // A list slot (8 bytes) and, above 256, an int object (32 bytes) per leaf listed.
        let bytes = self.total() as f64 * 40.0 + self.sorted.len() as f64 * 64.0;
        check_memory(
            &format!("the {} clusters as lists", self.sorted.len()),
            bytes,
            "index the clusters one at a time",
        )?;
        let out = PyList::empty(py);
        for k in 0..self.sorted.len() {
            if k % 4096 == 0 {
                py.check_signals()?;
            }
            out.append(self.list(py, k)?)?;
        }
        Ok(out)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        if self.total() <= 200 {
            return Ok(format!("Clusters({})", self.tolist(py)?.repr()?));
        }
        Ok(format!(
            "Clusters({} clusters over {} leaves, {} leaves in all)",
            self.sorted.len(),
            self.n_leaves,
            self.total()
        ))
    }
}
