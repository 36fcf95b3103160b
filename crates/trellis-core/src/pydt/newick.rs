//! Newick I/O for PYDT trees: branch lengths t_v − t_{pa(v)} with the zero node as the implicit
//! parent of the root (so the root's own branch length is t_root), multifurcations kept.
//! Leaves are labelled by `names[i]` (quoted when needed) or by their index.

use super::tree::PydtTree;
use super::PydtError;
use crate::coalescent::newick::quote_label;

/// The tree as a Newick string (shortest round-trip decimals), ending in `;`.
pub fn to_newick(tree: &PydtTree, names: Option<&[String]>) -> Result<String, PydtError> {
    tree.validate()?;
    if let Some(nm) = names {
        if nm.len() != tree.n_leaves() {
            return Err(PydtError::Data(format!(
                "{} names for {} leaves",
                nm.len(),
                tree.n_leaves()
            )));
        }
    }
    enum Step {
        Open(usize),
        Comma,
        Close(usize),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Open(tree.root())];
    while let Some(step) = stack.pop() {
        match step {
            Step::Comma => out.push(','),
            Step::Open(v) if !tree.is_leaf(v) => {
                out.push('(');
                stack.push(Step::Close(v));
                let kids: Vec<usize> = tree.children(v).collect();
                for (i, &k) in kids.iter().enumerate().rev() {
                    stack.push(Step::Open(k));
                    if i > 0 {
                        stack.push(Step::Comma);
                    }
                }
            }
            Step::Open(v) => {
                out.push_str(&names.map_or_else(|| v.to_string(), |nm| quote_label(&nm[v])));
                out.push_str(&format!(":{}", tree.branch_length(v)));
            }
            Step::Close(v) => out.push_str(&format!("):{}", tree.branch_length(v))),
        }
    }
    out.push(';');
    Ok(out)
}

/// Parse a Newick string written by [`to_newick`] (or any rooted tree with branch lengths whose
/// leaves are all at distance 1 from the zero node, within `1e-9`). Leaves are matched to
/// `names` (or read as indices `0..n`).
pub fn from_newick(s: &str, names: Option<&[String]>) -> Result<PydtTree, PydtError> {
    let bad = |m: String| PydtError::Tree(format!("Newick: {m}"));
    let chars: Vec<char> = s.trim().chars().collect();
    let mut pos = 0usize;
    // Per node: parent (index into `nodes`), label, branch length.
    struct Raw {
        parent: Option<usize>,
        label: Option<String>,
        length: f64,
        internal: bool,
    }
    let mut nodes: Vec<Raw> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let read_label = |pos: &mut usize| -> String {
        let mut l = String::new();
        if chars.get(*pos) == Some(&'\'') {
            *pos += 1;
            while *pos < chars.len() {
                if chars[*pos] == '\'' {
                    if chars.get(*pos + 1) == Some(&'\'') {
                        l.push('\'');
                        *pos += 2;
                        continue;
                    }
                    *pos += 1;
                    break;
                }
                l.push(chars[*pos]);
                *pos += 1;
            }
        } else {
            while *pos < chars.len() && !"():,;".contains(chars[*pos]) {
                l.push(chars[*pos]);
                *pos += 1;
            }
        }
        l.trim().to_string()
    };
    let read_length = |pos: &mut usize| -> Result<f64, PydtError> {
        if chars.get(*pos) != Some(&':') {
            return Err(bad(format!("missing branch length at character {}", *pos)));
        }
        *pos += 1;
        let start = *pos;
        while *pos < chars.len() && !"(),;".contains(chars[*pos]) {
            *pos += 1;
        }
        let txt: String = chars[start..*pos].iter().collect();
        txt.trim()
            .parse::<f64>()
            .map_err(|_| bad(format!("branch length `{txt}` is not a number")))
    };
    loop {
        match chars.get(pos) {
            Some('(') => {
                nodes.push(Raw {
                    parent: stack.last().copied(),
                    label: None,
                    length: 0.0,
                    internal: true,
                });
                stack.push(nodes.len() - 1);
                pos += 1;
            }
            Some(',') => pos += 1,
            Some(')') => {
                pos += 1;
                let v = stack.pop().ok_or_else(|| bad("unbalanced ')'".into()))?;
                let _ = read_label(&mut pos);
                nodes[v].length = read_length(&mut pos)?;
            }
            Some(';') | None => break,
            Some(_) => {
                let label = read_label(&mut pos);
                let length = read_length(&mut pos)?;
                nodes.push(Raw {
                    parent: stack.last().copied(),
                    label: Some(label),
                    length,
                    internal: false,
                });
            }
        }
    }
    if !stack.is_empty() {
        return Err(bad("unbalanced '('".into()));
    }
    let leaves: Vec<usize> = (0..nodes.len()).filter(|&i| !nodes[i].internal).collect();
    let n = leaves.len();
    if let Some(nm) = names {
        if nm.len() != n {
            return Err(bad(format!("{} names for {n} leaves", nm.len())));
        }
    }
    let leaf_id = |label: &str| -> Result<usize, PydtError> {
        match names {
            Some(nm) => nm
                .iter()
                .position(|x| x == label)
                .ok_or_else(|| bad(format!("leaf `{label}` is not among the names"))),
            None => label
                .parse::<usize>()
                .ok()
                .filter(|&i| i < n)
                .ok_or_else(|| bad(format!("leaf `{label}` is not an index below {n}"))),
        }
    };
    // Ids: leaves by label, internal nodes n.. in order of appearance.
    let mut id = vec![0usize; nodes.len()];
    let mut used = vec![false; n];
    let mut next = n;
    for (i, r) in nodes.iter().enumerate() {
        if r.internal {
            id[i] = next;
            next += 1;
        } else {
            id[i] = leaf_id(r.label.as_deref().unwrap_or(""))?;
            if std::mem::replace(&mut used[id[i]], true) {
                return Err(bad(format!(
                    "leaf `{}` appears twice",
                    r.label.as_deref().unwrap_or("")
                )));
            }
        }
    }
    let mut parents = vec![None; next];
    let mut times = vec![0.0; next];
    for (i, r) in nodes.iter().enumerate() {
        let tp = r.parent.map_or(0.0, |p| times[id[p]]);
        times[id[i]] = tp + r.length;
        parents[id[i]] = r.parent.map(|p| id[p]);
        if !r.internal && (times[id[i]] - 1.0).abs() > 1e-9 {
            return Err(bad(format!(
                "leaf `{}` is at time {}, not 1",
                r.label.as_deref().unwrap_or(""),
                times[id[i]]
            )));
        }
    }
    PydtTree::from_parents(n, &parents, &times)
}
