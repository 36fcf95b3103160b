//! The reader against generated files: random separators, quoting, line endings, byte order
//! marks, blank lines, decimal commas, missing-value spellings, names and label columns (R's,
//! pandas' and spreadsheets' layouts), each written from a known matrix; and the same files with
//! one defect (a ragged row, a missing value, text in a column of numbers, an unclosed quote).
//! Every file is either read to exactly the matrix it was written from, or refused in one line
//! that names the defect's line (and, for a defect in a cell, its column); never a panic.
//!
//! `TRELLIS_TABLE_CASES` sets how many files (default 20,000; the full run is 100,000) and
//! `TRELLIS_TABLE_SEED` their seed (default 49).

use super::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// How the names column is written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum NamesStyle {
    /// No names.
    None,
    /// First column, header cell `""` (R's write.csv, pandas' to_csv of a named index).
    EmptyHeader,
    /// First column, no header cell (R's write.table: the header one cell short).
    RShort,
    /// Headed "name" or "id", anywhere.
    Named,
    /// pandas' default index (0, 1, 2, ... under `""`) plus a column of names headed "model".
    PandasIndex,
}

/// A file's layout and the matrix it holds.
#[derive(Debug)]
struct Table {
    sep: Delimiter,
    decimal_comma: bool,
    header: bool,
    /// The cells as written (header first if any), before quoting and joining.
    rows: Vec<Vec<String>>,
    features: Vec<String>,
    values: Vec<f64>,
    point_names: Option<Vec<String>>,
    labels: Option<Vec<String>>,
    /// Written column index of each feature.
    feature_cols: Vec<usize>,
}

const WORDS: [&str; 8] = [
    "alpha",
    "Beta",
    "gamma",
    "New York",
    "Smith, J",
    "o'hara",
    "x;y",
    "say \"hi\"",
];

fn number_text(rng: &mut StdRng, decimal_comma: bool) -> (String, f64) {
    let s = match rng.random_range(0..5) {
        0 => format!("{}", rng.random_range(-1000i64..1000)),
        1 => format!("{:.3}", rng.random_range(-50.0..50.0)),
        2 => format!("{:e}", rng.random_range(-1e6..1e6)),
        3 => format!("{:.1}", rng.random_range(0.0..10.0)),
        _ => format!("{}", rng.random_range(-1.0..1.0)),
    };
    let x: f64 = s.parse().unwrap();
    let written = if decimal_comma {
        s.replace('.', ",")
    } else {
        s
    };
    (written, x)
}

fn table(rng: &mut StdRng) -> Table {
    let sep = [
        Delimiter::Comma,
        Delimiter::Semicolon,
        Delimiter::Tab,
        Delimiter::Whitespace,
    ][rng.random_range(0..4)];
    let header = rng.random_bool(0.8);
    let n = rng.random_range(2..14usize);
    let d = rng.random_range(1..5usize);
    let decimal_comma =
        matches!(sep, Delimiter::Semicolon | Delimiter::Tab) && rng.random_bool(0.6);
    let names = if header {
        [
            NamesStyle::None,
            NamesStyle::EmptyHeader,
            NamesStyle::RShort,
            NamesStyle::Named,
            NamesStyle::PandasIndex,
        ][rng.random_range(0..5)]
    } else if rng.random_bool(0.4) {
        NamesStyle::Named
    } else {
        NamesStyle::None
    };
    // Labels only with a header (a headerless file with two text columns is ambiguous).
    let labelled = header && rng.random_bool(0.5);
    let point_names: Vec<String> = (0..n)
        .map(|i| format!("{} {i}", WORDS[rng.random_range(0..WORDS.len())]))
        .collect();
    let classes = ["a", "b", "c"];
    let labels: Vec<String> = (0..n)
        .map(|_| classes[rng.random_range(0..3)].to_string())
        .collect();
    // Columns in written order: names-ish first where the style says so, then features with
    // the label column (and a "Named" names column) at random places.
    #[derive(Clone, Copy, PartialEq)]
    enum Col {
        Name,
        Index,
        Label,
        Feature(usize),
    }
    let mut cols: Vec<Col> = (0..d).map(Col::Feature).collect();
    if labelled {
        let at = rng.random_range(0..=cols.len());
        cols.insert(at, Col::Label);
    }
    match names {
        NamesStyle::None => {}
        NamesStyle::EmptyHeader | NamesStyle::RShort => cols.insert(0, Col::Name),
        NamesStyle::Named => {
            let at = rng.random_range(0..=cols.len());
            cols.insert(at, Col::Name);
        }
        NamesStyle::PandasIndex => {
            let at = rng.random_range(0..=cols.len());
            cols.insert(at, Col::Name);
            cols.insert(0, Col::Index);
        }
    }
    // One column of decimal commas reads as two columns split at a comma: refused, not read
    // (a_single_column_of_decimal_commas_is_refused_not_split); written only beside others.
    let decimal_comma = decimal_comma && cols.len() > 1;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let feature_names: Vec<String> = (0..d).map(|j| format!("f{j}")).collect();
    if header {
        let mut h: Vec<String> = cols
            .iter()
            .map(|c| match c {
                Col::Name if names == NamesStyle::EmptyHeader => String::new(),
                Col::Name if names == NamesStyle::PandasIndex => "model".into(),
                Col::Name => ["name", "id"][rng.random_range(0..2)].into(),
                Col::Index => String::new(),
                Col::Label => ["label", "class", "species"][rng.random_range(0..3)].into(),
                Col::Feature(j) => feature_names[*j].clone(),
            })
            .collect();
        if names == NamesStyle::RShort {
            h.remove(0);
        }
        rows.push(h);
    }
    let mut values = vec![0.0; n * d];
    for i in 0..n {
        let row = cols
            .iter()
            .map(|c| match c {
                Col::Name => point_names[i].clone(),
                Col::Index => i.to_string(),
                Col::Label => labels[i].clone(),
                Col::Feature(j) => {
                    let (s, x) = number_text(rng, decimal_comma);
                    values[i * d + j] = x;
                    s
                }
            })
            .collect();
        rows.push(row);
    }
    let feature_cols = (0..d)
        .map(|j| cols.iter().position(|c| *c == Col::Feature(j)).unwrap())
        .collect();
    Table {
        sep,
        decimal_comma,
        header,
        rows,
        features: if header {
            feature_names
        } else {
            (1..=d).map(|j| format!("x{j}")).collect()
        },
        values,
        point_names: (names != NamesStyle::None).then_some(point_names),
        labels: labelled.then_some(labels),
        feature_cols,
    }
}

/// Writes the table's rows as the dialect says, quoting where a cell needs it (and, at random,
/// where it does not); returns the text and the line each written row starts on.
fn write(t: &Table, rng: &mut StdRng) -> (String, Vec<usize>) {
    let (sep, sep_char) = match t.sep {
        Delimiter::Comma => (",", ','),
        Delimiter::Semicolon => (";", ';'),
        Delimiter::Tab => ("\t", '\t'),
        Delimiter::Whitespace => (" ", ' '),
    };
    let nl = ["\n", "\r\n", "\r"][rng.random_range(0..3)];
    let quote_all_text = rng.random_bool(0.3);
    let mut text = String::new();
    if rng.random_bool(0.2) {
        text.push('\u{feff}');
    }
    let mut line = 1;
    let mut starts = Vec::new();
    for row in &t.rows {
        while rng.random_bool(0.1) {
            text.push_str(nl);
            line += 1;
        }
        starts.push(line);
        let cells: Vec<String> = row
            .iter()
            .map(|c| {
                let is_text = c.replacen(',', ".", 1).parse::<f64>().is_err();
                let needs = c.contains(sep_char)
                    || c.contains('"')
                    || (t.sep == Delimiter::Whitespace && (c.contains(' ') || c.is_empty()))
                    // A foreign separator in a text cell could split evenly on every line.
                    || (is_text && c.contains([',', ';', '\t']));
                if needs || (quote_all_text && is_text) || rng.random_bool(0.05) {
                    format!("\"{}\"", c.replace('"', "\"\""))
                } else {
                    c.clone()
                }
            })
            .collect();
        text.push_str(&cells.join(sep));
        text.push_str(nl);
        line += 1;
    }
    if rng.random_bool(0.3) {
        // No line end after the last row.
        text.truncate(text.len() - nl.len());
    }
    (text, starts)
}

fn spec() -> MatrixSpec {
    MatrixSpec {
        header: true,
        infer: true,
        ..MatrixSpec::default()
    }
}

/// Checks `text`, written from `t`, reads back exactly.
fn reads_back(t: &Table, text: &str) {
    let m = PointMatrix::parse(text, &spec(), "g.txt")
        .unwrap_or_else(|e| panic!("{e}\n{t:?}\n{text:?}"));
    if t.rows.iter().any(|r| r.len() > 1) {
        assert_eq!(m.dialect.delimiter, t.sep, "{text:?}");
    }
    if t.decimal_comma && text.contains(|c: char| c.is_ascii_digit()) {
        // Decimal commas are found when a number has one (an integer-only file needs none).
        assert!(
            m.dialect.decimal_comma
                || !t
                    .rows
                    .iter()
                    .flatten()
                    .any(|c| c.contains(',') && c.replacen(',', ".", 1).parse::<f64>().is_ok()),
            "{text:?}"
        );
    }
    assert_eq!(m.features, t.features, "{text:?}");
    assert_eq!(m.values, t.values, "{text:?}");
    assert_eq!(m.names, t.point_names, "{text:?}");
    assert_eq!(m.labels, t.labels, "{text:?}");
}

/// A defect in one data row (never the first, whose count sets the width), and what the
/// refusal must name.
fn defect(t: &mut Table, rng: &mut StdRng) -> Option<(usize, Option<String>)> {
    let first_data = usize::from(t.header);
    let data_rows = t.rows.len() - first_data;
    if data_rows < 2 {
        return None;
    }
    let r = first_data + rng.random_range(1..data_rows);
    let j = rng.random_range(0..t.features.len());
    let col = t.feature_cols[j];
    let column = t.header.then(|| format!("{:?}", t.features[j]));
    // (A ragged row among fewer than three leaves no count most lines agree on.)
    match rng.random_range(usize::from(data_rows < 3)..3) {
        0 => {
            // Ragged: one cell more or fewer.
            if rng.random_bool(0.5) || t.rows[r].len() < 2 {
                t.rows[r].push("1".into());
            } else {
                t.rows[r].pop();
            }
            Some((r, None))
        }
        1 => {
            // (An empty cell alone on its line is a blank line, which is skipped.)
            let spellings = ["", "NA", "NaN", "#N/A", "null", "?"];
            let k = rng.random_range(usize::from(t.rows[r].len() < 2)..spellings.len());
            t.rows[r][col] = spellings[k].into();
            Some((r, column))
        }
        _ => {
            t.rows[r][col] = "oops".into();
            Some((r, column))
        }
    }
}

fn cases() -> usize {
    std::env::var("TRELLIS_TABLE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

#[test]
fn generated_files_read_back_or_are_refused_naming_the_line() {
    let seed = std::env::var("TRELLIS_TABLE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(49);
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut read, mut refused) = (0, 0);
    for case in 0..cases() {
        let mut t = table(&mut rng);
        if case % 2 == 0 {
            let (text, _) = write(&t, &mut rng);
            reads_back(&t, &text);
            read += 1;
            continue;
        }
        let Some((row, column)) = defect(&mut t, &mut rng) else {
            continue;
        };
        let (text, starts) = write(&t, &mut rng);
        let e = match PointMatrix::parse(&text, &spec(), "g.txt") {
            Ok(m) => panic!("a defect in row {row} was read: {m:?}\n{t:?}\n{text:?}"),
            Err(e) => e.to_string(),
        };
        assert!(!e.contains('\n') && !e.contains('\r'), "{e}");
        assert!(
            e.contains(&format!("line {}:", starts[row])),
            "want line {}: {e}\n{text:?}",
            starts[row]
        );
        if let Some(c) = column {
            assert!(e.contains(&c), "want column {c}: {e}\n{text:?}");
        }
        refused += 1;
    }
    assert!(
        read > cases() / 3 && refused > cases() / 4,
        "{read} {refused}"
    );
}

#[test]
fn an_unclosed_quote_is_refused_naming_its_line() {
    let mut rng = StdRng::seed_from_u64(50);
    for _ in 0..2000 {
        let t = table(&mut rng);
        let (mut text, starts) = write(&t, &mut rng);
        // Open a quote at the start of the last row: it runs to the end of the file.
        let last = *starts.last().unwrap();
        let at = line_start(&text, last);
        text.insert(at, '"');
        // The quote may shift where the file reads wrong (it pairs with a later quote): the
        // refusal is one line naming a line, whichever; never a panic.
        if let Err(e) = PointMatrix::parse(&text, &spec(), "g.txt") {
            let e = e.to_string();
            assert!(!e.contains('\n') && !e.contains('\r'), "{e}");
            assert!(e.contains("g.txt line "), "{e}\n{text:?}");
        }
    }
}

/// The byte where line `line` (1-based, any line end) starts.
fn line_start(text: &str, line: usize) -> usize {
    let b = text.as_bytes();
    let (mut l, mut i) = (1, 0);
    while l < line && i < b.len() {
        if b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')) {
            l += 1;
        }
        i += 1;
    }
    i
}

#[test]
fn a_single_column_of_decimal_commas_is_refused_not_split() {
    // A spreadsheet's one-column export: no ';' to find, and the commas split every row in two.
    let e = PointMatrix::parse("weight\r\n1,5\r\n2,25\r\n", &spec(), "w.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("';'"), "{e}");
    // The issue's ragged example: numbers where R's row names would be, unquoted.
    let e = PointMatrix::parse("a,b\n1,2,3\n4,5,6\n7,8,9\n", &spec(), "r.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 2") && e.contains("3 cells, but the header has 2"),
        "{e}"
    );
    // R's write.table quotes its row names, numbers or not: read as names.
    let m = PointMatrix::parse("\"a\",\"b\"\n\"1\",2,3\n\"2\",5,6\n", &spec(), "r.csv").unwrap();
    assert_eq!(m.names.as_deref().unwrap(), ["1", "2"]);
    assert_eq!(m.values, [2.0, 3.0, 5.0, 6.0]);
}
