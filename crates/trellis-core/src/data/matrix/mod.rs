//! A user's points as a matrix: a CSV or TSV file with a header (rows = points, columns =
//! features, optionally one label column), or a whitespace-separated file such as USPS's
//! `label v1 ... v256`. The loaders of the bundled USPS and animals33 data are this one loader
//! with their layouts ([`PointMatrix::usps`], [`PointMatrix::animals33`]).
//!
//! Every cell of a feature column must be a finite number: missing values are an error that
//! names the row and the column (fill or drop them first), never a silent zero.

use super::one_line;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The largest matrix file read (512 MiB: USPS's training set is 7 MiB).
pub const MAX_MATRIX_BYTES: u64 = 512 << 20;

/// The most features a points file may have (USPS has 256, animals33 102, pam50 50).
pub const MAX_FEATURES: usize = 10_000;

/// The most values (points × features) a points file may have (all of USPS: 2.4 million).
pub const MAX_CELLS: usize = 10_000_000;

/// Bytes the methods hold per value at their peak (copies, message passing, table columns).
const BYTES_PER_CELL: f64 = 150.0;

/// Problems reading a matrix file.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// The file could not be read.
    #[error("cannot read {path}: {cause}")]
    Io {
        /// The file.
        path: String,
        /// The cause (said in the message, so not a separate source: it is said once).
        cause: std::io::Error,
    },
    /// The file was read but is not a matrix of the expected layout.
    #[error("{path} line {line}: {msg}")]
    Format {
        /// The file (or the name given to [`PointMatrix::parse`]).
        path: String,
        /// 1-based line number (0 for the file as a whole).
        line: usize,
        /// What is wrong and how to fix it.
        msg: String,
    },
}

/// How cells are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delimiter {
    /// `,` (CSV, with `"` quoting).
    Comma,
    /// A tab (TSV, with `"` quoting).
    Tab,
    /// Runs of spaces or tabs (no quoting), as in USPS's `zip.train`.
    Whitespace,
}

impl Delimiter {
    /// The delimiter a file's extension implies: `.csv` comma, `.tsv`/`.tab` tab, else
    /// whitespace.
    pub fn from_extension(path: &Path) -> Delimiter {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("csv") => Delimiter::Comma,
            Some("tsv") | Some("tab") => Delimiter::Tab,
            _ => Delimiter::Whitespace,
        }
    }

    /// The delimiter of a file: from its extension when it is `.csv`, `.tsv` or `.tab`; else
    /// from its first line (a tab, else a comma, else whitespace), so a `.txt` or `.dat` of
    /// comma-separated values reads as such.
    pub fn of_file(path: &Path, text: &str) -> Delimiter {
        let known = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["csv", "tsv", "tab"].contains(&e.to_ascii_lowercase().as_str()));
        if known {
            return Delimiter::from_extension(path);
        }
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if first.contains('\t') {
            Delimiter::Tab
        } else if first.contains(',') {
            Delimiter::Comma
        } else {
            Delimiter::Whitespace
        }
    }
}

/// A column chosen by its header name or by its 0-based position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Column {
    /// 0-based position.
    Index(usize),
    /// Header name.
    Name(String),
}

/// The layout of a matrix file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixSpec {
    /// Cell separator (`None`: from the file's extension).
    pub delimiter: Option<Delimiter>,
    /// Whether the first line names the columns.
    pub header: bool,
    /// The column holding each point's label or name (not a feature), if any.
    pub label_column: Option<Column>,
    /// Whether to infer what is not given, for a user's file: a first line of numbers only (or
    /// of numbers and one cell of text, like the line after it) is a point, not a header; with
    /// no `label_column`, the one column of text is the labels. Each decision is said in
    /// [`PointMatrix::notes`].
    pub infer: bool,
}

impl Default for MatrixSpec {
    /// A header and no label column, the delimiter from the extension.
    fn default() -> Self {
        MatrixSpec {
            delimiter: None,
            header: true,
            label_column: None,
            infer: false,
        }
    }
}

/// Points as rows of finite numbers, with feature names and optional labels.
#[derive(Clone, Debug, PartialEq)]
pub struct PointMatrix {
    /// Feature names (from the header, or `x1`, `x2`, ... without one).
    pub features: Vec<String>,
    /// Row-major values: point `i` is `values[i * dim .. (i + 1) * dim]`.
    pub values: Vec<f64>,
    /// Each point's label (the label column's cell), if the spec names one or one was found.
    pub labels: Option<Vec<String>>,
    /// The label column's header name (or `column K`, 1-based, without a header), if any.
    pub label_name: Option<String>,
    /// What the reader decided that the file did not say (a header of numbers read as a point,
    /// a label column found by itself), one sentence each, for the terminal and the manifest.
    pub notes: Vec<String>,
}

impl PointMatrix {
    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.values.len() / self.dim().max(1)
    }

    /// Number of features.
    pub fn dim(&self) -> usize {
        self.features.len()
    }

    /// Point `i`'s features.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.dim()..(i + 1) * self.dim()]
    }

    /// Reads `path` (a regular file of at most [`MAX_MATRIX_BYTES`]) with layout `spec`.
    pub fn load(path: &Path, spec: &MatrixSpec) -> Result<PointMatrix, MatrixError> {
        let text =
            super::read_text_limited(path, MAX_MATRIX_BYTES).map_err(|cause| MatrixError::Io {
                path: path.display().to_string(),
                cause,
            })?;
        let spec = MatrixSpec {
            delimiter: Some(
                spec.delimiter
                    .unwrap_or_else(|| Delimiter::of_file(path, &text)),
            ),
            ..spec.clone()
        };
        PointMatrix::parse(&text, &spec, &path.display().to_string())
    }

    /// USPS digits in the ESL text form (`label v1 ... v256` per line, whitespace-separated, no
    /// header): labels are the digits, features `x1`..`x256` in [-1, 1].
    pub fn usps(path: &Path) -> Result<PointMatrix, MatrixError> {
        let m = PointMatrix::load(
            path,
            &MatrixSpec {
                delimiter: Some(Delimiter::Whitespace),
                header: false,
                label_column: Some(Column::Index(0)),
                infer: false,
            },
        )?;
        if m.dim() != 256 {
            return Err(MatrixError::Format {
                path: path.display().to_string(),
                line: 1,
                msg: format!(
                    "{} pixel values per image, expected 256 (a label then 16x16 pixels)",
                    m.dim()
                ),
            });
        }
        Ok(m)
    }

    /// The animals33 features (`animal` then 0/1 feature columns, tab-separated with a
    /// header): labels are the animals' names.
    pub fn animals33(path: &Path) -> Result<PointMatrix, MatrixError> {
        PointMatrix::load(
            path,
            &MatrixSpec {
                delimiter: Some(Delimiter::Tab),
                header: true,
                label_column: Some(Column::Name("animal".into())),
                infer: false,
            },
        )
    }

    /// Parses `text` with layout `spec` (a `None` delimiter means whitespace); `name` is used in
    /// errors. Records are read one at a time and the size limits ([`MAX_FEATURES`],
    /// [`MAX_CELLS`]) are checked at the header and at each row, before the row is stored: an
    /// over-large file is refused having held at most the limit's values.
    pub fn parse(text: &str, spec: &MatrixSpec, name: &str) -> Result<PointMatrix, MatrixError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut b = Builder {
            spec,
            name,
            expect_header: spec.header,
            pending: None,
            header: None,
            found_label: None,
            layout: None,
            values: Vec::new(),
            labels: None,
            rows: 0,
            notes: Vec::new(),
        };
        each_record(
            text,
            spec.delimiter.unwrap_or(Delimiter::Whitespace),
            name,
            |line, cells, rest| b.record(line, cells, rest),
        )?;
        b.finish()
    }
}

/// Where the label column is and how many features a row has.
struct Layout {
    width: usize,
    label_at: Option<usize>,
    dim: usize,
}

/// The first record, held until the second says whether it is a header
/// ([`MatrixSpec::infer`]): line, cells, lines after it.
type Pending = (usize, Vec<String>, usize);

/// The matrix as its records arrive.
struct Builder<'a> {
    spec: &'a MatrixSpec,
    name: &'a str,
    /// Whether the next record is the header.
    expect_header: bool,
    /// The first record while the header is undecided.
    pending: Option<Pending>,
    header: Option<(usize, Vec<String>)>,
    /// The label column found by itself (the one column of text), when none was named.
    found_label: Option<usize>,
    layout: Option<Layout>,
    values: Vec<f64>,
    labels: Option<Vec<String>>,
    rows: usize,
    notes: Vec<String>,
}

/// Whether a cell reads as a number (a feature's cell).
fn numeric(cell: &str) -> bool {
    cell.trim().parse::<f64>().is_ok()
}

/// The positions of the cells that are not numbers.
fn text_cells<S: AsRef<str>>(cells: &[S]) -> Vec<usize> {
    (0..cells.len())
        .filter(|&i| !numeric(cells[i].as_ref()))
        .collect()
}

/// Header names that usually mean a class, said in a note when such a column of numbers is read
/// as a feature.
const LABEL_LIKE: [&str; 8] = [
    "label", "labels", "class", "target", "species", "y", "category", "cluster",
];

/// How the message of a text cell in a feature column names the fix.
const NAME_THE_LABELS: &str =
    "name the label column with --label-column NAME (label_column in a config)";

impl Builder<'_> {
    fn err(&self, line: usize, msg: String) -> MatrixError {
        MatrixError::Format {
            path: self.name.to_string(),
            line,
            msg,
        }
    }

    /// Takes one record (line `line`, `rest` the text after it). With [`MatrixSpec::infer`],
    /// the first record waits for the second, which decides whether it is a header.
    fn record(&mut self, line: usize, cells: &[&str], rest: &str) -> Result<(), MatrixError> {
        if self.spec.infer && self.expect_header {
            match self.pending.take() {
                None => {
                    let owned = cells.iter().map(|c| c.to_string()).collect();
                    self.pending = Some((line, owned, lines_in(rest)));
                    return Ok(());
                }
                Some(first) => self.replay(first, Some(cells))?,
            }
        }
        self.take(line, cells, &|| lines_in(rest))
    }

    /// Decides whether the held first record is a header (`second`: the record after it, if
    /// any) and takes it.
    fn replay(
        &mut self,
        (line, cells, after): Pending,
        second: Option<&[&str]>,
    ) -> Result<(), MatrixError> {
        let text = text_cells(&cells);
        let data = if text.is_empty() {
            self.notes.push(format!(
                "the first line of {} holds only numbers, so it is read as a point, not as column names (features x1..x{}); add a header line to name the columns",
                self.name,
                cells.len()
            ));
            true
        } else if let (1, None, Some(second)) = (text.len(), &self.spec.label_column, second) {
            // One cell of text in the first line, and the second line's one cell of text in
            // the same column: a file without a header whose labels are that column.
            let same = text_cells(second) == text && second.len() == cells.len();
            if same {
                self.notes.push(format!(
                    "the first line of {} is a point (numbers and one cell of text, like the next line), not column names: the file has no header, and column {} is read as the labels",
                    self.name,
                    text[0] + 1
                ));
                self.found_label = Some(text[0]);
            }
            same
        } else {
            false
        };
        self.expect_header = !data;
        let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
        self.take(line, &refs, &|| after)
    }

    /// Takes one record once the header is decided (`rest_lines`: the lines after it).
    fn take(
        &mut self,
        line: usize,
        cells: &[&str],
        rest_lines: &dyn Fn() -> usize,
    ) -> Result<(), MatrixError> {
        if self.expect_header {
            self.expect_header = false;
            self.header = Some((line, cells.iter().map(|c| c.to_string()).collect()));
            if !self.finds_labels() {
                self.layout = Some(self.layout(cells.len(), rest_lines)?);
            }
            return Ok(());
        }
        if self.layout.is_none() {
            if self.finds_labels() && self.found_label.is_none() {
                self.find_labels(line, cells)?;
            }
            self.layout = Some(self.layout(cells.len(), rest_lines)?);
        }
        let Some(Layout {
            width,
            label_at,
            dim,
        }) = self.layout
        else {
            return Ok(());
        };
        if cells.len() != width {
            return Err(self.err(
                line,
                format!(
                    "{} cells, expected {width} like the {}; a cell is missing or extra",
                    cells.len(),
                    if self.header.is_some() {
                        "header"
                    } else {
                        "first line"
                    }
                ),
            ));
        }
        self.rows += 1;
        if self.rows.saturating_mul(dim) > MAX_CELLS {
            // The points still to come, roughly (one a line): said, not read.
            return Err(self.too_large(self.rows + rest_lines(), dim, line));
        }
        for (i, cell) in cells.iter().enumerate() {
            if Some(i) == label_at {
                if let Some(l) = self.labels.as_mut() {
                    l.push(cell.to_string());
                }
                continue;
            }
            let x = self.number(line, i, cell)?;
            self.values.push(x);
        }
        Ok(())
    }

    /// Whether the label column is to be found from the first point: inferring, and none named.
    fn finds_labels(&self) -> bool {
        self.spec.infer && self.spec.label_column.is_none()
    }

    /// The label column from the first point's cells: the one cell of text, said in a note;
    /// more than one is an error naming them.
    fn find_labels(&mut self, line: usize, cells: &[&str]) -> Result<(), MatrixError> {
        let text = text_cells(cells);
        let name = |i: usize| column_name(&self.header, i);
        match text.len() {
            0 => {
                if let Some((_, h)) = &self.header {
                    if let Some(c) = h
                        .iter()
                        .find(|c| LABEL_LIKE.contains(&c.trim().to_ascii_lowercase().as_str()))
                    {
                        self.notes.push(format!(
                            "column {:?} holds numbers and is read as a feature; if it holds classes, pass --label-column {} (label_column in a config)",
                            shorten(c),
                            shorten(c)
                        ));
                    }
                }
            }
            1 => {
                let i = text[0];
                let flag = match &self.header {
                    Some((_, h)) => shorten(&h[i]),
                    None => format!("{i}"),
                };
                self.notes.push(format!(
                    "column {} holds text ({:?} on line {line}), so it is read as the labels (the points' classes); pass --label-column {flag} (label_column in a config) to say so",
                    name(i),
                    shorten(cells[i])
                ));
                self.found_label = Some(i);
            }
            _ => {
                let shown: Vec<String> = text
                    .iter()
                    .take(4)
                    .map(|&i| format!("{} ({:?})", name(i), shorten(cells[i])))
                    .collect();
                return Err(self.err(
                    line,
                    format!(
                        "{} columns hold text, not numbers: {}{}; at most one can be the labels: {NAME_THE_LABELS}, and remove the others or encode them as numbers",
                        text.len(),
                        shown.join(", "),
                        if text.len() > 4 { ", ..." } else { "" }
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The layout of rows of `width` cells (from the header or the first row; `rest_lines`:
    /// the lines after it), checked against the limits.
    fn layout(
        &mut self,
        width: usize,
        rest_lines: &dyn Fn() -> usize,
    ) -> Result<Layout, MatrixError> {
        let label_at = match &self.spec.label_column {
            None => self.found_label,
            Some(Column::Index(i)) if *i < width => Some(*i),
            Some(Column::Index(i)) => {
                return Err(self.err(
                    1,
                    format!(
                        "label column {i} (0-based) is past the {width} columns; give a smaller index"
                    ),
                ))
            }
            Some(Column::Name(n)) => match &self.header {
                None => {
                    return Err(self.err(
                        0,
                        format!("label column {n:?} is named but the file has no header; give its 0-based index instead"),
                    ))
                }
                Some((line, h)) => Some(h.iter().position(|c| c == n).ok_or_else(|| {
                    self.err(
                        *line,
                        format!(
                            "no column named {n:?} for the labels; the header starts {}",
                            preview(h)
                        ),
                    )
                })?),
            },
        };
        let dim = width - usize::from(label_at.is_some());
        if dim > MAX_FEATURES {
            let rows = rest_lines() + usize::from(self.header.is_none());
            return Err(self.too_large(rows, dim, self.header.as_ref().map_or(1, |h| h.0)));
        }
        if dim == 0 {
            return Err(self.err(
                self.header.as_ref().map_or(1, |h| h.0),
                "no feature columns; each point needs at least one number".into(),
            ));
        }
        self.labels = label_at.map(|_| Vec::new());
        Ok(Layout {
            width,
            label_at,
            dim,
        })
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

    /// Cell `i` of line `line` as a finite number within ±[`super::MAX_ABS_VALUE`].
    fn number(&self, line: usize, i: usize, cell: &str) -> Result<f64, MatrixError> {
        let column = || column_name(&self.header, i);
        let x: f64 = cell.trim().parse().map_err(|_| {
            let fix = match (self.layout.as_ref().and_then(|l| l.label_at), self.spec.infer) {
                (Some(l), true) if self.spec.label_column.is_none() => format!(
                    "fill or drop missing values; only one column can be the labels, and column {} already is",
                    column_name(&self.header, l)
                ),
                _ => format!("fill or drop missing values; {NAME_THE_LABELS}"),
            };
            self.err(
                line,
                format!(
                    "column {} holds {:?}, not a number ({fix})",
                    column(),
                    shorten(cell)
                ),
            )
        })?;
        if !x.is_finite() {
            return Err(self.err(
                line,
                format!(
                    "column {} holds {}, not a finite number",
                    column(),
                    shorten(cell)
                ),
            ));
        }
        if x.abs() > super::MAX_ABS_VALUE {
            return Err(self.err(
                line,
                format!(
                    "column {} holds {x:e}, beyond ±1e100: the models square and sum values, which would overflow; rescale the data",
                    column()
                ),
            ));
        }
        Ok(x)
    }

    fn finish(mut self) -> Result<PointMatrix, MatrixError> {
        if let Some(first) = self.pending.take() {
            self.replay(first, None)?;
        }
        if self.expect_header && self.header.is_none() {
            return Err(self.err(
                0,
                "the file is empty; expected a header line then one point per line".into(),
            ));
        }
        if self.layout.is_none() {
            self.layout(0, &|| 0)?;
        }
        if self.values.is_empty() {
            return Err(self.err(
                0,
                "no points; expected one point per line after the header".into(),
            ));
        }
        let label_at = self.layout.as_ref().and_then(|l| l.label_at);
        let label_name = label_at.map(|l| match &self.header {
            Some((_, h)) => h[l].clone(),
            None => format!("column {}", l + 1),
        });
        let features: Vec<String> = match self.header {
            Some((_, h)) => h
                .into_iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != label_at)
                .map(|(_, c)| c)
                .collect(),
            None => (1..=self.values.len() / self.rows)
                .map(|i| format!("x{i}"))
                .collect(),
        };
        Ok(PointMatrix {
            features,
            values: self.values,
            labels: self.labels,
            label_name,
            notes: self.notes,
        })
    }
}

/// The lines (points, roughly) in `rest`, counted, not parsed.
fn lines_in(rest: &str) -> usize {
    rest.bytes().filter(|&b| b == b'\n').count()
        + usize::from(!rest.is_empty() && !rest.ends_with('\n'))
}

/// Calls `f(line, cells, rest)` on each non-blank record of `text` in turn (1-based line
/// numbers; `rest` is the text after the record). A quoted cell holding a line break is an
/// error naming its lines: in a points file it is an unbalanced quote, which would otherwise
/// join the rows up to the next quote into one cell.
fn each_record(
    text: &str,
    delimiter: Delimiter,
    name: &str,
    mut f: impl FnMut(usize, &[&str], &str) -> Result<(), MatrixError>,
) -> Result<(), MatrixError> {
    let err = |line: usize, msg: String| MatrixError::Format {
        path: name.to_string(),
        line,
        msg,
    };
    let byte = match delimiter {
        Delimiter::Whitespace => {
            let mut end = 0;
            for (k, l) in text.split_inclusive('\n').enumerate() {
                end += l.len();
                let cells: Vec<&str> = l.split_whitespace().collect();
                if !cells.is_empty() {
                    f(k + 1, &cells, &text[end..])?;
                }
            }
            return Ok(());
        }
        Delimiter::Comma => b',',
        Delimiter::Tab => b'\t',
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(byte)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rec = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut rec) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                return Err(err(
                    line,
                    format!("{} (check the quoting)", one_line(&e.to_string())),
                ));
            }
        }
        let line = rec.position().map_or(0, |p| p.line() as usize);
        if rec.len() == 1 && rec[0].trim().is_empty() {
            continue;
        }
        if let Some(i) = rec.iter().position(|c| c.contains(['\n', '\r'])) {
            // (A quote left open to the end of the file takes the last line break too.)
            let breaks: usize = rec
                .iter()
                .map(|c| c.trim_end_matches(['\n', '\r']).matches('\n').count())
                .sum();
            return Err(err(
                line,
                format!(
                    "cell {} is quoted over lines {line} to {}: an unbalanced quote (\") joins them into one row; close the quote on its line or remove it",
                    i + 1,
                    line + breaks
                ),
            ));
        }
        let cells: Vec<&str> = rec.iter().collect();
        let end = (reader.position().byte() as usize).min(text.len());
        f(line, &cells, &text[end..])?;
    }
}

fn column_name(header: &Option<(usize, Vec<String>)>, i: usize) -> String {
    match header {
        Some((_, h)) => format!("{:?}", shorten(&h[i])),
        None => format!("{}", i + 1),
    }
}

fn shorten(s: &str) -> String {
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

#[cfg(test)]
mod tests;
