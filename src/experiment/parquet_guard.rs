//! A structural check of a Parquet file's footer before any reader touches it.
//!
//! The footer is a Thrift compact-protocol struct. Readers reserve memory by the element counts
//! and byte lengths it declares, so a corrupted count (a fuzz finding: a list declaring enough
//! elements for a 99 GB allocation) aborts the process before any of our checks run. Every
//! element of a list or map, and every byte of a binary field, occupies at least one byte of the
//! footer, so a count larger than the bytes left is corruption: [`footer_is_sane`] walks the
//! whole footer without allocating and refuses any such count, unknown types and nesting deeper
//! than [`MAX_DEPTH`].

/// The deepest nesting of structs, lists and maps accepted (Parquet footers use under 10).
pub const MAX_DEPTH: usize = 64;

/// Whether `file` ends in a Parquet footer whose declared lengths all fit in the bytes present.
pub fn footer_is_sane(file: &[u8]) -> Result<(), String> {
    let n = file.len();
    if n < 12 || &file[n - 4..] != b"PAR1" || &file[..4] != b"PAR1" {
        return Err("it is not a Parquet file (no PAR1 magic at both ends)".into());
    }
    let len = u32::from_le_bytes([file[n - 8], file[n - 7], file[n - 6], file[n - 5]]) as usize;
    if len > n - 12 {
        return Err(format!("its footer declares {len} bytes in a file of {n}"));
    }
    let mut r = Reader {
        b: &file[n - 8 - len..n - 8],
        pos: 0,
    };
    r.skip_struct(0)
}

/// A cursor over the footer's bytes.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.b.len() - self.pos
    }

    fn byte(&mut self) -> Result<u8, String> {
        let v = *self
            .b
            .get(self.pos)
            .ok_or("its footer ends in the middle of a value")?;
        self.pos += 1;
        Ok(v)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("its footer holds an over-long integer".into())
    }

    fn skip(&mut self, k: usize) -> Result<(), String> {
        if k > self.left() {
            return Err(format!(
                "its footer declares {k} bytes where {} remain",
                self.left()
            ));
        }
        self.pos += k;
        Ok(())
    }

    /// A count of elements that must each take at least `min_bytes` of what is left.
    fn count(&mut self, declared: u64, min_bytes: usize) -> Result<usize, String> {
        let fits = (self.left() / min_bytes.max(1)) as u64;
        if declared > fits {
            return Err(format!(
                "its footer declares {declared} elements where at most {fits} fit"
            ));
        }
        Ok(declared as usize)
    }

    fn skip_struct(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("its footer is nested too deeply".into());
        }
        loop {
            let head = self.byte()?;
            if head == 0 {
                return Ok(());
            }
            if head >> 4 == 0 {
                self.varint()?; // the field id, when not given as a delta
            }
            match head & 0x0f {
                1 | 2 => {} // a boolean field's value is its type
                t => self.skip_value(t, depth)?,
            }
        }
    }

    fn skip_value(&mut self, t: u8, depth: usize) -> Result<(), String> {
        match t {
            1..=3 => self.skip(1),
            4..=6 => self.varint().map(|_| ()),
            7 => self.skip(8),
            8 => {
                let k = self.varint()?;
                let k = self.count(k, 1)?;
                self.skip(k)
            }
            9 | 10 => {
                let head = self.byte()?;
                let declared = match head >> 4 {
                    15 => self.varint()?,
                    k => u64::from(k),
                };
                let k = self.count(declared, 1)?;
                for _ in 0..k {
                    self.skip_value(head & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let declared = self.varint()?;
                if declared == 0 {
                    return Ok(());
                }
                let kinds = self.byte()?;
                let k = self.count(declared, 2)?;
                for _ in 0..k {
                    self.skip_value(kinds >> 4, depth + 1)?;
                    self.skip_value(kinds & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            12 => self.skip_struct(depth + 1),
            13 => self.skip(16),
            other => Err(format!("its footer holds an unknown value type {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::table::Table;

    fn written() -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!("trellis-guard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.parquet");
        Table::new()
            .str("name", &["a", "b", "c"])
            .f64("x", &[Some(1.0), None, Some(3.5)])
            .u64("k", &[Some(1), Some(2), Some(3)])
            .write_parquet(&p)
            .unwrap();
        let b = std::fs::read(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        b
    }

    #[test]
    fn accepts_what_we_write_and_refuses_impossible_counts() {
        let b = written();
        footer_is_sane(&b).unwrap();
        let n = b.len();
        let len = u32::from_le_bytes([b[n - 8], b[n - 7], b[n - 6], b[n - 5]]) as usize;
        let start = n - 8 - len;
        // The footer opens with field 1 (version, i32) then field 2 (schema, a list): make the
        // list's size a huge varint, as the fuzzer did.
        let mut bad = b.clone();
        let list = (start..n - 8)
            .find(|&i| bad[i] == 0x19)
            .expect("schema list");
        bad[list + 1] = 0xf0 | (bad[list + 1] & 0x0f);
        let mut forged = bad[..list + 2].to_vec();
        forged.extend([0xff, 0xff, 0xff, 0xff, 0x0f]);
        forged.extend(&bad[list + 2..]);
        let m = forged.len();
        let new_len = (len + 5) as u32;
        forged[m - 8..m - 4].copy_from_slice(&new_len.to_le_bytes());
        let e = footer_is_sane(&forged).unwrap_err();
        assert!(e.contains("elements"), "{e}");
        // Truncations and bad magic are errors too, never panics.
        for cut in [0, 4, 11, 12, n / 2, n - 9] {
            assert!(footer_is_sane(&b[..cut]).is_err() || cut == n);
        }
        let mut wrong_len = b.clone();
        wrong_len[n - 5] = 0x7f;
        assert!(footer_is_sane(&wrong_len)
            .unwrap_err()
            .contains("footer declares"));
    }
}
