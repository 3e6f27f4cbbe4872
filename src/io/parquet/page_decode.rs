//! Parquet columns decoded by sloth: flat `INT32`, `INT64`, `FLOAT` and
//! `DOUBLE` columns (integers, dates, decimals, floats), PLAIN or
//! dictionary encoded, and `BYTE_ARRAY` strings whose pages are all
//! dictionary encoded (as views), with or without nulls, read straight into
//! the Arrow array the scan hands on. The pages themselves come from
//! [`super::page_reader`]; everything else
//! (PLAIN strings, nested columns, other encodings, row selections from
//! the page index, late materialization of clustered rows) goes through
//! its Arrow reader as before.
//!
//! The scan (`RowGroupUnit` in `parquet.rs`) decodes the columns its
//! filters read first and then, with the rows that passed, asks [`decode`]
//! for only those rows of the other columns: their indices are still
//! unpacked, but only the selected values are gathered and written.
//!
//! Why: `perf` over the 22 TPC-H queries put 15% of the samples in
//! arrow-rs's `RleDecoder::get_batch_with_dict` and 2% in `coerce_i64`.
//! arrow-rs unpacks dictionary indices into a side buffer, gathers from the
//! dictionary into its record buffer, copies that into the array and, for
//! a decimal stored as `INT64`, widens every row to `i128` in one more
//! pass. Here the dictionary is converted to the target type once (a
//! decimal widened once per distinct value, not once per row), and one
//! loop unpacks each batch of indices and gathers the final values.
//!
//! Layout of what is decoded (Parquet format spec):
//! - a data page v1 is `[def levels: u32 length + RLE][values]` (the levels
//!   only when the column is optional); a v2 page keeps its level lengths in
//!   the header and its levels uncompressed ahead of the values;
//! - PLAIN values are little-endian fixed-width; dictionary-encoded values
//!   are one byte of bit width and then the RLE/bit-packed hybrid of the
//!   indices ([`Hybrid`]), as are definition levels (bit width 1).

use std::sync::Arc;

use arrow::array::builder::make_view;
use arrow::array::{
    ArrayRef, BinaryViewArray, BooleanBufferBuilder, PrimitiveArray, StringViewArray,
};
use arrow::buffer::{Buffer, NullBuffer, ScalarBuffer};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
};
use bytes::Bytes;
use parquet::basic::{Encoding, PageType, Type as Physical};
use parquet::column::page::Page;
use parquet::file::metadata::{ColumnChunkMetaData, RowGroupMetaData};
use parquet::schema::types::SchemaDescriptor;

use super::dict_codes::{DictCodes, Dictionary};
use super::page_reader::Pages;
use super::shared_pages::SharedColumn;
use crate::error::{Result, SlothError};

/// A projected column this module can decode: which leaf of the file, its
/// physical type, and the Arrow type to produce.
#[derive(Debug, Clone)]
pub(super) struct FastColumn {
    leaf: usize,
    physical: Physical,
    data_type: DataType,
    nullable: bool,
    /// Its pages, when other scans of the execution read them too.
    shared: Option<SharedColumn>,
}

impl FastColumn {
    /// The column, its pages shared through `shared`.
    pub(super) fn sharing(self, shared: Option<SharedColumn>) -> Self {
        FastColumn { shared, ..self }
    }
}

/// The column of root `root` as a [`FastColumn`], when it is flat, of a
/// fixed-width physical type whose values the Arrow type `target` holds
/// unchanged (or widened, for decimals), and written with encodings handled
/// here; `None` sends it to the arrow-rs reader.
pub(super) fn fast_column(
    schema: &SchemaDescriptor,
    root: usize,
    target: &DataType,
    row_group: &RowGroupMetaData,
) -> Option<FastColumn> {
    let mut leaves = (0..schema.num_columns()).filter(|&l| schema.get_column_root_idx(l) == root);
    let leaf = leaves.next()?;
    if leaves.next().is_some() {
        return None;
    }
    let descr = schema.column(leaf);
    if descr.max_rep_level() != 0 || descr.max_def_level() > 1 {
        return None;
    }
    let physical = descr.physical_type();
    let fits = match (physical, target) {
        (Physical::INT32, DataType::Int32 | DataType::Date32) => true,
        (Physical::INT64, DataType::Int64) => true,
        (Physical::INT32 | Physical::INT64, DataType::Decimal128(_, scale)) => {
            i32::from(*scale) == descr.type_scale()
        }
        (Physical::FLOAT, DataType::Float32) | (Physical::DOUBLE, DataType::Float64) => true,
        (Physical::BYTE_ARRAY, DataType::Utf8View | DataType::BinaryView) => true,
        _ => false,
    };
    let encodings_known = row_group.column(leaf).encodings().all(|e| {
        matches!(
            e,
            Encoding::PLAIN | Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY | Encoding::RLE
        )
    });
    // Strings only where every data page is dictionary encoded: views of
    // the dictionary gather like fixed-width values, while PLAIN string
    // pages (high-cardinality text, such as TPC-H's comments) decode
    // faster in arrow-rs, which checks UTF-8 for a page at once.
    let strings_ok = physical != Physical::BYTE_ARRAY || all_dictionary(row_group.column(leaf));
    (fits && encodings_known && strings_ok).then(|| FastColumn {
        leaf,
        physical,
        data_type: target.clone(),
        nullable: descr.max_def_level() == 1,
        shared: None,
    })
}

/// Whether the footer says every data page of `chunk` is dictionary
/// encoded (`false` when it does not say).
fn all_dictionary(chunk: &ColumnChunkMetaData) -> bool {
    let dictionary =
        |e: Encoding| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY);
    chunk.dictionary_page_offset().is_some()
        && match (
            chunk.page_encoding_stats_mask(),
            chunk.page_encoding_stats(),
        ) {
            (Some(mask), _) => {
                mask.is_only(Encoding::PLAIN_DICTIONARY) || mask.is_only(Encoding::RLE_DICTIONARY)
            }
            (None, Some(stats)) => stats
                .iter()
                .filter(|s| matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2))
                .all(|s| dictionary(s.encoding)),
            (None, None) => false,
        }
}

/// Decodes `column` of the row group into one array of its rows, or of the
/// rows `selected` names (ascending indices into the row group).
///
/// With a selection, dictionary indices and PLAIN values are still read
/// for every row (the pages are decompressed whole), but only the selected
/// rows are gathered and written: a scan whose filter keeps scattered rows
/// writes its other columns only for those.
pub(super) fn decode(
    file: &Bytes,
    row_group: &RowGroupMetaData,
    column: &FastColumn,
    selected: Option<&[u32]>,
) -> Result<ArrayRef> {
    Ok(decode_with_codes(file, row_group, column, selected, false)?.0)
}

/// As [`decode`]; with `want_codes`, also each decoded row's dictionary
/// index ([`DictCodes`]) where the chunk has them: every data page
/// dictionary encoded, and no null.
pub(super) fn decode_with_codes(
    file: &Bytes,
    row_group: &RowGroupMetaData,
    column: &FastColumn,
    selected: Option<&[u32]>,
    want_codes: bool,
) -> Result<(ArrayRef, Option<DictCodes>)> {
    if let (Some(rows), true) = (selected, column.nullable) {
        // Spreading present values over selected slots is not done here:
        // an optional column decodes whole, then the rows are taken.
        let (all, codes) = decode_with_codes(file, row_group, column, None, want_codes)?;
        let rows = arrow::array::UInt32Array::from(rows.to_vec());
        let codes = codes.map(|c| DictCodes {
            codes: rows.values().iter().map(|&r| c.codes[r as usize]).collect(),
            dictionary: c.dictionary,
        });
        return Ok((arrow::compute::take(&all, &rows, None)?, codes));
    }
    let chunk = row_group.column(column.leaf);
    let rows = row_group.num_rows() as usize;
    let pages = Pages::new(file, chunk, rows, column.shared.as_ref())?;
    let name = chunk.column_descr().name().to_string();
    let corrupt = |msg: String| SlothError::Data(format!("Parquet column '{name}': {msg}"));
    let mut codes = Codes::wanted(want_codes, selected.map_or(rows, <[u32]>::len));
    macro_rules! fixed {
        ($p:ty, $a:ty, $convert:expr) => {{
            let (values, nulls) = read(
                pages,
                column,
                rows,
                selected,
                &mut Fixed::<$p, _>::new($convert),
                &mut codes,
            )
            .map_err(corrupt)?;
            Arc::new(
                PrimitiveArray::<$a>::new(ScalarBuffer::from(values), nulls)
                    .with_data_type(column.data_type.clone()),
            )
        }};
    }
    let out: ArrayRef = match (column.physical, &column.data_type) {
        (Physical::BYTE_ARRAY, data_type) => {
            let utf8 = *data_type == DataType::Utf8View;
            let mut views = Views {
                utf8,
                buffers: vec![],
                long: false,
            };
            let (values, nulls) =
                read(pages, column, rows, selected, &mut views, &mut codes).map_err(corrupt)?;
            if !views.long {
                // Every view is inline; an array without buffers says so
                // to its readers (`packed_keys` packs such keys faster).
                views.buffers.clear();
            }
            let views_buffer = ScalarBuffer::from(values);
            // SAFETY: every view was made by `make_view` from an entry of
            // the buffer it names (`Views::entries`), checked to be UTF-8
            // when the column is `Utf8View`; null slots hold empty views.
            unsafe {
                match utf8 {
                    true => Arc::new(StringViewArray::new_unchecked(
                        views_buffer,
                        views.buffers,
                        nulls,
                    )),
                    false => Arc::new(BinaryViewArray::new_unchecked(
                        views_buffer,
                        views.buffers,
                        nulls,
                    )),
                }
            }
        }
        (Physical::INT32, DataType::Date32) => fixed!(i32, Date32Type, |v| v),
        (Physical::INT32, DataType::Decimal128(..)) => fixed!(i32, Decimal128Type, i128::from),
        (Physical::INT64, DataType::Decimal128(..)) => fixed!(i64, Decimal128Type, i128::from),
        (Physical::INT32, _) => fixed!(i32, Int32Type, |v| v),
        (Physical::INT64, _) => fixed!(i64, Int64Type, |v| v),
        (Physical::FLOAT, _) => fixed!(f32, Float32Type, |v| v),
        _ => fixed!(f64, Float64Type, |v| v),
    };
    let codes = match codes {
        Codes::Collected { codes, entries } if out.null_count() == 0 => Some(DictCodes {
            codes: codes.into(),
            dictionary: Dictionary::new(entries),
        }),
        _ => None,
    };
    Ok((out, codes))
}

/// The dictionary indices [`read`] collects beside the values, while every
/// page it has read was dictionary encoded.
enum Codes {
    /// Not asked for, or not available (a PLAIN page).
    None,
    /// The indices so far, and the dictionary's size.
    Collected { codes: Vec<u32>, entries: usize },
}

impl Codes {
    fn wanted(want: bool, rows: usize) -> Self {
        match want {
            true => Codes::Collected {
                codes: Vec::with_capacity(rows),
                entries: 0,
            },
            false => Codes::None,
        }
    }

    /// Where the indices go, if they are still collected.
    fn sink(&mut self) -> Option<&mut Vec<u32>> {
        match self {
            Codes::Collected { codes, .. } => Some(codes),
            Codes::None => None,
        }
    }
}

/// How a column's values decode: what they become in Arrow, and how its
/// PLAIN pages and its dictionary page (PLAIN too) read.
trait Values {
    /// One value as the Arrow array holds it.
    type Native: Copy + Default;
    /// The `n` PLAIN values at `at` in `page`, as `Native`s appended to
    /// `out`; with `selected` = `(first, rows)`, only the values of `rows`
    /// (ascending row group indices, the page's first value being row
    /// `first`).
    fn plain(
        &mut self,
        page: &Bytes,
        at: usize,
        n: usize,
        selected: Option<(usize, &[u32])>,
        out: &mut Vec<Self::Native>,
    ) -> DecodeResult<()>;
}

/// Fixed-width values: physical `P`, converted to `T` by `F`.
struct Fixed<P, F> {
    convert: F,
    physical: std::marker::PhantomData<P>,
}

impl<P, F> Fixed<P, F> {
    fn new(convert: F) -> Self {
        Fixed {
            convert,
            physical: std::marker::PhantomData,
        }
    }
}

impl<P: Plain, T: Copy + Default, F: Fn(P) -> T> Values for Fixed<P, F> {
    type Native = T;
    fn plain(
        &mut self,
        page: &Bytes,
        at: usize,
        n: usize,
        selected: Option<(usize, &[u32])>,
        out: &mut Vec<T>,
    ) -> DecodeResult<()> {
        let data = &page[at..];
        let bytes = data
            .get(..n * P::WIDTH)
            .ok_or_else(|| format!("{} bytes for {n} PLAIN values", data.len()))?;
        let value = |i: usize| (self.convert)(P::from_le(&bytes[i * P::WIDTH..(i + 1) * P::WIDTH]));
        match selected {
            None => out.extend(
                bytes
                    .chunks_exact(P::WIDTH)
                    .map(|c| (self.convert)(P::from_le(c))),
            ),
            Some((first, rows)) => out.extend(rows.iter().map(|&r| value(r as usize - first))),
        }
        Ok(())
    }
}

/// `BYTE_ARRAY` values as 16-byte views (`Utf8View` / `BinaryView`): each
/// PLAIN page (and the dictionary page) becomes one data buffer of the
/// array, without a copy, and each value a view into it.
struct Views {
    /// Whether values must be UTF-8 (`Utf8View`).
    utf8: bool,
    /// The pages the views point into.
    buffers: Vec<Buffer>,
    /// Whether some value is too long to be inline in its view (over 12
    /// bytes): only then do the views point into `buffers`.
    long: bool,
}

impl Views {
    /// Calls `f(index, view)` for each of the `n` PLAIN values (4-byte
    /// length, then the bytes) at `at` in `page`, which becomes a buffer.
    fn entries(
        &mut self,
        page: &Bytes,
        at: usize,
        n: usize,
        mut f: impl FnMut(usize, u128),
    ) -> DecodeResult<()> {
        let block = u32::try_from(self.buffers.len()).map_err(|_| "too many pages")?;
        let data: &[u8] = page;
        let mut pos = at;
        for i in 0..n {
            let len = data
                .get(pos..pos + 4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
                .ok_or("PLAIN value length past the page's end")?;
            let value = data
                .get(pos + 4..pos + 4 + len)
                .ok_or("PLAIN value past the page's end")?;
            if self.utf8 && std::str::from_utf8(value).is_err() {
                return Err(format!("value {i} is not valid UTF-8"));
            }
            self.long |= len > 12;
            f(i, make_view(value, block, (pos + 4) as u32));
            pos += 4 + len;
        }
        self.buffers.push(Buffer::from(page.clone()));
        Ok(())
    }
}

impl Values for Views {
    type Native = u128;
    fn plain(
        &mut self,
        page: &Bytes,
        at: usize,
        n: usize,
        selected: Option<(usize, &[u32])>,
        out: &mut Vec<u128>,
    ) -> DecodeResult<()> {
        if u32::try_from(page.len()).is_err() {
            return Err("page over 4 GiB".into());
        }
        match selected {
            None => self.entries(page, at, n, |_, v| out.push(v)),
            Some((first, rows)) => {
                let mut rows = rows.iter().map(|&r| r as usize - first).peekable();
                self.entries(page, at, n, |i, v| {
                    if rows.next_if_eq(&i).is_some() {
                        out.push(v);
                    }
                })
            }
        }
    }
}

/// A physical value as PLAIN stores it: little-endian, fixed width.
trait Plain: Copy {
    const WIDTH: usize;
    fn from_le(bytes: &[u8]) -> Self;
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("a value's width of bytes"))
            }
        }
    )*};
}
plain!(i32, i64, f32, f64);

type DecodeResult<T> = std::result::Result<T, String>;

/// Reads every page of a column chunk: `rows` values (or those of the rows
/// `selected`), and their nulls.
fn read<V: Values>(
    pages: Pages,
    column: &FastColumn,
    rows: usize,
    selected: Option<&[u32]>,
    decoder: &mut V,
    codes: &mut Codes,
) -> DecodeResult<(Vec<V::Native>, Option<NullBuffer>)> {
    let mut values: Vec<V::Native> = Vec::with_capacity(selected.map_or(rows, <[u32]>::len));
    // Slots of the pages read so far, and the selected rows not yet reached.
    let mut slot = 0usize;
    let mut pending = selected.unwrap_or(&[]);
    let mut validity = column.nullable.then(|| BooleanBufferBuilder::new(rows));
    let mut dictionary: Option<Vec<V::Native>> = None;
    // Values of a page with nulls, before they are spread over its slots.
    let mut dense: Vec<V::Native> = Vec::new();
    for page in pages {
        let page = page?;
        let (buf, slots, encoding, levels, values_at) = match &page {
            Page::DictionaryPage {
                buf,
                num_values,
                encoding,
                ..
            } => {
                if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
                    return Err(format!("dictionary page encoded as {encoding}"));
                }
                let n = *num_values as usize;
                let mut dict = Vec::with_capacity(n);
                decoder.plain(buf, 0, n, None, &mut dict)?;
                dictionary = Some(dict);
                if let Codes::Collected { entries, .. } = codes {
                    *entries = n;
                }
                continue;
            }
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                ..
            } => {
                let slots = *num_values as usize;
                if validity.is_some() {
                    if *def_level_encoding != Encoding::RLE {
                        return Err(format!("definition levels encoded as {def_level_encoding}"));
                    }
                    let len = buf
                        .get(..4)
                        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
                        .ok_or("data page shorter than its level length")?;
                    let levels = buf.get(4..4 + len).ok_or("levels past the page's end")?;
                    (buf, slots, *encoding, Some(levels), 4 + len)
                } else {
                    (buf, slots, *encoding, None, 0)
                }
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                if *rep_levels_byte_len != 0 {
                    return Err("repetition levels in a flat column".into());
                }
                let len = *def_levels_byte_len as usize;
                let levels = buf.get(..len).ok_or("levels past the page's end")?;
                let slots = *num_values as usize;
                (
                    buf,
                    slots,
                    *encoding,
                    validity.is_some().then_some(levels),
                    len,
                )
            }
        };
        if slot + slots > rows {
            return Err(format!("more values than the row group's {rows} rows"));
        }
        let data = buf.get(values_at..).ok_or("values past the page's end")?;
        let page_start = slot;
        slot += slots;
        if selected.is_some() {
            // Selections only reach here for required columns (no levels).
            let here = pending.partition_point(|&r| (r as usize) < slot);
            let (rows_here, rest) = pending.split_at(here);
            pending = rest;
            match encoding {
                Encoding::PLAIN => {
                    *codes = Codes::None;
                    decoder.plain(
                        buf,
                        values_at,
                        slots,
                        Some((page_start, rows_here)),
                        &mut values,
                    )?
                }
                Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                    let (dict, width, indices) = dictionary_indices(&dictionary, data)?;
                    if !rows_here.is_empty() {
                        let sink = Sink::new(&mut values, codes.sink());
                        let page = (slots, page_start);
                        gather_selected(indices, width, page, rows_here, dict, sink)?;
                    }
                }
                other => return Err(format!("data page encoded as {other}")),
            }
            continue;
        }
        let (present, target) = match (levels, validity.as_mut()) {
            (Some(levels), Some(validity)) => {
                let present = definition_levels(levels, slots, validity)?;
                if present == slots {
                    (slots, &mut values)
                } else {
                    dense.clear();
                    (present, &mut dense)
                }
            }
            _ => (slots, &mut values),
        };
        if present < slots {
            // A null has no dictionary index.
            *codes = Codes::None;
        }
        match encoding {
            Encoding::PLAIN => {
                *codes = Codes::None;
                decoder.plain(buf, values_at, present, None, target)?
            }
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                let (dict, width, indices) = dictionary_indices(&dictionary, data)?;
                if present > 0 {
                    gather(
                        indices,
                        width,
                        present,
                        dict,
                        Sink::new(target, codes.sink()),
                    )?;
                }
            }
            other => return Err(format!("data page encoded as {other}")),
        }
        if present < slots {
            let validity = validity.as_ref().expect("levels imply validity");
            let bits = validity.as_slice();
            let first = validity.len() - slots;
            let mut next = dense.iter();
            values.extend((first..first + slots).map(|i| {
                if bits[i / 8] >> (i % 8) & 1 == 1 {
                    *next.next().expect("one value per present slot")
                } else {
                    V::Native::default()
                }
            }));
        }
    }
    if slot != rows || values.len() != selected.map_or(rows, <[u32]>::len) {
        return Err(format!("{slot} values for the row group's {rows} rows"));
    }
    let nulls = validity
        .map(|mut v| NullBuffer::new(v.finish()))
        .filter(|n| n.null_count() > 0);
    Ok((values, nulls))
}

/// Decodes `slots` definition levels (0 null, 1 present) into `validity`;
/// returns how many are present.
fn definition_levels(
    levels: &[u8],
    slots: usize,
    validity: &mut BooleanBufferBuilder,
) -> DecodeResult<usize> {
    struct Levels<'a> {
        validity: &'a mut BooleanBufferBuilder,
        present: usize,
    }
    impl Runs for Levels<'_> {
        fn repeated(&mut self, value: u32, len: usize) {
            self.validity.append_n(len, value == 1);
            self.present += if value == 1 { len } else { 0 };
        }
        fn packed(&mut self, levels: &[u32]) {
            for &l in levels {
                self.validity.append(l == 1);
            }
            self.present += levels.iter().filter(|&&l| l == 1).count();
        }
    }
    let mut sink = Levels {
        validity,
        present: 0,
    };
    Hybrid::new(levels, 1)?.decode(slots, &mut sink)?;
    Ok(sink.present)
}

/// Where gathered dictionary entries go, and their indices where
/// [`Codes`] are collected.
struct Sink<'a, T> {
    out: &'a mut Vec<T>,
    codes: Option<&'a mut Vec<u32>>,
}

impl<'a, T: Copy> Sink<'a, T> {
    fn new(out: &'a mut Vec<T>, codes: Option<&'a mut Vec<u32>>) -> Self {
        Sink { out, codes }
    }

    #[inline]
    fn repeat(&mut self, v: T, i: u32, n: usize) {
        self.out.extend(std::iter::repeat_n(v, n));
        if let Some(c) = &mut self.codes {
            c.extend(std::iter::repeat_n(i, n));
        }
    }
}

/// Appends the dictionary entries of `n` hybrid-encoded indices to `sink`.
fn gather<T: Copy>(
    indices: &[u8],
    width: u32,
    n: usize,
    dict: &[T],
    sink: Sink<'_, T>,
) -> DecodeResult<()> {
    struct Gather<'a, T> {
        dict: &'a [T],
        sink: Sink<'a, T>,
        bad_index: Option<u32>,
    }
    impl<T: Copy> Runs for Gather<'_, T> {
        fn repeated(&mut self, i: u32, len: usize) {
            match self.dict.get(i as usize) {
                Some(&v) => self.sink.repeat(v, i, len),
                None => self.bad_index = Some(i),
            }
        }
        fn packed(&mut self, idx: &[u32]) {
            // One max over the batch, then unchecked loads: a bounds check
            // per index would stop the loop from vectorizing.
            let max = idx.iter().fold(0u32, |m, &i| m.max(i));
            if max as usize >= self.dict.len() {
                self.bad_index = Some(max);
                return;
            }
            let dict = self.dict;
            // SAFETY: every index is at most `max`, checked against the
            // dictionary's length above.
            self.sink.out.extend(
                idx.iter()
                    .map(|&i| unsafe { *dict.get_unchecked(i as usize) }),
            );
            if let Some(c) = &mut self.sink.codes {
                c.extend_from_slice(idx);
            }
        }
    }
    let mut g = Gather {
        dict,
        sink,
        bad_index: None,
    };
    Hybrid::new(indices, width)?.decode(n, &mut g)?;
    index_in_range(g.bad_index, dict.len())
}

/// As [`gather`] for the indices of a page of `slots` values starting at
/// row `first` (`page`), appending only the entries of the rows `selected`
/// (ascending, all within the page).
fn gather_selected<T: Copy>(
    indices: &[u8],
    width: u32,
    (slots, first): (usize, usize),
    selected: &[u32],
    dict: &[T],
    sink: Sink<'_, T>,
) -> DecodeResult<()> {
    struct Select<'a, T> {
        dict: &'a [T],
        sink: Sink<'a, T>,
        /// Selected rows not yet reached, and the row of the next index.
        selected: &'a [u32],
        row: usize,
        bad_index: Option<u32>,
    }
    impl<'a, T: Copy> Select<'a, T> {
        /// The selected rows among the next `n`, and the row they count
        /// from; advances past them.
        fn advance(&mut self, n: usize) -> (&'a [u32], usize) {
            let (selected, row) = (self.selected, self.row);
            let k = selected.partition_point(|&r| (r as usize) < row + n);
            self.selected = &selected[k..];
            self.row = row + n;
            (&selected[..k], row)
        }
    }
    impl<T: Copy> Runs for Select<'_, T> {
        fn repeated(&mut self, i: u32, len: usize) {
            let n = self.advance(len).0.len();
            if n > 0 {
                match self.dict.get(i as usize) {
                    Some(&v) => self.sink.repeat(v, i, n),
                    None => self.bad_index = Some(i),
                }
            }
        }
        fn packed(&mut self, idx: &[u32]) {
            let (here, row) = self.advance(idx.len());
            let dict = self.dict;
            for &r in here {
                let i = idx[r as usize - row];
                match dict.get(i as usize) {
                    Some(&v) => self.sink.repeat(v, i, 1),
                    None => self.bad_index = Some(i),
                }
            }
        }
    }
    let mut s = Select {
        dict,
        sink,
        selected,
        row: first,
        bad_index: None,
    };
    Hybrid::new(indices, width)?.decode(slots, &mut s)?;
    index_in_range(s.bad_index, dict.len())
}

/// The dictionary read so far, and the bit width and hybrid-encoded
/// indices of a dictionary-encoded page's values `data`.
fn dictionary_indices<'a, T>(
    dictionary: &'a Option<Vec<T>>,
    data: &'a [u8],
) -> DecodeResult<(&'a [T], u32, &'a [u8])> {
    let dict = dictionary
        .as_deref()
        .ok_or("dictionary-encoded page without a dictionary")?;
    let (width, indices) = data
        .split_first()
        .map_or((0, &[][..]), |(&w, rest)| (u32::from(w), rest));
    Ok((dict, width, indices))
}

/// An error naming the dictionary index that was out of range, if any.
fn index_in_range(bad_index: Option<u32>, entries: usize) -> DecodeResult<()> {
    match bad_index {
        Some(i) => Err(format!(
            "dictionary index {i} out of range for {entries} entries"
        )),
        None => Ok(()),
    }
}

/// What receives the values [`Hybrid::decode`] decodes.
trait Runs {
    /// `len` repeats of `value`.
    fn repeated(&mut self, value: u32, len: usize);
    /// Bit-packed values, up to [`UNPACK_BATCH`] at a time.
    fn packed(&mut self, values: &[u32]);
}

/// Indices unpacked per call of the bit-packed callback.
const UNPACK_BATCH: usize = 1024;

/// Parquet's RLE / bit-packed hybrid encoding of small integers: runs, each
/// a ULEB128 header whose low bit says whether `header >> 1` repeats of one
/// value follow (in `ceil(width / 8)` bytes), or `header >> 1` groups of 8
/// values packed in `width` bits each, least significant bit first.
struct Hybrid<'a> {
    data: &'a [u8],
    pos: usize,
    width: u32,
}

impl<'a> Hybrid<'a> {
    fn new(data: &'a [u8], width: u32) -> DecodeResult<Self> {
        if width > 32 {
            return Err(format!("bit width {width} over 32"));
        }
        Ok(Hybrid {
            data,
            pos: 0,
            width,
        })
    }

    fn uleb128(&mut self) -> DecodeResult<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.pos).ok_or("run header past the end")?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("run header over 64 bits".into())
    }

    /// Decodes `n` values into `sink`.
    fn decode(mut self, n: usize, sink: &mut impl Runs) -> DecodeResult<()> {
        let mut buf = [0u32; UNPACK_BATCH];
        let mut left = n;
        let value_bytes = self.width.div_ceil(8) as usize;
        while left > 0 {
            let header = self.uleb128()?;
            if header & 1 == 0 {
                let len = (header >> 1) as usize;
                let bytes = self
                    .data
                    .get(self.pos..self.pos + value_bytes)
                    .ok_or("repeated value past the end")?;
                self.pos += value_bytes;
                let mut le = [0u8; 4];
                le[..value_bytes].copy_from_slice(bytes);
                let value = u32::from_le_bytes(le);
                if len == 0 {
                    return Err("empty run".into());
                }
                let len = len.min(left);
                sink.repeated(value, len);
                left -= len;
            } else {
                let groups = (header >> 1) as usize;
                if groups == 0 {
                    return Err("empty bit-packed run".into());
                }
                let count = (groups * 8).min(left);
                // Writers may cut the last run short of its groups' bytes.
                let run_bytes = (groups * self.width as usize).min(self.data.len() - self.pos);
                let bits = &self.data[self.pos..self.pos + run_bytes];
                if (count * self.width as usize).div_ceil(8) > bits.len() {
                    return Err("bit-packed run past the end".into());
                }
                let mut done = 0;
                while done < count {
                    let k = (count - done).min(UNPACK_BATCH);
                    unpack(bits, done, self.width, &mut buf[..k]);
                    sink.packed(&buf[..k]);
                    done += k;
                }
                self.pos += run_bytes;
                left -= count;
            }
        }
        Ok(())
    }
}

/// Unpacks `out.len()` values of `width` bits from `bits`, starting at value
/// `first` (a multiple of 8); bytes missing at the end of `bits` (a last
/// run cut short) read as zeros.
fn unpack(bits: &[u8], first: usize, width: u32, out: &mut [u32]) {
    debug_assert_eq!(first % 8, 0);
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                0 => out.fill(0),
                $($w => unpack_width::<$w>(bits, first / 8, out),)*
                _ => unreachable!("bit widths are checked to be at most 32"),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
}

/// [`unpack`] for one bit width: 8 values fill exactly `W` bytes, so each
/// group of 8 is a fixed-size copy and eight loads at offsets and shifts the
/// compiler knows.
#[inline(always)]
fn unpack_width<const W: usize>(bits: &[u8], first_group: usize, out: &mut [u32]) {
    let done = out.len() / 8;
    let mut groups = out.chunks_exact_mut(8);
    for (g, out) in groups.by_ref().enumerate() {
        out.copy_from_slice(&unpack_group::<W>(bits, (first_group + g) * W));
    }
    let rest = groups.into_remainder();
    if !rest.is_empty() {
        let last = unpack_group::<W>(bits, (first_group + done) * W);
        rest.copy_from_slice(&last[..rest.len()]);
    }
}

/// The 8 values of `W` bits packed in the `W` bytes at `start` of `bits`.
#[inline(always)]
fn unpack_group<const W: usize>(bits: &[u8], start: usize) -> [u32; 8] {
    // A value starts at most 7 bits into its byte and is at most 32 bits
    // wide, so 8 bytes from its first byte hold it: with 8 bytes after the
    // group, every load reads `bits` in place. The last groups of a run
    // are copied into a zero-padded buffer first (copying every group
    // instead stalled each load on the copy's store: 54% of the samples of
    // a 4-bit column).
    match bits.get(start..start + W + 8) {
        Some(b) => group_values::<W>(b),
        None => {
            let mut padded = [0u8; 40];
            let tail = bits.get(start..).unwrap_or(&[]);
            let n = tail.len().min(W);
            padded[..n].copy_from_slice(&tail[..n]);
            group_values::<W>(&padded[..W + 8])
        }
    }
}

/// The 8 values of `W` bits at the start of `b` (`W + 8` bytes long).
#[inline(always)]
fn group_values<const W: usize>(b: &[u8]) -> [u32; 8] {
    let mask = ((1u64 << W) - 1) as u32;
    std::array::from_fn(|k| {
        let bit = k * W;
        let word = u64::from_le_bytes(b[bit / 8..bit / 8 + 8].try_into().expect("8 bytes"));
        (word >> (bit % 8)) as u32 & mask
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        Array, ArrayRef, Date32Array, Decimal128Array, Float32Array, Float64Array, Int32Array,
        Int64Array, StringArray,
    };
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::basic::Compression;
    use parquet::file::properties::{WriterProperties, WriterVersion};

    use super::*;

    /// Xorshift64: deterministic test values without the `datagen` feature.
    struct XorShift(u64);
    impl XorShift {
        fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Bit-packs `values` in `width` bits, LSB first, as Parquet does.
    fn pack(values: &[u32], width: u32) -> Vec<u8> {
        let mut out = vec![0u8; (values.len() * width as usize).div_ceil(8)];
        for (i, &v) in values.iter().enumerate() {
            for b in 0..width as usize {
                if v >> b & 1 == 1 {
                    let bit = i * width as usize + b;
                    out[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        out
    }

    #[test]
    fn unpack_reads_every_width_up_to_32_bits() {
        let mut rng = XorShift(7);
        for width in 0..=32u32 {
            let mask = ((1u64 << width) - 1) as u32;
            let values: Vec<u32> = (0..77).map(|_| rng.next_u64() as u32 & mask).collect();
            let bits = pack(&values, width);
            let mut out = vec![0u32; values.len() - 16];
            unpack(&bits, 16, width, &mut out);
            assert_eq!(out, values[16..], "width {width}");
            // A run cut short reads the missing values as zeros.
            let short = &bits[..bits.len() - (width as usize).div_ceil(8).min(bits.len())];
            let mut out = vec![0u32; values.len()];
            unpack(short, 0, width, &mut out);
            assert_eq!(out[..64], values[..64], "width {width}");
        }
    }

    #[test]
    fn hybrid_mixes_repeated_and_packed_runs_and_rejects_bad_input() {
        // A run of 5 sevens, then one packed group of 8 values in 3 bits.
        let packed_vals = [0u32, 1, 2, 3, 4, 5, 6, 7];
        let mut data = vec![5 << 1, 7];
        data.push((1 << 1) | 1);
        data.extend(pack(&packed_vals, 3));
        #[derive(Default)]
        struct Collect {
            runs: Vec<(u32, usize)>,
            packed: Vec<u32>,
        }
        impl Runs for Collect {
            fn repeated(&mut self, v: u32, n: usize) {
                self.runs.push((v, n));
            }
            fn packed(&mut self, p: &[u32]) {
                self.packed.extend_from_slice(p);
            }
        }
        let mut c = Collect::default();
        Hybrid::new(&data, 3).unwrap().decode(13, &mut c).unwrap();
        assert_eq!(c.runs, vec![(7, 5)]);
        assert_eq!(c.packed, packed_vals);
        // Asking for more values than are encoded is an error, not a hang.
        let mut c = Collect::default();
        assert!(Hybrid::new(&data, 3).unwrap().decode(20, &mut c).is_err());
        assert!(Hybrid::new(&[0], 3).unwrap().decode(1, &mut c).is_err());
        assert!(Hybrid::new(&data, 33).is_err());
        // An index past the dictionary is an error.
        let mut out = vec![];
        let dict = [10i64, 11, 12, 13, 14, 15, 16];
        let err = gather(&data, 3, 13, &dict, Sink::new(&mut out, None)).unwrap_err();
        assert!(err.contains("out of range"), "{err}");
    }

    /// The columns of `batch` read by [`decode`] and by arrow-rs.
    fn both_readers(batch: &RecordBatch, props: WriterProperties) -> Vec<(ArrayRef, ArrayRef)> {
        let mut file = Vec::new();
        let mut w = ArrowWriter::try_new(&mut file, batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        let file = Bytes::from(file);
        let builder = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
        let metadata = builder.metadata().clone();
        let schema = builder.schema().clone();
        let mut reference: Vec<Vec<ArrayRef>> = vec![vec![]; schema.fields().len()];
        for b in builder.build().unwrap() {
            for (i, c) in b.unwrap().columns().iter().enumerate() {
                reference[i].push(c.clone());
            }
        }
        let descr = metadata.file_metadata().schema_descr();
        let mut pairs = vec![];
        for (i, field) in schema.fields().iter().enumerate() {
            let mut ours = vec![];
            for rg in metadata.row_groups() {
                // Strings are read as views, as the scans read them.
                let target = match field.data_type() {
                    DataType::Utf8 => DataType::Utf8View,
                    t => t.clone(),
                };
                let Some(fast) = fast_column(descr, i, &target, rg) else {
                    continue;
                };
                let whole = decode(&file, rg, &fast, None).unwrap();
                // A selection (scattered rows, a run, the last row) gives
                // the rows the whole column has there.
                let n = rg.num_rows() as u32;
                let selected: Vec<u32> = (0..n)
                    .filter(|r| r % 7 == 2 || (100..700).contains(r) || *r == n - 1)
                    .collect();
                let picked = decode(&file, rg, &fast, Some(&selected)).unwrap();
                let taken =
                    arrow::compute::take(&whole, &arrow::array::UInt32Array::from(selected), None)
                        .unwrap();
                assert_eq!(picked.to_data(), taken.to_data(), "{field}");
                ours.push(whole);
            }
            if ours.is_empty() {
                continue;
            }
            let concat = |parts: &[ArrayRef]| {
                arrow::compute::concat(&parts.iter().map(|a| a.as_ref()).collect::<Vec<_>>())
                    .unwrap()
            };
            let reference = concat(&reference[i]);
            let reference = arrow::compute::cast(&reference, ours[0].data_type()).unwrap();
            pairs.push((concat(&ours), reference));
        }
        pairs
    }

    fn random_batch(rows: usize, distinct: u64, null_every: usize) -> RecordBatch {
        let mut rng = XorShift(42);
        let mut next = || rng.next_u64() % distinct;
        let nulls = |i: usize| null_every > 0 && i.is_multiple_of(null_every);
        let ints: Vec<Option<i64>> = (0..rows)
            .map(|i| (!nulls(i)).then(|| next() as i64 - 40))
            .collect();
        let i32s = Int32Array::from_iter(ints.iter().map(|v| v.map(|v| v as i32)));
        let i64s = Int64Array::from_iter(ints.iter().map(|v| v.map(|v| v * 1_000_000_007)));
        let dates = Date32Array::from_iter(ints.iter().map(|v| v.map(|v| 9000 + v as i32)));
        let dec64 = Decimal128Array::from_iter(ints.iter().map(|v| v.map(|v| v as i128 * 101)))
            .with_precision_and_scale(15, 2)
            .unwrap();
        let dec32 = Decimal128Array::from_iter(ints.iter().map(|v| v.map(|v| v as i128 * 3)))
            .with_precision_and_scale(9, 3)
            .unwrap();
        let f32s = Float32Array::from_iter(ints.iter().map(|v| v.map(|v| v as f32 / 4.0)));
        let f64s = Float64Array::from_iter(ints.iter().map(|v| v.map(|v| v as f64 / 8.0)));
        let strings = StringArray::from_iter(ints.iter().map(|v| v.map(|v| format!("s{v}"))));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(i32s),
            Arc::new(i64s),
            Arc::new(dates),
            Arc::new(dec64),
            Arc::new(dec32),
            Arc::new(f32s),
            Arc::new(f64s),
            Arc::new(strings),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), null_every > 0))
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    #[test]
    fn decoded_columns_equal_arrow_rs_for_every_type_encoding_and_page_version() {
        for (distinct, null_every) in [(7, 0), (7, 5), (100_000, 0), (100_000, 11), (3, 1)] {
            let batch = random_batch(20_000, distinct, null_every);
            for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
                for (dictionary, compression) in [
                    (true, Compression::ZSTD(Default::default())),
                    (true, Compression::UNCOMPRESSED),
                    (false, Compression::SNAPPY),
                ] {
                    // Small pages, row groups and dictionary pages: many
                    // pages per chunk, and a dictionary that falls back to
                    // PLAIN part way through a chunk.
                    let props = WriterProperties::builder()
                        .set_writer_version(version)
                        .set_dictionary_enabled(dictionary)
                        .set_compression(compression)
                        .set_dictionary_page_size_limit(4096)
                        .set_data_page_size_limit(2048)
                        .set_write_batch_size(512)
                        .set_max_row_group_row_count(Some(7_000))
                        .build();
                    let pairs = both_readers(&batch, props);
                    // Integers and strings are left to arrow-rs where a v2
                    // writer falls back from a full dictionary to DELTA
                    // encodings.
                    // Strings only where every page is dictionary encoded.
                    let expected = match (version, dictionary && distinct < 1000) {
                        (WriterVersion::PARQUET_2_0, false) => 2,
                        (_, false) => 7,
                        (_, true) => 8,
                    };
                    assert_eq!(pairs.len(), expected, "{version:?} {dictionary} {distinct}");
                    for (ours, theirs) in pairs {
                        assert_eq!(
                            ours.to_data(),
                            theirs.to_data(),
                            "{distinct} distinct, nulls every {null_every}, {version:?}, \
                             dictionary {dictionary}, {compression}"
                        );
                        assert_eq!(ours.null_count(), theirs.null_count());
                    }
                }
            }
        }
    }

    /// Writes `batch` with small dictionary-encoded pages and row groups.
    fn small_pages(batch: &RecordBatch) -> Bytes {
        let props = WriterProperties::builder()
            .set_dictionary_page_size_limit(4096)
            .set_data_page_size_limit(2048)
            .set_write_batch_size(512)
            .set_max_row_group_row_count(Some(7_000))
            .build();
        let mut file = Vec::new();
        let mut w = ArrowWriter::try_new(&mut file, batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        Bytes::from(file)
    }

    #[test]
    fn codes_index_the_chunk_dictionary_and_exist_only_without_nulls_or_plain_pages() {
        for (distinct, null_every, with_codes) in [(7, 0, 8), (7, 5, 0), (100_000, 0, 0)] {
            let file = small_pages(&random_batch(20_000, distinct, null_every));
            let builder = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
            let metadata = builder.metadata().clone();
            let schema = builder.schema().clone();
            let descr = metadata.file_metadata().schema_descr();
            let mut found = 0;
            for rg in metadata.row_groups() {
                for (i, field) in schema.fields().iter().enumerate() {
                    let target = match field.data_type() {
                        DataType::Utf8 => DataType::Utf8View,
                        t => t.clone(),
                    };
                    let Some(fast) = fast_column(descr, i, &target, rg) else {
                        continue;
                    };
                    let (values, codes) = decode_with_codes(&file, rg, &fast, None, true).unwrap();
                    let Some(codes) = codes else { continue };
                    found += 1;
                    assert_eq!(codes.codes.len(), values.len());
                    // Same code, same value; another code, another value.
                    let entries = codes.dictionary.entries();
                    let mut first = vec![None; entries];
                    for (r, &c) in codes.codes.iter().enumerate() {
                        first[c as usize].get_or_insert(r as u32);
                    }
                    let firsts: Vec<u32> = codes
                        .codes
                        .iter()
                        .map(|&c| first[c as usize].unwrap())
                        .collect();
                    let idx = arrow::array::UInt32Array::from(firsts);
                    let by_code = arrow::compute::take(&values, &idx, None).unwrap();
                    assert_eq!(by_code.to_data(), values.to_data(), "{field}");
                    let shown: std::collections::HashSet<String> = (first.iter().flatten())
                        .map(|&r| {
                            arrow::util::display::array_value_to_string(&values, r as usize)
                                .unwrap()
                        })
                        .collect();
                    assert_eq!(shown.len(), first.iter().flatten().count(), "{field}");
                    // A selection gives the whole column's codes there.
                    let selected: Vec<u32> =
                        (0..values.len() as u32).filter(|r| r % 3 == 1).collect();
                    let (_, picked) =
                        decode_with_codes(&file, rg, &fast, Some(&selected), true).unwrap();
                    let picked = picked.expect("codes of a selection");
                    let expected: Vec<u32> =
                        selected.iter().map(|&r| codes.codes[r as usize]).collect();
                    assert_eq!(picked.codes.to_vec(), expected);
                }
            }
            let row_groups = metadata.num_row_groups();
            assert_eq!(
                found,
                with_codes * row_groups,
                "{distinct} distinct, nulls every {null_every}"
            );
        }
    }
}
