//! Dictionary codes a scan hands on beside the columns it decoded.
//!
//! A Parquet column chunk written with a dictionary stores each row as an
//! index into that chunk's dictionary page. The scan still builds the
//! column's Arrow array (every operator reads it), but where a consumer asks
//! for them ([`crate::exec::columnar::MorselInput::with_codes_for`]) it also
//! keeps those indices: two rows of the same chunk with the same code have
//! the same value. A hash aggregation grouping by such columns maps codes to
//! groups through a small array instead of packing, hashing and probing
//! every row's key (db-benchmark q1, `GROUP BY id1` over 100 strings).
//!
//! ```text
//! chunk dictionary: ["id017", "id003", "id042"]      (one per column chunk)
//! rows:   id017  id042  id017  id003  id042
//! codes:  0      2      0      1      2             (what the scan hands on)
//! ```
//!
//! Codes are only handed on for chunks whose every data page is dictionary
//! encoded and which hold no null (a null has no dictionary entry).

use std::sync::Arc;

use arrow::buffer::ScalarBuffer;

/// One column chunk's dictionary, as far as codes need it: its identity
/// (codes of different chunks are compared only through their values) and
/// how many entries it has (every code is below that).
#[derive(Debug)]
pub struct Dictionary {
    entries: usize,
}

impl Dictionary {
    /// A dictionary of `entries` entries, distinct from every other.
    pub fn new(entries: usize) -> Arc<Self> {
        Arc::new(Dictionary { entries })
    }

    /// Number of entries (every code is below it).
    pub fn entries(&self) -> usize {
        self.entries
    }
}

/// The dictionary index of each row of a decoded column.
#[derive(Debug, Clone)]
pub struct DictCodes {
    /// One code per row, each below `dictionary.entries()`.
    pub codes: ScalarBuffer<u32>,
    /// The dictionary the codes index.
    pub dictionary: Arc<Dictionary>,
}

impl DictCodes {
    /// Codes of `len` rows from `offset` (zero-copy), as for a sliced batch.
    pub fn slice(&self, offset: usize, len: usize) -> Self {
        DictCodes {
            codes: self.codes.slice(offset, len),
            dictionary: self.dictionary.clone(),
        }
    }
}
