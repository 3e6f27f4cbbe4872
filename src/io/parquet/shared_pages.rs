//! Decompressed Parquet pages that several scans of one execution read,
//! decompressed once.
//!
//! SQL reads the same columns of a file more than once: TPC-H Q17's
//! subquery and outer query both read `lineitem.l_partkey, l_quantity`,
//! Q21 reads `l_orderkey, l_suppkey` three times, Q2, Q11 and Q22 repeat
//! their `partsupp` and `customer` scans. The scans differ in their other
//! columns and filters, so their results cannot be shared
//! ([`crate::exec`]'s shared subplans never keep scans), but their pages
//! can: zstd took 27-53% of the samples of Q17, Q21 and Q2 (`perf record`,
//! `sloth bench --runs 10`), a second time for each repeated column.
//!
//! Before an execution, [`SharedPages::new`] takes the count, per file and root
//! column, the scans that read it. Pages of a column that more than one
//! scan reads are kept once decompressed, each with the number of reads
//! still to come; the last reader takes the page out again. A page a scan
//! never reaches (its row group pruned, the arrow-rs reader used instead)
//! stays until the execution ends. At most [`BUDGET`] bytes are held, and
//! only where all the shared columns fit in it; otherwise each reader
//! decompresses its pages as before.
//!
//! Pages are keyed by the address of the file's mapping and the page's
//! offset in it, and each file mapping seen is held until the execution
//! ends, so no other file can take its address meanwhile.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use super::ParquetScanMetrics;

/// Decompressed bytes held at most, over all files of an execution. Held
/// pages are fresh memory for the whole query, and in a fresh process that
/// costs about what decompressing them again does: at SF 10 (4 alternating
/// passes) Q02 and Q11 ran 0.25 and 0.21 s without sharing, 0.29 and 0.22 s
/// sharing 160-300 MB, with peak RSS 132 and 173 MB against 295 and 324 MB.
/// At SF 1 every sharing query's columns fit in 64 MB, where sharing
/// spares a process that runs queries repeatedly (`sloth bench`, the
/// shell, Python) their decompression.
pub const BUDGET: usize = 64 << 20;

/// The files of one execution whose columns several scans read.
#[derive(Debug, Default)]
pub struct SharedPages {
    files: HashMap<PathBuf, Arc<FilePages>>,
}

impl SharedPages {
    /// Keeps the pages of the columns read more than once: `readers` counts,
    /// per file and root column, the scans of an execution that read it
    /// (`PhysicalPlan::parquet_column_readers`).
    ///
    /// Nothing is kept when the shared columns' pages would not all fit in
    /// [`BUDGET`]: a query that shares more (TPC-H Q17 and Q21 at SF 10,
    /// over a gigabyte each) would hold the budget for its whole run to
    /// spare a fraction of the decompression, and was slower for it in a
    /// fresh process (Q21 1.85 s without sharing, 2.69 s with; Q17 1.08 s
    /// and 1.34 s), besides holding 500 MB more.
    pub fn new(readers: HashMap<PathBuf, HashMap<usize, usize>>) -> Self {
        let held = Arc::new(Mutex::new(Held::default()));
        let files: HashMap<PathBuf, Arc<FilePages>> = readers
            .into_iter()
            .filter_map(|(path, mut columns)| {
                columns.retain(|_, n| *n > 1);
                let pages = FilePages {
                    readers: columns,
                    held: held.clone(),
                };
                (!pages.readers.is_empty()).then(|| (path, Arc::new(pages)))
            })
            .collect();
        let shared_bytes = (files.iter())
            .map(|(path, f)| super::uncompressed_bytes(path, f.readers.keys().copied()))
            .try_fold(0u64, |sum, bytes| Some(sum + bytes?));
        if shared_bytes.is_none_or(|bytes| bytes > BUDGET as u64) {
            return SharedPages::default();
        }
        SharedPages { files }
    }

    /// The shared columns of the file at `path`, if any.
    pub fn file(&self, path: &std::path::Path) -> Option<Arc<FilePages>> {
        self.files.get(path).cloned()
    }
}

/// The pages of one execution, over all its files.
#[derive(Debug, Default)]
struct Held {
    /// `(mapping address, page offset)` → the page and its reads to come.
    pages: HashMap<(usize, usize), (Bytes, usize)>,
    bytes: usize,
    /// Every file mapping a page was kept from.
    files: Vec<Bytes>,
}

/// A file's root columns that more than one scan reads.
#[derive(Debug)]
pub struct FilePages {
    /// Root column → scans reading it (2 or more).
    readers: HashMap<usize, usize>,
    held: Arc<Mutex<Held>>,
}

impl FilePages {
    /// Root column `root` as a shared column, if several scans read it,
    /// for the scan whose counters are `metrics`.
    pub(super) fn column(
        self: &Arc<Self>,
        root: usize,
        metrics: &Arc<ParquetScanMetrics>,
    ) -> Option<SharedColumn> {
        let readers = *self.readers.get(&root)?;
        Some(SharedColumn {
            file: self.clone(),
            readers,
            metrics: metrics.clone(),
        })
    }
}

/// A column chunk's pages as several scans read them.
#[derive(Debug, Clone)]
pub(super) struct SharedColumn {
    file: Arc<FilePages>,
    readers: usize,
    /// The reading scan's counters (`pages_shared`).
    metrics: Arc<ParquetScanMetrics>,
}

impl SharedColumn {
    /// The page at `offset` in `file`, decompressed: kept from an earlier
    /// reader, or by `decompress` (and then kept for the readers to come).
    pub(super) fn page<E>(
        &self,
        file: &Bytes,
        offset: usize,
        decompress: impl FnOnce() -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        let key = (file.as_ptr() as usize, offset);
        let lock = || {
            self.file
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        if let Some(page) = take(&mut lock(), key) {
            self.metrics.pages_shared.fetch_add(1, Ordering::Relaxed);
            return Ok(page);
        }
        let page = decompress()?;
        let mut held = lock();
        // Another reader of the same page may have kept it meanwhile: this
        // read counts as one of its reads.
        if take(&mut held, key).is_none() && held.bytes + page.len() <= BUDGET {
            if !held.files.iter().any(|f| f.as_ptr() == file.as_ptr()) {
                held.files.push(file.clone());
            }
            held.bytes += page.len();
            held.pages.insert(key, (page.clone(), self.readers - 1));
        }
        Ok(page)
    }
}

/// The kept page at `key`, counted as read (and dropped after its last
/// read).
fn take(held: &mut Held, key: (usize, usize)) -> Option<Bytes> {
    let (page, left) = held.pages.get_mut(&key)?;
    let page = page.clone();
    *left -= 1;
    if *left == 0 {
        held.pages.remove(&key);
        held.bytes -= page.len();
    }
    Some(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn column(readers: usize) -> SharedColumn {
        SharedColumn {
            file: Arc::new(FilePages {
                readers: HashMap::from([(0, readers)]),
                held: Default::default(),
            }),
            readers,
            metrics: Default::default(),
        }
    }

    fn held(c: &SharedColumn) -> (usize, usize) {
        let h = c.file.held.lock().unwrap();
        (h.pages.len(), h.bytes)
    }

    #[test]
    fn each_page_is_decompressed_once_for_all_its_readers_then_dropped() {
        let c = column(3);
        let file = Bytes::from_static(b"the file");
        let calls = Cell::new(0);
        let page = |at: usize| {
            c.page(&file, at, || {
                calls.set(calls.get() + 1);
                Ok::<_, ()>(Bytes::from(vec![at as u8; 10]))
            })
        };
        for read in 0..3 {
            assert_eq!(page(1).unwrap(), vec![1u8; 10]);
            assert_eq!(page(2).unwrap(), vec![2u8; 10]);
            assert_eq!(calls.get(), 2, "read {read}");
            assert_eq!(c.metrics.pages_shared.load(Ordering::Relaxed), 2 * read);
            assert_eq!(held(&c), if read < 2 { (2, 20) } else { (0, 0) });
        }
        // A fourth read (a later execution would have its own pages)
        // decompresses again.
        page(1).unwrap();
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn pages_of_other_files_at_the_same_offset_are_distinct() {
        let c = column(2);
        let (a, b) = (Bytes::from_static(b"file a"), Bytes::from_static(b"file b"));
        let read = |f: &Bytes, v: u8| c.page(f, 0, || Ok::<_, ()>(Bytes::from(vec![v])));
        assert_eq!(read(&a, 1).unwrap(), vec![1]);
        assert_eq!(read(&b, 2).unwrap(), vec![2]);
        assert_eq!(read(&a, 9).unwrap(), vec![1]);
        assert_eq!(read(&b, 9).unwrap(), vec![2]);
    }

    #[test]
    fn past_the_budget_pages_are_not_kept_and_errors_pass_through() {
        let c = column(2);
        let file = Bytes::from_static(b"f");
        let big = c.page(&file, 0, || Ok::<_, ()>(Bytes::from(vec![0; BUDGET + 1])));
        assert_eq!(big.unwrap().len(), BUDGET + 1);
        assert_eq!(held(&c), (0, 0));
        assert_eq!(
            c.page(&file, 5, || Err::<Bytes, _>("corrupt")),
            Err("corrupt")
        );
        assert_eq!(held(&c), (0, 0));
    }

    #[test]
    fn only_columns_that_several_scans_read_are_shared() {
        let file = Arc::new(FilePages {
            readers: HashMap::from([(3, 2)]),
            held: Default::default(),
        });
        assert!(file.column(3, &Default::default()).is_some());
        assert!(file.column(0, &Default::default()).is_none());
    }

    /// The shared columns `SharedPages::new` keeps for in `sql`'s plan over a Parquet
    /// table `t(a, b, c)`: (root column, readers), sorted.
    fn shared_columns(sql: &str) -> Vec<(usize, usize)> {
        use crate::sql::SqlContext;
        let dir = tempfile::tempdir().unwrap();
        let column = |v: i64| -> arrow::array::ArrayRef {
            Arc::new(arrow::array::Int64Array::from(vec![v, v + 3]))
        };
        let batch = arrow::record_batch::RecordBatch::try_from_iter([
            ("a", column(1)),
            ("b", column(2)),
            ("c", column(3)),
        ])
        .unwrap();
        crate::frame::LazyFrame::from_batches(vec![batch])
            .unwrap()
            .sink_parquet(dir.path().join("t.parquet"))
            .unwrap();
        let mut c = SqlContext::new();
        c.register_dir(dir.path()).unwrap();
        let plan = c.sql(sql).unwrap().physical_plan().unwrap();
        let pages = SharedPages::new(plan.parquet_column_readers());
        let mut out: Vec<(usize, usize)> = pages
            .files
            .values()
            .flat_map(|f| f.readers.iter().map(|(&c, &n)| (c, n)))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn columns_count_every_scan_but_a_reused_subplan_once() {
        // Self-join: both sides read `a`, one `b`, the other `c`.
        assert_eq!(
            shared_columns("select x.b, y.c from t x join t y on x.a = y.a"),
            vec![(0, 2)]
        );
        // A repeated aggregate runs once: its scan reads once.
        let twice = "select * from (select a, sum(b) s from t group by a) x \
                     join (select a, sum(b) s from t group by a) y on x.a = y.a";
        assert_eq!(shared_columns(twice), vec![]);
        // One scan: nothing to share.
        assert_eq!(shared_columns("select a, b from t where c > 1"), vec![]);
    }
}
