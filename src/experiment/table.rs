//! Long-format tables: built column by column, written to Parquet atomically (temporary file in
//! the same folder, then rename), read back with polars.

use anyhow::{Context, Result};
use polars::prelude::{
    Column, DataFrame, NamedFrom, ParquetReader, ParquetWriter, SerReader, Series,
};
use std::path::Path;

/// A table under construction: named columns of equal length.
#[derive(Default)]
pub struct Table {
    columns: Vec<Column>,
}

impl Table {
    /// An empty table.
    pub fn new() -> Table {
        Table::default()
    }

    /// Adds a text column.
    pub fn str<S: AsRef<str>>(mut self, name: &str, values: &[S]) -> Table {
        let v: Vec<&str> = values.iter().map(|s| s.as_ref()).collect();
        self.columns
            .push(Column::new(name.into(), Series::new(name.into(), v)));
        self
    }

    /// Adds a float column (`None` = null).
    pub fn f64(mut self, name: &str, values: &[Option<f64>]) -> Table {
        self.columns
            .push(Series::new(name.into(), values.to_vec()).into());
        self
    }

    /// Adds an unsigned integer column (`None` = null).
    pub fn u64(mut self, name: &str, values: &[Option<u64>]) -> Table {
        self.columns
            .push(Series::new(name.into(), values.to_vec()).into());
        self
    }

    /// The polars DataFrame.
    pub fn into_frame(self) -> Result<DataFrame> {
        DataFrame::new_infer_height(self.columns).context("building a table")
    }

    /// Writes the table to `path` as Parquet, atomically.
    pub fn write_parquet(self, path: &Path) -> Result<()> {
        let mut df = self.into_frame()?;
        write_parquet(&mut df, path)
    }
}

/// Writes `df` to `path` as Parquet via a fresh temporary file (never through a link at its
/// name) and a rename.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<()> {
    let tmp = super::safe_fs::tmp_path(path);
    super::safe_fs::with_tmp(&tmp, path, |file| {
        ParquetWriter::new(file)
            .finish(df)
            .map(|_| ())
            .with_context(|| format!("writing {}", tmp.display()))
    })
}

/// The most rows a results table may declare (the largest table written has about 10^5).
pub const MAX_TABLE_ROWS: usize = 10_000_000;

/// The largest Parquet file read back (results tables are kilobytes to megabytes).
pub const MAX_TABLE_BYTES: u64 = 1 << 30;

/// Reads a Parquet file. A damaged file is an error naming it, never a panic or an abort: its
/// footer's structure and declared sizes are checked before the reader allocates by them, and a panic of the reader on
/// some other corruption is caught and reported quietly.
pub fn read_parquet(path: &Path) -> Result<DataFrame> {
    let damaged = |why: String| {
        anyhow::anyhow!(
            "{} is damaged ({why}); re-run the config with --force",
            path.display()
        )
    };
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot open {}", path.display()))?;
    if !meta.is_file() || meta.len() > MAX_TABLE_BYTES {
        return Err(damaged(format!(
            "not a regular file of at most {} MiB",
            MAX_TABLE_BYTES >> 20
        )));
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    super::parquet_guard::footer_is_sane(&bytes).map_err(damaged)?;
    let checked = quietly(|| declared_sizes_are_sane(&bytes));
    match checked {
        Some(Ok(())) => {}
        Some(Err(why)) => return Err(damaged(why)),
        None => return Err(damaged("its metadata cannot be read".into())),
    }
    let read = quietly(|| ParquetReader::new(std::io::Cursor::new(bytes)).finish());
    match read {
        Some(r) => r.with_context(|| format!("reading {}", path.display())),
        None => Err(damaged("the Parquet reader failed on it".into())),
    }
}

/// Whether the row and value counts and page sizes a Parquet file declares are within the
/// limits of a results table. The reader reserves memory by these numbers, so a corrupted count
/// (e.g. 2^61 values) would otherwise abort the process on allocation.
fn declared_sizes_are_sane(bytes: &[u8]) -> std::result::Result<(), String> {
    use polars_parquet::parquet::page::CompressedPage;
    use polars_parquet::parquet::read::{get_page_iterator, read_metadata};
    const MAX_PAGE_BYTES: usize = 256 << 20;
    let meta = read_metadata(&mut std::io::Cursor::new(bytes)).map_err(|e| e.to_string())?;
    if meta.num_rows > MAX_TABLE_ROWS {
        return Err(format!("it declares {} rows", meta.num_rows));
    }
    let buffer = polars_buffer::Buffer::from(bytes.to_vec());
    for group in &meta.row_groups {
        let rows = group.num_rows();
        if rows > MAX_TABLE_ROWS {
            return Err(format!("a row group declares {rows} rows"));
        }
        for column in group.parquet_columns() {
            let pages = get_page_iterator(
                column,
                std::io::Cursor::new(buffer.clone()),
                Vec::new(),
                MAX_PAGE_BYTES,
            )
            .map_err(|e| e.to_string())?;
            for page in pages {
                if let CompressedPage::Data(p) = page.map_err(|e| e.to_string())? {
                    if p.num_values() > rows || p.uncompressed_size() > MAX_PAGE_BYTES {
                        return Err(format!(
                            "a page declares {} values in a row group of {rows} rows",
                            p.num_values()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Quiet reads under way on any thread: while there is one, a panic raised inside the Parquet
/// reader's own worker threads (which the reading thread catches) is not printed either.
static QUIET_READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs `f`, turning a panic into `None` without printing it. The panic hook is installed once
/// and stays silent only on the thread (and for the time) that asked, and for panics inside
/// polars during such a read, so other threads' panics are reported as usual.
fn quietly<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> Option<T> {
    use std::sync::atomic::Ordering;
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_reader = QUIET_READS.load(Ordering::SeqCst) > 0
                && info
                    .location()
                    .is_some_and(|l| l.file().contains("/polars-"));
            if !(QUIET.with(|q| q.get()) || in_reader) {
                previous(info);
            }
        }));
    });
    QUIET_READS.fetch_add(1, Ordering::SeqCst);
    QUIET.with(|q| q.set(true));
    let r = std::panic::catch_unwind(f);
    QUIET.with(|q| q.set(false));
    QUIET_READS.fetch_sub(1, Ordering::SeqCst);
    r.ok()
}

/// The first value of a column (the one value of a column that repeats a per-run number).
pub fn first_value<T: Copy>(column: &[Option<T>], name: &str) -> Result<T> {
    column
        .first()
        .copied()
        .flatten()
        .ok_or_else(|| anyhow::anyhow!("a table has no value in column {name:?}"))
}

/// A float column whose every entry is set.
pub fn full_f64_column(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    f64_column(df, name)?
        .into_iter()
        .map(|v| v.ok_or_else(|| anyhow::anyhow!("column {name:?} has an empty entry")))
        .collect()
}

/// Column `name`, or an error saying the table is not what this program writes.
fn column<'a>(df: &'a DataFrame, name: &str) -> Result<&'a Column> {
    let c = df.column(name).map_err(|_| {
        anyhow::anyhow!(
            "a table has no column {name:?} (written by another version of the program? re-run with --force)"
        )
    })?;
    // A damaged file can decode to columns shorter than the table (fuzz finding): every
    // reader indexes rows 0..height, so refuse it here.
    if c.len() != df.height() {
        anyhow::bail!(
            "column {name:?} has {} values for {} rows (the table is damaged; re-run with --force)",
            c.len(),
            df.height()
        );
    }
    Ok(c)
}

/// A float column of `df` as a vector (nulls as `None`).
pub fn f64_column(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>> {
    let c = column(df, name)?;
    let ca = c.f64().with_context(|| format!("column {name:?}"))?;
    Ok((0..ca.len()).map(|i| ca.get(i)).collect())
}

/// An unsigned integer column of `df` as a vector (nulls as `None`).
pub fn u64_column(df: &DataFrame, name: &str) -> Result<Vec<Option<u64>>> {
    let c = column(df, name)?;
    let ca = c.u64().with_context(|| format!("column {name:?}"))?;
    Ok((0..ca.len()).map(|i| ca.get(i)).collect())
}

/// A text column of `df` as a vector (nulls as empty strings).
pub fn str_column(df: &DataFrame, name: &str) -> Result<Vec<String>> {
    let c = column(df, name)?;
    let ca = c.str().with_context(|| format!("column {name:?}"))?;
    Ok((0..ca.len())
        .map(|i| ca.get(i).unwrap_or_default().to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parquet_round_trip() {
        let dir = std::env::temp_dir().join(format!("trellis-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.parquet");
        Table::new()
            .str("name", &["a", "b"])
            .f64("x", &[Some(1.5), None])
            .u64("n", &[Some(3), Some(4)])
            .write_parquet(&p)
            .unwrap();
        let df = read_parquet(&p).unwrap();
        assert_eq!(df.height(), 2);
        assert_eq!(f64_column(&df, "x").unwrap(), vec![Some(1.5), None]);
        assert_eq!(str_column(&df, "name").unwrap(), vec!["a", "b"]);
        assert!(
            std::fs::read_dir(&dir).unwrap().count() == 1,
            "no temporary file left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Fuzz finding: a page declaring more values than its row group holds made the reader
    /// reserve memory by that count (2^61 bytes: an abort). The declared sizes are now checked.
    #[test]
    fn declared_counts_beyond_the_rows_are_damage_not_an_abort() {
        let dir = std::env::temp_dir().join(format!("trellis-table-sizes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.parquet");
        let x: Vec<Option<f64>> = (0..1000).map(|i| Some(i as f64)).collect();
        Table::new().f64("x", &x).write_parquet(&p).unwrap();
        assert_eq!(read_parquet(&p).unwrap().height(), 1000);
        // In the footer (Thrift compact), the row counts 1000 are zigzag varints D0 0F; make
        // them 500 (E8 07): the data page still declares 1000 values.
        let mut bytes = std::fs::read(&p).unwrap();
        let footer_len =
            u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
        let start = bytes.len() - 8 - footer_len as usize;
        let mut patched = 0;
        for i in start..bytes.len() - 9 {
            if bytes[i] == 0xD0 && bytes[i + 1] == 0x0F {
                bytes[i] = 0xE8;
                bytes[i + 1] = 0x07;
                patched += 1;
            }
        }
        assert!(patched >= 2, "row counts not found in the footer");
        std::fs::write(&p, &bytes).unwrap();
        let e = format!("{:#}", read_parquet(&p).unwrap_err());
        assert!(
            e.contains("is damaged (a page declares 1000 values in a row group of 500 rows)"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
