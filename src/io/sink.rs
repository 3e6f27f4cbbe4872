//! Writers for query results. Every write is atomic: data goes to a hidden
//! temporary file beside the target, which is renamed over the target only
//! after the last byte is flushed and synced. A failed or killed write leaves
//! the old file (or nothing) in place, never half a file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::error::{Result, SlothError};

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.sloth-tmp-{}", std::process::id()))
}

/// Runs `write` into a temporary file and renames it onto `target`.
fn atomic_write(target: &Path, write: impl FnOnce(BufWriter<File>) -> Result<File>) -> Result<()> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(SlothError::FileNotFound {
            path: target.display().to_string(),
            reason: format!("directory '{}' does not exist", dir.display()),
        });
    }
    let tmp = temp_path(target);
    let file = File::create(&tmp).map_err(|e| SlothError::FileNotFound {
        path: target.display().to_string(),
        reason: e.to_string(),
    })?;
    let result = write(BufWriter::with_capacity(1 << 20, file)).and_then(|f| {
        f.sync_all()?;
        std::fs::rename(&tmp, target)?;
        Ok(())
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn into_file(w: BufWriter<File>) -> Result<File> {
    w.into_inner().map_err(|e| SlothError::Io(e.into_error()))
}

/// Writes batches as a zstd-compressed Parquet file.
pub fn write_parquet(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    atomic_write(path.as_ref(), |w| {
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
            .set_max_row_group_row_count(Some(128 * 1024))
            .build();
        let mut writer = ArrowWriter::try_new(w, schema.clone(), Some(props))?;
        for b in batches {
            writer.write(b)?;
        }
        into_file(writer.into_inner()?)
    })
}

/// Writes batches as CSV with a header line.
pub fn write_csv(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    atomic_write(path.as_ref(), |w| {
        let mut writer = arrow::csv::WriterBuilder::new().with_header(true).build(w);
        if batches.is_empty() {
            // Still write the header so the file has the columns.
            let empty = RecordBatch::new_empty(schema.clone());
            writer.write(&empty)?;
        }
        for b in batches {
            writer.write(b)?;
        }
        let mut w = writer.into_inner();
        w.flush()?;
        into_file(w)
    })
}

/// Writes batches as an Arrow IPC file.
pub fn write_ipc(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    atomic_write(path.as_ref(), |w| {
        let mut writer = arrow::ipc::writer::FileWriter::try_new(w, schema)?;
        for b in batches {
            writer.write(b)?;
        }
        writer.finish()?;
        into_file(writer.into_inner()?)
    })
}
