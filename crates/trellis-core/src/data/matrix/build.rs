//! The matrix as its records arrive: the header decided, the width checked on every row, each
//! column's role (feature, names, labels) decided, the values read and checked.

use super::dialect::{classify, notation_hint, Cell, Dialect};
use super::records::{each_record, lines_in};
use super::{
    Column, MatrixError, MatrixSpec, PointMatrix, BYTES_PER_CELL, MAX_CELLS, MAX_FEATURES,
};
use crate::data::one_line;
use std::collections::HashSet;

/// Header names that usually mean a class, said in a note when such a column of numbers is read
/// as a feature.
const LABEL_LIKE: [&str; 8] = [
    "label", "labels", "class", "target", "species", "y", "category", "cluster",
];

/// Header names of a first column that holds the rows' names: R's `write.csv` (an empty cell),
/// pandas (an empty cell; `Unnamed: 0` once read back and written again), R's `rownames`.
const NAMES_HEADERS: [&str; 4] = ["", "rownames", "row.names", "unnamed: 0"];

/// Header names of a column of text that names the points (compared without case).
const NAME_LIKE: [&str; 9] = [
    "name",
    "names",
    "id",
    "sample",
    "sample_id",
    "rowname",
    "rownames",
    "row.names",
    "",
];

/// How the fix of a text cell in a feature column is named.
const NAME_THE_COLUMNS: &str =
    "name the label column with --label-column NAME or the names column with --names-column NAME (label_column, names_column in a config)";

/// What a column is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Feature,
    Names,
    Labels,
    /// Found from its cells: a feature when they are numbers, else names or labels.
    Auto,
    /// A row index (0, 1, 2, ... or 1, 2, 3, ...) that a column of names replaced: left out.
    Ignored,
}

/// A column's cells so far.
enum Cells {
    /// Only missing values so far (the line of the first).
    Undecided(usize, usize),
    Numbers(Vec<f64>),
    /// Text (trimmed), with the line of the first cell of text and of the first empty one.
    Texts(Vec<String>, usize, Option<usize>),
}

/// A first record, held until [`DECIDE_LINES`] say whether the first is a header
/// ([`MatrixSpec::infer`]): line, cells, whether its first cell is quoted, lines after it.
type Pending = (usize, Vec<String>, bool, usize);

/// Records read before deciding whether the first is a header: it is a point when its text is
/// in the same columns as on most of the others.
const DECIDE_LINES: usize = 11;

struct Builder<'a> {
    spec: &'a MatrixSpec,
    name: &'a str,
    dialect: Dialect,
    /// Whether the next record is the header.
    expect_header: bool,
    pending: Vec<Pending>,
    /// The header's line and cells (trimmed; R's missing row-names cell added as `""`).
    header: Option<(usize, Vec<String>)>,
    /// The header's own cell count (before R's row-names cell is added).
    header_width: usize,
    /// Cells per row, once the first row is read.
    width: Option<usize>,
    roles: Vec<Role>,
    cols: Vec<Cells>,
    /// Numbers stored so far (the cell limit).
    numbers: usize,
    /// Whether the first data row's first cell is in quotes (R's row names are).
    first_quoted: bool,
    rows: usize,
    notes: Vec<String>,
}

pub(super) fn parse(
    text: &str,
    spec: &MatrixSpec,
    dialect: Dialect,
    name: &str,
) -> Result<PointMatrix, MatrixError> {
    let mut b = Builder {
        spec,
        name,
        dialect,
        expect_header: spec.header,
        pending: Vec::new(),
        header: None,
        header_width: 0,
        width: None,
        roles: Vec::new(),
        cols: Vec::new(),
        numbers: 0,
        first_quoted: false,
        rows: 0,
        notes: Vec::new(),
    };
    each_record(text, dialect.delimiter, name, |line, cells, raw, rest| {
        b.record(line, cells, raw, rest)
    })?;
    b.finish()
}

/// The positions of the cells that are text (not numbers, not missing).
fn text_cells<S: AsRef<str>>(cells: &[S], dialect: &Dialect) -> Vec<usize> {
    (0..cells.len())
        .filter(|&i| classify(cells[i].as_ref(), dialect) == Cell::Text)
        .collect()
}

pub(super) fn shorten(s: &str) -> String {
    let s = one_line(s);
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

fn preview(h: &[String]) -> String {
    let shown: Vec<String> = h
        .iter()
        .take(5)
        .map(|c| format!("{:?}", shorten(c)))
        .collect();
    format!(
        "{}{}",
        shown.join(", "),
        if h.len() > 5 { ", ..." } else { "" }
    )
}

impl Builder<'_> {
    fn err(&self, line: usize, msg: String) -> MatrixError {
        MatrixError::Format {
            path: self.name.to_string(),
            line,
            msg,
        }
    }

    /// Column `i` in messages: its header name quoted, else its 1-based number.
    fn column(&self, i: usize) -> String {
        match &self.header {
            Some((_, h)) if !h[i].is_empty() => format!("{:?}", shorten(&h[i])),
            Some(_) => format!("{} (unnamed)", i + 1),
            None => format!("{}", i + 1),
        }
    }

    /// Column `i`'s name for the flags and the tables: its header name, else `column K`.
    fn column_title(&self, i: usize) -> String {
        match &self.header {
            Some((_, h)) => h[i].clone(),
            None => format!("column {}", i + 1),
        }
    }

    /// Takes one record (line `line`, `raw` as written, `rest` the text after it). With
    /// [`MatrixSpec::infer`], the first records wait until [`DECIDE_LINES`] of them say whether
    /// the first is a header.
    fn record(
        &mut self,
        line: usize,
        cells: &[&str],
        raw: &str,
        rest: &str,
    ) -> Result<(), MatrixError> {
        let quoted = raw.trim_start().starts_with('"');
        if self.spec.infer && self.expect_header {
            let owned = cells.iter().map(|c| c.to_string()).collect();
            self.pending.push((line, owned, quoted, lines_in(rest)));
            if self.pending.len() < DECIDE_LINES {
                return Ok(());
            }
            return self.replay();
        }
        self.take(line, cells, quoted, &|| lines_in(rest))
    }

    /// Decides whether the first held record is a header and takes every held record.
    fn replay(&mut self) -> Result<(), MatrixError> {
        let pending = std::mem::take(&mut self.pending);
        let Some((_, first, _, _)) = pending.first() else {
            return Ok(());
        };
        let text = text_cells(first, &self.dialect);
        let worded = text.iter().any(|&i| {
            let c = first[i].trim().to_ascii_lowercase();
            LABEL_LIKE.contains(&c.as_str()) || NAME_LIKE.contains(&c.as_str())
        });
        let rest = &pending[1..];
        let alike = rest
            .iter()
            .filter(|(_, c, _, _)| c.len() == first.len() && text_cells(c, &self.dialect) == text)
            .count();
        let data = if text.is_empty() {
            self.notes.push(format!(
                "the first line of {} holds no column names, only numbers, so it is read as a point (features x1..x{}); add a header line to name the columns",
                self.name,
                first.len()
            ));
            true
        } else if !worded
            && first
                .iter()
                .any(|c| matches!(classify(c, &self.dialect), Cell::Number(_)))
            && !rest.is_empty()
            && 2 * alike >= rest.len()
        {
            // Numbers beside its text, and its text in the same columns as on most lines after
            // it: a file without a header whose names or labels are those columns.
            self.notes.push(format!(
                "the first line of {} is a point (its text is in the same columns as on the lines after it), not column names: the file has no header; add a header line to name the columns",
                self.name
            ));
            true
        } else {
            false
        };
        self.expect_header = !data;
        for (line, cells, quoted, after) in pending {
            let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
            self.take(line, &refs, quoted, &|| after)?;
        }
        Ok(())
    }

    /// Takes one record once the header is decided (`rest_lines`: the lines after it).
    fn take(
        &mut self,
        line: usize,
        cells: &[&str],
        quoted: bool,
        rest_lines: &dyn Fn() -> usize,
    ) -> Result<(), MatrixError> {
        if self.width.is_none() && !self.expect_header {
            self.first_quoted = quoted;
        }
        if self.expect_header {
            self.expect_header = false;
            self.header_width = cells.len();
            self.header = Some((line, cells.iter().map(|c| c.trim().to_string()).collect()));
            // Columns the spec names are not features; inferred ones may not be either.
            let named = usize::from(self.spec.label_column.is_some())
                + usize::from(self.spec.names_column.is_some());
            let slack = if self.spec.infer { 2 } else { 0 };
            let dim = cells.len().saturating_sub(named);
            if dim > MAX_FEATURES + slack {
                return Err(self.too_large(rest_lines(), dim, line));
            }
            return Ok(());
        }
        if self.width.is_none() {
            self.layout(line, cells.len(), cells.first().copied(), rest_lines)?;
        }
        let width = self.width.unwrap_or(0);
        if cells.len() != width {
            return Err(self.err(line, self.ragged(cells.len(), width)));
        }
        self.rows += 1;
        let features = self
            .roles
            .iter()
            .filter(|r| matches!(r, Role::Feature | Role::Auto))
            .count();
        if self.rows.saturating_mul(features) > MAX_CELLS {
            // The points still to come, roughly (one a line): said, not read.
            return Err(self.too_large(self.rows + rest_lines(), features, line));
        }
        for (i, cell) in cells.iter().enumerate() {
            self.cell(line, i, cell)?;
        }
        Ok(())
    }

    /// The message of a row of `got` cells where `width` belong.
    fn ragged(&self, got: usize, width: usize) -> String {
        let fix = "every row needs one cell per column; fix the line (a missing or extra separator, or a cell holding one unquoted)";
        match &self.header {
            Some(_) if width == self.header_width + 1 => format!(
                "{got} cells, but the rows above have {width} (the header's {} plus the row names, as R's write.table writes them); {fix}",
                self.header_width
            ),
            Some(_) => format!("{got} cells, but the header has {width}; {fix}"),
            None => format!("{got} cells, but the first line has {width}; {fix}"),
        }
    }

    /// The layout from the first row (`width` cells on line `line`): R's row names, each
    /// column's role, the limits.
    fn layout(
        &mut self,
        line: usize,
        width: usize,
        first_cell: Option<&str>,
        rest_lines: &dyn Fn() -> usize,
    ) -> Result<(), MatrixError> {
        let mut r_names = false;
        let first_cell = first_cell.unwrap_or("");
        let numeric_names = classify(first_cell, &self.dialect) != Cell::Text && !self.first_quoted;
        if let Some((hline, h)) = &mut self.header {
            if width == h.len() + 1 && numeric_names {
                // A number, unquoted, where R's row names would be: it may as well be a number
                // split at a decimal comma, or a cell too many.
                let msg = format!(
                    "{width} cells, but the header has {}: if the first column names the rows (as R's write.table writes them), quote the names or give the column a header cell; if commas are decimal marks here, separate the cells with ';'",
                    h.len()
                );
                return Err(MatrixError::Format {
                    path: self.name.to_string(),
                    line,
                    msg,
                });
            }
            if width == h.len() + 1 {
                // R's write.table (and pandas) leave the row names' header cell out.
                h.insert(0, String::new());
                r_names = true;
                self.notes.push(format!(
                    "the header of {} (line {hline}) has one cell fewer than the rows: as R's write.table writes them, the first column is read as the row names (the points' names), as R's read.table and pandas read it",
                    self.name
                ));
            } else if width != h.len() {
                let msg = self.ragged(width, self.header_width);
                return Err(self.err(line, msg));
            }
        }
        self.width = Some(width);
        let named = |c: &Option<Column>, what: &str| -> Result<Option<usize>, MatrixError> {
            match c {
                None => Ok(None),
                Some(Column::Index(i)) if *i < width => Ok(Some(*i)),
                Some(Column::Index(i)) => Err(self.err(
                    line,
                    format!("{what} column {i} (0-based) is past the {width} columns; give a smaller index"),
                )),
                Some(Column::Name(n)) => match &self.header {
                    None => Err(self.err(
                        line,
                        format!("{what} column {n:?} is named but the file has no header; give its 0-based index instead"),
                    )),
                    Some((hline, h)) => h
                        .iter()
                        .position(|c| c == n.trim())
                        .map(Some)
                        .ok_or_else(|| {
                            self.err(
                                *hline,
                                format!(
                                    "no column named {n:?} for the {what}; the header starts {}",
                                    preview(h)
                                ),
                            )
                        }),
                },
            }
        };
        let labels = named(&self.spec.label_column, "labels")?;
        let names = named(&self.spec.names_column, "names")?;
        if labels.is_some() && labels == names {
            return Err(self.err(
                line,
                format!(
                    "column {} is named as both the labels and the names; give each its own column",
                    self.column(labels.unwrap_or(0))
                ),
            ));
        }
        let default = if self.spec.infer {
            Role::Auto
        } else {
            Role::Feature
        };
        self.roles = vec![default; width];
        // Row names by their header (never a label column the user named).
        let header_names = self
            .header
            .as_ref()
            .is_some_and(|(_, h)| NAMES_HEADERS.contains(&h[0].to_ascii_lowercase().as_str()));
        if names.is_none() && labels != Some(0) && (r_names || (header_names && width > 1)) {
            self.roles[0] = Role::Names;
            if !r_names {
                self.notes.push(format!(
                    "column 1 of {} ({}) holds the rows' names, as R's write.csv and pandas write them: read as the points' names, not a feature",
                    self.name,
                    match self.header.as_ref().map(|(_, h)| h[0].as_str()) {
                        Some("") | None => "its header cell is empty".to_string(),
                        Some(h) => format!("headed {h:?}"),
                    }
                ));
            }
        }
        if let Some(i) = names {
            if i != 0 && labels != Some(0) && (r_names || (header_names && width > 1)) {
                // R's row names or pandas' index beside the names the user chose: left out.
                self.roles[0] = Role::Ignored;
                self.notes.push(format!(
                    "column 1 of {} holds the rows' names or index (as R and pandas write them) and is left out: the points' names come from column {}",
                    self.name,
                    self.column(i)
                ));
            }
            self.roles[i] = Role::Names;
        }
        if let Some(i) = labels {
            self.roles[i] = Role::Labels;
        }
        self.cols = (0..width).map(|_| Cells::Undecided(0, 0)).collect();
        let features = self
            .roles
            .iter()
            .filter(|r| matches!(r, Role::Feature | Role::Auto))
            .count();
        if features > MAX_FEATURES {
            let rows = rest_lines() + 1;
            return Err(self.too_large(rows, features, self.header.as_ref().map_or(line, |h| h.0)));
        }
        if features == 0 {
            return Err(self.err(
                self.header.as_ref().map_or(line, |h| h.0),
                "no feature columns; each point needs at least one number".into(),
            ));
        }
        Ok(())
    }

    /// Takes cell `i` of line `line`.
    fn cell(&mut self, line: usize, i: usize, cell: &str) -> Result<(), MatrixError> {
        let role = self.roles[i];
        if matches!(role, Role::Names | Role::Labels | Role::Ignored) {
            return self.text(line, i, cell);
        }
        let c = classify(cell, &self.dialect);
        let x = match (&self.cols[i], c) {
            (Cells::Texts(..), _) => return self.text(line, i, cell),
            (Cells::Numbers(_), Cell::Number(x)) => x,
            (Cells::Numbers(_), Cell::Missing) => return Err(self.missing(line, i, cell)),
            (Cells::Numbers(_) | Cells::Undecided(..), Cell::Text) if role != Role::Auto => {
                return Err(self.not_a_number(line, i, cell))
            }
            (Cells::Numbers(_), Cell::Text) => return Err(self.not_a_number(line, i, cell)),
            (&Cells::Undecided(missing, first), Cell::Missing) => {
                if role == Role::Feature {
                    return Err(self.missing(line, i, cell));
                }
                let first = if missing == 0 { line } else { first };
                self.cols[i] = Cells::Undecided(missing + 1, first);
                return Ok(());
            }
            (&Cells::Undecided(missing, first), Cell::Number(x)) => {
                if missing > 0 {
                    return Err(self.missing(first, i, ""));
                }
                self.cols[i] = Cells::Numbers(Vec::new());
                x
            }
            (&Cells::Undecided(missing, first), Cell::Text) => {
                let empty = (missing > 0).then_some(first);
                self.cols[i] = Cells::Texts(vec![String::new(); missing], line, empty);
                return self.text(line, i, cell);
            }
        };
        let x = self.number(line, i, cell, x)?;
        if let Cells::Numbers(v) = &mut self.cols[i] {
            v.push(x);
        }
        self.numbers += 1;
        Ok(())
    }

    /// Stores a names or labels cell, trimmed; an empty label the user's named column holds is
    /// an error naming its line.
    fn text(&mut self, line: usize, i: usize, cell: &str) -> Result<(), MatrixError> {
        let t = cell.trim().to_string();
        if t.is_empty() && self.roles[i] == Role::Labels {
            return Err(self.no_label(line, i));
        }
        match &mut self.cols[i] {
            Cells::Texts(v, _, empty) => {
                if t.is_empty() && empty.is_none() {
                    *empty = Some(line);
                }
                v.push(t);
            }
            c => {
                let empty = t.is_empty().then_some(line);
                *c = Cells::Texts(vec![t], line, empty);
            }
        }
        Ok(())
    }

    fn no_label(&self, line: usize, i: usize) -> MatrixError {
        self.err(
            line,
            format!(
                "the label column {} is empty here; fill the label or drop the row",
                self.column(i)
            ),
        )
    }

    fn missing(&self, line: usize, i: usize, cell: &str) -> MatrixError {
        self.err(
            line,
            format!(
                "column {} has a missing value ({:?}); fill or drop missing values first",
                self.column(i),
                shorten(cell.trim())
            ),
        )
    }

    fn not_a_number(&self, line: usize, i: usize, cell: &str) -> MatrixError {
        let taken: Vec<String> = (0..self.roles.len())
            .filter(|&k| {
                matches!(self.roles[k], Role::Names | Role::Labels)
                    || matches!(self.cols.get(k), Some(Cells::Texts(..)))
            })
            .map(|k| self.column(k))
            .collect();
        let fix = if self.spec.infer && !taken.is_empty() {
            format!(
                "fill or drop missing values; column {} already holds text (the names or the labels), and a column of numbers cannot change to text further down",
                taken.join(" and ")
            )
        } else {
            format!("fill or drop missing values; {NAME_THE_COLUMNS}")
        };
        self.err(
            line,
            format!(
                "column {} holds {:?}, not a number ({fix}){}",
                self.column(i),
                shorten(cell),
                notation_hint(cell, &self.dialect)
            ),
        )
    }

    /// `x` (cell `i` of line `line`) checked finite and within ±[`crate::data::MAX_ABS_VALUE`].
    fn number(&self, line: usize, i: usize, cell: &str, x: f64) -> Result<f64, MatrixError> {
        if !x.is_finite() {
            return Err(self.err(
                line,
                format!(
                    "column {} holds {}, not a finite number",
                    self.column(i),
                    shorten(cell)
                ),
            ));
        }
        if x.abs() > crate::data::MAX_ABS_VALUE {
            return Err(self.err(
                line,
                format!(
                    "column {} holds {x:e}, beyond ±1e100: the models square and sum values, which would overflow; rescale the data",
                    self.column(i)
                ),
            ));
        }
        Ok(x)
    }

    /// The refusal of `n_rows` points × `dim` features, found at line `line`.
    fn too_large(&self, n_rows: usize, dim: usize, line: usize) -> MatrixError {
        self.err(
            line,
            format!(
                "{}{n_rows} points × {dim} features is more than the limit of {MAX_FEATURES} features and {MAX_CELLS} values: it would take about {:.1} GiB of memory; keep fewer features (or points)",
                if dim > MAX_FEATURES { "" } else { "about " },
                n_rows as f64 * dim as f64 * BYTES_PER_CELL / (1u64 << 30) as f64
            ),
        )
    }
}

#[path = "build_finish.rs"]
mod finish;
