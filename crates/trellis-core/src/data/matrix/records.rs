//! A table's records, one at a time, with the number of the line each starts on as an editor
//! shows it: a line ends at `\n`, `\r\n` or a lone `\r` (Windows and old Mac files number their
//! lines like Unix ones). Blank lines are skipped. A quoted cell holding a line break is refused
//! naming its lines: in a points file it is an unbalanced quote, which would otherwise join the
//! rows up to the next quote into one cell.

use super::{Delimiter, MatrixError};
use crate::data::one_line;

/// Line breaks in `bytes` (`\r\n` counts once).
fn breaks(bytes: &[u8]) -> usize {
    let mut n = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            n += 1;
        }
    }
    n
}

/// Calls `f(line, cells, raw, rest)` on each non-blank record of `text` in turn (1-based line
/// numbers; `raw` is the record as written, quotes and all; `rest` is the text after the
/// record, for estimating the rows still to come).
pub(super) fn each_record(
    text: &str,
    delimiter: Delimiter,
    name: &str,
    mut f: impl FnMut(usize, &[&str], &str, &str) -> Result<(), MatrixError>,
) -> Result<(), MatrixError> {
    let err = |line: usize, msg: String| MatrixError::Format {
        path: name.to_string(),
        line,
        msg,
    };
    let byte = match delimiter {
        Delimiter::Whitespace => {
            let (mut line, mut start) = (1, 0);
            let bytes = text.as_bytes();
            while start < bytes.len() {
                let end = bytes[start..]
                    .iter()
                    .position(|&b| b == b'\n' || b == b'\r')
                    .map_or(bytes.len(), |k| start + k);
                let next = match (bytes.get(end), bytes.get(end + 1)) {
                    (Some(b'\r'), Some(b'\n')) => end + 2,
                    (Some(_), _) => end + 1,
                    (None, _) => end,
                };
                let cells = split_quoted_whitespace(&text[start..end]).map_err(|col| {
                    err(
                        line,
                        format!("cell {col} opens a quote (\") that the line does not close; close it or remove it"),
                    )
                })?;
                if !cells.is_empty() {
                    let refs: Vec<&str> = cells.iter().map(|c| c.as_ref()).collect();
                    f(line, &refs, &text[start..end], &text[next..])?;
                }
                line += 1;
                start = next;
            }
            return Ok(());
        }
        Delimiter::Comma => b',',
        Delimiter::Tab => b'\t',
        Delimiter::Semicolon => b';',
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(byte)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rec = csv::StringRecord::new();
    // Line numbers from byte offsets: the breaks between the last record's start and this one's.
    let (mut line, mut counted) = (1usize, 0usize);
    let mut line_at = |byte: usize| {
        let byte = byte.min(text.len());
        if byte > counted {
            line += breaks(&text.as_bytes()[counted..byte]);
            counted = byte;
        }
        line
    };
    loop {
        let before = reader.position().byte() as usize;
        match reader.read_record(&mut rec) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => {
                let at = e.position().map_or(before, |p| p.byte() as usize);
                return Err(err(
                    line_at(at),
                    format!("{} (check the quoting)", one_line(&e.to_string())),
                ));
            }
        }
        // The record starts after any blank lines the reader skipped.
        let mut start = rec.position().map_or(before, |p| p.byte() as usize);
        while matches!(text.as_bytes().get(start), Some(b'\n' | b'\r')) {
            start += 1;
        }
        let line = line_at(start);
        if rec.iter().all(|c| c.trim().is_empty()) && rec.len() == 1 {
            continue;
        }
        if let Some(i) = rec.iter().position(|c| c.contains(['\n', '\r'])) {
            // (A quote left open to the end of the file takes the last line break too.)
            let spanned: usize = rec
                .iter()
                .map(|c| breaks(c.trim_end_matches(['\n', '\r']).as_bytes()))
                .sum();
            return Err(err(
                line,
                format!(
                    "cell {} is quoted over lines {line} to {}: an unbalanced quote (\") joins them into one row; close the quote on its line or remove it",
                    i + 1,
                    line + spanned
                ),
            ));
        }
        let cells: Vec<&str> = rec.iter().collect();
        let end = (reader.position().byte() as usize).min(text.len());
        f(line, &cells, &text[start.min(end)..end], &text[end..])?;
    }
}

/// The cells of a line separated by runs of spaces or tabs, where a cell in double quotes may
/// hold spaces (`""` inside is one quote), as R's `write.table` writes by default. `Err(k)`: cell
/// `k` (1-based) opens a quote the line does not close.
fn split_quoted_whitespace(line: &str) -> Result<Vec<std::borrow::Cow<'_, str>>, usize> {
    use std::borrow::Cow;
    let mut cells: Vec<Cow<'_, str>> = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' || b[i] == b'\t' {
            i += 1;
            continue;
        }
        if b[i] != b'"' {
            let start = i;
            while i < b.len() && b[i] != b' ' && b[i] != b'\t' {
                i += 1;
            }
            cells.push(Cow::Borrowed(&line[start..i]));
            continue;
        }
        // A quoted cell: up to the closing quote ("" is a quote inside).
        let mut cell = String::new();
        let mut j = i + 1;
        loop {
            match b.get(j) {
                None => return Err(cells.len() + 1),
                Some(b'"') if b.get(j + 1) == Some(&b'"') => {
                    cell.push('"');
                    j += 2;
                }
                Some(b'"') => {
                    j += 1;
                    break;
                }
                Some(_) => {
                    let c = line[j..].chars().next().unwrap_or(' ');
                    cell.push(c);
                    j += c.len_utf8();
                }
            }
        }
        cells.push(Cow::Owned(cell));
        i = j;
    }
    Ok(cells)
}

/// The lines (points, roughly) in `rest`, counted, not parsed.
pub(super) fn lines_in(rest: &str) -> usize {
    breaks(rest.as_bytes()) + usize::from(!rest.is_empty() && !rest.ends_with(['\n', '\r']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, d: Delimiter) -> Vec<(usize, Vec<String>)> {
        let mut v = Vec::new();
        each_record(text, d, "t", |l, c, _, _| {
            v.push((l, c.iter().map(|s| s.to_string()).collect()));
            Ok(())
        })
        .unwrap();
        v
    }

    #[test]
    fn line_numbers_count_every_kind_of_line_end() {
        for text in [
            "a,b\n1,2\n\n3,4\n",
            "a,b\r\n1,2\r\n\r\n3,4\r\n",
            "a,b\r1,2\r\r3,4\r",
        ] {
            let got: Vec<usize> = lines(text, Delimiter::Comma).iter().map(|x| x.0).collect();
            assert_eq!(got, [1, 2, 4], "{text:?}");
        }
        let got: Vec<usize> = lines("1 2\r\n\r\n3 4\r\n5 6", Delimiter::Whitespace)
            .iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(got, [1, 3, 4]);
        // A quoted cell holding the separator is one cell.
        let v = lines("x;\"a;b\"\n", Delimiter::Semicolon);
        assert_eq!(v[0].1, ["x", "a;b"]);
        let e = each_record(
            "a,b\r\n1,\"2\r\n3,4\r\n",
            Delimiter::Comma,
            "t",
            |_, _, _, _| Ok(()),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line 2") && e.contains("lines 2 to 3"), "{e}");
        // R's write.table by default: spaces between cells, names in quotes.
        let v = lines(
            "\"a\" \"b\"\n\"New York\" 1 \"x \"\"y\"\"\"\n",
            Delimiter::Whitespace,
        );
        assert_eq!(v[1].1, ["New York", "1", "x \"y\""]);
        let e = each_record("1 \"2\n", Delimiter::Whitespace, "t", |_, _, _, _| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1") && e.contains("cell 2"), "{e}");
        assert_eq!(lines_in("1\r\n2\r\n"), 2);
        assert_eq!(lines_in("1\n2"), 2);
    }
}
