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
}

impl Default for MatrixSpec {
    /// A header and no label column, the delimiter from the extension.
    fn default() -> Self {
        MatrixSpec {
            delimiter: None,
            header: true,
            label_column: None,
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
    /// Each point's label (the label column's cell), if the spec names one.
    pub labels: Option<Vec<String>>,
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
                    .unwrap_or_else(|| Delimiter::from_extension(path)),
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
            header: None,
            layout: None,
            values: Vec::new(),
            labels: None,
            rows: 0,
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

/// The matrix as its records arrive.
struct Builder<'a> {
    spec: &'a MatrixSpec,
    name: &'a str,
    header: Option<(usize, Vec<String>)>,
    layout: Option<Layout>,
    values: Vec<f64>,
    labels: Option<Vec<String>>,
    rows: usize,
}

impl Builder<'_> {
    fn err(&self, line: usize, msg: String) -> MatrixError {
        MatrixError::Format {
            path: self.name.to_string(),
            line,
            msg,
        }
    }

    /// Takes one record (line `line`, `rest` the text after it).
    fn record(&mut self, line: usize, cells: &[&str], rest: &str) -> Result<(), MatrixError> {
        if self.spec.header && self.header.is_none() {
            self.header = Some((line, cells.iter().map(|c| c.to_string()).collect()));
            self.layout = Some(self.layout(cells.len(), rest)?);
            return Ok(());
        }
        if self.layout.is_none() {
            self.layout = Some(self.layout(cells.len(), rest)?);
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
            return Err(self.too_large(self.rows + lines_in(rest), dim, line));
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

    /// The layout of rows of `width` cells (from the header or the first row, `rest` the text
    /// after it), checked against the limits.
    fn layout(&mut self, width: usize, rest: &str) -> Result<Layout, MatrixError> {
        let label_at = match &self.spec.label_column {
            None => None,
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
            let rows = lines_in(rest) + usize::from(!self.spec.header);
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
            self.err(
                line,
                format!(
                    "column {} holds {:?}, not a number (fill or drop missing values; name a label column with label_column)",
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
        if self.spec.header && self.header.is_none() {
            return Err(self.err(
                0,
                "the file is empty; expected a header line then one point per line".into(),
            ));
        }
        if self.layout.is_none() {
            self.layout(0, "")?;
        }
        if self.values.is_empty() {
            return Err(self.err(
                0,
                "no points; expected one point per line after the header".into(),
            ));
        }
        let label_at = self.layout.as_ref().and_then(|l| l.label_at);
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
mod tests {
    use super::*;

    fn spec(delimiter: Delimiter, label: Option<Column>) -> MatrixSpec {
        MatrixSpec {
            delimiter: Some(delimiter),
            header: true,
            label_column: label,
        }
    }

    #[test]
    fn csv_with_a_label_column_and_quotes() {
        let text = "a,\"label, with comma\",b\r\n1,x,2\n\n3.5,\"y\",-4e-1\n";
        let m = PointMatrix::parse(
            text,
            &spec(
                Delimiter::Comma,
                Some(Column::Name("label, with comma".into())),
            ),
            "t.csv",
        )
        .unwrap();
        assert_eq!(m.features, ["a", "b"]);
        assert_eq!(m.n_points(), 2);
        assert_eq!(m.row(1), [3.5, -0.4]);
        assert_eq!(m.labels.unwrap(), ["x", "y"]);
    }

    #[test]
    fn bad_cells_name_line_and_column() {
        let e = PointMatrix::parse("a\tb\n1\tNA\n", &spec(Delimiter::Tab, None), "t.tsv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 2") && e.contains("\"b\"") && e.contains("NA"),
            "{e}"
        );
        let e = PointMatrix::parse("a,b\n1,2\n1\n", &spec(Delimiter::Comma, None), "t.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("1 cells, expected 2"),
            "{e}"
        );
        let e = PointMatrix::parse("a,b\n1,inf\n", &spec(Delimiter::Comma, None), "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("finite"), "{e}");
        let e = PointMatrix::parse(
            "a,b\n1,2\n",
            &spec(Delimiter::Comma, Some(Column::Name("c".into()))),
            "t.csv",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no column named \"c\""), "{e}");
        for text in ["", "a,b\n", "\n\n"] {
            let e = PointMatrix::parse(text, &spec(Delimiter::Comma, None), "t.csv").unwrap_err();
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_cell_limit_stops_the_read_at_the_row_that_passes_it() {
        // 10,000 features: the limit of 10^7 values is passed by row 1,001 (line 1,002).
        let d = MAX_FEATURES;
        let header: Vec<String> = (0..d).map(|j| format!("f{j}")).collect();
        let row = format!("{}\n", vec!["0"; d].join(","));
        let text = format!("{}\n{}", header.join(","), row.repeat(1500));
        let e = PointMatrix::parse(&text, &spec(Delimiter::Comma, None), "t.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1002") && e.contains("about 1500 points × 10000 features"),
            "{e}"
        );
        let wide = format!("{},x\n1\n", header.join(","));
        let e = PointMatrix::parse(&wide, &spec(Delimiter::Comma, None), "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1") && e.contains("10001 features"), "{e}");
        let ok = PointMatrix::parse(
            &text[..text.len() - 500 * row.len()],
            &spec(Delimiter::Comma, None),
            "t.csv",
        )
        .unwrap();
        assert_eq!((ok.n_points(), ok.dim()), (1000, d));
    }

    #[test]
    fn a_quoted_line_break_is_an_unbalanced_quote() {
        for (text, lines) in [
            ("a,b\n1,\"2\n3,4\n5,6\"\n7,8\n", "lines 2 to 4"),
            ("a,b\n1,2\n3,\"4\n5,6\n", "lines 3 to 4"),
        ] {
            let e = PointMatrix::parse(text, &spec(Delimiter::Comma, None), "t.csv")
                .unwrap_err()
                .to_string();
            assert!(e.contains(lines) && e.contains("unbalanced quote"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_bundled_usps_and_animals_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let usps = PointMatrix::usps(&root.join("usps/usps_test.txt")).unwrap();
        assert_eq!((usps.n_points(), usps.dim()), (2007, 256));
        let labels = usps.labels.as_ref().unwrap();
        assert_eq!(labels[0], "9", "the ESL zip.test order starts with a 9");
        assert!(usps.values.iter().all(|v| (-1.0..=1.0).contains(v)));
        let animals =
            PointMatrix::animals33(&root.join("animals33/animals33_features.tsv")).unwrap();
        assert_eq!((animals.n_points(), animals.dim()), (33, 102));
        assert_eq!(animals.labels.as_ref().unwrap()[0], "Elephant");
        let ones = animals.values.iter().filter(|&&v| v == 1.0).count();
        let zeros = animals.values.iter().filter(|&&v| v == 0.0).count();
        assert_eq!(
            (ones, zeros),
            (1032, 2334),
            "the counts the data's README states"
        );
    }
}
