//! The matrix once every record is in ([`Builder`]'s last steps): the text columns settled
//! (names, labels or a refusal), an index column yielding to a names column, empty columns
//! dropped, the columns assembled into a [`PointMatrix`].

use super::*;

impl Builder<'_> {
    pub(super) fn finish(mut self) -> Result<PointMatrix, MatrixError> {
        self.replay()?;
        if self.width.is_none() {
            let line = self.header.as_ref().map_or(0, |h| h.0);
            return Err(self.err(
                line,
                if self.header.is_some() {
                    "no points; expected one point per line after the header".into()
                } else {
                    "the file is empty; expected a header line then one point per line".into()
                },
            ));
        }
        self.settle_text_columns()?;
        self.drop_empty_columns()?;
        self.assemble()
    }

    /// Decides each column of text found by itself: the first whose values all differ is the
    /// names, the first with repeated values the labels; any other is an error.
    fn settle_text_columns(&mut self) -> Result<(), MatrixError> {
        self.index_yields_to_names();
        let mut extra: Vec<(usize, usize)> = Vec::new();
        for i in 0..self.roles.len() {
            let (Role::Auto, Cells::Texts(v, first, _)) = (self.roles[i], &self.cols[i]) else {
                continue;
            };
            let first = *first;
            let mut seen = HashSet::with_capacity(v.len());
            let distinct = v.iter().all(|s| !s.is_empty() && seen.insert(s.as_str()));
            let taken = |r: Role| self.roles.contains(&r);
            let title = self.column_title(i).to_ascii_lowercase();
            let hinted = if LABEL_LIKE.contains(&title.as_str()) {
                Some(Role::Labels)
            } else if NAME_LIKE.contains(&title.as_str()) {
                Some(Role::Names)
            } else {
                None
            };
            let role = if let Some(r) = hinted.filter(|&r| !taken(r)) {
                r
            } else if distinct && !taken(Role::Names) {
                Role::Names
            } else if !distinct && !taken(Role::Labels) {
                Role::Labels
            } else {
                extra.push((i, first));
                continue;
            };
            let flag = if role == Role::Names {
                "--names-column"
            } else {
                "--label-column"
            };
            let what = match (role, hinted.is_some(), distinct) {
                (Role::Names, true, _) => "its header names the points, so it is read as their names (leaf labels), not as classes",
                (Role::Names, false, _) => "every value differs, so it is read as the points' names (leaf labels), not as classes",
                (_, true, true) => "its header names classes, so it is read as the labels, although every point has its own class (check it: a column of names is --names-column)",
                (_, true, false) => "its header names classes, so it is read as the labels (the points' classes)",
                _ => "values repeat, so it is read as the labels (the points' classes)",
            };
            self.notes.push(format!(
                "column {} holds text ({:?} on line {first}): {what}; pass {flag} {} ({} in a config) to say so",
                self.column(i),
                v.iter().find(|s| !s.is_empty()).map(|s| shorten(s)).unwrap_or_default(),
                shorten(&self.column_title(i)),
                if role == Role::Names { "names_column" } else { "label_column" },
            ));
            self.roles[i] = role;
        }
        if let Some(&(i, line)) = extra.first() {
            let cols: Vec<String> = extra.iter().take(4).map(|&(k, _)| self.column(k)).collect();
            return Err(self.err(
                line,
                format!(
                    "column {} holds text too, beside the names and labels already found ({} in all): at most one column names the points (--names-column) and one holds their classes (--label-column); remove the others or encode them as numbers",
                    self.column(i),
                    cols.join(", ")
                ),
            ));
        }
        // A class column named like one but holding numbers: said, with the flag.
        if !self.roles.contains(&Role::Labels) {
            if let Some((_, h)) = &self.header {
                // ("y" beside an "x" is a coordinate.)
                let xy = h.iter().any(|c| c.eq_ignore_ascii_case("x"));
                if let Some(i) = (0..h.len()).find(|&i| {
                    let name = h[i].to_ascii_lowercase();
                    matches!(self.cols[i], Cells::Numbers(_))
                        && LABEL_LIKE.contains(&name.as_str())
                        && !(xy && name == "y")
                }) {
                    let c = shorten(&h[i]);
                    self.notes.push(format!(
                        "column {c:?} holds numbers and is read as a feature; if it holds classes, pass --label-column {c} (label_column in a config)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// A names column found by its header (R's or pandas' row names, not named by the user) that
    /// only counts the rows (0, 1, 2, ... or 1, 2, 3, ...: pandas' default index, R's default
    /// row names) yields to a column of text whose values all differ: that column names the
    /// points, and the row index is left out, said.
    fn index_yields_to_names(&mut self) {
        if self.spec.names_column.is_some() || !self.spec.infer {
            return;
        }
        let Some(k) = self.roles.iter().position(|&r| r == Role::Names) else {
            return;
        };
        let Cells::Texts(v, _, _) = &self.cols[k] else {
            return;
        };
        let counts = |from: usize| {
            v.iter()
                .enumerate()
                .all(|(r, s)| s.parse::<usize>() == Ok(r + from))
        };
        if !(counts(0) || counts(1)) {
            return;
        }
        // A column of names: distinct text, not headed like classes; one headed like names first.
        let title = |i: usize| self.column_title(i).to_ascii_lowercase();
        let names_like = |i: usize| {
            let Cells::Texts(t, _, _) = &self.cols[i] else {
                return false;
            };
            let mut seen = HashSet::with_capacity(t.len());
            self.roles[i] == Role::Auto
                && !LABEL_LIKE.contains(&title(i).as_str())
                && t.iter().all(|s| !s.is_empty() && seen.insert(s.as_str()))
        };
        let better = (0..self.roles.len())
            .filter(|&i| names_like(i))
            .min_by_key(|&i| (!NAME_LIKE.contains(&title(i).as_str()), i));
        if let Some(i) = better {
            self.roles[k] = Role::Ignored;
            self.roles[i] = Role::Names;
            self.notes.push(format!(
                "column {} only counts the rows (a row index, as pandas and R write it) and is left out; column {} holds a different text on every row and names the points (--names-column {} to say so)",
                self.column(k),
                self.column(i),
                shorten(&self.column_title(i))
            ));
        }
    }

    /// Columns without a value on any line: a last one without a name (a separator at the end of
    /// every line) is dropped and said; any other is an error.
    fn drop_empty_columns(&mut self) -> Result<(), MatrixError> {
        let width = self.roles.len();
        for i in (0..width).rev() {
            let Cells::Undecided(_, first) = self.cols[i] else {
                continue;
            };
            if self.roles[i] != Role::Auto && self.roles[i] != Role::Feature {
                continue;
            }
            let unnamed = self.header.as_ref().is_none_or(|(_, h)| h[i].is_empty());
            if i + 1 == self.roles.len() && unnamed {
                self.roles.pop();
                self.cols.pop();
                if let Some((_, h)) = &mut self.header {
                    h.truncate(i);
                }
                self.notes.push(format!(
                    "the last column of {} is empty on every line (a separator at the end of each line) and is left out",
                    self.name
                ));
                continue;
            }
            return Err(self.err(
                first,
                format!(
                    "column {} has no value on any line; remove the column",
                    self.column(i)
                ),
            ));
        }
        if !self
            .roles
            .iter()
            .any(|r| matches!(r, Role::Feature | Role::Auto))
        {
            return Err(self.err(
                0,
                "no feature columns; each point needs at least one number".into(),
            ));
        }
        Ok(())
    }

    /// The matrix, row-major, with names and labels.
    fn assemble(mut self) -> Result<PointMatrix, MatrixError> {
        let n = self.rows;
        let mut features = Vec::new();
        let mut columns: Vec<Vec<f64>> = Vec::new();
        let (mut names, mut labels) = (None, None);
        let (mut names_name, mut label_name) = (None, None);
        let cols = std::mem::take(&mut self.cols);
        for (i, c) in cols.into_iter().enumerate() {
            match (self.roles[i], c) {
                (Role::Names, Cells::Texts(mut v, _, _)) => {
                    for (k, s) in v.iter_mut().enumerate() {
                        if s.is_empty() {
                            *s = format!("row {}", k + 1);
                        }
                    }
                    names = Some(v);
                    names_name = Some(self.column_title(i));
                }
                (Role::Labels, Cells::Texts(v, _, empty)) => {
                    if let Some(line) = empty {
                        return Err(self.no_label(line, i));
                    }
                    labels = Some(v);
                    label_name = Some(self.column_title(i));
                }
                (_, Cells::Numbers(v)) => {
                    features.push(match &self.header {
                        Some((_, h)) => h[i].clone(),
                        None => format!("x{}", features.len() + 1),
                    });
                    columns.push(v);
                }
                _ => {}
            }
        }
        let mut values = Vec::with_capacity(n * columns.len());
        for r in 0..n {
            values.extend(columns.iter().map(|c| c[r]));
        }
        Ok(PointMatrix {
            features,
            values,
            labels,
            label_name,
            names,
            names_name,
            dialect: self.dialect,
            has_header: self.header.is_some(),
            notes: self.notes,
        })
    }
}
