//! Running a query from Python: the GIL released, Ctrl-C honoured.
//!
//! The query runs on a thread of its own while the calling thread, with
//! the GIL released, waits for it and checks for signals every tenth of a
//! second. A KeyboardInterrupt cancels the query (its operators stop at
//! their next batch, spill files are removed) and is raised once the query
//! has stopped.

use std::sync::mpsc;
use std::time::Duration;

use pyo3::prelude::*;
use sloth::CancelToken;

use crate::errors::IntoPyResult;

/// How often a waiting call looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Runs `work` (given a token that cancels it) with the GIL released.
pub fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&CancelToken) -> sloth::Result<T> + Send,
) -> PyResult<T> {
    let cancel = CancelToken::new();
    let mut interrupt: Option<PyErr> = None;
    let result = py.detach(|| {
        std::thread::scope(|scope| {
            let (sender, receiver) = mpsc::channel();
            let token = &cancel;
            scope.spawn(move || {
                let _ = sender.send(work(token));
            });
            loop {
                match receiver.recv_timeout(SIGNAL_CHECK) {
                    Ok(result) => return result,
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(sloth::SlothError::Internal(
                            "the query's thread ended without a result".into(),
                        ));
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if interrupt.is_none()
                            && let Err(e) = Python::attach(|py| py.check_signals())
                        {
                            interrupt = Some(e);
                            cancel.cancel();
                        }
                    }
                }
            }
        })
    });
    match interrupt {
        Some(e) => Err(e),
        None => result.py(),
    }
}
