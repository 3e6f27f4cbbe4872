//! Dates and timestamps written in a file's own format (DuckDB's
//! `dateformat` and `timestampformat`, in strftime codes: `%d/%m/%Y`,
//! `%m/%d/%Y %I:%M %p`).
//!
//! arrow-csv reads ISO dates only. With a format set, the file's date and
//! timestamp columns are read as text and parsed here, each value in the
//! format or else in ISO form (so a column arrow inferred as an ISO date
//! still reads). Inference makes a text column a date (or a timestamp)
//! when every value of the sample is one in the format.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Date32Array, StringArray};
use arrow::datatypes::{DataType, Date32Type, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;
use chrono::format::{Item, Parsed, StrftimeItems, parse};
use chrono::{NaiveDate, NaiveDateTime};

use super::CsvOptions;

/// A strftime format, its codes parsed once rather than for every value.
#[derive(Debug)]
struct Pattern<'a> {
    text: &'a str,
    items: Vec<Item<'a>>,
}

impl<'a> Pattern<'a> {
    fn new(text: &'a str) -> Self {
        Pattern {
            text,
            items: StrftimeItems::new(text).collect(),
        }
    }

    fn fields(&self, value: &str) -> Option<Parsed> {
        let mut parsed = Parsed::new();
        parse(&mut parsed, value, self.items.iter()).ok()?;
        Some(parsed)
    }

    fn date(&self, value: &str) -> Option<NaiveDate> {
        self.fields(value)?.to_naive_date().ok()
    }

    /// A timestamp; a format of date codes alone reads midnight.
    fn timestamp(&self, value: &str) -> Option<NaiveDateTime> {
        let fields = self.fields(value)?;
        fields
            .to_naive_datetime_with_offset(0)
            .ok()
            .or_else(|| fields.to_naive_date().ok()?.and_hms_opt(0, 0, 0))
    }
}

/// The date and timestamp formats of one read, and the ISO forms read
/// besides them.
#[derive(Debug)]
pub(super) struct Formats<'a> {
    date: Option<Pattern<'a>>,
    timestamp: Option<Pattern<'a>>,
    iso_date: Pattern<'static>,
    iso_timestamps: [Pattern<'static>; 3],
}

impl<'a> Formats<'a> {
    pub(super) fn of(options: &'a CsvOptions) -> Self {
        Formats {
            date: options.date_format.as_deref().map(Pattern::new),
            timestamp: options.timestamp_format.as_deref().map(Pattern::new),
            iso_date: Pattern::new("%Y-%m-%d"),
            iso_timestamps: ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d"]
                .map(Pattern::new),
        }
    }

    /// Whether no format is set (arrow-csv reads every column itself).
    pub(super) fn is_empty(&self) -> bool {
        self.date.is_none() && self.timestamp.is_none()
    }

    /// Whether a column of type `t` is read as text and parsed here.
    pub(super) fn parses(&self, t: &DataType) -> bool {
        match t {
            DataType::Date32 => self.date.is_some(),
            DataType::Timestamp(_, None) => self.timestamp.is_some(),
            _ => false,
        }
    }

    fn date(&self, text: &str) -> Option<i32> {
        let text = text.trim();
        let day = (self.date.as_ref())
            .and_then(|f| f.date(text))
            .or_else(|| self.iso_date.date(text))?;
        Some(Date32Type::from_naive_date(day))
    }

    fn timestamp(&self, text: &str) -> Option<NaiveDateTime> {
        let text = text.trim();
        (self.timestamp.as_ref())
            .and_then(|f| f.timestamp(text))
            .or_else(|| self.iso_timestamps.iter().find_map(|f| f.timestamp(text)))
    }

    /// The type a text column takes when every sampled value in `sample`
    /// is a date (else a timestamp) in the formats; `None` when not, or
    /// when it holds no value at all.
    pub(super) fn inferred_type(&self, sample: &StringArray) -> Option<DataType> {
        let values = || sample.iter().flatten().filter(|v| !v.trim().is_empty());
        values().next()?;
        let all_in = |format: &Option<Pattern>, parses: &dyn Fn(&str) -> bool| {
            format.is_some() && values().all(parses)
        };
        if all_in(&self.date, &|v| self.date(v).is_some()) {
            Some(DataType::Date32)
        } else if all_in(&self.timestamp, &|v| self.timestamp(v).is_some()) {
            Some(DataType::Timestamp(TimeUnit::Microsecond, None))
        } else {
            None
        }
    }

    /// `text` parsed as `to` (a type [`Formats::parses`]); the error names
    /// the first value that does not parse and its row in `text`.
    fn parse_column(&self, text: &StringArray, to: &DataType) -> Result<ArrayRef, (usize, String)> {
        let bad = |row: usize| {
            let format = match to {
                DataType::Date32 => format!("dateformat '{}'", text_of(&self.date)),
                _ => format!("timestampformat '{}'", text_of(&self.timestamp)),
            };
            (
                row,
                format!("'{}' does not match {format}", text.value(row)),
            )
        };
        let present = |row: usize| text.is_valid(row) && !text.value(row).trim().is_empty();
        if *to == DataType::Date32 {
            let days = (0..text.len())
                .map(|row| match present(row) {
                    true => self.date(text.value(row)).map(Some).ok_or_else(|| bad(row)),
                    false => Ok(None),
                })
                .collect::<Result<Date32Array, _>>()?;
            return Ok(Arc::new(days));
        }
        let DataType::Timestamp(unit, None) = to else {
            unreachable!("only dates and timestamps are parsed here");
        };
        let ticks = |t: NaiveDateTime| {
            let t = t.and_utc();
            match unit {
                TimeUnit::Second => Some(t.timestamp()),
                TimeUnit::Millisecond => Some(t.timestamp_millis()),
                TimeUnit::Microsecond => Some(t.timestamp_micros()),
                TimeUnit::Nanosecond => t.timestamp_nanos_opt(),
            }
        };
        let values = (0..text.len())
            .map(|row| match present(row) {
                true => self
                    .timestamp(text.value(row))
                    .and_then(ticks)
                    .map(Some)
                    .ok_or_else(|| bad(row)),
                false => Ok(None),
            })
            .collect::<Result<Vec<Option<i64>>, _>>()?;
        let array = arrow::array::Int64Array::from(values);
        arrow::compute::cast(&array, to).map_err(|e| (0, e.to_string()))
    }
}

fn text_of<'a>(pattern: &Option<Pattern<'a>>) -> &'a str {
    pattern.as_ref().map_or("", |p| p.text)
}

/// `schema` with the columns that [`Formats::parses`] as text, for the
/// reader.
pub(super) fn as_read(schema: &Schema, formats: &Formats) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match formats.parses(f.data_type()) {
            true => f.as_ref().clone().with_data_type(DataType::Utf8),
            false => f.as_ref().clone(),
        })
        .collect();
    Schema::new(fields)
}

/// `batch`, read by [`as_read`]'s schema, with its parsed columns in the
/// types of `schema` (the file's, projected as `batch` is). `first_line`
/// is the file line of the batch's first row, for the error.
pub(super) fn parse_batch(
    batch: RecordBatch,
    schema: &Arc<Schema>,
    formats: &Formats,
    first_line: usize,
) -> Result<RecordBatch, String> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| {
            if !formats.parses(field.data_type()) {
                return Ok(column.clone());
            }
            let text = column
                .as_any()
                .downcast_ref::<StringArray>()
                .expect("parsed columns are read as text");
            formats
                .parse_column(text, field.data_type())
                .map_err(|(row, e)| {
                    format!("line {}, column '{}': {e}", first_line + row, field.name())
                })
        })
        .collect::<Result<Vec<_>, String>>()?;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(date: Option<&str>, timestamp: Option<&str>) -> CsvOptions {
        CsvOptions {
            date_format: date.map(str::to_string),
            timestamp_format: timestamp.map(str::to_string),
            ..CsvOptions::default()
        }
    }

    #[test]
    fn values_parse_in_the_format_or_else_in_iso_form() {
        let f = options(Some("%d/%m/%Y"), Some("%d/%m/%Y %H:%M"));
        let f = Formats::of(&f);
        let day = |y, m, d| Date32Type::from_naive_date(NaiveDate::from_ymd_opt(y, m, d).unwrap());
        assert_eq!(f.date("25/12/2024"), Some(day(2024, 12, 25)));
        assert_eq!(f.date("2024-12-25"), Some(day(2024, 12, 25)));
        assert_eq!(f.date("12/25/2024"), None);
        let t = f.timestamp("25/12/2024 13:05").unwrap();
        assert_eq!(t.to_string(), "2024-12-25 13:05:00");
        assert_eq!(
            f.timestamp("2024-12-25 13:05:01.5").unwrap().to_string(),
            "2024-12-25 13:05:01.500"
        );
        let dates_only = options(None, Some("%m/%d/%Y"));
        let dates_only = Formats::of(&dates_only);
        assert_eq!(
            dates_only.timestamp("12/25/2024").unwrap().to_string(),
            "2024-12-25 00:00:00"
        );
    }

    #[test]
    fn a_text_column_is_a_date_when_every_sampled_value_is_one() {
        let f = options(Some("%d.%m.%Y"), Some("%d.%m.%Y %H:%M:%S"));
        let f = Formats::of(&f);
        let sample = |v: &[Option<&str>]| StringArray::from(v.to_vec());
        assert_eq!(
            f.inferred_type(&sample(&[Some("01.02.2024"), None, Some("")])),
            Some(DataType::Date32)
        );
        assert_eq!(
            f.inferred_type(&sample(&[Some("01.02.2024 10:00:00")])),
            Some(DataType::Timestamp(TimeUnit::Microsecond, None))
        );
        assert_eq!(
            f.inferred_type(&sample(&[Some("01.02.2024"), Some("x")])),
            None
        );
        assert_eq!(f.inferred_type(&sample(&[None])), None);
        assert_eq!(
            Formats::of(&options(None, None)).inferred_type(&sample(&[Some("2024-01-01")])),
            None
        );
    }

    #[test]
    fn a_value_out_of_format_is_an_error_naming_line_column_and_format() {
        let f = options(Some("%d/%m/%Y"), None);
        let f = Formats::of(&f);
        let schema = Arc::new(Schema::new(vec![Field::new("d", DataType::Date32, true)]));
        let text: ArrayRef = Arc::new(StringArray::from(vec![
            Some("01/01/2024"),
            Some("31/02/2024"),
        ]));
        let read = RecordBatch::try_from_iter(vec![("d", text)]).unwrap();
        let e = parse_batch(read, &schema, &f, 10).unwrap_err();
        assert_eq!(
            e,
            "line 11, column 'd': '31/02/2024' does not match dateformat '%d/%m/%Y'"
        );
    }
}
