//! A progress bar with the elapsed time, on stderr, for statements that
//! run longer than a second: long work is not silent. Only at a terminal,
//! so scripts and pipes see nothing of it.
//!
//! The bar is the share of input units (row groups, batches) the
//! statement's scans read of those they planned, as its
//! [`CancelToken`] counts them. Scans that start later add to what is
//! planned, so the share could fall back; the bar never moves backwards.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use sloth::CancelToken;

/// How long a statement runs before the bar shows.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// How often the bar is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// The bar's length: it counts thousandths.
const STEPS: u64 = 1000;

/// Shows the bar from [`QUIET_FOR`] after it starts until it is dropped.
pub struct Progress {
    /// Dropping the sender wakes the bar's thread at once.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts timing a statement whose queries count their progress in
    /// `token`.
    pub fn start(token: &CancelToken) -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress {
                stop: None,
                thread: None,
            };
        }
        let token = token.clone();
        let start = token.progress();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if stopped.recv_timeout(QUIET_FOR) != Err(RecvTimeoutError::Timeout) {
                return;
            }
            // The time counts from the statement's start.
            let bar = indicatif::ProgressBar::new(STEPS).with_elapsed(QUIET_FOR);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {percent:>3}% {elapsed} (Ctrl-C cancels)",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(TICK);
            while stopped.recv_timeout(TICK) == Err(RecvTimeoutError::Timeout) {
                if let Some(share) = token.progress().since(start) {
                    let step = (share * STEPS as f64) as u64;
                    bar.set_position(step.max(bar.position()));
                }
            }
            bar.finish_and_clear();
        });
        Progress {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
