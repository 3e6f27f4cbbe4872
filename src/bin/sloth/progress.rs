//! A spinner with the elapsed time, on stderr, for statements that run
//! longer than a second: long work is not silent. Only at a terminal, so
//! scripts and pipes see nothing of it.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a statement runs before the spinner shows.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// Shows the spinner from [`QUIET_FOR`] after it starts until it is dropped.
pub struct Progress {
    /// Dropping the sender wakes the spinner's thread at once.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts timing a statement.
    pub fn start() -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress {
                stop: None,
                thread: None,
            };
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if stopped.recv_timeout(QUIET_FOR) != Err(RecvTimeoutError::Timeout) {
                return;
            }
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} running for {elapsed} (Ctrl-C cancels)",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(100));
            let _ = stopped.recv();
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
