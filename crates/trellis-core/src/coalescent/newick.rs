//! Newick I/O for coalescent histories (ultrametric binary trees with branch lengths
//! t_parent − t_child; spec §3.1 positive-time convention). Iterative in both directions, so any n
//! works (USPS: n = 500). Re-exported from `super::history`.

use super::history::{History, HistoryError, Result};
use std::collections::HashMap;

/// A Newick leaf label, quoted (with `''` for `'`) when it holds whitespace or Newick syntax.
pub fn quote_label(s: &str) -> String {
    let plain = !s.is_empty()
        && !s
            .chars()
            .any(|c| c.is_whitespace() || "()[]':;,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// Newick string with branch lengths t_parent − t_child (shortest round-trip decimals); leaves are
/// labelled by `names[i]` (quoted when needed) or by their index. Iterative (any n).
pub fn to_newick(h: &History, names: Option<&[String]>) -> Result<String> {
    h.validate()?;
    if let Some(nm) = names {
        if nm.len() != h.n {
            return Err(HistoryError::BadData(format!(
                "{} names for {} leaves",
                nm.len(),
                h.n
            )));
        }
    }
    let times = h.cluster_times();
    let parents = h.parents()?;
    let root = 2 * h.n - 2;
    let label = |i: usize| names.map_or_else(|| i.to_string(), |nm| quote_label(&nm[i]));
    let bl = |c: usize| parents[c].map(|p| times[p] - times[c]);
    enum Step {
        Open(usize),
        Comma,
        Close(usize),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Open(root)];
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Comma => {
                out.push(',');
                continue;
            }
            Step::Open(c) if c >= h.n => {
                let (a, b, _) = h.merges[c - h.n];
                out.push('(');
                stack.extend([Step::Close(c), Step::Open(b), Step::Comma, Step::Open(a)]);
                continue;
            }
            Step::Open(c) => {
                out.push_str(&label(c));
                c
            }
            Step::Close(c) => {
                out.push(')');
                c
            }
        };
        if let Some(len) = bl(node) {
            out.push_str(&format!(":{len}"));
        }
    }
    out.push(';');
    Ok(out)
}

/// Parse an ultrametric binary Newick tree (as written by [`to_newick`]) with the default
/// ultrametricity tolerance 1e-6·(1 + height). See [`from_newick_with_tolerance`].
pub fn from_newick(s: &str, names: Option<&[String]>) -> Result<History> {
    from_newick_with_tolerance(s, names, 1e-6)
}

struct PNode {
    children: Vec<usize>,
    label: Option<String>,
    bl: Option<f64>,
}

/// Parse a binary Newick tree with branch lengths. Leaves map to ids through `names` (label →
/// index) or, when `None`, must be the integers 0..n−1. Leaf heights must agree within
/// `tol·(1 + height)`; node times are the maximal child height + branch length. Internal labels,
/// `[comments]` and a root branch length are ignored. Ties in time order children first.
pub fn from_newick_with_tolerance(s: &str, names: Option<&[String]>, tol: f64) -> Result<History> {
    let err = |pos: usize, msg: &str| HistoryError::Newick {
        pos,
        msg: msg.to_string(),
    };
    let bytes = s.as_bytes();
    let mut nodes: Vec<PNode> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut last: Option<usize> = None;
    let mut pos = 0;
    let mut done = false;
    let new_node = |nodes: &mut Vec<PNode>, label| {
        nodes.push(PNode {
            children: Vec::new(),
            label,
            bl: None,
        });
        nodes.len() - 1
    };
    // Reads an unquoted or quoted label starting at `pos`.
    let read_label = |pos: &mut usize| -> Result<String> {
        if bytes[*pos] == b'\'' {
            let mut out = String::new();
            let mut i = *pos + 1;
            loop {
                match s[i..].find('\'') {
                    None => return Err(err(*pos, "unterminated quoted label")),
                    Some(q) => {
                        out.push_str(&s[i..i + q]);
                        i += q + 1;
                        if bytes.get(i) == Some(&b'\'') {
                            out.push('\'');
                            i += 1;
                        } else {
                            *pos = i;
                            return Ok(out);
                        }
                    }
                }
            }
        }
        let start = *pos;
        while *pos < bytes.len()
            && !bytes[*pos].is_ascii_whitespace()
            && !b"()[]':;,".contains(&bytes[*pos])
        {
            *pos += 1;
        }
        Ok(s[start..*pos].to_string())
    };
    while pos < bytes.len() {
        let c = bytes[pos];
        if c.is_ascii_whitespace() {
            pos += 1;
            continue;
        }
        if c == b'[' {
            pos = s[pos..]
                .find(']')
                .map(|q| pos + q + 1)
                .ok_or_else(|| err(pos, "unterminated comment"))?;
            continue;
        }
        if done {
            return Err(err(pos, "text after ';'"));
        }
        match c {
            b'(' => {
                if last.is_some() {
                    return Err(err(pos, "unexpected '('"));
                }
                stack.push(new_node(&mut nodes, None));
                pos += 1;
            }
            b',' | b')' => {
                let (child, top) = match (last.take(), stack.last()) {
                    (Some(ch), Some(&top)) => (ch, top),
                    _ => return Err(err(pos, "empty subtree or unbalanced ')'")),
                };
                nodes[top].children.push(child);
                pos += 1;
                if c == b')' {
                    stack.pop();
                    last = Some(top);
                    if pos < bytes.len() && !b"()[]:;, \t\r\n".contains(&bytes[pos]) {
                        read_label(&mut pos)?; // internal label: ignored
                    }
                }
            }
            b':' => {
                let node = last.ok_or_else(|| err(pos, "branch length without a node"))?;
                pos += 1;
                let start = pos;
                while pos < bytes.len()
                    && (bytes[pos].is_ascii_alphanumeric() || b"+-.".contains(&bytes[pos]))
                {
                    pos += 1;
                }
                let v: f64 = s[start..pos]
                    .parse()
                    .map_err(|_| err(start, "bad branch length"))?;
                if !v.is_finite() || v < 0.0 || nodes[node].bl.is_some() {
                    return Err(err(
                        start,
                        "branch length must be finite, >= 0 and given once",
                    ));
                }
                nodes[node].bl = Some(v);
            }
            b';' => {
                if !stack.is_empty() || last.is_none() {
                    return Err(err(pos, "unexpected ';'"));
                }
                done = true;
                pos += 1;
            }
            _ => {
                if last.is_some() {
                    return Err(err(pos, "unexpected label"));
                }
                let l = read_label(&mut pos)?;
                if l.is_empty() {
                    return Err(err(pos, "unexpected character"));
                }
                last = Some(new_node(&mut nodes, Some(l)));
            }
        }
    }
    if !done {
        return Err(err(s.len(), "missing ';'"));
    }
    if last.is_none() {
        return Err(err(0, "empty tree"));
    }
    // Leaves → ids.
    let leaves: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].children.is_empty())
        .collect();
    let n = leaves.len();
    let lookup: HashMap<&str, usize> = match names {
        Some(nm) => nm
            .iter()
            .enumerate()
            .map(|(i, x)| (x.as_str(), i))
            .collect(),
        None => HashMap::new(),
    };
    if names.is_some_and(|nm| nm.len() != n || lookup.len() != n) {
        return Err(err(0, "names must be distinct and as many as the leaves"));
    }
    let mut id = vec![usize::MAX; nodes.len()];
    let mut seen = vec![false; n];
    for &l in &leaves {
        let lab = nodes[l].label.as_deref().unwrap_or("");
        let i = match names {
            Some(_) => lookup.get(lab).copied(),
            None => lab.parse::<usize>().ok(),
        }
        .filter(|&i| i < n && !seen[i])
        .ok_or_else(|| err(0, &format!("unknown or repeated leaf label '{lab}'")))?;
        seen[i] = true;
        id[l] = i;
    }
    // Heights: nodes are created parents-first, so reverse order visits children first.
    let mut height = vec![0.0; nodes.len()];
    for v in (0..nodes.len()).rev() {
        let ch = &nodes[v].children;
        if ch.is_empty() {
            continue;
        }
        if ch.len() != 2 {
            return Err(err(0, "tree is not binary"));
        }
        let mut hs = [0.0; 2];
        for (slot, &c) in ch.iter().enumerate() {
            let bl = nodes[c].bl.ok_or_else(|| err(0, "missing branch length"))?;
            hs[slot] = height[c] + bl;
        }
        let hv = hs[0].max(hs[1]);
        if (hs[0] - hs[1]).abs() > tol * (1.0 + hv) {
            return Err(err(0, "tree is not ultrametric"));
        }
        height[v] = hv;
    }
    let mut internal: Vec<usize> = (0..nodes.len())
        .filter(|&v| !nodes[v].children.is_empty())
        .collect();
    internal.sort_by(|&a, &b| height[a].total_cmp(&height[b]).then(b.cmp(&a)));
    let mut merges = Vec::with_capacity(n.saturating_sub(1));
    for (k, &v) in internal.iter().enumerate() {
        id[v] = n + k;
        let (a, b) = (id[nodes[v].children[0]], id[nodes[v].children[1]]);
        merges.push((a.min(b), a.max(b), height[v]));
    }
    History::new(n, merges)
}

#[cfg(test)]
mod tests {
    use super::super::generator::sample_history;
    use super::super::history::mrca_times;
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn h62() -> History {
        History::new(4, vec![(0, 1, 0.2), (2, 3, 0.5), (4, 5, 1.3)]).unwrap()
    }

    #[test]
    fn mrca_and_newick_small() {
        let h = h62();
        assert_eq!(mrca_times(&h).unwrap(), vec![0.2, 1.3, 1.3, 1.3, 1.3, 0.5]);
        let nk = to_newick(&h, None).unwrap();
        assert_eq!(nk, "((0:0.2,1:0.2):1.1,(2:0.5,3:0.5):0.8);");
        let names: Vec<String> = ["a b", "it's", "c", "d"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let named = to_newick(&h, Some(&names)).unwrap();
        assert_eq!(named, "(('a b':0.2,'it''s':0.2):1.1,(c:0.5,d:0.5):0.8);");
        let back = from_newick(&named, Some(&names)).unwrap();
        assert_eq!(
            back.merges.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(),
            vec![(0, 1), (2, 3), (4, 5)]
        );
        let swapped =
            from_newick(" ( (3:0.5, 2:0.5)x:0.8 , [c] (1:0.2,0:0.2):1.1 ):0 ;", None).unwrap();
        assert_eq!(
            swapped
                .merges
                .iter()
                .map(|m| (m.0, m.1))
                .collect::<Vec<_>>(),
            vec![(0, 1), (2, 3), (4, 5)]
        );
        for bad in [
            "",
            "(0:1,1:1)",
            "(0:1,1:1);x",
            "(0:1,1:1,2:1);",
            "(0:1,1:2);",
            "(0:1,(1:1);",
            "(0:1,,1:1);",
            "(0:1,1:-1);",
            "(0:1,1:1));",
            "(0:1,5:1);",
            "(0:1,0:1);",
            "(0:1,1);",
            "('0:1,1:1);",
            "(0:x,1:1);",
        ] {
            assert!(from_newick(bad, None).is_err(), "{bad:?} accepted");
        }
        assert!(from_newick(&nk, Some(&names)).is_err());
    }

    #[test]
    fn newick_round_trip_n500() {
        let mut rng = StdRng::seed_from_u64(99);
        let h = sample_history(500, &mut rng).unwrap();
        let nk = to_newick(&h, None).unwrap();
        let back = from_newick(&nk, None).unwrap();
        assert_eq!(back.n, 500);
        let clades = |h: &History| {
            let mut members: Vec<Vec<usize>> = (0..h.n).map(|i| vec![i]).collect();
            let mut out = Vec::new();
            for &(a, b, _) in &h.merges {
                let mut m = [members[a].clone(), members[b].clone()].concat();
                m.sort_unstable();
                out.push(m.clone());
                members.push(m);
            }
            out
        };
        assert_eq!(clades(&h), clades(&back));
        for (a, b) in h.merges.iter().zip(&back.merges) {
            assert!((a.2 - b.2).abs() < 1e-12 * (1.0 + a.2));
        }
        let d1 = mrca_times(&h).unwrap();
        assert_eq!(d1.len(), 500 * 499 / 2);
        assert!(d1.iter().all(|&t| t > 0.0));
    }

    #[test]
    fn newick_parser_never_panics() {
        use rand::RngExt;
        let mut rng = StdRng::seed_from_u64(4);
        let alphabet: Vec<char> = "()[]':;, 0123.e-+abé\n".chars().collect();
        let valid = "((0:0.2,'1':0.2)x:1.1,[c](2:0.5,3:0.5):0.8):0;";
        for _ in 0..3000 {
            let s: String = if rng.random_bool(0.5) {
                let len = rng.random_range(0..24);
                (0..len)
                    .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                    .collect()
            } else {
                let mut c: Vec<char> = valid.chars().collect();
                for _ in 0..rng.random_range(1..4) {
                    let at = rng.random_range(0..c.len());
                    c[at] = alphabet[rng.random_range(0..alphabet.len())];
                }
                c.into_iter().collect()
            };
            let _ = from_newick(&s, None);
        }
        assert!(from_newick(valid, None).is_ok());
    }
}
