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
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
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

#[cfg(test)]
mod tests {
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
