//! Files mapped into memory once per process, with their parsed Parquet
//! footers.
//!
//! Reading a column chunk through `std::fs::File` copies it out of the page
//! cache into a fresh buffer (`pread`) for every query: 6.8% of the CPU
//! samples of the 22 TPC-H queries at SF1 (`perf record`, `sloth bench`),
//! and parsing each file's footer again another 1%. A mapping hands out
//! slices of the page cache itself (the Parquet reader's `ChunkReader` for
//! [`Bytes`] slices without copying), and the footer is parsed once.
//!
//! Entries are keyed by path and checked against the file's identity
//! (device, inode, length, modification time) on every lookup, so a file
//! replaced by a rename (as sloth's own writers replace files) is mapped
//! afresh, and entries whose path no longer names the same file are dropped,
//! so a deleted file's space is not held by the mapping.
//!
//! A mapping assumes nobody truncates or rewrites the file in place while it
//! is read (a write through another handle shows through; a truncation
//! faults). Writers that replace files atomically, as sloth's do, never do
//! that. `SLOTH_MMAP=0` reads files into memory instead.
//!
//! When the mapped files are large (together more than 1 GiB, or a quarter
//! of the memory limit if that is less, [`set_memory_limit`]), pages of a
//! mapping that a reader is done with are handed back with
//! [`release_read`]: they stay in the page cache, but leave the process's
//! resident set, so the process holds the memory it computes with rather
//! than every compressed byte it has read. Below that they stay mapped:
//! clean file pages are the first the kernel reclaims anyway, and reading
//! a released page again faults it back in, a cost paid on every later
//! read of the file. At TPC-H SF 10 (3.5 GB of files) handing them back
//! halves the queries' peak RSS at no measured cost in time
//! (docs/benchmarks/2026-12-07-tpch-sf10-released-pages.md).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use bytes::Bytes;

use super::open;
use crate::error::{Result, SlothError};

/// What identifies one version of a file at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    dev_ino: (u64, u64),
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Identity {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            dev_ino: (meta.dev(), meta.ino()),
        }
    }

    fn current(path: &Path) -> Option<Self> {
        std::fs::metadata(path).ok().map(|m| Self::of(&m))
    }
}

/// One file's contents and what has been parsed from them.
pub(crate) struct CachedFile<T> {
    /// The whole file.
    pub bytes: Bytes,
    /// Parsed forms of the contents (for Parquet, the footer), filled in by
    /// the reader on first use.
    pub parsed: Mutex<T>,
}

/// A path, the identity of the file it named when read, and its contents.
type Entry<T> = (PathBuf, Identity, Arc<CachedFile<T>>);

/// The process's mapped files of one kind of parsed content.
pub(crate) struct FileCache<T> {
    /// Few entries (one per table file read), so a list.
    entries: Mutex<Vec<Entry<T>>>,
}

impl<T: Default> FileCache<T> {
    /// An empty cache (a `static`).
    pub const fn new() -> Self {
        FileCache {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The file at `path`, mapped (or read) on first use and whenever the
    /// path names another file than the cached one.
    pub fn get(&self, path: &Path) -> Result<Arc<CachedFile<T>>> {
        let file = open(path)?;
        let meta = file.metadata().map_err(|e| io_error(path, e))?;
        let identity = Identity::of(&meta);
        // A poisoned lock only means another reader panicked; the map
        // itself is always consistent.
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let own = entries
            .iter()
            .position(|(p, ..)| p == path)
            .map(|i| entries.swap_remove(i));
        entries.retain(|(p, id, _)| Identity::current(p).as_ref() == Some(id));
        if let Some(entry) = own.filter(|(_, id, _)| *id == identity) {
            let cached = entry.2.clone();
            entries.push(entry);
            return Ok(cached);
        }
        let cached = Arc::new(CachedFile {
            bytes: contents(path, &file, meta.len())?,
            parsed: Mutex::new(T::default()),
        });
        entries.push((path.to_path_buf(), identity, cached.clone()));
        Ok(cached)
    }
}

fn io_error(path: &Path, e: std::io::Error) -> SlothError {
    SlothError::Data(format!("cannot read '{}': {e}", path.display()))
}

/// The file's bytes: a read-only mapping of a regular file, else (an empty
/// or special file, a failed mapping, `SLOTH_MMAP=0`) a copy.
fn contents(path: &Path, file: &std::fs::File, len: u64) -> Result<Bytes> {
    let mapping_allowed = std::env::var_os("SLOTH_MMAP").is_none_or(|v| v != "0");
    if mapping_allowed && len > 0 {
        // SAFETY: the mapping is read-only and private to this process; the
        // module doc states the assumption that the file is not truncated or
        // rewritten in place while mapped.
        if let Ok(map) = unsafe { memmap2::Mmap::map(file) } {
            return Ok(Bytes::from_owner(Mapping::new(map)));
        }
    }
    std::fs::read(path)
        .map(Bytes::from)
        .map_err(|e| io_error(path, e))
}

/// Address ranges (start, end) of the live mappings [`contents`] made:
/// [`release_read`] advises only memory inside one, never heap memory
/// (where `MADV_DONTNEED` would zero live data).
static MAPPED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Mapped bytes past which [`release_read`] hands pages back: a quarter of
/// the last query's memory limit, at most [`RELEASE_ANY_ABOVE`].
static RELEASE_ABOVE: AtomicUsize = AtomicUsize::new(RELEASE_ANY_ABOVE);

/// Mapped bytes past which read pages are handed back whatever the limit.
const RELEASE_ANY_ABOVE: usize = 1 << 30;

/// Sets the memory limit that decides whether read pages are handed back
/// (module doc). One value for the process, as the mappings are; the
/// executor sets it from each query's limit.
pub(crate) fn set_memory_limit(bytes: u64) {
    let quarter = usize::try_from(bytes / 4).unwrap_or(usize::MAX);
    RELEASE_ABOVE.store(quarter.min(RELEASE_ANY_ABOVE), Ordering::Relaxed);
}

/// A file mapping that is listed in [`MAPPED`] while it lives.
struct Mapping(memmap2::Mmap);

impl Mapping {
    fn new(map: memmap2::Mmap) -> Self {
        let start = map.as_ptr() as usize;
        let mut mapped = MAPPED.lock().unwrap_or_else(PoisonError::into_inner);
        mapped.push((start, start + map.len()));
        Mapping(map)
    }
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unlisted before the memory is unmapped (when the field drops), so
        // no lookup can find a range that is no longer this file's.
        let start = self.0.as_ptr() as usize;
        let mut mapped = MAPPED.lock().unwrap_or_else(PoisonError::into_inner);
        mapped.retain(|&(s, _)| s != start);
    }
}

/// Hands the whole memory pages inside `read` back to the kernel, when
/// `read` lies in a file mapping of this module (anything else is left
/// alone) and the mappings hold more than the share of the memory limit
/// that the module doc names. The contents do not change: the pages stay in the page cache
/// and a later read of them faults them back in, so this is only ever a
/// cost, never a different answer; readers call it on byte ranges they
/// have finished decoding. The caller holds `read`, so the mapping it lies
/// in is alive.
pub(crate) fn release_read(read: &[u8]) {
    #[cfg(unix)]
    {
        let page = page_size();
        let (start, end) = (read.as_ptr() as usize, read.as_ptr() as usize + read.len());
        // Whole pages only: the partial ones at the edges may hold bytes
        // another reader is about to use.
        let (first, last) = (start.div_ceil(page) * page, end / page * page);
        if last <= first {
            return;
        }
        let mapped = MAPPED.lock().unwrap_or_else(PoisonError::into_inner);
        let total: usize = mapped.iter().map(|&(s, e)| e - s).sum();
        if total <= RELEASE_ABOVE.load(Ordering::Relaxed)
            || !mapped.iter().any(|&(s, e)| s <= start && end <= e)
        {
            return;
        }
        drop(mapped);
        // SAFETY: [first, last) lies inside a live, read-only, shared file
        // mapping (checked above; the caller's borrow keeps it mapped), which
        // no one writes, so it holds no private copies: MADV_DONTNEED only
        // drops the process's references to page cache pages, which are
        // read back unchanged on the next access.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_DONTNEED,
            );
        }
    }
    #[cfg(not(unix))]
    let _ = read;
}

#[cfg(unix)]
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| {
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_is_read_again_and_a_deleted_one_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.bin");
        std::fs::write(&a, b"first").unwrap();
        std::fs::write(&b, b"other").unwrap();
        let cache: FileCache<u8> = FileCache::new();
        let first = cache.get(&a).unwrap();
        assert_eq!(&first.bytes[..], b"first");
        *first.parsed.lock().unwrap() = 7;
        // Same file: the same entry, parsed state included.
        assert_eq!(*cache.get(&a).unwrap().parsed.lock().unwrap(), 7);
        // Replaced by a rename, as sloth's writers do: read afresh, while
        // the old contents stay valid for whoever still holds them.
        let tmp = dir.path().join("a.tmp");
        std::fs::write(&tmp, b"second!").unwrap();
        std::fs::rename(&tmp, &a).unwrap();
        let second = cache.get(&a).unwrap();
        assert_eq!(&second.bytes[..], b"second!");
        assert_eq!(*second.parsed.lock().unwrap(), 0);
        assert_eq!(&first.bytes[..], b"first");
        // A deleted file's entry goes at the next lookup of any file.
        cache.get(&b).unwrap();
        std::fs::remove_file(&a).unwrap();
        cache.get(&b).unwrap();
        assert_eq!(cache.entries.lock().unwrap().len(), 1);
    }

    #[test]
    fn released_pages_read_back_unchanged_and_heap_memory_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        let data: Vec<u8> = (0..1 << 20).map(|i: u32| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let cache: FileCache<()> = FileCache::new();
        let file = cache.get(&path).unwrap();
        assert_eq!(&file.bytes[..], &data[..]);
        set_memory_limit(1 << 20);
        release_read(&file.bytes[100..900_000]);
        assert_eq!(&file.bytes[..], &data[..]);
        // Memory that is not a mapping keeps its contents.
        let heap = data.clone();
        release_read(&heap);
        assert_eq!(heap, data);
        // A dropped mapping is unlisted.
        let start = file.bytes.as_ptr() as usize;
        drop(file);
        drop(cache);
        assert!(!MAPPED.lock().unwrap().iter().any(|&(s, _)| s == start));
    }

    #[test]
    fn empty_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let cache: FileCache<()> = FileCache::new();
        assert!(cache.get(&empty).unwrap().bytes.is_empty());
        let err = cache.get(&dir.path().join("missing")).err().unwrap();
        assert!(matches!(err, SlothError::FileNotFound { .. }), "{err}");
    }
}
