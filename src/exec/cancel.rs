//! [`CancelToken`]: stops a running query from another thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Result, SlothError};

/// A switch that stops a running query: [`CancelToken::cancel`] from any
/// thread, and the query's operators stop at their next operator or batch
/// of input with [`SlothError::Cancelled`], removing their spill files.
/// Clones share the switch.
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
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A switch not yet thrown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every query holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
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
