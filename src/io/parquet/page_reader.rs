//! The pages of one column chunk, read by sloth: page headers parsed from
//! their Thrift compact encoding, payloads decompressed with one zstd
//! context per thread.
//!
//! The parquet crate's `SerializedPageReader` builds a codec per column
//! chunk, and its zstd codec creates both a compression and a
//! decompression context each time (a few hundred KB of tables, set up and
//! torn down). sloth's files have a chunk per column per 128K-row row
//! group, each of one or two pages, so that setup recurs for almost every
//! page: `ZSTD_createCCtx` and `ZSTD_createDCtx` took 2.8% of the samples
//! over the 22 TPC-H queries (`perf record`), more than sloth's own
//! dictionary gathers. Here a thread keeps one decompression context for
//! all the chunks it reads, and no compression context at all. Page
//! statistics in the headers are skipped, not decoded.
//!
//! Chunks compressed otherwise than with zstd (or not at all) still go
//! through `SerializedPageReader` ([`Pages::new`] picks).
//!
//! A page header (parquet.thrift) as read here:
//! ```text
//! PageHeader { 1: type, 2: uncompressed_page_size, 3: compressed_page_size,
//!              4: crc, 5: data_page_header, 7: dictionary_page_header,
//!              8: data_page_header_v2 }            (6, index pages: skipped)
//! DataPageHeader   { 1: num_values, 2: encoding, 3: def_level_encoding,
//!                    4: rep_level_encoding, 5: statistics (skipped) }
//! DictionaryPageHeader { 1: num_values, 2: encoding, 3: is_sorted }
//! DataPageHeaderV2 { 1: num_values, 2: num_nulls, 3: num_rows, 4: encoding,
//!                    5: def_levels_byte_length, 6: rep_levels_byte_length,
//!                    7: is_compressed (default true), 8: statistics }
//! ```

use std::cell::RefCell;
use std::io::Cursor;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::Page;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::serialized_reader::SerializedPageReader;

use super::shared_pages::SharedColumn;

type ReadResult<T> = std::result::Result<T, String>;

/// The pages of a column chunk, from sloth's reader or the parquet crate's.
pub(super) enum Pages {
    Own(ChunkPages),
    Parquet(Box<SerializedPageReader<Bytes>>),
}

impl Pages {
    /// The pages of `chunk` (of a row group of `rows` rows) in `file`;
    /// with `shared`, decompressed pages are shared with the execution's
    /// other scans of the column (sloth's reader only).
    pub(super) fn new(
        file: &Bytes,
        chunk: &ColumnChunkMetaData,
        rows: usize,
        shared: Option<&SharedColumn>,
    ) -> parquet::errors::Result<Self> {
        let codec = match chunk.compression() {
            Compression::UNCOMPRESSED => Some(Codec::None),
            Compression::ZSTD(_) => Some(Codec::Zstd),
            _ => None,
        };
        let Some(range) = chunk_range(file, chunk) else {
            return Err(parquet::errors::ParquetError::General(format!(
                "the footer places the column chunk outside the file (offset {}, {} bytes, in a file of {})",
                chunk
                    .dictionary_page_offset()
                    .unwrap_or_else(|| chunk.data_page_offset()),
                chunk.compressed_size(),
                file.len()
            )));
        };
        match codec {
            Some(codec) => Ok(Pages::Own(ChunkPages {
                file: file.clone(),
                pos: range.start,
                end: range.end,
                codec,
                values_left: chunk.num_values(),
                shared: shared.cloned(),
            })),
            // Other codecs: the parquet crate's reader.
            None => Ok(Pages::Parquet(Box::new(SerializedPageReader::new(
                Arc::new(file.clone()),
                chunk,
                rows,
                None,
            )?))),
        }
    }
}

/// Where `chunk` lies in `file`; `None` where the footer says it lies
/// outside, or at a negative offset or length (read from the footer's
/// numbers, not `byte_range()`, which panics on those).
pub(super) fn chunk_range(file: &Bytes, chunk: &ColumnChunkMetaData) -> Option<Range<usize>> {
    let start = chunk
        .dictionary_page_offset()
        .unwrap_or_else(|| chunk.data_page_offset());
    let start = usize::try_from(start).ok()?;
    let len = usize::try_from(chunk.compressed_size()).ok()?;
    let range = start..start.checked_add(len)?;
    (range.end <= file.len()).then_some(range)
}

impl Iterator for Pages {
    type Item = ReadResult<Page>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Pages::Own(p) => p.next(),
            Pages::Parquet(p) => p.next().map(|r| r.map_err(|e| e.to_string())),
        }
    }
}

/// How a chunk's page payloads are compressed.
#[derive(Debug, Clone, Copy)]
enum Codec {
    None,
    Zstd,
}

/// Pages of one chunk, read from the file's bytes.
pub(super) struct ChunkPages {
    file: Bytes,
    /// Where the next page header starts, and where the chunk ends.
    pos: usize,
    end: usize,
    codec: Codec,
    /// Values of data pages the footer announces and not read yet: the
    /// chunk ends when they are all read, even if bytes are left.
    values_left: i64,
    shared: Option<SharedColumn>,
}

impl Iterator for ChunkPages {
    type Item = ReadResult<Page>;
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.pos >= self.end || self.values_left <= 0 {
                return None;
            }
            match self.read_page() {
                Ok(Some(page)) => return Some(Ok(page)),
                Ok(None) => continue,
                Err(e) => {
                    // One error ends the chunk.
                    self.pos = self.end;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl ChunkPages {
    /// The page at `pos` (`None` for an index page, which is skipped).
    fn read_page(&mut self) -> ReadResult<Option<Page>> {
        let mut header = Compact::new(&self.file[self.pos..self.end]);
        let h = PageHeader::read(&mut header)?;
        let body_at = self.pos + header.pos;
        let compressed = usize::try_from(h.compressed_size).map_err(|_| "negative page size")?;
        let uncompressed =
            usize::try_from(h.uncompressed_size).map_err(|_| "negative page size")?;
        let body_end = body_at
            .checked_add(compressed)
            .filter(|&e| e <= self.end)
            .ok_or("page past the end of its column chunk")?;
        self.pos = body_end;
        let body = self.file.slice(body_at..body_end);
        let Some(mut page) = h.page else {
            return Ok(None);
        };
        // A v2 page's levels lead it uncompressed, and its values may be
        // stored uncompressed too.
        let (levels, compressed) = match &page {
            Page::DataPageV2 {
                def_levels_byte_len,
                rep_levels_byte_len,
                is_compressed,
                ..
            } => (
                *def_levels_byte_len as usize + *rep_levels_byte_len as usize,
                *is_compressed,
            ),
            _ => (0, true),
        };
        if levels > uncompressed || levels > body.len() {
            return Err("page levels longer than the page".into());
        }
        let data = match (compressed, &self.shared) {
            (false, _) => body,
            (true, None) => self.decompress(body, levels, uncompressed)?,
            (true, Some(shared)) => shared.page(&self.file, body_at, || {
                self.decompress(body, levels, uncompressed)
            })?,
        };
        match &mut page {
            Page::DictionaryPage { buf, .. } => *buf = data,
            Page::DataPage { buf, .. } | Page::DataPageV2 { buf, .. } => {
                *buf = data;
                self.values_left -= i64::from(page.num_values());
            }
        }
        Ok(Some(page))
    }

    /// `body` whole, its first `keep` bytes as they are and the rest
    /// decompressed, checked to come to `uncompressed` bytes.
    fn decompress(&self, body: Bytes, keep: usize, uncompressed: usize) -> ReadResult<Bytes> {
        match self.codec {
            Codec::None => Ok(body),
            Codec::Zstd => {
                let mut out = Vec::with_capacity(uncompressed);
                out.extend_from_slice(&body[..keep]);
                if uncompressed > keep {
                    zstd_decompress(&body[keep..], &mut out)?;
                }
                if out.len() != uncompressed {
                    return Err(format!(
                        "page decompressed to {} bytes, its header says {uncompressed}",
                        out.len()
                    ));
                }
                Ok(Bytes::from(out))
            }
        }
    }
}

thread_local! {
    /// The thread's zstd decompression context, made on its first page.
    static ZSTD: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Appends the zstd frame `src` decompressed to `out`, into the capacity
/// `out` has (which must hold all of it).
fn zstd_decompress(src: &[u8], out: &mut Vec<u8>) -> ReadResult<()> {
    ZSTD.with_borrow_mut(|ctx| {
        let ctx = match ctx {
            Some(c) => c,
            None => ctx.insert(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| format!("cannot create a zstd context: {e}"))?,
            ),
        };
        let at = out.len() as u64;
        let mut cursor = Cursor::new(out);
        cursor.set_position(at);
        ctx.decompress_to_buffer(src, &mut cursor)
            .map(drop)
            .map_err(|e| format!("zstd: {e}"))
    })
}

/// What a page header says, as far as decoding needs it.
#[derive(Debug)]
struct PageHeader {
    uncompressed_size: i32,
    compressed_size: i32,
    /// The page with an empty buffer (its body comes next); `None` for an
    /// index page.
    page: Option<Page>,
}

/// Thrift compact protocol types (the low nibble of a field header).
mod ty {
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const BYTE: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
}

/// Nesting deeper than this is refused (a corrupt header could otherwise
/// recurse without end).
const MAX_DEPTH: usize = 16;

/// The integer and boolean fields 1 to 8 of a struct whose other fields
/// are skipped.
type Fields = [Option<i64>; 9];

impl PageHeader {
    fn read(c: &mut Compact) -> ReadResult<Self> {
        let mut top: Fields = [None; 9];
        let (mut v1, mut dict, mut v2) = (None, None, None);
        c.fields(0, |c, id, t| {
            match (id, t) {
                (5, ty::STRUCT) => v1 = Some(c.int_fields()?),
                (7, ty::STRUCT) => dict = Some(c.int_fields()?),
                (8, ty::STRUCT) => v2 = Some(c.int_fields()?),
                (1..=4, _) => top[id as usize] = c.int_value(t)?,
                _ => c.skip(t, 1)?,
            }
            Ok(())
        })?;
        let need = |f: &Fields, id: usize, what: &str| {
            f[id].ok_or_else(|| format!("page header without {what}"))
        };
        let num = |f: &Fields, id: usize, what: &str| {
            u32::try_from(need(f, id, what)?).map_err(|_| format!("page header: bad {what}"))
        };
        let encoding = |f: &Fields, id: usize| encoding(need(f, id, "an encoding")?);
        let page = match need(&top, 1, "a page type")? {
            0 => {
                let h = v1.ok_or("data page without its header")?;
                Some(Page::DataPage {
                    buf: Bytes::new(),
                    num_values: num(&h, 1, "num_values")?,
                    encoding: encoding(&h, 2)?,
                    def_level_encoding: encoding(&h, 3)?,
                    rep_level_encoding: encoding(&h, 4)?,
                    statistics: None,
                })
            }
            1 => None,
            2 => {
                let h = dict.ok_or("dictionary page without its header")?;
                Some(Page::DictionaryPage {
                    buf: Bytes::new(),
                    num_values: num(&h, 1, "num_values")?,
                    encoding: encoding(&h, 2)?,
                    is_sorted: h[3] == Some(1),
                })
            }
            3 => {
                let h = v2.ok_or("data page v2 without its header")?;
                Some(Page::DataPageV2 {
                    buf: Bytes::new(),
                    num_values: num(&h, 1, "num_values")?,
                    num_nulls: num(&h, 2, "num_nulls")?,
                    num_rows: num(&h, 3, "num_rows")?,
                    encoding: encoding(&h, 4)?,
                    def_levels_byte_len: num(&h, 5, "definition levels' length")?,
                    rep_levels_byte_len: num(&h, 6, "repetition levels' length")?,
                    is_compressed: h[7] != Some(0),
                    statistics: None,
                })
            }
            t => return Err(format!("unknown page type {t}")),
        };
        Ok(PageHeader {
            uncompressed_size: need(&top, 2, "its uncompressed size")? as i32,
            compressed_size: need(&top, 3, "its compressed size")? as i32,
            page,
        })
    }
}

/// The Parquet encoding numbered `n` in parquet.thrift.
fn encoding(n: i64) -> ReadResult<Encoding> {
    #[allow(deprecated)]
    Ok(match n {
        0 => Encoding::PLAIN,
        2 => Encoding::PLAIN_DICTIONARY,
        3 => Encoding::RLE,
        4 => Encoding::BIT_PACKED,
        5 => Encoding::DELTA_BINARY_PACKED,
        6 => Encoding::DELTA_LENGTH_BYTE_ARRAY,
        7 => Encoding::DELTA_BYTE_ARRAY,
        8 => Encoding::RLE_DICTIONARY,
        9 => Encoding::BYTE_STREAM_SPLIT,
        _ => return Err(format!("unknown encoding {n}")),
    })
}

/// A reader of Thrift's compact protocol over a byte slice.
struct Compact<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Compact<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Compact { buf, pos: 0 }
    }

    fn byte(&mut self) -> ReadResult<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or("page header past the end of its column chunk")?;
        self.pos += 1;
        Ok(b)
    }

    fn bytes(&mut self, n: usize) -> ReadResult<()> {
        self.pos = self
            .pos
            .checked_add(n)
            .filter(|&p| p <= self.buf.len())
            .ok_or("page header past the end of its column chunk")?;
        Ok(())
    }

    fn varint(&mut self) -> ReadResult<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("page header: varint longer than 64 bits".into())
    }

    fn zigzag(&mut self) -> ReadResult<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// Calls `field(self, id, type)` for each field of the struct that
    /// starts here, which must consume the field's value; stops after the
    /// struct's stop byte.
    fn fields(
        &mut self,
        depth: usize,
        mut field: impl FnMut(&mut Self, i16, u8) -> ReadResult<()>,
    ) -> ReadResult<()> {
        if depth > MAX_DEPTH {
            return Err("page header nested too deeply".into());
        }
        let mut last = 0i16;
        loop {
            let b = self.byte()?;
            if b == 0 {
                return Ok(());
            }
            let (delta, t) = (b >> 4, b & 0x0f);
            last = match delta {
                0 => i16::try_from(self.zigzag()?).map_err(|_| "page header: bad field id")?,
                d => last
                    .checked_add(i16::from(d))
                    .ok_or("page header: bad field id")?,
            };
            field(self, last, t)?;
        }
    }

    /// An integer or boolean field's value (`None` for other types, whose
    /// value is skipped).
    fn int_value(&mut self, t: u8) -> ReadResult<Option<i64>> {
        match t {
            ty::TRUE => Ok(Some(1)),
            ty::FALSE => Ok(Some(0)),
            ty::BYTE => Ok(Some(i64::from(self.byte()? as i8))),
            ty::I16 | ty::I32 | ty::I64 => self.zigzag().map(Some),
            _ => self.skip(t, 1).map(|_| None),
        }
    }

    /// The struct that starts here: its integer and boolean fields 1 to 8.
    fn int_fields(&mut self) -> ReadResult<Fields> {
        let mut f: Fields = [None; 9];
        self.fields(1, |c, id, t| {
            match id {
                1..=8 => f[id as usize] = c.int_value(t)?,
                _ => c.skip(t, 2)?,
            }
            Ok(())
        })?;
        Ok(f)
    }

    /// Skips a value of type `t`.
    fn skip(&mut self, t: u8, depth: usize) -> ReadResult<()> {
        if depth > MAX_DEPTH {
            return Err("page header nested too deeply".into());
        }
        match t {
            ty::TRUE | ty::FALSE => Ok(()),
            ty::BYTE => self.bytes(1),
            ty::I16 | ty::I32 | ty::I64 => self.varint().map(drop),
            ty::DOUBLE => self.bytes(8),
            ty::BINARY => {
                let n = usize::try_from(self.varint()?).map_err(|_| "page header: bad length")?;
                self.bytes(n)
            }
            ty::LIST | ty::SET => {
                let b = self.byte()?;
                let (n, elem) = match b >> 4 {
                    15 => (self.varint()?, b & 0x0f),
                    n => (u64::from(n), b & 0x0f),
                };
                for _ in 0..n {
                    match elem {
                        // Booleans in a list take a byte each.
                        ty::TRUE | ty::FALSE => self.bytes(1)?,
                        _ => self.skip(elem, depth + 1)?,
                    }
                }
                Ok(())
            }
            ty::MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip(kv >> 4, depth + 1)?;
                    self.skip(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            ty::STRUCT => self.fields(depth + 1, |c, _, t| c.skip(t, depth + 1)),
            _ => Err(format!("page header: unknown Thrift type {t}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::record_batch::RecordBatch;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::ZstdLevel;
    use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    /// A file of an int and a string column (nulls in both, a dictionary
    /// for the strings), written with `props`.
    fn file(props: WriterProperties) -> Bytes {
        let n = 50_000;
        let ints: ArrayRef = Arc::new(Int64Array::from_iter(
            (0..n).map(|i| (i % 7 != 0).then_some(i * 31)),
        ));
        let strs: ArrayRef = Arc::new(StringArray::from_iter(
            (0..n).map(|i| (i % 5 != 0).then(|| format!("value-{}", i % 300))),
        ));
        let batch = RecordBatch::try_from_iter([("i", ints), ("s", strs)]).unwrap();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        Bytes::from(out)
    }

    /// Every field of a page but its statistics (which this reader skips).
    fn describe(p: &Page) -> String {
        let rest = match p {
            Page::DataPage {
                def_level_encoding,
                rep_level_encoding,
                ..
            } => format!("{def_level_encoding} {rep_level_encoding}"),
            Page::DataPageV2 {
                num_nulls,
                num_rows,
                def_levels_byte_len,
                rep_levels_byte_len,
                is_compressed,
                ..
            } => format!(
                "{num_nulls} {num_rows} {def_levels_byte_len} {rep_levels_byte_len} {is_compressed}"
            ),
            Page::DictionaryPage { is_sorted, .. } => format!("{is_sorted}"),
        };
        let (kind, n, encoding) = (p.page_type(), p.num_values(), p.encoding());
        format!("{kind:?} {n} {encoding} {rest} {:?}", p.buffer())
    }

    /// Every page of every chunk is the same as the parquet crate's reader
    /// gives (with the codec of `props`).
    fn same_pages_as_parquet(props: WriterProperties) {
        let bytes = file(props);
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let mut pages_seen = 0;
        for rg in reader.metadata().row_groups() {
            for chunk in rg.columns() {
                let rows = rg.num_rows() as usize;
                let ours: Vec<String> = Pages::new(&bytes, chunk, rows, None)
                    .unwrap()
                    .map(|p| describe(&p.unwrap()))
                    .collect();
                let theirs: Vec<String> =
                    SerializedPageReader::new(Arc::new(bytes.clone()), chunk, rows, None)
                        .unwrap()
                        .map(|p| describe(&p.unwrap()))
                        .collect();
                assert_eq!(ours, theirs, "column {}", chunk.column_descr().name());
                pages_seen += ours.len();
            }
        }
        assert!(pages_seen >= 4, "only {pages_seen} pages");
    }

    fn props(version: WriterVersion, compression: Compression) -> WriterProperties {
        WriterProperties::builder()
            .set_writer_version(version)
            .set_compression(compression)
            .set_data_page_row_count_limit(4096)
            .set_write_batch_size(1024)
            .set_statistics_enabled(EnabledStatistics::Page)
            .build()
    }

    #[test]
    fn zstd_pages_v1_and_v2_match_the_parquet_reader() {
        let zstd = Compression::ZSTD(ZstdLevel::try_new(3).unwrap());
        for v in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            same_pages_as_parquet(props(v, zstd));
        }
    }

    #[test]
    fn uncompressed_pages_match_the_parquet_reader() {
        for v in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            same_pages_as_parquet(props(v, Compression::UNCOMPRESSED));
        }
    }

    #[test]
    fn other_codecs_use_the_parquet_reader() {
        let bytes = file(props(WriterVersion::PARQUET_1_0, Compression::SNAPPY));
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let rg = reader.metadata().row_group(0);
        let pages = Pages::new(&bytes, rg.column(0), rg.num_rows() as usize, None).unwrap();
        assert!(matches!(pages, Pages::Parquet(_)));
        same_pages_as_parquet(props(WriterVersion::PARQUET_1_0, Compression::SNAPPY));
    }

    #[test]
    fn corrupt_pages_are_errors_not_panics() {
        let zstd = Compression::ZSTD(ZstdLevel::try_new(1).unwrap());
        let bytes = file(props(WriterVersion::PARQUET_1_0, zstd));
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let rg = reader.metadata().row_group(0);
        let chunk = rg.column(0);
        let (start, len) = chunk.byte_range();
        let (start, len) = (start as usize, len as usize);
        let mut errors = 0;
        // Each byte of the chunk's first 200 overwritten in turn.
        for at in start..start + 200.min(len) {
            for value in [0x00u8, 0xff, 0x15] {
                let mut b = bytes.to_vec();
                b[at] = value;
                let b = Bytes::from(b);
                let pages = Pages::new(&b, chunk, rg.num_rows() as usize, None).unwrap();
                errors += pages.filter(|p| p.is_err()).count();
            }
        }
        assert!(errors > 0);
    }

    #[test]
    fn headers_skip_unknown_fields_lists_and_maps() {
        // A dictionary page header with extra fields (a list of booleans,
        // a map, a nested struct, a binary) around the known ones.
        let header = [
            0x15, 0x04, // 1: type = 2 (dictionary), i32 zigzag
            0x15, 0x20, // 2: uncompressed = 16
            0x15, 0x20, // 3: compressed = 16
            0x39, 0x21, 0x01, 0x02, // 6: a list of two booleans (skipped)
            0x1c, // 7: the dictionary header (a struct)
            0x15, 0x0a, //   1: num_values = 5
            0x15, 0x00, //   2: encoding = 0 (PLAIN)
            0x11, //         3: is_sorted = true
            0x1b, 0x01, 0x55, 0x02, 0x04, //   4: map {1: 2}
            0x18, 0x02, b'h', b'i', //   5: binary "hi"
            0x00, //      end of dictionary header
            0x00, // end of page header
        ];
        let mut c = Compact::new(&header);
        let h = PageHeader::read(&mut c).unwrap();
        assert_eq!(c.pos, header.len());
        assert_eq!((h.uncompressed_size, h.compressed_size), (16, 16));
        assert!(
            matches!(
                h.page,
                Some(Page::DictionaryPage {
                    num_values: 5,
                    encoding: Encoding::PLAIN,
                    is_sorted: true,
                    ..
                })
            ),
            "{h:?}"
        );
        // Cut short anywhere: an error.
        for end in 0..header.len() {
            assert!(PageHeader::read(&mut Compact::new(&header[..end])).is_err());
        }
    }
}
