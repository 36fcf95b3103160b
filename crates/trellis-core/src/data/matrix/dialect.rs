//! How a table file writes its cells: the separator (`,` `;` tab, or runs of whitespace) and the
//! decimal mark (`.`, or `,` as spreadsheets in many locales export it), found from the file
//! itself, and how one cell reads (a number, a missing value, or text).
//!
//! **The separator** is the candidate that splits every one of the first lines (up to
//! [`SNIFF_LINES`], quotes respected) into the same number of cells, at least two. Among
//! candidates that do, a tab comes first, then `;`, then `,`: a file whose every line holds the
//! same number of semicolons is a semicolon file even when its decimal commas also split evenly.
//! When none does (R's `write.table` leaves the row names' header cell out; a ragged line), the
//! candidate on whose count most lines agree (at least half; the first line counts twice), ties
//! to the file's extension (`.csv` a comma, `.tsv`/`.tab` a tab), then to the order above; a
//! ragged line is then refused by name. Tabs and semicolons are judged before commas, which may
//! be decimal marks. With none of `,` `;` tab in the first lines, cells
//! are separated by runs of whitespace (USPS's `zip.train`; R's `write.table` by default, names
//! in quotes).
//!
//! **Decimal commas** are read when the separator is `;` or a tab and a cell of the first lines
//! is a number written with a comma (`1,5`, `-0,25`, `3,0e-2`). Then a number written with a
//! point in the same file is refused (in such files a point may be a thousands separator).

use super::Delimiter;

/// Lines the separator and the decimal mark are judged on.
pub const SNIFF_LINES: usize = 64;

/// Spellings of a missing value (compared without case, after trimming): R's `NA`, pandas' empty
/// cell and `NaN`, spreadsheets' `#N/A`, SQL's `NULL`, UCI's `?`.
pub const MISSING: [&str; 9] = ["", "na", "n/a", "nan", "null", "none", "#n/a", "?", "-"];

/// A file's separator and decimal mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// How cells are separated.
    pub delimiter: Delimiter,
    /// Whether numbers are written with a decimal comma (`1,5` = 1.5).
    pub decimal_comma: bool,
}

impl Dialect {
    /// The dialect of `text`: `given` when the caller names the separator (decimal points then),
    /// else found from the text (`hint`: the separator the file's extension implies, if any).
    pub fn of(text: &str, given: Option<Delimiter>, hint: Option<Delimiter>) -> Dialect {
        match given {
            Some(delimiter) => Dialect {
                delimiter,
                decimal_comma: false,
            },
            None => sniff(text, hint),
        }
    }

    /// The dialect in words, for the data line: `None` for the common case (commas or tabs,
    /// decimal points), e.g. "';' between cells, decimal commas" otherwise.
    pub fn describe(&self) -> Option<String> {
        let sep = match self.delimiter {
            Delimiter::Comma | Delimiter::Tab => None,
            Delimiter::Semicolon => Some("';' between cells"),
            Delimiter::Whitespace => Some("spaces between cells"),
        };
        match (sep, self.decimal_comma) {
            (None, false) => None,
            (Some(s), false) => Some(s.to_string()),
            (None, true) => Some("decimal commas".to_string()),
            (Some(s), true) => Some(format!("{s}, decimal commas")),
        }
    }
}

/// The candidates in order of preference when several split the lines evenly.
const CANDIDATES: [(Delimiter, u8); 3] = [
    (Delimiter::Tab, b'\t'),
    (Delimiter::Semicolon, b';'),
    (Delimiter::Comma, b','),
];

fn sniff(text: &str, hint: Option<Delimiter>) -> Dialect {
    let lines: Vec<&str> = text
        .split(['\n', '\r'])
        .filter(|l| !l.trim().is_empty())
        .take(SNIFF_LINES)
        .collect();
    let counts = |sep: u8| -> Vec<usize> { lines.iter().map(|l| cells_in(l, sep)).collect() };
    let first = |b: u8| lines.first().map_or(1, |l| cells_in(l, b));
    // Every line alike (at least two cells).
    let exact = |b: u8| {
        let c = counts(b);
        c.first()
            .is_some_and(|&m| m >= 2 && c.iter().all(|&k| k == m))
    };
    // Else (R's header one short, a ragged line): the count (two or more) on which most lines
    // agree, at least half of them, the first line counting twice (a header split like the
    // rows is the best evidence).
    let agreement = |b: u8| {
        let c = counts(b);
        let mut best = 0;
        for &m in &c {
            if m >= 2 {
                let same = c.iter().filter(|&&k| k == m).count();
                best = best.max(same + usize::from(c[0] == m));
            }
        }
        best
    };
    // A candidate that leaves the first line whole loses to one that splits it (decimal commas
    // split every row of a ';' file, never its header).
    let header_split = CANDIDATES.iter().any(|(_, b)| first(*b) >= 2);
    let best_of = |among: &[(Delimiter, u8)]| -> Option<Delimiter> {
        if let Some((d, _)) = among.iter().find(|(_, b)| exact(*b)) {
            return Some(*d);
        }
        let scored: Vec<(Delimiter, usize)> = among
            .iter()
            .filter(|(_, b)| !header_split || first(*b) >= 2)
            .map(|(d, b)| (*d, agreement(*b)))
            .filter(|x| 2 * x.1 >= lines.len())
            .collect();
        let top = scored.iter().map(|x| x.1).max()?;
        let tied: Vec<Delimiter> = scored.iter().filter(|x| x.1 == top).map(|x| x.0).collect();
        Some(match hint {
            Some(h) if tied.contains(&h) => h,
            _ => tied[0],
        })
    };
    // Tabs and semicolons before commas: a comma may be a decimal mark, and decimal commas can
    // split every line alike when each holds as many numbers.
    let found = best_of(&CANDIDATES[..2]).or_else(|| best_of(&CANDIDATES));
    let delimiter = found.unwrap_or(Delimiter::Whitespace);
    let decimal_comma = delimiter != Delimiter::Comma
        && delimiter != Delimiter::Whitespace
        && lines.iter().any(|l| {
            split_simple(l, delimiter)
                .iter()
                .any(|c| comma_number(c).is_some())
        });
    Dialect {
        delimiter,
        decimal_comma,
    }
}

/// Cells of `line` split at `sep` outside double quotes (for judging the separator only).
fn cells_in(line: &str, sep: u8) -> usize {
    let mut quoted = false;
    let mut n = 1;
    for &b in line.as_bytes() {
        if b == b'"' {
            quoted = !quoted;
        } else if b == sep && !quoted {
            n += 1;
        }
    }
    n
}

/// The cells of `line` (quotes stripped, not unescaped), for judging the decimal mark only.
fn split_simple(line: &str, d: Delimiter) -> Vec<&str> {
    let sep = match d {
        Delimiter::Whitespace => return line.split_whitespace().collect(),
        Delimiter::Tab => '\t',
        Delimiter::Semicolon => ';',
        Delimiter::Comma => ',',
    };
    line.split(sep)
        .map(|c| c.trim().trim_matches('"'))
        .collect()
}

/// `cell` (trimmed) as a number written with one decimal comma and digits around it
/// (`1,5`, `-,5`, `3,0e-2`), if it is one.
fn comma_number(cell: &str) -> Option<f64> {
    let s = cell.trim();
    let (int, rest) = s.split_once(',')?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let int_ok = {
        let t = int.strip_prefix(['+', '-']).unwrap_or(int);
        t.is_empty() || digits(t)
    };
    let (frac, exp) = match rest.find(['e', 'E']) {
        Some(k) => (&rest[..k], Some(&rest[k + 1..])),
        None => (rest, None),
    };
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    let frac_ok =
        digits(frac) || (frac.is_empty() && !int.trim_start_matches(['+', '-']).is_empty());
    if !(int_ok && frac_ok && exp_ok) || s.contains('.') {
        return None;
    }
    s.replacen(',', ".", 1).parse().ok()
}

/// What one cell holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// A number (possibly not finite: `inf`; the caller refuses those).
    Number(f64),
    /// A missing value ([`MISSING`]).
    Missing,
    /// Anything else.
    Text,
}

/// How `cell` reads under `dialect`.
pub fn classify(cell: &str, dialect: &Dialect) -> Cell {
    let s = cell.trim();
    if MISSING.iter().any(|m| s.eq_ignore_ascii_case(m)) {
        return Cell::Missing;
    }
    if dialect.decimal_comma {
        if let Some(x) = comma_number(s) {
            return Cell::Number(x);
        }
        // A point is ambiguous beside decimal commas (a thousands separator?): text, said.
        if s.contains('.') {
            return Cell::Text;
        }
    }
    match s.parse::<f64>() {
        Ok(x) => Cell::Number(x),
        Err(_) => Cell::Text,
    }
}

/// Why `cell`, text where a number belongs, is not read as one, when it looks like a number in
/// another notation ("" otherwise): the fix, as a clause starting with "; ".
pub fn notation_hint(cell: &str, dialect: &Dialect) -> &'static str {
    let s = cell.trim();
    if dialect.decimal_comma
        && s.contains('.')
        && s.trim_start_matches(['+', '-'])
            .starts_with(|c: char| c.is_ascii_digit() || c == '.')
    {
        "; this file's numbers have decimal commas (1,5), so a point in a number is ambiguous (a thousands separator?): export the file without thousands separators"
    } else if !dialect.decimal_comma && comma_number(s).is_some() {
        "; if commas are decimal marks here, separate the cells with ';' (as spreadsheets export them): then decimal commas are read"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Dialect {
        Dialect::of(text, None, None)
    }

    #[test]
    fn separators_and_decimal_marks_are_found() {
        let semi = d("x;y\n1,5;2,5\n4,1;5,2\n");
        assert_eq!(
            (semi.delimiter, semi.decimal_comma),
            (Delimiter::Semicolon, true)
        );
        // Headerless: the commas split evenly too, the semicolons win.
        assert_eq!(d("1,5;2,5\n4,1;5,2\n").delimiter, Delimiter::Semicolon);
        let plain = d("a,b\n1.5,2\n3,4\n");
        assert_eq!(
            (plain.delimiter, plain.decimal_comma),
            (Delimiter::Comma, false)
        );
        // A quoted comma does not split; R's header without the row names' cell is even.
        assert_eq!(d("\"a,b\",c\n1,2\n").delimiter, Delimiter::Comma);
        assert_eq!(
            d("a,b\n\"r1\",1,2\n\"r2\",3,4\n").delimiter,
            Delimiter::Comma
        );
        assert_eq!(d("a\tb\n1,5\t2\n").delimiter, Delimiter::Tab);
        assert!(d("a\tb\n1,5\t2\n").decimal_comma);
        assert_eq!(d("1 2 3\n4 5 6\n").delimiter, Delimiter::Whitespace);
        // Ragged: the extension, else the most cells on the first line.
        assert_eq!(
            Dialect::of("a,b,c\n1,2\n", None, Some(Delimiter::Comma)).delimiter,
            Delimiter::Comma
        );
        assert_eq!(d("a;b;c\n1;2\n").delimiter, Delimiter::Semicolon);
        // Given: as given, decimal points.
        let g = Dialect::of("1,5;2\n", Some(Delimiter::Tab), None);
        assert_eq!((g.delimiter, g.decimal_comma), (Delimiter::Tab, false));
    }

    #[test]
    fn cells_read_as_numbers_missing_or_text() {
        let comma = Dialect {
            delimiter: Delimiter::Semicolon,
            decimal_comma: true,
        };
        let point = Dialect {
            delimiter: Delimiter::Comma,
            decimal_comma: false,
        };
        assert_eq!(classify(" 1,5 ", &comma), Cell::Number(1.5));
        assert_eq!(classify("-,25", &comma), Cell::Number(-0.25));
        assert_eq!(classify("3,0e-2", &comma), Cell::Number(0.03));
        assert_eq!(classify("7", &comma), Cell::Number(7.0));
        assert_eq!(classify("1.500", &comma), Cell::Text);
        assert!(notation_hint("1.500", &comma).contains("thousands"));
        assert_eq!(classify("1,5", &point), Cell::Text);
        assert!(notation_hint("1,5", &point).contains("';'"));
        assert_eq!(notation_hint("abc", &point), "");
        for m in ["", " NA ", "nan", "NULL", "#N/A", "?", "-", "None", "n/a"] {
            assert_eq!(classify(m, &point), Cell::Missing, "{m:?}");
        }
        assert_eq!(classify("inf", &point), Cell::Number(f64::INFINITY));
        assert_eq!(classify("1e3", &point), Cell::Number(1000.0));
        assert_eq!(classify("a1", &point), Cell::Text);
        assert_eq!(comma_number("1,2,3"), None);
        assert_eq!(comma_number(","), None);
        assert_eq!(comma_number("5,"), Some(5.0));
    }
}
