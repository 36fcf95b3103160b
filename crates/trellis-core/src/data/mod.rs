//! Data sources: generators and loaders. They know nothing of algorithms.

pub mod ginkgo;
pub mod graphs;
pub mod matrix;
pub mod pam50;

use std::io::Read;
use std::path::Path;

/// A message on one line: runs of whitespace (newlines included, as serde and toml write them,
/// or as a user's text quoted in an error holds them) become one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The largest magnitude a data value may have: the models square values and sum them over
/// points and features, so larger ones would overflow (±1e100 leaves room for both).
pub const MAX_ABS_VALUE: f64 = 1e100;

/// `s` cut to at most `max` characters, with how much was left out (so a megabyte-long label
/// or value quoted in an error stays readable on one line).
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &s[..cut],
            s[cut..].chars().count()
        ),
    }
}

/// `s` with every run of more than 24 digits (a huge or tiny number printed in full, e.g.
/// `1e308` as 309 digits) written in scientific notation instead.
pub fn compact_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        if i == start {
            let c = s[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8().max(1);
            continue;
        }
        let run = &s[start..i];
        let digits = run.bytes().filter(u8::is_ascii_digit).count();
        match run.parse::<f64>() {
            Ok(v) if digits > 24 => out.push_str(&format!("{v:e}")),
            _ => out.push_str(run),
        }
    }
    out
}

/// Centre every column and scale it to unit (population) variance; constant columns become 0.
/// Rows of any form (`Vec<f64>`, or `&mut [f64]` rows of one buffer: the same bits). Stops,
/// returning false with the columns after the current one untouched, when its computation is
/// cancelled ([`crate::cancel`], checked per column); true when done.
pub fn standardize<R: AsRef<[f64]> + AsMut<[f64]>>(rows: &mut [R]) -> bool {
    let cancel = crate::cancel::Cancel::new();
    let n = rows.len().max(1) as f64;
    let d = rows.first().map_or(0, |r| r.as_ref().len());
    for j in 0..d {
        if cancel.is_cancelled() {
            return false;
        }
        let mean = rows.iter().map(|r| r.as_ref()[j]).sum::<f64>() / n;
        let var = rows
            .iter()
            .map(|r| (r.as_ref()[j] - mean).powi(2))
            .sum::<f64>()
            / n;
        let sd = var.sqrt();
        for r in rows.iter_mut() {
            let r = r.as_mut();
            r[j] = if sd > 0.0 { (r[j] - mean) / sd } else { 0.0 };
        }
    }
    true
}

/// Writes `bytes` to `path` atomically and never through a link: a fresh temporary file beside
/// it (`.name.<pid>.<n>.tmp`, created with `O_EXCL`, so nothing already there is touched or
/// followed), then one rename (which replaces a link at `path`, never its target). The file
/// appears whole or not at all; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let (tmp, mut file) = loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
            Ok(f) => break (tmp, f),
        }
    };
    // Only the temporary file this call created is ever removed.
    let result = file
        .write_all(bytes)
        .and_then(|()| file.flush())
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
    result
}

/// Reads a user's data file as text: only a regular file (never a device or a pipe such as
/// `/dev/zero`), and at most `limit` bytes (the error says the limit).
pub fn read_text_limited(path: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (give the path of a file, not a device or a folder)",
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    let text = decode_text(bytes)?;
    if text.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!(
                "larger than the {} MiB this loader reads; split the file",
                limit >> 20
            ),
        ));
    }
    Ok(text)
}

/// A text file's bytes as text: UTF-8 (a byte order mark is kept for the reader to drop), or
/// UTF-16 with its byte order mark (a spreadsheet's "Unicode text" export); any other encoding
/// is an error naming the line of the first byte that is not UTF-8, and the fix.
fn decode_text(bytes: Vec<u8>) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    let utf16 = |le: bool| -> std::io::Result<String> {
        let units: Vec<u16> = bytes[2..]
            .chunks(2)
            .map(|c| {
                let pair = [c[0], *c.get(1).unwrap_or(&0)];
                if le {
                    u16::from_le_bytes(pair)
                } else {
                    u16::from_be_bytes(pair)
                }
            })
            .collect();
        String::from_utf16(&units).map_err(|_| {
            Error::new(
                ErrorKind::InvalidData,
                "is not valid UTF-16 text although it starts like it; save it as UTF-8 text (a spreadsheet's \"CSV UTF-8\")",
            )
        })
    };
    match bytes.get(..2) {
        Some([0xFF, 0xFE]) => return utf16(true),
        Some([0xFE, 0xFF]) => return utf16(false),
        _ => {}
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let b = e.as_bytes();
        let line = 1 + b[..at].iter().filter(|&&c| c == b'\n').count();
        Error::new(
            ErrorKind::InvalidData,
            format!(
                "is not UTF-8 text (byte {:#04x} on line {line} is not; a binary file, or text in another encoding such as Windows-1252); save it as UTF-8 text (a spreadsheet's \"CSV UTF-8\", R's write.csv(..., fileEncoding = \"UTF-8\"))",
                b[at]
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_is_utf8_or_utf16_with_its_mark_else_the_line_is_named() {
        let t = super::decode_text(b"a,b\n1,2\n".to_vec()).unwrap();
        assert_eq!(t, "a,b\n1,2\n");
        let mut le = vec![0xFF, 0xFE];
        le.extend("x\t\u{e9}\n".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(super::decode_text(le).unwrap(), "x\t\u{e9}\n");
        let mut be = vec![0xFE, 0xFF];
        be.extend("y\n".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(super::decode_text(be).unwrap(), "y\n");
        // Windows-1252's é on line 2.
        let e = super::decode_text(b"name,x\nCaf\xe9,1\n".to_vec())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 2") && e.contains("UTF-8") && !e.contains('\n'),
            "{e}"
        );
    }

    /// A decoy at every name the old scheme used (`name.tmp.ext`) and a file beside the target
    /// keep their bytes; the target gets the new bytes; no temporary file is left.
    #[test]
    fn write_atomic_touches_nothing_but_its_target() {
        let dir = std::env::temp_dir().join(format!("tl_write_atomic_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("jets.json");
        let decoys = [
            (dir.join("jets.tmp.json"), b"user's own file".to_vec()),
            (dir.join("index.html"), b"<html>mine</html>".to_vec()),
        ];
        for (p, b) in &decoys {
            std::fs::write(p, b).unwrap();
        }
        std::fs::write(&target, b"old").unwrap();
        super::write_atomic(&target, b"new bytes").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new bytes");
        for (p, b) in &decoys {
            assert_eq!(&std::fs::read(p).unwrap(), b, "{} changed", p.display());
        }
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "left behind: {names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_numbers_are_written_in_scientific_notation() {
        let huge = format!("beta = {} must be", 1e308);
        assert_eq!(super::compact_numbers(&huge), "beta = 1e308 must be");
        assert_eq!(
            super::compact_numbers("N = 27, 3.5 GiB é"),
            "N = 27, 3.5 GiB é"
        );
        let tiny = format!("x = {}", 1e-30);
        assert_eq!(super::compact_numbers(&tiny), "x = 1e-30");
    }

    #[test]
    fn clip_keeps_short_text_and_says_what_it_cut() {
        assert_eq!(super::clip("abc", 3), "abc");
        assert_eq!(super::clip("abcdé", 2), "ab… (3 more characters)");
    }

    #[test]
    fn devices_and_oversized_files_are_refused() {
        let e = super::read_text_limited(std::path::Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("regular file"), "{e}");
        let p = std::env::temp_dir().join(format!("trellis-limit-{}", std::process::id()));
        std::fs::write(&p, vec![b'x'; 2048]).unwrap();
        let e = super::read_text_limited(&p, 1024).unwrap_err();
        assert!(e.to_string().contains("MiB"), "{e}");
        assert_eq!(super::read_text_limited(&p, 4096).unwrap().len(), 2048);
        std::fs::remove_file(&p).ok();
    }
}
