//! Spill files: Arrow IPC streams, uncompressed unless the
//! `spill_compression` setting asks for LZ4 or Zstd, in a directory of the
//! query's own under the temp directory.
//!
//! The directory is made on the first spill and removed with everything
//! in it when the [`SpillDir`] is dropped: on success, on error and on a
//! panic. A process killed outright cannot clean up, so each new spill
//! directory first removes those of sloth processes that no longer run.

use std::fs::{self, File};
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use arrow::ipc::CompressionType;
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow::record_batch::RecordBatch;

use super::MemoryPool;
use crate::error::{Result, SlothError};

/// Prefix of spill directory names: `sloth-spill-<pid>-<n>`.
const PREFIX: &str = "sloth-spill-";

/// How spill files are compressed (the `spill_compression` setting).
///
/// None by default, as DataFusion's `spill_compression`: the files are
/// written once and read once, mostly from the page cache, and compressing
/// them costs more CPU than the disk saves. A 100M x 100M-row join under a
/// 2 GB limit (`benches/memory/large_keys.py`, 2 cores, two passes each):
/// 22.9-23.8 s uncompressed against 27.9-33.4 s with LZ4, whose compression
/// took 19% of the samples; a 50M-key group-by 7.8-8.8 s against 9.7-11.4 s.
/// Compression pays where the temp directory is small or slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpillCompression {
    /// Buffers written as they are in memory.
    #[default]
    None,
    /// LZ4 frames: fast, about half the size on typical columns.
    Lz4,
    /// Zstandard: smaller, slower.
    Zstd,
}

impl std::str::FromStr for SpillCompression {
    type Err = SlothError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "uncompressed" => Ok(SpillCompression::None),
            "lz4" => Ok(SpillCompression::Lz4),
            "zstd" => Ok(SpillCompression::Zstd),
            _ => Err(SlothError::Config(format!(
                "spill_compression is none, lz4 or zstd, got '{s}'"
            ))),
        }
    }
}

impl std::fmt::Display for SpillCompression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SpillCompression::None => "none",
            SpillCompression::Lz4 => "lz4",
            SpillCompression::Zstd => "zstd",
        })
    }
}

impl SpillCompression {
    fn codec(self) -> Option<CompressionType> {
        match self {
            SpillCompression::None => None,
            SpillCompression::Lz4 => Some(CompressionType::LZ4_FRAME),
            SpillCompression::Zstd => Some(CompressionType::ZSTD),
        }
    }
}

/// Where one query's spill files go.
#[derive(Debug)]
pub struct SpillDir {
    root: PathBuf,
    dir: Mutex<Option<PathBuf>>,
    files: AtomicUsize,
    pool: Arc<MemoryPool>,
    compression: SpillCompression,
}

impl SpillDir {
    /// Spill files under `root` (made on the first spill), counted in `pool`.
    pub fn new(root: PathBuf, pool: Arc<MemoryPool>) -> Self {
        SpillDir {
            root,
            dir: Mutex::new(None),
            files: AtomicUsize::new(0),
            pool,
            compression: SpillCompression::default(),
        }
    }

    /// These spill files compressed with `compression`.
    pub fn with_compression(mut self, compression: SpillCompression) -> Self {
        self.compression = compression;
        self
    }

    /// The directory spill files go to, made now if it does not exist yet.
    fn dir(&self) -> Result<PathBuf> {
        let mut dir = self.dir.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = &*dir {
            return Ok(d.clone());
        }
        remove_orphans(&self.root);
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let made = self.root.join(format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&made).map_err(|e| {
            SlothError::Config(format!(
                "cannot spill to temp directory '{}': {e}; choose another with --temp-dir",
                self.root.display()
            ))
        })?;
        live_dirs().push(made.clone());
        *dir = Some(made.clone());
        Ok(made)
    }

    /// A new spill file for batches of `schema`.
    pub fn writer(&self, schema: &SchemaRef) -> Result<SpillWriter> {
        if CLOSING.load(Ordering::Relaxed) {
            return Err(SlothError::Internal("the process is exiting".into()));
        }
        let n = self.files.fetch_add(1, Ordering::Relaxed);
        let path = self.dir()?.join(format!("{n}.arrows"));
        let file = File::create(&path).map_err(|e| spill_error(&path, e))?;
        let options = IpcWriteOptions::default().try_with_compression(self.compression.codec())?;
        let writer = StreamWriter::try_new_with_options(
            BufWriter::with_capacity(1 << 20, file),
            schema,
            options,
        )?;
        Ok(SpillWriter {
            file: Some(SpillFile {
                path,
                rows: 0,
                memory: 0,
            }),
            writer: Some(writer),
            pool: self.pool.clone(),
        })
    }

    /// Writes `batches` to a new spill file.
    pub fn spill(&self, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<SpillFile> {
        let mut w = self.writer(schema)?;
        for b in batches {
            w.write(b)?;
        }
        w.finish()
    }

    /// The directory, if a spill made it.
    #[cfg(test)]
    fn path(&self) -> Option<PathBuf> {
        self.dir.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = fs::remove_dir_all(&dir);
            live_dirs().retain(|d| d != &dir);
        }
    }
}

/// The spill directories of this process's running queries.
fn live_dirs() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Set once the process is exiting: no new spill file is made.
static CLOSING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Removes the spill directories of every running query of this process,
/// and stops new spill files: for a program about to exit without
/// unwinding (the CLI on Ctrl-C).
pub fn remove_spill_dirs() {
    CLOSING.store(true, Ordering::Relaxed);
    for dir in live_dirs().drain(..) {
        // A file a writer was creating as the first pass ran goes in the next.
        for _ in 0..3 {
            if fs::remove_dir_all(&dir).is_ok() || !dir.exists() {
                break;
            }
        }
    }
}

/// Removes spill directories under `root` left by sloth processes that no
/// longer run (killed before they could clean up). Only where `/proc`
/// tells which processes run.
fn remove_orphans(root: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn spill_error(path: &Path, e: impl std::fmt::Display) -> SlothError {
    SlothError::Io(std::io::Error::other(format!(
        "spilling to '{}': {e}",
        path.display()
    )))
}

/// A full disk injected by the `SLOTH_SPILL_FAULT_AFTER` environment
/// variable: once the process's spill writes pass that many bytes (of
/// batches in memory), every further write fails as a full disk would, so
/// that the clean-up after a failed spill can be tested on any machine.
fn injected_full_disk(bytes: usize) -> bool {
    static AFTER: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    static WRITTEN: AtomicUsize = AtomicUsize::new(0);
    let after = AFTER.get_or_init(|| {
        std::env::var("SLOTH_SPILL_FAULT_AFTER")
            .ok()
            .and_then(|v| v.parse().ok())
    });
    after.is_some_and(|after| WRITTEN.fetch_add(bytes, Ordering::Relaxed) + bytes > after)
}

/// A spill file being written.
pub struct SpillWriter {
    file: Option<SpillFile>,
    writer: Option<StreamWriter<BufWriter<File>>>,
    pool: Arc<MemoryPool>,
}

impl SpillWriter {
    /// Appends one batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let (Some(file), Some(writer)) = (&mut self.file, &mut self.writer) else {
            return Err(SlothError::Internal(
                "spill file written after finish".into(),
            ));
        };
        let memory = batch.get_array_memory_size();
        if injected_full_disk(memory) {
            let full = std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "No space left on device (injected by SLOTH_SPILL_FAULT_AFTER)",
            );
            return Err(spill_error(&file.path, full));
        }
        writer
            .write(batch)
            .map_err(|e| spill_error(&file.path, e))?;
        file.rows += batch.num_rows();
        file.memory += memory;
        Ok(())
    }

    /// Flushes the file and hands it over for reading.
    pub fn finish(mut self) -> Result<SpillFile> {
        let file = self.file.take().expect("finished once");
        let mut writer = self.writer.take().expect("finished once");
        writer.finish().map_err(|e| spill_error(&file.path, e))?;
        let inner = writer
            .into_inner()
            .map_err(|e| spill_error(&file.path, e))?;
        inner
            .into_inner()
            .map_err(|e| spill_error(&file.path, e.error()))?;
        self.pool
            .count_spill(fs::metadata(&file.path).map_or(0, |m| m.len()));
        Ok(file)
    }
}

impl Drop for SpillWriter {
    fn drop(&mut self) {
        // Unfinished (an error on the way): the partial file goes.
        if let Some(file) = &self.file {
            let _ = fs::remove_file(&file.path);
        }
    }
}

/// A finished spill file; removed when dropped.
#[derive(Debug)]
pub struct SpillFile {
    path: PathBuf,
    rows: usize,
    memory: usize,
}

impl SpillFile {
    /// Rows in the file.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes its batches took in memory when written (what reading it
    /// back whole takes again).
    pub fn memory_size(&self) -> usize {
        self.memory
    }

    /// Its batches, read one at a time.
    pub fn read(&self) -> Result<impl Iterator<Item = Result<RecordBatch>> + use<>> {
        let file = File::open(&self.path).map_err(|e| spill_error(&self.path, e))?;
        let reader = StreamReader::try_new(BufReader::with_capacity(1 << 20, file), None)?;
        Ok(reader.map(|b| b.map_err(SlothError::from)))
    }

    /// All of its batches.
    pub fn read_all(&self) -> Result<Vec<RecordBatch>> {
        self.read()?.collect()
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, StringArray};

    use super::*;

    fn batch(n: i64) -> RecordBatch {
        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let s: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..n).map(|i| format!("v{i}")),
        ));
        RecordBatch::try_from_iter([("a", a), ("s", s)]).unwrap()
    }

    #[test]
    fn spilled_batches_read_back_and_the_directory_goes_on_drop() {
        let root = tempfile::tempdir().unwrap();
        let pool = MemoryPool::unbounded();
        let spill = SpillDir::new(root.path().to_path_buf(), pool.clone());
        let b = batch(1000);
        let file = spill
            .spill(&b.schema(), &[b.clone(), b.slice(10, 5)])
            .unwrap();
        assert_eq!(file.rows(), 1005);
        let back = file.read_all().unwrap();
        assert_eq!(back[0], b);
        assert_eq!(back[1], b.slice(10, 5));
        assert_eq!(pool.spilled().1, 1);
        let dir = spill.path().unwrap();
        assert!(dir.exists() && live_dirs().contains(&dir));
        drop(file);
        drop(spill);
        assert!(!dir.exists() && !live_dirs().contains(&dir));
    }

    #[test]
    fn every_compression_reads_back_what_it_wrote() {
        let root = tempfile::tempdir().unwrap();
        let b = batch(5000);
        let mut sizes = vec![];
        for c in ["none", "lz4", "zstd"] {
            let compression: SpillCompression = c.parse().unwrap();
            assert_eq!(compression.to_string(), c);
            let pool = MemoryPool::unbounded();
            let spill = SpillDir::new(root.path().to_path_buf(), pool.clone())
                .with_compression(compression);
            let file = spill.spill(&b.schema(), std::slice::from_ref(&b)).unwrap();
            assert_eq!(file.read_all().unwrap(), std::slice::from_ref(&b), "{c}");
            sizes.push(pool.spilled().0);
        }
        assert!(sizes[1] < sizes[0] && sizes[2] < sizes[0], "{sizes:?}");
    }

    #[test]
    fn an_unfinished_writer_leaves_no_file() {
        let root = tempfile::tempdir().unwrap();
        let spill = SpillDir::new(root.path().to_path_buf(), MemoryPool::unbounded());
        let b = batch(10);
        let mut w = spill.writer(&b.schema()).unwrap();
        w.write(&b).unwrap();
        drop(w);
        let dir = spill.path().unwrap();
        assert_eq!(fs::read_dir(dir).unwrap().count(), 0);
    }

    #[test]
    fn orphans_of_dead_processes_are_removed_and_unwritable_roots_are_errors() {
        let root = tempfile::tempdir().unwrap();
        // No process has a pid this large.
        let orphan = root.path().join(format!("{PREFIX}4294967295-0"));
        fs::create_dir_all(&orphan).unwrap();
        let spill = SpillDir::new(root.path().to_path_buf(), MemoryPool::unbounded());
        let b = batch(1);
        spill.spill(&b.schema(), std::slice::from_ref(&b)).unwrap();
        if Path::new("/proc/self").exists() {
            assert!(!orphan.exists());
        }
        let blocked = root.path().join("a-file");
        fs::write(&blocked, "x").unwrap();
        let spill = SpillDir::new(blocked.join("sub"), MemoryPool::unbounded());
        let e = spill.spill(&b.schema(), &[b]).unwrap_err().to_string();
        assert!(
            e.contains("cannot spill to temp directory") && !e.contains('\n'),
            "{e}"
        );
    }
}
