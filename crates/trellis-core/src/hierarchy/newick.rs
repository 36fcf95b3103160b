//! [`Hierarchy::from_newick`]: any rooted tree in Newick whose leaves are the integers `0..n`.

use super::{Hierarchy, HierarchyError};

/// A node while parsing: its children (indices into the parse arena), its leaf index if a
/// leaf, and its branch length if one was written.
struct Raw {
    children: Vec<usize>,
    leaf: Option<usize>,
    length: Option<f64>,
}

impl Hierarchy {
    /// Parses Newick with integer leaf labels `0..n` (each once), internal nodes of any arity
    /// (two or more children) and optional branch lengths, e.g. `((0,1,2),3);` or
    /// `((0:1,1:1):2,2:3);`. Internal labels and `[comments]` are ignored.
    ///
    /// Heights: when every node but the root has a branch length, a node's height is the
    /// largest `child height + child branch length` (leaves at 0), so an ultrametric tree keeps
    /// its merge times; otherwise heights are cluster sizes, as [`Hierarchy::from_topology`].
    /// Internal nodes are numbered `n..` in post-order (children before parents), as
    /// [`Hierarchy::from_tree`] numbers them, so a binary tree's round trip through
    /// [`Hierarchy::to_newick`] gives the same hierarchy.
    ///
    /// Errors (one line, with the byte offset where it applies) for text that is not Newick, a
    /// label that is not an integer, a leaf given twice or missing, a node with one child, a
    /// negative, NaN or infinite branch length.
    pub fn from_newick(text: &str) -> Result<Hierarchy, HierarchyError> {
        let bad = |pos: usize, msg: &str| {
            HierarchyError::Newick(format!("{msg} at byte {pos}; expected e.g. ((0,1),2);"))
        };
        let s = text.trim().as_bytes();
        let mut nodes: Vec<Raw> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let mut last: Option<usize> = None;
        let mut pos = 0;
        let skip_space = |pos: &mut usize| {
            while *pos < s.len() && s[*pos].is_ascii_whitespace() {
                *pos += 1;
            }
        };
        let root = loop {
            skip_space(&mut pos);
            let Some(&c) = s.get(pos) else {
                return Err(bad(pos, "the text ends before `;`"));
            };
            match c {
                b'(' => {
                    if last.is_some() {
                        return Err(bad(pos, "`(` after a node; separate siblings with `,`"));
                    }
                    nodes.push(Raw {
                        children: Vec::new(),
                        leaf: None,
                        length: None,
                    });
                    open.push(nodes.len() - 1);
                    pos += 1;
                }
                b',' | b')' => {
                    let Some(child) = last.take() else {
                        return Err(bad(pos, "an empty node"));
                    };
                    let Some(&parent) = open.last() else {
                        return Err(bad(pos, "unbalanced `)` or `,` outside parentheses"));
                    };
                    nodes[parent].children.push(child);
                    pos += 1;
                    if c == b')' {
                        open.pop();
                        last = Some(parent);
                        // An internal label (ignored) may follow.
                        while pos < s.len() && !b":,);[".contains(&s[pos]) {
                            pos += 1;
                        }
                    }
                }
                b':' => {
                    let Some(v) = last else {
                        return Err(bad(pos, "a branch length with no node"));
                    };
                    pos += 1;
                    let start = pos;
                    while pos < s.len() && !b",);[".contains(&s[pos]) {
                        pos += 1;
                    }
                    let word = std::str::from_utf8(&s[start..pos]).unwrap_or("").trim();
                    match word.parse::<f64>() {
                        Ok(x) if x.is_finite() && x >= 0.0 => nodes[v].length = Some(x),
                        _ => {
                            return Err(bad(
                                start,
                                &format!(
                                    "branch length {:?} is not a finite number >= 0",
                                    crate::data::clip(word, 40)
                                ),
                            ))
                        }
                    }
                }
                b'[' => {
                    while pos < s.len() && s[pos] != b']' {
                        pos += 1;
                    }
                    pos += 1;
                }
                b';' => {
                    if !open.is_empty() {
                        return Err(bad(pos, "`;` inside parentheses (a `)` is missing)"));
                    }
                    let Some(r) = last else {
                        return Err(bad(pos, "no tree before `;`"));
                    };
                    pos += 1;
                    skip_space(&mut pos);
                    if pos < s.len() {
                        return Err(bad(pos, "text after `;`"));
                    }
                    break r;
                }
                _ => {
                    if last.is_some() {
                        return Err(bad(pos, "a label after a node; separate siblings with `,`"));
                    }
                    let start = pos;
                    while pos < s.len() && !b":,);[ \t\r\n(".contains(&s[pos]) {
                        pos += 1;
                    }
                    let word = std::str::from_utf8(&s[start..pos]).unwrap_or("");
                    let Ok(i) = word.parse::<usize>() else {
                        return Err(bad(
                            start,
                            &format!(
                                "leaf label {:?} is not an integer 0..n",
                                crate::data::clip(word, 40)
                            ),
                        ));
                    };
                    nodes.push(Raw {
                        children: Vec::new(),
                        leaf: Some(i),
                        length: None,
                    });
                    last = Some(nodes.len() - 1);
                }
            }
        };
        let leaves: Vec<usize> = nodes.iter().filter_map(|r| r.leaf).collect();
        let n = leaves.len();
        let mut seen = vec![false; n];
        for &i in &leaves {
            if i >= n {
                return Err(HierarchyError::Newick(format!(
                    "leaf label {i} with {n} leaves; label the leaves 0..{n}, each once"
                )));
            }
            if std::mem::replace(&mut seen[i], true) {
                return Err(HierarchyError::Newick(format!(
                    "leaf {i} appears twice; label the leaves 0..{n}, each once"
                )));
            }
        }
        // Post-order over the arena from the root, iteratively (deep caterpillars).
        let mut order = Vec::with_capacity(nodes.len());
        let mut stack = vec![(root, false)];
        while let Some((v, done)) = stack.pop() {
            if done || nodes[v].leaf.is_some() {
                order.push(v);
                continue;
            }
            if nodes[v].children.len() == 1 {
                return Err(HierarchyError::Newick(
                    "a node with one child; every internal node needs two or more".into(),
                ));
            }
            stack.push((v, true));
            for &c in nodes[v].children.iter().rev() {
                stack.push((c, false));
            }
        }
        let mut id = vec![0usize; nodes.len()];
        let mut next = n;
        for &v in &order {
            id[v] = match nodes[v].leaf {
                Some(i) => i,
                None => {
                    next += 1;
                    next - 1
                }
            };
        }
        let mut parent = vec![None; next];
        for &v in &order {
            for &c in &nodes[v].children {
                parent[id[c]] = Some(id[v]);
            }
        }
        let lengths = order
            .iter()
            .filter(|&&v| v != root)
            .all(|&v| nodes[v].length.is_some());
        if !lengths {
            return Hierarchy::from_topology(n, parent);
        }
        let mut height = vec![0.0; next];
        for &v in &order {
            if nodes[v].leaf.is_none() {
                height[id[v]] = nodes[v]
                    .children
                    .iter()
                    .map(|&c| height[id[c]] + nodes[c].length.unwrap_or(0.0))
                    .fold(0.0, f64::max);
            }
        }
        Hierarchy::from_parents(n, parent, height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Tree;

    #[test]
    fn binary_round_trip_equals_from_tree() {
        for text in ["((0,1),2);", "(((0,3),(1,4)),2);", "(0,1);", "0;"] {
            let h = Hierarchy::from_newick(text).unwrap();
            assert_eq!(h.to_newick(), text);
            if h.n_leaves() > 1 {
                let t = Tree::from_newick(text).unwrap();
                assert_eq!(h, Hierarchy::from_tree(&t).unwrap(), "{text}");
            }
        }
    }

    #[test]
    fn multifurcations_lengths_and_comments() {
        let h = Hierarchy::from_newick(" ((2,0,1)x:0.5,3:2.0)[root]; ").unwrap();
        assert_eq!(h.clusters(), vec![vec![0, 1, 2], vec![0, 1, 2, 3]]);
        // Lengths on the inner node only: not every node has one, so heights are sizes.
        assert_eq!(h.height(h.root()), 4.0);
        let h = Hierarchy::from_newick("((0:1,1:1):1,2:2);").unwrap();
        assert_eq!(h.height(h.root()), 2.0);
        assert_eq!(h.height(3), 1.0);
    }

    #[test]
    fn bad_text_is_one_line_naming_the_problem() {
        for (text, says) in [
            ("((0,1),2)", "ends before `;`"),
            ("((0,1),a);", "\"a\" is not an integer"),
            ("((0,1),1);", "leaf 1 appears twice"),
            ("((0,1),3);", "leaf label 3 with 3 leaves"),
            ("((0,1));", "one child"),
            ("((0,1),2:-1);", "not a finite number >= 0"),
            (
                format!("((0,1),{});", "7".repeat(100_000)).as_str(),
                "(99960 more characters)",
            ),
            (
                format!("((0,1),2:{});", "x".repeat(100_000)).as_str(),
                "(99960 more characters)",
            ),
            ("((0,1),2));", "unbalanced"),
            ("((0,1),2); x", "text after"),
            ("(0,,1);", "empty node"),
        ] {
            let e = Hierarchy::from_newick(text).unwrap_err().to_string();
            assert!(e.contains(says) && !e.contains('\n'), "{text}: {e}");
        }
    }
}
