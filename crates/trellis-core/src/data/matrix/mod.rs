//! A user's points as a matrix: a table file written by any common tool (rows = points, columns
//! = features, optionally a names column and a label column), or a whitespace-separated file
//! such as USPS's `label v1 ... v256`. The loaders of the bundled USPS and animals33 data are
//! this one loader with their layouts ([`PointMatrix::usps`], [`PointMatrix::animals33`]).
//!
//! What each export style gives (every decision the file does not state is said in
//! [`PointMatrix::notes`]):
//! - **separator and decimal mark** found from the file ([`Dialect`]): `,` `;` tab or spaces,
//!   decimal commas where a `;`/tab file writes them (a spreadsheet's export); a UTF-8 byte
//!   order mark is dropped; `\r\n`, `\n` and `\r` line ends number lines alike;
//! - **R's `write.table`/pandas with a header one cell short** (no cell for the row names): the
//!   first column is the row names, as R's `read.table` and pandas' `read_csv` read it;
//! - **row names** (R's `write.csv` header cell `""`, pandas' index, `rownames`, `Unnamed: 0`, or
//!   with inference any column of text whose values all differ): the points' names, never a
//!   feature or a class;
//! - **a label column** (named, or with inference the one column of text with repeated values):
//!   the classes;
//! - **ragged rows**: every row must have the header's cell count (or one more, for R's row
//!   names, on every row): another count is refused naming the line;
//! - **missing values** (`NA`, `NaN`, an empty cell, `#N/A`, `NULL`, ...) in a feature column are
//!   refused naming the line and the column (fill or drop them first), never a silent zero.

use serde::{Deserialize, Serialize};
use std::path::Path;

mod build;
mod dialect;
mod records;

pub use dialect::{Cell, Dialect, MISSING};

/// The largest matrix file read (512 MiB: USPS's training set is 7 MiB).
pub const MAX_MATRIX_BYTES: u64 = 512 << 20;

/// The most features a points file may have (USPS has 256, animals33 102, pam50 50).
pub const MAX_FEATURES: usize = 10_000;

/// The most values (points × features) a points file may have (all of USPS: 2.4 million).
pub const MAX_CELLS: usize = 10_000_000;

/// Bytes the methods hold per value at their peak (copies, message passing, table columns).
pub(crate) const BYTES_PER_CELL: f64 = 150.0;

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
    /// `;` (a spreadsheet's CSV export where the comma is the decimal mark, with `"` quoting).
    Semicolon,
    /// Runs of spaces or tabs (no quoting), as in USPS's `zip.train`.
    Whitespace,
}

impl Delimiter {
    /// The delimiter a file's extension implies: `.csv` comma, `.tsv`/`.tab` tab, else none.
    pub fn from_extension(path: &Path) -> Option<Delimiter> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("csv") => Some(Delimiter::Comma),
            Some("tsv") | Some("tab") => Some(Delimiter::Tab),
            _ => None,
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

/// Why `path` cannot be a text table, by its extension (a spreadsheet workbook, Parquet, R's or
/// NumPy's binary formats), with the fix; `None` for any other file, which the reader tries.
pub fn not_a_text_table(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let what = match ext.as_str() {
        "xlsx" | "xls" | "xlsm" | "ods" | "numbers" => "a spreadsheet workbook",
        "parquet" | "feather" | "arrow" => "a binary table",
        "rds" | "rdata" | "rda" => "R's binary format",
        "npy" | "npz" | "pkl" | "pickle" | "h5" | "hdf5" => "a binary array file",
        "json" => "JSON (only jets are read from JSON)",
        _ => return None,
    };
    Some(format!(
        "is {what}, not a text table; save it as CSV (a spreadsheet's \"CSV UTF-8\", R's write.csv, pandas' to_csv) and give that file"
    ))
}

/// The layout of a matrix file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatrixSpec {
    /// Cell separator (`None`: found from the file, [`Dialect`], with decimal commas where the
    /// file writes them).
    pub delimiter: Option<Delimiter>,
    /// Whether the first line names the columns (with [`MatrixSpec::infer`], unless it reads as
    /// a point).
    pub header: bool,
    /// The column holding each point's label (its class; not a feature), if any.
    pub label_column: Option<Column>,
    /// The column holding each point's name (not a feature), if any.
    pub names_column: Option<Column>,
    /// Whether to infer what is not given, for a user's file: a first line of numbers only (or
    /// of numbers and one cell of text, like the line after it) is a point, not a header; with
    /// no `label_column`, a column of text with repeated values is the labels, and with no
    /// `names_column` one whose values all differ is the names. Each decision is said in
    /// [`PointMatrix::notes`].
    pub infer: bool,
}

impl MatrixSpec {
    /// A header, nothing inferred, the delimiter from the file.
    pub fn with_header() -> MatrixSpec {
        MatrixSpec {
            header: true,
            ..MatrixSpec::default()
        }
    }
}

/// Points as rows of finite numbers, with feature names and optional labels and names.
#[derive(Clone, Debug, PartialEq)]
pub struct PointMatrix {
    /// Feature names (from the header, or `x1`, `x2`, ... without one).
    pub features: Vec<String>,
    /// Row-major values: point `i` is `values[i * dim .. (i + 1) * dim]`.
    pub values: Vec<f64>,
    /// Each point's label (the label column's cell, trimmed), if the spec names one or one was
    /// found.
    pub labels: Option<Vec<String>>,
    /// The label column's header name (or `column K`, 1-based, without a header), if any.
    pub label_name: Option<String>,
    /// Each point's name (the names column's cell, trimmed), if the spec names one or one was
    /// found (R's and pandas' row names among them).
    pub names: Option<Vec<String>>,
    /// The names column's header name (or `column K`; `""` for R's and pandas' unnamed one).
    pub names_name: Option<String>,
    /// How the file writes its cells.
    pub dialect: Dialect,
    /// Whether the file has a header line (column names).
    pub has_header: bool,
    /// What the reader decided that the file did not say (a header of numbers read as a point,
    /// a label or names column found by itself, R's row names), one sentence each, for the
    /// terminal and the manifest.
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
        let name = path.display().to_string();
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let dialect = Dialect::of(text, spec.delimiter, Delimiter::from_extension(path));
        build::parse(text, spec, dialect, &name)
    }

    /// USPS digits in the ESL text form (`label v1 ... v256` per line, whitespace-separated, no
    /// header): labels are the digits, features `x1`..`x256` in [-1, 1].
    pub fn usps(path: &Path) -> Result<PointMatrix, MatrixError> {
        let m = PointMatrix::load(
            path,
            &MatrixSpec {
                delimiter: Some(Delimiter::Whitespace),
                label_column: Some(Column::Index(0)),
                ..MatrixSpec::default()
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
                ..MatrixSpec::default()
            },
        )
    }

    /// Parses `text` with layout `spec` (a `None` delimiter is found from the text); `name` is
    /// used in errors. Records are read one at a time and the size limits ([`MAX_FEATURES`],
    /// [`MAX_CELLS`]) are checked at the header and at each row, before the row is stored: an
    /// over-large file is refused having held at most the limit's values.
    pub fn parse(text: &str, spec: &MatrixSpec, name: &str) -> Result<PointMatrix, MatrixError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let dialect = Dialect::of(text, spec.delimiter, None);
        build::parse(text, spec, dialect, name)
    }
}

#[cfg(test)]
mod exports_tests;
#[cfg(test)]
mod generated_tests;
#[cfg(test)]
mod tests;
