//! Writers for query results, batch by batch. Every write is atomic: data
//! goes to a hidden temporary file beside the target, which is renamed
//! over the target only after the last byte is flushed and synced. A failed
//! or killed write leaves the old file (or nothing) in place, never half a
//! file; a [`FileSink`] dropped before [`FileSink::finish`] removes its
//! temporary file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::error::{Result, SlothError};

/// A file format sloth writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Parquet, zstd-compressed.
    Parquet,
    /// CSV with a header line.
    Csv,
    /// Arrow IPC file.
    Ipc,
    /// One JSON array of row objects.
    Json,
    /// One JSON object per line.
    Ndjson,
}

impl FileFormat {
    /// The format a file name's extension names, if any.
    pub fn from_path(path: &Path) -> Option<FileFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "parquet" => FileFormat::Parquet,
            "csv" => FileFormat::Csv,
            "arrow" | "ipc" | "feather" => FileFormat::Ipc,
            "json" => FileFormat::Json,
            "ndjson" | "jsonl" => FileFormat::Ndjson,
            _ => return None,
        })
    }
}

impl FileFormat {
    /// The usual extension of the format's files.
    pub fn extension(self) -> &'static str {
        match self {
            FileFormat::Parquet => "parquet",
            FileFormat::Csv => "csv",
            FileFormat::Ipc => "arrow",
            FileFormat::Json => "json",
            FileFormat::Ndjson => "ndjson",
        }
    }
}

/// How a file is written, beyond its format: what `COPY .. TO ..
/// (options)` sets. The defaults are zstd-compressed Parquet in row groups
/// of 131,072 rows, and CSV with a header and commas.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    /// Parquet compression: `zstd` (level 1), `snappy`, `lz4` or
    /// `uncompressed`.
    pub compression: String,
    /// Rows per Parquet row group.
    pub row_group_size: usize,
    /// CSV field separator.
    pub delimiter: u8,
    /// Whether CSV output starts with a header line.
    pub header: bool,
    /// Columns to partition the output by: a directory tree of
    /// `key=value/` folders instead of one file ([`crate::io::PartitionedSink`]).
    pub partition_by: Vec<String>,
    /// Whether a partitioned write may replace an existing directory.
    pub overwrite: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: "zstd".into(),
            row_group_size: 128 * 1024,
            delimiter: b',',
            header: true,
            partition_by: vec![],
            overwrite: false,
        }
    }
}

impl WriteOptions {
    /// The Parquet codec `compression` names.
    fn parquet_compression(&self) -> Result<Compression> {
        Ok(match self.compression.to_ascii_lowercase().as_str() {
            "zstd" => Compression::ZSTD(ZstdLevel::try_new(1)?),
            "snappy" => Compression::SNAPPY,
            "lz4" | "lz4_raw" => Compression::LZ4_RAW,
            "uncompressed" | "none" => Compression::UNCOMPRESSED,
            other => {
                return Err(SlothError::plan(format!(
                    "Parquet compression '{other}' (zstd, snappy, lz4, uncompressed)"
                )));
            }
        })
    }
}

type Out = BufWriter<File>;

/// The writer of each format.
enum Writer {
    Parquet(ArrowWriter<Out>),
    Csv(arrow::csv::Writer<Out>),
    Ipc(arrow::ipc::writer::FileWriter<Out>),
    Json(arrow::json::ArrayWriter<Out>),
    Ndjson(arrow::json::LineDelimitedWriter<Out>),
}

/// A file being written batch by batch; it appears at its path, whole,
/// when [`FileSink::finish`] returns.
pub struct FileSink {
    target: PathBuf,
    tmp: PathBuf,
    schema: SchemaRef,
    writer: Option<Writer>,
    rows: usize,
}

impl FileSink {
    /// Starts writing `format` to a temporary file beside `path`.
    pub fn create(path: impl AsRef<Path>, format: FileFormat, schema: &SchemaRef) -> Result<Self> {
        Self::create_with(path, format, schema, &WriteOptions::default())
    }

    /// As [`FileSink::create`], written as `options` say.
    pub fn create_with(
        path: impl AsRef<Path>,
        format: FileFormat,
        schema: &SchemaRef,
        options: &WriteOptions,
    ) -> Result<Self> {
        if options.row_group_size == 0 {
            return Err(SlothError::plan("ROW_GROUP_SIZE must be at least 1"));
        }
        let compression = options.parquet_compression()?;
        let (target, tmp, file) = create_temp(path.as_ref())?;
        // From here on, dropping the sink removes `tmp`.
        let mut sink = FileSink {
            target,
            tmp,
            schema: schema.clone(),
            writer: None,
            rows: 0,
        };
        let out = BufWriter::with_capacity(1 << 20, file);
        sink.writer = Some(match format {
            FileFormat::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(compression)
                    .set_max_row_group_row_count(Some(options.row_group_size))
                    .build();
                Writer::Parquet(ArrowWriter::try_new(out, schema.clone(), Some(props))?)
            }
            FileFormat::Csv => Writer::Csv(
                arrow::csv::WriterBuilder::new()
                    .with_header(options.header)
                    .with_delimiter(options.delimiter)
                    .build(out),
            ),
            FileFormat::Ipc => Writer::Ipc(arrow::ipc::writer::FileWriter::try_new(out, schema)?),
            FileFormat::Json => Writer::Json(arrow::json::ArrayWriter::new(out)),
            FileFormat::Ndjson => Writer::Ndjson(arrow::json::LineDelimitedWriter::new(out)),
        });
        Ok(sink)
    }

    /// Appends one batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows();
        let written = match self.writer.as_mut().expect("not finished") {
            Writer::Parquet(w) => w.write(batch).map_err(SlothError::from),
            Writer::Csv(w) => w.write(&super::csv_ready(batch)?).map_err(SlothError::from),
            Writer::Ipc(w) => w.write(batch).map_err(SlothError::from),
            Writer::Json(w) => w.write(batch).map_err(SlothError::from),
            Writer::Ndjson(w) => w.write(batch).map_err(SlothError::from),
        };
        written.map_err(|e| self.naming_the_file(e))
    }

    /// `e`, a failure to write this sink's file (a full disk, the
    /// file-size limit), as an error that names the file.
    fn naming_the_file(&self, e: SlothError) -> SlothError {
        let kind = match &e {
            SlothError::Io(io) => io.kind(),
            _ => std::io::ErrorKind::Other,
        };
        SlothError::Io(std::io::Error::new(
            kind,
            format!("writing '{}': {e}", self.target.display()),
        ))
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Ends the file, syncs it and renames it onto its path.
    pub fn finish(mut self) -> Result<()> {
        self.finish_file().map_err(|e| self.naming_the_file(e))
    }

    fn finish_file(&mut self) -> Result<()> {
        let out = match self.writer.take().expect("finished once") {
            Writer::Parquet(w) => w.into_inner()?,
            Writer::Csv(mut w) => {
                if self.rows == 0 {
                    // Still write the header so the file has the columns.
                    w.write(&RecordBatch::new_empty(self.schema.clone()))?;
                }
                w.into_inner()
            }
            Writer::Ipc(mut w) => {
                w.finish()?;
                w.into_inner()?
            }
            Writer::Json(mut w) => {
                w.finish()?;
                let mut out = w.into_inner();
                out.write_all(b"\n")?;
                out
            }
            Writer::Ndjson(mut w) => {
                w.finish()?;
                w.into_inner()
            }
        };
        let file = out
            .into_inner()
            .map_err(|e| SlothError::Io(e.into_error()))?;
        file.sync_all()?;
        std::fs::rename(&self.tmp, &self.target)?;
        Ok(())
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        // Not finished, or finishing failed (an error on the way, a
        // panic): no partial file. After the rename there is nothing here.
        let _ = std::fs::remove_file(&self.tmp);
        live_temp_files().retain(|t| t != &self.tmp);
    }
}

/// The temporary files of this process's unfinished writes.
fn live_temp_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the temporary files of every unfinished write of this process:
/// for a program about to exit without unwinding (the CLI on Ctrl-C),
/// which then leaves the old outputs and no partial ones.
pub fn remove_partial_outputs() {
    for tmp in live_temp_files().drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
}

/// The file a write to `path` replaces: `path`, or the file a symbolic
/// link at `path` points to (the link stays a link).
fn write_target(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(path) {
            Ok(to) => write_target(&path.parent().unwrap_or(Path::new("")).join(to)),
            Err(_) => path.to_path_buf(),
        },
        _ => path.to_path_buf(),
    }
}

/// Starts an atomic write to `path`: the file it replaces, a temporary
/// file beside it (removed if the write does not finish), and that file
/// open for writing. Temporary files that killed processes left beside
/// it go first.
fn create_temp(path: &Path) -> Result<(PathBuf, PathBuf, File)> {
    let target = write_target(path);
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir
        && !dir.is_dir()
    {
        return Err(SlothError::FileNotFound {
            path: target.display().to_string(),
            reason: format!("directory '{}' does not exist", dir.display()),
        });
    }
    if target.is_dir() {
        return Err(SlothError::FileNotFound {
            path: target.display().to_string(),
            reason: "it is a directory".into(),
        });
    }
    remove_stale_temps(&target);
    let tmp = temp_path(&target);
    let file = File::create(&tmp).map_err(|e| SlothError::FileNotFound {
        path: target.display().to_string(),
        reason: e.to_string(),
    })?;
    live_temp_files().push(tmp.clone());
    Ok((target, tmp, file))
}

/// Writes `bytes` to `path` atomically: whole, synced, or not at all.
pub fn write_bytes(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let (target, tmp, mut file) = create_temp(path.as_ref())?;
    let written = file
        .write_all(bytes)
        .and_then(|_| file.sync_all())
        .and_then(|_| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    live_temp_files().retain(|t| t != &tmp);
    written.map_err(|e| {
        SlothError::Io(std::io::Error::new(
            e.kind(),
            format!("writing '{}': {e}", target.display()),
        ))
    })
}

/// Removes the temporary files of writes to `target` whose process is
/// gone (killed mid-write): `.NAME.sloth-tmp-PID-N` with no process PID.
fn remove_stale_temps(target: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Some(name) = target.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.sloth-tmp-");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = (file_name.to_str())
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A hidden name beside `target`, unique to this process and write.
fn temp_path(target: &Path) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(
        ".{name}.sloth-tmp-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Writes `batches` as `format` to `path`, atomically.
pub fn write_file(
    path: impl AsRef<Path>,
    format: FileFormat,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    let mut sink = FileSink::create(path, format, schema)?;
    for b in batches {
        sink.write(b)?;
    }
    sink.finish()
}

/// Writes batches as a zstd-compressed Parquet file.
pub fn write_parquet(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    write_file(path, FileFormat::Parquet, schema, batches)
}

/// Writes batches as CSV with a header line.
pub fn write_csv(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    write_file(path, FileFormat::Csv, schema, batches)
}

/// Writes batches as an Arrow IPC file.
pub fn write_ipc(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<()> {
    write_file(path, FileFormat::Ipc, schema, batches)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array};

    use super::*;

    fn batch() -> RecordBatch {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        RecordBatch::try_from_iter([("a", a)]).unwrap()
    }

    #[test]
    fn every_format_writes_whole_files_and_nothing_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let b = batch();
        for (name, format) in [
            ("t.parquet", FileFormat::Parquet),
            ("t.csv", FileFormat::Csv),
            ("t.arrow", FileFormat::Ipc),
            ("t.json", FileFormat::Json),
            ("t.ndjson", FileFormat::Ndjson),
        ] {
            let path = dir.path().join(name);
            assert_eq!(FileFormat::from_path(&path), Some(format));
            write_file(&path, format, &b.schema(), &[b.clone(), b.clone()]).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() > 0, "{name}");
            // A sink dropped half way leaves the old file and no temp file.
            let before = std::fs::read(&path).unwrap();
            let mut sink = FileSink::create(&path, format, &b.schema()).unwrap();
            sink.write(&b).unwrap();
            drop(sink);
            assert_eq!(std::fs::read(&path).unwrap(), before, "{name}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 5);
        let json = std::fs::read_to_string(dir.path().join("t.json")).unwrap();
        assert!(
            json.starts_with("[{\"a\":1}") && json.ends_with("]\n"),
            "{json}"
        );
        write_file(
            dir.path().join("e.json"),
            FileFormat::Json,
            &b.schema(),
            &[],
        )
        .unwrap();
        let empty = std::fs::read_to_string(dir.path().join("e.json")).unwrap();
        assert_eq!(empty, "[]\n");
    }

    #[test]
    fn a_write_through_a_symbolic_link_replaces_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.csv");
        let link = dir.path().join("link.csv");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink("real.csv", &link).unwrap();
        write_bytes(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        write_file(&link, FileFormat::Csv, &batch().schema(), &[batch()]).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&real)
                .unwrap()
                .starts_with("a\n1\n")
        );
    }

    #[test]
    fn temporaries_of_dead_writers_are_removed_and_live_ones_kept() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        // No process has a pid this large.
        let dead = dir.path().join(".out.json.sloth-tmp-4294967295-0");
        let live = dir
            .path()
            .join(format!(".out.json.sloth-tmp-{}-999", std::process::id()));
        let other = dir.path().join(".other.json.sloth-tmp-4294967295-0");
        for f in [&dead, &live, &other] {
            std::fs::write(f, "partial").unwrap();
        }
        write_bytes(&target, b"[]").unwrap();
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "[]");
    }

    #[test]
    fn writing_onto_a_directory_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_bytes(dir.path(), b"x").unwrap_err().to_string();
        assert!(
            e.contains("is a directory") && e.contains(&dir.path().display().to_string()),
            "{e}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty());
    }
}
