//! The little-endian request and answer layout of the module's calls.

/// Reads a request, naming what ran out or is malformed.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("request truncated in {what} at byte {}", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// A `u8`.
    pub fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    /// A `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An `i32`.
    pub fn i32(&mut self, what: &str) -> Result<i32, String> {
        Ok(self.u32(what)? as i32)
    }

    /// A count of items that follow, each at least `min` bytes long: a count
    /// the remaining bytes cannot hold is refused before anything is reserved.
    pub fn count(&mut self, what: &str, min: usize) -> Result<usize, String> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min.max(1)) > self.bytes.len() - self.at {
            return Err(format!("{what}: count {n} exceeds the request"));
        }
        Ok(n)
    }

    /// A byte string.
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], String> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }

    /// A UTF-8 string.
    pub fn str(&mut self, what: &str) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes(what)?).map_err(|e| format!("{what}: not UTF-8: {e}"))
    }

    /// An optional UTF-8 string.
    pub fn opt_str(&mut self, what: &str) -> Result<Option<&'a str>, String> {
        match self.u8(what)? {
            0 => Ok(None),
            _ => self.str(what).map(Some),
        }
    }

    /// A list of strings.
    pub fn strs(&mut self, what: &str) -> Result<Vec<String>, String> {
        let n = self.count(what, 4)?;
        (0..n).map(|_| self.str(what).map(String::from)).collect()
    }

    /// A list of (topic, partition).
    pub fn partitions(&mut self, what: &str) -> Result<Vec<(String, i32)>, String> {
        let n = self.count(what, 8)?;
        (0..n)
            .map(|_| Ok((self.str(what)?.to_string(), self.i32(what)?)))
            .collect()
    }
}

/// Appends a `u32`.
pub fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// Appends an `i32`.
pub fn put_i32(out: &mut Vec<u8>, n: i32) {
    out.extend_from_slice(&n.to_le_bytes());
}

/// Appends a byte string.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len());
    out.extend_from_slice(b);
}

/// Appends a list of strings.
pub fn put_strs<S: AsRef<str>>(out: &mut Vec<u8>, list: &[S]) {
    put_u32(out, list.len());
    for s in list {
        put_bytes(out, s.as_ref().as_bytes());
    }
}

/// Appends a list of (topic, partition).
pub fn put_partitions(out: &mut Vec<u8>, list: &[(String, i32)]) {
    put_u32(out, list.len());
    for (t, p) in list {
        put_bytes(out, t.as_bytes());
        put_i32(out, *p);
    }
}
