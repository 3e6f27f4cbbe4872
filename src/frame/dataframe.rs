//! A materialized result: a schema plus record batches.

use std::fmt;
use std::path::Path;

use arrow::array::ArrayRef;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::error::{Result, SlothError};
use crate::frame::LazyFrame;
use crate::io;
use crate::io::text_table::TextTable;

/// Query result: Arrow record batches sharing one schema.
#[derive(Debug, Clone)]
pub struct DataFrame {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl DataFrame {
    /// Wraps batches; they must all have `schema`'s columns.
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        DataFrame { schema, batches }
    }

    /// Builds a frame from batches (at least one, to give the schema).
    pub fn from_batches(batches: Vec<RecordBatch>) -> Result<Self> {
        let schema = batches
            .first()
            .ok_or_else(|| SlothError::plan("no batches (the schema is unknown)"))?
            .schema();
        Ok(DataFrame { schema, batches })
    }

    /// The schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The batches.
    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// Consumes the frame, returning its batches.
    pub fn into_batches(self) -> Vec<RecordBatch> {
        self.batches
    }

    /// Total number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// Column names in order.
    pub fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// One column, all batches concatenated.
    pub fn column(&self, name: &str) -> Result<ArrayRef> {
        let i = self
            .schema
            .index_of(name)
            .map_err(|_| SlothError::ColumnNotFound {
                name: name.to_string(),
                available: self.column_names(),
            })?;
        let parts: Vec<&dyn arrow::array::Array> =
            self.batches.iter().map(|b| b.column(i).as_ref()).collect();
        if parts.is_empty() {
            return Ok(arrow::array::new_empty_array(
                self.schema.field(i).data_type(),
            ));
        }
        Ok(arrow::compute::concat(&parts)?)
    }

    /// All rows in one batch.
    pub fn to_batch(&self) -> Result<RecordBatch> {
        Ok(arrow::compute::concat_batches(&self.schema, &self.batches)?)
    }

    /// Back to a lazy frame, for further queries on this result.
    pub fn lazy(&self) -> LazyFrame {
        LazyFrame::from_batches_with_schema(self.schema.clone(), self.batches.clone())
            .expect("a DataFrame's batches match its schema")
    }

    /// Writes the frame as Parquet, atomically.
    pub fn write_parquet(&self, path: impl AsRef<Path>) -> Result<()> {
        io::write_parquet(path, &self.schema, &self.batches)
    }

    /// Writes the frame as CSV with a header, atomically.
    pub fn write_csv(&self, path: impl AsRef<Path>) -> Result<()> {
        io::write_csv(path, &self.schema, &self.batches)
    }

    /// Writes the frame as an Arrow IPC file, atomically.
    pub fn write_ipc(&self, path: impl AsRef<Path>) -> Result<()> {
        io::write_ipc(path, &self.schema, &self.batches)
    }

    /// Renders up to `max_rows` rows as an aligned table: head and tail when
    /// longer, cells cut at `MAX_CELL` characters, column types under the names.
    pub fn to_table_string(&self, max_rows: usize) -> String {
        self.to_table_string_with(max_rows, MAX_CELL)
    }

    /// As [`DataFrame::to_table_string`], cutting cells past `max_cell`
    /// characters (at least 2) instead of [`MAX_CELL`].
    pub fn to_table_string_with(&self, max_rows: usize, max_cell: usize) -> String {
        let max_cell = max_cell.max(2);
        let n = self.num_rows();
        let half = max_rows / 2;
        let (head, tail) = if n <= max_rows {
            (self.batches.clone(), vec![])
        } else {
            (
                crate::exec::columnar::slice(self.batches.clone(), 0, Some(half)),
                crate::exec::columnar::slice(self.batches.clone(), n - half, None),
            )
        };
        let mut table = TextTable::new(
            self.schema
                .fields()
                .iter()
                .map(|f| format!("{}\n{}", f.name(), f.data_type()))
                .collect(),
        );
        let options = arrow::util::display::FormatOptions::default().with_null("NULL");
        let add_rows = |table: &mut TextTable, batches: &[RecordBatch]| {
            for b in batches {
                let formatters: Vec<_> = b
                    .columns()
                    .iter()
                    .map(|c| arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &options))
                    .collect::<Result<_, _>>()
                    .unwrap_or_default();
                for r in 0..b.num_rows() {
                    table.add_row(
                        formatters
                            .iter()
                            .map(|f| truncate(&f.value(r).to_string(), max_cell))
                            .collect::<Vec<_>>(),
                    );
                }
            }
        };
        add_rows(&mut table, &head);
        if !tail.is_empty() {
            table.add_row(self.schema.fields().iter().map(|_| "…".into()).collect());
            add_rows(&mut table, &tail);
        }
        let mut s = table.to_string();
        if n > max_rows {
            s.push_str(&format!("\n{n} rows ({max_rows} shown)"));
        } else {
            s.push_str(&format!("\n{n} row{}", if n == 1 { "" } else { "s" }));
        }
        s
    }

    /// The frame sorted by all columns, as CSV text: a canonical form for
    /// comparing results whose row order is unspecified.
    pub fn to_sorted_csv(&self) -> Result<String> {
        let names = self.column_names();
        let sorted = self
            .lazy()
            .sort(
                names.iter().map(|n| crate::expr::col(n.as_str())).collect(),
                vec![false],
                false,
            )
            .collect_unoptimized()?;
        let mut buf = Vec::new();
        {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut buf);
            for b in sorted.batches() {
                w.write(&crate::io::csv_ready(b)?)?;
            }
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// Longest cell shown by [`DataFrame::to_table_string`].
pub const MAX_CELL: usize = 40;

fn truncate(s: &str, max_cell: usize) -> String {
    if s.chars().count() <= max_cell {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max_cell - 1).collect();
    out.push('…');
    out
}

impl fmt::Display for DataFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_table_string(20))
    }
}

impl From<RecordBatch> for DataFrame {
    fn from(b: RecordBatch) -> Self {
        DataFrame {
            schema: b.schema(),
            batches: vec![b],
        }
    }
}

impl TryFrom<Vec<RecordBatch>> for DataFrame {
    type Error = SlothError;
    fn try_from(b: Vec<RecordBatch>) -> Result<Self> {
        DataFrame::from_batches(b)
    }
}

impl From<DataFrame> for Vec<RecordBatch> {
    fn from(df: DataFrame) -> Self {
        df.batches
    }
}
