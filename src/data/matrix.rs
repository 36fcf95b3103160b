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
    /// errors.
    pub fn parse(text: &str, spec: &MatrixSpec, name: &str) -> Result<PointMatrix, MatrixError> {
        let err = |line: usize, msg: String| MatrixError::Format {
            path: name.to_string(),
            line,
            msg,
        };
        let records = split_records(text, spec.delimiter.unwrap_or(Delimiter::Whitespace))
            .map_err(|(line, msg)| err(line, msg))?;
        let mut records = records.into_iter();
        let header: Option<(usize, Vec<String>)> = if spec.header {
            Some(records.next().ok_or_else(|| {
                err(
                    0,
                    "the file is empty; expected a header line then one point per line".into(),
                )
            })?)
        } else {
            None
        };
        let mut rows = records.peekable();
        let width = match (&header, rows.peek()) {
            (Some((_, h)), _) => h.len(),
            (None, Some((_, r))) => r.len(),
            (None, None) => 0,
        };
        let label_at = match &spec.label_column {
            None => None,
            Some(Column::Index(i)) if *i < width => Some(*i),
            Some(Column::Index(i)) => {
                return Err(err(
                    1,
                    format!(
                        "label column {i} (0-based) is past the {width} columns; give a smaller index"
                    ),
                ))
            }
            Some(Column::Name(n)) => match &header {
                None => {
                    return Err(err(
                        0,
                        format!("label column {n:?} is named but the file has no header; give its 0-based index instead"),
                    ))
                }
                Some((line, h)) => Some(h.iter().position(|c| c == n).ok_or_else(|| {
                    err(
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
        let n_rows = rows.len();
        if dim > MAX_FEATURES || n_rows.saturating_mul(dim) > MAX_CELLS {
            return Err(err(
                0,
                format!(
                    "{n_rows} points × {dim} features is more than the limit of {MAX_FEATURES} features and {MAX_CELLS} values: it would take about {:.1} GiB of memory; keep fewer features (or points)",
                    n_rows as f64 * dim as f64 * BYTES_PER_CELL / (1u64 << 30) as f64
                ),
            ));
        }
        let features: Vec<String> = match &header {
            Some((_, h)) => h
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != label_at)
                .map(|(_, c)| c.clone())
                .collect(),
            None => (1..=width - usize::from(label_at.is_some()))
                .map(|i| format!("x{i}"))
                .collect(),
        };
        if features.is_empty() {
            return Err(err(
                header.as_ref().map_or(1, |h| h.0),
                "no feature columns; each point needs at least one number".into(),
            ));
        }
        let mut values = Vec::new();
        let mut labels = label_at.map(|_| Vec::new());
        for (line, cells) in rows {
            if cells.len() != width {
                return Err(err(
                    line,
                    format!(
                        "{} cells, expected {width} like the {}; a cell is missing or extra",
                        cells.len(),
                        if header.is_some() {
                            "header"
                        } else {
                            "first line"
                        }
                    ),
                ));
            }
            for (i, cell) in cells.into_iter().enumerate() {
                if Some(i) == label_at {
                    if let Some(l) = labels.as_mut() {
                        l.push(cell);
                    }
                    continue;
                }
                let x: f64 = cell.trim().parse().map_err(|_| {
                    err(
                        line,
                        format!(
                            "column {} holds {:?}, not a number (fill or drop missing values; name a label column with label_column)",
                            column_name(&header, i),
                            shorten(&cell)
                        ),
                    )
                })?;
                if !x.is_finite() {
                    return Err(err(
                        line,
                        format!(
                            "column {} holds {}, not a finite number",
                            column_name(&header, i),
                            shorten(&cell)
                        ),
                    ));
                }
                if x.abs() > super::MAX_ABS_VALUE {
                    return Err(err(
                        line,
                        format!(
                            "column {} holds {x:e}, beyond ±1e100: the models square and sum values, which would overflow; rescale the data",
                            column_name(&header, i)
                        ),
                    ));
                }
                values.push(x);
            }
        }
        if values.is_empty() {
            return Err(err(
                0,
                "no points; expected one point per line after the header".into(),
            ));
        }
        Ok(PointMatrix {
            features,
            values,
            labels,
        })
    }
}

/// The file's non-blank records with their 1-based line numbers.
type Records = Vec<(usize, Vec<String>)>;

fn split_records(text: &str, delimiter: Delimiter) -> Result<Records, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let byte = match delimiter {
        Delimiter::Whitespace => {
            return Ok(text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(k, l)| (k + 1, l.split_whitespace().map(String::from).collect()))
                .collect())
        }
        Delimiter::Comma => b',',
        Delimiter::Tab => b'\t',
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(byte)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            (
                line,
                format!("{} (check the quoting)", one_line(&e.to_string())),
            )
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        if rec.len() == 1 && rec[0].trim().is_empty() {
            continue;
        }
        out.push((line, rec.iter().map(String::from).collect()));
    }
    Ok(out)
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
