//! [`CancelToken`]: stops a running query from another thread, and tells
//! that thread how far the query got.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{Result, SlothError};

/// A switch that stops a running query: [`CancelToken::cancel`] from any
/// thread, and the query's operators stop at their next operator or batch
/// of input with [`SlothError::Cancelled`], removing their spill files.
/// Clones share the switch.
///
/// The token also counts the query's units of input (row groups, batches)
/// as its scans plan and read them: [`CancelToken::progress`], which the
/// command line shows as a progress bar.
///
/// ```
/// use sloth::prelude::*;
/// # use std::sync::Arc;
/// # use arrow::array::Int64Array;
/// # use arrow::record_batch::RecordBatch;
/// # let batch = RecordBatch::try_from_iter(vec![
/// #     ("v", Arc::new(Int64Array::from(vec![1, 2, 3])) as _),
/// # ]).unwrap();
/// let cancel = CancelToken::new();
/// let query = LazyFrame::from_batches(vec![batch])?.with_cancel(cancel.clone());
/// cancel.cancel();
/// assert!(matches!(query.collect(), Err(SlothError::Cancelled)));
/// # Ok::<(), sloth::SlothError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    cancelled: AtomicBool,
    /// Units of input the scans that started so far will read.
    units_planned: AtomicU64,
    /// Units read.
    units_read: AtomicU64,
}

/// How far the scans of the queries holding a [`CancelToken`] got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanProgress {
    /// Units of input (row groups, batches) the scans that started will
    /// read; it grows as later scans start.
    pub planned: u64,
    /// Units read.
    pub read: u64,
}

impl ScanProgress {
    /// The share read since `start` of what was planned since then
    /// (0 to 1); `None` before any unit was planned.
    pub fn since(&self, start: ScanProgress) -> Option<f64> {
        let planned = self.planned.saturating_sub(start.planned);
        let read = self.read.saturating_sub(start.read);
        (planned > 0).then(|| (read as f64 / planned as f64).min(1.0))
    }
}

impl CancelToken {
    /// A switch not yet thrown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every query holding this token to stop.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    /// True once [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }

    /// The units of input planned and read so far, by every query that
    /// held this token.
    pub fn progress(&self) -> ScanProgress {
        ScanProgress {
            planned: self.0.units_planned.load(Ordering::Relaxed),
            read: self.0.units_read.load(Ordering::Relaxed),
        }
    }

    /// A scan will read `units` units.
    pub(crate) fn plan_units(&self, units: usize) {
        self.0
            .units_planned
            .fetch_add(units as u64, Ordering::Relaxed);
    }

    /// A scan read one of its units.
    pub(crate) fn unit_read(&self) {
        self.0.units_read.fetch_add(1, Ordering::Relaxed);
    }

    /// `Err(Cancelled)` once cancelled: operators call it between units
    /// of work.
    pub fn check(&self) -> Result<()> {
        match self.is_cancelled() {
            true => Err(SlothError::Cancelled),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_the_share_read_of_what_was_planned_since_a_start() {
        let token = CancelToken::new();
        token.plan_units(10);
        token.unit_read();
        let start = token.progress();
        assert_eq!(token.progress().since(start), None);
        token.plan_units(4);
        token.unit_read();
        assert_eq!(token.progress().since(start), Some(0.25));
        token.clone().unit_read();
        assert_eq!(token.progress().since(start), Some(0.5));
        assert_eq!(start.since(ScanProgress::default()), Some(0.1));
    }
}
